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

/* What opool_load of a's image holds, read from a: a pool that never grows
 * makes its slots as allocs need them, and a loaded one has made them all,
 * a's unmade ones last, at their first generation, in ascending order on the
 * free stack's bottom (the chain's end). The record (gen, pos) of slot i
 * and roster entry k of the loaded pool, and its chain field. */
void opool__check_loaded_record(const opool *a, uint32_t i, uint32_t *gen, uint32_t *pos);
uint32_t opool__check_loaded_entry(const opool *a, uint32_t k);
uint32_t opool__check_loaded_chain(const opool *a);

#endif /* OPOOL_TEST_CHECK_H */
