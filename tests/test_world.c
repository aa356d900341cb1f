/*
 * test_world.c -- world saves (include/opool.h, "world saves"; docs/FORMAT.md,
 * "Worlds") and what a failed load says ("why a load failed"), one behaviour
 * per test:
 *   - round trips of several pools (object sizes, grown, retired, free and
 *     live slots, save_object/load_object) restore each pool exactly: each
 *     loaded pool's opool_save image equals the original's, byte for byte;
 *   - the image is the world header, each pool's image without its
 *     checksum, one checksum;
 *   - all or nothing: every allocation failure, every truncation, every
 *     flipped bit, a desc mismatch in the last pool: the right status, every
 *     out[i] NULL, nothing leaked, no callback run;
 *   - the exact line of every load check, in the thread's record and on
 *     stderr (the default report);
 *   - a randomized test: random worlds against opool_save of each pool.
 *
 * Pools use salt 0x1000 + their index: a slot's first handle in pool i has
 * generation 0x1001 + i (salts are even, so 0x1000 + 2 * i).
 */
#if !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L /* dup, mkdtemp */
#endif

#include "opool.h"
#include "opool_side.h"
#include "counting.h"
#include "helpers.h"
#include "stream.h"
#include "tempdir.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__unix__) || defined(__APPLE__) || defined(_WIN32)
#define TEST_CAPTURE 1 /* stderr redirected for a while (redirect.h) */
#include "redirect.h"
#endif

#define NP 3 /* pools in the standard world */

/* ---- helpers ------------------------------------------------------------- */

/* What the callbacks saw. */
typedef struct hooks {
    int finis, loads, reports;
    int load_fail_at; /* the load_object call (0-based) that returns false; -1: none */
    opool_status last_report;
    bool report_pool_null;
    char line[256]; /* opool_last_load_error()->message, read inside the report */
} hooks;

static hooks hk;

static void hk_fini(void *obj, void *user) {
    (void)obj, (void)user;
    hk.finis++;
}

static void hk_report(opool *p, opool_status what, opool_handle h, void *user) {
    (void)h, (void)user;
    hk.reports++;
    hk.last_report = what;
    hk.report_pool_null = p == NULL;
    if (p == NULL) snprintf(hk.line, sizeof hk.line, "%s", opool_last_load_error()->message);
}

/* Objects of pool 1 saved as 8 bytes: its first 8 reversed, then rebuilt
 * with the rest filled from them, so only load_object can rebuild them. */
static bool hk_save(const void *obj, opool_write_fn write, void *wctx, void *user) {
    (void)user;
    unsigned char rev[8];
    for (int i = 0; i < 8; i++) rev[i] = ((const unsigned char *)obj)[7 - i];
    return write(wctx, rev, 8) == 8;
}

static void fill40(unsigned char *o, const unsigned char first[8]) {
    for (int i = 0; i < 40; i++) o[i] = (unsigned char)(first[i % 8] + i / 8);
}

static bool hk_load(void *obj, const void *data, size_t size, void *user) {
    (void)user;
    if (hk.loads++ == hk.load_fail_at || size != 8) return false;
    unsigned char first[8];
    for (int i = 0; i < 8; i++) first[i] = ((const unsigned char *)data)[7 - i];
    fill40((unsigned char *)obj, first);
    return true;
}

static void hooks_reset(void) {
    memset(&hk, 0, sizeof hk);
    hk.load_fail_at = -1;
}

/* The standard world's descs, all on one counting allocator:
 *   0 "units":   fixed, 24-byte objects, 8 slots, OPOOL_RETIRE_ON_WRAP;
 *   1 "bullets": 40-byte objects, 4 slots growing to 64, save/load_object, fini;
 *   2 "sparks":  fixed, 8-byte objects, 16 slots. */
static void world_descs(opool_desc d[NP], counting *c) {
    static const char *const names[NP] = {"units", "bullets", "sparks"};
    static const size_t sizes[NP] = {24, 40, 8};
    static const uint32_t caps[NP] = {8, 4, 16};
    for (int i = 0; i < NP; i++) {
        d[i] = quiet_desc(sizes[i], caps[i], 0x1000u + 2u * (uint32_t)i);
        d[i].name = names[i];
        d[i].allocator =
            (opool_allocator){.alloc = counting_alloc, .free = counting_free, .ctx = c};
    }
    d[0].flags = OPOOL_RETIRE_ON_WRAP;
    d[1].on_full = OPOOL_FULL_GROW;
    d[1].max_capacity = 64;
    d[1].save_object = hk_save;
    d[1].load_object = hk_load;
    d[1].fini = hk_fini;
}

static void stamp(opool *p, opool_handle h, size_t size, uint32_t seed) {
    unsigned char *o = (unsigned char *)opool_get(p, h);
    unsigned char first[8];
    for (int i = 0; i < 8; i++) first[i] = (unsigned char)(seed * 31u + (uint32_t)i * 7u);
    if (size == 40)
        fill40(o, first);
    else
        for (size_t i = 0; i < size; i++) o[i] = (unsigned char)(seed * 13u + i);
}

/* Live, free and retired slots in pool 0, growth and frees in pool 1, a
 * full pool 2. Handles still live go to live[], freed ones to stale[]. */
typedef struct world {
    opool *p[NP];
    opool_handle live[NP][64], stale[NP][64];
    uint32_t nlive[NP], nstale[NP];
} world;

static void world_alloc(world *w, int i, size_t size, uint32_t seed) {
    opool_handle h;
    if (opool_alloc(w->p[i], &h) == NULL) return;
    stamp(w->p[i], h, size, seed);
    w->live[i][w->nlive[i]++] = h;
}

static void world_free(world *w, int i, uint32_t k) {
    opool_handle h = w->live[i][k];
    if (opool_free(w->p[i], h) != OPOOL_OK) return;
    w->live[i][k] = w->live[i][--w->nlive[i]];
    w->stale[i][w->nstale[i]++] = h;
}

static bool world_make(world *w, const opool_desc d[NP]) {
    memset(w, 0, sizeof *w);
    for (int i = 0; i < NP; i++)
        if (opool_create(&w->p[i], &d[i]) != OPOOL_OK) return false;
    for (uint32_t k = 0; k < 6; k++) world_alloc(w, 0, 24, k);
    world_free(w, 0, 1);
    world_free(w, 0, 3);
    /* slot 7 at the generation before gen0: freeing it retires it */
    opool_handle last = handle(0x1000u - 1u, 7);
    if (opool_alloc_at(w->p[0], last) == NULL || opool_free(w->p[0], last) != OPOOL_OK)
        return false;
    for (uint32_t k = 0; k < 20; k++) world_alloc(w, 1, 40, 100 + k);
    for (uint32_t k = 0; k < 5; k++) world_free(w, 1, k * 3);
    for (uint32_t k = 0; k < 16; k++) world_alloc(w, 2, 8, 200 + k);
    world_free(w, 2, 0);
    world_alloc(w, 2, 8, 300);
    return true;
}

static void world_destroy(world *w) {
    for (int i = 0; i < NP; i++) opool_destroy(w->p[i]);
}

static const opool *const *cpools(opool *const *p) { return (const opool *const *)p; }

static stream saved_world(opool *const *p, uint32_t n) {
    stream s = stream_new();
    CHECK_EQ_U64(opool_save_many(cpools(p), n, stream_write, &s), OPOOL_OK);
    return s;
}

/* The fixture of the failure tests: c reset (no failure planned), d the
 * descs of world_descs counting through c, hooks reset, and *s the image of
 * a world made and destroyed again. False if the world could not be made. */
