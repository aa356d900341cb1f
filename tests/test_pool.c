/*
 * test_pool.c -- the core pool's behaviour, one behaviour per test, exact
 * results (include/opool.h).
 *
 * Most pools here use salt 0x1000: every slot starts at generation 0x1000,
 * so a slot's first handle has generation 0x1001 and the arithmetic in the
 * expectations is visible.
 */
#include "opool.h"
#include "counting.h"
#include "helpers.h"
#include "loop_check.h"
#include "test.h"

#include <stdalign.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__unix__) || defined(__APPLE__)
#include <pthread.h>
#define HAVE_PTHREADS 1
#endif

#define SALT 0x1000u
#define G1 0x1001u /* first generation of every slot with SALT */

/* ---- helpers ------------------------------------------------------------ */

/* A fixed pool with SALT and a report that keeps stderr quiet. */
static opool_desc desc_of(size_t object_size, uint32_t capacity) {
    return quiet_desc(object_size, capacity, SALT);
}

static opool *create(const opool_desc *d) {
    opool *p = NULL;
    if (opool_create(&p, d) != OPOOL_OK) return NULL;
    return p;
}

static opool *make_pool(size_t object_size, uint32_t capacity) {
    opool_desc d = desc_of(object_size, capacity);
    return create(&d);
}

static opool *make_grow_pool(uint32_t capacity, uint32_t max_capacity) {
    opool_desc d = desc_of(16, capacity);
    d.on_full = OPOOL_FULL_GROW;
    d.max_capacity = max_capacity;
    return create(&d);
}

static opool_stats stats_of(const opool *p) {
    opool_stats s;
    opool_get_stats(p, &s);
    return s;
}

/* Everything the callbacks saw. */
typedef struct recorder {
    int inits, finis, reports, evicts;
    int init_saw_zero; /* init calls that found the object all zero */
    void *last_init, *last_fini;
    opool_status last_what;
    opool_handle last_report_handle;
    opool *last_report_pool;
    int victim_position; /* evict: the live roster entry to return; -1: OPOOL_NULL */
} recorder;

static void rec_init(void *obj, void *user) {
    recorder *r = user;
    const unsigned char *b = obj;
    int zero = 1;
    for (size_t k = 0; k < 16; k++) zero &= b[k] == 0;
    r->init_saw_zero += zero;
    r->inits++;
    r->last_init = obj;
    memset(obj, 0x5A, 16);
}

static void rec_fini(void *obj, void *user) {
    recorder *r = user;
    r->finis++;
    r->last_fini = obj;
}

static void rec_report(opool *p, opool_status what, opool_handle h, void *user) {
    recorder *r = user;
    r->reports++;
    r->last_what = what;
    r->last_report_handle = h;
    r->last_report_pool = p;
}

static opool_handle rec_evict(opool *p, void *user) {
    recorder *r = user;
    r->evicts++;
    if (r->victim_position < 0) return OPOOL_NULL;
    return opool_live_handle(p, (uint32_t)r->victim_position);
}

static opool_desc recorded_desc(size_t object_size, uint32_t capacity, recorder *r) {
    opool_desc d = desc_of(object_size, capacity);
    memset(r, 0, sizeof *r);
    d.report = rec_report;
    d.flags |= OPOOL_REPORT_UNRATIONED; /* every report counted */
    d.user = r;
    return d;
}

/* The handles of n allocs, in order; OPOOL_NULL for a failed one. */
static void alloc_n(opool *p, uint32_t n, opool_handle *out) {
    for (uint32_t k = 0; k < n; k++) {
        opool_handle h;
        void *obj = opool_alloc(p, &h);
        out[k] = obj ? h : OPOOL_NULL;
    }
}

/* ---- handles ------------------------------------------------------------ */

TEST(handle_helpers_split_index_and_generation) {
    opool_handle h = handle(0xABCDEF01u, 0x12345678u);
    CHECK_EQ_U64(opool_handle_index(h), 0x12345678u);
    CHECK_EQ_U64(opool_handle_generation(h), 0xABCDEF01u);
    CHECK(!opool_handle_is_null(h));
    CHECK(opool_handle_is_null(OPOOL_NULL));
    CHECK_EQ_U64(OPOOL_NULL.bits, 0);
    CHECK(opool_handle_eq(h, handle(0xABCDEF01u, 0x12345678u)));
    CHECK(!opool_handle_eq(h, handle(0xABCDEF03u, 0x12345678u)));
}

TEST(fresh_pool_hands_out_slots_in_order) {
    opool *p = make_pool(24, 8);
    REQUIRE(p);
    for (uint32_t k = 0; k < 8; k++) {
        opool_handle h = OPOOL_NULL;
        void *obj = opool_alloc(p, &h);
        CHECK(obj != NULL);
        CHECK_EQ_U64(h.bits, handle(G1, k).bits);
    }
    opool_destroy(p);
}

TEST(first_generation_comes_from_salt) {
    opool_desc d = desc_of(8, 4);
    d.salt = 0x1001; /* the low bit is dropped: gen0 is even */
    opool *p = create(&d);
    REQUIRE(p);
    opool_handle h;
    CHECK(opool_alloc(p, &h) != NULL);
    CHECK_EQ_U64(h.bits, handle(0x1001, 0).bits);
    opool_destroy(p);

    d.salt = 0x77770000u;
    p = create(&d);
    REQUIRE(p);
    CHECK(opool_alloc(p, &h) != NULL);
    CHECK_EQ_U64(h.bits, handle(0x77770001u, 0).bits);
    opool_destroy(p);
}

TEST(derived_salts_differ_between_pools) {
    opool_desc d = desc_of(8, 4);
    d.salt = 0;
    uint32_t gens[4];
    for (int k = 0; k < 4; k++) {
        opool *p = create(&d);
        REQUIRE(p);
        opool_handle h;
        CHECK(opool_alloc(p, &h) != NULL);
        gens[k] = opool_handle_generation(h);
        CHECK(gens[k] & 1);
        opool_destroy(p);
    }
    for (int a = 0; a < 4; a++)
        for (int b = a + 1; b < 4; b++) CHECK(gens[a] != gens[b]);
}

/* `test_pool --print-derived-generations`: the first generations of the
 * first three pools a fresh process creates with derived salts. The test
 * derived_salt_is_the_same_run_after_run (tests/tests.cmake) runs it as a
 * process of its own, under the platform's emulator when cross-built, and
 * wants exactly the values of every other run on every platform. */
static int print_derived_generations(void) {
    opool_desc d = desc_of(8, 4);
    d.salt = 0;
    for (int k = 0; k < 3; k++) {
        opool *p = create(&d);
        opool_handle h = OPOOL_NULL;
        if (p) (void)opool_alloc(p, &h);
        printf("%08x\n", (unsigned)opool_handle_generation(h));
        opool_destroy(p);
    }
    return 0;
}

TEST(live_handles_are_never_null_even_across_2_pow_32) {
    opool_desc d = desc_of(8, 1);
    d.salt = 0xFFFFFFFEu; /* the first free goes from 0xFFFFFFFF to 0 */
    opool *p = create(&d);
    REQUIRE(p);
    opool_handle h;
    CHECK(opool_alloc(p, &h) != NULL);
    CHECK_EQ_U64(h.bits, handle(0xFFFFFFFFu, 0).bits);
    CHECK_EQ_U64(opool_free(p, h), OPOOL_OK);
    CHECK(opool_alloc(p, &h) != NULL);
    CHECK_EQ_U64(h.bits, handle(1, 0).bits);
    CHECK(!opool_handle_is_null(h));
    CHECK(!opool_valid(p, handle(0xFFFFFFFFu, 0)));
    opool_destroy(p);
}

TEST(alloc_and_free_each_advance_the_generation) {
    opool *p = make_pool(8, 2);
    REQUIRE(p);
    opool_handle a, b;
    CHECK(opool_alloc(p, &a) != NULL);
    CHECK_EQ_U64(opool_handle_generation(a), G1);
    CHECK_EQ_U64(opool_free(p, a), OPOOL_OK);
    CHECK(opool_alloc(p, &b) != NULL);
    CHECK_EQ_U64(b.bits, handle(G1 + 2, 0).bits);
    opool_destroy(p);
}

TEST(reuse_is_lifo) {
    opool *p = make_pool(8, 8);
    REQUIRE(p);
    opool_handle h[4], r[3];
    alloc_n(p, 4, h);
    CHECK_EQ_U64(opool_free(p, h[1]), OPOOL_OK);
    CHECK_EQ_U64(opool_free(p, h[3]), OPOOL_OK);
    alloc_n(p, 3, r);
    CHECK_EQ_U64(r[0].bits, handle(G1 + 2, 3).bits); /* freed last, back first */
    CHECK_EQ_U64(r[1].bits, handle(G1 + 2, 1).bits);
    CHECK_EQ_U64(r[2].bits, handle(G1, 4).bits);
    opool_destroy(p);
}

TEST(free_moves_last_live_entry_into_the_hole) {
    opool *p = make_pool(8, 8);
    REQUIRE(p);
    opool_handle h[4];
    alloc_n(p, 4, h);
    CHECK_EQ_U64(opool_free(p, h[1]), OPOOL_OK);
    CHECK_EQ_U64(opool_count(p), 3);
    CHECK_EQ_U64(opool_live_handle(p, 0).bits, h[0].bits);
    CHECK_EQ_U64(opool_live_handle(p, 1).bits, h[3].bits);
    CHECK_EQ_U64(opool_live_handle(p, 2).bits, h[2].bits);
    CHECK_EQ_PTR(opool_live_object(p, 1), opool_get(p, h[3]));
    opool_destroy(p);
}

TEST(alloc_right_after_free_takes_the_freed_place_back) {
    opool *p = make_pool(8, 8);
    REQUIRE(p);
    opool_handle h[4], n;
    alloc_n(p, 4, h);
    CHECK_EQ_U64(opool_free(p, h[1]), OPOOL_OK); /* h[3] takes place 1 */
    CHECK(opool_alloc(p, &n) != NULL);
    CHECK_EQ_U64(opool_handle_index(n), 1); /* LIFO: the freed slot */
    /* and the free's move is undone: the order is the one before the free */
    CHECK_EQ_U64(opool_live_handle(p, 0).bits, h[0].bits);
    CHECK_EQ_U64(opool_live_handle(p, 1).bits, n.bits);
    CHECK_EQ_U64(opool_live_handle(p, 2).bits, h[2].bits);
    CHECK_EQ_U64(opool_live_handle(p, 3).bits, h[3].bits);
    /* a second alloc appends */
    CHECK(opool_alloc(p, &n) != NULL);
    CHECK_EQ_U64(opool_live_handle(p, 4).bits, n.bits);
    opool_destroy(p);
}

#ifdef HAVE_PTHREADS
static void *count_reader(void *arg) {
    const opool *p = arg;
    uintptr_t sum = 0;
    for (int k = 0; k < 1000; k++) sum += opool_count(p);
    return (void *)sum;
}
#endif

/* opool_count ends the undo of the last free, a write; readers on several
 * threads at once (a parallel read phase right after a free) all see the
 * count, and the write is a relaxed atomic, so a ThreadSanitizer build of
 * this test reports no race. */
TEST(count_on_several_threads_at_once_right_after_a_free) {
    opool *p = make_pool(8, 8);
    REQUIRE(p);
    opool_handle h[4], n;
    alloc_n(p, 4, h);
    CHECK_EQ_U64(opool_free(p, h[1]), OPOOL_OK);
    int made = 0;
#ifdef HAVE_PTHREADS
    pthread_t t[4];
    for (; made < 4; made++)
        if (pthread_create(&t[made], NULL, count_reader, p) != 0) break;
    for (int k = 0; k < made; k++) {
        void *r = NULL;
        pthread_join(t[k], &r);
        CHECK_EQ_U64((uintptr_t)r, 3000);
    }
#endif
    if (made < 2) printf("  (%d reader threads: no threads here)\n", made);
    if (made == 0) CHECK_EQ_U64(opool_count(p), 3);
    CHECK(opool_alloc(p, &n) != NULL); /* the undo ended: it appends */
    CHECK_EQ_U64(opool_live_handle(p, 1).bits, h[3].bits);
    CHECK_EQ_U64(opool_live_handle(p, 3).bits, n.bits);
    opool_destroy(p);
}

/* A loop's start (opool_count, OPOOL_FOREACH), where a loop may be under
 * way from then on, ends the undo: the alloc appends, so the last entry,
 * which such a loop visits where the free put it, stays there. Reading an
 * entry does not end it. */
TEST(alloc_after_free_and_a_loop_start_joins_the_end_of_the_live_list) {
    opool *p = make_pool(8, 8);
    REQUIRE(p);
    opool_handle h[4], n;
    alloc_n(p, 4, h);
    CHECK_EQ_U64(opool_free(p, h[1]), OPOOL_OK);
    CHECK_EQ_U64(opool_count(p), 3);
    CHECK(opool_alloc(p, &n) != NULL);
    CHECK_EQ_U64(opool_handle_index(n), 1);
    CHECK_EQ_U64(opool_live_handle(p, 0).bits, h[0].bits);
    CHECK_EQ_U64(opool_live_handle(p, 1).bits, h[3].bits);
    CHECK_EQ_U64(opool_live_handle(p, 2).bits, h[2].bits);
    CHECK_EQ_U64(opool_live_handle(p, 3).bits, n.bits);
    /* reads of entries leave the undo: the alloc takes place 2 back */
    CHECK_EQ_U64(opool_free(p, h[2]), OPOOL_OK); /* n takes place 2 */
    CHECK_EQ_U64(opool_live_handle(p, 2).bits, n.bits);
    CHECK(opool_live_object(p, 2) != NULL);
    opool_handle m2;
    CHECK(opool_alloc(p, &m2) != NULL); /* slot 2 again, in its old place */
    CHECK_EQ_U64(opool_handle_index(m2), 2);
    CHECK_EQ_U64(opool_live_handle(p, 2).bits, m2.bits);
    CHECK_EQ_U64(opool_live_handle(p, 3).bits, n.bits);
    h[2] = m2;
    /* then the loop's start ends it: the list is h0 h3 m2 n */
    CHECK_EQ_U64(opool_free(p, h[2]), OPOOL_OK); /* n takes place 2 */
    CHECK_EQ_U64(opool_count(p), 3);
    CHECK(opool_alloc(p, &m2) != NULL); /* slot 2 again, appended */
    CHECK_EQ_U64(opool_live_handle(p, 2).bits, n.bits);
    CHECK_EQ_U64(opool_live_handle(p, 3).bits, m2.bits);
    h[2] = m2;
    /* and so does a read past the end (a loop stepping over places frees
     * took away): the list is then h0 h3 m2 n */
    CHECK_EQ_U64(opool_free(p, n), OPOOL_OK); /* m2 takes place 2 */
    CHECK(opool_live_object(p, 3) == NULL);
    CHECK(opool_alloc(p, &n) != NULL); /* slot 1 again, appended */
    CHECK_EQ_U64(opool_handle_index(n), 1);
    CHECK_EQ_U64(opool_live_handle(p, 2).bits, m2.bits);
    CHECK_EQ_U64(opool_live_handle(p, 3).bits, n.bits);
    /* and for a loop begun with OPOOL_FOREACH: every object visited once */
    CHECK_EQ_U64(opool_free(p, h[0]), OPOOL_OK); /* n takes place 0 */
    uint32_t visits = 0, news = 0;
    OPOOL_FOREACH(p, char, obj, it) {
        (void)obj;
        visits++;
        if (visits == 1) { /* the first body, at position 2: m2 */
            opool_handle m;
            CHECK(opool_alloc(p, &m) != NULL); /* slot 0 again, appended */
            CHECK_EQ_U64(opool_live_handle(p, 3).bits, m.bits);
            news++;
        }
        CHECK(!opool_handle_eq(it, h[0]));
    }
    CHECK_EQ_U64(visits, 3);
    CHECK_EQ_U64(news, 1);
    opool_destroy(p);
}

/* The live-list position of h: reads of entries below count, and the
 * count from the stats, which leave the undo of the last free alone. */
static uint32_t live_position(const opool *p, opool_handle h) {
    for (uint32_t k = 0, n = loop__count(p); k < n; k++)
        if (opool_live_handle(p, k).bits == h.bits) return k;
    return UINT32_MAX;
}

/* OPOOL_FOREACH keeps the iteration promise (tests/loop_check.h) through
 * random bodies: each frees its object, allocates, or frees another live
 * objects (ones the loop has or has not reached), and the loop steps over
 * the places those frees take away; the undo of a free lives across
 * bodies, since the macro reads no count after its start. */
TEST(foreach_keeps_the_promise_through_frees_of_others_and_allocs) {
    opool *p = make_pool(8, 48);
    REQUIRE(p);
    rng r = {0xF0EAC4};
    loop_check lc = {0};
    for (int round = 0; round < 3000 && !lc.failed; round++) {
        for (uint32_t k = rng_below(&r, 12); k-- > 0;) { /* history */
            opool_handle h;
            if (rng_chance(&r, 60)) {
                (void)opool_alloc(p, &h);
            } else {
                h = opool_handle_at(p, rng_below(&r, 48));
                if (!opool_handle_is_null(h)) CHECK_EQ_U64(opool_free(p, h), OPOOL_OK);
            }
        }
        CHECK(loop_begin(&lc, p));
        OPOOL_FOREACH(p, char, obj, h) {
            (void)obj;
            uint32_t i = live_position(p, h), what = rng_below(&r, 10);
            CHECK(loop_visit(&lc, p, i, h));
            if (what < 2) {
                CHECK(loop_before_free(&lc, p, i, h));
                CHECK_EQ_U64(opool_free(p, h), OPOOL_OK);
            } else if (what < 5) {
                opool_handle n;
                if (opool_alloc(p, &n) != NULL) CHECK(loop_after_alloc(&lc, p, i, n));
            } else if (what < 8) { /* up to three others: the end may pass below i */
                for (uint32_t k = 1 + rng_below(&r, 3); k-- > 0;) {
                    opool_handle other = opool_handle_at(p, rng_below(&r, 48));
                    if (opool_handle_is_null(other) || opool_handle_eq(other, h)) continue;
                    CHECK(loop_before_free(&lc, p, i, other));
                    CHECK_EQ_U64(opool_free(p, other), OPOOL_OK);
                }
            }
        }
        CHECK(loop_end(&lc));
    }
    if (lc.failed) fprintf(stderr, "foreach: %s\n", lc.why);
    CHECK(lc.moves > 0); /* frees below the index happened */
    loop_check_free(&lc);
    opool_clear(p);
    opool_destroy(p);
}

