/*
 * gen_corpus.c -- writes the seed corpora of the fuzz targets (make fuzz-corpus):
 *
 *     fuzz_gen_corpus ops DIR     programs of fuzz/ops.c (fuzz/ops_codes.h) on several pools
 *     fuzz_gen_corpus load DIR    images of real pools saved from every desc of
 *                                 fuzz/load_descs.h, in several states, each checked to
 *                                 load back as it is written; plus round-trip seeds,
 *                                 and worlds of several pools (opool_save_many)
 *
 * Seeds are named seed-*, so they sit beside the files a fuzzing campaign
 * merges in (named by their SHA-1) and regenerating them replaces only them.
 */
#if !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif

#include "fuzz.h"
#include "ops_codes.h"
#ifdef OPOOL_FUZZ_HAVE_LOAD
#include "load_descs.h"
#endif

#include "opool.h"
#include "opool_side.h"

static const char *out_dir;
static unsigned written;

static void write_seed(const char *name, const unsigned char *data, size_t size) {
    char path[4096];
    snprintf(path, sizeof path, "%s/seed-%s", out_dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(1);
    }
    written++;
}

/* ---- a byte builder ------------------------------------------------------ */

typedef struct bytes {
    unsigned char d[1 << 16];
    size_t n;
} bytes;

static void put8(bytes *b, unsigned v) {
    if (b->n < sizeof b->d) b->d[b->n++] = (unsigned char)v;
}

static void put16(bytes *b, unsigned v) {
    put8(b, v & 0xFF);
    put8(b, v >> 8 & 0xFF);
}

static void put32(bytes *b, uint32_t v) {
    put16(b, v & 0xFFFF);
    put16(b, v >> 16);
}

/* ---- ops seeds ----------------------------------------------------------- */

typedef struct ops_config {
    const char *name;
    unsigned char cfg[OPS_CONFIG_BYTES];
} ops_config;

/* policy | flags, capacity, max_capacity, size, align, salt kind, create mode */
static const ops_config configs[] = {
    {"fail-plain", {0, 15, 0, 15, 0, 8, 0}},
    {"fail-hooks",
     {0 | OPS_CFG_ZERO | OPS_CFG_POISON | OPS_CFG_RETIRE | OPS_CFG_INIT | OPS_CFG_FINI |
          OPS_CFG_ALLOCATOR,
      167, 0, 40, 4, 1, 0}},
    {"grow-one-to-many", {1, 0, 200, 7, 0, 2, 0}},
    {"grow-retire-fini", {1 | OPS_CFG_RETIRE | OPS_CFG_FINI, 4, 100, 20, 3, 3, 0}},
    {"evict-fini", {2 | OPS_CFG_FINI | OPS_CFG_ALLOCATOR, 7, 0, 31, 0, 4, 0}},
    {"grow-align-4096", {1 | OPS_CFG_ZERO, 3, 30, 0, 13, 5, 0}},
    {"fixed-create-in", {0 | OPS_CFG_INIT, 170, 0, 200, 6, 6, 7}},
    {"grow-wrap-salt", {1 | OPS_CFG_RETIRE, 1, 9, 3, 2, 4, 1}},
};

static void op(bytes *b, enum ops_code c) { put8(b, (unsigned)c); }

