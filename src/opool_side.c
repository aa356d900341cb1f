/*
 * opool_side.c -- side tables: values keyed by the handles of one pool (see
 * include/opool_side.h).
 *
 * Sections (grep for "==== "):
 *   ==== layout     the sparse records, the dense arrays
 *   ==== growth     pages of the sparse array, the dense arrays
 *   ==== public     the API
 *
 * It needs nothing of the pool's internals: the handle layout of opool.h
 * (index in the low 32 bits, generation in the high 32, odd while live),
 * and opool_valid for a followed pool. Saving and loading a table is
 * opool_save.c's (with the pools' images).
 */
#include "opool_side.h"
#include "opool_internal.h"

#include <stdlib.h>
#include <string.h>

/* ==== layout ============================================================= */

/* The sparse record of one slot index. gen is the generation of the index's
 * entry, 0 when it has none: entries are for live handles, whose
 * generations are odd, so 0 never matches a handle that may have one. */
typedef struct opool__side_rec {
    uint32_t gen;
    uint32_t pos; /* the entry's position in the dense arrays */
} opool__side_rec;

#define OPOOL__SIDE_PAGE_BITS 10u
#define OPOOL__SIDE_PAGE (1u << OPOOL__SIDE_PAGE_BITS) /* records per page: 8 KiB */
#define OPOOL__SIDE_MIN_GROW 16u                       /* dense entries of a first growth */

_Static_assert(sizeof(opool__side_rec) == 8, "the 8 bytes per index the manual states");

struct opool_side {
    opool__side_rec **dir; /* [ndir] pages; NULL: no entry in that page yet */
    uint32_t ndir;
    uint32_t count;        /* entries: [0, count) of the dense arrays */
    uint32_t cap;          /* room in the dense arrays */
    opool_handle *handles; /* [cap] the entries' handles */
    unsigned char *values; /* [cap] values, stride apart, aligned to align */
    void *values_block;    /* what malloc returned for values (NULL: none) */
    size_t stride;         /* value_size rounded up to align; 0: a set of handles */
    size_t align;
    const opool *pool; /* followed (opool_side_follow): its dead handles have no value */
};

/* Where the values of a table without value storage point: any non-NULL
 * address will do, and it is never read or written (stride 0). */
static unsigned char opool__side_token;

/* The record of index i, or NULL when its page does not exist. */
static opool__side_rec *opool__side_rec_of(const opool_side *s, uint32_t i) {
    uint32_t page = i >> OPOOL__SIDE_PAGE_BITS;
    if (page >= s->ndir || s->dir[page] == NULL) return NULL;
    return &s->dir[page][i & (OPOOL__SIDE_PAGE - 1)];
}

static void *opool__side_value(const opool_side *s, uint32_t pos) {
    return s->values + (size_t)pos * s->stride;
}

/* ==== growth ============================================================== */

/* Does an array of n handles fit in a size_t? Only a 32-bit size_t can
 * fail (written so, a 64-bit compiler sees no always-false comparison). */
static bool opool__side_handles_fit(uint32_t n) {
#if SIZE_MAX / 8 < UINT32_MAX
    return (size_t)n <= SIZE_MAX / sizeof(opool_handle);
#else
    (void)n;
    return true;
#endif
}

/* The record of index i, its page (and the directory) added when missing;
 * NULL when an allocation fails, the table unchanged but for a bigger
 * directory. */
static opool__side_rec *opool__side_rec_make(opool_side *s, uint32_t i) {
    uint32_t page = i >> OPOOL__SIDE_PAGE_BITS;
    if (page >= s->ndir) {
        /* double, so that a table filled index by index reallocates the
         * directory O(log n) times; 2^22 pages cover every index */
        uint32_t n = s->ndir > page / 2 ? s->ndir * 2 : page + 1;
        if (n > (1u << (32 - OPOOL__SIDE_PAGE_BITS))) n = 1u << (32 - OPOOL__SIDE_PAGE_BITS);
        opool__side_rec **dir = realloc(s->dir, (size_t)n * sizeof *dir);
        if (dir == NULL) return NULL;
        memset(dir + s->ndir, 0, (size_t)(n - s->ndir) * sizeof *dir);
        s->dir = dir;
        s->ndir = n;
    }
    if (s->dir[page] == NULL) {
        s->dir[page] = calloc(OPOOL__SIDE_PAGE, sizeof(opool__side_rec));
        if (s->dir[page] == NULL) return NULL;
    }
    return &s->dir[page][i & (OPOOL__SIDE_PAGE - 1)];
}

/* Make the dense arrays hold cap entries (cap > s->cap). false when the
 * sizes overflow or an allocation fails; the table is unchanged then. */
static bool opool__side_reserve(opool_side *s, uint32_t cap) {
    if (!opool__side_handles_fit(cap)) return false;
    if (s->stride != 0 && (size_t)cap > (SIZE_MAX - (s->align - 1)) / s->stride) return false;
    opool_handle *handles = realloc(s->handles, (size_t)cap * sizeof *handles);
    if (handles == NULL) return false;
    s->handles = handles; /* bigger: the table is consistent whatever happens next */
    if (s->stride != 0) {
        /* malloc aligns to alignof(max_align_t) only: align by hand */
        unsigned char *block = malloc((size_t)cap * s->stride + (s->align - 1));
        if (block == NULL) return false;
        uintptr_t at = ((uintptr_t)block + (s->align - 1)) & ~(uintptr_t)(s->align - 1);
        unsigned char *values = block + (at - (uintptr_t)block);
        if (s->count != 0) memcpy(values, s->values, (size_t)s->count * s->stride);
        free(s->values_block);
        s->values_block = block;
        s->values = values;
    }
    s->cap = cap;
    return true;
}

