/* Install check: builds against the installed headers and library only (or
 * opool added as a subdirectory): the core pool and the concurrent pool. */
#include <opool.h>
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
    opool_destroy(pool);

    opool_mt *shared = NULL;
    if (opool_mt_create(&shared, &d) != OPOOL_OK) return 4;
    opool_mt_cache *c = opool_mt_cache_create(shared, 2);
    if (opool_mt_cache_alloc(c, &h) == NULL || opool_mt_free(shared, h) != OPOOL_OK) return 5;
    if (opool_mt_free(shared, h) != OPOOL_ESTALE) return 6;
    opool_mt_cache_destroy(c);
    opool_mt_destroy(shared);
    printf("consumer: opool %d.%d.%d ok\n", OPOOL_VERSION_MAJOR, OPOOL_VERSION_MINOR,
           OPOOL_VERSION_PATCH);
    return 0;
}