/* Every operation with every kind of argument. */
static void program_basics(bytes *b) {
    for (int k = 0; k < 8; k++) op(b, OPS_ALLOC), put8(b, k == 3 ? 0x80 : 0), put8(b, 0);
    op(b, OPS_FREE_LIVE), put16(b, 3);
    for (unsigned kind = 0; kind < 10; kind++) {
        op(b, OPS_FREE_BAD), put8(b, kind);
        put32(b, 0x12345679u * (kind + 1)), put16(b, kind * 3);
        put32(b, kind);
    }
    op(b, OPS_FREE_TWICE), put16(b, 1);
    for (unsigned kind = 0; kind < 8; kind++) op(b, OPS_FREE_OBJECT), put8(b, kind), put16(b, kind);
    for (unsigned kind = 0; kind < 12; kind++) {
        op(b, OPS_ALLOC_AT), put8(b, kind), put16(b, kind * 5);
        put32(b, 0xABCDEF01u + kind), put8(b, kind);
    }
    op(b, OPS_LOOKUP), put8(b, 0), put16(b, 0), put32(b, 2);
    op(b, OPS_LOOKUP), put8(b, 9), put16(b, 1), put32(b, 0xFFFFFFFFu);
    op(b, OPS_SORT);
    op(b, OPS_ITERATE), put8(b, 50), put8(b, 0), put8(b, 1), put32(b, 7);
    op(b, OPS_SHRINK);
    op(b, OPS_NULLS), put32(b, 1), put32(b, 3);
    op(b, OPS_DESC), put8(b, 0x1F), put8(b, 0x05), put8(b, 2), put16(b, 64), put8(b, 1), put8(b, 2),
        put32(b, 0);
    op(b, OPS_DESC), put8(b, 0x00), put8(b, 0x02), put8(b, 16), put8(b, 3), put8(b, 100),
        put16(b, 1000), put8(b, 5);
    op(b, OPS_CLEAR);
    for (int k = 0; k < 4; k++) op(b, OPS_ALLOC), put8(b, 0), put8(b, 0);
}

/* Fill, overflow, run out of memory, shrink, grow again. */
static void program_fill(bytes *b) {
    for (int k = 0; k < 6; k++) op(b, OPS_BURST), put8(b, 63);
    op(b, OPS_ALLOC_NOMEM), put16(b, 3);
    op(b, OPS_ALLOC_AT_NOMEM), put8(b, 5), put16(b, 999), put8(b, 0);
    op(b, OPS_BURST), put8(b, 0x80 | 40);
    op(b, OPS_SHRINK);
    op(b, OPS_BURST), put8(b, 0x80 | 63);
    op(b, OPS_BURST), put8(b, 0x80 | 63);
    op(b, OPS_SHRINK);
    op(b, OPS_ALLOC_AT), put8(b, 1), put16(b, 1500);
    op(b, OPS_ALLOC_AT_NOMEM), put8(b, 1), put16(b, 700);
    op(b, OPS_BURST), put8(b, 20);
    op(b, OPS_ITERATE), put8(b, 30), put8(b, 4), put8(b, 0), put32(b, 99);
    op(b, OPS_SORT);
    op(b, OPS_ITERATE), put8(b, 100), put8(b, 1), put8(b, 4), put32(b, 5);
    op(b, OPS_SHRINK);
}

/* Slots at their last generation: freeing them retires them. */
static void program_retire(bytes *b) {
    for (unsigned i = 0; i < 6; i++) {
        op(b, OPS_ALLOC_AT), put8(b, 2), put16(b, i * 3);
        op(b, OPS_FREE_LIVE), put16(b, 0);
    }
    op(b, OPS_BURST), put8(b, 30);
    op(b, OPS_ALLOC_AT), put8(b, 7), put16(b, 2);
    op(b, OPS_CLEAR);
    op(b, OPS_BURST), put8(b, 63);
    op(b, OPS_BURST), put8(b, 0x80 | 63);
    op(b, OPS_SHRINK);
    op(b, OPS_BURST), put8(b, 63);
    op(b, OPS_LOOKUP), put8(b, 9), put16(b, 4), put32(b, 4);
}

/* Full, then every kind of victim. */
static void program_evict(bytes *b) {
    op(b, OPS_BURST), put8(b, 63);
    for (unsigned c = 0; c < 8; c++) op(b, OPS_ALLOC), put8(b, c), put8(b, c * 13);
    op(b, OPS_FREE_LIVE), put16(b, 2);
    op(b, OPS_ALLOC), put8(b, 3), put8(b, 0);
    op(b, OPS_ALLOC), put8(b, 3), put8(b, 0);
    op(b, OPS_ITERATE), put8(b, 20), put8(b, 0), put8(b, 0), put32(b, 11);
}

static void gen_ops(void) {
    static const struct {
        const char *name;
        void (*fn)(bytes *b);
    } programs[] = {{"basics", program_basics},
                    {"fill", program_fill},
                    {"retire", program_retire},
                    {"evict", program_evict}};
    static bytes b;
    for (size_t c = 0; c < sizeof configs / sizeof configs[0]; c++) {
        for (size_t g = 0; g < sizeof programs / sizeof programs[0]; g++) {
            b.n = 0;
            for (int k = 0; k < OPS_CONFIG_BYTES - 1; k++) put8(&b, configs[c].cfg[k]);
            if (configs[c].cfg[5] >= 8) put32(&b, 0x9E3779B9u); /* a salt of its own */
            put8(&b, configs[c].cfg[OPS_CONFIG_BYTES - 1]);
            programs[g].fn(&b);
            char name[128];
            snprintf(name, sizeof name, "ops-%s-%s", configs[c].name, programs[g].name);
            write_seed(name, b.d, b.n);
        }
    }
}

