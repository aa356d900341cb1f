/*
 * test_heap.c -- opool_heap, the malloc-shaped heap of size-class pools
 * (include/opool_heap.h): one behaviour per test, exact results, then a
 * randomized differential test against malloc with shadow copies.
 *
 * Only the public API and its statistics are used (and, without POSIX's
 * nanosleep, the heap's clock to wait on). The number of blocks a
 * 64 KiB page holds is not in the header; it is measured (a heap with
 * blocks_per_class 1 holds exactly one page per class) and checked to waste
 * less than a block beyond the page header and its bitmap (opool_heap.h).
 */
#if !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#endif

#include "opool_heap.h"
#include "counting.h"
#include "opool_platform.h" /* opool__now_ns: the heap's clock; OPOOL__MMAP: single pages go back */
#include "test.h"

#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PAGE ((uintptr_t)OPOOL_HEAP_PAGE)
#define LARGEST 32640u /* the largest default class */
/* Runs, large blocks on the heap's own pages: where a heap with the system's memory reserves an
 * address range (opool_heap.h, MEMORY). Asked of the heap itself, since the range depends on
 * the build (OPOOL_HEAP_SPAN) and the system: a default heap's two blocks above the largest
 * class both at a page boundary (runs are; a C library block by chance, one in 4096). */
static bool runs_here(void) {
    static int known = -1;
    if (known < 0) {
        opool_heap *h = NULL;
        known = 0;
        if (opool_heap_create(&h, NULL) == OPOOL_OK) {
            void *a = opool_heap_alloc(h, LARGEST + 1), *b = opool_heap_alloc(h, LARGEST + 1);
            known = a && b && (uintptr_t)a % PAGE == 0 && (uintptr_t)b % PAGE == 0;
            if (opool_heap_free(h, a) != OPOOL_OK || opool_heap_free(h, b) != OPOOL_OK) known = 0;
            opool_heap_destroy(h);
        }
    }
    return known != 0;
}
#define RUNS runs_here()

/* The default classes, as the header lists them. */
#define NDEFAULT 64
static const uint32_t default_sizes[NDEFAULT] = {
    16,   32,   48,   64,   80,    96,    112,   128,   144,   160,   176,   192,  208,
    224,  240,  256,  288,  320,   352,   384,   416,   448,   480,   512,   576,  640,
    704,  768,  832,  896,  960,   1024,  1088,  1152,  1280,  1408,  1536,  1664, 1792,
    1920, 2048, 2176, 2560, 3072,  3584,  4096,  4352,  4608,  5120,  5632,  6144, 6656,
    7168, 7680, 8192, 8448, 10240, 12288, 14336, 16384, 20480, 24576, 28672, 32640};

/* The heap's own classes, as the header lists them: above the desc's largest class. */
#define NOWN 23
static const uint32_t own_sizes[NOWN] = {16,   24,   32,   48,    64,    96,    128,  192,
                                         256,  384,  512,  768,   1024,  1536,  2048, 3072,
                                         4096, 6144, 8192, 12288, 16384, 24576, 32640};

/* ---- helpers ------------------------------------------------------------ */

/* Every report, and the last one's details. */
typedef struct recorder {
    int n;
    int by_what[16];
    opool_status what;
    const void *ptr;
    opool_heap *heap;
} recorder;

static void rec_report(opool_heap *h, opool_status what, const void *ptr, void *user) {
    recorder *r = (recorder *)user;
    r->n++;
    if ((unsigned)what < 16) r->by_what[what]++;
    r->what = what;
    r->ptr = ptr;
    r->heap = h;
}

static void rec_reset(recorder *r) { memset(r, 0, sizeof *r); }

/* A desc with a recording report (and the defaults otherwise). */
static opool_heap_desc desc_of(recorder *r) {
    opool_heap_desc d;
    memset(&d, 0, sizeof d);
    if (r) {
        rec_reset(r);
        d.report = rec_report;
        d.flags |= OPOOL_REPORT_UNRATIONED; /* every report counted */
        d.user = r;
    }
    return d;
}

static opool_heap *create(const opool_heap_desc *d) {
    opool_heap *h = NULL;
    if (opool_heap_create(&h, d) != OPOOL_OK) return NULL;
    return h;
}

/* Destroy a heap built on a counting allocator: every byte it took is back,
 * and it freed nothing it did not get. */
static void destroy_counted_at(opool_heap *h, const counting *c, int line) {
    opool_heap_destroy(h);
    if (c->blocks != 0)
        test__fail_at(__FILE__, line, "c.blocks == 0 after destroy", (uint64_t)c->blocks, 0, 1);
    if (c->bad_frees != 0)
        test__fail_at(__FILE__, line, "c.bad_frees == 0", (uint64_t)c->bad_frees, 0, 1);
}
#define DESTROY_COUNTED(h, c) destroy_counted_at(h, c, __LINE__)

static opool_heap_stats stats_of(const opool_heap *h) {
    opool_heap_stats s;
    opool_heap_get_stats(h, &s);
    return s;
}

/* Every field equal, rejected aside (its expected difference is given). */
static bool stats_same(const opool_heap_stats *a, const opool_heap_stats *b,
                       uint64_t rejected_diff) {
    if (a->version != b->version || a->class_count != b->class_count ||
        a->large_live != b->large_live || a->large_bytes != b->large_bytes ||
        b->rejected != a->rejected + rejected_diff || a->bytes != b->bytes)
        return false;
    for (uint32_t c = 0; c < a->class_count && c < OPOOL_HEAP_MAX_CLASSES; c++) {
        const opool_heap_class_stats *x = &a->classes[c], *y = &b->classes[c];
        if (x->size != y->size || x->blocks != y->blocks || x->live != y->live ||
            x->high_water != y->high_water || x->allocs != y->allocs ||
            x->failed_allocs != y->failed_allocs || x->requested_bytes != y->requested_bytes ||
            x->wasted_bytes != y->wasted_bytes)
            return false;
    }
    return true;
}

/* Create with class_sizes, a recorder and flags; bpc blocks per class. */
static opool_heap *make_heap(const uint32_t *sizes, uint32_t count, uint32_t bpc, uint32_t flags,
                             recorder *r) {
    opool_heap_desc d = desc_of(r);
    d.class_sizes = sizes;
    d.class_count = count;
    d.blocks_per_class = bpc;
    d.flags = flags;
    return create(&d);
}

/* A growing heap of the one class *size, its memory from the system, or with own (not NULL)
 * from a counting allocator. */
static opool_heap *one_class_heap(const uint32_t *size, recorder *r, counting *own) {
    opool_heap_desc d = desc_of(r);
    d.class_sizes = size;
    d.class_count = 1;
    if (own) d.allocator = counting_allocator(own);
    return create(&d);
}

/* Blocks one page of a class of this size holds: measured with blocks_per_class 1. */
static uint32_t blocks_per_page(uint32_t size) {
    recorder r;
    opool_heap *h = make_heap(&size, 1, 1, 0, &r);
    if (!h) return 0;
    uint32_t n = stats_of(h).classes[0].blocks;
    opool_heap_destroy(h);
    return n;
}

/* The index of the default class of exactly size bytes (a size the header lists). */
static int default_index(uint32_t size) {
    int c = 0;
    while (c < NDEFAULT - 1 && default_sizes[c] != size) c++;
    return c;
}

/* The smallest default class >= size (size 0 counts as 1); 0 if none. */
static uint32_t default_class_for(size_t size) {
    for (int c = 0; c < NDEFAULT; c++)
        if (size <= default_sizes[c]) return default_sizes[c];
    return 0;
}

static void fill(void *p, size_t n, unsigned seed) {
    unsigned char *b = (unsigned char *)p;
    for (size_t k = 0; k < n; k++) b[k] = (unsigned char)(seed * 131u + k * 7u + (k >> 8));
}

static bool filled(const void *p, size_t n, unsigned seed) {
    const unsigned char *b = (const unsigned char *)p;
    for (size_t k = 0; k < n; k++)
        if (b[k] != (unsigned char)(seed * 131u + k * 7u + (k >> 8))) return false;
    return true;
}

static bool filled_with(const void *p, size_t n, unsigned char v) {
    const unsigned char *b = (const unsigned char *)p;
    for (size_t k = 0; k < n; k++)
        if (b[k] != v) return false;
    return true;
}

static bool all_zero(const void *p, size_t n) { return filled_with(p, n, 0); }

static int cmp_uptr(const void *a, const void *b) {
    uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
    return (x > y) - (x < y);
}

/* ---- create ------------------------------------------------------------- */

/* A heap that grows takes no page at create: a class takes its first at its first alloc. */
TEST(create_with_null_desc_gives_the_default_classes_and_no_page) {
    opool_heap *h = NULL;
    REQUIRE(opool_heap_create(&h, NULL) == OPOOL_OK);
    REQUIRE(h);
    opool_heap_stats s = stats_of(h);
    CHECK_EQ_U64(s.version, OPOOL_HEAP_STATS_VERSION);
    CHECK_EQ_U64(s.class_count, NDEFAULT);
    for (uint32_t c = 0; c < NDEFAULT; c++) {
        CHECK_EQ_U64(s.classes[c].size, default_sizes[c]);
        CHECK_EQ_U64(s.classes[c].blocks, 0);
        CHECK_EQ_U64(s.classes[c].live, 0);
        CHECK_EQ_U64(s.classes[c].allocs, 0);
    }
    CHECK_EQ_U64(s.large_live, 0);
    CHECK_EQ_U64(s.large_bytes, 0);
    CHECK_EQ_U64(s.rejected, 0);
    CHECK(s.bytes < OPOOL_HEAP_PAGE / 4); /* its bookkeeping alone */
    opool_heap_destroy(h);
}

/* The header's promise: a heap that served one small block holds one page. */
TEST(a_heap_that_served_one_small_block_holds_one_page) {
    opool_heap *h = NULL;
    REQUIRE(opool_heap_create(&h, NULL) == OPOOL_OK);
    size_t empty = stats_of(h).bytes;
    void *p = opool_heap_alloc(h, 48);
    REQUIRE(p);
    opool_heap_stats s = stats_of(h);
    /* the page, and the entries of the tables that track it */
    CHECK(s.bytes - empty >= OPOOL_HEAP_PAGE && s.bytes - empty <= OPOOL_HEAP_PAGE + 1024);
    CHECK_EQ_U64(s.classes[default_index(48)].blocks, blocks_per_page(48));
    for (uint32_t c = 0; c < NDEFAULT; c++)
        if (c != (uint32_t)default_index(48)) CHECK_EQ_U64(s.classes[c].blocks, 0);
    CHECK_EQ_U64(opool_heap_free(h, p), OPOOL_OK);
    opool_heap_destroy(h);
}

TEST(create_with_zero_desc_gives_the_default_classes_a_page_at_their_first_alloc) {
    opool_heap_desc d;
    memset(&d, 0, sizeof d);
    opool_heap *h = create(&d);
    REQUIRE(h);
    opool_heap_stats s = stats_of(h);
    CHECK_EQ_U64(s.class_count, NDEFAULT);
    void *at[NDEFAULT];
    for (uint32_t c = 0; c < NDEFAULT; c++) {
        CHECK_EQ_U64(s.classes[c].size, default_sizes[c]);
        CHECK_EQ_U64(s.classes[c].blocks, 0);
        REQUIRE((at[c] = opool_heap_alloc(h, default_sizes[c])) != NULL);
    }
    s = stats_of(h);
    for (uint32_t c = 0; c < NDEFAULT; c++) {
        CHECK_EQ_U64(s.classes[c].blocks, blocks_per_page(default_sizes[c]));
        CHECK_EQ_U64(opool_heap_free(h, at[c]), OPOOL_OK);
    }
    opool_heap_destroy(h);
}

/* A fixed heap is a budget: blocks_per_class 0 gives each class one page at create. */
TEST(create_fixed_with_zero_blocks_per_class_gives_one_page_each) {
    opool_heap_desc d;
    memset(&d, 0, sizeof d);
    d.flags = OPOOL_HEAP_FIXED;
    opool_heap *h = create(&d);
    REQUIRE(h);
    opool_heap_stats s = stats_of(h);
    for (uint32_t c = 0; c < NDEFAULT; c++)
        CHECK_EQ_U64(s.classes[c].blocks, blocks_per_page(default_sizes[c]));
    opool_heap_destroy(h);
}

TEST(create_rejects_null_out) {
    CHECK_EQ_U64(opool_heap_create(NULL, NULL), OPOOL_EINVAL);
    opool_heap_desc d = desc_of(NULL);
    CHECK_EQ_U64(opool_heap_create(NULL, &d), OPOOL_EINVAL);
}

/* The desc must give OPOOL_EINVAL and leave *out NULL (it was not NULL before). */
static void expect_einval(const opool_heap_desc *d, int line) {
    opool_heap *h = (opool_heap *)(uintptr_t)0x1000; /* must be overwritten */
    opool_status s = opool_heap_create(&h, d);
    if (s != OPOOL_EINVAL || h != NULL) {
        fprintf(stderr, "  (desc of line %d: status %d, out %p)\n", line, (int)s, (void *)h);
        CHECK_EQ_U64(s, OPOOL_EINVAL);
        CHECK(h == NULL);
        if (s == OPOOL_OK && h != NULL && h != (opool_heap *)(uintptr_t)0x1000)
            opool_heap_destroy(h);
    }
}

static void expect_sizes_rejected(const uint32_t *sizes, uint32_t count, int line) {
    opool_heap_desc d = desc_of(NULL);
    d.class_sizes = sizes;
    d.class_count = count;
    expect_einval(&d, line);
}

TEST(create_rejects_class_sizes_not_ascending) {
    static const uint32_t a[] = {32, 16};
    static const uint32_t b[] = {16, 64, 48, 128};
    expect_sizes_rejected(a, 2, __LINE__);
    expect_sizes_rejected(b, 4, __LINE__);
}

TEST(create_rejects_equal_class_sizes) {
    static const uint32_t a[] = {16, 16};
    static const uint32_t b[] = {16, 32, 64, 64, 128};
    expect_sizes_rejected(a, 2, __LINE__);
    expect_sizes_rejected(b, 5, __LINE__);
}

TEST(create_rejects_class_sizes_not_multiples_of_8) {
    static const uint32_t a[] = {12};
    static const uint32_t b[] = {16, 20};
    static const uint32_t c[] = {8, 16, 1025};
    static const uint32_t d[] = {4};
    expect_sizes_rejected(a, 1, __LINE__);
    expect_sizes_rejected(b, 2, __LINE__);
    expect_sizes_rejected(c, 3, __LINE__);
    expect_sizes_rejected(d, 1, __LINE__);
}

TEST(create_rejects_a_zero_class_size) {
    static const uint32_t a[] = {0};
    static const uint32_t b[] = {0, 16};
    expect_sizes_rejected(a, 1, __LINE__);
    expect_sizes_rejected(b, 2, __LINE__);
}

TEST(create_rejects_class_sizes_above_the_maximum) {
    static const uint32_t a[] = {OPOOL_HEAP_MAX_CLASS_SIZE + 8};
    static const uint32_t b[] = {16, 1024, OPOOL_HEAP_MAX_CLASS_SIZE + 8};
    static const uint32_t c[] = {16, 0xFFFFFFF8u};
    expect_sizes_rejected(a, 1, __LINE__);
    expect_sizes_rejected(b, 3, __LINE__);
    expect_sizes_rejected(c, 2, __LINE__);
}

TEST(create_accepts_the_maximum_class_size_and_8) {
    static const uint32_t a[] = {8, OPOOL_HEAP_MAX_CLASS_SIZE};
    recorder r;
    opool_heap *h = make_heap(a, 2, 0, 0, &r);
    REQUIRE(h);
    opool_heap_stats s = stats_of(h);
    CHECK_EQ_U64(s.class_count, 2);
    CHECK_EQ_U64(s.classes[0].size, 8);
    CHECK_EQ_U64(s.classes[1].size, OPOOL_HEAP_MAX_CLASS_SIZE);
    void *p = opool_heap_alloc(h, OPOOL_HEAP_MAX_CLASS_SIZE);
    CHECK(p != NULL);
    CHECK_EQ_U64(opool_heap_usable_size(h, p), OPOOL_HEAP_MAX_CLASS_SIZE);
    CHECK_EQ_U64(stats_of(h).large_live, 0);
    opool_heap_destroy(h);
}

TEST(create_rejects_class_count_zero_with_class_sizes_set) {
    static const uint32_t a[] = {16, 32};
    expect_sizes_rejected(a, 0, __LINE__);
}

TEST(create_rejects_more_than_max_classes_and_accepts_exactly_max) {
    uint32_t sizes[OPOOL_HEAP_MAX_CLASSES + 1];
    for (uint32_t k = 0; k <= OPOOL_HEAP_MAX_CLASSES; k++) sizes[k] = 8 * (k + 1);
    expect_sizes_rejected(sizes, OPOOL_HEAP_MAX_CLASSES + 1, __LINE__);
    expect_sizes_rejected(sizes, 0xFFFFFFFFu, __LINE__);
    recorder r;
    opool_heap *h = make_heap(sizes, OPOOL_HEAP_MAX_CLASSES, 0, 0, &r);
    REQUIRE(h);
    opool_heap_stats s = stats_of(h);
    CHECK_EQ_U64(s.class_count, OPOOL_HEAP_MAX_CLASSES);
    CHECK_EQ_U64(s.classes[OPOOL_HEAP_MAX_CLASSES - 1].size, 8 * OPOOL_HEAP_MAX_CLASSES);
    opool_heap_destroy(h);
}

TEST(create_rejects_every_unknown_flag) {
    const uint32_t known = OPOOL_HEAP_NO_FALLBACK | OPOOL_HEAP_GROW | OPOOL_HEAP_FIXED |
                           OPOOL_HEAP_ARENA | OPOOL_POISON | OPOOL_REPORT_MISUSE |
                           OPOOL_REPORT_UNRATIONED;
    for (uint32_t bit = 0; bit < 32; bit++) {
        uint32_t flag = 1u << bit;
        if (flag & known) continue;
        opool_heap_desc d = desc_of(NULL);
        d.flags = flag;
        expect_einval(&d, __LINE__);
        d.flags = flag | (known & ~(uint32_t)OPOOL_HEAP_GROW);
        expect_einval(&d, __LINE__);
    }
    for (int fixed = 0; fixed < 2; fixed++) {
        recorder r;
        opool_heap_desc d = desc_of(&r);
        d.flags = known & ~(uint32_t)(fixed ? OPOOL_HEAP_GROW : OPOOL_HEAP_FIXED);
        opool_heap *h = create(&d);
        CHECK(h != NULL);
        opool_heap_destroy(h);
    }
}

TEST(create_rejects_fixed_with_grow) {
    opool_heap_desc d = desc_of(NULL);
    d.flags = OPOOL_HEAP_FIXED | OPOOL_HEAP_GROW;
    expect_einval(&d, __LINE__);
}

/* The issue's figures: 2 KiB blocks, none to start (31 reserved with blocks_per_class 31:
 * a page's worth), then 100,000 more allocations (a NULL desc; 10,000 for the others). With a NULL
 * desc, a zero desc, and a desc whose flags are 0 and other fields are set
 * (zero means the default: growth), every one succeeds. */
TEST(null_zero_and_flags_zero_descs_give_a_heap_that_grows) {
    for (int how = 0; how < 3; how++) {
        opool_heap *h = NULL;
        opool_heap_desc d;
        memset(&d, 0, sizeof d);
        if (how == 2) {
            d.name = "flags 0";
            d.blocks_per_class = 31;
            d.flags = 0;
        }
        CHECK_EQ_U64(opool_heap_create(&h, how == 0 ? NULL : &d), OPOOL_OK);
        REQUIRE(h);
        CHECK_EQ_U64(stats_of(h).classes[default_index(2048)].size, 2048);
        CHECK_EQ_U64(stats_of(h).classes[default_index(2048)].blocks, how == 2 ? 31 : 0);
        const uint32_t N = 31 + (how == 0 ? 100000 : 10000);
        void **b = (void **)malloc(N * sizeof *b);
        REQUIRE(b);
        uint32_t got = 0;
        for (uint32_t k = 0; k < N; k++) got += (b[k] = opool_heap_alloc(h, 2048)) != NULL;
        CHECK_EQ_U64(got, N);
        opool_heap_stats s = stats_of(h);
        CHECK_EQ_U64(s.classes[default_index(2048)].live, N);
        CHECK_EQ_U64(s.classes[default_index(2048)].failed_allocs, 0);
        for (uint32_t k = 0; k < N; k++) CHECK_EQ_U64(opool_heap_free(h, b[k]), OPOOL_OK);
        free(b);
        opool_heap_destroy(h);
    }
}

/* OPOOL_HEAP_FIXED is the opt-in budget: the first page's 31 blocks, then
 * failures, counted and reported. */
