/*
 * opool.c -- the single-threaded generational pool (see include/opool.h).
 *
 * The pool's layout is in opool_internal.h. Sections (grep for "==== "):
 *   ==== geometry            desc validation and sizes, shared by create paths
 *   ==== memory              allocator, chunks, slot arrays
 *   ==== reports             findings of a pool, through opool_diag.h
 *   ==== slots               the roster operations every path goes through
 *   ==== restore             rebuilding a saved pool's state (for opool_save.c's load)
 *   ==== public              the API
 */
#include "opool_internal.h"
#include "opool_platform.h"
#include "opool_diag.h"

/* ==== geometry =========================================================== */

static uint32_t opool__ceil_log2(uint32_t x) {
    uint32_t s = 0;
    while (s < 32 && ((uint64_t)1 << s) < x) s++;
    return s;
}

/* Validate desc and work out sizes; false for every invalid desc. */
bool opool__geometry_of(const opool_desc *d, opool__geometry *g) {
    if (d == NULL || d->capacity == 0) return false; /* object_size 0: an id-only pool */
    if (d->capacity > OPOOL_MAX_CAPACITY || d->max_capacity > OPOOL_MAX_CAPACITY) return false;
    if (d->max_capacity != 0 && d->max_capacity < d->capacity) return false;
    if ((d->flags & ~(uint32_t)OPOOL__FLAGS_ALL) != 0) return false;
    if (d->on_full != OPOOL_FULL_FAIL && d->on_full != OPOOL_FULL_GROW &&
        d->on_full != OPOOL_FULL_EVICT)
        return false;
    if (d->on_full == OPOOL_FULL_EVICT && d->evict == NULL) return false;
    if (d->on_full == OPOOL_FULL_GROW && (d->flags & OPOOL_FIXED)) return false;
    if ((d->allocator.alloc == NULL) !=
        (d->allocator.free == NULL && d->allocator.free_aligned == NULL))
        return false;
    if ((d->save_object == NULL) != (d->load_object == NULL)) return false;

    size_t align = opool__object_align(d), stride;
    if ((align & (align - 1)) != 0 || align > 4096) return false;
    if (!opool__stride_of(d->object_size, align, &stride)) return false;

    uint32_t maxcap = d->capacity;
    g->shift = 32; /* fixed: one chunk, every index in it */
    if (d->on_full == OPOOL_FULL_GROW && d->max_capacity > d->capacity) {
        maxcap = d->max_capacity;
        g->shift = opool__ceil_log2(d->capacity);
    }
    uint64_t first = g->shift == 32 ? d->capacity : (uint64_t)1 << g->shift;
    g->first = (uint32_t)(first < maxcap ? first : maxcap);
    g->max_capacity = maxcap;
    g->stride = stride;
    g->align = align > OPOOL__LINE ? align : OPOOL__LINE;

    /* every object the pool could ever hold must be addressable; the slot
     * arrays of the first chunk too (12 bytes a slot: past SIZE_MAX on a
     * 32-bit machine from 358M slots, which an id-only pool may ask for).
     * A growth checks its own arrays (opool__reserve_slots). */
    size_t all_objects, first_objects, arrays, total;
    if (!opool__mul_ok(stride, maxcap, &all_objects)) return false;
    (void)all_objects;
    first_objects = stride * g->first;
    if (!opool__arrays_fit(d->flags, g->first, &arrays)) return false;
    if (!opool__add_ok(sizeof(struct opool), arrays, &total)) return false;
    g->objects_at = total;
    if (!opool__add_ok(total, g->align - 1, &total)) return false;
    if (!opool__add_ok(total, first_objects, &total)) return false;
    if (!opool__add_ok(total, OPOOL__LINE - 1, &total)) return false;
    g->required = total;
    return true;
}

/* The index range [lo, hi) of p's chunk c (opool__span_lo/hi). */
uint64_t opool__chunk_lo(const opool *p, uint32_t c) { return opool__span_lo(p->hot.shift, c); }

uint32_t opool__chunk_hi(const opool *p, uint32_t c) {
    return opool__span_hi(p->hot.shift, p->max_capacity, c);
}

size_t opool__chunk_bytes(const opool *p, uint32_t c) {
    return (size_t)(opool__chunk_hi(p, c) - opool__chunk_lo(p, c)) * p->hot.stride;
}

bool opool__chunk_backed(const opool *p, uint32_t c) { return c == 0 || p->hot.base[c] != NULL; }

/* Storage for chunk c (>= 1): the allocator's, or for an id-only pool
 * (stride 0: no bytes to ask for) chunk 0's address, the token every alloc
 * returns. NULL when memory is not there. */
char *opool__chunk_storage(const opool *p, uint32_t c) {
    if (p->hot.stride == 0) return p->hot.base[0];
#ifdef OPOOL__ALLOC_CALL
        /*@ OPOOL__ALLOC_CALL */
#endif
    return (char *)p->mem.alloc(p->mem.ctx, opool__chunk_bytes(p, c),
                                opool__object_align(&p->desc));
}

/* Chunk c, which had none, takes its storage mem (the growth's one write
 * to the chunk bases). */
static inline void opool__back_chunk(opool *p, uint32_t c, char *mem) { p->hot.base[c] = mem; }

/* Give chunk c's storage back (shrink, destroy). */
void opool__chunk_free(opool *p, uint32_t c) {
    if (p->hot.stride != 0) {
        opool__mem_defined(p->hot.base[c], opool__chunk_bytes(p, c));
        opool__mem_free(&p->mem, p->hot.base[c], opool__chunk_bytes(p, c),
                        opool__object_align(&p->desc));
    }
    p->hot.base[c] = NULL;
}

/* ==== memory ============================================================= */

/* desc's allocator with the defaults filled in (the C library when it has
 * none): what a pool built from desc allocates with. */
opool_allocator opool__allocator_of(const opool_desc *d) {
    opool_allocator a = d->allocator;
    if (a.alloc == NULL) {
        a.alloc = opool__sys_alloc;
        a.free = opool__sys_free;
        a.free_aligned = NULL;
        a.ctx = NULL;
    }
    return a;
}

/* The n slots from first_obj have just become free (or were born free):
 * poison them, hide them (opool_track.h). */
void opool__range_freed(opool *p, char *first_obj, uint32_t n) {
    bool poison = (p->desc.flags & OPOOL_POISON) != 0;
    if (!poison && !p->checker) return;
    size_t stride = p->hot.stride;
#ifdef OPOOL__POISON_LOOP
    /*@ OPOOL__POISON_LOOP */
#endif
    for (uint32_t k = 0; k < n; k++)
        opool__track_on_free(first_obj + (size_t)k * stride, stride, 0, poison);
}

/* Why alloc and free must take the out-of-line path now (0: they need not). */
uint32_t opool__slow_bits(const opool *p) {
    const opool_desc *d = &p->desc;
    uint32_t s = 0;
    if (d->init || d->fini || (d->flags & (OPOOL_ZERO | OPOOL_POISON | OPOOL_RETIRE_ON_WRAP)) ||
        p->checker)
        s |= OPOOL__SLOW_HOOKS;
    if (opool__episode_failures(&p->episode) != 0) s |= OPOOL__SLOW_EPISODE;
    if (d->flags & OPOOL_TRACK_SITES) s |= OPOOL__SLOW_SITES;
    return s;
}

