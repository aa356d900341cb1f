/*
 * test_diag.c -- diagnostics, the same for every kind of object: what the
 * default reports print (exactly), when exhaustion is reported and when an
 * episode ends, the name in every line, overriding one finding while
 * keeping the default for the rest, the concurrent pool passing itself,
 * and the status texts (include/opool.h EXHAUSTION and ERRORS,
 * include/opool_mt.h, include/opool_heap.h).
 *
 * stderr is captured by pointing file descriptor 2 at a temporary file
 * while a test runs the default reports (POSIX, and Windows' C library);
 * elsewhere those tests say they are skipped.
 */
#if !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L /* dup, dup2, fileno */
#endif

#include "opool.h"
#include "opool_heap.h"
#include "opool_mt.h"
#include "aligned.h"
#include "helpers.h"
#include "stream.h"
#include "test.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__unix__) || defined(__APPLE__)
#include <pthread.h>
#include <sched.h>
#endif

#if defined(__unix__) || defined(__APPLE__) || defined(_WIN32)
#include "redirect.h"
#define HAVE_CAPTURE 1
#endif

/* pthread_create fails in a single-threaded WebAssembly build (no -pthread) */
#if (defined(__unix__) || defined(__APPLE__)) &&                                                   \
    !(defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__))
#define HAVE_THREADS 1
#endif

/* ---- capturing stderr ----------------------------------------------------- */

#ifdef HAVE_CAPTURE
typedef struct capture {
    FILE *file;
    stderr_redirect saved;
    bool on;
    char text[16384];
} capture;

static void capture_begin(capture *c) {
#if defined(_WIN32)
    /* a named file in the test's directory: tmpfile() writes to the root of
     * the drive (refused without rights), and text mode turns the \r\n that
     * stderr wrote back into \n */
    c->file = fopen("stderr-capture.txt", "w+");
#else
    c->file = tmpfile();
#endif
    c->on = c->file && stderr_redirect_begin(&c->saved, fileno(c->file));
}

/* Restores stderr; c->text holds what was written meanwhile. */
static void capture_end(capture *c) {
    if (c->on) stderr_redirect_end(&c->saved);
    c->text[0] = '\0';
    if (c->file == NULL) return;
    rewind(c->file);
    size_t n = fread(c->text, 1, sizeof c->text - 1, c->file);
    c->text[n] = '\0';
    fclose(c->file);
#if defined(_WIN32)
    remove("stderr-capture.txt");
#endif
}

/* Lines of text. */
static unsigned lines_of(const char *text) {
    unsigned n = 0;
    for (; *text; text++) n += *text == '\n';
    return n;
}

/* Splits text (a copy, in buf of size bytes) into its lines, at most max. */
static size_t split_lines(const char *text, char *buf, size_t size, char **line, size_t max) {
    snprintf(buf, size, "%s", text);
    size_t n = 0;
    for (char *t = buf; *t && n < max;) {
        char *end = strchr(t, '\n');
        if (end == NULL) break;
        *end = '\0';
        line[n++] = t;
        t = end + 1;
    }
    return n;
}

/* An exhaustion line that opens an episode (the others say "still"). */
static bool opens_episode(const char *line) { return strstr(line, " still ") == NULL; }

/* CHECKs what the default report printed (text) against the lines it would
 * print without its quota (want): each printed line is the next wanted one,
 * or a later one ending "[after N lines held back, M of them opening an
 * episode: at most 4 a second]" for the N it skipped; the first four are
 * never held back; a last line "...: destroyed with N exhaustion lines held
 * back, M of them opening an episode ..." counts the rest. Returns the
 * lines printed, the destroy's included. */
static size_t check_rationed(const char *text, const char *want) {
    static char gb[16384], wb[1 << 20];
    static char *got[256], *wl[8192];
    size_t ng = split_lines(text, gb, sizeof gb, got, 256);
    size_t kept = 0; /* a leak's line at destroy is not an exhaustion line */
    for (size_t g = 0; g < ng; g++)
        if (strstr(got[g], ": leak: destroyed with ") == NULL) got[kept++] = got[g];
    ng = kept;
    size_t nw = split_lines(want, wb, sizeof wb, wl, 8192);
    size_t w = 0;
    bool ok = true;
    for (size_t g = 0; g < ng && ok; g++) {
        unsigned long long held = 0, episodes = 0;
        const char *d = strstr(got[g], ": destroyed with ");
        size_t j = w;
        if (d != NULL) {
            ok = g + 1 == ng && sscanf(d, ": destroyed with %llu exhaustion lines held back, %llu",
                                       &held, &episodes) == 2;
            j = nw;
        } else {
            while (j < nw && strncmp(got[g], wl[j], strlen(wl[j])) != 0) j++;
            ok = j < nw;
            if (ok && strlen(got[g]) > strlen(wl[j]))
                ok = sscanf(got[g] + strlen(wl[j]),
                            " [after %llu lines held back, %llu of them opening an episode: at "
                            "most 4 a second]",
                            &held, &episodes) == 2;
        }
        unsigned long long opened = 0;
        for (size_t k = w; k < j; k++) opened += opens_episode(wl[k]);
        ok = ok && held == j - w && episodes == opened && (g >= 4 || j == g);
        if (!ok) fprintf(stderr, "  line %zu not as rationed: %s\n", g, got[g]);
        w = d ? j : j + 1;
    }
    ok = ok && w == nw; /* every wanted line printed or counted */
    if (!ok) fprintf(stderr, "  %zu of %zu wanted lines accounted for\n", w, nw);
    CHECK(ok);
    return ng;
}

/* CHECKs that got is want, printing both when not. */
static void check_text(const char *got, const char *want) {
    CHECK(strcmp(got, want) == 0);
    if (strcmp(got, want) != 0) fprintf(stderr, "  got:\n%s  wanted:\n%s", got, want);
}
#endif

/* ---- a recording report --------------------------------------------------- */

typedef struct recorder {
    unsigned reports;
    opool_status what[64];
    const void *self[64];
    uint64_t failed_allocs[64]; /* the pool's failed_allocs at each report */
} recorder;

static void record(recorder *r, opool_status what, const void *self, uint64_t failed) {
    if (r->reports < 64) {
        r->what[r->reports] = what;
        r->self[r->reports] = self;
        r->failed_allocs[r->reports] = failed;
    }
    r->reports++;
}

static void rec_report(opool *p, opool_status what, opool_handle h, void *user) {
    (void)h;
    opool_stats s;
    opool_get_stats(p, &s);
    record((recorder *)user, what, p, s.failed_allocs);
}

static opool_desc recorded(uint32_t capacity, recorder *r) {
    opool_desc d;
    memset(&d, 0, sizeof d);
    memset(r, 0, sizeof *r);
    d.object_size = 16;
    d.capacity = capacity;
    d.report = rec_report;
    d.flags |= OPOOL_REPORT_UNRATIONED; /* every report counted */
    d.user = r;
    return d;
}

static opool *create(const opool_desc *d) {
    opool *p = NULL;
    CHECK_EQ_U64(opool_create(&p, d), OPOOL_OK);
    return p;
}

/* ---- exhaustion episodes ------------------------------------------------ */

