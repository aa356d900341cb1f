/*
 * bench_core.c -- the core pool against an ideal pool, an ideal generational
 * pool, malloc (glibc, mimalloc, jemalloc, tcmalloc) and Rust's slotmap, on
 * the workloads opool exists for.
 *
 * Usage: opool_bench [--quick] [--size 16|64|256] [--reps N] [--csv PATH]
 *                    [--only churn,lookup,filldrain,iter,particles,resident,side,arena,frame,
 *                            flags]
 *                    [--layouts] [--no-peers]
 * Writes the table to stdout, progress to stderr, every sample to the CSV
 * (default bench/out/core.csv) and SVG charts next to it (see "charts").
 *
 * ============================================================================
 * SUBJECTS
 * ============================================================================
 *   ideal      flat object array + LIFO stack of free uint32 indices; handle =
 *              index; no checks at all. The floor for any index-based pool.
 *   ideal_gen  the same plus a uint32 generation per slot (odd = live):
 *              alloc pops and increments; free and get check index < cap,
 *              generation equal and odd. 64-bit handle gen << 32 | index.
 *              The floor for a pool that validates handles, as opool does.
 *   opool      this library through its public header (inline fast paths),
 *              capacity N, OPOOL_FULL_FAIL, no flags.
 *   opool fixed
 *              the same pool through OPOOL_TYPED_FIXED(.., 0) (opool_typed.h).
 *   opool fixed no live list
 *              the same through OPOOL_TYPED_FIXED(.., OPOOL_NO_LIVE_LIST).
 *   malloc     the C library's malloc/free; handle = pointer. It validates
 *              nothing, so its "lookup" is a plain dereference.
 *   boost::object_pool, boost::pool<>, plf::colony
 *              C++ peers, built in when CMake finds their headers
 *              (bench/bench_peers.cpp says how each is driven). Handle =
 *              pointer (colony: iterator), not validated, like malloc's. The
 *              Boost pools cannot iterate; boost::object_pool's O(N) free
 *              keeps it out of fill+drain. A missing one is noted in the output.
 * In other processes (bench/bench_child.h), after the subjects above at each
 * object size (each program run once per size, with --size, --ns and the
 * repetitions), unless --no-peers or --layouts:
 *   mimalloc, jemalloc, tcmalloc
 *              malloc as above, from opool_bench_<name>: this file linked with
 *              that allocator (bench/bench.cmake; BENCH_ALLOC), since a
 *              replacement malloc takes over the whole program that links it.
 *              Run with --child and the workload options, it measures its
 *              malloc subject alone (churn, lookup, fill+drain) and writes its
 *              rows to stdout.
 *   slotmap, dense_slotmap
 *              Rust's slotmap crate, SlotMap and DenseSlotMap, from
 *              opool_bench_slotmap (bench/slotmap, cargo): the same workloads,
 *              iterate included, replayed operation for operation.
 * A sibling that was not built (library or cargo missing at configure time)
 * is skipped with a one-line note in the header.
 * Every subject's loop is written out separately with its operations inlined
 * (no function pointer inside a timed loop; a peer's whole loop is one call
 * into C++). ideal and ideal_gen are written like small libraries (a struct
 * reached through a pointer, static inline functions), which is how a user
 * would write them, and all C subjects index objects with the same run-time
 * stride (the C++ peers' object size is a template argument).
 *
 * ============================================================================
 * WORKLOADS (each at object sizes 16, 64 and 256 bytes; --size picks one)
 * ============================================================================
 *   churn       N = 1K, 10K, 100K and 1M live objects, handles in an array;
 *               per iteration: k = random slot, free handles[k], allocate,
 *               write a = k and b = iteration, handles[k] = new handle.
 *               ns per free+alloc pair. (With LIFO reuse every subject gets
 *               the slot it just freed back: this measures bookkeeping.)
 *   lookup      on the state churn left: sum a + b of the object of
 *               handles[random k]; ns per lookup. Lookups are independent,
 *               so this is throughput with overlapping misses, not latency.
 *   fill+drain  N = 1,000,000: N allocs (writing a and b), then N frees in a
 *               pre-shuffled order; ns per alloc+free pair. Every repetition
 *               starts from a fresh free order (ideal stacks reset,
 *               opool_clear, malloc consolidated: see malloc_fresh), memory
 *               already mapped. The untimed check between fill and drain
 *               reads every object back through its handle.
 *   iterate     1,000,000 slots, fill all, free a random 90% (50%, 0%); sum a
 *               over live objects: opool in the roster order the frees left,
 *               the same after opool_sort (forward, and backward as in the
 *               header's idiom), and ideal_gen scanning every slot's
 *               generation. ns per LIVE object; about 1M visits per sample
 *               after one untimed pass. Also the cost of one opool_sort call.
 *   particles   a particle-system frame at ~N = 10K and 100K live: spawn
 *               N/32, update every live particle (read and write), kill
 *               those whose life ends during the pass; ns per particle
 *               update. Adds "opool sorted/frame" (see "particles" below).
 *   arena       generational_arena_bench's operations at N = 10K: insert
 *               into a fresh container (its creation included), get, remove,
 *               insert into the used container; ns per operation (see "arena").
 *   frame       plf::colony's "general use" at N = 10K and 1M (--quick 100K):
 *               every frame updates every live object, then erases P% of
 *               them at random and inserts as many (P = 1 and 10); ns per
 *               object visited (see "frame" below).
 *   side get    N = 1K, 10K, 100K and 1M: a side table (opool_side.h) with a
 *               value (of the object size) for each of N live handles, put
 *               in a shuffled order; sum a + b of the value of
 *               handles[random k] through opool_side_get, against the same
 *               through opool_get on the pool those handles came from (and
 *               ideal_gen's get, the usual reference); ns per lookup. The
 *               ratio side/opool of the same run is printed under the table.
 *   churn, debug flags
 *               churn at N = 1K for opool with no flags, with OPOOL_ZERO and
 *               with OPOOL_POISON (ideal_gen the reference): what each debug
 *               flag adds to a free+alloc pair (docs/DEBUGGING.md's table).
 *   resident    resident-set growth per live object for 1M objects allocated
 *               and written, each subject in a fresh process; BYTES per
 *               object (the table's ns columns hold bytes for this one).
 *   --layouts   hand-written pools (see "layout experiment" below), opool and
 *               opool without a live list (plain and fixed) beside them,
 *               for churn and lookup at 1,000 and 1,000,000 (one size).
 * --quick keeps every size and subject (the other processes too), stops every
 * N at 100K (no 1M point; fill+drain, iterate and resident at 100K: filling
 * 1M objects per subject was most of its time) and cuts operations and
 * repetitions: a check that everything runs and agrees, not a measurement.
 *
 * ============================================================================
 * METHOD
 * ============================================================================
 *   - One random sequence (splitmix64 from a seed fixed per workload, N and
 *     repetition) drives every subject, so all do exactly the same logical
 *     work. Its cost (~1 ns, no dependency on memory) is in every number.
 *   - Objects carry two uint64 fields: a = the array slot k that owns the
 *     object, b = a tag (iteration number). Checksums sum what is read back
 *     (through each subject's own lookup), so they depend only on the random
 *     sequence and the values written: each subject must match the first
 *     subject's checksum in every repetition or the run fails.
 *   - Repetition 0 is a discarded warm-up; repetitions 1..R are recorded:
 *     R = 9 (fill+drain 7; resident 5, no warm-up), --quick 3 (2; 1), --reps
 *     sets them all (15 and 9 before the peers: see "Time"). Within a
 *     repetition the subjects run one after another, starting from a
 *     different subject each time, so machine noise hits all of them alike.
 *     Churn and lookup also run a short untimed warm-up loop right before
 *     each timed loop (the other subjects have just evicted the caches).
 *   - Reported: median, min and max of ns per operation over the recorded
 *     repetitions, and each median divided by the medians of the reference
 *     subjects (ideal_gen and ideal) measured in the same run.
 *   - Subjects in other processes run after this process's own, once per
 *     object size, one program at a time, with the same options. Their
 *     ratios divide their medians by the reference medians measured by this
 *     process in the same invocation at the same size (not interleaved with
 *     them: compare across the process boundary with the machine's noise in
 *     mind). Their checksums, summed over the same repetitions, must equal
 *     this process's for the case or the run fails.
 *   - Time: with every peer, the default run took 5 min 16 s on an idle
 *     2-core machine (the arena and frame workloads: 80 s of it), --quick
 *     about 20 s (limit: 30 s). Most of it is 1M-object cases.
 */
#if !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif

#include "opool.h"
#include "opool_side.h"
#include "opool_typed.h"

#include "bench_util.h"
#include "bench_child.h"
#include "bench_svg.h"

#include <stdarg.h>
#include <stdbool.h>
#if defined(OPOOL_BENCH_HAVE_BOOST) || defined(OPOOL_BENCH_HAVE_COLONY) ||                         \
    defined(OPOOL_BENCH_HAVE_OPL)
#define BENCH_PEERS 1
#include "bench_peers.h"
#else
#define BENCH_PEERS 0
#endif
#ifdef __GLIBC__
#include <gnu/libc-version.h>
#include <malloc.h>
#endif

/* ==== options and results ================================================= */

static struct {
    bool quick;
    bool layouts;
    bool child;      /* run by opool_bench: this build's malloc subject only, rows to stdout */
    bool no_peers;   /* do not run the sibling programs (bench_child.h) */
    bool one_size;   /* --size given: only that size */
    size_t size;     /* object size in bytes: 16, 64 or 256 (the one being run) */
    int reps;        /* recorded repetitions (plus one warm-up) */
    bool reps_given; /* --reps: every workload runs that many */
    int fd_reps;     /* --filldrain-reps (children): fill+drain's repetitions */
    const char *ns;  /* --ns (children): churn/lookup's N points, comma-separated */
    const char *csv; /* NULL = the mode's default path */
    const char *only;
} opt = {false, false, false, false, false, 64, 0, false, 0, NULL, NULL, NULL};

#define MAX_ROWS 1024
static bench_row g_rows[MAX_ROWS];
static int g_nrows;
static uint64_t g_t_start;
static bool g_tty; /* stderr is a terminal: progress updates in place */

#define fail(...) bench_fail("opool_bench", __VA_ARGS__)

/* fill+drain: 1M pairs per subject per repetition, at three sizes, for up
 * to 12 subjects: fewer repetitions keep make bench within its time.
 * resident: the figure is a count of pages, repetitions only confirm it
 * (still 5 by default, as every case). --reps overrides both;
 * --filldrain-reps, which a parent passes its children so that their cases
 * match its own, overrides fill+drain's. */
static int reps_filldrain(void) {
    return opt.fd_reps > 0 ? opt.fd_reps : opt.reps_given ? opt.reps : opt.quick ? 2 : 7;
}
/* fill+drain's, iterate's and resident's N: 1M, and 100K with --quick,
 * where filling 1M objects per subject (the setups, not the timed loops)
 * took most of the time. The children derive it from --quick the same way. */
static uint32_t n_bulk(void) { return opt.quick ? 100000u : 1000000u; }
static int reps_resident(void) { return opt.reps_given ? opt.reps : opt.quick ? 1 : 5; }

static bool wanted(const char *workload) { return bench_list_has(opt.only, workload); }

/* Object fields. Objects are at least 16 bytes, so both always fit. */
#define FA(o) (((uint64_t *)(void *)(o))[0])
#define FB(o) (((uint64_t *)(void *)(o))[1])

/* Workload identifiers mixed into the seeds. */
enum { W_CHURN = 1, W_LOOKUP, W_FILLDRAIN, W_ITER, W_PARTICLES, W_SIDE, W_FRAME, W_ARENA };

/* ==== the ideal pools ===================================================== */

typedef struct ideal_pool {
    char *obj;
    uint32_t *stack; /* free indices; top of stack at [top - 1] */
    uint32_t top;
    uint32_t cap;
    size_t stride;
} ideal_pool;

static void ideal_reset(ideal_pool *p) {
    /* pops hand out 0, 1, 2, ... like a fresh pool */
    for (uint32_t j = 0; j < p->cap; j++) p->stack[j] = p->cap - 1 - j;
    p->top = p->cap;
}

static void ideal_init(ideal_pool *p, uint32_t cap, size_t stride) {
    p->obj = bench_xalloc((size_t)cap * stride);
    p->stack = bench_xalloc((size_t)cap * sizeof(uint32_t));
    p->cap = cap;
    p->stride = stride;
    ideal_reset(p);
}

static void ideal_fini(ideal_pool *p) {
    free(p->obj);
    free(p->stack);
}

static inline uint32_t ideal_alloc(ideal_pool *p) { return p->stack[--p->top]; }
static inline void ideal_free(ideal_pool *p, uint32_t i) { p->stack[p->top++] = i; }
static inline char *ideal_at(const ideal_pool *p, uint32_t i) {
    return p->obj + (size_t)i * p->stride;
}

typedef struct igen_pool {
    char *obj;
    uint32_t *gen;   /* odd = live */
    uint32_t *stack; /* free indices */
    uint32_t top;
    uint32_t cap;
    size_t stride;
} igen_pool;

static void igen_reset(igen_pool *p) {
    for (uint32_t j = 0; j < p->cap; j++) p->stack[j] = p->cap - 1 - j;
    p->top = p->cap;
}

static void igen_init(igen_pool *p, uint32_t cap, size_t stride) {
    p->obj = bench_xalloc((size_t)cap * stride);
    p->gen = bench_xalloc((size_t)cap * sizeof(uint32_t));
    p->stack = bench_xalloc((size_t)cap * sizeof(uint32_t));
    memset(p->gen, 0, (size_t)cap * sizeof(uint32_t));
    p->cap = cap;
    p->stride = stride;
    igen_reset(p);
}

static void igen_fini(igen_pool *p) {
    free(p->obj);
    free(p->gen);
    free(p->stack);
}

static inline char *igen_alloc(igen_pool *p, uint64_t *h) {
    if (p->top == 0) return NULL;
    uint32_t i = p->stack[--p->top];
    uint32_t g = ++p->gen[i];
    *h = (uint64_t)g << 32 | i;
    return p->obj + (size_t)i * p->stride;
}

static inline bool igen_free(igen_pool *p, uint64_t h) {
    uint32_t i = (uint32_t)h, g = (uint32_t)(h >> 32);
    if (i >= p->cap || p->gen[i] != g || !(g & 1)) return false;
    p->gen[i] = g + 1;
    p->stack[p->top++] = i;
    return true;
}

static inline char *igen_get(const igen_pool *p, uint64_t h) {
    uint32_t i = (uint32_t)h, g = (uint32_t)(h >> 32);
    if (i >= p->cap || p->gen[i] != g || !(g & 1)) return NULL;
    return p->obj + (size_t)i * p->stride;
}

/* The same pool grown from capacity 32 up to max_capacity cap: all but 32
 * objects live in grown chunks. */
static opool *make_opool_grown(uint32_t cap) {
    opool_desc d;
    memset(&d, 0, sizeof d);
    d.object_size = opt.size;
    d.capacity = 32;
    d.max_capacity = cap;
    d.on_full = OPOOL_FULL_GROW;
    opool *p = NULL;
    opool_status s = opool_create(&p, &d);
    if (s != OPOOL_OK) fail("opool_create(grow to %u): %s", cap, opool_status_str(s));
    return p;
}

/* The end of a subject's pool: its objects freed first, so that the leak
 * report (a pool destroyed with objects live) stays out of the output. */
static void end_opool(opool *p) {
    opool_clear(p);
    opool_destroy(p);
}

static opool *make_opool_flags(uint32_t cap, uint32_t flags) {
    opool_desc d;
    memset(&d, 0, sizeof d);
    d.object_size = opt.size;
    d.capacity = cap;
    d.on_full = OPOOL_FULL_FAIL;
    d.flags = flags;
    opool *p = NULL;
    opool_status s = opool_create(&p, &d);
    if (s != OPOOL_OK) fail("opool_create(capacity %u): %s", cap, opool_status_str(s));
    return p;
}

static opool *make_opool(uint32_t cap) { return make_opool_flags(cap, 0); }

/* ==== opool fixed: typed pools whose flags are fixed at compile time =======
 * OPOOL_TYPED_FIXED(P, T, FLAGS) (opool_typed.h): P_alloc, P_free and P_get
 * run the core's inline paths with what FLAGS fixes as a constant (the pool
 * never grows; it keeps a live list, or none), so the tests those facts
 * answer are not compiled. T only names the two fields FA and FB write: each
 * pool is created with object_size = the run's size (room after each T) and
 * opool's default alignment, so its objects and stride are every opool
 * subject's. */
typedef struct bench_obj {
    uint64_t a, b;
} bench_obj;
OPOOL_TYPED_FIXED(fixed_list, bench_obj, 0);                  /* "opool fixed" */
OPOOL_TYPED_FIXED(fixed_bare, bench_obj, OPOOL_NO_LIVE_LIST); /* "opool fixed no live list" */

/* make_P: a pool of P for cap objects, empty, from make_opool_flags's desc
 * (P_create adds P's flags); end_P: end_opool's; object_P: the object of h
 * through P_get, as the untimed checks read every subject's. */
#define FIXED_POOL_FNS(P)                                                                          \
    static P *make_##P(uint32_t cap) {                                                             \
        opool_desc d;                                                                              \
        memset(&d, 0, sizeof d);                                                                   \
        d.object_size = opt.size;                                                                  \
        d.object_align = _Alignof(max_align_t); /* the core's default; P's would be T's */         \
        d.capacity = cap;                                                                          \
        d.on_full = OPOOL_FULL_FAIL;                                                               \
        P *p = NULL;                                                                               \
        opool_status s = P##_create(&p, &d);                                                       \
        if (s != OPOOL_OK) fail(#P "_create(capacity %u): %s", cap, opool_status_str(s));          \
        return p;                                                                                  \
    }                                                                                              \
    static void end_##P(P *p) { end_opool(P##_raw(p)); }                                           \
    static const char *object_##P(const P *p, P##_handle h) {                                      \
        return (const char *)(const void *)P##_get(p, h);                                          \
    }
FIXED_POOL_FNS(fixed_list)
FIXED_POOL_FNS(fixed_bare)

/* ==== layout experiment: hand-written roster pools ========================
 * Each mirrors opool's fast paths (header opool_alloc/opool_free/opool_get)
 * without the statistics counters and the slow-path flag, varying one thing:
 *   A  slot record {gen, pos} in one 8-byte struct (opool's layout)
 *   B  separate uint32 gen[] and pos[] arrays
 *   C  object address base + i * stride
 *   D  opool's chunk formula base[bitwidth(i >> shift)] + i * stride, with
 *      shift = 32 as for a fixed pool (always chunk 0, but the compiler cannot
 *      know that: shift and base[] are loaded from the pool like opool's).
 *   E  (an extra candidate) D behind a branch: if i >> shift == 0 use base[0],
 *      else the formula -- predictable, and it takes the bit-width computation
 *      off the path to the object's address.
 *   F  A + C with round 1's deferred swap-delete (see lay_alloc_F): what the
 *      eager swap-delete, which the iteration promise needs, costs against it.
 *   G  A + C with the promise kept and the swap-delete's one random write,
 *      the hole's roster entry, batched (see lay_free_G): whether letting
 *      those misses overlap recovers what F shows the write costs.
 *   H  no live list: ideal_gen's free stack (the roster array's free part)
 *      with A's 8-byte record, .pos unused -- what opool's record costs a
 *      pool that never iterates (OPOOL_NO_LIVE_LIST keeps that record)
 *      against ideal_gen's 4-byte generation. */

