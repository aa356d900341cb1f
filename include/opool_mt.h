/*
 * opool_mt.h -- the lock-free concurrent pool (C11): many threads allocate and
 * free from one pool, with the same generational handles as opool.h.
 *
 * ============================================================================
 * STEP BY STEP
 * ============================================================================
 *     opool_desc d = {0};
 *     d.object_size = sizeof(struct job);
 *     d.capacity    = 1024;               // fixed, unless:
 *     d.on_full     = OPOOL_FULL_GROW;    // grows when full, objects never move,
 *     d.max_capacity = OPOOL_MAX_CAPACITY; // up to this (GROWTH below)
 *     opool_mt *pool;
 *     if (opool_mt_create(&pool, &d) != OPOOL_OK) ...;
 *
 *     // any thread, any time:
 *     opool_handle h;
 *     struct job *j = opool_mt_alloc(pool, &h);          // NULL when full
 *     j = opool_mt_alloc_wait(pool, &h, 1000000);        // or sleep up to 1 ms
 *     struct job *k = opool_mt_get(pool, h);             // NULL once h is stale
 *     opool_mt_free(pool, h);                            // OPOOL_ESTALE the 2nd time
 *
 *     // a thread that allocates a lot gives itself a cache (a magazine):
 *     opool_mt_cache *c;
 *     if (opool_mt_cache_create_ex(&c, pool, 64) != OPOOL_OK) ...;
 *     j = opool_mt_cache_alloc(c, &h);
 *     j = opool_mt_cache_alloc_wait(c, &h, 1000000);    // or sleep up to 1 ms
 *     opool_mt_cache_free(c, h);       // any handle of the pool, from any path
 *     opool_mt_cache_destroy(c);       // its parked slots go back to the pool
 *     opool_mt_destroy(pool);          // when no other thread uses it any more
 *
 * ============================================================================
 * HOW IT WORKS, AND WHAT IT COSTS
 * ============================================================================
 * Each slot has a 32-bit generation (odd = live, even = free) and a 32-bit
 * link; the links form the shared free list, kept apart from the objects.
 * That list is sixteen LIFO stacks, its stripes, one per thread: a thread
 * pushes the slots it frees onto its own stripe and pops from it first, so
 * threads that allocate and free without a cache do not write one word or
 * each other's slots. A stripe's head is one 64-bit word: the top slot's
 * index + 1 in the low bits and an ABA tag in the rest, both changed
 * together by one CAS. The tag gets every bit the indices do not need:
 * 64 - bits(capacity + 1), at least 32. (docs/CONCURRENCY.md, "The free
 * list", gives the wrap analysis and the proofs.)
 *
 * A thread takes a stripe when it first uses any pool: one that no running
 * thread holds, which it holds alone until it ends (and counts its objects
 * there without a locked instruction), else one to share (past sixteen
 * threads, and always in a build with OPOOL_PORTABLE, which has no hook at
 * a thread's end). A pop that finds its own stripe empty takes slots
 * from another stripe: half of what that stripe holds, up to 16 (a cache
 * line of generations), at least the one it needs, the rest onto its own
 * stripe. A fresh pool keeps every
 * slot on one stripe, so it hands out its slots 0, 1, 2, ... in order, and a
 * freed slot is the next one handed out (LIFO): the same calls from one
 * thread give the same handles, run after run. Threads allocating from a
 * fresh pool take 16 neighbouring slots each, not interleaved ones.
 *
 *   alloc  pops a slot (one CAS on its stripe's head), then makes its
 *          generation odd.
 *   free   makes the generation even with a CAS from the handle's exact
 *          generation: of two threads freeing one handle, exactly one wins and
 *          the other gets OPOOL_ESTALE. Then it pushes the slot (one CAS).
 *          A cache's free of an object that same cache allocated needs no
 *          CAS while no other path has freed one of that cache's objects:
 *          it claims the slot with plain stores, and the first free by
 *          another path revokes that, once per cache, with one membarrier
 *          system call (Linux); both keep the guarantee above.
 *   get    one acquire load of the generation: any thread may validate any
 *          handle at any time; a forged or stale one is simply rejected.
 *
 * A cache holds up to `size` free slots for one thread (a work-stealing
 * deque). Its alloc takes the newest parked slot and its free parks the slot,
 * touching only the cache and the slot: no cache line that other threads
 * write, no fence, and no atomic read-modify-write but the free's CAS on the
 * generation, and not that one while the objects it frees are its own
 * (above). When the cache is empty it refills size/2 slots from the pool in
 * one CAS; when full it spills size/2 (the oldest) in one CAS. Whatever the
 * workload, at most one alloc or free in size/2 reaches the shared list.
 * With GCC and Clang such a hit is inline code in the caller, as opool.h's
 * alloc and free are: opool_mt_cache_alloc and opool_mt_cache_free are
 * also macros, whose bodies (opool_abi_mt.h) read the cache record and the
 * slot, and call into the library for everything else (an empty or full
 * cache, a thief or a waiter around, a handle this cache did not allocate,
 * every rejected handle, hooks). The name without a call after it is the
 * exported function, which behaves the same.
 *
 * Memory: the objects (stride = size rounded up to the alignment, every slot
 * of them in one block starting on a cache line; a growing pool: GROWTH)
 * plus 16 bytes per slot; the pool header is 2 KiB on 64-bit machines
 * (sixteen of its lines the stripes); a cache is 4 bytes per entry plus two
 * lines. A thread that uses opool_mt holds one key of the system's
 * thread-specific data (POSIX; Windows: a fiber-local slot) for the whole
 * process, to give its stripe back when it ends.
 *
 * ============================================================================
 * GROWTH (OPOOL_FULL_GROW)
 * ============================================================================
 * With on_full = OPOOL_FULL_GROW and max_capacity above capacity, the pool
 * grows instead of failing, up to max_capacity (which may be
 * OPOOL_MAX_CAPACITY: no fixed cap). At create it reserves address space for
 * max_capacity slots, its objects and its 16 bytes a slot, straight from the
 * system (Linux: mmap; Windows: VirtualAlloc), and makes only capacity of
 * them memory, in 64 KiB units of each of its four parts (objects, and
 * three arrays of 4, 4 and 8 bytes a slot); a growth makes more of the
 * reservation memory, in place: objects never move, and handles, pointers
 * and caches stay valid. The reservation costs address space, not memory:
 * OPOOL_MAX_CAPACITY slots of 64 bytes reserve 320 GiB of the 128 TiB a
 * 64-bit process has. Growing pools therefore exist on Linux and Windows
 * only: elsewhere (macOS, the BSDs, WebAssembly, a build with
 * OPOOL_PORTABLE), or when the range does not fit (a 32-bit process and a
 * large max_capacity), create fails with OPOOL_ENOMEM, or OPOOL_EINVAL when
 * the range does not fit a size_t; and they take no desc.allocator
 * (OPOOL_EINVAL).
 *
 * A pool grows when an alloc (any of them: alloc, alloc_wait, the cache and
 * bulk calls) finds no free slot anywhere: the shared list is empty and no
 * cache has a slot parked to steal. One thread grows it: it adds as many
 * slots as the pool has (at least 64, at most up to max_capacity), makes
 * them free, publishes the new capacity and then lists them on its stripe of
 * the shared list, handing out the first. Other threads that find the pool
 * empty meanwhile wait for that growth (sleeping in the kernel, as a waiter
 * does) and then look again: they neither fail nor grow the pool a second
 * time. This wait is the one place where a thread waits for another: a
 * growth that is stopped (preempted) holds up the allocs that need its
 * slots, even if a slot is freed meanwhile; frees, gets, and allocs that find
 * a slot never wait for it, and alloc_wait and cache_alloc_wait wait at most
 * their timeout (0: not at all). At max_capacity an alloc that finds no slot
 * fails at once, as in a fixed pool, touching nothing of the growth. A
 * growth costs up to five system calls (mprotect or VirtualAlloc for each of
 * the four parts, a futex wake) and O(new slots) stores; adding
 * max(capacity, 64) slots each time, a pool makes O(log n) growths. The
 * storage stays until destroy (no shrink). stats.max_capacity is the limit,
 * stats.grows counts the growths.
 *
 * ============================================================================
 * WAITING, AND SLOTS PARKED IN CACHES (the stranding policy)
 * ============================================================================
 * opool_mt_alloc_wait (and opool_mt_cache_alloc_wait, which runs the same
 * waiter once its cache's try has failed) sleeps in the kernel while the
 * pool is full: a futex on
 * Linux (an epoch word and a waiter count: a free checks the count, so while
 * nobody waits no free makes a system call), a mutex and condition variable
 * elsewhere (or when built with OPOOL_MT_PORTABLE_WAIT). System calls happen
 * only on the way to sleep, to wake a sleeper, to steal (below), and once per
 * cache to revoke its plain-store frees (above; a few times if several
 * threads race to revoke it): a pool whose shared list has slots, that nobody
 * waits on and whose objects are freed through the caches that allocated them
 * makes none.
 *
 * Free slots parked in other threads' caches never make a pool look full:
 *   - every alloc that finds the shared list empty (alloc, alloc_wait,
 *     cache_alloc, cache_alloc_wait, the bulk calls) steals parked slots
 *     from the caches, one CAS each, before it fails or sleeps (on Linux a
 *     thief first makes one membarrier system call: that is what keeps the
 *     owners' side free of fences);
 *   - while a thread waits, no cache keeps the slots it is given: a cache
 *     free sends its slot to the shared list, and a refill keeps only the
 *     slot it hands out and sends the rest there, each waking the waiter.
 * Every call that moves free slots (a refill, a spill or flush, a steal, a
 * bulk call) holds them for a moment where no other thread can see them;
 * whatever it does not keep for its caller it then puts where a waiter finds
 * it, and wakes the waiter if one may have missed it. So a waiter sleeps only
 * when every slot is live or in the hands of a thread in the middle of a
 * call, and every call that makes a slot available wakes one waiter. A
 * thread preempted anywhere never stops the others: no lock is held, no
 * thread waits for another's step.
 *
 * ============================================================================
 * ERRORS AND THREAD-SAFETY
 * ============================================================================
 * Handles are classified as in opool.h: even generation (OPOOL_NULL
 * included) or index out of range -> OPOOL_EINVAL; odd but not the slot's
 * generation -> OPOOL_ESTALE. Rejected frees change nothing, are counted and
 * reported. Findings go to desc.report_mt, which receives the pool itself
 * (NULL: opool_mt_default_report), with the core's findings: OPOOL_EFULL for
 * an exhaustion episode (opool.h's rule, EXHAUSTION; a free made during an
 * episode counts the pool, O(caches), to see its end), rejected frees
 * OPOOL_EINVAL/OPOOL_ESTALE with the handle, OPOOL_EWRITE_AFTER_FREE. A desc
 * with report but no report_mt keeps the behaviour from before report_mt:
 * report is called with a NULL pool. A report may run on any thread,
 * concurrently with itself.
 *
 * Every pool function may be called from any thread at the same time, except
 * opool_mt_create/opool_mt_destroy (no other call may run on that pool). A
 * cache belongs to one thread at a time; its calls are not to be made
 * concurrently with each other, but run concurrently with every other call.
 * No call is async-signal-safe: a signal handler must not call one that
 * the thread it interrupted may be in the middle of (a thread's count of
 * its cacheless allocs and frees is a load and a store, not atomic with
 * itself). Fibers: a thread's stripe is the thread's, whatever fiber runs
 * on it; on Windows a thread that ends while running another fiber than the
 * one that first used opool_mt keeps its stripe held (only speed is lost:
 * later threads share).
 *
 * The desc is opool.h's: object_size, object_align, capacity, on_full
 * (OPOOL_FULL_FAIL, or OPOOL_FULL_GROW with max_capacity: GROWTH; without
 * growth max_capacity is 0 or capacity), flags OPOOL_ZERO, OPOOL_POISON and
 * OPOOL_RETIRE_ON_WRAP, salt, init, fini, report_mt (or report), user,
 * allocator (not for a growing pool) and name. Eviction and the save/load
 * callbacks are for the single-threaded pool: asking for them is
 * OPOOL_EINVAL, and so is object_size 0 (id-only pools are single-threaded:
 * a concurrent id allocator gains nothing from a pool without objects over
 * opool_mt with the smallest object). init and fini run in the thread that allocates or frees.
 *
 * LICENSE: zlib (see LICENSE)
 */
