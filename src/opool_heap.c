/*
 * opool_heap.c -- a malloc-shaped heap of size classes: 64 KiB pages cut into
 * equal blocks, a free list through each page's free blocks, pages taken
 * from regions of up to 64 pages asked for in one request, emptied pages
 * kept in a heap-wide cache (see include/opool_heap.h). It shares opool.c's
 * conventions, not its pool code.
 *
 * A page is in one of three states: serving a class (in the page set: the
 * only pages whose header the heap reads through a pointer it is given),
 * cached (empty, on the heap's cache list, header kept), or vacant (never
 * used, or given back: a bit of its region's vacant set).
 *
 * Sections (grep for "==== "):
 *   ==== layout     pages, regions, classes, the heap
 *   ==== maps       open-addressing hash maps: the page set and the large blocks
 *   ==== regions    memory from the system, vacant pages, the empty-page cache
 *   ==== runs       large blocks as runs of whole pages from the top of the reserved range
 *   ==== pages      carving, growing and giving back pages
 *   ==== lookup     from a pointer to its page and block, or its large record
 *   ==== public     the API
 */
#if !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif

#include "opool_internal.h"
#include "opool_diag.h"
#include "opool_heap.h"
#include "opool_platform.h"

/* ==== layout ============================================================= */

#define OPOOL__HPAGE ((uintptr_t)OPOOL_HEAP_PAGE)

/* opool__hpage (include/opool_abi_heap.h) flags */
#define OPOOL__HPAGE_RESERVED 1u /* part of create's reservation, never given back */
#define OPOOL__HPAGE_LISTED 2u   /* on its class's list: not known to be full */
#define OPOOL__HPAGE_ZERO 4u     /* its blocks not carved yet read zero (fresh from the system) */

/* Regions: at most 64 pages (a region's vacant set is one word), at least 4
 * when the heap grows; a growing heap asks for as many pages as it holds,
 * so the number of requests grows with the logarithm of its size until
 * regions reach 4 MiB. */
#define OPOOL__REGION_MAX 64u
#define OPOOL__REGION_MIN 4u
/* The address range a heap with the system's memory reserves at create for
 * its regions (64-bit systems): a pointer in its used part is the heap's,
 * readable, at one comparison (opool__heap_hot.span_lo). Regions past it
 * are mapped one by one and found through the page set alone. 4 GiB;
 * OPOOL_HEAP_SPAN at build time sets another size (opool_heap.h). */
#if defined(OPOOL_HEAP_SPAN)
#define OPOOL__HEAP_SPAN ((size_t)(OPOOL_HEAP_SPAN))
#else
#define OPOOL__HEAP_SPAN (SIZE_MAX > 0xFFFFFFFFu ? (size_t)65536 * 65536 : 0)
#endif
_Static_assert(OPOOL__HEAP_SPAN % OPOOL_HEAP_PAGE == 0, "OPOOL_HEAP_SPAN: a multiple of 64 KiB");
/* The cache's hysteresis: a page that stayed in it this long goes back to
 * the system at the heap's next page event (opool_heap.h, MEMORY). */
#define OPOOL__HEAP_DECAY_NS ((uint64_t)1000 * 1000 * 1000)

/* Pages [0, n) of a region: the bits of a vacant set. */
#define OPOOL__REGION_ALL(n) ((n) >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << (n)) - 1)

typedef struct opool__hregion {
    char *base;      /* NULL: a free entry of the heap's array */
    uint32_t npages; /* 1 .. OPOOL__REGION_MAX */
    uint32_t held;   /* pages serving a class or cached */
    uint64_t vacant; /* bit i: page i neither serves a class nor is cached */
    uint64_t dirty;  /* vacant pages whose bytes are not known to be zero */
    uint64_t warm;   /* of which those a destroyed heap left in its span (opool__stash_take),
                        not counted as held until taken */
} opool__hregion;

_Static_assert(sizeof(opool__hpage) == 64, "the page header the manual describes");
_Static_assert(OPOOL_HEAP_PAGE <= 65536 && OPOOL_HEAP_MAX_CLASS_SIZE <= 32768,
               "opool__hpage_index: offsets below 2^16, sizes up to 2^15");

/* The rest of a class: what only the out-of-line paths use. */
typedef struct opool__hclass {
    uint32_t size;
    uint32_t recip;      /* ceil(2^32 / size) */
    uint32_t first, per; /* offset of block 0 in a page, blocks per page */
    uint32_t gshift;     /* log2 of its pages' live-bitmap granule (opool__hpage) */
    uint32_t blocks;     /* in its pages */
    opool__hpage *avail; /* listed pages (not known full); the current page is one */
    opool__hpage *spare; /* the grown page kept when it emptied, if any */
    uint64_t failed;
    opool__episode episode; /* of this class (opool_diag.h) */
} opool__hclass;

typedef struct opool__hmap {
    opool__hentry *e;
    uint32_t cap, n; /* cap: a power of two */
} opool__hmap;

/* Runs: a block above the largest class, up to OPOOL__RUN_MAX pages (1 MiB),
 * in a heap with a reserved range, is a run of whole pages taken from the top
 * of the range downward (the class regions grow from its bottom): no page
 * header, found through the large map as a block of the allocator is, and
 * outside [span, span + span_used), so the inline free never reads it as a
 * page. A freed run waits, as it is, in the bin of its page count for the
 * next block of that many pages. */
#define OPOOL__RUN_MAX 16u
/* Free runs of OPOOL__RUN_IDLE_MIN pages or more keep at most this many
 * bytes resident beyond the bytes of the live runs: past it, the oldest of
 * them give their memory back at once. A buffer growing by realloc leaves
 * a run of every size behind it, which no later block may want. Smaller
 * free runs wait for the decay: a program that frees and takes them again
 * at every step would otherwise fault their pages in every time. */
#define OPOOL__RUN_IDLE ((size_t)64 * OPOOL_HEAP_PAGE)
#define OPOOL__RUN_IDLE_MIN 4u

typedef struct opool__hrun {
    char *base;
    uintptr_t tick; /* the cache tick when it was freed */
} opool__hrun;

/* The free runs of one page count, a stack: v[0, cold) gave their memory
 * back (they read zero), v[cold, n) are resident, the newest on top. A
 * pop takes the newest; the decay gives back from the bottom. */
typedef struct opool__hrunbin {
    opool__hrun *v;
    uint32_t n, cap, cold;
    uint32_t made; /* runs of this page count, live or free: cap >= made, so a free never
                      needs memory */
} opool__hrunbin;

struct opool_heap {
    opool__heap_hot hot; /* first: the inline paths of the header read it */
    opool_heap_desc desc;
    opool_allocator mem;
    uint32_t nclasses;     /* the classes: the desc's, then the heap's own above them */
    uint32_t user_classes; /* the desc's */
    uint32_t max_size;     /* the largest class */
    size_t bytes;          /* of the block holding the heap, its classes and its own table */
    bool checker;
    opool__hmap pages; /* key: page address; mirrored in hot.pages / hot.pages_mask
                          (opool__heap_view) */
    opool__hmap large; /* key: block address; size: the size asked for */
    uint64_t large_bytes, rejected;
    size_t runs_used;    /* bytes at the top of the span given to runs, taken downward */
    size_t run_asked;    /* bytes asked for of the live runs (within large_bytes) */
    size_t run_held;     /* bytes of the runs live or free and not given back */
    size_t run_idle;     /* of which free (the bins' resident runs) */
    size_t run_idle_big; /* of which runs of OPOOL__RUN_IDLE_MIN pages or more */
    uintptr_t run_swept; /* the cache tick of the runs' last decay */
    opool__hrunbin runs[OPOOL__RUN_MAX]; /* free runs of i + 1 pages */
    size_t page_count;                   /* pages serving a class */
    bool os;                             /* regions from opool__os_map (no allocator in the desc) */
    bool span_tried; /* the span was asked for (at the first page the heap needed) */
    char *span;      /* OPOOL__HEAP_SPAN bytes reserved, or NULL; regions from its
                        start, in its first span_used bytes, never unmapped */
    size_t span_used;
    size_t span_commit;      /* its first bytes readable and writable: span_used or more, when
                                the span came from a destroyed heap (opool__stash_take) */
    uint64_t span_dirty;     /* bit i: the span's page i, of the first 64, may not read zero */
    opool__hregion *regions; /* [region_cap]; entries with base NULL are free */
    uint32_t nregions;       /* entries in use or freed, from the start */
    uint32_t region_cap;
    size_t vacant;                /* vacant pages over every region */
    opool__hpage *cache;          /* empty pages, the newest first */
    opool__hpage *cache_tail;     /* the oldest */
    size_t cached;                /* pages in the cache */
    bool hooks;                   /* poisoning or a checker: every free out of line */
    uint32_t episodes;            /* episodes open (classes and large blocks) */
    opool__episode large_episode; /* of the fallback allocator */
    uint64_t large_cap;           /* large blocks live when its episode opened */
    const opool__hclass *full;    /* the class whose OPOOL_EFULL is being reported; NULL: large */
    opool__quota quota;           /* of exhaustion reports (opool__diag_admit) */
    uint64_t leak_blocks, leak_bytes; /* the OPOOL_ELEAK being reported */
    opool__hpage none;                /* the current page of a class without one: no free block */
    /* the first tables, in the heap's own block: a heap's first pages need no allocation */
    opool__hregion region0[4];
    opool__hentry page0[16];
    opool__hclass cls[]; /* [nclasses], then the class of each size (opool__heap_hot.class_of) */
};

