/*
 * test_faults.c -- failure injection: an allocator that fails the N-th
 * allocation, for every N, across create, growth to max_capacity, alloc_at
 * growth, shrink and regrow, and load. Every failure must give the
 * documented result (OPOOL_ENOMEM with *out NULL, or a NULL object with the
 * failure counted and reported), leave a pool that passes opool__check and
 * matches the reference model (tests/model.h) synced with whatever storage
 * was really added, keep working afterwards, and leak nothing: after
 * destroy no byte is outstanding and every free matched an allocation of
 * the same size.
 *
 * Two modes per N: only the N-th allocation fails (the pool must recover at
 * the next call), or the N-th and every later one fails (the pool must keep
 * working within the storage it has).
 */
#include "opool.h"
#include "opool_internal.h"
#include "support/opool_check.h"
#include "aligned.h"
#include "model.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_BLOCKS 256

/* ---- the failing allocator ---------------------------------------------- */

typedef struct faulty {
    uint64_t calls;    /* allocations asked for */
    uint64_t fail_at;  /* the call (1-based) that fails; 0: none */
    bool fail_after;   /* and every call after it */
    uint64_t failures; /* calls that failed on purpose */
    struct {
        void *ptr;
        size_t size;
    } live[MAX_BLOCKS];
    uint32_t nlive;
    size_t bytes;        /* outstanding */
    uint64_t bad_frees;  /* a pointer never handed out, or freed with another size */
    uint64_t overflowed; /* more blocks at once than the table holds */
} faulty;

static void *faulty_alloc(void *ctx, size_t size, size_t align) {
    faulty *f = (faulty *)ctx;
    f->calls++;
    if (f->fail_at != 0 && (f->calls == f->fail_at || (f->fail_after && f->calls > f->fail_at))) {
        f->failures++;
        return NULL;
    }
    if (f->nlive == MAX_BLOCKS) {
        f->overflowed++;
        return NULL;
    }
    if (align < sizeof(void *)) align = sizeof(void *);
    size_t rounded = (size + align - 1) / align * align;
    void *ptr = test_aligned_alloc(align, rounded ? rounded : align);
    if (ptr == NULL) return NULL;
    memset(ptr, 0xA5, size); /* the pool must not rely on fresh memory being zero */
    f->live[f->nlive].ptr = ptr;
    f->live[f->nlive].size = size;
    f->nlive++;
    f->bytes += size;
    return ptr;
}

static void faulty_free(void *ctx, void *ptr, size_t size) {
    faulty *f = (faulty *)ctx;
    for (uint32_t k = 0; k < f->nlive; k++) {
        if (f->live[k].ptr != ptr) continue;
        if (f->live[k].size != size) f->bad_frees++;
        f->bytes -= f->live[k].size;
        f->live[k] = f->live[--f->nlive];
        test_aligned_free(ptr);
        return;
    }
    f->bad_frees++; /* never handed out, or freed twice */
}

static void faulty_reset(faulty *f, uint64_t fail_at, bool fail_after) {
    memset(f, 0, sizeof *f);
    f->fail_at = fail_at;
    f->fail_after = fail_after;
}

/* Nothing outstanding, nothing freed wrongly. */
static bool faulty_balanced(const faulty *f) {
    CHECK_EQ_U64(f->nlive, 0);
    CHECK_EQ_U64(f->bytes, 0);
    CHECK_EQ_U64(f->bad_frees, 0);
    CHECK_EQ_U64(f->overflowed, 0);
    return f->nlive == 0 && f->bytes == 0 && f->bad_frees == 0 && f->overflowed == 0;
}

static uint32_t model_capacity_full(const model *m);

/* ---- a pool and its model, compared after every step -------------------- */

#define RIG_REPORTS 8

typedef struct rig {
    opool *p;
    model m;
    opool_desc d;
    faulty mem;
    unsigned char **addr; /* [m.max] */
    uint32_t reports, fini_calls, model_fini_calls;
    opool_status last_report;
    bool broken; /* a check failed: stop the scenario */
} rig;

static void rig_report(opool *p, opool_status what, opool_handle h, void *user) {
    (void)p;
    (void)h;
    rig *r = (rig *)user;
    r->reports++;
    r->last_report = what;
}

static void rig_fini(void *obj, void *user) {
    (void)obj;
    ((rig *)user)->fini_calls++;
}

static unsigned char pattern(uint64_t bits, size_t k) {
    return (unsigned char)(bits * 0x9E3779B97F4A7C15u >> (8 * (k & 7))) ^ (unsigned char)k;
}

static void fill(rig *r, unsigned char *obj, uint64_t bits) {
    for (size_t k = 0; k < r->d.object_size; k++) obj[k] = pattern(bits, k);
}

static bool intact(const rig *r, const unsigned char *obj, uint64_t bits) {
    for (size_t k = 0; k < r->d.object_size; k++)
        if (obj[k] != pattern(bits, k)) return false;
    return true;
}

#define RIG_CHECK(r, cond)                                                                         \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            CHECK(cond);                                                                           \
            (r)->broken = true;                                                                    \
        }                                                                                          \
    } while (0)

