/*
 * bench_util.h -- shared helpers for opool's benchmarks (header-only, static;
 * C and C++: bench_peers.cpp runs the same random sequence through it).
 *
 * Timing, the one random sequence every subject replays, robust statistics,
 * the machine description printed with every run, and the result table /
 * CSV writer. Nothing here runs inside a timed loop except bench_rng_next()
 * and bench_below(), which every subject pays for identically.
 */
#ifndef OPOOL_BENCH_UTIL_H
#define OPOOL_BENCH_UTIL_H

#if !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#if defined(__GNUC__) || defined(__clang__)
#define BENCH_NOINLINE __attribute__((noinline))
#define BENCH_ALWAYS_INLINE static inline __attribute__((always_inline))
#else
#define BENCH_NOINLINE
#define BENCH_ALWAYS_INLINE static inline
#endif

#ifndef OPOOL_BENCH_FLAGS
#define OPOOL_BENCH_FLAGS "unknown"
#endif

/* ---- failing, options ------------------------------------------------------ */

#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 2, 3), noreturn))
#endif
static inline void
bench_fail(const char *who, const char *fmt, ...);

/* Says "<who>: FAIL: <message>" on stderr, stdout flushed first so the two
 * stay in order, and exits with status 1: a run whose figures cannot be
 * trusted (a checksum mismatch, a child that failed) stops there. Each
 * program wraps it as fail(...) with its own name. */
static inline void bench_fail(const char *who, const char *fmt, ...) {
    va_list ap;
    fflush(stdout);
    fprintf(stderr, "\n%s: FAIL: ", who);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    exit(1);
}

/* Whether key is one of list's comma-separated names (--only); a NULL list
 * holds every key. */
static inline bool bench_list_has(const char *list, const char *key) {
    if (list == NULL) return true;
    size_t n = strlen(key);
    while (*list) {
        size_t len = strcspn(list, ",");
        if (len == n && strncmp(list, key, n) == 0) return true;
        list += len + (list[len] == ',');
    }
    return false;
}

/* ---- time ---------------------------------------------------------------- */

static inline uint64_t bench_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- the random sequence --------------------------------------------------
 * splitmix64: its only loop-carried dependency is one add, so it costs every
 * subject the same ~1 ns of independent ALU work and never serialises the
 * memory accesses being measured. bench_below maps to [0, n) by multiply-
 * shift (Lemire), no division. */

static inline uint64_t bench_rng_next(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static inline uint32_t bench_below(uint64_t *s, uint32_t n) {
    return (uint32_t)(((bench_rng_next(s) >> 32) * (uint64_t)n) >> 32);
}

/* A seed for (workload, n, rep, phase) shared by every subject. */
static inline uint64_t bench_seed(uint32_t workload, uint32_t n, int rep, uint32_t phase) {
    uint64_t s = 0x6f706f6f6c000000u ^ ((uint64_t)workload << 40) ^ ((uint64_t)n << 8) ^
                 (uint64_t)(uint32_t)rep ^ ((uint64_t)phase << 56);
    return bench_rng_next(&s);
}

/* perm = a uniformly shuffled 0..n-1 (Fisher-Yates). */
static inline void bench_shuffle(uint32_t *perm, uint32_t n, uint64_t seed) {
    for (uint32_t i = 0; i < n; i++) perm[i] = i;
    for (uint32_t i = n; i > 1; i--) {
        uint32_t j = bench_below(&seed, i);
        uint32_t t = perm[i - 1];
        perm[i - 1] = perm[j];
        perm[j] = t;
    }
}

/* Order-independent fold of an object's two fields into a checksum. */
static inline uint64_t bench_mix(uint64_t a, uint64_t b) {
    uint64_t z = a * 0x9e3779b97f4a7c15u ^ (b + 0x632be59bd9b4e019u);
    return z ^ (z >> 29);
}

/* Results that must never be optimised away end up here. */
static volatile uint64_t bench_sink;

/* ---- memory ---------------------------------------------------------------- */

static inline void *bench_xalloc(size_t size) {
    void *p = NULL;
    /* cache-line aligned, as a careful user would lay out a flat array */
    if (posix_memalign(&p, 64, size ? size : 1) != 0 || p == NULL) {
        fprintf(stderr, "opool_bench: out of memory (%zu bytes)\n", size);
        exit(2);
    }
    return p;
}

/* Resident memory of this process in bytes (/proc/self/statm), -1 if unknown. */
static inline int64_t bench_rss_bytes(void) {
    long size = 0, res = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f == NULL) return -1;
    int ok = fscanf(f, "%ld %ld", &size, &res) == 2;
    fclose(f);
    return ok ? (int64_t)res * sysconf(_SC_PAGESIZE) : -1;
}

