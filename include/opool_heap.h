/*
 * opool_heap.h -- a malloc-shaped heap of size classes in 64 KiB pages (C11).
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
 * Each size class is a list of 64 KiB pages aligned to 64 KiB, each page cut
 * into equal blocks. The heap is its own small allocator, not a set of
 * opool pools: its blocks are plain pointers (no handles, no generations),
 * and what it shares with opool.h is the conventions (desc, statuses, the
 * allocator and report callbacks, the poison pattern). A page starts with
 * a small header (its class, its free list) and a live bitmap; the blocks
 * follow, with no header in front of them. The bitmap has one bit per
 * granule of the page, the granule being the largest power of two that
 * divides the class size, at most 128 bytes (64 bytes for the 64-byte
 * class, 16 for the 48-byte one), and a bit is set exactly where a live
 * block starts: so the header and bitmap take 64 + 8192 / granule bytes
 * (192 for 64-byte blocks, 576 for 48-byte ones), and a page holds as many
 * blocks as fit in the rest. A free block holds the link of its page's
 * free list in its own first bytes. So:
 *   - alloc: one table lookup from the size to the class, then a pop from the
 *     free list of the class's current page, or the page's next block never
 *     handed out (a bump pointer). O(1).
 *   - free: the page is the pointer rounded down to 64 KiB; the heap checks
 *     that page is one of its own (never reading memory it does not own):
 *     on 64-bit Linux, with the system's memory, by one comparison with the
 *     address range the heap reserved at create (MEMORY below); else, and
 *     past that range, in a hash set of the pages serving its classes. Then
 *     that a live block starts at the pointer: its offset in the page is a
 *     multiple of the granule and the bitmap's bit for it is set (no
 *     division; a page of the range that serves no class has no bit set).
 *     O(1) expected.
 *   - realloc to a size of the block's own class: the same checks, and the
 *     block comes back as it is.
 *   - per block, no overhead; per page, the header of 64 bytes and the
 *     bitmap (64 to 1024 bytes: 128 for 64-byte blocks, as one bit per
 *     block would take).
 * alloc, free and realloc are inline: the common case (a block of the
 * class's current page, a live block of a page of the heap, a resize within
 * the class) is a short inline path with no call; everything else
 * (a full current page, growth, fallback blocks, every misuse, poisoning, a
 * memory checker) runs out of line.
 * Above the desc's largest class the heap has classes of its own, so that
 * no size falls between the classes and the runs below, where a block of
 * a few hundred bytes would take a page: 16, 24, 32, 48, 64, 96, 128, 192,
 * 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288,
 * 16384, 24576 and 32640 (neighbours at most 1.5x apart; 32640 is the
 * largest size two of which fit a page), those above the desc's largest.
 * So 64 blocks of any size up to the runs' largest hold at most twice
 * their bytes plus a page, whatever classes the desc names. Their blocks
 * are counted as large blocks in the statistics (the desc's classes are
 * the ones listed), grow as large blocks do, also with OPOOL_HEAP_FIXED,
 * and none exist with OPOOL_HEAP_NO_FALLBACK. The default classes end at
 * 32640 and need none.
 * A request larger than the largest class is a large block, tracked in a
 * hash map so that it can be freed and checked the same way (O(1)
 * expected, out of line). Up to 16 pages (1 MiB), in a heap that reserved
 * an address range (MEMORY below), it is a run of whole pages of that
 * range, aligned to 64 KiB, with no header: taken from the top of the range
 * downward while the class regions grow from its bottom. A freed run waits
 * in a bin of its page count for the next block of as many pages (the
 * newest first; no split, no merge), and a realloc within its pages keeps
 * it where it is. Larger blocks of a heap with the system's memory each
 * have a mapping of their own (mmap, VirtualAlloc), unmapped at their free,
 * and a realloc that grows one moves its pages, not its bytes, where the
 * system can (mremap on Linux). The rest (a heap's large blocks when the
 * desc names an allocator, and up to 1 MiB without the range) go to the
 * desc's allocator, one by one. OPOOL_HEAP_NO_FALLBACK makes every request
 * above the largest class fail instead.
 *
 * A heap grows, as malloc does: a NULL desc, a zero desc and any desc whose
 * flags lack OPOOL_HEAP_FIXED give one whose full class adds a page, and
 * whose classes take no page until their first alloc (a heap that served
 * one small block holds one page); blocks_per_class blocks per class
 * (rounded up to whole pages) are reserved at create and never leave their
 * class. An alloc fails only when the
 * allocator refuses memory. OPOOL_HEAP_GROW asks for this default and
 * changes nothing. With OPOOL_HEAP_FIXED (the opt-in) each class holds
 * exactly its reservation (one page when blocks_per_class is 0), and an
 * alloc of a full class fails: a budget.
 *
 * ============================================================================
 * MEMORY: WHERE PAGES COME FROM AND WHEN THEY GO BACK
 * ============================================================================
 * Pages come from regions of up to 64 pages (4 MiB), each asked for in one
 * request: from the system (mmap on Linux; the C library's aligned
 * allocation elsewhere) when the desc names no allocator, else from
 * desc.allocator, which then gets every byte the heap holds (regions, its
 * bookkeeping, large blocks). create asks for the reservation's pages, if
 * any, in as few regions as hold them; a growing heap's first region has
 * one page, its next as many pages as the heap holds (at least 4), so a
 * heap of N pages made about
 * log2(N) requests until regions reach 64 pages, then one per 4 MiB. If the
 * allocator refuses a region, the heap asks for a single page. On 64-bit
 * Linux and Windows a heap with the system's memory reserves 4 GiB of
 * address space when it first needs a page (mmap PROT_NONE, or VirtualAlloc
 * MEM_RESERVE: no memory, nothing counted against overcommit) and takes its
 * regions from it
 * in order, each made readable and writable (mprotect, MEM_COMMIT) when
 * taken, and its runs from its top, downward; once the two meet, regions
 * are mapped one by one and large blocks go to the C library. If the
 * reservation fails, every region is. A destroyed heap leaves its range,
 * with the memory of its first 16 pages, to the next heap made (up to 4
 * ranges wait, for heaps of any thread), so that a program making and
 * dropping a heap per frame, world or request makes no system call and
 * touches no new memory for it; a heap that used more than 64 pages, runs,
 * or a memory checker unmaps its range instead, and those 16 pages, until
 * the heap uses them, are not counted in its stats. Build the library with OPOOL_HEAP_SPAN
 * defined to another multiple of 64 KiB (0: no reservation) where address
 * space is scarce or costly: some consoles and sandboxes, or qemu-user,
 * whose bookkeeping of every reserved page makes 4 GiB per heap cost real
 * memory (make platforms builds aarch64 with 256 MiB).
 * A grown page that empties leaves its class (each class keeps one empty
 * page as a spare, so a class at the edge of a page does not trade pages
 * at every step) for a cache of empty pages shared by the whole heap: the
 * next class that needs a page, any class, takes the cache's newest page
 * before any new memory. Memory goes back with hysteresis, never once per
 * emptied page: at each page event (a page emptied into the cache, or a
 * page taken), the pages that stayed in the cache unused for a second or more
 * go back, oldest first: with the system's memory, their bytes go back at
 * once (madvise(MADV_DONTNEED) on Linux, one call per run of adjacent pages,
 * the addresses kept for later pages); a region none of whose pages is used
 * or cached goes back whole (munmap, or desc.allocator's free), except one
 * of the reserved range, whose memory goes back the same way while its
 * addresses stay the heap's (its pages vacant, taken before any new
 * region); destroy unmaps the range. So a
 * fill/empty cycle asks for nothing after its first round, and an idle heap
 * keeps its cache until its next page event. calloc does not write blocks
 * known to be zero (never handed out, in memory fresh from the system).
 * Free runs keep their memory while they wait, with the same hysteresis as
 * the cache: at a page event or a run freed, at most once a second, the
 * free runs that waited a second or more give it back (madvise,
 * MEM_DECOMMIT). Free runs of 4 pages or more also keep at most 4 MiB
 * beyond the bytes of the live runs: past that, the oldest give theirs
 * back at once (a buffer growing by realloc leaves a run of every size
 * behind it; smaller runs are what a program frees and takes again). A run
 * keeps its addresses, and reads zero when taken again; the run area
 * never shrinks (its size is the most runs of each page count there ever
 * were at once, the bins reuse them). When it grows, the memory of as many
 * empty pages goes back first, the cache's oldest and then the classes'
 * spares, so that empty pages and new runs are not resident at once (a
 * program in its steady state no longer grows the run area).
 * A pointer into a cached page, a page given back or a region's unused part
 * is no block of the heap: OPOOL_EINVAL, as below.
 *
 * Default classes (bytes): 16 to 128 in steps of 16, then eight per doubling
 * up to 2048 (steps of 16 to 256, 32 to 512, 64 to 1024, 128 to 2048), so
 * that rounding up costs at most 12.5% from 128 to 2048 bytes; then four
 * per doubling up to 32640 (2560, 3072, 3584, 4096, ..., 8192, 10240, ...,
 * 28672, 32640), but eight from 4096 to 8192 (4608, 5120, ..., 7680): at
 * most 25% (12.5% from 4 to 8 KiB). Besides, 1088, 2176, 4352 and 8448,
 * where a buffer of 1, 2, 4 or 8 KiB and its header of up to 1/16 land (a
 * 1032-byte block takes 1088, a 4209-byte database page 4352). A page of
 * 64 KiB holds 15 blocks of 4 KiB, 3 of 16 KiB, 2 of 32640 bytes (the rest
 * of its last 4 KiB pages never touched). 64 classes.
 * Blocks are aligned to 16 bytes when their class size is a multiple of
 * 16, else to 8; runs to 64 KiB, other large blocks to 16.
 *
 * ============================================================================
 * ERRORS
 * ============================================================================
 * Misuse never corrupts the heap:
 *   - freeing (or reallocating, or asking the size of) a pointer the heap did
 *     not hand out, or a pointer inside a block: OPOOL_EINVAL;
 *   - freeing a block twice: OPOOL_ESTALE. (A large block, a run or the
 *     allocator's, leaves the heap when freed, and so does a class block whose
 *     page emptied and left its class for the cache: freeing it again is
 *     OPOOL_EINVAL, as for any pointer the heap does not hold. Once that page
 *     serves a class again, a stale pointer may be the start of a block
 *     handed out since: freeing it then frees that block, as with any
 *     allocator; ASan reports its owner's next use of it, OPOOL_POISON its
 *     owner's next write.)
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

/* An opaque heap, used through opool_heap *. */
typedef struct opool_heap opool_heap;

