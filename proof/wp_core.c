/*
 * wp_core.c -- the ACSL contracts WP proves of the roster operations of
 * opool_abi.h, the handle check, object address and free (release, the
 * out-of-line free), opool_alloc_at and the growth of src/opool.c,
 * and the inline lookup and free (proof/run.sh wp, make proof;
 * docs/PROOF.md). The contracts sit here, on declarations of the functions
 * the header defines, so the public headers stay free of annotations;
 * Frama-C joins each contract to the definition that follows. A loop's
 * invariant is a macro here (OPOOL__*_LOOP) that src/opool.c names in
 * place, under #ifdef of that macro. A declaration with a contract ends
 * with a comment that proof/run.sh reads: "// assumed" (its body is not
 * proven: docs/PROOF.md, Assumptions), "// wp: cast" or "// wp: lemmas"
 * (the frama-c run that proves it), or none (the plain run).
 *
 * roster_ok is the roster's part of the pool invariant (the facts
 * tests/support/opool_check.c tests): the slot and roster arrays valid and
 * apart from the hot fields, count <= limit <= nslots, and each roster entry
 * a slot whose pos names that entry (so no slot is in it twice). pool_ok,
 * further down, is the whole invariant as one predicate.
 *
 * ACSL lines are laid out by hand: clang-format is off below.
 */
#include "opool.h"
#include "opool_internal.h"
#include "opool_diag.h"

// clang-format off

// slot j's two facts of the invariant: retired, without storage, or in the
// roster at its pos; live (odd generation) exactly when that pos is below
// count. (Macros, not predicates: each is written out under a quantifier,
// below.)
#define OPOOL__PLACED(c, j)                                                  \
    (c->slot[j].pos == OPOOL__RETIRED || c->slot[j].pos == OPOOL__UNBACKED || \
     (c->slot[j].pos < c->limit && c->roster[c->slot[j].pos] == j))
#define OPOOL__LIVE_AT(c, j) ((c->slot[j].gen & 1) != 0 <==> c->slot[j].pos < c->count)

// what a step keeps of pool_ok: each part its own ensures clause (stated
// whole, pool_ok would be one goal that redoes them all), for the pool q
// whose hot fields c are, from what the step is given (pre: for example
// "\old(pool_ok(p)) ==>"). pool_ok is these and roster_ok, which each step
// ensures of its own.
#define OPOOL__KEEPS(pre, q, c)                                                             \
    ensures k_geometry: pre geometry_ok(q);                                                \
    ensures k_in_roster: pre \forall integer j; 0 <= j < c->nslots ==> OPOOL__PLACED(c, j); \
    ensures k_live: pre \forall integer j; 0 <= j < c->nslots ==> OPOOL__LIVE_AT(c, j);     \
    ensures k_objects: pre objects_ok(q);                                                  \
    ensures k_room: pre room_ok(q);                                                        \
    ensures k_rest: pre \valid(q) && c->free_limit <= c->nslots &&                         \
      \separated(q, c->slot + (0 .. c->nslots - 1), c->roster + (0 .. c->limit - 1));

/*@ // (a pool under OPOOL_NO_LIVE_LIST, with no roster, is outside the
    // invariant: docs/PROOF.md)
    predicate arrays_ok(opool__hot *c) =
      c->roster != \null && c->count <= c->limit <= c->nslots &&
      \valid(c->slot + (0 .. c->nslots - 1)) && \valid(c->roster + (0 .. c->limit - 1)) &&
      \separated(c, c->slot + (0 .. c->nslots - 1), c->roster + (0 .. c->limit - 1));

    // chunk 0 is [0, first): all of a fixed pool (shift 32), else 2^shift
    // slots or the index limit, whichever is lower
    predicate hot_geometry(opool__hot *c) =
      c->first <= c->nslots && c->shift <= 32 &&
      // (a quantifier here, not a global lemma on products, which slows
      // every other proof down)
      (\forall integer i; 0 <= i <= c->nslots ==> i * c->stride <= 18446744073709551615) &&
      (c->shift == 32 ==> c->nslots == c->first) &&
      (c->shift < 32 ==> (1 << c->shift) <= c->first || c->nslots <= c->first);

    predicate roster_ok(opool__hot *c) =
      arrays_ok(c) &&
      \forall integer k; 0 <= k < c->limit ==>
          c->roster[k] < c->nslots && c->slot[c->roster[k]].pos == k;

    // every slot j but i has both facts (the macros above: with a predicate
    // per slot under the quantifier, the provers time out on any path that
    // calls the roster with pool_ok in context)
    predicate slots_ok_but(opool__hot *c, integer i) =
      \forall integer j; 0 <= j < c->nslots && j != i ==> OPOOL__PLACED(c, j) && OPOOL__LIVE_AT(c, j);
    predicate slots_ok(opool__hot *c) = slots_ok_but(c, -1);

    // what makes it a permutation: no slot is in two entries
    lemma roster_injective{L}: \forall opool__hot *c; roster_ok(c) ==>
      \forall integer j, k; 0 <= j < c->limit && 0 <= k < c->limit &&
          c->roster[j] == c->roster[k] ==> j == k;
*/

/*@ requires \valid(c) && arrays_ok(c) && k < c->limit && i < c->nslots;
    exits \false;
    assigns c->roster[k], c->slot[i].pos;
    ensures c->roster[k] == i && c->slot[i].pos == k;
*/
static inline void opool__roster_put(opool__hot *c, uint32_t k, uint32_t i);

/*@ requires \valid(c) && roster_ok(c) && c->count < c->limit;
    exits \false;
    assigns c->count;
    ensures \result == c->roster[\old(c->count)] && \result < c->nslots;
    ensures c->count == \old(c->count) + 1 && roster_ok(c);
    ensures c->nslots == \old(c->nslots) && c->limit == \old(c->limit);
*/
static inline uint32_t opool__roster_take(opool__hot *c);

/*@ requires \valid(c) && roster_ok(c) && i < c->nslots && 0 < c->count;
    requires c->slot[i].pos < c->count && c->roster[c->slot[i].pos] == i;
    exits \false;
    // (the two entries and two slots it moves: a range here would leave its
    // callers a quantified frame to reason through)
    assigns c->count, c->roster[c->slot[i].pos], c->roster[c->count - 1], c->slot[c->roster[c->count - 1]].pos,
            c->slot[i].pos, c->chain;
    ensures roster_ok(c) && c->count == \old(c->count) - 1;
    ensures c->slot[i].pos == c->count && c->roster[c->count] == i;
    // every other slot keeps its facts; slots outside the roster keep their marker
    behavior slots:
      // (slot i's own facts are not needed: its generation is written after)
      assumes slots_ok_but(c, i) && c->nslots <= OPOOL_MAX_CAPACITY; // the markers lie above limit
      ensures in_roster: \forall integer j; 0 <= j < c->nslots && j != i ==> OPOOL__PLACED(c, j);
      ensures live: \forall integer j; 0 <= j < c->nslots && j != i ==> OPOOL__LIVE_AT(c, j);
      ensures \forall integer j; 0 <= j < c->nslots && \old(c->slot[j].pos) >= c->limit ==>
                c->slot[j].pos == \old(c->slot[j].pos);
      ensures \forall integer j; 0 <= j < c->nslots && \old(c->slot[j].pos) < c->limit ==>
                c->slot[j].pos < c->limit;
    // what it leaves: the bounds, and every slot's generation
    behavior keeps:
      ensures c->nslots == \old(c->nslots) && c->limit == \old(c->limit) && c->free_limit == \old(c->free_limit);
      ensures \forall integer j; 0 <= j < c->nslots ==> c->slot[j].gen == \old(c->slot[j].gen);
*/
static inline void opool__roster_release(opool__hot *c, uint32_t i);

/*@ requires \valid(c) && roster_ok(c) && a < c->limit && b < c->limit;
    exits \false;
    assigns c->roster[a], c->roster[b], c->slot[c->roster[a]].pos, c->slot[c->roster[b]].pos;
    ensures roster_ok(c);
    ensures c->count == \old(c->count) && c->nslots == \old(c->nslots) && c->limit == \old(c->limit);
    ensures c->roster[a] == \old(c->roster[b]) && c->roster[b] == \old(c->roster[a]);
    // the other entries and every other slot's pos stay
    ensures \forall integer k; 0 <= k < c->limit && k != a && k != b ==> c->roster[k] == \old(c->roster[k]);
    ensures \forall integer j; 0 <= j < c->nslots && j != \old(c->roster[a]) && j != \old(c->roster[b]) ==>
              c->slot[j].pos == \old(c->slot[j].pos);
    // and every generation (which the assigns clause above leaves its callers to derive)
    ensures \forall integer j; 0 <= j < c->nslots ==> c->slot[j].gen == \old(c->slot[j].gen);
*/
static inline void opool__roster_swap(opool__hot *c, uint32_t a, uint32_t b);

/*@ assigns \nothing;
    ensures \result == (uint32_t)h.bits; */
static inline uint32_t opool__handle_index_inline(opool_handle h);
/*@ assigns \nothing;
    ensures \result == (uint32_t)(h.bits >> 32); */
static inline uint32_t opool__handle_generation_inline(opool_handle h);

/* ---- the handle: its packing and its check (opool_abi.h) --------------- */

/*@ assigns \nothing; */
static inline opool_handle opool__handle(uint32_t i, uint32_t gen);

/*@ requires \valid_read(c) && \valid_read(c->slot + i);
    assigns \nothing;
    ensures \result <==> (c->slot[i].gen == g && (g & 1) != 0); */
static inline bool opool__live_gen(const opool__hot *c, uint32_t i, uint32_t g);

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

