/*
 * test_diff.c -- randomized differential test: the core pool against the
 * reference model (tests/model.h).
 *
 * Each seed builds a random pool (policy, capacity, growth limit, flags,
 * callbacks, object size and alignment, salt, allocator, create or
 * create_in) and its model, then runs a long random sequence of operations
 * on both: alloc, alloc_at, free (live, stale, forged), free_object (valid,
 * interior, foreign), get/valid/at/handle_of, clear, sort, shrink, save and
 * load into a new pool, and the header's backward loop (freeing the current
 * object, freeing others, allocating inside it), checked both against the
 * model and, rule by rule, against the header's promise (tests/loop_check.h),
 * so loops meet every history: frees, growth, sort, clear, save and load
 * before them. After every operation the results are compared
 * (handle bits, NULL-ness, status, callbacks made); every few operations the
 * whole state is (count, capacity, roster, statistics, and - through the
 * header's private layout - the free stack and every generation).
 *
 * Every live object holds a byte pattern derived from its handle, written at
 * alloc and checked before it is freed and at every full check: overlapping
 * or moved objects show up. A slot's address must not change while its
 * chunk has storage.
 *
 *     test_diff                       default: the seed list, a few million ops
 *     test_diff SEEDS [OPS [SEED]]    SEEDS seeds of OPS ops; or only SEED
 */
#include "opool.h"
#include "counting.h"
#include "helpers.h"
#include "loop_check.h"
#include "model.h"
#include "stream.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_SEEDS 400
#define DEFAULT_OPS 15000
#define FULL_CHECK_EVERY 50
#define STALE_RING 64
#define MAX_REPORTS 16

/* ---- the harness -------------------------------------------------------- */

typedef struct harness {
    uint64_t seed;
    uint64_t ops; /* operations this seed runs */
    uint64_t op;  /* operation number within the seed */
    const char *op_name;
    bool failed;
    rng r;

    opool *p;
    model m;
    opool_desc d;
    size_t size, align;
    counting mem;
    unsigned char *buf; /* create_in's buffer */
    char config[256];

    unsigned char **addr; /* [m.max] object address of slot i, NULL while unknown */

    /* callbacks seen during the current operation */
    void **fini;
    uint32_t nfini;
    uint32_t ninit;
    model_report reports[MAX_REPORTS];
    uint32_t nreports;
    uint32_t evict_calls;
    uint64_t evict_choice; /* drawn before each alloc: the victim both sides pick */

    uint64_t stale[STALE_RING];
    uint32_t nstale, stale_next;

    const char *recent[16]; /* the last operations, for the failure message */

    loop_check loop;
    bool in_loop; /* inside op_iterate's loop, at index loop_index */
    uint32_t loop_index;
    bool muted; /* callbacks of a pool being replaced: not the model's */

    uint64_t keep_salt; /* op_retain: keep(h) is a hash of h and this */
    uint32_t keep_pct;
    uint32_t keep_calls;
} harness;

static uint64_t total_ops, total_checks, total_loops, total_loop_visits, total_loop_moves,
    total_reloads;
/* what the seeds exercised, summed from the models at destroy */
static uint64_t sum_grows, sum_evictions, sum_retired, sum_failed, sum_rejected, sum_allocs,
    sum_shrunk, sum_alloc_at;

static void fail(harness *h, const char *fmt, ...) {
    if (h->failed) return;
    h->failed = true;
    fprintf(stderr, "\nFAIL seed 0x%" PRIx64 " op %" PRIu64 " (%s): ", h->seed, h->op, h->op_name);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n  pool: %s\n  model: count %u limit %u nslots %u\n  last ops:", h->config,
            h->m.count, h->m.limit, h->m.nslots);
    for (uint64_t k = h->op > 16 ? h->op - 16 : 0; k <= h->op; k++)
        fprintf(stderr, " %s", h->recent[k % 16] ? h->recent[k % 16] : "?");
    fprintf(stderr, "\n  replay: TEST_DIFF_TRACE=1 test_diff 1 %" PRIu64 " 0x%" PRIx64 "\n", h->ops,
            h->seed);
}

#define EXPECT_EQ(h, a, b)                                                                         \
    do {                                                                                           \
        uint64_t x_ = (uint64_t)(a), y_ = (uint64_t)(b);                                           \
        total_checks++;                                                                            \
        if (x_ != y_)                                                                              \
            fail(h, "line %d: %s == %s: pool 0x%" PRIx64 ", model 0x%" PRIx64, __LINE__, #a, #b,   \
                 x_, y_);                                                                          \
    } while (0)

/* The byte pattern of the object with handle bits. */
static unsigned char pattern_byte(uint64_t x, size_t k) {
    return (unsigned char)((x >> ((k & 7) * 8)) + k);
}

static void write_pattern(harness *h, void *obj, uint64_t bits) {
    unsigned char *b = obj;
    uint64_t x = mix64(bits);
    for (size_t k = 0; k < h->size; k++) b[k] = pattern_byte(x, k);
}

static void check_pattern(harness *h, const void *obj, uint64_t bits, const char *where) {
    const unsigned char *b = obj;
    uint64_t x = mix64(bits);
    total_checks++;
    for (size_t k = 0; k < h->size; k++)
        if (b[k] != pattern_byte(x, k)) {
            fail(h, "%s: object of handle 0x%016" PRIx64 " at %p changed at byte %zu", where, bits,
                 obj, k);
            return;
        }
}

