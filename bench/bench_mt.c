/*
 * bench_mt.c -- opool_mt, the lock-free concurrent pool, against locked pools,
 * a Concurrency Kit stack pool and general-purpose allocators, at 1, 2, 4 and
 * 8 threads sharing one pool.
 *
 * Usage: bench_mt [--quick] [--reps N] [--size 16|64|256] [--threads 1,2,4,8]
 *                 [--only LIST] [--csv PATH] [--no-peers]
 *   (LIST: cache,bulk,shared,dpdk,dpdk64,dpdkbulk,dpdknc,mutex,spin,ck,
 *    sharded_slab,core,malloc,grow)
 *
 * ============================================================================
 * SUBJECTS
 * ============================================================================
 *   opool_mt cache64  opool_mt_cache_alloc/_free, one 64-entry cache per thread
 *   opool_mt bulk32   opool_mt_cache_alloc_bulk/_free_bulk of 32 through the
 *                     same cache (BULK WORKLOAD below; figures per object)
 *   opool_mt shared   opool_mt_alloc/_free: every call CASes the shared head
 *   rte_mempool c256  DPDK's mempool (rte_mempool_get/_put; its default ring
 *                     ops, multi-producer multi-consumer) with a per-lcore
 *                     cache of 256 (what DPDK's examples use), and c64 with
 *                     64 (opool_mt's cache size here); bulk32:
 *                     rte_mempool_get_bulk/_put_bulk of 32 through the 256
 *                     cache; nocache: no cache, every call on the ring (only
 *                     at T <= cores, and with --quick at T = 1: that ring
 *                     makes each call wait for the calls ahead of it, so a
 *                     thread preempted mid-call stalls every other). EAL
 *                     starts once, before the first DPDK run: --no-huge
 *                     --no-pci --no-shconf --no-telemetry -l 0, errors only
 *                     (the main thread's CPU affinity, which EAL pins to
 *                     lcore 0, is put back); every worker thread registers
 *                     with rte_thread_register (so it gets an lcore id and
 *                     with it a cache) and unregisters when it ends. Built
 *                     only when pkg-config finds libdpdk (bench/bench.cmake;
 *                     Debian: libdpdk-dev), else left out with a note. The
 *                     mempool hands out pointers: no handle, no validation,
 *                     no double-free detection; a get may fail while other
 *                     lcores' caches hold objects (no stealing), so its pools
 *                     get room for every cache (pool_capacity).
 *   mutex pool        object array + stack of free indices under one
 *                     pthread_mutex_t (default attributes)
 *   spinlock pool     the same under a test-and-test-and-set spinlock (C11
 *                     atomics, a pause instruction while the lock is seen held)
 *   ck_stack pool     object array whose free objects form a Concurrency Kit
 *                     ck_stack (entry embedded in the free object): push
 *                     ck_stack_push_mpmc, pop ck_stack_pop_mpmc (pointer +
 *                     generation double-width CAS: ABA-safe). Header-only;
 *                     left out with a note where <ck_stack.h> or the
 *                     double-width CAS is missing.
 *   sharded_slab      Rust's sharded_slab crate (a lock-free concurrent
 *                     slab): one Pool shared by the T threads; create_with
 *                     allocates and writes the tags in place, clear frees
 *                     (leaving the object's memory as it is), get reads the
 *                     tags back (the only way to reach a live object). Keys
 *                     carry the slot's generation: a stale key is refused,
 *                     as opool_mt refuses a stale handle. Sharded by thread:
 *                     each thread allocates from a shard of its own and
 *                     frees its own objects to that shard's local free list
 *                     (another thread's free would go to a lock-free remote
 *                     list); every get, clear and create_with CASes the
 *                     slot's lifecycle word (generation, state, reference
 *                     count). Pool, not Slab: Slab's insert and remove move
 *                     the whole value in and out. Measured by a Rust
 *                     program, bench_mt_sharded_slab (bench/sharded; built
 *                     by cargo offline against Debian's
 *                     librust-sharded-slab-dev, else left out with a note),
 *                     that repeats this file's workload and method step for
 *                     step (random stream, barrier, calibration,
 *                     repetitions, latency timer and histogram) and runs as
 *                     a child like the allocator builds below. A Pool has
 *                     no capacity (its pages grow on demand) and is new for
 *                     every run, as the pools here are.
 *   opool (core)      the single-threaded pool (opool_alloc/opool_free),
 *                     1 thread only: the reference of target (b)
 *   malloc (X)        malloc/free of the C library (glibc), or of mimalloc,
 *                     jemalloc, tcmalloc.
 * The lock pools and ck_stack hand out raw indices/pointers and validate
 * nothing; opool_mt, opool and sharded_slab check every handle's (key's)
 * generation.
 *
 * An allocator replaces malloc for the whole program that links it, so each
 * one gets its own build of this file: BENCH_ALLOC selects it (default
 * glibc; bench/bench.cmake builds bench_mt_mimalloc, bench_mt_jemalloc and
 * bench_mt_tcmalloc). The glibc build (bench_mt) runs every pool subject and
 * then, unless --no-peers, runs each sibling bench_mt_<allocator> found next
 * to itself with --child (malloc rows only, as text on a pipe), so one command
 * prints one table, and bench_mt_sharded_slab the same way (before them). A
 * missing sibling is a one-line note.
 *
 * ============================================================================
 * WORKLOAD
 * ============================================================================
 * T threads (default 1, 2, 4, 8; the machine may have fewer cores: 8 threads
 * on 2 cores is oversubscribed on purpose) share one pool or allocator. Each
 * thread keeps WS = 16 live objects; per step it picks k at random (its own
 * splitmix64 stream from bench_util.h, seeded by thread index and
 * repetition, the same for every subject), checks and frees object k, and
 * allocates its replacement, writing a tag to its first and last 8-byte word.
 * The check reads both words back before the free: a pool that hands one
 * slot to two threads fails the run. Pools hold max(4096, T * (16 + 64) * 2)
 * objects (DPDK's: room for its larger caches, see pool_capacity); objects
 * are --size bytes (default 64) for every subject.
 *
 * BULK WORKLOAD (the bulk32 subjects): each thread keeps two batches of 32
 * live objects; per step it checks the tags of one batch, frees it with one
 * bulk call, allocates its replacement with one bulk call and writes the new
 * tags. Figures are per object (a "pair" is one object allocated and freed);
 * no latency run (a call is 32 objects).
 *
 * ============================================================================
 * METHOD
 * ============================================================================
 *   - Throughput: threads are created per run, set up outside the timed
 *     region (pool, cache, first 16 objects), meet at a start barrier
 *     (spinning with sched_yield: no futex), then run a fixed number of
 *     pairs each. Wall time from the barrier's release to the last thread's
 *     end; Mops/s = T * pairs / wall (alloc+free pairs, all threads).
 *     The pair count per thread is calibrated per subject and T so that one
 *     repetition takes ~0.25 s (--quick: ~0.03 s).
 *   - Repetition 0 is a discarded warm-up, then --reps recorded ones (7;
 *     --quick: 3); within a repetition the subjects run one after another
 *     from a rotating start. Reported: median, min, max.
 *   - Latency: one more run per point (after a short warm-up run) in which
 *     every alloc and every free is timed alone (x86: lfence; rdtsc ...
 *     rdtscp; lfence, ticks calibrated against CLOCK_MONOTONIC over 50 ms;
 *     elsewhere clock_gettime) into a per-thread histogram (exact below 64
 *     ticks, then 3% buckets; the maximum exact), merged: p50, p99, p99.9,
 *     p99.99, max in ns, the timer's own median cost subtracted. The run has
 *     half the pairs of a repetition, so it lasts about as long (timing
 *     doubles the cost): a count of preemptions comparable across subjects.
 *   - Parallelism (par): the threads' CPU time in the timed region over its
 *     wall time, median of the repetitions. About min(T, cores) when the
 *     cores were free; a multi-threaded point well below that measured some
 *     other program's load, and the targets section says so.
 *   - opool_mt's stats (sleeps, wake_calls: both must stay 0, nobody waits)
 *     are summed over every pool the run created and printed.
 *
 * ============================================================================
 * OUTPUT
 * ============================================================================
 * One table (Mops/s per T; latency at the lowest and highest T), every point
 * in detail, then the project's targets from the same run: (a) cache path
 * vs shared path at 2 threads (>= 1.8x), (b) cache path vs the core pool per
 * pair at 1 thread (<= 1.5x), (c) cache path vs DPDK's cached mempool at each
 * T of 1, 2 and 8 measured (>= 1x; c256 the target, c64 shown), (d) bulk of
 * 32 per object vs DPDK's bulk of 32 (<= 1x), (e) at the highest T,
 * lock-free (the better opool_mt mode, and the shared path alone) vs the
 * mutex and spinlock pools in throughput and p99.9, (f) the shared path vs
 * the other lock-free pools: the ck_stack pool at T = 2 and 8 (>= 2x) and
 * sharded_slab at T = 1, 2 and 8 (>= 1x). CSV: build/bench/mt.csv
 * (relative to the current directory; make bench-mt runs from the
 * repository root).
 */
#if defined(OPOOL_BENCH_HAVE_DPDK) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* DPDK's headers and pthread_{get,set}affinity_np */
#endif
#if !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif

#include "opool.h"
#include "opool_mt.h"

#include "bench_util.h"
#include "bench_child.h"
#include "bench_svg.h"

#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define BENCH_MT_TSC 1
#else
#define BENCH_MT_TSC 0
#endif

/* ---- which malloc this build measures ------------------------------------ */
/* BENCH_ALLOC (bench_child.h) selects it; bench/bench.cmake sets it per build. */

/* The allocator builds run the malloc subject only; the glibc one runs all. */
#define BENCH_MT_POOLS (BENCH_ALLOC == BENCH_ALLOC_GLIBC)

/* Concurrency Kit: header-only use, if present and the pop is ABA-safe here. */
#define BENCH_MT_HAVE_CK 0
#if !defined(BENCH_MT_NO_CK) && defined(__has_include)
#if __has_include(<ck_stack.h>)
#include <ck_stack.h>
#ifdef CK_F_STACK_POP_MPMC
#undef BENCH_MT_HAVE_CK
#define BENCH_MT_HAVE_CK 1
#endif
#endif
#endif

/* DPDK: bench/bench.cmake defines OPOOL_BENCH_HAVE_DPDK for the glibc build
 * when pkg-config finds libdpdk (and compiles this file with its flags). */
#if defined(OPOOL_BENCH_HAVE_DPDK) && BENCH_MT_POOLS
#define BENCH_MT_HAVE_DPDK 1
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mempool.h>
#include <rte_version.h>
#else
#define BENCH_MT_HAVE_DPDK 0
#endif

/* ==== options, results ===================================================== */