TEST(an_episode_is_reported_at_its_1st_2nd_4th_8th_failures) {
    recorder r;
    opool_desc d = recorded(2, &r);
    opool *p = create(&d);
    REQUIRE(p);
    CHECK(opool_alloc(p, NULL) && opool_alloc(p, NULL));
    for (int k = 0; k < 20; k++) CHECK(opool_alloc(p, NULL) == NULL);
    CHECK_EQ_U64(r.reports, 5);
    uint64_t at[5] = {1, 2, 4, 8, 16};
    for (unsigned k = 0; k < 5; k++) {
        CHECK_EQ_U64(r.what[k], OPOOL_EFULL);
        CHECK_EQ_PTR(r.self[k], p);
        CHECK_EQ_U64(r.failed_allocs[k], at[k]);
    }
    opool_destroy(p);
}

/* Capacity 8 recovers at 8 - ceil(8 / 4) = 6 live. */
TEST(an_episode_ends_only_when_a_quarter_of_the_slots_is_free) {
    recorder r;
    opool_desc d = recorded(8, &r);
    opool *p = create(&d);
    REQUIRE(p);
    opool_handle h[8];
    for (int k = 0; k < 8; k++) CHECK(opool_alloc(p, &h[k]) != NULL);
    CHECK(opool_alloc(p, NULL) == NULL); /* failure 1: reported */
    CHECK_EQ_U64(r.reports, 1);
    /* 7 live: not recovered, the next failures are the 2nd and the 3rd */
    CHECK_EQ_U64(opool_free(p, h[0]), OPOOL_OK);
    CHECK(opool_alloc(p, &h[0]) != NULL);
    CHECK(opool_alloc(p, NULL) == NULL);
    CHECK(opool_alloc(p, NULL) == NULL);
    CHECK_EQ_U64(r.reports, 2);
    /* 6 live: recovered; the next failure opens a new episode */
    CHECK_EQ_U64(opool_free(p, h[0]), OPOOL_OK);
    CHECK_EQ_U64(opool_free(p, h[1]), OPOOL_OK);
    CHECK(opool_alloc(p, &h[0]) && opool_alloc(p, &h[1]));
    CHECK(opool_alloc(p, NULL) == NULL);
    CHECK_EQ_U64(r.reports, 3);
    CHECK_EQ_U64(r.failed_allocs[2], 4);
    opool_destroy(p);
}

TEST(a_pool_of_one_slot_recovers_when_its_object_is_freed) {
    recorder r;
    opool_desc d = recorded(1, &r);
    opool *p = create(&d);
    REQUIRE(p);
    opool_handle h;
    CHECK(opool_alloc(p, &h) != NULL);
    CHECK(opool_alloc(p, NULL) == NULL);
    CHECK_EQ_U64(opool_free(p, h), OPOOL_OK);
    CHECK(opool_alloc(p, &h) != NULL);
    CHECK(opool_alloc(p, NULL) == NULL);
    CHECK_EQ_U64(r.reports, 2); /* two episodes, each reported at its first failure */
    opool_destroy(p);
}

/* A game's bullets: 8 spawned a frame, each living 10 frames, in a pool of
 * 64 kept at its budget for 600 frames: 960 failed allocs, one episode,
 * 10 lines. */
TEST(a_bullet_pool_held_at_its_budget_prints_a_handful_of_lines) {
#ifdef HAVE_CAPTURE
    opool_desc d;
    memset(&d, 0, sizeof d);
    d.object_size = sizeof(uint32_t);
    d.capacity = 64;
    d.name = "bullets";
    opool *p = create(&d);
    REQUIRE(p);
    capture c;
    capture_begin(&c);
    opool_stats s;
    for (uint32_t frame = 0; frame < 600; frame++) {
        for (uint32_t i = opool_count(p); i-- > 0;) {
            uint32_t *born = (uint32_t *)opool_live_object(p, i);
            if (frame - *born >= 10) opool_free(p, opool_live_handle(p, i));
        }
        for (int k = 0; k < 8; k++) {
            uint32_t *b = (uint32_t *)opool_alloc(p, NULL);
            if (b) *b = frame;
        }
    }
    opool_get_stats(p, &s);
    void *self = p;
    opool_destroy(p);
    capture_end(&c);
    CHECK_EQ_U64(s.failed_allocs, 960);
    char want[4096], *w = want;
    w += sprintf(w,
                 "opool: pool \"bullets\" (%p): full: alloc failed (64 of 64 live); reported "
                 "again at the 2nd, 4th, 8th... failure until at most 48 are live\n",
                 self);
    for (unsigned n = 2; n <= 512; n *= 2)
        w += sprintf(w,
                     "opool: pool \"bullets\" (%p): still full: %u allocs failed in this episode "
                     "(64 of 64 live)\n",
                     self, n);
    /* ten lines, or (in one second) four and the destroy's count of six */
    CHECK(check_rationed(c.text, want) >= 5);
#else
    printf("skipped a_bullet_pool_held_at_its_budget_prints_a_handful_of_lines: no capture\n");
#endif
}

/* A user's server: a pool at its budget that swings between full and
 * recovered opened an episode per swing, and printed a line for each. */
TEST(a_pool_swinging_between_full_and_recovered_prints_four_lines_a_second) {
#ifdef HAVE_CAPTURE
    opool_desc d;
    memset(&d, 0, sizeof d);
    d.object_size = 16;
    d.capacity = 64;
    d.name = "conns";
    opool *p = create(&d);
    REQUIRE(p);
    opool_handle h[64];
    for (int k = 0; k < 64; k++) CHECK(opool_alloc(p, &h[k]) != NULL);
    enum { SWINGS = 2000 };
    capture c;
    capture_begin(&c);
    time_t t0 = time(NULL);
    for (int e = 0; e < SWINGS; e++) {
        CHECK(opool_alloc(p, NULL) == NULL); /* opens an episode */
        for (int k = 0; k < 16; k++) CHECK_EQ_U64(opool_free(p, h[k]), OPOOL_OK); /* 48: ends it */
        for (int k = 0; k < 16; k++) CHECK(opool_alloc(p, &h[k]) != NULL);
    }
    time_t t1 = time(NULL);
    void *self = p;
    opool_destroy(p);
    capture_end(&c);
    static char want[SWINGS * 200];
    char *w = want;
    for (int e = 0; e < SWINGS; e++)
        w += sprintf(w,
                     "opool: pool \"conns\" (%p): full: alloc failed (64 of 64 live); reported "
                     "again at the 2nd, 4th, 8th... failure until at most 48 are live\n",
                     self);
    size_t lines = check_rationed(c.text, want);
    CHECK(lines >= 5 && lines <= 4 * (size_t)(t1 - t0 + 2) + 1);
#else
    printf("skipped a_pool_swinging_between_full_and_recovered_prints_four_lines_a_second\n");
#endif
}

#if defined(HAVE_CAPTURE) && defined(HAVE_THREADS)
/* Four threads with caches share a pool at its budget, handing objects to
 * each other through a shared ring and backing off when it is full. */
typedef struct handoff {
    opool_mt *pool;
    _Atomic uint64_t ring[32]; /* handle bits, 0: none */
    _Atomic unsigned next;
    _Atomic uint64_t failed;
} handoff;

static void *handoff_thread(void *arg) {
    handoff *x = (handoff *)arg;
    opool_mt_cache *c = opool_mt_cache_create(x->pool, 8);
    for (int k = 0; k < 4000; k++) {
        opool_handle h;
        bool got = opool_mt_cache_alloc(c, &h) != NULL;
        if (!got) atomic_fetch_add(&x->failed, 1);
        /* the object goes into the ring (full: a connection closes); what
         * it replaces is freed */
        unsigned at = atomic_fetch_add(&x->next, 1) % 32;
        opool_handle old = {atomic_exchange(&x->ring[at], got ? h.bits : 0)};
        if (old.bits) CHECK_EQ_U64(opool_mt_cache_free(c, old), OPOOL_OK);
        if (!got) sched_yield();
    }
    opool_mt_cache_destroy(c);
    return NULL;
}
#endif

