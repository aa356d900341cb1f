#!/usr/bin/env bash
# proof/mutants.sh -- does the proof catch the bugs it is there to catch?
# (make proof-mutants; docs/PROOF.md, "The gate, tested")
#
#   proof/mutants.sh [DIR] [NAME...]
#
# Each proof/mutants/NAME.patch is one small, realistic bug in the shipped
# code (a patch of include/ or src/). Its header says which proof halves to
# run on it and how:
#   # eva: MASK          the EVA run over these shapes (eva_core.c), or "no" (and why)
#   # wp: f,g            WP on these functions only (proof/run.sh's
#                        OPOOL_WP_ONLY), or "no"
#   # caught by: eva wp  the halves that must fail on it
# For each mutant, include/, src/ and proof/ are copied to DIR/NAME/tree (the
# working files are never touched), the patch applied there, and each half
# run there with proof/run.sh, for at most OPOOL_MUTANT_LIMIT seconds (default
# 1200; a half stopped there gives no verdict, and catches nothing). Before
# the mutants, the same runs on an
# unmutated copy must pass: a mutant counts as caught only by a half that
# passes without it (OPOOL_MUTANTS_BASE=no skips that, to run some mutants
# again after a run whose unmutated copy passed). WP runs with
# OPOOL_WP_TIMEOUT (default 120 s a goal).
#
# Exits 0 only if the unmutated copy passes, every patch applies, and every
# mutant is caught by each half its header names (a half that catches more
# than it names is reported, not a failure). One frama-c runs at a time.
# DIR defaults to build/proof-mutants.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

out=${1:-build/proof-mutants}
[ $# -gt 0 ] && shift
mkdir -p "$out"
out=$(cd "$out" && pwd)
export OPOOL_WP_TIMEOUT=${OPOOL_WP_TIMEOUT:-120}
export OPOOL_PROOF_SERIAL=1

command -v frama-c >/dev/null 2>&1 || { echo "proof-mutants: FAILED: frama-c not found (apt-get install frama-c-base why3 z3 cvc4)"; exit 1; }
command -v patch >/dev/null 2>&1 || { echo "proof-mutants: FAILED: patch not found (apt-get install patch)"; exit 1; }

if [ $# -gt 0 ]; then
    mutants=()
    for n in "$@"; do mutants+=("proof/mutants/${n%.patch}.patch"); done
else
    mutants=(proof/mutants/*.patch)
fi

field() { sed -n "s/^# $1: *//p" "$2" | head -1; }

# A fresh copy of what the proofs read, in $1.
copy_tree() {
    rm -rf "$1"
    mkdir -p "$1"
    cp -r include src proof "$1"/
}

# Runs half $1 (eva or wp) in tree $2 with argument $3 (shapes or functions),
# logs in $4; prints proof/run.sh's last line; returns its status.
# returns its status, 124 when it was stopped at the limit.
limit=${OPOOL_MUTANT_LIMIT:-1200}
run_half() {
    local half=$1 tree=$2 arg=$3 logs=$4 rc=0
    mkdir -p "$logs"
    if [ "$half" = eva ]; then
        OPOOL_EVA_SHAPES=$arg timeout "$limit" "$tree/proof/run.sh" eva "$logs" >"$logs/eva.out" 2>&1 || rc=$?
    else
        OPOOL_WP_ONLY=$arg timeout "$limit" "$tree/proof/run.sh" wp "$logs" >"$logs/wp.out" 2>&1 || rc=$?
    fi
    tail -1 "$logs/$half.out"
    return $rc
}

# The unmutated copy, through every run the mutants ask for (EVA: each mask
# once; WP: the functions of all of them together).
masks=$(for m in "${mutants[@]}"; do field eva "$m"; done | grep -v '^no' | sort -u)
fcts=$(for m in "${mutants[@]}"; do field wp "$m"; done | grep -v '^no' | tr ',' '\n' | sort -u | paste -sd,)
if [ "${OPOOL_MUTANTS_BASE:-}" = no ]; then
    echo "== proof-mutants: the unmutated copy not run (OPOOL_MUTANTS_BASE=no)"
    masks= fcts=
else
    echo "== proof-mutants: the unmutated copy ($out/base)"
    copy_tree "$out/base/tree"
fi
for mask in $masks; do
    line=$(run_half eva "$out/base/tree" "$mask" "$out/base/eva-$mask") ||
        { echo "proof-mutants: FAILED: EVA ($mask) fails without a mutant: $line"; exit 1; }
    echo "   eva $mask: passes"
done
if [ -n "$fcts" ]; then
    line=$(run_half wp "$out/base/tree" "$fcts" "$out/base/wp") ||
        { echo "proof-mutants: FAILED: WP ($fcts) fails without a mutant: $line"; exit 1; }
    echo "   wp $fcts: passes"
fi

failed=0
summary=()
for m in "${mutants[@]}"; do
    name=$(basename "$m" .patch)
    dir=$out/$name
    echo "== $name: $(sed -n '1s/^# //p' "$m")"
    copy_tree "$dir/tree"
    if ! patch -s -p1 -d "$dir/tree" --no-backup-if-mismatch <"$m" >"$dir/patch.out" 2>&1; then
        cat "$dir/patch.out"
        echo "   the patch does not apply to this tree"
        summary+=("$(printf '%-28s does not apply' "$name")")
        failed=1
        continue
    fi
    want=$(field "caught by" "$m")
    caught=
    for half in eva wp; do
        arg=$(field "$half" "$m")
        [ -n "$arg" ] && [[ "$arg" != no* ]] || continue
        t0=$SECONDS
        rc=0
        line=$(run_half "$half" "$dir/tree" "$arg" "$dir/$half") || rc=$?
        if [ $rc = 0 ]; then
            echo "   $half: passes ($((SECONDS - t0)) s): missed"
        elif [ $rc = 124 ]; then
            echo "   $half: no verdict: stopped after $limit s"
        else
            echo "   $half: fails ($((SECONDS - t0)) s): $line"
            caught="$caught $half"
        fi
    done
    for half in $want; do
        if [[ " $caught " != *" $half "* ]]; then
            echo "   expected $half to catch it"
            failed=1
        fi
    done
    summary+=("$(printf '%-28s caught by:%s' "$name" "${caught:- nothing}")")
    [ -n "$caught" ] || failed=1
done

echo "== proof-mutants: which half caught each"
printf '   %s\n' "${summary[@]}"
if [ $failed != 0 ]; then
    echo "proof-mutants: FAILED: a mutant was not caught as its header says (above; logs in $out)"
    exit 1
fi
echo "proof-mutants: every mutant makes the proof fail"
