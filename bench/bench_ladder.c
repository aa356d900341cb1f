/*
 * bench_ladder.c -- what each guarantee of opool_mt's cache path costs.
 *
 * Usage: bench_ladder [--quick] [--reps N] [--size 16|64|256] [--threads 1,2,8]
 *
 * bench_mt's workload (T threads, each keeping WS = 16 live objects; per step
 * it checks and frees a random one of its own and allocates the replacement,
 * writing a tag to the object's first and last word), run on a ladder of
 * per-thread caches of free slots. Each rung adds one guarantee of
 * opool_mt's cache path (include/opool_mt.h, docs/CONCURRENCY.md) to the
 * rung below, written here the way opool_mt's hit writes it, and the last
 * row is opool_mt_cache_alloc/_free themselves:
 *
 *   0 pointers        a stack of free object pointers per thread; the
 *                     pointer is the handle; nothing is checked (what a
 *                     cached mempool such as DPDK's hands out)
 *   1 + handles       a stack of slot indexes; a handle is (generation,
 *                     index): alloc makes the slot's generation odd (a
 *                     release store), free checks the index and the
 *                     generation (an acquire load) and makes it even. A
 *                     stale or forged handle is refused, by any thread
 *   2 + one of two    free changes the generation with a CAS from the
 *     racing frees    handle's: of two threads freeing one handle exactly
 *                     one succeeds
 *   3 biased claim    instead of the CAS, opool_mt's claim (docs 8): alloc
 *                     writes the slot's home word; free checks it, stores
 *                     its claim, a compiler barrier, reads its cache's
 *                     remote state, then stores the generation
 *   4 + stealing and  the stack becomes opool_mt's deque (bottom and top,
 *     waiters         64-bit atomics): alloc lowers bottom, a compiler
 *                     barrier, reads the thieves word and top; free parks
 *                     with a release store of bottom, a compiler barrier,
 *                     a read of the waiters word: no slot stays parked out
 *                     of another thread's reach, no waiter asleep
 *   5 + live count    each alloc and free counts the cache's live objects
 *                     (a load and a store): count and stats
 *   opool_mt cache64  the library: one opool_mt_cache of 64 per thread
 *
 * Every thread owns 80 slots here (16 live, 64 free in its cache), so the
 * rungs run their hit paths only, as opool_mt's cache mostly does; the
 * barriers are compiler barriers, as opool_mt's hits use where membarrier
 * exists. Rung 4's thieves and waiters words are read, never written: no
 * thread steals or waits. Mops/s = million alloc+free pairs per second, all
 * threads; median of --reps after a warm-up, the rungs interleaved.
 */
#include "bench_util.h"

#include "opool_mt.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>

#define WS 16  /* live objects a thread keeps */
#define OWN 80 /* slots a thread owns: WS live + the cache's 64 */
#define MAXT 64

enum { R_PTR, R_HANDLE, R_CAS, R_CLAIM, R_DEQUE, R_COUNT, R_OPOOL, NRUNGS };
static const char *const rung_name[NRUNGS] = {"0 pointers, no checks",
                                              "1 + generational handles",
                                              "2 + one of two racing frees (CAS)",
                                              "3   biased claim instead of the CAS",
                                              "4 + stealing and waiters (deque)",
                                              "5 + live count",
                                              "opool_mt cache64 (the library)"};

static struct {
    int reps;
    size_t size;
    int threads[8], nthreads;
    uint64_t pairs;
} opt = {7, 64, {1, 2, 8}, 3, 4000000};

/* ---- the shared state of a run --------------------------------------------- */

typedef struct slotmem {
    unsigned char *objects; /* [nslots * size] */
    _Atomic uint32_t *gen;  /* [nslots] */
    _Atomic uint64_t *own;  /* [nslots] home << 32 | claim */
    uint32_t nslots;
    _Atomic uint32_t thieves; /* read by rung 4's alloc */
    _Atomic uint32_t waiters; /* read by rung 4's free */
    opool_mt *pool;           /* the last row */
    pthread_barrier_t go;
} slotmem;

/* One thread's cache: rungs 0-3 a stack, 4-5 the deque's two ends. */
typedef struct cache {
    _Alignas(64) void *ptr[OWN];
    uint32_t ent[OWN];
    uint32_t n;
    _Atomic uint64_t bottom, top;
    _Atomic uint32_t remote;
    _Atomic int64_t live;
    uint64_t home;
} cache;

