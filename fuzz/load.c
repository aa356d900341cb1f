/*
 * load.c -- fuzz target: opool_load on hostile bytes, and save/load round
 * trips of pools built from the input.
 *
 * Byte 0 chooses the mode and a desc of fuzz/load_descs.h (bits 0-2; in
 * LOAD mode, 6 and 7 mean a desc made to fit whatever geometry the image's
 * header claims, so hostile images get past the desc check; else modulo
 * LOAD_NDESCS):
 *
 *   bit 7 clear: LOAD. The rest of the input is an image, loaded with the
 *     desc. With bit 6 set, byte 1 is an allocation number from which every
 *     allocation fails, and the image starts at byte 2. With bit 3 set, the
 *     last 8 bytes are replaced by the checksum of the image before them,
 *     so that mutations reach the validation behind the checksum.
 *     A failure must be OPOOL_ECORRUPT, OPOOL_EINVAL or (only with failing
 *     allocations) OPOOL_ENOMEM, with *out NULL and every byte given back
 *     (the counting allocator, and LeakSanitizer for the rest). A success
 *     must pass opool__check, hold valid objects, save again to an image
 *     that loads into an identical pool and saves to the same bytes, and
 *     keep working (allocs to full, growth, frees, alloc_at, shrink, sort,
 *     clear).
 *
 *   bit 7 clear, bit 4 set: WORLD. As LOAD (bits 3 and 6 the same), but
 *     after the allocation number come a byte whose bits 0-1 are n - 1
 *     and n bytes, desc numbers modulo LOAD_NDESCS; the image is a world
 *     of n pools loaded with opool_load_many. A failure must leave every
 *     out[i] NULL, every byte given back, and name one of the n pools or
 *     none; a success must give pools that each pass the LOAD checks, and
 *     a world that saves again to an image that loads into identical pools
 *     and saves to the same bytes.
 *
 *   bit 7 clear, bit 5 set: SIDE. A side table's image: byte 1 picks a
 *     value layout of fuzz/load_descs.h (modulo SIDE_LAYOUTS) and the
 *     image follows (bit 3: its checksum fixed, as above). A failure must be
 *     OPOOL_ECORRUPT or OPOOL_EINVAL with *out NULL and the thread's record
 *     saying so; a success must hold distinct indices of odd generations,
 *     each found by get at its position, and save to the same bytes.
 *
 *   bits 4 and 5 set (bit 7 clear): WORLD WITH SIDES. As WORLD, then a
 *     byte whose bits 0-1 are m and m layout numbers; the image is read by
 *     opool_load_world. A failure must leave every pool and table NULL and
 *     every byte given back; a success must give pools that pass the LOAD
 *     checks, and a world that saves to the same bytes.
 *
 *   bit 7 set: ROUND TRIP. A pool from the desc is built by operations
 *     decoded from the input (the last 8 bytes steer the checks), then
 *     saved. A save into a short stream gives OPOOL_ECORRUPT, a save whose
 *     save_object fails or runs out of memory OPOOL_ECORRUPT/OPOOL_ENOMEM,
 *     keeping nothing. The image loads into an identical pool (every
 *     generation, roster position, object and statistic) that behaves
 *     identically from then on; into another
 *     desc it gives OPOOL_EINVAL; truncated at any length or with any one
 *     byte changed, OPOOL_ECORRUPT; with the n-th allocation and all later
 *     ones failing, for every n, OPOOL_ENOMEM until n passes the last
 *     allocation. Some inputs also go through opool_save_file and
 *     opool_load_file (a missing file: OPOOL_EINVAL; a byte after the
 *     image: OPOOL_ECORRUPT).
 */
#if !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L /* getpid */
#endif

#include "fuzz.h"
#include "load_descs.h"

#include <unistd.h>

#include "opool.h"
#include "opool_internal.h"
#include "opool_side.h"
#include "support/opool_check.h"

_Static_assert(LOAD_AUTO >= LOAD_NDESCS, "LOAD_AUTO is not one of the fixed descs");

/* ---- input as a read stream --------------------------------------------- */

typedef struct stream {
    const uint8_t *data;
    size_t size, at;
} stream;

static size_t stream_read(void *ctx, void *out, size_t size) {
    stream *s = (stream *)ctx;
    size_t left = s->size - s->at;
    if (size > left) size = left;
    if (size) memcpy(out, s->data + s->at, size);
    s->at += size;
    return size;
}

static void check_pool(const opool *p, const char *where) {
    char why[256];
    if (!opool__check(p, why, sizeof why)) FUZZ_FAIL("opool__check %s: %s", where, why);
}

/* The object bytes that matter for desc k (desc 3: the length and its bytes). */
static size_t object_bytes(int k, const void *obj, size_t size) {
    return k == 3 ? (size_t)((const unsigned char *)obj)[0] + 1 : size;
}

