/*
 * opool_mt_list.h -- the shared free list of opool_mt: OPOOL__MT_STRIPES
 * ABA-tagged stacks of slot indexes linked through next[], one per stripe
 * of threads (docs/CONCURRENCY.md, "The free list"). Inline: every alloc and free without
 * a cache is a pop or a push. Private.
 */
#ifndef OPOOL_MT_LIST_H
#define OPOOL_MT_LIST_H

#include "opool_mt_internal.h"

OPOOL__HOT uint64_t opool__mt_head_to(const opool_mt *p, uint64_t h, uint32_t top1) {
    return ((h & ~p->idx_mask) + p->tag_one) | top1; /* the tag wraps modulo its width */
}

/* Pop up to k slots off the list at head in one CAS; returns how many (0:
 * empty). *first is the old top, *last the last slot popped; the popped
 * slots are a chain through next[], now owned by the caller. */
OPOOL__HOT uint32_t opool__mt_list_pop(opool_mt *p, opool__atomic(uint64_t) * head, uint32_t k,
                                       uint32_t *first, uint32_t *last) {
    /* seq_cst: acquire for the links and slots the pushers released, and the
     * waiter's half of the handshake of CONCURRENCY.md, "Waiting, and the stranding policy" (free:
     * seq_cst CAS, then seq_cst load of waiters) */
    uint64_t h = opool__atomic_load_seq_cst(head);
    for (;;) {
        uint32_t t = (uint32_t)(h & p->idx_mask), n = 0;
        if (t == 0) return 0;
        *first = t - 1;
        while (t != 0 && n < k) {
            *last = t - 1;
            /* relaxed: ordered by the acquire of h; if a link changed under
             * us, so did the tag, and the CAS fails */
            t = opool__atomic_load_relaxed(&p->next[t - 1]);
            n++;
        }
        /* acquire (success and failure): the next attempt's links, as above;
         * the tag in h protects against ABA (CONCURRENCY.md, "The free list") */
        if (opool__atomic_cas_weak_acquire_acquire(head, &h, opool__mt_head_to(p, h, t))) return n;
    }
}

/* Pop off the list at head, in one CAS, what a borrow takes (CONCURRENCY.md, "The free list"): k
 * slots, or when the list holds more, half of what it holds, counting at
 * most 2 * OPOOL__MT_BORROW, up to OPOOL__MT_BORROW (never fewer than k).
 * Returns how many; as opool__mt_list_pop. */
OPOOL__HOT uint32_t opool__mt_list_pop_borrow(opool_mt *p, opool__atomic(uint64_t) * head,
                                              uint32_t k, uint32_t *first, uint32_t *last) {
    /* seq_cst, relaxed, acquire: as opool__mt_list_pop */
    uint64_t h = opool__atomic_load_seq_cst(head);
    for (;;) {
        uint32_t t = (uint32_t)(h & p->idx_mask), want = k, n = 0, at = t;
        if (t == 0) return 0;
        if (k < OPOOL__MT_BORROW) { /* count; a link that changed meanwhile fails the CAS */
            uint32_t seen = 0;
            for (uint32_t u = t; u != 0 && seen < 2 * OPOOL__MT_BORROW; seen++)
                u = opool__atomic_load_relaxed(&p->next[u - 1]);
            if (seen / 2 > want) want = seen / 2;
        }
        *first = t - 1;
        while (at != 0 && n < want) {
            *last = at - 1;
            at = opool__atomic_load_relaxed(&p->next[at - 1]);
            n++;
        }
        if (opool__atomic_cas_weak_acquire_acquire(head, &h, opool__mt_head_to(p, h, at))) return n;
    }
}

/* Push the chain first -> ... -> last (linked through next[] by the caller)
 * onto the list at head in one CAS. */