#define RIG_EQ(r, a, b)                                                                            \
    do {                                                                                           \
        uint64_t rig_a_ = (uint64_t)(a), rig_b_ = (uint64_t)(b);                                   \
        if (rig_a_ != rig_b_) {                                                                    \
            CHECK_EQ_U64(rig_a_, rig_b_);                                                          \
            fprintf(stderr, "    (%s == %s)\n", #a, #b);                                           \
            (r)->broken = true;                                                                    \
        }                                                                                          \
    } while (0)

/* The pool passes opool__check and is the model in every observable way. */
static void rig_compare(rig *r, const char *after) {
    if (r->broken) return;
    char why[256];
    if (!opool__check(r->p, why, sizeof why)) {
        fprintf(stderr, "    opool__check after %s: %s\n", after, why);
        RIG_CHECK(r, !"opool__check");
        return;
    }
    model *m = &r->m;
    RIG_EQ(r, opool_count(r->p), model_loop_start(m));
    RIG_EQ(r, opool_capacity(r->p), model_capacity(m));
    for (uint32_t k = 0; k < m->count && !r->broken; k++) {
        uint64_t bits = model_live_handle(m, k);
        RIG_EQ(r, opool_live_handle(r->p, k).bits, bits);
        unsigned char *obj = (unsigned char *)opool_live_object(r->p, k);
        RIG_EQ(r, (uintptr_t)obj, (uintptr_t)r->addr[(uint32_t)bits]);
        RIG_CHECK(r, obj && intact(r, obj, bits));
    }
    opool_stats s, w;
    opool_get_stats(r->p, &s);
    model_stats(m, &w);
    RIG_EQ(r, s.capacity, w.capacity);
    RIG_EQ(r, s.count, w.count);
    RIG_EQ(r, s.high_water, w.high_water);
    RIG_EQ(r, s.allocs, w.allocs);
    RIG_EQ(r, s.frees, w.frees);
    RIG_EQ(r, s.failed_allocs, w.failed_allocs);
    RIG_EQ(r, s.grows, w.grows);
    RIG_EQ(r, s.retired, w.retired);
    const opool__hot *c = (const opool__hot *)(const void *)r->p;
    RIG_EQ(r, c->nslots, model_records(m));
    for (uint32_t k = m->count; k < m->limit && !r->broken; k++)
        RIG_EQ(r, c->roster[k], m->roster[k]);
    for (uint32_t i = 0; i < model_records(m) && !r->broken; i++)
        RIG_EQ(r, c->slot[i].gen, m->gen[i]);
    if (r->broken) fprintf(stderr, "    after %s\n", after);
}

/* Create the pool (the first allocation) and its model. False if create
 * failed, which must then be OPOOL_ENOMEM with nothing allocated. */
static bool rig_create(rig *r, const opool_desc *d, uint64_t fail_at, bool fail_after) {
    memset(r, 0, sizeof *r);
    faulty_reset(&r->mem, fail_at, fail_after);
    r->d = *d;
    r->d.allocator.alloc = faulty_alloc;
    r->d.allocator.free = faulty_free;
    r->d.allocator.ctx = &r->mem;
    r->d.report = rig_report;
    r->d.flags |= OPOOL_REPORT_UNRATIONED; /* every report counted */
    r->d.user = r;
    if (r->d.fini) r->d.fini = rig_fini;
    if (r->d.salt == 0) r->d.salt = 0x1234567u;
    r->p = (opool *)&r->mem;
    opool_status s = opool_create(&r->p, &r->d);
    if (s != OPOOL_OK) {
        CHECK_EQ_U64(s, OPOOL_ENOMEM);
        CHECK(r->p == NULL);
        CHECK(r->mem.failures > 0);
        faulty_balanced(&r->mem);
        return false;
    }
    if (!model_init(&r->m, &r->d, r->d.salt)) abort();
    r->addr = (unsigned char **)calloc(r->m.max, sizeof *r->addr);
    if (!r->addr) abort();
    rig_compare(r, "create");
    return true;
}

/* fini on every live object, then nothing outstanding. */
static void rig_destroy(rig *r) {
    uint32_t live = r->m.count;
    r->fini_calls = 0;
    opool_destroy(r->p);
    if (r->d.fini) CHECK_EQ_U64(r->fini_calls, live);
    faulty_balanced(&r->mem);
    model_fini(&r->m);
    free(r->addr);
    r->p = NULL;
}

/* Storage the pool added during a call that failed: the model adds as many
 * chunks (always the lowest missing ones, as the pool must). */
static void rig_sync_grows(rig *r, uint64_t grows_before) {
    opool_stats s;
    opool_get_stats(r->p, &s);
    RIG_CHECK(r, s.grows >= grows_before);
    for (uint64_t k = grows_before; k < s.grows && !r->broken; k++) {
        uint32_t c = model__missing_chunk(&r->m);
        RIG_CHECK(r, c != MODEL_NOPOS);
        if (c != MODEL_NOPOS) model__add_chunk(&r->m, c);
    }
}

static void rig_new_object(rig *r, unsigned char *obj, uint64_t bits) {
    uint32_t i = (uint32_t)bits;
    if (r->addr[i] == NULL) r->addr[i] = obj;
    RIG_EQ(r, (uintptr_t)r->addr[i], (uintptr_t)obj);
    fill(r, obj, bits);
}

static void rig_forget_released(rig *r, const bool *was) {
    for (uint32_t c = 0; c < r->m.nchunks; c++)
        if (was[c] && !r->m.present[c])
            for (uint32_t i = r->m.lo[c]; i < r->m.hi[c]; i++) r->addr[i] = NULL;
}

/* One alloc; a failure must be an injected one, counted and reported. */
static void rig_alloc(rig *r) {
    if (r->broken) return;
    model_begin(&r->m);
    opool_stats before;
    opool_get_stats(r->p, &before);
    uint64_t failures = r->mem.failures;
    uint32_t reports = r->reports;
    opool_handle h = {0x77};
    unsigned char *obj = (unsigned char *)opool_alloc(r->p, &h);
    uint64_t want;
    if (obj != NULL) {
        RIG_CHECK(r, model_alloc(&r->m, &want));
        RIG_EQ(r, h.bits, want);
        rig_new_object(r, obj, h.bits);
    } else {
        RIG_EQ(r, h.bits, 0);
        rig_sync_grows(r, before.grows);
        opool_full_policy policy = r->m.policy;
        r->m.policy = OPOOL_FULL_FAIL; /* the model must fail too, without growing */
        RIG_CHECK(r, !model_alloc(&r->m, &want));
        r->m.policy = policy;
        /* full for real (at max_capacity), or an injected failure */
        RIG_CHECK(r, r->mem.failures > failures || model__missing_chunk(&r->m) == MODEL_NOPOS);
        /* reported at the episode's 1st, 2nd, 4th, 8th... failure */
        bool reported = (r->m.episode & (r->m.episode - 1)) == 0;
        RIG_EQ(r, r->reports, reports + (reported ? 1 : 0));
        if (reported) RIG_EQ(r, r->last_report, OPOOL_EFULL);
    }
    rig_compare(r, "alloc");
}

static void rig_alloc_at(rig *r, uint32_t index, uint32_t gen) {
    if (r->broken) return;
    model_begin(&r->m);
    opool_stats before;
    opool_get_stats(r->p, &before);
    opool_handle h = {(uint64_t)gen << 32 | index};
    unsigned char *obj = (unsigned char *)opool_alloc_at(r->p, h);
    if (obj != NULL) {
        RIG_CHECK(r, model_alloc_at(&r->m, h.bits));
        rig_new_object(r, obj, h.bits);
    } else {
        /* storage it added stays, free; the slot is then reachable or not */
        rig_sync_grows(r, before.grows);
        if ((gen & 1) && index < r->m.max) { /* else it returns at once */
            if (model_has_storage(&r->m, index)) RIG_CHECK(r, !model_alloc_at(&r->m, h.bits));
        }
    }
    rig_compare(r, "alloc_at");
}

static void rig_free_at(rig *r, uint32_t k) {
    if (r->broken || r->m.count == 0) return;
    model_begin(&r->m);
    uint64_t bits = model_live_handle(&r->m, k % r->m.count);
    opool_handle h = {bits};
    RIG_EQ(r, opool_free(r->p, h), model_free(&r->m, bits));
    rig_compare(r, "free");
}

static void rig_free_all(rig *r) {
    while (r->m.count > 0 && !r->broken) rig_free_at(r, r->m.count - 1);
}

static void rig_shrink(rig *r) {
    if (r->broken) return;
    model_begin(&r->m);
    bool was[MODEL_MAX_CHUNKS];
    memcpy(was, r->m.present, sizeof was);
    RIG_EQ(r, opool_shrink(r->p), model_shrink(&r->m));
    rig_forget_released(r, was);
    rig_compare(r, "shrink");
}

/* ---- model helpers ------------------------------------------------------- */

/* Usable slots the model would have with every chunk present. */
static uint32_t model_capacity_full(const model *m) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < m->max; i++) n += !m->retired[i];
    return n;
}

