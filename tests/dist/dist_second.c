/*
 * dist_second.c -- the second translation unit of dist_main.c's program:
 * dist/opool.h without OPOOL_IMPLEMENTATION, so every call here goes to the
 * copy of the library compiled in dist_main.c.
 */
#include "opool.h"

#include "dist_exercise.h"

int dist_second_exercise(void);
uint32_t dist_second_count(const dist_pool *p, dist_pool_handle h);

int dist_second_exercise(void) { return dist_exercise("dist_second.c (without)"); }

/* The id of h's object plus the pool's live count (so both must be right). */
uint32_t dist_second_count(const dist_pool *p, dist_pool_handle h) {
    const struct dist_thing *t = dist_pool_get(p, h);
    return t ? t->id + dist_pool_count(p) : 0;
}