#ifndef OPOOL_MT_H
#define OPOOL_MT_H

#include "opool.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An opaque concurrent pool, and an opaque per-thread cache of its free
 * slots (a magazine). */
typedef struct opool_mt opool_mt;
typedef struct opool_mt_cache opool_mt_cache;

/* Largest cache size accepted by opool_mt_cache_create. */
#define OPOOL_MT_CACHE_MAX 4096u
/* timeout_ns of opool_mt_alloc_wait: wait as long as it takes. */
#define OPOOL_WAIT_FOREVER UINT64_MAX

/* FAILED ALLOCS: failed_allocs counts the calls whose result lacked what
 * they asked for, once per call: an alloc, alloc_wait, cache_alloc or
 * cache_alloc_wait that returned NULL (a wait that timed out counts once),
 * and a bulk alloc (opool_mt_alloc_bulk, opool_mt_cache_alloc_bulk) that
 * returned fewer than n (once, however many it lacked; n == 0 never counts).
 * Nothing else counts: a cache miss served by a refill or a steal, an alloc
 * served by a steal, and an alloc_wait or cache_alloc_wait that slept and
 * then got a slot are successful allocs. A call on a NULL pool or cache is
 * not counted (there is no pool to count it in). Each counted call is a
 * failure of opool.h's exhaustion episode, reported as EXHAUSTION says.
 *
 * Versioned so it can grow: fields are only ever appended. With no call
 * running on the pool every figure is exact. Under concurrent use the call
 * reads the figures one after another, not at one instant:
 *   - capacity, retired and the six counters (failed_allocs ... barrier_calls)
 *     were each true at some moment of the call; the counters only grow;
 *   - count and parked are sums of per-thread and per-cache figures, each
 *     true at its own moment: an object allocated through one path and freed
 *     through another, or a slot that moves into a cache or between caches,
 *     while the call reads them may be counted twice or not at all. The call
 *     keeps the sums within what can be true at one moment:
 *     count + parked <= capacity. */
