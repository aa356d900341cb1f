/*
 * test_mt_points.c -- opool_mt with a thread held at a named point of the
 * protocol (src/opool_mt_points.h), so that the windows a scheduler opens only
 * rarely are opened on purpose, every time.
 *
 * Built against opool_test_hooks, the copy of the library compiled with
 * OPOOL_TEST_HOOKS (tests/points/points.cmake). A test installs one hook,
 * on_point, and "arms" a point for a role: the next thread of that role that
 * reaches the point stops there until the test lets it go. Each thread of a
 * test runs one operation (an actor) under its own role; the main thread,
 * role 0, is never held.
 *
 * No check is on timing. A waiter that should have been woken and was not
 * sleeps for ever: the test waits for it at most LIMIT_S seconds (the code
 * under test needs microseconds), reports the failure, then frees a slot to
 * wake it so that the program ends.
 *
 *   waiter_is_not_left_asleep_by_a_refill_that_parks_every_free_slot
 *   refill_seen_by_a_waiter_keeps_only_the_slot_it_hands_out
 *   stats_parked_stays_within_capacity_while_slots_move_between_caches
 *   spill_racing_a_waiter_wakes_it, steal_racing_a_waiter_wakes_it (and
 *     the same with a waiter that comes through a cache)
 *   free_racing_a_held_waiter_wakes_it and its cache variants: a free, a
 *     cache free, a cache bulk free, against a waiter (alloc_wait or
 *     cache_alloc_wait) held between its last try and its sleep
 *   racing_frees_of_a_handle_held_in_its_home_cache_free_it_once (and the
 *     same with the rival freeing first through every other path)
 *   home_free_racing_a_held_revoker_frees_it_once
 *   alloc_racing_a_held_grower_waits_for_it_then_gets_a_new_slot,
 *   a_growth_publishes_its_capacity_before_it_lists_its_slots,
 *   a_thread_about_to_wait_for_a_growth_that_ends_is_not_left_asleep,
 *   alloc_wait_for_a_held_growth_ends_at_its_timeout,
 *   alloc_at_the_limit_fails_without_waiting_for_the_growth_word
 *   every_racer_through_every_point_keeps_the_pool_whole
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, pthread_condattr_setclock */

#include "opool_mt.h"
#include "mt_check.h" /* opool__mt_check: test support */
#include "opool_mt_points.h"
#include "opool_platform.h" /* opool__membarrier_ready: are there homes? */
#include "helpers.h"
#include "test.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#if !defined(OPOOL_TEST_HOOKS)
#error "test_mt_points needs the library built with OPOOL_TEST_HOOKS (opool_test_hooks)"
#endif

#if defined(OPOOL_TEST_TSAN) || defined(TEST_ASAN)
#define LIMIT_S 30
#else
#define LIMIT_S 10
#endif

#define SALT 0x1000u

static const char *const point_names[OPOOL__MT_POINTS] = {
    "REFILL_POPPED", "PARK_PUBLISHED", "STEAL_TAKEN", "SPILL_TAKEN",
    "BULK_POPPED",   "WAIT_SLEEP",     "STATS_SCAN",  "CLAIM_CHECKED",
    "CLAIM_STORED",  "CLAIM_BIASED",   "REVOKE_MARKED", "BORROWED",
    "GROW_WAIT",     "GROW_HELD",      "GROWN",
};

/* ---- the gate: where threads are held ------------------------------------ */

static struct {
    pthread_mutex_t m;
    pthread_cond_t cv;                      /* any change below */
    int armed[OPOOL__MT_POINTS];            /* role whose next arrival is held; 0: none */
    int held[OPOOL__MT_POINTS];             /* role held there now; 0: none */
    bool go[OPOOL__MT_POINTS];              /* the held thread may go on */
    unsigned reached[OPOOL__MT_POINTS];     /* arrivals of any thread, since reset_reached */
} G = {.m = PTHREAD_MUTEX_INITIALIZER};

static _Thread_local int my_role; /* 0: the main thread, never held */

static void on_point(opool__mt_point at, const opool_mt *p) {
    (void)p;
    pthread_mutex_lock(&G.m);
    G.reached[at]++;
    if (my_role != 0 && G.armed[at] == my_role) {
        G.armed[at] = 0;
        G.held[at] = my_role;
        G.go[at] = false;
        pthread_cond_broadcast(&G.cv);
        while (!G.go[at]) pthread_cond_wait(&G.cv, &G.m);
        G.held[at] = 0;
        G.go[at] = false;
        pthread_cond_broadcast(&G.cv);
    }
    pthread_mutex_unlock(&G.m);
}

static void arm(opool__mt_point at, int role) {
    pthread_mutex_lock(&G.m);
    G.armed[at] = role;
    pthread_mutex_unlock(&G.m);
}

static void disarm_all(void) {
    pthread_mutex_lock(&G.m);
    memset(G.armed, 0, sizeof G.armed);
    pthread_mutex_unlock(&G.m);
}

/* The condition variable's clock: CLOCK_MONOTONIC, or CLOCK_REALTIME where the
 * threads library has no other (winpthreads). */
static clockid_t cv_clock = CLOCK_MONOTONIC;

static struct timespec limit_from_now(void) {
    struct timespec t;
    clock_gettime(cv_clock, &t);
    t.tv_sec += LIMIT_S;
    return t;
}

/* ---- actors: one operation in its own thread ----------------------------- */

#define MAXH 64

typedef struct actor actor;
struct actor {
    int role;
    void (*run)(actor *);
    opool_mt *p;
    opool_mt_cache *c;
    uint32_t n;                      /* how many to allocate (bulk) */
    opool_handle in;                 /* the handle to free */
    opool_handle out[MAXH];          /* what it allocated */
    uint32_t got;                    /* how many */
    opool_mt_stats stats;            /* get_stats */
    pthread_t thread;
    bool started, done;              /* done: under G.m */
};

static void *actor_main(void *arg) {
    actor *a = (actor *)arg;
    my_role = a->role;
    opool__mt_set_stripe((unsigned)a->role); /* each actor a stripe of its own */
    a->run(a);
    pthread_mutex_lock(&G.m);
    a->done = true;
    pthread_cond_broadcast(&G.cv);
    pthread_mutex_unlock(&G.m);
    return NULL;
}

static void start(actor *a) {
    a->started = pthread_create(&a->thread, NULL, actor_main, a) == 0;
    REQUIRE(a->started);
}

static bool is_done(actor *a) {
    pthread_mutex_lock(&G.m);
    bool d = a->done;
    pthread_mutex_unlock(&G.m);
    return d;
}

/* Wait (at most LIMIT_S) until a is held at point at (1), or has finished
 * (2); 0 at the limit. at < 0: only its end. */
static int await_actor(actor *a, int at) {
    struct timespec until = limit_from_now();
    int r = 0, e = 0;
    pthread_mutex_lock(&G.m);
    for (;;) {
        if (at >= 0 && G.held[at] == a->role) {
            r = 1;
            break;
        }
        if (a->done) {
            r = 2;
            break;
        }
        if (e == ETIMEDOUT) break;
        e = pthread_cond_timedwait(&G.cv, &G.m, &until);
    }
    pthread_mutex_unlock(&G.m);
    return r;
}

/* Let the thread held at point at go on, if one is; returns once it has. */
static void let_go(opool__mt_point at) {
    pthread_mutex_lock(&G.m);
    if (G.held[at] != 0) {
        G.go[at] = true;
        pthread_cond_broadcast(&G.cv);
        while (G.held[at] != 0) pthread_cond_wait(&G.cv, &G.m);
    }
    pthread_mutex_unlock(&G.m);
}

