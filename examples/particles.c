/*
 * particles.c -- the classic particle system, on an opool pool.
 *
 * A fixed pool of particles (OPOOL_FULL_FAIL). Every frame a fountain emits a
 * few particles and now and then an explosion emits a few hundred, more than
 * the pool has room for: those allocations fail, the pool counts them and
 * reports each exhaustion episode through desc.report at its 1st, 2nd, 4th,
 * 8th... failure; an episode ends when a quarter of the slots is free again.
 * Every live
 * particle is moved each frame, and the ones whose life has run out are freed
 * inside the backward iteration over the live roster. Every SORT_EVERY frames
 * the roster is sorted first, so that frame's walk goes through memory in
 * address order.
 *
 * A few particles are "tracked": the program keeps their handles across
 * frames, as a game keeps the handle of an object it does not own. Once a
 * tracked particle expires its handle is rejected (opool_get returns NULL),
 * and it stays rejected after the slot has been handed to a new particle.
 *
 * The program keeps its own tally (live count, allocs, frees, failures, high
 * water, exhaustion episodes, rejected handles), checks the pool against it
 * and exits 1 on any mismatch. It is deterministic: a fixed-seed xorshift
 * generator, no clock, no libm.
 *
 *   cc -std=c11 -O2 -Iinclude examples/particles.c src/opool*.c -o particles
 */
#include "opool.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum {
    CAPACITY = 1024,     /* particles the pool can hold */
    FRAMES = 600,        /* ten seconds at 60 frames per second */
    SORT_EVERY = 50,     /* frames between two opool_sort calls */
    TRACKED = 4,         /* handles kept across frames */
    FOUNTAIN_MAX = 8,    /* fountain particles per frame: 0 .. FOUNTAIN_MAX - 1 */
    EXPLOSION_ODDS = 60, /* one frame in EXPLOSION_ODDS, on average, explodes */
    EXPLOSION_MIN = 200, /* particles per explosion: EXPLOSION_MIN .. +EXPLOSION_SPAN - 1 */
    EXPLOSION_SPAN = 300,
    REPORT_EVERY = 100, /* frames between two progress lines */
    SHOW_REUSE = 3      /* stale-handle demonstrations printed in full */
};

#define DT (1.0f / 60.0f)
#define GRAVITY (-9.81f)

struct particle {
    float x, y, vx, vy;
    float life;      /* seconds left */
    uint32_t color;  /* 0xRRGGBBAA; alpha fades with life */
    uint32_t serial; /* birth order: 1, 2, 3, ... */
    uint32_t stamp;  /* last frame (+1) that visited it: catches double visits */
    int32_t tracker; /* index into sim.tracked, or -1 */
};

struct tracked {
    bool in_use;
    bool dead;
    opool_handle h;
    uint32_t serial;
    uint32_t died; /* frame of death, once dead */
};

struct sim {
    uint32_t rng;
    uint32_t frame;
    uint32_t serial;
    /* the program's own tally, checked against the pool */
    uint32_t live, high_water;
    uint64_t allocs, frees, failed, rejected, episodes;
    uint64_t exhausted; /* failed allocs of the open exhaustion episode; 0: none open */
    uint64_t full_reports, expected_full_reports, other_reports;
    struct tracked tracked[TRACKED];
    uint32_t tracked_total, tracked_expired, reuse_seen;
    uint32_t sorted_frames;
    unsigned failures;
};

/* ---- self-checks ---------------------------------------------------------- */

#define CHECK(s, cond) check_((s), (cond), #cond, __LINE__)

static void check_(struct sim *s, bool ok, const char *what, int line) {
    if (!ok) {
        fprintf(stderr, "particles.c:%d: frame %" PRIu32 ": check failed: %s\n", line, s->frame,
                what);
        s->failures++;
    }
}

/* ---- deterministic randomness -------------------------------------------- */

static uint32_t xorshift32(struct sim *s) {
    uint32_t x = s->rng;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return s->rng = x;
}

/* uniform in [lo, hi) */
static float uniform(struct sim *s, float lo, float hi) {
    return lo + (hi - lo) * (float)(xorshift32(s) >> 8) * (1.0f / 16777216.0f);
}

