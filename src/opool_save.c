/*
 * opool_save.c -- save and load of a core pool (include/opool.h, "save and
 * load"). The byte format is docs/FORMAT.md; keep the two in step.
 *
 * Sections (grep for "==== "):
 *   ==== format      the header, little-endian coding, the checksum
 *   ==== save        the buffered, hashing writer and opool_save
 *   ==== load        reading, validation, opool_load (the pool's state is
 *                    rebuilt by opool.c's opool__restore_* functions)
 *   ==== files       opool_save_file (atomic) and opool_load_file
 *
 * Load never trusts the image: it reads it whole into memory (growing the
 * buffer only as bytes arrive), checks the checksum and every invariant of
 * the layout, and only then builds a pool through opool_create, the same
 * path every pool takes.
 */
#include "opool_internal.h"
#include "opool_platform.h" /* fsync, rename: opool_save_file */
#include "opool_diag.h"

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

/* False if the magic is wrong. */
static bool opool__io_decode(opool__image *im, const unsigned char *in) {
    if (memcmp(in, opool__img_magic, sizeof opool__img_magic) != 0) return false;
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
    return true;
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
 * Write p as docs/FORMAT.md describes: the header, every slot record, every
 * live object in live-list order, the checksum. Reads the pool and nothing
 * else. OPOOL_ENOMEM: the buffer for save_object's bytes; OPOOL_EIO: a short
 * write; OPOOL_ECORRUPT: save_object returned false.
 */
opool_status opool_save(const opool *p, opool_write_fn write, void *ctx) {
    if (p == NULL || write == NULL) return OPOOL_EINVAL;
    const opool__hot *h = &p->hot;
    const opool_desc *d = &p->desc;
    uint32_t n = h->count;

    opool__image im;
    memset(&im, 0, sizeof im);
    im.version = OPOOL__IMG_VERSION;
    im.flags =
        (d->save_object ? OPOOL__IMG_BY_CALLBACK : 0) | (opool__episode_failures(&p->episode) ? OPOOL__IMG_EPISODE : 0);
    im.pool_flags = d->flags;
    im.gen0 = p->gen0;
    im.object_size = d->object_size;
    im.object_align = opool__object_align(d);
    im.stride = h->stride;
    im.shift = h->shift;
    im.first = h->first;
    im.max_capacity = p->max_capacity;
    im.nslots = h->nslots;
    im.limit = h->limit;
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

    opool__writer w;
    w.write = write;
    w.ctx = ctx;
    w.hash = OPOOL__FNV_OFFSET;
    w.used = 0;
    w.failed = false;
    unsigned char rec[OPOOL__IMG_HEADER];
    opool__io_encode(&im, rec);
    opool__save_bytes(&w, rec, OPOOL__IMG_HEADER);

    for (uint32_t i = 0; i < h->nslots && !w.failed; i++) {
        opool__io_put32(opool__io_put32(rec, h->slot[i].gen), h->slot[i].pos);
        opool__save_bytes(&w, rec, OPOOL__IMG_SLOT);
    }

    opool_status st = OPOOL_OK;
    opool__scratch s = {&p->mem, NULL, 0, 0, false};
    for (uint32_t k = 0; k < n && !w.failed; k++) {
        const void *obj = opool__object(h, h->roster[k]);
        if (d->save_object == NULL) {
            opool__save_bytes(&w, obj, d->object_size);
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
        opool__save_bytes(&w, rec, 8);
        opool__save_bytes(&w, s.buf, s.used);
    }
    if (s.buf) opool__mem_free(&p->mem, s.buf, s.cap, 1);
    if (st != OPOOL_OK) return st;

    opool__save_flush(&w);
    opool__io_put64(rec, w.hash);
    if (!w.failed && write(ctx, rec, OPOOL__IMG_CHECKSUM) != OPOOL__IMG_CHECKSUM) w.failed = true;
    return w.failed ? OPOOL_EIO : OPOOL_OK;
}

/* ==== load =============================================================== */

/* The image, read whole into memory from the desc's allocator. */
typedef struct opool__reader {
    opool_read_fn read;
    void *ctx;
    opool_allocator mem;
    unsigned char *buf;
    size_t used, cap;
    size_t total; /* the image's size once known, else SIZE_MAX */
} opool__reader;

/* Make the first `want` bytes of the image present in r->buf. The buffer
 * grows only when it is full of bytes that really arrived, and then
 * doubles (never past the image's total size, once known), so a header
 * that promises more than the input holds costs no more memory than the
 * input itself, and reading takes O(log size) allocations however small
 * its steps. Short input: OPOOL_ECORRUPT. */
static opool_status opool__load_fill(opool__reader *r, uint64_t want) {
    if (want > r->total) return OPOOL_ECORRUPT;
    while (r->used < want) {
        if (r->used == r->cap) {
            size_t cap = r->cap > SIZE_MAX / 2 ? SIZE_MAX : r->cap * 2;
            if (cap < 4096) cap = 4096;
            if (cap > r->total) cap = r->total;
            unsigned char *buf = (unsigned char *)r->mem.alloc(r->mem.ctx, cap, 1);
            if (buf == NULL) return OPOOL_ENOMEM;
            if (r->used) memcpy(buf, r->buf, r->used);
            if (r->buf) opool__mem_free(&r->mem, r->buf, r->cap, 1);
            r->buf = buf;
            r->cap = cap;
        }
        size_t ask = (want < r->cap ? (size_t)want : r->cap) - r->used;
        size_t got = r->read(r->ctx, r->buf + r->used, ask);
        if (got > ask) return OPOOL_ECORRUPT; /* a read that claims too much is not trusted */
        r->used += got;
        if (got < ask) return OPOOL_ECORRUPT;
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
static bool opool__load_header_ok(const opool__image *im) {
    if (im->version != OPOOL__IMG_VERSION || (im->flags & ~OPOOL__IMG_FLAGS_ALL) != 0 ||
        (im->pool_flags & ~(uint32_t)OPOOL__FLAGS_ALL) != 0 || (im->gen0 & 1) != 0 ||
        im->reserved != 0)
        return false;
    if (im->object_size > SIZE_MAX || im->object_align == 0 ||
        im->object_align > 4096 || im->shift > 32)
        return false;

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
    if (!opool__geometry_of(&d, &g) || g.stride != im->stride || g.first != im->first ||
        g.max_capacity != im->max_capacity || g.shift != im->shift)
        return false;

    /* slot records end where a chunk ends (so within max_capacity, and no
     * chunk is cut short); only chunks with records may hold storage */
    uint32_t nchunks = opool__span_count(im->shift, im->max_capacity);
    bool boundary = false;
    for (uint32_t c = 0; c < nchunks; c++) {
        if (opool__span_hi(im->shift, im->max_capacity, c) == im->nslots) boundary = true;
        if (opool__span_lo(im->shift, c) >= im->nslots && (im->chunks >> c & 1)) return false;
    }
    if (!boundary || !(im->chunks & 1)) return false;
    if (nchunks < 64 && (im->chunks >> nchunks) != 0) return false;

    if (im->limit > im->nslots || im->count > im->limit || im->retired > im->nslots) return false;
    if (im->high_water < im->count || im->high_water > im->max_capacity) return false;
    if (im->allocs < im->count || im->evictions > im->allocs - im->count) return false;
    /* deferred (older writers): 1 + a live position, with a free slot left */
    if (im->deferred != 0 && (im->deferred - 1 > im->count || im->count >= im->limit)) return false;
    return true;
}

/* Every slot record: generations and markers agree with the chunks, and
 * the roster positions are a permutation of [0, limit) whose prefix
 * [0, count) holds exactly the live slots. Uses a bitmap of limit bits
 * from the allocator. OPOOL_ECORRUPT or OPOOL_ENOMEM. */
static opool_status opool__load_slots_ok(const opool__image *im, const unsigned char *rec,
                                         const opool_allocator *mem) {
    size_t words = ((size_t)im->limit + 63) / 64;
    uint64_t *seen = NULL;
    if (words) {
        seen = (uint64_t *)mem->alloc(mem->ctx, words * sizeof *seen, alignof(uint64_t));
        if (seen == NULL) return OPOOL_ENOMEM;
        memset(seen, 0, words * sizeof *seen);
    }
    opool_status st = OPOOL_ECORRUPT;
    uint32_t placed = 0, retired = 0, nchunks = opool__span_count(im->shift, im->max_capacity);
    for (uint32_t c = 0; c < nchunks && opool__span_lo(im->shift, c) < im->nslots; c++) {
        bool backed = (im->chunks >> c & 1) != 0;
        for (uint32_t i = (uint32_t)opool__span_lo(im->shift, c); i < opool__span_hi(im->shift, im->max_capacity, c); i++) {
            const unsigned char *r = rec + (size_t)i * OPOOL__IMG_SLOT;
            uint32_t gen = opool__io_get32(r), pos = opool__io_get32(r + 4);
            if (pos == OPOOL__RETIRED) {
                /* retired: its generation came back to gen0 (in a compact handle's bits) */
                if (!opool__wraps(gen, im->gen0, opool__index_bits(im->max_capacity))) goto out;
                retired++;
            } else if (pos == OPOOL__UNBACKED) {
                if (backed || (gen & 1)) goto out;
            } else {
                if (!backed || pos >= im->limit) goto out;
                if (seen[pos / 64] >> (pos % 64) & 1) goto out;
                seen[pos / 64] |= (uint64_t)1 << (pos % 64);
                if (((gen & 1) != 0) != (pos < im->count)) goto out;
                placed++;
            }
        }
    }
    if (placed == im->limit && retired == im->retired) st = OPOOL_OK;
out:
    if (seen) opool__mem_free(mem, seen, words * sizeof *seen, alignof(uint64_t));
    return st;
}

/*
 * Build the pool an image describes (already validated whole). Storage
 * first, so that nothing can run out of memory once objects exist; then
 * the slot records, roster and counters; then the objects, in live-list
 * order. If load_object rejects object k, the pool is destroyed with count
 * = k: exactly the objects already loaded get fini, as on any destroy.
 */
static opool_status opool__load_build(opool **out, const opool_desc *desc, const opool__image *im,
                                      const unsigned char *buf) {
    opool_desc d = *desc;
    d.salt = im->gen0 | 1u; /* the core keeps salt & ~1: gen0 itself, even when it is 0 */
    opool *p = NULL;
    opool_status st = opool_create(&p, &d);
    if (st != OPOOL_OK) return st;
    opool__assert(p->hot.first == im->first && p->gen0 == im->gen0 && p->nchunks <= 64);

    if (!opool__reserve_slots(p, im->nslots)) goto nomem;
    for (uint32_t c = 1; c < p->nchunks; c++)
        if ((im->chunks >> c & 1) && !opool__restore_chunk(p, c)) goto nomem;

    const unsigned char *rec = buf + OPOOL__IMG_HEADER;
    for (uint32_t i = 0; i < im->nslots; i++, rec += OPOOL__IMG_SLOT)
        opool__restore_slot(p, i, opool__io_get32(rec), opool__io_get32(rec + 4), im->limit);
    opool__saved_counts counts = {
        .nslots = im->nslots,
        .limit = im->limit,
        .count = im->count,
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

    for (uint32_t k = 0; k < im->count; k++) {
        void *obj = opool__restore_object(p, k);
        if (desc->load_object == NULL) {
            memcpy(obj, rec, desc->object_size);
            rec += desc->object_size;
            continue;
        }
        uint64_t len = opool__io_get64(rec);
        rec += 8;
        if (p->desc.flags & OPOOL_ZERO) memset(obj, 0, desc->object_size);
        if (!desc->load_object(obj, rec, (size_t)len, desc->user)) {
            opool__restore_cut(p, k);
            opool_destroy(p);
            return OPOOL_ECORRUPT;
        }
        rec += (size_t)len;
    }

    *out = p;
    return OPOOL_OK;

nomem:
    opool_destroy(p); /* count is 0: no callback runs */
    return OPOOL_ENOMEM;
}

/* Does desc describe the pool the image was saved from? */
static bool opool__load_fits(const opool_desc *desc, const opool__geometry *g,
                             const opool__image *im) {
    return desc->object_size == im->object_size &&
           opool__object_align(desc) == im->object_align && g->stride == im->stride &&
           g->first == im->first && g->max_capacity == im->max_capacity && g->shift == im->shift &&
           (desc->load_object != NULL) == ((im->flags & OPOOL__IMG_BY_CALLBACK) != 0);
}

/* opool_load; `whole`: the input must end with the image (a file). */
static opool_status opool__load(opool **out, const opool_desc *desc, opool_read_fn read, void *ctx,
                                bool whole) {
    if (out == NULL) return OPOOL_EINVAL;
    *out = NULL;
    opool__geometry g;
    if (read == NULL || !opool__geometry_of(desc, &g)) return OPOOL_EINVAL;

    opool__reader r;
    r.read = read;
    r.ctx = ctx;
    r.mem = opool__allocator_of(desc);
    r.buf = NULL;
    r.used = r.cap = 0;
    r.total = SIZE_MAX;
    opool__image im;
    uint64_t end = 0;

    opool_status st = opool__load_fill(&r, OPOOL__IMG_HEADER);
    if (st != OPOOL_OK) goto done;
    st = OPOOL_ECORRUPT;
    if (!opool__io_decode(&im, r.buf) || !opool__load_header_ok(&im)) goto done;

    /* the rest, as far as the header and each record's length say */
    end = OPOOL__IMG_HEADER + (uint64_t)im.nslots * OPOOL__IMG_SLOT;
    if (!(im.flags & OPOOL__IMG_BY_CALLBACK)) {
        uint64_t total;
        if (!opool__load_add(end, (uint64_t)im.count * im.object_size, &end) ||
            !opool__load_add(end, OPOOL__IMG_CHECKSUM, &total) || total > SIZE_MAX)
            goto done;
        r.total = (size_t)total; /* every size is known: the buffer need not outgrow it */
    } else {
        for (uint32_t k = 0; k < im.count; k++) {
            st = opool__load_fill(&r, end + 8);
            if (st != OPOOL_OK) goto done;
            st = OPOOL_ECORRUPT;
            if (!opool__load_add(end + 8, opool__io_get64(r.buf + end), &end)) goto done;
        }
    }
    if (!opool__load_add(end, OPOOL__IMG_CHECKSUM, &end)) goto done;
    st = opool__load_fill(&r, end);
    if (st != OPOOL_OK) goto done;
    st = OPOOL_ECORRUPT;
    if (whole) {
        unsigned char extra;
        if (read(ctx, &extra, 1) != 0) goto done;
    }
    size_t body = (size_t)end - OPOOL__IMG_CHECKSUM;
    if (opool__io_fnv(OPOOL__FNV_OFFSET, r.buf, body) != opool__io_get64(r.buf + body)) goto done;

    st = opool__load_slots_ok(&im, r.buf + OPOOL__IMG_HEADER, &r.mem);
    if (st != OPOOL_OK) goto done;
    if (!opool__load_fits(desc, &g, &im)) {
        st = OPOOL_EINVAL;
        goto done;
    }
    st = opool__load_build(out, desc, &im, r.buf);

done:
    if (r.buf) opool__mem_free(&r.mem, r.buf, r.cap, 1);
    return st;
}

opool_status opool_load(opool **out, const opool_desc *desc, opool_read_fn read, void *ctx) {
    return opool__load(out, desc, read, ctx, false);
}

/* ==== files ============================================================== */

static size_t opool__file_write(void *ctx, const void *data, size_t size) {
    return fwrite(data, 1, size, (FILE *)ctx);
}

static size_t opool__file_read(void *ctx, void *data, size_t size) {
    return fread(data, 1, size, (FILE *)ctx);
}

static _Atomic uint32_t opool__file_serial;

opool_status opool_save_file(const opool *p, const char *path) {
    if (p == NULL || path == NULL || *path == '\0') return OPOOL_EINVAL;
    /* the temporary file: path + ".<pid>.<serial>.tmp", beside it, created
     * exclusively (C11 "x") so it can never be someone else's file */
    size_t n = strlen(path), size = n + 48;
    char *tmp = (char *)p->mem.alloc(p->mem.ctx, size, 1);
    if (tmp == NULL) return OPOOL_ENOMEM;
    unsigned long pid = opool__process_id();
    FILE *f = NULL;
    for (int attempt = 0; attempt < 16 && f == NULL; attempt++) {
        /* relaxed: only uniqueness within the process matters */
        uint32_t serial = atomic_fetch_add_explicit(&opool__file_serial, 1, memory_order_relaxed);
        snprintf(tmp, size, "%s.%lu.%lu.tmp", path, pid, (unsigned long)serial);
        f = fopen(tmp, "wbx");
    }
    opool_status st = OPOOL_EIO;
    if (f == NULL) goto out;

    st = opool_save(p, opool__file_write, f);
    if (st == OPOOL_OK && !opool__file_sync(f)) st = OPOOL_EIO;
    if (fclose(f) != 0 && st == OPOOL_OK) st = OPOOL_EIO;
    if (st == OPOOL_OK && !opool__file_replace(tmp, path)) st = OPOOL_EIO;
    if (st != OPOOL_OK) {
        (void)remove(tmp);
        goto out;
    }
    memcpy(tmp, path, n + 1);
    opool__file_sync_dir(tmp);
out:
    opool__mem_free(&p->mem, tmp, size, 1);
    return st;
}

opool_status opool_load_file(opool **out, const opool_desc *desc, const char *path) {
    if (out == NULL) return OPOOL_EINVAL;
    *out = NULL;
    if (path == NULL) return OPOOL_EINVAL;
    errno = 0;
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
#if defined(ENOENT)
        if (errno == ENOENT) return OPOOL_ENOENT;
#endif
        return OPOOL_EIO;
    }
    opool_status st = opool__load(out, desc, opool__file_read, f, true);
    /* a read that failed looks like the end of the input to the loader */
    if (ferror(f)) {
        opool_destroy(*out);
        *out = NULL;
        st = OPOOL_EIO;
    }
    fclose(f);
    return st;
}
