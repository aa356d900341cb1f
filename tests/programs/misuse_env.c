/*
 * misuse_env.c -- the program that tests/programs/misuse_expect.cmake runs
 * under OPOOL_MISUSE (include/opool.h, MISUSE): a double free in a pool, a
 * concurrent pool and a heap, none of them asking for loud misuse itself,
 * with a line on stdout after the first. Exits 0 unless a call gives another
 * status than the header promises.
 */
#include "opool.h"
#include "opool_heap.h"
#include "opool_mt.h"

#include <stdio.h>
#include <string.h>

int main(void) {
    int bad = 0;
    opool_desc d;
    memset(&d, 0, sizeof d);
    d.object_size = 16;
    d.capacity = 4;
    d.name = "ships";
    opool *p = NULL;
    if (opool_create(&p, &d) != OPOOL_OK) return 1;
    opool_handle h;
    if (opool_alloc(p, &h) == NULL) return 1;
    bad |= opool_free(p, h) != OPOOL_OK;
    bad |= opool_free(p, h) != OPOOL_ESTALE; /* the first misuse */
    printf("after the misuse\n");
    fflush(stdout);
    opool_destroy(p);

    d.name = "jobs";
    opool_mt *m = NULL;
    if (opool_mt_create(&m, &d) != OPOOL_OK) return 1;
    if (opool_mt_alloc(m, &h) == NULL) return 1;
    bad |= opool_mt_free(m, h) != OPOOL_OK;
    bad |= opool_mt_free(m, h) != OPOOL_ESTALE;
    opool_mt_destroy(m);

    opool_heap *heap = NULL;
    if (opool_heap_create(&heap, NULL) != OPOOL_OK) return 1;
    void *b = opool_heap_alloc(heap, 48);
    bad |= opool_heap_free(heap, b) != OPOOL_OK;
    bad |= opool_heap_free(heap, b) != OPOOL_ESTALE;
    opool_heap_destroy(heap);
    return bad;
}
