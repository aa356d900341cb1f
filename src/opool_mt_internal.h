/*
 * opool_mt_internal.h -- what the files of opool_mt share: the pool record
 * (the cache record is in opool_abi_mt.h, whose inline cache hits read it),
 * the library's definitions of the atomics those hits are written on, the
 * slot operations of the alloc and free paths (inline into each public
 * call), and the opool__mt_ functions one file defines for another.
 * Private: never installed. The design and the correctness arguments are in
 * docs/CONCURRENCY.md, cited below by section title.
 *
 * The files of opool_mt, each with one job (and the section of
 * docs/CONCURRENCY.md that explains it):
 *   opool_mt_internal.h   the records and the shared slot operations
 *                         ("Generations: who owns a slot")
 *   opool_mt_list.h       the shared free list, ABA-tagged stacks striped by thread
 *                         ("The free list"), inline
 *   opool_mt.c            the pool: create, destroy, its storage and its growth
 *                         ("Growth"), and the out-of-line steps the two headers
 *                         above fall back on: a slot's hooks, failures and reports,
 *                         a home's bias revoked, the free list's borrow, the wake,
 *                         the sleep and the heavy barrier ("Waiting, and the
 *                         stranding policy"); get, count and stats
 *   opool_mt_cache.c      caches: parking, refill, spill, stealing, the waiter,
 *                         and the opool_mt_cache_* API ("Caches (magazines) and
 *                         stealing", "Waiting, and the stranding policy")
 *   opool_mt_shared.c     the calls without a cache: alloc, alloc_wait, free, bulk
 *   opool_mt_points.h     named points where a test holds a thread (tests only)
 * Each .c calls only the files listed above it. The two headers are the
 * inline half of opool_mt.c: their code calls it, never a file listed after
 * it. make test checks both (abi_acyclic: no two object files use each other,
 * and no header calls a file that includes it but its own .c).
 * The operating system's part (futex, membarrier, clock) and the atomics
 * are in opool_platform.h.
 */
#ifndef OPOOL_MT_INTERNAL_H
#define OPOOL_MT_INTERNAL_H

#include "opool_diag.h"
#include "opool_internal.h"
#include "opool_mt_points.h"
#include "opool_platform.h"

/* ==== the cache steps' atomics ============================================ */

/* Named points of the protocol where a test may hold the thread that reaches
 * them (opool_mt_points.h). Only the test-support build defines
 * OPOOL_TEST_HOOKS; everywhere else a point is nothing at all. */
#if defined(OPOOL_TEST_HOOKS)
#define OPOOL__MT_POINT(p, at) opool__mt_at(p, OPOOL__MT_AT_##at)
#else
#define OPOOL__MT_POINT(p, at) ((void)0)
#endif

/* The macros that opool_abi_mt.h's cache steps are written on, here on the
 * library's atomics, its light barrier of either kind (opool__mt_light_barrier,
 * below) and its named points, so that those steps, the bodies of the inline
 * hits, are the library's own code too (in tests/relacy, on Relacy's atomics).
 * They must be defined before opool_mt.h, whose ABI part otherwise defines
 * them on GCC's and Clang's builtins: a file of the library that included
 * opool_mt.h first stops here rather than build the hits on other atomics.
 * The single header pastes this file after the public headers, and its
 * implementation keeps the header's builtins. */
#if defined(OPOOL__ABI_MT_H) && !defined(OPOOL__IMPLEMENTATION_DONE)
#error "opool: include opool_mt_internal.h before opool_mt.h: the cache steps are the library's"
#endif
#if !defined(OPOOL__MT_STEPS)
struct opool_mt;
static inline void opool__mt_light_barrier(const struct opool_mt *p);
#define OPOOL__MT_STEPS 1
#define OPOOL__MT_LOAD_RELAXED(p) opool__atomic_load_relaxed(p)
#define OPOOL__MT_LOAD_ACQUIRE(p) opool__atomic_load_acquire(p)
#define OPOOL__MT_STORE_RELAXED(p, v) opool__atomic_store_relaxed(p, v)
#define OPOOL__MT_STORE_RELEASE(p, v) opool__atomic_store_release(p, v)
#define OPOOL__MT_LIGHT_BARRIER(c) opool__mt_light_barrier((c)->pool)
#define OPOOL__MT_HIT_POINT(c, at) OPOOL__MT_POINT((c)->pool, at)
#endif