TEST(consecutive_frees_each_swap_delete) {
    opool *p = make_pool(8, 8);
    REQUIRE(p);
    opool_handle h[5], a, b;
    alloc_n(p, 5, h);
    CHECK_EQ_U64(opool_free(p, h[0]), OPOOL_OK); /* h[4] takes place 0 */
    CHECK_EQ_U64(opool_free(p, h[2]), OPOOL_OK); /* h[3] takes place 2 */
    CHECK_EQ_U64(opool_count(p), 3);
    CHECK_EQ_U64(opool_live_handle(p, 0).bits, h[4].bits);
    CHECK_EQ_U64(opool_live_handle(p, 1).bits, h[1].bits);
    CHECK_EQ_U64(opool_live_handle(p, 2).bits, h[3].bits);
    /* LIFO across both: slot 2 then slot 0 */
    CHECK(opool_alloc(p, &a) != NULL);
    CHECK(opool_alloc(p, &b) != NULL);
    CHECK_EQ_U64(opool_handle_index(a), 2);
    CHECK_EQ_U64(opool_handle_index(b), 0);
    CHECK_EQ_U64(opool_live_handle(p, 0).bits, h[4].bits);
    CHECK_EQ_U64(opool_live_handle(p, 1).bits, h[1].bits);
    CHECK_EQ_U64(opool_live_handle(p, 2).bits, h[3].bits);
    CHECK_EQ_U64(opool_live_handle(p, 3).bits, a.bits);
    CHECK_EQ_U64(opool_live_handle(p, 4).bits, b.bits);
    opool_destroy(p);
}

/* ---- rejected handles --------------------------------------------------- */

TEST(free_twice_is_rejected) {
    recorder r;
    opool_desc d = recorded_desc(8, 4, &r);
    opool *p = create(&d);
    REQUIRE(p);
    opool_handle h;
    CHECK(opool_alloc(p, &h) != NULL);
    CHECK_EQ_U64(opool_free(p, h), OPOOL_OK);
    CHECK_EQ_U64(opool_free(p, h), OPOOL_ESTALE);
    CHECK_EQ_U64(stats_of(p).rejected_handles, 1);
    CHECK_EQ_U64(stats_of(p).frees, 1);
    CHECK_EQ_U64(r.reports, 1);
    CHECK_EQ_U64(r.last_what, OPOOL_ESTALE);
    CHECK_EQ_U64(r.last_report_handle.bits, h.bits);
    CHECK_EQ_PTR(r.last_report_pool, p);
    opool_destroy(p);
}

TEST(null_handle_is_never_valid) {
    opool *p = make_pool(8, 4);
    REQUIRE(p);
    opool_handle h;
    CHECK(opool_alloc(p, &h) != NULL); /* slot 0 live: OPOOL_NULL names it, with gen 0 */
    CHECK(opool_get(p, OPOOL_NULL) == NULL);
    CHECK(!opool_valid(p, OPOOL_NULL));
    CHECK_EQ_U64(opool_free(p, OPOOL_NULL), OPOOL_EINVAL);
    CHECK(opool_alloc_at(p, OPOOL_NULL) == NULL);
    CHECK_EQ_U64(opool_count(p), 1);
    opool_destroy(p);
}

TEST(even_generation_handle_is_invalid) {
    opool *p = make_pool(8, 4);
    REQUIRE(p);
    opool_handle h;
    CHECK(opool_alloc(p, &h) != NULL);
    opool_handle even = handle(opool_handle_generation(h) + 1, 0);
    CHECK(opool_get(p, even) == NULL);
    CHECK_EQ_U64(opool_free(p, even), OPOOL_EINVAL);
    CHECK_EQ_U64(opool_free(p, handle(SALT, 1)), OPOOL_EINVAL); /* a free slot's own gen */
    CHECK(opool_valid(p, h));
    opool_destroy(p);
}

TEST(out_of_range_index_is_invalid) {
    opool *p = make_pool(8, 4);
    REQUIRE(p);
    opool_handle h;
    CHECK(opool_alloc(p, &h) != NULL);
    CHECK_EQ_U64(opool_free(p, handle(G1, 4)), OPOOL_EINVAL);
    CHECK_EQ_U64(opool_free(p, handle(G1, UINT32_MAX)), OPOOL_EINVAL);
    opool_handle ones = {UINT64_MAX};
    CHECK(opool_get(p, ones) == NULL);
    CHECK(!opool_valid(p, ones));
    CHECK_EQ_U64(opool_free(p, ones), OPOOL_EINVAL);
    CHECK(opool_get(p, handle(G1, 4)) == NULL);
    CHECK_EQ_U64(stats_of(p).rejected_handles, 3);
    opool_destroy(p);
}

TEST(stale_handle_after_reuse_is_rejected) {
    opool *p = make_pool(8, 4);
    REQUIRE(p);
    opool_handle old, now;
    CHECK(opool_alloc(p, &old) != NULL);
    CHECK_EQ_U64(opool_free(p, old), OPOOL_OK);
    void *obj = opool_alloc(p, &now);
    CHECK_EQ_U64(opool_handle_index(now), opool_handle_index(old));
    CHECK(opool_get(p, old) == NULL);
    CHECK(!opool_valid(p, old));
    CHECK_EQ_U64(opool_free(p, old), OPOOL_ESTALE);
    CHECK_EQ_PTR(opool_get(p, now), obj);
    CHECK_EQ_U64(opool_count(p), 1);
    opool_destroy(p);
}

TEST(forged_odd_generation_is_stale) {
    opool *p = make_pool(8, 4);
    REQUIRE(p);
    opool_handle h;
    CHECK(opool_alloc(p, &h) != NULL);
    CHECK_EQ_U64(opool_free(p, handle(0x12345679u, 0)), OPOOL_ESTALE);
    CHECK_EQ_U64(opool_free(p, handle(0x12345679u, 3)), OPOOL_ESTALE);
    CHECK(opool_valid(p, h));
    opool_destroy(p);
}

TEST(handle_from_other_pool_is_rejected) {
    opool_desc d = desc_of(8, 16);
    opool *a = create(&d);
    d.salt = 0x5000;
    d.capacity = 4;
    opool *b = create(&d);
    REQUIRE(a && b);
    opool_handle ha[11], hb;
    alloc_n(a, 11, ha);
    CHECK(opool_alloc(b, &hb) != NULL);
    CHECK(opool_get(b, ha[0]) == NULL);
    CHECK(opool_get(a, hb) == NULL);
    CHECK_EQ_U64(opool_free(b, ha[0]), OPOOL_ESTALE);
    CHECK_EQ_U64(opool_free(b, ha[10]), OPOOL_EINVAL); /* index 10 is beyond b */
    CHECK_EQ_U64(opool_free(a, hb), OPOOL_ESTALE);
    CHECK_EQ_U64(opool_count(a), 11);
    CHECK_EQ_U64(opool_count(b), 1);
    CHECK(opool_valid(b, hb));
    opool_destroy(a);
    opool_destroy(b);
}

TEST(rejected_free_changes_nothing_but_the_counter) {
    opool *p = make_pool(8, 4);
    REQUIRE(p);
    opool_handle h[3], next;
    alloc_n(p, 3, h);
    CHECK_EQ_U64(opool_free(p, h[0]), OPOOL_OK);
    opool_stats before = stats_of(p);
    CHECK_EQ_U64(opool_free(p, h[0]), OPOOL_ESTALE);
    CHECK_EQ_U64(opool_free(p, OPOOL_NULL), OPOOL_EINVAL);
    opool_stats after = stats_of(p);
    CHECK_EQ_U64(after.rejected_handles, before.rejected_handles + 2);
    after.rejected_handles = before.rejected_handles;
    CHECK(memcmp(&before, &after, sizeof before) == 0);
    CHECK_EQ_U64(opool_live_handle(p, 0).bits, h[2].bits);
    CHECK_EQ_U64(opool_live_handle(p, 1).bits, h[1].bits);
    CHECK(opool_alloc(p, &next) != NULL);
    CHECK_EQ_U64(next.bits, handle(G1 + 2, 0).bits); /* the free stack did not move */
    opool_destroy(p);
}

TEST(rejected_free_is_reported_with_status_and_handle) {
    recorder r;
    opool_desc d = recorded_desc(8, 4, &r);
    opool *p = create(&d);
    REQUIRE(p);
    CHECK_EQ_U64(opool_free(p, handle(G1, 9)), OPOOL_EINVAL);
    CHECK_EQ_U64(r.reports, 1);
    CHECK_EQ_U64(r.last_what, OPOOL_EINVAL);
    CHECK_EQ_U64(r.last_report_handle.bits, handle(G1, 9).bits);
    CHECK_EQ_U64(opool_free(p, handle(G1, 2)), OPOOL_ESTALE);
    CHECK_EQ_U64(r.reports, 2);
    CHECK_EQ_U64(r.last_what, OPOOL_ESTALE);
    CHECK_EQ_U64(r.last_report_handle.bits, handle(G1, 2).bits);
    opool_destroy(p);
}

TEST(get_never_reports_or_counts) {
    recorder r;
    opool_desc d = recorded_desc(8, 4, &r);
    opool *p = create(&d);
    REQUIRE(p);
    CHECK(opool_get(p, handle(G1, 1)) == NULL);
    CHECK(!opool_valid(p, handle(G1, 100)));
    CHECK_EQ_U64(r.reports, 0);
    CHECK_EQ_U64(stats_of(p).rejected_handles, 0);
    opool_destroy(p);
}

/* ---- objects ------------------------------------------------------------ */

TEST(get_returns_the_object_alloc_returned) {
    opool *p = make_pool(40, 8);
    REQUIRE(p);
    opool_handle h[8];
    void *obj[8];
    for (int k = 0; k < 8; k++) obj[k] = opool_alloc(p, &h[k]);
    for (int k = 0; k < 8; k++) {
        CHECK(obj[k] != NULL);
        CHECK_EQ_PTR(opool_get(p, h[k]), obj[k]);
        CHECK(opool_valid(p, h[k]));
        CHECK_EQ_PTR(opool_at(p, (uint32_t)k), obj[k]);
    }
    opool_destroy(p);
}

TEST(objects_do_not_overlap) {
    static const size_t sizes[] = {1, 3, 8, 13, 64, 100};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        opool_desc d = desc_of(sizes[s], 17);
        d.object_align = 1;
        opool *p = create(&d);
        REQUIRE(p);
        unsigned char *obj[17];
        for (int k = 0; k < 17; k++) {
            obj[k] = opool_alloc(p, NULL);
            REQUIRE(obj[k]);
            memset(obj[k], k + 1, sizes[s]);
        }
        for (int k = 0; k < 17; k++)
            for (size_t b = 0; b < sizes[s]; b++) CHECK_EQ_U64(obj[k][b], k + 1);
        opool_destroy(p);
    }
}

TEST(object_alignment_is_honoured) {
    for (size_t align = 1; align <= 4096; align *= 2) {
        static const size_t sizes[] = {1, 3, 24};
        for (int s = 0; s < 3; s++) {
            opool_desc d = desc_of(sizes[s] + align / 2, 5);
            d.object_align = align;
            d.on_full = OPOOL_FULL_GROW;
            d.max_capacity = 40;
            opool *p = create(&d);
            REQUIRE(p);
            for (int k = 0; k < 40; k++) {
                void *obj = opool_alloc(p, NULL);
                REQUIRE(obj);
                CHECK_EQ_U64((uintptr_t)obj % align, 0);
            }
            opool_destroy(p);
        }
    }
}

TEST(default_alignment_is_max_align_t) {
    opool *p = make_pool(1, 9);
    REQUIRE(p);
    for (int k = 0; k < 9; k++) {
        void *obj = opool_alloc(p, NULL);
        REQUIRE(obj);
        CHECK_EQ_U64((uintptr_t)obj % alignof(max_align_t), 0);
    }
    opool_destroy(p);
}

TEST(alloc_without_out_handle_works) {
    opool *p = make_pool(8, 2);
    REQUIRE(p);
    void *obj = opool_alloc(p, NULL);
    CHECK(obj != NULL);
    CHECK_EQ_U64(opool_handle_of(p, obj).bits, handle(G1, 0).bits);
    opool_destroy(p);
}

TEST(alloc_runs_init_after_zero) {
    recorder r;
    opool_desc d = recorded_desc(16, 2, &r);
    d.flags |= OPOOL_ZERO;
    d.init = rec_init;
    opool *p = create(&d);
    REQUIRE(p);
    opool_handle h;
    unsigned char *obj = opool_alloc(p, &h);
    REQUIRE(obj);
    CHECK_EQ_U64(r.inits, 1);
    CHECK_EQ_U64(r.init_saw_zero, 1);
    CHECK_EQ_PTR(r.last_init, obj);
    CHECK_EQ_U64(obj[0], 0x5A);
    CHECK_EQ_U64(obj[15], 0x5A);
    CHECK_EQ_U64(opool_free(p, h), OPOOL_OK);
    CHECK(opool_alloc(p, &h) == obj);
    CHECK_EQ_U64(r.inits, 2);
    CHECK_EQ_U64(r.init_saw_zero, 2); /* ZERO ran again before init */
    opool_destroy(p);
}

TEST(zero_flag_zero_fills_reused_objects) {
    opool_desc d = desc_of(100, 2);
    d.flags |= OPOOL_ZERO;
    opool *p = create(&d);
    REQUIRE(p);
    opool_handle h;
    unsigned char *obj = opool_alloc(p, &h);
    REQUIRE(obj);
    for (int b = 0; b < 100; b++) CHECK_EQ_U64(obj[b], 0);
    memset(obj, 0xEE, 100);
    CHECK_EQ_U64(opool_free(p, h), OPOOL_OK);
    unsigned char *again = opool_alloc(p, &h);
    CHECK_EQ_PTR(again, obj);
    REQUIRE(again);
    for (int b = 0; b < 100; b++) CHECK_EQ_U64(again[b], 0);
    opool_destroy(p);
}

TEST(free_runs_fini_once) {
    recorder r;
    opool_desc d = recorded_desc(16, 4, &r);
    d.fini = rec_fini;
    opool *p = create(&d);
    REQUIRE(p);
    opool_handle h;
    void *obj = opool_alloc(p, &h);
    CHECK_EQ_U64(r.finis, 0);
    CHECK_EQ_U64(opool_free(p, h), OPOOL_OK);
    CHECK_EQ_U64(r.finis, 1);
    CHECK_EQ_PTR(r.last_fini, obj);
    CHECK_EQ_U64(opool_free(p, h), OPOOL_ESTALE);
    CHECK_EQ_U64(r.finis, 1);
    opool_destroy(p);
    CHECK_EQ_U64(r.finis, 1);
}

TEST(free_object_frees_a_live_object) {
    recorder r;
    opool_desc d = recorded_desc(16, 4, &r);
    d.fini = rec_fini;
    opool *p = create(&d);
    REQUIRE(p);
    opool_handle h[3];
    alloc_n(p, 3, h);
    void *obj = opool_get(p, h[1]);
    CHECK_EQ_U64(opool_free_object(p, obj), OPOOL_OK);
    CHECK(!opool_valid(p, h[1]));
    CHECK_EQ_U64(opool_count(p), 2);
    CHECK_EQ_U64(r.finis, 1);
    CHECK_EQ_PTR(r.last_fini, obj);
    CHECK_EQ_U64(stats_of(p).frees, 1);
    opool_handle again;
    CHECK_EQ_PTR(opool_alloc(p, &again), obj); /* LIFO like opool_free */
    CHECK_EQ_U64(again.bits, handle(G1 + 2, 1).bits);
    opool_destroy(p);
}

TEST(free_object_rejects_anything_but_a_live_object_start) {
    recorder r;
    opool_desc d = recorded_desc(16, 4, &r);
    opool *p = create(&d);
    REQUIRE(p);
    opool_handle h[2];
    alloc_n(p, 2, h);
    unsigned char *obj = opool_get(p, h[0]);
    int local = 0;

    CHECK_EQ_U64(opool_free_object(p, obj + 1), OPOOL_EINVAL);
    CHECK_EQ_U64(r.reports, 1);
    CHECK_EQ_U64(r.last_what, OPOOL_EINVAL);
    CHECK_EQ_U64(r.last_report_handle.bits, 0);
    CHECK_EQ_U64(opool_free_object(p, &local), OPOOL_EINVAL);
    CHECK_EQ_U64(opool_free_object(p, NULL), OPOOL_EINVAL);
    CHECK_EQ_U64(stats_of(p).rejected_handles, 3);
    CHECK_EQ_U64(r.reports, 3);
    CHECK_EQ_U64(opool_count(p), 2);
    CHECK(opool_valid(p, h[0]));
    opool_destroy(p);
}