/* a and b hold the same state: every slot, the roster, the objects, the
 * statistics, the fast-path bounds. */
static void check_same(int k, const opool *a, const opool *b) {
    const opool__hot *x = (const opool__hot *)(const void *)a;
    const opool__hot *y = (const opool__hot *)(const void *)b;
    /* b has made every slot; a may not have (opool__check_loaded_record) */
    uint32_t u = opool__unmade(a);
    FUZZ_CHECK_EQ(opool__unmade(b), 0);
    FUZZ_CHECK_EQ(x->count, y->count);
    FUZZ_CHECK_EQ(x->limit + u, y->limit);
    FUZZ_CHECK_EQ(x->nslots + u, y->nslots);
    FUZZ_CHECK_EQ(x->high_water, y->high_water);
    if (u == 0) { /* (bounds from limit and nslots: check_pool checks b's) */
        FUZZ_CHECK_EQ(x->fast_limit, y->fast_limit);
        FUZZ_CHECK_EQ(x->free_limit, y->free_limit);
    }
    FUZZ_CHECK_EQ(x->first + u, y->first);
    FUZZ_CHECK_EQ(x->stride, y->stride);
    for (uint32_t i = 0; i < y->nslots; i++) {
        uint32_t gen, pos;
        opool__check_loaded_record(a, i, &gen, &pos);
        FUZZ_CHECK_EQ(gen, y->slot[i].gen);
        FUZZ_CHECK_EQ(pos, y->slot[i].pos);
    }
    for (uint32_t r = 0; r < y->limit && y->roster; r++)
        FUZZ_CHECK_EQ(opool__check_loaded_entry(a, r), y->roster[r]);
    FUZZ_CHECK_EQ(opool__check_loaded_chain(a), y->chain);
    size_t size = a->desc.object_size;
    for (uint32_t r = 0; r < x->count && x->roster; r++) {
        /* the entry's handle from the roster: opool_live_handle would end
         * the undo of the pools' last free, which later checks compare */
        uint32_t i = x->roster[r];
        opool_handle h = {(uint64_t)x->slot[i].gen << 32 | i};
        const unsigned char *oa = (const unsigned char *)opool_get(a, h);
        const unsigned char *ob = (const unsigned char *)opool_get(b, h);
        FUZZ_CHECK(oa != NULL && ob != NULL);
        size_t n = object_bytes(k, oa, size);
        FUZZ_CHECK_EQ(n, object_bytes(k, ob, size));
        if (memcmp(oa, ob, n) != 0) FUZZ_FAIL("object %u differs after load", r);
    }
    for (uint32_t c = 0; c < a->nchunks; c++)
        FUZZ_CHECK_EQ(opool__chunk_backed(a, c), opool__chunk_backed(b, c));
    opool_stats s, t;
    opool_get_stats(a, &s);
    opool_get_stats(b, &t);
    FUZZ_CHECK_EQ(s.capacity, t.capacity);
    FUZZ_CHECK_EQ(s.max_capacity, t.max_capacity);
    FUZZ_CHECK_EQ(s.count, t.count);
    FUZZ_CHECK_EQ(s.high_water, t.high_water);
    FUZZ_CHECK_EQ(s.retired, t.retired);
    FUZZ_CHECK_EQ(s.allocs, t.allocs);
    FUZZ_CHECK_EQ(s.frees, t.frees);
    FUZZ_CHECK_EQ(s.failed_allocs, t.failed_allocs);
    FUZZ_CHECK_EQ(s.rejected_handles, t.rejected_handles);
    FUZZ_CHECK_EQ(s.evictions, t.evictions);
    FUZZ_CHECK_EQ(s.grows, t.grows);
}

/* The live count, read without opool_count, which would end the undo of a
 * pool's last free (include/opool.h, ITERATION) on p and not on its twin,
 * or after p's image was taken. */
static uint32_t live_count(const opool *p) {
    opool_stats s;
    opool_get_stats(p, &s);
    return s.count;
}

/* Every live object of a loaded pool is reachable and valid for desc k. */
static void check_objects(int k, const opool *p) {
    size_t size = p->desc.object_size;
    uint32_t n = live_count(p);
    for (uint32_t r = 0; r < n; r++) {
        opool_handle h = opool_live_handle(p, r);
        const unsigned char *o = (const unsigned char *)opool_live_object(p, r);
        FUZZ_CHECK(o != NULL && opool_get(p, h) == o);
        FUZZ_CHECK_EQ(opool_handle_of(p, o).bits, h.bits);
        FUZZ_CHECK_EQ(opool_at(p, opool_handle_index(h)) == o, 1);
        unsigned sum = 0;
        for (size_t i = 0; i < size; i++) sum += o[i]; /* every byte readable */
        (void)sum;
        if (k == 3) FUZZ_CHECK(o[0] < LOAD_CB_SIZE);
    }
}

