/*
 * bench_heap.c -- opool_heap, the size-class heap, against glibc malloc,
 * mimalloc, jemalloc and tcmalloc, single-threaded.
 *
 * Usage: bench_heap [--quick] [--reps N] [--only LIST] [--csv PATH] [--no-peers]
 *   (LIST: fill,cycle,churn16,churn64,mixed,uniform,realloc,vectors,heaps,worlds,soak)
 *
 * ============================================================================
 * SUBJECTS
 * ============================================================================
 *   opool_heap   opool_heap_alloc / _free / _realloc through the public
 *                header: default classes (16 ... 32640), blocks_per_class 0
 *                (a class's first page at its first alloc), OPOOL_HEAP_GROW, so a
 *                class adds pages as the untimed fill needs them and the
 *                timed loops run at a steady size. Its pages come from
 *                the system in regions (mmap), blocks above 32 KiB up to
 *                1 MiB are runs of its own pages, larger ones the C
 *                library's: glibc here.
 *   glibc        malloc / free / realloc of this program (default tuning).
 *   mimalloc, jemalloc, tcmalloc
 *                the same calls in a build of this file linked with the
 *                replacement (bench_heap_<allocator>, see bench_child.h and
 *                bench/bench.cmake): bench_heap runs each one it finds
 *                beside itself with --child and merges its rows; a missing
 *                one is a note.
 * One loop body per workload serves every subject: it is always inlined
 * into one function per subject with the subject a constant, so the calls
 * are direct (no function pointer in a timed loop), and the malloc family
 * shares its instance through the plain malloc/free/realloc symbols.
 *
 * ============================================================================
 * WORKLOADS
 * ============================================================================
 *   fill+drain 64 B
 *              N = 1,000 and 1,000,000: allocate N blocks (first and last
 *              word written), then read back and free them all in the
 *              order they came, round after round (the timed loop runs
 *              as many rounds as make its operations). ns per alloc+free
 *              pair. At N = 1,000,000 the note gives the resident bytes per
 *              block: RSS grown over the first fill of the warm-up round,
 *              / N (these workloads run first, so that glibc's arena holds
 *              no memory freed by earlier ones).
 *   fill+empty 48 B x100
 *              issue 17's reproduction of a garbage collector: 100 rounds
 *              (--quick: 10) of "allocate 200,000 blocks of 48 bytes, then
 *              free them all", the same loop as fill+drain.
 *   Every row's note gives the system time and the minor page faults of its
 *   timed loops, per million operations (getrusage): what the kernel did for
 *   the allocator (mmap, munmap, madvise, first touches of fresh pages).
 *   churn 16 B, churn 64 B
 *              N = 1,000 and 100,000 live blocks of one size, pointers in an
 *              array. Per iteration: k = random slot; read back the first
 *              and the last 8-byte word of block k (into the checksum),
 *              free it, allocate the new one, write both words. ns per
 *              free+alloc pair.
 *   churn mixed 16-1024
 *              the same with sizes drawn per allocation, skewed toward small
 *              ones as real heaps are: an octave [16,32) [32,64) ... [512,
 *              1024] is chosen uniformly, then an 8-byte multiple within it
 *              uniformly (mean ~250 bytes; half the blocks are <= 120 B).
 *   churn uniform 16-1024
 *              the same with sizes uniform over the 8-byte multiples of
 *              16..1024 (mean 520): more weight on the large classes, where
 *              every block is its own cache lines.
 *   realloc +16 to 1 KiB, realloc x1.5 to 1 KiB, realloc x1.5 to 64 KiB
 *              16 buffers grow at once, as buffers being appended to: per
 *              iteration a random one grows with realloc (+16 bytes, or
 *              x1.5 rounded up to 8) and the new bytes are written (memset,
 *              a byte value of the buffer and offset). A buffer at its
 *              final size is checked instead -- first and last byte of
 *              every segment appended -- freed, and restarted with
 *              realloc(NULL, 16). 64 KiB goes beyond the heap's largest
 *              class (32 KiB): from there opool_heap's buffer is a run of
 *              its pages. ns per call (the restarts and their checks
 *              amortised into them).
 *   vectors grown by doubling
 *              an entity registry filled, as EnTT's: three vectors (of 4,
 *              12 and 64-byte elements: a sparse set's entities and two
 *              components) pushed to N = 1,000 and 100,000 elements each,
 *              growing as std::vector does (a block twice the size, the
 *              elements copied, the old block freed), then freed; round
 *              after round. ns per element pushed to all three.
 *   heap made, 48 B, dropped
 *              a heap made (opool_heap: a NULL desc), one 48-byte block
 *              allocated, written, read back and freed, the heap dropped:
 *              what a heap per frame, world or request costs. N: blocks per
 *              heap. ns per heap. The malloc subjects have no heaps: in
 *              mimalloc's build, its own (mi_heap_new, mi_heap_malloc,
 *              mi_free, mi_heap_destroy); in the others', a block allocator
 *              as Box2D 2.4's (b2BlockAllocator: 14 classes up to 640
 *              bytes, 16 KiB chunks from that malloc, chunks freed at its
 *              destroy), what a Box2D port to opool_heap replaced.
 *   worlds made, used, dropped
 *              a Box2D-like world in a heap of its own, dropped whole
 *              (opool_heap: Box2D's 14 classes and OPOOL_HEAP_ARENA; the
 *              malloc subjects as above): 40 bodies of 4 objects (176, 72,
 *              152 and 24 bytes), 160 contacts (200 or 256 bytes), then 30
 *              steps that each end 12 random contacts and begin 12, every
 *              object written and read back, then the heap dropped with its
 *              320 objects live. N: objects live. ns per world.
 *   soak       (RSS, not time) one process per subject: a random
 *              alloc/free run whose live count oscillates between 20,000
 *              and 200,000 six times (--quick: four; rising phases
 *              allocate with probability 3/4, falling ones free with 3/4,
 *              random victims), sizes as "mixed" in even cycles and from 16..128
 *              only in odd ones, so the survivors of a large-block cycle
 *              sit among the pages a small-block cycle wants. Resident
 *              memory (RSS, /proc/self/statm) over a baseline taken just
 *              before the run (harness arrays already touched), at the
 *              end (live count at its low) and at the peak (VmHWM after
 *              resetting it through /proc/self/clear_refs, else RSS at
 *              every turn of the cycle), each divided by the bytes live
 *              then (requested sizes); also the bytes requested in all,
 *              RSS once everything is freed and, for opool_heap, the bytes
 *              its stats say it holds at the end.
 *
 * ============================================================================
 * METHOD
 * ============================================================================
 *   - One splitmix64 sequence (bench_util.h) per workload, N, repetition and
 *     phase (fill, warm-up, timed) drives every subject: the same slots,
 *     sizes and values. The checksum folds what is read back; every
 *     subject must produce the same one in every repetition, across
 *     processes too, or the run fails.
 *   - Each repetition of a churn builds its live set (untimed), runs an
 *     untimed warm-up of ops/8 iterations, then the timed loop, then reads
 *     back and frees everything (untimed); opool_heap gets a new heap each
 *     time, the mallocs keep their process-wide state.
 *   - Repetition 0 is a discarded warm-up; then --reps recorded (9;
 *     --quick: 5) with the in-process subjects in rotating order. Median,
 *     min, max; ratios are medians over the glibc and mimalloc medians of
 *     the same run (below 1: faster). The allocator builds run in their own
 *     processes, after the glibc build, so their repetitions are not
 *     interleaved with the others.
 */
#if !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif

#include "opool.h"
#include "opool_heap.h"

#include "bench_util.h"
#include "bench_child.h"
#include "bench_svg.h"

#include <stdarg.h>
#include <stdbool.h>
#include <sys/resource.h>

/* ==== options, results ===================================================== */

static struct {
    bool quick;
    bool child;       /* run by bench_heap: rows to stdout as text */
    bool no_peers;    /* do not run the allocator builds */
    const char *soak; /* --soak heap|malloc: this process runs that soak only */
    int reps;
    const char *csv;
    const char *only;
} opt = {false, false, false, NULL, 0, NULL, NULL};

enum { S_HEAP, S_MALLOC };

/* Subjects in display order; the ratios' references are glibc and mimalloc. */
static const char *const subj_order[] = {"opool_heap", "glibc", "mimalloc", "jemalloc", "tcmalloc"};
#define N_SUBJ_ORDER 5

#define MAX_ROWS 256
typedef struct heap_row {
    bench_row b;
    int w;    /* workload index: display order */
    int rank; /* subject position in subj_order */
} heap_row;
static heap_row g_rows[MAX_ROWS];
static int g_nrows;

