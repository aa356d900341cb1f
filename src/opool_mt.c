/*
 * opool_mt.c -- the lock-free concurrent pool (see include/opool_mt.h): its
 * creation and destruction, and every out-of-line step that the inline code
 * of opool_mt_internal.h and opool_mt_list.h falls back on: a slot going
 * live or free with hooks, failures and reports, a home's bias revoked, the
 * free list's borrow from other stripes, waking and sleeping, growth; and
 * what reads the pool (get, count, stats). Taking and giving back slots is
 * opool_mt_shared.c's and opool_mt_cache.c's. The design and the correctness
 * arguments are in docs/CONCURRENCY.md, which the comments cite by section
 * title; opool_mt_internal.h lists the other files of opool_mt and their
 * jobs. Calls nothing of them.
 *
 * Sections (grep for "==== "):
 *   ==== slots         failures, rejections, preparing and releasing a slot, the
 *                      threads' stripes (CONCURRENCY.md, "Generations: who owns a slot")
 *   ==== a home's bias revoking it for a free by another path
 *   ==== the free list's borrow
 *   ==== waiting       the wake, a waiter's sleep, the heavy barrier
 *   ==== growth        adding slots to an OPOOL_FULL_GROW pool
 *   ==== test hooks    the named points' hook (OPOOL_TEST_HOOKS builds only)
 *   ==== public        create, destroy, get, count, capacity, stats
 */
#include "opool_mt_list.h"

/* ==== slots (CONCURRENCY.md, "Generations: who owns a slot") ================================== */

void opool_mt_default_report(opool_mt *p, opool_status what, opool_handle h, void *user) {
    (void)user;
    opool__finding f = opool__finding_of(OPOOL__KIND_MT, what, p, p ? p->desc.name : NULL);
    f.handle = h;
    if (p != NULL) {
        f.failures = opool__episode_failures(&p->sig.episode);
        f.count = opool_mt_count(p);
        f.capacity = opool_mt_capacity(p);
        f.loud = (p->desc.flags & OPOOL_REPORT_MISUSE) != 0;
        uint32_t cap = (uint32_t)f.capacity, i = opool_handle_index(h);
        opool__diag_misuse(&f, cap, p->gen0, i < cap ? opool__atomic_load_relaxed(&p->gen[i]) : 0);
    }
    opool__diag_default(&f);
}

/* The pool passes itself through report_mt; a desc with only the core's
 * report gets a NULL pool, as before report_mt existed. Exhaustion is
 * rationed for every report alike (opool__diag_admit). */
static void opool__mt_report(opool_mt *p, opool_status what, opool_handle h) {
    opool__held outer = {0, 0};
    if (what == OPOOL_EFULL && !(p->desc.flags & OPOOL_REPORT_UNRATIONED) &&
        !opool__diag_admit(&p->quota, opool__episode_failures(&p->sig.episode) == 1, &outer))
        return;
    if (p->desc.report_mt)
        p->desc.report_mt(p, what, h, p->desc.user);
    else if (p->desc.report)
        p->desc.report(NULL, what, h, p->desc.user);
    else
        opool_mt_default_report(p, what, h, p->desc.user);
    if (what == OPOOL_EFULL) opool__diag_admitted(&outer);
}

/* An alloc found no slot anywhere. */
OPOOL_NOINLINE void opool__mt_failed(opool_mt *p) {
    /* relaxed: statistics publish nothing */
    opool__atomic_fetch_add_relaxed(&p->failed, 1);
    if (opool__episode_failed(&p->sig.episode)) opool__mt_report(p, OPOOL_EFULL, OPOOL_NULL);
}

OPOOL_NOINLINE opool_status opool__mt_rejected(opool_mt *p, opool_status s, opool_handle h) {
    opool__atomic_fetch_add_relaxed(&p->rejected, 1); /* statistics */
    opool__mt_report(p, s, h);
    return s;
}