/* ==== the pool invariant and the object of a slot (src/opool.c) ===========
 * pool_ok is the whole invariant of a pool, the facts
 * tests/support/opool_check.c tests, as one predicate:
 *   geometry  nslots <= max_capacity <= OPOOL_MAX_CAPACITY, first <= nslots,
 *             shift <= 32 (a fixed pool: every slot in chunk 0), nchunks <= 33;
 *   roster    roster_ok above: count <= limit <= nslots, the arrays valid and
 *             apart, every entry a slot whose pos names it;
 *   slots     each slot below nslots is retired, without storage, or in the
 *             roster at its pos; live (odd generation) exactly when its pos is
 *             below count (the roster's inverse, and the live prefix);
 *   objects   each slot in the roster has its object (slot_object: for the
 *             chunk k whose index range [lo(k), hi(k)) holds it,
 *             base[k] + (i - lo(k)) * stride) stride valid bytes, not NULL,
 *             apart from the pool and its arrays. */

/*@ predicate in_chunk(opool__hot *c, integer k, integer i) =
      k == 0 ? 0 <= i < c->first
             : c->shift < 32 && (1 << (c->shift + k - 1)) <= i < (1 << (c->shift + k));
*/

/* ---- which object: slot i's, as a term -----------------------------------
 * slot_object names slot i's object without an existential over chunks, so
 * that a contract can say which bytes it writes (the free's assigns clause)
 * and which object the lookup returns. It needs i's top bit as a logic
 * function: top is given by the fact that defines it (an axiom: for i > 0
 * exactly one t has 2^t <= i < 2^(t+1); docs/PROOF.md, Assumptions). */

/* ---- a slot's offset in its chunk -----------------------------------------
 * (j - lo) * s as a function of its own, so that the provers can find the
 * facts stated for every j of a chunk (a product inside an expression is
 * no pattern for them): defined by the one fact that gives its value (an
 * axiom; docs/PROOF.md, Assumptions). */

/*@ axiomatic Offset {
      logic integer offset(integer j, integer lo, integer s);
      axiom offset_def: \forall integer j, lo, s; offset(j, lo, s) == (j - lo) * s;
    }
*/

/*@ axiomatic Top {
      // the position of the highest set bit of i > 0
      logic integer top(integer i);
      axiom top_def: \forall integer i, t; 0 <= t && (1 << t) <= i < (1 << (t + 1)) ==> top(i) == t;
    }
    // slot i's object from the chunk bases and the geometry's values: i *
    // stride into chunk 0, else (i - 2^t) * stride into chunk t - shift + 1,
    // t being i's top bit
    logic char *object_of(opool__hot *c, integer first, integer shift, integer stride, integer i) =
      i < first ? c->base[0] + i * stride
                : c->base[top(i) - shift + 1] + (i - (1 << top(i))) * stride;
    // the same, read from the hot fields (written out: defined through
    // object_of, opool__object_far's existential goal timed out at 8 min)
    logic char *slot_object(opool__hot *c, integer i) =
      i < c->first ? c->base[0] + i * c->stride
                   : c->base[top(i) - c->shift + 1] + (i - (1 << top(i))) * c->stride;

    // in the chunk whose range holds it (which the lookup finds with a bit count)
    lemma slot_object_far: \forall opool__hot *c, integer k, i; 0 < k && c->first <= i && in_chunk(c, k, i) ==>
      slot_object(c, i) == c->base[k] + (i - (1 << (c->shift + k - 1))) * c->stride;
*/

/* ---- the pool invariant --------------------------------------------------
 * objects_ok names slot i's object once (object_of), with one quantified
 * variable, and passes the fields its facts read as values (object_ok reads
 * no memory but the allocation table): so a write elsewhere leaves each
 * instance the same term once the fields read the same, and the provers
 * carry it across a write by instantiating the old fact at the new slot. */

/*@ // stride valid bytes at o, not NULL, apart from the pool and its arrays
    // (the arrays' addresses and lengths as values)
    predicate object_ok(char *o, integer stride, opool *p, opool__slot *slot, integer nslots,
                        uint32_t *roster, integer limit) =
      o != \null && \valid(o + (0 .. stride - 1)) &&
      \separated(o + (0 .. stride - 1), p, slot + (0 .. nslots - 1), roster + (0 .. limit - 1));

    // slot i's object, as objects_ok states it
    predicate slot_object_ok(opool *p, integer i) =
      object_ok(object_of(&p->hot, p->hot.first, p->hot.shift, p->hot.stride, i), p->hot.stride,
                p, p->hot.slot, p->slot_cap, p->hot.roster, p->slot_cap);

    predicate geometry_ok(opool *p) =
      hot_geometry(&p->hot) && p->hot.nslots <= p->max_capacity <= OPOOL_MAX_CAPACITY &&
      1 <= p->nchunks <= OPOOL__MAX_CHUNKS &&
      p->max_capacity * p->hot.stride <= 18446744073709551615 && p->desc.object_size <= p->hot.stride;

    // (apart from the arrays at their capacity, which no step but their
    // growth changes)
    predicate objects_ok(opool *p) =
      \forall integer i; 0 <= i < p->hot.nslots && p->hot.slot[i].pos < p->hot.limit ==>
        object_ok(object_of(&p->hot, p->hot.first, p->hot.shift, p->hot.stride, i), p->hot.stride,
                  p, p->hot.slot, p->slot_cap, p->hot.roster, p->slot_cap);

    // what the growth needs: both arrays valid for slot_cap entries and
    // apart, nslots within them; gen0 even; on a growing pool (more than one
    // chunk) chunk 0 is 2^shift slots, and each chunk c in [1, nchunks)
    // starts above chunk 0 and below the index limit
    predicate arrays_room(opool *p, opool__slot *slot, uint32_t *roster, integer cap) =
      \valid(slot + (0 .. cap - 1)) && \valid(roster + (0 .. cap - 1)) &&
      \separated(p, slot + (0 .. cap - 1), roster + (0 .. cap - 1));
    predicate chunks_room(integer first, integer shift, integer nchunks, integer max_capacity) =
      shift + nchunks <= 33 && (1 < nchunks ==> first == (1 << shift)) &&
      \forall integer t; shift <= t && t + 1 < shift + nchunks ==>
        first <= (1 << t) < max_capacity && (1 << t) < (1 << (t + 1));
    predicate room_ok(opool *p) =
      p->hot.nslots <= p->slot_cap && (p->gen0 & 1) == 0 &&
      arrays_room(p, p->hot.slot, p->hot.roster, p->slot_cap) &&
      chunks_room(p->hot.first, p->hot.shift, p->nchunks, p->max_capacity);

    predicate pool_ok(opool *p) =
      \valid(p) && geometry_ok(p) && roster_ok(&p->hot) && slots_ok(&p->hot) && objects_ok(p) && room_ok(p) &&
      p->hot.free_limit <= p->hot.nslots && // the inline free's bound
      \separated(p, p->hot.slot + (0 .. p->hot.nslots - 1), p->hot.roster + (0 .. p->hot.limit - 1));
*/

/* geometry_ok in a later state from the fields it reads: toward pool_ok
 * after a write (docs/PROOF.md, Not proven yet); proven in the lemmas' run */
#ifdef OPOOL_PROOF_LEMMAS
/*@ lemma geometry_frame{L1,L2}: \forall opool *p; geometry_ok{L1}(p) &&
      \at(p->hot.stride, L1) == \at(p->hot.stride, L2) && \at(p->hot.shift, L1) == \at(p->hot.shift, L2) &&
      \at(p->hot.first, L1) == \at(p->hot.first, L2) && \at(p->max_capacity, L1) == \at(p->max_capacity, L2) &&
      \at(p->hot.nslots, L1) == \at(p->hot.nslots, L2) && \at(p->nchunks, L1) == \at(p->nchunks, L2) &&
      \at(p->desc.object_size, L1) == \at(p->desc.object_size, L2) ==>
      geometry_ok{L2}(p);
*/
#endif

/* geometry_ok with more slots, up to max_capacity, the rest of what it reads
 * as it was: what the growth's new slots keep (opool__born); proven in the
 * lemmas' run */
#ifdef OPOOL_PROOF_LEMMAS
/*@ lemma geometry_more{L1,L2}: \forall opool *p; geometry_ok{L1}(p) &&
      \at(p->hot.stride, L1) == \at(p->hot.stride, L2) && \at(p->hot.shift, L1) == \at(p->hot.shift, L2) &&
      \at(p->hot.first, L1) == \at(p->hot.first, L2) && \at(p->max_capacity, L1) == \at(p->max_capacity, L2) &&
      \at(p->nchunks, L1) == \at(p->nchunks, L2) &&
      \at(p->desc.object_size, L1) == \at(p->desc.object_size, L2) &&
      \at(p->hot.nslots, L1) <= \at(p->hot.nslots, L2) <= \at(p->max_capacity, L2) &&
      \at(p->hot.shift, L2) < 32 && (1 << \at(p->hot.shift, L2)) <= \at(p->hot.first, L2) ==>
      geometry_ok{L2}(p);
*/
#endif

/* an object apart from a shorter roster: what objects_ok keeps when the
 * roster's limit falls (retire); proven in the lemmas' run */
#ifdef OPOOL_PROOF_LEMMAS
/*@ lemma object_ok_shrink: \forall char *o, integer stride, opool *p, opool__slot *slot, integer nslots,
        uint32_t *roster, integer limit, shorter; 0 <= shorter <= limit &&
      object_ok(o, stride, p, slot, nslots, roster, limit) ==> object_ok(o, stride, p, slot, nslots, roster, shorter);
*/
#endif

/* -- assumed: contracts WP does not prove (docs/PROOF.md, Assumptions) -- */

/*@ requires \valid_read(e);
    exits \false;
    assigns \nothing; */
static inline uint64_t opool__episode_failures(const opool__episode *e); // assumed

// the position of i's highest set bit: the highest power of two up to i
// (i > 0, stated as a power of two up to it), which is top(i) (top_def
// gives it from the line below; stated, so that callers need not derive it)
/*@ requires \exists integer n; 0 <= n < 32 && (1 << n) <= i;
    exits \false;
    assigns \nothing;
    ensures \result < 32 && (1 << \result) <= i < (1 << (\result + 1)) && \result == top(i);
    ensures \forall integer n; 0 <= n && (1 << n) <= i ==> n <= \result;
    ensures \forall integer n; 0 <= n && i < (1 << n) ==> \result < n; */
