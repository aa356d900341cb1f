/*
 * test_side.c -- side tables (include/opool_side.h): one behaviour per test,
 * every failure result, then a randomised differential run against a plain
 * reference model (an array of (handle, value) pairs in dense order) driven
 * by the handles, live and stale, of a real pool whose slots are reused.
 */
#include "opool_side.h"
#include "helpers.h"
#include "stream.h"
#include "test.h"

#include <stdalign.h>
#include <stdio.h>
#include <string.h>

struct val { /* 24 bytes, alignment 8 */
    uint64_t a, b;
    uint32_t c;
};

/* struct val's size and alignment: 24 and 8 on LP64, 20 and 4 on i386 */
#define VS sizeof(struct val)
#define VA alignof(struct val)

static opool_side *table(uint32_t capacity) {
    opool_side *s = NULL;
    if (opool_side_create(&s, sizeof(struct val), alignof(struct val), capacity) != OPOOL_OK)
        return NULL;
    return s;
}

static bool all_zero(const void *p, size_t n) {
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        if (b[i] != 0) return false;
    return true;
}

static uintptr_t addr(const void *p) { return (uintptr_t)p; }

/* ---- create ------------------------------------------------------------- */

TEST(create_rejects_bad_arguments) {
    opool_side *s = table(4), *keep = s;
    REQUIRE(s != NULL);
    CHECK_EQ_U64(opool_side_create(NULL, 8, 8, 4), OPOOL_EINVAL);
    CHECK_EQ_U64(opool_side_create(&s, 8, 0, 4), OPOOL_EINVAL); /* 0 is not a power of two */
    CHECK_EQ_PTR(s, NULL);                                      /* NULL after any failure */
    CHECK_EQ_U64(opool_side_create(&s, 8, 24, 4), OPOOL_EINVAL);
    CHECK_EQ_U64(opool_side_create(&s, 8, OPOOL_SIDE_MAX_ALIGN * 2, 4), OPOOL_EINVAL);
    CHECK_EQ_U64(opool_side_create(&s, 8, 8, OPOOL_MAX_CAPACITY + 1u), OPOOL_EINVAL);
    CHECK_EQ_U64(opool_side_create(&s, SIZE_MAX, 8, 4), OPOOL_EINVAL);     /* stride overflows */
    CHECK_EQ_U64(opool_side_create(&s, SIZE_MAX / 2, 8, 4), OPOOL_EINVAL); /* capacity * stride */
    CHECK_EQ_PTR(s, NULL);
    opool_side_destroy(keep);
}

TEST(create_accepts_zero_capacity_and_grows_from_nothing) {
    opool_side *s = table(0);
    REQUIRE(s != NULL);
    CHECK_EQ_U64(opool_side_count(s), 0);
    struct val *v = opool_side_put(s, handle(1, 5000));
    REQUIRE(v != NULL);
    CHECK_EQ_PTR(opool_side_get(s, handle(1, 5000)), v);
    CHECK_EQ_U64(opool_side_count(s), 1);
    opool_side_destroy(s);
}

TEST(destroy_is_null_safe) { opool_side_destroy(NULL); }

/* ---- put and get -------------------------------------------------------- */

TEST(put_returns_zeroed_storage_aligned_to_value_align) {
    opool_side *s = NULL;
    REQUIRE(opool_side_create(&s, 20, 64, 2) == OPOOL_OK);
    for (uint32_t i = 0; i < 40; i++) { /* past the capacity: the values move once or twice */
        unsigned char *v = opool_side_put(s, handle(2 * i + 1, i));
        REQUIRE(v != NULL);
        CHECK_EQ_U64(addr(v) % 64, 0);
        CHECK(all_zero(v, 20));
        memset(v, 0xA5, 20);
    }
    for (uint32_t i = 0; i < 40; i++) {
        unsigned char *v = opool_side_value_at(s, i);
        CHECK_EQ_U64(addr(v) % 64, 0);
        CHECK_EQ_U64(v[0], 0xA5);
        CHECK_EQ_U64(v[19], 0xA5);
    }
    opool_side_destroy(s);
}

TEST(put_of_the_same_handle_returns_the_existing_value) {
    opool_side *s = table(4);
    REQUIRE(s != NULL);
    struct val *v = opool_side_put(s, handle(3, 1));
    REQUIRE(v != NULL);
    v->a = 42;
    CHECK_EQ_PTR(opool_side_put(s, handle(3, 1)), v);
    CHECK_EQ_U64(v->a, 42); /* not zero-filled again */
    CHECK_EQ_U64(opool_side_count(s), 1);
    opool_side_destroy(s);
}

TEST(get_answers_only_the_exact_handle) {
    opool_side *s = table(4);
    REQUIRE(s != NULL);
    struct val *v = opool_side_put(s, handle(7, 2));
    REQUIRE(v != NULL);
    CHECK_EQ_PTR(opool_side_get(s, handle(7, 2)), v);
    CHECK_EQ_PTR(opool_side_get(s, handle(5, 2)), NULL);        /* an older life of the slot */
    CHECK_EQ_PTR(opool_side_get(s, handle(9, 2)), NULL);        /* a newer one */
    CHECK_EQ_PTR(opool_side_get(s, handle(8, 2)), NULL);        /* even: never live */
    CHECK_EQ_PTR(opool_side_get(s, handle(7, 3)), NULL);        /* another index */
    CHECK_EQ_PTR(opool_side_get(s, handle(7, 1u << 30)), NULL); /* beyond every page */
    CHECK_EQ_PTR(opool_side_get(s, OPOOL_NULL), NULL);
    opool_side_destroy(s);
}

