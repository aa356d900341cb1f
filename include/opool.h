/*
 * opool.h -- object pools with generational handles (C11, single-threaded core)
 *
 * ============================================================================
 * WHAT IT IS
 * ============================================================================
 * A pool hands out fixed-size objects in O(1) from storage reserved up front
 * and names each one with a 64-bit handle: the slot index in the low 32 bits,
 * the slot's generation in the high 32 bits. A slot's generation is odd while
 * it is live and even while it is free; alloc and free each advance it by one,
 * so a handle stops working the moment its object is freed and can never
 * silently reach the object that later reuses the slot.
 *
 * ============================================================================
 * STEP BY STEP
 * ============================================================================
 *     opool_desc d = {0};
 *     d.object_size = sizeof(struct particle);
 *     d.capacity    = 4096;
 *     opool *pool;
 *     if (opool_create(&pool, &d) != OPOOL_OK) ...;
 *
 *     opool_handle h;
 *     struct particle *p = opool_alloc(pool, &h);   // NULL when full
 *     ...
 *     struct particle *q = opool_get(pool, h);      // NULL once h is stale
 *     opool_free(pool, h);                          // OPOOL_ESTALE the 2nd time
 *
 *     // visit every live object; freeing the one at i is allowed
 *     for (uint32_t i = opool_count(pool); i-- > 0;) {
 *         struct particle *it = opool_live_object(pool, i);
 *         if (dead(it)) opool_free(pool, opool_live_handle(pool, i));
 *     }
 *     opool_destroy(pool);
 *
 * ============================================================================
 * HOW IT WORKS, AND WHAT IT COSTS
 * ============================================================================
 * Every slot has an 8-byte record {generation, roster position}. The roster is
 * one uint32 per slot: its prefix [0, count) lists the live slots (the dense
 * live list that iteration walks) and its suffix is the free stack, whose top
 * sits at position count. alloc takes roster[count++]; free swaps the freed
 * slot's roster entry with the last live one and decrements count. Reuse is
 * therefore LIFO, and a fresh pool hands out slots 0, 1, 2, ... in order.
 *
 * ITERATION. The live list is what opool_live_object(p, i) and
 * opool_live_handle(p, i) read, for i in [0, count). A free moves the list's
 * last entry into the freed object's place; an alloc appends. So in
 *
 *     for (uint32_t i = opool_count(pool); i-- > 0;) { ... opool_live_object(pool, i) ... }
 *
 * whatever happened to the pool before the loop:
 *   - every object live when the loop starts is visited exactly once;
 *   - freeing the object at i (the current one) is allowed: the last entry,
 *     already visited or allocated inside the loop, takes place i, which the
 *     loop has passed;
 *   - allocating is allowed, and an object allocated inside the loop is not
 *     visited: it joins the end of the list, behind i;
 *   - growth (OPOOL_FULL_GROW) inside the loop adds free slots only.
 * Freeing other objects inside the loop (opool_free of another handle,
 * opool_free_object, a fini that frees, an OPOOL_FULL_EVICT victim) follows
 * the same rule, with these effects on the rest of the loop:
 *   - an object the loop has visited (at a position above i): none;
 *   - an object the loop has not reached (below i): it is not visited, and
 *     the last entry moves into its place, where the loop will reach it: a
 *     second visit if it had been visited (it stood at i or above), a first
 *     one if it was allocated inside the loop;
 *   - once such frees bring count to i or below, the indices from count up
 *     to the current one are past the end (NULL, OPOOL_NULL: skip them), and
 *     an object allocated then lands below i and is visited.
 * To drop arbitrary objects during a pass, free only the current one and
 * collect the others' handles for after the loop. opool_sort, opool_clear,
 * opool_shrink and opool_load rebuild the list: call them between loops.
 *
 * Memory per slot: the object rounded up to its alignment (the stride), plus
 * 12 bytes of bookkeeping (8 for the slot record, 4 for the roster entry).
 * The pool header itself is a few hundred bytes.
 *
 * A growable pool (OPOOL_FULL_GROW) reserves its first chunk with its capacity
 * rounded up to a power of two, and each growth adds a chunk as large as all
 * the storage before it (capped at max_capacity). Objects never move. The
 * first chunk of objects starts on a 64-byte cache line, and so do grown
 * ones with the default allocator (a custom one is asked only for
 * object_align: see opool_allocator).
 *
 * ============================================================================
 * ERRORS
 * ============================================================================
 * Expected outcomes are return values: NULL, OPOOL_NULL or an opool_status.
 * Bad input never crashes the pool or changes it: a NULL pool, a NULL desc,
 * a zero size or capacity, a bad alignment, an overflowing size, a forged,
 * stale or foreign handle or pointer. Findings that point at a bug in the
 * caller go to desc.report (see opool_desc).
 *
 * Handles given to any function are classified the same way:
 *   - generation even (this includes OPOOL_NULL) or index out of range:
 *     never issued by this pool -> OPOOL_EINVAL;
 *   - odd generation, index in range, but not the slot's current one:
 *     stale (freed, reused) or from another pool -> OPOOL_ESTALE.
 *
 * Thread-safety: one thread at a time per pool (see opool_mt.h to share one).
 * Different pools may be used by different threads at the same time.
 *
 * ============================================================================
 * LICENSE: zlib (see LICENSE)
 * ============================================================================
 */