typedef struct soak_row {
    char subject[40];
    uint64_t ops;
    double ns_per_op;
    uint64_t requested;           /* bytes asked for over the run */
    uint64_t live_end, live_peak; /* requested bytes live at the end and at most */
    int64_t rss_base;             /* bytes resident before the run */
    int64_t rss_end, rss_peak;    /* over rss_base */
    int64_t rss_freed;            /* over rss_base once every block is freed */
    uint64_t heap_bytes;          /* opool_heap: what it holds at the end (its stats) */
    int peak_exact;               /* 1: from VmHWM; 0: sampled at the turns */
    uint64_t checksum;
} soak_row;
static soak_row g_soak[8];
static int g_nsoak;

static char g_info[8][240]; /* allocator lines for the header */
static int g_ninfo;
static uint64_t g_t_start;
static char g_load_start[64];

#define fail(...) bench_fail("bench_heap", __VA_ARGS__)

static bool wanted(const char *key) { return bench_list_has(opt.only, key); }

static int subj_rank(const char *name) {
    for (int i = 0; i < N_SUBJ_ORDER; i++)
        if (strcmp(subj_order[i], name) == 0) return i;
    return N_SUBJ_ORDER;
}

/* ==== the workloads' building blocks ========================================= */

enum { W_CHURN = 1, W_REALLOC, W_SOAK, W_FILL, W_HEAPS, W_VECTORS };
enum { SZ_FIXED, SZ_LOG, SZ_UNIFORM };
enum { GROW_ADD16, GROW_MUL15 };

typedef struct workload {
    const char *key;  /* for --only */
    const char *name; /* for the table and CSV */
    int kind;         /* W_CHURN / W_REALLOC */
    int size_mode;    /* churn: SZ_* */
    uint32_t size;    /* churn SZ_FIXED: the size; realloc: the final size */
    int grow;         /* realloc: GROW_* */
} workload;

static const workload g_workloads[] = {
    {"fill", "fill+drain 64 B", W_FILL, SZ_FIXED, 64, 0},
    {"cycle", "fill+empty 48 B x100", W_FILL, SZ_FIXED, 48, 0},
    {"churn16", "churn 16 B", W_CHURN, SZ_FIXED, 16, 0},
    {"churn64", "churn 64 B", W_CHURN, SZ_FIXED, 64, 0},
    {"mixed", "churn mixed 16-1024", W_CHURN, SZ_LOG, 0, 0},
    {"uniform", "churn uniform 16-1024", W_CHURN, SZ_UNIFORM, 0, 0},
    {"realloc", "realloc +16 to 1 KiB", W_REALLOC, 0, 1024, GROW_ADD16},
    {"realloc", "realloc x1.5 to 1 KiB", W_REALLOC, 0, 1024, GROW_MUL15},
    {"realloc", "realloc x1.5 to 64 KiB", W_REALLOC, 0, 65536, GROW_MUL15},
    {"vectors", "vectors grown by doubling", W_VECTORS, SZ_FIXED, 0, 0},
    {"heaps", "heap made, 48 B, dropped", W_HEAPS, SZ_FIXED, 48, 0},
    {"worlds", "worlds made, used, dropped", W_HEAPS, SZ_LOG, 0, 0},
};
#define N_WORKLOADS ((int)(sizeof g_workloads / sizeof g_workloads[0]))

static const uint32_t g_churn_n[2] = {1000, 1000000};
#define CYCLE_N 200000u   /* fill+empty: blocks per round */
#define MAX_LIVE 1000000u /* churn and fill+drain at 1,000,000; the soak's high mark is 200,000 */
#define CHAINS 16u        /* realloc: buffers growing at once */

/* A size from the low 32 bits of r (the slot comes from the high ones).
 * SZ_LOG with octaves = 6: 16..1024, with 3: 16..128; the last octave
 * includes its upper end. */
BENCH_ALWAYS_INLINE uint32_t draw_size(int mode, uint32_t fixed, uint32_t octaves, uint64_t r) {
    if (mode == SZ_FIXED) return fixed;
    if (mode == SZ_UNIFORM) return 16u + 8u * (uint32_t)(((r & 0xffffffffu) * 127u) >> 32);
    uint32_t o = (uint32_t)(((r & 0xffffu) * octaves) >> 16);
    uint32_t lo = 16u << o;
    uint32_t m = lo / 8u + (o == octaves - 1u);
    return lo + 8u * (uint32_t)((((r >> 16) & 0xffffu) * m) >> 16);
}

/* Every block is >= 16 bytes: its first and its last word are distinct. */
#define W0(p) (((uint64_t *)(void *)(p))[0])
#define WL(p, z) (((uint64_t *)(void *)((p) + (z)-8u))[0])

BENCH_ALWAYS_INLINE void put_words(char *p, uint32_t z, uint64_t a, uint64_t b) {
    W0(p) = a;
    WL(p, z) = b;
}

BENCH_ALWAYS_INLINE uint64_t get_words(const char *p, uint32_t z) {
    return bench_mix(W0(p), WL(p, z));
}

/* The subject's calls: s is a constant wherever these are inlined. */
BENCH_ALWAYS_INLINE char *s_alloc(int s, opool_heap *h, size_t z) {
    return s == S_HEAP ? (char *)opool_heap_alloc(h, z) : (char *)malloc(z);
}

/* 1 when the heap rejected the free (it must never). */
BENCH_ALWAYS_INLINE int s_free(int s, opool_heap *h, void *p) {
    if (s == S_HEAP) return opool_heap_free(h, p) != OPOOL_OK;
    free(p);
    return 0;
}

BENCH_ALWAYS_INLINE char *s_realloc(int s, opool_heap *h, void *p, size_t z) {
    return s == S_HEAP ? (char *)opool_heap_realloc(h, p, z) : (char *)realloc(p, z);
}

static opool_heap *heap_new(void) {
    opool_heap_desc d;
    memset(&d, 0, sizeof d);
    d.flags = OPOOL_HEAP_GROW; /* default classes, one page each to start */
    opool_heap *h = NULL;
    if (opool_heap_create(&h, &d) != OPOOL_OK) fail("opool_heap_create");
    return h;
}

static char **g_P;    /* live blocks */
static uint32_t *g_Z; /* their sizes */

/* What the kernel did for this process: system time, minor page faults. */
typedef struct sys_use {
    uint64_t sys_ns, faults;
} sys_use;

static sys_use sys_use_now(void) {
    struct rusage u;
    sys_use s = {0, 0};
    if (getrusage(RUSAGE_SELF, &u) == 0) {
        s.sys_ns = (uint64_t)u.ru_stime.tv_sec * 1000000000u + (uint64_t)u.ru_stime.tv_usec * 1000u;
        s.faults = (uint64_t)u.ru_minflt;
    }
    return s;
}

/* The last timed loop's share (set by every body next to its clock reads). */
static sys_use g_used;

static void sys_use_since(const sys_use *t0) {
    sys_use t1 = sys_use_now();
    g_used.sys_ns = t1.sys_ns - t0->sys_ns;
    g_used.faults = t1.faults - t0->faults;
}

/* ==== churn ================================================================== */

BENCH_ALWAYS_INLINE uint64_t churn_steps(int s, opool_heap *h, uint32_t n, int mode, uint32_t fixed,
                                         uint64_t ops, uint64_t seed, int *bad) {
    char **P = g_P;
    uint32_t *Z = g_Z;
    uint64_t sum = 0;
    int rejected = 0;
    for (uint64_t i = 0; i < ops; i++) {
        uint64_t r = bench_rng_next(&seed);
        uint32_t k = (uint32_t)(((r >> 32) * n) >> 32);
        char *o = P[k];
        sum += get_words(o, Z[k]);
        rejected |= s_free(s, h, o);
        uint32_t z = draw_size(mode, fixed, 6, r);
        char *q = s_alloc(s, h, z);
        if (q == NULL) fail("churn: allocation of %u bytes failed", z);
        put_words(q, z, k, i);
        P[k] = q;
        Z[k] = z;
    }
    *bad |= rejected;
    return sum;
}

/* churn_steps with the size mode a constant, so that the timed loop has no
 * mode test and keeps its state in registers (the same for every subject). */
BENCH_ALWAYS_INLINE uint64_t churn_run(int s, opool_heap *h, uint32_t n, const workload *w,
                                       uint64_t ops, uint64_t seed, int *bad) {
    switch (w->size_mode) {
    case SZ_FIXED:
        return churn_steps(s, h, n, SZ_FIXED, w->size, ops, seed, bad);
    case SZ_UNIFORM:
        return churn_steps(s, h, n, SZ_UNIFORM, 0, ops, seed, bad);
    default:
        return churn_steps(s, h, n, SZ_LOG, 0, ops, seed, bad);
    }
}

