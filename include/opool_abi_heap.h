/*
 * opool_abi_heap.h -- NOT API, BUT ABI: the private layout behind the inline
 * fast paths of opool_heap.h (alloc, free, realloc of a class block), and
 * those paths' bodies. opool_abi.h is the core pool's part and explains how
 * an inline function is also exported; opool_abi_mt.h is the concurrent
 * pool's.
 *
 * Do not include this file yourself and do not use anything in it:
 * opool_heap.h includes it at its end, and every name here may change in any
 * release. It is installed because inline code compiled into your program
 * reads these structs directly: changing any layout here, or the contract of
 * a function declared here, breaks binaries built against an older copy of
 * this header (bump the SONAME then).
 *
 * LICENSE: zlib (see LICENSE)
 */
#ifndef OPOOL__ABI_HEAP_H
#define OPOOL__ABI_HEAP_H

#include "opool_heap.h" /* when included on its own: the declarations come first */

/* C's casts in the inline bodies: see opool_abi.h. Popped at the end. */
#if defined(__cplusplus) && defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wold-style-cast"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The header at the start of every 64 KiB page of blocks; the live bitmap
 * follows it, in uint64_t words: one bit per granule of the page, a granule
 * being the largest power of two that divides the block size, at most 128
 * (the block itself for 16, 32, 64; 16 bytes for 48), placed by
 * opool__hpage_word. A granule's bit is set exactly when a live block
 * starts there, so a free finds "a live block starts at this offset" from
 * the offset alone: no division, no bounds (the bitmap covers the whole
 * page, its header included, whose bits stay clear). Only pages that serve
 * a class have one that the heap reads (they alone are in its page set). */
typedef struct opool__hpage {
    void *free;       /* free blocks, linked through their first bytes */
    uintptr_t block0; /* the address of block 0 (in the empty-page cache: when it went there) */
    uint32_t size;    /* block size */
    uint16_t gmask;   /* granule - 1: an offset with one of these bits set starts no block */
    uint8_t gshift;   /* log2 of the granule */
    uint8_t spare8;
    uint32_t toslow;  /* blocks handed out (live) - slow_at, mod 2^32: a free that brings it
                         to 0 goes out of line (list upkeep) */
    uint32_t slow_at; /* live = toslow + slow_at */
    uint32_t carved;  /* bytes from block0 handed out at least once; blocks after are fresh */
    uint32_t end;     /* bytes from block0 to the end of the last block */
    struct opool__hpage *next, *prev; /* the class's listed pages, or the empty-page cache */
    uint32_t region;                  /* index of the region holding the page */
    uint8_t cls;                      /* class index */
    uint8_t flags;                    /* OPOOL__HPAGE_RESERVED, _LISTED, _ZERO (opool_heap.c) */
    uint16_t spare;
#if UINTPTR_MAX == 0xFFFFFFFFu
    uint32_t pad32[4]; /* 4-byte pointers: the four above take 16 bytes less; still 64 */
#endif
} opool__hpage;

/* What inline allocs and frees update of a class. Its live count is
 * high_water - room: an alloc takes one from room, or raises high_water when
 * room is 0; a free gives one back to room (one counter per call, not two).
 * Its allocations and the bytes they asked for are allocs and requested plus
 * what recent ones added to recent: one addition per alloc, of the size plus
 * one in bit OPOOL__HRECENT_COUNT (sizes are at most 2^15, so the bytes of
 * 2^23 allocs stay below that bit); when the count reaches 2^23, bit 63, the
 * alloc moves recent into allocs and requested, out of line. */
typedef struct opool__hclass_hot {
    opool__hpage *page; /* the current page, whose free list allocs pop: the listed page
                           freed into last; never NULL */
    uint32_t room, high_water;
    uint64_t recent;
    uint64_t allocs, requested;
} opool__hclass_hot;
#define OPOOL__HRECENT_COUNT 40

typedef struct opool__hentry { /* an entry of the heap's hash maps; key 0 = empty */
    uintptr_t key;
    size_t size; /* large blocks: the size asked for */
} opool__hentry;

/* The most classes a heap has: the desc's, and the heap's own above them
 * (src/opool_heap.c). */
#define OPOOL__HEAP_CLASSES 88

/* The start of every opool_heap. */
typedef struct opool__heap_hot {
    const uint8_t *class_of;    /* [small_max / 8 + 1]: the class of sizes (8k - 7 .. 8k] */
    const opool__hentry *pages; /* the page set: open addressing, key = page address; one
                                   empty entry while every free and realloc runs out of line
                                   (poisoning, a checker, an open episode) */
    uint32_t pages_mask;        /* its capacity - 1 */
    uint32_t small_max;         /* inline allocs for sizes 1..small_max; 0: none */
    uintptr_t span_lo;          /* the heap's reserved address range, if any: its pages */
    uintptr_t span_len;         /* [span_lo, span_lo + span_len) are readable and the heap's
                                   own; 0 while every free runs out of line */
    opool__hclass_hot cls[OPOOL__HEAP_CLASSES];
} opool__heap_hot;