#define LAY_G_DEPTH 16

typedef struct lay_rec {
    uint32_t gen, pos;
} lay_rec;

typedef struct lay_pool {
    lay_rec *rec;     /* A */
    uint32_t *gen;    /* B */
    uint32_t *pos;    /* B */
    uint32_t *roster; /* [0, count) live, [count, limit) free */
    uint32_t count, limit, nslots, shift;
    uint32_t pending; /* F: 1 + the slot whose swap-delete is deferred, or 0 */
    /* G: queued writes roster[q_pos[k]] = q_slot[k], oldest at q_head */
    uint32_t q_pos[LAY_G_DEPTH], q_slot[LAY_G_DEPTH], q_len, q_head, q_max;
    size_t stride;
    uintptr_t base[OPOOL__MAX_CHUNKS];
} lay_pool;

static void lay_init(lay_pool *p, uint32_t cap, size_t stride, bool split) {
    memset(p, 0, sizeof *p);
    if (split) {
        p->gen = bench_xalloc((size_t)cap * sizeof(uint32_t));
        p->pos = bench_xalloc((size_t)cap * sizeof(uint32_t));
    } else {
        p->rec = bench_xalloc((size_t)cap * sizeof(lay_rec));
    }
    p->roster = bench_xalloc((size_t)cap * sizeof(uint32_t));
    p->base[0] = (uintptr_t)bench_xalloc((size_t)cap * stride);
    for (uint32_t i = 0; i < cap; i++) {
        if (split) {
            p->gen[i] = 0;
            p->pos[i] = i;
        } else {
            p->rec[i].gen = 0;
            p->rec[i].pos = i;
        }
        p->roster[i] = i;
    }
    p->limit = p->nslots = cap;
    p->shift = 32;
    p->stride = stride;
}

static void lay_fini(lay_pool *p) {
    free(p->rec);
    free(p->gen);
    free(p->pos);
    free(p->roster);
    free((void *)p->base[0]);
}

static inline uint32_t lay_chunk_of(const lay_pool *p, uint32_t i) {
    uint64_t q = ((uint64_t)i >> p->shift) * 2 + 1;
    return (uint32_t)(63 - __builtin_clzll(q));
}

static inline uintptr_t lay_base_e(const lay_pool *p, uint32_t i) {
    if (OPOOL_LIKELY(((uint64_t)i >> p->shift) == 0)) return p->base[0];
    return p->base[lay_chunk_of(p, i)];
}

#define LAY_A_GEN(p, i) ((p)->rec[i].gen)
#define LAY_A_POS(p, i) ((p)->rec[i].pos)
#define LAY_B_GEN(p, i) ((p)->gen[i])
#define LAY_B_POS(p, i) ((p)->pos[i])
#define LAY_C_ADDR(p, i) ((char *)((p)->base[0] + (uintptr_t)(i) * (p)->stride))
#define LAY_D_ADDR(p, i) ((char *)((p)->base[lay_chunk_of(p, i)] + (uintptr_t)(i) * (p)->stride))
#define LAY_E_ADDR(p, i) ((char *)(lay_base_e(p, i) + (uintptr_t)(i) * (p)->stride))

#define LAY_DEFINE(V, GEN, POS, ADDR)                                                              \
    static inline char *lay_alloc_##V(lay_pool *p, uint64_t *h) {                                  \
        if (OPOOL_UNLIKELY(p->count == p->limit)) return NULL;                                     \
        uint32_t n = p->count++;                                                                   \
        uint32_t i = p->roster[n];                                                                 \
        uint32_t g = ++GEN(p, i);                                                                  \
        *h = (uint64_t)g << 32 | i;                                                                \
        return ADDR(p, i);                                                                         \
    }                                                                                              \
    static inline bool lay_free_##V(lay_pool *p, uint64_t h) {                                     \
        uint32_t i = (uint32_t)h, g = (uint32_t)(h >> 32);                                         \
        if (OPOOL_UNLIKELY(i >= p->nslots)) return false;                                          \
        if (OPOOL_UNLIKELY(GEN(p, i) != g || !(g & 1))) return false;                              \
        uint32_t last = --p->count, pos = POS(p, i);                                               \
        uint32_t j = p->roster[last];                                                              \
        p->roster[pos] = j;                                                                        \
        POS(p, j) = pos;                                                                           \
        p->roster[last] = i;                                                                       \
        POS(p, i) = last;                                                                          \
        GEN(p, i) = g + 1;                                                                         \
        return true;                                                                               \
    }                                                                                              \
    static inline char *lay_get_##V(const lay_pool *p, uint64_t h) {                               \
        uint32_t i = (uint32_t)h, g = (uint32_t)(h >> 32);                                         \
        if (OPOOL_UNLIKELY(i >= p->nslots)) return NULL;                                           \
        if (OPOOL_UNLIKELY(GEN(p, i) != g || !(g & 1))) return NULL;                               \
        return ADDR(p, i);                                                                         \
    }                                                                                              \
    LAY_LOOPS(V)

/* The timed loops of variant V, over its lay_alloc_V, lay_free_V, lay_get_V. */
#define LAY_LOOPS(V)                                                                               \
    static BENCH_NOINLINE uint64_t churn_lay_##V(lay_pool *p, uint64_t *H, uint32_t n,             \
                                                 uint64_t seed, uint64_t iters, uint64_t tag) {    \
        uint64_t bad = 0;                                                                          \
        for (uint64_t it = 0; it < iters; it++) {                                                  \
            uint32_t k = bench_below(&seed, n);                                                    \
            bad += !lay_free_##V(p, H[k]);                                                         \
            uint64_t h;                                                                            \
            char *o = lay_alloc_##V(p, &h);                                                        \
            if (o == NULL) return bad + 1;                                                         \
            FA(o) = k;                                                                             \
            FB(o) = tag + it;                                                                      \
            H[k] = h;                                                                              \
        }                                                                                          \
        return bad;                                                                                \
    }                                                                                              \
    static BENCH_NOINLINE uint64_t lookup_lay_##V(const lay_pool *p, const uint64_t *H,            \
                                                  uint32_t n, uint64_t seed, uint64_t iters,       \
                                                  uint64_t *bad) {                                 \
        uint64_t sum = 0;                                                                          \
        for (uint64_t it = 0; it < iters; it++) {                                                  \
            uint32_t k = bench_below(&seed, n);                                                    \
            const char *o = lay_get_##V(p, H[k]);                                                  \
            if (o == NULL) {                                                                       \
                ++*bad;                                                                            \
                continue;                                                                          \
            }                                                                                      \
            sum += FA(o) + FB(o);                                                                  \
        }                                                                                          \
        return sum;                                                                                \
    }

/* F: A + C with round 1's deferred swap-delete: a free leaves the freed slot
 * in its live place (pending) and the next alloc takes it back there, so a
 * free + alloc writes no roster entry; any other free settles the swap first.
 * It broke the iteration promise (an object allocated after a free landed at
 * the freed object's old place, possibly ahead of a loop's index): kept here
 * only to show what the eager swap-delete costs against it. */
static inline void lay_settle_F(lay_pool *p) {
    uint32_t q = p->pending - 1, pos = p->rec[q].pos, n = p->count, j = p->roster[n];
    p->roster[pos] = j;
    p->rec[j].pos = pos;
    p->roster[n] = q;
    p->rec[q].pos = n;
    p->pending = 0;
}
static inline char *lay_alloc_F(lay_pool *p, uint64_t *h) {
    uint32_t i;
    if (p->pending != 0) {
        i = p->pending - 1;
        p->pending = 0;
        p->count++;
    } else {
        if (OPOOL_UNLIKELY(p->count == p->limit)) return NULL;
        i = p->roster[p->count++];
    }
    uint32_t g = ++p->rec[i].gen;
    *h = (uint64_t)g << 32 | i;
    return LAY_C_ADDR(p, i);
}
static inline bool lay_free_F(lay_pool *p, uint64_t h) {
    uint32_t i = (uint32_t)h, g = (uint32_t)(h >> 32);
    if (OPOOL_UNLIKELY(i >= p->nslots)) return false;
    if (OPOOL_UNLIKELY(p->rec[i].gen != g || !(g & 1))) return false;
    if (p->pending != 0) lay_settle_F(p);
    p->count--;
    p->pending = i + 1;
    p->rec[i].gen = g + 1;
    return true;
}
static inline char *lay_get_F(const lay_pool *p, uint64_t h) {
    uint32_t i = (uint32_t)h, g = (uint32_t)(h >> 32);
    if (OPOOL_UNLIKELY(i >= p->nslots)) return NULL;
    if (OPOOL_UNLIKELY(p->rec[i].gen != g || !(g & 1))) return NULL;
    return LAY_C_ADDR(p, i);
}
LAY_LOOPS(F)

LAY_DEFINE(AC, LAY_A_GEN, LAY_A_POS, LAY_C_ADDR)
LAY_DEFINE(AD, LAY_A_GEN, LAY_A_POS, LAY_D_ADDR)
LAY_DEFINE(BC, LAY_B_GEN, LAY_B_POS, LAY_C_ADDR)
LAY_DEFINE(BD, LAY_B_GEN, LAY_B_POS, LAY_D_ADDR)
LAY_DEFINE(AE, LAY_A_GEN, LAY_A_POS, LAY_E_ADDR)

/* G: the free writes the moved entry's record and the freed slot's at once,
 * as AC does, but queues the write into the hole (a random line of the
 * roster), prefetching that line for writing, and carries out the write it
 * queued LAY_G_DEPTH frees earlier, by then in cache. Every queued position
 * is below count; before the free reads the last entry, it carries out the
 * whole queue if a queued position may be that one (q_max, the highest
 * queued since the queue was last empty). An alloc reads the free stack's
 * top, never queued. A loop over the list would carry out the queue before
 * reading it: one more branch a visit, not measured here. */
static inline void lay_flush_G(lay_pool *p) {
    for (uint32_t k = 0; k < p->q_len; k++) {
        uint32_t at = (p->q_head + k) % LAY_G_DEPTH;
        p->roster[p->q_pos[at]] = p->q_slot[at];
    }
    p->q_len = p->q_head = p->q_max = 0;
}
static inline char *lay_alloc_G(lay_pool *p, uint64_t *h) { return lay_alloc_AC(p, h); }
static inline bool lay_free_G(lay_pool *p, uint64_t h) {
    uint32_t i = (uint32_t)h, g = (uint32_t)(h >> 32);
    if (OPOOL_UNLIKELY(i >= p->nslots)) return false;
    if (OPOOL_UNLIKELY(p->rec[i].gen != g || !(g & 1))) return false;
    uint32_t last = --p->count, pos = p->rec[i].pos;
    if (p->q_len != 0 && last <= p->q_max) lay_flush_G(p);
    uint32_t j = p->roster[last];
    p->rec[j].pos = pos;
    p->roster[last] = i;
    p->rec[i].pos = last;
    p->rec[i].gen = g + 1;
    if (pos == last) return true; /* the last entry itself: no hole */
    __builtin_prefetch(&p->roster[pos], 1);
    uint32_t at;
    if (p->q_len == LAY_G_DEPTH) { /* carry out the oldest; the newest takes its place */
        at = p->q_head;
        p->roster[p->q_pos[at]] = p->q_slot[at];
        p->q_head = (at + 1) % LAY_G_DEPTH;
    } else {
        at = (p->q_head + p->q_len++) % LAY_G_DEPTH;
    }
    p->q_pos[at] = pos;
    p->q_slot[at] = j;
    if (pos > p->q_max) p->q_max = pos;
    return true;
}
static inline char *lay_get_G(const lay_pool *p, uint64_t h) { return lay_get_AC(p, h); }
LAY_LOOPS(G)

/* H: ideal_gen's alloc and free over A's record; the free stack is the
 * roster's [count, limit), top at count, and nothing else is kept. The
 * alloc is A + C's (take the top, step its generation); the free only
 * pushes the slot back, with no list to keep. */
static inline char *lay_alloc_H(lay_pool *p, uint64_t *h) { return lay_alloc_AC(p, h); }
static inline bool lay_free_H(lay_pool *p, uint64_t h) {
    uint32_t i = (uint32_t)h, g = (uint32_t)(h >> 32);
    if (OPOOL_UNLIKELY(i >= p->nslots)) return false;
    if (OPOOL_UNLIKELY(p->rec[i].gen != g || !(g & 1))) return false;
    p->rec[i].gen = g + 1;
    p->roster[--p->count] = i;
    return true;
}
static inline char *lay_get_H(const lay_pool *p, uint64_t h) { return lay_get_AC(p, h); }
LAY_LOOPS(H)

/* ==== churn and lookup loops, one per subject =============================
 * churn: k = random slot of the handle array; free handles[k]; allocate;
 * write a = k and b = tag + iteration; handles[k] = the new handle. Returns
 * the number of failed operations (must be 0).
 * lookup: sum a + b of the object of handles[random k]; *bad counts lookups
 * that failed (must be 0). */

static BENCH_NOINLINE uint64_t churn_ideal(ideal_pool *p, uint32_t *H, uint32_t n, uint64_t seed,
                                           uint64_t iters, uint64_t tag) {
    for (uint64_t it = 0; it < iters; it++) {
        uint32_t k = bench_below(&seed, n);
        ideal_free(p, H[k]);
        uint32_t i = ideal_alloc(p);
        char *o = ideal_at(p, i);
        FA(o) = k;
        FB(o) = tag + it;
        H[k] = i;
    }
    return 0;
}

static BENCH_NOINLINE uint64_t churn_igen(igen_pool *p, uint64_t *H, uint32_t n, uint64_t seed,
                                          uint64_t iters, uint64_t tag) {
    uint64_t bad = 0;
    for (uint64_t it = 0; it < iters; it++) {
        uint32_t k = bench_below(&seed, n);
        bad += !igen_free(p, H[k]);
        uint64_t h;
        char *o = igen_alloc(p, &h);
        if (o == NULL) return bad + 1;
        FA(o) = k;
        FB(o) = tag + it;
        H[k] = h;
    }
    return bad;
}

static BENCH_NOINLINE uint64_t churn_opool(opool *p, opool_handle *H, uint32_t n, uint64_t seed,
                                           uint64_t iters, uint64_t tag) {
    uint64_t bad = 0;
    for (uint64_t it = 0; it < iters; it++) {
        uint32_t k = bench_below(&seed, n);
        bad += opool_free(p, H[k]) != OPOOL_OK;
        opool_handle h;
        char *o = opool_alloc(p, &h);
        if (o == NULL) return bad + 1;
        FA(o) = k;
        FB(o) = tag + it;
        H[k] = h;
    }
    return bad;
}

static BENCH_NOINLINE uint64_t churn_malloc(char **H, uint32_t n, size_t size, uint64_t seed,
                                            uint64_t iters, uint64_t tag) {
    for (uint64_t it = 0; it < iters; it++) {
        uint32_t k = bench_below(&seed, n);
        free(H[k]);
        char *o = malloc(size);
        if (o == NULL) return 1;
        FA(o) = k;
        FB(o) = tag + it;
        H[k] = o;
    }
    return 0;
}

static BENCH_NOINLINE uint64_t lookup_ideal(const ideal_pool *p, const uint32_t *H, uint32_t n,
                                            uint64_t seed, uint64_t iters) {
    uint64_t sum = 0;
    for (uint64_t it = 0; it < iters; it++) {
        uint32_t k = bench_below(&seed, n);
        const char *o = ideal_at(p, H[k]);
        sum += FA(o) + FB(o);
    }
    return sum;
}

static BENCH_NOINLINE uint64_t lookup_igen(const igen_pool *p, const uint64_t *H, uint32_t n,
                                           uint64_t seed, uint64_t iters, uint64_t *bad) {
    uint64_t sum = 0;
    for (uint64_t it = 0; it < iters; it++) {
        uint32_t k = bench_below(&seed, n);
        const char *o = igen_get(p, H[k]);
        if (o == NULL) {
            ++*bad;
            continue;
        }
        sum += FA(o) + FB(o);
    }
    return sum;
}

static BENCH_NOINLINE uint64_t lookup_opool(const opool *p, const opool_handle *H, uint32_t n,
                                            uint64_t seed, uint64_t iters, uint64_t *bad) {
    uint64_t sum = 0;
    for (uint64_t it = 0; it < iters; it++) {
        uint32_t k = bench_below(&seed, n);
        const char *o = opool_get(p, H[k]);
        if (o == NULL) {
            ++*bad;
            continue;
        }
        sum += FA(o) + FB(o);
    }
    return sum;
}

static BENCH_NOINLINE uint64_t lookup_malloc(char *const *H, uint32_t n, uint64_t seed,
                                             uint64_t iters) {
    uint64_t sum = 0;
    for (uint64_t it = 0; it < iters; it++) {
        uint32_t k = bench_below(&seed, n);
        const char *o = H[k]; /* unvalidated: a stale pointer would be read all the same */
        sum += FA(o) + FB(o);
    }
    return sum;
}

/* churn_P and lookup_P: churn_opool's and lookup_opool's loops over a fixed
 * typed pool P, through P_free, P_alloc and P_get. */
#define FIXED_CL_LOOPS(P)                                                                          \
    static BENCH_NOINLINE uint64_t churn_##P(P *p, P##_handle *H, uint32_t n, uint64_t seed,       \
                                             uint64_t iters, uint64_t tag) {                       \
        uint64_t bad = 0;                                                                          \
        for (uint64_t it = 0; it < iters; it++) {                                                  \
            uint32_t k = bench_below(&seed, n);                                                    \
            bad += P##_free(p, H[k]) != OPOOL_OK;                                                  \
            P##_handle h;                                                                          \
            bench_obj *o = P##_alloc(p, &h);                                                       \
            if (o == NULL) return bad + 1;                                                         \
            FA(o) = k;                                                                             \
            FB(o) = tag + it;                                                                      \
            H[k] = h;                                                                              \
        }                                                                                          \
        return bad;                                                                                \
    }                                                                                              \
    static BENCH_NOINLINE uint64_t lookup_##P(const P *p, const P##_handle *H, uint32_t n,         \
                                              uint64_t seed, uint64_t iters, uint64_t *bad) {      \
        uint64_t sum = 0;                                                                          \
        for (uint64_t it = 0; it < iters; it++) {                                                  \
            uint32_t k = bench_below(&seed, n);                                                    \
            const bench_obj *o = P##_get(p, H[k]);                                                 \
            if (o == NULL) {                                                                       \
                ++*bad;                                                                            \
                continue;                                                                          \
            }                                                                                      \
            sum += FA(o) + FB(o);                                                                  \
        }                                                                                          \
        return sum;                                                                                \
    }
FIXED_CL_LOOPS(fixed_list)
FIXED_CL_LOOPS(fixed_bare)

/* ==== the case driver ====================================================== */

/* Subjects of one case in this process. The most so far: churn's 8 C
 * subjects + 4 C++ peers, and the 12 of the layout experiment. run_case and
 * the setups fail loudly beyond it. */
#define MAX_SUBJ 16

/* Runs one repetition of subject s; returns ns per op, sets *check. */
typedef double (*rep_fn)(void *ctx, int s, int rep, uint64_t *check);

