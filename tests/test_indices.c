/*
 * test_indices.c -- what engines that keep raw indices and small references
 * use (include/opool.h): opool_handle_at, opool_high_water, compact handles
 * and the OPOOL_RETIRE_ON_WRAP rule that goes with them, opool_retain and
 * OPOOL_FOREACH (core and typed), fini asking for its own handle, and
 * determinism of pools with a salt. One behaviour per test, exact results.
 *
 * Pools use salt 0x1000 (SALT): a slot's first handle has generation G1.
 */
#include "opool.h"
#include "opool_mt.h"
#include "opool_typed.h"
#include "counting.h"
#include "helpers.h"
#include "stream.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>

#define SALT 0x1000u
#define G1 0x1001u

static opool *make(uint32_t capacity, uint32_t flags) {
    opool_desc d = quiet_desc(16, capacity, SALT);
    d.flags |= flags;
    opool *p = NULL;
    return opool_create(&p, &d) == OPOOL_OK ? p : NULL;
}

/* A growable pool of 16-byte objects; where max_capacity of them would not
 * fit the address space (32-bit systems, above 2^28), an id-only pool
 * (object_size 0), whose handles follow the same rules. */
static opool *make_grow(uint32_t capacity, uint32_t max_capacity, uint32_t flags) {
    const size_t room = SIZE_MAX / 16 / 2; /* not a constant expression: no -Wtype-limits */
    size_t size = max_capacity > room ? 0 : 16;
    opool_desc d = quiet_desc(size, capacity, SALT);
    d.on_full = OPOOL_FULL_GROW;
    d.max_capacity = max_capacity;
    d.flags |= flags;
    opool *p = NULL;
    return opool_create(&p, &d) == OPOOL_OK ? p : NULL;
}

static opool_stats stats_of(const opool *p) {
    opool_stats s;
    opool_get_stats(p, &s);
    return s;
}

/* ---- handle_at ------------------------------------------------------------ */

TEST(handle_at_gives_the_current_handle_of_a_live_slot) {
    opool *p = make(4, 0);
    REQUIRE(p);
    opool_handle a, b;
    REQUIRE(opool_alloc(p, &a) && opool_alloc(p, &b));
    CHECK_EQ_U64(opool_handle_at(p, 0).bits, a.bits);
    CHECK_EQ_U64(opool_handle_at(p, 1).bits, handle(G1, 1).bits);
    CHECK_EQ_U64(opool_free(p, a), OPOOL_OK);
    opool_handle c;
    REQUIRE(opool_alloc(p, &c)); /* slot 0 again, next generation */
    CHECK_EQ_U64(opool_handle_at(p, 0).bits, handle(G1 + 2, 0).bits);
    opool_destroy(p);
}

TEST(handle_at_of_a_free_slot_is_null) {
    opool *p = make(4, 0);
    REQUIRE(p);
    opool_handle a;
    REQUIRE(opool_alloc(p, &a));
    CHECK(opool_handle_is_null(opool_handle_at(p, 1))); /* never used */
    CHECK_EQ_U64(opool_free(p, a), OPOOL_OK);
    CHECK(opool_handle_is_null(opool_handle_at(p, 0))); /* freed */
    opool_destroy(p);
}

TEST(handle_at_out_of_range_or_null_pool_is_null) {
    opool *p = make(4, 0);
    REQUIRE(p);
    for (int k = 0; k < 4; k++) CHECK(opool_alloc(p, NULL) != NULL);
    CHECK(opool_handle_is_null(opool_handle_at(p, 4)));
    CHECK(opool_handle_is_null(opool_handle_at(p, UINT32_MAX)));
    CHECK(opool_handle_is_null(opool_handle_at(NULL, 0)));
    opool_destroy(p);
}

TEST(handle_at_of_a_retired_slot_is_null) {
    opool *p = make(2, OPOOL_RETIRE_ON_WRAP);
    REQUIRE(p);
    CHECK(opool_alloc_at(p, handle(SALT - 1, 0)) != NULL);
    CHECK_EQ_U64(opool_handle_at(p, 0).bits, handle(SALT - 1, 0).bits);
    CHECK_EQ_U64(opool_free(p, handle(SALT - 1, 0)), OPOOL_OK);
    CHECK_EQ_U64(stats_of(p).retired, 1);
    CHECK(opool_handle_is_null(opool_handle_at(p, 0)));
    opool_destroy(p);
}

TEST(handle_at_of_an_ungrown_chunk_is_null) {
    opool *p = make_grow(2, 64, 0);
    REQUIRE(p);
    CHECK(opool_handle_is_null(opool_handle_at(p, 2)));
    CHECK(opool_handle_is_null(opool_handle_at(p, 63)));
    opool_destroy(p);
}

TEST(free_by_index_through_handle_at) {
    opool *p = make(4, 0);
    REQUIRE(p);
    for (int k = 0; k < 3; k++) CHECK(opool_alloc(p, NULL) != NULL);
    CHECK_EQ_U64(opool_free(p, opool_handle_at(p, 1)), OPOOL_OK);
    CHECK_EQ_U64(opool_count(p), 2);
    CHECK(opool_at(p, 1) == NULL);
    CHECK_EQ_U64(opool_free(p, opool_handle_at(p, 1)), OPOOL_EINVAL); /* OPOOL_NULL */
    opool_destroy(p);
}

TEST(handle_at_is_also_an_exported_function) {
    opool *p = make(2, 0);
    REQUIRE(p);
    opool_handle a;
    REQUIRE(opool_alloc(p, &a));
    opool_handle (*at)(const opool *, uint32_t) = opool_handle_at;
    uint32_t (*hw)(const opool *) = opool_high_water;
    CHECK_EQ_U64(at(p, 0).bits, a.bits);
    CHECK_EQ_U64(hw(p), 1);
    opool_handle32 (*compact)(const opool *, opool_handle) = opool_handle_compact;
    opool_handle (*expand)(const opool *, opool_handle32) = opool_handle_expand;
    CHECK_EQ_U64(expand(p, compact(p, a)).bits, a.bits);
    opool_destroy(p);
}

/* ---- high_water ----------------------------------------------------------- */

TEST(high_water_is_the_most_objects_live_at_once) {
    opool *p = make(8, 0);
    REQUIRE(p);
    CHECK_EQ_U64(opool_high_water(p), 0);
    opool_handle h[5];
    for (int k = 0; k < 5; k++) REQUIRE(opool_alloc(p, &h[k]));
    CHECK_EQ_U64(opool_high_water(p), 5);
    for (int k = 0; k < 3; k++) CHECK_EQ_U64(opool_free(p, h[k]), OPOOL_OK);
    CHECK(opool_alloc(p, NULL) != NULL);
    CHECK_EQ_U64(opool_high_water(p), 5);
    CHECK_EQ_U64(opool_high_water(p), stats_of(p).high_water);
    opool_clear(p);
    CHECK_EQ_U64(opool_high_water(p), 5);
    opool_destroy(p);
}

