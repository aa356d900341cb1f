/*
 * opool_abi_mt.h -- NOT API, BUT ABI: the private layout behind the inline
 * fast paths of opool_mt.h (a cache's alloc and free hits), and those
 * paths' bodies. opool_abi.h is the core pool's part and explains how an
 * inline function is also exported; opool_abi_heap.h is the heap's.
 *
 * Do not include this file yourself and do not use anything in it:
 * opool_mt.h includes it at its end, and every name here may change in any
 * release. It is installed because inline code compiled into your program
 * reads these structs directly: changing any layout here, or the contract of
 * a function declared here, breaks binaries built against an older copy of
 * this header (bump the SONAME then).
 *
 * LICENSE: zlib (see LICENSE)
 */
#ifndef OPOOL__ABI_MT_H
#define OPOOL__ABI_MT_H

#include "opool_mt.h" /* when included on its own: the declarations come first */

/* C's casts in the inline bodies: see opool_abi.h. Popped at the end. */
#if defined(__cplusplus) && defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wold-style-cast"
#endif

/* The cache hit paths are inline with GCC and Clang (their __atomic
 * builtins; other compilers call the exported functions), except in the
 * library's test builds (OPOOL_TEST_HOOKS, OPOOL_RELACY), whose calls reach
 * the same bodies through the exported functions, with the named points of
 * src/opool_mt_points.h in them. OPOOL_MT_NO_INLINE turns them off too
 * (every call out of line). */
#if (defined(__GNUC__) || defined(__clang__)) && !defined(OPOOL_TEST_HOOKS) &&                     \
    !defined(OPOOL_RELACY) && !defined(OPOOL_MT_NO_INLINE)
#define OPOOL__MT_INLINE 1
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The words of a pool that cache hits read: one cache line of it, written
 * only when a thread starts or stops stealing or waiting, when a free wakes
 * a sleeper and when an exhaustion episode opens or closes. */
typedef struct opool__mt_signals {
    OPOOL__ATOMIC(uint32_t) thieves; /* threads that may take parked slots from caches */
    OPOOL__ATOMIC(uint32_t) waiters; /* threads in alloc_wait */
    OPOOL__ATOMIC(uint32_t) epoch;   /* the futex word: bumped by a free that saw a waiter */
    uint32_t spare;
    opool__episode episode;
} opool__mt_signals;

/* A cache record (docs/CONCURRENCY.md, "Caches (magazines) and stealing" and "What a cache hit
 * costs"). Its entries, ent[k & mask], follow it in the same allocation (opool__mt_ent). It holds
 * copies of the pool's fixed fields that a hit needs, so a hit reads no line of the pool but its
 * signals: on LP64 the record is two cache lines, its owner's. The 64-bit atomic fields come first,
 * so that C (where _Atomic(uint64_t) may be more aligned than uint64_t, as on i386) and C++ put
 * every field at the same offset. */
struct opool_mt_cache {
    /* The parked slots are ent[k & mask] for k in [top, bottom): a work-
     * stealing deque, oldest at top. The owner pushes and takes at bottom
     * (only it writes bottom); thieves and the owner's spills take at top by
     * CAS. Both only grow. */
    OPOOL__ATOMIC(uint64_t) bottom;
    OPOOL__ATOMIC(uint64_t) top;
    OPOOL__ATOMIC(int64_t) live; /* allocs minus frees through this record: only its owner writes */
    /* its home id << 32 (0: it never claims biased): CONCURRENCY.md, "What a cache hit costs" */
    uint64_t home;
    OPOOL__ATOMIC(uint32_t) * gen; /* the pool's, copied: its generations */
    OPOOL__ATOMIC(uint64_t) * own; /* the pool's, copied: its slots' home words */
    unsigned char *objects;        /* the pool's, copied */
    size_t stride;                 /* the pool's, copied */
    opool__mt_signals *sig;        /* the pool's */
    struct opool_mt *pool;
    struct opool_mt_cache *next_rec; /* registry link: set before the record is published */
    uint32_t mask;                   /* entries - 1 (a power of two - 1) */
    uint32_t size;                   /* the current owner's size */
    /* OPOOL__MT_BIASED (0) until another path frees a slot it allocated:
     * read by its owner's every free, written once by a revoker */
    OPOOL__ATOMIC(uint32_t) remote;
    /* nonzero: hits may take the inline path (a home id, the membarrier
     * barrier, and a pool without hooks) */
    uint32_t fast;
    uint32_t capacity;  /* the pool's, copied */
    uint32_t retire_at; /* a free making this generation retires its slot (odd: never) */
    uint32_t half;      /* the current owner's size / 2 */
    OPOOL__ATOMIC(uint32_t) active; /* an owner has it */
};

