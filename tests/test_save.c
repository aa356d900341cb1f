/*
 * test_save.c -- save and load (include/opool.h, "save and load";
 * docs/FORMAT.md), one behaviour per test:
 *   - round trips of every kind of pool restore its exact state (slot
 *     records, roster, deferred swap-delete, counters, chunks) and objects,
 *     and the loaded pool then behaves exactly like the original;
 *   - descs that do not fit and NULL arguments give OPOOL_EINVAL;
 *   - every truncation, every single-byte corruption and crafted hostile
 *     images (valid checksums, broken structure) give OPOOL_ECORRUPT with
 *     nothing leaked and no allocation beyond the input's size;
 *   - failing writers, allocators and callbacks fail cleanly;
 *   - opool_save_file survives a crash and a full disk (child processes);
 *   - a randomized round trip: random histories, then the same random
 *     operations on the original and the loaded pool, every result compared.
 *
 * Pools use salt 0x1000 unless a test says otherwise: a slot's first handle
 * has generation 0x1001.
 */
#if !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L /* fork, mkdtemp, setrlimit, opendir */
#endif

#include "opool.h"
#include "opool_internal.h" /* white-box: compare the pools' private state */
#include "support/opool_check.h"
#include "helpers.h"
#include "opool_platform.h" /* opool__file_remove: a path as the library takes it */
#include "stream.h"
#include "tempdir.h"
#include "test.h"

#include <stdalign.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(OPOOL_HAVE_VALGRIND) && OPOOL_HAVE_VALGRIND
#include <valgrind/memcheck.h>
#endif

/* WebAssembly under node has no fork (emscripten's fails with ENOSYS) */
#if (defined(__unix__) || defined(__APPLE__)) && !defined(__EMSCRIPTEN__)
#define TEST_POSIX 1 /* fork, setrlimit: a crash and a full disk in a child */
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

#define SALT 0x1000u
#define G1 0x1001u

/* ---- helpers: handles, descs, pools -------------------------------------- */

/* Everything the callbacks saw and what they should do. */
typedef struct hooks {
    int inits, finis, reports, loads, saves;
    int write_after_free; /* reports of OPOOL_EWRITE_AFTER_FREE */
    opool_status last_report;
    int load_fail_at;             /* the load_object call (0-based) that returns false; -1: none */
    int save_fail_at;             /* the save_object call that returns false; -1: none */
    int exit_at;                  /* the save_object call that _exit()s (crash test); -1: none */
    uint32_t victim;              /* evict: live position count * victim / 8 */
    const opool_allocator *alloc; /* rich_pool: the pool's allocator (NULL: the default) */
} hooks;

static void hooks_reset(hooks *k) {
    memset(k, 0, sizeof *k);
    k->load_fail_at = k->save_fail_at = k->exit_at = -1;
    k->victim = 3;
}

static void hk_init(void *obj, void *user) {
    (void)obj;
    ((hooks *)user)->inits++;
}

static void hk_fini(void *obj, void *user) {
    (void)obj;
    ((hooks *)user)->finis++;
}

static void hk_report(opool *p, opool_status what, opool_handle h, void *user) {
    (void)p, (void)h;
    hooks *k = (hooks *)user;
    k->reports++;
    k->last_report = what;
    if (what == OPOOL_EWRITE_AFTER_FREE) k->write_after_free++;
}

static opool_handle hk_evict(opool *p, void *user) {
    hooks *k = (hooks *)user;
    return opool_live_handle(p, (uint32_t)((uint64_t)opool_count(p) * k->victim / 8));
}

/* Objects saved as a tag byte and their bytes reversed, so that reading
 * such an image as plain bytes could never give the same objects. */
static bool hk_save(const void *obj, opool_write_fn write, void *wctx, void *user) {
    hooks *k = (hooks *)user;
    int call = k->saves++;
    if (call == k->exit_at) _Exit(42); /* a crash in the middle of a save */
    if (call == k->save_fail_at) return false;
    /* the object size is not passed: these tests keep it in the first byte's place */
    const unsigned char *b = (const unsigned char *)obj;
    unsigned char tag = 0xA5, rev[64];
    size_t n = 24;
    for (size_t i = 0; i < n; i++) rev[i] = b[n - 1 - i];
    return write(wctx, &tag, 1) == 1 && write(wctx, rev, n) == n;
}

static bool hk_load(void *obj, const void *data, size_t size, void *user) {
    hooks *k = (hooks *)user;
    int call = k->loads++;
    if (call == k->load_fail_at) return false;
    const unsigned char *b = (const unsigned char *)data;
    if (size != 25 || b[0] != 0xA5) return false;
    unsigned char *o = (unsigned char *)obj;
    for (size_t i = 0; i < 24; i++) o[i] = b[24 - i];
    return true;
}

/* A fixed pool of 24-byte objects with SALT. */
static opool_desc desc_of(uint32_t capacity) {
    opool_desc d;
    memset(&d, 0, sizeof d);
    d.object_size = 24;
    d.capacity = capacity;
    d.salt = SALT;
    d.flags = OPOOL_SHARE_SALT; /* twins, driven alike */
    d.report = quiet_report;
    return d;
}

static opool_desc grow_desc(uint32_t capacity, uint32_t max_capacity) {
    opool_desc d = desc_of(capacity);
    d.on_full = OPOOL_FULL_GROW;
    d.max_capacity = max_capacity;
    return d;
}

static opool_desc with_callbacks(opool_desc d, hooks *k) {
    d.save_object = hk_save;
    d.load_object = hk_load;
    d.user = k;
    return d;
}

static opool *create(const opool_desc *d) {
    opool *p = NULL;
    return opool_create(&p, d) == OPOOL_OK ? p : NULL;
}

/* Fill an object with bytes that name it. */
static void stamp(void *obj, size_t size, uint64_t seed) {
    unsigned char *b = (unsigned char *)obj;
    for (size_t i = 0; i < size; i++) b[i] = (unsigned char)(seed * 131 + i * 7 + (seed >> 8));
}

static opool_handle alloc_stamped(opool *p, size_t size, uint64_t seed) {
    opool_handle h = OPOOL_NULL;
    void *obj = opool_alloc(p, &h);
    if (obj) stamp(obj, size, seed);
    return h;
}

/* ---- helpers: an allocator that counts and fails on demand --------------- */

typedef struct counting {
    size_t calls, blocks, bytes, peak, size_mismatches;
    long fail_from; /* allocation calls numbered >= this fail; -1: never */
} counting;

typedef struct counting_header {
    void *raw;
    size_t size;
} counting_header;

static void *counting_alloc(void *ctx, size_t size, size_t align) {
    counting *c = (counting *)ctx;
    long n = (long)c->calls++;
    if (c->fail_from >= 0 && n >= c->fail_from) return NULL;
    if (align < alignof(counting_header)) align = alignof(counting_header);
    unsigned char *raw = (unsigned char *)malloc(size + align + sizeof(counting_header));
    if (raw == NULL) return NULL;
    uintptr_t at = ((uintptr_t)raw + sizeof(counting_header) + align - 1) & ~(uintptr_t)(align - 1);
    counting_header h = {raw, size};
    memcpy((unsigned char *)at - sizeof h, &h, sizeof h);
    c->blocks++;
    c->bytes += size;
    if (c->bytes > c->peak) c->peak = c->bytes;
    return (void *)at;
}

static void counting_free(void *ctx, void *ptr, size_t size) {
    counting *c = (counting *)ctx;
    if (ptr == NULL) return;
    counting_header h;
    memcpy(&h, (unsigned char *)ptr - sizeof h, sizeof h);
    if (h.size != size) c->size_mismatches++;
    c->blocks--;
    c->bytes -= h.size;
    free(h.raw);
}

static opool_allocator counting_allocator(counting *c) {
    memset(c, 0, sizeof *c);
    c->fail_from = -1;
    opool_allocator a = {.alloc = counting_alloc, .free = counting_free, .ctx = c};
    return a;
}

/* p's image; empty on failure (checked). */
static stream saved(const opool *p) {
    stream s = stream_new();
    opool_status st = opool_save(p, stream_write, &s);
    CHECK_EQ_U64(st, OPOOL_OK);
    return s;
}

static opool_status load_bytes(opool **out, const opool_desc *d, const unsigned char *data,
                               size_t size) {
    stream s = stream_of(data, size);
    return opool_load(out, d, stream_read, &s);
}

/* Save p and load it back with d; NULL (checked) on failure. */
static opool *round_trip(const opool *p, const opool_desc *d) {
    stream s = saved(p);
    opool *q = (opool *)(uintptr_t)1; /* load must set it */
    opool_status st = load_bytes(&q, d, s.data, s.size);
    CHECK_EQ_U64(st, OPOOL_OK);
    stream_free(&s);
    return st == OPOOL_OK ? q : NULL;
}

/* ---- helpers: equality of two pools --------------------------------------- */

/* The invariant checker of tests/support/opool_check.c agrees the pool is sound. */
static void check_sound(const opool *p, int line) {
    char why[256] = "";
    if (!opool__check(p, why, sizeof why)) {
        CHECK(!"opool__check");
        fprintf(stderr, "  line %d: %s\n", line, why);
    }
}

/* Every field of the private state, every slot record, the roster, the
 * chunks, every live object's bytes and the public statistics. */
static void check_same_state(const opool *a, const opool *b, int line) {
    int before = test__checks_failed;
    const opool__hot *x = &a->hot, *y = &b->hot;
    /* a pool that never grows makes its slots as they are needed; a loaded
     * one has them all: the u that a has not made are b's last, at their
     * first generation, in ascending order on the free stack's bottom */
    uint32_t u = opool__unmade(a);
    CHECK_EQ_U64(opool__unmade(b), 0);
    CHECK_EQ_U64(x->count, y->count);
    CHECK_EQ_U64(x->limit + u, y->limit);
    CHECK_EQ_U64(x->nslots + u, y->nslots);
    CHECK_EQ_U64(x->first + u, y->first);
    CHECK_EQ_U64(x->shift, y->shift);
    CHECK_EQ_U64(x->stride, y->stride);
    CHECK_EQ_U64(x->high_water, y->high_water);
    CHECK_EQ_U64(x->allocs, y->allocs);
    if (u == 0) { /* (bounds from limit and nslots: opool__check checks b's) */
        CHECK_EQ_U64(x->fast_limit, y->fast_limit);
        CHECK_EQ_U64(x->free_limit, y->free_limit);
    }
    CHECK_EQ_U64(a->gen0, b->gen0);
    CHECK_EQ_U64(a->max_capacity, b->max_capacity);
    CHECK_EQ_U64(a->nchunks, b->nchunks);
    CHECK_EQ_U64(a->retired, b->retired);
    CHECK_EQ_U64(a->failed_allocs, b->failed_allocs);
    CHECK_EQ_U64(a->rejected, b->rejected);
    CHECK_EQ_U64(a->evictions, b->evictions);
    CHECK_EQ_U64(a->grows, b->grows);
    CHECK_EQ_U64(atomic_load(&a->episode.failures) != 0, atomic_load(&b->episode.failures) != 0);
    CHECK_EQ_U64(a->slot_cap, b->slot_cap);
    if (test__checks_failed == before) {
        for (uint32_t i = 0; i < y->nslots; i++) {
            uint32_t gen, pos;
            opool__check_loaded_record(a, i, &gen, &pos);
            CHECK_EQ_U64(gen, y->slot[i].gen);
            CHECK_EQ_U64(pos, y->slot[i].pos);
        }
        CHECK_EQ_U64(x->roster == NULL, y->roster == NULL);
        if (x->roster && y->roster)
            for (uint32_t k = 0; k < y->limit; k++)
                CHECK_EQ_U64(opool__check_loaded_entry(a, k), y->roster[k]);
        /* no live list: the free chain's start; with one: the undo of the
         * last free (which a read of the live list would end: so the
         * objects are compared by index) */
        CHECK_EQ_U64(opool__check_loaded_chain(a), y->chain);
        for (uint32_t c = 0; c < a->nchunks; c++)
            CHECK_EQ_U64(opool__chunk_backed(a, c), opool__chunk_backed(b, c));
        for (uint32_t i = 0; i < x->nslots; i++)
            if (opool_at(a, i))
                CHECK(memcmp(opool_at(a, i), opool_at(b, i), a->desc.object_size) == 0);
    }
    opool_stats s, t;
    opool_get_stats(a, &s);
    opool_get_stats(b, &t);
    /* the run's statistics start again in a loaded pool (docs/FORMAT.md) */
    s.episodes = t.episodes = 0;
    s.peak_demand = t.peak_demand = 0;
    CHECK(memcmp(&s, &t, sizeof s) == 0);
    check_sound(b, line);
    if (test__checks_failed != before) fprintf(stderr, "  (pools compared at line %d)\n", line);
}
#define CHECK_SAME_STATE(a, b) check_same_state(a, b, __LINE__)

/* Both pools hand out the same handles until both are full. */
static void check_same_next_handles(opool *a, opool *b, size_t size, int line) {
    int before = test__checks_failed;
    for (uint32_t k = 0;; k++) {
        opool_handle x = alloc_stamped(a, size, k), y = alloc_stamped(b, size, k);
        CHECK_EQ_U64(x.bits, y.bits);
        if (opool_handle_is_null(x) || opool_handle_is_null(y) || k > 100000) break;
    }
    if (test__checks_failed != before) fprintf(stderr, "  (next handles at line %d)\n", line);
}
#define CHECK_SAME_NEXT_HANDLES(a, b, size) check_same_next_handles(a, b, size, __LINE__)

/* ---- helpers: images as docs/FORMAT.md lays them out ---------------------- */

/* An independent reading of the format: the tests' own coder, used to craft
 * hostile images with valid checksums and to check the documented layout. */
#define IMG_HEADER 136
#define IMG_MAX_SLOTS 256

typedef struct img {
    uint32_t version, flags, pool_flags, gen0;
    uint64_t object_size, object_align, stride;
    uint32_t shift, first, max_capacity, nslots, limit, count, deferred, high_water, retired,
        reserved;
    uint64_t chunks, allocs, failed, rejected, evictions, grows;
    uint32_t gen[IMG_MAX_SLOTS], pos[IMG_MAX_SLOTS];
    unsigned char objects[4096]; /* the object section as saved */
    size_t objects_size;
} img;

static uint64_t fnv1a(const unsigned char *b, size_t n) {
    uint64_t h = 0xcbf29ce484222325u;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 0x100000001b3u;
    }
    return h;
}