TEST(high_water_bounds_every_index_handed_out_without_alloc_at) {
    opool *p = make(64, 0);
    REQUIRE(p);
    rng r = {7};
    opool_handle live[64];
    uint32_t n = 0;
    for (int step = 0; step < 5000; step++) {
        if (n < 64 && (n == 0 || rng_chance(&r, 55))) {
            REQUIRE(opool_alloc(p, &live[n]));
            CHECK(opool_handle_index(live[n]) < opool_high_water(p));
            n++;
        } else {
            uint32_t k = rng_below(&r, n);
            CHECK_EQ_U64(opool_free(p, live[k]), OPOOL_OK);
            live[k] = live[--n];
        }
    }
    for (uint32_t i = opool_high_water(p); i < 64; i++) CHECK(opool_at(p, i) == NULL);
    opool_destroy(p);
}

TEST(high_water_of_null_pool_is_zero) { CHECK_EQ_U64(opool_high_water(NULL), 0); }

/* ---- compact handles -------------------------------------------------------- */

TEST(compact_keeps_index_low_and_generation_above_it) {
    opool *p = make(4, 0); /* index limit 4: k = 2 */
    REQUIRE(p);
    opool_handle a, b;
    REQUIRE(opool_alloc(p, &a) && opool_alloc(p, &b));
    CHECK_EQ_U64(opool_handle_compact(p, a).bits, G1 << 2 | 0);
    CHECK_EQ_U64(opool_handle_compact(p, b).bits, G1 << 2 | 1);
    opool_destroy(p);
}

TEST(compact_index_bits_follow_the_index_limit) {
    static const struct {
        uint32_t capacity, max_capacity, k;
    } cases[] = {{1, 0, 0}, {2, 0, 1},     {3, 0, 2},        {4, 0, 2},
                 {5, 0, 3}, {4, 1000, 10}, {1000, 1024, 10}, {1000, 1025, 11}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        opool *p = cases[c].max_capacity ? make_grow(cases[c].capacity, cases[c].max_capacity, 0)
                                         : make(cases[c].capacity, 0);
        REQUIRE(p);
        opool_handle h;
        REQUIRE(opool_alloc(p, &h));
        CHECK_EQ_U64(opool_handle_compact(p, h).bits, (uint32_t)((uint64_t)G1 << cases[c].k));
        opool_destroy(p);
    }
}

TEST(compact_then_expand_gives_the_handle_back) {
    opool *p = make_grow(3, 100, 0);
    REQUIRE(p);
    opool_handle h[100];
    for (int k = 0; k < 100; k++) REQUIRE(opool_alloc(p, &h[k]));
    for (int k = 0; k < 100; k += 3) CHECK_EQ_U64(opool_free(p, h[k]), OPOOL_OK);
    for (int k = 0; k < 100; k++) {
        opool_handle32 c = opool_handle_compact(p, h[k]);
        if (k % 3 == 0) {
            CHECK_EQ_U64(c.bits, 0);
        } else {
            CHECK(c.bits != 0);
            CHECK_EQ_U64(opool_handle_expand(p, c).bits, h[k].bits);
        }
    }
    opool_destroy(p);
}

TEST(compact_of_a_handle_not_live_is_zero) {
    opool *p = make(4, 0);
    opool *q = make(4, 0);
    REQUIRE(p && q);
    opool_handle a, b;
    REQUIRE(opool_alloc(p, &a) && opool_alloc(p, &b));
    CHECK_EQ_U64(opool_free(p, a), OPOOL_OK);
    CHECK_EQ_U64(opool_handle_compact(p, a).bits, 0);                 /* stale */
    CHECK_EQ_U64(opool_handle_compact(p, OPOOL_NULL).bits, 0);        /* null */
    CHECK_EQ_U64(opool_handle_compact(p, handle(G1 + 1, 1)).bits, 0); /* even */
    CHECK_EQ_U64(opool_handle_compact(p, handle(G1 + 2, 1)).bits, 0); /* forged */
    CHECK_EQ_U64(opool_handle_compact(p, handle(G1, 4)).bits, 0);     /* out of range */
    CHECK_EQ_U64(opool_handle_compact(p, handle(G1, UINT32_MAX)).bits, 0);
    CHECK_EQ_U64(opool_handle_compact(NULL, b).bits, 0);
    /* another pool with the same salt: its handle of slot 1 is b's twin, but slot 1 is free */
    CHECK_EQ_U64(opool_handle_compact(q, b).bits, 0);
    opool_destroy(p);
    opool_destroy(q);
}

TEST(expand_of_zero_or_a_null_pool_is_null) {
    opool *p = make(4, 0);
    REQUIRE(p);
    opool_handle a;
    REQUIRE(opool_alloc(p, &a)); /* slot 0 live: {0} must still not name it */
    opool_handle32 zero = {0};
    CHECK(opool_handle_is_null(opool_handle_expand(p, zero)));
    CHECK(opool_handle_is_null(opool_handle_expand(NULL, opool_handle_compact(p, a))));
    opool_destroy(p);
}

TEST(expand_of_a_stale_or_forged_compact_handle_is_null) {
    opool *p = make(4, 0);
    REQUIRE(p);
    opool_handle a;
    REQUIRE(opool_alloc(p, &a));
    opool_handle32 c = opool_handle_compact(p, a);
    CHECK_EQ_U64(opool_free(p, a), OPOOL_OK);
    CHECK(opool_handle_is_null(opool_handle_expand(p, c))); /* slot free */
    REQUIRE(opool_alloc(p, NULL));                          /* slot 0 reused */
    CHECK(opool_handle_is_null(opool_handle_expand(p, c))); /* stale */
    opool_handle32 even = {(G1 + 1) << 2};
    CHECK(opool_handle_is_null(opool_handle_expand(p, even)));
    opool_handle32 free_slot = {G1 << 2 | 3};
    CHECK(opool_handle_is_null(opool_handle_expand(p, free_slot)));
    opool_destroy(p);
}

TEST(expand_of_an_index_beyond_the_slots_is_null) {
    opool *p = make(3, 0); /* k = 2: index 3 is representable but no slot */
    REQUIRE(p);
    for (int k = 0; k < 3; k++) REQUIRE(opool_alloc(p, NULL));
    opool_handle32 c = {G1 << 2 | 3};
    CHECK(opool_handle_is_null(opool_handle_expand(p, c)));
    opool_destroy(p);
}

