/*
 * model.h -- the reference model of the core pool: the oracle of the
 * differential tests.
 *
 * It is written to be obviously right, not fast: plain arrays indexed by
 * slot, each rule of the contract spelled out once, no shortcuts shared with
 * src/opool.c. It holds no object memory; it predicts every handle, status,
 * callback, roster entry and statistic a real pool built from the same desc
 * must produce.
 *
 * The rules it encodes, as include/opool.h states them (the top comment:
 * HOW IT WORKS and ITERATION, and each function's comment):
 *   - handle = generation << 32 | index; a slot's generation is odd while
 *     live; every slot starts at gen0 = salt & ~1;
 *   - roster[0, count) is the live list, roster[count, limit) the free
 *     stack with its top at position count; limit is the usable capacity;
 *   - alloc takes roster[count++]; free swaps the last live entry into the
 *     hole and puts the freed slot on top of the free stack (LIFO); an
 *     alloc right after a free swaps that move back (the new object takes
 *     the hole, the moved entry returns to the end);
 *   - growth adds chunks (first: capacity rounded up to a power of two,
 *     then each as large as all before it, capped at max_capacity), their
 *     slots appended to the free stack in ascending index order;
 *   - RETIRE_ON_WRAP takes out of the roster for good a slot whose
 *     generation, in the bits a compact handle keeps (the low 32 - k, k the
 *     index bits of the pool's index limit), comes back to gen0's;
 *   - a compact handle is generation << k | index for a live handle, {0}
 *     otherwise (and for pools whose limit exceeds 2^31); expanding gives
 *     the current handle of the slot it names when their bits agree;
 *   - retain frees, in backward-loop order, the objects keep rejects;
 *   - shrink drops grown chunks without live objects, keeping generations;
 *   - OPOOL_NO_LIVE_LIST (NO LIVE LIST): the free stack is a chain, so a
 *     slot that leaves it otherwise than from the top (a retirement,
 *     alloc_at) leaves the others' order as it was; there is nothing to
 *     iterate: live_handle/live_object give nothing, and retain, sort and
 *     the loops report OPOOL_EINVAL (handle 0). roster[0, count) still
 *     lists the live slots, in an order nobody can see.
 */
#ifndef OPOOL_MODEL_H
#define OPOOL_MODEL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "opool.h"

#define MODEL_NOPOS UINT32_MAX
#define MODEL_MAX_CHUNKS 40
#define MODEL_MAX_REPORTS 16

typedef struct model_report {
    opool_status what;
    uint64_t handle;
} model_report;

typedef struct model model;
/* The model's twin of desc.evict: returns the victim's handle bits. */
typedef uint64_t (*model_evict_fn)(const model *m, void *user);

struct model {
    /* configuration */
    opool_full_policy policy;
    uint32_t flags;
    uint32_t gen0;
    uint32_t capacity; /* desc.capacity */
    uint32_t max;      /* slots the pool may ever hold: max_capacity for GROW, else capacity */
    uint32_t nchunks;  /* chunks the pool may ever have */
    uint32_t lo[MODEL_MAX_CHUNKS], hi[MODEL_MAX_CHUNKS]; /* chunk c holds [lo, hi) */
    bool present[MODEL_MAX_CHUNKS];                      /* chunk c has storage now */
    uint32_t nslots; /* slot records (up to the end of the highest chunk ever
                        added): a handle with index >= nslots is EINVAL */
    uint32_t made;   /* a pool that never grows makes its slots as allocs need
                        them, [0, made) so far; a growing pool: max */

    /* per slot, [max] */
    uint32_t *gen;
    uint32_t *pos; /* roster position, MODEL_NOPOS if retired or without storage */
    uint32_t *roster;
    bool *retired;

    uint32_t count, limit;
    uint32_t undo;    /* 1 + where the last free moved the last live entry; 0: none */
    uint64_t episode; /* failed allocs of the open exhaustion episode; 0: none */