/* The bounds of the inline alloc and free: alloc inline while count is
 * below min(limit, high_water) (so full pools and a new high water take the
 * slow path), free inline for indices below nslots; both 0 while hooks
 * need the slow path. An open episode sends only frees out of line (each
 * checks for its end); an alloc that succeeds has nothing to do for it. */
void opool__fast_bounds(const opool *p, uint32_t *fast_limit, uint32_t *free_limit) {
    const opool__hot *h = &p->hot;
    uint32_t slow = opool__slow_bits(p);
    *fast_limit = (slow & (OPOOL__SLOW_HOOKS | OPOOL__SLOW_SITES)) ? 0
                  : h->high_water < h->limit                       ? h->high_water
                                                                   : h->limit;
    *free_limit = slow ? 0 : h->nslots;
}

/* Recompute the bounds of the inline alloc/free. Called whenever the hooks,
 * the episode, the limit or the high water change. */
void opool__update_fast(opool *p) { opool__fast_bounds(p, &p->hot.fast_limit, &p->hot.free_limit); }

/* Make the slot and roster arrays hold at least n entries, keeping contents
 * (a pool without a live list has the slot array only). */
bool opool__reserve_slots(opool *p, uint32_t n) {
    if (n <= p->slot_cap) return true;
    size_t bytes;
    if (!opool__arrays_fit(p->desc.flags, n, &bytes)) return false;
    opool__slot *slot = (opool__slot *)p->mem.alloc(p->mem.ctx, bytes, OPOOL__ARRAY_ALIGN);
    if (slot == NULL) return false;
    memcpy(slot, p->hot.slot, (size_t)p->hot.nslots * sizeof(opool__slot));
    if (p->hot.roster) {
        uint32_t *roster = (uint32_t *)(slot + n);
        memcpy(roster, p->hot.roster, (size_t)p->hot.limit * sizeof(uint32_t));
        p->hot.roster = roster;
    }
    if (p->arrays_owned)
        opool__mem_free(&p->mem, p->hot.slot, opool__arrays_bytes(p->desc.flags, p->slot_cap),
                        OPOOL__ARRAY_ALIGN);
    p->hot.slot = slot;
    p->slot_cap = n;
    p->arrays_owned = true;
    return true;
}

/* ==== the free chain =====================================================
 * A pool created with OPOOL_NO_LIVE_LIST has no roster (hot.roster NULL):
 * its free stack is the chain of opool_abi.h, through the free slots' .pos,
 * whose pop and push are there. These are its other steps, each called
 * where the roster's would be. The proofs cover pools with a roster only;
 * the tests cover these (docs/PROOF.md, "Limits"). */

/* Whether the pool keeps a live list (a roster). */
static inline bool opool__listed(const opool *p) { return p->hot.roster != NULL; }

/* Free slot i leaves the chain: the link that names it (the chain's start
 * or the .pos of the slot before it) skips it. O(i's place in the chain):
 * a retirement cuts the slot just pushed, opool_alloc_at any. */
static inline void opool__chain_cut(opool__hot *h, uint32_t i) {
    uint32_t *at = &h->chain;
    while (*at != i) {
        /* i is in the chain, so the walk meets it before the end; bounded
         * all the same, so that no state of the records sends it past them */
        opool__assert(*at != OPOOL__CHAIN_END);
        if (*at >= h->nslots) return;
        at = &h->slot[*at].pos;
    }
    *at = h->slot[i].pos;
}

/* The free slots with storage become the chain, in ascending order (a
 * fresh pool's, and opool_clear's and opool_load's rebuild); returns how
 * many. A live slot's .pos may be anything but a marker. */
static uint32_t opool__chain_fill(opool__hot *h) {
    uint32_t *at = &h->chain, n = 0;
    for (uint32_t i = 0; i < h->nslots; i++) {
        uint32_t pos = h->slot[i].pos;
        if ((h->slot[i].gen & 1) || pos == OPOOL__RETIRED || pos == OPOOL__UNBACKED) continue;
        *at = i;
        at = &h->slot[i].pos;
        n++;
    }
    *at = OPOOL__CHAIN_END;
    return n;
}

/* The chain skips every slot of [lo, hi), keeping its order (shrink, before
 * it gives their chunk back). */
static void opool__chain_skip(opool__hot *h, uint32_t lo, uint32_t hi) {
    uint32_t *at = &h->chain;
    while (*at != OPOOL__CHAIN_END) {
        uint32_t i = *at;
        if (i >= lo && i < hi)
            *at = h->slot[i].pos;
        else
            at = &h->slot[i].pos;
    }
}

/* The growth of a pool without a live list (opool__enrol's counterpart):
 * the slots of [lo, hi) without storage join the chain's end, in ascending
 * order. */
static void opool__chain_enrol(opool__hot *h, uint32_t lo, uint32_t hi) {
    uint32_t *at = &h->chain;
    while (*at != OPOOL__CHAIN_END) at = &h->slot[*at].pos;
    for (uint32_t i = lo; i < hi; i++) {
        if (h->slot[i].pos != OPOOL__UNBACKED) continue;
        *at = i;
        at = &h->slot[i].pos;
        h->limit++;
    }
    *at = OPOOL__CHAIN_END;
}

/* The growth's steps. The blocks under #ifdef OPOOL__*_LOOP or
 * OPOOL__ALLOC_CALL in this file are annotations that proof/wp_core.c
 * defines for its own reading of the file; every build compiles them out
 * (docs/PROOF.md, "How the contracts reach the code"). */

/* The lowest chunk above 0 without storage; nchunks when each has it. */
static inline uint32_t opool__unbacked_chunk(const opool *p) {
    uint32_t c = 1;
#ifdef OPOOL__UNBACKED_LOOP
    /*@ OPOOL__UNBACKED_LOOP */
#endif
    while (c < p->nchunks && opool__chunk_backed(p, c)) c++;
    return c;
}

/* Slots [nslots, hi) come into being (hi above nslots): no storage yet, the
 * first generation. */
static inline void opool__born(opool *p, uint32_t hi) {
    opool__hot *h = &p->hot;
#ifdef OPOOL__BORN_LOOP
    /*@ OPOOL__BORN_LOOP */
#endif
    for (uint32_t i = h->nslots; i < hi; i++) {
        h->slot[i].gen = p->gen0;
        h->slot[i].pos = OPOOL__UNBACKED;
    }
    h->nslots = hi;
}

/* Slot i, outside the roster until now, takes the entry after the free
 * stack's last (the growth's one write to the roster). */
static inline void opool__join(opool *p, uint32_t i) {
    opool__roster_put(&p->hot, p->hot.limit++, i);
}

/* The slots of [lo, hi) without storage join the free stack, in ascending
 * order (one retired before shrink gave its chunk back stays retired). The
 * roster always has room, since none of them is in it and it holds a slot
 * at most once; the loop's bound on limit checks it anyway (a compare per
 * slot of a growth), so that no pool state, a corrupt one included, can make
 * it write past nslots entries. */
