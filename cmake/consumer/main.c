/* Install check: builds against the installed headers and library only. */
#include <opool.h>
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
    printf("consumer: opool %d.%d.%d ok\n", OPOOL_VERSION_MAJOR, OPOOL_VERSION_MINOR,
           OPOOL_VERSION_PATCH);
    return 0;
}
