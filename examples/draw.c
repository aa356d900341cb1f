/*
 * draw.c -- a picture of a pool (opool_draw_svg), before and after opool_sort.
 *
 * A growing pool of asteroids lives through a few hundred frames of random
 * spawns and deaths. Its slots end up in every state the picture shows:
 * live, free, retired (OPOOL_RETIRE_ON_WRAP with compact handles of 10
 * generation bits: a slot retires after 512 lives) and given back (a chunk
 * emptied, then opool_shrink). The live list, which the blue line follows,
 * is in the order churn left it: the program writes the picture, sorts the
 * live list, and writes it again.
 *
 *   cc -std=c11 -O2 -Iinclude examples/draw.c src/opool*.c -o draw
 *   ./draw                 writes asteroids-churned.svg and asteroids-sorted.svg
 *   ./draw DIR             writes them in DIR
 *
 * Open them in a browser (hover a run of cells for its slots), or
 * rsvg-convert -o churned.png asteroids-churned.svg. Deterministic: a
 * fixed-seed xorshift, no clock. Exits 1 on any failure.
 */
#include "opool.h"

#include <stdio.h>
#include <string.h>

struct asteroid {
    float x, y, dx, dy;
    int hits;
};

static uint32_t rng_state = 2463534242u;
static uint32_t next_random(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 17;
    rng_state ^= rng_state << 5;
    return rng_state;
}

static size_t file_write(void *ctx, const void *data, size_t size) {
    return fwrite(data, 1, size, (FILE *)ctx);
}

static int draw(const opool *pool, const char *dir, const char *name) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (f == NULL) {
        perror(path);
        return 1;
    }
    opool_status s = opool_draw_svg(pool, file_write, f);
    if (fclose(f) != 0 && s == OPOOL_OK) s = OPOOL_EIO;
    if (s != OPOOL_OK) {
        fprintf(stderr, "%s: %s\n", path, opool_status_str(s));
        return 1;
    }
    printf("wrote %s\n", path);
    return 0;
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : ".";
    opool_desc desc = {
        .name = "asteroids",
        .object_size = sizeof(struct asteroid),
        .capacity = 256,
        .max_capacity = 1u << 22, /* compact handles of 22 index bits, 10 generation bits */
        .on_full = OPOOL_FULL_GROW,
        .flags = OPOOL_RETIRE_ON_WRAP,
    };
    opool *pool;
    if (opool_create(&pool, &desc) != OPOOL_OK) return 1;

    /* A wave that grows the pool to three chunks (256 + 256 + 512 slots),
     * then dies out: every asteroid past slot 512, and half of the others.
     * The third chunk, empty, is given back. */
    static opool_handle wave[700];
    for (int i = 0; i < 700; i++)
        if (opool_alloc(pool, &wave[i]) == NULL) return 1;
    for (int i = 0; i < 700; i++)
        if (i >= 512 || next_random() % 2) opool_free(pool, wave[i]);
    uint32_t given_back = opool_shrink(pool);

    /* One short-lived kind of asteroid (debris) spawns and dies in the same
     * frame, on the free stack's top slot: that slot's generations run out
     * and it retires, then the next one. */
    for (int i = 0; i < 3 * 512; i++) {
        opool_handle h;
        if (opool_alloc(pool, &h) == NULL) return 1;
        opool_free(pool, h);
    }

    /* Frames of churn: each frees a random third of the field and spawns as
     * many again, so the live list is left in no order at all. */
    for (int frame = 0; frame < 60; frame++) {
        uint32_t n = opool_count(pool);
        for (uint32_t i = n; i-- > 0;)
            if (next_random() % 3 == 0) opool_free(pool, opool_live_handle(pool, i));
        while (opool_count(pool) < n) {
            struct asteroid *a = opool_alloc(pool, NULL);
            if (a == NULL) return 1;
            memset(a, 0, sizeof *a);
            a->hits = (int)(next_random() % 4);
        }
    }
    opool_stats st;
    opool_get_stats(pool, &st);
    printf("asteroids: %u live, %u slots given back, %u retired\n", opool_count(pool), given_back,
           st.retired);

    int failed = draw(pool, dir, "asteroids-churned.svg");
    opool_sort(pool);
    failed |= draw(pool, dir, "asteroids-sorted.svg");
    opool_clear(pool);
    opool_destroy(pool);
    return failed;
}