static void stale_push(harness *h, uint64_t bits) {
    h->stale[h->stale_next] = bits;
    h->stale_next = (h->stale_next + 1) % STALE_RING;
    if (h->nstale < STALE_RING) h->nstale++;
}

/* The victim both the pool's and the model's evict callback choose. */
static uint64_t pick_victim(const harness *h, uint32_t count, uint64_t live_at_pos) {
    uint64_t c = h->evict_choice;
    switch (c & 15) {
    case 0:
        return 0;
    case 1:
        return h->nstale ? h->stale[(c >> 8) % h->nstale] : 0;
    case 2:
        return (c >> 8) | (uint64_t)1 << 32; /* forged */
    default:
        return count ? live_at_pos : 0;
    }
}

static uint32_t victim_pos(const harness *h, uint32_t count) {
    return count ? (uint32_t)((h->evict_choice >> 8) % count) : 0;
}

/* ---- callbacks ---------------------------------------------------------- */

static void cb_init(void *obj, void *user) {
    harness *h = user;
    h->ninit++;
    if (h->d.flags & OPOOL_ZERO) {
        const unsigned char *b = obj;
        for (size_t k = 0; k < h->size; k++)
            if (b[k] != 0) {
                fail(h, "init saw a non-zero byte %zu with OPOOL_ZERO", k);
                break;
            }
    }
    memset(obj, 0xC3, h->size);
}

static void cb_fini(void *obj, void *user) {
    harness *h = user;
    if (h->muted) return;
    if (h->nfini < h->m.max) h->fini[h->nfini] = obj;
    h->nfini++;
}

static void cb_report(opool *p, opool_status what, opool_handle handle, void *user) {
    harness *h = user;
    if (p != h->p) fail(h, "report for another pool");
    if (h->nreports < MAX_REPORTS) h->reports[h->nreports] = (model_report){what, handle.bits};
    h->nreports++;
}

static opool_handle cb_evict(opool *p, void *user) {
    harness *h = user;
    h->evict_calls++;
    opool_stats st; /* (reading the pool's list would end the undo of its last free) */
    opool_get_stats(p, &st);
    uint32_t count = st.count;
    opool_handle v;
    /* the model's list (the same as the pool's, checked elsewhere), in the
     * state the model's own evict will see: the same victim */
    uint64_t at = model_live_handle(&h->m, victim_pos(h, count));
    v.bits = pick_victim(h, count, at);
    void *obj = opool_get(p, v);
    if (obj) check_pattern(h, obj, v.bits, "evict victim");
    if (obj && h->in_loop && !loop_before_free(&h->loop, p, h->loop_index, v))
        fail(h, "iteration promise (eviction): %s", h->loop.why);
    return v;
}

static uint64_t model_evict(const model *m, void *user) {
    harness *h = user;
    return pick_victim(h, m->count, model_live_handle(m, victim_pos(h, m->count)));
}

/* ---- comparing ---------------------------------------------------------- */

static bool trace; /* TEST_DIFF_TRACE set: print every operation */

static void begin(harness *h, const char *name) {
    if (trace) fprintf(stderr, "op %" PRIu64 ": %s\n", h->op, name);
    h->op_name = name;
    h->recent[h->op % 16] = name;
    h->nfini = h->ninit = h->nreports = h->evict_calls = 0;
    model_begin(&h->m);
    total_ops++;
}

static int cmp_ptr(const void *a, const void *b) {
    uintptr_t x = (uintptr_t) * (void *const *)a, y = (uintptr_t) * (void *const *)b;
    return (x > y) - (x < y);
}

/* The callbacks made by the operation are the model's. */
static void check_callbacks(harness *h, bool fini_any_order) {
    model *m = &h->m;
    if (h->nreports != m->nreports) {
        model_report got = h->nreports ? h->reports[0] : m->reports[0];
        fail(h, "%u reports, model %u (first: %s, handle 0x%016" PRIx64 ")", h->nreports,
             m->nreports, opool_status_str(got.what), got.handle);
    }
    for (uint32_t k = 0; k < h->nreports && k < m->nreports && k < MAX_REPORTS; k++) {
        EXPECT_EQ(h, h->reports[k].what, m->reports[k].what);
        EXPECT_EQ(h, h->reports[k].handle, m->reports[k].handle);
    }
    EXPECT_EQ(h, h->evict_calls, m->evict_calls);
    if (h->d.init) EXPECT_EQ(h, h->ninit, m->ninit);
    if (!h->d.fini) return;
    EXPECT_EQ(h, h->nfini, m->nfini);
    if (h->failed || h->nfini != m->nfini) return;
    void **want = malloc((m->nfini + 1) * sizeof *want);
    if (!want) return;
    for (uint32_t k = 0; k < m->nfini; k++) want[k] = h->addr[m->fini_log[k]];
    if (fini_any_order) {
        qsort(want, m->nfini, sizeof *want, cmp_ptr);
        qsort(h->fini, h->nfini, sizeof *h->fini, cmp_ptr);
    }
    for (uint32_t k = 0; k < m->nfini; k++)
        if (want[k] != h->fini[k]) {
            fail(h, "fini %u: object %p, model says slot %u at %p", k, h->fini[k], m->fini_log[k],
                 want[k]);
            break;
        }
    free(want);
}