static bool saved_fixture(counting *c, opool_desc d[NP], stream *s, size_t start[NP + 1]) {
    memset(c, 0, sizeof *c);
    c->fail_from = c->fail_only = -1;
    world_descs(d, c);
    hooks_reset();
    world w;
    if (!world_make(&w, d)) return false;
    *s = saved_world(w.p, NP);
    /* section i is pool i's own image without its checksum */
    start[0] = 16;
    for (int i = 0; i < NP; i++) {
        stream one = stream_new();
        CHECK_EQ_U64(opool_save(w.p[i], stream_write, &one), OPOOL_OK);
        start[i + 1] = start[i] + one.size - 8;
        stream_free(&one);
    }
    world_destroy(&w);
    return true;
}

/* The pool a failed load of the fixture may name for damage at byte `at`:
 * the one whose section holds it, else UINT32_MAX (the image's header or
 * checksum). */
static uint32_t section_of(const size_t start[NP + 1], size_t at) {
    for (uint32_t i = 0; i < NP; i++)
        if (at >= start[i] && at < start[i + 1]) return i;
    return UINT32_MAX;
}

/* The last failed load named pool `want` (UINT32_MAX: none), and its line
 * carries that pool's name and no other. */
static void check_named(const opool_desc *d, uint32_t want, size_t at, int line) {
    const opool_load_error *r = opool_last_load_error();
    bool ok = r->pool == want;
    for (uint32_t i = 0; i < NP; i++) {
        char quoted[64];
        snprintf(quoted, sizeof quoted, "\"%s\"", d[i].name);
        ok = ok && (strstr(r->message, quoted) != NULL) == (i == want);
    }
    if (!ok) {
        fprintf(stderr, "  (line %d: damage at byte %zu named pool %lu, want %lu: %s)\n", line, at,
                (unsigned long)r->pool, (unsigned long)want, r->message);
        CHECK(ok);
    }
}

static stream saved_pool(const opool *p) {
    stream s = stream_new();
    CHECK_EQ_U64(opool_save(p, stream_write, &s), OPOOL_OK);
    return s;
}

static bool same_image(const opool *a, const opool *b) {
    stream x = saved_pool(a), y = saved_pool(b);
    bool same = x.size == y.size && memcmp(x.data, y.data, x.size) == 0;
    stream_free(&x);
    stream_free(&y);
    return same;
}

static opool_status load_from(opool **out, const opool_desc *d, uint32_t n, const unsigned char *b,
                              size_t size) {
    stream s = stream_of(b, size);
    return opool_load_many(out, d, n, stream_read, &s);
}

static bool all_null(opool *const *out, uint32_t n) {
    for (uint32_t i = 0; i < n; i++)
        if (out[i] != NULL) return false;
    return true;
}

static uint64_t fnv(const unsigned char *b, size_t n) {
    uint64_t h = 0xcbf29ce484222325u;
    for (size_t k = 0; k < n; k++) h = (h ^ b[k]) * 0x100000001b3u;
    return h;
}

static uint64_t get_le(const unsigned char *b, int bytes) {
    uint64_t v = 0;
    for (int k = bytes - 1; k >= 0; k--) v = v << 8 | b[k];
    return v;
}

static void put_le(unsigned char *b, uint64_t v, int bytes) {
    for (int k = 0; k < bytes; k++) b[k] = (unsigned char)(v >> (8 * k));
}

/* Re-seal an edited world image: its checksum over the rest. */
static void reseal(unsigned char *b, size_t size) { put_le(b + size - 8, fnv(b, size - 8), 8); }

#define BAD_OUT ((opool *)(uintptr_t)0x10)

/* ---- round trips --------------------------------------------------------- */

TEST(world_round_trip_restores_every_pool_exactly) {
    counting c;
    memset(&c, 0, sizeof c);
    c.fail_from = c.fail_only = -1;
    opool_desc d[NP];
    world_descs(d, &c);
    hooks_reset();
    world w;
    REQUIRE(world_make(&w, d));
    stream s = saved_world(w.p, NP);
    opool *out[NP] = {BAD_OUT, BAD_OUT, BAD_OUT};
    s.pos = 0;
    REQUIRE(opool_load_many(out, d, NP, stream_read, &s) == OPOOL_OK);
    CHECK_EQ_U64(s.pos, s.size); /* read exactly the image */
    for (int i = 0; i < NP; i++) {
        REQUIRE(out[i] != NULL);
        CHECK(same_image(w.p[i], out[i]));
        CHECK_EQ_U64(opool_count(out[i]), opool_count(w.p[i]));
        for (uint32_t k = 0; k < w.nlive[i]; k++) {
            void *a = opool_get(w.p[i], w.live[i][k]), *b = opool_get(out[i], w.live[i][k]);
            REQUIRE(b != NULL);
            CHECK(memcmp(a, b, d[i].object_size) == 0);
        }
        for (uint32_t k = 0; k < w.nstale[i]; k++) CHECK(!opool_valid(out[i], w.stale[i][k]));
    }
    /* the retired slot stays retired, and the pools go on as the originals */
    opool_stats st;
    opool_get_stats(out[0], &st);
    CHECK_EQ_U64(st.retired, 1);
    for (int i = 0; i < NP; i++) {
        opool_handle a, b;
        void *x = opool_alloc(w.p[i], &a), *y = opool_alloc(out[i], &b);
        CHECK((x == NULL) == (y == NULL));
        CHECK_EQ_U64(a.bits, b.bits);
    }
    CHECK_EQ_U64(hk.reports, 0);
    world_destroy(&w);
    for (int i = 0; i < NP; i++) opool_destroy(out[i]);
    stream_free(&s);
    CHECK_EQ_U64(c.blocks, 0);
    CHECK_EQ_U64(c.bad_frees, 0);
}

TEST(world_image_is_a_header_each_pools_section_and_one_checksum) {
    counting c;
    opool_desc d[NP];
    memset(&c, 0, sizeof c);
    c.fail_from = c.fail_only = -1;
    world_descs(d, &c);
    hooks_reset();
    world w;
    REQUIRE(world_make(&w, d));
    stream s = saved_world(w.p, NP);
    REQUIRE(s.size > 24);
    CHECK(memcmp(s.data, "OPOOLWLD", 8) == 0);
    CHECK_EQ_U64(get_le(s.data + 8, 4), 1);
    CHECK_EQ_U64(get_le(s.data + 12, 4), NP);
    size_t at = 16;
    for (int i = 0; i < NP; i++) {
        stream one = saved_pool(w.p[i]);
        size_t body = one.size - 8;
        REQUIRE(at + body <= s.size);
        CHECK(memcmp(s.data + at, one.data, body) == 0);
        at += body;
        stream_free(&one);
    }
    CHECK_EQ_U64(at + 8, s.size);
    CHECK_EQ_U64(get_le(s.data + at, 8), fnv(s.data, at));
    world_destroy(&w);
    stream_free(&s);
}

TEST(a_world_of_one_pool_round_trips) {
    opool_desc d = quiet_desc(16, 4, 0x2000);
    opool *p = NULL;
    REQUIRE(opool_create(&p, &d) == OPOOL_OK);
    opool_handle h;
    memset(opool_alloc(p, &h), 0x5A, 16);
    stream s = saved_world(&p, 1);
    opool *q = NULL;
    CHECK_EQ_U64(opool_load_many(&q, &d, 1, stream_read, &s), OPOOL_OK);
    REQUIRE(q);
    CHECK(same_image(p, q));
    opool_destroy(p);
    opool_destroy(q);
    stream_free(&s);
}