static const uint32_t opool__heap_default_classes[] = {
    16,   32,   48,   64,   80,    96,    112,   128,   144,   160,   176,   192,  208,
    224,  240,  256,  288,  320,   352,   384,   416,   448,   480,   512,   576,  640,
    704,  768,  832,  896,  960,   1024,  1088,  1152,  1280,  1408,  1536,  1664, 1792,
    1920, 2048, 2176, 2560, 3072,  3584,  4096,  4352,  4608,  5120,  5632,  6144, 6656,
    7168, 7680, 8192, 8448, 10240, 12288, 14336, 16384, 20480, 24576, 28672, 32640};

/* The heap's own classes: above the desc's largest class, so that no size
 * up to the largest class a page holds twice takes a page of its own (HOW
 * IT WORKS, opool_heap.h). Neighbours at most 1.5x apart; the last is the
 * largest size two of which fit a page beside its header. */
static const uint32_t opool__heap_own_classes[] = {
    16,   24,   32,   48,   64,   96,   128,  192,   256,   384,   512,  768,
    1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32640};
#define OPOOL__HEAP_OWN (sizeof opool__heap_own_classes / sizeof opool__heap_own_classes[0])
_Static_assert(OPOOL_HEAP_MAX_CLASSES + OPOOL__HEAP_OWN <= OPOOL__HEAP_CLASSES,
               "opool__heap_hot.cls holds the desc's classes and the heap's own");

/* The class of each size up to max_size: entry q for sizes (8q - 7 .. 8q]
 * (opool__heap_hot.class_of), from n ascending class sizes. */
static void opool__heap_fill_table(uint8_t *class_of, const uint32_t *size, uint32_t n) {
    for (uint32_t c = 0, q = 0; c < n; c++) {
        uint32_t upto = size[c] / 8 + 1;
        memset(class_of + q, (int)c, upto - q);
        q = upto;
    }
}

/* The table of the default classes, shared by every heap that has them (so
 * that a heap made with them writes no table of its own): written once, by
 * the first such heap. NULL while another thread is writing it. */
#define OPOOL__HEAP_DEFAULTS                                                                       \
    (sizeof opool__heap_default_classes / sizeof opool__heap_default_classes[0])
static uint8_t opool__heap_default_table[OPOOL_HEAP_MAX_CLASS_SIZE / 8 + 1];
static opool__atomic(int)
    opool__heap_default_state; /* 0: not written, 1: being written, 2: ready */

static const uint8_t *opool__heap_defaults(void) {
    int state = opool__atomic_load_acquire(&opool__heap_default_state);
    if (state == 2) return opool__heap_default_table;
    if (state == 1 ||
        !opool__atomic_cas_strong_acquire_relaxed(&opool__heap_default_state, &state, 1))
        return NULL;
    opool__heap_fill_table(opool__heap_default_table, opool__heap_default_classes,
                           (uint32_t)OPOOL__HEAP_DEFAULTS);
    opool__atomic_store_release(&opool__heap_default_state, 2);
    return opool__heap_default_table;
}

/* The bytes part of opool__hclass_hot's recent. */
#define OPOOL__HRECENT_BYTES ((((uint64_t)1) << OPOOL__HRECENT_COUNT) - 1)
_Static_assert((uint64_t)OPOOL_HEAP_MAX_CLASS_SIZE << 23 <= OPOOL__HRECENT_BYTES,
               "2^23 allocations of the largest class fit the bytes of recent");

/* An alloc set bit 63 of k->recent (2^23 allocations since the last time):
 * into the class's totals. */
void opool__heap_fold_recent(opool__hclass_hot *k) {
    k->allocs += k->recent >> OPOOL__HRECENT_COUNT;
    k->requested += k->recent & OPOOL__HRECENT_BYTES;
    k->recent = 0;
}

/* A class's live blocks (opool__hclass_hot). */
static uint32_t opool__hclass_live(const opool__hclass_hot *t) { return t->high_water - t->room; }

/* Whether class c holds its reservation only: a class of the desc's in a
 * heap with OPOOL_HEAP_FIXED (the heap's own classes grow, as large blocks
 * do). */
static bool opool__hclass_fixed(const opool_heap *h, uint32_t c) {
    return (h->desc.flags & OPOOL_HEAP_FIXED) && c < h->user_classes;
}

/* The finding of h as the one formatter of opool_diag.c prints it. */
static opool__finding opool__heap_finding(const opool_heap *h, opool_status what, const void *ptr) {
    opool__finding f = opool__finding_of(OPOOL__KIND_HEAP, what, h, h ? h->desc.name : NULL);
    f.ptr = ptr;
    f.loud = h != NULL && (h->desc.flags & OPOOL_REPORT_MISUSE);
    if (h != NULL && what == OPOOL_ELEAK) {
        f.count = h->leak_blocks;
        f.bytes = h->leak_bytes;
    }
    if (h == NULL || what != OPOOL_EFULL) return f;
    const opool__hclass *k = h->full;
    if (k != NULL) {
        f.block_size = k->size;
        f.refused = !opool__hclass_fixed(h, (uint32_t)(k - h->cls)); /* else: at its budget */
        f.failures = opool__episode_failures(&k->episode);
        f.count = opool__hclass_live(&h->hot.cls[k - h->cls]);
        f.capacity = k->blocks;
    } else {
        f.failures = opool__episode_failures(&h->large_episode);
        f.count = h->large.n;
        f.capacity = h->large_cap;
    }
    return f;
}

void opool_heap_default_report(opool_heap *h, opool_status what, const void *ptr, void *user) {
    (void)user;
    opool__finding f = opool__heap_finding(h, what, ptr);
    opool__diag_default(&f);
}

/* Exhaustion is rationed for every report alike (opool__diag_admit). */
static void opool__heap_report(const opool_heap *h, opool_status what, const void *ptr) {
    opool_heap *m = (opool_heap *)(uintptr_t)h; /* findings may come from const calls */
    opool__held outer = {0, 0};
    if (what == OPOOL_EFULL && !(h->desc.flags & OPOOL_REPORT_UNRATIONED)) {
        const opool__episode *e = h->full ? &h->full->episode : &h->large_episode;
        if (!opool__diag_admit(&m->quota, opool__episode_failures(e) == 1, &outer)) return;
    }
    if (h->desc.report)
        h->desc.report(m, what, ptr, h->desc.user);
    else
        opool_heap_default_report(m, what, ptr, h->desc.user);
    if (what == OPOOL_EFULL) opool__diag_admitted(&outer);
}

static OPOOL_NOINLINE void opool__heap_rejected(const opool_heap *h, opool_status s,
                                                const void *ptr) {
    ((opool_heap *)(uintptr_t)h)->rejected++; /* a statistic, also of const calls */
    opool__heap_report(h, s, ptr);
}

/* The page set of the inline paths: h's, or while every free and realloc must
 * run out of line (poisoning, a checker; an open episode, to see its end),
 * one that holds no page, so that their one probe misses without a test of
 * its own. */
static void opool__heap_view(opool_heap *h) {
    static const opool__hentry none = {0, 0};
    bool slow = h->hooks || h->episodes != 0;
    h->hot.pages = slow ? &none : h->pages.e;
    h->hot.pages_mask = slow ? 0 : h->pages.cap - 1;
    h->hot.span_lo = (uintptr_t)h->span;
    h->hot.span_len = slow ? 0 : h->span_used;
}

/* An alloc of class k (NULL: a large block) failed. */
static OPOOL_NOINLINE void opool__heap_failed(opool_heap *h, opool__hclass *k) {
    opool__episode *e = k ? &k->episode : &h->large_episode;
    if (k) k->failed++;
    if (opool__episode_failures(e) == 0) {
        h->episodes++;
        opool__heap_view(h);
        if (k == NULL) h->large_cap = h->large.n;
    }
    uint64_t nth = opool__episode_failed(e);
    if (nth) {
        h->full = k;
        opool__heap_report(h, OPOOL_EFULL, NULL);
    }
}

/* A block of class k (NULL: a large block) was freed: maybe the end of its
 * episode. */
static void opool__heap_settle(opool_heap *h, opool__hclass *k) {
    opool__episode *e = k ? &k->episode : &h->large_episode;
    if (opool__episode_failures(e) == 0) return;
    uint64_t live = k ? opool__hclass_live(&h->hot.cls[k - h->cls]) : h->large.n;
    if (opool__episode_freed(e, live, k ? k->blocks : h->large_cap)) {
        h->episodes--;
        opool__heap_view(h);
    }
}

/* ==== maps =============================================================== */

static uint32_t opool__hmap_slot(const opool__hmap *m, uintptr_t key) {
    return opool__heap_home(key, m->cap - 1); /* the inline free probes the same slot first */
}

/* The entry of key, or NULL. */
static opool__hentry *opool__hmap_find(const opool__hmap *m, uintptr_t key) {
    if (key == 0 || m->n == 0) return NULL; /* 0 marks empty entries; a map may have none */
    for (uint32_t i = opool__hmap_slot(m, key);; i = (i + 1) & (m->cap - 1)) {
        if (m->e[i].key == key) return &m->e[i];
        if (m->e[i].key == 0) return NULL;
    }
}

static void opool__hmap_put(opool__hmap *m, uintptr_t key, size_t size) {
    uint32_t i = opool__hmap_slot(m, key);
    while (m->e[i].key != 0) i = (i + 1) & (m->cap - 1);
    m->e[i].key = key;
    m->e[i].size = size;
    m->n++;
}