TEST(a_concurrent_pool_at_its_budget_under_four_threads_prints_four_lines_a_second) {
#if defined(HAVE_CAPTURE) && defined(HAVE_THREADS)
    opool_desc d;
    memset(&d, 0, sizeof d);
    d.object_size = 64;
    d.capacity = 64;
    d.name = "conns";
    static handoff x;
    memset(&x, 0, sizeof x);
    REQUIRE(opool_mt_create(&x.pool, &d) == OPOOL_OK);
    opool_handle held[40]; /* the rest of the server's connections */
    for (int k = 0; k < 40; k++) CHECK(opool_mt_alloc(x.pool, &held[k]) != NULL);
    capture c;
    capture_begin(&c);
    time_t t0 = time(NULL);
    pthread_t t[4];
    for (int k = 0; k < 4; k++) REQUIRE(pthread_create(&t[k], NULL, handoff_thread, &x) == 0);
    for (int k = 0; k < 4; k++) pthread_join(t[k], NULL);
    time_t t1 = time(NULL);
    opool_mt_destroy(x.pool);
    capture_end(&c);
    size_t lines = lines_of(c.text);
    printf("  four threads at the budget: %llu failed allocs, %zu lines in %lds\n",
           (unsigned long long)atomic_load(&x.failed), lines, (long)(t1 - t0));
    CHECK(atomic_load(&x.failed) > 0);
    CHECK(lines >= 1 && lines <= 4 * (size_t)(t1 - t0 + 2) + 1);
    CHECK(strncmp(c.text, "opool: concurrent pool \"conns\" (", 32) == 0);
#else
    printf("skipped a_concurrent_pool_at_its_budget_under_four_threads_prints_four_lines_a_second: "
           "no capture or no threads\n");
#endif
}

/* ---- the default reports ---------------------------------------------- */

TEST(the_default_report_of_a_pool_without_a_name_gives_its_address) {
#ifdef HAVE_CAPTURE
    opool_desc d;
    memset(&d, 0, sizeof d);
    d.object_size = 8;
    d.capacity = 4;
    opool *p = create(&d);
    REQUIRE(p);
    for (int k = 0; k < 4; k++) CHECK(opool_alloc(p, NULL) != NULL);
    capture c;
    capture_begin(&c);
    CHECK(opool_alloc(p, NULL) == NULL);
    CHECK(opool_alloc(p, NULL) == NULL);
    capture_end(&c);
    char want[512];
    snprintf(want, sizeof want,
             "opool: pool %p: full: alloc failed (4 of 4 live); reported again at the 2nd, 4th, "
             "8th... failure until at most 3 are live\n"
             "opool: pool %p: still full: 2 allocs failed in this episode (4 of 4 live)\n",
             (void *)p, (void *)p);
    check_text(c.text, want);
    opool_destroy(p);
#else
    printf("skipped the_default_report_of_a_pool_without_a_name_gives_its_address: no capture\n");
#endif
}

TEST(the_default_report_is_silent_about_rejected_handles) {
#ifdef HAVE_CAPTURE
    opool_desc d;
    memset(&d, 0, sizeof d);
    d.object_size = 8;
    d.capacity = 4;
    d.name = "quiet";
    opool *p = create(&d);
    REQUIRE(p);
    opool_handle h;
    CHECK(opool_alloc(p, &h) != NULL);
    CHECK_EQ_U64(opool_free(p, h), OPOOL_OK);
    capture c;
    capture_begin(&c);
    CHECK_EQ_U64(opool_free(p, h), OPOOL_ESTALE);
    CHECK_EQ_U64(opool_free(p, OPOOL_NULL), OPOOL_EINVAL);
    capture_end(&c);
    check_text(c.text, "");
    opool_destroy(p);
#else
    printf("skipped the_default_report_is_silent_about_rejected_handles: no capture\n");
#endif
}

/* A report that handles one finding and hands the rest to the default. */
static void stale_counting_report(opool *p, opool_status what, opool_handle h, void *user) {
    if (what == OPOOL_ESTALE)
        ++*(int *)user;
    else
        opool_default_report(p, what, h, user);
}

TEST(a_report_can_handle_one_finding_and_keep_the_default_for_the_rest) {
#ifdef HAVE_CAPTURE
    int stale = 0;
    opool_desc d;
    memset(&d, 0, sizeof d);
    d.object_size = 8;
    d.capacity = 1;
    d.name = "mine";
    d.report = stale_counting_report;
    d.user = &stale;
    opool *p = create(&d);
    REQUIRE(p);
    opool_handle h;
    CHECK(opool_alloc(p, &h) != NULL);
    capture c;
    capture_begin(&c);
    CHECK(opool_alloc(p, NULL) == NULL);
    CHECK_EQ_U64(opool_free(p, handle(opool_handle_generation(h) + 2, 0)), OPOOL_ESTALE);
    capture_end(&c);
    CHECK_EQ_U64(stale, 1);
    char want[512];
    snprintf(want, sizeof want,
             "opool: pool \"mine\" (%p): full: alloc failed (1 of 1 live); reported again at the "
             "2nd, 4th, 8th... failure until at most 0 are live\n",
             (void *)p);
    check_text(c.text, want);
    opool_destroy(p);
#else
    printf("skipped a_report_can_handle_one_finding_and_keep_the_default_for_the_rest\n");
#endif
}

TEST(the_default_report_of_no_pool_names_none) {
#ifdef HAVE_CAPTURE
    capture c;
    capture_begin(&c);
    opool_default_report(NULL, OPOOL_EFULL, OPOOL_NULL, NULL);
    capture_end(&c);
    char want[512];
    snprintf(want, sizeof want,
             "opool: pool %p: full: alloc failed (0 of 0 live); reported again at the 2nd, 4th, "
             "8th... failure until at most 0 are live\n",
             (void *)NULL);
    check_text(c.text, want);
#else
    printf("skipped the_default_report_of_no_pool_names_none: no capture\n");
#endif
}

/* ---- the concurrent pool ---------------------------------------------- */

typedef struct mt_recorder {
    unsigned reports;
    opool_mt *self;
    opool_status what;
} mt_recorder;

static void mt_rec_report(opool_mt *p, opool_status what, opool_handle h, void *user) {
    (void)h;
    mt_recorder *r = (mt_recorder *)user;
    r->reports++;
    r->self = p;
    r->what = what;
}

TEST(a_concurrent_pool_passes_itself_to_report_mt) {
    mt_recorder r;
    memset(&r, 0, sizeof r);
    opool_desc d;
    memset(&d, 0, sizeof d);
    d.object_size = 8;
    d.capacity = 1;
    d.report_mt = mt_rec_report;
    d.flags |= OPOOL_REPORT_UNRATIONED; /* every report counted */
    d.user = &r;
    opool_mt *p = NULL;
    REQUIRE(opool_mt_create(&p, &d) == OPOOL_OK);
    opool_handle h;
    CHECK(opool_mt_alloc(p, &h) != NULL);
    CHECK(opool_mt_alloc(p, NULL) == NULL);
    CHECK_EQ_U64(r.reports, 1);
    CHECK_EQ_PTR(r.self, p);
    CHECK_EQ_U64(r.what, OPOOL_EFULL);
    CHECK_EQ_U64(opool_mt_free(p, handle(opool_handle_generation(h) + 2, 0)), OPOOL_ESTALE);
    CHECK_EQ_U64(r.reports, 2);
    CHECK_EQ_PTR(r.self, p);
    CHECK_EQ_U64(r.what, OPOOL_ESTALE);
    opool_mt_destroy(p);
}

