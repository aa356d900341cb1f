/*
 * helpers.h -- small helpers the pool tests share: a handle from its parts,
 * and a report callback that keeps stderr quiet.
 */
#ifndef OPOOL_TEST_HELPERS_H
#define OPOOL_TEST_HELPERS_H

#include "opool.h"

/* The handle of slot index with generation gen. */
static inline opool_handle handle(uint32_t gen, uint32_t index) {
    opool_handle h;
    h.bits = (uint64_t)gen << 32 | index;
    return h;
}

/* A desc.report that says nothing (the tests check statuses and counters). */
static inline void quiet_report(opool *p, opool_status what, opool_handle h, void *user) {
    (void)p, (void)what, (void)h, (void)user;
}

#endif /* OPOOL_TEST_HELPERS_H */
