/*
 * opool_save.c -- save and load of core pools, one (opool_save) or a world
 * of several in one image (opool_save_many) (include/opool.h, "save and
 * load", "world saves"), and of side tables, alone or with the pools they
 * belong to (include/opool_side.h). The byte format is docs/FORMAT.md; keep
 * the two in step. A world image is a world header, pool sections that are
 * pool images without their checksum, and one checksum: every pool function
 * below serves both, a pool image being read as one section at offset 0.
 *
 * Sections (grep for "==== "):
 *   ==== format                   the headers, little-endian coding, the checksum
 *   ==== save                     the buffered, hashing writer, opool_save, opool_save_many
 *   ==== errors                   why a load failed: the finding, the thread's record
 *   ==== load                     reading, validation, opool_load, opool_load_many (the
 *                                 pools' state is rebuilt by opool.c's opool__restore_*)
 *   ==== side tables              a side table's image: opool_side_save, opool_side_load
 *   ==== worlds with side tables  pools and their tables in one image: opool_save_world,
 *                                 opool_load_world
 *   ==== files                    the atomic file saves and the file loads of all the above
 *
 * Load never trusts the image: it reads it whole into memory (growing the
 * buffer only as bytes arrive), checks the checksum and every invariant of
 * the layout, and only then builds a pool through opool_create, the same
 * path every pool takes.
 */
#include "opool_internal.h"
#include "opool_platform.h" /* files: create, sync, replace, open */
#include "opool_diag.h"
#include "opool_side.h"

#include <errno.h>

/* ==== format ============================================================= */

#define OPOOL__IMG_VERSION 1u
#define OPOOL__IMG_HEADER 136u    /* bytes of the fixed header */
#define OPOOL__IMG_SLOT 8u        /* bytes of one slot record */
#define OPOOL__IMG_CHECKSUM 8u    /* bytes of the trailing checksum */
#define OPOOL__IMG_BY_CALLBACK 1u /* objects are save_object records */
#define OPOOL__IMG_EPISODE 2u     /* an exhaustion episode was open */
#define OPOOL__IMG_FLAGS_ALL 3u

static const unsigned char opool__img_magic[8] = {'O', 'P', 'O', 'O', 'L', 'S', 'A', 'V'};

/* A world image's header: magic, u32 version, u32 number of pools. */
#define OPOOL__WORLD_VERSION 1u
#define OPOOL__WORLD_HEADER 16u
static const unsigned char opool__world_magic[8] = {'O', 'P', 'O', 'O', 'L', 'W', 'L', 'D'};

/* The fixed header, field for field (docs/FORMAT.md, "Header"). */
typedef struct opool__image {
    uint32_t version, flags, pool_flags, gen0;
    uint64_t object_size, object_align, stride;
    uint32_t shift, first, max_capacity, nslots;
    uint32_t limit, count, deferred, high_water, retired, reserved;
    uint64_t chunks; /* bit c: chunk c holds storage */
    uint64_t allocs, failed_allocs, rejected, evictions, grows;
} opool__image;

static unsigned char *opool__io_put32(unsigned char *b, uint32_t v) {
    for (int k = 0; k < 4; k++) b[k] = (unsigned char)(v >> (8 * k));
    return b + 4;
}

static unsigned char *opool__io_put64(unsigned char *b, uint64_t v) {
    for (int k = 0; k < 8; k++) b[k] = (unsigned char)(v >> (8 * k));
    return b + 8;
}

static uint32_t opool__io_get32(const unsigned char *b) {
    uint32_t v = 0;
    for (int k = 3; k >= 0; k--) v = v << 8 | b[k];
    return v;
}

static uint64_t opool__io_get64(const unsigned char *b) {
    uint64_t v = 0;
    for (int k = 7; k >= 0; k--) v = v << 8 | b[k];
    return v;
}

/* Encode and decode walk the fields in the same order: the table of
 * docs/FORMAT.md, top to bottom. */
static void opool__io_encode(const opool__image *im, unsigned char out[OPOOL__IMG_HEADER]) {
    unsigned char *b = out;
    memcpy(b, opool__img_magic, sizeof opool__img_magic);
    b += sizeof opool__img_magic;
    b = opool__io_put32(b, im->version);
    b = opool__io_put32(b, im->flags);
    b = opool__io_put32(b, im->pool_flags);
    b = opool__io_put32(b, im->gen0);
    b = opool__io_put64(b, im->object_size);
    b = opool__io_put64(b, im->object_align);
    b = opool__io_put64(b, im->stride);
    b = opool__io_put32(b, im->shift);
    b = opool__io_put32(b, im->first);
    b = opool__io_put32(b, im->max_capacity);
    b = opool__io_put32(b, im->nslots);
    b = opool__io_put32(b, im->limit);
    b = opool__io_put32(b, im->count);
    b = opool__io_put32(b, im->deferred);
    b = opool__io_put32(b, im->high_water);
    b = opool__io_put32(b, im->retired);
    b = opool__io_put32(b, im->reserved);
    b = opool__io_put64(b, im->chunks);
    b = opool__io_put64(b, im->allocs);
    b = opool__io_put64(b, im->failed_allocs);
    b = opool__io_put64(b, im->rejected);
    b = opool__io_put64(b, im->evictions);
    b = opool__io_put64(b, im->grows);
    opool__assert(b == out + OPOOL__IMG_HEADER);
}

/* The magic is checked by the caller. */
static void opool__io_decode(opool__image *im, const unsigned char *in) {
    const unsigned char *b = in + sizeof opool__img_magic;
#define OPOOL__GET32(field) (im->field = opool__io_get32(b), b += 4)
#define OPOOL__GET64(field) (im->field = opool__io_get64(b), b += 8)
    OPOOL__GET32(version);
    OPOOL__GET32(flags);
    OPOOL__GET32(pool_flags);
    OPOOL__GET32(gen0);
    OPOOL__GET64(object_size);
    OPOOL__GET64(object_align);
    OPOOL__GET64(stride);
    OPOOL__GET32(shift);
    OPOOL__GET32(first);
    OPOOL__GET32(max_capacity);
    OPOOL__GET32(nslots);
    OPOOL__GET32(limit);
    OPOOL__GET32(count);
    OPOOL__GET32(deferred);
    OPOOL__GET32(high_water);
    OPOOL__GET32(retired);
    OPOOL__GET32(reserved);
    OPOOL__GET64(chunks);
    OPOOL__GET64(allocs);
    OPOOL__GET64(failed_allocs);
    OPOOL__GET64(rejected);
    OPOOL__GET64(evictions);
    OPOOL__GET64(grows);
#undef OPOOL__GET32
#undef OPOOL__GET64
    opool__assert(b == in + OPOOL__IMG_HEADER);
}

/* The checksum: 64-bit FNV-1a. Each step is a bijection of the state for a
 * given byte, so any single changed byte always changes the result. */
#define OPOOL__FNV_OFFSET 0xcbf29ce484222325u
#define OPOOL__FNV_PRIME 0x100000001b3u

static uint64_t opool__io_fnv(uint64_t h, const unsigned char *b, size_t n) {
    for (size_t k = 0; k < n; k++) h = (h ^ b[k]) * OPOOL__FNV_PRIME;
    return h;
}

/* ==== save =============================================================== */

/* Bytes go through a buffer (few, large calls to write) and the checksum
 * sees each one once. After a short write nothing more is written. */
typedef struct opool__writer {
    opool_write_fn write;
    void *ctx;
    uint64_t hash;
    size_t used;
    bool failed;
    unsigned char buf[4096];
} opool__writer;

static void opool__save_start(opool__writer *w, opool_write_fn write, void *ctx) {
    w->write = write;
    w->ctx = ctx;
    w->hash = OPOOL__FNV_OFFSET;
    w->used = 0;
    w->failed = false;
}

static void opool__save_flush(opool__writer *w) {
    if (w->used == 0 || w->failed) return;
    if (w->write(w->ctx, w->buf, w->used) != w->used) w->failed = true;
    w->used = 0;
}

