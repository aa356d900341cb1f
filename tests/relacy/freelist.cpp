/*
 * tests/relacy/freelist.cpp -- the shared free list of opool_mt (the real
 * src/opool_mt_list.h, docs/CONCURRENCY.md 3) under Relacy, a checker of the
 * C++11 memory model: every load may return any value the model allows for
 * its memory order, not only the latest one (Spin, tests/spin, is
 * sequentially consistent only). See tests/relacy/README.md.
 *
 * The atomics of the list are opool_platform.h's macros, mapped to
 * rl::atomic by OPOOL_RELACY (tests/relacy/relacy_atomics.h). The pool record is reduced to the
 * fields the list reads (opool_mt_internal.h drags in the single-threaded core, which uses C11
 * atomics directly); the list's code itself is the shipped one.
 *
 * Usage: opool_relacy_freelist [ok|weak|untagged]
 *   ok        the shipped orders and the ABA tag: every test must pass
 *   weak      built with OPOOL_RELACY_WEAK_PUSH (push CAS relaxed) or
 *   untagged  the head without its ABA tag: Relacy must find a failure;
 *             the program exits 0 when it does
 */
#include <relacy/relacy.hpp>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ostream>

#include "opool_platform.h"

/* Only what opool_mt_list.h uses of opool_mt_internal.h: one stripe, so
 * every pop and push is on the one list this test checks (the stripes'
 * protocol is tests/relacy/deque.cpp's and tests/spin/moves.pml's). */
#define OPOOL_MT_INTERNAL_H
#define OPOOL__HOT static inline
#define OPOOL_LIKELY(x) (x)
#define OPOOL__MT_BORROW 16u
#define OPOOL__MT_STRIPES 1
#define OPOOL__MT_POINT(p, at) ((void)0)
typedef struct opool_mt {
    opool__atomic(uint32_t) * next;
    uint64_t idx_mask, tag_one;
    struct {
        opool__atomic(uint64_t) head;
    } stripes[1];
} opool_mt;
static unsigned opool__mt_my_stripe(void) { return 0; }
static uint32_t opool__mt_pop_other(opool_mt *, unsigned, uint32_t, uint32_t *, uint32_t *) {
    return 0; /* no other stripe */
}
static inline void opool__mt_freed(opool_mt *, uint32_t) {} /* the borrow's: never run here */
#include "opool_mt_list.h"

enum { NSLOTS = 3 };

static bool untagged; /* the head without its ABA tag (tag_one 0) */

/* 3 threads share a list of NSLOTS slots, 0 on top, as opool_mt_create
 * leaves it. Each popped slot's object (a plain variable: Relacy reports a
 * data race unless the push's release reaches the pop's acquire) is written
 * and read back by its owner, and a ghost owner word asserts that nobody
 * else holds it. after(): every slot is back on the list exactly once. */