/* Flags of opool_heap_desc. Without OPOOL_HEAP_FIXED a full class adds a page
 * instead of failing (the default; OPOOL_HEAP_GROW asks for it and changes
 * nothing); a class keeps at most one empty grown page and passes the others
 * to the heap's cache as they empty (MEMORY above). OPOOL_HEAP_FIXED: a full
 * class fails. OPOOL_POISON
 * from opool.h also applies: free blocks hold 0x1deadb0b (except their first
 * pointer-sized bytes, which hold the free-list link and are not checked),
 * checked when reused. So does OPOOL_REPORT_MISUSE: the default report
 * prints every rejected free (a double free, a pointer to no block's start),
 * as OPOOL_MISUSE does for every heap (opool.h, MISUSE); and
 * OPOOL_REPORT_UNRATIONED (opool.h, EXHAUSTION). */
enum {
    OPOOL_HEAP_NO_FALLBACK = 1u << 8, /* larger than the largest class: fail (no run, no
                                         allocator) */
    OPOOL_HEAP_GROW = 1u << 9,        /* a full class adds pages: the default, accepted and
                                         kept so that code that asks for it still reads right */
    OPOOL_HEAP_FIXED = 1u << 10,      /* no growth: each class holds its blocks_per_class */
    OPOOL_HEAP_ARENA = 1u << 11       /* an arena: meant to be dropped whole, so
                                         opool_heap_destroy reports no leak */
};