TEST(free_object_of_a_free_slot_is_rejected) {
    opool *p = make_pool(16, 4);
    REQUIRE(p);
    opool_handle h;
    void *obj = opool_alloc(p, &h);
    CHECK_EQ_U64(opool_free(p, h), OPOOL_OK);
    CHECK_EQ_U64(opool_free_object(p, obj), OPOOL_EINVAL);
    CHECK_EQ_U64(stats_of(p).rejected_handles, 1);
    CHECK_EQ_U64(stats_of(p).frees, 1);
    opool_destroy(p);
}

TEST(handle_of_finds_a_live_object_start) {
    opool *p = make_grow_pool(2, 8);
    REQUIRE(p);
    opool_handle h[6];
    alloc_n(p, 6, h); /* slots 2.. are in grown chunks */
    for (int k = 0; k < 6; k++)
        CHECK_EQ_U64(opool_handle_of(p, opool_get(p, h[k])).bits, h[k].bits);
    opool_destroy(p);
}

TEST(handle_of_rejects_interior_free_foreign_and_null) {
    opool_desc d = desc_of(16, 4);
    d.object_align = 8;
    opool *p = create(&d);
    REQUIRE(p);
    opool_handle h[2];
    alloc_n(p, 2, h);
    unsigned char *obj = opool_get(p, h[0]);
    int local;
    CHECK(opool_handle_is_null(opool_handle_of(p, obj + 1)));
    CHECK(opool_handle_is_null(opool_handle_of(p, obj + 8)));
    CHECK(opool_handle_is_null(opool_handle_of(p, &local)));
    CHECK(opool_handle_is_null(opool_handle_of(p, NULL)));
    CHECK(opool_handle_is_null(opool_handle_of(p, obj - 1)));
    CHECK(opool_handle_is_null(opool_handle_of(p, obj + 16 * 4))); /* one past the last slot */
    CHECK_EQ_U64(opool_free(p, h[1]), OPOOL_OK);
    CHECK(opool_handle_is_null(opool_handle_of(p, obj + 16))); /* slot 1, now free */
    CHECK(opool_handle_is_null(opool_handle_of(p, obj + 32))); /* slot 2, never used */
    opool_destroy(p);
}

TEST(at_returns_live_objects_only) {
    opool *p = make_pool(8, 4);
    REQUIRE(p);
    opool_handle h[2];
    alloc_n(p, 2, h);
    CHECK_EQ_PTR(opool_at(p, 1), opool_get(p, h[1]));
    CHECK(opool_at(p, 2) == NULL);
    CHECK(opool_at(p, 4) == NULL);
    CHECK(opool_at(p, UINT32_MAX) == NULL);
    CHECK_EQ_U64(opool_free(p, h[1]), OPOOL_OK);
    CHECK(opool_at(p, 1) == NULL);
    opool_destroy(p);
}

/* ---- iteration ---------------------------------------------------------- */

TEST(backward_iteration_visits_each_once_while_freeing) {
    opool *p = make_pool(sizeof(uint32_t), 20);
    REQUIRE(p);
    for (uint32_t k = 0; k < 20; k++) {
        uint32_t *v = opool_alloc(p, NULL);
        REQUIRE(v);
        *v = k;
    }
    int seen[20] = {0};
    for (uint32_t i = opool_count(p); i-- > 0;) {
        uint32_t *v = opool_live_object(p, i);
        REQUIRE(v && *v < 20);
        seen[*v]++;
        if (*v % 2 == 0) CHECK_EQ_U64(opool_free(p, opool_live_handle(p, i)), OPOOL_OK);
    }
    for (int k = 0; k < 20; k++) CHECK_EQ_U64(seen[k], 1);
    CHECK_EQ_U64(opool_count(p), 10);
    for (uint32_t i = 0; i < opool_count(p); i++) {
        uint32_t *v = opool_live_object(p, i);
        CHECK(v && *v % 2 == 1);
    }
    opool_destroy(p);
}

TEST(iteration_skips_objects_allocated_inside_the_loop) {
    opool *p = make_pool(sizeof(uint32_t), 40);
    REQUIRE(p);
    for (uint32_t k = 0; k < 10; k++) *(uint32_t *)opool_alloc(p, NULL) = k;
    int seen[10] = {0}, visits = 0;
    for (uint32_t i = opool_count(p); i-- > 0;) {
        uint32_t *v = opool_live_object(p, i);
        visits++;
        REQUIRE(v && *v < 10); /* a new object (100+) is never reached */
        seen[*v]++;
        if (*v % 3 == 0) CHECK_EQ_U64(opool_free(p, opool_live_handle(p, i)), OPOOL_OK);
        uint32_t *n = opool_alloc(p, NULL);
        REQUIRE(n);
        *n = 100 + *v;
    }
    CHECK_EQ_U64(visits, 10);
    for (int k = 0; k < 10; k++) CHECK_EQ_U64(seen[k], 1);
    CHECK_EQ_U64(opool_count(p), 16);
    opool_destroy(p);
}

/* The report that opened round 2: the last change before the loop was a
 * free, and the loop allocated. Each object live at the start is visited
 * once, the newborn never. */
TEST(loop_after_a_free_visits_every_object_once_and_no_newborn) {
    opool *p = make_pool(sizeof(int), 8);
    REQUIRE(p);
    opool_handle a;
    *(int *)opool_alloc(p, &a) = 'A';
    *(int *)opool_alloc(p, NULL) = 'B';
    *(int *)opool_alloc(p, NULL) = 'C';
    CHECK_EQ_U64(opool_free(p, a), OPOOL_OK); /* e.g. last frame's collision pass */
    char visits[8] = {0};
    int n = 0;
    for (uint32_t i = opool_count(p); i-- > 0;) {
        int *it = opool_live_object(p, i);
        REQUIRE(it && n < 7);
        visits[n++] = (char)*it;
        if (*it == 'B') *(int *)opool_alloc(p, NULL) = 'D';
    }
    CHECK(strcmp(visits, "BC") == 0);
    CHECK_EQ_U64(opool_count(p), 3);
    opool_destroy(p);
}

/* The same after every kind of history: frees in any order, allocs after
 * them, sort, clear, growth. Each loop frees the current object at random
 * and allocates; every object live at its start is visited once. */
TEST(loop_keeps_its_promise_after_any_history) {
    opool_desc d = desc_of(sizeof(uint32_t), 4);
    d.on_full = OPOOL_FULL_GROW;
    d.max_capacity = 4096;
    opool *p = create(&d);
    REQUIRE(p);
    rng r = {7};
    static uint8_t seen[1u << 16];
    uint32_t tag = 0, broken = 0;
    for (int loop = 0; loop < 2000; loop++) {
        /* history: a few allocs and frees, now and then a sort or a clear */
        uint32_t steps = rng_below(&r, 12);
        for (uint32_t k = 0; k < steps; k++) {
            uint32_t c = opool_count(p);
            if (c > 0 && rng_chance(&r, 50))
                REQUIRE(opool_free(p, opool_live_handle(p, rng_below(&r, c))) == OPOOL_OK);
            else if (c < 3000)
                *(uint32_t *)opool_alloc(p, NULL) = tag++ & 0xFFFF;
        }
        if (rng_chance(&r, 5)) opool_sort(p);
        if (rng_chance(&r, 2)) opool_clear(p);
        uint32_t start = opool_count(p), visits = 0;
        memset(seen, 0, sizeof seen);
        for (uint32_t i = 0; i < start; i++) seen[*(uint32_t *)opool_live_object(p, i)] = 1;
        for (uint32_t i = opool_count(p); i-- > 0;) {
            uint32_t *it = opool_live_object(p, i);
            REQUIRE(it);
            visits++;
            if (seen[*it] != 1) broken++; /* a newborn, or a second visit */
            seen[*it] = 2;
            if (rng_chance(&r, 30)) REQUIRE(opool_free(p, opool_live_handle(p, i)) == OPOOL_OK);
            if (rng_chance(&r, 30) && opool_count(p) < 3000) {
                uint32_t *n = opool_alloc(p, NULL);
                REQUIRE(n);
                *n = tag++ & 0xFFFF;
            }
        }
        CHECK_EQ_U64(visits, start);
    }
    CHECK_EQ_U64(broken, 0);
    opool_destroy(p);
}

/* Freeing an object the loop has visited (above i): the rest of the loop
 * sees no difference. */
TEST(loop_freeing_a_visited_object_changes_nothing_for_the_rest) {
    opool *p = make_pool(sizeof(int), 8);
    REQUIRE(p);
    opool_handle h[5];
    for (int k = 0; k < 5; k++) *(int *)opool_alloc(p, &h[k]) = k;
    char order[8] = {0};
    int n = 0;
    for (uint32_t i = opool_count(p); i-- > 0;) {
        int *it = opool_live_object(p, i);
        REQUIRE(it && n < 7);
        order[n++] = (char)('0' + *it);
        if (*it == 2) CHECK_EQ_U64(opool_free(p, h[4]), OPOOL_OK); /* visited first */
    }
    CHECK(strcmp(order, "43210") == 0);
    CHECK_EQ_U64(opool_count(p), 4);
    opool_destroy(p);
}

/* Freeing an object the loop has not reached (below i): it is not visited,
 * and the last entry, already visited, moves into its place and is visited
 * there again, exactly as the header says. */
TEST(loop_freeing_an_unvisited_object_moves_the_last_entry_into_its_place) {
    opool *p = make_pool(sizeof(int), 8);
    REQUIRE(p);
    opool_handle h[5];
    for (int k = 0; k < 5; k++) *(int *)opool_alloc(p, &h[k]) = k;
    char order[12] = {0};
    int n = 0;
    for (uint32_t i = opool_count(p); i-- > 0;) {
        int *it = opool_live_object(p, i);
        REQUIRE(it && n < 11);
        order[n++] = (char)('0' + *it);
        if (*it == 3) CHECK_EQ_U64(opool_free(p, h[1]), OPOOL_OK); /* 4, the last, moves to 1 */
    }
    CHECK(strcmp(order, "43240") == 0);
    opool_destroy(p);
}

/* Once frees of other objects bring count to i or below, the indices past
 * the end give NULL, and an object allocated then lands below i and is
 * visited: the loop that frees others must skip NULL. */
TEST(loop_past_the_end_after_freeing_others_gives_null) {
    opool *p = make_pool(sizeof(int), 8);
    REQUIRE(p);
    opool_handle h[4];
    for (int k = 0; k < 4; k++) *(int *)opool_alloc(p, &h[k]) = k;
    char order[12] = {0};
    int n = 0, nulls = 0;
    for (uint32_t i = opool_count(p); i-- > 0;) {
        int *it = opool_live_object(p, i);
        if (it == NULL) {
            CHECK(opool_handle_is_null(opool_live_handle(p, i)));
            nulls++;
            continue;
        }
        REQUIRE(n < 11);
        order[n++] = (char)('0' + *it);
        if (*it == 3) {
            CHECK_EQ_U64(opool_free(p, h[3]), OPOOL_OK); /* the current one: count 3 */
            CHECK_EQ_U64(opool_free(p, h[0]), OPOOL_OK); /* 2 moves to 0: count 2 */
            CHECK_EQ_U64(opool_free(p, h[1]), OPOOL_OK); /* count 1: index 2 is past the end */
            *(int *)opool_alloc(p, NULL) = 7;            /* lands at position 1 */
        }
    }
    CHECK(strcmp(order, "372") == 0);
    CHECK_EQ_U64(nulls, 1);
    opool_destroy(p);
}

/* Growth inside the loop adds free slots only: the promise holds. */
TEST(loop_that_grows_the_pool_visits_each_once) {
    opool *p = make_grow_pool(2, 64);
    REQUIRE(p);
    for (uint32_t k = 0; k < 2; k++) *(uint32_t *)opool_alloc(p, NULL) = k;
    int seen[2] = {0}, visits = 0;
    for (uint32_t i = opool_count(p); i-- > 0;) {
        uint32_t *v = opool_live_object(p, i);
        REQUIRE(v && *v < 2);
        seen[*v]++;
        visits++;
        for (int k = 0; k < 5; k++) *(uint32_t *)opool_alloc(p, NULL) = 100; /* grows */
    }
    CHECK_EQ_U64(visits, 2);
    CHECK_EQ_U64(seen[0] + seen[1], 2);
    CHECK_EQ_U64(seen[0], 1);
    CHECK(stats_of(p).grows > 0);
    opool_destroy(p);
}

TEST(live_roster_out_of_range_is_null) {
    opool *p = make_pool(8, 4);
    REQUIRE(p);
    CHECK(opool_handle_is_null(opool_live_handle(p, 0)));
    CHECK(opool_live_object(p, 0) == NULL);
    opool_handle h;
    CHECK(opool_alloc(p, &h) != NULL);
    CHECK_EQ_U64(opool_live_handle(p, 0).bits, h.bits);
    CHECK(opool_handle_is_null(opool_live_handle(p, 1)));
    CHECK(opool_live_object(p, 1) == NULL);
    CHECK(opool_live_object(p, UINT32_MAX) == NULL);
    CHECK(opool_handle_is_null(opool_live_handle(p, UINT32_MAX)));
    opool_destroy(p);
}

TEST(sort_orders_live_roster_by_index_and_keeps_free_stack) {
    opool *p = make_pool(8, 8);
    REQUIRE(p);
    opool_handle h[6], next[3];
    alloc_n(p, 6, h);
    CHECK_EQ_U64(opool_free(p, h[0]), OPOOL_OK);
    CHECK_EQ_U64(opool_free(p, h[2]), OPOOL_OK);
    CHECK_EQ_U64(opool_free(p, h[4]), OPOOL_OK);
    CHECK_EQ_U64(opool_handle_index(opool_live_handle(p, 0)), 5); /* roster: 5 1 3 */
    opool_sort(p);
    CHECK_EQ_U64(opool_count(p), 3);
    CHECK_EQ_U64(opool_live_handle(p, 0).bits, h[1].bits);
    CHECK_EQ_U64(opool_live_handle(p, 1).bits, h[3].bits);
    CHECK_EQ_U64(opool_live_handle(p, 2).bits, h[5].bits);
    CHECK_EQ_PTR(opool_live_object(p, 2), opool_get(p, h[5]));
    alloc_n(p, 3, next);
    CHECK_EQ_U64(next[0].bits, handle(G1 + 2, 4).bits);
    CHECK_EQ_U64(next[1].bits, handle(G1 + 2, 2).bits);
    CHECK_EQ_U64(next[2].bits, handle(G1 + 2, 0).bits);
    /* a sorted roster still swap-deletes correctly */
    opool_sort(p);
    CHECK_EQ_U64(opool_free(p, h[1]), OPOOL_OK);
    CHECK_EQ_U64(opool_live_handle(p, 0).bits, next[2].bits);
    CHECK_EQ_U64(opool_live_handle(p, 1).bits, h[5].bits);
    CHECK_EQ_U64(opool_live_handle(p, 2).bits, next[1].bits);
    opool_destroy(p);
}

TEST(sort_walks_memory_forward) {
    opool *p = make_grow_pool(4, 64);
    REQUIRE(p);
    opool_handle h[50];
    alloc_n(p, 50, h);
    for (int k = 0; k < 50; k += 3) CHECK_EQ_U64(opool_free(p, h[k]), OPOOL_OK);
    opool_sort(p);
    for (uint32_t i = 1; i < opool_count(p); i++)
        CHECK(opool_handle_index(opool_live_handle(p, i - 1)) <
              opool_handle_index(opool_live_handle(p, i)));
    opool_destroy(p);
}

/* ---- clear -------------------------------------------------------------- */

TEST(clear_makes_every_handle_stale_and_restarts_in_order) {
    recorder r;
    opool_desc d = recorded_desc(8, 8, &r);
    d.fini = rec_fini;
    opool *p = create(&d);
    REQUIRE(p);
    opool_handle h[5], again[8];
    alloc_n(p, 5, h);
    CHECK_EQ_U64(opool_free(p, h[2]), OPOOL_OK);
    opool_clear(p);
    CHECK_EQ_U64(r.finis, 5);
    CHECK_EQ_U64(opool_count(p), 0);
    CHECK_EQ_U64(opool_capacity(p), 8);
    for (int k = 0; k < 5; k++) CHECK(!opool_valid(p, h[k]));
    CHECK_EQ_U64(opool_free(p, h[0]), OPOOL_ESTALE);
    opool_stats s = stats_of(p);
    CHECK_EQ_U64(s.frees, 5);
    CHECK_EQ_U64(s.allocs, 5);
    CHECK_EQ_U64(s.high_water, 5);
    alloc_n(p, 8, again);
    for (uint32_t k = 0; k < 8; k++)
        CHECK_EQ_U64(again[k].bits, handle(k < 5 ? G1 + 2 : G1, k).bits);
    opool_destroy(p);
}

/* A pool without fini (poison, checker, retirement) is cleared in one pass
 * over its records instead of a release per object: the same generations,
 * statistics, order and end of an exhaustion episode as with a fini, with
 * or without a live list, with call sites tracked. (Under ASan or Valgrind
 * every variant takes the per-object path.) */