    /* statistics */
    uint32_t high_water, retired_count;
    uint64_t allocs, frees, failed_allocs, rejected, evictions, grows;
    /* the run's: episodes opened; the allocs failed since one succeeded or
     * a free (run), counted from run_mark (allocs + frees then); the most
     * objects wanted at once */
    uint64_t episodes, run_mark;
    uint32_t run, peak_demand;

    /* callbacks the last operation made (cleared by model_begin) */
    uint32_t *fini_log; /* slot indexes, in call order, [max] */
    uint32_t nfini;
    uint32_t ninit;
    model_report reports[MODEL_MAX_REPORTS];
    uint32_t nreports;
    uint32_t evict_calls;

    model_evict_fn evict;
    void *evict_user;
};

/* ---- setup -------------------------------------------------------------- */

static inline uint64_t model__next_pow2(uint64_t x) {
    uint64_t p = 1;
    while (p < x) p *= 2;
    return p;
}

/* Builds the model of a pool created from desc (which must be valid) whose
 * generations start at gen0 (= salt & ~1). Returns false if out of memory. */
static inline bool model_init(model *m, const opool_desc *d, uint32_t gen0) {
    memset(m, 0, sizeof *m);
    m->policy = d->on_full;
    m->flags = d->flags;
    m->gen0 = gen0 & ~1u;
    m->capacity = d->capacity;
    m->max = d->capacity;
    if (d->on_full == OPOOL_FULL_GROW && d->max_capacity > d->capacity) m->max = d->max_capacity;

    if (m->max == m->capacity) {
        m->nchunks = 1;
        m->lo[0] = 0;
        m->hi[0] = m->capacity;
    } else {
        uint64_t s = model__next_pow2(m->capacity);
        if (s > m->max) s = m->max;
        m->lo[0] = 0;
        m->hi[0] = (uint32_t)s;
        m->nchunks = 1;
        while (m->hi[m->nchunks - 1] < m->max) {
            uint32_t c = m->nchunks++;
            uint64_t hi = s << c;
            m->lo[c] = (uint32_t)(s << (c - 1));
            m->hi[c] = hi < m->max ? (uint32_t)hi : m->max;
        }
    }

    m->gen = calloc(m->max, sizeof *m->gen);
    m->pos = calloc(m->max, sizeof *m->pos);
    m->roster = calloc(m->max, sizeof *m->roster);
    m->retired = calloc(m->max, sizeof *m->retired);
    m->fini_log = calloc(m->max, sizeof *m->fini_log);
    if (!m->gen || !m->pos || !m->roster || !m->retired || !m->fini_log) return false;

    for (uint32_t i = 0; i < m->max; i++) {
        m->gen[i] = m->gen0;
        m->pos[i] = MODEL_NOPOS;
    }
    /* slot records exist for chunk 0 now; each chunk added later extends
     * them (a handle's index below nslots is in range); a pool that never
     * grows has made none of them yet */
    m->nslots = m->hi[0];
    m->present[0] = true;
    m->made = m->max == m->capacity ? 0 : m->max;
    for (uint32_t i = m->lo[0]; i < m->hi[0] && i < m->made; i++) {
        m->roster[m->limit] = i;
        m->pos[i] = m->limit++;
    }
    return true;
}

/* The slot records the pool has: the slots made, of those in range. */
static inline uint32_t model_records(const model *m) {
    return m->made < m->nslots ? m->made : m->nslots;
}

/* opool_capacity: the slots in the free stack or the live list, and those
 * still to make. */
static inline uint32_t model_capacity(const model *m) { return m->limit + (m->max - m->made); }

static inline void model_fini(model *m) {
    free(m->gen);
    free(m->pos);
    free(m->roster);
    free(m->retired);
    free(m->fini_log);
    memset(m, 0, sizeof *m);
}

/* Forget the callbacks of the previous operation. */
static inline void model_begin(model *m) {
    m->nfini = 0;
    m->ninit = 0;
    m->nreports = 0;
    m->evict_calls = 0;
}

/* ---- queries ------------------------------------------------------------ */

/* Index bits of a compact handle: the smallest k with 2^k >= max; 32: none. */
static inline uint32_t model_index_bits(const model *m) {
    uint32_t k = 0;
    while (k < 32 && ((uint64_t)1 << k) < m->max) k++;
    return k;
}