static uint64_t get_le(const unsigned char *b, int bytes) {
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--) v = v << 8 | b[i];
    return v;
}

static void put_le(unsigned char *b, uint64_t v, int bytes) {
    for (int i = 0; i < bytes; i++) b[i] = (unsigned char)(v >> (8 * i));
}

/* Parse a saved image (checked: it must be one). */
static bool img_parse(img *m, const unsigned char *b, size_t size) {
    memset(m, 0, sizeof *m);
    if (size < IMG_HEADER + 8 || memcmp(b, "OPOOLSAV", 8) != 0) return false;
    m->version = (uint32_t)get_le(b + 8, 4);
    m->flags = (uint32_t)get_le(b + 12, 4);
    m->pool_flags = (uint32_t)get_le(b + 16, 4);
    m->gen0 = (uint32_t)get_le(b + 20, 4);
    m->object_size = get_le(b + 24, 8);
    m->object_align = get_le(b + 32, 8);
    m->stride = get_le(b + 40, 8);
    m->shift = (uint32_t)get_le(b + 48, 4);
    m->first = (uint32_t)get_le(b + 52, 4);
    m->max_capacity = (uint32_t)get_le(b + 56, 4);
    m->nslots = (uint32_t)get_le(b + 60, 4);
    m->limit = (uint32_t)get_le(b + 64, 4);
    m->count = (uint32_t)get_le(b + 68, 4);
    m->deferred = (uint32_t)get_le(b + 72, 4);
    m->high_water = (uint32_t)get_le(b + 76, 4);
    m->retired = (uint32_t)get_le(b + 80, 4);
    m->reserved = (uint32_t)get_le(b + 84, 4);
    m->chunks = get_le(b + 88, 8);
    m->allocs = get_le(b + 96, 8);
    m->failed = get_le(b + 104, 8);
    m->rejected = get_le(b + 112, 8);
    m->evictions = get_le(b + 120, 8);
    m->grows = get_le(b + 128, 8);
    if (m->nslots > IMG_MAX_SLOTS || size < IMG_HEADER + 8 * (size_t)m->nslots + 8) return false;
    for (uint32_t i = 0; i < m->nslots; i++) {
        m->gen[i] = (uint32_t)get_le(b + IMG_HEADER + 8 * i, 4);
        m->pos[i] = (uint32_t)get_le(b + IMG_HEADER + 8 * i + 4, 4);
    }
    size_t at = IMG_HEADER + 8 * (size_t)m->nslots;
    m->objects_size = size - 8 - at;
    if (m->objects_size > sizeof m->objects) return false;
    memcpy(m->objects, b + at, m->objects_size);
    return get_le(b + size - 8, 8) == fnv1a(b, size - 8);
}

/* Encode m with a correct checksum; returns the size (buf: 8 KB). */
static size_t img_build(const img *m, unsigned char *b) {
    memcpy(b, "OPOOLSAV", 8);
    put_le(b + 8, m->version, 4);
    put_le(b + 12, m->flags, 4);
    put_le(b + 16, m->pool_flags, 4);
    put_le(b + 20, m->gen0, 4);
    put_le(b + 24, m->object_size, 8);
    put_le(b + 32, m->object_align, 8);
    put_le(b + 40, m->stride, 8);
    put_le(b + 48, m->shift, 4);
    put_le(b + 52, m->first, 4);
    put_le(b + 56, m->max_capacity, 4);
    put_le(b + 60, m->nslots, 4);
    put_le(b + 64, m->limit, 4);
    put_le(b + 68, m->count, 4);
    put_le(b + 72, m->deferred, 4);
    put_le(b + 76, m->high_water, 4);
    put_le(b + 80, m->retired, 4);
    put_le(b + 84, m->reserved, 4);
    put_le(b + 88, m->chunks, 8);
    put_le(b + 96, m->allocs, 8);
    put_le(b + 104, m->failed, 8);
    put_le(b + 112, m->rejected, 8);
    put_le(b + 120, m->evictions, 8);
    put_le(b + 128, m->grows, 8);
    uint32_t n = m->nslots < IMG_MAX_SLOTS ? m->nslots : IMG_MAX_SLOTS;
    for (uint32_t i = 0; i < n; i++) {
        put_le(b + IMG_HEADER + 8 * i, m->gen[i], 4);
        put_le(b + IMG_HEADER + 8 * i + 4, m->pos[i], 4);
    }
    size_t at = IMG_HEADER + 8 * (size_t)n;
    memcpy(b + at, m->objects, m->objects_size);
    at += m->objects_size;
    put_le(b + at, fnv1a(b, at), 8);
    return at + 8;
}

/* ---- round trips ---------------------------------------------------------- */

TEST(fixed_pool_round_trip_restores_slots_roster_and_objects) {
    opool_desc d = desc_of(16);
    opool *p = create(&d);
    REQUIRE(p);
    opool_handle h[12];
    for (int k = 0; k < 12; k++) h[k] = alloc_stamped(p, 24, (uint64_t)k);
    CHECK_EQ_U64(opool_free(p, h[3]), OPOOL_OK);
    CHECK_EQ_U64(opool_free(p, h[7]), OPOOL_OK);
    CHECK_EQ_U64(opool_free(p, h[0]), OPOOL_OK);
    opool_handle again = alloc_stamped(p, 24, 99);
    opool *q = round_trip(p, &d);
    REQUIRE(q);
    CHECK_SAME_STATE(p, q);
    for (int k = 0; k < 12; k++) {
        CHECK_EQ_U64(opool_valid(q, h[k]), opool_valid(p, h[k]));
        if (opool_valid(p, h[k])) CHECK(memcmp(opool_get(p, h[k]), opool_get(q, h[k]), 24) == 0);
    }
    CHECK(opool_valid(q, again));
    CHECK_SAME_NEXT_HANDLES(p, q, 24);
    opool_destroy(p);
    opool_destroy(q);
}

TEST(empty_pools_round_trip) {
    opool_desc d = desc_of(5);
    opool *p = create(&d);
    REQUIRE(p);
    opool *q = round_trip(p, &d); /* fresh */
    REQUIRE(q);
    CHECK_SAME_STATE(p, q);
    opool_destroy(q);
    opool_handle h[5];
    for (int k = 0; k < 5; k++) h[k] = alloc_stamped(p, 24, (uint64_t)k);
    for (int k = 0; k < 5; k++) CHECK_EQ_U64(opool_free(p, h[(k * 3) % 5]), OPOOL_OK);
    q = round_trip(p, &d); /* emptied in a scrambled order */
    REQUIRE(q);
    CHECK_SAME_STATE(p, q);
    CHECK_SAME_NEXT_HANDLES(p, q, 24);
    opool_destroy(p);
    opool_destroy(q);
}

TEST(full_pool_round_trip_keeps_the_exhaustion_episode) {
    hooks k;
    hooks_reset(&k);
    opool_desc d = desc_of(4);
    d.report = hk_report;
    d.user = &k;
    opool *p = create(&d);
    REQUIRE(p);
    for (int i = 0; i < 4; i++) alloc_stamped(p, 24, (uint64_t)i);
    CHECK(opool_alloc(p, NULL) == NULL);
    CHECK_EQ_U64(k.reports, 1);
    opool *q = round_trip(p, &d);
    REQUIRE(q);
    CHECK_SAME_STATE(p, q);
    /* the episode is still open, resumed as after its first failure: this is
     * its 2nd (reported), then its 3rd (not) */
    CHECK(opool_alloc(q, NULL) == NULL);
    CHECK_EQ_U64(k.reports, 2);
    CHECK(opool_alloc(q, NULL) == NULL);
    CHECK_EQ_U64(k.reports, 2);
    /* 3 of 4 live is a recovery (at most 4 - 1 live) */
    CHECK_EQ_U64(opool_free(q, opool_live_handle(q, 0)), OPOOL_OK);
    CHECK(opool_alloc(q, NULL) != NULL);
    CHECK(opool_alloc(q, NULL) == NULL); /* a new episode */
    CHECK_EQ_U64(k.reports, 3);
    opool_destroy(p);
    opool_destroy(q);
}

TEST(grown_pool_round_trip_restores_every_chunk) {
    opool_desc d = grow_desc(3, 40);
    opool *p = create(&d);
    REQUIRE(p);
    opool_handle h[30];
    for (int k = 0; k < 30; k++) h[k] = alloc_stamped(p, 24, (uint64_t)k);
    for (int k = 1; k < 30; k += 4) CHECK_EQ_U64(opool_free(p, h[k]), OPOOL_OK);
    opool *q = round_trip(p, &d);
    REQUIRE(q);
    CHECK_SAME_STATE(p, q);
    CHECK_SAME_NEXT_HANDLES(p, q, 24); /* through the growth of the last chunk */
    CHECK_SAME_STATE(p, q);
    opool_destroy(p);
    opool_destroy(q);
}

TEST(shrunk_pool_round_trip_keeps_released_chunks_released) {
    counting c;
    opool_desc d = grow_desc(2, 64);
    d.allocator = counting_allocator(&c);
    opool *p = create(&d);
    REQUIRE(p);
    opool_handle h[40];
    for (int k = 0; k < 40; k++) h[k] = alloc_stamped(p, 24, (uint64_t)k);
    /* chunk 3 is [8, 16): empty it; chunk 5 [32, 64) keeps 32..39 */
    for (int k = 8; k < 16; k++) CHECK_EQ_U64(opool_free(p, h[k]), OPOOL_OK);
    CHECK_EQ_U64(opool_shrink(p), 8);
    opool *q = round_trip(p, &d);
    REQUIRE(q);
    CHECK_SAME_STATE(p, q);
    CHECK(!opool__chunk_backed(q, 3));
    CHECK(opool__chunk_backed(q, 5));
    /* and with the top chunk released too: records beyond the last backed chunk */
    for (int k = 32; k < 40; k++) CHECK_EQ_U64(opool_free(p, h[k]), OPOOL_OK);
    CHECK_EQ_U64(opool_shrink(p), 32);
    opool_destroy(q);
    q = round_trip(p, &d);
    REQUIRE(q);
    CHECK_SAME_STATE(p, q);
    for (int k = 0; k < 40; k++) CHECK_EQ_U64(opool_valid(q, h[k]), opool_valid(p, h[k]));
    CHECK_SAME_NEXT_HANDLES(p, q, 24); /* regrowing gives the same slots and generations */
    CHECK_SAME_STATE(p, q);
    opool_destroy(p);
    opool_destroy(q);
    CHECK_EQ_U64(c.bytes, 0);
    CHECK_EQ_U64(c.size_mismatches, 0);
}

TEST(retired_slots_stay_retired_after_load) {
    opool_desc d = desc_of(4);
    d.flags = OPOOL_RETIRE_ON_WRAP;
    opool *p = create(&d);
    REQUIRE(p);
    alloc_stamped(p, 24, 1);
    opool_handle last = handle(SALT - 1, 2); /* the generation before gen0 */
    CHECK(opool_alloc_at(p, last) != NULL);
    CHECK_EQ_U64(opool_free(p, last), OPOOL_OK);
    opool_stats s;
    opool_get_stats(p, &s);
    REQUIRE(s.retired == 1);
    opool *q = round_trip(p, &d);
    REQUIRE(q);
    CHECK_SAME_STATE(p, q);
    CHECK(opool_alloc_at(q, handle(G1, 2)) == NULL);
    CHECK(opool_alloc_at(q, handle(SALT - 1, 2)) == NULL);
    CHECK_SAME_NEXT_HANDLES(p, q, 24);
    opool_destroy(p);
    opool_destroy(q);
}

TEST(evicting_pool_round_trip_evicts_the_same_victims) {
    hooks k;
    hooks_reset(&k);
    opool_desc d = desc_of(6);
    d.on_full = OPOOL_FULL_EVICT;
    d.evict = hk_evict;
    d.user = &k;
    opool *p = create(&d);
    REQUIRE(p);
    for (int i = 0; i < 9; i++) alloc_stamped(p, 24, (uint64_t)i); /* 3 evictions */
    opool *q = round_trip(p, &d);
    REQUIRE(q);
    CHECK_SAME_STATE(p, q);
    for (int i = 0; i < 20; i++) {
        opool_handle x = alloc_stamped(p, 24, (uint64_t)i), y = alloc_stamped(q, 24, (uint64_t)i);
        CHECK_EQ_U64(x.bits, y.bits);
    }
    CHECK_SAME_STATE(p, q);
    opool_destroy(p);
    opool_destroy(q);
}

TEST(poisoned_pool_round_trip_keeps_free_slots_poisoned) {
    hooks k;
    hooks_reset(&k);
    opool_desc d = grow_desc(4, 16);
    d.flags = OPOOL_POISON;
    d.report = hk_report;
    d.user = &k;
    opool *p = create(&d);
    REQUIRE(p);
    opool_handle h[12];
    for (int i = 0; i < 12; i++) h[i] = alloc_stamped(p, 24, (uint64_t)i);
    for (int i = 0; i < 12; i += 3) CHECK_EQ_U64(opool_free(p, h[i]), OPOOL_OK);
    opool *q = round_trip(p, &d);
    REQUIRE(q);
    CHECK_SAME_STATE(p, q);
#ifdef TEST_ASAN
    CHECK(__asan_address_is_poisoned(opool__object(&q->hot, 0)));  /* freed */
    CHECK(__asan_address_is_poisoned(opool__object(&q->hot, 13))); /* never used */
    CHECK(!__asan_address_is_poisoned(opool_get(q, h[1])));
#else
    unsigned char *freed = (unsigned char *)opool__object(&q->hot, 3);
#if defined(OPOOL_HAVE_VALGRIND) && OPOOL_HAVE_VALGRIND
    unsigned char vbits[4];
    if (RUNNING_ON_VALGRIND) CHECK_EQ_U64(VALGRIND_GET_VBITS(freed, vbits, 4), 3); /* no access */
#endif
    opool__mem_defined(freed, 4); /* look through the checker: the poison pattern is there */
    CHECK_EQ_U64(get_le(freed, 4), 0x1deadb0bu);
    opool__mem_noaccess(freed, 4);
#endif
    CHECK_SAME_NEXT_HANDLES(p, q, 24); /* every free slot's poison is intact */
    CHECK_EQ_U64(k.write_after_free, 0);
    CHECK_EQ_U64(k.reports, 2); /* each pool's exhaustion at the end */
    opool_destroy(p);
    opool_destroy(q);
}

