/*
 * tests/relacy/deque.cpp -- opool_mt's caches under Relacy: the real
 * src/opool_mt_cache.c (included whole), the owner's
 * take and park against passing thieves (the Chase-Lev deque and the thieves
 * count of docs/CONCURRENCY.md 5), on the fence path (no membarrier: the
 * owner's light barrier and the thief's heavy barrier are both seq_cst
 * fences). See tests/relacy/README.md.
 *
 * Usage: opool_relacy_deque [ok|nobarrier]
 *   ok         the shipped code: every test must pass
 *   nobarrier  the membarrier path with a membarrier that does nothing (the
 *              owner's light barrier is then a compiler barrier only): Relacy
 *              must find a failure; the program exits 0 when it does
 */
#include <relacy/relacy.hpp>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <new>
#include <ostream>

#include "opool_platform.h"
/* The atomic fields of the records of opool_abi.h and opool_abi_mt.h, as
 * the library's atomics here: Relacy's (the inline cache hits are off under
 * OPOOL_RELACY: every call below is the library's own path). opool_mt.h
 * comes with opool_mt_internal.h, after the library's definitions of the
 * cache steps' atomics. */
#define OPOOL__ATOMIC(T) opool__atomic(T)
#include "opool.h"

/* What opool_mt_internal.h takes from the single-threaded core's headers
 * (which use C11 atomics directly, not the macro layer): the episode record
 * and the quota only ration reports; here none is ever made. */
#define OPOOL_INTERNAL_H
#define OPOOL_DIAG_H
#define OPOOL_NOINLINE
static inline uint64_t opool__episode_failures(const opool__episode *) { return 0; }
typedef struct opool__quota {
    char unused;
} opool__quota;
/* C11 keywords of opool_mt_internal.h, in C++ */
#define _Alignas(x) alignas(x)
#define _Static_assert static_assert
#define _Thread_local thread_local

#include "opool_mt_cache.c"

/* What the included file calls elsewhere (opool_mt.c, opool_platform.c).
 * Without hooks, failures, homes or a sleeping waiter none of these is
 * reached, and each fails the test if it is; the wake is the futex word's
 * bump. Two are reached: the borrow from another stripe, whose body is the
 * library's (opool__mt_borrow, opool_mt_list.h), in the same out-of-line
 * shell as opool_mt.c's; and the heavy barrier, opool_mt.c's two branches
 * (no statistics): a seq_cst fence, or membarrier when light_park. */
#define NEVER_REACHED(what) RL_ASSERT(!"reached: " what)
void opool__mt_failed(opool_mt *) { NEVER_REACHED("opool__mt_failed"); }
opool_status opool__mt_rejected(opool_mt *, opool_status s, opool_handle) {
    NEVER_REACHED("opool__mt_rejected");
    return s;
}
void opool__mt_prepare(opool_mt *, uint32_t, uint32_t, void *) { NEVER_REACHED("prepare"); }
void opool__mt_released(opool_mt *, void *) { NEVER_REACHED("released"); }
void opool__mt_settle(opool_mt *) { NEVER_REACHED("settle"); }
bool opool__mt_grow(opool_mt *, uint64_t) { /* the pool here is fixed */
    NEVER_REACHED("grow");
    return false;
}
void opool__sync_acquire(const void *) { NEVER_REACHED("sync_acquire"); }
void opool__sync_release(const void *) { NEVER_REACHED("sync_release"); }
uint64_t opool__now_ns(void) {
    NEVER_REACHED("opool__now_ns");
    return 0;
}
void opool__sleepq_wake(opool__sleepq *, opool__atomic(uint32_t) * word, uint32_t) {
    opool__atomic_fetch_add_release(word, 1);
}
void opool__sleepq_sleep(opool__sleepq *, opool__atomic(uint32_t) *, uint32_t, uint64_t) {
    NEVER_REACHED("opool__sleepq_sleep");
}
bool opool__membarrier(void) { return true; } /* nobarrier: does nothing */
void opool__mt_wake_slow(opool_mt *p, uint32_t n) {
    opool__sleepq_wake(&p->sleepq, &p->sig.epoch, n);
}
void opool__mt_sleep(opool_mt *, uint32_t, uint64_t) { NEVER_REACHED("opool__mt_sleep"); }
bool opool__mt_home_first(opool_mt *, uint32_t, uint32_t, uint64_t) {
    NEVER_REACHED("opool__mt_home_first"); /* no cache is a home here */
    return false;
}
uint32_t opool__mt_pop_other(opool_mt *p, unsigned s, uint32_t k, uint32_t *first, uint32_t *last) {
    return opool__mt_borrow(p, s, k, first, last);
}
bool opool__mt_heavy_barrier(opool_mt *p) {
    if (p->light_park) return opool__membarrier();
    opool__atomic_fence_seq_cst();
    return true;
}
/* Simulated threads share one OS thread, so the library's thread-local
 * stripe would be one for all: each gets its own instead (shared, as far as
 * the counters go). */