/* Where the entries start: the record's size rounded up to 8, the same in C
 * and in C++ whatever padding each gives the record. */
#define OPOOL__MT_CACHE_HEAD ((sizeof(struct opool_mt_cache) + 7) & ~(size_t)7)

/* The entries of cache c (its owner writes them; anyone may read them). */
static inline OPOOL__ATOMIC(uint32_t) * opool__mt_ent(const opool_mt_cache *c) {
    return (OPOOL__ATOMIC(uint32_t) *)((uintptr_t)c + OPOOL__MT_CACHE_HEAD);
}

/* Where the inline cache alloc and free go for everything but a hit
 * (src/opool_mt_cache.c). Exported, since the inline code in your program
 * calls them: ABI, not API.
 *   alloc_slow     the whole alloc: no fast record, an empty cache (refill)
 *   alloc_lowered  bottom was lowered to b and the barrier passed, but a
 *                  thief is registered or has emptied the cache: the take
 *                  as Chase-Lev's, then the rest of the alloc
 *   free_slow      the whole free: any handle that is not a live slot this
 *                  cache allocated, a full cache, a retiring slot
 *   free_revoked   h's claim is stored but the cache is no longer biased:
 *                  the claim's CAS, then the rest of the free
 *   parked         the slot is parked and published, and a thread waits or
 *                  an episode is open: hand it over, or see the episode end */
OPOOL_API void *opool__mt_cache_alloc_slow(opool_mt_cache *c, opool_handle *out);
OPOOL_API void *opool__mt_cache_alloc_lowered(opool_mt_cache *c, opool_handle *out, uint64_t b);
OPOOL_API opool_status opool__mt_cache_free_slow(opool_mt_cache *c, opool_handle h);
OPOOL_API opool_status opool__mt_cache_free_revoked(opool_mt_cache *c, opool_handle h);
OPOOL_API void opool__mt_cache_parked(opool_mt_cache *c);

/* The steps of a cache hit, each written once below, for the inline hits
 * and for the library's own paths (src/opool_mt_cache.c): on these macros,
 * here GCC's and Clang's __atomic builtins, a compiler barrier and no named
 * points. The library's files define them before they include opool_mt.h
 * (src/opool_mt_internal.h stops a file that does not), on its own atomics,
 * with its barrier and the named points of its test builds; the single
 * header keeps these. The barrier and the points are used in
 * the hits only, which run only where the other side of the barriers is
 * membarrier (c->fast): the steps the library's other paths share are
 * memory operations, with no barrier in them. */
#if !defined(OPOOL__MT_STEPS) && (defined(__GNUC__) || defined(__clang__))
#define OPOOL__MT_STEPS 1
#if defined(__clang__) && !defined(__cplusplus)
#define OPOOL__MT_LOAD_RELAXED(p) __c11_atomic_load(p, __ATOMIC_RELAXED)
#define OPOOL__MT_LOAD_ACQUIRE(p) __c11_atomic_load(p, __ATOMIC_ACQUIRE)
#define OPOOL__MT_STORE_RELAXED(p, v) __c11_atomic_store(p, v, __ATOMIC_RELAXED)
#define OPOOL__MT_STORE_RELEASE(p, v) __c11_atomic_store(p, v, __ATOMIC_RELEASE)
#else
#define OPOOL__MT_LOAD_RELAXED(p) __atomic_load_n(p, __ATOMIC_RELAXED)
#define OPOOL__MT_LOAD_ACQUIRE(p) __atomic_load_n(p, __ATOMIC_ACQUIRE)
#define OPOOL__MT_STORE_RELAXED(p, v) __atomic_store_n(p, v, __ATOMIC_RELAXED)
#define OPOOL__MT_STORE_RELEASE(p, v) __atomic_store_n(p, v, __ATOMIC_RELEASE)
#endif
/* The owner's side of the asymmetric barriers of CONCURRENCY.md, "Caches (magazines) and stealing",
 * "Waiting, and the stranding policy" and "What a cache hit costs": orders the compiler only. */
#define OPOOL__MT_LIGHT_BARRIER(c) __atomic_signal_fence(__ATOMIC_SEQ_CST)
#define OPOOL__MT_HIT_POINT(c, at) ((void)0)
#endif

