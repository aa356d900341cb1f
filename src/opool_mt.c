/*
 * opool_mt.c -- the lock-free concurrent pool (see include/opool_mt.h; the
 * design and the correctness arguments are in docs/CONCURRENCY.md, whose
 * section numbers the comments below cite as "docs N").
 *
 * Sections (grep for "==== "):
 *   ==== platform      futex, membarrier, the portable fallback, clocks
 *   ==== layout        the pool and cache records
 *   ==== free list     the ABA-tagged shared stack (docs 3)
 *   ==== slots         generations: taking and releasing a slot (docs 4)
 *   ==== waiting       the wait/wake handshake (docs 6)
 *   ==== caches        magazines, stealing (docs 5, 6)
 *   ==== public        the API
 *   ==== checks        test hooks
 */
#if !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif

#include "opool_internal.h"
#include "opool_mt.h"
#include "opool_mt_points.h"

#include <errno.h>
#include <limits.h>
#include <time.h>

/* ==== platform =========================================================== */

#if defined(__linux__) && !defined(OPOOL_MT_PORTABLE_WAIT)
#define OPOOL__MT_FUTEX 1
#endif
#if defined(__linux__) && !defined(OPOOL_MT_NO_MEMBARRIER)
#define OPOOL__MT_MEMBARRIER 1
#endif

#if defined(OPOOL__MT_FUTEX) || defined(OPOOL__MT_MEMBARRIER)
#include <sys/syscall.h>
#include <unistd.h>
/* <unistd.h> declares it only under _DEFAULT_SOURCE; this is its prototype. */
long syscall(long number, ...);
#endif
#if defined(OPOOL__MT_FUTEX)
#include <linux/futex.h>
#else
#include <pthread.h>
#endif
#if defined(OPOOL__MT_MEMBARRIER)
#include <linux/membarrier.h>
#endif

static uint64_t opool__mt_now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* The owner side of the park handshake (docs 6) may use a compiler barrier
 * only once the process is registered for expedited membarrier. */
