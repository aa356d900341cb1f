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
/* Whether this build of opool_mt makes growing pools (opool_mt.h, GROWTH):
 * on Linux and Windows, where the library reserves address space, unless
 * built with OPOOL_PORTABLE. Elsewhere (WebAssembly) creating one gives
 * OPOOL_ENOMEM, which the tests check instead. */
#if (defined(__linux__) || defined(_WIN32)) && !defined(OPOOL_PORTABLE)
#define OPOOL_TEST_MT_GROWS 1
#else
#define OPOOL_TEST_MT_GROWS 0
#endif
/* The stripes of the shared list (OPOOL__MT_STRIPES, checked in mt_check.c). */
#define OPOOL_TEST_MT_STRIPES 16
/* Make the calling thread use stripe s of the shared list (s < OPOOL_TEST_MT_STRIPES),
 * shared (counted with a read-modify-write): how tests choose which threads
 * share a stripe, or play several threads from one. A stripe it held alone
 * stays held, unused, until it ends. */
void opool__mt_set_stripe(unsigned s);
/* The stripe the calling thread holds alone, or -1 if it shares one
 * (assigning it a stripe first if it has none). */
int opool__mt_stripe_held(void);

#endif /* OPOOL_TEST_MT_CHECK_H */