BENCH_ALWAYS_INLINE uint64_t churn_body(int s, const workload *w, uint32_t n, uint64_t ops,
                                        uint64_t seed_base, double *ns) {
    opool_heap *h = s == S_HEAP ? heap_new() : NULL;
    char **P = g_P;
    uint32_t *Z = g_Z;
    uint64_t seed = seed_base, sum = 0;
    int bad = 0;
    for (uint32_t k = 0; k < n; k++) { /* the live set: untimed */
        uint64_t r = bench_rng_next(&seed);
        uint32_t z = draw_size(w->size_mode, w->size, 6, r);
        char *q = s_alloc(s, h, z);
        if (q == NULL) fail("churn: fill allocation of %u bytes failed", z);
        put_words(q, z, k, ~(uint64_t)k);
        P[k] = q;
        Z[k] = z;
    }
    sum += churn_run(s, h, n, w, ops / 8, seed_base ^ 0x5555u, &bad);
    sys_use u0 = sys_use_now();
    uint64_t t0 = bench_now_ns();
    sum += churn_run(s, h, n, w, ops, seed_base ^ 0xaaaau, &bad);
    uint64_t t1 = bench_now_ns();
    sys_use_since(&u0);
    for (uint32_t k = 0; k < n; k++) {
        sum += get_words(P[k], Z[k]);
        bad |= s_free(s, h, P[k]);
    }
    if (s == S_HEAP) opool_heap_destroy(h);
    if (bad) fail("churn: opool_heap_free rejected a block it handed out");
    *ns = (double)(t1 - t0) / (double)ops;
    return sum;
}

static BENCH_NOINLINE uint64_t churn_heap(const workload *w, uint32_t n, uint64_t ops,
                                          uint64_t seed, double *ns) {
    return churn_body(S_HEAP, w, n, ops, seed, ns);
}

static BENCH_NOINLINE uint64_t churn_malloc(const workload *w, uint32_t n, uint64_t ops,
                                            uint64_t seed, double *ns) {
    return churn_body(S_MALLOC, w, n, ops, seed, ns);
}

/* ==== fill+drain ============================================================= */

/* One round: n blocks of size z, then each read back and freed in the order
 * they came. */
BENCH_ALWAYS_INLINE uint64_t fill_round(int s, opool_heap *h, uint32_t n, uint32_t z,
                                        uint64_t round, int *bad) {
    char **P = g_P;
    uint64_t sum = 0;
    int rejected = 0;
    for (uint32_t k = 0; k < n; k++) {
        char *q = s_alloc(s, h, z);
        if (q == NULL) fail("fill: allocation of %u bytes failed", z);
        put_words(q, z, k, round);
        P[k] = q;
    }
    for (uint32_t k = 0; k < n; k++) {
        sum += get_words(P[k], z);
        rejected |= s_free(s, h, P[k]);
    }
    *bad |= rejected;
    return sum;
}

/* rounds rounds after one untimed; *rss_per: resident bytes per block the
 * untimed round's fill added (measured after it, before its frees). */
BENCH_ALWAYS_INLINE uint64_t fill_body(int s, const workload *w, uint32_t n, uint64_t rounds,
                                       double *ns, double *rss_per) {
    opool_heap *h = s == S_HEAP ? heap_new() : NULL;
    char **P = g_P;
    uint32_t z = w->size;
    uint64_t sum = 0;
    int bad = 0;
    int64_t r0 = bench_rss_bytes();
    for (uint32_t k = 0; k < n; k++) { /* the untimed round */
        char *q = s_alloc(s, h, z);
        if (q == NULL) fail("fill: allocation of %u bytes failed", z);
        put_words(q, z, k, ~(uint64_t)k);
        P[k] = q;
    }
    *rss_per = (double)(bench_rss_bytes() - r0) / (double)n;
    for (uint32_t k = 0; k < n; k++) {
        sum += get_words(P[k], z);
        bad |= s_free(s, h, P[k]);
    }
    sys_use u0 = sys_use_now();
    uint64_t t0 = bench_now_ns();
    for (uint64_t r = 0; r < rounds; r++) sum += fill_round(s, h, n, z, r, &bad);
    uint64_t t1 = bench_now_ns();
    sys_use_since(&u0);
    if (s == S_HEAP) opool_heap_destroy(h);
    if (bad) fail("fill: opool_heap_free rejected a block it handed out");
    *ns = (double)(t1 - t0) / (double)(rounds * n);
    return sum;
}

static BENCH_NOINLINE uint64_t fill_heap(const workload *w, uint32_t n, uint64_t rounds, double *ns,
                                         double *rss_per) {
    return fill_body(S_HEAP, w, n, rounds, ns, rss_per);
}

static BENCH_NOINLINE uint64_t fill_malloc(const workload *w, uint32_t n, uint64_t rounds,
                                           double *ns, double *rss_per) {
    return fill_body(S_MALLOC, w, n, rounds, ns, rss_per);
}

/* ==== vectors grown by doubling ============================================== */

/* An entity registry's fill, as EnTT's: a sparse set's dense array of 4-byte
 * entities and two component arrays of 12 and 64 bytes, each a vector
 * pushed to n elements, growing as std::vector does: a block twice the
 * size, the elements copied, the old block freed. */
#define VECTORS 3
static const uint32_t g_vec_elem[VECTORS] = {4, 12, 64};

BENCH_ALWAYS_INLINE uint64_t vectors_fill(int s, opool_heap *h, uint32_t n, uint64_t round,
                                          int *bad) {
    char *v[VECTORS] = {NULL, NULL, NULL};
    uint32_t cap[VECTORS] = {0, 0, 0};
    uint64_t sum = 0;
    for (uint32_t i = 0; i < n; i++)
        for (int k = 0; k < VECTORS; k++) {
            uint32_t z = g_vec_elem[k];
            if (i == cap[k]) {
                uint32_t more = cap[k] ? 2 * cap[k] : 8;
                char *q = s_alloc(s, h, (size_t)more * z);
                if (q == NULL) fail("vectors: an allocation of %u bytes failed", more * z);
                if (v[k]) {
                    memcpy(q, v[k], (size_t)cap[k] * z);
                    *bad |= s_free(s, h, v[k]);
                }
                v[k] = q;
                cap[k] = more;
            }
            memcpy(v[k] + (size_t)i * z, &round, z < 8 ? z : 8);
            v[k][(size_t)i * z + z - 1] = (char)i;
        }
    for (int k = 0; k < VECTORS; k++) {
        uint32_t z = g_vec_elem[k];
        uint64_t first = 0; /* element 0's first bytes and the last one's last: written */
        memcpy(&first, v[k], z < 8 ? z : 8);
        sum = bench_mix(sum, first + (unsigned char)v[k][(size_t)(n - 1) * z + z - 1]);
        *bad |= s_free(s, h, v[k]);
    }
    return sum;
}

/* rounds fills of n elements, after one untimed; ns per element pushed (to
 * each of the VECTORS vectors). */
BENCH_ALWAYS_INLINE uint64_t vectors_body(int s, uint32_t n, uint64_t rounds, double *ns) {
    opool_heap *h = s == S_HEAP ? heap_new() : NULL;
    int bad = 0;
    uint64_t sum = vectors_fill(s, h, n, 0, &bad);
    sys_use u0 = sys_use_now();
    uint64_t t0 = bench_now_ns();
    for (uint64_t r = 1; r <= rounds; r++) sum += vectors_fill(s, h, n, r, &bad);
    uint64_t t1 = bench_now_ns();
    sys_use_since(&u0);
    if (s == S_HEAP) opool_heap_destroy(h);
    if (bad) fail("vectors: opool_heap_free rejected a block it handed out");
    *ns = (double)(t1 - t0) / (double)(rounds * n);
    return sum;
}

static BENCH_NOINLINE uint64_t vectors_heap(uint32_t n, uint64_t rounds, double *ns) {
    return vectors_body(S_HEAP, n, rounds, ns);
}

static BENCH_NOINLINE uint64_t vectors_malloc(uint32_t n, uint64_t rounds, double *ns) {
    return vectors_body(S_MALLOC, n, rounds, ns);
}

/* ==== heaps made and dropped ================================================= */

/* A block allocator as Box2D 2.4's b2BlockAllocator works, the allocator a
 * Box2D port to opool_heap replaced: 14 classes up to 640 bytes, each
 * served from 16 KiB chunks taken from malloc and cut into a free list when
 * the class runs out; larger blocks from malloc; the chunks given back at
 * destroy. The malloc subjects of the heaps and worlds rows use it, but for
 * mimalloc, which has heaps of its own. */
