#!/usr/bin/env bash
# proof/run.sh -- the machine-checked proofs of the core pool (docs/PROOF.md).
#
#   proof/run.sh eva [DIR]   EVA over eva_core.c: every handle, index and
#                            compact handle against pools of several shapes
#   proof/run.sh wp [DIR]    WP over the ACSL contracts of wp_core.c; prints goals
#                            proven per function
#   proof/run.sh [DIR]       both
#
# DIR (default build/proof) receives the logs. The exit status is 0 only
# when every check below passed; otherwise the last line says why:
#   - frama-c, or for WP why3, cvc4 or z3, not installed (make test checks
#     for frama-c itself and skips its EVA stage with a note);
#   - a frama-c run that exits non-zero or reports an error (a parse error
#     in ACSL, a prover why3 cannot run, a plug-in aborted);
#   - EVA: an alarm, an assertion of the harness not valid, the harness's end
#     unreachable, a function without code or contract;
#   - WP: a run whose "Proved goals: N / M" line is missing or has N < M, or
#     whose goal lines are not M, all Valid; a function with a contract in
#     wp_core.c (but for those marked "// assumed") or a lemma there with no
#     goal in the report; a function defined in src/opool.c with no contract
#     in wp_core.c and not listed in proof/wp_outside.txt.
# Which WP run proves a function is read from wp_core.c: the trailing
# comment of its declaration, "// wp: cast" (the lookup's cast: WP's
# Typed+cast model), "// wp: lemmas" (with the lemmas in context), none (the
# plain run) or "// assumed" (not proven: docs/PROOF.md, Assumptions).
#
# For development and proof/mutants.sh (never needed for the gate):
#   OPOOL_PROOF_SERIAL=1      the two EVA runs one after the other
#   OPOOL_EVA_SHAPES=MASK     one EVA run, over these shapes (eva_core.c)
#   OPOOL_WP_ONLY=f,g[,lemmas]  WP on these functions only (and the lemmas)
#   OPOOL_WP_TIMEOUT=S        no goal waits more than S seconds
#   OPOOL_WP_FRESH=1          every goal sent to the provers, the cache neither read
#                             nor written (make proof-fresh)
#   OPOOL_WP_CACHE=DIR        the WP cache (default proof/wp-cache, committed)
#   OPOOL_EVA_LIMIT=S         an EVA run that has not finished after S seconds
#                             (default 600) is stopped, and fails saying so
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

what=all
case "${1:-}" in eva | wp) what=$1; shift ;; esac
out=${1:-build/proof}
mkdir -p "$out"

fail() {
    echo "proof: FAILED: $*"
    exit 1
}

command -v frama-c >/dev/null 2>&1 ||
    fail "frama-c not found (apt-get install frama-c-base why3 z3 cvc4)"

share=$(frama-c -print-share-path) || fail "frama-c -print-share-path did not run"
# The core as the compilers see it, with what Frama-C's libc lacks (frama_c.h).
cpp="-Iinclude,-Isrc,-Iproof,-D_Alignof=__alignof__,-include,proof/frama_c.h,-DNDEBUG"
core=(src/opool.c src/opool_track.c src/opool_diag.c "$share/libc/stdatomic.c")

# EVA's bound a run: the two runs take 100 to 150 s side by side (docs/PROOF.md,
# "Time"); a bug that never empties the harness's pools (a free that leaves
# its object live) makes EVA unroll the harness's loops without end.
eva_limit=${OPOOL_EVA_LIMIT:-600}

# The WP cache: one file a goal, named by the digest of the goal's text as
# the prover receives it (docs/PROOF.md, "The cache"), in a WP session
# directory of each run: proof/wp-cache/<run>. Read and updated; a whole run
# (no OPOOL_WP_ONLY) also drops the entries of goals it no longer has.
# OPOOL_WP_FRESH: every goal goes to the provers, no cache read or written.
wp_cache=${OPOOL_WP_CACHE:-proof/wp-cache}
wp_cache_args() { # the cache's options for WP run $1
    if [ -n "${OPOOL_WP_FRESH:-}" ]; then echo "-wp-cache none"; return; fi
    mkdir -p "$wp_cache/$1"
    local mode=cleanup
    [ -z "${OPOOL_WP_ONLY:-}" ] || mode=update
    echo "-wp-session $(cd "$wp_cache/$1" && pwd) -wp-cache $mode"
}