/* ---- load seeds ---------------------------------------------------------- */

#ifdef OPOOL_FUZZ_HAVE_LOAD

static size_t buf_write(void *ctx, const void *data, size_t size) {
    return fuzz_buf_write(ctx, data, size);
}

/* The states seeds start from. */
enum {
    ST_EMPTY,
    ST_FEW,
    ST_HOLES,
    ST_JUST_FREED,
    ST_FULL_EPISODE,
    ST_RETIRED,
    ST_SHRUNK,
    ST_CLEARED_SORTED,
    ST_COUNT
};
static const char *const state_names[ST_COUNT] = {
    "empty", "few", "holes", "just-freed", "full-episode", "retired", "shrunk", "cleared-sorted"};

static void alloc_fill(int k, opool *p, size_t size, uint32_t n, uint8_t seed) {
    for (uint32_t j = 0; j < n; j++) {
        void *obj = opool_alloc(p, NULL);
        if (!obj) return;
        load_fill_object(k, obj, size, (uint8_t)(seed + j));
    }
}

static void build_state(int k, opool *p, int st) {
    size_t size = load_desc(k, NULL).object_size;
    uint32_t cap = opool_capacity(p);
    switch (st) {
    case ST_EMPTY:
        break;
    case ST_FEW:
        alloc_fill(k, p, size, 5, 1);
        break;
    case ST_HOLES:
        alloc_fill(k, p, size, cap + cap / 2, 2);
        for (uint32_t r = 0; r < opool_count(p); r += 3)
            (void)opool_free(p, opool_live_handle(p, r));
        alloc_fill(k, p, size, 2, 9);
        break;
    case ST_JUST_FREED:
        alloc_fill(k, p, size, 9, 3);
        (void)opool_free(p, opool_live_handle(p, 2)); /* the last change is a free */
        break;
    case ST_FULL_EPISODE: {
        opool_stats s;
        opool_get_stats(p, &s);
        alloc_fill(k, p, size, s.max_capacity + 1, 4); /* one failure (FAIL policy) */
        break;
    }
    case ST_RETIRED: {
        alloc_fill(k, p, size, 3, 5);
        uint32_t g0 = (load_desc(k, NULL).salt & ~1u);
        for (uint32_t i = 3; i < 6; i++) {
            opool_handle h = {(uint64_t)(g0 - 1) << 32 | i};
            void *obj = opool_alloc_at(p, h);
            if (obj) {
                load_fill_object(k, obj, size, 7);
                (void)opool_free(p, h); /* generation back to gen0: retired if the desc says so */
            }
        }
        break;
    }
    case ST_SHRUNK: {
        opool_stats s;
        opool_get_stats(p, &s);
        alloc_fill(k, p, size, s.max_capacity, 6);
        while (opool_count(p) > 3) (void)opool_free(p, opool_live_handle(p, opool_count(p) - 1));
        (void)opool_shrink(p);
        alloc_fill(k, p, size, 2, 8);
        break;
    }
    default:
        alloc_fill(k, p, size, 20, 9);
        opool_clear(p);
        alloc_fill(k, p, size, 12, 10);
        for (uint32_t r = 0; r < opool_count(p); r += 2)
            (void)opool_free(p, opool_live_handle(p, r));
        opool_sort(p);
        break;
    }
}

/* ---- hostile images: one broken rule each (docs/FORMAT.md, "What load
 * checks"), checksum fixed up by the target, loaded with the desc they were
 * saved from, so only the structural check stands between the image and a
 * pool. Were that check missing, opool__check or a sanitizer would catch
 * the pool built. */

#define IMG_HEADER 136u
#define IMG_SLOT(i) (IMG_HEADER + 8u * (uint32_t)(i))