TEST(stale_compact_handle_matches_only_after_the_stated_reuses) {
    opool *p = make(65536, 0); /* k = 16: 16 generation bits, period 2^15 reuses */
    REQUIRE(p);
    opool_handle a;
    REQUIRE(opool_alloc(p, &a));
    opool_handle32 c = opool_handle_compact(p, a);
    CHECK_EQ_U64(opool_free(p, a), OPOOL_OK);
    /* 2^15 - 1 reuses later: no match; 2^15 reuses later: the false match */
    opool_handle early = handle(G1 + 2 * ((1u << 15) - 1), 0);
    REQUIRE(opool_alloc_at(p, early));
    CHECK(opool_handle_is_null(opool_handle_expand(p, c)));
    CHECK_EQ_U64(opool_free(p, early), OPOOL_OK);
    opool_handle late = handle(G1 + 2 * (1u << 15), 0);
    REQUIRE(opool_alloc_at(p, late));
    CHECK_EQ_U64(opool_handle_expand(p, c).bits, late.bits);
    opool_destroy(p);
}

TEST(pool_of_one_slot_keeps_the_whole_generation) {
    opool *p = make(1, 0); /* k = 0 */
    REQUIRE(p);
    opool_handle a;
    REQUIRE(opool_alloc(p, &a));
    CHECK_EQ_U64(opool_handle_compact(p, a).bits, G1);
    CHECK_EQ_U64(opool_handle_expand(p, opool_handle_compact(p, a)).bits, a.bits);
    opool_destroy(p);
}

TEST(pool_above_2_pow_31_slots_has_no_compact_handles) {
    opool *p = make_grow(4, (1u << 31) + 1, 0); /* grows lazily: 4 slots now */
    REQUIRE(p);
    opool_handle a;
    REQUIRE(opool_alloc(p, &a));
    CHECK_EQ_U64(opool_handle_compact(p, a).bits, 0);
    opool_handle32 c = {G1 << 31};
    CHECK(opool_handle_is_null(opool_handle_expand(p, c)));
    opool_destroy(p);
}

TEST(pool_of_2_pow_31_slots_keeps_one_generation_bit) {
    opool *p = make_grow(4, 1u << 31, 0); /* k = 31 */
    REQUIRE(p);
    opool_handle a;
    REQUIRE(opool_alloc(p, &a));
    opool_handle32 c = opool_handle_compact(p, a);
    CHECK_EQ_U64(c.bits, 1u << 31);
    CHECK_EQ_U64(opool_handle_expand(p, c).bits, a.bits);
    opool_destroy(p);
}

TEST(retire_on_wrap_retires_when_the_compact_generation_bits_wrap) {
    opool *p = make(4, OPOOL_RETIRE_ON_WRAP); /* k = 2: 30 bits, retire after 2^29 uses */
    REQUIRE(p);
    opool_handle last = handle(SALT + (1u << 30) - 1, 1);
    REQUIRE(opool_alloc_at(p, last));
    CHECK_EQ_U64(opool_free(p, last), OPOOL_OK);
    CHECK_EQ_U64(stats_of(p).retired, 1);
    CHECK_EQ_U64(opool_capacity(p), 3);
    opool_handle one_before = handle(SALT + (1u << 30) - 3, 2);
    REQUIRE(opool_alloc_at(p, one_before));
    CHECK_EQ_U64(opool_free(p, one_before), OPOOL_OK);
    CHECK_EQ_U64(stats_of(p).retired, 1);
    opool_destroy(p);
}

TEST(without_retire_the_compact_wrap_reuses_the_slot) {
    opool *p = make(4, 0);
    REQUIRE(p);
    opool_handle last = handle(SALT + (1u << 30) - 1, 1);
    REQUIRE(opool_alloc_at(p, last));
    CHECK_EQ_U64(opool_free(p, last), OPOOL_OK);
    CHECK_EQ_U64(stats_of(p).retired, 0);
    CHECK_EQ_U64(opool_capacity(p), 4);
    opool_destroy(p);
}

TEST(retire_on_wrap_with_one_generation_bit_uses_each_slot_once) {
    opool *p = make_grow(2, 1u << 31, OPOOL_RETIRE_ON_WRAP);
    REQUIRE(p);
    opool_handle a;
    REQUIRE(opool_alloc(p, &a));
    CHECK_EQ_U64(opool_free(p, a), OPOOL_OK);
    CHECK_EQ_U64(stats_of(p).retired, 1);
    opool_handle b;
    REQUIRE(opool_alloc(p, &b));
    CHECK_EQ_U64(opool_handle_index(b), 1);
    opool_destroy(p);
}

TEST(retire_on_wrap_above_2_pow_31_keeps_the_full_period) {
    opool *p = make_grow(2, (1u << 31) + 1, OPOOL_RETIRE_ON_WRAP);
    REQUIRE(p);
    opool_handle a;
    REQUIRE(opool_alloc(p, &a));
    CHECK_EQ_U64(opool_free(p, a), OPOOL_OK);
    CHECK_EQ_U64(stats_of(p).retired, 0);
    opool_destroy(p);
}

TEST(compact_handles_survive_save_and_load) {
    opool_desc d = quiet_desc(16, 8, SALT);
    opool *p = NULL;
    REQUIRE(opool_create(&p, &d) == OPOOL_OK);
    opool_handle a, b;
    REQUIRE(opool_alloc(p, &a) && opool_alloc(p, &b));
    opool_handle32 ca = opool_handle_compact(p, a), cb = opool_handle_compact(p, b);
    CHECK_EQ_U64(opool_free(p, a), OPOOL_OK);
    stream s = stream_new();
    REQUIRE(opool_save(p, stream_write, &s) == OPOOL_OK);
    opool *q = NULL;
    REQUIRE(opool_load(&q, &d, stream_read, &s) == OPOOL_OK);
    CHECK(opool_handle_is_null(opool_handle_expand(q, ca)));
    CHECK_EQ_U64(opool_handle_expand(q, cb).bits, b.bits);
    stream_free(&s);
    opool_destroy(p);
    opool_destroy(q);
}

/* ---- retain ------------------------------------------------------------------ */

typedef struct visits {
    opool *p;
    uint64_t seen[64];
    uint32_t n;
    uint32_t drop_below; /* keep returns false for objects whose int is below this */
    int allocate;        /* allocate this many inside keep */
    int free_self;       /* keep frees its own object (and returns false) */
    int finis;
} visits;

static bool keep_small(void *obj, opool_handle h, void *user) {
    visits *v = user;
    if (v->n < 64) v->seen[v->n] = h.bits;
    v->n++;
    if (opool_get(v->p, h) != obj) v->n += 1000; /* obj must be h's object */
    while (v->allocate > 0) {
        int *x = opool_alloc(v->p, NULL);
        if (x) *x = 0;
        v->allocate--;
    }
    if (v->free_self) {
        opool_free(v->p, h);
        return false;
    }
    return *(int *)obj >= (int)v->drop_below;
}

static void count_fini(void *obj, void *user) {
    (void)obj;
    ((visits *)user)->finis++;
}