#ifndef OPOOL_H
#define OPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define OPOOL_VERSION_MAJOR 0
#define OPOOL_VERSION_MINOR 1
#define OPOOL_VERSION_PATCH 0
#define OPOOL_VERSION 100 /* major * 10000 + minor * 100 + patch */

#if defined(__GNUC__) || defined(__clang__)
#define OPOOL_NODISCARD __attribute__((warn_unused_result))
#define OPOOL_PURE __attribute__((pure))
#define OPOOL_LIKELY(x) __builtin_expect(!!(x), 1)
#define OPOOL_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define OPOOL_NODISCARD
#define OPOOL_PURE
#define OPOOL_LIKELY(x) (x)
#define OPOOL_UNLIKELY(x) (x)
#endif

/* Every function of the library is declared OPOOL_API. The library is built
 * with hidden visibility (-fvisibility=hidden), so a shared build exports
 * these and nothing else. Define OPOOL_API yourself to change the attribute. */
#ifndef OPOOL_API
#if defined(__GNUC__) || defined(__clang__)
#define OPOOL_API __attribute__((visibility("default")))
#else
#define OPOOL_API
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- handles ------------------------------------------------------------ */

typedef struct opool_handle {
    uint64_t bits; /* low 32: slot index; high 32: generation (odd = live) */
} opool_handle;

#ifdef __cplusplus
#define OPOOL_NULL (opool_handle{0})
#else
#define OPOOL_NULL ((opool_handle){0})
#endif

/* The two halves of a handle, and comparisons. No pool needed; O(1), inline. */
OPOOL_API uint32_t opool_handle_index(opool_handle h);
OPOOL_API uint32_t opool_handle_generation(opool_handle h);
OPOOL_API bool opool_handle_is_null(opool_handle h);
OPOOL_API bool opool_handle_eq(opool_handle a, opool_handle b);

/* A compact handle: 4 bytes instead of 8, for references stored by the
 * million (opool_handle_compact, opool_handle_expand). {0} is never a live
 * object's compact handle. Only meaningful with the pool that made it. */
typedef struct opool_handle32 {
    uint32_t bits; /* low k bits: slot index; high 32 - k bits: low bits of the generation */
} opool_handle32;

/* ---- status, policies, flags ------------------------------------------- */

typedef enum opool_status {
    OPOOL_OK = 0,
    OPOOL_EINVAL,            /* bad argument: NULL, zero, overflow, never-issued handle */
    OPOOL_ENOMEM,            /* the allocator failed */
    OPOOL_EFULL,             /* no free slot (report: once per exhaustion episode) */
    OPOOL_ESTALE,            /* handle was valid once, or belongs to another pool */
    OPOOL_EBUSY,             /* the slot asked for is live */
    OPOOL_ECORRUPT,          /* a saved image failed its checks */
    OPOOL_EWRITE_AFTER_FREE, /* poison pattern of a free slot changed */
    OPOOL_ETIMEDOUT          /* a wait gave up */
} opool_status;