/* Remember what the model freed: those handles are stale now. */
static void note_freed(harness *h) {
    for (uint32_t k = 0; k < h->m.nfini; k++) {
        uint32_t i = h->m.fini_log[k];
        stale_push(h, model_bits(h->m.gen[i] - 1, i));
    }
}

/* A fresh object at slot index with handle bits: address, init/ZERO, pattern. */
static void check_new_object(harness *h, unsigned char *obj, uint64_t bits) {
    uint32_t i = (uint32_t)bits;
    if ((uintptr_t)obj % h->align != 0)
        fail(h, "object %p not aligned to %zu", (void *)obj, h->align);
    if (h->size == 0 && obj != h->addr[0] && h->addr[0] != NULL)
        fail(h, "id-only pool: token %p, then %p", (void *)h->addr[0], (void *)obj);
    if (h->addr[i] == NULL)
        h->addr[i] = obj;
    else if (h->addr[i] != obj)
        fail(h, "slot %u moved from %p to %p", i, (void *)h->addr[i], (void *)obj);
    opool_handle hh = {bits};
    EXPECT_EQ(h, (uintptr_t)opool_get(h->p, hh), (uintptr_t)obj);
    if (h->d.init) {
        for (size_t k = 0; k < h->size; k++)
            if (obj[k] != 0xC3) {
                fail(h, "init's bytes not there after alloc");
                break;
            }
    } else if (h->d.flags & OPOOL_ZERO) {
        for (size_t k = 0; k < h->size; k++)
            if (obj[k] != 0) {
                fail(h, "OPOOL_ZERO object has a non-zero byte %zu", k);
                break;
            }
    }
    write_pattern(h, obj, bits);
}

static void full_check(harness *h) {
    model *m = &h->m;
    opool *p = h->p;
    EXPECT_EQ(h, opool_count(p), model_loop_start(m));
    EXPECT_EQ(h, opool_capacity(p), model_capacity(m));
    for (uint32_t k = 0; k < m->count && !h->failed && !model_lists(m); k++) {
        EXPECT_EQ(h, opool_live_handle(p, k).bits, 0); /* nothing to iterate */
        EXPECT_EQ(h, (uintptr_t)opool_live_object(p, k), 0);
    }
    for (uint32_t k = 0; k < m->count && !h->failed && model_lists(m); k++) {
        opool_handle lh = opool_live_handle(p, k);
        EXPECT_EQ(h, lh.bits, model_live_handle(m, k));
        unsigned char *obj = opool_live_object(p, k);
        EXPECT_EQ(h, (uintptr_t)obj, (uintptr_t)h->addr[model_live_slot(m, k)]);
        if (obj && !h->failed) check_pattern(h, obj, lh.bits, "full check");
    }
    EXPECT_EQ(h, opool_live_handle(p, m->count).bits, 0);
    EXPECT_EQ(h, (uintptr_t)opool_live_object(p, m->count), 0);

    opool_stats s, w;
    opool_get_stats(p, &s);
    model_stats(m, &w);
    EXPECT_EQ(h, s.version, w.version);
    EXPECT_EQ(h, s.capacity, w.capacity);
    EXPECT_EQ(h, s.max_capacity, w.max_capacity);
    EXPECT_EQ(h, s.count, w.count);
    EXPECT_EQ(h, s.high_water, w.high_water);
    EXPECT_EQ(h, opool_high_water(p), w.high_water);
    EXPECT_EQ(h, s.retired, w.retired);
    EXPECT_EQ(h, s.allocs, w.allocs);
    EXPECT_EQ(h, s.frees, w.frees);
    EXPECT_EQ(h, s.failed_allocs, w.failed_allocs);
    EXPECT_EQ(h, s.rejected_handles, w.rejected_handles);
    EXPECT_EQ(h, s.evictions, w.evictions);
    EXPECT_EQ(h, s.grows, w.grows);
    if (s.bytes == 0) fail(h, "stats.bytes is 0");

#ifndef OPOOL_DIFF_NO_PRIVATE
    /* The header's private layout: the free stack and every generation. */
    const opool__hot *c = (const opool__hot *)(const void *)p;
    EXPECT_EQ(h, c->nslots, model_records(m));
    EXPECT_EQ(h, c->limit, m->limit);
    if (model_lists(m)) {
        for (uint32_t k = m->count; k < m->limit && !h->failed; k++)
            EXPECT_EQ(h, c->roster[k], m->roster[k]);
    } else { /* the chain, in the free stack's order */
        EXPECT_EQ(h, (uintptr_t)c->roster, 0);
        uint32_t i = c->chain;
        for (uint32_t k = m->count; k < m->limit && !h->failed; k++, i = c->slot[i].pos)
            EXPECT_EQ(h, i, m->roster[k]);
    }
    for (uint32_t i = 0; i < model_records(m) && i < c->nslots && !h->failed; i++) {
        EXPECT_EQ(h, c->slot[i].gen, m->gen[i]);
        if (m->pos[i] != MODEL_NOPOS && model_lists(m)) EXPECT_EQ(h, c->slot[i].pos, m->pos[i]);
    }
#endif
}

/* ---- operations --------------------------------------------------------- */