/* A pool of n ints 0..n-1, with fini counting into v. */
static opool *int_pool(visits *v, uint32_t capacity, uint32_t n) {
    memset(v, 0, sizeof *v);
    opool_desc d = quiet_desc(sizeof(int), capacity, SALT);
    d.fini = count_fini;
    d.user = v;
    opool *p = NULL;
    if (opool_create(&p, &d) != OPOOL_OK) return NULL;
    for (uint32_t k = 0; k < n; k++) {
        int *x = opool_alloc(p, NULL);
        if (x) *x = (int)k;
    }
    v->p = p;
    return p;
}

TEST(retain_frees_the_rejected_and_returns_how_many) {
    visits v;
    opool *p = int_pool(&v, 16, 10);
    REQUIRE(p);
    v.drop_below = 4;
    CHECK_EQ_U64(opool_retain(p, keep_small, &v), 4);
    CHECK_EQ_U64(opool_count(p), 6);
    CHECK_EQ_U64(v.finis, 4);
    for (uint32_t i = 0; i < 10; i++) CHECK_EQ_U64(opool_at(p, i) != NULL, i >= 4);
    CHECK_EQ_U64(stats_of(p).frees, 4);
    opool_destroy(p);
}

TEST(retain_visits_every_live_object_once_in_backward_loop_order) {
    visits v;
    opool *p = int_pool(&v, 16, 10);
    REQUIRE(p);
    opool_handle h3 = opool_handle_at(p, 3);
    CHECK_EQ_U64(opool_free(p, h3), OPOOL_OK); /* live list: 0 1 2 9 4 5 6 7 8 */
    uint64_t want[9];
    for (uint32_t i = 9; i-- > 0;) want[8 - i] = opool_live_handle(p, i).bits;
    CHECK_EQ_U64(opool_retain(p, keep_small, &v), 0);
    CHECK_EQ_U64(v.n, 9);
    for (int k = 0; k < 9; k++) CHECK_EQ_U64(v.seen[k], want[k]);
    opool_destroy(p);
}

TEST(retain_does_not_visit_objects_allocated_by_keep) {
    visits v;
    opool *p = int_pool(&v, 16, 5);
    REQUIRE(p);
    v.allocate = 3;
    v.drop_below = 2;
    CHECK_EQ_U64(opool_retain(p, keep_small, &v), 2);
    CHECK_EQ_U64(v.n, 5);
    CHECK_EQ_U64(opool_count(p), 6);
    opool_destroy(p);
}

TEST(retain_does_not_free_or_count_an_object_keep_freed) {
    visits v;
    opool *p = int_pool(&v, 8, 4);
    REQUIRE(p);
    v.free_self = 1;
    CHECK_EQ_U64(opool_retain(p, keep_small, &v), 0);
    CHECK_EQ_U64(v.n, 4);
    CHECK_EQ_U64(opool_count(p), 0);
    CHECK_EQ_U64(v.finis, 4);
    CHECK_EQ_U64(stats_of(p).rejected_handles, 0);
    opool_destroy(p);
}

TEST(retain_with_null_pool_or_keep_returns_zero) {
    visits v;
    opool *p = int_pool(&v, 8, 4);
    REQUIRE(p);
    CHECK_EQ_U64(opool_retain(NULL, keep_small, &v), 0);
    CHECK_EQ_U64(opool_retain(p, NULL, &v), 0);
    CHECK_EQ_U64(opool_count(p), 4);
    CHECK_EQ_U64(v.n, 0);
    opool_destroy(p);
}

TEST(retain_of_an_empty_pool_calls_nothing) {
    visits v;
    opool *p = int_pool(&v, 8, 0);
    REQUIRE(p);
    CHECK_EQ_U64(opool_retain(p, keep_small, &v), 0);
    CHECK_EQ_U64(v.n, 0);
    opool_destroy(p);
}

/* ---- OPOOL_FOREACH --------------------------------------------------------------- */

TEST(foreach_gives_each_object_with_its_handle_backwards) {
    visits v;
    opool *p = int_pool(&v, 16, 6);
    REQUIRE(p);
    uint32_t n = 0, i = 6;
    OPOOL_FOREACH(p, int, it, h) {
        i--;
        CHECK_EQ_U64(h.bits, opool_live_handle(p, i).bits);
        CHECK_EQ_PTR(it, opool_live_object(p, i));
        CHECK_EQ_U64(*it, i);
        n++;
    }
    CHECK_EQ_U64(n, 6);
    opool_destroy(p);
}

TEST(foreach_may_free_the_current_object) {
    visits v;
    opool *p = int_pool(&v, 16, 8);
    REQUIRE(p);
    uint32_t n = 0;
    OPOOL_FOREACH(p, int, it, h) {
        n++;
        if (*it % 2 == 0) CHECK_EQ_U64(opool_free(p, h), OPOOL_OK);
    }
    CHECK_EQ_U64(n, 8);
    CHECK_EQ_U64(opool_count(p), 4);
    OPOOL_FOREACH(p, int, it, h) { CHECK_EQ_U64(*it % 2, 1); }
    opool_destroy(p);
}

TEST(foreach_break_leaves_the_loop) {
    visits v;
    opool *p = int_pool(&v, 16, 8);
    REQUIRE(p);
    uint32_t n = 0;
    OPOOL_FOREACH(p, int, it, h) {
        if (*it == 5) break;
        n++;
    }
    CHECK_EQ_U64(n, 2); /* 7, 6, then 5 breaks */
    opool_destroy(p);
}

TEST(foreach_continue_goes_to_the_next_object) {
    visits v;
    opool *p = int_pool(&v, 16, 8);
    REQUIRE(p);
    uint32_t n = 0, total = 0;
    OPOOL_FOREACH(p, int, it, h) {
        total++;
        if (*it % 2) continue;
        n++;
    }
    CHECK_EQ_U64(total, 8);
    CHECK_EQ_U64(n, 4);
    opool_destroy(p);
}

TEST(foreach_skips_indices_left_past_the_end) {
    visits v;
    opool *p = int_pool(&v, 16, 6);
    REQUIRE(p);
    uint32_t n = 0;
    OPOOL_FOREACH(p, int, it, h) {
        n++;
        if (*it == 5) { /* free three others not yet visited: the end moves below us */
            CHECK_EQ_U64(opool_free(p, opool_live_handle(p, 0)), OPOOL_OK);
            CHECK_EQ_U64(opool_free(p, opool_live_handle(p, 0)), OPOOL_OK);
            CHECK_EQ_U64(opool_free(p, opool_live_handle(p, 0)), OPOOL_OK);
        }
        CHECK(it != NULL);
    }
    CHECK_EQ_U64(opool_count(p), 3);
    CHECK(n <= 6);
    opool_destroy(p);
}

TEST(foreach_over_an_empty_or_null_pool_runs_no_body) {
    visits v;
    opool *p = int_pool(&v, 4, 0);
    REQUIRE(p);
    int n = 0;
    OPOOL_FOREACH(p, int, it, h) n++;
    opool *none = NULL;
    OPOOL_FOREACH(none, int, it, h) n++;
    CHECK_EQ_U64(n, 0);
    opool_destroy(p);
}

