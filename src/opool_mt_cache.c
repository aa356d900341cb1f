/*
 * opool_mt_cache.c -- opool_mt's caches (docs/CONCURRENCY.md, "Caches (magazines) and stealing" and
 * "Waiting, and the stranding policy"): each a work-stealing deque of parked slots; the owner's
 * take and park, refill and spill; stealing by passing threads; the waiter; and the
 * opool_mt_cache_* API. The wake, the sleep and the heavy barrier it uses are opool_mt.c's.
 */
#include "opool_mt_list.h"
#include "opool_track.h"

/* ==== the deque ========================================================== */

/* The rest of the owner's take once bottom is lowered to b (the slot it
 * takes) and the light barrier passed: the newest parked slot, or EMPTY.
 * Without a thief around (the common case) it costs no atomic read-modify-
 * write and no fence: CONCURRENCY.md, "Caches (magazines) and stealing",
 * says why a thief can then never reach entry b. The inline alloc hit
 * (opool_abi_mt.h) does the same for its common case and comes here
 * (opool__mt_cache_alloc_lowered) for the rest. */
OPOOL__HOT uint32_t opool__mt_take_lowered(opool_mt_cache *c, uint64_t b) {
    opool_mt *p = c->pool;
    /* acquire: a thief that has left published its CAS on top before */
    bool contended = opool__atomic_load_acquire(&p->sig.thieves) != 0;
    /* seq_cst: Chase-Lev's take fence, paired with the thief's between its
     * reads of top and bottom */
    if (OPOOL_UNLIKELY(contended)) opool__atomic_fence_seq_cst();
    uint64_t t = opool__atomic_load_relaxed(&c->top);
    uint32_t x = OPOOL__MT_EMPTY;
    if (OPOOL_LIKELY(t <= b)) {
        /* relaxed: written by this thread */
        x = opool__atomic_load_relaxed(&opool__mt_ent(c)[b & c->mask]);
        if (OPOOL_UNLIKELY(t == b && contended)) {
            /* the last one, and a thief may be after it: the CAS decides;
             * seq_cst as in Chase-Lev; the tag is top itself, which only grows */
            if (!opool__atomic_cas_strong_seq_cst_relaxed(&c->top, &t, t + 1)) x = OPOOL__MT_EMPTY;
            opool__atomic_store_relaxed(&c->bottom, b + 1);
        }
    } else {
        opool__atomic_store_relaxed(&c->bottom, b + 1); /* thieves emptied it */
    }
    return x;
}

/* The owner's take at bottom: the newest parked slot, or EMPTY. */
OPOOL__HOT uint32_t opool__mt_take_newest(opool_mt_cache *c) {
    uint64_t b;
    if (!opool__mt_lower(c, &b)) return OPOOL__MT_EMPTY; /* opool_abi_mt.h */
    opool__mt_light_barrier(c->pool); /* the bottom store before the read of thieves */
    return opool__mt_take_lowered(c, b);
}

/* The owner's take of a run: up to k of the newest parked slots, newest
 * first, to out[] (what k takes of opool__mt_take_newest would give).
 * Returns how many. With no thief around it moves bottom once for the whole
 * run, with the single take's argument (CONCURRENCY.md, "Caches (magazines) and stealing"): a thief
 * that comes later sees the lowered bottom and takes only below it. With one around it takes them
 * one by one, each as Chase-Lev's take. */