#define MAX_THREADS 64
#define WS 16u         /* live objects per thread */
#define CACHE_SIZE 64u /* opool_mt cache entries */
#define BULK 32u       /* objects per bulk call (the bulk32 subjects) */
#define MIN_CAPACITY 4096u

static struct {
    bool quick;
    bool child;    /* run by the glibc build: rows to stdout as text */
    bool no_peers; /* do not run the allocator builds */
    size_t size;
    int reps;
    const char *csv;
    const char *only;
    int threads[16];
    int nthreads;
} opt = {false, false, false, 64, 0, NULL, NULL, {1, 2, 4, 8}, 4};

/* In the order of the tables. */
enum {
    S_MT_CACHE,
    S_MT_BULK,
    S_MT_SHARED,
    S_DPDK,
    S_DPDK64,
    S_DPDK_BULK,
    S_DPDK_NC,
    S_MUTEX,
    S_SPIN,
    S_CK,
    S_SHARDED, /* another process: bench_mt_sharded_slab (run_sharded) */
    S_CORE,
    S_MALLOC,
    S_COUNT
};

static const char *const subj_key[S_COUNT] = {"cache",        "bulk",   "shared", "dpdk", "dpdk64",
                                              "dpdkbulk",     "dpdknc", "mutex",  "spin", "ck",
                                              "sharded_slab", "core",   "malloc"};
/* one string: clang-format then lays the names out in columns */
#define MALLOC_NAME "malloc (" BENCH_ALLOC_NAME ")"
static const char *const subj_name[S_COUNT] = {
    "opool_mt cache64", "opool_mt bulk32",    "opool_mt shared",     "rte_mempool c256",
    "rte_mempool c64",  "rte_mempool bulk32", "rte_mempool nocache", "mutex pool",
    "spinlock pool",    "ck_stack pool",      "sharded_slab",        "opool (core)",
    MALLOC_NAME};

static bool is_dpdk(int s) {
    return s == S_DPDK || s == S_DPDK64 || s == S_DPDK_BULK || s == S_DPDK_NC;
}
static bool is_bulk(int s) { return s == S_MT_BULK || s == S_DPDK_BULK; }

typedef struct lat_stats {
    uint64_t n;                        /* samples (0: not measured) */
    double p50, p99, p999, p9999, max; /* ns */
} lat_stats;

typedef struct mt_row {
    bench_row b; /* b.ns[]: ns per pair (all threads) per repetition; b.n = threads */
    char key[16];
    char variant[16];
    uint64_t pairs; /* per thread per repetition */
    double par;     /* median parallelism of the repetitions (see run_once) */
    lat_stats lat;
} mt_row;

#define MAX_ROWS 128
static mt_row g_rows[MAX_ROWS];
static int g_nrows;
static uint64_t g_t_start;
static bool g_tty;

#define fail(...) bench_fail("bench_mt", __VA_ARGS__)

static bool wanted(int s) { return bench_list_has(opt.only, subj_key[s]); }

static bool g_dpdk_ok; /* EAL started (dpdk_start) */

/* in this process: every subject but sharded_slab, whose rows a child sends */
static bool subject_available(int s) {
    if (s == S_MALLOC) return true;
    if (!BENCH_MT_POOLS || s == S_SHARDED) return false;
    if (s == S_CK) return BENCH_MT_HAVE_CK;
    if (is_dpdk(s)) return g_dpdk_ok;
    return true;
}

/* ==== the timer ============================================================== */

static double g_ns_per_tick = 1.0;
static uint64_t g_tick_overhead; /* median ticks of an empty timed region */
static uint64_t g_tick_step;     /* median step the counter makes */

BENCH_ALWAYS_INLINE uint64_t tick_begin(void) {
#if BENCH_MT_TSC
    _mm_lfence();
    uint64_t t = __rdtsc();
    _mm_lfence();
    return t;
#else
    return bench_now_ns();
#endif
}

BENCH_ALWAYS_INLINE uint64_t tick_end(void) {
#if BENCH_MT_TSC
    unsigned aux;
    uint64_t t = __rdtscp(&aux);
    _mm_lfence();
    return t;
#else
    return bench_now_ns();
#endif
}

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static void timer_calibrate(void) {
#if BENCH_MT_TSC
    struct timespec ts = {0, 50 * 1000 * 1000};
    uint64_t n0 = bench_now_ns(), c0 = tick_begin();
    nanosleep(&ts, NULL);
    uint64_t n1 = bench_now_ns(), c1 = tick_begin();
    if (c1 > c0) g_ns_per_tick = (double)(n1 - n0) / (double)(c1 - c0);
#endif
    enum { N = 100001 };
    uint32_t *s = bench_xalloc(N * sizeof(uint32_t));
    for (int i = 0; i < N; i++) {
        uint64_t a = tick_begin();
        uint64_t b = tick_end();
        s[i] = (uint32_t)(b - a);
    }
    qsort(s, N, sizeof(uint32_t), cmp_u32);
    g_tick_overhead = s[N / 2];
    free(s);
    /* Some counters advance in steps of many ticks (AMD under KVM: mostly
     * 26 ticks, 10 ns): the median step between two reads that differ. */
    s = bench_xalloc(N * sizeof(uint32_t));
    for (int i = 0; i < N; i++) {
#if BENCH_MT_TSC
        uint64_t a = __rdtsc(), b;
        while ((b = __rdtsc()) == a) {
        }
#else
        uint64_t a = bench_now_ns(), b;
        while ((b = bench_now_ns()) == a) {
        }
#endif
        s[i] = (uint32_t)(b - a);
    }
    qsort(s, N, sizeof(uint32_t), cmp_u32);
    g_tick_step = s[N / 2];
    free(s);
}

/* ==== the locked pools and the ck_stack pool ============================= */

static inline void cpu_pause(void) {
#if BENCH_MT_TSC
    _mm_pause();
#elif defined(__aarch64__) && (defined(__GNUC__) || defined(__clang__))
    __asm__ __volatile__("yield");
#endif
}

/* One struct for both lock kinds; a run uses one of them. The lock and the
 * stack top share a cache line, as in any such pool. */
typedef struct lk_pool {
    _Alignas(64) pthread_mutex_t mu;
    atomic_int spin; /* 0 free, 1 held */
    uint32_t top;    /* free indices at stack[0..top) */
    uint32_t cap;
    size_t stride;
    uint32_t *stack;
    char *obj;
} lk_pool;

static void lk_init(lk_pool *p, uint32_t cap, size_t stride) {
    memset(p, 0, sizeof *p);
    if (pthread_mutex_init(&p->mu, NULL) != 0) fail("pthread_mutex_init");
    atomic_init(&p->spin, 0);
    p->cap = cap;
    p->stride = stride;
    p->obj = bench_xalloc((size_t)cap * stride);
    p->stack = bench_xalloc((size_t)cap * sizeof(uint32_t));
    for (uint32_t j = 0; j < cap; j++) p->stack[j] = cap - 1 - j; /* pops give 0, 1, ... */
    p->top = cap;
}

static void lk_fini(lk_pool *p) {
    if (p->top != p->cap)
        fail("%s: %u of %u slots free after the run", "lock pool", p->top, p->cap);
    pthread_mutex_destroy(&p->mu);
    free(p->obj);
    free(p->stack);
}

BENCH_ALWAYS_INLINE char *lk_pop(lk_pool *p, uint32_t *ix) {
    if (p->top == 0) return NULL;
    uint32_t i = p->stack[--p->top];
    *ix = i;
    return p->obj + (size_t)i * p->stride;
}

BENCH_ALWAYS_INLINE char *mutex_alloc(lk_pool *p, uint32_t *ix) {
    pthread_mutex_lock(&p->mu);
    char *o = lk_pop(p, ix);
    pthread_mutex_unlock(&p->mu);
    return o;
}

BENCH_ALWAYS_INLINE void mutex_free(lk_pool *p, uint32_t ix) {
    pthread_mutex_lock(&p->mu);
    p->stack[p->top++] = ix;
    pthread_mutex_unlock(&p->mu);
}

BENCH_ALWAYS_INLINE void spin_lock(atomic_int *l) {
    for (;;) {
        if (!atomic_exchange_explicit(l, 1, memory_order_acquire)) return;
        while (atomic_load_explicit(l, memory_order_relaxed)) cpu_pause();
    }
}

BENCH_ALWAYS_INLINE void spin_unlock(atomic_int *l) {
    atomic_store_explicit(l, 0, memory_order_release);
}

BENCH_ALWAYS_INLINE char *spin_alloc(lk_pool *p, uint32_t *ix) {
    spin_lock(&p->spin);
    char *o = lk_pop(p, ix);
    spin_unlock(&p->spin);
    return o;
}

BENCH_ALWAYS_INLINE void spin_free(lk_pool *p, uint32_t ix) {
    spin_lock(&p->spin);
    p->stack[p->top++] = ix;
    spin_unlock(&p->spin);
}

#if BENCH_MT_HAVE_CK
typedef struct ck_pool {
    _Alignas(64) ck_stack_t st; /* the double-width CAS needs 16-byte alignment */
    char *obj;
    uint32_t cap;
} ck_pool;

static void ckp_init(ck_pool *p, uint32_t cap, size_t stride) {
    memset(p, 0, sizeof *p);
    p->obj = bench_xalloc((size_t)cap * stride);
    p->cap = cap;
    ck_stack_init(&p->st);
    for (uint32_t j = cap; j-- > 0;) /* 0 ends on top */
        ck_stack_push_mpmc(&p->st, (ck_stack_entry_t *)(void *)(p->obj + (size_t)j * stride));
}

static void ckp_fini(ck_pool *p) {
    uint32_t n = 0;
    while (ck_stack_pop_mpmc(&p->st) != NULL) n++;
    if (n != p->cap) fail("ck_stack pool: %u of %u objects free after the run", n, p->cap);
    free(p->obj);
}
#else
typedef struct ck_pool {
    int unused;
} ck_pool;
#endif

/* ==== DPDK's rte_mempool ===================================================== */

static char g_dpdk_note[200] = "not built (pkg-config found no libdpdk; Debian: libdpdk-dev)";

#if BENCH_MT_HAVE_DPDK
/* Start EAL once, quietly, in one process of its own: no hugepages, no PCI
 * scan, no shared config files, no telemetry socket, one lcore. EAL pins the
 * calling thread to lcore 0's CPU; the workers are created by this thread and
 * would inherit that, so its affinity is put back. */