/* ---- scenarios ------------------------------------------------------------ */

typedef void (*scenario_fn)(rig *r);

/* Run scenario s on a pool from d with the N-th allocation failing, for
 * every N up to the first run that asks for fewer than N allocations. Both
 * modes. Returns the number of runs. */
static uint32_t every_n(const opool_desc *d, scenario_fn s, const char *name) {
    uint32_t runs = 0;
    for (int mode = 0; mode < 2; mode++) {
        for (uint64_t n = 1;; n++) {
            rig *r = (rig *)calloc(1, sizeof *r);
            if (!r) abort();
            runs++;
            bool created = rig_create(r, d, n, mode == 1);
            if (created) {
                s(r);
                if (r->broken)
                    fprintf(stderr, "    scenario %s, allocation %llu failing%s\n", name,
                            (unsigned long long)n, mode ? " and every later one" : "");
                rig_destroy(r);
            }
            /* no failure happened: the scenario asks for fewer than n allocations */
            bool done = r->mem.failures == 0 || r->broken;
            free(r);
            if (done) break;
        }
    }
    return runs;
}

/* Allocate up to max_capacity and past it, free some, allocate again. */
static void scenario_grow_to_max(rig *r) {
    for (uint32_t k = 0; k < r->m.max + 8 && !r->broken; k++) rig_alloc(r);
    for (uint32_t k = 0; k < 40 && !r->broken; k++) rig_free_at(r, k * 7);
    for (uint32_t k = 0; k < 50 && !r->broken; k++) rig_alloc(r);
    /* whatever failed on the way, the pool reaches max_capacity now */
    r->mem.fail_at = 0;
    for (uint32_t k = 0; k < r->m.max + 2 && !r->broken; k++) rig_alloc(r);
    RIG_EQ(r, r->m.count, model_capacity_full(&r->m));
}

