/*
 * driver.c -- a main() for a fuzz target without libFuzzer: runs every file
 * named on the command line (a directory: every regular file in it, in name
 * order) through LLVMFuzzerTestOneInput once. The CTest tests
 * fuzz_*_corpus replay the committed corpus this way, under ASan+UBSan in
 * build/asan.
 *
 *     fuzz_ops fuzz/corpus/ops            replay a corpus
 *     fuzz_ops crash-1234                 replay one input (a libFuzzer finding)
 *
 * Prints the inputs and bytes run. On a failure the target aborts (or a
 * sanitizer stops the process); the driver names the input first.
 */
#if !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif
/* 32-bit systems: readdir fails (EOVERFLOW) on a file system with 64-bit
 * inode numbers unless it uses the 64-bit records (CMake defines it too) */
#ifndef _FILE_OFFSET_BITS
#define _FILE_OFFSET_BITS 64
#endif

#include "fuzz.h"

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DRIVER_SANITIZER 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define DRIVER_SANITIZER 1
#endif
#ifdef DRIVER_SANITIZER
#include <sanitizer/common_interface_defs.h>
#endif

static const char *running = "(none)";

static void name_input(void) { fprintf(stderr, "fuzz driver: failed on input %s\n", running); }

static void on_signal(int sig) {
    name_input();
    signal(sig, SIG_DFL);
    raise(sig);
}

/* Read a whole file; NULL (and a message) if it cannot be read. */
static uint8_t *read_file(const char *path, size_t *size) {
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        perror(path);
        return NULL;
    }
    size_t cap = 4096, n = 0;
    uint8_t *data = (uint8_t *)malloc(cap);
    while (data) {
        n += fread(data + n, 1, cap - n, fp);
        if (n < cap) break;
        uint8_t *more = (uint8_t *)realloc(data, cap * 2);
        if (!more) {
            free(data);
            data = NULL;
            break;
        }
        data = more;
        cap *= 2;
    }
    bool bad = ferror(fp) != 0;
    fclose(fp);
    if (bad || !data) {
        fprintf(stderr, "%s: cannot read\n", path);
        free(data);
        return NULL;
    }
    *size = n;
    return data;
}

static unsigned long long files, bytes;

static bool run_file(const char *path) {
    size_t size = 0;
    uint8_t *data = read_file(path, &size);
    if (!data) return false;
    running = path;
    /* a copy of exactly size bytes, so ASan sees any read past the input */
    uint8_t *exact = (uint8_t *)malloc(size ? size : 1);
    if (!exact) {
        free(data);
        return false;
    }
    memcpy(exact, data, size);
    free(data);
    LLVMFuzzerTestOneInput(exact, size);
    free(exact);
    running = "(none)";
    files++;
    bytes += size;
    return true;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool run_dir(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) {
        perror(dir);
        return false;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    bool ok = true;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        char *path = (char *)malloc(len);
        if (!path) abort();
        snprintf(path, len, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
            free(path);
            continue;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            names = (char **)realloc(names, cap * sizeof *names);
            if (!names) abort();
        }
        names[n++] = path;
    }
    closedir(d);
    if (n) qsort(names, n, sizeof *names, cmp_str);
    for (size_t k = 0; k < n; k++) {
        ok = run_file(names[k]) && ok;
        free(names[k]);
    }
    free(names);
    return ok;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE_OR_DIR...\n", argv[0]);
        return 2;
    }
    signal(SIGABRT, on_signal);
    signal(SIGSEGV, on_signal);
#if defined(SIGBUS) /* POSIX; not in C, nor on Windows */
    signal(SIGBUS, on_signal);
#endif
    signal(SIGFPE, on_signal);
    signal(SIGILL, on_signal);
#ifdef DRIVER_SANITIZER
    __sanitizer_set_death_callback(name_input);
#endif
    bool ok = true;
    for (int k = 1; k < argc; k++) {
        struct stat st;
        if (stat(argv[k], &st) != 0) {
            perror(argv[k]);
            ok = false;
        } else if (S_ISDIR(st.st_mode)) {
            ok = run_dir(argv[k]) && ok;
        } else {
            ok = run_file(argv[k]) && ok;
        }
    }
    printf("%s: %llu inputs, %llu bytes, %s\n", argv[0], files, bytes,
           ok ? "all passed" : "some could not be read");
    if (files == 0) {
        fprintf(stderr, "%s: no inputs found\n", argv[0]);
        return 1;
    }
    return ok ? 0 : 1;
}