/* uniform in [0, n) */
static uint32_t below(struct sim *s, uint32_t n) { return xorshift32(s) % n; }

/* ---- the pool's report callback -------------------------------------------- */

static void on_report(opool *p, opool_status what, opool_handle h, void *user) {
    struct sim *s = user;
    (void)h;
    if (what == OPOOL_EFULL) {
        s->full_reports++;
        printf("frame %3" PRIu32 ": pool full (%" PRIu32
               " live): dropping particles until some expire\n",
               s->frame, opool_count(p));
    } else {
        s->other_reports++; /* the rejected frees this program makes on purpose */
    }
}

/* ---- spawning -------------------------------------------------------------- */

static struct particle *spawn(opool *pool, struct sim *s, opool_handle *h) {
    struct particle *pt = opool_alloc(pool, h);
    if (pt == NULL) {
        s->failed++;
        if (s->exhausted++ == 0) s->episodes++;
        /* the pool reports an episode's 1st, 2nd, 4th, 8th... failure */
        if ((s->exhausted & (s->exhausted - 1)) == 0) s->expected_full_reports++;
        return NULL;
    }
    s->allocs++;
    if (++s->live > s->high_water) s->high_water = s->live;
    pt->serial = ++s->serial;
    pt->stamp = 0;
    pt->tracker = -1;
    return pt;
}

static void fountain(opool *pool, struct sim *s) {
    uint32_t n = below(s, FOUNTAIN_MAX);
    for (uint32_t k = 0; k < n; k++) {
        opool_handle h;
        struct particle *pt = spawn(pool, s, &h);
        if (pt == NULL) continue;
        pt->x = 0.0f;
        pt->y = 0.0f;
        pt->vx = uniform(s, -1.5f, 1.5f);
        pt->vy = uniform(s, 7.0f, 10.0f);
        pt->life = uniform(s, 1.5f, 3.0f);
        pt->color = 0x40a0ffffu;

        /* start tracking this one if a tracker is free */
        for (int32_t t = 0; t < TRACKED; t++) {
            struct tracked *tr = &s->tracked[t];
            if (tr->in_use) continue;
            tr->in_use = true;
            tr->dead = false;
            tr->h = h;
            tr->serial = pt->serial;
            pt->tracker = t;
            s->tracked_total++;
            break;
        }
    }
}

static void explosion(opool *pool, struct sim *s) {
    uint32_t n = EXPLOSION_MIN + below(s, EXPLOSION_SPAN);
    float cx = uniform(s, -20.0f, 20.0f), cy = uniform(s, 10.0f, 20.0f);
    for (uint32_t k = 0; k < n; k++) {
        struct particle *pt = spawn(pool, s, NULL);
        if (pt == NULL) continue; /* counted by the pool and by spawn() */
        float vx, vy;
        do { /* a direction uniform in the disc, without libm */
            vx = uniform(s, -1.0f, 1.0f);
            vy = uniform(s, -1.0f, 1.0f);
        } while (vx * vx + vy * vy > 1.0f);
        pt->x = cx;
        pt->y = cy;
        pt->vx = vx * 8.0f;
        pt->vy = vy * 8.0f;
        pt->life = uniform(s, 0.5f, 2.0f);
        pt->color = 0xff8020ffu;
    }
}

/* ---- the frame update: animate, free the expired ones ---------------------- */

static void expire(opool *pool, struct sim *s, struct particle *pt, opool_handle h) {
    if (pt->tracker >= 0) {
        struct tracked *tr = &s->tracked[pt->tracker];
        CHECK(s, tr->in_use && !tr->dead && opool_handle_eq(tr->h, h) && tr->serial == pt->serial);
        tr->dead = true;
        tr->died = s->frame;
        s->tracked_expired++;
    }
    opool_status st = opool_free(pool, h);
    CHECK(s, st == OPOOL_OK);
    if (st == OPOOL_OK) {
        s->frees++;
        s->live--;
        /* a quarter of the slots free again: the episode is over */
        if (s->live <= CAPACITY - (CAPACITY + 3) / 4) s->exhausted = 0;
    }
}

