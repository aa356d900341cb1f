/*
 * heap.c -- fuzz target: an opool_heap configuration and a sequence of
 * operations decoded from the input, checked against a plain model: every
 * live block has a shadow copy in malloc'd memory, and the model knows
 * which allocations must succeed, which must fail, what every rejected call
 * returns and reports, and what the statistics say.
 *
 * Input layout (every read past the end gives zeros, so any input is valid):
 *   byte 0     class preset (% HEAP_PRESETS): the defaults (a NULL
 *              class_sizes), sizes that are not multiples of 16 (8-byte
 *              alignment), a few big classes up to OPOOL_HEAP_MAX_CLASS_SIZE,
 *              one class of 64, and all 64 classes of 8..512
 *   byte 1     flags: bit 0 grow (clear: OPOOL_HEAP_FIXED), bit 1 OPOOL_HEAP_NO_FALLBACK,
 *              bit 2 OPOOL_POISON, bit 3 the system's memory (no allocator: the heap's
 *              own reserved range where it has one, and large blocks as runs of its pages;
 *              the allocator's failures and balance then say nothing), bit 4
 *              OPOOL_HEAP_ARENA (destroy reports no leak)
 *   byte 2     blocks_per_class (see configure; capped to keep a run small)
 *   bytes 3-4  u16: 0, or the allocation (1-based) from which the allocator
 *              fails, create's own allocations included
 *   then ops:  one opcode byte each (% HEAP_OP_COUNT), then its arguments
 *
 * After every operation: its result is the model's (a pointer or NULL, a
 * status, a usable size), the reports it made are the ones it must make
 * (rejected calls: exactly one, with the pointer; OPOOL_EFULL only for an
 * allocation that ran out; never OPOOL_EWRITE_AFTER_FREE), the statistics
 * match the model, and a sample of live blocks still equals its shadow
 * (all of them now and then). At the end the heap is destroyed and the
 * counting allocator must have every byte back.
 */
#include "fuzz.h"

#include "opool_heap.h"

#if defined(__SANITIZE_ADDRESS__) || defined(OPOOL_TEST_ASAN)
#define HEAP_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HEAP_ASAN 1
#endif
#endif
#ifdef HEAP_ASAN
#include <sanitizer/asan_interface.h>
#endif

#define MAX_OPS 2048
#define MAX_LIVE 256
#define BIG ((size_t)256 << 10)
#define MAX_BIG 8
#define STALE 32
#define MAX_RESERVED_PAGES 96 /* pages create may reserve, over all classes */
#define PAGE ((uintptr_t)OPOOL_HEAP_PAGE)

enum heap_op {
    HEAP_ALLOC,        /* size (3 bytes, see read_size) */
    HEAP_CALLOC,       /* size, n byte (255: an overflowing n * size) */
    HEAP_REALLOC,      /* u16 live index, size, byte (% 8 == 0: size 0 instead) */
    HEAP_REALLOC_NULL, /* size */
    HEAP_FREE,         /* u16 live index */
    HEAP_USABLE,       /* u16 live index */
    HEAP_BAD,          /* kind byte, how byte (free, realloc, usable_size), u16 (op_bad) */
    HEAP_BURST,        /* count byte, size: that many allocations of one size */
    HEAP_DRAIN,        /* byte: free each live block with probability (b % 4 + 1) / 5 */
    HEAP_ALLOCATOR,    /* byte: bit 0 set: every allocation fails from now on; clear: none */
    HEAP_NULLS,        /* calls on a NULL heap, free(h, NULL), stats of NULL */
    HEAP_CHECK,        /* every live block against its shadow */
    HEAP_CLEAR,        /* opool_heap_clear: every live block gone at once */
    HEAP_OP_COUNT
};

/* ---- presets ------------------------------------------------------------ */

static const uint32_t preset_odd[] = {8, 24, 40, 56, 72, 104, 200, 392, 1000, 2008};
static const uint32_t preset_big[] = {512, 1024, 4096, 8192, OPOOL_HEAP_MAX_CLASS_SIZE};
static const uint32_t preset_one[] = {64};
static uint32_t preset_all[OPOOL_HEAP_MAX_CLASSES]; /* 8, 16, ..., 512 */
static const uint32_t default_sizes[] = {
    16,   32,   48,   64,   80,    96,    112,   128,   144,   160,   176,   192,  208,
    224,  240,  256,  288,  320,   352,   384,   416,   448,   480,   512,   576,  640,
    704,  768,  832,  896,  960,   1024,  1088,  1152,  1280,  1408,  1536,  1664, 1792,
    1920, 2048, 2176, 2560, 3072,  3584,  4096,  4352,  4608,  5120,  5632,  6144, 6656,
    7168, 7680, 8192, 8448, 10240, 12288, 14336, 16384, 20480, 24576, 28672, 32640};
/* The heap's own classes (opool_heap.h): above the desc's largest, unless no fallback. */
static const uint32_t own_sizes[] = {16,   24,   32,   48,    64,    96,    128,  192,
                                     256,  384,  512,  768,   1024,  1536,  2048, 3072,
                                     4096, 6144, 8192, 12288, 16384, 24576, 32640};
#define NOWN (sizeof own_sizes / sizeof own_sizes[0])
#define HEAP_PRESETS 5