static uint32_t get32(const unsigned char *b, size_t at) {
    return (uint32_t)b[at] | (uint32_t)b[at + 1] << 8 | (uint32_t)b[at + 2] << 16 |
           (uint32_t)b[at + 3] << 24;
}

static void set32(unsigned char *b, size_t at, uint32_t v) {
    for (int i = 0; i < 4; i++) b[at + (size_t)i] = (unsigned char)(v >> (8 * i));
}

static void set64(unsigned char *b, size_t at, uint64_t v) {
    for (int i = 0; i < 8; i++) b[at + (size_t)i] = (unsigned char)(v >> (8 * i));
}

static void write_hostile(int k, const char *name, const fuzz_buf *img, size_t at, uint64_t v,
                          int width) {
    static bytes b;
    if (at + (size_t)width > img->size) return;
    b.n = 0;
    put8(&b, LOAD_FIX_CHECKSUM | (unsigned)k);
    size_t start = b.n;
    for (size_t i = 0; i < img->size; i++) put8(&b, img->data[i]);
    if (width == 8)
        set64(b.d + start, at, v);
    else
        set32(b.d + start, at, (uint32_t)v);
    char full[128];
    snprintf(full, sizeof full, "hostile-%s", name);
    write_seed(full, b.d, b.n);
}

/* The first slot record with position `pos` (a marker), or UINT32_MAX. */
static uint32_t find_pos(const fuzz_buf *img, uint32_t pos) {
    uint32_t nslots = get32(img->data, 60);
    for (uint32_t i = 0; i < nslots; i++)
        if (get32(img->data, IMG_SLOT(i) + 4) == pos) return i;
    return UINT32_MAX;
}

static void gen_hostile(int k, int st, const fuzz_buf *img) {
    const unsigned char *h = img->data;
    uint32_t count = get32(h, 68), limit = get32(h, 64), nslots = get32(h, 60);
    char name[96];
#define HOSTILE(what, at, v, w)                                                                    \
    do {                                                                                           \
        snprintf(name, sizeof name, "%d-%s-%s", k, state_names[st], what);                         \
        write_hostile(k, name, img, at, v, w);                                                     \
    } while (0)
    if (k == 0 && st == ST_HOLES) {
        HOSTILE("version", 8, 2, 4);
        HOSTILE("flags", 12, 4, 4);
        HOSTILE("pool-flags", 16, 0x80, 4);
        HOSTILE("gen0-odd", 20, get32(h, 20) | 1, 4);
        HOSTILE("object-size-0", 24, 0, 8);
        HOSTILE("align-3", 32, 3, 8);
        HOSTILE("stride", 40, get32(h, 40) + 1, 8);
        HOSTILE("shift", 48, 6, 4);
        HOSTILE("first", 52, get32(h, 52) - 1, 4);
        HOSTILE("max-capacity", 56, 0xFFFFFFFFu, 4);
        HOSTILE("nslots-no-boundary", 60, nslots - 1, 4);
        HOSTILE("limit-past-nslots", 64, nslots + 1, 4);
        HOSTILE("count-past-limit", 68, limit + 1, 4);
        HOSTILE("high-water-below-count", 76, count - 1, 4);
        HOSTILE("retired-past-nslots", 80, nslots + 1, 4);
        HOSTILE("reserved", 84, 1, 4);
        HOSTILE("chunk-0-unbacked", 88, 0, 8);
        HOSTILE("chunk-without-records", 88, 3, 8);
        HOSTILE("allocs-below-count", 96, count - 1, 8);
        HOSTILE("evictions-past-frees", 120, get32(h, 96) - count + 1, 8);
        HOSTILE("live-outside-prefix", IMG_SLOT(get32(h, IMG_SLOT(0) + 4) < count ? 0 : 1) + 4,
                count, 4);
        uint32_t live[2] = {0, 0}, nlive = 0; /* two live records: the same position */
        for (uint32_t i = 0; i < nslots && nlive < 2; i++)
            if (get32(h, IMG_SLOT(i) + 4) < count) live[nlive++] = i;
        HOSTILE("duplicate-position", IMG_SLOT(live[1]) + 4, get32(h, IMG_SLOT(live[0]) + 4), 4);
        HOSTILE("position-past-limit", IMG_SLOT(2) + 4, limit, 4);
        HOSTILE("free-slot-odd", IMG_SLOT(find_pos(img, limit - 1)), 1, 4);
        HOSTILE("unbacked-in-backed-chunk", IMG_SLOT(find_pos(img, limit - 1)) + 4, 0xFFFFFFFEu, 4);
        HOSTILE("retired-count", 80, 1, 4);
    }
    if (st == ST_JUST_FREED && k < 2) {
        HOSTILE("deferred-past-count", 72, count + 2, 4);
        HOSTILE("deferred-past-limit", 72, limit + 7, 4);
    }
    if (st == ST_FULL_EPISODE && k == 0) HOSTILE("deferred-when-full", 72, 1, 4);
    if (st == ST_RETIRED && k == 1) {
        uint32_t r = find_pos(img, 0xFFFFFFFFu);
        if (r != UINT32_MAX) HOSTILE("retired-gen", IMG_SLOT(r), get32(h, IMG_SLOT(r)) + 2, 4);
    }
    if (st == ST_SHRUNK && k == 1) {
        uint32_t u = find_pos(img, 0xFFFFFFFEu);
        if (u != UINT32_MAX) {
            HOSTILE("unbacked-live", IMG_SLOT(u), get32(h, IMG_SLOT(u)) | 1, 4);
            HOSTILE("unbacked-in-roster", IMG_SLOT(u) + 4, limit - 1, 4);
        }
    }
    if (st == ST_HOLES && k == 3) { /* the first object record's length */
        size_t rec = IMG_SLOT(nslots);
        HOSTILE("record-length-huge", rec, 0xFFFFFFFFFFFFFF00u, 8);
        HOSTILE("record-length-long", rec, get32(h, rec) + 1, 8);
    }
#undef HOSTILE
}

