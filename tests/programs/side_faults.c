/*
 * side_faults.c -- side tables take their memory from the C library, not
 * from an opool_allocator, so test_faults.c's allocators cannot fail it.
 * This program is linked with -Wl,--wrap=malloc,--wrap=calloc,
 * --wrap=realloc,--wrap=posix_memalign,--wrap=free (tests/tests.cmake: Linux
 * builds), which sends every C-library allocation of the library and of this
 * program through the wrappers below; they fail the call numbered fail_at
 * and count the blocks held.
 *
 * For every allocation that opool_side_load, and opool_load_world with side
 * tables, make on a valid image, the load with that one allocation failing
 * must return OPOOL_ENOMEM with *out (every out and sides entry) NULL and
 * hold no block more than before; with nothing failing it loads again.
 */
#include "opool.h"
#include "opool_side.h"
#include "helpers.h"
#include "stream.h"
#include "test.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *ptr, size_t size);
int __real_posix_memalign(void **out, size_t align, size_t size);
void __real_free(void *ptr);

static long calls;         /* allocation calls so far */
static long fail_at = -1;  /* the call that fails; -1: none */
static long held;          /* blocks allocated and not freed */

static bool fails_now(void) { return calls++ == fail_at; }

void *__wrap_malloc(size_t size) {
    if (fails_now()) return NULL;
    void *p = __real_malloc(size);
    held += p != NULL;
    return p;
}

void *__wrap_calloc(size_t n, size_t size) {
    if (fails_now()) return NULL;
    void *p = __real_calloc(n, size);
    held += p != NULL;
    return p;
}

void *__wrap_realloc(void *ptr, size_t size) {
    if (fails_now()) return NULL;
    void *p = __real_realloc(ptr, size);
    held += ptr == NULL && p != NULL;
    return p;
}

int __wrap_posix_memalign(void **out, size_t align, size_t size) {
    if (fails_now()) return ENOMEM;
    int r = __real_posix_memalign(out, align, size);
    held += r == 0;
    return r;
}

void __wrap_free(void *ptr) {
    held -= ptr != NULL;
    __real_free(ptr);
}

typedef struct value {
    uint32_t a, b, c, d;
} value;

/* A pool of n live objects and a table with a value for every third. */
static opool *pool_with_table(uint32_t n, opool_side **table) {
    opool_desc d = quiet_desc(16, n, 0x1000);
    d.name = "ships";
    opool *p = NULL;
    if (opool_create(&p, &d) != OPOOL_OK) return NULL;
    if (opool_side_create(table, sizeof(value), _Alignof(value), 0) != OPOOL_OK) return NULL;
    for (uint32_t k = 0; k < n; k++) {
        opool_handle h;
        if (opool_alloc(p, &h) == NULL) return NULL;
        if (k % 3) continue;
        value *v = opool_side_put(*table, h);
        if (v == NULL) return NULL;
        v->a = k, v->b = ~k, v->c = 3 * k, v->d = k ^ 0x5a5a;
    }
    return p;
}

/* A load under test: from img, with the allocation numbered fail_at (if
 * any) failing; its status, and in *nothing_out whether every out pointer
 * it was given came back NULL. */
typedef opool_status (*load_fn)(stream *img, bool *nothing_out);

/* Runs load once for each of the made allocations it makes, that one
 * failing: each must be OPOOL_ENOMEM with nothing out and no block held. */
static void each_failure_is_enomem(load_fn load, stream *img, long made) {
    int failed_before = test__checks_failed;
    for (long k = 0; k < made; k++) {
        img->pos = 0;
        long held_before = held;
        bool nothing_out = false;
        fail_at = calls + k;
        opool_status s = load(img, &nothing_out);
        fail_at = -1;
        CHECK_EQ_U64(s, OPOOL_ENOMEM);
        CHECK(nothing_out);
        CHECK_EQ_U64(held, held_before);
        if (test__checks_failed != failed_before) {
            fprintf(stderr, "allocation %ld of %ld failing\n", k, made);
            return;
        }
    }
}

