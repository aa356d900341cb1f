/*
 * test_draw.c -- opool_draw_svg: a picture of a pool.
 *
 * The picture is read back: every run of cells (its rectangle and its
 * title), the legend's tallies and the live list's line, and compared with
 * the reference model (tests/model.h) slot by slot after random histories.
 *
 *   test_draw                               the tests
 *   test_draw --render RSVG PNGTOPNM DIR    renders pictures with a real SVG
 *                                           renderer (rsvg-convert, then
 *                                           netpbm's pngtopnm) and checks the
 *                                           image's size and colours
 */
#include "helpers.h"
#include "model.h"
#include "opool.h"
#include "stream.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- reading a picture back ---------------------------------------------- */

enum { LIVE, FREE, RETIRED, BACK, UNDRAWN };
static const char *const state_names[] = {"live", "free", "retired", "given back"};
static const char *const state_ids[] = {"live", "free", "retired", "back"}; /* patterns */

#define CELL 12
#define MAX_SLOTS 4096

typedef struct picture {
    unsigned width, height;
    uint32_t slots;                        /* slots drawn: [0, slots) */
    int state[MAX_SLOTS];                  /* UNDRAWN where no run covers the slot */
    unsigned cx[MAX_SLOTS], cy[MAX_SLOTS]; /* each cell's top left corner */
    uint32_t drawn_twice;
    uint32_t tally[4];
    uint32_t path[MAX_SLOTS]; /* the line's points, as slot indices */
    uint32_t path_len;
    uint32_t path_strays; /* points at no cell's centre */
    bool well_formed;     /* opens with <svg, closes with </svg> */
} picture;

static int state_named(const char *s, size_t n) {
    for (int k = 0; k < 4; k++)
        if (strlen(state_names[k]) == n && memcmp(s, state_names[k], n) == 0) return k;
    return -1;
}

static uint32_t slot_at(const picture *pic, double x, double y) {
    for (uint32_t i = 0; i < pic->slots; i++)
        if (pic->state[i] != UNDRAWN && pic->cx[i] + 5.5 == x && pic->cy[i] + 5.5 == y) return i;
    return UINT32_MAX;
}

/* Parses the svg text (NUL-terminated) into *pic. */
static void read_picture(const char *svg, picture *pic) {
    memset(pic, 0, sizeof *pic);
    for (uint32_t i = 0; i < MAX_SLOTS; i++) pic->state[i] = UNDRAWN;
    size_t len = strlen(svg);
    pic->well_formed =
        strncmp(svg, "<svg ", 5) == 0 && len > 7 && strcmp(svg + len - 7, "</svg>\n") == 0;
    sscanf(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%u\" height=\"%u\"", &pic->width,
           &pic->height);
    for (const char *r = strstr(svg, "<rect x="); r; r = strstr(r + 1, "<rect x=")) {
        unsigned x, y, w, h;
        char id[16];
        if (sscanf(r, "<rect x=\"%u\" y=\"%u\" width=\"%u\" height=\"%u\" fill=\"url(#%15[a-z])",
                   &x, &y, &w, &h, id) != 5)
            continue;
        const char *t = strstr(r, ">");
        if (strncmp(t, "><title>", 8) != 0) continue; /* a legend swatch */
        unsigned a, b;
        int used = 0;
        if (sscanf(t, "><title>slots %u-%u: %n", &a, &b, &used) != 2 || !used) {
            if (sscanf(t, "><title>slot %u: %n", &a, &used) != 1 || !used) continue;
            b = a;
        }
        const char *name = t + used, *end = strstr(name, "</title>");
        int st = state_named(name, (size_t)(end - name));
        CHECK(st >= 0);
        CHECK(st < 0 || strcmp(id, state_ids[st]) == 0); /* filled in its state's pattern */
        CHECK_EQ_U64(w, (b - a + 1) * CELL);
        CHECK_EQ_U64(h, CELL);
        for (unsigned i = a; i <= b && i < MAX_SLOTS && st >= 0; i++) {
            if (pic->state[i] != UNDRAWN) pic->drawn_twice++;
            pic->state[i] = st;
            pic->cx[i] = x + (i - a) * CELL;
            pic->cy[i] = y;
            if (i + 1 > pic->slots) pic->slots = i + 1;
        }
    }
    for (const char *t = strstr(svg, "<text class=\"tally\""); t;
         t = strstr(t + 1, "<text class=\"tally\"")) {
        const char *name = strchr(t, '>') + 1, *sp = strchr(name, '<');
        while (sp > name && *sp != ' ') sp--; /* the space before the count */
        int st = state_named(name, (size_t)(sp - name));
        CHECK(st >= 0);
        if (st >= 0) pic->tally[st] = (uint32_t)strtoul(sp + 1, NULL, 10);
    }
    const char *pts = strstr(svg, "<polyline class=\"order\"");
    if (pts) pts = strstr(pts, "points=\"") + 8;
    while (pts && *pts != '"') {
        char *e;
        double x = strtod(pts, &e);
        double y = strtod(e + 1, &e);
        uint32_t i = slot_at(pic, x, y);
        if (i == UINT32_MAX) pic->path_strays++;
        if (pic->path_len < MAX_SLOTS) pic->path[pic->path_len++] = i;
        pts = *e == ' ' ? e + 1 : e;
    }
}

