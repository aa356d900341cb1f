/*
 * tempdir.h -- fresh directories for the file tests, in the working
 * directory (ctest gives each test program its own): mkdtemp and readdir
 * (POSIX), _mkdir and _findfirst (Windows). TEST_FILES is defined where
 * there is one.
 */
#ifndef OPOOL_TEST_TEMPDIR_H
#define OPOOL_TEST_TEMPDIR_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#if defined(__unix__) || defined(__APPLE__)
#define TEST_FILES 1
#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>
#elif defined(_WIN32)
#define TEST_FILES 1
#include <direct.h>
#include <io.h>
#include <process.h>
#endif

#ifdef TEST_FILES
/* A new empty directory named prefix-<something> in out (size bytes). */
static inline bool temp_dir(char *out, size_t size, const char *prefix) {
#if defined(_WIN32)
    static unsigned serial;
    for (int attempt = 0; attempt < 100; attempt++) {
        snprintf(out, size, "%s-%d-%u", prefix, _getpid(), serial++);
        if (_mkdir(out) == 0) return true;
    }
    return false;
#else
    snprintf(out, size, "%s-XXXXXX", prefix);
    return mkdtemp(out) != NULL;
#endif
}

/* The files in dir (-1: it cannot be read); when clean, removes them and
 * then dir itself. */
static inline int temp_dir_files(const char *dir, bool clean) {
    char path[512];
    int n = 0;
#if defined(_WIN32)
    struct _finddata_t e;
    snprintf(path, sizeof path, "%s/*", dir);
    intptr_t h = _findfirst(path, &e);
    if (h == -1) return -1; /* an empty directory still lists . and .. */
    do {
        if (strcmp(e.name, ".") == 0 || strcmp(e.name, "..") == 0) continue;
        n++;
        snprintf(path, sizeof path, "%s/%s", dir, e.name);
        if (clean) remove(path);
    } while (_findnext(h, &e) == 0);
    _findclose(h);
    if (clean) _rmdir(dir);
#else
    DIR *d = opendir(dir);
    if (d == NULL) return -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        n++;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (clean) remove(path);
    }
    closedir(d);
    if (clean) rmdir(dir);
#endif
    return n;
}
#endif

#endif /* OPOOL_TEST_TEMPDIR_H */