/* ---- arguments ----------------------------------------------------------- */

TEST(save_many_rejects_no_pools_a_null_pool_and_the_same_pool_twice) {
    opool_desc d = quiet_desc(8, 2, 0);
    opool *a = NULL, *b = NULL;
    REQUIRE(opool_create(&a, &d) == OPOOL_OK && opool_create(&b, &d) == OPOOL_OK);
    stream s = stream_new();
    const opool *both[2] = {a, b}, *with_null[2] = {a, NULL}, *twice[3] = {a, b, a};
    CHECK_EQ_U64(opool_save_many(both, 0, stream_write, &s), OPOOL_EINVAL);
    CHECK_EQ_U64(opool_save_many(NULL, 2, stream_write, &s), OPOOL_EINVAL);
    CHECK_EQ_U64(opool_save_many(with_null, 2, stream_write, &s), OPOOL_EINVAL);
    CHECK_EQ_U64(opool_save_many(twice, 3, stream_write, &s), OPOOL_EINVAL);
    CHECK_EQ_U64(opool_save_many(both, 2, NULL, &s), OPOOL_EINVAL);
    CHECK_EQ_U64(opool_save_many_file(twice, 3, "never-written.sav"), OPOOL_EINVAL);
    CHECK_EQ_U64(opool_save_many_file(both, 2, NULL), OPOOL_EINVAL);
    CHECK_EQ_U64(opool_save_many_file(both, 2, ""), OPOOL_EINVAL);
    CHECK_EQ_U64(s.size, 0); /* nothing written */
    CHECK_EQ_U64(s.writes, 0);
    opool_destroy(a);
    opool_destroy(b);
}

TEST(load_many_rejects_null_arguments_and_no_pools_with_every_out_null) {
    opool_desc d[2] = {quiet_desc(8, 2, 0), quiet_desc(8, 2, 0)};
    opool *a = NULL, *b = NULL;
    REQUIRE(opool_create(&a, &d[0]) == OPOOL_OK && opool_create(&b, &d[1]) == OPOOL_OK);
    opool *both[2] = {a, b};
    stream s = saved_world(both, 2);
    opool *out[2] = {BAD_OUT, BAD_OUT};
    CHECK_EQ_U64(opool_load_many(NULL, d, 2, stream_read, &s), OPOOL_EINVAL);
    CHECK_EQ_U64(opool_load_many(out, NULL, 2, stream_read, &s), OPOOL_EINVAL);
    CHECK(all_null(out, 2));
    out[0] = out[1] = BAD_OUT;
    CHECK_EQ_U64(opool_load_many(out, d, 2, NULL, &s), OPOOL_EINVAL);
    CHECK(all_null(out, 2));
    CHECK_EQ_U64(opool_load_many(out, d, 0, stream_read, &s), OPOOL_EINVAL);
    out[0] = out[1] = BAD_OUT;
    CHECK_EQ_U64(opool_load_many_file(out, d, 2, NULL), OPOOL_EINVAL);
    CHECK(all_null(out, 2));
    /* an invalid desc: EINVAL, recorded */
    d[1].object_align = 3;
    out[0] = out[1] = BAD_OUT;
    CHECK_EQ_U64(opool_load_many(out, d, 2, stream_read, &s), OPOOL_EINVAL);
    CHECK(all_null(out, 2));
    CHECK(strcmp(opool_last_load_error()->check, "desc") == 0);
    CHECK_EQ_U64(opool_last_load_error()->pool, 1);
    CHECK_EQ_U64(s.pos, 0); /* nothing read */
    opool_destroy(a);
    opool_destroy(b);
    stream_free(&s);
}

TEST(save_many_stops_at_a_short_write_with_eio) {
    counting c;
    memset(&c, 0, sizeof c);
    c.fail_from = c.fail_only = -1;
    opool_desc d[NP];
    world_descs(d, &c);
    hooks_reset();
    world w;
    REQUIRE(world_make(&w, d));
    stream full = saved_world(w.p, NP);
    for (size_t k = 0; k < full.size; k += 1 + k / 16) {
        stream s = stream_new();
        s.fail_after = k;
        CHECK_EQ_U64(opool_save_many(cpools(w.p), NP, stream_write, &s), OPOOL_EIO);
        CHECK_EQ_U64(s.writes_after_short, 0); /* nothing more after a short write */
        stream_free(&s);
    }
    world_destroy(&w);
    stream_free(&full);
    CHECK_EQ_U64(c.blocks, 0);
}

static bool refuse_save(const void *obj, opool_write_fn write, void *wctx, void *user) {
    (void)obj, (void)write, (void)wctx, (void)user;
    return false;
}

TEST(save_many_with_a_failing_save_object_is_corrupt_and_keeps_the_old_file) {
    opool_desc d[2] = {quiet_desc(8, 4, 0), quiet_desc(8, 4, 0)};
    opool *p[2] = {NULL, NULL};
    REQUIRE(opool_create(&p[0], &d[0]) == OPOOL_OK);
    d[1].save_object = refuse_save;
    d[1].load_object = hk_load;
    REQUIRE(opool_create(&p[1], &d[1]) == OPOOL_OK);
    CHECK(opool_alloc(p[1], NULL) != NULL);
    stream s = stream_new();
    CHECK_EQ_U64(opool_save_many(cpools(p), 2, stream_write, &s), OPOOL_ECORRUPT);
    stream_free(&s);
#ifdef TEST_FILES
    char dir[64];
    REQUIRE(temp_dir(dir, sizeof dir, "world-keep"));
    char path[128];
    snprintf(path, sizeof path, "%s/world.sav", dir);
    FILE *f = fopen(path, "wb");
    REQUIRE(f);
    fputs("the previous save", f);
    fclose(f);
    CHECK_EQ_U64(opool_save_many_file(cpools(p), 2, path), OPOOL_ECORRUPT);
    char back[64] = "";
    f = fopen(path, "rb");
    REQUIRE(f);
    size_t got = fread(back, 1, sizeof back - 1, f);
    fclose(f);
    back[got] = '\0';
    CHECK(strcmp(back, "the previous save") == 0);
    CHECK_EQ_U64(temp_dir_files(dir, true), 1); /* the temporary file was removed */
#endif
    opool_destroy(p[0]);
    opool_destroy(p[1]);
}

/* ---- all or nothing ------------------------------------------------------ */

/* Loads img into descs over c, expecting want; every out NULL, nothing
 * leaked, no fini. */
static void check_failed_load(const opool_desc *d, uint32_t n, const unsigned char *img,
                              size_t size, counting *c, opool_status want, int line) {
    opool *out[8];
    for (uint32_t i = 0; i < n; i++) out[i] = BAD_OUT;
    hk.finis = 0;
    opool_status st = load_from(out, d, n, img, size);
    if (st == OPOOL_OK)
        for (uint32_t i = 0; i < n; i++) {
            opool_destroy(out[i]);
            out[i] = NULL;
            hk.finis = 0; /* a loaded world's destroy runs fini, as it should */
        }
    if (st != want || !all_null(out, n) || c->blocks != 0 || hk.finis != 0) {
        fprintf(stderr, "  (line %d: status %s, want %s; blocks %ld, finis %d)\n", line,
                opool_status_str(st), opool_status_str(want), c->blocks, hk.finis);
        CHECK_EQ_U64(st, want);
        CHECK(all_null(out, n));
        CHECK_EQ_U64(c->blocks, 0);
        CHECK_EQ_U64(hk.finis, 0);
    }
}

