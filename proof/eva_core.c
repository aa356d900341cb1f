/*
 * eva_core.c -- the EVA harness of the core pool (proof/run.sh: make proof,
 * the eva stage of make test). Pools of several shapes are built and taken
 * through allocs, frees, growth and shrink; then every function that takes a
 * handle or an index is called with an arbitrary value
 * (any of the 2^64 handles, 2^32 indices, any compact handle), and every
 * object it returns is written in full; the two that take an object's
 * address (opool_handle_of, opool_free_object) with a pointer to every byte
 * of every object and to other memory. EVA must report no alarm: no value
 * makes these functions read or write outside the pool's memory, nor
 * overflow, nor read an uninitialized field. The harness's assertions on
 * what the calls return must hold too (proof/run.sh fails otherwise).
 *
 * The callbacks are the harness's own (init and fini write their object,
 * report does nothing, keep keeps an arbitrary choice of objects); a user's callback
 * is outside this proof (docs/PROOF.md).
 */
#include "opool_internal.h" /* the chunks of a pool, to point into them */
#include "eva_support.h"

#include "__fc_builtin.h"
#include <stdlib.h>
#include <string.h>

typedef struct shape {
    size_t size, align;    /* object_size, object_align (0: default) */
    uint32_t cap, max_cap; /* capacity, max_capacity (0: fixed) */
    uint32_t flags;        /* OPOOL_ZERO, OPOOL_POISON, OPOOL_RETIRE_ON_WRAP */
    bool hooks;            /* init and fini set */
    bool in_buffer;        /* opool_create_in into a caller's buffer */
    size_t misalign;       /* the residue of every block's address (eva_support.c) */
    unsigned known;        /* what the calls of the inline paths know of the pool: OPOOL__KNOWN_*
                              bits, as a typed pool with fixed flags passes them (opool_abi.h) */
} shape;

/* The known bits of the pool being exercised: its inline alloc, free and
 * get are the ones a pool of that kind compiles. */
static unsigned known;

/* The indices of the arbitrary values: in one call of arbitrary_reads,
 * every index in [idx_lo, idx_hi], or with idx_step set, every index
 * idx_lo + idx_step * t up to idx_hi (a residue class). exercise covers
 * every index: each index below the pool's index limit on its own (a case
 * split: within one chunk, and for one index, the analysis knows the
 * object's address), then every index above at once. The generation is
 * always any of the 2^32. */
static uint32_t idx_lo, idx_hi, idx_step;

static uint32_t any_u32(void) {
    if (idx_step == 0) return Frama_C_unsigned_int_interval(idx_lo, idx_hi);
    return idx_lo + idx_step * Frama_C_unsigned_int_interval(0, (idx_hi - idx_lo) / idx_step);
}

/* any handle whose index is one of any_u32's, with every generation; a sum
 * rather than an or, which the analysis follows exactly. It holds the sum
 * as an interval with a residue; the cast that takes the index back keeps
 * the residue modulo a power of two (idx_step), but an interval of more
 * than one index it does not: every generation puts the handles in another
 * 2^32 window, so the index would be every 32-bit value again. */
static opool_handle any_handle(void) {
    opool_handle h;
    h.bits =
        (uint64_t)Frama_C_unsigned_int_interval(0, UINT32_MAX) * ((uint64_t)1 << 32) + any_u32();
    return h;
}

static size_t object_size; /* of the pool being exercised */

/* Write every byte of an object the pool handed out: EVA checks each. */
static void touch(void *obj) {
    if (obj != NULL && object_size != 0) memset(obj, 0x5a, object_size);
}

static void on_init(void *obj, void *user) {
    (void)user;
    touch(obj);
}

static void on_fini(void *obj, void *user) {
    (void)user;
    touch(obj);
}

static void on_report(opool *p, opool_status what, opool_handle h, void *user) {
    (void)p;
    (void)what;
    (void)h;
    (void)user;
}

/* retain's callback: on a fixed pool it keeps an arbitrary choice of
 * objects (every subset at once); on a growing pool, every other object it
 * is shown, alternately (2^count subsets of a growing pool's dozen objects
 * would be joined, losing which chunk holds which slot: docs/PROOF.md) */
