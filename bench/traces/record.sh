#!/usr/bin/env bash
# bench/traces/record.sh -- re-record the allocation traces of bench/traces (README.md there).
#
#   bench/traces/record.sh [BUILD_DIR] [NAME...]     (from the repository root)
#
# BUILD_DIR holds libopool_tracer.so (default build/bench: `make bench-build`); NAMEs are
# sqlite, cc1, python, cmake and git (default: all). Each program runs once under the tracer, in a
# scratch directory; the trace of the process that matters is compressed (xz -9) over
# bench/traces/<name>.trace.xz. Needs sqlite3, gcc (its cc1), python3, cmake, git and xz; PYTHON names
# the interpreter (default /usr/bin/python3, Debian's, where it exists).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-build/bench}
[ $# -gt 0 ] && shift
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(sqlite cc1 python cmake git)
lib=$(cd "$build" && pwd)/libopool_tracer.so
[ -f "$lib" ] || { echo "record.sh: no $lib (make bench-build)" >&2; exit 1; }
python=${PYTHON:-$( [ -x /usr/bin/python3 ] && echo /usr/bin/python3 || command -v python3 )}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# The one trace file among $1.* whose header holds "exe=$2 " (the program's path; more of
# the header after it, such as "argv=cmake -S", narrows it down).
pick() {
    local f
    for f in "$1".*; do
        if head -c 600 "$f" | tr '\0' ' ' | grep -aqF "exe=$2"; then echo "$f"; return; fi
    done
    echo "record.sh: no trace of $2 among $1.*" >&2
    exit 1
}

for name in "${names[@]}"; do
    case "$name" in
    sqlite)
        (cd "$scratch" && OPOOL_TRACE="$scratch/sqlite" LD_PRELOAD="$lib" \
            sqlite3 :memory: < "$root/bench/traces/sqlite.sql" > /dev/null)
        f=$(pick "$scratch/sqlite" "$(readlink -f "$(command -v sqlite3)") ") ;;
    cc1)
        # one of our larger sources, as the Release benchmarks build it, plus -g
        (cd "$root" && OPOOL_TRACE="$scratch/gcc" LD_PRELOAD="$lib" \
            gcc -std=c11 -O2 -g -DNDEBUG -Iinclude -Ibench -c bench/bench_core.c \
                -o "$scratch/bench_core.o")
        f=$(pick "$scratch/gcc" "$(gcc -print-prog-name=cc1) ") ;;
    python)
        # PYTHONMALLOC=malloc: every object from malloc, not from pymalloc's arenas
        (cd "$scratch" && PYTHONMALLOC=malloc PYTHONHASHSEED=0 OPOOL_TRACE="$scratch/python" \
            LD_PRELOAD="$lib" "$python" "$root/bench/traces/python.py" > /dev/null)
        f=$(pick "$scratch/python" "$(readlink -f "$python") ") ;;
    cmake)
        # the configure of this repository, every option on; the trace is the cmake process
        # itself (C++: operator new), not the compilers and cmake -E helpers it starts
        (cd "$scratch" && OPOOL_TRACE="$scratch/cmake" LD_PRELOAD="$lib" \
            cmake -S "$root" -B "$scratch/build" -DCMAKE_BUILD_TYPE=Release \
                -DOPOOL_BUILD_TESTS=ON -DOPOOL_BUILD_EXAMPLES=ON -DOPOOL_BUILD_BENCH=ON > /dev/null)
        f=$(pick "$scratch/cmake" "$(readlink -f "$(command -v cmake)") argv=cmake -S") ;;
    git)
        # the history of this repository up to a fixed commit, every diff printed: objects
        # inflated and diffed, 36% of the allocations above 2 KiB
        (cd "$root" && OPOOL_TRACE="$scratch/git" LD_PRELOAD="$lib" \
            git -c core.pager=cat log -p 1bdfd8e > /dev/null)
        f=$(pick "$scratch/git" "$(readlink -f "$(command -v git)") ") ;;
    *) echo "record.sh: unknown trace $name (sqlite, cc1, python, cmake, git)" >&2; exit 2 ;;
    esac
    xz -9 -c "$f" > "$root/bench/traces/$name.trace.xz"
    echo "$name: $(stat -c %s "$f") bytes -> bench/traces/$name.trace.xz ($(stat -c %s "$root/bench/traces/$name.trace.xz") bytes)"
done