typedef struct worker {
    slotmem *m;
    int rung, tid;
    uint64_t seed, pairs, sum;
    pthread_t thread;
} worker;

#define BARRIER() atomic_signal_fence(memory_order_seq_cst)

static inline void *object(const slotmem *m, uint32_t i) {
    return m->objects + (size_t)i * opt.size;
}

static inline uint64_t handle_of(uint32_t g, uint32_t i) { return (uint64_t)g << 32 | i; }

/* ---- the rungs: alloc returns the object and its handle, free the status --- */

static inline uint32_t take(cache *c, int rung, const slotmem *m) {
    if (rung < R_DEQUE) return c->ent[--c->n];
    uint64_t b = atomic_load_explicit(&c->bottom, memory_order_relaxed) - 1;
    atomic_store_explicit(&c->bottom, b, memory_order_relaxed);
    BARRIER();
    if (atomic_load_explicit(&m->thieves, memory_order_acquire) != 0 ||
        atomic_load_explicit(&c->top, memory_order_relaxed) > b)
        bench_fail("bench_ladder", "a thief or an empty cache: not modelled");
    return c->ent[b % OWN];
}

static inline void park(cache *c, int rung, slotmem *m, uint32_t i) {
    if (rung < R_DEQUE) {
        c->ent[c->n++] = i;
        return;
    }
    uint64_t b = atomic_load_explicit(&c->bottom, memory_order_relaxed);
    c->ent[b % OWN] = i;
    atomic_store_explicit(&c->bottom, b + 1, memory_order_release);
    BARRIER();
    if (atomic_load_explicit(&m->waiters, memory_order_relaxed) != 0)
        bench_fail("bench_ladder", "a waiter: not modelled");
}

static inline void count(cache *c, int rung, int64_t d) {
    if (rung >= R_COUNT)
        atomic_store_explicit(&c->live, atomic_load_explicit(&c->live, memory_order_relaxed) + d,
                              memory_order_relaxed);
}

static inline void *ladder_alloc(cache *c, int rung, slotmem *m, uint64_t *h) {
    if (rung == R_PTR) {
        void *p = c->ptr[--c->n];
        *h = (uint64_t)(uintptr_t)p;
        return p;
    }
    uint32_t i = take(c, rung, m);
    if (rung >= R_CLAIM) atomic_store_explicit(&m->own[i], c->home, memory_order_relaxed);
    uint32_t g = atomic_load_explicit(&m->gen[i], memory_order_relaxed) + 1;
    atomic_store_explicit(&m->gen[i], g, memory_order_release);
    count(c, rung, 1);
    *h = handle_of(g, i);
    return object(m, i);
}

static inline bool ladder_free(cache *c, int rung, slotmem *m, uint64_t h) {
    if (rung == R_PTR) {
        c->ptr[c->n++] = (void *)(uintptr_t)h;
        return true;
    }
    uint32_t i = (uint32_t)h, g = (uint32_t)(h >> 32);
    if (i >= m->nslots || !(g & 1)) return false;
    if (rung == R_CAS) {
        uint32_t want = g;
        if (!atomic_compare_exchange_strong_explicit(&m->gen[i], &want, g + 1, memory_order_acquire,
                                                     memory_order_relaxed))
            return false;
    } else {
        if (atomic_load_explicit(&m->gen[i], memory_order_acquire) != g) return false;
        if (rung >= R_CLAIM) {
            if (atomic_load_explicit(&m->own[i], memory_order_relaxed) != c->home) return false;
            atomic_store_explicit(&m->own[i], c->home | g, memory_order_relaxed);
            BARRIER();
            if (atomic_load_explicit(&c->remote, memory_order_relaxed) != 0) return false;
        }
        atomic_store_explicit(&m->gen[i], g + 1, memory_order_relaxed);
    }
    count(c, rung, -1);
    park(c, rung, m, i);
    return true;
}

/* ---- the workload ------------------------------------------------------------ */

static inline void tag(void *obj, uint64_t h) {
    uint64_t *w = obj;
    w[0] = h;
    w[opt.size / 8 - 1] = ~h;
}

static inline bool tag_ok(const void *obj, uint64_t h) {
    const uint64_t *w = obj;
    return w[0] == h && w[opt.size / 8 - 1] == ~h;
}

/* The steps of one thread; fn_alloc and fn_free are a rung's or the
 * library's. A macro, so that each rung's loop is compiled on its own. */