typedef struct case_def {
    const char *workload;
    uint32_t n;
    uint64_t ops; /* per timed repetition, for the CSV */
    int nsubj;
    const char *name[MAX_SUBJ];
    const char *note[MAX_SUBJ];
    int ref1, ref2; /* subject indices of the ratio references; -1 = none */
    int reps;       /* recorded repetitions; 0 = opt.reps */
    bool no_warmup; /* no discarded repetition 0 (the figure is not a time) */
} case_def;

/* What a subject in another process is compared with (see run_peers): per
 * case, the reference medians and the checksum every subject matched. */
typedef struct case_ref {
    char workload[40];
    uint32_t n;
    size_t size;       /* object size */
    int reps;          /* recorded repetitions */
    double ref1, ref2; /* medians, ns per op; < 0 = none */
    uint64_t checksum;
} case_ref;

/* 19 cases per object size today */
#define MAX_CASES 96
static case_ref g_cases[MAX_CASES];
static int g_ncases;

static void record_case(const case_def *c, const bench_row *rows) {
    if (g_ncases >= MAX_CASES) fail("too many cases");
    case_ref *k = &g_cases[g_ncases++];
    snprintf(k->workload, sizeof k->workload, "%s", c->workload);
    k->n = c->n;
    k->size = opt.size;
    k->reps = rows[0].reps;
    k->ref1 = c->ref1 >= 0 ? rows[c->ref1].median : -1;
    k->ref2 = c->ref2 >= 0 ? rows[c->ref2].median : -1;
    k->checksum = rows[0].checksum;
}

static void run_case(const case_def *c, rep_fn fn, void *ctx) {
    int reps = c->reps > 0 ? c->reps : opt.reps;
    if (c->nsubj < 1 || c->nsubj > MAX_SUBJ)
        fail("%s N=%u: %d subjects, MAX_SUBJ is %d", c->workload, c->n, c->nsubj, MAX_SUBJ);
    if (g_nrows + c->nsubj > MAX_ROWS) fail("too many result rows");
    bench_row *rows = &g_rows[g_nrows];
    g_nrows += c->nsubj;
    for (int s = 0; s < c->nsubj; s++) {
        memset(&rows[s], 0, sizeof rows[s]);
        snprintf(rows[s].workload, sizeof rows[s].workload, "%s", c->workload);
        snprintf(rows[s].subject, sizeof rows[s].subject, "%s", c->name[s]);
        snprintf(rows[s].note, sizeof rows[s].note, "%s", c->note[s] ? c->note[s] : "");
        rows[s].n = c->n;
        rows[s].size = opt.size;
        rows[s].ops = c->ops;
        rows[s].reps = reps;
    }
    uint64_t t0 = bench_now_ns();
    for (int rep = c->no_warmup ? 1 : 0; rep <= reps; rep++) {
        uint64_t check[MAX_SUBJ];
        double ns[MAX_SUBJ];
        for (int j = 0; j < c->nsubj; j++) {
            int s = (j + rep) % c->nsubj;
            ns[s] = fn(ctx, s, rep, &check[s]);
        }
        for (int s = 1; s < c->nsubj; s++)
            if (check[s] != check[0])
                fail("%s N=%u repetition %d: checksum of %s is %016" PRIx64 ", %s has %016" PRIx64
                     ": the subjects did not do the same work",
                     c->workload, c->n, rep, c->name[s], check[s], c->name[0], check[0]);
        if (rep > 0)
            for (int s = 0; s < c->nsubj; s++) {
                rows[s].ns[rep - 1] = ns[s];
                rows[s].checksum += check[s];
            }
        bench_sink += check[0];
        if (g_tty)
            fprintf(stderr, "\r  %-17s N=%-8u %3zu B  %s %d/%d  (%.1f s)   ", c->workload, c->n,
                    opt.size, rep == 0 ? "warm-up" : "rep", rep, reps,
                    (double)(bench_now_ns() - t0) / 1e9);
    }
    fprintf(stderr, "%s  %-17s N=%-8u %3zu B  %d reps done in %.1f s (total %.1f s)\n",
            g_tty ? "\r" : "", c->workload, c->n, opt.size, reps,
            (double)(bench_now_ns() - t0) / 1e9, (double)(bench_now_ns() - g_t_start) / 1e9);
    for (int s = 0; s < c->nsubj; s++) bench_row_finish(&rows[s]);
    for (int s = 0; s < c->nsubj; s++) {
        rows[s].ratio_ref1 = c->ref1 >= 0 ? rows[s].median / rows[c->ref1].median : -1;
        rows[s].ratio_ref2 = c->ref2 >= 0 ? rows[s].median / rows[c->ref2].median : -1;
    }
    record_case(c, rows);
}

/* ==== churn + lookup: state ================================================ */

enum {
    S_IDEAL,
    S_IGEN,
    S_OPOOL,
    S_MALLOC,
    S_OPOOL_GROWN,      /* opool grown from capacity 32 to N: objects beyond chunk 0 */
    S_OPOOL_BARE,       /* opool with OPOOL_NO_LIVE_LIST */
    S_OPOOL_FIXED,      /* opool as OPOOL_TYPED_FIXED(fixed_list, .., 0) */
    S_OPOOL_FIXED_BARE, /* opool as OPOOL_TYPED_FIXED(fixed_bare, .., OPOOL_NO_LIVE_LIST) */
    S_LAY_AC,
    S_LAY_AD,
    S_LAY_BC,
    S_LAY_BD,
    S_LAY_AE,
    S_LAY_F,
    S_LAY_G,
    S_LAY_H,
    S_BOOST_OBJ, /* S_BOOST_OBJ + bench_peer_kind: the C++ peers */
    S_BOOST_POOL,
    S_COLONY,
    S_OPL,          /* opl::pool<T>, include/opool.hpp */
    S_OPOOL_ZERO,   /* opool with OPOOL_ZERO */
    S_OPOOL_POISON, /* opool with OPOOL_POISON */
};
#define N_LAY 8
#define N_PEER 4

typedef struct cl_state {
    uint32_t n;
    int nsubj;
    int subj[MAX_SUBJ]; /* subject ids in case order */
    uint64_t churn_iters, churn_warm, lookup_iters, lookup_warm;
    ideal_pool ideal;
    uint32_t *h_ideal;
    igen_pool igen;
    uint64_t *h_igen;
    opool *op[5]; /* by opool_variant */
    opool_handle *h_op[5];
    fixed_list *fx_list; /* S_OPOOL_FIXED */
    fixed_list_handle *h_fx_list;
    fixed_bare *fx_bare; /* S_OPOOL_FIXED_BARE */
    fixed_bare_handle *h_fx_bare;
    char **h_mal;
    lay_pool lay[N_LAY]; /* AC, AD, BC, BD, AE, F, G, H */
    uint64_t *h_lay[N_LAY];
#if BENCH_PEERS
    bench_peer *peer[N_PEER]; /* by id - S_BOOST_OBJ; each holds its handles */
#endif
} cl_state;

/* The malloc subject: "malloc" (glibc's) in opool_bench, the allocator's
 * name in its own build (opool_bench_mimalloc, ...; see bench_child.h). */
#if BENCH_ALLOC == BENCH_ALLOC_GLIBC
#define MALLOC_SUBJECT "malloc"
#else
#define MALLOC_SUBJECT BENCH_ALLOC_NAME
#endif

/* The opool subjects' index in a state's op[] and h_op[]: plain, grown,
 * without a live list, with OPOOL_ZERO, with OPOOL_POISON; -1 for the others. */
static int opool_variant(int id) {
    static const int ids[5] = {S_OPOOL, S_OPOOL_GROWN, S_OPOOL_BARE, S_OPOOL_ZERO, S_OPOOL_POISON};
    for (int v = 0; v < 5; v++)
        if (ids[v] == id) return v;
    return -1;
}

/* A pool of variant v for n objects, empty. */
static opool *make_opool_variant(int v, uint32_t n) {
    static const uint32_t flags[5] = {0, 0, OPOOL_NO_LIVE_LIST, OPOOL_ZERO, OPOOL_POISON};
    return v == 1 ? make_opool_grown(n) : make_opool_flags(n, flags[v]);
}

static const char *subject_name(int id) {
    static const char *const names[] = {"ideal",
                                        "ideal_gen",
                                        "opool",
                                        MALLOC_SUBJECT,
                                        "opool grown",
                                        "opool no live list",
                                        "opool fixed",
                                        "opool fixed no live list",
                                        "A rec8 + C flat",
                                        "A rec8 + D chunk",
                                        "B split + C flat",
                                        "B split + D chunk",
                                        "A rec8 + E br-chunk",
                                        "F = AC, deferred swap",
                                        "G = AC, batched hole",
                                        "H = ideal_gen, rec8",
                                        "boost::object_pool",
                                        "boost::pool<>",
                                        "plf::colony",
                                        "opl::pool<T>",
                                        "opool OPOOL_ZERO",
                                        "opool OPOOL_POISON"};
    return names[id];
}

#if BENCH_PEERS
/* A C++ peer for n objects of opt.size bytes, empty. */
static bench_peer *make_peer(int id, uint32_t n) {
    bench_peer *p = bench_peer_create((bench_peer_kind)(id - S_BOOST_OBJ), opt.size, n);
    if (p == NULL) fail("%s was not built for %zu-byte objects", subject_name(id), opt.size);
    return p;
}
#endif

/* Is C++ peer id built into this program, and does it run workload
 * (bench_peers.h: bench_peer_skip)? */
static bool peer_runs(int id, const char *workload) {
#if BENCH_PEERS
    bench_peer_kind k = (bench_peer_kind)(id - S_BOOST_OBJ);
    return bench_peer_version(k) != NULL && bench_peer_skip(k, workload) == NULL;
#else
    (void)id;
    (void)workload;
    return false;
#endif
}

/* Appends to ids the peers that run workload; returns the new count. */
static int add_peers(int *ids, int nids, const char *workload) {
    for (int id = S_BOOST_OBJ; id < S_BOOST_OBJ + N_PEER; id++)
        if (peer_runs(id, workload)) ids[nids++] = id;
    return nids;
}

static void cl_setup(cl_state *st) {
    uint32_t n = st->n;
    for (int j = 0; j < st->nsubj; j++) {
        int id = st->subj[j];
        switch (id) {
        case S_IDEAL:
            ideal_init(&st->ideal, n, opt.size);
            st->h_ideal = bench_xalloc((size_t)n * sizeof(uint32_t));
            for (uint32_t k = 0; k < n; k++) {
                uint32_t i = ideal_alloc(&st->ideal);
                char *o = ideal_at(&st->ideal, i);
                FA(o) = k;
                FB(o) = 0;
                st->h_ideal[k] = i;
            }
            break;
        case S_IGEN:
            igen_init(&st->igen, n, opt.size);
            st->h_igen = bench_xalloc((size_t)n * sizeof(uint64_t));
            for (uint32_t k = 0; k < n; k++) {
                char *o = igen_alloc(&st->igen, &st->h_igen[k]);
                FA(o) = k;
                FB(o) = 0;
            }
            break;
        case S_OPOOL:
        case S_OPOOL_GROWN:
        case S_OPOOL_BARE:
        case S_OPOOL_ZERO:
        case S_OPOOL_POISON: {
            int v = opool_variant(id);
            opool *p = st->op[v] = make_opool_variant(v, n);
            opool_handle *h = st->h_op[v] = bench_xalloc((size_t)n * sizeof(opool_handle));
            for (uint32_t k = 0; k < n; k++) {
                char *o = opool_alloc(p, &h[k]);
                if (o == NULL) fail("opool_alloc failed while pre-filling %u objects", n);
                FA(o) = k;
                FB(o) = 0;
            }
            break;
        }
        case S_OPOOL_FIXED:
            st->fx_list = make_fixed_list(n);
            st->h_fx_list = bench_xalloc((size_t)n * sizeof(fixed_list_handle));
            for (uint32_t k = 0; k < n; k++) {
                bench_obj *o = fixed_list_alloc(st->fx_list, &st->h_fx_list[k]);
                if (o == NULL) fail("fixed_list_alloc failed while pre-filling %u objects", n);
                FA(o) = k;
                FB(o) = 0;
            }
            break;
        case S_OPOOL_FIXED_BARE:
            st->fx_bare = make_fixed_bare(n);
            st->h_fx_bare = bench_xalloc((size_t)n * sizeof(fixed_bare_handle));
            for (uint32_t k = 0; k < n; k++) {
                bench_obj *o = fixed_bare_alloc(st->fx_bare, &st->h_fx_bare[k]);
                if (o == NULL) fail("fixed_bare_alloc failed while pre-filling %u objects", n);
                FA(o) = k;
                FB(o) = 0;
            }
            break;
        case S_MALLOC:
            st->h_mal = bench_xalloc((size_t)n * sizeof(char *));
            for (uint32_t k = 0; k < n; k++) {
                char *o = malloc(opt.size);
                if (o == NULL) fail("malloc failed while pre-filling");
                FA(o) = k;
                FB(o) = 0;
                st->h_mal[k] = o;
            }
            break;
#if BENCH_PEERS
        case S_BOOST_OBJ:
        case S_BOOST_POOL:
        case S_COLONY:
        case S_OPL:
            st->peer[id - S_BOOST_OBJ] = make_peer(id, n);
            if (bench_peer_fill(st->peer[id - S_BOOST_OBJ], 0) != 0)
                fail("%s failed while pre-filling %u objects", subject_name(id), n);
            break;
#endif
        default: {
            unsigned v = (unsigned)(id - S_LAY_AC) % N_LAY;
            lay_pool *p = &st->lay[v];
            lay_init(p, n, opt.size, v == 2 || v == 3);
            st->h_lay[v] = bench_xalloc((size_t)n * sizeof(uint64_t));
            for (uint32_t k = 0; k < n; k++) {
                uint64_t *h = &st->h_lay[v][k];
                char *o = v == 0   ? lay_alloc_AC(p, h)
                          : v == 1 ? lay_alloc_AD(p, h)
                          : v == 2 ? lay_alloc_BC(p, h)
                          : v == 3 ? lay_alloc_BD(p, h)
                          : v == 4 ? lay_alloc_AE(p, h)
                          : v == 5 ? lay_alloc_F(p, h)
                          : v == 6 ? lay_alloc_G(p, h)
                                   : lay_alloc_H(p, h);
                FA(o) = k;
                FB(o) = 0;
            }
        }
        }
    }
}

static void cl_teardown(cl_state *st) {
    for (int j = 0; j < st->nsubj; j++) {
        int id = st->subj[j];
        switch (id) {
        case S_IDEAL:
            ideal_fini(&st->ideal);
            free(st->h_ideal);
            break;
        case S_IGEN:
            igen_fini(&st->igen);
            free(st->h_igen);
            break;
        case S_OPOOL:
        case S_OPOOL_GROWN:
        case S_OPOOL_BARE:
        case S_OPOOL_ZERO:
        case S_OPOOL_POISON:
            end_opool(st->op[opool_variant(id)]);
            free(st->h_op[opool_variant(id)]);
            break;
        case S_OPOOL_FIXED:
            end_fixed_list(st->fx_list);
            free(st->h_fx_list);
            break;
        case S_OPOOL_FIXED_BARE:
            end_fixed_bare(st->fx_bare);
            free(st->h_fx_bare);
            break;
        case S_MALLOC:
            for (uint32_t k = 0; k < st->n; k++) free(st->h_mal[k]);
            free(st->h_mal);
            break;
#if BENCH_PEERS
        case S_BOOST_OBJ:
        case S_BOOST_POOL:
        case S_COLONY:
        case S_OPL:
            bench_peer_destroy(st->peer[id - S_BOOST_OBJ]);
            break;
#endif
        default:
            lay_fini(&st->lay[(unsigned)(id - S_LAY_AC) % N_LAY]);
            free(st->h_lay[(unsigned)(id - S_LAY_AC) % N_LAY]);
        }
    }
}

/* The object of handles[k] of subject id, through that subject's own lookup. */
static const char *cl_object(const cl_state *st, int id, uint32_t k) {
    switch (id) {
    case S_IDEAL:
        return ideal_at(&st->ideal, st->h_ideal[k]);
    case S_IGEN:
        return igen_get(&st->igen, st->h_igen[k]);
    case S_OPOOL:
    case S_OPOOL_GROWN:
    case S_OPOOL_BARE:
    case S_OPOOL_ZERO:
    case S_OPOOL_POISON:
        return opool_get(st->op[opool_variant(id)], st->h_op[opool_variant(id)][k]);
    case S_OPOOL_FIXED:
        return object_fixed_list(st->fx_list, st->h_fx_list[k]);
    case S_OPOOL_FIXED_BARE:
        return object_fixed_bare(st->fx_bare, st->h_fx_bare[k]);
    case S_MALLOC:
        return st->h_mal[k];
#if BENCH_PEERS
    case S_BOOST_OBJ:
    case S_BOOST_POOL:
    case S_COLONY:
    case S_OPL:
        return bench_peer_object(st->peer[id - S_BOOST_OBJ], k);
#endif
    case S_LAY_AC:
        return lay_get_AC(&st->lay[0], st->h_lay[0][k]);
    case S_LAY_AD:
        return lay_get_AD(&st->lay[1], st->h_lay[1][k]);
    case S_LAY_BC:
        return lay_get_BC(&st->lay[2], st->h_lay[2][k]);
    case S_LAY_BD:
        return lay_get_BD(&st->lay[3], st->h_lay[3][k]);
    case S_LAY_AE:
        return lay_get_AE(&st->lay[4], st->h_lay[4][k]);
    case S_LAY_F:
        return lay_get_F(&st->lay[5], st->h_lay[5][k]);
    case S_LAY_G:
        return lay_get_G(&st->lay[6], st->h_lay[6][k]);
    default:
        return lay_get_H(&st->lay[7], st->h_lay[7][k]);
    }
}

/* Untimed, for the roster layouts but F (whose deferred slot sits outside
 * the list) and H (no list): G's queued writes all fall inside the list
 * [0, count), and, carried out, every live slot's position names it there;
 * as many live slots as count. The live list is what an iteration would walk, so this is
 * the promise's bookkeeping, checked. */
static void lay_check(const lay_pool *p, const char *name, uint32_t n) {
    for (uint32_t k = 0; k < p->q_len; k++) {
        uint32_t q = (p->q_head + k) % LAY_G_DEPTH;
        if (p->q_pos[q] >= p->count)
            fail("%s N=%u: a queued write at %u, past the list's end %u", name, n, p->q_pos[q],
                 p->count);
    }
    uint32_t live = 0;
    for (uint32_t i = 0; i < p->nslots; i++) {
        uint32_t gen = p->rec ? p->rec[i].gen : p->gen[i];
        uint32_t pos = p->rec ? p->rec[i].pos : p->pos[i];
        if (!(gen & 1)) continue;
        live++;
        if (pos >= p->count) fail("%s N=%u: live slot %u outside the list (%u)", name, n, i, pos);
        uint32_t at = p->roster[pos];
        for (uint32_t k = 0; k < p->q_len; k++) { /* oldest first: the last one wins */
            uint32_t q = (p->q_head + k) % LAY_G_DEPTH;
            if (p->q_pos[q] == pos) at = p->q_slot[q];
        }
        if (at != i) fail("%s N=%u: live slot %u is not at its list position %u", name, n, i, pos);
    }
    if (live != p->count) fail("%s N=%u: %u live slots, count %u", name, n, live, p->count);
}

