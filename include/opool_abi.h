/*
 * opool_abi.h -- NOT API, BUT ABI: the private layout behind the inline fast
 * paths of opool.h, opool_heap.h and opool_mt.h, and those paths' bodies.
 *
 * Do not include this file yourself and do not use anything in it: opool.h,
 * opool_heap.h and opool_mt.h include it at their end, and every name here may change in any
 * release. It is installed because inline code compiled into your program
 * reads these structs directly: changing any layout here, or the contract of
 * a function declared here, breaks binaries built against an older copy of
 * this header (bump the SONAME then).
 *
 * ============================================================================
 * HOW THE INLINE FUNCTIONS ARE ALSO EXPORTED
 * ============================================================================
 * Every public function whose common case is inline (opool_alloc, opool_free,
 * opool_get, ..., opool_heap_alloc, opool_heap_free, opool_mt_cache_alloc,
 * opool_mt_cache_free, the handle accessors) is
 * declared in the manual header as an ordinary OPOOL_API function, and the
 * library defines it out of line (src/opool_abi.c), so FFI, dlsym and
 * function pointers reach it. Its body lives here as a static inline function
 * with a private name (opool__alloc_inline, ...), and a function-like macro
 * of the public name forwards to it:
 *
 *     OPOOL_API void *opool_alloc(opool *p, opool_handle *out);   // opool.h
 *     static inline void *opool__alloc_inline(...) { ... }          // here
 *     #define opool_alloc(p, out) opool__alloc_inline(p, out)       // here
 *
 * A call `opool_alloc(p, &h)` from C or C++ compiles the inline body, exactly
 * as when the function itself was static inline: zero cost. The name without
 * a call after it (`&opool_alloc`, `(opool_alloc)(p, &h)`) is the exported
 * function. The inline body falls back on the out-of-line slow paths declared
 * here (opool__alloc_slow, ...): they are exported too, as ABI (never API).
 * C99 `inline` with one `extern inline` definition was not used: such a body
 * may not call the static inline helpers below, and C++ gives it other rules.
 * The macros work the same for C++ callers and in the single header
 * dist/opool.h, where OPOOL_STATIC makes the exported definitions static too.
 *
 * LICENSE: zlib (see LICENSE)
 */
#include "opool.h" /* when included on its own */

/* The inline bodies below are C, with C's casts. GCC says nothing of them
 * under -Wold-style-cast inside extern "C"; Clang does, so in C++ it is
 * told not to, for this file alone (the macros a user's code expands use
 * OPOOL__CAST instead). Popped at the end. */
#if defined(__cplusplus) && defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wold-style-cast"
#endif

/* Every inline path of this file (the core pool's, the heap's, the
 * concurrent pool's cache hits) and the library's helpers of its own
 * concurrent paths (src/opool_mt_internal.h): inlined into the caller even
 * where the compiler's heuristics would make them calls, as they do in a
 * file with many call sites. Plain static inline under Frama-C (proof/),
 * which reads the same bodies. */
#ifndef OPOOL__HOT
#if (defined(__GNUC__) || defined(__clang__)) && !defined(__FRAMAC__)
#define OPOOL__HOT static inline __attribute__((always_inline))
#else
#define OPOOL__HOT static inline
#endif
#endif

/* ==== the core pool (opool.h) ============================================ */

#if !defined(OPOOL__ABI_CORE_H)
#define OPOOL__ABI_CORE_H

#if defined(__GNUC__) || defined(__clang__)
#define OPOOL__NONNULL(ptr) ((ptr) ? (void)0 : __builtin_unreachable())
#else
#define OPOOL__NONNULL(ptr) ((void)0)
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* An atomic field of a layout below (T a type name). In C it is C11's
 * _Atomic T, which the library's atomics (src/opool_platform.h) operate on
 * and which needs no header (the proofs' Frama-C, which ignores _Atomic,
 * defines this macro first: proof/frama_c.h); in C++, where _Atomic
 * does not exist, the same bytes as a plain T, which the inline code reads
 * and writes with the __atomic builtins only (the layouts put each such
 * field where both languages agree). A test that runs the library's code
 * under a memory-model checker defines it first (tests/relacy). */
#if !defined(OPOOL__ATOMIC)
#if defined(__cplusplus)
#define OPOOL__ATOMIC(T) T
#else
#define OPOOL__ATOMIC(T) _Atomic T
#endif
#endif

/* An exhaustion episode of a pool, a concurrent pool or a heap class (its
 * rule and operations: src/opool_diag.h). Here because the concurrent
 * pool's inline free reads it. */
typedef struct opool__episode {
    OPOOL__ATOMIC(uint64_t) failures; /* failed allocs of the open episode; 0: none open */
} opool__episode;

typedef struct opool__slot {
    uint32_t gen; /* odd = live, even = free */
    uint32_t pos; /* roster position, or a marker for retired slots and slots without storage */
} opool__slot;

#define OPOOL__MAX_CHUNKS 33

/* Every field the common inline paths touch sits in the first 64 bytes
 * (but chain, the last). */
typedef struct opool__hot {
    opool__slot *slot;   /* [nslots] */
    uint32_t *roster;    /* [0, count) live, [count, limit) free, top at count;
                            NULL under OPOOL_NO_LIVE_LIST (the free chain instead) */
    uint32_t count;      /* live objects */
    uint32_t fast_limit; /* inline alloc while count < this: min(limit, high_water), 0 if slow */
    uint32_t nslots;     /* slot records: every index below is a slot */
    uint32_t first;      /* slots in chunk 0, whose objects start at base[0] */
    uint32_t free_limit; /* inline free for indices below this: nslots, 0 if slow */
    uint32_t shift;      /* chunk 0 covers [0, 2^shift); chunk c>0 [2^(shift+c-1), 2^(shift+c)) */
    uint64_t allocs;
    size_t stride;
    /* base[c] is chunk c's first object (index lo(c), 0 for chunk 0): the
     * object at index i of chunk c is base[c] + (i - lo(c)) * stride */
    char *base[OPOOL__MAX_CHUNKS];
    uint32_t limit; /* slots in the roster: usable capacity */
    uint32_t high_water;
    uint32_t index_bits; /* k of a compact handle (opool_handle_compact); 32: none */
    /* OPOOL_NO_LIVE_LIST: the first free slot (limit - count of them). With
     * a live list, the undo (the roster, below): 1 + the entry the last free
     * moved into the freed place; 0: nothing to undo. */
    uint32_t chain;
} opool__hot;

/* Where the inline alloc and free go for everything but their common case
 * (defined in src/opool.c). Exported, since the inline code in your program
 * calls them: ABI, not API. */
OPOOL_API void *opool__alloc_slow(opool *p, opool_handle *out, const char *site);
OPOOL_API opool_status opool__free_slow(opool *p, opool_handle h);
/* A pool under OPOOL_NO_LIVE_LIST was asked to iterate: reports
 * OPOOL_EINVAL, returns 0 (the count of entries to visit). */
OPOOL_API uint32_t opool__no_live_list(const opool *p);

/* ---- handles ---------------------------------------------------------------
 * A handle is its slot's generation in the high 32 bits over the slot's
 * index; a live generation is odd. Every path packs and checks a handle with
 * these two (inline and out of line, full and compact). */

