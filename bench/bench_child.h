/*
 * bench_child.h -- subjects that must run in another process (header-only,
 * static; include after bench_util.h).
 *
 * A replacement malloc (mimalloc, jemalloc, tcmalloc) takes over the whole
 * program that links it, and a Rust crate lives in a Rust program: such
 * subjects run in a sibling program next to the benchmark ("child"), which
 * the benchmark ("parent") starts with --child and its own workload options,
 * reads rows from, and merges into its own table and CSV.
 *
 * ============================================================================
 * THE PROTOCOL (the child's stdout; its stderr is the parent's, for progress)
 * ============================================================================
 *   INFO<TAB>text      what the child measures (allocator and version, crate
 *                      and compiler); at least one line, or the run fails
 *   ROW<TAB>workload<TAB>n<TAB>subject<TAB>ops<TAB>reps<TAB>samples<TAB>
 *      checksum<TAB>note[<TAB>extra...]
 *                      one result: bench_row's fields. samples = reps ns per
 *                      op values separated by one space; checksum = 16 hex
 *                      digits (bench_row.checksum); extra = fields of the
 *                      parent's own (bench_mt: latency and parallelism;
 *                      bench_heap: a soak's memory figures).
 *                      Fields contain no TAB or newline; any may be empty.
 *   other lines        ignored (room to grow)
 * The child exits 0 after its last line; any other exit fails the run.
 * bench/slotmap/src/main.rs writes the same lines: change both together.
 *
 * ============================================================================
 * WHICH MALLOC A BUILD MEASURES
 * ============================================================================
 * BENCH_ALLOC (default BENCH_ALLOC_GLIBC) names the malloc a build links;
 * bench/bench.cmake's opool_bench_per_allocator() builds a program once per
 * allocator with it set. BENCH_ALLOC_NAME is its short name and
 * bench_alloc_describe() says which version runs and checks that malloc
 * really is that allocator's (interposition can silently fail).
 */
#ifndef OPOOL_BENCH_CHILD_H
#define OPOOL_BENCH_CHILD_H

#include "bench_util.h"

#include <stdbool.h>
#include <sys/types.h>
#include <sys/wait.h>
#ifdef __GLIBC__
#include <gnu/libc-version.h>
#endif

/* ---- which malloc this build measures -------------------------------------- */

#define BENCH_ALLOC_GLIBC 0
#define BENCH_ALLOC_MIMALLOC 1
#define BENCH_ALLOC_JEMALLOC 2
#define BENCH_ALLOC_TCMALLOC 3
#ifndef BENCH_ALLOC
#define BENCH_ALLOC BENCH_ALLOC_GLIBC
#endif

#if BENCH_ALLOC == BENCH_ALLOC_GLIBC
#define BENCH_ALLOC_NAME "glibc"
#elif BENCH_ALLOC == BENCH_ALLOC_MIMALLOC
#include <mimalloc.h>
#define BENCH_ALLOC_NAME "mimalloc"
#elif BENCH_ALLOC == BENCH_ALLOC_JEMALLOC
#include <jemalloc/jemalloc.h>
#define BENCH_ALLOC_NAME "jemalloc"
#elif BENCH_ALLOC == BENCH_ALLOC_TCMALLOC
#include <gperftools/malloc_extension_c.h>
#include <gperftools/tcmalloc.h>
#define BENCH_ALLOC_NAME "tcmalloc"
#else
#error "BENCH_ALLOC: one of BENCH_ALLOC_GLIBC, _MIMALLOC, _JEMALLOC, _TCMALLOC"
#endif

/* The replacement mallocs a parent runs as siblings, in order: i = 0..2,
 * NULL beyond. */
#define BENCH_ALLOC_NPEERS 3
static inline const char *bench_alloc_peer(int i) {
    static const char *const names[BENCH_ALLOC_NPEERS] = {"mimalloc", "jemalloc", "tcmalloc"};
    return i >= 0 && i < BENCH_ALLOC_NPEERS ? names[i] : NULL;
}

/* This build's malloc: its version, and whether malloc really is it. Calls
 * malloc and free once (not in a timed region). */