TEST(the_null_handle_gets_no_entry_even_at_index_0) {
    opool_side *s = table(4);
    REQUIRE(s != NULL);
    REQUIRE(opool_side_put(s, handle(1, 0)) != NULL);
    CHECK_EQ_PTR(opool_side_get(s, OPOOL_NULL), NULL);
    CHECK_EQ_PTR(opool_side_get(s, handle(0, 0)), NULL);
    opool_side_destroy(s);
}

TEST(put_rejects_the_null_handle_and_even_generations) {
    opool_side *s = table(4);
    REQUIRE(s != NULL);
    CHECK_EQ_PTR(opool_side_put(s, OPOOL_NULL), NULL);
    CHECK_EQ_PTR(opool_side_put(s, handle(2, 1)), NULL);
    CHECK_EQ_PTR(opool_side_put(s, handle(0xFFFFFFFEu, 1)), NULL);
    CHECK_EQ_PTR(opool_side_put(NULL, handle(1, 1)), NULL);
    CHECK_EQ_U64(opool_side_count(s), 0);
    opool_side_destroy(s);
}

TEST(put_of_another_generation_replaces_the_entry_in_place) {
    opool_side *s = table(4);
    REQUIRE(s != NULL);
    REQUIRE(opool_side_put(s, handle(1, 0)) != NULL);
    struct val *old = opool_side_put(s, handle(1, 1));
    REQUIRE(old != NULL);
    REQUIRE(opool_side_put(s, handle(1, 2)) != NULL);
    old->a = 99;
    struct val *v = opool_side_put(s, handle(3, 1)); /* the slot's next life */
    CHECK_EQ_PTR(v, old);                            /* same position, same storage */
    CHECK_EQ_U64(v->a, 0);                           /* zero-filled */
    CHECK_EQ_U64(opool_side_count(s), 3);
    CHECK_EQ_U64(opool_side_handle_at(s, 1).bits, handle(3, 1).bits);
    CHECK_EQ_PTR(opool_side_get(s, handle(1, 1)), NULL);
    CHECK_EQ_U64(opool_side_remove(s, handle(1, 1)), OPOOL_ESTALE);
    /* an older generation replaces a newer one too: the table cannot tell ages apart */
    CHECK_EQ_PTR(opool_side_put(s, handle(1, 1)), v);
    CHECK_EQ_PTR(opool_side_get(s, handle(3, 1)), NULL);
    opool_side_destroy(s);
}

TEST(put_grows_past_the_capacity_and_keeps_every_value) {
    opool_side *s = table(4);
    REQUIRE(s != NULL);
    for (uint32_t i = 0; i < 5000; i++) {
        struct val *v = opool_side_put(s, handle(1, i * 3)); /* indices across many pages */
        REQUIRE(v != NULL);
        v->a = i;
    }
    CHECK_EQ_U64(opool_side_count(s), 5000);
    for (uint32_t i = 0; i < 5000; i++) {
        struct val *v = opool_side_get(s, handle(1, i * 3));
        REQUIRE(v != NULL);
        CHECK_EQ_U64(v->a, i);
        CHECK_EQ_PTR(opool_side_get(s, handle(1, i * 3 + 1)), NULL);
    }
    opool_side_destroy(s);
}

TEST(the_highest_index_is_one_page_not_all_below_it) {
    opool_side *s = table(0);
    REQUIRE(s != NULL);
    opool_handle far = handle(1, 0xFFFFFFFFu);
    struct val *v = opool_side_put(s, far);
    REQUIRE(v != NULL);
    v->b = 7;
    CHECK_EQ_PTR(opool_side_get(s, far), v);
    CHECK_EQ_PTR(opool_side_get(s, handle(1, 0xFFFFFFFEu)), NULL);
    CHECK_EQ_PTR(opool_side_get(s, handle(1, 0)), NULL);
    CHECK_EQ_U64(opool_side_remove(s, far), OPOOL_OK);
    opool_side_destroy(s);
}

TEST(put_fails_cleanly_when_growth_cannot_be_allocated) {
    opool_side *s = NULL;
    /* a value so large that the first growth's size overflows */
    REQUIRE(opool_side_create(&s, SIZE_MAX / 8, 1, 0) == OPOOL_OK);
    CHECK_EQ_PTR(opool_side_put(s, handle(1, 0)), NULL);
    CHECK_EQ_U64(opool_side_count(s), 0);
    CHECK_EQ_PTR(opool_side_get(s, handle(1, 0)), NULL);
    CHECK_EQ_U64(opool_side_remove(s, handle(1, 0)), OPOOL_ESTALE);
    opool_side_destroy(s);
#ifndef TEST_ASAN /* ASan aborts on an impossible malloc instead of returning NULL */
    s = NULL;
    /* values so large that 16 of them fit size_t but no malloc gives them */
    REQUIRE(opool_side_create(&s, SIZE_MAX / 17, 1, 0) == OPOOL_OK);
    CHECK_EQ_PTR(opool_side_put(s, handle(1, 0)), NULL); /* malloc said no */
    CHECK_EQ_U64(opool_side_count(s), 0);
    opool_side_destroy(s);
    CHECK_EQ_U64(opool_side_create(&s, SIZE_MAX / 17, 1, 16), OPOOL_ENOMEM);
    CHECK_EQ_PTR(s, NULL);
#endif
}