typedef enum opool_full_policy {
    OPOOL_FULL_FAIL = 0, /* alloc returns NULL */
    OPOOL_FULL_GROW,     /* add storage, up to max_capacity; objects never move */
    OPOOL_FULL_EVICT     /* desc.evict chooses a live victim; it is freed and its slot reused */
} opool_full_policy;

enum {
    OPOOL_ZERO = 1u << 0,           /* objects are zero-filled on every alloc */
    OPOOL_POISON = 1u << 1,         /* free slots filled with 0x1deadb0b, checked on reuse */
    OPOOL_RETIRE_ON_WRAP = 1u << 2, /* a slot whose generation would wrap is retired for good:
                                       the generation bits of a compact handle (see
                                       opool_handle_compact) count, so that compact handles
                                       never match falsely either */
    OPOOL__FLAGS_ALL = (1u << 3) - 1
};

/* Largest capacity or max_capacity a pool accepts. */
#define OPOOL_MAX_CAPACITY 0xFFFFFF00u

typedef struct opool opool;

/* Byte streams for save and load. write: like fwrite, returns the bytes
 * written (short = failure). read: like fread, returns the bytes read (short
 * = end of input or failure). */
typedef size_t (*opool_write_fn)(void *ctx, const void *data, size_t size);
typedef size_t (*opool_read_fn)(void *ctx, void *data, size_t size);

/* Where a pool's memory comes from. All zero: the C library. Otherwise alloc
 * and free (or free_aligned, or both). alloc returns size bytes aligned to
 * align (a power of two), or NULL; every block comes back exactly once, with
 * the size it was asked with, through free_aligned when it is set (with the
 * align it was asked with) and through free otherwise.
 *
 * What the core pool asks for, and why that alignment:
 *   the creation block (opool_create, opool_load): 8 (4 on some 32-bit
 *     machines: the pool header's own alignment): the header, the slot arrays and the
 *     first objects are placed inside it at their own alignments (the
 *     header on a cache line, objects on max(object_align, 64)) with slack
 *     counted in its size, as opool_create_in does in any buffer;
 *   a grown chunk of objects (OPOOL_FULL_GROW, opool_load): object_align
 *     (alignof(max_align_t) by default), what the objects need; an id-only
 *     pool asks for none;
 *   grown slot arrays: alignof(uint32_t), their elements' alignment;
 *   save and load buffers (bytes, read and written a byte at a time), a
 *     file's temporary path: 1;
 *   opool_load's check of the slots: alignof(uint64_t) (a bitmap).
 * So an allocator that gives 32-byte alignment serves any pool whose
 * object_align is at most 32. The default allocator gives a cache line (64)
 * to every block, so chunks start on one. opool_heap, opool_mt and
 * opool_side call free: they need it set. */
typedef struct opool_allocator {
    void *(*alloc)(void *ctx, size_t size, size_t align);
    void (*free)(void *ctx, void *ptr, size_t size);
    void *ctx;
    /* optional, appended: free told the alignment too (the core pool) */
    void (*free_aligned)(void *ctx, void *ptr, size_t size, size_t align);
} opool_allocator;

