/*
 * typed_after_handle.c -- must NOT compile: OPOOL_TYPED after
 * OPOOL_TYPED_HANDLE of the same name would define the handle type twice.
 * C cannot tell the macro that it was declared already, so the header makes
 * the mistake fail first on a name that says what to write instead
 * (name__after_OPOOL_TYPED_HANDLE_write_OPOOL_TYPED_POOL), which the judge
 * (tests/typed/expect_compile.cmake) requires in the output. With
 * -DOPOOL_TYPED_CONTROL the marked line says OPOOL_TYPED_POOL and the file
 * must compile cleanly.
 */
#include "opool_typed.h"

OPOOL_TYPED_HANDLE(ship_pool);

struct ship {
    ship_pool_handle target;
    int hp;
};

#ifdef OPOOL_TYPED_CONTROL
#define DECLARE_POOL OPOOL_TYPED_POOL
#else
#define DECLARE_POOL OPOOL_TYPED
#endif

DECLARE_POOL(ship_pool, struct ship); /* EXPECT-ERROR */

/* Only the pool itself: code using the twice-defined handle type would add
 * errors of its own, on lines the judge must not see errors on. */
int main(void) {
    ship_pool *ships;
    if (ship_pool_create_n(&ships, 4) != OPOOL_OK) return 1;
    ship_pool_destroy(ships);
    return 0;
}