TEST(a_concurrent_pool_held_full_prints_a_handful_of_lines) {
#ifdef HAVE_CAPTURE
    opool_desc d;
    memset(&d, 0, sizeof d);
    d.object_size = 8;
    d.capacity = 8;
    d.name = "jobs";
    opool_mt *p = NULL;
    REQUIRE(opool_mt_create(&p, &d) == OPOOL_OK);
    opool_handle h[8];
    for (int k = 0; k < 8; k++) CHECK(opool_mt_alloc(p, &h[k]) != NULL);
    capture c;
    capture_begin(&c);
    for (int k = 0; k < 100; k++) {
        CHECK(opool_mt_alloc(p, NULL) == NULL);
        /* one job done, one queued: never recovered */
        CHECK_EQ_U64(opool_mt_free(p, h[k % 8]), OPOOL_OK);
        CHECK(opool_mt_alloc(p, &h[k % 8]) != NULL);
    }
    /* six of eight live is a recovery: the next failure opens an episode */
    CHECK_EQ_U64(opool_mt_free(p, h[0]), OPOOL_OK);
    CHECK_EQ_U64(opool_mt_free(p, h[1]), OPOOL_OK);
    CHECK(opool_mt_alloc(p, &h[0]) && opool_mt_alloc(p, &h[1]));
    CHECK(opool_mt_alloc(p, NULL) == NULL);
    void *self = p;
    opool_mt_destroy(p);
    capture_end(&c);
    char want[2048], *w = want;
    const char *full = "opool: concurrent pool \"jobs\" (%p): full: alloc failed (8 of 8 live); "
                       "reported again at the 2nd, 4th, 8th... failure until at most 6 are live\n";
    w += sprintf(w, full, self);
    for (unsigned n = 2; n <= 64; n *= 2)
        w += sprintf(w,
                     "opool: concurrent pool \"jobs\" (%p): still full: %u allocs failed in this "
                     "episode (8 of 8 live)\n",
                     self, n);
    w += sprintf(w, full, self);
    CHECK(check_rationed(c.text, want) >= 5);
#else
    printf("skipped a_concurrent_pool_held_full_prints_a_handful_of_lines: no capture\n");
#endif
}

/* ---- leaks and sizes ------------------------------------------------------ */

/* opool_alloc, noting its line in *line: both __LINE__s are the line of
 * the macro's use. */
#define ALLOC_NOTING_LINE(p, h, line) (*(line) = __LINE__, opool_alloc(p, h))

/* "file:line" of this file. */
static const char *here(int line) {
    static char buf[4][600];
    static int next;
    char *b = buf[next++ % 4];
    snprintf(b, sizeof buf[0], "%s:%d", __FILE__, line);
    return b;
}

TEST(a_pool_tracking_sites_knows_where_each_live_object_was_allocated) {
    opool_desc d = quiet_desc(16, 8, 0x100);
    d.flags = OPOOL_TRACK_SITES;
    opool *p = create(&d);
    REQUIRE(p);
    opool_handle a, b, c, e;
    int la, lb, lc, le;
    CHECK(ALLOC_NOTING_LINE(p, &a, &la) != NULL);
    CHECK(ALLOC_NOTING_LINE(p, &b, &lb) != NULL);
    CHECK(ALLOC_NOTING_LINE(p, &c, &lc) != NULL);
    CHECK(strcmp(opool_alloc_site(p, a), here(la)) == 0);
    CHECK(strcmp(opool_alloc_site(p, b), here(lb)) == 0);
    CHECK(strcmp(opool_alloc_site(p, c), here(lc)) == 0);
    /* a freed object has none; its slot's next object has its own */
    CHECK_EQ_U64(opool_free(p, a), OPOOL_OK);
    CHECK(opool_alloc_site(p, a) == NULL);
    CHECK(ALLOC_NOTING_LINE(p, &e, &le) != NULL);
    CHECK_EQ_U64(opool_handle_index(e), opool_handle_index(a));
    CHECK(strcmp(opool_alloc_site(p, e), here(le)) == 0);
    /* no call site: the exported function, alloc_at; and a pool without the flag */
    void *(*alloc)(opool *, opool_handle *) = opool_alloc;
    opool_handle f;
    CHECK(alloc(p, &f) != NULL);
    CHECK(opool_alloc_site(p, f) == NULL);
    opool_handle g = {((uint64_t)(0x100 + 1) << 32) | 6};
    CHECK(opool_alloc_at(p, g) != NULL);
    CHECK(opool_alloc_site(p, g) == NULL);
    CHECK(opool_alloc_site(p, OPOOL_NULL) == NULL);
    CHECK(opool_alloc_site(NULL, b) == NULL);
    opool_clear(p);
    opool_destroy(p);
    d.flags = 0;
    p = create(&d);
    CHECK(opool_alloc(p, &a) != NULL);
    CHECK(opool_alloc_site(p, a) == NULL);
    opool_clear(p);
    opool_destroy(p);
}

/* What a report saw: the statuses and handles, and the line the default
 * would print (opool_default_report called from it, captured). */
typedef struct leak_seen {
    int reports;
    opool_status what;
    opool_handle h;
} leak_seen;

static void leak_report(opool *p, opool_status what, opool_handle h, void *user) {
    leak_seen *x = (leak_seen *)user;
    x->reports++;
    x->what = what;
    x->h = h;
    opool_default_report(p, what, h, user);
}

TEST(destroy_reports_the_objects_left_live_once_with_the_oldest_sites) {
#ifdef HAVE_CAPTURE
    opool_desc d;
    memset(&d, 0, sizeof d);
    d.object_size = 16;
    d.capacity = 8;
    d.name = "ships";
    leak_seen x = {0, OPOOL_OK, {0}};
    d.report = leak_report;
    d.user = &x;
    capture c;
    char want[2048];
    void *self;
    opool *p;
    /* with a live list, and without one (the live slots found in the records) */
    for (int nolist = 0; nolist < 2; nolist++) {
        d.flags = OPOOL_TRACK_SITES | (nolist ? OPOOL_NO_LIVE_LIST : 0);
        x.reports = 0;
        p = create(&d);
        REQUIRE(p);
        opool_handle h[6];
        int line[6];
        for (int k = 0; k < 6; k++) {
            CHECK(ALLOC_NOTING_LINE(p, &h[k], &line[k]) != NULL);
        }
        CHECK_EQ_U64(opool_free(p, h[0]), OPOOL_OK); /* the oldest goes: 1..5 stay */
        CHECK_EQ_U64(opool_free(p, h[2]), OPOOL_OK);
        self = p;
        capture_begin(&c);
        opool_destroy(p);
        capture_end(&c);
        CHECK_EQ_U64(x.reports, 1);
        CHECK_EQ_U64(lines_of(c.text), 1);
        CHECK_EQ_U64(x.what, OPOOL_ELEAK);
        CHECK_EQ_U64(x.h.bits, h[1].bits); /* the oldest live object */
        snprintf(want, sizeof want,
                 "opool: pool \"ships\" (%p): leak: destroyed with 4 objects live; the oldest "
                 "allocated at %s, %s, %s, %s\n",
                 self, here(line[1]), here(line[3]), here(line[4]), here(line[5]));
        check_text(c.text, want);
    }

    /* without the flag: the count, and how to learn more; none live: nothing */
    d.flags = 0;
    d.name = NULL;
    x.reports = 0;
    p = create(&d);
    REQUIRE(p);
    CHECK(opool_alloc(p, NULL) != NULL);
    self = p;
    capture_begin(&c);
    opool_destroy(p);
    capture_end(&c);
    snprintf(want, sizeof want,
             "opool: pool %p: leak: destroyed with 1 objects live (OPOOL_TRACK_SITES tells where "
             "they were allocated)\n",
             self);
    check_text(c.text, want);
    p = create(&d);
    opool_handle one;
    CHECK(opool_alloc(p, &one) != NULL);
    CHECK_EQ_U64(opool_free(p, one), OPOOL_OK);
    x.reports = 0;
    capture_begin(&c);
    opool_destroy(p);
    capture_end(&c);
    CHECK_EQ_U64(x.reports, 0);
    check_text(c.text, "");
#else
    printf("skipped destroy_reports_the_objects_left_live_once_with_the_oldest_sites\n");
#endif
}