/* Make room for one more entry (load at most 1/2). False: no memory. */
static bool opool__hmap_reserve(opool_heap *h, opool__hmap *m) {
    if (m->cap != 0 && (m->n + 1) * 2 <= m->cap) return true;
    uint32_t cap = m->cap ? m->cap * 2 : 16;
    if (cap < m->cap || cap > (UINT32_MAX >> 1)) return false;
    opool__hentry *e =
        (opool__hentry *)h->mem.alloc(h->mem.ctx, (size_t)cap * sizeof *e, alignof(opool__hentry));
    if (e == NULL) return false;
    memset(e, 0, (size_t)cap * sizeof *e);
    opool__hmap old = *m;
    m->e = e;
    m->cap = cap;
    m->n = 0;
    for (uint32_t i = 0; i < old.cap; i++)
        if (old.e[i].key) opool__hmap_put(m, old.e[i].key, old.e[i].size);
    if (old.e && old.e != h->page0) h->mem.free(h->mem.ctx, old.e, (size_t)old.cap * sizeof *old.e);
    return true;
}

/* Remove the entry at *at, shifting later entries of its run back (no
 * tombstones: lookups stay short however many removals happen). */
static void opool__hmap_erase(opool__hmap *m, opool__hentry *at) {
    uint32_t i = (uint32_t)(at - m->e), mask = m->cap - 1;
    for (uint32_t j = (i + 1) & mask; m->e[j].key != 0; j = (j + 1) & mask) {
        uint32_t home = opool__hmap_slot(m, m->e[j].key);
        /* move j into the hole at i unless its home lies cyclically in (i, j] */
        if (((j - home) & mask) >= ((j - i) & mask)) {
            m->e[i] = m->e[j];
            i = j;
        }
    }
    m->e[i].key = 0;
    m->n--;
}

/* ==== regions ============================================================ */

static uint32_t opool__ctz64(uint64_t x) { /* x != 0 */
#if defined(__GNUC__) || defined(__clang__)
    return (uint32_t)__builtin_ctzll(x);
#else
    uint32_t n = 0;
    while (!(x & 1)) {
        x >>= 1;
        n++;
    }
    return n;
#endif
}

static uint32_t opool__popcount64(uint64_t x) {
    uint32_t n = 0;
    for (; x; x &= x - 1) n++;
    return n;
}

static size_t opool__region_bytes(const opool__hregion *r) {
    return (size_t)r->npages * OPOOL__HPAGE;
}

/* Whether region r lies in h's reserved range. */
static bool opool__heap_in_span(const opool_heap *h, const opool__hregion *r) {
    return h->span && (uintptr_t)r->base - (uintptr_t)h->span < h->span_used;
}

/* The memory of pages i of base (bit i of pages) back to the system, one
 * call per run of adjacent pages: the pages whose memory stayed. */
static uint64_t opool__os_reset_pages(char *base, uint64_t pages) {
    uint64_t left = pages;
    while (pages) {
        uint32_t b = opool__ctz64(pages), n = 0;
        while (b + n < 64 && (pages >> (b + n)) & 1) n++;
        uint64_t run = OPOOL__REGION_ALL(n) << b;
        if (opool__os_reset(base + (size_t)b * OPOOL__HPAGE, (size_t)n * OPOOL__HPAGE))
            left &= ~run;
        pages &= ~run;
    }
    return left;
}

/* The spans of destroyed heaps, kept for the heaps made after them: a
 * program that makes and drops a heap per frame, world or request then
 * makes no system call for it, and touches no fresh page. A slot holds a
 * span's address, 0 when empty; the span's first bytes hold its note while
 * it waits. At most OPOOL__STASH_SPANS spans wait, each with at most
 * OPOOL__STASH_PAGES pages of memory (its first ones): a destroyed heap
 * gives the rest back first, and a heap that used more than 64 pages, or
 * runs, or ran under a memory checker (which must see its memory go),
 * unmaps its span instead. */
#define OPOOL__STASH_SPANS 4
#define OPOOL__STASH_PAGES 16u
static opool__atomic(uintptr_t) opool__stash[OPOOL__STASH_SPANS];

typedef struct opool__stash_note {
    size_t commit;  /* the span's first bytes that are readable and writable */
    uint64_t dirty; /* its pages (of the first 64) that may not read zero */
} opool__stash_note;

/* A waiting span, taken: its address and note, or NULL when none waits. */
static char *opool__stash_take(opool__stash_note *note) {
    for (int i = 0; i < OPOOL__STASH_SPANS; i++) {
        uintptr_t s = opool__atomic_load_relaxed(&opool__stash[i]);
        if (s != 0 && opool__atomic_cas_strong_acquire_relaxed(&opool__stash[i], &s, 0)) {
            memcpy(note, (const void *)s, sizeof *note);
            return (char *)s;
        }
    }
    return NULL;
}

/* Span s, its note written at its start (its first page is committed),
 * left for the next heap. False: every slot is taken. */
static bool opool__stash_put(char *s, opool__stash_note note) {
    memcpy(s, &note, sizeof note);
    for (int i = 0; i < OPOOL__STASH_SPANS; i++) {
        uintptr_t empty = 0;
        if (opool__atomic_cas_strong_seq_cst_relaxed(&opool__stash[i], &empty, (uintptr_t)s))
            return true;
    }
    return false;
}

/* The span of a heap with the system's memory, at its first page: a
 * destroyed heap's, else a new reservation (none if it fails: regions are
 * then mapped one by one). */
static void opool__heap_get_span(opool_heap *h) {
    h->span_tried = true;
    if (!OPOOL__HEAP_SPAN || !h->os) return;
    opool__stash_note note = {0, 0};
    h->span = opool__stash_take(&note);
    if (h->span == NULL) h->span = (char *)opool__os_reserve(OPOOL__HEAP_SPAN, OPOOL__HPAGE);
    h->span_commit = note.commit;
    h->span_dirty = note.dirty;
}

/* At destroy: the span kept for a later heap (opool__stash_take), if it
 * may wait (see the slots above) and a slot is free. False: unmap it. */
static bool opool__heap_stash_span(opool_heap *h) {
    const size_t most = (size_t)64 * OPOOL__HPAGE;
    if (h->span == NULL || h->checker || h->runs_used != 0 || h->span_used == 0 ||
        h->span_used > most || h->span_commit > most)
        return false;
    /* pages the regions cover: held and cached pages, and vacant ones not reading zero */
    uint64_t dirty = h->span_dirty & ~OPOOL__REGION_ALL(h->span_used / OPOOL__HPAGE);
    for (uint32_t i = 0; i < h->nregions; i++) {
        const opool__hregion *r = &h->regions[i];
        if (r->base == NULL || !opool__heap_in_span(h, r)) continue;
        uint64_t used = (~r->vacant | r->dirty) & OPOOL__REGION_ALL(r->npages);
        dirty |= used << ((size_t)(r->base - h->span) / OPOOL__HPAGE);
    }
    uint64_t keep = OPOOL__REGION_ALL(OPOOL__STASH_PAGES); /* the rest's memory goes back */
    if (opool__os_reset_pages(h->span, dirty & ~keep) != 0) return false;
    opool__stash_note note = {h->span_used > h->span_commit ? h->span_used : h->span_commit,
                              (dirty & keep) | 1}; /* the note itself is in page 0 */
    return opool__stash_put(h->span, note);
}

/* bytes of the system's memory, aligned to a page: the next part of the
 * span, else a mapping of their own. *dirty: bit i, page i may not read
 * zero. */
static char *opool__heap_os_pages(opool_heap *h, size_t bytes, uint64_t *dirty) {
    if (!h->span_tried) opool__heap_get_span(h);
    if (h->span && bytes <= OPOOL__HEAP_SPAN - h->span_used - h->runs_used) {
        size_t at = h->span_used, end = at + bytes,
               from = at > h->span_commit ? at : h->span_commit;
        if (end <= h->span_commit || opool__os_commit(h->span + from, end - from)) {
            if (end > h->span_commit) h->span_commit = end;
            size_t page = at / OPOOL__HPAGE;
            *dirty = page < 64 ? h->span_dirty >> page : 0;
            h->span_used = end;
            opool__heap_view(h);
            return h->span + at;
        }
    }
    bool zero = false;
    char *m = (char *)opool__os_map(bytes, OPOOL__HPAGE, &zero);
    *dirty = zero ? 0 : ~(uint64_t)0;
    return m;
}

/* Array v of *cap entries of size bytes, of which the first n are in use,
 * doubled (8 entries when it has none): the new array, *cap updated, v
 * freed unless it is the heap's own first array, fixed. NULL: no memory (v
 * and *cap unchanged). */
static void *opool__heap_grow_array(opool_heap *h, void *v, const void *fixed, uint32_t *cap,
                                    uint32_t n, size_t size, size_t align) {
    uint32_t more = *cap ? *cap * 2 : 8;
    if (more < *cap || more > UINT32_MAX / size) return NULL;
    void *a = h->mem.alloc(h->mem.ctx, (size_t)more * size, align);
    if (a == NULL) return NULL;
    if (v) memcpy(a, v, (size_t)n * size);
    if (v && v != fixed) h->mem.free(h->mem.ctx, v, (size_t)*cap * size);
    *cap = more;
    return a;
}

