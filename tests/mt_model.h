/*
 * mt_model.h -- the reference model of opool_mt's sequential semantics
 * (docs/CONCURRENCY.md section 2): the oracle of the differential test in
 * tests/test_mt.c.
 *
 * It is written to be obviously right, not fast: plain arrays, each rule of
 * section 2 spelled out once, nothing shared with src/opool_mt.c. It holds no
 * object memory; it predicts every handle, status, callback and statistic a
 * pool used by one thread must produce.
 *
 * Where a slot is, at every moment: live (odd generation), in the shared
 * list, parked in exactly one cache, or retired. The rules:
 *   - handle = generation << 32 | index; every slot starts at
 *     gen0 = salt & ~1; alloc and free each add one;
 *   - the shared list is sixteen stacks, its stripes (docs section 3): the
 *     calling thread has one (the test switches it to play several
 *     threads), stack[s][nstack[s] - 1] is stripe s's top; a fresh pool
 *     holds 0, 1, ..., capacity - 1 on stripe 0 with 0 on top (the header's
 *     words: a fresh pool hands out 0, 1, 2, ... in order);
 *   - every push is onto the calling stripe; a pop of up to k takes them
 *     off the calling stripe's top if it has any, else off the first other
 *     stripe that has any (from the calling one + 1 on, wrapping), taking
 *     there max(k, half of min(its slots, 32)) and pushing what it does not
 *     hand out back onto the calling stripe, the first of those on top;
 *   - a cache is a sequence of parked slots, ent[0] the oldest and
 *     ent[n - 1] the newest; H = max(1, size / 2);
 *   - alloc pops the top; free pushes (unless RETIRE_ON_WRAP retires the
 *     slot because its new generation is gen0 again);
 *   - cache_alloc pops its newest parked slot, else refills k = min(H, shared)
 *     slots s1..sk off the top, returning s1 and parking the rest with s2 the
 *     newest; cache_free parks as the newest, first spilling the H oldest
 *     (newest spilled ends on top) if the cache is full; flush and destroy
 *     push every parked slot, newest ending on top; the cache bulk calls
 *     are single calls in order (cache_alloc_bulk stops at the first that
 *     fails: one failed alloc, as alloc_bulk);
 *   - when the shared list is empty, alloc, alloc_bulk and cache_alloc steal
 *     parked slots from the caches. WHICH cache a steal takes from is the
 *     one thing section 2 leaves open: the caller passes the index the pool
 *     under test returned ("got"), and the model takes that slot from
 *     whichever cache holds it. If it is parked nowhere, the model takes
 *     the first parked slot it finds, so the results differ and the
 *     comparison fails. A steal of one slot (alloc, cache_alloc) takes the
 *     oldest of that cache, then moves up to 15 more of its oldest to the
 *     shared list as a spill would (the newest of them on top).
 *   - when nothing is parked either, a pool made with OPOOL_FULL_GROW below
 *     its max_capacity grows before it fails: max(capacity, 64) new slots
 *     (up to max_capacity) are pushed onto the calling stripe, the first
 *     new one on top, and the call pops again;
 *   - a failed alloc opens an exhaustion episode or counts in it (EFULL
 *     reported at its 1st, 2nd, 4th, 8th... failure); a free that leaves a
 *     quarter of the usable slots free ends it (checked after its count,
 *     and for a retiring free the capacity, fell); every rejected
 *     handle is counted and reported with the handle.
 */
#ifndef OPOOL_MT_MODEL_H
#define OPOOL_MT_MODEL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mt_check.h" /* OPOOL_TEST_MT_STRIPES */
#include "opool.h"
#include "opool_mt.h"

#define MTM_MAX_CACHES 8
#define MTM_MAX_REPORTS 64
#define MTM_NONE UINT32_MAX
#define MTM_STRIPES OPOOL_TEST_MT_STRIPES
#define MTM_BORROW 16u /* OPOOL__MT_BORROW */

typedef struct mtm_report {
    opool_status what;
    uint64_t handle;
} mtm_report;

typedef struct mtm_cache {
    bool alive;
    uint32_t size; /* entries it may hold */
    uint32_t n;    /* parked slots, ent[0] oldest .. ent[n-1] newest */
    uint32_t *ent; /* [size] */
} mtm_cache;

