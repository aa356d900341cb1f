/*
 * bench_replay.c -- the allocation traces of real programs (bench/traces,
 * recorded with bench/trace/tracer.c) replayed against opool_heap, glibc
 * malloc, mimalloc, jemalloc and tcmalloc, single-threaded.
 *
 * Usage: bench_replay [--quick] [--reps N] [--only LIST] [--csv PATH]
 *                     [--no-peers] [--subjects LIST] [--traces DIR] [--ops N]
 *                     [--counted]
 *        bench_replay --info TRACE...     what a trace holds
 *   (--only: trace names, e.g. sqlite,cc1; --subjects: some of opool_heap,
 *    glibc, mimalloc, jemalloc, tcmalloc; DIR: default the source tree's
 *    bench/traces; TRACE: a file as the tracer writes it, or compressed
 *    with xz or gzip)
 *
 * ============================================================================
 * SUBJECTS, EACH IN A FRESH PROCESS
 * ============================================================================
 *   opool_heap   opool_heap_alloc / _calloc / _realloc / _free through the
 *                public header: default classes, OPOOL_HEAP_GROW, and
 *                desc.allocator zero, so its memory comes from wherever the
 *                heap takes it by default; blocks above its largest class go
 *                to its fallback, as the heap does. --counted gives it an
 *                allocator instead: glibc's posix_memalign / free (the
 *                alignment at least 64) behind a counter of its requests.
 *                Alignment above 16 (posix_memalign, memalign,
 *                aligned_alloc, valloc, pvalloc in the trace; rare): the
 *                heap has no aligned alloc, so the replay asks for size +
 *                align - 1 and rounds up, as a program would; a realloc of
 *                such a block is alloc + copy + free.
 *   glibc        malloc / calloc / realloc / posix_memalign / free.
 *   mimalloc, jemalloc, tcmalloc
 *                the same in bench_replay_<allocator>, this file linked
 *                with the replacement (bench/bench_child.h).
 * For every trace, the parent runs one process per subject, all at once
 * but never two replaying together: each in turn (in an order rotating
 * with the trace) loads the trace and replays it once cold, on one heap for
 * the whole process as the mallocs have theirs (memory and the system's
 * share are measured on that run, which is what the program met); then the
 * parent has them replay it --reps more times warm, one turn per subject
 * per round, each round in another order, so that a change in the load of
 * the machine falls on every subject alike (the time is the median of the
 * warm replays). A turn is two replays back to back, the second measured:
 * the first absorbs what the wait for the turn did (a heap that gives
 * memory back after a delay may have done so while idle). A replay ends, untimed, by checking and
 * freeing the blocks the program never freed, so the next one starts from what the heap kept. The
 * children speak bench_child.h's INFO and ROW lines, plus READY (cold replay done) and DONE (a warm
 * replay done, after an "R" line on their stdin: --serve).
 *
 * ============================================================================
 * WHAT A REPLAY DOES
 * ============================================================================
 * The trace's records, in their order, all threads as one (the tracer
 * serialised them; a trace is replayed on one thread). Loading (untimed)
 * turns block ids into slots of arrays sized to the most blocks live at
 * once; reallocarray is realloc, realloc(p, 0) a free (or a free then
 * malloc(0), where the traced allocator returned a block), realloc(NULL, n)
 * malloc, calloc(n, s) calloc(1, n * s), valloc/pvalloc an aligned request
 * of 4096. Every block's first and last byte are written when it is
 * handed out (calloc's are checked to be zero first), and read back and
 * checked before it is freed or reallocated (a realloc must keep its first
 * byte and, when growing, its last one): a broken allocator fails the run.
 * What is read back is folded into a checksum every subject must match.
 * The harness's own memory (trace, slot arrays) comes from mmap, never
 * from the allocator measured, and is resident before the baseline.
 *
 * ============================================================================
 * FIGURES
 * ============================================================================
 *   time       ms per replay of the whole trace (median of --reps warm
 *              replays), the same per call in the CSV; ratios are medians
 *              over the glibc and the mimalloc median (below 1: faster).
 *   peak RSS   the cold replay's peak resident memory over the process's
 *              resident memory just before it (trace loaded, arrays touched;
 *              VmHWM reset there through /proc/self/clear_refs, so the peak
 *              is VmHWM minus that baseline; the same setup in every
 *              subject's process). "live" is the most bytes the program
 *              had asked for and not freed at once: no heap can go below it.
 *   minflt     minor page faults (getrusage), of the cold replay and per
 *              warm replay.
 *   syscalls   mmap, munmap, madvise, mremap and brk calls, of the cold
 *              replay and per warm replay, counted by the kernel's syscall
 *              tracepoints through perf_event_open (needs root or
 *              perf_event_paranoid <= 1 and tracefs; "-" where not
 *              available).
 *   requests   opool_heap with --counted only: calls of its allocator
 *              (alloc + free; its fallback blocks included), of the cold
 *              replay and per warm replay, and the most bytes it held from
 *              it at once.
 * --quick replays a prefix of each trace (the first 200,000 calls, the
 * blocks still live at its end freed untimed) with 3 warm replays.
 */
#define _GNU_SOURCE /* mremap, syscall */

#include "opool.h"
#include "opool_heap.h"

#include "bench_util.h"
#include "bench_child.h"
#include "trace/trace_format.h"

#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#ifdef __linux__
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#endif

#ifndef OPOOL_BENCH_TRACES
#define OPOOL_BENCH_TRACES "bench/traces"
#endif

#define fail(...) bench_fail("bench_replay", __VA_ARGS__)

static struct {
    bool quick, child, no_peers;
    bool serve;          /* --serve: a child that waits for "R" on stdin before each warm replay */
    bool counted;        /* --counted: opool_heap's memory through a counting pass-through */
    const char *subject; /* --subject heap|malloc: this process replays */
    const char *trace;   /* --trace PATH */
    const char *dir;     /* --traces DIR */
    uint64_t max_ops;    /* --ops N: a prefix; 0 = all */
    int reps;
    const char *csv;
    const char *only;
    const char *subjects; /* --subjects LIST: of subj_order; NULL: all */
} opt;

enum { S_HEAP, S_MALLOC };

/* ==== the trace ================================================================ */

/* One replayed call: kind in the top 4 bits of ks, the slot below; for
 * K_ALIGNED, log2 of the alignment in the top 5 bits of size. */
typedef struct op {
    uint32_t ks;
    uint32_t size;
} op;
enum { K_MALLOC, K_CALLOC, K_REALLOC, K_FREE, K_ALIGNED };
#define SLOT_BITS 28
#define SLOT_MASK ((1u << SLOT_BITS) - 1u)
#define ALIGNED_SIZE_BITS 27
#define ALIGNED_SIZE_MASK ((1u << ALIGNED_SIZE_BITS) - 1u)

typedef struct trace {
    op *ops;
    uint64_t nops, ops_cap; /* ops_cap: elements mapped */
    uint32_t slots;         /* the most blocks live at once */
    uint64_t live_peak;     /* the most bytes live at once */
    uint64_t n_malloc, n_calloc, n_realloc, n_free, n_aligned;
    uint64_t requested; /* bytes asked for by every allocation and realloc */
    uint32_t largest, threads;
    uint64_t by_log2[33];      /* allocations (and realloc targets) of size in [2^(k-1), 2^k) */
    uint64_t records, unknown; /* the tracer's STATS, if present */
    bool truncated;            /* --ops or --quick cut it */
    char text[512];            /* the header: which program */
} trace;

/* ---- memory of the harness: mmap, never the allocator measured ---- */

static void *map_bytes(size_t bytes) {
    void *p =
        mmap(NULL, bytes ? bytes : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) fail("mmap of %zu bytes: %s", bytes, strerror(errno));
    return p;
}

/* p (mapped, *cap elements of elem bytes; NULL when *cap is 0) grown to hold
 * at least need elements: where it is now. */
static void *map_grow(void *p, uint64_t *cap, uint64_t need, size_t elem) {
    if (need <= *cap) return p;
    uint64_t n = *cap ? *cap : 1u << 16;
    while (n < need) n *= 2;
    void *q = *cap ? mremap(p, *cap * elem, n * elem, MREMAP_MAYMOVE) : map_bytes(n * elem);
    if (q == MAP_FAILED) fail("mremap to %" PRIu64 " bytes: %s", n * elem, strerror(errno));
    *cap = n;
    return q;
}