TEST(loaded_objects_are_open_to_asan_exactly_as_the_originals) {
#ifdef TEST_ASAN
    for (uint32_t flags = 0; flags <= OPOOL_POISON; flags += OPOOL_POISON) {
        opool_desc d = grow_desc(4, 16);
        d.object_size = 20; /* stride 32: 12 bytes of padding */
        d.flags = flags;
        opool *p = create(&d);
        REQUIRE(p);
        opool_handle h[10];
        for (int i = 0; i < 10; i++) h[i] = alloc_stamped(p, 20, (uint64_t)i);
        CHECK_EQ_U64(opool_free(p, h[4]), OPOOL_OK);
        opool *q = round_trip(p, &d);
        REQUIRE(q);
        for (uint32_t i = 0; i < 16; i++) {
            const char *x = (const char *)opool__object(&p->hot, i);
            const char *y = (const char *)opool__object(&q->hot, i);
            for (size_t b = 0; b < 32; b++)
                CHECK_EQ_U64(__asan_address_is_poisoned(x + b), __asan_address_is_poisoned(y + b));
        }
        CHECK(!__asan_address_is_poisoned(opool_get(q, h[0])));
        CHECK(__asan_address_is_poisoned(opool__object(&q->hot, 4)));
        opool_destroy(p);
        opool_destroy(q);
    }
#endif
}

TEST(pool_saved_right_after_a_free_behaves_as_the_original) {
    opool_desc d = desc_of(8);
    opool *p = create(&d);
    REQUIRE(p);
    opool_handle h[6];
    for (int k = 0; k < 6; k++) h[k] = alloc_stamped(p, 24, (uint64_t)k);
    CHECK_EQ_U64(opool_free(p, h[1]), OPOOL_OK); /* h[5] moves to live position 1 */
    opool *q = round_trip(p, &d);
    REQUIRE(q);
    CHECK_SAME_STATE(p, q);
    /* the next alloc takes the freed slot back, and its place (the free's
     * move undone: h[5] returns to the end), in both */
    opool_handle x = alloc_stamped(p, 24, 7), y = alloc_stamped(q, 24, 7);
    CHECK_EQ_U64(x.bits, y.bits);
    CHECK_EQ_U64(x.bits, handle(G1 + 2, 1).bits);
    CHECK_EQ_U64(opool_live_handle(q, 1).bits, x.bits);
    CHECK_EQ_U64(opool_live_handle(q, 5).bits, h[5].bits);
    CHECK_SAME_STATE(p, q);
    opool_destroy(p);
    opool_destroy(q);
}

TEST(pool_saved_right_after_a_free_then_freed_again_matches) {
    opool_desc d = desc_of(8);
    opool *p = create(&d);
    REQUIRE(p);
    opool_handle h[6];
    for (int k = 0; k < 6; k++) h[k] = alloc_stamped(p, 24, (uint64_t)k);
    CHECK_EQ_U64(opool_free(p, h[2]), OPOOL_OK);
    opool *q = round_trip(p, &d);
    REQUIRE(q);
    /* a second free moves the same entries in both */
    CHECK_EQ_U64(opool_free(p, h[0]), OPOOL_OK);
    CHECK_EQ_U64(opool_free(q, h[0]), OPOOL_OK);
    CHECK_SAME_STATE(p, q);
    CHECK_SAME_NEXT_HANDLES(p, q, 24);
    opool_destroy(p);
    opool_destroy(q);
}

TEST(pool_saved_right_after_freeing_its_last_live_entry_matches) {
    opool_desc d = desc_of(8);
    opool *p = create(&d);
    REQUIRE(p);
    opool_handle h[5];
    for (int k = 0; k < 5; k++) h[k] = alloc_stamped(p, 24, (uint64_t)k);
    CHECK_EQ_U64(opool_free(p, h[4]), OPOOL_OK); /* nothing moves */
    opool *q = round_trip(p, &d);
    REQUIRE(q);
    CHECK_SAME_STATE(p, q);
    CHECK_SAME_NEXT_HANDLES(p, q, 24);
    opool_destroy(p);
    opool_destroy(q);
}

TEST(save_does_not_change_the_pool) {
    opool_desc d = grow_desc(4, 32);
    opool *p = create(&d);
    REQUIRE(p);
    opool_handle h[10];
    for (int k = 0; k < 10; k++) h[k] = alloc_stamped(p, 24, (uint64_t)k);
    CHECK_EQ_U64(opool_free(p, h[3]), OPOOL_OK);
    opool__slot before[16];
    uint32_t roster[16];
    memcpy(before, p->hot.slot, sizeof before);
    memcpy(roster, p->hot.roster, sizeof roster);
    stream s = saved(p);
    CHECK(memcmp(before, p->hot.slot, sizeof before) == 0);
    CHECK(memcmp(roster, p->hot.roster, sizeof roster) == 0);
    stream t = saved(p); /* and saving twice gives the same bytes */
    CHECK_EQ_U64(s.size, t.size);
    CHECK(s.size == t.size && memcmp(s.data, t.data, s.size) == 0);
    stream_free(&s);
    stream_free(&t);
    opool_destroy(p);
}

TEST(stats_are_restored) {
    opool_desc d = grow_desc(2, 16);
    opool *p = create(&d);
    REQUIRE(p);
    opool_handle h[16];
    for (int k = 0; k < 16; k++) h[k] = alloc_stamped(p, 24, (uint64_t)k);
    CHECK(opool_alloc(p, NULL) == NULL); /* failed_allocs */
    CHECK_EQ_U64(opool_free(p, h[15]), OPOOL_OK);
    CHECK_EQ_U64(opool_free(p, h[15]), OPOOL_ESTALE); /* rejected */
    CHECK_EQ_U64(opool_free(p, handle(2, 1)), OPOOL_EINVAL);
    for (int k = 8; k < 15; k++) CHECK_EQ_U64(opool_free(p, h[k]), OPOOL_OK);
    CHECK_EQ_U64(opool_shrink(p), 8);
    opool *q = round_trip(p, &d);
    REQUIRE(q);
    opool_stats s, t;
    opool_get_stats(p, &s);
    opool_get_stats(q, &t);
    CHECK_EQ_U64(t.version, OPOOL_STATS_VERSION);
    CHECK_EQ_U64(t.capacity, s.capacity);
    CHECK_EQ_U64(t.max_capacity, s.max_capacity);
    CHECK_EQ_U64(t.count, 8);
    CHECK_EQ_U64(t.high_water, 16);
    CHECK_EQ_U64(t.retired, s.retired);
    CHECK_EQ_U64(t.allocs, 16);
    CHECK_EQ_U64(t.frees, 8);
    CHECK_EQ_U64(t.failed_allocs, 1);
    CHECK_EQ_U64(t.rejected_handles, 2);
    CHECK_EQ_U64(t.evictions, 0);
    CHECK_EQ_U64(t.grows, s.grows);
    CHECK_EQ_U64(t.bytes, s.bytes);
    opool_destroy(p);
    opool_destroy(q);
}

TEST(stale_handles_stay_stale_after_load) {
    opool_desc d = desc_of(8);
    opool *p = create(&d);
    REQUIRE(p);
    opool_handle h[8], stale[8];
    for (int k = 0; k < 8; k++) h[k] = alloc_stamped(p, 24, (uint64_t)k);
    for (int k = 0; k < 8; k++) {
        CHECK_EQ_U64(opool_free(p, h[k]), OPOOL_OK);
        stale[k] = h[k];
        if (k % 2) h[k] = alloc_stamped(p, 24, 100u + (uint64_t)k); /* reused: a newer handle */
    }
    opool *q = round_trip(p, &d);
    REQUIRE(q);
    for (int k = 0; k < 8; k++) {
        CHECK(opool_get(q, stale[k]) == NULL);
        CHECK_EQ_U64(opool_free(q, stale[k]), OPOOL_ESTALE);
        CHECK_EQ_U64(opool_valid(q, h[k]), (k % 2) == 1);
    }
    opool_destroy(p);
    opool_destroy(q);
}

TEST(foreign_and_never_issued_handles_are_rejected_after_load) {
    opool_desc d = desc_of(8);
    opool *p = create(&d);
    REQUIRE(p);
    for (int k = 0; k < 4; k++) alloc_stamped(p, 24, (uint64_t)k);
    opool_desc other = desc_of(8);
    other.salt = 0x7777000u;
    opool *o = create(&other);
    REQUIRE(o);
    opool_handle foreign = alloc_stamped(o, 24, 1);
    opool *q = round_trip(p, &d);
    REQUIRE(q);
    CHECK(opool_get(q, foreign) == NULL);
    CHECK_EQ_U64(opool_free(q, foreign), OPOOL_ESTALE);
    CHECK_EQ_U64(opool_free(q, handle(G1, 8)), OPOOL_EINVAL);   /* out of range */
    CHECK_EQ_U64(opool_free(q, handle(SALT, 1)), OPOOL_EINVAL); /* even generation */
    CHECK_EQ_U64(opool_free(q, OPOOL_NULL), OPOOL_EINVAL);
    CHECK(opool_get(q, handle(G1, 5)) == NULL);                    /* free slot */
    CHECK(opool_get(q, handle(0xFFFFFFFFu, 0xFFFFFFFFu)) == NULL); /* all ones */
    opool_destroy(p);
    opool_destroy(q);
    opool_destroy(o);
}

TEST(gen0_zero_round_trips) {
    opool_desc d = desc_of(4);
    d.salt = 1; /* gen0 = 0: the first handle has generation 1 */
    opool *p = create(&d);
    REQUIRE(p);
    opool_handle h = alloc_stamped(p, 24, 5);
    CHECK_EQ_U64(h.bits, handle(1, 0).bits);
    d.salt = 0x4444; /* the load desc's salt does not matter: the image's gen0 does */
    opool *q = round_trip(p, &d);
    REQUIRE(q);
    CHECK_SAME_STATE(p, q);
    CHECK(opool_valid(q, h));
    opool_destroy(p);
    opool_destroy(q);
}

TEST(pool_created_in_a_buffer_round_trips) {
    opool_desc d = desc_of(6);
    size_t need = opool_required_bytes(&d);
    void *buf = malloc(need);
    REQUIRE(buf);
    opool *p = NULL;
    REQUIRE(opool_create_in(&p, buf, need, &d) == OPOOL_OK);
    opool_handle h = alloc_stamped(p, 24, 3);
    opool *q = round_trip(p, &d);
    REQUIRE(q);
    CHECK(opool_valid(q, h));
    CHECK(memcmp(opool_get(p, h), opool_get(q, h), 24) == 0);
    CHECK_SAME_NEXT_HANDLES(p, q, 24);
    opool_destroy(p);
    opool_destroy(q);
    free(buf);
}

/* ---- object callbacks ----------------------------------------------------- */

TEST(save_object_and_load_object_carry_every_live_object) {
    hooks k;
    hooks_reset(&k);
    opool_desc d = with_callbacks(grow_desc(4, 32), &k);
    d.init = hk_init;
    opool *p = create(&d);
    REQUIRE(p);
    opool_handle h[20];
    for (int i = 0; i < 20; i++) h[i] = alloc_stamped(p, 24, (uint64_t)i);
    for (int i = 0; i < 20; i += 3) CHECK_EQ_U64(opool_free(p, h[i]), OPOOL_OK);
    int inits = k.inits;
    opool *q = round_trip(p, &d);
    REQUIRE(q);
    CHECK_EQ_U64(k.saves, opool_count(p));
    CHECK_EQ_U64(k.loads, opool_count(q));
    CHECK_EQ_U64(k.inits, inits); /* load rebuilds objects with load_object, not init */
    CHECK_SAME_STATE(p, q);
    opool_destroy(p);
    opool_destroy(q);
}

/* Objects of one pool pointing at objects of another: saved as handles,
 * re-linked to the loaded pool by load_object. */
typedef struct node {
    uint32_t value;
} node;

typedef struct ref {
    node *target;
    uint32_t tag;
} ref;

typedef struct relink {
    const opool *nodes; /* the pool targets live in (original at save, loaded at load) */
} relink;

static bool ref_save(const void *obj, opool_write_fn write, void *wctx, void *user) {
    const ref *r = (const ref *)obj;
    const relink *l = (const relink *)user;
    unsigned char b[12];
    put_le(b, opool_handle_of(l->nodes, r->target).bits, 8);
    put_le(b + 8, r->tag, 4);
    return write(wctx, b, sizeof b) == sizeof b;
}

static bool ref_load(void *obj, const void *data, size_t size, void *user) {
    ref *r = (ref *)obj;
    const relink *l = (const relink *)user;
    if (size != 12) return false;
    opool_handle h;
    h.bits = get_le((const unsigned char *)data, 8);
    r->target = (node *)opool_get(l->nodes, h);
    r->tag = (uint32_t)get_le((const unsigned char *)data + 8, 4);
    return r->target != NULL;
}

TEST(objects_holding_pointers_are_relinked_by_load_object) {
    opool_desc nd = desc_of(32);
    nd.object_size = sizeof(node);
    nd.object_align = alignof(node);
    relink at_save, at_load;
    opool_desc rd = desc_of(16);
    rd.object_size = sizeof(ref);
    rd.object_align = alignof(ref);
    rd.save_object = ref_save;
    rd.load_object = ref_load;
    rd.user = &at_save;
    opool *nodes = create(&nd), *refs = create(&rd);
    REQUIRE(nodes && refs);
    at_save.nodes = nodes;
    opool_handle nh[20], rh[10];
    for (uint32_t i = 0; i < 20; i++) {
        node *n = (node *)opool_alloc(nodes, &nh[i]);
        REQUIRE(n);
        n->value = 1000 + i;
    }
    for (uint32_t i = 0; i < 10; i++) {
        ref *r = (ref *)opool_alloc(refs, &rh[i]);
        REQUIRE(r);
        r->target = (node *)opool_get(nodes, nh[(i * 7) % 20]);
        r->tag = i;
    }
    /* both pools in one stream, the pointed-at pool first */
    stream s = stream_new();
    CHECK_EQ_U64(opool_save(nodes, stream_write, &s), OPOOL_OK);
    CHECK_EQ_U64(opool_save(refs, stream_write, &s), OPOOL_OK);
    opool *nodes2 = NULL, *refs2 = NULL;
    CHECK_EQ_U64(opool_load(&nodes2, &nd, stream_read, &s), OPOOL_OK);
    REQUIRE(nodes2);
    at_load.nodes = nodes2;
    opool_desc rd2 = rd;
    rd2.user = &at_load;
    CHECK_EQ_U64(opool_load(&refs2, &rd2, stream_read, &s), OPOOL_OK);
    REQUIRE(refs2);
    CHECK_EQ_U64(s.pos, s.size); /* each load read exactly its own image */
    for (uint32_t i = 0; i < 10; i++) {
        const ref *r = (const ref *)opool_get(refs2, rh[i]);
        REQUIRE(r);
        CHECK_EQ_U64(r->tag, i);
        CHECK_EQ_PTR(r->target, opool_get(nodes2, nh[(i * 7) % 20]));
        CHECK_EQ_U64(r->target->value, 1000 + (i * 7) % 20);
    }
    stream_free(&s);
    opool_destroy(nodes);
    opool_destroy(refs);
    opool_destroy(nodes2);
    opool_destroy(refs2);
}

