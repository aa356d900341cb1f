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
 * A pool that never grows writes no record or roster entry at creation: it
 * makes them as its high water rises, a batch at a time (as many as it has
 * made, 64 to 65536) when no free slot is made, so creating a pool costs
 * the same at any capacity and a slot's record is first touched near its
 * first use.
 * An alloc right after a free (with no loop begun between them, no
 * opool_count, OPOOL_FOREACH or range-for, and no read past the live list's
 * end) takes the same slot
 * and swaps it back, so a free followed by an alloc leaves the live list's
 * order as it was: a list in memory order (a fresh pool's, or after
 * opool_sort) stays so under churn, and the loop below walks memory in order.
 *
 * ITERATION. The live list is what opool_live_object(p, i) and
 * opool_live_handle(p, i) read, for i in [0, count). A free moves the list's
 * last entry into the freed object's place; an alloc appends, except right
 * after a free with no opool_count and no read past the list's end between
 * (a loop starts with the one, and steps over places that frees of others
 * took away with the other; reading an entry below count does not end it),
 * when the new object takes the freed one's place and the moved entry goes
 * back to the end. So in
 *
 *     for (uint32_t i = opool_count(pool); i-- > 0;) { ... opool_live_object(pool, i) ... }
 *
 * whatever happened to the pool before the loop:
 *   - every object live when the loop starts is visited exactly once;
 *   - freeing the object at i (the current one) is allowed: the last entry,
 *     already visited or allocated inside the loop, takes place i, which the
 *     loop has passed;
 *   - allocating is allowed, and an object allocated inside the loop is not
 *     visited: it joins the end of the list, behind i, or, right after a
 *     free of the current object (or of one visited), takes that object's
 *     place, which the loop has passed;
 *   - growth (OPOOL_FULL_GROW) inside the loop adds free slots only.
 * Freeing other objects inside the loop (opool_free of another handle,
 * opool_free_object, a fini that frees, an OPOOL_FULL_EVICT victim) follows
 * the same rule, with these effects on the rest of the loop:
 *   - an object the loop has visited (at a position above i): none;
 *   - an object the loop has not reached (below i): it is not visited, and
 *     the last entry moves into its place, where the loop will reach it: a
 *     second visit if it had been visited (it stood at i or above), a first
 *     one if it was allocated inside the loop; an alloc right after such a
 *     free, before or after the loop reaches that place, puts its new object
 *     there instead (visited if the loop has not passed it) and sends the
 *     moved entry back to the end (a second visit it has not had yet is
 *     then not made);
 *   - once such frees bring count to i or below, the indices from count up
 *     to the current one are past the end (NULL, OPOOL_NULL: skip them), and
 *     an object allocated then lands below i and is visited.
 * To drop arbitrary objects during a pass, free only the current one and
 * collect the others' handles for after the loop. opool_sort, opool_clear,
 * opool_shrink and opool_load rebuild the list: call them between loops.
 *
 * NO LIVE LIST. A pool created with OPOOL_NO_LIVE_LIST in desc.flags has no
 * roster: its free slots are chained through their records (the record's
 * second word names the next free slot), so alloc takes the chain's first
 * slot and free puts the freed one first, writing only its own record. Reuse
 * is LIFO and a fresh pool hands out 0, 1, 2, ... as above; handles,
 * generations, growth, shrink, retirement, save and load behave as in any
 * pool. There is nothing to iterate: opool_live_object and opool_live_handle
 * return NULL and OPOOL_NULL for every i, and opool_retain, opool_sort,
 * OPOOL_FOREACH (and the typed and C++ loops) report OPOOL_EINVAL to
 * desc.report and visit nothing. opool_alloc_at walks the chain to the slot
 * it claims: O(free slots). A saved pool loads with or without the flag.
 *
 * Memory per slot: the object rounded up to its alignment (the stride), plus
 * 12 bytes of bookkeeping (8 for the slot record, 4 for the roster entry;
 * 8 in all under OPOOL_NO_LIVE_LIST).
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
 * a zero capacity, a bad alignment, an overflowing size, a forged,
 * stale or foreign handle or pointer. Findings that point at a bug in the
 * caller go to desc.report (see opool_desc).
 *
 * Handles given to any function are classified the same way:
 *   - generation even (this includes OPOOL_NULL) or index out of range:
 *     never issued by this pool -> OPOOL_EINVAL;
 *   - odd generation, index in range, but not the slot's current one:
 *     stale (freed, reused) or from another pool -> OPOOL_ESTALE.
 *
 * EXHAUSTION. A failed alloc (the pool is full and its policy cannot make
 * room) opens an exhaustion episode, or counts in the open one. The episode
 * is reported (OPOOL_EFULL) at its 1st, 2nd, 4th, 8th, ... failed alloc, each
 * power of two, so a pool held at its budget for a long time prints a
 * handful of lines, not one per frame. It ends at a free that leaves
 * count <= capacity - ceil(capacity / 4) objects live (a quarter of the
 * usable slots free again: 48 of 64, 0 of 1); the next failure then opens a
 * new episode. The concurrent pool and the heap (per size class) follow the
 * same rule. At most 4 such reports a second are made for one pool (or
 * heap), to the default report or to yours alike, however the pool gets
 * there: one that swings between full and recovered opens an episode per
 * swing. Inside the next report made, opool_reports_held says how many
 * were held back meanwhile: the default report's line ends "[after N lines
 * held back, M of them opening an episode: at most 4 a second]", and its
 * destroy prints the count still held back, if any. The statistics
 * (failed_allocs, episodes) count every failure; the flag
 * OPOOL_REPORT_UNRATIONED reports every episode's 1st, 2nd, 4th... failure.
 *
 * MISUSE. A rejected free (a double free, a stale, foreign or forged
 * handle, a pointer to no object's start) or alloc_at (a live or retired
 * slot, a handle never issued) returns its status and is reported to
 * desc.report; the default report is silent about it unless asked:
 *   - the environment variable OPOOL_MISUSE=print (read once, at the first
 *     misuse) prints one line for each, in every pool, concurrent pool and
 *     heap of the process; OPOOL_MISUSE=abort prints it, then calls abort()
 *     (run under a debugger to see the caller's stack);
 *   - the desc flag OPOOL_REPORT_MISUSE prints them for one pool.
 * The line says what the rejection was, from the pool's own records (see
 * opool_default_report). Both act through the default report: a report of
 * your own receives every rejection and decides, and passing it to
 * opool_default_report prints (and aborts) as asked.
 *
 * SALTS. Two live pools with one generation origin would accept each
 * other's handles. Derived salts (desc.salt 0) differ from pool to pool
 * (two coincide with probability 2^-31). opool_create and opool_create_in
 * (opool_mt_create for concurrent pools) refuse a nonzero desc.salt whose
 * origin a live pool of the same kind has (OPOOL_EINVAL, and a line on
 * stderr names that pool), unless desc.flags has OPOOL_SHARE_SALT (twins on
 * purpose: two worlds driven alike, whose handles must match). The live
 * origins counted are those of pools made with a nonzero salt and of
 * loaded pools; a derived salt never takes one of them. A pool loaded from
 * an image keeps the image's origin, so a loaded copy and its original, both
 * live, accept each other's handles: they name the same objects. The table
 * of origins is process-wide; past 64 live pools with a nonzero salt, its
 * entries come from the C library (create then may give OPOOL_ENOMEM).

 * Thread-safety: one thread at a time per pool (see opool_mt.h to share one).
 * Different pools may be used by different threads at the same time.
 *
 * ============================================================================
 * INLINE FUNCTIONS AND EXPORTED SYMBOLS
 * ============================================================================
 * The calls marked "inline" below (and opool_heap_alloc, opool_heap_free)
 * are two things at once: a call opool_alloc(p, &h) expands to a static
 * inline body, so the common case compiles into the caller; the name without
 * a call (&opool_alloc, (opool_alloc)(p, &h)) is an ordinary exported
 * function, so function pointers, dlsym and FFI reach it. Both behave alike.
 * opool_abi.h, included at the end, holds the layout those bodies read: it is
 * not API but ABI. A shared library (-DBUILD_SHARED_LIBS=ON) is
 * libopool.so.<SOVERSION>, 0.<minor> before 1.0, <major> after; it exports
 * every function of the public headers and, of the opool__ names, only the
 * slow paths opool_abi.h declares (the CTest abi_exports checks that).
 *
 * Under AddressSanitizer free slots and blocks are poisoned, and under
 * ThreadSanitizer an opool_mt's slot hand-offs are visible, also when the
 * library was built without the sanitizer (ELF systems, GCC or Clang):
 * docs/DEBUGGING.md.
 *
 * BUILDING. The CMake options and the macros that change what is built
 * (OPOOL_PORTABLE, OPOOL_MT_NO_MEMBARRIER, OPOOL_HEAP_SPAN, ...) are listed
 * in docs/BUILDING.md. The single header dist/opool.h is compiled by
 * defining OPOOL_IMPLEMENTATION (and OPOOL_STATIC) in one C file: its own
 * manual says how.
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

