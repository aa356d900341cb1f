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
 * the storage before it (capped at max_capacity). Objects never move. Every
 * chunk of objects starts on a 64-byte cache line.
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
 * EXHAUSTION. A failed alloc (the pool is full and its policy cannot make
 * room) opens an exhaustion episode, or counts in the open one. The episode
 * is reported (OPOOL_EFULL) at its 1st, 2nd, 4th, 8th, ... failed alloc, each
 * power of two, so a pool held at its budget for a long time prints a
 * handful of lines, not one per frame. It ends at a free that leaves
 * count <= capacity - ceil(capacity / 4) objects live (a quarter of the
 * usable slots free again: 48 of 64, 0 of 1); the next failure then opens a
 * new episode. The concurrent pool and the heap (per size class) follow the
 * same rule.
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

/* ---- status, policies, flags ------------------------------------------- */

typedef enum opool_status {
    OPOOL_OK = 0,
    OPOOL_EINVAL,            /* bad argument: NULL, zero, overflow, never-issued handle */
    OPOOL_ENOMEM,            /* the allocator failed */
    OPOOL_EFULL,             /* no free slot (report: once per exhaustion episode) */
    OPOOL_ESTALE,            /* handle was valid once, or belongs to another pool */
    OPOOL_EBUSY,             /* reserved: no function returns it (opool_alloc_at returns
                                NULL for a live slot) */
    OPOOL_ECORRUPT,          /* a saved image failed its checks */
    OPOOL_EWRITE_AFTER_FREE, /* poison pattern of a free slot changed */
    OPOOL_ETIMEDOUT,         /* reserved: no function returns it (a wait that gives up
                                returns NULL) */
    OPOOL_EIO,               /* reading or writing a stream or file failed (save, load) */
    OPOOL_ENOENT             /* opool_load_file: there is no file at the path */
} opool_status;

typedef enum opool_full_policy {
    OPOOL_FULL_FAIL = 0, /* alloc returns NULL */
    OPOOL_FULL_GROW,     /* add storage, up to max_capacity; objects never move */
    OPOOL_FULL_EVICT     /* desc.evict chooses a live victim; it is freed and its slot reused */
} opool_full_policy;

enum {
    OPOOL_ZERO = 1u << 0,           /* objects are zero-filled on every alloc */
    OPOOL_POISON = 1u << 1,         /* free slots filled with 0x1deadb0b, checked on reuse */
    OPOOL_RETIRE_ON_WRAP = 1u << 2, /* a slot whose generation would wrap is retired for good */
    OPOOL__FLAGS_ALL = (1u << 3) - 1
};

/* Largest capacity or max_capacity a pool accepts. */
#define OPOOL_MAX_CAPACITY 0xFFFFFF00u

typedef struct opool opool;
struct opool_mt; /* opool_mt.h: the concurrent pool, created from an opool_desc too */

/* Byte streams for save and load. write: like fwrite, returns the bytes
 * written (short = failure). read: like fread, returns the bytes read (short
 * = end of input or failure). */
typedef size_t (*opool_write_fn)(void *ctx, const void *data, size_t size);
typedef size_t (*opool_read_fn)(void *ctx, void *data, size_t size);

typedef struct opool_allocator { /* all zero = the C library */
    void *(*alloc)(void *ctx, size_t size, size_t align);
    void (*free)(void *ctx, void *ptr, size_t size);
    void *ctx;
} opool_allocator;

