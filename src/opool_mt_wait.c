/*
 * opool_mt_wait.c -- opool_mt's wait/wake handshake (docs/CONCURRENCY.md 6):
 * the wake of a free that saw a waiter, the heavy barrier of waiters and
 * thieves, and the waiter of opool_mt_alloc_wait. The sleeping itself
 * (futex, or mutex and condition variable) is opool_platform.c's.
 */
#include "opool_mt_list.h"

OPOOL_NOINLINE void opool__mt_wake_slow(opool_mt *p, uint32_t n) {
    opool__atomic_fetch_add_relaxed(&p->wake_calls, 1); /* statistics */
    opool__sleepq_wake(&p->sleepq, &p->sig.epoch, n);   /* releases the slots to the woken */
}

/* Sleep while the epoch is still e, at most until deadline (UINT64_MAX:
 * none). Returns at once if it already moved; spurious returns are fine. */
static void opool__mt_sleep(opool_mt *p, uint32_t e, uint64_t deadline) {
    opool__atomic_fetch_add_relaxed(&p->sleeps, 1); /* statistics */
    opool__sleepq_sleep(&p->sleepq, &p->sig.epoch, e, deadline);
}

/* The waiter's heavy barrier (docs 6): every park that a cache owner made
 * before it is visible to the scan after it, and every owner's later read of
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

OPOOL_NOINLINE void *opool__mt_wait(opool_mt *p, opool_handle *out, uint64_t timeout_ns) {
    void *obj = NULL;
    uint64_t deadline = UINT64_MAX;
    if (timeout_ns != OPOOL_WAIT_FOREVER) {
        uint64_t now = opool__now_ns();
        deadline = timeout_ns < UINT64_MAX - now ? now + timeout_ns : UINT64_MAX - 1;
    }
    /* seq_cst: the waiter's half of the handshake with frees (docs 6) */
    opool__atomic_fetch_add_seq_cst(&p->sig.waiters, 1);
    bool scan_ok = opool__mt_thief_enter(p); /* its heavy barrier serves both */
    for (;;) {
        /* acquire: pairs with the release bump of a free that saw us */
        uint32_t e = opool__atomic_load_acquire(&p->sig.epoch);
        uint32_t i;
        uint32_t unused;
        if (opool__mt_pop(p, 1, &i) == 1 ||
            (scan_ok && opool__mt_steal_registered(p, 1, 0, &i, &unused))) {
            opool__mt_add_live(p, 1);
            obj = opool__mt_take(p, i, out);
            break;
        }
        uint64_t now = opool__now_ns();
        if (now >= deadline) break;
        /* without the heavy barrier a park may hide from the scan: poll */
        uint64_t until = deadline;
        if (!scan_ok && deadline - now > 1000000) until = now + 1000000;
        OPOOL__MT_POINT(p, WAIT_SLEEP);
        opool__mt_sleep(p, e, until);
        if (!scan_ok) scan_ok = opool__mt_heavy_barrier(p);
    }
    opool__mt_thief_leave(p);
    opool__atomic_fetch_sub_relaxed(&p->sig.waiters, 1); /* only makes frees cheaper */
    return obj;
}