TEST(every_allocation_failure_of_a_world_load_is_enomem_with_nothing_built) {
    counting c;
    opool_desc d[NP];
    stream s;
    size_t start[NP + 1];
    REQUIRE(saved_fixture(&c, d, &s, start));
    REQUIRE(c.blocks == 0);
    long calls = 0;
    for (long k = 0;; k++) {
        c.calls = 0;
        c.fail_only = k;
        opool *out[NP] = {BAD_OUT, BAD_OUT, BAD_OUT};
        hk.finis = 0;
        opool_status st = load_from(out, d, NP, s.data, s.size);
        if (st == OPOOL_OK) {
            for (int i = 0; i < NP; i++) opool_destroy(out[i]);
            calls = k;
            break;
        }
        CHECK_EQ_U64(st, OPOOL_ENOMEM);
        CHECK(all_null(out, NP));
        CHECK_EQ_U64(c.blocks, 0);
        CHECK_EQ_U64(hk.finis, 0);
        CHECK(strcmp(opool_last_load_error()->check, "memory") == 0);
        if (k > 1000) break;
    }
    CHECK(calls > 6); /* buffer, bitmaps, three pools' storage */
    CHECK_EQ_U64(c.blocks, 0);
    CHECK_EQ_U64(c.bad_frees, 0);
    stream_free(&s);
}

TEST(every_truncation_of_a_world_image_is_corrupt_with_nothing_built) {
    counting c;
    opool_desc d[NP];
    stream s;
    size_t start[NP + 1];
    REQUIRE(saved_fixture(&c, d, &s, start));
    for (size_t len = 0; len < s.size; len++) {
        check_failed_load(d, NP, s.data, len, &c, OPOOL_ECORRUPT, __LINE__);
        CHECK(strcmp(opool_last_load_error()->check, "truncated") == 0);
        CHECK_EQ_U64(opool_last_load_error()->found, len);
        check_named(d, section_of(start, len), len, __LINE__); /* where the input ended */
    }
    check_failed_load(d, NP, s.data, s.size, &c, OPOOL_OK, __LINE__);
    stream_free(&s);
}

TEST(every_flipped_bit_of_a_world_image_is_corrupt_with_nothing_built) {
    counting c;
    opool_desc d[NP];
    stream s;
    size_t start[NP + 1];
    REQUIRE(saved_fixture(&c, d, &s, start));
    unsigned char *b = (unsigned char *)malloc(s.size);
    REQUIRE(b);
    for (size_t bit = 0; bit < s.size * 8; bit++) {
        memcpy(b, s.data, s.size);
        b[bit / 8] ^= (unsigned char)(1u << (bit % 8));
        check_failed_load(d, NP, b, s.size, &c, OPOOL_ECORRUPT, __LINE__);
        /* the damaged pool, or none; in the header's count, the count */
        uint32_t named = opool_last_load_error()->pool;
        if (named != UINT32_MAX) check_named(d, section_of(start, bit / 8), bit / 8, __LINE__);
        if (named == UINT32_MAX) check_named(d, UINT32_MAX, bit / 8, __LINE__);
        if (bit / 8 >= 12 && bit / 8 < 16 && get_le(b + 12, 4) > NP) {
            CHECK(strcmp(opool_last_load_error()->check, "pools") == 0);
            CHECK_EQ_U64(opool_last_load_error()->found, get_le(b + 12, 4));
        }
    }
    free(b);
    stream_free(&s);
}

TEST(a_desc_mismatch_in_the_last_pool_is_einval_with_nothing_built) {
    counting c;
    opool_desc d[NP];
    stream s;
    size_t start[NP + 1];
    REQUIRE(saved_fixture(&c, d, &s, start));
    d[2].object_size = 12;
    d[2].report = hk_report;
    check_failed_load(d, NP, s.data, s.size, &c, OPOOL_EINVAL, __LINE__);
    CHECK_EQ_U64(hk.reports, 1);
    CHECK_EQ_U64(hk.last_report, OPOOL_EINVAL);
    CHECK(hk.report_pool_null);
    CHECK(strcmp(hk.line, "opool: load of pool 2 of 3 \"sparks\": object_size: the image has 8, "
                          "the desc 12") == 0);
    const opool_load_error *e = opool_last_load_error();
    CHECK_EQ_U64(e->status, OPOOL_EINVAL);
    CHECK_EQ_U64(e->pool, 2);
    CHECK(strcmp(e->check, "object_size") == 0);
    CHECK_EQ_U64(e->expected, 12);
    CHECK_EQ_U64(e->found, 8);
    CHECK_EQ_U64(hk.loads, 0); /* no load_object ran before the descs were checked */
    stream_free(&s);
}

TEST(a_rejected_object_finis_exactly_the_objects_already_rebuilt) {
    counting c;
    opool_desc d[NP];
    stream s;
    size_t start[NP + 1];
    REQUIRE(saved_fixture(&c, d, &s, start));
    hooks_reset();
    hk.load_fail_at = 4;
    opool *out[NP] = {BAD_OUT, BAD_OUT, BAD_OUT};
    CHECK_EQ_U64(load_from(out, d, NP, s.data, s.size), OPOOL_ECORRUPT);
    CHECK(all_null(out, NP));
    CHECK_EQ_U64(hk.finis, 4); /* pool 1's objects 0..3; pool 0 and 2 have no fini */
    CHECK_EQ_U64(c.blocks, 0);
    CHECK(strcmp(opool_last_load_error()->message,
                 "opool: load of pool 1 of 3 \"bullets\": load_object rejected object 4 of 15") ==
          0);
    stream_free(&s);
}

/* ---- world and pool images do not mix ------------------------------------ */

TEST(a_pool_image_and_a_world_image_are_told_apart) {
    opool_desc d = quiet_desc(8, 4, 0x1000);
    opool *p = NULL;
    REQUIRE(opool_create(&p, &d) == OPOOL_OK);
    stream one = saved_pool(p), many = saved_world(&p, 1);
    opool *out = BAD_OUT;
    CHECK_EQ_U64(load_from(&out, &d, 1, one.data, one.size), OPOOL_ECORRUPT);
    CHECK(out == NULL);
    CHECK(strcmp(opool_last_load_error()->message,
                 "opool: load of a world of 1 pool: magic: the image is one pool's (load it with "
                 "opool_load), not a world") == 0);
    stream s = stream_of(many.data, many.size);
    out = BAD_OUT;
    CHECK_EQ_U64(opool_load(&out, &d, stream_read, &s), OPOOL_ECORRUPT);
    CHECK(out == NULL);
    CHECK(strcmp(opool_last_load_error()->message,
                 "opool: load: magic: the image is a world of several pools (load it with "
                 "opool_load_many)") == 0);
    opool_destroy(p);
    stream_free(&one);
    stream_free(&many);
}

/* ---- the line of every check --------------------------------------------- */

/* A world of two pools, 16-byte objects: pool 0 fixed of 4, pool 1 growable
 * 4..32 "b", with one live object each. */
static stream two_pools(opool_desc d[2]) {
    d[0] = quiet_desc(16, 4, 0x1000);
    d[1] = quiet_desc(16, 4, 0x2000);
    d[0].name = "a";
    d[1].name = "b";
    d[1].on_full = OPOOL_FULL_GROW;
    d[1].max_capacity = 32;
    opool *p[2] = {NULL, NULL};
    stream s = stream_new();
    if (opool_create(&p[0], &d[0]) != OPOOL_OK || opool_create(&p[1], &d[1]) != OPOOL_OK) return s;
    opool_handle h;
    memset(opool_alloc(p[0], &h), 1, 16);
    memset(opool_alloc(p[1], &h), 2, 16);
    CHECK_EQ_U64(opool_save_many(cpools(p), 2, stream_write, &s), OPOOL_OK);
    opool_destroy(p[0]);
    opool_destroy(p[1]);
    return s;
}