static void op_alloc(harness *h) {
    begin(h, "alloc");
    h->evict_choice = rng_next(&h->r);
    bool with_out = rng_below(&h->r, 10) != 0;
    opool_handle out = {0x1234};
    unsigned char *obj = opool_alloc(h->p, with_out ? &out : NULL);
    uint64_t want;
    bool ok = model_alloc(&h->m, &want);
    if (trace) fprintf(stderr, "  alloc -> 0x%016" PRIx64 "\n", want);
    EXPECT_EQ(h, obj != NULL, ok);
    if (with_out) EXPECT_EQ(h, out.bits, want);
    check_callbacks(h, false);
    note_freed(h);
    if (obj && ok && !h->failed) check_new_object(h, obj, want);
    opool_handle nh = {want};
    if (obj && h->in_loop && !loop_after_alloc(&h->loop, h->p, h->loop_index, nh))
        fail(h, "iteration promise: %s", h->loop.why);
}

static uint64_t random_handle(harness *h) {
    model *m = &h->m;
    uint32_t gen = (uint32_t)rng_next(&h->r);
    switch (rng_below(&h->r, 9)) {
    case 0:
        return model_live_handle(m, rng_below(&h->r, m->count + 1));
    case 1:
    case 2:
        return h->nstale ? h->stale[rng_below(&h->r, h->nstale)] : 0;
    case 3:
        return model_bits(gen | 1, rng_below(&h->r, m->max + 2));
    case 4:
        return model_bits(gen & ~1u, rng_below(&h->r, m->max + 2));
    case 5: {
        uint32_t young = m->gen0 + 1 + 2 * rng_below(&h->r, 3); /* one call per statement: */
        return model_bits(young, rng_below(&h->r, m->max + 2)); /* replays across compilers */
    }
    case 6:
        return rng_chance(&h->r, 50) ? UINT64_MAX : model_bits(m->gen0 + 1, UINT32_MAX);
    case 7:
        return 0;
    default: {
        uint32_t i = rng_below(&h->r, m->max);
        return model_bits(m->gen[i] | 1, i); /* right index, maybe right generation */
    }
    }
}

static void op_alloc_at(harness *h) {
    begin(h, "alloc_at");
    model *m = &h->m;
    uint64_t want;
    uint32_t i = rng_below(&h->r, m->max);
    switch (rng_below(&h->r, 8)) {
    case 0:
        want = model_live_handle(m, rng_below(&h->r, m->count + 1));
        break;
    case 1:
        want = model_bits(m->gen[i] + 1, i);
        break; /* its next generation */
    case 2:
        want = model_bits(m->gen0 - 1, i);
        break; /* the last one: retires */
    case 3:
        want = model_bits((uint32_t)rng_next(&h->r) | 1, i);
        break;
    case 4:
        want = h->nstale ? h->stale[rng_below(&h->r, h->nstale)] : 0;
        break;
    case 5:
        want = model_bits(m->gen0 + 1, m->max + rng_below(&h->r, 3));
        break;
    case 6:
        want = model_bits(m->gen0 + 2, i);
        break; /* even */
    default:
        want = random_handle(h);
        break;
    }
    opool_handle hh = {want};
    if (trace) fprintf(stderr, "  alloc_at 0x%016" PRIx64 "\n", want);
    unsigned char *obj = opool_alloc_at(h->p, hh);
    bool ok = model_alloc_at(m, want);
    EXPECT_EQ(h, obj != NULL, ok);
    sum_alloc_at += ok;
    check_callbacks(h, false);
    if (obj && ok && !h->failed) check_new_object(h, obj, want);
}

static void op_free_live(harness *h) {
    model *m = &h->m;
    if (m->count == 0) return;
    begin(h, "free live");
    uint64_t bits = model_live_handle(m, rng_below(&h->r, m->count));
    opool_handle hh = {bits};
    void *obj = opool_get(h->p, hh);
    EXPECT_EQ(h, (uintptr_t)obj, (uintptr_t)h->addr[(uint32_t)bits]);
    if (obj) check_pattern(h, obj, bits, "before free");
    if (trace) fprintf(stderr, "  free 0x%016" PRIx64 "\n", bits);
    opool_status s = opool_free(h->p, hh);
    EXPECT_EQ(h, s, model_free(m, bits));
    check_callbacks(h, false);
    note_freed(h);
}

static void op_free_bad(harness *h) {
    begin(h, "free bad");
    uint64_t bits = random_handle(h);
    opool_handle hh = {bits};
    if (model_get(&h->m, bits)) {
        void *obj = opool_get(h->p, hh);
        if (obj) check_pattern(h, obj, bits, "before free");
    }
    opool_status s = opool_free(h->p, hh);
    EXPECT_EQ(h, s, model_free(&h->m, bits));
    check_callbacks(h, false);
    note_freed(h);
}

/* A slot known to have had an object, or MODEL_NOPOS. */
static uint32_t known_slot(harness *h) {
    for (int tries = 0; tries < 8; tries++) {
        uint32_t i = rng_below(&h->r, h->m.max);
        if (h->addr[i]) return i;
    }
    return MODEL_NOPOS;
}