#define BA_CLASSES 14
#define BA_MAX 640u
#define BA_CHUNK 16384u
static const uint32_t g_ba_sizes[BA_CLASSES] = {16,  32,  64,  96,  128, 160, 192,
                                                224, 256, 320, 384, 448, 512, 640};
#if BENCH_ALLOC != BENCH_ALLOC_MIMALLOC
typedef struct block_alloc {
    char **chunks;
    uint32_t nchunks, cap;
    void *free[BA_CLASSES];
} block_alloc;

BENCH_ALWAYS_INLINE uint32_t ba_class(size_t z) {
    uint32_t c = 0;
    while (g_ba_sizes[c] < z) c++;
    return c;
}

static block_alloc *ba_create(void) {
    block_alloc *a = (block_alloc *)calloc(1, sizeof *a);
    if (a == NULL || (a->chunks = (char **)malloc(128 * sizeof *a->chunks)) == NULL)
        fail("block allocator: no memory");
    a->cap = 128;
    return a;
}

static BENCH_NOINLINE void *ba_refill(block_alloc *a, uint32_t c) {
    if (a->nchunks == a->cap) {
        a->cap += 128;
        a->chunks = (char **)realloc(a->chunks, a->cap * sizeof *a->chunks);
        if (a->chunks == NULL) fail("block allocator: no memory");
    }
    char *k = (char *)malloc(BA_CHUNK);
    if (k == NULL) fail("block allocator: no memory");
    a->chunks[a->nchunks++] = k;
    uint32_t z = g_ba_sizes[c], n = BA_CHUNK / z;
    for (uint32_t i = 1; i + 1 < n; i++) *(void **)(k + i * z) = k + (i + 1) * z;
    *(void **)(k + (n - 1) * z) = NULL;
    a->free[c] = k + z;
    return k;
}

BENCH_ALWAYS_INLINE void *ba_alloc(block_alloc *a, size_t z) {
    if (z > BA_MAX) return malloc(z);
    uint32_t c = ba_class(z);
    void *b = a->free[c];
    if (b == NULL) return ba_refill(a, c);
    a->free[c] = *(void **)b;
    return b;
}

BENCH_ALWAYS_INLINE void ba_free(block_alloc *a, void *p, size_t z) {
    if (z > BA_MAX) {
        free(p);
        return;
    }
    uint32_t c = ba_class(z);
    *(void **)p = a->free[c];
    a->free[c] = p;
}

static void ba_destroy(block_alloc *a) {
    for (uint32_t i = 0; i < a->nchunks; i++) free(a->chunks[i]);
    free(a->chunks);
    free(a);
}

#endif

/* One heap of either subject: opool_heap (of desc d), else mimalloc's own
 * heap in its build, else the block allocator over this build's malloc. */
typedef struct any_heap {
    opool_heap *h;
#if BENCH_ALLOC == BENCH_ALLOC_MIMALLOC
    mi_heap_t *mi;
#else
    block_alloc *ba;
#endif
} any_heap;

BENCH_ALWAYS_INLINE void any_create(int s, any_heap *a, const opool_heap_desc *d) {
    if (s == S_HEAP) {
        if (opool_heap_create(&a->h, d) != OPOOL_OK) fail("opool_heap_create");
        return;
    }
#if BENCH_ALLOC == BENCH_ALLOC_MIMALLOC
    if ((a->mi = mi_heap_new()) == NULL) fail("mi_heap_new");
#else
    a->ba = ba_create();
#endif
}

BENCH_ALWAYS_INLINE char *any_alloc(int s, any_heap *a, size_t z) {
    char *p;
    if (s == S_HEAP)
        p = (char *)opool_heap_alloc(a->h, z);
    else
#if BENCH_ALLOC == BENCH_ALLOC_MIMALLOC
        p = (char *)mi_heap_malloc(a->mi, z);
#else
        p = (char *)ba_alloc(a->ba, z);
#endif
    if (p == NULL) fail("heaps: an allocation of %zu bytes failed", z);
    return p;
}

/* 1 when opool_heap rejected the free (it must never). */
BENCH_ALWAYS_INLINE int any_free(int s, any_heap *a, void *p, size_t z) {
    if (s == S_HEAP) return opool_heap_free(a->h, p) != OPOOL_OK;
#if BENCH_ALLOC == BENCH_ALLOC_MIMALLOC
    (void)a, (void)z;
    mi_free(p);
#else
    ba_free(a->ba, p, z);
#endif
    return 0;
}

/* Dropped whole, with every block still in it. */
BENCH_ALWAYS_INLINE void any_destroy(int s, any_heap *a) {
    if (s == S_HEAP) {
        opool_heap_destroy(a->h);
        return;
    }
#if BENCH_ALLOC == BENCH_ALLOC_MIMALLOC
    mi_heap_destroy(a->mi);
#else
    ba_destroy(a->ba);
#endif
}

/* The sizes of a world's objects, as Box2D 2.4's (64-bit): bodies, fixtures, polygon
 * shapes, broad-phase pairs and proxies, and contacts of two kinds. */
static const uint32_t g_world_sizes[6] = {176, 72, 152, 24, 200, 256};
#define WORLD_BODIES 40u
#define WORLD_CONTACTS 160u
#define WORLD_STEPS 30u
#define WORLD_CHURN 12u /* contacts that end and begin at each step */

/* A world: its bodies, fixtures and shapes, then contacts that begin and end
 * over WORLD_STEPS steps, every object written and read back, then the world
 * dropped whole. The checksum folds what was read. */
BENCH_ALWAYS_INLINE uint64_t world_run(int s, const opool_heap_desc *d, uint64_t *seed, int *bad) {
    char *obj[4 * WORLD_BODIES + WORLD_CONTACTS];
    uint32_t size[4 * WORLD_BODIES + WORLD_CONTACTS];
    uint32_t n = 0;
    uint64_t sum = 0;
    any_heap a;
    any_create(s, &a, d);
    for (uint32_t b = 0; b < WORLD_BODIES; b++)
        for (uint32_t k = 0; k < 4; k++, n++) {
            size[n] = g_world_sizes[k];
            obj[n] = any_alloc(s, &a, size[n]);
            put_words(obj[n], size[n], n, b);
        }
    for (uint32_t c = 0; c < WORLD_CONTACTS; c++, n++) {
        size[n] = g_world_sizes[4 + (c & 1)];
        obj[n] = any_alloc(s, &a, size[n]);
        put_words(obj[n], size[n], n, c);
    }
    for (uint32_t step = 0; step < WORLD_STEPS; step++)
        for (uint32_t k = 0; k < WORLD_CHURN; k++) {
            uint64_t r = bench_rng_next(seed);
            uint32_t i = 4 * WORLD_BODIES + (uint32_t)(((r >> 32) * WORLD_CONTACTS) >> 32);
            sum += get_words(obj[i], size[i]);
            *bad |= any_free(s, &a, obj[i], size[i]);
            size[i] = g_world_sizes[4 + (r & 1)];
            obj[i] = any_alloc(s, &a, size[i]);
            put_words(obj[i], size[i], i, step);
        }
    for (uint32_t i = 0; i < n; i++) sum += get_words(obj[i], size[i]);
    any_destroy(s, &a);
    return sum;
}

/* heaps: ops heaps of the default classes made, one block allocated,
 * written, read, freed, the heap dropped. worlds: ops worlds (world_run) of
 * Box2D's classes, each an arena. ns per heap or world. */
BENCH_ALWAYS_INLINE uint64_t heaps_body(int s, const workload *w, uint64_t ops, uint64_t seed,
                                        double *ns) {
    opool_heap_desc d;
    memset(&d, 0, sizeof d);
    if (w->size_mode != SZ_FIXED) {
        d.class_sizes = g_ba_sizes;
        d.class_count = BA_CLASSES;
        d.flags = OPOOL_HEAP_ARENA;
    }
    uint64_t sum = 0;
    int bad = 0;
    for (int timed = 0; timed < 2; timed++) {
        uint64_t n = timed ? ops : ops / 8 + 1, t0 = 0;
        sys_use u0 = sys_use_now();
        if (timed) t0 = bench_now_ns();
        for (uint64_t i = 0; i < n; i++) {
            if (w->size_mode != SZ_FIXED) {
                sum += world_run(s, &d, &seed, &bad);
                continue;
            }
            any_heap a;
            any_create(s, &a, NULL);
            char *p = any_alloc(s, &a, w->size);
            put_words(p, w->size, i, seed);
            sum += get_words(p, w->size);
            bad |= any_free(s, &a, p, w->size);
            any_destroy(s, &a);
        }
        if (timed) {
            *ns = (double)(bench_now_ns() - t0) / (double)ops;
            sys_use_since(&u0);
        }
    }
    if (bad) fail("heaps: opool_heap_free rejected a block it handed out");
    return sum;
}