static void dpdk_start(void) {
    cpu_set_t cpus;
    bool have_cpus = pthread_getaffinity_np(pthread_self(), sizeof cpus, &cpus) == 0;
    char *args[] = {(char *)"bench_mt",
                    (char *)"--no-huge",
                    (char *)"--no-pci",
                    (char *)"--no-shconf",
                    (char *)"--no-telemetry",
                    (char *)"-l",
                    (char *)"0",
                    (char *)"-m",
                    (char *)"256",
                    (char *)"--log-level=*:error"};
    int n = (int)(sizeof args / sizeof args[0]);
    if (rte_eal_init(n, args) < 0) {
        snprintf(g_dpdk_note, sizeof g_dpdk_note, "%s: rte_eal_init failed: %s (left out)",
                 rte_version(), rte_strerror(rte_errno));
        return;
    }
    if (have_cpus && pthread_setaffinity_np(pthread_self(), sizeof cpus, &cpus) != 0)
        fail("could not restore the CPU affinity after rte_eal_init");
    snprintf(g_dpdk_note, sizeof g_dpdk_note,
             "%s, EAL --no-huge --no-pci --no-shconf --no-telemetry -l 0; mempool ops %s",
             rte_version(), "ring_mp_mc (the default)");
    g_dpdk_ok = true;
}

static void dpdk_stop(void) {
    if (g_dpdk_ok) rte_eal_cleanup();
}

static unsigned dpdk_cache_size(int s) { return s == S_DPDK64 ? 64 : s == S_DPDK_NC ? 0 : 256; }

static struct rte_mempool *dpdk_create(int s, uint32_t cap) {
    static unsigned serial;
    char name[RTE_MEMPOOL_NAMESIZE];
    snprintf(name, sizeof name, "bench%u", serial++);
    /* n = cap - 1: DPDK's advice (2^k - 1 uses its memory best); flags 0: the
     * default ops (ring, multi-producer multi-consumer), objects spread */
    struct rte_mempool *mp =
        rte_mempool_create(name, cap - 1, (unsigned)opt.size, dpdk_cache_size(s), 0, NULL, NULL,
                           NULL, NULL, SOCKET_ID_ANY, 0);
    if (mp == NULL)
        fail("rte_mempool_create(%u objects, cache %u): %s", cap - 1, dpdk_cache_size(s),
             rte_strerror(rte_errno));
    return mp;
}

static void dpdk_destroy(int s, struct rte_mempool *mp) {
    /* every object back: in the ring or in a cache (avail counts both) */
    unsigned avail = rte_mempool_avail_count(mp);
    if (avail != mp->size)
        fail("%s: %u of %u objects free after the run", subj_name[s], avail, mp->size);
    rte_mempool_free(mp);
}
#else
struct rte_mempool;
static void dpdk_start(void) {}
static void dpdk_stop(void) {}
#endif

/* ==== one run: T threads, one subject ====================================== */

typedef union hnd {
    opool_handle oh;
    uint32_t ix;
    char *p;
} hnd;

typedef struct subj_ops { /* what a worker's loop uses; copied into locals */
    opool_mt *mt;
    opool_mt_cache *cache;
    opool *core;
    lk_pool *lk;
    ck_pool *ck;
    struct rte_mempool *mp;
    size_t size;
} subj_ops;

typedef struct run_ctx run_ctx;

/* Latency histogram in ticks: exact below 64, then 32 buckets per power of two
 * (3% wide) up to 2^41 ticks; the largest sample is kept exactly. */
#define LAT_BUCKETS (64 + 35 * 32)
typedef struct lat_hist {
    uint64_t count[LAT_BUCKETS];
    uint64_t max;
} lat_hist;

BENCH_ALWAYS_INLINE unsigned lat_bucket(uint64_t v) {
    if (v < 64) return (unsigned)v;
    unsigned e = 6;
#if defined(__GNUC__) || defined(__clang__)
    e = 63u - (unsigned)__builtin_clzll(v);
#else
    while (e < 63 && (v >> (e + 1)) != 0) e++;
#endif
    if (e > 40) return LAT_BUCKETS - 1;
    return 64 + (e - 6) * 32 + (unsigned)((v >> (e - 5)) & 31u);
}

/* the middle of bucket b, in ticks */
static double lat_bucket_mid(unsigned b) {
    if (b < 64) return b;
    unsigned e = 6 + (b - 64) / 32, m = (b - 64) % 32;
    double lo = (double)((uint64_t)(32 + m) << (e - 5));
    return lo + (double)((uint64_t)1 << (e - 5)) / 2;
}

BENCH_ALWAYS_INLINE void lat_record(lat_hist *h, uint64_t d) {
    h->count[lat_bucket(d)]++;
    if (d > h->max) h->max = d;
}

typedef struct worker {
    _Alignas(64) run_ctx *rc;
    int idx;
    uint64_t seed;
    uint64_t t_end;
    uint64_t cpu_ns; /* this thread's CPU time in the timed region */
    uint64_t sum;
    uint64_t bad;
    lat_hist *lat; /* a latency run: every alloc and free recorded here */
} worker;

struct run_ctx {
    int subj;
    int nthreads;
    bool lat;
    uint64_t pairs;
    subj_ops ops;
    _Alignas(64) atomic_uint arrived;
    atomic_int go;
    uint64_t t_start;
    worker w[MAX_THREADS];
};

static run_ctx g_rc;

/* Totals over every opool_mt this process created. */
static struct { uint64_t pools, sleeps, wake_calls, steals, failed_allocs, rejected; } g_mt_stats;