static bool keep_every_other;
static unsigned keep_calls;
static bool keep_any(void *obj, opool_handle h, void *user) {
    (void)h;
    touch(obj);
    (void)user;
    if (keep_every_other) return keep_calls++ & 1;
    return Frama_C_interval(0, 1);
}

/* Set while the indices of the handles are any at all (the fixed pools'
 * writes); else idx_lo is the only one of them below nslots. */
static bool any_slot;
/* Set while slot idx_lo's generation is any odd one (after alloc_at with
 * every generation): the analysis relates no two reads of it then. */
static bool any_gen;

/* The functions that read the pool: those that take an index (when
 * READ_INDEX is set in what) each with an arbitrary index, and a compact
 * handle; those that take a handle (READ_HANDLE) with an arbitrary handle
 * (the indices of any_u32, any generation). Every object returned is
 * written in full. */
enum { READ_INDEX = 1, READ_HANDLE = 2, READ_ALL = 3 };

static void arbitrary_reads(const opool *p, int what) {
    if (what & READ_INDEX) {
        uint32_t i = any_u32();
        touch(opool_at(p, i));
        (void)opool_handle_at(p, i);
        (void)opool_live_handle(p, i);
        touch(opool_live_object(p, i));
        opool_handle32 x; /* every compact handle, whatever the index range */
        x.bits = Frama_C_unsigned_int_interval(0, UINT32_MAX);
        (void)opool_handle_expand(p, x);
    }
    if (!(what & READ_HANDLE)) return;
    opool_handle h = any_handle();
    void *obj = opool__get_as(p, h, known);
    touch(obj);
    (void)opool_valid(p, h);
    opool_handle32 c = opool_handle_compact(p, h);
    if (any_slot) return;
    /* idx_lo is the only index of a slot among those: the lookups find
     * its object, its compact handle, or nothing */
    void *own = opool_at(p, idx_lo);
    opool_handle32 own_c = opool_handle_compact(p, opool_handle_at(p, idx_lo));
    /*@ assert obj == \null || obj == own; */
    if (!any_gen) {
        /*@ assert c.bits == 0 || c.bits == own_c.bits; */
    }
}

/* ---- pointers: opool_handle_of, opool_free_object ---- */

/* Memory apart from the pool being exercised, each a block of its own: a
 * heap block and another pool (built in main), and a stack object (the
 * caller's). */
enum { FOREIGN_BYTES = 24, NOT_OBJECTS = 5 };
static char *heap_block;
static opool *other;

/* Part which (0 to NOT_OBJECTS - 1) of the pointers that are no object of
 * p: NULL; any byte of p's hot fields; any byte of a stack object, of a
 * heap block, of another pool's objects; each one past its end too. */
static const char *not_an_object(const opool *p, int which, const char *stack) {
    const opool__hot *o = &other->hot;
    switch (which) {
    case 0:
        return NULL;
    case 1:
        return (const char *)p + Frama_C_size_t_interval(0, sizeof(opool__hot));
    case 2:
        return stack + Frama_C_size_t_interval(0, FOREIGN_BYTES);
    case 3:
        return heap_block + Frama_C_size_t_interval(0, FOREIGN_BYTES);
    default:
        return o->base[0] + Frama_C_size_t_interval(0, (size_t)o->first * o->stride);
    }
}

/* The object of slot k, NULL if its chunk has no memory. */
static const char *object_of(const opool *p, uint32_t k) {
    const opool__hot *c = &p->hot;
    if (k >= c->first && !opool__chunk_backed(p, opool__chunk_of(c, k))) return NULL;
    return (const char *)opool__object(c, k);
}

/* Whether slot k + 1 is in the same chunk as slot k (both below nslots). */
static bool next_in_chunk(const opool *p, uint32_t k) {
    const opool__hot *c = &p->hot;
    if (k + 1 >= c->nslots) return false;
    if (k < c->first) return k + 1 < c->first;
    return opool__chunk_of(c, k) == opool__chunk_of(c, k + 1);
}