typedef struct opool_mt_stats {
    uint32_t version;          /* OPOOL_MT_STATS_VERSION */
    uint32_t capacity;         /* slots usable now (retired ones excluded; grows) */
    uint32_t count;            /* live objects */
    uint32_t parked;           /* free slots sitting in caches */
    uint32_t caches;           /* caches alive */
    uint32_t retired;          /* slots retired by OPOOL_RETIRE_ON_WRAP */
    uint64_t failed_allocs;    /* calls that returned NULL, or a bulk alloc fewer than
                                   asked (see FAILED ALLOCS) */
    uint64_t rejected_handles; /* frees of stale or invalid handles */
    uint64_t steals;           /* parked slots taken from caches by other threads */
    uint64_t sleeps;           /* times a waiting thread went to sleep */
    uint64_t wake_calls;       /* wake-up system calls made by frees */
    uint64_t barrier_calls;    /* membarrier system calls made by thieves and by frees
                                   revoking a cache's plain-store frees (Linux) */
    uint64_t grows;            /* growths made (OPOOL_FULL_GROW; version 2 on) */
    uint32_t max_capacity;     /* the growth limit: capacity for a fixed pool (version 2 on) */
} opool_mt_stats;
#define OPOOL_MT_STATS_VERSION 2u

/* ---- lifetime ----------------------------------------------------------- */