/* A free entry of the region array, made if need be. False: no memory. */
static bool opool__heap_region_entry(opool_heap *h, uint32_t *out) {
    for (uint32_t i = 0; i < h->nregions; i++)
        if (h->regions[i].base == NULL) {
            *out = i;
            return true;
        }
    if (h->nregions == h->region_cap) {
        void *r = opool__heap_grow_array(h, h->regions, h->region0, &h->region_cap, h->nregions,
                                         sizeof(opool__hregion), alignof(opool__hregion));
        if (r == NULL) return false;
        h->regions = (opool__hregion *)r;
    }
    *out = h->nregions++;
    h->regions[*out].base = NULL;
    return true;
}

/* A region of npages vacant pages, in one request: to the system when the
 * desc names no allocator, else to the allocator. False: refused. */
static bool opool__heap_new_region(opool_heap *h, uint32_t npages) {
    uint32_t i;
    if (!opool__heap_region_entry(h, &i)) return false;
    size_t bytes = (size_t)npages * OPOOL__HPAGE;
    uint64_t dirty = ~(uint64_t)0; /* the allocator's bytes may be anything */
    char *m = h->os ? opool__heap_os_pages(h, bytes, &dirty)
                    : (char *)h->mem.alloc(h->mem.ctx, bytes, OPOOL__HPAGE);
    if (m == NULL) return false;
    opool__assert(((uintptr_t)m & (OPOOL__HPAGE - 1)) == 0);
    opool__hregion *r = &h->regions[i];
    r->base = m;
    r->npages = npages;
    r->held = 0;
    r->vacant = OPOOL__REGION_ALL(npages);
    r->dirty = dirty & r->vacant;
    r->warm = opool__heap_in_span(h, r) ? r->dirty : 0;
    opool__mem_noaccess(m, bytes);
    h->vacant += npages;
    return true;
}

static void opool__heap_free_region(opool_heap *h, opool__hregion *r) {
    size_t bytes = opool__region_bytes(r);
    opool__mem_defined(r->base, bytes);
    if (h->os)
        opool__os_unmap(r->base, bytes);
    else
        h->mem.free(h->mem.ctx, r->base, bytes);
    h->vacant -= (size_t)r->npages - r->held;
    r->base = NULL;
}

/* Take a vacant page, from the region first in the array (pages gather in
 * few regions, so that the others can empty). *zero: its bytes read zero.
 * NULL when no page is vacant. */
static opool__hpage *opool__heap_take_vacant(opool_heap *h, uint32_t *region, bool *zero) {
    if (h->vacant == 0) return NULL;
    for (uint32_t i = 0; i < h->nregions; i++) {
        opool__hregion *r = &h->regions[i];
        if (r->base == NULL || r->vacant == 0) continue;
        uint32_t b = opool__ctz64(r->vacant);
        uint64_t bit = (uint64_t)1 << b;
        *zero = !(r->dirty & bit);
        r->vacant &= ~bit;
        r->dirty &= ~bit;
        r->warm &= ~bit;
        r->held++;
        h->vacant--;
        *region = i;
        return (opool__hpage *)(void *)(r->base + (size_t)b * OPOOL__HPAGE);
    }
    return NULL;
}

/* The newest page of the cache (warm in cache, likely), or NULL. */
static opool__hpage *opool__heap_cache_take(opool_heap *h) {
    opool__hpage *pg = h->cache;
    if (pg == NULL) return NULL;
    h->cache = pg->next;
    if (h->cache)
        h->cache->prev = NULL;
    else
        h->cache_tail = NULL;
    h->cached--;
    return pg;
}

/* The cache's clock, kept in a cached page's block0: ticks of 2^20 ns
 * (about 1 ms) in a uintptr_t. With 32-bit pointers it wraps every 52 days;
 * ages are differences mod 2^32 then, so a page cached across a wrap may
 * wait for a later page event to go back. */
static uintptr_t opool__cache_tick(uint64_t ns) { return (uintptr_t)(ns >> 20); }

static void opool__heap_cache_put(opool_heap *h, opool__hpage *pg, uint64_t now) {
    pg->prev = NULL;
    pg->next = h->cache;
    if (h->cache)
        h->cache->prev = pg;
    else
        h->cache_tail = pg;
    h->cache = pg;
    pg->block0 = opool__cache_tick(now); /* a cached page has no block 0: the time it came */
    h->cached++;
}

/* The bits of the pages of r given back just now: memory back to the system
 * in runs of adjacent pages, one call each; a region that holds no page any
 * more goes back whole, but for one in the reserved range, which keeps its
 * addresses (its pages vacant, their memory given back). */
static void opool__heap_give_back(opool_heap *h, opool__hregion *r) {
    if (r->held == 0 && !opool__heap_in_span(h, r)) {
        opool__heap_free_region(h, r);
        return;
    }
    if (!h->os) return; /* the allocator's bytes stay until the whole region goes */
    r->dirty = opool__os_reset_pages(r->base, r->dirty);
    r->warm &= r->dirty;
}

static void opool__heap_run_decay(opool_heap *h, uintptr_t tick);

/* The cache's oldest pages, at most n of them, among those that waited age
 * ticks or more at tick, become vacant, and their memory goes back. */
static void opool__heap_uncache(opool_heap *h, size_t n, uintptr_t tick, uintptr_t age) {
    opool__hpage *pg;
    uint32_t lo = UINT32_MAX, hi = 0;
    for (; n > 0 && (pg = h->cache_tail) != NULL && tick - pg->block0 >= age; n--) {
        h->cache_tail = pg->prev;
        if (h->cache_tail)
            h->cache_tail->next = NULL;
        else
            h->cache = NULL;
        h->cached--;
        uint32_t i = pg->region;
        opool__hregion *r = &h->regions[i];
        uint64_t bit = (uint64_t)1 << (((char *)pg - r->base) / OPOOL__HPAGE);
        r->vacant |= bit;
        r->dirty |= bit;
        r->held--;
        h->vacant++;
        opool__mem_noaccess(pg, OPOOL__HPAGE);
        if (i < lo) lo = i;
        if (i > hi) hi = i;
    }
    for (uint32_t i = lo; i <= hi && i < h->nregions; i++) {
        opool__hregion *r = &h->regions[i];
        if (r->base && (r->held == 0 || r->dirty != 0)) opool__heap_give_back(h, r);
    }
}

/* The hysteresis, run at every page event: the pages that stayed in the
 * cache OPOOL__HEAP_DECAY_NS or longer become vacant, and their memory goes
 * back; and the free runs' (opool__heap_run_decay). */
static void opool__heap_decay(opool_heap *h, uint64_t now) {
    uintptr_t tick = opool__cache_tick(now), decay = opool__cache_tick(OPOOL__HEAP_DECAY_NS);
    opool__heap_run_decay(h, tick); /* the free runs' too */
    opool__heap_uncache(h, SIZE_MAX, tick, decay);
}

static void opool__heap_idle_back(opool_heap *h, size_t n);

/* ==== runs =============================================================== */

/* Pages of a run that holds size bytes. */
static uint32_t opool__run_pages(size_t size) { return (uint32_t)((size - 1) / OPOOL__HPAGE + 1); }

/* Whether p lies in the run area: the top runs_used bytes of the span. */
static bool opool__heap_is_run(const opool_heap *h, const void *p) {
    uintptr_t top = (uintptr_t)h->span + OPOOL__HEAP_SPAN;
    return h->runs_used != 0 && top - (uintptr_t)p - 1 < h->runs_used;
}

/* Whether a large block of size bytes that is no run has a mapping of its
 * own: above the runs' largest, in a heap with the system's memory. Its
 * memory goes back at its free, as a run past the budget's does, instead
 * of waiting in the C library's free lists where no class or run can use
 * it. The size is the one asked for (the large map's), which a shrink in
 * place keeps. */
static bool opool__heap_mapped(const opool_heap *h, size_t size) {
    return h->os && size > (size_t)OPOOL__RUN_MAX * OPOOL__HPAGE;
}

/* The bytes of the mapping of a block of size bytes: whole system pages. */
static size_t opool__map_bytes(size_t size) { return (size + 4095) & ~(size_t)4095; }

/* Large block p of size bytes (no run) back to where it came from. */
static void opool__heap_large_back(opool_heap *h, void *p, size_t size) {
    if (opool__heap_mapped(h, size)) {
        opool__mem_defined(p, opool__map_bytes(size)); /* unmapped: a checker's marks go */
        opool__os_unmap(p, opool__map_bytes(size));
    } else {
        h->mem.free(h->mem.ctx, p, size);
    }
}

/* n pages of free runs became resident (more) or stopped being. */
static void opool__heap_run_idle(opool_heap *h, uint32_t n, bool more) {
    size_t bytes = (size_t)n * OPOOL__HPAGE;
    h->run_idle = more ? h->run_idle + bytes : h->run_idle - bytes;
    if (n >= OPOOL__RUN_IDLE_MIN)
        h->run_idle_big = more ? h->run_idle_big + bytes : h->run_idle_big - bytes;
}

/* A run of n pages (1 .. OPOOL__RUN_MAX): the newest free one of n pages,
 * else new pages at the top of the span. *zero: its bytes read zero. NULL:
 * no span, the span is full, or no memory for the bin's bookkeeping; the
 * allocator serves the block then. The run is inaccessible to a checker. */