#include "opool_mt.h"

/* ==== layout ============================================================= */

#define OPOOL__MT_EMPTY UINT32_MAX /* a cache entry holding no slot */

/* The helpers of the alloc and free paths: inlined into each public call
 * (OPOOL__HOT, from opool_abi.h, which inlines the cache hits into the
 * caller's code the same way). Those that several files use are here (and
 * in opool_mt_list.h); the rest are static in their file. */
#define OPOOL__MT_ALIGN(x) _Alignas(OPOOL__LINE) x

/* The shared free list is this many lists, the stripes (CONCURRENCY.md, "The free list"): each
 * thread pushes onto its own stripe and pops from it first. */
#define OPOOL__MT_STRIPES 16 /* at most 32: a bit each in opool__mt_stripes_held */
/* At most, the slots a pop that finds its own stripe empty takes from
 * another stripe in its one CAS (half of what that stripe holds), the ones
 * it does not hand out going onto its own stripe: a line of generations
 * (16 of 4 bytes), so that two threads allocating from a fresh pool do not
 * share lines of gen[] and next[]. */
#define OPOOL__MT_BORROW 16u
/* Caches that can be a slot's home with a biased claim (CONCURRENCY.md, "What a cache hit costs"):
 * ids 1 .. OPOOL__MT_HOMES - 1; a cache record made after them claims with the CAS. */
#define OPOOL__MT_HOMES 64
/* A cache's remote state (CONCURRENCY.md, "What a cache hit costs"). */
enum {
    OPOOL__MT_BIASED = 0,   /* only its owner has freed its slots: its claim is plain stores */
    OPOOL__MT_REVOKING = 1, /* another path is revoking the bias: its barrier may not be done */
    OPOOL__MT_REVOKED = 2   /* revoked, barrier done: every free of its slots uses the CAS */
};
_Static_assert(OPOOL__MT_BIASED == 0, "opool_abi_mt.h's opool__mt_still_biased reads biased as 0");
/* A stripe: a list of free slots and the live counters of its threads, on
 * a line of its own, written by the threads that have this stripe (and, for
 * the list, by threads that find their own stripe empty). */
typedef struct opool__mt_stripe {
    /* the top slot's index + 1 (0: empty) in the idx_mask bits, an ABA tag
     * in the rest (CONCURRENCY.md, "The free list") */
    OPOOL__MT_ALIGN(opool__atomic(uint64_t) head);
    /* allocs minus frees by the cacheless calls of the thread that holds
     * this stripe alone (its only writer: a load and a store, no
     * read-modify-write), and of the threads that share it (CONCURRENCY.md, "The free list") */
    opool__atomic(int64_t) owned;
    opool__atomic(int64_t) live;
} opool__mt_stripe;

struct opool_mt {
    /* ---- written at create only ---- */
    opool_desc desc;
    opool_allocator mem;
    unsigned char *objects;
    opool__atomic(uint32_t) * gen;  /* [max_capacity]: odd = live */
    opool__atomic(uint32_t) * next; /* [max_capacity]: list link, the slot below + 1 */
    /* [max_capacity]: the slot's home (the id of the cache that allocated it, 0:
     * none) << 32 | its claim (the generation its home is freeing, 0: none):
     * CONCURRENCY.md, "What a cache hit costs" */
    opool__atomic(uint64_t) * own;
    size_t stride;
    uint64_t idx_mask; /* head bits holding top + 1 */
    uint64_t tag_one;  /* idx_mask + 1: what each CAS of the head adds */
    /* slots with storage: [0, capacity) are valid indexes. Only a growth
     * changes it (upward, before it pushes the new slots: CONCURRENCY.md, "Growth") */
    opool__atomic(uint32_t) capacity;
    uint32_t max_capacity; /* the growth limit (a fixed pool's capacity) */
    uint32_t gen0;
    /* OPOOL_FULL_GROW: storage reserved for max_capacity slots (CONCURRENCY.md, "Growth") */
    bool grows;
    bool sync;       /* the program's TSan is told of slot hand-offs (opool_track.h) */
    bool hooks;      /* init, fini, ZERO, POISON, a memory checker or sync: the slow slot paths */
    bool checker;    /* ASan or Valgrind hides free slots */
    bool light_park; /* membarrier: the owner's park needs only a compiler barrier */
    void *block;
    size_t block_size;