static void gen_load(void) {
    static bytes b;
    for (int k = 0; k < LOAD_NDESCS; k++) {
        for (int st = 0; st < ST_COUNT; st++) {
            opool_desc d = load_desc(k, NULL);
            opool *p = NULL;
            if (opool_create(&p, &d) != OPOOL_OK) exit(1);
            build_state(k, p, st);
            fuzz_buf img = {0};
            if (opool_save(p, buf_write, &img) != OPOOL_OK) {
                fprintf(stderr, "save failed: desc %d state %s\n", k, state_names[st]);
                exit(1);
            }
            /* the seed must load, or it starts nowhere deep */
            fuzz_buf rd = img;
            rd.at = 0;
            opool *q = NULL;
            opool_status s = opool_load(&q, &d, fuzz_buf_read, &rd);
            if (s != OPOOL_OK) {
                fprintf(stderr, "desc %d state %s: the saved image does not load: %s\n", k,
                        state_names[st], opool_status_str(s));
                exit(1);
            }
            opool_destroy(q);
            gen_hostile(k, st, &img);
            char name[128];
            b.n = 0;
            put8(&b, (unsigned)k);
            for (size_t i = 0; i < img.size; i++) put8(&b, img.data[i]);
            snprintf(name, sizeof name, "load-%d-%s", k, state_names[st]);
            write_seed(name, b.d, b.n);
            /* the same with a desc the target makes from the header, and the checksum
             * fixed up by the target: mutations get past both */
            b.d[0] = LOAD_AUTO | LOAD_FIX_CHECKSUM;
            snprintf(name, sizeof name, "load-%d-%s-auto-fixsum", k, state_names[st]);
            write_seed(name, b.d, b.n);
            if (st == ST_HOLES) { /* with allocations failing from the 2nd and the 4th */
                for (unsigned f = 1; f <= 3; f += 2) {
                    b.d[0] = (unsigned char)(LOAD_INJECT | k);
                    b.n = 1;
                    put8(&b, f);
                    for (size_t i = 0; i < img.size; i++) put8(&b, img.data[i]);
                    snprintf(name, sizeof name, "load-%d-%s-nomem%u", k, state_names[st], f);
                    write_seed(name, b.d, b.n);
                }
            }
            free(img.data);
            opool_destroy(p);
        }
        /* round trips: operations of load.c's step(), then the 8 steering bytes */
        static const unsigned char programs[][40] = {
            {0, 1, 0, 8, 40, 2, 3, 0, 9, 5, 4, 7, 0, 4, 9, 1, 5, 6, 0, 1, 8, 20, 3, 1, 2, 0},
            {8, 63, 8, 63, 8, 63, 2, 1, 0, 9, 63, 5, 9, 63, 5, 8, 10, 6, 0, 2, 0, 0},
            {4, 3, 0, 1, 2, 0, 0, 4, 5, 0, 1, 2, 0, 0, 8, 30, 7, 0, 8, 5, 2, 1, 0},
        };
        for (size_t g = 0; g < sizeof programs / sizeof programs[0]; g++) {
            b.n = 0;
            put8(&b, LOAD_ROUND_TRIP | (unsigned)k);
            for (size_t i = 0; i < sizeof programs[g]; i++) put8(&b, programs[g][i]);
            for (unsigned t = 0; t < 8; t++) put8(&b, 0x35 * (t + 1) + (unsigned)g);
            char name[128];
            snprintf(name, sizeof name, "roundtrip-%d-%zu", k, g);
            write_seed(name, b.d, b.n);
        }
    }
}

