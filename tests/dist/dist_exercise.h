/*
 * dist_exercise.h -- what every program of tests/dist/ runs against the
 * single header dist/opool.h: create, alloc, get, free, stale handles,
 * iteration, save and load (memory and file), the typed API, and the
 * concurrent pool (one thread: what is checked here is that it is there). Written in
 * the common subset of C11 and C++11 (explicit casts from void *, no
 * designated initialisers) so the C and the C++ programs share it.
 *
 * Include it after dist/opool.h. dist_exercise(tag) returns the number of
 * mismatches, each printed with tag (the translation unit running it).
 */
#ifndef OPOOL_DIST_EXERCISE_H
#define OPOOL_DIST_EXERCISE_H

#include <stdio.h>
#include <string.h>

struct dist_thing {
    uint32_t id;
    float weight;
};

OPOOL_TYPED(dist_pool, struct dist_thing);

#define DIST_CHECK(cond)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s: %s:%d: check failed: %s\n", tag, __FILE__, __LINE__, #cond);      \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

typedef struct dist_buffer {
    unsigned char data[4096];
    size_t size, pos;
} dist_buffer;

static size_t dist_write(void *ctx, const void *data, size_t size) {
    dist_buffer *b = (dist_buffer *)ctx;
    if (size > sizeof b->data - b->size) return 0;
    memcpy(b->data + b->size, data, size);
    b->size += size;
    return size;
}

static size_t dist_read(void *ctx, void *data, size_t size) {
    dist_buffer *b = (dist_buffer *)ctx;
    size_t n = b->size - b->pos < size ? b->size - b->pos : size;
    memcpy(data, b->data + b->pos, n);
    b->pos += n;
    return n;
}

/* The untyped API. */
static int dist_exercise_core(const char *tag) {
    int failures = 0;
    opool_desc d;
    memset(&d, 0, sizeof d);
    d.object_size = sizeof(struct dist_thing);
    d.capacity = 32;
    d.salt = 0x1000;
    opool *p = NULL;
    if (opool_create(&p, &d) != OPOOL_OK || p == NULL) {
        fprintf(stderr, "%s: opool_create failed\n", tag);
        return 1;
    }
    opool_handle h[20];
    for (uint32_t i = 0; i < 20; i++) {
        struct dist_thing *t = (struct dist_thing *)opool_alloc(p, &h[i]);
        DIST_CHECK(t != NULL);
        if (t) t->id = i;
    }
    DIST_CHECK(opool_count(p) == 20);
    DIST_CHECK(opool_handle_index(h[7]) == 7 && opool_handle_generation(h[7]) == 0x1001);
    struct dist_thing *seven = (struct dist_thing *)opool_get(p, h[7]);
    DIST_CHECK(seven != NULL && seven->id == 7);
    DIST_CHECK(opool_free(p, h[7]) == OPOOL_OK);
    DIST_CHECK(opool_get(p, h[7]) == NULL);
    DIST_CHECK(opool_free(p, h[7]) == OPOOL_ESTALE);

    /* iterate backwards, freeing the objects with an odd id */
    uint32_t seen = 0;
    for (uint32_t i = opool_count(p); i-- > 0;) {
        struct dist_thing *t = (struct dist_thing *)opool_live_object(p, i);
        seen++;
        if (t->id % 2 == 1) DIST_CHECK(opool_free(p, opool_live_handle(p, i)) == OPOOL_OK);
    }
    DIST_CHECK(seen == 19);
    DIST_CHECK(opool_count(p) == 10);
    opool_sort(p);

    /* save to memory, load, compare */
    static dist_buffer buf;
    buf.size = buf.pos = 0;
    DIST_CHECK(opool_save(p, dist_write, &buf) == OPOOL_OK);
    opool *q = NULL;
    DIST_CHECK(opool_load(&q, &d, dist_read, &buf) == OPOOL_OK);
    DIST_CHECK(opool_count(q) == opool_count(p));
    for (uint32_t i = 0; i < 20; i++) {
        struct dist_thing *a = (struct dist_thing *)opool_get(p, h[i]);
        struct dist_thing *b = (struct dist_thing *)opool_get(q, h[i]);
        DIST_CHECK((a == NULL) == (b == NULL));
        if (a && b) DIST_CHECK(a->id == b->id && a->id == i);
    }
    for (uint32_t i = 0; i < opool_count(p); i++)
        DIST_CHECK(opool_handle_eq(opool_live_handle(p, i), opool_live_handle(q, i)));
    opool_destroy(q);

    /* and through a file (the test runs in its own directory) */
    const char *path = "dist.opool";
    DIST_CHECK(opool_save_file(p, path) == OPOOL_OK);
    q = NULL;
    DIST_CHECK(opool_load_file(&q, &d, path) == OPOOL_OK);
    DIST_CHECK(opool_count(q) == 10);
    struct dist_thing *eight = (struct dist_thing *)opool_get(q, h[8]);
    DIST_CHECK(eight != NULL && eight->id == 8);
    remove(path);
    opool_destroy(q);

    opool_stats st;
    opool_get_stats(p, &st);
    DIST_CHECK(st.version == OPOOL_STATS_VERSION && st.allocs == 20 && st.frees == 10 &&
               st.rejected_handles == 1 && st.high_water == 20);
    DIST_CHECK(strcmp(opool_status_str(OPOOL_ESTALE), opool_status_str(OPOOL_OK)) != 0);
    opool_destroy(p);
    return failures;
}