static void op_free_object(harness *h) {
    model *m = &h->m;
    begin(h, "free_object");
    unsigned char local[8];
    unsigned char *ptr;
    uint32_t index = MODEL_NOPOS;
    uint32_t kind = rng_below(&h->r, 6);
    if (kind <= 2 && m->count > 0) { /* a live object */
        uint32_t i = model_live_slot(m, rng_below(&h->r, m->count));
        ptr = h->addr[i];
        index = i;
        check_pattern(h, ptr, model_bits(m->gen[i], i), "before free_object");
    } else if (kind == 3 && m->count > 0 && h->size > 1) { /* interior */
        uint32_t i = model_live_slot(m, rng_below(&h->r, m->count));
        ptr = h->addr[i] + 1 + rng_below(&h->r, (uint32_t)h->size - 1);
    } else if (kind == 4 && (index = known_slot(h)) != MODEL_NOPOS) { /* free or live */
        ptr = h->addr[index];
        if (model_is_live(m, index))
            check_pattern(h, ptr, model_bits(m->gen[index], index), "before free_object");
    } else { /* foreign */
        index = MODEL_NOPOS;
        ptr = rng_chance(&h->r, 50) ? local : NULL;
    }
    if (h->size == 0) index = MODEL_NOPOS; /* the token names no object */
    opool_status s = opool_free_object(h->p, ptr);
    EXPECT_EQ(h, s, model_free_object(m, index));
    check_callbacks(h, false);
    note_freed(h);
}

static void op_lookup(harness *h) {
    model *m = &h->m;
    begin(h, "lookup");
    uint64_t bits = random_handle(h);
    opool_handle hh = {bits};
    bool live = model_get(m, bits);
    void *want = live ? h->addr[(uint32_t)bits] : NULL;
    EXPECT_EQ(h, (uintptr_t)opool_get(h->p, hh), (uintptr_t)want);
    EXPECT_EQ(h, opool_valid(h->p, hh), live);

    uint32_t i = rng_below(&h->r, m->max + 2);
    if (rng_chance(&h->r, 5)) i = UINT32_MAX - rng_below(&h->r, 2);
    want = model_at(m, i) ? h->addr[i] : NULL;
    EXPECT_EQ(h, (uintptr_t)opool_at(h->p, i), (uintptr_t)want);

    EXPECT_EQ(h, opool_handle_at(h->p, i).bits, model_handle_at(m, i));

    /* compact handles: of the handle looked up, and expanding any 32 bits */
    opool_handle32 c = opool_handle_compact(h->p, hh);
    EXPECT_EQ(h, c.bits, model_compact(m, bits));
    EXPECT_EQ(h, opool_handle_expand(h->p, c).bits, c.bits ? bits : 0);
    opool_handle32 x;
    uint32_t kbits = model_index_bits(m);
    switch (rng_below(&h->r, 4)) {
    case 0: /* any handle's bits, encoded without asking whether it is live */
        x.bits = kbits >= 32 ? (uint32_t)bits
                             : (uint32_t)((bits >> 32) << kbits) |
                                   ((uint32_t)bits & ~(UINT32_MAX << kbits));
        break;
    case 1:
        x.bits = (uint32_t)rng_next(&h->r);
        break;
    case 2:
        x.bits = 0;
        break;
    default:
        x.bits = c.bits ^ (1u << rng_below(&h->r, 32));
        break;
    }
    EXPECT_EQ(h, opool_handle_expand(h->p, x).bits, model_expand(m, x.bits));

    uint32_t k = known_slot(h);
    if (k != MODEL_NOPOS) {
        /* an id-only pool's token names no object */
        uint64_t expect = model_is_live(m, k) && h->size ? model_bits(m->gen[k], k) : 0;
        EXPECT_EQ(h, opool_handle_of(h->p, h->addr[k]).bits, expect);
        if (h->size > 1) EXPECT_EQ(h, opool_handle_of(h->p, h->addr[k] + 1).bits, 0);
    }
    unsigned char local;
    EXPECT_EQ(h, opool_handle_of(h->p, &local).bits, 0);
    EXPECT_EQ(h, opool_handle_of(h->p, NULL).bits, 0);
    check_callbacks(h, false);
}

static void verify_all_live(harness *h) {
    for (uint32_t k = 0; k < h->m.count && !h->failed; k++) {
        uint32_t i = model_live_slot(&h->m, k);
        check_pattern(h, h->addr[i], model_bits(h->m.gen[i], i), "live object");
    }
}

static void op_clear(harness *h) {
    begin(h, "clear");
    verify_all_live(h);
    opool_clear(h->p);
    model_clear(&h->m);
    check_callbacks(h, true);
    for (uint32_t k = 0; k < h->m.nfini && k < 8; k++) {
        uint32_t i = h->m.fini_log[k];
        stale_push(h, model_bits(h->m.gen[i] - 1, i));
    }
}

static void op_sort(harness *h) {
    begin(h, "sort");
    opool_sort(h->p);
    model_sort(&h->m);
    check_callbacks(h, false);
    for (uint32_t k = 0; k < h->m.count && !h->failed && model_lists(&h->m); k++)
        EXPECT_EQ(h, opool_live_handle(h->p, k).bits, model_live_handle(&h->m, k));
}

static void op_shrink(harness *h) {
    model *m = &h->m;
    begin(h, "shrink");
    bool was[MODEL_MAX_CHUNKS];
    memcpy(was, m->present, sizeof was);
    uint32_t got = opool_shrink(h->p);
    EXPECT_EQ(h, got, model_shrink(m));
    sum_shrunk += got;
    check_callbacks(h, false);
    for (uint32_t c = 0; c < m->nchunks; c++)
        if (was[c] && !m->present[c])
            for (uint32_t i = m->lo[c]; i < m->hi[c]; i++) h->addr[i] = NULL; /* storage is gone */
}