static inline void bench_read_first_line(const char *path, const char *key, char *out, size_t cap);

/* VmHWM (peak RSS) in bytes, -1 if unknown. */
static inline int64_t bench_hwm_bytes(void) {
    char v[64] = "";
    bench_read_first_line("/proc/self/status", "VmHWM", v, sizeof v);
    long kb = strtol(v, NULL, 10);
    return kb > 0 ? (int64_t)kb * 1024 : -1;
}

/* Reset VmHWM to the current RSS (Linux >= 4.0); false where that is not possible. */
static inline bool bench_hwm_reset(void) {
    int fd = open("/proc/self/clear_refs", O_WRONLY);
    if (fd < 0) return false;
    bool ok = write(fd, "5", 1) == 1;
    close(fd);
    return ok;
}

/* mkdir -p of the directory part of path. */
static inline void bench_mkdirs_for(const char *path) {
    char buf[4096];
    size_t n = strlen(path);
    if (n >= sizeof buf) return;
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i < n; i++) {
        if (buf[i] != '/') continue;
        buf[i] = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            fprintf(stderr, "opool_bench: cannot create %s: %s\n", buf, strerror(errno));
        buf[i] = '/';
    }
}

/* ---- the machine ----------------------------------------------------------- */

typedef struct bench_machine {
    char cpu[160];
    long nproc;
    char compiler[160];
    char flags[240];
    char thp[64];
} bench_machine;

static inline void bench_read_first_line(const char *path, const char *key, char *out, size_t cap) {
    FILE *f = fopen(path, "r");
    char line[512];
    if (f == NULL) return;
    while (fgets(line, sizeof line, f)) {
        if (key && strncmp(line, key, strlen(key)) != 0) continue;
        char *v = key ? strchr(line, ':') : line;
        if (v == NULL) continue;
        if (key) v++;
        while (*v == ' ' || *v == '\t') v++;
        size_t len = strcspn(v, "\n");
        if (len >= cap) len = cap - 1;
        memcpy(out, v, len);
        out[len] = '\0';
        break;
    }
    fclose(f);
}

/* The three load averages ("n/a" if unknown): other programs' load skews
 * the figures, so the outputs print it at start and end. */
static inline void bench_read_load(char *out, size_t cap) {
    snprintf(out, cap, "n/a");
    bench_read_first_line("/proc/loadavg", NULL, out, cap);
    char *p = out;
    for (int fields = 0; *p; p++)
        if (*p == ' ' && ++fields == 3) break;
    *p = '\0';
}

static inline void bench_machine_get(bench_machine *m) {
    memset(m, 0, sizeof *m);
    snprintf(m->cpu, sizeof m->cpu, "unknown");
    bench_read_first_line("/proc/cpuinfo", "model name", m->cpu, sizeof m->cpu);
    m->nproc = sysconf(_SC_NPROCESSORS_ONLN);
#ifdef __VERSION__
    snprintf(m->compiler, sizeof m->compiler, "%s%s",
#ifdef __clang__
             "clang ",
#elif defined(__GNUC__)
             "gcc ",
#else
             "",
#endif
             __VERSION__);
#else
    snprintf(m->compiler, sizeof m->compiler, "unknown");
#endif
    snprintf(m->flags, sizeof m->flags, "%s", OPOOL_BENCH_FLAGS);
    snprintf(m->thp, sizeof m->thp, "n/a");
    bench_read_first_line("/sys/kernel/mm/transparent_hugepage/enabled", NULL, m->thp,
                          sizeof m->thp);
}

