/*
 * opool_mt_wait.c -- opool_mt's wait/wake primitives (docs/CONCURRENCY.md, "Waiting, and the
 * stranding policy"): the wake of a free that saw a waiter, a waiter's sleep, and the heavy barrier
 * of waiters and thieves. The waiter itself, which steals, is opool_mt_cache.c's; the sleeping
 * (futex, or mutex and condition variable) is opool_platform.c's. Calls nothing of the other
 * opool_mt files.
 */
#include "opool_mt_list.h"

OPOOL_NOINLINE void opool__mt_wake_slow(opool_mt *p, uint32_t n) {
    opool__atomic_fetch_add_relaxed(&p->wake_calls, 1); /* statistics */
    opool__sleepq_wake(&p->sleepq, &p->sig.epoch, n);   /* releases the slots to the woken */
}

/* Sleep while the epoch is still e, at most until deadline (UINT64_MAX:
 * none). Returns at once if it already moved; spurious returns are fine. */
void opool__mt_sleep(opool_mt *p, uint32_t e, uint64_t deadline) {
    opool__atomic_fetch_add_relaxed(&p->sleeps, 1); /* statistics */
    opool__sleepq_sleep(&p->sleepq, &p->sig.epoch, e, deadline);
}

/* The waiter's heavy barrier (CONCURRENCY.md, "Waiting, and the stranding policy"): every park that
 * a cache owner made before it is visible to the scan after it, and every owner's later read of
 * waiters sees this waiter. False if it cannot be had (then the waiter must
 * not trust its scan for long). */
bool opool__mt_heavy_barrier(opool_mt *p) {
    if (p->light_park) {
        opool__atomic_fetch_add_relaxed(&p->barrier_calls, 1); /* statistics */
        return opool__membarrier();
    }
    /* seq_cst: pairs with the owners' seq_cst fence between park and read */
    opool__atomic_fence_seq_cst();
    return true;
}