TEST(images_in_one_stream_load_in_order) {
    opool_desc d = desc_of(8);
    opool *a = create(&d), *b = create(&d);
    REQUIRE(a && b);
    alloc_stamped(a, 24, 1);
    for (int k = 0; k < 5; k++) alloc_stamped(b, 24, (uint64_t)k + 10);
    stream s = stream_new();
    CHECK_EQ_U64(opool_save(a, stream_write, &s), OPOOL_OK);
    CHECK_EQ_U64(opool_save(b, stream_write, &s), OPOOL_OK);
    size_t first_end = 0;
    opool *a2 = NULL, *b2 = NULL;
    CHECK_EQ_U64(opool_load(&a2, &d, stream_read, &s), OPOOL_OK);
    first_end = s.pos;
    CHECK_EQ_U64(opool_load(&b2, &d, stream_read, &s), OPOOL_OK);
    REQUIRE(a2 && b2);
    CHECK(first_end > 0 && first_end < s.size);
    CHECK_EQ_U64(s.pos, s.size);
    CHECK_SAME_STATE(a, a2);
    CHECK_SAME_STATE(b, b2);
    stream_free(&s);
    opool_destroy(a);
    opool_destroy(b);
    opool_destroy(a2);
    opool_destroy(b2);
}

TEST(load_object_rejecting_its_bytes_is_corrupt_and_finis_only_loaded_objects) {
    hooks k;
    hooks_reset(&k);
    counting c;
    opool_desc d = with_callbacks(grow_desc(4, 32), &k);
    d.fini = hk_fini;
    opool *p = create(&d);
    REQUIRE(p);
    for (int i = 0; i < 12; i++) alloc_stamped(p, 24, (uint64_t)i);
    stream s = saved(p);
    opool_desc ld = d;
    ld.allocator = counting_allocator(&c);
    for (int fail = 0; fail < 12; fail++) {
        hooks_reset(&k);
        k.load_fail_at = fail;
        opool *q = (opool *)(uintptr_t)1;
        CHECK_EQ_U64(load_bytes(&q, &ld, s.data, s.size), OPOOL_ECORRUPT);
        CHECK(q == NULL);
        CHECK_EQ_U64(k.loads, fail + 1);
        CHECK_EQ_U64(k.finis, fail); /* the objects load_object built, and no other */
        CHECK_EQ_U64(c.bytes, 0);
        CHECK_EQ_U64(c.blocks, 0);
    }
    hooks_reset(&k);
    opool *q = NULL;
    CHECK_EQ_U64(load_bytes(&q, &ld, s.data, s.size), OPOOL_OK);
    CHECK_EQ_U64(k.finis, 0);
    opool_destroy(q);
    CHECK_EQ_U64(k.finis, 12); /* destroy: fini on every loaded object */
    CHECK_EQ_U64(c.bytes, 0);
    CHECK_EQ_U64(c.size_mismatches, 0);
    stream_free(&s);
    hooks_reset(&k);
    opool_destroy(p);
}

TEST(save_object_failure_is_corrupt_and_leaks_nothing) {
    hooks k;
    hooks_reset(&k);
    counting c;
    opool_desc d = with_callbacks(desc_of(8), &k);
    d.allocator = counting_allocator(&c);
    opool *p = create(&d);
    REQUIRE(p);
    for (int i = 0; i < 5; i++) alloc_stamped(p, 24, (uint64_t)i);
    size_t bytes = c.bytes;
    k.save_fail_at = 2;
    stream s = stream_new();
    CHECK_EQ_U64(opool_save(p, stream_write, &s), OPOOL_ECORRUPT);
    CHECK_EQ_U64(k.saves, 3); /* nothing more is asked of it */
    CHECK_EQ_U64(c.bytes, bytes);
    stream_free(&s);
    opool_destroy(p);
    CHECK_EQ_U64(c.bytes, 0);
}

/* The allocations a save makes: save_object's buffer, and the positions of
 * a pool without a live list (its only one, here: plain bytes). */
TEST(save_out_of_memory_for_object_bytes_is_enomem_and_leaks_nothing) {
    for (int nolist = 0; nolist < 2; nolist++) {
        hooks k;
        hooks_reset(&k);
        counting c;
        opool_desc d = nolist ? desc_of(8) : with_callbacks(desc_of(8), &k);
        if (nolist) d.flags = OPOOL_NO_LIVE_LIST;
        d.allocator = counting_allocator(&c);
        opool *p = create(&d);
        REQUIRE(p);
        for (int i = 0; i < 5; i++) alloc_stamped(p, 24, (uint64_t)i);
        size_t bytes = c.bytes;
        c.fail_from = (long)c.calls; /* every allocation from now on fails */
        stream s = stream_new();
        CHECK_EQ_U64(opool_save(p, stream_write, &s), OPOOL_ENOMEM);
        CHECK_EQ_U64(c.bytes, bytes);
        c.fail_from = -1;
        stream_free(&s);
        s = stream_new();
        CHECK_EQ_U64(opool_save(p, stream_write, &s), OPOOL_OK);
        CHECK_EQ_U64(c.bytes, bytes);
        stream_free(&s);
        opool_destroy(p);
        CHECK_EQ_U64(c.bytes, 0);
    }
}

TEST(load_zero_fills_before_load_object_with_zero_flag) {
    hooks k;
    hooks_reset(&k);
    opool_desc d = with_callbacks(desc_of(4), &k);
    d.object_size = 32; /* hk_load writes 24 of the 32 bytes */
    d.flags = OPOOL_ZERO;
    opool *p = create(&d);
    REQUIRE(p);
    unsigned char *o = (unsigned char *)opool_alloc(p, NULL);
    REQUIRE(o);
    memset(o, 0x77, 32);
    opool *q = round_trip(p, &d);
    REQUIRE(q);
    const unsigned char *r = (const unsigned char *)opool_live_object(q, 0);
    for (int i = 24; i < 32; i++) CHECK_EQ_U64(r[i], 0);
    CHECK(memcmp(r, o, 24) == 0);
    opool_destroy(p);
    opool_destroy(q);
}

/* ---- descs that do not fit, bad arguments --------------------------------- */

static void check_load_status(const opool *p, const opool_desc *d, opool_status want, int line) {
    stream s = saved(p);
    opool *q = (opool *)(uintptr_t)1;
    opool_status st = load_bytes(&q, d, s.data, s.size);
    CHECK_EQ_U64(st, want);
    CHECK(q == NULL || st == OPOOL_OK);
    if (st != want) fprintf(stderr, "  (load at line %d)\n", line);
    if (st == OPOOL_OK) opool_destroy(q);
    stream_free(&s);
}
#define CHECK_LOAD_STATUS(p, d, want) check_load_status(p, d, want, __LINE__)

TEST(desc_with_another_object_size_is_einval) {
    opool_desc d = desc_of(8);
    opool *p = create(&d);
    REQUIRE(p);
    alloc_stamped(p, 24, 1);
    opool_desc e = d;
    e.object_size = 20; /* same stride (16-aligned: 32), different objects */
    CHECK_LOAD_STATUS(p, &e, OPOOL_EINVAL);
    e.object_size = 25;
    CHECK_LOAD_STATUS(p, &e, OPOOL_EINVAL);
    opool_destroy(p);
}

TEST(desc_with_another_alignment_is_einval) {
    opool_desc d = desc_of(8);
    d.object_align = 8;
    opool *p = create(&d);
    REQUIRE(p);
    opool_desc e = d;
    e.object_align = 4; /* same stride (24), different alignment */
    CHECK_LOAD_STATUS(p, &e, OPOOL_EINVAL);
    e.object_align = 0; /* alignof(max_align_t) */
    CHECK_LOAD_STATUS(p, &e, alignof(max_align_t) == 8 ? OPOOL_OK : OPOOL_EINVAL);
    opool_destroy(p);
}

TEST(desc_with_another_geometry_is_einval) {
    opool_desc d = grow_desc(100, 1000); /* chunks of 128, 128, 256, 488 */
    opool *p = create(&d);
    REQUIRE(p);
    for (int k = 0; k < 300; k++) alloc_stamped(p, 24, (uint64_t)k);
    opool_desc e = d;
    e.max_capacity = 1024;
    CHECK_LOAD_STATUS(p, &e, OPOOL_EINVAL);
    e = d;
    e.capacity = 129; /* first chunk of 256 */
    CHECK_LOAD_STATUS(p, &e, OPOOL_EINVAL);
    e = d;
    e.on_full = OPOOL_FULL_FAIL; /* a fixed pool of 100 */
    CHECK_LOAD_STATUS(p, &e, OPOOL_EINVAL);
    e = d;
    e.capacity = e.max_capacity = 1000; /* fixed, every slot in one chunk */
    CHECK_LOAD_STATUS(p, &e, OPOOL_EINVAL);
    opool_destroy(p);

    d = desc_of(10);
    p = create(&d);
    REQUIRE(p);
    e = d;
    e.capacity = 11;
    CHECK_LOAD_STATUS(p, &e, OPOOL_EINVAL);
    e.capacity = 9;
    CHECK_LOAD_STATUS(p, &e, OPOOL_EINVAL);
    opool_destroy(p);
}

TEST(desc_with_the_same_geometry_loads) {
    opool_desc d = grow_desc(100, 1000);
    opool *p = create(&d);
    REQUIRE(p);
    for (int k = 0; k < 300; k++) alloc_stamped(p, 24, (uint64_t)k);
    opool_desc e = d;
    e.capacity = 128; /* rounds up to the same first chunk */
    CHECK_LOAD_STATUS(p, &e, OPOOL_OK);
    e.capacity = 65;
    CHECK_LOAD_STATUS(p, &e, OPOOL_OK);
    opool_destroy(p);

    hooks k;
    hooks_reset(&k);
    d = desc_of(10);
    p = create(&d);
    REQUIRE(p);
    e = d;
    e.on_full = OPOOL_FULL_EVICT; /* another policy over the same slots */
    e.evict = hk_evict;
    e.user = &k;
    e.flags = OPOOL_POISON | OPOOL_ZERO;
    e.allocator = (opool_allocator){0};
    CHECK_LOAD_STATUS(p, &e, OPOOL_OK);
    opool_destroy(p);
}

TEST(desc_with_other_object_callbacks_is_einval) {
    hooks k;
    hooks_reset(&k);
    opool_desc plain = desc_of(8), cb = with_callbacks(desc_of(8), &k);
    opool *p = create(&plain), *q = create(&cb);
    REQUIRE(p && q);
    alloc_stamped(p, 24, 1);
    alloc_stamped(q, 24, 1);
    CHECK_LOAD_STATUS(p, &cb, OPOOL_EINVAL);
    CHECK_LOAD_STATUS(q, &plain, OPOOL_EINVAL);
    opool_destroy(p);
    opool_destroy(q);
}

TEST(null_arguments_are_einval) {
    opool_desc d = desc_of(4);
    opool *p = create(&d);
    REQUIRE(p);
    stream s = saved(p);
    CHECK_EQ_U64(opool_save(NULL, stream_write, &s), OPOOL_EINVAL);
    CHECK_EQ_U64(opool_save(p, NULL, &s), OPOOL_EINVAL);
    opool *q = (opool *)(uintptr_t)1;
    CHECK_EQ_U64(opool_load(NULL, &d, stream_read, &s), OPOOL_EINVAL);
    CHECK_EQ_U64(opool_load(&q, NULL, stream_read, &s), OPOOL_EINVAL);
    CHECK(q == NULL);
    q = (opool *)(uintptr_t)1;
    CHECK_EQ_U64(opool_load(&q, &d, NULL, &s), OPOOL_EINVAL);
    CHECK(q == NULL);
    CHECK_EQ_U64(s.pos, 0); /* nothing was read */
    CHECK_EQ_U64(opool_save_file(NULL, "x"), OPOOL_EINVAL);
    CHECK_EQ_U64(opool_save_file(p, NULL), OPOOL_EINVAL);
    CHECK_EQ_U64(opool_save_file(p, ""), OPOOL_EINVAL);
    q = (opool *)(uintptr_t)1;
    CHECK_EQ_U64(opool_load_file(&q, &d, NULL), OPOOL_EINVAL);
    CHECK(q == NULL);
    CHECK_EQ_U64(opool_load_file(NULL, &d, "x"), OPOOL_EINVAL);
    stream_free(&s);
    opool_destroy(p);
}

TEST(invalid_desc_is_einval_before_reading) {
    opool_desc d = desc_of(4);
    opool *p = create(&d);
    REQUIRE(p);
    stream s = saved(p);
    opool_desc bad[5];
    for (int i = 0; i < 5; i++) bad[i] = d;
    bad[0].capacity = 2; /* object_size 0 is an id-only pool now: valid */
    bad[0].max_capacity = 1;
    bad[1].capacity = 0;
    bad[2].object_align = 3;
    bad[3].save_object = hk_save;      /* without load_object */
    bad[4].on_full = OPOOL_FULL_EVICT; /* without evict */
    for (int i = 0; i < 5; i++) {
        s.pos = 0;
        opool *q = (opool *)(uintptr_t)1;
        CHECK_EQ_U64(opool_load(&q, &bad[i], stream_read, &s), OPOOL_EINVAL);
        CHECK(q == NULL);
        CHECK_EQ_U64(s.pos, 0);
    }
    stream_free(&s);
    opool_destroy(p);
}

/* ---- hostile input --------------------------------------------------------- */

/* A pool with every feature the format has: grown chunks, a released chunk,
 * a retired slot, a deferred free, stats; and its desc. */