/* The checks and hooks of a slot about to go live with generation g. */
OPOOL_NOINLINE void opool__mt_prepare(opool_mt *p, uint32_t i, uint32_t g, void *obj) {
    if (p->sync) opool__sync_acquire(obj); /* after whoever freed it last */
    if (!opool__track_on_reuse(obj, p->stride, 0, p->desc.object_size,
                               (p->desc.flags & OPOOL_POISON) != 0))
        opool__mt_report(p, OPOOL_EWRITE_AFTER_FREE, opool__handle(i, g - 2));
    if (p->desc.flags & OPOOL_ZERO) memset(obj, 0, p->desc.object_size);
    if (p->desc.init) p->desc.init(obj, p->desc.user);
}

OPOOL_NOINLINE void opool__mt_released(opool_mt *p, void *obj) {
    if (p->desc.fini) p->desc.fini(obj, p->desc.user);
    opool__track_on_free(obj, p->stride, 0, (p->desc.flags & OPOOL_POISON) != 0);
    if (p->sync) opool__sync_release(obj); /* before the slot is published */
}

/* While an episode is open, a free counts the pool to see whether it ended
 * (out of line: episodes are rare). */
OPOOL_NOINLINE void opool__mt_settle(opool_mt *p) {
    opool__episode_freed(&p->sig.episode, opool_mt_count(p), opool_mt_capacity(p));
}

/* The calling thread's stripe word (opool_mt_internal.h), the same for
 * every pool and every file of opool_mt: a thread pops first from the
 * stripe it pushes onto. */
OPOOL__MT_SHARED_DEF _Thread_local unsigned opool__mt_stripe_of_thread OPOOL__MT_TLS_MODEL;

/* The stripes running threads hold alone, a bit each: a held stripe's
 * `owned` counters have one writer, that thread, in every pool. */
static opool__atomic(uint32_t) opool__mt_stripes_held;

/* Give back the stripe of held word w. */
static void opool__mt_stripe_unhold(uintptr_t w) {
    uint32_t held = opool__atomic_load_relaxed(&opool__mt_stripes_held);
    uint32_t bit = 1u << OPOOL__MT_STRIPE_OF(w);
    /* release: its last stores to `owned` come before the next holder's
     * first loads (that holder's acquire CAS) */
    while (!opool__atomic_cas_weak_release_relaxed(&opool__mt_stripes_held, &held, held & ~bit)) {
    }
}

/* The end-of-thread hook of the thread that took held word w, run in that
 * thread only (opool__on_thread_end): the stripe is free for the next
 * thread. Should the thread call opool_mt again (another library's
 * destructor of the thread, run after this one), it takes a stripe anew. */
static void opool__mt_stripe_release(uintptr_t w) {
    opool__mt_stripe_of_thread = 0;
    opool__mt_stripe_unhold(w);
}

/* The first stripe from start that held leaves free; OPOOL__MT_STRIPES if
 * none. */
static unsigned opool__mt_stripe_free(uint32_t held, unsigned start) {
    for (unsigned k = 0; k < OPOOL__MT_STRIPES; k++)
        if (!(held & 1u << (start + k) % OPOOL__MT_STRIPES)) return (start + k) % OPOOL__MT_STRIPES;
    return OPOOL__MT_STRIPES;
}

OPOOL_NOINLINE unsigned opool__mt_stripe_first(void) {
    static opool__atomic(unsigned) threads;
    /* relaxed: only spreads threads over stripes */
    unsigned start = opool__atomic_fetch_add_relaxed(&threads, 1) % OPOOL__MT_STRIPES;
    unsigned w = start + 1; /* shared, if every stripe is held */
    uint32_t held = opool__atomic_load_relaxed(&opool__mt_stripes_held);
    for (unsigned s; (s = opool__mt_stripe_free(held, start)) < OPOOL__MT_STRIPES;) {
        /* acquire: after the last holder's release (above) */
        if (opool__atomic_cas_strong_acquire_relaxed(&opool__mt_stripes_held, &held,
                                                     held | 1u << s)) {
            w = (s + 1) | OPOOL__MT_HELD;
            /* held until the thread ends, or not at all where nothing says
             * when that is */
            if (!opool__on_thread_end(opool__mt_stripe_release, w)) {
                opool__mt_stripe_unhold(w);
                w = s + 1;
            }
            break;
        }
    }
    opool__mt_stripe_of_thread = w;
    return w;
}

