/*
 * opool_internal.h -- what the modules of src/ share about a pool: the layout
 * behind opool_abi.h's opool__hot, the markers, and the slot operations every
 * module goes through (the debug hooks: opool_track.h; reports: opool_diag.h).
 * Private: never installed.
 */
#ifndef OPOOL_INTERNAL_H
#define OPOOL_INTERNAL_H

#include "opool.h"
#include "opool_diag.h"
#include "opool_platform.h"
#include "opool_track.h"

#include <stdalign.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#define OPOOL_NOINLINE __attribute__((noinline))
#elif defined(_MSC_VER)
#define OPOOL_NOINLINE __declspec(noinline)
#else
#define OPOOL_NOINLINE
#endif

/* Internal consistency checks (cheap ones); compiled out with NDEBUG. */
#ifndef NDEBUG
#include <assert.h>
#define opool__assert(x) assert(x)
#else
#define opool__assert(x) ((void)0)
#endif

/* ==== private layout ===================================================== */

/* Roster-position markers for slots that are not in the roster. */
#define OPOOL__RETIRED UINT32_MAX        /* generation used up: never comes back */
#define OPOOL__UNBACKED (UINT32_MAX - 1) /* its chunk was given back by shrink */
/* The free chain's end (OPOOL_NO_LIVE_LIST): the last free slot's .pos. */
#define OPOOL__CHAIN_END (UINT32_MAX - 2)

/* Bits of opool__slow_bits: why alloc/free must take the out-of-line path. */
#define OPOOL__SLOW_HOOKS 1u   /* init, fini, ZERO, POISON, RETIRE_ON_WRAP, a memory checker */
#define OPOOL__SLOW_EPISODE 2u /* an exhaustion episode is open: frees check for its end */
#define OPOOL__SLOW_SITES 4u   /* OPOOL_TRACK_SITES: allocs record their site (frees stay inline) */

/* Where and when slot i's object was allocated (OPOOL_TRACK_SITES): true of
 * the object while gen is the slot's generation. */
typedef struct opool__site {
    const char *where; /* "file:line" of the alloc's call; NULL: unknown */
    uint64_t serial;   /* the alloc's number in the pool: lower is older */
    uint32_t gen;
} opool__site;

struct opool {
    opool__hot hot; /* first: the header's inline functions cast opool * to it */
    opool_desc desc;
    opool_allocator mem;   /* desc.allocator with defaults filled in */
    uint32_t gen0;         /* every slot's first generation (even) */
    uint32_t max_capacity; /* no index reaches this */
    uint32_t nchunks;      /* chunks the index space of max_capacity spans */
    uint32_t slot_cap;     /* entries the slot and roster arrays hold */
    uint32_t retired;
    size_t align; /* of objects */
    opool__episode episode;
    opool__quota quota;
    opool__site *sites; /* [sites_cap], OPOOL_TRACK_SITES: slot i's object's site */
    uint32_t sites_cap;
    uint32_t run;         /* allocs failed since the last that succeeded, or a free */
    uint64_t run_mark;    /* allocs and frees done at the last failed alloc */
    uint32_t peak_demand; /* stats.peak_demand */
    uint64_t episodes;    /* stats.episodes */
    bool arrays_owned;    /* slot/roster arrays came from the allocator */
    bool checker;         /* ASan or Valgrind watches the objects */
    uint64_t failed_allocs, rejected, evictions, grows;
    void *block;       /* the creation block, when opool_create allocated it */
    size_t block_size; /* bytes of the creation block (or of the caller's buffer used) */
};

_Static_assert(offsetof(struct opool, hot) == 0, "the inline API reads hot at offset 0");
_Static_assert(sizeof(opool__slot) == 8, "one slot record per 8 bytes");

/* Bytes a slot of a pool with these desc.flags keeps in the slot and roster
 * arrays, which share one block: its record, and its roster entry unless
 * the pool has no live list. */
static inline size_t opool__slot_bytes(uint32_t flags) {
    return sizeof(opool__slot) + ((flags & OPOOL_NO_LIVE_LIST) ? 0 : sizeof(uint32_t));
}
/* The block's bytes for n slots (for an n whose block exists;
 * opool__arrays_fit checks a new n). */
