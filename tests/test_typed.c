/*
 * test_typed.c -- typed pools (include/opool_typed.h), one behaviour per
 * test: the types flow (not one pointer cast in this file), the desc is
 * completed from the type, stale handles are rejected through the typed API,
 * iteration, save and load, and a randomised run of a typed and an untyped
 * pool driven identically, which must agree on every result.
 *
 * That mixing handles of two pool types does not compile is proven by the
 * tests of tests/typed/ (typed.cmake), not here: this file must compile.
 */
#include "opool_typed.h"
#include "helpers.h"
#include "model.h"
#include "test.h"

#include <stdalign.h>
#include <stdio.h>
#include <string.h>

#define SALT 0x1000u
#define G1 0x1001u /* first generation of every slot with SALT */

struct enemy { /* 12 bytes, alignment 4: the core's default alignment would pad it to 16 */
    float x, y;
    int hp;
};

struct wide { /* alignment 8 */
    double d;
    uint32_t tag;
};

OPOOL_TYPED(enemy_pool, struct enemy);
OPOOL_TYPED(wide_pool, struct wide);

/* Handles declared before the types that hold them: a ship targets another
 * ship of its own pool and belongs to a fleet, whose flagship is a ship. */
OPOOL_TYPED_HANDLE(ship_pool);
OPOOL_TYPED_HANDLE(fleet_pool);
struct ship {
    ship_pool_handle target;
    fleet_pool_handle fleet;
    int hp;
};
struct fleet {
    ship_pool_handle flagship;
};
OPOOL_TYPED_POOL(ship_pool, struct ship);
OPOOL_TYPED_POOL(fleet_pool, struct fleet);

/* A side table of per-ship values, keyed by ship handles only. */
struct ai {
    double aggression;
    uint32_t state;
};
OPOOL_TYPED_SIDE(ship_ai, ship_pool, struct ai);

/* Pools whose flags are fixed when this file is compiled: one with a live
 * list, one without. */
OPOOL_TYPED_FIXED(unit_pool, struct enemy, 0);
OPOOL_TYPED_FIXED(conn_pool, struct wide, OPOOL_NO_LIVE_LIST);

/* The static type of an expression, checked at compile time. */
#define HAS_TYPE(expr, T) _Generic((expr), T : 1, default : 0)

static opool_desc typed_desc(uint32_t capacity) {
    opool_desc d;
    memset(&d, 0, sizeof d);
    d.capacity = capacity;
    d.salt = SALT;
    d.flags = OPOOL_SHARE_SALT; /* twins, driven alike */
    d.report = quiet_report;
    return d;
}

static enemy_pool *enemies(uint32_t capacity) {
    opool_desc d = typed_desc(capacity);
    enemy_pool *p = NULL;
    if (enemy_pool_create(&p, &d) != OPOOL_OK) return NULL;
    return p;
}

static uintptr_t addr(const void *p) { return (uintptr_t)p; }

/* ---- types -------------------------------------------------------------- */

TEST(every_function_has_its_typed_signature) {
    enemy_pool *p = NULL;
    enemy_pool_handle h = enemy_pool_handle_null();
    struct enemy *e = NULL;
    /* unevaluated: only the static types are checked */
    _Static_assert(HAS_TYPE(enemy_pool_alloc(p, &h), struct enemy *), "alloc");
    _Static_assert(HAS_TYPE(enemy_pool_alloc_at(p, h), struct enemy *), "alloc_at");
    _Static_assert(HAS_TYPE(enemy_pool_get(p, h), struct enemy *), "get");
    _Static_assert(HAS_TYPE(enemy_pool_at(p, 0), struct enemy *), "at");
    _Static_assert(HAS_TYPE(enemy_pool_live_object(p, 0), struct enemy *), "live_object");
    _Static_assert(HAS_TYPE(enemy_pool_live_handle(p, 0), enemy_pool_handle), "live_handle");
    _Static_assert(HAS_TYPE(enemy_pool_handle_of(p, e), enemy_pool_handle), "handle_of");
    _Static_assert(HAS_TYPE(enemy_pool_handle_from(OPOOL_NULL), enemy_pool_handle), "from");
    _Static_assert(HAS_TYPE(enemy_pool_handle_raw(h), opool_handle), "raw handle");
    _Static_assert(HAS_TYPE(enemy_pool_raw(p), opool *), "raw pool");
    _Static_assert(HAS_TYPE(wide_pool_get(NULL, wide_pool_handle_null()), struct wide *), "wide");
    _Static_assert(sizeof(enemy_pool_handle) == sizeof(opool_handle), "a handle is 8 bytes");
    CHECK(e == NULL);
}

TEST(split_declarations_and_side_tables_have_their_typed_signatures) {
    ship_pool *p = NULL;
    ship_ai *s = NULL;
    ship_pool_handle h = ship_pool_handle_null();
    _Static_assert(HAS_TYPE(ship_pool_get(p, h), struct ship *), "pool of a split declaration");
    _Static_assert(HAS_TYPE(ship_pool_get(p, h)->target, ship_pool_handle), "own handle inside");
    _Static_assert(
        HAS_TYPE(fleet_pool_get(NULL, fleet_pool_handle_null())->flagship, ship_pool_handle),
        "each other's handles");
    _Static_assert(HAS_TYPE(ship_ai_put(s, h), struct ai *), "put");
    _Static_assert(HAS_TYPE(ship_ai_get(s, h), struct ai *), "get");
    _Static_assert(HAS_TYPE(ship_ai_value_at(s, 0), struct ai *), "value_at");
    _Static_assert(HAS_TYPE(ship_ai_handle_at(s, 0), ship_pool_handle), "handle_at");
    _Static_assert(HAS_TYPE(ship_ai_raw(s), opool_side *), "raw table");
    CHECK(p == NULL && s == NULL);
}

TEST(get_returns_the_object_as_its_type) {
    enemy_pool *p = enemies(4);
    REQUIRE(p != NULL);
    enemy_pool_handle h;
    struct enemy *e = enemy_pool_alloc(p, &h);
    REQUIRE(e != NULL);
    e->x = 1.5f;
    e->hp = 42;
    struct enemy *g = enemy_pool_get(p, h);
    CHECK_EQ_PTR(g, e);
    CHECK_EQ_U64(g->hp, 42);
    CHECK(g->x == 1.5f);
    CHECK_EQ_PTR(enemy_pool_get(p, h), opool_get(enemy_pool_raw(p), h.raw));
    enemy_pool_destroy(p);
}

