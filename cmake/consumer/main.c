/* Install check: builds against the installed headers and library only (or
 * opool added as a subdirectory): the core pool, the heap and the concurrent
 * pool, the inline calls and the exported functions behind them. */
#include <opool.h>
#include <opool_heap.h>
#include <opool_mt.h>
#include <stdio.h>

int main(void) {
    opool_desc d = {0};
    d.object_size = sizeof(double);
    d.capacity = 4;
    opool *pool = NULL;
    if (opool_create(&pool, &d) != OPOOL_OK) return 1;
    opool_handle h;
    double *x = opool_alloc(pool, &h);
    if (x == NULL || opool_get(pool, h) != x) return 2;
    *x = 1.5;
    if (opool_free(pool, h) != OPOOL_OK || opool_valid(pool, h)) return 3;

    /* The same functions through pointers: the library's exported symbols,
     * which a foreign function interface or dlsym would find. */
    void *(*alloc_fn)(opool *, opool_handle *) = &opool_alloc;
    void *(*get_fn)(const opool *, opool_handle) = &opool_get;
    uint32_t (*count_fn)(const opool *) = &opool_count;
    opool_status (*free_fn)(opool *, opool_handle) = &opool_free;
    x = alloc_fn(pool, &h);
    if (x == NULL || get_fn(pool, h) != x || count_fn(pool) != 1) return 4;
    if (free_fn(pool, h) != OPOOL_OK || free_fn(pool, h) != OPOOL_ESTALE) return 5;
    opool_destroy(pool);

    opool_heap *heap = NULL;
    if (opool_heap_create(&heap, NULL) != OPOOL_OK) return 6;
    void *(*heap_alloc_fn)(opool_heap *, size_t) = &opool_heap_alloc;
    char *s = opool_heap_alloc(heap, 100), *t = heap_alloc_fn(heap, 10);
    if (s == NULL || t == NULL || opool_heap_usable_size(heap, s) != 112) return 7;
    if (opool_heap_free(heap, s) != OPOOL_OK || (opool_heap_free)(heap, t) != OPOOL_OK) return 8;
    opool_heap_destroy(heap);

    opool_mt *shared = NULL;
    if (opool_mt_create(&shared, &d) != OPOOL_OK) return 9;
    opool_mt_cache *c = opool_mt_cache_create(shared, 2);
    if (opool_mt_cache_alloc(c, &h) == NULL || opool_mt_free(shared, h) != OPOOL_OK) return 10;
    if (opool_mt_free(shared, h) != OPOOL_ESTALE) return 11;
    opool_mt_cache_destroy(c);
    opool_mt_destroy(shared);
    printf("consumer: opool %d.%d.%d ok\n", OPOOL_VERSION_MAJOR, OPOOL_VERSION_MINOR,
           OPOOL_VERSION_PATCH);
    return 0;
}