TEST(value_size_0_makes_a_set_of_handles) {
    opool_side *s = NULL;
    REQUIRE(opool_side_create(&s, 0, 1, 8) == OPOOL_OK);
    void *t1 = opool_side_put(s, handle(1, 1));
    void *t2 = opool_side_put(s, handle(1, 2));
    CHECK(t1 != NULL && t2 != NULL);
    CHECK(opool_side_get(s, handle(1, 1)) != NULL);
    CHECK_EQ_PTR(opool_side_get(s, handle(3, 1)), NULL);
    CHECK(opool_side_value_at(s, 0) != NULL);
    CHECK_EQ_U64(opool_side_remove(s, handle(1, 1)), OPOOL_OK);
    CHECK_EQ_PTR(opool_side_get(s, handle(1, 1)), NULL);
    CHECK_EQ_U64(opool_side_count(s), 1);
    for (uint32_t i = 0; i < 100; i++) CHECK(opool_side_put(s, handle(5, i)) != NULL);
    CHECK_EQ_U64(opool_side_count(s), 100); /* index 2 re-keyed, 99 new */
    opool_side_destroy(s);
}

/* ---- remove ------------------------------------------------------------- */

TEST(remove_moves_the_last_entry_into_the_hole) {
    opool_side *s = table(4);
    REQUIRE(s != NULL);
    for (uint32_t i = 0; i < 4; i++) {
        struct val *v = opool_side_put(s, handle(1, i));
        REQUIRE(v != NULL);
        v->a = i;
    }
    CHECK_EQ_U64(opool_side_remove(s, handle(1, 1)), OPOOL_OK);
    CHECK_EQ_U64(opool_side_count(s), 3);
    CHECK_EQ_U64(opool_side_handle_at(s, 1).bits, handle(1, 3).bits);
    CHECK_EQ_U64(((struct val *)opool_side_value_at(s, 1))->a, 3);
    struct val *moved = opool_side_get(s, handle(1, 3));
    CHECK_EQ_PTR(moved, opool_side_value_at(s, 1));
    CHECK_EQ_U64(moved->a, 3);
    CHECK_EQ_U64(opool_side_remove(s, handle(1, 3)), OPOOL_OK); /* the moved one, found */
    CHECK_EQ_U64(opool_side_remove(s, handle(1, 2)), OPOOL_OK); /* the last one */
    CHECK_EQ_U64(opool_side_count(s), 1);
    CHECK_EQ_U64(opool_side_handle_at(s, 0).bits, handle(1, 0).bits);
    opool_side_destroy(s);
}

TEST(remove_rejects_what_has_no_entry) {
    opool_side *s = table(4);
    REQUIRE(s != NULL);
    REQUIRE(opool_side_put(s, handle(3, 1)) != NULL);
    CHECK_EQ_U64(opool_side_remove(NULL, handle(3, 1)), OPOOL_EINVAL);
    CHECK_EQ_U64(opool_side_remove(s, OPOOL_NULL), OPOOL_EINVAL);
    CHECK_EQ_U64(opool_side_remove(s, handle(4, 1)), OPOOL_EINVAL); /* even: never an entry */
    CHECK_EQ_U64(opool_side_remove(s, handle(1, 1)), OPOOL_ESTALE); /* another generation */
    CHECK_EQ_U64(opool_side_remove(s, handle(3, 2)), OPOOL_ESTALE); /* never put */
    CHECK_EQ_U64(opool_side_remove(s, handle(3, 1u << 31)), OPOOL_ESTALE); /* no page */
    CHECK_EQ_U64(opool_side_count(s), 1);
    CHECK_EQ_U64(opool_side_remove(s, handle(3, 1)), OPOOL_OK);
    CHECK_EQ_U64(opool_side_remove(s, handle(3, 1)), OPOOL_ESTALE); /* twice */
    CHECK_EQ_U64(opool_side_count(s), 0);
    opool_side_destroy(s);
}

TEST(clear_removes_every_entry_and_keeps_working) {
    opool_side *s = table(4);
    REQUIRE(s != NULL);
    for (uint32_t i = 0; i < 10; i++) REQUIRE(opool_side_put(s, handle(1, i)) != NULL);
    opool_side_clear(s);
    CHECK_EQ_U64(opool_side_count(s), 0);
    for (uint32_t i = 0; i < 10; i++) CHECK_EQ_PTR(opool_side_get(s, handle(1, i)), NULL);
    struct val *v = opool_side_put(s, handle(1, 4));
    REQUIRE(v != NULL);
    CHECK(all_zero(v, sizeof *v));
    CHECK_EQ_U64(opool_side_count(s), 1);
    opool_side_clear(NULL);
    opool_side_destroy(s);
}