/* ---- creation ----------------------------------------------------------- */

TEST(create_takes_size_and_alignment_from_the_type) {
    enemy_pool *p = enemies(4);
    REQUIRE(p != NULL);
    REQUIRE(enemy_pool_alloc(p, NULL) != NULL && enemy_pool_alloc(p, NULL) != NULL);
    /* stride = sizeof(struct enemy): packed like an array, not padded to max_align_t */
    CHECK_EQ_U64(addr(enemy_pool_at(p, 1)) - addr(enemy_pool_at(p, 0)), sizeof(struct enemy));
    opool_desc typed = typed_desc(100), untyped = typed_desc(100);
    untyped.object_size = sizeof(struct enemy);
    untyped.object_align = alignof(struct enemy);
    CHECK_EQ_U64(enemy_pool_required_bytes(&typed), opool_required_bytes(&untyped));
    enemy_pool_destroy(p);
}

TEST(create_keeps_a_larger_size_and_alignment) {
    opool_desc d = typed_desc(4);
    d.object_size = 100;
    d.object_align = 64;
    enemy_pool *p = NULL;
    REQUIRE(enemy_pool_create(&p, &d) == OPOOL_OK);
    struct enemy *a = enemy_pool_alloc(p, NULL), *b = enemy_pool_alloc(p, NULL);
    REQUIRE(a != NULL && b != NULL);
    CHECK_EQ_U64(addr(b) - addr(a), 128);
    CHECK_EQ_U64(addr(a) % 64, 0);
    enemy_pool_destroy(p);
}

TEST(create_rejects_what_the_core_rejects_and_a_desc_too_small_for_the_type) {
    enemy_pool *p = enemies(4);
    REQUIRE(p != NULL);
    enemy_pool *keep = p;
    CHECK_EQ_U64(enemy_pool_create(&p, NULL), OPOOL_EINVAL);
    CHECK_EQ_PTR(p, NULL); /* *out is NULL after any failure */
    CHECK_EQ_U64(enemy_pool_create(NULL, NULL), OPOOL_EINVAL);
    opool_desc d = typed_desc(4);
    d.object_size = sizeof(struct enemy) - 1;
    CHECK_EQ_U64(enemy_pool_create(&p, &d), OPOOL_EINVAL);
    d = typed_desc(4);
    d.object_align = alignof(struct enemy) / 2;
    CHECK_EQ_U64(enemy_pool_create(&p, &d), OPOOL_EINVAL);
    d = typed_desc(0);
    CHECK_EQ_U64(enemy_pool_create(&p, &d), OPOOL_EINVAL);
    d = typed_desc(4);
    d.object_align = 24; /* not a power of two: the core's rule */
    CHECK_EQ_U64(enemy_pool_create(&p, &d), OPOOL_EINVAL);
    CHECK_EQ_PTR(p, NULL);
    CHECK_EQ_U64(enemy_pool_required_bytes(NULL), 0);
    CHECK_EQ_U64(enemy_pool_create_n(&p, 0), OPOOL_EINVAL);
    enemy_pool_destroy(keep);
}

TEST(create_n_makes_a_fixed_pool_of_n_objects) {
    wide_pool *p = NULL;
    REQUIRE(wide_pool_create_n(&p, 3) == OPOOL_OK);
    CHECK_EQ_U64(wide_pool_capacity(p), 3);
    for (int i = 0; i < 3; i++) CHECK(wide_pool_alloc(p, NULL) != NULL);
    wide_pool_handle h = wide_pool_handle_from(OPOOL_NULL);
    CHECK_EQ_PTR(wide_pool_alloc(p, &h), NULL); /* full: fixed, OPOOL_FULL_FAIL */
    CHECK(wide_pool_handle_is_null(h));
    opool_stats st;
    wide_pool_stats(p, &st);
    CHECK_EQ_U64(st.failed_allocs, 1);
    CHECK_EQ_U64(addr(wide_pool_at(p, 0)) % alignof(struct wide), 0);
    wide_pool_destroy(p);
}

TEST(create_in_builds_a_typed_pool_in_a_buffer) {
    static unsigned char buf[4096];
    opool_desc d = typed_desc(16);
    size_t need = enemy_pool_required_bytes(&d);
    REQUIRE(need > 0 && need <= sizeof buf);
    enemy_pool *p = NULL;
    CHECK_EQ_U64(enemy_pool_create_in(&p, buf, need - 1, &d), OPOOL_EINVAL);
    CHECK_EQ_PTR(p, NULL);
    REQUIRE(enemy_pool_create_in(&p, buf, need, &d) == OPOOL_OK);
    struct enemy *e = enemy_pool_alloc(p, NULL);
    CHECK(addr(e) >= addr(buf) && addr(e) < addr(buf) + need);
    enemy_pool_destroy(p);
}

TEST(create_flags_makes_a_fixed_pool_with_those_flags) {
    wide_pool *p = NULL;
    REQUIRE(wide_pool_create_flags(&p, 2, OPOOL_ZERO) == OPOOL_OK);
    CHECK_EQ_U64(wide_pool_capacity(p), 2);
    wide_pool_handle h;
    struct wide *w = wide_pool_alloc(p, &h);
    REQUIRE(w != NULL);
    w->tag = 77;
    REQUIRE(wide_pool_free(p, h) == OPOOL_OK);
    w = wide_pool_alloc(p, &h); /* the same slot (LIFO), zero-filled again */
    REQUIRE(w != NULL);
    CHECK_EQ_U64(w->tag, 0);
    wide_pool_destroy(p);
    CHECK_EQ_U64(wide_pool_create_flags(&p, 2, 1u << 30), OPOOL_EINVAL); /* unknown flag */
    CHECK_EQ_PTR(p, NULL);
    CHECK_EQ_U64(wide_pool_create_flags(&p, 0, 0), OPOOL_EINVAL);
    CHECK_EQ_U64(wide_pool_create_flags(NULL, 2, 0), OPOOL_EINVAL);
}

