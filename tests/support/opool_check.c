/*
 * opool_check.c -- the invariant checker of the core pool, for tests and
 * fuzzers (declared in opool_check.h). It reads the pool's private layout
 * through src/opool_internal.h; the library never calls it and does not ship
 * it: it is part of the opool_test_support library.
 *
 * Sections (grep for "==== "):
 *   ==== helpers             the failure message
 *   ==== check               opool__check: geometry, chunks, slots, roster, fast paths
 */
#include "opool_check.h"
#include "opool_internal.h"

#include <inttypes.h>
#include <stdarg.h>

/* ==== helpers ============================================================ */

typedef struct opool__why {
    char *buf;
    size_t size;
} opool__why;

/* Write the reason (if there is a buffer for it) and give false, so every
 * check reads `if (bad) return opool__fail(w, ...)`. */
static bool opool__fail(opool__why *w, const char *fmt, ...) {
    if (w->buf != NULL && w->size > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(w->buf, w->size, fmt, ap);
        va_end(ap);
    }
    return false;
}

static bool opool__is_pow2(uint64_t x) { return x != 0 && (x & (x - 1)) == 0; }

/* ==== check ============================================================== */

/* Geometry: the fields fixed at create, against each other and against the
 * desc they came from. */
static bool opool__check_geometry(const opool *p, opool__why *w) {
    const opool__hot *h = &p->hot;
    const opool_desc *d = &p->desc;
    bool listed = !(d->flags & OPOOL_NO_LIVE_LIST);
    if (h->slot == NULL || (h->roster == NULL) == listed)
        return opool__fail(w, "slot %p or roster %p is NULL (or a roster without a live list)",
                           (void *)h->slot, (void *)h->roster);
    if (p->mem.alloc == NULL || p->mem.free == NULL) return opool__fail(w, "allocator incomplete");
    if (p->gen0 & 1) return opool__fail(w, "gen0 0x%08" PRIx32 " is odd", p->gen0);
    if (p->max_capacity == 0 || p->max_capacity > OPOOL_MAX_CAPACITY)
        return opool__fail(w, "max_capacity %" PRIu32 " out of range", p->max_capacity);
    size_t oalign = opool__object_align(d);
    if (!opool__is_pow2(oalign) || oalign > 4096)
        return opool__fail(w, "object alignment %zu invalid", oalign);
    if (h->stride < d->object_size || h->stride % oalign != 0 ||
        h->stride - d->object_size >= oalign)
        return opool__fail(w, "stride %zu is not object_size %zu rounded up to %zu", h->stride,
                           d->object_size, oalign);
    if (!opool__is_pow2(p->align) || p->align < OPOOL__LINE || p->align < oalign)
        return opool__fail(w, "chunk alignment %zu invalid", p->align);
    if (h->shift > 32) return opool__fail(w, "shift %" PRIu32 " > 32", h->shift);
    /* chunk 0: a power of two of a growing pool; a pool that never grows
     * makes its slots as they are needed: first is nslots, up to
     * max_capacity (its slot_cap) */
    uint64_t first = h->shift == 32 ? h->nslots : (uint64_t)1 << h->shift;
    if (first > p->max_capacity) first = p->max_capacity;
    if (h->first != first)
        return opool__fail(
            w, "first %" PRIu32 ", shift %" PRIu32 " and max_capacity %" PRIu32 " give %" PRIu64,
            h->first, h->shift, p->max_capacity, first);
    if (p->nchunks == 0 || p->nchunks > OPOOL__MAX_CHUNKS)
        return opool__fail(w, "nchunks %" PRIu32 " out of range", p->nchunks);
    /* nchunks: exactly the chunks that start below max_capacity */
    if (opool__chunk_lo(p, p->nchunks - 1) >= p->max_capacity)
        return opool__fail(w, "chunk %" PRIu32 " starts beyond max_capacity", p->nchunks - 1);
    if (h->shift < 32 && p->nchunks < OPOOL__MAX_CHUNKS &&
        opool__chunk_lo(p, p->nchunks) < p->max_capacity)
        return opool__fail(w, "nchunks %" PRIu32 " misses a chunk below max_capacity", p->nchunks);
    if (h->shift == 32 && p->nchunks != 1)
        return opool__fail(w, "fixed pool with %" PRIu32 " chunks", p->nchunks);
    if (p->slot_cap < h->first) return opool__fail(w, "slot_cap below first");
    if (h->shift == 32 && p->slot_cap != p->max_capacity)
        return opool__fail(w, "fixed pool's slot_cap %" PRIu32 " is not its max_capacity %" PRIu32,
                           p->slot_cap, p->max_capacity);
    if (listed && (const void *)h->roster != (const void *)(h->slot + p->slot_cap))
        return opool__fail(w, "roster does not follow the slot_cap slot records");
    if (!p->arrays_owned && (const void *)h->slot != (const void *)(p + 1))
        return opool__fail(w, "slot records outside the creation block, not owned");
    if (p->checker != opool__checker_active())
        return opool__fail(w, "checker flag %d, memory checker %d", p->checker,
                           opool__checker_active());
    return true;
}