# An error frama-c may report while still exiting 0 (or before it exits).
errors='User Error|\[kernel\] Failure|[Aa]borted|Unexpected error|Fatal error|Stack overflow|Out of memory'

# ---- EVA ---------------------------------------------------------------------

# One EVA run of eva_core.c over the shapes in mask $1, logging to $2; on
# any failure prints why (also into $2.why) and returns non-zero.
eva_once() {
    local mask=$1 log=$2
    rm -f "$log.why"
    why() { echo "$1" | tee "$log.why"; }
    # fresh: each allocation its own base (grown slot arrays are copied from
    # the old ones); precision 2 unrolls the core's short loops; the final
    # states (hundreds of MB for the growing pools' partitions) not printed;
    # the handle check inlined: EVA keeps the facts behind a branch, not
    # behind a bool a call returns
    local rc=0
    timeout --kill-after=10 "$eva_limit" frama-c -machdep gcc_x86_64 -c11 "-cpp-extra-args=$cpp,-DOPOOL_PROOF_SHAPES=$mask" \
        proof/eva_core.c proof/eva_support.c \
        "${core[@]}" -inline-calls opool__live_gen \
        -eva -eva-no-alloc-returns-null -eva-alloc-builtin fresh -eva-precision 2 \
        -eva-msg-key=-final-states >"$log" 2>&1 || rc=$?
    if [ $rc = 124 ] || [ $rc = 137 ]; then
        why "eva: did not finish within $eva_limit s, stopped (OPOOL_EVA_LIMIT): a loop of the harness that never ends, such as a free that leaves its object live so that a pool never empties ($log)"
        return 1
    fi
    if [ $rc != 0 ]; then
        tail -20 "$log"
        why "eva: Frama-C failed ($log)"
        return 1
    fi
    if grep -Eq "$errors" "$log"; then
        grep -E -m3 "$errors" "$log"
        why "eva: Frama-C reported an error ($log)"
        return 1
    fi
    local alarms
    alarms=$(sed -n 's/^ *\([0-9][0-9]*\) alarms\{0,1\} generated by the analysis.*/\1/p' "$log")
    grep -A3 '^\[eva:alarm\]' "$log" | head -40
    # the harness's own assertions (results of the calls) are no alarms
    if grep -q 'got status \(unknown\|invalid\)' "$log"; then
        grep -B1 'got status \(unknown\|invalid\)' "$log" | head -20
        why "eva: an assertion of the harness is not proven ($log)"
        return 1
    fi
    if ! grep -q 'Frama_C_show_each_reached_end' "$log"; then
        why "eva: the harness's end is unreachable (an error on every path; $log)"
        return 1
    fi
    if [ -z "$alarms" ] || [ "$alarms" != 0 ]; then
        why "eva: ${alarms:-an unknown number of} alarms ($log)"
        return 1
    fi
    if grep -q 'Neither code nor specification' "$log"; then
        grep -A1 'Neither code nor specification' "$log"
        why "eva: a function without code or contract (its effects are guessed; $log)"
        return 1
    fi
}

# Fails with the first failed EVA run's reason.
eva_failed() {
    fail "$(cat "$out/eva.log.why" "$out/eva-grow.log.why" 2>/dev/null | head -1)"
}

run_eva() {
    echo "== eva: proof/eva_core.c (logs: $out/eva.log, $out/eva-grow.log)"
    local t0=$SECONDS
    rm -f "$out/eva.log.why" "$out/eva-grow.log.why"
    if [ -n "${OPOOL_EVA_SHAPES:-}" ]; then
        eva_once "$OPOOL_EVA_SHAPES" "$out/eva.log" || eva_failed
    elif [ -n "${OPOOL_PROOF_SERIAL:-}" ]; then
        eva_once 0x3f "$out/eva.log" || eva_failed
        eva_once 0x3c0 "$out/eva-grow.log" || eva_failed
    else
        # two runs side by side, of about the same length: the fixed pools and
        # the growing pools of 64 and 40 slots; those of 48 (hooks, poison and
        # zeroing) and 33 slots
        eva_once 0x3f "$out/eva.log" &
        local first=$! rc=0
        eva_once 0x3c0 "$out/eva-grow.log" || rc=1
        wait $first || rc=1
        [ $rc = 0 ] || eva_failed
    fi
    echo "eva: 0 alarms, every assertion of the harness valid, $((SECONDS - t0)) s"
}

