/*
 * tracer.c -- an LD_PRELOAD library that records every heap call of a
 * program: libopool_tracer.so (bench/bench.cmake builds it on Linux with
 * glibc). bench_replay replays what it writes against each heap.
 *
 *     OPOOL_TRACE=/tmp/t/sqlite LD_PRELOAD=build/bench/libopool_tracer.so \
 *         sqlite3 :memory: < bench/traces/sqlite.sql
 *     -> /tmp/t/sqlite.<pid> (one file per process; see FILES)
 *
 * ============================================================================
 * WHAT IS RECORDED
 * ============================================================================
 * malloc, calloc, realloc, reallocarray, free, posix_memalign, aligned_alloc,
 * memalign, valloc and pvalloc, in the order they return, with their sizes
 * and alignments. A block is named by its id, not its address: the n-th
 * block a process's trace hands out (every successful allocation, and every
 * realloc's result, takes the next id, from 0). A free names the block by
 * the distance back to it: next id - 1 - id (recent blocks: small numbers).
 * Not recorded: calls that fail (NULL, or an error from posix_memalign),
 * free(NULL), calls made while the tracer itself runs, and frees or
 * reallocs of memory the trace never saw handed out (allocated before the
 * tracer started, or in the parent before a fork): those are counted in the
 * STATS record.
 *
 * The format: bench/trace/trace_format.h.
 *
 * ============================================================================
 * FILES, THREADS, FORK, EXEC
 * ============================================================================
 * Each process writes OPOOL_TRACE.<pid> (default prefix "opool-trace" in the
 * current directory), created at its first record; if that name exists
 * (a fork child that allocated and then exec'd), .<pid>.1, .<pid>.2, ...
 * The header names the program, so the file of one program of a pipeline
 * (cc1 under gcc) can be picked. Threads: one lock serialises every call
 * with its record (the real call runs under the lock, so the order of the
 * records is an order the heap really saw); THREAD records say whose calls
 * follow. A fork child starts a trace of its own, empty: the blocks it
 * inherited are unknown to it. execve, execv, execvp and execvpe flush the
 * buffer first (other exec variants lose the unflushed records of the
 * process that calls them).
 * The tracer itself never calls malloc: its address map and its buffer are
 * mmap'd, and while dlsym looks up the real functions (dlsym may call
 * calloc) requests come from a small static arena.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "trace_format.h"

#define EXPORT __attribute__((visibility("default")))


/* ==== the real functions ===================================================== */

static void *(*real_malloc)(size_t);
static void (*real_free)(void *);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void *(*real_reallocarray)(void *, size_t, size_t);
static int (*real_posix_memalign)(void **, size_t, size_t);
static void *(*real_aligned_alloc)(size_t, size_t);
static void *(*real_memalign)(size_t, size_t);
static void *(*real_valloc)(size_t);
static void *(*real_pvalloc)(size_t);
static int (*real_execve)(const char *, char *const[], char *const[]);
static int (*real_execv)(const char *, char *const[]);
static int (*real_execvp)(const char *, char *const[]);
static int (*real_execvpe)(const char *, char *const[], char *const[]);

/* Requests made while dlsym runs: a bump arena, never freed. Each block has
 * its size in the 16 bytes before it (for realloc). */
static _Alignas(16) char boot_arena[1 << 16];
static size_t boot_used;

static void *boot_alloc(size_t size, size_t align) {
    if (align < 16) align = 16;
    size_t at = (boot_used + 16 + align - 1) & ~(align - 1);
    if (size > sizeof boot_arena || at > sizeof boot_arena - size) return NULL;
    boot_used = at + size;
    memcpy(boot_arena + at - 16, &size, sizeof size);
    return boot_arena + at;
}

static int is_boot(const void *p) {
    return (const char *)p >= boot_arena && (const char *)p < boot_arena + sizeof boot_arena;
}

static int resolving; /* dlsym is running: serve from the arena */