    /* ---- the shared free list, striped by thread: written by every
     * cacheless alloc and free, every refill and spill ---- */
    opool__mt_stripe stripes[OPOOL__MT_STRIPES];

    /* ---- read by every cache hit and every free, written only around
     * steals, waits and episodes (opool_abi_mt.h) ---- */
    OPOOL__MT_ALIGN(opool__mt_signals sig);

    /* ---- slow paths ---- */
    OPOOL__MT_ALIGN(opool__atomic(struct opool_mt_cache *) caches); /* registry, push-only */
    opool__atomic(uint32_t) retired;
    opool__sleepq sleepq; /* the fallback's mutex and condition variable (opool_platform.h) */
    opool__atomic(uint64_t) failed, rejected, steals, sleeps, wake_calls, barrier_calls;
    opool__quota quota;                 /* of the default report's lines */
    opool__atomic(uint32_t) homes_used; /* ids handed out */
    /* odd while a thread grows the pool (CONCURRENCY.md, "Growth") */
    opool__atomic(uint32_t) growing;
    opool__sleepq growq;                /* where threads wait for a growth to end */
    opool__atomic(uint64_t) grows_made; /* growths: statistics */
    opool__atomic(struct opool_mt_cache *) homes[OPOOL__MT_HOMES]; /* by id: set before use */
};

/* struct opool_mt_cache, the cache record, is in opool_abi_mt.h: the inline
 * cache hits of opool_mt.h read it. */

_Static_assert(OPOOL_MAX_CAPACITY < OPOOL__MT_EMPTY, "no slot index is the empty entry");
/* What C++ callers of the inline hits assume of the records (opool_abi_mt.h). */
#if !defined(OPOOL_RELACY)
_Static_assert(offsetof(struct opool_mt_cache, live) == 16 &&
                   offsetof(struct opool_mt_cache, home) == 24 &&
                   offsetof(opool__mt_signals, episode) == 16,
               "the 64-bit fields of the ABI records at offsets aligned in C and C++");
#endif

/* A cache record of cap entries, rounded up to whole cache lines. */
static inline size_t opool__mt_cache_bytes(uint32_t cap) {
    size_t n = OPOOL__MT_CACHE_HEAD + (size_t)cap * sizeof(opool__atomic(uint32_t));
    return (n + OPOOL__LINE - 1) & ~(size_t)(OPOOL__LINE - 1);
}

/* The slots with storage now. relaxed: a handle of a slot that a growth
 * added reaches a thread through the push that followed the growth's store
 * (release, then acquire), so that thread reads this count or a later one;
 * for any other handle a stale count only rejects it (CONCURRENCY.md, "Growth"). */
OPOOL__HOT uint32_t opool__mt_capacity_now(const opool_mt *p) {
    return opool__atomic_load_relaxed(&p->capacity);
}

OPOOL__HOT void *opool__mt_object(const opool_mt *p, uint32_t i) {
    return p->objects + (size_t)i * p->stride;
}

/* ==== shared between the files (each defined where its comment says) ==== */

/* opool_mt.c: the slow steps of a slot and the failures, and everything else the inline code
 * of this header and of opool_mt_list.h calls out of line */
void opool__mt_failed(opool_mt *p);
opool_status opool__mt_rejected(opool_mt *p, opool_status s, opool_handle h);
void opool__mt_prepare(opool_mt *p, uint32_t i, uint32_t g, void *obj);
void opool__mt_released(opool_mt *p, void *obj);
void opool__mt_settle(opool_mt *p);

/* [from, to) of a growable pool: storage made usable and the slots made
 * ready to be pushed, each free at the first generation, linked from, from
 * + 1, ..., to - 1 (the last one's link 0); false if the system refused
 * the memory (then nothing is usable that was not). */