/* ==== a home's bias (CONCURRENCY.md, "What a cache hit costs") ================================ */

/* Revoke the bias of cache home, once (CONCURRENCY.md, "What a cache hit costs"): mark it, run the
 * heavy barrier, mark it done. Every caller that finds it not yet done runs its own barrier (one
 * that found it being revoked cannot know whether the other's barrier has run), so no thread waits
 * for another. */
static OPOOL_NOINLINE void opool__mt_revoke(opool_mt *p, opool_mt_cache *home) {
    uint32_t biased = OPOOL__MT_BIASED;
    /* seq_cst: ordered before the barrier; a CAS, so that a revoked cache
     * never goes back to revoking */
    opool__atomic_cas_strong_seq_cst_relaxed(&home->remote, &biased, OPOOL__MT_REVOKING);
    OPOOL__MT_POINT(p, REVOKE_MARKED);
    /* The home's claim and its read of remote are on either side of the
     * barrier's point in its thread. A cache is biased only when membarrier
     * is registered (light_park), and the registration lasts as long as the
     * process (a child of fork inherits it), so this does not fail; were it
     * to, there is no safe answer without it: try again. */
    while (!opool__mt_heavy_barrier(p))
        ;
    /* release: a free that reads REVOKED (acquire) skips the barrier and
     * still sees every claim the barrier made visible */
    opool__atomic_store_release(&home->remote, OPOOL__MT_REVOKED);
}

bool opool__mt_home_first(opool_mt *p, uint32_t i, uint32_t g, uint64_t own) {
    /* acquire: the record, published with its id before any slot named it */
    opool_mt_cache *home = opool__atomic_load_acquire(&p->homes[own >> 32]);
    /* acquire: pairs with the revoker's release of REVOKED */
    if (opool__atomic_load_acquire(&home->remote) != OPOOL__MT_REVOKED) opool__mt_revoke(p, home);
    /* relaxed: after the barrier, a claim the home made before reading
     * remote biased is visible (CONCURRENCY.md, "What a cache hit costs") */
    return (uint32_t)opool__atomic_load_relaxed(&p->own[i]) == g;
}

/* ==== the free list's borrow (CONCURRENCY.md, "The free list") ================================ */

/* The borrow of opool__mt_pop (opool_mt_list.h), out of line: a thread
 * comes here only when its own stripe is empty. */
OPOOL_NOINLINE uint32_t opool__mt_pop_other(opool_mt *p, unsigned s, uint32_t k, uint32_t *first,
                                            uint32_t *last) {
    return opool__mt_borrow(p, s, k, first, last);
}

/* ==== waiting (CONCURRENCY.md, "Waiting, and the stranding policy") =========================== */

/* The wake of a free that saw a waiter, a waiter's sleep, and the heavy
 * barrier of waiters, thieves and revokers. The waiter itself, which steals,
 * is opool_mt_cache.c's; the sleeping (futex, or mutex and condition
 * variable) is opool_platform.c's. */

OPOOL_NOINLINE void opool__mt_wake_slow(opool_mt *p, uint32_t n) {
    opool__atomic_fetch_add_relaxed(&p->wake_calls, 1); /* statistics */
    opool__sleepq_wake(&p->sleepq, &p->sig.epoch, n);   /* releases the slots to the woken */
}

void opool__mt_sleep(opool_mt *p, uint32_t e, uint64_t deadline) {
    opool__atomic_fetch_add_relaxed(&p->sleeps, 1); /* statistics */
    opool__sleepq_sleep(&p->sleepq, &p->sig.epoch, e, deadline);
}