/* ---- statistics ----------------------------------------------------------- */

static inline int bench_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#define BENCH_MAX_REPS 64

typedef struct bench_row {
    char workload[40];
    uint32_t n;  /* objects (or slots) the workload runs at */
    size_t size; /* object size in bytes; 0 = the one bench_write_csv is given */
    char subject[40];
    char note[80];
    uint64_t ops; /* operations per timed repetition */
    int reps;
    double ns[BENCH_MAX_REPS]; /* ns per op, one per repetition */
    double median, min, max;
    double ratio_ref1, ratio_ref2; /* median / reference medians; < 0 = n/a */
    uint64_t checksum;
} bench_row;

static inline void bench_row_finish(bench_row *r) {
    double s[BENCH_MAX_REPS];
    memcpy(s, r->ns, sizeof(double) * (size_t)r->reps);
    qsort(s, (size_t)r->reps, sizeof(double), bench_cmp_double);
    r->min = s[0];
    r->max = s[r->reps - 1];
    r->median = r->reps % 2 ? s[r->reps / 2] : (s[r->reps / 2 - 1] + s[r->reps / 2]) / 2;
}

/* ---- output --------------------------------------------------------------- */

static inline void bench_fmt_ratio(char *buf, size_t cap, double r) {
    if (r < 0)
        snprintf(buf, cap, "-");
    else
        snprintf(buf, cap, "%.2fx", r);
}

static inline void bench_print_table(FILE *f, const bench_row *rows, int nrows, const char *ref1,
                                     const char *ref2) {
    fprintf(f, "%-22s %8s  %-24s %9s %9s %9s  %9s %9s  %s\n", "workload", "N", "subject", "median",
            "min", "max", ref1, ref2, "note");
    fprintf(f, "%-22s %8s  %-24s %9s %9s %9s  %9s %9s\n", "", "", "", "ns/op", "ns/op", "ns/op",
            "ratio", "ratio");
    const char *prev = "";
    uint32_t prev_n = 0;
    for (int i = 0; i < nrows; i++) {
        const bench_row *r = &rows[i];
        if (i > 0 && (strcmp(prev, r->workload) != 0 || prev_n != r->n)) fputc('\n', f);
        prev = r->workload;
        prev_n = r->n;
        char a[16], b[16];
        bench_fmt_ratio(a, sizeof a, r->ratio_ref1);
        bench_fmt_ratio(b, sizeof b, r->ratio_ref2);
        fprintf(f, "%-22s %8" PRIu32 "  %-24s %9.2f %9.2f %9.2f  %9s %9s  %s\n", r->workload, r->n,
                r->subject, r->median, r->min, r->max, a, b, r->note);
    }
}