static uint64_t thread_cpu_ns(void) {
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void start_barrier(run_ctx *rc) {
    unsigned n = atomic_fetch_add_explicit(&rc->arrived, 1, memory_order_acq_rel) + 1;
    if (n == (unsigned)rc->nthreads) {
        rc->t_start = bench_now_ns();
        atomic_store_explicit(&rc->go, 1, memory_order_release);
    } else {
        while (!atomic_load_explicit(&rc->go, memory_order_acquire)) sched_yield();
    }
}

BENCH_ALWAYS_INLINE char *subj_alloc(const int s, const subj_ops *o, hnd *h) {
    switch (s) {
    case S_MT_CACHE:
        return opool_mt_cache_alloc(o->cache, &h->oh);
    case S_MT_SHARED:
        return opool_mt_alloc(o->mt, &h->oh);
    case S_MUTEX:
        return mutex_alloc(o->lk, &h->ix);
    case S_SPIN:
        return spin_alloc(o->lk, &h->ix);
#if BENCH_MT_HAVE_CK
    case S_CK:
        return h->p = (char *)(void *)ck_stack_pop_mpmc(&o->ck->st);
#endif
    case S_CORE:
        return opool_alloc(o->core, &h->oh);
    case S_MALLOC:
        return h->p = malloc(o->size);
#if BENCH_MT_HAVE_DPDK
    case S_DPDK:
    case S_DPDK64:
    case S_DPDK_NC: {
        void *obj;
        return h->p = rte_mempool_get(o->mp, &obj) == 0 ? (char *)obj : NULL;
    }
#endif
    default:
        return NULL;
    }
}

/* false: the subject rejected the free */
BENCH_ALWAYS_INLINE bool subj_free(const int s, const subj_ops *o, hnd h) {
    switch (s) {
    case S_MT_CACHE:
        return opool_mt_cache_free(o->cache, h.oh) == OPOOL_OK;
    case S_MT_SHARED:
        return opool_mt_free(o->mt, h.oh) == OPOOL_OK;
    case S_MUTEX:
        mutex_free(o->lk, h.ix);
        return true;
    case S_SPIN:
        spin_free(o->lk, h.ix);
        return true;
#if BENCH_MT_HAVE_CK
    case S_CK:
        ck_stack_push_mpmc(&o->ck->st, (ck_stack_entry_t *)(void *)h.p);
        return true;
#endif
    case S_CORE:
        return opool_free(o->core, h.oh) == OPOOL_OK;
    case S_MALLOC:
        free(h.p);
        return true;
#if BENCH_MT_HAVE_DPDK
    case S_DPDK:
    case S_DPDK64:
    case S_DPDK_NC:
        rte_mempool_put(o->mp, h.p);
        return true;
#endif
    default:
        return false;
    }
}

/* The bulk subjects: BULK objects to p[] (and their handles to oh[]); false
 * if the subject could not give them all. */
BENCH_ALWAYS_INLINE bool subj_alloc_bulk(const int s, const subj_ops *o, opool_handle *oh,
                                         void **p) {
    switch (s) {
    case S_MT_BULK:
        return opool_mt_cache_alloc_bulk(o->cache, oh, p, BULK) == BULK;
#if BENCH_MT_HAVE_DPDK
    case S_DPDK_BULK:
        return rte_mempool_get_bulk(o->mp, p, BULK) == 0;
#endif
    default:
        return false;
    }
}

/* false: the subject rejected a free */
BENCH_ALWAYS_INLINE bool subj_free_bulk(const int s, const subj_ops *o, const opool_handle *oh,
                                        void **p) {
    (void)p; /* DPDK's put takes the pointers; opool_mt's free the handles */
    switch (s) {
    case S_MT_BULK:
        return opool_mt_cache_free_bulk(o->cache, oh, BULK) == BULK;
#if BENCH_MT_HAVE_DPDK
    case S_DPDK_BULK:
        rte_mempool_put_bulk(o->mp, p, BULK);
        return true;
#endif
    default:
        return false;
    }
}

/* What a worker thread does before its first and after its last call: an
 * opool_mt cache of its own; DPDK: an lcore id, and with it the mempool's
 * cache for that lcore. */
static void thread_enter(int s, subj_ops *o) {
    if (s == S_MT_CACHE || s == S_MT_BULK) {
        o->cache = opool_mt_cache_create(o->mt, CACHE_SIZE);
        if (o->cache == NULL) fail("opool_mt_cache_create(%u) returned NULL", CACHE_SIZE);
    }
#if BENCH_MT_HAVE_DPDK
    if (is_dpdk(s)) {
        if (rte_thread_register() != 0) fail("rte_thread_register: %s", rte_strerror(rte_errno));
        if (s != S_DPDK_NC && rte_mempool_default_cache(o->mp, rte_lcore_id()) == NULL)
            fail("%s: the registered thread (lcore %u) has no cache", subj_name[s], rte_lcore_id());
    }
#endif
}

static void thread_leave(int s, subj_ops *o) {
    if (s == S_MT_CACHE || s == S_MT_BULK) opool_mt_cache_destroy(o->cache);
#if BENCH_MT_HAVE_DPDK
    if (is_dpdk(s)) {
        /* its lcore's cache keeps objects; the teardown counts them as free */
        rte_thread_unregister();
    }
#endif
}

/* The thread body, specialised per subject and mode (s and lat are constants
 * in every caller). Tags: thread index in the top byte, step below. */
BENCH_ALWAYS_INLINE void worker_body(worker *w, const int s, const bool lat) {
    run_ctx *rc = w->rc;
    subj_ops o = rc->ops;
    const size_t last = o.size / 8 - 1;
    const uint64_t id = (uint64_t)w->idx << 56;
    hnd H[WS];
    uint64_t *P[WS];
    uint64_t tag[WS];
    uint64_t seed = w->seed, sum = 0, bad = 0;
    lat_hist *L = w->lat;

    thread_enter(s, &o);
    for (uint32_t k = 0; k < WS; k++) {
        P[k] = (uint64_t *)(void *)subj_alloc(s, &o, &H[k]);
        if (P[k] == NULL) fail("%s: alloc failed while setting up", subj_name[s]);
        tag[k] = id | k;
        P[k][0] = tag[k];
        P[k][last] = ~tag[k];
    }

    start_barrier(rc);
    const uint64_t cpu0 = thread_cpu_ns();
    const uint64_t pairs = rc->pairs;
    for (uint64_t it = 0; it < pairs; it++) {
        uint32_t k = bench_below(&seed, WS);
        uint64_t *p = P[k], t = tag[k];
        bad += (p[0] != t) | (p[last] != ~t);
        sum += p[0];
        if (lat) {
            uint64_t a = tick_begin();
            bool ok = subj_free(s, &o, H[k]);
            uint64_t b = tick_end();
            lat_record(L, b - a);
            bad += !ok;
            a = tick_begin();
            p = (uint64_t *)(void *)subj_alloc(s, &o, &H[k]);
            b = tick_end();
            lat_record(L, b - a);
        } else {
            bad += !subj_free(s, &o, H[k]);
            p = (uint64_t *)(void *)subj_alloc(s, &o, &H[k]);
        }
        if (p == NULL)
            fail("%s, %d threads: alloc failed (pool too small?)", subj_name[s], rc->nthreads);
        t = id | (it + WS);
        p[0] = t;
        p[last] = ~t;
        P[k] = p;
        tag[k] = t;
    }
    w->t_end = bench_now_ns();
    w->cpu_ns = thread_cpu_ns() - cpu0;

    for (uint32_t k = 0; k < WS; k++) {
        bad += (P[k][0] != tag[k]) | (P[k][last] != ~tag[k]);
        sum += P[k][0];
        bad += !subj_free(s, &o, H[k]);
    }
    thread_leave(s, &o);
    w->sum = sum;
    w->bad = bad;
}

/* The bulk workload (see the top): two live batches, one replaced per step;
 * pairs counts objects. No latency run. */
BENCH_ALWAYS_INLINE void bulk_body(worker *w, const int s) {
    run_ctx *rc = w->rc;
    subj_ops o = rc->ops;
    const size_t last = o.size / 8 - 1;
    const uint64_t id = (uint64_t)w->idx << 56;
    opool_handle H[2][BULK];
    void *P[2][BULK];
    uint64_t tag[2];
    uint64_t sum = 0, bad = 0;

    thread_enter(s, &o);
    for (uint32_t j = 0; j < 2; j++) {
        if (!subj_alloc_bulk(s, &o, H[j], P[j]))
            fail("%s: bulk alloc failed while setting up", subj_name[s]);
        tag[j] = id | j;
        for (uint32_t k = 0; k < BULK; k++) {
            uint64_t *q = P[j][k];
            q[0] = tag[j] + k;
            q[last] = ~(tag[j] + k);
        }
    }

    start_barrier(rc);
    const uint64_t cpu0 = thread_cpu_ns();
    const uint64_t steps = rc->pairs / BULK;
    for (uint64_t it = 0; it < steps; it++) {
        uint32_t j = (uint32_t)it & 1;
        uint64_t t = tag[j];
        for (uint32_t k = 0; k < BULK; k++) {
            const uint64_t *q = P[j][k];
            bad += (q[0] != t + k) | (q[last] != ~(t + k));
            sum += q[0];
        }
        bad += !subj_free_bulk(s, &o, H[j], P[j]);
        if (!subj_alloc_bulk(s, &o, H[j], P[j]))
            fail("%s, %d threads: bulk alloc failed (pool too small?)", subj_name[s], rc->nthreads);
        t = id | ((it + 2) * BULK);
        for (uint32_t k = 0; k < BULK; k++) {
            uint64_t *q = P[j][k];
            q[0] = t + k;
            q[last] = ~(t + k);
        }
        tag[j] = t;
    }
    w->t_end = bench_now_ns();
    w->cpu_ns = thread_cpu_ns() - cpu0;

    for (uint32_t j = 0; j < 2; j++) {
        for (uint32_t k = 0; k < BULK; k++) {
            const uint64_t *q = P[j][k];
            bad += (q[0] != tag[j] + k) | (q[last] != ~(tag[j] + k));
            sum += q[0];
        }
        bad += !subj_free_bulk(s, &o, H[j], P[j]);
    }
    thread_leave(s, &o);
    w->sum = sum;
    w->bad = bad;
}

#define BENCH_MT_LOOPS(NAME, S)                                                                    \
    static BENCH_NOINLINE void NAME##_run(worker *w) { worker_body(w, S, false); }                 \
    static BENCH_NOINLINE void NAME##_lat(worker *w) { worker_body(w, S, true); }
#define BENCH_MT_BULK_LOOP(NAME, S)                                                                \
    static BENCH_NOINLINE void NAME##_run(worker *w) { bulk_body(w, S); }                          \
    static BENCH_NOINLINE void NAME##_lat(worker *w) { bulk_body(w, S); }
BENCH_MT_LOOPS(mt_cache, S_MT_CACHE)
BENCH_MT_BULK_LOOP(mt_bulk, S_MT_BULK)
BENCH_MT_LOOPS(mt_shared, S_MT_SHARED)
BENCH_MT_LOOPS(dpdk, S_DPDK)
BENCH_MT_LOOPS(dpdk64, S_DPDK64)
BENCH_MT_BULK_LOOP(dpdk_bulk, S_DPDK_BULK)
BENCH_MT_LOOPS(dpdk_nc, S_DPDK_NC)
BENCH_MT_LOOPS(mutex, S_MUTEX)
BENCH_MT_LOOPS(spin, S_SPIN)
BENCH_MT_LOOPS(ckp, S_CK)
BENCH_MT_LOOPS(core, S_CORE)
BENCH_MT_LOOPS(mall, S_MALLOC)

/* sharded_slab's entry, before S_CORE, is left empty: its rows come from a child */
static void (*const g_loops[S_COUNT][2])(worker *) = {
    {mt_cache_run, mt_cache_lat}, {mt_bulk_run, mt_bulk_lat},      {mt_shared_run, mt_shared_lat},
    {dpdk_run, dpdk_lat},         {dpdk64_run, dpdk64_lat},        {dpdk_bulk_run, dpdk_bulk_lat},
    {dpdk_nc_run, dpdk_nc_lat},   {mutex_run, mutex_lat},          {spin_run, spin_lat},
    {ckp_run, ckp_lat},           [S_CORE] = {core_run, core_lat}, {mall_run, mall_lat}};

static void *worker_main(void *arg) {
    worker *w = arg;
    g_loops[w->rc->subj][w->rc->lat](w);
    return NULL;
}

/* Twice what the threads can hold at once: their live objects and a full
 * cache each. opool_mt's caches hold at most 64; a bulk thread keeps two
 * batches live. DPDK's cache of c holds up to 1.5c after a put and c + n
 * after a refill for a get of n; it steals nothing from other lcores, so
 * without this room its gets could fail with objects parked elsewhere. */
static uint32_t pool_capacity(int s, int nthreads) {
    uint32_t live = is_bulk(s) ? 2 * BULK : WS, cached = CACHE_SIZE;
#if BENCH_MT_HAVE_DPDK
    if (is_dpdk(s)) cached = dpdk_cache_size(s) * 3 / 2 + BULK;
#endif
    uint32_t c = (uint32_t)nthreads * (live + cached) * 2;
    return c > MIN_CAPACITY ? c : MIN_CAPACITY;
}

static void subj_setup(int s, run_ctx *rc, uint32_t cap) {
    static lk_pool lk;
    static ck_pool ck;
    memset(&rc->ops, 0, sizeof rc->ops);
    rc->ops.size = opt.size;
    opool_desc d;
    memset(&d, 0, sizeof d);
    d.object_size = opt.size;
    d.capacity = cap;
    d.on_full = OPOOL_FULL_FAIL;
    opool_status st;
    switch (s) {
    case S_MT_CACHE:
    case S_MT_BULK:
    case S_MT_SHARED:
        if ((st = opool_mt_create(&rc->ops.mt, &d)) != OPOOL_OK)
            fail("opool_mt_create(capacity %u): %s", cap, opool_status_str(st));
        break;
    case S_CORE:
        if ((st = opool_create(&rc->ops.core, &d)) != OPOOL_OK)
            fail("opool_create(capacity %u): %s", cap, opool_status_str(st));
        break;
    case S_MUTEX:
    case S_SPIN:
        lk_init(&lk, cap, opt.size);
        rc->ops.lk = &lk;
        break;
    case S_CK:
#if BENCH_MT_HAVE_CK
        ckp_init(&ck, cap, opt.size);
#endif
        rc->ops.ck = &ck;
        break;
#if BENCH_MT_HAVE_DPDK
    case S_DPDK:
    case S_DPDK64:
    case S_DPDK_BULK:
    case S_DPDK_NC:
        rc->ops.mp = dpdk_create(s, cap);
        break;
#endif
    default:
        break;
    }
}

static void subj_teardown(int s, run_ctx *rc, uint32_t cap) {
    switch (s) {
    case S_MT_CACHE:
    case S_MT_BULK:
    case S_MT_SHARED: {
        opool_mt_stats st;
        opool_mt_get_stats(rc->ops.mt, &st);
        if (st.count != 0 || st.capacity != cap || st.caches != 0)
            fail("%s: after the run count %u, capacity %u (of %u), caches %u", subj_name[s],
                 st.count, st.capacity, cap, st.caches);
        g_mt_stats.pools++;
        g_mt_stats.sleeps += st.sleeps;
        g_mt_stats.wake_calls += st.wake_calls;
        g_mt_stats.steals += st.steals;
        g_mt_stats.failed_allocs += st.failed_allocs;
        g_mt_stats.rejected += st.rejected_handles;
        opool_mt_destroy(rc->ops.mt);
        break;
    }
    case S_CORE:
        if (opool_count(rc->ops.core) != 0) fail("opool (core): objects left after the run");
        opool_destroy(rc->ops.core);
        break;
    case S_MUTEX:
    case S_SPIN:
        lk_fini(rc->ops.lk);
        break;
    case S_CK:
#if BENCH_MT_HAVE_CK
        ckp_fini(rc->ops.ck);
#endif
        break;
#if BENCH_MT_HAVE_DPDK
    case S_DPDK:
    case S_DPDK64:
    case S_DPDK_BULK:
    case S_DPDK_NC:
        dpdk_destroy(s, rc->ops.mp);
        break;
#endif
    default:
        break;
    }
}

/* Parallelism of the last run: the CPU time its threads got in the timed
 * region over its wall time. About min(T, free cores) on an idle machine; well
 * below that, another tenant held a core and the threads took turns. */
static double g_last_par;

/* One run; returns wall ns from the barrier's release to the last thread's
 * end. lat_buf: a latency run, one histogram per thread (zeroed here). */
static uint64_t run_once(int s, int nthreads, uint64_t pairs, int rep, lat_hist *lat_buf) {
    run_ctx *rc = &g_rc;
    uint32_t cap = pool_capacity(s, nthreads);
    subj_setup(s, rc, cap);
    rc->subj = s;
    rc->nthreads = nthreads;
    rc->lat = lat_buf != NULL;
    rc->pairs = pairs;
    atomic_store(&rc->arrived, 0u);
    atomic_store(&rc->go, 0);
    pthread_t th[MAX_THREADS];
    for (int i = 0; i < nthreads; i++) {
        worker *w = &rc->w[i];
        memset(w, 0, sizeof *w);
        w->rc = rc;
        w->idx = i;
        w->seed = bench_seed(7, (uint32_t)nthreads, rep, (uint32_t)i);
        w->lat = lat_buf ? &lat_buf[i] : NULL;
        if (w->lat) memset(w->lat, 0, sizeof *w->lat);
    }
    for (int i = 0; i < nthreads; i++)
        if (pthread_create(&th[i], NULL, worker_main, &rc->w[i]) != 0)
            fail("pthread_create (thread %d of %d)", i + 1, nthreads);
    uint64_t end = 0, sum = 0, bad = 0, cpu = 0;
    for (int i = 0; i < nthreads; i++) {
        pthread_join(th[i], NULL);
        if (rc->w[i].t_end > end) end = rc->w[i].t_end;
        cpu += rc->w[i].cpu_ns;
        sum += rc->w[i].sum;
        bad += rc->w[i].bad;
    }
    if (bad)
        fail("%s, %d threads: %" PRIu64 " objects read back wrong or frees rejected: the pool "
             "gave one object to two owners",
             subj_name[s], nthreads, bad);
    bench_sink += sum;
    subj_teardown(s, rc, cap);
    g_last_par = end > rc->t_start ? (double)cpu / (double)(end - rc->t_start) : 0;
    return end - rc->t_start;
}

/* ==== measurement of one point: subject x threads =========================== */

/* Pairs per thread for a repetition of about target_ns. */
static uint64_t calibrate_pairs(int s, int nthreads) {
    const double target_ns = opt.quick ? 30e6 : 250e6;
    const uint64_t floor_ns = opt.quick ? 1000000 : 5000000;
    uint64_t p = opt.quick ? 2000 : 10000, wall = 0;
    run_once(s, nthreads, p, -1, NULL); /* warm: code, thread stacks, malloc arenas */
    for (;;) {
        wall = run_once(s, nthreads, p, -1, NULL);
        if (wall >= floor_ns || p >= 100000000u) break;
        p *= 4;
    }
    /* the faster of two: one preemption must not shrink every repetition */
    uint64_t again = run_once(s, nthreads, p, -1, NULL);
    if (again < wall) wall = again;
    double pairs = (double)p * target_ns / (double)(wall ? wall : 1);
    if (pairs < 1000) pairs = 1000;
    if (pairs > 2e8) pairs = 2e8;
    return (uint64_t)pairs / 1000 * 1000;
}

static double ticks_to_ns(double t) {
    double o = (double)g_tick_overhead;
    return t > o ? (t - o) * g_ns_per_tick : 0.0;
}

/* nearest-rank percentile q of the merged histogram, in ns */
static double lat_pct(const lat_hist *h, uint64_t n, double q) {
    uint64_t rank = (uint64_t)(q * (double)n + 0.999999), seen = 0;
    if (rank < 1) rank = 1;
    for (unsigned b = 0; b < LAT_BUCKETS; b++) {
        seen += h->count[b];
        if (seen >= rank) {
            double t = lat_bucket_mid(b);
            return ticks_to_ns(t < (double)h->max ? t : (double)h->max);
        }
    }
    return ticks_to_ns((double)h->max);
}

/* One run timing every call, as long as a throughput repetition (time,
 * not a count, decides how many preemptions land in it). */
static void measure_latency(int s, int nthreads, uint64_t pairs, lat_stats *out) {
    static lat_hist hist[MAX_THREADS], all;
    run_once(s, nthreads, pairs / 20 + 1, 0, hist); /* warm-up */
    run_once(s, nthreads, pairs, 1, hist);
    memset(&all, 0, sizeof all);
    for (int i = 0; i < nthreads; i++) {
        for (unsigned b = 0; b < LAT_BUCKETS; b++) all.count[b] += hist[i].count[b];
        if (hist[i].max > all.max) all.max = hist[i].max;
    }
    uint64_t n = 0;
    for (unsigned b = 0; b < LAT_BUCKETS; b++) n += all.count[b];
    out->n = n;
    out->p50 = lat_pct(&all, n, 0.50);
    out->p99 = lat_pct(&all, n, 0.99);
    out->p999 = lat_pct(&all, n, 0.999);
    out->p9999 = lat_pct(&all, n, 0.9999);
    out->max = ticks_to_ns((double)all.max);
}

static mt_row *new_row(int s, const char *variant, int nthreads) {
    if (g_nrows >= MAX_ROWS) fail("too many result rows");
    mt_row *r = &g_rows[g_nrows++];
    memset(r, 0, sizeof *r);
    snprintf(r->b.workload, sizeof r->b.workload, "alloc+free pairs");
    snprintf(r->b.subject, sizeof r->b.subject, "%s", subj_name[s]);
    snprintf(r->key, sizeof r->key, "%s", subj_key[s]);
    snprintf(r->variant, sizeof r->variant, "%s", variant);
    r->b.n = (uint32_t)nthreads;
    r->b.reps = opt.reps;
    return r;
}

/* Every wanted subject at nthreads: calibrate, interleaved repetitions, then
 * one latency run each. */
static void run_threads(int nthreads) {
    int subj[S_COUNT], ns = 0;
    for (int s = 0; s < S_COUNT; s++) {
        if (!subject_available(s) || !wanted(s)) continue;
        if (s == S_CORE && nthreads != 1) continue; /* single-threaded pool */
        /* DPDK's default ring (MP/MC) makes every enqueue and dequeue wait for
         * the threads ahead of it to finish theirs: with more threads than
         * cores, one preempted mid-call stalls the others for a time slice,
         * and a run takes minutes. Its cached subjects rarely reach the ring.
         * On a loaded machine even 2 threads on 2 cores get preempted mid-call
         * (a repetition of --quick took 20-50 s): --quick runs it alone. */
        if (s == S_DPDK_NC &&
            (nthreads > sysconf(_SC_NPROCESSORS_ONLN) || (opt.quick && nthreads > 1)))
            continue;
        subj[ns++] = s;
    }
    if (ns == 0) return;
    uint64_t t0 = bench_now_ns();
    mt_row *rows[S_COUNT];
    for (int j = 0; j < ns; j++) {
        rows[j] = new_row(subj[j], BENCH_ALLOC_NAME, nthreads);
        rows[j]->pairs = calibrate_pairs(subj[j], nthreads);
        if (is_bulk(subj[j])) rows[j]->pairs = rows[j]->pairs / BULK * BULK; /* whole steps */
        rows[j]->b.ops = rows[j]->pairs * (uint64_t)nthreads;
    }
    double par[S_COUNT][BENCH_MAX_REPS];
    for (int rep = 0; rep <= opt.reps; rep++) {
        for (int i = 0; i < ns; i++) {
            int j = (i + rep) % ns;
            uint64_t wall = run_once(subj[j], nthreads, rows[j]->pairs, rep, NULL);
            if (rep == 0) continue;
            rows[j]->b.ns[rep - 1] = (double)wall / (double)rows[j]->b.ops;
            par[j][rep - 1] = g_last_par;
        }
        if (g_tty)
            fprintf(stderr, "\r  %2d threads: %s %d/%d (%.1f s)   ", nthreads,
                    rep == 0 ? "warm-up" : "rep", rep, opt.reps,
                    (double)(bench_now_ns() - t0) / 1e9);
    }
    for (int j = 0; j < ns; j++) {
        bench_row_finish(&rows[j]->b);
        qsort(par[j], (size_t)opt.reps, sizeof(double), bench_cmp_double);
        rows[j]->par = par[j][opt.reps / 2];
        if (is_bulk(subj[j])) continue; /* no latency run: a call is BULK objects */
        if (g_tty)
            fprintf(stderr, "\r  %2d threads: latency run, %s          ", nthreads,
                    subj_name[subj[j]]);
        /* timing every call about doubles a pair's cost: half the pairs */
        measure_latency(subj[j], nthreads, rows[j]->pairs / 2 + 1, &rows[j]->lat);
    }
    fprintf(stderr, "%s  %2d threads (%s): %d subjects, %d reps, done in %.1f s (total %.1f s)\n",
            g_tty ? "\r" : "", nthreads, BENCH_ALLOC_NAME, ns, opt.reps,
            (double)(bench_now_ns() - t0) / 1e9, (double)(bench_now_ns() - g_t_start) / 1e9);
}

/* ==== the allocator builds (peers) ========================================== */

static char g_info[8][200]; /* allocator lines for the header */
static int g_ninfo;

static void add_info(const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

static void add_info(const char *fmt, ...) {
    if (g_ninfo >= 8) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_info[g_ninfo++], sizeof g_info[0], fmt, ap);
    va_end(ap);
}

/* The fields of an mt_row beyond bench_row's, as a child sends them
 * (bench_child.h's "extra"): key, variant, pairs, latency n, p50, p99, p99.9,
 * p99.99, max, parallelism. */
#define MT_EXTRA 10

static void child_emit(void) {
    char info[200];
    bench_alloc_describe(info, sizeof info);
    printf("INFO\t%s\n", info);
    for (int i = 0; i < g_nrows; i++) {
        const mt_row *r = &g_rows[i];
        char extra[320];
        snprintf(extra, sizeof extra,
                 "%s\t%s\t%" PRIu64 "\t%" PRIu64 "\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.3f", r->key,
                 r->variant, r->pairs, r->lat.n, r->lat.p50, r->lat.p99, r->lat.p999, r->lat.p9999,
                 r->lat.max, r->par);
        bench_child_put_row(stdout, &r->b, extra);
    }
}

static int parse_child_row(void *ctx, char *line) {
    (void)ctx;
    if (g_nrows >= MAX_ROWS) fail("too many result rows");
    mt_row *r = &g_rows[g_nrows];
    memset(r, 0, sizeof *r);
    char *x[BENCH_CHILD_MAX_EXTRA];
    if (bench_child_parse_row(line, &r->b, x) != MT_EXTRA) {
        fprintf(stderr, "bench_mt: a child sent a malformed row\n");
        return -1;
    }
    snprintf(r->key, sizeof r->key, "%s", x[0]);
    snprintf(r->variant, sizeof r->variant, "%s", x[1]);
    r->pairs = strtoull(x[2], NULL, 10);
    r->lat.n = strtoull(x[3], NULL, 10);
    r->lat.p50 = strtod(x[4], NULL);
    r->lat.p99 = strtod(x[5], NULL);
    r->lat.p999 = strtod(x[6], NULL);
    r->lat.p9999 = strtod(x[7], NULL);
    r->lat.max = strtod(x[8], NULL);
    r->par = strtod(x[9], NULL);
    g_nrows++;
    return 0;
}

/* Runs the sibling program bench_mt_<name> in dir with this run's workload
 * options, its rows merged into g_rows; its INFO text to info. Returns
 * bench_child_run's result; path gets the program's path. */
static int run_child(const char *dir, const char *name, char *path, size_t path_cap, char *info,
                     size_t info_cap) {
    snprintf(path, path_cap, "%s/bench_mt_%s", dir, name);
    char reps[16], size[16], threads[80] = "";
    snprintf(reps, sizeof reps, "%d", opt.reps);
    snprintf(size, sizeof size, "%zu", opt.size);
    for (int i = 0; i < opt.nthreads; i++) {
        size_t l = strlen(threads);
        snprintf(threads + l, sizeof threads - l, "%s%d", i ? "," : "", opt.threads[i]);
    }
    char *argv[12];
    int a = 0;
    argv[a++] = path;
    argv[a++] = (char *)"--child";
    argv[a++] = (char *)"--reps";
    argv[a++] = reps;
    argv[a++] = (char *)"--size";
    argv[a++] = size;
    argv[a++] = (char *)"--threads";
    argv[a++] = threads;
    if (opt.quick) argv[a++] = (char *)"--quick";
    argv[a] = NULL;
    return bench_child_run("bench_mt", path, argv, parse_child_row, NULL, info, info_cap);
}

static void run_peer(const char *dir, const char *name) {
    char path[4200], info[200]; /* dir is at most 4095 characters */
    int rc = run_child(dir, name, path, sizeof path, info, sizeof info);
    if (rc == BENCH_CHILD_MISSING)
        add_info("%-9s skipped: no %s (lib%s not found when configured)", name, path, name);
    else if (rc != BENCH_CHILD_OK)
        fail("%s failed", path);
    else
        add_info("%-9s %s (bench_mt_%s)", name, info, name);
}

/* What the header says of sharded_slab: the child's INFO, or why it is missing. */
static char g_sharded_note[240];

static void run_sharded(const char *dir) {
    char path[4200], info[200];
    int rc = run_child(dir, "sharded_slab", path, sizeof path, info, sizeof info);
    if (rc == BENCH_CHILD_MISSING)
        snprintf(g_sharded_note, sizeof g_sharded_note,
                 "sharded_slab skipped: no bench_mt_sharded_slab beside bench_mt (cargo or "
                 "librust-sharded-slab-dev missing when configured)");
    else if (rc != BENCH_CHILD_OK)
        fail("%s failed", path);
    else
        snprintf(g_sharded_note, sizeof g_sharded_note, "%s (bench_mt_sharded_slab)", info);
}

/* ==== output ================================================================ */

static const mt_row *find_row(const char *key, const char *variant, int nthreads) {
    for (int i = 0; i < g_nrows; i++)
        if (strcmp(g_rows[i].key, key) == 0 &&
            (variant == NULL || strcmp(g_rows[i].variant, variant) == 0) &&
            g_rows[i].b.n == (uint32_t)nthreads)
            return &g_rows[i];
    return NULL;
}

static double mops(const mt_row *r) { return r ? 1000.0 / r->b.median : -1; }

/* ns with a unit, at most 8 characters; below the timer's step: "<step" */
static void fmt_ns(char *buf, size_t cap, double v) {
    double step = (double)g_tick_step * g_ns_per_tick;
    if (v < 0)
        snprintf(buf, cap, "-");
    else if (v < step && step >= 2)
        snprintf(buf, cap, "<%.0f", step);
    else if (v < 10000)
        snprintf(buf, cap, "%.0f", v);
    else if (v < 1e6)
        snprintf(buf, cap, "%.1fus", v / 1e3);
    else
        snprintf(buf, cap, "%.2fms", v / 1e6);
}

static char g_load_start[64];

static int max_threads(void) {
    int m = 0;
    for (int i = 0; i < opt.nthreads; i++)
        if (opt.threads[i] > m) m = opt.threads[i];
    return m;
}

static void print_header(const bench_machine *m, const char *mode) {
    char load_end[64];
    bench_read_load(load_end, sizeof load_end);
    printf("bench_mt -- %s\n", mode);
    printf("  cpu:        %s (%ld online)\n", m->cpu, m->nproc);
    printf("  compiler:   %s\n", m->compiler);
#if BENCH_MT_HAVE_DPDK
    printf("  flags:      %s %s (DPDK's, for every subject)\n", m->flags, OPOOL_BENCH_DPDK_FLAGS);
#else
    printf("  flags:      %s\n", m->flags);
#endif
    printf("  loadavg:    %s at start, %s at end (other tenants skew the figures)\n", g_load_start,
           load_end);
    printf("  timer:      %s,\n"
           "              1 tick = %.4f ns, median step %.1f ns; the timer's own median cost\n"
           "              (%.1f ns) is subtracted from every latency sample\n",
           BENCH_MT_TSC ? "rdtsc/rdtscp + lfence, calibrated over 50 ms against CLOCK_MONOTONIC"
                        : "clock_gettime(CLOCK_MONOTONIC)",
           g_ns_per_tick, (double)g_tick_step * g_ns_per_tick,
           (double)g_tick_overhead * g_ns_per_tick);
    for (int i = 0; i < g_ninfo; i++)
        printf("  %s %s\n", i ? "           " : "allocators:", g_info[i]);
    if (!BENCH_MT_HAVE_CK) printf("  ck_stack:   not built (no <ck_stack.h> or no 2-word CAS)\n");
    if (BENCH_MT_POOLS) printf("  DPDK:       %s\n", g_dpdk_note);
    if (g_sharded_note[0]) printf("  Rust:       %s\n", g_sharded_note);
    printf("  workload:   T threads share one pool; each keeps %u live objects and, per step,\n"
           "              frees a random one and allocates its replacement (one pair); objects\n"
           "              of %zu bytes, first and last word written and checked; pools of\n"
           "              max(4096, T*(%u+%u)*2) objects (DPDK's: room for its caches);\n"
           "              opool_mt caches of %u entries; bulk32: two batches of %u live per\n"
           "              thread, one freed and replaced per step by two bulk calls, figures\n"
           "              per object\n",
           WS, opt.size, WS, CACHE_SIZE, CACHE_SIZE, BULK);
    printf("  method:     %d recorded repetitions after 1 warm-up, subjects interleaved,\n"
           "              ~%s per repetition; Mops/s = million pairs per second, all threads;\n"
           "              latency: every alloc and free timed alone, in one extra run of\n"
           "              about the same duration; percentiles from 3%%-wide buckets\n",
           opt.reps, opt.quick ? "0.03 s" : "0.25 s");
    printf("\n");
}

static void print_tables(void) {
    int order[S_COUNT];
    for (int s = 0; s < S_COUNT; s++) order[s] = s; /* the enum is in table order */
    static const char *const variants[4] = {"glibc", "mimalloc", "jemalloc", "tcmalloc"};
    int thi = max_threads(), tlo = opt.threads[0];
    for (int i = 0; i < opt.nthreads; i++)
        if (opt.threads[i] < tlo) tlo = opt.threads[i];

    /* main table */
    char lo[40], hi[40];
    snprintf(lo, sizeof lo, "latency ns, %d thread%s", tlo, tlo == 1 ? "" : "s");
    snprintf(hi, sizeof hi, "latency ns, %d thread%s", thi, thi == 1 ? "" : "s");
    printf("%-22s  %-*s | %-30s | %s\n", "", opt.nthreads * 9 - 1, "Mops/s (median)", lo, hi);
    printf("%-22s ", "subject");
    for (int i = 0; i < opt.nthreads; i++) {
        char h[16];
        snprintf(h, sizeof h, "T=%d", opt.threads[i]);
        printf(" %8s", h);
    }
    printf(" | %6s %6s %7s %8s | %6s %6s %7s %8s\n", "p50", "p99", "p99.9", "max", "p50", "p99",
           "p99.9", "max");
    for (int oi = 0; oi < S_COUNT; oi++) {
        int s = order[oi];
        for (int v = 0; v < 4; v++) {
            if (s != S_MALLOC && v > 0) break;
            const char *var = s == S_MALLOC ? variants[v] : NULL;
            bool any = false;
            for (int i = 0; i < opt.nthreads; i++)
                any |= find_row(subj_key[s], var, opt.threads[i]) != NULL;
            if (!any) continue;
            char name[40];
            if (s == S_MALLOC)
                snprintf(name, sizeof name, "malloc (%s)", variants[v]);
            else
                snprintf(name, sizeof name, "%s", subj_name[s]);
            printf("%-22s ", name);
            for (int i = 0; i < opt.nthreads; i++) {
                const mt_row *r = find_row(subj_key[s], var, opt.threads[i]);
                if (r)
                    printf(" %8.2f", mops(r));
                else
                    printf(" %8s", "-");
            }
            int ts[2] = {tlo, thi};
            for (int t = 0; t < 2; t++) {
                const mt_row *r = find_row(subj_key[s], var, ts[t]);
                char a[16] = "-", b[16] = "-", c[16] = "-", d[16] = "-";
                if (r && r->lat.n) {
                    fmt_ns(a, sizeof a, r->lat.p50);
                    fmt_ns(b, sizeof b, r->lat.p99);
                    fmt_ns(c, sizeof c, r->lat.p999);
                    fmt_ns(d, sizeof d, r->lat.max);
                }
                printf(" | %6s %6s %7s %8s", a, b, c, d);
            }
            printf("\n");
        }
    }

    /* every point */
    printf("\nEvery point: pairs per thread per repetition; Mops/s median, min, max; ns per pair\n"
           "(all threads); par = the threads' CPU time / wall time (median; about min(T, cores)\n"
           "when no other program competes for the cores); latency of single alloc/free calls\n"
           "in ns (samples = calls timed):\n\n");
    printf("%-22s %3s %10s %8s %8s %8s %8s %5s | %7s %7s %7s %8s %8s %8s\n", "subject", "T",
           "pairs/thr", "median", "min", "max", "ns/pair", "par", "p50", "p99", "p99.9", "p99.99",
           "max", "samples");
    int prev_t = -1;
    for (int i = 0; i < opt.nthreads; i++) {
        int t = opt.threads[i];
        for (int oi = 0; oi < S_COUNT; oi++) {
            int s = order[oi];
            for (int v = 0; v < 4; v++) {
                if (s != S_MALLOC && v > 0) break;
                const mt_row *r = find_row(subj_key[s], s == S_MALLOC ? variants[v] : NULL, t);
                if (!r) continue;
                if (prev_t != -1 && prev_t != t) printf("\n");
                prev_t = t;
                char name[40], a[16], b[16], c[16], d[16], e[16];
                if (s == S_MALLOC)
                    snprintf(name, sizeof name, "malloc (%s)", variants[v]);
                else
                    snprintf(name, sizeof name, "%s", subj_name[s]);
                fmt_ns(a, sizeof a, r->lat.n ? r->lat.p50 : -1);
                fmt_ns(b, sizeof b, r->lat.n ? r->lat.p99 : -1);
                fmt_ns(c, sizeof c, r->lat.n ? r->lat.p999 : -1);
                fmt_ns(d, sizeof d, r->lat.n ? r->lat.p9999 : -1);
                fmt_ns(e, sizeof e, r->lat.n ? r->lat.max : -1);
                printf("%-22s %3d %10" PRIu64 " %8.2f %8.2f %8.2f %8.2f %5.2f | %7s %7s %7s %8s "
                       "%8s %8" PRIu64 "\n",
                       name, t, r->pairs, mops(r), 1000.0 / r->b.max, 1000.0 / r->b.min,
                       r->b.median, r->par, a, b, c, d, e, r->lat.n);
            }
        }
    }
}

static const char *verdict(bool ok) { return ok ? "PASS" : "MISS"; }

/* A multi-threaded point whose threads did not get the cores they could use
 * measured the machine's other load, not contention: say so. */
static void warn_par(const mt_row *r) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    double want = (double)((long)r->b.n < cores ? (long)r->b.n : cores);
    if (r->b.n > 1 && r->par < 0.85 * want)
        printf("      warning: %s at %u threads ran with parallelism %.2f of %.0f possible: "
               "another program held a core; re-run\n",
               r->b.subject, r->b.n, r->par, want);
}