static inline uint32_t opool__top_bit(uint32_t i); // assumed

/* -- proven -- */

/*@ requires \valid_read(c) && c->shift < 32 && (1 << c->shift) <= i;
    exits \false;
    assigns \nothing;
    ensures 1 <= \result < OPOOL__MAX_CHUNKS && in_chunk(c, \result, i) && c->shift + \result <= 32;
    // (the chunk named by i's top bit: opool__object_far's witness, so that
    // its existential goal needs no search over the chunks' ranges)
    ensures \result == top(i) - c->shift + 1; */
static inline uint32_t opool__chunk_of(const opool__hot *c, uint32_t i);

/*@ requires \valid_read(c) && chunk < OPOOL__MAX_CHUNKS;
    assigns \nothing;
    ensures \result == c->base[chunk] + offset; */
static inline void *opool__object_in(const opool__hot *c, uint32_t chunk, size_t offset);

/*@ requires \valid_read(c) && hot_geometry(c) && c->shift < 32 && (1 << c->shift) <= i < c->nslots;
    assigns \nothing;
    ensures \exists integer k; 1 <= k < OPOOL__MAX_CHUNKS && in_chunk(c, k, i) &&
                               \result == c->base[k] + (i - (1 << (c->shift + k - 1))) * c->stride; */
static inline void *opool__object_far(const opool__hot *c, uint32_t i);

/*@ requires \valid_read(c) && hot_geometry(c) && i < c->nslots;
    assigns \nothing;
    ensures i < c->first ==> \result == c->base[0] + i * c->stride;
    ensures c->first <= i ==> \exists integer k; 1 <= k < OPOOL__MAX_CHUNKS && in_chunk(c, k, i) &&
                                                \result == c->base[k] + (i - (1 << (c->shift + k - 1))) * c->stride;
    ensures \result == slot_object(c, i); */
static inline void *opool__object(const opool__hot *c, uint32_t i);

/*@ exits \false;
    assigns \nothing; */
static inline bool opool__wraps(uint32_t gen, uint32_t gen0, uint32_t k);

/*@ requires \valid_read(p);
    exits \false;
    assigns \nothing; */
uint32_t opool__slow_bits(const opool *p);

/*@ requires \valid_read(p) && \valid(fast_limit) && \valid(free_limit);
    requires \separated(fast_limit, free_limit);
    exits \false;
    assigns *fast_limit, *free_limit;
    ensures *free_limit == 0 || *free_limit == p->hot.nslots; */
void opool__fast_bounds(const opool *p, uint32_t *fast_limit, uint32_t *free_limit);

/*@ requires \valid(p);
    exits \false;
    assigns p->hot.fast_limit, p->hot.free_limit;
    ensures \old(roster_ok(&p->hot)) ==> roster_ok(&p->hot);
    ensures \old(roster_ok(&p->hot)) ==>
              \forall integer j; 0 <= j < p->hot.nslots ==> p->hot.slot[j].gen == \old(p->hot.slot[j].gen);
    ensures p->hot.free_limit <= p->hot.nslots;
    OPOOL__KEEPS(\old(pool_ok(p)) ==>, p, (&p->hot)) */
void opool__update_fast(opool *p); // wp: lemmas

/* ==== freeing a live slot (src/opool.c) ==================================
 * opool__release is the free of every out-of-line path (opool_free's slow
 * path, opool_free_object, eviction, destroy): from a pool that pool_ok
 * describes and a live slot i, it makes exactly slot i stale (its
 * generation the next one), one object fewer, every other slot's
 * generation as it was, and a pool that pool_ok describes; it writes
 * nothing but the fields below and slot i's object. Every call it makes is
 * a step with a contract of its own: the two calls into other files
 * (opool_track.c, opool_diag.c) and the hooks are assumed (docs/PROOF.md,
 * Assumptions); the two writes (opool__unlink), retire, the episode's end
 * and the inline bounds are proven. A step proves each part of pool_ok
 * (OPOOL__KEEPS); the whole predicate is put together where the next step
 * requires it (opool__freed after opool__unlink, opool__episode_end after
 * retire) and at the release's end, one goal each. */

// opool_track.c: poisons and hides the freed object's bytes (assumed)
/*@ requires \valid((char *)obj + (0 .. size - 1));
    exits \false;
    assigns ((char *)obj)[0 .. size - 1]; */
void opool__track_on_free(void *obj, size_t size, size_t keep, bool poison); // assumed

// opool_diag.c: may end the pool's exhaustion episode (assumed)
/*@ requires \valid(e);
    exits \false;
    assigns e->failures; */
bool opool__episode_freed(opool__episode *e, uint64_t count, uint64_t capacity); // assumed

/* The pools whose hooks stay local: init, fini and report (the user's or
 * the default printer) write at most their own object's stride bytes, call
 * nothing of the pool, and return. The API allows more (a fini or report
 * that frees other objects, opool.h), which the code handles and these
 * contracts do not: every contract whose path may call a hook requires
 * hooks_local of its pool, so the theorems are about such pools, and the
 * hooks' assumed contracts are what their code does under it. A predicate
 * of the pool alone, with no definition: nothing is assumed of a pool that
 * does not meet it. */
/*@ axiomatic Hooks { predicate hooks_local(opool *p); } */

// a user's fini: under hooks_local, it writes its own object and returns
// (docs/PROOF.md, Assumptions)
/*@ requires hooks_local(p);
    requires \valid_read(p) && \valid((char *)obj + (0 .. p->hot.stride - 1));
    assigns ((char *)obj)[0 .. p->hot.stride - 1];
    exits \false; */
static void opool__call_fini(const opool *p, void *obj); // assumed

// a user's init: the same
/*@ requires hooks_local(p);
    requires \valid_read(p) && \valid((char *)obj + (0 .. p->hot.stride - 1));
    assigns ((char *)obj)[0 .. p->hot.stride - 1];
    exits \false; */
static void opool__call_init(const opool *p, void *obj); // assumed

// retire's writes (src/opool.c): free slot i leaves the roster for good,
// its place going to the last entry, one more slot retired, and the pool
// keeps each part of its invariant
/*@ requires \valid(p) && roster_ok(&p->hot) && i < p->hot.nslots;
    requires p->hot.count <= p->hot.slot[i].pos < p->hot.limit && p->hot.roster[p->hot.slot[i].pos] == i;
    requires \separated(p, p->hot.slot + (0 .. p->hot.nslots - 1), p->hot.roster + (0 .. p->hot.limit - 1));
    exits \false;
    assigns p->hot.roster[p->hot.slot[i].pos], p->hot.roster[p->hot.limit - 1],
            p->hot.slot[p->hot.roster[p->hot.limit - 1]].pos, p->hot.slot[i].pos, p->hot.limit, p->retired;
    ensures roster_ok(&p->hot) && p->hot.limit == \old(p->hot.limit) - 1 && p->hot.slot[i].pos == OPOOL__RETIRED;
    ensures p->hot.count == \old(p->hot.count) && p->hot.nslots == \old(p->hot.nslots);
    ensures p->hot.free_limit == \old(p->hot.free_limit);
    ensures \forall integer j; 0 <= j < p->hot.nslots ==> p->hot.slot[j].gen == \old(p->hot.slot[j].gen);
    OPOOL__KEEPS(\old(pool_ok(p)) ==>, p, (&p->hot))
*/
static inline void opool__drop(opool *p, uint32_t i); // wp: lemmas

/*@ requires \valid(p) && roster_ok(&p->hot) && i < p->hot.nslots && p->hot.count < p->hot.limit;
    requires p->hot.count <= p->hot.slot[i].pos < p->hot.limit && p->hot.roster[p->hot.slot[i].pos] == i;
    requires \separated(p, p->hot.slot + (0 .. p->hot.nslots - 1), p->hot.roster + (0 .. p->hot.limit - 1));
    exits \false;
    assigns p->hot.roster[0 .. p->hot.limit - 1], p->hot.slot[0 .. p->hot.nslots - 1].pos, p->hot.limit,
            p->retired, p->hot.fast_limit, p->hot.free_limit;
    ensures roster_ok(&p->hot) && p->hot.limit == \old(p->hot.limit) - 1;
    ensures p->hot.slot[i].pos == OPOOL__RETIRED;
    ensures p->hot.count == \old(p->hot.count) && p->hot.nslots == \old(p->hot.nslots);
    ensures p->hot.free_limit <= p->hot.nslots;
    ensures \forall integer j; 0 <= j < p->hot.nslots ==> p->hot.slot[j].gen == \old(p->hot.slot[j].gen);
    OPOOL__KEEPS(\old(pool_ok(p)) ==>, p, (&p->hot))
*/
static void opool__retire(opool *p, uint32_t i);

// the episode's end (src/opool.c): from a pool that pool_ok describes, the
// episode's count and the inline bounds may change, and the pool keeps each
// part of its invariant
/*@ requires pool_ok(p);
    exits \false;
    assigns p->episode.failures, p->hot.fast_limit, p->hot.free_limit;
    ensures roster_ok(&p->hot) && p->hot.free_limit <= p->hot.nslots;
    ensures \forall integer j; 0 <= j < p->hot.nslots ==> p->hot.slot[j].gen == \old(p->hot.slot[j].gen);
    OPOOL__KEEPS(, p, (&p->hot))
*/
static inline void opool__episode_end(opool *p); // wp: lemmas