/* opool_handle_of with the pointer at (every value at once); it must
 * return want (0: OPOOL_NULL). */
static void handle_of_is(const opool *p, const char *at, uint64_t want) {
    opool_handle h = opool_handle_of(p, at);
    /*@ assert h.bits == want; */
}

/* opool_handle_of with a pointer to every byte of every object of p and
 * one past it: at its first byte the slot's handle when it is live, else
 * none (an id-only pool's token names none); then every pointer that is no
 * object of p: none. */
static void pointer_reads(const opool *p) {
    const opool__hot *c = &p->hot;
    size_t stride = c->stride;
    /*@ loop unroll 65; */
    for (uint32_t k = 0; k < c->nslots; k++) {
        const char *obj = object_of(p, k);
        if (obj == NULL) continue;
        handle_of_is(p, obj, stride ? opool_handle_at(p, k).bits : 0);
        if (stride > 1) handle_of_is(p, obj + Frama_C_size_t_interval(1, stride - 1), 0);
        /* one past: the next object's first byte, or the chunk's end */
        uint64_t next = stride && next_in_chunk(p, k) ? opool_handle_at(p, k + 1).bits : 0;
        handle_of_is(p, obj + stride, next);
    }
    char stack[FOREIGN_BYTES];
    /*@ loop unroll NOT_OBJECTS; */
    for (int which = 0; which < NOT_OBJECTS; which++)
        handle_of_is(p, not_an_object(p, which, stack), 0);
}

/* opool_free_object with every pointer that is no object of p, with an
 * interior byte of slot k's object, and one past it if it is its chunk's
 * last: each rejected, the pool unchanged but for its count of
 * rejections. */
static void rejected_frees(opool *p, uint32_t k) {
    char stack[FOREIGN_BYTES];
    /*@ loop unroll NOT_OBJECTS; */
    for (int which = 0; which < NOT_OBJECTS; which++) {
        opool_status s = opool_free_object(p, (void *)not_an_object(p, which, stack));
        /*@ assert s == OPOOL_EINVAL; */
    }
    const opool__hot *c = &p->hot;
    const char *obj = object_of(p, k);
    if (obj == NULL) return;
    if (c->stride > 1) {
        opool_status s =
            opool_free_object(p, (void *)(obj + Frama_C_size_t_interval(1, c->stride - 1)));
        /*@ assert s == OPOOL_EINVAL; */
    }
    if (!next_in_chunk(p, k)) { /* one past the chunk's last object */
        opool_status s = opool_free_object(p, (void *)(obj + c->stride));
        /*@ assert s == OPOOL_EINVAL; */
    }
}

/* The functions that change the pool, each with an arbitrary handle (and
 * opool_free_object with every pointer); then the reads again, on every
 * state that can result. */
static void arbitrary_writes(opool *p) {
    (void)opool__free_as(p, any_handle(), known);
    /* opool_free_object with the first byte of every object, each slot a
     * state of its own until the call returns; then the rejected pointers,
     * the last object's interior and its end among them */
    uint32_t first = opool_capacity(p), k = Frama_C_unsigned_int_interval(0, first - 1);
    /*@ split k; */
    (void)opool_free_object(p, (void *)object_of(p, k));
    /*@ merge k; */
    rejected_frees(p, first - 1);
    touch(opool_alloc_at(p, any_handle()));
    (void)opool_retain(p, keep_any, p);
    arbitrary_reads(p, READ_ALL);
}

/* Every handle of index k, in three parts that the analysis keeps apart
 * (the outcome of a call is then the same for every handle of a part): the
 * live handle of slot k, the generations below it and those above. */
static opool_handle handle_of_index(const opool *p, uint32_t k, int part) {
    uint32_t live = (uint32_t)(opool_handle_at(p, k).bits >> 32); /* 0: not live */
    uint32_t g = live;
    if (part == 1) g = live ? Frama_C_unsigned_int_interval(0, live - 1) : 0;
    if (part == 2 && live < UINT32_MAX) g = Frama_C_unsigned_int_interval(live + 1, UINT32_MAX);
    opool_handle h;
    h.bits = (uint64_t)g * ((uint64_t)1 << 32) + k;
    return h;
}