OPOOL__HOT opool_handle opool__handle(uint32_t i, uint32_t gen) {
    opool_handle h;
    h.bits = (uint64_t)gen << 32 | i;
    return h;
}

/* Whether g is slot i's generation and a live one (i < nslots). */
OPOOL__HOT bool opool__live_gen(const opool__hot *c, uint32_t i, uint32_t g) {
    return OPOOL_LIKELY(c->slot[i].gen == g) && OPOOL_LIKELY(g & 1);
}

/* ---- the roster ------------------------------------------------------------
 * One array of slot indices, [0, limit): positions [0, count) are the live
 * list in iteration order, [count, limit) the free stack with its top at
 * position count. Every slot in it knows its place: roster[slot[i].pos] == i.
 * These operations are the only code that writes roster entries or puts a
 * slot in the roster (opool__roster_put is the one store of both), so the
 * invariant is kept here and nowhere else; a slot leaving the roster for good
 * gets a marker in .pos instead (retired, or its chunk given back):
 *   take     the free stack's top becomes the last live entry (alloc);
 *   undo     right after a release and a take, trades back the entry the
 *            release moved (the inline alloc's step after take);
 *   release  live slot i goes to the free stack's top; the last live entry
 *            takes its place (free: a swap-delete, done at once), and
 *            the undo (c->chain, which a pool with a list has no other use
 *            for) remembers which entry that was;
 *   swap     two positions trade entries (alloc_at, retiring a slot);
 *   put      entry k is slot i (rebuilding: grow, clear, sort, shrink, load).
 * Why at once: an object allocated inside the documented backward loop must
 * land behind the loop's index. take appends at count, which is never below
 * the index; release moves the last entry (already visited, or allocated
 * inside the loop) into the place just visited.
 * Why the undo: a free and an alloc, the churn of every frame, then leave
 * the live list's order as it was, so a list in memory order (a fresh
 * pool's, or opool_sort's) stays so and the loop walks memory in order
 * (take's slot is release's, the stack being LIFO: the swap puts the new
 * object where the freed one was). Every rebuild in src/opool.c (clear,
 * sort, shrink, load) sets the undo to 0; an alloc_at or a retirement in
 * between leaves it, the moved entry having still come from the end. */

OPOOL__HOT void opool__roster_put(opool__hot *c, uint32_t k, uint32_t i) {
    c->roster[k] = i;
    c->slot[i].pos = k;
}

OPOOL__HOT uint32_t opool__roster_take(opool__hot *c) { return c->roster[c->count++]; }

OPOOL__HOT void opool__roster_swap(opool__hot *c, uint32_t a, uint32_t b) {
    uint32_t i = c->roster[a];
    opool__roster_put(c, a, c->roster[b]);
    opool__roster_put(c, b, i);
}

/* After a take: if a release came before it, with no read of the live
 * list since, the entry named by the undo is the one that release moved
 * from the end: the new object (the released slot, the stack being LIFO)
 * takes its place, and it goes back to the end. */
OPOOL__HOT void opool__roster_undo(opool__hot *c, uint32_t i) {
    uint32_t m = c->chain, n = c->count - 1;
    c->chain = 0;
    if (m == 0 || m - 1 >= c->nslots) return;
    uint32_t k = c->slot[m - 1].pos;
    if (k < n) {
        opool__roster_put(c, k, i);
        opool__roster_put(c, n, m - 1);
    }
}

OPOOL__HOT void opool__roster_release(opool__hot *c, uint32_t i) {
    uint32_t n = --c->count, k = c->slot[i].pos, last = c->roster[n];
    opool__roster_put(c, k, last);
    opool__roster_put(c, n, i);
    c->chain = k < n ? last + 1 : 0; /* the undo: none if i was the last */
}

/* ---- the free chain (OPOOL_NO_LIVE_LIST) ---------------------------------
 * A pool without a live list has no roster: its free slots are chained
 * through .pos, from c->chain, the last one's .pos a marker (the chain's
 * end). A live slot's .pos is left as it was. Pop and push are the only
 * steps of the inline paths; the rest rebuild it (src/opool.c). */

OPOOL__HOT uint32_t opool__chain_take(opool__hot *c) {
    uint32_t i = c->chain;
    c->chain = c->slot[i].pos;
    c->count++;
    return i;
}

OPOOL__HOT void opool__chain_release(opool__hot *c, uint32_t i) {
    c->count--;
    c->slot[i].pos = c->chain;
    c->chain = i;
}

/* ---- what a call knows of its pool -----------------------------------------
 * The steps below that depend on a pool's options take `known`: what the call
 * site knows of its pool when it is compiled, OPOOL__KNOWN_* bits. 0: nothing,
 * the pool's fields decide, as for every pool made at run time (opool *). A
 * typed pool whose flags are fixed at compile time (OPOOL_TYPED_FIXED,
 * opl::pool<T, Flags>) passes what its flags fix, a constant, and the
 * compiler drops every test the constant answers: one body, specialised by
 * its argument. A bit that does not hold of the pool is a caller's bug. */
#define OPOOL__KNOWN_FIXED 1u    /* it never grows: every slot is in chunk 0 */
#define OPOOL__KNOWN_LISTED 2u   /* it keeps a live list (a roster) */
#define OPOOL__KNOWN_UNLISTED 4u /* it keeps none (OPOOL_NO_LIVE_LIST: the free chain) */

/* The known bits of a pool created with desc flags `flags` and OPOOL_FIXED. */
#define OPOOL__KNOWN_OF(flags)                                                                     \
    (OPOOL__KNOWN_FIXED |                                                                          \
     (((flags)&OPOOL_NO_LIVE_LIST) ? OPOOL__KNOWN_UNLISTED : OPOOL__KNOWN_LISTED))

/* Whether pool c keeps no live list: the bits say, or else its roster. A
 * macro, not a function, on purpose: docs/PROOF.md, "Shared steps, written
 * out where the provers need it", says why. */
#define OPOOL__UNLISTED(c, known)                                                                  \
    (((known)&OPOOL__KNOWN_UNLISTED) ||                                                            \
     (!((known)&OPOOL__KNOWN_LISTED) && OPOOL_UNLIKELY((c)->roster == NULL)))

/* Whether slot i (< nslots) is in chunk 0, whose objects start at base[0]. */
OPOOL__HOT bool opool__in_first(const opool__hot *c, uint32_t i, unsigned known) {
    return (known & OPOOL__KNOWN_FIXED) || OPOOL_LIKELY(i < c->first);
}

/* The two halves of every alloc and free, inline or not. take: the free
 * stack's top goes live at its next generation (its index; its handle to
 * *out). unlink: live slot i leaves the live list with generation g. The
 * free stack is the roster's, or the chain of a pool without a live list. */
OPOOL__HOT uint32_t opool__take_as(opool__hot *c, opool_handle *out, unsigned known) {
    uint32_t i;
    if (OPOOL__UNLISTED(c, known)) {
        i = opool__chain_take(c);
    } else {
        i = opool__roster_take(c);
        opool__roster_undo(c, i);
    }
    uint32_t g = ++c->slot[i].gen;
    if (out) *out = opool__handle(i, g);
    return i;
}