static char *opool__heap_run_take(opool_heap *h, uint32_t n, bool *zero) {
    opool__hrunbin *b = &h->runs[n - 1];
    size_t bytes = (size_t)n * OPOOL__HPAGE;
    char *r;
    if (b->n != 0) {
        r = b->v[--b->n].base;
        *zero = b->n < b->cold; /* its memory went back: it reads zero */
        if (*zero) {
            b->cold = b->n;
            h->run_held += bytes;
        } else {
            opool__heap_run_idle(h, n, false);
        }
        return r;
    }
    if (!h->span_tried) opool__heap_get_span(h);
    if (h->span == NULL || bytes > OPOOL__HEAP_SPAN - h->span_used - h->runs_used) return NULL;
    if (b->made == b->cap) { /* room for this run in its bin, for the day it is freed */
        void *v = opool__heap_grow_array(h, b->v, NULL, &b->cap, b->n, sizeof(opool__hrun),
                                         alignof(opool__hrun));
        if (v == NULL) return NULL;
        b->v = (opool__hrun *)v;
    }
    r = h->span + OPOOL__HEAP_SPAN - h->runs_used - bytes;
    if (!opool__os_commit(r, bytes)) return NULL;
    opool__heap_idle_back(h, n); /* fresh memory: as much idle memory goes back */
    opool__mem_noaccess(r, bytes);
    h->runs_used += bytes;
    h->run_held += bytes;
    b->made++;
    *zero = true;
    return r;
}

/* The oldest free run still resident that waited age ticks or more, among
 * runs of from pages or more: its memory back to the system. False: none,
 * or the system cannot take it back (the bytes stay, and so do those of
 * every younger run, until a later try). */
static bool opool__heap_run_idle_back(opool_heap *h, uintptr_t tick, uintptr_t age, uint32_t from) {
    opool__hrunbin *oldest = NULL;
    for (uint32_t i = from - 1; i < OPOOL__RUN_MAX; i++) {
        opool__hrunbin *b = &h->runs[i];
        if (b->cold < b->n && tick - b->v[b->cold].tick >= age &&
            (oldest == NULL || tick - b->v[b->cold].tick > tick - oldest->v[oldest->cold].tick))
            oldest = b;
    }
    if (oldest == NULL) return false;
    uint32_t n = (uint32_t)(oldest - h->runs) + 1;
    if (!opool__os_reset(oldest->v[oldest->cold].base, (size_t)n * OPOOL__HPAGE)) return false;
    oldest->cold++;
    h->run_held -= (size_t)n * OPOOL__HPAGE;
    opool__heap_run_idle(h, n, false);
    return true;
}

/* The free runs' hysteresis, as the page cache's, run at the heap's page
 * events and run frees, at most once per OPOOL__HEAP_DECAY_NS: the free
 * runs that waited that long give their memory back (their addresses stay
 * in their bins, and read zero). */
static void opool__heap_run_decay(opool_heap *h, uintptr_t tick) {
    uintptr_t decay = opool__cache_tick(OPOOL__HEAP_DECAY_NS);
    if (h->run_idle == 0 || tick - h->run_swept < decay) return;
    h->run_swept = tick;
    while (opool__heap_run_idle_back(h, tick, decay, 1)) {
    }
}

/* The run r of n pages, its block freed, into its bin; then the decay, and
 * the budget: while the free runs of OPOOL__RUN_IDLE_MIN pages or more keep
 * more than OPOOL__RUN_IDLE bytes beyond those of the live runs, the oldest
 * of them give their memory back. */
static void opool__heap_run_put(opool_heap *h, char *r, uint32_t n) {
    opool__hrunbin *b = &h->runs[n - 1];
    uintptr_t tick = opool__cache_tick(opool__now_ns());
    opool__mem_noaccess(r, (size_t)n * OPOOL__HPAGE);
    b->v[b->n].base = r; /* room kept when the run was made */
    b->v[b->n].tick = tick;
    b->n++;
    opool__heap_run_idle(h, n, true);
    opool__heap_run_decay(h, tick);
    while (h->run_idle_big > OPOOL__RUN_IDLE + (h->run_held - h->run_idle) &&
           opool__heap_run_idle_back(h, tick, 0, OPOOL__RUN_IDLE_MIN)) {
    }
}

/* ==== pages ============================================================== */

static uint32_t opool__heap_align(uint32_t size) { return size % 16 == 0 ? 16 : 8; }

/* The live-bitmap granule of class size, as its log2: the largest power of
 * two dividing it (sizes are multiples of 8), at most 128 bytes. Block 0
 * then starts at a multiple of the granule: 64 + 8192 / granule bytes of
 * header and bitmap for granules 8 .. 128 (1088, 576, 320, 192, 128). */
static uint32_t opool__heap_gshift(uint32_t size) {
    uint32_t g = 3;
    while (g < 7 && !(size >> g & 1)) g++;
    return g;
}

/* Blocks of a page of class size, and the offset of the first: after the
 * header and a bitmap of one bit per granule of the whole page. */
static uint32_t opool__heap_geometry(uint32_t size, uint32_t *first) {
    uint32_t align = opool__heap_align(size);
    uint32_t bits = (uint32_t)(OPOOL__HPAGE >> opool__heap_gshift(size));
    uint32_t hdr = (uint32_t)sizeof(opool__hpage) + 8 * ((bits + 63) / 64);
    *first = (hdr + align - 1) & ~(align - 1);
    opool__assert(*first % (1u << opool__heap_gshift(size)) == 0);
    return (uint32_t)((OPOOL__HPAGE - *first) / size);
}

/* The geometry of class k's pages, from its size: worked out at its first
 * page, so that a class never used costs nothing. */
static void opool__hclass_shape(opool__hclass *k) {
    k->recip = (uint32_t)((((uint64_t)1 << 32) + k->size - 1) / k->size);
    k->per = opool__heap_geometry(k->size, &k->first);
    k->gshift = opool__heap_gshift(k->size);
}

/* The blocks of page pg handed out. */
static uint32_t opool__hpage_count(const opool__hpage *pg) { return pg->toslow + pg->slow_at; }

/* When a free must leave the inline path: a page off the list at its first
 * free (to list it again), a grown page when it empties (to the cache);
 * UINT32_MAX: never (a reserved page on the list: toslow = live + 1). */
static void opool__hpage_arm(opool__hpage *pg) {
    uint32_t live = opool__hpage_count(pg);
    if (!(pg->flags & OPOOL__HPAGE_LISTED))
        pg->slow_at = pg->end / pg->size - 1;
    else
        pg->slow_at = pg->flags & OPOOL__HPAGE_RESERVED ? UINT32_MAX : 0;
    pg->toslow = live - pg->slow_at;
}

/* The page inline allocs serve from: the listed page a block was last freed
 * into (LIFO across pages: the next alloc gets that block back, still in
 * cache), or the list's head when that page leaves the list. */
static void opool__heap_current(opool_heap *h, uint32_t c) {
    h->hot.cls[c].page = h->cls[c].avail ? h->cls[c].avail : &h->none;
}

static void opool__heap_list(opool_heap *h, opool__hpage *pg) {
    opool__hclass *k = &h->cls[pg->cls];
    pg->prev = NULL;
    pg->next = k->avail;
    if (k->avail) k->avail->prev = pg;
    k->avail = pg;
    pg->flags |= OPOOL__HPAGE_LISTED;
    opool__hpage_arm(pg);
    opool__heap_current(h, pg->cls);
}

static void opool__heap_unlist(opool_heap *h, opool__hpage *pg) {
    opool__hclass *k = &h->cls[pg->cls];
    if (pg->prev)
        pg->prev->next = pg->next;
    else
        k->avail = pg->next;
    if (pg->next) pg->next->prev = pg->prev;
    pg->next = pg->prev = NULL;
    pg->flags &= ~OPOOL__HPAGE_LISTED;
    opool__hpage_arm(pg);
    if (h->hot.cls[pg->cls].page == pg) opool__heap_current(h, pg->cls);
}

/* Make room in the page set; the inline free's view follows it. */
static bool opool__heap_reserve_pages(opool_heap *h) {
    if (!opool__hmap_reserve(h, &h->pages)) return false;
    opool__heap_view(h);
    return true;
}

/* The size of the next region of a growing heap: as many pages as it holds
 * (one for its first page, then at least OPOOL__REGION_MIN). */
static uint32_t opool__heap_region_size(const opool_heap *h) {
    size_t n = h->page_count + h->cached;
    return n == 0                  ? 1 /* its first page: a heap of one block holds one page */
           : n < OPOOL__REGION_MIN ? OPOOL__REGION_MIN
           : n > OPOOL__REGION_MAX ? OPOOL__REGION_MAX
                                   : (uint32_t)n;
}

/* A page for class c, from the cache, else a vacant page, else a new
 * region: registered and listed. NULL: no memory (nothing changed). */
static opool__hpage *opool__heap_add_page(opool_heap *h, uint32_t c, bool reserved) {
    opool__hclass *k = &h->cls[c];
    if (k->per == 0) opool__hclass_shape(k); /* its first page */
    uint32_t first = k->first, n = k->per;
    if (k->blocks > UINT32_MAX - n) return NULL; /* the class's count is 32-bit */
    if (!opool__heap_reserve_pages(h)) return NULL;
    uint32_t region = 0;
    bool zero = false;
    opool__hpage *pg = opool__heap_cache_take(h);
    if (pg != NULL) {
        region = pg->region;
        opool__mem_undefined(pg, first);
    } else {
        if (h->vacant == 0) {
            /* a smaller request if the large one is refused: one page is enough */
            uint32_t want = reserved ? 1 : opool__heap_region_size(h);
            if (!opool__heap_new_region(h, want) && (want == 1 || !opool__heap_new_region(h, 1)))
                return NULL;
        }
        pg = opool__heap_take_vacant(h, &region, &zero);
        opool__mem_undefined(pg, first);
    }
    memset(pg, 0, first);
    pg->block0 = (uintptr_t)pg + first;
    pg->size = k->size;
    pg->gshift = (uint8_t)k->gshift;
    pg->gmask = (uint16_t)((1u << k->gshift) - 1);
    pg->end = n * k->size;
    pg->cls = (uint8_t)c;
    pg->region = region;
    pg->flags = (uint8_t)((reserved ? OPOOL__HPAGE_RESERVED : 0) | (zero ? OPOOL__HPAGE_ZERO : 0));
    opool__mem_noaccess((char *)pg + first, OPOOL__HPAGE - first);
    opool__hmap_put(&h->pages, (uintptr_t)pg, 0);
    h->page_count++;
    k->blocks += n;
    opool__heap_list(h, pg);
    if (!reserved) opool__heap_decay(h, opool__now_ns());
    return pg;
}

