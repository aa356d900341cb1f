#!/usr/bin/env bash
# bench/trace/check.sh -- does the tracer record what a program does? (make bench-replay runs it)
#
#   bench/trace/check.sh [BUILD_DIR]      (from the repository root; default build/bench)
#
# Builds bench/trace/tracer_check.c, runs it under BUILD_DIR/libopool_tracer.so (every traced
# function, four threads, a fork child freeing an inherited block, a fork child that execs),
# then checks each process's trace with bench_replay --info against the least the program says
# it did, and replays the parent's trace (interleaved threads, aligned requests, realloc(p, 0))
# against every heap. Exits 0 with a note where the tracer is not built (not Linux).
set -euo pipefail
build=${1:-build/bench}
lib=$build/libopool_tracer.so
replay=$build/bench_replay
if [ ! -f "$lib" ]; then
    echo "tracer check: skipped (no $lib: the tracer is built on Linux only)"
    exit 0
fi
[ -x "$replay" ] || { echo "tracer check: no $replay (make bench-build)" >&2; exit 1; }
lib=$(cd "$(dirname "$lib")" && pwd)/$(basename "$lib")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"${CC:-cc}" -std=gnu11 -O1 -pthread -o "$tmp/tracer_check" bench/trace/tracer_check.c
OPOOL_TRACE="$tmp/t" LD_PRELOAD="$lib" "$tmp/tracer_check" > "$tmp/expect"

fails=0
files=0
while read -r tag role pid rest; do
    [ "$tag" = EXPECT ] || continue
    file=$tmp/t.$pid
    [ "$role" = exec ] && file=$tmp/t.$pid.1
    if [ ! -f "$file" ]; then
        echo "tracer check: FAIL: no trace $(basename "$file") for the $role process" >&2
        fails=$((fails + 1))
        continue
    fi
    files=$((files + 1))
    info=$("$replay" --info "$file")
    calls=$(sed -n 's/^  calls: *[0-9]* (\(.*\)).*/\1/p' <<<"$info")
    declare -A got=()
    read -r _ m _ c _ r _ a _ f <<<"${calls//,/}"
    got=([malloc]=$m [calloc]=$c [realloc]=$r [aligned]=$a [free]=$f)
    got[threads]=$(sed -n 's/^  threads: *\([0-9]*\);.*/\1/p' <<<"$info")
    got[unknown]=$(sed -n 's/.*unknown frees\/reallocs \([0-9]*\).*/\1/p' <<<"$info")
    for want in $rest; do
        key=${want%%>=*}
        min=${want#*>=}
        if [ -z "${got[$key]:-}" ] || [ "${got[$key]}" -lt "$min" ]; then
            echo "tracer check: FAIL: $role process: $key ${got[$key]:-?}, want >= $min" >&2
            fails=$((fails + 1))
        fi
    done
    [ "$role" = parent ] && parent=$file
done < "$tmp/expect"
[ "$files" -eq 4 ] || { echo "tracer check: FAIL: $files traces checked, want 4" >&2; fails=$((fails + 1)); }
[ "$fails" -eq 0 ] || exit 1

mkdir "$tmp/d"
cp "$parent" "$tmp/d/check.trace"
"$replay" --traces "$tmp/d" --reps 1 --csv "$tmp/replay.csv" > "$tmp/replay.out" 2>&1 ||
    { cat "$tmp/replay.out" >&2; echo "tracer check: FAIL: the replay" >&2; exit 1; }
echo "tracer check: 4 processes' traces as expected (threads, fork, exec); the parent's replays on every heap"