/* through memcpy: ISO C has no cast from an object pointer to a function pointer */
#define RESOLVE(name)                                                                              \
    do {                                                                                           \
        void *sym_ = dlsym(RTLD_NEXT, #name);                                                      \
        memcpy(&real_##name, &sym_, sizeof sym_);                                                  \
    } while (0)

static void resolve(void) {
    resolving = 1;
    RESOLVE(malloc);
    RESOLVE(free);
    RESOLVE(calloc);
    RESOLVE(realloc);
    RESOLVE(reallocarray);
    RESOLVE(posix_memalign);
    RESOLVE(aligned_alloc);
    RESOLVE(memalign);
    RESOLVE(valloc);
    RESOLVE(pvalloc);
    RESOLVE(execve);
    RESOLVE(execv);
    RESOLVE(execvp);
    RESOLVE(execvpe);
    resolving = 0;
    if (!real_malloc || !real_free || !real_calloc || !real_realloc) {
        static const char msg[] = "opool tracer: cannot find the real malloc\n";
        (void)!write(2, msg, sizeof msg - 1);
        _exit(127);
    }
}

/* ==== state (under g_lock) =================================================== */

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local int t_inside __attribute__((tls_model("initial-exec")));
static _Thread_local uint32_t t_tid __attribute__((tls_model("initial-exec")));
static _Thread_local uint32_t t_gen __attribute__((tls_model("initial-exec")));
static uint32_t g_gen = 1; /* a new one in every fork child: thread ids restart */
static uint32_t g_ntids, g_last_tid = UINT32_MAX;

static uint64_t g_next_id; /* the id of the next block */
static uint64_t g_records, g_unknown_frees, g_unknown_reallocs, g_passed;
static int g_finished; /* exit handlers ran: flush every record */
static int g_disabled; /* the trace file cannot be written */

/* The address map: open addressing, linear probing, key 0 = empty. */
typedef struct slot {
    uintptr_t addr;
    uint64_t id;
} slot;
static slot *g_map;
static size_t g_cap, g_count; /* g_cap a power of 2 */

static void *os_alloc(size_t size) {
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static size_t hash_addr(uintptr_t a) {
    uint64_t z = (uint64_t)a * 0x9e3779b97f4a7c15u;
    return (size_t)(z ^ (z >> 29));
}

static void map_put(uintptr_t a, uint64_t id);

static int map_grow(void) {
    size_t cap = g_cap ? g_cap * 2 : 1u << 16;
    slot *old = g_map;
    size_t old_cap = g_cap;
    slot *m = os_alloc(cap * sizeof *m);
    if (m == NULL) return -1;
    g_map = m;
    g_cap = cap;
    g_count = 0;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].addr) map_put(old[i].addr, old[i].id);
    if (old) munmap(old, old_cap * sizeof *old);
    return 0;
}

static void map_put(uintptr_t a, uint64_t id) {
    if ((g_count + 1) * 4 > g_cap * 3 && map_grow() != 0) return; /* out of memory: untracked */
    size_t i = hash_addr(a) & (g_cap - 1);
    while (g_map[i].addr && g_map[i].addr != a) i = (i + 1) & (g_cap - 1);
    if (g_map[i].addr == 0) g_count++;
    g_map[i].addr = a;
    g_map[i].id = id;
}

/* Removes a; its id, or UINT64_MAX if a is not in the map. */
static uint64_t map_take(uintptr_t a) {
    if (g_cap == 0) return UINT64_MAX;
    size_t mask = g_cap - 1, i = hash_addr(a) & mask;
    while (g_map[i].addr != a) {
        if (g_map[i].addr == 0) return UINT64_MAX;
        i = (i + 1) & mask;
    }
    uint64_t id = g_map[i].id;
    /* backward-shift deletion: keep every later key of the cluster reachable */
    for (size_t j = i;;) {
        j = (j + 1) & mask;
        if (g_map[j].addr == 0) break;
        size_t home = hash_addr(g_map[j].addr) & mask;
        if (((j - home) & mask) >= ((j - i) & mask)) {
            g_map[i] = g_map[j];
            i = j;
        }
    }
    g_map[i].addr = 0;
    g_count--;
    return id;
}

/* ==== the output ============================================================= */

#define BUF_SIZE (1u << 20)
static unsigned char g_buf[BUF_SIZE];
static size_t g_len;
static int g_fd = -1;

static void write_all(const void *p, size_t n) {
    const char *s = p;
    while (n > 0 && !g_disabled) {
        ssize_t w = write(g_fd, s, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            g_disabled = 1;
            break;
        }
        s += w;
        n -= (size_t)w;
    }
}

static void flush(void) {
    if (g_fd >= 0 && g_len) write_all(g_buf, g_len);
    g_len = 0;
}

static char *put_str(char *o, const char *end, const char *s) {
    while (*s && o < end) *o++ = *s++;
    return o;
}

static char *put_dec(char *o, const char *end, uint64_t v) {
    char d[24];
    int n = 0;
    do d[n++] = (char)('0' + v % 10); while ((v /= 10) != 0);
    while (n > 0 && o < end) *o++ = d[--n];
    return o;
}

static unsigned char *put_varint(unsigned char *o, uint64_t v) {
    while (v >= 0x80) {
        *o++ = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    *o++ = (unsigned char)v;
    return o;
}

/* Reads up to cap bytes of path into out (NULs of /proc/self/cmdline become
 * spaces); the length. */
static size_t read_small(const char *path, char *out, size_t cap) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t n = read(fd, out, cap);
    close(fd);
    if (n <= 0) return 0;
    for (ssize_t i = 0; i < n; i++)
        if (out[i] == '\0') out[i] = ' ';
    while (n > 0 && out[n - 1] == ' ') n--;
    return (size_t)n;
}

/* Creates this process's file and writes the header; g_disabled on failure. */
static void open_output(void) {
    char path[4096], *o = path, *end = path + sizeof path - 32;
    const char *prefix = getenv("OPOOL_TRACE");
    o = put_str(o, end, prefix && *prefix ? prefix : "opool-trace");
    *o++ = '.';
    o = put_dec(o, end, (uint64_t)getpid());
    for (unsigned n = 0; n < 1000; n++) {
        char *e = o;
        if (n) {
            *e++ = '.';
            e = put_dec(e, path + sizeof path - 1, n);
        }
        *e = '\0';
        g_fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (g_fd >= 0 || errno != EEXIST) break;
    }
    if (g_fd < 0) {
        g_disabled = 1;
        return;
    }
    char text[3072], *t = text, *te = text + sizeof text;
    t = put_str(t, te, "pid=");
    t = put_dec(t, te, (uint64_t)getpid());
    t = put_str(t, te, " ppid=");
    t = put_dec(t, te, (uint64_t)getppid());
    t = put_str(t, te, " exe=");
    ssize_t n = readlink("/proc/self/exe", t, (size_t)(te - t));
    if (n > 0) t += n;
    t = put_str(t, te, " argv=");
    t += read_small("/proc/self/cmdline", t, (size_t)(te - t));
    unsigned char head[16];
    memcpy(head, TRACE_MAGIC, 8);
    unsigned char *h = put_varint(head + 8, (uint64_t)(t - text));
    write_all(head, (size_t)(h - head));
    write_all(text, (size_t)(t - text));
}

/* One record: op and up to two varints. Under g_lock. */
static void emit(int op, int nargs, uint64_t a, uint64_t b) {
    if (g_disabled) return;
    if (g_fd < 0) {
        open_output();
        if (g_disabled) return;
    }
    if (g_len + 40 > BUF_SIZE) flush();
    unsigned char *o = g_buf + g_len;
    if (t_gen != g_gen) {
        t_gen = g_gen;
        t_tid = g_ntids++;
    }
    if (t_tid != g_last_tid) {
        g_last_tid = t_tid;
        *o++ = T_THREAD;
        o = put_varint(o, t_tid);
    }
    *o++ = (unsigned char)op;
    if (nargs > 0) o = put_varint(o, a);
    if (nargs > 1) o = put_varint(o, b);
    g_len = (size_t)(o - g_buf);
    g_records++;
    if (g_finished) flush();
}

/* A new block p (NULL: the call failed, nothing recorded). */
static void born(void *p, int op, int nargs, uint64_t a, uint64_t b) {
    if (p == NULL) return;
    emit(op, nargs, a, b);
    map_put((uintptr_t)p, g_next_id++);
}

/* The id of live block p taken out of the map, as "back"; UINT64_MAX if unknown. */
static uint64_t back_of(void *p) {
    uint64_t id = map_take((uintptr_t)p);
    return id == UINT64_MAX ? id : g_next_id - 1 - id;
}

/* ==== entry and exit ========================================================= */

static int g_ready;

static void lock(void) { pthread_mutex_lock(&g_lock); }
static void unlock(void) { pthread_mutex_unlock(&g_lock); }

static void at_fork_prepare(void) { lock(); }
static void at_fork_parent(void) { unlock(); }
static void at_fork_child(void) {
    pthread_mutex_init(&g_lock, NULL);
    /* a trace of its own: nothing of the parent's file, buffer, map or ids */
    if (g_fd >= 0) close(g_fd);
    g_fd = -1;
    g_len = 0;
    g_disabled = 0;
    g_finished = 0;
    if (g_map) munmap(g_map, g_cap * sizeof *g_map);
    g_map = NULL;
    g_cap = g_count = 0;
    g_next_id = g_records = g_unknown_frees = g_unknown_reallocs = g_passed = 0;
    g_gen++;
    g_ntids = 0;
    g_last_tid = UINT32_MAX;
}

static void init(void) {
    if (g_ready) return;
    t_inside = 1;
    if (real_malloc == NULL) resolve();
    pthread_atfork(at_fork_prepare, at_fork_parent, at_fork_child);
    g_ready = 1;
    t_inside = 0;
}

__attribute__((constructor)) static void tracer_start(void) { init(); }

static void write_stats(void) {
    if (g_fd < 0 || g_disabled) return;
    if (g_len + 64 > BUF_SIZE) flush();
    unsigned char *o = g_buf + g_len;
    *o++ = T_STATS;
    o = put_varint(o, 4);
    o = put_varint(o, g_records);
    o = put_varint(o, g_unknown_frees);
    o = put_varint(o, g_unknown_reallocs);
    o = put_varint(o, g_passed);
    g_len = (size_t)(o - g_buf);
}

__attribute__((destructor)) static void tracer_stop(void) {
    lock();
    write_stats();
    flush();
    g_finished = 1;
    unlock();
}

/* Enter a traced call: 0 if this call must pass straight through (the
 * tracer's own calls, or a call from inside the real allocator). */
static int enter(void) {
    if (t_inside) {
        g_passed++; /* racy, only a statistic */
        return 0;
    }
    if (!g_ready) init();
    t_inside = 1;
    lock();
    return 1;
}

static void leave(void) {
    unlock();
    t_inside = 0;
}

/* ==== the interposed functions =============================================== */

EXPORT void *malloc(size_t size) {
    if (resolving) return boot_alloc(size, 16);
    if (!enter()) return real_malloc(size);
    void *p = real_malloc(size);
    born(p, T_MALLOC, 1, size, 0);
    leave();
    return p;
}

EXPORT void *calloc(size_t n, size_t size) {
    if (resolving) {
        if (size && n > SIZE_MAX / size) return NULL;
        return boot_alloc(n * size, 16); /* static: zero already */
    }
    if (!enter()) return real_calloc(n, size);
    void *p = real_calloc(n, size);
    born(p, T_CALLOC, 2, n, size);
    leave();
    return p;
}

EXPORT void free(void *p) {
    if (p == NULL || is_boot(p)) return;
    if (!enter()) {
        if (real_free) real_free(p); /* unset only while dlsym runs: such a block leaks */
        return;
    }
    uint64_t back = back_of(p);
    if (back == UINT64_MAX)
        g_unknown_frees++;
    else
        emit(T_FREE, 1, back, 0);
    real_free(p);
    leave();
}

/* realloc and reallocarray: size is n * each, checked by the real function. */
static void *do_realloc(void *p, size_t n, size_t each, int array) {
    if (resolving || is_boot(p)) {
        if (each && n > SIZE_MAX / each) return NULL;
        size_t size = n * each, old = 0;
        void *q = resolving ? boot_alloc(size, 16) : malloc(size);
        if (q && p) {
            memcpy(&old, (char *)p - 16, sizeof old);
            memcpy(q, p, old < size ? old : size);
        }
        return q;
    }
    if (!enter()) return array ? real_reallocarray(p, n, each) : real_realloc(p, n * each);
    void *q = array ? real_reallocarray(p, n, each) : real_realloc(p, n * each);
    uint64_t size = (uint64_t)n * each;
    if (p == NULL) {
        born(q, T_REALLOC_NEW, 1, size, 0);
    } else if (q != NULL || size == 0) {
        /* done: p is gone (moved, or freed by realloc(p, 0)) */
        uint64_t back = back_of(p);
        if (back == UINT64_MAX) {
            g_unknown_reallocs++;
            born(q, T_MALLOC, 1, size, 0);
        } else if (q == NULL) {
            emit(T_REALLOC_FREE, 1, back, 0);
        } else {
            born(q, T_REALLOC, 2, back, size);
        }
    }
    leave();
    return q;
}

EXPORT void *realloc(void *p, size_t size) { return do_realloc(p, size, 1, 0); }

EXPORT void *reallocarray(void *p, size_t n, size_t size) {
    if (!g_ready) init();
    if (real_reallocarray == NULL && !resolving) { /* a C library without it */
        if (size && n > SIZE_MAX / size) {
            errno = ENOMEM;
            return NULL;
        }
        return do_realloc(p, n * size, 1, 0);
    }
    return do_realloc(p, n, size, 1);
}

EXPORT int posix_memalign(void **out, size_t align, size_t size) {
    if (resolving) {
        *out = boot_alloc(size, align);
        return *out ? 0 : ENOMEM;
    }
    if (!enter()) return real_posix_memalign(out, align, size);
    int rc = real_posix_memalign(out, align, size);
    born(rc == 0 ? *out : NULL, T_POSIX_MEMALIGN, 2, align, size);
    leave();
    return rc;
}

/* memalign, aligned_alloc, valloc, pvalloc: one shape. */
#define ALIGNED_FN(name, op, params, call, nargs, a, b)                                            \
    EXPORT void *name params {                                                                     \
        if (resolving) return boot_alloc(b, (a) ? (a) : 4096);                                     \
        if (!enter()) return real_##name call;                                                     \
        void *p = real_##name call;                                                                \
        born(p, op, nargs, (nargs) == 2 ? (a) : (b), b);                                           \
        leave();                                                                                   \
        return p;                                                                                  \
    }

ALIGNED_FN(memalign, T_MEMALIGN, (size_t align, size_t size), (align, size), 2, align, size)
ALIGNED_FN(aligned_alloc, T_ALIGNED_ALLOC, (size_t align, size_t size), (align, size), 2, align,
           size)
ALIGNED_FN(valloc, T_VALLOC, (size_t size), (size), 1, 0, size)
ALIGNED_FN(pvalloc, T_PVALLOC, (size_t size), (size), 1, 0, size)

/* ==== exec: flush first ====================================================== */

static void flush_for_exec(void) {
    if (!g_ready) init();
    lock();
    write_stats();
    flush();
    unlock();
}

EXPORT int execve(const char *path, char *const argv[], char *const envp[]) {
    flush_for_exec();
    return real_execve(path, argv, envp);
}

EXPORT int execv(const char *path, char *const argv[]) {
    flush_for_exec();
    return real_execv(path, argv);
}

EXPORT int execvp(const char *file, char *const argv[]) {
    flush_for_exec();
    return real_execvp(file, argv);
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[]) {
    flush_for_exec();
    return real_execvpe(file, argv, envp);
}