static void opool__save_bytes(opool__writer *w, const void *data, size_t n) {
    const unsigned char *s = (const unsigned char *)data;
    while (n > 0 && !w->failed) {
        size_t room = sizeof w->buf - w->used, k = n < room ? n : room;
        memcpy(w->buf + w->used, s, k);
        w->hash = opool__io_fnv(w->hash, s, k);
        w->used += k;
        s += k;
        n -= k;
        if (w->used == sizeof w->buf) opool__save_flush(w);
    }
}

/* The checksum of everything written so far, then the end. */
static opool_status opool__save_finish(opool__writer *w) {
    unsigned char rec[OPOOL__IMG_CHECKSUM];
    opool__save_flush(w);
    opool__io_put64(rec, w->hash);
    if (!w->failed && w->write(w->ctx, rec, OPOOL__IMG_CHECKSUM) != OPOOL__IMG_CHECKSUM)
        w->failed = true;
    return w->failed ? OPOOL_EIO : OPOOL_OK;
}

/* What one save_object call wrote, kept whole so its length can go first. */
typedef struct opool__scratch {
    const opool_allocator *mem;
    unsigned char *buf;
    size_t used, cap;
    bool failed; /* out of memory */
} opool__scratch;

static size_t opool__save_sink(void *ctx, const void *data, size_t size) {
    opool__scratch *s = (opool__scratch *)ctx;
    if (s->failed || size == 0) return 0;
    if (size > s->cap - s->used) {
        if (size > SIZE_MAX - s->used) {
            s->failed = true;
            return 0;
        }
        size_t need = s->used + size, cap = s->cap > 128 ? s->cap : 128;
        while (cap < need) cap = cap > SIZE_MAX / 2 ? need : cap * 2;
        unsigned char *buf = (unsigned char *)s->mem->alloc(s->mem->ctx, cap, 1);
        if (buf == NULL) {
            s->failed = true;
            return 0;
        }
        if (s->used) memcpy(buf, s->buf, s->used);
        if (s->buf) opool__mem_free(s->mem, s->buf, s->cap, 1);
        s->buf = buf;
        s->cap = cap;
    }
    memcpy(s->buf + s->used, data, size);
    s->used += size;
    return size;
}

/*
 * Write p's section: the header, every slot record, every live object in
 * live-list order (docs/FORMAT.md) -- a pool image but its checksum. Reads
 * the pool and nothing else. OPOOL_ENOMEM: the buffer for save_object's
 * bytes; OPOOL_ECORRUPT: save_object returned false; a short write is left
 * in w->failed.
 */
static opool_status opool__save_pool(const opool *p, opool__writer *w) {
    const opool__hot *h = &p->hot;
    const opool_desc *d = &p->desc;
    uint32_t n = h->count;

    opool__image im;
    memset(&im, 0, sizeof im);
    im.version = OPOOL__IMG_VERSION;
    im.flags = (d->save_object ? OPOOL__IMG_BY_CALLBACK : 0) |
               (opool__episode_failures(&p->episode) ? OPOOL__IMG_EPISODE : 0);
    /* the image of a pool without a live list is the same (its roster
     * positions made up: opool__saved_positions) and loads into either; a
     * pool that refuses growth (OPOOL_FIXED) says so by its geometry; how
     * its misuse is reported is the loader's choice */
    im.pool_flags = d->flags & ~(uint32_t)(OPOOL_NO_LIVE_LIST | OPOOL_FIXED | OPOOL_REPORT_MISUSE |
                                           OPOOL_REPORT_UNRATIONED | OPOOL_SHARE_SALT);
    im.gen0 = p->gen0;
    im.object_size = d->object_size;
    im.object_align = opool__object_align(d);
    im.stride = h->stride;
    im.shift = h->shift;
    /* a pool that has not made every slot yet is saved as made whole: its
     * slots to make at their first generation, on the free stack's bottom */
    uint32_t unmade = opool__unmade(p);
    im.first = h->first + unmade;
    im.max_capacity = p->max_capacity;
    im.nslots = h->nslots + unmade;
    im.limit = h->limit + unmade;
    im.deferred = opool__undo_position(p);
    im.count = n;
    im.high_water = h->high_water;
    im.retired = p->retired;
    for (uint32_t c = 0; c < p->nchunks; c++)
        if (opool__chunk_backed(p, c)) im.chunks |= (uint64_t)1 << c;
    im.allocs = h->allocs;
    im.failed_allocs = p->failed_allocs;
    im.rejected = p->rejected;
    im.evictions = p->evictions;
    im.grows = p->grows;

    uint32_t *pos;
    if (!opool__saved_positions(p, &pos)) return OPOOL_ENOMEM;
    unsigned char rec[OPOOL__IMG_HEADER];
    opool__io_encode(&im, rec);
    opool__save_bytes(w, rec, OPOOL__IMG_HEADER);

    for (uint32_t i = 0; i < h->nslots && !w->failed; i++) {
        opool__io_put32(opool__io_put32(rec, h->slot[i].gen), pos ? pos[i] : h->slot[i].pos);
        opool__save_bytes(w, rec, OPOOL__IMG_SLOT);
    }
    if (pos) opool__mem_free(&p->mem, pos, (size_t)h->nslots * sizeof *pos, alignof(uint32_t));
    for (uint32_t k = 0; k < unmade && !w->failed; k++) {
        opool__io_put32(opool__io_put32(rec, p->gen0), h->limit + k);
        opool__save_bytes(w, rec, OPOOL__IMG_SLOT);
    }

    opool_status st = OPOOL_OK;
    opool__scratch s = {&p->mem, NULL, 0, 0, false};
    /* the objects in live-list order; in index order without a list */
    for (uint32_t k = 0, i = 0; k < n && !w->failed; k++, i++) {
        if (h->roster)
            i = h->roster[k];
        else
            while (!(h->slot[i].gen & 1)) i++;
        const void *obj = opool__object(h, i);
        if (d->save_object == NULL) {
            opool__save_bytes(w, obj, d->object_size);
            continue;
        }
        s.used = 0;
        bool ok = d->save_object(obj, opool__save_sink, &s, d->user);
        if (s.failed) {
            st = OPOOL_ENOMEM;
            break;
        }
        if (!ok) {
            st = OPOOL_ECORRUPT;
            break;
        }
        opool__io_put64(rec, (uint64_t)s.used);
        opool__save_bytes(w, rec, 8);
        opool__save_bytes(w, s.buf, s.used);
    }
    if (s.buf) opool__mem_free(&p->mem, s.buf, s.cap, 1);
    return st;
}

/* A pool image: its section and the checksum. OPOOL_EIO: a short write. */
opool_status opool_save(const opool *p, opool_write_fn write, void *ctx) {
    if (p == NULL || write == NULL) return OPOOL_EINVAL;
    opool__writer w;
    opool__save_start(&w, write, ctx);
    opool_status st = opool__save_pool(p, &w);
    return st != OPOOL_OK ? st : opool__save_finish(&w);
}

/* The array as opool_save_many accepts it: n >= 1 distinct pools. The same
 * pool twice is refused rather than saved twice: loading would give two
 * independent copies of what the program holds as one, surely a mistake. */
static bool opool__save_many_ok(const opool *const *pools, uint32_t n) {
    if (pools == NULL || n == 0) return false;
    for (uint32_t i = 0; i < n; i++) {
        if (pools[i] == NULL) return false;
        for (uint32_t j = 0; j < i; j++)
            if (pools[j] == pools[i]) return false;
    }
    return true;
}

/* A world image: its header, each pool's section, one checksum. */
opool_status opool_save_many(const opool *const *pools, uint32_t n, opool_write_fn write,
                             void *ctx) {
    if (!opool__save_many_ok(pools, n) || write == NULL) return OPOOL_EINVAL;
    opool__writer w;
    opool__save_start(&w, write, ctx);
    unsigned char rec[OPOOL__WORLD_HEADER];
    memcpy(rec, opool__world_magic, sizeof opool__world_magic);
    opool__io_put32(opool__io_put32(rec + 8, OPOOL__WORLD_VERSION), n);
    opool__save_bytes(&w, rec, OPOOL__WORLD_HEADER);
    for (uint32_t i = 0; i < n && !w.failed; i++) {
        opool_status st = opool__save_pool(pools[i], &w);
        if (st != OPOOL_OK) return st;
    }
    return opool__save_finish(&w);
}