/* ---- the harness -------------------------------------------------------- */

typedef struct block {
    unsigned char *p;
    size_t usable;
    int cls; /* -1: large */
    unsigned char *shadow;
} block;

typedef struct klass {
    uint64_t live, high, allocs, failed, requested, blocks0;
    uint32_t per_page;
    bool saw_zero; /* a size-0 request: requested/wasted checked as a sum only */
} klass;

typedef struct fz {
    fuzz_input in;
    opool_heap *h;
    opool_heap_desc d;
    fuzz_mem mem;
    uint64_t mem_failures;                                     /* allocations that returned NULL */
    uint32_t sizes[OPOOL_HEAP_MAX_CLASSES + NOWN], ncls, nall; /* the desc's, then the own */
    bool grow, no_fallback, system;
    uint32_t big_live; /* live blocks above BIG: a few at most, to bound the memory of a run */

    block live[MAX_LIVE]; /* sorted by address */
    uint32_t nlive;
    klass cls[OPOOL_HEAP_MAX_CLASSES + NOWN];
    uint64_t large_live, large_bytes, rejected;
    unsigned char *stale[STALE]; /* freed class blocks (NULL: forgotten, see forget) */
    uint32_t nstale, stale_next;
    unsigned char *cleared[STALE]; /* blocks live at the last clear, not handed out since */
    uint32_t ncleared;
    bool arena; /* OPOOL_HEAP_ARENA: destroy reports no leak */

    /* reports seen during the current operation */
    uint32_t nreports, nefull, nwaf;
    opool_status last_what;
    const void *last_ptr;
    bool ever_failed; /* an allocation ran out before: OPOOL_EFULL may be in its episode */
    uint32_t ran_out; /* allocations of the current operation that ran out */

    unsigned char *foreign; /* a malloc'd block */
    opool_heap *other;      /* another heap, for its block */
    void *other_block;
    uint64_t seq;
    uint32_t op;
    const char *op_name;
} fz;

static fz *current;

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        fprintf(stderr, "op %u (%s): ", current ? current->op : 0,                                 \
                current && current->op_name ? current->op_name : "?");                             \
        FUZZ_FAIL(__VA_ARGS__);                                                                    \
    } while (0)