# ---- WP ----------------------------------------------------------------------

# "name group" for each function wp_core.c gives a contract: the declaration
# that follows an ACSL block; group from its trailing comment (above).
contracts() {
    awk '/\/\*@/ { inacsl = 1; pending = 0 }
        inacsl { if ($0 ~ /\*\//) { inacsl = 0; pending = 1; decl = "" }; next }
        pending && decl == "" && ($0 ~ /^[ \t]*$/ || $0 ~ /^[ \t]*\/\//) { next }
        pending && decl == "" && $0 !~ /^[A-Za-z_]/ { pending = 0; next }
        pending { decl = decl " " $0
            if (decl ~ /[;{]/) { pending = 0
                d = decl; sub(/\(.*/, "", d); n = split(d, w, /[ \t*]+/)
                g = "typed"
                if (decl ~ /\/\/ *assumed/) g = "assumed"
                else if (decl ~ /\/\/ *wp: *cast/) g = "cast"
                else if (decl ~ /\/\/ *wp: *lemmas/) g = "lemmas"
                print w[n], g } }' proof/wp_core.c
}

# The functions src/opool.c defines: each top-level item, comments and
# preprocessor lines aside, that opens a body ("{") after a parameter list.
definitions() {
    awk '{ line = $0
        if (incomment) { if (line !~ /\*\//) next; sub(/^.*\*\//, "", line); incomment = 0 }
        while (match(line, /\/\*/)) {
            rest = substr(line, RSTART + 2)
            if (match(rest, /\*\//)) line = substr(line, 1, index(line, "/*") - 1) " " substr(rest, RSTART + 2)
            else { line = substr(line, 1, index(line, "/*") - 1); incomment = 1; break } }
        sub(/\/\/.*/, "", line)
        if (line ~ /^[ \t]*#/) next
        for (k = 1; k <= length(line); k++) { ch = substr(line, k, 1)
            if (depth == 0) item = item ch
            if (ch == "{") {
                if (depth == 0 && item ~ /\(/ && item !~ /=/ && item !~ /^[ \t]*(typedef|struct|enum|union)[ \t]/) {
                    d = item; sub(/\(.*/, "", d); n = split(d, w, /[ \t*]+/); print w[n] }
                depth++
            } else if (ch == "}") { depth--; if (depth == 0) item = "" }
            else if (ch == ";" && depth == 0) item = "" }
        if (depth == 0) item = item " " }' src/opool.c
}

# Every function of src/opool.c has a contract or a line in wp_outside.txt.
check_coverage() {
    local defined contracted outside missing stale both
    defined=$(definitions | sort -u)
    contracted=$(contracts | awk '{ print $1 }' | sort -u)
    outside=$(sed -n 's/^\([A-Za-z_][A-Za-z0-9_]*\).*/\1/p' proof/wp_outside.txt | sort -u)
    [ -n "$defined" ] || fail "wp: no function definitions found in src/opool.c"
    missing=$(comm -23 <(echo "$defined") <(sort -u <(echo "$contracted") <(echo "$outside")) | tr '\n' ' ')
    [ -z "$missing" ] || fail "wp: src/opool.c defines ${missing}with no contract in proof/wp_core.c (add one, or a line in proof/wp_outside.txt)"
    stale=$(comm -13 <(echo "$defined") <(echo "$outside") | tr '\n' ' ')
    [ -z "$stale" ] || fail "wp: proof/wp_outside.txt names ${stale}which src/opool.c does not define"
    both=$(comm -12 <(echo "$contracted") <(echo "$outside") | tr '\n' ' ')
    [ -z "$both" ] || fail "wp: ${both}has a contract and a line in proof/wp_outside.txt"
    echo "wp: every function of src/opool.c has a contract ($(echo "$defined" | comm -12 - <(echo "$contracted") | wc -l)) or a line in proof/wp_outside.txt ($(echo "$outside" | wc -l))"
}

# The cache keeps valid verdicts only: WP replays a cached time-out as a
# time-out (when its time reaches the limit), so a goal that timed out on a
# loaded machine would never be tried again. Drops run $1's other entries.
drop_unproven() {
    local dir=$wp_cache/$1/cache
    [ -z "${OPOOL_WP_FRESH:-}" ] && [ -d "$dir" ] || return 0
    grep -L '"verdict": "valid"' "$dir"/*.json 2>/dev/null | xargs -r rm -f
}

# Runs frama-c ($3...) for WP run $1, log $2; fails unless it exits 0, reports
# no error and proves every goal it generates (N of N, N > 0, N goal lines
# all Valid). A run with unproven goals is recorded in $wp_failed and the
# next run goes on, so that one run's log shows every goal that failed.
wp_failed=
wp_once() {
    local label=$1 log=$2 t0=$SECONDS rc=0
    shift 2
    "$@" >"$log" 2>&1 || rc=$?
    if [ $rc != 0 ]; then
        grep -E -m3 "$errors|[Ee]rror" "$log"
        fail "wp ($label): frama-c exited with status $rc ($log)"
    fi
    if grep -Eq "$errors" "$log"; then
        grep -E -m3 "$errors" "$log"
        fail "wp ($label): frama-c reported an error ($log)"
    fi
    local summary proved total lines valid
    summary=$(sed -n 's/^\[wp\] Proved goals: *\([0-9]*\) *\/ *\([0-9]*\).*/\1 \2/p' "$log")
    [ "$(echo "$summary" | grep -c .)" = 1 ] || fail "wp ($label): no single 'Proved goals' line: the run did not finish ($log)"
    read -r proved total <<<"$summary"
    lines=$(grep -c '^\[wp\] \[[^]]*\] Goal ' "$log")
    valid=$(grep -c '^\[wp\] \[[^]]*\] Goal [^ ]* : Valid' "$log")
    local cached
    cached=$(grep -c '^\[wp\] \[[^]]*\] Goal [^ ]* : Valid.*(cached)$' "$log")
    echo "wp ($label): $proved of $total goals proven, $cached of them replayed from the cache, $((SECONDS - t0)) s"
    drop_unproven "$label"
    [ "$total" -gt 0 ] || fail "wp ($label): no goal generated ($log)"
    [ "$lines" = "$total" ] || fail "wp ($label): $lines goal results for $total goals ($log)"
    if [ "$proved" != "$total" ] || [ "$valid" != "$total" ]; then
        grep '^\[wp\] \[[^]]*\] Goal ' "$log" | grep -v ' : Valid' | head -10
        wp_failed="$wp_failed${wp_failed:+; }$label: $((total - proved)) of $total goals not proven ($log)"
    fi
}

# Keeps the names of comma list $1 that OPOOL_WP_ONLY names (all without it).
only() {
    local f keep=
    for f in ${1//,/ }; do
        if [ -z "${OPOOL_WP_ONLY:-}" ] || [[ ",$OPOOL_WP_ONLY," == *",$f,"* ]]; then keep=$keep${keep:+,}$f; fi
    done
    echo "$keep"
}

timeout_of() { # the run's limit a goal, capped by OPOOL_WP_TIMEOUT
    local t=$1
    [ -n "${OPOOL_WP_TIMEOUT:-}" ] && [ "$OPOOL_WP_TIMEOUT" -lt "$t" ] && t=$OPOOL_WP_TIMEOUT
    echo "$t"
}

run_wp() {
    echo "== wp: proof/wp_core.c (logs: $out/wp-*.log)"
    local t0=$SECONDS tool
    for tool in why3 cvc4 z3; do
        command -v $tool >/dev/null 2>&1 || fail "wp: $tool not found (apt-get install why3 z3 cvc4)"
    done
    # why3 finds the provers afresh, into a configuration of our own
    WHY3CONFIG=$(cd "$out" && pwd)/why3.conf # DIR may be relative or absolute
    export WHY3CONFIG
    why3 config detect -C "$WHY3CONFIG" >/dev/null 2>&1 || fail "wp: why3 config detect failed"
    # why3's 1000 MB a prover is near what z3 takes for opool__object_far's
    # existential goal (144 million steps): 4000 (two provers at once)
    sed -i 's/^memlimit = .*/memlimit = 4000/' "$WHY3CONFIG"
    grep -q '^memlimit = 4000$' "$WHY3CONFIG" || fail "wp: could not set the provers' memory limit ($WHY3CONFIG)"
    grep -q '^name = "CVC4"' "$WHY3CONFIG" || fail "wp: why3 does not find cvc4 ($WHY3CONFIG)"
    grep -q '^name = "Z3"' "$WHY3CONFIG" || fail "wp: why3 does not find z3 ($WHY3CONFIG)"
    check_coverage

    local all typed cast steps lemmas fc
    all=$(contracts)
    typed=$(only "$(awk '$2 == "typed" { print $1 }' <<<"$all" | paste -sd,)")
    cast=$(only "$(awk '$2 == "cast" { print $1 }' <<<"$all" | paste -sd,)")
    steps=$(only "$(awk '$2 == "lemmas" { print $1 }' <<<"$all" | paste -sd,)")
    # every lemma of wp_core.c (a name followed by its labels or a colon)
    lemmas=$(sed -n 's/.*\blemma \([A-Za-z_][A-Za-z0-9_]*\) *\({[^}]*}\)\{0,1\} *:.*/\1/p' proof/wp_core.c | sort -u | paste -sd,)
    [ -n "$lemmas" ] || fail "wp: no lemma found in proof/wp_core.c"
    if [ -n "${OPOOL_WP_ONLY:-}" ] && [[ ",$OPOOL_WP_ONLY," != *",lemmas,"* ]]; then lemmas=; fi
    rm -f "$out"/wp-*.log "$out/wp.log"
    fc=(frama-c -machdep gcc_x86_64 -c11)
    # wp_core.c includes src/opool.c: one translation unit, so that the
    # contracts reach the static inline functions opool.c calls. The provers'
    # limits are a goal's, and only a goal that fails waits them out: 900 s
    # for the plain and the steps' runs, whose hardest goals (retire's
    # in-roster half of slots_ok, objects_ok kept by the claim's writes) take
    # 100 to 205 s on a quiet machine, and retire's timed out at 480 s at a
    # load of 5 on two cores (docs/PROOF.md, "Time"). The one call through a
    # pointer whose body WP proves, the allocator's in opool__chunk_storage,
    # is to opool__any_alloc (an admitted precondition), so the runtime check
    # of the pointer (\valid_function, which WP 25 cannot prove) is left out:
    # -rte-no-pointer-call. opool__object is the call of opool__object_as
    # with nothing known: written out there (with opool__in_first), the step
    # is proven as it was.
    [ -z "$typed" ] || wp_once plain "$out/wp-plain.log" "${fc[@]}" $(wp_cache_args plain) "-cpp-extra-args=$cpp" proof/wp_core.c \
        -inline-calls opool__object_as,opool__in_first -wp -wp-fct "$typed" -wp-rte -rte-no-pointer-call -wp-prover cvc4,z3 -wp-timeout "$(timeout_of 900)" \
        -wp-split -wp-par 2
    # the inline lookup and free cast the pool to its hot fields: WP's cast
    # model. The steps they share with the out-of-line paths (the handle
    # check, the free's two writes: proven on their own in the other runs)
    # are inlined here: through their contracts, two goals of the free
    # (its writes, and the roster afterwards, seen through the cast) time
    # out; written out, they are proven as before the steps were shared.
    [ -z "$cast" ] || wp_once cast "$out/wp-cast.log" "${fc[@]}" $(wp_cache_args cast) "-cpp-extra-args=$cpp" proof/wp_core.c \
        -inline-calls opool__live_gen,opool__unlink_as,opool__free_as \
        -wp -wp-model Typed+cast -wp-fct "$cast" -wp-rte -wp-prover cvc4,z3 -wp-timeout "$(timeout_of 120)" \
        -wp-split -wp-par 2
    # the lemmas, which the functions' proofs use (-wp-fct leaves them out);
    # chunk_offset takes z3 169 s on a quiet machine and timed out at 300 s
    # beside another frama-c: 600 s
    [ -z "$lemmas" ] || wp_once lemmas "$out/wp-lemmas.log" "${fc[@]}" $(wp_cache_args lemmas) "-cpp-extra-args=$cpp,-DOPOOL_PROOF_LEMMAS" \
        proof/wp_core.c -wp -wp-prop "$lemmas" -wp-prover cvc4,z3 -wp-timeout "$(timeout_of 600)" -wp-par 2
    # the steps that keep pool_ok part by part, the out-of-line free and the
    # growth: their goals need lemmas (geometry_frame, object_ok_shrink,
    # chunk_offset, backed_object, ...) in context, so they run where the
    # lemmas are defined
    [ -z "$steps" ] || wp_once steps "$out/wp-steps.log" "${fc[@]}" $(wp_cache_args steps) "-cpp-extra-args=$cpp,-DOPOOL_PROOF_LEMMAS" \
        proof/wp_core.c -wp -wp-fct "$steps" -wp-rte -wp-prover cvc4,z3 -wp-timeout "$(timeout_of 900)" \
        -wp-split -wp-par 2
    cat "$out"/wp-*.log >"$out/wp.log" 2>/dev/null || fail "wp: no function or lemma selected"

    # goals per function: WP names each goal typed_[cast_]<function>_<property>,
    # the name's "__" written "_" but in a call's goals (typed_lemma_<name> for
    # a lemma); a
    # goal belongs to the longest function name that prefixes it
    echo "goals proven per function:"
    local table
    table=$(sed -n 's/^\[wp\] \[[^]]*\] Goal \([^ ]*\).*/\1 &/p' "$out/wp.log" |
        awk -v fcts="$typed,$cast,$steps" -v lemmas="$lemmas" '
            BEGIN { n = split(fcts, f, ","); m = split(lemmas, l, ",")
                    for (k = 1; k <= n; k++) { g[k] = f[k]; gsub(/__/, "_", g[k]) } }
            { goal = $1; ok = ($0 ~ / : Valid/); sub(/^typed_(cast_)?/, "", goal); sub(/^opool__/, "opool_", goal)
              if (goal ~ /^lemma_/) { name = substr(goal, 7); lt[name]++; if (ok) lok[name]++; next }
              best = 0
              for (k = 1; k <= n; k++)
                  if (f[k] != "" && index(goal, g[k] "_") == 1 && (!best || length(g[k]) > length(g[best]))) best = k
              if (!best) { stray++; next }
              total[best]++; if (ok) good[best]++; else bad[best] = bad[best] " " substr(goal, length(g[best]) + 2) }
            END { for (k = 1; k <= n; k++) if (f[k] != "") {
                      printf "   %-32s %3d / %-3d%s\n", f[k], good[k], total[k], bad[k] ? "  unproven:" bad[k] : ""
                      if (!total[k]) printf "MISSING function %s\n", f[k] }
                  for (k = 1; k <= m; k++) { printf "   lemma %-26s %3d / %-3d\n", l[k], lok[l[k]], lt[l[k]]
                      if (!lt[l[k]]) printf "MISSING lemma %s\n", l[k] } }')
    grep -v '^MISSING' <<<"$table"
    local missing
    missing=$(sed -n 's/^MISSING //p' <<<"$table" | paste -sd' ')
    [ -z "$wp_failed" ] || fail "wp: $wp_failed"
    [ -z "$missing" ] || fail "wp: no goal in the report for: $missing"
    local sums
    sums=$(sed -n 's/^\[wp\] Proved goals: *\([0-9]*\) *\/ *\([0-9]*\).*/\1 \2/p' "$out/wp.log" |
        awk '{ p += $1; t += $2 } END { print p, t }')
    echo "wp: ${sums% *} of ${sums#* } goals proven, every function with a contract and every lemma in the report, $((SECONDS - t0)) s"
}

case $what in
eva) run_eva ;;
wp) run_wp ;;
all) run_eva && run_wp ;;
esac