OPOOL__HOT uint32_t opool__take(opool__hot *c, opool_handle *out) {
    return opool__take_as(c, out, 0);
}

OPOOL__HOT void opool__unlink_as(opool__hot *c, uint32_t i, uint32_t g, unsigned known) {
    if (OPOOL__UNLISTED(c, known))
        opool__chain_release(c, i);
    else
        opool__roster_release(c, i);
    c->slot[i].gen = g;
}

OPOOL__HOT void opool__unlink(opool__hot *c, uint32_t i, uint32_t g) {
    opool__unlink_as(c, i, g, 0);
}

/* ---- objects -------------------------------------------------------------- */

/* The position of i's highest set bit (i > 0). */
OPOOL__HOT uint32_t opool__top_bit(uint32_t i) {
#if defined(__GNUC__) || defined(__clang__)
    return (uint32_t)(63 - __builtin_clzll(i));
#else
    uint32_t t = 0;
    while (i >> t > 1) t++;
    return t;
#endif
}

/* The chunk of slot i past chunk 0 of a growing pool (i >= 2^shift):
 * chunk k begins at index 2^(shift+k-1), i's top bit. */
OPOOL__HOT uint32_t opool__chunk_of(const opool__hot *c, uint32_t i) {
    return opool__top_bit(i) - c->shift + 1;
}

/* The object offset bytes into the memory of chunk `chunk`. */
OPOOL__HOT void *opool__object_in(const opool__hot *c, uint32_t chunk, size_t offset) {
    void *obj = c->base[chunk] + offset;
    OPOOL__NONNULL(obj); /* lets callers' NULL checks fold away */
    return obj;
}

/* The object of slot i past chunk 0 (i >= 2^shift): (i - 2^t) * stride
 * bytes into its chunk, which begins at index 2^t, t being i's top bit.
 * opool__chunk_of counts the same bit; the compiler emits one count (why the
 * chunk still comes from that function: docs/PROOF.md, "How the contracts
 * are written"). Written as
 * i * stride - 2^t * stride, so that the product does not wait for the bit
 * count; the address is formed inside the chunk. */
OPOOL__HOT void *opool__object_far(const opool__hot *c, uint32_t i) {
    uint32_t t = opool__top_bit(i);
    return opool__object_in(c, opool__chunk_of(c, i), i * c->stride - ((size_t)1 << t) * c->stride);
}

/* The object of a slot known to exist. Chunk 0 (every slot of a fixed pool)
 * takes the first branch; a grown chunk costs a bit count, a shift and a
 * subtraction. */
OPOOL__HOT void *opool__object_as(const opool__hot *c, uint32_t i, unsigned known) {
    return opool__in_first(c, i, known) ? opool__object_in(c, 0, i * c->stride)
                                        : opool__object_far(c, i);
}

OPOOL__HOT void *opool__object(const opool__hot *c, uint32_t i) {
    return opool__object_as(c, i, 0);
}

/* Of a pool that never grows, chunk 0 (first slots) holds every slot: an
 * index past it is past the pool, and the far test is not compiled. */
OPOOL__HOT void *opool__get_as(const opool *p, opool_handle h, unsigned known) {
    const opool__hot *c = (const opool__hot *)(const void *)p;
    uint32_t i = (uint32_t)h.bits, g = (uint32_t)(h.bits >> 32);
    if (OPOOL_UNLIKELY(c == NULL)) return NULL;
    if (OPOOL_LIKELY(i < c->first)) { /* chunk 0 has every slot of a fixed pool */
        if (OPOOL_UNLIKELY(!opool__live_gen(c, i, g))) return NULL;
        return opool__object_in(c, 0, i * c->stride);
    }
    if ((known & OPOOL__KNOWN_FIXED) || OPOOL_UNLIKELY(i >= c->nslots || !opool__live_gen(c, i, g)))
        return NULL;
    return opool__object_far(c, i);
}

OPOOL__HOT void *opool__get_inline(const opool *p, opool_handle h) {
    return opool__get_as(p, h, 0);
}

OPOOL__HOT bool opool__valid_inline(const opool *p, opool_handle h) {
    return opool__get_inline(p, h) != NULL;
}

OPOOL__HOT void *opool__at_inline(const opool *p, uint32_t index) {
    const opool__hot *c = (const opool__hot *)(const void *)p;
    if (c == NULL || index >= c->nslots || !(c->slot[index].gen & 1)) return NULL;
    return opool__object(c, index);
}

/* A loop over the live list may be under way once its count or an entry
 * has been read (the documented loop starts with opool_count, the library's
 * with opool__live_count; every body reads its entry): an alloc from then
 * on appends and no longer undoes the last free, whose moved entry such a
 * loop must find where the free put it. The one write of these reads, to
 * the pool's own field; relaxed atomics where the compiler has them, so
 * that readers on several threads at once (a parallel read phase after a
 * free) do not race. */
#if (defined(__GNUC__) || defined(__clang__)) && !defined(__FRAMAC__)
#define OPOOL__UNDO_PEEK(c) __atomic_load_n(&(c)->chain, __ATOMIC_RELAXED)
#define OPOOL__UNDO_END(c) __atomic_store_n(&(c)->chain, 0u, __ATOMIC_RELAXED)
#else
#define OPOOL__UNDO_PEEK(c) ((c)->chain)
#define OPOOL__UNDO_END(c) ((c)->chain = 0)
#endif
OPOOL__HOT void opool__undo_end(const opool__hot *c) {
    opool__hot *w = (opool__hot *)(uintptr_t)(const void *)c;
    if (c->roster != NULL && OPOOL_UNLIKELY(OPOOL__UNDO_PEEK(w) != 0)) OPOOL__UNDO_END(w);
}

OPOOL__HOT uint32_t opool__loop_start(const opool *p) {
    const opool__hot *c = (const opool__hot *)(const void *)p;
    opool__undo_end(c);
    return c->count;
}

OPOOL__HOT uint32_t opool__count_inline(const opool *p) { return p ? opool__loop_start(p) : 0; }

OPOOL__HOT uint32_t opool__high_water_inline(const opool *p) {
    return p ? ((const opool__hot *)(const void *)p)->high_water : 0;
}

OPOOL__HOT opool_handle opool__handle_at_inline(const opool *p, uint32_t index) {
    const opool__hot *c = (const opool__hot *)(const void *)p;
    opool_handle h = {0};
    if (c != NULL && index < c->nslots && (c->slot[index].gen & 1))
        h = opool__handle(index, c->slot[index].gen);
    return h;
}

/* Compact handles: index in the low k bits, the generation's low 32 - k
 * bits above (its lowest bit, 1 while live, keeps a live one from {0}). */
OPOOL__HOT opool_handle32 opool__handle_compact_inline(const opool *p, opool_handle h) {
    const opool__hot *c = (const opool__hot *)(const void *)p;
    uint32_t i = (uint32_t)h.bits, g = (uint32_t)(h.bits >> 32);
    opool_handle32 r = {0};
    if (c != NULL && c->index_bits < 32 && i < c->nslots && opool__live_gen(c, i, g))
        r.bits = g << c->index_bits | i;
    return r;
}