static void join(actor *a) {
    if (a->started) pthread_join(a->thread, NULL);
    a->started = false;
}

static void run_cache_alloc(actor *a) {
    void *obj = opool_mt_cache_alloc(a->c, &a->out[0]);
    a->got = obj != NULL;
}
static void run_cache_free(actor *a) { a->got = opool_mt_cache_free(a->c, a->in) == OPOOL_OK; }
static void run_free(actor *a) { a->got = opool_mt_free(a->p, a->in) == OPOOL_OK; }
static void run_cache_free_bulk(actor *a) { a->got = opool_mt_cache_free_bulk(a->c, &a->in, 1); }
static void run_flush(actor *a) { opool_mt_cache_flush(a->c); }
static void run_alloc(actor *a) { a->got = opool_mt_alloc(a->p, &a->out[0]) != NULL; }
static void run_alloc_bulk(actor *a) { a->got = opool_mt_alloc_bulk(a->p, a->out, NULL, a->n); }
/* Let w, held asleep at OPOOL__MT_AT_WAIT_SLEEP, go: it must be served, one
 * object. If it is not, the rescue wakes it so that the test can end: a
 * flush of cache flush, else a free of h to p. Whether it was served. */
static bool waiter_served(actor *w, opool_mt *p, opool_mt_cache *flush, opool_handle h) {
    let_go(OPOOL__MT_AT_WAIT_SLEEP);
    bool served = await_actor(w, -1) == 2;
    CHECK(served);
    if (!served && flush)
        opool_mt_cache_flush(flush);
    else if (!served)
        opool_mt_free(p, h);
    join(w);
    CHECK_EQ_U64(w->got, 1);
    return served;
}

static void run_wait(actor *a) {
    a->got = opool_mt_alloc_wait(a->p, &a->out[0], OPOOL_WAIT_FOREVER) != NULL;
}
static void run_wait_1ms(actor *a) {
    a->got = opool_mt_alloc_wait(a->p, &a->out[0], 1000000) != NULL;
}
static void run_cache_wait(actor *a) {
    a->got = opool_mt_cache_alloc_wait(a->c, &a->out[0], OPOOL_WAIT_FOREVER) != NULL;
}
static void run_stats(actor *a) { opool_mt_get_stats(a->p, &a->stats); }

/* ---- pool helpers --------------------------------------------------------- */

static opool_mt *make_pool(uint32_t capacity) {
    opool_desc d = quiet_desc(16, capacity, SALT);
    opool_mt *p = NULL;
    if (opool_mt_create(&p, &d) != OPOOL_OK) return NULL;
    return p;
}

/* The pool's invariant at quiescence; a failure names ctx (if not NULL). */
static void check_mt_at(const opool_mt *p, const char *ctx, int line) {
    char why[256] = "opool__mt_check", full[400];
    if (opool__mt_check(p, why, sizeof why)) return;
    snprintf(full, sizeof full, "%s%s%s", ctx ? ctx : "", ctx ? ": " : "", why);
    test__fail_at(__FILE__, line, full, 0, 0, 0);
}
#define CHECK_MT(p) check_mt_at(p, NULL, __LINE__)

static opool_mt_stats stats_of(const opool_mt *p) {
    opool_mt_stats s;
    opool_mt_get_stats(p, &s);
    return s;
}

/* Allocate every free slot of a fresh pool through the shared path. */
static uint32_t alloc_all(opool_mt *p, opool_handle *hs, uint32_t n) {
    uint32_t k = 0;
    while (k < n && opool_mt_alloc(p, &hs[k]) != NULL) k++;
    return k;
}

/* ---- finding 1: a waiter sleeps while a refill parks every free slot ----- */

/* The figures: 2,049 slots, one held, 2,048 on the shared list; a
 * cache of 4,096 refills all 2,048 (half its size). Held between its pop and
 * its publication, it hides every free slot from a waiter, who fails its
 * last try and goes to sleep. Published, the slots must wake that waiter:
 * before the fix nothing did, and it slept for ever. */