/* keep of op_retain: a hash of the handle decides, the same for pool and model. */
static bool keep_decides(uint64_t bits, void *user) {
    harness *h = user;
    return mix64(bits ^ h->keep_salt) % 100 < h->keep_pct;
}

static bool cb_keep(void *obj, opool_handle hnd, void *user) {
    harness *h = user;
    h->keep_calls++;
    check_pattern(h, obj, hnd.bits, "retain");
    EXPECT_EQ(h, (uintptr_t)opool_get(h->p, hnd), (uintptr_t)obj);
    return keep_decides(hnd.bits, h);
}

static void op_retain(harness *h) {
    begin(h, "retain");
    h->keep_salt = rng_next(&h->r);
    h->keep_pct = rng_below(&h->r, 101);
    h->keep_calls = 0;
    uint32_t live = h->m.count;
    uint32_t got = opool_retain(h->p, cb_keep, h);
    EXPECT_EQ(h, got, model_retain(&h->m, keep_decides, h));
    EXPECT_EQ(h, h->keep_calls, model_lists(&h->m) ? live : 0);
    check_callbacks(h, false);
    note_freed(h);
}

/* opool_count, on both: it ends the undo of the last free. */
static uint32_t pool_count(harness *h) {
    model_loop_start(&h->m);
    return opool_count(h->p);
}

/* A free inside the loop: the promise's bookkeeping, then the free on both. */
static void loop_free(harness *h, uint32_t i, uint64_t bits) {
    opool_handle hh = {bits};
    if (!loop_before_free(&h->loop, h->p, i, hh)) fail(h, "iteration promise: %s", h->loop.why);
    check_pattern(h, opool_get(h->p, hh), bits, "before a free in the loop");
    EXPECT_EQ(h, opool_free(h->p, hh), model_free(&h->m, bits));
    check_callbacks(h, false);
    note_freed(h);
}

/* The header's loop, backwards from opool_count, after whatever the seed did
 * before: it frees the current object, frees others (visited or not),
 * allocates (which may grow or evict), each with a random rate. Every step
 * matches the model, and the loop as a whole keeps the header's promise. */
static void op_iterate(harness *h) {
    model *m = &h->m;
    uint32_t free_pct = rng_below(&h->r, 101);
    uint32_t other_pct = rng_chance(&h->r, 30) ? rng_below(&h->r, 40) : 0;
    uint32_t alloc_pct = rng_chance(&h->r, 50) ? rng_below(&h->r, 70) : 0;
    begin(h, "iterate");
    if (!model_lists(m)) { /* refused, loudly: one report, no body */
        uint32_t bodies = 0;
        OPOOL_FOREACH(h->p, unsigned char, obj, hnd) bodies++;
        model_refuse_loop(m);
        check_callbacks(h, false);
        EXPECT_EQ(h, bodies, 0);
        return;
    }
    if (!loop_begin(&h->loop, h->p)) fail(h, "iteration promise: %s", h->loop.why);
    h->in_loop = true;
    /* the header's loop reads the count once; half the loops also read it
     * at every index (which ends the undo of a free made in the body before;
     * reading the entry does not) */
    bool recount = rng_chance(&h->r, 50);
    for (uint32_t i = pool_count(h); i-- > 0 && !h->failed;) {
        begin(h, "iterate");
        h->loop_index = i;
        uint32_t count = recount ? pool_count(h) : m->count;
        EXPECT_EQ(h, count, m->count);
        if (i >= count) { /* frees of other objects took the end away: skip */
            model_read_past_end(m);
            EXPECT_EQ(h, opool_live_handle(h->p, i).bits, 0);
            EXPECT_EQ(h, (uintptr_t)opool_live_object(h->p, i), 0);
            continue;
        }
        opool_handle lh = opool_live_handle(h->p, i);
        unsigned char *obj = opool_live_object(h->p, i);
        EXPECT_EQ(h, lh.bits, model_live_handle(m, i));
        EXPECT_EQ(h, (uintptr_t)obj, (uintptr_t)h->addr[model_live_slot(m, i)]);
        if (!loop_visit(&h->loop, h->p, i, lh)) fail(h, "iteration promise: %s", h->loop.why);
        if (h->failed) break;
        check_pattern(h, obj, lh.bits, "iteration");
        if (rng_below(&h->r, 100) < free_pct) {
            begin(h, "iterate: free current");
            loop_free(h, i, lh.bits);
        }
        if (m->count > 0 && rng_below(&h->r, 100) < other_pct) {
            begin(h, "iterate: free another");
            loop_free(h, i, model_live_handle(m, rng_below(&h->r, m->count)));
        }
        while (rng_below(&h->r, 100) < alloc_pct && !h->failed) op_alloc(h);
        h->op++;
    }
    h->in_loop = false;
    if (!h->failed && !loop_end(&h->loop)) fail(h, "iteration promise: %s", h->loop.why);
}

/* Save the pool, load the image into a new pool with the same desc, and go
 * on with the new one: the model does not change (the image restores
 * everything), only the objects' addresses do, and an open exhaustion
 * episode resumes as after its first failure (the image keeps only that
 * one is open, not its count). */