TEST(clear_without_fini_ends_as_clear_with_fini) {
    static const uint32_t flags[4] = {0, 0, OPOOL_NO_LIVE_LIST, OPOOL_TRACK_SITES};
    for (int v = 0; v < 4; v++) {
        recorder r;
        opool_desc d = recorded_desc(8, 8, &r);
        if (v == 1) d.fini = rec_fini;
        d.flags |= flags[v];
        opool *p = create(&d);
        REQUIRE(p);
        opool_handle h[8], again[8], none;
        alloc_n(p, 8, h);
        CHECK(opool_alloc(p, &none) == NULL); /* opens an episode: one report */
        CHECK_EQ_U64(r.reports, 1);
        CHECK_EQ_U64(opool_free(p, h[2]), OPOOL_OK); /* 7 live: the episode stays open */
        opool_clear(p);
        CHECK_EQ_U64(r.finis, v == 1 ? 8 : 0); /* the free's and the clear's 7 */
        CHECK_EQ_U64(opool_count(p), 0);
        /* opool_valid, not opool_free: a stale free would end the episode itself */
        for (int k = 0; k < 8; k++) CHECK(!opool_valid(p, h[k]));
        if (v == 3) CHECK(opool_alloc_site(p, h[0]) == NULL);
        opool_stats s = stats_of(p);
        CHECK_EQ_U64(s.allocs, 8);
        CHECK_EQ_U64(s.frees, 8);
        CHECK_EQ_U64(s.high_water, 8);
        CHECK_EQ_U64(s.failed_allocs, 1);
        CHECK_EQ_U64(s.episodes, 1);
        alloc_n(p, 8, again); /* every slot one generation on, in ascending order */
        for (uint32_t k = 0; k < 8; k++) CHECK_EQ_U64(again[k].bits, handle(G1 + 2, k).bits);
        if (v != 2)
            for (uint32_t k = 0; k < 8; k++)
                CHECK_EQ_U64(opool_live_handle(p, k).bits, again[k].bits);
        /* the clear ended the episode: the next failure opens another */
        CHECK(opool_alloc(p, &none) == NULL);
        CHECK_EQ_U64(r.reports, 2);
        CHECK_EQ_U64(r.last_what, OPOOL_EFULL);
        CHECK_EQ_U64(stats_of(p).episodes, 2);
        opool_clear(p);
        opool_destroy(p);
    }
}

TEST(clear_on_empty_pool_is_harmless) {
    opool *p = make_pool(8, 3);
    REQUIRE(p);
    opool_clear(p);
    opool_handle h[3];
    alloc_n(p, 3, h);
    for (uint32_t k = 0; k < 3; k++) CHECK_EQ_U64(h[k].bits, handle(G1, k).bits);
    opool_destroy(p);
}

TEST(clear_resets_a_grown_pool_to_ascending_order) {
    opool *p = make_grow_pool(3, 20);
    REQUIRE(p);
    opool_handle h[20];
    alloc_n(p, 13, h);
    for (int k = 0; k < 13; k += 2) CHECK_EQ_U64(opool_free(p, h[k]), OPOOL_OK);
    uint32_t cap = opool_capacity(p);
    CHECK_EQ_U64(cap, 16);
    opool_clear(p);
    CHECK_EQ_U64(opool_capacity(p), cap);
    alloc_n(p, cap, h);
    for (uint32_t k = 0; k < cap; k++) CHECK_EQ_U64(opool_handle_index(h[k]), k);
    opool_destroy(p);
}

/* ---- full pools --------------------------------------------------------- */

TEST(full_pool_alloc_fails_and_clears_out_handle) {
    recorder r;
    opool_desc d = recorded_desc(8, 2, &r);
    opool *p = create(&d);
    opool_handle h[2], out = handle(G1, 7);
    REQUIRE(p);
    alloc_n(p, 2, h);
    CHECK(opool_alloc(p, &out) == NULL);
    CHECK(opool_handle_is_null(out));
    CHECK(opool_alloc(p, NULL) == NULL);
    opool_stats s = stats_of(p);
    CHECK_EQ_U64(s.failed_allocs, 2);
    CHECK_EQ_U64(s.allocs, 2);
    CHECK_EQ_U64(s.count, 2);
    CHECK(opool_valid(p, h[0]) && opool_valid(p, h[1]));
    opool_destroy(p);
}

TEST(full_pool_without_report_callback_returns_null) {
    opool_desc d = desc_of(8, 1);
    d.report = NULL; /* the default report prints one line on stderr */
    opool *p = create(&d);
    REQUIRE(p);
    CHECK(opool_alloc(p, NULL) != NULL);
    CHECK(opool_alloc(p, NULL) == NULL);
    CHECK(opool_alloc(p, NULL) == NULL);
    CHECK_EQ_U64(stats_of(p).failed_allocs, 2);
    opool_destroy(p);
}

TEST(full_pool_reports_an_episode_at_its_1st_2nd_and_4th_failures) {
    recorder r;
    opool_desc d = recorded_desc(8, 2, &r);
    opool *p = create(&d);
    REQUIRE(p);
    opool_handle h[2];
    alloc_n(p, 2, h);
    for (int k = 0; k < 5; k++) CHECK(opool_alloc(p, NULL) == NULL);
    CHECK_EQ_U64(r.reports, 3); /* failures 1, 2 and 4 */
    CHECK_EQ_U64(r.last_what, OPOOL_EFULL);
    CHECK_EQ_U64(r.last_report_handle.bits, 0);
    CHECK_EQ_PTR(r.last_report_pool, p);
    CHECK_EQ_U64(stats_of(p).failed_allocs, 5);

    CHECK_EQ_U64(opool_free(p, h[0]), OPOOL_OK); /* 1 of 2 live: ends the episode */
    CHECK(opool_alloc(p, &h[0]) != NULL);
    CHECK(opool_alloc(p, NULL) == NULL);
    CHECK(opool_alloc(p, NULL) == NULL);
    CHECK_EQ_U64(r.reports, 5);
    CHECK_EQ_U64(r.last_what, OPOOL_EFULL);
    CHECK_EQ_U64(stats_of(p).failed_allocs, 7);
    opool_destroy(p);
}

TEST(rejected_free_does_not_end_a_full_episode) {
    recorder r;
    opool_desc d = recorded_desc(8, 1, &r);
    opool *p = create(&d);
    REQUIRE(p);
    opool_handle h;
    CHECK(opool_alloc(p, &h) != NULL);
    CHECK(opool_alloc(p, NULL) == NULL);
    CHECK(opool_alloc(p, NULL) == NULL);
    CHECK_EQ_U64(opool_free(p, handle(G1 + 2, 0)), OPOOL_ESTALE);
    CHECK_EQ_U64(r.reports, 3); /* EFULL twice (failures 1, 2), then the stale free */
    CHECK(opool_alloc(p, NULL) == NULL);
    CHECK_EQ_U64(r.reports, 3); /* failure 3 of the same episode: not reported */
    CHECK_EQ_U64(r.last_what, OPOOL_ESTALE);
    opool_destroy(p);
}

TEST(free_object_and_clear_end_a_full_episode) {
    recorder r;
    opool_desc d = recorded_desc(8, 1, &r);
    opool *p = create(&d);
    REQUIRE(p);
    void *obj = opool_alloc(p, NULL);
    CHECK(opool_alloc(p, NULL) == NULL);
    CHECK_EQ_U64(r.reports, 1);
    CHECK_EQ_U64(opool_free_object(p, obj), OPOOL_OK);
    CHECK(opool_alloc(p, NULL) != NULL);
    CHECK(opool_alloc(p, NULL) == NULL);
    CHECK_EQ_U64(r.reports, 2);
    opool_clear(p);
    CHECK(opool_alloc(p, NULL) != NULL);
    CHECK(opool_alloc(p, NULL) == NULL);
    CHECK_EQ_U64(r.reports, 3);
    CHECK_EQ_U64(r.last_what, OPOOL_EFULL);
    CHECK_EQ_U64(stats_of(p).failed_allocs, 3);
    opool_destroy(p);
}

TEST(fast_path_free_ends_a_full_episode) {
    /* no hooks at all: frees may take the inline path */
    recorder r;
    opool_desc d = recorded_desc(8, 2, &r);
    opool *p = create(&d);
    REQUIRE(p);
    opool_handle h[2];
    alloc_n(p, 2, h);
    CHECK(opool_alloc(p, NULL) == NULL);
    CHECK_EQ_U64(opool_free(p, h[1]), OPOOL_OK);
    CHECK_EQ_U64(opool_free(p, h[0]), OPOOL_OK);
    alloc_n(p, 2, h);
    CHECK(opool_alloc(p, NULL) == NULL);
    CHECK_EQ_U64(r.reports, 2);
    opool_destroy(p);
}

/* ---- growth ------------------------------------------------------------- */

TEST(grow_pool_starts_with_capacity_rounded_to_power_of_two) {
    opool *p = make_grow_pool(100, 1000);
    REQUIRE(p);
    CHECK_EQ_U64(opool_capacity(p), 128);
    opool_stats s = stats_of(p);
    CHECK_EQ_U64(s.capacity, 128);
    CHECK_EQ_U64(s.max_capacity, 1000);
    CHECK_EQ_U64(s.grows, 0);
    opool_destroy(p);

    p = make_grow_pool(100, 110); /* capped at max_capacity */
    REQUIRE(p);
    CHECK_EQ_U64(opool_capacity(p), 110);
    opool_destroy(p);

    p = make_grow_pool(64, 1000); /* already a power of two */
    REQUIRE(p);
    CHECK_EQ_U64(opool_capacity(p), 64);
    opool_destroy(p);
}

TEST(grow_adds_doubling_chunks_in_ascending_order_up_to_max) {
    opool *p = make_grow_pool(100, 1000);
    REQUIRE(p);
    static const uint32_t caps[] = {128, 256, 512, 1000};
    uint32_t next = 0;
    for (int c = 0; c < 4; c++) {
        while (next < caps[c]) {
            opool_handle h;
            REQUIRE(opool_alloc(p, &h) != NULL);
            CHECK_EQ_U64(h.bits, handle(G1, next).bits);
            next++;
        }
        CHECK_EQ_U64(opool_capacity(p), caps[c]);
        CHECK_EQ_U64(stats_of(p).grows, (uint64_t)c);
    }
    CHECK(opool_alloc(p, NULL) == NULL); /* at max_capacity: fails like FAIL */
    opool_stats s = stats_of(p);
    CHECK_EQ_U64(s.grows, 3);
    CHECK_EQ_U64(s.failed_allocs, 1);
    CHECK_EQ_U64(s.count, 1000);
    CHECK_EQ_U64(s.capacity, 1000);
    opool_destroy(p);
}

TEST(grow_from_capacity_one) {
    opool *p = make_grow_pool(1, 5);
    REQUIRE(p);
    CHECK_EQ_U64(opool_capacity(p), 1);
    static const uint32_t caps[] = {1, 2, 4, 4, 5};
    for (uint32_t k = 0; k < 5; k++) {
        opool_handle h;
        REQUIRE(opool_alloc(p, &h) != NULL);
        CHECK_EQ_U64(h.bits, handle(G1, k).bits);
        CHECK_EQ_U64(opool_capacity(p), caps[k]);
    }
    CHECK(opool_alloc(p, NULL) == NULL);
    CHECK_EQ_U64(stats_of(p).grows, 3);
    opool_destroy(p);
}

TEST(grow_keeps_existing_objects_in_place) {
    opool *p = make_grow_pool(3, 200);
    REQUIRE(p);
    opool_handle h[200];
    unsigned char *obj[200];
    for (int k = 0; k < 200; k++) {
        obj[k] = opool_alloc(p, &h[k]);
        REQUIRE(obj[k]);
        memset(obj[k], k, 16);
    }
    for (int k = 0; k < 200; k++) {
        CHECK_EQ_PTR(opool_get(p, h[k]), obj[k]);
        CHECK_EQ_U64(obj[k][0], (unsigned char)k);
        CHECK_EQ_U64(obj[k][15], (unsigned char)k);
    }
    opool_destroy(p);
}

TEST(grow_only_with_grow_policy) {
    opool_desc d = desc_of(8, 4);
    d.max_capacity = 64; /* FAIL: max_capacity is not a reason to grow */
    opool *p = create(&d);
    REQUIRE(p);
    CHECK_EQ_U64(opool_capacity(p), 4);
    opool_handle h[5];
    alloc_n(p, 5, h);
    CHECK(opool_handle_is_null(h[4]));
    opool_stats s = stats_of(p);
    CHECK_EQ_U64(s.max_capacity, 4);
    CHECK_EQ_U64(s.grows, 0);
    CHECK(opool_alloc_at(p, handle(G1, 10)) == NULL);
    opool_destroy(p);
}

TEST(grow_pool_without_room_to_grow_is_fixed) {
    opool_desc d = desc_of(8, 6);
    d.on_full = OPOOL_FULL_GROW; /* max_capacity 0 = capacity */
    opool *p = create(&d);
    REQUIRE(p);
    CHECK_EQ_U64(opool_capacity(p), 6);
    opool_handle h[7];
    alloc_n(p, 7, h);
    CHECK(opool_handle_is_null(h[6]));
    CHECK_EQ_U64(stats_of(p).max_capacity, 6);
    CHECK_EQ_U64(stats_of(p).grows, 0);
    opool_destroy(p);
}

TEST(grown_slots_come_after_freed_ones) {
    /* the new chunk goes to the bottom of the free stack */
    opool *p = make_grow_pool(2, 8);
    REQUIRE(p);
    opool_handle h[2];
    alloc_n(p, 2, h);
    CHECK(opool_alloc_at(p, handle(G1, 5)) != NULL); /* grows [2,4) and [4,8) */
    CHECK_EQ_U64(stats_of(p).grows, 2);
    CHECK_EQ_U64(opool_capacity(p), 8);
    CHECK_EQ_U64(opool_free(p, h[0]), OPOOL_OK);
    opool_handle n[6];
    alloc_n(p, 6, n);
    /* the stack was 2 3 4 5 6 7 (top first); taking 5 out moved the top, 2,
     * into 5's place, and the free put 0 on top: 0 3 4 2 6 7 */
    static const uint32_t order[] = {0, 3, 4, 2, 6, 7};
    for (int k = 0; k < 6; k++) CHECK_EQ_U64(opool_handle_index(n[k]), order[k]);
    CHECK_EQ_U64(opool_handle_generation(n[0]), G1 + 2);
    opool_destroy(p);
}

/* ---- eviction ----------------------------------------------------------- */

static opool *make_evict_pool(uint32_t capacity, recorder *r, uint32_t flags) {
    opool_desc d = recorded_desc(16, capacity, r);
    d.on_full = OPOOL_FULL_EVICT;
    d.evict = rec_evict;
    d.fini = rec_fini;
    d.flags |= flags;
    return create(&d);
}

/* An eviction inside the loop is a free of the victim: a victim the loop
 * has visited (the last entry) changes nothing, and the newborn is not
 * visited. */
TEST(loop_that_evicts_a_visited_victim_visits_each_once) {
    recorder r;
    opool *p = make_evict_pool(4, &r, 0);
    REQUIRE(p);
    for (uint32_t k = 0; k < 4; k++) *(uint32_t *)opool_alloc(p, NULL) = k;
    r.victim_position = 3; /* the last entry: visited first */
    char order[8] = {0};
    int n = 0;
    for (uint32_t i = opool_count(p); i-- > 0;) {
        uint32_t *v = opool_live_object(p, i);
        REQUIRE(v && n < 7);
        order[n++] = (char)('0' + *v);
        if (*v == 1) *(uint32_t *)opool_alloc(p, NULL) = 9; /* full: evicts 3 */
    }
    CHECK(strcmp(order, "3210") == 0);
    CHECK_EQ_U64(r.evicts, 1);
    opool_destroy(p);
}

TEST(evict_makes_victim_handle_stale) {
    recorder r;
    opool *p = make_evict_pool(3, &r, 0);
    REQUIRE(p);
    opool_handle h[3], n;
    alloc_n(p, 3, h);
    void *victim_obj = opool_get(p, h[0]);
    r.victim_position = 0;
    void *obj = opool_alloc(p, &n);
    CHECK(obj != NULL);
    CHECK_EQ_U64(r.evicts, 1);
    CHECK(!opool_valid(p, h[0]));
    CHECK_EQ_U64(opool_free(p, h[0]), OPOOL_ESTALE);
    CHECK_EQ_U64(n.bits, handle(G1 + 2, 0).bits); /* the victim's slot, next generation */
    CHECK_EQ_PTR(obj, victim_obj);
    CHECK_EQ_U64(r.finis, 1);
    CHECK_EQ_PTR(r.last_fini, victim_obj);
    opool_stats s = stats_of(p);
    CHECK_EQ_U64(s.evictions, 1);
    CHECK_EQ_U64(s.frees, 1);
    CHECK_EQ_U64(s.allocs, 4);
    CHECK_EQ_U64(s.count, 3);
    CHECK_EQ_U64(s.failed_allocs, 0);
    CHECK_EQ_U64(r.reports, 1); /* only the stale free */
    /* the victim's free moved the last entry to its place, and the alloc
     * that followed undid that: the new object has the victim's place */
    CHECK_EQ_U64(opool_live_handle(p, 0).bits, n.bits);
    CHECK_EQ_U64(opool_live_handle(p, 2).bits, h[2].bits);
    opool_destroy(p);
}

TEST(evict_is_not_called_while_there_is_room) {
    recorder r;
    opool *p = make_evict_pool(3, &r, 0);
    REQUIRE(p);
    opool_handle h[3];
    alloc_n(p, 3, h);
    CHECK_EQ_U64(r.evicts, 0);
    CHECK_EQ_U64(stats_of(p).evictions, 0);
    opool_destroy(p);
}