static inline void opool__enrol(opool *p, uint32_t lo, uint32_t hi) {
    opool__hot *h = &p->hot;
#ifdef OPOOL__ENROL_LOOP
    /*@ OPOOL__ENROL_LOOP */
#endif
    for (uint32_t i = lo; i < hi && h->limit < h->nslots; i++)
        if (h->slot[i].pos == OPOOL__UNBACKED) opool__join(p, i);
}

/* One growth more (the statistic). */
static inline void opool__count_grow(opool *p) { p->grows++; }

/* Give storage to the lowest chunk that has none; its slots join the free
 * stack in ascending order. False when no chunk is left or memory is not.
 * The arrays grow first: when the chunk's storage then fails, the pool is
 * whole as it was, only its arrays longer (the next growth's). The new
 * objects are poisoned before any slot names them. Keep the steps' order:
 * docs/PROOF.md, "How the contracts are written", says why. */
OPOOL_NOINLINE bool opool__grow(opool *p) {
    uint32_t c = opool__unbacked_chunk(p);
    if (c >= p->nchunks) return false;
    uint32_t lo = (uint32_t)opool__chunk_lo(p, c), hi = opool__chunk_hi(p, c);
    if (!opool__reserve_slots(p, hi)) return false;
    char *mem = opool__chunk_storage(p, c);
    if (mem == NULL) return false;
    opool__range_freed(p, mem, hi - lo);
    if (p->hot.nslots < hi) opool__born(p, hi);
    opool__back_chunk(p, c, mem);
    if (opool__listed(p))
        opool__enrol(p, lo, hi);
    else
        opool__chain_enrol(&p->hot, lo, hi);
    opool__count_grow(p);
    opool__update_fast(p);
    return true;
}

/* ==== making slots ========================================================
 * A pool that never grows (one chunk: shift 32) makes its slots as its high
 * water rises: creation writes no slot record and no roster entry, and
 * nslots (with first, which equals it in such a pool) counts the slots made
 * so far, slot_cap those its block holds. An alloc that finds no free slot
 * made, or an alloc_at beyond them, makes the next ones: as many as are
 * made already, at least OPOOL__MAKE_MIN and at most OPOOL__MAKE_MAX, so a
 * fill costs one out-of-line call per batch and touches no record long
 * before its slot is used. Every slot made is what creation made before:
 * its first generation, on the free stack's bottom in ascending order (the
 * chain's end without a live list). A loaded pool is made whole at once
 * (opool_load restores every record of its image). */
#define OPOOL__MAKE_MIN 64u
#define OPOOL__MAKE_MAX 65536u

/* Slots the pool's block holds and that are not made yet. */
uint32_t opool__unmade(const opool *p) {
    return p->hot.shift == 32 ? p->slot_cap - p->hot.nslots : 0;
}

/* Slots p can hold: those in the roster (or the chain) and those to make. */
static uint32_t opool__usable(const opool *p) { return p->hot.limit + opool__unmade(p); }

/* Slots [nslots, hi) of chunk 0 are made: at the first generation, they
 * join the free stack's bottom (the chain's end) in ascending order. One
 * plain loop over locals: the records and entries are all new. */
static void opool__make_to(opool *p, uint32_t hi) {
    opool__hot *h = &p->hot;
    opool__slot *slot = h->slot;
    uint32_t lo = h->nslots, gen0 = p->gen0, k = h->limit;
    if (lo >= hi) return;
    if (h->roster) {
        uint32_t *roster = h->roster;
        for (uint32_t i = lo; i < hi; i++, k++) {
            slot[i].gen = gen0;
            slot[i].pos = k;
            roster[k] = i;
        }
    } else {
        for (uint32_t i = lo; i < hi; i++) {
            slot[i].gen = gen0;
            slot[i].pos = i + 1;
        }
        slot[hi - 1].pos = OPOOL__CHAIN_END;
        uint32_t *at = &h->chain; /* its end: a link past the slots made */
        while (*at < lo) at = &slot[*at].pos;
        *at = lo;
    }
    h->nslots = hi;
    if (h->shift == 32) h->first = hi;
    h->limit += hi - lo;
}

/* The next batch: as many slots as are made, within the bounds above. */
static bool opool__make_more(opool *p) {
    uint32_t n = p->hot.nslots, more = opool__unmade(p);
    uint32_t lo = OPOOL__MAKE_MIN, hi = OPOOL__MAKE_MAX, batch = n < lo ? lo : n < hi ? n : hi;
    if (more == 0) return false;
    opool__make_to(p, n + (more < batch ? more : batch));
    opool__update_fast(p);
    return true;
}

/* ==== reports ============================================================ */

/* The end of a leak's line: where the oldest live objects were allocated,
 * or how to learn it. */
static void opool__leak_sites(const opool *p, char *buf, size_t size) {
    const char *where[4];
    uint32_t n = opool__oldest(p, NULL, where, 4);
    if (!(p->desc.flags & OPOOL_TRACK_SITES)) {
        snprintf(buf, size, " (OPOOL_TRACK_SITES tells where they were allocated)");
        return;
    }
    size_t at = (size_t)snprintf(buf, size, n ? "; the oldest allocated at " : "; no site known");
    for (uint32_t k = 0; k < n && at < size; k++)
        at += (size_t)snprintf(buf + at, size - at, "%s%s", k ? ", " : "", where[k]);
}

static bool opool__slot_of(const opool *p, const void *obj, uint32_t *i, bool *start);

/* The pool whose loop opool__no_live_list is refusing on this thread: its
 * report's default line says so. */
static _Thread_local const opool *opool__refusing;

/* The pointer opool_free_object is rejecting on this thread, and its pool. */
static _Thread_local const opool *opool__rejecting;
static _Thread_local const void *opool__rejected_ptr;

/* What a rejected handle or pointer was, from p's records: the misuse and,
 * in f, the slot concerned. */
static void opool__misuse_of(const opool *p, opool__finding *f) {
    const opool__hot *h = &p->hot;
    uint32_t i = opool_handle_index(f->handle);
    if (p == opool__rejecting && f->what == OPOOL_EINVAL) {
        /* opool_free_object: the object the pointer falls in, if any */
        uint32_t at = 0;
        bool start = false;
        if (!opool__slot_of(p, opool__rejected_ptr, &at, &start)) {
            f->ptr = opool__rejected_ptr;
            f->misuse = OPOOL__FOREIGN_POINTER;
            return;
        }
        f->handle = opool__handle(at, h->slot[at].gen);
        f->ptr = opool__rejected_ptr;
        f->misuse = !start                       ? OPOOL__INTERIOR_POINTER
                    : h->slot[at].gen != p->gen0 ? OPOOL__FREED_POINTER
                                                 : OPOOL__FOREIGN_POINTER; /* never used */
        return;
    }
    /* (a slot not made yet is at its first generation) */
    opool__diag_misuse(f, h->nslots + opool__unmade(p), p->gen0,
                       i < h->nslots ? h->slot[i].gen : p->gen0);
    if (f->misuse == OPOOL__LIVE_SLOT && h->slot[i].pos == OPOOL__RETIRED)
        f->misuse = OPOOL__RETIRED_SLOT;
}