static uint32_t opool__mt_take_newest_run(opool_mt_cache *c, uint32_t k, uint32_t *out) {
    opool_mt *p = c->pool;
    /* relaxed: only this thread writes bottom; a stale top is smaller */
    uint64_t b = opool__atomic_load_relaxed(&c->bottom);
    uint64_t t = opool__atomic_load_relaxed(&c->top);
    uint32_t n = b - t < k ? (uint32_t)(b - t) : k;
    if (n == 0) return 0;
    opool__atomic_store_relaxed(&c->bottom, b - n);
    opool__mt_light_barrier(p); /* the bottom store before the read of thieves */
    /* acquire: a thief that has left published its CAS on top before */
    if (OPOOL_UNLIKELY(opool__atomic_load_acquire(&p->sig.thieves) != 0)) {
        opool__atomic_store_relaxed(&c->bottom, b); /* as it was: the takes below decide */
        uint32_t got = 0;
        while (got < n && (out[got] = opool__mt_take_newest(c)) != OPOOL__MT_EMPTY) got++;
        return got;
    }
    /* relaxed: with no thief, top is as the last one left it (acquire above) */
    t = opool__atomic_load_relaxed(&c->top);
    if (OPOOL_UNLIKELY(t > b - n)) { /* thieves took some before: keep what is left */
        n = t < b ? (uint32_t)(b - t) : 0;
        opool__atomic_store_relaxed(&c->bottom, b - n);
    }
    for (uint32_t j = 0; j < n; j++) /* relaxed: written by this thread */
        out[j] = opool__atomic_load_relaxed(&opool__mt_ent(c)[(b - 1 - j) & c->mask]);
    return n;
}

/* Take up to k of the oldest parked slots at top, as a chain through next[]
 * whose head is *first (the newest taken) and tail *last. Returns how many.
 * The owner (spilling) may take many in one CAS; a thief takes one: while it
 * looks, the owner may take from the bottom without a CAS anything but the
 * last slot, so only a single-entry steal is safe (as in Chase-Lev). */
static uint32_t opool__mt_take_oldest(opool_mt_cache *c, uint32_t k, bool owner, uint32_t *first,
                                      uint32_t *last) {
    opool_mt *p = c->pool;
    if (!owner && k > 1) k = 1;
    for (;;) {
        /* acquire: the entries behind top, as the owner released them */
        uint64_t t = opool__atomic_load_acquire(&c->top);
        /* seq_cst: Chase-Lev's steal fence, paired with the owner's take */
        opool__atomic_fence_seq_cst();
        /* acquire: pairs with the owner's release of bottom after each park */
        uint64_t b = opool__atomic_load_acquire(&c->bottom);
        if (t >= b) return 0;
        uint32_t n = b - t < k ? (uint32_t)(b - t) : k;
        /* relaxed: ordered by the acquire of bottom. A thief reads before its
         * CAS: once top moves, the owner may reuse the place */
        uint32_t stolen = owner ? 0 : opool__atomic_load_relaxed(&opool__mt_ent(c)[t & c->mask]);
        /* seq_cst: the steal's CAS of Chase-Lev; on failure someone took
         * entries first: look again */
        if (!opool__atomic_cas_strong_seq_cst_relaxed(&c->top, &t, t + n)) continue;
        /* ours now: link them so the newest heads the chain */
        uint32_t below = 0;
        for (uint32_t j = 0; j < n; j++) {
            /* relaxed: the owner reads its own entries */
            uint32_t i =
                owner ? opool__atomic_load_relaxed(&opool__mt_ent(c)[(t + j) & c->mask]) : stolen;
            if (j == 0)
                *last = i;
            else
                opool__mt_link(p, i, below);
            below = i;
        }
        *first = below;
        return n;
    }
}

/* Register as a thief: from here on, owners treat their last parked slot as
 * contended. The heavy barrier makes every owner's earlier bottom store
 * visible to this thread and every later read of thieves see it (CONCURRENCY.md, "Caches
 * (magazines) and stealing"). */
bool opool__mt_thief_enter(opool_mt *p) {
    /* seq_cst: ordered before the heavy barrier and the reads of the decks */
    opool__atomic_fetch_add_seq_cst(&p->sig.thieves, 1);
    return opool__mt_heavy_barrier(p);
}

void opool__mt_thief_leave(opool_mt *p) {
    /* release: an owner that reads 0 (acquire) sees every CAS this thief made */
    opool__atomic_fetch_sub_release(&p->sig.thieves, 1);
}