unsigned opool__mt_stripe_word(void) { return rl::ctx().current_thread() % OPOOL__MT_STRIPES + 1; }

enum { NSLOTS = 3, CACHE_CAP = 4 };

static bool nobarrier;

/* One cache holding slots 0 and 1 (0 the oldest), slot 2 on the shared list.
 * T0, the owner: takes its two slots (cache_alloc without refill), then
 * parks them back (cache_free's park). T1: a passing thief, as
 * opool_mt_alloc with an empty list: steals one slot with up to one extra
 * (pushed to the list), then frees what it kept to the list. T2 (second
 * test): a second thief, or (first test) pops the listed slot and pushes it
 * back. Every owner writes the slot's object (a plain variable) and a ghost
 * owner word; after(): every slot is in the cache or on the list once.
 * RUN: the owner takes both slots with one run take and parks them back with
 * one run park (the bulk calls' opool__mt_take_newest_run and
 * opool__mt_park_run) instead of two single takes and parks. */
template <int THIEVES, bool RUN = false>
struct deque_test : rl::test_suite<deque_test<THIEVES, RUN>, 3> {
    opool_mt pool;
    opool__atomic(uint32_t) next[NSLOTS];
    opool__atomic(uint32_t) gen[NSLOTS];
    opool__atomic(uint64_t) homes[NSLOTS]; /* the slots' home words: none */
    alignas(
        64) unsigned char mem[OPOOL__MT_CACHE_HEAD + CACHE_CAP * sizeof(opool__atomic(uint32_t))];
    opool_mt_cache *c;
    rl::atomic<int> owner[NSLOTS];
    rl::var<int> obj[NSLOTS];

    /* The record is raw memory followed by its entries, as the allocator
     * gives it; its atomics are C++ objects here, constructed one by one. */
    deque_test() {
        c = reinterpret_cast<opool_mt_cache *>(mem);
        new (&c->active) opool__atomic(uint32_t);
        new (&c->live) opool__atomic(int64_t);
        new (&c->bottom) opool__atomic(uint64_t);
        new (&c->top) opool__atomic(uint64_t);
        new (&c->remote) opool__atomic(uint32_t);
        for (uint32_t e = 0; e < CACHE_CAP; e++) new (&opool__mt_ent(c)[e]) opool__atomic(uint32_t);
    }
    ~deque_test() {
        typedef opool__atomic(uint32_t) a32;
        typedef opool__atomic(int64_t) a64s;
        typedef opool__atomic(uint64_t) a64;
        for (uint32_t e = 0; e < CACHE_CAP; e++) opool__mt_ent(c)[e].~a32();
        c->remote.~a32();
        c->top.~a64();
        c->bottom.~a64();
        c->live.~a64s();
        c->active.~a32();
    }