static inline size_t opool__arrays_bytes(uint32_t flags, uint32_t n) {
    return (size_t)n * opool__slot_bytes(flags);
}
_Static_assert(offsetof(opool__hot, base) + sizeof(char *) <= OPOOL__LINE || sizeof(void *) > 8,
               "the common inline paths read one cache line");

typedef struct opool__geometry {
    size_t stride, align;  /* align: of chunks of objects, at least a cache line */
    uint32_t first;        /* slots in chunk 0 */
    uint32_t max_capacity; /* effective growth limit */
    uint32_t shift;        /* see opool__hot.shift */
    size_t objects_at;     /* offset of chunk 0's objects from an aligned header */
    size_t required;       /* bytes opool_create_in needs from an arbitrary buffer */
} opool__geometry;

/* ---- shared by the modules of src/ (defined in opool.c) ------------------ */

static inline bool opool__mul_ok(size_t a, size_t b, size_t *out) {
    if (b != 0 && a > SIZE_MAX / b) return false;
    *out = a * b;
    return true;
}

static inline bool opool__add_ok(size_t a, size_t b, size_t *out) {
    if (a > SIZE_MAX - b) return false;
    *out = a + b;
    return true;
}

/* *bytes = opool__arrays_bytes(flags, n), or false when a size_t cannot hold
 * it (a 32-bit machine, from 358M slots: an id-only pool may ask for that). */
static inline bool opool__arrays_fit(uint32_t flags, uint32_t n, size_t *bytes) {
    return opool__mul_ok(opool__slot_bytes(flags), n, bytes);
}

/* Give back a block of allocator a: through free_aligned when it is set,
 * with the alignment the block was asked with, else through free. */
static inline void opool__mem_free(const opool_allocator *a, void *ptr, size_t size, size_t align) {
    if (a->free_aligned)
        a->free_aligned(a->ctx, ptr, size, align);
    else
        a->free(a->ctx, ptr, size);
}

/* What the core asks its allocator for (opool.h, opool_allocator, says why):
 * the creation block, slot arrays, and (opool__chunk_storage) object chunks. */
#define OPOOL__BLOCK_ALIGN alignof(struct opool)
#define OPOOL__ARRAY_ALIGN alignof(opool__slot)

/* ---- geometry rules: each written once, used by every module ------------ */

/* The bytes from address a up to the next multiple of align (a power of
 * two): the one place where the core rounds an address; the rounded address
 * is then a + OPOOL__PAD(a, align), pointer arithmetic within a's block.
 * proof/frama_c.h defines its own first (docs/PROOF.md, "Assumptions"). */
#ifndef OPOOL__PAD
#define OPOOL__PAD(a, align) ((size_t)(-(uintptr_t)(a) & ((uintptr_t)(align)-1)))
#endif

/* False when address a cannot lie in the block that b points into. In C
 * every address is compared as an integer, so this is 1 and costs nothing
 * (opool_handle_of). proof/frama_c.h defines its own first (docs/PROOF.md,
 * "Assumptions"). */
#ifndef OPOOL__SAME_BLOCK
#define OPOOL__SAME_BLOCK(a, b) 1
#endif

/* The alignment of desc's objects: object_align, or alignof(max_align_t). */
static inline size_t opool__object_align(const opool_desc *d) {
    return d->object_align ? d->object_align : alignof(max_align_t);
}

/* The distance between objects: size rounded up to align (a power of two).
 * False if that overflows. */
static inline bool opool__stride_of(size_t size, size_t align, size_t *out) {
    if (!opool__add_ok(size, align - 1, out)) return false;
    *out &= ~(align - 1);
    return true;
}

/* The chunks of an index space [0, max_capacity) with chunk 0 of 2^shift
 * slots (shift 32: a fixed pool, one chunk holding every index): chunk c > 0
 * is [2^(shift+c-1), 2^(shift+c)), each cut at max_capacity. Pools and saved
 * images both use these; opool__chunk_of in opool_abi.h is the inverse. lo is
 * 64-bit: a chunk past the last one starts at or beyond 2^32. */
static inline uint64_t opool__span_lo(uint32_t shift, uint32_t c) {
    return c == 0 ? 0 : (uint64_t)1 << (shift + c - 1);
}

static inline uint32_t opool__span_hi(uint32_t shift, uint32_t max_capacity, uint32_t c) {
    uint64_t hi = c == 0 && shift == 32 ? max_capacity : (uint64_t)1 << (shift + c);
    return (uint32_t)(hi < max_capacity ? hi : max_capacity);
}