typedef struct mt_model {
    /* configuration; capacity grows toward max_capacity */
    uint32_t capacity, max_capacity, flags, gen0;

    /* per slot, [max_capacity] */
    uint32_t *gen;
    bool *retired;

    /* the shared list's stripes, each [max_capacity]: stack[s][nstack[s] - 1] is
     * stripe s's top */
    uint32_t *stack[MTM_STRIPES];
    uint32_t nstack[MTM_STRIPES];
    unsigned stripe;   /* the calling thread's */
    uint32_t *scratch; /* [max_capacity]: what a pop takes */
    mtm_cache cache[MTM_MAX_CACHES];

    uint32_t retired_count;
    uint64_t episode; /* failed allocs of the open episode; 0: none */
    uint64_t failed_allocs, rejected, steals, grows;

    /* callbacks the current operation made (cleared by mtm_begin) */
    uint32_t *fini_log; /* slot indices in call order, [max_capacity] */
    uint32_t nfini;
    uint32_t ninit;
    mtm_report reports[MTM_MAX_REPORTS];
    uint32_t nreports;
} mt_model;

/* ---- setup -------------------------------------------------------------- */

static inline void mtm__push(mt_model *m, uint32_t i) {
    m->stack[m->stripe][m->nstack[m->stripe]++] = i;
}

/* The model of a fresh pool of capacity slots, growing to max_capacity (0:
 * fixed), whose generations start at gen0 (salt & ~1). False if out of
 * memory. */
static inline bool mtm_init(mt_model *m, uint32_t capacity, uint32_t max_capacity, uint32_t flags,
                            uint32_t gen0) {
    memset(m, 0, sizeof *m);
    uint32_t max = max_capacity > capacity ? max_capacity : capacity;
    m->capacity = capacity;
    m->max_capacity = max;
    m->flags = flags;
    m->gen0 = gen0 & ~1u;
    m->gen = calloc(max, sizeof *m->gen);
    m->retired = calloc(max, sizeof *m->retired);
    bool ok = true;
    for (unsigned s = 0; s < MTM_STRIPES; s++)
        ok &= (m->stack[s] = calloc(max, sizeof *m->stack[s])) != NULL;
    m->scratch = calloc(max, sizeof *m->scratch);
    m->fini_log = calloc(max, sizeof *m->fini_log);
    if (!ok || !m->gen || !m->retired || !m->scratch || !m->fini_log) return false;
    for (uint32_t i = 0; i < max; i++) m->gen[i] = m->gen0;
    for (uint32_t i = capacity; i-- > 0;) mtm__push(m, i); /* stripe 0; 0 ends on top */
    return true;
}

static inline void mtm_fini(mt_model *m) {
    free(m->gen);
    free(m->retired);
    for (unsigned s = 0; s < MTM_STRIPES; s++) free(m->stack[s]);
    free(m->scratch);
    free(m->fini_log);
    for (uint32_t c = 0; c < MTM_MAX_CACHES; c++) free(m->cache[c].ent);
    memset(m, 0, sizeof *m);
}

/* Forget the callbacks of the previous operation. */
static inline void mtm_begin(mt_model *m) {
    m->nfini = 0;
    m->ninit = 0;
    m->nreports = 0;
}

/* ---- queries ------------------------------------------------------------ */

static inline uint64_t mtm_bits(uint32_t gen, uint32_t index) {
    return (uint64_t)gen << 32 | index;
}

static inline bool mtm_is_live(const mt_model *m, uint32_t i) {
    return i < m->capacity && (m->gen[i] & 1) != 0;
}

/* How every handle-taking function sees h. */
static inline opool_status mtm_classify(const mt_model *m, uint64_t h) {
    uint32_t i = (uint32_t)h, g = (uint32_t)(h >> 32);
    if ((g & 1) == 0 || i >= m->capacity) return OPOOL_EINVAL;
    if (m->gen[i] != g) return OPOOL_ESTALE;
    return OPOOL_OK;
}

static inline bool mtm_get(const mt_model *m, uint64_t h) { return mtm_classify(m, h) == OPOOL_OK; }

static inline uint32_t mtm_count(const mt_model *m) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < m->capacity; i++) n += mtm_is_live(m, i);
    return n;
}