OPOOL__HOT opool_handle opool__handle_expand_inline(const opool *p, opool_handle32 x) {
    const opool__hot *c = (const opool__hot *)(const void *)p;
    opool_handle h = {0};
    if (c == NULL || c->index_bits >= 32) return h;
    uint32_t k = c->index_bits, i = x.bits & ((1u << k) - 1);
    if (i >= c->nslots) return h;
    uint32_t g = c->slot[i].gen;
    if ((g & 1) && (g << k | i) == x.bits) h = opool__handle(i, g);
    return h;
}

/* The live list's length: count, 0 without one. One bound for the two
 * checks of the accessors below, read before the index is looked at: in the
 * header's loop the compiler then keeps it, the roster and the chunk 0
 * fields in registers instead of reloading them at every index. */
OPOOL__HOT uint32_t opool__listed_count(const opool__hot *c) {
    return c->roster != NULL ? c->count : 0;
}

OPOOL__HOT opool_handle opool__live_handle_inline(const opool *p, uint32_t i) {
    const opool__hot *c = (const opool__hot *)(const void *)p;
    opool_handle h = {0};
    if (c == NULL) return h;
    opool__undo_end(c);
    if (i < opool__listed_count(c)) {
        uint32_t s = c->roster[i];
        h = opool__handle(s, c->slot[s].gen);
    }
    return h;
}

OPOOL__HOT void *opool__live_object_inline(const opool *p, uint32_t i) {
    const opool__hot *c = (const opool__hot *)(const void *)p;
    if (c == NULL) return NULL;
    opool__undo_end(c);
    if (i >= opool__listed_count(c)) return NULL;
    return opool__object(c, c->roster[i]);
}

/* The entries a loop over the live list visits: count, or 0 (reported) in a
 * pool without one (OPOOL_FOREACH's start). */
OPOOL__HOT uint32_t opool__live_count(const opool *p) {
    const opool__hot *c = (const opool__hot *)(const void *)p;
    if (c == NULL) return 0;
    return OPOOL_LIKELY(c->roster != NULL) ? opool__loop_start(p) : opool__no_live_list(p);
}

/* The out-of-line alloc, its handle through a local of its own: so the
 * address of the caller's handle is never passed out of line, and the
 * compiler keeps that handle in a register (a store and a load less a call
 * in a loop that allocates). */
OPOOL__HOT void *opool__alloc_out(opool *p, opool_handle *out, const char *site) {
    opool_handle h = {0};
    void *obj = opool__alloc_slow(p, out ? &h : NULL, site);
    if (out) *out = h;
    return obj;
}

OPOOL__HOT void *opool__alloc_as(opool *p, opool_handle *out, const char *site, unsigned known) {
    opool__hot *c = (opool__hot *)(void *)p;
    if (OPOOL_UNLIKELY(c == NULL)) return opool__alloc_out(p, out, site);
    uint32_t n = c->count;
    if (OPOOL_UNLIKELY(n >= c->fast_limit)) {
        /* the pool is full, has hooks, or count is about to pass the high
         * water mark (n == high_water then: raise it here, still inline) */
        if (n >= c->limit || c->free_limit == 0) return opool__alloc_out(p, out, site);
        c->high_water = c->fast_limit = n + 1;
    }
    uint32_t i = opool__take_as(c, out, known);
    c->allocs++;
    return opool__object_as(c, i, known);
}

OPOOL__HOT void *opool__alloc_inline(opool *p, opool_handle *out, const char *site) {
    return opool__alloc_as(p, out, site, 0);
}

OPOOL__HOT opool_status opool__free_as(opool *p, opool_handle h, unsigned known) {
    opool__hot *c = (opool__hot *)(void *)p;
    uint32_t i = (uint32_t)h.bits, g = (uint32_t)(h.bits >> 32);
    if (OPOOL_UNLIKELY(c == NULL || i >= c->free_limit)) return opool__free_slow(p, h);
    if (OPOOL_UNLIKELY(!opool__live_gen(c, i, g))) return opool__free_slow(p, h);
    opool__unlink_as(c, i, g + 1, known);
    return OPOOL_OK;
}

OPOOL__HOT opool_status opool__free_inline(opool *p, opool_handle h) {
    return opool__free_as(p, h, 0);
}

/* ---- the public names: calls inline, the rest the exported functions ---- */

OPOOL__HOT uint32_t opool__handle_index_inline(opool_handle h) { return (uint32_t)h.bits; }
OPOOL__HOT uint32_t opool__handle_generation_inline(opool_handle h) {
    return (uint32_t)(h.bits >> 32);
}
OPOOL__HOT bool opool__handle_is_null_inline(opool_handle h) { return h.bits == 0; }
OPOOL__HOT bool opool__handle_eq_inline(opool_handle a, opool_handle b) { return a.bits == b.bits; }

#define opool_handle_index(h) opool__handle_index_inline(h)
#define opool_handle_generation(h) opool__handle_generation_inline(h)
#define opool_handle_is_null(h) opool__handle_is_null_inline(h)
#define opool_handle_eq(a, b) opool__handle_eq_inline(a, b)
/* Its call site, "file:line" (kept only under OPOOL_TRACK_SITES): a
 * constant the inline alloc hands to its out-of-line path alone. */
#define OPOOL__STR2(x) #x
#define OPOOL__STR(x) OPOOL__STR2(x)
#define OPOOL__SITE __FILE__ ":" OPOOL__STR(__LINE__)
#define opool_alloc(p, out) opool__alloc_inline(p, out, OPOOL__SITE)
#define opool_free(p, h) opool__free_inline(p, h)
#define opool_get(p, h) opool__get_inline(p, h)
#define opool_valid(p, h) opool__valid_inline(p, h)
#define opool_at(p, index) opool__at_inline(p, index)
#define opool_count(p) opool__count_inline(p)
#define opool_live_handle(p, i) opool__live_handle_inline(p, i)
#define opool_live_object(p, i) opool__live_object_inline(p, i)
#define opool_high_water(p) opool__high_water_inline(p)
#define opool_handle_at(p, index) opool__handle_at_inline(p, index)
#define opool_handle_compact(p, h) opool__handle_compact_inline(p, h)
#define opool_handle_expand(p, c) opool__handle_expand_inline(p, c)

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* OPOOL__ABI_CORE_H */

/* ==== the heap (opool_heap.h), once that header has declared it ========== */

#if defined(OPOOL__HEAP_DECLARED) && !defined(OPOOL__ABI_HEAP_H)
#define OPOOL__ABI_HEAP_H