TEST(get_stats_is_the_core_s_and_stats_is_its_old_name) {
    enemy_pool *p = enemies(4);
    REQUIRE(p != NULL);
    REQUIRE(enemy_pool_alloc(p, NULL) != NULL);
    opool_stats a, b, c;
    enemy_pool_get_stats(p, &a);
    enemy_pool_stats(p, &b);
    opool_get_stats(enemy_pool_raw(p), &c);
    CHECK_EQ_U64(a.count, 1);
    CHECK_EQ_U64(a.allocs, 1);
    CHECK(memcmp(&a, &c, sizeof a) == 0 && memcmp(&b, &c, sizeof b) == 0);
    enemy_pool_destroy(p);
}

/* ---- handles declared before their type, side tables --------------------- */

TEST(a_type_holds_handles_of_its_own_pool_declared_before_it) {
    ship_pool *ships = NULL;
    fleet_pool *fleets = NULL;
    REQUIRE(ship_pool_create_n(&ships, 4) == OPOOL_OK);
    REQUIRE(fleet_pool_create_n(&fleets, 2) == OPOOL_OK);
    ship_pool_handle a, b;
    fleet_pool_handle f;
    struct ship *sa = ship_pool_alloc(ships, &a), *sb = ship_pool_alloc(ships, &b);
    struct fleet *fl = fleet_pool_alloc(fleets, &f);
    REQUIRE(sa != NULL && sb != NULL && fl != NULL);
    sa->target = b;
    sb->target = a;
    sa->fleet = sb->fleet = f;
    fl->flagship = a;
    CHECK_EQ_PTR(ship_pool_get(ships, ship_pool_get(ships, sa->target)->target), sa);
    CHECK_EQ_PTR(ship_pool_get(ships, fleet_pool_get(fleets, sb->fleet)->flagship), sa);
    REQUIRE(ship_pool_free(ships, b) == OPOOL_OK);
    CHECK_EQ_PTR(ship_pool_get(ships, sa->target), NULL); /* its target is gone */
    fleet_pool_destroy(fleets);
    ship_pool_destroy(ships);
}

TEST(a_typed_side_table_keys_values_by_the_pool_s_handles) {
    ship_pool *ships = NULL;
    ship_ai *ai = NULL;
    REQUIRE(ship_pool_create_n(&ships, 4) == OPOOL_OK);
    REQUIRE(ship_ai_create(&ai, 4) == OPOOL_OK);
    ship_pool_handle a, b;
    REQUIRE(ship_pool_alloc(ships, &a) != NULL && ship_pool_alloc(ships, &b) != NULL);
    struct ai *x = ship_ai_put(ai, b);
    REQUIRE(x != NULL);
    CHECK_EQ_U64(addr(x) % alignof(struct ai), 0);
    CHECK(x->aggression == 0.0 && x->state == 0); /* zero-filled */
    x->state = 3;
    CHECK_EQ_PTR(ship_ai_get(ai, b), x);
    CHECK_EQ_PTR(ship_ai_get(ai, a), NULL);
    CHECK_EQ_U64(ship_ai_count(ai), 1);
    CHECK(ship_pool_handle_eq(ship_ai_handle_at(ai, 0), b));
    CHECK_EQ_PTR(ship_ai_value_at(ai, 0), x);
    CHECK_EQ_U64(opool_side_count(ship_ai_raw(ai)), 1);
    /* the ship dies and its slot is reused: its old handle finds nothing */
    REQUIRE(ship_pool_free(ships, b) == OPOOL_OK);
    ship_pool_handle c;
    REQUIRE(ship_pool_alloc(ships, &c) != NULL);
    CHECK_EQ_U64(ship_pool_handle_index(c), ship_pool_handle_index(b));
    CHECK_EQ_PTR(ship_ai_get(ai, c), NULL);
    struct ai *y = ship_ai_put(ai, c); /* replaces b's entry */
    REQUIRE(y != NULL);
    CHECK_EQ_U64(y->state, 0);
    CHECK_EQ_PTR(ship_ai_get(ai, b), NULL);
    CHECK_EQ_U64(ship_ai_remove(ai, b), OPOOL_ESTALE);
    CHECK_EQ_U64(ship_ai_remove(ai, c), OPOOL_OK);
    CHECK_EQ_U64(ship_ai_remove(ai, ship_pool_handle_null()), OPOOL_EINVAL);
    REQUIRE(ship_ai_put(ai, a) != NULL);
    ship_ai_clear(ai);
    CHECK_EQ_U64(ship_ai_count(ai), 0);
    CHECK_EQ_U64(ship_ai_create(NULL, 4), OPOOL_EINVAL);
    ship_ai *none = ai;
    CHECK_EQ_U64(ship_ai_create(&none, OPOOL_MAX_CAPACITY + 1u), OPOOL_EINVAL);
    CHECK_EQ_PTR(none, NULL);
    ship_ai_destroy(ai);
    ship_ai_destroy(NULL);
    ship_pool_destroy(ships);
}

/* ---- handles ------------------------------------------------------------ */

TEST(handle_helpers_read_the_raw_handle) {
    enemy_pool *p = enemies(4);
    REQUIRE(p != NULL);
    enemy_pool_handle n = enemy_pool_handle_null();
    CHECK(enemy_pool_handle_is_null(n));
    CHECK(opool_handle_is_null(enemy_pool_handle_raw(n)));
    enemy_pool_alloc(p, NULL);
    enemy_pool_handle h;
    REQUIRE(enemy_pool_alloc(p, &h) != NULL);
    CHECK(!enemy_pool_handle_is_null(h));
    CHECK_EQ_U64(enemy_pool_handle_index(h), 1);
    CHECK_EQ_U64(enemy_pool_handle_generation(h), G1);
    CHECK_EQ_U64(enemy_pool_handle_raw(h).bits, (uint64_t)G1 << 32 | 1);
    CHECK(enemy_pool_handle_eq(h, enemy_pool_handle_from(h.raw)));
    CHECK(!enemy_pool_handle_eq(h, n));
    CHECK(enemy_pool_handle_eq(enemy_pool_live_handle(p, 1), h));
    enemy_pool_destroy(p);
}