/* The version of these headers: OPOOL_VERSION is major * 10000 + minor * 100
 * + patch, for #if OPOOL_VERSION >= ... */
#define OPOOL_VERSION_MAJOR 0
#define OPOOL_VERSION_MINOR 1
#define OPOOL_VERSION_PATCH 0
#define OPOOL_VERSION 100 /* major * 10000 + minor * 100 + patch */

/* A cast in a macro that the user's code expands (OPOOL_FOREACH, the typed
 * pools of opool_typed.h): static_cast in C++, where a C cast is what
 * -Wold-style-cast names, the C cast in C. */
#ifdef __cplusplus
#define OPOOL__CAST(T, x) (static_cast<T>(x))
#else
#define OPOOL__CAST(T, x) ((T)(x))
#endif

/* Attributes, empty with compilers other than GCC and Clang. OPOOL_NODISCARD
 * (warn_unused_result) marks the create and load functions, whose status must
 * be checked; OPOOL_LIKELY(x) / OPOOL_UNLIKELY(x) are branch hints
 * (__builtin_expect) used by the inline fast paths. */
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
 * these and nothing else. Define OPOOL_API yourself, before the first
 * include, to change the attribute (dllexport, say); the single header's
 * OPOOL_STATIC sets it to static. */
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

/* The name of one object. A slot's generation is odd while it is live, even
 * while it is free; alloc and free each advance it by one, so a handle stops
 * working the moment its object is freed. A live handle is never {0}.
 * Handles are plain values: copy them, store them, compare them with
 * opool_handle_eq, save them in files (they survive opool_save/opool_load).
 * Generations start from the pool's salt (desc.salt, or one derived from the
 * order pools are created: the same program gives the same handles run after
 * run), so a handle used with the wrong pool is rejected (OPOOL_ESTALE) with
 * high probability; two live pools never share a salt (see SALTS). A slot's generation wraps after
 * 2^31 reuses, and only then can a stale handle match again; OPOOL_RETIRE_ON_WRAP retires the slot
 * instead. */
typedef struct opool_handle {
    uint64_t bits; /* low 32: slot index; high 32: generation (odd = live) */
} opool_handle;

/* Never a valid handle: every function rejects it as OPOOL_EINVAL (opool_get
 * returns NULL). Failed allocations store it in *out. */
#ifdef __cplusplus
#define OPOOL_NULL (opool_handle{0})
#else
#define OPOOL_NULL ((opool_handle){0})
#endif

/* The two halves of a handle (index: low 32 bits; generation: high 32 bits),
 * and comparisons. opool_handle_is_null is true only for OPOOL_NULL; a
 * non-null handle is not necessarily valid (opool_valid says that). Pure
 * functions of their arguments: no pool, no failure. O(1); inline.
 * Thread-safety: any thread. */
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

/* The result of every call that can fail, shared by every header. Beyond the
 * notes below: OPOOL_EINVAL also means a pointer not handed out, or a desc
 * that does not fit a saved image; OPOOL_ESTALE also (heap) a block already
 * free. OPOOL_EFULL and OPOOL_EWRITE_AFTER_FREE are never returned: report
 * receives them. OPOOL_EBUSY and OPOOL_ETIMEDOUT are reserved: no function
 * returns them (opool_alloc_at returns NULL for a live slot,
 * opool_mt_alloc_wait NULL on timeout). New codes are only ever appended.
 * opool_status_str gives, in order: "ok", "invalid argument", "out of
 * memory", "pool full", "already freed, or stale (a handle of a freed object
 * or of another pool)", "slot busy", "corrupt saved pool", "write after
 * free", "timed out", "input/output error", "no such file", "objects left
 * live at destroy (a leak)". */