static opool *rich_pool(opool_desc *d, hooks *k, bool callbacks) {
    *d = grow_desc(2, 40);
    d->flags = OPOOL_RETIRE_ON_WRAP;
    if (callbacks) *d = with_callbacks(*d, k);
    if (k->alloc) d->allocator = *k->alloc;
    opool *p = create(d);
    if (p == NULL) return NULL;
    opool_handle h[20];
    for (int i = 0; i < 20; i++) h[i] = alloc_stamped(p, 24, (uint64_t)i);
    for (int i = 8; i < 16; i++) opool_free(p, h[i]);
    opool_shrink(p); /* chunk 3, [8, 16) */
    opool_free(p, h[5]);
    opool_alloc_at(p, handle(SALT - 1, 5));
    opool_free(p, handle(SALT - 1, 5)); /* slot 5 retired */
    opool_free(p, h[2]);                /* the next alloc undoes its move */
    return p;
}

TEST(every_truncation_is_corrupt_and_leaks_nothing) {
    for (int cb = 0; cb < 2; cb++) {
        hooks k;
        hooks_reset(&k);
        counting c;
        opool_desc d;
        opool *p = rich_pool(&d, &k, cb == 1);
        REQUIRE(p);
        stream s = saved(p);
        opool_desc ld = d;
        ld.allocator = counting_allocator(&c);
        for (size_t n = 0; n < s.size; n++) {
            opool *q = (opool *)(uintptr_t)1;
            opool_status st = load_bytes(&q, &ld, s.data, n);
            CHECK_EQ_U64(st, OPOOL_ECORRUPT);
            CHECK(q == NULL);
            if (st != OPOOL_ECORRUPT) fprintf(stderr, "  truncated to %zu of %zu\n", n, s.size);
        }
        CHECK_EQ_U64(c.bytes, 0);
        CHECK_EQ_U64(c.blocks, 0);
        CHECK_EQ_U64(c.size_mismatches, 0);
        opool *q = NULL;
        CHECK_EQ_U64(load_bytes(&q, &ld, s.data, s.size), OPOOL_OK);
        opool_destroy(q);
        stream_free(&s);
        opool_destroy(p);
    }
}

TEST(every_single_byte_corruption_is_corrupt_and_leaks_nothing) {
    static const unsigned char flips[] = {0x01, 0x80, 0xff};
    for (int cb = 0; cb < 2; cb++) {
        hooks k;
        hooks_reset(&k);
        counting c;
        opool_desc d;
        opool *p = rich_pool(&d, &k, cb == 1);
        REQUIRE(p);
        stream s = saved(p);
        opool_desc ld = d;
        ld.allocator = counting_allocator(&c);
        unsigned char *bad = (unsigned char *)malloc(s.size);
        REQUIRE(bad);
        int loads = k.loads;
        for (size_t at = 0; at < s.size; at++) {
            for (size_t f = 0; f < sizeof flips; f++) {
                memcpy(bad, s.data, s.size);
                bad[at] ^= flips[f];
                opool *q = (opool *)(uintptr_t)1;
                opool_status st = load_bytes(&q, &ld, bad, s.size);
                CHECK_EQ_U64(st, OPOOL_ECORRUPT);
                CHECK(q == NULL);
                if (st != OPOOL_ECORRUPT)
                    fprintf(stderr, "  byte %zu ^ 0x%02x of %zu\n", at, flips[f], s.size);
                if (st == OPOOL_OK) opool_destroy(q);
            }
        }
        CHECK_EQ_U64(k.loads, loads); /* no load_object before the checks pass */
        CHECK_EQ_U64(c.bytes, 0);
        CHECK_EQ_U64(c.blocks, 0);
        free(bad);
        stream_free(&s);
        opool_destroy(p);
    }
}

/* The rich pool's image, parsed by the tests' own coder. */
static bool rich_image(img *m, opool_desc *d, hooks *k) {
    opool *p = rich_pool(d, k, false);
    if (p == NULL) return false;
    stream s = saved(p);
    bool ok = img_parse(m, s.data, s.size);
    stream_free(&s);
    opool_destroy(p);
    return ok;
}

/* Load m (checksum made valid) with d and a counting allocator: the status,
 * with no leak and no allocation larger than the image allows. */
static opool_status load_img(const img *m, const opool_desc *d, int line) {
    static unsigned char buf[8192];
    size_t size = img_build(m, buf);
    counting c;
    opool_desc ld = *d;
    ld.allocator = counting_allocator(&c);
    opool *q = (opool *)(uintptr_t)1;
    opool_status st = load_bytes(&q, &ld, buf, size);
    if (st == OPOOL_OK) {
        opool_destroy(q);
    } else {
        CHECK(q == NULL);
    }
    int before = test__checks_failed;
    CHECK_EQ_U64(c.bytes, 0);
    CHECK(c.peak < 2 * size + 4096 || st == OPOOL_OK);
    if (test__checks_failed != before) fprintf(stderr, "  (image of line %d)\n", line);
    return st;
}

#define CHECK_IMG(m, d, want)                                                                      \
    do {                                                                                           \
        opool_status st_ = load_img(&(m), &(d), __LINE__);                                         \
        CHECK_EQ_U64(st_, want);                                                                   \
        if (st_ != (want)) fprintf(stderr, "  (image of line %d)\n", __LINE__);                    \
    } while (0)

/* Apply one change to a fresh copy of the base image and expect status. */
#define HOSTILE(base, d, change, want)                                                             \
    do {                                                                                           \
        img m_ = (base);                                                                           \
        change;                                                                                    \
        CHECK_IMG(m_, d, want);                                                                    \
    } while (0)

static img base_img; /* large: kept out of the stack */

TEST(crafted_image_coder_agrees_with_the_library) {
    hooks k;
    hooks_reset(&k);
    opool_desc d;
    REQUIRE(rich_image(&base_img, &d, &k));
    CHECK_IMG(base_img, d, OPOOL_OK); /* re-encoded by the tests: still loads */
    CHECK_EQ_U64(base_img.version, 1);
    CHECK_EQ_U64(base_img.gen0, SALT);
    CHECK_EQ_U64(base_img.nslots, 32);   /* chunks [0,2) [2,4) [4,8) [8,16) [16,32) */
    CHECK_EQ_U64(base_img.chunks, 0x17); /* chunk 3 released */
    CHECK_EQ_U64(base_img.retired, 1);
    CHECK_EQ_U64(base_img.pos[5], 0xFFFFFFFFu);
    CHECK_EQ_U64(base_img.pos[8], 0xFFFFFFFEu);
    CHECK_EQ_U64(base_img.deferred, 3); /* the last op freed h[2], at live position 2 */
}

TEST(crafted_header_fields_are_corrupt) {
    hooks k;
    hooks_reset(&k);
    opool_desc d;
    REQUIRE(rich_image(&base_img, &d, &k));
    const img b = base_img;
    HOSTILE(b, d, m_.version = 2, OPOOL_ECORRUPT);
    HOSTILE(b, d, m_.version = 0, OPOOL_ECORRUPT);
    HOSTILE(b, d, m_.flags = 4, OPOOL_ECORRUPT);
    HOSTILE(b, d, m_.pool_flags = 0x100, OPOOL_ECORRUPT); /* a heap flag's bit */
    HOSTILE(b, d, m_.gen0 = SALT + 1, OPOOL_ECORRUPT);
    HOSTILE(b, d, m_.reserved = 1, OPOOL_ECORRUPT);
    HOSTILE(b, d, m_.flags = 1, OPOOL_ECORRUPT); /* claims save_object records */
}

TEST(crafted_counts_are_corrupt) {
    hooks k;
    hooks_reset(&k);
    opool_desc d;
    REQUIRE(rich_image(&base_img, &d, &k));
    const img b = base_img;
    size_t os = (size_t)b.object_size;
    /* count above the roster, with object bytes for every claimed object */
    HOSTILE(b, d, (m_.count = m_.limit + 1, m_.objects_size = os * m_.count), OPOOL_ECORRUPT);
    HOSTILE(b, d, (m_.count = 0xFFFFFFFFu), OPOOL_ECORRUPT);
    HOSTILE(b, d, m_.limit = m_.nslots + 1, OPOOL_ECORRUPT);
    HOSTILE(b, d, m_.limit = m_.limit - 1, OPOOL_ECORRUPT); /* a position beyond it */
    HOSTILE(b, d, m_.limit = m_.limit + 1, OPOOL_ECORRUPT); /* a position nobody holds */
    HOSTILE(b, d, m_.high_water = m_.count - 1, OPOOL_ECORRUPT);
    HOSTILE(b, d, m_.high_water = 41, OPOOL_ECORRUPT);
    HOSTILE(b, d, m_.allocs = m_.count - 1, OPOOL_ECORRUPT);
    HOSTILE(b, d, m_.evictions = m_.allocs - m_.count + 1, OPOOL_ECORRUPT);
    HOSTILE(b, d, m_.retired = 0, OPOOL_ECORRUPT);
    HOSTILE(b, d, m_.retired = 2, OPOOL_ECORRUPT);
    HOSTILE(b, d, m_.retired = 41, OPOOL_ECORRUPT);
    HOSTILE(b, d, m_.deferred = m_.count + 2, OPOOL_ECORRUPT);
    HOSTILE(b, d, m_.deferred = 0xFFFFFFFFu, OPOOL_ECORRUPT);
    /* a one more live object (count + 1 with the top free slot made live) */
    HOSTILE(b, d, (m_.count++, m_.objects_size += os), OPOOL_ECORRUPT);
    /* counts that are fine on their own */
    HOSTILE(b, d, m_.deferred = 0, OPOOL_OK);
    HOSTILE(b, d, m_.deferred = m_.count + 1, OPOOL_OK);
    HOSTILE(b, d, (m_.failed = UINT64_MAX, m_.rejected = UINT64_MAX, m_.grows = 999), OPOOL_OK);
}

/* On a full roster: an undo of a live position loads (an alloc_at after a
 * free leaves one; nothing can use it until a free replaces it); one past
 * the live list, which older writers used for a free slot to take back,
 * is corrupt there. */
TEST(crafted_deferred_on_a_full_roster) {
    opool_desc d = desc_of(2);
    opool *p = create(&d);
    REQUIRE(p);
    alloc_stamped(p, 24, 1);
    alloc_stamped(p, 24, 2);
    stream s = saved(p);
    img m;
    REQUIRE(img_parse(&m, s.data, s.size));
    CHECK_IMG(m, d, OPOOL_OK);
    m.deferred = 1;
    CHECK_IMG(m, d, OPOOL_OK);
    m.deferred = 2;
    CHECK_IMG(m, d, OPOOL_OK);
    m.deferred = 3; /* no free slot to take back */
    CHECK_IMG(m, d, OPOOL_ECORRUPT);
    m.deferred = 4;
    CHECK_IMG(m, d, OPOOL_ECORRUPT);
    stream_free(&s);
    opool_destroy(p);
}

/* The header's `deferred` keeps the undo of the last free (1 + the place its
 * move filled): the loaded pool's next alloc takes that place back, as the
 * saved pool's does. Written 0 (as by a writer whose last change was not a
 * free), the roster loads as written and the next alloc appends. */
TEST(image_saved_right_after_a_free_keeps_its_undo) {
    opool_desc d = desc_of(4);
    opool *p = create(&d);
    REQUIRE(p);
    opool_handle h[3];
    for (int k = 0; k < 3; k++) h[k] = alloc_stamped(p, 24, (uint64_t)k);
    CHECK_EQ_U64(opool_free(p, h[0]), OPOOL_OK); /* live list: h[2], h[1] */
    stream s = saved(p);
    img m;
    REQUIRE(img_parse(&m, s.data, s.size));
    CHECK_EQ_U64(m.deferred, 1); /* h[0]'s place, position 0, now h[2]'s */
    opool *q = NULL;
    REQUIRE(load_bytes(&q, &d, s.data, s.size) == OPOOL_OK);
    CHECK_SAME_STATE(p, q);
    opool_handle x = alloc_stamped(q, 24, 9);
    CHECK_EQ_U64(x.bits, handle(G1 + 2, 0).bits);
    CHECK_EQ_U64(opool_live_handle(q, 0).bits, x.bits);
    CHECK_EQ_U64(opool_live_handle(q, 2).bits, h[2].bits);
    m.deferred = 0;
    static unsigned char buf[8192];
    size_t size = img_build(&m, buf);
    opool_destroy(q);
    q = NULL;
    REQUIRE(load_bytes(&q, &d, buf, size) == OPOOL_OK);
    CHECK_EQ_U64(opool_live_handle(q, 0).bits, h[2].bits);
    x = alloc_stamped(q, 24, 9);
    CHECK_EQ_U64(opool_live_handle(q, 0).bits, h[2].bits);
    CHECK_EQ_U64(opool_live_handle(q, 2).bits, x.bits);
    stream_free(&s);
    opool_destroy(p);
    opool_destroy(q);
}