/* The writes of a growing pool with index k: free with every handle of
 * index k; retain keeping every other object; alloc_at with every handle of
 * index k, odd and even generations apart; then the reads with index k.
 * Each part is a state of its own: joined, the analysis would lose which
 * chunk has memory for which slot (docs/PROOF.md). The pool is left as it
 * is: after alloc_at with any generation, the analysis cannot relate the
 * slot's generation to a copy of it, which destroy's fini check compares. */
static void writes_of_index(opool *p, uint32_t k) {
    int part = Frama_C_interval(0, 3);
    /*@ split part; */
    if (part == 3) {
        /* slot k's object by its address: freed when live, as by part 0's
         * live handle (the same release follows), so this state ends here */
        bool live = opool_at(p, k) != NULL;
        opool_status s = opool_free_object(p, (void *)object_of(p, k));
        /*@ assert s == (live ? OPOOL_OK : OPOOL_EINVAL); */
        return;
    }
    (void)opool_free(p, handle_of_index(p, k, part));
    if (part == 1) rejected_frees(p, k);
    keep_every_other = true;
    keep_calls = 0;
    (void)opool_retain(p, keep_any, p);
    keep_every_other = false;
    int odd = Frama_C_interval(0, 1);
    /*@ split odd; */
    opool_handle w;
    w.bits = ((uint64_t)Frama_C_unsigned_int_interval(0, UINT32_MAX / 2) * 2 + (uint64_t)odd) *
                 ((uint64_t)1 << 32) +
             k;
    touch(opool_alloc_at(p, w));
    idx_lo = idx_hi = k;
    any_gen = true;
    arbitrary_reads(p, READ_ALL);
    any_gen = false;
}

/* A pool of shape s taken through a history: filled (growing when it may),
 * every third and the second half freed, shrunk, two more objects. NULL if
 * it cannot be built. */
static opool *build(const shape *s) {
    opool_desc d;
    memset(&d, 0, sizeof d);
    d.object_size = s->size;
    d.object_align = s->align;
    d.capacity = s->cap;
    d.max_capacity = s->max_cap;
    d.on_full = s->max_cap ? OPOOL_FULL_GROW : OPOOL_FULL_FAIL;
    d.flags = s->flags | OPOOL_SHARE_SALT; /* the shapes' pools live at once, one salt */
    d.report = on_report;
    d.salt = 6;
    if (s->hooks) {
        d.init = on_init;
        d.fini = on_fini;
    }
    object_size = s->size;
    opool_proof_misalign = s->misalign;

    opool *p = NULL;
    if (s->in_buffer) {
        size_t need = opool_required_bytes(&d);
        void *buf = malloc(need);
        if (buf == NULL) return NULL;
        opool_proof_block(buf);
        if (opool_create_in(&p, buf, need, &d) != OPOOL_OK) return NULL;
    } else if (opool_create(&p, &d) != OPOOL_OK) {
        return NULL;
    }

    enum { N = 20 };
    opool_handle hs[N];
    uint32_t n = 0;
    /*@ loop unroll N; */
    while (n < N && opool__alloc_as(p, &hs[n], NULL, known) != NULL) n++;
    /*@ loop unroll N; */
    for (uint32_t k = 0; k < n; k += 3) (void)opool__free_as(p, hs[k], known);
    /*@ loop unroll N; */
    for (uint32_t k = n / 2; k < n; k++) (void)opool__free_as(p, hs[k], known);
    (void)opool_shrink(p);
    /*@ loop unroll 2; */
    for (uint32_t k = 0; k < 2; k++) touch(opool__alloc_as(p, NULL, NULL, known));
    return p;
}