static void map_free(void *p, uint64_t cap, size_t elem) {
    if (p && cap) munmap(p, cap * elem);
}

/* ---- reading: a plain file, or through xz -dc / gzip -dc ---- */

typedef struct reader {
    int fd;
    pid_t pid; /* the decompressor, or 0 */
    unsigned char buf[1 << 16];
    size_t at, len;
    bool eof;
} reader;

static void reader_open(reader *r, const char *path) {
    memset(r, 0, sizeof *r);
    int fd = open(path, O_RDONLY);
    if (fd < 0) fail("cannot open %s: %s", path, strerror(errno));
    unsigned char m[6] = {0};
    ssize_t n = read(fd, m, sizeof m);
    const char *tool = NULL;
    static const unsigned char xz_magic[6] = {0xfd, '7', 'z', 'X', 'Z', 0};
    if (n == 6 && memcmp(m, xz_magic, 6) == 0) tool = "xz";
    if (n >= 2 && m[0] == 0x1f && m[1] == 0x8b) tool = "gzip";
    if (tool == NULL) {
        if (lseek(fd, 0, SEEK_SET) != 0) fail("%s: cannot seek: %s", path, strerror(errno));
        r->fd = fd;
        return;
    }
    close(fd);
    int p[2];
    if (pipe(p) != 0) fail("pipe: %s", strerror(errno));
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) fail("fork: %s", strerror(errno));
    if (pid == 0) {
        dup2(p[1], 1);
        close(p[0]);
        close(p[1]);
        execlp(tool, tool, "-dc", "--", path, (char *)NULL);
        fprintf(stderr, "bench_replay: cannot run %s: %s\n", tool, strerror(errno));
        _exit(127);
    }
    close(p[1]);
    r->fd = p[0];
    r->pid = pid;
}

/* Closes; fails the run if the decompressor failed (unless we stopped
 * reading early: then it was told to stop). */
static void reader_close(reader *r, const char *path) {
    close(r->fd);
    if (r->pid == 0) return;
    int status = 0;
    if (!r->eof) kill(r->pid, SIGTERM);
    waitpid(r->pid, &status, 0);
    if (r->eof && (!WIFEXITED(status) || WEXITSTATUS(status) != 0))
        fail("decompressing %s failed (status %d)", path, status);
}

static bool reader_fill(reader *r) {
    if (r->eof) return false;
    for (;;) {
        ssize_t n = read(r->fd, r->buf, sizeof r->buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) fail("reading a trace: %s", strerror(errno));
        if (n == 0) {
            r->eof = true;
            return false;
        }
        r->at = 0;
        r->len = (size_t)n;
        return true;
    }
}

/* The next byte, -1 at the end. */
static inline int reader_byte(reader *r) {
    if (r->at == r->len && !reader_fill(r)) return -1;
    return r->buf[r->at++];
}

static uint64_t reader_varint(reader *r, const char *path) {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        int b = reader_byte(r);
        if (b < 0) fail("%s: the trace ends inside a record", path);
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) return v;
    }
    fail("%s: a malformed number", path);
}

/* ---- loading: ids to slots ---- */

typedef struct loader {
    uint32_t *id_slot; /* block id -> slot */
    uint64_t id_cap, next_id;
    uint32_t *free_slots; /* a stack of free slots */
    uint64_t free_cap, nfree;
    uint32_t *slot_size; /* each live slot's size, for the live bytes */
    uint64_t size_cap;
    uint64_t live;
} loader;

static void push_op(trace *t, uint32_t kind, uint32_t slot, uint32_t size) {
    t->ops = map_grow(t->ops, &t->ops_cap, t->nops + 1, sizeof(op));
    t->ops[t->nops].ks = kind << SLOT_BITS | slot;
    t->ops[t->nops].size = size;
    t->nops++;
}

static uint32_t size32(uint64_t z, const char *path) {
    if (z > UINT32_MAX)
        fail("%s: a request of %" PRIu64 " bytes (the replay takes < 4 GiB)", path, z);
    return (uint32_t)z;
}

/* The bucket of by_log2 for size z: 0 for 0, k for [2^(k-1), 2^k), 32 from 2^31. */
static int size_log2(uint64_t z) {
    int k = 0;
    while (k < 32 && z >> k) k++;
    return k;
}

/* The block of z bytes now in slot takes the next id: a new block, or a
 * realloc's result in its old block's slot. */
static void take_id(trace *t, loader *L, uint32_t slot, uint64_t z) {
    L->id_slot = map_grow(L->id_slot, &L->id_cap, L->next_id + 1, sizeof(uint32_t));
    L->id_slot[L->next_id++] = slot;
    L->slot_size = map_grow(L->slot_size, &L->size_cap, (uint64_t)slot + 1, sizeof(uint32_t));
    L->slot_size[slot] = (uint32_t)z;
    L->live += z;
    t->requested += z;
    t->by_log2[size_log2(z)]++;
    if (L->live > t->live_peak) t->live_peak = L->live;
    if (z > t->largest) t->largest = (uint32_t)z;
}

/* A new block of z bytes (< 4 GiB): its slot. */
static uint32_t new_block(trace *t, loader *L, uint64_t z) {
    uint32_t slot;
    if (L->nfree)
        slot = L->free_slots[--L->nfree];
    else {
        if (t->slots > SLOT_MASK) fail("more than %u blocks live at once", SLOT_MASK);
        slot = t->slots++;
    }
    take_id(t, L, slot, z);
    return slot;
}

/* The slot of the block "back" ids before the next one; it stops being live. */
static uint32_t old_block(loader *L, uint64_t back, const char *path) {
    if (back >= L->next_id) fail("%s: a free of a block never allocated", path);
    uint64_t id = L->next_id - 1 - back;
    uint32_t slot = L->id_slot[id];
    if (slot == UINT32_MAX) fail("%s: block %" PRIu64 " freed twice", path, id);
    L->id_slot[id] = UINT32_MAX;
    L->live -= L->slot_size[slot];
    return slot;
}

static void release_slot(loader *L, uint32_t slot) {
    L->free_slots = map_grow(L->free_slots, &L->free_cap, L->nfree + 1, sizeof(uint32_t));
    L->free_slots[L->nfree++] = slot;
}

static uint32_t log2_align(uint64_t a, const char *path) {
    if (a == 0 || (a & (a - 1)) != 0 || a > (1u << 20)) fail("%s: alignment %" PRIu64, path, a);
    uint32_t k = 0;
    while ((1ull << k) < a) k++;
    return k;
}