static bool keep_none(void *obj, opool_handle h, void *user) {
    (void)obj, (void)h;
    ++*(int *)user;
    return false;
}

/* A pool without a live list refuses every loop over it with one line each
 * (sort, retain, OPOOL_FOREACH), through desc.report as OPOOL_EINVAL with
 * no handle; its other findings keep their own lines (a bad pointer stays
 * silent). */
TEST(loops_over_a_pool_without_a_live_list_are_refused_one_line_each) {
#ifdef HAVE_CAPTURE
    opool_desc d;
    memset(&d, 0, sizeof d);
    d.object_size = 16;
    d.capacity = 8;
    d.name = "ids";
    d.flags = OPOOL_NO_LIVE_LIST;
    opool *p = create(&d);
    REQUIRE(p);
    opool_handle h[3];
    for (int k = 0; k < 3; k++) CHECK(opool_alloc(p, &h[k]) != NULL);
    int kept = 0, bodies = 0;
    capture c;
    capture_begin(&c);
    opool_sort(p);
    CHECK_EQ_U64(opool_retain(p, keep_none, &kept), 0);
    OPOOL_FOREACH(p, char, obj, hh) bodies++;
    char junk[16];
    CHECK_EQ_U64(opool_free_object(p, junk), OPOOL_EINVAL);
    capture_end(&c);
    CHECK_EQ_U64(kept, 0);
    CHECK_EQ_U64(bodies, 0);
    CHECK_EQ_U64(opool_count(p), 3);
    for (int k = 0; k < 3; k++) CHECK(opool_valid(p, h[k]));
    char line[256], want[1024];
    snprintf(line, sizeof line,
             "opool: pool \"ids\" (%p): iteration refused: created with OPOOL_NO_LIVE_LIST, the "
             "pool keeps no live list\n",
             (void *)p);
    snprintf(want, sizeof want, "%s%s%s", line, line, line);
    check_text(c.text, want);
    for (int k = 0; k < 3; k++) CHECK_EQ_U64(opool_free(p, h[k]), OPOOL_OK);
    opool_destroy(p);
#else
    printf("skipped loops_over_a_pool_without_a_live_list_are_refused_one_line_each: no capture\n");
#endif
}

TEST(the_concurrent_pool_and_the_heap_report_what_is_left_live) {
#ifdef HAVE_CAPTURE
    opool_desc d;
    memset(&d, 0, sizeof d);
    d.object_size = 8;
    d.capacity = 8;
    d.name = "jobs";
    opool_mt *m = NULL;
    REQUIRE(opool_mt_create(&m, &d) == OPOOL_OK);
    opool_handle h;
    for (int k = 0; k < 3; k++) CHECK(opool_mt_alloc(m, &h) != NULL);
    d.flags = OPOOL_TRACK_SITES; /* the core pool's alone */
    opool_mt *refused = NULL;
    CHECK_EQ_U64(opool_mt_create(&refused, &d), OPOOL_EINVAL);
    d.flags = OPOOL_REPORT_SIZING;
    CHECK_EQ_U64(opool_mt_create(&refused, &d), OPOOL_EINVAL);
    opool_heap_desc hd;
    memset(&hd, 0, sizeof hd);
    hd.name = "text";
    opool_heap *t = NULL;
    REQUIRE(opool_heap_create(&t, &hd) == OPOOL_OK);
    CHECK(opool_heap_alloc(t, 24) != NULL);  /* a 32-byte block */
    CHECK(opool_heap_alloc(t, 100) != NULL); /* 112 */
    void *gone = opool_heap_alloc(t, 8);
    CHECK_EQ_U64(opool_heap_free(t, gone), OPOOL_OK);
    void *ms = m, *ts = t;
    capture c;
    capture_begin(&c);
    opool_mt_destroy(m);
    opool_heap_destroy(t);
    capture_end(&c);
    char want[1024];
    snprintf(want, sizeof want,
             "opool: concurrent pool \"jobs\" (%p): leak: destroyed with 3 objects live\n"
             "opool: heap \"text\" (%p): leak: destroyed with 2 blocks live (144 bytes)\n",
             ms, ts);
    check_text(c.text, want);
#else
    printf("skipped the_concurrent_pool_and_the_heap_report_what_is_left_live\n");
#endif
}

TEST(the_sizing_line_says_what_capacity_would_have_avoided_the_failures) {
    opool_desc d = quiet_desc(16, 4, 0x100);
    d.name = "bullets";
    opool *p = create(&d);
    REQUIRE(p);
    char line[256];
    char want[256];
    snprintf(want, sizeof want,
             "opool: pool \"bullets\" (%p): sizing: capacity 4, high water 0, never exhausted\n",
             (void *)p);
    CHECK_EQ_U64(opool_sizing_line(p, line, sizeof line), strlen(want));
    check_text(line, want);
    opool_handle h[4];
    for (int k = 0; k < 4; k++) CHECK(opool_alloc(p, &h[k]) != NULL);
    /* a frame wants three more: 7 at once */
    for (int k = 0; k < 3; k++) CHECK(opool_alloc(p, NULL) == NULL);
    /* one freed and taken again (3 live ends the episode), then one more wanted: 5 */
    CHECK_EQ_U64(opool_free(p, h[0]), OPOOL_OK);
    CHECK(opool_alloc(p, &h[0]) != NULL);
    CHECK(opool_alloc(p, NULL) == NULL);
    opool_stats s;
    opool_get_stats(p, &s);
    CHECK_EQ_U64(s.episodes, 2);
    CHECK_EQ_U64(s.peak_demand, 7);
    snprintf(want, sizeof want,
             "opool: pool \"bullets\" (%p): sizing: capacity 4, high water 4, 4 allocs failed in 2 "
             "exhaustion episodes: a capacity of 7 would have avoided them\n",
             (void *)p);
    CHECK_EQ_U64(opool_sizing_line(p, line, sizeof line), strlen(want));
    check_text(line, want);
    /* cut short: as snprintf */
    CHECK_EQ_U64(opool_sizing_line(p, line, 10), strlen(want));
    CHECK(strcmp(line, "opool: po") == 0);
    CHECK_EQ_U64(opool_sizing_line(p, NULL, 0), strlen(want));
    CHECK_EQ_U64(opool_sizing_line(NULL, line, sizeof line), 0);
    CHECK(line[0] == '\0');
    opool_clear(p);
    opool_destroy(p);

    /* a growing pool names its limit */
    d.on_full = OPOOL_FULL_GROW;
    d.max_capacity = 8;
    p = create(&d);
    for (int k = 0; k < 9; k++) (void)opool_alloc(p, NULL);
    snprintf(want, sizeof want,
             "opool: pool \"bullets\" (%p): sizing: max_capacity 8, high water 8, 1 allocs failed "
             "in 1 exhaustion episode: a max_capacity of 9 would have avoided them\n",
             (void *)p);
    opool_sizing_line(p, line, sizeof line);
    check_text(line, want);
#ifdef HAVE_CAPTURE
    /* OPOOL_REPORT_SIZING: at destroy, after the leak */
    opool_clear(p);
    opool_destroy(p);
    d.flags = OPOOL_REPORT_SIZING;
    p = create(&d);
    opool_sizing_line(p, want, sizeof want);
    capture c;
    capture_begin(&c);
    opool_destroy(p);
    capture_end(&c);
    check_text(c.text, want);
#else
    opool_clear(p);
    opool_destroy(p);
#endif
}