/* Untimed: every handle must reach the object written for its slot. */
static uint64_t cl_verify(const cl_state *st, int id) {
    if (id >= S_LAY_AC && id <= S_LAY_G && id != S_LAY_F)
        lay_check(&st->lay[id - S_LAY_AC], subject_name(id), st->n);
    uint64_t sum = 0;
    for (uint32_t k = 0; k < st->n; k++) {
        const char *o = cl_object(st, id, k);
        if (o == NULL || FA(o) != k)
            fail("%s N=%u: handles[%u] does not reach its object after churn", subject_name(id),
                 st->n, k);
        sum += bench_mix(FA(o), FB(o));
    }
    return sum;
}

static uint64_t churn_subject(cl_state *st, int id, uint64_t seed, uint64_t iters, uint64_t tag) {
    uint32_t n = st->n;
    switch (id) {
    case S_IDEAL:
        return churn_ideal(&st->ideal, st->h_ideal, n, seed, iters, tag);
    case S_IGEN:
        return churn_igen(&st->igen, st->h_igen, n, seed, iters, tag);
    case S_OPOOL:
    case S_OPOOL_GROWN:
    case S_OPOOL_BARE:
    case S_OPOOL_ZERO:
    case S_OPOOL_POISON:
        return churn_opool(st->op[opool_variant(id)], st->h_op[opool_variant(id)], n, seed, iters,
                           tag);
    case S_OPOOL_FIXED:
        return churn_fixed_list(st->fx_list, st->h_fx_list, n, seed, iters, tag);
    case S_OPOOL_FIXED_BARE:
        return churn_fixed_bare(st->fx_bare, st->h_fx_bare, n, seed, iters, tag);
    case S_MALLOC:
        return churn_malloc(st->h_mal, n, opt.size, seed, iters, tag);
#if BENCH_PEERS
    case S_BOOST_OBJ:
    case S_BOOST_POOL:
    case S_COLONY:
    case S_OPL:
        return bench_peer_churn(st->peer[id - S_BOOST_OBJ], seed, iters, tag);
#endif
    case S_LAY_AC:
        return churn_lay_AC(&st->lay[0], st->h_lay[0], n, seed, iters, tag);
    case S_LAY_AD:
        return churn_lay_AD(&st->lay[1], st->h_lay[1], n, seed, iters, tag);
    case S_LAY_BC:
        return churn_lay_BC(&st->lay[2], st->h_lay[2], n, seed, iters, tag);
    case S_LAY_BD:
        return churn_lay_BD(&st->lay[3], st->h_lay[3], n, seed, iters, tag);
    case S_LAY_AE:
        return churn_lay_AE(&st->lay[4], st->h_lay[4], n, seed, iters, tag);
    case S_LAY_F:
        return churn_lay_F(&st->lay[5], st->h_lay[5], n, seed, iters, tag);
    case S_LAY_G:
        return churn_lay_G(&st->lay[6], st->h_lay[6], n, seed, iters, tag);
    default:
        return churn_lay_H(&st->lay[7], st->h_lay[7], n, seed, iters, tag);
    }
}

static uint64_t lookup_subject(const cl_state *st, int id, uint64_t seed, uint64_t iters,
                               uint64_t *bad) {
    uint32_t n = st->n;
    switch (id) {
    case S_IDEAL:
        return lookup_ideal(&st->ideal, st->h_ideal, n, seed, iters);
    case S_IGEN:
        return lookup_igen(&st->igen, st->h_igen, n, seed, iters, bad);
    case S_OPOOL:
    case S_OPOOL_GROWN:
    case S_OPOOL_BARE:
    case S_OPOOL_ZERO:
    case S_OPOOL_POISON:
        return lookup_opool(st->op[opool_variant(id)], st->h_op[opool_variant(id)], n, seed, iters,
                            bad);
    case S_OPOOL_FIXED:
        return lookup_fixed_list(st->fx_list, st->h_fx_list, n, seed, iters, bad);
    case S_OPOOL_FIXED_BARE:
        return lookup_fixed_bare(st->fx_bare, st->h_fx_bare, n, seed, iters, bad);
    case S_MALLOC:
        return lookup_malloc(st->h_mal, n, seed, iters);
#if BENCH_PEERS
    case S_BOOST_OBJ:
    case S_BOOST_POOL:
    case S_COLONY:
    case S_OPL:
        return bench_peer_lookup(st->peer[id - S_BOOST_OBJ], seed, iters);
#endif
    case S_LAY_AC:
        return lookup_lay_AC(&st->lay[0], st->h_lay[0], n, seed, iters, bad);
    case S_LAY_AD:
        return lookup_lay_AD(&st->lay[1], st->h_lay[1], n, seed, iters, bad);
    case S_LAY_BC:
        return lookup_lay_BC(&st->lay[2], st->h_lay[2], n, seed, iters, bad);
    case S_LAY_BD:
        return lookup_lay_BD(&st->lay[3], st->h_lay[3], n, seed, iters, bad);
    case S_LAY_AE:
        return lookup_lay_AE(&st->lay[4], st->h_lay[4], n, seed, iters, bad);
    case S_LAY_F:
        return lookup_lay_F(&st->lay[5], st->h_lay[5], n, seed, iters, bad);
    case S_LAY_G:
        return lookup_lay_G(&st->lay[6], st->h_lay[6], n, seed, iters, bad);
    default:
        return lookup_lay_H(&st->lay[7], st->h_lay[7], n, seed, iters, bad);
    }
}

static double churn_rep(void *ctx, int s, int rep, uint64_t *check) {
    cl_state *st = ctx;
    int id = st->subj[s];
    /* b values: distinct per repetition and phase, identical across subjects */
    uint64_t tag = (uint64_t)(rep + 1) << 40;
    uint64_t bad = churn_subject(st, id, bench_seed(W_CHURN, st->n, rep, 0), st->churn_warm, tag);
    uint64_t t0 = bench_now_ns();
    bad += churn_subject(st, id, bench_seed(W_CHURN, st->n, rep, 1), st->churn_iters,
                         tag | (uint64_t)1 << 39);
    uint64_t t1 = bench_now_ns();
    if (bad) fail("churn %s N=%u: %" PRIu64 " failed alloc/free", subject_name(id), st->n, bad);
    *check = cl_verify(st, id);
    return (double)(t1 - t0) / (double)st->churn_iters;
}

static double lookup_rep(void *ctx, int s, int rep, uint64_t *check) {
    cl_state *st = ctx;
    int id = st->subj[s];
    uint64_t bad = 0;
    bench_sink +=
        lookup_subject(st, id, bench_seed(W_LOOKUP, st->n, rep, 0), st->lookup_warm, &bad);
    uint64_t t0 = bench_now_ns();
    *check = lookup_subject(st, id, bench_seed(W_LOOKUP, st->n, rep, 1), st->lookup_iters, &bad);
    uint64_t t1 = bench_now_ns();
    if (bad)
        fail("lookup %s N=%u: %" PRIu64 " live handles rejected", subject_name(id), st->n, bad);
    return (double)(t1 - t0) / (double)st->lookup_iters;
}

static const char *churn_note(int id) {
    switch (id) {
    case S_MALLOC:
        return BENCH_ALLOC_NAME "; handles not validated";
    case S_OPOOL:
        return "FULL_FAIL, no flags";
    case S_OPOOL_GROWN:
        return "FULL_GROW from capacity 32";
    case S_OPOOL_BARE:
        return "FULL_FAIL, OPOOL_NO_LIVE_LIST";
    case S_OPOOL_ZERO:
        return "FULL_FAIL, OPOOL_ZERO";
    case S_OPOOL_POISON:
        return "FULL_FAIL, OPOOL_POISON";
    case S_OPOOL_FIXED:
        return "OPOOL_TYPED_FIXED, flags 0";
    case S_OPOOL_FIXED_BARE:
        return "OPOOL_TYPED_FIXED, OPOOL_NO_LIVE_LIST";
    case S_BOOST_OBJ:
        return "construct/destroy; T*, not validated";
    case S_BOOST_POOL:
        return "malloc/free; T*, not validated";
    case S_COLONY:
        return "emplace/erase; iterator, not validated";
    case S_OPL:
        return "emplace/erase; handle<T>, C++ over opool";
    default:
        return NULL;
    }
}

static const char *lookup_note(int id) {
    switch (id) {
    case S_IDEAL:
        return "unvalidated (no generation)";
    case S_MALLOC:
    case S_BOOST_OBJ:
    case S_BOOST_POOL:
        return "UNVALIDATED: plain pointer deref";
    case S_COLONY:
        return "UNVALIDATED: iterator deref";
    default:
        return "validated";
    }
}

/* Churn at n, then lookup on the state churn leaves. */
/* The live-object counts of churn and lookup (the ns-per-operation curve);
 * --quick stops at 100K, as n_bulk does. The children are told them (--ns). */
#define N_CL 4
static const uint32_t cl_n[N_CL] = {1000, 10000, 100000, 1000000};
static int n_cl(void) { return opt.quick ? N_CL - 1 : N_CL; }

static void run_churn_lookup(uint32_t n, const int *ids, int nids, int ref1, int ref2,
                             const char *suffix, bool do_churn, bool do_lookup) {
    cl_state st;
    memset(&st, 0, sizeof st);
    st.n = n;
    if (nids > MAX_SUBJ) fail("churn N=%u: %d subjects, MAX_SUBJ is %d", n, nids, MAX_SUBJ);
    st.nsubj = nids;
    memcpy(st.subj, ids, sizeof(int) * (size_t)nids);
    bool big = n >= 100000;
    /* many short repetitions rather than a few long ones: the median then
     * shrugs off the other tenants of a shared machine */
    st.churn_iters = opt.quick ? (big ? 500000 : 1000000) : (big ? 1000000 : 3000000);
    st.churn_warm = big ? st.churn_iters / 8 : 100000;
    st.lookup_iters = opt.quick ? (big ? 600000 : 2000000) : (big ? 1500000 : 5000000);
    st.lookup_warm = big ? st.lookup_iters / 8 : 100000;
    fprintf(stderr, "  setting up %d subjects at N=%u, %zu B...\n", nids, n, opt.size);
    cl_setup(&st);

    case_def c;
    memset(&c, 0, sizeof c);
    c.n = n;
    c.nsubj = nids;
    c.ref1 = ref1;
    c.ref2 = ref2;
    char wname[40];
    /* lookup needs churn's scrambled state: churn always runs first */
    snprintf(wname, sizeof wname, "churn%s", suffix);
    c.workload = wname;
    c.ops = st.churn_iters;
    for (int j = 0; j < nids; j++) {
        c.name[j] = subject_name(ids[j]);
        c.note[j] = churn_note(ids[j]);
    }
    if (do_churn) {
        run_case(&c, churn_rep, &st);
    } else {
        uint64_t dummy;
        for (int j = 0; j < nids; j++) churn_rep(&st, j, 0, &dummy);
    }
    if (do_lookup) {
        char lname[40];
        snprintf(lname, sizeof lname, "lookup%s", suffix);
        c.workload = lname;
        c.ops = st.lookup_iters;
        for (int j = 0; j < nids; j++) c.note[j] = lookup_note(ids[j]);
        run_case(&c, lookup_rep, &st);
    }
    cl_teardown(&st);
}

/* ==== fill then drain ======================================================= */

typedef struct fd_state {
    uint32_t n;
    ideal_pool ideal;
    uint32_t *h_ideal;
    igen_pool igen;
    uint64_t *h_igen;
    opool *op[5]; /* by opool_variant */
    opool_handle *h_op[5];
    fixed_list *fx_list; /* S_OPOOL_FIXED */
    fixed_list_handle *h_fx_list;
    fixed_bare *fx_bare; /* S_OPOOL_FIXED_BARE */
    fixed_bare_handle *h_fx_bare;
    char **h_mal;
    uint32_t *perm;
    int perm_rep;
    int subj[MAX_SUBJ]; /* subject ids in case order */
#if BENCH_PEERS
    bench_peer *peer[N_PEER]; /* by id - S_BOOST_OBJ */
#endif
} fd_state;

static BENCH_NOINLINE uint64_t fill_ideal(ideal_pool *p, uint32_t *H, uint32_t n, uint64_t tag) {
    for (uint32_t k = 0; k < n; k++) {
        uint32_t i = ideal_alloc(p);
        char *o = ideal_at(p, i);
        FA(o) = k;
        FB(o) = tag;
        H[k] = i;
    }
    return 0;
}

static BENCH_NOINLINE uint64_t drain_ideal(ideal_pool *p, const uint32_t *H, const uint32_t *perm,
                                           uint32_t n) {
    for (uint32_t j = 0; j < n; j++) ideal_free(p, H[perm[j]]);
    return 0;
}

static BENCH_NOINLINE uint64_t fill_igen(igen_pool *p, uint64_t *H, uint32_t n, uint64_t tag) {
    for (uint32_t k = 0; k < n; k++) {
        char *o = igen_alloc(p, &H[k]);
        if (o == NULL) return 1;
        FA(o) = k;
        FB(o) = tag;
    }
    return 0;
}

static BENCH_NOINLINE uint64_t drain_igen(igen_pool *p, const uint64_t *H, const uint32_t *perm,
                                          uint32_t n) {
    uint64_t bad = 0;
    for (uint32_t j = 0; j < n; j++) bad += !igen_free(p, H[perm[j]]);
    return bad;
}

static BENCH_NOINLINE uint64_t fill_opool(opool *p, opool_handle *H, uint32_t n, uint64_t tag) {
    for (uint32_t k = 0; k < n; k++) {
        char *o = opool_alloc(p, &H[k]);
        if (o == NULL) return 1;
        FA(o) = k;
        FB(o) = tag;
    }
    return 0;
}

static BENCH_NOINLINE uint64_t drain_opool(opool *p, const opool_handle *H, const uint32_t *perm,
                                           uint32_t n) {
    uint64_t bad = 0;
    for (uint32_t j = 0; j < n; j++) bad += opool_free(p, H[perm[j]]) != OPOOL_OK;
    return bad;
}

/* fill_P and drain_P: fill_opool's and drain_opool's loops over a fixed
 * typed pool P, through P_alloc and P_free. */
#define FIXED_FD_LOOPS(P)                                                                          \
    static BENCH_NOINLINE uint64_t fill_##P(P *p, P##_handle *H, uint32_t n, uint64_t tag) {       \
        for (uint32_t k = 0; k < n; k++) {                                                         \
            bench_obj *o = P##_alloc(p, &H[k]);                                                    \
            if (o == NULL) return 1;                                                               \
            FA(o) = k;                                                                             \
            FB(o) = tag;                                                                           \
        }                                                                                          \
        return 0;                                                                                  \
    }                                                                                              \
    static BENCH_NOINLINE uint64_t drain_##P(P *p, const P##_handle *H, const uint32_t *perm,      \
                                             uint32_t n) {                                         \
        uint64_t bad = 0;                                                                          \
        for (uint32_t j = 0; j < n; j++) bad += P##_free(p, H[perm[j]]) != OPOOL_OK;               \
        return bad;                                                                                \
    }
FIXED_FD_LOOPS(fixed_list)
FIXED_FD_LOOPS(fixed_bare)

static BENCH_NOINLINE uint64_t fill_malloc(char **H, uint32_t n, size_t size, uint64_t tag) {
    for (uint32_t k = 0; k < n; k++) {
        char *o = malloc(size);
        if (o == NULL) return 1;
        FA(o) = k;
        FB(o) = tag;
        H[k] = o;
    }
    return 0;
}

static BENCH_NOINLINE uint64_t drain_malloc(char *const *H, const uint32_t *perm, uint32_t n) {
    for (uint32_t j = 0; j < n; j++) free(H[perm[j]]);
    return 0;
}

/* Untimed: put malloc in the state a fresh pool is in -- memory mapped and
 * handed out in address order. After a random-order drain glibc's fast bins
 * are a random linked list, and the next fill would chase it miss by miss
 * (150+ ns per malloc here): a real cost of malloc, but the pools are reset
 * to a fresh order before each repetition, so malloc is too. malloc_trim
 * consolidates the bins (and unmaps pages, so they are faulted back in here,
 * untimed); freeing in reverse order leaves the free lists in address order. */
static void malloc_fresh(char **H, uint32_t n) {
#if defined(__GLIBC__) && BENCH_ALLOC == BENCH_ALLOC_GLIBC
    malloc_trim(0);
#endif
    for (uint32_t k = 0; k < n; k++) {
        H[k] = malloc(opt.size);
        if (H[k] == NULL) fail("malloc failed");
        FA(H[k]) = 0;
    }
    for (uint32_t k = n; k-- > 0;) free(H[k]);
}

