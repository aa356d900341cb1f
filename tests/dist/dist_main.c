/*
 * dist_main.c -- the single header dist/opool.h in a C11 program of two
 * translation units: this one compiles the implementation (and is the
 * program), dist_second.c includes the header without it. Linking them
 * proves the OPOOL_IMPLEMENTATION guard: one copy of the library, usable
 * from both. Exits non-zero on any mismatch.
 */
#define OPOOL_IMPLEMENTATION
#include "opool.h" /* first: the implementation asks for POSIX before any system header */
#include "opool.h" /* twice: the include guards and the implementation's own guard hold */

#include "dist_exercise.h"

int dist_second_exercise(void);
uint32_t dist_second_count(const dist_pool *p, dist_pool_handle h);

int main(void) {
    int failures = dist_exercise("dist_main.c (with OPOOL_IMPLEMENTATION)");
    failures += dist_second_exercise();

    /* a pool made here, read from the other translation unit */
    dist_pool *p = NULL;
    if (dist_pool_create_n(&p, 4) != OPOOL_OK) return 1;
    dist_pool_handle h;
    struct dist_thing *t = dist_pool_alloc(p, &h);
    if (t == NULL) return 1;
    t->id = 4242;
    if (dist_second_count(p, h) != 4242 + 1) {
        fprintf(stderr, "the other translation unit does not see the same pool\n");
        failures++;
    }
    dist_pool_destroy(p);
    printf("%s\n", failures ? "FAILED" : "dist_main: all ok");
    return failures != 0;
}