/* ==== errors ============================================================= */

/* The thread's record of its last failed load (opool_last_load_error). */
static _Thread_local opool_load_error opool__last_error;

const opool_load_error *opool_last_load_error(void) { return &opool__last_error; }

typedef struct opool__load_report {
    const opool_desc *d;
    const opool__finding *e;
} opool__load_report;

static void opool__load_call_report(const void *ctx) {
    const opool__load_report *r = (const opool__load_report *)ctx;
    r->d->report(NULL, r->e->what, OPOOL_NULL, r->d->user);
}

/* A failed check: what e says goes into the record, then to the report of
 * the desc concerned (not for an invalid desc: its report may be as bad). */
/* The thread's record of the failed check e. */
static void opool__load_record(opool__finding *e) {
    e->kind = OPOOL__KIND_LOAD;
    opool_load_error *r = &opool__last_error;
    r->status = e->what;
    r->pool = e->npools ? e->pool : 0;
    r->check = opool__load_check_name(e);
    r->expected = e->expected;
    r->found = e->found;
    size_t len = opool__diag_format(r->message, sizeof r->message, e);
    if (len == 0) /* silent by default (a missing file): the record still says it */
        snprintf(r->message, sizeof r->message, "opool: load: no file at the path");
    else if (len <= sizeof r->message)
        r->message[len - 1] = '\0'; /* the newline */
}

static opool_status opool__load_failed(const opool_desc *descs, uint32_t n, opool__finding *e) {
    const opool_desc *d = e->pool < n ? &descs[e->pool] : &descs[0];
    e->name = e->pool < n || !e->npools ? d->name : NULL; /* the image as a whole: no pool's */
    opool__load_record(e);
    if (e->check == OPOOL__LOAD_DESC) return e->what;
    if (d->report) {
        opool__load_report call = {d, e};
        opool__diag_report_through(opool__load_call_report, &call, e);
    } else {
        opool__diag_default(e);
    }
    return e->what;
}

/* Sets e to the check that failed; the status it gives. */
static opool_status opool__load_set(opool__finding *e, opool_status what, opool__load_check check,
                                    const char *field, uint64_t expected, uint64_t found) {
    e->what = what;
    e->check = check;
    e->field = field;
    e->expected = expected;
    e->found = found;
    return what;
}

#define OPOOL__CORRUPT(e, field, found)                                                            \
    opool__load_set(e, OPOOL_ECORRUPT, OPOOL__LOAD_FIELD, field, 0, (uint64_t)(found))

/* ==== load =============================================================== */

/* The image, read whole into memory from the (first) desc's allocator. */
typedef struct opool__reader {
    opool_read_fn read;
    void *ctx;
    opool_allocator mem;
    unsigned char *buf;
    size_t used, cap;
    size_t total; /* the image's size once known, else SIZE_MAX */
    opool__finding *e;
} opool__reader;

/* Make the first `want` bytes of the image present in r->buf. The buffer
 * grows only when it is full of bytes that really arrived, and then
 * doubles (never past the image's total size, once known), so a header
 * that promises more than the input holds costs no more memory than the
 * input itself, and reading takes O(log size) allocations however small
 * its steps. Short input: OPOOL_ECORRUPT. */
static opool_status opool__load_fill(opool__reader *r, uint64_t want) {
    if (want > r->total)
        return opool__load_set(r->e, OPOOL_ECORRUPT, OPOOL__LOAD_TRUNCATED, NULL, want, r->used);
    while (r->used < want) {
        if (r->used == r->cap) {
            size_t cap = r->cap > SIZE_MAX / 2 ? SIZE_MAX : r->cap * 2;
            if (cap < 4096) cap = 4096;
            if (cap > r->total) cap = r->total;
            unsigned char *buf = (unsigned char *)r->mem.alloc(r->mem.ctx, cap, 1);
            if (buf == NULL)
                return opool__load_set(r->e, OPOOL_ENOMEM, OPOOL__LOAD_NOMEM, NULL, 0, r->used);
            if (r->used) memcpy(buf, r->buf, r->used);
            if (r->buf) opool__mem_free(&r->mem, r->buf, r->cap, 1);
            r->buf = buf;
            r->cap = cap;
        }
        size_t ask = (want < r->cap ? (size_t)want : r->cap) - r->used;
        size_t got = r->read(r->ctx, r->buf + r->used, ask);
        if (got > ask) got = 0; /* a read that claims too much is not trusted */
        r->used += got;
        if (got < ask)
            return opool__load_set(r->e, OPOOL_ECORRUPT, OPOOL__LOAD_TRUNCATED, NULL, want,
                                   r->used);
    }
    return OPOOL_OK;
}

static bool opool__load_add(uint64_t a, uint64_t b, uint64_t *out) {
    if (a > UINT64_MAX - b) return false;
    *out = a + b;
    return true;
}

/* Everything about the header that can be checked without the slots: the
 * geometry must be one a desc can produce, the counts must fit it. */
static opool_status opool__load_header_ok(const opool__image *im, opool__finding *e) {
    if (im->version != OPOOL__IMG_VERSION)
        return opool__load_set(e, OPOOL_ECORRUPT, OPOOL__LOAD_VERSION, NULL, OPOOL__IMG_VERSION,
                               im->version);
    if ((im->flags & ~OPOOL__IMG_FLAGS_ALL) != 0) return OPOOL__CORRUPT(e, "flags", im->flags);
    if ((im->pool_flags & ~(uint32_t)OPOOL__FLAGS_ALL) != 0)
        return OPOOL__CORRUPT(e, "pool_flags", im->pool_flags);
    if ((im->gen0 & 1) != 0) return OPOOL__CORRUPT(e, "gen0", im->gen0);
    if (im->reserved != 0) return OPOOL__CORRUPT(e, "reserved", im->reserved);
    /* object_size 0 (a pool of handles alone) is left to the geometry */
    if (im->object_size > SIZE_MAX) return OPOOL__CORRUPT(e, "object_size", im->object_size);
    if (im->object_align == 0 || im->object_align > 4096 ||
        (im->object_align & (im->object_align - 1)) != 0)
        return OPOOL__CORRUPT(e, "object_align", im->object_align);
    if (im->shift > 32) return OPOOL__CORRUPT(e, "shift", im->shift);

    /* the simplest desc with this geometry: it must exist, and agree */
    opool_desc d;
    memset(&d, 0, sizeof d);
    d.object_size = (size_t)im->object_size;
    d.object_align = (size_t)im->object_align;
    if (im->shift == 32) {
        d.capacity = im->first;
    } else {
        d.capacity = im->shift == 0 ? 1u : (1u << (im->shift - 1)) + 1u; /* ceil_log2 = shift */
        d.max_capacity = im->max_capacity;
        d.on_full = OPOOL_FULL_GROW;
    }
    opool__geometry g;
    if (!opool__geometry_of(&d, &g))
        return im->object_size == 0 ? OPOOL__CORRUPT(e, "object_size", 0)
                                    : OPOOL__CORRUPT(e, "max_capacity", im->max_capacity);
    if (g.stride != im->stride) return OPOOL__CORRUPT(e, "stride", im->stride);
    if (g.first != im->first) return OPOOL__CORRUPT(e, "first", im->first);
    if (g.max_capacity != im->max_capacity || g.shift != im->shift)
        return OPOOL__CORRUPT(e, "max_capacity", im->max_capacity);

    /* slot records end where a chunk ends (so within max_capacity, and no
     * chunk is cut short); only chunks with records may hold storage */
    uint32_t nchunks = opool__span_count(im->shift, im->max_capacity);
    bool boundary = false;
    for (uint32_t c = 0; c < nchunks; c++) {
        if (opool__span_hi(im->shift, im->max_capacity, c) == im->nslots) boundary = true;
        if (opool__span_lo(im->shift, c) >= im->nslots && (im->chunks >> c & 1))
            return OPOOL__CORRUPT(e, "chunks", im->chunks);
    }
    if (!boundary) return OPOOL__CORRUPT(e, "nslots", im->nslots);
    if (!(im->chunks & 1) || (nchunks < 64 && (im->chunks >> nchunks) != 0))
        return OPOOL__CORRUPT(e, "chunks", im->chunks);

    if (im->limit > im->nslots) return OPOOL__CORRUPT(e, "limit", im->limit);
    if (im->count > im->limit) return OPOOL__CORRUPT(e, "count", im->count);
    if (im->retired > im->nslots) return OPOOL__CORRUPT(e, "retired", im->retired);
    if (im->high_water < im->count || im->high_water > im->max_capacity)
        return OPOOL__CORRUPT(e, "high_water", im->high_water);
    if (im->allocs < im->count) return OPOOL__CORRUPT(e, "allocs", im->allocs);
    if (im->evictions > im->allocs - im->count)
        return OPOOL__CORRUPT(e, "evictions", im->evictions);
    /* deferred: 1 + a live position (the undo), or older writers' 1 + count
     * with a free slot left (read as no undo) */
    if (im->deferred != 0 &&
        (im->deferred - 1 > im->count || (im->deferred - 1 == im->count && im->count >= im->limit)))
        return OPOOL__CORRUPT(e, "deferred", im->deferred);
    return OPOOL_OK;
}