/* Zero-initialise, then set what you need. */
typedef struct opool_desc {
    size_t object_size;         /* 0: an id-only pool (see opool_create) */
    size_t object_align;        /* 0 = alignof(max_align_t); a power of two <= 4096 */
    uint32_t capacity;          /* required, > 0: slots reserved at create (a growable pool
                                   rounds it up to a power of two, capped at max_capacity) */
    uint32_t max_capacity;      /* 0 = capacity; only OPOOL_FULL_GROW grows toward it */
    opool_full_policy on_full;  /* what alloc does when no slot is free */
    uint32_t flags;             /* OPOOL_ZERO | OPOOL_POISON | OPOOL_RETIRE_ON_WRAP */
    uint32_t salt;              /* generation origin; 0 = derived from creation order */
    void (*init)(void *obj, void *user); /* optional: after every alloc (after OPOOL_ZERO) */
    /* optional: on free, clear, evict and destroy (and retain), before the slot
     * is freed: obj is still live, so fini may call opool_handle_of(p, obj),
     * opool_handle_at and opool_get on it and get its current handle */
    void (*fini)(void *obj, void *user);
    opool_handle (*evict)(opool *p, void *user); /* OPOOL_FULL_EVICT: return a live victim */
    /* Findings, with the handle concerned (OPOOL_NULL if none):
     *   OPOOL_EFULL              once per exhaustion episode (default: one line on stderr)
     *   OPOOL_ESTALE/OPOOL_EINVAL a rejected free (default: silent; the status says it)
     *   OPOOL_EWRITE_AFTER_FREE  poison changed (default: message on stderr, then abort) */
    void (*report)(opool *p, opool_status what, opool_handle h, void *user);
    void *user; /* passed to every callback */
    opool_allocator allocator;
    /* Save/load of objects that hold pointers (default: the object's bytes).
     * save_object writes any bytes it likes through write(wctx, ...) and
     * returns false on failure; load_object rebuilds an object from exactly
     * those bytes and returns false to reject them (load gives
     * OPOOL_ECORRUPT). Both or neither. */
    bool (*save_object)(const void *obj, opool_write_fn write, void *wctx, void *user);
    bool (*load_object)(void *obj, const void *data, size_t size, void *user);
} opool_desc;

/* Versioned so it can grow: fields are only ever appended. */
typedef struct opool_stats {
    uint32_t version;          /* OPOOL_STATS_VERSION */
    uint32_t capacity;         /* slots usable now (retired slots excluded) */
    uint32_t max_capacity;     /* the growth limit */
    uint32_t count;            /* live objects */
    uint32_t high_water;       /* most objects ever live at once: size the pool with this */
    uint32_t retired;          /* slots retired by OPOOL_RETIRE_ON_WRAP */
    uint64_t allocs;           /* successful allocs (alloc, alloc_at) */
    uint64_t frees;            /* objects freed (free, free_object, clear, evict) */
    uint64_t failed_allocs;    /* allocs that returned NULL because the pool was full */
    uint64_t rejected_handles; /* frees of stale or invalid handles or pointers */
    uint64_t evictions;        /* victims freed by OPOOL_FULL_EVICT */
    uint64_t grows;            /* chunks added by OPOOL_FULL_GROW */
    size_t bytes;              /* memory the pool holds, bookkeeping included */
} opool_stats;
#define OPOOL_STATS_VERSION 1u

/* ---- lifetime ----------------------------------------------------------- */

/* Create a pool. OPOOL_EINVAL: out or desc NULL, capacity 0,
 * object_align not a power of two or > 4096, max_capacity nonzero and below
 * capacity, capacity or max_capacity above OPOOL_MAX_CAPACITY, unknown flags
 * or policy, OPOOL_FULL_EVICT without evict, an allocator with only one of
 * alloc/free, or sizes that overflow. OPOOL_ENOMEM: the allocator failed. *out is set to NULL on
 * any failure. Cost: one allocation; O(capacity) to initialise. */
OPOOL_API OPOOL_NODISCARD opool_status opool_create(opool **out, const opool_desc *desc);
/* ID-ONLY POOLS. object_size 0 gives a pool of handles without object
 * storage: an id allocator (Box2D's b2IdPool, sokol's pool). Handles, the
 * live list, alloc_at, clear, growth, eviction, retain, compact handles and
 * save/load work as for any pool, at 12 bytes per slot (the slot record and
 * the roster entry) and no object memory. alloc, get, at and live_object
 * return a token, the same non-NULL address for every object: test it
 * against NULL, never dereference it. init and fini get the token.
 * opool_handle_of and opool_free_object cannot tell objects apart by it:
 * they give OPOOL_NULL and OPOOL_EINVAL. */