// the release's steps after its writes (src/opool.c): from a pool that
// pool_ok describes and free slot i in the roster, slot i may retire and the
// episode may end; the count and every generation stay, and the pool keeps
// each part of its invariant
/*@ requires pool_ok(p) && i < p->hot.nslots;
    requires p->hot.count <= p->hot.slot[i].pos < p->hot.limit && p->hot.roster[p->hot.slot[i].pos] == i;
    exits \false;
    assigns p->hot.roster[0 .. p->hot.limit - 1], p->hot.slot[0 .. p->hot.nslots - 1].pos, p->hot.limit,
            p->retired, p->hot.fast_limit, p->hot.free_limit, p->episode.failures;
    ensures roster_ok(&p->hot) && p->hot.free_limit <= p->hot.nslots;
    ensures p->hot.count == \old(p->hot.count) && p->hot.nslots == \old(p->hot.nslots);
    ensures \forall integer j; 0 <= j < p->hot.nslots ==> p->hot.slot[j].gen == \old(p->hot.slot[j].gen);
    OPOOL__KEEPS(, p, (&p->hot))
*/
static inline void opool__freed(opool *p, uint32_t i, uint32_t g); // wp: lemmas

// what the free of slot i writes: its fields, the roster entries below
// limit, the slots' pos, slot i's generation and slot i's object (the
// release's assigns clause, and with the count of rejections that of every
// call that frees by handle)
#define OPOOL__FREE_WRITES(p, i)                                                                      \
    p->hot.count, p->hot.chain, p->hot.limit, p->retired, p->hot.fast_limit, p->hot.free_limit,      \
    p->episode.failures,                                                                           \
    p->hot.roster[0 .. p->hot.limit - 1], p->hot.slot[0 .. p->hot.nslots - 1].pos, p->hot.slot[i].gen, \
    slot_object(&p->hot, i)[0 .. p->hot.stride - 1]

// what the free of live slot i makes of the generations and the count: one
// object fewer, slot i's generation the next one, every other kept (ensures
// clauses of the release and of both frees' live behavior; separate clauses,
// which -wp-split proves one at a time)
#define OPOOL__FREED(p, i)                                                                        \
    ensures p->hot.count == \old(p->hot.count) - 1;                                               \
    ensures p->hot.slot[i].gen == (uint32_t)(\old(p->hot.slot[i].gen) + 1);                       \
    ensures \forall integer j; 0 <= j < p->hot.nslots && j != i ==> p->hot.slot[j].gen == \old(p->hot.slot[j].gen);

/* A live slot's next generation is a free one (even), wrapping included.
 * WP's theory of bit operations defines bit 0 through shifts, not through
 * the remainder by 2, so the lemmas' run proves the link first (a number
 * shifted left has bit 0 clear; an even number is one shifted left); only
 * next_even is in the functions' context. */
#ifdef OPOOL_PROOF_LEMMAS
/*@ lemma even_low: \forall integer y; 0 <= y ==> ((y << 1) & 1) == 0;
    lemma half: \forall integer x; 0 <= x && x % 2 == 0 ==> ((x / 2) << 1) == x;
    lemma even_clear: \forall integer x; 0 <= x && x % 2 == 0 ==> (x & 1) == 0;
    lemma odd_mod: \forall integer x; 0 <= x && (x & 1) != 0 ==> x % 2 == 1;
*/
#endif
/*@ lemma next_even: \forall integer x; 0 <= x <= 4294967295 && (x & 1) != 0 ==> ((uint32_t)(x + 1) & 1) == 0; */

// the free chain's push (opool_abi.h), for a pool without a live list:
// outside the invariant, so only its frame is stated
/*@ requires \valid(c) && c->roster == \null && i < c->nslots && \valid(c->slot + i) && 0 < c->count;
    exits \false;
    assigns c->count, c->chain, c->slot[i].pos;
*/
static inline void opool__chain_release(opool__hot *c, uint32_t i);

// whether the pool keeps a live list (src/opool.c): every pool the
// invariant describes does
/*@ requires \valid_read(p);
    exits \false;
    assigns \nothing;
    ensures \result <==> p->hot.roster != \null;
*/
static inline bool opool__listed(const opool *p);

// the chain's other steps (src/opool.c), for a pool without a live list:
// called only where opool__listed is false, outside the invariant; their
// bodies walk the chain (not proven: docs/PROOF.md)
/*@ requires \valid(h) && h->roster == \null;
    exits \false;
    assigns h->chain, h->slot[0 .. h->nslots - 1].pos;
*/
static inline void opool__chain_cut(opool__hot *h, uint32_t i); // assumed

/*@ requires \valid(h) && h->roster == \null;
    exits \false;
    assigns h->chain, h->limit, h->slot[0 .. h->nslots - 1].pos;
*/
static void opool__chain_enrol(opool__hot *h, uint32_t lo, uint32_t hi); // assumed

// the release's two writes (opool__unlink_as, opool_abi.h: the inline free's
// too, with the bits a typed pool with fixed flags passes; none of them may
// say "no live list", which a pool the invariant describes keeps): live slot i leaves the live
// prefix with its next generation g (even), and the pool whose hot fields
// these are keeps each part of its invariant (pool_ok is their conjunction;
// stated whole, one goal would redo them all). Proven in the lemmas' run:
// geometry_ok kept needs geometry_frame in context.
/*@ requires (known & OPOOL__KNOWN_UNLISTED) == 0;
    requires \valid(c) && roster_ok(c) && i < c->nslots && (c->slot[i].gen & 1) != 0 && (g & 1) == 0;
    requires c->slot[i].pos < c->count && c->roster[c->slot[i].pos] == i;
    exits \false;
    assigns c->count, c->roster[c->slot[i].pos], c->roster[c->count - 1], c->slot[c->roster[c->count - 1]].pos,
            c->slot[i].pos, c->slot[i].gen, c->chain;
    ensures roster_ok(c) && c->count == \old(c->count) - 1;
    ensures c->slot[i].pos == c->count && c->roster[c->count] == i && c->slot[i].gen == g;
    ensures c->nslots == \old(c->nslots) && c->limit == \old(c->limit) && c->free_limit == \old(c->free_limit);
    ensures \forall integer j; 0 <= j < c->nslots && j != i ==> c->slot[j].gen == \old(c->slot[j].gen);
    OPOOL__KEEPS(\forall opool *q; &q->hot == c ==> \old(pool_ok(q)) ==>, q, c)
*/
static inline void opool__unlink_as(opool__hot *c, uint32_t i, uint32_t g, unsigned known); // wp: lemmas

// the same for a call that knows nothing (src/opool.c's)
/*@ requires \valid(c) && roster_ok(c) && i < c->nslots && (c->slot[i].gen & 1) != 0 && (g & 1) == 0;
    requires c->slot[i].pos < c->count && c->roster[c->slot[i].pos] == i;
    exits \false;
    assigns c->count, c->roster[c->slot[i].pos], c->roster[c->count - 1], c->slot[c->roster[c->count - 1]].pos,
            c->slot[i].pos, c->slot[i].gen, c->chain;
    ensures roster_ok(c) && c->count == \old(c->count) - 1;
    ensures c->slot[i].pos == c->count && c->roster[c->count] == i && c->slot[i].gen == g;
    ensures c->nslots == \old(c->nslots) && c->limit == \old(c->limit) && c->free_limit == \old(c->free_limit);
    ensures \forall integer j; 0 <= j < c->nslots && j != i ==> c->slot[j].gen == \old(c->slot[j].gen);
    OPOOL__KEEPS(\forall opool *q; &q->hot == c ==> \old(pool_ok(q)) ==>, q, c)
*/
static inline void opool__unlink(opool__hot *c, uint32_t i, uint32_t g); // wp: lemmas

// it writes the free's fields, the slot and roster arrays, the exhaustion
// episode's count and slot i's object, nothing else
/*@ requires pool_ok(p) && i < p->hot.nslots && (p->hot.slot[i].gen & 1) != 0;
    requires hooks_local(p);
    assigns OPOOL__FREE_WRITES(p, i);
    ensures pool_ok(p);
    ensures roster_ok(&p->hot);
    ensures p->hot.free_limit <= p->hot.nslots;
    OPOOL__FREED(p, i)
*/
void opool__release(opool *p, uint32_t i);

/* ==== the inline lookup (opool_abi.h) =====================================
 * opool_get and opool_valid read the pool through its hot fields: a cast of
 * the pool to opool__hot, its first member (offset 0: a _Static_assert of
 * src/opool_internal.h). WP follows the cast with its Typed+cast model
 * (proof/run.sh: a run of its own), so these contracts read the hot fields
 * through that cast, and hot_lookup_ok is the part of pool_ok they need:
 * the slot array and chunk geometry, and every live slot's object
 * (object_of, as objects_ok states it) stride valid bytes, not NULL. */

/*@ predicate hot_lookup_ok(opool__hot *c) =
      \valid_read(c) && hot_geometry(c) && \valid_read(c->slot + (0 .. c->nslots - 1)) &&
      \forall integer i; 0 <= i < c->nslots && (c->slot[i].gen & 1) != 0 ==>
        object_of(c, c->first, c->shift, c->stride, i) != \null &&
        \valid(object_of(c, c->first, c->shift, c->stride, i) + (0 .. c->stride - 1));

    predicate live_in(opool__hot *c, opool_handle h) =
      ((uint32_t)(h.bits >> 32) & 1) != 0 && (uint32_t)h.bits < c->nslots &&
      c->slot[(uint32_t)h.bits].gen == (uint32_t)(h.bits >> 32);
*/

/* The lemmas that pool_ok gives the lookup's precondition, compiled in only
 * for the lemmas' own run (proof/run.sh defines OPOOL_PROOF_LEMMAS): in the
 * context of every function's goals they slow cvc4 down (the hardest goal,
 * roster_ok kept by release, by a quarter). */
#ifdef OPOOL_PROOF_LEMMAS
/*@
    // the lookup needs no more than the pool invariant gives (in two
    // steps, then as a whole)
    lemma pool_lookup_arrays: \forall opool *p; pool_ok(p) ==>
      \valid_read(&p->hot) && hot_geometry(&p->hot) && \valid_read(p->hot.slot + (0 .. p->hot.nslots - 1));
    lemma pool_live_in_roster: \forall opool *p; pool_ok(p) ==>
      \forall integer i; 0 <= i < p->hot.nslots && (p->hot.slot[i].gen & 1) != 0 ==>
        p->hot.slot[i].pos < p->hot.limit;
    lemma pool_lookup: \forall opool *p; pool_ok(p) ==> hot_lookup_ok(&p->hot);
*/
#endif