#define RUN_STEPS(w, ALLOC, FREE)                                                                  \
    do {                                                                                           \
        uint64_t h[WS], s = (w)->seed, sum = 0;                                                    \
        void *o[WS];                                                                               \
        for (int k = 0; k < WS; k++) {                                                             \
            o[k] = ALLOC(&h[k]);                                                                   \
            tag(o[k], h[k]);                                                                       \
        }                                                                                          \
        pthread_barrier_wait(&(w)->m->go);                                                         \
        for (uint64_t n = 0; n < (w)->pairs; n++) {                                                \
            uint32_t k = bench_below(&s, WS);                                                      \
            if (!tag_ok(o[k], h[k]) || !FREE(h[k]))                                                \
                bench_fail("bench_ladder", "rung %d: a slot handed out twice, or a free refused",  \
                           (w)->rung);                                                             \
            o[k] = ALLOC(&h[k]);                                                                   \
            tag(o[k], h[k]);                                                                       \
            sum += h[k];                                                                           \
        }                                                                                          \
        pthread_barrier_wait(&(w)->m->go);                                                         \
        for (int k = 0; k < WS; k++) (void)FREE(h[k]);                                             \
        (w)->sum = sum;                                                                            \
    } while (0)

static void *rung_thread(void *arg) {
    worker *w = arg;
    slotmem *m = w->m;
    cache *c = aligned_alloc(64, sizeof(cache));
    if (c == NULL) bench_fail("bench_ladder", "out of memory");
    memset(c, 0, sizeof *c);
    c->home = (uint64_t)(w->tid + 1) << 32;
    for (uint32_t j = OWN; j-- > 0;) { /* this thread's slots, the lowest on top */
        uint32_t i = (uint32_t)w->tid * OWN + j;
        c->ptr[c->n] = object(m, i);
        c->ent[c->n++] = i;
    }
    atomic_store_explicit(&c->bottom, OWN, memory_order_relaxed);
    int rung = w->rung;
#define R_ALLOC(hp) ladder_alloc(c, rung, m, hp)
#define R_FREE(hv) ladder_free(c, rung, m, hv)
    switch (rung) { /* one loop per rung, its branches on rung folded away */
    case R_PTR: {
        enum { rung = R_PTR };
        RUN_STEPS(w, R_ALLOC, R_FREE);
        break;
    }
    case R_HANDLE: {
        enum { rung = R_HANDLE };
        RUN_STEPS(w, R_ALLOC, R_FREE);
        break;
    }
    case R_CAS: {
        enum { rung = R_CAS };
        RUN_STEPS(w, R_ALLOC, R_FREE);
        break;
    }
    case R_CLAIM: {
        enum { rung = R_CLAIM };
        RUN_STEPS(w, R_ALLOC, R_FREE);
        break;
    }
    case R_DEQUE: {
        enum { rung = R_DEQUE };
        RUN_STEPS(w, R_ALLOC, R_FREE);
        break;
    }
    case R_COUNT: {
        enum { rung = R_COUNT };
        RUN_STEPS(w, R_ALLOC, R_FREE);
        break;
    }
    default:
        break;
    }
    free(c);
    return NULL;
}

static inline void *opool_alloc_bits(opool_mt_cache *c, uint64_t *h) {
    opool_handle x;
    void *obj = opool_mt_cache_alloc(c, &x);
    *h = x.bits;
    return obj;
}

static void *opool_thread(void *arg) {
    worker *w = arg;
    opool_mt_cache *c = opool_mt_cache_create(w->m->pool, 64);
    if (c == NULL) bench_fail("bench_ladder", "opool_mt_cache_create failed");
#define O_ALLOC(hp) opool_alloc_bits(c, hp)
#define O_FREE(hv) (opool_mt_cache_free(c, (opool_handle){hv}) == OPOOL_OK)
    RUN_STEPS(w, O_ALLOC, O_FREE);
    opool_mt_cache_destroy(c);
    return NULL;
}

/* ---- runs ---------------------------------------------------------------------- */