static inline void bench_alloc_describe(char *out, size_t cap) {
#if BENCH_ALLOC == BENCH_ALLOC_GLIBC
#ifdef __GLIBC__
    snprintf(out, cap, "glibc %s malloc", gnu_get_libc_version());
#else
    snprintf(out, cap, "the C library's malloc");
#endif
#elif BENCH_ALLOC == BENCH_ALLOC_MIMALLOC
    char *p = malloc(64);
    if (p) p[0] = 1; /* not a read of uninitialised memory, says gcc 12 */
    bool mine = p && mi_is_in_heap_region(p);
    free(p);
    int v = mi_version();
    snprintf(out, cap, "mimalloc %d.%d.%d, %s", v / 100, v / 10 % 10, v % 10,
             mine ? "verified: malloc returns mimalloc memory"
                  : "WARNING: malloc is NOT mimalloc's (interposition failed)");
#elif BENCH_ALLOC == BENCH_ALLOC_JEMALLOC
    const char *ver = "?";
    size_t len = sizeof ver;
    mallctl("version", (void *)&ver, &len, NULL, 0);
    uint64_t a0 = 0, a1 = 0;
    size_t sz = sizeof a0;
    int rc = mallctl("thread.allocated", &a0, &sz, NULL, 0);
    void *volatile p = malloc(64);
    sz = sizeof a1;
    mallctl("thread.allocated", &a1, &sz, NULL, 0);
    free(p);
    int vlen = (int)strcspn(ver, "-"); /* "5.3.0-0-g<commit>": the release */
    snprintf(out, cap, "jemalloc %.*s, %s", vlen, ver,
             rc != 0   ? "not verified (no stats)"
             : a1 > a0 ? "verified: malloc is counted by jemalloc"
                       : "WARNING: malloc is NOT jemalloc's (interposition failed)");
#elif BENCH_ALLOC == BENCH_ALLOC_TCMALLOC
    int ma = 0, mi = 0;
    const char *pat = "";
    tc_version(&ma, &mi, &pat);
    char *p = malloc(64);
    if (p) p[0] = 1;
    bool mine = p && MallocExtension_GetOwnership(p) == MallocExtension_kOwned;
    free(p);
    snprintf(out, cap, "gperftools tcmalloc %d.%d%s, %s", ma, mi, pat,
             mine ? "verified: tcmalloc owns malloc's memory"
                  : "WARNING: malloc is NOT tcmalloc's (interposition failed)");
#endif
}

/* ---- the child's side -------------------------------------------------------- */

/* Writes one ROW line for r to f; extra (NULL or "") is appended as further
 * TAB-separated fields. */
static inline void bench_child_put_row(FILE *f, const bench_row *r, const char *extra) {
    fprintf(f, "ROW\t%s\t%" PRIu32 "\t%s\t%" PRIu64 "\t%d\t", r->workload, r->n, r->subject, r->ops,
            r->reps);
    for (int k = 0; k < r->reps; k++) fprintf(f, "%s%.4f", k ? " " : "", r->ns[k]);
    fprintf(f, "\t%016" PRIx64 "\t%s%s%s\n", r->checksum, r->note, extra && *extra ? "\t" : "",
            extra ? extra : "");
}

/* ---- the parent's side ------------------------------------------------------- */

/* This program's executable (argv0, where /proc is missing): for a parent
 * that runs itself as a child, e.g. one process per subject. */
static inline void bench_child_self_exe(char *out, size_t cap, const char *argv0) {
    ssize_t n = readlink("/proc/self/exe", out, cap - 1);
    if (n > 0) {
        out[n] = '\0';
    } else {
        snprintf(out, cap, "%s", argv0);
    }
}

/* The directory this program's executable is in (argv0's, where /proc is
 * missing; "." if that has no slash). */
static inline void bench_child_self_dir(char *out, size_t cap, const char *argv0) {
    bench_child_self_exe(out, cap, argv0);
    char *slash = strrchr(out, '/');
    if (slash)
        *slash = '\0';
    else
        snprintf(out, cap, ".");
}

/* Splits line in place at TABs (empty fields kept; the trailing newline
 * dropped) into at most max fields; returns how many. */
static inline int bench_child_split(char *line, char **f, int max) {
    line[strcspn(line, "\r\n")] = '\0';
    int nf = 0;
    for (char *s = line; nf < max;) {
        f[nf++] = s;
        char *tab = strchr(s, '\t');
        if (tab == NULL) break;
        *tab = '\0';
        s = tab + 1;
    }
    return nf;
}

#define BENCH_CHILD_MAX_EXTRA 16

/* Parses a ROW line (modified in place) into *r, samples summarised by
 * bench_row_finish and ratios -1 (the parent computes them). extra[] points
 * at the further fields, inside line. Returns their number, or -1 if line is
 * not a well-formed ROW line (wrong field count, no samples, a bad number). */