/* Steal k parked slots from the caches, oldest first, plus up to extra more
 * from the cache that completed the k (never from a further one), as a chain
 * through next[] from *first (the last stolen) to *last (the first).
 * Returns how many. The caller is a registered thief. */
OPOOL_NOINLINE uint32_t opool__mt_steal_registered(opool_mt *p, uint32_t k, uint32_t extra,
                                                   uint32_t *first, uint32_t *last) {
    uint32_t n = 0;
    /* acquire: a record published by cache_create is seen initialised */
    for (opool_mt_cache *c = opool__atomic_load_acquire(&p->caches); c != NULL && n < k;
         c = c->next_rec) {
        uint32_t i, unused;
        while (n < k + extra && opool__mt_take_oldest(c, 1, false, &i, &unused) == 1) {
            if (n > 0)
                opool__mt_link(p, i, *first);
            else
                *last = i;
            *first = i;
            n++;
        }
    }
    if (n) opool__atomic_fetch_add_relaxed(&p->steals, n); /* statistics */
    return n;
}

/* Does any cache look as if it had parked slots? Reads only (stale values
 * can hide a park that is happening right now: that park is concurrent with
 * the caller, who may then fail as if it had come first). */
static bool opool__mt_any_parked(const opool_mt *p) {
    /* acquire: a record published by cache_create is seen initialised */
    for (const opool_mt_cache *c = opool__atomic_load_acquire(&p->caches); c != NULL;
         c = c->next_rec)
        if (opool__mt_parked(c) != 0) return true;
    return false;
}

/* Steal as a passing thief (an alloc that found the shared list empty): k
 * slots as a chain from *first. With extra (only for k == 1: alloc and a
 * cache's refill pass OPOOL__MT_STEAL_EXTRA, a bulk alloc 0) it keeps the
 * oldest parked slot of the first cache that has one and moves up to extra
 * more of that cache's oldest to the shared list, as a spill would (the
 * newest of them on top). Returns how many it keeps. No system call when
 * every cache looks empty. */
OPOOL_NOINLINE uint32_t opool__mt_steal(opool_mt *p, uint32_t k, uint32_t extra, uint32_t *first) {
    uint32_t n = 0, last;
    if (!opool__mt_any_parked(p)) return 0;
    /* without the heavy barrier an owner might take a slot we take: no steal */
    if (opool__mt_thief_enter(p)) n = opool__mt_steal_registered(p, k, extra, first, &last);
    opool__mt_thief_leave(p);
    if (n) OPOOL__MT_POINT(p, STEAL_TAKEN);
    if (n <= k) return n;
    /* keep the first stolen (the chain's tail); the rest go to the list */
    uint32_t above = *first;
    for (uint32_t j = 2; j < n; j++) above = opool__mt_link_of(p, above);
    opool__mt_push(p, *first, above);
    opool__mt_freed(p, n - 1);
    *first = last;
    return 1;
}

/* Give the n oldest parked slots back to the shared list in one CAS, the
 * newest of them on top. */
static OPOOL_NOINLINE void opool__mt_spill(opool_mt_cache *c, uint32_t n) {
    opool_mt *p = c->pool;
    uint32_t first, last, got = opool__mt_take_oldest(c, n, true, &first, &last);
    if (got) {
        OPOOL__MT_POINT(p, SPILL_TAKEN);
        opool__mt_push(p, first, last);
        opool__mt_freed(p, got);
    }
}

/* The owner's half of the park handshake (CONCURRENCY.md, "Waiting, and the stranding policy"):
 * publish the entries below bottom b (written by the caller), then read waiters. True if a thread
 * waits: the caller must give the entries to the shared list, which wakes it. Every path that parks
 * slots (cache_free, refill) ends with this; the inline free hit (opool_abi_mt.h) makes the same
 * steps. */