/* ---- iteration and a NULL table ---------------------------------------- */

TEST(a_null_table_is_harmless) {
    CHECK_EQ_PTR(opool_side_get(NULL, handle(1, 1)), NULL);
    CHECK_EQ_U64(opool_side_count(NULL), 0);
    CHECK(opool_handle_is_null(opool_side_handle_at(NULL, 0)));
    CHECK_EQ_PTR(opool_side_value_at(NULL, 0), NULL);
}

TEST(entries_past_the_count_are_null) {
    opool_side *s = table(4);
    REQUIRE(s != NULL);
    REQUIRE(opool_side_put(s, handle(1, 1)) != NULL);
    CHECK(opool_handle_is_null(opool_side_handle_at(s, 1)));
    CHECK_EQ_PTR(opool_side_value_at(s, 1), NULL);
    CHECK_EQ_PTR(opool_side_value_at(s, UINT32_MAX), NULL);
    opool_side_destroy(s);
}

TEST(the_backward_loop_visits_each_entry_once_and_may_remove_it_and_put) {
    opool_side *s = table(4);
    REQUIRE(s != NULL);
    for (uint32_t i = 0; i < 32; i++) {
        struct val *v = opool_side_put(s, handle(1, i));
        REQUIRE(v != NULL);
        v->a = i;
    }
    uint64_t seen = 0;
    for (uint32_t i = opool_side_count(s); i-- > 0;) {
        struct val *v = opool_side_value_at(s, i);
        REQUIRE(v != NULL);
        CHECK(v->a < 32 && (seen >> v->a & 1) == 0);
        seen |= (uint64_t)1 << v->a;
        opool_handle h = opool_side_handle_at(s, i);
        uint32_t a = (uint32_t)v->a; /* v moves if the entry is removed */
        CHECK_EQ_U64(opool_handle_index(h), a);
        if (a % 3 == 0) CHECK_EQ_U64(opool_side_remove(s, h), OPOOL_OK);
        if (a % 5 == 0) { /* a new entry: appended, not visited */
            struct val *n = opool_side_put(s, handle(1, 100 + a));
            REQUIRE(n != NULL);
            n->a = 1000;
        }
    }
    CHECK_EQ_U64(seen, 0xFFFFFFFFu);
    CHECK_EQ_U64(opool_side_count(s), 32 - 11 + 7);
    opool_side_destroy(s);
}

/* With a real pool: the handle of a slot's earlier life never reaches the
 * value put for its current one. */
TEST(stale_handles_of_a_reused_slot_are_rejected) {
    opool_desc d = quiet_desc(8, 4, 0x100);
    opool *p = NULL;
    REQUIRE(opool_create(&p, &d) == OPOOL_OK);
    opool_side *s = table(4);
    REQUIRE(s != NULL);
    opool_handle old, now;
    REQUIRE(opool_alloc(p, &old) != NULL);
    struct val *v = opool_side_put(s, old);
    REQUIRE(v != NULL);
    v->a = 1;
    REQUIRE(opool_free(p, old) == OPOOL_OK);
    REQUIRE(opool_alloc(p, &now) != NULL);
    REQUIRE(opool_handle_index(now) == opool_handle_index(old)); /* LIFO: the same slot */
    CHECK_EQ_PTR(opool_side_get(s, now), NULL); /* no value for the new object yet */
    CHECK(opool_side_get(s, old) != NULL);      /* the old entry stays until replaced */
    v = opool_side_put(s, now);
    REQUIRE(v != NULL);
    CHECK_EQ_U64(v->a, 0);
    CHECK_EQ_PTR(opool_side_get(s, old), NULL);
    CHECK_EQ_U64(opool_side_count(s), 1);
    opool_side_destroy(s);
    opool_destroy(p);
}

/* ---- following a pool ----------------------------------------------------- */

TEST(a_table_following_its_pool_has_no_value_for_a_freed_object) {
    opool_desc d = quiet_desc(8, 8, 0x100);
    opool *p = NULL;
    REQUIRE(opool_create(&p, &d) == OPOOL_OK);
    opool_side *s = table(8);
    REQUIRE(s != NULL);
    opool_side_follow(s, p);
    opool_handle a, b, c;
    REQUIRE(opool_alloc(p, &a) && opool_alloc(p, &b) && opool_alloc(p, &c));
    REQUIRE(opool_side_put(s, a) && opool_side_put(s, b) && opool_side_put(s, c));
    REQUIRE(opool_free(p, b) == OPOOL_OK);
    CHECK_EQ_PTR(opool_side_get(s, b), NULL); /* dead in the pool: no value */
    CHECK_EQ_PTR(opool_side_put(s, b), NULL); /* nor a new one */
    CHECK(opool_side_get(s, a) != NULL);
    CHECK_EQ_U64(opool_side_count(s), 3); /* the entry stays until pruned */
    CHECK_EQ_U64(opool_side_prune(s, NULL), 1);
    CHECK_EQ_U64(opool_side_count(s), 2);
    CHECK_EQ_U64(opool_side_remove(s, b), OPOOL_ESTALE);
    CHECK_EQ_U64(opool_side_prune(s, NULL), 0);
    /* a pool given to prune; unfollowed, a dead handle's value shows again */
    REQUIRE(opool_free(p, a) == OPOOL_OK);
    opool_side_follow(s, NULL);
    CHECK(opool_side_get(s, a) != NULL);
    CHECK_EQ_U64(opool_side_prune(s, NULL), 0); /* no pool to ask */
    CHECK_EQ_U64(opool_side_prune(s, p), 1);
    CHECK_EQ_U64(opool_side_count(s), 1);
    CHECK(opool_side_handle_at(s, 0).bits == c.bits);
    CHECK_EQ_U64(opool_side_prune(NULL, p), 0);
    opool_side_follow(NULL, p);
    opool_side_destroy(s);
    opool_destroy(p);
}