typedef enum opool_status {
    OPOOL_OK = 0,
    OPOOL_EINVAL,            /* bad argument: NULL, zero, overflow, never-issued handle */
    OPOOL_ENOMEM,            /* the allocator failed */
    OPOOL_EFULL,             /* no free slot (report: see EXHAUSTION) */
    OPOOL_ESTALE,            /* handle was valid once, or belongs to another pool */
    OPOOL_EBUSY,             /* reserved: no function returns it (opool_alloc_at returns
                                NULL for a live slot) */
    OPOOL_ECORRUPT,          /* a saved image failed its checks */
    OPOOL_EWRITE_AFTER_FREE, /* poison pattern of a free slot changed */
    OPOOL_ETIMEDOUT,         /* reserved: no function returns it (a wait that gives up
                                returns NULL) */
    OPOOL_EIO,               /* a write (save) or a file (open, read, sync, rename) failed; a
                                stream read that comes up short is the input's end (ECORRUPT) */
    OPOOL_ENOENT,            /* opool_load_file, opool_load_many_file: no file at the path */
    OPOOL_ELEAK              /* never returned: report receives it from a destroy that finds
                                objects still live (opool_destroy) */
} opool_status;

/* What an alloc does when no slot is free (desc.on_full).
 *   OPOOL_FULL_GROW needs max_capacity > capacity to grow at all (otherwise it
 *   behaves as OPOOL_FULL_FAIL). The first chunk is capacity rounded up to a
 *   power of two (capped at max_capacity); each growth adds a chunk as large
 *   as all the storage before it. When the limit is reached or the allocator
 *   fails, alloc returns NULL.
 *   OPOOL_FULL_EVICT: desc.evict(pool, user) names a live victim; it is freed
 *   (its fini runs, its handles go stale, evictions counts it) and its slot is
 *   reused. If evict returns anything but a live handle, alloc returns NULL.
 * Every alloc that returns NULL because the pool is full is counted in
 * failed_allocs and goes to report as OPOOL_EFULL (handle OPOOL_NULL) as
 * EXHAUSTION at the top of this file says. */
typedef enum opool_full_policy {
    OPOOL_FULL_FAIL = 0, /* alloc returns NULL */
    OPOOL_FULL_GROW,     /* add storage, up to max_capacity; objects never move */
    OPOOL_FULL_EVICT     /* desc.evict chooses a live victim; it is freed and its slot reused */
} opool_full_policy;

/* Bits of desc.flags; any other bit is OPOOL_EINVAL at create. Any flag, or an
 * init/fini callback, moves alloc and free off the inline fast path (into a
 * call to the library), but the three named at the end.
 *   OPOOL_ZERO: the object's object_size bytes are zeroed on every alloc,
 *   before init.
 *   OPOOL_POISON: every free slot (object and padding) holds the repeating
 *   pattern 0x1deadb0b (bytes 0b db ea 1d), checked when the slot is handed
 *   out again; a change is reported as OPOOL_EWRITE_AFTER_FREE with the handle
 *   of the freed object. Cost: a fill and a check of the stride per free and
 *   alloc (docs/DEBUGGING.md). opool_mt and opool_heap accept it too.
 *   OPOOL_RETIRE_ON_WRAP: a slot whose generation would come back to its
 *   first value (after 2^31 reuses) is retired for good: no stale handle can
 *   ever match again. Retired slots leave the capacity and are counted in
 *   stats.retired.
 *   OPOOL_TRACK_SITES: every alloc records where it was called (file:line,
 *   through opool_alloc's call site) and when, for opool_alloc_site and the
 *   leak report of opool_destroy. Cost: allocs run out of line, 24 bytes a
 *   slot, allocated with the pool's allocator at the first alloc of each
 *   slot range (frees stay inline). Nothing at all without the flag.
 *   OPOOL_REPORT_SIZING: opool_destroy prints opool_sizing_line on stderr.
 *   OPOOL_NO_LIVE_LIST: for pools that are never iterated (id allocators,
 *   connection tables, resource handles): no roster, so 8 bytes of
 *   bookkeeping a slot instead of 12, and a free writes nothing but the
 *   slot's own record (see NO LIVE LIST at the top of this file). Every
 *   handle guarantee is kept.
 *   OPOOL_FIXED: the pool never grows; OPOOL_FULL_GROW with it is
 *   OPOOL_EINVAL. What a typed pool with flags fixed at compile time
 *   (OPOOL_TYPED_FIXED in opool_typed.h, opl::pool<T, Flags>) is created
 *   with, so that its inline paths need no test for grown chunks.
 * OPOOL_NO_LIVE_LIST, OPOOL_FIXED and OPOOL_REPORT_SIZING keep the inline
 * paths. */
enum {
    OPOOL_ZERO = 1u << 0,           /* objects are zero-filled on every alloc */
    OPOOL_POISON = 1u << 1,         /* free slots filled with 0x1deadb0b, checked on reuse */
    OPOOL_RETIRE_ON_WRAP = 1u << 2, /* a slot whose generation would wrap is retired for good:
                                       the generation bits of a compact handle (see
                                       opool_handle_compact) count, so that compact handles
                                       never match falsely either */
    OPOOL_TRACK_SITES = 1u << 3,    /* allocs record their call site: opool_alloc_site */
    OPOOL_REPORT_SIZING = 1u << 4,  /* destroy prints the sizing line (opool_sizing_line) */
    OPOOL_NO_LIVE_LIST = 1u << 5,   /* no live list: 8 bytes of bookkeeping a slot, not 12;
                                       live_object/live_handle NULL, retain/sort refused */
    OPOOL_FIXED = 1u << 6,          /* the pool never grows (OPOOL_FULL_GROW refused) */
    OPOOL_REPORT_MISUSE = 1u << 7,  /* the default report prints every rejected free and
                                       alloc_at (see MISUSE at the top of this file) */
    /* (bits 8 to 11 are the heap's: opool_heap.h) */
    OPOOL_REPORT_UNRATIONED = 1u << 12, /* exhaustion reports at every 1st, 2nd, 4th...
                                           failure, not at most 4 a second (EXHAUSTION) */
    OPOOL_SHARE_SALT = 1u << 13,        /* desc.salt may be a live pool's: twins driven alike,
                                           each accepting the other's handles (SALTS) */
    OPOOL__FLAGS_ALL = ((1u << 8) - 1) | (3u << 12)
};

/* Largest capacity or max_capacity a pool accepts. */
#define OPOOL_MAX_CAPACITY 0xFFFFFF00u

/* An opaque pool, used through opool *. The inline functions read its first
 * bytes through the private layout in opool_abi.h (not API: it may change in
 * any release). */
typedef struct opool opool;
struct opool_mt; /* opool_mt.h: the concurrent pool, created from an opool_desc too */