/* Reads the trace at path, at most max_ops calls (0: all). */
static void trace_load(trace *t, const char *path, uint64_t max_ops) {
    memset(t, 0, sizeof *t);
    reader *r = map_bytes(sizeof *r);
    reader_open(r, path);
    char magic[8];
    for (int i = 0; i < 8; i++) {
        int b = reader_byte(r);
        if (b < 0) fail("%s: not a trace (too short)", path);
        magic[i] = (char)b;
    }
    if (memcmp(magic, TRACE_MAGIC, 8) != 0) fail("%s: not a trace (no " TRACE_MAGIC ")", path);
    uint64_t tl = reader_varint(r, path);
    for (uint64_t i = 0; i < tl; i++) {
        int b = reader_byte(r);
        if (b < 0) fail("%s: the header is cut", path);
        if (i < sizeof t->text - 1) t->text[i] = (char)b;
    }
    loader L;
    memset(&L, 0, sizeof L);
    uint32_t threads = 0;
    for (;;) {
        if (max_ops && t->nops >= max_ops) {
            t->truncated = true;
            break;
        }
        int code = reader_byte(r);
        if (code < 0) break;
        uint64_t a = 0, b = 0;
        uint32_t slot;
        switch (code) {
        case T_MALLOC:
        case T_REALLOC_NEW:
            a = size32(reader_varint(r, path), path);
            push_op(t, K_MALLOC, new_block(t, &L, a), (uint32_t)a);
            t->n_malloc++;
            break;
        case T_CALLOC:
            a = reader_varint(r, path);
            b = reader_varint(r, path);
            if (b && a > UINT32_MAX / b) fail("%s: calloc of more than 4 GiB", path);
            push_op(t, K_CALLOC, new_block(t, &L, a * b), (uint32_t)(a * b));
            t->n_calloc++;
            break;
        case T_REALLOC:
            a = reader_varint(r, path);
            b = reader_varint(r, path);
            slot = old_block(&L, a, path);
            if (b == 0) { /* the traced allocator gave a block for realloc(p, 0) */
                push_op(t, K_FREE, slot, 0);
                release_slot(&L, slot);
                push_op(t, K_MALLOC, new_block(t, &L, 0), 0);
                t->n_free++;
                t->n_malloc++;
                break;
            }
            take_id(t, &L, slot, size32(b, path)); /* the old block's slot */
            push_op(t, K_REALLOC, slot, (uint32_t)b);
            t->n_realloc++;
            break;
        case T_FREE:
        case T_REALLOC_FREE:
            slot = old_block(&L, reader_varint(r, path), path);
            push_op(t, K_FREE, slot, 0);
            release_slot(&L, slot);
            t->n_free++;
            break;
        case T_MEMALIGN:
        case T_POSIX_MEMALIGN:
        case T_ALIGNED_ALLOC:
        case T_VALLOC:
        case T_PVALLOC: {
            bool has_align = code != T_VALLOC && code != T_PVALLOC;
            a = has_align ? reader_varint(r, path) : 4096;
            b = reader_varint(r, path);
            if (code == T_PVALLOC) b = (b + 4095) & ~(uint64_t)4095;
            uint32_t k = log2_align(a < 8 ? 8 : a, path);
            if (b > ALIGNED_SIZE_MASK) fail("%s: an aligned request of %" PRIu64 " bytes", path, b);
            push_op(t, K_ALIGNED, new_block(t, &L, b), k << ALIGNED_SIZE_BITS | (uint32_t)b);
            t->n_aligned++;
            break;
        }
        case T_THREAD:
            a = reader_varint(r, path);
            if (a + 1 > threads) threads = (uint32_t)(a + 1);
            break;
        case T_STATS: {
            uint64_t n = reader_varint(r, path);
            for (uint64_t i = 0; i < n; i++) {
                uint64_t v = reader_varint(r, path);
                if (i == 0) t->records = v;
                if (i == 1 || i == 2) t->unknown += v;
            }
            break;
        }
        default:
            fail("%s: unknown record %d after %" PRIu64 " calls", path, code, t->nops);
        }
    }
    t->threads = threads;
    reader_close(r, path);
    munmap(r, sizeof *r);
    map_free(L.id_slot, L.id_cap, sizeof(uint32_t));
    map_free(L.free_slots, L.free_cap, sizeof(uint32_t));
    map_free(L.slot_size, L.size_cap, sizeof(uint32_t));
    if (t->nops == 0) fail("%s: no calls", path);
}

/* ==== the replay ================================================================ */

static char **g_P;    /* each slot's block */
static char **g_B;    /* opool_heap: the block an over-aligned slot was cut from, else NULL */
static uint32_t *g_Z; /* its size */
static uint8_t *g_S;  /* its stamp: the first byte; the last is last_byte(stamp, size) */

BENCH_ALWAYS_INLINE unsigned char last_byte(unsigned char st, uint32_t z) {
    return z > 1 ? (unsigned char)(st ^ 0x5au) : st;
}

BENCH_ALWAYS_INLINE void stamp(char *p, uint32_t z, unsigned char st) {
    if (z == 0) return;
    p[0] = (char)st;
    p[z - 1] = (char)last_byte(st, z);
}

static BENCH_NOINLINE void lost(uint32_t slot, uint64_t i, const char *what) {
    fail("op %" PRIu64 ", slot %u: %s (the heap returned overlapping or corrupt memory)", i, slot,
         what);
}

/* Reads back a block before it goes; its fold for the checksum. */
BENCH_ALWAYS_INLINE uint64_t check(const char *p, uint32_t z, unsigned char st, uint32_t slot,
                                   uint64_t i) {
    if (z == 0) return 1;
    unsigned char a = (unsigned char)p[0], b = (unsigned char)p[z - 1];
    if (a != st || b != last_byte(st, z)) lost(slot, i, "a block's bytes changed while live");
    return (uint64_t)a << 8 ^ b ^ (uint64_t)z << 16;
}

/* ---- opool_heap's allocator: the C library's, counted ---- */

typedef struct counted {
    uint64_t allocs, frees, bytes, peak;
} counted;
static counted g_counted;

static void *counted_alloc(void *ctx, size_t size, size_t align) {
    counted *c = ctx;
    void *p = NULL;
    if (align < 64) align = 64; /* as the library's default allocator */
    if (posix_memalign(&p, align, size) != 0) return NULL;
    c->allocs++;
    c->bytes += size;
    if (c->bytes > c->peak) c->peak = c->bytes;
    return p;
}

static void counted_free(void *ctx, void *ptr, size_t size) {
    counted *c = ctx;
    if (ptr == NULL) return;
    c->frees++;
    c->bytes -= size;
    free(ptr);
}

/* The heap as a user gets it (desc.allocator zero: whatever the heap does
 * for memory by default), or with --counted through counted_alloc. */
static opool_heap *heap_new(void) {
    opool_heap_desc d;
    memset(&d, 0, sizeof d);
    d.flags = OPOOL_HEAP_GROW;
    if (opt.counted) {
        d.allocator.alloc = counted_alloc;
        d.allocator.free = counted_free;
        d.allocator.ctx = &g_counted;
    }
    opool_heap *h = NULL;
    if (opool_heap_create(&h, &d) != OPOOL_OK) fail("opool_heap_create");
    return h;
}

/* ---- the subjects' calls: s is a constant wherever these are inlined ---- */

BENCH_ALWAYS_INLINE char *s_alloc(int s, opool_heap *h, uint32_t z) {
    return s == S_HEAP ? (char *)opool_heap_alloc(h, z) : (char *)malloc(z);
}

BENCH_ALWAYS_INLINE char *s_calloc(int s, opool_heap *h, uint32_t z) {
    return s == S_HEAP ? (char *)opool_heap_calloc(h, 1, z) : (char *)calloc(1, z);
}

/* The heap has no aligned alloc: over-allocate and round up (g_B keeps the block). */
static BENCH_NOINLINE char *heap_aligned(opool_heap *h, uint32_t slot, size_t align, uint32_t z) {
    char *p = align <= 16 ? opool_heap_alloc(h, z) : NULL;
    if (p && ((uintptr_t)p & (align - 1)) == 0) return p;
    if (p && opool_heap_free(h, p) != OPOOL_OK) fail("opool_heap_free rejected a block");
    char *base = opool_heap_alloc(h, (size_t)z + align - 1);
    if (base == NULL) return NULL;
    g_B[slot] = base;
    return (char *)(((uintptr_t)base + align - 1) & ~(uintptr_t)(align - 1));
}

BENCH_ALWAYS_INLINE char *s_aligned(int s, opool_heap *h, uint32_t slot, size_t align, uint32_t z) {
    if (s == S_HEAP) return heap_aligned(h, slot, align, z);
    void *p = NULL;
    return posix_memalign(&p, align < sizeof(void *) ? sizeof(void *) : align, z) == 0 ? p : NULL;
}

BENCH_ALWAYS_INLINE void s_free(int s, opool_heap *h, uint32_t slot, char *p) {
    if (s == S_HEAP) {
        char *base = g_B[slot];
        if (base) g_B[slot] = NULL;
        if (opool_heap_free(h, base ? base : p) != OPOOL_OK)
            fail("opool_heap_free rejected a block");
    } else {
        free(p);
    }
}

static BENCH_NOINLINE char *heap_realloc_aligned(opool_heap *h, uint32_t slot, char *p, uint32_t oz,
                                                 uint32_t z) {
    char *q = opool_heap_alloc(h, z);
    if (q == NULL) return NULL;
    memcpy(q, p, oz < z ? oz : z);
    s_free(S_HEAP, h, slot, p);
    return q;
}