/* alloc_at far beyond the storage: several chunks added by one call. */
static void scenario_alloc_at_growth(rig *r) {
    uint32_t max = r->m.max, g = r->m.gen0 + 1;
    rig_alloc_at(r, max - 1, g);
    rig_alloc_at(r, 1, g + 2);
    rig_alloc_at(r, max / 2, g);
    rig_alloc_at(r, max, g); /* beyond: NULL without growth */
    for (uint32_t k = 0; k < 10 && !r->broken; k++) rig_alloc(r);
    rig_free_all(r);
    rig_shrink(r);
    rig_alloc_at(r, max - 2, g + 4); /* regrow every chunk */
    rig_alloc_at(r, max / 3, g + 6);
    r->mem.fail_at = 0;
    rig_alloc_at(r, max - 1, g + 8);
    rig_alloc_at(r, max / 2 + 1, g);
    RIG_CHECK(r, r->m.count >= 2);
}

/* Grow, give storage back, grow again (the slot arrays stay: regrowth may
 * allocate only chunks), with objects left in chunk 0 and in a top chunk. */
static void scenario_shrink_regrow(rig *r) {
    for (uint32_t k = 0; k < r->m.max && !r->broken; k++) rig_alloc(r);
    while (r->m.count > 1 && !r->broken) rig_free_at(r, 0);
    rig_shrink(r);
    for (uint32_t k = 0; k < r->m.max && !r->broken; k++) rig_alloc(r);
    for (uint32_t k = 0; k < r->m.max / 2 && !r->broken; k++) rig_free_at(r, k * 3);
    rig_shrink(r);
    for (uint32_t k = 0; k < r->m.max / 2 && !r->broken; k++) rig_alloc(r);
    rig_free_all(r);
    rig_shrink(r);
    rig_shrink(r);
    r->mem.fail_at = 0;
    for (uint32_t k = 0; k < 20 && !r->broken; k++) rig_alloc(r);
}

/* Growth that adds a chunk whose slots are all retired must go on to the
 * next chunk in the same call, so a failure can land between the two. */
static void scenario_retired_chunk(rig *r) {
    uint32_t last = r->m.gen0 - 1; /* freeing this generation retires the slot */
    for (uint32_t k = 0; k < 3 && !r->broken; k++) rig_alloc(r); /* chunk 1 = [2, 4) */
    rig_free_all(r);
    rig_alloc_at(r, 2, last);
    rig_free_at(r, 0);
    rig_alloc_at(r, 3, last);
    rig_free_at(r, 0);
    /* unless a failure came first: the setup then takes another path */
    if (r->mem.failures == 0) RIG_EQ(r, r->m.retired_count, 2);
    rig_shrink(r); /* chunk 1: retired slots only */
    for (uint32_t k = 0; k < r->m.max && !r->broken; k++) rig_alloc(r);
    r->mem.fail_at = 0;
    for (uint32_t k = 0; k < r->m.max && !r->broken; k++) rig_alloc(r);
    RIG_EQ(r, r->m.count, model_capacity_full(&r->m));
}

/* A fixed pool allocates once, at create. */
static void scenario_fixed(rig *r) {
    for (uint32_t k = 0; k < r->m.max + 2 && !r->broken; k++) rig_alloc(r);
    rig_free_all(r);
    rig_shrink(r);
    rig_alloc_at(r, 0, r->m.gen0 + 5);
}

static opool_desc grow_desc(uint32_t capacity, uint32_t max, uint32_t flags, bool fini) {
    opool_desc d;
    memset(&d, 0, sizeof d);
    d.object_size = 24;
    d.capacity = capacity;
    d.max_capacity = max;
    d.on_full = OPOOL_FULL_GROW;
    d.flags = flags;
    if (fini) d.fini = rig_fini;
    return d;
}

TEST(create_fails_with_enomem_and_leaves_nothing) {
    opool_desc d = grow_desc(100, 0, 0, false);
    d.on_full = OPOOL_FULL_FAIL;
    rig *r = (rig *)calloc(1, sizeof *r);
    REQUIRE(r != NULL);
    CHECK(!rig_create(r, &d, 1, false));
    CHECK_EQ_U64(r->mem.calls, 1);
    CHECK(rig_create(r, &d, 2, false)); /* create allocates exactly once */
    CHECK_EQ_U64(r->mem.calls, 1);
    rig_destroy(r);
    free(r);
}

/* A growth past 358M slots needs slot arrays that a 32-bit size_t cannot
 * count (12 bytes a slot): opool__reserve_slots refuses it without asking
 * the allocator, where the wrapped size once asked for a small block. On 64
 * bits it asks (this allocator refuses), and the pool is as it was. */