static bool opool__mt_membarrier_ready(void) {
#if defined(OPOOL__MT_MEMBARRIER)
    /* 1 registered, 2 unavailable, 0 not asked yet */
    static _Atomic int opool__mt_membarrier_state;
    /* relaxed: the answer is the kernel's, the same for every thread */
    int s = atomic_load_explicit(&opool__mt_membarrier_state, memory_order_relaxed);
    if (s == 0) {
        long q = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
        s = 2;
        if (q > 0 && (q & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
            syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0)
            s = 1;
        atomic_store_explicit(&opool__mt_membarrier_state, s, memory_order_relaxed);
    }
    return s == 1;
#else
    return false;
#endif
}

/* Named points of the protocol where a test may hold the thread that reaches
 * them (src/opool_mt_points.h). Only the test-support build defines
 * OPOOL_TEST_HOOKS; everywhere else a point is nothing at all. */
#if defined(OPOOL_TEST_HOOKS)
static opool__mt_point_fn *_Atomic opool__mt_point_hook;

void opool__mt_set_point_hook(opool__mt_point_fn *fn) {
    /* release: pairs with the acquire below: the hook's own state is set */
    atomic_store_explicit(&opool__mt_point_hook, fn, memory_order_release);
}

static void opool__mt_at(const opool_mt *p, opool__mt_point at) {
    /* acquire: pairs with the release of the setter */
    opool__mt_point_fn *fn = atomic_load_explicit(&opool__mt_point_hook, memory_order_acquire);
    if (fn) fn(at, p);
}
#define OPOOL__MT_POINT(p, at) opool__mt_at(p, OPOOL__MT_AT_##at)
#else
#define OPOOL__MT_POINT(p, at) ((void)0)
#endif

/* ==== layout ============================================================= */

#define OPOOL__MT_EMPTY UINT32_MAX /* a cache entry holding no slot */

/* The helpers of the alloc and free paths: inlined into each public call so
 * that a cache hit is one function call. */
#if defined(__GNUC__) || defined(__clang__)
#define OPOOL__MT_HOT static inline __attribute__((always_inline))
#else
#define OPOOL__MT_HOT static inline
#endif
#define OPOOL__MT_ALIGN(x) _Alignas(OPOOL__LINE) x

#define OPOOL__MT_STRIPES 8
typedef struct opool__mt_stripe {
    OPOOL__MT_ALIGN(_Atomic int64_t n);
} opool__mt_stripe;

struct opool_mt {
    /* ---- written at create only ---- */
    opool_desc desc;
    opool_allocator mem;
    unsigned char *objects;
    _Atomic uint32_t *gen;  /* [capacity]: odd = live */
    _Atomic uint32_t *next; /* [capacity]: shared-list link, index + 1 of the slot below */
    size_t stride;
    uint64_t idx_mask; /* head bits holding top + 1 */
    uint64_t tag_one;  /* idx_mask + 1: what each CAS of the head adds */
    uint32_t capacity;
    uint32_t gen0;
    bool hooks;      /* init, fini, ZERO, POISON or a memory checker: the slow slot paths */
    bool checker;    /* ASan or Valgrind hides free slots */
    bool light_park; /* membarrier: the owner's park needs only a compiler barrier */
    void *block;
    size_t block_size;

    /* ---- the shared head: written by every cacheless alloc and free ---- */
    OPOOL__MT_ALIGN(_Atomic uint64_t head);
    /* allocs minus frees by the cacheless calls, striped by thread: each
     * stripe on its own line, so that counting never contends with the head
     * nor, mostly, with another thread */
    opool__mt_stripe live[OPOOL__MT_STRIPES];

    /* ---- read by every free, written only around waits and episodes ---- */
    OPOOL__MT_ALIGN(_Atomic uint32_t waiters);
    _Atomic uint32_t epoch; /* the futex word: bumped by a free that saw a waiter */
    _Atomic uint32_t episode;
    _Atomic uint32_t thieves; /* threads that may take parked slots from caches (docs 5) */

    /* ---- slow paths ---- */
    OPOOL__MT_ALIGN(struct opool_mt_cache *_Atomic caches); /* registry, push-only */
    _Atomic uint32_t retired;
    _Atomic uint64_t failed, rejected, steals, sleeps, wake_calls, barrier_calls;
#if !defined(OPOOL__MT_FUTEX)
    pthread_mutex_t lock; /* the portable fallback's sleep and wake */
    pthread_cond_t cond;
#endif
};

struct opool_mt_cache {
    opool_mt *pool;
    struct opool_mt_cache *next_rec; /* registry link: set before the record is published */
    uint32_t mask;                   /* entries in ent - 1 (a power of two - 1) */
    uint32_t size, half;             /* the current owner's */
    _Atomic uint32_t active;
    _Atomic int64_t live; /* allocs minus frees through this record: only its owner writes */
    /* The parked slots are ent[k & mask] for k in [top, bottom): a work-
     * stealing deque, oldest at top. The owner pushes and takes at bottom
     * (only it writes bottom); thieves and the owner's spills take at top by
     * CAS. Both only grow. */
    _Atomic uint64_t bottom;
    _Atomic uint64_t top;
    _Atomic uint32_t ent[];
};

_Static_assert(sizeof(_Atomic uint32_t) == sizeof(uint32_t), "the futex word is a plain uint32");
_Static_assert(OPOOL_MAX_CAPACITY < OPOOL__MT_EMPTY, "no slot index is the empty entry");

/* A cache record of cap entries, rounded up to whole cache lines. */
static size_t opool__mt_cache_bytes(uint32_t cap) {
    size_t n = sizeof(struct opool_mt_cache) + (size_t)cap * sizeof(uint32_t);
    return (n + OPOOL__LINE - 1) & ~(size_t)(OPOOL__LINE - 1);
}

OPOOL__MT_HOT void *opool__mt_object(const opool_mt *p, uint32_t i) {
    return p->objects + (size_t)i * p->stride;
}

/* ==== free list (docs 3) ================================================= */

OPOOL__MT_HOT uint64_t opool__mt_head_to(const opool_mt *p, uint64_t h, uint32_t top1) {
    return ((h & ~p->idx_mask) + p->tag_one) | top1; /* the tag wraps modulo its width */
}

/* Pop up to k slots in one CAS; returns how many (0: empty). *first is the
 * old top; the popped slots are a chain through next[], now owned by the
 * caller. */
OPOOL__MT_HOT uint32_t opool__mt_pop(opool_mt *p, uint32_t k, uint32_t *first) {
    /* seq_cst: acquire for the links and slots the pushers released, and the
     * waiter's half of the handshake of docs 6 (free: seq_cst CAS, then
     * seq_cst load of waiters) */
    uint64_t h = atomic_load_explicit(&p->head, memory_order_seq_cst);
    for (;;) {
        uint32_t t = (uint32_t)(h & p->idx_mask), n = 0;
        if (t == 0) return 0;
        *first = t - 1;
        while (t != 0 && n < k) {
            /* relaxed: ordered by the acquire of h; if a link changed under
             * us, so did the tag, and the CAS fails */
            t = atomic_load_explicit(&p->next[t - 1], memory_order_relaxed);
            n++;
        }
        /* acquire (success and failure): the next attempt's links, as above;
         * the tag in h protects against ABA (docs 3) */
        if (atomic_compare_exchange_weak_explicit(&p->head, &h, opool__mt_head_to(p, h, t),
                                                  memory_order_acquire, memory_order_acquire))
            return n;
    }
}

/* Push the chain first -> ... -> last (linked through next[] by the caller)
 * in one CAS. */
OPOOL__MT_HOT void opool__mt_push(opool_mt *p, uint32_t first, uint32_t last) {
    uint64_t h = atomic_load_explicit(&p->head, memory_order_relaxed);
    do {
        /* relaxed: published by the release of the CAS below */
        atomic_store_explicit(&p->next[last], (uint32_t)(h & p->idx_mask), memory_order_relaxed);
        /* seq_cst: release of the links and the freed slots to the next
         * popper, and the freer's half of the handshake of docs 6 */
    } while (!atomic_compare_exchange_weak_explicit(&p->head, &h,
                                                    opool__mt_head_to(p, h, first + 1),
                                                    memory_order_seq_cst, memory_order_relaxed));
}

OPOOL__MT_HOT uint32_t opool__mt_link_of(const opool_mt *p, uint32_t i) {
    /* relaxed: the chain is the caller's since its pop (acquire) */
    return atomic_load_explicit(&p->next[i], memory_order_relaxed) - 1;
}

OPOOL__MT_HOT void opool__mt_link(opool_mt *p, uint32_t i, uint32_t below) {
    /* relaxed: published by the push's release */
    atomic_store_explicit(&p->next[i], below + 1, memory_order_relaxed);
}

/* ==== slots (docs 4) ===================================================== */

static void opool__mt_report(opool_mt *p, opool_status what, opool_handle h) {
    if (p->desc.report) {
        p->desc.report(NULL, what, h, p->desc.user);
    } else if (what == OPOOL_EFULL) {
        fprintf(stderr,
                "opool: concurrent pool %p is full (%u slots): alloc failed; further failures "
                "are not reported until an object is freed\n",
                (void *)p, p->capacity);
    } else if (what == OPOOL_EWRITE_AFTER_FREE) {
        fprintf(stderr,
                "opool: write after free: slot %u of concurrent pool %p was changed while free "
                "(last handle 0x%016llx)\n",
                opool_handle_index(h), (void *)p, (unsigned long long)h.bits);
        abort();
    }
}

/* An alloc found no slot anywhere. */
static OPOOL_NOINLINE void opool__mt_failed(opool_mt *p) {
    /* relaxed: statistics and the episode flag publish nothing */
    atomic_fetch_add_explicit(&p->failed, 1, memory_order_relaxed);
    if (atomic_exchange_explicit(&p->episode, 1, memory_order_relaxed) == 0)
        opool__mt_report(p, OPOOL_EFULL, OPOOL_NULL);
}

static OPOOL_NOINLINE opool_status opool__mt_rejected(opool_mt *p, opool_status s,
                                                      opool_handle h) {
    atomic_fetch_add_explicit(&p->rejected, 1, memory_order_relaxed); /* statistics */
    opool__mt_report(p, s, h);
    return s;
}

/* The checks and hooks of a slot about to go live with generation g. */
static OPOOL_NOINLINE void opool__mt_prepare(opool_mt *p, uint32_t i, uint32_t g, void *obj) {
    if (p->desc.flags & OPOOL_POISON) {
        opool__mem_defined(obj, p->stride);
        if (!opool__poison_intact(obj, p->stride))
            opool__mt_report(p, OPOOL_EWRITE_AFTER_FREE, opool__handle(i, g - 2));
        opool__mem_noaccess(obj, p->stride); /* the padding stays hidden while live */
    }
    opool__mem_undefined(obj, p->desc.object_size);
    if (p->desc.flags & OPOOL_ZERO) memset(obj, 0, p->desc.object_size);
    if (p->desc.init) p->desc.init(obj, p->desc.user);
}

/* Slot i is the caller's (off the list or out of a cache entry): make it
 * live. */
OPOOL__MT_HOT void *opool__mt_take(opool_mt *p, uint32_t i, opool_handle *out) {
    /* relaxed: the slot is ours; its last generation came with it (the
     * acquire that gave us the slot) */
    uint32_t g = atomic_load_explicit(&p->gen[i], memory_order_relaxed) + 1;
    void *obj = opool__mt_object(p, i);
    if (OPOOL_UNLIKELY(p->hooks)) opool__mt_prepare(p, i, g, obj);
    /* release: a get() that sees g sees the object as prepared */
    atomic_store_explicit(&p->gen[i], g, memory_order_release);
    if (out) out->bits = (uint64_t)g << 32 | i;
    return obj;
}

static OPOOL_NOINLINE void opool__mt_released(opool_mt *p, void *obj) {
    if (p->desc.fini) p->desc.fini(obj, p->desc.user);
    if (p->desc.flags & OPOOL_POISON) {
        opool__mem_defined(obj, p->stride);
        opool__poison_fill(obj, p->stride);
    }
    opool__mem_noaccess(obj, p->stride);
}

/* An object was freed: the next failed alloc is reported again. */
OPOOL__MT_HOT void opool__mt_end_episode(opool_mt *p) {
    /* relaxed: the episode flag only rations reports */
    if (OPOOL_UNLIKELY(atomic_load_explicit(&p->episode, memory_order_relaxed) != 0))
        atomic_store_explicit(&p->episode, 0, memory_order_relaxed);
}

/* Take slot h's ownership from its user: OPOOL_OK and *keep (false when the
 * slot retires instead of coming back), or the rejection, changing nothing. */
OPOOL__MT_HOT opool_status opool__mt_claim(opool_mt *p, opool_handle h, bool *keep) {
    uint32_t i = opool_handle_index(h), g = opool_handle_generation(h);
    if (OPOOL_UNLIKELY(!(g & 1) || i >= p->capacity)) return OPOOL_EINVAL;
    uint32_t want = g;
    /* acquire: the object's state from the thread that made it live (fini
     * and poison touch it next); nothing is published by making the handle
     * stale (the push or park that follows publishes the slot). Of two
     * racing frees exactly one CAS succeeds (docs 4). */
    if (OPOOL_UNLIKELY(!atomic_compare_exchange_strong_explicit(
            &p->gen[i], &want, g + 1, memory_order_acquire, memory_order_relaxed)))
        return OPOOL_ESTALE;
    if (OPOOL_UNLIKELY(p->hooks)) opool__mt_released(p, opool__mt_object(p, i));
    *keep = !(g + 1 == p->gen0 && (p->desc.flags & OPOOL_RETIRE_ON_WRAP));
    if (OPOOL_UNLIKELY(!*keep)) {
        atomic_fetch_add_explicit(&p->retired, 1, memory_order_relaxed); /* statistics */
        opool__mt_end_episode(p); /* a free ends it, even one that retires its slot */
    }
    return OPOOL_OK;
}

/* The calling thread's stripe of the live counters: threads take stripes in
 * turn as they first count. */
static unsigned opool__mt_my_stripe(void) {
    static _Atomic unsigned threads;
    static _Thread_local unsigned mine; /* stripe + 1; 0 until the first use */
    if (OPOOL_UNLIKELY(mine == 0))
        /* relaxed: only spreads threads over stripes */
        mine = atomic_fetch_add_explicit(&threads, 1, memory_order_relaxed) % OPOOL__MT_STRIPES + 1;
    return mine - 1;
}

OPOOL__MT_HOT void opool__mt_add_live(opool_mt *p, int64_t d) {
    /* relaxed: a counter; only count() reads it */
    atomic_fetch_add_explicit(&p->live[opool__mt_my_stripe()].n, d, memory_order_relaxed);
}

/* A cache record's counter: one writer, so no read-modify-write. */
OPOOL__MT_HOT void opool__mt_add_own_live(struct opool_mt_cache *c, int64_t d) {
    /* relaxed: only count() reads it, and only the owner writes */
    atomic_store_explicit(&c->live, atomic_load_explicit(&c->live, memory_order_relaxed) + d,
                          memory_order_relaxed);
}

/* ==== waiting (docs 6) =================================================== */

static OPOOL_NOINLINE void opool__mt_wake_slow(opool_mt *p, uint32_t n) {
    atomic_fetch_add_explicit(&p->wake_calls, 1, memory_order_relaxed); /* statistics */
#if defined(OPOOL__MT_FUTEX)
    /* release: a waiter that reads the new epoch (acquire) sees the slots */
    atomic_fetch_add_explicit(&p->epoch, 1, memory_order_release);
    syscall(SYS_futex, (uint32_t *)&p->epoch, FUTEX_WAKE_PRIVATE, n > INT_MAX ? INT_MAX : (int)n,
            NULL, NULL, 0);
#else
    pthread_mutex_lock(&p->lock);
    atomic_fetch_add_explicit(&p->epoch, 1, memory_order_release); /* as above */
    if (n == 1)
        pthread_cond_signal(&p->cond);
    else
        pthread_cond_broadcast(&p->cond);
    pthread_mutex_unlock(&p->lock);
#endif
}

/* n slots have just become available (pushed, or parked with no waiter
 * seen): wake up to n sleepers; close an exhaustion episode. */
OPOOL__MT_HOT void opool__mt_freed(opool_mt *p, uint32_t n) {
    /* seq_cst: the freer's half of the handshake (docs 6): after the push's
     * seq_cst CAS, either this sees the waiter or the waiter's pop sees the
     * slots */
    if (OPOOL_UNLIKELY(atomic_load_explicit(&p->waiters, memory_order_seq_cst) != 0))
        opool__mt_wake_slow(p, n);
    opool__mt_end_episode(p);
}

/* Sleep while the epoch is still e, at most until deadline (UINT64_MAX:
 * none). Returns at once if it already moved; spurious returns are fine. */
static void opool__mt_sleep(opool_mt *p, uint32_t e, uint64_t deadline) {
    atomic_fetch_add_explicit(&p->sleeps, 1, memory_order_relaxed); /* statistics */
#if defined(OPOOL__MT_FUTEX)
    struct timespec rel, *tp = NULL;
    if (deadline != UINT64_MAX) {
        uint64_t now = opool__mt_now_ns(), left = deadline > now ? deadline - now : 0;
        rel.tv_sec = (time_t)(left / 1000000000u);
        rel.tv_nsec = (long)(left % 1000000000u);
        tp = &rel;
    }
    /* the kernel compares the word with e and sleeps atomically: a bump after
     * our read of e either makes this return at once or wakes it */
    syscall(SYS_futex, (uint32_t *)&p->epoch, FUTEX_WAIT_PRIVATE, e, tp, NULL, 0);
#else
    pthread_mutex_lock(&p->lock);
    /* relaxed: the waker bumps the epoch under the same mutex */
    while (atomic_load_explicit(&p->epoch, memory_order_relaxed) == e) {
        if (deadline == UINT64_MAX) {
            pthread_cond_wait(&p->cond, &p->lock);
        } else {
            struct timespec until;
            until.tv_sec = (time_t)(deadline / 1000000000u);
            until.tv_nsec = (long)(deadline % 1000000000u);
            if (pthread_cond_timedwait(&p->cond, &p->lock, &until) == ETIMEDOUT) break;
        }
    }
    pthread_mutex_unlock(&p->lock);
#endif
}

/* The waiter's heavy barrier (docs 6): every park that a cache owner made
 * before it is visible to the scan after it, and every owner's later read of
 * waiters sees this waiter. False if it cannot be had (then the waiter must
 * not trust its scan for long). */
static bool opool__mt_heavy_barrier(opool_mt *p) {
    if (p->light_park) {
#if defined(OPOOL__MT_MEMBARRIER)
        atomic_fetch_add_explicit(&p->barrier_calls, 1, memory_order_relaxed); /* statistics */
        return syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0;
#endif
    }
    /* seq_cst: pairs with the owners' seq_cst fence between park and read */
    atomic_thread_fence(memory_order_seq_cst);
    return true;
}

/* The owner's light barrier between parking a slot and reading waiters. */
OPOOL__MT_HOT void opool__mt_light_barrier(const opool_mt *p) {
    if (OPOOL_LIKELY(p->light_park))
        atomic_signal_fence(memory_order_seq_cst); /* the waiter's membarrier does the rest */
    else
        atomic_thread_fence(memory_order_seq_cst); /* pairs with the waiter's fence */
}

/* ==== caches (docs 5, 6) ================================================= */

/* Parked slots (thieves may take some at any time). */
static uint32_t opool__mt_parked(const opool_mt_cache *c) {
    /* relaxed: the owner's own counter, and a top that can only be stale low */
    uint64_t b = atomic_load_explicit(&c->bottom, memory_order_relaxed);
    uint64_t t = atomic_load_explicit(&c->top, memory_order_relaxed);
    return t < b ? (uint32_t)(b - t) : 0;
}

/* The owner's take at bottom: the newest parked slot, or EMPTY. Without a
 * thief around (the common case) it costs no atomic read-modify-write and no
 * fence: see docs 5 for why a thief can then never reach entry b. */
OPOOL__MT_HOT uint32_t opool__mt_take_newest(opool_mt_cache *c) {
    opool_mt *p = c->pool;
    /* relaxed: only this thread writes bottom; a stale top is smaller, so
     * "empty" is never wrong */
    uint64_t b = atomic_load_explicit(&c->bottom, memory_order_relaxed);
    if (b == atomic_load_explicit(&c->top, memory_order_relaxed)) return OPOOL__MT_EMPTY;
    b--;
    atomic_store_explicit(&c->bottom, b, memory_order_relaxed);
    opool__mt_light_barrier(p); /* the bottom store before the read of thieves */
    /* acquire: a thief that has left published its CAS on top before */
    bool contended = atomic_load_explicit(&p->thieves, memory_order_acquire) != 0;
    /* seq_cst: Chase-Lev's take fence, paired with the thief's between its
     * reads of top and bottom */
    if (OPOOL_UNLIKELY(contended)) atomic_thread_fence(memory_order_seq_cst);
    uint64_t t = atomic_load_explicit(&c->top, memory_order_relaxed);
    uint32_t x = OPOOL__MT_EMPTY;
    if (OPOOL_LIKELY(t <= b)) {
        /* relaxed: written by this thread */
        x = atomic_load_explicit(&c->ent[b & c->mask], memory_order_relaxed);
        if (OPOOL_UNLIKELY(t == b && contended)) {
            /* the last one, and a thief may be after it: the CAS decides;
             * seq_cst as in Chase-Lev; the tag is top itself, which only grows */
            if (!atomic_compare_exchange_strong_explicit(&c->top, &t, t + 1, memory_order_seq_cst,
                                                         memory_order_relaxed))
                x = OPOOL__MT_EMPTY;
            atomic_store_explicit(&c->bottom, b + 1, memory_order_relaxed);
        }
    } else {
        atomic_store_explicit(&c->bottom, b + 1, memory_order_relaxed); /* thieves emptied it */
    }
    return x;
}

/* Take up to k of the oldest parked slots at top, as a chain through next[]
 * whose head is *first (the newest taken) and tail *last. Returns how many.
 * The owner (spilling) may take many in one CAS; a thief takes one: while it
 * looks, the owner may take from the bottom without a CAS anything but the
 * last slot, so only a single-entry steal is safe (as in Chase-Lev). */
static uint32_t opool__mt_take_oldest(opool_mt_cache *c, uint32_t k, bool owner, uint32_t *first,
                                      uint32_t *last) {
    opool_mt *p = c->pool;
    if (!owner && k > 1) k = 1;
    for (;;) {
        /* acquire: the entries behind top, as the owner released them */
        uint64_t t = atomic_load_explicit(&c->top, memory_order_acquire);
        /* seq_cst: Chase-Lev's steal fence, paired with the owner's take */
        atomic_thread_fence(memory_order_seq_cst);
        /* acquire: pairs with the owner's release of bottom after each park */
        uint64_t b = atomic_load_explicit(&c->bottom, memory_order_acquire);
        if (t >= b) return 0;
        uint32_t n = b - t < k ? (uint32_t)(b - t) : k;
        /* relaxed: ordered by the acquire of bottom. A thief reads before its
         * CAS: once top moves, the owner may reuse the place */
        uint32_t stolen = owner ? 0 : atomic_load_explicit(&c->ent[t & c->mask],
                                                           memory_order_relaxed);
        /* seq_cst: the steal's CAS of Chase-Lev; on failure someone took
         * entries first: look again */
        if (!atomic_compare_exchange_strong_explicit(&c->top, &t, t + n, memory_order_seq_cst,
                                                     memory_order_relaxed))
            continue;
        /* ours now: link them so the newest heads the chain */
        uint32_t below = 0;
        for (uint32_t j = 0; j < n; j++) {
            /* relaxed: the owner reads its own entries */
            uint32_t i = owner ? atomic_load_explicit(&c->ent[(t + j) & c->mask],
                                                      memory_order_relaxed)
                               : stolen;
            if (j == 0)
                *last = i;
            else
                opool__mt_link(p, i, below);
            below = i;
        }
        *first = below;
        return n;
    }
}

/* Register as a thief: from here on, owners treat their last parked slot as
 * contended. The heavy barrier makes every owner's earlier bottom store
 * visible to this thread and every later read of thieves see it (docs 5). */
static bool opool__mt_thief_enter(opool_mt *p) {
    /* seq_cst: ordered before the heavy barrier and the reads of the decks */
    atomic_fetch_add_explicit(&p->thieves, 1, memory_order_seq_cst);
    return opool__mt_heavy_barrier(p);
}

static void opool__mt_thief_leave(opool_mt *p) {
    /* release: an owner that reads 0 (acquire) sees every CAS this thief made */
    atomic_fetch_sub_explicit(&p->thieves, 1, memory_order_release);
}

/* Steal k parked slots from the caches, oldest first, plus up to extra more
 * from the cache that completed the k (never from a further one), as a chain
 * through next[] from *first (the last stolen) to *last (the first).
 * Returns how many. The caller is a registered thief. */
static OPOOL_NOINLINE uint32_t opool__mt_steal_registered(opool_mt *p, uint32_t k, uint32_t extra,
                                                          uint32_t *first, uint32_t *last) {
    uint32_t n = 0;
    /* acquire: a record published by cache_create is seen initialised */
    for (opool_mt_cache *c = atomic_load_explicit(&p->caches, memory_order_acquire);
         c != NULL && n < k; c = c->next_rec) {
        uint32_t i, unused;
        while (n < k + extra && opool__mt_take_oldest(c, 1, false, &i, &unused) == 1) {
            if (n > 0)
                opool__mt_link(p, i, *first);
            else
                *last = i;
            *first = i;
            n++;
        }
    }
    if (n) atomic_fetch_add_explicit(&p->steals, n, memory_order_relaxed); /* statistics */
    return n;
}

/* Does any cache look as if it had parked slots? Reads only (stale values
 * can hide a park that is happening right now: that park is concurrent with
 * the caller, who may then fail as if it had come first). */
static bool opool__mt_any_parked(const opool_mt *p) {
    /* acquire: a record published by cache_create is seen initialised */
    for (const opool_mt_cache *c = atomic_load_explicit(&p->caches, memory_order_acquire);
         c != NULL; c = c->next_rec)
        if (opool__mt_parked(c) != 0) return true;
    return false;
}

/* Slots a passing thief that needs one takes beyond it, to the shared list:
 * one membarrier then serves the next allocs too. */
#define OPOOL__MT_STEAL_EXTRA 15u

/* Steal as a passing thief (an alloc that found the shared list empty): k
 * slots as a chain from *first. With extra (only for k == 1: alloc and a
 * cache's refill pass OPOOL__MT_STEAL_EXTRA, a bulk alloc 0) it keeps the
 * oldest parked slot of the first cache that has one and moves up to extra
 * more of that cache's oldest to the shared list, as a spill would (the
 * newest of them on top). Returns how many it keeps. No system call when
 * every cache looks empty. */
static OPOOL_NOINLINE uint32_t opool__mt_steal(opool_mt *p, uint32_t k, uint32_t extra,
                                               uint32_t *first) {
    uint32_t n = 0, last;
    if (!opool__mt_any_parked(p)) return 0;
    /* without the heavy barrier an owner might take a slot we take: no steal */
    if (opool__mt_thief_enter(p)) n = opool__mt_steal_registered(p, k, extra, first, &last);
    opool__mt_thief_leave(p);
    if (n) OPOOL__MT_POINT(p, STEAL_TAKEN);
    if (n <= k) return n;
    /* keep the first stolen (the chain's tail); the rest go to the list */
    uint32_t above = *first;
    for (uint32_t j = 2; j < n; j++) above = opool__mt_link_of(p, above);
    opool__mt_push(p, *first, above);
    opool__mt_freed(p, n - 1);
    *first = last;
    return 1;
}

/* Give the n oldest parked slots back to the shared list in one CAS, the
 * newest of them on top. */
static OPOOL_NOINLINE void opool__mt_spill(opool_mt_cache *c, uint32_t n) {
    opool_mt *p = c->pool;
    uint32_t first, last, got = opool__mt_take_oldest(c, n, true, &first, &last);
    if (got) {
        OPOOL__MT_POINT(p, SPILL_TAKEN);
        opool__mt_push(p, first, last);
        opool__mt_freed(p, got);
    }
}

/* The owner's half of the park handshake (docs 6), the one way slots enter
 * a cache: publish the entries below bottom b (written by the caller), then
 * read waiters. True if a thread waits: it may have scanned this cache
 * before the entries were there and gone to sleep, so the caller must give
 * them to the shared list, which wakes it. Every path that parks slots
 * (cache_free, refill) ends with this. */
OPOOL__MT_HOT bool opool__mt_publish(opool_mt_cache *c, uint64_t b) {
    opool_mt *p = c->pool;
    /* release: a thief that reads the new bottom (acquire) sees the entries
     * and the slots as we left them */
    atomic_store_explicit(&c->bottom, b, memory_order_release);
    opool__mt_light_barrier(p);
    OPOOL__MT_POINT(p, PARK_PUBLISHED);
    /* relaxed: ordered after the publication by the barrier pair (docs 6) */
    return atomic_load_explicit(&p->waiters, memory_order_relaxed) != 0;
}

/* Park slot i as the newest of the cache, or give it to a waiter. */
OPOOL__MT_HOT void opool__mt_park(opool_mt_cache *c, uint32_t i) {
    opool_mt *p = c->pool;
    if (OPOOL_UNLIKELY(opool__mt_parked(c) >= c->size)) opool__mt_spill(c, c->half);
    uint64_t b = atomic_load_explicit(&c->bottom, memory_order_relaxed); /* ours */
    atomic_store_explicit(&c->ent[b & c->mask], i, memory_order_relaxed); /* released below */
    if (OPOOL_UNLIKELY(opool__mt_publish(c, b + 1))) {
        uint32_t j = opool__mt_take_newest(c); /* else a thief, maybe the waiter, has it */
        if (j != OPOOL__MT_EMPTY) {
            opool__mt_push(p, j, j);
            opool__mt_freed(p, 1);
        }
    } else {
        opool__mt_end_episode(p);
    }
}

/* The cache is empty: refill half of it from the shared list in one CAS and
 * hand out the old top; steal when the list is empty. Between the pop and
 * the publication the slots are nowhere a waiter can see: a waiter that
 * scanned meanwhile is seen by the publication's read of waiters, and then
 * the parked slots go back to the shared list (a spill, which wakes it). */
static OPOOL_NOINLINE bool opool__mt_refill(opool_mt_cache *c, uint32_t *slot) {
    opool_mt *p = c->pool;
    uint32_t first, n = opool__mt_pop(p, c->half, &first);
    if (n == 0) return opool__mt_steal(p, 1, OPOOL__MT_STEAL_EXTRA, slot) == 1;
    OPOOL__MT_POINT(p, REFILL_POPPED);
    *slot = first;
    /* s2 (below the top) becomes the newest parked, the bottom the oldest */
    uint64_t b = atomic_load_explicit(&c->bottom, memory_order_relaxed); /* ours */
    uint32_t i = first;
    for (uint32_t k = n - 1; k-- > 0;) {
        i = opool__mt_link_of(p, i);
        atomic_store_explicit(&c->ent[(b + k) & c->mask], i, memory_order_relaxed);
    }
    if (n > 1 && OPOOL_UNLIKELY(opool__mt_publish(c, b + n - 1))) opool__mt_spill(c, c->size);
    return true;
}

/* ==== public ============================================================= */

/* The core's geometry of d, if d is also a desc opool_mt accepts. */
static bool opool__mt_geometry_of(const opool_desc *d, opool__geometry *g) {
    if (!opool__geometry_of(d, g)) return false; /* the core's rules first */
    if (d->object_size == 0) return false;         /* no id-only concurrent pools */
    if (d->allocator.alloc && !d->allocator.free) return false; /* it calls free */
    if (d->max_capacity != 0 && d->max_capacity != d->capacity) return false;
    if (d->on_full != OPOOL_FULL_FAIL || d->evict != NULL) return false;
    return d->save_object == NULL && d->load_object == NULL;
}

opool_status opool_mt_create(opool_mt **out, const opool_desc *desc) {
    if (out == NULL) return OPOOL_EINVAL;
    *out = NULL;
    opool__geometry g;
    if (desc == NULL || !opool__mt_geometry_of(desc, &g)) return OPOOL_EINVAL;
    size_t stride = g.stride, chunk_align = g.align; /* the core's rules, one source */
    uint32_t cap = desc->capacity;
    size_t arrays = (size_t)cap * 2 * sizeof(uint32_t), objects, total;
    if (!opool__mul_ok(stride, cap, &objects)) return OPOOL_EINVAL;
    size_t at = (sizeof(opool_mt) + arrays + chunk_align - 1) & ~(chunk_align - 1);
    if (at < sizeof(opool_mt) || !opool__add_ok(at, objects, &total)) return OPOOL_EINVAL;

    opool_allocator mem = opool__allocator_of(desc);
    void *block = mem.alloc(mem.ctx, total, chunk_align);
    if (block == NULL) return OPOOL_ENOMEM;
    opool_mt *p = (opool_mt *)block;
    memset(p, 0, sizeof *p);
    p->desc = *desc;
    p->mem = mem;
    p->block = block;
    p->block_size = total;
    p->gen = (_Atomic uint32_t *)(p + 1);
    p->next = p->gen + cap;
    p->objects = (unsigned char *)block + at;
    p->stride = stride;
    p->capacity = cap;
    p->gen0 = (desc->salt ? desc->salt : opool__derive_salt()) & ~1u;
    uint32_t bits = 1;
    while (bits < 32 && ((uint64_t)1 << bits) <= cap) bits++; /* cap + 1 values: 0 = empty */
    p->idx_mask = ((uint64_t)1 << bits) - 1;
    p->tag_one = p->idx_mask + 1;
    /* Shadow memory is per 8 bytes: slots narrower than that would share it
     * between threads, so the checker only watches slots that do not. */
    p->checker = opool__checker_active() && stride % 8 == 0;
    p->hooks = desc->init || desc->fini || (desc->flags & (OPOOL_ZERO | OPOOL_POISON)) ||
               p->checker;
    p->light_park = opool__mt_membarrier_ready();
    for (uint32_t i = 0; i < cap; i++) {
        atomic_init(&p->gen[i], p->gen0);
        atomic_init(&p->next[i], i + 2 <= cap ? i + 2 : 0); /* 0 on top, then 1, 2, ... */
    }
    atomic_init(&p->head, 1); /* top = slot 0, tag 0 */
    if ((desc->flags & OPOOL_POISON) || p->checker)
        for (uint32_t i = 0; i < cap; i++) {
            void *obj = opool__mt_object(p, i);
            if (desc->flags & OPOOL_POISON) opool__poison_fill(obj, stride);
            opool__mem_noaccess(obj, stride);
        }
#if !defined(OPOOL__MT_FUTEX)
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->cond, &ca);
    pthread_condattr_destroy(&ca);
#endif
    *out = p;
    return OPOOL_OK;
}