/* ---- the heap ------------------------------------------------------------- */

TEST(a_full_heap_class_prints_its_block_size_and_a_handful_of_lines) {
#ifdef HAVE_CAPTURE
    uint32_t size = 64;
    opool_heap_desc d;
    memset(&d, 0, sizeof d);
    d.class_sizes = &size;
    d.class_count = 1;
    d.flags = OPOOL_HEAP_NO_FALLBACK | OPOOL_HEAP_FIXED;
    d.name = "text";
    opool_heap *h = NULL;
    REQUIRE(opool_heap_create(&h, &d) == OPOOL_OK);
    opool_heap_stats s;
    opool_heap_get_stats(h, &s);
    uint32_t blocks = s.classes[0].blocks;
    void **b = (void **)malloc(blocks * sizeof *b);
    REQUIRE(b);
    for (uint32_t k = 0; k < blocks; k++) CHECK((b[k] = opool_heap_alloc(h, 64)) != NULL);
    capture c;
    capture_begin(&c);
    for (int k = 0; k < 5; k++) CHECK(opool_heap_alloc(h, 64) == NULL);
    /* one block back is no recovery */
    CHECK_EQ_U64(opool_heap_free(h, b[0]), OPOOL_OK);
    CHECK((b[0] = opool_heap_alloc(h, 64)) != NULL);
    for (int k = 0; k < 3; k++) CHECK(opool_heap_alloc(h, 64) == NULL);
    /* a quarter free: recovered, a new episode */
    uint32_t recovers = blocks - (blocks + 3) / 4;
    for (uint32_t k = 0; k < blocks - recovers; k++)
        CHECK_EQ_U64(opool_heap_free(h, b[k]), OPOOL_OK);
    for (uint32_t k = 0; k < blocks - recovers; k++)
        CHECK((b[k] = opool_heap_alloc(h, 64)) != NULL);
    CHECK(opool_heap_alloc(h, 64) == NULL);
    void *self = h;
    free(b);
    opool_heap_destroy(h);
    capture_end(&c);
    char want[2048], *w = want;
    const char *full =
        "opool: heap \"text\" (%p): class of 64-byte blocks full: at its fixed budget "
        "(OPOOL_HEAP_FIXED, blocks_per_class): alloc failed (%u of %u live); reported "
        "again at the 2nd, 4th, 8th... failure until at most %u are live\n";
    w += sprintf(w, full, self, blocks, blocks, recovers);
    for (unsigned n = 2; n <= 8; n *= 2)
        w += sprintf(w,
                     "opool: heap \"text\" (%p): class of 64-byte blocks still full at its fixed "
                     "budget: %u allocs failed in this episode (%u of %u live)\n",
                     self, n, blocks, blocks);
    w += sprintf(w, full, self, blocks, blocks, recovers);
    CHECK(check_rationed(c.text, want) >= 5);
#else
    printf("skipped a_full_heap_class_prints_its_block_size_and_a_handful_of_lines\n");
#endif
}

#ifdef HAVE_CAPTURE
/* An allocator that refuses every request once told to (where stderr can
 * be captured). */
static bool refuse_all;
static void *refusing_alloc(void *ctx, size_t size, size_t align) {
    (void)ctx;
    if (refuse_all) return NULL;
    if (align < sizeof(void *)) align = sizeof(void *);
    return test_aligned_alloc(align, (size + align - 1) / align * align);
}
static void refusing_free(void *ctx, void *ptr, size_t size) {
    (void)ctx, (void)size;
    test_aligned_free(ptr);
}
#endif

/* A heap that grows is full only when its allocator refuses a page: the
 * message says so, and which class. */
TEST(a_growing_heap_refused_a_page_says_so) {
#ifdef HAVE_CAPTURE
    uint32_t size = 64;
    opool_heap_desc d;
    memset(&d, 0, sizeof d);
    d.class_sizes = &size;
    d.class_count = 1;
    d.name = "grows";
    d.allocator.alloc = refusing_alloc;
    d.allocator.free = refusing_free;
    refuse_all = false;
    opool_heap *h = NULL;
    REQUIRE(opool_heap_create(&h, &d) == OPOOL_OK);
    opool_heap_stats s;
    CHECK(opool_heap_alloc(h, 64) != NULL); /* the class's first page */
    opool_heap_get_stats(h, &s);
    uint32_t blocks = s.classes[0].blocks;
    for (uint32_t k = 0; k < blocks; k++) CHECK(opool_heap_alloc(h, 64) != NULL); /* grew */
    opool_heap_get_stats(h, &s);
    uint32_t now = s.classes[0].blocks;
    CHECK_EQ_U64(now, 2 * blocks);
    refuse_all = true;
    capture c;
    capture_begin(&c);
    /* pages come in regions: the ones of the region already had serve first */
    uint32_t more = 0;
    while (more < 64 * blocks && opool_heap_alloc(h, 64) != NULL) more++;
    CHECK(opool_heap_alloc(h, 64) == NULL);
    capture_end(&c);
    refuse_all = false;
    opool_heap_get_stats(h, &s);
    now = s.classes[0].blocks;
    CHECK_EQ_U64(s.classes[0].live, now);
    char want[1024];
    int n = sprintf(want,
                    "opool: heap \"grows\" (%p): class of 64-byte blocks full: the allocator "
                    "refused a new page: alloc failed (%u of %u live); reported again at the 2nd, "
                    "4th, 8th... failure until at most %u are live\n",
                    (void *)h, now, now, now - (now + 3) / 4);
    sprintf(want + n,
            "opool: heap \"grows\" (%p): class of 64-byte blocks still full: the allocator "
            "still refuses pages: 2 allocs failed in this episode (%u of %u live)\n",
            (void *)h, now, now);
    check_text(c.text, want);
    opool_heap_destroy(h);
#else
    printf("skipped a_growing_heap_refused_a_page_says_so\n");
#endif
}

TEST(a_heap_double_free_is_stale_and_reads_as_already_freed) {
    opool_heap *h = NULL;
    REQUIRE(opool_heap_create(&h, NULL) == OPOOL_OK);
    void *b = opool_heap_alloc(h, 32);
    CHECK(b != NULL);
    CHECK_EQ_U64(opool_heap_free(h, b), OPOOL_OK);
    opool_status s = opool_heap_free(h, b);
    CHECK_EQ_U64(s, OPOOL_ESTALE);
    CHECK(strcmp(opool_status_str(s),
                 "already freed, or stale (a handle of a freed object or of another pool)") == 0);
    opool_heap_destroy(h);
}

/* ---- misuse: loud when asked (opool.h, MISUSE) -------------------------- */

