/*
 * aligned.h -- aligned blocks for the tests: C11's aligned_alloc and free,
 * or _aligned_malloc and _aligned_free on Windows, whose C library has no
 * aligned_alloc (its free cannot take such a block back).
 */
#ifndef OPOOL_TEST_ALIGNED_H
#define OPOOL_TEST_ALIGNED_H

#include <stddef.h>
#include <stdlib.h>
#if defined(_WIN32)
#include <malloc.h>
#endif

/* size bytes at a multiple of align (a power of two; size a multiple of it). */
static inline void *test_aligned_alloc(size_t align, size_t size) {
#if defined(_WIN32)
    return _aligned_malloc(size, align);
#else
    return aligned_alloc(align, size);
#endif
}

/* Frees a block of test_aligned_alloc (NULL: nothing). */
static inline void test_aligned_free(void *ptr) {
#if defined(_WIN32)
    _aligned_free(ptr);
#else
    free(ptr);
#endif
}

#endif /* OPOOL_TEST_ALIGNED_H */