/* Limits: the most size classes a heap may have, the largest class size, and
 * the bytes per page of blocks (a page header of 64 bytes plus its live
 * bitmap come first: HOW IT WORKS). */
#define OPOOL_HEAP_MAX_CLASSES 64
#define OPOOL_HEAP_MAX_CLASS_SIZE 32768u /* the largest class size accepted */
#define OPOOL_HEAP_PAGE 65536u           /* bytes per page of blocks */

/* Zero (or a NULL desc) gives the defaults; copied at create. class_count must
 * be 0 when class_sizes is NULL, else 1 .. OPOOL_HEAP_MAX_CLASSES.
 * blocks_per_class is rounded up to whole pages. report runs inside the call
 * that found the finding, on its thread. */
typedef struct opool_heap_desc { /* zero (or a NULL desc) = sensible defaults */
    const uint32_t *class_sizes; /* ascending multiples of 8, <= OPOOL_HEAP_MAX_CLASS_SIZE;
                                    NULL = the defaults above (copied: need not outlive create) */
    uint32_t class_count;        /* entries in class_sizes, <= OPOOL_HEAP_MAX_CLASSES */
    uint32_t blocks_per_class;   /* blocks reserved per class at create; 0 = none, a class's
                                    first page at its first alloc (OPOOL_HEAP_FIXED: one
                                    page each) */
    uint32_t flags;              /* OPOOL_HEAP_NO_FALLBACK | OPOOL_HEAP_FIXED |
                                    OPOOL_HEAP_ARENA | OPOOL_POISON | OPOOL_REPORT_MISUSE |
                                    OPOOL_REPORT_UNRATIONED;
                                    0 = a heap that grows (as a NULL desc) */
    /* Findings, with the heap and the pointer concerned (NULL =
     * opool_heap_default_report, which says what each does by default):
     *   OPOOL_EINVAL  free, realloc or usable_size of a pointer that is not a
     *                 block start of the heap (interior, foreign, a fallback
     *                 block already freed); counted in rejected.
     *   OPOOL_ESTALE  the same calls on a class block already free (a double
     *                 free); counted in rejected.
     *   OPOOL_EFULL   an alloc failed because a class was full (with
     *                 OPOOL_HEAP_FIXED) or the allocator failed: an exhaustion
     *                 episode, see opool_heap_create; ptr NULL.
     *   OPOOL_EWRITE_AFTER_FREE  OPOOL_POISON: a free block's pattern changed,
     *                 found when it is reused. */
    void (*report)(opool_heap *h, opool_status what, const void *ptr, void *user);
    void *user;
    opool_allocator allocator; /* regions of pages and large blocks; zero = regions, runs
                                  and blocks above 1 MiB from the system, the rest from
                                  the C library */
    /* Optional: the heap's name in every message of the default report (kept
     * as a pointer, not copied: it must outlive the heap). */
    const char *name;
} opool_heap_desc;