#define EXPECT(cond)                                                                               \
    do {                                                                                           \
        if (!(cond)) FAIL("check failed: %s", #cond);                                              \
    } while (0)

#define EXPECT_EQ(a, b)                                                                            \
    do {                                                                                           \
        unsigned long long x_ = (unsigned long long)(a), y_ = (unsigned long long)(b);             \
        if (x_ != y_) FAIL("%s == %s: heap 0x%llx, model 0x%llx", #a, #b, x_, y_);                 \
    } while (0)

/* Pages given back, kept for the next page asked for: a 64 KiB-aligned block costs fuzz_mem
 * twice that, which ASan maps and unmaps every time. A cached page is poisoned for ASan,
 * and fuzz_mem counts it as given back, so the balance at the end means the same. Emptied
 * at the end of every input: addresses (and so a finding) must not depend on earlier ones. */
#define PAGE_CACHE 256
static void *page_cache[PAGE_CACHE];
static uint32_t npage_cache;

static void page_cache_empty(void) {
    while (npage_cache > 0) {
        void *p = page_cache[--npage_cache];
#ifdef HEAP_ASAN
        __asan_unpoison_memory_region(p, PAGE);
#endif
        fuzz_mem m = {0};
        m.blocks = 1;
        m.bytes = PAGE;
        fuzz_mem_free(&m, p, PAGE); /* its header holds what free needs */
    }
}

static void *heap_mem_alloc(void *ctx, size_t size, size_t align) {
    fz *f = (fz *)ctx;
    fuzz_mem *m = &f->mem;
    if (size == PAGE && align == PAGE && npage_cache > 0) {
        m->calls++; /* as fuzz_mem_alloc would */
        if (m->fail || (m->fail_from && m->calls >= m->fail_from)) {
            f->mem_failures++;
            return NULL;
        }
        void *p = page_cache[--npage_cache];
#ifdef HEAP_ASAN
        __asan_unpoison_memory_region(p, PAGE);
#endif
        m->blocks++;
        m->bytes += PAGE;
        return p;
    }
    void *p = fuzz_mem_alloc(m, size, align);
    if (p == NULL) f->mem_failures++;
    return p;
}

static void heap_mem_free(void *ctx, void *ptr, size_t size) {
    fz *f = (fz *)ctx;
    fuzz_mem *m = &f->mem;
    if (ptr != NULL && size == PAGE && ((uintptr_t)ptr & (PAGE - 1)) == 0 &&
        npage_cache < PAGE_CACHE) {
        fuzz_mem_header hd; /* fuzz_mem's, in front of every block it hands out */
        memcpy(&hd, (unsigned char *)ptr - sizeof hd, sizeof hd);
        if (hd.size != size) m->size_mismatches++;
        if (hd.size >= PAGE) {
            m->blocks--;
            m->bytes -= hd.size;
#ifdef HEAP_ASAN
            __asan_poison_memory_region(ptr, PAGE);
#endif
            page_cache[npage_cache++] = ptr;
            return;
        }
    }
    fuzz_mem_free(m, ptr, size);
}

static void on_report(opool_heap *h, opool_status what, const void *ptr, void *user) {
    fz *f = (fz *)user;
    if (f->h != NULL && h != f->h) FAIL("report for another heap");
    f->nreports++;
    if (what == OPOOL_EFULL) f->nefull++;
    if (what == OPOOL_EWRITE_AFTER_FREE) f->nwaf++;
    f->last_what = what;
    f->last_ptr = ptr;
}

static void other_report(opool_heap *h, opool_status what, const void *ptr, void *user) {
    (void)h, (void)ptr, (void)user;
    FAIL("the other heap reported %d", (int)what);
}

/* ---- the model ---------------------------------------------------------- */

static int class_of(const fz *f, size_t size) {
    if (size == 0) size = 1;
    for (uint32_t c = 0; c < f->nall; c++)
        if (size <= f->sizes[c]) return (int)c;
    return -1;
}

/* Blocks the stats count as large: above the desc's classes (the heap's own, and the rest). */
static bool is_large(const fz *f, int cls) { return cls < 0 || (uint32_t)cls >= f->ncls; }

static uint32_t find(const fz *f, const unsigned char *p) {
    uint32_t lo = 0, hi = f->nlive;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if ((uintptr_t)f->live[mid].p < (uintptr_t)p)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void check_contents(const block *b) {
    if (memcmp(b->p, b->shadow, b->usable) != 0) {
        size_t k = 0;
        while (b->p[k] == b->shadow[k]) k++;
        FAIL("block %p (usable %zu) changed at byte %zu", (void *)b->p, b->usable, k);
    }
}

/* A block the heap just handed out: size, alignment, no overlap; tracked, pattern written
 * after the first `keep` bytes (which must be `kept`). */
static void insert(fz *f, unsigned char *p, size_t asked, int cls, size_t keep,
                   const unsigned char *kept) {
    size_t usable = opool_heap_usable_size(f->h, p);
    if (cls >= 0) {
        EXPECT_EQ(usable, f->sizes[cls]);
        EXPECT_EQ((uintptr_t)p % (f->sizes[cls] % 16 == 0 ? 16 : 8), 0);
    } else {
        EXPECT_EQ(usable, asked);
        EXPECT_EQ((uintptr_t)p % 16, 0);
    }
    uint32_t at = find(f, p);
    if (at < f->nlive && (uintptr_t)p + usable > (uintptr_t)f->live[at].p)
        FAIL("new block %p+%zu overlaps live block %p", (void *)p, usable, (void *)f->live[at].p);
    if (at > 0 && (uintptr_t)f->live[at - 1].p + f->live[at - 1].usable > (uintptr_t)p)
        FAIL("new block %p overlaps live block %p+%zu", (void *)p, (void *)f->live[at - 1].p,
             f->live[at - 1].usable);
    if (keep && memcmp(p, kept, keep) != 0) FAIL("realloc lost the contents");
    for (uint32_t k = 0; k < f->ncleared; k++)
        if (f->cleared[k] == p) f->cleared[k] = NULL; /* a block again */
    if (f->nlive == MAX_LIVE) abort();                /* the callers keep room */
    memmove(&f->live[at + 1], &f->live[at], (f->nlive - at) * sizeof f->live[0]);
    f->nlive++;
    block *b = &f->live[at];
    b->p = p;
    b->usable = usable;
    b->cls = cls;
    b->shadow = (unsigned char *)malloc(usable);
    if (!b->shadow) abort();
    /* a pattern of this block's own: a byte, and a distinct word every 64 bytes (cheap: a
     * byte at a time costs most of a run under the fuzzer's instrumentation) */
    uint64_t x = ++f->seq * 0x9E3779B97F4A7C15u;
    memset(p + keep, (int)(x >> 56) | 1, usable - keep);
    for (size_t k = keep; k < usable; k += 64) {
        uint64_t w = x ^ (k * 0xBF58476D1CE4E5B9u);
        memcpy(p + k, &w, usable - k < 8 ? usable - k : 8);
    }
    memcpy(b->shadow, p, usable);
    if (cls >= 0) {
        klass *k = &f->cls[cls];
        if (++k->live > k->high) k->high = k->live;
        k->allocs++;
        k->requested += asked;
        if (asked == 0) k->saw_zero = true;
    }
    if (is_large(f, cls)) {
        f->large_live++;
        f->large_bytes += usable;
        f->big_live += usable > BIG;
    }
}

/* Does a live block of class cls sit in p's page (so the page is still the heap's)? */
static bool page_held(const fz *f, const unsigned char *p, int cls) {
    uintptr_t page = (uintptr_t)p & ~(PAGE - 1);
    for (uint32_t at = find(f, (const unsigned char *)page);
         at < f->nlive && (uintptr_t)f->live[at].p < page + PAGE; at++)
        if (f->live[at].cls == cls) return true;
    return false;
}

/* Live block i is gone: the model forgets it, and remembers its address as freed. With
 * growth (no OPOOL_HEAP_FIXED), a page left without a live block may leave its class for the
 * heap's cache (then no block of the heap: OPOOL_EINVAL, not OPOOL_ESTALE) and come back, to
 * any class, its blocks not handed out yet: the freed addresses of such a page are forgotten
 * too. */
static void forget(fz *f, uint32_t i) {
    block b = f->live[i];
    free(b.shadow);
    memmove(&f->live[i], &f->live[i + 1], (f->nlive - i - 1) * sizeof f->live[0]);
    f->nlive--;
    if (is_large(f, b.cls)) {
        f->large_live--;
        f->large_bytes -= b.usable;
        f->big_live -= b.usable > BIG;
    }
    if (b.cls < 0) return;
    f->cls[b.cls].live--;
    f->stale[f->stale_next] = b.p;
    f->stale_next = (f->stale_next + 1) % STALE;
    if (f->nstale < STALE) f->nstale++;
    if ((f->grow || is_large(f, b.cls)) && !page_held(f, b.p, b.cls)) { /* own classes grow */
        uintptr_t page = (uintptr_t)b.p & ~(PAGE - 1);
        for (uint32_t k = 0; k < f->nstale; k++)
            if (((uintptr_t)f->stale[k] & ~(PAGE - 1)) == page) f->stale[k] = NULL;
    }
}

/* Free live block i, checking it first (and its poison after, where it may be read: not
 * under ASan, and not when its page may have left its class and gone back to the system). */
static void free_live(fz *f, uint32_t i) {
    block b = f->live[i];
    check_contents(&b);
    EXPECT_EQ(opool_heap_free(f->h, b.p), OPOOL_OK);
    forget(f, i);
#ifndef HEAP_ASAN
    if ((f->d.flags & OPOOL_POISON) && b.cls >= 0 &&
        ((!f->grow && !is_large(f, b.cls)) || page_held(f, b.p, b.cls))) {
        static const unsigned char poison[4] = {0x0b, 0xdb, 0xea, 0x1d};
        for (size_t k = 8; k < b.usable; k++)
            if (b.p[k] != poison[k & 3]) FAIL("freed block %p not poisoned at %zu", (void *)b.p, k);
    }
#endif
}

/* An allocation of class cls (or large: -1) returned p: the model's verdict. With an
 * allocation of the allocator failing during it (failures_before), a class that had to
 * grow, or a large block, may be NULL; nothing else may. */
static bool alloc_outcome(fz *f, const void *p, int cls, uint64_t failures_before) {
    bool mem_failed = f->mem_failures != failures_before;
    if (is_large(f, cls)) { /* the heap's own classes grow, as large blocks do */
        if (f->no_fallback) {
            EXPECT(p == NULL);
            return false;
        }
        if (p == NULL && !mem_failed) FAIL("a large allocation failed, the allocator did not");
        if (p == NULL) f->ran_out++;
        return p != NULL;
    }
    klass *k = &f->cls[cls];
    if (p != NULL) {
        if (!f->grow && k->live >= k->blocks0) FAIL("class %d handed out more than it holds", cls);
        return true;
    }
    opool_heap_stats s;
    opool_heap_get_stats(f->h, &s);
    uint64_t blocks = s.classes[cls].blocks;
    if (k->live < blocks)
        FAIL("class %d failed with %llu of %llu blocks live", cls, (unsigned long long)k->live,
             (unsigned long long)blocks);
    if (f->grow && !mem_failed) FAIL("class %d did not grow, the allocator did not fail", cls);
    k->failed++;
    f->ran_out++;
    return false;
}

/* ---- the checks after every operation ----------------------------------- */

static void check_stats(fz *f) {
    opool_heap_stats s;
    opool_heap_get_stats(f->h, &s);
    EXPECT_EQ(s.version, OPOOL_HEAP_STATS_VERSION);
    EXPECT_EQ(s.class_count, f->ncls);
    EXPECT_EQ(s.large_live, f->large_live);
    EXPECT_EQ(s.large_bytes, f->large_bytes);
    EXPECT_EQ(s.rejected, f->rejected);
    uint64_t held[OPOOL_HEAP_MAX_CLASSES + NOWN] = {0};
    uintptr_t last = 0;
    for (uint32_t i = 0; i < f->nlive; i++) {
        uintptr_t page = (uintptr_t)f->live[i].p & ~(PAGE - 1);
        if (f->live[i].cls >= 0 && page != last) held[f->live[i].cls]++, last = page;
    }
    for (uint32_t c = 0; c < f->ncls; c++) {
        const opool_heap_class_stats *x = &s.classes[c];
        const klass *k = &f->cls[c];
        EXPECT_EQ(x->size, f->sizes[c]);
        EXPECT_EQ(x->live, k->live);
        EXPECT_EQ(x->high_water, k->high);
        EXPECT_EQ(x->allocs, k->allocs);
        EXPECT_EQ(x->failed_allocs, k->failed);
        EXPECT_EQ(x->requested_bytes + x->wasted_bytes, k->allocs * f->sizes[c]);
        if (!k->saw_zero) EXPECT_EQ(x->requested_bytes, k->requested);
        if (f->grow) {
            uint64_t per = k->per_page, reserved = k->blocks0 / per;
            EXPECT_EQ(x->blocks % per, 0);
            EXPECT(x->blocks >= per * (reserved > held[c] ? reserved : held[c]));
            EXPECT(x->blocks <= per * (reserved + held[c] + 1));
        } else {
            EXPECT_EQ(x->blocks, k->blocks0);
        }
    }
    EXPECT(s.bytes >= f->large_bytes);
}

/* The reports of the operation: `rejected` calls made exactly one report each (checked where
 * they happen); OPOOL_EFULL only for allocations that ran out, at most once each (an
 * episode's 1st, 2nd, 4th... failure), and always for the first that ever ran out. */
static void check_reports(fz *f, uint32_t rejected) {
    EXPECT_EQ(f->nwaf, 0);
    if (f->nefull > f->ran_out) FAIL("%u EFULL reports for %u failures", f->nefull, f->ran_out);
    if (f->ran_out && !f->ever_failed) EXPECT(f->nefull >= 1); /* the first episode */
    if (f->ran_out) f->ever_failed = true;
    EXPECT_EQ(f->nreports, f->nefull + rejected);
}

/* ---- decoding ----------------------------------------------------------- */

/* Sizes: mostly small, some up to the largest class, some above it. */
static size_t read_size(fz *f) {
    uint8_t kind = fuzz_u8(&f->in);
    uint16_t v = fuzz_u16(&f->in);
    size_t largest = f->sizes[f->ncls - 1];
    switch (kind % 8) {
    case 0:
    case 1:
    case 2:
        return v % 129;
    case 3:
    case 4:
        return v % 1025;
    case 5:
        return v % (largest + 1);
    case 6:
        return largest - v % 9 + v % 17; /* around the largest class */
    default: /* above the largest class: one page of runs, or now and then up to 70 */
        if (v % 16 == 0 && f->big_live < MAX_BIG) return largest + 1 + (size_t)(v >> 4) * 1100;
        return largest + 1 + v % 8192;
    }
}

static uint32_t pick(fz *f) { return f->nlive ? fuzz_u16(&f->in) % f->nlive : 0; }

/* ---- operations --------------------------------------------------------- */

static void op_alloc(fz *f, int how) {
    size_t size = read_size(f), n = 1, each = size;
    if (how == 1) {
        uint8_t nb = fuzz_u8(&f->in);
        if (nb == 255) { /* n * size overflows: NULL, nothing counted, no report */
            EXPECT(opool_heap_calloc(f->h, SIZE_MAX / 2 + 1, 2 + size) == NULL);
            return;
        }
        n = 1 + nb % 8;
        each = size / n;
        size = n * each;
    } else if (how == 2 && size == 0) {
        size = 1; /* realloc(NULL, 0): left alone */
    }
    if (f->nlive == MAX_LIVE) return;
    int cls = class_of(f, size);
    uint64_t failures = f->mem_failures;
    unsigned char *p;
    if (how == 0)
        p = (unsigned char *)opool_heap_alloc(f->h, size);
    else if (how == 1)
        p = (unsigned char *)opool_heap_calloc(f->h, n, each);
    else
        p = (unsigned char *)opool_heap_realloc(f->h, NULL, size);
    if (!alloc_outcome(f, p, cls, failures)) return;
    if (how == 1)
        for (size_t k = 0; k < size; k++)
            if (p[k] != 0) FAIL("calloc block %p not zero at %zu", (void *)p, k);
    insert(f, p, size, cls, 0, NULL);
}

static void op_realloc(fz *f) {
    uint32_t i = pick(f);
    size_t size = read_size(f);
    if (fuzz_u8(&f->in) % 8 == 0) size = 0;
    if (!f->nlive) return;
    block b = f->live[i];
    check_contents(&b);
    int cls = class_of(f, size);
    uint64_t failures = f->mem_failures;
    unsigned char *q = (unsigned char *)opool_heap_realloc(f->h, b.p, size);
    if (size == 0) {
        EXPECT(q == NULL);
        forget(f, i);
        return;
    }
    if (cls >= 0 && cls == b.cls) { /* stays in its class */
        EXPECT(q == b.p);
        check_contents(&b);
        return;
    }
    if (cls < 0 && b.cls < 0 && (size < b.usable || (size == b.usable && q == b.p))) {
        /* a large block shrinking (above the largest class) is kept as it is */
        EXPECT(q == b.p);
        EXPECT_EQ(opool_heap_usable_size(f->h, q), b.usable);
        check_contents(&b);
        return;
    }
    if (!alloc_outcome(f, q, cls, failures)) {
        EXPECT_EQ(opool_heap_usable_size(f->h, b.p), b.usable); /* still live, unchanged */
        check_contents(&b);
        return;
    }
    /* a large block growing may stay where it is: a run within its pages, or the C
     * library's realloc (the system's memory) */
    if (q == b.p) EXPECT(f->system && cls < 0 && b.cls < 0);
    size_t keep = b.usable < size ? b.usable : size;
    unsigned char *kept = (unsigned char *)malloc(keep ? keep : 1);
    if (!kept) abort();
    memcpy(kept, b.shadow, keep);
    forget(f, i);
    insert(f, q, size, cls, keep, kept);
    free(kept);
}

/* Is p inside (or at) a live block? */
static bool covered(const fz *f, const unsigned char *p) {
    uint32_t at = find(f, p);
    if (at < f->nlive && f->live[at].p == p) return true;
    return at > 0 && (uintptr_t)f->live[at - 1].p + f->live[at - 1].usable > (uintptr_t)p;
}

/* A call on p that must be rejected with want: free, realloc or usable_size. */
static void rejected_call(fz *f, const void *p, opool_status want, uint8_t how) {
    uint32_t n = f->nreports;
    switch (how % 3) {
    case 0:
        EXPECT_EQ(opool_heap_free(f->h, (void *)(uintptr_t)p), want);
        break;
    case 1:
        EXPECT(opool_heap_realloc(f->h, (void *)(uintptr_t)p, 1 + how) == NULL);
        break;
    default:
        EXPECT_EQ(opool_heap_usable_size(f->h, p), 0);
        break;
    }
    EXPECT_EQ(f->nreports, n + 1);
    EXPECT_EQ(f->last_what, want);
    if (f->last_ptr != p) FAIL("reported %p, not %p", f->last_ptr, p);
    f->rejected++;
}

/* Returns the number of rejected calls made. */
static uint32_t op_bad(fz *f) {
    uint8_t kind = fuzz_u8(&f->in), how = fuzz_u8(&f->in);
    uint16_t arg = fuzz_u16(&f->in);
    int local = 0;
    switch (kind % 9) {
    case 0:
        rejected_call(f, f->foreign + arg % 100, OPOOL_EINVAL, how);
        return 1;
    case 8: /* live at the last clear: no block of the heap */
        if (!f->ncleared) return 0;
        {
            unsigned char *p = f->cleared[arg % f->ncleared];
            if (p == NULL || covered(f, p)) return 0;
            rejected_call(f, p, OPOOL_EINVAL, how);
        }
        return 1;
    case 1:
        rejected_call(f, (const unsigned char *)&local, OPOOL_EINVAL, how);
        return 1;
    case 2: /* small addresses, and 64 KiB-aligned ones around a live block */
        if (f->nlive && arg % 2) {
            uintptr_t page = (uintptr_t)f->live[arg % f->nlive].p & ~(PAGE - 1);
            const unsigned char *p =
                (const unsigned char *)(page + ((uintptr_t)(arg >> 1) % 9 - 4) * PAGE);
            if (covered(f, p)) return 0; /* a large block may start there, by chance */
            rejected_call(f, p, OPOOL_EINVAL, how);
        } else {
            rejected_call(f, (const void *)(uintptr_t)(1 + arg % 4096), OPOOL_EINVAL, how);
        }
        return 1;
    case 3:
        if (f->other == NULL) {
            static const uint32_t one[] = {64};
            opool_heap_desc d;
            memset(&d, 0, sizeof d);
            d.class_sizes = one;
            d.class_count = 1;
            d.report = other_report;
            if (opool_heap_create(&f->other, &d) != OPOOL_OK) FAIL("the other heap");
            f->other_block = opool_heap_alloc(f->other, 64);
            EXPECT(f->other_block != NULL);
        }
        rejected_call(f, f->other_block, OPOOL_EINVAL, how);
        return 1;
    case 4:
    case 5: /* inside a live block */
        if (!f->nlive) return 0;
        {
            const block *b = &f->live[arg % f->nlive];
            rejected_call(f, b->p + 1 + (size_t)(arg >> 4) % (b->usable - 1), OPOOL_EINVAL, how);
        }
        return 1;
    default: /* a freed block start, in a page the heap has held since */
        if (!f->nstale) return 0;
        {
            /* its page has held a live block of its class ever since (see forget) */
            unsigned char *p = f->stale[arg % f->nstale];
            if (p == NULL || covered(f, p)) return 0;
            rejected_call(f, p, OPOOL_ESTALE, how);
        }
        return 1;
    }
}

static void op_burst(fz *f) {
    uint32_t n = 1 + fuzz_u8(&f->in) % 96;
    size_t size = read_size(f);
    int cls = class_of(f, size);
    for (uint32_t k = 0; k < n && f->nlive < MAX_LIVE && (size <= BIG || f->big_live < MAX_BIG);
         k++) {
        uint64_t failures = f->mem_failures;
        unsigned char *p = (unsigned char *)opool_heap_alloc(f->h, size);
        if (alloc_outcome(f, p, cls, failures)) insert(f, p, size, cls, 0, NULL);
    }
}

static void op_drain(fz *f) {
    uint8_t b = fuzz_u8(&f->in);
    uint32_t keep = 4 - b % 4, x = b * 2654435761u;
    for (uint32_t i = f->nlive; i-- > 0;) {
        x = x * 1103515245u + 12345u;
        if ((x >> 16) % 5 >= keep) free_live(f, i);
    }
}

/* opool_heap_clear: the model forgets every live block (remembering some addresses: a call on
 * one is rejected now) and every freed one (their pages' blocks are all to be handed out
 * again). */
static void op_clear(fz *f) {
    f->ncleared = 0;
    for (uint32_t i = 0; i < f->nlive; i++) {
        block *b = &f->live[i];
        check_contents(b);
        if (f->ncleared < STALE && (i * 2654435761u >> 7) % 2) f->cleared[f->ncleared++] = b->p;
        if (is_large(f, b->cls)) {
            f->large_live--;
            f->large_bytes -= b->usable;
            f->big_live -= b->usable > BIG;
        }
        if (b->cls >= 0) f->cls[b->cls].live--;
        free(b->shadow);
    }
    f->nlive = 0;
    f->nstale = f->stale_next = 0;
    EXPECT_EQ(opool_heap_clear(f->h), OPOOL_OK);
}

static void op_nulls(fz *f) {
    opool_heap_stats s;
    memset(&s, 0xA5, sizeof s);
    opool_heap_get_stats(NULL, &s);
    EXPECT_EQ(s.version, 0);
    EXPECT_EQ(s.class_count, 0);
    EXPECT_EQ(s.bytes, 0);
    EXPECT(opool_heap_alloc(NULL, 10) == NULL);
    EXPECT(opool_heap_calloc(NULL, 1, 10) == NULL);
    EXPECT(opool_heap_realloc(NULL, NULL, 10) == NULL);
    EXPECT_EQ(opool_heap_free(f->h, NULL), OPOOL_OK);
    if (f->nlive) EXPECT_EQ(opool_heap_free(NULL, f->live[0].p), OPOOL_EINVAL);
    opool_heap_destroy(NULL);
}

/* ---- configuration ------------------------------------------------------ */

static void configure(fz *f) {
    fuzz_input *in = &f->in;
    opool_heap_desc *d = &f->d;
    memset(d, 0, sizeof *d);
    uint8_t preset = fuzz_u8(in) % HEAP_PRESETS, flags = fuzz_u8(in), b2 = fuzz_u8(in);
    uint16_t fail_from = fuzz_u16(in);
    for (uint32_t k = 0; k < OPOOL_HEAP_MAX_CLASSES; k++) preset_all[k] = 8 * (k + 1);
    switch (preset) {
    case 0: /* the defaults, through a NULL class_sizes */
        memcpy(f->sizes, default_sizes, sizeof default_sizes);
        f->ncls = sizeof default_sizes / sizeof default_sizes[0];
        break;
    case 1:
        d->class_sizes = preset_odd;
        d->class_count = sizeof preset_odd / sizeof preset_odd[0];
        break;
    case 2:
        d->class_sizes = preset_big;
        d->class_count = sizeof preset_big / sizeof preset_big[0];
        break;
    case 3:
        d->class_sizes = preset_one;
        d->class_count = 1;
        break;
    default:
        d->class_sizes = preset_all;
        d->class_count = OPOOL_HEAP_MAX_CLASSES;
        break;
    }
    if (d->class_sizes) {
        memcpy(f->sizes, d->class_sizes, d->class_count * sizeof f->sizes[0]);
        f->ncls = d->class_count;
    }
    if (!(flags & 1)) d->flags |= OPOOL_HEAP_FIXED; /* growth is the default */
    if (flags & 2) d->flags |= OPOOL_HEAP_NO_FALLBACK;
    if (flags & 4) d->flags |= OPOOL_POISON;
    if (flags & 16) d->flags |= OPOOL_HEAP_ARENA;
    f->arena = (flags & 16) != 0;
    f->grow = (flags & 1) != 0;
    f->no_fallback = (flags & 2) != 0;
    f->nall = f->ncls;
    for (uint32_t k = 0; k < NOWN && !f->no_fallback; k++)
        if (own_sizes[k] > f->sizes[f->ncls - 1]) f->sizes[f->nall++] = own_sizes[k];

    uint32_t bpc = b2 < 128   ? b2 % 8
                   : b2 < 224 ? (uint32_t)(b2 - 128) * 8
                              : (uint32_t)(b2 - 224) * 300;
    /* keep the reservation small: halve until the pages (estimated) fit */
    for (;;) {
        uint64_t pages = 0;
        for (uint32_t c = 0; c < f->ncls; c++) {
            uint64_t per = (OPOOL_HEAP_PAGE - 1024) / f->sizes[c];
            pages += bpc ? (bpc + per - 1) / per : 1;
        }
        if (pages <= MAX_RESERVED_PAGES + f->ncls || bpc == 0) break;
        bpc /= 2;
    }
    d->blocks_per_class = bpc;
    d->report = on_report;
    d->flags |= OPOOL_REPORT_UNRATIONED; /* every report counted */
    d->user = f;
    opool_allocator a = {.alloc = heap_mem_alloc, .free = heap_mem_free, .ctx = f};
    f->system = (flags & 8) != 0;
    if (!f->system) d->allocator = a; /* else the system's memory: pages and runs */
    f->mem.fail_from = fail_from;
}

/* Blocks per page of each class: a one-class heap with blocks_per_class 1 holds one page
 * (measured once per size). */
static void measure_pages(fz *f) {
    static uint32_t known[OPOOL_HEAP_MAX_CLASS_SIZE / 8 + 1];
    for (uint32_t c = 0; c < f->ncls; c++) {
        if (known[f->sizes[c] / 8]) {
            f->cls[c].per_page = known[f->sizes[c] / 8];
            continue;
        }
        opool_heap *h = NULL;
        opool_heap_desc d;
        memset(&d, 0, sizeof d);
        d.class_sizes = &f->sizes[c];
        d.class_count = 1;
        d.blocks_per_class = 1;
        if (opool_heap_create(&h, &d) != OPOOL_OK) FAIL("a one-class heap of %u", f->sizes[c]);
        opool_heap_stats s;
        opool_heap_get_stats(h, &s);
        f->cls[c].per_page = known[f->sizes[c] / 8] = s.classes[0].blocks;
        opool_heap_destroy(h);
        EXPECT(f->cls[c].per_page > 0);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fz *f = (fz *)calloc(1, sizeof *f);
    if (!f) abort();
    current = f;
    f->in.p = data;
    f->in.n = size;
    f->op_name = "create";
    configure(f);
    f->foreign = (unsigned char *)malloc(100);
    if (!f->foreign) abort();

    opool_heap *h = (opool_heap *)(uintptr_t)0x1000;
    opool_status s = opool_heap_create(&h, &f->d);
    if (s != OPOOL_OK) {
        /* only a failing allocator may stop it, and then nothing is kept */
        EXPECT_EQ(s, OPOOL_ENOMEM);
        EXPECT(h == NULL);
        EXPECT(f->mem_failures > 0);
        EXPECT_EQ(f->nreports, 0);
        FUZZ_CHECK_MEM_BALANCED(&f->mem);
        page_cache_empty();
        free(f->foreign);
        free(f);
        current = NULL;
        return 0;
    }
    f->h = h;
    measure_pages(f);
    opool_heap_stats s0;
    opool_heap_get_stats(h, &s0);
    for (uint32_t c = 0; c < f->ncls; c++) {
        f->cls[c].blocks0 = s0.classes[c].blocks;
        /* blocks_per_class 0: one page each in a fixed heap, none in one that grows */
        uint32_t per = f->cls[c].per_page, want = f->d.blocks_per_class ? f->d.blocks_per_class
                                                  : f->grow             ? 0
                                                                        : 1;
        EXPECT_EQ(f->cls[c].blocks0, (uint64_t)(want + per - 1) / per * per);
    }
    check_stats(f);

    for (f->op = 1; f->in.n > 0 && f->op <= MAX_OPS; f->op++) {
        uint8_t op = fuzz_u8(&f->in);
        uint32_t rejected = 0;
        f->nreports = f->nefull = f->nwaf = 0;
        f->ran_out = 0;
        switch ((enum heap_op)(op % HEAP_OP_COUNT)) {
        case HEAP_ALLOC:
            f->op_name = "alloc";
            op_alloc(f, 0);
            break;
        case HEAP_CALLOC:
            f->op_name = "calloc";
            op_alloc(f, 1);
            break;
        case HEAP_REALLOC:
            f->op_name = "realloc";
            op_realloc(f);
            break;
        case HEAP_REALLOC_NULL:
            f->op_name = "realloc(NULL)";
            op_alloc(f, 2);
            break;
        case HEAP_FREE:
            f->op_name = "free";
            if (f->nlive) free_live(f, pick(f));
            break;
        case HEAP_USABLE:
            f->op_name = "usable_size";
            if (f->nlive) {
                const block *b = &f->live[pick(f)];
                EXPECT_EQ(opool_heap_usable_size(f->h, b->p), b->usable);
            }
            break;
        case HEAP_BAD:
            f->op_name = "bad pointer";
            rejected = op_bad(f);
            break;
        case HEAP_BURST:
            f->op_name = "burst";
            op_burst(f);
            break;
        case HEAP_DRAIN:
            f->op_name = "drain";
            op_drain(f);
            break;
        case HEAP_ALLOCATOR:
            f->op_name = "allocator";
            f->mem.fail = fuzz_u8(&f->in) & 1;
            break;
        case HEAP_NULLS:
            f->op_name = "nulls";
            op_nulls(f);
            break;
        case HEAP_CHECK:
            f->op_name = "check";
            for (uint32_t i = 0; i < f->nlive; i++) check_contents(&f->live[i]);
            break;
        case HEAP_CLEAR:
            f->op_name = "clear";
            op_clear(f);
            break;
        case HEAP_OP_COUNT:
            break;
        }
        f->op_name = "after";
        check_reports(f, rejected);
        check_stats(f);
        for (uint32_t k = 0; k < 4 && f->nlive; k++)
            check_contents(&f->live[(f->op * 7919u + k * 104729u) % f->nlive]);
    }

    /* the end: half freed one by one, the rest by destroy; every byte back */
    f->op_name = "destroy";
    f->mem.fail = false;
    for (uint32_t i = f->nlive; i-- > 0;) {
        check_contents(&f->live[i]);
        if (i % 2) free_live(f, i);
    }
    check_stats(f);
    for (uint32_t i = 0; i < f->nlive; i++) free(f->live[i].shadow);
    /* the blocks left live: one OPOOL_ELEAK */
    uint32_t reports = f->nreports, left = (f->nlive + 1) / 2;
    opool_heap_destroy(f->h);
    f->h = NULL;
    FUZZ_CHECK_EQ(f->nreports - reports, left && !f->arena ? 1u : 0u);
    if (left && !f->arena) FUZZ_CHECK_EQ(f->last_what, OPOOL_ELEAK);
    FUZZ_CHECK_MEM_BALANCED(&f->mem);
    page_cache_empty();
    if (f->other) FUZZ_CHECK_EQ(opool_heap_free(f->other, f->other_block), OPOOL_OK);
    opool_heap_destroy(f->other);
    free(f->foreign);
    free(f);
    current = NULL;
    return 0;
}
