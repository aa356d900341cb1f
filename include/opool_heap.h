/*
 * opool_heap.h -- a malloc-shaped heap built from size-class pools (C11).
 *
 * ============================================================================
 * STEP BY STEP
 * ============================================================================
 *     opool_heap *heap;
 *     if (opool_heap_create(&heap, NULL) != OPOOL_OK) ...;   // default classes
 *
 *     char *s = opool_heap_alloc(heap, 100);      // from the 112-byte class
 *     s = opool_heap_realloc(heap, s, 300);        // moves to the 320-byte class
 *     opool_heap_usable_size(heap, s);             // 320
 *     opool_heap_free(heap, s);                    // OPOOL_OK
 *     opool_heap_free(heap, s);                    // OPOOL_ESTALE: caught, reported
 *     opool_heap_destroy(heap);                    // releases everything at once
 *
 * ============================================================================
 * HOW IT WORKS, AND WHAT IT COSTS
 * ============================================================================
 * Each size class is a pool of equal blocks carved from 64 KiB pages aligned
 * to 64 KiB. A page starts with a small header (its class, its free list and
 * one live bit per block); the blocks follow, with no header in front of
 * them. A free block holds the link of its page's free list in its own first
 * bytes. So:
 *   - alloc: one table lookup from the size to the class, then a pop from the
 *     free list of the class's current page. O(1).
 *   - free: the page is the pointer rounded down to 64 KiB; the heap checks
 *     that page is one of its own in a hash set of its pages (never reading
 *     memory it does not own), that the pointer is a block's start, and that
 *     the block's live bit is set. O(1) expected.
 *   - per block, the only overhead is its live bit; per page, a header of 64
 *     bytes plus the bitmap.
 * alloc and free are inline: the common case (a block of the class's current
 * page, or a live block of a page of the heap) costs a few dozen instructions
 * and no call; everything else (an empty current page, growth, fallback
 * blocks, every misuse, poisoning, a memory checker) runs out of line.
 * A request larger than the largest class goes to the desc's allocator (and
 * is tracked in a hash map, so it can be freed and checked the same way),
 * unless OPOOL_HEAP_NO_FALLBACK makes it fail.
 *
 * Without OPOOL_HEAP_GROW each class holds blocks_per_class blocks (rounded
 * up to whole pages), reserved at create, and an alloc of a full class fails.
 * With it a full class adds a page; a class keeps at most one empty grown
 * page and gives the others back as they empty.
 *
 * Default classes (bytes): 16 32 48 64 80 96 112 128 160 192 224 256 320 384
 * 448 512 640 768 896 1024 1280 1536 1792 2048. Blocks are aligned to 16
 * bytes when their class size is a multiple of 16, else to 8.
 *
 * ============================================================================
 * ERRORS
 * ============================================================================
 * Misuse never corrupts the heap:
 *   - freeing (or reallocating, or asking the size of) a pointer the heap did
 *     not hand out, or a pointer inside a block: OPOOL_EINVAL;
 *   - freeing a block twice: OPOOL_ESTALE. (A block of the fallback
 *     allocator leaves the heap when freed: freeing it again is
 *     OPOOL_EINVAL, as for any pointer the heap does not hold.)
 * Both are also passed to desc.report. With OPOOL_POISON free blocks are
 * filled with 0x1deadb0b and checked when reused (OPOOL_EWRITE_AFTER_FREE,
 * default report: message and abort); under AddressSanitizer and Valgrind
 * free blocks are inaccessible without any flag. A full class is reported
 * as in opool.h (OPOOL_EFULL, see opool_heap_create), with
 * opool_heap_default_report as the default.
 *
 * Thread-safety: one thread at a time per heap (as opool.h).
 *
 * LICENSE: zlib (see LICENSE)
 */
#ifndef OPOOL_HEAP_H
#define OPOOL_HEAP_H

#include "opool.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct opool_heap opool_heap;

/* Flags of opool_heap_desc (OPOOL_POISON from opool.h also applies). */
enum {
    OPOOL_HEAP_NO_FALLBACK = 1u << 8, /* larger than the largest class: fail, not the allocator */
    OPOOL_HEAP_GROW = 1u << 9         /* a full class adds pages */
};