/* The picture of p, as a NUL-terminated string (free it). */
static char *draw(const opool *p) {
    stream s = stream_new();
    CHECK_EQ_U64(opool_draw_svg(p, stream_write, &s), OPOOL_OK);
    stream_write(&s, "", 1);
    return (char *)s.data;
}

/* The model's state of slot i, as the picture should show it. */
static int model_state(const model *m, uint32_t i) {
    if (m->retired[i]) return RETIRED;
    if (i >= m->made) return FREE; /* not made yet: free, as drawn */
    if (!model_has_storage(m, i)) return BACK;
    return model_is_live(m, i) ? LIVE : FREE;
}

/* Checks p's picture against m slot by slot: states, tallies, the line. */
static void check_against_model(const opool *p, const model *m) {
    char *svg = draw(p);
    REQUIRE(svg != NULL);
    static picture pic;
    read_picture(svg, &pic);
    CHECK(pic.well_formed);
    CHECK_EQ_U64(pic.width, 2 * 12 + 64 * CELL);
    CHECK_EQ_U64(pic.slots, m->nslots);
    CHECK_EQ_U64(pic.drawn_twice, 0);
    uint32_t tally[4] = {0};
    for (uint32_t i = 0; i < m->nslots && i < MAX_SLOTS; i++) {
        int want = model_state(m, i);
        tally[want]++;
        if (pic.state[i] != want) {
            fprintf(stderr, "slot %u: drawn %d, model %d\n", i, pic.state[i], want);
            CHECK_EQ_U64(pic.state[i], want);
            break;
        }
        CHECK(pic.cy[i] + CELL <= pic.height);
    }
    for (int k = 0; k < 4; k++) CHECK_EQ_U64(pic.tally[k], tally[k]);
    CHECK_EQ_U64(pic.path_len, m->count < 4096 ? m->count : 4096);
    CHECK_EQ_U64(pic.path_strays, 0);
    for (uint32_t k = 0; k < pic.path_len; k++)
        if (pic.path[k] != model_live_slot(m, k)) {
            CHECK_EQ_U64(pic.path[k], model_live_slot(m, k));
            break;
        }
    free(svg);
}

/* ---- the tests --------------------------------------------------------------- */

TEST(draw_rejects_null_arguments) {
    opool_desc d = quiet_desc(8, 4, 0);
    opool *p;
    REQUIRE(opool_create(&p, &d) == OPOOL_OK);
    stream s = stream_new();
    CHECK_EQ_U64(opool_draw_svg(NULL, stream_write, &s), OPOOL_EINVAL);
    CHECK_EQ_U64(opool_draw_svg(p, NULL, &s), OPOOL_EINVAL);
    CHECK_EQ_U64(s.writes, 0);
    opool_destroy(p);
}