/* Every slot record: generations and markers agree with the chunks, and
 * the roster positions are a permutation of [0, limit) whose prefix
 * [0, count) holds exactly the live slots. Uses a bitmap of limit bits
 * from the allocator. OPOOL_ECORRUPT or OPOOL_ENOMEM. */
static opool_status opool__load_slots_ok(const opool__image *im, const unsigned char *rec,
                                         const opool_allocator *mem, opool__finding *e) {
    size_t words = ((size_t)im->limit + 63) / 64;
    uint64_t *seen = NULL;
    if (words) {
        seen = (uint64_t *)mem->alloc(mem->ctx, words * sizeof *seen, alignof(uint64_t));
        if (seen == NULL) return opool__load_set(e, OPOOL_ENOMEM, OPOOL__LOAD_NOMEM, NULL, 0, 0);
        memset(seen, 0, words * sizeof *seen);
    }
    opool_status st = OPOOL_ECORRUPT;
    uint32_t placed = 0, retired = 0, nchunks = opool__span_count(im->shift, im->max_capacity);
    for (uint32_t c = 0; c < nchunks && opool__span_lo(im->shift, c) < im->nslots; c++) {
        bool backed = (im->chunks >> c & 1) != 0;
        for (uint32_t i = (uint32_t)opool__span_lo(im->shift, c);
             i < opool__span_hi(im->shift, im->max_capacity, c); i++) {
            const unsigned char *r = rec + (size_t)i * OPOOL__IMG_SLOT;
            uint32_t gen = opool__io_get32(r), pos = opool__io_get32(r + 4);
            bool bad;
            if (pos == OPOOL__RETIRED) {
                /* retired: its generation came back to gen0 (in a compact handle's bits) */
                bad = !opool__wraps(gen, im->gen0, opool__index_bits(im->max_capacity));
                retired++;
            } else if (pos == OPOOL__UNBACKED) {
                bad = backed || (gen & 1);
            } else {
                bad = !backed || pos >= im->limit || (seen[pos / 64] >> (pos % 64) & 1) ||
                      ((gen & 1) != 0) != (pos < im->count);
                if (!bad) seen[pos / 64] |= (uint64_t)1 << (pos % 64);
                placed++;
            }
            if (bad) {
                opool__load_set(e, OPOOL_ECORRUPT, OPOOL__LOAD_SLOT, NULL, 0, i);
                goto out;
            }
        }
    }
    if (placed != im->limit)
        OPOOL__CORRUPT(e, "limit", im->limit); /* positions left unheld */
    else if (retired != im->retired)
        OPOOL__CORRUPT(e, "retired", im->retired);
    else
        st = OPOOL_OK;
out:
    if (seen) opool__mem_free(mem, seen, words * sizeof *seen, alignof(uint64_t));
    return st;
}

/* Does desc describe the pool the image was saved from? The first field
 * that differs goes to e. */
static opool_status opool__load_fits(const opool_desc *desc, const opool__geometry *g,
                                     const opool__image *im, opool__finding *e) {
#define OPOOL__FIT(field, want, have)                                                              \
    if ((uint64_t)(want) != (uint64_t)(have))                                                      \
    return opool__load_set(e, OPOOL_EINVAL, OPOOL__LOAD_MISMATCH, field, (uint64_t)(want),         \
                           (uint64_t)(have))
    OPOOL__FIT("object_size", desc->object_size, im->object_size);
    OPOOL__FIT("object_align", opool__object_align(desc), im->object_align);
    /* the first chunk is what capacity became (rounded up to a power of two
     * when the pool may grow) */
    OPOOL__FIT("capacity", g->first, im->first);
    OPOOL__FIT("max_capacity", g->max_capacity, im->max_capacity);
    OPOOL__FIT("capacity", g->shift, im->shift); /* one fixed, the other growable */
    OPOOL__FIT("stride", g->stride, im->stride);
    OPOOL__FIT("load_object", desc->load_object != NULL, (im->flags & OPOOL__IMG_BY_CALLBACK) != 0);
#undef OPOOL__FIT
    return OPOOL_OK;
}

/* Whether the first n bytes at b (n at most the magic's 8) may begin a pool
 * image's section at offset `at`; if not, e says which magic they fail (a
 * world image's, where a pool image was to start, says so). */
static bool opool__magic_ok(opool__finding *e, const unsigned char *b, size_t n, uint64_t at) {
    if (n == 0 || memcmp(b, opool__img_magic, n) == 0) return true;
    bool world = memcmp(b, opool__world_magic, n) == 0;
    opool__load_set(e, OPOOL_ECORRUPT,
                    world && at == 0 ? OPOOL__LOAD_WORLD_MAGIC : OPOOL__LOAD_MAGIC, NULL, 0, 0);
    return false;
}

/* Section k of the image at offset `at`: its header is read, decoded and
 * checked, and *end is where its objects end, as far as the header (and
 * each record's length) says; those bytes are not all read yet. */
static opool_status opool__load_section(opool__reader *r, uint64_t at, opool__image *im,
                                        uint64_t *end) {
    opool__finding *e = r->e;
    opool_status st = opool__load_fill(r, at + OPOOL__IMG_HEADER);
    if (st != OPOOL_OK) {
        /* the input ends in what should be a header: if the bytes there do
         * not begin as one, no section begins there at all */
        size_t part = r->used > at ? r->used - (size_t)at : 0;
        if (part > sizeof opool__img_magic) part = sizeof opool__img_magic;
        if (e->check == OPOOL__LOAD_TRUNCATED && !opool__magic_ok(e, r->buf + at, part, at))
            st = OPOOL_ECORRUPT;
        return st;
    }
    const unsigned char *b = r->buf + at;
    if (!opool__magic_ok(e, b, sizeof opool__img_magic, at)) return OPOOL_ECORRUPT;
    opool__io_decode(im, b);
    st = opool__load_header_ok(im, e);
    if (st != OPOOL_OK) return st;

    uint64_t pos = at + OPOOL__IMG_HEADER + (uint64_t)im->nslots * OPOOL__IMG_SLOT;
    if (!(im->flags & OPOOL__IMG_BY_CALLBACK)) {
        if (!opool__load_add(pos, (uint64_t)im->count * im->object_size, &pos))
            return OPOOL__CORRUPT(e, "count", im->count);
    } else {
        for (uint32_t k = 0; k < im->count; k++) {
            st = opool__load_fill(r, pos + 8);
            if (st != OPOOL_OK) return st;
            uint64_t len = opool__io_get64(r->buf + pos);
            if (!opool__load_add(pos + 8, len, &pos))
                return OPOOL__CORRUPT(e, "object record length", len);
        }
    }
    *end = pos;
    return OPOOL_OK;
}