TEST(fixed_heap_holds_its_reservation_and_no_more) {
    recorder r;
    opool_heap *h = make_heap(NULL, 0, 0, OPOOL_HEAP_FIXED, &r);
    REQUIRE(h);
    void *b[31];
    for (uint32_t k = 0; k < 31; k++) REQUIRE((b[k] = opool_heap_alloc(h, 2048)));
    CHECK(opool_heap_alloc(h, 2048) == NULL);
    CHECK(opool_heap_alloc(h, 2000) == NULL);
    opool_heap_stats s = stats_of(h);
    CHECK_EQ_U64(s.classes[default_index(2048)].blocks, 31);
    CHECK_EQ_U64(s.classes[default_index(2048)].failed_allocs, 2);
    CHECK_EQ_U64(r.n, 2);                     /* the episode's 1st and 2nd */
    CHECK(opool_heap_alloc(h, 1024) != NULL); /* another class is not full */
    for (uint32_t k = 0; k < 31; k++) CHECK_EQ_U64(opool_heap_free(h, b[k]), OPOOL_OK);
    opool_heap_destroy(h);
}

TEST(create_rejects_an_allocator_with_one_function) {
    counting c;
    opool_heap_desc d = desc_of(NULL);
    d.allocator = counting_allocator(&c);
    d.allocator.free = NULL;
    expect_einval(&d, __LINE__);
    d.allocator = counting_allocator(&c);
    d.allocator.alloc = NULL;
    expect_einval(&d, __LINE__);
    CHECK_EQ_U64(c.calls, 0);
}

TEST(create_rejects_a_reservation_that_overflows) {
    /* UINT32_MAX blocks of 16 bytes, rounded up to whole pages, is more blocks than a uint32_t
     * counts. The allocator refuses to hand out more than 64 MiB in case the heap tries. */
    counting c;
    opool_heap_desc d = desc_of(NULL);
    d.allocator = counting_allocator(&c);
    c.max_bytes = (size_t)64 << 20;
    d.blocks_per_class = UINT32_MAX;
    expect_einval(&d, __LINE__);
    static const uint32_t one[] = {16};
    d.class_sizes = one;
    d.class_count = 1;
    expect_einval(&d, __LINE__);
    d.flags = OPOOL_HEAP_GROW;
    expect_einval(&d, __LINE__);
    CHECK_EQ_U64(c.blocks, 0);
}

/* Every allocation create makes, failed in turn (alone, then with all later ones). */
static void create_fails_cleanly(opool_heap_desc d, int line) {
    counting c;
    d.allocator = counting_allocator(&c);
    opool_heap *h = create(&d);
    if (!h) {
        fprintf(stderr, "  (desc of line %d)\n", line);
        CHECK(h != NULL);
        return;
    }
    long calls = c.calls;
    opool_heap_destroy(h);
    CHECK_EQ_U64(c.blocks, 0);
    CHECK(calls > 0);
    for (int mode = 0; mode < 2; mode++) {
        for (long n = 0; n < calls; n++) {
            d.allocator = counting_allocator(&c);
            if (mode == 0)
                c.fail_only = n;
            else
                c.fail_from = n;
            h = (opool_heap *)(uintptr_t)0x1000;
            opool_status s = opool_heap_create(&h, &d);
            if (s != OPOOL_ENOMEM || h != NULL || c.blocks != 0 || c.bytes != 0 ||
                c.bad_frees != 0) {
                fprintf(stderr, "  (desc of line %d, %s allocation %ld)\n", line,
                        mode ? "from" : "only", n);
                CHECK_EQ_U64(s, OPOOL_ENOMEM);
                CHECK(h == NULL);
                CHECK_EQ_U64(c.blocks, 0);
                CHECK_EQ_U64(c.bad_frees, 0);
                if (s == OPOOL_OK && h) opool_heap_destroy(h);
                return;
            }
        }
    }
}

TEST(create_fails_with_enomem_at_every_allocation_and_leaks_nothing) {
    recorder r;
    opool_heap_desc d = desc_of(&r);
    create_fails_cleanly(d, __LINE__);
    d.flags = OPOOL_HEAP_GROW | OPOOL_POISON;
    d.blocks_per_class = 100; /* several pages for the large classes */
    create_fails_cleanly(d, __LINE__);
    static const uint32_t sizes[] = {24, 4096, 16384};
    d = desc_of(&r);
    d.class_sizes = sizes;
    d.class_count = 3;
    d.blocks_per_class = 100;
    d.flags = OPOOL_HEAP_NO_FALLBACK;
    create_fails_cleanly(d, __LINE__);
    CHECK_EQ_U64(r.n, 0);
}

TEST(destroy_of_null_does_nothing) { opool_heap_destroy(NULL); }

TEST(destroy_gives_back_every_byte) {
    counting c;
    recorder r;
    opool_heap_desc d = desc_of(&r);
    d.allocator = counting_allocator(&c);
    d.flags = OPOOL_HEAP_GROW;
    opool_heap *h = create(&d);
    REQUIRE(h);
    for (int k = 0; k < 5000; k++) CHECK(opool_heap_alloc(h, (size_t)(k % 97) * 3) != NULL);
    for (int k = 0; k < 20; k++) CHECK(opool_heap_alloc(h, 40000 + (size_t)k * 1000) != NULL);
    CHECK(c.blocks > 1 + 20); /* regions of pages, the large blocks, bookkeeping */
    opool_heap_destroy(h);
    CHECK_EQ_U64(c.blocks, 0);
    CHECK_EQ_U64(c.bytes, 0);
    CHECK_EQ_U64(c.bad_frees, 0);
}

/* ---- arenas: clear, OPOOL_HEAP_ARENA ------------------------------------- */

/* Blocks of every kind: a small class over several pages, the heap's own classes (above
 * the desc's largest), a run, the allocator's. */
#define ARENA_KINDS 6
static const size_t arena_sizes[ARENA_KINDS] = {48, 700, 5000, 30000, 3 * PAGE, 3000000};

TEST(clear_frees_every_block_and_the_heap_serves_again) {
    static const uint32_t box2d[] = {16,  32,  64,  96,  128, 160, 192,
                                     224, 256, 320, 384, 448, 512, 640};
    for (int own = 0; own < 2; own++) {
        counting c;
        recorder r;
        opool_heap_desc d = desc_of(&r);
        d.class_sizes = box2d;
        d.class_count = 14;
        if (own) d.allocator = counting_allocator(&c);
        opool_heap *h = create(&d);
        REQUIRE(h);
        enum { EACH = 200 };
        static unsigned char *at[ARENA_KINDS][EACH];
        for (int round = 0; round < 3; round++) {
            opool_heap_stats before = stats_of(h);
            for (int k = 0; k < ARENA_KINDS; k++)
                for (int i = 0; i < (k < 4 ? EACH : 2); i++) {
                    REQUIRE((at[k][i] = (unsigned char *)opool_heap_alloc(h, arena_sizes[k])));
                    memset(at[k][i], 0x40 + k, arena_sizes[k]);
                }
            CHECK_EQ_U64(stats_of(h).large_live, 3 * EACH + 4);
            CHECK_EQ_U64(opool_heap_clear(h), OPOOL_OK);
            opool_heap_stats s = stats_of(h);
            CHECK_EQ_U64(s.large_live, 0);
            CHECK_EQ_U64(s.large_bytes, 0);
            for (uint32_t k = 0; k < 14; k++) {
                CHECK_EQ_U64(s.classes[k].live, 0);
                /* what the class counted stays */
                CHECK_EQ_U64(s.classes[k].allocs, before.classes[k].allocs + (k == 2 ? EACH : 0));
            }
            CHECK_EQ_U64(s.classes[2].high_water, EACH); /* 48 bytes: the 64-byte class */
            /* every pointer handed out before is no block of the heap now */
            uint64_t rejected = s.rejected;
            for (int k = 0; k < ARENA_KINDS; k++) {
                CHECK_EQ_U64(opool_heap_free(h, at[k][0]), OPOOL_EINVAL);
                CHECK_EQ_U64(opool_heap_usable_size(h, at[k][1]), 0);
                CHECK(opool_heap_realloc(h, at[k][1], 10) == NULL);
            }
            CHECK_EQ_U64(stats_of(h).rejected, rejected + 3 * ARENA_KINDS);
            CHECK_EQ_U64(r.n, 3 * ARENA_KINDS);
            CHECK_EQ_U64(r.by_what[OPOOL_EINVAL], 3 * ARENA_KINDS);
            rec_reset(&r);
            /* and it serves again, from the same memory: the pages it kept */
            size_t bytes = stats_of(h).bytes;
            void *again = opool_heap_alloc(h, 48);
            CHECK(again != NULL);
            CHECK_EQ_U64(stats_of(h).bytes, bytes);
            CHECK_EQ_U64(opool_heap_usable_size(h, again), 64);
            CHECK_EQ_U64(opool_heap_free(h, again), OPOOL_OK);
        }
        CHECK_EQ_U64(r.n, 0);
        if (own) {
            DESTROY_COUNTED(h, &c);
        } else {
            opool_heap_destroy(h);
        }
    }
}

/* A class keeps its reserved pages and one grown page; the others go to the heap's cache,
 * whence any class takes them first. */
TEST(clear_keeps_the_reserved_pages_and_one_grown_page_of_each_class) {
    uint32_t size = 1024, p = blocks_per_page(1024);
    recorder r;
    opool_heap *h = make_heap(&size, 1, 2 * p, 0, &r);
    REQUIRE(h);
    for (uint32_t k = 0; k < 6 * p; k++) REQUIRE(opool_heap_alloc(h, 1024));
    CHECK_EQ_U64(stats_of(h).classes[0].blocks, 6 * p);
    size_t bytes = stats_of(h).bytes;
    CHECK_EQ_U64(opool_heap_clear(h), OPOOL_OK);
    CHECK_EQ_U64(stats_of(h).classes[0].blocks, 3 * p);
    CHECK_EQ_U64(stats_of(h).bytes, bytes); /* cached pages keep their memory for a while */
    for (uint32_t k = 0; k < 6 * p; k++) REQUIRE(opool_heap_alloc(h, 1024));
    CHECK_EQ_U64(stats_of(h).bytes, bytes); /* and serve again */
    CHECK_EQ_U64(opool_heap_clear(h), OPOOL_OK);
    CHECK_EQ_U64(opool_heap_clear(h), OPOOL_OK); /* twice: nothing more to do */
    CHECK_EQ_U64(stats_of(h).classes[0].blocks, 3 * p);
    CHECK_EQ_U64(r.n, 0);
    opool_heap_destroy(h);
    CHECK_EQ_U64(r.n, 0); /* nothing live: no leak */
}

/* A fixed class's exhaustion episode ends with the clear: the next failure opens a new one,
 * reported as a first. */
TEST(clear_ends_an_exhaustion_episode) {
    uint32_t size = 64, p = blocks_per_page(64);
    recorder r;
    opool_heap *h = make_heap(&size, 1, p, OPOOL_HEAP_FIXED, &r);
    REQUIRE(h);
    for (uint32_t k = 0; k < p; k++) REQUIRE(opool_heap_alloc(h, 64));
    CHECK(opool_heap_alloc(h, 64) == NULL);
    CHECK(opool_heap_alloc(h, 64) == NULL);
    CHECK(opool_heap_alloc(h, 64) == NULL); /* the episode's 3rd: not reported */
    CHECK_EQ_U64(r.by_what[OPOOL_EFULL], 2);
    CHECK_EQ_U64(opool_heap_clear(h), OPOOL_OK);
    for (uint32_t k = 0; k < p; k++) REQUIRE(opool_heap_alloc(h, 64)); /* the budget again */
    CHECK(opool_heap_alloc(h, 64) == NULL);
    CHECK_EQ_U64(r.by_what[OPOOL_EFULL], 3); /* a new episode's 1st */
    CHECK_EQ_U64(stats_of(h).classes[0].failed_allocs, 4);
    opool_heap_destroy(h);
}

TEST(clear_of_null_is_einval) { CHECK_EQ_U64(opool_heap_clear(NULL), OPOOL_EINVAL); }

/* OPOOL_HEAP_ARENA says where the heap is made that it is dropped whole: destroy reports no
 * leak. The same heap without it does. */
TEST(an_arena_is_destroyed_with_blocks_live_and_reports_no_leak) {
    for (int arena = 0; arena < 2; arena++) {
        counting c;
        recorder r;
        opool_heap_desc d = desc_of(&r);
        d.flags = arena ? OPOOL_HEAP_ARENA : 0;
        d.allocator = counting_allocator(&c);
        opool_heap *h = create(&d);
        REQUIRE(h);
        for (int k = 0; k < ARENA_KINDS; k++) REQUIRE(opool_heap_alloc(h, arena_sizes[k]));
        DESTROY_COUNTED(h, &c); /* every byte back either way */
        CHECK_EQ_U64(r.n, arena ? 0 : 1);
        CHECK_EQ_U64(r.by_what[OPOOL_ELEAK], arena ? 0 : 1);
    }
    /* it combines with the other flags */
    opool_heap_desc d = desc_of(NULL);
    d.flags = OPOOL_HEAP_ARENA | OPOOL_HEAP_FIXED | OPOOL_HEAP_NO_FALLBACK | OPOOL_POISON;
    opool_heap *h = create(&d);
    CHECK(h != NULL);
    opool_heap_destroy(h);
}

/* ---- no size falls between classes ---------------------------------------- */

/* 64 blocks of any size up to 64 KiB hold at most twice their bytes plus a page, in the
 * heap's stats and in the process's resident memory, with the default classes and with
 * Box2D's 14 (which end at 640 bytes). Every size up to 1 KiB; above, a size every 1/64th
 * of the way, and each class's size, the next size and the size below the class before
 * (the worst fits), for every class of either set and of the heap's own. */
#define GAP_BLOCKS 64
static size_t resident_bytes(void) {
#if defined(__linux__)
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long pages = 0, rss = 0;
    if (f) {
        if (fscanf(f, "%lu %lu", &pages, &rss) != 2) rss = 0;
        fclose(f);
    }
    return (size_t)rss * 4096;
#else
    return 0;
#endif
}

/* 64 blocks of size made, every byte written, in a fresh heap of the default classes or of
 * Box2D's: the bytes its stats say it took for them, and the growth of the process's RSS. */
static const uint32_t gap_box2d[] = {16,  32,  64,  96,  128, 160, 192,
                                     224, 256, 320, 384, 448, 512, 640};
static void gap_measure(int box2d, size_t size, size_t *held, size_t *rss) {
    void *at[GAP_BLOCKS];
    opool_heap_desc d = desc_of(NULL);
    if (box2d) {
        d.class_sizes = gap_box2d;
        d.class_count = 14;
    }
    opool_heap *h = create(&d);
    REQUIRE(h);
    size_t bytes0 = stats_of(h).bytes, rss0 = resident_bytes();
    for (int i = 0; i < GAP_BLOCKS; i++) {
        REQUIRE((at[i] = opool_heap_alloc(h, size)));
        memset(at[i], 1, size); /* resident: every byte touched */
    }
    *held = stats_of(h).bytes - bytes0;
    *rss = rss0 ? resident_bytes() - rss0 : 0;
    for (int i = 0; i < GAP_BLOCKS; i++) CHECK_EQ_U64(opool_heap_free(h, at[i]), OPOOL_OK);
    opool_heap_destroy(h);
}

TEST(no_size_up_to_64_kib_takes_more_than_twice_its_bytes) {
    static size_t sizes[1024 + 512 + 3 * (NDEFAULT + NOWN + 14)];
    size_t n = 0;
    for (size_t z = 1; z <= 1024; z++) sizes[n++] = z;
    for (size_t z = 1024; z < 65536; z += z / 64) sizes[n++] = z + 1;
    sizes[n++] = 65536;
    for (int k = 0; k < NDEFAULT + NOWN + 14; k++) {
        size_t c = k < NDEFAULT          ? default_sizes[k]
                   : k < NDEFAULT + NOWN ? own_sizes[k - NDEFAULT]
                                         : gap_box2d[k - NDEFAULT - NOWN];
        if (c <= 1024) continue;
        sizes[n++] = c;
        sizes[n++] = c + 1;
        sizes[n++] = c - 7;
    }
    for (int set = 0; set < 2; set++) {
        size_t worst = 0, worst_rss = 0, worst_size = 0, held, rss;
        gap_measure(set, sizes[0], &held, &rss); /* the process's first heap: not a block's */
        for (size_t z = 0; z < n; z++) {
            size_t size = sizes[z], bound = 2 * GAP_BLOCKS * size + PAGE;
            gap_measure(set, size, &held, &rss);
            /* the RSS is the whole process's (under qemu-user, the emulator's code cache too):
             * a growth past the bound is measured once more before it counts */
            if (rss > bound) gap_measure(set, size, &held, &rss);
#if defined(__EMSCRIPTEN__) /* pages from the C library: a region's vacant pages are held too */
            if (held > PAGE + 1024) held = 0; /* more than the first region's one page */
#endif
            if (held > bound || rss > bound) {
                fprintf(stderr, "  (%s classes, size %zu: %zu held, %zu resident)\n",
                        set ? "Box2D's" : "the default", size, held, rss);
                CHECK(held <= bound);
                CHECK(rss <= bound);
            }
            if (held * 1000 / bound > worst) worst = held * 1000 / bound, worst_size = size;
            if (rss * 1000 / bound > worst_rss) worst_rss = rss * 1000 / bound;
        }
        fprintf(stderr,
                "  %s classes: at most %zu.%zu%% of the bound held (size %zu), %zu.%zu%% "
                "resident\n",
                set ? "Box2D's" : "the default", worst / 10, worst % 10, worst_size, worst_rss / 10,
                worst_rss % 10);
    }
}

TEST(get_stats_of_a_null_heap_is_zeroed) {
    opool_heap_stats s;
    memset(&s, 0x5A, sizeof s);
    opool_heap_get_stats(NULL, &s);
    CHECK_EQ_U64(s.version, 0);
    CHECK_EQ_U64(s.class_count, 0);
    CHECK_EQ_U64(s.large_live, 0);
    CHECK_EQ_U64(s.large_bytes, 0);
    CHECK_EQ_U64(s.rejected, 0);
    CHECK_EQ_U64(s.bytes, 0);
    CHECK_EQ_U64(s.classes[0].size, 0);
    CHECK_EQ_U64(s.classes[OPOOL_HEAP_MAX_CLASSES - 1].blocks, 0);
}

/* ---- alloc -------------------------------------------------------------- */

TEST(alloc_gives_each_size_the_smallest_class_that_fits) {
    recorder r;
    opool_heap *h = make_heap(NULL, 0, 0, 0, &r);
    REQUIRE(h);
    for (size_t size = 1; size <= 2048; size++) {
        void *p = opool_heap_alloc(h, size);
        REQUIRE(p);
        size_t got = opool_heap_usable_size(h, p);
        if (got != default_class_for(size)) {
            fprintf(stderr, "  (size %zu)\n", size);
            CHECK_EQ_U64(got, default_class_for(size));
        }
        /* the header's bound: above 128 bytes, rounding up costs at most 12.5% */
        if (size > 128 && (got - size) * 8 > size) {
            fprintf(stderr, "  (size %zu: %zu usable)\n", size, got);
            CHECK(!"rounding above 128 bytes costs more than 12.5%");
        }
        CHECK_EQ_U64(opool_heap_free(h, p), OPOOL_OK);
    }
    /* every boundary again, all live at once */
    void *at[2 * NDEFAULT];
    for (int c = 0; c < NDEFAULT; c++) {
        at[2 * c] = opool_heap_alloc(h, default_sizes[c]);
        at[2 * c + 1] = opool_heap_alloc(h, c ? default_sizes[c - 1] + 1u : 1u);
        CHECK_EQ_U64(opool_heap_usable_size(h, at[2 * c]), default_sizes[c]);
        CHECK_EQ_U64(opool_heap_usable_size(h, at[2 * c + 1]), default_sizes[c]);
    }
    opool_heap_stats s = stats_of(h);
    for (int c = 0; c < NDEFAULT; c++) CHECK_EQ_U64(s.classes[c].live, 2);
    CHECK_EQ_U64(s.large_live, 0);
    CHECK_EQ_U64(r.n, 0);
    opool_heap_destroy(h);
}

TEST(alloc_of_size_zero_gives_a_block_of_the_smallest_class) {
    static const uint32_t sizes[] = {40, 400};
    recorder r;
    opool_heap *h = make_heap(sizes, 2, 0, 0, &r);
    REQUIRE(h);
    void *p = opool_heap_alloc(h, 0), *q = opool_heap_alloc(h, 0);
    REQUIRE(p && q);
    CHECK(p != q);
    CHECK_EQ_U64(opool_heap_usable_size(h, p), 40);
    memset(p, 0x77, 40);
    opool_heap_stats s = stats_of(h);
    CHECK_EQ_U64(s.classes[0].live, 2);
    CHECK_EQ_U64(s.classes[0].allocs, 2);
    CHECK_EQ_U64(s.classes[0].requested_bytes + s.classes[0].wasted_bytes, 80);
    CHECK_EQ_U64(opool_heap_free(h, p), OPOOL_OK);
    CHECK_EQ_U64(opool_heap_free(h, q), OPOOL_OK);
    opool_heap_destroy(h);
}

TEST(alloc_and_calloc_with_a_null_heap_return_null) {
    CHECK(opool_heap_alloc(NULL, 16) == NULL);
    CHECK(opool_heap_alloc(NULL, 0) == NULL);
    CHECK(opool_heap_calloc(NULL, 2, 8) == NULL);
}