#define OPOOL_HEAP_MAX_CLASSES 64
#define OPOOL_HEAP_MAX_CLASS_SIZE 16384u /* the largest class size accepted */
#define OPOOL_HEAP_PAGE 65536u           /* bytes per page of blocks */

typedef struct opool_heap_desc { /* zero (or a NULL desc) = sensible defaults */
    const uint32_t *class_sizes; /* ascending multiples of 8, <= OPOOL_HEAP_MAX_CLASS_SIZE;
                                    NULL = the defaults above (copied: need not outlive create) */
    uint32_t class_count;        /* entries in class_sizes, <= OPOOL_HEAP_MAX_CLASSES */
    uint32_t blocks_per_class;   /* blocks reserved per class at create; 0 = one page each */
    uint32_t flags;              /* OPOOL_HEAP_NO_FALLBACK | OPOOL_HEAP_GROW | OPOOL_POISON */
    /* Findings, with the heap and the pointer concerned (NULL =
     * opool_heap_default_report, which says what each does by default):
     * OPOOL_EINVAL / OPOOL_ESTALE (a bad free, realloc or usable_size; a
     * double free is OPOOL_ESTALE), OPOOL_EFULL (a class or the fallback
     * allocator ran out: an exhaustion episode, see opool_heap_create; ptr
     * NULL), OPOOL_EWRITE_AFTER_FREE (a free block's poison changed). */
    void (*report)(opool_heap *h, opool_status what, const void *ptr, void *user);
    void *user;
    opool_allocator allocator; /* pages and large blocks; zero = the C library */
    /* Optional: the heap's name in every message of the default report (kept
     * as a pointer, not copied: it must outlive the heap). */
    const char *name;
} opool_heap_desc;

typedef struct opool_heap_class_stats {
    uint32_t size;            /* block size */
    uint32_t blocks;          /* blocks the class holds now (live + free) */
    uint32_t live;            /* blocks handed out */
    uint32_t high_water;      /* most blocks live at once */
    uint64_t allocs;          /* successful allocations from this class */
    uint64_t failed_allocs;   /* allocations that found the class full */
    uint64_t requested_bytes; /* sum of the sizes asked for, over all its allocations */
    uint64_t wasted_bytes;    /* sum of (size - asked for): what rounding up cost */
} opool_heap_class_stats;

typedef struct opool_heap_stats { /* versioned: fields are only ever appended */
    uint32_t version;             /* OPOOL_HEAP_STATS_VERSION */
    uint32_t class_count;
    uint64_t large_live;          /* blocks from the fallback allocator, live */
    uint64_t large_bytes;         /* their bytes */
    uint64_t rejected;            /* bad frees, reallocs and size queries */
    size_t bytes;                 /* memory the heap holds, bookkeeping included */
    opool_heap_class_stats classes[OPOOL_HEAP_MAX_CLASSES];
} opool_heap_stats;
#define OPOOL_HEAP_STATS_VERSION 1u

/* Create a heap. desc may be NULL (defaults). OPOOL_EINVAL: out NULL, class
 * sizes not ascending, not multiples of 8, zero or too large, class_count 0
 * with class_sizes set or above OPOOL_HEAP_MAX_CLASSES, unknown flags, an
 * allocator with only one of alloc/free, or a reservation that overflows
 * (more than 2^32 - 1 blocks in a class once rounded up to pages, or more
 * bytes than the address space).
 * OPOOL_ENOMEM: the allocator failed (nothing leaks). *out NULL on failure.
 * Exhaustion follows opool.h's rule (EXHAUSTION) for each class on its own:
 * a class's episode is reported at its 1st, 2nd, 4th, 8th... failed alloc
 * and ends at a free that leaves at most blocks - ceil(blocks / 4) of its
 * blocks live. The fallback allocator has one episode too, whose capacity
 * is the number of large blocks live when it opened. While any episode is
 * open, every free runs out of line. */
OPOOL_API OPOOL_NODISCARD opool_status opool_heap_create(opool_heap **out,
                                                         const opool_heap_desc *desc);

/* Release every page and every large block at once. NULL-safe. */
OPOOL_API void opool_heap_destroy(opool_heap *h);

/* A block of at least size bytes (size 0 counts as 1), NULL when h is NULL,
 * the class is full (without OPOOL_HEAP_GROW), the size needs the fallback
 * and OPOOL_HEAP_NO_FALLBACK is set, or memory ran out. O(1); inline. */