TEST(a_pool_with_report_misuse_says_what_each_rejection_was) {
#ifdef HAVE_CAPTURE
    opool_desc d;
    memset(&d, 0, sizeof d);
    d.object_size = 16;
    d.capacity = 4;
    d.salt = 0x7000;
    d.name = "ships";
    d.flags = OPOOL_REPORT_MISUSE;
    opool *p = create(&d);
    REQUIRE(p);
    opool_handle h0, h1, h2;
    CHECK(opool_alloc(p, &h0) != NULL);
    char *o1 = (char *)opool_alloc(p, &h1);
    REQUIRE(o1);
    CHECK_EQ_U64(opool_free(p, h0), OPOOL_OK);
    capture c;
    capture_begin(&c);
    CHECK_EQ_U64(opool_free(p, h0), OPOOL_ESTALE);                /* a double free */
    CHECK(opool_alloc(p, &h2) != NULL);                           /* slot 0 again */
    CHECK_EQ_U64(opool_free(p, h0), OPOOL_ESTALE);                /* stale */
    CHECK_EQ_U64(opool_free(p, handle(0x9001, 1)), OPOOL_ESTALE); /* never this slot's */
    CHECK_EQ_U64(opool_free(p, handle(0x7002, 1)), OPOOL_EINVAL); /* even */
    CHECK_EQ_U64(opool_free(p, OPOOL_NULL), OPOOL_EINVAL);
    CHECK_EQ_U64(opool_free(p, handle(0x7001, 9)), OPOOL_EINVAL); /* beyond the slots */
    CHECK_EQ_U64(opool_free_object(p, o1 + 1), OPOOL_EINVAL);     /* interior */
    CHECK(opool_alloc_at(p, h1) == NULL);                         /* live */
    CHECK(opool_alloc_at(p, handle(0x7002, 3)) == NULL);          /* even */
    CHECK_EQ_U64(opool_free(p, h1), OPOOL_OK);
    CHECK_EQ_U64(opool_free_object(p, o1), OPOOL_EINVAL); /* freed already */
    int local = 0;
    CHECK_EQ_U64(opool_free_object(p, &local), OPOOL_EINVAL);  /* no object of the pool */
    CHECK_EQ_U64(opool_free_object(p, o1 + 32), OPOOL_EINVAL); /* slot 3: never used */
    capture_end(&c);
    char want[4096];
    const char *x = "opool: pool \"ships\"";
    snprintf(want, sizeof want,
             "%s (%p): rejected free of handle 0x0000700100000000: a double free: slot 0's object "
             "was freed already\n"
             "%s (%p): rejected handle 0x0000700100000000: stale: slot 0's object was freed and "
             "the slot reused since (generation 0x00007003 now)\n"
             "%s (%p): rejected handle 0x0000900100000001: slot 1 never had generation "
             "0x00009001 (it has 0x00007001): another pool's handle, or a forged one\n"
             "%s (%p): rejected handle 0x0000700200000001: its generation 0x00007002 is even, as "
             "no live object's is (never issued)\n"
             "%s (%p): rejected the null handle: it names no object\n"
             "%s (%p): rejected handle 0x0000700100000009: slot 9 is beyond the pool's 4 slots "
             "(never issued by this pool)\n"
             "%s (%p): rejected free of pointer %p: inside slot 1's object, not at its start\n"
             "%s (%p): rejected alloc_at of handle 0x0000700100000001: slot 1 is live\n"
             "%s (%p): rejected handle 0x0000700200000003: its generation 0x00007002 is even, as "
             "no live object's is (never issued)\n"
             "%s (%p): rejected free of pointer %p: a double free: slot 1's object was freed "
             "already\n"
             "%s (%p): rejected free of pointer %p: no object of this pool\n"
             "%s (%p): rejected free of pointer %p: no object of this pool\n",
             x, (void *)p, x, (void *)p, x, (void *)p, x, (void *)p, x, (void *)p, x, (void *)p, x,
             (void *)p, (void *)(o1 + 1), x, (void *)p, x, (void *)p, x, (void *)p, (void *)o1, x,
             (void *)p, (void *)&local, x, (void *)p, (void *)(o1 + 32));
    check_text(c.text, want);
    opool_stats st;
    opool_get_stats(p, &st);
    CHECK_EQ_U64(st.rejected_handles, 10); /* frees only: alloc_at counts none */
    opool_destroy(p);
#else
    printf("skipped a_pool_with_report_misuse_says_what_each_rejection_was\n");
#endif
}

TEST(a_concurrent_pool_and_a_heap_with_report_misuse_print_their_double_frees) {
#ifdef HAVE_CAPTURE
    opool_desc d;
    memset(&d, 0, sizeof d);
    d.object_size = 16;
    d.capacity = 4;
    d.salt = 0x5000;
    d.name = "jobs";
    d.flags = OPOOL_REPORT_MISUSE;
    opool_mt *m = NULL;
    REQUIRE(opool_mt_create(&m, &d) == OPOOL_OK);
    opool_heap_desc hd;
    memset(&hd, 0, sizeof hd);
    hd.name = "frame";
    hd.flags = OPOOL_REPORT_MISUSE;
    opool_heap *h = NULL;
    REQUIRE(opool_heap_create(&h, &hd) == OPOOL_OK);
    opool_handle a;
    CHECK(opool_mt_alloc(m, &a) != NULL);
    CHECK_EQ_U64(opool_mt_free(m, a), OPOOL_OK);
    char *b = (char *)opool_heap_alloc(h, 48);
    REQUIRE(b);
    capture c;
    capture_begin(&c);
    CHECK_EQ_U64(opool_mt_free(m, a), OPOOL_ESTALE);
    CHECK_EQ_U64(opool_heap_free(h, b + 8), OPOOL_EINVAL);
    CHECK_EQ_U64(opool_heap_free(h, b), OPOOL_OK);
    CHECK_EQ_U64(opool_heap_free(h, b), OPOOL_ESTALE);
    capture_end(&c);
    char want[1024];
    snprintf(want, sizeof want,
             "opool: concurrent pool \"jobs\" (%p): rejected free of handle 0x%016llx: a double "
             "free: slot %u's object was freed already\n"
             "opool: heap \"frame\" (%p): rejected pointer %p: not the start of a block of this "
             "heap\n"
             "opool: heap \"frame\" (%p): rejected block %p: already free (a double free)\n",
             (void *)m, (unsigned long long)a.bits, (unsigned)opool_handle_index(a), (void *)h,
             (void *)(b + 8), (void *)h, (void *)b);
    check_text(c.text, want);
    opool_heap_destroy(h);
    opool_mt_destroy(m);
#else
    printf("skipped a_concurrent_pool_and_a_heap_with_report_misuse_print_their_double_frees\n");
#endif
}

/* ---- rationing every report (opool.h, EXHAUSTION) ----------------------- */

typedef struct held_count {
    uint64_t calls, held, opened;
} held_count;

static void held_report(opool *p, opool_status what, opool_handle h, void *user) {
    (void)p, (void)h;
    held_count *n = (held_count *)user;
    if (what != OPOOL_EFULL) return;
    uint64_t opened = 0;
    n->calls++;
    n->held += opool_reports_held(&opened);
    n->opened += opened;
}

/* A server's own report (to route lines into its logger) is rationed as the
 * default one is, and told how many reports were held back before each. */