/* Each fresh slot is free, the legend counts them, and there is no line. */
TEST(a_fresh_pool_is_all_free) {
    opool_desc d = quiet_desc(16, 100, 0);
    opool *p;
    REQUIRE(opool_create(&p, &d) == OPOOL_OK);
    char *svg = draw(p);
    REQUIRE(svg != NULL);
    static picture pic;
    read_picture(svg, &pic);
    CHECK(pic.well_formed);
    CHECK_EQ_U64(pic.slots, 100);
    CHECK_EQ_U64(pic.tally[FREE], 100);
    CHECK_EQ_U64(pic.tally[LIVE], 0);
    CHECK_EQ_U64(pic.path_len, 0);
    CHECK(strstr(svg, "<polyline") == NULL);
    /* 100 free slots in rows of 64: two runs, one per row */
    CHECK(strstr(svg, "<title>slots 0-63: free</title>") != NULL);
    CHECK(strstr(svg, "<title>slots 64-99: free</title>") != NULL);
    CHECK(strstr(svg, "pool (unnamed): 0 live, capacity 100,") != NULL);
    CHECK(strstr(svg, "not grown") == NULL);
    free(svg);
    opool_destroy(p);
}

/* Drawing reads the pool and changes nothing: its image is the same after. */
TEST(drawing_changes_nothing) {
    opool_desc d = quiet_desc(8, 50, 7);
    opool *p;
    REQUIRE(opool_create(&p, &d) == OPOOL_OK);
    opool_handle h[30];
    for (int i = 0; i < 30; i++) REQUIRE(opool_alloc(p, &h[i]) != NULL);
    for (int i = 0; i < 30; i += 3) CHECK_EQ_U64(opool_free(p, h[i]), OPOOL_OK);
    stream before = stream_new(), after = stream_new();
    REQUIRE(opool_save(p, stream_write, &before) == OPOOL_OK);
    free(draw(p));
    REQUIRE(opool_save(p, stream_write, &after) == OPOOL_OK);
    CHECK_EQ_U64(before.size, after.size);
    CHECK(before.size == after.size && memcmp(before.data, after.data, before.size) == 0);
    stream_free(&before);
    stream_free(&after);
    opool_destroy(p);
}

/* Every point at which the output can be cut: OPOOL_EIO, no write after the
 * short one, and what was written is the picture's beginning. */
TEST(a_short_write_is_eio_and_the_last_write) {
    opool_desc d = quiet_desc(8, 600, 1);
    d.name = "cut";
    opool *p;
    REQUIRE(opool_create(&p, &d) == OPOOL_OK);
    for (int i = 0; i < 400; i++) REQUIRE(opool_alloc(p, NULL) != NULL);
    for (uint32_t i = 400; i-- > 0;)
        if (i % 3 == 0) CHECK_EQ_U64(opool_free(p, opool_live_handle(p, i)), OPOOL_OK);
    stream whole = stream_new();
    REQUIRE(opool_draw_svg(p, stream_write, &whole) == OPOOL_OK);
    CHECK(whole.writes > 3); /* enough output to cut between buffers */
    for (size_t cut = 0; cut < whole.size; cut += cut < 64 ? 1 : 997) {
        stream s = stream_new();
        s.fail_after = cut;
        CHECK_EQ_U64(opool_draw_svg(p, stream_write, &s), OPOOL_EIO);
        CHECK_EQ_U64(s.writes_after_short, 0);
        CHECK_EQ_U64(s.size, cut);
        CHECK(cut == 0 || memcmp(s.data, whole.data, cut) == 0);
        stream_free(&s);
    }
    stream_free(&whole);
    opool_destroy(p);
}

static size_t largest_write;
static size_t note_size(void *ctx, const void *data, size_t n) {
    if (n > largest_write) largest_write = n;
    return stream_write(ctx, data, n);
}

TEST(writes_come_in_buffers_of_at_most_4_kib) {
    opool_desc d = quiet_desc(8, 3000, 1);
    opool *p;
    REQUIRE(opool_create(&p, &d) == OPOOL_OK);
    for (int i = 0; i < 3000; i++) REQUIRE(opool_alloc(p, NULL) != NULL);
    for (uint32_t i = 3000; i-- > 0;)
        if (i % 2) CHECK_EQ_U64(opool_free(p, opool_live_handle(p, i)), OPOOL_OK);
    stream s = stream_new();
    largest_write = 0;
    CHECK_EQ_U64(opool_draw_svg(p, note_size, &s), OPOOL_OK);
    CHECK(largest_write > 0 && largest_write <= 4096);
    CHECK(s.size > 100000); /* 3000 one-slot runs */
    stream_free(&s);
    opool_destroy(p);
}