/* CSV text field: quoted, inner quotes doubled. */
static inline void bench_csv_str(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* The columns every CSV row of the benchmarks ends with, after its own:
 * mode, cpu, nproc, compiler, flags, then the samples column is opened (the
 * caller writes the samples and closes it with "\"\n"). */
static inline void bench_csv_machine(FILE *f, const char *mode, const bench_machine *m) {
    bench_csv_str(f, mode);
    fputc(',', f);
    bench_csv_str(f, m->cpu);
    fprintf(f, ",%ld,", m->nproc);
    bench_csv_str(f, m->compiler);
    fputc(',', f);
    bench_csv_str(f, m->flags);
    fputs(",\"", f);
}

/* A CSV file at path, its directories created; NULL (said on stderr, as prog) when it cannot be. */
static inline FILE *bench_csv_create(const char *prog, const char *path) {
    bench_mkdirs_for(path);
    FILE *f = fopen(path, "w");
    if (f == NULL) fprintf(stderr, "%s: cannot write %s: %s\n", prog, path, strerror(errno));
    return f;
}

/* Closes a CSV file of bench_csv_create: 0, or -1 (said on stderr, as prog) when its bytes
 * did not all reach the file. */
static inline int bench_csv_close(const char *prog, const char *path, FILE *f) {
    if (fclose(f) == 0) return 0;
    fprintf(stderr, "%s: error writing %s\n", prog, path);
    return -1;
}

static inline int bench_write_csv(const char *path, const bench_row *rows, int nrows,
                                  const char *ref1, const char *ref2, size_t object_size,
                                  const char *mode, const bench_machine *m) {
    FILE *f = bench_csv_create("opool_bench", path);
    if (f == NULL) return -1;
    fprintf(f,
            "workload,n,subject,object_size,ops_per_rep,reps,median_ns,min_ns,max_ns,"
            "ratio_vs_%s,ratio_vs_%s,checksum,note,mode,cpu,nproc,compiler,flags,samples_ns\n",
            ref1, ref2);
    for (int i = 0; i < nrows; i++) {
        const bench_row *r = &rows[i];
        bench_csv_str(f, r->workload);
        fprintf(f, ",%" PRIu32 ",", r->n);
        bench_csv_str(f, r->subject);
        fprintf(f, ",%zu,%" PRIu64 ",%d,%.3f,%.3f,%.3f,", r->size ? r->size : object_size, r->ops,
                r->reps, r->median, r->min, r->max);
        if (r->ratio_ref1 >= 0) fprintf(f, "%.4f", r->ratio_ref1);
        fputc(',', f);
        if (r->ratio_ref2 >= 0) fprintf(f, "%.4f", r->ratio_ref2);
        fprintf(f, ",%016" PRIx64 ",", r->checksum);
        bench_csv_str(f, r->note);
        fputc(',', f);
        bench_csv_machine(f, mode, m);
        for (int k = 0; k < r->reps; k++) fprintf(f, "%s%.3f", k ? " " : "", r->ns[k]);
        fputs("\"\n", f);
    }
    return bench_csv_close("opool_bench", path, f);
}

/* The value of a repetition-count option (--reps and the like), or exit(2)
 * with a message naming prog and the option. */
static inline int bench_reps_arg(const char *prog, const char *name, const char *v) {
    int r = atoi(v);
    if (r < 1 || r > BENCH_MAX_REPS) {
        fprintf(stderr, "%s: %s must be 1..%d\n", prog, name, BENCH_MAX_REPS);
        exit(2);
    }
    return r;
}

/* The options every benchmark program takes, tried after its own: --reps N,
 * --csv PATH, --only LIST and --help (usage on stdout, exit 0); anything else
 * is an unknown or incomplete argument (usage on stderr, exit 2). a is the
 * argument, v the next one or NULL. Returns how many arguments it used. */
static inline int bench_common_arg(const char *prog, const char *a, const char *v, int *reps,
                                   const char **csv, const char **only, void (*usage)(FILE *)) {
    if (strcmp(a, "--reps") == 0 && v) {
        *reps = bench_reps_arg(prog, a, v);
        return 2;
    }
    if (strcmp(a, "--csv") == 0 && v) {
        *csv = v;
        return 2;
    }
    if (strcmp(a, "--only") == 0 && v) {
        *only = v;
        return 2;
    }
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
        usage(stdout);
        exit(0);
    }
    fprintf(stderr, "%s: unknown or incomplete argument '%s'\n", prog, a);
    usage(stderr);
    exit(2);
}

#endif /* OPOOL_BENCH_UTIL_H */