/* ==== public ============================================================== */

opool_status opool_side_create(opool_side **out, size_t value_size, size_t value_align,
                               uint32_t capacity) {
    if (out == NULL) return OPOOL_EINVAL;
    *out = NULL;
    if (value_align == 0 || (value_align & (value_align - 1)) != 0 ||
        value_align > OPOOL_SIDE_MAX_ALIGN || capacity > OPOOL_MAX_CAPACITY ||
        value_size > SIZE_MAX - (value_align - 1))
        return OPOOL_EINVAL;
    size_t stride = (value_size + (value_align - 1)) & ~(value_align - 1);
    if (stride != 0 && (size_t)capacity > (SIZE_MAX - (value_align - 1)) / stride)
        return OPOOL_EINVAL;
    if (!opool__side_handles_fit(capacity)) return OPOOL_EINVAL;

    opool_side *s = calloc(1, sizeof *s);
    if (s == NULL) return OPOOL_ENOMEM;
    s->stride = stride;
    s->align = value_align;
    s->values = &opool__side_token;
    if (capacity != 0) {
        bool ok = opool__side_reserve(s, capacity);
        for (uint32_t i = 0; ok && i < capacity; i += OPOOL__SIDE_PAGE)
            ok = opool__side_rec_make(s, i) != NULL;
        if (!ok) {
            opool_side_destroy(s);
            return OPOOL_ENOMEM;
        }
    }
    *out = s;
    return OPOOL_OK;
}

void opool_side_destroy(opool_side *s) {
    if (s == NULL) return;
    for (uint32_t p = 0; p < s->ndir; p++) free(s->dir[p]);
    free(s->dir);
    free(s->handles);
    free(s->values_block);
    free(s);
}

/* Whether h may have an entry: a live generation, and a live object in the
 * followed pool, if any. */
static bool opool__side_may_hold(const opool_side *s, opool_handle h) {
    return (opool_handle_generation(h) & 1) && (s->pool == NULL || opool_valid(s->pool, h));
}

void *opool_side_put(opool_side *s, opool_handle h) {
    uint32_t i = opool_handle_index(h), g = opool_handle_generation(h);
    if (s == NULL || !opool__side_may_hold(s, h)) return NULL;
    opool__side_rec *r = opool__side_rec_make(s, i);
    if (r == NULL) return NULL;
    if (r->gen == g) return opool__side_value(s, r->pos);
    if (r->gen == 0) { /* no entry at this index: append one */
        if (s->count == s->cap) {
            uint32_t cap = s->cap;
            if (cap >= OPOOL_MAX_CAPACITY) return NULL;
            cap = cap < OPOOL__SIDE_MIN_GROW     ? OPOOL__SIDE_MIN_GROW
                  : cap > OPOOL_MAX_CAPACITY / 2 ? OPOOL_MAX_CAPACITY
                                                 : cap * 2;
            if (!opool__side_reserve(s, cap)) return NULL;
        }
        r->pos = s->count++;
    }
    /* a new entry, or the entry of another generation re-keyed in place */
    r->gen = g;
    s->handles[r->pos] = h;
    void *v = opool__side_value(s, r->pos);
    memset(v, 0, s->stride);
    return v;
}

void *opool_side_get(const opool_side *s, opool_handle h) {
    uint32_t i = opool_handle_index(h), g = opool_handle_generation(h);
    if (s == NULL || !opool__side_may_hold(s, h)) return NULL;
    const opool__side_rec *r = opool__side_rec_of(s, i);
    if (r == NULL || r->gen != g) return NULL;
    return opool__side_value(s, r->pos);
}

opool_status opool_side_remove(opool_side *s, opool_handle h) {
    uint32_t i = opool_handle_index(h), g = opool_handle_generation(h);
    if (s == NULL || !(g & 1)) return OPOOL_EINVAL;
    opool__side_rec *r = opool__side_rec_of(s, i);
    if (r == NULL || r->gen != g) return OPOOL_ESTALE;
    uint32_t k = r->pos, last = --s->count;
    if (k != last) { /* the last entry fills the hole: a swap-delete */
        opool_handle moved = s->handles[last];
        s->handles[k] = moved;
        memcpy(opool__side_value(s, k), opool__side_value(s, last), s->stride);
        opool__side_rec_of(s, opool_handle_index(moved))->pos = k;
    }
    r->gen = 0;
    return OPOOL_OK;
}

void opool_side_clear(opool_side *s) {
    if (s == NULL) return;
    for (uint32_t k = 0; k < s->count; k++)
        opool__side_rec_of(s, opool_handle_index(s->handles[k]))->gen = 0;
    s->count = 0;
}

void opool__side_layout(const opool_side *s, size_t *stride, size_t *align) {
    *stride = s->stride;
    *align = s->align;
}

void opool_side_follow(opool_side *s, const opool *p) {
    if (s) s->pool = p;
}

uint32_t opool_side_prune(opool_side *s, const opool *p) {
    if (s == NULL) return 0;
    if (p == NULL) p = s->pool;
    if (p == NULL) return 0;
    uint32_t removed = 0;
    for (uint32_t k = s->count; k-- > 0;) /* the backward loop: remove the current one */
        if (!opool_valid(p, s->handles[k])) {
            opool_side_remove(s, s->handles[k]);
            removed++;
        }
    return removed;
}

uint32_t opool_side_count(const opool_side *s) { return s ? s->count : 0; }

opool_handle opool_side_handle_at(const opool_side *s, uint32_t i) {
    if (s == NULL || i >= s->count) return OPOOL_NULL;
    return s->handles[i];
}

void *opool_side_value_at(const opool_side *s, uint32_t i) {
    if (s == NULL || i >= s->count) return NULL;
    return opool__side_value(s, i);
}