TEST(evict_returning_no_live_victim_fails_the_alloc) {
    recorder r;
    opool *p = make_evict_pool(2, &r, 0);
    REQUIRE(p);
    opool_handle h[2], out;
    alloc_n(p, 2, h);
    r.victim_position = -1;
    CHECK(opool_alloc(p, &out) == NULL);
    CHECK(opool_handle_is_null(out));
    CHECK_EQ_U64(r.evicts, 1);
    CHECK_EQ_U64(r.reports, 1);
    CHECK_EQ_U64(r.last_what, OPOOL_EFULL);
    CHECK(opool_alloc(p, NULL) == NULL);
    CHECK_EQ_U64(r.reports, 2); /* the episode's 2nd failure */
    opool_stats s = stats_of(p);
    CHECK_EQ_U64(s.failed_allocs, 2);
    CHECK_EQ_U64(s.evictions, 0);
    CHECK_EQ_U64(s.rejected_handles, 0);
    CHECK_EQ_U64(r.finis, 0);
    /* an eviction frees an object, leaving 1 of 2 live: it ends the episode */
    r.victim_position = 1;
    CHECK(opool_alloc(p, NULL) != NULL);
    r.victim_position = -1;
    CHECK(opool_alloc(p, NULL) == NULL);
    CHECK_EQ_U64(r.reports, 3);
    opool_destroy(p);
}

/* ---- alloc_at ----------------------------------------------------------- */

TEST(alloc_at_recreates_object_at_exact_handle) {
    recorder r;
    opool_desc d = recorded_desc(16, 8, &r);
    d.init = rec_init;
    d.flags |= OPOOL_ZERO;
    opool *p = create(&d);
    REQUIRE(p);
    opool_handle want = handle(0x2001, 5);
    void *obj = opool_alloc_at(p, want);
    REQUIRE(obj);
    CHECK_EQ_PTR(opool_get(p, want), obj);
    CHECK_EQ_PTR(opool_at(p, 5), obj);
    CHECK_EQ_U64(opool_handle_of(p, obj).bits, want.bits);
    CHECK_EQ_U64(opool_live_handle(p, 0).bits, want.bits);
    CHECK_EQ_U64(r.inits, 1);
    CHECK_EQ_U64(r.init_saw_zero, 1);
    opool_stats s = stats_of(p);
    CHECK_EQ_U64(s.allocs, 1);
    CHECK_EQ_U64(s.count, 1);
    CHECK_EQ_U64(s.high_water, 1);
    CHECK_EQ_U64(opool_free(p, want), OPOOL_OK);
    CHECK(opool_get(p, want) == NULL);
    opool_destroy(p);
}

TEST(alloc_at_puts_top_of_free_stack_in_the_slots_place) {
    opool *p = make_pool(8, 8);
    REQUIRE(p);
    CHECK(opool_alloc_at(p, handle(0x2001, 5)) != NULL);
    opool_handle h[8];
    alloc_n(p, 8, h);
    static const uint32_t order[] = {1, 2, 3, 4, 0, 6, 7};
    for (int k = 0; k < 7; k++) CHECK_EQ_U64(h[k].bits, handle(G1, order[k]).bits);
    CHECK(opool_handle_is_null(h[7]));
    opool_destroy(p);
}

TEST(alloc_at_refuses_a_live_slot) {
    opool *p = make_pool(8, 4);
    REQUIRE(p);
    opool_handle h;
    void *obj = opool_alloc(p, &h);
    opool_stats before = stats_of(p);
    CHECK(opool_alloc_at(p, h) == NULL);
    CHECK(opool_alloc_at(p, handle(0x7777, 0)) == NULL);
    opool_stats after = stats_of(p);
    CHECK(memcmp(&before, &after, sizeof before) == 0);
    CHECK_EQ_PTR(opool_get(p, h), obj);
    opool_destroy(p);
}

TEST(alloc_at_refuses_even_generation_and_out_of_range) {
    opool *p = make_pool(8, 4);
    REQUIRE(p);
    CHECK(opool_alloc_at(p, handle(0x2000, 1)) == NULL);
    CHECK(opool_alloc_at(p, handle(0, 1)) == NULL);
    CHECK(opool_alloc_at(p, handle(0x2001, 4)) == NULL);
    CHECK(opool_alloc_at(p, handle(0x2001, UINT32_MAX)) == NULL);
    opool_handle ones = {UINT64_MAX};
    CHECK(opool_alloc_at(p, ones) == NULL);
    opool_stats s = stats_of(p);
    CHECK_EQ_U64(s.allocs, 0);
    CHECK_EQ_U64(s.count, 0);
    CHECK_EQ_U64(s.failed_allocs, 0);
    opool_handle h;
    CHECK(opool_alloc(p, &h) != NULL);
    CHECK_EQ_U64(h.bits, handle(G1, 0).bits);
    opool_destroy(p);
}

TEST(alloc_at_revalidates_a_freed_handle) {
    opool *p = make_pool(8, 4);
    REQUIRE(p);
    opool_handle h[2];
    alloc_n(p, 2, h);
    void *obj = opool_get(p, h[1]);
    CHECK_EQ_U64(opool_free(p, h[1]), OPOOL_OK);
    CHECK_EQ_PTR(opool_alloc_at(p, h[1]), obj);
    CHECK(opool_valid(p, h[1]));
    CHECK_EQ_U64(opool_count(p), 2);
    opool_destroy(p);
}

TEST(alloc_at_grows_the_pool_to_reach_the_index) {
    opool *p = make_grow_pool(4, 64);
    REQUIRE(p);
    CHECK(opool_alloc_at(p, handle(0x31, 64)) == NULL); /* beyond max_capacity */
    CHECK_EQ_U64(opool_capacity(p), 4);
    void *obj = opool_alloc_at(p, handle(0x31, 40));
    CHECK(obj != NULL);
    CHECK_EQ_PTR(opool_get(p, handle(0x31, 40)), obj);
    opool_stats s = stats_of(p);
    CHECK_EQ_U64(s.grows, 4); /* [4,8) [8,16) [16,32) [32,64) */
    CHECK_EQ_U64(s.capacity, 64);
    CHECK_EQ_U64(s.count, 1);
    opool_handle h;
    CHECK(opool_alloc(p, &h) != NULL);
    CHECK_EQ_U64(h.bits, handle(G1, 1).bits); /* 40's place in the stack took the top, 0 */
    opool_destroy(p);
}

TEST(alloc_at_of_slot_in_ungrown_chunk_is_not_a_stale_handle_use) {
    opool *p = make_grow_pool(4, 64);
    REQUIRE(p);
    /* no slot record yet for index 40: never issued */
    CHECK_EQ_U64(opool_free(p, handle(G1, 40)), OPOOL_EINVAL);
    CHECK(opool_get(p, handle(G1, 40)) == NULL);
    CHECK(opool_at(p, 40) == NULL);
    opool_destroy(p);
}

/* ---- retirement --------------------------------------------------------- */

static opool *make_retire_pool(uint32_t capacity, uint32_t flags) {
    opool_desc d = desc_of(16, capacity);
    d.flags |= flags;
    return create(&d);
}

TEST(retire_on_wrap_retires_slot) {
    opool *p = make_retire_pool(4, OPOOL_RETIRE_ON_WRAP);
    REQUIRE(p);
    opool_handle last = handle(SALT - 1, 2); /* the generation before gen0 */
    CHECK(opool_alloc_at(p, last) != NULL);
    CHECK_EQ_U64(opool_free(p, last), OPOOL_OK);
    opool_stats s = stats_of(p);
    CHECK_EQ_U64(s.retired, 1);
    CHECK_EQ_U64(s.capacity, 3);
    CHECK_EQ_U64(opool_capacity(p), 3);
    CHECK_EQ_U64(s.frees, 1);
    opool_handle h[4];
    alloc_n(p, 4, h);
    CHECK_EQ_U64(h[0].bits, handle(G1, 3).bits);
    CHECK_EQ_U64(h[1].bits, handle(G1, 1).bits);
    CHECK_EQ_U64(h[2].bits, handle(G1, 0).bits);
    CHECK(opool_handle_is_null(h[3]));
    opool_destroy(p);
}

TEST(retired_slot_is_never_reused) {
    opool *p = make_retire_pool(2, OPOOL_RETIRE_ON_WRAP);
    REQUIRE(p);
    CHECK(opool_alloc_at(p, handle(SALT - 1, 0)) != NULL);
    CHECK_EQ_U64(opool_free(p, handle(SALT - 1, 0)), OPOOL_OK);
    CHECK(opool_alloc_at(p, handle(G1, 0)) == NULL);
    CHECK(opool_alloc_at(p, handle(SALT - 1, 0)) == NULL);
    CHECK(opool_at(p, 0) == NULL);
    for (int round = 0; round < 5; round++) {
        opool_handle h;
        CHECK(opool_alloc(p, &h) != NULL);
        CHECK_EQ_U64(opool_handle_index(h), 1);
        CHECK(opool_alloc(p, NULL) == NULL);
        CHECK_EQ_U64(opool_free(p, h), OPOOL_OK);
    }
    opool_clear(p);
    CHECK_EQ_U64(opool_capacity(p), 1);
    CHECK(opool_alloc_at(p, handle(G1, 0)) == NULL);
    CHECK_EQ_U64(opool_free(p, handle(SALT - 1, 0)), OPOOL_ESTALE);
    opool_destroy(p);
}

TEST(without_retire_generation_wraps_and_slot_is_reused) {
    opool *p = make_retire_pool(4, 0);
    REQUIRE(p);
    CHECK(opool_alloc_at(p, handle(SALT - 1, 2)) != NULL);
    CHECK_EQ_U64(opool_free(p, handle(SALT - 1, 2)), OPOOL_OK);
    CHECK_EQ_U64(stats_of(p).retired, 0);
    CHECK_EQ_U64(opool_capacity(p), 4);
    opool_handle h;
    CHECK(opool_alloc(p, &h) != NULL);
    CHECK_EQ_U64(h.bits, handle(G1, 2).bits); /* the very first handle of slot 2, again */
    opool_destroy(p);
}

TEST(retire_on_wrap_by_clear) {
    opool *p = make_retire_pool(4, OPOOL_RETIRE_ON_WRAP);
    REQUIRE(p);
    opool_handle h[4];
    CHECK(opool_alloc_at(p, handle(SALT - 1, 1)) != NULL);
    CHECK(opool_alloc(p, NULL) != NULL);
    opool_clear(p);
    opool_stats s = stats_of(p);
    CHECK_EQ_U64(s.retired, 1);
    CHECK_EQ_U64(s.capacity, 3);
    CHECK_EQ_U64(s.frees, 2);
    alloc_n(p, 4, h);
    CHECK_EQ_U64(opool_handle_index(h[0]), 0);
    CHECK_EQ_U64(opool_handle_index(h[1]), 2);
    CHECK_EQ_U64(opool_handle_index(h[2]), 3);
    CHECK(opool_handle_is_null(h[3]));
    opool_destroy(p);
}

TEST(retire_on_wrap_by_eviction) {
    recorder r;
    opool *p = make_evict_pool(2, &r, OPOOL_RETIRE_ON_WRAP);
    REQUIRE(p);
    CHECK(opool_alloc_at(p, handle(SALT - 1, 0)) != NULL);
    CHECK(opool_alloc(p, NULL) != NULL);
    r.victim_position = 0; /* slot 0: its free retires it, so no slot is free */
    CHECK(opool_alloc(p, NULL) == NULL);
    opool_stats s = stats_of(p);
    CHECK_EQ_U64(s.evictions, 1);
    CHECK_EQ_U64(s.retired, 1);
    CHECK_EQ_U64(s.failed_allocs, 1);
    CHECK_EQ_U64(s.capacity, 1);
    CHECK_EQ_U64(s.count, 1);
    CHECK_EQ_U64(r.finis, 1);
    CHECK_EQ_U64(r.last_what, OPOOL_EFULL);
    opool_destroy(p);
}

TEST(retire_with_salt_zero_generation) {
    opool_desc d = desc_of(8, 2);
    d.salt = 1; /* gen0 = 0: the last generation is 0xFFFFFFFF */
    d.flags |= OPOOL_RETIRE_ON_WRAP;
    opool *p = create(&d);
    REQUIRE(p);
    opool_handle h;
    CHECK(opool_alloc(p, &h) != NULL);
    CHECK_EQ_U64(h.bits, handle(1, 0).bits);
    CHECK(opool_alloc_at(p, handle(0xFFFFFFFFu, 1)) != NULL);
    CHECK_EQ_U64(opool_free(p, handle(0xFFFFFFFFu, 1)), OPOOL_OK);
    CHECK_EQ_U64(stats_of(p).retired, 1);
    CHECK_EQ_U64(opool_capacity(p), 1);
    opool_destroy(p);
}

/* ---- shrink ------------------------------------------------------------- */

TEST(shrink_releases_empty_grown_chunks) {
    counting c;
    opool_desc d = desc_of(16, 4);
    d.on_full = OPOOL_FULL_GROW;
    d.max_capacity = 32;
    d.allocator = counting_allocator(&c);
    opool *p = create(&d);
    REQUIRE(p);
    opool_handle h[32];
    alloc_n(p, 32, h); /* chunks [0,4) [4,8) [8,16) [16,32) */
    CHECK_EQ_U64(opool_capacity(p), 32);
    for (int k = 4; k < 8; k++) CHECK_EQ_U64(opool_free(p, h[k]), OPOOL_OK);
    for (int k = 16; k < 32; k++) CHECK_EQ_U64(opool_free(p, h[k]), OPOOL_OK);
    CHECK_EQ_U64(opool_free(p, h[0]), OPOOL_OK); /* chunk 0 is never released */
    size_t bytes_before = c.bytes;
    size_t stat_bytes_before = stats_of(p).bytes;
    CHECK_EQ_U64(opool_shrink(p), 20);
    CHECK_EQ_U64(opool_capacity(p), 12);
    CHECK(c.bytes < bytes_before);
    CHECK(stats_of(p).bytes < stat_bytes_before);
    CHECK_EQ_U64(opool_count(p), 11);
    for (int k = 1; k < 16; k++) CHECK(opool_valid(p, h[k]) == (k < 4 || k >= 8));
    CHECK_EQ_U64(opool_shrink(p), 0);
    /* the free stack keeps only slot 0 */
    opool_handle n;
    CHECK(opool_alloc(p, &n) != NULL);
    CHECK_EQ_U64(n.bits, handle(G1 + 2, 0).bits);
    /* then growth brings back the lowest missing chunk, in ascending order */
    for (uint32_t k = 4; k < 8; k++) {
        CHECK(opool_alloc(p, &n) != NULL);
        CHECK_EQ_U64(n.bits, handle(G1 + 2, k).bits);
    }
    CHECK_EQ_U64(opool_capacity(p), 16);
    CHECK_EQ_U64(stats_of(p).grows, 4);
    opool_destroy(p);
    CHECK_EQ_U64(c.blocks, 0);
    CHECK_EQ_U64(c.bytes, 0);
    CHECK_EQ_U64(c.size_mismatches, 0);
}

TEST(shrink_keeps_chunks_with_live_objects) {
    opool *p = make_grow_pool(2, 16);
    REQUIRE(p);
    opool_handle h[16];
    alloc_n(p, 16, h); /* [0,2) [2,4) [4,8) [8,16) */
    for (int k = 2; k < 16; k++)
        if (k != 5 && k != 15) CHECK_EQ_U64(opool_free(p, h[k]), OPOOL_OK);
    CHECK_EQ_U64(opool_shrink(p), 2);
    CHECK_EQ_U64(opool_capacity(p), 14);
    CHECK(opool_valid(p, h[5]) && opool_valid(p, h[15]));
    opool_destroy(p);
}

TEST(shrink_of_fixed_pool_releases_nothing) {
    opool *p = make_pool(8, 16);
    REQUIRE(p);
    CHECK_EQ_U64(opool_shrink(p), 0);
    CHECK_EQ_U64(opool_capacity(p), 16);
    opool_destroy(p);
    p = make_grow_pool(4, 64);
    REQUIRE(p);
    CHECK_EQ_U64(opool_shrink(p), 0); /* nothing grown yet */
    opool_destroy(p);
}

TEST(shrink_never_revalidates_stale_handles) {
    opool *p = make_grow_pool(2, 8);
    REQUIRE(p);
    opool_handle h[8], n[8];
    alloc_n(p, 8, h);
    for (int k = 7; k >= 2; k--) CHECK_EQ_U64(opool_free(p, h[k]), OPOOL_OK);
    CHECK_EQ_U64(opool_shrink(p), 6);
    for (int k = 2; k < 8; k++) {
        CHECK(!opool_valid(p, h[k]));
        CHECK_EQ_U64(opool_free(p, h[k]), OPOOL_ESTALE); /* records kept: stale, not invalid */
    }
    alloc_n(p, 6, n); /* regrow: the slots come back with their generations */
    for (int k = 0; k < 6; k++) {
        CHECK_EQ_U64(n[k].bits, handle(G1 + 2, (uint32_t)k + 2).bits);
        CHECK(!opool_valid(p, h[k + 2]));
    }
    opool_destroy(p);
}

TEST(shrink_keeps_retired_slots_retired) {
    opool_desc d = desc_of(8, 2);
    d.on_full = OPOOL_FULL_GROW;
    d.max_capacity = 4;
    d.flags |= OPOOL_RETIRE_ON_WRAP;
    opool *p = create(&d);
    REQUIRE(p);
    CHECK(opool_alloc_at(p, handle(SALT - 1, 3)) != NULL); /* grows [2,4) */
    CHECK_EQ_U64(opool_free(p, handle(SALT - 1, 3)), OPOOL_OK);
    CHECK_EQ_U64(opool_capacity(p), 3);
    CHECK_EQ_U64(opool_shrink(p), 1); /* slot 2; slot 3 was retired already */
    CHECK_EQ_U64(opool_capacity(p), 2);
    CHECK(opool_alloc_at(p, handle(G1, 3)) == NULL);
    CHECK_EQ_U64(stats_of(p).grows, 1);
    opool_handle h[4];
    alloc_n(p, 4, h);
    CHECK_EQ_U64(opool_handle_index(h[2]), 2);
    CHECK(opool_handle_is_null(h[3]));
    CHECK_EQ_U64(opool_capacity(p), 3);
    CHECK_EQ_U64(stats_of(p).retired, 1);
    opool_destroy(p);
}

