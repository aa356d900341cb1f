#!/usr/bin/env bash
# tests/spin/run.sh OUTDIR: model-check the Promela models of tests/spin.
#
# Every check runs in its own directory OUTDIR/<check>: spin -a generates the
# verifier, gcc compiles pan.c, pan searches the whole state space, and the
# verdict is read from pan's output. The safe models must report "errors: 0"
# with no truncation; the broken ones must fail, and for the expected reason
# (the named assertion). Prints one line per check, writes the number of checks
# passed to build/spin.count (relative to the repository root) and exits 1 at
# the first unexpected result, after printing pan's output.
#
# Environment: SPIN_CC (default gcc), SPIN_KEEP=1 keeps pan.c and the verifier.
set -euo pipefail

if [ $# -ne 1 ]; then
	echo "usage: $0 OUTDIR" >&2
	exit 2
fi

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
mkdir -p "$1"
out=$(cd "$1" && pwd)
mkdir -p "$root/build"
count_file=$root/build/spin.count
cc=${SPIN_CC:-gcc}
passed=0
echo 0 >"$count_file"

for tool in spin "$cc"; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "spin: $tool not found" >&2
		exit 1
	fi
done

# the memory limit of every verifier, in MB; each needs far less
memlim=2048
# time limit of one verifier run, in seconds (the slowest needs about 2)
tlimit=50

fail() { # message dir
	echo "spin: $1" >&2
	if [ -f "$2/pan.out" ]; then
		echo "---- $2/pan.out" >&2
		cat "$2/pan.out" >&2
	fi
	echo "$passed" >"$count_file"
	exit 1
}

# run_pan NAME MODEL "SPIN DEFINES" "CC FLAGS" "PAN FLAGS": leaves $dir/pan.out,
# sets dir, errors, states, secs, truncated
run_pan() {
	local name=$1 model=$2 defs=$3 ccflags=$4 panflags=$5
	dir=$out/$(echo "$name" | tr -c 'A-Za-z0-9\n' '-' | sed 's/--*/-/g; s/-$//')
	rm -rf "$dir"
	mkdir -p "$dir"
	cp "$here/$model" "$dir/"
	# shellcheck disable=SC2086  # the flag lists are meant to split
	(cd "$dir" && spin $defs -a "$model") >"$dir/spin.log" 2>&1 ||
		{ cat "$dir/spin.log" >&2; fail "$name: spin -a failed" "$dir"; }
	# shellcheck disable=SC2086
	(cd "$dir" && "$cc" $opt -w $ccflags -DMEMLIM=$memlim -o pan pan.c) >"$dir/cc.log" 2>&1 ||
		{ cat "$dir/cc.log" >&2; fail "$name: compiling pan.c failed" "$dir"; }
	# pan's exit status says nothing useful: the verdict is in its output
	# shellcheck disable=SC2086
	(cd "$dir" && timeout "$tlimit" ./pan -m100000 $panflags) >"$dir/pan.out" 2>&1 || true
	errors=$(sed -n 's/.*errors: \([0-9][0-9]*\).*/\1/p' "$dir/pan.out" | tail -n 1)
	states=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' "$dir/pan.out" | head -n 1)
	secs=$(sed -n 's/^pan: elapsed time \([0-9.e+-]*\) seconds.*/\1/p' "$dir/pan.out" | head -n 1)
	truncated=no
	if grep -qiE 'depth too small|search not completed|out of memory|memory limit|hash table is full' "$dir/pan.out"; then
		truncated=yes
	fi
	if [ -z "$errors" ] || [ -z "$states" ]; then
		fail "$name: pan did not finish (timeout ${tlimit}s, crash or unexpected output)" "$dir"
	fi
}

tidy() { # drop the generated verifier (a few MB per check) and any trail
	if [ "${SPIN_KEEP:-0}" != 1 ]; then
		rm -f "$dir"/pan "$dir"/pan.[bchmpt] "$dir"/pan.pre "$dir"/_spin_nvr.tmp
	fi
	rm -f "$dir"/*.trail
}

# verify NAME MODEL "DEFINES" "CC FLAGS" "PAN FLAGS": must verify, exhaustively
verify() {
	local name=$1 opt=-O2
	run_pan "$@"
	if [ "$errors" != 0 ]; then
		fail "$name: $errors error(s), expected none" "$dir"
	fi
	if [ "$truncated" = yes ]; then
		fail "$name: the search was truncated (depth or memory), not exhaustive" "$dir"
	fi
	tidy
	passed=$((passed + 1))
	echo "spin: $name: verified ($states states, ${secs}s)"
}

# broken NAME MODEL "DEFINES" "CC FLAGS" "PAN FLAGS" REGEX WHAT: must fail, with
# a line of pan's output matching REGEX; the counterexample, replayed by
# spin -t, goes to OUTDIR/<check>/trail.txt (and the .trail file is removed)
broken() {
	# -O0: these searches stop within a few hundred states, and compiling
	# pan.c is most of a check's time (0.3 s at -O0, 1.5 s at -O2)
	local name=$1 model=$2 defs=$3 regex=$6 what=$7 why depth opt=-O0
	run_pan "$1" "$2" "$3" "$4" "$5"
	if [ "$errors" = 0 ]; then
		fail "$name: no error found, expected: $what" "$dir"
	fi
	why=$(grep -E "$regex" "$dir/pan.out" | head -n 1 || true)
	if [ -z "$why" ]; then
		fail "$name: failed, but not with the expected error ($regex)" "$dir"
	fi
	depth=$(echo "$why" | sed -n 's/.*(at depth \([0-9]*\)).*/\1/p')
	why=$(echo "$why" | sed 's/^pan:[0-9]*: *//; s/ *(at depth [0-9]*)//; s/  */ /g')
	# shellcheck disable=SC2086
	(cd "$dir" && timeout 10 spin $defs -t -p -g -l -u$((depth + 100)) "$model" 2>&1 | head -c 4000000) \
		>"$dir/trail.txt" || true
	tidy
	passed=$((passed + 1))
	echo "spin: $name: $what as expected ($why, at depth $depth)"
}

safety="-DSAFETY -DNOCLAIM"
aba='assertion violated +!\((slot_has_two_owners|list_corrupt|slot_lost)\)'
lost='assertion violated +!\(lost_wakeup\)'

# ---- freelist.pml: the Treiber stack with and without the ABA tag (3 slots)
verify "freelist tagged" freelist.pml "-DTAGGED" "$safety" ""
verify "freelist tagged, bulk pop of 2" freelist.pml "-DTAGGED -DBULK" "$safety" ""
broken "freelist untagged" freelist.pml "" "$safety" "" "$aba" "ABA found"
broken "freelist untagged, ownership only" freelist.pml "-DOWNERS_ONLY" "$safety" "" \
	'assertion violated +!\(slot_has_two_owners\)' "ABA hands one slot to two owners"
broken "freelist untagged, bulk pop of 2" freelist.pml "-DBULK" "$safety" "" "$aba" "ABA found"

# ---- waitwake.pml: alloc_wait against free and cache_free (1 or 2 slots)
verify "waitwake shared list, 2 waiters, 1 slot" waitwake.pml "" "$safety" ""
verify "waitwake shared list, 3 waiters, 2 slots kept" waitwake.pml "-DNW=3 -DNSLOTS=2 -DKEEP" "$safety" ""
verify "waitwake cache park, 2 waiters, 1 slot" waitwake.pml "-DCACHE" "$safety" ""
verify "waitwake cache park, 3 waiters, 1 slot" waitwake.pml "-DCACHE -DNW=3" "$safety" ""
verify "waitwake cache park, 3 waiters, 2 slots kept" waitwake.pml "-DCACHE -DNW=3 -DNSLOTS=2 -DKEEP" "$safety" ""
verify "waitwake cache park, 3 waiters, LTL <>(all served)" waitwake.pml "-DCACHE -DNW=3" "" "-a -N all_served"
verify "waitwake shared list, 3 waiters, 2 slots kept, timeouts" waitwake.pml "-DNW=3 -DNSLOTS=2 -DKEEP -DTIMEOUT" "$safety" ""
verify "waitwake cache park, 2 waiters, 1 slot, timeouts" waitwake.pml "-DCACHE -DTIMEOUT" "$safety" ""
broken "waitwake epoch read after the retry" waitwake.pml "-DLATE_EPOCH" "$safety" "" "$lost" "lost wake-up found"
broken "waitwake no retry after registering" waitwake.pml "-DNO_RECHECK" "$safety" "" "$lost" "lost wake-up found"
broken "waitwake freer reads waiters before its push" waitwake.pml "-DFREER_LOAD_FIRST" "$safety" "" "$lost" "lost wake-up found"
broken "waitwake owner reads waiters before its park" waitwake.pml "-DCACHE -DOWNER_LOAD_FIRST" "$safety" "" "$lost" "lost wake-up found"
broken "waitwake waiter scans before registering" waitwake.pml "-DCACHE -DWAITER_SCAN_FIRST" "$safety" "" "$lost" "lost wake-up found"
broken "waitwake timed-out waiter gives up without a retry" waitwake.pml "-DNW=3 -DNSLOTS=2 -DKEEP -DTIMEOUT -DTIMEOUT_NO_RETRY" "$safety" "" "$lost" "wasted wake-up found"

# ---- moves.pml: alloc_wait against refills, spills, steals and bulk allocs in several steps
verify "moves refill, 2 waiters, 3 slots" moves.pml "-DREFILL" "$safety" ""
verify "moves refill, 3 waiters, 3 slots" moves.pml "-DREFILL -DNW=3" "$safety" ""
verify "moves spill, 3 waiters, 3 slots" moves.pml "-DSPILL -DNW=3" "$safety" ""
verify "moves steal with extras, 3 waiters, 3 slots" moves.pml "-DSTEAL -DNW=3" "$safety" ""
verify "moves bulk alloc, 2 waiters, 3 slots" moves.pml "-DBULK" "$safety" ""
verify "moves borrow from another stripe, 3 waiters, 4 slots" moves.pml "-DBORROW -DNW=3 -DNSLOTS=4" "$safety" ""
broken "moves refill without the waiter check (before issue 18)" moves.pml "-DREFILL -DREFILL_NO_CHECK" "$safety" "" "$lost" "lost wake-up found"
broken "moves refill reads waiters before its publication" moves.pml "-DREFILL -DREFILL_LOAD_FIRST" "$safety" "" "$lost" "lost wake-up found"
broken "moves steal pushes its extras without waking" moves.pml "-DSTEAL -DSTEAL_NO_WAKE" "$safety" "" "$lost" "lost wake-up found"
broken "moves spill reads waiters before its push" moves.pml "-DSPILL -DSPILL_LOAD_FIRST" "$safety" "" "$lost" "lost wake-up found"
broken "moves borrow pushes onto its stripe without waking" moves.pml "-DBORROW -DNW=3 -DNSLOTS=4 -DBORROW_NO_WAKE" "$safety" "" "$lost" "lost wake-up found"
broken "moves waiters that pop only their own stripe" moves.pml "-DBORROW -DNW=3 -DNSLOTS=4 -DSCAN_OWN_ONLY" "$safety" "" "$lost" "lost wake-up found"

# ---- stripes.pml: threads taking and giving back the stripes they hold alone
lostc='assertion violated +!\(lost_count\)'
verify "stripes held alone, 4 threads, 2 stripes" stripes.pml "" "$safety" ""
broken "stripes claimed by a test, then a set" stripes.pml "-DTEST_THEN_SET" "$safety" "" "$lostc" "lost count found"
broken "stripes given back before the counts" stripes.pml "-DRELEASE_FIRST" "$safety" "" "$lostc" "lost count found"

# ---- claim.pml: the home's biased claim against revokers (the home's stores buffered)
two='assertion violated +!\(two_frees\)'
verify "claim home against 2 revokers" claim.pml "" "$safety" ""
verify "claim home reuses the slot, against a stale and a next-generation revoker" claim.pml "-DREUSE" "$safety" ""
broken "claim revoker without membarrier" claim.pml "-DNO_BARRIER" "$safety" "" "$two" "double free found"
broken "claim revoker skips the claim check" claim.pml "-DNO_CLAIM_CHECK" "$safety" "" "$two" "double free found"
broken "claim home stores no claim" claim.pml "-DHOME_NO_CLAIM" "$safety" "" "$two" "double free found"
broken "claim revoker trusts another's mark without a barrier" claim.pml "-DREVOKING_NO_BARRIER" "$safety" "" "$two" "double free found"
broken "claim revoked marked before the barrier" claim.pml "-DREVOKED_EARLY" "$safety" "" "$two" "double free found"

# ---- growth.pml: OPOOL_FULL_GROW, one grower at a time, the others waiting for it
verify "growth 3 threads, 1 to 4 slots" growth.pml "" "$safety" ""
broken "growth pushes its slots before the capacity" growth.pml "-DPUSH_FIRST" "$safety" "" \
	'assertion violated +!\(bad_handle\)' "slot past the capacity found"
broken "growth taken by a test, then a set" growth.pml "-DTEST_THEN_SET" "$safety" "" \
	'assertion violated +!\(double_growth\)' "double growth found"
broken "growth reads the capacity before the word" growth.pml "-DCAPACITY_FIRST" "$safety" "" \
	'assertion violated +!\(double_growth\)' "double growth found"
broken "growth wakes before it changes the word" growth.pml "-DWAKE_FIRST" "$safety" "" \
	'invalid end state' "lost wake-up found"

echo "$passed" >"$count_file"
echo "spin: $passed checks passed"