TEST(growth_refuses_slot_arrays_a_size_t_cannot_hold) {
    faulty f;
    faulty_reset(&f, 0, false);
    opool_desc d = grow_desc(16, 400000000u, 0, false);
    d.object_size = 0; /* an id-only pool: no objects to count */
    d.allocator.alloc = faulty_alloc;
    d.allocator.free = faulty_free;
    d.allocator.ctx = &f;
    opool *p = NULL;
    REQUIRE(opool_create(&p, &d) == OPOOL_OK);
    uint64_t calls = f.calls;
    f.fail_at = calls + 1;
    CHECK(!opool__reserve_slots(p, 400000000u));
    CHECK_EQ_U64(f.calls - calls, SIZE_MAX <= UINT32_MAX ? 0 : 1);
    char why[256];
    CHECK(opool__check(p, why, sizeof why));
    CHECK(opool_alloc(p, NULL) != NULL);
    opool_clear(p);
    opool_destroy(p);
    faulty_balanced(&f);
}

TEST(fixed_pool_survives_every_failure) {
    opool_desc d = grow_desc(40, 0, 0, true);
    d.on_full = OPOOL_FULL_FAIL;
    CHECK(every_n(&d, scenario_fixed, "fixed") >= 2);
}

TEST(growth_to_max_survives_every_failure) {
    opool_desc d = grow_desc(3, 100, 0, false);
    uint32_t runs = every_n(&d, scenario_grow_to_max, "grow_to_max");
    CHECK(runs > 10);
    printf("growth_to_max: %u runs\n", runs);
}

TEST(growth_with_hooks_survives_every_failure) {
    opool_desc d = grow_desc(5, 77, OPOOL_POISON | OPOOL_ZERO, true);
    CHECK(every_n(&d, scenario_grow_to_max, "grow_to_max hooks") > 10);
}

TEST(alloc_at_growth_survives_every_failure) {
    opool_desc d = grow_desc(2, 300, 0, true);
    CHECK(every_n(&d, scenario_alloc_at_growth, "alloc_at_growth") > 10);
    opool_desc e = grow_desc(64, 1000, OPOOL_RETIRE_ON_WRAP, false);
    CHECK(every_n(&e, scenario_alloc_at_growth, "alloc_at_growth retire") > 5);
}

TEST(shrink_and_regrow_survive_every_failure) {
    opool_desc d = grow_desc(4, 130, 0, false);
    CHECK(every_n(&d, scenario_shrink_regrow, "shrink_regrow") > 10);
    opool_desc e = grow_desc(1, 33, OPOOL_ZERO, true);
    CHECK(every_n(&e, scenario_shrink_regrow, "shrink_regrow hooks") > 10);
}

static void silent_report(opool *p, opool_status what, opool_handle h, void *user) {
    (void)p, (void)what, (void)h, (void)user;
}

TEST(growth_past_a_retired_chunk_survives_every_failure) {
    opool_desc d = grow_desc(2, 16, OPOOL_RETIRE_ON_WRAP, true);
    CHECK(every_n(&d, scenario_retired_chunk, "retired_chunk") > 4);
}

/* create_in makes no allocation; the first growth is the first allocation. */
TEST(create_in_then_growth_survives_every_failure) {
    for (int mode = 0; mode < 2; mode++) {
        for (uint64_t n = 1; n < 64; n++) {
            opool_desc d = grow_desc(4, 64, 0, false);
            faulty mem;
            faulty_reset(&mem, n, mode == 1);
            d.allocator.alloc = faulty_alloc;
            d.allocator.free = faulty_free;
            d.allocator.ctx = &mem;
            d.report = silent_report;
            d.salt = 99;
            size_t need = opool_required_bytes(&d);
            REQUIRE(need != 0);
            void *buf = malloc(need);
            REQUIRE(buf != NULL);
            opool *p = NULL;
            CHECK_EQ_U64(opool_create_in(&p, buf, need, &d), OPOOL_OK);
            CHECK_EQ_U64(mem.calls, 0);
            uint32_t got = 0;
            for (int k = 0; k < 80; k++) {
                if (opool_alloc(p, NULL) != NULL) got++;
                char why[256];
                if (!opool__check(p, why, sizeof why)) {
                    fprintf(stderr, "    opool__check: %s (n %llu)\n", why, (unsigned long long)n);
                    CHECK(!"opool__check");
                    break;
                }
            }
            CHECK_EQ_U64(opool_count(p), got);
            CHECK(got >= 4);
            if (mem.failures == 0) CHECK_EQ_U64(got, 64);
            opool_destroy(p);
            faulty_balanced(&mem);
            free(buf);
            if (mem.failures == 0) break;
        }
    }
}

/* ---- the checker itself -------------------------------------------------- */

/* opool__check is the oracle of every test here and of the fuzzers: each
 * corruption below must make it fail (and say why), and undoing it must make
 * it pass again. */
#define CORRUPT(type, what, field, value)                                                          \
    do {                                                                                           \
        char why_[256] = "";                                                                       \
        type keep_ = (field);                                                                      \
        (field) = (value);                                                                         \
        bool ok_ = opool__check(p, why_, sizeof why_);                                             \
        (field) = keep_;                                                                           \
        if (ok_) fprintf(stderr, "    opool__check missed: %s\n", what);                           \
        CHECK(!ok_ && why_[0] != '\0');                                                            \
        CHECK(opool__check(p, NULL, 0));                                                           \
    } while (0)