#ifdef __cplusplus
extern "C" {
#endif

/* The header at the start of every 64 KiB page of blocks; the live bitmap
 * follows it, in uint64_t words: one bit per granule of the page, a granule
 * being the largest power of two that divides the block size, at most 128
 * (the block itself for 16, 32, 64; 16 bytes for 48), placed by
 * opool__hpage_word. A granule's bit is set exactly when a live block
 * starts there, so a free finds "a live block starts at this offset" from
 * the offset alone: no division, no bounds (the bitmap covers the whole
 * page, its header included, whose bits stay clear). Only pages that serve
 * a class have one that the heap reads (they alone are in its page set). */
typedef struct opool__hpage {
    void *free;       /* free blocks, linked through their first bytes */
    uintptr_t block0; /* the address of block 0 (in the empty-page cache: when it went there) */
    uint32_t size;    /* block size */
    uint16_t gmask;   /* granule - 1: an offset with one of these bits set starts no block */
    uint8_t gshift;   /* log2 of the granule */
    uint8_t spare8;
    uint32_t toslow;  /* blocks handed out (live) - slow_at, mod 2^32: a free that brings it
                         to 0 goes out of line (list upkeep) */
    uint32_t slow_at; /* live = toslow + slow_at */
    uint32_t carved;  /* bytes from block0 handed out at least once; blocks after are fresh */
    uint32_t end;     /* bytes from block0 to the end of the last block */
    struct opool__hpage *next, *prev; /* the class's listed pages, or the empty-page cache */
    uint32_t region;                  /* index of the region holding the page */
    uint8_t cls;                      /* class index */
    uint8_t flags;                    /* OPOOL__HPAGE_RESERVED, _LISTED, _ZERO (opool_heap.c) */
    uint16_t spare;
#if UINTPTR_MAX == 0xFFFFFFFFu
    uint32_t pad32[4]; /* 4-byte pointers: the four above take 16 bytes less; still 64 */
#endif
} opool__hpage;

/* What inline allocs and frees update of a class. Its live count is
 * high_water - room: an alloc takes one from room, or raises high_water when
 * room is 0; a free gives one back to room (one counter per call, not two).
 * Its allocations and the bytes they asked for are allocs and requested plus
 * what recent ones added to recent: one addition per alloc, of the size plus
 * one in bit OPOOL__HRECENT_COUNT (sizes are at most 2^15, so the bytes of
 * 2^23 allocs stay below that bit); when the count reaches 2^23, bit 63, the
 * alloc moves recent into allocs and requested, out of line. */
typedef struct opool__hclass_hot {
    opool__hpage *page; /* the current page, whose free list allocs pop: the listed page
                           freed into last; never NULL */
    uint32_t room, high_water;
    uint64_t recent;
    uint64_t allocs, requested;
} opool__hclass_hot;
#define OPOOL__HRECENT_COUNT 40

typedef struct opool__hentry { /* an entry of the heap's hash maps; key 0 = empty */
    uintptr_t key;
    size_t size; /* large blocks: the size asked for */
} opool__hentry;

/* The most classes a heap has: the desc's, and the heap's own above them
 * (src/opool_heap.c). */
#define OPOOL__HEAP_CLASSES 88

/* The start of every opool_heap. */
typedef struct opool__heap_hot {
    const uint8_t *class_of;    /* [small_max / 8 + 1]: the class of sizes (8k - 7 .. 8k] */
    const opool__hentry *pages; /* the page set: open addressing, key = page address; one
                                   empty entry while every free and realloc runs out of line
                                   (poisoning, a checker, an open episode) */
    uint32_t pages_mask;        /* its capacity - 1 */
    uint32_t small_max;         /* inline allocs for sizes 1..small_max; 0: none */
    uintptr_t span_lo;          /* the heap's reserved address range, if any: its pages */
    uintptr_t span_len;         /* [span_lo, span_lo + span_len) are readable and the heap's
                                   own; 0 while every free runs out of line */
    opool__hclass_hot cls[OPOOL__HEAP_CLASSES];
} opool__heap_hot;

/* The out-of-line paths of the inline heap alloc and free, and the page-list
 * upkeep of a free (src/opool_heap.c). Exported: ABI, not API. */
OPOOL_API void *opool__heap_alloc_slow(opool_heap *h, size_t size);
OPOOL_API opool_status opool__heap_free_slow(opool_heap *h, void *ptr);
OPOOL_API void opool__heap_page_freed(opool_heap *h, opool__hpage *pg);
OPOOL_API void *opool__heap_realloc_slow(opool_heap *h, void *ptr, size_t size);
OPOOL_API void opool__heap_fold_recent(opool__hclass_hot *k);

/* The page set's home slot of a page address (the lookup probes on from it). */
static inline uint32_t opool__heap_home(uintptr_t page, uint32_t mask) {
    return (uint32_t)((page * UINT64_C(0x9E3779B97F4A7C15)) >> 32) & mask;
}

/* The block index of offset off (< 2^16) from block 0 in *j; false when off
 * is not a multiple of the block size. recip = ceil(2^32 / size) with size
 * <= 2^15 makes the high half of off * recip the quotient, and the low half
 * below recip exactly when the remainder is 0: the rounding adds less than
 * 2^16 + size to the low half, and recip is at least 2^17. (The
 * out-of-line paths'.) */
static inline bool opool__hpage_index(uint32_t recip, uintptr_t off, uint32_t *j) {
    uint64_t q = off;
    q *= recip;
    *j = (uint32_t)(q >> 32);
    return (uint32_t)q < recip;
}

/* The live-bitmap word of the granule at address a of page pg, and in *g
 * its bit there. Granule g = offset >> gshift is bit g / words of word
 * g % words (words = 1024 >> gshift): the bit is the offset's top six bits,
 * the word its bits gshift .. 9. So blocks next to each other have their
 * bits in different words, and a run of allocs or frees in address order
 * does not wait on one word's last store at every step. */
static inline uint64_t *opool__hpage_word(const opool__hpage *pg, uintptr_t a, uint32_t *g) {
    uint32_t off = a & (OPOOL_HEAP_PAGE - 1); /* no cast: uintptr_t may be uint32_t */
    *g = off / (OPOOL_HEAP_PAGE / 64);
    return (uint64_t *)(uintptr_t)(pg + 1) + ((a % (OPOOL_HEAP_PAGE / 64)) >> pg->gshift);
}

/* Whether a live block of page pg starts at address a (of that page). */
static inline bool opool__hpage_live(const opool__hpage *pg, uintptr_t a) {
    uint32_t g;
    const uint64_t *w = opool__hpage_word(pg, a, &g);
    return !(a & pg->gmask) && ((*w >> (g & 63)) & 1);
}

/* The statistics of an alloc of size bytes from class k (what the inline and
 * the out-of-line alloc share). */
static inline void opool__hclass_count_alloc(opool__hclass_hot *k, size_t size) {
    if (k->room != 0)
        k->room--;
    else
        k->high_water++;
    if (OPOOL_UNLIKELY((int64_t)(k->recent += size + ((uint64_t)1 << OPOOL__HRECENT_COUNT)) < 0))
        opool__heap_fold_recent(k);
}

/* ---- a class block's alloc and free, in steps --------------------------
 * Each step has one body, here: the inline paths below and the out-of-line
 * ones of src/opool_heap.c (which add the checks and hooks around them)
 * both call it. */

/* The head of pg's free list, popped; NULL when the list is empty. */
static inline void *opool__hpage_pop(opool__hpage *pg) {
    void **b = (void **)pg->free;
    if (OPOOL_LIKELY(b != NULL)) pg->free = *b;
    return b;
}

/* The next block of pg never handed out; NULL when every block has been. */
static inline void *opool__hpage_carve(opool__hpage *pg) {
    if (OPOOL_UNLIKELY(pg->carved >= pg->end)) return NULL;
    void *b = (void *)(pg->block0 + pg->carved);
    pg->carved += pg->size;
    return b;
}

/* Block b of pg handed out: its live bit set, the page's count raised. */
static inline void opool__hpage_lent(opool__hpage *pg, void *b) {
    uint32_t g;
    uint64_t *w = opool__hpage_word(pg, (uintptr_t)b, &g);
    *w |= (uint64_t)1 << (g & 63);
    pg->toslow++;
}

/* Block b of pg given back, if a live block of pg starts at b: its live
 * bit cleared, b on top of the page's free list (linked through its first
 * bytes), true. False, and nothing changed, otherwise. */
static inline bool opool__hpage_take_back(opool__hpage *pg, void *b) {
    uint32_t g;
    uint64_t *w = opool__hpage_word(pg, (uintptr_t)b, &g), v = *w;
    if (OPOOL_UNLIKELY(((uintptr_t)b & pg->gmask) || !((v >> (g & 63)) & 1))) return false;
    *w = v & ~((uint64_t)1 << (g & 63));
    *(void **)b = pg->free;
    pg->free = b;
    return true;
}

/* After a block of pg went back to class k: list upkeep when the page's
 * count reaches its mark, else pg becomes the class's current page (the
 * next alloc of the class gets the block back). */
static inline void opool__hpage_after_free(opool_heap *h, opool__hclass_hot *k, opool__hpage *pg) {
    if (OPOOL_UNLIKELY(--pg->toslow == 0))
        opool__heap_page_freed(h, pg);
    else
        k->page = pg;
}

OPOOL__HOT void *opool__heap_alloc_inline(opool_heap *h, size_t size) {
    opool__heap_hot *c = (opool__heap_hot *)(void *)h;
    /* size 0 wraps to SIZE_MAX: out of line, as are fallback sizes */
    if (OPOOL_UNLIKELY(c == NULL || size - 1 >= c->small_max))
        return opool__heap_alloc_slow(h, size);
    opool__hclass_hot *k = &c->cls[c->class_of[(size + 7) >> 3]];
    opool__hpage *pg = k->page;
    void *b = opool__hpage_pop(pg);
    if (OPOOL_UNLIKELY(b == NULL) && (b = opool__hpage_carve(pg)) == NULL)
        return opool__heap_alloc_slow(h, size);
    opool__hpage_lent(pg, b);
    opool__hclass_count_alloc(k, size);
    return b;
}

OPOOL__HOT opool_status opool__heap_free_inline(opool_heap *h, void *ptr) {
    opool__heap_hot *c = (opool__heap_hot *)(void *)h;
    uintptr_t a = (uintptr_t)ptr, base = a - (a & (OPOOL_HEAP_PAGE - 1));
    /* a page of the reserved range, else of the page set; base 0 (NULL among others)
     * would match an empty entry: out of line */
    if (OPOOL_UNLIKELY(c == NULL || base == 0 ||
                       (a - c->span_lo >= c->span_len &&
                        c->pages[opool__heap_home(base, c->pages_mask)].key != base)))
        return opool__heap_free_slow(h, ptr);
    opool__hpage *pg = (opool__hpage *)base;
    if (OPOOL_UNLIKELY(!opool__hpage_take_back(pg, ptr)))
        return opool__heap_free_slow(h, ptr); /* not a live block's start: rejected there */
    opool__hclass_hot *k = &c->cls[pg->cls];
    k->room++;
    opool__hpage_after_free(h, k, pg);
    return OPOOL_OK;
}

/* A live block of h that a resize keeps in its class comes back as it is,
 * with no call; everything else runs out of line. */
OPOOL__HOT void *opool__heap_realloc_inline(opool_heap *h, void *ptr, size_t size) {
    opool__heap_hot *c = (opool__heap_hot *)(void *)h;
    uintptr_t a = (uintptr_t)ptr, base = a - (a & (OPOOL_HEAP_PAGE - 1));
    /* size 0 wraps to SIZE_MAX, ptr NULL gives base 0: both out of line */
    if (OPOOL_UNLIKELY(c == NULL || base == 0 || size - 1 >= c->small_max ||
                       (a - c->span_lo >= c->span_len &&
                        c->pages[opool__heap_home(base, c->pages_mask)].key != base)))
        return opool__heap_realloc_slow(h, ptr, size);
    const opool__hpage *pg = (const opool__hpage *)base;
    if (OPOOL_UNLIKELY(!opool__hpage_live(pg, a) || c->class_of[(size + 7) >> 3] != pg->cls))
        return opool__heap_realloc_slow(h, ptr, size);
    return ptr;
}

#define opool_heap_alloc(h, size) opool__heap_alloc_inline(h, size)
#define opool_heap_free(h, ptr) opool__heap_free_inline(h, ptr)
#define opool_heap_realloc(h, ptr, size) opool__heap_realloc_inline(h, ptr, size)

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* OPOOL__ABI_HEAP_H */

/* ==== the concurrent pool (opool_mt.h), once that header has declared it == */

#if defined(OPOOL__MT_DECLARED) && !defined(OPOOL__ABI_MT_H)
#define OPOOL__ABI_MT_H

/* The cache hit paths are inline with GCC and Clang (their __atomic
 * builtins; other compilers call the exported functions), except in the
 * library's test builds (OPOOL_TEST_HOOKS, OPOOL_RELACY), whose calls reach
 * the same bodies through the exported functions, with the named points of
 * src/opool_mt_points.h in them. OPOOL_MT_NO_INLINE turns them off too
 * (every call out of line). */
#if (defined(__GNUC__) || defined(__clang__)) && !defined(OPOOL_TEST_HOOKS) &&                     \
    !defined(OPOOL_RELACY) && !defined(OPOOL_MT_NO_INLINE)
#define OPOOL__MT_INLINE 1
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The words of a pool that cache hits read: one cache line of it, written
 * only when a thread starts or stops stealing or waiting, when a free wakes
 * a sleeper and when an exhaustion episode opens or closes. */
typedef struct opool__mt_signals {
    OPOOL__ATOMIC(uint32_t) thieves; /* threads that may take parked slots from caches */
    OPOOL__ATOMIC(uint32_t) waiters; /* threads in alloc_wait */
    OPOOL__ATOMIC(uint32_t) epoch;   /* the futex word: bumped by a free that saw a waiter */
    uint32_t spare;
    opool__episode episode;
} opool__mt_signals;

/* A cache record (docs/CONCURRENCY.md, "Caches (magazines) and stealing" and "What a cache hit
 * costs"). Its entries, ent[k & mask], follow it in the same allocation (opool__mt_ent). It holds
 * copies of the pool's fixed fields that a hit needs, so a hit reads no line of the pool but its
 * signals: on LP64 the record is two cache lines, its owner's. The 64-bit atomic fields come first,
 * so that C (where _Atomic(uint64_t) may be more aligned than uint64_t, as on i386) and C++ put
 * every field at the same offset. */
struct opool_mt_cache {
    /* The parked slots are ent[k & mask] for k in [top, bottom): a work-
     * stealing deque, oldest at top. The owner pushes and takes at bottom
     * (only it writes bottom); thieves and the owner's spills take at top by
     * CAS. Both only grow. */
    OPOOL__ATOMIC(uint64_t) bottom;
    OPOOL__ATOMIC(uint64_t) top;
    OPOOL__ATOMIC(int64_t) live; /* allocs minus frees through this record: only its owner writes */
    /* its home id << 32 (0: it never claims biased): CONCURRENCY.md, "What a cache hit costs" */
    uint64_t home;
    OPOOL__ATOMIC(uint32_t) * gen; /* the pool's, copied: its generations */
    OPOOL__ATOMIC(uint64_t) * own; /* the pool's, copied: its slots' home words */
    unsigned char *objects;        /* the pool's, copied */
    size_t stride;                 /* the pool's, copied */
    opool__mt_signals *sig;        /* the pool's */
    struct opool_mt *pool;
    struct opool_mt_cache *next_rec; /* registry link: set before the record is published */
    uint32_t mask;                   /* entries - 1 (a power of two - 1) */
    uint32_t size;                   /* the current owner's size */
    /* OPOOL__MT_BIASED (0) until another path frees a slot it allocated:
     * read by its owner's every free, written once by a revoker */
    OPOOL__ATOMIC(uint32_t) remote;
    /* nonzero: hits may take the inline path (a home id, the membarrier
     * barrier, and a pool without hooks) */
    uint32_t fast;
    uint32_t capacity;  /* the pool's, copied */
    uint32_t retire_at; /* a free making this generation retires its slot (odd: never) */
    uint32_t half;      /* the current owner's size / 2 */
    OPOOL__ATOMIC(uint32_t) active; /* an owner has it */
};

/* Where the entries start: the record's size rounded up to 8, the same in C
 * and in C++ whatever padding each gives the record. */
#define OPOOL__MT_CACHE_HEAD ((sizeof(struct opool_mt_cache) + 7) & ~(size_t)7)

/* The entries of cache c (its owner writes them; anyone may read them). */
static inline OPOOL__ATOMIC(uint32_t) * opool__mt_ent(const opool_mt_cache *c) {
    return (OPOOL__ATOMIC(uint32_t) *)((uintptr_t)c + OPOOL__MT_CACHE_HEAD);
}

/* Where the inline cache alloc and free go for everything but a hit
 * (src/opool_mt_cache.c). Exported, since the inline code in your program
 * calls them: ABI, not API.
 *   alloc_slow     the whole alloc: no fast record, an empty cache (refill)
 *   alloc_lowered  bottom was lowered to b and the barrier passed, but a
 *                  thief is registered or has emptied the cache: the take
 *                  as Chase-Lev's, then the rest of the alloc
 *   free_slow      the whole free: any handle that is not a live slot this
 *                  cache allocated, a full cache, a retiring slot
 *   free_revoked   h's claim is stored but the cache is no longer biased:
 *                  the claim's CAS, then the rest of the free
 *   parked         the slot is parked and published, and a thread waits or
 *                  an episode is open: hand it over, or see the episode end */
OPOOL_API void *opool__mt_cache_alloc_slow(opool_mt_cache *c, opool_handle *out);
OPOOL_API void *opool__mt_cache_alloc_lowered(opool_mt_cache *c, opool_handle *out, uint64_t b);
OPOOL_API opool_status opool__mt_cache_free_slow(opool_mt_cache *c, opool_handle h);
OPOOL_API opool_status opool__mt_cache_free_revoked(opool_mt_cache *c, opool_handle h);
OPOOL_API void opool__mt_cache_parked(opool_mt_cache *c);

/* The steps of a cache hit, each written once below, for the inline hits
 * and for the library's own paths (src/opool_mt_cache.c): on these macros,
 * here GCC's and Clang's __atomic builtins, a compiler barrier and no named
 * points. The library defines them first, on its own atomics, with its
 * barrier and the named points of its test builds (src/opool_mt_steps.h);
 * the single header keeps these. The barrier and the points are used in
 * the hits only, which run only where the other side of the barriers is
 * membarrier (c->fast): the steps the library's other paths share are
 * memory operations, with no barrier in them. */
#if !defined(OPOOL__MT_STEPS) && (defined(__GNUC__) || defined(__clang__))
#define OPOOL__MT_STEPS 1
#if defined(__clang__) && !defined(__cplusplus)
#define OPOOL__MT_LOAD_RELAXED(p) __c11_atomic_load(p, __ATOMIC_RELAXED)
#define OPOOL__MT_LOAD_ACQUIRE(p) __c11_atomic_load(p, __ATOMIC_ACQUIRE)
#define OPOOL__MT_STORE_RELAXED(p, v) __c11_atomic_store(p, v, __ATOMIC_RELAXED)
#define OPOOL__MT_STORE_RELEASE(p, v) __c11_atomic_store(p, v, __ATOMIC_RELEASE)
#else
#define OPOOL__MT_LOAD_RELAXED(p) __atomic_load_n(p, __ATOMIC_RELAXED)
#define OPOOL__MT_LOAD_ACQUIRE(p) __atomic_load_n(p, __ATOMIC_ACQUIRE)
#define OPOOL__MT_STORE_RELAXED(p, v) __atomic_store_n(p, v, __ATOMIC_RELAXED)
#define OPOOL__MT_STORE_RELEASE(p, v) __atomic_store_n(p, v, __ATOMIC_RELEASE)
#endif
/* The owner's side of the asymmetric barriers of CONCURRENCY.md, "Caches (magazines) and stealing",
 * "Waiting, and the stranding policy" and "What a cache hit costs": orders the compiler only. */
#define OPOOL__MT_LIGHT_BARRIER(c) __atomic_signal_fence(__ATOMIC_SEQ_CST)
#define OPOOL__MT_HIT_POINT(c, at) ((void)0)
#endif

#if defined(OPOOL__MT_STEPS)

/* The handle check of every path of the concurrent pool: OPOOL_OK when g is
 * slot i's generation and a live one; else OPOOL_EINVAL (an even generation,
 * an index past capacity) or OPOOL_ESTALE. acquire: the object's state from
 * the thread that made it live, and the slot's home, written before
 * generation g was released. */
static inline opool_status opool__mt_live(OPOOL__ATOMIC(uint32_t) * gen, uint32_t capacity,
                                          uint32_t i, uint32_t g) {
    if (OPOOL_UNLIKELY(!(g & 1) || i >= capacity)) return OPOOL_EINVAL;
    if (OPOOL_UNLIKELY(OPOOL__MT_LOAD_ACQUIRE(&gen[i]) != g)) return OPOOL_ESTALE;
    return OPOOL_OK;
}

/* The owner lowers bottom to take the newest parked slot: false when the
 * cache is empty (a stale top is smaller, so "empty" is never wrong), else
 * bottom lowered and in *b the entry to take. The light barrier that must
 * follow, before the read of thieves, is the caller's. */
static inline bool opool__mt_lower(opool_mt_cache *c, uint64_t *b) {
    uint64_t x = OPOOL__MT_LOAD_RELAXED(&c->bottom); /* ours */
    if (OPOOL_UNLIKELY(x == OPOOL__MT_LOAD_RELAXED(&c->top))) return false;
    OPOOL__MT_STORE_RELAXED(&c->bottom, --x);
    *b = x;
    return true;
}

/* The owner's count of what went live through c, by d (only it writes; only
 * counts read it). */
static inline void opool__mt_count_own(opool_mt_cache *c, int64_t d) {
    OPOOL__MT_STORE_RELAXED(&c->live, OPOOL__MT_LOAD_RELAXED(&c->live) + d);
}

/* Slot i's home word, for the generation about to go live (published by
 * opool__mt_go_live's store). */
static inline void opool__mt_set_home(OPOOL__ATOMIC(uint64_t) * own, uint32_t i, uint64_t home) {
    OPOOL__MT_STORE_RELAXED(&own[i], home);
}

/* Slot i goes live with generation g, published (release): a get that sees
 * g sees the object as prepared, and a free that sees g sees its home. The
 * handle to *out. */
static inline void opool__mt_go_live(OPOOL__ATOMIC(uint32_t) * gen, uint32_t i, uint32_t g,
                                     opool_handle *out) {
    OPOOL__MT_STORE_RELEASE(&gen[i], g);
    if (out) *out = opool__handle(i, g);
}

/* The claim of slot i's generation g by its home c, by plain stores
 * (CONCURRENCY.md, "What a cache hit costs"): the claim word, which a revoker reads after its
 * barrier. The light barrier, then opool__mt_still_biased, must follow. */
static inline void opool__mt_claim_store(opool_mt_cache *c, uint32_t i, uint32_t g) {
    OPOOL__MT_STORE_RELAXED(&c->own[i], c->home | g);
}

/* After a claim and the light barrier: true while no revoker has come, and
 * the claim stands (relaxed: ordered after the claim by the barrier pair). */
static inline bool opool__mt_still_biased(const opool_mt_cache *c) {
    return OPOOL__MT_LOAD_RELAXED(&c->remote) == 0; /* OPOOL__MT_BIASED */
}

/* The publication of the park (CONCURRENCY.md, "Waiting, and the stranding policy"), the one way
 * slots enter a cache: bottom raised to b over the entries written below it (release: a thief that
 * reads the new bottom sees them and their slots). The light barrier, then opool__mt_waiting, must
 * follow. */
static inline void opool__mt_set_bottom(opool_mt_cache *c, uint64_t b) {
    OPOOL__MT_STORE_RELEASE(&c->bottom, b);
}

/* After a publication and the light barrier: true if a thread waits. It may
 * have scanned this cache before the entries were there and gone to sleep,
 * so they must go to the shared list, which wakes it (relaxed: ordered
 * after the publication by the barrier pair). */
static inline bool opool__mt_waiting(const opool_mt_cache *c) {
    return OPOOL__MT_LOAD_RELAXED(&c->sig->waiters) != 0;
}

/* The alloc hit: the owner's take of the newest parked slot with no thief
 * registered (CONCURRENCY.md, "Caches (magazines) and stealing"), the slot made live with c as its
 * home (CONCURRENCY.md, "What a cache hit costs"). The exported opool_mt_cache_alloc runs it too
 * (src/opool_abi.c), so the library's tests run this body. */
OPOOL__HOT void *opool__mt_cache_alloc_inline(opool_mt_cache *c, opool_handle *out) {
    uint64_t b;
    if (OPOOL_UNLIKELY(c == NULL || !c->fast || !opool__mt_lower(c, &b)))
        return opool__mt_cache_alloc_slow(c, out); /* empty: the refill */
    OPOOL__MT_LIGHT_BARRIER(c);                    /* the bottom store before the read of thieves */
    /* acquire: a thief that has left published its CAS on top before */
    if (OPOOL_UNLIKELY(OPOOL__MT_LOAD_ACQUIRE(&c->sig->thieves) != 0 ||
                       OPOOL__MT_LOAD_RELAXED(&c->top) > b))
        return opool__mt_cache_alloc_lowered(c, out, b);
    uint32_t i = OPOOL__MT_LOAD_RELAXED(&opool__mt_ent(c)[b & c->mask]);
    opool__mt_set_home(c->own, i, c->home);
    opool__mt_go_live(c->gen, i, OPOOL__MT_LOAD_RELAXED(&c->gen[i]) + 1, out);
    opool__mt_count_own(c, 1);
    void *obj = c->objects + i * c->stride;
    OPOOL__NONNULL(obj);
    return obj;
}

/* The free hit: a live handle of a slot this cache allocated, while the
 * cache is biased, parked in a cache with room: the claim with plain stores
 * (CONCURRENCY.md, "What a cache hit costs"), then the park and its handshake with waiters
 * (CONCURRENCY.md, "Waiting, and the stranding policy"). The exported opool_mt_cache_free runs it
 * too. */
OPOOL__HOT opool_status opool__mt_cache_free_inline(opool_mt_cache *c, opool_handle h) {
    uint32_t i = (uint32_t)h.bits, g = (uint32_t)(h.bits >> 32);
    if (OPOOL_UNLIKELY(c == NULL || !c->fast ||
                       opool__mt_live(c->gen, c->capacity, i, g) != OPOOL_OK))
        return opool__mt_cache_free_slow(c, h);
    uint64_t b = OPOOL__MT_LOAD_RELAXED(&c->bottom); /* ours */
    /* a top read after the check's acquire only grows before the park
     * (full stays false) */
    if (OPOOL_UNLIKELY(OPOOL__MT_LOAD_RELAXED(&c->own[i]) != c->home ||
                       b - OPOOL__MT_LOAD_RELAXED(&c->top) >= c->size || g + 1 == c->retire_at))
        return opool__mt_cache_free_slow(c, h);
    OPOOL__MT_HIT_POINT(c, CLAIM_CHECKED);
    opool__mt_claim_store(c, i, g);
    OPOOL__MT_LIGHT_BARRIER(c); /* the claim before the read of remote */
    OPOOL__MT_HIT_POINT(c, CLAIM_STORED);
    if (OPOOL_UNLIKELY(!opool__mt_still_biased(c))) return opool__mt_cache_free_revoked(c, h);
    OPOOL__MT_HIT_POINT(c, CLAIM_BIASED);
    OPOOL__MT_STORE_RELAXED(&c->gen[i], g + 1); /* published by the park */
    opool__mt_count_own(c, -1);
    OPOOL__MT_STORE_RELAXED(&opool__mt_ent(c)[b & c->mask], i); /* published below */
    opool__mt_set_bottom(c, b + 1);
    OPOOL__MT_LIGHT_BARRIER(c); /* the park before the read of waiters */
    OPOOL__MT_HIT_POINT(c, PARK_PUBLISHED);
    if (OPOOL_UNLIKELY(opool__mt_waiting(c) ||
                       OPOOL__MT_LOAD_RELAXED(&c->sig->episode.failures) != 0))
        opool__mt_cache_parked(c);
    return OPOOL_OK;
}

#endif /* OPOOL__MT_STEPS */

#if defined(OPOOL__MT_INLINE)
#define opool_mt_cache_alloc(c, out) opool__mt_cache_alloc_inline(c, out)
#define opool_mt_cache_free(c, h) opool__mt_cache_free_inline(c, h)

#endif /* OPOOL__MT_INLINE */

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* OPOOL__ABI_MT_H */

#if defined(__cplusplus) && defined(__clang__)
#pragma clang diagnostic pop
#endif