/* Save p into b (cleared first). */
static opool_status save_to(const opool *p, fuzz_buf *b) {
    b->size = b->at = 0;
    return opool_save(p, fuzz_buf_write, b);
}

/* ---- LOAD_AUTO: a desc that fits whatever geometry the image claims ------ */

static uint64_t le(const unsigned char *b, int n) {
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = v << 8 | b[i];
    return v;
}

static bool auto_save_object(const void *obj, opool_write_fn write, void *wctx, void *user) {
    size_t n = *(const size_t *)user;
    return write(wctx, obj, n) == n;
}

static bool auto_load_object(void *obj, const void *data, size_t size, void *user) {
    size_t n = *(const size_t *)user;
    if (size > n) return false;
    memset(obj, 0, n);
    if (size) memcpy(obj, data, size);
    return true;
}

/* The desc opool_load would accept for the image's header (docs/FORMAT.md):
 * object size and alignment, capacity from first/shift, growth limit,
 * flags, and object callbacks if the image has records. Its allocator
 * refuses huge requests, so a hostile geometry costs nothing. */
static opool_desc auto_desc(const unsigned char *img, size_t size, fuzz_mem *mem) {
    static size_t object_size; /* the callbacks' user: object_size */
    opool_desc d;
    memset(&d, 0, sizeof d);
    d.report = load_quiet_report;
    d.capacity = 1;
    d.object_size = 1;
    if (size >= 64) {
        uint32_t flags = (uint32_t)le(img + 12, 4), shift = (uint32_t)le(img + 48, 4);
        uint32_t first = (uint32_t)le(img + 52, 4), max = (uint32_t)le(img + 56, 4);
        d.flags = (uint32_t)le(img + 16, 4) & OPOOL__FLAGS_ALL;
        d.object_size = (size_t)le(img + 24, 8);
        d.object_align = (size_t)le(img + 32, 8);
        if (shift >= 32) {
            d.capacity = first;
        } else {
            d.capacity = shift == 0 ? 1u : (1u << (shift - 1)) + 1u;
            d.max_capacity = max;
            d.on_full = OPOOL_FULL_GROW;
        }
        if (flags & 1) {
            object_size = d.object_size;
            d.save_object = auto_save_object;
            d.load_object = auto_load_object;
            d.user = &object_size;
        }
    }
    mem->cap = (size_t)64 << 20;
    opool_allocator al = {.alloc = fuzz_mem_alloc, .free = fuzz_mem_free, .ctx = mem};
    d.allocator = al;
    return d;
}

static opool_status load_from(opool **out, int k, fuzz_mem *mem, const unsigned char *data,
                              size_t size) {
    opool_desc d = k == LOAD_AUTO ? auto_desc(data, size, mem) : load_desc(k, mem);
    stream s = {data, size, 0};
    *out = (opool *)mem; /* must be reset to NULL on failure */
    opool_status st = opool_load(out, &d, stream_read, &s);
    if (st != OPOOL_OK) FUZZ_CHECK(*out == NULL);
    return st;
}

/* A loaded pool saves again; that image loads into the same pool and
 * saves to the same bytes. */
static void check_resave(int k, const opool *p, bool may_fail) {
    fuzz_buf img = {0}, again = {0};
    opool_status st = save_to(p, &img);
    if (st != OPOOL_OK) {
        FUZZ_CHECK(may_fail && st == OPOOL_ENOMEM);
        free(img.data);
        return;
    }
    fuzz_mem mem = {0};
    opool *q = NULL;
    st = load_from(&q, k, &mem, img.data, img.size);
    if (st != OPOOL_OK) FUZZ_FAIL("a saved pool does not load: %s", opool_status_str(st));
    check_pool(q, "after reload");
    check_same(k, p, q);
    FUZZ_CHECK_EQ(save_to(q, &again), OPOOL_OK);
    FUZZ_CHECK_EQ(again.size, img.size);
    if (memcmp(again.data, img.data, img.size) != 0) FUZZ_FAIL("save of a reloaded pool differs");
    opool_destroy(q);
    FUZZ_CHECK_MEM_BALANCED(&mem);
    free(img.data);
    free(again.data);
}

/* ---- operations on a pool (both modes) ---------------------------------- */

typedef struct ops {
    const uint8_t *p;
    size_t n;
} ops;

static uint8_t next(ops *o) {
    if (o->n == 0) return 0;
    o->n--;
    return *o->p++;
}

static uint16_t next16(ops *o) {
    uint16_t lo = next(o);
    return (uint16_t)(lo | (uint16_t)next(o) << 8);
}

/* One operation on p from the input; the same call on twin (if any) must
 * give the same result. */
