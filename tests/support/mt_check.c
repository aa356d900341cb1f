/*
 * tests/support/mt_check.c -- opool_mt's invariant checker and the test hook
 * that sets a generation: test code, compiled into the test-support library
 * (tests/tests.cmake), never into the shipped one. It reads the private
 * records of src/opool_mt_internal.h.
 */
#include "mt_check.h"

#include "opool_mt_internal.h"

_Static_assert(OPOOL_TEST_MT_STRIPES == OPOOL__MT_STRIPES, "mt_check.h's count of stripes");

/* The pool is quiescent (no call runs on it): nothing to synchronise with. */
#define opool__mt_peek(obj) opool__atomic_load_relaxed(obj)

#define OPOOL__MT_FAIL(...)                                                                        \
    do {                                                                                           \
        if (why && why_size) snprintf(why, why_size, __VA_ARGS__);                                 \
        goto fail;                                                                                 \
    } while (0)

bool opool__mt_check(const opool_mt *p, char *why, size_t why_size) {
    /* where each slot was found: 0 nowhere yet, 1 shared list, 2 a cache */
    unsigned char *seen = NULL;
    if (p == NULL) OPOOL__MT_FAIL("NULL pool");
    uint32_t cap = opool__mt_peek(&p->capacity);
    if (cap > p->max_capacity)
        OPOOL__MT_FAIL("capacity %u past the limit %u", cap, p->max_capacity);
    seen = (unsigned char *)calloc(cap, 1);
    if (seen == NULL) OPOOL__MT_FAIL("out of memory");
    uint32_t listed = 0;
    int64_t live = 0;
    for (unsigned k = 0; k < OPOOL__MT_STRIPES; k++) {
        uint64_t h = opool__mt_peek(&p->stripes[k].head);
        for (uint32_t t = (uint32_t)(h & p->idx_mask); t != 0;) {
            if (t > cap) OPOOL__MT_FAIL("stripe %u: list link %u out of range", k, t - 1);
            if (seen[t - 1])
                OPOOL__MT_FAIL("slot %u twice in the shared list (a cycle, or two stripes)", t - 1);
            if (opool__mt_peek(&p->gen[t - 1]) & 1)
                OPOOL__MT_FAIL("live slot %u in the shared list", t - 1);
            seen[t - 1] = 1;
            listed++;
            t = opool__mt_peek(&p->next[t - 1]);
        }
        live += opool__mt_peek(&p->stripes[k].owned) + opool__mt_peek(&p->stripes[k].live);
    }
    uint32_t parked = 0;
    for (const opool_mt_cache *c = opool__mt_peek(&p->caches); c != NULL; c = c->next_rec) {
        live += opool__mt_peek(&c->live);
        if (c->pool != p) OPOOL__MT_FAIL("a cache record of another pool");
        uint32_t active = opool__mt_peek(&c->active);
        uint64_t top = opool__mt_peek(&c->top), bottom = opool__mt_peek(&c->bottom);
        if (top > bottom)
            OPOOL__MT_FAIL("cache top %llu above bottom %llu", (unsigned long long)top,
                           (unsigned long long)bottom);
        if (!active && top != bottom) OPOOL__MT_FAIL("slots parked in a destroyed cache");
        if (active && bottom - top > c->size)
            OPOOL__MT_FAIL("cache holds %llu slots, size %u", (unsigned long long)(bottom - top),
                           c->size);
        for (uint64_t k = top; k < bottom; k++) {
            uint32_t i = opool__mt_peek(&opool__mt_ent(c)[k & c->mask]);
            if (i >= cap) OPOOL__MT_FAIL("parked index %u out of range", i);
            if (seen[i])
                OPOOL__MT_FAIL("slot %u both parked and %s", i,
                               seen[i] == 1 ? "listed" : "parked elsewhere");
            if (opool__mt_peek(&p->gen[i]) & 1) OPOOL__MT_FAIL("live slot %u parked", i);
            seen[i] = 2;
            parked++;
        }
    }
    uint32_t count = 0, retired = 0;
    for (uint32_t i = 0; i < cap; i++) {
        uint32_t g = opool__mt_peek(&p->gen[i]);
        if (g & 1) {
            count++;
        } else if (!seen[i]) {
            if (!((p->desc.flags & OPOOL_RETIRE_ON_WRAP) && g == p->gen0))
                OPOOL__MT_FAIL("free slot %u is lost (in no list, no cache)", i);
            retired++;
        }
    }
    if (retired != opool__mt_peek(&p->retired))
        OPOOL__MT_FAIL("%u slots retired, counted %u", retired, opool__mt_peek(&p->retired));
    if (live != (int64_t)count)
        OPOOL__MT_FAIL("count says %lld, %u slots live", (long long)live, count);
    if (count + listed + parked + retired != cap) OPOOL__MT_FAIL("slots do not add up");
    free(seen);
    return true;
fail:
    free(seen);
    return false;
}

bool opool__mt_set_gen(opool_mt *p, uint32_t index, uint32_t gen) {
    if (p == NULL || index >= opool__mt_peek(&p->capacity) || (gen & 1)) return false;
    for (unsigned k = 0; k < OPOOL__MT_STRIPES; k++) {
        uint64_t h = opool__mt_peek(&p->stripes[k].head);
        for (uint32_t t = (uint32_t)(h & p->idx_mask), n = 0; t != 0 && n <= p->max_capacity; n++) {
            if (t - 1 == index) {
                opool__atomic_store_relaxed(&p->gen[index], gen);
                return true;
            }
            t = opool__mt_peek(&p->next[t - 1]);
        }
    }
    return false;
}

void opool__mt_set_stripe(unsigned s) { opool__mt_stripe_of_thread = s % OPOOL__MT_STRIPES + 1; }

int opool__mt_stripe_held(void) {
    unsigned w = opool__mt_stripe_word();
    return w & OPOOL__MT_HELD ? (int)OPOOL__MT_STRIPE_OF(w) : -1;
}