/*
 * Build the pool an image describes (already validated whole), but its
 * objects: storage first, so that nothing can run out of memory once
 * objects exist; then the slot records, roster and counters. On failure
 * nothing is left (no callback has run).
 */
static opool_status opool__load_build_pool(opool **out, const opool_desc *desc,
                                           const opool__image *im, const unsigned char *rec) {
    opool_desc d = *desc;
    d.salt = im->gen0 | 1u; /* the core keeps salt & ~1: gen0 itself, even when it is 0 */
    opool *p = NULL;
    opool_status st = opool__create_loaded(&p, &d);
    if (st != OPOOL_OK) return st;
    opool__assert(p->hot.first == im->first && p->gen0 == im->gen0 && p->nchunks <= 64);

    if (!opool__reserve_slots(p, im->nslots)) goto nomem;
    for (uint32_t c = 1; c < p->nchunks; c++)
        if ((im->chunks >> c & 1) && !opool__restore_chunk(p, c)) goto nomem;
    if (!opool__restore_begin(p)) goto nomem; /* the last allocation: undone by load_undo */

    for (uint32_t i = 0; i < im->nslots; i++, rec += OPOOL__IMG_SLOT)
        opool__restore_slot(p, i, opool__io_get32(rec), opool__io_get32(rec + 4), im->limit);
    opool__saved_counts counts = {
        .nslots = im->nslots,
        .limit = im->limit,
        .count = im->count,
        .deferred = im->deferred,
        .high_water = im->high_water,
        .retired = im->retired,
        .allocs = im->allocs,
        .failed_allocs = im->failed_allocs,
        .rejected = im->rejected,
        .evictions = im->evictions,
        .grows = im->grows,
        .episode = (im->flags & OPOOL__IMG_EPISODE) != 0,
    };
    opool__restore_counts(p, &counts);
    *out = p;
    return OPOOL_OK;

nomem:
    opool_destroy(p); /* count is 0: no callback runs */
    return OPOOL_ENOMEM;
}

/* The objects of a built pool, in live-list order, from `obj` on. If
 * load_object rejects object k, only the k objects before it stay live
 * (so opool_destroy runs fini on exactly those): OPOOL_ECORRUPT, with k
 * in e. */
static opool_status opool__load_objects(opool *p, const opool__image *im, const unsigned char *obj,
                                        opool__finding *e) {
    const opool_desc *desc = &p->desc;
    for (uint32_t k = 0; k < im->count; k++) {
        void *o = opool__restore_object(p, k);
        if (desc->load_object == NULL) {
            memcpy(o, obj, desc->object_size);
            obj += desc->object_size;
            continue;
        }
        uint64_t len = opool__io_get64(obj);
        obj += 8;
        if (p->desc.flags & OPOOL_ZERO) memset(o, 0, desc->object_size);
        if (!desc->load_object(o, obj, (size_t)len, desc->user)) {
            opool__restore_cut(p, k);
            return opool__load_set(e, OPOOL_ECORRUPT, OPOOL__LOAD_OBJECT, NULL, im->count, k);
        }
        obj += (size_t)len;
    }
    opool__restore_done(p);
    return OPOOL_OK;
}

/* Destroys the pools of out[0..n) built so far, of which the first `done`
 * have their objects (fini runs on those; the others hold none yet). */
static void opool__load_undo(opool **out, uint32_t n, uint32_t done) {
    for (uint32_t i = 0; i < n; i++) {
        if (out[i] == NULL) continue;
        if (i >= done) opool__restore_cut(out[i], 0);
        opool_clear(out[i]); /* fini on what load_object rebuilt; then no leak to report */
        opool__restore_done(out[i]);
        opool_destroy(out[i]);
        out[i] = NULL;
    }
}

/*
 * Load an image of n pools into out[0..n): a world image (world) or one
 * pool's image (n 1). `whole`: the input must end with the image (a file).
 * The failed check goes to e (not yet recorded or reported).
 *
 * Three passes over the sections: reading (each header checked before its
 * size is trusted) until the checksum; checking the slot records, then the
 * descs; building every pool without objects (all the memory), then the
 * objects. Nothing is built before everything is checked, and nothing
 * runs a callback before all memory is held.
 */
static opool_status opool__load_image(opool **out, const opool_desc *descs, uint32_t n, bool world,
                                      opool_read_fn read, void *ctx, bool whole,
                                      opool__finding *e) {
    e->npools = world ? n : 0;
    e->pool = UINT32_MAX;
    opool__geometry g;
    for (uint32_t i = 0; i < n; i++)
        if (!opool__geometry_of(&descs[i], &g)) {
            e->pool = i;
            return opool__load_set(e, OPOOL_EINVAL, OPOOL__LOAD_DESC, NULL, 0, 0);
        }

    opool__reader r;
    r.read = read;
    r.ctx = ctx;
    r.mem = opool__allocator_of(&descs[0]);
    r.buf = NULL;
    r.used = r.cap = 0;
    r.total = SIZE_MAX;
    r.e = e;
    opool__image im;
    uint32_t npools = 1, k = 0;
    uint64_t base = 0, at = 0, end = 0;
    opool_status st;

    if (world) {
        st = opool__load_fill(&r, OPOOL__WORLD_HEADER);
        if (st != OPOOL_OK) goto done;
        if (memcmp(r.buf, opool__world_magic, sizeof opool__world_magic) != 0) {
            bool pool = memcmp(r.buf, opool__img_magic, sizeof opool__img_magic) == 0;
            st = opool__load_set(e, OPOOL_ECORRUPT,
                                 pool ? OPOOL__LOAD_POOL_MAGIC : OPOOL__LOAD_MAGIC, NULL, 0, 0);
            goto done;
        }
        uint32_t version = opool__io_get32(r.buf + 8);
        if (version != OPOOL__WORLD_VERSION) {
            st = opool__load_set(e, OPOOL_ECORRUPT, OPOOL__LOAD_VERSION, NULL, OPOOL__WORLD_VERSION,
                                 version);
            goto done;
        }
        npools = opool__io_get32(r.buf + 12);
        if (npools == 0) {
            st = OPOOL__CORRUPT(e, "pools", 0);
            goto done;
        }
        base = OPOOL__WORLD_HEADER;
    }

    /* pass 1: read every section (a header may promise more than the input
     * holds: each is read only as far as the bytes arrive). Before the
     * checksum, a failure names a pool only where the bytes say which:
     * input that ends names the section it ends in; a section that does not
     * begin where the one before ends names none (either may be damaged);
     * a section past the call's count, the count. */
    for (k = 0, at = base; k < npools; k++, at = end) {
        if (world) e->pool = k;
        st = opool__load_section(&r, at, &im, &end);
        if (st != OPOOL_OK) {
            if (world && k >= n) {
                st = opool__load_set(e, OPOOL_ECORRUPT, OPOOL__LOAD_COUNT, NULL, n, npools);
                e->pool = UINT32_MAX;
            } else if (world && e->check == OPOOL__LOAD_TRUNCATED && r.used < at) {
                e->pool = k - 1; /* ended inside the section before */
            } else if (world && e->check == OPOOL__LOAD_MAGIC && k > 0) {
                e->pool = UINT32_MAX;
            }
            goto done;
        }
        if (k + 1 == npools && !(im.flags & OPOOL__IMG_BY_CALLBACK) &&
            end <= SIZE_MAX - OPOOL__IMG_CHECKSUM)
            r.total = (size_t)end + OPOOL__IMG_CHECKSUM; /* every size is known */
    }
    e->pool = UINT32_MAX;
    if (end > SIZE_MAX - OPOOL__IMG_CHECKSUM) {
        st = opool__load_set(e, OPOOL_ECORRUPT, OPOOL__LOAD_TRUNCATED, NULL, end, r.used);
        goto done;
    }
    st = opool__load_fill(&r, end + OPOOL__IMG_CHECKSUM);
    if (st != OPOOL_OK) {
        if (world && r.used < end) e->pool = npools - 1; /* ended inside the last section */
        goto done;
    }
    if (whole) {
        unsigned char extra;
        if (read(ctx, &extra, 1) != 0) {
            st = opool__load_set(e, OPOOL_ECORRUPT, OPOOL__LOAD_TRAILING, NULL,
                                 end + OPOOL__IMG_CHECKSUM, 0);
            goto done;
        }
    }
    uint64_t hash = opool__io_fnv(OPOOL__FNV_OFFSET, r.buf, (size_t)end);
    uint64_t said = opool__io_get64(r.buf + end);
    if (hash != said) {
        st = opool__load_set(e, OPOOL_ECORRUPT, OPOOL__LOAD_CHECKSUM, NULL, hash, said);
        goto done;
    }

    /* pass 2: every section's slot records, then (the image is sound) the
     * pools' number and every desc */
    for (k = 0, at = base; k < npools; k++, at = end) {
        if (world) e->pool = k;
        st = opool__load_section(&r, at, &im, &end);
        if (st == OPOOL_OK)
            st = opool__load_slots_ok(&im, r.buf + at + OPOOL__IMG_HEADER, &r.mem, e);
        if (st != OPOOL_OK) goto done;
    }
    e->pool = UINT32_MAX;
    if (npools != n) {
        st = opool__load_set(e, OPOOL_EINVAL, OPOOL__LOAD_POOLS, NULL, n, npools);
        goto done;
    }
    for (k = 0, at = base; k < n; k++, at = end) {
        if (world) e->pool = k;
        st = opool__load_section(&r, at, &im, &end);
        (void)opool__geometry_of(&descs[k], &g);
        if (st == OPOOL_OK) st = opool__load_fits(&descs[k], &g, &im, e);
        if (st != OPOOL_OK) goto done;
    }

    /* pass 3: every pool's memory, then every pool's objects */
    for (k = 0, at = base; k < n; k++, at = end) {
        if (world) e->pool = k;
        st = opool__load_section(&r, at, &im, &end);
        if (st == OPOOL_OK)
            st = opool__load_build_pool(&out[k], &descs[k], &im, r.buf + at + OPOOL__IMG_HEADER);
        if (st != OPOOL_OK) {
            if (st == OPOOL_ENOMEM) opool__load_set(e, st, OPOOL__LOAD_NOMEM, NULL, 0, r.used);
            opool__load_undo(out, n, 0);
            goto done;
        }
    }
    for (k = 0, at = base; k < n; k++, at = end) {
        if (world) e->pool = k;
        st = opool__load_section(&r, at, &im, &end);
        if (st == OPOOL_OK)
            st = opool__load_objects(
                out[k], &im, r.buf + at + OPOOL__IMG_HEADER + (size_t)im.nslots * OPOOL__IMG_SLOT,
                e);
        if (st != OPOOL_OK) {
            opool__load_undo(out, n, k + 1); /* pool k was cut at its rejected object */
            goto done;
        }
    }
    st = OPOOL_OK;

done:
    if (r.buf) opool__mem_free(&r.mem, r.buf, r.cap, 1);
    return st;
}