/* One size class's figures, in opool_heap_stats.classes. */
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

/* Filled by opool_heap_get_stats. Versioned: fields are only ever appended;
 * OPOOL_HEAP_STATS_VERSION is the version of this release. The first
 * class_count entries of classes are filled. */
typedef struct opool_heap_stats { /* versioned: fields are only ever appended */
    uint32_t version;             /* OPOOL_HEAP_STATS_VERSION */
    uint32_t class_count;
    uint64_t large_live;  /* blocks above the desc's largest class (of the heap's own
                             classes, runs and the allocator's), live */
    uint64_t large_bytes; /* their bytes: the size asked for, or of the heap's own classes
                             the class size */
    uint64_t rejected;    /* bad frees, reallocs and size queries */
    size_t bytes;         /* memory the heap holds, bookkeeping included (with memory
                             from the system on Linux, the pages of its regions that it
                             has not used yet or gave back are not held; runs count in
                             whole pages, free ones until their memory goes back) */
    opool_heap_class_stats classes[OPOOL_HEAP_MAX_CLASSES];
} opool_heap_stats;
#define OPOOL_HEAP_STATS_VERSION 1u

/* Create a heap and reserve blocks_per_class blocks for each class (none
 * when 0: a class takes its first page at its first alloc; one page each
 * with OPOOL_HEAP_FIXED). desc may be NULL (defaults: the default classes,
 * no page to start, growing). OPOOL_EINVAL: out NULL, class sizes not
 * ascending, not multiples of 8, zero or too large, class_count 0 with
 * class_sizes set, nonzero without, or above OPOOL_HEAP_MAX_CLASSES, unknown
 * flags, OPOOL_HEAP_FIXED with OPOOL_HEAP_GROW (a contradiction), an
 * allocator with only one of alloc/free, or a reservation that overflows
 * (more than 2^32 - 1 blocks in a class once rounded up to pages, or more
 * bytes than the address space).
 * OPOOL_ENOMEM: the allocator failed (nothing leaks). *out NULL on failure.
 * Exhaustion follows opool.h's rule (EXHAUSTION) for each class on its own:
 * a class's episode is reported at its 1st, 2nd, 4th, 8th... failed alloc
 * and ends at a free that leaves at most blocks - ceil(blocks / 4) of its
 * blocks live. Large blocks have one episode too (the allocator refused
 * one, and no run could serve it), whose capacity is the number of large
 * blocks live when it opened. While any episode is
 * open, every free runs out of line.
 * Cost: one request per region of up to 64 pages of the reservation, plus a
 * few; O(pages). Without a reservation: one allocation, no system call
 * and no page of memory, O(classes). Thread-safety: any thread. */