/* Byte streams for save and load. write: like fwrite, returns the bytes
 * written (short = failure). read: like fread, returns the bytes read (short
 * = end of input or failure). opool_save calls write with few, large
 * buffers. */
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
 * to every block, so chunks start on one. opool_heap and opool_mt call free,
 * never free_aligned: they need free set. opool_side takes no allocator (it
 * uses the C library's). Called only from the thread
 * making the call that needs memory. */
typedef struct opool_allocator {
    void *(*alloc)(void *ctx, size_t size, size_t align);
    void (*free)(void *ctx, void *ptr, size_t size);
    void *ctx;
    /* optional, appended: free told the alignment too (the core pool) */
    void (*free_aligned)(void *ctx, void *ptr, size_t size, size_t align);
} opool_allocator;

/* Zero-initialise, then set what you need: zero means the default for every
 * field. The desc is copied at create (it need not outlive the call).
 * object_align 0 is alignof(max_align_t) (16 on x86-64): set _Alignof(T) to
 * pack small objects tighter; the stride is object_size rounded up to it.
 * salt: its low bit is ignored; set it for handles that must not depend on
 * how many pools the program created before, one per live pool (see SALTS:
 * a salt a live pool has is refused). init runs after opool_alloc,
 * opool_alloc_at and an eviction's reuse, never in opool_load. fini runs on
 * every object freed by opool_free, opool_free_object, opool_clear, eviction
 * and opool_destroy. save_object returning false makes opool_save give
 * OPOOL_ECORRUPT.
 *
 * report runs inside the call that found the finding, on its thread; if it
 * returns, the call goes on as it would have (an alloc that found a write
 * after free still succeeds). Nothing aborts unless the default report for
 * OPOOL_EWRITE_AFTER_FREE runs (or yours aborts). */
typedef struct opool_desc {
    size_t object_size;                  /* 0: an id-only pool (see opool_create) */
    size_t object_align;                 /* 0 = alignof(max_align_t); a power of two <= 4096 */
    uint32_t capacity;                   /* required, > 0: slots reserved at create (a growable pool
                                            rounds it up to a power of two, capped at max_capacity) */
    uint32_t max_capacity;               /* 0 = capacity; only OPOOL_FULL_GROW grows toward it */
    opool_full_policy on_full;           /* what alloc does when no slot is free */
    uint32_t flags;                      /* OPOOL_ZERO | OPOOL_POISON | OPOOL_RETIRE_ON_WRAP */
    uint32_t salt;                       /* generation origin; 0 = derived from creation order */
    void (*init)(void *obj, void *user); /* optional: after every alloc (after OPOOL_ZERO) */
    /* optional: on free, clear, evict and destroy (and retain), before the slot
     * is freed: obj is still live, so fini may call opool_handle_of(p, obj),
     * opool_handle_at and opool_get on it and get its current handle */
    void (*fini)(void *obj, void *user);
    opool_handle (*evict)(opool *p, void *user); /* OPOOL_FULL_EVICT: return a live victim */
    /* Findings, with the pool and the handle concerned (OPOOL_NULL if none);
     * NULL = opool_default_report, which says what each does by default:
     *   OPOOL_EFULL   an alloc found the pool full and its policy could not
     *                 make room: an exhaustion episode, reported at its 1st,
     *                 2nd, 4th, 8th... failed alloc (see EXHAUSTION at the top
     *                 of this file); h OPOOL_NULL.
     *   OPOOL_ESTALE/OPOOL_EINVAL  a rejected opool_free or opool_free_object
     *                 (also counted in rejected_handles); h the rejected handle
     *                 (OPOOL_NULL for opool_free_object).
     *   OPOOL_EWRITE_AFTER_FREE  OPOOL_POISON: a slot's pattern changed while
     *                 it was free, found when it is handed out again; h has
     *                 the slot's index and the generation of the object freed
     *                 last (for a never-used slot, one never issued).
     * A concurrent pool calls report_mt instead (below). */
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
    /* Optional: the pool's name in every message of the default report (kept
     * as a pointer, not copied: it must outlive the pool). */
    const char *name;
    /* The findings of an opool_mt made from this desc, with the pool itself
     * (the same shape as report; NULL = opool_mt_default_report). Ignored
     * by opool_create. A concurrent pool whose desc has report but not
     * report_mt calls report with a NULL pool, as before this field existed. */
    void (*report_mt)(struct opool_mt *p, opool_status what, opool_handle h, void *user);
} opool_desc;

/* Filled by opool_get_stats. Versioned so it can grow: fields are only ever
 * appended. capacity grows and shrinks with the pool; max_capacity is
 * capacity for a pool that cannot grow; frees is allocs - count; a chunk
 * re-added after opool_shrink counts again in grows. OPOOL_STATS_VERSION is
 * the version an opool_stats of this release carries. */
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
    uint64_t episodes;         /* exhaustion episodes opened (see EXHAUSTION) */
    uint32_t peak_demand;      /* most objects wanted at once: at each failed alloc, the live
                                  count plus the allocs that failed since the last alloc or
                                  free that succeeded (0: none ever failed). A capacity of
                                  at least this would have avoided every failure seen */
} opool_stats;
#define OPOOL_STATS_VERSION 2u

/* ---- lifetime ----------------------------------------------------------- */

/* Create a pool: one allocation from desc->allocator, holding the pool, its
 * bookkeeping and its first chunk of objects. Slots are handed out 0, 1, 2,
 * ... in order. OPOOL_EINVAL: out or desc NULL, capacity 0,
 * object_align not a power of two or > 4096, max_capacity nonzero and below
 * capacity, capacity or max_capacity above OPOOL_MAX_CAPACITY, unknown flags
 * or policy, OPOOL_FULL_EVICT without evict, an allocator with only one of
 * alloc/free, only one of save_object/load_object, or sizes that overflow
 * (max_capacity * stride must fit in a size_t). OPOOL_ENOMEM: the allocator
 * failed. *out is set to NULL on any failure (when out is not NULL). Reports
 * nothing. Cost: one allocation; O(1) to initialise a pool that never
 * grows (its slots are made as allocs need them: HOW IT WORKS), O(first
 * chunk) a growable one. Thread-safety: any thread; pools may be created
 * concurrently. */
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

/* Bytes opool_create_in needs for desc, alignment slack included (the buffer
 * may have any alignment); 0 if desc is invalid (same rules as opool_create).
 * O(1). Thread-safety: any thread (reads only desc). */
OPOOL_API size_t opool_required_bytes(const opool_desc *desc);