/* Chunks: storage and bases agree, and nslots ends at a chunk boundary at
 * or past every backed chunk. */
static bool opool__check_chunks(const opool *p, opool__why *w) {
    const opool__hot *h = &p->hot;
    if (h->nslots < h->first || h->nslots > p->slot_cap || h->nslots > p->max_capacity)
        return opool__fail(w,
                           "nslots %" PRIu32 " outside [first %" PRIu32 ", min(slot_cap %" PRIu32
                           ", max_capacity %" PRIu32 ")]",
                           h->nslots, h->first, p->slot_cap, p->max_capacity);
    bool boundary = false;
    for (uint32_t c = 0; c < OPOOL__MAX_CHUNKS; c++) {
        if (c >= p->nchunks) {
            if (h->base[c] != NULL)
                return opool__fail(w, "chunk %" PRIu32 " beyond nchunks has storage", c);
            continue;
        }
        uint64_t lo = opool__chunk_lo(p, c);
        uint32_t hi = opool__chunk_hi(p, c);
        if (lo >= hi) return opool__fail(w, "chunk %" PRIu32 " is empty", c);
        if (hi == h->nslots || h->shift == 32) boundary = true; /* (slots made so far) */
        if (c == 0) {
            if (h->base[0] == NULL || (uintptr_t)h->base[0] % p->align != 0)
                return opool__fail(w, "base[0] %p NULL or misaligned", (void *)h->base[0]);
            continue;
        }
        if (!opool__chunk_backed(p, c)) continue;
        if (hi > h->nslots)
            return opool__fail(w,
                               "backed chunk %" PRIu32 " ends at %" PRIu32 " past nslots %" PRIu32,
                               c, hi, h->nslots);
        if ((uintptr_t)h->base[c] % opool__object_align(&p->desc) != 0)
            return opool__fail(w, "chunk %" PRIu32 " misaligned", c);
    }
    if (!boundary) return opool__fail(w, "nslots %" PRIu32 " is not the end of a chunk", h->nslots);
    return true;
}

/* The free chain of a pool without a live list: limit - count free slots
 * with storage, each once, then its end (reaching the end in that many
 * steps rules out a cycle, so none is twice in it). */
static bool opool__check_chain(const opool *p, opool__why *w) {
    const opool__hot *h = &p->hot;
    uint32_t i = h->chain, n = 0;
    for (; i != OPOOL__CHAIN_END; i = h->slot[i].pos, n++) {
        if (n == h->limit - h->count)
            return opool__fail(w, "the chain runs past its %" PRIu32 " free slots",
                               h->limit - h->count);
        if (i >= h->nslots) return opool__fail(w, "the chain names slot %" PRIu32, i);
        uint32_t pos = h->slot[i].pos;
        if ((h->slot[i].gen & 1) || pos == OPOOL__RETIRED || pos == OPOOL__UNBACKED)
            return opool__fail(w, "the chain names slot %" PRIu32 ", live or without storage", i);
    }
    if (n != h->limit - h->count)
        return opool__fail(w, "the chain holds %" PRIu32 " of %" PRIu32 " free slots", n,
                           h->limit - h->count);
    return true;
}

/* Slots and roster: every slot is in the roster exactly once, retired, or
 * without storage; the roster is a permutation of the slots in it. */
