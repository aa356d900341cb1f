/*
 * mix_declared.c -- must NOT compile (as C or as C++, with no special flag):
 * the handle types of OPOOL_TYPED_HANDLE, declared before the types that
 * hold them (two types pointing at each other), are as distinct as those of
 * OPOOL_TYPED, and a typed side table takes only its pool's handle. Every
 * line marked EXPECT-ERROR hands one handle type where another is expected.
 *
 * Judged like mix_handles.c (tests/typed/expect_compile.cmake), including
 * the -DOPOOL_TYPED_CONTROL build, where each marked line takes the right
 * handle and the file must compile cleanly (-Werror).
 */
#include "opool_typed.h"

#ifdef OPOOL_TYPED_CONTROL
#define PICK(wrong, right) right
#else
#define PICK(wrong, right) wrong
#endif

OPOOL_TYPED_HANDLE(ship_pool);
OPOOL_TYPED_HANDLE(dock_pool);

struct ship {
    ship_pool_handle target; /* a ship of its own pool */
    dock_pool_handle home;
};
struct dock {
    ship_pool_handle docked;
};

OPOOL_TYPED_POOL(ship_pool, struct ship);
OPOOL_TYPED_POOL(dock_pool, struct dock);

struct name {
    char text[16];
};
OPOOL_TYPED_SIDE(ship_names, ship_pool, struct name);

int main(void) {
    ship_pool *ships;
    dock_pool *docks;
    ship_names *names;
    if (ship_pool_create_n(&ships, 8) != OPOOL_OK) return 1;
    if (dock_pool_create_n(&docks, 8) != OPOOL_OK) return 1;
    if (ship_names_create(&names, 8) != OPOOL_OK) return 1;
    ship_pool_handle s;
    dock_pool_handle d;
    struct ship *ship = ship_pool_alloc(ships, &s);
    struct dock *dock = dock_pool_alloc(docks, &d);
    if (ship == NULL || dock == NULL) return 1;

    ship->target = PICK(d, s);                                     /* EXPECT-ERROR */
    ship->home = PICK(s, d);                                       /* EXPECT-ERROR */
    dock->docked = PICK(ship->home, ship->target);                 /* EXPECT-ERROR */
    int bad = dock_pool_get(docks, PICK(ship->target, d)) == NULL; /* EXPECT-ERROR */
    struct name *n = ship_names_put(names, PICK(d, s));            /* EXPECT-ERROR */
    bad += ship_names_get(names, PICK(dock->docked.raw, s)) != n;  /* EXPECT-ERROR */
    bad += ship_names_remove(names, PICK(d, s)) != OPOOL_OK;       /* EXPECT-ERROR */

    ship_names_destroy(names);
    dock_pool_destroy(docks);
    ship_pool_destroy(ships);
    return bad;
}