void opool_mt_destroy(opool_mt *p) {
    if (p == NULL) return;
    /* relaxed below: no other thread uses the pool any more (the contract) */
    for (uint32_t i = 0; i < p->capacity; i++)
        if (p->desc.fini && (atomic_load_explicit(&p->gen[i], memory_order_relaxed) & 1))
            p->desc.fini(opool__mt_object(p, i), p->desc.user);
    opool_mt_cache *c = atomic_load_explicit(&p->caches, memory_order_relaxed);
    while (c != NULL) {
        opool_mt_cache *next = c->next_rec;
        p->mem.free(p->mem.ctx, c, opool__mt_cache_bytes(c->mask + 1));
        c = next;
    }
#if !defined(OPOOL__MT_FUTEX)
    pthread_cond_destroy(&p->cond);
    pthread_mutex_destroy(&p->lock);
#endif
    opool__mem_defined(p->objects, (size_t)p->capacity * p->stride);
    p->mem.free(p->mem.ctx, p->block, p->block_size);
}

/* alloc without counting a failure: the shared list, else a steal. */
OPOOL__MT_HOT void *opool__mt_try(opool_mt *p, opool_handle *out) {
    uint32_t i;
    if (OPOOL_UNLIKELY(opool__mt_pop(p, 1, &i) == 0) &&
        opool__mt_steal(p, 1, OPOOL__MT_STEAL_EXTRA, &i) == 0)
        return NULL;
    opool__mt_add_live(p, 1);
    return opool__mt_take(p, i, out);
}