OPOOL_API OPOOL_NODISCARD opool_status opool_heap_create(opool_heap **out,
                                                         const opool_heap_desc *desc);

/* Release every region and every large block at once (live blocks included:
 * there are no destructors). Blocks still live are reported first, once:
 * report(h, OPOOL_ELEAK, NULL, user); the default prints "opool: heap ...
 * (0x...): leak: destroyed with N blocks live (B bytes)". Not for a heap
 * made with OPOOL_HEAP_ARENA: dropping its blocks whole is what it is for.
 * NULL-safe; cannot fail. O(regions + large blocks + classes).
 * Thread-safety: per heap (one thread at a time, as every call below). */
OPOOL_API void opool_heap_destroy(opool_heap *h);

/* Free every block at once, as if each had been freed, and keep the heap
 * for more: an arena's reset (a frame's, a request's, a level's). Every
 * pointer handed out before is then a pointer the heap does not hold:
 * free, realloc and usable_size reject it with OPOOL_EINVAL (until an
 * alloc hands out a block at the same address, as after any free). Each
 * class keeps its reserved pages and one grown page, empty; its other
 * pages go to the heap's cache (MEMORY), free runs to their bins, the
 * allocator's large blocks back to it. Statistics: nothing live; the
 * counts of allocations and the high-water marks stay; every exhaustion
 * episode ends. OPOOL_OK, or OPOOL_EINVAL when h is NULL. O(pages + large
 * blocks), plus the live bitmap of each page. Thread-safety: per heap. */
OPOOL_API opool_status opool_heap_clear(opool_heap *h);

/* A block of at least size bytes (size 0 counts as 1), from the smallest class
 * that holds it, or above the largest class a large block (a run, else the
 * allocator's: HOW IT WORKS). Reuse is
 * LIFO: the block of a class freed last is handed out next, unless that free
 * gave its emptied page back. Contents are undefined (the previous block's
 * bytes, or the poison pattern). NULL when h is NULL, the class is full and
 * cannot grow (OPOOL_HEAP_FIXED, or the allocator refused a page: counted in
 * the class's failed_allocs), a large block cannot be had, or the size
 * is above the largest class and OPOOL_HEAP_NO_FALLBACK is set (not counted, not
 * reported). Reports OPOOL_EFULL (as opool.h's EXHAUSTION says, except the
 * no-fallback case) and OPOOL_EWRITE_AFTER_FREE under OPOOL_POISON. O(1),
 * plus O(regions) when it takes a page (the scan for a vacant page, the
 * pages going back), O(classes) and system calls when a new run gives
 * empty pages back (MEMORY); inline when the class's current page has a free block
 * or one never handed out, out of line otherwise (the next page, a page
 * from the cache or a region, a large block). Thread-safety: per heap. */
OPOOL_API void *opool_heap_alloc(opool_heap *h, size_t size);

/* opool_heap_alloc(h, n * size) zero-filled. NULL as opool_heap_alloc, and
 * (not reported) when n * size overflows. O(1) plus the fill, which is
 * skipped for a block never handed out of memory fresh from the system.
 * Out of line. Thread-safety: per heap. */
OPOOL_API void *opool_heap_calloc(opool_heap *h, size_t n, size_t size);

