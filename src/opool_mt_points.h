/*
 * opool_mt_points.h -- named points of the opool_mt protocol where a test can
 * hold a thread (tests only).
 *
 * Compiled only with OPOOL_TEST_HOOKS: tests/points/points.cmake builds a
 * second copy of the library with it, opool_test_hooks, which the tests of
 * tests/points link. The shipped library (target opool, dist/opool.h without
 * the macro) has no hook: each point compiles to nothing, and the test
 * shipped_library_has_no_test_hooks checks that its archive defines no
 * symbol of this header.
 *
 * A point is a place where the thread that reaches it has done something
 * another thread can observe and has not yet done the next such thing: the
 * windows that a scheduler opens only rarely. The hook runs in the thread
 * that reaches the point and may block it for as long as it likes; nothing
 * of the pool is locked meanwhile (the library holds no lock anywhere).
 */
#ifndef OPOOL_MT_POINTS_H
#define OPOOL_MT_POINTS_H
#if defined(OPOOL_TEST_HOOKS)

struct opool_mt;

typedef enum opool__mt_point {
    /* a cache's refill has popped its slots off the shared list and holds
     * them privately; none is parked yet */
    OPOOL__MT_AT_REFILL_POPPED,
    /* a cache owner (cache_free, refill) has published parked slots (the
     * release store of bottom) and has not yet read waiters */
    OPOOL__MT_AT_PARK_PUBLISHED,
    /* a passing thief (alloc, cache_alloc's refill) has taken its slots off
     * the caches; the extra ones are not yet on the shared list */
    OPOOL__MT_AT_STEAL_TAKEN,
    /* a spill or flush has taken slots off its cache (one CAS on top) and
     * not yet pushed them to the shared list */
    OPOOL__MT_AT_SPILL_TAKEN,
    /* alloc_bulk has popped what the shared list had and not yet stolen
     * the rest */
    OPOOL__MT_AT_BULK_POPPED,
    /* alloc_wait or cache_alloc_wait (the same waiter) has made its last
     * try (pop, then steal) and failed, and is about to sleep on the epoch
     * it read before that try */
    OPOOL__MT_AT_WAIT_SLEEP,
    /* get_stats has counted the parked slots of one cache, and not yet of
     * the next */
    OPOOL__MT_AT_STATS_SCAN,
    /* a free through a slot's home cache has checked the generation and
     * not yet stored its claim (CONCURRENCY.md, "What a cache hit costs") */
    OPOOL__MT_AT_CLAIM_CHECKED,
    /* the home's free has stored its claim and not yet read its cache's
     * remote state */
    OPOOL__MT_AT_CLAIM_STORED,
    /* the home's free read its cache still biased and has not yet stored
     * the new generation */
    OPOOL__MT_AT_CLAIM_BIASED,
    /* a free by another path has marked the home cache revoking and not yet
     * run its barrier */
    OPOOL__MT_AT_REVOKE_MARKED,
    /* a pop that found its own stripe empty has taken more slots than it
     * hands out off another stripe; the rest are not yet on its own */
    OPOOL__MT_AT_BORROWED,
    /* a thread found the pool empty while another grows it, and is about
     * to wait for that growth to end (CONCURRENCY.md, "Growth") */
    OPOOL__MT_AT_GROW_WAIT,
    /* the grower holds the growth and has not yet committed the storage of
     * the new slots */
    OPOOL__MT_AT_GROW_HELD,
    /* the grower has published the new capacity and not yet pushed the new
     * slots onto the shared list */
    OPOOL__MT_AT_GROWN,
    OPOOL__MT_POINTS
} opool__mt_point;

/* Called at every point by every thread while installed. */
typedef void opool__mt_point_fn(opool__mt_point at, const struct opool_mt *p);

/* Install fn (NULL: none). Not concurrent with calls on any pool. */
void opool__mt_set_point_hook(opool__mt_point_fn *fn);
/* Reached point at (the library's files call it through OPOOL__MT_POINT). */
void opool__mt_at(const struct opool_mt *p, opool__mt_point at);

#endif /* OPOOL_TEST_HOOKS */
#endif /* OPOOL_MT_POINTS_H */