static double filldrain_rep(void *ctx, int s, int rep, uint64_t *check) {
    fd_state *st = ctx;
    uint32_t n = st->n;
    int id = st->subj[s];
    if (st->perm_rep != rep) {
        bench_shuffle(st->perm, n, bench_seed(W_FILLDRAIN, n, rep, 0));
        st->perm_rep = rep;
    }
    uint64_t tag = (uint64_t)rep + 7, bad = 0, sum = 0;
    /* every repetition starts from a fresh free order: slots 0, 1, 2, ... */
    if (id == S_IDEAL) ideal_reset(&st->ideal);
    if (id == S_IGEN) igen_reset(&st->igen);
    int v = opool_variant(id);
    if (v >= 0) opool_clear(st->op[v]);
    if (id == S_OPOOL_FIXED) fixed_list_clear(st->fx_list);
    if (id == S_OPOOL_FIXED_BARE) fixed_bare_clear(st->fx_bare);
    if (id == S_MALLOC) malloc_fresh(st->h_mal, n);
#if BENCH_PEERS
    bench_peer *peer = id >= S_BOOST_OBJ ? st->peer[id - S_BOOST_OBJ] : NULL;
    if (peer) bench_peer_fresh(peer);
#endif

    uint64_t t0 = bench_now_ns();
    switch (id) {
    case S_IDEAL:
        bad = fill_ideal(&st->ideal, st->h_ideal, n, tag);
        break;
    case S_IGEN:
        bad = fill_igen(&st->igen, st->h_igen, n, tag);
        break;
    case S_OPOOL:
    case S_OPOOL_BARE:
        bad = fill_opool(st->op[v], st->h_op[v], n, tag);
        break;
    case S_OPOOL_FIXED:
        bad = fill_fixed_list(st->fx_list, st->h_fx_list, n, tag);
        break;
    case S_OPOOL_FIXED_BARE:
        bad = fill_fixed_bare(st->fx_bare, st->h_fx_bare, n, tag);
        break;
#if BENCH_PEERS
    case S_BOOST_OBJ:
    case S_BOOST_POOL:
    case S_COLONY:
    case S_OPL:
        bad = bench_peer_fill(peer, tag);
        break;
#endif
    default:
        bad = fill_malloc(st->h_mal, n, opt.size, tag);
    }
    uint64_t t1 = bench_now_ns();
    if (bad) fail("fill %s N=%u: allocation failed", subject_name(id), n);

    /* untimed: every object is reachable through its handle and holds what was written */
    for (uint32_t k = 0; k < n; k++) {
        const char *o = id == S_IDEAL         ? ideal_at(&st->ideal, st->h_ideal[k])
                        : id == S_IGEN        ? igen_get(&st->igen, st->h_igen[k])
                        : v >= 0              ? opool_get(st->op[v], st->h_op[v][k])
                        : id == S_OPOOL_FIXED ? object_fixed_list(st->fx_list, st->h_fx_list[k])
                        : id == S_OPOOL_FIXED_BARE
                            ? object_fixed_bare(st->fx_bare, st->h_fx_bare[k])
                        : id == S_MALLOC ? st->h_mal[k]
#if BENCH_PEERS
                                         : bench_peer_object(peer, k);
#else
                                         : NULL;
#endif
        if (o == NULL || FA(o) != k || FB(o) != tag)
            fail("fill %s N=%u: handle %u does not reach its object", subject_name(id), n, k);
        sum += bench_mix(FA(o), FB(o));
    }

    uint64_t t2 = bench_now_ns();
    switch (id) {
    case S_IDEAL:
        bad = drain_ideal(&st->ideal, st->h_ideal, st->perm, n);
        break;
    case S_IGEN:
        bad = drain_igen(&st->igen, st->h_igen, st->perm, n);
        break;
    case S_OPOOL:
    case S_OPOOL_BARE:
        bad = drain_opool(st->op[v], st->h_op[v], st->perm, n);
        break;
    case S_OPOOL_FIXED:
        bad = drain_fixed_list(st->fx_list, st->h_fx_list, st->perm, n);
        break;
    case S_OPOOL_FIXED_BARE:
        bad = drain_fixed_bare(st->fx_bare, st->h_fx_bare, st->perm, n);
        break;
#if BENCH_PEERS
    case S_BOOST_OBJ:
    case S_BOOST_POOL:
    case S_COLONY:
    case S_OPL:
        bad = bench_peer_drain(peer, st->perm, n);
        break;
#endif
    default:
        bad = drain_malloc(st->h_mal, st->perm, n);
    }
    uint64_t t3 = bench_now_ns();
    if (bad) fail("drain %s N=%u: %" PRIu64 " frees rejected", subject_name(id), n, bad);
    uint32_t left = id == S_IDEAL              ? n - st->ideal.top
                    : id == S_IGEN             ? n - st->igen.top
                    : v >= 0                   ? opool_count(st->op[v])
                    : id == S_OPOOL_FIXED      ? fixed_list_count(st->fx_list)
                    : id == S_OPOOL_FIXED_BARE ? fixed_bare_count(st->fx_bare)
                                               : 0; /* malloc, and peers without a count */
#if BENCH_PEERS
    if (peer && !bench_peer_count(peer, &left)) left = 0;
#endif
    if (left != 0) fail("drain %s N=%u: %u objects still live", subject_name(id), n, left);
    *check = sum;
    return (double)((t1 - t0) + (t3 - t2)) / (double)n;
}

static const char *filldrain_note(int id) {
    switch (id) {
    case S_OPOOL:
        return "per pair; FULL_FAIL, no flags";
    case S_OPOOL_BARE:
        return "per pair; FULL_FAIL, OPOOL_NO_LIVE_LIST";
    case S_OPOOL_FIXED:
        return "per pair; OPOOL_TYPED_FIXED, flags 0";
    case S_OPOOL_FIXED_BARE:
        return "per pair; OPOOL_TYPED_FIXED, OPOOL_NO_LIVE_LIST";
    case S_MALLOC:
        return BENCH_ALLOC == BENCH_ALLOC_GLIBC ? "per pair; glibc, reset to address order"
                                                : "per pair; reset: N mallocs freed in reverse";
    case S_BOOST_POOL:
        return "per pair; purged, one block of N per rep";
    case S_COLONY:
        return "per pair; groups reserved, refilled in order";
    case S_OPL:
        return "per pair; clear() between reps";
    default:
        return "per alloc+free pair";
    }
}

/* Fill then drain at n, for the subjects ids[0..nids) (at most MAX_SUBJ). */
static void run_filldrain(uint32_t n, const int *ids, int nids) {
    fd_state st;
    memset(&st, 0, sizeof st);
    st.n = n;
    st.perm_rep = -1;
    if (nids > (int)(sizeof st.subj / sizeof st.subj[0])) fail("fill+drain: too many subjects");
    memcpy(st.subj, ids, (size_t)nids * sizeof *ids);
    for (int j = 0; j < nids; j++) {
        switch (ids[j]) {
        case S_IDEAL:
            ideal_init(&st.ideal, n, opt.size);
            st.h_ideal = bench_xalloc((size_t)n * sizeof(uint32_t));
            break;
        case S_IGEN:
            igen_init(&st.igen, n, opt.size);
            st.h_igen = bench_xalloc((size_t)n * sizeof(uint64_t));
            break;
        case S_OPOOL:
        case S_OPOOL_BARE:
            st.op[opool_variant(ids[j])] = make_opool_variant(opool_variant(ids[j]), n);
            st.h_op[opool_variant(ids[j])] = bench_xalloc((size_t)n * sizeof(opool_handle));
            break;
        case S_OPOOL_FIXED:
            st.fx_list = make_fixed_list(n);
            st.h_fx_list = bench_xalloc((size_t)n * sizeof(fixed_list_handle));
            break;
        case S_OPOOL_FIXED_BARE:
            st.fx_bare = make_fixed_bare(n);
            st.h_fx_bare = bench_xalloc((size_t)n * sizeof(fixed_bare_handle));
            break;
        case S_MALLOC:
            st.h_mal = bench_xalloc((size_t)n * sizeof(char *));
            break;
        default:
#if BENCH_PEERS
            st.peer[ids[j] - S_BOOST_OBJ] = make_peer(ids[j], n);
#endif
            break;
        }
    }
    st.perm = bench_xalloc((size_t)n * sizeof(uint32_t));

    case_def c;
    memset(&c, 0, sizeof c);
    c.workload = "fill+drain";
    c.n = n;
    c.ops = n;
    c.nsubj = nids;
    c.ref1 = c.ref2 = -1;
    c.reps = reps_filldrain();
    for (int j = 0; j < nids; j++) {
        c.name[j] = subject_name(ids[j]);
        c.note[j] = filldrain_note(ids[j]);
        if (ids[j] == S_IGEN) c.ref1 = j;
        if (ids[j] == S_IDEAL) c.ref2 = j;
    }
    run_case(&c, filldrain_rep, &st);

#if BENCH_PEERS
    for (int k = 0; k < N_PEER; k++)
        if (st.peer[k]) bench_peer_destroy(st.peer[k]);
#endif
    for (int v = 0; v < 3; v++) {
        if (st.op[v]) end_opool(st.op[v]);
        free(st.h_op[v]);
    }
    if (st.fx_list) end_fixed_list(st.fx_list);
    if (st.fx_bare) end_fixed_bare(st.fx_bare);
    free(st.h_fx_list);
    free(st.h_fx_bare);
    if (st.h_ideal) ideal_fini(&st.ideal);
    if (st.h_igen) igen_fini(&st.igen);
    free(st.h_ideal);
    free(st.h_igen);
    free(st.h_mal);
    free(st.perm);
}

/* ==== iteration over live objects ========================================== */

typedef struct it_state {
    uint32_t n, live, passes;
    igen_pool igen;
    opool *op_roster; /* roster order as the frees left it */
    opool *op_sorted; /* the same live set after opool_sort */
#if BENCH_PEERS
    bench_peer *colony; /* the same live set in a plf::colony */
#endif
} it_state;

/* IT_COLONY last: without a colony the case has IT_COLONY subjects */
enum { IT_ROSTER, IT_SORTED, IT_SORTED_BWD, IT_SCAN, IT_SORT_CALL, IT_COLONY, IT_COUNT };

static BENCH_NOINLINE uint64_t iter_opool_fwd(const opool *p, uint32_t passes) {
    uint64_t sum = 0;
    for (uint32_t r = 0; r < passes; r++) {
        uint32_t cnt = opool_count(p);
        for (uint32_t i = 0; i < cnt; i++) sum += FA(opool_live_object(p, i));
    }
    return sum;
}

static BENCH_NOINLINE uint64_t iter_opool_bwd(const opool *p, uint32_t passes) {
    uint64_t sum = 0;
    for (uint32_t r = 0; r < passes; r++)
        for (uint32_t i = opool_count(p); i-- > 0;) sum += FA(opool_live_object(p, i));
    return sum;
}

static BENCH_NOINLINE uint64_t iter_gen_scan(const igen_pool *p, uint32_t passes) {
    uint64_t sum = 0;
    for (uint32_t r = 0; r < passes; r++)
        for (uint32_t s = 0; s < p->cap; s++)
            if (p->gen[s] & 1) sum += FA(p->obj + (size_t)s * p->stride);
    return sum;
}

static double iter_rep(void *ctx, int s, int rep, uint64_t *check) {
    it_state *st = ctx;
    (void)rep;
    uint64_t t0, t1, sum;
    switch (s) {
    case IT_ROSTER:
        bench_sink += iter_opool_fwd(st->op_roster, 1); /* warm-up pass */
        t0 = bench_now_ns();
        sum = iter_opool_fwd(st->op_roster, st->passes);
        t1 = bench_now_ns();
        break;
    case IT_SORTED:
        bench_sink += iter_opool_fwd(st->op_sorted, 1);
        t0 = bench_now_ns();
        sum = iter_opool_fwd(st->op_sorted, st->passes);
        t1 = bench_now_ns();
        break;
    case IT_SORTED_BWD:
        bench_sink += iter_opool_bwd(st->op_sorted, 1);
        t0 = bench_now_ns();
        sum = iter_opool_bwd(st->op_sorted, st->passes);
        t1 = bench_now_ns();
        break;
    case IT_SCAN:
        bench_sink += iter_gen_scan(&st->igen, 1);
        t0 = bench_now_ns();
        sum = iter_gen_scan(&st->igen, st->passes);
        t1 = bench_now_ns();
        break;
#if BENCH_PEERS
    case IT_COLONY:
        bench_peer_iterate(st->colony, 1, &sum);
        bench_sink += sum;
        t0 = bench_now_ns();
        bench_peer_iterate(st->colony, st->passes, &sum);
        t1 = bench_now_ns();
        break;
#endif
    default: /* the cost of opool_sort itself, per live object (pool already sorted) */
        t0 = bench_now_ns();
        opool_sort(st->op_sorted);
        t1 = bench_now_ns();
        *check = iter_opool_fwd(st->op_sorted, st->passes); /* still the same live set */
        return (double)(t1 - t0) / (double)st->live;
    }
    *check = sum;
    return (double)(t1 - t0) / ((double)st->live * st->passes);
}

static void run_iter(uint32_t n, uint32_t pct, uint32_t *perm) {
    it_state st;
    memset(&st, 0, sizeof st);
    st.n = n;
    st.live = (uint32_t)((uint64_t)n * pct / 100);
    /* about a million live-object visits per timed sample */
    st.passes = st.live >= 1000000 ? 1 : (1000000 + st.live - 1) / st.live;
    igen_init(&st.igen, n, opt.size);
    st.op_roster = make_opool(n);
    st.op_sorted = make_opool(n);
    uint64_t *hg = bench_xalloc((size_t)n * sizeof(uint64_t));
    opool_handle *h1 = bench_xalloc((size_t)n * sizeof(opool_handle));
    opool_handle *h2 = bench_xalloc((size_t)n * sizeof(opool_handle));
    for (uint32_t k = 0; k < n; k++) {
        char *a = igen_alloc(&st.igen, &hg[k]);
        char *b = opool_alloc(st.op_roster, &h1[k]);
        char *c = opool_alloc(st.op_sorted, &h2[k]);
        if (a == NULL || b == NULL || c == NULL) fail("iteration setup: allocation failed");
        FA(a) = FA(b) = FA(c) = k;
        FB(a) = FB(b) = FB(c) = 0;
    }
    bench_shuffle(perm, n, bench_seed(W_ITER, n, (int)pct, 0));
    for (uint32_t j = 0; j < n - st.live; j++) {
        if (!igen_free(&st.igen, hg[perm[j]]) ||
            opool_free(st.op_roster, h1[perm[j]]) != OPOOL_OK ||
            opool_free(st.op_sorted, h2[perm[j]]) != OPOOL_OK)
            fail("iteration setup: free failed");
    }
    opool_sort(st.op_sorted);
    if (opool_count(st.op_roster) != st.live || opool_count(st.op_sorted) != st.live)
        fail("iteration setup: opool_count is not %u", st.live);
    bool colony = peer_runs(S_COLONY, "iter");
#if BENCH_PEERS
    if (colony) {
        uint32_t live = 0;
        st.colony = make_peer(S_COLONY, n);
        if (bench_peer_fill(st.colony, 0) != 0 || bench_peer_drain(st.colony, perm, n - st.live) ||
            !bench_peer_count(st.colony, &live) || live != st.live)
            fail("iteration setup: plf::colony does not hold %u objects", st.live);
    }
#endif

    char wname[40];
    snprintf(wname, sizeof wname, "iterate %u%% live", pct);
    case_def c;
    memset(&c, 0, sizeof c);
    c.workload = wname;
    c.n = n;
    c.ops = (uint64_t)st.live * st.passes;
    c.nsubj = colony ? IT_COUNT : IT_COLONY;
    c.ref1 = IT_SCAN;
    c.ref2 = -1;
    c.name[IT_ROSTER] = "opool roster";
    c.note[IT_ROSTER] = "per live obj; roster order left by frees";
    c.name[IT_SORTED] = "opool sorted";
    c.note[IT_SORTED] = "per live obj; after opool_sort, i = 0..count";
    c.name[IT_SORTED_BWD] = "opool sorted, bwd";
    c.note[IT_SORTED_BWD] = "per live obj; documented idiom i = count..0";
    c.name[IT_SCAN] = "ideal_gen gen scan";
    c.note[IT_SCAN] = "per live obj; every slot's gen, odd -> read";
    c.name[IT_SORT_CALL] = "opool_sort() call";
    c.note[IT_SORT_CALL] = "cost of one sort, per live obj (not a pass)";
    c.name[IT_COLONY] = subject_name(S_COLONY);
    c.note[IT_COLONY] = "per live obj; its own iterator (skipfield)";
    run_case(&c, iter_rep, &st);
#if BENCH_PEERS
    if (colony) bench_peer_destroy(st.colony);
#endif

    igen_fini(&st.igen);
    end_opool(st.op_roster);
    end_opool(st.op_sorted);
    free(hg);
    free(h1);
    free(h2);
}

/* ==== side-table lookup ====================================================
 * The same lookup loop as lookup_opool, through a side table keyed by the
 * pool's handles: what reading data attached to an object costs against
 * reading the object itself. */

enum { SD_IGEN, SD_OPOOL, SD_SIDE, SD_COUNT };

typedef struct sd_state {
    uint32_t n;
    uint64_t iters, warm;
    igen_pool igen;
    uint64_t *h_igen;
    opool *op;
    opool_handle *h_op;
    opool_side *side;
} sd_state;

static BENCH_NOINLINE uint64_t lookup_side(const opool_side *s, const opool_handle *H, uint32_t n,
                                           uint64_t seed, uint64_t iters, uint64_t *bad) {
    uint64_t sum = 0;
    for (uint64_t it = 0; it < iters; it++) {
        uint32_t k = bench_below(&seed, n);
        const char *o = opool_side_get(s, H[k]);
        if (o == NULL) {
            ++*bad;
            continue;
        }
        sum += FA(o) + FB(o);
    }
    return sum;
}

static uint64_t side_subject(const sd_state *st, int s, uint64_t seed, uint64_t iters,
                             uint64_t *bad) {
    switch (s) {
    case SD_IGEN:
        return lookup_igen(&st->igen, st->h_igen, st->n, seed, iters, bad);
    case SD_OPOOL:
        return lookup_opool(st->op, st->h_op, st->n, seed, iters, bad);
    default:
        return lookup_side(st->side, st->h_op, st->n, seed, iters, bad);
    }
}

static double side_rep(void *ctx, int s, int rep, uint64_t *check) {
    sd_state *st = ctx;
    uint64_t bad = 0;
    bench_sink += side_subject(st, s, bench_seed(W_SIDE, st->n, rep, 0), st->warm, &bad);
    uint64_t t0 = bench_now_ns();
    *check = side_subject(st, s, bench_seed(W_SIDE, st->n, rep, 1), st->iters, &bad);
    uint64_t t1 = bench_now_ns();
    if (bad) fail("side get N=%u: %" PRIu64 " live handles rejected", st->n, bad);
    return (double)(t1 - t0) / (double)st->iters;
}

/* side/opool of each side case, for the lines under the table */
static char g_side_ratios[1024];

static void run_side(uint32_t n) {
    sd_state st;
    memset(&st, 0, sizeof st);
    st.n = n;
    bool big = n >= 100000;
    st.iters = opt.quick ? (big ? 600000 : 2000000) : (big ? 1500000 : 5000000);
    st.warm = big ? st.iters / 8 : 100000;
    igen_init(&st.igen, n, opt.size);
    st.op = make_opool(n);
    st.h_igen = bench_xalloc((size_t)n * sizeof(uint64_t));
    st.h_op = bench_xalloc((size_t)n * sizeof(opool_handle));
    /* values as large as the objects, aligned as the pool aligns them */
    opool_status status = opool_side_create(&st.side, opt.size, 16, n);
    if (status != OPOOL_OK) fail("opool_side_create(N=%u): %s", n, opool_status_str(status));
    for (uint32_t k = 0; k < n; k++) {
        char *a = igen_alloc(&st.igen, &st.h_igen[k]);
        char *b = opool_alloc(st.op, &st.h_op[k]);
        if (a == NULL || b == NULL) fail("side setup: allocation failed");
        FA(a) = FA(b) = k;
        FB(a) = FB(b) = (uint64_t)k * 7;
    }
    /* dense order unrelated to the slot order, as puts over a program's life leave it */
    uint32_t *perm = bench_xalloc((size_t)n * sizeof(uint32_t));
    bench_shuffle(perm, n, bench_seed(W_SIDE, n, 0, 2));
    for (uint32_t j = 0; j < n; j++) {
        char *v = opool_side_put(st.side, st.h_op[perm[j]]);
        if (v == NULL) fail("side setup: opool_side_put failed");
        FA(v) = perm[j];
        FB(v) = (uint64_t)perm[j] * 7;
    }
    free(perm);

    case_def c;
    memset(&c, 0, sizeof c);
    c.workload = "side get";
    c.n = n;
    c.ops = st.iters;
    c.nsubj = SD_COUNT;
    c.ref1 = SD_IGEN;
    c.ref2 = -1;
    c.name[SD_IGEN] = subject_name(S_IGEN);
    c.note[SD_IGEN] = "the object, validated";
    c.name[SD_OPOOL] = "opool_get";
    c.note[SD_OPOOL] = "the object, validated";
    c.name[SD_SIDE] = "opool_side_get";
    c.note[SD_SIDE] = "a value keyed by the same handle";
    int first = g_nrows;
    run_case(&c, side_rep, &st);
    const bench_row *r = &g_rows[first];
    size_t used = strlen(g_side_ratios);
    snprintf(g_side_ratios + used, sizeof g_side_ratios - used,
             "  %3zu B  N=%-8u opool_side_get %.2f ns / opool_get %.2f ns = %.2f\n", opt.size, n,
             r[SD_SIDE].median, r[SD_OPOOL].median, r[SD_SIDE].median / r[SD_OPOOL].median);

    igen_fini(&st.igen);
    end_opool(st.op);
    opool_side_destroy(st.side);
    free(st.h_igen);
    free(st.h_op);
}