BENCH_ALWAYS_INLINE char *s_realloc(int s, opool_heap *h, uint32_t slot, char *p, uint32_t oz,
                                    uint32_t z) {
    if (s != S_HEAP) return (char *)realloc(p, z);
    if (g_B[slot]) return heap_realloc_aligned(h, slot, p, oz, z);
    return (char *)opool_heap_realloc(h, p, z);
}

/* Replays ops[0..n): the checksum of what it read back. */
BENCH_ALWAYS_INLINE uint64_t replay_ops(int s, opool_heap *h, const op *ops, uint64_t n) {
    char **P = g_P;
    uint32_t *Z = g_Z;
    uint8_t *S = g_S;
    uint64_t sum = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint32_t kind = ops[i].ks >> SLOT_BITS, slot = ops[i].ks & SLOT_MASK, z = ops[i].size;
        unsigned char st = (unsigned char)(i * 0x9du + 1u);
        char *p;
        switch (kind) {
        case K_MALLOC:
            p = s_alloc(s, h, z);
            if (p == NULL) fail("op %" PRIu64 ": malloc(%u) failed", i, z);
            break;
        case K_CALLOC:
            p = s_calloc(s, h, z);
            if (p == NULL) fail("op %" PRIu64 ": calloc(1, %u) failed", i, z);
            if (z && (p[0] || p[z - 1])) lost(slot, i, "calloc's block is not zero");
            break;
        case K_REALLOC: {
            char *o = P[slot];
            uint32_t oz = Z[slot];
            sum = sum * 31u + check(o, oz, S[slot], slot, i);
            p = s_realloc(s, h, slot, o, oz, z);
            if (p == NULL) fail("op %" PRIu64 ": realloc to %u failed", i, z);
            if (oz) { /* the contents moved with it: keep the stamp */
                st = S[slot];
                if ((unsigned char)p[0] != st ||
                    (z >= oz && (unsigned char)p[oz - 1] != last_byte(st, oz)))
                    lost(slot, i, "realloc lost the contents");
            }
            break;
        }
        case K_FREE:
            sum = sum * 31u + check(P[slot], Z[slot], S[slot], slot, i);
            s_free(s, h, slot, P[slot]);
            P[slot] = NULL;
            continue;
        default: { /* K_ALIGNED */
            size_t align = (size_t)1 << (z >> ALIGNED_SIZE_BITS);
            z &= ALIGNED_SIZE_MASK;
            p = s_aligned(s, h, slot, align, z);
            if (p == NULL) fail("op %" PRIu64 ": aligned alloc of %u failed", i, z);
            if ((uintptr_t)p & (align - 1)) lost(slot, i, "a block is not aligned as asked");
            break;
        }
        }
        stamp(p, z, st);
        P[slot] = p;
        Z[slot] = z;
        S[slot] = st;
    }
    return sum;
}

/* The blocks still live at the end, checked and freed (untimed). */
BENCH_ALWAYS_INLINE uint64_t replay_drain(int s, opool_heap *h, uint32_t slots, uint64_t n) {
    uint64_t sum = 0;
    for (uint32_t k = 0; k < slots; k++) {
        if (g_P[k] == NULL) continue;
        sum = sum * 31u + check(g_P[k], g_Z[k], g_S[k], k, n);
        s_free(s, h, k, g_P[k]);
        g_P[k] = NULL;
    }
    return sum;
}

/* One replay on h (NULL for the mallocs): its time in ns; the checksum in *sum. */
BENCH_ALWAYS_INLINE uint64_t replay_body(int s, opool_heap *h, const trace *t, uint64_t *sum) {
    uint64_t t0 = bench_now_ns();
    uint64_t x = replay_ops(s, h, t->ops, t->nops);
    uint64_t t1 = bench_now_ns();
    *sum = bench_mix(x, replay_drain(s, h, t->slots, t->nops));
    return t1 - t0;
}

static BENCH_NOINLINE uint64_t replay_heap(opool_heap *h, const trace *t, uint64_t *sum) {
    return replay_body(S_HEAP, h, t, sum);
}

static BENCH_NOINLINE uint64_t replay_malloc(const trace *t, uint64_t *sum) {
    return replay_body(S_MALLOC, NULL, t, sum);
}

/* ==== system calls, by the kernel's tracepoints ================================= */

#define N_SYSC 5
static const char *const sysc_names[N_SYSC] = {"mmap", "munmap", "madvise", "mremap", "brk"};

typedef struct sysc {
    int fd[N_SYSC];
} sysc;

static void sysc_open(sysc *c) {
    for (int i = 0; i < N_SYSC; i++) {
        c->fd[i] = -1;
#ifdef __linux__
        static const char *const roots[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};
        for (int r = 0; r < 2 && c->fd[i] < 0; r++) {
            char path[160], v[32] = "";
            snprintf(path, sizeof path, "%s/events/syscalls/sys_enter_%s/id", roots[r],
                     sysc_names[i]);
            bench_read_first_line(path, NULL, v, sizeof v);
            if (!v[0]) continue;
            struct perf_event_attr a;
            memset(&a, 0, sizeof a);
            a.type = PERF_TYPE_TRACEPOINT;
            a.size = sizeof a;
            a.config = strtoull(v, NULL, 10);
            a.disabled = 1;
            a.sample_period = 1;
            c->fd[i] = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
        }
#endif
    }
}

static void sysc_enable(sysc *c, bool on) {
#ifdef __linux__
    for (int i = 0; i < N_SYSC; i++)
        if (c->fd[i] >= 0) ioctl(c->fd[i], on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0);
#else
    (void)c;
    (void)on;
#endif
}

/* Counts since opened; -1 where not available. */
static void sysc_read(const sysc *c, int64_t *out) {
    for (int i = 0; i < N_SYSC; i++) {
        uint64_t v = 0;
        out[i] =
            c->fd[i] >= 0 && read(c->fd[i], &v, sizeof v) == (ssize_t)sizeof v ? (int64_t)v : -1;
    }
}

/* ==== the child: one subject, one trace ========================================= */

/* One subject's figures for one trace (the extra fields of its ROW line). */
typedef struct replay_row {
    bench_row b;
    double cold_ns;        /* the cold replay, ns per call */
    int64_t rss_base;      /* resident before the cold replay */
    int64_t rss_peak;      /* its peak, over rss_base */
    int peak_exact;        /* 1: VmHWM; 0: RSS at its end (no clear_refs) */
    int64_t minflt[2];     /* minor faults: the cold replay, all warm ones */
    int64_t sc[2][N_SYSC]; /* system calls: the cold replay, all warm ones; -1: unknown */
    int64_t req[2];        /* opool_heap's allocator calls, cold and warm; -1: a malloc */
    int64_t held_peak;     /* the most bytes opool_heap held from its allocator; -1 */
    uint64_t live_peak;    /* the trace's most bytes live */
    int trace_rank;        /* display order */
    int rank;              /* subject order */
} replay_row;
#define REPLAY_EXTRA 12

/* "a/b/c/d/e": the counts of a system call list. */
static void put_counts(char *out, size_t cap, const int64_t *v) {
    int e = 0;
    for (int i = 0; i < N_SYSC && e >= 0 && (size_t)e < cap; i++)
        e += snprintf(out + e, cap - (size_t)e, "%s%" PRId64, i ? "/" : "", v[i]);
}

static void get_counts(const char *s, int64_t *v) {
    for (int i = 0; i < N_SYSC; i++) {
        char *end;
        v[i] = strtoll(s, &end, 10);
        s = *end == '/' ? end + 1 : end;
    }
}