OPOOL__HOT bool opool__mt_publish(opool_mt_cache *c, uint64_t b) {
    opool__mt_set_bottom(c, b);
    opool__mt_light_barrier(c->pool);
    OPOOL__MT_POINT(c->pool, PARK_PUBLISHED);
    return opool__mt_waiting(c);
}

/* A thread waits and may have scanned the cache before the slot just
 * parked was there: take it back and give it to the shared list, which
 * wakes the waiter. */
static OPOOL_NOINLINE void opool__mt_unpark(opool_mt_cache *c) {
    uint32_t j = opool__mt_take_newest(c); /* else a thief, maybe the waiter, has it */
    if (j != OPOOL__MT_EMPTY) {
        opool__mt_push(c->pool, j, j);
        opool__mt_freed(c->pool, 1);
    }
}

/* Park slot i as the newest of the cache, or give it to a waiter. */
OPOOL__HOT void opool__mt_park(opool_mt_cache *c, uint32_t i) {
    if (OPOOL_UNLIKELY(opool__mt_parked(c) >= c->size)) opool__mt_spill(c, c->half);
    uint64_t b = opool__atomic_load_relaxed(&c->bottom);            /* ours */
    opool__atomic_store_relaxed(&opool__mt_ent(c)[b & c->mask], i); /* released below */
    if (OPOOL_UNLIKELY(opool__mt_publish(c, b + 1)))
        opool__mt_unpark(c);
    else
        opool__mt_end_episode(c->pool);
}

/* The inline free hit (opool_abi_mt.h) parked and published its slot, then saw
 * a waiter or an open episode: what opool__mt_park does then. */
void opool__mt_cache_parked(opool_mt_cache *c) {
    /* relaxed: read again after the inline path's barrier pair (CONCURRENCY.md, "Waiting, and the
     * stranding policy"): a waiter that has left since needs nothing, a new one scans after */
    if (opool__atomic_load_relaxed(&c->pool->sig.waiters) != 0)
        opool__mt_unpark(c);
    else
        opool__mt_end_episode(c->pool);
}

/* Park the n slots of is[] (n <= c->size - parked) as n parks would, is[0]
 * first, publishing once; with a waiter every parked slot goes to the shared
 * list (a spill, which wakes it), as after a refill. */
static void opool__mt_park_run(opool_mt_cache *c, const uint32_t *is, uint32_t n) {
    opool_mt *p = c->pool;
    uint64_t b = opool__atomic_load_relaxed(&c->bottom); /* ours */
    for (uint32_t j = 0; j < n; j++)
        opool__atomic_store_relaxed(&opool__mt_ent(c)[(b + j) & c->mask],
                                    is[j]); /* released below */
    if (OPOOL_UNLIKELY(opool__mt_publish(c, b + n)))
        opool__mt_spill(c, c->size);
    else
        opool__mt_end_episode(p);
}

/* The cache is empty: refill half of it from the shared list in one CAS and
 * hand out the old top; steal when the list is empty, grow when nothing is
 * parked either. Between the pop and
 * the publication the slots are nowhere a waiter can see: a waiter that
 * scanned meanwhile is seen by the publication's read of waiters, and then
 * the parked slots go back to the shared list (a spill, which wakes it). */
static OPOOL_NOINLINE bool opool__mt_refill(opool_mt_cache *c, uint32_t *slot,
                                            uint64_t timeout_ns) {
    opool_mt *p = c->pool;
    uint32_t first, last, n;
    while ((n = opool__mt_pop(p, c->half, &first, &last)) == 0)
        if (opool__mt_steal(p, 1, OPOOL__MT_STEAL_EXTRA, slot) == 1)
            return true;
        else if (!opool__mt_grew(p, timeout_ns))
            return false;
    OPOOL__MT_POINT(p, REFILL_POPPED);
    *slot = first;
    /* s2 (below the top) becomes the newest parked, the bottom the oldest */
    uint64_t b = opool__atomic_load_relaxed(&c->bottom); /* ours */
    uint32_t i = first;
    for (uint32_t k = n - 1; k-- > 0;) {
        i = opool__mt_link_of(p, i);
        opool__atomic_store_relaxed(&opool__mt_ent(c)[(b + k) & c->mask], i);
    }
    if (n > 1 && OPOOL_UNLIKELY(opool__mt_publish(c, b + n - 1))) opool__mt_spill(c, c->size);
    return true;
}