/* ==== resident memory per live object =======================================
 * What N live objects of one subject cost in memory the kernel actually
 * backs: the growth of the resident set while the subject is created and N
 * objects are allocated and written, divided by N. Subjects sharing this
 * process would share its heap (freed memory of an earlier workload that the
 * raised trim threshold keeps mapped would serve malloc for free), so each
 * measurement is a fresh process: this program again, run with
 * --resident-child, which measures one subject and prints the result. The
 * benchmark's own handle array is allocated and touched before the first
 * reading: it is the caller's memory, not the subject's. */

#ifdef __linux__
#include <sys/wait.h>

/* Resident bytes of this process (second field of /proc/self/statm). */
static uint64_t rss_bytes(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long long size = 0, res = 0;
    if (f == NULL) return 0;
    int got = fscanf(f, "%llu %llu", &size, &res);
    fclose(f);
    return got == 2 ? (uint64_t)res * (uint64_t)sysconf(_SC_PAGESIZE) : 0;
}

/* The child: N objects of subject id, object size opt.size. Prints
 * "<bytes per object> <checksum>" on stdout. */
static int resident_child(int id, uint32_t n) {
    size_t hsize = id == S_IDEAL ? sizeof(uint32_t) : sizeof(uint64_t);
    char *handles = bench_xalloc((size_t)n * hsize);
    memset(handles, 0xa5, (size_t)n * hsize);
    uint32_t *h_ideal = (uint32_t *)(void *)handles;
    uint64_t *h_igen = (uint64_t *)(void *)handles;
    opool_handle *h_op = (opool_handle *)(void *)handles;
    char **h_mal = (char **)(void *)handles;
    ideal_pool ideal;
    igen_pool igen;
    opool *op = NULL;

    uint64_t before = rss_bytes();
    if (before == 0) fail("resident: cannot read /proc/self/statm");
    switch (id) {
    case S_IDEAL:
        ideal_init(&ideal, n, opt.size);
        break;
    case S_IGEN:
        igen_init(&igen, n, opt.size);
        break;
    case S_OPOOL:
        op = make_opool(n);
        break;
    default:
        break;
    }
    for (uint32_t k = 0; k < n; k++) {
        char *o;
        switch (id) {
        case S_IDEAL:
            h_ideal[k] = ideal_alloc(&ideal);
            o = ideal_at(&ideal, h_ideal[k]);
            break;
        case S_IGEN:
            o = igen_alloc(&igen, &h_igen[k]);
            break;
        case S_OPOOL:
            o = opool_alloc(op, &h_op[k]);
            break;
        default:
            o = h_mal[k] = malloc(opt.size);
        }
        if (o == NULL) fail("resident %s: allocation %u of %u failed", subject_name(id), k, n);
        /* the whole object, as a user fills it: every page it spans is touched */
        memset(o, 0, opt.size);
        FA(o) = k;
        FB(o) = (uint64_t)k * 3;
    }
    uint64_t after = rss_bytes();

    uint64_t sum = 0;
    for (uint32_t k = 0; k < n; k++) {
        const char *o = id == S_IDEAL   ? ideal_at(&ideal, h_ideal[k])
                        : id == S_IGEN  ? igen_get(&igen, h_igen[k])
                        : id == S_OPOOL ? opool_get(op, h_op[k])
                                        : h_mal[k];
        if (o == NULL || FA(o) != k) fail("resident %s: handle %u lost", subject_name(id), k);
        sum += bench_mix(FA(o), FB(o));
    }
    printf("%.6f %016" PRIx64 "\n", (double)(after - before) / n, sum);
    return fflush(stdout) == 0 ? 0 : 1;
}

/* Runs the child for subject id; returns bytes per object, sets *check. */
static double resident_spawn(int id, uint32_t n, uint64_t *check) {
    char a_id[16], a_size[24], a_n[16];
    snprintf(a_id, sizeof a_id, "%d", id);
    snprintf(a_size, sizeof a_size, "%zu", opt.size);
    snprintf(a_n, sizeof a_n, "%u", n);
    char *argv[] = {"opool_bench", "--resident-child", a_id, a_size, a_n, NULL};
    int fd[2];
    if (pipe(fd) != 0) fail("resident: pipe: %s", strerror(errno));
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) fail("resident: fork: %s", strerror(errno));
    if (pid == 0) {
        close(fd[0]);
        if (dup2(fd[1], 1) < 0) _exit(126);
        close(fd[1]);
        execv("/proc/self/exe", argv);
        fprintf(stderr, "opool_bench: resident: cannot run /proc/self/exe: %s\n", strerror(errno));
        _exit(127);
    }
    close(fd[1]);
    char buf[256];
    size_t len = 0;
    for (;;) {
        ssize_t r = read(fd[0], buf + len, sizeof buf - 1 - len);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        len += (size_t)r;
        if (len == sizeof buf - 1) break;
    }
    buf[len] = '\0';
    close(fd[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) fail("resident: waitpid: %s", strerror(errno));
    double bytes = 0;
    unsigned long long sum = 0;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
        sscanf(buf, "%lf %llx", &bytes, &sum) != 2)
        fail("resident %s: the child failed (status %d, output '%s')", subject_name(id), status,
             buf);
    *check = (uint64_t)sum;
    return bytes;
}

static const int res_subj[4] = {S_IDEAL, S_IGEN, S_OPOOL, S_MALLOC};

static double resident_rep(void *ctx, int s, int rep, uint64_t *check) {
    (void)rep;
    return resident_spawn(res_subj[s], *(const uint32_t *)ctx, check);
}

static void run_resident(uint32_t n) {
    case_def c;
    memset(&c, 0, sizeof c);
    c.workload = "resident";
    c.n = n;
    c.ops = n;
    c.nsubj = 4;
    c.ref1 = 1;
    c.ref2 = 0;
    c.reps = reps_resident();
    c.no_warmup = true;
    for (int j = 0; j < 4; j++) c.name[j] = subject_name(res_subj[j]);
    int first = g_nrows;
    run_case(&c, resident_rep, &n);
    for (int j = 0; j < 4; j++) {
        bench_row *r = &g_rows[first + j];
        snprintf(r->note, sizeof r->note, "BYTES per live obj, not ns; %.2fx object size",
                 r->median / (double)opt.size);
    }
}
#else
static int resident_child(int id, uint32_t n) {
    (void)id;
    (void)n;
    fprintf(stderr, "opool_bench: --resident-child needs Linux (/proc)\n");
    return 2;
}
static void run_resident(uint32_t n) {
    (void)n;
    fprintf(stderr, "  resident: skipped (needs Linux /proc/self/statm and /proc/self/exe)\n");
}
#endif

/* ==== particles: a particle-system frame ====================================
 * The job pools are made for: every frame K particles are spawned, then every
 * live particle is updated (position += velocity, gravity, life - 1; read and
 * written), and each whose life reaches 0 is killed during that pass. Each
 * spawn draws its particle's whole state, lifetime included, from the shared
 * random sequence in spawn order and updates draw nothing, so every subject
 * spawns and kills the same particles in the same frames whatever order it
 * visits them in, and the checksum (a sum over every update and kill) is the
 * same. Lifetimes are uniform in [1, 63] frames, mean 32, and K = N / 32, so
 * the live count hovers around N. How each subject finds its live particles:
 *   ideal      scans slots [0, high water) and skips life == 0 (a dead
 *              particle's life is 0: the object is its own live flag)
 *   ideal_gen  scans slots [0, high water) and skips even generations
 *   opool      the documented loop, i = count..0 over the live roster,
 *              freeing opool_live_handle(i) in place
 *   opool sorted/frame  the same after an opool_sort at the start of each
 *              frame: spawns and kills shuffle the roster out of memory
 *              order over time, and the sort (its cost included) restores it
 *   malloc     a dense array of pointers, walked backwards; a kill frees
 *              the particle and moves the last pointer into its place
 * Pools have capacity 2N. Before the first repetition each subject runs 64
 * untimed frames from empty (the steady state: every particle alive then was
 * born during them); later repetitions go on from the state the previous one
 * left, so the pools' free orders age as a game's would. ns per particle
 * update (live particles visited), spawns and kills included. */

typedef struct particle {
    uint32_t x, y;
    int16_t vx, vy;
    uint32_t life; /* frames left; 0 = dead */
} particle;
_Static_assert(sizeof(particle) == 16, "a particle fits the smallest object size");

#define PART(o) ((particle *)(void *)(o))
#define PART_MAX_LIFE 63u
#define PART_PREROLL 64u

static inline void part_spawn(char *o, uint64_t *rng) {
    particle *q = PART(o);
    uint64_t r = bench_rng_next(rng);
    q->x = (uint32_t)r & 0xffffu;
    q->y = (uint32_t)(r >> 16) & 0xffffu;
    q->vx = (int16_t)((int)((r >> 32) & 0xffu) - 128);
    q->vy = (int16_t)((int)((r >> 40) & 0xffu) - 64);
    q->life = 1 + (uint32_t)(((r >> 48) * PART_MAX_LIFE) >> 16);
}

/* One update; true when the particle dies. *sum folds what was computed. */
static inline bool part_update(char *o, uint64_t *sum) {
    particle *q = PART(o);
    q->x += (uint32_t)(int32_t)q->vx;
    q->y += (uint32_t)(int32_t)q->vy;
    q->vy = (int16_t)(q->vy - 1);
    *sum += (uint64_t)q->x * 3 + q->y;
    if (--q->life != 0) return false;
    *sum += bench_mix(q->x, q->y);
    return true;
}

typedef struct pt_state {
    uint32_t n, cap, spawn, frames;
    ideal_pool ideal;
    uint32_t hw_ideal; /* high water: slots [0, hw) have been used */
    igen_pool igen;
    uint32_t hw_igen;
    opool *op;
    opool *op_sort;
    char **mal;
    uint32_t mal_count;
    uint64_t updates; /* per repetition, the same for every subject */
} pt_state;

/* Each frame loop returns false when a spawn found its pool full, and adds
 * to *sum and *updates. */

static BENCH_NOINLINE bool frames_ideal(ideal_pool *p, uint32_t *hw, uint64_t rng, uint32_t frames,
                                        uint32_t spawn, uint64_t *sum, uint64_t *updates) {
    uint32_t h = *hw;
    uint64_t s = 0, u = 0;
    for (uint32_t f = 0; f < frames; f++) {
        for (uint32_t j = 0; j < spawn; j++) {
            if (p->top == 0) return false;
            uint32_t i = ideal_alloc(p);
            if (i >= h) h = i + 1;
            part_spawn(ideal_at(p, i), &rng);
        }
        for (uint32_t i = 0; i < h; i++) {
            char *o = ideal_at(p, i);
            if (PART(o)->life == 0) continue;
            u++;
            if (part_update(o, &s)) ideal_free(p, i);
        }
    }
    *hw = h;
    *sum += s;
    *updates += u;
    return true;
}

static BENCH_NOINLINE bool frames_igen(igen_pool *p, uint32_t *hw, uint64_t rng, uint32_t frames,
                                       uint32_t spawn, uint64_t *sum, uint64_t *updates) {
    uint32_t h = *hw;
    uint64_t s = 0, u = 0;
    for (uint32_t f = 0; f < frames; f++) {
        for (uint32_t j = 0; j < spawn; j++) {
            uint64_t hd;
            char *o = igen_alloc(p, &hd);
            if (o == NULL) return false;
            if ((uint32_t)hd >= h) h = (uint32_t)hd + 1;
            part_spawn(o, &rng);
        }
        for (uint32_t i = 0; i < h; i++) {
            uint32_t g = p->gen[i];
            if (!(g & 1)) continue;
            u++;
            if (part_update(p->obj + (size_t)i * p->stride, &s) &&
                !igen_free(p, (uint64_t)g << 32 | i))
                return false;
        }
    }
    *hw = h;
    *sum += s;
    *updates += u;
    return true;
}

static BENCH_NOINLINE bool frames_opool(opool *p, bool sort, uint64_t rng, uint32_t frames,
                                        uint32_t spawn, uint64_t *sum, uint64_t *updates) {
    uint64_t s = 0, u = 0;
    for (uint32_t f = 0; f < frames; f++) {
        if (sort) opool_sort(p);
        for (uint32_t j = 0; j < spawn; j++) {
            char *o = opool_alloc(p, NULL);
            if (o == NULL) return false;
            part_spawn(o, &rng);
        }
        for (uint32_t i = opool_count(p); i-- > 0;) {
            u++;
            if (part_update(opool_live_object(p, i), &s) &&
                opool_free(p, opool_live_handle(p, i)) != OPOOL_OK)
                return false;
        }
    }
    *sum += s;
    *updates += u;
    return true;
}

static BENCH_NOINLINE bool frames_malloc(char **P, uint32_t *count, uint32_t cap, size_t size,
                                         uint64_t rng, uint32_t frames, uint32_t spawn,
                                         uint64_t *sum, uint64_t *updates) {
    uint32_t c = *count;
    uint64_t s = 0, u = 0;
    for (uint32_t f = 0; f < frames; f++) {
        for (uint32_t j = 0; j < spawn; j++) {
            char *o = malloc(size);
            if (o == NULL || c == cap) {
                free(o);
                return false;
            }
            part_spawn(o, &rng);
            P[c++] = o;
        }
        for (uint32_t i = c; i-- > 0;) {
            char *o = P[i];
            u++;
            if (part_update(o, &s)) {
                free(o);
                P[i] = P[--c];
            }
        }
    }
    *count = c;
    *sum += s;
    *updates += u;
    return true;
}

enum { PT_IDEAL, PT_IGEN, PT_OPOOL, PT_OPOOL_SORT, PT_MALLOC, PT_COUNT };
static const char *const pt_name[PT_COUNT] = {"ideal", "ideal_gen", "opool", "opool sorted/frame",
                                              "malloc"};

static bool pt_frames(pt_state *st, int id, uint64_t rng, uint32_t frames, uint64_t *sum,
                      uint64_t *updates) {
    switch (id) {
    case PT_IDEAL:
        return frames_ideal(&st->ideal, &st->hw_ideal, rng, frames, st->spawn, sum, updates);
    case PT_IGEN:
        return frames_igen(&st->igen, &st->hw_igen, rng, frames, st->spawn, sum, updates);
    case PT_OPOOL:
        return frames_opool(st->op, false, rng, frames, st->spawn, sum, updates);
    case PT_OPOOL_SORT:
        return frames_opool(st->op_sort, true, rng, frames, st->spawn, sum, updates);
    default:
        return frames_malloc(st->mal, &st->mal_count, st->cap, opt.size, rng, frames, st->spawn,
                             sum, updates);
    }
}

/* Live particles of subject id, counted the way that subject finds them. */
static uint32_t pt_live(const pt_state *st, int id) {
    uint32_t live = 0;
    switch (id) {
    case PT_IDEAL:
        for (uint32_t i = 0; i < st->hw_ideal; i++)
            live += PART(ideal_at(&st->ideal, i))->life != 0;
        return live;
    case PT_IGEN:
        for (uint32_t i = 0; i < st->hw_igen; i++) live += st->igen.gen[i] & 1;
        return live;
    case PT_OPOOL:
        return opool_count(st->op);
    case PT_OPOOL_SORT:
        return opool_count(st->op_sort);
    default:
        return st->mal_count;
    }
}

static double particles_rep(void *ctx, int s, int rep, uint64_t *check) {
    pt_state *st = ctx;
    int id = s;
    uint64_t sum = 0, updates = 0;
    uint64_t t0 = bench_now_ns();
    bool ok = pt_frames(st, id, bench_seed(W_PARTICLES, st->n, rep, 1), st->frames, &sum, &updates);
    uint64_t t1 = bench_now_ns();
    if (!ok) fail("particles %s N=%u: a spawn or kill failed", pt_name[id], st->n);
    /* the live count is part of the check: a subject that lost or kept a
     * particle it should not have would differ */
    *check = sum + ((uint64_t)pt_live(st, id) << 48) + updates;
    st->updates = updates;
    return (double)(t1 - t0) / (double)updates;
}

static void run_particles(uint32_t n) {
    pt_state st;
    memset(&st, 0, sizeof st);
    st.n = n;
    st.cap = 2 * n;
    st.spawn = n / 32;
    /* about 1.5 million particle updates per timed sample (0.4 million quick) */
    st.frames = (uint32_t)((opt.quick ? 400000u : 1500000u) / n);
    if (st.frames < 2) st.frames = 2;
    fprintf(stderr, "  setting up %d subjects at N=%u, %zu B...\n", PT_COUNT, n, opt.size);
    ideal_init(&st.ideal, st.cap, opt.size);
    igen_init(&st.igen, st.cap, opt.size);
    st.op = make_opool(st.cap);
    st.op_sort = make_opool(st.cap);
    st.mal = bench_xalloc((size_t)st.cap * sizeof(char *));
    uint64_t pre_check = 0;
    for (int j = 0; j < PT_COUNT; j++) {
        uint64_t sum = 0, updates = 0;
        if (!pt_frames(&st, j, bench_seed(W_PARTICLES, n, 0, 0), PART_PREROLL, &sum, &updates))
            fail("particles %s N=%u: pre-roll failed", pt_name[j], n);
        sum += (uint64_t)pt_live(&st, j) << 48;
        if (j == 0) pre_check = sum;
        if (sum != pre_check)
            fail("particles N=%u: pre-roll of %s differs from %s", n, pt_name[j], pt_name[0]);
    }

    case_def c;
    memset(&c, 0, sizeof c);
    c.workload = "particles";
    c.n = n;
    c.ops = (uint64_t)n * st.frames; /* nominal; the CSV gets the counted figure below */
    c.nsubj = PT_COUNT;
    c.ref1 = PT_IGEN;
    c.ref2 = PT_IDEAL;
    for (int j = 0; j < PT_COUNT; j++) c.name[j] = pt_name[j];
    c.note[PT_IDEAL] = "per update; slot scan, life 0 = dead";
    c.note[PT_IGEN] = "per update; slot scan of generations";
    c.note[PT_OPOOL] = "per update; roster i = count..0, free in place";
    c.note[PT_OPOOL_SORT] = "per update; the same + opool_sort per frame";
    c.note[PT_MALLOC] = "per update; pointer array, swap-remove";
    int first = g_nrows;
    run_case(&c, particles_rep, &st);
    for (int j = 0; j < PT_COUNT; j++) g_rows[first + j].ops = st.updates;

    ideal_fini(&st.ideal);
    igen_fini(&st.igen);
    end_opool(st.op);
    end_opool(st.op_sort);
    for (uint32_t k = 0; k < st.mal_count; k++) free(st.mal[k]);
    free(st.mal);
}

/* ==== frame: plf::colony's "general use" ====================================
 * A game's frame over a container of N objects: every frame visits every live
 * object and updates it (b += 1, summing a + b), then changes P% of them:
 * N * P / 100 times k = a random slot, erase handles[k], insert a new object
 * (a = k, b = a tag), handles[k] = its handle (churn's step). Every subject
 * holds the same objects with the same values at every point, whatever order
 * it visits them in, so the sums agree. Each repetition goes on from the
 * state the previous one left, so the free orders age as a game's do; about
 * 4 million visits per timed sample (--quick: 1 million). ns per object
 * visited, the changes included. How each subject visits:
 *   ideal_gen   scans its N slots and skips even generations
 *   opool       the documented loop, i = count..0 over the live list
 *   opool sorted/frame  the same after an opool_sort at each frame's start
 *   plf::colony range-for (its skipfield jumps erased runs)
 *   slotmap, hop_slotmap, dense_slotmap  (Rust, bench/slotmap) values_mut() */

