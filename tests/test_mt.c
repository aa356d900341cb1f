/*
 * test_mt.c -- the concurrent pool used by one thread: every behaviour of
 * include/opool_mt.h and docs/CONCURRENCY.md section 2, one per test, exact
 * results; then a randomized differential test against the reference model
 * of the sequential semantics (tests/mt_model.h).
 *
 * Most pools here use salt 0x1000: every slot starts at generation 0x1000,
 * so a slot's first handle has generation 0x1001 and the arithmetic in the
 * expectations is visible. Every test that builds a pool runs the pool's
 * own invariant checker (opool__mt_check) on it before destroying it.
 *
 *     test_mt                          every test (the differential one with its default seeds)
 *     test_mt diff SEEDS [OPS [SEED]]  only the differential test: SEEDS seeds of OPS
 *                                      operations, or only SEED (TEST_MT_TRACE=1: print each op)
 */
#if !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#endif

#include "opool.h"
#include "opool_mt.h"
#include "mt_check.h" /* opool__mt_check, opool__mt_set_gen: test support */
#include "mt_model.h"
#include "opool_platform.h" /* opool__now_ns */
#include "counting.h"
#include "helpers.h"
#include "test.h"

#include <inttypes.h>
#include <stdalign.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SALT 0x1000u
#define G0 0x1000u /* every slot's first (free) generation with SALT */
#define G1 0x1001u /* first live generation of every slot with SALT */
#define POISON_WORD 0x1deadb0bu

/* ---- helpers ------------------------------------------------------------ */

/* A pool with SALT and a report that keeps stderr quiet. */
static opool_desc desc_of(size_t object_size, uint32_t capacity) {
    return quiet_desc(object_size, capacity, SALT);
}

static opool_mt *create(const opool_desc *d) {
    opool_mt *p = NULL;
    if (opool_mt_create(&p, d) != OPOOL_OK) return NULL;
    return p;
}

static opool_mt *make_pool(size_t object_size, uint32_t capacity) {
    opool_desc d = desc_of(object_size, capacity);
    return create(&d);
}

static opool_mt_stats stats_of(const opool_mt *p) {
    opool_mt_stats s;
    opool_mt_get_stats(p, &s);
    return s;
}

/* The pool's invariant checker, at quiescence. */
static void check_mt_at(const opool_mt *p, int line) {
    char why[256] = "opool__mt_check";
    if (!opool__mt_check(p, why, sizeof why)) test__fail_at(__FILE__, line, why, 0, 0, 0);
}
#define CHECK_MT(p) check_mt_at(p, __LINE__)

/* CHECK that h is index's handle with generation gen. */
static void check_handle_at(opool_handle h, uint32_t gen, uint32_t index, int line) {
    if (h.bits != handle(gen, index).bits)
        test__fail_at(__FILE__, line, "handle is (gen, index)", h.bits, handle(gen, index).bits, 1);
}
#define CHECK_HANDLE(h, gen, index) check_handle_at(h, gen, index, __LINE__)

/* Everything the callbacks saw. */
typedef struct recorder {
    size_t size; /* object bytes init looks at */
    int inits, finis, reports;
    int init_saw_zero; /* init calls that found the object all zero */
    int efull, write_after_free;
    int reports_with_pool; /* reports whose pool argument was not NULL */
    void *last_init, *last_fini;
    opool_status last_what;
    opool_handle last_report_handle;
} recorder;

static void rec_init(void *obj, void *user) {
    recorder *r = user;
    const unsigned char *b = obj;
    int zero = 1;
    for (size_t k = 0; k < r->size; k++) zero &= b[k] == 0;
    r->init_saw_zero += zero;
    r->inits++;
    r->last_init = obj;
    memset(obj, 0x5A, r->size);
}

static void rec_fini(void *obj, void *user) {
    recorder *r = user;
    r->finis++;
    r->last_fini = obj;
}

static void rec_report(opool *p, opool_status what, opool_handle h, void *user) {
    recorder *r = user;
    r->reports++;
    r->reports_with_pool += p != NULL;
    r->efull += what == OPOOL_EFULL;
    r->write_after_free += what == OPOOL_EWRITE_AFTER_FREE;
    r->last_what = what;
    r->last_report_handle = h;
}

static opool_desc recorded_desc(size_t object_size, uint32_t capacity, recorder *r) {
    opool_desc d = desc_of(object_size, capacity);
    memset(r, 0, sizeof *r);
    r->size = object_size;
    d.report = rec_report;
    d.flags |= OPOOL_REPORT_UNRATIONED; /* every report counted */
    d.user = r;
    return d;
}

/* The handles of n allocs, in order; OPOOL_NULL for a failed one. */
static void alloc_n(opool_mt *p, uint32_t n, opool_handle *out) {
    for (uint32_t k = 0; k < n; k++) {
        opool_handle h;
        void *obj = opool_mt_alloc(p, &h);
        out[k] = obj ? h : OPOOL_NULL;
    }
}

static void cache_alloc_n(opool_mt_cache *c, uint32_t n, opool_handle *out) {
    for (uint32_t k = 0; k < n; k++) {
        opool_handle h;
        void *obj = opool_mt_cache_alloc(c, &h);
        out[k] = obj ? h : OPOOL_NULL;
    }
}

/* The index of the next opool_mt_alloc (UINT32_MAX if it fails). */
static uint32_t next_index(opool_mt *p) {
    opool_handle h;
    return opool_mt_alloc(p, &h) ? opool_handle_index(h) : UINT32_MAX;
}

static uint32_t next_cache_index(opool_mt_cache *c) {
    opool_handle h;
    return opool_mt_cache_alloc(c, &h) ? opool_handle_index(h) : UINT32_MAX;
}

/* The clock the waits measure their timeouts on (CLOCK_MONOTONIC; Windows:
 * QueryPerformanceCounter, which the C library converts with its own rounding). */
static uint64_t now_ns(void) { return opool__now_ns(); }

/* ---- creation ----------------------------------------------------------- */

static void check_create_rejects(const opool_desc *d, int line) {
    opool_mt *p = (opool_mt *)(uintptr_t)1;
    opool_status s = opool_mt_create(&p, d);
    if (s != OPOOL_EINVAL || p != NULL) {
        test__fail_at(__FILE__, line, "opool_mt_create gives OPOOL_EINVAL and *out NULL", s,
                      (uint64_t)(uintptr_t)p, 1);
        if (s == OPOOL_OK) opool_mt_destroy(p);
    }
}
#define CHECK_CREATE_REJECTS(d) check_create_rejects(d, __LINE__)

static void check_create_accepts(const opool_desc *d, int line) {
    opool_mt *p = NULL;
    opool_status s = opool_mt_create(&p, d);
    if (s != OPOOL_OK || p == NULL) {
        test__fail_at(__FILE__, line, "opool_mt_create gives OPOOL_OK", s, OPOOL_OK, 1);
        return;
    }
    if (opool_mt_capacity(p) != d->capacity)
        test__fail_at(__FILE__, line, "capacity", opool_mt_capacity(p), d->capacity, 1);
    check_mt_at(p, line);
    opool_mt_destroy(p);
}
#define CHECK_CREATE_ACCEPTS(d) check_create_accepts(d, __LINE__)

TEST(create_rejects_null_out_and_null_desc) {
    opool_desc d = desc_of(8, 4);
    CHECK_EQ_U64(opool_mt_create(NULL, &d), OPOOL_EINVAL);
    CHECK_CREATE_REJECTS(NULL);
    CHECK_EQ_U64(opool_mt_create(NULL, NULL), OPOOL_EINVAL);
}

TEST(create_rejects_zero_size_and_zero_capacity) {
    opool_desc d = desc_of(0, 4);
    CHECK_CREATE_REJECTS(&d);
    d = desc_of(8, 0);
    CHECK_CREATE_REJECTS(&d);
}

TEST(create_rejects_bad_alignment) {
    static const size_t bad[] = {3, 6, 12, 24, 100, 4095, 4097, 8192};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        opool_desc d = desc_of(8, 4);
        d.object_align = bad[k];
        CHECK_CREATE_REJECTS(&d);
    }
    opool_desc d = desc_of(8, 4);
    d.object_align = (size_t)1 << (sizeof(size_t) * 8 - 1);
    CHECK_CREATE_REJECTS(&d);
    d.object_align = 4096;
    CHECK_CREATE_ACCEPTS(&d);
}

TEST(create_rejects_capacity_above_the_maximum) {
    opool_desc d = desc_of(1, UINT32_MAX);
    CHECK_CREATE_REJECTS(&d);
    d = desc_of(1, OPOOL_MAX_CAPACITY + 1);
    CHECK_CREATE_REJECTS(&d);
}

TEST(create_rejects_max_capacity_other_than_zero_or_capacity) {
    opool_desc d = desc_of(8, 10);
    d.max_capacity = 9;
    CHECK_CREATE_REJECTS(&d);
    d.max_capacity = 11;
    CHECK_CREATE_REJECTS(&d);
    d.max_capacity = UINT32_MAX;
    CHECK_CREATE_REJECTS(&d);
    d.max_capacity = 10;
    CHECK_CREATE_ACCEPTS(&d);
    d.max_capacity = 0;
    CHECK_CREATE_ACCEPTS(&d);
}

static opool_handle some_evict(opool *p, void *user) {
    (void)p, (void)user;
    return OPOOL_NULL;
}

TEST(create_rejects_eviction_and_growth_from_a_custom_allocator) {
    opool_desc d = desc_of(8, 10);
    d.on_full = OPOOL_FULL_GROW; /* max_capacity 0 or capacity: fixed, as opool.h's */
    CHECK_CREATE_ACCEPTS(&d);
    d.max_capacity = 10;
    CHECK_CREATE_ACCEPTS(&d);
    counting mem = {0};
    d.allocator = counting_allocator(&mem);
    CHECK_CREATE_ACCEPTS(&d);
    d.max_capacity = 20; /* a growing pool reserves its memory from the system */
    CHECK_CREATE_REJECTS(&d);
    CHECK_EQ_U64(mem.blocks, 0);
    d = desc_of(8, 10);
    d.on_full = OPOOL_FULL_EVICT;
    CHECK_CREATE_REJECTS(&d);
    d.evict = some_evict;
    CHECK_CREATE_REJECTS(&d);
    d = desc_of(8, 10);
    d.on_full = (opool_full_policy)3;
    CHECK_CREATE_REJECTS(&d);
}

TEST(create_rejects_an_evict_callback) {
    opool_desc d = desc_of(8, 4);
    d.evict = some_evict; /* with OPOOL_FULL_FAIL */
    CHECK_CREATE_REJECTS(&d);
}

static bool noop_save(const void *obj, opool_write_fn write, void *wctx, void *user) {
    (void)user;
    return write(wctx, obj, 1) == 1;
}

static bool noop_load(void *obj, const void *data, size_t size, void *user) {
    (void)obj, (void)data, (void)user;
    return size == 1;
}

TEST(create_rejects_save_and_load_callbacks) {
    opool_desc d = desc_of(8, 4);
    d.save_object = noop_save;
    CHECK_CREATE_REJECTS(&d);
    d.load_object = noop_load;
    CHECK_CREATE_REJECTS(&d);
    d.save_object = NULL;
    CHECK_CREATE_REJECTS(&d);
}

TEST(create_rejects_unknown_flags) {
    for (uint32_t bit = 3; bit < 32; bit++) {
        if ((1u << bit) & (OPOOL_REPORT_MISUSE | OPOOL_REPORT_UNRATIONED | OPOOL_SHARE_SALT))
            continue; /* flags of the concurrent pool too */
        opool_desc d = desc_of(8, 4);
        d.flags = OPOOL_ZERO | (1u << bit);
        CHECK_CREATE_REJECTS(&d);
    }
}

TEST(create_accepts_the_three_flags) {
    opool_desc d = desc_of(8, 4);
    d.flags = OPOOL_ZERO | OPOOL_POISON | OPOOL_RETIRE_ON_WRAP;
    CHECK_CREATE_ACCEPTS(&d);
}

TEST(create_rejects_allocator_with_only_one_function) {
    counting c;
    opool_desc d = desc_of(8, 4);
    d.allocator = counting_allocator(&c);
    d.allocator.free = NULL;
    CHECK_CREATE_REJECTS(&d);
    d.allocator = counting_allocator(&c);
    d.allocator.alloc = NULL;
    CHECK_CREATE_REJECTS(&d);
    CHECK_EQ_U64(c.calls, 0);
}

TEST(create_rejects_overflowing_sizes) {
    opool_desc d = desc_of(SIZE_MAX / 2, 4);
    CHECK_CREATE_REJECTS(&d);
    d = desc_of(SIZE_MAX, 1);
    CHECK_CREATE_REJECTS(&d);
    d = desc_of(SIZE_MAX - 2, 1);
    d.object_align = 16; /* rounding the stride up overflows */
    CHECK_CREATE_REJECTS(&d);
    d = desc_of(SIZE_MAX / 0x10000, 0x20000);
    CHECK_CREATE_REJECTS(&d);
    d = desc_of(SIZE_MAX / 8 + 1, 8); /* capacity * stride overflows by a little */
    d.object_align = 1;
    CHECK_CREATE_REJECTS(&d);
}

/* 16 bytes of arrays a slot: 300M one-byte objects need over 5 GB, which a
 * 32-bit machine cannot address (a wrapped size once asked it for 805 MB
 * and wrote 5 GB into them). On 64 bits the request is for all of it:
 * above the 1 GiB this allocator allows, so refused. */
TEST(create_counts_the_slot_arrays_in_its_size) {
    counting c;
    opool_desc d = desc_of(1, 300000000u);
    d.object_align = 1;
    d.allocator = counting_allocator(&c);
    c.max_request = (size_t)1 << 30;
    opool_mt *p = NULL;
    if (SIZE_MAX <= UINT32_MAX) {
        CHECK_EQ_U64(opool_mt_create(&p, &d), OPOOL_EINVAL);
        CHECK_EQ_U64(c.calls, 0);
    } else {
        CHECK_EQ_U64(opool_mt_create(&p, &d), OPOOL_ENOMEM);
        CHECK_EQ_U64(c.failures, 1);
    }
    CHECK(p == NULL);
    CHECK_EQ_U64(c.blocks, 0);
}

TEST(allocator_failure_gives_enomem_and_leaks_nothing) {
    counting c;
    opool_desc d = desc_of(16, 8);
    d.allocator = counting_allocator(&c);
    c.fail_from = 0;
    opool_mt *p = (opool_mt *)(uintptr_t)1;
    CHECK_EQ_U64(opool_mt_create(&p, &d), OPOOL_ENOMEM);
    CHECK(p == NULL);
    CHECK_EQ_U64(c.blocks, 0);
    CHECK_EQ_U64(c.failures, 1);
    /* whatever allocation fails, nothing leaks */
    for (long n = 1; n < 4; n++) {
        d.allocator = counting_allocator(&c);
        c.fail_from = n;
        p = (opool_mt *)(uintptr_t)1;
        opool_status s = opool_mt_create(&p, &d);
        CHECK(s == OPOOL_OK || s == OPOOL_ENOMEM);
        CHECK((s == OPOOL_OK) == (p != NULL));
        if (s == OPOOL_OK) {
            CHECK(opool_mt_alloc(p, NULL) != NULL);
            CHECK_MT(p);
            opool_mt_destroy(p);
        }
        CHECK_EQ_U64(c.blocks, 0);
    }
}

TEST(custom_allocator_gets_every_byte_back) {
    counting c;
    opool_desc d = desc_of(40, 30);
    d.object_align = 64;
    d.allocator = counting_allocator(&c);
    opool_mt *p = create(&d);
    REQUIRE(p);
    CHECK(c.calls >= 1);
    opool_mt_cache *c1 = opool_mt_cache_create(p, 4);
    opool_mt_cache *c2 = opool_mt_cache_create(p, 64);
    opool_mt_cache *c3 = opool_mt_cache_create(p, 8);
    REQUIRE(c1 && c2 && c3);
    opool_handle h[10];
    cache_alloc_n(c1, 5, h);
    cache_alloc_n(c2, 5, h + 5);
    for (int k = 0; k < 10; k++) {
        void *obj = opool_mt_get(p, h[k]);
        CHECK(obj != NULL);
        CHECK_EQ_U64((uintptr_t)obj % 64, 0);
    }
    for (int k = 0; k < 10; k += 2) CHECK_EQ_U64(opool_mt_cache_free(c3, h[k]), OPOOL_OK);
    opool_mt_cache_destroy(c3);
    CHECK(opool_mt_cache_create(p, 8) != NULL);
    CHECK_MT(p);
    opool_mt_destroy(p); /* caches and live objects included */
    CHECK_EQ_U64(c.blocks, 0);
    CHECK_EQ_U64(c.bytes, 0);
    CHECK_EQ_U64(c.size_mismatches, 0);
}

TEST(destroy_null_is_a_no_op) { opool_mt_destroy(NULL); }

TEST(objects_are_laid_out_at_the_stride_from_a_cache_line) {
    static const struct {
        size_t size, align, stride;
    } cases[] = {{24, 8, 24}, {24, 64, 64}, {5, 1, 5}, {1, 1, 1}, {100, 32, 128}, {8, 4096, 4096}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        opool_desc d = desc_of(cases[k].size, 5);
        d.object_align = cases[k].align;
        opool_mt *p = create(&d);
        REQUIRE(p);
        unsigned char *obj[5];
        for (int i = 0; i < 5; i++) {
            obj[i] = opool_mt_alloc(p, NULL);
            REQUIRE(obj[i]);
            memset(obj[i], 0xEE, cases[k].size); /* ASan: the whole object is ours */
        }
        CHECK_EQ_U64((uintptr_t)obj[0] % 64, 0);
        for (int i = 1; i < 5; i++) CHECK_EQ_U64((uintptr_t)(obj[i] - obj[i - 1]), cases[k].stride);
        CHECK_MT(p);
        opool_mt_destroy(p);
    }
}

TEST(default_alignment_is_that_of_max_align_t) {
    opool_mt *p = make_pool(3, 4);
    REQUIRE(p);
    for (int i = 0; i < 4; i++) {
        void *obj = opool_mt_alloc(p, NULL);
        REQUIRE(obj);
        CHECK_EQ_U64((uintptr_t)obj % alignof(max_align_t), 0);
    }
    CHECK_MT(p);
    opool_mt_destroy(p);
}

/* ---- handles ------------------------------------------------------------ */