void *opool_mt_alloc(opool_mt *p, opool_handle *out) {
    if (out) *out = OPOOL_NULL;
    if (OPOOL_UNLIKELY(p == NULL)) return NULL;
    void *obj = opool__mt_try(p, out);
    if (OPOOL_UNLIKELY(obj == NULL)) opool__mt_failed(p);
    return obj;
}

/* Wait for a slot until timeout_ns have passed (the first try failed). */
static OPOOL_NOINLINE void *opool__mt_wait(opool_mt *p, opool_handle *out, uint64_t timeout_ns) {
    void *obj = NULL;
    uint64_t deadline = UINT64_MAX;
    if (timeout_ns != OPOOL_WAIT_FOREVER) {
        uint64_t now = opool__mt_now_ns();
        deadline = timeout_ns < UINT64_MAX - now ? now + timeout_ns : UINT64_MAX - 1;
    }
    /* seq_cst: the waiter's half of the handshake with frees (docs 6) */
    atomic_fetch_add_explicit(&p->waiters, 1, memory_order_seq_cst);
    bool scan_ok = opool__mt_thief_enter(p); /* its heavy barrier serves both */
    for (;;) {
        /* acquire: pairs with the release bump of a free that saw us */
        uint32_t e = atomic_load_explicit(&p->epoch, memory_order_acquire);
        uint32_t i;
        uint32_t unused;
        if (opool__mt_pop(p, 1, &i) == 1 ||
            (scan_ok && opool__mt_steal_registered(p, 1, 0, &i, &unused))) {
            opool__mt_add_live(p, 1);
            obj = opool__mt_take(p, i, out);
            break;
        }
        uint64_t now = opool__mt_now_ns();
        if (now >= deadline) break;
        /* without the heavy barrier a park may hide from the scan: poll */
        uint64_t until = deadline;
        if (!scan_ok && deadline - now > 1000000) until = now + 1000000;
        OPOOL__MT_POINT(p, WAIT_SLEEP);
        opool__mt_sleep(p, e, until);
        if (!scan_ok) scan_ok = opool__mt_heavy_barrier(p);
    }
    opool__mt_thief_leave(p);
    atomic_fetch_sub_explicit(&p->waiters, 1, memory_order_relaxed); /* only makes frees cheaper */
    return obj;
}