static void op_save_load(harness *h) {
    model *m = &h->m;
    begin(h, "save+load");
    if (m->episode) m->episode = 1;
    model_new_run(m);
    model_load(m);
    stream s = stream_new();
    EXPECT_EQ(h, opool_save(h->p, stream_write, &s), OPOOL_OK);
    opool *q = NULL;
    EXPECT_EQ(h, opool_load(&q, &h->d, stream_read, &s), OPOOL_OK);
    stream_free(&s);
    if (q == NULL) return;
    for (uint32_t i = 0; i < m->max && !h->failed; i++) {
        unsigned char *obj = opool_at(q, i);
        EXPECT_EQ(h, obj != NULL, model_is_live(m, i));
        if (obj) check_pattern(h, obj, model_bits(m->gen[i], i), "loaded object");
        h->addr[i] = obj; /* free slots: unknown until reused */
    }
    h->muted = true; /* the old pool's fini calls are not the model's */
    opool_destroy(h->p);
    h->muted = false;
    h->p = q;
    total_reloads++;
    full_check(h);
}

/* ---- one seed ----------------------------------------------------------- */

static void configure(harness *h) {
    rng *r = &h->r;
    opool_desc *d = &h->d;
    memset(d, 0, sizeof *d);

    uint32_t policy = rng_below(r, 100);
    d->on_full = policy < 35 ? OPOOL_FULL_FAIL : policy < 70 ? OPOOL_FULL_GROW : OPOOL_FULL_EVICT;
    d->capacity = rng_chance(r, 40) ? 1 + rng_below(r, 16) : 1 + rng_below(r, 300);
    if (d->on_full == OPOOL_FULL_GROW) {
        if (rng_chance(r, 10))
            d->max_capacity = rng_chance(r, 50) ? 0 : d->capacity;
        else
            d->max_capacity = d->capacity + 1 + rng_below(r, d->capacity * 8 + 32);
    } else if (rng_chance(r, 20)) {
        d->max_capacity = d->capacity + rng_below(r, 100); /* ignored: only GROW grows */
    }
    uint32_t max = d->on_full == OPOOL_FULL_GROW && d->max_capacity > d->capacity ? d->max_capacity
                                                                                  : d->capacity;

    d->object_size = rng_chance(r, 80) ? 1 + rng_below(r, 64) : 1 + rng_below(r, 400);
    if (rng_chance(r, 5)) d->object_size = 0; /* an id-only pool: every object is one token */
    uint32_t a = rng_below(r, 12);
    d->object_align = a == 0 ? 0 : a <= 8 ? (size_t)1 << (a - 1) : (size_t)1 << rng_below(r, 8);
    if (max <= 64 && rng_chance(r, 3)) d->object_align = 4096;

    if (rng_chance(r, 70)) { /* else a plain pool: alloc and free take the inline paths */
        if (rng_chance(r, 30)) d->flags |= OPOOL_ZERO;
        if (rng_chance(r, 50)) d->flags |= OPOOL_RETIRE_ON_WRAP;
        if (rng_chance(r, 15)) d->flags |= OPOOL_POISON;
        if (rng_chance(r, 30)) d->init = cb_init;
        if (rng_chance(r, 60)) d->fini = cb_fini;
    }
    if (rng_chance(r, 25)) d->flags |= OPOOL_NO_LIVE_LIST;
    if (d->on_full == OPOOL_FULL_EVICT) d->evict = cb_evict;
    d->report = cb_report;
    d->flags |= OPOOL_REPORT_UNRATIONED; /* every report counted */
    d->user = h;

    static const uint32_t salts[] = {1, 2, 3, 0xFFFFFFFEu, 0xFFFFFFFFu, 0x80000000u, 0xFFFFFFF0u};
    d->salt = rng_chance(r, 25) ? salts[rng_below(r, 7)] : (uint32_t)rng_next(r) | 1u << 31;

    if (rng_chance(r, 60)) {
        d->allocator = counting_allocator(&h->mem);
    }
    h->size = d->object_size;
    h->align = d->object_align ? d->object_align : _Alignof(max_align_t);
    snprintf(h->config, sizeof h->config,
             "policy %d capacity %u max_capacity %u size %zu align %zu flags 0x%x salt 0x%x "
             "init %d fini %d allocator %d",
             (int)d->on_full, d->capacity, d->max_capacity, d->object_size, d->object_align,
             d->flags, d->salt, d->init != NULL, d->fini != NULL, d->allocator.alloc != NULL);
}