static void step(int k, opool *p, opool *twin, ops *o) {
    size_t size = p->desc.object_size;
    uint32_t gen0 = p->gen0, max = p->max_capacity;
    uint8_t op = next(o);
    switch (op % 10) {
    case 0:
    case 1: { /* alloc */
        opool_handle h, t;
        void *obj = opool_alloc(p, &h);
        if (twin) {
            void *tobj = opool_alloc(twin, &t);
            FUZZ_CHECK_EQ(obj != NULL, tobj != NULL);
            FUZZ_CHECK_EQ(h.bits, t.bits);
            if (tobj) load_fill_object(k, tobj, size, op);
        }
        if (obj) load_fill_object(k, obj, size, op);
        break;
    }
    case 2: { /* free live */
        uint16_t r = next16(o);
        if (live_count(p) == 0) break;
        opool_handle h = opool_live_handle(p, r % live_count(p));
        /* the same read of the twin's list (a read ends the undo of a free) */
        if (twin) FUZZ_CHECK_EQ(opool_live_handle(twin, r % live_count(p)).bits, h.bits);
        opool_status s = opool_free(p, h);
        FUZZ_CHECK_EQ(s, OPOOL_OK);
        if (twin) FUZZ_CHECK_EQ(opool_free(twin, h), s);
        break;
    }
    case 3: { /* free a bad handle */
        opool_handle h = {(uint64_t)(gen0 + 1 + 2u * next(o)) << 32 | next16(o)};
        opool_status s = opool_free(p, h);
        if (twin) FUZZ_CHECK_EQ(opool_free(twin, h), s);
        break;
    }
    case 4: { /* alloc_at: young, last (retires when freed), or any odd generation */
        uint32_t i = next16(o) % (max + 1), g;
        uint8_t kind = next(o);
        g = kind % 3 == 0 ? gen0 + 1 : kind % 3 == 1 ? gen0 - 1 : (uint32_t)kind * 0x01010101u | 1;
        opool_handle h = {(uint64_t)g << 32 | i};
        void *obj = opool_alloc_at(p, h);
        if (twin) {
            void *tobj = opool_alloc_at(twin, h);
            FUZZ_CHECK_EQ(obj != NULL, tobj != NULL);
            if (tobj) load_fill_object(k, tobj, size, kind);
        }
        if (obj) load_fill_object(k, obj, size, kind);
        break;
    }
    case 5: {
        uint32_t n = opool_shrink(p);
        if (twin) FUZZ_CHECK_EQ(opool_shrink(twin), n);
        break;
    }
    case 6:
        opool_sort(p);
        if (twin) opool_sort(twin);
        break;
    case 7:
        if (next(o) % 4 != 0) break; /* rare: it empties the pool */
        opool_clear(p);
        if (twin) opool_clear(twin);
        break;
    case 8: { /* many allocs: full pools, growth, evictions */
        uint32_t n = 1 + next(o) % 64;
        for (uint32_t j = 0; j < n; j++) {
            opool_handle h, t;
            void *obj = opool_alloc(p, &h);
            if (twin) {
                void *tobj = opool_alloc(twin, &t);
                FUZZ_CHECK_EQ(obj != NULL, tobj != NULL);
                FUZZ_CHECK_EQ(h.bits, t.bits);
                if (tobj) load_fill_object(k, tobj, size, (uint8_t)j);
            }
            if (obj) load_fill_object(k, obj, size, (uint8_t)j);
        }
        break;
    }
    default: { /* free many, from the end of the live list */
        uint32_t n = 1 + next(o) % 64;
        for (uint32_t j = 0; j < n && live_count(p) > 0; j++) {
            opool_handle h = opool_live_handle(p, live_count(p) - 1);
            if (twin) FUZZ_CHECK_EQ(opool_live_handle(twin, live_count(p) - 1).bits, h.bits);
            FUZZ_CHECK_EQ(opool_free(p, h), OPOOL_OK);
            if (twin) FUZZ_CHECK_EQ(opool_free(twin, h), OPOOL_OK);
        }
        break;
    }
    }
}

/* A fixed workout for a loaded pool: to full (growth included), frees,
 * alloc_at, shrink, sort, clear; consistent after each. */
static void workout(int k, opool *p) {
    static const uint8_t program[] = {8, 63, 8, 63, 2,   5, 0,   9, 10, 4, 7, 0, 4, 33, 1,
                                      5, 6,  0, 8,  200, 9, 255, 5, 3,  1, 2, 7, 0, 0};
    ops o = {program, sizeof program};
    while (o.n > 0) {
        step(k, p, NULL, &o);
        check_pool(p, "during the workout");
    }
    opool_clear(p);
    check_pool(p, "after clear");
    FUZZ_CHECK_EQ(live_count(p), 0);
}

/* ---- the modes ------------------------------------------------------------ */