TEST(stale_handles_are_rejected_through_the_typed_api) {
    enemy_pool *p = enemies(4);
    REQUIRE(p != NULL);
    enemy_pool_handle h;
    struct enemy *e = enemy_pool_alloc(p, &h);
    REQUIRE(e != NULL);
    CHECK_EQ_U64(enemy_pool_free(p, h), OPOOL_OK);
    CHECK_EQ_PTR(enemy_pool_get(p, h), NULL);
    CHECK(!enemy_pool_valid(p, h));
    CHECK_EQ_U64(enemy_pool_free(p, h), OPOOL_ESTALE);
    enemy_pool_handle again;
    CHECK_EQ_PTR(enemy_pool_alloc(p, &again), e); /* LIFO: the same slot comes back */
    CHECK_EQ_U64(enemy_pool_handle_index(again), enemy_pool_handle_index(h));
    CHECK(!enemy_pool_handle_eq(again, h));
    CHECK_EQ_PTR(enemy_pool_get(p, h), NULL); /* still stale: the slot has a new generation */
    CHECK_EQ_PTR(enemy_pool_get(p, again), e);
    CHECK_EQ_U64(enemy_pool_free(p, enemy_pool_handle_null()), OPOOL_EINVAL);
    opool_stats st;
    enemy_pool_stats(p, &st);
    CHECK_EQ_U64(st.rejected_handles, 2);
    enemy_pool_destroy(p);
}

TEST(a_handle_of_another_pool_of_the_same_type_is_rejected) {
    opool_desc d = typed_desc(4);
    enemy_pool *a = NULL, *b = NULL;
    REQUIRE(enemy_pool_create(&a, &d) == OPOOL_OK);
    d.salt = SALT + 0x100; /* another pool: another generation origin */
    REQUIRE(enemy_pool_create(&b, &d) == OPOOL_OK);
    enemy_pool_handle h;
    REQUIRE(enemy_pool_alloc(a, &h) != NULL);
    REQUIRE(enemy_pool_alloc(b, NULL) != NULL);
    CHECK_EQ_PTR(enemy_pool_get(b, h), NULL); /* same type: only the salt can tell */
    CHECK_EQ_U64(enemy_pool_free(b, h), OPOOL_ESTALE);
    CHECK(enemy_pool_valid(a, h));
    enemy_pool_destroy(a);
    enemy_pool_destroy(b);
}

/* ---- objects ------------------------------------------------------------ */

TEST(alloc_without_out_allocates) {
    enemy_pool *p = enemies(2);
    REQUIRE(p != NULL);
    struct enemy *e = enemy_pool_alloc(p, NULL);
    CHECK(e != NULL);
    CHECK_EQ_U64(enemy_pool_count(p), 1);
    CHECK(enemy_pool_handle_eq(enemy_pool_handle_of(p, e), enemy_pool_live_handle(p, 0)));
    enemy_pool_destroy(p);
}

TEST(alloc_at_recreates_the_object_at_its_handle) {
    enemy_pool *p = enemies(4);
    REQUIRE(p != NULL);
    enemy_pool_handle h;
    REQUIRE(enemy_pool_alloc(p, &h) != NULL);
    CHECK_EQ_PTR(enemy_pool_alloc_at(p, h), NULL); /* live: refused */
    REQUIRE(enemy_pool_free(p, h) == OPOOL_OK);
    /* a handle of the slot's next live generation, as a saved game would hold */
    opool_handle raw = h.raw;
    raw.bits += (uint64_t)2 << 32;
    enemy_pool_handle want = enemy_pool_handle_from(raw);
    struct enemy *e = enemy_pool_alloc_at(p, want);
    REQUIRE(e != NULL);
    CHECK_EQ_PTR(enemy_pool_get(p, want), e);
    CHECK_EQ_PTR(enemy_pool_get(p, h), NULL);
    enemy_pool_destroy(p);
}

TEST(free_object_and_handle_of_go_by_pointer) {
    enemy_pool *p = enemies(4);
    REQUIRE(p != NULL);
    enemy_pool_handle h;
    struct enemy *e = enemy_pool_alloc(p, &h);
    REQUIRE(e != NULL);
    CHECK(enemy_pool_handle_eq(enemy_pool_handle_of(p, e), h));
    struct enemy local;
    CHECK(enemy_pool_handle_is_null(enemy_pool_handle_of(p, &local)));
    CHECK_EQ_U64(enemy_pool_free_object(p, &local), OPOOL_EINVAL);
    CHECK_EQ_U64(enemy_pool_free_object(p, e), OPOOL_OK);
    CHECK(!enemy_pool_valid(p, h));
    CHECK(enemy_pool_handle_is_null(enemy_pool_handle_of(p, e)));
    CHECK_EQ_U64(enemy_pool_free_object(p, e), OPOOL_EINVAL);
    enemy_pool_destroy(p);
}

TEST(at_finds_live_objects_by_index) {
    enemy_pool *p = enemies(4);
    REQUIRE(p != NULL);
    enemy_pool_handle h[3];
    for (int i = 0; i < 3; i++) REQUIRE(enemy_pool_alloc(p, &h[i]) != NULL);
    REQUIRE(enemy_pool_free(p, h[1]) == OPOOL_OK);
    CHECK_EQ_PTR(enemy_pool_at(p, 0), enemy_pool_get(p, h[0]));
    CHECK_EQ_PTR(enemy_pool_at(p, 1), NULL);
    CHECK_EQ_PTR(enemy_pool_at(p, 2), enemy_pool_get(p, h[2]));
    CHECK_EQ_PTR(enemy_pool_at(p, 3), NULL);
    CHECK_EQ_PTR(enemy_pool_at(p, 1000), NULL);
    enemy_pool_destroy(p);
}

TEST(clear_frees_everything_and_every_handle_goes_stale) {
    enemy_pool *p = enemies(4);
    REQUIRE(p != NULL);
    enemy_pool_handle h[4];
    for (int i = 0; i < 4; i++) REQUIRE(enemy_pool_alloc(p, &h[i]) != NULL);
    enemy_pool_clear(p);
    CHECK_EQ_U64(enemy_pool_count(p), 0);
    for (int i = 0; i < 4; i++) CHECK(!enemy_pool_valid(p, h[i]));
    enemy_pool_handle n;
    REQUIRE(enemy_pool_alloc(p, &n) != NULL);
    CHECK_EQ_U64(enemy_pool_handle_index(n), 0); /* like a fresh pool */
    enemy_pool_destroy(p);
}