enum { FR_IGEN, FR_OPOOL, FR_OPOOL_SORT, FR_COLONY, FR_COUNT };
static const char *const fr_name[FR_COUNT] = {"ideal_gen", "opool", "opool sorted/frame",
                                              "plf::colony"};

typedef struct fr_state {
    uint32_t n, pct, changes, frames;
    igen_pool igen;
    uint64_t *h_igen;
    opool *op[2]; /* FR_OPOOL, FR_OPOOL_SORT */
    opool_handle *h_op[2];
#if BENCH_PEERS
    bench_peer *colony;
#endif
} fr_state;

static inline void fr_visit(char *o, uint64_t *sum) {
    FB(o) += 1;
    *sum += FA(o) + FB(o);
}

/* Each runs frames frames from seed; returns the sum, counts failures in *bad. */
static BENCH_NOINLINE uint64_t frames_fr_igen(igen_pool *p, uint64_t *H, uint32_t n, uint64_t seed,
                                              uint32_t frames, uint32_t changes, uint64_t tag,
                                              uint64_t *bad) {
    uint64_t s = 0;
    for (uint32_t f = 0; f < frames; f++) {
        for (uint32_t i = 0; i < p->cap; i++)
            if (p->gen[i] & 1) fr_visit(p->obj + (size_t)i * p->stride, &s);
        for (uint32_t j = 0; j < changes; j++) {
            uint32_t k = bench_below(&seed, n);
            *bad += !igen_free(p, H[k]);
            char *o = igen_alloc(p, &H[k]);
            if (o == NULL) return ++*bad, s;
            FA(o) = k;
            FB(o) = tag + (uint64_t)f * changes + j;
        }
    }
    return s;
}

static BENCH_NOINLINE uint64_t frames_fr_opool(opool *p, opool_handle *H, uint32_t n, bool sort,
                                               uint64_t seed, uint32_t frames, uint32_t changes,
                                               uint64_t tag, uint64_t *bad) {
    uint64_t s = 0;
    for (uint32_t f = 0; f < frames; f++) {
        if (sort) opool_sort(p);
        for (uint32_t i = opool_count(p); i-- > 0;) fr_visit(opool_live_object(p, i), &s);
        for (uint32_t j = 0; j < changes; j++) {
            uint32_t k = bench_below(&seed, n);
            *bad += opool_free(p, H[k]) != OPOOL_OK;
            char *o = opool_alloc(p, &H[k]);
            if (o == NULL) return ++*bad, s;
            FA(o) = k;
            FB(o) = tag + (uint64_t)f * changes + j;
        }
    }
    return s;
}

/* Untimed: every handle reaches the object written for its slot. */
static uint64_t fr_verify(const fr_state *st, int id) {
    uint64_t sum = 0;
    for (uint32_t k = 0; k < st->n; k++) {
        const char *o = id == FR_IGEN ? igen_get(&st->igen, st->h_igen[k])
#if BENCH_PEERS
                        : id == FR_COLONY
                            ? bench_peer_object(st->colony, k)
#endif
                            : opool_get(st->op[id - FR_OPOOL], st->h_op[id - FR_OPOOL][k]);
        if (o == NULL || FA(o) != k)
            fail("frame %s N=%u: handles[%u] does not reach its object", fr_name[id], st->n, k);
        sum += bench_mix(FA(o), FB(o));
    }
    return sum;
}

static double frame_rep(void *ctx, int s, int rep, uint64_t *check) {
    fr_state *st = ctx;
    uint64_t seed = bench_seed(W_FRAME, st->n, rep, st->pct), tag = (uint64_t)(rep + 1) << 40;
    uint64_t bad = 0, sum = 0;
    uint64_t t0 = bench_now_ns();
    switch (s) {
    case FR_IGEN:
        sum =
            frames_fr_igen(&st->igen, st->h_igen, st->n, seed, st->frames, st->changes, tag, &bad);
        break;
    case FR_OPOOL:
    case FR_OPOOL_SORT:
        sum = frames_fr_opool(st->op[s - FR_OPOOL], st->h_op[s - FR_OPOOL], st->n,
                              s == FR_OPOOL_SORT, seed, st->frames, st->changes, tag, &bad);
        break;
#if BENCH_PEERS
    default:
        sum = bench_peer_frames(st->colony, seed, st->frames, st->changes, tag, &bad);
#endif
    }
    uint64_t t1 = bench_now_ns();
    if (bad) fail("frame %s N=%u: %" PRIu64 " failed operations", fr_name[s], st->n, bad);
    *check = sum + fr_verify(st, s);
    return (double)(t1 - t0) / ((double)st->n * st->frames);
}

static void run_frame(uint32_t n, uint32_t pct) {
    fr_state st;
    memset(&st, 0, sizeof st);
    st.n = n;
    st.pct = pct;
    st.changes = (uint32_t)((uint64_t)n * pct / 100);
    st.frames = (opt.quick ? 1000000u : 4000000u) / n;
    if (st.frames < 2) st.frames = 2;
    int nsubj = FR_OPOOL_SORT + 1;
    igen_init(&st.igen, n, opt.size);
    st.h_igen = bench_xalloc((size_t)n * sizeof(uint64_t));
    for (int v = 0; v < 2; v++) {
        st.op[v] = make_opool(n);
        st.h_op[v] = bench_xalloc((size_t)n * sizeof(opool_handle));
    }
    for (uint32_t k = 0; k < n; k++) {
        char *o = igen_alloc(&st.igen, &st.h_igen[k]);
        FA(o) = k;
        FB(o) = 0;
        for (int v = 0; v < 2; v++) {
            o = opool_alloc(st.op[v], &st.h_op[v][k]);
            if (o == NULL) fail("opool_alloc failed while pre-filling %u objects", n);
            FA(o) = k;
            FB(o) = 0;
        }
    }
#if BENCH_PEERS
    if (peer_runs(S_COLONY, "frame")) {
        st.colony = make_peer(S_COLONY, n);
        if (bench_peer_fill(st.colony, 0) != 0) fail("plf::colony failed while pre-filling");
        nsubj++;
    }
#endif
    char wname[32];
    snprintf(wname, sizeof wname, "frame %u%%", pct);
    case_def c;
    memset(&c, 0, sizeof c);
    c.workload = wname;
    c.n = n;
    c.ops = (uint64_t)n * st.frames;
    c.nsubj = nsubj;
    c.ref1 = FR_IGEN;
    c.ref2 = -1;
    for (int j = 0; j < nsubj; j++) c.name[j] = fr_name[j];
    c.note[FR_IGEN] = "per visit; slot scan of generations";
    c.note[FR_OPOOL] = "per visit; live list i = count..0";
    c.note[FR_OPOOL_SORT] = "per visit; the same + opool_sort per frame";
    c.note[FR_COLONY] = "per visit; range-for";
    run_case(&c, frame_rep, &st);

    igen_fini(&st.igen);
    free(st.h_igen);
    for (int v = 0; v < 2; v++) {
        end_opool(st.op[v]);
        free(st.h_op[v]);
    }
#if BENCH_PEERS
    if (st.colony) bench_peer_destroy(st.colony);
#endif
}

/* ==== arena: generational_arena_bench's operations ========================
 * mooman219's generational_arena_bench on N = 10,000 objects. One round:
 * create a container for N, insert N objects (a = k, b = a tag), get each in
 * k order (summing a + b), remove each in k order, insert N again into the
 * used container (b = tag + 1), then destroy it (untimed). Each phase is a
 * case: "arena insert" (the creation included: a fresh container), "arena
 * get", "arena remove", "arena insert used"; ns per operation, 200 rounds
 * per sample (--quick 50). Subjects: ideal_gen, opool, opool fixed, opool
 * fixed no live list, and Rust's SlotMap, DenseSlotMap, HopSlotMap and slab
 * (bench/slotmap). */

enum { AR_INSERT, AR_GET, AR_REMOVE, AR_REUSE, AR_PHASES };
static const char *const ar_case[AR_PHASES] = {"arena insert", "arena get", "arena remove",
                                               "arena insert used"};
enum { AR_IGEN, AR_OPOOL, AR_OPOOL_FIXED, AR_OPOOL_FIXED_BARE, AR_COUNT };

typedef struct ar_state {
    uint32_t n, rounds;
    int phase;
    uint64_t *h_igen;
    opool_handle *h_op;
    fixed_list_handle *h_fx_list;
    fixed_bare_handle *h_fx_bare;
} ar_state;

/* One round of each subject: adds each phase's nanoseconds to ns[]; returns
 * the gets' sum plus the final objects' (a, b), which every subject shares. */
static BENCH_NOINLINE uint64_t arena_igen(uint32_t n, uint64_t *H, uint64_t tag, uint64_t *ns) {
    igen_pool p;
    uint64_t sum = 0, bad = 0, t0 = bench_now_ns();
    igen_init(&p, n, opt.size);
    for (uint32_t k = 0; k < n; k++) {
        char *o = igen_alloc(&p, &H[k]);
        FA(o) = k;
        FB(o) = tag;
    }
    uint64_t t1 = bench_now_ns();
    for (uint32_t k = 0; k < n; k++) {
        const char *o = igen_get(&p, H[k]);
        sum += FA(o) + FB(o);
    }
    uint64_t t2 = bench_now_ns();
    for (uint32_t k = 0; k < n; k++) bad += !igen_free(&p, H[k]);
    uint64_t t3 = bench_now_ns();
    for (uint32_t k = 0; k < n; k++) {
        char *o = igen_alloc(&p, &H[k]);
        FA(o) = k;
        FB(o) = tag + 1;
    }
    uint64_t t4 = bench_now_ns();
    for (uint32_t k = 0; k < n; k++) sum += bench_mix(FA(igen_get(&p, H[k])), k);
    igen_fini(&p);
    ns[AR_INSERT] += t1 - t0, ns[AR_GET] += t2 - t1, ns[AR_REMOVE] += t3 - t2;
    ns[AR_REUSE] += t4 - t3;
    return bad ? 0 : sum;
}

static BENCH_NOINLINE uint64_t arena_opool(uint32_t n, opool_handle *H, uint64_t tag,
                                           uint64_t *ns) {
    uint64_t sum = 0, bad = 0, t0 = bench_now_ns();
    opool *p = make_opool(n);
    for (uint32_t k = 0; k < n; k++) {
        char *o = opool_alloc(p, &H[k]);
        FA(o) = k;
        FB(o) = tag;
    }
    uint64_t t1 = bench_now_ns();
    for (uint32_t k = 0; k < n; k++) {
        const char *o = opool_get(p, H[k]);
        sum += FA(o) + FB(o);
    }
    uint64_t t2 = bench_now_ns();
    for (uint32_t k = 0; k < n; k++) bad += opool_free(p, H[k]) != OPOOL_OK;
    uint64_t t3 = bench_now_ns();
    for (uint32_t k = 0; k < n; k++) {
        char *o = opool_alloc(p, &H[k]);
        FA(o) = k;
        FB(o) = tag + 1;
    }
    uint64_t t4 = bench_now_ns();
    for (uint32_t k = 0; k < n; k++) sum += bench_mix(FA(opool_get(p, H[k])), k);
    end_opool(p);
    ns[AR_INSERT] += t1 - t0, ns[AR_GET] += t2 - t1, ns[AR_REMOVE] += t3 - t2;
    ns[AR_REUSE] += t4 - t3;
    return bad ? 0 : sum;
}

/* arena_P: arena_opool's round over a fixed typed pool P (make_P, P_alloc,
 * P_get, P_free). */
#define FIXED_AR_LOOP(P)                                                                           \
    static BENCH_NOINLINE uint64_t arena_##P(uint32_t n, P##_handle *H, uint64_t tag,              \
                                             uint64_t *ns) {                                       \
        uint64_t sum = 0, bad = 0, t0 = bench_now_ns();                                            \
        P *p = make_##P(n);                                                                        \
        for (uint32_t k = 0; k < n; k++) {                                                         \
            bench_obj *o = P##_alloc(p, &H[k]);                                                    \
            FA(o) = k;                                                                             \
            FB(o) = tag;                                                                           \
        }                                                                                          \
        uint64_t t1 = bench_now_ns();                                                              \
        for (uint32_t k = 0; k < n; k++) {                                                         \
            const bench_obj *o = P##_get(p, H[k]);                                                 \
            sum += FA(o) + FB(o);                                                                  \
        }                                                                                          \
        uint64_t t2 = bench_now_ns();                                                              \
        for (uint32_t k = 0; k < n; k++) bad += P##_free(p, H[k]) != OPOOL_OK;                     \
        uint64_t t3 = bench_now_ns();                                                              \
        for (uint32_t k = 0; k < n; k++) {                                                         \
            bench_obj *o = P##_alloc(p, &H[k]);                                                    \
            FA(o) = k;                                                                             \
            FB(o) = tag + 1;                                                                       \
        }                                                                                          \
        uint64_t t4 = bench_now_ns();                                                              \
        for (uint32_t k = 0; k < n; k++) sum += bench_mix(FA(P##_get(p, H[k])), k);                \
        end_##P(p);                                                                                \
        ns[AR_INSERT] += t1 - t0, ns[AR_GET] += t2 - t1, ns[AR_REMOVE] += t3 - t2;                 \
        ns[AR_REUSE] += t4 - t3;                                                                   \
        return bad ? 0 : sum;                                                                      \
    }
FIXED_AR_LOOP(fixed_list)
FIXED_AR_LOOP(fixed_bare)

static double arena_rep(void *ctx, int s, int rep, uint64_t *check) {
    ar_state *st = ctx;
    uint64_t ns[AR_PHASES] = {0}, sum = 0;
    for (uint32_t r = 0; r < st->rounds; r++) {
        uint64_t tag = (uint64_t)(rep + 1) << 40 | (uint64_t)r << 8;
        uint64_t got = s == AR_IGEN          ? arena_igen(st->n, st->h_igen, tag, ns)
                       : s == AR_OPOOL       ? arena_opool(st->n, st->h_op, tag, ns)
                       : s == AR_OPOOL_FIXED ? arena_fixed_list(st->n, st->h_fx_list, tag, ns)
                                             : arena_fixed_bare(st->n, st->h_fx_bare, tag, ns);
        if (got == 0) fail("%s N=%u: a remove failed", ar_case[st->phase], st->n);
        sum += got;
    }
    *check = sum;
    return (double)ns[st->phase] / ((double)st->n * st->rounds);
}

static void run_arena(uint32_t n) {
    ar_state st;
    memset(&st, 0, sizeof st);
    st.n = n;
    st.rounds = opt.quick ? 50 : 200;
    st.h_igen = bench_xalloc((size_t)n * sizeof(uint64_t));
    st.h_op = bench_xalloc((size_t)n * sizeof(opool_handle));
    st.h_fx_list = bench_xalloc((size_t)n * sizeof(fixed_list_handle));
    st.h_fx_bare = bench_xalloc((size_t)n * sizeof(fixed_bare_handle));
    static const char *const notes[AR_PHASES] = {
        "per insert; create for N + N inserts", "per get, in insertion order",
        "per remove, in insertion order", "per insert after N removes"};
    for (st.phase = 0; st.phase < AR_PHASES; st.phase++) {
        case_def c;
        memset(&c, 0, sizeof c);
        c.workload = ar_case[st.phase];
        c.n = n;
        c.ops = (uint64_t)n * st.rounds;
        c.nsubj = AR_COUNT;
        c.ref1 = AR_IGEN;
        c.ref2 = -1;
        c.name[AR_IGEN] = "ideal_gen";
        c.name[AR_OPOOL] = "opool";
        c.name[AR_OPOOL_FIXED] = subject_name(S_OPOOL_FIXED);
        c.name[AR_OPOOL_FIXED_BARE] = subject_name(S_OPOOL_FIXED_BARE);
        for (int j = 0; j < AR_COUNT; j++) c.note[j] = notes[st.phase];
        run_case(&c, arena_rep, &st);
    }
    free(st.h_igen);
    free(st.h_op);
    free(st.h_fx_list);
    free(st.h_fx_bare);
}

/* ==== subjects in other processes ============================================
 * opool_bench runs the siblings beside it (bench_child.h): opool_bench_<malloc>
 * (this file built with BENCH_ALLOC, bench/bench.cmake), which runs its malloc
 * subject alone, and opool_bench_slotmap (bench/slotmap, Rust). Their rows go
 * after this program's rows of the same case; their ratios use the reference
 * medians this program measured, and their checksums must equal this
 * program's for the case, or the run fails. */

#define MAX_PEER_INFO 8
static char g_peer_info[MAX_PEER_INFO][256];
static int g_npeer_info;

#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 1, 2)))
#endif
static void
add_peer_info(const char *fmt, ...);

static void add_peer_info(const char *fmt, ...) {
    if (g_npeer_info >= MAX_PEER_INFO) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_peer_info[g_npeer_info++], sizeof g_peer_info[0], fmt, ap);
    va_end(ap);
}

static int merge_peer_row(void *ctx, char *line) {
    const char *prog = ctx;
    bench_row r;
    char *extra[BENCH_CHILD_MAX_EXTRA];
    if (bench_child_parse_row(line, &r, extra) != 0) {
        fprintf(stderr, "opool_bench: %s sent a malformed row\n", prog);
        return -1;
    }
    r.size = opt.size; /* the child ran the size being run (--size) */
    const case_ref *k = NULL;
    for (int i = 0; i < g_ncases && k == NULL; i++)
        if (strcmp(g_cases[i].workload, r.workload) == 0 && g_cases[i].n == r.n &&
            g_cases[i].size == r.size)
            k = &g_cases[i];
    if (k == NULL) {
        fprintf(stderr, "opool_bench: %s sent %s N=%u %zu B, a case this run did not measure\n",
                prog, r.workload, r.n, r.size);
        return -1;
    }
    if (r.reps != k->reps || r.checksum != k->checksum) {
        fprintf(stderr,
                "opool_bench: %s N=%u %zu B: %s (%s) has checksum %016" PRIx64 " over %d reps, "
                "the subjects here %016" PRIx64 " over %d: they did not do the same work\n",
                r.workload, r.n, r.size, r.subject, prog, r.checksum, r.reps, k->checksum, k->reps);
        return -1;
    }
    r.ratio_ref1 = k->ref1 > 0 ? r.median / k->ref1 : -1;
    r.ratio_ref2 = k->ref2 > 0 ? r.median / k->ref2 : -1;
    if (g_nrows >= MAX_ROWS) fail("too many result rows");
    int at = g_nrows;
    for (int i = 0; i < g_nrows; i++)
        if (strcmp(g_rows[i].workload, r.workload) == 0 && g_rows[i].n == r.n &&
            g_rows[i].size == r.size)
            at = i + 1;
    memmove(&g_rows[at + 1], &g_rows[at], sizeof(bench_row) * (size_t)(g_nrows - at));
    g_rows[at] = r;
    g_nrows++;
    return 0;
}

static size_t g_first_size; /* the first object size this run measures */

static void run_peer(const char *dir, const char *name, const char *why_missing) {
    char path[4200]; /* dir is at most 4095 characters */
    snprintf(path, sizeof path, "%s/opool_bench_%s", dir, name);
    const char *prog = strrchr(path, '/') + 1;
    char reps[16], fd_reps[16], size[16], ns[64] = "";
    snprintf(reps, sizeof reps, "%d", opt.reps);
    snprintf(fd_reps, sizeof fd_reps, "%d", reps_filldrain());
    snprintf(size, sizeof size, "%zu", opt.size);
    for (int j = 0; j < n_cl(); j++)
        snprintf(ns + strlen(ns), sizeof ns - strlen(ns), "%s%u", j ? "," : "", cl_n[j]);
    char *argv[16];
    int a = 0;
    argv[a++] = path;
    argv[a++] = (char *)"--child";
    argv[a++] = (char *)"--reps";
    argv[a++] = reps;
    argv[a++] = (char *)"--filldrain-reps";
    argv[a++] = fd_reps;
    argv[a++] = (char *)"--size";
    argv[a++] = size;
    argv[a++] = (char *)"--ns";
    argv[a++] = ns;
    if (opt.quick) argv[a++] = (char *)"--quick";
    if (opt.only) {
        argv[a++] = (char *)"--only";
        argv[a++] = (char *)opt.only;
    }
    argv[a] = NULL;
    char info[200];
    uint64_t t0 = bench_now_ns();
    int rc =
        bench_child_run("opool_bench", path, argv, merge_peer_row, (void *)prog, info, sizeof info);
    /* once per program, not per size: the same program runs at each size */
    bool first = opt.size == g_first_size;
    if (rc == BENCH_CHILD_MISSING) {
        if (first)
            add_peer_info("%-9s skipped: no %s beside opool_bench (%s)", name, prog, why_missing);
        fprintf(stderr, "  %s skipped: not built\n", prog);
        return;
    }
    if (rc != BENCH_CHILD_OK) fail("%s failed", path);
    if (first) add_peer_info("%-9s %s (%s)", name, info, prog);
    fprintf(stderr, "  %s done in %.1f s (total %.1f s)\n", prog,
            (double)(bench_now_ns() - t0) / 1e9, (double)(bench_now_ns() - g_t_start) / 1e9);
}

static void run_peers(const char *argv0) {
    char dir[4096];
    bench_child_self_dir(dir, sizeof dir, argv0);
    for (int i = 0; i < BENCH_ALLOC_NPEERS; i++) {
        char why[80];
        snprintf(why, sizeof why, "lib%s not found when configured", bench_alloc_peer(i));
        run_peer(dir, bench_alloc_peer(i), why);
    }
    run_peer(dir, "slotmap", "cargo or librust-slotmap-dev not found when configured");
}

/* --child: this build's malloc subject on the workloads that have one, at
 * one object size (--size); churn and lookup at the N points of --ns (the
 * parent's own without it). The rows go to stdout for the parent. */
static void run_child(void) {
    static const int ids[1] = {S_MALLOC};
    const uint32_t big = 1000000;
    bool ch = wanted("churn"), lk = wanted("lookup");
    if (ch || lk) {
        if (opt.ns == NULL) {
            for (int j = 0; j < n_cl(); j++) run_churn_lookup(cl_n[j], ids, 1, -1, -1, "", ch, lk);
        } else {
            for (const char *p = opt.ns; *p;) {
                char *end;
                unsigned long n = strtoul(p, &end, 10);
                if (end == p || n < 2 || n > big || (*end != ',' && *end != '\0'))
                    fail("--ns: '%s' is not a list of N from 2 to %u", opt.ns, big);
                run_churn_lookup((uint32_t)n, ids, 1, -1, -1, "", ch, lk);
                p = *end ? end + 1 : end;
            }
        }
    }
    if (wanted("filldrain")) run_filldrain(n_bulk(), ids, 1);
    char info[200];
    bench_alloc_describe(info, sizeof info);
    printf("INFO\t%s\n", info);
    for (int i = 0; i < g_nrows; i++) bench_child_put_row(stdout, &g_rows[i], NULL);
}

/* ==== main ==================================================================== */

static void usage(FILE *f) {
    fprintf(f, "usage: opool_bench [--quick] [--size 16|64|256] [--reps N] [--csv PATH]\n"
               "                   [--only "
               "churn,lookup,filldrain,iter,resident,particles,side,arena,frame,flags]\n"
               "                   [--layouts] [--no-peers]\n"
               "  --quick    every N at most 100K, fewer operations and repetitions\n"
               "             (under 30 s, the other processes included)\n"
               "  --size     one object size (default: 16, 64 and 256 in turn)\n"
               "  --layouts  the layout experiment instead of the core comparison\n"
               "  --no-peers do not run opool_bench_<mimalloc|jemalloc|tcmalloc|slotmap>\n"
               "  --child    (used by opool_bench) the malloc subject only, rows to stdout;\n"
               "             with --ns N,N,.. (churn/lookup's N points) and --filldrain-reps R\n"
               "  --csv      CSV output (default bench/out/core.csv, or\n"
               "             bench/out/layouts.csv with --layouts); the SVG charts\n"
               "             go to the same directory\n");
}

static void parse_args(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--quick") == 0) {
            opt.quick = true;
        } else if (strcmp(a, "--layouts") == 0) {
            opt.layouts = true;
        } else if (strcmp(a, "--child") == 0) {
            opt.child = true;
        } else if (strcmp(a, "--no-peers") == 0) {
            opt.no_peers = true;
        } else if (strcmp(a, "--size") == 0 && v) {
            opt.size = (size_t)strtoul(v, NULL, 10);
            opt.one_size = true;
            i++;
            if (opt.size != 16 && opt.size != 64 && opt.size != 256) {
                fprintf(stderr, "opool_bench: --size must be 16, 64 or 256\n");
                exit(2);
            }
        } else if (strcmp(a, "--filldrain-reps") == 0 && v) {
            opt.fd_reps = bench_reps_arg("opool_bench", a, v);
            i++;
        } else if (strcmp(a, "--ns") == 0 && v) {
            opt.ns = v;
            i++;
        } else {
            i += bench_common_arg("opool_bench", a, v, &opt.reps, &opt.csv, &opt.only, usage) - 1;
        }
    }
    opt.reps_given = opt.reps != 0;
    if (opt.reps == 0) opt.reps = opt.quick ? 3 : 9;
}