static void mode_load(int k, const uint8_t *data, size_t size, bool inject) {
    fuzz_mem mem = {0};
    if (inject) {
        if (size == 0) return;
        mem.fail_from = 1 + data[0];
        data++;
        size--;
    }
    opool *p = NULL;
    opool_status st = load_from(&p, k, &mem, data, size);
    if (st != OPOOL_OK) {
        bool nomem_ok = inject || k == LOAD_AUTO; /* failing allocations, or refused huge ones */
        if (st != OPOOL_ECORRUPT && st != OPOOL_EINVAL && !(nomem_ok && st == OPOOL_ENOMEM))
            FUZZ_FAIL("load gave %s", opool_status_str(st));
        FUZZ_CHECK_MEM_BALANCED(&mem);
        return;
    }
    check_pool(p, "after load");
    check_objects(k, p);
    check_resave(k, p, inject || k == LOAD_AUTO);
    workout(k, p);
    opool_destroy(p);
    FUZZ_CHECK_MEM_BALANCED(&mem);
}

/* WORLD: opool_load_many of a world of n pools, descs ks[0..n). */
static void mode_world(const uint8_t *data, size_t size, bool inject) {
    fuzz_mem mem = {0};
    if (inject) {
        if (size == 0) return;
        mem.fail_from = 1 + data[0];
        data++;
        size--;
    }
    if (size == 0) return;
    uint32_t n = 1 + (data[0] & 3u);
    if (size < 1 + n) return;
    int ks[LOAD_WORLD_MAX];
    opool_desc d[LOAD_WORLD_MAX];
    for (uint32_t i = 0; i < n; i++) {
        ks[i] = data[1 + i] % LOAD_NDESCS;
        d[i] = load_desc(ks[i], &mem);
    }
    data += 1 + n;
    size -= 1 + n;

    opool *out[LOAD_WORLD_MAX];
    for (uint32_t i = 0; i < n; i++) out[i] = (opool *)&mem; /* must become NULL on failure */
    stream s = {data, size, 0};
    opool_status st = opool_load_many(out, d, n, stream_read, &s);
    if (st != OPOOL_OK) {
        if (st != OPOOL_ECORRUPT && st != OPOOL_EINVAL && !(inject && st == OPOOL_ENOMEM))
            FUZZ_FAIL("load_many gave %s", opool_status_str(st));
        for (uint32_t i = 0; i < n; i++) FUZZ_CHECK(out[i] == NULL);
        const opool_load_error *why = opool_last_load_error();
        FUZZ_CHECK(why->status == st);
        /* a pool of the world, or the image as a whole */
        FUZZ_CHECK(why->pool < n || why->pool == UINT32_MAX);
        FUZZ_CHECK_MEM_BALANCED(&mem);
        return;
    }
    for (uint32_t i = 0; i < n; i++) {
        check_pool(out[i], "after load_many");
        check_objects(ks[i], out[i]);
        check_resave(ks[i], out[i], inject);
    }
    /* the world saves again, loads into the same pools, saves the same */
    fuzz_buf img = {0}, again = {0};
    st = opool_save_many((const opool *const *)out, n, fuzz_buf_write, &img);
    if (st == OPOOL_OK) {
        fuzz_mem mem2 = {0};
        opool *back[LOAD_WORLD_MAX];
        opool_desc d2[LOAD_WORLD_MAX];
        for (uint32_t i = 0; i < n; i++) d2[i] = load_desc(ks[i], &mem2);
        fuzz_buf rd = img;
        rd.at = 0;
        st = opool_load_many(back, d2, n, fuzz_buf_read, &rd);
        if (st != OPOOL_OK) FUZZ_FAIL("a saved world does not load: %s", opool_status_str(st));
        for (uint32_t i = 0; i < n; i++) check_same(ks[i], out[i], back[i]);
        FUZZ_CHECK_EQ(opool_save_many((const opool *const *)back, n, fuzz_buf_write, &again),
                      OPOOL_OK);
        FUZZ_CHECK_EQ(again.size, img.size);
        if (memcmp(again.data, img.data, img.size) != 0)
            FUZZ_FAIL("save of a reloaded world differs");
        for (uint32_t i = 0; i < n; i++) opool_destroy(back[i]);
        FUZZ_CHECK_MEM_BALANCED(&mem2);
    } else {
        FUZZ_CHECK(inject && st == OPOOL_ENOMEM);
    }
    free(img.data);
    free(again.data);
    for (uint32_t i = 0; i < n; i++) {
        workout(ks[i], out[i]);
        opool_destroy(out[i]);
    }
    FUZZ_CHECK_MEM_BALANCED(&mem);
}

/* opool_save_file and opool_load_file: the same pool back; a missing file
 * is EINVAL; a file with a byte after the image is ECORRUPT. The file is
 * in the working directory, which ctest gives each test of its own: the
 * pid alone does not tell two runs apart under WebAssembly, where every
 * process has the same one (two wasm runs sharing /tmp overwrote each
 * other's image). */