TEST(a_null_pool_is_harmless) {
    enemy_pool_handle h = enemy_pool_handle_null();
    CHECK_EQ_PTR(enemy_pool_alloc(NULL, &h), NULL);
    CHECK(enemy_pool_handle_is_null(h));
    CHECK_EQ_PTR(enemy_pool_get(NULL, h), NULL);
    CHECK(!enemy_pool_valid(NULL, h));
    CHECK_EQ_U64(enemy_pool_free(NULL, h), OPOOL_EINVAL);
    CHECK_EQ_U64(enemy_pool_count(NULL), 0);
    CHECK_EQ_U64(enemy_pool_capacity(NULL), 0);
    CHECK_EQ_PTR(enemy_pool_live_object(NULL, 0), NULL);
    CHECK(enemy_pool_handle_is_null(enemy_pool_live_handle(NULL, 0)));
    CHECK_EQ_PTR(enemy_pool_raw(NULL), NULL);
    enemy_pool_destroy(NULL);
}

/* ---- iteration ---------------------------------------------------------- */

TEST(iteration_visits_every_live_object_once_and_may_free_it) {
    enemy_pool *p = enemies(16);
    REQUIRE(p != NULL);
    enemy_pool_handle h[16];
    for (int i = 0; i < 16; i++) {
        struct enemy *e = enemy_pool_alloc(p, &h[i]);
        REQUIRE(e != NULL);
        e->hp = i;
    }
    for (int i = 0; i < 16; i += 3) REQUIRE(enemy_pool_free(p, h[i]) == OPOOL_OK);
    unsigned seen = 0;
    for (uint32_t i = enemy_pool_count(p); i-- > 0;) {
        struct enemy *e = enemy_pool_live_object(p, i);
        REQUIRE(e != NULL);
        CHECK((seen & 1u << e->hp) == 0);
        seen |= 1u << e->hp;
        CHECK_EQ_PTR(enemy_pool_get(p, enemy_pool_live_handle(p, i)), e);
        if (e->hp % 2 == 0)
            CHECK_EQ_U64(enemy_pool_free(p, enemy_pool_live_handle(p, i)), OPOOL_OK);
    }
    unsigned want = 0;
    for (int i = 0; i < 16; i++)
        if (i % 3 != 0) want |= 1u << i;
    CHECK_EQ_U64(seen, want);
    for (uint32_t i = 0; i < enemy_pool_count(p); i++) {
        struct enemy *e = enemy_pool_live_object(p, i);
        CHECK(e->hp % 2 == 1 && e->hp % 3 != 0);
    }
    CHECK_EQ_U64(enemy_pool_count(p), 5); /* 1 5 7 11 13 */
    enemy_pool_destroy(p);
}

TEST(sort_puts_the_live_list_in_memory_order) {
    enemy_pool *p = enemies(8);
    REQUIRE(p != NULL);
    enemy_pool_handle h[8];
    for (int i = 0; i < 8; i++) REQUIRE(enemy_pool_alloc(p, &h[i]) != NULL);
    REQUIRE(enemy_pool_free(p, h[0]) == OPOOL_OK);
    REQUIRE(enemy_pool_free(p, h[3]) == OPOOL_OK); /* swap-deletes shuffle the roster */
    REQUIRE(enemy_pool_alloc(p, NULL) != NULL);
    enemy_pool_sort(p);
    for (uint32_t i = 1; i < enemy_pool_count(p); i++)
        CHECK(addr(enemy_pool_live_object(p, i - 1)) < addr(enemy_pool_live_object(p, i)));
    enemy_pool_destroy(p);
}

TEST(shrink_gives_back_grown_storage) {
    opool_desc d = typed_desc(4);
    d.on_full = OPOOL_FULL_GROW;
    d.max_capacity = 64;
    enemy_pool *p = NULL;
    REQUIRE(enemy_pool_create(&p, &d) == OPOOL_OK);
    enemy_pool_handle h[20];
    for (int i = 0; i < 20; i++) REQUIRE(enemy_pool_alloc(p, &h[i]) != NULL);
    CHECK(enemy_pool_capacity(p) >= 20);
    for (int i = 4; i < 20; i++) REQUIRE(enemy_pool_free(p, h[i]) == OPOOL_OK);
    CHECK(enemy_pool_shrink(p) > 0);
    CHECK_EQ_U64(enemy_pool_capacity(p), 4);
    for (int i = 0; i < 4; i++) CHECK(enemy_pool_valid(p, h[i]));
    for (int i = 4; i < 20; i++) CHECK(!enemy_pool_valid(p, h[i]));
    enemy_pool_destroy(p);
}

/* ---- save and load ------------------------------------------------------ */

typedef struct membuf {
    unsigned char data[8192];
    size_t size, pos;
} membuf;

static size_t mem_write(void *ctx, const void *data, size_t size) {
    membuf *m = ctx;
    if (size > sizeof m->data - m->size) return 0;
    memcpy(m->data + m->size, data, size);
    m->size += size;
    return size;
}

static size_t mem_read(void *ctx, void *data, size_t size) {
    membuf *m = ctx;
    size_t n = m->size - m->pos < size ? m->size - m->pos : size;
    memcpy(data, m->data + m->pos, n);
    m->pos += n;
    return n;
}

/* P_draw_svg draws the untyped pool's picture, byte for byte. */
TEST(draw_svg_draws_the_raw_pools_picture) {
    enemy_pool *p = enemies(8);
    REQUIRE(p != NULL);
    enemy_pool_handle h[3];
    for (int i = 0; i < 3; i++) REQUIRE(enemy_pool_alloc(p, &h[i]) != NULL);
    REQUIRE(enemy_pool_free(p, h[1]) == OPOOL_OK);
    static membuf typed, raw;
    CHECK_EQ_U64(enemy_pool_draw_svg(p, mem_write, &typed), OPOOL_OK);
    CHECK_EQ_U64(opool_draw_svg(enemy_pool_raw(p), mem_write, &raw), OPOOL_OK);
    CHECK(typed.size > 0 && typed.size == raw.size && memcmp(typed.data, raw.data, raw.size) == 0);
    CHECK_EQ_U64(enemy_pool_draw_svg(NULL, mem_write, &typed), OPOOL_EINVAL);
    enemy_pool_destroy(p);
}