/* Create a pool inside buf (any alignment), making no allocation at all (for
 * embedded and console code; but see SALTS, past 64 live pools with a
 * nonzero salt). OPOOL_EINVAL (and *out NULL): as opool_create, or buf NULL,
 * or size below opool_required_bytes(desc); OPOOL_ENOMEM only as SALTS says.
 * A growable pool created this way allocates its later chunks with
 * desc->allocator. buf must outlive the pool; opool_destroy does not free
 * it. Cost and thread-safety: as opool_create. */
OPOOL_API OPOOL_NODISCARD opool_status opool_create_in(opool **out, void *buf, size_t size,
                                                       const opool_desc *desc);

/* Run fini on every live object (last live-list entry first), then give back
 * every chunk and the pool's block (not an opool_create_in buffer).
 * NULL-safe; cannot fail. Every handle and pointer of the pool dies with it.
 * Objects still live are reported first, once: report(p, OPOOL_ELEAK, a
 * live object's handle (the oldest, under OPOOL_TRACK_SITES), user), while
 * the pool is still whole.
 * The default prints their number and, under OPOOL_TRACK_SITES, where the
 * oldest four were allocated:
 *   opool: pool "ships" (0x...): leak: destroyed with 3 objects live; the
 *   oldest allocated at game.c:120, game.c:120, ai.c:88
 * (free them, or opool_clear, before destroying a pool on purpose). With
 * OPOOL_REPORT_SIZING, the sizing line follows. O(live objects) with fini
 * or objects left live, O(chunks) otherwise. Thread-safety: per pool (one
 * thread at a time, as every call below). */
OPOOL_API void opool_destroy(opool *p);

/* ---- objects ------------------------------------------------------------
 * The O(1) calls. Those marked "inline" compile their common case into the
 * caller (opool_abi.h says how); each is also an exported function. */

/* Allocate an object; its handle goes to *out (if out is not NULL). Reuse is
 * LIFO: the slot freed last comes back first. The object (aligned to
 * object_align) never moves while live, and holds whatever it held before
 * unless OPOOL_ZERO or init is set (under Valgrind its bytes are undefined).
 * Returns NULL, with *out = OPOOL_NULL, when p is NULL or the pool is full and
 * its policy cannot make room (OPOOL_FULL_FAIL; growth at its limit or out of
 * memory; evict returned no live handle): counted in failed_allocs. Reports
 * OPOOL_EFULL on the first failure of an exhaustion episode, and
 * OPOOL_EWRITE_AFTER_FREE (OPOOL_POISON) if the slot was written while free,
 * after which the alloc still succeeds. O(1), no allocation and no system
 * call on a fixed pool; a growth allocates a chunk, O(new storage); an
 * eviction costs evict + fini. Inline. Thread-safety: per pool. */
OPOOL_API void *opool_alloc(opool *p, opool_handle *out);

/* Re-create an object at exactly h, index and generation (to rebuild a world
 * from your own save format): afterwards opool_get(p, h) returns it. Returns
 * NULL if p is NULL, h's generation is even (OPOOL_NULL included), h's index
 * is at or beyond max_capacity (a fixed pool: capacity), a growable pool
 * cannot grow to it (allocator failure), the slot is retired, or the slot is
 * live; no object changes then, and the failure is not counted in
 * failed_allocs. A handle never issued is reported as OPOOL_EINVAL, a live
 * or retired slot as OPOOL_EBUSY (see MISUSE). A growable pool grows as needed to reach the
 * index (storage it added stays, free, even if the call then fails). The
 * slot leaves the free stack and the slot that was on top of the stack takes
 * its place. init, OPOOL_ZERO and the poison check (reported as in
 * opool_alloc) run as for opool_alloc; it counts in allocs and high_water.
 * O(1), plus growth. Thread-safety: per pool. */
OPOOL_API void *opool_alloc_at(opool *p, opool_handle h);

/* Free h's object: fini runs, the slot's generation advances (every copy of h
 * goes stale), the slot goes on top of the free stack, and the last live-list
 * entry takes the freed one's place at once (a swap-delete; an alloc right
 * after, before any other change, swaps it back). Ends an
 * exhaustion episode. OPOOL_OK; OPOOL_EINVAL: p NULL or h never issued (even
 * generation, OPOOL_NULL, index out of range: see ERRORS); OPOOL_ESTALE: h
 * stale (freed already: a double free) or foreign. A rejected free changes
 * nothing but rejected_handles and is reported with h (neither for p NULL).
 * O(1); inline. Thread-safety: per pool. */
OPOOL_API opool_status opool_free(opool *p, opool_handle h);

/* Free by pointer (for code that holds pointers rather than handles), with
 * the effects of opool_free. OPOOL_EINVAL unless obj is the start of a live
 * object of this pool (p NULL, obj NULL, an interior pointer, a free slot,
 * foreign memory): counted in rejected_handles and reported as OPOOL_EINVAL
 * with OPOOL_NULL (neither for p NULL). O(number of chunks): 1 for a fixed
 * pool, at most 33. Thread-safety: per pool. */
OPOOL_API opool_status opool_free_object(opool *p, void *obj);

/* The object of h, or NULL unless h is live in p (any stale, foreign, forged
 * or null handle, or p NULL). Never reads outside the pool; reports nothing.
 * O(1), one compare on a fixed pool; inline. Thread-safety: per pool. */
OPOOL_API void *opool_get(const opool *p, opool_handle h);

/* opool_get(p, h) != NULL. O(1); inline. Thread-safety: per pool. */
OPOOL_API bool opool_valid(const opool *p, opool_handle h);

/* The handle of the live object starting at obj, OPOOL_NULL otherwise (p or
 * obj NULL, an interior pointer, a free slot, memory the pool does not hold).
 * Reports nothing. O(number of chunks). Thread-safety: per pool. */
OPOOL_API opool_handle opool_handle_of(const opool *p, const void *obj);

/* The live object in slot index (a raw index, from opool_handle_index say),
 * NULL if that slot is free, retired, beyond the slot records, or p is NULL.
 * O(1); inline. Thread-safety: per pool. */
OPOOL_API void *opool_at(const opool *p, uint32_t index);

/* Free every live object (fini on each, last live-list entry first): every
 * old handle goes stale, and the free stack is reset so the next allocs take
 * slots 0, 1, 2, ... in order, like a fresh pool. Retired slots stay retired;
 * grown chunks stay (opool_shrink gives them back). NULL-safe; cannot fail;
 * reports nothing. O(capacity): one pass over the slot records when no
 * object needs work of its own, that is without
 * fini, OPOOL_POISON, OPOOL_RETIRE_ON_WRAP or a memory checker; with one of
 * them, a free per object. Thread-safety: per pool. */
