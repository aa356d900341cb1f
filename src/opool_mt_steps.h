/*
 * opool_mt_steps.h -- the library's definitions of the macros that
 * include/opool_abi.h's cache steps are written on (its atomics, its light
 * barrier of either kind, its named points), so that those steps, the
 * bodies of the inline cache hits, are the library's own code too. Included
 * before opool_mt.h (by opool_mt_internal.h, and by the Relacy test, which
 * runs them on Relacy's atomics). Private: never installed.
 */
#ifndef OPOOL_MT_STEPS_H
#define OPOOL_MT_STEPS_H

#include "opool_mt_points.h"
#include "opool_platform.h"

/* Named points of the protocol where a test may hold the thread that reaches
 * them (opool_mt_points.h). Only the test-support build defines
 * OPOOL_TEST_HOOKS; everywhere else a point is nothing at all. */
#if defined(OPOOL_TEST_HOOKS)
#define OPOOL__MT_POINT(p, at) opool__mt_at(p, OPOOL__MT_AT_##at)
#else
#define OPOOL__MT_POINT(p, at) ((void)0)
#endif

/* The macros of opool_abi.h's cache steps, on the library's atomics, its
 * barrier of either kind (opool__mt_light_barrier, opool_mt_internal.h) and its named
 * points: defined before opool_mt.h, so that those steps, the inline hits'
 * bodies, are the library's own code too. */
#if !defined(OPOOL__MT_STEPS) /* the single header has defined its own, the header's */
struct opool_mt;
static inline void opool__mt_light_barrier(const struct opool_mt *p);
#define OPOOL__MT_STEPS 1
#define OPOOL__MT_LOAD_RELAXED(p) opool__atomic_load_relaxed(p)
#define OPOOL__MT_LOAD_ACQUIRE(p) opool__atomic_load_acquire(p)
#define OPOOL__MT_STORE_RELAXED(p, v) opool__atomic_store_relaxed(p, v)
#define OPOOL__MT_STORE_RELEASE(p, v) opool__atomic_store_release(p, v)
#define OPOOL__MT_LIGHT_BARRIER(c) opool__mt_light_barrier((c)->pool)
#define OPOOL__MT_HIT_POINT(c, at) OPOOL__MT_POINT((c)->pool, at)
#endif

#endif /* OPOOL_MT_STEPS_H */
