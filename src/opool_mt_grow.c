/*
 * opool_mt_grow.c -- the growth of an opool_mt made with OPOOL_FULL_GROW
 * (docs/CONCURRENCY.md, "Growth"). When an alloc finds no free slot anywhere (the
 * shared list and the caches), one thread at a time adds slots: it commits
 * their storage in the pool's reservation, makes them free, publishes the
 * new capacity and only then pushes them onto its stripe of the shared
 * list, where every alloc finds them. A thread that finds the pool empty
 * while another grows it waits for that growth to end, then looks again.
 * Calls opool_mt.c (the storage) and opool_mt_wait.c (the wake of waiters).
 */
#include "opool_mt_list.h"

/* A growth adds as many slots as the pool has, at least this many, up to
 * max_capacity: a pool that starts at one slot does not grow one at a time. */
#define OPOOL__MT_GROW_MIN 64u

/* Does any stripe of the shared list hold a slot? (A free may have pushed
 * one since the caller looked: then it does not grow.) */
static bool opool__mt_any_listed(const opool_mt *p) {
    for (unsigned k = 0; k < OPOOL__MT_STRIPES; k++)
        /* relaxed: a hint; the caller's next pop decides */
        if ((opool__atomic_load_relaxed(&p->stripes[k].head) & p->idx_mask) != 0) return true;
    return false;
}

bool opool__mt_grow(opool_mt *p, uint64_t timeout_ns) {
    /* acquire: pairs with the release of the grower's wake below: a thread
     * that sees a growth ended sees its capacity and its push */
    uint32_t s = opool__atomic_load_acquire(&p->growing);
    if (s & 1) { /* another thread grows the pool: wait for the end, look again */
        if (timeout_ns == 0) return false;
        uint64_t deadline = opool__mt_deadline(timeout_ns);
        OPOOL__MT_POINT(p, GROW_WAIT);
        while (opool__atomic_load_acquire(&p->growing) == s) {
            if (deadline != UINT64_MAX && opool__now_ns() >= deadline) return false;
            opool__sleepq_sleep(&p->growq, &p->growing, s, deadline);
        }
        return true;
    }
    /* acquire: as above, the last growth's stores come before ours */
    if (!opool__atomic_cas_strong_acquire_relaxed(&p->growing, &s, s + 1))
        return true; /* another thread took the growth, or ended one: look again */
    uint32_t from = opool__mt_capacity_now(p), to = from;
    bool listed = false, grew = false;
    if (from < p->max_capacity && !(listed = opool__mt_any_listed(p))) {
        uint32_t add = from > OPOOL__MT_GROW_MIN ? from : OPOOL__MT_GROW_MIN;
        to = add < p->max_capacity - from ? from + add : p->max_capacity;
        OPOOL__MT_POINT(p, GROW_HELD);
        grew = opool__mt_commit(p, from, to);
    }
    if (grew) {
        /* release: the new slots' state, before any thread that reads the new
         * capacity touches them. Before the push: a slot on the list is
         * within the capacity of every thread that pops it (CONCURRENCY.md, "Growth") */
        opool__atomic_store_release(&p->capacity, to);
        opool__atomic_fetch_add_relaxed(&p->grows_made, 1); /* statistics */
        OPOOL__MT_POINT(p, GROWN);
        opool__mt_push(p, from, to - 1);
        opool__mt_freed(p, to - from); /* wakes alloc_wait's waiters */
    }
    /* s + 2, released, and every thread waiting for this growth woken */
    opool__sleepq_wake(&p->growq, &p->growing, UINT32_MAX);
    /* false at the limit or out of memory; true also when a free made room
     * since the caller looked */
    return grew || listed;
}