static void round_trip_file(int k, const opool *p) {
    fuzz_buf now = {0}, *img = &now; /* p's image now (reads since the first ended an undo) */
    FUZZ_CHECK_EQ(save_to(p, img), OPOOL_OK);
    char path[64];
    snprintf(path, sizeof path, "opool-fuzz-load.%ld.img", (long)getpid());
    FUZZ_CHECK_EQ(opool_save_file(p, path), OPOOL_OK);
    fuzz_mem mem = {0};
    opool_desc d = load_desc(k, &mem);
    opool *q = (opool *)&mem;
    FUZZ_CHECK_EQ(opool_load_file(&q, &d, path), OPOOL_OK);
    check_pool(q, "after load_file");
    check_same(k, p, q);
    opool_destroy(q);
    FILE *f = fopen(path, "rb");
    FUZZ_CHECK(f != NULL);
    unsigned char *back = (unsigned char *)malloc(img->size + 1);
    if (!back) abort();
    FUZZ_CHECK_EQ(fread(back, 1, img->size + 1, f), img->size); /* the same bytes, no more */
    FUZZ_CHECK(memcmp(back, img->data, img->size) == 0);
    fclose(f);
    free(back);
    free(now.data);
    f = fopen(path, "ab");
    FUZZ_CHECK(f != NULL);
    fputc(0, f);
    fclose(f);
    FUZZ_CHECK_EQ(opool_load_file(&q, &d, path), OPOOL_ECORRUPT);
    FUZZ_CHECK(q == NULL);
    remove(path);
    FUZZ_CHECK_EQ(opool_load_file(&q, &d, path), OPOOL_ENOENT); /* gone */
    FUZZ_CHECK_MEM_BALANCED(&mem);
}

static void mode_round_trip(int k, const uint8_t *data, size_t size) {
    fuzz_mem mem = {0};
    opool_desc d = load_desc(k, &mem);
    opool *p = NULL;
    FUZZ_CHECK_EQ(opool_create(&p, &d), OPOOL_OK);
    /* the last 8 bytes steer the checks; the rest builds the pool */
    uint8_t tail[8] = {0};
    size_t nt = size < 8 ? size : 8;
    memcpy(tail, data + size - nt, nt);
    ops o = {data, size - nt};
    while (o.n > 0) step(k, p, NULL, &o);
    check_pool(p, "after building");

    /* a short stream: EIO, and nothing kept */
    fuzz_buf img = {0};
    FUZZ_CHECK_EQ(save_to(p, &img), OPOOL_OK);
    long blocks = mem.blocks;
    size_t limit = (size_t)(tail[0] | tail[1] << 8) % img.size;
    fuzz_buf cut = {0};
    cut.limit = limit ? limit : 1;
    FUZZ_CHECK_EQ(opool_save(p, fuzz_buf_write, &cut), OPOOL_EIO);
    FUZZ_CHECK_EQ(mem.blocks, blocks);
    free(cut.data);

    /* an invalid object makes save_object fail: ECORRUPT */
    if (k == 3 && live_count(p) > 0 && (tail[2] & 1)) {
        /* the first live object by index: a read of the live list would end
         * the undo of p's last free, which the image keeps */
        uint32_t at = 0;
        while (opool_at(p, at) == NULL) at++;
        unsigned char *obj = (unsigned char *)opool_at(p, at);
        unsigned char keep = obj[0];
        obj[0] = 0xFF;
        fuzz_buf bad = {0};
        FUZZ_CHECK_EQ(save_to(p, &bad), OPOOL_ECORRUPT);
        FUZZ_CHECK_EQ(mem.blocks, blocks);
        obj[0] = keep;
        free(bad.data);
    }

    /* the image loads into an identical pool */
    fuzz_mem mem2 = {0};
    opool *q = NULL;
    opool_status st = load_from(&q, k, &mem2, img.data, img.size);
    if (st != OPOOL_OK) FUZZ_FAIL("a saved pool does not load: %s", opool_status_str(st));
    check_pool(q, "after load");
    check_same(k, p, q);

    /* into another desc: EINVAL */
    fuzz_mem mem3 = {0};
    opool *r = NULL;
    FUZZ_CHECK_EQ(load_from(&r, (k + 1 + tail[4] % (LOAD_NDESCS - 1)) % LOAD_NDESCS, &mem3,
                            img.data, img.size),
                  OPOOL_EINVAL);
    FUZZ_CHECK_MEM_BALANCED(&mem3);

    /* truncated: ECORRUPT */
    size_t cut_at = (size_t)(tail[5] | tail[6] << 8) % img.size;
    FUZZ_CHECK_EQ(load_from(&r, k, &mem3, img.data, cut_at), OPOOL_ECORRUPT);
    FUZZ_CHECK_MEM_BALANCED(&mem3);

    /* one byte changed: ECORRUPT */
    size_t at = ((size_t)tail[1] << 8 | tail[7]) % img.size;
    unsigned char flip = (unsigned char)(tail[4] | 1);
    img.data[at] ^= flip;
    FUZZ_CHECK_EQ(load_from(&r, k, &mem3, img.data, img.size), OPOOL_ECORRUPT);
    FUZZ_CHECK_MEM_BALANCED(&mem3);
    img.data[at] ^= flip;

    /* the n-th allocation and all later ones failing, for every n: ENOMEM with
     * nothing kept, until n is past the last allocation: then the same pool */
    for (uint64_t n = 1;; n++) {
        fuzz_mem failing = {0};
        failing.fail_from = n;
        st = load_from(&r, k, &failing, img.data, img.size);
        FUZZ_CHECK(st == OPOOL_OK || st == OPOOL_ENOMEM);
        if (st == OPOOL_OK) {
            check_pool(r, "after load with allocations failing late");
            check_same(k, p, r);
            opool_destroy(r);
        }
        FUZZ_CHECK_MEM_BALANCED(&failing);
        if (st == OPOOL_OK) break;
        if (n > 100)
            FUZZ_FAIL("load still runs out of memory at allocation %llu", (unsigned long long)n);
    }

    /* save running out of memory (save_object's bytes are staged): ENOMEM, nothing kept */
    mem.fail_from = mem.calls + 1;
    fuzz_buf starved = {0};
    st = save_to(p, &starved);
    FUZZ_CHECK(st == OPOOL_OK || (st == OPOOL_ENOMEM && k == 3 && live_count(p) > 0));
    FUZZ_CHECK_EQ(mem.blocks, blocks);
    mem.fail_from = 0;
    free(starved.data);

    if (tail[2] & 2) round_trip_file(k, p);

    /* from here on the two behave identically */
    ops again = {data, size - nt};
    for (int round = 0; round < 2; round++) {
        while (again.n > 0) step(k, p, q, &again);
        again.p = data;
        again.n = size - nt;
    }
    check_pool(q, "after the same operations");
    check_same(k, p, q);

    opool_destroy(q);
    FUZZ_CHECK_MEM_BALANCED(&mem2);
    opool_destroy(p);
    FUZZ_CHECK_MEM_BALANCED(&mem);
    free(img.data);
}