static void child_run(void) {
    bool heap = strcmp(opt.subject, "heap") == 0;
    if (heap && BENCH_ALLOC != BENCH_ALLOC_GLIBC) fail("--subject heap: run it in bench_replay");
    static trace t;
    trace_load(&t, opt.trace, opt.max_ops);
    g_P = map_bytes((size_t)t.slots * sizeof *g_P);
    g_B = map_bytes((size_t)t.slots * sizeof *g_B);
    g_Z = map_bytes((size_t)t.slots * sizeof *g_Z);
    g_S = map_bytes((size_t)t.slots * sizeof *g_S);
    /* resident before the baseline: the arrays and the trace */
    memset(g_P, 0, (size_t)t.slots * sizeof *g_P);
    memset(g_B, 0, (size_t)t.slots * sizeof *g_B);
    memset(g_Z, 0, (size_t)t.slots * sizeof *g_Z);
    memset(g_S, 0, (size_t)t.slots * sizeof *g_S);
    uint64_t touch = 0;
    for (uint64_t i = 0; i < t.nops; i += 512) touch += t.ops[i].size;
    bench_sink = touch;
    sysc c;
    sysc_open(&c);

    replay_row r;
    memset(&r, 0, sizeof r);
    const char *name = strrchr(opt.trace, '/');
    name = name ? name + 1 : opt.trace;
    snprintf(r.b.workload, sizeof r.b.workload, "%.*s", (int)strcspn(name, "."), name);
    snprintf(r.b.subject, sizeof r.b.subject, "%s", heap ? "opool_heap" : BENCH_ALLOC_NAME);
    r.b.n = t.slots;
    r.b.ops = t.nops;
    r.b.reps = opt.reps;

    /* The cold replay, then the warm ones, on one heap for the whole process
     * as the mallocs have theirs: each replay ends with every block freed, so
     * the next one starts from what the heap kept. */
    struct rusage u0, u1;
    r.rss_base = bench_rss_bytes();
    r.peak_exact = bench_hwm_reset() && bench_hwm_bytes() > 0;
    getrusage(RUSAGE_SELF, &u0);
    sysc_enable(&c, true);
    opool_heap *h = heap ? heap_new() : NULL;
    uint64_t sum = 0;
    uint64_t ns = heap ? replay_heap(h, &t, &sum) : replay_malloc(&t, &sum);
    sysc_enable(&c, false);
    getrusage(RUSAGE_SELF, &u1);
    r.rss_peak = (r.peak_exact ? bench_hwm_bytes() : bench_rss_bytes()) - r.rss_base;
    sysc_read(&c, r.sc[0]);
    counted cold = g_counted;
    r.cold_ns = (double)ns / (double)t.nops;
    r.b.checksum = sum;

    if (opt.serve) {
        printf("READY\n");
        fflush(stdout);
    }
    /* The warm replays. Served, each turn starts with a replay that is not
     * measured: it follows the idle time while the other subjects had their
     * turns, in which a heap that gives memory back after a delay (a timer,
     * a decay) may have done so; the measured replay then follows a replay
     * of its own at once, as every warm replay does when run back to back. */
    int64_t sc_sum[N_SYSC] = {0}, flt_sum = 0;
    uint64_t req_sum = 0;
    for (int rep = 0; rep < opt.reps; rep++) {
        char cmd[8];
        uint64_t s2 = 0;
        if (opt.serve) {
            if (fgets(cmd, sizeof cmd, stdin) == NULL || cmd[0] != 'R')
                fail("--serve: no R from the parent before replay %d", rep + 1);
            (void)(heap ? replay_heap(h, &t, &s2) : replay_malloc(&t, &s2)); /* settle */
        }
        int64_t sc_a[N_SYSC], sc_b[N_SYSC];
        struct rusage ua, ub;
        uint64_t req_a = g_counted.allocs + g_counted.frees;
        sysc_read(&c, sc_a);
        getrusage(RUSAGE_SELF, &ua);
        sysc_enable(&c, true);
        ns = heap ? replay_heap(h, &t, &s2) : replay_malloc(&t, &s2);
        sysc_enable(&c, false);
        getrusage(RUSAGE_SELF, &ub);
        sysc_read(&c, sc_b);
        for (int i = 0; i < N_SYSC; i++)
            sc_sum[i] = sc_a[i] < 0 || sc_sum[i] < 0 ? -1 : sc_sum[i] + sc_b[i] - sc_a[i];
        flt_sum += ub.ru_minflt - ua.ru_minflt;
        req_sum += g_counted.allocs + g_counted.frees - req_a;
        if (s2 != sum)
            fail("%s, %s: replay %d's checksum %016" PRIx64 " differs from the first's",
                 r.b.workload, r.b.subject, rep + 1, s2);
        r.b.ns[rep] = (double)ns / (double)t.nops;
        if (opt.serve) {
            printf("DONE\n");
            fflush(stdout);
        }
    }
    memcpy(r.sc[1], sc_sum, sizeof sc_sum);
    r.minflt[0] = u1.ru_minflt - u0.ru_minflt;
    r.minflt[1] = flt_sum;
    bool counting = heap && opt.counted;
    r.req[0] = counting ? (int64_t)(cold.allocs + cold.frees) : -1;
    r.req[1] = counting ? (int64_t)req_sum : -1;
    r.held_peak = counting ? (int64_t)g_counted.peak : -1;
    if (heap) opool_heap_destroy(h);
    if (t.truncated) snprintf(r.b.note, sizeof r.b.note, "prefix");

    char info[200];
    if (heap)
        snprintf(info, sizeof info, "opool_heap, %s",
                 opt.counted
                     ? "its memory from glibc's posix_memalign through a counter (--counted)"
                     : "desc.allocator zero: its default source of memory");
    else
        bench_alloc_describe(info, sizeof info);
    printf("INFO\t%s\n", info);
    char sc0[128], sc1[128], extra[640];
    put_counts(sc0, sizeof sc0, r.sc[0]);
    put_counts(sc1, sizeof sc1, r.sc[1]);
    snprintf(extra, sizeof extra,
             "%.4f\t%" PRId64 "\t%" PRId64 "\t%d\t%" PRId64 "\t%" PRId64 "\t%" PRId64 "\t%" PRId64
             "\t%" PRId64 "\t%" PRIu64 "\t%s\t%s",
             r.cold_ns, r.rss_base, r.rss_peak, r.peak_exact, r.minflt[0], r.minflt[1], r.req[0],
             r.req[1], r.held_peak, t.live_peak, sc0, sc1);
    bench_child_put_row(stdout, &r.b, extra);
    fflush(stdout);
}

/* ==== the parent ================================================================= */

static const char *const subj_order[] = {"opool_heap", "glibc", "mimalloc", "jemalloc", "tcmalloc"};
#define N_SUBJ 5
#define MAX_TRACES 16
#define MAX_ROWS (MAX_TRACES * N_SUBJ)

static replay_row g_rows[MAX_ROWS];
static int g_nrows;
static char g_trace_names[MAX_TRACES][256];
static trace g_trace_info[MAX_TRACES]; /* only the summary fields */
static int g_ntraces;
static char g_info[N_SUBJ][240];

static int subj_rank(const char *name) {
    for (int i = 0; i < N_SUBJ; i++)
        if (strcmp(subj_order[i], name) == 0) return i;
    return N_SUBJ;
}

static int g_current_trace;

static int parse_child_row(void *ctx, char *line) {
    (void)ctx;
    bench_row b;
    char *x[BENCH_CHILD_MAX_EXTRA];
    int nx = bench_child_parse_row(line, &b, x);
    if (nx != REPLAY_EXTRA) {
        fprintf(stderr, "bench_replay: a child sent a malformed row\n");
        return -1;
    }
    if (g_nrows >= MAX_ROWS) fail("too many rows");
    replay_row *r = &g_rows[g_nrows++];
    memset(r, 0, sizeof *r);
    r->b = b;
    r->cold_ns = strtod(x[0], NULL);
    r->rss_base = strtoll(x[1], NULL, 10);
    r->rss_peak = strtoll(x[2], NULL, 10);
    r->peak_exact = atoi(x[3]);
    r->minflt[0] = strtoll(x[4], NULL, 10);
    r->minflt[1] = strtoll(x[5], NULL, 10);
    r->req[0] = strtoll(x[6], NULL, 10);
    r->req[1] = strtoll(x[7], NULL, 10);
    r->held_peak = strtoll(x[8], NULL, 10);
    r->live_peak = strtoull(x[9], NULL, 10);
    get_counts(x[10], r->sc[0]);
    get_counts(x[11], r->sc[1]);
    r->trace_rank = g_current_trace;
    r->rank = subj_rank(b.subject);
    return 0;
}

/* A subject's process for one trace, run with --serve: it loads the trace
 * and replays it cold, says READY, then replays it once more per "R" line
 * (answering DONE), and after the last one writes its INFO and ROW lines and
 * exits. The parent steps every subject's process in turn, so the warm
 * replays of the subjects interleave and a change in the machine's load
 * falls on all of them alike. */