/* (e): the highest T, lock-free vs the locked pools (the other lock-free
 * pools shown beside them). */
static void print_target_locked(void) {
    int t = max_threads();
    const mt_row *c = find_row("cache", NULL, t), *s = find_row("shared", NULL, t);
    const mt_row *mu = find_row("mutex", NULL, t), *sp = find_row("spin", NULL, t);
    if (!(c || s) || !mu || !sp) {
        printf("  (e) lock-free vs locked pools at %d threads: not measured\n", t);
        return;
    }
    const mt_row *best = c && s ? (mops(c) >= mops(s) ? c : s) : c ? c : s;
    printf("  (e) %d threads on %ld cores, lock-free vs locked pools:\n", t,
           sysconf(_SC_NPROCESSORS_ONLN));
    printf("      %-24s %8s %8s %8s | %7s %7s %8s\n", "", "Mops/s", "x mutex", "x spin", "p99.9",
           "p99.99", "max");
    enum { NSHOW = 7 };
    const mt_row *dn = find_row("dpdknc", NULL, t), *ck = find_row("ck", NULL, t);
    const mt_row *sh = find_row("sharded_slab", NULL, t);
    const mt_row *show[NSHOW] = {c, s, dn, ck, sh, mu, sp};
    for (int i = 0; i < NSHOW; i++) {
        const mt_row *r = show[i];
        if (!r) continue;
        char p3[16], p4[16], mx[16];
        fmt_ns(p3, sizeof p3, r->lat.p999);
        fmt_ns(p4, sizeof p4, r->lat.p9999);
        fmt_ns(mx, sizeof mx, r->lat.max);
        printf("      %-24s %8.2f %7.2fx %7.2fx | %7s %7s %8s\n", r->b.subject, mops(r),
               mops(r) / mops(mu), mops(r) / mops(sp), p3, p4, mx);
    }
    for (int i = 0; i < NSHOW; i++)
        if (show[i]) warn_par(show[i]);
    const mt_row *mine[2] = {best, s};
    const char *label[2] = {"best opool_mt mode", "shared path alone"};
    for (int i = 0; i < 2; i++) {
        const mt_row *r = mine[i];
        if (!r) continue;
        bool thr = mops(r) > mops(mu) && mops(r) > mops(sp);
        bool lat = r->lat.p999 < mu->lat.p999 && r->lat.p999 < sp->lat.p999;
        printf("      %s (%s): throughput above both locked pools: %s; p99.9 below both: %s\n",
               label[i], r->b.subject, verdict(thr), verdict(lat));
    }
}