/* ---- save and load -------------------------------------------------------- */

static stream saved(const opool_side *t) {
    stream st = stream_new();
    CHECK_EQ_U64(opool_side_save(t, stream_write, &st), OPOOL_OK);
    return st;
}

static opool_status load_from(opool_side **out, size_t size, size_t align, const unsigned char *b,
                              size_t n) {
    stream st = stream_of(b, n);
    return opool_side_load(out, size, align, stream_read, &st);
}

/* A table of 40 entries, some removed and re-keyed, values tagged. */
static opool_side *sample(void) {
    opool_side *s = table(0);
    if (s == NULL) return NULL;
    for (uint32_t i = 0; i < 40; i++) {
        struct val *v = opool_side_put(s, handle(0x101 + 2 * (i % 3), i * 7));
        if (v) v->a = i, v->b = ~(uint64_t)i, v->c = i * 3;
    }
    for (uint32_t i = 0; i < 40; i += 5) opool_side_remove(s, handle(0x101 + 2 * (i % 3), i * 7));
    opool_side_put(s, handle(0x301, 14)); /* re-keyed in place */
    return s;
}

TEST(save_and_load_give_the_same_entries_in_the_same_order) {
    opool_side *s = sample();
    REQUIRE(s != NULL);
    stream st = saved(s);
    CHECK_EQ_U64(st.size, 32 + opool_side_count(s) * (8 + sizeof(struct val)) + 8);
    opool_side *t = (opool_side *)&st;
    CHECK_EQ_U64(load_from(&t, sizeof(struct val), alignof(struct val), st.data, st.size),
                 OPOOL_OK);
    REQUIRE(t != NULL);
    CHECK_EQ_U64(opool_side_count(t), opool_side_count(s));
    for (uint32_t k = 0; k < opool_side_count(s); k++) {
        opool_handle h = opool_side_handle_at(s, k);
        CHECK_EQ_U64(opool_side_handle_at(t, k).bits, h.bits);
        CHECK(memcmp(opool_side_get(t, h), opool_side_get(s, h), sizeof(struct val)) == 0);
        CHECK(addr(opool_side_get(t, h)) % alignof(struct val) == 0);
    }
    /* and it keeps working, then saves to the same bytes */
    stream again = saved(t);
    CHECK(again.size == st.size && memcmp(again.data, st.data, st.size) == 0);
    CHECK(opool_side_put(t, handle(0x111, 900)) != NULL);
    stream_free(&again);
    opool_side_destroy(t);
    /* a set of handles */
    opool_side *set = NULL;
    REQUIRE(opool_side_create(&set, 0, 1, 0) == OPOOL_OK);
    for (uint32_t i = 0; i < 10; i++) CHECK(opool_side_put(set, handle(0x11, i * 3)) != NULL);
    stream ss = saved(set);
    CHECK_EQ_U64(ss.size, 32 + 10 * 8 + 8);
    CHECK_EQ_U64(load_from(&t, 0, 1, ss.data, ss.size), OPOOL_OK);
    CHECK_EQ_U64(opool_side_count(t), 10);
    CHECK(opool_side_get(t, handle(0x11, 27)) != NULL);
    opool_side_destroy(t);
    opool_side_destroy(set);
    stream_free(&ss);
    stream_free(&st);
    opool_side_destroy(s);
}

TEST(side_save_and_load_reject_null_arguments_and_a_short_write) {
    opool_side *s = sample();
    REQUIRE(s != NULL);
    stream st = stream_new();
    CHECK_EQ_U64(opool_side_save(NULL, stream_write, &st), OPOOL_EINVAL);
    CHECK_EQ_U64(opool_side_save(s, NULL, &st), OPOOL_EINVAL);
    CHECK_EQ_U64(st.size, 0);
    st.fail_after = 100;
    CHECK_EQ_U64(opool_side_save(s, stream_write, &st), OPOOL_EIO);
    stream_free(&st);
    st = saved(s);
    opool_side *t = s;
    CHECK_EQ_U64(opool_side_load(NULL, VS, VA, stream_read, &st), OPOOL_EINVAL);
    CHECK_EQ_U64(opool_side_load(&t, VS, VA, NULL, &st), OPOOL_EINVAL);
    CHECK_EQ_PTR(t, NULL);
    t = s;
    CHECK_EQ_U64(load_from(&t, VS, 3, st.data, st.size), OPOOL_EINVAL); /* not a power of 2 */
    CHECK_EQ_PTR(t, NULL);
    stream_free(&st);
    opool_side_destroy(s);
}

