#!/usr/bin/env bash
# proof/run.sh -- the machine-checked proofs of the core pool (docs/PROOF.md).
#
#   proof/run.sh eva [DIR]   EVA over eva_core.c: every handle, index and
#                            compact handle against pools of several shapes
#   proof/run.sh wp [DIR]    WP over the ACSL contracts of wp_core.c; prints goals
#                            proven per function
#   proof/run.sh [DIR]       both
#   proof/run.sh keys [DIR]  no proof: each WP function's key ("run function key"
#                            lines; "The cache" below), for proof/keys_check.sh
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
#   OPOOL_WP_ONLY=f,g[,lemmas]  WP on these functions only (and the lemmas), whatever
#                             their records in proof/wp-cache say
#   OPOOL_WP_TIMEOUT=S        no goal waits more than S seconds
#   OPOOL_WP_FRESH=1          every goal sent to the provers, the cache neither read
#                             nor written (make proof-fresh)
#   OPOOL_WP_WHOLE=1          every function given to WP, its goals replayed from the
#                             cache where they can be; the cache then holds this
#                             tree's goals only (before committing proof/wp-cache)
#   OPOOL_WP_CACHE=DIR        the WP cache (default proof/wp-cache, committed)
#   OPOOL_EVA_LIMIT=S         an EVA run that has not finished after S seconds
#                             (default 600) is stopped, and fails saying so
set -uo pipefail
export LC_ALL=C # the keys sort names: the same order on every machine
cd "$(dirname "${BASH_SOURCE[0]}")/.."

what=all
case "${1:-}" in eva | wp | keys) what=$1; shift ;; esac
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

# The WP cache, at two levels (docs/PROOF.md, "The cache"), under
# proof/wp-cache/<run>:
#   goals      one file a goal, named by the digest of the goal's text as the
#              prover receives it: WP's own cache, in a WP session directory
#              (proof/wp-cache/<run>/cache);
#   functions  proof/wp-cache/<run>.functions, a line a function whose goals
#              a run proved: its name, its key (fn_key) and its goal count. A
#              function whose key is unchanged is not given to WP again.
# OPOOL_WP_FRESH: neither level read or written, every goal to the provers.
# OPOOL_WP_WHOLE: the function records ignored (every function's goals made
# again, each replayed from the goal cache) and the goal cache left with this
# tree's goals only (WP's cleanup mode).
wp_cache=${OPOOL_WP_CACHE:-proof/wp-cache}
wp_cache_args() { # the goal cache's options for WP run $1, $2 = whole or part
    if [ -n "${OPOOL_WP_FRESH:-}" ]; then echo "-wp-cache none"; return; fi
    mkdir -p "$wp_cache/$1"
    local mode=update
    [ "$2" != whole ] || mode=cleanup
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
    # the handle check and the live list's bound inlined: EVA keeps the facts
    # behind a branch, not behind a bool a call returns
    local rc=0
    timeout --kill-after=10 "$eva_limit" frama-c -machdep gcc_x86_64 -c11 "-cpp-extra-args=$cpp,-DOPOOL_PROOF_SHAPES=$mask" \
        proof/eva_core.c proof/eva_support.c \
        "${core[@]}" -inline-calls opool__live_gen,opool__live_has \
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

# ---- the function records ---------------------------------------------------
# WP makes a function's goals from its body (after its run's kernel options,
# -inline-calls written out) and from what lies outside every body: types,
# globals, declarations, every contract, predicate, lemma and axiom. So a
# function's key is the digest of those, as frama-c's kernel prints them
# (no source positions in that text), with the run's options, the tools'
# versions, and the bodies of the functions its body names (whose bodies WP
# never reads, but a function without a contract is given a default one).
# A change to a function's body changes its key and its callers'; a change
# to a contract or to anything else outside the bodies changes every key of
# the run; a comment, or lines moved, changes none.

# Prints the AST of WP run $1 (the run's kernel options: $2...) and splits it
# in $out/wp-keys/$1: outside (everything outside function bodies), body.<f>
# for each function defined, names (those functions, sorted).
ast_split() {
    local label=$1 dir=$out/wp-keys/$1
    shift
    rm -rf "$dir"
    mkdir -p "$dir"
    "${fc[@]}" "$@" -print -ocode "$dir/ast.c" >"$dir/print.log" 2>&1 ||
        fail "wp ($label): frama-c could not print the AST ($dir/print.log)"
    # a body: a line "{" after its signature (the lines since a blank one,
    # or since a contract's or a declaration's end), up to a line "}"
    awk -v dir="$dir" '
        inbody { print > body; if ($0 == "}") { close(body); inbody = 0 }; next }
        $0 == "{" {
            # the name: the first word right before a "(" (or before ")(",
            # the printer writing "T (attributes f)(params)")
            name = sig; gsub(/__attribute__\(\([^)]*\)\)/, "", name)
            name = match(name, /[A-Za-z_][A-Za-z0-9_]*\)*\(/) ? substr(name, RSTART, RLENGTH) : ""
            sub(/\)*\($/, "", name)
            if (name == "" || seen[name]++) { print "ast: no single name for a body: " sig > "/dev/stderr"; exit 1 }
            body = dir "/body." name; print name > (dir "/names.raw"); print > body; inbody = 1; sig = ""; next }
        { print > (dir "/outside")
          if ($0 ~ /^[ \t]*$/ || $0 ~ /\*\/[ \t]*$/ || $0 ~ /;[ \t]*$/ || $0 ~ /^}/) sig = ""; else sig = sig " " $0 }
        END { if (inbody) { print "ast: a body with no end" > "/dev/stderr"; exit 1 } }' "$dir/ast.c" ||
        fail "wp ($label): the printed AST does not split into bodies ($dir/ast.c)"
    sort -u "$dir/names.raw" >"$dir/names"
}