    void before() {
        pool.next = next;
        pool.gen = gen;
        pool.own = homes;
        opool__atomic_init(&pool.capacity, NSLOTS);
        pool.max_capacity = NSLOTS;
        pool.grows = false;
        pool.idx_mask = 3; /* as opool_mt_create for 3 slots */
        pool.tag_one = 4;
        pool.hooks = false;
        pool.light_park = nobarrier;
        pool.desc.flags = 0;
        pool.gen0 = 0;
        opool__atomic_init(&pool.sig.waiters, 0);
        opool__atomic_init(&pool.sig.epoch, 0);
        opool__atomic_init(&pool.sig.thieves, 0);
        opool__atomic_init(&pool.steals, 0);
        opool__atomic_init(&pool.barrier_calls, 0);
        for (uint32_t i = 0; i < NSLOTS; i++) {
            opool__atomic_init(&next[i], 0);
            opool__atomic_init(&gen[i], 0);
            opool__atomic_init(&homes[i], 0);
            owner[i].store(0, rl::mo_relaxed, RL_INFO);
            obj[i](RL_INFO) = 0;
        }
        /* slot 2 listed on stripe 0; each simulated thread has a stripe of
         * its own (opool__mt_stripe_word below): the owner's is stripe 0, the
         * thieves find it through opool__mt_pop_other */
        for (unsigned k = 0; k < OPOOL__MT_STRIPES; k++) {
            opool__atomic_init(&pool.stripes[k].head, k == 0 ? 3 : 0);
            opool__atomic_init(&pool.stripes[k].owned, 0);
            opool__atomic_init(&pool.stripes[k].live, 0);
        }
        c->pool = &pool;
        c->gen = gen; /* the pool's fixed fields, as cache_create copies them */
        c->own = homes;
        c->objects = NULL;
        c->stride = 0;
        c->sig = &pool.sig;
        c->capacity = NSLOTS;
        c->retire_at = 1;
        c->fast = 0;
        c->next_rec = NULL;
        c->mask = CACHE_CAP - 1;
        c->size = CACHE_CAP;
        c->half = CACHE_CAP / 2;
        c->home = 0;
        opool__atomic_init(&c->active, 1);
        opool__atomic_init(&c->live, 0);
        opool__atomic_init(&c->remote, OPOOL__MT_REVOKED);
        opool__atomic_init(&opool__mt_ent(c)[0], 0);
        opool__atomic_init(&opool__mt_ent(c)[1], 1);
        opool__atomic_init(&opool__mt_ent(c)[2], OPOOL__MT_EMPTY);
        opool__atomic_init(&opool__mt_ent(c)[3], OPOOL__MT_EMPTY);
        opool__atomic_init(&c->top, 0);
        opool__atomic_init(&c->bottom, 2);
        opool__atomic_init(&pool.caches, c);
    }

    void own(uint32_t i, int me) {
        RL_ASSERT(i < NSLOTS);
        int was = owner[i].exchange(me, rl::mo_relaxed, RL_INFO);
        RL_ASSERT(was == 0); /* a slot with two owners */
        obj[i](RL_INFO) = me;
        RL_ASSERT(obj[i](RL_INFO) == me);
    }
    void disown(uint32_t i, int me) {
        RL_ASSERT(obj[i](RL_INFO) == me);
        obj[i](RL_INFO) = 0;
        owner[i].store(0, rl::mo_relaxed, RL_INFO);
    }
    void free_to_list(uint32_t i, int me) {
        disown(i, me);
        opool__mt_push(&pool, i, i);
        opool__mt_freed(&pool, 1);
    }

    void thief(int me) {
        uint32_t i, first, unused;
        if (opool__mt_pop(&pool, 1, &i, &unused) == 1) {
            own(i, me);
            free_to_list(i, me);
            return;
        }
        if (opool__mt_steal(&pool, 1, 1, &first) != 1) return;
        own(first, me);
        free_to_list(first, me);
    }

    void thread(unsigned t) {
        int me = (int)t + 1;
        if (t == 0 && RUN) {
            uint32_t got[2];
            uint32_t n = opool__mt_take_newest_run(c, 2, got);
            for (uint32_t j = 0; j < n; j++) own(got[j], me);
            for (uint32_t j = 0; j < n; j++) disown(got[j], me);
            if (n) opool__mt_park_run(c, got, n);
        } else if (t == 0) {
            uint32_t a = opool__mt_take_newest(c);
            uint32_t b = opool__mt_take_newest(c);
            if (a != OPOOL__MT_EMPTY) own(a, me);
            if (b != OPOOL__MT_EMPTY) own(b, me);
            if (a != OPOOL__MT_EMPTY) {
                disown(a, me);
                opool__mt_park(c, a);
            }
            if (b != OPOOL__MT_EMPTY) {
                disown(b, me);
                opool__mt_park(c, b);
            }
        } else if (t == 1 || THIEVES == 2) {
            /* the steal path wants an empty list: take the listed slot first */
            uint32_t held = UINT32_MAX, first, unused;
            if (t == 1 && opool__mt_pop(&pool, 1, &first, &unused) == 1) own(held = first, me);
            if (opool__mt_steal(&pool, 1, 1, &first) == 1) {
                own(first, me);
                free_to_list(first, me);
            }
            if (held != UINT32_MAX) free_to_list(held, me);
        } else {
            thief(me);
        }
    }

