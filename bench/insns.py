# insns.py -- instructions per loop iteration of a benchmark subject, counted
# by stepping it in gdb (no performance counters needed). Usage:
#
#   gdb -q -batch -x bench/insns.py --args build/bench/opool_bench \
#       --only churn --layouts --size 64 --quick
#
# For each FUNCTION:CALL in INSNS (environment, default below) it stops at
# that call of the function, steps 3,000 instructions and reports the
# period of the steady loop: the instructions one iteration executes on its
# usual path (one churn pair: free, alloc, the two writes and the random
# index). Which call of churn_opool steps which pool depends on the run's
# subjects and repetitions, so the report names the pool it stepped: plain,
# grown or without a live list.
# The default list suits --layouts, where calls 1 and 3 are opool and opool
# without a live list.
import os
import gdb

STEPS = 3000


def period(pcs):
    for p in range(4, len(pcs) // 4):
        tail = pcs[-3 * p:]
        if all(tail[i] == tail[i + p] for i in range(2 * p)):
            return p
    return None


def measure(func, call):
    bp = gdb.Breakpoint(func, internal=True)
    bp.ignore_count = call - 1
    gdb.execute("continue", to_string=True)
    bp.delete()
    what = ""
    # churn_opool's pool, its first argument (x86-64: rdi), read at
    # opool__hot's offsets on a 64-bit target: roster 8, nslots 24, first 28
    if func == "churn_opool":
        roster = int(gdb.parse_and_eval("*(void **)($rdi + 8)"))
        grown = int(gdb.parse_and_eval("*(unsigned *)($rdi + 28) < *(unsigned *)($rdi + 24)"))
        what = " (no live list)" if roster == 0 else " (grown)" if grown else ""
    pcs = []
    for _ in range(STEPS):
        gdb.execute("stepi", to_string=True)
        pcs.append(int(gdb.parse_and_eval("$pc")))
    gdb.execute("finish", to_string=True)
    return period(pcs), what


gdb.execute("set pagination off")
gdb.execute("set confirm off")
gdb.execute("starti", to_string=True)
targets = os.environ.get("INSNS", "churn_igen:1 churn_opool:1 churn_opool:3 churn_lay_AC:1 "
                         "churn_lay_F:1 churn_lay_G:1 churn_lay_H:1").split()
done = {}  # per function, the calls already run past
for t in targets:
    func, call = t.split(":")
    seen = done.get(func, 0)
    if int(call) <= seen:
        raise gdb.GdbError("INSNS: %s comes after call %d of %s; list each function's calls "
                           "in increasing order" % (t, seen, func))
    p, what = measure(func, int(call) - seen)
    done[func] = int(call)
    if p is None:
        print("%-16s call %s%s: no steady loop within %d instructions" % (func, call, what, STEPS))
    else:
        print("%-16s call %s%s: %d instructions an iteration" % (func, call, what, p), flush=True)
gdb.execute("kill")