void opool_default_report(opool *p, opool_status what, opool_handle h, void *user) {
    (void)user;
    if (p == NULL && opool__diag_default_reporting()) return; /* a failed load's line */
    opool__finding f = opool__finding_of(OPOOL__KIND_POOL, what, p, p ? p->desc.name : NULL);
    f.handle = h;
    f.iterate = p != NULL && p == opool__refusing && what == OPOOL_EINVAL;
    char sites[320] = "";
    if (p != NULL) {
        f.failures = opool__episode_failures(&p->episode);
        f.count = p->hot.count;
        f.capacity = opool__usable(p);
        f.loud = (p->desc.flags & OPOOL_REPORT_MISUSE) != 0;
        if (!f.iterate) opool__misuse_of(p, &f);
        if (what == OPOOL_ELEAK) opool__leak_sites(p, sites, sizeof sites);
        f.detail = sites;
    }
    opool__diag_default(&f);
}

void opool__report(opool *p, opool_status what, opool_handle h) {
    opool__held outer = {0, 0};
    if (what == OPOOL_EFULL && !(p->desc.flags & OPOOL_REPORT_UNRATIONED) &&
        !opool__diag_admit(&p->quota, opool__episode_failures(&p->episode) == 1, &outer))
        return;
    if (p->desc.report)
        p->desc.report(p, what, h, p->desc.user);
    else
        opool_default_report(p, what, h, p->desc.user);
    if (what == OPOOL_EFULL) opool__diag_admitted(&outer);
}

uint32_t opool__no_live_list(const opool *p) {
    const opool *outer = opool__refusing;
    opool__refusing = p;
    opool__report((opool *)(uintptr_t)p, OPOOL_EINVAL, OPOOL_NULL);
    opool__refusing = outer;
    return 0;
}

/* ==== slots ============================================================== */

/* The writes of the free and of the claim come in small steps (opool__drop,
 * opool__unlink (opool_abi.h), opool__freed, opool__episode_end,
 * opool__count_alloc, opool__link), each of which keeps the pool invariant
 * (tests/support/opool_check.c checks it), and the callers chain them
 * (why steps: docs/PROOF.md, "How the contracts are written"). They are
 * static inline, so the compiled paths are what they would be written out. */

/* OPOOL_OK if h is live in p, with its index in *index (the index checked
 * is the one the caller acts on); else the status every handle-taking call
 * gives, and *index is left alone. */
opool_status opool__classify(const opool *p, opool_handle h, uint32_t *index) {
    uint32_t i = opool_handle_index(h), g = opool_handle_generation(h);
    if (!(g & 1)) return OPOOL_EINVAL;
    if (i < p->hot.nslots) {
        if (!opool__live_gen(&p->hot, i, g)) return OPOOL_ESTALE;
        *index = i;
        return OPOOL_OK;
    }
    /* in range still: a slot that a pool that never grows will make */
    return p->hot.shift == 32 && i < p->slot_cap ? OPOOL_ESTALE : OPOOL_EINVAL;
}

/* Free slot i leaves the free stack for good: its roster place goes to the
 * roster's last entry, or the chain skips it (retire's writes). */
static inline void opool__drop(opool *p, uint32_t i) {
    opool__hot *h = &p->hot;
    if (opool__listed(p))
        opool__roster_swap(h, h->slot[i].pos, h->limit - 1);
    else
        opool__chain_cut(h, i);
    h->limit--;
    h->slot[i].pos = OPOOL__RETIRED;
    p->retired++;
}

/* Slot i has just been freed to its last generation: it leaves the roster
 * for good. */
static void opool__retire(opool *p, uint32_t i) {
    opool__drop(p, i);
    opool__update_fast(p);
}

/* The hooks, each called from one place, so that what is assumed of a
 * user's hook is stated once (docs/PROOF.md, "Assumptions"). */
static void opool__call_fini(const opool *p, void *obj) { p->desc.fini(obj, p->desc.user); }
static void opool__call_init(const opool *p, void *obj) { p->desc.init(obj, p->desc.user); }

/* An object was freed: an open exhaustion episode ends if the pool has
 * recovered, and the inline paths open again. */
static inline void opool__episode_end(opool *p) {
    if (opool__episode_failures(&p->episode) != 0 &&
        opool__episode_freed(&p->episode, p->hot.count, p->hot.limit))
        opool__update_fast(p);
}

/* Slot i has just been freed to generation g: under OPOOL_RETIRE_ON_WRAP it
 * retires if g is back at the first (opool__wraps), and the exhaustion
 * episode may end (the release's steps after its writes). */
static inline void opool__freed(opool *p, uint32_t i, uint32_t g) {
    if ((p->desc.flags & OPOOL_RETIRE_ON_WRAP) && opool__wraps(g, p->gen0, p->hot.index_bits))
        opool__retire(p, i);
    opool__episode_end(p);
}

/* Free live slot i: fini, poison, swap-delete and next generation, retire. */
void opool__release(opool *p, uint32_t i) {
    opool__hot *h = &p->hot;
    uint32_t g = h->slot[i].gen;
    void *obj = opool__object(h, i);
    if (p->desc.fini) {
        opool__call_fini(p, obj);
        if (h->slot[i].gen != g) return; /* fini freed its own object */
    }
    opool__track_on_free(obj, h->stride, 0, (p->desc.flags & OPOOL_POISON) != 0);
    opool__unlink(h, i, ++g);
    opool__freed(p, i, g);
}

/* Free every live object, last roster entry first, or highest slot first
 * without a live list (fini may free others, and allocate). */
void opool__release_all(opool *p) {
    opool__hot *h = &p->hot;
    if (opool__listed(p)) {
        while (h->count > 0) opool__release(p, h->roster[h->count - 1]);
        return;
    }
    while (h->count > 0)
        for (uint32_t i = h->nslots; i-- > 0 && h->count > 0;)
            if (h->slot[i].gen & 1) opool__release(p, i);
}

/* An alloc has made one more object live: the high water, the inline
 * bounds and the count of allocs (the claim's writes to the pool after the
 * roster's). */
static inline void opool__count_alloc(opool *p) {
    opool__hot *h = &p->hot;
    if (h->count > h->high_water) {
        h->high_water = h->count;
        opool__update_fast(p);
    }
    h->allocs++;
}

/* Slot i, object obj, has just become live after generation prev_gen: the
 * checks and hooks. */
static void *opool__prepare(opool *p, uint32_t i, void *obj, uint32_t prev_gen) {
    opool__count_alloc(p);
    if (!opool__track_on_reuse(obj, p->hot.stride, 0, p->desc.object_size,
                               (p->desc.flags & OPOOL_POISON) != 0))
        opool__report(p, OPOOL_EWRITE_AFTER_FREE, opool__handle(i, prev_gen - 1));
    if ((p->desc.flags & OPOOL_ZERO) && p->desc.object_size != 0)
        memset(obj, 0, p->desc.object_size);
    if (p->desc.init) opool__call_init(p, obj);
    return obj;
}