TEST(blocks_are_aligned_to_16_when_the_class_size_is_a_multiple_of_16) {
    recorder r;
    opool_heap *h = make_heap(NULL, 0, 0, 0, &r);
    REQUIRE(h);
    for (int c = 0; c < NDEFAULT; c++)
        for (int k = 0; k < 5; k++) {
            void *p = opool_heap_alloc(h, default_sizes[c]);
            REQUIRE(p);
            CHECK_EQ_U64((uintptr_t)p % 16, 0);
        }
    opool_heap_destroy(h);
}

TEST(blocks_are_aligned_to_8_when_the_class_size_is_not_a_multiple_of_16) {
    static const uint32_t sizes[] = {8, 24, 40, 56, 72, 200, 1032};
    recorder r;
    opool_heap *h = make_heap(sizes, 7, 0, 0, &r);
    REQUIRE(h);
    for (int c = 0; c < 7; c++) {
        uintptr_t prev = 0;
        for (int k = 0; k < 9; k++) {
            void *p = opool_heap_alloc(h, sizes[c]);
            REQUIRE(p);
            CHECK_EQ_U64((uintptr_t)p % 8, 0);
            /* consecutive blocks of a fresh page sit at least a class size apart */
            if (prev) CHECK((uintptr_t)p >= prev + sizes[c] || (uintptr_t)p + sizes[c] <= prev);
            prev = (uintptr_t)p;
        }
    }
    opool_heap_destroy(h);
}

TEST(large_blocks_are_aligned_like_malloc) {
    /* malloc-shaped: a block from the fallback allocator suits any object (max_align_t) */
    counting c;
    recorder r;
    opool_heap_desc d = desc_of(&r);
    d.allocator = counting_allocator(&c);
    opool_heap *h = create(&d);
    REQUIRE(h);
    opool_heap *h2 = make_heap(NULL, 0, 0, 0, &r); /* and with the C library */
    REQUIRE(h2);
    for (size_t size = 2049; size < 2049 + 40; size++) {
        void *p = opool_heap_alloc(h, size), *q = opool_heap_alloc(h2, size);
        REQUIRE(p && q);
        CHECK_EQ_U64((uintptr_t)p % alignof(max_align_t), 0);
        CHECK_EQ_U64((uintptr_t)q % alignof(max_align_t), 0);
        CHECK_EQ_U64((uintptr_t)p % 16, 0);
    }
    opool_heap_destroy(h);
    opool_heap_destroy(h2);
}

TEST(live_blocks_never_overlap) {
    recorder r;
    opool_heap *h = make_heap(NULL, 0, 0, OPOOL_HEAP_GROW, &r);
    REQUIRE(h);
    enum { N = 3000 };
    static uintptr_t lo[N];
    static size_t len[N];
    uint32_t x = 12345;
    for (int k = 0; k < N; k++) {
        x = x * 1103515245u + 12345u;
        size_t size = (x >> 8) % 64 == 0 ? 2049 + (x >> 16) % 5000 : (x >> 12) % 2049;
        void *p = opool_heap_alloc(h, size);
        REQUIRE(p);
        lo[k] = (uintptr_t)p;
        len[k] = opool_heap_usable_size(h, p);
        CHECK(len[k] >= size);
        memset(p, k & 0xFF, len[k]); /* ASan: every usable byte is really there */
    }
    /* sort the starts with their lengths: pack them into one array of pairs */
    static uintptr_t pairs[2 * N];
    for (int k = 0; k < N; k++) {
        pairs[2 * k] = lo[k];
        pairs[2 * k + 1] = len[k];
    }
    qsort(pairs, N, 2 * sizeof(uintptr_t), cmp_uptr);
    for (int k = 1; k < N; k++)
        if (pairs[2 * (k - 1)] + pairs[2 * (k - 1) + 1] > pairs[2 * k]) {
            CHECK(!"two live blocks overlap");
            break;
        }
    opool_heap_destroy(h);
}

/* The out-of-line paths find a block's index, and whether an offset is a block start, with
 * one multiply by a reciprocal: exact for every class size allowed and every offset in a
 * page. */
TEST(block_index_by_reciprocal_is_exact_for_every_class_size) {
    for (uint32_t size = 8; size <= OPOOL_HEAP_MAX_CLASS_SIZE; size += 8) {
        uint32_t recip = (uint32_t)((((uint64_t)1 << 32) + size - 1) / size);
        uint32_t bad = 0;
        /* every offset for the default classes' range, a stride of them above */
        uint32_t step = size <= 2048 ? 1 : 7;
        for (uint32_t off = 0; off < OPOOL_HEAP_PAGE; off += step) {
            uint32_t j;
            bool start = opool__hpage_index(recip, off, &j);
            bad += j != off / size || start != (off % size == 0);
        }
        if (bad) {
            CHECK(!"opool__hpage_index wrong");
            break;
        }
    }
}

TEST(pages_hold_as_many_blocks_as_fit_after_the_header_and_bitmap) {
    static const uint32_t sizes[] = {8, 16, 24, 48, 64, 96, 1024, 1152, 2048, 4096, 16384};
    for (int k = 0; k < 11; k++) {
        uint32_t size = sizes[k], p = blocks_per_page(size);
        /* the bitmap: one bit per granule of the page, the largest power of two dividing
         * the size, at most 128 bytes */
        uint32_t granule = 8;
        while (granule < 128 && size % (2 * granule) == 0) granule *= 2;
        uint64_t first = 64 + OPOOL_HEAP_PAGE / granule / 8;
        /* fits: the header, the bitmap, the blocks */
        CHECK(first + (uint64_t)p * size <= OPOOL_HEAP_PAGE);
        /* and one more would not fit */
        CHECK(first + (uint64_t)(p + 1) * size > OPOOL_HEAP_PAGE);
    }
}

TEST(a_class_without_grow_holds_blocks_per_class_rounded_up_to_whole_pages) {
    static const uint32_t sizes[] = {16, 64, 1024, 16384};
    for (int k = 0; k < 4; k++) {
        uint32_t size = sizes[k], p = blocks_per_page(size);
        REQUIRE(p > 0);
        const uint32_t asks[] = {0, 1, p - 1, p, p + 1, 2 * p, 3 * p - 1};
        for (int a = 0; a < 7; a++) {
            recorder r;
            opool_heap *h = make_heap(&size, 1, asks[a], 0, &r);
            REQUIRE(h);
            uint32_t want = (asks[a] + p - 1) / p * p; /* 0: none until the first alloc */
            CHECK_EQ_U64(stats_of(h).classes[0].blocks, want);
            opool_heap_destroy(h);
        }
    }
    /* every class of the defaults gets its own rounding */
    recorder r;
    opool_heap *h = make_heap(NULL, 0, 1000, 0, &r);
    REQUIRE(h);
    opool_heap_stats s = stats_of(h);
    for (int c = 0; c < NDEFAULT; c++) {
        uint32_t p = blocks_per_page(default_sizes[c]);
        CHECK_EQ_U64(s.classes[c].blocks, (1000 + p - 1) / p * p);
    }
    opool_heap_destroy(h);
}

TEST(reserved_pages_stay_when_they_empty) {
    uint32_t size = 4096, p = blocks_per_page(4096);
    for (int grow = 0; grow < 2; grow++) {
        recorder r;
        opool_heap *h = make_heap(&size, 1, 3 * p, grow ? OPOOL_HEAP_GROW : OPOOL_HEAP_FIXED, &r);
        REQUIRE(h);
        void *blocks[256];
        REQUIRE(5 * p <= 256);
        uint32_t n = grow ? 5 * p : 3 * p;
        for (int round = 0; round < 3; round++) {
            for (uint32_t k = 0; k < n; k++) REQUIRE((blocks[k] = opool_heap_alloc(h, 4096)));
            CHECK_EQ_U64(stats_of(h).classes[0].blocks, n);
            for (uint32_t k = 0; k < n; k++) /* from the middle out: pages empty in any order */
                CHECK_EQ_U64(opool_heap_free(h, blocks[(k * 7 + n / 2) % n]), OPOOL_OK);
            uint32_t blocks_left = stats_of(h).classes[0].blocks;
            if (grow)
                CHECK(blocks_left == 3 * p || blocks_left == 4 * p);
            else
                CHECK_EQ_U64(blocks_left, 3 * p);
        }
        CHECK_EQ_U64(r.n, 0);
        opool_heap_destroy(h);
    }
}

TEST(a_full_class_without_grow_fails_counts_and_reports_efull_at_an_episodes_1st_and_2nd_failures) {
    uint32_t size = 64, p = blocks_per_page(64);
    recorder r;
    opool_heap *h = make_heap(&size, 1, 2 * p, OPOOL_HEAP_FIXED, &r);
    REQUIRE(h);
    void **blocks = (void **)malloc(2 * p * sizeof *blocks);
    REQUIRE(blocks);
    for (uint32_t k = 0; k < 2 * p; k++) {
        blocks[k] = opool_heap_alloc(h, 1 + k % 64);
        CHECK(blocks[k] != NULL);
    }
    CHECK_EQ_U64(r.n, 0);
    CHECK(opool_heap_alloc(h, 64) == NULL);
    CHECK_EQ_U64(r.n, 1);
    CHECK_EQ_U64(r.what, OPOOL_EFULL);
    CHECK(r.heap == h);
    CHECK(opool_heap_alloc(h, 1) == NULL);
    CHECK_EQ_U64(r.n, 2); /* the episode's 2nd failure */
    CHECK(opool_heap_calloc(h, 2, 2) == NULL);
    CHECK_EQ_U64(r.n, 2); /* its 3rd: not reported */
    opool_heap_stats s = stats_of(h);
    CHECK_EQ_U64(s.classes[0].failed_allocs, 3);
    CHECK_EQ_U64(s.classes[0].allocs, 2 * p);
    CHECK_EQ_U64(s.classes[0].live, 2 * p);
    CHECK_EQ_U64(s.classes[0].blocks, 2 * p);
    /* one free is no recovery: the block comes back, the episode goes on (4th failure) */
    CHECK_EQ_U64(opool_heap_free(h, blocks[7]), OPOOL_OK);
    blocks[7] = opool_heap_alloc(h, 64);
    CHECK(blocks[7] != NULL);
    CHECK(opool_heap_alloc(h, 64) == NULL);
    CHECK_EQ_U64(r.n, 3);
    CHECK_EQ_U64(r.by_what[OPOOL_EFULL], 3);
    CHECK_EQ_U64(stats_of(h).classes[0].failed_allocs, 4);
    /* other sizes still work: the large ones, from the heap's own classes (which grow,
     * as large blocks do) up to the largest, then runs or the allocator */
    void *big = opool_heap_alloc(h, 65);
    CHECK(big != NULL);
    CHECK_EQ_U64(opool_heap_usable_size(h, big), 96);
    void *bigger = opool_heap_alloc(h, LARGEST + 1);
    CHECK(bigger != NULL);
    CHECK_EQ_U64(opool_heap_usable_size(h, bigger), LARGEST + 1);
    CHECK_EQ_U64(stats_of(h).large_live, 2);
    CHECK_EQ_U64(stats_of(h).large_bytes, 96 + LARGEST + 1);
    free(blocks);
    opool_heap_destroy(h);
}

TEST(a_class_with_grow_keeps_allocating_page_after_page) {
    uint32_t size = 1024, p = blocks_per_page(1024);
    counting c;
    recorder r;
    opool_heap_desc d = desc_of(&r);
    d.class_sizes = &size;
    d.class_count = 1;
    d.flags = OPOOL_HEAP_GROW;
    d.allocator = counting_allocator(&c);
    opool_heap *h = create(&d);
    REQUIRE(h);
    size_t bytes0 = stats_of(h).bytes;
    uint32_t n = 4 * p + 3;
    for (uint32_t k = 0; k < n; k++) {
        void *q = opool_heap_alloc(h, 1000);
        CHECK(q != NULL);
        if (q) memset(q, 1, 1024);
    }
    opool_heap_stats s = stats_of(h);
    CHECK_EQ_U64(s.classes[0].live, n);
    CHECK_EQ_U64(s.classes[0].blocks, 5 * p);
    CHECK_EQ_U64(s.classes[0].failed_allocs, 0);
    CHECK_EQ_U64(s.classes[0].high_water, n);
    CHECK(s.bytes >= bytes0 + 4 * (size_t)OPOOL_HEAP_PAGE);
    CHECK_EQ_U64(r.n, 0);
    DESTROY_COUNTED(h, &c);
}

/* Reuse is LIFO across pages: the block freed last is handed out next, whichever page holds it,
 * and a class whose pages all filled up finds every block freed into any of them (no spurious
 * failure of a fixed heap). */
TEST(reuse_is_lifo_across_pages_and_finds_every_freed_block) {
    uint32_t size = 1024, p = blocks_per_page(1024);
    recorder r;
    opool_heap *h = make_heap(&size, 1, 3 * p, OPOOL_HEAP_FIXED, &r);
    REQUIRE(h);
    uint32_t n = 3 * p;
    char **b = (char **)malloc(n * sizeof *b);
    REQUIRE(b);
    for (uint32_t k = 0; k < n; k++) REQUIRE((b[k] = (char *)opool_heap_alloc(h, size)) != NULL);
    CHECK(opool_heap_alloc(h, size) == NULL); /* every page full */
    /* one block from each page, the middle page's last: it comes back first */
    char *first = b[0], *middle = b[p + 1], *last = b[n - 1];
    CHECK((uintptr_t)first / OPOOL_HEAP_PAGE != (uintptr_t)middle / OPOOL_HEAP_PAGE);
    CHECK((uintptr_t)middle / OPOOL_HEAP_PAGE != (uintptr_t)last / OPOOL_HEAP_PAGE);
    CHECK_EQ_U64(opool_heap_free(h, last), OPOOL_OK);
    CHECK_EQ_U64(opool_heap_free(h, first), OPOOL_OK);
    CHECK_EQ_U64(opool_heap_free(h, middle), OPOOL_OK);
    CHECK(opool_heap_alloc(h, size) == middle);
    /* then the other two, in some order, and nothing more */
    char *x = (char *)opool_heap_alloc(h, size), *y = (char *)opool_heap_alloc(h, size);
    CHECK((x == first && y == last) || (x == last && y == first));
    CHECK(opool_heap_alloc(h, size) == NULL);
    CHECK_EQ_U64(stats_of(h).classes[0].failed_allocs, 2);
    /* two pages with a free block each; then a block freed into either is the next one out,
     * though the other page was freed into more recently */
    CHECK_EQ_U64(opool_heap_free(h, b[0]), OPOOL_OK);
    CHECK_EQ_U64(opool_heap_free(h, b[n - 1]), OPOOL_OK);
    const uint32_t order[] = {1, n - 2, 2, n - 3, 3};
    for (int j = 0; j < 5; j++) {
        CHECK_EQ_U64(opool_heap_free(h, b[order[j]]), OPOOL_OK);
        CHECK(opool_heap_alloc(h, size) == b[order[j]]);
    }
    x = (char *)opool_heap_alloc(h, size);
    y = (char *)opool_heap_alloc(h, size);
    CHECK((x == b[0] && y == b[n - 1]) || (x == b[n - 1] && y == b[0]));
    CHECK(opool_heap_alloc(h, size) == NULL);
    free(b);
    opool_heap_destroy(h);
}

/* Emptied grown pages leave their class (but one, its spare) for the heap's cache: the class
 * holds fewer blocks, the allocator gets nothing back at once, and the class grows again from
 * the cache without asking the allocator for anything. */
TEST(grow_moves_empty_grown_pages_but_one_to_the_cache_and_takes_them_back) {
    uint32_t size = 2048, p = blocks_per_page(2048);
    counting c;
    recorder r;
    opool_heap_desc d = desc_of(&r);
    d.class_sizes = &size;
    d.class_count = 1;
    d.flags = OPOOL_HEAP_GROW;
    d.allocator = counting_allocator(&c);
    opool_heap *h = create(&d);
    REQUIRE(h);
    uint32_t n = 5 * p;
    void **blocks = (void **)malloc(n * sizeof *blocks);
    REQUIRE(blocks);
    for (uint32_t k = 0; k < n; k++) REQUIRE((blocks[k] = opool_heap_alloc(h, 2048)) != NULL);
    CHECK_EQ_U64(stats_of(h).classes[0].blocks, 5 * p);
    long calls = c.calls, frees = c.frees;
    for (uint32_t k = 0; k < n; k++) CHECK_EQ_U64(opool_heap_free(h, blocks[n - 1 - k]), OPOOL_OK);
    opool_heap_stats s = stats_of(h);
    CHECK_EQ_U64(s.classes[0].live, 0);
    /* the page reserved at create, and at most one empty grown page */
    CHECK(s.classes[0].blocks == p || s.classes[0].blocks == 2 * p);
    CHECK_EQ_U64(c.frees, frees); /* nothing given back on the spot */
    /* and it grows again from the cache */
    for (uint32_t k = 0; k < n; k++) CHECK((blocks[k] = opool_heap_alloc(h, 2048)) != NULL);
    CHECK_EQ_U64(stats_of(h).classes[0].blocks, 5 * p);
    CHECK_EQ_U64(c.calls, calls);
    CHECK_EQ_U64(r.n, 0);
    free(blocks);
    DESTROY_COUNTED(h, &c);
}

/* The issue's garbage-collector cycle, smaller: every round allocates 20,000 blocks of 48 bytes
 * and frees them all, then the same bytes in 256-byte blocks. After the first round the heap
 * asks its allocator for nothing and gives nothing back: a class's emptied pages serve the
 * next fill, the other class's too. */
TEST(a_fill_and_empty_cycle_asks_the_allocator_for_nothing_after_its_first_round) {
    counting c;
    recorder r;
    opool_heap_desc d = desc_of(&r);
    d.allocator = counting_allocator(&c);
    opool_heap *h = create(&d);
    REQUIRE(h);
    enum { N = 20000 };
    void **b = (void **)malloc(N * sizeof *b);
    REQUIRE(b);
    long calls = 0, frees = 0;
    for (int round = 0; round < 12; round++) {
        size_t size = round % 2 ? 256 : 48;
        uint32_t n = round % 2 ? N * 48 / 256 : N;
        for (uint32_t k = 0; k < n; k++) {
            b[k] = opool_heap_alloc(h, size);
            REQUIRE(b[k] != NULL);
            memset(b[k], round, size);
        }
        for (uint32_t k = 0; k < n; k++) /* a different order each round */
            CHECK_EQ_U64(opool_heap_free(h, b[(k * 7919u + (uint32_t)round) % n]), OPOOL_OK);
        if (round == 1) {
            calls = c.calls;
            frees = c.frees;
        } else if (round > 1) {
            CHECK_EQ_U64(c.calls, calls);
            CHECK_EQ_U64(c.frees, frees);
        }
    }
    CHECK(calls < 20); /* pages came in regions, not one request each */
    CHECK_EQ_U64(r.n, 0);
    free(b);
    DESTROY_COUNTED(h, &c);
}

/* A cached page is dirty: calloc of a block carved from it is zeroed all the same, while a
 * block of the fresh memory from the system is zero without being written. */
TEST(calloc_zero_fills_blocks_of_a_page_that_served_another_class) {
    for (int own = 0; own < 2; own++) {
        counting c;
        recorder r;
        opool_heap_desc d = desc_of(&r);
        if (own) d.allocator = counting_allocator(&c); /* dirty memory, 0xA5 */
        opool_heap *h = create(&d);
        REQUIRE(h);
        enum { N = 3000 };
        void **b = (void **)malloc(N * sizeof *b);
        REQUIRE(b);
        for (int k = 0; k < N; k++) {
            REQUIRE((b[k] = opool_heap_calloc(h, 1, 100)) != NULL);
            const unsigned char *q = (const unsigned char *)b[k];
            for (int i = 0; i < 100; i++) CHECK(q[i] == 0);
            memset(b[k], 0xFF, 112);
        }
        for (int k = 0; k < N; k++) CHECK_EQ_U64(opool_heap_free(h, b[k]), OPOOL_OK);
        for (int k = 0; k < N; k++) {
            REQUIRE((b[k] = opool_heap_calloc(h, 3, 40)) != NULL); /* the 128-byte class */
            const unsigned char *q = (const unsigned char *)b[k];
            bool zero = true;
            for (int i = 0; i < 120; i++) zero = zero && q[i] == 0;
            CHECK(zero);
        }
        for (int k = 0; k < N; k++) CHECK_EQ_U64(opool_heap_free(h, b[k]), OPOOL_OK);
        CHECK_EQ_U64(r.n, 0);
        free(b);
        opool_heap_destroy(h);
    }
}

/* An allocator that refuses anything larger than a page still gets a growing heap: the heap
 * asks for one page when a region is refused. */
TEST(a_heap_grows_page_by_page_when_the_allocator_refuses_regions) {
    uint32_t size = 256, p = blocks_per_page(256);
    counting c;
    recorder r;
    opool_heap_desc d = desc_of(&r);
    d.class_sizes = &size;
    d.class_count = 1;
    d.allocator = counting_allocator(&c);
    c.max_request = OPOOL_HEAP_PAGE;
    opool_heap *h = create(&d);
    REQUIRE(h);
    uint32_t n = 6 * p;
    void **b = (void **)malloc(n * sizeof *b);
    REQUIRE(b);
    for (uint32_t k = 0; k < n; k++) REQUIRE((b[k] = opool_heap_alloc(h, size)) != NULL);
    CHECK_EQ_U64(stats_of(h).classes[0].blocks, n);
    CHECK(c.failures >= 5); /* a region asked for, refused, before each page */
    CHECK_EQ_U64(r.n, 0);
    for (uint32_t k = 0; k < n; k++) CHECK_EQ_U64(opool_heap_free(h, b[k]), OPOOL_OK);
    free(b);
    DESTROY_COUNTED(h, &c);
}