static char g_load_start[64];

/* The C++ peers: which were built (with what), which were not and why. */
static void print_peers(void) {
    static const char *const header[N_PEER] = {"<boost/pool/object_pool.hpp>",
                                               "<boost/pool/object_pool.hpp>", "<plf_colony.h>"};
    for (int k = 0; k < N_PEER; k++) {
        const char *version = NULL;
#if BENCH_PEERS
        version = bench_peer_version((bench_peer_kind)k);
#endif
        printf("  %-10s %-19s ", k == 0 ? "peers:" : "", subject_name(S_BOOST_OBJ + k));
        if (version)
            printf("%s\n", version);
        else
            printf("NOT BUILT: no %s or no C++ compiler at configure time (make bench-deps)\n",
                   header[k]);
    }
}

/* After the table: the workloads a built peer has no row in, and why. */
static void print_peer_notes(void) {
#if BENCH_PEERS
    static const char *const workloads[3][2] = {
        {"churn", "churn/lookup"}, {"filldrain", "fill+drain"}, {"iter", "iterate"}};
    for (int k = 0; k < N_PEER; k++) {
        if (bench_peer_version((bench_peer_kind)k) == NULL) continue;
        for (int w = 0; w < 3; w++) {
            const char *why = bench_peer_skip((bench_peer_kind)k, workloads[w][0]);
            if (why && wanted(workloads[w][0]))
                printf("%s: no %s rows: %s.\n", subject_name(S_BOOST_OBJ + k), workloads[w][1],
                       why);
        }
    }
#endif
}

static void print_header(const bench_machine *m, const char *mode, const size_t *sizes,
                         int nsizes) {
    char load_end[64];
    bench_read_load(load_end, sizeof load_end);
    printf("opool_bench -- %s\n", mode);
    printf("  cpu:       %s (%ld online)\n", m->cpu, m->nproc);
    printf("  compiler:  %s\n", m->compiler);
    printf("  flags:     %s\n", m->flags);
    printf("  THP:       %s\n", m->thp);
    printf("  loadavg:   %s at start, %s at end (other tenants skew memory-bound results)\n",
           g_load_start, load_end);
    for (int z = 0; z < nsizes; z++) {
        /* reads the header's private layout: a diagnostic only */
        opt.size = sizes[z];
        opool *probe = make_opool(1024);
        uintptr_t base = (uintptr_t)((const opool__hot *)(const void *)probe)->base[0];
        size_t stride = ((const opool__hot *)(const void *)probe)->stride;
        opool_destroy(probe);
        printf("  objects:   %zu bytes; opool stride %zu, object base %% 64 = %u "
               "(ideal arrays are 64-byte aligned)\n",
               sizes[z], stride, (unsigned)(base % 64));
    }
    if (!opt.layouts) print_peers();
#ifdef __GLIBC__
    printf("  malloc:    glibc %s, M_TRIM_THRESHOLD raised so freed memory stays mapped,\n"
           "             M_MMAP_THRESHOLD 32 MiB as glibc's sliding threshold would give\n",
           gnu_get_libc_version());
#endif
    for (int i = 0; i < g_npeer_info; i++)
        printf("  %s %s\n", i ? "          " : "peers:    ", g_peer_info[i]);
    if (g_npeer_info > 0)
        printf("             (separate processes, run once per object size after this one's\n"
               "             subjects; their ratios are to this process's reference medians)\n");
    printf("  method:    %d recorded repetitions after 1 warm-up (fill+drain %d; resident %d,\n"
           "             no warm-up), subjects interleaved; median/min/max of ns per op;\n"
           "             ratios are medians over the reference's median in this run\n",
           opt.reps, reps_filldrain(), reps_resident());
    printf("\n");
}

/* ==== charts ================================================================
 * One bar chart per workload and the curves of churn and lookup against N,
 * drawn from the rows: subjects added to any workload appear by themselves. */

static const char *unit_of(const char *workload) {
    static const char *const units[][2] = {
        {"churn", "ns per free+alloc pair"},
        {"lookup", "ns per lookup"},
        {"fill+drain", "ns per alloc+free pair"},
        {"iterate", "ns per live object"},
        {"particles", "ns per particle update"},
        {"resident", "bytes per live object"},
        {"side get", "ns per lookup"},
    };
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strncmp(workload, units[i][0], strlen(units[i][0])) == 0) return units[i][1];
    return "ns per operation";
}

/* "iterate 10% live" -> "iterate_10_live" */
static bool lines_of(const char *workload) {
    return strcmp(workload, "churn") == 0 || strcmp(workload, "lookup") == 0;
}

int main(int argc, char **argv) {
    if (argc == 5 && strcmp(argv[1], "--resident-child") == 0) {
        opt.size = (size_t)strtoul(argv[3], NULL, 10);
        return resident_child(atoi(argv[2]), (uint32_t)strtoul(argv[4], NULL, 10));
    }
    parse_args(argc, argv);
    bench_machine m;
    bench_machine_get(&m);
    g_tty = isatty(2);
    bench_read_load(g_load_start, sizeof g_load_start);
    g_t_start = bench_now_ns();
#if defined(__GLIBC__) && BENCH_ALLOC == BENCH_ALLOC_GLIBC
    /* Keep freed memory mapped, as a pool keeps its storage: otherwise
     * glibc returns it to the kernel between repetitions and malloc's next
     * repetition pays page faults the pools do not. */
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    /* Setting the trim threshold turns off glibc's sliding mmap threshold,
     * under which a block of up to 32 MiB, once freed, comes back from the
     * heap the next time: what the Rust peers get (their process sets
     * nothing), and what a C program that sets nothing gets too. Without it
     * every container the arena workload creates would be a fresh mapping,
     * its first touches page faults. */
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
#endif
    static const size_t all_sizes[3] = {16, 64, 256};
    size_t sizes[3];
    int nsizes = 0;
    if (opt.one_size || opt.layouts)
        sizes[nsizes++] = opt.size;
    else
        for (int z = 0; z < 3; z++) sizes[nsizes++] = all_sizes[z];
    const uint32_t big = 1000000, small = 1000;
    char mode[160], size_list[40] = "";
    for (int z = 0; z < nsizes; z++)
        snprintf(size_list + strlen(size_list), sizeof size_list - strlen(size_list), "%s%zu",
                 z ? ", " : "", sizes[z]);
    snprintf(mode, sizeof mode, "%s%s, object size%s %s",
             opt.layouts ? "layout experiment" : "core", opt.quick ? " (--quick)" : "",
             nsizes > 1 ? "s" : "", size_list);
    if (opt.child) {
        fprintf(stderr, "opool_bench_%s (child): %s\n", BENCH_ALLOC_NAME, mode);
        run_child();
        return 0;
    }
    fprintf(stderr, "opool_bench: %s\n", mode);
    if (BENCH_ALLOC != BENCH_ALLOC_GLIBC)
        fprintf(stderr,
                "opool_bench: note: this is the %s build; opool_bench runs it with "
                "--child\n",
                BENCH_ALLOC_NAME);

    int first_row[4] = {0};
    g_first_size = sizes[0];
    for (int z = 0; z < nsizes; z++) {
        opt.size = sizes[z];
        first_row[z] = g_nrows;
        if (opt.layouts) {
            static const int ids[12] = {S_IGEN,   S_OPOOL,  S_OPOOL_BARE, S_OPOOL_FIXED_BARE,
                                        S_LAY_AC, S_LAY_AD, S_LAY_BC,     S_LAY_BD,
                                        S_LAY_AE, S_LAY_F,  S_LAY_G,      S_LAY_H};
            run_churn_lookup(small, ids, 12, 0, 4, "", true, true);
            run_churn_lookup(big, ids, 12, 0, 4, "", true, true);
            continue;
        }
        int ids[MAX_SUBJ] = {S_IDEAL,
                             S_IGEN,
                             S_OPOOL,
                             S_OPOOL_GROWN,
                             S_OPOOL_BARE,
                             S_OPOOL_FIXED,
                             S_OPOOL_FIXED_BARE,
                             S_MALLOC};
        int nids = add_peers(ids, 8, "churn");
        bool ch = wanted("churn"), lk = wanted("lookup");
        if (ch || lk)
            for (int j = 0; j < n_cl(); j++) run_churn_lookup(cl_n[j], ids, nids, 1, 0, "", ch, lk);
        if (wanted("filldrain")) {
            int fids[MAX_SUBJ] = {S_IDEAL,      S_IGEN,        S_OPOOL,
                                  S_OPOOL_BARE, S_OPOOL_FIXED, S_OPOOL_FIXED_BARE,
                                  S_MALLOC};
            run_filldrain(n_bulk(), fids, add_peers(fids, 7, "filldrain"));
        }
        if (wanted("iter")) {
            uint32_t *perm = bench_xalloc((size_t)n_bulk() * sizeof(uint32_t));
            run_iter(n_bulk(), 10, perm);
            run_iter(n_bulk(), 50, perm);
            run_iter(n_bulk(), 100, perm);
            free(perm);
        }
        if (wanted("particles")) {
            run_particles(10000);
            run_particles(100000);
        }
        if (wanted("arena")) run_arena(10000);
        if (wanted("frame"))
            for (uint32_t pct = 1; pct <= 10; pct += 9) {
                run_frame(10000, pct);
                run_frame(n_bulk(), pct);
            }
        if (wanted("side"))
            for (int j = 0; j < n_cl(); j++) run_side(cl_n[j]);
        if (wanted("flags")) {
            static const int fl[4] = {S_IGEN, S_OPOOL, S_OPOOL_ZERO, S_OPOOL_POISON};
            run_churn_lookup(cl_n[0], fl, 4, 0, -1, ", debug flags", true, false);
        }
        if (wanted("resident")) run_resident(n_bulk());
        /* last in the size's block: their rows join this size's cases */
        if (!opt.no_peers && BENCH_ALLOC == BENCH_ALLOC_GLIBC) run_peers(argv[0]);
    }
    first_row[nsizes] = g_nrows;

    print_header(&m, mode, sizes, nsizes);
    if (opt.layouts) {
        printf("Layouts: A = 8-byte slot record {gen, pos} (opool), B = split gen[]/pos[];\n"
               "C = base + i*stride, D = opool's chunk formula (shift 32), E = D behind a\n"
               "predicted chunk-0 branch. Roster pools like opool's fast paths minus its\n"
               "counters; F defers the swap-delete, G batches its write, H is ideal_gen\n"
               "over A's record (no live list). Ratios: to ideal_gen and to A+C.\n\n");
        bench_print_table(stdout, g_rows, g_nrows, "xideal_gen", "xA+C");
    } else {
        for (int z = 0; z < nsizes; z++) {
            if (nsizes > 1) printf("==== object size %zu bytes ====\n\n", sizes[z]);
            bench_print_table(stdout, g_rows + first_row[z], first_row[z + 1] - first_row[z],
                              "xideal_gen", "xideal");
            printf("\n");
        }
        printf(
            "churn: free handles[k] + alloc + write 2 fields, k random (ns per pair).\n"
            "lookup: get(handles[random k]) + read 2 fields, after churn (ns per lookup;\n"
            "  independent lookups, so this is throughput, not latency).\n"
            "fill+drain: N allocs (fresh free order) then N frees in random order (ns per pair).\n"
            "iterate: N slots, the given share live (random); ns per LIVE object; the ratio\n"
            "  column compares to the ideal_gen generation scan.\n"
            "particles: per frame spawn N/32, update every live particle, kill those whose\n"
            "  life ends (about N live); ns per particle update.\n"
            "arena: N inserts into a fresh container (created for N, its creation timed),\n"
            "  N gets, N removes, N inserts into the used container (ns per operation).\n"
            "frame P%%: per frame visit and update every object (N live), then erase P%% at\n"
            "  random and insert as many; ns per object visited, the changes included.\n"
            "resident: resident-set growth for N objects allocated and written, in a fresh\n"
            "  process per subject; BYTES per live object (the columns are not ns here).\n"
            "side get: a side table's value for handles[random k] (opool_side_get) against\n"
            "  the object itself (opool_get), same handles (ns per lookup).\n"
            "churn, debug flags: churn through pools with OPOOL_ZERO, OPOOL_POISON (ns per "
            "pair).\n");
        if (g_side_ratios[0])
            printf("\nside get against opool_get, medians of this run:\n%s", g_side_ratios);
        print_peer_notes();
    }
    const char *csv = opt.csv       ? opt.csv
                      : opt.layouts ? "bench/out/layouts.csv"
                                    : "bench/out/core.csv";
    if (bench_write_csv(csv, g_rows, g_nrows, "ideal_gen", opt.layouts ? "A+C" : "ideal", opt.size,
                        mode, &m) == 0)
        printf("\nCSV: %s\n", csv);
    if (!opt.layouts) {
        static const bench_svg_run run = {
            "opool_bench", "", {"N", "live objects N"}, unit_of, lines_of};
        bench_svg_charts(csv, &run, g_rows, g_nrows, mode);
    }
    fprintf(stderr, "opool_bench: done in %.1f s\n", (double)(bench_now_ns() - g_t_start) / 1e9);
    return 0;
}