/* Try to make a free slot by the pool's policy. */
static OPOOL_NOINLINE bool opool__make_room(opool *p) {
    if (p->desc.on_full == OPOOL_FULL_GROW) {
        while (p->hot.count == p->hot.limit)
            if (!opool__grow(p)) return false;
        return true;
    }
    if (p->desc.on_full == OPOOL_FULL_EVICT) {
        opool_handle victim = p->desc.evict(p, p->desc.user);
        uint32_t i = 0;
        if (opool__classify(p, victim, &i) == OPOOL_OK) {
            opool__release(p, i);
            p->evictions++;
        }
        return p->hot.count < p->hot.limit;
    }
    return false;
}

/* ==== restore ============================================================ */

/* opool_load (opool_save.c) decodes and validates an image, creates the pool
 * with opool_create and rebuilds its state through these: it never writes
 * the pool's private fields itself. */

/* Give chunk c (>= 1) storage without touching the roster: every slot
 * record is written afterwards. Its objects start free (poisoned, hidden). */
bool opool__restore_chunk(opool *p, uint32_t c) {
    uint32_t lo = (uint32_t)opool__chunk_lo(p, c), hi = opool__chunk_hi(p, c);
    char *mem = opool__chunk_storage(p, c);
    if (mem == NULL) return false;
    opool__range_freed(p, mem, hi - lo);
    opool__back_chunk(p, c, mem);
    return true;
}

/* Slot i's saved record: generation gen, and its roster position pos if
 * below limit, else pos is its marker (retired, or without storage). The
 * slot arrays hold i already (opool__reserve_slots). */
void opool__restore_slot(opool *p, uint32_t i, uint32_t gen, uint32_t pos, uint32_t limit) {
    opool__hot *h = &p->hot;
    h->slot[i].gen = gen;
    if (pos < limit)
        opool__roster_put(h, pos, i);
    else
        h->slot[i].pos = pos;
}

/* What an image keeps of the undo (docs/FORMAT.md, "The deferred field"):
 * 1 + the position of the entry the last free moved, 0 if none. */
uint32_t opool__undo_position(const opool *p) {
    const opool__hot *h = &p->hot;
    return opool__listed(p) && h->chain != 0 ? h->slot[h->chain - 1].pos + 1 : 0;
}

/* The saved bounds and counters, once every slot is restored; the inline
 * paths' bounds follow from them. */
void opool__restore_counts(opool *p, const opool__saved_counts *c) {
    opool__hot *h = &p->hot;
    h->nslots = c->nslots;
    h->limit = c->limit;
    h->count = c->count;
    /* the undo: the entry at the saved live position (a position of count,
     * from older writers, is none); a pool without a list builds its chain
     * after */
    if (opool__listed(p))
        h->chain =
            c->deferred != 0 && c->deferred - 1 < c->count ? h->roster[c->deferred - 1] + 1 : 0;
    h->high_water = c->high_water;
    h->allocs = c->allocs;
    p->retired = c->retired;
    p->failed_allocs = c->failed_allocs;
    p->rejected = c->rejected;
    p->evictions = c->evictions;
    p->grows = c->grows;
    /* an open episode stays open; the image keeps no count of its
     * failures, so it resumes as after its first */
    if (c->episode) opool__episode_failed(&p->episode);
    opool__update_fast(p);
}

/* The k-th live object (k < count), open for its saved bytes as
 * opool__prepare leaves a fresh object: its padding stays hidden (the slot
 * was filled just now: its pattern is intact). */
void *opool__restore_object(opool *p, uint32_t k) {
    void *obj = opool__object(&p->hot, p->hot.roster[k]);
    (void)opool__track_on_reuse(obj, p->hot.stride, 0, p->desc.object_size,
                                (p->desc.flags & OPOOL_POISON) != 0);
    return obj;
}

/* Restoring stopped at object k: only the k objects before it are live (so
 * that opool_destroy runs fini on exactly those). */
void opool__restore_cut(opool *p, uint32_t k) { p->hot.count = k; }

/* A pool without a live list is restored through a roster of its own, for
 * the saved positions and objects, until opool__restore_done; false: no
 * memory. Nothing for a pool with a roster. */
bool opool__restore_begin(opool *p) {
    if (opool__listed(p)) return true;
    uint32_t *r =
        (uint32_t *)p->mem.alloc(p->mem.ctx, (size_t)p->slot_cap * sizeof *r, alignof(uint32_t));
    if (r == NULL) return false;
    p->hot.roster = r;
    return true;
}

/* The load is over (every object restored, or the pool cleared to undo
 * it): a pool without a live list gives that roster back, its free stack
 * becoming the chain, in the same order. */
void opool__restore_done(opool *p) {
    opool__hot *h = &p->hot;
    if (!(p->desc.flags & OPOOL_NO_LIVE_LIST) || h->roster == NULL) return;
    uint32_t *at = &h->chain;
    for (uint32_t k = h->count; k < h->limit; k++) {
        *at = h->roster[k];
        at = &h->slot[h->roster[k]].pos;
    }
    *at = OPOOL__CHAIN_END;
    opool__mem_free(&p->mem, h->roster, (size_t)p->slot_cap * sizeof *h->roster, alignof(uint32_t));
    h->roster = NULL;
}

/* What opool_save writes for a pool without a live list, which has no
 * roster positions: those a roster would hold, the live slots [0, count)
 * in index order, the free ones [count, limit) in the chain's order,
 * markers kept. *pos: nslots of them, from the pool's allocator (the caller
 * gives them back); NULL for a pool with a roster (the slots' own). False:
 * no memory. */
bool opool__saved_positions(const opool *p, uint32_t **pos) {
    const opool__hot *h = &p->hot;
    *pos = NULL;
    if (opool__listed(p) || h->nslots == 0) return true;
    uint32_t *r =
        (uint32_t *)p->mem.alloc(p->mem.ctx, (size_t)h->nslots * sizeof *r, alignof(uint32_t));
    if (r == NULL) return false;
    uint32_t k = 0;
    for (uint32_t i = 0; i < h->nslots; i++) r[i] = (h->slot[i].gen & 1) ? k++ : h->slot[i].pos;
    for (uint32_t i = h->chain; i != OPOOL__CHAIN_END; i = h->slot[i].pos) r[i] = k++;
    *pos = r;
    return true;
}

/* ==== public ============================================================= */

static _Atomic uint32_t opool__pools_created;

uint32_t opool__derive_salt(void) {
    for (;;) {
        /* relaxed: only the count matters, nothing is published through it */
        uint32_t x = atomic_fetch_add_explicit(&opool__pools_created, 1, memory_order_relaxed) + 1;
        x *= 0x9E3779B9u;
        x ^= x >> 16;
        x *= 0x85EBCA6Bu;
        x ^= x >> 13;
        x *= 0xC2B2AE35u;
        x ^= x >> 16;
        if (!opool__origin_taken(x & ~1u)) return x; /* not a salt a live pool was given */
    }
}

size_t opool_required_bytes(const opool_desc *desc) {
    opool__geometry g;
    return opool__geometry_of(desc, &g) ? g.required : 0;
}