TEST(fresh_pool_hands_out_slots_in_order) {
    opool_mt *p = make_pool(24, 8);
    REQUIRE(p);
    void *seen[8];
    for (uint32_t k = 0; k < 8; k++) {
        opool_handle h;
        seen[k] = opool_mt_alloc(p, &h);
        REQUIRE(seen[k]);
        CHECK_HANDLE(h, G1, k);
        CHECK_EQ_PTR(opool_mt_get(p, h), seen[k]);
        CHECK(opool_mt_valid(p, h));
        for (uint32_t j = 0; j < k; j++) CHECK(seen[j] != seen[k]);
    }
    CHECK_EQ_U64(opool_mt_count(p), 8);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

/* The header: a fresh pool hands out 0, 1, 2, ... in order, whatever its
 * size; then LIFO. First on the thread's own stripe of the shared list,
 * then on each stripe in turn: a thread's first pops borrow from stripe 0,
 * where a fresh pool keeps every slot, in order. */
TEST(fresh_pool_of_many_slots_hands_out_slots_in_order_then_lifo) {
    for (int s = -1; s < OPOOL_TEST_MT_STRIPES; s++) {
        if (s >= 0) opool__mt_set_stripe((unsigned)s);
        opool_mt *p = make_pool(8, 100);
        REQUIRE(p);
        opool_handle h[100], extra;
        for (uint32_t k = 0; k < 100; k++) {
            REQUIRE(opool_mt_alloc(p, &h[k]));
            CHECK_HANDLE(h[k], G1, k);
        }
        CHECK(opool_mt_alloc(p, &extra) == NULL);
        CHECK_EQ_U64(opool_mt_free(p, h[40]), OPOOL_OK);
        CHECK_EQ_U64(opool_mt_free(p, h[3]), OPOOL_OK);
        REQUIRE(opool_mt_alloc(p, &extra));
        CHECK_HANDLE(extra, G1 + 2, 3);
        REQUIRE(opool_mt_alloc(p, &extra));
        CHECK_HANDLE(extra, G1 + 2, 40);
        CHECK_MT(p);
        opool_mt_destroy(p);
    }
    opool__mt_set_stripe(0);
}

/* The header: threads of different stripes allocating from a fresh pool
 * get 16 neighbouring slots each (a line of generations), not slots
 * interleaved; a free goes to the freeing thread's stripe; a bulk alloc
 * takes from one stripe after another. */
TEST(threads_of_two_stripes_get_lines_of_their_own) {
    opool_mt *p = make_pool(8, 64);
    REQUIRE(p);
    opool_handle a[3], b[3];
    for (uint32_t k = 0; k < 3; k++) {
        opool__mt_set_stripe(1);
        REQUIRE(opool_mt_alloc(p, &a[k]));
        CHECK_HANDLE(a[k], G1, k); /* 0, 1, 2: stripe 1 holds 3 .. 15 */
        opool__mt_set_stripe(2);
        REQUIRE(opool_mt_alloc(p, &b[k]));
        CHECK_HANDLE(b[k], G1, 16 + k); /* 16, 17, 18: stripe 2 holds 19 .. 31 */
    }
    /* slot 0, freed by stripe 2's thread, is that thread's next slot, not
     * stripe 1's */
    opool__mt_set_stripe(2);
    CHECK_EQ_U64(opool_mt_free(p, a[0]), OPOOL_OK);
    opool_handle h;
    opool__mt_set_stripe(1);
    REQUIRE(opool_mt_alloc(p, &h));
    CHECK_HANDLE(h, G1, 3);
    opool__mt_set_stripe(2);
    REQUIRE(opool_mt_alloc(p, &h));
    CHECK_HANDLE(h, G1 + 2, 0);
    REQUIRE(opool_mt_alloc(p, &h));
    CHECK_HANDLE(h, G1, 19);
    /* stripe 3 is empty: its bulk alloc of 40 takes stripe 0's 32 (32 .. 63),
     * then 8 of stripe 1's 12 (4 .. 11: more than half, what it asked for);
     * its next alloc borrows half of the 4 left there (12, 13 onto stripe 3) */
    opool__mt_set_stripe(3);
    opool_handle hs[40];
    CHECK_EQ_U64(opool_mt_alloc_bulk(p, hs, NULL, 40), 40);
    for (uint32_t k = 0; k < 32; k++) CHECK_HANDLE(hs[k], G1, 32 + k);
    for (uint32_t k = 0; k < 8; k++) CHECK_HANDLE(hs[32 + k], G1, 4 + k);
    REQUIRE(opool_mt_alloc(p, &h));
    CHECK_HANDLE(h, G1, 12);
    REQUIRE(opool_mt_alloc(p, &h));
    CHECK_HANDLE(h, G1, 13);
    opool__mt_set_stripe(1);
    REQUIRE(opool_mt_alloc(p, &h));
    CHECK_HANDLE(h, G1, 14); /* what stripe 1 kept */
    CHECK_MT(p);
    opool__mt_set_stripe(0);
    opool_mt_destroy(p);
}

TEST(first_generation_comes_from_salt) {
    static const uint32_t salt[] = {0x1000, 0x1001, 2, 1, 0xFFFFFFFE, 0xFFFFFFFF, 0x80000000};
    static const uint32_t first[] = {0x1001, 0x1001, 3, 1, 0xFFFFFFFF, 0xFFFFFFFF, 0x80000001};
    for (size_t k = 0; k < sizeof salt / sizeof salt[0]; k++) {
        opool_desc d = desc_of(8, 3);
        d.salt = salt[k];
        opool_mt *p = create(&d);
        REQUIRE(p);
        opool_handle h[3];
        alloc_n(p, 3, h);
        for (uint32_t i = 0; i < 3; i++) CHECK_HANDLE(h[i], first[k], i);
        CHECK_MT(p);
        opool_mt_destroy(p);
    }
}

TEST(salt_zero_gives_one_odd_first_generation_to_every_slot) {
    opool_desc d = desc_of(8, 3);
    d.salt = 0;
    opool_mt *p = create(&d);
    REQUIRE(p);
    opool_handle h[3];
    alloc_n(p, 3, h);
    uint32_t g = opool_handle_generation(h[0]);
    CHECK(g & 1);
    for (uint32_t i = 0; i < 3; i++) CHECK_HANDLE(h[i], g, i);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

TEST(alloc_and_free_each_advance_the_generation) {
    opool_mt *p = make_pool(8, 1);
    REQUIRE(p);
    for (uint32_t round = 0; round < 4; round++) {
        opool_handle h;
        REQUIRE(opool_mt_alloc(p, &h));
        CHECK_HANDLE(h, G1 + 2 * round, 0);
        CHECK_EQ_U64(opool_mt_free(p, h), OPOOL_OK);
    }
    CHECK_MT(p);
    opool_mt_destroy(p);
}

TEST(generation_wraps_through_zero) {
    opool_desc d = desc_of(8, 1);
    d.salt = 0xFFFFFFFE;
    opool_mt *p = create(&d);
    REQUIRE(p);
    opool_handle a, b;
    REQUIRE(opool_mt_alloc(p, &a));
    CHECK_HANDLE(a, 0xFFFFFFFF, 0);
    CHECK_EQ_U64(opool_mt_free(p, a), OPOOL_OK);
    REQUIRE(opool_mt_alloc(p, &b));
    CHECK_HANDLE(b, 1, 0);
    CHECK(!opool_handle_is_null(b));
    CHECK(opool_mt_valid(p, b));
    CHECK(!opool_mt_valid(p, a));
    CHECK_MT(p);
    opool_mt_destroy(p);
}

TEST(reuse_is_lifo) {
    opool_mt *p = make_pool(8, 8);
    REQUIRE(p);
    opool_handle h[5];
    alloc_n(p, 5, h);
    CHECK_EQ_U64(opool_mt_free(p, h[1]), OPOOL_OK);
    CHECK_EQ_U64(opool_mt_free(p, h[3]), OPOOL_OK);
    CHECK_EQ_U64(opool_mt_free(p, h[2]), OPOOL_OK);
    opool_handle g[4];
    alloc_n(p, 4, g);
    CHECK_HANDLE(g[0], G1 + 2, 2);
    CHECK_HANDLE(g[1], G1 + 2, 3);
    CHECK_HANDLE(g[2], G1 + 2, 1);
    CHECK_HANDLE(g[3], G1, 5);
    CHECK_EQ_U64(opool_mt_count(p), 6);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

TEST(free_twice_is_rejected) {
    opool_mt *p = make_pool(8, 4);
    REQUIRE(p);
    opool_handle h;
    REQUIRE(opool_mt_alloc(p, &h));
    CHECK_EQ_U64(opool_mt_free(p, h), OPOOL_OK);
    CHECK_EQ_U64(opool_mt_free(p, h), OPOOL_ESTALE);
    CHECK_EQ_U64(opool_mt_count(p), 0);
    CHECK_EQ_U64(stats_of(p).rejected_handles, 1);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

TEST(null_even_and_out_of_range_handles_are_invalid) {
    opool_mt *p = make_pool(8, 4);
    REQUIRE(p);
    opool_handle h;
    REQUIRE(opool_mt_alloc(p, &h));
    opool_handle bad[7];
    bad[0] = OPOOL_NULL;
    bad[1] = handle(G0, 1);     /* a free slot's own (even) generation */
    bad[2] = handle(G1 + 1, 0); /* even */
    bad[3] = handle(G1, 4);     /* index == capacity */
    bad[4] = handle(G1, UINT32_MAX);
    bad[5].bits = UINT64_MAX;
    bad[6] = handle(0, 0);
    for (int k = 0; k < 7; k++) {
        CHECK_EQ_U64(opool_mt_free(p, bad[k]), OPOOL_EINVAL);
        CHECK(opool_mt_get(p, bad[k]) == NULL);
        CHECK(!opool_mt_valid(p, bad[k]));
    }
    CHECK_EQ_U64(stats_of(p).rejected_handles, 7);
    CHECK(opool_mt_valid(p, h));
    CHECK_EQ_U64(opool_mt_count(p), 1);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

TEST(stale_handles_are_rejected_by_every_function) {
    opool_mt *p = make_pool(8, 4);
    REQUIRE(p);
    opool_mt_cache *c = opool_mt_cache_create(p, 4);
    REQUIRE(c);
    opool_handle h, h2;
    REQUIRE(opool_mt_alloc(p, &h));
    CHECK_EQ_U64(opool_mt_free(p, h), OPOOL_OK);
    CHECK(opool_mt_get(p, h) == NULL);
    CHECK(!opool_mt_valid(p, h));
    CHECK_EQ_U64(opool_mt_free(p, h), OPOOL_ESTALE);
    CHECK_EQ_U64(opool_mt_cache_free(c, h), OPOOL_ESTALE);
    REQUIRE(opool_mt_alloc(p, &h2)); /* the same slot, reused */
    CHECK_HANDLE(h2, G1 + 2, 0);
    CHECK(opool_mt_get(p, h) == NULL);
    CHECK_EQ_U64(opool_mt_free(p, h), OPOOL_ESTALE);
    CHECK_EQ_U64(opool_mt_free(p, handle(G1 + 4, 0)), OPOOL_ESTALE); /* a future generation */
    CHECK(opool_mt_valid(p, h2));
    CHECK_EQ_U64(stats_of(p).rejected_handles, 4);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

TEST(foreign_pool_handle_is_rejected) {
    opool_desc d = desc_of(8, 4);
    opool_mt *a = create(&d);
    d.salt = 0x2000;
    opool_mt *b = create(&d);
    REQUIRE(a && b);
    opool_handle ha, hb;
    REQUIRE(opool_mt_alloc(a, &ha));
    REQUIRE(opool_mt_alloc(b, &hb));
    CHECK(opool_mt_get(b, ha) == NULL);
    CHECK(!opool_mt_valid(b, ha));
    CHECK_EQ_U64(opool_mt_free(b, ha), OPOOL_ESTALE);
    CHECK(opool_mt_valid(a, ha));
    CHECK(opool_mt_valid(b, hb));
    CHECK_EQ_U64(opool_mt_count(b), 1);
    CHECK_MT(a);
    CHECK_MT(b);
    opool_mt_destroy(a);
    opool_mt_destroy(b);
}

TEST(rejected_free_changes_nothing_and_is_counted_and_reported) {
    recorder r;
    opool_desc d = recorded_desc(8, 4, &r);
    d.fini = rec_fini;
    opool_mt *p = create(&d);
    REQUIRE(p);
    opool_handle h[2];
    alloc_n(p, 2, h);
    CHECK_EQ_U64(opool_mt_free(p, h[0]), OPOOL_OK);
    CHECK_EQ_U64(r.finis, 1);
    CHECK_EQ_U64(opool_mt_free(p, h[0]), OPOOL_ESTALE);
    CHECK_EQ_U64(r.reports, 1);
    CHECK_EQ_U64(r.last_what, OPOOL_ESTALE);
    CHECK_EQ_U64(r.last_report_handle.bits, h[0].bits);
    CHECK_EQ_U64(opool_mt_free(p, handle(G1, 9)), OPOOL_EINVAL);
    CHECK_EQ_U64(r.reports, 2);
    CHECK_EQ_U64(r.last_what, OPOOL_EINVAL);
    CHECK_EQ_U64(r.last_report_handle.bits, handle(G1, 9).bits);
    CHECK_EQ_U64(r.reports_with_pool, 0);
    CHECK_EQ_U64(r.finis, 1);
    CHECK_EQ_U64(stats_of(p).rejected_handles, 2);
    CHECK_EQ_U64(opool_mt_count(p), 1);
    CHECK(opool_mt_valid(p, h[1]));
    CHECK_EQ_U64(next_index(p), 0); /* the list is as the good free left it */
    CHECK_MT(p);
    opool_mt_destroy(p);
}

TEST(null_pool_is_safe_for_every_function) {
    opool_handle h = handle(G1, 3), hs[2] = {{0}, {0}};
    void *objs[2];
    CHECK(opool_mt_alloc(NULL, &h) == NULL);
    CHECK(opool_handle_is_null(h));
    CHECK(opool_mt_alloc(NULL, NULL) == NULL);
    h = handle(G1, 3);
    CHECK(opool_mt_alloc_wait(NULL, &h, 0) == NULL);
    CHECK(opool_handle_is_null(h));
    CHECK(opool_mt_alloc_wait(NULL, NULL, 1000000) == NULL);
    CHECK_EQ_U64(opool_mt_free(NULL, handle(G1, 0)), OPOOL_EINVAL);
    CHECK_EQ_U64(opool_mt_free(NULL, OPOOL_NULL), OPOOL_EINVAL);
    CHECK(opool_mt_get(NULL, handle(G1, 0)) == NULL);
    CHECK(!opool_mt_valid(NULL, handle(G1, 0)));
    CHECK_EQ_U64(opool_mt_count(NULL), 0);
    CHECK_EQ_U64(opool_mt_capacity(NULL), 0);
    CHECK_EQ_U64(opool_mt_alloc_bulk(NULL, hs, objs, 2), 0);
    CHECK_EQ_U64(opool_mt_free_bulk(NULL, hs, 2), 0);
    CHECK(opool_mt_cache_create(NULL, 8) == NULL);
    opool_mt_stats s;
    memset(&s, 0xFF, sizeof s);
    opool_mt_get_stats(NULL, &s);
    opool_mt_stats zero;
    memset(&zero, 0, sizeof zero);
    CHECK(memcmp(&s, &zero, sizeof s) == 0);
    opool_mt_get_stats(NULL, NULL);
    opool_mt_destroy(NULL);
}

TEST(null_cache_is_safe_for_every_cache_function) {
    opool_handle h = handle(G1, 3), hs[2] = {{0}, {0}};
    void *objs[2];
    CHECK(opool_mt_cache_alloc(NULL, &h) == NULL);
    CHECK(opool_handle_is_null(h));
    CHECK(opool_mt_cache_alloc(NULL, NULL) == NULL);
    CHECK_EQ_U64(opool_mt_cache_free(NULL, handle(G1, 0)), OPOOL_EINVAL);
    CHECK_EQ_U64(opool_mt_cache_alloc_bulk(NULL, hs, objs, 2), 0);
    CHECK_EQ_U64(opool_mt_cache_free_bulk(NULL, hs, 2), 0);
    h = handle(G1, 3);
    CHECK(opool_mt_cache_alloc_wait(NULL, &h, OPOOL_WAIT_FOREVER) == NULL);
    CHECK(opool_handle_is_null(h));
    CHECK(opool_mt_cache_alloc_wait(NULL, NULL, 0) == NULL);
    opool_mt_cache_flush(NULL);
    opool_mt_cache_destroy(NULL);
}

/* ---- a full pool -------------------------------------------------------- */

TEST(full_pool_alloc_fails_and_clears_out_handle) {
    recorder r;
    opool_desc d = recorded_desc(8, 2, &r);
    opool_mt *p = create(&d);
    REQUIRE(p);
    opool_handle h[2], out = handle(G1, 7);
    alloc_n(p, 2, h);
    CHECK(opool_mt_alloc(p, &out) == NULL);
    CHECK(opool_handle_is_null(out));
    CHECK(opool_mt_alloc(p, NULL) == NULL);
    opool_mt_stats s = stats_of(p);
    CHECK_EQ_U64(s.failed_allocs, 2);
    CHECK_EQ_U64(s.count, 2);
    CHECK(opool_mt_valid(p, h[0]) && opool_mt_valid(p, h[1]));
    CHECK_MT(p);
    opool_mt_destroy(p);
}

TEST(full_pool_reports_an_episode_at_its_1st_2nd_and_4th_failures) {
    recorder r;
    opool_desc d = recorded_desc(8, 1, &r);
    opool_mt *p = create(&d);
    REQUIRE(p);
    REQUIRE(opool_mt_alloc(p, NULL));
    for (int k = 0; k < 3; k++) CHECK(opool_mt_alloc(p, NULL) == NULL);
    CHECK_EQ_U64(r.reports, 2); /* failures 1 and 2 */
    CHECK_EQ_U64(r.efull, 2);
    CHECK(opool_mt_alloc(p, NULL) == NULL);
    CHECK_EQ_U64(r.efull, 3); /* failure 4 */
    CHECK_EQ_U64(r.last_what, OPOOL_EFULL);
    CHECK(opool_handle_is_null(r.last_report_handle));
    CHECK_EQ_U64(r.reports_with_pool, 0); /* report, not report_mt: a NULL pool */
    CHECK_EQ_U64(stats_of(p).failed_allocs, 4);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

TEST(free_ends_a_full_episode) {
    recorder r;
    opool_desc d = recorded_desc(8, 1, &r);
    opool_mt *p = create(&d);
    REQUIRE(p);
    opool_handle h;
    REQUIRE(opool_mt_alloc(p, &h));
    CHECK(opool_mt_alloc(p, NULL) == NULL);
    CHECK_EQ_U64(r.efull, 1);
    CHECK_EQ_U64(opool_mt_free(p, h), OPOOL_OK); /* 0 of 1 live: a recovery */
    REQUIRE(opool_mt_alloc(p, &h));
    CHECK(opool_mt_alloc(p, NULL) == NULL);
    CHECK(opool_mt_alloc(p, NULL) == NULL);
    CHECK(opool_mt_alloc(p, NULL) == NULL);
    CHECK_EQ_U64(r.efull, 3); /* the new episode's failures 1 and 2 */
    CHECK_EQ_U64(stats_of(p).failed_allocs, 4);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

TEST(rejected_free_does_not_end_a_full_episode) {
    recorder r;
    opool_desc d = recorded_desc(8, 1, &r);
    opool_mt *p = create(&d);
    REQUIRE(p);
    REQUIRE(opool_mt_alloc(p, NULL));
    CHECK(opool_mt_alloc(p, NULL) == NULL);
    CHECK_EQ_U64(opool_mt_free(p, handle(G1 + 2, 0)), OPOOL_ESTALE);
    CHECK_EQ_U64(opool_mt_free(p, OPOOL_NULL), OPOOL_EINVAL);
    CHECK(opool_mt_alloc(p, NULL) == NULL);
    CHECK(opool_mt_alloc(p, NULL) == NULL);
    CHECK_EQ_U64(r.efull, 2); /* failures 1 and 2; 3 is not reported */
    CHECK_EQ_U64(r.reports, 4);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

TEST(cache_free_ends_a_full_episode) {
    recorder r;
    opool_desc d = recorded_desc(8, 1, &r);
    opool_mt *p = create(&d);
    REQUIRE(p);
    opool_mt_cache *c = opool_mt_cache_create(p, 4);
    REQUIRE(c);
    opool_handle h;
    REQUIRE(opool_mt_alloc(p, &h));
    CHECK(opool_mt_alloc(p, NULL) == NULL);
    CHECK_EQ_U64(r.efull, 1);
    CHECK_EQ_U64(opool_mt_cache_free(c, h), OPOOL_OK); /* parked */
    REQUIRE(opool_mt_alloc(p, &h));                    /* stolen back */
    CHECK_HANDLE(h, G1 + 2, 0);
    CHECK(opool_mt_alloc(p, NULL) == NULL);
    CHECK_EQ_U64(r.efull, 2);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

/* A free that retires its slot frees no slot: 1 of the 1 usable slot is
 * still live, so the episode goes on (as in the core pool). */
TEST(retiring_free_does_not_end_a_full_episode) {
    recorder r;
    opool_desc d = recorded_desc(8, 2, &r);
    d.flags = OPOOL_RETIRE_ON_WRAP;
    opool_mt *p = create(&d);
    REQUIRE(p);
    CHECK(opool__mt_set_gen(p, 1, G0 - 2));
    opool_handle h[2];
    alloc_n(p, 2, h);
    CHECK_HANDLE(h[1], G0 - 1, 1);
    CHECK(opool_mt_alloc(p, NULL) == NULL);
    CHECK_EQ_U64(r.efull, 1);
    CHECK_EQ_U64(opool_mt_free(p, h[1]), OPOOL_OK); /* retired: the pool is still full */
    CHECK_EQ_U64(stats_of(p).retired, 1);
    CHECK(opool_mt_alloc(p, NULL) == NULL);
    CHECK(opool_mt_alloc(p, NULL) == NULL);
    CHECK_EQ_U64(r.efull, 2); /* the same episode's 2nd failure; its 3rd is not reported */
    CHECK_EQ_U64(stats_of(p).failed_allocs, 3);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

TEST(full_pool_without_report_callback_returns_null) {
    opool_desc d = desc_of(8, 1);
    d.report = NULL; /* the default report prints one line on stderr */
    opool_mt *p = create(&d);
    REQUIRE(p);
    REQUIRE(opool_mt_alloc(p, NULL));
    CHECK(opool_mt_alloc(p, NULL) == NULL);
    CHECK_EQ_U64(stats_of(p).failed_allocs, 1);
    CHECK_EQ_U64(opool_mt_free(p, OPOOL_NULL), OPOOL_EINVAL); /* default: silent */
    CHECK_MT(p);
    opool_mt_destroy(p);
}

/* ---- flags and callbacks ------------------------------------------------ */

static bool all_bytes(const void *obj, size_t n, unsigned char v) {
    const unsigned char *b = obj;
    for (size_t k = 0; k < n; k++)
        if (b[k] != v) return false;
    return true;
}

TEST(zero_flag_zero_fills_every_alloc) {
    opool_desc d = desc_of(40, 8);
    d.flags = OPOOL_ZERO;
    opool_mt *p = create(&d);
    REQUIRE(p);
    opool_mt_cache *c = opool_mt_cache_create(p, 4);
    REQUIRE(c);
    opool_handle h, hs[3];
    void *objs[3];
    unsigned char *obj = opool_mt_alloc(p, &h);
    REQUIRE(obj);
    CHECK(all_bytes(obj, 40, 0));
    memset(obj, 0xAB, 40);
    CHECK_EQ_U64(opool_mt_free(p, h), OPOOL_OK);
    CHECK_EQ_PTR(opool_mt_alloc(p, &h), obj);
    CHECK(all_bytes(obj, 40, 0));
    memset(obj, 0xAB, 40);
    CHECK_EQ_U64(opool_mt_free(p, h), OPOOL_OK);
    /* bulk */
    REQUIRE(opool_mt_alloc_bulk(p, hs, objs, 3) == 3);
    for (int k = 0; k < 3; k++) {
        CHECK(all_bytes(objs[k], 40, 0));
        memset(objs[k], 0xAB, 40);
    }
    CHECK_EQ_U64(opool_mt_free_bulk(p, hs, 3), 3);
    REQUIRE(opool_mt_alloc_bulk(p, hs, objs, 3) == 3);
    for (int k = 0; k < 3; k++) CHECK(all_bytes(objs[k], 40, 0));
    CHECK_EQ_U64(opool_mt_free_bulk(p, hs, 3), 3);
    /* caches */
    obj = opool_mt_cache_alloc(c, &h);
    REQUIRE(obj);
    CHECK(all_bytes(obj, 40, 0));
    memset(obj, 0xAB, 40);
    CHECK_EQ_U64(opool_mt_cache_free(c, h), OPOOL_OK);
    CHECK_EQ_PTR(opool_mt_cache_alloc(c, &h), obj);
    CHECK(all_bytes(obj, 40, 0));
    memset(obj, 0xAB, 40);
    CHECK_EQ_U64(opool_mt_cache_free(c, h), OPOOL_OK);
    REQUIRE(opool_mt_cache_alloc_bulk(c, hs, objs, 3) == 3);
    for (int k = 0; k < 3; k++) CHECK(all_bytes(objs[k], 40, 0));
    CHECK_MT(p);
    opool_mt_destroy(p);
}

TEST(init_runs_after_zero_once_per_object_handed_out) {
    recorder r;
    opool_desc d = recorded_desc(16, 8, &r);
    d.flags = OPOOL_ZERO;
    d.init = rec_init;
    opool_mt *p = create(&d);
    REQUIRE(p);
    opool_mt_cache *c = opool_mt_cache_create(p, 8);
    REQUIRE(c);
    opool_handle h, hs[2];
    void *objs[2];
    unsigned char *obj = opool_mt_alloc(p, &h);
    REQUIRE(obj);
    CHECK_EQ_U64(r.inits, 1);
    CHECK_EQ_PTR(r.last_init, obj);
    CHECK(all_bytes(obj, 16, 0x5A)); /* init's bytes */
    CHECK_EQ_U64(opool_mt_free(p, h), OPOOL_OK);
    CHECK_EQ_PTR(opool_mt_alloc(p, &h), obj); /* init saw zeros, not its old bytes */
    CHECK_EQ_U64(r.inits, 2);
    CHECK_EQ_U64(opool_mt_alloc_bulk(p, hs, objs, 2), 2);
    CHECK_EQ_U64(r.inits, 4);
    CHECK(opool_mt_cache_alloc(c, &h) != NULL); /* a refill parks 3 more: no init for those */
    CHECK_EQ_U64(r.inits, 5);
    CHECK_EQ_U64(stats_of(p).parked, 3);
    CHECK_EQ_U64(opool_mt_cache_alloc_bulk(c, hs, objs, 2), 2);
    CHECK_EQ_U64(r.inits, 7);
    CHECK_EQ_U64(r.init_saw_zero, 7);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

TEST(fini_runs_on_every_free_path_and_never_on_a_rejected_one) {
    recorder r;
    opool_desc d = recorded_desc(16, 8, &r);
    d.fini = rec_fini;
    opool_mt *p = create(&d);
    REQUIRE(p);
    opool_mt_cache *c = opool_mt_cache_create(p, 4);
    REQUIRE(c);
    opool_handle h[4];
    alloc_n(p, 4, h);
    void *obj0 = opool_mt_get(p, h[0]), *obj3 = opool_mt_get(p, h[3]);
    CHECK_EQ_U64(opool_mt_free(p, h[0]), OPOOL_OK);
    CHECK_EQ_U64(r.finis, 1);
    CHECK_EQ_PTR(r.last_fini, obj0);
    CHECK_EQ_U64(opool_mt_cache_free(c, h[1]), OPOOL_OK);
    CHECK_EQ_U64(r.finis, 2);
    opool_handle twice[2] = {h[2], h[2]};
    CHECK_EQ_U64(opool_mt_free_bulk(p, twice, 2), 1);
    CHECK_EQ_U64(r.finis, 3);
    opool_handle mixed[2] = {h[3], OPOOL_NULL};
    CHECK_EQ_U64(opool_mt_cache_free_bulk(c, mixed, 2), 1);
    CHECK_EQ_U64(r.finis, 4);
    CHECK_EQ_PTR(r.last_fini, obj3);
    CHECK_EQ_U64(opool_mt_free(p, h[0]), OPOOL_ESTALE);
    CHECK_EQ_U64(opool_mt_cache_free(c, h[1]), OPOOL_ESTALE);
    opool_mt_cache_flush(c); /* parked slots are free already: no fini */
    opool_mt_cache_destroy(c);
    CHECK_EQ_U64(r.finis, 4);
    CHECK_MT(p);
    opool_mt_destroy(p);
    CHECK_EQ_U64(r.finis, 4);
}

TEST(destroy_runs_fini_on_live_objects_only) {
    recorder r;
    opool_desc d = recorded_desc(16, 10, &r);
    d.fini = rec_fini;
    opool_mt *p = create(&d);
    REQUIRE(p);
    opool_mt_cache *c = opool_mt_cache_create(p, 4);
    REQUIRE(c);
    opool_handle a[3], b[3];
    alloc_n(p, 3, a);
    cache_alloc_n(c, 3, b);
    CHECK_EQ_U64(opool_mt_free(p, a[1]), OPOOL_OK);
    CHECK_EQ_U64(opool_mt_cache_free(c, b[0]), OPOOL_OK);
    CHECK_EQ_U64(r.finis, 2);
    CHECK_EQ_U64(opool_mt_count(p), 4);
    CHECK_EQ_U64(stats_of(p).parked, 2);
    CHECK_MT(p);
    opool_mt_destroy(p); /* with its cache still alive */
    CHECK_EQ_U64(r.finis, 6);
}

TEST(poison_fills_freed_slot_with_the_pattern) {
#ifndef TEST_ASAN /* ASan forbids reading a free slot, rightly */
    opool_desc d = desc_of(16, 4);
    d.flags = OPOOL_POISON;
    opool_mt *p = create(&d);
    REQUIRE(p);
    opool_mt_cache *c = opool_mt_cache_create(p, 4);
    REQUIRE(c);
    opool_handle h[2];
    alloc_n(p, 2, h);
    unsigned char *obj[2] = {opool_mt_get(p, h[0]), opool_mt_get(p, h[1])};
    REQUIRE(obj[0] && obj[1]);
    memset(obj[0], 0, 16);
    memset(obj[1], 0, 16);
    CHECK_EQ_U64(opool_mt_free(p, h[0]), OPOOL_OK);
    CHECK_EQ_U64(opool_mt_cache_free(c, h[1]), OPOOL_OK); /* parked: poisoned as well */
    for (int k = 0; k < 2; k++)
        for (int at = 0; at < 16; at += 4) {
            uint32_t word;
            memcpy(&word, obj[k] + at, 4);
            CHECK_EQ_U64(word, POISON_WORD);
        }
    CHECK_MT(p);
    opool_mt_destroy(p);
#endif
}

/* Write into a free slot on purpose: under ASan, first lift its poisoning. */
static void write_after_free(unsigned char *obj, size_t at, size_t size) {
#ifdef TEST_ASAN
    __asan_unpoison_memory_region(obj, size);
#else
    (void)size;
#endif
    obj[at] ^= 0xFF;
}

TEST(poison_reports_write_after_free_at_the_next_alloc) {
    recorder r;
    opool_desc d = recorded_desc(16, 2, &r);
    d.flags = OPOOL_POISON;
    opool_mt *p = create(&d);
    REQUIRE(p);
    opool_handle h;
    unsigned char *obj = opool_mt_alloc(p, &h);
    REQUIRE(obj);
    CHECK_EQ_U64(opool_mt_free(p, h), OPOOL_OK);
    write_after_free(obj, 5, 16);
    CHECK_EQ_U64(r.reports, 0);
    CHECK_EQ_PTR(opool_mt_alloc(p, &h), obj);
    CHECK_EQ_U64(r.reports, 1);
    CHECK_EQ_U64(r.write_after_free, 1);
    CHECK_EQ_U64(opool_handle_index(r.last_report_handle), 0);
    CHECK_EQ_U64(r.reports_with_pool, 0);
    /* an untouched free slot is not reported */
    CHECK(opool_mt_alloc(p, NULL) != NULL);
    CHECK_EQ_U64(r.reports, 1);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

TEST(poison_reports_write_after_free_of_a_parked_slot) {
    recorder r;
    opool_desc d = recorded_desc(16, 4, &r);
    d.flags = OPOOL_POISON;
    opool_mt *p = create(&d);
    REQUIRE(p);
    opool_mt_cache *c = opool_mt_cache_create(p, 4);
    REQUIRE(c);
    opool_handle h;
    unsigned char *obj = opool_mt_cache_alloc(c, &h);
    REQUIRE(obj);
    CHECK_HANDLE(h, G1, 0);
    CHECK_EQ_U64(opool_mt_cache_free(c, h), OPOOL_OK);
    write_after_free(obj, 15, 16);
    CHECK_EQ_PTR(opool_mt_cache_alloc(c, &h), obj);
    CHECK_EQ_U64(r.write_after_free, 1);
    CHECK_EQ_U64(opool_handle_index(r.last_report_handle), 0);
    CHECK(opool_mt_cache_alloc(c, NULL) != NULL); /* slot 1, untouched */
    CHECK_EQ_U64(r.reports, 1);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

TEST(poison_does_not_report_untouched_slots_of_any_stride) {
    static const size_t sizes[] = {1, 2, 3, 5, 6, 7, 46, 182};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        recorder r;
        opool_desc d = recorded_desc(sizes[s], 9, &r);
        d.object_align = 1;
        d.flags = OPOOL_POISON;
        opool_mt *p = create(&d);
        REQUIRE(p);
        opool_mt_cache *c = opool_mt_cache_create(p, 4);
        REQUIRE(c);
        opool_handle h[9];
        for (int round = 0; round < 3; round++) {
            cache_alloc_n(c, 4, h);
            alloc_n(p, 5, h + 4);
            for (int k = 0; k < 9; k++) CHECK(!opool_handle_is_null(h[k]));
            for (int k = 0; k < 9; k += 2) CHECK_EQ_U64(opool_mt_cache_free(c, h[k]), OPOOL_OK);
            for (int k = 1; k < 9; k += 2) CHECK_EQ_U64(opool_mt_free(p, h[k]), OPOOL_OK);
        }
        CHECK_EQ_U64(r.reports, 0);
        if (r.reports)
            fprintf(stderr, "  object_size %zu: %s on slot %u\n", sizes[s],
                    opool_status_str(r.last_what), opool_handle_index(r.last_report_handle));
        CHECK_MT(p);
        opool_mt_destroy(p);
    }
}

TEST(retire_on_wrap_retires_the_slot) {
    opool_desc d = desc_of(8, 4);
    d.flags = OPOOL_RETIRE_ON_WRAP;
    opool_mt *p = create(&d);
    REQUIRE(p);
    CHECK(opool__mt_set_gen(p, 0, G0 - 2));
    opool_handle h;
    REQUIRE(opool_mt_alloc(p, &h));
    CHECK_HANDLE(h, G0 - 1, 0);
    CHECK_EQ_U64(opool_mt_free(p, h), OPOOL_OK);
    opool_mt_stats s = stats_of(p);
    CHECK_EQ_U64(s.retired, 1);
    CHECK_EQ_U64(s.capacity, 3);
    CHECK_EQ_U64(s.count, 0);
    CHECK_EQ_U64(opool_mt_capacity(p), 3);
    CHECK(!opool_mt_valid(p, h));
    CHECK_EQ_U64(opool_mt_free(p, h), OPOOL_ESTALE);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

TEST(retired_slot_is_never_handed_out_again) {
    opool_desc d = desc_of(8, 4);
    d.flags = OPOOL_RETIRE_ON_WRAP;
    opool_mt *p = create(&d);
    REQUIRE(p);
    opool_mt_cache *c = opool_mt_cache_create(p, 2);
    REQUIRE(c);
    CHECK(opool__mt_set_gen(p, 0, G0 - 2));
    opool_handle h, hs[4];
    REQUIRE(opool_mt_alloc(p, &h));
    CHECK_EQ_U64(opool_mt_free(p, h), OPOOL_OK);
    for (int round = 0; round < 3; round++) {
        CHECK_EQ_U64(opool_mt_alloc_bulk(p, hs, NULL, 4), 3);
        for (int k = 0; k < 3; k++) CHECK(opool_handle_index(hs[k]) != 0);
        CHECK(opool_mt_alloc(p, NULL) == NULL);
        CHECK(opool_mt_cache_alloc(c, NULL) == NULL);
        CHECK_EQ_U64(opool_mt_count(p), 3);
        CHECK_EQ_U64(opool_mt_cache_free_bulk(c, hs, 3), 3);
        cache_alloc_n(c, 3, hs);
        for (int k = 0; k < 3; k++) CHECK(opool_handle_index(hs[k]) != 0);
        CHECK_EQ_U64(opool_mt_free_bulk(p, hs, 3), 3);
    }
    CHECK_EQ_U64(stats_of(p).retired, 1);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

TEST(retire_on_wrap_through_a_cache_free) {
    opool_desc d = desc_of(8, 4);
    d.flags = OPOOL_RETIRE_ON_WRAP;
    opool_mt *p = create(&d);
    REQUIRE(p);
    opool_mt_cache *c = opool_mt_cache_create(p, 4);
    REQUIRE(c);
    CHECK(opool__mt_set_gen(p, 0, G0 - 2));
    opool_handle h;
    REQUIRE(opool_mt_alloc(p, &h));
    CHECK_EQ_U64(opool_mt_cache_free(c, h), OPOOL_OK);
    opool_mt_stats s = stats_of(p);
    CHECK_EQ_U64(s.retired, 1);
    CHECK_EQ_U64(s.parked, 0); /* a retired slot is not parked */
    CHECK_EQ_U64(s.capacity, 3);
    CHECK_EQ_U64(next_cache_index(c), 1);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

TEST(retire_on_wrap_through_free_bulk) {
    opool_desc d = desc_of(8, 4);
    d.flags = OPOOL_RETIRE_ON_WRAP;
    opool_mt *p = create(&d);
    REQUIRE(p);
    CHECK(opool__mt_set_gen(p, 1, G0 - 2));
    opool_handle h[3];
    alloc_n(p, 3, h);
    CHECK_HANDLE(h[1], G0 - 1, 1);
    CHECK_EQ_U64(opool_mt_free_bulk(p, h, 3), 3);
    CHECK_EQ_U64(stats_of(p).retired, 1);
    CHECK_EQ_U64(next_index(p), 2);
    CHECK_EQ_U64(next_index(p), 0);
    CHECK_EQ_U64(next_index(p), 3);
    CHECK_EQ_U64(next_index(p), UINT32_MAX);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

TEST(without_retire_a_wrapped_slot_is_reused) {
    opool_mt *p = make_pool(8, 4);
    REQUIRE(p);
    CHECK(opool__mt_set_gen(p, 0, G0 - 2));
    opool_handle h, g;
    REQUIRE(opool_mt_alloc(p, &h));
    CHECK_HANDLE(h, G0 - 1, 0);
    CHECK_EQ_U64(opool_mt_free(p, h), OPOOL_OK);
    REQUIRE(opool_mt_alloc(p, &g));
    CHECK_HANDLE(g, G1, 0);
    CHECK_EQ_U64(stats_of(p).retired, 0);
    CHECK_EQ_U64(opool_mt_capacity(p), 4);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

TEST(set_gen_hook_refuses_odd_generations_live_slots_and_bad_indices) {
    opool_mt *p = make_pool(8, 4);
    REQUIRE(p);
    opool_handle h;
    CHECK(!opool__mt_set_gen(p, 1, G0 + 3));
    REQUIRE(opool_mt_alloc(p, &h));
    CHECK(!opool__mt_set_gen(p, 0, G0 + 4)); /* live */
    CHECK(!opool__mt_set_gen(p, 4, G0));
    CHECK(!opool__mt_set_gen(p, UINT32_MAX, G0));
    CHECK(opool_mt_valid(p, h));
    CHECK(opool__mt_set_gen(p, 1, G0 + 40));
    REQUIRE(opool_mt_alloc(p, &h));
    CHECK_HANDLE(h, G0 + 41, 1);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

/* ---- bulk calls --------------------------------------------------------- */

TEST(alloc_bulk_takes_slots_from_the_top_in_order) {
    opool_mt *p = make_pool(8, 8);
    REQUIRE(p);
    opool_handle h[3];
    void *objs[3];
    CHECK_EQ_U64(opool_mt_alloc_bulk(p, h, objs, 3), 3);
    for (uint32_t k = 0; k < 3; k++) {
        CHECK_HANDLE(h[k], G1, k);
        CHECK_EQ_PTR(objs[k], opool_mt_get(p, h[k]));
    }
    CHECK_EQ_U64(opool_mt_free(p, h[1]), OPOOL_OK);
    CHECK_EQ_U64(opool_mt_free(p, h[0]), OPOOL_OK);
    CHECK_EQ_U64(opool_mt_alloc_bulk(p, h, objs, 3), 3);
    CHECK_HANDLE(h[0], G1 + 2, 0);
    CHECK_HANDLE(h[1], G1 + 2, 1);
    CHECK_HANDLE(h[2], G1, 3);
    for (uint32_t k = 0; k < 3; k++) CHECK_EQ_PTR(objs[k], opool_mt_get(p, h[k]));
    CHECK_EQ_U64(opool_mt_count(p), 4);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

TEST(alloc_bulk_is_partial_when_fewer_slots_are_free) {
    recorder r;
    opool_desc d = recorded_desc(8, 4, &r);
    opool_mt *p = create(&d);
    REQUIRE(p);
    opool_handle h[6];
    void *objs[6];
    CHECK_EQ_U64(opool_mt_alloc_bulk(p, h, objs, 6), 4);
    for (uint32_t k = 0; k < 4; k++) CHECK_HANDLE(h[k], G1, k);
    CHECK_EQ_U64(stats_of(p).failed_allocs, 1);
    CHECK_EQ_U64(r.efull, 1);
    CHECK_EQ_U64(opool_mt_alloc_bulk(p, h, objs, 2), 0);
    CHECK_EQ_U64(stats_of(p).failed_allocs, 2);
    CHECK_EQ_U64(r.efull, 2); /* the episode's 2nd failure */
    CHECK_EQ_U64(opool_mt_alloc_bulk(p, h, objs, 2), 0);
    CHECK_EQ_U64(r.efull, 2); /* its 3rd: not reported */
    CHECK_EQ_U64(opool_mt_count(p), 4);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

TEST(alloc_bulk_accepts_null_objs_and_zero_n) {
    opool_mt *p = make_pool(8, 2);
    REQUIRE(p);
    opool_handle h[2];
    void *objs[2];
    CHECK_EQ_U64(opool_mt_alloc_bulk(p, NULL, NULL, 0), 0);
    CHECK_EQ_U64(opool_mt_alloc_bulk(p, h, objs, 0), 0);
    CHECK_EQ_U64(opool_mt_count(p), 0);
    CHECK_EQ_U64(opool_mt_alloc_bulk(p, h, NULL, 2), 2);
    CHECK_HANDLE(h[0], G1, 0);
    CHECK_HANDLE(h[1], G1, 1);
    /* a full pool: asking for none is no failed alloc */
    CHECK_EQ_U64(opool_mt_alloc_bulk(p, h, objs, 0), 0);
    CHECK_EQ_U64(stats_of(p).failed_allocs, 0);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

TEST(free_bulk_skips_rejected_handles_and_counts_them) {
    recorder r;
    opool_desc d = recorded_desc(8, 8, &r);
    opool_mt *p = create(&d);
    REQUIRE(p);
    opool_handle h[5];
    alloc_n(p, 5, h);
    opool_handle hs[6] = {h[1], OPOOL_NULL, h[3], h[1], handle(G1, 99), h[0]};
    CHECK_EQ_U64(opool_mt_free_bulk(p, hs, 6), 3);
    CHECK_EQ_U64(stats_of(p).rejected_handles, 3);
    CHECK_EQ_U64(r.reports, 3);
    CHECK_EQ_U64(r.last_what, OPOOL_EINVAL);
    CHECK_EQ_U64(r.last_report_handle.bits, handle(G1, 99).bits);
    CHECK_EQ_U64(opool_mt_count(p), 2);
    CHECK(opool_mt_valid(p, h[2]) && opool_mt_valid(p, h[4]));
    /* as if freed one by one: 1, 3, 0 pushed in that order */
    CHECK_EQ_U64(next_index(p), 0);
    CHECK_EQ_U64(next_index(p), 3);
    CHECK_EQ_U64(next_index(p), 1);
    CHECK_EQ_U64(next_index(p), 5);
    CHECK_EQ_U64(opool_mt_free_bulk(p, NULL, 0), 0);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

TEST(free_bulk_reports_each_rejected_handle_in_order) {
    recorder r;
    opool_desc d = recorded_desc(8, 4, &r);
    opool_mt *p = create(&d);
    REQUIRE(p);
    opool_handle h;
    REQUIRE(opool_mt_alloc(p, &h));
    opool_handle hs[3] = {h, h, OPOOL_NULL};
    CHECK_EQ_U64(opool_mt_free_bulk(p, hs, 2), 1);
    CHECK_EQ_U64(r.reports, 1);
    CHECK_EQ_U64(r.last_what, OPOOL_ESTALE);
    CHECK_EQ_U64(r.last_report_handle.bits, h.bits);
    CHECK_EQ_U64(opool_mt_free_bulk(p, hs + 1, 2), 0);
    CHECK_EQ_U64(r.reports, 3);
    CHECK_EQ_U64(r.last_what, OPOOL_EINVAL);
    CHECK_EQ_U64(stats_of(p).rejected_handles, 3);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

/* ---- caches ------------------------------------------------------------- */

TEST(cache_create_rejects_sizes_out_of_range) {
    opool_mt *p = make_pool(8, 4);
    REQUIRE(p);
    CHECK(opool_mt_cache_create(p, 0) == NULL);
    CHECK(opool_mt_cache_create(p, 1) == NULL);
    CHECK(opool_mt_cache_create(p, OPOOL_MT_CACHE_MAX + 1) == NULL);
    CHECK(opool_mt_cache_create(p, UINT32_MAX) == NULL);
    CHECK_EQ_U64(stats_of(p).caches, 0);
    opool_mt_cache *a = opool_mt_cache_create(p, 2);
    opool_mt_cache *b = opool_mt_cache_create(p, OPOOL_MT_CACHE_MAX);
    CHECK(a != NULL && b != NULL && a != b);
    CHECK_EQ_U64(stats_of(p).caches, 2);
    opool_mt_cache_destroy(a);
    opool_mt_cache_destroy(b);
    CHECK_EQ_U64(stats_of(p).caches, 0);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

TEST(cache_create_without_memory_returns_null) {
    counting mem;
    opool_desc d = desc_of(8, 8);
    d.allocator = counting_allocator(&mem);
    opool_mt *p = create(&d);
    REQUIRE(p);
    mem.fail_from = (long)mem.calls;
    CHECK(opool_mt_cache_create(p, 8) == NULL);
    CHECK_EQ_U64(stats_of(p).caches, 0);
    CHECK(opool_mt_alloc(p, NULL) != NULL);
    mem.fail_from = -1;
    opool_mt_cache *c = opool_mt_cache_create(p, 8);
    CHECK(c != NULL);
    CHECK(opool_mt_cache_alloc(c, NULL) != NULL);
    CHECK_MT(p);
    opool_mt_destroy(p);
    CHECK_EQ_U64(mem.blocks, 0);
}

TEST(cache_create_ex_rejects_null_out_null_pool_and_sizes_out_of_range) {
    opool_mt *p = make_pool(8, 4);
    REQUIRE(p);
    opool_mt_cache *c = (opool_mt_cache *)(uintptr_t)1;
    CHECK_EQ_U64(opool_mt_cache_create_ex(NULL, p, 4), OPOOL_EINVAL);
    CHECK_EQ_U64(opool_mt_cache_create_ex(&c, NULL, 4), OPOOL_EINVAL);
    CHECK(c == NULL);
    static const uint32_t bad[] = {0, 1, OPOOL_MT_CACHE_MAX + 1, UINT32_MAX};
    for (unsigned k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        c = (opool_mt_cache *)(uintptr_t)1;
        CHECK_EQ_U64(opool_mt_cache_create_ex(&c, p, bad[k]), OPOOL_EINVAL);
        CHECK(c == NULL);
    }
    CHECK_EQ_U64(stats_of(p).caches, 0);
    CHECK_EQ_U64(opool_mt_cache_create_ex(&c, p, 2), OPOOL_OK);
    REQUIRE(c);
    opool_mt_cache *d = NULL;
    CHECK_EQ_U64(opool_mt_cache_create_ex(&d, p, OPOOL_MT_CACHE_MAX), OPOOL_OK);
    CHECK(d != NULL && d != c);
    CHECK_EQ_U64(stats_of(p).caches, 2);
    CHECK(opool_mt_cache_alloc(c, NULL) != NULL);
    opool_mt_cache_destroy(c);
    opool_mt_cache_destroy(d);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

TEST(cache_create_ex_without_memory_gives_enomem_and_changes_nothing) {
    counting mem;
    opool_desc d = desc_of(8, 8);
    d.allocator = counting_allocator(&mem);
    opool_mt *p = create(&d);
    REQUIRE(p);
    mem.fail_from = (long)mem.calls;
    opool_mt_cache *c = (opool_mt_cache *)(uintptr_t)1;
    CHECK_EQ_U64(opool_mt_cache_create_ex(&c, p, 8), OPOOL_ENOMEM);
    CHECK(c == NULL);
    CHECK_EQ_U64(stats_of(p).caches, 0);
    CHECK_EQ_U64(mem.blocks, 1); /* the pool's own */
    mem.fail_from = -1;
    CHECK_EQ_U64(opool_mt_cache_create_ex(&c, p, 8), OPOOL_OK);
    REQUIRE(c);
    opool_mt_cache_destroy(c);
    /* a record to reuse: no allocation, so no failure */
    mem.fail_from = (long)mem.calls;
    CHECK_EQ_U64(opool_mt_cache_create_ex(&c, p, 8), OPOOL_OK);
    CHECK(c != NULL);
    CHECK_MT(p);
    opool_mt_destroy(p);
    CHECK_EQ_U64(mem.blocks, 0);
}

TEST(cache_alloc_refills_half_its_size_from_the_top) {
    opool_mt *p = make_pool(8, 16);
    REQUIRE(p);
    opool_mt_cache *c = opool_mt_cache_create(p, 8);
    REQUIRE(c);
    opool_handle h;
    REQUIRE(opool_mt_cache_alloc(c, &h));
    CHECK_HANDLE(h, G1, 0); /* s1 of 0, 1, 2, 3 */
    CHECK_EQ_U64(stats_of(p).parked, 3);
    CHECK_EQ_U64(opool_mt_count(p), 1);
    CHECK_EQ_U64(next_index(p), 4); /* the shared top is past the refill */
    CHECK_EQ_U64(next_cache_index(c), 1);
    CHECK_EQ_U64(next_cache_index(c), 2);
    CHECK_EQ_U64(next_cache_index(c), 3);
    CHECK_EQ_U64(stats_of(p).parked, 0);
    CHECK_EQ_U64(next_cache_index(c), 5); /* refill 5, 6, 7, 8 */
    CHECK_EQ_U64(stats_of(p).parked, 3);
    CHECK_EQ_U64(next_cache_index(c), 6);
    CHECK_EQ_U64(next_index(p), 9);
    CHECK_EQ_U64(opool_mt_count(p), 8);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

TEST(cache_refill_takes_what_the_shared_list_has) {
    recorder r;
    opool_desc d = recorded_desc(8, 6, &r);
    opool_mt *p = create(&d);
    REQUIRE(p);
    opool_mt_cache *c = opool_mt_cache_create(p, 8);
    REQUIRE(c);
    opool_handle h[4];
    alloc_n(p, 4, h);
    CHECK_EQ_U64(next_cache_index(c), 4);
    CHECK_EQ_U64(stats_of(p).parked, 1);
    CHECK_EQ_U64(next_cache_index(c), 5);
    CHECK_EQ_U64(stats_of(p).parked, 0);
    opool_handle out = handle(G1, 2);
    CHECK(opool_mt_cache_alloc(c, &out) == NULL);
    CHECK(opool_handle_is_null(out));
    CHECK_EQ_U64(stats_of(p).failed_allocs, 1);
    CHECK_EQ_U64(r.efull, 1);
    CHECK_EQ_U64(opool_mt_count(p), 6);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

TEST(cache_free_parks_and_cache_alloc_takes_the_newest) {
    opool_mt *p = make_pool(8, 8);
    REQUIRE(p);
    opool_mt_cache *c = opool_mt_cache_create(p, 8);
    REQUIRE(c);
    opool_handle h[3], g;
    alloc_n(p, 3, h);
    CHECK_EQ_U64(opool_mt_cache_free(c, h[0]), OPOOL_OK);
    CHECK_EQ_U64(opool_mt_cache_free(c, h[2]), OPOOL_OK);
    CHECK_EQ_U64(opool_mt_cache_free(c, h[1]), OPOOL_OK);
    CHECK_EQ_U64(stats_of(p).parked, 3);
    CHECK_EQ_U64(opool_mt_count(p), 0);
    REQUIRE(opool_mt_cache_alloc(c, &g));
    CHECK_HANDLE(g, G1 + 2, 1);
    CHECK_EQ_U64(next_cache_index(c), 2);
    CHECK_EQ_U64(next_cache_index(c), 0);
    CHECK_EQ_U64(next_index(p), 3); /* the shared list was not touched */
    CHECK_EQ_U64(stats_of(p).parked, 0);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

TEST(cache_free_spills_the_oldest_half_when_full) {
    opool_mt *p = make_pool(8, 16);
    REQUIRE(p);
    opool_mt_cache *c = opool_mt_cache_create(p, 4);
    REQUIRE(c);
    opool_handle h[5];
    alloc_n(p, 5, h);
    for (int k = 0; k < 4; k++) CHECK_EQ_U64(opool_mt_cache_free(c, h[k]), OPOOL_OK);
    CHECK_EQ_U64(stats_of(p).parked, 4);
    CHECK_EQ_U64(opool_mt_cache_free(c, h[4]), OPOOL_OK); /* full: 0 and 1 go, 1 on top */
    CHECK_EQ_U64(stats_of(p).parked, 3);
    CHECK_EQ_U64(next_index(p), 1);
    CHECK_EQ_U64(next_index(p), 0);
    CHECK_EQ_U64(next_index(p), 5);
    CHECK_EQ_U64(next_cache_index(c), 4);
    CHECK_EQ_U64(next_cache_index(c), 3);
    CHECK_EQ_U64(next_cache_index(c), 2);
    CHECK_EQ_U64(stats_of(p).parked, 0);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

TEST(cache_of_size_two_moves_one_slot_at_a_time) {
    opool_mt *p = make_pool(8, 8);
    REQUIRE(p);
    opool_mt_cache *c = opool_mt_cache_create(p, 2);
    REQUIRE(c);
    opool_handle a, b, e;
    REQUIRE(opool_mt_cache_alloc(c, &a));
    CHECK_HANDLE(a, G1, 0);
    CHECK_EQ_U64(stats_of(p).parked, 0); /* H = 1: the refill parks nothing */
    REQUIRE(opool_mt_cache_alloc(c, &b));
    CHECK_HANDLE(b, G1, 1);
    REQUIRE(opool_mt_alloc(p, &e));
    CHECK_HANDLE(e, G1, 2);
    CHECK_EQ_U64(opool_mt_cache_free(c, a), OPOOL_OK);
    CHECK_EQ_U64(opool_mt_cache_free(c, b), OPOOL_OK);
    CHECK_EQ_U64(stats_of(p).parked, 2);
    CHECK_EQ_U64(opool_mt_cache_free(c, e), OPOOL_OK); /* spills 0 alone */
    CHECK_EQ_U64(stats_of(p).parked, 2);
    CHECK_EQ_U64(next_index(p), 0);
    CHECK_EQ_U64(next_index(p), 3);
    CHECK_EQ_U64(next_cache_index(c), 2);
    CHECK_EQ_U64(next_cache_index(c), 1);
    CHECK_EQ_U64(next_cache_index(c), 4);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

TEST(cache_flush_returns_every_parked_slot_newest_on_top) {
    opool_mt *p = make_pool(8, 8);
    REQUIRE(p);
    opool_mt_cache *c = opool_mt_cache_create(p, 8);
    REQUIRE(c);
    opool_handle h[3];
    alloc_n(p, 3, h);
    for (int k = 0; k < 3; k++) CHECK_EQ_U64(opool_mt_cache_free(c, h[k]), OPOOL_OK);
    opool_mt_cache_flush(c);
    CHECK_EQ_U64(stats_of(p).parked, 0);
    CHECK_EQ_U64(stats_of(p).caches, 1);
    CHECK_EQ_U64(next_index(p), 2);
    CHECK_EQ_U64(next_index(p), 1);
    CHECK_EQ_U64(next_index(p), 0);
    CHECK_EQ_U64(next_cache_index(c), 3); /* the cache still works: refills 3..6 */
    CHECK_EQ_U64(stats_of(p).parked, 3);
    opool_mt_cache_flush(c);
    opool_mt_cache_flush(c); /* an empty cache: nothing */
    CHECK_EQ_U64(next_index(p), 4);
    CHECK_EQ_U64(next_index(p), 5);
    CHECK_EQ_U64(next_index(p), 6);
    CHECK_EQ_U64(next_index(p), 7);
    CHECK_EQ_U64(opool_mt_count(p), 8);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

TEST(cache_destroy_returns_every_parked_slot_newest_on_top) {
    opool_mt *p = make_pool(8, 8);
    REQUIRE(p);
    opool_mt_cache *c = opool_mt_cache_create(p, 8);
    REQUIRE(c);
    opool_handle h[3];
    alloc_n(p, 3, h);
    for (int k = 0; k < 3; k++) CHECK_EQ_U64(opool_mt_cache_free(c, h[k]), OPOOL_OK);
    opool_mt_cache_destroy(c);
    opool_mt_stats s = stats_of(p);
    CHECK_EQ_U64(s.parked, 0);
    CHECK_EQ_U64(s.caches, 0);
    CHECK_EQ_U64(next_index(p), 2);
    CHECK_EQ_U64(next_index(p), 1);
    CHECK_EQ_U64(next_index(p), 0);
    CHECK_EQ_U64(next_index(p), 3);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

TEST(destroyed_cache_record_is_reused_by_the_next_create_that_fits) {
    counting mem;
    opool_desc d = desc_of(8, 16);
    d.allocator = counting_allocator(&mem);
    opool_mt *p = create(&d);
    REQUIRE(p);
    opool_mt_cache *c1 = opool_mt_cache_create(p, 8);
    REQUIRE(c1);
    CHECK_EQ_U64(stats_of(p).caches, 1);
    size_t calls = mem.calls;
    opool_mt_cache_destroy(c1);
    CHECK_EQ_U64(stats_of(p).caches, 0);
    opool_mt_cache *c2 = opool_mt_cache_create(p, 8);
    CHECK_EQ_PTR(c2, c1);
    CHECK_EQ_U64(stats_of(p).caches, 1);
    opool_mt_cache_destroy(c2);
    opool_mt_cache *c3 = opool_mt_cache_create(p, 4);
    CHECK_EQ_PTR(c3, c1);
    CHECK_EQ_U64(mem.calls, calls); /* no allocation for a reused record */
    REQUIRE(c3);
    /* the reused record has the new size: a cache of 4 spills at the 5th free */
    opool_handle h[5];
    alloc_n(p, 5, h);
    CHECK_EQ_U64(opool_mt_cache_free_bulk(c3, h, 5), 5);
    CHECK_EQ_U64(stats_of(p).parked, 3);
    opool_mt_cache *c4 = opool_mt_cache_create(p, 16);
    REQUIRE(c4);
    CHECK(c4 != c3);
    CHECK_EQ_U64(stats_of(p).caches, 2);
    opool_mt_cache_destroy(c3);
    opool_mt_cache_destroy(c4);
    CHECK_EQ_U64(stats_of(p).caches, 0);
    opool_mt_cache *c5 = opool_mt_cache_create(p, 16); /* only c4's record fits */
    CHECK_EQ_PTR(c5, c4);
    CHECK_EQ_U64(stats_of(p).caches, 1);
    CHECK_MT(p);
    opool_mt_destroy(p);
    CHECK_EQ_U64(mem.blocks, 0);
}

TEST(count_includes_objects_allocated_through_caches) {
    opool_mt *p = make_pool(8, 16);
    REQUIRE(p);
    opool_mt_cache *c = opool_mt_cache_create(p, 4);
    REQUIRE(c);
    opool_handle a[2], b[3];
    alloc_n(p, 2, a);
    cache_alloc_n(c, 3, b);
    CHECK_EQ_U64(opool_mt_count(p), 5);
    CHECK_EQ_U64(stats_of(p).count, 5);
    CHECK_EQ_U64(opool_mt_cache_free(c, a[0]), OPOOL_OK);
    CHECK_EQ_U64(opool_mt_count(p), 4);
    CHECK_EQ_U64(opool_mt_free(p, b[0]), OPOOL_OK);
    CHECK_EQ_U64(opool_mt_count(p), 3);
    opool_mt_cache_destroy(c);
    CHECK_EQ_U64(opool_mt_count(p), 3);
    opool_mt_cache *c2 = opool_mt_cache_create(p, 4);
    REQUIRE(c2);
    CHECK_EQ_U64(opool_mt_count(p), 3);
    CHECK_EQ_U64(opool_mt_free(p, b[1]), OPOOL_OK);
    CHECK_EQ_U64(opool_mt_cache_free(c2, b[2]), OPOOL_OK);
    CHECK_EQ_U64(opool_mt_count(p), 1);
    CHECK_EQ_U64(stats_of(p).count, 1);
    CHECK(opool_mt_valid(p, a[1]));
    CHECK_MT(p);
    opool_mt_destroy(p);
}

TEST(handles_cross_between_cache_and_pool_paths) {
    opool_mt *p = make_pool(8, 8);
    REQUIRE(p);
    opool_mt_cache *c = opool_mt_cache_create(p, 4);
    REQUIRE(c);
    opool_handle x, y;
    void *ox = opool_mt_cache_alloc(c, &x);
    void *oy = opool_mt_alloc(p, &y);
    REQUIRE(ox && oy);
    CHECK_EQ_PTR(opool_mt_get(p, x), ox);
    CHECK_EQ_PTR(opool_mt_get(p, y), oy);
    CHECK_EQ_U64(opool_mt_free(p, x), OPOOL_OK);
    CHECK_EQ_U64(opool_mt_cache_free(c, y), OPOOL_OK);
    CHECK_EQ_U64(opool_mt_cache_free(c, x), OPOOL_ESTALE);
    CHECK_EQ_U64(opool_mt_free(p, y), OPOOL_ESTALE);
    CHECK_EQ_U64(opool_mt_count(p), 0);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

TEST(cache_free_rejects_handles_like_free) {
    recorder r;
    opool_desc d = recorded_desc(8, 4, &r);
    opool_mt *p = create(&d);
    REQUIRE(p);
    opool_mt_cache *c = opool_mt_cache_create(p, 4);
    REQUIRE(c);
    opool_handle h;
    REQUIRE(opool_mt_alloc(p, &h));
    CHECK_EQ_U64(opool_mt_cache_free(c, OPOOL_NULL), OPOOL_EINVAL);
    CHECK_EQ_U64(opool_mt_cache_free(c, handle(G1, 4)), OPOOL_EINVAL);
    CHECK_EQ_U64(opool_mt_cache_free(c, handle(G1 + 1, 0)), OPOOL_EINVAL);
    CHECK_EQ_U64(opool_mt_cache_free(c, handle(G1, 1)), OPOOL_ESTALE); /* never allocated */
    CHECK_EQ_U64(r.reports, 4);
    CHECK_EQ_U64(r.last_what, OPOOL_ESTALE);
    CHECK_EQ_U64(r.last_report_handle.bits, handle(G1, 1).bits);
    CHECK_EQ_U64(opool_mt_cache_free(c, h), OPOOL_OK);
    CHECK_EQ_U64(opool_mt_cache_free(c, h), OPOOL_ESTALE);
    CHECK_EQ_U64(r.reports, 5);
    CHECK_EQ_U64(r.reports_with_pool, 0);
    opool_mt_stats s = stats_of(p);
    CHECK_EQ_U64(s.rejected_handles, 5);
    CHECK_EQ_U64(s.parked, 1);
    CHECK_EQ_U64(s.count, 0);
    CHECK_EQ_U64(opool_mt_cache_free(NULL, h), OPOOL_EINVAL);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

TEST(cache_bulk_calls_are_single_calls_in_order) {
    opool_mt *p = make_pool(8, 16);
    REQUIRE(p);
    opool_mt_cache *c = opool_mt_cache_create(p, 4);
    REQUIRE(c);
    opool_handle h[5];
    void *objs[5];
    CHECK_EQ_U64(opool_mt_cache_alloc_bulk(c, h, objs, 5), 5);
    for (uint32_t k = 0; k < 5; k++) {
        CHECK_HANDLE(h[k], G1, k); /* refills of 2: 0 [1], 1, 2 [3], 3, 4 [5] */
        CHECK_EQ_PTR(objs[k], opool_mt_get(p, h[k]));
    }
    CHECK_EQ_U64(stats_of(p).parked, 1);
    CHECK_EQ_U64(next_index(p), 6);
    /* parked [5]; then 0, 1, 2 fill it; 3 spills 5 and 0; 4 is parked */
    CHECK_EQ_U64(opool_mt_cache_free_bulk(c, h, 5), 5);
    CHECK_EQ_U64(stats_of(p).parked, 4);
    CHECK_EQ_U64(next_index(p), 0);
    CHECK_EQ_U64(next_index(p), 5);
    CHECK_EQ_U64(next_index(p), 7);
    CHECK_EQ_U64(next_cache_index(c), 4);
    CHECK_EQ_U64(next_cache_index(c), 3);
    CHECK_EQ_U64(next_cache_index(c), 2);
    CHECK_EQ_U64(next_cache_index(c), 1);
    CHECK_EQ_U64(opool_mt_cache_alloc_bulk(c, NULL, NULL, 0), 0);
    CHECK_EQ_U64(opool_mt_cache_free_bulk(c, NULL, 0), 0);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

TEST(cache_free_bulk_skips_rejected_handles) {
    recorder r;
    opool_desc d = recorded_desc(8, 8, &r);
    opool_mt *p = create(&d);
    REQUIRE(p);
    opool_mt_cache *c = opool_mt_cache_create(p, 8);
    REQUIRE(c);
    opool_handle h[3];
    alloc_n(p, 3, h);
    opool_handle hs[5] = {h[2], h[2], handle(G1, 8), h[0], OPOOL_NULL};
    CHECK_EQ_U64(opool_mt_cache_free_bulk(c, hs, 5), 2);
    CHECK_EQ_U64(r.reports, 3);
    opool_mt_stats s = stats_of(p);
    CHECK_EQ_U64(s.rejected_handles, 3);
    CHECK_EQ_U64(s.parked, 2);
    CHECK_EQ_U64(s.count, 1);
    CHECK_EQ_U64(next_cache_index(c), 0);
    CHECK_EQ_U64(next_cache_index(c), 2);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

/* Like alloc_bulk (the header's "see opool_mt_alloc_bulk"): a short bulk call
 * is one failed alloc, however many of its n it could not get. */
TEST(cache_alloc_bulk_is_partial_when_the_pool_runs_out) {
    recorder r;
    opool_desc d = recorded_desc(8, 3, &r);
    opool_mt *p = create(&d);
    REQUIRE(p);
    opool_mt_cache *c = opool_mt_cache_create(p, 4);
    REQUIRE(c);
    opool_handle h[5];
    CHECK_EQ_U64(opool_mt_cache_alloc_bulk(c, h, NULL, 5), 3);
    for (uint32_t k = 0; k < 3; k++) CHECK_HANDLE(h[k], G1, k);
    CHECK_EQ_U64(stats_of(p).failed_allocs, 1);
    CHECK_EQ_U64(r.efull, 1);
    CHECK_EQ_U64(opool_mt_count(p), 3);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

TEST(alloc_steals_a_parked_slot_when_the_shared_list_is_empty) {
    opool_mt *p = make_pool(8, 4);
    REQUIRE(p);
    opool_mt_cache *c = opool_mt_cache_create(p, 4);
    REQUIRE(c);
    CHECK_EQ_U64(next_cache_index(c), 0); /* parks 1 */
    CHECK_EQ_U64(next_index(p), 2);
    CHECK_EQ_U64(next_index(p), 3);
    opool_handle h;
    REQUIRE(opool_mt_alloc(p, &h));
    CHECK_HANDLE(h, G1, 1);
    opool_mt_stats s = stats_of(p);
    CHECK_EQ_U64(s.steals, 1);
    CHECK_EQ_U64(s.parked, 0);
    CHECK_EQ_U64(s.failed_allocs, 0);
    CHECK(opool_mt_alloc(p, NULL) == NULL);
    CHECK(opool_mt_cache_alloc(c, NULL) == NULL);
    s = stats_of(p);
    CHECK_EQ_U64(s.failed_allocs, 2);
    CHECK_EQ_U64(s.count, 4);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

TEST(cache_alloc_steals_from_another_cache) {
    opool_mt *p = make_pool(8, 4);
    REQUIRE(p);
    opool_mt_cache *c1 = opool_mt_cache_create(p, 4);
    opool_mt_cache *c2 = opool_mt_cache_create(p, 4);
    REQUIRE(c1 && c2);
    CHECK_EQ_U64(next_cache_index(c1), 0); /* parks 1 */
    CHECK_EQ_U64(next_cache_index(c2), 2); /* parks 3 */
    CHECK_EQ_U64(next_cache_index(c2), 3);
    opool_handle h;
    REQUIRE(opool_mt_cache_alloc(c2, &h));
    CHECK_HANDLE(h, G1, 1);
    CHECK_EQ_U64(stats_of(p).steals, 1);
    CHECK(opool_mt_cache_alloc(c2, NULL) == NULL);
    CHECK(opool_mt_cache_alloc(c1, NULL) == NULL); /* its parked slot was taken */
    CHECK_EQ_U64(stats_of(p).failed_allocs, 2);
    CHECK_EQ_U64(opool_mt_count(p), 4);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

TEST(alloc_bulk_steals_what_the_shared_list_lacks) {
    opool_mt *p = make_pool(8, 6);
    REQUIRE(p);
    opool_mt_cache *c = opool_mt_cache_create(p, 4);
    REQUIRE(c);
    CHECK_EQ_U64(next_cache_index(c), 0); /* parks 1 */
    CHECK_EQ_U64(next_index(p), 2);
    CHECK_EQ_U64(next_index(p), 3);
    opool_handle h[4];
    void *objs[4];
    CHECK_EQ_U64(opool_mt_alloc_bulk(p, h, objs, 4), 3);
    CHECK_HANDLE(h[0], G1, 4);
    CHECK_HANDLE(h[1], G1, 5);
    CHECK_HANDLE(h[2], G1, 1);
    for (int k = 0; k < 3; k++) CHECK_EQ_PTR(objs[k], opool_mt_get(p, h[k]));
    opool_mt_stats s = stats_of(p);
    CHECK_EQ_U64(s.steals, 1);
    CHECK_EQ_U64(s.failed_allocs, 1);
    CHECK_EQ_U64(s.count, 6);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

TEST(alloc_fails_only_when_every_slot_is_live) {
    opool_mt *p = make_pool(8, 12);
    REQUIRE(p);
    opool_mt_cache *c1 = opool_mt_cache_create(p, 8);
    opool_mt_cache *c2 = opool_mt_cache_create(p, 4);
    REQUIRE(c1 && c2);
    CHECK_EQ_U64(next_cache_index(c1), 0); /* parks 1, 2, 3 */
    CHECK_EQ_U64(next_cache_index(c2), 4); /* parks 5 */
    CHECK_EQ_U64(stats_of(p).parked, 4);
    uint32_t got = 0;
    while (opool_mt_alloc(p, NULL) != NULL) got++;
    CHECK_EQ_U64(got, 10);
    opool_mt_stats s = stats_of(p);
    CHECK_EQ_U64(s.count, 12);
    CHECK_EQ_U64(s.parked, 0);
    CHECK_EQ_U64(s.steals, 4);
    CHECK_EQ_U64(s.failed_allocs, 1);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

/* ---- waiting ------------------------------------------------------------ */

TEST(alloc_wait_takes_a_free_slot_without_sleeping) {
    opool_mt *p = make_pool(8, 2);
    REQUIRE(p);
    opool_handle h;
    REQUIRE(opool_mt_alloc_wait(p, &h, 1000000000u));
    CHECK_HANDLE(h, G1, 0);
    REQUIRE(opool_mt_alloc_wait(p, &h, 0));
    CHECK_HANDLE(h, G1, 1);
    CHECK_EQ_U64(opool_mt_free(p, h), OPOOL_OK);
    REQUIRE(opool_mt_alloc_wait(p, &h, OPOOL_WAIT_FOREVER));
    CHECK_HANDLE(h, G1 + 2, 1);
    opool_mt_stats s = stats_of(p);
    CHECK_EQ_U64(s.sleeps, 0);
    CHECK_EQ_U64(s.failed_allocs, 0);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

TEST(alloc_wait_with_zero_timeout_fails_at_once) {
    recorder r;
    opool_desc d = recorded_desc(8, 1, &r);
    opool_mt *p = create(&d);
    REQUIRE(p);
    REQUIRE(opool_mt_alloc(p, NULL));
    opool_handle out = handle(G1, 0);
    CHECK(opool_mt_alloc_wait(p, &out, 0) == NULL);
    CHECK(opool_handle_is_null(out));
    opool_mt_stats s = stats_of(p);
    CHECK_EQ_U64(s.sleeps, 0);
    CHECK_EQ_U64(s.failed_allocs, 1);
    CHECK_EQ_U64(r.efull, 1);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

TEST(alloc_wait_times_out_after_at_least_the_timeout) {
    recorder r;
    opool_desc d = recorded_desc(8, 1, &r);
    opool_mt *p = create(&d);
    REQUIRE(p);
    REQUIRE(opool_mt_alloc(p, NULL));
    static const uint64_t timeout = 2000000; /* 2 ms */
    opool_handle out = handle(G1, 0);
    uint64_t t0 = now_ns();
    CHECK(opool_mt_alloc_wait(p, &out, timeout) == NULL);
    uint64_t waited = now_ns() - t0;
    CHECK(waited >= timeout);
    CHECK(opool_handle_is_null(out));
    opool_mt_stats s = stats_of(p);
    CHECK(s.sleeps >= 1);
    CHECK_EQ_U64(s.failed_allocs, 1); /* a wait counts once */
    CHECK_EQ_U64(s.wake_calls, 0);
    CHECK_EQ_U64(r.efull, 1);
    CHECK_EQ_U64(s.count, 1);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

TEST(alloc_wait_steals_a_parked_slot_instead_of_sleeping) {
    opool_mt *p = make_pool(8, 2);
    REQUIRE(p);
    opool_mt_cache *c = opool_mt_cache_create(p, 4);
    REQUIRE(c);
    opool_handle h[2], g;
    alloc_n(p, 2, h);
    CHECK_EQ_U64(opool_mt_cache_free(c, h[1]), OPOOL_OK);
    REQUIRE(opool_mt_alloc_wait(p, &g, 1000000000u));
    CHECK_HANDLE(g, G1 + 2, 1);
    opool_mt_stats s = stats_of(p);
    CHECK_EQ_U64(s.steals, 1);
    CHECK_EQ_U64(s.sleeps, 0);
    CHECK_EQ_U64(s.failed_allocs, 0);
    CHECK_EQ_U64(s.parked, 0);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

/* ---- waiting through a cache --------------------------------------------- */

TEST(cache_alloc_wait_takes_the_newest_parked_slot_without_sleeping) {
    opool_mt *p = make_pool(8, 8);
    REQUIRE(p);
    opool_mt_cache *c = opool_mt_cache_create(p, 4);
    REQUIRE(c);
    opool_handle h;
    REQUIRE(opool_mt_cache_alloc_wait(c, &h, OPOOL_WAIT_FOREVER)); /* refills 0, 1 */
    CHECK_HANDLE(h, G1, 0);
    REQUIRE(opool_mt_cache_alloc_wait(c, &h, 0)); /* a hit */
    CHECK_HANDLE(h, G1, 1);
    CHECK_EQ_U64(opool_mt_cache_free(c, h), OPOOL_OK);
    REQUIRE(opool_mt_cache_alloc_wait(c, &h, 1000000000u));
    CHECK_HANDLE(h, G1 + 2, 1);
    opool_mt_stats s = stats_of(p);
    CHECK_EQ_U64(s.sleeps, 0);
    CHECK_EQ_U64(s.failed_allocs, 0);
    CHECK_EQ_U64(s.count, 2);
    CHECK_EQ_U64(opool_mt_count(p), 2);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

TEST(cache_alloc_wait_steals_a_parked_slot_instead_of_sleeping) {
    opool_mt *p = make_pool(8, 2);
    REQUIRE(p);
    opool_mt_cache *a = opool_mt_cache_create(p, 4);
    opool_mt_cache *b = opool_mt_cache_create(p, 4);
    REQUIRE(a && b);
    opool_handle h[2], g;
    alloc_n(p, 2, h);
    CHECK_EQ_U64(opool_mt_cache_free(a, h[1]), OPOOL_OK);
    REQUIRE(opool_mt_cache_alloc_wait(b, &g, OPOOL_WAIT_FOREVER));
    CHECK_HANDLE(g, G1 + 2, 1);
    opool_mt_stats s = stats_of(p);
    CHECK_EQ_U64(s.steals, 1);
    CHECK_EQ_U64(s.sleeps, 0);
    CHECK_EQ_U64(s.failed_allocs, 0);
    CHECK_EQ_U64(s.parked, 0);
    CHECK_EQ_U64(s.count, 2);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

TEST(cache_alloc_wait_with_zero_timeout_fails_at_once) {
    recorder r;
    opool_desc d = recorded_desc(8, 1, &r);
    opool_mt *p = create(&d);
    REQUIRE(p);
    opool_mt_cache *c = opool_mt_cache_create(p, 2);
    REQUIRE(c);
    REQUIRE(opool_mt_alloc(p, NULL));
    opool_handle out = handle(G1, 0);
    CHECK(opool_mt_cache_alloc_wait(c, &out, 0) == NULL);
    CHECK(opool_handle_is_null(out));
    opool_mt_stats s = stats_of(p);
    CHECK_EQ_U64(s.sleeps, 0);
    CHECK_EQ_U64(s.failed_allocs, 1);
    CHECK_EQ_U64(r.efull, 1);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

TEST(cache_alloc_wait_times_out_after_at_least_the_timeout) {
    recorder r;
    opool_desc d = recorded_desc(8, 1, &r);
    opool_mt *p = create(&d);
    REQUIRE(p);
    opool_mt_cache *c = opool_mt_cache_create(p, 2);
    REQUIRE(c);
    REQUIRE(opool_mt_alloc(p, NULL));
    static const uint64_t timeout = 2000000; /* 2 ms */
    opool_handle out = handle(G1, 0);
    uint64_t t0 = now_ns();
    CHECK(opool_mt_cache_alloc_wait(c, &out, timeout) == NULL);
    CHECK(now_ns() - t0 >= timeout);
    CHECK(opool_handle_is_null(out));
    opool_mt_stats s = stats_of(p);
    CHECK(s.sleeps >= 1);
    CHECK_EQ_U64(s.failed_allocs, 1); /* a wait counts once */
    CHECK_EQ_U64(r.efull, 1);
    CHECK_EQ_U64(s.count, 1);
    CHECK_EQ_U64(s.parked, 0);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

/* ---- what failed_allocs counts -------------------------------------------- */

/* failed_allocs counts calls that return NULL (a bulk call: fewer than it
 * asked for), once each, on every path: a miss that a refill, a steal or a
 * wait then serves is no failure. Exact counts, path by path. */
TEST(failed_allocs_counts_only_calls_that_return_null) {
    recorder r;
    opool_desc d = recorded_desc(8, 4, &r);
    opool_mt *p = create(&d);
    REQUIRE(p);
    opool_mt_cache *a = opool_mt_cache_create(p, 4);
    opool_mt_cache *b = opool_mt_cache_create(p, 4);
    REQUIRE(a && b);
    opool_handle h[4], g, bulk[4];
    /* misses that are served: a refill, a steal by each path, a bulk steal */
    REQUIRE(opool_mt_cache_alloc(a, &h[0])); /* miss, refills 0 and 1 */
    alloc_n(p, 2, &h[1]);                    /* 2, 3: the shared list is empty */
    REQUIRE(opool_mt_cache_alloc(a, &h[3])); /* a hit: 1 */
    CHECK_EQ_U64(opool_mt_cache_free(a, h[3]), OPOOL_OK);
    REQUIRE(opool_mt_cache_alloc(b, &g)); /* miss, steals from a */
    CHECK_EQ_U64(opool_mt_cache_free(a, g), OPOOL_OK);
    REQUIRE(opool_mt_alloc(p, &g)); /* steals */
    CHECK_EQ_U64(opool_mt_cache_free(a, g), OPOOL_OK);
    REQUIRE(opool_mt_alloc_wait(p, &g, 0)); /* steals */
    CHECK_EQ_U64(opool_mt_cache_free(a, g), OPOOL_OK);
    REQUIRE(opool_mt_cache_alloc_wait(b, &g, 0)); /* miss, steals */
    CHECK_EQ_U64(opool_mt_cache_free(a, g), OPOOL_OK);
    CHECK_EQ_U64(opool_mt_alloc_bulk(p, bulk, NULL, 1), 1); /* steals */
    CHECK_EQ_U64(opool_mt_cache_free(a, bulk[0]), OPOOL_OK);
    CHECK_EQ_U64(opool_mt_cache_alloc_bulk(b, bulk, NULL, 1), 1);
    CHECK_EQ_U64(opool_mt_cache_free(a, bulk[0]), OPOOL_OK);
    opool_mt_stats s = stats_of(p);
    CHECK_EQ_U64(s.steals, 6);
    CHECK_EQ_U64(s.failed_allocs, 0);
    CHECK_EQ_U64(r.efull, 0);
    /* every slot live: each call that returns NULL (or comes back short)
     * counts once, and asking a bulk call for none is no failure */
    REQUIRE(opool_mt_alloc(p, &g));
    CHECK_EQ_U64(opool_mt_count(p), 4);
    CHECK(opool_mt_alloc(p, NULL) == NULL);
    CHECK(opool_mt_alloc_wait(p, NULL, 0) == NULL);
    CHECK(opool_mt_alloc_wait(p, NULL, 1000) == NULL);
    CHECK(opool_mt_cache_alloc(a, NULL) == NULL);
    CHECK(opool_mt_cache_alloc_wait(a, NULL, 0) == NULL);
    CHECK(opool_mt_cache_alloc_wait(b, NULL, 1000) == NULL);
    CHECK_EQ_U64(opool_mt_alloc_bulk(p, bulk, NULL, 3), 0);
    CHECK_EQ_U64(opool_mt_cache_alloc_bulk(b, bulk, NULL, 3), 0);
    CHECK_EQ_U64(opool_mt_alloc_bulk(p, bulk, NULL, 0), 0);
    CHECK_EQ_U64(opool_mt_cache_alloc_bulk(b, bulk, NULL, 0), 0);
    s = stats_of(p);
    CHECK_EQ_U64(s.failed_allocs, 8);
    CHECK_EQ_U64(r.efull, 4); /* the episode's 1st, 2nd, 4th and 8th */
    /* null objects are no allocs at all */
    CHECK(opool_mt_alloc(NULL, NULL) == NULL);
    CHECK(opool_mt_cache_alloc_wait(NULL, NULL, 0) == NULL);
    CHECK_EQ_U64(stats_of(p).failed_allocs, 8);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

/* A short bulk call is one failed alloc, however many it lacked; a bulk call
 * that gets everything is none. */
TEST(short_bulk_alloc_counts_one_failed_alloc) {
    opool_mt *p = make_pool(8, 4);
    REQUIRE(p);
    opool_mt_cache *c = opool_mt_cache_create(p, 2);
    REQUIRE(c);
    opool_handle hs[8];
    CHECK_EQ_U64(opool_mt_alloc_bulk(p, hs, NULL, 2), 2);
    CHECK_EQ_U64(stats_of(p).failed_allocs, 0);
    CHECK_EQ_U64(opool_mt_cache_alloc_bulk(c, hs + 2, NULL, 5), 2);
    CHECK_EQ_U64(stats_of(p).failed_allocs, 1);
    CHECK_EQ_U64(opool_mt_free_bulk(p, hs, 4), 4);
    CHECK_EQ_U64(opool_mt_alloc_bulk(p, hs, NULL, 7), 4);
    CHECK_EQ_U64(stats_of(p).failed_allocs, 2);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

/* ---- statistics --------------------------------------------------------- */

/* ---- growth (OPOOL_FULL_GROW) ------------------------------------------- */

static opool_desc growing_desc(size_t object_size, uint32_t capacity, uint32_t max_capacity) {
    opool_desc d = desc_of(object_size, capacity);
    d.on_full = OPOOL_FULL_GROW;
    d.max_capacity = max_capacity;
    return d;
}

/* True where this build grows pools; elsewhere false, once create is seen
 * to refuse a growing pool as the header says (OPOOL_ENOMEM). */
static bool grows_here(void) {
    if (OPOOL_TEST_MT_GROWS) return true;
    opool_desc d = growing_desc(8, 4, 100);
    opool_mt *p = (opool_mt *)(uintptr_t)1;
    CHECK_EQ_U64(opool_mt_create(&p, &d), OPOOL_ENOMEM);
    CHECK(p == NULL);
    return false;
}

/* One thread: the k-th alloc gets slot k (a growth lists its slots in order,
 * the first on top), a growth adds max(capacity, 64) up to the limit, no
 * object moves, and at the limit the pool fails as a fixed one does. */
TEST(growing_pool_grows_when_full_and_never_moves_an_object) {
    if (!grows_here()) return;
    recorder r;
    opool_desc d = growing_desc(32, 4, 200);
    memset(&r, 0, sizeof r);
    d.report = rec_report;
    d.flags |= OPOOL_REPORT_UNRATIONED; /* every report counted */
    d.user = &r;
    opool_mt *p = create(&d);
    REQUIRE(p);
    static opool_handle h[200];
    static unsigned char *obj[200];
    const uint32_t caps[] = {4, 68, 136, 200}; /* +64 (the least), +68, then capped */
    uint32_t grow = 0;
    for (uint32_t k = 0; k < 200; k++) {
        if (k == caps[grow]) grow++;
        obj[k] = opool_mt_alloc(p, &h[k]);
        REQUIRE(obj[k] != NULL);
        CHECK_HANDLE(h[k], G1, k);
        CHECK_EQ_U64(opool_mt_capacity(p), caps[grow]);
        CHECK_EQ_U64(stats_of(p).grows, grow);
        CHECK(obj[k] == obj[0] + (size_t)k * 32); /* one reservation, in index order */
        memset(obj[k], (int)k, 32);
    }
    CHECK(opool_mt_alloc(p, NULL) == NULL); /* the limit */
    opool_mt_stats s = stats_of(p);
    CHECK_EQ_U64(s.capacity, 200);
    CHECK_EQ_U64(s.max_capacity, 200);
    CHECK_EQ_U64(s.grows, 3);
    CHECK_EQ_U64(s.count, 200);
    CHECK_EQ_U64(s.failed_allocs, 1);
    CHECK_EQ_U64(r.efull, 1);
    CHECK_MT(p);
    for (uint32_t k = 0; k < 200; k++) {
        CHECK(opool_mt_get(p, h[k]) == obj[k]);
        CHECK(obj[k][0] == (unsigned char)k && obj[k][31] == (unsigned char)k);
        CHECK_EQ_U64(opool_mt_free(p, h[k]), OPOOL_OK);
    }
    CHECK_EQ_U64(opool_mt_count(p), 0);
    CHECK_EQ_U64(opool_mt_capacity(p), 200); /* storage stays */
    CHECK_MT(p);
    opool_mt_destroy(p);
}

/* The slots a growth adds are free slots like create's: under OPOOL_POISON
 * a write into one is reported at its alloc, and under ASan a grown slot
 * never handed out is inaccessible (opool.h, DEBUGGING). */
TEST(growing_pool_poisons_and_hides_the_slots_a_growth_adds) {
    if (!grows_here()) return;
    recorder r;
    opool_desc d = recorded_desc(16, 2, &r);
    d.flags = OPOOL_POISON;
    d.on_full = OPOOL_FULL_GROW;
    d.max_capacity = 100;
    opool_mt *p = create(&d);
    REQUIRE(p);
    opool_handle h[3];
    alloc_n(p, 3, h); /* the third grows the pool to 66 */
    unsigned char *grown = opool_mt_get(p, h[2]);
    REQUIRE(grown);
    unsigned char *next = grown + 16; /* slot 3: grown, never handed out */
#ifdef TEST_ASAN
    CHECK(__asan_address_is_poisoned(next));
#endif
    write_after_free(next, 7, 16);
    CHECK_EQ_U64(r.write_after_free, 0);
    opool_handle h3;
    CHECK_EQ_PTR(opool_mt_alloc(p, &h3), next);
    CHECK_EQ_U64(r.write_after_free, 1);
    CHECK_EQ_U64(r.last_report_handle.bits, handle(G1 - 2, 3).bits);
    opool_mt_free(p, h3);
    for (int k = 0; k < 3; k++) opool_mt_free(p, h[k]);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

/* Handles of slots the pool does not have yet are out of range; once it
 * has them, a stale one of them is stale. */
TEST(growing_pool_rejects_handles_past_its_capacity_as_invalid) {
    if (!grows_here()) return;
    opool_desc d = growing_desc(8, 2, 100);
    opool_mt *p = create(&d);
    REQUIRE(p);
    CHECK_EQ_U64(opool_mt_free(p, handle(G1, 2)), OPOOL_EINVAL);
    CHECK(opool_mt_get(p, handle(G1, 99)) == NULL);
    opool_handle h[3];
    alloc_n(p, 3, h); /* the third grows the pool to 66 */
    CHECK_EQ_U64(opool_mt_capacity(p), 66);
    CHECK_EQ_U64(opool_mt_free(p, handle(G1, 66)), OPOOL_EINVAL);
    CHECK_EQ_U64(opool_mt_free(p, handle(G1 + 2, 2)), OPOOL_ESTALE);
    CHECK_EQ_U64(opool_mt_free(p, h[2]), OPOOL_OK);
    CHECK_EQ_U64(opool_mt_free(p, h[2]), OPOOL_ESTALE);
    CHECK_EQ_U64(stats_of(p).rejected_handles, 4);
    opool_mt_free(p, h[0]);
    opool_mt_free(p, h[1]);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

/* The free slots parked in caches are used before the pool grows: a steal
 * first, a growth only when nothing is parked. */
TEST(growing_pool_steals_parked_slots_before_it_grows) {
    if (!grows_here()) return;
    opool_desc d = growing_desc(8, 4, 100);
    opool_mt *p = create(&d);
    REQUIRE(p);
    opool_mt_cache *c = opool_mt_cache_create(p, 8);
    REQUIRE(c);
    opool_handle h[4];
    alloc_n(p, 4, h);
    CHECK_EQ_U64(opool_mt_cache_free(c, h[1]), OPOOL_OK);
    CHECK_EQ_U64(opool_mt_cache_free(c, h[3]), OPOOL_OK);
    CHECK_EQ_U64(next_index(p), 1); /* the oldest parked, stolen; 3 spilled with it */
    CHECK_EQ_U64(next_index(p), 3);
    CHECK_EQ_U64(stats_of(p).grows, 0);
    CHECK_EQ_U64(next_index(p), 4); /* nothing free anywhere: the first new slot */
    opool_mt_stats s = stats_of(p);
    CHECK_EQ_U64(s.grows, 1);
    CHECK_EQ_U64(s.capacity, 68);
    CHECK_EQ_U64(s.steals, 2);
    opool_mt_cache_destroy(c);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

/* A cache refill, the cache bulk alloc and the shared bulk alloc grow the
 * pool as an alloc does; a slot a growth added frees through the cache
 * that allocated it (its copy of the capacity is refreshed). */
TEST(growing_pool_grows_through_caches_and_bulk_calls) {
    if (!grows_here()) return;
    opool_desc d = growing_desc(16, 4, 1000);
    opool_mt *p = create(&d);
    REQUIRE(p);
    opool_handle h[80];
    CHECK_EQ_U64(opool_mt_alloc_bulk(p, h, NULL, 10), 10); /* 4 listed, then a growth */
    for (uint32_t k = 0; k < 10; k++) CHECK_HANDLE(h[k], G1, k);
    CHECK_EQ_U64(opool_mt_capacity(p), 68);
    opool_mt_cache *c = opool_mt_cache_create(p, 16);
    REQUIRE(c);
    CHECK_EQ_U64(opool_mt_cache_alloc_bulk(c, &h[10], NULL, 70), 70); /* 58 listed, then a growth */
    CHECK_EQ_U64(opool_mt_capacity(p), 136);
    CHECK_EQ_U64(stats_of(p).grows, 2);
    for (uint32_t k = 0; k < 80; k++) CHECK(opool_mt_valid(p, h[k]));
    for (uint32_t k = 10; k < 80; k++) CHECK_EQ_U64(opool_mt_cache_free(c, h[k]), OPOOL_OK);
    opool_mt_cache_flush(c);
    for (uint32_t k = 0; k < 10; k++) CHECK_EQ_U64(opool_mt_cache_free(c, h[k]), OPOOL_OK);
    CHECK_EQ_U64(opool_mt_count(p), 0);
    opool_mt_cache_destroy(c);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

/* alloc_wait grows the pool rather than sleep, and sleeps (or times out)
 * only at the limit. */
TEST(alloc_wait_on_a_growing_pool_grows_instead_of_sleeping) {
    if (!grows_here()) return;
    opool_desc d = growing_desc(8, 2, 66);
    opool_mt *p = create(&d);
    REQUIRE(p);
    opool_handle h[66];
    alloc_n(p, 2, h);
    CHECK(opool_mt_alloc_wait(p, &h[2], OPOOL_WAIT_FOREVER) != NULL);
    CHECK_HANDLE(h[2], G1, 2);
    opool_mt_cache *c = opool_mt_cache_create(p, 4);
    REQUIRE(c);
    for (uint32_t k = 3; k < 66; k++)
        CHECK(opool_mt_cache_alloc_wait(c, &h[k], OPOOL_WAIT_FOREVER) != NULL);
    opool_handle none;
    CHECK(opool_mt_alloc_wait(p, &none, 1000000) == NULL); /* 1 ms, at the limit */
    CHECK(opool_handle_is_null(none));
    opool_mt_stats s = stats_of(p);
    CHECK_EQ_U64(s.grows, 1);
    CHECK_EQ_U64(s.failed_allocs, 1);
    CHECK_EQ_U64(s.count, 66);
    for (uint32_t k = 0; k < 66; k++) CHECK_EQ_U64(opool_mt_free(p, h[k]), OPOOL_OK);
    opool_mt_cache_destroy(c);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

/* No fixed cap: OPOOL_MAX_CAPACITY is a limit the pool reserves address
 * space for, not memory (64-bit systems; on 32-bit ones the range does not
 * fit a size_t: OPOOL_EINVAL). A range no system can reserve: OPOOL_ENOMEM. */
TEST(growing_pool_up_to_the_largest_capacity_reserves_address_space_only) {
    opool_desc d = growing_desc(64, 16, OPOOL_MAX_CAPACITY);
    opool_mt *p = NULL;
    opool_status s = opool_mt_create(&p, &d);
    if (sizeof(size_t) < 8) { /* the limit's 16 bytes of arrays a slot pass SIZE_MAX */
        CHECK_EQ_U64(s, OPOOL_EINVAL);
        CHECK(p == NULL);
        d = growing_desc(1, 16, (1u << 30) + 16);
        d.object_align = 1; /* objects of 1 GiB fit; gen[] and own[] do not */
        p = (opool_mt *)(uintptr_t)1;
        CHECK_EQ_U64(opool_mt_create(&p, &d), OPOOL_EINVAL);
        CHECK(p == NULL);
        return;
    }
    if (!grows_here()) {
        CHECK_EQ_U64(s, OPOOL_ENOMEM);
        return;
    }
    CHECK_EQ_U64(s, OPOOL_OK);
    REQUIRE(p);
    opool_mt_cache *c = opool_mt_cache_create(p, 64);
    REQUIRE(c);
    static opool_handle h[5000];
    for (uint32_t k = 0; k < 5000; k++) REQUIRE(opool_mt_cache_alloc(c, &h[k]) != NULL);
    opool_mt_stats st = stats_of(p);
    CHECK_EQ_U64(st.capacity, 5120); /* 16, 80, 160, 320, ... 5120 */
    CHECK_EQ_U64(st.max_capacity, OPOOL_MAX_CAPACITY);
    for (uint32_t k = 0; k < 5000; k++) CHECK_EQ_U64(opool_mt_cache_free(c, h[k]), OPOOL_OK);
    opool_mt_cache_destroy(c);
    CHECK_MT(p);
    opool_mt_destroy(p);

    d = growing_desc((size_t)1 << 20, 16, OPOOL_MAX_CAPACITY); /* 4 PiB of objects */
    p = (opool_mt *)(uintptr_t)1;
    CHECK_EQ_U64(opool_mt_create(&p, &d), OPOOL_ENOMEM);
    CHECK(p == NULL);
}

TEST(stats_of_fresh_pool) {
    opool_mt *p = make_pool(8, 8);
    REQUIRE(p);
    opool_mt_stats s;
    memset(&s, 0xFF, sizeof s);
    opool_mt_get_stats(p, &s);
    CHECK_EQ_U64(s.version, OPOOL_MT_STATS_VERSION);
    CHECK_EQ_U64(s.capacity, 8);
    CHECK_EQ_U64(s.count, 0);
    CHECK_EQ_U64(s.parked, 0);
    CHECK_EQ_U64(s.caches, 0);
    CHECK_EQ_U64(s.retired, 0);
    CHECK_EQ_U64(s.failed_allocs, 0);
    CHECK_EQ_U64(s.rejected_handles, 0);
    CHECK_EQ_U64(s.steals, 0);
    CHECK_EQ_U64(s.sleeps, 0);
    CHECK_EQ_U64(s.wake_calls, 0);
    CHECK_EQ_U64(s.barrier_calls, 0);
    opool_mt_get_stats(p, NULL); /* no crash */
    CHECK_EQ_U64(opool_mt_capacity(p), 8);
    CHECK_EQ_U64(opool_mt_count(p), 0);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

/* ============================================================================
 * The differential test: the pool against tests/mt_model.h.
 *
 * Each seed builds a random pool (capacity 1..72, object size and alignment,
 * flags, salt, init/fini, allocator) and its model, then runs random
 * operations on both: alloc, alloc_wait(0), free and cache_free of live,
 * stale and forged handles, get/valid, alloc_bulk, free_bulk, up to three
 * caches of random sizes (cache_alloc, cache_free, their bulk forms, flush,
 * destroy and create, invalid sizes), the generation hook, and switches of
 * the stripe of the shared list the calls use (as threads would). After every
 * operation the results are compared (handles, NULL-ness, statuses,
 * objects, callbacks and their order), then count, capacity, every
 * statistic, the model's own invariant and the pool's (opool__mt_check).
 * Every live object holds a pattern derived from its handle, written at
 * alloc and checked before it is freed and every few operations.
 * ========================================================================== */

#define DIFF_SEEDS 400
#define DIFF_OPS 3000
#define DIFF_CACHES 3
#define DIFF_MAX_CAPACITY 72 /* at create */
#define DIFF_MAX_SLOTS 200   /* max_capacity of a growing pool */
#define DIFF_MAX_BULK (DIFF_MAX_SLOTS + 4)
#define DIFF_STALE 32
#define DIFF_RECORDS 256
#define DIFF_PATTERN_EVERY 32

typedef struct diff_record {
    opool_mt_cache *ptr;
    uint32_t size; /* the size it was first created with */
    bool alive;
} diff_record;

typedef struct diff {
    uint64_t seed, ops, op;
    const char *op_name;
    bool failed;
    rng r;

    opool_mt *p;
    mt_model m;
    opool_desc d;
    size_t size, align;
    bool counted;
    counting mem;
    char config[200];

    opool_mt_cache *cache[DIFF_CACHES]; /* cache[k] is the model's cache k */
    diff_record rec[DIFF_RECORDS];
    uint32_t nrec;

    unsigned char *addr[DIFF_MAX_SLOTS]; /* object of slot i, NULL while unknown */

    /* callbacks seen during the current operation */
    void *fini[DIFF_MAX_SLOTS + 1];
    uint32_t nfini, ninit;
    mtm_report reports[MTM_MAX_REPORTS];
    uint32_t nreports, reports_with_pool;

    uint64_t stale[DIFF_STALE];
    uint32_t nstale, stale_next;
    const char *recent[16];
} diff;

static bool diff_trace;
static uint64_t diff_total_ops, diff_total_steals, diff_total_retired, diff_total_failed,
    diff_total_rejected, diff_total_spills_or_refills, diff_total_grows;

static void diff_fail(diff *t, const char *fmt, ...) {
    if (t->failed) return;
    t->failed = true;
    fprintf(stderr, "\nFAIL seed 0x%" PRIx64 " op %" PRIu64 " (%s): ", t->seed, t->op, t->op_name);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n  pool: %s\n  model: count %u shared %u parked %u\n  last ops:", t->config,
            mtm_count(&t->m), mtm_listed(&t->m), mtm_parked(&t->m));
    for (uint64_t k = t->op > 15 ? t->op - 15 : 0; k <= t->op; k++)
        fprintf(stderr, " %s", t->recent[k % 16] ? t->recent[k % 16] : "?");
    fprintf(stderr, "\n  replay: TEST_MT_TRACE=1 test_mt diff 1 %" PRIu64 " 0x%" PRIx64 "\n",
            t->ops, t->seed);
}

#define EXPECT_EQ(t, a, b)                                                                         \
    do {                                                                                           \
        uint64_t x_ = (uint64_t)(a), y_ = (uint64_t)(b);                                           \
        if (x_ != y_)                                                                              \
            diff_fail(t, "line %d: %s == %s: pool 0x%" PRIx64 ", model 0x%" PRIx64, __LINE__, #a,  \
                      #b, x_, y_);                                                                 \
    } while (0)

/* ---- objects ------------------------------------------------------------- */

static unsigned char pattern_byte(uint64_t x, size_t k) {
    return (unsigned char)((x >> ((k & 7) * 8)) + k);
}

static void write_pattern(diff *t, unsigned char *obj, uint64_t bits) {
    uint64_t x = mix64(bits);
    for (size_t k = 0; k < t->size; k++) obj[k] = pattern_byte(x, k);
}

static void check_pattern(diff *t, uint32_t i, const char *where) {
    const unsigned char *obj = t->addr[i];
    uint64_t bits = mtm_bits(t->m.gen[i], i);
    if (obj == NULL) {
        diff_fail(t, "%s: live slot %u has no known object", where, i);
        return;
    }
    uint64_t x = mix64(bits);
    for (size_t k = 0; k < t->size; k++)
        if (obj[k] != pattern_byte(x, k)) {
            diff_fail(t, "%s: object of handle 0x%016" PRIx64 " changed at byte %zu", where, bits,
                      k);
            return;
        }
}

/* Slot i's object is obj: the same address as always, aligned, apart from
 * every other slot's. */
static void check_address(diff *t, uint32_t i, unsigned char *obj) {
    if (t->addr[i] != NULL) {
        if (t->addr[i] != obj)
            diff_fail(t, "slot %u moved from %p to %p", i, (void *)t->addr[i], (void *)obj);
        return;
    }
    if ((uintptr_t)obj % t->align != 0)
        diff_fail(t, "object %p of slot %u not aligned to %zu", (void *)obj, i, t->align);
    for (uint32_t j = 0; j < t->m.capacity; j++) {
        unsigned char *o = t->addr[j];
        if (o != NULL && o < obj + t->size && obj < o + t->size)
            diff_fail(t, "slot %u at %p overlaps slot %u at %p", i, (void *)obj, j, (void *)o);
    }
    t->addr[i] = obj;
}

/* A fresh object for handle bits: address, init/ZERO, then its pattern. */
static void check_new_object(diff *t, unsigned char *obj, uint64_t bits) {
    uint32_t i = (uint32_t)bits;
    if (obj == NULL || i >= t->m.capacity) {
        diff_fail(t, "no object for handle 0x%016" PRIx64, bits);
        return;
    }
    check_address(t, i, obj);
    opool_handle hh = {bits};
    EXPECT_EQ(t, (uintptr_t)opool_mt_get(t->p, hh), (uintptr_t)obj);
    unsigned char want = t->d.init ? 0xC3 : 0;
    if (t->d.init || (t->d.flags & OPOOL_ZERO))
        if (!all_bytes(obj, t->size, want))
            diff_fail(t, "fresh object of slot %u does not hold 0x%02x (init/ZERO)", i, want);
    write_pattern(t, obj, bits);
}

/* The slot whose object starts at obj, MTM_NONE if none known. */
static uint32_t slot_of(const diff *t, const void *obj) {
    for (uint32_t i = 0; i < t->m.capacity; i++)
        if (obj != NULL && t->addr[i] == obj) return i;
    return MTM_NONE;
}

/* ---- callbacks ----------------------------------------------------------- */

static void diff_init(void *obj, void *user) {
    diff *t = user;
    t->ninit++;
    if ((t->d.flags & OPOOL_ZERO) && !all_bytes(obj, t->size, 0))
        diff_fail(t, "init saw a non-zero byte with OPOOL_ZERO");
    memset(obj, 0xC3, t->size);
}

static void diff_fini(void *obj, void *user) {
    diff *t = user;
    if (t->nfini < DIFF_MAX_SLOTS + 1) t->fini[t->nfini] = obj;
    t->nfini++;
}

static void diff_report(opool *p, opool_status what, opool_handle h, void *user) {
    diff *t = user;
    t->reports_with_pool += p != NULL;
    if (t->nreports < MTM_MAX_REPORTS) t->reports[t->nreports] = (mtm_report){what, h.bits};
    t->nreports++;
}

/* ---- comparing ------------------------------------------------------------ */

static void begin(diff *t, const char *name) {
    if (diff_trace) fprintf(stderr, "op %" PRIu64 ": %s\n", t->op, name);
    t->op_name = name;
    t->recent[t->op % 16] = name;
    t->nfini = t->ninit = t->nreports = 0;
    mtm_begin(&t->m);
    diff_total_ops++;
}

static int cmp_ptr(const void *a, const void *b) {
    uintptr_t x = (uintptr_t) * (void *const *)a, y = (uintptr_t) * (void *const *)b;
    return (x > y) - (x < y);
}

/* The callbacks the operation made are the model's (fini in its order unless
 * any_order), and the freed handles join the stale ring. */
static void check_callbacks(diff *t, bool any_order) {
    mt_model *m = &t->m;
    EXPECT_EQ(t, t->reports_with_pool, 0);
    if (t->nreports != m->nreports) {
        mtm_report got = t->nreports ? t->reports[0] : m->reports[0];
        diff_fail(t, "%u reports, model %u (first: %s, handle 0x%016" PRIx64 ")", t->nreports,
                  m->nreports, opool_status_str(got.what), got.handle);
    }
    for (uint32_t k = 0; k < t->nreports && k < m->nreports && k < MTM_MAX_REPORTS; k++) {
        EXPECT_EQ(t, t->reports[k].what, m->reports[k].what);
        EXPECT_EQ(t, t->reports[k].handle, m->reports[k].handle);
    }
    if (t->d.init) EXPECT_EQ(t, t->ninit, m->ninit);
    for (uint32_t k = 0; k < m->nfini; k++) {
        uint32_t i = m->fini_log[k];
        t->stale[t->stale_next] = mtm_bits(m->gen[i] - 1, i);
        t->stale_next = (t->stale_next + 1) % DIFF_STALE;
        if (t->nstale < DIFF_STALE) t->nstale++;
    }
    if (!t->d.fini) return;
    EXPECT_EQ(t, t->nfini, m->nfini);
    if (t->failed || t->nfini != m->nfini) return;
    void *want[DIFF_MAX_SLOTS + 1];
    for (uint32_t k = 0; k < m->nfini; k++) want[k] = t->addr[m->fini_log[k]];
    if (any_order) {
        qsort(want, m->nfini, sizeof *want, cmp_ptr);
        qsort(t->fini, t->nfini, sizeof *t->fini, cmp_ptr);
    }
    for (uint32_t k = 0; k < m->nfini; k++)
        if (want[k] != t->fini[k]) {
            diff_fail(t, "fini %u: object %p, model says slot %u at %p", k, t->fini[k],
                      m->fini_log[k], want[k]);
            break;
        }
}

/* Everything observable at quiescence. */
static void check_state(diff *t) {
    mt_model *m = &t->m;
    opool_mt_stats s, w;
    opool_mt_get_stats(t->p, &s);
    mtm_stats(m, &w);
    EXPECT_EQ(t, opool_mt_count(t->p), w.count);
    EXPECT_EQ(t, opool_mt_capacity(t->p), w.capacity);
    EXPECT_EQ(t, s.version, w.version);
    EXPECT_EQ(t, s.capacity, w.capacity);
    EXPECT_EQ(t, s.count, w.count);
    EXPECT_EQ(t, s.parked, w.parked);
    EXPECT_EQ(t, s.caches, w.caches);
    EXPECT_EQ(t, s.retired, w.retired);
    EXPECT_EQ(t, s.failed_allocs, w.failed_allocs);
    EXPECT_EQ(t, s.rejected_handles, w.rejected_handles);
    EXPECT_EQ(t, s.steals, w.steals);
    EXPECT_EQ(t, s.grows, w.grows);
    EXPECT_EQ(t, s.max_capacity, w.max_capacity);
    EXPECT_EQ(t, s.sleeps, 0);
    EXPECT_EQ(t, s.wake_calls, 0);
    char why[256] = "";
    if (!mtm_check(m, why, sizeof why)) diff_fail(t, "model invariant: %s", why);
    if (!opool__mt_check(t->p, why, sizeof why)) diff_fail(t, "opool__mt_check: %s", why);
    if (t->op % DIFF_PATTERN_EVERY == 0)
        for (uint32_t i = 0; i < m->capacity && !t->failed; i++)
            if (mtm_is_live(m, i)) check_pattern(t, i, "periodic check");
}

/* ---- handles to try ------------------------------------------------------- */

/* A live handle (from the model), or 0 if none is live. */
static uint64_t live_handle(diff *t) {
    mt_model *m = &t->m;
    uint32_t start = rng_below(&t->r, m->capacity);
    for (uint32_t k = 0; k < m->capacity; k++) {
        uint32_t i = (start + k) % m->capacity;
        if (mtm_is_live(m, i)) return mtm_bits(m->gen[i], i);
    }
    return 0;
}

/* Any handle: live, stale or forged. */
static uint64_t any_handle(diff *t) {
    mt_model *m = &t->m;
    uint32_t gen = (uint32_t)rng_next(&t->r);
    uint32_t index = rng_below(&t->r, m->capacity + 2);
    switch (rng_below(&t->r, 8)) {
    case 0:
    case 1:
        return live_handle(t);
    case 2:
    case 3:
        return t->nstale ? t->stale[rng_below(&t->r, t->nstale)] : 0;
    case 4:
        return mtm_bits(gen | 1, index);
    case 5:
        return mtm_bits(gen & ~1u, index);
    case 6:
        return mtm_bits(m->gen0 + 1 + 2 * rng_below(&t->r, 3), index); /* young, maybe live */
    default:
        return rng_chance(&t->r, 50) ? UINT64_MAX : 0;
    }
}

/* Check the pattern of every live object among hs before the pool frees them. */
static void check_before_free(diff *t, const uint64_t *hs, uint32_t n) {
    for (uint32_t k = 0; k < n && !t->failed; k++)
        if (mtm_classify(&t->m, hs[k]) == OPOOL_OK) check_pattern(t, (uint32_t)hs[k], "free");
}

/* ---- operations ----------------------------------------------------------- */

static void op_alloc(diff *t, bool wait) {
    begin(t, wait ? "alloc_wait(0)" : "alloc");
    /* without out, the slot is known by its address: not for a steal, which
     * may take a slot a refill parked before it was ever handed out */
    bool with_out = rng_below(&t->r, 8) != 0 || mtm_listed(&t->m) == 0;
    opool_handle out = {0x1234};
    unsigned char *obj = wait ? opool_mt_alloc_wait(t->p, with_out ? &out : NULL, 0)
                              : opool_mt_alloc(t->p, with_out ? &out : NULL);
    uint32_t got = with_out ? (obj ? opool_handle_index(out) : MTM_NONE) : slot_of(t, obj);
    uint64_t want;
    bool ok = mtm_alloc(&t->m, got, &want);
    if (diff_trace) fprintf(stderr, "  -> 0x%016" PRIx64 "\n", want);
    EXPECT_EQ(t, obj != NULL, ok);
    if (with_out) EXPECT_EQ(t, out.bits, want);
    check_callbacks(t, false);
    if (obj && ok && !t->failed) check_new_object(t, obj, want);
}

static void op_free(diff *t, bool valid) {
    begin(t, valid ? "free" : "free(any)");
    uint64_t bits = valid ? live_handle(t) : any_handle(t);
    check_before_free(t, &bits, 1);
    opool_handle h = {bits};
    opool_status s = opool_mt_free(t->p, h);
    EXPECT_EQ(t, s, mtm_free(&t->m, bits));
    if (diff_trace)
        fprintf(stderr, "  0x%016" PRIx64 " -> %s (retired %u)\n", bits, opool_status_str(s),
                t->m.retired_count);
    check_callbacks(t, false);
}

static void op_get(diff *t) {
    begin(t, "get");
    uint64_t bits = any_handle(t);
    opool_handle h = {bits};
    void *obj = opool_mt_get(t->p, h);
    bool ok = mtm_get(&t->m, bits);
    EXPECT_EQ(t, obj != NULL, ok);
    EXPECT_EQ(t, opool_mt_valid(t->p, h), ok);
    if (ok) EXPECT_EQ(t, (uintptr_t)obj, (uintptr_t)t->addr[(uint32_t)bits]);
    check_callbacks(t, false);
}

static void op_alloc_bulk(diff *t) {
    begin(t, "alloc_bulk");
    uint32_t n = rng_below(&t->r, t->m.capacity + 3);
    bool with_objs = rng_chance(&t->r, 70);
    opool_handle out[DIFF_MAX_BULK];
    void *objs[DIFF_MAX_BULK];
    uint32_t got[DIFF_MAX_BULK];
    uint64_t want[DIFF_MAX_BULK];
    uint32_t k = opool_mt_alloc_bulk(t->p, out, with_objs ? objs : NULL, n);
    for (uint32_t j = 0; j < n; j++) got[j] = j < k ? opool_handle_index(out[j]) : MTM_NONE;
    uint32_t wk = mtm_alloc_bulk(&t->m, n, got, want);
    EXPECT_EQ(t, k, wk);
    for (uint32_t j = 0; j < k && j < wk && !t->failed; j++) {
        EXPECT_EQ(t, out[j].bits, want[j]);
        unsigned char *obj = opool_mt_get(t->p, out[j]);
        if (with_objs) EXPECT_EQ(t, (uintptr_t)objs[j], (uintptr_t)obj);
    }
    check_callbacks(t, false);
    for (uint32_t j = 0; j < k && j < wk && !t->failed; j++)
        check_new_object(t, opool_mt_get(t->p, out[j]), want[j]);
}

/* Up to 8 handles: mostly live, some repeated, some stale or forged. */
static uint32_t handles_to_free(diff *t, uint64_t *hs) {
    uint32_t n = rng_below(&t->r, 9);
    for (uint32_t k = 0; k < n; k++) {
        uint32_t kind = rng_below(&t->r, 10);
        if (kind < 6)
            hs[k] = live_handle(t);
        else if (kind < 8 && k > 0)
            hs[k] = hs[rng_below(&t->r, k)];
        else
            hs[k] = any_handle(t);
    }
    return n;
}

static void op_free_bulk(diff *t) {
    begin(t, "free_bulk");
    uint64_t hs[8];
    opool_handle h[8];
    uint32_t n = handles_to_free(t, hs);
    for (uint32_t k = 0; k < n; k++) h[k].bits = hs[k];
    check_before_free(t, hs, n);
    uint32_t freed = opool_mt_free_bulk(t->p, n ? h : NULL, n);
    EXPECT_EQ(t, freed, mtm_free_bulk(&t->m, hs, n));
    check_callbacks(t, false);
}

/* A cache position: the index of an alive cache, else creates one there. */
static bool cache_create_at(diff *t, uint32_t c, uint32_t size);

static uint32_t pick_cache(diff *t) {
    uint32_t c = rng_below(&t->r, DIFF_CACHES);
    if (t->cache[c] == NULL) {
        uint32_t size = 2 + rng_below(&t->r, rng_chance(&t->r, 80) ? 11 : 70);
        cache_create_at(t, c, size);
    }
    return c;
}

static void op_cache_alloc(diff *t) {
    uint32_t c = pick_cache(t);
    begin(t, "cache_alloc");
    if (t->cache[c] == NULL) return;
    bool with_out = rng_below(&t->r, 8) != 0 || (mtm_listed(&t->m) == 0 && t->m.cache[c].n == 0);
    opool_handle out = {0x1234};
    /* the inline hit of opool_abi.h, or the exported function (FFI, dlsym) */
    unsigned char *obj = rng_chance(&t->r, 50)
                             ? opool_mt_cache_alloc(t->cache[c], with_out ? &out : NULL)
                             : (opool_mt_cache_alloc)(t->cache[c], with_out ? &out : NULL);
    uint32_t got = with_out ? (obj ? opool_handle_index(out) : MTM_NONE) : slot_of(t, obj);
    uint32_t shared = mtm_listed(&t->m);
    uint64_t want;
    bool ok = mtm_cache_alloc(&t->m, c, got, &want);
    diff_total_spills_or_refills += mtm_listed(&t->m) != shared;
    if (diff_trace) fprintf(stderr, "  cache %u -> 0x%016" PRIx64 "\n", c, want);
    EXPECT_EQ(t, obj != NULL, ok);
    if (with_out) EXPECT_EQ(t, out.bits, want);
    check_callbacks(t, false);
    if (obj && ok && !t->failed) check_new_object(t, obj, want);
}

static void op_cache_free(diff *t, bool valid) {
    uint32_t c = pick_cache(t);
    begin(t, valid ? "cache_free" : "cache_free(any)");
    if (t->cache[c] == NULL) return;
    uint64_t bits = valid ? live_handle(t) : any_handle(t);
    check_before_free(t, &bits, 1);
    opool_handle h = {bits};
    uint32_t shared = mtm_listed(&t->m);
    opool_status s = rng_chance(&t->r, 50) ? opool_mt_cache_free(t->cache[c], h)
                                           : (opool_mt_cache_free)(t->cache[c], h);
    EXPECT_EQ(t, s, mtm_cache_free(&t->m, c, bits));
    if (diff_trace)
        fprintf(stderr, "  cache %u: 0x%016" PRIx64 " -> %s (retired %u)\n", c, bits,
                opool_status_str(s), t->m.retired_count);
    diff_total_spills_or_refills += mtm_listed(&t->m) != shared;
    check_callbacks(t, false);
}

static void op_cache_alloc_bulk(diff *t) {
    uint32_t c = pick_cache(t);
    begin(t, "cache_alloc_bulk");
    if (t->cache[c] == NULL) return;
    uint32_t n = rng_below(&t->r, t->m.capacity + 3);
    bool with_objs = rng_chance(&t->r, 70);
    opool_handle out[DIFF_MAX_BULK];
    void *objs[DIFF_MAX_BULK];
    uint32_t got[DIFF_MAX_BULK];
    uint64_t want[DIFF_MAX_BULK];
    uint32_t k = opool_mt_cache_alloc_bulk(t->cache[c], out, with_objs ? objs : NULL, n);
    for (uint32_t j = 0; j < n; j++) got[j] = j < k ? opool_handle_index(out[j]) : MTM_NONE;
    uint32_t wk = mtm_cache_alloc_bulk(&t->m, c, n, got, want);
    EXPECT_EQ(t, k, wk);
    for (uint32_t j = 0; j < k && j < wk && !t->failed; j++) {
        EXPECT_EQ(t, out[j].bits, want[j]);
        if (with_objs) EXPECT_EQ(t, (uintptr_t)objs[j], (uintptr_t)opool_mt_get(t->p, out[j]));
    }
    check_callbacks(t, false);
    for (uint32_t j = 0; j < k && j < wk && !t->failed; j++)
        check_new_object(t, opool_mt_get(t->p, out[j]), want[j]);
}

static void op_cache_free_bulk(diff *t) {
    uint32_t c = pick_cache(t);
    begin(t, "cache_free_bulk");
    if (t->cache[c] == NULL) return;
    uint64_t hs[8];
    opool_handle h[8];
    uint32_t n = handles_to_free(t, hs);
    for (uint32_t k = 0; k < n; k++) h[k].bits = hs[k];
    check_before_free(t, hs, n);
    uint32_t freed = opool_mt_cache_free_bulk(t->cache[c], n ? h : NULL, n);
    EXPECT_EQ(t, freed, mtm_cache_free_bulk(&t->m, c, hs, n));
    check_callbacks(t, false);
}

static void op_cache_flush(diff *t) {
    uint32_t c = rng_below(&t->r, DIFF_CACHES);
    begin(t, "cache_flush");
    if (t->cache[c] == NULL) return;
    opool_mt_cache_flush(t->cache[c]);
    mtm_cache_flush(&t->m, c);
    check_callbacks(t, false);
}

static void cache_destroy_at(diff *t, uint32_t c) {
    opool_mt_cache_destroy(t->cache[c]);
    mtm_cache_destroy(&t->m, c);
    for (uint32_t k = 0; k < t->nrec; k++)
        if (t->rec[k].ptr == t->cache[c]) t->rec[k].alive = false;
    t->cache[c] = NULL;
}

/* Create cache c (not alive) of size entries in both; false if refused. */
static bool cache_create_at(diff *t, uint32_t c, uint32_t size) {
    begin(t, "cache_create");
    bool fits = false; /* a dead record this create must reuse */
    for (uint32_t k = 0; k < t->nrec; k++) fits |= !t->rec[k].alive && t->rec[k].size >= size;
    opool_mt_cache *q = opool_mt_cache_create(t->p, size);
    bool ok = mtm_cache_create(&t->m, c, size);
    EXPECT_EQ(t, q != NULL, ok);
    if (q == NULL || !ok) {
        if (q != NULL) opool_mt_cache_destroy(q);
        return false;
    }
    t->cache[c] = q;
    uint32_t k = 0;
    while (k < t->nrec && t->rec[k].ptr != q) k++;
    if (k < t->nrec) { /* a reused record */
        if (t->rec[k].alive) diff_fail(t, "cache_create returned a cache that is alive");
        t->rec[k].alive = true;
    } else {
        if (fits) diff_fail(t, "cache_create(%u) made a new record with one to reuse", size);
        if (t->nrec < DIFF_RECORDS) t->rec[t->nrec++] = (diff_record){q, size, true};
    }
    check_callbacks(t, false);
    return true;
}

static void op_cache_lifetime(diff *t) {
    uint32_t c = rng_below(&t->r, DIFF_CACHES);
    if (t->cache[c] != NULL) {
        begin(t, "cache_destroy");
        cache_destroy_at(t, c);
        check_callbacks(t, false);
        return;
    }
    uint32_t size;
    switch (rng_below(&t->r, 10)) {
    case 0:
        size = rng_below(&t->r, 2); /* 0 or 1: refused */
        break;
    case 1:
        size = rng_chance(&t->r, 50) ? OPOOL_MT_CACHE_MAX + 1 : UINT32_MAX;
        break;
    case 2:
        size = 2;
        break;
    default:
        size = 2 + rng_below(&t->r, rng_chance(&t->r, 80) ? 11 : 70);
        break;
    }
    cache_create_at(t, c, size);
}

static void op_set_gen(diff *t) {
    begin(t, "set_gen");
    mt_model *m = &t->m;
    uint32_t i = rng_below(&t->r, m->capacity + 1);
    uint32_t gen;
    switch (rng_below(&t->r, 4)) {
    case 0:
        gen = m->gen0 - 2; /* its next free wraps to gen0 */
        break;
    case 1:
        gen = UINT32_MAX - 1; /* through zero */
        break;
    case 2:
        gen = m->gen0 - 2 * (1 + rng_below(&t->r, 3));
        break;
    default:
        gen = (uint32_t)rng_next(&t->r) & ~1u;
        break;
    }
    /* only slots of the shared list: what the hook may do elsewhere is open */
    if (i >= m->capacity || !mtm_in_stack(m, i)) return;
    bool ok = opool__mt_set_gen(t->p, i, gen);
    EXPECT_EQ(t, ok, mtm_set_gen(m, i, gen));
    check_callbacks(t, false);
}

/* The calling thread takes another stripe of the shared list, as if the
 * next calls came from another thread (one thread plays them all). */
static void op_stripe(diff *t) {
    begin(t, "stripe");
    unsigned s = (unsigned)rng_below(&t->r, MTM_STRIPES);
    if (diff_trace) fprintf(stderr, "  stripe %u\n", s);
    opool__mt_set_stripe(s);
    t->m.stripe = s;
}

/* ---- one seed ------------------------------------------------------------- */

static bool diff_setup(diff *t) {
    rng *r = &t->r;
    uint32_t capacity = 1 + rng_below(r, DIFF_MAX_CAPACITY);
    memset(&t->d, 0, sizeof t->d);
    t->size = 1 + rng_below(r, 48);
    t->d.object_size = t->size;
    t->d.object_align = rng_chance(r, 30) ? 0 : (size_t)1 << rng_below(r, 7);
    t->align = t->d.object_align ? t->d.object_align : alignof(max_align_t);
    t->d.capacity = capacity;
    t->d.flags = rng_below(r, (OPOOL_ZERO | OPOOL_POISON | OPOOL_RETIRE_ON_WRAP) + 1);
    uint32_t salt = (uint32_t)rng_next(r);
    if (rng_chance(r, 25)) salt = 0xFFFFFFF0u + rng_below(r, 16); /* gen0 near the wrap */
    if (salt == 0) salt = 2;
    t->d.salt = salt;
    if (rng_chance(r, 50)) t->d.init = diff_init;
    if (rng_chance(r, 50)) t->d.fini = diff_fini;
    if (rng_chance(r, 25)) { /* no hooks: the caches' hits take the inline path (opool_abi.h) */
        t->d.flags &= OPOOL_RETIRE_ON_WRAP;
        t->d.init = NULL;
        t->d.fini = NULL;
    }
    t->d.report = diff_report;
    t->d.flags |= OPOOL_REPORT_UNRATIONED; /* every report counted */
    t->d.user = t;
    if (OPOOL_TEST_MT_GROWS && rng_chance(r, 30)) { /* a growing pool (the system's memory) */
        t->d.on_full = OPOOL_FULL_GROW;
        t->d.max_capacity = capacity + rng_below(r, DIFF_MAX_SLOTS - capacity + 1);
    } else {
        t->counted = rng_chance(r, 50);
        if (t->counted) t->d.allocator = counting_allocator(&t->mem);
    }
    snprintf(t->config, sizeof t->config,
             "capacity %u max %u size %zu align %zu flags 0x%x salt 0x%x init %d fini %d "
             "allocator %d",
             capacity, t->d.max_capacity, t->size, t->d.object_align, t->d.flags, salt,
             t->d.init != NULL, t->d.fini != NULL, t->counted);
    if (diff_trace) fprintf(stderr, "seed 0x%" PRIx64 ": %s\n", t->seed, t->config);
    if (!mtm_init(&t->m, capacity, t->d.max_capacity, t->d.flags, salt)) return false;
    opool_status s = opool_mt_create(&t->p, &t->d);
    if (s != OPOOL_OK) {
        diff_fail(t, "opool_mt_create: %s", opool_status_str(s));
        return false;
    }
    return true;
}

static void diff_teardown(diff *t) {
    if (t->p != NULL) {
        /* some caches destroyed, the others released with the pool */
        for (uint32_t c = 0; c < DIFF_CACHES; c++)
            if (t->cache[c] != NULL && rng_chance(&t->r, 50)) cache_destroy_at(t, c);
        begin(t, "destroy");
        mtm_destroy(&t->m);
        opool_mt_destroy(t->p);
        if (!t->failed) check_callbacks(t, true);
        if (t->counted) {
            EXPECT_EQ(t, t->mem.blocks, 0);
            EXPECT_EQ(t, t->mem.size_mismatches, 0);
        }
        diff_total_steals += t->m.steals;
        diff_total_retired += t->m.retired_count;
        diff_total_failed += t->m.failed_allocs;
        diff_total_rejected += t->m.rejected;
        diff_total_grows += t->m.grows;
    }
    mtm_fini(&t->m);
}

/* Runs one seed; true if the pool agreed with the model throughout. */
static bool diff_run(uint64_t seed, uint64_t ops) {
    diff *t = calloc(1, sizeof *t);
    if (t == NULL) return false;
    t->seed = seed;
    t->ops = ops;
    t->r.s = seed;
    opool__mt_set_stripe(0); /* the model's first stripe */
    bool ok = diff_setup(t);
    for (t->op = 0; ok && t->op < ops && !t->failed; t->op++) {
        uint32_t dice = rng_below(&t->r, 100);
        if (dice < 12)
            op_alloc(t, false);
        else if (dice < 15)
            op_alloc(t, true);
        else if (dice < 26)
            op_free(t, true);
        else if (dice < 30)
            op_free(t, false);
        else if (dice < 35)
            op_get(t);
        else if (dice < 40)
            op_alloc_bulk(t);
        else if (dice < 45)
            op_free_bulk(t);
        else if (dice < 58)
            op_cache_alloc(t);
        else if (dice < 70)
            op_cache_free(t, true);
        else if (dice < 73)
            op_cache_free(t, false);
        else if (dice < 78)
            op_cache_alloc_bulk(t);
        else if (dice < 83)
            op_cache_free_bulk(t);
        else if (dice < 86)
            op_cache_flush(t);
        else if (dice < 91)
            op_cache_lifetime(t);
        else if (dice < 94)
            op_set_gen(t);
        else if (dice < 97)
            op_stripe(t);
        else
            begin(t, "check");
        if (!t->failed) check_state(t);
    }
    if (!t->failed) t->op_name = "destroy";
    diff_teardown(t);
    opool__mt_set_stripe(0);
    ok = ok && !t->failed;
    free(t);
    return ok;
}

static uint64_t diff_seeds = DIFF_SEEDS, diff_ops = DIFF_OPS, diff_only_seed;
static bool diff_one_seed;

TEST(differential_test_against_the_model) {
    uint64_t failed = 0, runs = 0;
    for (uint64_t k = 0; k < diff_seeds; k++) {
        uint64_t seed = diff_one_seed ? diff_only_seed : mix64(0x6D74u + k);
        runs++;
        if (!diff_run(seed, diff_ops)) failed++;
        if (failed >= 5) break; /* enough to read */
    }
    printf("differential: %" PRIu64 " seeds, %" PRIu64 " ops, %" PRIu64 " steals, %" PRIu64
           " retired, %" PRIu64 " failed allocs, %" PRIu64 " rejected handles, %" PRIu64
           " refills/spills, %" PRIu64 " growths; %" PRIu64 " seeds failed\n",
           runs, diff_total_ops, diff_total_steals, diff_total_retired, diff_total_failed,
           diff_total_rejected, diff_total_spills_or_refills, diff_total_grows, failed);
    CHECK_EQ_U64(failed, 0);
}

int main(int argc, char **argv) {
    diff_trace = getenv("TEST_MT_TRACE") != NULL;
    if (argc > 1 && strcmp(argv[1], "diff") == 0) {
        if (argc > 2) diff_seeds = strtoull(argv[2], NULL, 0);
        if (argc > 3) diff_ops = strtoull(argv[3], NULL, 0);
        if (argc > 4) {
            diff_only_seed = strtoull(argv[4], NULL, 0);
            diff_one_seed = true;
            diff_seeds = 1;
        }
        RUN(differential_test_against_the_model);
        return test_summary();
    }

    RUN(create_rejects_null_out_and_null_desc);
    RUN(create_rejects_zero_size_and_zero_capacity);
    RUN(create_rejects_bad_alignment);
    RUN(create_rejects_capacity_above_the_maximum);
    RUN(create_rejects_max_capacity_other_than_zero_or_capacity);
    RUN(create_rejects_eviction_and_growth_from_a_custom_allocator);
    RUN(create_rejects_an_evict_callback);
    RUN(create_rejects_save_and_load_callbacks);
    RUN(create_rejects_unknown_flags);
    RUN(create_accepts_the_three_flags);
    RUN(create_rejects_allocator_with_only_one_function);
    RUN(create_rejects_overflowing_sizes);
    RUN(create_counts_the_slot_arrays_in_its_size);
    RUN(allocator_failure_gives_enomem_and_leaks_nothing);
    RUN(custom_allocator_gets_every_byte_back);
    RUN(destroy_null_is_a_no_op);
    RUN(objects_are_laid_out_at_the_stride_from_a_cache_line);
    RUN(default_alignment_is_that_of_max_align_t);

    RUN(fresh_pool_hands_out_slots_in_order);
    RUN(fresh_pool_of_many_slots_hands_out_slots_in_order_then_lifo);
    RUN(threads_of_two_stripes_get_lines_of_their_own);
    RUN(first_generation_comes_from_salt);
    RUN(salt_zero_gives_one_odd_first_generation_to_every_slot);
    RUN(alloc_and_free_each_advance_the_generation);
    RUN(generation_wraps_through_zero);
    RUN(reuse_is_lifo);
    RUN(free_twice_is_rejected);
    RUN(null_even_and_out_of_range_handles_are_invalid);
    RUN(stale_handles_are_rejected_by_every_function);
    RUN(foreign_pool_handle_is_rejected);
    RUN(rejected_free_changes_nothing_and_is_counted_and_reported);
    RUN(null_pool_is_safe_for_every_function);
    RUN(null_cache_is_safe_for_every_cache_function);

    RUN(full_pool_alloc_fails_and_clears_out_handle);
    RUN(full_pool_reports_an_episode_at_its_1st_2nd_and_4th_failures);
    RUN(free_ends_a_full_episode);
    RUN(rejected_free_does_not_end_a_full_episode);
    RUN(cache_free_ends_a_full_episode);
    RUN(retiring_free_does_not_end_a_full_episode);
    RUN(full_pool_without_report_callback_returns_null);

    RUN(zero_flag_zero_fills_every_alloc);
    RUN(init_runs_after_zero_once_per_object_handed_out);
    RUN(fini_runs_on_every_free_path_and_never_on_a_rejected_one);
    RUN(destroy_runs_fini_on_live_objects_only);
    RUN(poison_fills_freed_slot_with_the_pattern);
    RUN(poison_reports_write_after_free_at_the_next_alloc);
    RUN(poison_reports_write_after_free_of_a_parked_slot);
    RUN(poison_does_not_report_untouched_slots_of_any_stride);
    RUN(retire_on_wrap_retires_the_slot);
    RUN(retired_slot_is_never_handed_out_again);
    RUN(retire_on_wrap_through_a_cache_free);
    RUN(retire_on_wrap_through_free_bulk);
    RUN(without_retire_a_wrapped_slot_is_reused);
    RUN(set_gen_hook_refuses_odd_generations_live_slots_and_bad_indices);

    RUN(alloc_bulk_takes_slots_from_the_top_in_order);
    RUN(alloc_bulk_is_partial_when_fewer_slots_are_free);
    RUN(alloc_bulk_accepts_null_objs_and_zero_n);
    RUN(free_bulk_skips_rejected_handles_and_counts_them);
    RUN(free_bulk_reports_each_rejected_handle_in_order);

    RUN(cache_create_rejects_sizes_out_of_range);
    RUN(cache_create_without_memory_returns_null);
    RUN(cache_create_ex_rejects_null_out_null_pool_and_sizes_out_of_range);
    RUN(cache_create_ex_without_memory_gives_enomem_and_changes_nothing);
    RUN(cache_alloc_refills_half_its_size_from_the_top);
    RUN(cache_refill_takes_what_the_shared_list_has);
    RUN(cache_free_parks_and_cache_alloc_takes_the_newest);
    RUN(cache_free_spills_the_oldest_half_when_full);
    RUN(cache_of_size_two_moves_one_slot_at_a_time);
    RUN(cache_flush_returns_every_parked_slot_newest_on_top);
    RUN(cache_destroy_returns_every_parked_slot_newest_on_top);
    RUN(destroyed_cache_record_is_reused_by_the_next_create_that_fits);
    RUN(count_includes_objects_allocated_through_caches);
    RUN(handles_cross_between_cache_and_pool_paths);
    RUN(cache_free_rejects_handles_like_free);
    RUN(cache_bulk_calls_are_single_calls_in_order);
    RUN(cache_free_bulk_skips_rejected_handles);
    RUN(cache_alloc_bulk_is_partial_when_the_pool_runs_out);
    RUN(alloc_steals_a_parked_slot_when_the_shared_list_is_empty);
    RUN(cache_alloc_steals_from_another_cache);
    RUN(alloc_bulk_steals_what_the_shared_list_lacks);
    RUN(alloc_fails_only_when_every_slot_is_live);

    RUN(alloc_wait_takes_a_free_slot_without_sleeping);
    RUN(alloc_wait_with_zero_timeout_fails_at_once);
    RUN(alloc_wait_times_out_after_at_least_the_timeout);
    RUN(alloc_wait_steals_a_parked_slot_instead_of_sleeping);
    RUN(cache_alloc_wait_takes_the_newest_parked_slot_without_sleeping);
    RUN(cache_alloc_wait_steals_a_parked_slot_instead_of_sleeping);
    RUN(cache_alloc_wait_with_zero_timeout_fails_at_once);
    RUN(cache_alloc_wait_times_out_after_at_least_the_timeout);
    RUN(failed_allocs_counts_only_calls_that_return_null);
    RUN(short_bulk_alloc_counts_one_failed_alloc);

    RUN(growing_pool_grows_when_full_and_never_moves_an_object);
    RUN(growing_pool_rejects_handles_past_its_capacity_as_invalid);
    RUN(growing_pool_poisons_and_hides_the_slots_a_growth_adds);
    RUN(growing_pool_steals_parked_slots_before_it_grows);
    RUN(growing_pool_grows_through_caches_and_bulk_calls);
    RUN(alloc_wait_on_a_growing_pool_grows_instead_of_sleeping);
    RUN(growing_pool_up_to_the_largest_capacity_reserves_address_space_only);
    RUN(stats_of_fresh_pool);

    RUN(differential_test_against_the_model);
    return test_summary();
}