TEST(foreach_loops_nest) {
    visits v;
    opool *p = int_pool(&v, 8, 3);
    REQUIRE(p);
    int n = 0;
    OPOOL_FOREACH(p, int, a, ha) {
        OPOOL_FOREACH(p, int, b, hb) {
            if (*b == 1) break;
            n += *a * 10 + *b;
        }
    }
    CHECK_EQ_U64(n, 2 + 12 + 22);
    opool_destroy(p);
}

/* ---- typed ---------------------------------------------------------------------- */

struct mob {
    int hp;
};
OPOOL_TYPED(mob_pool, struct mob);

static bool mob_alive(struct mob *m, mob_pool_handle h, void *user) {
    (void)user;
    (void)h;
    return m->hp > 0;
}

TEST(typed_retain_passes_the_object_type_and_typed_handle) {
    mob_pool *p;
    REQUIRE(mob_pool_create_n(&p, 8) == OPOOL_OK);
    for (int k = 0; k < 6; k++) {
        struct mob *m = mob_pool_alloc(p, NULL);
        REQUIRE(m);
        m->hp = k % 3;
    }
    CHECK_EQ_U64(mob_pool_retain(p, mob_alive, NULL), 2);
    CHECK_EQ_U64(mob_pool_count(p), 4);
    CHECK_EQ_U64(mob_pool_retain(p, NULL, NULL), 0);
    CHECK_EQ_U64(mob_pool_retain(NULL, mob_alive, NULL), 0);
    mob_pool_destroy(p);
}

TEST(typed_foreach_handle_at_and_high_water) {
    mob_pool *p;
    REQUIRE(mob_pool_create_n(&p, 8) == OPOOL_OK);
    mob_pool_handle first;
    for (int k = 0; k < 5; k++) {
        struct mob *m = mob_pool_alloc(p, k == 0 ? &first : NULL);
        REQUIRE(m);
        m->hp = k;
    }
    CHECK(mob_pool_handle_eq(mob_pool_handle_at(p, 0), first));
    CHECK(mob_pool_handle_is_null(mob_pool_handle_at(p, 5)));
    int sum = 0;
    OPOOL_TYPED_FOREACH(mob_pool, p, m, h) {
        sum += m->hp;
        if (m->hp == 2) CHECK_EQ_U64(mob_pool_free(p, h), OPOOL_OK);
    }
    CHECK_EQ_U64(sum, 10);
    CHECK_EQ_U64(mob_pool_count(p), 4);
    CHECK_EQ_U64(mob_pool_high_water(p), 5);
    mob_pool_destroy(p);

    /* without a live list: no body runs (the default report prints the refusal) */
    REQUIRE(mob_pool_create_flags(&p, 8, OPOOL_NO_LIVE_LIST) == OPOOL_OK);
    REQUIRE(mob_pool_alloc(p, NULL));
    int bodies = 0;
    OPOOL_TYPED_FOREACH(mob_pool, p, m, h) bodies += 1 + (int)mob_pool_handle_is_null(h) + m->hp;
    CHECK_EQ_U64(bodies, 0);
    CHECK_EQ_U64(mob_pool_count(p), 1);
    CHECK(mob_pool_live_object(p, 0) == NULL);
    mob_pool_destroy(p);
}

/* ---- fini and its own handle --------------------------------------------------------- */

typedef struct self_check {
    opool *p;
    int finis, right;
} self_check;

static void fini_asks_for_its_handle(void *obj, void *user) {
    self_check *s = user;
    s->finis++;
    opool_handle h = opool_handle_of(s->p, obj);
    if (!opool_handle_is_null(h) && opool_get(s->p, h) == obj &&
        opool_handle_at(s->p, opool_handle_index(h)).bits == h.bits &&
        (uint64_t) * (uint32_t *)obj == h.bits >> 32)
        s->right++;
}

static opool_handle evict_first(opool *p, void *user) {
    (void)user;
    return opool_live_handle(p, 0);
}

/* A pool whose objects hold their handle's generation, fini checking it. */
static opool *self_pool(self_check *s, opool_full_policy policy) {
    memset(s, 0, sizeof *s);
    opool_desc d = quiet_desc(sizeof(uint32_t), 4, SALT);
    d.fini = fini_asks_for_its_handle;
    d.user = s;
    d.on_full = policy;
    if (policy == OPOOL_FULL_EVICT) d.evict = evict_first;
    opool *p = NULL;
    if (opool_create(&p, &d) != OPOOL_OK) return NULL;
    s->p = p;
    return p;
}

static void fill(opool *p, int n) {
    for (int k = 0; k < n; k++) {
        opool_handle h;
        uint32_t *x = opool_alloc(p, &h);
        if (x) *x = opool_handle_generation(h);
    }
}

TEST(fini_gets_its_own_handle_on_free) {
    self_check s;
    opool *p = self_pool(&s, OPOOL_FULL_FAIL);
    REQUIRE(p);
    fill(p, 2);
    CHECK_EQ_U64(opool_free(p, opool_handle_at(p, 1)), OPOOL_OK);
    void *obj = opool_at(p, 0);
    CHECK_EQ_U64(opool_free_object(p, obj), OPOOL_OK);
    CHECK_EQ_U64(s.finis, 2);
    CHECK_EQ_U64(s.right, 2);
    opool_destroy(p);
}

TEST(fini_gets_its_own_handle_on_clear) {
    self_check s;
    opool *p = self_pool(&s, OPOOL_FULL_FAIL);
    REQUIRE(p);
    fill(p, 3);
    opool_clear(p);
    CHECK_EQ_U64(s.finis, 3);
    CHECK_EQ_U64(s.right, 3);
    opool_destroy(p);
}

TEST(fini_gets_its_own_handle_on_evict) {
    self_check s;
    opool *p = self_pool(&s, OPOOL_FULL_EVICT);
    REQUIRE(p);
    fill(p, 6); /* two evictions */
    CHECK_EQ_U64(s.finis, 2);
    CHECK_EQ_U64(s.right, 2);
    CHECK_EQ_U64(stats_of(p).evictions, 2);
    opool_destroy(p);
}

TEST(fini_gets_its_own_handle_on_destroy) {
    self_check s;
    opool *p = self_pool(&s, OPOOL_FULL_FAIL);
    REQUIRE(p);
    fill(p, 4);
    opool_destroy(p);
    CHECK_EQ_U64(s.finis, 4);
    CHECK_EQ_U64(s.right, 4);
}

static bool keep_none(void *obj, opool_handle h, void *user) {
    (void)obj, (void)h, (void)user;
    return false;
}

TEST(fini_gets_its_own_handle_on_retain) {
    self_check s;
    opool *p = self_pool(&s, OPOOL_FULL_FAIL);
    REQUIRE(p);
    fill(p, 4);
    CHECK_EQ_U64(opool_retain(p, keep_none, NULL), 4);
    CHECK_EQ_U64(s.finis, 4);
    CHECK_EQ_U64(s.right, 4);
    opool_destroy(p);
}

