/*
 * mix_handles.c -- must NOT compile (as C or as C++, with no special flag):
 * every line marked EXPECT-ERROR hands a handle of one typed pool, or a bare
 * opool_handle, to a place that wants another pool type's handle.
 *
 * tests/typed/expect_compile.cmake compiles it and passes only if the
 * compiler fails, with an error on every marked line, no error anywhere
 * else, and the handle types named in its output. Built with
 * -DOPOOL_TYPED_CONTROL each marked line takes the right handle instead, and
 * the file must then compile cleanly (-Werror): proof that nothing but the
 * mix is wrong with those lines.
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
    enemy_pool_handle e;
    bullet_pool_handle b;
    opool_handle raw = OPOOL_NULL;
    if (enemy_pool_alloc(enemies, &e) == NULL || bullet_pool_alloc(bullets, &b) == NULL) return 1;

    struct bullet *got = bullet_pool_get(bullets, PICK(e, b));   /* EXPECT-ERROR */
    int bad = bullet_pool_valid(bullets, PICK(e, b));            /* EXPECT-ERROR */
    bullet_pool_handle copy = PICK(e, b);                        /* EXPECT-ERROR */
    bad += bullet_pool_handle_eq(copy, PICK(e, b));              /* EXPECT-ERROR */
    bad += enemy_pool_get(enemies, PICK(raw, e)) == NULL;        /* EXPECT-ERROR */
    bad += bullet_pool_free(bullets, PICK(e, copy)) != OPOOL_OK; /* EXPECT-ERROR */
    bad += enemy_pool_handle_index(PICK(b, e)) != 0;             /* EXPECT-ERROR */
    (void)raw;

    bad += got == NULL;
    enemy_pool_destroy(enemies);
    bullet_pool_destroy(bullets);
    return bad;
}