/*@ requires p == \null || hot_lookup_ok((opool__hot *)p);
    // a call that knows the pool never grows: chunk 0 holds every slot
    requires p == \null || (known & OPOOL__KNOWN_FIXED) == 0 ||
             ((opool__hot *)p)->first == ((opool__hot *)p)->nslots;
    assigns \nothing;
    behavior null:
      assumes p == \null;
      ensures \result == \null;
    behavior live:
      assumes p != \null && live_in((opool__hot *)p, h);
      ensures \result != \null;
      ensures \valid((char *)\result + (0 .. ((opool__hot *)p)->stride - 1));
      ensures \result == slot_object((opool__hot *)p, (uint32_t)h.bits);
    behavior not_live:
      assumes p != \null && !live_in((opool__hot *)p, h);
      ensures \result == \null;
    complete behaviors;
    disjoint behaviors; */
static inline void *opool__get_as(const opool *p, opool_handle h, unsigned known); // wp: cast

// the same for a call that knows nothing
/*@ requires p == \null || hot_lookup_ok((opool__hot *)p);
    assigns \nothing;
    behavior null:
      assumes p == \null;
      ensures \result == \null;
    behavior live:
      assumes p != \null && live_in((opool__hot *)p, h);
      ensures \result != \null;
      ensures \valid((char *)\result + (0 .. ((opool__hot *)p)->stride - 1));
      ensures \result == slot_object((opool__hot *)p, (uint32_t)h.bits);
    behavior not_live:
      assumes p != \null && !live_in((opool__hot *)p, h);
      ensures \result == \null;
    complete behaviors;
    disjoint behaviors; */
static inline void *opool__get_inline(const opool *p, opool_handle h); // wp: cast

/*@ requires p == \null || hot_lookup_ok((opool__hot *)p);
    assigns \nothing;
    ensures \result <==> (p != \null && live_in((opool__hot *)p, h)); */
static inline bool opool__valid_inline(const opool *p, opool_handle h); // wp: cast

/* ==== taking a free slot (src/opool.c) ===================================
 * opool_alloc_at grows as needed (opool__reach), then claims the slot
 * (opool__claim): from a pool that pool_ok describes, a free slot with
 * storage becomes live at the generation asked for, one object more, the
 * roster still a roster, every other slot's generation as it was, and the
 * object returned is stride valid bytes. A live or retired slot
 * is refused and nothing is written. Two things make the claim provable:
 * the object's address is taken before any write, and its facts reach
 * opool__prepare as facts about that address (validity does not change
 * with the pool's memory); and the roster's swap says that it keeps every
 * generation, which its assigns clause leaves the provers to derive from
 * address arithmetic. The caller states what pool_ok says of slot i's
 * object (slot_object_ok), in the one state where pool_ok holds whole. The
 * claim's writes are a step (opool__link), and so are its writes to the
 * pool in opool__prepare (opool__count_alloc), each proven to keep every
 * part of pool_ok; prepare requires pool_ok whole (put together after the
 * link), and the claim ensures it. */


// a report (the user's hook or the default printer): under hooks_local, it
// writes none of the pool's memory (docs/PROOF.md, Assumptions)
/*@ requires \valid(p) && hooks_local(p);
    assigns \nothing;
    allocates \nothing; */
void opool__report(opool *p, opool_status what, opool_handle h); // assumed

// opool_track.c: checks the freed object's pattern, reads only (assumed)
/*@ requires \valid((char *)obj + (0 .. size - 1));
    assigns \nothing; */
bool opool__track_on_reuse(void *obj, size_t size, size_t keep, size_t live, bool poison); // assumed

// the claim's writes to the pool after the roster's (src/opool.c): the high
// water, the inline bounds and the count of allocs; every slot keeps its
// generation and pos, and the pool each part of its invariant
/*@ requires \valid(p) && roster_ok(&p->hot) && p->hot.free_limit <= p->hot.nslots;
    requires \separated(p, p->hot.slot + (0 .. p->hot.nslots - 1), p->hot.roster + (0 .. p->hot.limit - 1));
    exits \false;
    assigns p->hot.high_water, p->hot.fast_limit, p->hot.free_limit, p->hot.allocs;
    ensures roster_ok(&p->hot) && p->hot.free_limit <= p->hot.nslots;
    ensures \forall integer j; 0 <= j < p->hot.nslots ==> p->hot.slot[j].gen == \old(p->hot.slot[j].gen);
    ensures \forall integer j; 0 <= j < p->hot.nslots ==> p->hot.slot[j].pos == \old(p->hot.slot[j].pos);
    OPOOL__KEEPS(\old(pool_ok(p)) ==>, p, (&p->hot))
*/
static inline void opool__count_alloc(opool *p); // wp: lemmas

/*@ requires pool_ok(p) && i < p->hot.nslots && hooks_local(p);
    requires obj != \null && \valid((char *)obj + (0 .. p->hot.stride - 1));
    requires \separated((char *)obj + (0 .. p->hot.stride - 1),
                        p, p->hot.slot + (0 .. p->hot.nslots - 1), p->hot.roster + (0 .. p->hot.limit - 1));
    ensures \result == obj && \result != \null && \valid((char *)\result + (0 .. p->hot.stride - 1));
    ensures roster_ok(&p->hot) && p->hot.free_limit <= p->hot.nslots;
    ensures p->hot.count == \old(p->hot.count) && p->hot.nslots == \old(p->hot.nslots);
    ensures \forall integer j; 0 <= j < p->hot.nslots ==> p->hot.slot[j].gen == \old(p->hot.slot[j].gen);
    ensures \forall integer j; 0 <= j < p->hot.nslots ==> p->hot.slot[j].pos == \old(p->hot.slot[j].pos);
    OPOOL__KEEPS(, p, (&p->hot))
*/
static void *opool__prepare(opool *p, uint32_t i, void *obj, uint32_t prev_gen);

// the claim's writes (src/opool.c): free slot i in the roster joins the
// live prefix with odd generation g, and the pool keeps each part of its
// invariant. (It takes the pool, not its hot fields as the release's writes
// do: the claim puts pool_ok together after it, 19 s, where from the
// parts stated for every pool q with &q->hot == c it timed out at 300 s.)
/*@ requires \valid(p) && roster_ok(&p->hot) && i < p->hot.nslots && (g & 1) != 0;
    requires p->hot.count <= p->hot.slot[i].pos < p->hot.limit && p->hot.roster[p->hot.slot[i].pos] == i;
    exits \false;
    assigns p->hot.slot[i].gen, p->hot.roster[p->hot.slot[i].pos], p->hot.roster[p->hot.count], p->hot.slot[p->hot.roster[p->hot.count]].pos,
            p->hot.slot[i].pos, p->hot.count;
    ensures roster_ok(&p->hot) && p->hot.count == \old(p->hot.count) + 1;
    ensures p->hot.slot[i].pos == \old(p->hot.count) && p->hot.slot[i].gen == g;
    ensures p->hot.nslots == \old(p->hot.nslots) && p->hot.limit == \old(p->hot.limit) && p->hot.free_limit == \old(p->hot.free_limit);
    ensures \forall integer j; 0 <= j < p->hot.nslots && j != i ==> p->hot.slot[j].gen == \old(p->hot.slot[j].gen);
    OPOOL__KEEPS(\old(pool_ok(p)) ==>, p, (&p->hot))
*/
static inline void opool__link(opool *p, uint32_t i, uint32_t g); // wp: lemmas

/*@ requires pool_ok(p);
    requires i < p->hot.nslots && p->hot.slot[i].pos != OPOOL__UNBACKED && (g & 1) != 0;
    requires hooks_local(p);
    requires p->hot.slot[i].pos < p->hot.limit ==> slot_object_ok(p, i);
    ensures pool_ok(p);
    behavior claimed:
      assumes p->hot.slot[i].pos != OPOOL__RETIRED && (p->hot.slot[i].gen & 1) == 0;
      ensures \result != \null && \valid((char *)\result + (0 .. p->hot.stride - 1));
      ensures p->hot.slot[i].gen == g && p->hot.slot[i].pos == \old(p->hot.count);
      ensures roster_ok(&p->hot) && p->hot.free_limit <= p->hot.nslots;
      ensures p->hot.count == \old(p->hot.count) + 1 && p->hot.nslots == \old(p->hot.nslots);
      ensures \forall integer j; 0 <= j < p->hot.nslots && j != i ==> p->hot.slot[j].gen == \old(p->hot.slot[j].gen);
    behavior refused:
      assumes p->hot.slot[i].pos == OPOOL__RETIRED || (p->hot.slot[i].gen & 1) != 0;
      assigns \nothing;
      ensures \result == \null;
    complete behaviors;
    disjoint behaviors;
*/
static void *opool__claim(opool *p, uint32_t i, uint32_t g);

/* ==== growth: the new slots (src/opool.c) ================================
 * opool__grow makes the slot arrays reach the chunk's end, asks for the
 * chunk's storage, then runs its steps: opool__range_freed (the new
 * objects poisoned: it writes their bytes alone), opool__born (the slots
 * past nslots come into being, without storage), opool__back_chunk (the
 * base's one write, which states the chunk's objects as enrol needs them),
 * opool__enrol (the chunk's slots without storage join the free stack) and
 * opool__count_grow. Each step is proven to keep every part of pool_ok,
 * given what the allocations provide (assumed, further down): arrays valid
 * and apart at their capacity (room_ok), the chunk's storage valid and
 * apart (chunk_room); and grow is proven to chain them. The loops'
 * invariants are the macros below (OPOOL__*_LOOP), which src/opool.c
 * names just before each loop when they are defined (here, and nowhere
 * else). */