static void dist_quiet(opool *p, opool_status what, opool_handle h, void *user) {
    (void)p, (void)what, (void)h, (void)user;
}

/* The typed API. */
static int dist_exercise_typed(const char *tag) {
    int failures = 0;
    opool_desc d;
    memset(&d, 0, sizeof d); /* object_size and object_align: from the type */
    d.capacity = 8;
    d.report = dist_quiet; /* the pool is filled up on purpose */
    dist_pool *p = NULL;
    if (dist_pool_create(&p, &d) != OPOOL_OK || p == NULL) {
        fprintf(stderr, "%s: dist_pool_create failed\n", tag);
        return 1;
    }
    dist_pool_handle h[8];
    for (uint32_t i = 0; i < 8; i++) {
        struct dist_thing *t = dist_pool_alloc(p, &h[i]); /* typed: no cast */
        DIST_CHECK(t != NULL);
        if (t) {
            t->id = 100 + i;
            t->weight = (float)i;
        }
    }
    DIST_CHECK(dist_pool_alloc(p, NULL) == NULL); /* full */
    struct dist_thing *three = dist_pool_get(p, h[3]);
    DIST_CHECK(three != NULL && three->id == 103);
    DIST_CHECK(dist_pool_handle_eq(dist_pool_handle_of(p, three), h[3]));
    DIST_CHECK(dist_pool_free(p, h[3]) == OPOOL_OK);
    DIST_CHECK(!dist_pool_valid(p, h[3]));
    DIST_CHECK(dist_pool_free(p, h[3]) == OPOOL_ESTALE);
    uint32_t sum = 0;
    for (uint32_t i = dist_pool_count(p); i-- > 0;) sum += dist_pool_live_object(p, i)->id;
    DIST_CHECK(sum == 8 * 100 + 28 - 103);

    static dist_buffer buf;
    buf.size = buf.pos = 0;
    DIST_CHECK(dist_pool_save(p, dist_write, &buf) == OPOOL_OK);
    dist_pool *q = NULL; /* loaded with the desc that created p */
    DIST_CHECK(dist_pool_load(&q, &d, dist_read, &buf) == OPOOL_OK);
    for (uint32_t i = 0; i < 8; i++) {
        struct dist_thing *t = dist_pool_get(q, h[i]);
        if (i == 3) {
            DIST_CHECK(t == NULL);
        } else {
            DIST_CHECK(t != NULL && t->id == 100 + i);
        }
    }
    DIST_CHECK(opool_count(dist_pool_raw(q)) == 7);
    dist_pool_destroy(q);
    dist_pool_destroy(p);
    return failures;
}

/* opool_mt from the single header: alloc, a cache, free, the race rules. */
static int dist_exercise_mt(const char *tag) {
    int failures = 0;
    opool_desc d;
    memset(&d, 0, sizeof d);
    d.object_size = sizeof(struct dist_thing);
    d.capacity = 4;
    d.salt = 0x500;
    opool_mt *p = NULL;
    DIST_CHECK(opool_mt_create(&p, &d) == OPOOL_OK);
    if (p == NULL) return failures + 1;
    opool_handle a, b;
    struct dist_thing *t = (struct dist_thing *)opool_mt_alloc(p, &a);
    DIST_CHECK(t != NULL && a.bits == ((uint64_t)0x501 << 32 | 0));
    opool_mt_cache *c = opool_mt_cache_create(p, 2);
    DIST_CHECK(c != NULL);
    DIST_CHECK(opool_mt_cache_alloc(c, &b) != NULL && opool_handle_index(b) == 1);
    DIST_CHECK(opool_mt_count(p) == 2);
    DIST_CHECK(opool_mt_get(p, a) == (void *)t);
    DIST_CHECK(opool_mt_cache_free(c, a) == OPOOL_OK);
    DIST_CHECK(opool_mt_free(p, a) == OPOOL_ESTALE);
    DIST_CHECK(opool_mt_free(p, b) == OPOOL_OK);
    DIST_CHECK(opool_mt_count(p) == 0);
    opool_mt_cache_destroy(c);
    opool_mt_destroy(p);
    return failures;
}

static int dist_exercise(const char *tag) {
    int failures = dist_exercise_core(tag) + dist_exercise_typed(tag) + dist_exercise_mt(tag);
    if (failures == 0) printf("%s: ok\n", tag);
    return failures;
}

#endif /* OPOOL_DIST_EXERCISE_H */