/* A freed generation g retires its slot (RETIRE_ON_WRAP): the generation
 * bits a compact handle keeps are gen0's again. */
static inline bool model_wraps(const model *m, uint32_t g) {
    uint32_t k = model_index_bits(m);
    uint32_t kept = k == 0 || k >= 32 ? 32 : 32 - k;
    uint64_t period = (uint64_t)1 << kept;
    return (m->flags & OPOOL_RETIRE_ON_WRAP) && ((uint64_t)g - m->gen0 + period) % period == 0;
}

static inline uint64_t model_bits(uint32_t gen, uint32_t index) {
    return (uint64_t)gen << 32 | index;
}

static inline uint32_t model_chunk_of(const model *m, uint32_t i) {
    for (uint32_t c = 0; c < m->nchunks; c++)
        if (i >= m->lo[c] && i < m->hi[c]) return c;
    return MODEL_NOPOS;
}

static inline bool model_has_storage(const model *m, uint32_t i) {
    uint32_t c = model_chunk_of(m, i);
    return c != MODEL_NOPOS && m->present[c] && i < m->made;
}

static inline bool model_is_live(const model *m, uint32_t i) {
    return i < m->nslots && (m->gen[i] & 1) != 0;
}

/* How every handle-taking function sees h. */
static inline opool_status model_classify(const model *m, uint64_t h) {
    uint32_t i = (uint32_t)h, g = (uint32_t)(h >> 32);
    if ((g & 1) == 0 || i >= m->nslots) return OPOOL_EINVAL;
    if (m->gen[i] != g) return OPOOL_ESTALE;
    return OPOOL_OK;
}

static inline bool model_get(const model *m, uint64_t h) {
    return model_classify(m, h) == OPOOL_OK;
}

static inline bool model_at(const model *m, uint32_t i) { return model_is_live(m, i); }

/* The slot of live roster entry k < count. */
static inline uint32_t model_live_slot(const model *m, uint32_t k) { return m->roster[k]; }

/* Handle bits of the i-th live roster entry, 0 out of range. */
static inline uint64_t model_live_handle(const model *m, uint32_t k) {
    if (k >= m->count) return 0;
    uint32_t s = model_live_slot(m, k);
    return model_bits(m->gen[s], s);
}

static inline void model_stats(const model *m, opool_stats *s) {
    memset(s, 0, sizeof *s);
    s->version = OPOOL_STATS_VERSION;
    s->capacity = model_capacity(m);
    s->max_capacity = m->max;
    s->count = m->count;
    s->high_water = m->high_water;
    s->retired = m->retired_count;
    s->allocs = m->allocs;
    s->frees = m->frees;
    s->failed_allocs = m->failed_allocs;
    s->rejected_handles = m->rejected;
    s->evictions = m->evictions;
    s->grows = m->grows;
    s->episodes = m->episodes;
    s->peak_demand = m->peak_demand;
}

/* A loaded pool starts the run's statistics again (docs/FORMAT.md). */
static inline void model_new_run(model *m) {
    m->episodes = m->run_mark = 0;
    m->run = m->peak_demand = 0;
}

/* ---- internal steps ----------------------------------------------------- */

static inline void model__report(model *m, opool_status what, uint64_t h) {
    if (m->nreports < MODEL_MAX_REPORTS) m->reports[m->nreports] = (model_report){what, h};
    m->nreports++;
}

static inline void model__set(model *m, uint32_t position, uint32_t slot) {
    m->roster[position] = slot;
    m->pos[slot] = position;
}

/* Whether the pool keeps a live list (no OPOOL_NO_LIVE_LIST). */
static inline bool model_lists(const model *m) { return !(m->flags & OPOOL_NO_LIVE_LIST); }

/* A pool without a live list was asked to loop over it. */
static inline void model_refuse_loop(model *m) { model__report(m, OPOOL_EINVAL, 0); }

/* Free slot i leaves the free stack: the entries below it move up one
 * (a chain's order: the others keep theirs), and the free part ends one
 * earlier. */