/* The page of p. */
static uintptr_t page_of(const void *p) { return (uintptr_t)p & ~(PAGE - 1); }

/* Frees of pointers the heap holds no block at -- in a page of its cache, in the unused part
 * of a region, in a page given back -- are rejected: EINVAL, reported, counted. */
static void expect_rejected(opool_heap *h, recorder *r, void *ptr, int line) {
    int n = r->n;
    uint64_t rejected = stats_of(h).rejected;
    opool_status s = opool_heap_free(h, ptr);
    if (s != OPOOL_EINVAL || r->n != n + 1 || r->what != OPOOL_EINVAL ||
        stats_of(h).rejected != rejected + 1) {
        fprintf(stderr, "  (pointer %p, line %d)\n", ptr, line);
        CHECK_EQ_U64(s, OPOOL_EINVAL);
        CHECK_EQ_U64(r->n, n + 1);
    }
    CHECK(opool_heap_realloc(h, ptr, 8) == NULL);
    CHECK_EQ_U64(opool_heap_usable_size(h, ptr), 0);
}

/* Without an allocator of its own, a large block grows as a run while it fits 16 pages (RUNS),
 * then as a mapping of its own, whose pages the system moves (mremap on Linux): the
 * contents stay, the size and the statistics follow, and a free of the old address (if it
 * moved) is rejected as for any pointer the heap does not hold. */
TEST(a_large_block_grows_through_realloc_and_keeps_its_contents) {
    recorder r;
    opool_heap *h = make_heap(NULL, 0, 0, 0, &r);
    REQUIRE(h);
    unsigned char *p = (unsigned char *)opool_heap_alloc(h, 40000);
    REQUIRE(p);
    fill(p, 40000, 7);
    size_t size = 40000;
    for (int k = 0; k < 6; k++) {
        size_t next = size * 3;
        unsigned char *q = (unsigned char *)opool_heap_realloc(h, p, next);
        REQUIRE(q);
        CHECK(filled(q, 40000, 7)); /* what was written first stays through every growth */
        CHECK_EQ_U64(opool_heap_usable_size(h, q), next);
        opool_heap_stats s = stats_of(h);
        CHECK_EQ_U64(s.large_live, 1);
        CHECK_EQ_U64(s.large_bytes, next);
        CHECK_EQ_U64((uintptr_t)q % 16, 0);
        if (q != p) expect_rejected(h, &r, p, __LINE__);
        p = q;
        size = next;
    }
    CHECK_EQ_U64(opool_heap_free(h, p), OPOOL_OK);
    CHECK_EQ_U64(stats_of(h).large_bytes, 0);
    opool_heap_destroy(h);
}

TEST(free_of_a_pointer_into_a_cached_page_or_an_unused_part_of_a_region_is_einval) {
    uint32_t size = 1024, p = blocks_per_page(1024);
    recorder r;
    opool_heap *h = make_heap(&size, 1, 0, OPOOL_HEAP_GROW, &r);
    REQUIRE(h);
    uint32_t n = 4 * p;
    char **b = (char **)malloc(n * sizeof *b);
    REQUIRE(b);
    for (uint32_t k = 0; k < n; k++) REQUIRE((b[k] = (char *)opool_heap_alloc(h, size)));
    /* pages 2 .. 4 came from one region asked for at once; its page after them is unused
     * (a region holds at least 4 pages) */
    char *unused = (char *)page_of(b[n - 1]) + PAGE;
    CHECK(page_of(b[2 * p]) == page_of(b[p]) + PAGE);
    expect_rejected(h, &r, unused + 64, __LINE__);
    expect_rejected(h, &r, unused + 128 + 1024, __LINE__);
    /* empty the grown pages: one stays as the class's spare, the others go to the cache */
    for (uint32_t k = p; k < n; k++) CHECK_EQ_U64(opool_heap_free(h, b[k]), OPOOL_OK);
    CHECK_EQ_U64(stats_of(h).classes[0].blocks, 2 * p);
    int cached = 0;
    for (uint32_t k = p; k < n; k += p) {
        /* a block freed twice whose page left the class is no block of the heap any more */
        opool_status s = opool_heap_free(h, b[k + 1]);
        CHECK(s == OPOOL_ESTALE || s == OPOOL_EINVAL);
        if (s == OPOOL_EINVAL) {
            cached++;
            expect_rejected(h, &r, b[k + 3], __LINE__);
            expect_rejected(h, &r, (void *)page_of(b[k]), __LINE__); /* its header */
        }
    }
    CHECK_EQ_U64(cached, 2);
    /* live blocks of the reserved page are untouched by all this */
    for (uint32_t k = 0; k < p; k++) CHECK_EQ_U64(opool_heap_free(h, b[k]), OPOOL_OK);
    free(b);
    opool_heap_destroy(h);
}

/* Sleep a little over ms milliseconds (the heap's hysteresis is measured in time). */
static void sleep_ms(long ms) {
#if defined(_POSIX_C_SOURCE)
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&t, &t) != 0) {
    }
#else
    /* the heap's own clock (C11's timespec_get is not in every C library) */
    uint64_t t0 = opool__now_ns();
    while (opool__now_ns() - t0 < (uint64_t)ms * 1000000u) {
    }
#endif
}

/* Cached pages left unused for a while go back to the system at the heap's next page event;
 * pointers into them are then rejected, and a region none of whose pages is held goes back
 * to the allocator whole. Once with the system's memory (the bytes the heap holds drop),
 * once with an allocator (a region is freed). calloc's blocks of the pages taken again are
 * zero although every block was written before: the system's pages read zero once given
 * back (calloc need not write them), the allocator's are written. */
/* Pages 4 .. 9: the second region (pages 6 .. 10) goes back whole; pages 4 and 5 go back on
 * their own where the system takes pages back one by one (mmap: src/opool_platform.h), and
 * elsewhere (WebAssembly, OPOOL_PORTABLE: the C library's memory) stay until their region
 * goes, as an allocator's do. */
#if defined(OPOOL__MMAP)
#define SYSTEM_GIVES_BACK 6
#else
#define SYSTEM_GIVES_BACK 5
#endif

TEST(cached_pages_unused_for_a_while_go_back_and_pointers_into_them_are_einval) {
    uint32_t size = 16384, p = blocks_per_page(16384);
    for (int own = 0; own < 2; own++) {
        counting c;
        recorder r;
        opool_heap *h = one_class_heap(&size, &r, own ? &c : NULL);
        REQUIRE(h);
        uint32_t n = 9 * p; /* the reserved page, then regions of 4 and 5 pages */
        char **b = (char **)malloc(n * sizeof *b);
        REQUIRE(b);
        for (uint32_t k = 0; k < n; k++) {
            REQUIRE((b[k] = (char *)opool_heap_alloc(h, size)));
            memset(b[k], 0xA5, size);
        }
        /* free all but one block of page 2: page 3 is the class's spare, pages 4 .. 9 cached */
        for (uint32_t k = p + 1; k < n; k++) CHECK_EQ_U64(opool_heap_free(h, b[k]), OPOOL_OK);
        size_t bytes = stats_of(h).bytes;
        long frees = c.frees;
        sleep_ms(1100);
        /* page 2 empties: a page event, at which the pages cached long ago go back */
        CHECK_EQ_U64(opool_heap_free(h, b[p]), OPOOL_OK);
        if (own)
            CHECK(c.frees > frees); /* the second region went back whole */
        else
            CHECK(stats_of(h).bytes <= bytes - SYSTEM_GIVES_BACK * (size_t)PAGE);
        for (uint32_t k = 3 * p; k < n; k++) expect_rejected(h, &r, b[k], __LINE__);
        /* and the heap grows again as before, its blocks zero through calloc */
        for (uint32_t k = p; k < n; k++) {
            REQUIRE((b[k] = (char *)opool_heap_calloc(h, 1, size)));
            CHECK(all_zero(b[k], size));
        }
        for (uint32_t k = 0; k < n; k++) CHECK_EQ_U64(opool_heap_free(h, b[k]), OPOOL_OK);
        free(b);
        opool_heap_destroy(h);
        if (own) {
            CHECK_EQ_U64(c.blocks, 0);
            CHECK_EQ_U64(c.bad_frees, 0);
        }
    }
}

TEST(a_class_with_grow_fails_and_reports_when_the_allocator_fails) {
    uint32_t size = 4096, p = blocks_per_page(4096);
    counting c;
    recorder r;
    opool_heap_desc d = desc_of(&r);
    d.class_sizes = &size;
    d.class_count = 1;
    d.flags = OPOOL_HEAP_GROW;
    d.allocator = counting_allocator(&c);
    opool_heap *h = create(&d);
    REQUIRE(h);
    /* the first alloc asks for a region of one page (MEMORY) */
    for (uint32_t k = 0; k < p; k++) CHECK(opool_heap_alloc(h, 4096) != NULL);
    c.fail_from = c.calls;
    CHECK(opool_heap_alloc(h, 4096) == NULL);
    CHECK_EQ_U64(r.n, 1);
    CHECK_EQ_U64(r.what, OPOOL_EFULL);
    opool_heap_stats s = stats_of(h);
    CHECK_EQ_U64(s.classes[0].live, p);
    CHECK_EQ_U64(s.classes[0].blocks, p);
    CHECK_EQ_U64(s.classes[0].allocs, p);
    c.fail_from = -1;
    CHECK(opool_heap_alloc(h, 4096) != NULL);
    CHECK_EQ_U64(stats_of(h).classes[0].live, p + 1);
    opool_heap_destroy(h);
    CHECK_EQ_U64(c.blocks, 0);
}

TEST(sizes_above_the_largest_class_go_to_the_allocator) {
    counting c;
    recorder r;
    opool_heap_desc d = desc_of(&r);
    d.allocator = counting_allocator(&c);
    opool_heap *h = create(&d);
    REQUIRE(h);
    long blocks0 = c.blocks;
    size_t bytes0 = stats_of(h).bytes;
    void *a = opool_heap_alloc(h, (LARGEST + 1));
    void *b = opool_heap_alloc(h, 100000);
    REQUIRE(a && b);
    CHECK(c.blocks >= blocks0 + 2);
    CHECK(c.bytes >= (LARGEST + 1) + 100000);
    CHECK_EQ_U64(opool_heap_usable_size(h, a), (LARGEST + 1));
    CHECK_EQ_U64(opool_heap_usable_size(h, b), 100000);
    memset(a, 1, (LARGEST + 1));
    memset(b, 2, 100000);
    opool_heap_stats both = stats_of(h);
    CHECK_EQ_U64(both.large_live, 2);
    CHECK_EQ_U64(both.large_bytes, (LARGEST + 1) + 100000);
    CHECK(both.bytes >= bytes0 + (LARGEST + 1) + 100000);
    for (int k = 0; k < NDEFAULT; k++) CHECK_EQ_U64(both.classes[k].allocs, 0);
    CHECK_EQ_U64(opool_heap_free(h, a), OPOOL_OK);
    opool_heap_stats s = stats_of(h);
    CHECK_EQ_U64(s.large_live, 1);
    CHECK_EQ_U64(s.large_bytes, 100000);
    CHECK(s.bytes <= both.bytes - (LARGEST + 1));
    CHECK_EQ_U64(opool_heap_free(h, b), OPOOL_OK);
    s = stats_of(h);
    CHECK_EQ_U64(s.large_live, 0);
    CHECK_EQ_U64(s.large_bytes, 0);
    CHECK(c.bytes < NDEFAULT * (size_t)OPOOL_HEAP_PAGE + 100000);
    CHECK_EQ_U64(r.n, 0);
    DESTROY_COUNTED(h, &c);
}

TEST(no_fallback_makes_sizes_above_the_largest_class_fail) {
    counting c;
    recorder r;
    opool_heap_desc d = desc_of(&r);
    d.allocator = counting_allocator(&c);
    d.flags = OPOOL_HEAP_NO_FALLBACK;
    opool_heap *h = create(&d);
    REQUIRE(h);
    long calls = c.calls;
    CHECK(opool_heap_alloc(h, LARGEST + 1) == NULL);
    CHECK(opool_heap_alloc(h, 1u << 20) == NULL);
    CHECK(opool_heap_calloc(h, 2, LARGEST / 2 + 1) == NULL);
    CHECK_EQ_U64(c.calls, calls);
    void *p = opool_heap_alloc(h, LARGEST);
    CHECK(p != NULL);
    CHECK(opool_heap_realloc(h, p, LARGEST + 1) == NULL); /* p stays valid */
    CHECK_EQ_U64(opool_heap_usable_size(h, p), LARGEST);
    opool_heap_stats s = stats_of(h);
    CHECK_EQ_U64(s.large_live, 0);
    CHECK_EQ_U64(s.large_bytes, 0);
    CHECK_EQ_U64(s.classes[default_index(LARGEST)].live, 1);
    CHECK_EQ_U64(opool_heap_free(h, p), OPOOL_OK);
    opool_heap_destroy(h);
}

TEST(a_large_alloc_fails_and_reports_efull_when_the_allocator_fails) {
    counting c;
    recorder r;
    opool_heap_desc d = desc_of(&r);
    d.allocator = counting_allocator(&c);
    opool_heap *h = create(&d);
    REQUIRE(h);
    CHECK_EQ_U64(opool_heap_free(h, opool_heap_alloc(h, 100)), OPOOL_OK); /* its class's page */
    c.fail_from = c.calls;
    CHECK(opool_heap_alloc(h, 50000) == NULL);
    CHECK_EQ_U64(r.n, 1);
    CHECK_EQ_U64(r.what, OPOOL_EFULL);
    opool_heap_stats s = stats_of(h);
    CHECK_EQ_U64(s.large_live, 0);
    CHECK_EQ_U64(s.large_bytes, 0);
    CHECK(opool_heap_alloc(h, 100) != NULL); /* a class with a free block needs no allocator */
    c.fail_from = -1;
    void *p = opool_heap_alloc(h, 50000);
    CHECK(p != NULL);
    CHECK_EQ_U64(stats_of(h).large_live, 1);
    opool_heap_destroy(h);
    CHECK_EQ_U64(c.blocks, 0);
}

TEST(the_next_alloc_of_a_class_returns_the_block_just_freed) {
    recorder r;
    opool_heap *h = make_heap(NULL, 0, 0, 0, &r);
    REQUIRE(h);
    void *a = opool_heap_alloc(h, 100), *b = opool_heap_alloc(h, 100);
    void *c = opool_heap_alloc(h, 100), *other = opool_heap_alloc(h, 20);
    REQUIRE(a && b && c && other);
    CHECK_EQ_U64(opool_heap_free(h, b), OPOOL_OK);
    CHECK_EQ_PTR(opool_heap_alloc(h, 97), b); /* 97..112: the same class */
    CHECK_EQ_U64(opool_heap_free(h, a), OPOOL_OK);
    CHECK(opool_heap_alloc(h, 20) != a); /* another class */
    CHECK_EQ_PTR(opool_heap_alloc(h, 112), a);
    opool_heap_destroy(h);
}

TEST(calloc_zero_fills) {
    counting c;
    recorder r;
    opool_heap_desc d = desc_of(&r);
    d.allocator = counting_allocator(&c); /* dirty pages and large blocks */
    opool_heap *h = create(&d);
    REQUIRE(h);
    for (size_t n = 1; n <= 9; n++)
        for (size_t size = 1; size < 700; size += 37) {
            unsigned char *p = (unsigned char *)opool_heap_calloc(h, n, size);
            REQUIRE(p);
            CHECK(all_zero(p, n * size));
            CHECK(opool_heap_usable_size(h, p) >= n * size);
        }
    unsigned char *big = (unsigned char *)opool_heap_calloc(h, 3, 70000);
    REQUIRE(big);
    CHECK(all_zero(big, 210000));
    CHECK_EQ_U64(opool_heap_usable_size(h, big), 210000);
    unsigned char *z = (unsigned char *)opool_heap_calloc(h, 0, 5);
    CHECK(z != NULL);
    CHECK_EQ_U64(opool_heap_usable_size(h, z), 16);
    opool_heap_destroy(h);
}

TEST(calloc_zero_fills_a_reused_dirty_block) {
    recorder r;
    opool_heap *h = make_heap(NULL, 0, 0, 0, &r);
    REQUIRE(h);
    unsigned char *p = (unsigned char *)opool_heap_alloc(h, 256);
    REQUIRE(p);
    memset(p, 0xEE, 256);
    CHECK_EQ_U64(opool_heap_free(h, p), OPOOL_OK);
    unsigned char *q = (unsigned char *)opool_heap_calloc(h, 4, 64);
    CHECK_EQ_PTR(q, p);
    REQUIRE(q);
    CHECK(all_zero(q, 256));
    /* a large block given back and asked for again is zeroed too */
    unsigned char *big = (unsigned char *)opool_heap_alloc(h, 9000);
    REQUIRE(big);
    memset(big, 0xEE, 9000);
    CHECK_EQ_U64(opool_heap_free(h, big), OPOOL_OK);
    big = (unsigned char *)opool_heap_calloc(h, 9000, 1);
    REQUIRE(big);
    CHECK(all_zero(big, 9000));
    opool_heap_destroy(h);
}

TEST(calloc_returns_null_when_n_times_size_overflows_and_counts_nothing) {
    recorder r;
    opool_heap *h = make_heap(NULL, 0, 0, 0, &r);
    REQUIRE(h);
    void *keep = opool_heap_alloc(h, 30);
    REQUIRE(keep);
    opool_heap_stats before = stats_of(h);
    CHECK(opool_heap_calloc(h, SIZE_MAX / 2 + 1, 2) == NULL);
    CHECK(opool_heap_calloc(h, 2, SIZE_MAX / 2 + 1) == NULL);
    CHECK(opool_heap_calloc(h, SIZE_MAX, SIZE_MAX) == NULL);
    CHECK(opool_heap_calloc(h, (SIZE_MAX >> 4) + 1, 16) == NULL);
    opool_heap_stats after = stats_of(h);
    CHECK(stats_same(&before, &after, 0));
    CHECK(opool_heap_calloc(h, 2, 8) != NULL);
    opool_heap_destroy(h);
}

/* ---- free --------------------------------------------------------------- */

TEST(free_of_null_is_ok) {
    recorder r;
    opool_heap *h = make_heap(NULL, 0, 0, 0, &r);
    REQUIRE(h);
    opool_heap_stats before = stats_of(h);
    CHECK_EQ_U64(opool_heap_free(h, NULL), OPOOL_OK);
    opool_heap_stats after = stats_of(h);
    CHECK(stats_same(&before, &after, 0));
    CHECK_EQ_U64(r.n, 0);
    opool_heap_destroy(h);
}

TEST(free_with_a_null_heap_is_einval) {
    recorder r;
    opool_heap *h = make_heap(NULL, 0, 0, 0, &r);
    REQUIRE(h);
    void *p = opool_heap_alloc(h, 10);
    REQUIRE(p);
    CHECK_EQ_U64(opool_heap_free(NULL, p), OPOOL_EINVAL);
    CHECK_EQ_U64(stats_of(h).classes[0].live, 1);
    CHECK_EQ_U64(opool_heap_free(h, p), OPOOL_OK);
    opool_heap_destroy(h);
}

/* free(p) must give want, report it with p, change nothing but stats.rejected, and the heap
 * must keep working. */
static void expect_rejected_free(opool_heap *h, recorder *r, const void *p, opool_status want,
                                 const char *what) {
    opool_heap_stats before = stats_of(h);
    int n = r->n;
    opool_status s = opool_heap_free(h, (void *)(uintptr_t)p);
    opool_heap_stats after = stats_of(h);
    if (s != want || r->n != n + 1 || r->what != want || r->ptr != p || r->heap != h ||
        !stats_same(&before, &after, 1)) {
        fprintf(stderr, "  (free of %s %p)\n", what, p);
        CHECK_EQ_U64(s, want);
        CHECK_EQ_U64(r->n, n + 1);
        CHECK_EQ_U64(r->what, want);
        CHECK_EQ_PTR(r->ptr, p);
        CHECK(r->heap == h);
        CHECK(stats_same(&before, &after, 1));
    }
}