#if defined(OPOOL__MT_STEPS)

/* The handle check of every path of the concurrent pool: OPOOL_OK when g is
 * slot i's generation and a live one; else OPOOL_EINVAL (an even generation,
 * an index past capacity) or OPOOL_ESTALE. acquire: the object's state from
 * the thread that made it live, and the slot's home, written before
 * generation g was released. */
static inline opool_status opool__mt_live(OPOOL__ATOMIC(uint32_t) * gen, uint32_t capacity,
                                          uint32_t i, uint32_t g) {
    if (OPOOL_UNLIKELY(!(g & 1) || i >= capacity)) return OPOOL_EINVAL;
    if (OPOOL_UNLIKELY(OPOOL__MT_LOAD_ACQUIRE(&gen[i]) != g)) return OPOOL_ESTALE;
    return OPOOL_OK;
}

/* The owner lowers bottom to take the newest parked slot: false when the
 * cache is empty (a stale top is smaller, so "empty" is never wrong), else
 * bottom lowered and in *b the entry to take. The light barrier that must
 * follow, before the read of thieves, is the caller's. */
static inline bool opool__mt_lower(opool_mt_cache *c, uint64_t *b) {
    uint64_t x = OPOOL__MT_LOAD_RELAXED(&c->bottom); /* ours */
    if (OPOOL_UNLIKELY(x == OPOOL__MT_LOAD_RELAXED(&c->top))) return false;
    OPOOL__MT_STORE_RELAXED(&c->bottom, --x);
    *b = x;
    return true;
}

/* The owner's count of what went live through c, by d (only it writes; only
 * counts read it). */
static inline void opool__mt_count_own(opool_mt_cache *c, int64_t d) {
    OPOOL__MT_STORE_RELAXED(&c->live, OPOOL__MT_LOAD_RELAXED(&c->live) + d);
}

/* Slot i's home word, for the generation about to go live (published by
 * opool__mt_go_live's store). */
static inline void opool__mt_set_home(OPOOL__ATOMIC(uint64_t) * own, uint32_t i, uint64_t home) {
    OPOOL__MT_STORE_RELAXED(&own[i], home);
}

/* Slot i goes live with generation g, published (release): a get that sees
 * g sees the object as prepared, and a free that sees g sees its home. The
 * handle to *out. */
static inline void opool__mt_go_live(OPOOL__ATOMIC(uint32_t) * gen, uint32_t i, uint32_t g,
                                     opool_handle *out) {
    OPOOL__MT_STORE_RELEASE(&gen[i], g);
    if (out) *out = opool__handle(i, g);
}

/* The claim of slot i's generation g by its home c, by plain stores
 * (CONCURRENCY.md, "What a cache hit costs"): the claim word, which a revoker reads after its
 * barrier. The light barrier, then opool__mt_still_biased, must follow. */
static inline void opool__mt_claim_store(opool_mt_cache *c, uint32_t i, uint32_t g) {
    OPOOL__MT_STORE_RELAXED(&c->own[i], c->home | g);
}

/* After a claim and the light barrier: true while no revoker has come, and
 * the claim stands (relaxed: ordered after the claim by the barrier pair). */
static inline bool opool__mt_still_biased(const opool_mt_cache *c) {
    return OPOOL__MT_LOAD_RELAXED(&c->remote) == 0; /* OPOOL__MT_BIASED */
}

/* The publication of the park (CONCURRENCY.md, "Waiting, and the stranding policy"), the one way
 * slots enter a cache: bottom raised to b over the entries written below it (release: a thief that
 * reads the new bottom sees them and their slots). The light barrier, then opool__mt_waiting, must
 * follow. */
static inline void opool__mt_set_bottom(opool_mt_cache *c, uint64_t b) {
    OPOOL__MT_STORE_RELEASE(&c->bottom, b);
}

/* After a publication and the light barrier: true if a thread waits. It may
 * have scanned this cache before the entries were there and gone to sleep,
 * so they must go to the shared list, which wakes it (relaxed: ordered
 * after the publication by the barrier pair). */
static inline bool opool__mt_waiting(const opool_mt_cache *c) {
    return OPOOL__MT_LOAD_RELAXED(&c->sig->waiters) != 0;
}

/* The alloc hit: the owner's take of the newest parked slot with no thief
 * registered (CONCURRENCY.md, "Caches (magazines) and stealing"), the slot made live with c as its
 * home (CONCURRENCY.md, "What a cache hit costs"). The exported opool_mt_cache_alloc runs it too
 * (src/opool_abi.c), so the library's tests run this body. */