static inline void model__chain_cut(model *m, uint32_t i) {
    for (uint32_t k = m->pos[i]; k + 1 < m->limit; k++) model__set(m, k, m->roster[k + 1]);
}

/* Slot i, just freed and sitting on top of the free stack, leaves the roster:
 * the roster's last entry takes its place, or the chain closes over it. */
static inline void model__retire(model *m, uint32_t i) {
    uint32_t at = m->pos[i], last = m->limit - 1;
    if (!model_lists(m))
        model__chain_cut(m, i);
    else if (at != last)
        model__set(m, at, m->roster[last]);
    m->limit--;
    m->pos[i] = MODEL_NOPOS;
    m->retired[i] = true;
    m->retired_count++;
}

/* Free live slot i: fini, generation +1, the last live entry moves into
 * its place and it goes on top of the free stack, maybe retire. */
static inline void model__free_live(model *m, uint32_t i) {
    m->fini_log[m->nfini++] = i;
    uint32_t at = m->pos[i], last = m->roster[m->count - 1];
    m->count--;
    model__set(m, at, last);
    model__set(m, m->count, i);
    if (model_lists(m)) m->undo = at < m->count ? at + 1 : 0; /* none if i was last */
    m->gen[i]++;
    m->frees++;
    if (model_wraps(m, m->gen[i])) model__retire(m, i);
    /* recovered: a quarter of the usable slots (rounded up) free again */
    if (m->count <= m->limit - (m->limit + 3) / 4) m->episode = 0;
}

/* Add chunk c: its usable slots go to the bottom of the free stack, ascending. */
static inline void model__add_chunk(model *m, uint32_t c) {
    m->present[c] = true;
    m->grows++;
    if (m->hi[c] > m->nslots) m->nslots = m->hi[c];
    for (uint32_t i = m->lo[c]; i < m->hi[c]; i++) {
        if (m->retired[i]) continue;
        model__set(m, m->limit++, i);
    }
}

/* A pool that never grows makes its next slots when none is free: as many
 * as it has made, 64 at least, 65536 at most; they go to the bottom of the
 * free stack, ascending. False when every slot is made. */
static inline bool model__make_more(model *m) {
    if (m->made == m->max) return false;
    uint32_t n = m->made, batch = n < 64 ? 64 : n > 65536 ? 65536 : n;
    uint32_t hi = m->max - n < batch ? m->max : n + batch;
    for (uint32_t i = n; i < hi; i++) model__set(m, m->limit++, i);
    m->made = hi;
    return true;
}

/* opool_load: the loaded pool has made every slot. */
static inline void model_load(model *m) {
    while (model__make_more(m)) continue;
}

/* The lowest chunk without storage, MODEL_NOPOS if all have it. */
static inline uint32_t model__missing_chunk(const model *m) {
    for (uint32_t c = 0; c < m->nchunks; c++)
        if (!m->present[c]) return c;
    return MODEL_NOPOS;
}

/* Take the top of the free stack (roster position count) with generation
 * g: it becomes the last live entry; right after a free (undo set), it takes
 * back the place the free moved the last entry into, and that entry goes
 * back to the end. */
static inline void model__take(model *m, uint32_t g) {
    uint32_t n = m->count, i = m->roster[n];
    if (m->undo != 0 && m->undo - 1 < n) {
        model__set(m, n, m->roster[m->undo - 1]);
        model__set(m, m->undo - 1, i);
    }
    m->undo = 0;
    m->count++;
    m->gen[i] = g;
    m->allocs++;
    if (m->count > m->high_water) m->high_water = m->count;
}

/* ---- operations (each mirrors one public function) ------------------------ */