/* The out-of-line paths of the inline heap alloc and free, and the page-list
 * upkeep of a free (src/opool_heap.c). Exported: ABI, not API. */
OPOOL_API void *opool__heap_alloc_slow(opool_heap *h, size_t size);
OPOOL_API opool_status opool__heap_free_slow(opool_heap *h, void *ptr);
OPOOL_API void opool__heap_page_freed(opool_heap *h, opool__hpage *pg);
OPOOL_API void *opool__heap_realloc_slow(opool_heap *h, void *ptr, size_t size);
OPOOL_API void opool__heap_fold_recent(opool__hclass_hot *k);

/* The page set's home slot of a page address (the lookup probes on from it). */
static inline uint32_t opool__heap_home(uintptr_t page, uint32_t mask) {
    return (uint32_t)((page * UINT64_C(0x9E3779B97F4A7C15)) >> 32) & mask;
}

/* The block index of offset off (< 2^16) from block 0 in *j; false when off
 * is not a multiple of the block size. recip = ceil(2^32 / size) with size
 * <= 2^15 makes the high half of off * recip the quotient, and the low half
 * below recip exactly when the remainder is 0: the rounding adds less than
 * 2^16 + size to the low half, and recip is at least 2^17. (The
 * out-of-line paths'.) */
static inline bool opool__hpage_index(uint32_t recip, uintptr_t off, uint32_t *j) {
    uint64_t q = off;
    q *= recip;
    *j = (uint32_t)(q >> 32);
    return (uint32_t)q < recip;
}

/* The live-bitmap word of the granule at address a of page pg, and in *g
 * its bit there. Granule g = offset >> gshift is bit g / words of word
 * g % words (words = 1024 >> gshift): the bit is the offset's top six bits,
 * the word its bits gshift .. 9. So blocks next to each other have their
 * bits in different words, and a run of allocs or frees in address order
 * does not wait on one word's last store at every step. */
static inline uint64_t *opool__hpage_word(const opool__hpage *pg, uintptr_t a, uint32_t *g) {
    uint32_t off = a & (OPOOL_HEAP_PAGE - 1); /* no cast: uintptr_t may be uint32_t */
    *g = off / (OPOOL_HEAP_PAGE / 64);
    return (uint64_t *)(uintptr_t)(pg + 1) + ((a % (OPOOL_HEAP_PAGE / 64)) >> pg->gshift);
}

/* Whether a live block of page pg starts at address a (of that page). */
static inline bool opool__hpage_live(const opool__hpage *pg, uintptr_t a) {
    uint32_t g;
    const uint64_t *w = opool__hpage_word(pg, a, &g);
    return !(a & pg->gmask) && ((*w >> (g & 63)) & 1);
}

/* The statistics of an alloc of size bytes from class k (what the inline and
 * the out-of-line alloc share). */
static inline void opool__hclass_count_alloc(opool__hclass_hot *k, size_t size) {
    if (k->room != 0)
        k->room--;
    else
        k->high_water++;
    if (OPOOL_UNLIKELY((int64_t)(k->recent += size + ((uint64_t)1 << OPOOL__HRECENT_COUNT)) < 0))
        opool__heap_fold_recent(k);
}

/* ---- a class block's alloc and free, in steps --------------------------
 * Each step has one body, here: the inline paths below and the out-of-line
 * ones of src/opool_heap.c (which add the checks and hooks around them)
 * both call it. */

/* The head of pg's free list, popped; NULL when the list is empty. */
static inline void *opool__hpage_pop(opool__hpage *pg) {
    void **b = (void **)pg->free;
    if (OPOOL_LIKELY(b != NULL)) pg->free = *b;
    return b;
}

/* The next block of pg never handed out; NULL when every block has been. */
static inline void *opool__hpage_carve(opool__hpage *pg) {
    if (OPOOL_UNLIKELY(pg->carved >= pg->end)) return NULL;
    void *b = (void *)(pg->block0 + pg->carved);
    pg->carved += pg->size;
    return b;
}

/* Block b of pg handed out: its live bit set, the page's count raised. */
static inline void opool__hpage_lent(opool__hpage *pg, void *b) {
    uint32_t g;
    uint64_t *w = opool__hpage_word(pg, (uintptr_t)b, &g);
    *w |= (uint64_t)1 << (g & 63);
    pg->toslow++;
}

