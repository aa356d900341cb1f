/*
 * bench_child.h -- one benchmark source built once per malloc, and the
 * program that runs its sibling builds (header-only, static).
 *
 * A replacement malloc (mimalloc, jemalloc, tcmalloc) takes over every malloc
 * of the program that links it, so a benchmark that compares mallocs is
 * built once per allocator (bench/bench.cmake, opool_bench_per_malloc):
 * BENCH_ALLOC names the malloc a build measures (BENCH_ALLOC_GLIBC, the
 * default, or _MIMALLOC, _JEMALLOC, _TCMALLOC) and BENCH_ALLOC_NAME spells
 * it. The default build runs its own subjects, then each sibling
 * <program>_<allocator> it finds next to itself with --child and merges what
 * the sibling prints on its stdout (a pipe):
 *
 *     INFO<TAB>what this build's malloc is (bench_child_hello)
 *     any other lines: result rows, in the benchmark's own tab-separated form
 *
 * A sibling that is missing (its library was not found when configured) is
 * a note, not an error; one that fails, or does not say INFO, is an error.
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

/* ---- which malloc this build measures ------------------------------------ */

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

/* The builds the default one looks for, in the order their rows are shown. */
#define BENCH_SIBLINGS 3
static const char *const bench_sibling_names[BENCH_SIBLINGS] = {"mimalloc", "jemalloc", "tcmalloc"};

/* This build's malloc: its version, and whether malloc really is it (an
 * interposition that failed would silently measure glibc twice). */
static inline void bench_malloc_describe(char *out, size_t cap) {
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

/* The child's first line. */
static inline void bench_child_hello(void) {
    char info[200];
    bench_malloc_describe(info, sizeof info);
    printf("INFO\t%s\n", info);
}

/* ---- finding and running the siblings -------------------------------------- */

/* The running program's path (argv0 if /proc/self/exe cannot be read). */
static inline void bench_self_exe(char *out, size_t cap, const char *argv0) {
    ssize_t n = readlink("/proc/self/exe", out, cap - 1);
    if (n > 0)
        out[n] = '\0';
    else
        snprintf(out, cap, "%s", argv0);
}

/* The directory of the running program ("." if it has none). */
static inline void bench_self_dir(char *out, size_t cap, const char *argv0) {
    bench_self_exe(out, cap, argv0);
    char *slash = strrchr(out, '/');
    if (slash)
        *slash = '\0';
    else
        snprintf(out, cap, ".");
}

typedef void (*bench_line_fn)(char *line, void *user);

/* Run argv[0] with argv, its stdout a pipe read here: the INFO line's text
 * goes to info (cap bytes), every other line to on_line. 0 when the program
 * exited with status 0 after an INFO line; -1 otherwise (said on stderr).
 * Blocks until the program ends; stdout and stderr are flushed first, the
 * program's stderr is ours. */
static inline int bench_run_child(char *const argv[], bench_line_fn on_line, void *user, char *info,
                                  size_t cap) {
    int fd[2];
    if (pipe(fd) != 0) {
        fprintf(stderr, "bench: pipe: %s\n", strerror(errno));
        return -1;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "bench: fork: %s\n", strerror(errno));
        close(fd[0]);
        close(fd[1]);
        return -1;
    }
    if (pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        close(fd[1]);
        execv(argv[0], argv);
        fprintf(stderr, "bench: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(fd[1]);
    FILE *f = fdopen(fd[0], "r");
    if (f == NULL) {
        fprintf(stderr, "bench: fdopen: %s\n", strerror(errno));
        close(fd[0]);
        waitpid(pid, NULL, 0);
        return -1;
    }
    char line[4096];
    bool said_info = false;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "INFO\t", 5) == 0) {
            line[strcspn(line, "\n")] = '\0';
            size_t len = strlen(line + 5);
            if (len >= cap) len = cap - 1; /* a long description is cut */
            memcpy(info, line + 5, len);
            info[len] = '\0';
            said_info = true;
        } else if (on_line) {
            on_line(line, user);
        }
    }
    fclose(f);
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !said_info) {
        fprintf(stderr, "bench: %s failed (%s %d%s)\n", argv[0],
                WIFEXITED(status) ? "exit status" : "signal",
                WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
                said_info ? "" : ", no INFO line");
        return -1;
    }
    return 0;
}

/* Run the sibling <dir>/<prefix>_<alloc> with --child and args (NULL-
 * terminated; NULL = none), as bench_run_child. 1: it ran, info describes
 * its malloc; 0: it does not exist, info says so (a note for the output);
 * -1: it failed. */
static inline int bench_run_sibling(const char *dir, const char *prefix, const char *alloc,
                                    const char *const *args, bench_line_fn on_line, void *user,
                                    char *info, size_t cap) {
    char path[4400]; /* dir is at most 4095 characters */
    snprintf(path, sizeof path, "%s/%s_%s", dir, prefix, alloc);
    if (access(path, X_OK) != 0) {
        snprintf(info, cap,
                 "skipped: no %s_%s beside this program (lib%s not found when "
                 "configured)",
                 prefix, alloc, alloc);
        return 0;
    }
    char *argv[40];
    int a = 0;
    argv[a++] = path;
    argv[a++] = (char *)"--child";
    for (; args && *args && a < 39; args++) argv[a++] = (char *)*args;
    argv[a] = NULL;
    return bench_run_child(argv, on_line, user, info, cap) == 0 ? 1 : -1;
}

/* ---- the row lines ---------------------------------------------------------- */

/* Split line in place at tabs (and drop the newline): up to max fields into
 * f, returns how many. Empty fields are kept. */
static inline int bench_split_fields(char *line, char **f, int max) {
    line[strcspn(line, "\n")] = '\0';
    int n = 0;
    for (char *p = line; n < max;) {
        f[n++] = p;
        char *tab = strchr(p, '\t');
        if (tab == NULL) break;
        *tab = '\0';
        p = tab + 1;
    }
    return n;
}

/* Samples as one field: space-separated, %.4f. */
static inline void bench_print_samples(FILE *f, const double *v, int n) {
    for (int k = 0; k < n; k++) fprintf(f, "%s%.4f", k ? " " : "", v[k]);
}

/* The reverse: up to max samples into v, returns how many. */
static inline int bench_parse_samples(const char *s, double *v, int max) {
    int n = 0;
    char *end;
    for (; n < max; s = end) {
        double x = strtod(s, &end);
        if (end == s) break;
        v[n++] = x;
    }
    return n;
}

#endif /* OPOOL_BENCH_CHILD_H */