static opool_status opool__build(opool **out, void *buf, size_t size, const opool_desc *desc,
                                 const opool__geometry *g, bool loaded) {
    char *at = (char *)buf + OPOOL__PAD(buf, OPOOL__LINE);
    opool *p = (opool *)(void *)at;
    memset(p, 0, sizeof *p);
    p->desc = *desc;
    p->mem = opool__allocator_of(desc);
    p->gen0 = (desc->salt ? desc->salt : opool__derive_salt()) & ~1u;
    if (desc->salt) { /* (an image's origin, loaded) among the live pools' (SALTS) */
        bool exclusive = !loaded && !(desc->flags & OPOOL_SHARE_SALT);
        opool_status s =
            opool__origin_enter(OPOOL__KIND_POOL, desc->salt, p, desc->name, exclusive);
        if (s != OPOOL_OK) return s;
    }
    p->max_capacity = g->max_capacity;
    p->align = g->align;
    p->block_size = size;

    opool__hot *h = &p->hot;
    h->shift = g->shift;
    h->stride = g->stride;
    h->index_bits = opool__index_bits(g->max_capacity);
    h->slot = (opool__slot *)(p + 1);
    h->roster = (desc->flags & OPOOL_NO_LIVE_LIST) ? NULL : (uint32_t *)(h->slot + g->first);
    char *objects = at + g->objects_at;
    objects += OPOOL__PAD(objects, g->align);
    h->base[0] = objects;
    p->slot_cap = g->first;
    p->checker = opool__checker_active();
    if (!h->roster) h->chain = OPOOL__CHAIN_END; /* its free chain, empty */
    /* chunk 0 of a growing pool is made whole, as each growth; a pool that
     * never grows makes its slots as its high water rises (all now for a
     * load, which restores each) */
    if (h->shift < 32) h->first = g->first;
    if (h->shift < 32 || loaded) opool__make_to(p, g->first);
    /* chunks the index space [0, max_capacity) spans */
    p->nchunks = opool__span_count(h->shift, p->max_capacity);
    opool__assert(p->nchunks <= OPOOL__MAX_CHUNKS);
    opool__range_freed(p, objects, g->first);
    opool__update_fast(p);
    *out = p;
    return OPOOL_OK;
}

opool_status opool_create_in(opool **out, void *buf, size_t size, const opool_desc *desc) {
    if (out == NULL) return OPOOL_EINVAL;
    *out = NULL;
    opool__geometry g;
    if (buf == NULL || !opool__geometry_of(desc, &g) || size < g.required) return OPOOL_EINVAL;
    return opool__build(out, buf, size, desc, &g, false);
}

static opool_status opool__create(opool **out, const opool_desc *desc, bool loaded) {
    if (out == NULL) return OPOOL_EINVAL;
    *out = NULL;
    opool__geometry g;
    if (!opool__geometry_of(desc, &g)) return OPOOL_EINVAL;
    opool_allocator a = opool__allocator_of(desc);
    void *block = a.alloc(a.ctx, g.required, OPOOL__BLOCK_ALIGN);
    if (block == NULL) return OPOOL_ENOMEM;
    opool_status s = opool__build(out, block, g.required, desc, &g, loaded);
    if (s != OPOOL_OK) { /* a salt a live pool has (opool.h, SALTS) */
        opool__mem_free(&a, block, g.required, OPOOL__BLOCK_ALIGN);
        return s;
    }
    (*out)->block = block;
    return s;
}

opool_status opool_create(opool **out, const opool_desc *desc) {
    return opool__create(out, desc, false);
}

opool_status opool__create_loaded(opool **out, const opool_desc *desc) {
    return opool__create(out, desc, true);
}

/* A live object's handle (count > 0): the live list's first, or the lowest
 * live slot's without one. */
static opool_handle opool__some_live(const opool *p) {
    if (opool__listed(p)) return opool_live_handle(p, 0);
    for (uint32_t i = 0; i < p->hot.nslots; i++)
        if (p->hot.slot[i].gen & 1) return opool__handle(i, p->hot.slot[i].gen);
    return OPOOL_NULL; /* (count > 0: not reached) */
}

void opool_destroy(opool *p) {
    if (p == NULL) return;
    if (p->desc.report == NULL) opool__diag_flush(OPOOL__KIND_POOL, p, p->desc.name, &p->quota);
    if (p->desc.salt) opool__origin_leave(p);
    if (p->hot.count > 0) {
        opool_handle oldest[1];
        if (opool__oldest(p, oldest, NULL, 1) == 0) oldest[0] = opool__some_live(p);
        opool__report(p, OPOOL_ELEAK, oldest[0]);
    }
    if (p->desc.flags & OPOOL_REPORT_SIZING) {
        char line[256];
        opool_sizing_line(p, line, sizeof line);
        fputs(line, stderr);
    }
    if (p->desc.fini) opool__release_all(p);
    opool_allocator m = p->mem;
    /* the memory goes back whole: hidden free slots must not stay hidden */
    opool__mem_defined(p->hot.base[0], (size_t)p->hot.first * p->hot.stride);
    for (uint32_t c = 1; c < p->nchunks; c++)
        if (opool__chunk_backed(p, c)) opool__chunk_free(p, c);
    if (p->arrays_owned)
        opool__mem_free(&m, p->hot.slot, opool__arrays_bytes(p->desc.flags, p->slot_cap),
                        OPOOL__ARRAY_ALIGN);
    if (p->sites)
        opool__mem_free(&m, p->sites, p->sites_cap * sizeof *p->sites, alignof(opool__site));
    if (p->block) opool__mem_free(&m, p->block, p->block_size, OPOOL__BLOCK_ALIGN);
}

/* An alloc failed: its statistics (the demand it shows: stats.peak_demand),
 * and its episode. */
static void opool__failed(opool *p) {
    opool__hot *h = &p->hot;
    p->failed_allocs++;
    uint64_t done = 2 * h->allocs - h->count; /* allocs and frees that succeeded */
    if (done != p->run_mark) p->run = 0;
    p->run_mark = done;
    if (p->run < UINT32_MAX - h->count) p->run++;
    if (h->count + p->run > p->peak_demand) p->peak_demand = h->count + p->run;
    bool opens = opool__episode_failures(&p->episode) == 0;
    uint64_t nth = opool__episode_failed(&p->episode);
    if (opens) {
        p->episodes++;
        opool__update_fast(p);
    }
    if (nth) opool__report(p, OPOOL_EFULL, OPOOL_NULL);
}

/* Slot i's object was allocated at site, now (OPOOL_TRACK_SITES). The
 * record array grows to the slot arrays' size when i is past it; if the
 * allocator refuses, the site stays unknown. */
static void opool__track_site(opool *p, uint32_t i, const char *site) {
    if (i >= p->sites_cap) {
        uint32_t cap = p->slot_cap;
        opool__site *s =
            (opool__site *)p->mem.alloc(p->mem.ctx, cap * sizeof *s, alignof(opool__site));
        if (s == NULL) return;
        memset(s, 0, cap * sizeof *s);
        if (p->sites) {
            memcpy(s, p->sites, p->sites_cap * sizeof *s);
            opool__mem_free(&p->mem, p->sites, p->sites_cap * sizeof *s, alignof(opool__site));
        }
        p->sites = s;
        p->sites_cap = cap;
    }
    opool__site *r = &p->sites[i];
    r->where = site;
    r->serial = p->hot.allocs;
    r->gen = p->hot.slot[i].gen;
}

