#!/usr/bin/env bash
# proof/keys_check.sh -- the WP cache's function keys (docs/PROOF.md, "The
# cache") change exactly where the proofs can: in a copy of the tree (the
# working files are not touched), three edits, each against the keys of the
# unedited copy (proof/run.sh keys):
#   - a comment and a blank line added to src/opool.c: no key changes;
#   - one line of opool__classify's body: its key and those of the functions
#     whose bodies call it change, a function that does not call it keeps its
#     key;
#   - a predicate added to proof/wp_core.c: every key changes.
# Exit status 0 when all three hold; otherwise the last line says which did
# not. Needs frama-c, why3, cvc4 and z3 (make test's eva stage runs it).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

out=${1:-build/proof-keys}
fail() {
    echo "keys: FAILED: $*"
    exit 1
}

rm -rf "$out"
mkdir -p "$out"
keys() { # the keys of copy $1, into $out/$1
    "$out/$1/proof/run.sh" keys "$out/run-$1" >"$out/$1.keys" 2>&1 || { tail -3 "$out/$1.keys"; fail "proof/run.sh keys failed ($out/$1.keys)"; }
    grep -c . "$out/$1.keys" | grep -qv '^0$' || fail "no key printed ($out/$1.keys)"
}
copy() { # a copy $1 of what the proofs read
    mkdir -p "$out/$1"
    cp -r include src proof "$out/$1"/
}
changed() { # the "run:function" names whose key in copy $1 differs from the base's
    join -j1 <(awk '{ print $1 ":" $2, $3 }' "$out/base.keys" | sort) \
        <(awk '{ print $1 ":" $2, $3 }' "$out/$1.keys" | sort) | awk '$2 != $3 { print $1 }'
}

for t in base comment body logic; do copy $t; done
# a comment and a blank line: nothing the provers see
sed -i '0,/^#include/s//\/* a comment, and a blank line after it *\/\n\n&/' "$out/comment/src/opool.c"
cmp -s src/opool.c "$out/comment/src/opool.c" && fail "the comment was not added to the copy of src/opool.c"
# one line of a body: that function and its callers
line='    return p->hot.shift == 32 && i < p->slot_cap ? OPOOL_ESTALE : OPOOL_EINVAL;'
grep -qF "$line" src/opool.c || fail "opool__classify's last line is not in src/opool.c (update this check)"
sed -i 's/    return p->hot.shift == 32 \&\& i < p->slot_cap ? OPOOL_ESTALE : OPOOL_EINVAL;/    return i < p->slot_cap \&\& p->hot.shift == 32 ? OPOOL_ESTALE : OPOOL_EINVAL;/' "$out/body/src/opool.c"
# a predicate: every key
printf '\n/*@ predicate opool_keys_check_probe = \\true; */\n' >>"$out/logic/proof/wp_core.c"
# two at a time (the machine's cores)
keys base & b=$!
keys comment || exit 1
wait $b || exit 1
keys body & b=$!
keys logic || exit 1
wait $b || exit 1
total=$(grep -c . "$out/base.keys")

n=$(changed comment | grep -c .)
[ "$n" = 0 ] || fail "a comment changed $n keys: $(changed comment | head -3 | paste -sd' ')"

changed body >"$out/body.changed"
grep -q ':opool__classify$' "$out/body.changed" || fail "a change to opool__classify's body left its key"
grep -q ':opool__free_slow$' "$out/body.changed" || fail "a change to opool__classify's body left the key of opool__free_slow, which calls it"
! grep -q ':opool__roster_put$' "$out/body.changed" || fail "a change to opool__classify's body changed the key of opool__roster_put, which does not call it"
n=$(grep -c . "$out/body.changed")

m=$(changed logic | grep -c .)
[ "$m" = "$total" ] || fail "a predicate added changed $m of $total keys"

echo "keys: a comment changes none of the $total keys; a line of opool__classify $n ($(paste -sd' ' "$out/body.changed" | sed 's/[a-z]*://g')); a predicate all $total"