OPOOL__HOT void opool__mt_list_push(opool_mt *p, opool__atomic(uint64_t) * head, uint32_t first,
                                    uint32_t last) {
    uint64_t h = opool__atomic_load_relaxed(head);
    do {
        /* relaxed: published by the release of the CAS below */
        opool__atomic_store_relaxed(&p->next[last], (uint32_t)(h & p->idx_mask));
        /* seq_cst: release of the links and the freed slots to the next
         * popper, and the freer's half of the handshake of CONCURRENCY.md, "Waiting, and the
         * stranding policy" */
    } while (!opool__atomic_cas_weak_seq_cst_relaxed(head, &h, opool__mt_head_to(p, h, first + 1)));
}

/* Pop up to k slots, from the calling thread's stripe if it has any (one
 * CAS), else from another's (opool__mt_pop_other); returns how many (0:
 * every stripe was empty when looked at). As opool__mt_list_pop. */
OPOOL__HOT uint32_t opool__mt_pop(opool_mt *p, uint32_t k, uint32_t *first, uint32_t *last) {
    unsigned s = opool__mt_my_stripe();
    uint32_t n = opool__mt_list_pop(p, &p->stripes[s].head, k, first, last);
    return OPOOL_LIKELY(n != 0) ? n : opool__mt_pop_other(p, s, k, first, last);
}

/* Push the chain first -> ... -> last onto the calling thread's stripe. */
OPOOL__HOT void opool__mt_push(opool_mt *p, uint32_t first, uint32_t last) {
    opool__mt_list_push(p, &p->stripes[opool__mt_my_stripe()].head, first, last);
}

OPOOL__HOT uint32_t opool__mt_link_of(const opool_mt *p, uint32_t i) {
    /* relaxed: the chain is the caller's since its pop (acquire) */
    return opool__atomic_load_relaxed(&p->next[i]) - 1;
}

OPOOL__HOT void opool__mt_link(opool_mt *p, uint32_t i, uint32_t below) {
    /* relaxed: published by the push's release */
    opool__atomic_store_relaxed(&p->next[i], below + 1);
}

/* The caller's stripe s was empty: pop from the others in turn, from
 * s + 1, until one has slots (one CAS each; CONCURRENCY.md, "The free list"). From another stripe
 * it takes what it was asked for, k, or more when that stripe has more: half of what it sees there
 * (it looks at 2 * OPOOL__MT_BORROW at most), up to OPOOL__MT_BORROW. It hands the k first to the
 * caller and puts the rest onto stripe s, where the caller's next pops find them: threads
 * allocating from one fresh pool get whole lines of gen[] and next[] each,
 * not neighbouring slots; and a thread stopped between the two CASes hides
 * at most half of a stripe's slots from the others. Between the pop and the
 * push those slots are nowhere a waiter can see, so the push is followed by
 * freed, as a spill's is (CONCURRENCY.md, "Waiting, and the stranding policy"). Returns as
 * opool__mt_pop. The body of opool__mt_pop_other (opool_mt.c), which runs it out of line. */
OPOOL__HOT uint32_t opool__mt_borrow(opool_mt *p, unsigned s, uint32_t k, uint32_t *first,
                                     uint32_t *last) {
    for (unsigned j = 1; j < OPOOL__MT_STRIPES; j++) {
        opool__atomic(uint64_t) *head = &p->stripes[(s + j) % OPOOL__MT_STRIPES].head;
        uint32_t end, n = opool__mt_list_pop_borrow(p, head, k, first, &end);
        if (n == 0) continue;
        if (n <= k) {
            *last = end;
            return n;
        }
        OPOOL__MT_POINT(p, BORROWED);
        *last = *first; /* the caller's chain ends at the k-th slot */
        for (uint32_t m = 1; m < k; m++) *last = opool__mt_link_of(p, *last);
        opool__mt_list_push(p, &p->stripes[s].head, opool__mt_link_of(p, *last), end);
        opool__mt_freed(p, n - k);
        return k;
    }
    return 0;
}

#endif /* OPOOL_MT_LIST_H */