static BENCH_NOINLINE uint64_t heaps_heap(const workload *w, uint64_t ops, uint64_t seed,
                                          double *ns) {
    return heaps_body(S_HEAP, w, ops, seed, ns);
}

static BENCH_NOINLINE uint64_t heaps_malloc(const workload *w, uint64_t ops, uint64_t seed,
                                            double *ns) {
    return heaps_body(S_MALLOC, w, ops, seed, ns);
}

/* ==== realloc chains ========================================================= */

BENCH_ALWAYS_INLINE uint32_t grow(int mode, uint32_t cur, uint32_t max) {
    uint32_t z = mode == GROW_ADD16 ? cur + 16u : ((cur * 3u / 2u) + 7u) & ~7u;
    return z < max ? z : max;
}

/* The byte of the segment a buffer got when it grew to start: it depends on
 * the buffer's serial number too, so a stale copy cannot pass the check. */
BENCH_ALWAYS_INLINE unsigned char seg_byte(uint32_t serial, uint32_t start) {
    return (unsigned char)(serial * 167u + (start >> 3) * 13u + 1u);
}

/* Check the first and last byte of every segment of a buffer of size upto;
 * their fold, for the checksum. Fails the run on a lost byte. */
static uint64_t chain_check(const char *p, uint32_t serial, int mode, uint32_t max, uint32_t upto) {
    uint64_t sum = 0;
    uint32_t start = 0, end = 16;
    for (;;) {
        unsigned char b = seg_byte(serial, start);
        unsigned char x = (unsigned char)p[start], y = (unsigned char)p[end - 1];
        if (x != b || y != b)
            fail("realloc: contents lost: buffer %u, bytes %u..%u hold %u/%u, not %u", serial,
                 start, end - 1, x, y, b);
        sum = sum * 31u + x + ((uint64_t)y << 8) + end;
        if (end >= upto) break;
        start = end;
        end = grow(mode, end, max);
    }
    return sum;
}

BENCH_ALWAYS_INLINE uint64_t realloc_body(int s, const workload *w, uint64_t ops, uint64_t seed,
                                          double *ns) {
    opool_heap *h = s == S_HEAP ? heap_new() : NULL;
    char *C[CHAINS];
    uint32_t L[CHAINS], T[CHAINS], serial = 0;
    const uint32_t max = w->size;
    const int mode = w->grow;
    uint64_t sum = 0;
    int bad = 0;
    for (uint32_t j = 0; j < CHAINS; j++) {
        C[j] = s_realloc(s, h, NULL, 16);
        if (C[j] == NULL) fail("realloc: realloc(NULL, 16) failed");
        T[j] = serial++;
        L[j] = 16;
        memset(C[j], seg_byte(T[j], 0), 16);
    }
    sys_use u0 = sys_use_now();
    uint64_t t0 = bench_now_ns();
    for (uint64_t i = 0; i < ops; i++) {
        uint64_t r = bench_rng_next(&seed);
        uint32_t j = (uint32_t)(((r >> 32) * CHAINS) >> 32);
        char *p = C[j];
        uint32_t cur = L[j];
        if (cur >= max) { /* full grown: check, free, start again */
            sum += chain_check(p, T[j], mode, max, cur);
            bad |= s_free(s, h, p);
            p = s_realloc(s, h, NULL, 16);
            if (p == NULL) fail("realloc: realloc(NULL, 16) failed");
            T[j] = serial++;
            memset(p, seg_byte(T[j], 0), 16);
            C[j] = p;
            L[j] = 16;
            continue;
        }
        uint32_t z = grow(mode, cur, max);
        char *q = s_realloc(s, h, p, z);
        if (q == NULL) fail("realloc: realloc to %u bytes failed", z);
        memset(q + cur, seg_byte(T[j], cur), z - cur);
        C[j] = q;
        L[j] = z;
    }
    uint64_t t1 = bench_now_ns();
    sys_use_since(&u0);
    for (uint32_t j = 0; j < CHAINS; j++) {
        sum += chain_check(C[j], T[j], mode, max, L[j]);
        bad |= s_free(s, h, C[j]);
    }
    if (s == S_HEAP) opool_heap_destroy(h);
    if (bad) fail("realloc: opool_heap_free rejected a block it handed out");
    *ns = (double)(t1 - t0) / (double)ops;
    return sum + serial;
}

static BENCH_NOINLINE uint64_t realloc_heap(const workload *w, uint64_t ops, uint64_t seed,
                                            double *ns) {
    return realloc_body(S_HEAP, w, ops, seed, ns);
}

static BENCH_NOINLINE uint64_t realloc_malloc(const workload *w, uint64_t ops, uint64_t seed,
                                              double *ns) {
    return realloc_body(S_MALLOC, w, ops, seed, ns);
}

/* ==== the timed points ======================================================= */

static const char *subject_name(int s) { return s == S_HEAP ? "opool_heap" : BENCH_ALLOC_NAME; }

static heap_row *new_row(int w, uint32_t n, const char *subject) {
    if (g_nrows >= MAX_ROWS) fail("too many result rows");
    heap_row *r = &g_rows[g_nrows++];
    memset(r, 0, sizeof *r);
    snprintf(r->b.workload, sizeof r->b.workload, "%s", g_workloads[w].name);
    snprintf(r->b.subject, sizeof r->b.subject, "%s", subject);
    r->b.n = n;
    r->w = w;
    r->rank = subj_rank(subject);
    r->b.ratio_ref1 = r->b.ratio_ref2 = -1;
    return r;
}

/* Operations per timed loop: each subject's loop lasts some 10-100 ms. */
static uint64_t point_ops(const workload *w, uint32_t n) {
    if (w->kind == W_FILL && n == CYCLE_N) return (uint64_t)n * (opt.quick ? 10 : 100);
    if (w->kind == W_VECTORS) return (uint64_t)n * (opt.quick ? 4 : (n > 10000 ? 20 : 2000));
    if (w->kind == W_HEAPS)
        return (w->size_mode == SZ_FIXED ? 100000u : 3000u) / (opt.quick ? 10 : 1);
    if (w->kind == W_FILL)
        return opt.quick ? (n > 1000 ? n : 400000u) : (n > 1000 ? 3u * n : 4000000u);
    uint64_t ops = w->kind == W_REALLOC ? (w->size > 2048 ? 500000u : 2000000u)
                   : n <= 1000          ? 4000000u
                                        : 1000000u;
    return opt.quick ? ops / 10 : ops;
}

static void run_point(int wi, uint32_t n) {
    const workload *w = &g_workloads[wi];
    int subj[2], ns = 0;
    if (BENCH_ALLOC == BENCH_ALLOC_GLIBC) subj[ns++] = S_HEAP;
    subj[ns++] = S_MALLOC;
    heap_row *rows[2];
    uint64_t ops = point_ops(w, n);
    for (int j = 0; j < ns; j++) {
        rows[j] = new_row(wi, n, subject_name(subj[j]));
        rows[j]->b.ops = ops;
        rows[j]->b.reps = opt.reps;
    }
    uint64_t t0 = bench_now_ns();
    sys_use used[2] = {{0, 0}, {0, 0}};
    double rss_per[2] = {0, 0};
    for (int rep = 0; rep <= opt.reps; rep++) {
        uint64_t seed = bench_seed((uint32_t)(w->kind * 16 + wi), n, rep, 0);
        uint64_t first = 0;
        for (int jj = 0; jj < ns; jj++) {
            int j = (jj + rep) % ns;
            double t = 0, rss = 0;
            uint64_t sum;
            if (w->kind == W_FILL)
                sum = subj[j] == S_HEAP ? fill_heap(w, n, ops / n, &t, &rss)
                                        : fill_malloc(w, n, ops / n, &t, &rss);
            else if (w->kind == W_CHURN)
                sum = subj[j] == S_HEAP ? churn_heap(w, n, ops, seed, &t)
                                        : churn_malloc(w, n, ops, seed, &t);
            else if (w->kind == W_HEAPS)
                sum = subj[j] == S_HEAP ? heaps_heap(w, ops, seed, &t)
                                        : heaps_malloc(w, ops, seed, &t);
            else if (w->kind == W_VECTORS)
                sum = subj[j] == S_HEAP ? vectors_heap(n, ops / n, &t)
                                        : vectors_malloc(n, ops / n, &t);
            else
                sum = subj[j] == S_HEAP ? realloc_heap(w, ops, seed, &t)
                                        : realloc_malloc(w, ops, seed, &t);
            if (jj == 0)
                first = sum;
            else if (sum != first)
                fail("%s, N %u, repetition %d: checksum %016" PRIx64
                     " of %s differs from %016" PRIx64,
                     w->name, n, rep, sum, subject_name(subj[j]), first);
            if (rep == 0) rss_per[j] = rss;
            if (rep > 0) {
                rows[j]->b.ns[rep - 1] = t;
                rows[j]->b.checksum = bench_mix(rows[j]->b.checksum, sum);
                used[j].sys_ns += g_used.sys_ns;
                used[j].faults += g_used.faults;
            }
        }
    }
    for (int j = 0; j < ns; j++) {
        bench_row_finish(&rows[j]->b);
        char *note = rows[j]->b.note;
        size_t cap = sizeof rows[j]->b.note, len;
        double mops = (double)ops * opt.reps / 1e6;
        snprintf(note, cap, "sys %.0f us/Mop, %.0f flt/Mop", (double)used[j].sys_ns / 1e3 / mops,
                 (double)used[j].faults / mops);
        len = strlen(note);
        if (w->kind == W_FILL && n >= 1000000u)
            snprintf(note + len, cap - len, "; RSS %.1f B/block", rss_per[j]);
        else if (subj[j] == S_HEAP && w->kind == W_REALLOC && w->size > 32768)
            snprintf(note + len, cap - len, "; above 32 KiB: runs");
    }
    fprintf(stderr, "  %-24s N %6u  %s: %d reps in %.1f s\n", w->name, n, BENCH_ALLOC_NAME,
            opt.reps, (double)(bench_now_ns() - t0) / 1e9);
}