/* The loads' shared entry: arguments, the load, the failure's record and
 * report. `path`: a file load (NULL: read/ctx is the stream). */
static opool_status opool__load_entry(opool **out, const opool_desc *descs, uint32_t n, bool world,
                                      opool_read_fn read, void *ctx, const char *path);

opool_status opool_load(opool **out, const opool_desc *desc, opool_read_fn read, void *ctx) {
    return opool__load_entry(out, desc, 1, false, read, ctx, NULL);
}

opool_status opool_load_many(opool **out, const opool_desc *descs, uint32_t n, opool_read_fn read,
                             void *ctx) {
    return opool__load_entry(out, descs, n, true, read, ctx, NULL);
}

/* ==== side tables ======================================================== */

/* A side table's image (docs/FORMAT.md, "Side tables"): magic, u32 version,
 * u32 entries, u64 value stride, u64 value alignment; per entry its handle
 * (u64) and stride value bytes, in dense order; the checksum. */
#define OPOOL__SIDE_VERSION 1u
#define OPOOL__SIDE_HEADER 32u
static const unsigned char opool__side_magic[8] = {'O', 'P', 'O', 'O', 'L', 'S', 'D', 'T'};

opool_status opool_side_save(const opool_side *s, opool_write_fn write, void *ctx) {
    if (s == NULL || write == NULL) return OPOOL_EINVAL;
    size_t stride, align;
    opool__side_layout(s, &stride, &align);
    uint32_t n = opool_side_count(s);
    opool__writer w;
    opool__save_start(&w, write, ctx);
    unsigned char rec[OPOOL__SIDE_HEADER];
    memcpy(rec, opool__side_magic, sizeof opool__side_magic);
    opool__io_put64(
        opool__io_put64(opool__io_put32(opool__io_put32(rec + 8, OPOOL__SIDE_VERSION), n), stride),
        align);
    opool__save_bytes(&w, rec, OPOOL__SIDE_HEADER);
    for (uint32_t k = 0; k < n && !w.failed; k++) {
        opool__io_put64(rec, opool_side_handle_at(s, k).bits);
        opool__save_bytes(&w, rec, 8);
        opool__save_bytes(&w, opool_side_value_at(s, k), stride);
    }
    return opool__save_finish(&w);
}

/* The entries of a side image checked and read into t (every byte present,
 * the checksum sound). */
static opool_status opool__side_entries(opool_side *t, const unsigned char *b, uint32_t n,
                                        size_t stride, opool__finding *e) {
    for (uint32_t k = 0; k < n; k++, b += 8 + stride) {
        opool_handle h = {opool__io_get64(b)};
        void *v = (opool_handle_generation(h) & 1) ? opool_side_put(t, h) : NULL;
        if (v == NULL && (opool_handle_generation(h) & 1))
            return opool__load_set(e, OPOOL_ENOMEM, OPOOL__LOAD_NOMEM, NULL, 0, 0);
        /* an even generation, or an index twice (the put re-keyed an entry) */
        if (v == NULL || opool_side_count(t) != k + 1)
            return opool__load_set(e, OPOOL_ECORRUPT, OPOOL__LOAD_ENTRY, NULL, n, k);
        memcpy(v, b + 8, stride);
    }
    return OPOOL_OK;
}