/* (f): the shared path against the other lock-free pools, at each target T
 * measured: the ck_stack pool (one shared free stack, like the shared path)
 * at 2 and 8 threads (>= 2x), sharded_slab (one shared pool, but a shard per
 * thread) at 1, 2 and 8 (>= 1x). */
static void print_target_lockfree(void) {
    static const struct {
        const char *key, *name, *ts_text;
        double target;
        int ts[3]; /* 0: none */
    } peer[2] = {{"ck", "ck_stack pool", "2, 8", 2, {2, 8, 0}},
                 {"sharded_slab", "sharded_slab", "1, 2, 8", 1, {1, 2, 8}}};
    printf("  (f) shared path vs the other lock-free pools:\n");
    for (int p = 0; p < 2; p++) {
        bool any = false;
        for (int i = 0; i < 3 && peer[p].ts[i] != 0; i++) {
            int t = peer[p].ts[i];
            const mt_row *s = find_row("shared", NULL, t), *o = find_row(peer[p].key, NULL, t);
            if (!s || !o) continue;
            any = true;
            double r = mops(s) / mops(o);
            printf("      T=%-2d shared path vs %s: %.2f / %.2f Mops/s = %.2fx (target >= %.0fx): "
                   "%s\n",
                   t, peer[p].name, mops(s), mops(o), r, peer[p].target,
                   verdict(r >= peer[p].target));
            warn_par(s);
            warn_par(o);
        }
        if (!any)
            printf("      shared path vs %s at T = %s: not measured\n", peer[p].name,
                   peer[p].ts_text);
    }
}