TEST(check_catches_each_corruption) {
    opool_desc d = grow_desc(4, 100, OPOOL_RETIRE_ON_WRAP, false);
    d.report = silent_report;
    d.salt = 1000;
    opool *p = NULL;
    REQUIRE(opool_create(&p, &d) == OPOOL_OK);
    opool_handle h[40];
    for (int k = 0; k < 40; k++) REQUIRE(opool_alloc(p, &h[k]) != NULL);
    for (int k = 0; k < 40; k += 3) REQUIRE(opool_free(p, h[k]) == OPOOL_OK);
    opool_handle last = {(uint64_t)(1000u - 1u) << 32 | 63}; /* retires when freed */
    REQUIRE(opool_alloc_at(p, last) != NULL);
    REQUIRE(opool_free(p, last) == OPOOL_OK);
    REQUIRE(opool_free(p, h[1]) == OPOOL_OK);
    char why[256];
    REQUIRE(opool__check(p, why, sizeof why));
    opool__hot *c = (opool__hot *)(void *)p;
    REQUIRE(p->retired == 1 && p->nchunks == 6);
    REQUIRE(c->base[4] != NULL && c->base[5] == NULL); /* chunk 5 = [64, 100) */
    uint32_t live = opool_handle_index(opool_live_handle(p, 0));
    uint32_t free_top = c->roster[c->count + 1];

    CORRUPT(uint32_t, "count past limit", c->count, c->limit + 1);
    CORRUPT(uint32_t, "count one more", c->count, c->count + 1);
    CORRUPT(uint32_t, "high water below count", c->high_water, c->count - 1);
    CORRUPT(uint64_t, "allocs below count", c->allocs, c->count - 1);
    CORRUPT(uint32_t, "limit", c->limit, c->limit - 1);
    CORRUPT(uint32_t, "nslots", c->nslots, c->nslots - 1);
    CORRUPT(uint32_t, "first", c->first, c->first + 1);
    CORRUPT(size_t, "stride", c->stride, c->stride + 1);
    CORRUPT(uint32_t, "fast_limit", c->fast_limit, c->fast_limit + 1);
    CORRUPT(uint32_t, "free_limit", c->free_limit, c->nslots + 1);
    CORRUPT(uint32_t, "live slot made free", c->slot[live].gen, c->slot[live].gen + 1);
    CORRUPT(uint32_t, "free slot made live", c->slot[free_top].gen, c->slot[free_top].gen | 1);
    CORRUPT(uint32_t, "position", c->slot[live].pos, c->slot[free_top].pos);
    CORRUPT(uint32_t, "roster entry", c->roster[0], c->roster[1]);
    CORRUPT(uint32_t, "retired slot's generation", c->slot[63].gen, 1002);
    CORRUPT(uint32_t, "retired count", p->retired, 0);
    CORRUPT(uint32_t, "retired marker", c->slot[63].pos, OPOOL__UNBACKED);
    CORRUPT(uint32_t, "unbacked marker in a backed chunk", c->slot[free_top].pos, OPOOL__UNBACKED);
    CORRUPT(char *, "base of chunk 1 misaligned", c->base[1], c->base[1] + 1);
    CORRUPT(char *, "base of an unbacked chunk", c->base[5], (char *)(uintptr_t)64);
    CORRUPT(char *, "base beyond the chunks", c->base[6], (char *)(uintptr_t)64);
    CORRUPT(char *, "base[0]", c->base[0], NULL);
    CORRUPT(uint32_t, "gen0 odd", p->gen0, p->gen0 | 1);
    CORRUPT(uint32_t, "nchunks", p->nchunks, p->nchunks + 1);
    CORRUPT(uint32_t, "slot_cap", p->slot_cap, c->nslots - 1);
    CORRUPT(uint32_t, "max_capacity", p->max_capacity, c->nslots - 1);
    CORRUPT(bool, "checker flag", p->checker, !p->checker);
    CHECK(!opool__check(NULL, why, sizeof why));
    opool_destroy(p);
}

/* ---- load ------------------------------------------------------------------ */

#ifdef OPOOL_TEST_HAVE_LOAD

typedef struct membuf {
    unsigned char *data;
    size_t size, cap, at;
} membuf;

static size_t membuf_write(void *ctx, const void *data, size_t size) {
    membuf *b = (membuf *)ctx;
    if (size > b->cap - b->size) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap - b->size < size) cap *= 2;
        unsigned char *d = (unsigned char *)realloc(b->data, cap);
        if (!d) return 0;
        b->data = d;
        b->cap = cap;
    }
    memcpy(b->data + b->size, data, size);
    b->size += size;
    return size;
}

static size_t membuf_read(void *ctx, void *data, size_t size) {
    membuf *b = (membuf *)ctx;
    if (size > b->size - b->at) size = b->size - b->at;
    memcpy(data, b->data + b->at, size);
    b->at += size;
    return size;
}