/* opool_alloc: true and *out = the handle bits, or false (*out = 0). */
static inline bool model_alloc(model *m, uint64_t *out) {
    *out = 0;
    if (m->count == m->limit && !model__make_more(m)) {
        if (m->policy == OPOOL_FULL_GROW) {
            uint32_t c;
            while (m->count == m->limit && (c = model__missing_chunk(m)) != MODEL_NOPOS)
                model__add_chunk(m, c);
        } else if (m->policy == OPOOL_FULL_EVICT) {
            m->evict_calls++;
            uint64_t victim = m->evict ? m->evict(m, m->evict_user) : 0;
            if (model_classify(m, victim) == OPOOL_OK) {
                model__free_live(m, (uint32_t)victim);
                m->evictions++;
            }
        }
        if (m->count == m->limit) {
            m->failed_allocs++;
            uint64_t done = m->allocs + m->frees;
            if (done != m->run_mark) m->run = 0;
            m->run_mark = done;
            m->run++;
            if (m->count + m->run > m->peak_demand) m->peak_demand = m->count + m->run;
            /* reported at the episode's 1st, 2nd, 4th, 8th... failure */
            if (m->episode++ == 0) m->episodes++;
            if ((m->episode & (m->episode - 1)) == 0) model__report(m, OPOOL_EFULL, 0);
            return false;
        }
    }
    uint32_t i = m->roster[m->count];
    model__take(m, m->gen[i] + 1);
    m->ninit++;
    *out = model_bits(m->gen[i], i);
    return true;
}

/* opool_alloc_at: true when the object is re-created at exactly h; a
 * refusal is reported (opool.h, MISUSE). */
static inline bool model_alloc_at(model *m, uint64_t h) {
    uint32_t i = (uint32_t)h, g = (uint32_t)(h >> 32);
    if ((g & 1) == 0 || i >= m->max) { /* never issued: reported */
        model__report(m, OPOOL_EINVAL, h);
        return false;
    }
    if (m->retired[i] || (m->gen[i] & 1) != 0) { /* a slot taken: reported */
        model__report(m, OPOOL_EBUSY, h);
        return false;
    }
    while (i >= m->made) model__make_more(m);
    if (m->policy == OPOOL_FULL_GROW) {
        while (!model_has_storage(m, i)) model__add_chunk(m, model__missing_chunk(m));
    }
    uint32_t at = m->pos[i], j = m->roster[m->count];
    if (model_lists(m)) { /* the free stack's top takes i's place */
        model__set(m, at, j);
    } else { /* the chain closes over i: the free slots above it move down one */
        for (uint32_t k = at; k > m->count; k--) model__set(m, k, m->roster[k - 1]);
    }
    model__set(m, m->count, i);
    uint32_t undo = m->undo; /* its take undoes nothing, and leaves the undo */
    m->undo = 0;
    model__take(m, g);
    m->undo = undo;
    m->ninit++;
    return true;
}

/* opool_free. */
static inline opool_status model_free(model *m, uint64_t h) {
    opool_status s = model_classify(m, h);
    if (s != OPOOL_OK) {
        m->rejected++;
        model__report(m, s, h);
        return s;
    }
    model__free_live(m, (uint32_t)h);
    return OPOOL_OK;
}

/* opool_free_object, for a pointer that is the start of slot index's object
 * (index = MODEL_NOPOS for a pointer that is no slot's start). */
static inline opool_status model_free_object(model *m, uint32_t index) {
    if (index == MODEL_NOPOS || !model_is_live(m, index)) {
        m->rejected++;
        model__report(m, OPOOL_EINVAL, 0);
        return OPOOL_EINVAL;
    }
    model__free_live(m, index);
    return OPOOL_OK;
}

/* opool_count (every loop's start: OPOOL_FOREACH, range-for): an alloc
 * after it appends, even right after a free. Reading an entry below count
 * (opool_live_handle, opool_live_object) leaves the undo. */
static inline uint32_t model_loop_start(model *m) {
    m->undo = 0;
    return m->count;
}

/* A read past the live list's end (opool_live_handle, opool_live_object,
 * the loops' test at each index): ends the undo, as a loop's start. */
static inline void model_read_past_end(model *m) { (void)model_loop_start(m); }