    void after() {
        bool seen[NSLOTS] = {false};
        uint32_t n = 0;
        for (unsigned k = 0; k < OPOOL__MT_STRIPES; k++) {
            uint64_t h = pool.stripes[k].head.load(rl::mo_relaxed, RL_INFO);
            for (uint32_t t = (uint32_t)(h & pool.idx_mask); t != 0;) {
                RL_ASSERT(t <= NSLOTS && !seen[t - 1]); /* a cycle, or listed twice */
                seen[t - 1] = true;
                n++;
                t = next[t - 1].load(rl::mo_relaxed, RL_INFO);
            }
        }
        uint64_t top = c->top.load(rl::mo_relaxed, RL_INFO);
        uint64_t bottom = c->bottom.load(rl::mo_relaxed, RL_INFO);
        for (uint64_t k = top; k < bottom; k++) {
            uint32_t i = opool__mt_ent(c)[k & c->mask].load(rl::mo_relaxed, RL_INFO);
            RL_ASSERT(i < NSLOTS && !seen[i]); /* parked twice, or parked and listed */
            seen[i] = true;
            n++;
        }
        RL_ASSERT(n == NSLOTS); /* a slot lost */
        RL_ASSERT(pool.sig.thieves.load(rl::mo_relaxed, RL_INFO) == 0);
    }
};

template <class T>
static bool run(const char *name, rl::scheduler_type_e sched, unsigned long it, unsigned bound,
                bool quiet) {
    std::ostream sink(NULL); /* discards everything */
    rl::test_params params;
    params.search_type = sched;
    params.iteration_count = it;
    params.context_bound = bound;
    params.output_stream = quiet ? &sink : &std::cout;
    params.progress_stream = &sink;
    bool ok = rl::simulate<T>(params);
    printf("relacy deque %-16s %-20s after %7llu executions (%s)\n", name,
           ok ? "passed" : rl::test_result_str(params.test_result),
           (unsigned long long)params.stop_iteration,
           it           ? "random schedules"
           : bound == 1 ? "every schedule with at most 1 preemption"
                        : "every schedule with at most 2 preemptions");
    fflush(stdout);
    return ok;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "ok";
    nobarrier = strcmp(mode, "nobarrier") == 0;
    bool expect_pass = strcmp(mode, "ok") == 0;
    /* RELACY_VERBOSE=1: the broken variants print their failing history too */
    bool quiet = !expect_pass && !getenv("RELACY_VERBOSE"), all = true;
    all &= run<deque_test<1>>("owner, thief", rl::fair_context_bound_scheduler_type, 0, 1, quiet);
    all &=
        run<deque_test<2>>("owner, 2 thieves", rl::fair_context_bound_scheduler_type, 0, 1, quiet);
    all &= run<deque_test<1>>("owner, thief", rl::random_scheduler_type, 100000, 0, quiet);
    all &= run<deque_test<2>>("owner, 2 thieves", rl::random_scheduler_type, 100000, 0, quiet);
    all &=
        run<deque_test<1, true>>("run, thief", rl::fair_context_bound_scheduler_type, 0, 1, quiet);
    all &= run<deque_test<2, true>>("run, 2 thieves", rl::fair_context_bound_scheduler_type, 0, 1,
                                    quiet);
    all &= run<deque_test<1, true>>("run, thief", rl::random_scheduler_type, 100000, 0, quiet);
    if (expect_pass) return all ? 0 : 1;
    printf("relacy deque, %s: %s\n", mode,
           all ? "NOT caught: the checker has no teeth" : "caught, as it must be");
    return all ? 1 : 0;
}