void *opool_mt_alloc_wait(opool_mt *p, opool_handle *out, uint64_t timeout_ns) {
    if (out) *out = OPOOL_NULL;
    if (p == NULL) return NULL;
    void *obj = opool__mt_try(p, out);
    if (obj == NULL && timeout_ns != 0) obj = opool__mt_wait(p, out, timeout_ns);
    if (obj == NULL) opool__mt_failed(p);
    return obj;
}

opool_status opool_mt_free(opool_mt *p, opool_handle h) {
    if (OPOOL_UNLIKELY(p == NULL)) return OPOOL_EINVAL;
    bool keep;
    opool_status s = opool__mt_claim(p, h, &keep);
    if (OPOOL_UNLIKELY(s != OPOOL_OK)) return opool__mt_rejected(p, s, h);
    opool__mt_add_live(p, -1);
    if (OPOOL_LIKELY(keep)) {
        uint32_t i = opool_handle_index(h);
        opool__mt_push(p, i, i);
        opool__mt_freed(p, 1);
    }
    return OPOOL_OK;
}

void *opool_mt_get(const opool_mt *p, opool_handle h) {
    uint32_t i = opool_handle_index(h), g = opool_handle_generation(h);
    if (p == NULL || !(g & 1) || i >= p->capacity) return NULL;
    /* acquire: pairs with the release store of alloc: the object is ready */
    if (atomic_load_explicit(&p->gen[i], memory_order_acquire) != g) return NULL;
    return opool__mt_object(p, i);
}