TEST(crafted_geometry_is_corrupt) {
    hooks k;
    hooks_reset(&k);
    opool_desc d;
    REQUIRE(rich_image(&base_img, &d, &k));
    const img b = base_img;
    HOSTILE(b, d, m_.max_capacity = 0xFFFFFFFFu, OPOOL_ECORRUPT);
    HOSTILE(b, d, m_.max_capacity = 0, OPOOL_ECORRUPT);
    HOSTILE(b, d, m_.max_capacity = 31, OPOOL_ECORRUPT); /* slot records beyond it */
    HOSTILE(b, d, m_.max_capacity = 39, OPOOL_EINVAL);   /* consistent, but not d's */
    HOSTILE(b, d, m_.object_size = (uint64_t)1 << 62, OPOOL_ECORRUPT);
    HOSTILE(b, d, m_.object_size = UINT64_MAX, OPOOL_ECORRUPT);
    HOSTILE(b, d, m_.object_size = 0, OPOOL_ECORRUPT);
    HOSTILE(b, d, m_.object_align = 0, OPOOL_ECORRUPT);
    HOSTILE(b, d, m_.object_align = 24, OPOOL_ECORRUPT);
    HOSTILE(b, d, m_.object_align = 8192, OPOOL_ECORRUPT);
    HOSTILE(b, d, m_.stride = b.stride + 8, OPOOL_ECORRUPT); /* aligned, but not the stride */
    HOSTILE(b, d, m_.stride = 0, OPOOL_ECORRUPT);
    HOSTILE(b, d, m_.shift = 33, OPOOL_ECORRUPT);
    HOSTILE(b, d, m_.shift = 0xFFFFFFFFu, OPOOL_ECORRUPT);
    HOSTILE(b, d, m_.shift = 2, OPOOL_ECORRUPT); /* first would be 4 */
    HOSTILE(b, d, m_.first = 3, OPOOL_ECORRUPT);
    HOSTILE(b, d, m_.first = 0, OPOOL_ECORRUPT);
    HOSTILE(b, d, m_.nslots = 0, OPOOL_ECORRUPT);
    HOSTILE(b, d, m_.nslots = 24, OPOOL_ECORRUPT); /* inside chunk 4 [16, 32) */
    HOSTILE(b, d, m_.nslots = 36, OPOOL_ECORRUPT); /* inside chunk 5 [32, 40) */
    HOSTILE(b, d, m_.nslots = 40, OPOOL_ECORRUPT); /* records of chunk 5, not backed */
    HOSTILE(b, d, (m_.nslots = 40, m_.chunks |= (uint64_t)1 << 5), OPOOL_ECORRUPT);
    HOSTILE(b, d, m_.chunks &= ~(uint64_t)1, OPOOL_ECORRUPT);     /* chunk 0 */
    HOSTILE(b, d, m_.chunks |= (uint64_t)1 << 5, OPOOL_ECORRUPT); /* no slot records */
    HOSTILE(b, d, m_.chunks |= (uint64_t)1 << 6, OPOOL_ECORRUPT); /* beyond the chunks */
    HOSTILE(b, d, m_.chunks |= (uint64_t)1 << 63, OPOOL_ECORRUPT);
    HOSTILE(b, d, m_.chunks |= (uint64_t)1 << 3, OPOOL_ECORRUPT);    /* backed, slots unbacked */
    HOSTILE(b, d, m_.chunks &= ~((uint64_t)1 << 1), OPOOL_ECORRUPT); /* live slots, no storage */
}

TEST(crafted_slot_records_are_corrupt) {
    hooks k;
    hooks_reset(&k);
    opool_desc d;
    REQUIRE(rich_image(&base_img, &d, &k));
    const img b = base_img;
    /* two live slots and two free ones, all in the roster */
    uint32_t live = 0, live2 = 0, freed = 0, freed2 = 0;
    for (uint32_t i = 0; i < b.nslots; i++) {
        if (b.pos[i] < b.count)
            live2 = live, live = i;
        else if (b.pos[i] < b.limit)
            freed2 = freed, freed = i;
    }
    REQUIRE(live != live2 && freed != freed2);
    HOSTILE(b, d, m_.pos[live] = m_.limit, OPOOL_ECORRUPT);        /* out of range */
    HOSTILE(b, d, m_.pos[live] = 0xFFFFFFFDu, OPOOL_ECORRUPT);     /* unknown marker */
    HOSTILE(b, d, m_.pos[live] = m_.pos[freed], OPOOL_ECORRUPT);   /* duplicate */
    HOSTILE(b, d, m_.pos[freed] = m_.pos[live], OPOOL_ECORRUPT);   /* duplicate */
    HOSTILE(b, d, m_.pos[live2] = m_.pos[live], OPOOL_ECORRUPT);   /* both live */
    HOSTILE(b, d, m_.pos[freed2] = m_.pos[freed], OPOOL_ECORRUPT); /* both free */
    HOSTILE(b, d, m_.gen[live] += 1, OPOOL_ECORRUPT);              /* live, even */
    HOSTILE(b, d, m_.gen[freed] += 1, OPOOL_ECORRUPT);             /* free, odd */
    HOSTILE(b, d, m_.pos[freed] = 0xFFFFFFFEu, OPOOL_ECORRUPT);    /* unbacked, in a chunk */
    HOSTILE(b, d, m_.pos[8] = m_.pos[freed], OPOOL_ECORRUPT);      /* roster, no storage */
    HOSTILE(b, d, m_.gen[8] += 1, OPOOL_ECORRUPT);                 /* unbacked, odd */
    HOSTILE(b, d, m_.gen[5] += 2, OPOOL_ECORRUPT);                 /* retired, not gen0 */
    HOSTILE(b, d, m_.pos[5] = 0xFFFFFFFEu, OPOOL_ECORRUPT);        /* retired count off */
    /* two slots trading places is a valid roster (another order, not corruption) */
    HOSTILE(b, d,
            (m_.pos[live] = b.pos[freed], m_.pos[freed] = b.pos[live], m_.gen[live] = b.gen[freed],
             m_.gen[freed] = b.gen[live]),
            OPOOL_OK);
    HOSTILE(b, d, m_.gen[8] += 2, OPOOL_OK); /* unbacked: any even generation */
}

TEST(crafted_slot_records_beyond_max_capacity_are_corrupt) {
    opool_desc d = desc_of(4);
    opool *p = create(&d);
    REQUIRE(p);
    alloc_stamped(p, 24, 1);
    stream s = saved(p);
    img m;
    REQUIRE(img_parse(&m, s.data, s.size));
    CHECK_IMG(m, d, OPOOL_OK);
    m.nslots = 5; /* one more record, a harmless-looking marker, past the only chunk */
    m.gen[4] = SALT;
    m.pos[4] = 0xFFFFFFFEu;
    CHECK_IMG(m, d, OPOOL_ECORRUPT);
    m.pos[4] = 0xFFFFFFFFu;
    m.retired = 1;
    CHECK_IMG(m, d, OPOOL_ECORRUPT);
    stream_free(&s);
    opool_destroy(p);
}

/* Reading grows its buffer by doubling, however small each record. */
TEST(load_takes_few_allocations_for_many_records) {
    for (int cb = 0; cb < 2; cb++) {
        hooks k;
        hooks_reset(&k);
        counting c;
        opool_desc d = desc_of(5000);
        if (cb) d = with_callbacks(d, &k);
        opool *p = create(&d);
        REQUIRE(p);
        for (int i = 0; i < 5000; i++) alloc_stamped(p, 24, (uint64_t)i);
        stream s = saved(p); /* 160 KB or more */
        opool_desc ld = d;
        ld.allocator = counting_allocator(&c);
        opool *q = NULL;
        CHECK_EQ_U64(load_bytes(&q, &ld, s.data, s.size), OPOOL_OK);
        CHECK(c.calls < 16); /* buffer ~log2(size / 4 KB), bitmap, pool */
        CHECK(c.peak < 2 * s.size + opool_required_bytes(&d) + 8192);
        opool_destroy(q);
        if (!cb) { /* plain bytes: the size is known, the buffer never outgrows it */
            c.peak = 0;
            CHECK_EQ_U64(load_bytes(&q, &ld, s.data, s.size - 1), OPOOL_ECORRUPT);
            CHECK(c.peak < 2 * s.size);
        }
        stream_free(&s);
        opool_destroy(p);
    }
}

TEST(crafted_sizes_allocate_no_more_than_the_input) {
    /* a header promising the most slots of 1 byte a pool can have here
     * (OPOOL_MAX_CAPACITY; 2^26 with 32-bit pointers, where the slot arrays
     * of more do not fit the address space), followed by almost nothing */
    const uint32_t most = SIZE_MAX > 0xFFFFFFFFu ? OPOOL_MAX_CAPACITY : 1u << 26;
    img m;
    memset(&m, 0, sizeof m);
    m.version = 1;
    m.gen0 = SALT;
    m.object_size = 1;
    m.object_align = 1;
    m.stride = 1;
    m.shift = 32;
    m.first = m.max_capacity = m.nslots = m.limit = most;
    m.chunks = 1;
    opool_desc d = desc_of(most);
    d.object_size = 1;
    d.object_align = 1;
    CHECK_IMG(m, d, OPOOL_ECORRUPT);
    m.count = m.high_water = m.allocs = most;
    CHECK_IMG(m, d, OPOOL_ECORRUPT);

    /* save_object records: a length of 2^62 and of 2^64 - 1 */
    hooks k;
    hooks_reset(&k);
    opool_desc cd = with_callbacks(desc_of(4), &k);
    opool *p = create(&cd);
    REQUIRE(p);
    alloc_stamped(p, 24, 1);
    alloc_stamped(p, 24, 2);
    stream s = saved(p);
    REQUIRE(img_parse(&m, s.data, s.size));
    CHECK_IMG(m, cd, OPOOL_OK);
    uint64_t lengths[] = {(uint64_t)1 << 62, UINT64_MAX, UINT64_MAX - 8, 26, 24};
    for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++) {
        img t = m;
        put_le(t.objects, lengths[i], 8);
        CHECK_IMG(t, cd, OPOOL_ECORRUPT);
    }
    img t = m;
    t.count = 0xFFFFFFFFu;
    CHECK_IMG(t, cd, OPOOL_ECORRUPT);
    stream_free(&s);
    opool_destroy(p);
}

TEST(mismatched_desc_is_einval_only_for_a_sound_image) {
    hooks k;
    hooks_reset(&k);
    opool_desc d;
    REQUIRE(rich_image(&base_img, &d, &k));
    opool_desc e = d;
    e.object_size = 25;
    CHECK_IMG(base_img, e, OPOOL_EINVAL);
    img m = base_img;
    m.gen[0] += 1; /* and corrupt as well: corrupt wins */
    CHECK_IMG(m, e, OPOOL_ECORRUPT);
}

/* ---- failing writers and allocators ----------------------------------------- */

TEST(save_to_a_writer_failing_after_any_number_of_bytes_is_an_io_error_and_clean) {
    for (int cb = 0; cb < 2; cb++) {
        hooks k;
        hooks_reset(&k);
        counting c;
        opool_allocator a = counting_allocator(&c);
        k.alloc = &a;
        opool_desc d;
        opool *p = rich_pool(&d, &k, cb == 1);
        REQUIRE(p);
        size_t bytes = c.bytes;
        stream full = saved(p);
        for (size_t n = 0; n < full.size; n++) {
            stream s = stream_new();
            s.fail_after = n;
            opool_status st = opool_save(p, stream_write, &s);
            CHECK_EQ_U64(st, OPOOL_EIO);
            if (st != OPOOL_EIO) fprintf(stderr, "  failing after %zu bytes\n", n);
            CHECK(s.size == n);
            CHECK_EQ_U64(s.writes_after_short, 0); /* it gives up at the first short write */
            CHECK_EQ_U64(c.bytes, bytes);          /* save_object's buffer went back */
            stream_free(&s);
        }
        stream s = stream_new();
        s.fail_after = full.size;
        CHECK_EQ_U64(opool_save(p, stream_write, &s), OPOOL_OK);
        stream_free(&s);
        stream_free(&full);
        opool_destroy(p);
        CHECK_EQ_U64(c.bytes, 0);
    }
}

TEST(save_scratch_memory_is_returned_whatever_the_writer_does) {
    hooks k;
    hooks_reset(&k);
    counting c;
    opool_desc d = with_callbacks(grow_desc(4, 512), &k);
    d.allocator = counting_allocator(&c);
    opool *p = create(&d);
    REQUIRE(p);
    for (int i = 0; i < 400; i++) alloc_stamped(p, 24, (uint64_t)i);
    size_t bytes = c.bytes;
    stream full = saved(p); /* 17 KB: writes fail among the object records too */
    REQUIRE(full.size > 3 * 4096);
    for (size_t n = 0; n < full.size; n += 97) {
        stream s = stream_new();
        s.fail_after = n;
        CHECK_EQ_U64(opool_save(p, stream_write, &s), OPOOL_EIO);
        CHECK_EQ_U64(c.bytes, bytes);
        stream_free(&s);
    }
    stream_free(&full);
    opool_destroy(p);
    CHECK_EQ_U64(c.bytes, 0);
}

/* Into either kind of pool: one without a live list restores through a
 * roster of its own, given back too (one allocation more). */
TEST(load_failing_at_every_allocation_is_enomem_and_leaks_nothing) {
    for (int cb = 0; cb < 4; cb++) {
        hooks k;
        hooks_reset(&k);
        counting c;
        opool_desc d;
        opool *p = rich_pool(&d, &k, cb % 2 == 1);
        REQUIRE(p);
        stream s = saved(p);
        opool_desc ld = d;
        if (cb >= 2) ld.flags |= OPOOL_NO_LIVE_LIST;
        opool *want = cb >= 2 ? round_trip(p, &ld) : NULL; /* the same pool, loaded whole */
        ld.allocator = counting_allocator(&c);
        opool_status st = OPOOL_ENOMEM;
        long n = 0;
        for (; st == OPOOL_ENOMEM && n < 1000; n++) {
            c.calls = 0;
            c.fail_from = n;
            opool *q = (opool *)(uintptr_t)1;
            st = load_bytes(&q, &ld, s.data, s.size);
            if (st != OPOOL_OK) {
                CHECK(q == NULL);
                CHECK_EQ_U64(c.bytes, 0);
                CHECK_EQ_U64(c.blocks, 0);
            } else {
                CHECK_SAME_STATE(want ? want : p, q);
                opool_destroy(q);
                CHECK_EQ_U64(c.bytes, 0);
            }
        }
        CHECK_EQ_U64(st, OPOOL_OK);
        CHECK(n > 4 + (cb >= 2)); /* buffer, bitmap, pool, slot arrays, chunks (roster) */
        CHECK_EQ_U64(c.size_mismatches, 0);
        stream_free(&s);
        opool_destroy(want);
        opool_destroy(p);
    }
}

/* ---- pools without a live list (OPOOL_NO_LIVE_LIST) ----------------------- */

/* Two images are the same bytes. */
static bool same_image(const stream *a, const stream *b) {
    return a->size == b->size && memcmp(a->data, b->data, a->size) == 0;
}

/* An image saved from a pool with a live list loads into a pool without one
 * and back: the same slots, generations, objects, statistics and free order
 * each way; a pool without a list saves the positions a roster would hold
 * (live slots in index order), so its image loads again into either kind
 * of pool to the same bytes. */