static void print_targets(void) {
    printf("\nTargets, from the figures above:\n");
    const mt_row *c2 = find_row("cache", NULL, 2), *s2 = find_row("shared", NULL, 2);
    if (c2 && s2) {
        double r = mops(c2) / mops(s2);
        printf("  (a) cache path vs shared path, 2 threads: %.2f / %.2f Mops/s = %.2fx "
               "(target >= 1.8x): %s\n",
               mops(c2), mops(s2), r, verdict(r >= 1.8));
        warn_par(c2);
        warn_par(s2);
    } else {
        printf("  (a) cache vs shared path at 2 threads: not measured\n");
    }
    const mt_row *c1 = find_row("cache", NULL, 1), *k1 = find_row("core", NULL, 1);
    if (c1 && k1) {
        double r = c1->b.median / k1->b.median, rb = c1->b.min / k1->b.min;
        printf("  (b) cache path vs core pool, 1 thread: %.2f vs %.2f ns per pair = %.2fx "
               "(target <= 1.5x): %s\n"
               "      (fastest repetitions: %.2f vs %.2f ns per pair = %.2fx)\n",
               c1->b.median, k1->b.median, r, verdict(r <= 1.5), c1->b.min, k1->b.min, rb);
    } else {
        printf("  (b) cache path vs core pool at 1 thread: not measured\n");
    }

    /* (c), (d): against DPDK at every T measured; the targets name 1, 2, 8 */
    bool any_c = false, any_d = false;
    for (int i = 0; i < opt.nthreads; i++) {
        int t = opt.threads[i];
        const mt_row *c = find_row("cache", NULL, t), *d = find_row("dpdk", NULL, t);
        const mt_row *d64 = find_row("dpdk64", NULL, t);
        if (!c || !d) continue;
        if (!any_c)
            printf("  (c) cache path vs DPDK's cached mempool (target >= 1x at T = 1, 2, 8):\n");
        any_c = true;
        bool target = t == 1 || t == 2 || t == 8;
        printf("      T=%-2d %7.2f vs c256 %7.2f Mops/s = %.2fx", t, mops(c), mops(d),
               mops(c) / mops(d));
        if (d64) printf(" (vs c64 %7.2f = %.2fx)", mops(d64), mops(c) / mops(d64));
        printf(": %s\n", target ? verdict(mops(c) >= mops(d)) : "(not a target T)");
        warn_par(c);
        warn_par(d);
    }
    if (!any_c) printf("  (c) cache path vs DPDK's cached mempool: not measured\n");
    for (int i = 0; i < opt.nthreads; i++) {
        int t = opt.threads[i];
        const mt_row *b = find_row("bulk", NULL, t), *d = find_row("dpdkbulk", NULL, t);
        if (!b || !d) continue;
        if (!any_d)
            printf("  (d) bulk of 32 per object vs DPDK's get/put_bulk of 32 (target <= 1x):\n");
        any_d = true;
        printf("      T=%-2d %6.2f vs %6.2f ns per object (all threads) = %.2fx: %s\n", t,
               b->b.median, d->b.median, b->b.median / d->b.median,
               verdict(b->b.median <= d->b.median));
        warn_par(b);
        warn_par(d);
    }
    if (!any_d) printf("  (d) bulk of 32 vs DPDK's bulk of 32: not measured\n");

    print_target_locked();
    print_target_lockfree();
}

static void print_mt_stats(void) {
    if (g_mt_stats.pools == 0) return;
    bool ok = g_mt_stats.sleeps == 0 && g_mt_stats.wake_calls == 0;
    printf("\nopool_mt stats summed over the %" PRIu64 " pools of this run: sleeps %" PRIu64
           ", wake_calls %" PRIu64 " (%s), failed_allocs %" PRIu64 ", steals %" PRIu64
           ", rejected_handles %" PRIu64 "\n",
           g_mt_stats.pools, g_mt_stats.sleeps, g_mt_stats.wake_calls,
           ok ? "both 0 as they must be: nobody waited, no free made a system call"
              : "UNEXPECTED: nobody waits in this benchmark",
           g_mt_stats.failed_allocs, g_mt_stats.steals, g_mt_stats.rejected);
}

/* ==== growth: filling a pool ============================================= */

/* T threads each allocate FILL / T objects through a cache of CACHE_SIZE,
 * all at once, writing the tag, then free them (untimed): a fixed pool of
 * FILL slots against growing ones (OPOOL_FULL_GROW) that start at 64 slots,
 * up to FILL or to OPOOL_MAX_CAPACITY. A fresh pool each repetition: the
 * first touch of the memory counts for all three, the growths (system calls
 * and their slots' setup) for the growing ones. ns per object, median. */
#define FILL (1u << 20)

typedef struct filler {
    opool_mt *p;
    uint32_t n;
    opool_handle *h;
    pthread_barrier_t *go;
    bool failed;
} filler;