/* Create a pool of desc->capacity slots: fixed, or growing up to
 * max_capacity with OPOOL_FULL_GROW (GROWTH above). OPOOL_EINVAL: out or
 * desc NULL, anything opool_create rejects, object_size 0 (an id-only pool
 * is the core pool's), max_capacity other than 0 or capacity without
 * OPOOL_FULL_GROW, OPOOL_FULL_EVICT, an evict or save/load callback,
 * OPOOL_TRACK_SITES, OPOOL_REPORT_SIZING, OPOOL_NO_LIVE_LIST or OPOOL_FIXED (the core
 * pool's), an allocator without free, an allocator for a growing pool, a
 * growing pool whose reservation would pass SIZE_MAX. OPOOL_ENOMEM: the
 * allocator failed, or the system has no reservation of that size for a
 * growing pool. *out is NULL on failure. One allocation (a growing pool: one
 * reservation); O(capacity). Thread-safety: any thread, not concurrent with
 * any use of *out. */
OPOOL_API OPOOL_NODISCARD opool_status opool_mt_create(opool_mt **out, const opool_desc *desc);

/* Run fini on every live object, release every cache record and the pool.
 * Objects still live are reported first, once: report_mt(p, OPOOL_ELEAK,
 * a live object's handle, user); the default prints "opool: concurrent
 * pool ... (0x...): leak: destroyed with N objects live". NULL-safe; cannot
 * fail. O(capacity + caches). Thread-safety: no other
 * thread may be using the pool or any of its caches; caches not destroyed
 * are released with it (their pointers die). */