/* Loads the image with d[0..n) reporting to hk; checks the status, the
 * line given to the report, and that the record says the same. */
static void check_line(const opool_desc *dd, uint32_t n, const unsigned char *b, size_t size,
                       opool_status want, const char *line, int at) {
    opool_desc d[2];
    for (uint32_t i = 0; i < n; i++) {
        d[i] = dd[i];
        d[i].report = hk_report;
    }
    hooks_reset();
    opool *out[2] = {BAD_OUT, BAD_OUT};
    opool_status st = load_from(out, d, n, b, size);
    bool ok = st == want && hk.reports == 1 && hk.last_report == want &&
              strcmp(hk.line, line) == 0 && strcmp(opool_last_load_error()->message, line) == 0 &&
              all_null(out, n);
    if (!ok) {
        fprintf(stderr,
                "  (line %d: status %s, want %s; reports %d; line\n    \"%s\", want\n    \"%s\")\n",
                at, opool_status_str(st), opool_status_str(want), hk.reports, hk.line, line);
        CHECK(ok);
    }
}

TEST(each_load_check_reports_its_field_expected_and_found) {
    opool_desc d[2];
    stream s = two_pools(d);
    REQUIRE(s.size > 0);
    unsigned char *b = (unsigned char *)malloc(s.size + 1);
    REQUIRE(b);
    size_t sec1 = 16 + 136 + 4 * 8 + 16; /* pool 1's section */

    opool_desc e[2] = {d[0], d[1]};
    e[0].object_size = 24;
    check_line(e, 2, s.data, s.size, OPOOL_EINVAL,
               "opool: load of pool 0 of 2 \"a\": object_size: the image has 16, the desc 24",
               __LINE__);
    e[0] = d[0];
    e[0].object_align = 64;
    char align_line[128]; /* the image has the default: alignof(max_align_t), 8 on wasm32 */
    snprintf(align_line, sizeof align_line,
             "opool: load of pool 0 of 2 \"a\": object_align: the image has %u, the desc 64",
             (unsigned)_Alignof(max_align_t));
    check_line(e, 2, s.data, s.size, OPOOL_EINVAL, align_line, __LINE__);
    e[0] = d[0];
    e[1].capacity = 8;
    check_line(e, 2, s.data, s.size, OPOOL_EINVAL,
               "opool: load of pool 1 of 2 \"b\": capacity: the image has 4, the desc 8", __LINE__);
    e[1] = d[1];
    e[1].max_capacity = 64;
    check_line(e, 2, s.data, s.size, OPOOL_EINVAL,
               "opool: load of pool 1 of 2 \"b\": max_capacity: the image has 32, the desc 64",
               __LINE__);
    e[1] = d[1];
    e[1].load_object = hk_load;
    e[1].save_object = hk_save;
    check_line(e, 2, s.data, s.size, OPOOL_EINVAL,
               "opool: load of pool 1 of 2 \"b\": load_object: the image has 0, the desc 1",
               __LINE__);
    check_line(d, 1, s.data, s.size, OPOOL_EINVAL,
               "opool: load of a world of 1 pool: pools: the image has 2, the call 1", __LINE__);

    memcpy(b, s.data, s.size);
    b[s.size - 1] ^= 0x80;
    uint64_t hash = fnv(b, s.size - 8);
    char want[200];
    snprintf(want, sizeof want,
             "opool: load of a world of 2 pools: checksum: the image says 0x%016llx, its bytes "
             "hash to 0x%016llx",
             (unsigned long long)get_le(b + s.size - 8, 8), (unsigned long long)hash);
    check_line(d, 2, b, s.size, OPOOL_ECORRUPT, want, __LINE__);

    check_line(d, 2, s.data, s.size - 3, OPOOL_ECORRUPT,
               "opool: load of a world of 2 pools: truncated: the input ended after 389 "
               "bytes, the image needs 392",
               __LINE__);

    memcpy(b, s.data, s.size);
    put_le(b + 8, 2, 4);
    check_line(d, 2, b, s.size, OPOOL_ECORRUPT,
               "opool: load of a world of 2 pools: version: the image has 2, this library "
               "reads 1",
               __LINE__);

    memcpy(b, s.data, s.size);
    put_le(b + sec1 + 8, 7, 4); /* pool 1's own version */
    reseal(b, s.size);
    check_line(d, 2, b, s.size, OPOOL_ECORRUPT,
               "opool: load of pool 1 of 2 \"b\": version: the image has 7, this library reads 1",
               __LINE__);

    memcpy(b, s.data, s.size);
    put_le(b + sec1 + 68, 3, 4); /* pool 1's count above its live slots */
    reseal(b, s.size);
    check_line(d, 2, b, s.size, OPOOL_ECORRUPT,
               "opool: load of pool 1 of 2 \"b\": high_water: the image has 1, which no valid "
               "image holds",
               __LINE__);

    memcpy(b, s.data, s.size);
    put_le(b + 16 + 136 + 8, 0x1001, 4); /* pool 0's slot 1: odd (live) but free */
    reseal(b, s.size);
    check_line(d, 2, b, s.size, OPOOL_ECORRUPT,
               "opool: load of pool 0 of 2 \"a\": slot records: slot 1's generation or roster "
               "position is inconsistent",
               __LINE__);

    memcpy(b, "NOTOPOOL", 8);
    check_line(d, 2, b, s.size, OPOOL_ECORRUPT,
               "opool: load of a world of 2 pools: magic: the input is not an opool image",
               __LINE__);
    free(b);
    stream_free(&s);
}

/* A user's report: a cut inside the first pool's section named the second
 * pool; a pool count of 16386 named "pool 2 of 2" with the first pool's
 * name; a checksum failure carried the first pool's name. */
TEST(world_load_errors_name_the_damaged_pool_or_none) {
    opool_desc d[2];
    d[0] = quiet_desc(64, 100, 0x1000);
    d[1] = quiet_desc(16, 8, 0x2000);
    d[0].name = "big";
    d[1].name = "small";
    opool *p[2] = {NULL, NULL};
    REQUIRE(opool_create(&p[0], &d[0]) == OPOOL_OK);
    REQUIRE(opool_create(&p[1], &d[1]) == OPOOL_OK);
    opool_handle h;
    for (int i = 0; i < 100; i++) memset(opool_alloc(p[0], &h), i, 64);
    memset(opool_alloc(p[1], &h), 7, 16);
    stream s = saved_world(p, 2);
    stream one = saved_pool(p[0]);
    size_t big_end = 16 + one.size - 8; /* where big's section ends */
    REQUIRE(s.size > big_end && big_end > 1000);
    char want[200];

    snprintf(want, sizeof want,
             "opool: load of pool 0 of 2 \"big\": truncated: the input ended after 1000 bytes, "
             "the image needs %zu",
             big_end + 136);
    check_line(d, 2, s.data, 1000, OPOOL_ECORRUPT, want, __LINE__);
    CHECK_EQ_U64(opool_last_load_error()->pool, 0);
    snprintf(want, sizeof want,
             "opool: load of pool 1 of 2 \"small\": truncated: the input ended after %zu bytes, "
             "the image needs %zu",
             big_end + 136, s.size);
    check_line(d, 2, s.data, big_end + 136, OPOOL_ECORRUPT, want, __LINE__);

    unsigned char *b = (unsigned char *)malloc(s.size);
    REQUIRE(b);
    memcpy(b, s.data, s.size);
    b[13] ^= 0x40;
    check_line(d, 2, b, s.size, OPOOL_ECORRUPT,
               "opool: load of a world of 2 pools: pools: the header counts 16386, the call 2, "
               "and the image does not hold 16386",
               __LINE__);
    CHECK_EQ_U64(opool_last_load_error()->pool, UINT32_MAX);
    CHECK_EQ_U64(opool_last_load_error()->found, 16386);

    memcpy(b, s.data, s.size);
    b[big_end - 1] ^= 0x01; /* big's last object: only the checksum sees it */
    CHECK_EQ_U64(load_from((opool *[2]){NULL, NULL}, d, 2, b, s.size), OPOOL_ECORRUPT);
    CHECK(strncmp(opool_last_load_error()->message,
                  "opool: load of a world of 2 pools: checksum: the image says ", 60) == 0);
    CHECK_EQ_U64(opool_last_load_error()->pool, UINT32_MAX);

    free(b);
    stream_free(&one);
    stream_free(&s);
    opool_destroy(p[0]);
    opool_destroy(p[1]);
}

