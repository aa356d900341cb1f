/*
 * loop_check.h -- the iteration promise of include/opool.h (ITERATION),
 * checked as a user reads it: through the public API only, independent of
 * the pool's roster and of the reference model.
 *
 * In the loop `for (i = opool_count(p); i-- > 0;)` over opool_live_handle(p, i),
 * where a free of the object at position k moves the live list's last entry
 * (position count - 1) to k, and an alloc appends at position count, except
 * right after a free whose slot it takes again (no opool_count between):
 * then it takes position k and
 * the moved entry goes back to the end (the free's move is undone):
 *   - every object live when the loop starts is visited exactly once, unless
 *     it is freed before the loop reaches it;
 *   - freeing the object at i (the current one) or at a position above i (a
 *     visited one) changes nothing for the rest of the loop;
 *   - an object allocated inside the loop is not visited, unless it lands
 *     below i: frees of other objects have brought count below i, or it
 *     took the place of an object not yet visited freed just before; then it
 *     is visited once;
 *   - freeing an object at a position below i (not yet visited) removes it
 *     from the loop; if the last entry stood at i or above (visited, or
 *     allocated inside the loop) it is visited once more at its new place,
 *     else it is one the loop has still to reach and nothing changes for it;
 *     an alloc that undoes the move takes that extra visit back, unless the
 *     loop has made it already;
 *   - an index at or beyond count (after such frees) is skipped.
 *
 * Use: loop_begin before the first iteration, loop_visit for each index the
 * loop reads, loop_before_free right before any free made inside the loop
 * (opool_free, opool_free_object, an eviction; with the index the loop is
 * at), loop_after_alloc right after any alloc inside the loop, loop_end after
 * the last iteration. Each returns false with a reason
 * in lc->why once a rule is broken. The object set is read through
 * opool_at and opool_handle_at, by slot index, so it does not depend on the
 * live list being right (nor on objects having distinct addresses: an
 * id-only pool's are all one token).
 */
#ifndef OPOOL_TEST_LOOP_CHECK_H
#define OPOOL_TEST_LOOP_CHECK_H

#include "opool.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct loop_entry {
    uint64_t handle;
    uint32_t visits_left; /* 1 for an object live at the start, +1 per move below the index */
    bool gone;            /* freed inside the loop */
} loop_entry;

typedef struct loop_check {
    loop_entry *e; /* every object live at the start, then every one a move made visible */
    uint32_t n, cap;
    uint32_t loops, visits, moves; /* totals over every loop, for the summary */
    /* the last change inside the loop, if a free: what an alloc right after undoes */
    bool freed_last, moved_owed;
    uint64_t moved;    /* the last entry it moved */
    uint32_t freed_at; /* its position */
    bool failed;
    char why[200];
} loop_check;

static inline bool loop__fail(loop_check *lc, const char *fmt, uint64_t a, uint64_t b) {
    if (!lc->failed) snprintf(lc->why, sizeof lc->why, fmt, a, b);
    lc->failed = true;
    return false;
}

/* The live count, read without opool_count, which ends the undo of the
 * pool's last free and so would change what the loop under test does. The
 * checker's reads of entries change nothing. */
static inline uint32_t loop__count(const opool *p) {
    opool_stats s;
    opool_get_stats(p, &s);
    return s.count;
}

static inline loop_entry *loop__find(loop_check *lc, uint64_t handle) {
    for (uint32_t k = 0; k < lc->n; k++)
        if (lc->e[k].handle == handle) return &lc->e[k];
    return NULL;
}

static inline loop_entry *loop__add(loop_check *lc, uint64_t handle, uint32_t visits) {
    if (lc->n == lc->cap) {
        uint32_t cap = lc->cap ? lc->cap * 2 : 64;
        loop_entry *e = (loop_entry *)realloc(lc->e, cap * sizeof *e);
        if (e == NULL) {
            fprintf(stderr, "loop_check: out of memory\n");
            exit(2);
        }
        lc->e = e;
        lc->cap = cap;
    }
    loop_entry *x = &lc->e[lc->n++];
    x->handle = handle;
    x->visits_left = visits;
    x->gone = false;
    return x;
}

/* The loop starts: every live object, found by slot index, is owed one visit. */
static inline bool loop_begin(loop_check *lc, const opool *p) {
    lc->n = 0;
    lc->failed = false;
    lc->freed_last = false;
    lc->why[0] = '\0';
    lc->loops++;
    opool_stats s;
    opool_get_stats(p, &s);
    for (uint32_t i = 0; i < s.max_capacity; i++) {
        opool_handle h = opool_handle_at(p, i);
        if (opool_at(p, i) != NULL) loop__add(lc, h.bits, 1);
        if ((opool_at(p, i) != NULL) != !opool_handle_is_null(h))
            return loop__fail(
                lc, "slot %" PRIu64 ": opool_at and opool_handle_at disagree (%" PRIu64 ")", i,
                h.bits);
    }
    if (lc->n != loop__count(p))
        return loop__fail(lc, "%" PRIu64 " live objects by index, the count says %" PRIu64, lc->n,
                          loop__count(p));
    return true;
}