/* Bytes opool_create_in needs for desc, alignment slack included; 0 if desc
 * is invalid (same rules as opool_create). */
OPOOL_API size_t opool_required_bytes(const opool_desc *desc);

/* Create a pool inside buf (any alignment), making no allocation at all.
 * OPOOL_EINVAL: as opool_create, or buf NULL, or size below
 * opool_required_bytes(desc). A growable pool created this way allocates its
 * later chunks with desc->allocator. buf must outlive the pool. */
OPOOL_API OPOOL_NODISCARD opool_status opool_create_in(opool **out, void *buf, size_t size,
                                                       const opool_desc *desc);

/* Run fini on every live object, then release the pool. NULL-safe. */
OPOOL_API void opool_destroy(opool *p);

/* ---- objects ------------------------------------------------------------
 * The O(1) calls. Those marked "inline" compile their common case into the
 * caller (opool_abi.h says how); each is also an exported function. */

/* Allocate an object; its handle goes to *out (if out is not NULL). Returns
 * NULL when p is NULL or the pool is full and its policy cannot make room
 * (counted in failed_allocs, reported once per episode). The object holds
 * whatever it held before unless OPOOL_ZERO or init is set. O(1); growth is
 * O(new storage). Inline. */
OPOOL_API void *opool_alloc(opool *p, opool_handle *out);

/* Re-create an object at exactly h (loading a saved game). Returns NULL if p
 * is NULL, h's generation is even, h's index is beyond what the pool can hold,
 * the slot is retired, or the slot is live; no object changes then. A growable
 * pool grows as needed to reach the index (storage it added stays, free, even
 * if the call then fails). The slot leaves the free
 * stack and the slot that was on top of the stack takes its place. O(1). */
OPOOL_API void *opool_alloc_at(opool *p, opool_handle h);

/* Free h's object (runs fini). OPOOL_EINVAL: p NULL or h never issued (see
 * ERRORS); OPOOL_ESTALE: h stale or foreign. Rejected frees are counted and
 * reported and leave the pool unchanged. O(1); inline. */
OPOOL_API opool_status opool_free(opool *p, opool_handle h);

/* Free by pointer. OPOOL_EINVAL unless obj is the start of a live object of
 * this pool (counted and reported as a rejected handle). O(number of chunks),
 * at most 33. */
OPOOL_API opool_status opool_free_object(opool *p, void *obj);

/* The object of h, or NULL unless h is live in p. O(1); inline. */
OPOOL_API void *opool_get(const opool *p, opool_handle h);

/* opool_get(p, h) != NULL. O(1); inline. */
OPOOL_API bool opool_valid(const opool *p, opool_handle h);

/* The handle of the live object starting at obj, OPOOL_NULL otherwise
 * (interior pointer, free slot, foreign memory, NULL). O(number of chunks). */
OPOOL_API opool_handle opool_handle_of(const opool *p, const void *obj);

/* The live object in slot index, NULL if that slot is free or absent. O(1); inline. */
OPOOL_API void *opool_at(const opool *p, uint32_t index);

/* Free every live object (fini on each): every old handle goes stale, and
 * the free stack is reset so the next allocs take slots 0, 1, 2, ... in
 * order, like a fresh pool. Retired slots stay retired. O(capacity). */
OPOOL_API void opool_clear(opool *p);

/* ---- iteration and introspection --------------------------------------- */

/* Live objects; 0 for NULL. O(1); inline. */
OPOOL_API uint32_t opool_count(const opool *p);

/* Slots usable now (retired ones excluded); 0 for NULL. O(1). */
OPOOL_API uint32_t opool_capacity(const opool *p);

/* The most objects ever live at once (stats.high_water); 0 for NULL. In a
 * pool that never used opool_alloc_at, retired a slot, shrank or was
 * loaded, every index ever handed out is below it (Box2D's nextIndex: the
 * slots ever used), since a fresh pool hands out 0, 1, 2, ... and reuse is
 * LIFO. O(1); inline. */