static inline uint32_t mtm_capacity(const mt_model *m) { return m->capacity - m->retired_count; }

static inline bool mtm_in_stack(const mt_model *m, uint32_t i) {
    for (unsigned s = 0; s < MTM_STRIPES; s++)
        for (uint32_t k = 0; k < m->nstack[s]; k++)
            if (m->stack[s][k] == i) return true;
    return false;
}

/* Slots in the shared list, every stripe. */
static inline uint32_t mtm_listed(const mt_model *m) {
    uint32_t n = 0;
    for (unsigned s = 0; s < MTM_STRIPES; s++) n += m->nstack[s];
    return n;
}

/* The cache that holds slot i parked, MTM_NONE if none does. */
static inline uint32_t mtm_parked_in(const mt_model *m, uint32_t i) {
    for (uint32_t c = 0; c < MTM_MAX_CACHES; c++)
        for (uint32_t k = 0; k < m->cache[c].n; k++)
            if (m->cache[c].ent[k] == i) return c;
    return MTM_NONE;
}

static inline uint32_t mtm_parked(const mt_model *m) {
    uint32_t n = 0;
    for (uint32_t c = 0; c < MTM_MAX_CACHES; c++) n += m->cache[c].n;
    return n;
}

static inline void mtm_stats(const mt_model *m, opool_mt_stats *s) {
    memset(s, 0, sizeof *s);
    s->version = OPOOL_MT_STATS_VERSION;
    s->capacity = mtm_capacity(m);
    s->count = mtm_count(m);
    s->parked = mtm_parked(m);
    for (uint32_t c = 0; c < MTM_MAX_CACHES; c++) s->caches += m->cache[c].alive;
    s->retired = m->retired_count;
    s->failed_allocs = m->failed_allocs;
    s->rejected_handles = m->rejected;
    s->steals = m->steals;
    s->grows = m->grows;
    s->max_capacity = m->max_capacity;
    /* one thread never sleeps (no timeout is given) and never wakes anyone */
}

/* The model's own invariant: every slot is in exactly one place, and a
 * slot's generation agrees with its place. False with why filled if not. */
static inline bool mtm_check(const mt_model *m, char *why, size_t n) {
    uint32_t *seen = calloc(m->capacity ? m->capacity : 1, sizeof *seen);
    bool ok = seen != NULL;
    if (!ok) snprintf(why, n, "out of memory");
    for (unsigned s = 0; ok && s < MTM_STRIPES; s++)
        for (uint32_t k = 0; k < m->nstack[s]; k++) seen[m->stack[s][k]]++;
    for (uint32_t c = 0; ok && c < MTM_MAX_CACHES; c++) {
        const mtm_cache *q = &m->cache[c];
        if (q->n > q->size || (!q->alive && q->n != 0)) {
            snprintf(why, n, "cache %u holds %u of %u (alive %d)", c, q->n, q->size, q->alive);
            ok = false;
        }
        for (uint32_t k = 0; ok && k < q->n; k++) seen[q->ent[k]]++;
    }
    uint32_t retired = 0;
    for (uint32_t i = 0; ok && i < m->capacity; i++) {
        uint32_t places = seen[i] + m->retired[i] + mtm_is_live(m, i);
        retired += m->retired[i];
        if (places != 1) {
            snprintf(why, n, "slot %u is in %u places", i, places);
            ok = false;
        } else if (m->retired[i] && m->gen[i] != m->gen0) {
            snprintf(why, n, "retired slot %u has generation 0x%x", i, m->gen[i]);
            ok = false;
        }
    }
    if (ok && retired != m->retired_count) {
        snprintf(why, n, "%u retired slots, counted %u", retired, m->retired_count);
        ok = false;
    }
    free(seen);
    return ok;
}

/* ---- internal steps ----------------------------------------------------- */

static inline void mtm__report(mt_model *m, opool_status what, uint64_t h) {
    if (m->nreports < MTM_MAX_REPORTS) m->reports[m->nreports] = (mtm_report){what, h};
    m->nreports++;
}

static inline void mtm__failed(mt_model *m) {
    m->failed_allocs++;
    m->episode++;
    if ((m->episode & (m->episode - 1)) == 0) mtm__report(m, OPOOL_EFULL, 0);
}