TEST(a_single_pool_load_names_the_failed_check) {
    opool_desc d = quiet_desc(24, 4, 0x1000);
    d.name = "enemies";
    opool *p = NULL;
    REQUIRE(opool_create(&p, &d) == OPOOL_OK);
    stream s = saved_pool(p);
    opool_desc e = d;
    e.object_size = 32;
    e.report = hk_report;
    hooks_reset();
    opool *q = BAD_OUT;
    CHECK_EQ_U64(opool_load(&q, &e, stream_read, &s), OPOOL_EINVAL);
    CHECK(q == NULL);
    CHECK_EQ_U64(hk.reports, 1);
    CHECK(strcmp(hk.line, "opool: load \"enemies\": object_size: the image has 24, the desc 32") ==
          0);
    CHECK_EQ_U64(opool_last_load_error()->pool, 0);
    e = d;
    e.capacity = 8;
    e.report = hk_report;
    s.pos = 0;
    CHECK_EQ_U64(opool_load(&q, &e, stream_read, &s), OPOOL_EINVAL);
    CHECK(strcmp(hk.line, "opool: load \"enemies\": capacity: the image has 4, the desc 8") == 0);
    opool_destroy(p);
    stream_free(&s);
}

#ifdef TEST_CAPTURE
/* The default report's line on stderr: what it printed while fn ran. */
static size_t captured_stderr(char *out, size_t size, void (*fn)(void)) {
#if defined(_WIN32)
    /* in the test's directory (tmpfile() writes to the drive's root, refused
     * without rights); text mode reads stderr's \r\n back as \n */
    FILE *f = fopen("stderr-capture.txt", "w+");
#else
    FILE *f = tmpfile();
#endif
    out[0] = '\0';
    if (f == NULL) return 0;
    stderr_redirect saved;
    size_t n = 0;
    if (stderr_redirect_begin(&saved, fileno(f))) {
        fn();
        stderr_redirect_end(&saved);
        rewind(f);
        n = fread(out, 1, size - 1, f);
        out[n] = '\0';
    }
    fclose(f);
#if defined(_WIN32)
    remove("stderr-capture.txt");
#endif
    return n;
}

static opool_status default_status;

static void load_with_default_report(void) {
    opool_desc d[2];
    stream s = two_pools(d);
    d[0].report = d[1].report = NULL;
    d[1].object_size = 32;
    opool *out[2];
    default_status = load_from(out, d, 2, s.data, s.size);
    stream_free(&s);
}

static void forward_report(opool *p, opool_status what, opool_handle h, void *user) {
    opool_default_report(p, what, h, user);
}

static void load_with_forwarding_report(void) {
    opool_desc d[2];
    stream s = two_pools(d);
    d[0].report = d[1].report = forward_report;
    d[0].capacity = 2;
    opool *out[2];
    default_status = load_from(out, d, 2, s.data, s.size);
    stream_free(&s);
}

static void load_missing_file(void) {
    opool_desc d = quiet_desc(8, 2, 0);
    d.report = NULL;
    opool *out = BAD_OUT;
    default_status = opool_load_many_file(&out, &d, 1, "/nonexistent-opool-dir/world.sav");
}

TEST(the_default_report_prints_the_line_on_stderr) {
    char buf[512];
    captured_stderr(buf, sizeof buf, load_with_default_report);
    CHECK_EQ_U64(default_status, OPOOL_EINVAL);
    CHECK(strcmp(buf, "opool: load of pool 1 of 2 \"b\": object_size: the image has 16, the desc "
                      "32\n") == 0);
    captured_stderr(buf, sizeof buf, load_with_forwarding_report);
    CHECK_EQ_U64(default_status, OPOOL_EINVAL);
    CHECK(strcmp(buf,
                 "opool: load of pool 0 of 2 \"a\": capacity: the image has 4, the desc 2\n") == 0);
    captured_stderr(buf, sizeof buf, load_missing_file);
    CHECK_EQ_U64(default_status, OPOOL_ENOENT);
    CHECK(strcmp(buf, "") == 0); /* a missing save is an expected outcome */
    CHECK(strcmp(opool_last_load_error()->check, "file") == 0);
}
#endif

/* ---- files --------------------------------------------------------------- */

#ifdef TEST_FILES
TEST(world_file_round_trip_missing_file_and_mismatch_are_told_apart) {
    char dir[64];
    REQUIRE(temp_dir(dir, sizeof dir, "world-dir"));
    char path[128];
    snprintf(path, sizeof path, "%s/world.sav", dir);
    counting c;
    memset(&c, 0, sizeof c);
    c.fail_from = c.fail_only = -1;
    opool_desc d[NP];
    world_descs(d, &c);
    hooks_reset();
    world w;
    REQUIRE(world_make(&w, d));
    opool *out[NP] = {BAD_OUT, BAD_OUT, BAD_OUT};
    CHECK_EQ_U64(opool_load_many_file(out, d, NP, path), OPOOL_ENOENT);
    CHECK(all_null(out, NP));
    CHECK_EQ_U64(opool_save_many_file(cpools(w.p), NP, path), OPOOL_OK);
    CHECK_EQ_U64(opool_load_many_file(out, d, NP, path), OPOOL_OK);
    for (int i = 0; i < NP; i++) {
        REQUIRE(out[i]);
        CHECK(same_image(w.p[i], out[i]));
        opool_destroy(out[i]);
    }
    opool_desc e[NP] = {d[0], d[1], d[2]};
    e[1].max_capacity = 128;
    CHECK_EQ_U64(opool_load_many_file(out, e, NP, path), OPOOL_EINVAL);
    CHECK(all_null(out, NP));
    CHECK(strcmp(opool_last_load_error()->check, "max_capacity") == 0);
    /* a pool image where a world is expected, and the other way round */
    CHECK_EQ_U64(opool_save_file(w.p[0], path), OPOOL_OK);
    CHECK_EQ_U64(opool_load_many_file(out, d, NP, path), OPOOL_ECORRUPT);
    CHECK(all_null(out, NP));
    /* bytes after the image */
    CHECK_EQ_U64(opool_save_many_file(cpools(w.p), NP, path), OPOOL_OK);
    FILE *f = fopen(path, "ab");
    REQUIRE(f);
    fputc(0, f);
    fclose(f);
    CHECK_EQ_U64(opool_load_many_file(out, d, NP, path), OPOOL_ECORRUPT);
    CHECK(strcmp(opool_last_load_error()->check, "trailing bytes") == 0);
    CHECK(all_null(out, NP));
    world_destroy(&w);
    CHECK_EQ_U64(temp_dir_files(dir, true), 1); /* no temporary file left behind */
    CHECK_EQ_U64(c.blocks, 0);
}
#endif