/* opool_clear. */
static inline void model_clear(model *m) {
    for (uint32_t k = 0; k < m->count; k++) {
        uint32_t i = m->roster[k];
        m->fini_log[m->nfini++] = i;
        m->gen[i]++;
        if (model_wraps(m, m->gen[i])) {
            m->retired[i] = true;
            m->retired_count++;
        }
    }
    if (m->count > 0) m->episode = 0; /* the last free leaves none live */
    m->frees += m->count;
    m->count = m->undo = 0;
    m->limit = 0;
    for (uint32_t i = 0; i < m->max; i++) {
        if (!model_has_storage(m, i)) continue;
        if (m->retired[i]) {
            m->pos[i] = MODEL_NOPOS;
            continue;
        }
        model__set(m, m->limit++, i);
    }
}

static inline int model__cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* opool_sort. */
static inline void model_sort(model *m) {
    if (!model_lists(m)) {
        model_refuse_loop(m);
        return;
    }
    if (m->count > 1) qsort(m->roster, m->count, sizeof *m->roster, model__cmp_u32);
    for (uint32_t k = 0; k < m->count; k++) m->pos[m->roster[k]] = k;
    m->undo = 0;
}

/* opool_shrink: the number of usable slots released. */
static inline uint32_t model_shrink(model *m) {
    uint32_t released = 0;
    for (uint32_t c = 1; c < m->nchunks; c++) {
        if (!m->present[c]) continue;
        bool empty = true;
        for (uint32_t i = m->lo[c]; i < m->hi[c]; i++)
            if (model_is_live(m, i)) empty = false;
        if (!empty) continue;
        m->present[c] = false;
        for (uint32_t i = m->lo[c]; i < m->hi[c]; i++) {
            if (!m->retired[i]) released++;
            m->pos[i] = MODEL_NOPOS;
        }
    }
    /* compact the free stack, keeping the order of what stays */
    uint32_t w = m->count;
    for (uint32_t k = m->count; k < m->limit; k++) {
        uint32_t i = m->roster[k];
        if (model_has_storage(m, i)) model__set(m, w++, i);
    }
    m->limit = w;
    if (released > 0) m->undo = 0;
    return released;
}

/* opool_handle_at: the live slot's handle bits, 0 otherwise. */
static inline uint64_t model_handle_at(const model *m, uint32_t i) {
    return model_is_live(m, i) ? model_bits(m->gen[i], i) : 0;
}

/* opool_handle_compact: bits of the compact handle of h, 0 unless h is live
 * (and the pool has compact handles). */
static inline uint32_t model_compact(const model *m, uint64_t h) {
    uint32_t k = model_index_bits(m);
    if (k >= 32 || model_classify(m, h) != OPOOL_OK) return 0;
    uint32_t i = (uint32_t)h, g = (uint32_t)(h >> 32);
    uint64_t gbits = g % ((uint64_t)1 << (32 - k)); /* the generation's low 32 - k bits */
    return (uint32_t)(gbits << k) + i;
}

/* opool_handle_expand: the current handle bits of the live slot c names
 * when its generation agrees in the kept bits, else 0. */
static inline uint64_t model_expand(const model *m, uint32_t c) {
    uint32_t k = model_index_bits(m);
    if (k >= 32) return 0;
    uint32_t i = (uint32_t)(c % ((uint64_t)1 << k));
    if (!model_is_live(m, i)) return 0;
    uint64_t h = model_bits(m->gen[i], i);
    return model_compact(m, h) == c ? h : 0;
}

/* opool_retain with keep(handle bits) deciding; no allocation or other
 * frees inside keep. Returns the number freed; fini_log has them in order. */
static inline uint32_t model_retain(model *m, bool (*keep)(uint64_t h, void *user), void *user) {
    uint32_t freed = 0;
    if (!model_lists(m)) {
        model_refuse_loop(m);
        return 0;
    }
    for (uint32_t k = m->count; k-- > 0;) {
        uint32_t i = m->roster[k];
        model_loop_start(m); /* opool_retain's loop ends the undo at each entry */
        if (keep(model_bits(m->gen[i], i), user)) continue;
        model__free_live(m, i);
        freed++;
    }
    return freed;
}

#endif /* OPOOL_MODEL_H */