TEST(pool_without_a_live_list_loads_and_saves_images_of_either_kind) {
    hooks k;
    hooks_reset(&k);
    opool_desc d;
    opool *p = rich_pool(&d, &k, false); /* growth, shrink, alloc_at, retirement */
    REQUIRE(p);
    opool_desc nd = d;
    nd.flags |= OPOOL_NO_LIVE_LIST;
    opool *q = round_trip(p, &nd);
    REQUIRE(q);
    check_sound(q, __LINE__);
    CHECK(opool_live_object(q, 0) == NULL);
    for (uint32_t i = 0; i < 40; i++) {
        CHECK_EQ_U64(opool_handle_at(q, i).bits, opool_handle_at(p, i).bits);
        if (opool_at(p, i)) CHECK(memcmp(opool_at(p, i), opool_at(q, i), 24) == 0);
    }
    opool_stats s, t;
    opool_get_stats(p, &s);
    opool_get_stats(q, &t);
    CHECK_EQ_U64(s.count, t.count);
    CHECK_EQ_U64(s.capacity, t.capacity);
    CHECK_EQ_U64(s.retired, t.retired);
    CHECK_EQ_U64(s.allocs, t.allocs);
    CHECK_EQ_U64(s.grows, t.grows);
    CHECK(t.bytes < s.bytes); /* no roster */

    stream a = saved(q);
    opool *r = round_trip(q, &d);   /* back into a pool with a live list */
    opool *q2 = round_trip(q, &nd); /* and into one without */
    REQUIRE(r && q2);
    check_sound(r, __LINE__);
    check_sound(q2, __LINE__);
    stream b = saved(r), c = saved(q2);
    CHECK(same_image(&a, &b));
    CHECK(same_image(&a, &c));
    for (uint32_t k2 = 0; k2 < opool_count(r); k2++) /* live slots in index order */
        CHECK(k2 == 0 || opool_handle_index(opool_live_handle(r, k2)) >
                             opool_handle_index(opool_live_handle(r, k2 - 1)));
    CHECK_SAME_NEXT_HANDLES(p, q, 24); /* the free stack's order came through */
    CHECK_SAME_NEXT_HANDLES(r, q2, 24);
    stream_free(&a);
    stream_free(&b);
    stream_free(&c);
    opool_destroy(q2);
    opool_destroy(r);
    opool_destroy(q);
    opool_destroy(p);
}

/* A load into a pool without a live list whose load_object rejects any
 * object leaves nothing: the roster it restores through is given back too
 * (a failed allocation: load_failing_at_every_allocation_...). */
TEST(pool_without_a_live_list_load_object_failing_anywhere_leaks_nothing) {
    hooks k;
    hooks_reset(&k);
    opool_desc d;
    opool *p = rich_pool(&d, &k, true);
    REQUIRE(p);
    stream s = saved(p);
    counting c;
    opool_desc ld = d;
    ld.flags |= OPOOL_NO_LIVE_LIST;
    ld.allocator = counting_allocator(&c);
    ld.fini = hk_fini;
    uint32_t live = opool_count(p);
    for (uint32_t fail = 0; fail < live; fail++) {
        hooks_reset(&k);
        k.load_fail_at = (int)fail;
        opool *q = (opool *)(uintptr_t)1;
        CHECK_EQ_U64(load_bytes(&q, &ld, s.data, s.size), OPOOL_ECORRUPT);
        CHECK(q == NULL);
        CHECK_EQ_U64(k.finis, fail); /* the objects load_object built, and no other */
        CHECK_EQ_U64(c.bytes, 0);
    }
    CHECK_EQ_U64(c.size_mismatches, 0);
    stream_free(&s);
    hooks_reset(&k);
    opool_destroy(p);
}

/* ---- the documented layout -------------------------------------------------- */

TEST(checksum_is_fnv1a_64) {
    CHECK_EQ_U64(fnv1a((const unsigned char *)"", 0), 0xcbf29ce484222325u);
    CHECK_EQ_U64(fnv1a((const unsigned char *)"a", 1), 0xaf63dc4c8601ec8cu);
    CHECK_EQ_U64(fnv1a((const unsigned char *)"foobar", 6), 0x85944171f73967e8u);
}

TEST(image_layout_is_the_documented_one) {
    /* docs/FORMAT.md, "Example": a fixed pool of two 4-byte objects, slot 0
     * live with bytes AA BB CC DD */
    /* clang-format off */
    static const unsigned char want[] = {
        'O', 'P', 'O', 'O', 'L', 'S', 'A', 'V',         /* magic */
        1, 0, 0, 0,                                     /* version */
        0, 0, 0, 0,                                     /* flags */
        0, 0, 0, 0,                                     /* pool_flags */
        0x00, 0x10, 0, 0,                               /* gen0 0x1000 */
        4, 0, 0, 0, 0, 0, 0, 0,                         /* object_size */
        4, 0, 0, 0, 0, 0, 0, 0,                         /* object_align */
        4, 0, 0, 0, 0, 0, 0, 0,                         /* stride */
        32, 0, 0, 0,                                    /* shift: fixed */
        2, 0, 0, 0,                                     /* first */
        2, 0, 0, 0,                                     /* max_capacity */
        2, 0, 0, 0,                                     /* nslots */
        2, 0, 0, 0,                                     /* limit */
        1, 0, 0, 0,                                     /* count */
        0, 0, 0, 0,                                     /* deferred */
        1, 0, 0, 0,                                     /* high_water */
        0, 0, 0, 0,                                     /* retired */
        0, 0, 0, 0,                                     /* reserved */
        1, 0, 0, 0, 0, 0, 0, 0,                         /* chunks: chunk 0 */
        1, 0, 0, 0, 0, 0, 0, 0,                         /* allocs */
        0, 0, 0, 0, 0, 0, 0, 0,                         /* failed_allocs */
        0, 0, 0, 0, 0, 0, 0, 0,                         /* rejected_handles */
        0, 0, 0, 0, 0, 0, 0, 0,                         /* evictions */
        0, 0, 0, 0, 0, 0, 0, 0,                         /* grows */
        0x01, 0x10, 0, 0, 0, 0, 0, 0,                   /* slot 0: gen 0x1001, position 0 */
        0x00, 0x10, 0, 0, 1, 0, 0, 0,                   /* slot 1: gen 0x1000, position 1 */
        0xAA, 0xBB, 0xCC, 0xDD,                         /* the live object */
        0x93, 0x52, 0x01, 0x8d, 0xef, 0x52, 0x77, 0xb0, /* checksum */
    };
    /* clang-format on */
    opool_desc d = desc_of(2);
    d.object_size = 4;
    d.object_align = 4;
    opool *p = create(&d);
    REQUIRE(p);
    unsigned char *o = (unsigned char *)opool_alloc(p, NULL);
    REQUIRE(o);
    o[0] = 0xAA, o[1] = 0xBB, o[2] = 0xCC, o[3] = 0xDD;
    stream s = saved(p);
    CHECK_EQ_U64(s.size, sizeof want);
    CHECK_EQ_U64(get_le(want + sizeof want - 8, 8), fnv1a(want, sizeof want - 8));
    for (size_t i = 0; i < s.size && i < sizeof want; i++)
        if (s.data[i] != want[i]) {
            CHECK_EQ_U64(i, sizeof want); /* the first differing offset */
            break;
        }
    stream_free(&s);
    opool_destroy(p);
}

/* ---- files ------------------------------------------------------------------ */

#ifdef TEST_FILES
static char test_dir[64];

/* A fresh empty directory in the working directory (ctest gives each test
 * program its own). */
static bool make_dir(void) { return temp_dir(test_dir, sizeof test_dir, "save"); }

static void path_in_dir(char *out, size_t size, const char *name) {
    snprintf(out, size, "%s/%s", test_dir, name);
}

/* Files in the test directory; removes them all when `clean`. */
static int dir_files(bool clean) { return temp_dir_files(test_dir, clean); }

static long file_size(const char *path) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) return -1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fclose(f);
    return n;
}
#endif

/* A save that crashes half-way runs in a child process: fork on POSIX, the
 * test program itself started again on Windows (`test_save --crash-save
 * PATH`: no fork there). */
#if defined(TEST_POSIX) || (defined(_WIN32) && defined(TEST_FILES))
#define TEST_CHILD 1
#endif

#ifdef TEST_CHILD
static opool *big_pool(opool_desc *d, hooks *k, bool callbacks) {
    *d = desc_of(20000);
    d->object_size = 64;
    if (callbacks) {
        *d = with_callbacks(*d, k);
        d->object_size = 24;
    }
    opool *p = create(d);
    if (p == NULL) return NULL;
    for (uint32_t i = 0; i < 20000; i++) alloc_stamped(p, d->object_size, i);
    return p;
}

/* The child: saves a big pool to path, and exits with 42 in the middle. */
static int crash_save(const char *path) {
    hooks k;
    hooks_reset(&k);
    opool_desc bd;
    opool *big = big_pool(&bd, &k, true);
    if (big == NULL) return 3;
    k.exit_at = 15000; /* after ~375 KB of object records */
    (void)opool_save_file(big, path);
    return 0; /* not reached: save_object exits first */
}

static const char *self_path; /* argv[0] */

/* crash_save(path) in a child process: its exit status, -1 if it did not exit. */
static int run_crash_save(const char *path) {
    fflush(NULL);
#if defined(_WIN32)
    return (int)_spawnl(_P_WAIT, self_path, self_path, "--crash-save", path, (char *)NULL);
#else
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) _exit(crash_save(path));
    int status = 0;
    if (waitpid(pid, &status, 0) != pid) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
#endif
}
#endif

TEST(save_file_and_load_file_round_trip) {
#ifdef TEST_FILES
    REQUIRE(make_dir());
    char path[128];
    path_in_dir(path, sizeof path, "pool.bin");
    opool_desc d;
    hooks k;
    hooks_reset(&k);
    opool *p = rich_pool(&d, &k, true);
    REQUIRE(p);
    CHECK_EQ_U64(opool_save_file(p, path), OPOOL_OK);
    CHECK_EQ_U64(dir_files(false), 1); /* no temporary file left */
    counting c;
    opool_desc ld = d;
    ld.allocator = counting_allocator(&c);
    opool *q = NULL;
    CHECK_EQ_U64(opool_load_file(&q, &ld, path), OPOOL_OK);
    REQUIRE(q);
    CHECK_SAME_STATE(p, q);
    opool_destroy(q);
    CHECK_EQ_U64(c.bytes, 0);
    opool_destroy(p);
    dir_files(true);
#endif
}

TEST(save_file_replaces_the_previous_file) {
#ifdef TEST_FILES
    REQUIRE(make_dir());
    char path[128];
    path_in_dir(path, sizeof path, "pool.bin");
    opool_desc d = desc_of(8);
    opool *p = create(&d);
    REQUIRE(p);
    alloc_stamped(p, 24, 1);
    CHECK_EQ_U64(opool_save_file(p, path), OPOOL_OK);
    for (int i = 0; i < 5; i++) alloc_stamped(p, 24, (uint64_t)i + 2);
    CHECK_EQ_U64(opool_save_file(p, path), OPOOL_OK);
    CHECK_EQ_U64(dir_files(false), 1);
    opool *q = NULL;
    CHECK_EQ_U64(opool_load_file(&q, &d, path), OPOOL_OK);
    REQUIRE(q);
    CHECK_EQ_U64(opool_count(q), 6);
    CHECK_SAME_STATE(p, q);
    opool_destroy(q);
    opool_destroy(p);
    dir_files(true);
#endif
}

TEST(crash_during_save_file_leaves_the_previous_file_intact) {
#ifdef TEST_CHILD
    REQUIRE(make_dir());
    char path[128];
    path_in_dir(path, sizeof path, "pool.bin");
    opool_desc od = desc_of(8);
    opool *old = create(&od);
    REQUIRE(old);
    for (int i = 0; i < 3; i++) alloc_stamped(old, 24, (uint64_t)i);
    REQUIRE(opool_save_file(old, path) == OPOOL_OK);
    long old_size = file_size(path);

    CHECK_EQ_U64(run_crash_save(path), 42);
    CHECK_EQ_U64(file_size(path), old_size);
    CHECK_EQ_U64(dir_files(false), 2); /* the crash left its temporary file behind */
    opool *q = NULL;
    CHECK_EQ_U64(opool_load_file(&q, &od, path), OPOOL_OK);
    REQUIRE(q);
    CHECK_SAME_STATE(old, q);
    opool_destroy(q);
    opool_destroy(old);
    dir_files(true);
#endif
}

TEST(full_disk_during_save_file_leaves_the_previous_file_intact) {
#ifdef TEST_POSIX
    REQUIRE(make_dir());
    char path[128];
    path_in_dir(path, sizeof path, "pool.bin");
    opool_desc od = desc_of(8);
    opool *old = create(&od);
    REQUIRE(old);
    for (int i = 0; i < 3; i++) alloc_stamped(old, 24, (uint64_t)i);
    REQUIRE(opool_save_file(old, path) == OPOOL_OK);

    hooks k;
    hooks_reset(&k);
    opool_desc bd;
    opool *big = big_pool(&bd, &k, false);
    REQUIRE(big);
    fflush(NULL);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        /* the file size limit stands in for a full disk: writes past it fail */
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit lim = {65536, 65536};
        if (setrlimit(RLIMIT_FSIZE, &lim) != 0) _exit(3);
        opool_status st = opool_save_file(big, path);
        if (st != OPOOL_EIO) _exit(4);       /* a full disk is an I/O outcome */
        if (dir_files(false) != 1) _exit(5); /* the temporary file is gone */
        opool_destroy(big);
        opool_destroy(old);
        _exit(0);
    }
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    CHECK_EQ_U64(WEXITSTATUS(status), 0);
    opool *q = NULL;
    CHECK_EQ_U64(opool_load_file(&q, &od, path), OPOOL_OK);
    REQUIRE(q);
    CHECK_SAME_STATE(old, q);
    opool_destroy(q);
    opool_destroy(big);
    opool_destroy(old);
    dir_files(true);
#endif
}

/* Windows refuses to replace a file that another handle has open without
 * FILE_SHARE_DELETE (as C's fopen opens it): the save is an I/O error, the
 * open file keeps its bytes, the temporary file is gone. (POSIX replaces
 * it: the reader keeps the old file, the name the new one.) */