TEST(the_name_is_escaped) {
    opool_desc d = quiet_desc(8, 4, 1);
    d.name = "a<b>&\"c\"\x01\xc3\xa9";
    opool *p;
    REQUIRE(opool_create(&p, &d) == OPOOL_OK);
    char *svg = draw(p);
    REQUIRE(svg != NULL);
    CHECK(strstr(svg, "pool \"a&lt;b&gt;&amp;&quot;c&quot;???\": 0 live") != NULL);
    free(svg);
    opool_destroy(p);
}

/* A growing pool: chunks drawn one below the other, given-back slots, the
 * chunks not grown in one line, and the line follows the live list. */
TEST(chunks_given_back_and_not_grown) {
    opool_desc d = quiet_desc(8, 32, 5);
    d.on_full = OPOOL_FULL_GROW;
    d.max_capacity = 1000;
    opool *p;
    REQUIRE(opool_create(&p, &d) == OPOOL_OK);
    opool_handle h[100];
    for (int i = 0; i < 100; i++) REQUIRE(opool_alloc(p, &h[i]) != NULL);
    for (int i = 32; i < 100; i++) CHECK_EQ_U64(opool_free(p, h[i]), OPOOL_OK);
    CHECK_EQ_U64(opool_shrink(p), 96); /* chunks 1 [32, 64) and 2 [64, 128) */
    char *svg = draw(p);
    REQUIRE(svg != NULL);
    static picture pic;
    read_picture(svg, &pic);
    CHECK_EQ_U64(pic.slots, 128);
    CHECK_EQ_U64(pic.tally[LIVE], 32);
    CHECK_EQ_U64(pic.tally[BACK], 96);
    CHECK(strstr(svg, "<text x=\"12\" y=\"89\">chunk 0: slots 0-31</text>") != NULL);
    CHECK(strstr(svg, "chunk 1: slots 32-63</text>") != NULL);
    CHECK(strstr(svg, "chunk 2: slots 64-127</text>") != NULL);
    CHECK(strstr(svg, ">chunks 3-5 (slots 128-999) not grown</text>") != NULL);
    CHECK(strstr(svg, ": 32 live, capacity 32, high water 100, 128 slot records, 3 of 6 chunks "
                      "grown") != NULL);
    for (uint32_t k = 0; k < 32; k++) CHECK_EQ_U64(pic.path[k], k);
    free(svg);
    opool_destroy(p);
}

/* Past 4096 live objects the line stops, and the legend says so. */
TEST(the_line_joins_the_first_4096) {
    opool_desc d = quiet_desc(0, 5000, 1);
    opool *p;
    REQUIRE(opool_create(&p, &d) == OPOOL_OK);
    for (int i = 0; i < 4500; i++) REQUIRE(opool_alloc(p, NULL) != NULL);
    char *svg = draw(p);
    REQUIRE(svg != NULL);
    CHECK(strstr(svg, "live list order (first 4096 of 4500)") != NULL);
    const char *pts = strstr(svg, "points=\"");
    REQUIRE(pts != NULL);
    uint32_t n = 1;
    for (const char *q = pts + 8; *q != '"'; q++) n += *q == ' ';
    CHECK_EQ_U64(n, 4096);
    free(svg);
    opool_destroy(p);
}

/* Random histories of alloc, free, sort, shrink, clear and fast reuse
 * (which retires slots): the picture shows what the model holds. */