OPOOL_API uint32_t opool_high_water(const opool *p);

/* The current handle of the live object in slot index, OPOOL_NULL if that
 * slot is free, retired, without storage or beyond the pool (any index, even
 * UINT32_MAX, is safe), or p is NULL. For engines that keep raw indices:
 * opool_free(p, opool_handle_at(p, i)) frees by index. O(1); inline. */
OPOOL_API opool_handle opool_handle_at(const opool *p, uint32_t index);

/* The i-th entry of the live list, i in [0, count); OPOOL_NULL/NULL
 * otherwise. Iterate backwards, i = count..0, to free and allocate while
 * iterating: ITERATION at the top of this file says exactly what each does
 * to the loop. O(1); inline. */
OPOOL_API opool_handle opool_live_handle(const opool *p, uint32_t i);
OPOOL_API void *opool_live_object(const opool *p, uint32_t i);

/* Visit every live object exactly once, in the order of the backward loop
 * above, calling keep(obj, its handle, user); free (running fini) each one
 * for which keep returns false. Returns how many it freed; 0 if p or keep is
 * NULL. keep may allocate (objects allocated during the pass are not
 * visited) and may free its own object (then retain does not free it again
 * and does not count it). Frees of other objects inside keep or fini follow
 * ITERATION: one not yet visited is skipped and the last entry takes its
 * place (it may then be visited twice). O(count) plus the frees.
 * Thread-safety: the pool's. */
OPOOL_API uint32_t opool_retain(opool *p, bool (*keep)(void *obj, opool_handle h, void *user),
                                void *user);

/* The backward loop as a statement: declares T *obj and opool_handle h for
 * the body, which runs once per live object with that object and its
 * handle, exactly as `for (i = opool_count(p); i-- > 0;)` over
 * opool_live_object/opool_live_handle (ITERATION says what frees and allocs
 * inside do). Freeing obj (opool_free(p, h)) is allowed; break and continue
 * work; indices left past the end by frees of other objects are skipped.
 * p is evaluated once per object: pass a plain variable.
 *
 *     OPOOL_FOREACH(pool, struct particle, it, h) {
 *         if (it->life <= 0) opool_free(pool, h);
 *     }
 */
