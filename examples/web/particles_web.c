/*
 * particles_web.c -- particles on a web page: the simulation, in C, over an
 * opool pool (index.html and page.js draw it).
 *
 * A fixed pool of PARTICLES particles. Every frame a fountain emits a few
 * and now and then a firework bursts into a few hundred, more than the pool
 * has room for: those allocations fail and are counted. Every live particle
 * moves, and the ones whose life (in frames) has run out are freed inside
 * the backward walk over the live list. Deterministic: a fixed-seed
 * xorshift, lives counted in frames, the salt fixed; floats only place the
 * particles on the screen. So the tally after N frames (web_result) is the
 * same on every platform, and the page's check compares the browser's with
 * this file built natively.
 *
 * In the browser (emscripten): main creates the pool and returns, and
 * page.js calls web_frame once per animation frame, draws web_points, and
 * shows web_svg (opool_draw_svg's picture of the pool) beside the canvas.
 * Natively, or under node: `particles_web N` runs N frames and prints what
 * the page prints after N frames:
 *
 *   cc -std=c11 -O2 -Iinclude examples/web/particles_web.c src/opool*.c -o particles_web
 *   ./particles_web 300
 */
#include "opool.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__EMSCRIPTEN__)
#include <emscripten/em_macros.h>
#define WEB_EXPORT EMSCRIPTEN_KEEPALIVE /* page.js calls it */
#else
#define WEB_EXPORT
#endif

enum {
    PARTICLES = 512,    /* the pool's capacity, fixed */
    FOUNTAIN_MAX = 6,   /* fountain particles per frame: 0 .. FOUNTAIN_MAX - 1 */
    FIREWORK_ODDS = 90, /* one frame in FIREWORK_ODDS, on average, bursts */
    FIREWORK_MIN = 120, /* particles per burst: FIREWORK_MIN .. +FIREWORK_SPAN - 1 */
    FIREWORK_SPAN = 240,
    WIDTH = 480, /* the canvas, in pixels; y grows downwards */
    HEIGHT = 360
};

struct particle {
    float x, y, vx, vy;
    uint32_t life;   /* frames left */
    uint32_t serial; /* birth order: 1, 2, 3, ... */
    uint32_t kind;   /* 0 fountain, 1 firework: its colour on the page */
};

static struct {
    opool *pool;
    uint32_t rng, frame, serial;
    uint64_t allocs, frees, failed;
    float points[3 * PARTICLES]; /* x, y, kind of each live particle, for page.js */
    char *svg;                   /* web_svg's picture */
    size_t svg_len, svg_cap;
    char result[160];
} sim = {.rng = 0x2545f491u};

static uint32_t next_random(void) {
    uint32_t x = sim.rng;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return sim.rng = x;
}

/* uniform in [0, n) */
static uint32_t below(uint32_t n) { return next_random() % n; }

/* uniform in [lo, hi), from the same stream */
static float uniform(float lo, float hi) {
    return lo + (hi - lo) * (float)(next_random() >> 8) * (1.0f / 16777216.0f);
}

/* Counts what the pool reports instead of printing it: a burst into a full
 * pool is how this page is meant to run. */
static void quiet_report(opool *p, opool_status what, opool_handle h, void *user) {
    (void)p, (void)what, (void)h, (void)user;
}

static struct particle *spawn(uint32_t kind, uint32_t life) {
    struct particle *pt = opool_alloc(sim.pool, NULL);
    if (pt == NULL) {
        sim.failed++;
        return NULL;
    }
    sim.allocs++;
    pt->serial = ++sim.serial;
    pt->kind = kind;
    pt->life = life;
    return pt;
}

static void fountain(void) {
    for (uint32_t n = below(FOUNTAIN_MAX); n > 0; n--) {
        struct particle *pt = spawn(0, 60 + below(60));
        if (pt == NULL) continue;
        pt->x = WIDTH / 2;
        pt->y = HEIGHT;
        pt->vx = uniform(-1.2f, 1.2f);
        pt->vy = uniform(-9.0f, -6.0f);
    }
}

static void firework(void) {
    uint32_t n = FIREWORK_MIN + below(FIREWORK_SPAN);
    float cx = uniform(80, WIDTH - 80), cy = uniform(60, HEIGHT / 2);
    for (; n > 0; n--) {
        struct particle *pt = spawn(1, 30 + below(60));
        if (pt == NULL) continue;
        pt->x = cx;
        pt->y = cy;
        pt->vx = uniform(-3.0f, 3.0f);
        pt->vy = uniform(-3.0f, 3.0f);
    }
}