static void update(opool *pool, struct sim *s, bool sorted) {
    uint32_t n = opool_count(pool), visited = 0, last_index = UINT32_MAX;
    CHECK(s, n == s->live);

    /* the backward loop over the live list, with pt and its handle h */
    OPOOL_FOREACH(pool, struct particle, pt, h) {
        CHECK(s, pt != NULL && opool_get(pool, h) == pt);
        CHECK(s, pt->stamp != s->frame + 1); /* each live object is visited once */
        pt->stamp = s->frame + 1;
        visited++;

        /* After opool_sort the roster is in slot order, so walking it
         * backwards meets strictly decreasing indices. Freeing at i moves an
         * already-visited entry into i, so the order ahead stays intact. */
        if (sorted) CHECK(s, opool_handle_index(h) < last_index);
        last_index = opool_handle_index(h);

        pt->life -= DT;
        if (pt->life <= 0.0f) {
            expire(pool, s, pt, h); /* safe: only entries at positions >= i move */
            continue;
        }
        pt->vy += GRAVITY * DT;
        pt->x += pt->vx * DT;
        pt->y += pt->vy * DT;
        if (pt->y < 0.0f) { /* bounce, losing half the speed */
            pt->y = -pt->y;
            pt->vy = -pt->vy * 0.5f;
        }
        uint32_t alpha = (uint32_t)(pt->life > 1.0f ? 255.0f : pt->life * 255.0f);
        pt->color = (pt->color & 0xffffff00u) | alpha;
    }

    CHECK(s, visited == n);
    CHECK(s, opool_count(pool) == s->live);
}

/* ---- tracked handles ------------------------------------------------------- */

static void check_tracked(opool *pool, struct sim *s) {
    for (int32_t t = 0; t < TRACKED; t++) {
        struct tracked *tr = &s->tracked[t];
        if (!tr->in_use) continue;
        struct particle *pt = opool_get(pool, tr->h);
        if (!tr->dead) {
            CHECK(s, pt != NULL && pt->serial == tr->serial && pt->tracker == t);
            continue;
        }

        /* Dead: the handle must be rejected whatever became of its slot. */
        CHECK(s, pt == NULL && !opool_valid(pool, tr->h));
        uint32_t index = opool_handle_index(tr->h);
        struct particle *now = opool_at(pool, index);
        if (now == NULL) continue; /* slot still free: wait until it is reused */

        /* The slot was recycled for a new particle. Its handle carries a
         * newer generation; the old one still reaches nothing. */
        opool_handle nh = opool_handle_of(pool, now);
        CHECK(s, opool_handle_index(nh) == index);
        CHECK(s, opool_handle_generation(nh) != opool_handle_generation(tr->h));
        CHECK(s, now->serial != tr->serial);
        s->reuse_seen++;

        if (s->reuse_seen <= SHOW_REUSE) {
            printf("frame %3" PRIu32 ": tracked #%" PRIu32 " expired at frame %" PRIu32
                   "; slot %" PRIu32 " now holds #%" PRIu32 " (generation %" PRIu32 " -> %" PRIu32
                   "); old handle: %s\n",
                   s->frame, tr->serial, tr->died, index, now->serial,
                   opool_handle_generation(tr->h), opool_handle_generation(nh),
                   pt == NULL ? "rejected" : "NOT REJECTED");
        }
        if (s->reuse_seen == 1) {
            /* Freeing a stale handle is rejected and changes nothing; so is
             * freeing a handle the pool never issued. */
            opool_status st = opool_free(pool, tr->h);
            CHECK(s, st == OPOOL_ESTALE);
            s->rejected++;
            opool_status sn = opool_free(pool, OPOOL_NULL);
            CHECK(s, sn == OPOOL_EINVAL);
            s->rejected++;
            CHECK(s, opool_get(pool, nh) == now && opool_count(pool) == s->live);
            printf("frame %3" PRIu32 ": opool_free(old handle) = %s; opool_free(OPOOL_NULL) = %s\n",
                   s->frame, opool_status_str(st), opool_status_str(sn));
        }
        tr->in_use = false; /* track a new particle from the next fountain */
    }
}