/* The loop reads index i and gets handle h. */
static inline bool loop_visit(loop_check *lc, const opool *p, uint32_t i, opool_handle h) {
    if (lc->failed) return false;
    lc->visits++;
    if (i >= loop__count(p))
        return loop__fail(lc, "index %" PRIu64 " is not below count %" PRIu64, i, loop__count(p));
    if (opool_get(p, h) == NULL)
        return loop__fail(lc, "index %" PRIu64 " gave 0x%016" PRIx64 ", not a live handle", i,
                          h.bits);
    loop_entry *x = loop__find(lc, h.bits);
    if (x == NULL)
        return loop__fail(
            lc, "index %" PRIu64 " visits 0x%016" PRIx64 ", allocated inside the loop", i, h.bits);
    if (x->visits_left == 0)
        return loop__fail(lc, "index %" PRIu64 " visits 0x%016" PRIx64 " once too often", i,
                          h.bits);
    x->visits_left--;
    return true;
}

/* Right before the loop, at index i, frees the live object h. */
static inline bool loop_before_free(loop_check *lc, const opool *p, uint32_t i, opool_handle h) {
    if (lc->failed) return false;
    uint32_t count = loop__count(p), at = count;
    for (uint32_t k = 0; k < count; k++)
        if (opool_live_handle(p, k).bits == h.bits) at = k;
    if (at == count)
        return loop__fail(lc,
                          "0x%016" PRIx64 " is freed but not in the live list (count %" PRIu64 ")",
                          h.bits, count);
    loop_entry *x = loop__find(lc, h.bits);
    if (x != NULL) { /* it will never be visited again */
        x->visits_left = 0;
        x->gone = true;
    }
    lc->freed_last = true;
    lc->freed_at = at;
    lc->moved = opool_live_handle(p, count - 1).bits;
    lc->moved_owed = at < i && count - 1 >= i;
    if (lc->moved_owed) {
        /* the last entry moves from the visited part below the index */
        loop_entry *y = loop__find(lc, lc->moved);
        if (y == NULL) y = loop__add(lc, lc->moved, 0);
        y->visits_left++;
        lc->moves++;
    }
    return true;
}

/* Right after the loop, at index i, allocated h: the last entry, or, right
 * after a free of the same slot, at the freed object's place with the moved
 * entry back at the end (unless an opool_count between them ended that: a
 * loop that reads the count at each index, say; which of the two the pool
 * did is read from it). */
static inline bool loop_after_alloc(loop_check *lc, const opool *p, uint32_t i, opool_handle h) {
    if (lc->failed) return false;
    uint32_t last = loop__count(p) - 1, at = last;
    bool undone =
        lc->freed_last && lc->freed_at < last && opool_live_handle(p, lc->freed_at).bits == h.bits;
    lc->freed_last = false;
    if (undone) {
        at = lc->freed_at;
        if (opool_live_handle(p, last).bits != lc->moved)
            return loop__fail(lc, "0x%016" PRIx64 " is not back at the end (count %" PRIu64 ")",
                              lc->moved, last + 1);
        loop_entry *y = lc->moved_owed ? loop__find(lc, lc->moved) : NULL;
        if (y != NULL && y->visits_left > 0) { /* back in the visited part: no extra visit */
            y->visits_left--;
            lc->moves--;
        }
    }
    if (opool_live_handle(p, at).bits != h.bits)
        return loop__fail(lc, "0x%016" PRIx64 " is not at position %" PRIu64, h.bits, at);
    if (at < i) loop__add(lc, h.bits, 1); /* below the index: the loop will reach it */
    return true;
}

/* The loop has ended: every visit owed was made. */
static inline bool loop_end(loop_check *lc) {
    if (lc->failed) return false;
    for (uint32_t k = 0; k < lc->n; k++)
        if (!lc->e[k].gone && lc->e[k].visits_left != 0)
            return loop__fail(lc, "0x%016" PRIx64 " was owed %" PRIu64 " more visit(s)",
                              lc->e[k].handle, lc->e[k].visits_left);
    return true;
}

static inline void loop_check_free(loop_check *lc) {
    free(lc->e);
    lc->e = NULL;
    lc->n = lc->cap = 0;
}

#endif /* OPOOL_TEST_LOOP_CHECK_H */