void *opool__alloc_slow(opool *p, opool_handle *out, const char *site) {
    if (out) *out = OPOOL_NULL;
    if (p == NULL) return NULL;
    opool__hot *h = &p->hot;
    if (h->count == h->limit && !opool__make_more(p) && !opool__make_room(p)) {
        opool__failed(p);
        return NULL;
    }
    uint32_t i = opool__take(h, out);
    void *obj = opool__prepare(p, i, opool__object(h, i), h->slot[i].gen - 1);
    if (p->desc.flags & OPOOL_TRACK_SITES) opool__track_site(p, i, site);
    return obj;
}

/* The recorded site of live slot i, or NULL. */
static const opool__site *opool__site_of(const opool *p, uint32_t i) {
    const opool__site *r = i < p->sites_cap ? &p->sites[i] : NULL;
    return r && r->where && r->gen == p->hot.slot[i].gen ? r : NULL;
}

uint32_t opool__oldest(const opool *p, opool_handle *h, const char **where, uint32_t max) {
    const opool__site *best[8];
    uint32_t n = 0;
    if (max > 8) max = 8;
    const opool__hot *c = &p->hot;
    /* the live slots: the live list, or every slot without one */
    uint32_t live = opool__listed(p) ? c->count : c->nslots;
    for (uint32_t k = 0; k < live; k++) {
        uint32_t i = opool__listed(p) ? c->roster[k] : k;
        if (!(c->slot[i].gen & 1)) continue;
        const opool__site *r = opool__site_of(p, i);
        if (r == NULL || (n == max && r->serial >= best[n - 1]->serial)) continue;
        uint32_t at = n < max ? n++ : n - 1; /* insertion: best stays oldest first */
        while (at > 0 && best[at - 1]->serial > r->serial) {
            best[at] = best[at - 1];
            at--;
        }
        best[at] = r;
    }
    for (uint32_t k = 0; k < n; k++) {
        uint32_t i = (uint32_t)(best[k] - p->sites);
        if (h) h[k] = opool__handle(i, best[k]->gen);
        if (where) where[k] = best[k]->where;
    }
    return n;
}

size_t opool_sizing_line(const opool *p, char *buf, size_t size) {
    char none[1];
    if (buf == NULL || size == 0) buf = none, size = 1;
    buf[0] = '\0';
    if (p == NULL) return 0;
    opool__finding f = opool__finding_of(OPOOL__KIND_POOL, OPOOL_OK, p, p->desc.name);
    f.capacity = p->hot.shift < 32 ? p->max_capacity : opool__usable(p);
    f.high_water = p->hot.high_water;
    f.failures = p->failed_allocs;
    f.episodes = p->episodes;
    f.demand = p->peak_demand;
    const char *limit = p->hot.shift < 32 ? "max_capacity" : "capacity";
    char text[200];
    if (p->episodes == 0)
        snprintf(text, sizeof text,
                 "sizing: %s {capacity}, high water {high_water}, never exhausted", limit);
    else
        snprintf(text, sizeof text,
                 "sizing: %s {capacity}, high water {high_water}, {failures} allocs failed in "
                 "{episodes} exhaustion episode%s: a %s of {demand} would have avoided them",
                 limit, p->episodes == 1 ? "" : "s", limit);
    return opool__diag_text(buf, size, &f, text);
}

const char *opool_alloc_site(const opool *p, opool_handle h) {
    uint32_t i = 0;
    if (p == NULL || opool__classify(p, h, &i) != OPOOL_OK) return NULL;
    const opool__site *r = opool__site_of(p, i);
    return r ? r->where : NULL;
}

opool_status opool__free_slow(opool *p, opool_handle h) {
    if (p == NULL) return OPOOL_EINVAL;
    uint32_t i = 0;
    opool_status s = opool__classify(p, h, &i);
    if (s != OPOOL_OK) {
        p->rejected++;
        opool__report(p, s, h);
        return s;
    }
    opool__release(p, i);
    return OPOOL_OK;
}

/* Grow until index i (below max_capacity) has storage; false when the
 * pool cannot grow to it. */
static bool opool__reach(opool *p, uint32_t i) {
    const opool__hot *h = &p->hot;
#ifdef OPOOL__REACH_LOOP
    /*@ OPOOL__REACH_LOOP */
#endif
    while (i >= h->nslots || h->slot[i].pos == OPOOL__UNBACKED)
        if (p->desc.on_full != OPOOL_FULL_GROW || !opool__grow(p)) return false;
    return true;
}

/* Free slot i joins the live objects with odd generation g: in the roster
 * it goes to the top of the free stack, whose old top takes its place, and
 * is taken; the chain skips it (the claim's writes). */
static inline void opool__link(opool *p, uint32_t i, uint32_t g) {
    opool__hot *h = &p->hot;
    h->slot[i].gen = g;
    if (opool__listed(p)) {
        opool__roster_swap(h, h->slot[i].pos, h->count);
        opool__roster_take(h);
    } else {
        opool__chain_cut(h, i);
        h->count++;
    }
}

/* Slot i (with storage) becomes live with odd generation g, if it is free. */
static void *opool__claim(opool *p, uint32_t i, uint32_t g) {
    opool__hot *h = &p->hot;
    uint32_t pos = h->slot[i].pos, prev = h->slot[i].gen;
    if (pos == OPOOL__RETIRED || (prev & 1)) return NULL;
    void *obj = opool__object(h, i);
    opool__link(p, i, g);
    return opool__prepare(p, i, obj, prev);
}

static void *opool__alloc_at(opool *p, opool_handle want) {
    uint32_t i = opool_handle_index(want), g = opool_handle_generation(want);
    if (p == NULL) return NULL;
    if (!(g & 1) || i >= p->max_capacity) {
        opool__report(p, OPOOL_EINVAL, want);
        return NULL;
    }
    if (!opool__reach(p, i)) return NULL;
    void *obj = opool__claim(p, i, g);
    if (obj == NULL) opool__report(p, OPOOL_EBUSY, want);
    return obj;
}

/* A pool that never grows makes its slots up to want's first (making slots);
 * then alloc_at as above. */
void *opool_alloc_at(opool *p, opool_handle want) {
    uint32_t i = opool_handle_index(want);
    if (p != NULL && (opool_handle_generation(want) & 1) && i < p->max_capacity)
        while (i >= p->hot.nslots && opool__make_more(p)) continue;
    return opool__alloc_at(p, want);
}

/* The slot whose object obj falls in (*i), and whether at its start
 * (*start); false when obj is in no chunk of p. */