/* An empty grown page leaves its class for the heap's cache, at time now. */
static void opool__heap_leave_class(opool_heap *h, opool__hpage *pg, uint64_t now) {
    opool__hclass *k = &h->cls[pg->cls];
    opool__heap_unlist(h, pg);
    opool__hmap_erase(&h->pages, opool__hmap_find(&h->pages, (uintptr_t)pg));
    h->page_count--;
    k->blocks -= k->per;
    opool__heap_cache_put(h, pg, now);
}

/* An empty grown page leaves its class for the heap's cache: a page event. */
static void opool__heap_retire_page(opool_heap *h, opool__hpage *pg) {
    uint64_t now = opool__now_ns();
    opool__heap_leave_class(h, pg, now);
    opool__heap_decay(h, now);
}

/* The memory of n empty pages goes back, as far as the heap holds so
 * many: the cache's oldest, then the classes' empty spares
 * (opool__heap_page_freed). Called where the heap maps fresh memory that
 * no empty page could serve (a new run), so that empty pages and new
 * memory are not both resident; the run area grows only to the most runs
 * ever live at once, so a program in its steady state stops calling it.
 * O(classes), a system call per run of adjacent pages. */
static void opool__heap_idle_back(opool_heap *h, size_t n) {
    size_t from_cache = n < h->cached ? n : h->cached;
    opool__heap_uncache(h, from_cache, 0, 0);
    n -= from_cache;
    if (n == 0) return;
    uint64_t now = opool__now_ns();
    size_t spares = 0;
    for (uint32_t c = 0; c < h->nclasses && spares < n; c++) {
        opool__hpage *pg = h->cls[c].spare;
        if (pg == NULL || opool__hpage_count(pg) != 0) continue;
        h->cls[c].spare = NULL;
        opool__heap_leave_class(h, pg, now);
        spares++;
    }
    opool__heap_uncache(h, spares, 0, 0);
}

/* A free left pg's live count at pg->slow_at: list the page again if it was off the
 * list (it has a free block now); an empty grown page goes to the heap's
 * cache unless it becomes its class's spare (one empty grown page kept, so
 * a class at the edge of a page does not trade pages with the cache at
 * every step). */
void opool__heap_page_freed(opool_heap *h, opool__hpage *pg) {
    if (!(pg->flags & OPOOL__HPAGE_LISTED)) opool__heap_list(h, pg);
    if (opool__hpage_count(pg) == 0 && !(pg->flags & OPOOL__HPAGE_RESERVED)) {
        opool__hclass *k = &h->cls[pg->cls];
        if (k->spare != NULL && k->spare != pg && opool__hpage_count(k->spare) == 0)
            opool__heap_retire_page(h, pg);
        else
            k->spare = pg;
    }
}

/* ==== lookup ============================================================= */

/* The page of h that holds address a, or NULL: one hash probe, most often. */
static inline opool__hpage *opool__heap_page_of(const opool_heap *h, uintptr_t a) {
    uintptr_t base = a & ~(OPOOL__HPAGE - 1);
    const opool__hentry *e = h->pages.e;
    uint32_t mask = h->pages.cap - 1;
    for (uint32_t i = opool__hmap_slot(&h->pages, base);; i = (i + 1) & mask) {
        if (OPOOL_LIKELY(e[i].key == base)) return (opool__hpage *)base;
        if (e[i].key == 0 || base == 0) return NULL;
    }
}

/* Where ptr lives: OPOOL_OK with its page and block index (or *large for a
 * fallback block), OPOOL_EINVAL (not a block start of h), OPOOL_ESTALE (a
 * block handed out once and free now). Never reads memory h does not own. */
static opool_status opool__heap_classify(const opool_heap *h, const void *ptr, opool__hpage **page,
                                         uint32_t *index, opool__hentry **large) {
    uintptr_t a = (uintptr_t)ptr;
    opool__hpage *pg = opool__heap_page_of(h, a);
    *large = NULL;
    if (pg != NULL) {
        uintptr_t off = a - pg->block0; /* below block 0 wraps above carved */
        if (off >= pg->carved) return OPOOL_EINVAL;
        uint32_t j;
        if (!opool__hpage_index(h->cls[pg->cls].recip, off, &j)) return OPOOL_EINVAL;
        *page = pg;
        *index = j;
        return opool__hpage_live(pg, a) ? OPOOL_OK : OPOOL_ESTALE;
    }
    if ((*large = opool__hmap_find(&h->large, a)) != NULL) return OPOOL_OK;
    return OPOOL_EINVAL;
}

/* opool__heap_classify, counting and reporting a rejection: what free,
 * realloc and usable_size share. */
static opool_status opool__heap_locate(const opool_heap *h, const void *ptr, opool__hpage **page,
                                       uint32_t *index, opool__hentry **large) {
    opool_status s = opool__heap_classify(h, ptr, page, index, large);
    if (OPOOL_UNLIKELY(s != OPOOL_OK)) opool__heap_rejected(h, s, ptr);
    return s;
}

/* ==== public ============================================================= */

opool_status opool_heap_create(opool_heap **out, const opool_heap_desc *desc) {
    if (out == NULL) return OPOOL_EINVAL;
    *out = NULL;
    opool_heap_desc d;
    memset(&d, 0, sizeof d);
    if (desc) d = *desc;
    if (d.class_sizes == NULL) {
        if (d.class_count != 0) return OPOOL_EINVAL;
        d.class_sizes = opool__heap_default_classes;
        d.class_count = (uint32_t)OPOOL__HEAP_DEFAULTS;
    }
    if (d.class_count == 0 || d.class_count > OPOOL_HEAP_MAX_CLASSES) return OPOOL_EINVAL;
    if (d.flags &
        ~(uint32_t)(OPOOL_HEAP_NO_FALLBACK | OPOOL_HEAP_GROW | OPOOL_HEAP_FIXED | OPOOL_HEAP_ARENA |
                    OPOOL_POISON | OPOOL_REPORT_MISUSE | OPOOL_REPORT_UNRATIONED))
        return OPOOL_EINVAL;
    if ((d.flags & OPOOL_HEAP_FIXED) && (d.flags & OPOOL_HEAP_GROW)) return OPOOL_EINVAL;
    if ((d.allocator.alloc == NULL) != (d.allocator.free == NULL)) return OPOOL_EINVAL;
    /* the classes: the desc's, then the heap's own above them (none without fallback);
     * pages reserved per class: their blocks must fit the class's 32-bit count, and the
     * bytes must be addressable */
    uint32_t size_of[OPOOL__HEAP_CLASSES], pages_of[OPOOL__HEAP_CLASSES], n = 0;
    size_t total = 0;
    /* blocks_per_class 0: a growing heap takes a class's first page at its first alloc, a
     * fixed one holds a page per class */
    bool reserve = d.blocks_per_class != 0 || (d.flags & OPOOL_HEAP_FIXED);
    for (; n < d.class_count; n++) {
        uint32_t s = size_of[n] = d.class_sizes[n];
        if (s == 0 || s % 8 != 0 || s > OPOOL_HEAP_MAX_CLASS_SIZE) return OPOOL_EINVAL;
        if (n > 0 && s <= size_of[n - 1]) return OPOOL_EINVAL;
        pages_of[n] = reserve;
        if (!reserve) continue;
        if (d.blocks_per_class != 0) {
            uint32_t first, per = opool__heap_geometry(s, &first);
            pages_of[n] = d.blocks_per_class / per + (d.blocks_per_class % per != 0);
            if ((uint64_t)pages_of[n] * per > UINT32_MAX) return OPOOL_EINVAL;
        }
        size_t bytes;
        if (!opool__mul_ok(pages_of[n], OPOOL__HPAGE, &bytes) ||
            !opool__add_ok(total, bytes, &total))
            return OPOOL_EINVAL;
    }
    for (uint32_t i = 0; i < OPOOL__HEAP_OWN && !(d.flags & OPOOL_HEAP_NO_FALLBACK); i++)
        if (opool__heap_own_classes[i] > size_of[n - 1]) {
            size_of[n] = opool__heap_own_classes[i];
            pages_of[n++] = 0;
        }

    opool_allocator mem;
    memset(&mem, 0, sizeof mem);
    mem.alloc = d.allocator.alloc;
    mem.free = d.allocator.free;
    mem.ctx = d.allocator.ctx;
    bool os = mem.alloc == NULL; /* regions straight from the system */
    if (mem.alloc == NULL) {     /* the core's default for the rest: the C library, aligned */
        opool_desc any;
        memset(&any, 0, sizeof any);
        mem = opool__allocator_of(&any);
    }
    /* the heap, its classes and, unless it has the default classes' shared one, its table
     * of sizes, in one block */
    uint32_t max_size = size_of[n - 1];
    const uint8_t *shared =
        d.class_sizes == opool__heap_default_classes ? opool__heap_defaults() : NULL;
    size_t bytes = sizeof(opool_heap) + n * sizeof(opool__hclass) + (shared ? 0 : max_size / 8 + 1);
    opool_heap *h = (opool_heap *)mem.alloc(mem.ctx, bytes, alignof(opool_heap));
    if (h == NULL) return OPOOL_ENOMEM;
    /* zero, but for the hot classes past n: never read */
    memset(h, 0, offsetof(opool__heap_hot, cls) + n * sizeof h->hot.cls[0]);
    memset((char *)h + sizeof h->hot, 0, sizeof *h - sizeof h->hot + n * sizeof h->cls[0]);
    h->bytes = bytes;
    h->regions = h->region0;
    h->region_cap = sizeof h->region0 / sizeof h->region0[0];
    h->pages.e = h->page0;
    h->pages.cap = sizeof h->page0 / sizeof h->page0[0];
    h->desc = d;
    h->desc.class_sizes = NULL; /* copied: the caller's array may go away */
    h->mem = mem;
    h->os = os;
    h->nclasses = n;
    h->user_classes = d.class_count;
    h->max_size = max_size;
    h->checker = opool__checker_active();
    for (uint32_t c = 0; c < n; c++) {
        h->cls[c].size = size_of[c]; /* its geometry at its first page */
        opool__heap_current(h, c);
    }
    if (shared == NULL) opool__heap_fill_table((uint8_t *)(h->cls + n), size_of, n);
    h->hot.class_of = shared ? shared : (const uint8_t *)(h->cls + n);
    /* poisoning and memory checkers need every call out of line */
    bool slow = h->checker || (d.flags & OPOOL_POISON);
    h->hooks = slow;
    opool__heap_view(h);
    h->hot.small_max = slow ? 0 : h->max_size;
    /* the reservation's pages in as few regions as there can be */
    size_t reserved = total / OPOOL__HPAGE;
    for (size_t left = reserved; left > 0;) {
        uint32_t r = left < OPOOL__REGION_MAX ? (uint32_t)left : OPOOL__REGION_MAX;
        if (!opool__heap_new_region(h, r)) goto nomem;
        left -= r;
    }
    for (uint32_t c = 0; c < n && reserve; c++)
        for (uint32_t k = 0; k < pages_of[c]; k++)
            if (opool__heap_add_page(h, c, true) == NULL) goto nomem;
    *out = h;
    return OPOOL_OK;
nomem:
    opool_heap_destroy(h);
    return OPOOL_ENOMEM;
}