TEST(a_side_image_loaded_with_another_layout_is_einval_naming_it) {
    opool_side *s = sample();
    REQUIRE(s != NULL);
    stream st = saved(s);
    opool_side *t = s;
    CHECK_EQ_U64(load_from(&t, VS + VA, VA, st.data, st.size), OPOOL_EINVAL);
    CHECK_EQ_PTR(t, NULL);
    const opool_load_error *r = opool_last_load_error();
    CHECK_EQ_U64(r->status, OPOOL_EINVAL);
    CHECK(strcmp(r->check, "value_size (rounded up to value_align)") == 0);
    CHECK_EQ_U64(r->expected, VS + VA);
    CHECK_EQ_U64(r->found, VS);
    char want[160];
    snprintf(want, sizeof want,
             "opool: load of a side table: value_size (rounded up to value_align): the image has "
             "%zu, the call %zu",
             (size_t)VS, (size_t)(VS + VA));
    CHECK(strcmp(r->message, want) == 0);
    CHECK_EQ_U64(load_from(&t, VS, 2 * VA, st.data, st.size), OPOOL_EINVAL);  /* rounded up */
    CHECK_EQ_U64(load_from(&t, VS - VA + 1, VA, st.data, st.size), OPOOL_OK); /* the same stride */
    opool_side_destroy(t);
    CHECK_EQ_U64(load_from(&t, VS, VA / 2, st.data, st.size), OPOOL_EINVAL);
    CHECK(strcmp(opool_last_load_error()->check, "value_align") == 0);
    stream_free(&st);
    opool_side_destroy(s);
}

/* The checksum of b[0, n - 8) into its last 8 bytes (FNV-1a, docs/FORMAT.md). */
static void reseal(unsigned char *b, size_t n) {
    uint64_t h = 0xcbf29ce484222325u;
    for (size_t i = 0; i + 8 < n; i++) h = (h ^ b[i]) * 0x100000001b3u;
    for (int k = 0; k < 8; k++) b[n - 8 + k] = (unsigned char)(h >> (8 * k));
}

TEST(every_truncation_and_flipped_bit_of_a_side_image_is_corrupt) {
    opool_side *s = sample();
    REQUIRE(s != NULL);
    stream st = saved(s);
    for (size_t n = 0; n < st.size; n++) {
        opool_side *t = s;
        CHECK_EQ_U64(load_from(&t, VS, VA, st.data, n), OPOOL_ECORRUPT);
        CHECK_EQ_PTR(t, NULL);
        CHECK(strcmp(opool_last_load_error()->check, "truncated") == 0 ||
              (n < 8 && strcmp(opool_last_load_error()->check, "magic") == 0));
    }
    REQUIRE(st.size >= 32 + 2 * (8 + VS) + 8); /* a header, two entries, the checksum */
    unsigned char *b = (unsigned char *)malloc(st.size);
    REQUIRE(b != NULL);
    for (size_t bit = 0; bit < st.size * 8; bit++) {
        memcpy(b, st.data, st.size);
        b[bit / 8] ^= (unsigned char)(1u << bit % 8);
        opool_side *t = s;
        opool_status got = load_from(&t, VS, VA, b, st.size);
        if (got != OPOOL_ECORRUPT) fprintf(stderr, "  bit %zu: %d\n", bit, (int)got);
        CHECK_EQ_U64(got, OPOOL_ECORRUPT);
        CHECK_EQ_PTR(t, NULL);
    }
    /* entries no table holds, sealed: an even generation, one index twice */
    memcpy(b, st.data, st.size);
    b[32 + 4] &= 0xFE; /* entry 0's generation, low byte */
    reseal(b, st.size);
    opool_side *t = s;
    CHECK_EQ_U64(load_from(&t, VS, VA, b, st.size), OPOOL_ECORRUPT);
    CHECK(strcmp(opool_last_load_error()->check, "entries") == 0);
    CHECK_EQ_U64(opool_last_load_error()->found, 0);
    memcpy(b, st.data, st.size);
    memcpy(b + 32 + 8 + VS, b + 32, 4); /* entry 1 at entry 0's index */
    reseal(b, st.size);
    CHECK_EQ_U64(load_from(&t, VS, VA, b, st.size), OPOOL_ECORRUPT);
    CHECK_EQ_U64(opool_last_load_error()->found, 1);
    CHECK(strcmp(opool_last_load_error()->message,
                 "opool: load of a side table: entries: entry 1 has an even generation or the "
                 "index of an earlier one") == 0);
    /* a count the bytes cannot hold */
    memcpy(b, st.data, st.size);
    b[15] = 0xFF;
    CHECK_EQ_U64(load_from(&t, VS, VA, b, st.size), OPOOL_ECORRUPT);
    free(b);
    stream_free(&st);
    opool_side_destroy(s);
}

/* ---- the differential run ------------------------------------------------
 * The model: the entries in dense order, each a handle and its value's
 * bytes, and the rules of opool_side.h spelled out plainly (linear search,
 * no sparse array). Every operation is applied to both and the results
 * compared; the whole state every few operations. */