static void run_timed(void) {
    for (int wi = 0; wi < N_WORKLOADS; wi++) {
        const workload *w = &g_workloads[wi];
        if (!wanted(w->key)) continue;
        if (w->kind == W_FILL && w->size == 48)
            run_point(wi, CYCLE_N);
        else if (w->kind == W_CHURN || w->kind == W_FILL)
            for (int i = 0; i < 2; i++) run_point(wi, g_churn_n[i]);
        else if (w->kind == W_HEAPS)
            run_point(wi, w->size_mode == SZ_FIXED ? 1 : WORLD_CONTACTS + 4 * WORLD_BODIES);
        else if (w->kind == W_VECTORS)
            for (int i = 0; i < 2; i++) run_point(wi, i ? 100000u : 1000u);
        else
            run_point(wi, CHAINS);
    }
}

/* ==== the soak =============================================================== */

#define SOAK_HIGH 200000u
#define SOAK_LOW 20000u
#define SOAK_CYCLES (opt.quick ? 4 : 6) /* even: the run ends after a small-block cycle */

BENCH_ALWAYS_INLINE void soak_body(int s, soak_row *out) {
    char **P = g_P;
    uint32_t *Z = g_Z;
    memset(P, 0, (size_t)MAX_LIVE * sizeof *P); /* resident before the baseline */
    memset(Z, 0, (size_t)MAX_LIVE * sizeof *Z);
    uint64_t seed = bench_seed(W_SOAK, SOAK_HIGH, 0, 0);
    out->rss_base = bench_rss_bytes();
    bool exact = bench_hwm_reset() && bench_hwm_bytes() > 0;
    int64_t peak_sampled = out->rss_base;
    opool_heap *h = s == S_HEAP ? heap_new() : NULL;
    uint32_t live = 0;
    uint64_t live_bytes = 0, ops = 0, sum = 0;
    int bad = 0;
    uint64_t t0 = bench_now_ns();
    for (int c = 0; c < SOAK_CYCLES; c++) {
        uint32_t octaves = c % 2 ? 3u : 6u;
        for (int rising = 1; rising >= 0; rising--) {
            for (;;) {
                if (rising ? live >= SOAK_HIGH : live <= SOAK_LOW) break;
                uint64_t r = bench_rng_next(&seed);
                ops++;
                bool alloc = rising ? (r & 3u) != 0 : (r & 3u) == 0;
                if ((alloc || live == 0) && live < MAX_LIVE) {
                    uint32_t z = draw_size(SZ_LOG, 0, octaves, r >> 2);
                    char *q = s_alloc(s, h, z);
                    if (q == NULL) fail("soak: allocation of %u bytes failed", z);
                    put_words(q, z, live, ops);
                    P[live] = q;
                    Z[live++] = z;
                    live_bytes += z;
                    out->requested += z;
                    if (live_bytes > out->live_peak) out->live_peak = live_bytes;
                } else {
                    uint32_t k = (uint32_t)(((r >> 32) * live) >> 32);
                    sum += get_words(P[k], Z[k]);
                    bad |= s_free(s, h, P[k]);
                    live_bytes -= Z[k];
                    P[k] = P[--live];
                    Z[k] = Z[live];
                }
            }
            int64_t now = bench_rss_bytes();
            if (now > peak_sampled) peak_sampled = now;
        }
    }
    uint64_t t1 = bench_now_ns();
    out->rss_end = bench_rss_bytes() - out->rss_base;
    out->live_end = live_bytes;
    int64_t hwm = exact ? bench_hwm_bytes() : -1;
    out->peak_exact = hwm > 0;
    out->rss_peak = (hwm > 0 ? hwm : peak_sampled) - out->rss_base;
    if (s == S_HEAP) {
        opool_heap_stats st;
        opool_heap_get_stats(h, &st);
        out->heap_bytes = st.bytes;
    }
    for (uint32_t k = 0; k < live; k++) {
        sum += get_words(P[k], Z[k]);
        bad |= s_free(s, h, P[k]);
    }
    out->rss_freed = bench_rss_bytes() - out->rss_base;
    if (s == S_HEAP) opool_heap_destroy(h);
    if (bad) fail("soak: opool_heap_free rejected a block it handed out");
    out->ops = ops;
    out->ns_per_op = (double)(t1 - t0) / (double)ops;
    out->checksum = sum;
}

static BENCH_NOINLINE void soak_heap(soak_row *out) { soak_body(S_HEAP, out); }
static BENCH_NOINLINE void soak_malloc(soak_row *out) { soak_body(S_MALLOC, out); }

/* ==== child protocol =========================================================
 * bench_child.h's lines. A timed row is a ROW as it stands (the workload
 * field is the workload's name). A soak is a ROW too, workload "soak",
 * n = SOAK_HIGH, one sample (its ns per op), and SOAK_EXTRA extra fields:
 * requested, live_end, live_peak, rss_base, rss_end, rss_peak, rss_freed,
 * peak_exact, heap_bytes.                                                     */

#define SOAK_WORKLOAD "soak"
#define SOAK_EXTRA 9

static void emit_info(void) {
    char info[200];
    bench_alloc_describe(info, sizeof info);
    printf("INFO\t%s\n", info);
}

static void emit_soak(const soak_row *r) {
    bench_row b;
    memset(&b, 0, sizeof b);
    snprintf(b.workload, sizeof b.workload, SOAK_WORKLOAD);
    snprintf(b.subject, sizeof b.subject, "%s", r->subject);
    b.n = SOAK_HIGH;
    b.ops = r->ops;
    b.reps = 1;
    b.ns[0] = r->ns_per_op;
    b.checksum = r->checksum;
    char extra[320];
    snprintf(extra, sizeof extra,
             "%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRId64 "\t%" PRId64 "\t%" PRId64
             "\t%" PRId64 "\t%d\t%" PRIu64,
             r->requested, r->live_end, r->live_peak, r->rss_base, r->rss_end, r->rss_peak,
             r->rss_freed, r->peak_exact, r->heap_bytes);
    bench_child_put_row(stdout, &b, extra);
}

static int workload_index(const char *name) {
    for (int w = 0; w < N_WORKLOADS; w++)
        if (strcmp(g_workloads[w].name, name) == 0) return w;
    return -1;
}