/* A pop of up to k slots (k >= 1) into m->scratch, the old top first;
 * returns how many. */
static inline uint32_t mtm__pop(mt_model *m, uint32_t k) {
    for (unsigned j = 0; j < MTM_STRIPES; j++) {
        unsigned s = (m->stripe + j) % MTM_STRIPES;
        uint32_t want = k, n = 0,
                 seen = m->nstack[s] < 2 * MTM_BORROW ? m->nstack[s] : 2 * MTM_BORROW;
        if (j > 0 && seen / 2 > want) want = seen / 2; /* a borrow: half what it sees */
        while (n < want && m->nstack[s] > 0) m->scratch[n++] = m->stack[s][--m->nstack[s]];
        if (n == 0) continue;
        for (uint32_t r = n; r-- > k;) mtm__push(m, m->scratch[r]); /* scratch[k] ends on top */
        return n < k ? n : k;
    }
    return 0;
}

/* Removes entry k of cache c, keeping the order of the others. */
static inline uint32_t mtm__unpark(mt_model *m, uint32_t c, uint32_t k) {
    mtm_cache *q = &m->cache[c];
    uint32_t i = q->ent[k];
    memmove(&q->ent[k], &q->ent[k + 1], (q->n - k - 1) * sizeof *q->ent);
    q->n--;
    return i;
}

/* Steal one parked slot: got if it is parked anywhere, else the first parked
 * slot found (which makes the comparison fail), MTM_NONE if none is. */
static inline uint32_t mtm__steal(mt_model *m, uint32_t got) {
    uint32_t c = got < m->capacity ? mtm_parked_in(m, got) : MTM_NONE;
    if (c != MTM_NONE) {
        for (uint32_t k = 0; k < m->cache[c].n; k++)
            if (m->cache[c].ent[k] == got) {
                m->steals++;
                return mtm__unpark(m, c, k);
            }
    }
    for (c = 0; c < MTM_MAX_CACHES; c++)
        if (m->cache[c].n > 0) {
            m->steals++;
            return mtm__unpark(m, c, 0);
        }
    return MTM_NONE;
}

/* Slot i, just taken from a list, becomes live. */
static inline uint64_t mtm__hand_out(mt_model *m, uint32_t i) {
    m->gen[i]++;
    m->ninit++;
    return mtm_bits(m->gen[i], i);
}

/* An episode ends when count of capacity live is a recovery. */
static inline void mtm__settle(mt_model *m, uint32_t count) {
    uint32_t cap = mtm_capacity(m);
    if (count <= cap - (cap + 3) / 4) m->episode = 0;
}

/* Free live slot i: fini, generation + 1, maybe the end of the episode. True
 * if the slot goes on (to a list or a cache), false if it is retired. */
static inline bool mtm__free_live(mt_model *m, uint32_t i) {
    m->fini_log[m->nfini++] = i;
    m->gen[i]++;
    if ((m->flags & OPOOL_RETIRE_ON_WRAP) && m->gen[i] == m->gen0) {
        m->retired[i] = true;
        m->retired_count++;
        mtm__settle(m, mtm_count(m));
        return false;
    }
    mtm__settle(m, mtm_count(m));
    return true;
}

/* Validate h; count and report it if rejected. */
static inline opool_status mtm__validate(mt_model *m, uint64_t h) {
    opool_status s = mtm_classify(m, h);
    if (s != OPOOL_OK) {
        m->rejected++;
        mtm__report(m, s, h);
    }
    return s;
}

/* Push the first k parked slots of cache c (the oldest first, so the newest
 * of them ends on top) and drop them from the cache. */
static inline void mtm__push_oldest(mt_model *m, uint32_t c, uint32_t k) {
    mtm_cache *q = &m->cache[c];
    for (uint32_t j = 0; j < k; j++) mtm__push(m, q->ent[j]);
    memmove(&q->ent[0], &q->ent[k], (q->n - k) * sizeof *q->ent);
    q->n -= k;
}

/* A steal of one slot: got (which must be the oldest of its cache), then up
 * to 15 more of that cache's oldest go to the shared list. */