typedef struct served {
    pid_t pid;
    FILE *from; /* its stdout */
    int to;     /* its stdin */
    int slot;   /* subject rank, for g_info */
    char prog[4400];
} served;

/* The next line from c into line (its newline cut); fails the run at EOF. */
static void served_line(served *c, char *line, size_t cap, const char *want) {
    if (fgets(line, (int)cap, c->from) == NULL) {
        int status = 0;
        waitpid(c->pid, &status, 0);
        fail("%s ended (status %d) before %s", c->prog, status, want);
    }
    line[strcspn(line, "\r\n")] = '\0';
}

/* Starts prog for the trace at path and waits for its cold replay; false if
 * there is no such program. */
static bool served_start(served *c, const char *prog, const char *subject, const char *path,
                         int slot) {
    memset(c, 0, sizeof *c);
    if (access(prog, X_OK) != 0) return false;
    snprintf(c->prog, sizeof c->prog, "%s", prog);
    c->slot = slot;
    char reps[16], ops[32];
    snprintf(reps, sizeof reps, "%d", opt.reps);
    snprintf(ops, sizeof ops, "%" PRIu64, opt.max_ops);
    char *argv[] = {(char *)prog,
                    "--child",
                    "--serve",
                    "--subject",
                    (char *)subject,
                    "--trace",
                    (char *)path,
                    "--reps",
                    reps,
                    "--ops",
                    ops,
                    opt.counted ? "--counted" : NULL,
                    NULL};
    int down[2], up[2];
    if (pipe(down) != 0 || pipe(up) != 0) fail("pipe: %s", strerror(errno));
    fflush(stdout);
    fflush(stderr);
    c->pid = fork();
    if (c->pid < 0) fail("fork: %s", strerror(errno));
    if (c->pid == 0) {
        dup2(down[0], 0);
        dup2(up[1], 1);
        close(down[0]);
        close(down[1]);
        close(up[0]);
        close(up[1]);
        execv(prog, argv);
        fprintf(stderr, "bench_replay: cannot run %s: %s\n", prog, strerror(errno));
        _exit(127);
    }
    close(down[0]);
    close(up[1]);
    c->to = down[1];
    c->from = fdopen(up[0], "r");
    if (c->from == NULL) fail("fdopen: %s", strerror(errno));
    char line[256];
    served_line(c, line, sizeof line, "READY");
    if (strcmp(line, "READY") != 0) fail("%s said '%s', not READY", prog, line);
    return true;
}

/* One warm replay of c. */
static void served_step(served *c) {
    char line[256];
    if (write(c->to, "R\n", 2) != 2) fail("cannot write to %s: %s", c->prog, strerror(errno));
    served_line(c, line, sizeof line, "DONE");
    if (strcmp(line, "DONE") != 0) fail("%s said '%s', not DONE", c->prog, line);
}

/* Its INFO and ROW lines, then its exit status. */
static void served_finish(served *c) {
    char line[4096];
    bool have_row = false;
    while (fgets(line, sizeof line, c->from)) {
        if (strncmp(line, "INFO\t", 5) == 0 && !g_info[c->slot][0])
            snprintf(g_info[c->slot], sizeof g_info[c->slot], "%.*s",
                     (int)strcspn(line + 5, "\r\n"), line + 5);
        else if (strncmp(line, "ROW\t", 4) == 0) {
            if (parse_child_row(NULL, line) != 0) fail("%s sent a malformed row", c->prog);
            have_row = true;
        }
    }
    fclose(c->from);
    close(c->to);
    int status = 0;
    waitpid(c->pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !have_row)
        fail("%s failed (status %d)", c->prog, status);
}

/* Every subject on the trace at path: cold replays one after the other, then
 * the warm replays in rounds, each round in another order. How many ran. */
static int run_trace(int tr, const char *path, const char *self, const char *here) {
    served c[N_SUBJ];
    bool live[N_SUBJ] = {false};
    for (int j = 0; j < N_SUBJ; j++) {
        int s = (j + tr) % N_SUBJ;
        if (!bench_list_has(opt.subjects, subj_order[s])) continue;
        if (s == 0) {
            live[s] = served_start(&c[s], self, "heap", path, s);
        } else if (s == 1) {
            live[s] = served_start(&c[s], self, "malloc", path, s);
        } else if (!opt.no_peers) {
            char peer[4400];
            snprintf(peer, sizeof peer, "%s/bench_replay_%s", here, subj_order[s]);
            live[s] = served_start(&c[s], peer, "malloc", path, s);
            if (!live[s] && !g_info[s][0])
                snprintf(g_info[s], sizeof g_info[s],
                         "skipped: no bench_replay_%s beside bench_replay", subj_order[s]);
        }
        if (s <= 1 && !live[s]) fail("cannot run %s", self);
    }
    for (int rep = 0; rep < opt.reps; rep++)
        for (int j = 0; j < N_SUBJ; j++) {
            int s = (j + rep + tr) % N_SUBJ;
            if (live[s]) served_step(&c[s]);
        }
    int n = 0;
    for (int s = 0; s < N_SUBJ; s++)
        if (live[s]) {
            served_finish(&c[s]);
            n++;
        }
    return n;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp((const char *)a, (const char *)b);
}

/* The traces of dir: *.trace, *.trace.xz, *.trace.gz, sorted, filtered by --only. */
static void find_traces(const char *dir) {
    DIR *d = opendir(dir);
    if (d == NULL) fail("cannot open the trace directory %s: %s", dir, strerror(errno));
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        const char *n = e->d_name;
        const char *dot = strstr(n, ".trace");
        if (dot == NULL || dot == n) continue;
        if (strcmp(dot, ".trace") != 0 && strcmp(dot, ".trace.xz") != 0 &&
            strcmp(dot, ".trace.gz") != 0)
            continue;
        char stem[64];
        snprintf(stem, sizeof stem, "%.*s", (int)(dot - n), n);
        if (!bench_list_has(opt.only, stem)) continue;
        if (g_ntraces >= MAX_TRACES) fail("more than %d traces in %s", MAX_TRACES, dir);
        snprintf(g_trace_names[g_ntraces++], sizeof g_trace_names[0], "%s", n);
    }
    closedir(d);
    qsort(g_trace_names, (size_t)g_ntraces, sizeof g_trace_names[0], cmp_str);
    if (g_ntraces == 0)
        fail("no traces in %s%s%s", dir, opt.only ? " named " : "", opt.only ? opt.only : "");
}

static replay_row *find_row(int tr, const char *subject) {
    for (int i = 0; i < g_nrows; i++)
        if (g_rows[i].trace_rank == tr && strcmp(g_rows[i].b.subject, subject) == 0)
            return &g_rows[i];
    return NULL;
}

static int cmp_rows(const void *a, const void *b) {
    const replay_row *x = a, *y = b;
    if (x->trace_rank != y->trace_rank) return x->trace_rank - y->trace_rank;
    return x->rank - y->rank;
}

static double ratio(double a, double b) { return b > 0 ? a / b : -1; }

static void fmt_count(char *buf, size_t cap, double v) {
    if (v < 0)
        snprintf(buf, cap, "-");
    else
        snprintf(buf, cap, "%.0f", v);
}

static double mib(double bytes) { return bytes / (1024.0 * 1024.0); }

/* The system calls of a row's cold replay (w 0) or per warm replay (w 1), in all; -1 unknown. */
static double sc_total(const replay_row *r, int w) {
    double n = 0;
    for (int i = 0; i < N_SYSC; i++) {
        if (r->sc[w][i] < 0) return -1;
        n += (double)r->sc[w][i];
    }
    return w ? n / r->b.reps : n;
}