static bool opool__slot_of(const opool *p, const void *obj, uint32_t *i, bool *start) {
    /* an id-only pool's token is every object's address: it names none */
    if (obj == NULL || p->hot.stride == 0) return false;
    const opool__hot *h = &p->hot;
    uintptr_t a = (uintptr_t)obj;
    for (uint32_t c = 0; c < p->nchunks; c++) {
        if (!opool__chunk_backed(p, c)) continue;
        uint32_t lo = (uint32_t)opool__chunk_lo(p, c), hi = opool__chunk_hi(p, c);
        const char *first = h->base[c];
        uintptr_t begin = (uintptr_t)first;
        if (!OPOOL__SAME_BLOCK(obj, first)) continue;
        if (a < begin || a - begin >= (uintptr_t)(hi - lo) * h->stride) continue;
        uintptr_t off = a - begin;
        *i = lo + (uint32_t)(off / h->stride);
        *start = off % h->stride == 0;
        return *i < h->nslots; /* (an object of a slot not made yet is none) */
    }
    return false;
}

opool_handle opool_handle_of(const opool *p, const void *obj) {
    uint32_t i = 0;
    bool start = false;
    if (p == NULL || !opool__slot_of(p, obj, &i, &start) || !start) return OPOOL_NULL;
    uint32_t g = p->hot.slot[i].gen;
    return (g & 1) ? opool__handle(i, g) : OPOOL_NULL;
}

opool_status opool_free_object(opool *p, void *obj) {
    if (p == NULL) return OPOOL_EINVAL;
    opool_handle h = opool_handle_of(p, obj);
    if (opool_handle_is_null(h)) {
        p->rejected++;
        const opool *outer = opool__rejecting; /* a report's own free_object nests */
        const void *outer_ptr = opool__rejected_ptr;
        opool__rejecting = p;
        opool__rejected_ptr = obj;
        opool__report(p, OPOOL_EINVAL, OPOOL_NULL);
        opool__rejecting = outer;
        opool__rejected_ptr = outer_ptr;
        return OPOOL_EINVAL;
    }
    opool__release(p, opool_handle_index(h));
    return OPOOL_OK;
}

/* Free every live object at once where a free has nothing to do for the
 * object itself (no fini, poison, checker or retirement): each live slot
 * goes to its next generation in one pass over the records, instead of a
 * release per object. With none live it frees
 * nothing, so, like the release, it ends no exhaustion episode. */
static void opool__release_plain(opool *p) {
    opool__hot *h = &p->hot;
    if (h->count == 0) return;
    opool__slot *slot = h->slot;
    for (uint32_t i = 0, n = h->nslots; i < n; i++) slot[i].gen += slot[i].gen & 1;
    h->count = 0;
    opool__episode_end(p);
}

void opool_clear(opool *p) {
    if (p == NULL) return;
    opool__hot *h = &p->hot;
    if (p->desc.fini == NULL && !p->checker &&
        !(p->desc.flags & (OPOOL_POISON | OPOOL_RETIRE_ON_WRAP)))
        opool__release_plain(p);
    else
        opool__release_all(p);
    if (!opool__listed(p)) {
        uint32_t n = opool__chain_fill(h);
        opool__assert(n == h->limit);
        (void)n;
        return;
    }
    uint32_t k = 0;
    for (uint32_t i = 0; i < h->nslots; i++) {
        uint32_t pos = h->slot[i].pos;
        if (pos == OPOOL__RETIRED || pos == OPOOL__UNBACKED) continue;
        opool__roster_put(h, k++, i);
    }
    opool__assert(k == h->limit);
    h->chain = 0; /* nothing to undo */
}

uint32_t opool_capacity(const opool *p) { return p ? opool__usable(p) : 0; }

uint32_t opool_retain(opool *p, bool (*keep)(void *obj, opool_handle h, void *user), void *user) {
    if (p == NULL || keep == NULL) return 0;
    if (!opool__listed(p)) return opool__no_live_list(p);
    opool__hot *h = &p->hot;
    uint32_t freed = 0;
    for (uint32_t k = h->count; k-- > 0;) {
        if (k >= h->count) continue; /* frees of others inside keep took the end away */
        uint32_t i = h->roster[k], g = h->slot[i].gen;
        h->chain = 0; /* no undo: a read of the list, as the loops' of opool.h */
        if (keep(opool__object(h, i), opool__handle(i, g), user)) continue;
        /* keep may have freed its own object (and the slot been reused) */
        if (h->slot[i].gen != g) continue;
        opool__release(p, i);
        freed++;
    }
    return freed;
}

void opool_sort(opool *p) {
    if (p == NULL) return;
    if (!opool__listed(p)) {
        (void)opool__no_live_list(p);
        return;
    }
    opool__hot *h = &p->hot;
    uint32_t k = 0;
    for (uint32_t i = 0; i < h->nslots && k < h->count; i++) {
        if (!(h->slot[i].gen & 1)) continue;
        opool__roster_put(h, k++, i);
    }
    opool__assert(k == h->count);
    h->chain = 0; /* nothing to undo */
}

uint32_t opool_shrink(opool *p) {
    if (p == NULL) return 0;
    opool__hot *h = &p->hot;
    uint32_t released = 0;
    for (uint32_t c = 1; c < p->nchunks; c++) {
        if (!opool__chunk_backed(p, c)) continue;
        uint32_t lo = (uint32_t)opool__chunk_lo(p, c), hi = opool__chunk_hi(p, c);
        uint32_t i = lo;
        while (i < hi && !(h->slot[i].gen & 1)) i++;
        if (i < hi) continue; /* holds a live object */
        if (!opool__listed(p)) opool__chain_skip(h, lo, hi);
        for (i = lo; i < hi; i++) {
            if (h->slot[i].pos == OPOOL__RETIRED) continue;
            h->slot[i].pos = OPOOL__UNBACKED;
            released++;
        }
        opool__chunk_free(p, c);
    }
    if (released == 0) return 0;
    if (!opool__listed(p)) {
        h->limit -= released;
        opool__update_fast(p);
        return released;
    }
    /* close the gaps in the free stack, keeping its order */
    uint32_t k = h->count;
    for (uint32_t at = h->count; at < h->limit; at++) {
        uint32_t i = h->roster[at];
        if (h->slot[i].pos == OPOOL__UNBACKED) continue;
        opool__roster_put(h, k++, i);
    }
    h->limit = k;
    h->chain = 0; /* nothing to undo */
    opool__update_fast(p);
    return released;
}

void opool_get_stats(const opool *p, opool_stats *out) {
    if (out == NULL) return;
    memset(out, 0, sizeof *out);
    if (p == NULL) return;
    const opool__hot *h = &p->hot;
    out->version = OPOOL_STATS_VERSION;
    out->capacity = opool__usable(p);
    out->max_capacity = p->max_capacity;
    out->count = h->count;
    out->high_water = h->high_water;
    out->retired = p->retired;
    out->allocs = h->allocs;
    out->frees = h->allocs - h->count;
    out->failed_allocs = p->failed_allocs;
    out->rejected_handles = p->rejected;
    out->evictions = p->evictions;
    out->grows = p->grows;
    out->episodes = p->episodes;
    out->peak_demand = p->peak_demand;
    size_t bytes = p->block_size;
    if (p->arrays_owned) bytes += opool__arrays_bytes(p->desc.flags, p->slot_cap);
    for (uint32_t c = 1; c < p->nchunks; c++)
        if (opool__chunk_backed(p, c)) bytes += opool__chunk_bytes(p, c);
    out->bytes = bytes;
}
