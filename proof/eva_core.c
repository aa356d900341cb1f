/*
 * eva_core.c -- the EVA harness of the core pool (proof/run.sh: make proof,
 * the eva stage of make test). Pools of several shapes are built and taken
 * through allocs, frees, growth and shrink; then every function that takes a
 * handle or an index is called with an arbitrary value
 * (any of the 2^64 handles, 2^32 indices, any compact handle), and every
 * object it returns is written in full. EVA must report no alarm: no value
 * makes these functions read or write outside the pool's memory, nor
 * overflow, nor read an uninitialized field.
 *
 * The callbacks are the harness's own (init and fini write their object,
 * report does nothing, keep keeps an arbitrary choice of objects); a user's callback
 * is outside this proof (docs/PROOF.md).
 */
#include "opool.h"
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
} shape;

/* The indices of the arbitrary values: [idx_lo, idx_hi] in one call of
 * arbitrary_calls. exercise covers every index: each index below the
 * pool's index limit on its own (a case split: within one chunk, and for
 * one index, the analysis knows the object's address), then every index
 * above at once. The generation is always any of the 2^32. */
static uint32_t idx_lo, idx_hi;

/* any handle whose index is in [idx_lo, idx_hi], with every generation; a
 * sum rather than an or, which the analysis follows exactly */
static opool_handle any_handle(void) {
    opool_handle h;
    h.bits = (uint64_t)Frama_C_unsigned_int_interval(0, UINT32_MAX) * ((uint64_t)1 << 32) +
             Frama_C_unsigned_int_interval(idx_lo, idx_hi);
    return h;
}

static uint32_t any_u32(void) { return Frama_C_unsigned_int_interval(idx_lo, idx_hi); }

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

/* The functions that read the pool, each with an arbitrary index (and a
 * handle with that index and any generation, when handles is set), compact
 * handle; every object returned written in full. */
static void arbitrary_reads(const opool *p, bool handles) {
    uint32_t i = any_u32();
    touch(opool_at(p, i));
    (void)opool_handle_at(p, i);
    (void)opool_live_handle(p, i);
    touch(opool_live_object(p, i));
    opool_handle32 x; /* every compact handle, whatever the index range */
    x.bits = Frama_C_unsigned_int_interval(0, UINT32_MAX);
    (void)opool_handle_expand(p, x);
    if (!handles) return;
    opool_handle h = any_handle();
    touch(opool_get(p, h));
    (void)opool_valid(p, h);
    (void)opool_handle_compact(p, h);
}

/* The functions that change the pool, each with an arbitrary handle; then
 * the reads again, on every state that can result. */
static void arbitrary_writes(opool *p) {
    (void)opool_free(p, any_handle());
    touch(opool_alloc_at(p, any_handle()));
    (void)opool_retain(p, keep_any, p);
    arbitrary_reads(p, true);
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
    int part = Frama_C_interval(0, 2);
    /*@ split part; */
    (void)opool_free(p, handle_of_index(p, k, part));
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
    arbitrary_reads(p, true);
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
    d.flags = s->flags;
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
    while (n < N && opool_alloc(p, &hs[n]) != NULL) n++;
    /*@ loop unroll N; */
    for (uint32_t k = 0; k < n; k += 3) (void)opool_free(p, hs[k]);
    /*@ loop unroll N; */
    for (uint32_t k = n / 2; k < n; k++) (void)opool_free(p, hs[k]);
    (void)opool_shrink(p);
    /*@ loop unroll 2; */
    for (uint32_t k = 0; k < 2; k++) touch(opool_alloc(p, NULL));
    return p;
}

/* The reads with every index: each index below the limit alone, then all
 * the others at once. */
static void reads_per_index(const opool *p, uint32_t limit, bool growing) {
    /*@ loop unroll 65; */
    for (uint32_t k = 0; k <= limit; k++) {
        idx_lo = k;
        idx_hi = k < limit ? k : UINT32_MAX;
        /* a growing pool's handles above the limit: not covered (PROOF.md) */
        arbitrary_reads(p, !growing || k < limit);
    }
}

static void exercise(const shape *s) {
    opool *p = build(s);
    if (p == NULL) return;
    uint32_t limit = s->max_cap ? s->max_cap : s->cap;
    reads_per_index(p, limit, s->max_cap != 0);
    if (!s->max_cap) { /* fixed pools: the writes too, with any handle */
        idx_lo = 0;
        idx_hi = UINT32_MAX;
        arbitrary_writes(p);
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
    };
#ifndef OPOOL_PROOF_SHAPES /* a mask: the shapes this run takes (proof/run.sh) */
#define OPOOL_PROOF_SHAPES 0xff
#endif
    for (unsigned k = 0; k < sizeof shapes / sizeof shapes[0]; k++)
        if (OPOOL_PROOF_SHAPES >> k & 1) exercise(&shapes[k]);
    Frama_C_show_each_reached_end(0);
    return 0;
}