/*@ // chunk c's index range [chunk_start, chunk_end) on a growing pool
    // (functions of values, as object_of: a write elsewhere leaves the same
    // term once the fields read the same)
    logic integer chunk_start(integer shift, integer c) = 1 << (shift + c - 1);
    logic integer chunk_end(integer shift, integer max_capacity, integer c) =
      (1 << (shift + c)) < max_capacity ? (1 << (shift + c)) : max_capacity;
    // its objects' bytes
    logic integer chunk_size(integer shift, integer max_capacity, integer stride, integer c) =
      offset(chunk_end(shift, max_capacity, c) - chunk_start(shift, c), 0, stride);

    // storage at b of size bytes: not NULL, valid and apart from the pool
    // and its arrays at their capacity (the addresses and lengths as
    // values, as object_ok states an object)
    predicate chunk_room(char *b, integer size, opool *p, opool__slot *slot, uint32_t *roster, integer cap) =
      b != \null && \valid(b + (0 .. size - 1)) &&
      \separated(b + (0 .. size - 1), p, slot + (0 .. cap - 1), roster + (0 .. cap - 1));
*/

// which chunk grows, and where its slots are (opool_internal.h,
// src/opool.c): chunk c >= 1 of a growing pool is [2^(shift + c - 1),
// min(2^(shift + c), max_capacity)); the lowest one without storage
/*@ requires 1 <= c && shift + c <= 32;
    exits \false;
    assigns \nothing;
    ensures \result == (1 << (shift + c - 1)); */
static inline uint64_t opool__span_lo(uint32_t shift, uint32_t c);

/*@ requires 1 <= c && shift + c <= 32;
    exits \false;
    assigns \nothing;
    ensures \result == ((1 << (shift + c)) < max_capacity ? (1 << (shift + c)) : max_capacity); */
static inline uint32_t opool__span_hi(uint32_t shift, uint32_t max_capacity, uint32_t c);

// (each states what the growth needs of the range as facts of its own: that
// the start and the count fit 32 bits lets WP's simplifier drop the
// growth's casts, docs/PROOF.md)
/*@ requires \valid_read(p) && room_ok(p) && 1 <= c < p->nchunks && p->hot.shift + c <= 32;
    exits \false;
    assigns \nothing;
    ensures \result == chunk_start(p->hot.shift, c);
    ensures p->hot.first <= \result < p->max_capacity && (uint32_t)\result == \result; */
uint64_t opool__chunk_lo(const opool *p, uint32_t c);

/*@ requires \valid_read(p) && room_ok(p) && 1 <= c < p->nchunks && p->hot.shift + c <= 32;
    requires offset(p->max_capacity, 0, p->hot.stride) <= 18446744073709551615; // (geometry_ok's)
    exits \false;
    assigns \nothing;
    ensures \result == chunk_end(p->hot.shift, p->max_capacity, c);
    ensures chunk_start(p->hot.shift, c) < \result <= p->max_capacity;
    ensures (uint32_t)(\result - chunk_start(p->hot.shift, c)) == \result - chunk_start(p->hot.shift, c);
    ensures chunk_size(p->hot.shift, p->max_capacity, p->hot.stride, c) <= offset(p->max_capacity, 0, p->hot.stride) <=
            18446744073709551615;
 */
uint32_t opool__chunk_hi(const opool *p, uint32_t c); // wp: lemmas

/*@ requires \valid_read(p) && c < OPOOL__MAX_CHUNKS;
    exits \false;
    assigns \nothing;
    ensures \result <==> (c == 0 || p->hot.base[c] != \null); */
bool opool__chunk_backed(const opool *p, uint32_t c);

// the search's loop: every chunk in [1, c) has storage
#define OPOOL__UNBACKED_LOOP                                                              \
    loop invariant ub_c: 1 <= c <= p->nchunks;                                            \
    loop invariant ub_backed: \forall integer k; 1 <= k < c ==> p->hot.base[k] != \null;  \
    loop assigns c;                                                                       \
    loop variant p->nchunks - c;

/*@ requires \valid_read(p) && 1 <= p->nchunks <= OPOOL__MAX_CHUNKS;
    exits \false;
    assigns \nothing;
    ensures 1 <= \result <= p->nchunks;
    ensures \forall integer k; 1 <= k < \result ==> p->hot.base[k] != \null;
    ensures \result < p->nchunks ==> p->hot.base[\result] == \null; */
static inline uint32_t opool__unbacked_chunk(const opool *p);

// the poisoning of n new slots' objects from first_obj (src/opool.c): it
// writes their bytes and nothing else (opool__track_on_free is assumed)
#define OPOOL__POISON_LOOP                                                                \
    loop invariant rf_k: 0 <= k <= n;                                                     \
    loop assigns k, first_obj[0 .. n * p->hot.stride - 1];                                \
    loop variant n - k;

/*@ requires \valid_read(p);
    requires rf_valid: \valid(first_obj + (0 .. offset(n, 0, p->hot.stride) - 1));
    requires rf_size: offset(n, 0, p->hot.stride) <= 18446744073709551615;
    exits \false;
    assigns first_obj[0 .. n * p->hot.stride - 1]; */
void opool__range_freed(opool *p, char *first_obj, uint32_t n);

// born's loop: slots [nslots, i) are new, without storage, at gen0
#define OPOOL__BORN_LOOP                                                                  \
    loop invariant born_i: h->nslots <= i <= hi;                                         \
    loop invariant born_roster: roster_ok(h);                                             \
    loop invariant born_new: \forall integer j; h->nslots <= j < i ==>                     \
      h->slot[j].gen == p->gen0 && h->slot[j].pos == OPOOL__UNBACKED;                    \
    loop assigns i, h->slot[h->nslots .. hi - 1];                                        \
    loop variant hi - i;

// enrol's loop: the roster and both facts of every slot hold; the slots
// ahead are as they were; a slot in the roster was in it, or is one of
// [lo, i) that had no storage
#define OPOOL__ENROL_LOOP                                                                 \
    loop invariant en_i: lo <= i <= hi;                                                   \
    loop invariant en_limit: \at(h->limit, LoopEntry) <= h->limit <= h->nslots;          \
    loop invariant en_roster: roster_ok(h);                                               \
    loop invariant en_fields: h->count == \at(h->count, LoopEntry) &&                     \
      h->nslots == \at(h->nslots, LoopEntry) && h->first == \at(h->first, LoopEntry) &&   \
      h->shift == \at(h->shift, LoopEntry) && h->free_limit == \at(h->free_limit, LoopEntry) && \
      p->max_capacity == \at(p->max_capacity, LoopEntry) && p->nchunks == \at(p->nchunks, LoopEntry) && \
      p->slot_cap == \at(p->slot_cap, LoopEntry) && p->gen0 == \at(p->gen0, LoopEntry); \
    loop invariant en_objects: objects_ok(p);                                             \
    loop invariant en_gen: \forall integer j; 0 <= j < h->nslots ==>                      \
      h->slot[j].gen == \at(h->slot[j].gen, LoopEntry);                                   \
    loop invariant en_placed: \forall integer j; 0 <= j < h->nslots ==> OPOOL__PLACED(h, j); \
    loop invariant en_live: \forall integer j; 0 <= j < h->nslots ==> OPOOL__LIVE_AT(h, j);  \
    loop invariant en_ahead: \forall integer j; i <= j < hi ==>                           \
      h->slot[j].pos == \at(h->slot[j].pos, LoopEntry);                                  \
    loop invariant en_joined: \forall integer j; 0 <= j < h->nslots && h->slot[j].pos < h->limit ==> \
      \at(h->slot[j].pos, LoopEntry) < \at(h->limit, LoopEntry) ||                       \
      (lo <= j < i && \at(h->slot[j].pos, LoopEntry) == OPOOL__UNBACKED);                \
    loop assigns i, h->limit, h->roster[\at(h->limit, LoopEntry) .. \at(h->nslots, LoopEntry) - 1], \
                 h->slot[lo .. hi - 1].pos;                                               \
    loop variant hi - i;

// slots [nslots, hi) come into being (hi above nslots, within the arrays'
// capacity), without storage, at the pool's first generation: the pool
// keeps each part of its invariant
/*@ requires pool_ok(p);
    requires p->hot.nslots < hi <= p->max_capacity && hi <= p->slot_cap;
    requires p->hot.shift < 32 && (1 << p->hot.shift) <= p->hot.first;
    exits \false;
    assigns p->hot.slot[p->hot.nslots .. hi - 1], p->hot.nslots;
    ensures p->hot.nslots == hi;
    ensures bo_fields: p->hot.first == \old(p->hot.first) && p->hot.shift == \old(p->hot.shift) &&
      p->max_capacity == \old(p->max_capacity) && p->nchunks == \old(p->nchunks) && p->slot_cap == \old(p->slot_cap);
    ensures \forall integer j; \old(p->hot.nslots) <= j < hi ==>
              p->hot.slot[j].gen == p->gen0 && p->hot.slot[j].pos == OPOOL__UNBACKED;
    ensures \forall integer j; 0 <= j < \old(p->hot.nslots) ==>
              p->hot.slot[j].gen == \old(p->hot.slot[j].gen) && p->hot.slot[j].pos == \old(p->hot.slot[j].pos);
    ensures roster_ok(&p->hot);
    OPOOL__KEEPS(, p, (&p->hot))
*/
static inline void opool__born(opool *p, uint32_t hi); // wp: lemmas