TEST(free_of_foreign_pointers_is_einval_reported_and_changes_nothing) {
    recorder r, r2;
    opool_heap *h = make_heap(NULL, 0, 0, 0, &r);
    opool_heap *h2 = make_heap(NULL, 0, 0, 0, &r2);
    REQUIRE(h && h2);
    unsigned char *mine = (unsigned char *)opool_heap_alloc(h, 100);
    unsigned char *other = (unsigned char *)opool_heap_alloc(h2, 100);
    unsigned char *other_large = (unsigned char *)opool_heap_alloc(h2, 5000);
    unsigned char *m = (unsigned char *)malloc(64);
    REQUIRE(mine && other && other_large && m);
    int local = 0;
    uintptr_t page = (uintptr_t)mine & ~(PAGE - 1);

    expect_rejected_free(h, &r, m, OPOOL_EINVAL, "a malloc'd block");
    expect_rejected_free(h, &r, &local, OPOOL_EINVAL, "a stack address");
    expect_rejected_free(h, &r, other, OPOOL_EINVAL, "a block of another heap");
    expect_rejected_free(h, &r, other_large, OPOOL_EINVAL, "a large block of another heap");
    expect_rejected_free(h, &r, (void *)(uintptr_t)1, OPOOL_EINVAL, "(void *)1");
    expect_rejected_free(h, &r, (void *)(uintptr_t)-16, OPOOL_EINVAL, "the top of memory");
    for (int k = -3; k <= 3; k++)
        expect_rejected_free(h, &r, (void *)(page + (uintptr_t)(intptr_t)k * PAGE), OPOOL_EINVAL,
                             "a 64 KiB-aligned address nearby");
    expect_rejected_free(h, &r, (void *)(page + 4096 * PAGE + 64), OPOOL_EINVAL,
                         "an address far away");
    CHECK_EQ_U64(stats_of(h).rejected, 14);
    CHECK_EQ_U64(r2.n, 0);
    /* both heaps go on as before */
    CHECK_EQ_U64(opool_heap_usable_size(h2, other), 112);
    CHECK_EQ_U64(opool_heap_free(h2, other), OPOOL_OK);
    CHECK_EQ_U64(opool_heap_free(h2, other_large), OPOOL_OK);
    CHECK_EQ_U64(opool_heap_free(h, mine), OPOOL_OK);
    CHECK_EQ_PTR(opool_heap_alloc(h, 100), mine);
    CHECK_EQ_U64(stats_of(h2).rejected, 0);
    free(m);
    opool_heap_destroy(h);
    opool_heap_destroy(h2);
}

TEST(free_of_an_interior_pointer_is_einval_and_the_block_stays_live) {
    recorder r;
    opool_heap *h = make_heap(NULL, 0, 0, 0, &r);
    REQUIRE(h);
    unsigned char *p = (unsigned char *)opool_heap_alloc(h, 64);
    REQUIRE(p);
    fill(p, 64, 1);
    expect_rejected_free(h, &r, p + 1, OPOOL_EINVAL, "block + 1");
    expect_rejected_free(h, &r, p + 8, OPOOL_EINVAL, "block + 8");
    expect_rejected_free(h, &r, p + 63, OPOOL_EINVAL, "block + 63");
    CHECK(filled(p, 64, 1));
    CHECK_EQ_U64(stats_of(h).rejected, 3);
    CHECK_EQ_U64(opool_heap_free(h, p), OPOOL_OK);
    opool_heap_destroy(h);
}

/* The live bitmap has a bit per granule (the largest power of two dividing the class size,
 * at most 128): a pointer inside a block on a granule's boundary has a bit of its own, never
 * set, so it is rejected as any interior pointer, and the block stays live. */
TEST(free_of_an_interior_pointer_on_a_granule_boundary_is_einval) {
    static const uint32_t sizes[] = {24, 48, 80, 96, 1152, 2048};
    for (int k = 0; k < 6; k++) {
        uint32_t size = sizes[k], granule = 8;
        while (granule < 128 && size % (2 * granule) == 0) granule *= 2;
        recorder r;
        opool_heap *h = make_heap(&size, 1, 0, 0, &r);
        REQUIRE(h);
        unsigned char *p = (unsigned char *)opool_heap_alloc(h, size);
        unsigned char *q = (unsigned char *)opool_heap_alloc(h, size);
        REQUIRE(p && q);
        uint64_t rejected = 0;
        for (uint32_t off = granule; off < size; off += granule) {
            CHECK_EQ_U64(opool_heap_free(h, p + off), OPOOL_EINVAL);
            CHECK_EQ_U64(opool_heap_usable_size(h, q + off), 0);
            rejected += 2;
        }
        CHECK_EQ_U64(stats_of(h).rejected, rejected);
        CHECK_EQ_U64(stats_of(h).classes[0].live, 2);
        CHECK_EQ_U64(opool_heap_free(h, p), OPOOL_OK);
        CHECK_EQ_U64(opool_heap_free(h, q), OPOOL_OK);
        CHECK_EQ_U64(opool_heap_free(h, q), OPOOL_ESTALE);
        opool_heap_destroy(h);
    }
}

TEST(free_of_a_block_never_handed_out_is_einval) {
    uint32_t size = 256;
    recorder r;
    opool_heap *h = make_heap(&size, 1, 0, 0, &r);
    REQUIRE(h);
    unsigned char *p = (unsigned char *)opool_heap_alloc(h, 256);
    REQUIRE(p);
    /* a neighbour in the same page: a block start, but not one the heap handed out */
    uintptr_t page = (uintptr_t)p & ~(PAGE - 1);
    unsigned char *q = (uintptr_t)p + 2 * size <= page + PAGE ? p + size : p - size;
    expect_rejected_free(h, &r, q, OPOOL_EINVAL, "a block never handed out");
    CHECK_EQ_U64(opool_heap_usable_size(h, q), 0);
    CHECK_EQ_U64(r.what, OPOOL_EINVAL);
    CHECK_EQ_U64(stats_of(h).classes[0].live, 1);
    opool_heap_destroy(h);
}

TEST(free_twice_is_estale_and_reported) {
    recorder r;
    opool_heap *h = make_heap(NULL, 0, 0, 0, &r);
    REQUIRE(h);
    void *p = opool_heap_alloc(h, 300), *q = opool_heap_alloc(h, 300);
    REQUIRE(p && q);
    CHECK_EQ_U64(opool_heap_free(h, p), OPOOL_OK);
    expect_rejected_free(h, &r, p, OPOOL_ESTALE, "a freed block");
    expect_rejected_free(h, &r, p, OPOOL_ESTALE, "a freed block, a third time");
    CHECK_EQ_U64(stats_of(h).classes[default_index(320)].live, 1);
    CHECK_EQ_U64(opool_heap_free(h, q), OPOOL_OK);
    CHECK_EQ_U64(stats_of(h).rejected, 2);
    opool_heap_destroy(h);
}

TEST(free_of_an_interior_pointer_of_a_large_block_is_einval) {
    recorder r;
    opool_heap *h = make_heap(NULL, 0, 0, 0, &r);
    REQUIRE(h);
    unsigned char *p = (unsigned char *)opool_heap_alloc(h, 100000);
    REQUIRE(p);
    expect_rejected_free(h, &r, p + 1, OPOOL_EINVAL, "large block + 1");
    expect_rejected_free(h, &r, p + 16, OPOOL_EINVAL, "large block + 16");
    expect_rejected_free(h, &r, p + 99999, OPOOL_EINVAL, "large block + 99999");
    CHECK_EQ_U64(stats_of(h).large_live, 1);
    CHECK_EQ_U64(opool_heap_free(h, p), OPOOL_OK);
    opool_heap_destroy(h);
}

TEST(free_twice_of_a_large_block_is_einval) {
    /* the header: a block of the fallback allocator leaves the heap when freed: freeing it
     * again is OPOOL_EINVAL, as for any pointer the heap does not hold */
    counting c;
    recorder r;
    opool_heap_desc d = desc_of(&r);
    d.allocator = counting_allocator(&c);
    opool_heap *h = create(&d);
    REQUIRE(h);
    void *p = opool_heap_alloc(h, 100000);
    REQUIRE(p);
    CHECK_EQ_U64(opool_heap_free(h, p), OPOOL_OK);
    expect_rejected_free(h, &r, p, OPOOL_EINVAL, "a freed large block");
    CHECK_EQ_U64(c.bad_frees, 0);
    opool_heap_destroy(h);
    CHECK_EQ_U64(c.blocks, 0);
}

TEST(rejected_counts_every_bad_free_realloc_and_size_query) {
    recorder r;
    opool_heap *h = make_heap(NULL, 0, 0, 0, &r);
    REQUIRE(h);
    unsigned char *p = (unsigned char *)opool_heap_alloc(h, 40);
    unsigned char *q = (unsigned char *)opool_heap_alloc(h, 40);
    REQUIRE(p && q);
    CHECK_EQ_U64(opool_heap_free(h, q), OPOOL_OK);
    CHECK_EQ_U64(opool_heap_free(h, p + 8), OPOOL_EINVAL);
    CHECK_EQ_U64(opool_heap_free(h, q), OPOOL_ESTALE);
    CHECK(opool_heap_realloc(h, p + 8, 100) == NULL);
    CHECK(opool_heap_realloc(h, q, 100) == NULL);
    CHECK_EQ_U64(opool_heap_usable_size(h, p + 8), 0);
    CHECK_EQ_U64(opool_heap_usable_size(h, q), 0);
    CHECK_EQ_U64(stats_of(h).rejected, 6);
    CHECK_EQ_U64(r.n, 6);
    CHECK_EQ_U64(r.by_what[OPOOL_EINVAL], 3);
    CHECK_EQ_U64(r.by_what[OPOOL_ESTALE], 3);
    opool_heap_destroy(h);
}

/* ---- realloc ------------------------------------------------------------ */

TEST(realloc_of_null_allocates) {
    recorder r;
    opool_heap *h = make_heap(NULL, 0, 0, 0, &r);
    REQUIRE(h);
    void *p = opool_heap_realloc(h, NULL, 100);
    REQUIRE(p);
    CHECK_EQ_U64(opool_heap_usable_size(h, p), 112);
    void *q = opool_heap_realloc(h, NULL, 40000);
    REQUIRE(q);
    CHECK_EQ_U64(opool_heap_usable_size(h, q), 40000);
    opool_heap_stats s = stats_of(h);
    CHECK_EQ_U64(s.classes[6].live, 1);
    CHECK_EQ_U64(s.classes[6].allocs, 1);
    CHECK_EQ_U64(s.classes[6].requested_bytes, 100);
    CHECK_EQ_U64(s.large_live, 1);
    CHECK_EQ_U64(r.n, 0);
    opool_heap_destroy(h);
}

TEST(realloc_to_size_zero_frees_and_returns_null) {
    recorder r;
    opool_heap *h = make_heap(NULL, 0, 0, 0, &r);
    REQUIRE(h);
    void *p = opool_heap_alloc(h, 100), *big = opool_heap_alloc(h, 40000);
    REQUIRE(p && big);
    CHECK(opool_heap_realloc(h, p, 0) == NULL);
    CHECK(opool_heap_realloc(h, big, 0) == NULL);
    opool_heap_stats s = stats_of(h);
    CHECK_EQ_U64(s.classes[6].live, 0);
    CHECK_EQ_U64(s.large_live, 0);
    CHECK_EQ_U64(s.large_bytes, 0);
    CHECK_EQ_U64(r.n, 0);
    CHECK_EQ_U64(opool_heap_free(h, p), OPOOL_ESTALE); /* it really was freed */
    CHECK_EQ_PTR(opool_heap_alloc(h, 100), p);
    opool_heap_destroy(h);
}

TEST(realloc_within_the_class_returns_the_same_block) {
    recorder r;
    opool_heap *h = make_heap(NULL, 0, 0, 0, &r);
    REQUIRE(h);
    unsigned char *p = (unsigned char *)opool_heap_alloc(h, 100);
    REQUIRE(p);
    fill(p, 112, 3);
    CHECK_EQ_PTR(opool_heap_realloc(h, p, 112), p);
    CHECK_EQ_PTR(opool_heap_realloc(h, p, 97), p);
    CHECK_EQ_PTR(opool_heap_realloc(h, p, 100), p);
    CHECK(filled(p, 112, 3));
    CHECK_EQ_U64(opool_heap_usable_size(h, p), 112);
    opool_heap_stats s = stats_of(h);
    CHECK_EQ_U64(s.classes[6].live, 1);
    CHECK_EQ_U64(s.classes[6].high_water, 1);
    unsigned char *q = (unsigned char *)opool_heap_alloc(h, 16);
    REQUIRE(q);
    CHECK_EQ_PTR(opool_heap_realloc(h, q, 1), q);
    CHECK_EQ_PTR(opool_heap_realloc(h, q, 16), q);
    opool_heap_destroy(h);
}

/* realloc p (its usable bytes filled with seed) to size: the contents up to the smaller size
 * come along, the new block has want_usable bytes, and an old class block is free now. Returns
 * the new block, its usable bytes refilled with seed + 1. */
static unsigned char *realloc_checked(opool_heap *h, unsigned char *p, size_t size, unsigned seed,
                                      size_t want_usable, bool old_is_large) {
    size_t old = opool_heap_usable_size(h, p);
    unsigned char *q = (unsigned char *)opool_heap_realloc(h, p, size);
    if (!q) {
        CHECK(q != NULL);
        return NULL;
    }
    size_t keep = old < size ? old : size;
    if (!filled(q, keep, seed)) {
        fprintf(stderr, "  (realloc %zu -> %zu)\n", old, size);
        CHECK(!"contents kept");
    }
    CHECK_EQ_U64(opool_heap_usable_size(h, q), want_usable);
    CHECK(q != p);
    if (q != p && !old_is_large) CHECK_EQ_U64(opool_heap_free(h, p), OPOOL_ESTALE);
    fill(q, want_usable, seed + 1);
    return q;
}

TEST(realloc_across_classes_keeps_the_contents) {
    recorder r;
    opool_heap *h = make_heap(NULL, 0, 0, 0, &r);
    REQUIRE(h);
    unsigned char *p = (unsigned char *)opool_heap_alloc(h, 10);
    REQUIRE(p);
    fill(p, 16, 10);
    REQUIRE((p = realloc_checked(h, p, 100, 10, 112, false)) != NULL);   /* grow */
    REQUIRE((p = realloc_checked(h, p, 2000, 11, 2048, false)) != NULL); /* grow */
    REQUIRE((p = realloc_checked(h, p, 40, 12, 48, false)) != NULL);     /* shrink */
    REQUIRE((p = realloc_checked(h, p, 17, 13, 32, false)) != NULL);     /* shrink */
    opool_heap_stats s = stats_of(h);
    CHECK_EQ_U64(s.classes[1].live, 1);
    for (int c = 0; c < NDEFAULT; c++)
        if (c != 1) CHECK_EQ_U64(s.classes[c].live, 0);
    CHECK_EQ_U64(r.n, 4); /* the frees of the old blocks checked in realloc_checked */
    opool_heap_destroy(h);
}

TEST(realloc_to_and_from_large_keeps_the_contents) {
    recorder r;
    opool_heap *h = make_heap(NULL, 0, 0, 0, &r);
    REQUIRE(h);
    unsigned char *p = (unsigned char *)opool_heap_alloc(h, 100);
    REQUIRE(p);
    fill(p, 112, 20);
    REQUIRE((p = realloc_checked(h, p, 50000, 20, 50000, false)) != NULL); /* small -> large */
    CHECK_EQ_U64(stats_of(h).large_live, 1);
    CHECK_EQ_U64(stats_of(h).large_bytes, 50000);
    REQUIRE((p = realloc_checked(h, p, 700000, 21, 700000, true)) != NULL); /* -> larger */
    CHECK_EQ_U64(stats_of(h).large_bytes, 700000);
    REQUIRE((p = realloc_checked(h, p, LARGEST, 22, LARGEST, true)) != NULL); /* large -> small */
    REQUIRE((p = realloc_checked(h, p, 60, 23, 64, false)) != NULL);
    opool_heap_stats s = stats_of(h);
    CHECK_EQ_U64(s.large_live, 0);
    CHECK_EQ_U64(s.large_bytes, 0);
    CHECK_EQ_U64(s.classes[3].live, 1);
    opool_heap_destroy(h);
}

TEST(realloc_shrinking_a_large_block_above_the_largest_class_keeps_it_as_it_is) {
    counting c;
    recorder r;
    opool_heap_desc d = desc_of(&r);
    d.allocator = counting_allocator(&c);
    opool_heap *h = create(&d);
    REQUIRE(h);
    unsigned char *p = (unsigned char *)opool_heap_alloc(h, 700000);
    REQUIRE(p);
    fill(p, 700000, 30);
    long calls = c.calls;
    CHECK_EQ_PTR(opool_heap_realloc(h, p, 40000), p);
    CHECK_EQ_PTR(opool_heap_realloc(h, p, LARGEST + 1),
                 p);              /* the smallest size above the classes */
    CHECK_EQ_U64(c.calls, calls); /* no new block */
    CHECK_EQ_U64(opool_heap_usable_size(h, p), 700000);
    CHECK(filled(p, 700000, 30));
    opool_heap_stats s = stats_of(h);
    CHECK_EQ_U64(s.large_live, 1);
    CHECK_EQ_U64(s.large_bytes, 700000);
    /* growing past its size is a new block of the new size */
    unsigned char *q = (unsigned char *)opool_heap_realloc(h, p, 800000);
    REQUIRE(q);
    CHECK(q != p);
    CHECK(filled(q, 700000, 30));
    CHECK_EQ_U64(opool_heap_usable_size(h, q), 800000);
    CHECK_EQ_U64(stats_of(h).large_bytes, 800000);
    CHECK_EQ_U64(r.n, 0);
    opool_heap_destroy(h);
    CHECK_EQ_U64(c.blocks, 0);
}

/* realloc(p) must return NULL, report want with p, change nothing but stats.rejected. */
static void expect_rejected_realloc(opool_heap *h, recorder *r, const void *p, size_t size,
                                    opool_status want, const char *what) {
    opool_heap_stats before = stats_of(h);
    int n = r->n;
    void *q = opool_heap_realloc(h, (void *)(uintptr_t)p, size);
    opool_heap_stats after = stats_of(h);
    if (q != NULL || r->n != n + 1 || r->what != want || r->ptr != p ||
        !stats_same(&before, &after, 1)) {
        fprintf(stderr, "  (realloc of %s %p to %zu)\n", what, p, size);
        CHECK(q == NULL);
        CHECK_EQ_U64(r->n, n + 1);
        CHECK_EQ_U64(r->what, want);
        CHECK_EQ_PTR(r->ptr, p);
        CHECK(stats_same(&before, &after, 1));
    }
}

TEST(realloc_of_a_bad_pointer_returns_null_reports_and_changes_nothing) {
    recorder r;
    opool_heap *h = make_heap(NULL, 0, 0, 0, &r);
    REQUIRE(h);
    unsigned char *p = (unsigned char *)opool_heap_alloc(h, 64);
    unsigned char *gone = (unsigned char *)opool_heap_alloc(h, 64);
    unsigned char *big = (unsigned char *)opool_heap_alloc(h, 4000);
    unsigned char *m = (unsigned char *)malloc(32);
    REQUIRE(p && gone && big && m);
    fill(p, 64, 5);
    CHECK_EQ_U64(opool_heap_free(h, gone), OPOOL_OK);
    expect_rejected_realloc(h, &r, m, 100, OPOOL_EINVAL, "a malloc'd block");
    expect_rejected_realloc(h, &r, p + 8, 100, OPOOL_EINVAL, "an interior pointer");
    expect_rejected_realloc(h, &r, p + 8, 30, OPOOL_EINVAL, "an interior pointer");
    expect_rejected_realloc(h, &r, big + 16, 5000, OPOOL_EINVAL, "inside a large block");
    expect_rejected_realloc(h, &r, gone, 100, OPOOL_ESTALE, "a freed block");
    expect_rejected_realloc(h, &r, gone, 64, OPOOL_ESTALE, "a freed block");
    CHECK(filled(p, 64, 5));
    CHECK_EQ_U64(opool_heap_usable_size(h, p), 64);
    CHECK_EQ_U64(stats_of(h).rejected, 6);
    free(m);
    opool_heap_destroy(h);
}

TEST(realloc_into_a_full_class_fails_and_keeps_the_block) {
    static const uint32_t sizes[] = {64, 1024};
    recorder r;
    opool_heap *h = make_heap(sizes, 2, 1, OPOOL_HEAP_FIXED, &r);
    REQUIRE(h);
    uint32_t p1024 = stats_of(h).classes[1].blocks;
    for (uint32_t k = 0; k < p1024; k++) REQUIRE(opool_heap_alloc(h, 1000));
    unsigned char *p = (unsigned char *)opool_heap_alloc(h, 50);
    REQUIRE(p);
    fill(p, 64, 7);
    opool_heap_stats before = stats_of(h);
    CHECK(opool_heap_realloc(h, p, 500) == NULL);
    CHECK_EQ_U64(r.by_what[OPOOL_EFULL], 1);
    CHECK(filled(p, 64, 7));
    CHECK_EQ_U64(opool_heap_usable_size(h, p), 64);
    opool_heap_stats after = stats_of(h);
    CHECK_EQ_U64(after.classes[0].live, before.classes[0].live);
    CHECK_EQ_U64(after.classes[1].live, p1024);
    CHECK_EQ_U64(after.classes[1].failed_allocs, 1);
    CHECK_EQ_U64(after.rejected, 0);
    CHECK_EQ_U64(opool_heap_free(h, p), OPOOL_OK);
    opool_heap_destroy(h);
}

