/*
 * wp_core.c -- the ACSL contracts WP proves of the roster operations of
 * opool_abi.h and of the handle check of src/opool.c (proof/run.sh wp, make
 * proof; docs/PROOF.md). The contracts sit
 * here, on declarations of the functions the header defines, so the public
 * headers stay free of annotations; Frama-C joins each contract to the
 * definition that follows.
 *
 * roster_ok is the roster's part of the pool invariant (the facts
 * tests/support/opool_check.c tests): the slot and roster arrays valid and
 * apart from the hot fields, count <= limit <= nslots, and each roster entry
 * a slot whose pos names that entry (so no slot is in it twice).
 */
#include "opool.h"

/*@ predicate arrays_ok(opool__hot *c) =
      c->count <= c->limit <= c->nslots &&
      \valid(c->slot + (0 .. c->nslots - 1)) && \valid(c->roster + (0 .. c->limit - 1)) &&
      \separated(c, c->slot + (0 .. c->nslots - 1), c->roster + (0 .. c->limit - 1));

    predicate roster_ok(opool__hot *c) =
      arrays_ok(c) &&
      \forall integer k; 0 <= k < c->limit ==>
          c->roster[k] < c->nslots && c->slot[c->roster[k]].pos == k;

    // what makes it a permutation: no slot is in two entries
    lemma roster_injective{L}: \forall opool__hot *c; roster_ok(c) ==>
      \forall integer j, k; 0 <= j < c->limit && 0 <= k < c->limit &&
          c->roster[j] == c->roster[k] ==> j == k;
*/

/*@ requires \valid(c) && arrays_ok(c) && k < c->limit && i < c->nslots;
    assigns c->roster[k], c->slot[i].pos;
    ensures c->roster[k] == i && c->slot[i].pos == k;
*/
static inline void opool__roster_put(opool__hot *c, uint32_t k, uint32_t i);

/*@ requires \valid(c) && roster_ok(c) && c->count < c->limit;
    assigns c->count;
    ensures \result == c->roster[\old(c->count)] && \result < c->nslots;
    ensures c->count == \old(c->count) + 1 && roster_ok(c);
*/
static inline uint32_t opool__roster_take(opool__hot *c);

/*@ requires \valid(c) && roster_ok(c) && i < c->nslots && 0 < c->count;
    requires c->slot[i].pos < c->count && c->roster[c->slot[i].pos] == i;
    assigns c->count, c->roster[0 .. c->limit - 1], c->slot[0 .. c->nslots - 1].pos;
    ensures roster_ok(c) && c->count == \old(c->count) - 1;
    ensures c->slot[i].pos == c->count && c->roster[c->count] == i;
*/
static inline void opool__roster_release(opool__hot *c, uint32_t i);

/*@ requires \valid(c) && roster_ok(c) && a < c->limit && b < c->limit;
    assigns c->roster[0 .. c->limit - 1], c->slot[0 .. c->nslots - 1].pos;
    ensures roster_ok(c);
    ensures c->roster[a] == \old(c->roster[b]) && c->roster[b] == \old(c->roster[a]);
*/
static inline void opool__roster_swap(opool__hot *c, uint32_t a, uint32_t b);

#include "opool_abi.h"
#include "opool_internal.h"

/*@ assigns \nothing;
    ensures \result == (uint32_t)h.bits; */
static inline uint32_t opool__handle_index_inline(opool_handle h);
/*@ assigns \nothing;
    ensures \result == (uint32_t)(h.bits >> 32); */
static inline uint32_t opool__handle_generation_inline(opool_handle h);

/* ---- the handle check of every out-of-line path (src/opool.c) ----------
 * OPOOL_OK exactly when h's generation is odd, its index below nslots and
 * that slot's generation; then the index is written, and only then. */

/*@ requires \valid_read(p) && \valid(index);
    requires \valid_read(p->hot.slot + (0 .. p->hot.nslots - 1));
    requires \separated(index, p, p->hot.slot + (0 .. p->hot.nslots - 1));
    assigns *index;
    behavior live:
      assumes ((uint32_t)(h.bits >> 32) & 1) != 0 && (uint32_t)h.bits < p->hot.nslots &&
              p->hot.slot[(uint32_t)h.bits].gen == (uint32_t)(h.bits >> 32);
      ensures \result == OPOOL_OK && *index == (uint32_t)h.bits;
      ensures *index < p->hot.nslots;
    behavior not_live:
      assumes !(((uint32_t)(h.bits >> 32) & 1) != 0 && (uint32_t)h.bits < p->hot.nslots &&
                p->hot.slot[(uint32_t)h.bits].gen == (uint32_t)(h.bits >> 32));
      assigns \nothing;
      ensures \result == OPOOL_EINVAL || \result == OPOOL_ESTALE;
    complete behaviors;
    disjoint behaviors;
*/
opool_status opool__classify(const opool *p, opool_handle h, uint32_t *index);

/* the definitions, in this translation unit: the contracts above attach to
 * the static inline functions of the same one */
#include "opool.c"