# The key of function $2 in WP run $1 whose options (but the time limits)
# are $3; "lemmas": the key of the run's lemmas, which read no body.
fn_key() {
    local dir=$out/wp-keys/$1 f=$2 g
    {
        echo "$tool_versions"
        echo "$3"
        md5sum <"$dir/outside"
        if [ "$f" != lemmas ]; then
            for g in $({ echo "$f"; grep -oE '[A-Za-z_][A-Za-z0-9_]*' "$dir/body.$f"; } | sort -u | comm -12 - "$dir/names"); do
                echo "$g $(md5sum <"$dir/body.$g")"
            done
        fi
    } | md5sum | cut -c1-32
}

# Goals per function of the logs $1...: "name proven total[ unproven goals]"
# for each function of $wp_fcts (comma list) and "lemma name proven total"
# for each lemma of $wp_lemmas. WP names each goal typed_[cast_]<function>_
# <property>, the name's "__" written "_" but in a call's goals
# (typed_lemma_<name> for a lemma); a goal belongs to the longest function
# name that prefixes it.
goal_table() {
    sed -n 's/^\[wp\] \[[^]]*\] Goal \([^ ]*\).*/\1 &/p' "$@" |
        awk -v fcts="$wp_fcts" -v lemmas="$wp_lemmas" '
            BEGIN { n = split(fcts, f, ","); m = split(lemmas, l, ",")
                    for (k = 1; k <= n; k++) { g[k] = f[k]; gsub(/__/, "_", g[k]) } }
            { goal = $1; ok = ($0 ~ / : Valid/); sub(/^typed_(cast_)?/, "", goal); sub(/^opool__/, "opool_", goal)
              if (goal ~ /^lemma_/) { name = substr(goal, 7); lt[name]++; if (ok) lok[name]++; next }
              best = 0
              for (k = 1; k <= n; k++)
                  if (f[k] != "" && index(goal, g[k] "_") == 1 && (!best || length(g[k]) > length(g[best]))) best = k
              if (!best) next
              total[best]++; if (ok) good[best]++; else bad[best] = bad[best] " " substr(goal, length(g[best]) + 2) }
            END { for (k = 1; k <= n; k++) if (f[k] != "") print f[k], good[k] + 0, total[k] + 0 bad[k]
                  for (k = 1; k <= m; k++) print "lemma", l[k], lok[l[k]] + 0, lt[l[k]] + 0 }'
}