void opool_heap_destroy(opool_heap *h) {
    if (h == NULL) return;
    if (h->desc.report == NULL) opool__diag_flush(OPOOL__KIND_HEAP, h, h->desc.name, &h->quota);
    uint64_t live = h->large.n, bytes = h->large_bytes;
    for (uint32_t c = 0; c < h->nclasses; c++) {
        uint64_t n = opool__hclass_live(&h->hot.cls[c]);
        live += n;
        bytes += n * h->cls[c].size;
    }
    if (live > 0 && !(h->desc.flags & OPOOL_HEAP_ARENA)) { /* an arena is dropped whole */
        h->leak_blocks = live;
        h->leak_bytes = bytes;
        opool__heap_report(h, OPOOL_ELEAK, NULL);
    }
    opool_allocator m = h->mem;
    for (uint32_t i = 0; i < h->nregions; i++) {
        opool__hregion *r = &h->regions[i];
        if (r->base && opool__heap_in_span(h, r))
            opool__mem_defined(r->base, opool__region_bytes(r)); /* unmapped below */
        else if (r->base)
            opool__heap_free_region(h, r);
    }
    if (h->runs_used) /* the runs, unmapped below: a checker's marks go */
        opool__mem_defined(h->span + OPOOL__HEAP_SPAN - h->runs_used, h->runs_used);
    if (h->span && !opool__heap_stash_span(h)) opool__os_unmap(h->span, OPOOL__HEAP_SPAN);
    if (h->regions != h->region0) m.free(m.ctx, h->regions, h->region_cap * sizeof *h->regions);
    for (uint32_t i = 0; i < h->large.cap; i++) /* runs went with the span */
        if (h->large.e[i].key && !opool__heap_is_run(h, (void *)h->large.e[i].key))
            opool__heap_large_back(h, (void *)h->large.e[i].key, h->large.e[i].size);
    for (uint32_t i = 0; i < OPOOL__RUN_MAX; i++)
        if (h->runs[i].v) m.free(m.ctx, h->runs[i].v, h->runs[i].cap * sizeof *h->runs[i].v);
    if (h->pages.e != h->page0)
        m.free(m.ctx, h->pages.e, (size_t)h->pages.cap * sizeof *h->pages.e);
    if (h->large.e) m.free(m.ctx, h->large.e, (size_t)h->large.cap * sizeof *h->large.e);
    m.free(m.ctx, h, h->bytes);
}

/* Page pg, serving its class, with no block handed out: its live bitmap
 * clear, its free list empty, every block to be carved again (their bytes
 * no longer zero), off its class's list. */
static void opool__hpage_empty(opool__hpage *pg) {
    size_t first = pg->block0 - (uintptr_t)pg;
    memset(pg + 1, 0, first - sizeof *pg); /* the bitmap, and the padding up to block 0 */
    opool__mem_noaccess((void *)pg->block0, pg->end);
    pg->free = NULL;
    pg->carved = 0;
    pg->toslow = pg->slow_at = 0;
    pg->next = pg->prev = NULL;
    pg->flags &= (uint8_t) ~(OPOOL__HPAGE_ZERO | OPOOL__HPAGE_LISTED);
}

opool_status opool_heap_clear(opool_heap *h) {
    if (h == NULL) return OPOOL_EINVAL;
    /* large blocks: runs to their bins, the allocator's back to it */
    for (uint32_t i = 0; i < h->large.cap; i++) {
        const opool__hentry *e = &h->large.e[i];
        if (e->key == 0) continue;
        if (opool__heap_is_run(h, (void *)e->key))
            opool__heap_run_put(h, (char *)e->key, opool__run_pages(e->size));
        else
            opool__heap_large_back(h, (void *)e->key, e->size);
    }
    if (h->large.e) memset(h->large.e, 0, (size_t)h->large.cap * sizeof *h->large.e);
    h->large.n = 0;
    h->large_bytes = h->run_asked = 0;
    /* every page of a class empty, and listed again */
    for (uint32_t c = 0; c < h->nclasses; c++) {
        h->cls[c].avail = h->cls[c].spare = NULL;
        h->hot.cls[c].room = h->hot.cls[c].high_water; /* none live */
    }
    for (uint32_t i = 0; i < h->pages.cap; i++)
        if (h->pages.e[i].key != 0) {
            opool__hpage *pg = (opool__hpage *)h->pages.e[i].key;
            opool__hpage_empty(pg);
            opool__heap_list(h, pg);
        }
    /* each class keeps one grown page as its spare, as when its pages empty one by one;
     * the others go to the heap's cache */
    for (uint32_t c = 0; c < h->nclasses; c++) {
        opool__hclass *k = &h->cls[c];
        for (opool__hpage *pg = k->avail, *next; pg != NULL; pg = next) {
            next = pg->next;
            if (pg->flags & OPOOL__HPAGE_RESERVED) continue;
            if (k->spare == NULL)
                k->spare = pg;
            else
                opool__heap_retire_page(h, pg);
        }
        opool__heap_settle(h, k); /* its episode, if any, ends: nothing is live */
    }
    opool__heap_settle(h, NULL);
    return OPOOL_OK;
}

/* A block above the largest class: a run (up to OPOOL__RUN_MAX pages, in a
 * heap with a reserved range), else the allocator's. *zero as
 * opool__heap_alloc_in's. */
static OPOOL_NOINLINE void *opool__heap_alloc_large(opool_heap *h, size_t size, bool *zero) {
    if (h->desc.flags & OPOOL_HEAP_NO_FALLBACK) return NULL;
    char *p = NULL;
    if (opool__hmap_reserve(h, &h->large)) {
        if (size <= (size_t)OPOOL__RUN_MAX * OPOOL__HPAGE &&
            (p = opool__heap_run_take(h, opool__run_pages(size), zero)) != NULL) {
            opool__mem_undefined(p, size); /* the rest of its last page stays inaccessible */
            h->run_asked += size;
        } else if (opool__heap_mapped(h, size)) {
            bool fresh = false;
            if ((p = (char *)opool__os_map(opool__map_bytes(size), 4096, &fresh)) != NULL) {
                *zero = fresh;
                opool__mem_noaccess(p, opool__map_bytes(size));
                opool__mem_undefined(p, size);
            }
        } else {
            p = (char *)h->mem.alloc(h->mem.ctx, size, 16);
        }
    }
    if (p == NULL) {
        opool__heap_failed(h, NULL);
        return NULL;
    }
    opool__hmap_put(&h->large, (uintptr_t)p, size);
    h->large_bytes += size;
    return p;
}

/* The checks and hooks of block b, just taken from a free list (its first
 * bytes held the free-list link, not poison). */