TEST(growth_passes_over_a_chunk_whose_slots_are_all_retired) {
    opool_desc d = desc_of(8, 1);
    d.on_full = OPOOL_FULL_GROW;
    d.max_capacity = 4; /* chunks [0,1) [1,2) [2,4) */
    d.flags |= OPOOL_RETIRE_ON_WRAP;
    opool *p = create(&d);
    REQUIRE(p);
    CHECK(opool_alloc_at(p, handle(SALT - 1, 1)) != NULL);
    CHECK_EQ_U64(opool_free(p, handle(SALT - 1, 1)), OPOOL_OK); /* chunk [1,2) all retired */
    CHECK_EQ_U64(opool_capacity(p), 1);
    CHECK_EQ_U64(opool_shrink(p), 0); /* no usable slot to give back */
    opool_handle h[4];
    alloc_n(p, 4, h);
    CHECK_EQ_U64(h[0].bits, handle(G1, 0).bits);
    CHECK_EQ_U64(h[1].bits, handle(G1, 2).bits);
    CHECK_EQ_U64(h[2].bits, handle(G1, 3).bits);
    CHECK(opool_handle_is_null(h[3]));
    CHECK_EQ_U64(opool_capacity(p), 3);
    CHECK_EQ_U64(stats_of(p).retired, 1);
    opool_destroy(p);
}

/* ---- statistics --------------------------------------------------------- */

TEST(stats_of_fresh_pool) {
    opool *p = make_pool(24, 10);
    REQUIRE(p);
    opool_stats s = stats_of(p);
    CHECK_EQ_U64(s.version, OPOOL_STATS_VERSION);
    CHECK_EQ_U64(s.capacity, 10);
    CHECK_EQ_U64(s.max_capacity, 10);
    CHECK_EQ_U64(s.count, 0);
    CHECK_EQ_U64(s.high_water, 0);
    CHECK_EQ_U64(s.retired, 0);
    CHECK_EQ_U64(s.allocs, 0);
    CHECK_EQ_U64(s.frees, 0);
    CHECK_EQ_U64(s.failed_allocs, 0);
    CHECK_EQ_U64(s.rejected_handles, 0);
    CHECK_EQ_U64(s.evictions, 0);
    CHECK_EQ_U64(s.grows, 0);
    CHECK(s.bytes >= 24 * 10);
    opool_destroy(p);
}

TEST(stats_count_allocs_frees_and_high_water) {
    opool *p = make_pool(8, 10);
    REQUIRE(p);
    opool_handle h[6];
    alloc_n(p, 5, h);
    for (int k = 0; k < 3; k++) CHECK_EQ_U64(opool_free(p, h[k]), OPOOL_OK);
    CHECK(opool_alloc(p, NULL) != NULL);
    CHECK(opool_alloc_at(p, handle(0x9001, 9)) != NULL);
    opool_stats s = stats_of(p);
    CHECK_EQ_U64(s.allocs, 7);
    CHECK_EQ_U64(s.frees, 3);
    CHECK_EQ_U64(s.count, 4);
    CHECK_EQ_U64(s.high_water, 5);
    CHECK_EQ_U64(opool_count(p), 4);
    alloc_n(p, 2, h);
    CHECK_EQ_U64(stats_of(p).high_water, 6);
    opool_destroy(p);
}

TEST(get_stats_of_null_pool_is_zero) {
    opool_stats s;
    memset(&s, 0xFF, sizeof s);
    opool_get_stats(NULL, &s);
    opool_stats zero;
    memset(&zero, 0, sizeof zero);
    CHECK(memcmp(&s, &zero, sizeof s) == 0);
    opool *p = make_pool(8, 2);
    REQUIRE(p);
    opool_get_stats(p, NULL); /* no crash */
    opool_destroy(p);
}

/* ---- pools without a live list (OPOOL_NO_LIVE_LIST) ----------------------- */

/* 8 bytes of bookkeeping a slot, not 12: the roster's 4 are gone, at
 * creation and in every growth. */
TEST(pool_without_a_live_list_keeps_eight_bytes_a_slot) {
    opool_desc d = desc_of(16, 1000), n = d;
    n.flags |= OPOOL_NO_LIVE_LIST;
    CHECK_EQ_U64(opool_required_bytes(&d) - opool_required_bytes(&n), 4 * 1000);
    d.on_full = n.on_full = OPOOL_FULL_GROW;
    d.capacity = n.capacity = 64;
    d.max_capacity = n.max_capacity = 1024;
    opool *a = create(&d), *b = create(&n);
    REQUIRE(a && b);
    for (int k = 0; k < 1000; k++) CHECK(opool_alloc(a, NULL) && opool_alloc(b, NULL));
    CHECK_EQ_U64(stats_of(a).capacity, 1024);
    /* the creation block's arrays (64 slots) and the grown ones (1024) */
    CHECK_EQ_U64(stats_of(a).bytes - stats_of(b).bytes, 4 * (64 + 1024));
    opool_destroy(a);
    opool_destroy(b);
}

/* The same handles, statuses and lookups as a pool with a live list, with
 * nothing to iterate. */
TEST(pool_without_a_live_list_hands_out_and_checks_handles_as_one_with) {
    opool_desc d = desc_of(16, 16), n = d;
    n.flags |= OPOOL_NO_LIVE_LIST;
    opool *a = create(&d), *b = create(&n);
    REQUIRE(a && b);
    opool_handle ha[16], hb[16];
    alloc_n(a, 10, ha);
    alloc_n(b, 10, hb);
    for (int k = 0; k < 10; k++) CHECK_EQ_U64(hb[k].bits, handle(G1, (uint32_t)k).bits);
    static const int order[] = {3, 7, 5, 0, 9};
    for (int k = 0; k < 5; k++) {
        CHECK_EQ_U64(opool_free(a, ha[order[k]]), OPOOL_OK);
        CHECK_EQ_U64(opool_free(b, hb[order[k]]), OPOOL_OK);
        CHECK_EQ_U64(opool_free(b, hb[order[k]]), OPOOL_ESTALE);
        CHECK(opool_get(b, hb[order[k]]) == NULL);
    }
    CHECK_EQ_U64(opool_free(b, OPOOL_NULL), OPOOL_EINVAL);
    CHECK_EQ_U64(opool_free(b, handle(G1, 16)), OPOOL_EINVAL);
    alloc_n(a, 8, ha + 10 - 2); /* LIFO: 9, 0, 5, 7, 3, then 10, 11, 12 */
    alloc_n(b, 8, hb + 10 - 2);
    for (int k = 8; k < 16; k++) CHECK_EQ_U64(hb[k].bits, ha[k].bits);
    CHECK_EQ_U64(opool_handle_index(hb[8]), 9);
    CHECK_EQ_U64(opool_handle_index(hb[12]), 3);
    CHECK_EQ_U64(opool_count(b), 13);
    for (uint32_t i = 0; i < 16; i++) {
        CHECK_EQ_U64(opool_handle_at(b, i).bits, opool_handle_at(a, i).bits);
        CHECK(opool_live_object(b, i) == NULL);
        CHECK(opool_handle_is_null(opool_live_handle(b, i)));
    }
    opool_clear(b); /* a fresh pool's order again */
    CHECK_EQ_U64(opool_count(b), 0);
    opool_handle h;
    CHECK(opool_alloc(b, &h) != NULL);
    CHECK_EQ_U64(opool_handle_index(h), 0);
    opool_destroy(a);
    opool_destroy(b);
}

/* alloc_at takes its slot out of the free chain wherever it is; the others
 * keep their order. A retired slot leaves the chain the same way. */
TEST(pool_without_a_live_list_claims_and_retires_anywhere_in_its_chain) {
    opool *p = make_retire_pool(8, OPOOL_NO_LIVE_LIST);
    REQUIRE(p);
    opool_handle h[8];
    alloc_n(p, 8, h);
    for (int k = 0; k < 8; k++) CHECK_EQ_U64(opool_free(p, h[k]), OPOOL_OK); /* chain 7..0 */
    opool_handle want = handle(G1 + 2, 3);
    CHECK(opool_alloc_at(p, want) != NULL);
    CHECK(opool_alloc_at(p, want) == NULL); /* live now */
    CHECK_EQ_U64(opool_free(p, want), OPOOL_OK);
    CHECK(opool_alloc_at(p, handle(G1 + 4, 3)) != NULL); /* from the chain's top */
    static const uint32_t next[] = {7, 6, 5, 4, 2, 1, 0};
    for (int k = 0; k < 7; k++) {
        opool_handle x;
        CHECK(opool_alloc(p, &x) != NULL);
        CHECK_EQ_U64(opool_handle_index(x), next[k]);
    }
    CHECK(opool_alloc(p, NULL) == NULL);
    opool_destroy(p);

    p = make_retire_pool(4, OPOOL_RETIRE_ON_WRAP | OPOOL_NO_LIVE_LIST);
    REQUIRE(p);
    opool_handle last = handle(SALT - 1, 2); /* the generation before gen0 */
    CHECK(opool_alloc_at(p, last) != NULL);
    CHECK_EQ_U64(opool_free(p, last), OPOOL_OK);
    CHECK_EQ_U64(stats_of(p).retired, 1);
    CHECK_EQ_U64(opool_capacity(p), 3);
    opool_handle g[4];
    alloc_n(p, 4, g);
    CHECK_EQ_U64(g[0].bits, handle(G1, 0).bits); /* the chain as it was, 2 cut out */
    CHECK_EQ_U64(g[1].bits, handle(G1, 1).bits);
    CHECK_EQ_U64(g[2].bits, handle(G1, 3).bits);
    CHECK(opool_handle_is_null(g[3]));
    opool_destroy(p);
}

/* Growth appends to the chain's end; shrink takes a released chunk's slots
 * out of it, keeping the others' order; growing again brings them back. */
TEST(pool_without_a_live_list_grows_and_shrinks) {
    opool_desc d = desc_of(16, 4);
    d.flags |= OPOOL_NO_LIVE_LIST;
    d.on_full = OPOOL_FULL_GROW;
    d.max_capacity = 16;
    opool *p = create(&d);
    REQUIRE(p);
    opool_handle h[16];
    alloc_n(p, 16, h);
    for (uint32_t k = 0; k < 16; k++) CHECK_EQ_U64(opool_handle_index(h[k]), k);
    CHECK(opool_alloc(p, NULL) == NULL);
    for (int k = 15; k >= 1; k--) CHECK_EQ_U64(opool_free(p, h[k]), OPOOL_OK); /* 1..15 */
    CHECK_EQ_U64(opool_shrink(p), 12); /* chunks [4, 8) and [8, 16) */
    CHECK_EQ_U64(opool_capacity(p), 4);
    opool_handle x[4];
    alloc_n(p, 4, x); /* 1, 2, 3, then growth: 4 */
    CHECK_EQ_U64(opool_handle_index(x[0]), 1);
    CHECK_EQ_U64(opool_handle_index(x[2]), 3);
    CHECK_EQ_U64(opool_handle_index(x[3]), 4);
    CHECK_EQ_U64(stats_of(p).capacity, 8);
    for (int k = 0; k < 4; k++) CHECK_EQ_U64(opool_free(p, x[k]), OPOOL_OK);
    CHECK_EQ_U64(opool_free(p, h[0]), OPOOL_OK);
    opool_destroy(p);
}

/* ---- creation ----------------------------------------------------------- */

static void check_create_rejects(const opool_desc *d, int line) {
    opool *p = (opool *)(uintptr_t)1;
    opool_status s = opool_create(&p, d);
    if (s != OPOOL_EINVAL || p != NULL) {
        test__fail_at(__FILE__, line, "opool_create gives OPOOL_EINVAL and *out NULL", s,
                      (uint64_t)(uintptr_t)p, 1);
        if (s == OPOOL_OK) opool_destroy(p);
    }
    if (d) CHECK_EQ_U64(opool_required_bytes(d), 0);
}
#define CHECK_CREATE_REJECTS(d) check_create_rejects(d, __LINE__)

TEST(create_rejects_null_out_and_null_desc) {
    opool_desc d = desc_of(8, 4);
    CHECK_EQ_U64(opool_create(NULL, &d), OPOOL_EINVAL);
    CHECK_CREATE_REJECTS(NULL);
    CHECK_EQ_U64(opool_required_bytes(NULL), 0);
}

TEST(create_rejects_zero_capacity) {
    opool_desc d = desc_of(8, 0);
    CHECK_CREATE_REJECTS(&d);
    d = desc_of(0, 0); /* object_size 0 alone is an id-only pool (test_indices.c) */
    CHECK_CREATE_REJECTS(&d);
    d = desc_of(8, 0);
    CHECK_CREATE_REJECTS(&d);
    d.max_capacity = 10;
    d.on_full = OPOOL_FULL_GROW;
    CHECK_CREATE_REJECTS(&d);
}

TEST(create_rejects_non_power_of_two_alignment) {
    static const size_t bad[] = {3, 6, 12, 24, 100, 4095, 4097};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        opool_desc d = desc_of(8, 4);
        d.object_align = bad[k];
        CHECK_CREATE_REJECTS(&d);
    }
}

TEST(create_rejects_alignment_above_4096) {
    opool_desc d = desc_of(8, 4);
    d.object_align = 8192;
    CHECK_CREATE_REJECTS(&d);
    d.object_align = (size_t)1 << (sizeof(size_t) * 8 - 1);
    CHECK_CREATE_REJECTS(&d);
    d.object_align = 4096;
    opool *p = create(&d);
    CHECK(p != NULL);
    opool_destroy(p);
}

TEST(create_rejects_max_capacity_below_capacity) {
    opool_desc d = desc_of(8, 10);
    d.on_full = OPOOL_FULL_GROW;
    d.max_capacity = 9;
    CHECK_CREATE_REJECTS(&d);
    d.on_full = OPOOL_FULL_FAIL;
    CHECK_CREATE_REJECTS(&d);
}

TEST(create_rejects_capacity_above_the_maximum) {
    opool_desc d = desc_of(1, UINT32_MAX);
    CHECK_CREATE_REJECTS(&d);
    d = desc_of(1, OPOOL_MAX_CAPACITY + 1);
    CHECK_CREATE_REJECTS(&d);
    d = desc_of(1, 4);
    d.on_full = OPOOL_FULL_GROW;
    d.max_capacity = OPOOL_MAX_CAPACITY + 1;
    CHECK_CREATE_REJECTS(&d);
    d = desc_of(1, 4);
    d.on_full = OPOOL_FULL_GROW;
    d.max_capacity = UINT32_MAX;
    CHECK_CREATE_REJECTS(&d);
}

TEST(create_rejects_unknown_flags) {
    for (uint32_t bit = 0; bit < 32; bit++) {
        if ((1u << bit) & OPOOL__FLAGS_ALL) continue;
        opool_desc d = desc_of(8, 4);
        d.flags = OPOOL_ZERO | (1u << bit);
        CHECK_CREATE_REJECTS(&d);
    }
}

TEST(fixed_refuses_growth) {
    opool_desc d = desc_of(8, 4);
    d.flags |= OPOOL_FIXED;
    d.on_full = OPOOL_FULL_GROW;
    d.max_capacity = 64;
    CHECK_CREATE_REJECTS(&d);
}

TEST(fixed_pool_fails_when_full_and_never_grows) {
    opool_desc d = desc_of(8, 4);
    d.flags |= OPOOL_FIXED | OPOOL_NO_LIVE_LIST;
    opool *p = NULL;
    CHECK_EQ_U64(opool_create(&p, &d), OPOOL_OK);
    opool_handle h[4];
    for (int k = 0; k < 4; k++) CHECK(opool_alloc(p, &h[k]) != NULL);
    CHECK(opool_alloc(p, NULL) == NULL);
    CHECK_EQ_U64(opool_capacity(p), 4);
    CHECK_EQ_U64(opool_free(p, h[2]), OPOOL_OK);
    CHECK_EQ_U64(opool_free(p, h[2]), OPOOL_ESTALE);
    CHECK(opool_alloc(p, NULL) != NULL);
    opool_clear(p);
    opool_destroy(p);
}

TEST(create_rejects_unknown_policy) {
    opool_desc d = desc_of(8, 4);
    d.on_full = (opool_full_policy)3;
    CHECK_CREATE_REJECTS(&d);
    d.on_full = (opool_full_policy)-1;
    CHECK_CREATE_REJECTS(&d);
}