/* ==== the claim of a slot's home (CONCURRENCY.md, "What a cache hit costs") =================== */

/* The free of h through cache c. When c allocated h's object (c is its
 * home) and no other path has freed one of c's slots yet (c is biased), the
 * claim is plain stores: the claim word, a compiler barrier, a read of c's
 * remote state, the new generation. A revoker's barrier (opool__mt_revoke)
 * makes the two sides agree (CONCURRENCY.md, "What a cache hit costs"). Else, and for a cache that
 * is not the home, opool__mt_claim's CAS. Results as opool__mt_claim. */
OPOOL__HOT opool_status opool__mt_claim_home(opool_mt_cache *c, opool_handle h, bool *keep) {
    opool_mt *p = c->pool;
    uint32_t i = opool_handle_index(h), g = opool_handle_generation(h);
    opool_status s = opool__mt_live(p->gen, opool__mt_capacity_now(p), i, g);
    if (OPOOL_UNLIKELY(s != OPOOL_OK)) return s;
    /* relaxed: g's home word or a later one. Only allocs write a home, and
     * the only alloc that writes c's id is this thread's own: so c->home
     * with no claim is generation g's home, c */
    if (c->home == 0 || opool__atomic_load_relaxed(&p->own[i]) != c->home)
        return opool__mt_claim(p, h, keep);
    OPOOL__MT_POINT(p, CLAIM_CHECKED);
    opool__mt_claim_store(c, i, g); /* opool_abi_mt.h */
    opool__mt_light_barrier(p);     /* the claim before the read of remote */
    OPOOL__MT_POINT(p, CLAIM_STORED);
    if (OPOOL_LIKELY(opool__mt_still_biased(c))) {
        OPOOL__MT_POINT(p, CLAIM_BIASED);
        /* relaxed: no other path changes generation g any more (it sees the
         * claim); the park or push that follows publishes the slot */
        opool__atomic_store_relaxed(&p->gen[i], g + 1);
        return opool__mt_claimed(p, i, g, keep);
    }
    return opool__mt_claim_cas(p, i, g, keep); /* a revoker that missed the claim may have won */
}

/* ==== the waiter (CONCURRENCY.md, "Waiting, and the stranding policy") ======================== */

OPOOL_NOINLINE void *opool__mt_wait(opool_mt *p, opool_handle *out, uint64_t timeout_ns) {
    void *obj = NULL;
    uint64_t deadline = opool__mt_deadline(timeout_ns);
    /* seq_cst: the waiter's half of the handshake with frees (CONCURRENCY.md, "Waiting, and the
     * stranding policy") */
    opool__atomic_fetch_add_seq_cst(&p->sig.waiters, 1);
    bool scan_ok = opool__mt_thief_enter(p); /* its heavy barrier serves both */
    for (;;) {
        /* acquire: pairs with the release bump of a free that saw us */
        uint32_t e = opool__atomic_load_acquire(&p->sig.epoch);
        uint32_t i;
        uint32_t unused;
        if (opool__mt_pop(p, 1, &i, &unused) == 1 ||
            (scan_ok && opool__mt_steal_registered(p, 1, 0, &i, &unused))) {
            opool__mt_add_live(p, 1);
            obj = opool__mt_take(p, i, out);
            break;
        }
        uint64_t now = opool__now_ns();
        if (now >= deadline) break;
        /* never sleeps while the pool can grow */
        if (opool__mt_grew(p, deadline == UINT64_MAX ? OPOOL_WAIT_FOREVER : deadline - now))
            continue;
        /* without the heavy barrier a park may hide from the scan: poll */
        uint64_t until = deadline;
        if (!scan_ok && deadline - now > 1000000) until = now + 1000000;
        OPOOL__MT_POINT(p, WAIT_SLEEP);
        opool__mt_sleep(p, e, until);
        if (!scan_ok) scan_ok = opool__mt_heavy_barrier(p);
    }
    opool__mt_thief_leave(p);
    opool__atomic_fetch_sub_relaxed(&p->sig.waiters, 1); /* only makes frees cheaper */
    return obj;
}

