/*
 * helpers.h -- small helpers the pool tests share: a handle from its parts,
 * a report callback that keeps stderr quiet, a quiet desc, and a seeded
 * random number generator for the randomized tests.
 */
#ifndef OPOOL_TEST_HELPERS_H
#define OPOOL_TEST_HELPERS_H

#include "opool.h"
#include "opool_heap.h"

#include <string.h>

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

/* A fixed pool's desc with the given salt and quiet_report. The tests drive
 * twin pools alike and compare their handles: OPOOL_SHARE_SALT. */
static inline opool_desc quiet_desc(size_t object_size, uint32_t capacity, uint32_t salt) {
    opool_desc d;
    memset(&d, 0, sizeof d);
    d.object_size = object_size;
    d.capacity = capacity;
    d.salt = salt;
    d.flags = OPOOL_SHARE_SALT;
    d.report = quiet_report;
    return d;
}

/* splitmix64: one sequence per seed, the same on every machine. */
typedef struct rng {
    uint64_t s;
} rng;

static inline uint64_t mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

static inline uint64_t rng_next(rng *r) { return mix64(r->s += 0x9E3779B97F4A7C15u); }
static inline uint32_t rng_below(rng *r, uint32_t n) { return n ? (uint32_t)(rng_next(r) % n) : 0; }
static inline bool rng_chance(rng *r, uint32_t percent) { return rng_below(r, 100) < percent; }

/* Blocks live in heap h, over its classes and its large blocks. */
static inline uint64_t heap_live(const opool_heap *h) {
    opool_heap_stats s;
    opool_heap_get_stats(h, &s);
    uint64_t live = s.large_live;
    for (uint32_t k = 0; k < s.class_count; k++) live += s.classes[k].live;
    return live;
}

#endif /* OPOOL_TEST_HELPERS_H */