TEST(realloc_fails_and_keeps_the_block_when_the_allocator_fails) {
    counting c;
    recorder r;
    opool_heap_desc d = desc_of(&r);
    d.allocator = counting_allocator(&c);
    opool_heap *h = create(&d);
    REQUIRE(h);
    unsigned char *p = (unsigned char *)opool_heap_alloc(h, 1000);
    unsigned char *big = (unsigned char *)opool_heap_alloc(h, 40000);
    REQUIRE(p && big);
    fill(p, 1024, 8);
    fill(big, 40000, 9);
    c.fail_from = c.calls;
    CHECK(opool_heap_realloc(h, p, 50000) == NULL);
    CHECK(opool_heap_realloc(h, big, 60000) == NULL);
    CHECK(filled(p, 1024, 8));
    CHECK(filled(big, 40000, 9));
    CHECK_EQ_U64(opool_heap_usable_size(h, p), 1024);
    CHECK_EQ_U64(opool_heap_usable_size(h, big), 40000);
    opool_heap_stats s = stats_of(h);
    CHECK_EQ_U64(s.large_live, 1);
    CHECK_EQ_U64(s.large_bytes, 40000);
    CHECK_EQ_U64(s.classes[default_index(1024)].live, 1);
    CHECK_EQ_U64(s.rejected, 0);
    c.fail_from = -1;
    CHECK_EQ_U64(opool_heap_free(h, p), OPOOL_OK);
    CHECK_EQ_U64(opool_heap_free(h, big), OPOOL_OK);
    opool_heap_destroy(h);
    CHECK_EQ_U64(c.blocks, 0);
}

/* ---- usable_size -------------------------------------------------------- */

/* Above the desc's classes: the heap's own (1024, 1536, ...) up to LARGEST, then the size
 * asked for. */
TEST(usable_size_is_the_class_size_or_the_large_size) {
    static const uint32_t sizes[] = {24, 136, 1000};
    recorder r;
    opool_heap *h = make_heap(sizes, 3, 0, 0, &r);
    REQUIRE(h);
    void *a = opool_heap_alloc(h, 1), *b = opool_heap_alloc(h, 25), *c = opool_heap_alloc(h, 1000);
    void *d = opool_heap_alloc(h, 1001), *e = opool_heap_alloc(h, 123457);
    void *f = opool_heap_alloc(h, 1025), *g = opool_heap_alloc(h, LARGEST + 1);
    REQUIRE(a && b && c && d && e && f && g);
    CHECK_EQ_U64(opool_heap_usable_size(h, a), 24);
    CHECK_EQ_U64(opool_heap_usable_size(h, b), 136);
    CHECK_EQ_U64(opool_heap_usable_size(h, c), 1000);
    CHECK_EQ_U64(opool_heap_usable_size(h, d), 1024);
    CHECK_EQ_U64(opool_heap_usable_size(h, f), 1536);
    CHECK_EQ_U64(opool_heap_usable_size(h, g), LARGEST + 1);
    CHECK_EQ_U64(opool_heap_usable_size(h, e), 123457);
    CHECK_EQ_U64(r.n, 0);
    CHECK_EQ_U64(stats_of(h).rejected, 0);
    opool_heap_destroy(h);
}

TEST(usable_size_of_a_bad_pointer_is_zero_and_reported) {
    recorder r;
    opool_heap *h = make_heap(NULL, 0, 0, 0, &r);
    REQUIRE(h);
    unsigned char *p = (unsigned char *)opool_heap_alloc(h, 64);
    unsigned char *gone = (unsigned char *)opool_heap_alloc(h, 64);
    unsigned char *big = (unsigned char *)opool_heap_alloc(h, 4000);
    int local;
    REQUIRE(p && gone && big);
    CHECK_EQ_U64(opool_heap_free(h, gone), OPOOL_OK);
    const struct {
        const void *ptr;
        opool_status what;
    } bad[] = {{&local, OPOOL_EINVAL}, {p + 1, OPOOL_EINVAL},
               {p + 8, OPOOL_EINVAL},  {big + 8, OPOOL_EINVAL},
               {gone, OPOOL_ESTALE},   {(void *)(uintptr_t)1, OPOOL_EINVAL}};
    for (int k = 0; k < 6; k++) {
        int n = r.n;
        CHECK_EQ_U64(opool_heap_usable_size(h, bad[k].ptr), 0);
        CHECK_EQ_U64(r.n, n + 1);
        CHECK_EQ_U64(r.what, bad[k].what);
        CHECK_EQ_PTR(r.ptr, bad[k].ptr);
    }
    CHECK_EQ_U64(stats_of(h).rejected, 6);
    CHECK_EQ_U64(opool_heap_usable_size(h, NULL), 0);
    CHECK_EQ_U64(opool_heap_usable_size(h, p), 64);
    opool_heap_destroy(h);
}

/* ---- poison ------------------------------------------------------------- */

TEST(poison_fills_a_freed_block_from_its_ninth_byte) {
#ifndef TEST_ASAN /* ASan forbids reading a free block, rightly */
    /* 0x1deadb0b, little-endian, from the block's start (the core pool's byte order) */
    static const unsigned char poison8[8] = {0x0b, 0xdb, 0xea, 0x1d, 0x0b, 0xdb, 0xea, 0x1d};
    static const uint32_t sizes[] = {16, 24, 64, 1024};
    recorder r;
    opool_heap *h = make_heap(sizes, 4, 0, OPOOL_POISON, &r);
    REQUIRE(h);
    for (int c = 0; c < 4; c++) {
        unsigned char *p = (unsigned char *)opool_heap_alloc(h, sizes[c]);
        REQUIRE(p);
        memset(p, 0x33, sizes[c]);
        CHECK_EQ_U64(opool_heap_free(h, p), OPOOL_OK);
        for (uint32_t k = 8; k < sizes[c]; k++)
            if (p[k] != poison8[k & 7]) {
                fprintf(stderr, "  (class %u, byte %u: 0x%02x)\n", sizes[c], k, p[k]);
                CHECK(!"poisoned");
                break;
            }
    }
    CHECK_EQ_U64(r.n, 0);
    opool_heap_destroy(h);
#endif
}

TEST(poison_reports_a_write_after_free_when_the_block_is_handed_out_again) {
#ifndef TEST_ASAN /* ASan forbids writing a free block, rightly */
    recorder r;
    opool_heap *h = make_heap(NULL, 0, 0, OPOOL_POISON, &r);
    REQUIRE(h);
    unsigned char *p = (unsigned char *)opool_heap_alloc(h, 64);
    unsigned char *q = (unsigned char *)opool_heap_alloc(h, 64);
    REQUIRE(p && q);
    CHECK_EQ_U64(opool_heap_free(h, p), OPOOL_OK);
    p[20] = 0;
    CHECK_EQ_U64(r.n, 0);
    (void)opool_heap_alloc(h, 64);
    CHECK_EQ_U64(r.n, 1);
    CHECK_EQ_U64(r.what, OPOOL_EWRITE_AFTER_FREE);
    CHECK_EQ_PTR(r.ptr, p);
    CHECK(r.heap == h);
    opool_heap_destroy(h);
#endif
}

TEST(poison_reports_nothing_when_freed_blocks_are_left_alone) {
    recorder r;
    opool_heap *h = make_heap(NULL, 0, 0, OPOOL_POISON | OPOOL_HEAP_GROW, &r);
    REQUIRE(h);
    void *keep[64];
    for (int round = 0; round < 20; round++) {
        for (int k = 0; k < 64; k++) {
            keep[k] = opool_heap_alloc(h, (size_t)(k * 29 + round) % 2100);
            REQUIRE(keep[k]);
            memset(keep[k], 0x44, opool_heap_usable_size(h, keep[k]));
        }
        for (int k = 0; k < 64; k++) CHECK_EQ_U64(opool_heap_free(h, keep[(k * 7) % 64]), OPOOL_OK);
    }
    void *z = opool_heap_calloc(h, 1, 64);
    REQUIRE(z);
    CHECK(all_zero(z, 64));
    CHECK_EQ_U64(r.n, 0);
    opool_heap_destroy(h);
}

TEST(free_blocks_are_inaccessible_under_asan_without_any_flag) {
#ifdef TEST_ASAN
    recorder r;
    opool_heap *h = make_heap(NULL, 0, 0, 0, &r);
    REQUIRE(h);
    unsigned char *p = (unsigned char *)opool_heap_alloc(h, 256);
    unsigned char *q = (unsigned char *)opool_heap_alloc(h, 256);
    REQUIRE(p && q);
    CHECK(__asan_region_is_poisoned(p, 256) == NULL);
    CHECK_EQ_U64(opool_heap_free(h, p), OPOOL_OK);
    CHECK(__asan_address_is_poisoned(p + 8));
    CHECK(__asan_address_is_poisoned(p + 255));
    CHECK(__asan_region_is_poisoned(q, 256) == NULL);
    CHECK_EQ_PTR(opool_heap_alloc(h, 256), p);
    CHECK(__asan_region_is_poisoned(p, 256) == NULL);
    /* a run: its block is accessible, the rest of its pages not, fresh or reused; freed, none */
    if (RUNS) {
        for (int round = 0; round < 2; round++) {
            unsigned char *big = (unsigned char *)opool_heap_alloc(h, LARGEST + 100);
            REQUIRE(big);
            CHECK(__asan_region_is_poisoned(big, LARGEST + 100) == NULL);
            CHECK(__asan_address_is_poisoned(big + LARGEST + 100));
            CHECK(__asan_address_is_poisoned(big + PAGE - 1));
            CHECK_EQ_U64(opool_heap_free(h, big), OPOOL_OK);
            CHECK(__asan_address_is_poisoned(big));
            CHECK(__asan_address_is_poisoned(big + LARGEST));
        }
    }
    opool_heap_destroy(h);
#endif
}

/* ---- stats -------------------------------------------------------------- */

TEST(stats_count_a_scripted_sequence_exactly) {
    static const uint32_t sizes[] = {16, 48, 128};
    recorder r;
    opool_heap *h = make_heap(sizes, 3, 1, OPOOL_HEAP_FIXED, &r);
    REQUIRE(h);
    uint32_t p128 = stats_of(h).classes[2].blocks;
    void *a1 = opool_heap_alloc(h, 10);    /* 16: asked 10, wasted 6 */
    void *a2 = opool_heap_alloc(h, 16);    /* 16: 16, 0 */
    void *a3 = opool_heap_alloc(h, 17);    /* 48: 17, 31 */
    void *a4 = opool_heap_calloc(h, 3, 5); /* 16: 15, 1 */
    REQUIRE(a1 && a2 && a3 && a4);
    CHECK_EQ_U64(opool_heap_free(h, a2), OPOOL_OK);
    void *a5 = opool_heap_alloc(h, 48); /* 48: 48, 0 */
    REQUIRE(a5);
    CHECK_EQ_U64(opool_heap_free(h, a1), OPOOL_OK);
    CHECK_EQ_U64(opool_heap_free(h, a4), OPOOL_OK);
    void *a6 = opool_heap_alloc(h, 1); /* 16: 1, 15 */
    REQUIRE(a6);
    for (uint32_t k = 0; k < p128; k++) CHECK(opool_heap_alloc(h, 100) != NULL); /* 100, 28 */
    CHECK(opool_heap_alloc(h, 128) == NULL);
    void *big = opool_heap_alloc(h, 129); /* the heap's own class of 192 bytes */
    REQUIRE(big);
    CHECK_EQ_U64(opool_heap_free(h, (char *)a6 + 1), OPOOL_EINVAL);

    opool_heap_stats s = stats_of(h);
    CHECK_EQ_U64(s.version, OPOOL_HEAP_STATS_VERSION);
    CHECK_EQ_U64(s.class_count, 3);
    const opool_heap_class_stats *c = s.classes;
    CHECK_EQ_U64(c[0].size, 16);
    CHECK_EQ_U64(c[0].live, 1);
    CHECK_EQ_U64(c[0].high_water, 3);
    CHECK_EQ_U64(c[0].allocs, 4);
    CHECK_EQ_U64(c[0].failed_allocs, 0);
    CHECK_EQ_U64(c[0].requested_bytes, 10 + 16 + 15 + 1);
    CHECK_EQ_U64(c[0].wasted_bytes, 6 + 0 + 1 + 15);
    CHECK_EQ_U64(c[1].size, 48);
    CHECK_EQ_U64(c[1].live, 2);
    CHECK_EQ_U64(c[1].high_water, 2);
    CHECK_EQ_U64(c[1].allocs, 2);
    CHECK_EQ_U64(c[1].failed_allocs, 0);
    CHECK_EQ_U64(c[1].requested_bytes, 17 + 48);
    CHECK_EQ_U64(c[1].wasted_bytes, 31);
    CHECK_EQ_U64(c[2].size, 128);
    CHECK_EQ_U64(c[2].blocks, p128);
    CHECK_EQ_U64(c[2].live, p128);
    CHECK_EQ_U64(c[2].high_water, p128);
    CHECK_EQ_U64(c[2].allocs, p128);
    CHECK_EQ_U64(c[2].failed_allocs, 1);
    CHECK_EQ_U64(c[2].requested_bytes, 100 * (uint64_t)p128);
    CHECK_EQ_U64(c[2].wasted_bytes, 28 * (uint64_t)p128);
    CHECK_EQ_U64(s.large_live, 1);
    CHECK_EQ_U64(s.large_bytes, 192); /* of the heap's own classes: their size */
    CHECK_EQ_U64(s.rejected, 1);
    CHECK_EQ_U64(c[3].size, 0); /* past class_count: zero */
    CHECK_EQ_U64(c[3].allocs, 0);
    opool_heap_destroy(h);
}

/* A class's allocations and requested bytes stay exact past 2^23 allocations (the inline
 * alloc keeps them in one packed counter that it folds into the totals there), also for the
 * largest class, whose sizes fill the packed bytes fastest; live and high water too. */
TEST(stats_stay_exact_over_millions_of_allocations) {
    static const uint32_t sizes[] = {16, OPOOL_HEAP_MAX_CLASS_SIZE};
    recorder r;
    opool_heap *h = make_heap(sizes, 2, 0, 0, &r);
    REQUIRE(h);
    const uint64_t n = ((uint64_t)1 << 23) + 1000;
    uint64_t big_bytes = 0, small_allocs = 0, small_bytes = 0;
    void *keep[3] = {NULL, NULL, NULL};
    for (uint64_t i = 0; i < n; i++) {
        size_t z = OPOOL_HEAP_MAX_CLASS_SIZE - (size_t)(i % 3) * 4096; /* 16384, 12288, 8192 */
        void *p = opool_heap_alloc(h, z);
        REQUIRE(p);
        big_bytes += z;
        if (i == n / 2)
            keep[0] = p; /* two blocks of the class live at once from here */
        else
            CHECK_EQ_U64(opool_heap_free(h, p), OPOOL_OK);
        if (i % 4096 == 0) {
            size_t y = 1 + (size_t)(i / 4096) % 16;
            void *q = opool_heap_alloc(h, y);
            REQUIRE(q);
            small_allocs++;
            small_bytes += y;
            if (keep[1] == NULL)
                keep[1] = q;
            else if (keep[2] == NULL)
                keep[2] = q;
            else
                CHECK_EQ_U64(opool_heap_free(h, q), OPOOL_OK);
        }
    }
    opool_heap_stats s = stats_of(h);
    const opool_heap_class_stats *c = s.classes;
    CHECK_EQ_U64(c[1].allocs, n);
    CHECK_EQ_U64(c[1].requested_bytes, big_bytes);
    CHECK_EQ_U64(c[1].wasted_bytes, n * OPOOL_HEAP_MAX_CLASS_SIZE - big_bytes);
    CHECK_EQ_U64(c[1].live, 1);
    CHECK_EQ_U64(c[1].high_water, 2);
    CHECK_EQ_U64(c[0].allocs, small_allocs);
    CHECK_EQ_U64(c[0].requested_bytes, small_bytes);
    CHECK_EQ_U64(c[0].wasted_bytes, 16 * small_allocs - small_bytes);
    CHECK_EQ_U64(c[0].live, 2);
    CHECK_EQ_U64(c[0].high_water, 3);
    for (int k = 0; k < 3; k++) CHECK_EQ_U64(opool_heap_free(h, keep[k]), OPOOL_OK);
    s = stats_of(h);
    CHECK_EQ_U64(s.classes[0].live + s.classes[1].live, 0);
    CHECK_EQ_U64(s.classes[1].high_water, 2);
    CHECK_EQ_U64(r.n, 0);
    opool_heap_destroy(h);
}

/* A large block's bytes count while it is live; freed, the allocator's go at once, and a run's
 * stay with the heap until the runs' hysteresis gives them back (large_blocks_are_runs_...). */
TEST(stats_bytes_grow_with_pages_and_large_blocks) {
    for (int own = 0; own < 2; own++) {
        uint32_t size = 512;
        counting c;
        recorder r;
        opool_heap *h = one_class_heap(&size, &r, own ? &c : NULL);
        REQUIRE(h);
        size_t empty = stats_of(h).bytes;
        REQUIRE(opool_heap_alloc(h, 512)); /* the class's first page */
        opool_heap_stats s0 = stats_of(h);
        CHECK(s0.bytes >= empty + OPOOL_HEAP_PAGE);
        uint32_t p = s0.classes[0].blocks;
        for (uint32_t k = 0; k < p; k++) REQUIRE(opool_heap_alloc(h, 512));
        opool_heap_stats s1 = stats_of(h);
        CHECK_EQ_U64(s1.classes[0].blocks, 2 * p);
        if (!own) /* an allocator's region counts whole from the start */
            CHECK(s1.bytes >= s0.bytes + OPOOL_HEAP_PAGE);
        void *big = opool_heap_alloc(h, 300000);
        REQUIRE(big);
        opool_heap_stats s2 = stats_of(h);
        CHECK(s2.bytes >= s1.bytes + 300000);
        CHECK_EQ_U64(opool_heap_free(h, big), OPOOL_OK);
        if (own || !RUNS)
            CHECK(stats_of(h).bytes <= s2.bytes - 300000);
        else
            CHECK_EQ_U64(stats_of(h).bytes, s2.bytes); /* a free run, resident */
        opool_heap_destroy(h);
    }
}

/* Where a heap with the system's memory reserves its range (RUNS), a block above the largest
 * class and up to 16 pages (1 MiB) is a run of whole pages of that range: aligned to a page, reused
 * by the next block of as many pages (the newest first), grown in place within its pages, and
 * checked as any block. Elsewhere the same calls go to the allocator, and hold as well but for
 * where the block lies. */
TEST(large_blocks_are_runs_of_the_heaps_own_pages) {
    recorder r;
    opool_heap *h = make_heap(NULL, 0, 0, 0, &r);
    REQUIRE(h);
    size_t bytes0 = stats_of(h).bytes;
    unsigned char *a = (unsigned char *)opool_heap_alloc(h, LARGEST + 1);
    unsigned char *b = (unsigned char *)opool_heap_alloc(h, 2 * PAGE);      /* two pages */
    unsigned char *c = (unsigned char *)opool_heap_alloc(h, 16 * PAGE);     /* the largest run */
    unsigned char *d = (unsigned char *)opool_heap_alloc(h, 16 * PAGE + 1); /* the allocator's */
    REQUIRE(a && b && c && d);
    if (RUNS) {
        CHECK_EQ_U64((uintptr_t)a % PAGE, 0);
        CHECK_EQ_U64((uintptr_t)b % PAGE, 0);
        CHECK_EQ_U64((uintptr_t)c % PAGE, 0);
        CHECK(stats_of(h).bytes >= bytes0 + 19 * PAGE + 16 * PAGE + 1);
    }
    CHECK_EQ_U64((uintptr_t)d % 16, 0);
    fill(a, LARGEST + 1, 1);
    fill(b, 2 * PAGE, 2);
    fill(c, 16 * PAGE, 3);
    fill(d, 16 * PAGE + 1, 4);
    opool_heap_stats s = stats_of(h);
    CHECK_EQ_U64(s.large_live, 4);
    CHECK_EQ_U64(s.large_bytes, LARGEST + 1 + 18 * PAGE + 16 * PAGE + 1);
    CHECK_EQ_U64(opool_heap_usable_size(h, a), LARGEST + 1);
    /* misuse: inside a run, inside its last page past the block, a run freed twice */
    expect_rejected_free(h, &r, a + 16, OPOOL_EINVAL, "run + 16");
    expect_rejected_free(h, &r, a + PAGE / 2 + 16, OPOOL_EINVAL, "run, past its block");
    expect_rejected_free(h, &r, b + PAGE, OPOOL_EINVAL, "run, its second page");
    CHECK_EQ_U64(opool_heap_free(h, a), OPOOL_OK);
    expect_rejected_free(h, &r, a, OPOOL_EINVAL, "a freed run");
    expect_rejected(h, &r, a, __LINE__);
    /* the next block of one page gets that run back, its bytes as they were: calloc zeroes */
    unsigned char *a2 = (unsigned char *)opool_heap_calloc(h, 1, 40000);
    REQUIRE(a2);
    if (RUNS) CHECK_EQ_PTR(a2, a);
    CHECK(all_zero(a2, 40000));
    /* growth within its pages keeps the block; past them, it moves */
    fill(a2, 40000, 5);
    unsigned char *g = (unsigned char *)opool_heap_realloc(h, a2, PAGE);
    REQUIRE(g);
    if (RUNS) CHECK_EQ_PTR(g, a2);
    CHECK(filled(g, 40000, 5));
    CHECK_EQ_U64(opool_heap_usable_size(h, g), PAGE);
    fill(g, PAGE, 6);
    unsigned char *g2 = (unsigned char *)opool_heap_realloc(h, g, PAGE + 1);
    REQUIRE(g2);
    if (RUNS) CHECK(g2 != g); /* elsewhere the C library's realloc may grow it in place */
    CHECK(filled(g2, PAGE, 6));
    if (RUNS) CHECK_EQ_U64((uintptr_t)g2 % PAGE, 0); /* a new run of two pages */
    CHECK(filled(b, 2 * PAGE, 2));
    CHECK(filled(c, 16 * PAGE, 3));
    CHECK(filled(d, 16 * PAGE + 1, 4));
    s = stats_of(h);
    CHECK_EQ_U64(s.large_live, 4);
    CHECK_EQ_U64(s.large_bytes, PAGE + 1 + 18 * PAGE + 16 * PAGE + 1);
    for (int k = 0; k < NDEFAULT; k++) CHECK_EQ_U64(s.classes[k].allocs, 0);
    CHECK_EQ_U64(opool_heap_free(h, g2), OPOOL_OK);
    CHECK_EQ_U64(opool_heap_free(h, b), OPOOL_OK);
    CHECK_EQ_U64(opool_heap_free(h, c), OPOOL_OK);
    CHECK_EQ_U64(opool_heap_free(h, d), OPOOL_OK);
    s = stats_of(h);
    CHECK_EQ_U64(s.large_live, 0);
    CHECK_EQ_U64(s.large_bytes, 0);
    /* two runs of two pages wait, b freed last: the next two-page block is b */
    unsigned char *e = (unsigned char *)opool_heap_alloc(h, 2 * PAGE - 5);
    REQUIRE(e);
    if (RUNS) CHECK_EQ_PTR(e, b);
    CHECK_EQ_U64(opool_heap_free(h, e), OPOOL_OK);
    CHECK_EQ_U64(r.by_what[OPOOL_EFULL], 0);
    opool_heap_destroy(h);
}

