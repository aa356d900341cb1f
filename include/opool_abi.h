/*
 * opool_abi.h -- NOT API, BUT ABI: the private layout behind the inline fast
 * paths of opool.h, and those paths' bodies; what every inline path shares
 * (OPOOL__HOT, OPOOL__ATOMIC). opool_abi_heap.h and opool_abi_mt.h are the
 * heap's and the concurrent pool's parts, built on this one.
 *
 * Do not include this file yourself and do not use anything in it: opool.h
 * includes it at its end, and every name here may change in any release.
 * It is installed because inline code compiled into your program reads
 * these structs directly: changing any layout here, or the contract of a
 * function declared here, breaks binaries built against an older copy of
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

/* A loop over the live list starts by reading its count (the documented
 * loop with opool_count, the library's with opool__live_count), which ends
 * the undo of the last free: an alloc from then on appends. Inside the
 * loop a free, then an alloc later on, may still undo: the entry the free
 * moved came from the end, which the loop has visited, or, once frees of
 * others took the end below the loop's index, from a place the loop has
 * still to reach. The loop steps over such places by reading past the end,
 * which ends the undo too, so an undo never sends an entry behind the loop.
 * Reading an entry below count writes nothing: a loop's body keeps the
 * roster and the chunk fields in registers (GCC reloads every field after
 * an atomic). The one write (opool_count, a read past the end) is a relaxed
 * atomic where the compiler has them, so that readers on several threads at
 * once (a parallel read phase after a free) do not race. */
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

/* Whether index i of the live list is below its end: a loop's test at
 * each index (OPOOL_FOREACH's, the accessors'). An index past the end ends
 * the undo (above). */
OPOOL__HOT bool opool__live_has(const opool__hot *c, uint32_t i) {
    if (OPOOL_LIKELY(i < opool__listed_count(c))) return true;
    opool__undo_end(c);
    return false;
}

OPOOL__HOT opool_handle opool__live_handle_inline(const opool *p, uint32_t i) {
    const opool__hot *c = (const opool__hot *)(const void *)p;
    opool_handle h = {0};
    if (c != NULL && opool__live_has(c, i)) {
        uint32_t s = c->roster[i];
        h = opool__handle(s, c->slot[s].gen);
    }
    return h;
}

OPOOL__HOT void *opool__live_object_inline(const opool *p, uint32_t i) {
    const opool__hot *c = (const opool__hot *)(const void *)p;
    if (c == NULL || !opool__live_has(c, i)) return NULL;
    return opool__object(c, c->roster[i]);
}

/* The same of pool p, NULL-safe: OPOOL_FOREACH's test at each index. */
OPOOL__HOT bool opool__live_in(const opool *p, uint32_t i) {
    return p != NULL && opool__live_has((const opool__hot *)(const void *)p, i);
}

/* The index a loop at index `at` + 1 reads next (the C++ iterators' step):
 * at, or the live list's end when frees took the places from there on
 * away (which ends the undo, as a read past the end). */
OPOOL__HOT uint32_t opool__live_next(const opool *p, uint32_t at) {
    if (opool__live_in(p, at)) return at;
    return p ? opool__listed_count((const opool__hot *)(const void *)p) : 0;
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

#if defined(__cplusplus) && defined(__clang__)
#pragma clang diagnostic pop
#endif