/* ---- determinism ------------------------------------------------------------------------ */

/* The same operations on a pool: a mix of allocs, frees, alloc_at, sort. */
static void script(opool *p, opool_handle *out, uint32_t n) {
    rng r = {99};
    opool_handle live[32];
    uint32_t count = 0;
    for (uint32_t k = 0; k < n; k++) {
        if (count < 32 && (count == 0 || rng_chance(&r, 60))) {
            int *x = opool_alloc(p, &live[count]);
            if (x) *x = (int)k;
            out[k] = live[count++];
        } else {
            uint32_t j = rng_below(&r, count);
            opool_free(p, live[j]);
            out[k] = live[j];
            live[j] = live[--count];
        }
        if (k % 50 == 49) opool_sort(p);
    }
}

static opool *script_pool(uint32_t salt) {
    opool_desc d = quiet_desc(sizeof(int), 8, salt);
    d.on_full = OPOOL_FULL_GROW;
    d.max_capacity = 64;
    d.flags |= OPOOL_ZERO;
    opool *p = NULL;
    return opool_create(&p, &d) == OPOOL_OK ? p : NULL;
}

TEST(same_salt_and_operations_give_identical_handles_and_images) {
    opool *a = script_pool(0xC0FFEE), *b = script_pool(0xC0FFEE);
    REQUIRE(a && b);
    opool_handle ha[400], hb[400];
    script(a, ha, 400);
    script(b, hb, 400);
    for (int k = 0; k < 400; k++) CHECK_EQ_U64(ha[k].bits, hb[k].bits);
    stream sa = stream_new(), sb = stream_new();
    REQUIRE(opool_save(a, stream_write, &sa) == OPOOL_OK);
    REQUIRE(opool_save(b, stream_write, &sb) == OPOOL_OK);
    CHECK_EQ_U64(sa.size, sb.size);
    CHECK(sa.size == sb.size && memcmp(sa.data, sb.data, sa.size) == 0);
    stream_free(&sa);
    stream_free(&sb);
    opool_destroy(a);
    opool_destroy(b);
}

TEST(derived_salts_make_identical_pools_write_different_images) {
    opool *a = script_pool(0), *b = script_pool(0);
    REQUIRE(a && b);
    opool_handle ha[100], hb[100];
    script(a, ha, 100);
    script(b, hb, 100);
    CHECK(ha[0].bits != hb[0].bits);
    CHECK_EQ_U64(opool_handle_index(ha[0]), opool_handle_index(hb[0]));
    stream sa = stream_new(), sb = stream_new();
    REQUIRE(opool_save(a, stream_write, &sa) == OPOOL_OK);
    REQUIRE(opool_save(b, stream_write, &sb) == OPOOL_OK);
    CHECK(sa.size != sb.size || memcmp(sa.data, sb.data, sa.size) != 0);
    stream_free(&sa);
    stream_free(&sb);
    opool_destroy(a);
    opool_destroy(b);
}

/* ---- id-only pools ------------------------------------------------------------------------ */

static opool *id_pool(uint32_t capacity, uint32_t max_capacity, opool_allocator *a) {
    opool_desc d = quiet_desc(0, capacity, SALT);
    if (max_capacity) {
        d.on_full = OPOOL_FULL_GROW;
        d.max_capacity = max_capacity;
    }
    if (a) d.allocator = *a;
    opool *p = NULL;
    return opool_create(&p, &d) == OPOOL_OK ? p : NULL;
}

TEST(id_only_pool_hands_out_handles_and_one_non_null_token) {
    opool *p = id_pool(4, 0, NULL);
    REQUIRE(p);
    opool_handle h[5];
    void *tok[5];
    for (int k = 0; k < 5; k++) tok[k] = opool_alloc(p, &h[k]);
    for (int k = 0; k < 4; k++) {
        CHECK(tok[k] != NULL);
        CHECK_EQ_PTR(tok[k], tok[0]);
        CHECK_EQ_U64(h[k].bits, handle(G1, (uint32_t)k).bits);
    }
    CHECK(tok[4] == NULL); /* full */
    CHECK(opool_handle_is_null(h[4]));
    opool_destroy(p);
}

TEST(id_only_pool_get_valid_at_and_free_work_by_handle) {
    opool *p = id_pool(4, 0, NULL);
    REQUIRE(p);
    opool_handle a, b;
    void *t = opool_alloc(p, &a);
    REQUIRE(t && opool_alloc(p, &b));
    CHECK_EQ_PTR(opool_get(p, a), t);
    CHECK(opool_valid(p, b));
    CHECK_EQ_PTR(opool_at(p, 1), t);
    CHECK(opool_at(p, 2) == NULL);
    CHECK_EQ_U64(opool_free(p, a), OPOOL_OK);
    CHECK(opool_get(p, a) == NULL);
    CHECK_EQ_U64(opool_free(p, a), OPOOL_ESTALE);
    CHECK_EQ_U64(opool_handle_at(p, 1).bits, b.bits);
    opool_handle c;
    REQUIRE(opool_alloc(p, &c));
    CHECK_EQ_U64(c.bits, handle(G1 + 2, 0).bits); /* LIFO, like any pool */
    opool_destroy(p);
}

TEST(id_only_pool_token_names_no_object) {
    opool *p = id_pool(4, 0, NULL);
    REQUIRE(p);
    opool_handle a;
    void *t = opool_alloc(p, &a);
    REQUIRE(t);
    CHECK(opool_handle_is_null(opool_handle_of(p, t)));
    CHECK_EQ_U64(opool_free_object(p, t), OPOOL_EINVAL);
    CHECK(opool_valid(p, a));
    CHECK_EQ_U64(stats_of(p).rejected_handles, 1);
    opool_destroy(p);
}

/* init gets the token; OPOOL_ZERO has no bytes to clear (the token is
 * never dereferenced), on opool_alloc and on opool_alloc_at past a growth */
typedef struct {
    int calls;
    void *last;
} token_seen;

static void see_token(void *obj, void *user) {
    token_seen *s = user;
    s->calls++;
    s->last = obj;
}

TEST(id_only_pool_with_zero_and_init_hands_init_the_token) {
    token_seen seen = {0, NULL};
    opool_desc d = quiet_desc(0, 4, SALT);
    d.on_full = OPOOL_FULL_GROW;
    d.max_capacity = 64;
    d.flags |= OPOOL_ZERO;
    d.init = see_token;
    d.user = &seen;
    opool *p = NULL;
    REQUIRE(opool_create(&p, &d) == OPOOL_OK);
    opool_handle a;
    void *t = opool_alloc(p, &a);
    REQUIRE(t);
    CHECK_EQ_U64(seen.calls, 1);
    CHECK_EQ_PTR(seen.last, t);
    opool_handle far = handle(7, 40); /* index 40: past two growths */
    CHECK_EQ_PTR(opool_alloc_at(p, far), t);
    CHECK_EQ_U64(seen.calls, 2);
    CHECK_EQ_PTR(seen.last, t);
    CHECK(opool_valid(p, far) && opool_valid(p, a));
    CHECK_EQ_U64(opool_count(p), 2);
    CHECK(opool_alloc_at(p, far) == NULL); /* live: refused, no init */
    CHECK_EQ_U64(seen.calls, 2);
    opool_destroy(p);
}