/* The image's checksum (docs/FORMAT.md): 64-bit FNV-1a of every byte before
 * it, little-endian. */
static uint64_t fnv1a(const uint8_t *b, size_t n) {
    uint64_t h = 0xcbf29ce484222325u;
    for (size_t k = 0; k < n; k++) h = (h ^ b[k]) * 0x100000001b3u;
    return h;
}

/* SIDE: opool_side_load of hostile bytes with layout number l. */
static void mode_side(uint8_t l, const uint8_t *data, size_t size) {
    size_t vsize = side_layouts[l % SIDE_LAYOUTS][0], valign = side_layouts[l % SIDE_LAYOUTS][1];
    opool_side *t = (opool_side *)&data; /* must become NULL on failure */
    stream s = {data, size, 0};
    opool_status st = opool_side_load(&t, vsize, valign, stream_read, &s);
    if (st != OPOOL_OK) {
        if (st != OPOOL_ECORRUPT && st != OPOOL_EINVAL)
            FUZZ_FAIL("side_load gave %s", opool_status_str(st));
        FUZZ_CHECK(t == NULL);
        FUZZ_CHECK(opool_last_load_error()->status == st);
        return;
    }
    uint32_t n = opool_side_count(t);
    for (uint32_t k = 0; k < n; k++) {
        opool_handle h = opool_side_handle_at(t, k);
        FUZZ_CHECK(opool_handle_generation(h) & 1);
        FUZZ_CHECK(opool_side_get(t, h) == opool_side_value_at(t, k)); /* one entry an index */
    }
    fuzz_buf again = {0};
    FUZZ_CHECK_EQ(opool_side_save(t, fuzz_buf_write, &again), OPOOL_OK);
    /* the load read the image and its checksum; what follows is not its */
    FUZZ_CHECK_EQ(again.size, s.at);
    if (memcmp(again.data, data, s.at) != 0) FUZZ_FAIL("a loaded side table saves other bytes");
    free(again.data);
    opool_side_destroy(t);
}

