/*
 * opool_mt_shared.c -- opool_mt's calls without a cache (docs/CONCURRENCY.md,
 * "The free list" and "Generations: who owns a slot"): opool_mt_alloc, opool_mt_alloc_wait,
 * opool_mt_free and the bulk calls, on the shared free list, stealing from caches and waiting
 * (opool_mt_cache.c) when it is empty.
 */
#include "opool_mt_list.h"

/* alloc without counting a failure: the shared list, else a steal, else
 * a growth (waiting for another thread's at most timeout_ns). */
OPOOL__HOT void *opool__mt_try(opool_mt *p, opool_handle *out, uint64_t timeout_ns) {
    uint32_t i, last;
    while (OPOOL_UNLIKELY(opool__mt_pop(p, 1, &i, &last) == 0) &&
           opool__mt_steal(p, 1, OPOOL__MT_STEAL_EXTRA, &i) == 0)
        if (!opool__mt_grew(p, timeout_ns)) return NULL;
    opool__mt_add_live(p, 1);
    return opool__mt_take(p, i, out);
}

void *opool_mt_alloc(opool_mt *p, opool_handle *out) {
    if (out) *out = OPOOL_NULL;
    if (OPOOL_UNLIKELY(p == NULL)) return NULL;
    void *obj = opool__mt_try(p, out, OPOOL_WAIT_FOREVER);
    if (OPOOL_UNLIKELY(obj == NULL)) opool__mt_failed(p);
    return obj;
}

void *opool_mt_alloc_wait(opool_mt *p, opool_handle *out, uint64_t timeout_ns) {
    if (out) *out = OPOOL_NULL;
    if (p == NULL) return NULL;
    void *obj = opool__mt_try(p, out, timeout_ns);
    if (obj == NULL && timeout_ns != 0) obj = opool__mt_wait(p, out, timeout_ns);
    if (obj == NULL) opool__mt_failed(p);
    return obj;
}

opool_status opool_mt_free(opool_mt *p, opool_handle h) {
    if (OPOOL_UNLIKELY(p == NULL)) return OPOOL_EINVAL;
    bool keep;
    opool_status s = opool__mt_claim(p, h, &keep);
    if (OPOOL_UNLIKELY(s != OPOOL_OK)) return opool__mt_rejected(p, s, h);
    opool__mt_add_live(p, -1);
    if (OPOOL_LIKELY(keep)) {
        uint32_t i = opool_handle_index(h);
        opool__mt_push(p, i, i);
        opool__mt_freed(p, 1);
    } else {
        opool__mt_end_episode(p); /* every free checks, after its count fell */
    }
    return OPOOL_OK;
}

uint32_t opool_mt_alloc_bulk(opool_mt *p, opool_handle *out, void **objs, uint32_t n) {
    if (p == NULL || out == NULL || n == 0) return 0;
    /* from the stripes, one chain after another (a stripe may hold fewer) */
    uint32_t first = 0, last = 0, got = 0, f, l, m;
    do {
        while (got < n && (m = opool__mt_pop(p, n - got, &f, &l)) != 0) {
            if (got)
                opool__mt_link(p, last, f);
            else
                first = f;
            last = l;
            got += m;
        }
        if (got == n) break;
        OPOOL__MT_POINT(p, BULK_POPPED);
        /* the stolen chain goes after the popped one; a bulk alloc takes
         * exactly what it misses: no extras */
        uint32_t sfirst, stolen = opool__mt_steal(p, n - got, 0, &sfirst);
        if (stolen) {
            if (got)
                opool__mt_link(p, last, sfirst);
            else
                first = sfirst;
            last = sfirst; /* the chain's end, where a growth's slots go */
            for (uint32_t k = 1; k < stolen; k++) last = opool__mt_link_of(p, last);
            got += stolen;
        }
    } while (got < n && opool__mt_grew(p, OPOOL_WAIT_FOREVER));
    uint32_t i = first;
    for (uint32_t k = 0; k < got; k++) {
        uint32_t below = k + 1 < got ? opool__mt_link_of(p, i) : 0;
        void *obj = opool__mt_take(p, i, &out[k]);
        if (objs) objs[k] = obj;
        i = below;
    }
    if (got) opool__mt_add_live(p, got);
    if (got < n) opool__mt_failed(p);
    return got;
}

uint32_t opool_mt_free_bulk(opool_mt *p, const opool_handle *hs, uint32_t n) {
    if (p == NULL || hs == NULL) return 0;
    uint32_t first = 0, last = 0, chained = 0, freed = 0;
    for (uint32_t k = 0; k < n; k++) {
        bool keep;
        opool_status s = opool__mt_claim(p, hs[k], &keep);
        if (s != OPOOL_OK) {
            opool__mt_rejected(p, s, hs[k]);
            continue;
        }
        freed++;
        if (!keep) continue;
        uint32_t i = opool_handle_index(hs[k]);
        if (chained++ == 0)
            last = i;
        else
            opool__mt_link(p, i, first);
        first = i;
    }
    if (freed) opool__mt_add_live(p, -(int64_t)freed);
    if (chained) {
        opool__mt_push(p, first, last);
        opool__mt_freed(p, chained);
    } else if (freed) {
        opool__mt_end_episode(p); /* every free checks, after its count fell */
    }
    return freed;
}