/* Free runs of 4 pages or more keep at most 4 MiB resident beyond the live runs' bytes: past
 * that the oldest give their memory back at once (and read zero when taken again). Smaller free
 * runs keep theirs until the decay (a second). */
TEST(free_large_runs_past_the_budget_give_their_memory_back_at_once) {
#if defined(__linux__) || defined(_WIN32)
    if (!RUNS) return;
    recorder r;
    opool_heap *h = make_heap(NULL, 0, 0, 0, &r);
    REQUIRE(h);
    enum { N = 40, SMALL = 2 * PAGE, BIG = 5 * PAGE - 7 }; /* 2 pages; 5 pages */
    unsigned char *s[N], *b[N];
    for (int k = 0; k < N; k++) {
        REQUIRE((s[k] = (unsigned char *)opool_heap_alloc(h, SMALL)));
        memset(s[k], 0x5A, SMALL);
    }
    size_t held = stats_of(h).bytes;
    for (int k = 0; k < N; k++) CHECK_EQ_U64(opool_heap_free(h, s[k]), OPOOL_OK);
    CHECK_EQ_U64(stats_of(h).bytes, held); /* 5 MiB of small free runs: all kept */
    for (int k = 0; k < N; k++) {
        REQUIRE((b[k] = (unsigned char *)opool_heap_alloc(h, BIG)));
        memset(b[k], 0xA5, BIG);
    }
    held = stats_of(h).bytes;
    for (int k = 0; k < N; k++) CHECK_EQ_U64(opool_heap_free(h, b[k]), OPOOL_OK);
    /* 12.5 MiB of big free runs, at most 4 MiB of them kept: the first 27 freed went back */
    size_t kept = 4u << 20, run = 5 * PAGE;
    CHECK(stats_of(h).bytes <= held - (N * run - kept) + run);
    CHECK(stats_of(h).bytes >= held - (N * run - kept) - run);
    /* taken again, newest first: the kept ones as they were, then the others zero */
    int zero = 0;
    for (int k = N - 1; k >= 0; k--) {
        unsigned char *p = (unsigned char *)opool_heap_alloc(h, BIG);
        REQUIRE(p);
        CHECK_EQ_PTR(p, b[k]);
        if (all_zero(p, BIG))
            zero++;
        else
            CHECK(filled_with(p, BIG, 0xA5));
    }
    CHECK(zero >= N - (int)(kept / run) && zero <= N - (int)(kept / run) + 1);
    for (int k = 0; k < N; k++) CHECK_EQ_U64(opool_heap_free(h, b[k]), OPOOL_OK);
    CHECK_EQ_U64(r.n, 0);
    opool_heap_destroy(h);
#endif
}

/* Free runs that waited a second or more give their memory back at the next run freed (the
 * bytes the heap holds drop; the runs read zero when taken again) and keep their addresses. */
TEST(free_runs_unused_for_a_while_give_their_memory_back) {
    if (!RUNS) return;
    recorder r;
    opool_heap *h = make_heap(NULL, 0, 0, 0, &r);
    REQUIRE(h);
    enum { N = 8, SIZE = 3 * PAGE - 100 };
    unsigned char *b[N + 1];
    for (int k = 0; k <= N; k++) {
        REQUIRE((b[k] = (unsigned char *)opool_heap_alloc(h, SIZE)));
        memset(b[k], 0xA5, SIZE);
    }
    for (int k = 0; k < N; k++) CHECK_EQ_U64(opool_heap_free(h, b[k]), OPOOL_OK);
    size_t bytes = stats_of(h).bytes;
    sleep_ms(1100);
    CHECK_EQ_U64(opool_heap_free(h, b[N]), OPOOL_OK); /* the event: b[0 .. N) go back */
#if defined(__linux__) || defined(_WIN32)
    CHECK(stats_of(h).bytes <= bytes - N * 3 * PAGE);
#else
    (void)bytes; /* elsewhere the system keeps a run's memory (opool__os_reset) */
#endif
    /* b[N] comes back first, as it was; then the others, in their old places */
    unsigned char *again[N + 1];
    for (int k = N; k >= 0; k--) {
        REQUIRE((again[k] = (unsigned char *)opool_heap_alloc(h, SIZE)));
        CHECK_EQ_PTR(again[k], b[k]);
    }
    CHECK(filled_with(again[N], SIZE, 0xA5));
#if defined(__linux__) || defined(_WIN32)
    for (int k = 0; k < N; k++) CHECK(all_zero(again[k], SIZE));
#endif
    for (int k = 0; k <= N; k++) CHECK_EQ_U64(opool_heap_free(h, again[k]), OPOOL_OK);
    CHECK_EQ_U64(r.n, 0);
    opool_heap_destroy(h);
}

/* Above the largest run (16 pages), a heap with the system's memory gives a block a mapping of
 * its own: aligned to a system page, reading zero, unmapped at its free (the bytes the heap holds
 * drop by its size at once). A realloc that grows it keeps it in place within its last system
 * page, else moves its pages; one that shrinks it to a class moves it to that class. */
TEST(a_block_above_the_largest_run_has_a_mapping_of_its_own_that_goes_back_at_its_free) {
    recorder r;
    opool_heap *h = make_heap(NULL, 0, 0, 0, &r);
    REQUIRE(h);
    const size_t big = 3u << 20, bigger = 5u << 20;
    unsigned char *p = (unsigned char *)opool_heap_calloc(h, 1, big + 5);
    REQUIRE(p);
    CHECK_EQ_U64((uintptr_t)p % 4096, 0);
    CHECK(all_zero(p, big + 5));
    opool_heap_stats s = stats_of(h);
    CHECK_EQ_U64(s.large_live, 1);
    CHECK_EQ_U64(s.large_bytes, big + 5);
    size_t held = s.bytes;
    fill(p, big + 5, 31);
    unsigned char *q = (unsigned char *)opool_heap_realloc(h, p, big + 100); /* its last page */
    CHECK_EQ_PTR(q, p);
    CHECK_EQ_U64(opool_heap_usable_size(h, p), big + 100);
    q = (unsigned char *)opool_heap_realloc(h, p, bigger);
    REQUIRE(q);
    CHECK(filled(q, big + 5, 31));
    CHECK_EQ_U64(opool_heap_usable_size(h, q), bigger);
    CHECK_EQ_U64(stats_of(h).bytes, held + bigger - (big + 5));
    if (q != p) expect_rejected(h, &r, p, __LINE__);
    /* shrunk to a class: a block of that class, the contents kept */
    unsigned char *c = (unsigned char *)opool_heap_realloc(h, q, 300);
    REQUIRE(c);
    CHECK(c != q);
    CHECK(filled(c, 300, 31));
    CHECK_EQ_U64(opool_heap_usable_size(h, c), 320);
    s = stats_of(h);
    CHECK_EQ_U64(s.large_live, 0);
    CHECK_EQ_U64(s.large_bytes, 0);
    CHECK_EQ_U64(s.classes[default_index(320)].live, 1);
    CHECK(s.bytes <= held - (big + 5) + PAGE); /* the mapping went; a page of 320 came */
    expect_rejected(h, &r, q, __LINE__);
    /* freed: its bytes go at once */
    p = (unsigned char *)opool_heap_alloc(h, bigger);
    REQUIRE(p);
    held = stats_of(h).bytes;
    CHECK_EQ_U64(opool_heap_free(h, p), OPOOL_OK);
    CHECK_EQ_U64(stats_of(h).bytes, held - bigger);
    expect_rejected_free(h, &r, p, OPOOL_EINVAL, "a freed mapping");
    CHECK_EQ_U64(opool_heap_free(h, c), OPOOL_OK);
    opool_heap_destroy(h);
}

/* The bytes h holds are want plus the bookkeeping of its runs (their map and bins: less than a
 * system page), exactly the pages. */
#define CHECK_HELD(h, want)                                                                        \
    do {                                                                                           \
        size_t held_ = stats_of(h).bytes;                                                          \
        CHECK(held_ >= (want) && held_ < (want) + 4096);                                           \
    } while (0)

/* A heap that maps fresh memory for a new run first gives back the memory of as many empty
 * pages, the cache's oldest, then the classes' spares: the bytes it holds do not grow while
 * pages of its own sit empty. A run taken again from its bin is no fresh memory and gives back
 * nothing; a class that lost its spare takes a page again when it needs one. */
TEST(a_new_run_gives_back_the_memory_of_as_many_empty_pages_first) {
#if defined(__linux__) || defined(_WIN32)
    if (!RUNS) return;
    recorder r;
    opool_heap *h = make_heap(NULL, 0, 0, 0, &r);
    REQUIRE(h);
    const int c1024 = default_index(1024);
    uint32_t per = blocks_per_page(1024);
    enum { PAGES = 5 };
    void *b[PAGES * 64];
    REQUIRE(per <= 64);
    for (uint32_t k = 0; k < PAGES * per; k++) REQUIRE((b[k] = opool_heap_alloc(h, 1024)));
    CHECK_EQ_U64(stats_of(h).classes[c1024].blocks, PAGES * per);
    for (uint32_t k = 0; k < PAGES * per; k++) CHECK_EQ_U64(opool_heap_free(h, b[k]), OPOOL_OK);
    /* one page kept as the class's spare, four in the cache: all still held */
    opool_heap_stats s = stats_of(h);
    CHECK_EQ_U64(s.classes[c1024].blocks, per);
    size_t held = s.bytes;
    void *two = opool_heap_alloc(h, 2 * PAGE - 100); /* two cached pages give way */
    REQUIRE(two);
    CHECK_HELD(h, held);
    void *three = opool_heap_alloc(h, 3 * PAGE - 100); /* the two others, then the spare */
    REQUIRE(three);
    CHECK_HELD(h, held);
    CHECK_EQ_U64(stats_of(h).classes[c1024].blocks, 0);
    expect_rejected_free(h, &r, b[0], OPOOL_EINVAL, "a block of a page given back");
    void *one = opool_heap_alloc(h, PAGE - 100); /* nothing empty is left: the heap grows */
    REQUIRE(one);
    CHECK_HELD(h, held + PAGE);
    CHECK_EQ_U64(opool_heap_free(h, two), OPOOL_OK);
    void *again = opool_heap_alloc(h, 2 * PAGE - 7); /* from its bin: nothing changes */
    CHECK_EQ_PTR(again, two);
    CHECK_HELD(h, held + PAGE);
    void *x = opool_heap_alloc(h, 1000); /* the class takes a page again */
    REQUIRE(x);
    CHECK_EQ_U64(stats_of(h).classes[c1024].blocks, per);
    CHECK_EQ_U64(opool_heap_free(h, x), OPOOL_OK);
    CHECK_EQ_U64(opool_heap_free(h, again), OPOOL_OK);
    CHECK_EQ_U64(opool_heap_free(h, three), OPOOL_OK);
    CHECK_EQ_U64(opool_heap_free(h, one), OPOOL_OK);
    CHECK_EQ_U64(r.n, 1);
    opool_heap_destroy(h);
#endif
}

/* ---- randomized, against malloc ------------------------------------------ */

typedef struct rblock {
    unsigned char *p;
    size_t usable;
    int cls;               /* -1: large */
    unsigned char *shadow; /* usable bytes: what p must hold */
} rblock;

typedef struct rclass {
    uint64_t live, high, allocs, failed, requested, wasted, cap;
    bool saw_zero; /* a size-0 request: requested/wasted only checked as a sum */
} rclass;

#define RMAX_LIVE 400
/* Above this, a large block of a heap with the system's memory has a mapping of its own. */
#define RMAPPED (16 * PAGE)
#define RSTALE 32

#define RCLASSES (OPOOL_HEAP_MAX_CLASSES + NOWN)

typedef struct rtest {
    opool_heap *h;
    recorder rec;
    uint32_t sizes[RCLASSES]; /* the desc's classes, then the heap's own above them */
    uint32_t ncls;            /* the desc's */
    uint32_t nall;            /* and the heap's own */
    bool grow;
    uint64_t rng;
    rblock live[RMAX_LIVE]; /* sorted by address */
    size_t nlive;
    rclass cls[RCLASSES];
    uint32_t per_page[RCLASSES]; /* blocks a page of the class holds */
    uint64_t large_live, large_bytes, rejected;
    unsigned char *stale[RSTALE]; /* freed class blocks (NULL: forgotten, see rremove) */
    size_t nstale, stale_next;
    unsigned char *cleared[RSTALE]; /* blocks live at the last clear, not handed out since */
    size_t ncleared;
    unsigned char *foreign; /* a malloc'd block */
    unsigned seq;           /* pattern seeds */
    long op;
    bool failed; /* stop at the first finding: the rest would only echo it */
} rtest;