static void print_results(void) {
    double geo[N_SUBJ][4] = {{0}};
    int geo_n[N_SUBJ] = {0};
    printf("Time and memory (time: warm replays; peak RSS: the cold one):\n\n");
    printf("%-8s %-11s %9s %8s %8s %7s %7s | %9s %7s %7s | %9s\n", "trace", "subject", "median ms",
           "min", "max", "x glibc", "x mimal", "peak RSS", "x glibc", "x mimal", "live MiB");
    for (int tr = 0; tr < g_ntraces; tr++) {
        const replay_row *g = find_row(tr, "glibc"), *m = find_row(tr, "mimalloc");
        printf("\n");
        for (int i = 0; i < g_nrows; i++) {
            const replay_row *r = &g_rows[i];
            if (r->trace_rank != tr) continue;
            double k = (double)r->b.ops / 1e6;
            double q[4] = {g ? ratio(r->b.median, g->b.median) : -1,
                           m ? ratio(r->b.median, m->b.median) : -1,
                           g ? ratio((double)r->rss_peak, (double)g->rss_peak) : -1,
                           m ? ratio((double)r->rss_peak, (double)m->rss_peak) : -1};
            char a[4][16];
            for (int j = 0; j < 4; j++) bench_fmt_ratio(a[j], sizeof a[j], q[j]);
            printf("%-8s %-11s %9.1f %8.1f %8.1f %7s %7s | %6.1f Mi %7s %7s | %9.1f%s\n",
                   r->b.workload, r->b.subject, r->b.median * k, r->b.min * k, r->b.max * k, a[0],
                   a[1], mib((double)r->rss_peak), a[2], a[3], mib((double)r->live_peak),
                   r->peak_exact ? "" : " (RSS at the end)");
            if (r->rank < N_SUBJ && q[0] > 0 && q[1] > 0 && q[2] > 0 && q[3] > 0) {
                for (int j = 0; j < 4; j++) geo[r->rank][j] += log(q[j]);
                geo_n[r->rank]++;
            }
        }
    }
    printf("\nGeometric means over the traces:\n");
    printf("%-11s %9s %9s | %9s %9s\n", "subject", "time", "", "peak RSS", "");
    printf("%-11s %9s %9s | %9s %9s\n", "", "x glibc", "x mimal", "x glibc", "x mimal");
    for (int k = 0; k < N_SUBJ; k++) {
        if (geo_n[k] == 0) continue;
        printf("%-11s %8.2fx %8.2fx | %8.2fx %8.2fx   (%d traces)\n", subj_order[k],
               exp(geo[k][0] / geo_n[k]), exp(geo[k][1] / geo_n[k]), exp(geo[k][2] / geo_n[k]),
               exp(geo[k][3] / geo_n[k]), geo_n[k]);
    }

    printf("\nThe system: the cold replay, and per warm replay (syscalls: mmap + munmap + madvise\n"
           "+ mremap + brk; requests: with --counted, opool_heap's calls of its allocator,\n"
           "alloc + free):\n\n");
    printf("%-8s %-11s %8s %8s %6s %6s %6s %6s %6s %8s | %8s %8s %8s\n", "trace", "subject",
           "cold ms", "minflt", "mmap", "munmap", "madv", "mremap", "brk", "requests", "minflt",
           "syscalls", "requests");
    for (int tr = 0; tr < g_ntraces; tr++) {
        printf("\n");
        for (int i = 0; i < g_nrows; i++) {
            const replay_row *r = &g_rows[i];
            if (r->trace_rank != tr) continue;
            char c[N_SYSC][24], a[4][24];
            for (int j = 0; j < N_SYSC; j++) fmt_count(c[j], sizeof c[j], (double)r->sc[0][j]);
            fmt_count(a[0], sizeof a[0], (double)r->req[0]);
            fmt_count(a[1], sizeof a[1], (double)r->minflt[1] / r->b.reps);
            fmt_count(a[2], sizeof a[2], sc_total(r, 1));
            fmt_count(a[3], sizeof a[3], r->req[1] < 0 ? -1 : (double)r->req[1] / r->b.reps);
            printf("%-8s %-11s %8.1f %8" PRId64 " %6s %6s %6s %6s %6s %8s | %8s %8s %8s\n",
                   r->b.workload, r->b.subject, r->cold_ns * (double)r->b.ops / 1e6, r->minflt[0],
                   c[0], c[1], c[2], c[3], c[4], a[0], a[1], a[2], a[3]);
        }
    }
    bool first = true;
    for (int i = 0; i < g_nrows; i++)
        if (g_rows[i].held_peak >= 0) {
            printf("%s%s: opool_heap held at most %.1f MiB from its allocator\n", first ? "\n" : "",
                   g_rows[i].b.workload, mib((double)g_rows[i].held_peak));
            first = false;
        }
}

static int write_csv(const char *path, const char *mode, const bench_machine *m) {
    FILE *f = bench_csv_create("bench_replay", path);
    if (f == NULL) return -1;
    fprintf(f, "trace,subject,calls,max_live_blocks,live_peak_bytes,reps,median_ms,min_ms,max_ms,"
               "median_ns_per_call,ratio_time_vs_glibc,ratio_time_vs_mimalloc,cold_ms,"
               "rss_base_bytes,rss_peak_bytes,peak_from_vmhwm,ratio_rss_vs_glibc,"
               "ratio_rss_vs_mimalloc,cold_minflt,cold_mmap,cold_munmap,cold_madvise,cold_mremap,"
               "cold_brk,cold_requests,warm_minflt,warm_mmap,warm_munmap,warm_madvise,warm_mremap,"
               "warm_brk,warm_requests,allocator_peak_bytes,checksum,note,mode,cpu,nproc,compiler,"
               "flags,samples_ns_per_call\n");
    for (int i = 0; i < g_nrows; i++) {
        const replay_row *r = &g_rows[i];
        const replay_row *g = find_row(r->trace_rank, "glibc");
        const replay_row *mm = find_row(r->trace_rank, "mimalloc");
        double k = (double)r->b.ops / 1e6;
        bench_csv_str(f, r->b.workload);
        fputc(',', f);
        bench_csv_str(f, r->b.subject);
        fprintf(f, ",%" PRIu64 ",%" PRIu32 ",%" PRIu64 ",%d,%.3f,%.3f,%.3f,%.3f,", r->b.ops, r->b.n,
                r->live_peak, r->b.reps, r->b.median * k, r->b.min * k, r->b.max * k, r->b.median);
        if (g) fprintf(f, "%.4f", ratio(r->b.median, g->b.median));
        fputc(',', f);
        if (mm) fprintf(f, "%.4f", ratio(r->b.median, mm->b.median));
        fprintf(f, ",%.3f,%" PRId64 ",%" PRId64 ",%d,", r->cold_ns * k, r->rss_base, r->rss_peak,
                r->peak_exact);
        if (g) fprintf(f, "%.4f", ratio((double)r->rss_peak, (double)g->rss_peak));
        fputc(',', f);
        if (mm) fprintf(f, "%.4f", ratio((double)r->rss_peak, (double)mm->rss_peak));
        /* warm figures: per warm replay; -1: not known (requests: not opool_heap) */
        for (int w = 0; w < 2; w++) {
            double per = w ? (double)r->b.reps : 1.0;
            fprintf(f, ",%.1f", (double)r->minflt[w] / per);
            for (int j = 0; j < N_SYSC; j++)
                fprintf(f, ",%.1f", r->sc[w][j] < 0 ? -1.0 : (double)r->sc[w][j] / per);
            fprintf(f, ",%.1f", r->req[w] < 0 ? -1.0 : (double)r->req[w] / per);
        }
        fprintf(f, ",%" PRId64 ",%016" PRIx64 ",", r->held_peak, r->b.checksum);
        bench_csv_str(f, r->b.note);
        fputc(',', f);
        bench_csv_machine(f, mode, m);
        for (int j = 0; j < r->b.reps; j++) fprintf(f, "%s%.3f", j ? " " : "", r->b.ns[j]);
        fputs("\"\n", f);
    }
    return bench_csv_close("bench_replay", path, f);
}