static inline void *opool_heap_alloc(opool_heap *h, size_t size);

/* opool_heap_alloc(h, n * size) zero-filled; NULL also when n * size
 * overflows. */
OPOOL_API void *opool_heap_calloc(opool_heap *h, size_t n, size_t size);

/* Resize: ptr NULL is alloc; size 0 frees ptr and returns NULL. A block that
 * stays in its class is returned as is, and so is a fallback block asked to
 * shrink to a size still above the largest class (its usable size does not
 * change); otherwise a new block gets the contents (up to the smaller size)
 * and the old one is freed. NULL when the
 * new block cannot be had (ptr stays valid) or ptr is not a live block of h
 * (reported as in free; nothing changes). */
OPOOL_API void *opool_heap_realloc(opool_heap *h, void *ptr, size_t size);

/* Free a block. OPOOL_OK (also for ptr NULL); OPOOL_EINVAL: h NULL, or ptr
 * not the start of a block of h (a fallback block already freed included);
 * OPOOL_ESTALE: ptr a class block already free. O(1) expected; inline. */
static inline opool_status opool_heap_free(opool_heap *h, void *ptr);

/* Bytes usable at ptr (its class size, or the size asked of the fallback
 * allocator), 0 if ptr is not a live block of h (reported). */
OPOOL_API size_t opool_heap_usable_size(const opool_heap *h, const void *ptr);

/* Fill *out (NULL-safe: zeroed stats for a NULL heap). O(classes). */
OPOOL_API void opool_heap_get_stats(const opool_heap *h, opool_heap_stats *out);

/* The report a heap makes when its desc has none; call it from your own
 * report to keep the default for the findings you do not handle (user is
 * not used). One line on stderr, naming the heap (desc.name, if any, and
 * its address), for:
 *   OPOOL_EFULL              "opool: heap "text" (0x...): class of 64-byte blocks full:
 *                            alloc failed (1020 of 1020 live); ..." at an episode's
 *                            first failure, "...: still full: 8 allocs failed in this
 *                            episode ..." at its 2nd, 4th, 8th... (for the fallback
 *                            allocator: "the allocator refused a large block ...");
 *   OPOOL_EWRITE_AFTER_FREE  "opool: heap ... (0x...): write after free: block 0x... was
 *                            changed while free", then calls abort();
 * and nothing for OPOOL_ESTALE (a double free) and OPOOL_EINVAL (a pointer
 * the heap does not hold): the caller has the status. h NULL: the line
 * names no heap. Cost: one formatted write to stderr. Thread-safety: as
 * the heap's. */
OPOOL_API void opool_heap_default_report(opool_heap *h, opool_status what, const void *ptr,
                                         void *user);

/* ==== inline paths =========================================================
 * Private: these layouts change between releases; use the functions above. */

/* The header at the start of every 64 KiB page of blocks; the live bitmap
 * (one bit per block, in uint64_t words) follows it. */
typedef struct opool__hpage {
    void *free;           /* free blocks, linked through their first bytes */
    uintptr_t block0;     /* the address of block 0 */
    uint32_t size, recip; /* block size; ceil(2^32 / size): offset / size without a division */
    uint32_t live;        /* blocks handed out */
    uint32_t slow_at;     /* a free leaving live at this value goes out of line (list upkeep) */
    uint32_t carved;      /* bytes from block0 handed out at least once; blocks after are fresh */
    uint32_t cls;         /* class index */
    struct opool__hpage *next, *prev; /* the class's listed pages (those not known full) */
    uint32_t nblocks;
    uint32_t flags; /* OPOOL__HPAGE_RESERVED, OPOOL__HPAGE_LISTED */
} opool__hpage;

/* What inline allocs and frees update of a class. */
typedef struct opool__hclass_hot {
    opool__hpage *page; /* the current page, whose free list allocs pop: the listed page
                           freed into last; never NULL */
    uint32_t live, high_water;
    uint64_t allocs, requested;
} opool__hclass_hot;

typedef struct opool__hentry { /* an entry of the heap's hash maps; key 0 = empty */
    uintptr_t key;
    size_t size; /* large blocks: the size asked for */
} opool__hentry;