OPOOL_API void opool_clear(opool *p);

/* ---- iteration and introspection --------------------------------------- */

/* Live objects; 0 for NULL. A loop over the live list starts here
 * (ITERATION), so the next alloc appends even if a free came just before,
 * instead of undoing that free's move (HOW IT WORKS): the one effect of
 * this call on the pool (opool_live_handle and opool_live_object have
 * none below count). O(1); inline. Thread-safety: per pool (these reads on
 * several threads at once, with nothing else, do not race). */
OPOOL_API uint32_t opool_count(const opool *p);

/* Slots usable now: the storage the pool holds minus retired slots (a
 * growable pool's first chunk may exceed desc.capacity; growth raises it,
 * opool_shrink lowers it). 0 for NULL. O(1). Thread-safety: per pool. */
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
 * to the loop; in short: every object live at the start is
 * visited once, freeing the object at i and allocating are safe. NULL for
 * every i under OPOOL_NO_LIVE_LIST. Below count each is a plain read:
 * unlike opool_count it writes nothing, so a loop's body keeps the pool's
 * fields in registers; past the end (a loop stepping over places frees of
 * others took away) it ends the undo of a free just before, as opool_count
 * does. O(1); inline. Thread-safety: per pool. */
OPOOL_API opool_handle opool_live_handle(const opool *p, uint32_t i);
OPOOL_API void *opool_live_object(const opool *p, uint32_t i);

/* Visit every live object exactly once, in the order of the backward loop
 * above, calling keep(obj, its handle, user); free (running fini) each one
 * for which keep returns false. Returns how many it freed; 0 if p or keep is
 * NULL. keep may allocate (objects allocated during the pass are not
 * visited) and may free its own object (then retain does not free it again
 * and does not count it). Frees of other objects inside keep or fini follow
 * ITERATION: one not yet visited is skipped and the last entry takes its
 * place (it may then be visited twice). O(count) plus the frees. Under
 * OPOOL_NO_LIVE_LIST: reports OPOOL_EINVAL, visits nothing, returns 0.
 * Thread-safety: the pool's. */
OPOOL_API uint32_t opool_retain(opool *p, bool (*keep)(void *obj, opool_handle h, void *user),
                                void *user);

/* The backward loop as a statement: declares T *obj and opool_handle h for
 * the body, which runs once per live object with that object and its
 * handle, exactly as `for (i = opool_count(p); i-- > 0;)` over
 * opool_live_object/opool_live_handle (ITERATION says what frees and allocs
 * inside do). Freeing obj (opool_free(p, h)) is allowed; break and continue
 * work; indices left past the end by frees of other objects are skipped.
 * p is evaluated once per object: pass a plain variable. A pool under
 * OPOOL_NO_LIVE_LIST reports OPOOL_EINVAL once and runs no body.
 *
 *     OPOOL_FOREACH(pool, struct particle, it, h) {
 *         if (it->life <= 0) opool_free(pool, h);
 *     }
 */