bool opool_mt_valid(const opool_mt *p, opool_handle h) { return opool_mt_get(p, h) != NULL; }

uint32_t opool_mt_count(const opool_mt *p) {
    if (p == NULL) return 0;
    /* relaxed: a snapshot of counters (see the header) */
    int64_t n = 0;
    for (unsigned k = 0; k < OPOOL__MT_STRIPES; k++)
        n += atomic_load_explicit(&p->live[k].n, memory_order_relaxed);
    /* acquire: records published by cache_create are seen initialised */
    for (const opool_mt_cache *c = atomic_load_explicit(&p->caches, memory_order_acquire);
         c != NULL; c = c->next_rec)
        n += atomic_load_explicit(&c->live, memory_order_relaxed);
    return n < 0 ? 0 : n > (int64_t)p->capacity ? p->capacity : (uint32_t)n;
}

uint32_t opool_mt_capacity(const opool_mt *p) {
    /* relaxed: a statistic */
    return p ? p->capacity - atomic_load_explicit(&p->retired, memory_order_relaxed) : 0;
}

uint32_t opool_mt_alloc_bulk(opool_mt *p, opool_handle *out, void **objs, uint32_t n) {
    if (p == NULL || out == NULL || n == 0) return 0;
    uint32_t first = 0, got = opool__mt_pop(p, n, &first);
    if (got < n) {
        OPOOL__MT_POINT(p, BULK_POPPED);
        /* the stolen chain goes after the popped one */
        /* a bulk alloc takes exactly what it misses: no extras */
        uint32_t sfirst, stolen = opool__mt_steal(p, n - got, 0, &sfirst);
        if (stolen) {
            if (got) {
                uint32_t last = first;
                for (uint32_t k = 1; k < got; k++) last = opool__mt_link_of(p, last);
                opool__mt_link(p, last, sfirst);
            } else {
                first = sfirst;
            }
            got += stolen;
        }
    }
    uint32_t i = first;
    for (uint32_t k = 0; k < got; k++) {
        uint32_t below = k + 1 < got ? opool__mt_link_of(p, i) : 0;
        void *obj = opool__mt_take(p, i, &out[k]);
        if (objs) objs[k] = obj;
        i = below;
    }
    if (got) opool__mt_add_live(p, got);
    if (got < n) opool__mt_failed(p);
    return got;
}