/* The waiter's heavy barrier (CONCURRENCY.md, "Waiting, and the stranding policy"): every park that
 * a cache owner made before it is visible to the scan after it, and every owner's later read of
 * waiters sees this waiter. False if it cannot be had (then the waiter must
 * not trust its scan for long). */
OPOOL_NOINLINE bool opool__mt_heavy_barrier(opool_mt *p) {
    if (p->light_park) {
        opool__atomic_fetch_add_relaxed(&p->barrier_calls, 1); /* statistics */
        return opool__membarrier();
    }
    /* seq_cst: pairs with the owners' seq_cst fence between park and read */
    opool__atomic_fence_seq_cst();
    return true;
}

/* ==== growth (CONCURRENCY.md, "Growth") ====================================================== */

/* A pool made with OPOOL_FULL_GROW: when an alloc finds no free slot
 * anywhere (the shared list and the caches), one thread at a time adds
 * slots: it commits their storage in the pool's reservation, makes them
 * free, publishes the new capacity and only then pushes them onto its
 * stripe of the shared list, where every alloc finds them. A thread that
 * finds the pool empty while another grows it waits for that growth to
 * end, then looks again. */

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

/* ==== test hooks ========================================================= */

/* The hook of the named points (opool_mt_points.h): only in the copy of the
 * library that tests build with OPOOL_TEST_HOOKS. */
#if defined(OPOOL_TEST_HOOKS)
static opool__atomic(opool__mt_point_fn *) opool__mt_point_hook;

void opool__mt_set_point_hook(opool__mt_point_fn *fn) {
    /* release: pairs with the acquire below: the hook's own state is set */
    opool__atomic_store_release(&opool__mt_point_hook, fn);
}

void opool__mt_at(const opool_mt *p, opool__mt_point at) {
    /* acquire: pairs with the release of the setter */
    opool__mt_point_fn *fn = opool__atomic_load_acquire(&opool__mt_point_hook);
    if (fn) fn(at, p);
}
#endif

/* ==== public ============================================================= */

/* The core's geometry of d, if d is also a desc opool_mt accepts. */
static bool opool__mt_geometry_of(const opool_desc *d, opool__geometry *g) {
    if (!opool__geometry_of(d, g)) return false;                /* the core's rules first */
    if (d->object_size == 0) return false;                      /* no id-only concurrent pools */
    if (d->allocator.alloc && !d->allocator.free) return false; /* it calls free */
    if (d->on_full == OPOOL_FULL_EVICT || d->evict != NULL) return false;
    if (d->on_full != OPOOL_FULL_GROW && d->max_capacity != 0 && d->max_capacity != d->capacity)
        return false; /* a limit to grow to, for a pool that does not grow */
    /* a growing pool reserves its address space from the system (CONCURRENCY.md, "Growth") */
    if (g->max_capacity > d->capacity && d->allocator.alloc) return false;
    if (d->flags & (OPOOL_TRACK_SITES | OPOOL_REPORT_SIZING | OPOOL_NO_LIVE_LIST | OPOOL_FIXED))
        return false; /* the core's only */
    return d->save_object == NULL && d->load_object == NULL;
}

/* A growable pool commits its storage in units of 64 KiB: a multiple of the
 * page size on every system opool runs on (CONCURRENCY.md, "Growth"). */
#define OPOOL__MT_UNIT ((size_t)1 << 16)

/* *at + bytes, rounded up to unit (a power of two), to *at; false past
 * SIZE_MAX. */
static bool opool__mt_place(size_t *at, size_t bytes, size_t unit) {
    if (!opool__add_ok(*at, bytes, at) || !opool__add_ok(*at, unit - 1, at)) return false;
    *at &= ~(unit - 1);
    return true;
}

/* Where a pool's parts lie in its block, as offsets: the pool record at 0,
 * then gen[], next[] and own[] for max slots, then the objects. In a
 * growable pool each part starts on a unit of commit, so that a growth
 * commits whole units of each. */