TEST(random_histories_match_the_model) {
    rng r = {42};
    for (int round = 0; round < 60; round++) {
        opool_desc d = quiet_desc(8, 1 + rng_below(&r, 200), (uint32_t)rng_next(&r));
        bool grows = rng_chance(&r, 60);
        if (grows) {
            d.on_full = OPOOL_FULL_GROW;
            d.max_capacity = d.capacity + 1 + rng_below(&r, 1500);
        }
        /* RETIRE_ON_WRAP with compact handles of 2^20 indices: 12
         * generation bits, a slot retires after 2048 lives */
        if (rng_chance(&r, 30)) {
            d.flags |= OPOOL_RETIRE_ON_WRAP;
            d.on_full = OPOOL_FULL_GROW;
            d.max_capacity = 1u << 20;
        }
        opool *p;
        REQUIRE(opool_create(&p, &d) == OPOOL_OK);
        static model m;
        REQUIRE(model_init(&m, &d, d.salt));
        for (int step = 0; step < 40; step++) {
            uint32_t op = rng_below(&r, 100);
            model_begin(&m);
            if (op < 45) {
                uint32_t n = rng_below(&r, 100);
                for (uint32_t k = 0;
                     k < n && (m.count < model_capacity(&m) || m.nslots <= MAX_SLOTS / 2); k++) {
                    uint64_t want;
                    model_begin(&m);
                    bool ok = model_alloc(&m, &want);
                    opool_handle got;
                    void *obj = opool_alloc(p, &got);
                    CHECK_EQ_U64(obj != NULL, ok);
                    CHECK_EQ_U64(got.bits, want);
                }
            } else if (op < 80 && m.count) {
                uint32_t n = rng_below(&r, m.count + 1);
                for (uint32_t k = 0; k < n && m.count; k++) {
                    uint64_t h = model_live_handle(&m, rng_below(&r, m.count));
                    model_begin(&m);
                    opool_handle ph = {h};
                    CHECK_EQ_U64(opool_free(p, ph), model_free(&m, h));
                }
            } else if (op < 88) {
                opool_sort(p);
                model_sort(&m);
            } else if (op < 94) {
                CHECK_EQ_U64(opool_shrink(p), model_shrink(&m));
            } else if (op < 96) {
                opool_clear(p);
                model_clear(&m);
            } else if (d.flags & OPOOL_RETIRE_ON_WRAP) {
                for (int k = 0; k < 2048 && m.count < model_capacity(&m); k++) {
                    uint64_t want;
                    model_begin(&m);
                    REQUIRE(model_alloc(&m, &want));
                    opool_handle got;
                    REQUIRE(opool_alloc(p, &got) != NULL);
                    CHECK_EQ_U64(opool_free(p, got), model_free(&m, want));
                }
            }
            check_against_model(p, &m);
            if (test__checks_failed) break;
        }
        opool_clear(p);
        opool_destroy(p);
        model_fini(&m);
        if (test__checks_failed) break;
    }
}

/* ---- rendering ------------------------------------------------------------------ */

/* An image read from a binary PPM (P6, maxval 255). */
typedef struct image {
    unsigned width, height;
    unsigned char *rgb;
} image;

static bool read_ppm(const char *path, image *im) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) return false;
    unsigned maxval = 0;
    bool ok = fscanf(f, "P6 %u %u %u", &im->width, &im->height, &maxval) == 3 && maxval == 255 &&
              fgetc(f) != EOF;
    size_t n = ok ? (size_t)im->width * im->height * 3 : 0;
    im->rgb = ok ? (unsigned char *)malloc(n) : NULL;
    ok = ok && im->rgb && fread(im->rgb, 1, n, f) == n;
    fclose(f);
    return ok;
}

static uint32_t pixels_of(const image *im, uint32_t rgb) {
    uint32_t n = 0;
    for (size_t k = 0; k < (size_t)im->width * im->height; k++) {
        const unsigned char *q = im->rgb + 3 * k;
        n += ((uint32_t)q[0] << 16 | (uint32_t)q[1] << 8 | q[2]) == rgb;
    }
    return n;
}

enum { GREEN = 0x2f9e44, GREY = 0xced4da, RED = 0xc92a2a, BLUE = 0x1c7ed6 };

/* Renders p's picture with the tools; checks it is the declared size. */
static bool render(const opool *p, char *const *tools, const char *dir, const char *name,
                   image *im) {
    char svg_path[512], ppm_path[512], cmd[2048];
    snprintf(svg_path, sizeof svg_path, "%s/%s.svg", dir, name);
    snprintf(ppm_path, sizeof ppm_path, "%s/%s.ppm", dir, name);
    char *svg = draw(p);
    FILE *f = fopen(svg_path, "wb");
    if (svg == NULL || f == NULL) return false;
    fputs(svg, f);
    fclose(f);
    static picture pic;
    read_picture(svg, &pic);
    free(svg);
    snprintf(cmd, sizeof cmd, "'%s' -f png '%s' | '%s' > '%s'", tools[0], svg_path, tools[1],
             ppm_path);
    if (system(cmd) != 0 || !read_ppm(ppm_path, im)) {
        fprintf(stderr, "render: %s failed\n", cmd);
        return false;
    }
    CHECK_EQ_U64(im->width, pic.width);
    CHECK_EQ_U64(im->height, pic.height);
    return true;
}