#define M_MAX 1400
#define M_VALUE 96 /* largest value size drawn */

typedef struct side_model {
    uint32_t n;
    opool_handle h[M_MAX];
    unsigned char v[M_MAX][M_VALUE];
} side_model;

static int m_find_index(const side_model *m, uint32_t index) {
    for (uint32_t k = 0; k < m->n; k++)
        if (opool_handle_index(m->h[k]) == index) return (int)k;
    return -1;
}

static int m_find(const side_model *m, opool_handle h) {
    int k = m_find_index(m, opool_handle_index(h));
    return k >= 0 && m->h[k].bits == h.bits ? k : -1;
}

/* The position put gives h, -1 for NULL; *fresh: the value was zero-filled. */
static int m_put(side_model *m, opool_handle h, bool *fresh) {
    *fresh = false;
    if (!(opool_handle_generation(h) & 1)) return -1;
    int k = m_find_index(m, opool_handle_index(h));
    if (k >= 0 && m->h[k].bits == h.bits) return k;
    if (k < 0) {
        if (m->n == M_MAX) return -1; /* never: the driver keeps fewer indices */
        k = (int)m->n++;
    }
    m->h[k] = h;
    memset(m->v[k], 0, M_VALUE);
    *fresh = true;
    return k;
}

static opool_status m_remove(side_model *m, opool_handle h) {
    if (!(opool_handle_generation(h) & 1)) return OPOOL_EINVAL;
    int k = m_find(m, h);
    if (k < 0) return OPOOL_ESTALE;
    uint32_t last = --m->n;
    m->h[k] = m->h[last];
    memcpy(m->v[k], m->v[last], M_VALUE);
    return OPOOL_OK;
}

static void fill(unsigned char *v, size_t size, uint64_t tag) {
    for (size_t i = 0; i < size; i++) v[i] = (unsigned char)(tag >> (i % 8 * 8)) ^ (unsigned char)i;
}

/* The table holds the model's entries; get finds each (when it follows a
 * pool: each whose handle is live there). */
static bool same_state(const opool_side *s, const side_model *m, size_t size, size_t align,
                       const opool *follow) {
    if (opool_side_count(s) != m->n) return false;
    for (uint32_t k = 0; k < m->n; k++) {
        const unsigned char *v = opool_side_value_at(s, k);
        bool found = follow == NULL || opool_valid(follow, m->h[k]);
        if (opool_side_handle_at(s, k).bits != m->h[k].bits || v == NULL ||
            (size && (addr(v) % align != 0 || memcmp(v, m->v[k], size) != 0)) ||
            opool_side_get(s, m->h[k]) != (found ? v : NULL))
            return false;
    }
    return opool_handle_is_null(opool_side_handle_at(s, m->n));
}

#define RING 256

