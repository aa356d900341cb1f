/*
 * dist_static.c -- dist/opool.h with OPOOL_STATIC: the whole library static,
 * private to this file. dist_static_peer.c carries a second static copy, and
 * the two are linked into one program: any symbol of the library left with
 * external linkage would be defined twice and fail the link. Exits non-zero
 * on any mismatch.
 */
#define OPOOL_STATIC
#define OPOOL_IMPLEMENTATION
#include "opool.h"

#include "dist_exercise.h"

int dist_static_peer(void);

int main(void) {
    int failures = dist_exercise("dist_static.c (OPOOL_STATIC)");
    failures += dist_static_peer();
    printf("%s\n", failures ? "FAILED" : "dist_static: all ok");
    return failures != 0;
}