TEST(id_only_pool_costs_12_bytes_per_slot) {
    opool *small = id_pool(1000, 0, NULL), *big = id_pool(2000, 0, NULL);
    REQUIRE(small && big);
    CHECK_EQ_U64(stats_of(big).bytes - stats_of(small).bytes, 1000 * 12);
    opool_desc a = quiet_desc(0, 1000, SALT), b = quiet_desc(0, 2000, SALT);
    CHECK_EQ_U64(opool_required_bytes(&b) - opool_required_bytes(&a), 1000 * 12);
    opool_destroy(small);
    opool_destroy(big);
}

TEST(id_only_pool_grows_without_object_memory) {
    counting c;
    opool_allocator a = counting_allocator(&c);
    opool *p = id_pool(4, 64, &a);
    REQUIRE(p);
    long calls = c.calls;
    opool_handle h[64];
    for (int k = 0; k < 64; k++) REQUIRE(opool_alloc(p, &h[k]));
    CHECK(opool_alloc(p, NULL) == NULL);
    CHECK_EQ_U64(stats_of(p).grows, 4);
    CHECK(c.calls - calls <= 4); /* slot arrays only */
    CHECK_EQ_U64(c.bytes, stats_of(p).bytes);
    for (int k = 0; k < 64; k++) CHECK_EQ_U64(opool_get(p, h[k]) != NULL, 1);
    for (int k = 8; k < 64; k++) CHECK_EQ_U64(opool_free(p, h[k]), OPOOL_OK);
    CHECK_EQ_U64(opool_shrink(p), 56);
    opool_destroy(p);
    CHECK_EQ_U64(c.blocks, 0);
    CHECK_EQ_U64(c.bad_frees, 0);
}

TEST(id_only_pool_saves_and_loads) {
    opool_desc d = quiet_desc(0, 8, SALT);
    opool *p = NULL;
    REQUIRE(opool_create(&p, &d) == OPOOL_OK);
    opool_handle h[5];
    for (int k = 0; k < 5; k++) REQUIRE(opool_alloc(p, &h[k]));
    CHECK_EQ_U64(opool_free(p, h[2]), OPOOL_OK);
    stream s = stream_new();
    REQUIRE(opool_save(p, stream_write, &s) == OPOOL_OK);
    opool *q = NULL;
    REQUIRE(opool_load(&q, &d, stream_read, &s) == OPOOL_OK);
    for (int k = 0; k < 5; k++) CHECK_EQ_U64(opool_valid(q, h[k]), k != 2);
    CHECK_EQ_U64(opool_count(q), 4);
    opool_handle n1, n2;
    REQUIRE(opool_alloc(p, &n1) && opool_alloc(q, &n2));
    CHECK_EQ_U64(n1.bits, n2.bits);
    opool_desc sized = quiet_desc(4, 8, SALT); /* objects of 4 bytes: not this image */
    opool *r = NULL;
    s.pos = 0;
    CHECK_EQ_U64(opool_load(&r, &sized, stream_read, &s), OPOOL_EINVAL);
    stream_free(&s);
    opool_destroy(p);
    opool_destroy(q);
}

TEST(id_only_pool_in_a_buffer_makes_no_allocation) {
    counting c;
    opool_desc d = quiet_desc(0, 16, SALT);
    d.allocator = counting_allocator(&c);
    size_t n = opool_required_bytes(&d);
    REQUIRE(n != 0);
    void *buf = malloc(n);
    REQUIRE(buf);
    opool *p = NULL;
    REQUIRE(opool_create_in(&p, buf, n, &d) == OPOOL_OK);
    for (int k = 0; k < 16; k++) CHECK(opool_alloc(p, NULL) != NULL);
    opool_destroy(p);
    CHECK_EQ_U64(c.calls, 0);
    free(buf);
}

TEST(concurrent_pool_rejects_object_size_zero) {
    opool_desc d = quiet_desc(0, 8, SALT);
    opool_mt *m = (opool_mt *)(uintptr_t)1;
    CHECK_EQ_U64(opool_mt_create(&m, &d), OPOOL_EINVAL);
    CHECK(m == NULL);
}

/* ---- the allocator: alignments asked and told ----------------------------------------------- */

/* A growable pool through its whole life: growth, shrink, save, load, destroy. */
static void whole_life(opool_desc *d, counting *c) {
    opool *p = NULL;
    REQUIRE(opool_create(&p, d) == OPOOL_OK);
    opool_handle h[64];
    for (int k = 0; k < 64; k++) REQUIRE(opool_alloc(p, &h[k]));
    for (int k = 16; k < 64; k++) CHECK_EQ_U64(opool_free(p, h[k]), OPOOL_OK);
    CHECK(opool_shrink(p) > 0);
    for (int k = 16; k < 40; k++) REQUIRE(opool_alloc(p, &h[k]));
    stream s = stream_new();
    REQUIRE(opool_save(p, stream_write, &s) == OPOOL_OK);
    opool *q = NULL;
    REQUIRE(opool_load(&q, d, stream_read, &s) == OPOOL_OK);
    for (int k = 0; k < 40; k++) CHECK(opool_valid(q, h[k]));
    stream_free(&s);
    opool_destroy(p);
    opool_destroy(q);
    CHECK_EQ_U64(c->blocks, 0);
    CHECK_EQ_U64(c->bytes, 0);
    CHECK_EQ_U64(c->bad_frees, 0);
    CHECK_EQ_U64(c->align_mismatches, 0);
}

TEST(free_aligned_is_told_the_alignment_of_every_alloc) {
    counting c;
    opool_desc d = quiet_desc(24, 4, SALT);
    d.on_full = OPOOL_FULL_GROW;
    d.max_capacity = 64;
    d.object_align = 8;
    d.allocator = counting_allocator_aligned(&c);
    whole_life(&d, &c);
    CHECK(c.aligned_frees > 5);
    CHECK_EQ_U64(c.aligned_frees, c.frees);
}

TEST(pool_asks_no_more_alignment_than_its_objects_need) {
    counting c;
    opool_desc d = quiet_desc(24, 4, SALT);
    d.on_full = OPOOL_FULL_GROW;
    d.max_capacity = 64;
    d.object_align = 32;
    d.allocator = counting_allocator_aligned(&c);
    c.max_align = 32; /* an allocator that gives 32-byte alignment at most */
    whole_life(&d, &c);
    CHECK_EQ_U64(c.failures, 0);
    CHECK_EQ_U64(c.largest_align, 32);
}