bool opool__mt_commit(opool_mt *p, uint32_t from, uint32_t to);

/* The wake of up to n sleepers (a free that saw a waiter). */
void opool__mt_wake_slow(opool_mt *p, uint32_t n);
/* Sleep while the epoch is still e, at most until deadline (UINT64_MAX:
 * none). Returns at once if it already moved; spurious returns are fine. */
void opool__mt_sleep(opool_mt *p, uint32_t e, uint64_t deadline);
bool opool__mt_heavy_barrier(opool_mt *p);

/* No free slot was found, and p grows: grow it, or wait for the growth
 * another thread is making, at most timeout_ns (OPOOL_WAIT_FOREVER: until
 * it ends; 0: not at all). True when the caller should look again; false
 * at the limit, when the system refused the memory, or at the timeout. */
bool opool__mt_grow(opool_mt *p, uint64_t timeout_ns);

/* A free of slot i from generation g, whose home word is own (non-zero), by
 * a path other than its home's: revokes the home's bias if needed, then true
 * if the home's own free of g came first (the caller then fails with
 * OPOOL_ESTALE, changing nothing). */
bool opool__mt_home_first(opool_mt *p, uint32_t i, uint32_t g, uint64_t own);
/* opool__mt_pop (opool_mt_list.h) found stripe s, the caller's, empty: pop
 * from the other stripes (CONCURRENCY.md, "The free list"). Returns as opool__mt_pop. */
uint32_t opool__mt_pop_other(opool_mt *p, unsigned s, uint32_t k, uint32_t *first, uint32_t *last);

/* opool_mt_cache.c */
/* Wait for a slot until timeout_ns have passed (the caller's first try
 * failed): the object, made live, or NULL. */
void *opool__mt_wait(opool_mt *p, opool_handle *out, uint64_t timeout_ns);
bool opool__mt_thief_enter(opool_mt *p);
void opool__mt_thief_leave(opool_mt *p);
uint32_t opool__mt_steal_registered(opool_mt *p, uint32_t k, uint32_t extra, uint32_t *first,
                                    uint32_t *last);
uint32_t opool__mt_steal(opool_mt *p, uint32_t k, uint32_t extra, uint32_t *first);

/* Slots a passing thief that needs one takes beyond it, to the shared list:
 * one membarrier then serves the next allocs too. */
#define OPOOL__MT_STEAL_EXTRA 15u

/* ==== slots (CONCURRENCY.md, "Generations: who owns a slot") ================================== */

/* Slot i is the caller's (off the list or out of a cache entry): make it
 * live, with home as its home word (a cache's c->home; 0 for the shared
 * path, CONCURRENCY.md, "What a cache hit costs"). */
OPOOL__HOT void *opool__mt_take_as(opool_mt *p, uint32_t i, opool_handle *out, uint64_t home) {
    /* relaxed: the slot is ours; its last generation came with it (the
     * acquire that gave us the slot) */
    uint32_t g = opool__atomic_load_relaxed(&p->gen[i]) + 1;
    void *obj = opool__mt_object(p, i);
    if (OPOOL_UNLIKELY(p->hooks)) opool__mt_prepare(p, i, g, obj);
    /* the shared path writes a home word only to clear a home or claim left
     * by an earlier generation, which keeps its line shared */
    if (home != 0 || OPOOL_UNLIKELY(opool__atomic_load_relaxed(&p->own[i]) != 0))
        opool__mt_set_home(p->own, i, home); /* opool_abi_mt.h */
    opool__mt_go_live(p->gen, i, g, out);
    return obj;
}

/* The shared path's take: the slot has no home. */
OPOOL__HOT void *opool__mt_take(opool_mt *p, uint32_t i, opool_handle *out) {
    return opool__mt_take_as(p, i, out, 0);
}

/* An object was freed: while an episode is open, maybe its end (a count
 * of the pool, out of line: episodes are rare). */
OPOOL__HOT void opool__mt_end_episode(opool_mt *p) {
    if (OPOOL_UNLIKELY(opool__episode_failures(&p->sig.episode) != 0)) opool__mt_settle(p);
}

/* The end of a claim that won slot i from generation g: fini and poison,
 * and whether the slot comes back (*keep) or retires. */