/* The reads with every index and every handle.
 * - Indices: each index below the limit alone, then all the others at once.
 * - Handles: all 2^64, in parts by the index's residue r modulo m, a power
 *   of two at least the pool's index limit: each part, a state of its own,
 *   holds the handles whose index is r, r + m, r + 2m, ... with every
 *   generation. The analysis keeps a residue through the sum that builds
 *   the handle and the cast that takes its index back (an interval of
 *   indices it would not: the generations spread the handles over every
 *   2^32 values), so the pool's first comparison with nslots (at most m)
 *   leaves index r alone or none: every handle meets the code as it runs,
 *   those above a growing pool's index limit too. */
enum { MAX_RESIDUES = 64 }; /* the largest index limit of the shapes */

static void reads_per_index(const opool *p, uint32_t limit) {
    idx_step = 0;
    /*@ loop unroll 65; */
    for (uint32_t k = 0; k <= limit; k++) {
        idx_lo = k;
        idx_hi = k < limit ? k : UINT32_MAX;
        arbitrary_reads(p, READ_INDEX);
    }
    uint32_t m = 1;
    /*@ loop unroll 7; */
    while (m < limit) m *= 2;
    /*@ assert m <= MAX_RESIDUES; */
    idx_step = m;
    idx_hi = UINT32_MAX;
    /*@ loop unroll MAX_RESIDUES; */
    for (uint32_t r = 0; r < m; r++) {
        idx_lo = r;
        arbitrary_reads(p, READ_HANDLE);
    }
    idx_step = 0;
}

static void exercise(const shape *s) {
    known = s->known;
    opool *p = build(s);
    if (p == NULL) return;
    uint32_t limit = s->max_cap ? s->max_cap : s->cap;
    reads_per_index(p, limit);
    pointer_reads(p);
    if (!s->max_cap) { /* fixed pools: the writes too, with any handle */
        idx_lo = 0;
        idx_hi = UINT32_MAX;
        any_slot = true;
        arbitrary_writes(p);
        any_slot = false;
        opool_destroy(p);
        return;
    }
    /* growing pools: the writes with each index alone (a partition of the
     * analysis per index: one state of the pool for each), then the reads */
    uint32_t k = Frama_C_unsigned_int_interval(0, limit - 1);
    /*@ split k; */
    writes_of_index(p, k);
    /*@ merge k; */
}

int main(void) {
    static const shape shapes[] = {
        /* fixed pools */
        {24, 0, 8, 0, 0, false, false, 0},
        {1, 1, 5, 0, OPOOL_POISON, false, true, 3},
        {256, 256, 4, 0, OPOOL_ZERO, true, false, 64},
        {0, 0, 6, 0, 0, false, false, 0}, /* id-only */
        /* growing pools: 2-4 to 33-64 slots, grown past 20 then shrunk */
        {24, 0, 4, 64, 0, false, false, 0},
        {1, 1, 3, 40, OPOOL_POISON | OPOOL_RETIRE_ON_WRAP, false, true, 5},
        {64, 64, 4, 48, OPOOL_ZERO | OPOOL_POISON, true, false, 8}, /* a partial last chunk */
        {256, 0, 2, 33, OPOOL_ZERO, false, true, 4000},
        /* fixed pools whose calls know their flags, as OPOOL_TYPED_FIXED's */
        {24, 0, 8, 0, OPOOL_FIXED, false, false, 0, OPOOL__KNOWN_OF(0)},
        {16, 0, 7, 0, OPOOL_FIXED | OPOOL_NO_LIVE_LIST, false, true, 0,
         OPOOL__KNOWN_OF(OPOOL_NO_LIVE_LIST)},
    };
#ifndef OPOOL_PROOF_SHAPES /* a mask: the shapes this run takes (proof/run.sh) */
#define OPOOL_PROOF_SHAPES 0x3ff
#endif
    heap_block = malloc(FOREIGN_BYTES);
    other = build(&shapes[0]);
    if (heap_block == NULL || other == NULL) return 1;
    for (unsigned k = 0; k < sizeof shapes / sizeof shapes[0]; k++)
        if (OPOOL_PROOF_SHAPES >> k & 1) exercise(&shapes[k]);
    Frama_C_show_each_reached_end(0);
    return 0;
}