OPOOL__HOT void *opool__mt_cache_alloc_inline(opool_mt_cache *c, opool_handle *out) {
    uint64_t b;
    if (OPOOL_UNLIKELY(c == NULL || !c->fast || !opool__mt_lower(c, &b)))
        return opool__mt_cache_alloc_slow(c, out); /* empty: the refill */
    OPOOL__MT_LIGHT_BARRIER(c);                    /* the bottom store before the read of thieves */
    /* acquire: a thief that has left published its CAS on top before */
    if (OPOOL_UNLIKELY(OPOOL__MT_LOAD_ACQUIRE(&c->sig->thieves) != 0 ||
                       OPOOL__MT_LOAD_RELAXED(&c->top) > b))
        return opool__mt_cache_alloc_lowered(c, out, b);
    uint32_t i = OPOOL__MT_LOAD_RELAXED(&opool__mt_ent(c)[b & c->mask]);
    opool__mt_set_home(c->own, i, c->home);
    opool__mt_go_live(c->gen, i, OPOOL__MT_LOAD_RELAXED(&c->gen[i]) + 1, out);
    opool__mt_count_own(c, 1);
    void *obj = c->objects + i * c->stride;
    OPOOL__NONNULL(obj);
    return obj;
}

/* The free hit: a live handle of a slot this cache allocated, while the
 * cache is biased, parked in a cache with room: the claim with plain stores
 * (CONCURRENCY.md, "What a cache hit costs"), then the park and its handshake with waiters
 * (CONCURRENCY.md, "Waiting, and the stranding policy"). The exported opool_mt_cache_free runs it
 * too. */
OPOOL__HOT opool_status opool__mt_cache_free_inline(opool_mt_cache *c, opool_handle h) {
    uint32_t i = (uint32_t)h.bits, g = (uint32_t)(h.bits >> 32);
    if (OPOOL_UNLIKELY(c == NULL || !c->fast ||
                       opool__mt_live(c->gen, c->capacity, i, g) != OPOOL_OK))
        return opool__mt_cache_free_slow(c, h);
    uint64_t b = OPOOL__MT_LOAD_RELAXED(&c->bottom); /* ours */
    /* a top read after the check's acquire only grows before the park
     * (full stays false) */
    if (OPOOL_UNLIKELY(OPOOL__MT_LOAD_RELAXED(&c->own[i]) != c->home ||
                       b - OPOOL__MT_LOAD_RELAXED(&c->top) >= c->size || g + 1 == c->retire_at))
        return opool__mt_cache_free_slow(c, h);
    OPOOL__MT_HIT_POINT(c, CLAIM_CHECKED);
    opool__mt_claim_store(c, i, g);
    OPOOL__MT_LIGHT_BARRIER(c); /* the claim before the read of remote */
    OPOOL__MT_HIT_POINT(c, CLAIM_STORED);
    if (OPOOL_UNLIKELY(!opool__mt_still_biased(c))) return opool__mt_cache_free_revoked(c, h);
    OPOOL__MT_HIT_POINT(c, CLAIM_BIASED);
    OPOOL__MT_STORE_RELAXED(&c->gen[i], g + 1); /* published by the park */
    opool__mt_count_own(c, -1);
    OPOOL__MT_STORE_RELAXED(&opool__mt_ent(c)[b & c->mask], i); /* published below */
    opool__mt_set_bottom(c, b + 1);
    OPOOL__MT_LIGHT_BARRIER(c); /* the park before the read of waiters */
    OPOOL__MT_HIT_POINT(c, PARK_PUBLISHED);
    if (OPOOL_UNLIKELY(opool__mt_waiting(c) ||
                       OPOOL__MT_LOAD_RELAXED(&c->sig->episode.failures) != 0))
        opool__mt_cache_parked(c);
    return OPOOL_OK;
}

#endif /* OPOOL__MT_STEPS */

#if defined(OPOOL__MT_INLINE)
#define opool_mt_cache_alloc(c, out) opool__mt_cache_alloc_inline(c, out)
#define opool_mt_cache_free(c, h) opool__mt_cache_free_inline(c, h)

#endif /* OPOOL__MT_INLINE */

#ifdef __cplusplus
} /* extern "C" */
#endif

#if defined(__cplusplus) && defined(__clang__)
#pragma clang diagnostic pop
#endif

#endif /* OPOOL__ABI_MT_H */
