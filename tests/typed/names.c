/*
 * names.c -- a user's type, pool or side table may have any name (the
 * manual in opool_typed.h: "Any other names work"): here each is called
 * after a parameter or local of the functions OPOOL_TYPED, OPOOL_TYPED_FIXED
 * and OPOOL_TYPED_SIDE define (obj, d, raw, s, ...), and every function is
 * called. Compiled (not run) as C11 and C++11 with
 * warnings as errors; a body that named T, V or the pool type after such a
 * parameter or local would not compile (a typedef shadowed by a variable).
 */
#include "opool_typed.h"

/* X(T) for each name of a parameter or local (index is not here: glibc's
 * <string.h> declares a function of that name in C++) */
/* clang-format off */
#define NAMES_EACH(X)                                                                              \
    X(out) X(desc) X(capacity) X(flags) X(buf) X(size) X(p) X(h) X(obj) X(i) X(k) X(keep)         \
    X(user) X(write) X(ctx) X(read) X(path)
/* clang-format on */

/* a pool of T, fixed and not, and a side table of T as values */
#define NAMES_POOLS(T)                                                                             \
    OPOOL_TYPED(T##_pool, T);                                                                      \
    OPOOL_TYPED_FIXED(T##_fixed, T, OPOOL_NO_LIVE_LIST);                                           \
    OPOOL_TYPED_SIDE(T##_side, T##_pool, T);

/* object types named as the functions' parameters and locals */
#define NAMES_TYPE(T)                                                                              \
    typedef struct T {                                                                             \
        int x;                                                                                     \
    } T;
NAMES_EACH(NAMES_TYPE)
NAMES_EACH(NAMES_POOLS)

/* pool and side table types named as the functions' locals (one file can
 * hold only one type of each name: -DNAMES_SIDES compiles the side tables') */
#ifndef NAMES_SIDES
OPOOL_TYPED(d, int);
OPOOL_TYPED(raw, int);
OPOOL_TYPED_FIXED(s, int, 0);
OPOOL_TYPED_SIDE(d_side, d, long);
OPOOL_TYPED_SIDE(s_side, s, long); /* s: the side functions' own parameter */
#else
OPOOL_TYPED(d, int);
OPOOL_TYPED_SIDE(raw, d, long);
OPOOL_TYPED_SIDE(s, d, long);
#endif

static size_t names_write(void *c, const void *data, size_t n) {
    (void)c;
    (void)data;
    return n;
}

static size_t names_read(void *c, void *data, size_t n) {
    (void)c;
    (void)data;
    (void)n;
    return 0;
}

/* Every function of pool type P of objects T. */
#define NAMES_USE(P, T)                                                                            \
    {                                                                                              \
        P *q = NULL;                                                                               \
        opool_desc dd = OPOOL__DESC_ZERO;                                                          \
        opool_stats st;                                                                            \
        P##_handle hh = P##_handle_null();                                                         \
        opool_status r;                                                                            \
        dd.capacity = 4;                                                                           \
        if (P##_create(&q, &dd) != OPOOL_OK) return 1;                                             \
        T *o = P##_alloc(q, &hh);                                                                  \
        (void)P##_alloc_at(q, hh);                                                                 \
        (void)P##_free_object(q, o);                                                               \
        (void)P##_free(q, hh);                                                                     \
        (void)P##_get(q, hh);                                                                      \
        (void)P##_valid(q, hh);                                                                    \
        (void)P##_handle_of(q, o);                                                                 \
        (void)P##_at(q, 0);                                                                        \
        (void)P##_count(q);                                                                        \
        (void)P##_capacity(q);                                                                     \
        (void)P##_live_handle(q, 0);                                                               \
        (void)P##_live_object(q, 0);                                                               \
        (void)P##_high_water(q);                                                                   \
        (void)P##_handle_at(q, 0);                                                                 \
        (void)P##_retain(q, NULL, NULL);                                                           \
        P##_sort(q);                                                                               \
        (void)P##_shrink(q);                                                                       \
        P##_get_stats(q, &st);                                                                     \
        P##_stats(q, &st);                                                                         \
        (void)P##_draw_svg(q, names_write, NULL);                                                  \
        (void)P##_save(q, names_write, NULL);                                                      \
        (void)P##_raw(q);                                                                          \
        (void)(P##_handle_is_null(hh) + P##_handle_eq(hh, hh) + P##_handle_index(hh) +             \
               P##_handle_generation(hh));                                                         \
        (void)P##_handle_from(P##_handle_raw(hh));                                                 \
        P##_clear(q);                                                                              \
        P##_destroy(q);                                                                            \
        r = P##_create_n(&q, 4);                                                                   \
        P##_destroy(q);                                                                            \
        r = P##_create_flags(&q, 4, 0);                                                            \
        P##_destroy(q);                                                                            \
        (void)P##_required_bytes(&dd);                                                             \
        r = P##_create_in(&q, NULL, 0, &dd);                                                       \
        r = P##_load(&q, &dd, names_read, NULL);                                                   \
        r = P##_load_file(&q, &dd, "");                                                            \
        (void)r;                                                                                   \
        (void)P##_save_file(q, "");                                                                \
    }

/* Every function of side table S over pool type P. */
#define NAMES_SIDE(S, P)                                                                           \
    {                                                                                              \
        P *q = NULL;                                                                               \
        S *v = NULL;                                                                               \
        P##_handle hh = P##_handle_null();                                                         \
        if (P##_create_n(&q, 4) != OPOOL_OK) return 1;                                             \
        if (S##_create(&v, 4) != OPOOL_OK) return 1;                                               \
        S##_type *x = S##_put(v, hh);                                                              \
        (void)x;                                                                                   \
        (void)S##_get(v, hh);                                                                      \
        (void)S##_remove(v, hh);                                                                   \
        (void)S##_count(v);                                                                        \
        (void)S##_handle_at(v, 0);                                                                 \
        (void)S##_value_at(v, 0);                                                                  \
        S##_follow(v, q);                                                                          \
        (void)S##_prune(v, q);                                                                     \
        (void)S##_save(v, names_write, NULL);                                                      \
        (void)S##_raw(v);                                                                          \
        S##_clear(v);                                                                              \
        S##_destroy(v);                                                                            \
        opool_status r = S##_load(&v, names_read, NULL);                                           \
        (void)r;                                                                                   \
        P##_destroy(q);                                                                            \
    }

int main(void) {
#define NAMES_USE_EACH(T)                                                                          \
    NAMES_USE(T##_pool, T) NAMES_USE(T##_fixed, T) NAMES_SIDE(T##_side, T##_pool)
    NAMES_EACH(NAMES_USE_EACH)
#ifndef NAMES_SIDES
    NAMES_USE(d, int)
    NAMES_USE(raw, int)
    NAMES_USE(s, int)
    NAMES_SIDE(d_side, d)
    NAMES_SIDE(s_side, s)
#else
    NAMES_SIDE(raw, d)
    NAMES_SIDE(s, d)
#endif
    return 0;
}