TEST(save_and_load_restore_every_handle_and_object) {
    enemy_pool *p = enemies(8);
    REQUIRE(p != NULL);
    enemy_pool_handle h[5];
    for (int i = 0; i < 5; i++) {
        struct enemy *e = enemy_pool_alloc(p, &h[i]);
        REQUIRE(e != NULL);
        e->hp = 100 + i;
    }
    REQUIRE(enemy_pool_free(p, h[2]) == OPOOL_OK);
    static membuf m;
    REQUIRE(enemy_pool_save(p, mem_write, &m) == OPOOL_OK);

    opool_desc d = typed_desc(8); /* the same desc that created it */
    enemy_pool *q = NULL;
    REQUIRE(enemy_pool_load(&q, &d, mem_read, &m) == OPOOL_OK);
    CHECK_EQ_U64(enemy_pool_count(q), 4);
    for (int i = 0; i < 5; i++) {
        struct enemy *e = enemy_pool_get(q, h[i]);
        if (i == 2) {
            CHECK_EQ_PTR(e, NULL);
        } else {
            REQUIRE(e != NULL);
            CHECK_EQ_U64(e->hp, 100 + i);
        }
    }
    for (uint32_t i = 0; i < enemy_pool_count(p); i++)
        CHECK(enemy_pool_handle_eq(enemy_pool_live_handle(p, i), enemy_pool_live_handle(q, i)));
    enemy_pool_destroy(q);

    m.pos = 0;
    d.object_size = sizeof(struct enemy) + 4; /* not the saved size */
    CHECK_EQ_U64(enemy_pool_load(&q, &d, mem_read, &m), OPOOL_EINVAL);
    CHECK_EQ_PTR(q, NULL);
    m.pos = 0;
    CHECK_EQ_U64(enemy_pool_load(&q, NULL, mem_read, &m), OPOOL_EINVAL);
    enemy_pool_destroy(p);
}

TEST(save_file_and_load_file_round_trip) {
    const char *path = "typed.opool";
    enemy_pool *p = enemies(4);
    REQUIRE(p != NULL);
    enemy_pool_handle h;
    struct enemy *e = enemy_pool_alloc(p, &h);
    REQUIRE(e != NULL);
    e->hp = 7;
    REQUIRE(enemy_pool_save_file(p, path) == OPOOL_OK);
    opool_desc d = typed_desc(4);
    enemy_pool *q = NULL;
    REQUIRE(enemy_pool_load_file(&q, &d, path) == OPOOL_OK);
    struct enemy *back = enemy_pool_get(q, h);
    REQUIRE(back != NULL);
    CHECK_EQ_U64(back->hp, 7);
    enemy_pool *none = p;
    CHECK_EQ_U64(enemy_pool_load_file(&none, &d, "no-such-file"), OPOOL_ENOENT);
    CHECK_EQ_PTR(none, NULL);
    enemy_pool_destroy(p);
    enemy_pool_destroy(q);
    remove(path);
}

/* ---- typed and untyped agree -------------------------------------------- */

/* Two pools with the same desc, one driven through the typed API and one
 * through the core, with the same random calls: every result must agree
 * (handles bit for bit, statuses, counts, the live list, objects by slot). */
TEST(typed_and_untyped_pools_driven_identically_agree) {
    enum { CAP = 16, MAX = 256, STEPS = 20000, KEEP = 64 };
    opool_desc td = typed_desc(CAP);
    td.on_full = OPOOL_FULL_GROW;
    td.max_capacity = MAX;
    opool_desc ud = td;
    ud.object_size = sizeof(struct wide);
    ud.object_align = alignof(struct wide);
    wide_pool *t = NULL;
    opool *u = NULL;
    REQUIRE(wide_pool_create(&t, &td) == OPOOL_OK);
    REQUIRE(opool_create(&u, &ud) == OPOOL_OK);

    wide_pool_handle th[KEEP];
    opool_handle uh[KEEP];
    for (int i = 0; i < KEEP; i++) {
        th[i] = wide_pool_handle_null();
        uh[i] = OPOOL_NULL;
    }
    rng seed = {0x9E3779B97F4A7C15ULL}; /* helpers.h */
    int mismatches = 0;
    for (uint32_t step = 0; step < STEPS && mismatches < 5; step++) {
        uint64_t r = rng_next(&seed);
        uint32_t k = (uint32_t)(r >> 8) % KEEP, op = (uint32_t)(r % 100);
        int ok = 1;
        if (op < 40) { /* alloc into slot k of the kept handles */
            struct wide *a = wide_pool_alloc(t, &th[k]);
            struct wide *b = opool_alloc(u, &uh[k]);
            ok = (a == NULL) == (b == NULL) && th[k].raw.bits == uh[k].bits;
            if (a && b) a->tag = b->tag = step;
        } else if (op < 70) {
            ok = wide_pool_free(t, th[k]) == opool_free(u, uh[k]);
        } else if (op < 80) { /* a stale, foreign or random handle */
            opool_handle x = uh[k];
            x.bits ^= (rng_next(&seed) & 3) << 33; /* another odd generation */
            if (op < 72) x.bits = rng_next(&seed);
            ok = wide_pool_valid(t, wide_pool_handle_from(x)) == opool_valid(u, x) &&
                 wide_pool_free(t, wide_pool_handle_from(x)) == opool_free(u, x);
        } else if (op < 85) {
            struct wide *a = wide_pool_at(t, k);
            const struct wide *b = opool_at(u, k);
            ok = (a == NULL) == (b == NULL) && (a == NULL || a->tag == b->tag);
            if (a) ok = ok && wide_pool_free_object(t, a) == opool_free_object(u, opool_at(u, k));
        } else if (op < 90) {
            struct wide *a = wide_pool_alloc_at(t, th[k]);
            struct wide *b = opool_alloc_at(u, uh[k]);
            ok = (a == NULL) == (b == NULL);
            if (a && b) a->tag = b->tag = step; /* fresh objects hold whatever they held */
        } else if (op < 93) {
            wide_pool_sort(t);
            opool_sort(u);
        } else if (op < 96) {
            ok = wide_pool_shrink(t) == opool_shrink(u);
        } else if (op < 97) {
            wide_pool_clear(t);
            opool_clear(u);
        }
        /* the state after every step */
        ok = ok && wide_pool_count(t) == opool_count(u) &&
             wide_pool_capacity(t) == opool_capacity(u);
        ok = ok && (wide_pool_get(t, th[k]) == NULL) == (opool_get(u, uh[k]) == NULL);
        for (uint32_t i = 0; ok && i < wide_pool_count(t); i++) {
            const struct wide *a = wide_pool_live_object(t, i);
            const struct wide *b = opool_live_object(u, i);
            ok = wide_pool_live_handle(t, i).raw.bits == opool_live_handle(u, i).bits &&
                 a->tag == b->tag;
        }
        if (!ok) {
            mismatches++;
            fprintf(stderr, "step %u (op %u, k %u): typed and untyped disagree\n", step, op, k);
        }
        CHECK(ok);
    }
    opool_stats ts, us;
    wide_pool_stats(t, &ts);
    opool_get_stats(u, &us);
    ts.bytes = us.bytes = 0; /* the only field that may differ: none should, but it is not API */
    CHECK(memcmp(&ts, &us, sizeof ts) == 0);
    CHECK(ts.allocs > 1000 && ts.frees > 1000 && ts.grows > 0);
    wide_pool_destroy(t);
    opool_destroy(u);
}