OPOOL_API void opool_mt_destroy(opool_mt *p);

/* ---- objects ------------------------------------------------------------ */

/* Allocate an object, its handle to *out (if not NULL). NULL, *out =
 * OPOOL_NULL, when p is NULL or no slot is free (the shared list is empty and
 * no cache has a parked slot to steal) and the pool cannot grow (GROWTH:
 * before it fails a growing pool grows, or waits for the growth another
 * thread is making): counted in failed_allocs (not for p NULL) and
 * reported (OPOOL_EFULL) as opool.h's EXHAUSTION says;
 * OPOOL_EWRITE_AFTER_FREE is reported under OPOOL_POISON. Lock-free: one CAS
 * when the thread's stripe of the shared list has a slot, else one look at
 * each other stripe and one CAS at the first that has slots;
 * O(caches * cache size) to steal, and on Linux one membarrier system call
 * when some cache may hold a slot. Thread-safe. */
OPOOL_API void *opool_mt_alloc(opool_mt *p, opool_handle *out);

/* opool_mt_alloc, but while the pool is full sleep until a slot is freed or
 * timeout_ns nanoseconds (monotonic clock) have passed (0: do not wait;
 * OPOOL_WAIT_FOREVER: no limit). NULL, *out = OPOOL_NULL, on timeout
 * (counted once in failed_allocs, reported) or for p NULL. A wait that ends
 * with a slot is no failed alloc; a growing pool grows rather than sleep
 * (GROWTH: the wait for another thread's growth counts in the timeout), and
 * sleeps only at max_capacity or when the system refuses it memory. Reports
 * as opool_mt_alloc. Never sleeps while a free slot can be had (see WAITING
 * above); sleeps in the kernel, no busy spinning. Cost: as opool_mt_alloc
 * while a slot can be had; system calls only to sleep (and to steal).
 * Thread-safe. */
OPOOL_API void *opool_mt_alloc_wait(opool_mt *p, opool_handle *out, uint64_t timeout_ns);

/* Free h's object (runs fini first, in this thread) and push its slot on the
 * shared free list; wakes a thread sleeping in opool_mt_alloc_wait and ends
 * an exhaustion episode. OPOOL_OK; OPOOL_EINVAL: p NULL or h never issued;
 * OPOOL_ESTALE: h stale, foreign, or freed by a racing thread first (of two
 * threads freeing one handle, exactly one gets OPOOL_OK). A rejected free
 * changes nothing but rejected_handles and is reported with h (neither for p
 * NULL). Lock-free: one CAS on the generation, one on the thread's stripe of
 * the shared list; a wake-up
 * system call only if a thread is sleeping; a membarrier system call the
 * first time it frees an object of a cache whose plain-store frees are not
 * yet revoked (HOW IT WORKS). Thread-safe. */
OPOOL_API opool_status opool_mt_free(opool_mt *p, opool_handle h);

/* The object of h, NULL unless h is live in p (or p NULL). One acquire load:
 * the object is seen fully prepared by the allocating thread. O(1). The
 * answer may be out of date as soon as it is given if another thread frees
 * h: keeping the object alive while it is used is the caller's protocol.
 * Thread-safe. */
OPOOL_API void *opool_mt_get(const opool_mt *p, opool_handle h);

/* opool_mt_get(p, h) != NULL. O(1). Thread-safe. */
OPOOL_API bool opool_mt_valid(const opool_mt *p, opool_handle h);