static inline uint32_t mtm__steal_one(mt_model *m, uint32_t got) {
    uint32_t c = got < m->capacity ? mtm_parked_in(m, got) : MTM_NONE;
    uint32_t i = mtm__steal(m, got);
    if (i == MTM_NONE || c == MTM_NONE) return i;
    uint32_t extra = m->cache[c].n < 15 ? m->cache[c].n : 15;
    mtm__push_oldest(m, c, extra);
    m->steals += extra;
    return i;
}

static inline uint32_t mtm__half(const mtm_cache *q) { return q->size / 2 > 1 ? q->size / 2 : 1; }

/* No free slot anywhere: grow if the pool may, the new slots onto the
 * calling stripe, the first of them on top. True if it grew. */
static inline bool mtm__grow(mt_model *m) {
    uint32_t from = m->capacity;
    if (from >= m->max_capacity) return false;
    uint32_t add = from > 64 ? from : 64;
    uint32_t to = add < m->max_capacity - from ? from + add : m->max_capacity;
    for (uint32_t i = to; i-- > from;) mtm__push(m, i);
    m->capacity = to;
    m->grows++;
    return true;
}

/* ---- operations (each mirrors one public function) ------------------------ */

/* opool_mt_alloc (and opool_mt_alloc_wait with timeout 0): true and *out =
 * the handle bits, or false (*out = 0). got: the index the pool returned. */
static inline bool mtm_alloc(mt_model *m, uint32_t got, uint64_t *out) {
    *out = 0;
    uint32_t i;
    do i = mtm__pop(m, 1) == 1 ? m->scratch[0] : mtm__steal_one(m, got);
    while (i == MTM_NONE && mtm__grow(m));
    if (i == MTM_NONE) {
        mtm__failed(m);
        return false;
    }
    *out = mtm__hand_out(m, i);
    return true;
}

/* opool_mt_alloc_bulk: pops until it has n or the stripes are empty (out[0]
 * the first pop's old top), then steals what is missing. got[k]: the index the pool returned in
 * out[k] (MTM_NONE past what it returned). */
static inline uint32_t mtm_alloc_bulk(mt_model *m, uint32_t n, const uint32_t *got, uint64_t *out) {
    uint32_t k = 0;
    do {
        for (uint32_t got_n; k < n && (got_n = mtm__pop(m, n - k)) != 0;)
            for (uint32_t j = 0; j < got_n; j++) out[k++] = mtm__hand_out(m, m->scratch[j]);
        while (k < n) {
            uint32_t i = mtm__steal(m, got[k]);
            if (i == MTM_NONE) break;
            out[k] = mtm__hand_out(m, i);
            k++;
        }
    } while (k < n && mtm__grow(m));
    if (k < n) mtm__failed(m);
    return k;
}

/* opool_mt_free. */
static inline opool_status mtm_free(mt_model *m, uint64_t h) {
    opool_status s = mtm__validate(m, h);
    if (s != OPOOL_OK) return s;
    uint32_t i = (uint32_t)h;
    if (mtm__free_live(m, i)) mtm__push(m, i);
    return OPOOL_OK;
}

/* opool_mt_free_bulk: free of hs[0], hs[1], ... in order; returns the number freed. */
static inline uint32_t mtm_free_bulk(mt_model *m, const uint64_t *hs, uint32_t n) {
    uint32_t freed = 0;
    for (uint32_t k = 0; k < n; k++) freed += mtm_free(m, hs[k]) == OPOOL_OK;
    return freed;
}

/* opool_mt_cache_create: cache c (a model cache not alive) of size entries;
 * false when the pool must refuse the size. */
static inline bool mtm_cache_create(mt_model *m, uint32_t c, uint32_t size) {
    if (size < 2 || size > OPOOL_MT_CACHE_MAX) return false;
    mtm_cache *q = &m->cache[c];
    uint32_t *ent = realloc(q->ent, size * sizeof *ent);
    if (ent == NULL) return false;
    q->ent = ent;
    q->alive = true;
    q->size = size;
    q->n = 0;
    return true;
}