TEST(create_rejects_evict_without_callback) {
    opool_desc d = desc_of(8, 4);
    d.on_full = OPOOL_FULL_EVICT;
    CHECK_CREATE_REJECTS(&d);
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

static bool noop_save(const void *obj, opool_write_fn write, void *wctx, void *user) {
    (void)user;
    return write(wctx, obj, 1) == 1;
}

static bool noop_load(void *obj, const void *data, size_t size, void *user) {
    (void)obj, (void)data, (void)user;
    return size == 1;
}

TEST(create_rejects_save_object_without_load_object) {
    opool_desc d = desc_of(8, 4);
    d.save_object = noop_save;
    CHECK_CREATE_REJECTS(&d);
    d.save_object = NULL;
    d.load_object = noop_load;
    CHECK_CREATE_REJECTS(&d);
    d.save_object = noop_save;
    opool *p = create(&d);
    CHECK(p != NULL);
    opool_destroy(p);
}

TEST(create_rejects_overflowing_sizes) {
    opool_desc d = desc_of(SIZE_MAX / 2, 4);
    CHECK_CREATE_REJECTS(&d);
    d = desc_of(SIZE_MAX, 1);
    CHECK_CREATE_REJECTS(&d);
    d = desc_of(SIZE_MAX - 2, 1);
    d.object_align = 16; /* rounding the stride up overflows */
    CHECK_CREATE_REJECTS(&d);
    d = desc_of(SIZE_MAX / 8, 1);
    d.on_full = OPOOL_FULL_GROW;
    d.max_capacity = 100; /* max_capacity * stride overflows */
    CHECK_CREATE_REJECTS(&d);
    d = desc_of(SIZE_MAX / 0x10000, 0x20000);
    CHECK_CREATE_REJECTS(&d);
}

/* The first chunk's slot arrays count too: 12 bytes a slot, which a fixed
 * pool of 400M ids (or small objects) cannot address on a 32-bit machine (a
 * wrapped size once gave it a small block). A growing pool is refused
 * nothing for its limit: each growth checks its own arrays (test_faults).
 * On 64 bits the fixed pools are valid and need at least their arrays. */
TEST(create_rejects_slot_arrays_beyond_the_address_space) {
    opool_desc fixed = desc_of(0, 400000000u), small = desc_of(4, 400000000u);
    opool_desc grows = desc_of(0, 16);
    grows.on_full = OPOOL_FULL_GROW;
    grows.max_capacity = 400000000u;
    CHECK(opool_required_bytes(&grows) > 0); /* the first chunk only */
    if (SIZE_MAX <= UINT32_MAX) {
        CHECK_CREATE_REJECTS(&fixed);
        CHECK_CREATE_REJECTS(&small);
    } else {
        CHECK((uint64_t)opool_required_bytes(&fixed) >= 12 * (uint64_t)400000000u);
        CHECK((uint64_t)opool_required_bytes(&small) >= 16 * (uint64_t)400000000u);
    }
}

TEST(required_bytes_covers_the_pool) {
    opool_desc d = desc_of(32, 100);
    size_t n = opool_required_bytes(&d);
    CHECK(n >= 32 * 100 + 12 * 100);
    d.object_align = 4096;
    CHECK(opool_required_bytes(&d) >= 4096 * 100);
}

TEST(create_in_makes_no_allocation) {
    counting c;
    opool_desc d = desc_of(24, 10);
    d.allocator = counting_allocator(&c);
    size_t n = opool_required_bytes(&d);
    REQUIRE(n > 0);
    void *buf = malloc(n);
    REQUIRE(buf);
    opool *p = NULL;
    CHECK_EQ_U64(opool_create_in(&p, buf, n, &d), OPOOL_OK);
    REQUIRE(p);
    opool_handle h[11];
    alloc_n(p, 11, h);
    CHECK(opool_handle_is_null(h[10]));
    for (int k = 0; k < 10; k++) {
        unsigned char *obj = opool_get(p, h[k]);
        REQUIRE(obj);
        CHECK(obj >= (unsigned char *)buf && obj + 24 <= (unsigned char *)buf + n);
        CHECK_EQ_U64(opool_free(p, h[k]), OPOOL_OK);
    }
    opool_clear(p);
    CHECK_EQ_U64(opool_shrink(p), 0);
    opool_destroy(p);
    CHECK_EQ_U64(c.calls, 0);
    free(buf);
}

/* Bytes of buf[0, n) that are no longer the byte b. */
static size_t bytes_changed(const unsigned char *buf, size_t n, unsigned char b) {
    size_t changed = 0;
    for (size_t k = 0; k < n; k++) changed += buf[k] != b;
    return changed;
}

/* A pool that never grows writes no slot record at creation: its slots are
 * made as its high water rises. The buffer starts as 0x01 bytes, so a record
 * read before it is written would hold the odd (live) generation 0x01010101:
 * a forged handle with it must still be rejected. */
TEST(a_fixed_pool_makes_its_slots_as_its_high_water_rises) {
    enum { CAP = 100000 };
    const uint32_t junk = 0x01010101u;
    opool_desc d = desc_of(0, CAP); /* id-only: the buffer is the bookkeeping */
    size_t n = opool_required_bytes(&d);
    REQUIRE(n >= (size_t)CAP * 12);
    unsigned char *buf = malloc(n);
    REQUIRE(buf);
    memset(buf, 0x01, n);
    opool *p = NULL;
    CHECK_EQ_U64(opool_create_in(&p, buf, n, &d), OPOOL_OK);
    REQUIRE(p);
    size_t at_create = bytes_changed(buf, n, 0x01);
    CHECK(at_create < 4096); /* the pool's own fields: no 12 bytes a slot */
    CHECK_EQ_U64(opool_capacity(p), CAP);
    CHECK_EQ_U64(stats_of(p).capacity, CAP);

    /* slots not made: in range (stale), never read */
    CHECK(opool_get(p, handle(junk, 50000)) == NULL);
    CHECK(!opool_valid(p, handle(junk, 50000)));
    CHECK(opool_at(p, 50000) == NULL);
    CHECK(opool_handle_is_null(opool_handle_at(p, 50000)));
    CHECK_EQ_U64(opool_free(p, handle(junk, 50000)), OPOOL_ESTALE);
    CHECK_EQ_U64(opool_free(p, handle(G1, 50000)), OPOOL_ESTALE);
    CHECK_EQ_U64(opool_free(p, handle(junk, CAP)), OPOOL_EINVAL);
    CHECK(opool_alloc_at(p, handle(G1, CAP)) == NULL); /* out of range: nothing made */
    CHECK_EQ_U64(bytes_changed(buf, n, 0x01), at_create);

    /* the first alloc makes a batch (64), not the pool */
    opool_handle h = {0};
    REQUIRE(opool_alloc(p, &h) != NULL);
    CHECK_EQ_U64(h.bits, handle(G1, 0).bits);
    CHECK(bytes_changed(buf, n, 0x01) < at_create + 64 * 12 + 64);

    /* alloc_at reaches a slot not made yet (the free stack's top, slot 1,
     * takes its place there); allocs go on from slot 2 */
    REQUIRE(opool_alloc_at(p, handle(G1, 70000)) != NULL);
    CHECK(opool_valid(p, handle(G1, 70000)));
    REQUIRE(opool_alloc(p, &h) != NULL);
    CHECK_EQ_U64(h.bits, handle(G1, 2).bits);
    uint32_t got = 3; /* slots 0, 2 and 70000 */
    static unsigned char seen[CAP];
    memset(seen, 0, sizeof seen);
    seen[0] = seen[2] = seen[70000] = 1;
    for (;;) { /* every other slot once, then full */
        if (opool_alloc(p, &h) == NULL) break;
        uint32_t i = opool_handle_index(h);
        REQUIRE(i < CAP);
        CHECK_EQ_U64(opool_handle_generation(h), G1);
        CHECK(!seen[i]);
        seen[i] = 1;
        got++;
    }
    CHECK_EQ_U64(got, CAP);
    CHECK_EQ_U64(opool_count(p), CAP);
    CHECK_EQ_U64(opool_capacity(p), CAP);
    CHECK_EQ_U64(stats_of(p).failed_allocs, 1);
    opool_clear(p);
    CHECK_EQ_U64(opool_count(p), 0);
    opool_destroy(p);
    free(buf);
}

TEST(create_in_accepts_any_buffer_alignment) {
    for (size_t align = 1; align <= 4096; align *= 4) {
        opool_desc d = desc_of(24, 7);
        d.object_align = align;
        size_t n = opool_required_bytes(&d);
        REQUIRE(n > 0);
        unsigned char *raw = malloc(n + 64);
        REQUIRE(raw);
        for (size_t off = 1; off < 64; off += 21) {
            opool *p = NULL;
            CHECK_EQ_U64(opool_create_in(&p, raw + off, n, &d), OPOOL_OK);
            REQUIRE(p);
            CHECK((void *)p >= (void *)(raw + off));
            for (int k = 0; k < 7; k++) {
                unsigned char *obj = opool_alloc(p, NULL);
                REQUIRE(obj);
                CHECK_EQ_U64((uintptr_t)obj % align, 0);
                CHECK(obj >= raw + off && obj + 24 <= raw + off + n);
                memset(obj, 0xAB, 24);
            }
            CHECK(opool_alloc(p, NULL) == NULL);
            opool_destroy(p);
        }
        free(raw);
    }
}

TEST(create_in_rejects_null_or_small_buffer) {
    opool_desc d = desc_of(24, 10);
    size_t n = opool_required_bytes(&d);
    void *buf = malloc(n);
    REQUIRE(buf);
    opool *p = (opool *)(uintptr_t)1;
    CHECK_EQ_U64(opool_create_in(&p, NULL, n, &d), OPOOL_EINVAL);
    CHECK(p == NULL);
    p = (opool *)(uintptr_t)1;
    CHECK_EQ_U64(opool_create_in(&p, buf, n - 1, &d), OPOOL_EINVAL);
    CHECK(p == NULL);
    CHECK_EQ_U64(opool_create_in(&p, buf, 0, &d), OPOOL_EINVAL);
    CHECK_EQ_U64(opool_create_in(NULL, buf, n, &d), OPOOL_EINVAL);
    CHECK_EQ_U64(opool_create_in(&p, buf, n, NULL), OPOOL_EINVAL);
    opool_desc bad = desc_of(8, 0);
    CHECK_EQ_U64(opool_create_in(&p, buf, n, &bad), OPOOL_EINVAL);
    CHECK(p == NULL);
    free(buf);
}

TEST(create_in_grow_pool_takes_chunks_from_the_allocator) {
    counting c;
    opool_desc d = desc_of(16, 4);
    d.on_full = OPOOL_FULL_GROW;
    d.max_capacity = 30;
    d.allocator = counting_allocator(&c);
    size_t n = opool_required_bytes(&d);
    void *buf = malloc(n);
    REQUIRE(buf);
    opool *p = NULL;
    CHECK_EQ_U64(opool_create_in(&p, buf, n, &d), OPOOL_OK);
    REQUIRE(p);
    CHECK_EQ_U64(c.calls, 0);
    opool_handle h[30];
    alloc_n(p, 30, h);
    for (int k = 0; k < 30; k++) CHECK(!opool_handle_is_null(h[k]));
    CHECK(c.calls > 0);
    for (int k = 4; k < 30; k++) CHECK_EQ_U64(opool_free(p, h[k]), OPOOL_OK);
    CHECK_EQ_U64(opool_shrink(p), 26);
    alloc_n(p, 10, h);
    opool_destroy(p);
    CHECK_EQ_U64(c.blocks, 0);
    CHECK_EQ_U64(c.size_mismatches, 0);
    free(buf);
}

/* The blocks a pool took from its allocator, for checking where its
 * objects lie. */
typedef struct block_log {
    counting c;
    int n;
    const char *at[64];
    size_t size[64];
} block_log;

static void *logged_alloc(void *ctx, size_t size, size_t align) {
    block_log *b = ctx;
    void *p = counting_alloc(&b->c, size, align);
    if (p != NULL && b->n < 64) {
        b->at[b->n] = p;
        b->size[b->n++] = size;
    }
    return p;
}

static void logged_free(void *ctx, void *ptr, size_t size) {
    counting_free(&((block_log *)ctx)->c, ptr, size);
}

/* Whether [obj, obj + n) lies inside one block the pool took. */
static bool in_a_block(const block_log *b, const void *obj, size_t n) {
    for (int k = 0; k < b->n; k++) {
        uintptr_t lo = (uintptr_t)b->at[k], a = (uintptr_t)obj;
        if (a >= lo && a - lo <= b->size[k] && b->size[k] - (a - lo) >= n) return true;
    }
    return false;
}

/* Every object of a grown pool, reached by handle, by index and through the
 * live list, is stride bytes inside memory the pool took for it (a grown
 * chunk's or the creation block), and no two overlap. */
TEST(every_object_of_a_grown_pool_lies_inside_its_chunk) {
    enum { MAX = 40, SIZE = 24 };
    block_log b = {0};
    opool_desc d = desc_of(SIZE, 4);
    d.on_full = OPOOL_FULL_GROW;
    d.max_capacity = MAX; /* chunks [0,4) [4,8) [8,16) [16,32) [32,40) */
    d.allocator = counting_allocator(&b.c);
    d.allocator.alloc = logged_alloc;
    d.allocator.free = logged_free;
    d.allocator.ctx = &b;
    opool *p = create(&d);
    REQUIRE(p);
    opool_handle h[MAX];
    alloc_n(p, MAX, h);
    CHECK(b.n >= 5); /* the creation block and four grown chunks */
    const char *obj[MAX];
    for (uint32_t k = 0; k < MAX; k++) {
        obj[k] = opool_get(p, h[k]);
        REQUIRE(obj[k] != NULL);
        CHECK(in_a_block(&b, obj[k], SIZE));
        CHECK(opool_at(p, opool_handle_index(h[k])) == obj[k]);
        CHECK_EQ_U64(opool_handle_of(p, obj[k]).bits, h[k].bits);
        for (uint32_t j = 0; j < k; j++)
            CHECK((uintptr_t)obj[j] + SIZE <= (uintptr_t)obj[k] ||
                  (uintptr_t)obj[k] + SIZE <= (uintptr_t)obj[j]);
    }
    for (uint32_t i = 0; i < opool_count(p); i++)
        CHECK(in_a_block(&b, opool_live_object(p, i), SIZE));
    /* after a shrink gives back the chunk below one that holds objects, the
     * next growth refills it (its four indices, in whatever order), and the
     * objects still lie inside */
    for (uint32_t k = 4; k < 8; k++) CHECK_EQ_U64(opool_free(p, h[k]), OPOOL_OK);
    CHECK_EQ_U64(opool_shrink(p), 4);
    bool taken[8] = {false};
    for (uint32_t k = 4; k < 8; k++) {
        REQUIRE(opool_alloc(p, &h[k]) != NULL);
        CHECK(in_a_block(&b, opool_get(p, h[k]), SIZE));
        uint32_t i = opool_handle_index(h[k]);
        REQUIRE(i >= 4 && i < 8 && !taken[i]);
        taken[i] = true;
    }
    opool_destroy(p);
    CHECK_EQ_U64(b.c.blocks, 0);
}

TEST(allocator_failure_gives_enomem_and_leaks_nothing) {
    counting c;
    opool_desc d = desc_of(16, 8);
    d.allocator = counting_allocator(&c);
    c.fail_from = 0;
    opool *p = (opool *)(uintptr_t)1;
    CHECK_EQ_U64(opool_create(&p, &d), OPOOL_ENOMEM);
    CHECK(p == NULL);
    CHECK_EQ_U64(c.blocks, 0);
    CHECK_EQ_U64(c.failures, 1);
}

TEST(custom_allocator_gets_every_byte_back) {
    counting c;
    opool_desc d = desc_of(40, 3);
    d.on_full = OPOOL_FULL_GROW;
    d.max_capacity = 100;
    d.object_align = 64;
    d.allocator = counting_allocator(&c);
    opool *p = create(&d);
    REQUIRE(p);
    CHECK(c.calls >= 1);
    opool_handle h[100];
    for (int round = 0; round < 3; round++) {
        alloc_n(p, 100, h);
        for (int k = 0; k < 100; k++) {
            void *obj = opool_get(p, h[k]);
            CHECK(obj != NULL);
            CHECK_EQ_U64((uintptr_t)obj % 64, 0);
        }
        for (int k = 0; k < 100; k++) CHECK_EQ_U64(opool_free(p, h[k]), OPOOL_OK);
        CHECK(opool_shrink(p) > 0);
    }
    opool_destroy(p);
    CHECK_EQ_U64(c.blocks, 0);
    CHECK_EQ_U64(c.bytes, 0);
    CHECK_EQ_U64(c.size_mismatches, 0);
}

TEST(grow_pool_with_huge_max_capacity_grows_lazily) {
    counting c;
    opool_desc d = desc_of(16, 4);
    d.on_full = OPOOL_FULL_GROW;
    d.max_capacity = OPOOL_MAX_CAPACITY;
    opool *p = NULL;
    if ((size_t)OPOOL_MAX_CAPACITY > SIZE_MAX / 16) {
        /* 32-bit: max_capacity * stride must fit a size_t; the largest power
         * of two that does, and the arrays beside it, are accepted */
        CHECK_EQ_U64(opool_create(&p, &d), OPOOL_EINVAL);
        CHECK_EQ_PTR(p, NULL);
        d.max_capacity = (uint32_t)(SIZE_MAX / 32 + 1);
    }
    const uint32_t max = d.max_capacity;
    d.allocator = counting_allocator(&c);
    c.max_request = (size_t)1 << 20;
    p = create(&d);
    REQUIRE(p);
    CHECK_EQ_U64(opool_capacity(p), 4);
    CHECK_EQ_U64(stats_of(p).max_capacity, max);
    CHECK(opool_alloc_at(p, handle(0x55, 1000)) != NULL);
    CHECK_EQ_U64(opool_capacity(p), 1024);
    CHECK_EQ_U64(stats_of(p).grows, 8);
    CHECK(opool_alloc_at(p, handle(0x55, max)) == NULL);
    CHECK(opool_alloc_at(p, handle(0x55, max - 1)) == NULL); /* no memory */
    CHECK(c.failures > 0);
    CHECK(opool_valid(p, handle(0x55, 1000)));
    CHECK_EQ_U64(opool_count(p), 1);
    CHECK_EQ_U64(opool_capacity(p), stats_of(p).capacity);
    opool_handle h;
    CHECK(opool_alloc(p, &h) != NULL);
    CHECK_EQ_U64(opool_handle_index(h), 1); /* 1000's place in the stack took the top, 0 */
    opool_destroy(p);
    CHECK_EQ_U64(c.blocks, 0);
    CHECK_EQ_U64(c.size_mismatches, 0);
}

TEST(growth_failure_leaves_the_pool_working) {
    /* fail every allocation call from the n-th on, at each point of growth */
    for (long n = 0; n < 12; n++) {
        counting c;
        opool_desc d = desc_of(16, 2);
        d.on_full = OPOOL_FULL_GROW;
        d.max_capacity = 64;
        d.allocator = counting_allocator(&c);
        opool *p = create(&d);
        REQUIRE(p);
        c.fail_from = (long)c.calls + n;
        opool_handle h[64];
        uint32_t got = 0;
        for (int k = 0; k < 64; k++) {
            void *obj = opool_alloc(p, &h[got]);
            if (obj == NULL) {
                CHECK(opool_handle_is_null(h[got]));
                continue;
            }
            memset(obj, k, 16);
            got++;
        }
        CHECK_EQ_U64(opool_count(p), got);
        CHECK_EQ_U64(opool_capacity(p), stats_of(p).capacity);
        CHECK(got >= 2);
        for (uint32_t k = 0; k < got; k++) CHECK(opool_valid(p, h[k]));
        c.fail_from = -1; /* memory is back: growth works again */
        alloc_n(p, 64 - got, h + got);
        for (uint32_t k = 0; k < 64; k++) CHECK(opool_valid(p, h[k]));
        CHECK_EQ_U64(opool_count(p), 64);
        opool_destroy(p);
        CHECK_EQ_U64(c.blocks, 0);
        CHECK_EQ_U64(c.size_mismatches, 0);
    }
}

TEST(alloc_at_fails_cleanly_when_growth_has_no_memory) {
    counting c;
    opool_desc d = desc_of(16, 2);
    d.on_full = OPOOL_FULL_GROW;
    d.max_capacity = 64;
    d.allocator = counting_allocator(&c);
    opool *p = create(&d);
    REQUIRE(p);
    opool_handle h;
    CHECK(opool_alloc(p, &h) != NULL);
    c.fail_from = (long)c.calls;
    CHECK(opool_alloc_at(p, handle(0x55, 63)) == NULL);
    CHECK_EQ_U64(opool_count(p), 1);
    CHECK_EQ_U64(stats_of(p).allocs, 1);
    CHECK(opool_valid(p, h));
    c.fail_from = -1;
    CHECK(opool_alloc_at(p, handle(0x55, 63)) != NULL);
    CHECK(opool_valid(p, handle(0x55, 63)));
    CHECK_EQ_U64(opool_capacity(p), 64);
    opool_destroy(p);
    CHECK_EQ_U64(c.blocks, 0);
}

/* ---- destroy ------------------------------------------------------------ */

TEST(destroy_null_is_a_no_op) { opool_destroy(NULL); }

TEST(destroy_runs_fini_on_live_objects_only) {
    recorder r;
    opool_desc d = recorded_desc(16, 8, &r);
    d.fini = rec_fini;
    opool *p = create(&d);
    REQUIRE(p);
    opool_handle h[5];
    alloc_n(p, 5, h);
    CHECK_EQ_U64(opool_free(p, h[3]), OPOOL_OK);
    CHECK_EQ_U64(r.finis, 1);
    opool_destroy(p);
    CHECK_EQ_U64(r.finis, 5);
}

/* ---- NULL pool ---------------------------------------------------------- */

TEST(null_pool_is_safe_for_every_function) {
    opool_handle h = handle(G1, 3);
    int x = 0;
    CHECK(opool_alloc(NULL, &h) == NULL);
    CHECK(opool_handle_is_null(h));
    CHECK(opool_alloc(NULL, NULL) == NULL);
    CHECK(opool_alloc_at(NULL, handle(G1, 0)) == NULL);
    CHECK_EQ_U64(opool_free(NULL, handle(G1, 0)), OPOOL_EINVAL);
    CHECK_EQ_U64(opool_free(NULL, OPOOL_NULL), OPOOL_EINVAL);
    CHECK_EQ_U64(opool_free_object(NULL, &x), OPOOL_EINVAL);
    CHECK_EQ_U64(opool_free_object(NULL, NULL), OPOOL_EINVAL);
    CHECK(opool_get(NULL, handle(G1, 0)) == NULL);
    CHECK(!opool_valid(NULL, handle(G1, 0)));
    CHECK(opool_handle_is_null(opool_handle_of(NULL, &x)));
    CHECK(opool_at(NULL, 0) == NULL);
    opool_clear(NULL);
    CHECK_EQ_U64(opool_count(NULL), 0);
    CHECK_EQ_U64(opool_capacity(NULL), 0);
    CHECK(opool_handle_is_null(opool_live_handle(NULL, 0)));
    CHECK(opool_live_object(NULL, 0) == NULL);
    opool_sort(NULL);
    CHECK_EQ_U64(opool_shrink(NULL), 0);
    opool_stats s;
    memset(&s, 0xFF, sizeof s);
    opool_get_stats(NULL, &s);
    CHECK_EQ_U64(s.version, 0);
    CHECK_EQ_U64(s.allocs, 0);
    opool_get_stats(NULL, NULL);
    opool_destroy(NULL);
}

/* ---- status strings ----------------------------------------------------- */

TEST(status_str_is_distinct_for_each_status) {
    const char *s[OPOOL_ENOENT + 2];
    for (int k = 0; k <= OPOOL_ENOENT; k++) s[k] = opool_status_str((opool_status)k);
    s[OPOOL_ENOENT + 1] = opool_status_str((opool_status)1234);
    for (int k = 0; k <= OPOOL_ENOENT + 1; k++) {
        REQUIRE(s[k] != NULL);
        CHECK(s[k][0] != '\0');
        for (int j = 0; j < k; j++) CHECK(strcmp(s[j], s[k]) != 0);
    }
    CHECK(strcmp(opool_status_str((opool_status)-1), s[OPOOL_ENOENT + 1]) == 0);
    CHECK(strcmp(opool_status_str((opool_status)99), s[OPOOL_ENOENT + 1]) == 0);
}

/* ---- debugging aids ------------------------------------------------------ */

TEST(poison_flag_reports_write_after_free) {
    recorder r;
    opool_desc d = recorded_desc(16, 2, &r);
    d.flags |= OPOOL_POISON;
    opool *p = create(&d);
    REQUIRE(p);
    opool_handle h;
    unsigned char *obj = opool_alloc(p, &h);
    REQUIRE(obj);
    memset(obj, 0, 16);
    CHECK_EQ_U64(opool_free(p, h), OPOOL_OK);
#ifdef TEST_ASAN
    __asan_unpoison_memory_region(obj, 16); /* the write below is the point */
#else
    static const unsigned char word[4] = {0x0b, 0xdb, 0xea, 0x1d}; /* 0x1deadb0b, little-endian */
    uint32_t probe = 1;
    if (*(unsigned char *)&probe == 1)
        for (int b = 0; b < 16; b++) CHECK_EQ_U64(obj[b], word[b % 4]);
#endif
    obj[5] = 0;
    CHECK_EQ_U64(r.reports, 0);
    CHECK_EQ_PTR(opool_alloc(p, NULL), obj);
    CHECK_EQ_U64(r.reports, 1);
    CHECK_EQ_U64(r.last_what, OPOOL_EWRITE_AFTER_FREE);
    CHECK_EQ_U64(opool_handle_index(r.last_report_handle), 0);
    /* an untouched free slot is not reported */
    CHECK(opool_alloc(p, NULL) != NULL);
    CHECK_EQ_U64(r.reports, 1);
    opool_destroy(p);
}

TEST(poison_does_not_report_untouched_slots_of_any_stride) {
    /* strides that are not a multiple of the 4-byte pattern */
    static const size_t sizes[] = {1, 2, 3, 5, 6, 7, 46, 182};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        recorder r;
        opool_desc d = recorded_desc(sizes[s], 5, &r);
        d.object_align = 1;
        d.flags |= OPOOL_POISON;
        d.on_full = OPOOL_FULL_GROW;
        d.max_capacity = 20;
        opool *p = create(&d);
        REQUIRE(p);
        opool_handle h[20];
        alloc_n(p, 20, h); /* slots of chunk 0 and of grown chunks */
        for (int k = 0; k < 20; k++) CHECK_EQ_U64(opool_free(p, h[k]), OPOOL_OK);
        alloc_n(p, 20, h); /* and every slot again after a free */
        CHECK_EQ_U64(r.reports, 0);
        if (r.reports)
            fprintf(stderr, "  object_size %zu: %s on slot %u\n", sizes[s],
                    opool_status_str(r.last_what), opool_handle_index(r.last_report_handle));
        opool_destroy(p);
    }
}

