/*
 * mix_pools.c -- must NOT compile: every line marked EXPECT-ERROR hands one
 * typed pool where another pool type (or the untyped opool) is expected, or
 * takes an object pointer as the wrong type. An error in C++ with no special
 * flag; in C a diagnostic (incompatible pointer types), which the test turns
 * into an error with -Werror=incompatible-pointer-types (GCC 14 and later
 * make it one by default).
 *
 * Checked like mix_handles.c (tests/typed/expect_compile.cmake), including
 * the -DOPOOL_TYPED_CONTROL build that must compile cleanly.
 */
#include "opool_typed.h"

#ifdef OPOOL_TYPED_CONTROL
#define PICK(wrong, right) right
#else
#define PICK(wrong, right) wrong
#endif

struct enemy {
    float x, y;
    int hp;
};
struct bullet {
    float x, y, vx, vy;
};

OPOOL_TYPED(enemy_pool, struct enemy);
OPOOL_TYPED(bullet_pool, struct bullet);

int main(void) {
    enemy_pool *enemies;
    bullet_pool *bullets;
    if (enemy_pool_create_n(&enemies, 8) != OPOOL_OK) return 1;
    if (bullet_pool_create_n(&bullets, 8) != OPOOL_OK) return 1;
    opool *raw = bullet_pool_raw(bullets);
    bullet_pool_handle b;
    if (bullet_pool_alloc(bullets, &b) == NULL) return 1;

    unsigned bad = enemy_pool_count(PICK(bullets, enemies));             /* EXPECT-ERROR */
    bad += opool_count(PICK(bullets, raw));                              /* EXPECT-ERROR */
    bad += bullet_pool_capacity(PICK(raw, bullets)) != 8;                /* EXPECT-ERROR */
    struct bullet *obj = bullet_pool_get(PICK(enemies, bullets), b);     /* EXPECT-ERROR */
    PICK(struct enemy, struct bullet) *got = bullet_pool_at(bullets, 0); /* EXPECT-ERROR */
    PICK(struct bullet, struct enemy) *none = enemy_pool_at(enemies, 0); /* EXPECT-ERROR */

    bad += (got == NULL) + (none != NULL) + (obj == NULL);
    enemy_pool_destroy(enemies);
    bullet_pool_destroy(bullets);
    return (int)bad;
}