static void opool__heap_reuse(opool_heap *h, void *b, uint32_t size) {
    if (!opool__track_on_reuse(b, size, sizeof(void *), size, (h->desc.flags & OPOOL_POISON) != 0))
        opool__heap_report(h, OPOOL_EWRITE_AFTER_FREE, b);
}

/* Every alloc the inline path does not serve: h NULL, size 0, fallback
 * sizes, a current page without a free or fresh block, poisoning and
 * checkers; and calloc's. *zero: the block's bytes are known to be zero. */
static void *opool__heap_alloc_in(opool_heap *h, size_t size, bool *zero) {
    *zero = false;
    if (h == NULL) return NULL;
    if (size == 0) size = 1;
    if (size > h->max_size) return opool__heap_alloc_large(h, size, zero);
    uint32_t c = h->hot.class_of[(size + 7) >> 3];
    opool__hclass *k = &h->cls[c];
    char *b;
    opool__hpage *pg;
    for (;;) {
        pg = h->hot.cls[c].page;
        if (pg == &h->none) {
            if (opool__hclass_fixed(h, c) || (pg = opool__heap_add_page(h, c, false)) == NULL) {
                opool__heap_failed(h, k);
                return NULL;
            }
        }
        if (pg->free != NULL) {
            opool__mem_defined(pg->free, sizeof(void *)); /* the link a checker hid */
            b = (char *)opool__hpage_pop(pg);
            if (h->checker || (h->desc.flags & OPOOL_POISON)) opool__heap_reuse(h, b, k->size);
            break;
        }
        if ((b = (char *)opool__hpage_carve(pg)) != NULL) {
            opool__mem_undefined(b, k->size);
            *zero = (pg->flags & OPOOL__HPAGE_ZERO) != 0;
            break;
        }
        opool__heap_unlist(h, pg); /* full: its next free lists it again */
    }
    opool__hpage_lent(pg, b);
    opool__hclass_count_alloc(&h->hot.cls[c], size);
    return b;
}

void *opool__heap_alloc_slow(opool_heap *h, size_t size) {
    bool zero;
    return opool__heap_alloc_in(h, size, &zero);
}

void *opool_heap_calloc(opool_heap *h, size_t n, size_t size) {
    size_t bytes;
    bool zero;
    if (h == NULL || !opool__mul_ok(n, size, &bytes)) return NULL;
    void *p = opool__heap_alloc_in(h, bytes, &zero);
    if (p && !zero) memset(p, 0, bytes);
    if (p && zero) opool__mem_defined(p, bytes); /* fresh memory from the system: zero already */
    return p;
}

/* Free the live block j of page pg. */
static void opool__heap_release(opool_heap *h, opool__hpage *pg, uint32_t j) {
    char *b = (char *)pg->block0 + (size_t)j * pg->size;
    (void)opool__hpage_take_back(pg, b); /* live: opool__heap_locate found it so */
    opool__track_on_free(b, pg->size, sizeof(void *), (h->desc.flags & OPOOL_POISON) != 0);
    opool__hclass_hot *k = &h->hot.cls[pg->cls];
    k->room++;
    opool__heap_settle(h, &h->cls[pg->cls]);
    opool__hpage_after_free(h, k, pg);
}

/* Every free the inline path does not finish: NULL, h NULL, fallback
 * blocks, every rejection, poisoning and checkers. */
opool_status opool__heap_free_slow(opool_heap *h, void *ptr) {
    if (ptr == NULL) return OPOOL_OK;
    if (h == NULL) return OPOOL_EINVAL;
    opool__hpage *pg;
    opool__hentry *large;
    uint32_t j;
    opool_status s = opool__heap_locate(h, ptr, &pg, &j, &large);
    if (s != OPOOL_OK) return s;
    if (large) {
        size_t size = large->size;
        opool__hmap_erase(&h->large, large);
        h->large_bytes -= size;
        if (opool__heap_is_run(h, ptr)) {
            h->run_asked -= size;
            opool__heap_run_put(h, (char *)ptr, opool__run_pages(size));
        } else {
            opool__heap_large_back(h, ptr, size);
        }
        opool__heap_settle(h, NULL);
        return OPOOL_OK;
    }
    opool__heap_release(h, pg, j);
    return OPOOL_OK;
}

/* Every resize the inline path does not finish: a new class, a large
 * block, ptr NULL, size 0, rejections, poisoning and checkers. */
void *opool__heap_realloc_slow(opool_heap *h, void *ptr, size_t size) {
    if (ptr == NULL) return opool_heap_alloc(h, size);
    if (h == NULL) return NULL;
    opool__hpage *pg;
    opool__hentry *large;
    uint32_t j;
    if (opool__heap_locate(h, ptr, &pg, &j, &large) != OPOOL_OK) return NULL;
    if (size == 0) {
        opool_heap_free(h, ptr);
        return NULL;
    }
    size_t old;
    if (large) {
        old = large->size;
        if (size > h->max_size && size <= old) return ptr; /* a large block shrinks in place */
        bool run = opool__heap_is_run(h, ptr);
        if (run && size > h->max_size && opool__run_pages(size) == opool__run_pages(old)) {
            opool__mem_undefined((char *)ptr + old, size - old); /* grows within its pages */
            large->size = size;
            h->large_bytes += size - old;
            h->run_asked += size - old;
            return ptr;
        }
        /* a mapping of its own, growing: the system moves its pages (a new mapping, else) */
        if (!run && opool__heap_mapped(h, old) && opool__heap_mapped(h, size)) {
            size_t had = opool__map_bytes(old), want = opool__map_bytes(size);
            opool__mem_defined(ptr, had); /* a checker's marks must not stay where it was */
            void *n = want == had ? ptr : opool__os_remap(ptr, had, want);
            if (n == NULL) opool__mem_noaccess((char *)ptr + old, had - old);
            if (n != NULL) {
                opool__mem_noaccess((char *)n + size, want - size);
                opool__hmap_erase(&h->large, large);
                opool__hmap_put(&h->large, (uintptr_t)n, size);
                h->large_bytes += size - old;
                return n;
            }
        }
        /* the C library's: it may grow it in place; its result is aligned
         * as max_align_t, which must hold the 16 bytes the header promises */
        if (!run && !opool__heap_mapped(h, old) && size > h->max_size &&
            !opool__heap_mapped(h, size) && h->os && alignof(max_align_t) >= 16) {
            void *n = opool__sys_realloc(ptr, size);
            if (n != NULL) {
                opool__hmap_erase(&h->large, large);
                opool__hmap_put(&h->large, (uintptr_t)n, size);
                h->large_bytes += size - old;
                return n;
            }
        }
    } else {
        old = pg->size;
        if (size <= h->max_size && h->hot.class_of[(size + 7) >> 3] == pg->cls) return ptr;
    }
    void *n = opool_heap_alloc(h, size);
    if (n == NULL) return NULL;
    memcpy(n, ptr, old < size ? old : size);
    opool_heap_free(h, ptr);
    return n;
}

size_t opool_heap_usable_size(const opool_heap *h, const void *ptr) {
    if (h == NULL || ptr == NULL) return 0;
    opool__hpage *pg;
    opool__hentry *large;
    uint32_t j;
    if (opool__heap_locate(h, ptr, &pg, &j, &large) != OPOOL_OK) return 0;
    return large ? large->size : pg->size;
}

void opool_heap_get_stats(const opool_heap *h, opool_heap_stats *out) {
    if (out == NULL) return;
    memset(out, 0, sizeof *out);
    if (h == NULL) return;
    out->version = OPOOL_HEAP_STATS_VERSION;
    out->class_count = h->user_classes;
    out->large_live = h->large.n;
    out->large_bytes = h->large_bytes;
    out->rejected = h->rejected;
    out->bytes = h->bytes + h->large.cap * sizeof(opool__hentry) + (h->large_bytes - h->run_asked) +
                 h->run_held; /* h->bytes: the first tables */
    if (h->regions != h->region0) out->bytes += h->region_cap * sizeof(opool__hregion);
    if (h->pages.e != h->page0) out->bytes += h->pages.cap * sizeof(opool__hentry);
    for (uint32_t i = 0; i < OPOOL__RUN_MAX; i++)
        out->bytes += h->runs[i].cap * sizeof(opool__hrun);
    for (uint32_t i = 0; i < h->nregions; i++) { /* vacant pages of the system's hold nothing */
        const opool__hregion *r = &h->regions[i];
        if (r->base == NULL) continue;
        size_t pages = h->os ? r->held + (size_t)opool__popcount64(r->vacant & r->dirty & ~r->warm)
                             : r->npages;
        out->bytes += pages * OPOOL__HPAGE;
    }
    for (uint32_t c = h->user_classes; c < h->nclasses; c++) { /* the heap's own: large */
        uint32_t live = opool__hclass_live(&h->hot.cls[c]);
        out->large_live += live;
        out->large_bytes += (uint64_t)live * h->cls[c].size;
    }
    for (uint32_t c = 0; c < h->user_classes; c++) {
        const opool__hclass *k = &h->cls[c];
        const opool__hclass_hot *t = &h->hot.cls[c];
        opool_heap_class_stats *o = &out->classes[c];
        o->size = k->size;
        o->blocks = k->blocks;
        o->live = opool__hclass_live(t);
        o->high_water = t->high_water;
        o->allocs = t->allocs + (t->recent >> OPOOL__HRECENT_COUNT);
        o->failed_allocs = k->failed;
        o->requested_bytes = t->requested + (t->recent & OPOOL__HRECENT_BYTES);
        o->wasted_bytes = o->allocs * k->size - o->requested_bytes;
    }
}