/* bench_child_run's on_row: a child's row into g_rows or g_soak. */
static int parse_child_row(void *ctx, char *line) {
    (void)ctx;
    bench_row b;
    char *x[BENCH_CHILD_MAX_EXTRA];
    int nx = bench_child_parse_row(line, &b, x);
    if (nx == 0) {
        int w = workload_index(b.workload);
        if (w < 0) {
            fprintf(stderr, "bench_heap: a child sent an unknown workload '%s'\n", b.workload);
            return -1;
        }
        heap_row *r = new_row(w, b.n, b.subject);
        r->b = b;
        return 0;
    }
    if (nx == SOAK_EXTRA && strcmp(b.workload, SOAK_WORKLOAD) == 0) {
        if (g_nsoak >= 8) fail("too many soak rows");
        soak_row *r = &g_soak[g_nsoak++];
        memset(r, 0, sizeof *r);
        snprintf(r->subject, sizeof r->subject, "%s", b.subject);
        r->ops = b.ops;
        r->ns_per_op = b.ns[0];
        r->checksum = b.checksum;
        r->requested = strtoull(x[0], NULL, 10);
        r->live_end = strtoull(x[1], NULL, 10);
        r->live_peak = strtoull(x[2], NULL, 10);
        r->rss_base = strtoll(x[3], NULL, 10);
        r->rss_end = strtoll(x[4], NULL, 10);
        r->rss_peak = strtoll(x[5], NULL, 10);
        r->rss_freed = strtoll(x[6], NULL, 10);
        r->peak_exact = atoi(x[7]);
        r->heap_bytes = strtoull(x[8], NULL, 10);
        return 0;
    }
    fprintf(stderr, "bench_heap: a child sent a malformed row\n");
    return -1;
}

#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 1, 2)))
#endif
static void
add_info(const char *fmt, ...);

static void add_info(const char *fmt, ...) {
    if (g_ninfo >= 8) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_info[g_ninfo++], sizeof g_info[0], fmt, ap);
    va_end(ap);
}

/* Runs the program at path with --child and args (NULL-terminated), merging
 * its rows; fails the run if it fails. BENCH_CHILD_OK, or BENCH_CHILD_MISSING
 * if there is no such program. */
static int run_child(const char *path, const char *const *args, char *info, size_t cap) {
    char *argv[12];
    int a = 0;
    argv[a++] = (char *)path;
    argv[a++] = (char *)"--child";
    for (; *args && a < 11; args++) argv[a++] = (char *)*args;
    argv[a] = NULL;
    int rc = bench_child_run("bench_heap", path, argv, parse_child_row, NULL, info, cap);
    if (rc == BENCH_CHILD_FAILED) fail("%s failed", path);
    return rc;
}

/* The path of allocator build name beside this program (in dir). */
static void peer_path(char *out, size_t cap, const char *dir, const char *name) {
    snprintf(out, cap, "%s/bench_heap_%s", dir, name);
}

/* The timed workloads of an allocator build. */
static void run_peer(const char *dir, const char *name) {
    char reps[16], path[4400], info[200]; /* dir is at most 4095 characters */
    snprintf(reps, sizeof reps, "%d", opt.reps);
    peer_path(path, sizeof path, dir, name);
    const char *args[8];
    int a = 0;
    args[a++] = "--reps";
    args[a++] = reps;
    if (opt.only) {
        args[a++] = "--only";
        args[a++] = opt.only;
    }
    if (opt.quick) args[a++] = "--quick";
    args[a] = NULL;
    if (run_child(path, args, info, sizeof info) == BENCH_CHILD_MISSING)
        add_info("%-9s skipped: no %s (lib%s not found when configured)", name, path, name);
    else
        add_info("%-9s %s (bench_heap_%s)", name, info, name);
}

/* The soaks: each in a process of its own, so no two share a heap; a
 * missing allocator build is skipped (main notes it). */
static void run_soaks(const char *argv0, const char *dir) {
    char self[4096], path[4400], info[200];
    bench_child_self_exe(self, sizeof self, argv0);
    const char *heap[] = {"--soak", "heap", opt.quick ? "--quick" : NULL, NULL};
    const char *malloc_[] = {"--soak", "malloc", opt.quick ? "--quick" : NULL, NULL};
    if (run_child(self, heap, info, sizeof info) != BENCH_CHILD_OK ||
        run_child(self, malloc_, info, sizeof info) != BENCH_CHILD_OK)
        fail("cannot run %s --soak", self);
    if (opt.no_peers) return;
    for (int i = 0; i < BENCH_ALLOC_NPEERS; i++) {
        peer_path(path, sizeof path, dir, bench_alloc_peer(i));
        run_child(path, malloc_, info, sizeof info);
    }
}

/* ==== output ================================================================== */

static const heap_row *find_row(int w, uint32_t n, const char *subject) {
    for (int i = 0; i < g_nrows; i++)
        if (g_rows[i].w == w && g_rows[i].b.n == n && strcmp(g_rows[i].b.subject, subject) == 0)
            return &g_rows[i];
    return NULL;
}

static int cmp_rows(const void *a, const void *b) {
    const heap_row *x = a, *y = b;
    if (x->w != y->w) return x->w - y->w;
    if (x->b.n != y->b.n) return x->b.n < y->b.n ? -1 : 1;
    return x->rank - y->rank;
}

/* Same checksum for every subject of a point, ratios to glibc and mimalloc. */
static void check_and_ratio(void) {
    qsort(g_rows, (size_t)g_nrows, sizeof g_rows[0], cmp_rows);
    for (int i = 0; i < g_nrows; i++) {
        heap_row *r = &g_rows[i];
        const heap_row *g = find_row(r->w, r->b.n, "glibc");
        const heap_row *m = find_row(r->w, r->b.n, "mimalloc");
        if (g && g->b.checksum != r->b.checksum)
            fail("%s, N %u: the checksum of %s (%016" PRIx64 ") differs from glibc's (%016" PRIx64
                 ")",
                 r->b.workload, r->b.n, r->b.subject, r->b.checksum, g->b.checksum);
        r->b.ratio_ref1 = g ? r->b.median / g->b.median : -1;
        r->b.ratio_ref2 = m ? r->b.median / m->b.median : -1;
    }
    for (int i = 1; i < g_nsoak; i++)
        if (g_soak[i].checksum != g_soak[0].checksum || g_soak[i].ops != g_soak[0].ops)
            fail("soak: %s's checksum differs from %s's", g_soak[i].subject, g_soak[0].subject);
}

static void fmt_mib(char *buf, size_t cap, double bytes) {
    snprintf(buf, cap, "%.1f", bytes / (1024.0 * 1024.0));
}

static void print_soak(void) {
    if (g_nsoak == 0) return;
    const soak_row *r0 = &g_soak[0];
    printf("\nSoak: %" PRIu64 " operations, live count 20,000 <-> 200,000 x %d, %.1f MiB "
           "requested in all;\n"
           "RSS over the baseline taken before the run; 'per live' = RSS / requested bytes "
           "live\n(at the end: live count at its low; at the peak: the most bytes live at "
           "once):\n\n",
           r0->ops, SOAK_CYCLES, (double)r0->requested / (1024.0 * 1024.0));
    printf("%-12s %8s | %9s %9s %8s | %9s %9s %8s | %10s %8s\n", "subject", "ns/op", "live MiB",
           "RSS MiB", "per live", "peak live", "peak RSS", "per live", "freed: RSS", "base MiB");
    printf("%-12s %8s | %28s | %28s |\n", "", "", "at the end", "at the peak");
    for (int rank = 0; rank <= N_SUBJ_ORDER; rank++) {
        for (int i = 0; i < g_nsoak; i++) {
            const soak_row *r = &g_soak[i];
            if (subj_rank(r->subject) != rank) continue;
            char a[16], b[16], c[16], d[16], e[16], f[16];
            fmt_mib(a, sizeof a, (double)r->live_end);
            fmt_mib(b, sizeof b, (double)r->rss_end);
            fmt_mib(c, sizeof c, (double)r->live_peak);
            fmt_mib(d, sizeof d, (double)r->rss_peak);
            fmt_mib(e, sizeof e, (double)r->rss_freed);
            fmt_mib(f, sizeof f, (double)r->rss_base);
            printf("%-12s %8.2f | %9s %9s %7.2fx | %9s %9s %7.2fx | %10s %8s%s\n", r->subject,
                   r->ns_per_op, a, b, (double)r->rss_end / (double)r->live_end, c, d,
                   (double)r->rss_peak / (double)r->live_peak, e, f,
                   r->peak_exact ? "" : "  (peak sampled)");
        }
    }
    for (int i = 0; i < g_nsoak; i++)
        if (g_soak[i].heap_bytes)
            printf("(%s at the end: %.1f MiB held by the heap itself, by its stats)\n",
                   g_soak[i].subject, (double)g_soak[i].heap_bytes / (1024.0 * 1024.0));
}