/* ==== public: caches ===================================================== */

opool_status opool_mt_cache_create_ex(opool_mt_cache **out, opool_mt *p, uint32_t size) {
    if (out == NULL) return OPOOL_EINVAL;
    *out = NULL;
    if (p == NULL || size < 2 || size > OPOOL_MT_CACHE_MAX) return OPOOL_EINVAL;
    opool_mt_cache *c;
    /* acquire: the records' fields, as published */
    uint32_t cap = 2;
    while (cap < size) cap *= 2;
    for (c = opool__atomic_load_acquire(&p->caches); c != NULL; c = c->next_rec) {
        uint32_t idle = 0;
        /* acquire: the last owner's flush and counters, released by its destroy */
        if (c->mask + 1 >= size && opool__atomic_cas_strong_acquire_relaxed(&c->active, &idle, 1))
            break;
    }
    if (c != NULL && p->sync) opool__sync_acquire(c); /* ThreadSanitizer: after its last owner */
    if (c == NULL) {
        c = (opool_mt_cache *)p->mem.alloc(p->mem.ctx, opool__mt_cache_bytes(cap), OPOOL__LINE);
        if (c == NULL) return OPOOL_ENOMEM;
        c->pool = p;
        c->gen = p->gen; /* the pool's fixed fields, where a hit reads them */
        c->own = p->own;
        c->objects = p->objects;
        c->stride = p->stride;
        c->sig = &p->sig;
        c->capacity = opool__mt_capacity_now(p); /* a growth: refreshed by a free */
        c->retire_at = (p->desc.flags & OPOOL_RETIRE_ON_WRAP) ? p->gen0 : 1; /* odd: never */
        c->mask = cap - 1;
        opool__atomic_init(&c->active, 1);
        opool__atomic_init(&c->live, 0);
        opool__atomic_init(&c->bottom, 0);
        opool__atomic_init(&c->top, 0);
        for (uint32_t e = 0; e < cap; e++)
            opool__atomic_init(&opool__mt_ent(c)[e], OPOOL__MT_EMPTY);
        /* A home id while there are some, and only with membarrier: without
         * it the home's barrier would be a fence, as dear as the CAS */
        uint32_t id = p->light_park ? opool__atomic_fetch_add_relaxed(&p->homes_used, 1) + 1 : 0;
        if (id >= OPOOL__MT_HOMES) id = 0;
        c->home = (uint64_t)id << 32;
        /* the inline hits: only a home claims biased, and only with
         * membarrier is their barrier a compiler barrier (opool_abi_mt.h) */
        c->fast = id != 0 && p->light_park && !p->hooks;
        opool__atomic_init(&c->remote, id ? OPOOL__MT_BIASED : OPOOL__MT_REVOKED);
        /* release: a revoker that reads the id finds the record initialised */
        if (id) opool__atomic_store_release(&p->homes[id], c);
        c->next_rec = opool__atomic_load_relaxed(&p->caches);
        /* release: the record is initialised before anyone can reach it */
        while (!opool__atomic_cas_weak_release_relaxed(&p->caches, &c->next_rec, c))
            ;
    }
    c->size = size;
    c->half = size / 2;
    *out = c;
    return OPOOL_OK;
}

opool_mt_cache *opool_mt_cache_create(opool_mt *p, uint32_t size) {
    opool_mt_cache *c;
    return opool_mt_cache_create_ex(&c, p, size) == OPOOL_OK ? c : NULL;
}