/* World seeds: real worlds of several descs in several states, saved
 * with opool_save_many, checked to load back; the same with the checksum
 * fixed up by the target, and with allocations failing. */
static void gen_world(void) {
    static const int worlds[][LOAD_WORLD_MAX + 1] = {
        /* n, then desc and state pairs packed as desc * 16 + state */
        {1, 0 * 16 + ST_FEW},
        {2, 0 * 16 + ST_HOLES, 3 * 16 + ST_FEW},
        {3, 1 * 16 + ST_RETIRED, 2 * 16 + ST_FULL_EPISODE, 5 * 16 + ST_SHRUNK},
        {4, 4 * 16 + ST_JUST_FREED, 3 * 16 + ST_CLEARED_SORTED, 0 * 16 + ST_EMPTY,
         1 * 16 + ST_HOLES},
        {2, 5 * 16 + ST_HOLES, 5 * 16 + ST_FEW},
    };
    static bytes b;
    for (size_t w = 0; w < sizeof worlds / sizeof worlds[0]; w++) {
        uint32_t n = (uint32_t)worlds[w][0];
        opool *p[LOAD_WORLD_MAX], *q[LOAD_WORLD_MAX];
        opool_desc d[LOAD_WORLD_MAX];
        for (uint32_t i = 0; i < n; i++) {
            int k = worlds[w][1 + i] / 16;
            d[i] = load_desc(k, NULL);
            if (opool_create(&p[i], &d[i]) != OPOOL_OK) exit(1);
            build_state(k, p[i], worlds[w][1 + i] % 16);
        }
        fuzz_buf img = {0};
        if (opool_save_many((const opool *const *)p, n, buf_write, &img) != OPOOL_OK) {
            fprintf(stderr, "save_many failed: world %zu\n", w);
            exit(1);
        }
        fuzz_buf rd = img;
        rd.at = 0;
        opool_status s = opool_load_many(q, d, n, fuzz_buf_read, &rd);
        if (s != OPOOL_OK) {
            fprintf(stderr, "world %zu: the saved image does not load: %s\n", w,
                    opool_status_str(s));
            exit(1);
        }
        for (uint32_t i = 0; i < n; i++) {
            opool_destroy(q[i]);
            opool_destroy(p[i]);
        }
        static const unsigned modes[] = {LOAD_WORLD, LOAD_WORLD | LOAD_FIX_CHECKSUM,
                                         LOAD_WORLD | LOAD_INJECT};
        static const char *const mode_names[] = {"", "-fixsum", "-nomem3"};
        for (size_t m = 0; m < 3; m++) {
            b.n = 0;
            put8(&b, modes[m]);
            if (modes[m] & LOAD_INJECT) put8(&b, 3);
            put8(&b, n - 1);
            for (uint32_t i = 0; i < n; i++) put8(&b, (unsigned)(worlds[w][1 + i] / 16));
            for (size_t i = 0; i < img.size; i++) put8(&b, img.data[i]);
            char name[128];
            snprintf(name, sizeof name, "world-%zu-n%u%s", w, n, mode_names[m]);
            write_seed(name, b.d, b.n);
        }
        free(img.data);
    }
}