/* Two pools hold the same state: counts, roster, generations, objects. */
static bool same_pools(const opool *a, const opool *b, size_t size) {
    const opool__hot *x = (const opool__hot *)(const void *)a;
    const opool__hot *y = (const opool__hot *)(const void *)b;
    bool ok = true;
    CHECK_EQ_U64(opool_count(a), opool_count(b));
    CHECK_EQ_U64(opool_capacity(a), opool_capacity(b));
    ok = ok && opool_count(a) == opool_count(b) && opool_capacity(a) == opool_capacity(b);
    for (uint32_t k = 0; ok && k < opool_count(a); k++) {
        opool_handle h = opool_live_handle(a, k);
        CHECK_EQ_U64(h.bits, opool_live_handle(b, k).bits);
        const void *oa = opool_get(a, h), *ob = opool_get(b, h);
        CHECK(oa && ob && memcmp(oa, ob, size) == 0);
        ok = ok && h.bits == opool_live_handle(b, k).bits && oa && ob && memcmp(oa, ob, size) == 0;
    }
    CHECK_EQ_U64(x->nslots, y->nslots);
    for (uint32_t i = 0; ok && i < x->nslots && i < y->nslots; i++) {
        CHECK_EQ_U64(x->slot[i].gen, y->slot[i].gen);
        ok = ok && x->slot[i].gen == y->slot[i].gen;
    }
    opool_stats s, t;
    opool_get_stats(a, &s);
    opool_get_stats(b, &t);
    CHECK_EQ_U64(s.count, t.count);
    CHECK_EQ_U64(s.high_water, t.high_water);
    CHECK_EQ_U64(s.allocs, t.allocs);
    CHECK_EQ_U64(s.retired, t.retired);
    return ok;
}

/* The same operations on two pools give the same results. */
static void same_behaviour(opool *a, opool *b, size_t size, uint32_t steps) {
    uint64_t x = 0x2545F4914F6CDD1Du;
    for (uint32_t k = 0; k < steps; k++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        /* every read of one pool's list made of the other's too: a read ends
         * the undo of the last free (opool.h, HOW IT WORKS) */
        uint32_t n = opool_count(a);
        CHECK_EQ_U64(opool_count(b), n);
        if (x % 3 != 0 || n == 0) {
            opool_handle ha, hb;
            void *oa = opool_alloc(a, &ha), *ob = opool_alloc(b, &hb);
            CHECK_EQ_U64(oa != NULL, ob != NULL);
            CHECK_EQ_U64(ha.bits, hb.bits);
            if (oa && ob) {
                memset(oa, (int)k, size);
                memset(ob, (int)k, size);
            }
        } else {
            opool_handle h = opool_live_handle(a, (uint32_t)(x >> 8) % n);
            CHECK_EQ_U64(opool_live_handle(b, (uint32_t)(x >> 8) % n).bits, h.bits);
            CHECK_EQ_U64(opool_free(a, h), opool_free(b, h));
        }
    }
    char why[256];
    if (!opool__check(b, why, sizeof why)) {
        fprintf(stderr, "    opool__check of the loaded pool after use: %s\n", why);
        CHECK(!"opool__check");
    }
    same_pools(a, b, size);
}

/* Pools of several kinds to save: fixed, grown with holes, shrunk, retired. */
static opool *build_saved_pool(int kind, opool_desc *d) {
    memset(d, 0, sizeof *d);
    d->report = silent_report; /* full pools are expected */
    d->object_size = 20;
    d->salt = 0xABCD0000u + (uint32_t)kind;
    d->capacity = 8;
    if (kind >= 1) {
        d->on_full = OPOOL_FULL_GROW;
        d->max_capacity = 200;
    }
    if (kind == 3) d->flags = OPOOL_RETIRE_ON_WRAP;
    opool *p = NULL;
    if (opool_create(&p, d) != OPOOL_OK) return NULL;
    uint32_t n = kind == 0 ? 6 : 150;
    for (uint32_t k = 0; k < n; k++) {
        opool_handle h;
        unsigned char *o = (unsigned char *)opool_alloc(p, &h);
        if (o) memset(o, (int)(k * 37 + 1), d->object_size);
    }
    for (uint32_t k = 0; k < n; k += 3)
        (void)opool_free(p, opool_live_handle(p, k % opool_count(p)));
    if (kind == 2) {
        while (opool_count(p) > 5) (void)opool_free(p, opool_live_handle(p, opool_count(p) - 1));
        (void)opool_shrink(p);
    }
    if (kind == 3) {
        opool_handle h = {(uint64_t)((d->salt & ~1u) - 1) << 32 | 190}; /* retires on free */
        if (opool_alloc_at(p, h)) (void)opool_free(p, h);
    }
    return p;
}

TEST(load_survives_every_failure) {
    for (int kind = 0; kind < 4; kind++) {
        opool_desc d;
        opool *src = build_saved_pool(kind, &d);
        REQUIRE(src != NULL);
        membuf img = {0};
        CHECK_EQ_U64(opool_save(src, membuf_write, &img), OPOOL_OK);
        uint32_t enomem = 0, loaded = 0;
        for (int mode = 0; mode < 2; mode++) {
            for (uint64_t n = 1; n < 1000; n++) {
                faulty mem;
                faulty_reset(&mem, n, mode == 1);
                opool_desc ld = d;
                ld.allocator.alloc = faulty_alloc;
                ld.allocator.free = faulty_free;
                ld.allocator.ctx = &mem;
                img.at = 0;
                opool *p = (opool *)&mem;
                opool_status s = opool_load(&p, &ld, membuf_read, &img);
                if (s != OPOOL_OK) {
                    enomem++;
                    CHECK_EQ_U64(s, OPOOL_ENOMEM);
                    CHECK(p == NULL);
                    CHECK(mem.failures > 0);
                    faulty_balanced(&mem);
                    if (s != OPOOL_ENOMEM) break;
                    continue;
                }
                loaded++;
                mem.fail_at = 0; /* from here on the loaded pool must simply work */
                char why[256];
                if (!opool__check(p, why, sizeof why)) {
                    fprintf(stderr, "    opool__check after load (kind %d, n %llu): %s\n", kind,
                            (unsigned long long)n, why);
                    CHECK(!"opool__check");
                }
                same_pools(src, p, d.object_size);
                /* the loaded pool keeps working, growth included (and it may fail) */
                opool *twin = NULL;
                membuf again = {0};
                if (mem.failures == 0 && opool_save(src, membuf_write, &again) == OPOOL_OK) {
                    opool_desc td = d;
                    again.at = 0;
                    if (opool_load(&twin, &td, membuf_read, &again) == OPOOL_OK) {
                        same_behaviour(twin, p, d.object_size, 300);
                        opool_destroy(twin);
                    }
                }
                free(again.data);
                opool_destroy(p);
                faulty_balanced(&mem);
                if (mem.failures == 0) break;
            }
        }
        /* every allocation of a load failed once in each mode, then one load got through */
        CHECK(enomem >= 4);
        CHECK_EQ_U64(loaded, 2);
        free(img.data);
        opool_destroy(src);
    }
}