/* One run of rung r by nt threads: wall ns of the timed steps. */
static uint64_t run_once(int r, int nt, int rep) {
    slotmem m;
    memset(&m, 0, sizeof m);
    m.nslots = (uint32_t)nt * OWN;
    m.objects = bench_xalloc((size_t)m.nslots * opt.size);
    m.gen = bench_xalloc(m.nslots * sizeof *m.gen);
    m.own = bench_xalloc(m.nslots * sizeof *m.own);
    for (uint32_t i = 0; i < m.nslots; i++) {
        atomic_init(&m.gen[i], 0);
        atomic_init(&m.own[i], 0);
    }
    if (r == R_OPOOL) {
        opool_desc d = {0};
        d.object_size = opt.size;
        d.capacity = m.nslots + 64 * (uint32_t)nt; /* room for every cache's refill */
        if (opool_mt_create(&m.pool, &d) != OPOOL_OK) bench_fail("bench_ladder", "opool_mt_create");
    }
    pthread_barrier_init(&m.go, NULL, (unsigned)nt + 1);
    worker w[MAXT];
    for (int t = 0; t < nt; t++) {
        w[t] = (worker){&m, r, t, bench_seed(7, (uint32_t)nt, rep, (uint32_t)t), opt.pairs, 0, 0};
        if (pthread_create(&w[t].thread, NULL, r == R_OPOOL ? opool_thread : rung_thread, &w[t]))
            bench_fail("bench_ladder", "pthread_create");
    }
    pthread_barrier_wait(&m.go);
    uint64_t t0 = bench_now_ns();
    pthread_barrier_wait(&m.go);
    uint64_t t1 = bench_now_ns();
    for (int t = 0; t < nt; t++) {
        pthread_join(w[t].thread, NULL);
        bench_sink += w[t].sum;
    }
    pthread_barrier_destroy(&m.go);
    opool_mt_destroy(m.pool);
    free(m.objects);
    free(m.gen);
    free(m.own);
    return t1 - t0;
}

static void usage(FILE *f) {
    fprintf(f, "usage: bench_ladder [--quick] [--reps N] [--size 16|64|256] [--threads 1,2,8]\n");
}

int main(int argc, char **argv) {
    const char *csv = NULL, *only = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--quick") == 0) {
            opt.pairs /= 10;
            opt.reps = 3;
        } else if (strcmp(a, "--size") == 0 && v) {
            opt.size = (size_t)atoi(v);
            i++;
        } else if (strcmp(a, "--threads") == 0 && v) {
            opt.nthreads = 0;
            for (const char *p = v; *p && opt.nthreads < 8; p++) {
                int n = atoi(p);
                if (n < 1 || n > MAXT) bench_fail("bench_ladder", "threads must be 1..%d", MAXT);
                opt.threads[opt.nthreads++] = n;
                while (p[1] && p[1] != ',') p++;
                if (p[1] == ',') p++;
            }
            i++;
        } else {
            i += bench_common_arg("bench_ladder", a, v, &opt.reps, &csv, &only, usage) - 1;
        }
    }
    if (opt.size < 16 || opt.size % 8) bench_fail("bench_ladder", "--size: a multiple of 8, >= 16");
    printf("bench_ladder: what each guarantee of opool_mt's cache path costs; %zu-byte objects, "
           "%" PRIu64 " pairs per thread, Mops/s (million alloc+free pairs per second, all "
           "threads), median of %d\n",
           opt.size, opt.pairs, opt.reps);
    printf("  %-40s", "rung");
    for (int i = 0; i < opt.nthreads; i++) printf("   T=%-5d", opt.threads[i]);
    printf("\n");
    double mops[NRUNGS][8];
    for (int i = 0; i < opt.nthreads; i++) {
        int nt = opt.threads[i];
        double v[NRUNGS][BENCH_MAX_REPS];
        for (int rep = 0; rep <= opt.reps; rep++)
            for (int k = 0; k < NRUNGS; k++) {
                int r = (k + rep) % NRUNGS; /* interleaved; rep 0 warms up */
                uint64_t ns = run_once(r, nt, rep);
                if (rep) v[r][rep - 1] = (double)opt.pairs * nt * 1e3 / (double)ns;
            }
        for (int r = 0; r < NRUNGS; r++) {
            qsort(v[r], (size_t)opt.reps, sizeof(double), bench_cmp_double);
            mops[r][i] = v[r][opt.reps / 2];
        }
    }
    for (int r = 0; r < NRUNGS; r++) {
        printf("  %-40s", rung_name[r]);
        for (int i = 0; i < opt.nthreads; i++) printf("  %7.1f", mops[r][i]);
        printf("\n");
    }
    return 0;
}