// enrol's write: slot i, outside the roster, takes the entry at limit, one
// more; every other slot and entry as it was, and each slot's two facts
// kept (i is free: an even generation)
/*@ requires \valid(p) && roster_ok(&p->hot) && p->hot.limit < p->hot.nslots <= OPOOL_MAX_CAPACITY && i < p->hot.nslots;
    requires p->hot.slot[i].pos == OPOOL__UNBACKED && (p->hot.slot[i].gen & 1) == 0;
    requires \valid(p->hot.roster + (0 .. p->hot.nslots - 1));
    requires \separated(p, p->hot.slot + (0 .. p->hot.nslots - 1), p->hot.roster + (0 .. p->hot.nslots - 1));
    exits \false;
    assigns p->hot.limit, p->hot.roster[p->hot.limit], p->hot.slot[i].pos;
    ensures roster_ok(&p->hot) && p->hot.limit == \old(p->hot.limit) + 1;
    ensures p->hot.slot[i].pos == \old(p->hot.limit) && p->hot.roster[\old(p->hot.limit)] == i;
    ensures \forall integer j; 0 <= j < p->hot.nslots && j != i ==> p->hot.slot[j].pos == \old(p->hot.slot[j].pos);
    ensures \forall integer j; 0 <= j < p->hot.nslots ==> p->hot.slot[j].gen == \old(p->hot.slot[j].gen);
    ensures \forall integer k; 0 <= k < \old(p->hot.limit) ==> p->hot.roster[k] == \old(p->hot.roster[k]);
    behavior slots:
      assumes slots_ok(&p->hot);
      ensures in_roster: \forall integer j; 0 <= j < p->hot.nslots ==> OPOOL__PLACED((&p->hot), j);
      ensures live: \forall integer j; 0 <= j < p->hot.nslots ==> OPOOL__LIVE_AT((&p->hot), j);
*/
static inline void opool__join(opool *p, uint32_t i);

// the slots of [lo, hi) without storage join the free stack: given that
// slot j's object is slot lo's and j's offset, within storage valid and
// apart (what opool__back_chunk ensures; a product under the quantifier
// is no pattern the provers can use, so the offsets' bounds are stated
// through offset), the pool keeps each part of its invariant, the count
// and every generation
/*@ requires pool_ok(p) && lo <= hi <= p->hot.nslots;
    requires \forall integer j; lo <= j < hi ==>
      object_of(&p->hot, p->hot.first, p->hot.shift, p->hot.stride, j) ==
        object_of(&p->hot, p->hot.first, p->hot.shift, p->hot.stride, lo) + offset(j, lo, p->hot.stride) &&
      0 <= offset(j, lo, p->hot.stride) && offset(j, lo, p->hot.stride) + p->hot.stride <= offset(hi, lo, p->hot.stride);
    requires chunk_room(object_of(&p->hot, p->hot.first, p->hot.shift, p->hot.stride, lo), offset(hi, lo, p->hot.stride),
                        p, p->hot.slot, p->hot.roster, p->slot_cap);
    exits \false;
    assigns p->hot.limit, p->hot.roster[p->hot.limit .. p->hot.nslots - 1], p->hot.slot[lo .. hi - 1].pos;
    ensures roster_ok(&p->hot) && \old(p->hot.limit) <= p->hot.limit;
    ensures p->hot.count == \old(p->hot.count) && p->hot.nslots == \old(p->hot.nslots);
    ensures \forall integer j; 0 <= j < p->hot.nslots ==> p->hot.slot[j].gen == \old(p->hot.slot[j].gen);
    OPOOL__KEEPS(, p, (&p->hot))
*/
static inline void opool__enrol(opool *p, uint32_t lo, uint32_t hi); // wp: lemmas

/* the growth's chunk: slot j's object is chunk c's storage and j's offset
 * into it (chunk_top, chunk_object, chunk_offset); an offset within
 * storage is an object (offset_in, object_in_room); a slot whose object
 * objects_ok states is in a chunk with storage (backed_object); a chunk's
 * bytes within the index limit's (chunk_bytes_le, offset_le); proven in the
 * lemmas' run */
#ifdef OPOOL_PROOF_LEMMAS
/*@ lemma chunk_top: \forall opool *p, integer c, j; 1 <= c && p->hot.shift < 32 &&
      chunk_start(p->hot.shift, c) <= j < chunk_end(p->hot.shift, p->max_capacity, c) ==> top(j) == p->hot.shift + c - 1;
    lemma chunk_object{L}: \forall opool *p, integer c, j; 1 <= c && p->hot.shift < 32 &&
      p->hot.first <= chunk_start(p->hot.shift, c) <= j < chunk_end(p->hot.shift, p->max_capacity, c) ==>
      object_of(&p->hot, p->hot.first, p->hot.shift, p->hot.stride, j) ==
        p->hot.base[c] + (j - chunk_start(p->hot.shift, c)) * p->hot.stride;
    lemma chunk_offset{L}: \forall opool *p, integer c, j; 1 <= c && p->hot.shift < 32 &&
      p->hot.first <= chunk_start(p->hot.shift, c) <= j < chunk_end(p->hot.shift, p->max_capacity, c) ==>
      object_of(&p->hot, p->hot.first, p->hot.shift, p->hot.stride, j) ==
        object_of(&p->hot, p->hot.first, p->hot.shift, p->hot.stride, chunk_start(p->hot.shift, c)) +
          offset(j, chunk_start(p->hot.shift, c), p->hot.stride);
    lemma object_in_room: \forall char *b, integer size, off, stride, opool *p, opool__slot *slot, uint32_t *roster, integer cap;
      chunk_room(b, size, p, slot, roster, cap) && 0 <= off && 0 <= stride && off + stride <= size ==>
      object_ok(b + off, stride, p, slot, cap, roster, cap);
    lemma chunk_bytes_le: \forall integer shift, max, s, c; 1 <= c && 0 <= shift && shift + c <= 32 && 0 <= s &&
      0 <= chunk_start(shift, c) < chunk_end(shift, max, c) <= max ==> chunk_size(shift, max, s, c) <= offset(max, 0, s);
    lemma offset_pos: \forall integer j, lo, s; lo <= j && 0 <= s ==> 0 <= offset(j, lo, s);
    lemma offset_in: \forall integer j, lo, hi, s; lo <= j < hi && 0 <= s ==> offset(j, lo, s) + s <= offset(hi, lo, s);
    lemma offset_le: \forall integer j, lo, m, s; 0 <= lo <= j <= m && 0 <= s ==> offset(j, lo, s) <= offset(m, 0, s);
    lemma backed_object{L}: \forall opool *p, integer i; p->hot.first <= i &&
      object_ok(object_of(&p->hot, p->hot.first, p->hot.shift, p->hot.stride, i), p->hot.stride,
                p, p->hot.slot, p->slot_cap, p->hot.roster, p->slot_cap) ==>
      p->hot.base[top(i) - p->hot.shift + 1] != \null;
*/
#endif

/* ---- the growth's allocations, and the growth itself --------------------
 * Assumed (docs/PROOF.md, Assumptions): the allocator returns NULL or a new
 * block, apart from every block the pool holds, and writes none of the
 * pool's memory. So the arrays' growth keeps the pool as it was, every
 * entry copied to the new arrays; and chunk c's storage is valid for its
 * slots and apart from the pool and its arrays. */

/*@ requires pool_ok(p) && n <= p->max_capacity;
    exits \false;
    assigns p->hot.slot, p->hot.roster, p->slot_cap, p->arrays_owned;
    ensures pool_ok(p);
    ensures \result ==> n <= p->slot_cap;
    ensures \forall integer j; 0 <= j < p->hot.nslots ==>
              p->hot.slot[j].gen == \old(p->hot.slot[j].gen) && p->hot.slot[j].pos == \old(p->hot.slot[j].pos);
    ensures \forall integer k; 0 <= k < p->hot.limit ==> p->hot.roster[k] == \old(p->hot.roster[k]);
*/
bool opool__reserve_slots(opool *p, uint32_t n); // assumed

// a chunk's slot count times the stride, as the code computes it (64-bit
// operands), is its bytes when they fit: what opool__chunk_bytes needs (a
// product of a cast the provers do not match with offset's); proven in the
// lemmas' run
#ifdef OPOOL_PROOF_LEMMAS
/*@ lemma bytes_exact: \forall integer n, s; 0 <= n <= 4294967295 && 0 <= s <= 18446744073709551615 &&
      offset(n, 0, s) <= 18446744073709551615 ==> (uint64_t)((uint64_t)n * s) == offset(n, 0, s);
*/
#endif

// chunk c's bytes (src/opool.c): its index range times the stride, the
// size the growth asks its allocator for
/*@ requires \valid_read(p) && room_ok(p) && 1 <= c < p->nchunks && p->hot.shift + c <= 32;
    requires offset(p->max_capacity, 0, p->hot.stride) <= 18446744073709551615; // (geometry_ok's)
    exits \false;
    assigns \nothing;
    ensures \result == chunk_size(p->hot.shift, p->max_capacity, p->hot.stride, c); */
size_t opool__chunk_bytes(const opool *p, uint32_t c); // wp: lemmas

/*@ requires \valid_read(d);
    exits \false;
    assigns \nothing; */
static inline size_t opool__object_align(const opool_desc *d);

// the allocator as opool.h promises it (opool_allocator): NULL, or size
// valid bytes; chunk_storage's call through p->mem.alloc is taken as a call
// of this (OPOOL__ALLOC_CALL)
/*@ exits \false;
    assigns \nothing;
    ensures \result == \null || \valid((char *)\result + (0 .. size - 1)); */
void *opool__any_alloc(void *ctx, size_t size, size_t align); // assumed

#define OPOOL__ALLOC_CALL calls opool__any_alloc;

// chunk c's storage: NULL, or chunk_size bytes valid (cs_size, proven from
// the allocator's contract: the size asked for is the chunk's) and apart
// from the pool and its arrays (the allocator returns a new block, which
// WP 25 cannot state: \fresh is not implemented). cs_size is a check:
// proven, not given to callers; callers get cs_room, admitted, which is
// cs_size and that separation (docs/PROOF.md, Assumptions). (With cs_size
// and the separation as two clauses for callers, one of grow's goals
// timed out at 240 s where it takes seconds with chunk_room whole.)
/*@ requires \valid_read(p) && room_ok(p) && 1 <= c < p->nchunks && p->hot.shift + c <= 32;
    requires offset(p->max_capacity, 0, p->hot.stride) <= 18446744073709551615; // (geometry_ok's)
    // the pool's allocator is one that keeps opool.h's promise
    admit requires p->mem.alloc == &opool__any_alloc;
    // an id-only pool's token (opool__build sets it inside the pool's block)
    admit requires p->hot.stride == 0 ==> p->hot.base[0] != \null;
    exits \false;
    assigns \nothing;
    check ensures cs_size: \result == \null ||
      (\result != \null && \valid(\result + (0 .. chunk_size(p->hot.shift, p->max_capacity, p->hot.stride, c) - 1)));
    admit ensures cs_room: \result == \null ||
      chunk_room(\result, chunk_size(p->hot.shift, p->max_capacity, p->hot.stride, c), p, p->hot.slot, p->hot.roster, p->slot_cap); */