/* Live objects; 0 for NULL. Exact when no alloc or free runs; under
 * concurrent use a sum of per-thread and per-cache counters each read at its
 * own moment, within [0, capacity] (an object allocated through one path and
 * freed through another meanwhile may be counted or missed). O(caches).
 * Thread-safe. */
OPOOL_API uint32_t opool_mt_count(const opool_mt *p);

/* Slots usable (capacity, which grows with OPOOL_FULL_GROW, minus retired
 * slots); 0 for NULL. O(1). Thread-safe. */
OPOOL_API uint32_t opool_mt_capacity(const opool_mt *p);

/* Allocate up to n objects with one CAS on the thread's stripe of the shared
 * list, one more per other stripe it takes from when its own holds fewer
 * (then stealing exactly what it misses): handles to out[0..k) (required
 * when n > 0), objects to objs[0..k) if objs is not NULL. Returns k, the
 * number allocated: fewer than n only when the pool ran out (then one failed
 * alloc, counted and reported as opool.h's EXHAUSTION says, however many it
 * lacked: see FAILED ALLOCS); 0, not counted, for p NULL, out NULL or n 0.
 * O(n) plus one CAS while the thread's stripe has n slots. Thread-safe. */
OPOOL_API uint32_t opool_mt_alloc_bulk(opool_mt *p, opool_handle *out, void **objs, uint32_t n);

/* Free the objects of hs[0..n) and return them with one CAS on the thread's
 * stripe of the shared list. Returns how many were freed; each rejected handle (as opool_mt_free
 * rejects it) is skipped, counted in rejected_handles and reported. 0 for p
 * or hs NULL. O(n) plus one CAS. Thread-safe. */
OPOOL_API uint32_t opool_mt_free_bulk(opool_mt *p, const opool_handle *hs, uint32_t n);

/* ---- caches (one per thread) ------------------------------------------- */

/* Create a cache of up to size free slots (2 <= size <= OPOOL_MT_CACHE_MAX)
 * for one thread at a time, to *out. OPOOL_EINVAL: out NULL, p NULL, or
 * size out of range; OPOOL_ENOMEM: the pool's allocator failed. *out is
 * NULL on failure, and nothing changes. A destroyed cache's record is kept
 * by the pool and reused by the next create that fits, so creating caches
 * per thread start costs an allocation only the first times. Cost: O(caches)
 * to look for a free record; otherwise one allocation (4 bytes per entry,
 * size rounded up to a power of two, plus a cache line). Thread-safe
 * (concurrent with every call but opool_mt_destroy). The status form, like
 * every other create of opool. */
OPOOL_API OPOOL_NODISCARD opool_status opool_mt_cache_create_ex(opool_mt_cache **out, opool_mt *p,
                                                                uint32_t size);

/* opool_mt_cache_create_ex returning the cache, or NULL for any failure
 * (p NULL, size out of range, no memory: the status form tells them apart).
 * Cost and thread-safety: as opool_mt_cache_create_ex. */
OPOOL_API opool_mt_cache *opool_mt_cache_create(opool_mt *p, uint32_t size);

/* opool_mt_alloc through the cache: takes the newest parked slot, O(1)
 * touching no shared cache line and making no atomic read-modify-write while
 * the cache has slots; refills size/2 in one CAS (stealing if needed) when
 * empty (while some thread waits in opool_mt_alloc_wait it keeps only the
 * slot it returns and gives the rest back to the shared list, waking the
 * waiter). NULL, *out = OPOOL_NULL, for c NULL, or (counted, reported as
 * opool_mt_alloc) when the pool has no free slot left anywhere; a miss that a
 * refill or a steal serves is no failed alloc. A hit is inline with GCC and
 * Clang (HOW IT WORKS). Thread-safety: the cache's owner only. */
OPOOL_API void *opool_mt_cache_alloc(opool_mt_cache *c, opool_handle *out);