# WP run $1 over the functions of comma list $2 ("lemmas": the lemmas of
# $lemmas), each goal given at most $3 seconds; then frama-c's kernel
# options, "--", WP's. The functions whose key matches their record are
# left out (each is added to $out/wp-unchanged: "run name goals"); the others
# go to WP, and a record is written for each whose goals are all proven.
wp_run() {
    local label=$1 fcts=$2 limit=$3
    shift 3
    local kernel=()
    while [ "$1" != -- ]; do kernel+=("$1"); shift; done
    shift
    [ -n "$fcts" ] || return 0
    local records=$wp_cache/$label.functions opts="${kernel[*]} -wp $*"
    local f key old run= keys=
    ast_split "$label" "${kernel[@]}"
    for f in ${fcts//,/ }; do
        [ "$f" = lemmas ] || [ -f "$out/wp-keys/$label/body.$f" ] ||
            fail "wp ($label): $f has no body in the printed AST ($out/wp-keys/$label/ast.c)"
        key=$(fn_key "$label" "$f" "$opts")
        if [ -n "$keys_only" ]; then
            echo "$label $f $key"
            continue
        fi
        keys="$keys$f $key"$'\n'
        old=
        if [ -z "${OPOOL_WP_FRESH:-}${OPOOL_WP_WHOLE:-}${OPOOL_WP_ONLY:-}" ] && [ -f "$records" ]; then
            old=$(awk -v f="$f" -v k="$key" '$1 == f && $2 == k { print $3 }' "$records")
        fi
        if [ -n "$old" ]; then
            echo "$label $f $old" >>"$out/wp-unchanged"
        else
            run="$run${run:+,}$f"
        fi
    done
    [ -z "$keys_only" ] || return 0
    if [ -z "$run" ]; then
        echo "wp ($label): every function unchanged since its goals were proven (proof/wp-cache/$label.functions)"
        return 0
    fi
    local select=(-wp-fct "$run") part=part
    [ "$label" != lemmas ] || select=(-wp-prop "$lemmas")
    [ "$run" != "$fcts" ] || [ -n "${OPOOL_WP_ONLY:-}" ] || part=whole
    wp_once "$label" "$out/wp-$label.log" "${fc[@]}" $(wp_cache_args "$label" $part) "${kernel[@]}" \
        -wp "${select[@]}" "$@" -wp-timeout "$(timeout_of "$limit")" -wp-par 2
    [ -z "${OPOOL_WP_FRESH:-}" ] || return 0
    # the records: those of the functions run replaced by what this run proved
    local proven
    if [ "$label" = lemmas ]; then
        proven=$(wp_fcts= wp_lemmas=$lemmas goal_table "$out/wp-$label.log" |
            awk '{ p += $3; t += $4; if ($3 != $4 || $4 == 0) bad = 1 } END { if (!bad) print "lemmas", t }')
    else
        proven=$(wp_fcts=$run wp_lemmas= goal_table "$out/wp-$label.log" | awk 'NF == 3 && $2 == $3 && $3 > 0 { print $1, $3 }')
    fi
    {
        [ ! -f "$records" ] || awk -v run=",$run," -v fcts=",$fcts," -v only="${OPOOL_WP_ONLY:-}" \
            'index(run, "," $1 ",") == 0 && (only != "" || index(fcts, "," $1 ",")) ' "$records"
        [ -z "$proven" ] || join <(sort <<<"$proven") <(grep . <<<"$keys" | sort) | awk '{ print $1, $3, $2 }'
    } | sort >"$records.new"
    mv "$records.new" "$records"
}

keys_only=
run_wp() {
    [ -n "$keys_only" ] || echo "== wp: proof/wp_core.c (logs: $out/wp-*.log)"
    local t0=$SECONDS tool
    for tool in why3 cvc4 z3; do
        command -v $tool >/dev/null 2>&1 || fail "wp: $tool not found (apt-get install why3 z3 cvc4)"
    done
    tool_versions=$(frama-c -version; why3 --version; cvc4 --version | head -1; z3 --version)
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
    [ -n "$keys_only" ] || check_coverage

    local all typed cast steps lemmas
    all=$(contracts)
    typed=$(only "$(awk '$2 == "typed" { print $1 }' <<<"$all" | paste -sd,)")
    cast=$(only "$(awk '$2 == "cast" { print $1 }' <<<"$all" | paste -sd,)")
    steps=$(only "$(awk '$2 == "lemmas" { print $1 }' <<<"$all" | paste -sd,)")
    # every lemma of wp_core.c (a name followed by its labels or a colon)
    lemmas=$(sed -n 's/.*\blemma \([A-Za-z_][A-Za-z0-9_]*\) *\({[^}]*}\)\{0,1\} *:.*/\1/p' proof/wp_core.c | sort -u | paste -sd,)
    [ -n "$lemmas" ] || fail "wp: no lemma found in proof/wp_core.c"
    if [ -n "${OPOOL_WP_ONLY:-}" ] && [[ ",$OPOOL_WP_ONLY," != *",lemmas,"* ]]; then lemmas=; fi
    rm -rf "$out"/wp-*.log "$out/wp.log" "$out/wp-unchanged" "$out/wp-keys"
    : >"$out/wp-unchanged"
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
    wp_run plain "$typed" 900 "-cpp-extra-args=$cpp" proof/wp_core.c -inline-calls opool__object_as,opool__in_first -- \
        -wp-rte -rte-no-pointer-call -wp-prover cvc4,z3 -wp-split
    # the inline lookup and free cast the pool to its hot fields: WP's cast
    # model. The steps they share with the out-of-line paths (the handle
    # check, the free's two writes: proven on their own in the other runs)
    # are inlined here: through their contracts, two goals of the free
    # (its writes, and the roster afterwards, seen through the cast) time
    # out; written out, they are proven as before the steps were shared.
    wp_run cast "$cast" 120 "-cpp-extra-args=$cpp" proof/wp_core.c -inline-calls opool__live_gen,opool__unlink_as,opool__free_as -- \
        -wp-model Typed+cast -wp-rte -wp-prover cvc4,z3 -wp-split
    # the lemmas, which the functions' proofs use (-wp-fct leaves them out);
    # chunk_offset takes z3 169 s on a quiet machine and timed out at 300 s
    # beside another frama-c: 600 s
    wp_run lemmas "${lemmas:+lemmas}" 600 "-cpp-extra-args=$cpp,-DOPOOL_PROOF_LEMMAS" proof/wp_core.c -- -wp-prover cvc4,z3
    # the steps that keep pool_ok part by part, the out-of-line free and the
    # growth: their goals need lemmas (geometry_frame, object_ok_shrink,
    # chunk_offset, backed_object, ...) in context, so they run where the
    # lemmas are defined
    wp_run steps "$steps" 900 "-cpp-extra-args=$cpp,-DOPOOL_PROOF_LEMMAS" proof/wp_core.c -- \
        -wp-rte -wp-prover cvc4,z3 -wp-split
    [ -z "$keys_only" ] || return 0
    cat "$out"/wp-*.log >"$out/wp.log" 2>/dev/null || : >"$out/wp.log"

    echo "goals proven per function:"
    local table
    table=$(wp_fcts="$typed,$cast,$steps" wp_lemmas=$lemmas goal_table "$out/wp.log" |
        awk -v unchanged="$out/wp-unchanged" '
            BEGIN { while ((getline line < unchanged) > 0) { split(line, u, " "); same[u[2]] = u[3] } }
            $1 == "lemma" { if (!("lemmas" in same)) { printf "   lemma %-26s %3d / %-3d\n", $2, $3, $4; if (!$4) print "MISSING lemma " $2 }; next }
            $1 in same { printf "   %-32s %3d / %-3d  (unchanged: replayed whole)\n", $1, same[$1], same[$1]; next }
            { bad = $0; sub(/^[^ ]* [^ ]* [^ ]* ?/, "", bad)
              printf "   %-32s %3d / %-3d%s\n", $1, $2, $3, bad != "" ? "  unproven: " bad : ""
              if (!$3) print "MISSING function " $1 }
            END { if ("lemmas" in same) printf "   the lemmas                       %3d / %-3d  (unchanged: replayed whole)\n", same["lemmas"], same["lemmas"] }')
    grep -v '^MISSING' <<<"$table"
    local missing
    missing=$(sed -n 's/^MISSING //p' <<<"$table" | paste -sd' ')
    [ -z "$wp_failed" ] || fail "wp: $wp_failed"
    [ -z "$missing" ] || fail "wp: no goal in the report for: $missing"
    local sums
    sums=$({ sed -n 's/^\[wp\] Proved goals: *\([0-9]*\) *\/ *\([0-9]*\).*/\1 \2/p' "$out/wp.log"
        awk '{ print $3, $3 }' "$out/wp-unchanged"; } | awk '{ p += $1; t += $2 } END { print p + 0, t + 0 }')
    echo "wp: ${sums% *} of ${sums#* } goals proven, $(wc -l <"$out/wp-unchanged") functions unchanged among them, every function with a contract and every lemma in the report, $((SECONDS - t0)) s"
}

case $what in
eva) run_eva ;;
wp) run_wp ;;
keys) keys_only=1 run_wp ;;
all) run_eva && run_wp ;;
esac