static void print_info(const char *path) {
    static trace t;
    trace_load(&t, path, opt.max_ops);
    printf("%s\n  program:  %s\n  calls:    %" PRIu64 " (malloc %" PRIu64 ", calloc %" PRIu64
           ", realloc %" PRIu64 ", aligned %" PRIu64 ", free %" PRIu64 ")%s\n"
           "  live:     at most %u blocks, %.1f MiB; %.1f MiB asked for in all; largest %u B\n"
           "  threads:  %u; the tracer's records %" PRIu64 ", unknown frees/reallocs %" PRIu64 "\n",
           path, t.text, t.nops, t.n_malloc, t.n_calloc, t.n_realloc, t.n_aligned, t.n_free,
           t.truncated ? " (a prefix)" : "", t.slots, mib((double)t.live_peak),
           mib((double)t.requested), t.largest, t.threads, t.records, t.unknown);
    uint64_t all = 0;
    for (int k = 0; k <= 32; k++) all += t.by_log2[k];
    printf("  sizes:    (allocations and realloc targets, by power of 2)\n");
    for (int k = 0; k <= 32; k++)
        if (t.by_log2[k])
            printf("            %10" PRIu64 " .. %-10" PRIu64 " %10" PRIu64 "  %5.1f%%\n",
                   k ? (uint64_t)1 << (k - 1) : 0, k ? ((uint64_t)1 << k) - 1 : 0, t.by_log2[k],
                   100.0 * (double)t.by_log2[k] / (double)all);
    map_free(t.ops, t.ops_cap, sizeof(op));
}

static void usage(FILE *f) {
    fprintf(f,
            "usage: bench_replay [--quick] [--reps N] [--only LIST] [--csv PATH] [--no-peers]\n"
            "                    [--subjects LIST] [--traces DIR] [--ops N] [--counted]\n"
            "       bench_replay --info TRACE...\n"
            "  --only      these traces (a trace's name: its file name before .trace)\n"
            "  --quick     a prefix of each trace (200,000 calls), 3 warm replays\n"
            "  --no-peers  do not run the allocator builds bench_replay_<allocator>\n"
            "  --subjects  only these of opool_heap,glibc,mimalloc,jemalloc,tcmalloc\n"
            "  --counted   opool_heap's memory from glibc's posix_memalign through a\n"
            "              counter (its requests), not its default source\n"
            "  --traces    the directory of *.trace[.xz|.gz] (default %s)\n"
            "  --ops N     replay only the first N calls of each trace\n"
            "  --csv       CSV output (default bench/out/replay.csv)\n",
            OPOOL_BENCH_TRACES);
}

int main(int argc, char **argv) {
    int info_from = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--quick") == 0) {
            opt.quick = true;
        } else if (strcmp(a, "--child") == 0) {
            opt.child = true;
        } else if (strcmp(a, "--no-peers") == 0) {
            opt.no_peers = true;
        } else if (strcmp(a, "--serve") == 0) {
            opt.serve = true;
        } else if (strcmp(a, "--counted") == 0) {
            opt.counted = true;
        } else if (strcmp(a, "--info") == 0) {
            info_from = i + 1;
            break;
        } else if (strcmp(a, "--subject") == 0 && v) {
            opt.subject = argv[++i];
            if (strcmp(v, "heap") != 0 && strcmp(v, "malloc") != 0)
                fail("--subject wants heap or malloc");
        } else if (strcmp(a, "--trace") == 0 && v) {
            opt.trace = argv[++i];
        } else if (strcmp(a, "--subjects") == 0 && v) {
            opt.subjects = argv[++i];
        } else if (strcmp(a, "--traces") == 0 && v) {
            opt.dir = argv[++i];
        } else if (strcmp(a, "--ops") == 0 && v) {
            opt.max_ops = strtoull(argv[++i], NULL, 10);
        } else {
            i += bench_common_arg("bench_replay", a, v, &opt.reps, &opt.csv, &opt.only, usage) - 1;
        }
    }
    if (opt.reps == 0) opt.reps = opt.quick ? 3 : 7;
    if (opt.quick && opt.max_ops == 0) opt.max_ops = 200000;
    if (info_from) {
        for (int i = info_from; i < argc; i++) print_info(argv[i]);
        return 0;
    }
    if (opt.child || BENCH_ALLOC != BENCH_ALLOC_GLIBC) {
        if (!opt.subject || !opt.trace) fail("a child needs --subject and --trace");
        child_run();
        return 0;
    }

    uint64_t t_start = bench_now_ns();
    signal(SIGPIPE, SIG_IGN); /* a child that failed: a write error, said as such */
    bench_machine m;
    bench_machine_get(&m);
    char mode[120], load0[64], load1[64];
    snprintf(mode, sizeof mode, "allocation traces replayed, single thread%s",
             opt.quick ? " (--quick)" : "");
    bench_read_load(load0, sizeof load0);
    fprintf(stderr, "bench_replay: %s\n", mode);
    const char *dir = opt.dir ? opt.dir : OPOOL_BENCH_TRACES;
    find_traces(dir);
    char self[4096], here[4096];
    bench_child_self_exe(self, sizeof self, argv[0]);
    bench_child_self_dir(here, sizeof here, argv[0]);
    for (int tr = 0; tr < g_ntraces; tr++) {
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", dir, g_trace_names[tr]);
        {
            trace *t = &g_trace_info[tr];
            trace_load(t, path, opt.max_ops);
            map_free(t->ops, t->ops_cap, sizeof(op));
            t->ops = NULL;
        }
        g_current_trace = tr;
        uint64_t t0 = bench_now_ns();
        int n = run_trace(tr, path, self, here);
        fprintf(stderr, "  %-24s %d subjects in %.1f s\n", g_trace_names[tr], n,
                (double)(bench_now_ns() - t0) / 1e9);
    }
    qsort(g_rows, (size_t)g_nrows, sizeof g_rows[0], cmp_rows);
    for (int i = 0; i < g_nrows; i++) { /* against glibc's, or the trace's first row's */
        const replay_row *g = find_row(g_rows[i].trace_rank, "glibc");
        for (int j = 0; g == NULL && j < g_nrows; j++)
            if (g_rows[j].trace_rank == g_rows[i].trace_rank) g = &g_rows[j];
        if (g->b.checksum != g_rows[i].b.checksum)
            fail("%s: the checksum of %s (%016" PRIx64 ") differs from %s's (%016" PRIx64 ")",
                 g_rows[i].b.workload, g_rows[i].b.subject, g_rows[i].b.checksum, g->b.subject,
                 g->b.checksum);
    }

    bench_read_load(load1, sizeof load1);
    printf("bench_replay -- %s\n", mode);
    printf("  cpu:        %s (%ld online)\n", m.cpu, m.nproc);
    printf("  compiler:   %s\n", m.compiler);
    printf("  flags:      %s\n", m.flags);
    printf("  THP:        %s\n", m.thp);
    printf("  loadavg:    %s at start, %s at end (other programs skew the figures)\n", load0,
           load1);
    printf("  traces:     %s\n", dir);
    for (int tr = 0; tr < g_ntraces; tr++) {
        const trace *t = &g_trace_info[tr];
        printf("    %-16s %9" PRIu64 " calls%s: malloc %" PRIu64 ", calloc %" PRIu64
               ", realloc %" PRIu64 ", aligned %" PRIu64 ", free %" PRIu64
               "; at most %u blocks, %.1f MiB live\n",
               g_trace_names[tr], t->nops, t->truncated ? " (a prefix)" : "", t->n_malloc,
               t->n_calloc, t->n_realloc, t->n_aligned, t->n_free, t->slots,
               mib((double)t->live_peak));
    }
    for (int s = 0; s < N_SUBJ; s++)
        if (g_info[s][0]) printf("  %-11s %s\n", subj_order[s], g_info[s]);
    printf("  method:     one process per trace and subject, one heap in it: a cold replay,\n"
           "              then %d warm ones (each ends with every block freed), the subjects'\n"
           "              warm replays interleaved, each after an unmeasured one that absorbs\n"
           "              the wait for its turn. Time: median of the warm replays, ms per\n"
           "              replay of the trace; peak RSS: VmHWM of the cold replay over the RSS\n"
           "              just before it; ratios below 1: faster or smaller. Every subject's\n"
           "              checksum matched.\n\n",
           opt.reps);
    print_results();
    const char *csv = opt.csv ? opt.csv : "bench/out/replay.csv";
    if (write_csv(csv, mode, &m) == 0) printf("\nCSV: %s\n", csv);
    fflush(stdout);
    fprintf(stderr, "bench_replay: done in %.1f s\n", (double)(bench_now_ns() - t_start) / 1e9);
    return 0;
}