/* opool_side_load of table `index` of `count` in a world (count 0: alone). */
static opool_status opool__side_load(opool_side **out, size_t value_size, size_t value_align,
                                     opool_read_fn read, void *ctx, uint32_t index,
                                     uint32_t count) {
    if (out == NULL) return OPOOL_EINVAL;
    *out = NULL;
    opool_side *t = NULL;
    opool_status st = read ? opool_side_create(&t, value_size, value_align, 0) : OPOOL_EINVAL;
    if (st != OPOOL_OK) return st;
    size_t stride, align;
    opool__side_layout(t, &stride, &align);

    opool__finding e = opool__finding_of(OPOOL__KIND_LOAD, OPOOL_OK, NULL, NULL);
    e.pool = count ? index : UINT32_MAX;
    e.npools = count;
    e.side = true;
    opool__reader r;
    memset(&r, 0, sizeof r);
    r.read = read;
    r.ctx = ctx;
    opool_desc libc; /* the C library's allocator, as the table's own */
    memset(&libc, 0, sizeof libc);
    r.mem = opool__allocator_of(&libc);
    r.total = SIZE_MAX;
    r.e = &e;
    uint64_t n = 0, end = 0;
    st = opool__load_fill(&r, OPOOL__SIDE_HEADER);
    if (st != OPOOL_OK) goto done;
    if (memcmp(r.buf, opool__side_magic, sizeof opool__side_magic) != 0) {
        st = opool__load_set(&e, OPOOL_ECORRUPT, OPOOL__LOAD_MAGIC, NULL, 0, 0);
        goto done;
    }
    uint32_t version = opool__io_get32(r.buf + 8);
    if (version != OPOOL__SIDE_VERSION) {
        st = opool__load_set(&e, OPOOL_ECORRUPT, OPOOL__LOAD_VERSION, NULL, OPOOL__SIDE_VERSION,
                             version);
        goto done;
    }
    /* the size the header gives, read as far as the bytes arrive; then the
     * checksum, so that damage is ECORRUPT; then the call's layout */
    n = opool__io_get32(r.buf + 12);
    uint64_t saved_stride = opool__io_get64(r.buf + 16), saved_align = opool__io_get64(r.buf + 24);
    uint64_t room = (uint64_t)(SIZE_MAX - OPOOL__SIDE_HEADER - OPOOL__IMG_CHECKSUM);
    if (n > OPOOL_MAX_CAPACITY) {
        st = OPOOL__CORRUPT(&e, "entries", n);
        goto done;
    }
    if (saved_stride > room - 8 || (n != 0 && 8 + saved_stride > room / n)) {
        st = OPOOL__CORRUPT(&e, "value stride", saved_stride);
        goto done;
    }
    end = OPOOL__SIDE_HEADER + n * (8 + saved_stride);
    r.total = (size_t)end + OPOOL__IMG_CHECKSUM;
    st = opool__load_fill(&r, end + OPOOL__IMG_CHECKSUM);
    if (st != OPOOL_OK) goto done;
    uint64_t hash = opool__io_fnv(OPOOL__FNV_OFFSET, r.buf, (size_t)end);
    uint64_t said = opool__io_get64(r.buf + end);
    if (hash != said) {
        st = opool__load_set(&e, OPOOL_ECORRUPT, OPOOL__LOAD_CHECKSUM, NULL, hash, said);
        goto done;
    }
    if (saved_stride != stride || saved_align != align) {
        bool s_differs = saved_stride != stride;
        st = opool__load_set(&e, OPOOL_EINVAL, OPOOL__LOAD_LAYOUT,
                             s_differs ? "value_size (rounded up to value_align)" : "value_align",
                             s_differs ? stride : align, s_differs ? saved_stride : saved_align);
        goto done;
    }
    st = opool__side_entries(t, r.buf + OPOOL__SIDE_HEADER, (uint32_t)n, stride, &e);

done:
    if (r.buf) opool__mem_free(&r.mem, r.buf, r.cap, 1);
    if (st != OPOOL_OK) {
        opool_side_destroy(t);
        opool__load_record(&e);
        return st;
    }
    *out = t;
    return OPOOL_OK;
}

opool_status opool_side_load(opool_side **out, size_t value_size, size_t value_align,
                             opool_read_fn read, void *ctx) {
    return opool__side_load(out, value_size, value_align, read, ctx, 0, 0);
}

/* ==== worlds with side tables ============================================
 * A header (magic, u32 version, u32 pools, u32 side tables, u32 reserved 0),
 * the pools' world image, then each table's image: every part checks
 * itself, and a load keeps all or nothing. */

#define OPOOL__WSIDE_VERSION 1u
#define OPOOL__WSIDE_HEADER 24u
static const unsigned char opool__wside_magic[8] = {'O', 'P', 'O', 'O', 'L', 'W', 'S', 'D'};

/* m distinct tables, none NULL (m 0: sides may be NULL). */
static bool opool__sides_ok(const opool_side *const *sides, uint32_t m) {
    if (m != 0 && sides == NULL) return false;
    for (uint32_t i = 0; i < m; i++) {
        if (sides[i] == NULL) return false;
        for (uint32_t j = 0; j < i; j++)
            if (sides[j] == sides[i]) return false;
    }
    return true;
}

opool_status opool_save_world(const opool *const *pools, uint32_t n, const opool_side *const *sides,
                              uint32_t m, opool_write_fn write, void *ctx) {
    if (!opool__save_many_ok(pools, n) || !opool__sides_ok(sides, m) || write == NULL)
        return OPOOL_EINVAL;
    unsigned char rec[OPOOL__WSIDE_HEADER];
    memcpy(rec, opool__wside_magic, sizeof opool__wside_magic);
    opool__io_put32(
        opool__io_put32(opool__io_put32(opool__io_put32(rec + 8, OPOOL__WSIDE_VERSION), n), m), 0);
    if (write(ctx, rec, sizeof rec) != sizeof rec) return OPOOL_EIO;
    opool_status st = opool_save_many(pools, n, write, ctx);
    for (uint32_t i = 0; i < m && st == OPOOL_OK; i++) st = opool_side_save(sides[i], write, ctx);
    return st;
}

/* Everything a world load built, given back: out[0..n) and sides[0..m)
 * NULL again. */
static void opool__world_undo(opool **out, uint32_t n, opool_side **sides, uint32_t m) {
    opool__load_undo(out, n, n);
    for (uint32_t i = 0; i < m; i++) {
        opool_side_destroy(sides[i]);
        sides[i] = NULL;
    }
}

/* The world's header, pools and tables from read; on failure nothing is
 * kept and e (the header's checks) or the part's own load has said why. */
static opool_status opool__load_world(opool **out, const opool_desc *descs, uint32_t n,
                                      opool_side **sides, const opool_side_layout *layouts,
                                      uint32_t m, opool_read_fn read, void *ctx,
                                      opool__finding *e) {
    unsigned char rec[OPOOL__WSIDE_HEADER];
    size_t got = 0;
    while (got < sizeof rec) {
        size_t k = read(ctx, rec + got, sizeof rec - got);
        if (k == 0 || k > sizeof rec - got) break; /* the end (or a read not to be trusted) */
        got += k;
    }
    if (got < sizeof rec)
        return opool__load_set(e, OPOOL_ECORRUPT, OPOOL__LOAD_TRUNCATED, NULL, sizeof rec, got);
    if (memcmp(rec, opool__wside_magic, sizeof opool__wside_magic) != 0)
        return opool__load_set(e, OPOOL_ECORRUPT, OPOOL__LOAD_MAGIC, NULL, 0, 0);
    uint32_t version = opool__io_get32(rec + 8), np = opool__io_get32(rec + 12);
    uint32_t ns = opool__io_get32(rec + 16), reserved = opool__io_get32(rec + 20);
    if (version != OPOOL__WSIDE_VERSION)
        return opool__load_set(e, OPOOL_ECORRUPT, OPOOL__LOAD_VERSION, NULL, OPOOL__WSIDE_VERSION,
                               version);
    if (reserved != 0) return OPOOL__CORRUPT(e, "reserved", reserved);
    if (np != n) return opool__load_set(e, OPOOL_EINVAL, OPOOL__LOAD_POOLS, NULL, n, np);
    if (ns != m) return opool__load_set(e, OPOOL_EINVAL, OPOOL__LOAD_SIDES, NULL, m, ns);
    opool_status st = opool_load_many(out, descs, n, read, ctx); /* records and reports its own */
    for (uint32_t i = 0; i < m && st == OPOOL_OK; i++)
        st = opool__side_load(&sides[i], layouts[i].value_size, layouts[i].value_align, read, ctx,
                              i, m);
    if (st != OPOOL_OK) opool__world_undo(out, n, sides, m);
    return st;
}

/* ==== files ============================================================== */

static size_t opool__file_write(void *ctx, const void *data, size_t size) {
    return fwrite(data, 1, size, (FILE *)ctx);
}

static size_t opool__file_read(void *ctx, void *data, size_t size) {
    return fread(data, 1, size, (FILE *)ctx);
}

static _Atomic uint32_t opool__file_serial;

/* Save pools[0..n) (a world, or one pool's image) to path atomically. */
/* What a file save writes: pools[0..n) and sides[0..m), as opool_save
 * (world false), opool_save_many (world, no table) or opool_save_world. */
typedef struct opool__saving {
    const opool *const *pools;
    uint32_t n;
    bool world;
    const opool_side *const *sides;
    uint32_t m;
} opool__saving;

static opool_status opool__save_to(const opool__saving *w, FILE *f) {
    if (w->m != 0) return opool_save_world(w->pools, w->n, w->sides, w->m, opool__file_write, f);
    return w->world ? opool_save_many(w->pools, w->n, opool__file_write, f)
                    : opool_save(w->pools[0], opool__file_write, f);
}