OPOOL__HOT opool_status opool__mt_claimed(opool_mt *p, uint32_t i, uint32_t g, bool *keep) {
    if (OPOOL_UNLIKELY(p->hooks)) opool__mt_released(p, opool__mt_object(p, i));
    *keep = !(g + 1 == p->gen0 && (p->desc.flags & OPOOL_RETIRE_ON_WRAP));
    if (OPOOL_UNLIKELY(!*keep)) opool__atomic_fetch_add_relaxed(&p->retired, 1); /* statistics */
    return OPOOL_OK;
}

/* The claim's CAS of slot i from generation g to g + 1, and its end: of
 * two racing frees exactly one CAS succeeds, and none succeeds after a
 * biased home's claim (CONCURRENCY.md, "Generations: who owns a slot" and "What a cache hit
 * costs"). OPOOL_ESTALE, changing nothing, when another free came first. */
OPOOL__HOT opool_status opool__mt_claim_cas(opool_mt *p, uint32_t i, uint32_t g, bool *keep) {
    uint32_t want = g;
    /* acquire: the object's state from the thread that made it live (fini
     * and poison touch it next) */
    if (OPOOL_UNLIKELY(!opool__atomic_cas_strong_acquire_relaxed(&p->gen[i], &want, g + 1)))
        return OPOOL_ESTALE;
    return opool__mt_claimed(p, i, g, keep);
}

/* Take slot h's ownership from its user, by any path but the free through
 * the slot's biased home (opool__mt_claim_home): OPOOL_OK and *keep (false
 * when the slot retires instead of coming back), or the rejection, changing
 * nothing. */
OPOOL__HOT opool_status opool__mt_claim(opool_mt *p, opool_handle h, bool *keep) {
    uint32_t i = opool_handle_index(h), g = opool_handle_generation(h);
    opool_status s =
        opool__mt_live(p->gen, opool__mt_capacity_now(p), i, g); /* fini and poison read after */
    if (OPOOL_UNLIKELY(s != OPOOL_OK)) return s;
    /* relaxed: the home of generation g (or a later word, whose generation
     * makes the CAS below fail) */
    uint64_t own = opool__atomic_load_relaxed(&p->own[i]);
    if (OPOOL_UNLIKELY(own != 0) && opool__mt_home_first(p, i, g, own)) return OPOOL_ESTALE;
    return opool__mt_claim_cas(p, i, g, keep);
}

/* The calling thread's stripe (CONCURRENCY.md, "The free list"), as a word: stripe + 1, with
 * OPOOL__MT_HELD when the thread holds it alone (in every pool) until it
 * ends. A thread takes one when it first uses any opool_mt: a stripe no
 * running thread holds, else one to share, in turn. */
#define OPOOL__MT_HELD 0x100u
#define OPOOL__MT_STRIPE_OF(w) (((w) & (OPOOL__MT_HELD - 1)) - 1)
#if !defined(OPOOL_RELACY)
/* Declared here and defined in opool_mt.c, both static in dist/opool.h
 * under OPOOL_STATIC, where the library is one file's own. */
#if defined(OPOOL_STATIC)
#define OPOOL__MT_SHARED_DECL static
#define OPOOL__MT_SHARED_DEF static
#else
#define OPOOL__MT_SHARED_DECL extern
#define OPOOL__MT_SHARED_DEF
#endif
/* In a shared library, the default model of thread-local storage makes every
 * access a call (__tls_get_addr): two per cacheless alloc or free. The
 * initial-exec model makes it a load from the thread pointer; a library
 * loaded with dlopen takes its 4 bytes from the static TLS glibc keeps in
 * reserve for that. Only with glibc: musl and Android refuse to load a
 * library with such TLS through dlopen. */
#if (defined(__GNUC__) || defined(__clang__)) && defined(__GLIBC__) && !defined(__ANDROID__) &&    \
    !defined(OPOOL_STATIC)
#define OPOOL__MT_TLS_MODEL __attribute__((tls_model("initial-exec")))
#else
#define OPOOL__MT_TLS_MODEL
#endif
OPOOL__MT_SHARED_DECL _Thread_local unsigned opool__mt_stripe_of_thread
    OPOOL__MT_TLS_MODEL;               /* 0 until first use */