/* save_object's bytes are staged in memory from the pool's allocator. */
static bool save_len_prefixed(const void *obj, opool_write_fn write, void *wctx, void *user) {
    (void)user;
    const unsigned char *b = (const unsigned char *)obj;
    size_t n = 1 + b[0] % 19;
    return write(wctx, b, n) == n;
}

static bool load_len_prefixed(void *obj, const void *data, size_t size, void *user) {
    (void)user;
    const unsigned char *d = (const unsigned char *)data;
    if (size == 0 || size != 1 + d[0] % 19u) return false;
    memcpy(obj, data, size);
    return true;
}

TEST(save_survives_every_failure) {
    faulty mem;
    faulty_reset(&mem, 0, false);
    opool_desc d;
    memset(&d, 0, sizeof d);
    d.object_size = 20;
    d.capacity = 64;
    d.salt = 77;
    d.save_object = save_len_prefixed;
    d.load_object = load_len_prefixed;
    d.allocator.alloc = faulty_alloc;
    d.allocator.free = faulty_free;
    d.allocator.ctx = &mem;
    opool *p = NULL;
    REQUIRE(opool_create(&p, &d) == OPOOL_OK);
    for (uint32_t k = 0; k < 50; k++) {
        unsigned char *o = (unsigned char *)opool_alloc(p, NULL);
        REQUIRE(o != NULL);
        for (int i = 0; i < 20; i++) o[i] = (unsigned char)(k * 3 + (uint32_t)i);
    }
    char path[256];
    snprintf(path, sizeof path, "test_faults.%u.img", (unsigned)mem.calls);
    uint32_t enomem = 0;
    for (int mode = 0; mode < 2; mode++) {
        for (uint64_t n = 1; n < 100; n++) {
            uint32_t blocks = mem.nlive;
            size_t bytes = mem.bytes;
            mem.fail_at = mem.calls + n;
            mem.fail_after = mode == 1;
            mem.failures = 0;
            membuf img = {0};
            opool_status s = opool_save(p, membuf_write, &img);
            opool_status f = opool_save_file(p, path);
            CHECK(s == OPOOL_OK || s == OPOOL_ENOMEM);
            CHECK(f == OPOOL_OK || f == OPOOL_ENOMEM);
            enomem += (s == OPOOL_ENOMEM) + (f == OPOOL_ENOMEM);
            CHECK_EQ_U64(mem.nlive, blocks); /* nothing kept, whatever happened */
            CHECK_EQ_U64(mem.bytes, bytes);
            CHECK_EQ_U64(mem.bad_frees, 0);
            mem.fail_at = 0;
            if (s == OPOOL_OK) { /* the image is whole: it loads back */
                img.at = 0;
                opool *q = NULL;
                opool_desc ld = d;
                ld.allocator.alloc = NULL;
                ld.allocator.free = NULL;
                ld.allocator.ctx = NULL;
                CHECK_EQ_U64(opool_load(&q, &ld, membuf_read, &img), OPOOL_OK);
                if (q) same_pools(p, q, 0);
                opool_destroy(q);
            }
            free(img.data);
            if (mem.failures == 0) break;
        }
    }
    remove(path);
    CHECK(enomem >= 2);
    opool_destroy(p);
    faulty_balanced(&mem);
}

#endif /* OPOOL_TEST_HAVE_LOAD */

int main(void) {
    RUN(create_fails_with_enomem_and_leaves_nothing);
    RUN(growth_refuses_slot_arrays_a_size_t_cannot_hold);
    RUN(fixed_pool_survives_every_failure);
    RUN(growth_to_max_survives_every_failure);
    RUN(growth_with_hooks_survives_every_failure);
    RUN(alloc_at_growth_survives_every_failure);
    RUN(shrink_and_regrow_survive_every_failure);
    RUN(growth_past_a_retired_chunk_survives_every_failure);
    RUN(create_in_then_growth_survives_every_failure);
    RUN(check_catches_each_corruption);
#ifdef OPOOL_TEST_HAVE_LOAD
    RUN(load_survives_every_failure);
    RUN(save_survives_every_failure);
#else
    printf("load and save tests: skipped (no opool_load in this build)\n");
#endif
    return test_summary();
}