/* Side tables of each layout, a few entries, some removed and re-keyed. */
static void gen_side(void) {
    static bytes b;
    for (size_t l = 0; l < SIDE_LAYOUTS; l++) {
        opool_side *s = NULL;
        if (opool_side_create(&s, side_layouts[l][0], side_layouts[l][1], 0) != OPOOL_OK) exit(1);
        for (uint32_t i = 0; i < 6 + 4 * (uint32_t)l; i++) {
            opool_handle h = {((uint64_t)(2 * i + 1) << 32) | (i * 5)};
            unsigned char *v = (unsigned char *)opool_side_put(s, h);
            for (size_t k = 0; v && k < side_layouts[l][0]; k++) v[k] = (unsigned char)(i + k);
        }
        opool_handle gone = {((uint64_t)3 << 32) | 5}, again = {((uint64_t)9 << 32) | 10};
        (void)opool_side_remove(s, gone);
        (void)opool_side_put(s, again);
        fuzz_buf img = {0};
        if (opool_side_save(s, buf_write, &img) != OPOOL_OK) exit(1);
        opool_side_destroy(s);
        for (unsigned fix = 0; fix < 2; fix++) {
            b.n = 0;
            put8(&b, LOAD_SIDE | (fix ? LOAD_FIX_CHECKSUM : 0));
            put8(&b, (unsigned)l);
            for (size_t i = 0; i < img.size; i++) put8(&b, img.data[i]);
            char name[64];
            snprintf(name, sizeof name, "side-%zu%s", l, fix ? "-fixsum" : "");
            write_seed(name, b.d, b.n);
        }
        free(img.data);
    }
}

/* Worlds of pools and side tables. */
static void gen_world_sides(void) {
    static bytes b;
    for (int w = 0; w < 2; w++) {
        uint32_t n = 1 + (uint32_t)w, m = 2 - (uint32_t)w;
        opool *p[2];
        opool_desc d[2];
        for (uint32_t i = 0; i < n; i++) {
            d[i] = load_desc((int)i, NULL);
            if (opool_create(&p[i], &d[i]) != OPOOL_OK) exit(1);
            build_state((int)i, p[i], ST_HOLES);
        }
        opool_side *t[2];
        for (uint32_t k = 0; k < m; k++) {
            if (opool_side_create(&t[k], side_layouts[k][0], side_layouts[k][1], 0)) exit(1);
            for (uint32_t i = 0; i < opool_count(p[0]); i += 1 + k)
                (void)opool_side_put(t[k], opool_live_handle(p[0], i));
        }
        fuzz_buf img = {0};
        if (opool_save_world((const opool *const *)p, n, (const opool_side *const *)t, m, buf_write,
                             &img) != OPOOL_OK)
            exit(1);
        b.n = 0;
        put8(&b, LOAD_WORLD | LOAD_SIDE);
        put8(&b, n - 1);
        for (uint32_t i = 0; i < n; i++) put8(&b, i);
        put8(&b, m);
        for (uint32_t k = 0; k < m; k++) put8(&b, k);
        for (size_t i = 0; i < img.size; i++) put8(&b, img.data[i]);
        char name[64];
        snprintf(name, sizeof name, "world-sides-n%u-m%u", n, m);
        write_seed(name, b.d, b.n);
        free(img.data);
        for (uint32_t k = 0; k < m; k++) opool_side_destroy(t[k]);
        for (uint32_t i = 0; i < n; i++) {
            opool_clear(p[i]);
            opool_destroy(p[i]);
        }
    }
}

#endif /* OPOOL_FUZZ_HAVE_LOAD */

int main(int argc, char **argv) {
    if (argc != 3 || (strcmp(argv[1], "ops") != 0 && strcmp(argv[1], "load") != 0)) {
        fprintf(stderr, "usage: %s ops|load DIR\n", argv[0]);
        return 2;
    }
    out_dir = argv[2];
    if (strcmp(argv[1], "ops") == 0) {
        gen_ops();
    } else {
#ifdef OPOOL_FUZZ_HAVE_LOAD
        gen_load();
        gen_world();
        gen_side();
        gen_world_sides();
#else
        fprintf(stderr, "%s: built without opool_load: no load seeds\n", argv[0]);
        return 1;
#endif
    }
    printf("%s: %u seeds written to %s\n", argv[0], written, out_dir);
    return 0;
}
