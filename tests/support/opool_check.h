/*
 * opool_check.h -- the invariant checker of the core pool (opool_check.c), for
 * tests and fuzzers. Part of the opool_test_support library, never of opool:
 * the shipped library and dist/opool.h carry no test code.
 */
#ifndef OPOOL_TEST_CHECK_H
#define OPOOL_TEST_CHECK_H

#include "opool.h"

#include <stdbool.h>
#include <stddef.h>

/* Verify every invariant of p's layout (geometry, chunks, the roster as a
 * permutation, the live prefix and free suffix, markers, counters, the inline
 * paths' bounds). True if all hold; else false with the first violation
 * described in why (if why is not NULL). O(slots). */
bool opool__check(const opool *p, char *why, size_t why_size);

#endif /* OPOOL_TEST_CHECK_H */