template <int BULK> struct freelist_test : rl::test_suite<freelist_test<BULK>, 3> {
    opool_mt pool;
    opool__atomic(uint32_t) next[NSLOTS];
    rl::atomic<int> owner[NSLOTS]; /* ghost: relaxed RMW orders nothing */
    rl::var<int> obj[NSLOTS];

    void before() {
        pool.next = next;
        uint32_t bits = 1;
        while (bits < 32 && ((uint64_t)1 << bits) <= NSLOTS) bits++;
        pool.idx_mask = untagged ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
        pool.tag_one = pool.idx_mask + 1;
        for (uint32_t i = 0; i < NSLOTS; i++) {
            opool__atomic_init(&next[i], i + 2 <= NSLOTS ? i + 2 : 0);
            owner[i].store(0, rl::mo_relaxed, RL_INFO);
            obj[i](RL_INFO) = 0;
        }
        opool__atomic_init(&pool.stripes[0].head, 1);
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

    uint32_t pop1(int me) {
        uint32_t i;
        uint32_t last;
        if (opool__mt_pop(&pool, 1, &i, &last) != 1) return UINT32_MAX;
        own(i, me);
        return i;
    }
    void push1(uint32_t i, int me) {
        if (i == UINT32_MAX) return;
        disown(i, me);
        opool__mt_push(&pool, i, i);
    }

    void thread(unsigned t) {
        int me = (int)t + 1;
        if (t == 1 && BULK) {
            /* one bulk pop of 2 (one CAS), then the chain pushed back whole */
            uint32_t first, chain_end, n = opool__mt_pop(&pool, 2, &first, &chain_end);
            if (n == 0) return;
            uint32_t last = first;
            own(first, me);
            if (n == 2) {
                last = opool__mt_link_of(&pool, first);
                own(last, me);
                disown(last, me);
            }
            RL_ASSERT(chain_end == last); /* the pop's own account of its chain */
            disown(first, me);
            opool__mt_push(&pool, first, last); /* still linked by the pop */
        } else if (t < 2) {
            /* pop A, pop B, push A, push B: A back on top while B is held */
            uint32_t a = pop1(me), b = pop1(me);
            push1(a, me);
            push1(b, me);
        } else {
            push1(pop1(me), me);
        }
    }

    void after() {
        bool seen[NSLOTS] = {false};
        uint32_t t = (uint32_t)(pool.stripes[0].head.load(rl::mo_relaxed, RL_INFO) & pool.idx_mask),
                 n = 0;
        while (t != 0) {
            RL_ASSERT(t <= NSLOTS);
            RL_ASSERT(!seen[t - 1]); /* a cycle, or a slot listed twice */
            seen[t - 1] = true;
            n++;
            t = next[t - 1].load(rl::mo_relaxed, RL_INFO);
        }
        RL_ASSERT(n == NSLOTS); /* a slot lost */
    }
};

/* Runs test T. Relacy's report (and a failure's history) goes to stdout
 * unless quiet (the broken variants, whose failure is expected, print one
 * line). No string stream: Relacy replaces operator new inside a run. */
template <class T>
static bool run(const char *name, rl::scheduler_type_e sched, unsigned long it, bool quiet) {
    std::ostream sink(NULL); /* discards everything */
    rl::test_params params;
    params.search_type = sched;
    params.iteration_count = it;
    params.context_bound = 2;
    params.output_stream = quiet ? &sink : &std::cout;
    params.progress_stream = &sink;
    bool ok = rl::simulate<T>(params);
    printf("relacy freelist %-14s %-20s after %7llu executions (%s)\n", name,
           ok ? "passed" : rl::test_result_str(params.test_result),
           (unsigned long long)params.stop_iteration,
           it ? "random schedules" : "every schedule with at most 2 preemptions");
    fflush(stdout);
    return ok;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "ok";
    untagged = strcmp(mode, "untagged") == 0;
#if defined(OPOOL_RELACY_WEAK_PUSH)
    bool expect_pass = false;
    mode = "weak push";
#else
    bool expect_pass = strcmp(mode, "ok") == 0;
#endif
    /* RELACY_VERBOSE=1: the broken variants print their failing history too */
    bool quiet = !expect_pass && !getenv("RELACY_VERBOSE"), all = true;
    /* exhaustive within 2 preemptions, then random schedules */
    all &= run<freelist_test<0>>("pop/push", rl::fair_context_bound_scheduler_type, 0, quiet);
    all &= run<freelist_test<1>>("bulk pop of 2", rl::fair_context_bound_scheduler_type, 0, quiet);
    all &= run<freelist_test<0>>("pop/push", rl::random_scheduler_type, 100000, quiet);
    all &= run<freelist_test<1>>("bulk pop of 2", rl::random_scheduler_type, 100000, quiet);
    if (expect_pass) return all ? 0 : 1;
    printf("relacy freelist, %s: %s\n", mode,
           all ? "NOT caught: the checker has no teeth" : "caught, as it must be");
    return all ? 1 : 0;
}