char *opool__chunk_storage(const opool *p, uint32_t c);

// the growth's write to the bases: chunk c, without storage, takes mem,
// and the pool keeps each part of its invariant
/*@ requires pool_ok(p) && 1 <= c < p->nchunks && p->hot.base[c] == \null;
    requires chunk_room(mem, chunk_size(p->hot.shift, p->max_capacity, p->hot.stride, c), p, p->hot.slot, p->hot.roster, p->slot_cap);
    exits \false;
    assigns p->hot.base[c];
    ensures p->hot.base[c] == mem;
    // its slots' objects, as opool__enrol requires them
    ensures bk_objects: \let lo = chunk_start(p->hot.shift, c); \let hi = chunk_end(p->hot.shift, p->max_capacity, c);
      \forall integer j; lo <= j < hi ==>
        object_of(&p->hot, p->hot.first, p->hot.shift, p->hot.stride, j) ==
          object_of(&p->hot, p->hot.first, p->hot.shift, p->hot.stride, lo) + offset(j, lo, p->hot.stride) &&
        0 <= offset(j, lo, p->hot.stride) && offset(j, lo, p->hot.stride) + p->hot.stride <= offset(hi, lo, p->hot.stride);
    ensures bk_room: \let lo = chunk_start(p->hot.shift, c); \let hi = chunk_end(p->hot.shift, p->max_capacity, c);
      chunk_room(object_of(&p->hot, p->hot.first, p->hot.shift, p->hot.stride, lo), offset(hi, lo, p->hot.stride),
                 p, p->hot.slot, p->hot.roster, p->slot_cap);
    OPOOL__KEEPS(, p, (&p->hot)) */
static inline void opool__back_chunk(opool *p, uint32_t c, char *mem); // wp: lemmas

// the growth's count (src/opool.c): a statistic, which the invariant
// does not read
/*@ requires pool_ok(p);
    exits \false;
    assigns p->grows;
    ensures pool_ok(p); */
static inline void opool__count_grow(opool *p); // wp: lemmas

// the growth keeps the invariant and the index limit (proven: it chains
// the steps above)
/*@ requires pool_ok(p);
    exits \false;
    ensures pool_ok(p) && p->max_capacity == \old(p->max_capacity);
*/
bool opool__grow(opool *p); // wp: lemmas

// reach's loop: the invariant and the index limit. (The loop calls grow,
// which may write anything: so it has no assigns clause, and WP then lets
// the loop change its locals too; re_same says they stay.)
#define OPOOL__REACH_LOOP                                                                 \
    loop invariant re_same: p == \at(p, LoopEntry) && i == \at(i, LoopEntry) && h == &p->hot; \
    loop invariant re_ok: pool_ok(p) && p->max_capacity == \at(p->max_capacity, LoopEntry);

// grow until index i has storage: the invariant kept, and true means
// index i has storage
/*@ requires pool_ok(p) && i < p->max_capacity;
    ensures pool_ok(p) && p->max_capacity == \old(p->max_capacity);
    ensures \result ==> i < p->hot.nslots && p->hot.slot[i].pos != OPOOL__UNBACKED;
*/
static bool opool__reach(opool *p, uint32_t i);

/*@ requires p == \null || pool_ok(p);
    requires p == \null || hooks_local(p);
    ensures p == \null || pool_ok(p);
    behavior rejected:
      assumes p == \null || ((uint32_t)(want.bits >> 32) & 1) == 0 || (uint32_t)want.bits >= p->max_capacity;
      assigns \nothing;
      ensures \result == \null;
    behavior in_range:
      assumes p != \null && ((uint32_t)(want.bits >> 32) & 1) != 0 && (uint32_t)want.bits < p->max_capacity;
      ensures \result == \null ||
              (\valid((char *)\result + (0 .. p->hot.stride - 1)) &&
               live_in(&p->hot, want) && roster_ok(&p->hot));
    complete behaviors;
    disjoint behaviors;
*/
static void *opool__alloc_at(opool *p, opool_handle want);

/* ==== the out-of-line free (src/opool.c): every handle ====================
 * opool_free's path for every handle the inline one does not take: a live
 * handle is freed as above; any other of the 2^64 values, a NULL pool
 * included, is rejected with the status the header promises, and the pool
 * keeps every slot (only the count of rejections moves). */

/*@ requires p == \null || pool_ok(p);
    requires p == \null || hooks_local(p);
    ensures p == \null || pool_ok(p);
    // every behavior's writes together: what a caller that does not know
    // which applies may assume (opool_free below)
    assigns OPOOL__FREE_WRITES(p, (uint32_t)h.bits), p->rejected;
    behavior null:
      assumes p == \null;
      assigns \nothing;
      ensures \result == OPOOL_EINVAL;
    behavior live:
      assumes p != \null && live_in(&p->hot, h);
      assigns OPOOL__FREE_WRITES(p, (uint32_t)h.bits);
      ensures \result == OPOOL_OK;
      ensures roster_ok(&p->hot) && p->hot.free_limit <= p->hot.nslots;
      OPOOL__FREED(p, (uint32_t)h.bits)
    behavior not_live:
      assumes p != \null && !live_in(&p->hot, h);
      assigns p->rejected;
      ensures \result == OPOOL_EINVAL || \result == OPOOL_ESTALE;
      // (what the assigns clause says, for a caller given all behaviors' writes)
      ensures sl_kept: p->hot.count == \old(p->hot.count) &&
              \forall integer j; 0 <= j < p->hot.nslots ==> p->hot.slot[j].gen == \old(p->hot.slot[j].gen);
    complete behaviors;
    disjoint behaviors; */
opool_status opool__free_slow(opool *p, opool_handle h); // wp: lemmas

/* ==== the inline free (opool_abi.h): every handle ========================
 * opool_free itself: a live handle of an index below free_limit (the bound
 * the pool keeps at 0 while anything needs the slow path) is freed in line,
 * the roster's release and the next generation; every other handle, and a
 * NULL pool, goes to the out-of-line path above. So the promise is the
 * out-of-line one, for every handle: a live handle freed (OPOOL_OK, the
 * next generation, one object fewer, every other generation kept); any
 * other rejected with the status the header gives, the count and every
 * generation kept. The writes are stated once for all handles, since WP
 * gives the out-of-line call the writes of all its behaviors together. It
 * reads the pool through its hot fields (the cast of the lookup: WP's
 * Typed+cast model). */

/*@ requires p == \null || pool_ok(p);
    requires p == \null || hooks_local(p);
    // what either path may write, whatever the handle
    assigns OPOOL__FREE_WRITES(p, (uint32_t)h.bits), p->rejected;
    behavior null:
      assumes p == \null;
      ensures \result == OPOOL_EINVAL;
    behavior live:
      assumes p != \null && live_in(&p->hot, h);
      ensures \result == OPOOL_OK;
      // (pool_ok, which the out-of-line path ensures, is not proven after
      // the inline one: docs/PROOF.md, Not proven yet)
      ensures p->hot.free_limit <= p->hot.nslots;
      OPOOL__FREED(p, (uint32_t)h.bits)
    behavior not_live:
      assumes p != \null && !live_in(&p->hot, h);
      ensures \result == OPOOL_EINVAL || \result == OPOOL_ESTALE;
      ensures fi_kept: p->hot.count == \old(p->hot.count) &&
              \forall integer j; 0 <= j < p->hot.nslots ==> p->hot.slot[j].gen == \old(p->hot.slot[j].gen);
    complete behaviors;
    disjoint behaviors; */
static inline opool_status opool__free_inline(opool *p, opool_handle h); // wp: cast

/* The same free as a typed pool with its flags fixed and a live list
 * compiles it (OPOOL_TYPED_FIXED(.., 0), opl::pool<T, OPOOL_FIXED>): the
 * one body, opool__free_as, with the constant those flags give. The proof
 * writes opool__free_as out at both calls (proof/run.sh), so each is proven
 * with its own bits: a contract for every value of the bits is a goal the
 * provers do not close through the cast (docs/PROOF.md). */
/*@ requires p == \null || pool_ok(p);
    requires p == \null || hooks_local(p);
    // what either path may write, whatever the handle
    assigns OPOOL__FREE_WRITES(p, (uint32_t)h.bits), p->rejected;
    behavior null:
      assumes p == \null;
      ensures \result == OPOOL_EINVAL;
    behavior live:
      assumes p != \null && live_in(&p->hot, h);
      ensures \result == OPOOL_OK;
      // (pool_ok, which the out-of-line path ensures, is not proven after
      // the inline one: docs/PROOF.md, Not proven yet)
      ensures p->hot.free_limit <= p->hot.nslots;
      OPOOL__FREED(p, (uint32_t)h.bits)
    behavior not_live:
      assumes p != \null && !live_in(&p->hot, h);
      ensures \result == OPOOL_EINVAL || \result == OPOOL_ESTALE;
      ensures fi_kept: p->hot.count == \old(p->hot.count) &&
              \forall integer j; 0 <= j < p->hot.nslots ==> p->hot.slot[j].gen == \old(p->hot.slot[j].gen);
    complete behaviors;
    disjoint behaviors; */
opool_status opool__proof_free_fixed(opool *p, opool_handle h); // wp: cast

/* the definitions, in this translation unit: the contracts above attach to
 * the static inline functions of the same one */
// clang-format on
#include "opool.c"

opool_status opool__proof_free_fixed(opool *p, opool_handle h) {
    return opool__free_as(p, h, OPOOL__KNOWN_OF(0));
}