static int write_soak_csv(const char *path, const char *mode, const bench_machine *m) {
    FILE *f = bench_csv_create("bench_heap", path);
    if (f == NULL) return -1;
    fprintf(
        f,
        "subject,ops,ns_per_op,requested_bytes,live_bytes_end,live_bytes_peak,"
        "rss_base_bytes,rss_end_bytes,rss_peak_bytes,rss_after_free_bytes,peak_from_vmhwm,"
        "rss_per_live_end,rss_per_live_peak,heap_bytes_end,checksum,mode,cpu,nproc,compiler,flags,"
        "samples_ns\n");
    for (int i = 0; i < g_nsoak; i++) {
        const soak_row *r = &g_soak[i];
        bench_csv_str(f, r->subject);
        fprintf(f,
                ",%" PRIu64 ",%.3f,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRId64 ",%" PRId64
                ",%" PRId64 ",%" PRId64 ",%d,%.4f,%.4f,%" PRIu64 ",%016" PRIx64 ",",
                r->ops, r->ns_per_op, r->requested, r->live_end, r->live_peak, r->rss_base,
                r->rss_end, r->rss_peak, r->rss_freed, r->peak_exact,
                (double)r->rss_end / (double)r->live_end,
                (double)r->rss_peak / (double)r->live_peak, r->heap_bytes, r->checksum);
        bench_csv_machine(f, mode, m);
        fprintf(f, "%.3f\"\n", r->ns_per_op);
    }
    return bench_csv_close("bench_heap", path, f);
}

static void print_header(const bench_machine *m, const char *mode) {
    printf("bench_heap -- %s\n", mode);
    printf("  cpu:        %s (%ld online)\n", m->cpu, m->nproc);
    printf("  compiler:   %s\n", m->compiler);
    printf("  flags:      %s\n", m->flags);
    printf("  THP:        %s\n", m->thp);
    char load_end[64];
    bench_read_load(load_end, sizeof load_end);
    printf("  loadavg:    %s at start, %s at end (other programs skew the figures)\n", g_load_start,
           load_end);
    for (int i = 0; i < g_ninfo; i++)
        printf("  %s%s\n", i == 0 ? "allocators: " : "            ", g_info[i]);
    printf("  opool_heap: default classes 16..32640 (64), blocks_per_class 0, OPOOL_HEAP_GROW;\n"
           "              pages from the system (mmap regions), blocks above 32 KiB runs\n"
           "              of its pages up to 1 MiB, then glibc (this program)\n");
    printf("  method:     %d recorded repetitions after 1 warm-up; ns per operation; the\n"
           "              ratios are medians over the glibc and the mimalloc median\n"
           "              (below 1: faster); every subject's checksum matched\n\n",
           opt.reps);
}

/* ==== main ==================================================================== */

static void usage(FILE *f) {
    fprintf(f,
            "usage: bench_heap [--quick] [--reps N] [--only LIST] [--csv PATH] [--no-peers]\n"
            "  LIST: fill,cycle,churn16,churn64,mixed,uniform,realloc,vectors,heaps,worlds,soak\n"
            "  --quick     short run (under 20 s with every allocator build)\n"
            "  --no-peers  do not run the allocator builds bench_heap_<allocator>\n"
            "  --csv       CSV output (default bench/out/heap.csv; the soak goes to\n"
            "              the same name with _soak before .csv)\n");
}

static void parse_args(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--quick") == 0) {
            opt.quick = true;
        } else if (strcmp(a, "--child") == 0) {
            opt.child = true;
        } else if (strcmp(a, "--no-peers") == 0) {
            opt.no_peers = true;
        } else if (strcmp(a, "--soak") == 0 && v) {
            opt.soak = v;
            i++;
            if (strcmp(v, "heap") != 0 && strcmp(v, "malloc") != 0) {
                fprintf(stderr, "bench_heap: --soak wants heap or malloc\n");
                exit(2);
            }
        } else {
            i += bench_common_arg("bench_heap", a, v, &opt.reps, &opt.csv, &opt.only, usage) - 1;
        }
    }
    if (opt.reps == 0) opt.reps = opt.quick ? 5 : 9;
}

/* The charts' y axis, per workload (see WORKLOADS above). */
static const char *chart_unit(const char *workload) {
    if (strncmp(workload, "fill", 4) == 0) return "ns per alloc+free pair";
    if (strncmp(workload, "churn", 5) == 0) return "ns per free+alloc pair";
    if (strncmp(workload, "heap made", 9) == 0) return "ns per heap";
    if (strncmp(workload, "vectors", 7) == 0) return "ns per element pushed";
    if (strncmp(workload, "worlds", 6) == 0) return "ns per world";
    return "ns per realloc call";
}

/* N is 1K and 1M only: bars say it all. */
static bool chart_lines(const char *workload) {
    (void)workload;
    return false;
}

int main(int argc, char **argv) {
    parse_args(argc, argv);
    g_t_start = bench_now_ns();
    g_P = bench_xalloc((size_t)MAX_LIVE * sizeof *g_P);
    g_Z = bench_xalloc((size_t)MAX_LIVE * sizeof *g_Z);

    if (opt.soak) { /* a process of its own for one soak */
        bool heap = strcmp(opt.soak, "heap") == 0;
        if (heap && BENCH_ALLOC != BENCH_ALLOC_GLIBC) fail("--soak heap: run it in bench_heap");
        soak_row r;
        memset(&r, 0, sizeof r);
        snprintf(r.subject, sizeof r.subject, "%s", heap ? "opool_heap" : BENCH_ALLOC_NAME);
        if (heap)
            soak_heap(&r);
        else
            soak_malloc(&r);
        emit_info();
        emit_soak(&r);
        return 0;
    }
    if (opt.child || BENCH_ALLOC != BENCH_ALLOC_GLIBC) {
        /* an allocator build: its malloc rows only, as text (alone, for a look) */
        run_timed();
        emit_info();
        for (int i = 0; i < g_nrows; i++) bench_child_put_row(stdout, &g_rows[i].b, NULL);
        return 0;
    }

    bench_machine m;
    bench_machine_get(&m);
    char mode[120];
    snprintf(mode, sizeof mode, "opool_heap vs mallocs, single thread%s",
             opt.quick ? " (--quick)" : "");
    bench_read_load(g_load_start, sizeof g_load_start);
    fprintf(stderr, "bench_heap: %s\n", mode);
    run_timed();
    char info[200];
    bench_alloc_describe(info, sizeof info);
    add_info("%-9s %s (this program)", BENCH_ALLOC_NAME, info);
    char dir[4096];
    bench_child_self_dir(dir, sizeof dir, argv[0]);
    bool timed = false;
    for (int wi = 0; wi < N_WORKLOADS; wi++) timed |= wanted(g_workloads[wi].key);
    if (!opt.no_peers)
        for (int i = 0; i < BENCH_ALLOC_NPEERS; i++) {
            const char *name = bench_alloc_peer(i);
            if (timed) {
                run_peer(dir, name);
            } else {
                char p[4400];
                peer_path(p, sizeof p, dir, name);
                if (access(p, X_OK) == 0)
                    add_info("%-9s bench_heap_%s", name, name);
                else
                    add_info("%-9s skipped: no %s (lib%s not found when configured)", name, p,
                             name);
            }
        }
    if (wanted("soak")) {
        fprintf(stderr, "  soak: one process per subject\n");
        run_soaks(argv[0], dir);
    }
    check_and_ratio();

    print_header(&m, mode);
    static bench_row table[MAX_ROWS];
    for (int i = 0; i < g_nrows; i++) table[i] = g_rows[i].b;
    if (g_nrows) {
        printf("N: live blocks (churn, fill), buffers growing at once (realloc); note: system\n"
               "time and minor faults per million operations of the timed loops\n\n");
        bench_print_table(stdout, table, g_nrows, "x glibc", "x mimalloc");
    }
    print_soak();

    const char *csv = opt.csv ? opt.csv : "bench/out/heap.csv";
    char soak_csv[4200];
    size_t len = strlen(csv);
    if (len > 4 && strcmp(csv + len - 4, ".csv") == 0) len -= 4;
    snprintf(soak_csv, sizeof soak_csv, "%.*s_soak.csv", (int)len, csv);
    if (g_nrows && bench_write_csv(csv, table, g_nrows, "glibc", "mimalloc", 0, mode, &m) == 0)
        printf("\nCSV: %s (object_size 0: the workload names the sizes)\n", csv);
    static const bench_svg_run run = {"bench_heap", "heap_", {"N", "N"}, chart_unit, chart_lines};
    bench_svg_charts(csv, &run, table, g_nrows, mode);
    if (g_nsoak && write_soak_csv(soak_csv, mode, &m) == 0) printf("CSV: %s\n", soak_csv);
    fflush(stdout);
    fprintf(stderr, "bench_heap: done in %.1f s\n", (double)(bench_now_ns() - g_t_start) / 1e9);
    return 0;
}
