/*
 * tests/support/mt_check.h -- test-only access to opool_mt's internals
 * (tests/support/mt_check.c, in the test-support library): never part of the
 * shipped library or of dist/opool.h.
 */
#ifndef OPOOL_TEST_MT_CHECK_H
#define OPOOL_TEST_MT_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct opool_mt;
/* Verify, at quiescence (no call running on the pool), that every slot is in
 * exactly one place (live, the shared list, a cache, retired), that the
 * shared list ends, and that the counts agree. True if all hold; else false
 * with the first violation described in why (if why is not NULL). O(slots). */
bool opool__mt_check(const struct opool_mt *p, char *why, size_t why_size);
/* Set the generation of free slot index, which must sit in the shared list,
 * to gen (even): how tests reach a generation's wrap. False otherwise. */
bool opool__mt_set_gen(struct opool_mt *p, uint32_t index, uint32_t gen);
/* Give the calling thread stripe s of the shared list (0 <= s < 8), as if
 * it had been the (s + 1)-th thread to use opool_mt: how tests choose which
 * threads share a stripe. Before the thread's first call on any pool. */
void opool__mt_set_stripe(unsigned s);

#endif /* OPOOL_TEST_MT_CHECK_H */