static opool_status load_side(stream *img, bool *nothing_out) {
    opool_side *u = (opool_side *)(uintptr_t)1;
    opool_status s = opool_side_load(&u, sizeof(value), _Alignof(value), stream_read, img);
    *nothing_out = u == NULL;
    if (s == OPOOL_OK) opool_side_destroy(u);
    return s;
}

static opool_status load_world(stream *img, bool *nothing_out) {
    opool_desc d = quiet_desc(16, 1500, 0x1000);
    opool_side_layout lay = {sizeof(value), _Alignof(value)};
    opool *q = (opool *)(uintptr_t)1;
    opool_side *u = (opool_side *)(uintptr_t)1;
    opool_status s = opool_load_world(&q, &d, 1, &u, &lay, 1, stream_read, img);
    *nothing_out = q == NULL && u == NULL;
    if (s == OPOOL_OK) {
        opool_side_destroy(u);
        opool_clear(q);
        opool_destroy(q);
    }
    return s;
}

TEST(every_failed_allocation_of_a_side_load_is_enomem_and_holds_nothing) {
    opool_side *t = NULL;
    opool *p = pool_with_table(3000, &t); /* entries in 3 pages of the index */
    REQUIRE(p != NULL && t != NULL);
    stream img = stream_new();
    REQUIRE(opool_side_save(t, stream_write, &img) == OPOOL_OK);

    long before = calls;
    opool_side *u = NULL;
    REQUIRE(opool_side_load(&u, sizeof(value), _Alignof(value), stream_read, &img) == OPOOL_OK);
    long made = calls - before;
    CHECK(made >= 4); /* the table, its index, its pages, its arrays, the reader's buffer */
    CHECK_EQ_U64(opool_side_count(u), opool_side_count(t));
    opool_side_destroy(u);

    each_failure_is_enomem(load_side, &img, made);
    img.pos = 0;
    REQUIRE(opool_side_load(&u, sizeof(value), _Alignof(value), stream_read, &img) == OPOOL_OK);
    opool_handle h = opool_live_handle(p, 0);
    CHECK(opool_side_get(u, h) != NULL || opool_side_get(t, h) == NULL);
    opool_side_destroy(u);
    stream_free(&img);
    opool_side_destroy(t);
    opool_destroy(p);
}

TEST(every_failed_allocation_of_a_world_load_with_sides_is_enomem_and_holds_nothing) {
    opool_side *t = NULL;
    opool *p = pool_with_table(1500, &t);
    REQUIRE(p != NULL && t != NULL);
    const opool *pools[1] = {p};
    const opool_side *sides[1] = {t};
    stream img = stream_new();
    REQUIRE(opool_save_world(pools, 1, sides, 1, stream_write, &img) == OPOOL_OK);
    opool_desc d = quiet_desc(16, 1500, 0x1000);
    opool_side_layout lay = {sizeof(value), _Alignof(value)};

    opool *q = NULL;
    opool_side *u = NULL;
    long before = calls;
    REQUIRE(opool_load_world(&q, &d, 1, &u, &lay, 1, stream_read, &img) == OPOOL_OK);
    long made = calls - before;
    CHECK_EQ_U64(opool_count(q), 1500);
    CHECK_EQ_U64(opool_side_count(u), opool_side_count(t));
    opool_side_destroy(u);
    opool_clear(q);
    opool_destroy(q);

    each_failure_is_enomem(load_world, &img, made);
    stream_free(&img);
    opool_side_destroy(t);
    opool_clear(p);
    opool_destroy(p);
}

int main(void) {
    RUN(every_failed_allocation_of_a_side_load_is_enomem_and_holds_nothing);
    RUN(every_failed_allocation_of_a_world_load_with_sides_is_enomem_and_holds_nothing);
    return test_summary();
}