typedef struct opool__mt_layout {
    size_t gen, next, own, objects, total;
} opool__mt_layout;

static bool opool__mt_layout_of(const opool__geometry *g, bool grows, opool__mt_layout *l) {
    size_t unit = grows ? OPOOL__MT_UNIT : 1, n = g->max_capacity, a4, a8, objects, at = 0;
    /* 16 bytes of arrays a slot: past SIZE_MAX on a 32-bit machine from 268M */
    if (!opool__mul_ok(sizeof(uint32_t), n, &a4) || !opool__mul_ok(sizeof(uint64_t), n, &a8) ||
        !opool__mul_ok(g->stride, n, &objects) || !opool__mt_place(&at, sizeof(opool_mt), unit))
        return false;
    l->gen = at;
    if (!opool__mt_place(&at, a4, unit)) return false;
    l->next = at;
    if (!opool__mt_place(&at, a4, unit)) return false;
    l->own = at;
    if (!opool__mt_place(&at, a8, grows ? unit : g->align)) return false;
    l->objects = at;
    if (!opool__mt_place(&at, objects, unit)) return false;
    l->total = at;
    return true;
}

/* The units of a growable pool's reservation that [from, to) touches,
 * readable and writable. */
static bool opool__mt_commit_bytes(const void *from, const void *to) {
    uintptr_t a = (uintptr_t)from & ~(uintptr_t)(OPOOL__MT_UNIT - 1);
    uintptr_t b = ((uintptr_t)to + OPOOL__MT_UNIT - 1) & ~(uintptr_t)(OPOOL__MT_UNIT - 1);
    return a == b || opool__os_commit((void *)a, b - a);
}

bool opool__mt_commit(opool_mt *p, uint32_t from, uint32_t to) {
    if (p->grows && !(opool__mt_commit_bytes(&p->gen[from], &p->gen[to]) &&
                      opool__mt_commit_bytes(&p->next[from], &p->next[to]) &&
                      opool__mt_commit_bytes(&p->own[from], &p->own[to]) &&
                      opool__mt_commit_bytes(opool__mt_object(p, from), opool__mt_object(p, to))))
        return false; /* what was committed stays so: a later growth reuses it */
    /* relaxed: nobody reads these slots before the growth's release store of
     * the capacity and the push (or the create's return) */
    for (uint32_t i = from; i < to; i++) {
        opool__atomic_store_relaxed(&p->gen[i], p->gen0);
        opool__atomic_store_relaxed(&p->next[i], i + 2 <= to ? i + 2 : 0);
        opool__atomic_store_relaxed(&p->own[i], 0); /* no home */
    }
    if ((p->desc.flags & OPOOL_POISON) || p->checker)
        for (uint32_t i = from; i < to; i++)
            opool__track_on_free(opool__mt_object(p, i), p->stride, 0,
                                 (p->desc.flags & OPOOL_POISON) != 0);
    return true;
}