/* The start of every opool_heap. */
typedef struct opool__heap_hot {
    const uint8_t *class_of;    /* [small_max / 8 + 1]: the class of sizes (8k - 7 .. 8k] */
    const opool__hentry *pages; /* the page set: open addressing, key = page address */
    uint32_t pages_mask;        /* its capacity - 1 */
    uint32_t small_max;         /* inline allocs for sizes 1..small_max; 0: none */
    uint32_t slow; /* nonzero: every free out of line (poisoning, a checker, an open episode) */
    opool__hclass_hot cls[OPOOL_HEAP_MAX_CLASSES];
} opool__heap_hot;

OPOOL_API void *opool__heap_alloc_slow(opool_heap *h, size_t size);
OPOOL_API opool_status opool__heap_free_slow(opool_heap *h, void *ptr);
OPOOL_API void opool__heap_page_freed(opool_heap *h, opool__hpage *pg);

/* The page set's home slot of a page address (the lookup probes on from it). */
static inline uint32_t opool__heap_home(uintptr_t page, uint32_t mask) {
    return (uint32_t)(((uint64_t)page * 0x9E3779B97F4A7C15u) >> 32) & mask;
}

/* The block index of offset off (< 2^16) from block 0 in *j; false when off
 * is not a multiple of the block size. recip = ceil(2^32 / size) with size <
 * 2^14 makes the high half of off * recip the quotient, and the low half
 * below recip exactly when the remainder is 0. */
static inline bool opool__hpage_index(const opool__hpage *pg, uintptr_t off, uint32_t *j) {
    uint64_t q = (uint64_t)off * pg->recip;
    *j = (uint32_t)(q >> 32);
    return (uint32_t)q < pg->recip;
}

static inline void *opool_heap_alloc(opool_heap *h, size_t size) {
    opool__heap_hot *c = (opool__heap_hot *)(void *)h;
    /* size 0 wraps to SIZE_MAX: out of line, as are fallback sizes */
    if (OPOOL_UNLIKELY(c == NULL || size - 1 >= c->small_max)) return opool__heap_alloc_slow(h, size);
    opool__hclass_hot *k = &c->cls[c->class_of[(size + 7) >> 3]];
    opool__hpage *pg = k->page;
    void **b = (void **)pg->free;
    if (OPOOL_UNLIKELY(b == NULL)) return opool__heap_alloc_slow(h, size);
    pg->free = *b;
    uint32_t j;
    opool__hpage_index(pg, (uintptr_t)b - pg->block0, &j);
    ((uint64_t *)(void *)(pg + 1))[j >> 6] |= (uint64_t)1 << (j & 63);
    pg->live++;
    if (++k->live > k->high_water) k->high_water = k->live;
    k->allocs++;
    k->requested += size;
    return b;
}

static inline opool_status opool_heap_free(opool_heap *h, void *ptr) {
    opool__heap_hot *c = (opool__heap_hot *)(void *)h;
    uintptr_t a = (uintptr_t)ptr, base = a & ~(uintptr_t)(OPOOL_HEAP_PAGE - 1);
    /* base 0 (NULL among others) would match an empty entry: out of line */
    if (OPOOL_UNLIKELY(c == NULL || c->slow || base == 0 ||
                       c->pages[opool__heap_home(base, c->pages_mask)].key != base))
        return opool__heap_free_slow(h, ptr);
    opool__hpage *pg = (opool__hpage *)base;
    uintptr_t off = a - pg->block0; /* below block 0 wraps above carved */
    if (OPOOL_UNLIKELY(off >= pg->carved)) return opool__heap_free_slow(h, ptr);
    uint32_t j;
    bool start = opool__hpage_index(pg, off, &j);
    uint64_t *w = (uint64_t *)(void *)(pg + 1) + (j >> 6), bit = (uint64_t)1 << (j & 63);
    if (OPOOL_UNLIKELY(!start || !(*w & bit)))
        return opool__heap_free_slow(h, ptr); /* inside a block, or free: rejected there */
    *w &= ~bit;
    *(void **)ptr = pg->free;
    pg->free = ptr;
    opool__hclass_hot *k = &c->cls[pg->cls];
    k->live--;
    if (OPOOL_UNLIKELY(--pg->live == pg->slow_at))
        opool__heap_page_freed(h, pg); /* list upkeep */
    else
        k->page = pg; /* the next alloc of the class gets this block back */
    return OPOOL_OK;
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* OPOOL_HEAP_H */