TEST(freed_object_is_poisoned_under_asan) {
#ifdef TEST_ASAN
    opool *p = make_pool(32, 4);
    REQUIRE(p);
    opool_handle h;
    unsigned char *obj = opool_alloc(p, &h);
    REQUIRE(obj);
    CHECK(!__asan_address_is_poisoned(obj));
    CHECK(!__asan_address_is_poisoned(obj + 31));
    CHECK_EQ_U64(opool_free(p, h), OPOOL_OK);
    CHECK(__asan_address_is_poisoned(obj));
    CHECK(__asan_address_is_poisoned(obj + 31));
    CHECK(__asan_address_is_poisoned(obj + 32)); /* slot 1, never used */
    CHECK_EQ_PTR(opool_alloc(p, NULL), obj);
    CHECK(!__asan_address_is_poisoned(obj));
    opool_destroy(p);
#endif
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--print-derived-generations") == 0)
        return print_derived_generations();

    RUN(handle_helpers_split_index_and_generation);
    RUN(fresh_pool_hands_out_slots_in_order);
    RUN(pool_without_a_live_list_keeps_eight_bytes_a_slot);
    RUN(pool_without_a_live_list_hands_out_and_checks_handles_as_one_with);
    RUN(pool_without_a_live_list_claims_and_retires_anywhere_in_its_chain);
    RUN(pool_without_a_live_list_grows_and_shrinks);
    RUN(first_generation_comes_from_salt);
    RUN(derived_salts_differ_between_pools);
    RUN(live_handles_are_never_null_even_across_2_pow_32);
    RUN(alloc_and_free_each_advance_the_generation);
    RUN(reuse_is_lifo);
    RUN(free_moves_last_live_entry_into_the_hole);
    RUN(alloc_right_after_free_takes_the_freed_place_back);
    RUN(alloc_after_free_and_a_loop_start_joins_the_end_of_the_live_list);
    RUN(count_on_several_threads_at_once_right_after_a_free);
    RUN(foreach_keeps_the_promise_through_frees_of_others_and_allocs);
    RUN(consecutive_frees_each_swap_delete);

    RUN(free_twice_is_rejected);
    RUN(null_handle_is_never_valid);
    RUN(even_generation_handle_is_invalid);
    RUN(out_of_range_index_is_invalid);
    RUN(stale_handle_after_reuse_is_rejected);
    RUN(forged_odd_generation_is_stale);
    RUN(handle_from_other_pool_is_rejected);
    RUN(rejected_free_changes_nothing_but_the_counter);
    RUN(rejected_free_is_reported_with_status_and_handle);
    RUN(get_never_reports_or_counts);

    RUN(get_returns_the_object_alloc_returned);
    RUN(objects_do_not_overlap);
    RUN(object_alignment_is_honoured);
    RUN(default_alignment_is_max_align_t);
    RUN(alloc_without_out_handle_works);
    RUN(alloc_runs_init_after_zero);
    RUN(zero_flag_zero_fills_reused_objects);
    RUN(free_runs_fini_once);
    RUN(free_object_frees_a_live_object);
    RUN(free_object_rejects_anything_but_a_live_object_start);
    RUN(free_object_of_a_free_slot_is_rejected);
    RUN(handle_of_finds_a_live_object_start);
    RUN(handle_of_rejects_interior_free_foreign_and_null);
    RUN(at_returns_live_objects_only);

    RUN(backward_iteration_visits_each_once_while_freeing);
    RUN(iteration_skips_objects_allocated_inside_the_loop);
    RUN(loop_after_a_free_visits_every_object_once_and_no_newborn);
    RUN(loop_keeps_its_promise_after_any_history);
    RUN(loop_freeing_a_visited_object_changes_nothing_for_the_rest);
    RUN(loop_freeing_an_unvisited_object_moves_the_last_entry_into_its_place);
    RUN(loop_past_the_end_after_freeing_others_gives_null);
    RUN(loop_that_grows_the_pool_visits_each_once);
    RUN(loop_that_evicts_a_visited_victim_visits_each_once);
    RUN(live_roster_out_of_range_is_null);
    RUN(sort_orders_live_roster_by_index_and_keeps_free_stack);
    RUN(sort_walks_memory_forward);

    RUN(clear_makes_every_handle_stale_and_restarts_in_order);
    RUN(clear_without_fini_ends_as_clear_with_fini);
    RUN(clear_on_empty_pool_is_harmless);
    RUN(clear_resets_a_grown_pool_to_ascending_order);

    RUN(full_pool_alloc_fails_and_clears_out_handle);
    RUN(full_pool_without_report_callback_returns_null);
    RUN(full_pool_reports_an_episode_at_its_1st_2nd_and_4th_failures);
    RUN(rejected_free_does_not_end_a_full_episode);
    RUN(free_object_and_clear_end_a_full_episode);
    RUN(fast_path_free_ends_a_full_episode);

    RUN(grow_pool_starts_with_capacity_rounded_to_power_of_two);
    RUN(grow_adds_doubling_chunks_in_ascending_order_up_to_max);
    RUN(grow_from_capacity_one);
    RUN(grow_keeps_existing_objects_in_place);
    RUN(grow_only_with_grow_policy);
    RUN(grow_pool_without_room_to_grow_is_fixed);
    RUN(grown_slots_come_after_freed_ones);

    RUN(evict_makes_victim_handle_stale);
    RUN(evict_is_not_called_while_there_is_room);
    RUN(evict_returning_no_live_victim_fails_the_alloc);

    RUN(alloc_at_recreates_object_at_exact_handle);
    RUN(alloc_at_puts_top_of_free_stack_in_the_slots_place);
    RUN(alloc_at_refuses_a_live_slot);
    RUN(alloc_at_refuses_even_generation_and_out_of_range);
    RUN(alloc_at_revalidates_a_freed_handle);
    RUN(alloc_at_grows_the_pool_to_reach_the_index);
    RUN(alloc_at_of_slot_in_ungrown_chunk_is_not_a_stale_handle_use);

    RUN(retire_on_wrap_retires_slot);
    RUN(retired_slot_is_never_reused);
    RUN(without_retire_generation_wraps_and_slot_is_reused);
    RUN(retire_on_wrap_by_clear);
    RUN(retire_on_wrap_by_eviction);
    RUN(retire_with_salt_zero_generation);

    RUN(shrink_releases_empty_grown_chunks);
    RUN(shrink_keeps_chunks_with_live_objects);
    RUN(shrink_of_fixed_pool_releases_nothing);
    RUN(shrink_never_revalidates_stale_handles);
    RUN(shrink_keeps_retired_slots_retired);
    RUN(growth_passes_over_a_chunk_whose_slots_are_all_retired);

    RUN(stats_of_fresh_pool);
    RUN(stats_count_allocs_frees_and_high_water);
    RUN(get_stats_of_null_pool_is_zero);

    RUN(create_rejects_null_out_and_null_desc);
    RUN(create_rejects_zero_capacity);
    RUN(create_rejects_non_power_of_two_alignment);
    RUN(create_rejects_alignment_above_4096);
    RUN(create_rejects_max_capacity_below_capacity);
    RUN(create_rejects_capacity_above_the_maximum);
    RUN(create_rejects_unknown_flags);
    RUN(fixed_refuses_growth);
    RUN(fixed_pool_fails_when_full_and_never_grows);
    RUN(create_rejects_unknown_policy);
    RUN(create_rejects_evict_without_callback);
    RUN(create_rejects_allocator_with_only_one_function);
    RUN(create_rejects_save_object_without_load_object);
    RUN(create_rejects_overflowing_sizes);
    RUN(create_rejects_slot_arrays_beyond_the_address_space);
    RUN(required_bytes_covers_the_pool);
    RUN(create_in_makes_no_allocation);
    RUN(a_fixed_pool_makes_its_slots_as_its_high_water_rises);
    RUN(create_in_accepts_any_buffer_alignment);
    RUN(create_in_rejects_null_or_small_buffer);
    RUN(create_in_grow_pool_takes_chunks_from_the_allocator);
    RUN(every_object_of_a_grown_pool_lies_inside_its_chunk);
    RUN(allocator_failure_gives_enomem_and_leaks_nothing);
    RUN(custom_allocator_gets_every_byte_back);
    RUN(grow_pool_with_huge_max_capacity_grows_lazily);
    RUN(growth_failure_leaves_the_pool_working);
    RUN(alloc_at_fails_cleanly_when_growth_has_no_memory);

    RUN(destroy_null_is_a_no_op);
    RUN(destroy_runs_fini_on_live_objects_only);
    RUN(null_pool_is_safe_for_every_function);
    RUN(status_str_is_distinct_for_each_status);
    RUN(poison_flag_reports_write_after_free);
    RUN(poison_does_not_report_untouched_slots_of_any_stride);
    RUN(freed_object_is_poisoned_under_asan);
    return test_summary();
}