TEST(id_only_pool_asks_for_the_header_alignment_only) {
    counting c;
    opool_desc d = quiet_desc(0, 4, SALT);
    d.on_full = OPOOL_FULL_GROW;
    d.max_capacity = 64;
    d.allocator = counting_allocator_aligned(&c);
    /* the header holds pointers and 64-bit counters: the larger alignment of the two
     * (8 on x86-64, 4 on i686, 8 on wasm32, whose uint64_t is 8-aligned beside 4-byte
     * pointers) */
    struct header_like {
        void *pointer;
        uint64_t counter;
    };
    c.max_align = _Alignof(struct header_like);
    whole_life(&d, &c);
    CHECK_EQ_U64(c.failures, 0);
}

TEST(allocator_with_free_only_still_gets_every_block_back) {
    counting c;
    opool_desc d = quiet_desc(24, 4, SALT);
    d.on_full = OPOOL_FULL_GROW;
    d.max_capacity = 64;
    d.allocator = counting_allocator(&c);
    whole_life(&d, &c);
    CHECK_EQ_U64(c.aligned_frees, 0);
    CHECK(c.frees > 5);
}

TEST(allocator_needs_alloc_with_free_or_free_aligned) {
    counting c;
    opool_desc d = quiet_desc(8, 4, SALT);
    d.allocator = counting_allocator_aligned(&c);
    d.allocator.alloc = NULL; /* free_aligned alone */
    opool *p = (opool *)(uintptr_t)1;
    CHECK_EQ_U64(opool_create(&p, &d), OPOOL_EINVAL);
    CHECK(p == NULL);
    d.allocator = counting_allocator_aligned(&c);
    d.allocator.free_aligned = NULL; /* alloc alone */
    CHECK_EQ_U64(opool_create(&p, &d), OPOOL_EINVAL);
    d.allocator = counting_allocator_aligned(&c);
    d.allocator.free = counting_free; /* both frees: free_aligned is used */
    REQUIRE(opool_create(&p, &d) == OPOOL_OK);
    opool_destroy(p);
    CHECK_EQ_U64(c.aligned_frees, 1);
    CHECK_EQ_U64(c.blocks, 0);
}

TEST(concurrent_pool_rejects_an_allocator_without_free) {
    counting c;
    opool_desc d = quiet_desc(8, 4, SALT);
    d.allocator = counting_allocator_aligned(&c);
    opool_mt *m = (opool_mt *)(uintptr_t)1;
    CHECK_EQ_U64(opool_mt_create(&m, &d), OPOOL_EINVAL);
    CHECK(m == NULL);
}

int main(void) {
    RUN(handle_at_gives_the_current_handle_of_a_live_slot);
    RUN(handle_at_of_a_free_slot_is_null);
    RUN(handle_at_out_of_range_or_null_pool_is_null);
    RUN(handle_at_of_a_retired_slot_is_null);
    RUN(handle_at_of_an_ungrown_chunk_is_null);
    RUN(free_by_index_through_handle_at);
    RUN(handle_at_is_also_an_exported_function);
    RUN(high_water_is_the_most_objects_live_at_once);
    RUN(high_water_bounds_every_index_handed_out_without_alloc_at);
    RUN(high_water_of_null_pool_is_zero);
    RUN(compact_keeps_index_low_and_generation_above_it);
    RUN(compact_index_bits_follow_the_index_limit);
    RUN(compact_then_expand_gives_the_handle_back);
    RUN(compact_of_a_handle_not_live_is_zero);
    RUN(expand_of_zero_or_a_null_pool_is_null);
    RUN(expand_of_a_stale_or_forged_compact_handle_is_null);
    RUN(expand_of_an_index_beyond_the_slots_is_null);
    RUN(stale_compact_handle_matches_only_after_the_stated_reuses);
    RUN(pool_of_one_slot_keeps_the_whole_generation);
    RUN(pool_above_2_pow_31_slots_has_no_compact_handles);
    RUN(pool_of_2_pow_31_slots_keeps_one_generation_bit);
    RUN(retire_on_wrap_retires_when_the_compact_generation_bits_wrap);
    RUN(without_retire_the_compact_wrap_reuses_the_slot);
    RUN(retire_on_wrap_with_one_generation_bit_uses_each_slot_once);
    RUN(retire_on_wrap_above_2_pow_31_keeps_the_full_period);
    RUN(compact_handles_survive_save_and_load);
    RUN(retain_frees_the_rejected_and_returns_how_many);
    RUN(retain_visits_every_live_object_once_in_backward_loop_order);
    RUN(retain_does_not_visit_objects_allocated_by_keep);
    RUN(retain_does_not_free_or_count_an_object_keep_freed);
    RUN(retain_with_null_pool_or_keep_returns_zero);
    RUN(retain_of_an_empty_pool_calls_nothing);
    RUN(foreach_gives_each_object_with_its_handle_backwards);
    RUN(foreach_may_free_the_current_object);
    RUN(foreach_break_leaves_the_loop);
    RUN(foreach_continue_goes_to_the_next_object);
    RUN(foreach_skips_indices_left_past_the_end);
    RUN(foreach_over_an_empty_or_null_pool_runs_no_body);
    RUN(foreach_loops_nest);
    RUN(typed_retain_passes_the_object_type_and_typed_handle);
    RUN(typed_foreach_handle_at_and_high_water);
    RUN(fini_gets_its_own_handle_on_free);
    RUN(fini_gets_its_own_handle_on_clear);
    RUN(fini_gets_its_own_handle_on_evict);
    RUN(fini_gets_its_own_handle_on_destroy);
    RUN(fini_gets_its_own_handle_on_retain);
    RUN(same_salt_and_operations_give_identical_handles_and_images);
    RUN(derived_salts_make_identical_pools_write_different_images);
    RUN(id_only_pool_hands_out_handles_and_one_non_null_token);
    RUN(id_only_pool_get_valid_at_and_free_work_by_handle);
    RUN(id_only_pool_token_names_no_object);
    RUN(id_only_pool_with_zero_and_init_hands_init_the_token);
    RUN(id_only_pool_costs_12_bytes_per_slot);
    RUN(id_only_pool_grows_without_object_memory);
    RUN(id_only_pool_saves_and_loads);
    RUN(id_only_pool_in_a_buffer_makes_no_allocation);
    RUN(concurrent_pool_rejects_object_size_zero);
    RUN(free_aligned_is_told_the_alignment_of_every_alloc);
    RUN(pool_asks_no_more_alignment_than_its_objects_need);
    RUN(id_only_pool_asks_for_the_header_alignment_only);
    RUN(allocator_with_free_only_still_gets_every_block_back);
    RUN(allocator_needs_alloc_with_free_or_free_aligned);
    RUN(concurrent_pool_rejects_an_allocator_without_free);
    return test_summary();
}