/* opool_mt_cache_alloc through cache c. got: the index the pool returned. */
static inline bool mtm_cache_alloc(mt_model *m, uint32_t c, uint32_t got, uint64_t *out) {
    mtm_cache *q = &m->cache[c];
    *out = 0;
    if (q->n > 0) {
        *out = mtm__hand_out(m, mtm__unpark(m, c, q->n - 1));
        return true;
    }
    uint32_t k;
    while ((k = mtm__pop(m, mtm__half(q))) == 0) {
        uint32_t i = mtm__steal_one(m, got);
        if (i != MTM_NONE) {
            *out = mtm__hand_out(m, i);
            return true;
        }
        if (!mtm__grow(m)) {
            mtm__failed(m);
            return false;
        }
    }
    /* s1 .. sk, one pop: s1 is handed out, s2 is parked newest (ent[k - 2])
     * and sk oldest (ent[0]) */
    for (uint32_t j = 2; j <= k; j++) q->ent[k - j] = m->scratch[j - 1];
    q->n = k - 1;
    *out = mtm__hand_out(m, m->scratch[0]);
    return true;
}

/* opool_mt_cache_free through cache c (no thread waits: one thread). */
static inline opool_status mtm_cache_free(mt_model *m, uint32_t c, uint64_t h) {
    opool_status s = mtm__validate(m, h);
    if (s != OPOOL_OK) return s;
    uint32_t i = (uint32_t)h;
    if (!mtm__free_live(m, i)) return OPOOL_OK;
    mtm_cache *q = &m->cache[c];
    if (q->n == q->size) mtm__push_oldest(m, c, mtm__half(q));
    q->ent[q->n++] = i;
    return OPOOL_OK;
}

/* opool_mt_cache_alloc_bulk: cache_alloc calls in order, up to n, stopping at
 * the first that fails. Section 2 says "exactly n cache_alloc calls", which
 * would count every call after the pool ran out as a failed alloc; the
 * header's "see opool_mt_alloc_bulk" (one failed alloc for a short bulk call)
 * is what the model follows: with one thread, once a call fails all the
 * following ones would, so only the count differs. */
static inline uint32_t mtm_cache_alloc_bulk(mt_model *m, uint32_t c, uint32_t n,
                                            const uint32_t *got, uint64_t *out) {
    uint32_t k = 0;
    while (k < n) {
        uint64_t bits;
        if (!mtm_cache_alloc(m, c, got[k], &bits)) break;
        out[k++] = bits;
    }
    return k;
}

/* opool_mt_cache_free_bulk: exactly n cache_free calls in order. */
static inline uint32_t mtm_cache_free_bulk(mt_model *m, uint32_t c, const uint64_t *hs,
                                           uint32_t n) {
    uint32_t freed = 0;
    for (uint32_t k = 0; k < n; k++) freed += mtm_cache_free(m, c, hs[k]) == OPOOL_OK;
    return freed;
}

/* opool_mt_cache_flush: every parked slot to the shared list, the newest on top. */
static inline void mtm_cache_flush(mt_model *m, uint32_t c) {
    mtm__push_oldest(m, c, m->cache[c].n);
}

/* opool_mt_cache_destroy. */
static inline void mtm_cache_destroy(mt_model *m, uint32_t c) {
    mtm_cache_flush(m, c);
    m->cache[c].alive = false;
}

/* opool__mt_set_gen: the generation of a free slot in the shared list. */
static inline bool mtm_set_gen(mt_model *m, uint32_t i, uint32_t gen) {
    if (i >= m->capacity || (gen & 1) != 0 || !mtm_in_stack(m, i)) return false;
    m->gen[i] = gen;
    return true;
}

/* opool_mt_destroy: fini of every live slot (in index order; the pool's order
 * is free). */
/* Destroy: objects left live are reported once, OPOOL_ELEAK with the first
 * live slot's handle; fini runs on each. */
static inline void mtm_destroy(mt_model *m) {
    bool leak = false;
    for (uint32_t i = 0; i < m->capacity; i++) {
        if (!mtm_is_live(m, i)) continue;
        if (!leak) mtm__report(m, OPOOL_ELEAK, mtm_bits(m->gen[i], i));
        leak = true;
    }
    for (uint32_t i = 0; i < m->capacity; i++)
        if (mtm_is_live(m, i)) m->fini_log[m->nfini++] = i;
}

#endif /* OPOOL_MT_MODEL_H */