unsigned opool__mt_stripe_first(void); /* opool_mt.c: assigns it */
OPOOL__HOT unsigned opool__mt_stripe_word(void) {
    unsigned w = opool__mt_stripe_of_thread;
    return OPOOL_LIKELY(w != 0) ? w : opool__mt_stripe_first();
}
#else
unsigned opool__mt_stripe_word(void); /* tests/relacy: each simulated thread has its own */
#endif

OPOOL__HOT unsigned opool__mt_my_stripe(void) {
    return OPOOL__MT_STRIPE_OF(opool__mt_stripe_word());
}

/* The live count of the calling thread's stripe, by d: a load and a store
 * when the thread holds the stripe alone, else an atomic add. */
OPOOL__HOT void opool__mt_add_live(opool_mt *p, int64_t d) {
    unsigned w = opool__mt_stripe_word();
    opool__mt_stripe *st = &p->stripes[OPOOL__MT_STRIPE_OF(w)];
    /* relaxed: counters; only count() reads them */
    if (OPOOL_LIKELY(w & OPOOL__MT_HELD)) /* its only writer */
        opool__atomic_store_relaxed(&st->owned, opool__atomic_load_relaxed(&st->owned) + d);
    else
        opool__atomic_fetch_add_relaxed(&st->live, d);
}

/* No free slot anywhere: true if a growth may have added some since (the
 * caller looks again), false if the pool cannot grow, is at its limit (an
 * alloc that fails there touches nothing of the growth), or the wait for
 * another thread's growth took longer than timeout_ns (as opool__mt_grow). */
OPOOL__HOT bool opool__mt_grew(opool_mt *p, uint64_t timeout_ns) {
    /* relaxed: the capacity only rises, and at the limit it stays */
    return OPOOL_UNLIKELY(p->grows) && opool__mt_capacity_now(p) < p->max_capacity &&
           opool__mt_grow(p, timeout_ns);
}

/* The opool__now_ns time timeout_ns from now; UINT64_MAX for
 * OPOOL_WAIT_FOREVER (and past the clock's range). */
static inline uint64_t opool__mt_deadline(uint64_t timeout_ns) {
    if (timeout_ns == OPOOL_WAIT_FOREVER) return UINT64_MAX;
    uint64_t now = opool__now_ns();
    return timeout_ns < UINT64_MAX - now ? now + timeout_ns : UINT64_MAX - 1;
}

/* ==== waiting (CONCURRENCY.md, "Waiting, and the stranding policy") =========================== */

/* n slots have just become available (pushed, or parked with no waiter
 * seen): wake up to n sleepers; close an exhaustion episode. */
OPOOL__HOT void opool__mt_freed(opool_mt *p, uint32_t n) {
    /* seq_cst: the freer's half of the handshake (CONCURRENCY.md, "Waiting, and the stranding
     * policy"): after the push's seq_cst CAS, either this sees the waiter or the waiter's pop sees
     * the slots */
    if (OPOOL_UNLIKELY(opool__atomic_load_seq_cst(&p->sig.waiters) != 0)) opool__mt_wake_slow(p, n);
    opool__mt_end_episode(p);
}

/* The owner's light barrier between parking a slot and reading waiters. */
OPOOL__HOT void opool__mt_light_barrier(const opool_mt *p) {
    if (OPOOL_LIKELY(p->light_park))
        opool__atomic_signal_fence_seq_cst(); /* the waiter's membarrier does the rest */
    else
        opool__atomic_fence_seq_cst(); /* pairs with the waiter's fence */
}

/* ==== caches (CONCURRENCY.md, "Caches (magazines) and stealing") ============================== */

/* Parked slots (thieves may take some at any time). */
static inline uint32_t opool__mt_parked(const opool_mt_cache *c) {
    /* relaxed: the owner's own counter, and a top that can only be stale low */
    uint64_t b = opool__atomic_load_relaxed(&c->bottom);
    uint64_t t = opool__atomic_load_relaxed(&c->top);
    return t < b ? (uint32_t)(b - t) : 0;
}

#endif /* OPOOL_MT_INTERNAL_H */