/* How many chunks start below max_capacity. */
static inline uint32_t opool__span_count(uint32_t shift, uint32_t max_capacity) {
    uint32_t n = 1;
    while (shift < 32 && opool__span_lo(shift, n) < max_capacity) n++;
    return n;
}

/* The index bits k of compact handles for an index limit of max_capacity:
 * the smallest k with 2^k >= max_capacity; 32 (none) above 2^31. */
static inline uint32_t opool__index_bits(uint32_t max_capacity) {
    uint32_t k = 0;
    while (k < 32 && ((uint64_t)1 << k) < max_capacity) k++;
    return k;
}

/* OPOOL_RETIRE_ON_WRAP: a slot just freed to generation gen is retired when
 * the generation bits a compact handle keeps (the low 32 - k, all 32 when
 * the pool has no compact handles) are back at gen0's. k: opool__index_bits. */
static inline bool opool__wraps(uint32_t gen, uint32_t gen0, uint32_t k) {
    uint32_t mask = k == 0 || k >= 32 ? UINT32_MAX : UINT32_MAX >> k;
    return ((gen - gen0) & mask) == 0;
}

/* The salt of a pool whose desc gives none: derived from the creation order
 * (of every pool, single-threaded or not), the same run after run. */
uint32_t opool__derive_salt(void);

/* opool_create for opool_load: the pool keeps the image's origin (desc.salt)
 * even while another live pool has it (see SALTS in opool.h). */
opool_status opool__create_loaded(opool **out, const opool_desc *desc);

bool opool__geometry_of(const opool_desc *d, opool__geometry *g);
opool_allocator opool__allocator_of(const opool_desc *d);
uint64_t opool__chunk_lo(const opool *p, uint32_t c);
uint32_t opool__chunk_hi(const opool *p, uint32_t c);
size_t opool__chunk_bytes(const opool *p, uint32_t c);
bool opool__chunk_backed(const opool *p, uint32_t c);
char *opool__chunk_storage(const opool *p, uint32_t c);
void opool__chunk_free(opool *p, uint32_t c);
void opool__report(opool *p, opool_status what, opool_handle h);
uint32_t opool__slow_bits(const opool *p);
void opool__fast_bounds(const opool *p, uint32_t *fast_limit, uint32_t *free_limit);
void opool__update_fast(opool *p);
void opool__range_freed(opool *p, char *first_obj, uint32_t n);
bool opool__reserve_slots(opool *p, uint32_t n);
/* Slots a pool that never grows holds and has not made yet (opool.c, "making
 * slots"); 0 for a growing pool. */
uint32_t opool__unmade(const opool *p);
bool opool__grow(opool *p);
opool_status opool__classify(const opool *p, opool_handle h, uint32_t *index);
/* The handles (h) and sites (where) of up to max (at most 8) live objects of
 * p with a recorded site, the oldest first (OPOOL_TRACK_SITES); how many.
 * Either array may be NULL. */
uint32_t opool__oldest(const opool *p, opool_handle *h, const char **where, uint32_t max);

/* A side table's value stride (value_size rounded up to its alignment) and
 * alignment (opool_side.c), for its image (opool_save.c). */
struct opool_side;
void opool__side_layout(const struct opool_side *s, size_t *stride, size_t *align);
void opool__release(opool *p, uint32_t i);
void opool__release_all(opool *p);

/* ---- rebuilding a saved pool (defined in opool.c, used by opool_save.c) --- */

/* The bounds and counters an image saves. */
typedef struct opool__saved_counts {
    uint32_t nslots, limit, count, deferred, high_water, retired;
    uint64_t allocs, failed_allocs, rejected, evictions, grows;
    bool episode;
} opool__saved_counts;

bool opool__restore_chunk(opool *p, uint32_t c);
void opool__restore_slot(opool *p, uint32_t i, uint32_t gen, uint32_t pos, uint32_t limit);
void opool__restore_counts(opool *p, const opool__saved_counts *c);
uint32_t opool__undo_position(const opool *p);
void *opool__restore_object(opool *p, uint32_t k);
void opool__restore_cut(opool *p, uint32_t k);
bool opool__restore_begin(opool *p);
void opool__restore_done(opool *p);
bool opool__saved_positions(const opool *p, uint32_t **pos);

#endif /* OPOOL_INTERNAL_H */
