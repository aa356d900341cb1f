/*
 * debugger_prog.c -- what the debugger tests look at (tests/debugger/run.sh):
 * one pool of each kind with a few objects, one of them freed, and a stop in
 * debugger_stop() with everything in globals. Built from the library or from
 * dist/opool.h (OPOOL_IMPLEMENTATION defined by the build), always with -g.
 */
#include "opool.h" /* dist/opool.h holds every header */
#if !defined(OPOOL_IMPLEMENTATION)
#include "opool_heap.h"
#include "opool_mt.h"
#include "opool_typed.h"
#endif

#include <stdio.h>

struct ship {
    int id;
    float speed;
};
OPOOL_TYPED(fleet, struct ship);

opool *plain, *unlisted;
opool *broken = (opool *)16; /* no pool there: the printers must say so */
fleet *ships;
opool_mt *jobs;
opool_heap *strings;
opool_handle plain_h[3], null_h, even_h;
fleet_handle ship_h[3];
void *plain_live[2];

/* Where the debugger stops; noinline so that the breakpoint is a call. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((noinline))
#endif
void debugger_stop(void) {
    puts("stopped");
}

static int make_pools(void) {
    opool_desc d = {0};
    d.object_size = sizeof(int);
    d.capacity = 8;
    d.name = "plain";
    if (opool_create(&plain, &d) != OPOOL_OK) return 1;
    for (int i = 0; i < 3; i++) *(int *)opool_alloc(plain, &plain_h[i]) = 10 + i;
    if (opool_free(plain, plain_h[1]) != OPOOL_OK) return 1;
    plain_live[0] = opool_live_object(plain, 0);
    plain_live[1] = opool_live_object(plain, 1);

    d.name = "unlisted";
    d.flags = OPOOL_NO_LIVE_LIST;
    if (opool_create(&unlisted, &d) != OPOOL_OK) return 1;
    opool_handle u[2];
    for (int i = 0; i < 2; i++) *(int *)opool_alloc(unlisted, &u[i]) = 20 + i;
    if (opool_free(unlisted, u[0]) != OPOOL_OK) return 1;

    if (fleet_create_n(&ships, 4) != OPOOL_OK) return 1;
    for (int i = 0; i < 3; i++) *fleet_alloc(ships, &ship_h[i]) = (struct ship){100 + i, 1.5f * i};
    if (fleet_free(ships, ship_h[0]) != OPOOL_OK) return 1;

    opool_desc m = {0};
    m.object_size = sizeof(int);
    m.capacity = 4;
    m.name = "jobs";
    if (opool_mt_create(&jobs, &m) != OPOOL_OK) return 1;
    opool_handle j[3];
    for (int i = 0; i < 3; i++) *(int *)opool_mt_alloc(jobs, &j[i]) = 30 + i;
    if (opool_mt_free(jobs, j[2]) != OPOOL_OK) return 1;

    opool_heap_desc hd = {0};
    hd.name = "strings";
    if (opool_heap_create(&strings, &hd) != OPOOL_OK) return 1;
    void *a = opool_heap_alloc(strings, 10), *b = opool_heap_alloc(strings, 12);
    void *c = opool_heap_alloc(strings, 100);
    if (!a || !b || !c || opool_heap_free(strings, b) != OPOOL_OK) return 1;

    even_h.bits = (uint64_t)0x1234 << 32 | 5; /* an even generation: never issued */
    return 0;
}

int main(void) {
    if (make_pools() != 0) return 1;
    debugger_stop();
    opool_heap_destroy(strings);
    opool_mt_destroy(jobs);
    fleet_destroy(ships);
    opool_destroy(unlisted);
    opool_destroy(plain);
    return 0;
}