#define OPOOL_FOREACH(p, T, obj, h)                                                                \
    for (uint32_t obj##_opool_i_ = opool__live_count(p), obj##_opool_go_ = 1,                      \
                  obj##_opool_once_ = 0;                                                           \
         obj##_opool_go_ && obj##_opool_i_-- > 0;)                                                 \
        for (opool_handle h = (obj##_opool_once_ = opool__live_in(p, obj##_opool_i_),              \
                              opool_live_handle(p, obj##_opool_i_));                               \
             obj##_opool_once_ && ((void)h, 1); obj##_opool_once_ = 0)                             \
            for (T *obj = (obj##_opool_go_ = 0,                                                    \
                          OPOOL__CAST(T *, opool_live_object(p, obj##_opool_i_)));                 \
                 !obj##_opool_go_ && ((void)obj, 1); obj##_opool_go_ = 1)

/* Reorder the live roster by slot index (memory order) so the next iteration
 * walks memory forward. Handles, objects and the free stack are untouched.
 * NULL-safe; under OPOOL_NO_LIVE_LIST it reports OPOOL_EINVAL and does
 * nothing. O(capacity) (one pass over the slot records), no
 * allocation. Thread-safety: per pool. */
OPOOL_API void opool_sort(opool *p);

/* Give back every grown chunk (not the first) that holds no live object.
 * Generations of the released slots are kept, so no old stale handle ever
 * becomes valid again; the slots come back (free) if the pool grows again.
 * Returns the number of slots released: 0 for NULL, a fixed pool, or when
 * every grown chunk holds an object. Pointers into a released chunk become
 * pointers into freed memory (docs/DEBUGGING.md, known gaps). O(capacity).
 * Thread-safety: per pool. */
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

/* Fill *out (see opool_stats). NULL-safe: out NULL does nothing, p NULL gives
 * all-zero stats (version 0 included). O(1) (O(chunks) for bytes).
 * Thread-safety: per pool. */
OPOOL_API void opool_get_stats(const opool *p, opool_stats *out);

/* Where h's object was allocated, "file:line" (a string constant of the
 * program), in a pool created with OPOOL_TRACK_SITES; NULL when h is not
 * live, the pool does not track sites, or the object came from
 * opool_alloc_at, a load, or the exported opool_alloc called through a
 * function pointer (no call site is known). Typed pools give the line of
 * their declaration, opl::pool<T> a line of opool.hpp. O(1).
 * Thread-safety: per pool. */
OPOOL_API const char *opool_alloc_site(const opool *p, opool_handle h);

/* The pool's sizing line, as snprintf writes (always terminated when size
 * > 0; returns the length it needed, newline included), e.g.
 *   opool: pool "bullets" (0x...): sizing: capacity 64, high water 64, 1
 *   exhaustion episode, 960 allocs failed: a capacity of 72 would have
 *   avoided them
 * or "...: sizing: capacity 64, high water 12, never exhausted". p NULL
 * writes the empty string and returns 0. O(1). Thread-safety: per pool. */
OPOOL_API size_t opool_sizing_line(const opool *p, char *buf, size_t size);

/* A picture of p as an SVG document, written through write(ctx, ...) in
 * buffers of at most 4 KiB: every slot with a record as one cell, 64 to a
 * row, chunk below chunk, coloured by its state: live (green), free (grey),
 * retired by OPOOL_RETIRE_ON_WRAP (red), given back by opool_shrink (a
 * dashed outline); chunks not grown are one line of text. A blue line joins
 * the live list's objects in order from position 0 (ringed), the first
 * 4096 of them: after churn it jumps about memory, after opool_sort it
 * sweeps forward. A legend counts each state; each run of same-state cells
 * has a title ("slots 64-70: free") that a browser shows on hover. The
 * name's bytes outside printable ASCII are drawn as '?'. Does not change p.
 * OPOOL_EINVAL: p or write NULL; OPOOL_EIO: write came up short (nothing is
 * written after it). Reports nothing, allocates nothing. O(slots) time,
 * about 100 bytes of output per run of same-state cells. Thread-safety: per
 * pool. docs/DEBUGGING.md shows one. */
OPOOL_API opool_status opool_draw_svg(const opool *p, opool_write_fn write, void *ctx);

/* A short constant English description (listed at opool_status), "unknown
 * status" for any other value; never NULL. It reads right for every kind of
 * object (for a heap, OPOOL_ESTALE is a double free). O(1). Thread-safety:
 * any thread. */
OPOOL_API const char *opool_status_str(opool_status s);

/* The report a pool makes when its desc has none; call it from your own
 * report to keep the default for the findings you do not handle (user is
 * not used). It prints one line on stderr, naming the pool (desc.name, if
 * any, and its address), for:
 *   OPOOL_EFULL              "opool: pool "bullets" (0x...): full: alloc failed (64 of
 *                            64 live); ..." at an episode's first failure, then
 *                            "...: still full: 8 allocs failed in this episode (64 of 64
 *                            live)" at its 2nd, 4th, 8th... (see EXHAUSTION);
 *   OPOOL_EWRITE_AFTER_FREE  "opool: pool ... (0x...): write after free: slot 2 was
 *                            changed while free (last handle 0x...)", then calls abort();
 *   OPOOL_ELEAK              "opool: pool ... (0x...): leak: destroyed with 3 objects
 *                            live; ..." (see opool_destroy);
 * and, when misuse is loud (see MISUSE at the top of this file), for a
 * rejected free or alloc_at (OPOOL_ESTALE, OPOOL_EINVAL, OPOOL_EBUSY) what
 * it was, found from the pool's records: "opool: pool "ships" (0x...):
 * rejected free of handle 0x...: a double free: slot 3's object was freed
 * already", or a stale handle, another pool's, a generation never issued,
 * an interior pointer, a live slot; then abort() under OPOOL_MISUSE=abort.
 * Otherwise nothing for those (the caller has the status).
 * p NULL: the line names no pool; called from a report that a failed load
 * is making, it prints that load's line (see "why a load failed"). Cost: one formatted write to
 * stderr. Thread-safety: as the pool's (it reads p's counters). */
OPOOL_API void opool_default_report(opool *p, opool_status what, opool_handle h, void *user);

/* Inside a report of OPOOL_EFULL (a pool's, a concurrent pool's or a heap's,
 * yours or the default): how many such reports of the same object were held
 * back since the last one made (see EXHAUSTION: at most 4 a second), and in
 * *opened (if not NULL) how many of those opened an episode. 0 elsewhere.
 * The statistics (failed_allocs, episodes) count every failure. O(1).
 * Thread-safety: any thread; it answers for the report running on it. */
OPOOL_API uint64_t opool_reports_held(uint64_t *opened);

/* ---- save and load (docs/FORMAT.md) ------------------------------------
 * The image format is docs/FORMAT.md: versioned, fixed little-endian,
 * checksummed, independent of addresses. Thread-safety: per pool, as every
 * call. */

/* Write p's complete state through write(ctx, ...): every slot's generation,
 * the roster (live list and free stack, so the next handles issued are the
 * same), the salt, the statistics and every live object (its object_size
 * bytes, or its save_object record). Does not change p. OPOOL_EINVAL: p or
 * write NULL; OPOOL_ENOMEM: the buffer for save_object's bytes, or (a pool
 * without a live list) the roster positions it writes, could not be
 * allocated; OPOOL_EIO: write came up short (nothing more is written after
 * it); OPOOL_ECORRUPT: save_object returned false. The bytes written before a
 * failure are not a valid image. Reports nothing. O(capacity + bytes of live
 * objects). Thread-safety: per pool. */
OPOOL_API opool_status opool_save(const opool *p, opool_write_fn write, void *ctx);

/* Rebuild a pool from one image that opool_save wrote (more may follow in
 * the stream), with desc's callbacks, user, report, allocator, policy and
 * flags. Every handle valid at save is valid again and reaches an identical
 * object; every other handle is rejected; count, generations, live-list
 * order, statistics and the exhaustion episode are restored. init is not
 * called; load_object is, for each live object when desc has it (after a
 * zero fill with OPOOL_ZERO). On any failure *out is NULL and nothing leaks;
 * the whole image is checked, checksum included, before anything is built.
 * OPOOL_EINVAL: out NULL; desc invalid for opool_create or read NULL (before
 * reading); desc does not fit the image: another object_size or effective
 * alignment, another chunk geometry (capacity, max_capacity or growability
 * giving another first chunk or limit), or load_object present when the
 * image holds plain bytes (or absent when it holds save_object records).
 * OPOOL_ECORRUPT: truncated, corrupted or hostile input (bad magic, unknown
 * version, inconsistent header or slot records, checksum), a world image
 * (see opool_load_many), or load_object returned false (the objects loaded
 * before it get fini); a corrupt image is OPOOL_ECORRUPT even if the desc
 * does not fit either. OPOOL_ENOMEM: the allocator failed. The check that
 * failed is reported through desc's report and recorded (see "why a load
 * failed", below). O(capacity + image bytes); peak memory the image plus the
 * pool. Thread-safety: any thread; *out is new. */
OPOOL_API OPOOL_NODISCARD opool_status opool_load(opool **out, const opool_desc *desc,
                                                  opool_read_fn read, void *ctx);

/* opool_save to a file, atomically: a new temporary file beside path
 * (path.<pid>.<n>.tmp, created exclusively), flushed and fsynced, then renamed
 * over path, and the directory synced. A crash or a full disk part-way leaves
 * the previous file as it was (possibly with a stray *.tmp). OPOOL_EINVAL: p
 * or path NULL, or path empty; OPOOL_ENOMEM: the temporary name or
 * save_object's buffer could not be allocated; OPOOL_EIO: the temporary file
 * could not be created, written, flushed, synced, closed or renamed;
 * OPOOL_ECORRUPT: save_object returned false. On failure the temporary file
 * is removed and path is untouched. Reports nothing. Cost: as opool_save,
 * plus the fsyncs. Thread-safety: per pool. */
OPOOL_API opool_status opool_save_file(const opool *p, const char *path);

/* opool_load from a file, which must end where the image ends. Fails as
 * opool_load, and: OPOOL_EINVAL when path is NULL; OPOOL_ENOENT when there
 * is no file at path; OPOOL_EIO when it cannot be opened otherwise or reading
 * it fails; OPOOL_ECORRUPT when bytes follow the image. Cost: as opool_load.
 * Thread-safety: any thread. */
OPOOL_API OPOOL_NODISCARD opool_status opool_load_file(opool **out, const opool_desc *desc,
                                                       const char *path);

/* ---- world saves: several pools, one image (docs/FORMAT.md, "Worlds") -- */

/* Write the n pools of pools[0..n) as one world image: a header, each
 * pool's section (its opool_save image without the checksum) in array
 * order, and one checksum over the whole, so the pools are saved and later
 * loaded together or not at all. OPOOL_EINVAL: pools or write NULL, n 0, a
 * NULL pool, or the same pool twice in the array; otherwise as opool_save
 * (OPOOL_ENOMEM, OPOOL_EIO: write came up short, OPOOL_ECORRUPT: a
 * save_object returned false), and after a failure the bytes written are
 * no image. O(n^2) pointer comparisons + the sum of opool_save's costs.
 * Reads the pools only: each must not be changed during the call. */
OPOOL_API opool_status opool_save_many(const opool *const *pools, uint32_t n, opool_write_fn write,
                                       void *ctx);

/* Rebuild the n pools of a world image, pool i from descs[i] (as
 * opool_load does for one), into out[0..n). All or nothing: on success
 * every out[i] is set; on any failure every out[i] is NULL and nothing
 * leaks. The image is read and checked whole (checksum, every section's
 * header and slot records, every desc against its section) and all the
 * memory of every pool allocated before any object is built, so a failure
 * runs no callback, with one exception: when load_object rejects object k
 * of pool i (OPOOL_ECORRUPT), the objects load_object already rebuilt (in
 * pools 0..i, and pool i's first k) get fini as the built pools are
 * destroyed, because they may hold what load_object acquired.
 * OPOOL_EINVAL: out, descs or read NULL, n 0, an invalid desc, an image of
 * another number of pools, or a desc that does not fit its pool's section;
 * OPOOL_ECORRUPT: truncated, corrupted or hostile input, or a single
 * pool's image; OPOOL_ENOMEM. Each failure is reported once through the
 * report of descs[i] (of descs[0] when it concerns the whole image), see
 * opool_last_load_error. O(image size + the pools' storage). Thread-safe
 * for distinct out arrays and streams. */
OPOOL_API OPOOL_NODISCARD opool_status opool_load_many(opool **out, const opool_desc *descs,
                                                       uint32_t n, opool_read_fn read, void *ctx);

/* opool_save_many to a file, atomically as opool_save_file: a crash or a
 * full disk part-way leaves the previous file as it was. OPOOL_EINVAL as
 * opool_save_many, or path NULL or empty; OPOOL_EIO: the temporary file
 * could not be created, written, flushed or renamed; OPOOL_ENOMEM;
 * OPOOL_ECORRUPT: a save_object failed. Memory for the temporary file's
 * name comes from pools[0]'s allocator. */
OPOOL_API opool_status opool_save_many_file(const opool *const *pools, uint32_t n,
                                            const char *path);

/* opool_load_many from a file, which must hold exactly one world image.
 * OPOOL_ENOENT: no file at path (reported silently: no line by default);
 * OPOOL_EIO: it cannot be opened otherwise, or reading it failed; else as
 * opool_load_many (every out[i] NULL on failure). */
OPOOL_API OPOOL_NODISCARD opool_status opool_load_many_file(opool **out, const opool_desc *descs,
                                                            uint32_t n, const char *path);

/* ---- why a load failed -------------------------------------------------
 * Every failed opool_load, opool_load_file, opool_load_many and
 * opool_load_many_file says which check failed, twice:
 *  - through the desc's report (descs[i]'s for a world, descs[0]'s for the
 *    image as a whole), called once on the loading thread with p NULL, what
 *    the status the load returns and h OPOOL_NULL. With no report, the
 *    default prints one line on stderr, e.g.
 *      opool: load "enemies": object_size: the image has 24, the desc 32
 *      opool: load of pool 2 of 3 "bullets": capacity: the image has 64, the desc 128
 *      opool: load of a world of 3 pools: checksum: the image says 0x..., its bytes hash to 0x...
 *    (nothing for OPOOL_ENOENT: a missing save is an expected outcome);
 *    opool_default_report(NULL, ...) called from a report prints that line.
 *  - in the calling thread's record, opool_last_load_error(), kept until
 *    that thread's next failed load: a report reads it from inside its
 *    call, any code after the load returns.
 * A call with out, desc(s) or read NULL, or n 0, is neither recorded nor
 * reported (its OPOOL_EINVAL says all); an invalid desc is recorded but not
 * reported (its report may be as invalid as the rest). */

/* A thread's record of its last failed load, as opool_last_load_error gives
 * it: which check failed, with the expected and the found value. */
typedef struct opool_load_error {
    opool_status status; /* what the load returned; OPOOL_OK: no load failed on this thread */
    uint32_t pool;       /* world loads: the index of the pool whose section is damaged (or,
                          * for a desc that does not fit, whose desc); UINT32_MAX: the image
                          * as a whole: its header or checksum, or damage no one section can
                          * be blamed for (docs/FORMAT.md). opool_load: 0 */
    const char *check;   /* the check: a header field ("object_size", "capacity", "version",
                          * "max_capacity", ...) or "checksum", "magic", "truncated",
                          * "trailing bytes", "slot records", "pools", "load_object", "desc",
                          * "file", "memory": a string constant */
    uint64_t expected;   /* what the desc or the format asks for (0 when it does not apply) */
    uint64_t found;      /* what the image holds (or the bytes read, for "truncated") */
    char message[256];   /* the default report's line, without its newline */
} opool_load_error;

/* The calling thread's record of its last failed load (see above); never
 * NULL; status OPOOL_OK before the first. O(1); thread-safe (each thread
 * has its own record, overwritten by its next failed load). */
OPOOL_API const opool_load_error *opool_last_load_error(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

/* The private layout and the inline bodies (ABI, not API). */
#include "opool_abi.h"

#endif /* OPOOL_H */