/* opool_mt_alloc_wait through the cache: a hit costs what opool_mt_cache_alloc
 * costs, and so does a miss that a refill or a steal serves; when the pool
 * has no free slot anywhere it waits as opool_mt_alloc_wait does (the same
 * waiter: it never sleeps while a free slot can be had, and every call that
 * makes a slot available wakes it) until a slot is freed or timeout_ns have
 * passed (0: do not wait; OPOOL_WAIT_FOREVER: no limit). The slot a wait
 * gets goes to the caller, not into the cache. NULL (counted in
 * failed_allocs once, reported) on timeout or when c is NULL (not counted);
 * *out is OPOOL_NULL then. One thread at a time per cache, as every cache
 * call; concurrent with every other call. */
OPOOL_API void *opool_mt_cache_alloc_wait(opool_mt_cache *c, opool_handle *out,
                                          uint64_t timeout_ns);

/* opool_mt_free through the cache (any live handle of the pool, whichever
 * path allocated it): the same results and the same race guarantee; the slot
 * is parked in the cache, spilling the oldest size/2 in one CAS when full.
 * While some thread waits in opool_mt_alloc_wait the slot goes to the shared
 * list instead (and wakes it). Fails as opool_mt_free, and OPOOL_EINVAL for c
 * NULL (not counted, not reported). O(1); no atomic read-modify-write when c
 * allocated h's object and no other path has freed one of c's objects yet;
 * otherwise as opool_mt_free (a membarrier system call the first time it
 * frees another cache's object). The first case, with room in the cache
 * and no waiter, is inline with GCC and Clang (HOW IT WORKS). Thread-safety:
 * the cache's owner only. */
OPOOL_API opool_status opool_mt_cache_free(opool_mt_cache *c, opool_handle h);

/* Bulk versions of the two above: n calls of opool_mt_cache_alloc /
 * opool_mt_cache_free, in order, with the results of opool_mt_alloc_bulk /
 * opool_mt_free_bulk: the alloc stops at the first failure (one failed
 * alloc, counted and reported once), the free skips and reports each
 * rejected handle. 0 for c NULL, or out / hs NULL. O(n). Thread-safety: the
 * cache's owner only. */
OPOOL_API uint32_t opool_mt_cache_alloc_bulk(opool_mt_cache *c, opool_handle *out, void **objs,
                                             uint32_t n);
OPOOL_API uint32_t opool_mt_cache_free_bulk(opool_mt_cache *c, const opool_handle *hs, uint32_t n);

/* Return every parked slot to the pool (one CAS) and wake waiters. Objects
 * allocated through the cache stay live. NULL-safe; cannot fail. O(parked
 * slots). Thread-safety: the cache's owner only. */
OPOOL_API void opool_mt_cache_flush(opool_mt_cache *c);

/* Flush, then give the cache back to the pool (its record is reused by a
 * later opool_mt_cache_create). c is dead after; objects allocated through
 * it stay live (they belong to the pool). NULL-safe; cannot fail. Cost: as
 * flush. Thread-safety: the cache's owner only. */
OPOOL_API void opool_mt_cache_destroy(opool_mt_cache *c);

/* Fill *out; see opool_mt_stats for what each figure promises under
 * concurrent use. NULL-safe: out NULL does nothing, p NULL gives zeroed
 * stats. O(caches). Thread-safe. */
OPOOL_API void opool_mt_get_stats(const opool_mt *p, opool_mt_stats *out);

/* The report a concurrent pool makes when its desc has neither report_mt
 * nor report; call it from your own report_mt to keep the default for the
 * findings you do not handle (user is not used). As opool_default_report,
 * with "concurrent pool" for "pool": one line on stderr naming the pool for
 * OPOOL_EFULL (an episode's 1st, 2nd, 4th... failure) and for
 * OPOOL_EWRITE_AFTER_FREE (then abort()); nothing for OPOOL_ESTALE and
 * OPOOL_EINVAL. p NULL: the line names no pool. Cost: opool_mt_count and
 * one formatted write to stderr. Thread-safe (a line may count a failure
 * made by another thread meanwhile). */
OPOOL_API void opool_mt_default_report(opool_mt *p, opool_status what, opool_handle h, void *user);

#ifdef __cplusplus
} /* extern "C" */
#endif

/* The private layout and the inline cache hits (ABI, not API), now that the declarations
 * above exist. */
#include "opool_abi_mt.h"

#endif /* OPOOL_MT_H */