/* A cache alloc once its take gave slot i (EMPTY: the cache was empty). */
static void *opool__mt_cache_alloc_got(opool_mt_cache *c, opool_handle *out, uint32_t i) {
    if (OPOOL_UNLIKELY(i == OPOOL__MT_EMPTY) && !opool__mt_refill(c, &i, OPOOL_WAIT_FOREVER)) {
        if (out) *out = OPOOL_NULL;
        opool__mt_failed(c->pool);
        return NULL;
    }
    opool__mt_count_own(c, 1);
    return opool__mt_take_as(c->pool, i, out, c->home);
}

/* opool_mt_cache_alloc, the whole of it (opool_abi.c and the inline hit
 * come here for what they do not do themselves). */
void *opool__mt_cache_alloc_slow(opool_mt_cache *c, opool_handle *out) {
    if (OPOOL_UNLIKELY(c == NULL)) {
        if (out) *out = OPOOL_NULL;
        return NULL;
    }
    return opool__mt_cache_alloc_got(c, out, opool__mt_take_newest(c));
}

void *opool__mt_cache_alloc_lowered(opool_mt_cache *c, opool_handle *out, uint64_t b) {
    return opool__mt_cache_alloc_got(c, out, opool__mt_take_lowered(c, b));
}

/* The waiting is opool_mt_alloc_wait's own (opool__mt_wait): once the
 * cache's own try has failed, a waiter that comes through a cache takes the
 * same steps as one that does not, and the slot it is given goes straight to
 * its caller (its cache stays empty while it waits, as the stranding policy
 * wants). */
void *opool_mt_cache_alloc_wait(opool_mt_cache *c, opool_handle *out, uint64_t timeout_ns) {
    if (OPOOL_UNLIKELY(c == NULL)) {
        if (out) *out = OPOOL_NULL;
        return NULL;
    }
    opool_mt *p = c->pool;
    uint32_t i = opool__mt_take_newest(c);
    if (OPOOL_LIKELY(i != OPOOL__MT_EMPTY) || opool__mt_refill(c, &i, timeout_ns)) {
        opool__mt_count_own(c, 1);
        return opool__mt_take_as(p, i, out, c->home);
    }
    void *obj = timeout_ns != 0 ? opool__mt_wait(p, out, timeout_ns) : NULL;
    if (obj == NULL) { /* only a NULL result is a failed alloc */
        if (out) *out = OPOOL_NULL;
        opool__mt_failed(p);
    }
    return obj;
}

/* A cache free once h is claimed: its count, then the park (or, for a
 * retiring slot, the episode's check). */
static opool_status opool__mt_cache_freed(opool_mt_cache *c, opool_handle h, bool keep) {
    opool__mt_count_own(c, -1);
    if (OPOOL_LIKELY(keep))
        opool__mt_park(c, opool_handle_index(h));
    else
        opool__mt_end_episode(c->pool); /* every free checks, after its count fell */
    return OPOOL_OK;
}

/* opool_mt_cache_free, the whole of it (as opool__mt_cache_alloc_slow). */
opool_status opool__mt_cache_free_slow(opool_mt_cache *c, opool_handle h) {
    if (OPOOL_UNLIKELY(c == NULL)) return OPOOL_EINVAL;
    c->capacity = opool__mt_capacity_now(c->pool); /* the hits' copy, after a growth */
    bool keep;
    opool_status s = opool__mt_claim_home(c, h, &keep);
    if (OPOOL_UNLIKELY(s != OPOOL_OK)) return opool__mt_rejected(c->pool, s, h);
    return opool__mt_cache_freed(c, h, keep);
}

opool_status opool__mt_cache_free_revoked(opool_mt_cache *c, opool_handle h) {
    bool keep;
    opool_status s =
        opool__mt_claim_cas(c->pool, opool_handle_index(h), opool_handle_generation(h), &keep);
    if (OPOOL_UNLIKELY(s != OPOOL_OK)) return opool__mt_rejected(c->pool, s, h);
    return opool__mt_cache_freed(c, h, keep);
}