TEST(a_users_report_is_rationed_too_and_told_what_was_held_back) {
    held_count n = {0, 0, 0};
    opool_desc d;
    memset(&d, 0, sizeof d);
    d.object_size = 16;
    d.capacity = 64;
    d.report = held_report;
    d.user = &n;
    opool *p = create(&d);
    REQUIRE(p);
    CHECK_EQ_U64(opool_reports_held(NULL), 0); /* outside a report */
    opool_handle h[64];
    for (int k = 0; k < 64; k++) CHECK(opool_alloc(p, &h[k]) != NULL);
    enum { SWINGS = 2000 };
    for (int e = 0; e <= SWINGS; e++) {
        if (e == SWINGS) { /* a new second: the last episode's report goes through */
            struct timespec t = {1, 100000000};
            nanosleep(&t, NULL);
        }
        CHECK(opool_alloc(p, NULL) == NULL); /* opens an episode */
        for (int k = 0; k < 16; k++) CHECK_EQ_U64(opool_free(p, h[k]), OPOOL_OK); /* ends it */
        for (int k = 0; k < 16; k++) CHECK(opool_alloc(p, &h[k]) != NULL);
    }
    printf("  a user's report: %llu made, %llu held back, for %d episodes\n",
           (unsigned long long)n.calls, (unsigned long long)n.held, SWINGS + 1);
    CHECK(n.calls >= 5 && n.calls < SWINGS / 4);
    CHECK_EQ_U64(n.calls + n.held, SWINGS + 1); /* every episode reported or counted */
    CHECK_EQ_U64(n.opened, n.held);             /* each held one opened an episode */
    opool_stats st;
    opool_get_stats(p, &st);
    CHECK_EQ_U64(st.episodes, SWINGS + 1);
    opool_destroy(p);
}

/* ---- salts (opool.h, SALTS) --------------------------------------------- */

TEST(a_salt_a_live_pool_has_is_refused_and_the_refusal_names_it) {
#ifdef HAVE_CAPTURE
    opool_desc d;
    memset(&d, 0, sizeof d);
    d.object_size = 16;
    d.capacity = 4;
    d.salt = 0x4242;
    d.name = "a";
    opool *a = create(&d), *b = NULL, *t = NULL;
    REQUIRE(a);
    opool_desc e = d;
    e.salt = 0x4243; /* the low bit is ignored: the same origin */
    e.name = "b";
    capture c;
    capture_begin(&c);
    b = (opool *)(uintptr_t)1;
    CHECK_EQ_U64(opool_create(&b, &e), OPOOL_EINVAL);
    CHECK(b == NULL);
    static unsigned char buf[4096];
    CHECK(opool_required_bytes(&e) <= sizeof buf);
    CHECK_EQ_U64(opool_create_in(&b, buf, sizeof buf, &e), OPOOL_EINVAL);
    capture_end(&c);
    char line[512], want[1024];
    snprintf(line, sizeof line,
             "opool: pool \"b\": create refused: salt 0x00004243 is that of live pool \"a\" (%p): "
             "two live pools with one salt would accept each other's handles (give each its own "
             "salt, or 0 for a derived one)\n",
             (void *)a);
    snprintf(want, sizeof want, "%s%s", line, line);
    check_text(c.text, want);
    /* twins on purpose: accepted, and each accepts the other's handles */
    e.flags = OPOOL_SHARE_SALT;
    t = create(&e);
    REQUIRE(t);
    opool_handle ha = OPOOL_NULL, ht = OPOOL_NULL;
    CHECK(opool_alloc(a, &ha) != NULL);
    CHECK(opool_alloc(t, &ht) != NULL);
    CHECK(opool_handle_eq(ha, ht) && opool_get(t, ha) != NULL);
    /* a concurrent pool's salts are its kind's own */
    opool_mt *m = NULL, *m2 = NULL;
    CHECK_EQ_U64(opool_mt_create(&m, &d), OPOOL_OK);
    capture_begin(&c);
    CHECK_EQ_U64(opool_mt_create(&m2, &d), OPOOL_EINVAL);
    capture_end(&c);
    CHECK(m2 == NULL && strncmp(c.text, "opool: concurrent pool \"a\": create refused", 42) == 0);
    opool_mt_destroy(m);
    /* a loaded copy keeps its image's origin beside the original: the same objects */
    stream image = stream_new();
    opool *copy = NULL;
    CHECK_EQ_U64(opool_save(a, stream_write, &image), OPOOL_OK);
    CHECK_EQ_U64(opool_load(&copy, &d, stream_read, &image), OPOOL_OK);
    CHECK(copy && opool_get(copy, ha) != NULL);
    free(image.data);
    opool_destroy(copy);
    opool_destroy(a);
    capture_begin(&c);
    CHECK_EQ_U64(opool_create(&b, &d), OPOOL_EINVAL); /* the twin still has it */
    capture_end(&c);
    opool_destroy(t);
    CHECK_EQ_U64(opool_create(&b, &d), OPOOL_OK); /* none live has it now */
    opool_destroy(b);
#else
    printf("skipped a_salt_a_live_pool_has_is_refused_and_the_refusal_names_it\n");
#endif
}

/* ---- statuses (save and load: test_save.c) ------------------------------ */

TEST(every_status_has_its_own_text) {
    CHECK(strcmp(opool_status_str(OPOOL_EIO), "input/output error") == 0);
    CHECK(strcmp(opool_status_str(OPOOL_ENOENT), "no such file") == 0);
    CHECK_EQ_U64(OPOOL_ETIMEDOUT, 8); /* appended after it: older values keep their numbers */
    CHECK_EQ_U64(OPOOL_EIO, 9);
    CHECK_EQ_U64(OPOOL_ENOENT, 10);
    CHECK_EQ_U64(OPOOL_ELEAK, 11);
    CHECK(strcmp(opool_status_str(OPOOL_ELEAK), "objects left live at destroy (a leak)") == 0);
}

int main(void) {
    RUN(an_episode_is_reported_at_its_1st_2nd_4th_8th_failures);
    RUN(an_episode_ends_only_when_a_quarter_of_the_slots_is_free);
    RUN(a_pool_of_one_slot_recovers_when_its_object_is_freed);
    RUN(a_bullet_pool_held_at_its_budget_prints_a_handful_of_lines);
    RUN(a_pool_swinging_between_full_and_recovered_prints_four_lines_a_second);
    RUN(a_concurrent_pool_at_its_budget_under_four_threads_prints_four_lines_a_second);
    RUN(the_default_report_of_a_pool_without_a_name_gives_its_address);
    RUN(the_default_report_is_silent_about_rejected_handles);
    RUN(a_report_can_handle_one_finding_and_keep_the_default_for_the_rest);
    RUN(the_default_report_of_no_pool_names_none);
    RUN(a_concurrent_pool_passes_itself_to_report_mt);
    RUN(a_concurrent_pool_held_full_prints_a_handful_of_lines);
    RUN(a_full_heap_class_prints_its_block_size_and_a_handful_of_lines);
    RUN(a_growing_heap_refused_a_page_says_so);
    RUN(a_heap_double_free_is_stale_and_reads_as_already_freed);
    RUN(a_pool_tracking_sites_knows_where_each_live_object_was_allocated);
    RUN(destroy_reports_the_objects_left_live_once_with_the_oldest_sites);
    RUN(loops_over_a_pool_without_a_live_list_are_refused_one_line_each);
    RUN(the_concurrent_pool_and_the_heap_report_what_is_left_live);
    RUN(the_sizing_line_says_what_capacity_would_have_avoided_the_failures);
    RUN(a_pool_with_report_misuse_says_what_each_rejection_was);
    RUN(a_concurrent_pool_and_a_heap_with_report_misuse_print_their_double_frees);
    RUN(a_users_report_is_rationed_too_and_told_what_was_held_back);
    RUN(a_salt_a_live_pool_has_is_refused_and_the_refusal_names_it);
    RUN(every_status_has_its_own_text);
    return test_summary();
}