/* WORLD WITH SIDES: opool_load_world of n pools and m tables. */
static void mode_world_sides(const uint8_t *data, size_t size) {
    fuzz_mem mem = {0};
    if (size < 1) return;
    uint32_t n = 1 + (data[0] & 3u);
    if (size < 1 + n + 1) return;
    int ks[LOAD_WORLD_MAX];
    opool_desc d[LOAD_WORLD_MAX];
    for (uint32_t i = 0; i < n; i++) {
        ks[i] = data[1 + i] % LOAD_NDESCS;
        d[i] = load_desc(ks[i], &mem);
    }
    uint32_t m = data[1 + n] & 3u;
    if (size < 2 + n + m) return;
    opool_side_layout lay[4];
    for (uint32_t i = 0; i < m; i++) {
        size_t l = data[2 + n + i] % SIDE_LAYOUTS;
        lay[i].value_size = side_layouts[l][0];
        lay[i].value_align = side_layouts[l][1];
    }
    data += 2 + n + m;
    size -= 2 + n + m;
    opool *out[LOAD_WORLD_MAX];
    opool_side *t[4];
    stream s = {data, size, 0};
    opool_status st = opool_load_world(out, d, n, t, lay, m, stream_read, &s);
    if (st != OPOOL_OK) {
        if (st != OPOOL_ECORRUPT && st != OPOOL_EINVAL)
            FUZZ_FAIL("load_world gave %s", opool_status_str(st));
        for (uint32_t i = 0; i < n; i++) FUZZ_CHECK(out[i] == NULL);
        for (uint32_t i = 0; i < m; i++) FUZZ_CHECK(t[i] == NULL);
        FUZZ_CHECK(opool_last_load_error()->status == st);
        FUZZ_CHECK_MEM_BALANCED(&mem);
        return;
    }
    for (uint32_t i = 0; i < n; i++) {
        check_pool(out[i], "after load_world");
        check_objects(ks[i], out[i]);
    }
    fuzz_buf again = {0};
    st = opool_save_world((const opool *const *)out, n, (const opool_side *const *)t, m,
                          fuzz_buf_write, &again);
    if (st == OPOOL_OK) { /* (a save_object may refuse a hostile object: not ours) */
        FUZZ_CHECK_EQ(again.size, s.at);
        if (memcmp(again.data, data, s.at) != 0) FUZZ_FAIL("a loaded world saves other bytes");
    }
    free(again.data);
    for (uint32_t i = 0; i < m; i++) opool_side_destroy(t[i]);
    for (uint32_t i = 0; i < n; i++) {
        opool_clear(out[i]);
        opool_destroy(out[i]);
    }
    FUZZ_CHECK_MEM_BALANCED(&mem);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    uint8_t b0 = data[0];
    if ((b0 & (LOAD_ROUND_TRIP | LOAD_SIDE | LOAD_WORLD)) == (LOAD_SIDE | LOAD_WORLD)) {
        mode_world_sides(data + 1, size - 1);
        return 0;
    }
    if ((b0 & (LOAD_ROUND_TRIP | LOAD_SIDE)) == LOAD_SIDE) {
        if (size < 2) return 0;
        if (!(b0 & LOAD_FIX_CHECKSUM) || size < 2 + 8) {
            mode_side(data[1], data + 2, size - 2);
            return 0;
        }
        uint8_t *img = (uint8_t *)malloc(size - 2);
        if (!img) abort();
        memcpy(img, data + 2, size - 2);
        size_t body = size - 2 - 8;
        uint64_t h = fnv1a(img, body);
        for (int i = 0; i < 8; i++) img[body + i] = (uint8_t)(h >> (8 * i));
        mode_side(data[1], img, size - 2);
        free(img);
        return 0;
    }
    int k = b0 & 7; /* LOAD_AUTO and above: a desc made to fit the image */
    if (k > LOAD_AUTO) k = LOAD_AUTO;
    bool world = (b0 & LOAD_WORLD) != 0;
    if (b0 & LOAD_ROUND_TRIP) {
        mode_round_trip(k % LOAD_NDESCS, data + 1, size - 1);
    } else if (world && !(b0 & LOAD_FIX_CHECKSUM)) {
        mode_world(data + 1, size - 1, (b0 & LOAD_INJECT) != 0);
    } else if ((b0 & LOAD_FIX_CHECKSUM) && size > 1 + 8) {
        /* the last 8 bytes become the checksum of the rest, so mutations get
         * past it to the checks of the layout behind it */
        uint8_t *img = (uint8_t *)malloc(size - 1);
        if (!img) abort();
        memcpy(img, data + 1, size - 1);
        size_t body = size - 1 - 8;
        bool inject = (b0 & LOAD_INJECT) != 0;
        /* not the allocation number, nor a world's n and desc numbers */
        size_t skip = inject;
        if (world && skip < body) skip += 1 + 1 + (img[skip] & 3u);
        if (skip > body) skip = body;
        uint64_t h = fnv1a(img + skip, body - skip);
        for (int i = 0; i < 8; i++) img[body + i] = (uint8_t)(h >> (8 * i));
        if (world)
            mode_world(img, size - 1, inject);
        else
            mode_load(k, img, size - 1, inject);
        free(img);
    } else {
        mode_load(k, data + 1, size - 1, (b0 & LOAD_INJECT) != 0);
    }
    return 0;
}