opool_status opool_mt_create(opool_mt **out, const opool_desc *desc) {
    if (out == NULL) return OPOOL_EINVAL;
    *out = NULL;
    opool__geometry g;
    if (desc == NULL || !opool__mt_geometry_of(desc, &g)) return OPOOL_EINVAL;
    uint32_t cap = desc->capacity;
    bool grows = g.max_capacity > cap; /* OPOOL_FULL_GROW with room to grow */
    opool__mt_layout l;
    if (!opool__mt_layout_of(&g, grows, &l)) return OPOOL_EINVAL;

    opool_allocator mem = opool__allocator_of(desc);
    void *block;
    if (!grows)
        block = mem.alloc(mem.ctx, l.total, g.align);
    else if ((block = opool__os_reserve(l.total, OPOOL__MT_UNIT)) != NULL &&
             !opool__os_commit(block, l.gen)) { /* the pool record */
        opool__os_unmap(block, l.total);
        block = NULL;
    }
    if (block == NULL) return OPOOL_ENOMEM;
    opool_mt *p = (opool_mt *)block;
    memset(p, 0, sizeof *p);
    p->desc = *desc;
    p->mem = mem;
    p->block = block;
    p->block_size = l.total;
    p->gen = (opool__atomic(uint32_t) *)((unsigned char *)block + l.gen);
    p->next = (opool__atomic(uint32_t) *)((unsigned char *)block + l.next);
    p->own = (opool__atomic(uint64_t) *)((unsigned char *)block + l.own);
    p->objects = (unsigned char *)block + l.objects;
    p->stride = g.stride;
    p->max_capacity = g.max_capacity;
    p->grows = grows;
    p->gen0 = (desc->salt ? desc->salt : opool__derive_salt()) & ~1u;
    uint32_t bits = 1; /* max_capacity + 1 values: 0 = empty */
    while (bits < 32 && ((uint64_t)1 << bits) <= p->max_capacity) bits++;
    p->idx_mask = ((uint64_t)1 << bits) - 1;
    p->tag_one = p->idx_mask + 1;
    /* Shadow memory is per 8 bytes: slots narrower than that would share it
     * between threads, so the checker only watches slots that do not. */
    p->checker = opool__checker_active() && g.stride % 8 == 0;
    p->sync = opool__sync_active();
    p->hooks = desc->init || desc->fini || (desc->flags & (OPOOL_ZERO | OPOOL_POISON)) ||
               p->checker || p->sync;
    p->light_park = opool__membarrier_ready();
    /* the list from the top down: 0, 1, 2, ... (the header's promise; why
     * not a spread order: docs/CONCURRENCY.md, "What a cache hit costs") */
    if (!opool__mt_commit(p, 0, cap)) {
        opool__os_unmap(block, l.total); /* only a growable pool commits */
        return OPOOL_ENOMEM;
    }
    if (desc->salt) { /* last: among the live pools' origins (opool.h, SALTS) */
        opool_status s = opool__origin_enter(OPOOL__KIND_MT, desc->salt, p, desc->name,
                                             !(desc->flags & OPOOL_SHARE_SALT));
        if (s != OPOOL_OK) {
            if (grows)
                opool__os_unmap(block, l.total);
            else
                mem.free(mem.ctx, block, l.total);
            return s;
        }
    }
    opool__atomic_init(&p->capacity, cap);
    /* every slot on stripe 0 (top = slot 0, tag 0): whichever stripe a
     * thread has, its first pops find them there (CONCURRENCY.md, "The free list") */
    for (unsigned k = 0; k < OPOOL__MT_STRIPES; k++)
        opool__atomic_init(&p->stripes[k].head, k == 0 ? 1 : 0);
    opool__sleepq_init(&p->sleepq);
    opool__sleepq_init(&p->growq);
    *out = p;
    return OPOOL_OK;
}

void opool_mt_destroy(opool_mt *p) {
    if (p == NULL) return;
    if (p->desc.report_mt == NULL && p->desc.report == NULL)
        opool__diag_flush(OPOOL__KIND_MT, p, p->desc.name, &p->quota);
    if (p->desc.salt) opool__origin_leave(p);
    uint32_t cap = opool__atomic_load_relaxed(&p->capacity);
    for (uint32_t i = 0; i < cap; i++) { /* the first live object: a leak */
        uint32_t g = opool__atomic_load_relaxed(&p->gen[i]);
        if (g & 1) {
            opool__mt_report(p, OPOOL_ELEAK, opool__handle(i, g));
            break;
        }
    }
    /* relaxed below: no other thread uses the pool any more (the contract) */
    for (uint32_t i = 0; i < cap; i++)
        if (p->desc.fini && (opool__atomic_load_relaxed(&p->gen[i]) & 1))
            p->desc.fini(opool__mt_object(p, i), p->desc.user);
    opool_mt_cache *c = opool__atomic_load_relaxed(&p->caches);
    while (c != NULL) {
        opool_mt_cache *next = c->next_rec;
        p->mem.free(p->mem.ctx, c, opool__mt_cache_bytes(c->mask + 1));
        c = next;
    }
    opool__sleepq_destroy(&p->sleepq);
    opool__sleepq_destroy(&p->growq);
    opool__mem_defined(p->objects, (size_t)cap * p->stride);
    if (p->grows)
        opool__os_unmap(p->block, p->block_size);
    else
        p->mem.free(p->mem.ctx, p->block, p->block_size);
}