static bool run_seed(uint64_t seed, uint64_t ops) {
    harness *h = calloc(1, sizeof *h);
    if (!h) return false;
    h->seed = seed;
    h->ops = ops;
    h->r.s = seed * 0x2545F4914F6CDD1Du + 0x1234567;
    configure(h);
    h->op_name = "create";

    bool in_buffer = rng_chance(&h->r, 20);
    opool_status s;
    if (in_buffer) {
        size_t n = opool_required_bytes(&h->d);
        size_t off = 1 + rng_below(&h->r, 63);
        h->buf = malloc(n + off);
        s = h->buf ? opool_create_in(&h->p, h->buf + off, n, &h->d) : OPOOL_ENOMEM;
        if (h->buf && n == 0) fail(h, "required_bytes is 0 for a valid desc");
    } else {
        s = opool_create(&h->p, &h->d);
    }
    if (s != OPOOL_OK || !h->p) {
        fail(h, "create: %s", opool_status_str(s));
        free(h->buf);
        free(h);
        return false;
    }
    if (!model_init(&h->m, &h->d, h->d.salt)) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    h->m.evict = model_evict;
    h->m.evict_user = h;
    h->addr = calloc(h->m.max, sizeof *h->addr);
    h->fini = calloc(h->m.max + 1, sizeof *h->fini);
    if (!h->addr || !h->fini) exit(2);
    full_check(h);

    uint32_t fill_bias = 50;
    for (h->op = 1; h->op <= ops && !h->failed; h->op++) {
        if (h->op % 256 == 0) fill_bias = rng_below(&h->r, 101);
        uint32_t x = rng_below(&h->r, 1000);
        uint32_t alloc_w = 150 + 3 * fill_bias, free_w = 150 + 3 * (100 - fill_bias);
        if (x < alloc_w)
            op_alloc(h);
        else if ((x -= alloc_w) < free_w)
            op_free_live(h);
        else if ((x -= free_w) < 40)
            op_free_bad(h);
        else if ((x -= 40) < 40)
            op_free_object(h);
        else if ((x -= 40) < 50)
            op_alloc_at(h);
        else if ((x -= 50) < 60)
            op_lookup(h);
        else if ((x -= 60) < 8)
            op_sort(h);
        else if ((x -= 8) < 8)
            op_shrink(h);
        else if ((x -= 8) < 3)
            op_clear(h);
        else if ((x -= 3) < 3)
            op_iterate(h);
        else if ((x -= 3) < 2)
            op_save_load(h);
        else if ((x -= 2) < 3)
            op_retain(h);
        else
            op_lookup(h);
        if (h->op % FULL_CHECK_EVERY == 0 && !h->failed) {
            h->op_name = "full check";
            full_check(h);
        }
    }
    if (!h->failed) {
        h->op_name = "final check";
        full_check(h);
    }

    /* destroy: fini exactly on the live objects */
    if (!h->failed) verify_all_live(h);
    h->op_name = "destroy";
    h->nfini = 0;
    uint32_t live = h->m.count;
    void **want = calloc(live + 1, sizeof *want);
    for (uint32_t k = 0; want && k < live; k++) want[k] = h->addr[model_live_slot(&h->m, k)];
    opool_destroy(h->p);
    h->p = NULL;
    if (h->d.fini && want && !h->failed) {
        EXPECT_EQ(h, h->nfini, live);
        if (h->nfini == live) {
            qsort(want, live, sizeof *want, cmp_ptr);
            qsort(h->fini, live, sizeof *h->fini, cmp_ptr);
            for (uint32_t k = 0; k < live; k++)
                if (want[k] != h->fini[k]) {
                    fail(h, "destroy ran fini on %p, not on a live object", h->fini[k]);
                    break;
                }
        }
    }
    free(want);
    EXPECT_EQ(h, h->mem.blocks, 0);
    EXPECT_EQ(h, h->mem.bytes, 0);
    EXPECT_EQ(h, h->mem.bad_frees, 0);

    bool ok = !h->failed;
    sum_grows += h->m.grows;
    sum_evictions += h->m.evictions;
    sum_retired += h->m.retired_count;
    sum_failed += h->m.failed_allocs;
    sum_rejected += h->m.rejected;
    sum_allocs += h->m.allocs;
    total_loops += h->loop.loops;
    total_loop_visits += h->loop.visits;
    total_loop_moves += h->loop.moves;
    loop_check_free(&h->loop);
    model_fini(&h->m);
    free(h->addr);
    free(h->fini);
    free(h->buf);
    free(h);
    return ok;
}

/* Seeds that once found something stay in the list. */
static const uint64_t seed_list[] = {1, 2, 3, 42, 0xDEADBEEF, 0x5EED};

int main(int argc, char **argv) {
    uint64_t nseeds = DEFAULT_SEEDS, ops = DEFAULT_OPS;
    if (argc > 1) nseeds = strtoull(argv[1], NULL, 0);
    if (argc > 2) ops = strtoull(argv[2], NULL, 0);
    uint64_t failures = 0, runs = 0;
    trace = getenv("TEST_DIFF_TRACE") != NULL;
    if (argc > 3) { /* replay one seed */
        uint64_t seed = strtoull(argv[3], NULL, 0);
        failures += !run_seed(seed, ops);
        runs++;
    } else {
        for (size_t k = 0; k < sizeof seed_list / sizeof seed_list[0] && runs < nseeds; k++, runs++)
            failures += !run_seed(seed_list[k], ops);
        for (uint64_t k = 0; runs < nseeds; k++, runs++) failures += !run_seed(0x1000 + k, ops);
    }
    printf("test_diff: %" PRIu64 " seeds, %" PRIu64 " ops, %" PRIu64 " checks, %" PRIu64
           " failed seeds\n",
           runs, total_ops, total_checks, failures);
    printf("  exercised: %" PRIu64 " allocs (%" PRIu64 " alloc_at), %" PRIu64
           " failed allocs, %" PRIu64 " rejected handles, %" PRIu64 " grows, %" PRIu64
           " slots shrunk, %" PRIu64 " evictions, %" PRIu64 " retired\n",
           sum_allocs, sum_alloc_at, sum_failed, sum_rejected, sum_grows, sum_shrunk, sum_evictions,
           sum_retired);
    printf("  loops: %" PRIu64 " checked against the iteration promise, %" PRIu64
           " visits, %" PRIu64 " frees below the index; %" PRIu64 " save+load round trips\n",
           total_loops, total_loop_visits, total_loop_moves, total_reloads);
    return failures != 0;
}