/* Resize: ptr NULL is alloc; size 0 frees ptr and returns NULL. A block that
 * stays in its class is returned as is, and so is a large block asked to
 * shrink to a size still above the largest class (its usable size does not
 * change), and a run growing within its pages (its usable size becomes the
 * new size); a block with a mapping of its own (above 1 MiB: HOW IT WORKS)
 * growing stays in place within its last 4 KiB, else its pages move
 * (mremap on Linux); an allocator's large block growing to at most 1 MiB,
 * in a heap whose desc names no allocator, is resized by the C library's
 * realloc (in place when it can; where malloc aligns to 16); otherwise a
 * new block gets
 * the contents (up to the smaller size) and the old one is freed. NULL when
 * the new block cannot be had (ptr stays valid) or ptr is not a live block of h
 * (counted in rejected and reported OPOOL_EINVAL/OPOOL_ESTALE as in free;
 * nothing changes), or h is NULL (not reported). A failed new block is
 * reported as in alloc. O(1) plus the copy; inline (no call) when the
 * block stays in its class. A block never grows in place into the next
 * class: classes live in different pages. Thread-safety: per heap. */
OPOOL_API void *opool_heap_realloc(opool_heap *h, void *ptr, size_t size);

/* Free a block; an emptied grown page may go to the heap's cache. OPOOL_OK
 * (also for ptr NULL); OPOOL_EINVAL: h NULL (not reported), or ptr not the
 * start of a block of h (an interior or foreign pointer, a large block
 * already freed); OPOOL_ESTALE: ptr a class block already free. Both change
 * nothing but rejected, and are reported. O(1) expected (a run freed may
 * also give back the memory of free runs: a system call per run, each
 * after a scan of 16 bins; a block of a mapping of its own is unmapped:
 * a system call); inline when the
 * page is found at its first hash probe and the block is live; out of line
 * for large blocks, rejections, OPOOL_POISON, memory checkers, and pages
 * that need list upkeep (a full page's first free, an emptied page).
 * Thread-safety: per heap. */
OPOOL_API opool_status opool_heap_free(opool_heap *h, void *ptr);

/* Bytes usable at ptr (its class size, or for a large block the size asked
 * for). 0 when h or ptr is NULL (not reported) or ptr is not a live
 * block of h (counted in rejected, reported). O(1) expected. Thread-safety:
 * per heap. */
OPOOL_API size_t opool_heap_usable_size(const opool_heap *h, const void *ptr);

/* Fill *out. NULL-safe: out NULL does nothing, h NULL gives zeroed stats.
 * O(classes + regions). Thread-safety: per heap. */
OPOOL_API void opool_heap_get_stats(const opool_heap *h, opool_heap_stats *out);

/* The report a heap makes when its desc has none; call it from your own
 * report to keep the default for the findings you do not handle (user is
 * not used). One line on stderr, naming the heap (desc.name, if any, and
 * its address), for:
 *   OPOOL_EFULL              which class and why: "opool: heap "text" (0x...): class
 *                            of 64-byte blocks full: the allocator refused a new page:
 *                            alloc failed (1020 of 1020 live); ..." (a heap that grows),
 *                            or "...: class of 64-byte blocks full: at its fixed budget
 *                            (OPOOL_HEAP_FIXED, blocks_per_class): alloc failed ..." at
 *                            an episode's first failure, "...: still full ...: 8 allocs
 *                            failed in this episode ..." at its 2nd, 4th, 8th... (for
 *                            large blocks: "the allocator refused a large
 *                            block ...");
 *   OPOOL_EWRITE_AFTER_FREE  "opool: heap ... (0x...): write after free: block 0x... was
 *                            changed while free", then calls abort();
 * and nothing for OPOOL_ESTALE (a double free) and OPOOL_EINVAL (a pointer
 * the heap does not hold): the caller has the status. h NULL: the line
 * names no heap. Cost: one formatted write to stderr. Thread-safety: as
 * the heap's. */
OPOOL_API void opool_heap_default_report(opool_heap *h, opool_status what, const void *ptr,
                                         void *user);

#ifdef __cplusplus
} /* extern "C" */
#endif

/* The private layout and the inline bodies (ABI, not API), now that the declarations above
 * exist. */
#include "opool_abi_heap.h"

#endif /* OPOOL_HEAP_H */