/* Zero-initialise, then set what you need. */
typedef struct opool_desc {
    size_t object_size;         /* required, > 0 */
    size_t object_align;        /* 0 = alignof(max_align_t); a power of two <= 4096 */
    uint32_t capacity;          /* required, > 0: slots reserved at create (a growable pool
                                   rounds it up to a power of two, capped at max_capacity) */
    uint32_t max_capacity;      /* 0 = capacity; only OPOOL_FULL_GROW grows toward it */
    opool_full_policy on_full;  /* what alloc does when no slot is free */
    uint32_t flags;             /* OPOOL_ZERO | OPOOL_POISON | OPOOL_RETIRE_ON_WRAP */
    uint32_t salt;              /* generation origin; 0 = derived from creation order */
    void (*init)(void *obj, void *user); /* optional: after every alloc (after OPOOL_ZERO) */
    void (*fini)(void *obj, void *user); /* optional: on free, clear, evict and destroy */
    opool_handle (*evict)(opool *p, void *user); /* OPOOL_FULL_EVICT: return a live victim */
    /* Findings, with the pool and the handle concerned (OPOOL_NULL if none);
     * NULL = opool_default_report, which says what each does by default:
     *   OPOOL_EFULL              an exhaustion episode: its 1st, 2nd, 4th, 8th... failed
     *                            alloc (see EXHAUSTION at the top of this file)
     *   OPOOL_ESTALE/OPOOL_EINVAL a rejected free (the status says it too)
     *   OPOOL_EWRITE_AFTER_FREE  poison changed (h: the freed object's handle)
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

/* Create a pool. OPOOL_EINVAL: out or desc NULL, object_size or capacity 0,
 * object_align not a power of two or > 4096, max_capacity nonzero and below
 * capacity, capacity or max_capacity above OPOOL_MAX_CAPACITY, unknown flags
 * or policy, OPOOL_FULL_EVICT without evict, an allocator with only one of
 * alloc/free, or sizes that overflow. OPOOL_ENOMEM: the allocator failed. *out is set to NULL on
 * any failure. Cost: one allocation; O(capacity) to initialise. */
OPOOL_API OPOOL_NODISCARD opool_status opool_create(opool **out, const opool_desc *desc);

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

/* The i-th entry of the live list, i in [0, count); OPOOL_NULL/NULL
 * otherwise. Iterate backwards, i = count..0, to free and allocate while
 * iterating: ITERATION at the top of this file says exactly what each does
 * to the loop. O(1); inline. */
OPOOL_API opool_handle opool_live_handle(const opool *p, uint32_t i);
OPOOL_API void *opool_live_object(const opool *p, uint32_t i);

/* Reorder the live roster by slot index (memory order) so the next iteration
 * walks memory forward. Handles and the free stack are untouched.
 * O(capacity), no allocation. */
OPOOL_API void opool_sort(opool *p);

/* Give back every grown chunk (not the first) that holds no live object.
 * Generations of the released slots are kept, so no old stale handle ever
 * becomes valid again; the slots come back (free) if the pool grows again.
 * Returns the number of slots released. O(capacity). */
OPOOL_API uint32_t opool_shrink(opool *p);

/* Fill *out (NULL-safe: zeroed stats for a NULL pool). O(1). */
OPOOL_API void opool_get_stats(const opool *p, opool_stats *out);

/* A short constant English description, "unknown status" for others. It
 * reads right for every kind of object (for a heap, OPOOL_ESTALE is a double
 * free). O(1); thread-safe. */
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
 * and nothing for OPOOL_ESTALE and OPOOL_EINVAL (the caller has the status).
 * p NULL: the line names no pool; called from a report that a failed load
 * is making, it prints that load's line (see "why a load failed"). Cost: one formatted write to stderr.
 * Thread-safety: as the pool's (it reads p's counters). */
OPOOL_API void opool_default_report(opool *p, opool_status what, opool_handle h, void *user);

/* ---- save and load (docs/FORMAT.md) ------------------------------------ */

/* Write p's complete state: every slot's generation, the roster (live list
 * and free stack, so the next handles issued are the same), the salt, the
 * statistics and every live object. OPOOL_EINVAL: p or write NULL;
 * OPOOL_ENOMEM; OPOOL_EIO: write came up short; OPOOL_ECORRUPT:
 * save_object returned false. O(capacity + bytes of live objects). */
OPOOL_API opool_status opool_save(const opool *p, opool_write_fn write, void *ctx);

/* Rebuild a pool from what opool_save wrote, with desc's callbacks,
 * allocator and policy. desc's object_size and object_align must match the
 * saved pool's (else OPOOL_EINVAL), as must its capacity limits (the saved
 * capacity may not exceed what desc allows). Every handle valid at save is
 * valid again and reaches an identical object; every other handle is
 * rejected. OPOOL_ECORRUPT: truncated, corrupted or hostile input (checked
 * whole, checksum included, before anything is built); OPOOL_ENOMEM. On any
 * failure *out is NULL and nothing leaks, and the check that failed is
 * reported through desc's report and recorded (see "why a load failed",
 * below). A world image is refused (OPOOL_ECORRUPT: see opool_load_many).
 * init is not called; load_object is, for each live object when desc has
 * it. O(image size + the pool's storage). Thread-safe for distinct
 * streams. */
OPOOL_API OPOOL_NODISCARD opool_status opool_load(opool **out, const opool_desc *desc,
                                                  opool_read_fn read, void *ctx);

/* opool_save to a file, atomically: a temporary file beside path, flushed
 * to disk, then renamed over path. A crash or a full disk part-way leaves
 * the previous file as it was. OPOOL_EINVAL: NULL argument or empty path;
 * OPOOL_EIO: the temporary file could not be created, written, flushed to
 * disk or renamed; OPOOL_ENOMEM; OPOOL_ECORRUPT: save_object failed. */
OPOOL_API opool_status opool_save_file(const opool *p, const char *path);

/* opool_load from a file, which must hold exactly one image. OPOOL_ENOENT:
 * no file at path; OPOOL_EIO: it cannot be opened otherwise, or reading it
 * failed; OPOOL_EINVAL: NULL argument, or desc does not fit the image (as
 * opool_load); OPOOL_ECORRUPT: what it holds is not a valid image. */
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
typedef struct opool_load_error {
    opool_status status; /* what the load returned; OPOOL_OK: no load failed on this thread */
    uint32_t pool;       /* world loads: the pool's index; UINT32_MAX: the image as a whole
                          * (checksum, truncation, header). opool_load: 0 */
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