/* ---- pools with flags fixed at compile time ------------------------------- */

TEST(a_fixed_pool_has_its_flags_and_those_its_desc_adds) {
    conn_pool *c = NULL;
    unit_pool *u = NULL;
    REQUIRE(conn_pool_create_n(&c, 8) == OPOOL_OK);
    REQUIRE(unit_pool_create_flags(&u, 8, OPOOL_ZERO) == OPOOL_OK);
    conn_pool_handle ch;
    REQUIRE(conn_pool_alloc(c, &ch) != NULL);
    CHECK(conn_pool_live_handle(c, 0).raw.bits == 0); /* no live list */
    unit_pool_handle uh;
    unit_pool_alloc(u, &uh)->hp = 9;
    CHECK_EQ_U64(unit_pool_live_handle(u, 0).raw.bits, uh.raw.bits);
    CHECK_EQ_U64(unit_pool_free(u, uh), OPOOL_OK);
    CHECK_EQ_U64(unit_pool_alloc(u, &uh)->hp, 0); /* OPOOL_ZERO */
    CHECK_EQ_U64(conn_pool_capacity(c), 8);
    unit_pool_clear(u);
    conn_pool_clear(c);
    conn_pool_destroy(c);
    unit_pool_destroy(u);
}

TEST(a_fixed_pool_refuses_growth_and_a_live_list_its_flags_lack) {
    opool_desc d = typed_desc(4);
    d.on_full = OPOOL_FULL_GROW;
    d.max_capacity = 64;
    unit_pool *u = (unit_pool *)&d; /* not NULL, so that the test sees it cleared */
    CHECK_EQ_U64(unit_pool_create(&u, &d), OPOOL_EINVAL);
    CHECK(u == NULL);
    CHECK_EQ_U64(unit_pool_required_bytes(&d), 0);
    d = typed_desc(4);
    d.flags = OPOOL_NO_LIVE_LIST; /* unit_pool's paths keep a live list */
    CHECK_EQ_U64(unit_pool_create(&u, &d), OPOOL_EINVAL);
    CHECK(u == NULL);
    conn_pool *c = NULL;
    CHECK_EQ_U64(conn_pool_create(&c, &d), OPOOL_OK); /* the flag it has anyway */
    conn_pool_destroy(c);
}

TEST(a_fixed_pool_rejects_stale_foreign_and_forged_handles) {
    opool_desc d = typed_desc(4);
    conn_pool *a = NULL, *b = NULL;
    REQUIRE(conn_pool_create(&a, &d) == OPOOL_OK);
    d.salt = SALT + 0x100;
    REQUIRE(conn_pool_create(&b, &d) == OPOOL_OK);
    conn_pool_handle h;
    struct wide *w = conn_pool_alloc(a, &h);
    REQUIRE(w != NULL);
    CHECK(conn_pool_get(a, h) == w);
    CHECK(conn_pool_valid(a, h));
    CHECK(conn_pool_get(b, h) == NULL); /* foreign: b's generations start elsewhere */
    CHECK_EQ_U64(conn_pool_free(b, h), OPOOL_ESTALE);
    opool_handle forged = h.raw;
    forged.bits = (uint64_t)G1 << 32 | 4; /* past the pool */
    CHECK(conn_pool_get(a, conn_pool_handle_from(forged)) == NULL);
    CHECK_EQ_U64(conn_pool_free(a, conn_pool_handle_from(forged)), OPOOL_EINVAL);
    forged.bits = UINT64_MAX;
    CHECK(!conn_pool_valid(a, conn_pool_handle_from(forged)));
    CHECK_EQ_U64(conn_pool_free(a, h), OPOOL_OK);
    CHECK(conn_pool_get(a, h) == NULL);
    CHECK_EQ_U64(conn_pool_free(a, h), OPOOL_ESTALE);
    CHECK(conn_pool_alloc(NULL, &h) == NULL);
    CHECK(conn_pool_handle_is_null(h));
    CHECK_EQ_U64(conn_pool_free(NULL, h), OPOOL_EINVAL);
    CHECK(conn_pool_get(NULL, h) == NULL);
    conn_pool_destroy(a);
    conn_pool_destroy(b);
}

TEST(a_fixed_pool_loads_only_the_image_of_a_pool_that_does_not_grow) {
    char path[] = "build_test_typed_fixed.opool";
    opool_desc d = typed_desc(8);
    enemy_pool *g = NULL;
    d.on_full = OPOOL_FULL_GROW;
    d.max_capacity = 32;
    REQUIRE(enemy_pool_create(&g, &d) == OPOOL_OK);
    REQUIRE(enemy_pool_save_file(g, path) == OPOOL_OK);
    unit_pool *u = NULL;
    CHECK_EQ_U64(unit_pool_load_file(&u, &d, path), OPOOL_EINVAL);
    CHECK(u == NULL);
    enemy_pool_destroy(g);

    d = typed_desc(8);
    REQUIRE(unit_pool_create(&u, &d) == OPOOL_OK);
    unit_pool_handle h;
    unit_pool_alloc(u, &h)->hp = 7;
    REQUIRE(unit_pool_save_file(u, path) == OPOOL_OK);
    unit_pool *v = NULL;
    REQUIRE(unit_pool_load_file(&v, &d, path) == OPOOL_OK);
    CHECK_EQ_U64(unit_pool_get(v, h)->hp, 7);
    enemy_pool *e = NULL; /* and into a pool of the same geometry that could grow no more */
    REQUIRE(enemy_pool_load_file(&e, &d, path) == OPOOL_OK);
    CHECK_EQ_U64(enemy_pool_get(e, enemy_pool_handle_from(h.raw))->hp, 7);
    enemy_pool_clear(e);
    enemy_pool_destroy(e);
    unit_pool_clear(u);
    unit_pool_clear(v);
    unit_pool_destroy(u);
    unit_pool_destroy(v);
    remove(path);
}