uint32_t opool_mt_free_bulk(opool_mt *p, const opool_handle *hs, uint32_t n) {
    if (p == NULL || hs == NULL) return 0;
    uint32_t first = 0, last = 0, chained = 0, freed = 0;
    for (uint32_t k = 0; k < n; k++) {
        bool keep;
        opool_status s = opool__mt_claim(p, hs[k], &keep);
        if (s != OPOOL_OK) {
            opool__mt_rejected(p, s, hs[k]);
            continue;
        }
        freed++;
        if (!keep) continue;
        uint32_t i = opool_handle_index(hs[k]);
        if (chained++ == 0)
            last = i;
        else
            opool__mt_link(p, i, first);
        first = i;
    }
    if (freed) opool__mt_add_live(p, -(int64_t)freed);
    if (chained) {
        opool__mt_push(p, first, last);
        opool__mt_freed(p, chained);
    }
    return freed;
}

opool_mt_cache *opool_mt_cache_create(opool_mt *p, uint32_t size) {
    if (p == NULL || size < 2 || size > OPOOL_MT_CACHE_MAX) return NULL;
    opool_mt_cache *c;
    /* acquire: the records' fields, as published */
    uint32_t cap = 2;
    while (cap < size) cap *= 2;
    for (c = atomic_load_explicit(&p->caches, memory_order_acquire); c != NULL; c = c->next_rec) {
        uint32_t idle = 0;
        /* acquire: the last owner's flush and counters, released by its destroy */
        if (c->mask + 1 >= size && atomic_compare_exchange_strong_explicit(
                                  &c->active, &idle, 1, memory_order_acquire, memory_order_relaxed))
            break;
    }
    if (c == NULL) {
        c = (opool_mt_cache *)p->mem.alloc(p->mem.ctx, opool__mt_cache_bytes(cap), OPOOL__LINE);
        if (c == NULL) return NULL;
        c->pool = p;
        c->mask = cap - 1;
        atomic_init(&c->active, 1);
        atomic_init(&c->live, 0);
        atomic_init(&c->bottom, 0);
        atomic_init(&c->top, 0);
        for (uint32_t e = 0; e < cap; e++) atomic_init(&c->ent[e], OPOOL__MT_EMPTY);
        c->next_rec = atomic_load_explicit(&p->caches, memory_order_relaxed);
        /* release: the record is initialised before anyone can reach it */
        while (!atomic_compare_exchange_weak_explicit(&p->caches, &c->next_rec, c,
                                                      memory_order_release, memory_order_relaxed))
            ;
    }
    c->size = size;
    c->half = size / 2;
    return c;
}

void *opool_mt_cache_alloc(opool_mt_cache *c, opool_handle *out) {
    if (OPOOL_UNLIKELY(c == NULL)) {
        if (out) *out = OPOOL_NULL;
        return NULL;
    }
    opool_mt *p = c->pool;
    uint32_t i = opool__mt_take_newest(c);
    if (OPOOL_UNLIKELY(i == OPOOL__MT_EMPTY) && !opool__mt_refill(c, &i)) {
        if (out) *out = OPOOL_NULL;
        opool__mt_failed(p);
        return NULL;
    }
    opool__mt_add_own_live(c, 1);
    return opool__mt_take(p, i, out);
}

opool_status opool_mt_cache_free(opool_mt_cache *c, opool_handle h) {
    if (OPOOL_UNLIKELY(c == NULL)) return OPOOL_EINVAL;
    opool_mt *p = c->pool;
    bool keep;
    opool_status s = opool__mt_claim(p, h, &keep);
    if (OPOOL_UNLIKELY(s != OPOOL_OK)) return opool__mt_rejected(p, s, h);
    opool__mt_add_own_live(c, -1);
    if (OPOOL_LIKELY(keep)) opool__mt_park(c, opool_handle_index(h));
    return OPOOL_OK;
}