static uint64_t rnext(rtest *t) {
    uint64_t z = (t->rng += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

static size_t rbelow(rtest *t, size_t n) { return n ? (size_t)(rnext(t) % n) : 0; }

#define RCHECK(cond)                                                                               \
    do {                                                                                           \
        if (!t->failed && !(cond)) {                                                               \
            fprintf(stderr, "  (seed op %ld)\n", t->op);                                           \
            CHECK(cond);                                                                           \
            t->failed = true;                                                                      \
        }                                                                                          \
    } while (0)

#define RCHECK_EQ(a, b)                                                                            \
    do {                                                                                           \
        if (!t->failed && (uint64_t)(a) != (uint64_t)(b)) {                                        \
            fprintf(stderr, "  (seed op %ld)\n", t->op);                                           \
            CHECK_EQ_U64(a, b);                                                                    \
            t->failed = true;                                                                      \
        }                                                                                          \
    } while (0)

static int rclass_of(const rtest *t, size_t size) {
    if (size == 0) size = 1;
    for (uint32_t c = 0; c < t->nall; c++)
        if (size <= t->sizes[c]) return (int)c;
    return -1;
}

/* Blocks the stats count as large: above the desc's classes (the heap's own, and the rest). */
static bool rlarge(const rtest *t, int cls) { return cls < 0 || (uint32_t)cls >= t->ncls; }

/* Sizes 0..4096, mostly small; sometimes past the largest class, now and then by up to 20
 * pages. */
static size_t rsize(rtest *t) {
    size_t r = rbelow(t, 100), largest = t->sizes[t->ncls - 1];
    if (r < 45) return rbelow(t, 129);
    if (r < 75) return rbelow(t, 1025);
    if (r < 94) return rbelow(t, 4097);
    if (r < 99) return largest + 1 + rbelow(t, 3 * 4096);
    return largest + 1 + rbelow(t, 20 * OPOOL_HEAP_PAGE); /* runs, and past the largest */
}

/* Index of the first live block at or after p. */
static size_t rfind(const rtest *t, const unsigned char *p) {
    size_t lo = 0, hi = t->nlive;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if ((uintptr_t)t->live[mid].p < (uintptr_t)p)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static bool rcontents_ok(const rblock *b) { return memcmp(b->p, b->shadow, b->usable) == 0; }

static void rfill(rtest *t, rblock *b, size_t from) {
    unsigned seed = ++t->seq;
    for (size_t k = from; k < b->usable; k++)
        b->p[k] = (unsigned char)(seed * 0x9Du + k * 13u + (k >> 7));
    memcpy(b->shadow, b->p, b->usable);
}

/* A new block: aligned, no overlap with any live block; inserted, pattern written. */
static void rinsert(rtest *t, unsigned char *p, size_t asked, int cls, size_t keep,
                    const unsigned char *kept) {
    size_t usable = opool_heap_usable_size(t->h, p);
    if (cls >= 0) {
        RCHECK_EQ(usable, t->sizes[cls]);
        RCHECK_EQ((uintptr_t)p % (t->sizes[cls] % 16 == 0 ? 16 : 8), 0);
    } else {
        RCHECK(usable >= asked);
        RCHECK_EQ((uintptr_t)p % 16, 0);
        if (asked > RMAPPED) RCHECK_EQ((uintptr_t)p % 4096, 0); /* a mapping of its own */
    }
    if (usable < asked || usable > (size_t)1 << 24) usable = asked; /* already failed */
    size_t at = rfind(t, p);
    if (at < t->nlive) RCHECK((uintptr_t)p + usable <= (uintptr_t)t->live[at].p);
    if (at > 0) RCHECK((uintptr_t)t->live[at - 1].p + t->live[at - 1].usable <= (uintptr_t)p);
    for (size_t k = 0; k < t->ncleared; k++)
        if (t->cleared[k] == p) t->cleared[k] = NULL; /* a block again */
    if (t->failed || t->nlive == RMAX_LIVE) return;
    memmove(&t->live[at + 1], &t->live[at], (t->nlive - at) * sizeof t->live[0]);
    t->nlive++;
    rblock *b = &t->live[at];
    b->p = p;
    b->usable = usable;
    b->cls = cls;
    b->shadow = (unsigned char *)malloc(usable);
    if (!b->shadow) abort();
    if (keep) memcpy(b->shadow, kept, keep);
    if (keep && memcmp(p, kept, keep) != 0) RCHECK(!"realloc kept the contents");
    rfill(t, b, keep);
    if (rlarge(t, cls)) {
        t->large_live++;
        t->large_bytes += usable;
    }
    if (cls >= 0) {
        rclass *c = &t->cls[cls];
        c->live++;
        if (c->live > c->high) c->high = c->live;
        c->allocs++;
        if (asked == 0) c->saw_zero = true;
        c->requested += asked;
        c->wasted += t->sizes[cls] - asked;
    }
}

/* Does a live block of class cls sit in the page of p (so that page is still the heap's)? */
static bool rpage_held(const rtest *t, const unsigned char *p, int cls) {
    uintptr_t page = (uintptr_t)p & ~(PAGE - 1);
    size_t at = rfind(t, (const unsigned char *)page);
    for (; at < t->nlive && (uintptr_t)t->live[at].p < page + PAGE; at++)
        if (t->live[at].cls == cls) return true;
    return false;
}

/* Live block i is gone: forgotten, its address remembered as freed. With GROW a page left
 * without a live block may leave its class for the heap's cache (then no block of the
 * heap: OPOOL_EINVAL, not OPOOL_ESTALE) and come back, to any class, its blocks not handed
 * out yet: the freed addresses of such a page are forgotten too. */
static void rremove(rtest *t, size_t i) {
    rblock b = t->live[i];
    free(b.shadow);
    memmove(&t->live[i], &t->live[i + 1], (t->nlive - i - 1) * sizeof t->live[0]);
    t->nlive--;
    if (rlarge(t, b.cls)) {
        t->large_live--;
        t->large_bytes -= b.usable;
    }
    if (b.cls < 0) return;
    t->cls[b.cls].live--;
    t->stale[t->stale_next] = b.p;
    t->stale_next = (t->stale_next + 1) % RSTALE;
    if (t->nstale < RSTALE) t->nstale++;
    if ((t->grow || rlarge(t, b.cls)) && !rpage_held(t, b.p, b.cls)) { /* own classes grow */
        uintptr_t page = (uintptr_t)b.p & ~(PAGE - 1);
        for (size_t k = 0; k < t->nstale; k++)
            if (((uintptr_t)t->stale[k] & ~(PAGE - 1)) == page) t->stale[k] = NULL;
    }
}

static bool rfull(const rtest *t, int cls) {
    return !rlarge(t, cls) && !t->grow && t->cls[cls].live == t->cls[cls].cap;
}

/* An alloc, calloc or realloc(NULL) of size: the model says whether it succeeds. */
static void rop_alloc(rtest *t, int how) {
    size_t size = rsize(t), n = 1 + rbelow(t, 4), each = size / n;
    if (how == 1) size = n * each;
    int cls = rclass_of(t, size);
    unsigned char *p;
    if (how == 0)
        p = (unsigned char *)opool_heap_alloc(t->h, size);
    else if (how == 1)
        p = (unsigned char *)opool_heap_calloc(t->h, n, each);
    else {
        if (size == 0) size = 1; /* realloc(NULL, 0): not this test's business */
        cls = rclass_of(t, size);
        p = (unsigned char *)opool_heap_realloc(t->h, NULL, size);
    }
    if (rfull(t, cls)) {
        RCHECK(p == NULL);
        t->cls[cls].failed++;
        return;
    }
    RCHECK(p != NULL);
    if (!p) return;
    if (how == 1 && !all_zero(p, size)) RCHECK(!"calloc zero-filled");
    rinsert(t, p, size, cls, 0, NULL);
}

static void rop_free(rtest *t) {
    if (!t->nlive) return;
    size_t i = rbelow(t, t->nlive), usable = t->live[i].usable;
    size_t bytes = stats_of(t->h).bytes;
    RCHECK(rcontents_ok(&t->live[i]));
    RCHECK_EQ(opool_heap_free(t->h, t->live[i].p), OPOOL_OK);
    if (t->live[i].cls < 0 && usable > RMAPPED) /* its mapping goes at once, and only it */
        RCHECK_EQ(stats_of(t->h).bytes, bytes - usable);
    rremove(t, i);
}

static void rop_realloc(rtest *t) {
    if (!t->nlive) return;
    size_t i = rbelow(t, t->nlive), size = rbelow(t, 8) == 0 ? 0 : rsize(t);
    rblock b = t->live[i];
    RCHECK(rcontents_ok(&b));
    unsigned char *q = (unsigned char *)opool_heap_realloc(t->h, b.p, size);
    if (size == 0) {
        RCHECK(q == NULL);
        rremove(t, i);
        return;
    }
    int cls = rclass_of(t, size);
    if (cls >= 0 && cls == b.cls) {
        RCHECK(q == b.p);
        RCHECK(rcontents_ok(&b));
        return;
    }
    if (cls < 0 && b.cls < 0 && (size < b.usable || (size == b.usable && q == b.p))) {
        /* a large block shrinking (above the largest class) is kept as it is */
        RCHECK(q == b.p);
        RCHECK_EQ(opool_heap_usable_size(t->h, b.p), b.usable);
        RCHECK(rcontents_ok(&b));
        return;
    }
    if (rfull(t, cls)) {
        RCHECK(q == NULL);
        RCHECK(rcontents_ok(&b));
        t->cls[cls].failed++;
        return;
    }
    /* a large block growing may stay where it is: the C library's realloc (no allocator) */
    RCHECK(q != NULL && (q != b.p || (cls < 0 && b.cls < 0)));
    if (!q) return;
    size_t keep = b.usable < size ? b.usable : size;
    unsigned char *kept = (unsigned char *)malloc(keep);
    if (!kept) abort();
    memcpy(kept, b.shadow, keep);
    rremove(t, i);
    rinsert(t, q, size, cls, keep, kept);
    free(kept);
}

/* A rejected call on p: free, realloc or usable_size by turns; exact status and report. */
static void rbad(rtest *t, const void *p, opool_status want) {
    int n = t->rec.n, how = (int)rbelow(t, 3);
    if (how == 0) {
        RCHECK_EQ(opool_heap_free(t->h, (void *)(uintptr_t)p), want);
    } else if (how == 1) {
        RCHECK(opool_heap_realloc(t->h, (void *)(uintptr_t)p, 1 + rbelow(t, 3000)) == NULL);
    } else {
        RCHECK_EQ(opool_heap_usable_size(t->h, p), 0);
    }
    RCHECK_EQ(t->rec.n, n + 1);
    RCHECK_EQ(t->rec.what, want);
    RCHECK(t->rec.ptr == p);
    t->rejected++;
}

/* Is p the start of a live block (or inside one)? */
static bool rlive_covers(const rtest *t, const unsigned char *p) {
    size_t at = rfind(t, p);
    if (at < t->nlive && t->live[at].p == p) return true;
    return at > 0 && (uintptr_t)t->live[at - 1].p + t->live[at - 1].usable > (uintptr_t)p;
}

static void rop_bad(rtest *t) {
    int local = 0;
    switch (rbelow(t, 6)) {
    case 0: /* foreign */
        rbad(t, rbelow(t, 2) ? (const void *)t->foreign : (const void *)&local, OPOOL_EINVAL);
        break;
    case 4: /* a page's start near a live block's: a header, a cached or vacant page, the
               unused part of a region, another region, or memory the heap never had */
        if (t->nlive) {
            uintptr_t page = (uintptr_t)t->live[rbelow(t, t->nlive)].p & ~(PAGE - 1);
            const unsigned char *p = (const unsigned char *)(page + (rbelow(t, 17) - 8) * PAGE);
            if (!rlive_covers(t, p)) rbad(t, p, OPOOL_EINVAL);
        }
        break;
    case 1: /* interior */
        if (t->nlive) {
            const rblock *b = &t->live[rbelow(t, t->nlive)];
            rbad(t, b->p + 1 + rbelow(t, b->usable - 1), OPOOL_EINVAL);
        }
        break;
    case 2: /* live at the last clear: no block of the heap */
        if (t->ncleared) {
            const unsigned char *p = t->cleared[rbelow(t, t->ncleared)];
            if (p && !rlive_covers(t, p)) rbad(t, p, OPOOL_EINVAL);
        }
        break;
    default: /* freed: a block start of a page the heap has held since (see rremove) */
        if (t->nstale) {
            const unsigned char *p = t->stale[rbelow(t, t->nstale)];
            if (p && !rlive_covers(t, p)) rbad(t, p, OPOOL_ESTALE);
        }
        break;
    }
}

/* opool_heap_clear: every live block gone at once; the addresses of some remembered (a
 * pointer to any of them is now no block of the heap), those freed before forgotten (their
 * pages' blocks are all to be handed out again). */
static void rop_clear(rtest *t) {
    t->ncleared = 0;
    for (size_t i = 0; i < t->nlive; i++) {
        rblock *b = &t->live[i];
        RCHECK(rcontents_ok(b));
        if (t->ncleared < RSTALE && rbelow(t, 2)) t->cleared[t->ncleared++] = b->p;
        if (rlarge(t, b->cls)) {
            t->large_live--;
            t->large_bytes -= b->usable;
        }
        if (b->cls >= 0) t->cls[b->cls].live--;
        free(b->shadow);
    }
    t->nlive = 0;
    t->nstale = t->stale_next = 0;
    RCHECK_EQ(opool_heap_clear(t->h), OPOOL_OK);
}

/* Many blocks of one class at once (pages grow or the class fills), or half the live blocks
 * freed (grown pages empty and go back). */
static void rop_burst(rtest *t) {
    if (rbelow(t, 2)) {
        size_t size = rsize(t), n = 1 + rbelow(t, 80);
        int cls = rclass_of(t, size);
        for (size_t k = 0; k < n && t->nlive < RMAX_LIVE && !t->failed; k++) {
            unsigned char *p = (unsigned char *)opool_heap_alloc(t->h, size);
            if (rfull(t, cls)) {
                RCHECK(p == NULL);
                t->cls[cls].failed++;
                continue;
            }
            RCHECK(p != NULL);
            if (p) rinsert(t, p, size, cls, 0, NULL);
        }
    } else {
        for (size_t i = t->nlive; i-- > 0 && !t->failed;)
            if (rbelow(t, 4) != 0) {
                RCHECK(rcontents_ok(&t->live[i]));
                RCHECK_EQ(opool_heap_free(t->h, t->live[i].p), OPOOL_OK);
                rremove(t, i);
            }
    }
}

static void rcheck_stats(rtest *t) {
    opool_heap_stats s = stats_of(t->h);
    RCHECK_EQ(s.class_count, t->ncls);
    RCHECK_EQ(s.large_live, t->large_live);
    RCHECK_EQ(s.large_bytes, t->large_bytes);
    RCHECK_EQ(s.rejected, t->rejected);
    /* the pages holding live blocks, per class: a page's blocks sit together in the sorted array */
    uint64_t live_pages[RCLASSES] = {0};
    uintptr_t last = 0;
    for (size_t i = 0; i < t->nlive; i++) {
        uintptr_t page = (uintptr_t)t->live[i].p & ~(PAGE - 1);
        if (t->live[i].cls >= 0 && page != last) live_pages[t->live[i].cls]++, last = page;
    }
    for (uint32_t c = 0; c < t->ncls; c++) {
        const opool_heap_class_stats *x = &s.classes[c];
        const rclass *m = &t->cls[c];
        RCHECK_EQ(x->size, t->sizes[c]);
        RCHECK_EQ(x->live, m->live);
        RCHECK_EQ(x->high_water, m->high);
        RCHECK_EQ(x->allocs, m->allocs);
        RCHECK_EQ(x->failed_allocs, m->failed);
        if (t->grow) {
            /* whole pages: the reserved ones, those with a live block, at most one more */
            uint64_t per = t->per_page[c], reserved = m->cap / per, held = live_pages[c];
            RCHECK_EQ(x->blocks % per, 0);
            RCHECK(x->blocks >= per * (reserved > held ? reserved : held));
            RCHECK(x->blocks <= per * (reserved + held + 1));
        } else {
            RCHECK_EQ(x->blocks, m->cap);
        }
        RCHECK_EQ(x->requested_bytes + x->wasted_bytes, m->allocs * t->sizes[c]);
        if (!m->saw_zero) {
            RCHECK_EQ(x->requested_bytes, m->requested);
            RCHECK_EQ(x->wasted_bytes, m->wasted);
        }
    }
}

static void randomized_run(uint64_t seed, bool grow, long ops) {
    static const uint32_t tight[] = {32, 128, 512, 2048, 4096};
    rtest *t = (rtest *)calloc(1, sizeof *t);
    REQUIRE(t);
    t->rng = seed;
    t->grow = grow;
    opool_heap_desc d = desc_of(&t->rec);
    if (grow) {
        memcpy(t->sizes, default_sizes, sizeof default_sizes);
        t->ncls = NDEFAULT;
        /* growth is the default: asked for, or not */
        d.flags = (seed % 2 ? OPOOL_HEAP_GROW : 0) | (seed % 3 == 0 ? OPOOL_POISON : 0);
        d.blocks_per_class = seed % 4 == 0 ? 100 : 0; /* several reserved pages, or one */
    } else {
        memcpy(t->sizes, tight, sizeof tight);
        t->ncls = 5;
        d.class_sizes = tight;
        d.class_count = 5;
        d.blocks_per_class = seed % 3 == 0 ? 40 : (uint32_t)(seed % 2); /* 40: 2-3 pages */
        d.flags = OPOOL_HEAP_FIXED | (seed % 2 ? OPOOL_POISON : 0);
    }
    t->nall = t->ncls;
    for (uint32_t k = 0; k < NOWN; k++)
        if (own_sizes[k] > t->sizes[t->ncls - 1]) t->sizes[t->nall++] = own_sizes[k];
    t->h = create(&d);
    t->foreign = (unsigned char *)malloc(100);
    if (!t->h || !t->foreign) {
        CHECK(t->h != NULL);
        free(t->foreign);
        free(t);
        return;
    }
    opool_heap_stats s0 = stats_of(t->h);
    for (uint32_t c = 0; c < t->ncls; c++) {
        t->cls[c].cap = s0.classes[c].blocks;
        t->per_page[c] = blocks_per_page(t->sizes[c]);
        RCHECK(t->per_page[c] > 0);
    }

    for (t->op = 1; t->op <= ops && !t->failed; t->op++) {
        int efull_before = t->rec.by_what[OPOOL_EFULL], n_before = t->rec.n;
        uint64_t failed_before = 0;
        for (uint32_t c = 0; c < t->ncls; c++) failed_before += t->cls[c].failed;
        size_t r = rbelow(t, 100);
        bool crowded = t->nlive > RMAX_LIVE - 100;
        if (t->nlive == RMAX_LIVE) r = 40; /* a free */
        if (r < (crowded ? 20u : 35u))
            rop_alloc(t, 0);
        else if (r < 40 && !crowded)
            rop_alloc(t, r < 38 ? 1 : 2);
        else if (r < 70)
            rop_free(t);
        else if (r < 85)
            rop_realloc(t);
        else if (r < 92) {
            if (t->nlive) {
                const rblock *b = &t->live[rbelow(t, t->nlive)];
                RCHECK_EQ(opool_heap_usable_size(t->h, b->p), b->usable);
            }
        } else if (r < 99) {
            rop_bad(t);
        } else if (rbelow(t, 8) == 0) {
            rop_clear(t);
        } else {
            rop_burst(t);
        }
        /* reports: the bad calls' (checked there), and EFULL only for failed allocs, at
         * most one each (the 1st, 2nd, 4th... of an episode) */
        uint64_t failed_after = 0;
        for (uint32_t c = 0; c < t->ncls; c++) failed_after += t->cls[c].failed;
        int efull = t->rec.by_what[OPOOL_EFULL] - efull_before;
        RCHECK(efull >= 0 && (uint64_t)efull <= failed_after - failed_before);
        RCHECK(t->rec.n - n_before - efull <= 1);
        RCHECK_EQ(t->rec.by_what[OPOOL_EWRITE_AFTER_FREE], 0);
        rcheck_stats(t);
        /* contents: a sample after every op, all of them now and then */
        if (t->op % 128 == 0) {
            for (size_t i = 0; i < t->nlive; i++) RCHECK(rcontents_ok(&t->live[i]));
        } else if (t->nlive) {
            for (int k = 0; k < 4; k++) RCHECK(rcontents_ok(&t->live[rbelow(t, t->nlive)]));
        }
    }
    for (size_t i = 0; i < t->nlive; i++) {
        RCHECK(rcontents_ok(&t->live[i]));
        free(t->live[i].shadow);
    }
    opool_heap_destroy(t->h);
    free(t->foreign);
    free(t);
}

TEST(randomized_against_malloc_with_grow) {
    for (uint64_t seed = 1; seed <= 16; seed++) randomized_run(seed, true, 10000);
}

TEST(randomized_against_malloc_without_grow_where_classes_fill_up) {
    for (uint64_t seed = 101; seed <= 116; seed++) randomized_run(seed, false, 10000);
}

int main(void) {
    RUN(null_zero_and_flags_zero_descs_give_a_heap_that_grows);
    RUN(fixed_heap_holds_its_reservation_and_no_more);
    RUN(create_rejects_fixed_with_grow);
    RUN(create_with_null_desc_gives_the_default_classes_and_no_page);
    RUN(a_heap_that_served_one_small_block_holds_one_page);
    RUN(create_with_zero_desc_gives_the_default_classes_a_page_at_their_first_alloc);
    RUN(create_fixed_with_zero_blocks_per_class_gives_one_page_each);
    RUN(create_rejects_null_out);
    RUN(create_rejects_class_sizes_not_ascending);
    RUN(create_rejects_equal_class_sizes);
    RUN(create_rejects_class_sizes_not_multiples_of_8);
    RUN(create_rejects_a_zero_class_size);
    RUN(create_rejects_class_sizes_above_the_maximum);
    RUN(create_accepts_the_maximum_class_size_and_8);
    RUN(create_rejects_class_count_zero_with_class_sizes_set);
    RUN(create_rejects_more_than_max_classes_and_accepts_exactly_max);
    RUN(create_rejects_every_unknown_flag);
    RUN(create_rejects_an_allocator_with_one_function);
    RUN(create_rejects_a_reservation_that_overflows);
    RUN(create_fails_with_enomem_at_every_allocation_and_leaks_nothing);
    RUN(destroy_of_null_does_nothing);
    RUN(destroy_gives_back_every_byte);
    RUN(clear_frees_every_block_and_the_heap_serves_again);
    RUN(clear_keeps_the_reserved_pages_and_one_grown_page_of_each_class);
    RUN(clear_ends_an_exhaustion_episode);
    RUN(clear_of_null_is_einval);
    RUN(an_arena_is_destroyed_with_blocks_live_and_reports_no_leak);
    RUN(no_size_up_to_64_kib_takes_more_than_twice_its_bytes);
    RUN(get_stats_of_a_null_heap_is_zeroed);

    RUN(alloc_gives_each_size_the_smallest_class_that_fits);
    RUN(alloc_of_size_zero_gives_a_block_of_the_smallest_class);
    RUN(alloc_and_calloc_with_a_null_heap_return_null);
    RUN(blocks_are_aligned_to_16_when_the_class_size_is_a_multiple_of_16);
    RUN(blocks_are_aligned_to_8_when_the_class_size_is_not_a_multiple_of_16);
    RUN(large_blocks_are_aligned_like_malloc);
    RUN(live_blocks_never_overlap);
    RUN(block_index_by_reciprocal_is_exact_for_every_class_size);
    RUN(pages_hold_as_many_blocks_as_fit_after_the_header_and_bitmap);
    RUN(a_class_without_grow_holds_blocks_per_class_rounded_up_to_whole_pages);
    RUN(reserved_pages_stay_when_they_empty);
    RUN(a_full_class_without_grow_fails_counts_and_reports_efull_at_an_episodes_1st_and_2nd_failures);
    RUN(a_class_with_grow_keeps_allocating_page_after_page);
    RUN(reuse_is_lifo_across_pages_and_finds_every_freed_block);
    RUN(grow_moves_empty_grown_pages_but_one_to_the_cache_and_takes_them_back);
    RUN(a_fill_and_empty_cycle_asks_the_allocator_for_nothing_after_its_first_round);
    RUN(calloc_zero_fills_blocks_of_a_page_that_served_another_class);
    RUN(a_heap_grows_page_by_page_when_the_allocator_refuses_regions);
    RUN(free_of_a_pointer_into_a_cached_page_or_an_unused_part_of_a_region_is_einval);
    RUN(a_large_block_grows_through_realloc_and_keeps_its_contents);
    RUN(cached_pages_unused_for_a_while_go_back_and_pointers_into_them_are_einval);
    RUN(a_class_with_grow_fails_and_reports_when_the_allocator_fails);
    RUN(sizes_above_the_largest_class_go_to_the_allocator);
    RUN(no_fallback_makes_sizes_above_the_largest_class_fail);
    RUN(a_large_alloc_fails_and_reports_efull_when_the_allocator_fails);
    RUN(the_next_alloc_of_a_class_returns_the_block_just_freed);
    RUN(calloc_zero_fills);
    RUN(calloc_zero_fills_a_reused_dirty_block);
    RUN(calloc_returns_null_when_n_times_size_overflows_and_counts_nothing);

    RUN(free_of_null_is_ok);
    RUN(free_with_a_null_heap_is_einval);
    RUN(free_of_foreign_pointers_is_einval_reported_and_changes_nothing);
    RUN(free_of_an_interior_pointer_is_einval_and_the_block_stays_live);
    RUN(free_of_an_interior_pointer_on_a_granule_boundary_is_einval);
    RUN(free_of_a_block_never_handed_out_is_einval);
    RUN(free_twice_is_estale_and_reported);
    RUN(free_of_an_interior_pointer_of_a_large_block_is_einval);
    RUN(free_twice_of_a_large_block_is_einval);
    RUN(rejected_counts_every_bad_free_realloc_and_size_query);

    RUN(realloc_of_null_allocates);
    RUN(realloc_to_size_zero_frees_and_returns_null);
    RUN(realloc_within_the_class_returns_the_same_block);
    RUN(realloc_across_classes_keeps_the_contents);
    RUN(realloc_to_and_from_large_keeps_the_contents);
    RUN(realloc_shrinking_a_large_block_above_the_largest_class_keeps_it_as_it_is);
    RUN(realloc_of_a_bad_pointer_returns_null_reports_and_changes_nothing);
    RUN(realloc_into_a_full_class_fails_and_keeps_the_block);
    RUN(realloc_fails_and_keeps_the_block_when_the_allocator_fails);

    RUN(usable_size_is_the_class_size_or_the_large_size);
    RUN(usable_size_of_a_bad_pointer_is_zero_and_reported);

    RUN(poison_fills_a_freed_block_from_its_ninth_byte);
    RUN(poison_reports_a_write_after_free_when_the_block_is_handed_out_again);
    RUN(poison_reports_nothing_when_freed_blocks_are_left_alone);
    RUN(free_blocks_are_inaccessible_under_asan_without_any_flag);

    RUN(stats_count_a_scripted_sequence_exactly);
    RUN(stats_stay_exact_over_millions_of_allocations);
    RUN(stats_bytes_grow_with_pages_and_large_blocks);
    RUN(large_blocks_are_runs_of_the_heaps_own_pages);
    RUN(free_runs_unused_for_a_while_give_their_memory_back);
    RUN(free_large_runs_past_the_budget_give_their_memory_back_at_once);
    RUN(a_block_above_the_largest_run_has_a_mapping_of_its_own_that_goes_back_at_its_free);
    RUN(a_new_run_gives_back_the_memory_of_as_many_empty_pages_first);

    RUN(randomized_against_malloc_with_grow);
    RUN(randomized_against_malloc_without_grow_where_classes_fill_up);
    return test_summary();
}