/* Each cell is an 11 x 11 square of its exact colour; the legend adds one
 * of each. A pool with nothing live has no line over its cells: the colours
 * count exactly. With objects live, the line covers some of their pixels,
 * and it is far longer in churned order than in sorted order. */
static int render_main(char *const *tools, const char *dir) {
    opool_desc d = quiet_desc(8, 200, 3);
    d.on_full = OPOOL_FULL_GROW;
    d.max_capacity = 1u << 20;
    d.flags = OPOOL_RETIRE_ON_WRAP;
    opool *p;
    if (opool_create(&p, &d) != OPOOL_OK) return 1;
    for (int k = 0; k < 3 * 2048; k++) { /* three slots retire */
        opool_handle h;
        opool_alloc(p, &h);
        opool_free(p, h);
    }
    image im;
    if (!render(p, tools, dir, "empty", &im)) return 1;
    opool_stats st;
    opool_get_stats(p, &st);
    CHECK_EQ_U64(st.retired, 3);
    CHECK_EQ_U64(pixels_of(&im, RED), 121 * (3 + 1));
    CHECK_EQ_U64(pixels_of(&im, GREY), 121 * (256 - 3 + 1)); /* chunk 0 is 256 slots */
    CHECK_EQ_U64(pixels_of(&im, GREEN), 121 * 1);
    CHECK_EQ_U64(pixels_of(&im, BLUE), 24); /* the legend's key only: no line */
    free(im.rgb);

    rng r = {9};
    for (int k = 0; k < 240; k++) opool_alloc(p, NULL);
    for (int round = 0; round < 20; round++) {
        for (uint32_t i = opool_count(p); i-- > 0;)
            if (rng_chance(&r, 30)) opool_free(p, opool_live_handle(p, i));
        while (opool_count(p) < 150) opool_alloc(p, NULL);
    }
    image churned, sorted;
    if (!render(p, tools, dir, "churned", &churned)) return 1;
    opool_sort(p);
    if (!render(p, tools, dir, "sorted", &sorted)) return 1;
    uint32_t live = opool_count(p);
    uint32_t g_churned = pixels_of(&churned, GREEN), g_sorted = pixels_of(&sorted, GREEN);
    /* the sorted line runs along the rows; the churned one across cells */
    CHECK(g_sorted <= 121 * (live + 1) && g_sorted >= 121 * (live + 1) * 2 / 3);
    CHECK(g_churned <= 121 * (live + 1) && g_churned >= 121 * (live + 1) / 4);
    uint32_t b_churned = pixels_of(&churned, BLUE), b_sorted = pixels_of(&sorted, BLUE);
    printf("render: %ux%u; %u live: green %u churned, %u sorted; line %u px churned, %u "
           "sorted\n",
           churned.width, churned.height, live, g_churned, g_sorted, b_churned, b_sorted);
    CHECK(b_sorted > 0 && b_churned > 2 * b_sorted);
    free(churned.rgb);
    free(sorted.rgb);
    opool_clear(p);
    opool_destroy(p);
    return test__checks_failed ? 1 : 0;
}

int main(int argc, char **argv) {
    if (argc == 5 && strcmp(argv[1], "--render") == 0) return render_main(argv + 2, argv[4]);
    RUN(draw_rejects_null_arguments);
    RUN(a_fresh_pool_is_all_free);
    RUN(drawing_changes_nothing);
    RUN(a_short_write_is_eio_and_the_last_write);
    RUN(writes_come_in_buffers_of_at_most_4_kib);
    RUN(the_name_is_escaped);
    RUN(chunks_given_back_and_not_grown);
    RUN(the_line_joins_the_first_4096);
    RUN(random_histories_match_the_model);
    return test_summary();
}