TEST(save_file_over_a_file_open_elsewhere_replaces_it_or_fails_cleanly) {
#ifdef TEST_FILES
    REQUIRE(make_dir());
    char path[128];
    path_in_dir(path, sizeof path, "pool.bin");
    opool_desc d = desc_of(8);
    opool *p = create(&d);
    REQUIRE(p);
    alloc_stamped(p, 24, 1);
    REQUIRE(opool_save_file(p, path) == OPOOL_OK);
    long old_size = file_size(path);
    opool *q = create(&d);
    REQUIRE(q);
    for (int i = 0; i < 5; i++) alloc_stamped(q, 24, (uint64_t)i + 2);
    FILE *reader = fopen(path, "rb");
    REQUIRE(reader);
    opool_status st = opool_save_file(q, path);
#if defined(_WIN32)
    CHECK_EQ_U64(st, OPOOL_EIO);
#else
    CHECK_EQ_U64(st, OPOOL_OK);
#endif
    fseek(reader, 0, SEEK_END);
    CHECK_EQ_U64(ftell(reader), old_size); /* the open file is the old one */
    fclose(reader);
    CHECK_EQ_U64(dir_files(false), 1); /* no temporary file left */
    opool *back = NULL;
    CHECK_EQ_U64(opool_load_file(&back, &d, path), OPOOL_OK);
    REQUIRE(back);
    CHECK_SAME_STATE(st == OPOOL_OK ? q : p, back);
    opool_destroy(back);
    /* closed, it is replaced */
    CHECK_EQ_U64(opool_save_file(q, path), OPOOL_OK);
    CHECK_EQ_U64(opool_load_file(&back, &d, path), OPOOL_OK);
    REQUIRE(back);
    CHECK_SAME_STATE(q, back);
    opool_destroy(back);
    opool_destroy(q);
    opool_destroy(p);
    dir_files(true);
#endif
}

/* UTF-8 names (opool_platform.h: Windows converts them to UTF-16). */
TEST(save_file_and_load_file_take_a_utf8_path) {
#ifdef TEST_FILES
    REQUIRE(make_dir());
    char path[128];
    path_in_dir(path, sizeof path,
                "sauvegard\xc3\xa9"
                "e-\xe4\xb8\x96.bin"); /* sauvegardée-世 */
    opool_desc d = desc_of(8);
    opool *p = create(&d);
    REQUIRE(p);
    alloc_stamped(p, 24, 7);
    CHECK_EQ_U64(opool_save_file(p, path), OPOOL_OK);
    CHECK_EQ_U64(opool_save_file(p, path), OPOOL_OK); /* replaces it */
    CHECK_EQ_U64(dir_files(false), 1);
    opool *q = NULL;
    CHECK_EQ_U64(opool_load_file(&q, &d, path), OPOOL_OK);
    REQUIRE(q);
    CHECK_SAME_STATE(p, q);
    opool_destroy(q);
    opool_destroy(p);
    CHECK(opool__file_remove(path)); /* remove() would take the bytes as ANSI on Windows */
    CHECK_EQ_U64(dir_files(true), 0);
#endif
}

TEST(save_file_into_a_missing_directory_is_an_io_error) {
#ifdef TEST_FILES
    opool_desc d = desc_of(4);
    opool *p = create(&d);
    REQUIRE(p);
    CHECK_EQ_U64(opool_save_file(p, "no-such-directory/pool.bin"), OPOOL_EIO);
    opool_destroy(p);
#endif
}

/* Distinct from OPOOL_EINVAL, which says the desc does not fit the image. */
TEST(load_file_of_a_missing_file_is_enoent) {
    opool_desc d = desc_of(4);
    opool *q = (opool *)(uintptr_t)1;
    CHECK_EQ_U64(opool_load_file(&q, &d, "no-such-file.bin"), OPOOL_ENOENT);
    CHECK(q == NULL);
}

TEST(load_file_with_bytes_after_the_image_is_corrupt) {
#ifdef TEST_FILES
    REQUIRE(make_dir());
    char path[128];
    path_in_dir(path, sizeof path, "pool.bin");
    opool_desc d = desc_of(4);
    opool *p = create(&d);
    REQUIRE(p);
    alloc_stamped(p, 24, 1);
    REQUIRE(opool_save_file(p, path) == OPOOL_OK);
    FILE *f = fopen(path, "ab");
    REQUIRE(f);
    fputc(0, f);
    fclose(f);
    opool *q = (opool *)(uintptr_t)1;
    CHECK_EQ_U64(opool_load_file(&q, &d, path), OPOOL_ECORRUPT);
    CHECK(q == NULL);
    opool_destroy(p);
    dir_files(true);
#endif
}

/* ---- randomized round trip ----------------------------------------------------- */

static uint64_t rng_state;

static uint32_t rnd(uint32_t n) { /* uniform enough in [0, n), n > 0 */
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)((rng_state >> 11) % n);
}

#define HISTORY_HANDLES 256

typedef struct world {
    opool_handle seen[HISTORY_HANDLES]; /* handles issued, live or not */
    uint32_t nseen;
    uint64_t stamp;
} world;

static void remember(world *w, opool_handle h) {
    if (!opool_handle_is_null(h)) w->seen[w->nseen++ % HISTORY_HANDLES] = h;
}

/* One random operation on both pools (b may be NULL: history only). Every
 * result is compared. */
static void random_op(world *w, opool *a, opool *b, size_t size) {
    uint32_t n = opool_count(a); /* (which ends the undo of a's last free: b's too) */
    if (b) CHECK_EQ_U64(opool_count(b), n);
    opool_handle pick = w->nseen
                            ? w->seen[rnd(w->nseen < HISTORY_HANDLES ? w->nseen : HISTORY_HANDLES)]
                            : OPOOL_NULL;
    /* weights: alloc 6, free live 3, every other kind 1 (out of 16) */
    static const unsigned char kinds[16] = {0, 0, 0, 0, 0, 0, 1, 1, 1, 2, 3, 4, 5, 6, 7, 8};
    switch (kinds[rnd(16)]) {
    case 0: { /* alloc */
        uint64_t seed = w->stamp++;
        opool_handle x = alloc_stamped(a, size, seed);
        if (b) CHECK_EQ_U64(x.bits, alloc_stamped(b, size, seed).bits);
        remember(w, x);
        break;
    }
    case 1: { /* free a live object (by roster position) */
        if (n == 0) break;
        uint32_t i = rnd(n);
        opool_handle h = opool_live_handle(a, i);
        if (b) CHECK_EQ_U64(h.bits, opool_live_handle(b, i).bits);
        opool_status s = opool_free(a, h);
        if (b) CHECK_EQ_U64(s, opool_free(b, h));
        break;
    }
    case 2: { /* free something remembered: live, stale or random */
        opool_handle h = rnd(4) ? pick : handle(rnd(8) | 1, rnd(80));
        opool_status s = opool_free(a, h);
        if (b) CHECK_EQ_U64(s, opool_free(b, h));
        break;
    }
    case 3: { /* re-create at a handle */
        opool_handle h =
            rnd(2) ? handle(opool_handle_generation(pick) + 2 * rnd(3), opool_handle_index(pick))
                   : handle(SALT - 1 - 2 * rnd(2), rnd(70));
        if (!(opool_handle_generation(h) & 1)) h.bits += (uint64_t)1 << 32;
        void *x = opool_alloc_at(a, h);
        if (x) stamp(x, size, w->stamp);
        if (b) {
            void *y = opool_alloc_at(b, h);
            CHECK_EQ_U64(x != NULL, y != NULL);
            if (y) stamp(y, size, w->stamp);
        }
        w->stamp++;
        if (x) remember(w, h);
        break;
    }
    case 4: { /* free by pointer */
        if (n == 0) break;
        uint32_t i = rnd(n);
        opool_status s = opool_free_object(a, opool_live_object(a, i));
        if (b) CHECK_EQ_U64(s, opool_free_object(b, opool_live_object(b, i)));
        break;
    }
    case 5: /* sort, now and then */
        if (rnd(4) == 0) {
            opool_sort(a);
            if (b) opool_sort(b);
        }
        break;
    case 6: { /* shrink */
        uint32_t r = opool_shrink(a);
        if (b) CHECK_EQ_U64(r, opool_shrink(b));
        break;
    }
    case 7: /* clear, rarely */
        if (rnd(16) == 0) {
            opool_clear(a);
            if (b) opool_clear(b);
        }
        break;
    default: { /* look around */
        bool va = opool_valid(a, pick);
        if (b) {
            CHECK_EQ_U64(va, opool_valid(b, pick));
            void *x = opool_get(a, pick), *y = opool_get(b, pick);
            if (x && y) CHECK(memcmp(x, y, size) == 0);
            CHECK_EQ_U64(opool_count(a), opool_count(b));
        }
        break;
    }
    }
}

TEST(randomized_round_trip_behaves_like_the_original) {
    rng_state = 0x9E3779B97F4A7C15u;
    int failed_before = test__checks_failed;
    for (int round = 0; round < 300; round++) {
        hooks k;
        hooks_reset(&k);
        opool_desc d = desc_of(1 + rnd(12));
        size_t size = 24;
        switch (rnd(3)) {
        case 0:
            break;
        case 1:
            d.on_full = OPOOL_FULL_GROW;
            d.max_capacity = d.capacity + rnd(60);
            break;
        default:
            d.on_full = OPOOL_FULL_EVICT;
            d.evict = hk_evict;
            d.user = &k;
            k.victim = rnd(8);
            break;
        }
        if (rnd(2)) d.flags |= OPOOL_RETIRE_ON_WRAP;
        if (rnd(3) == 0) d.flags |= OPOOL_POISON;
        if (rnd(4) == 0) d.flags |= OPOOL_ZERO;
        if (rnd(2)) {
            d.save_object = hk_save;
            d.load_object = hk_load;
            d.user = &k;
        } else {
            d.object_size = size = 1 + rnd(40);
            d.object_align = (size_t)1 << rnd(5);
        }
        opool *a = create(&d);
        REQUIRE(a);
        world w;
        memset(&w, 0, sizeof w);
        uint32_t steps = rnd(300);
        for (uint32_t s = 0; s < steps; s++) random_op(&w, a, NULL, size);
        opool *b = round_trip(a, &d);
        REQUIRE(b);
        CHECK_SAME_STATE(a, b);
        for (uint32_t i = 0; i < HISTORY_HANDLES && i < w.nseen; i++)
            CHECK_EQ_U64(opool_valid(a, w.seen[i]), opool_valid(b, w.seen[i]));
        for (uint32_t s = 0; s < 300; s++) random_op(&w, a, b, size);
        CHECK_SAME_STATE(a, b);
        opool_destroy(a);
        opool_destroy(b);
        if (test__checks_failed != failed_before) {
            fprintf(stderr, "  randomized round %d failed\n", round);
            break;
        }
    }
}

int main(int argc, char **argv) {
#ifdef TEST_CHILD
    if (argc == 3 && strcmp(argv[1], "--crash-save") == 0) return crash_save(argv[2]);
    self_path = argv[0];
#else
    (void)argc;
    (void)argv;
#endif
    RUN(fixed_pool_round_trip_restores_slots_roster_and_objects);
    RUN(empty_pools_round_trip);
    RUN(full_pool_round_trip_keeps_the_exhaustion_episode);
    RUN(grown_pool_round_trip_restores_every_chunk);
    RUN(shrunk_pool_round_trip_keeps_released_chunks_released);
    RUN(retired_slots_stay_retired_after_load);
    RUN(evicting_pool_round_trip_evicts_the_same_victims);
    RUN(poisoned_pool_round_trip_keeps_free_slots_poisoned);
    RUN(loaded_objects_are_open_to_asan_exactly_as_the_originals);
    RUN(pool_saved_right_after_a_free_behaves_as_the_original);
    RUN(pool_saved_right_after_a_free_then_freed_again_matches);
    RUN(pool_saved_right_after_freeing_its_last_live_entry_matches);
    RUN(save_does_not_change_the_pool);
    RUN(stats_are_restored);
    RUN(stale_handles_stay_stale_after_load);
    RUN(foreign_and_never_issued_handles_are_rejected_after_load);
    RUN(gen0_zero_round_trips);
    RUN(pool_created_in_a_buffer_round_trips);

    RUN(save_object_and_load_object_carry_every_live_object);
    RUN(objects_holding_pointers_are_relinked_by_load_object);
    RUN(images_in_one_stream_load_in_order);
    RUN(load_object_rejecting_its_bytes_is_corrupt_and_finis_only_loaded_objects);
    RUN(save_object_failure_is_corrupt_and_leaks_nothing);
    RUN(save_out_of_memory_for_object_bytes_is_enomem_and_leaks_nothing);
    RUN(load_zero_fills_before_load_object_with_zero_flag);

    RUN(desc_with_another_object_size_is_einval);
    RUN(desc_with_another_alignment_is_einval);
    RUN(desc_with_another_geometry_is_einval);
    RUN(desc_with_the_same_geometry_loads);
    RUN(desc_with_other_object_callbacks_is_einval);
    RUN(null_arguments_are_einval);
    RUN(invalid_desc_is_einval_before_reading);

    RUN(every_truncation_is_corrupt_and_leaks_nothing);
    RUN(every_single_byte_corruption_is_corrupt_and_leaks_nothing);
    RUN(crafted_image_coder_agrees_with_the_library);
    RUN(crafted_header_fields_are_corrupt);
    RUN(crafted_counts_are_corrupt);
    RUN(crafted_deferred_on_a_full_roster);
    RUN(image_saved_right_after_a_free_keeps_its_undo);
    RUN(crafted_geometry_is_corrupt);
    RUN(crafted_slot_records_are_corrupt);
    RUN(crafted_slot_records_beyond_max_capacity_are_corrupt);
    RUN(load_takes_few_allocations_for_many_records);
    RUN(crafted_sizes_allocate_no_more_than_the_input);
    RUN(mismatched_desc_is_einval_only_for_a_sound_image);

    RUN(save_to_a_writer_failing_after_any_number_of_bytes_is_an_io_error_and_clean);
    RUN(save_scratch_memory_is_returned_whatever_the_writer_does);
    RUN(load_failing_at_every_allocation_is_enomem_and_leaks_nothing);
    RUN(pool_without_a_live_list_loads_and_saves_images_of_either_kind);
    RUN(pool_without_a_live_list_load_object_failing_anywhere_leaks_nothing);

    RUN(checksum_is_fnv1a_64);
    RUN(image_layout_is_the_documented_one);

    RUN(save_file_and_load_file_round_trip);
    RUN(save_file_replaces_the_previous_file);
    RUN(crash_during_save_file_leaves_the_previous_file_intact);
    RUN(full_disk_during_save_file_leaves_the_previous_file_intact);
    RUN(save_file_over_a_file_open_elsewhere_replaces_it_or_fails_cleanly);
    RUN(save_file_and_load_file_take_a_utf8_path);
    RUN(save_file_into_a_missing_directory_is_an_io_error);
    RUN(load_file_of_a_missing_file_is_enoent);
    RUN(load_file_with_bytes_after_the_image_is_corrupt);

    RUN(randomized_round_trip_behaves_like_the_original);
    return test_summary();
}