static void differential(uint64_t seed, uint32_t ops) {
    static const size_t sizes[] = {0, 1, 12, 24, 40, 96};
    static const size_t aligns[] = {1, 4, 8, 64};
    rng r = {seed};
    size_t size = sizes[rng_below(&r, 6)], align = aligns[rng_below(&r, 4)];
    uint32_t pool_cap = 16 + rng_below(&r, 300); /* indices below M_MAX */
    opool_desc d = quiet_desc(8, pool_cap, (uint32_t)rng_next(&r));
    opool *p = NULL;
    opool_side *s = NULL;
    static side_model m;
    memset(&m, 0, sizeof m);
    if (opool_create(&p, &d) != OPOOL_OK ||
        opool_side_create(&s, size, align, rng_below(&r, 2) ? 0 : rng_below(&r, pool_cap)) !=
            OPOOL_OK) {
        CHECK(false);
        opool_destroy(p);
        return;
    }
    /* half the runs follow the pool: no value for a dead handle */
    bool follow = rng_chance(&r, 50);
    if (follow) opool_side_follow(s, p);
    opool_handle ring[RING]; /* handles the pool issued: live or stale */
    uint32_t nring = 0;
    int bad = 0;
    for (uint32_t op = 0; op < ops && bad < 3; op++) {
        uint32_t what = rng_below(&r, 100);
        opool_handle h = nring ? ring[rng_below(&r, nring)] : OPOOL_NULL;
        if (rng_chance(&r, 3)) h.bits = rng_next(&r) & 0xFFFFFFFF000003FFu; /* forged */
        if (rng_chance(&r, 2)) h.bits &= ~((uint64_t)1 << 32);              /* even */
        bool ok = true;
        if (what < 20) { /* the pool: alloc and free, so slots are reused */
            opool_handle a;
            if (opool_alloc(p, &a) != NULL) ring[nring < RING ? nring++ : rng_below(&r, RING)] = a;
            if (opool_count(p) > 0 && rng_chance(&r, 60))
                (void)opool_free(p, opool_live_handle(p, rng_below(&r, opool_count(p))));
        } else if (what < 50) {
            bool fresh;
            int k = follow && !opool_valid(p, h) ? -1 : m_put(&m, h, &fresh);
            unsigned char *v = opool_side_put(s, h);
            ok = (k < 0) == (v == NULL);
            if (ok && v != NULL) {
                ok = v == opool_side_value_at(s, (uint32_t)k) &&
                     (size == 0 || addr(v) % align == 0) && /* a set's token: any address */
                     (size == 0 || memcmp(v, m.v[k], size) == 0);
                uint64_t tag = rng_next(&r);
                if (size) fill(v, size, tag);
                fill(m.v[k], size, tag);
            }
            (void)fresh;
        } else if (what < 75) {
            int k = follow && !opool_valid(p, h) ? -1 : m_find(&m, h);
            const unsigned char *v = opool_side_get(s, h);
            ok = (k < 0) == (v == NULL) && (v == NULL || size == 0 || memcmp(v, m.v[k], size) == 0);
        } else if (what < 93) {
            ok = opool_side_remove(s, h) == m_remove(&m, h);
        } else if (what < 98) { /* the backward loop: remove some current entries, put new */
            uint32_t start = m.n;
            for (uint32_t i = opool_side_count(s); ok && i-- > 0;) {
                opool_handle at = opool_side_handle_at(s, i);
                ok = at.bits == m.h[i].bits;
                if (ok && rng_chance(&r, 40)) ok = opool_side_remove(s, at) == m_remove(&m, at);
                if (ok && nring && rng_chance(&r, 20)) {
                    opool_handle n = ring[rng_below(&r, nring)];
                    bool fresh = false;
                    int k = follow && !opool_valid(p, n) ? -1 : m_put(&m, n, &fresh);
                    ok = (k < 0) == (opool_side_put(s, n) == NULL);
                    if (ok && k >= 0 && fresh && size) {
                        unsigned char *v = opool_side_value_at(s, (uint32_t)k);
                        fill(v, size, op);
                        fill(m.v[k], size, op);
                    }
                }
            }
            (void)start;
        } else if (what < 99) {
            if (rng_chance(&r, 50)) {
                opool_side_clear(s);
                m.n = 0;
            } else { /* prune: the model's own backward loop */
                uint32_t gone = 0;
                for (uint32_t k = m.n; k-- > 0;)
                    if (!opool_valid(p, m.h[k])) gone += m_remove(&m, m.h[k]) == OPOOL_OK;
                ok = opool_side_prune(s, p) == gone;
            }
        } else { /* save and load: the same table, following nothing until told */
            stream st = stream_new();
            opool_side *t = NULL;
            ok = opool_side_save(s, stream_write, &st) == OPOOL_OK &&
                 opool_side_load(&t, size, align, stream_read, &st) == OPOOL_OK;
            stream_free(&st);
            if (ok) {
                opool_side_destroy(s);
                s = t;
                if (follow) opool_side_follow(s, p);
            }
        }
        if (ok && (op % 16 == 0 || what >= 93))
            ok = same_state(s, &m, size, align, follow ? p : NULL);
        if (!ok) {
            bad++;
            fprintf(stderr, "seed %llu op %u (kind %u): table and model disagree\n",
                    (unsigned long long)seed, op, what);
        }
        CHECK(ok);
    }
    CHECK(same_state(s, &m, size, align, follow ? p : NULL));
    opool_side_destroy(s);
    opool_destroy(p);
}

TEST(randomised_runs_agree_with_the_reference_model) {
    for (uint64_t seed = 1; seed <= 60; seed++) differential(seed * 0x9E3779B97F4A7C15u, 4000);
}

int main(void) {
    RUN(create_rejects_bad_arguments);
    RUN(create_accepts_zero_capacity_and_grows_from_nothing);
    RUN(destroy_is_null_safe);
    RUN(put_returns_zeroed_storage_aligned_to_value_align);
    RUN(put_of_the_same_handle_returns_the_existing_value);
    RUN(get_answers_only_the_exact_handle);
    RUN(the_null_handle_gets_no_entry_even_at_index_0);
    RUN(put_rejects_the_null_handle_and_even_generations);
    RUN(put_of_another_generation_replaces_the_entry_in_place);
    RUN(put_grows_past_the_capacity_and_keeps_every_value);
    RUN(the_highest_index_is_one_page_not_all_below_it);
    RUN(put_fails_cleanly_when_growth_cannot_be_allocated);
    RUN(value_size_0_makes_a_set_of_handles);
    RUN(remove_moves_the_last_entry_into_the_hole);
    RUN(remove_rejects_what_has_no_entry);
    RUN(clear_removes_every_entry_and_keeps_working);
    RUN(a_null_table_is_harmless);
    RUN(entries_past_the_count_are_null);
    RUN(the_backward_loop_visits_each_entry_once_and_may_remove_it_and_put);
    RUN(stale_handles_of_a_reused_slot_are_rejected);
    RUN(a_table_following_its_pool_has_no_value_for_a_freed_object);
    RUN(save_and_load_give_the_same_entries_in_the_same_order);
    RUN(side_save_and_load_reject_null_arguments_and_a_short_write);
    RUN(a_side_image_loaded_with_another_layout_is_einval_naming_it);
    RUN(every_truncation_and_flipped_bit_of_a_side_image_is_corrupt);
    RUN(randomised_runs_agree_with_the_reference_model);
    return test_summary();
}