/* Bulk calls work in runs of at most OPOOL__MT_RUN slots: one move of bottom
 * and one publication per run instead of one per slot, with the results of
 * n single calls (CONCURRENCY.md, "Sequential semantics") and their cache state, except with a
 * waiter (a run park then spills the whole cache: opool__mt_park_run). */
#define OPOOL__MT_RUN 64u

uint32_t opool_mt_cache_alloc_bulk(opool_mt_cache *c, opool_handle *out, void **objs, uint32_t n) {
    if (c == NULL || out == NULL) return 0;
    opool_mt *p = c->pool;
    uint32_t k = 0, run[OPOOL__MT_RUN];
    while (k < n) {
        uint32_t want = n - k < OPOOL__MT_RUN ? n - k : OPOOL__MT_RUN;
        uint32_t got = opool__mt_take_newest_run(c, want, run);
        if (got == 0) { /* empty: one single alloc refills (or steals, or fails) */
            void *obj = opool__mt_cache_alloc_slow(c, &out[k]);
            if (obj == NULL) break;
            if (objs) objs[k] = obj;
            k++;
            continue;
        }
        opool__mt_count_own(c, got);
        for (uint32_t j = 0; j < got; j++, k++) {
            void *obj = opool__mt_take_as(p, run[j], &out[k], c->home);
            if (objs) objs[k] = obj;
        }
    }
    return k;
}

/* The frees of a run so far: ended objects (their count falls), m of them
 * to park. Parks them, or checks the episode (every free checks, after its
 * count fell). */
static void opool__mt_free_run_end(opool_mt_cache *c, const uint32_t *run, uint32_t m,
                                   uint32_t ended) {
    if (ended == 0) return;
    opool__mt_count_own(c, -(int64_t)ended);
    if (m)
        opool__mt_park_run(c, run, m);
    else
        opool__mt_end_episode(c->pool);
}

uint32_t opool_mt_cache_free_bulk(opool_mt_cache *c, const opool_handle *hs, uint32_t n) {
    if (c == NULL || hs == NULL) return 0;
    opool_mt *p = c->pool;
    uint32_t freed = 0, k = 0, run[OPOOL__MT_RUN];
    while (k < n) {
        /* claim up to one run, as many as the cache takes without a spill */
        uint32_t parked = opool__mt_parked(c), m = 0, ended = 0;
        uint32_t room = parked < c->size ? c->size - parked : 0;
        if (room == 0) { /* full: this free spills, as a single one would */
            freed += opool__mt_cache_free_slow(c, hs[k++]) == OPOOL_OK;
            continue;
        }
        if (room > OPOOL__MT_RUN) room = OPOOL__MT_RUN;
        for (; k < n && m < room; k++) {
            bool keep;
            opool_status s = opool__mt_claim_home(c, hs[k], &keep);
            if (OPOOL_UNLIKELY(s != OPOOL_OK)) {
                /* the run first: reports come in the order single frees make them */
                opool__mt_free_run_end(c, run, m, ended);
                m = ended = 0;
                opool__mt_rejected(p, s, hs[k++]);
                break; /* the room is to be counted again */
            }
            freed++;
            ended++;
            if (OPOOL_LIKELY(keep)) run[m++] = opool_handle_index(hs[k]);
        }
        opool__mt_free_run_end(c, run, m, ended);
    }
    return freed;
}

void opool_mt_cache_flush(opool_mt_cache *c) {
    if (c != NULL) opool__mt_spill(c, c->size);
}

void opool_mt_cache_destroy(opool_mt_cache *c) {
    if (c == NULL) return;
    opool_mt_cache_flush(c);
    if (c->pool->sync) opool__sync_release(c); /* ThreadSanitizer: before the next owner */
    /* release: the next owner (acquire in create) starts from this state */
    opool__atomic_store_release(&c->active, 0);
}