/* ---- worlds with side tables --------------------------------------------- */

#define NS 2 /* side tables in the standard world: names of pool 0's units, a set of pool 1's */

static const opool_side_layout side_layouts[NS] = {{24, 8}, {0, 1}};

/* The fixture's world and its tables, saved: *s. */
static bool saved_world_with_sides(counting *c, opool_desc d[NP], stream *s) {
    memset(c, 0, sizeof *c);
    c->fail_from = c->fail_only = -1;
    world_descs(d, c);
    hooks_reset();
    world w;
    if (!world_make(&w, d)) return false;
    opool_side *t[NS] = {NULL, NULL};
    for (int k = 0; k < NS; k++)
        if (opool_side_create(&t[k], side_layouts[k].value_size, side_layouts[k].value_align, 0))
            return false;
    for (uint32_t i = 0; i < opool_count(w.p[0]); i++) {
        char *name = (char *)opool_side_put(t[0], opool_live_handle(w.p[0], i));
        if (name) snprintf(name, 24, "unit %u", i);
    }
    for (uint32_t i = 0; i < opool_count(w.p[1]); i += 2)
        (void)opool_side_put(t[1], opool_live_handle(w.p[1], i));
    *s = stream_new();
    CHECK_EQ_U64(
        opool_save_world(cpools(w.p), NP, (const opool_side *const *)t, NS, stream_write, s),
        OPOOL_OK);
    for (int k = 0; k < NS; k++) opool_side_destroy(t[k]);
    world_destroy(&w);
    return true;
}

static opool_status load_world_from(opool **out, const opool_desc *d, opool_side **t,
                                    const unsigned char *b, size_t size) {
    stream s = stream_of(b, size);
    return opool_load_world(out, d, NP, t, side_layouts, NS, stream_read, &s);
}

TEST(a_world_with_side_tables_round_trips_whole) {
    counting c;
    opool_desc d[NP];
    stream s;
    REQUIRE(saved_world_with_sides(&c, d, &s));
    opool *out[NP];
    opool_side *t[NS];
    CHECK_EQ_U64(load_world_from(out, d, t, s.data, s.size), OPOOL_OK);
    REQUIRE(!all_null(out, NP) && t[0] && t[1]);
    CHECK_EQ_U64(opool_side_count(t[0]), opool_count(out[0]));
    for (uint32_t i = 0; i < opool_count(out[0]); i++) {
        char want[24];
        snprintf(want, sizeof want, "unit %u", i);
        const char *name = (const char *)opool_side_get(t[0], opool_live_handle(out[0], i));
        CHECK(name && strcmp(name, want) == 0);
    }
    CHECK_EQ_U64(opool_side_count(t[1]), (opool_count(out[1]) + 1) / 2);
    /* saved again: the same bytes */
    stream again = stream_new();
    CHECK_EQ_U64(
        opool_save_world(cpools(out), NP, (const opool_side *const *)t, NS, stream_write, &again),
        OPOOL_OK);
    CHECK(again.size == s.size && memcmp(again.data, s.data, s.size) == 0);
    /* the wrong number of tables, then none where some are saved */
    opool *o2[NP];
    opool_side *t2[NS];
    stream in = stream_of(s.data, s.size);
    CHECK_EQ_U64(opool_load_world(o2, d, NP, t2, side_layouts, 1, stream_read, &in), OPOOL_EINVAL);
    CHECK(all_null(o2, NP) && t2[0] == NULL);
    CHECK(strcmp(opool_last_load_error()->message,
                 "opool: load of a world of 3 pools: side tables: the image has 2, the call 1") ==
          0);
    in = stream_of(s.data, s.size);
    CHECK_EQ_U64(opool_load_many(o2, d, NP, stream_read, &in),
                 OPOOL_ECORRUPT); /* not a pools' world */
    /* a table whose layout is not the call's: the part is named */
    opool_side_layout other[NS] = {{32, 8}, {0, 1}};
    in = stream_of(s.data, s.size);
    CHECK_EQ_U64(opool_load_world(o2, d, NP, t2, other, NS, stream_read, &in), OPOOL_EINVAL);
    CHECK(all_null(o2, NP) && t2[0] == NULL && t2[1] == NULL);
    CHECK(strncmp(opool_last_load_error()->message, "opool: load of side table 0 of 2: value_size",
                  44) == 0);
    CHECK_EQ_U64(opool_last_load_error()->pool, 0);
    /* the arguments */
    CHECK_EQ_U64(opool_save_world(cpools(out), NP, NULL, 1, stream_write, &again), OPOOL_EINVAL);
    const opool_side *twice[2] = {t[0], t[0]};
    CHECK_EQ_U64(opool_save_world(cpools(out), NP, twice, 2, stream_write, &again), OPOOL_EINVAL);
    CHECK_EQ_U64(opool_load_world(NULL, d, NP, t2, side_layouts, NS, stream_read, &in),
                 OPOOL_EINVAL);
    CHECK_EQ_U64(opool_load_world(o2, d, NP, NULL, side_layouts, NS, stream_read, &in),
                 OPOOL_EINVAL);
    CHECK_EQ_U64(opool_load_world(o2, d, NP, t2, NULL, NS, stream_read, &in), OPOOL_EINVAL);
    stream_free(&again);
    for (int k = 0; k < NS; k++) opool_side_destroy(t[k]);
    for (int i = 0; i < NP; i++) opool_destroy(out[i]);
    CHECK_EQ_U64(c.blocks, 0);
    stream_free(&s);
}

/* Loads the world with sides, CHECKs the status, and that nothing is held. */
static void check_failed_world(const opool_desc *d, const unsigned char *b, size_t size,
                               counting *c, opool_status want, int line) {
    opool *out[NP];
    opool_side *t[NS];
    opool_status st = load_world_from(out, d, t, b, size);
    bool ok = st == want && all_null(out, NP) && t[0] == NULL && t[1] == NULL && c->blocks == 0;
    if (!ok) {
        fprintf(stderr, "  (line %d: status %s, want %s; blocks %ld)\n", line, opool_status_str(st),
                opool_status_str(want), c->blocks);
        CHECK(ok);
    }
}

TEST(every_truncation_flipped_bit_and_failed_allocation_of_a_world_with_sides_keeps_nothing) {
    counting c;
    opool_desc d[NP];
    stream s;
    REQUIRE(saved_world_with_sides(&c, d, &s));
    for (size_t len = 0; len < s.size; len++)
        check_failed_world(d, s.data, len, &c, OPOOL_ECORRUPT, __LINE__);
    unsigned char *b = (unsigned char *)malloc(s.size);
    REQUIRE(b);
    for (size_t bit = 0; bit < s.size * 8; bit++) {
        memcpy(b, s.data, s.size);
        b[bit / 8] ^= (unsigned char)(1u << (bit % 8));
        /* the header's counts are the call's business: EINVAL */
        bool count = bit / 8 >= 12 && bit / 8 < 20;
        check_failed_world(d, b, s.size, &c, count ? OPOOL_EINVAL : OPOOL_ECORRUPT, __LINE__);
    }
    for (long n = 0; n < 1000; n++) { /* each pool allocation failing, from the n-th on */
        c.calls = 0;
        c.fail_from = n;
        opool *out[NP];
        opool_side *t[NS];
        opool_status st = load_world_from(out, d, t, s.data, s.size);
        c.fail_from = -1;
        if (st == OPOOL_OK) {
            for (int k = 0; k < NS; k++) opool_side_destroy(t[k]);
            for (int i = 0; i < NP; i++) opool_destroy(out[i]);
            CHECK(n > 6);
            break;
        }
        CHECK_EQ_U64(st, OPOOL_ENOMEM);
        CHECK(all_null(out, NP) && t[0] == NULL && t[1] == NULL);
        CHECK_EQ_U64(c.blocks, 0);
    }
    free(b);
    stream_free(&s);
}

