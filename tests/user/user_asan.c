/*
 * user_asan.c -- a user's program built with -fsanitize=address against the
 * library as installed (plain, uninstrumented): AddressSanitizer must see a
 * write through a pointer to a freed object of each kind of pool.
 *
 *     user_asan MODE
 *
 *   valid      every kind of pool used correctly: no report, exit 0
 *   pool       write to an opool object after opool_free
 *   heap       write to an opool_heap block after opool_heap_free
 *   large      the same with a block above the heap's largest class (a run of
 *              its own pages where it reserves its range, as on 64-bit Linux)
 *   mt         write to an opool_mt object after opool_mt_cache_free
 *
 * The misuse modes must die with an ASan report naming write_after_free:
 * "use-after-poison" for the heap's own memory (tests/user/check.sh).
 */
#include <opool.h>
#include <opool_heap.h>
#include <opool_mt.h>

#include <stdio.h>
#include <string.h>

struct ship {
    double x, y;
    int hp;
};

#define LARGE 40000 /* above the heap's largest class, 32 KiB */

/* Never inlined: the report names it. */
__attribute__((noinline)) static void write_after_free(struct ship *s) { s->hp = 7; }

static int valid(void) {
    opool_desc d = {0};
    d.object_size = sizeof(struct ship);
    d.capacity = 8;
    opool *p = NULL;
    opool_mt *m = NULL;
    opool_heap *h = NULL;
    if (opool_create(&p, &d) != OPOOL_OK || opool_mt_create(&m, &d) != OPOOL_OK ||
        opool_heap_create(&h, NULL) != OPOOL_OK)
        return 1;
    opool_mt_cache *c = opool_mt_cache_create(m, 4);
    if (c == NULL) return 1;
    for (int round = 0; round < 100; round++) {
        opool_handle a, b;
        struct ship *s = opool_alloc(p, &a);
        struct ship *t = opool_mt_cache_alloc(c, &b);
        struct ship *u = opool_heap_alloc(h, sizeof *u);
        char *big = opool_heap_alloc(h, LARGE); /* every byte of it usable */
        if (!s || !t || !u || !big) return 2;
        memset(big, round, LARGE);
        if (opool_heap_free(h, big) != OPOOL_OK) return 4;
        memset(s, round, sizeof *s);
        memset(t, round, sizeof *t);
        memset(u, round, sizeof *u);
        s->hp = t->hp = u->hp = round;
        if (s->hp + t->hp + u->hp != 3 * round) return 3;
        if (opool_free(p, a) != OPOOL_OK || opool_mt_cache_free(c, b) != OPOOL_OK ||
            opool_heap_free(h, u) != OPOOL_OK)
            return 4;
    }
    opool_mt_cache_destroy(c);
    opool_heap_destroy(h);
    opool_mt_destroy(m);
    opool_destroy(p);
    puts("valid: no report");
    return 0;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "valid") == 0) return valid();
    opool_desc d = {0};
    d.object_size = sizeof(struct ship);
    d.capacity = 8;
    struct ship *s = NULL;
    if (strcmp(mode, "pool") == 0) {
        opool *p = NULL;
        opool_handle h;
        if (opool_create(&p, &d) != OPOOL_OK || (s = opool_alloc(p, &h)) == NULL) return 1;
        if (opool_free(p, h) != OPOOL_OK) return 1;
    } else if (strcmp(mode, "heap") == 0) {
        opool_heap *hp = NULL;
        if (opool_heap_create(&hp, NULL) != OPOOL_OK) return 1;
        if ((s = opool_heap_alloc(hp, sizeof *s)) == NULL) return 1;
        if (opool_heap_free(hp, s) != OPOOL_OK) return 1;
    } else if (strcmp(mode, "large") == 0) {
        opool_heap *hp = NULL;
        if (opool_heap_create(&hp, NULL) != OPOOL_OK) return 1;
        if ((s = opool_heap_alloc(hp, LARGE)) == NULL) return 1;
        if (opool_heap_free(hp, s) != OPOOL_OK) return 1;
    } else if (strcmp(mode, "mt") == 0) {
        opool_mt *m = NULL;
        opool_handle h;
        if (opool_mt_create(&m, &d) != OPOOL_OK) return 1;
        opool_mt_cache *c = opool_mt_cache_create(m, 4);
        if (c == NULL || (s = opool_mt_cache_alloc(c, &h)) == NULL) return 1;
        if (opool_mt_cache_free(c, h) != OPOOL_OK) return 1;
    } else {
        fprintf(stderr, "usage: user_asan valid|pool|heap|large|mt\n");
        return 2;
    }
    write_after_free(s);
    puts("the write after free went unseen");
    return 0;
}
