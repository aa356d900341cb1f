#!/usr/bin/env bash
# tests/user/check.sh -- a user's sanitizer builds against the library as installed (make
# test's install stage runs it for the static and the shared install):
#
#   tests/user/check.sh KIND PREFIX COUNT_FILE
#
# KIND static|shared, PREFIX the install prefix (its pkg-config file gives the flags);
# COUNT_FILE receives the number of checks passed. With each of $GCC and $CLANG (gcc,
# clang-14) that links the sanitizer:
#   user_asan.c  -fsanitize=address: "valid" runs clean; a write after free of an opool
#                object, an opool_heap block and an opool_mt object each dies with ASan's
#                use-after-poison report naming write_after_free
#   user_tsan.c  -fsanitize=thread: the hand-off through opool_mt's caches gets no report;
#                the deliberate race gets one
# and, for KIND static, user_tsan.c from the single header dist/opool.h, built with -Werror
# (GCC's TSan refuses fences): the same two outcomes; and, with the matching C++ compilers
# (g++, clang++-14), include/opool.hpp's tests: tests/cpp/test_hpp.cpp under ASan+UBSan
# (leak detection on) and tests/cpp/test_hpp_mt.cpp under TSan, each clean.
set -euo pipefail
kind=$1 prefix=$2 count_file=$3
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
out="$root/build/user-sanitizers/$kind"
rm -rf "$out"
mkdir -p "$out"
libdir=$(dirname "$(compgen -G "$prefix/lib*/pkgconfig/opool.pc" | head -n1)")
libdir=$(dirname "$libdir")
flags=$(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --cflags --libs opool)
export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export ASAN_OPTIONS=detect_leaks=0 TSAN_OPTIONS=
checks=0

fail() {
    echo "user sanitizer check FAILED: $1 (output: $2)" >&2
    sed 's/^/     | /' "$2" | head -n 40 >&2
    exit 1
}

# expect NAME LOG WANT-EXIT(0|nonzero) [PATTERN...]: the run's exit and every pattern found
expect() {
    local name=$1 log=$2 want=$3 rc=$4
    shift 4
    if [ "$want" = 0 ] && [ "$rc" != 0 ]; then fail "$name exited $rc" "$log"; fi
    if [ "$want" != 0 ] && [ "$rc" = 0 ]; then fail "$name exited 0" "$log"; fi
    for pat in "$@"; do
        grep -q -- "$pat" "$log" || fail "$name: no '$pat'" "$log"
    done
    echo "   $name: ok"
    checks=$((checks + 1))
}

# clean NAME LOG RC: exit 0 and no sanitizer report at all
clean() {
    local name=$1 log=$2 rc=$3
    if grep -q -e 'ERROR: AddressSanitizer' -e 'WARNING: ThreadSanitizer' "$log"; then
        fail "$name: a sanitizer report" "$log"
    fi
    expect "$name" "$log" 0 "$rc"
}

can() { # can CC SANITIZER
    command -v "$1" >/dev/null 2>&1 &&
        printf 'int main(void) { return 0; }\n' |
        "$1" -x c -fsanitize="$2" -o "$out/probe" - >/dev/null 2>&1
}

for cc in "${GCC:-gcc}" "${CLANG:-clang-14}"; do
    tag=$(basename "$cc")
    if can "$cc" address; then
        exe="$out/user_asan_$tag"
        "$cc" -std=c11 -g -O1 -fsanitize=address "$here/user_asan.c" $flags -o "$exe"
        rc=0; "$exe" valid > "$exe.valid.log" 2>&1 || rc=$?
        clean "$kind $tag asan valid" "$exe.valid.log" $rc
        for mode in pool heap large mt; do
            rc=0; "$exe" $mode > "$exe.$mode.log" 2>&1 || rc=$?
            expect "$kind $tag asan $mode write after free" "$exe.$mode.log" 1 $rc \
                'ERROR: AddressSanitizer: use-after-poison' 'in write_after_free'
        done
    else
        echo "   $tag: cannot link -fsanitize=address, skipped"
    fi
    if can "$cc" thread; then
        exe="$out/user_tsan_$tag"
        builds=("$exe")
        "$cc" -std=c11 -g -O1 -fsanitize=thread "$here/user_tsan.c" $flags -pthread -o "$exe"
        if [ "$kind" = static ]; then
            "$cc" -std=c11 -Wall -Wextra -Wpedantic -Werror -g -O1 -fsanitize=thread -DUSER_DIST \
                -I"$root/dist" "$here/user_tsan.c" -pthread -o "${exe}_dist"
            builds+=("${exe}_dist")
        fi
        for b in "${builds[@]}"; do
            name="$kind $tag tsan$([ "$b" = "$exe" ] || echo ' dist/opool.h')"
            rc=0; "$b" handoff > "$b.handoff.log" 2>&1 || rc=$?
            clean "$name hand-off" "$b.handoff.log" $rc
            rc=0; "$b" race > "$b.race.log" 2>&1 || rc=$?
            expect "$name race" "$b.race.log" 1 $rc 'WARNING: ThreadSanitizer: data race'
        done
    else
        echo "   $tag: cannot link -fsanitize=thread, skipped"
    fi
    # C++: include/opool.hpp's own tests, built by the user's C++ compiler with its
    # sanitizers against the installed library (static install: the C++ side is all header)
    cxx=$(case "$cc" in (*clang*) echo "${cc/clang/clang++}";; (*gcc*) echo "${cc/gcc/g++}";; esac)
    if [ "$kind" = static ] && command -v "$cxx" >/dev/null 2>&1; then
        if can "$cc" address,undefined; then
            exe="$out/test_hpp_asan_$tag"
            "$cxx" -std=c++17 -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all \
                -I"$root/tests" "$root/tests/cpp/test_hpp.cpp" $flags -o "$exe"
            rc=0; ASAN_OPTIONS=detect_leaks=1 "$exe" > "$exe.log" 2>&1 || rc=$?
            clean "$kind $(basename "$cxx") asan+ubsan tests/cpp/test_hpp.cpp" "$exe.log" $rc
        fi
        if can "$cc" thread; then
            exe="$out/test_hpp_mt_tsan_$tag"
            "$cxx" -std=c++17 -g -O1 -fsanitize=thread -I"$root/tests" \
                "$root/tests/cpp/test_hpp_mt.cpp" $flags -pthread -o "$exe"
            rc=0; "$exe" > "$exe.log" 2>&1 || rc=$?
            clean "$kind $(basename "$cxx") tsan tests/cpp/test_hpp_mt.cpp" "$exe.log" $rc
        fi
    fi
done
echo "$checks" > "$count_file"