/* ---- main ------------------------------------------------------------------ */

int main(void) {
    struct sim s = {.rng = 0x9e3779b9u};

    opool_desc desc = {
        .object_size = sizeof(struct particle),
        .object_align = _Alignof(struct particle),
        .capacity = CAPACITY,
        .on_full = OPOOL_FULL_FAIL,
        .flags = OPOOL_REPORT_UNRATIONED, /* every report, not at most 4 a second: counted */
        .report = on_report,
        .user = &s,
    };
    opool *pool;
    opool_status st = opool_create(&pool, &desc);
    if (st != OPOOL_OK) {
        fprintf(stderr, "opool_create: %s\n", opool_status_str(st));
        return 1;
    }
    CHECK(&s, opool_capacity(pool) == CAPACITY && opool_count(pool) == 0);

    for (s.frame = 0; s.frame < FRAMES; s.frame++) {
        fountain(pool, &s);
        if (below(&s, EXPLOSION_ODDS) == 0) explosion(pool, &s);

        bool sorted = s.frame % SORT_EVERY == 0;
        if (sorted) {
            opool_sort(pool);
            s.sorted_frames++;
        }
        update(pool, &s, sorted);
        check_tracked(pool, &s);

        if ((s.frame + 1) % REPORT_EVERY == 0)
            printf("frame %3" PRIu32 ": %4" PRIu32 " live, %5" PRIu64 " allocated so far, %4" PRIu64
                   " failed\n",
                   s.frame, opool_count(pool), s.allocs, s.failed);
    }
    s.frame = FRAMES;

    opool_stats stats;
    opool_get_stats(pool, &stats);
    printf("\n%" PRIu32 " tracked particles: %" PRIu32 " expired, %" PRIu32
           " of their slots seen reused, every stale handle rejected\n",
           s.tracked_total, s.tracked_expired, s.reuse_seen);
    printf("%" PRIu64 " exhaustion episodes, %" PRIu64 " reported; roster sorted on %" PRIu32
           " frames\n",
           s.episodes, s.full_reports, s.sorted_frames);
    printf("pool statistics:\n");
    printf("  capacity         %10" PRIu32 "\n", stats.capacity);
    printf("  count            %10" PRIu32 "\n", stats.count);
    printf("  high_water       %10" PRIu32 "\n", stats.high_water);
    printf("  allocs           %10" PRIu64 "\n", stats.allocs);
    printf("  frees            %10" PRIu64 "\n", stats.frees);
    printf("  failed_allocs    %10" PRIu64 "\n", stats.failed_allocs);
    printf("  rejected_handles %10" PRIu64 "\n", stats.rejected_handles);
    printf("size the pool with high_water = %" PRIu32 "%s\n", stats.high_water,
           stats.failed_allocs > 0
               ? " (it reached capacity and allocations failed: demand was higher)"
               : "");

    /* the pool's view must match the program's own tally exactly */
    CHECK(&s, stats.version == OPOOL_STATS_VERSION);
    CHECK(&s, stats.capacity == CAPACITY);
    CHECK(&s, stats.count == s.live && stats.count == opool_count(pool));
    CHECK(&s, stats.high_water == s.high_water);
    CHECK(&s, stats.allocs == s.allocs);
    CHECK(&s, stats.frees == s.frees);
    CHECK(&s, stats.allocs - stats.frees == stats.count);
    CHECK(&s, stats.failed_allocs == s.failed);
    CHECK(&s, stats.rejected_handles == s.rejected);
    CHECK(&s, s.full_reports == s.expected_full_reports);
    CHECK(&s, s.other_reports == s.rejected);
    /* the run must actually exercise what it claims to show */
    CHECK(&s, s.failed > 0 && s.episodes > 1 && s.reuse_seen > 0 && s.sorted_frames > 0);

    opool_destroy(pool);
    if (s.failures != 0) {
        fprintf(stderr, "particles: %u check(s) failed\n", s.failures);
        return 1;
    }
    return 0;
}