/* A fixed pool of each kind driven with random calls beside the reference
 * model (tests/model.h) of a pool made from the same desc: every handle,
 * status and lookup agrees, and the live list where there is one. */
#define FIXED_AGREES_WITH_THE_MODEL(P, FLAGS)                                                      \
    do {                                                                                           \
        enum { CAP = 64, STEPS = 40000, KEEP = 96 };                                               \
        opool_desc d = typed_desc(CAP);                                                            \
        P *p = NULL;                                                                               \
        model m;                                                                                   \
        REQUIRE(P##_create(&p, &d) == OPOOL_OK);                                                   \
        d.flags = (FLAGS) | OPOOL_FIXED;                                                           \
        REQUIRE(model_init(&m, &d, SALT));                                                         \
        P##_handle h[KEEP];                                                                        \
        for (int i = 0; i < KEEP; i++) h[i] = P##_handle_null();                                   \
        rng seed = {0xC0FFEE123ULL};                                                               \
        int bad = 0;                                                                               \
        for (uint32_t step = 0; step < STEPS && bad < 5; step++) {                                 \
            uint64_t r = rng_next(&seed), want;                                                    \
            uint32_t k = (uint32_t)(r >> 8) % KEEP, op = (uint32_t)(r % 100);                      \
            bool ok = true;                                                                        \
            model_begin(&m);                                                                       \
            if (op < 45) {                                                                         \
                bool made = model_alloc(&m, &want);                                                \
                ok = (P##_alloc(p, &h[k]) != NULL) == made && h[k].raw.bits == want;               \
            } else if (op < 85) {                                                                  \
                ok = P##_free(p, h[k]) == model_free(&m, h[k].raw.bits);                           \
            } else {                                                                               \
                opool_handle x = h[k].raw;                                                         \
                x.bits ^= (rng_next(&seed) & 3) << 33;                                             \
                if (op < 90) x.bits = rng_next(&seed) & 0xFFFFFFFF0000007Full;                     \
                ok = P##_valid(p, P##_handle_from(x)) == model_get(&m, x.bits) &&                  \
                     P##_free(p, P##_handle_from(x)) == model_free(&m, x.bits);                    \
            }                                                                                      \
            ok = ok && P##_count(p) == model_loop_start(&m) &&                                     \
                 (P##_get(p, h[k]) != NULL) == model_get(&m, h[k].raw.bits);                       \
            for (uint32_t i = 0; ok && i < m.count && model_lists(&m); i++)                        \
                ok = P##_live_handle(p, i).raw.bits == model_live_handle(&m, i);                   \
            if (!ok) {                                                                             \
                bad++;                                                                             \
                fprintf(stderr, #P ": step %u (op %u, k %u): pool and model disagree\n", step, op, \
                        k);                                                                        \
            }                                                                                      \
            CHECK(ok);                                                                             \
        }                                                                                          \
        P##_clear(p);                                                                              \
        P##_destroy(p);                                                                            \
        model_fini(&m);                                                                            \
    } while (0)

TEST(fixed_pools_driven_at_random_agree_with_the_model) {
    FIXED_AGREES_WITH_THE_MODEL(unit_pool, 0);
    FIXED_AGREES_WITH_THE_MODEL(conn_pool, OPOOL_NO_LIVE_LIST);
}

int main(void) {
    RUN(every_function_has_its_typed_signature);
    RUN(split_declarations_and_side_tables_have_their_typed_signatures);
    RUN(get_returns_the_object_as_its_type);
    RUN(create_takes_size_and_alignment_from_the_type);
    RUN(create_keeps_a_larger_size_and_alignment);
    RUN(create_rejects_what_the_core_rejects_and_a_desc_too_small_for_the_type);
    RUN(create_n_makes_a_fixed_pool_of_n_objects);
    RUN(create_in_builds_a_typed_pool_in_a_buffer);
    RUN(create_flags_makes_a_fixed_pool_with_those_flags);
    RUN(get_stats_is_the_core_s_and_stats_is_its_old_name);
    RUN(a_type_holds_handles_of_its_own_pool_declared_before_it);
    RUN(a_typed_side_table_keys_values_by_the_pool_s_handles);
    RUN(handle_helpers_read_the_raw_handle);
    RUN(stale_handles_are_rejected_through_the_typed_api);
    RUN(a_handle_of_another_pool_of_the_same_type_is_rejected);
    RUN(alloc_without_out_allocates);
    RUN(alloc_at_recreates_the_object_at_its_handle);
    RUN(free_object_and_handle_of_go_by_pointer);
    RUN(at_finds_live_objects_by_index);
    RUN(clear_frees_everything_and_every_handle_goes_stale);
    RUN(a_null_pool_is_harmless);
    RUN(iteration_visits_every_live_object_once_and_may_free_it);
    RUN(sort_puts_the_live_list_in_memory_order);
    RUN(shrink_gives_back_grown_storage);
    RUN(draw_svg_draws_the_raw_pools_picture);
    RUN(save_and_load_restore_every_handle_and_object);
    RUN(save_file_and_load_file_round_trip);
    RUN(typed_and_untyped_pools_driven_identically_agree);
    RUN(a_fixed_pool_has_its_flags_and_those_its_desc_adds);
    RUN(a_fixed_pool_refuses_growth_and_a_live_list_its_flags_lack);
    RUN(a_fixed_pool_rejects_stale_foreign_and_forged_handles);
    RUN(a_fixed_pool_loads_only_the_image_of_a_pool_that_does_not_grow);
    RUN(fixed_pools_driven_at_random_agree_with_the_model);
    return test_summary();
}