void *opool_mt_get(const opool_mt *p, opool_handle h) {
    uint32_t i = opool_handle_index(h), g = opool_handle_generation(h);
    if (p == NULL || opool__mt_live(p->gen, opool__mt_capacity_now(p), i, g) != OPOOL_OK)
        return NULL;
    return opool__mt_object(p, i);
}

bool opool_mt_valid(const opool_mt *p, opool_handle h) { return opool_mt_get(p, h) != NULL; }

uint32_t opool_mt_count(const opool_mt *p) {
    if (p == NULL) return 0;
    /* relaxed: a snapshot of counters (see the header) */
    int64_t n = 0;
    for (unsigned k = 0; k < OPOOL__MT_STRIPES; k++)
        n += opool__atomic_load_relaxed(&p->stripes[k].owned) +
             opool__atomic_load_relaxed(&p->stripes[k].live);
    /* acquire: records published by cache_create are seen initialised */
    for (const opool_mt_cache *c = opool__atomic_load_acquire(&p->caches); c != NULL;
         c = c->next_rec)
        n += opool__atomic_load_relaxed(&c->live);
    uint32_t cap = opool__mt_capacity_now(p);
    return n < 0 ? 0 : n > (int64_t)cap ? cap : (uint32_t)n;
}

uint32_t opool_mt_capacity(const opool_mt *p) {
    /* relaxed: a statistic */
    return p ? opool__mt_capacity_now(p) - opool__atomic_load_relaxed(&p->retired) : 0;
}

void opool_mt_get_stats(const opool_mt *p, opool_mt_stats *out) {
    if (out == NULL) return;
    memset(out, 0, sizeof *out);
    if (p == NULL) return;
    out->version = OPOOL_MT_STATS_VERSION;
    out->capacity = opool_mt_capacity(p);
    out->count = opool_mt_count(p);
    /* relaxed: statistics, a snapshot */
    for (const opool_mt_cache *c = opool__atomic_load_acquire(&p->caches); c != NULL;
         c = c->next_rec) {
        out->caches += opool__atomic_load_relaxed(&c->active) != 0;
        out->parked += opool__mt_parked(c);
        OPOOL__MT_POINT(p, STATS_SCAN);
    }
    /* Each cache was read at its own moment: a slot that moved during the
     * scan (live into a cache, or from one cache to another) may have been
     * counted twice. At every moment live + parked <= usable slots, so the
     * sum is cut to what the figures read here leave room for (the header's
     * promise: count + parked <= capacity). */
    if (out->count > out->capacity) out->count = out->capacity; /* retired meanwhile */
    uint32_t room = out->capacity - out->count;
    if (out->parked > room) out->parked = room;
    out->retired = opool__atomic_load_relaxed(&p->retired);
    out->failed_allocs = opool__atomic_load_relaxed(&p->failed);
    out->rejected_handles = opool__atomic_load_relaxed(&p->rejected);
    out->steals = opool__atomic_load_relaxed(&p->steals);
    out->sleeps = opool__atomic_load_relaxed(&p->sleeps);
    out->wake_calls = opool__atomic_load_relaxed(&p->wake_calls);
    out->barrier_calls = opool__atomic_load_relaxed(&p->barrier_calls);
    out->max_capacity = p->max_capacity;
    out->grows = opool__atomic_load_relaxed(&p->grows_made);
}