/* Block b of pg given back, if a live block of pg starts at b: its live
 * bit cleared, b on top of the page's free list (linked through its first
 * bytes), true. False, and nothing changed, otherwise. */
static inline bool opool__hpage_take_back(opool__hpage *pg, void *b) {
    uint32_t g;
    uint64_t *w = opool__hpage_word(pg, (uintptr_t)b, &g), v = *w;
    if (OPOOL_UNLIKELY(((uintptr_t)b & pg->gmask) || !((v >> (g & 63)) & 1))) return false;
    *w = v & ~((uint64_t)1 << (g & 63));
    *(void **)b = pg->free;
    pg->free = b;
    return true;
}

/* After a block of pg went back to class k: list upkeep when the page's
 * count reaches its mark, else pg becomes the class's current page (the
 * next alloc of the class gets the block back). */
static inline void opool__hpage_after_free(opool_heap *h, opool__hclass_hot *k, opool__hpage *pg) {
    if (OPOOL_UNLIKELY(--pg->toslow == 0))
        opool__heap_page_freed(h, pg);
    else
        k->page = pg;
}

OPOOL__HOT void *opool__heap_alloc_inline(opool_heap *h, size_t size) {
    opool__heap_hot *c = (opool__heap_hot *)(void *)h;
    /* size 0 wraps to SIZE_MAX: out of line, as are fallback sizes */
    if (OPOOL_UNLIKELY(c == NULL || size - 1 >= c->small_max))
        return opool__heap_alloc_slow(h, size);
    opool__hclass_hot *k = &c->cls[c->class_of[(size + 7) >> 3]];
    opool__hpage *pg = k->page;
    void *b = opool__hpage_pop(pg);
    if (OPOOL_UNLIKELY(b == NULL) && (b = opool__hpage_carve(pg)) == NULL)
        return opool__heap_alloc_slow(h, size);
    opool__hpage_lent(pg, b);
    opool__hclass_count_alloc(k, size);
    return b;
}

OPOOL__HOT opool_status opool__heap_free_inline(opool_heap *h, void *ptr) {
    opool__heap_hot *c = (opool__heap_hot *)(void *)h;
    uintptr_t a = (uintptr_t)ptr, base = a - (a & (OPOOL_HEAP_PAGE - 1));
    /* a page of the reserved range, else of the page set; base 0 (NULL among others)
     * would match an empty entry: out of line */
    if (OPOOL_UNLIKELY(c == NULL || base == 0 ||
                       (a - c->span_lo >= c->span_len &&
                        c->pages[opool__heap_home(base, c->pages_mask)].key != base)))
        return opool__heap_free_slow(h, ptr);
    opool__hpage *pg = (opool__hpage *)base;
    if (OPOOL_UNLIKELY(!opool__hpage_take_back(pg, ptr)))
        return opool__heap_free_slow(h, ptr); /* not a live block's start: rejected there */
    opool__hclass_hot *k = &c->cls[pg->cls];
    k->room++;
    opool__hpage_after_free(h, k, pg);
    return OPOOL_OK;
}

/* A live block of h that a resize keeps in its class comes back as it is,
 * with no call; everything else runs out of line. */
OPOOL__HOT void *opool__heap_realloc_inline(opool_heap *h, void *ptr, size_t size) {
    opool__heap_hot *c = (opool__heap_hot *)(void *)h;
    uintptr_t a = (uintptr_t)ptr, base = a - (a & (OPOOL_HEAP_PAGE - 1));
    /* size 0 wraps to SIZE_MAX, ptr NULL gives base 0: both out of line */
    if (OPOOL_UNLIKELY(c == NULL || base == 0 || size - 1 >= c->small_max ||
                       (a - c->span_lo >= c->span_len &&
                        c->pages[opool__heap_home(base, c->pages_mask)].key != base)))
        return opool__heap_realloc_slow(h, ptr, size);
    const opool__hpage *pg = (const opool__hpage *)base;
    if (OPOOL_UNLIKELY(!opool__hpage_live(pg, a) || c->class_of[(size + 7) >> 3] != pg->cls))
        return opool__heap_realloc_slow(h, ptr, size);
    return ptr;
}

#define opool_heap_alloc(h, size) opool__heap_alloc_inline(h, size)
#define opool_heap_free(h, ptr) opool__heap_free_inline(h, ptr)
#define opool_heap_realloc(h, ptr, size) opool__heap_realloc_inline(h, ptr, size)

#ifdef __cplusplus
} /* extern "C" */
#endif

#if defined(__cplusplus) && defined(__clang__)
#pragma clang diagnostic pop
#endif

#endif /* OPOOL__ABI_HEAP_H */