#define OPOOL_FOREACH(p, T, obj, h)                                                                \
    for (uint32_t obj##_opool_i_ = opool_count(p), obj##_opool_go_ = 1, obj##_opool_once_ = 0;     \
         obj##_opool_go_ && obj##_opool_i_-- > 0;)                                                 \
        for (opool_handle h = (obj##_opool_once_ = obj##_opool_i_ < opool_count(p),                \
                              opool_live_handle(p, obj##_opool_i_));                               \
             obj##_opool_once_ && ((void)h, 1); obj##_opool_once_ = 0)                             \
            for (T *obj = (obj##_opool_go_ = 0, (T *)opool_live_object(p, obj##_opool_i_));        \
                 !obj##_opool_go_ && ((void)obj, 1); obj##_opool_go_ = 1)

/* Reorder the live roster by slot index (memory order) so the next iteration
 * walks memory forward. Handles and the free stack are untouched.
 * O(capacity), no allocation. */
OPOOL_API void opool_sort(opool *p);

/* Give back every grown chunk (not the first) that holds no live object.
 * Generations of the released slots are kept, so no old stale handle ever
 * becomes valid again; the slots come back (free) if the pool grows again.
 * Returns the number of slots released. O(capacity). */
OPOOL_API uint32_t opool_shrink(opool *p);

/* ---- compact handles ----------------------------------------------------
 * A pool whose index limit (stats.max_capacity: the capacity of a fixed pool,
 * max_capacity of a growable one) is M needs k bits for an index, the
 * smallest k with 2^k >= M; a compact handle keeps the index in its low k
 * bits and the low 32 - k bits of the generation above them. Generations of
 * live objects are odd, so a live object's compact handle is never {0}.
 * Pools with M > 2^31 have no compact handles (every compact is {0}).
 *
 * The false-match bound: each reuse of a slot (alloc after free) advances
 * its generation by 2, so the low 32 - k bits repeat every 2^(31-k) reuses:
 * a stale compact handle is mistaken for the current one exactly when its
 * slot has been reused a multiple of 2^(31-k) times since (2^29 for a pool
 * of 4 slots, 2^15 for 65536: only that many reuses apart, never sooner).
 * With OPOOL_RETIRE_ON_WRAP a slot is retired when its generation's low
 * 32 - k bits come back to where they started, after 2^(31-k) uses instead
 * of 2^31 (counted in stats.retired): then no stale handle, compact or full,
 * ever matches, unless opool_alloc_at re-creates one on purpose. A pool with
 * M > 2^30 has 1 generation bit: with the flag each slot is used once.
 * Compact handles stay meaningful across opool_save/opool_load (same
 * index limit). */

/* The compact form of h: {0} unless h is live in p (stale, foreign, never
 * issued, OPOOL_NULL, a NULL p, or a pool with M > 2^31). O(1); inline. */
OPOOL_API opool_handle32 opool_handle_compact(const opool *p, opool_handle h);

/* The full handle of a compact one: OPOOL_NULL unless the slot it names is
 * live and its current generation agrees in the low 32 - k bits (then the
 * result is that object's current handle: see the bound above); {0}, an
 * index beyond the pool and a NULL p give OPOOL_NULL. O(1); inline. */
OPOOL_API opool_handle opool_handle_expand(const opool *p, opool_handle32 c);

/* Fill *out (NULL-safe: zeroed stats for a NULL pool). O(1). */
OPOOL_API void opool_get_stats(const opool *p, opool_stats *out);

/* A short constant English description, "unknown status" for others. */
OPOOL_API const char *opool_status_str(opool_status s);

/* ---- save and load (docs/FORMAT.md) ------------------------------------ */

/* Write p's complete state: every slot's generation, the roster (live list
 * and free stack, so the next handles issued are the same), the salt, the
 * statistics and every live object. OPOOL_EINVAL: p or write NULL;
 * OPOOL_ENOMEM; OPOOL_ECORRUPT: write came up short or save_object failed.
 * O(capacity + bytes of live objects). */
OPOOL_API opool_status opool_save(const opool *p, opool_write_fn write, void *ctx);

/* Rebuild a pool from what opool_save wrote, with desc's callbacks,
 * allocator and policy. desc's object_size and object_align must match the
 * saved pool's (else OPOOL_EINVAL), as must its capacity limits (the saved
 * capacity may not exceed what desc allows). Every handle valid at save is
 * valid again and reaches an identical object; every other handle is
 * rejected. OPOOL_ECORRUPT: truncated, corrupted or hostile input (checked
 * whole, checksum included, before anything is built); OPOOL_ENOMEM. On any
 * failure *out is NULL and nothing leaks. init is not called; load_object
 * is, for each live object when desc has it. */
OPOOL_API OPOOL_NODISCARD opool_status opool_load(opool **out, const opool_desc *desc,
                                                  opool_read_fn read, void *ctx);

/* opool_save to a file, atomically: a temporary file beside path, flushed
 * to disk, then renamed over path. A crash or a full disk part-way leaves
 * the previous file as it was. OPOOL_EINVAL: NULL argument; OPOOL_ECORRUPT
 * (or OPOOL_ENOMEM) when writing fails. */
OPOOL_API opool_status opool_save_file(const opool *p, const char *path);

/* opool_load from a file. OPOOL_EINVAL also when the file cannot be opened. */
OPOOL_API OPOOL_NODISCARD opool_status opool_load_file(opool **out, const opool_desc *desc,
                                                       const char *path);

#ifdef __cplusplus
} /* extern "C" */
#endif

/* The private layout and the inline bodies (ABI, not API). */
#include "opool_abi.h"

#endif /* OPOOL_H */