static void *fill_thread(void *arg) {
    filler *f = arg;
    opool_mt_cache *c = opool_mt_cache_create(f->p, CACHE_SIZE);
    pthread_barrier_wait(f->go); /* start */
    for (uint32_t i = 0; c && i < f->n; i++) {
        uint64_t *obj = opool_mt_cache_alloc(c, &f->h[i]);
        if (obj == NULL) {
            f->failed = true;
            break;
        }
        obj[0] = f->h[i].bits;
    }
    pthread_barrier_wait(f->go); /* filled */
    for (uint32_t i = 0; c && !f->failed && i < f->n; i++) opool_mt_cache_free(c, f->h[i]);
    opool_mt_cache_destroy(c);
    f->failed |= c == NULL;
    return NULL;
}

/* One fill by nthreads of a pool of capacity growing to max: ns per object. */
static double fill_once(int nthreads, uint32_t capacity, uint32_t max) {
    opool_desc d = {0};
    d.object_size = opt.size;
    d.capacity = capacity;
    d.max_capacity = max;
    d.on_full = max > capacity ? OPOOL_FULL_GROW : OPOOL_FULL_FAIL;
    opool_mt *p;
    if (opool_mt_create(&p, &d) != OPOOL_OK) bench_fail("bench_mt", "fill: opool_mt_create failed");
    pthread_barrier_t go;
    pthread_barrier_init(&go, NULL, (unsigned)nthreads + 1);
    filler f[64];
    pthread_t t[64];
    for (int k = 0; k < nthreads; k++) {
        f[k] = (filler){p, FILL / (uint32_t)nthreads, NULL, &go, false};
        f[k].h = malloc(f[k].n * sizeof *f[k].h);
        if (f[k].h == NULL || pthread_create(&t[k], NULL, fill_thread, &f[k]) != 0)
            bench_fail("bench_mt", "fill: out of memory or threads");
    }
    pthread_barrier_wait(&go);
    uint64_t t0 = bench_now_ns();
    pthread_barrier_wait(&go);
    uint64_t t1 = bench_now_ns();
    for (int k = 0; k < nthreads; k++) {
        pthread_join(t[k], NULL);
        if (f[k].failed) bench_fail("bench_mt", "fill: an alloc failed");
        free(f[k].h);
    }
    pthread_barrier_destroy(&go);
    opool_mt_destroy(p);
    return (double)(t1 - t0) / (double)(FILL / (uint32_t)nthreads * (uint32_t)nthreads);
}

static void run_fill(void) {
    static const struct {
        const char *name;
        uint32_t capacity, max;
    } kind[3] = {{"fixed", FILL, 0},
                 {"growing from 64", 64, FILL},
                 {"growing to OPOOL_MAX_CAPACITY", 64, OPOOL_MAX_CAPACITY}};
    printf("\nopool_mt growth: %u objects of %zu bytes allocated by T threads through caches "
           "of %u, a fresh pool each time (ns per object, median of %d)\n",
           FILL, opt.size, CACHE_SIZE, opt.reps);
    printf("  %-3s %10s %18s %32s\n", "T", kind[0].name, kind[1].name, kind[2].name);
    for (int i = 0; i < opt.nthreads; i++) {
        int nt = opt.threads[i] < 64 ? opt.threads[i] : 64;
        double ns[3][BENCH_MAX_REPS];
        for (int rep = 0; rep <= opt.reps; rep++)
            for (int k = 0; k < 3; k++) { /* interleaved; rep 0 warms up */
                int j = (k + rep) % 3;
                if (sizeof(size_t) < 8 && kind[j].max == OPOOL_MAX_CAPACITY) continue;
                double v = fill_once(nt, kind[j].capacity, kind[j].max);
                if (rep) ns[j][rep - 1] = v;
            }
        printf("  %-3d", nt);
        for (int k = 0; k < 3; k++) {
            if (sizeof(size_t) < 8 && kind[k].max == OPOOL_MAX_CAPACITY) {
                printf(" %32s", "n/a");
                continue;
            }
            qsort(ns[k], (size_t)opt.reps, sizeof(double), bench_cmp_double);
            printf(k == 0 ? " %10.1f" : k == 1 ? " %18.1f" : " %32.1f", ns[k][opt.reps / 2]);
        }
        printf("\n");
    }
}

static const char *chart_unit(const char *workload) {
    (void)workload;
    return "ns per pair, all threads (bulk: per object)";
}

static bool chart_lines(const char *workload) {
    (void)workload;
    return true;
}

/* mt_alloc_free_pairs.svg (bars grouped by T) and ..._vs_t.svg (lines), next
 * to the CSV, the allocator builds' rows included. */
static void write_charts(const char *csv, const char *mode) {
    static bench_row rows[MAX_ROWS];
    for (int i = 0; i < g_nrows; i++) rows[i] = g_rows[i].b;
    static const bench_svg_run run = {
        "bench_mt", "mt_", {"T", "threads T"}, chart_unit, chart_lines};
    bench_svg_charts(csv, &run, rows, g_nrows, mode);
}

static int write_csv(const char *path, const char *mode, const bench_machine *m) {
    FILE *f = bench_csv_create("bench_mt", path);
    if (f == NULL) return -1;
    fprintf(f, "subject,key,malloc,threads,object_size,pairs_per_thread,reps,median_mops,"
               "min_mops,max_mops,median_ns_per_pair,parallelism,lat_samples,lat_p50_ns,lat_p99_ns,"
               "lat_p999_ns,lat_p9999_ns,lat_max_ns,mode,cpu,nproc,compiler,flags,"
               "samples_ns_per_pair\n");
    for (int i = 0; i < g_nrows; i++) {
        const mt_row *r = &g_rows[i];
        bench_csv_str(f, r->b.subject);
        fprintf(f,
                ",%s,%s,%" PRIu32 ",%zu,%" PRIu64 ",%d,%.4f,%.4f,%.4f,%.4f,%.3f,%" PRIu64
                ",%.1f,%.1f,%.1f,%.1f,%.1f,",
                r->key, r->variant, r->b.n, opt.size, r->pairs, r->b.reps, mops(r),
                1000.0 / r->b.max, 1000.0 / r->b.min, r->b.median, r->par, r->lat.n, r->lat.p50,
                r->lat.p99, r->lat.p999, r->lat.p9999, r->lat.max);
        bench_csv_machine(f, mode, m);
        for (int k = 0; k < r->b.reps; k++) fprintf(f, "%s%.4f", k ? " " : "", r->b.ns[k]);
        fputs("\"\n", f);
    }
    return bench_csv_close("bench_mt", path, f);
}

/* ==== main ==================================================================== */

static void usage(FILE *f) {
    fprintf(f,
            "usage: bench_mt [--quick] [--reps N] [--size 16|64|256] [--threads 1,2,4,8]\n"
            "                [--only cache,bulk,shared,dpdk,dpdk64,dpdkbulk,dpdknc,mutex,spin,\n"
            "                        ck,sharded_slab,core,malloc,grow] [--csv PATH] [--no-peers]\n"
            "  --quick     short run (under 30 s with every allocator build)\n"
            "  --no-peers  do not run the sibling programs: the allocator builds\n"
            "              bench_mt_<allocator> and bench_mt_sharded_slab (Rust)\n"
            "  --csv       CSV output (default build/bench/mt.csv; the allocator\n"
            "              builds run alone: build/bench/mt_<allocator>.csv)\n");
}

static void parse_threads(const char *v) {
    opt.nthreads = 0;
    for (const char *p = v; *p;) {
        char *end;
        long t = strtol(p, &end, 10);
        if (end == p || t < 1 || t > MAX_THREADS || opt.nthreads >= 16) {
            fprintf(stderr, "bench_mt: --threads wants up to 16 counts in 1..%d\n", MAX_THREADS);
            exit(2);
        }
        opt.threads[opt.nthreads++] = (int)t;
        p = end + (*end == ',');
    }
    if (opt.nthreads == 0) {
        fprintf(stderr, "bench_mt: --threads is empty\n");
        exit(2);
    }
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
        } else if (strcmp(a, "--size") == 0 && v) {
            opt.size = (size_t)strtoul(v, NULL, 10);
            i++;
            if (opt.size != 16 && opt.size != 64 && opt.size != 256) {
                fprintf(stderr, "bench_mt: --size must be 16, 64 or 256\n");
                exit(2);
            }
        } else if (strcmp(a, "--threads") == 0 && v) {
            parse_threads(v);
            i++;
        } else {
            i += bench_common_arg("bench_mt", a, v, &opt.reps, &opt.csv, &opt.only, usage) - 1;
        }
    }
    if (opt.reps == 0) opt.reps = opt.quick ? 3 : 7;
}

int main(int argc, char **argv) {
    parse_args(argc, argv);
    bench_machine m;
    bench_machine_get(&m);
    g_tty = isatty(2);
    bench_read_load(g_load_start, sizeof g_load_start);
    g_t_start = bench_now_ns();
    timer_calibrate();
    char mode[160];
    snprintf(mode, sizeof mode, "concurrent pools%s, object size %zu, malloc %s",
             opt.quick ? " (--quick)" : "", opt.size, BENCH_ALLOC_NAME);
    fprintf(stderr, "bench_mt%s: %s\n", opt.child ? " (child)" : "", mode);

    bool dpdk_wanted = false;
    for (int s = 0; s < S_COUNT; s++) dpdk_wanted |= is_dpdk(s) && wanted(s);
    if (BENCH_MT_HAVE_DPDK && dpdk_wanted && !opt.child) dpdk_start();
    for (int i = 0; i < opt.nthreads; i++) run_threads(opt.threads[i]);

    if (opt.child) {
        child_emit();
        return 0;
    }
    char info[200];
    bench_alloc_describe(info, sizeof info);
    add_info("%-9s %s (this program)", BENCH_ALLOC_NAME, info);
    if (BENCH_MT_POOLS && !opt.no_peers) {
        char dir[4096];
        bench_child_self_dir(dir, sizeof dir, argv[0]);
        /* first: closest in time to the pools it is compared with */
        if (wanted(S_SHARDED)) run_sharded(dir);
        if (wanted(S_MALLOC))
            for (int i = 0; i < BENCH_ALLOC_NPEERS; i++) run_peer(dir, bench_alloc_peer(i));
    }

    print_header(&m, mode);
    print_tables();
    if (BENCH_MT_POOLS) print_targets();
    print_mt_stats();
    if (BENCH_MT_POOLS && bench_list_has(opt.only, "grow")) run_fill();
    char csv_default[64];
    snprintf(csv_default, sizeof csv_default, "build/bench/mt%s%s.csv", BENCH_MT_POOLS ? "" : "_",
             BENCH_MT_POOLS ? "" : BENCH_ALLOC_NAME);
    const char *csv = opt.csv ? opt.csv : csv_default;
    if (write_csv(csv, mode, &m) == 0) printf("\nCSV: %s\n", csv);
    if (BENCH_MT_POOLS) write_charts(csv, mode);
    dpdk_stop();
    fprintf(stderr, "bench_mt: done in %.1f s\n", (double)(bench_now_ns() - g_t_start) / 1e9);
    return 0;
}