#ifdef TEST_FILES
TEST(a_world_with_side_tables_saves_to_a_file_atomically) {
    char dir[64];
    REQUIRE(temp_dir(dir, sizeof dir, "world-sides"));
    char path[128];
    snprintf(path, sizeof path, "%s/world.sav", dir);
    counting c;
    opool_desc d[NP];
    stream s;
    REQUIRE(saved_world_with_sides(&c, d, &s));
    opool *out[NP];
    opool_side *t[NS];
    CHECK_EQ_U64(opool_load_world_file(out, d, NP, t, side_layouts, NS, path), OPOOL_ENOENT);
    CHECK_EQ_U64(load_world_from(out, d, t, s.data, s.size), OPOOL_OK);
    CHECK_EQ_U64(opool_save_world_file(cpools(out), NP, (const opool_side *const *)t, NS, path),
                 OPOOL_OK);
    for (int k = 0; k < NS; k++) opool_side_destroy(t[k]);
    for (int i = 0; i < NP; i++) opool_destroy(out[i]);
    CHECK_EQ_U64(opool_load_world_file(out, d, NP, t, side_layouts, NS, path), OPOOL_OK);
    REQUIRE(t[0] != NULL);
    stream again = stream_new();
    CHECK_EQ_U64(
        opool_save_world(cpools(out), NP, (const opool_side *const *)t, NS, stream_write, &again),
        OPOOL_OK);
    CHECK(again.size == s.size && memcmp(again.data, s.data, s.size) == 0);
    for (int k = 0; k < NS; k++) opool_side_destroy(t[k]);
    for (int i = 0; i < NP; i++) opool_destroy(out[i]);
    FILE *f = fopen(path, "ab");
    REQUIRE(f);
    fputc(0, f);
    fclose(f);
    CHECK_EQ_U64(opool_load_world_file(out, d, NP, t, side_layouts, NS, path), OPOOL_ECORRUPT);
    CHECK(strcmp(opool_last_load_error()->check, "trailing bytes") == 0);
    CHECK(all_null(out, NP) && t[0] == NULL && t[1] == NULL);
    CHECK_EQ_U64(opool_load_world_file(out, d, NP, t, side_layouts, NS, NULL), OPOOL_EINVAL);
    CHECK_EQ_U64(temp_dir_files(dir, true), 1);
    CHECK_EQ_U64(c.blocks, 0);
    stream_free(&again);
    stream_free(&s);
}
#endif

/* ---- randomized: worlds against each pool's own image --------------------- */

TEST(random_worlds_load_as_their_pools_save) {
    rng r = {42};
    for (int round = 0; round < 200; round++) {
        uint32_t n = 1 + rng_below(&r, 5);
        counting c;
        memset(&c, 0, sizeof c);
        c.fail_from = c.fail_only = -1;
        opool_desc d[5];
        opool *p[5], *out[5];
        for (uint32_t i = 0; i < n; i++) {
            d[i] = quiet_desc(1 + rng_below(&r, 40), 1 + rng_below(&r, 12), (uint32_t)rng_next(&r));
            d[i].allocator =
                (opool_allocator){.alloc = counting_alloc, .free = counting_free, .ctx = &c};
            if (rng_chance(&r, 50)) {
                d[i].on_full = OPOOL_FULL_GROW;
                d[i].max_capacity = d[i].capacity + rng_below(&r, 100);
            }
            if (rng_chance(&r, 20)) d[i].object_align = (size_t)1 << rng_below(&r, 7);
            REQUIRE(opool_create(&p[i], &d[i]) == OPOOL_OK);
            opool_handle live[256];
            uint32_t nlive = 0, ops = rng_below(&r, 200);
            for (uint32_t k = 0; k < ops; k++) {
                if (nlive > 0 && (nlive == 256 || rng_chance(&r, 40))) {
                    uint32_t j = rng_below(&r, nlive);
                    CHECK_EQ_U64(opool_free(p[i], live[j]), OPOOL_OK);
                    live[j] = live[--nlive];
                } else {
                    unsigned char *o = (unsigned char *)opool_alloc(p[i], &live[nlive]);
                    if (o == NULL) continue;
                    for (size_t b = 0; b < d[i].object_size; b++)
                        o[b] = (unsigned char)rng_next(&r);
                    nlive++;
                }
            }
            if (rng_chance(&r, 20)) (void)opool_shrink(p[i]);
        }
        stream s = saved_world(p, n);
        CHECK_EQ_U64(opool_load_many(out, d, n, stream_read, &s), OPOOL_OK);
        for (uint32_t i = 0; i < n; i++) {
            REQUIRE(out[i]);
            CHECK(same_image(p[i], out[i]));
            opool_destroy(out[i]);
            opool_destroy(p[i]);
        }
        CHECK_EQ_U64(c.blocks, 0);
        stream_free(&s);
    }
}

int main(void) {
    RUN(world_round_trip_restores_every_pool_exactly);
    RUN(world_image_is_a_header_each_pools_section_and_one_checksum);
    RUN(a_world_of_one_pool_round_trips);
    RUN(save_many_rejects_no_pools_a_null_pool_and_the_same_pool_twice);
    RUN(load_many_rejects_null_arguments_and_no_pools_with_every_out_null);
    RUN(save_many_stops_at_a_short_write_with_eio);
    RUN(save_many_with_a_failing_save_object_is_corrupt_and_keeps_the_old_file);
    RUN(every_allocation_failure_of_a_world_load_is_enomem_with_nothing_built);
    RUN(every_truncation_of_a_world_image_is_corrupt_with_nothing_built);
    RUN(every_flipped_bit_of_a_world_image_is_corrupt_with_nothing_built);
    RUN(a_desc_mismatch_in_the_last_pool_is_einval_with_nothing_built);
    RUN(a_rejected_object_finis_exactly_the_objects_already_rebuilt);
    RUN(a_pool_image_and_a_world_image_are_told_apart);
    RUN(each_load_check_reports_its_field_expected_and_found);
    RUN(world_load_errors_name_the_damaged_pool_or_none);
    RUN(a_world_with_side_tables_round_trips_whole);
    RUN(every_truncation_flipped_bit_and_failed_allocation_of_a_world_with_sides_keeps_nothing);
    RUN(a_single_pool_load_names_the_failed_check);
#ifdef TEST_CAPTURE
    RUN(the_default_report_prints_the_line_on_stderr);
#endif
#ifdef TEST_FILES
    RUN(world_file_round_trip_missing_file_and_mismatch_are_told_apart);
    RUN(a_world_with_side_tables_saves_to_a_file_atomically);
#endif
    RUN(random_worlds_load_as_their_pools_save);
    return test_summary();
}