static inline int bench_child_parse_row(char *line, bench_row *r, char **extra) {
    char *f[8 + BENCH_CHILD_MAX_EXTRA + 1];
    int nf = bench_child_split(line, f, (int)(sizeof f / sizeof f[0]));
    if (nf < 9 || nf > 9 + BENCH_CHILD_MAX_EXTRA || strcmp(f[0], "ROW") != 0) return -1;
    memset(r, 0, sizeof *r);
    snprintf(r->workload, sizeof r->workload, "%s", f[1]);
    snprintf(r->subject, sizeof r->subject, "%s", f[3]);
    snprintf(r->note, sizeof r->note, "%s", f[8]);
    char *end;
    r->n = (uint32_t)strtoul(f[2], &end, 10);
    if (end == f[2] || *end) return -1;
    r->ops = strtoull(f[4], &end, 10);
    if (end == f[4] || *end) return -1;
    int reps = atoi(f[5]);
    const char *s = f[6];
    while (r->reps < BENCH_MAX_REPS) {
        double v = strtod(s, &end);
        if (end == s) break;
        r->ns[r->reps++] = v;
        s = end;
    }
    if (r->reps == 0 || r->reps != reps || *s) return -1;
    r->checksum = strtoull(f[7], &end, 16);
    if (end == f[7] || *end) return -1;
    bench_row_finish(r);
    r->ratio_ref1 = r->ratio_ref2 = -1;
    for (int i = 9; i < nf; i++) extra[i - 9] = f[i];
    return nf - 9;
}

/* Called for each ROW line a child writes; line may be modified. Returns 0,
 * or -1 to fail the child's run (say why on stderr first). */
typedef int (*bench_child_row_fn)(void *ctx, char *line);

enum { BENCH_CHILD_OK = 0, BENCH_CHILD_MISSING = 1, BENCH_CHILD_FAILED = -1 };

/* Runs the program at path with argv (argv[0] = path, NULL-terminated) and
 * its stdout on a pipe, passing each ROW line to on_row and copying the
 * first INFO line's text to info. Waits for it to exit.
 * Returns BENCH_CHILD_OK; BENCH_CHILD_MISSING if path is not an executable
 * file (nothing is run); BENCH_CHILD_FAILED if it could not be started, exited
 * other than with status 0, wrote no INFO line, or on_row returned -1 (a
 * line on stderr prefixed with who says which). Not thread-safe (fork). */
static inline int bench_child_run(const char *who, const char *path, char *const argv[],
                                  bench_child_row_fn on_row, void *ctx, char *info,
                                  size_t info_cap) {
    if (access(path, X_OK) != 0) return BENCH_CHILD_MISSING;
    int fd[2];
    if (pipe(fd) != 0) {
        fprintf(stderr, "%s: pipe: %s\n", who, strerror(errno));
        return BENCH_CHILD_FAILED;
    }
    /* what is buffered must not be written twice, by us and the child */
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "%s: fork: %s\n", who, strerror(errno));
        close(fd[0]);
        close(fd[1]);
        return BENCH_CHILD_FAILED;
    }
    if (pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        close(fd[1]);
        execv(path, argv);
        fprintf(stderr, "%s: cannot run %s: %s\n", who, path, strerror(errno));
        _exit(127);
    }
    close(fd[1]);
    FILE *f = fdopen(fd[0], "r");
    if (f == NULL) {
        fprintf(stderr, "%s: fdopen: %s\n", who, strerror(errno));
        close(fd[0]);
        waitpid(pid, NULL, 0);
        return BENCH_CHILD_FAILED;
    }
    char line[4096];
    bool have_info = false, bad = false;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "INFO\t", 5) == 0) {
            if (!have_info && info_cap > 0) {
                size_t len = strcspn(line + 5, "\r\n"); /* cut to info_cap - 1 */
                if (len >= info_cap) len = info_cap - 1;
                memcpy(info, line + 5, len);
                info[len] = '\0';
            }
            have_info = true;
        } else if (strncmp(line, "ROW\t", 4) == 0 && !bad) {
            /* keep reading after a bad row: the child must not block on a full pipe */
            bad = on_row(ctx, line) != 0;
        }
    }
    fclose(f);
    int status = 0;
    if (waitpid(pid, &status, 0) < 0) {
        fprintf(stderr, "%s: waitpid: %s\n", who, strerror(errno));
        return BENCH_CHILD_FAILED;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        if (WIFSIGNALED(status))
            fprintf(stderr, "%s: %s was killed by signal %d\n", who, path, WTERMSIG(status));
        else
            fprintf(stderr, "%s: %s exited with status %d\n", who, path, WEXITSTATUS(status));
        return BENCH_CHILD_FAILED;
    }
    if (!have_info) {
        fprintf(stderr, "%s: %s wrote no INFO line (is it a benchmark child?)\n", who, path);
        return BENCH_CHILD_FAILED;
    }
    return bad ? BENCH_CHILD_FAILED : BENCH_CHILD_OK;
}

#endif /* OPOOL_BENCH_CHILD_H */
