#!/usr/bin/env bash
# tests/debugger/run.sh DEBUGGER PROGRAM EXPECTED [LLDB_SCRIPT]
#
# Runs PROGRAM (tests/debugger/debugger_prog.c or .cpp, built with -g) under DEBUGGER (gdb or
# lldb) in batch mode to its stop in debugger_stop(), prints its globals, and compares what the
# debugger printed with EXPECTED. gdb gets no script: it must load opool_gdb.py from the
# program's .debug_gdb_scripts section, with the program's directory as its one safe auto-load
# path (what docs/DEBUGGING.md tells users to add). lldb imports LLDB_SCRIPT, as a user's
# ~/.lldbinit would. Addresses (9 or more hex digits) become A1, A2... in order of appearance,
# so the same address printed twice must read the same. Exit 77 (skipped) without the debugger.
set -euo pipefail
debugger=$1 program=$2 expected=$3 script=${4:-}

case "$program" in
(*cxx*) vars=(crews crew_h crew_null) ;;
(*) vars=(plain plain_live unlisted ships jobs strings plain_h ship_h null_h even_h broken) ;;
esac

if [ "$debugger" = gdb ]; then
    command -v gdb >/dev/null || { echo "gdb not found: skipped (apt-get install gdb)"; exit 77; }
    args=()
    for v in "${vars[@]}"; do args+=(-ex "print $v"); done
    out=$(gdb -nx -batch -iex "add-auto-load-safe-path $(dirname "$program")" \
        -ex 'break debugger_stop' -ex run "${args[@]}" "$program" 2>&1 | grep '^\$' || true)
else
    command -v lldb-14 >/dev/null || { echo "lldb-14 not found: skipped (apt-get install lldb-14)"; exit 77; }
    # Debian 12's lldb-14 looks for its Python module in the wrong directory (lldb-14 -P)
    for d in /usr/lib/llvm-14/lib/python3*/dist-packages; do
        [ -f "$d/lldb/__init__.py" ] && export PYTHONPATH="$d${PYTHONPATH:+:$PYTHONPATH}"
    done
    out=$(lldb-14 --batch -o "command script import $script" -o 'breakpoint set -n debugger_stop' \
        -o run -o "frame variable -P 1 ${vars[*]}" "$program" 2>&1 |
        sed -n '/^(lldb) frame variable/,$p' | sed 1d | grep -v '^(lldb)' || true)
fi

normal=$(printf '%s\n' "$out" | awk '{
    line = ""
    while (match($0, /0x[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]+/)) {
        a = substr($0, RSTART, RLENGTH)
        if (!(a in name)) name[a] = "A" (++n)
        line = line substr($0, 1, RSTART - 1) name[a]
        $0 = substr($0, RSTART + RLENGTH)
    }
    print line $0
}')
if [ "$normal" != "$(cat "$expected")" ]; then
    echo "$debugger printed (addresses renamed), differing from $expected:"
    diff <(printf '%s\n' "$normal") "$expected" || true
    exit 1
fi
echo "$debugger printed what $expected holds"