/* One frame: spawn, then move every live particle and free the expired. */
WEB_EXPORT uint32_t web_frame(void) {
    fountain();
    if (below(FIREWORK_ODDS) == 0) firework();
    OPOOL_FOREACH(sim.pool, struct particle, pt, h) {
        if (--pt->life == 0) {
            /* the backward walk: a free moves only entries already visited */
            if (opool_free(sim.pool, h) == OPOOL_OK) sim.frees++;
            continue;
        }
        pt->vy += 0.15f; /* gravity, in pixels per frame per frame */
        pt->x += pt->vx;
        pt->y += pt->vy;
        if (pt->y > HEIGHT) { /* bounce off the floor, losing half the speed */
            pt->y = 2 * HEIGHT - pt->y;
            pt->vy *= -0.5f;
        }
    }
    sim.frame++;
    return opool_count(sim.pool);
}

/* x, y and kind of each live particle, 3 floats each (web_frame's count of them). */
WEB_EXPORT const float *web_points(void) {
    uint32_t i = 0;
    OPOOL_FOREACH(sim.pool, struct particle, pt, h) {
        (void)h;
        sim.points[3 * i] = pt->x;
        sim.points[3 * i + 1] = pt->y;
        sim.points[3 * i + 2] = (float)pt->kind;
        i++;
    }
    return sim.points;
}

static size_t svg_write(void *ctx, const void *data, size_t size) {
    (void)ctx;
    if (sim.svg_len + size + 1 > sim.svg_cap) {
        size_t cap = 2 * (sim.svg_len + size + 1);
        char *bigger = realloc(sim.svg, cap);
        if (bigger == NULL) return 0; /* opool_draw_svg then fails with OPOOL_EIO */
        sim.svg = bigger;
        sim.svg_cap = cap;
    }
    memcpy(sim.svg + sim.svg_len, data, size);
    sim.svg_len += size;
    sim.svg[sim.svg_len] = '\0';
    return size;
}

/* The pool's picture now (opool_draw_svg), as text; NULL if it failed. */
WEB_EXPORT const char *web_svg(void) {
    sim.svg_len = 0;
    return opool_draw_svg(sim.pool, svg_write, NULL) == OPOOL_OK ? sim.svg : NULL;
}

/* The tally so far, one line; the checksum folds every live particle's
 * handle, serial and life, in no particular order. */
WEB_EXPORT const char *web_result(void) {
    uint64_t sum = 0;
    OPOOL_FOREACH(sim.pool, struct particle, pt, h) {
        sum += (h.bits ^ ((uint64_t)pt->serial << 20)) * 0x9e3779b97f4a7c15u + pt->life;
    }
    snprintf(sim.result, sizeof sim.result,
             "frame %" PRIu32 ": %" PRIu32 " live of %" PRIu32 ", %" PRIu64 " allocs, %" PRIu64
             " frees, %" PRIu64 " failed, checksum %016" PRIx64,
             sim.frame, opool_count(sim.pool), opool_capacity(sim.pool), sim.allocs, sim.frees,
             sim.failed, sum);
    return sim.result;
}

int main(int argc, char **argv) {
    opool_desc desc = {
        .name = "particles",
        .object_size = sizeof(struct particle),
        .capacity = PARTICLES,
        .on_full = OPOOL_FULL_FAIL,
        .salt = 0x5eed,
        .report = quiet_report,
    };
    opool_status st = opool_create(&sim.pool, &desc);
    if (st != OPOOL_OK) {
        fprintf(stderr, "opool_create: %s\n", opool_status_str(st));
        return 1;
    }
    if (argc < 2) return 0; /* the page: the pool stays, page.js runs the frames */

    /* N frames, then the lines the page writes: the tally, and the slots
     * its picture shows */
    long frames = strtol(argv[1], NULL, 10);
    for (long f = 0; f < frames; f++) web_frame();
    puts(web_result());
    printf("picture: %" PRIu32 " slots, %" PRIu32 " live\n", opool_capacity(sim.pool),
           opool_count(sim.pool));
    opool_destroy(sim.pool);
    return 0;
}