uint32_t opool_mt_cache_alloc_bulk(opool_mt_cache *c, opool_handle *out, void **objs, uint32_t n) {
    if (c == NULL || out == NULL) return 0;
    uint32_t k = 0;
    for (; k < n; k++) {
        void *obj = opool_mt_cache_alloc(c, &out[k]);
        if (obj == NULL) break;
        if (objs) objs[k] = obj;
    }
    return k;
}

uint32_t opool_mt_cache_free_bulk(opool_mt_cache *c, const opool_handle *hs, uint32_t n) {
    if (c == NULL || hs == NULL) return 0;
    uint32_t freed = 0;
    for (uint32_t k = 0; k < n; k++) freed += opool_mt_cache_free(c, hs[k]) == OPOOL_OK;
    return freed;
}

void opool_mt_cache_flush(opool_mt_cache *c) {
    if (c != NULL) opool__mt_spill(c, c->size);
}

void opool_mt_cache_destroy(opool_mt_cache *c) {
    if (c == NULL) return;
    opool_mt_cache_flush(c);
    /* release: the next owner (acquire in create) starts from this state */
    atomic_store_explicit(&c->active, 0, memory_order_release);
}

void opool_mt_get_stats(const opool_mt *p, opool_mt_stats *out) {
    if (out == NULL) return;
    memset(out, 0, sizeof *out);
    if (p == NULL) return;
    out->version = OPOOL_MT_STATS_VERSION;
    out->capacity = opool_mt_capacity(p);
    out->count = opool_mt_count(p);
    /* relaxed: statistics, a snapshot */
    for (const opool_mt_cache *c = atomic_load_explicit(&p->caches, memory_order_acquire);
         c != NULL; c = c->next_rec) {
        out->caches += atomic_load_explicit(&c->active, memory_order_relaxed) != 0;
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
    out->retired = atomic_load_explicit(&p->retired, memory_order_relaxed);
    out->failed_allocs = atomic_load_explicit(&p->failed, memory_order_relaxed);
    out->rejected_handles = atomic_load_explicit(&p->rejected, memory_order_relaxed);
    out->steals = atomic_load_explicit(&p->steals, memory_order_relaxed);
    out->sleeps = atomic_load_explicit(&p->sleeps, memory_order_relaxed);
    out->wake_calls = atomic_load_explicit(&p->wake_calls, memory_order_relaxed);
    out->barrier_calls = atomic_load_explicit(&p->barrier_calls, memory_order_relaxed);
}

/* ==== checks (tests only) ================================================ */

/* The pool is quiescent (no call runs on it): nothing to synchronise with. */
#define opool__mt_peek(obj) atomic_load_explicit(obj, memory_order_relaxed)

#define OPOOL__MT_FAIL(...)                                                                        \
    do {                                                                                           \
        if (why && why_size) snprintf(why, why_size, __VA_ARGS__);                                 \
        goto fail;                                                                                 \
    } while (0)

bool opool__mt_check(const opool_mt *p, char *why, size_t why_size) {
    /* where each slot was found: 0 nowhere yet, 1 shared list, 2 a cache */
    unsigned char *seen = NULL;
    if (p == NULL) OPOOL__MT_FAIL("NULL pool");
    seen = (unsigned char *)calloc(p->capacity ? p->capacity : 1, 1);
    if (seen == NULL) OPOOL__MT_FAIL("out of memory");
    uint64_t h = opool__mt_peek(&p->head);
    uint32_t t = (uint32_t)(h & p->idx_mask), listed = 0;
    while (t != 0) {
        if (t > p->capacity) OPOOL__MT_FAIL("list link %u out of range", t - 1);
        if (seen[t - 1]) OPOOL__MT_FAIL("slot %u twice in the shared list (a cycle)", t - 1);
        if (opool__mt_peek(&p->gen[t - 1]) & 1) OPOOL__MT_FAIL("live slot %u in the shared list", t - 1);
        seen[t - 1] = 1;
        listed++;
        t = opool__mt_peek(&p->next[t - 1]);
    }
    int64_t live = 0;
    for (unsigned k = 0; k < OPOOL__MT_STRIPES; k++) live += opool__mt_peek(&p->live[k].n);
    uint32_t parked = 0;
    for (const opool_mt_cache *c = opool__mt_peek(&p->caches); c != NULL; c = c->next_rec) {
        live += opool__mt_peek(&c->live);
        if (c->pool != p) OPOOL__MT_FAIL("a cache record of another pool");
        uint32_t active = opool__mt_peek(&c->active);
        uint64_t top = opool__mt_peek(&c->top), bottom = opool__mt_peek(&c->bottom);
        if (top > bottom) OPOOL__MT_FAIL("cache top %llu above bottom %llu", (unsigned long long)top, (unsigned long long)bottom);
        if (!active && top != bottom) OPOOL__MT_FAIL("slots parked in a destroyed cache");
        if (active && bottom - top > c->size) OPOOL__MT_FAIL("cache holds %llu slots, size %u", (unsigned long long)(bottom - top), c->size);
        for (uint64_t k = top; k < bottom; k++) {
            uint32_t i = opool__mt_peek(&c->ent[k & c->mask]);
            if (i >= p->capacity) OPOOL__MT_FAIL("parked index %u out of range", i);
            if (seen[i]) OPOOL__MT_FAIL("slot %u both parked and %s", i, seen[i] == 1 ? "listed" : "parked elsewhere");
            if (opool__mt_peek(&p->gen[i]) & 1) OPOOL__MT_FAIL("live slot %u parked", i);
            seen[i] = 2;
            parked++;
        }
    }
    uint32_t count = 0, retired = 0;
    for (uint32_t i = 0; i < p->capacity; i++) {
        uint32_t g = opool__mt_peek(&p->gen[i]);
        if (g & 1) {
            count++;
        } else if (!seen[i]) {
            if (!((p->desc.flags & OPOOL_RETIRE_ON_WRAP) && g == p->gen0))
                OPOOL__MT_FAIL("free slot %u is lost (in no list, no cache)", i);
            retired++;
        }
    }
    if (retired != opool__mt_peek(&p->retired))
        OPOOL__MT_FAIL("%u slots retired, counted %u", retired, opool__mt_peek(&p->retired));
    if (live != (int64_t)count) OPOOL__MT_FAIL("count says %lld, %u slots live", (long long)live, count);
    if (count + listed + parked + retired != p->capacity) OPOOL__MT_FAIL("slots do not add up");
    free(seen);
    return true;
fail:
    free(seen);
    return false;
}

bool opool__mt_set_gen(opool_mt *p, uint32_t index, uint32_t gen) {
    if (p == NULL || index >= p->capacity || (gen & 1)) return false;
    uint64_t h = opool__mt_peek(&p->head);
    for (uint32_t t = (uint32_t)(h & p->idx_mask), n = 0; t != 0 && n <= p->capacity; n++) {
        if (t - 1 == index) {
            atomic_store_explicit(&p->gen[index], gen, memory_order_relaxed);
            return true;
        }
        t = opool__mt_peek(&p->next[t - 1]);
    }
    return false;
}