static opool_status opool__save_file(const opool__saving *w, const char *path) {
    if (path == NULL || *path == '\0') return OPOOL_EINVAL;
    const opool_allocator *mem = &w->pools[0]->mem;
    /* the temporary file: path + ".<pid>.<serial>.tmp", beside it, created
     * exclusively (C11's "x") so it can never be someone else's file */
    size_t len = strlen(path), size = len + 48;
    char *tmp = (char *)mem->alloc(mem->ctx, size, 1);
    if (tmp == NULL) return OPOOL_ENOMEM;
    unsigned long pid = opool__process_id();
    FILE *f = NULL;
    for (int attempt = 0; attempt < 16 && f == NULL; attempt++) {
        /* relaxed: only uniqueness within the process matters */
        uint32_t serial = atomic_fetch_add_explicit(&opool__file_serial, 1, memory_order_relaxed);
        snprintf(tmp, size, "%s.%lu.%lu.tmp", path, pid, (unsigned long)serial);
        f = opool__file_create(tmp);
    }
    opool_status st = OPOOL_EIO;
    if (f == NULL) goto out;

    st = opool__save_to(w, f);
    if (st == OPOOL_OK && !opool__file_sync(f)) st = OPOOL_EIO;
    if (fclose(f) != 0 && st == OPOOL_OK) st = OPOOL_EIO;
    if (st == OPOOL_OK && !opool__file_replace(tmp, path)) st = OPOOL_EIO;
    if (st != OPOOL_OK) {
        (void)opool__file_remove(tmp);
        goto out;
    }
    memcpy(tmp, path, len + 1);
    opool__file_sync_dir(tmp);
out:
    opool__mem_free(mem, tmp, size, 1);
    return st;
}

opool_status opool_save_file(const opool *p, const char *path) {
    if (p == NULL) return OPOOL_EINVAL;
    opool__saving w = {&p, 1, false, NULL, 0};
    return opool__save_file(&w, path);
}

opool_status opool_save_many_file(const opool *const *pools, uint32_t n, const char *path) {
    if (!opool__save_many_ok(pools, n)) return OPOOL_EINVAL;
    opool__saving w = {pools, n, true, NULL, 0};
    return opool__save_file(&w, path);
}

opool_status opool_save_world_file(const opool *const *pools, uint32_t n,
                                   const opool_side *const *sides, uint32_t m, const char *path) {
    if (!opool__save_many_ok(pools, n) || !opool__sides_ok(sides, m)) return OPOOL_EINVAL;
    opool__saving w = {pools, n, true, sides, m};
    return opool__save_file(&w, path);
}

/* path opened for reading; NULL, and e says why: no file there
 * (OPOOL_ENOENT), or any other failure (OPOOL_EIO). */
static FILE *opool__load_open(const char *path, opool__finding *e) {
    errno = 0;
    FILE *f = opool__file_open_read(path);
    if (f == NULL) {
        bool missing = false;
#if defined(ENOENT)
        missing = errno == ENOENT;
#endif
        if (missing)
            opool__load_set(e, OPOOL_ENOENT, OPOOL__LOAD_NOFILE, NULL, 0, 0);
        else
            opool__load_set(e, OPOOL_EIO, OPOOL__LOAD_IO, NULL, 0, 0);
    }
    return f;
}

static opool_status opool__load_entry(opool **out, const opool_desc *descs, uint32_t n, bool world,
                                      opool_read_fn read, void *ctx, const char *path) {
    if (out == NULL) return OPOOL_EINVAL;
    for (uint32_t i = 0; i < n; i++) out[i] = NULL;
    if (descs == NULL || n == 0 || (path == NULL && read == NULL)) return OPOOL_EINVAL;

    opool__finding e = opool__finding_of(OPOOL__KIND_LOAD, OPOOL_OK, NULL, NULL);
    e.npools = world ? n : 0;
    e.pool = UINT32_MAX;
    opool_status st;
    if (path == NULL) {
        st = opool__load_image(out, descs, n, world, read, ctx, false, &e);
    } else {
        FILE *f = opool__load_open(path, &e);
        if (f == NULL) {
            st = e.what;
        } else {
            st = opool__load_image(out, descs, n, world, opool__file_read, f, true, &e);
            /* a read that failed looks like the end of the input to the
             * loader: the error is the file's, not the image's */
            if (ferror(f)) {
                opool__load_undo(out, n, n);
                st = opool__load_set(&e, OPOOL_EIO, OPOOL__LOAD_IO, NULL, 0, 0);
                e.pool = UINT32_MAX;
            }
            fclose(f);
        }
    }
    return st == OPOOL_OK ? st : opool__load_failed(descs, n, &e);
}

opool_status opool_load_file(opool **out, const opool_desc *desc, const char *path) {
    if (path == NULL) {
        if (out) *out = NULL;
        return OPOOL_EINVAL;
    }
    return opool__load_entry(out, desc, 1, false, NULL, NULL, path);
}

opool_status opool_load_many_file(opool **out, const opool_desc *descs, uint32_t n,
                                  const char *path) {
    if (path == NULL) {
        if (out)
            for (uint32_t i = 0; i < n; i++) out[i] = NULL;
        return OPOOL_EINVAL;
    }
    return opool__load_entry(out, descs, n, true, NULL, NULL, path);
}

/* opool_load_world and its file form: arguments, the load, the header's
 * failure recorded and reported (each part records its own). `path`: a
 * file load (NULL: read/ctx is the stream). */
static opool_status opool__load_world_entry(opool **out, const opool_desc *descs, uint32_t n,
                                            opool_side **sides, const opool_side_layout *layouts,
                                            uint32_t m, opool_read_fn read, void *ctx,
                                            const char *path) {
    if (out == NULL || (m != 0 && sides == NULL)) return OPOOL_EINVAL;
    for (uint32_t i = 0; i < n; i++) out[i] = NULL;
    for (uint32_t i = 0; i < m; i++) sides[i] = NULL;
    if (descs == NULL || n == 0 || (m != 0 && layouts == NULL) || (path == NULL && read == NULL))
        return OPOOL_EINVAL;
    opool__finding e = opool__finding_of(OPOOL__KIND_LOAD, OPOOL_OK, NULL, NULL);
    e.npools = n;
    e.pool = UINT32_MAX;
    opool_status st;
    if (path == NULL) {
        st = opool__load_world(out, descs, n, sides, layouts, m, read, ctx, &e);
    } else {
        FILE *f = opool__load_open(path, &e);
        if (f == NULL) {
            st = e.what;
        } else {
            unsigned char extra;
            st = opool__load_world(out, descs, n, sides, layouts, m, opool__file_read, f, &e);
            if (ferror(f)) { /* a read that failed: the file's error, not the image's */
                opool__world_undo(out, n, sides, m);
                st = opool__load_set(&e, OPOOL_EIO, OPOOL__LOAD_IO, NULL, 0, 0);
            } else if (st == OPOOL_OK && fread(&extra, 1, 1, f) != 0) {
                opool__world_undo(out, n, sides, m);
                st = opool__load_set(&e, OPOOL_ECORRUPT, OPOOL__LOAD_TRAILING, NULL, 0, 0);
            }
            fclose(f);
        }
    }
    return st != OPOOL_OK && e.what != OPOOL_OK ? opool__load_failed(descs, n, &e) : st;
}

opool_status opool_load_world(opool **out, const opool_desc *descs, uint32_t n, opool_side **sides,
                              const opool_side_layout *layouts, uint32_t m, opool_read_fn read,
                              void *ctx) {
    return opool__load_world_entry(out, descs, n, sides, layouts, m, read, ctx, NULL);
}

opool_status opool_load_world_file(opool **out, const opool_desc *descs, uint32_t n,
                                   opool_side **sides, const opool_side_layout *layouts, uint32_t m,
                                   const char *path) {
    if (path == NULL) {
        if (out)
            for (uint32_t i = 0; i < n; i++) out[i] = NULL;
        if (sides)
            for (uint32_t i = 0; i < m; i++) sides[i] = NULL;
        return OPOOL_EINVAL;
    }
    return opool__load_world_entry(out, descs, n, sides, layouts, m, NULL, NULL, path);
}