TEST(waiter_is_not_left_asleep_by_a_refill_that_parks_every_free_slot) {
    opool_mt *p = make_pool(2049);
    REQUIRE(p != NULL);
    opool_handle kept;
    REQUIRE(opool_mt_alloc(p, &kept) != NULL);
    opool_mt_cache *c = opool_mt_cache_create(p, 4096);
    REQUIRE(c != NULL);

    actor r = {.role = 1, .run = run_cache_alloc, .p = p, .c = c};
    actor w = {.role = 2, .run = run_wait, .p = p};
    arm(OPOOL__MT_AT_REFILL_POPPED, r.role);
    arm(OPOOL__MT_AT_WAIT_SLEEP, w.role);
    start(&r);
    REQUIRE(await_actor(&r, OPOOL__MT_AT_REFILL_POPPED) == 1);
    start(&w);
    /* the waiter found nothing: the list is empty, the cache not yet filled */
    CHECK_EQ_U64(await_actor(&w, OPOOL__MT_AT_WAIT_SLEEP), 1);
    let_go(OPOOL__MT_AT_REFILL_POPPED);
    CHECK_EQ_U64(await_actor(&r, -1), 2);
    join(&r);
    CHECK_EQ_U64(r.got, 1);
    /* before the fix: asleep with 2,047 slots parked */
    (void)waiter_served(&w, NULL, c, (opool_handle){0});

    disarm_all();
    opool_mt_free(p, kept);
    opool_mt_free(p, r.out[0]);
    opool_mt_free(p, w.out[0]);
    opool_mt_cache_destroy(c);
    CHECK_EQ_U64(opool_mt_count(p), 0);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

/* The policy behind the fix: a refill that sees a waiter once its slots are
 * published keeps only the slot it hands out; the rest go to the shared
 * list (and wake the waiter), as a cache free's slot does. */
TEST(refill_seen_by_a_waiter_keeps_only_the_slot_it_hands_out) {
    opool_mt *p = make_pool(9);
    REQUIRE(p != NULL);
    opool_handle kept;
    REQUIRE(opool_mt_alloc(p, &kept) != NULL);
    opool_mt_cache *c = opool_mt_cache_create(p, 16);
    REQUIRE(c != NULL);

    actor r = {.role = 1, .run = run_cache_alloc, .p = p, .c = c};
    actor w = {.role = 2, .run = run_wait, .p = p};
    arm(OPOOL__MT_AT_REFILL_POPPED, r.role);
    arm(OPOOL__MT_AT_WAIT_SLEEP, w.role);
    start(&r);
    REQUIRE(await_actor(&r, OPOOL__MT_AT_REFILL_POPPED) == 1);
    start(&w);
    REQUIRE(await_actor(&w, OPOOL__MT_AT_WAIT_SLEEP) == 1);
    let_go(OPOOL__MT_AT_REFILL_POPPED);
    CHECK_EQ_U64(await_actor(&r, -1), 2);
    join(&r);
    CHECK_EQ_U64(r.got, 1);
    opool_mt_stats s = stats_of(p); /* the waiter is still held: nothing moves */
    CHECK_EQ_U64(s.parked, 0);
    CHECK_EQ_U64(s.count, 2);
    CHECK_EQ_U64(s.wake_calls, 1);

    (void)waiter_served(&w, NULL, c, (opool_handle){0});

    disarm_all();
    opool_mt_free(p, kept);
    opool_mt_free(p, r.out[0]);
    opool_mt_free(p, w.out[0]);
    opool_mt_cache_destroy(c);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

/* ---- finding 2: parked counted twice ------------------------------------- */

/* A pool of 64, every slot parked in cache A. get_stats counts A (64), and
 * is held before it counts B; meanwhile A is flushed and B refills all 64
 * (one handed out and freed back into B). Before the fix the call added 64
 * and 64: parked 128 in a pool of 64. */
TEST(stats_parked_stays_within_capacity_while_slots_move_between_caches) {
    enum { N = 64 };
    opool_mt *p = make_pool(N);
    REQUIRE(p != NULL);
    opool_mt_cache *b = opool_mt_cache_create(p, 2 * N); /* the registry lists b after a */
    opool_mt_cache *a = opool_mt_cache_create(p, 2 * N);
    REQUIRE(a != NULL && b != NULL);
    opool_handle hs[N];
    REQUIRE(alloc_all(p, hs, N) == N);
    for (uint32_t k = 0; k < N; k++) CHECK_EQ_U64(opool_mt_cache_free(a, hs[k]), OPOOL_OK);

    actor reader = {.role = 1, .run = run_stats, .p = p};
    arm(OPOOL__MT_AT_STATS_SCAN, reader.role);
    start(&reader);
    REQUIRE(await_actor(&reader, OPOOL__MT_AT_STATS_SCAN) == 1); /* a counted: 64 */
    opool_mt_cache_flush(a);
    opool_handle h;
    REQUIRE(opool_mt_cache_alloc(b, &h) != NULL); /* refills all 64 */
    CHECK_EQ_U64(opool_mt_cache_free(b, h), OPOOL_OK);
    let_go(OPOOL__MT_AT_STATS_SCAN);
    CHECK_EQ_U64(await_actor(&reader, -1), 2);
    join(&reader);

    CHECK_EQ_U64(reader.stats.capacity, N);
    CHECK_EQ_U64(reader.stats.count, 0);
    CHECK(reader.stats.parked <= reader.stats.capacity - reader.stats.count);
    opool_mt_stats s = stats_of(p); /* quiescent: exact */
    CHECK_EQ_U64(s.parked, N);
    CHECK_EQ_U64(s.count, 0);

    disarm_all();
    opool_mt_cache_destroy(a);
    opool_mt_cache_destroy(b);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

/* ---- the other moves that hide slots from a waiter ----------------------- */

/* Cache X of a pool of 8 holds 6 parked slots, 2 are live. A mover (a flush
 * of X, or a passing thief) is held with the 6 slots off X and not yet on
 * the shared list: a waiter fails its last try. The move must wake it. */
static void move_racing_a_waiter(opool__mt_point at, void (*move)(actor *), void (*wait)(actor *)) {
    opool_mt *p = make_pool(8);
    REQUIRE(p != NULL);
    opool_mt_cache *x = opool_mt_cache_create(p, 16);
    opool_mt_cache *wc = opool_mt_cache_create(p, 4); /* the waiter's, if it uses one */
    REQUIRE(x != NULL && wc != NULL);
    opool_handle hs[8];
    REQUIRE(alloc_all(p, hs, 8) == 8);
    for (uint32_t k = 2; k < 8; k++) CHECK_EQ_U64(opool_mt_cache_free(x, hs[k]), OPOOL_OK);

    actor m = {.role = 1, .run = move, .p = p, .c = x};
    actor w = {.role = 2, .run = wait, .p = p, .c = wc};
    arm(at, m.role);
    arm(OPOOL__MT_AT_WAIT_SLEEP, w.role);
    start(&m);
    REQUIRE(await_actor(&m, (int)at) == 1);
    start(&w);
    CHECK_EQ_U64(await_actor(&w, OPOOL__MT_AT_WAIT_SLEEP), 1);
    let_go(at);
    CHECK_EQ_U64(await_actor(&m, -1), 2);
    join(&m);
    bool served = waiter_served(&w, p, NULL, hs[0]);

    disarm_all();
    if (served) opool_mt_free(p, hs[0]);
    opool_mt_free(p, hs[1]);
    opool_mt_free(p, w.out[0]);
    if (m.got) opool_mt_free(p, m.out[0]);
    opool_mt_cache_destroy(x);
    opool_mt_cache_destroy(wc);
    CHECK_EQ_U64(opool_mt_count(p), 0);
    CHECK_EQ_U64(stats_of(p).failed_allocs, 0); /* the waiter was served */
    CHECK_MT(p);
    opool_mt_destroy(p);
}

TEST(spill_racing_a_waiter_wakes_it) {
    move_racing_a_waiter(OPOOL__MT_AT_SPILL_TAKEN, run_flush, run_wait);
}
TEST(steal_racing_a_waiter_wakes_it) {
    move_racing_a_waiter(OPOOL__MT_AT_STEAL_TAKEN, run_alloc, run_wait);
}
/* The same windows with the waiter coming through its own (empty) cache:
 * once its cache's try has failed it is opool_mt_alloc_wait's waiter. */
TEST(spill_racing_a_cache_waiter_wakes_it) {
    move_racing_a_waiter(OPOOL__MT_AT_SPILL_TAKEN, run_flush, run_cache_wait);
}
TEST(steal_racing_a_cache_waiter_wakes_it) {
    move_racing_a_waiter(OPOOL__MT_AT_STEAL_TAKEN, run_alloc, run_cache_wait);
}
/* Of a pool of 8, 4 slots are free on the main thread's stripe. An alloc
 * whose stripe is empty (H's) borrows half of them: it hands out one and is
 * held with the other off the list. The main thread takes the 2 left, so a
 * waiter that scans every stripe finds nothing and goes to sleep. H's push
 * onto its own stripe must wake it. */
static void borrow_racing_a_waiter(void (*wait)(actor *)) {
    opool_mt *p = make_pool(8);
    REQUIRE(p != NULL);
    opool_mt_cache *wc = opool_mt_cache_create(p, 4); /* the waiter's, if it uses one */
    REQUIRE(wc != NULL);
    opool_handle hs[8], mine[2];
    REQUIRE(alloc_all(p, hs, 8) == 8);
    for (uint32_t k = 4; k < 8; k++) CHECK_EQ_U64(opool_mt_free(p, hs[k]), OPOOL_OK);

    actor h = {.role = 1, .run = run_alloc, .p = p};
    actor w = {.role = 2, .run = wait, .p = p, .c = wc};
    arm(OPOOL__MT_AT_BORROWED, h.role);
    arm(OPOOL__MT_AT_WAIT_SLEEP, w.role);
    start(&h);
    REQUIRE(await_actor(&h, (int)OPOOL__MT_AT_BORROWED) == 1);
    for (uint32_t k = 0; k < 2; k++) REQUIRE(opool_mt_alloc(p, &mine[k]) != NULL);
    start(&w);
    CHECK_EQ_U64(await_actor(&w, OPOOL__MT_AT_WAIT_SLEEP), 1);
    let_go(OPOOL__MT_AT_BORROWED);
    CHECK_EQ_U64(await_actor(&h, -1), 2);
    join(&h);
    bool served = waiter_served(&w, p, NULL, hs[0]);

    disarm_all();
    for (uint32_t k = served ? 0 : 1; k < 4; k++) opool_mt_free(p, hs[k]);
    for (uint32_t k = 0; k < 2; k++) opool_mt_free(p, mine[k]);
    opool_mt_free(p, w.out[0]);
    opool_mt_free(p, h.out[0]);
    opool_mt_cache_destroy(wc);
    CHECK_EQ_U64(opool_mt_count(p), 0);
    CHECK_EQ_U64(stats_of(p).failed_allocs, 0); /* the waiter was served */
    CHECK_MT(p);
    opool_mt_destroy(p);
}

TEST(borrow_racing_a_waiter_wakes_it) { borrow_racing_a_waiter(run_wait); }
TEST(borrow_racing_a_cache_waiter_wakes_it) { borrow_racing_a_waiter(run_cache_wait); }

/* ---- a waiter held between its last try and its sleep -------------------- */

/* Every slot of a pool of 4 is live; a waiter (through its cache, or not)
 * fails its last try and is held before it sleeps, on the epoch it read
 * before that try. Then one slot is freed by free, or by a cache free
 * (which, seeing the waiter, sends the slot to the shared list), or two by
 * a cache's bulk free (whose run park, seeing the waiter, spills every
 * parked slot). The freer saw the waiter, so its wake moved the epoch: the
 * held waiter's sleep returns at once and its retry gets the slot freed
 * last. It slept and was served: not a failed alloc. */
enum { BY_FREE, BY_CACHE_FREE, BY_CACHE_FREE_BULK };
static void free_racing_a_held_waiter(void (*wait)(actor *), int by) {
    opool_mt *p = make_pool(4);
    REQUIRE(p != NULL);
    opool_mt_cache *x = opool_mt_cache_create(p, 4);  /* the freer's */
    opool_mt_cache *wc = opool_mt_cache_create(p, 4); /* the waiter's, if it uses one */
    REQUIRE(x != NULL && wc != NULL);
    opool_handle hs[4];
    REQUIRE(alloc_all(p, hs, 4) == 4);

    actor w = {.role = 2, .run = wait, .p = p, .c = wc};
    arm(OPOOL__MT_AT_WAIT_SLEEP, w.role);
    start(&w);
    REQUIRE(await_actor(&w, OPOOL__MT_AT_WAIT_SLEEP) == 1);
    uint32_t freed = 1;
    if (by == BY_CACHE_FREE_BULK)
        CHECK_EQ_U64(opool_mt_cache_free_bulk(x, hs + 2, freed = 2), 2);
    else if (by == BY_CACHE_FREE)
        CHECK_EQ_U64(opool_mt_cache_free(x, hs[3]), OPOOL_OK);
    else
        CHECK_EQ_U64(opool_mt_free(p, hs[3]), OPOOL_OK);
    opool_mt_stats s = stats_of(p); /* the waiter is still held */
    CHECK_EQ_U64(s.parked, 0);      /* the slot went where the waiter looks */
    CHECK_EQ_U64(s.wake_calls, 1);
    bool served = waiter_served(&w, p, NULL, hs[0]); /* the rescue */
    CHECK_EQ_U64(opool_handle_index(w.out[0]), opool_handle_index(hs[3]));

    s = stats_of(p);
    CHECK(s.sleeps >= 1);
    CHECK_EQ_U64(s.failed_allocs, 0);
    CHECK_EQ_U64(s.count, 4 - freed + 1);
    disarm_all();
    for (uint32_t k = 0; k < 4 - freed; k++)
        if (served || k != 0) opool_mt_free(p, hs[k]);
    opool_mt_free(p, w.out[0]);
    opool_mt_cache_destroy(x);
    opool_mt_cache_destroy(wc);
    CHECK_EQ_U64(opool_mt_count(p), 0);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

TEST(free_racing_a_held_waiter_wakes_it) { free_racing_a_held_waiter(run_wait, BY_FREE); }
TEST(cache_free_racing_a_held_waiter_wakes_it) {
    free_racing_a_held_waiter(run_wait, BY_CACHE_FREE);
}
TEST(cache_free_bulk_racing_a_held_waiter_wakes_it) {
    free_racing_a_held_waiter(run_wait, BY_CACHE_FREE_BULK);
}
TEST(free_racing_a_held_cache_waiter_wakes_it) { free_racing_a_held_waiter(run_cache_wait, BY_FREE); }
TEST(cache_free_racing_a_held_cache_waiter_wakes_it) {
    free_racing_a_held_waiter(run_cache_wait, BY_CACHE_FREE);
}

/* ---- the claim of a slot's home (docs/CONCURRENCY.md 8) ------------------ */

/* Two paths free one live handle h, homed in cache X (X allocated it): X's
 * owner H (a cache free, or a cache bulk free of one), held at one of the
 * points of its biased claim, and a rival in
 * the main thread, through the shared path, a bulk free, or another cache
 * M (single or bulk). Exactly one gets OPOOL_OK, and which one is fixed by
 * the point: before H's claim is stored the rival revokes X's bias and wins
 * with the CAS, and H's CAS then fails; once it is stored the rival finds it
 * after its barrier and gives up, and H wins (with plain stores if it read
 * X still biased, with the CAS if not). A rival that skipped the claim
 * check, or the revocation, would free h a second time: the slot would be
 * both parked in X and on the shared list. */
enum { RIVAL_FREE, RIVAL_FREE_BULK, RIVAL_CACHE_FREE, RIVAL_CACHE_FREE_BULK, RIVALS };
static const char *const rival_names[RIVALS] = {"free", "free_bulk", "cache_free",
                                                "cache_free_bulk"};

static opool_status rival_free(int how, opool_mt *p, opool_mt_cache *m, opool_handle h) {
    switch (how) {
    case RIVAL_FREE:
        return opool_mt_free(p, h);
    case RIVAL_FREE_BULK:
        return opool_mt_free_bulk(p, &h, 1) == 1 ? OPOOL_OK : OPOOL_ESTALE;
    case RIVAL_CACHE_FREE:
        return opool_mt_cache_free(m, h);
    default:
        return opool_mt_cache_free_bulk(m, &h, 1) == 1 ? OPOOL_OK : OPOOL_ESTALE;
    }
}

static void check_freed_once(opool_mt *p, opool_handle h, unsigned oks, const char *ctx,
                             int line) {
    if (oks != 1) {
        char why[160];
        snprintf(why, sizeof why, "%s: %u of the two frees of one handle succeeded", ctx, oks);
        test__fail_at(__FILE__, line, why, 0, 0, 0);
    }
    CHECK(!opool_mt_valid(p, h));
    CHECK_EQ_U64(opool_mt_count(p), 0);
    check_mt_at(p, ctx, line);
}

static void home_free_held_against_a_rival(opool__mt_point at, int how, bool home_bulk) {
    char ctx[96];
    snprintf(ctx, sizeof ctx, "home (%s) held at %s, rival %s",
             home_bulk ? "cache_free_bulk" : "cache_free", point_names[at], rival_names[how]);
    opool_mt *p = make_pool(4);
    REQUIRE(p != NULL);
    opool_mt_cache *x = opool_mt_cache_create(p, 4); /* the home */
    opool_mt_cache *m = opool_mt_cache_create(p, 4); /* the rival's, if it uses one */
    REQUIRE(x != NULL && m != NULL);
    opool_handle h;
    REQUIRE(opool_mt_cache_alloc(x, &h) != NULL);

    actor home = {.role = 1,
                  .run = home_bulk ? run_cache_free_bulk : run_cache_free,
                  .p = p,
                  .c = x,
                  .in = h};
    arm(at, home.role);
    start(&home);
    REQUIRE(await_actor(&home, (int)at) == 1);
    opool_status r = rival_free(how, p, m, h);
    let_go(at);
    CHECK_EQ_U64(await_actor(&home, -1), 2);
    join(&home);
    disarm_all();
    /* before the claim the rival wins; after it the home does */
    bool rival_first = at == OPOOL__MT_AT_CLAIM_CHECKED;
    CHECK_EQ_U64(r == OPOOL_OK, rival_first);
    CHECK_EQ_U64(home.got, !rival_first);
    check_freed_once(p, h, (r == OPOOL_OK) + home.got, ctx, __LINE__);
    opool_mt_stats s = stats_of(p);
    CHECK_EQ_U64(s.rejected_handles, 1);
    CHECK(s.barrier_calls >= 1); /* the rival revoked X's bias */
    /* a third free of h, by either path, is stale */
    CHECK_EQ_U64(opool_mt_cache_free(x, h), OPOOL_ESTALE);
    CHECK_EQ_U64(rival_free(how, p, m, h), OPOOL_ESTALE);
    /* X is revoked now: its claim is the CAS, with the same results */
    REQUIRE(opool_mt_cache_alloc(x, &h) != NULL);
    CHECK_EQ_U64(opool_mt_cache_free(x, h), OPOOL_OK);
    CHECK_EQ_U64(opool_mt_cache_free(x, h), OPOOL_ESTALE);
    opool_mt_cache_destroy(x);
    opool_mt_cache_destroy(m);
    CHECK_MT(p);
    opool_mt_destroy(p);
}

/* A cache is a home only with the process-wide barrier (light_park): without
 * it (old kernels; Wine, whose FlushProcessWriteBuffers does nothing) no
 * free passes the points of the claim and the revocation. */
static bool homes_exist(const char *test) {
    if (opool__membarrier_ready()) return true;
    printf("   %s: skipped: no process-wide barrier, so no home caches\n", test);
    return false;
}

static bool is_home_point(int at) {
    return at == OPOOL__MT_AT_CLAIM_CHECKED || at == OPOOL__MT_AT_CLAIM_STORED ||
           at == OPOOL__MT_AT_CLAIM_BIASED || at == OPOOL__MT_AT_REVOKE_MARKED;
}

TEST(racing_frees_of_a_handle_held_in_its_home_cache_free_it_once) {
    if (!homes_exist("racing_frees_of_a_handle_held_in_its_home_cache_free_it_once")) return;
    static const opool__mt_point points[] = {OPOOL__MT_AT_CLAIM_CHECKED,
                                             OPOOL__MT_AT_CLAIM_STORED, OPOOL__MT_AT_CLAIM_BIASED};
    for (unsigned k = 0; k < sizeof points / sizeof points[0]; k++)
        for (int how = 0; how < RIVALS; how++) {
            home_free_held_against_a_rival(points[k], how, false);
            home_free_held_against_a_rival(points[k], how, true);
        }
}

/* A revoker (a free of h through the shared path) held between marking X
 * revoking and its barrier; X's owner frees h meanwhile (single or bulk):
 * it reads X no longer biased and claims with the CAS, and wins; the
 * revoker, let go, finds the home's claim after its barrier and gives up.
 * With a second revoker first (another cache's free of h, in the main
 * thread): it finds X being revoked, runs its own barrier rather than wait
 * for the first's, finds no claim and wins with the CAS; the home's CAS and
 * the first revoker then fail. */
static void home_free_racing_a_held_revoker(bool bulk, bool second) {
    char ctx[96];
    snprintf(ctx, sizeof ctx, "revoker held, home %s%s", bulk ? "cache_free_bulk" : "cache_free",
             second ? ", a second revoker first" : "");
    opool_mt *p = make_pool(4);
    REQUIRE(p != NULL);
    opool_mt_cache *x = opool_mt_cache_create(p, 4);
    opool_mt_cache *m = opool_mt_cache_create(p, 4);
    REQUIRE(x != NULL && m != NULL);
    opool_handle h;
    REQUIRE(opool_mt_cache_alloc(x, &h) != NULL);

    actor rev = {.role = 1, .run = run_free, .p = p, .in = h};
    arm(OPOOL__MT_AT_REVOKE_MARKED, rev.role);
    start(&rev);
    REQUIRE(await_actor(&rev, OPOOL__MT_AT_REVOKE_MARKED) == 1);
    uint64_t barriers = stats_of(p).barrier_calls;
    opool_status other = OPOOL_ESTALE;
    if (second) {
        other = opool_mt_cache_free(m, h);
        CHECK_EQ_U64(other, OPOOL_OK);
        CHECK_EQ_U64(stats_of(p).barrier_calls, barriers + 1); /* its own barrier */
    }
    opool_status home = bulk ? (opool_mt_cache_free_bulk(x, &h, 1) == 1 ? OPOOL_OK : OPOOL_ESTALE)
                             : opool_mt_cache_free(x, h);
    CHECK_EQ_U64(home, second ? OPOOL_ESTALE : OPOOL_OK);
    let_go(OPOOL__MT_AT_REVOKE_MARKED);
    CHECK_EQ_U64(await_actor(&rev, -1), 2);
    join(&rev);
    disarm_all();
    CHECK_EQ_U64(rev.got, 0);
    check_freed_once(p, h, (home == OPOOL_OK) + (other == OPOOL_OK) + rev.got, ctx, __LINE__);
    CHECK_EQ_U64(stats_of(p).rejected_handles, 1 + second);
    opool_mt_cache_destroy(x);
    opool_mt_cache_destroy(m);
    opool_mt_destroy(p);
}

TEST(home_free_racing_a_held_revoker_frees_it_once) {
    if (!homes_exist("home_free_racing_a_held_revoker_frees_it_once")) return;
    home_free_racing_a_held_revoker(false, false);
    home_free_racing_a_held_revoker(true, false);
    home_free_racing_a_held_revoker(false, true);
}

/* ---- every racer through every point ------------------------------------- */

/* A pool of C = 8 slots; the main thread's cache M (created first) and cache
 * X (created second: every scan of the registry meets it first). For each
 * point, a scenario puts the pool in a state where one operation H reaches
 * that point, and holds H there; then one racing operation runs (in the
 * main thread, or for alloc_wait and cache_alloc_wait in a thread W held
 * before it sleeps); then
 * everything is let go. Afterwards: every get_stats said count + parked <=
 * capacity; every waiter was served while a slot was free; no slot has two
 * owners; the pool is whole (opool__mt_check) once everything is freed. */
enum { C = 8 };

typedef enum racer {
    R_NONE,
    R_ALLOC,
    R_ALLOC_BULK,
    R_CACHE_ALLOC,
    R_FREE,
    R_FREE_BULK,
    R_CACHE_FREE,
    R_CACHE_FREE_FLUSH,
    R_STATS,
    R_WAIT,
    R_CACHE_WAIT,
    R_COUNT
} racer;
static const char *const racer_names[R_COUNT] = {
    "none",      "alloc",      "alloc_bulk",       "cache_alloc",
    "free",      "free_bulk",  "cache_free",       "cache_free+flush",
    "get_stats", "alloc_wait", "cache_alloc_wait",
};

typedef struct ledger {
    opool_handle h[4 * C];
    uint32_t n;
} ledger;

static void keep(ledger *l, opool_handle h) {
    if (l->n < sizeof l->h / sizeof l->h[0]) l->h[l->n++] = h;
}

/* Remove and return the last handle (OPOOL_NULL if none). */
static opool_handle give(ledger *l) { return l->n ? l->h[--l->n] : OPOOL_NULL; }

static void check_stats_bound(const opool_mt_stats *s, const char *what) {
    if (s->version == 0) return; /* never filled */
    if (!(s->count + s->parked <= s->capacity)) {
        char why[160];
        snprintf(why, sizeof why, "%s: count %u + parked %u > capacity %u", what, s->count,
                 s->parked, s->capacity);
        test__fail_at(__FILE__, __LINE__, why, 0, 0, 0);
    }
}

static void one_pair(opool__mt_point at, racer r) {
    char ctx[96];
    snprintf(ctx, sizeof ctx, "point %s, racer %s", point_names[at], racer_names[r]);
    opool_mt *p = make_pool(C);
    REQUIRE(p != NULL);
    opool_mt_cache *wc = opool_mt_cache_create(p, 4); /* W's, if it waits through one: empty */
    opool_mt_cache *m = opool_mt_cache_create(p, 16);
    opool_mt_cache *x = opool_mt_cache_create(p, 16);
    REQUIRE(wc != NULL && m != NULL && x != NULL);
    ledger held = {{{0}}, 0};   /* live, kept by the main thread to the end */
    ledger racing = {{{0}}, 0}; /* live, the racers' to free */
    opool_handle hs[C];
    REQUIRE(alloc_all(p, hs, C) == C);
    keep(&racing, hs[0]);
    keep(&racing, hs[1]);

    actor h = {.role = 1, .p = p, .c = x};
    switch (at) {
    case OPOOL__MT_AT_REFILL_POPPED: /* 6 on the list; X refills them all */
        for (uint32_t k = 2; k < C; k++) opool_mt_free(p, hs[k]);
        h.run = run_cache_alloc;
        break;
    case OPOOL__MT_AT_PARK_PUBLISHED: /* the pool full; H frees one into X */
        for (uint32_t k = 2; k < C - 1; k++) keep(&held, hs[k]);
        h.in = hs[C - 1];
        h.run = run_cache_free;
        break;
    case OPOOL__MT_AT_STEAL_TAKEN: /* 6 parked in X; H allocs: steals 1 + 5 extra */
        for (uint32_t k = 2; k < C; k++) opool_mt_cache_free(x, hs[k]);
        h.run = run_alloc;
        break;
    case OPOOL__MT_AT_SPILL_TAKEN: /* 6 parked in X; H flushes X */
        for (uint32_t k = 2; k < C; k++) opool_mt_cache_free(x, hs[k]);
        h.run = run_flush;
        break;
    case OPOOL__MT_AT_BULK_POPPED: /* 3 on the list, 3 in X; H allocs 6 in bulk */
        for (uint32_t k = 2; k < 5; k++) opool_mt_free(p, hs[k]);
        for (uint32_t k = 5; k < C; k++) opool_mt_cache_free(x, hs[k]);
        h.n = 6;
        h.run = run_alloc_bulk;
        break;
    case OPOOL__MT_AT_WAIT_SLEEP: /* the pool full; H waits */
        for (uint32_t k = 2; k < C; k++) keep(&held, hs[k]);
        h.run = run_wait;
        break;
    case OPOOL__MT_AT_STATS_SCAN: /* 6 parked in X; H reads the stats */
        for (uint32_t k = 2; k < C; k++) opool_mt_cache_free(x, hs[k]);
        h.run = run_stats;
        break;
    case OPOOL__MT_AT_CLAIM_CHECKED: /* the pool full, one slot homed in X: H frees it */
    case OPOOL__MT_AT_CLAIM_STORED:  /* through X (the home's claim) */
    case OPOOL__MT_AT_CLAIM_BIASED:
    case OPOOL__MT_AT_REVOKE_MARKED: /* or through the shared path (a revoker) */
        for (uint32_t k = 2; k < C - 1; k++) keep(&held, hs[k]);
        opool_mt_free(p, hs[C - 1]);
        REQUIRE(opool_mt_cache_alloc(x, &h.in) != NULL);
        h.run = at == OPOOL__MT_AT_REVOKE_MARKED ? run_free : run_cache_free;
        break;
    case OPOOL__MT_AT_BORROWED: /* 6 on the main thread's stripe; H allocs from its own, empty */
        for (uint32_t k = 2; k < C; k++) opool_mt_free(p, hs[k]);
        h.run = run_alloc;
        break;
    case OPOOL__MT_AT_GROW_WAIT: /* the growth's own tests */
    case OPOOL__MT_AT_GROW_HELD:
    case OPOOL__MT_AT_GROWN:
    case OPOOL__MT_POINTS:
        break;
    }
    arm(at, h.role);
    start(&h);
    if (await_actor(&h, (int)at) != 1) {
        char why[160];
        snprintf(why, sizeof why, "%s: H never reached its point", ctx);
        test__fail_at(__FILE__, __LINE__, why, 0, 0, 0);
    }

    actor w = {.role = 2, .run = r == R_CACHE_WAIT ? run_cache_wait : run_wait, .p = p, .c = wc};
    opool_mt_stats rs = {0};
    opool_handle got[4];
    uint32_t n = 0;
    switch (r) {
    case R_NONE:
    case R_COUNT:
        break;
    case R_ALLOC:
        if (opool_mt_alloc(p, &got[0])) keep(&racing, got[0]);
        break;
    case R_ALLOC_BULK:
        n = opool_mt_alloc_bulk(p, got, NULL, 4);
        for (uint32_t k = 0; k < n; k++) keep(&racing, got[k]);
        break;
    case R_CACHE_ALLOC:
        if (opool_mt_cache_alloc(m, &got[0])) keep(&racing, got[0]);
        break;
    case R_FREE:
        CHECK_EQ_U64(opool_mt_free(p, give(&racing)), OPOOL_OK);
        break;
    case R_FREE_BULK:
        got[0] = give(&racing);
        got[1] = give(&racing);
        CHECK_EQ_U64(opool_mt_free_bulk(p, got, 2), 2);
        break;
    case R_CACHE_FREE:
        CHECK_EQ_U64(opool_mt_cache_free(m, give(&racing)), OPOOL_OK);
        break;
    case R_CACHE_FREE_FLUSH:
        CHECK_EQ_U64(opool_mt_cache_free(m, give(&racing)), OPOOL_OK);
        opool_mt_cache_flush(m);
        break;
    case R_STATS:
        opool_mt_get_stats(p, &rs);
        break;
    case R_WAIT:
    case R_CACHE_WAIT:
        arm(OPOOL__MT_AT_WAIT_SLEEP, w.role);
        start(&w);
        if (await_actor(&w, OPOOL__MT_AT_WAIT_SLEEP) == 0) {
            char why[160];
            snprintf(why, sizeof why, "%s: W neither served nor about to sleep", ctx);
            test__fail_at(__FILE__, __LINE__, why, 0, 0, 0);
        }
        break;
    }
    let_go(at);

    /* Every thread but the waiters ends now. A waiter must be served while a
     * slot is free; when none is, free one of the racing slots for it. */
    actor *waiters[2] = {h.run == run_wait ? &h : NULL, w.started ? &w : NULL};
    if (h.run != run_wait) {
        if (await_actor(&h, -1) != 2) {
            char why[160];
            snprintf(why, sizeof why, "%s: H did not finish", ctx);
            test__fail_at(__FILE__, __LINE__, why, 0, 0, 0);
        }
    }
    let_go(OPOOL__MT_AT_WAIT_SLEEP);
    for (int k = 0; k < 2; k++) {
        actor *a = waiters[k];
        if (a == NULL) continue;
        for (;;) {
            if (is_done(a)) break;
            /* only waiters run: the count is exact but for a waiter served
             * just now, which this loop then sees done */
            uint32_t live = opool_mt_count(p);
            if (live < C) {
                if (await_actor(a, -1) == 2) break;
                char why[160];
                snprintf(why, sizeof why, "%s: a waiter sleeps while %u slots are free", ctx,
                         C - live);
                test__fail_at(__FILE__, __LINE__, why, 0, 0, 0);
            }
            opool_handle f = give(&racing);
            if (f.bits == 0) f = give(&held);
            if (f.bits == 0) break;
            CHECK_EQ_U64(opool_mt_free(p, f), OPOOL_OK);
        }
    }
    join(&h);
    join(&w);
    disarm_all();

    check_stats_bound(&h.stats, ctx);
    check_stats_bound(&rs, ctx);
    /* no slot with two owners: every live handle names another slot */
    ledger all = held;
    for (uint32_t k = 0; k < racing.n; k++) keep(&all, racing.h[k]);
    if (h.run != run_cache_free && h.run != run_free && h.run != run_stats)
        for (uint32_t k = 0; k < h.got; k++) keep(&all, h.out[k]);
    if (w.got) keep(&all, w.out[0]);
    for (uint32_t i = 0; i < all.n; i++)
        for (uint32_t j = i + 1; j < all.n; j++)
            if (opool_handle_index(all.h[i]) == opool_handle_index(all.h[j])) {
                char why[160];
                snprintf(why, sizeof why, "%s: slot %u has two owners", ctx,
                         opool_handle_index(all.h[i]));
                test__fail_at(__FILE__, __LINE__, why, 0, 0, 0);
            }
    CHECK_EQ_U64(opool_mt_count(p), all.n);
    for (uint32_t i = 0; i < all.n; i++) CHECK_EQ_U64(opool_mt_free(p, all.h[i]), OPOOL_OK);
    opool_mt_cache_destroy(m);
    opool_mt_cache_destroy(x);
    opool_mt_cache_destroy(wc);
    CHECK_EQ_U64(opool_mt_count(p), 0);
    check_mt_at(p, ctx, __LINE__);
    opool_mt_destroy(p);
}

/* ---- growth (OPOOL_FULL_GROW): one grower, the others wait for it -------- */

/* A pool of 4 slots that grows to at most 1000, every slot allocated by the
 * main thread: the next alloc grows it by 64 (the least a growth adds).
 * NULL where this build makes no growing pool (mt_check.h). */
static opool_mt *make_full_growing_pool(opool_handle hs[4]) {
    if (!OPOOL_TEST_MT_GROWS) return NULL;
    opool_desc d = quiet_desc(16, 4, SALT);
    d.on_full = OPOOL_FULL_GROW;
    d.max_capacity = 1000;
    opool_mt *p = NULL;
    if (opool_mt_create(&p, &d) != OPOOL_OK) return NULL;
    if (alloc_all(p, hs, 4) != 4 || stats_of(p).grows != 0) {
        opool_mt_destroy(p);
        return NULL;
    }
    return p;
}

/* After a growth raced by g (the grower) and w: both served with new slots,
 * the pool whole, everything freed. */
static void check_grown_and_free(opool_mt *p, actor *g, actor *w, const opool_handle hs[4]) {
    CHECK_EQ_U64(g->got, 1);
    CHECK_EQ_U64(w->got, 1);
    uint32_t gi = opool_handle_index(g->out[0]), wi = opool_handle_index(w->out[0]);
    CHECK(gi >= 4 && gi < 68 && wi >= 4 && wi < 68 && gi != wi);
    CHECK(opool_mt_get(p, g->out[0]) != NULL && opool_mt_get(p, w->out[0]) != NULL);
    opool_mt_stats s = stats_of(p);
    CHECK_EQ_U64(s.capacity, 68);
    CHECK_EQ_U64(s.max_capacity, 1000);
    CHECK_EQ_U64(s.grows, 1);
    CHECK_EQ_U64(s.failed_allocs, 0);
    CHECK_MT(p);
    CHECK_EQ_U64(opool_mt_free(p, g->out[0]), OPOOL_OK);
    CHECK_EQ_U64(opool_mt_free(p, w->out[0]), OPOOL_OK);
    for (int k = 0; k < 4; k++) CHECK_EQ_U64(opool_mt_free(p, hs[k]), OPOOL_OK);
    CHECK_EQ_U64(opool_mt_count(p), 0);
    CHECK_MT(p);
}

/* g, the grower, allocs from p (full) and is held at point at; then w, an
 * alloc that finds p empty, is held where it waits for that growth. False
 * if either did not get there. */
static bool hold_grower_and_waiter(opool_mt *p, actor *g, opool__mt_point at, actor *w) {
    *g = (actor){.role = 1, .run = run_alloc, .p = p};
    *w = (actor){.role = 2, .run = run_alloc, .p = p};
    arm(at, g->role);
    start(g);
    if (await_actor(g, (int)at) != 1) return false;
    arm(OPOOL__MT_AT_GROW_WAIT, w->role);
    start(w);
    return await_actor(w, OPOOL__MT_AT_GROW_WAIT) == 1;
}

/* Both let go: each must end with a new slot; then the pool is checked,
 * emptied and destroyed. */
static void end_growth_race(opool_mt *p, actor *g, actor *w, const opool_handle hs[4]) {
    CHECK_EQ_U64(await_actor(g, -1), 2);
    join(g);
    bool served = await_actor(w, -1) == 2;
    CHECK(served);
    if (!served) return; /* w asleep for ever: the failure is reported */
    join(w);
    check_grown_and_free(p, g, w, hs);
    disarm_all();
    opool_mt_destroy(p);
}

/* While a thread grows the pool, an alloc that finds it empty waits for the
 * growth (it neither fails nor grows the pool a second time), and every call
 * that needs no new slot goes on: get, free. */
TEST(alloc_racing_a_held_grower_waits_for_it_then_gets_a_new_slot) {
    opool_handle hs[4];
    opool_mt *p = make_full_growing_pool(hs);
    if (!OPOOL_TEST_MT_GROWS) return;
    REQUIRE(p != NULL);
    actor g, w;
    REQUIRE(hold_grower_and_waiter(p, &g, OPOOL__MT_AT_GROW_HELD, &w));
    /* the grower is held: nothing else waits for it */
    CHECK(opool_mt_get(p, hs[0]) != NULL);
    CHECK_EQ_U64(opool_mt_capacity(p), 4);
    CHECK_EQ_U64(opool_mt_free(p, hs[3]), OPOOL_OK);
    CHECK(opool_mt_alloc(p, &hs[3]) != NULL); /* the slot it freed, no growth */
    CHECK_EQ_U64(opool_handle_index(hs[3]), 3);
    let_go(OPOOL__MT_AT_GROW_WAIT); /* w sleeps until the growth ends */
    let_go(OPOOL__MT_AT_GROW_HELD);
    end_growth_race(p, &g, &w, hs);
}

/* The grower publishes the new capacity before it lists the new slots: held
 * in between, the capacity is already the new one, and an alloc still finds
 * no slot (it waits for the growth). */
TEST(a_growth_publishes_its_capacity_before_it_lists_its_slots) {
    opool_handle hs[4];
    opool_mt *p = make_full_growing_pool(hs);
    if (!OPOOL_TEST_MT_GROWS) return;
    REQUIRE(p != NULL);
    actor g, w;
    REQUIRE(hold_grower_and_waiter(p, &g, OPOOL__MT_AT_GROWN, &w));
    CHECK_EQ_U64(opool_mt_capacity(p), 68);
    CHECK_EQ_U64(opool_mt_count(p), 4);
    let_go(OPOOL__MT_AT_GROW_WAIT);
    let_go(OPOOL__MT_AT_GROWN);
    end_growth_race(p, &g, &w, hs);
}

/* The lost wake-up window of a growth: w has seen the growth under way and
 * is about to sleep when the grower ends it (and wakes nobody yet asleep).
 * w's sleep must see that the growth ended, and w must be served. */
TEST(a_thread_about_to_wait_for_a_growth_that_ends_is_not_left_asleep) {
    opool_handle hs[4];
    opool_mt *p = make_full_growing_pool(hs);
    if (!OPOOL_TEST_MT_GROWS) return;
    REQUIRE(p != NULL);
    actor g, w;
    REQUIRE(hold_grower_and_waiter(p, &g, OPOOL__MT_AT_GROW_HELD, &w));
    let_go(OPOOL__MT_AT_GROW_HELD);
    CHECK_EQ_U64(await_actor(&g, -1), 2); /* the growth ended before w sleeps */
    let_go(OPOOL__MT_AT_GROW_WAIT);
    end_growth_race(p, &g, &w, hs);
}

/* alloc_wait's timeout bounds its wait for another thread's growth too:
 * with the grower held, a wait of 1 ms ends, empty-handed and counted. */
TEST(alloc_wait_for_a_held_growth_ends_at_its_timeout) {
    opool_handle hs[4];
    opool_mt *p = make_full_growing_pool(hs);
    if (!OPOOL_TEST_MT_GROWS) return;
    REQUIRE(p != NULL);
    actor g = {.role = 1, .run = run_alloc, .p = p};
    actor w = {.role = 2, .run = run_wait_1ms, .p = p};
    arm(OPOOL__MT_AT_GROW_HELD, g.role);
    start(&g);
    REQUIRE(await_actor(&g, OPOOL__MT_AT_GROW_HELD) == 1);
    start(&w);
    CHECK_EQ_U64(await_actor(&w, -1), 2); /* over while the grower is still held */
    join(&w);
    CHECK_EQ_U64(w.got, 0);
    CHECK_EQ_U64(stats_of(p).failed_allocs, 1);
    let_go(OPOOL__MT_AT_GROW_HELD);
    CHECK_EQ_U64(await_actor(&g, -1), 2);
    join(&g);
    CHECK_EQ_U64(g.got, 1);
    CHECK_EQ_U64(opool_mt_free(p, g.out[0]), OPOOL_OK);
    for (int k = 0; k < 4; k++) CHECK_EQ_U64(opool_mt_free(p, hs[k]), OPOOL_OK);
    CHECK_MT(p);
    disarm_all();
    opool_mt_destroy(p);
}

/* At its limit a pool no longer grows, and an alloc that finds no slot
 * there fails at once: it does not wait for the word of a growth. Here the
 * last growth is held after publishing the limit, its slots not yet listed:
 * an alloc fails meanwhile (those slots are in the grower's hands, as a
 * refill's are between its pop and its park). */
TEST(alloc_at_the_limit_fails_without_waiting_for_the_growth_word) {
    opool_handle hs[4];
    opool_desc d = quiet_desc(16, 4, SALT);
    d.on_full = OPOOL_FULL_GROW;
    d.max_capacity = 68; /* one growth reaches it */
    opool_mt *p = NULL;
    if (!OPOOL_TEST_MT_GROWS) return;
    REQUIRE(opool_mt_create(&p, &d) == OPOOL_OK);
    REQUIRE(alloc_all(p, hs, 4) == 4);
    actor g = {.role = 1, .run = run_alloc, .p = p};
    actor w = {.role = 2, .run = run_alloc, .p = p};
    arm(OPOOL__MT_AT_GROWN, g.role);
    start(&g);
    REQUIRE(await_actor(&g, OPOOL__MT_AT_GROWN) == 1);
    CHECK_EQ_U64(opool_mt_capacity(p), 68);
    start(&w);
    CHECK_EQ_U64(await_actor(&w, -1), 2);
    join(&w);
    CHECK_EQ_U64(w.got, 0);
    let_go(OPOOL__MT_AT_GROWN);
    CHECK_EQ_U64(await_actor(&g, -1), 2);
    join(&g);
    CHECK_EQ_U64(g.got, 1);
    opool_mt_stats st = stats_of(p);
    CHECK_EQ_U64(st.grows, 1);
    CHECK_EQ_U64(st.failed_allocs, 1);
    CHECK_EQ_U64(opool_mt_free(p, g.out[0]), OPOOL_OK);
    for (int k = 0; k < 4; k++) CHECK_EQ_U64(opool_mt_free(p, hs[k]), OPOOL_OK);
    CHECK_MT(p);
    disarm_all();
    opool_mt_destroy(p);
}

TEST(every_racer_through_every_point_keeps_the_pool_whole) {
    memset(G.reached, 0, sizeof G.reached);
    bool homes = homes_exist("every_racer_through_every_point_keeps_the_pool_whole, home points");
    /* the growth's points are the tests' above: a racer on the main thread
     * would wait for the held grower */
    for (int at = 0; at < OPOOL__MT_AT_GROW_WAIT; at++)
        for (int r = 0; r < R_COUNT; r++) {
            if (at == OPOOL__MT_AT_WAIT_SLEEP && (r == R_WAIT || r == R_CACHE_WAIT))
                continue; /* one held at a time */
            if (!homes && is_home_point(at)) continue;
            one_pair((opool__mt_point)at, (racer)r);
        }
    for (int at = 0; at < OPOOL__MT_AT_GROW_WAIT; at++)
        if (G.reached[at] == 0 && (homes || !is_home_point(at))) {
            char why[96];
            snprintf(why, sizeof why, "point %s never reached", point_names[at]);
            test__fail_at(__FILE__, __LINE__, why, 0, 0, 0);
        }
}

int main(void) {
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    if (pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) != 0) cv_clock = CLOCK_REALTIME;
    pthread_cond_init(&G.cv, &ca);
    pthread_condattr_destroy(&ca);
    opool__mt_set_point_hook(on_point);
    opool__mt_set_stripe(0); /* the main thread's frees go to stripe 0, no actor's */

    RUN(waiter_is_not_left_asleep_by_a_refill_that_parks_every_free_slot);
    RUN(refill_seen_by_a_waiter_keeps_only_the_slot_it_hands_out);
    RUN(stats_parked_stays_within_capacity_while_slots_move_between_caches);
    RUN(spill_racing_a_waiter_wakes_it);
    RUN(steal_racing_a_waiter_wakes_it);
    RUN(spill_racing_a_cache_waiter_wakes_it);
    RUN(steal_racing_a_cache_waiter_wakes_it);
    RUN(borrow_racing_a_waiter_wakes_it);
    RUN(borrow_racing_a_cache_waiter_wakes_it);
    RUN(free_racing_a_held_waiter_wakes_it);
    RUN(cache_free_racing_a_held_waiter_wakes_it);
    RUN(cache_free_bulk_racing_a_held_waiter_wakes_it);
    RUN(free_racing_a_held_cache_waiter_wakes_it);
    RUN(cache_free_racing_a_held_cache_waiter_wakes_it);
    RUN(racing_frees_of_a_handle_held_in_its_home_cache_free_it_once);
    RUN(home_free_racing_a_held_revoker_frees_it_once);
    RUN(alloc_racing_a_held_grower_waits_for_it_then_gets_a_new_slot);
    RUN(a_growth_publishes_its_capacity_before_it_lists_its_slots);
    RUN(a_thread_about_to_wait_for_a_growth_that_ends_is_not_left_asleep);
    RUN(alloc_wait_for_a_held_growth_ends_at_its_timeout);
    RUN(alloc_at_the_limit_fails_without_waiting_for_the_growth_word);
    RUN(every_racer_through_every_point_keeps_the_pool_whole);

    opool__mt_set_point_hook(NULL);
    pthread_cond_destroy(&G.cv);
    return test_summary();
}