static bool opool__check_slots(const opool *p, opool__why *w) {
    const opool__hot *h = &p->hot;
    if (h->limit > h->nslots)
        return opool__fail(w, "limit %" PRIu32 " > nslots %" PRIu32, h->limit, h->nslots);
    if (h->count > h->limit)
        return opool__fail(w, "count %" PRIu32 " > limit %" PRIu32, h->count, h->limit);
    if (h->high_water < h->count)
        return opool__fail(w, "high_water %" PRIu32 " < count %" PRIu32, h->high_water, h->count);
    if (h->allocs < h->count)
        return opool__fail(w, "allocs %" PRIu64 " < count %" PRIu32, h->allocs, h->count);

    uint32_t in_roster = 0, retired = 0, unbacked = 0, live = 0;
    for (uint32_t c = 0; c < p->nchunks; c++) {
        uint32_t lo = (uint32_t)opool__chunk_lo(p, c), hi = opool__chunk_hi(p, c);
        if (lo >= h->nslots) break;
        if (hi > h->nslots) hi = h->nslots; /* (a pool that never grows: the slots made) */
        bool backed = opool__chunk_backed(p, c);
        for (uint32_t i = lo; i < hi; i++) {
            uint32_t pos = h->slot[i].pos, gen = h->slot[i].gen;
            if (gen & 1) live++;
            if (pos == OPOOL__RETIRED) {
                /* retired when the bits a compact handle keeps came back to
                 * gen0's: the generation is gen0 in those bits only */
                if (!opool__wraps(gen, p->gen0, h->index_bits))
                    return opool__fail(
                        w,
                        "retired slot %" PRIu32 " has gen 0x%08" PRIx32 ", not gen0 0x%08" PRIx32
                        " in its low %" PRIu32 " bits",
                        i, gen, p->gen0,
                        h->index_bits == 0 || h->index_bits >= 32 ? 32u : 32 - h->index_bits);
                retired++;
            } else if (pos == OPOOL__UNBACKED) {
                if (backed)
                    return opool__fail(
                        w, "slot %" PRIu32 " marked unbacked in backed chunk %" PRIu32, i, c);
                if (gen & 1) return opool__fail(w, "unbacked slot %" PRIu32 " is live", i);
                unbacked++;
            } else {
                if (!backed)
                    return opool__fail(
                        w, "slot %" PRIu32 " in the roster, chunk %" PRIu32 " has no storage", i,
                        c);
                if (h->roster == NULL) { /* the chain's links: checked below */
                    in_roster++;
                    continue;
                }
                if (pos >= h->limit)
                    return opool__fail(w, "slot %" PRIu32 " pos %" PRIu32 " >= limit %" PRIu32, i,
                                       pos, h->limit);
                if (h->roster[pos] != i)
                    return opool__fail(
                        w, "slot %" PRIu32 " at pos %" PRIu32 ", roster there is %" PRIu32, i, pos,
                        h->roster[pos]);
                in_roster++;
            }
        }
    }
    /* each slot in the roster owns its entry, so limit of them fill it */
    if (in_roster != h->limit)
        return opool__fail(w, "%" PRIu32 " slots in a roster of limit %" PRIu32, in_roster,
                           h->limit);
    if (retired != p->retired)
        return opool__fail(w, "%" PRIu32 " retired slots, retired says %" PRIu32, retired,
                           p->retired);
    if ((uint64_t)h->limit + retired + unbacked != h->nslots)
        return opool__fail(
            w, "limit %" PRIu32 " + retired %" PRIu32 " + unbacked %" PRIu32 " != nslots %" PRIu32,
            h->limit, retired, unbacked, h->nslots);
    if (live != h->count)
        return opool__fail(w, "%" PRIu32 " live slots, count %" PRIu32, live, h->count);
    if (h->roster == NULL) return opool__check_chain(p, w);

    /* live prefix, free suffix */
    for (uint32_t k = 0; k < h->limit; k++) {
        uint32_t i = h->roster[k];
        bool odd = (h->slot[i].gen & 1) != 0;
        if (k < h->count && !odd)
            return opool__fail(w, "roster[%" PRIu32 "] = slot %" PRIu32 " is free, count %" PRIu32,
                               k, i, h->count);
        if (k >= h->count && odd)
            return opool__fail(w, "roster[%" PRIu32 "] = slot %" PRIu32 " is live, count %" PRIu32,
                               k, i, h->count);
    }
    return true;
}

/* The inline paths' bounds follow opool__update_fast's rule. */
static bool opool__check_fast(const opool *p, opool__why *w) {
    const opool__hot *h = &p->hot;
    uint32_t fast, free_limit;
    opool__fast_bounds(p, &fast, &free_limit);
    if (h->fast_limit != fast)
        return opool__fail(w, "fast_limit %" PRIu32 ", expected %" PRIu32, h->fast_limit, fast);
    if (h->free_limit != free_limit)
        return opool__fail(w, "free_limit %" PRIu32 ", expected %" PRIu32, h->free_limit,
                           free_limit);
    return true;
}

/* Everything that must hold of a pool between two calls. O(slots). */
bool opool__check(const opool *p, char *why, size_t why_size) {
    opool__why w = {why, why_size};
    if (why != NULL && why_size > 0) why[0] = '\0';
    if (p == NULL) return opool__fail(&w, "pool is NULL");
    return opool__check_geometry(p, &w) && opool__check_chunks(p, &w) &&
           opool__check_slots(p, &w) && opool__check_fast(p, &w);
}

/* ---- a's state as opool_load makes it whole -------------------------------- */

/* Where a's free chain leads on past its end: to the first unmade slot. */
static uint32_t opool__loaded_end(const opool *a) {
    return a->hot.roster == NULL && opool__unmade(a) != 0 ? a->hot.nslots : OPOOL__CHAIN_END;
}

void opool__check_loaded_record(const opool *a, uint32_t i, uint32_t *gen, uint32_t *pos) {
    const opool__hot *x = &a->hot;
    uint32_t n = x->nslots + opool__unmade(a);
    if (i < x->nslots) {
        *gen = x->slot[i].gen;
        *pos = x->slot[i].pos == OPOOL__CHAIN_END ? opool__loaded_end(a) : x->slot[i].pos;
        return;
    }
    *gen = a->gen0;
    *pos = x->roster ? x->limit + (i - x->nslots) : i + 1 < n ? i + 1 : OPOOL__CHAIN_END;
}

uint32_t opool__check_loaded_entry(const opool *a, uint32_t k) {
    const opool__hot *x = &a->hot;
    return k < x->limit ? x->roster[k] : x->nslots + (k - x->limit);
}

uint32_t opool__check_loaded_chain(const opool *a) {
    return a->hot.chain == OPOOL__CHAIN_END ? opool__loaded_end(a) : a->hot.chain;
}
