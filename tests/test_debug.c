/*
 * test_debug.c -- the debug safety net (include/opool.h, docs/DEBUGGING.md).
 *
 *   OPOOL_POISON   free slots hold the repeating 32-bit pattern 0x1deadb0b
 *                  (bytes 0b db ea 1d); a changed pattern at reuse is
 *                  reported as OPOOL_EWRITE_AFTER_FREE with the slot.
 *   AddressSanitizer  free slots are poisoned with no flag: each misuse runs
 *                  in a child process (fork) and must die with ASan's
 *                  "use-after-poison" report; valid use must stay silent.
 *                  Only in an ASan build; elsewhere those tests say they
 *                  were skipped, and pass.
 *   Valgrind       tests/programs/debug_valgrind.c, run under memcheck by the
 *                  tests of tests/tests.cmake.
 *
 * Pools here use salt 0x1000: a slot's first object has generation 0x1001,
 * its second 0x1003, so the handles in the expectations can be read.
 */
#if !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L /* fork, pipe, waitpid */
#endif

#include "opool.h"
#include "helpers.h"
#include "test.h"

#include <stdalign.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* WebAssembly under node has no fork (emscripten's fails with ENOSYS) */
#if (defined(__unix__) || defined(__APPLE__)) && !defined(__EMSCRIPTEN__)
#define HAVE_FORK 1
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

#define SALT 0x1000u
#define G1 0x1001u /* a slot's first generation with SALT */

static const unsigned char pattern[4] = {0x0b, 0xdb, 0xea, 0x1d}; /* 0x1deadb0b, little-endian */

/* ---- helpers ------------------------------------------------------------ */

/* Every report the pool made. */
typedef struct reports {
    int n;
    opool_status what;
    opool_handle h;
    opool *pool;
    int ewrite; /* OPOOL_EWRITE_AFTER_FREE among them */
} reports;

static void record_report(opool *p, opool_status what, opool_handle h, void *user) {
    reports *r = user;
    r->n++;
    r->what = what;
    r->h = h;
    r->pool = p;
    r->ewrite += what == OPOOL_EWRITE_AFTER_FREE;
}

/* A fixed POISON pool with SALT whose reports land in *r. */
static opool_desc poison_desc(size_t size, size_t align, uint32_t capacity, reports *r) {
    opool_desc d;
    memset(&d, 0, sizeof d);
    d.object_size = size;
    d.object_align = align;
    d.capacity = capacity;
    d.flags = OPOOL_POISON | OPOOL_SHARE_SALT; /* twins, driven alike */
    d.salt = SALT;
    if (r) {
        memset(r, 0, sizeof *r);
        d.report = record_report;
        d.user = r;
    }
    return d;
}

static opool *create(const opool_desc *d) {
    opool *p = NULL;
    if (opool_create(&p, d) != OPOOL_OK) return NULL;
    return p;
}

/* Under ASan a free slot cannot be read, not even by a test that wants to
 * look at its pattern: lift the poisoning first. (The pool re-checks and
 * re-hides the slot at its next alloc and free.) */
static void reveal(const void *ptr, size_t n) {
#ifdef TEST_ASAN
    __asan_unpoison_memory_region(ptr, n);
#else
    (void)ptr, (void)n;
#endif
}

/* Bytes [0, n) of obj hold the poison pattern, counted from the slot start. */
static int holds_pattern(const void *obj, size_t n) {
    const unsigned char *b = obj;
    reveal(obj, n);
    for (size_t k = 0; k < n; k++)
        if (b[k] != pattern[k & 3]) return 0;
    return 1;
}

static int all_bytes(const void *obj, size_t n, unsigned char v) {
    const unsigned char *b = obj;
    reveal(obj, n);
    for (size_t k = 0; k < n; k++)
        if (b[k] != v) return 0;
    return 1;
}

static size_t round_up(size_t n, size_t align) { return (n + align - 1) / align * align; }

static uint64_t rng_state = 0x9E3779B97F4A7C15u;
static uint64_t rnd(void) { /* splitmix64: the same sequence on every run */
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}
static uint32_t below(uint32_t n) { return (uint32_t)(rnd() % n); }

/* ---- child processes ---------------------------------------------------- */

#ifdef HAVE_FORK
/* How a child ended and what it wrote to stderr. */
typedef struct child {
    int exited, code;  /* exited normally, with this status */
    int signaled, sig; /* killed by this signal */
    char err[16384];   /* its stderr (truncated), NUL-terminated */
} child;

/* Run fn in a forked child whose stderr is captured; the child exits 0 if fn
 * returns. */
static void run_child(void (*fn)(void), child *c) {
    memset(c, 0, sizeof *c);
    int fd[2];
    if (pipe(fd) != 0) {
        snprintf(c->err, sizeof c->err, "pipe failed");
        return;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        snprintf(c->err, sizeof c->err, "fork failed");
        return;
    }
    if (pid == 0) {
        dup2(fd[1], 2);
        close(fd[0]);
        close(fd[1]);
        fn();
        fflush(stdout);
        _exit(0);
    }
    close(fd[1]);
    size_t n = 0;
    for (;;) {
        char sink[4096];
        char *to = n < sizeof c->err - 1 ? c->err + n : sink;
        size_t room = n < sizeof c->err - 1 ? sizeof c->err - 1 - n : sizeof sink;
        ssize_t got = read(fd[0], to, room);
        if (got <= 0) break;
        if (to != sink) n += (size_t)got;
    }
    c->err[n] = 0;
    close(fd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    c->exited = WIFEXITED(status);
    c->code = c->exited ? WEXITSTATUS(status) : 0;
    c->signaled = WIFSIGNALED(status);
    c->sig = c->signaled ? WTERMSIG(status) : 0;
}

static void show_child(const char *what, const child *c) {
    fprintf(stderr, "  %s: exited %d (status %d), signaled %d (signal %d); its stderr:\n%s\n", what,
            c->exited, c->code, c->signaled, c->sig, c->err);
}

/* The pointer the child printed as "<tag> 0x..." on stderr, or 0. */
static uintptr_t printed_pointer(const child *c, const char *tag) {
    const char *at = strstr(c->err, tag);
    if (at == NULL) return 0;
    return (uintptr_t)strtoull(at + strlen(tag), NULL, 16);
}
#endif

/* ==== OPOOL_POISON ======================================================== */

TEST(poison_report_names_the_slot_and_the_freed_generation) {
    reports r;
    opool_desc d = poison_desc(24, 8, 4, &r);
    opool *p = create(&d);
    REQUIRE(p);
    opool_handle h[3];
    for (int k = 0; k < 3; k++) REQUIRE(opool_alloc(p, &h[k]) != NULL);
    /* slot 1 lives and dies twice: its second object has generation G1 + 2 */
    CHECK_EQ_U64(opool_free(p, h[1]), OPOOL_OK);
    REQUIRE(opool_alloc(p, &h[1]) != NULL);
    CHECK_EQ_U64(h[1].bits, handle(G1 + 2, 1).bits);
    unsigned char *obj = opool_get(p, h[1]);
    REQUIRE(obj);
    CHECK_EQ_U64(opool_free(p, h[1]), OPOOL_OK);
    reveal(obj, 24);
    obj[13] ^= 0x40;      /* the bug: a write through a dangling pointer */
    CHECK_EQ_U64(r.n, 0); /* found at reuse, not before */

    opool_handle again;
    unsigned char *back = opool_alloc(p, &again);
    CHECK_EQ_U64(r.n, 1);
    CHECK_EQ_U64(r.what, OPOOL_EWRITE_AFTER_FREE);
    CHECK_EQ_U64(r.h.bits, handle(G1 + 2, 1).bits); /* the freed object's own handle */
    CHECK_EQ_PTR(r.pool, p);
    /* a report that returns lets the alloc go on as usual */
    CHECK_EQ_PTR(back, obj);
    CHECK_EQ_U64(again.bits, handle(G1 + 4, 1).bits);
    CHECK(opool_valid(p, again));
    CHECK(!opool_valid(p, r.h));
    /* reported once: the slot is repoisoned whole at its next free */
    CHECK_EQ_U64(opool_free(p, again), OPOOL_OK);
    CHECK(holds_pattern(obj, 24));
    CHECK(opool_alloc(p, NULL) == obj);
    CHECK_EQ_U64(r.n, 1);
    opool_destroy(p);
}

static void init_mark(void *obj, void *user) {
    (void)user;
    ((unsigned char *)obj)[1] = 0x77;
}

TEST(poison_report_comes_before_zero_and_init_and_they_still_run) {
    reports r;
    opool_desc d = poison_desc(16, 0, 2, &r);
    d.flags |= OPOOL_ZERO;
    d.init = init_mark;
    opool *p = create(&d);
    REQUIRE(p);
    opool_handle h;
    unsigned char *obj = opool_alloc(p, &h);
    REQUIRE(obj);
    CHECK_EQ_U64(opool_free(p, h), OPOOL_OK);
    reveal(obj, 16);
    obj[0] = 0; /* 0x0b -> 0 */
    CHECK(opool_alloc(p, &h) == obj);
    CHECK_EQ_U64(r.ewrite, 1);
    CHECK_EQ_U64(opool_handle_index(r.h), 0);
    /* OPOOL_ZERO and init ran after the check */
    CHECK_EQ_U64(obj[1], 0x77);
    obj[1] = 0;
    CHECK(all_bytes(obj, 16, 0));
    opool_destroy(p);
}

TEST(poison_write_is_reported_by_alloc_at) {
    reports r;
    opool_desc d = poison_desc(32, 0, 4, &r);
    opool *p = create(&d);
    REQUIRE(p);
    opool_handle h[2];
    for (int k = 0; k < 2; k++) REQUIRE(opool_alloc(p, &h[k]) != NULL);
    unsigned char *obj = opool_get(p, h[0]);
    REQUIRE(obj);
    CHECK_EQ_U64(opool_free(p, h[0]), OPOOL_OK);
    reveal(obj, 32);
    obj[31] = 0x00;
    CHECK(opool_alloc_at(p, handle(G1 + 2, 0)) == obj);
    CHECK_EQ_U64(r.n, 1);
    CHECK_EQ_U64(r.what, OPOOL_EWRITE_AFTER_FREE);
    CHECK_EQ_U64(r.h.bits, handle(G1, 0).bits);
    opool_destroy(p);
}

/* A slot that never held an object is poisoned from creation. Its report
 * carries the generation before the slot's first (gen0 - 1): odd, never
 * issued, never valid. */
TEST(poison_write_to_a_never_allocated_slot_is_reported) {
    reports r;
    opool_desc d = poison_desc(16, 16, 4, &r);
    opool *p = create(&d);
    REQUIRE(p);
    unsigned char *first = opool_alloc(p, NULL);
    REQUIRE(first);
    unsigned char *third = first + 2 * 16; /* slot 2, never allocated */
    CHECK(holds_pattern(third, 16));       /* (reveals it under ASan) */
    third[4] = 'x';                        /* e.g. an overrun from slot 1 */
    CHECK(opool_alloc(p, NULL) != NULL);   /* slot 1: intact */
    CHECK_EQ_U64(r.n, 0);
    CHECK(opool_alloc(p, NULL) == third);
    CHECK_EQ_U64(r.n, 1);
    CHECK_EQ_U64(r.what, OPOOL_EWRITE_AFTER_FREE);
    CHECK_EQ_U64(r.h.bits, handle(G1 - 2, 2).bits);
    CHECK(!opool_valid(p, r.h));
    opool_destroy(p);
}

/* The check covers the whole slot, padding included: for strides 1..70
 * (alignment 1) and for padded slots (alignment 16), a change to any single
 * byte of a free slot is reported, once, naming that slot. */
TEST(poison_catches_a_change_to_any_byte_of_the_slot) {
    static const size_t aligns[] = {1, 16};
    for (size_t a = 0; a < 2; a++) {
        for (size_t size = 1; size <= 70; size++) {
            size_t stride = round_up(size, aligns[a]);
            reports r;
            opool_desc d = poison_desc(size, aligns[a], 1, &r);
            opool *p = create(&d);
            REQUIRE(p);
            opool_handle h;
            unsigned char *obj = opool_alloc(p, &h);
            REQUIRE(obj);
            int missed = 0;
            for (size_t k = 0; k < stride; k++) {
                CHECK_EQ_U64(opool_free(p, h), OPOOL_OK);
                reveal(obj, stride);
                obj[k] ^= 0x01;
                opool_handle freed = h;
                if (opool_alloc(p, &h) != obj) missed++;
                if (r.n != 1 || r.what != OPOOL_EWRITE_AFTER_FREE || r.h.bits != freed.bits) {
                    missed++;
                    fprintf(stderr, "  size %zu align %zu: byte %zu: %d reports\n", size, aligns[a],
                            k, r.n);
                }
                r.n = 0;
            }
            CHECK_EQ_U64(missed, 0);
            opool_destroy(p);
        }
    }
}

/* The exact bytes of a free slot, for object sizes 1..70 under every
 * alignment: slot byte k is pattern[k % 4] over the whole stride (padding
 * included), for freed slots and for slots never allocated, in chunk 0 and in
 * grown chunks; live neighbours are untouched. */
TEST(poison_pattern_is_exact_for_strides_1_to_70_and_every_alignment) {
    static const size_t aligns[] = {0, 1, 2, 4, 8, 16, 32, 64, 128};
    uint32_t one = 1;
    int little_endian = *(unsigned char *)&one == 1;
    for (size_t a = 0; a < sizeof aligns / sizeof aligns[0]; a++) {
        size_t align = aligns[a] ? aligns[a] : alignof(max_align_t);
        for (size_t size = 1; size <= 70; size++) {
            size_t stride = round_up(size, align);
            reports r;
            opool_desc d = poison_desc(size, aligns[a], 4, &r);
            opool *p = create(&d);
            REQUIRE(p);
            opool_handle h[3];
            unsigned char *obj[3];
            for (int k = 0; k < 3; k++) {
                obj[k] = opool_alloc(p, &h[k]);
                REQUIRE(obj[k]);
                memset(obj[k], 0xA5, size);
            }
            CHECK_EQ_U64((uintptr_t)obj[0] % align, 0);
            CHECK_EQ_U64((uintptr_t)(obj[1] - obj[0]), stride);
            CHECK_EQ_U64(opool_free(p, h[1]), OPOOL_OK);
            int ok = holds_pattern(obj[1], stride);
            ok &= holds_pattern(obj[2] + stride, stride); /* slot 3: never allocated */
            ok &= all_bytes(obj[0], size, 0xA5) && all_bytes(obj[2], size, 0xA5);
            if (little_endian && stride >= 4) {
                uint32_t word;
                memcpy(&word, obj[1], 4);
                ok &= word == 0x1deadb0bu;
            }
            if (!ok) fprintf(stderr, "  size %zu align %zu: wrong bytes\n", size, align);
            CHECK(ok);
            CHECK_EQ_U64(r.n, 0);
            opool_destroy(p);
        }
        /* grown chunks: capacity 1 grows by chunks [1,2), [2,4), [4,8) */
        reports r;
        opool_desc d = poison_desc(24, aligns[a], 1, &r);
        d.on_full = OPOOL_FULL_GROW;
        d.max_capacity = 8;
        opool *p = create(&d);
        REQUIRE(p);
        unsigned char *obj[5];
        for (int k = 0; k < 5; k++) {
            obj[k] = opool_alloc(p, NULL);
            REQUIRE(obj[k]);
        }
        opool_stats st;
        opool_get_stats(p, &st);
        CHECK_EQ_U64(st.grows, 3);
        size_t stride = round_up(24, align);
        CHECK(holds_pattern(obj[4] + stride, stride));     /* slot 5: chunk [4,8) */
        CHECK(holds_pattern(obj[4] + 3 * stride, stride)); /* slot 7, the last */
        CHECK(opool_free_object(p, obj[3]) == OPOOL_OK);   /* slot 3: chunk [2,4) */
        CHECK(holds_pattern(obj[3], stride));
        CHECK_EQ_U64(r.n, 0);
        opool_destroy(p);
    }
}

#ifdef HAVE_FORK
static void child_default_report(void) {
    opool_desc d = poison_desc(40, 8, 4, NULL); /* no report: the default one */
    opool *p = create(&d);
    if (p == NULL) return;
    opool_handle h[3];
    for (int k = 0; k < 3; k++) (void)opool_alloc(p, &h[k]);
    unsigned char *obj = opool_get(p, h[2]);
    (void)opool_free(p, h[2]);
    reveal(obj, 40);
    obj[39] = 0x42;
    fprintf(stderr, "pool %p\n", (void *)p);
    (void)opool_alloc(p, NULL); /* reports, then aborts */
    fprintf(stderr, "not reached\n");
}
#endif

TEST(poison_default_report_prints_the_slot_and_aborts) {
#ifdef HAVE_FORK
    child c;
    run_child(child_default_report, &c);
    CHECK(c.signaled && c.sig == SIGABRT);
    uintptr_t pool = printed_pointer(&c, "pool ");
    CHECK(pool != 0);
    char want[256];
    snprintf(want, sizeof want,
             "opool: pool %p: write after free: slot 2 was changed while free "
             "(last handle 0x%016llx)\n",
             (void *)pool, (unsigned long long)handle(G1, 2).bits);
    CHECK(strstr(c.err, want) != NULL);
    CHECK(strstr(c.err, "not reached") == NULL);
    if (!(c.signaled && c.sig == SIGABRT) || strstr(c.err, want) == NULL) {
        fprintf(stderr, "  wanted: %s", want);
        show_child("default report", &c);
    }
#else
    printf("skipped poison_default_report_prints_the_slot_and_aborts: no fork here\n");
#endif
}

/* A long random run (alloc, free, free_object, alloc_at, clear, shrink,
 * eviction, init and fini writing objects) in pools of several shapes: not
 * one report, every live object keeps its bytes, every freed slot holds the
 * exact pattern. Then one real write after free, to show the run could have
 * reported. */
typedef struct live_set {
    opool_handle h[512];
    unsigned char *obj[512];
    uint32_t n;
    size_t size;
} live_set;

static live_set *evict_from; /* the run's live set, for evict_random */

static unsigned char tag_of(opool_handle h, size_t k) {
    return (unsigned char)((h.bits * 0x9E3779B97F4A7C15u) >> 56 ^ (k * 31));
}

static void forget(live_set *s, uint32_t at) {
    s->n--;
    s->h[at] = s->h[s->n];
    s->obj[at] = s->obj[s->n];
}

static opool_handle evict_random(opool *p, void *user) {
    (void)p, (void)user;
    if (evict_from->n == 0) return OPOOL_NULL;
    uint32_t at = below(evict_from->n);
    opool_handle victim = evict_from->h[at];
    forget(evict_from, at);
    return victim;
}

static void scribble(void *obj, void *user) { /* init and fini may write the whole object */
    (void)user;
    memset(obj, 0xEE, 1);
}

static int live_intact(const live_set *s, uint32_t at) {
    for (size_t k = 0; k < s->size; k++)
        if (s->obj[at][k] != tag_of(s->h[at], k)) return 0;
    return 1;
}

TEST(poison_random_run_reports_nothing_false) {
    typedef struct shape {
        size_t size, align;
        uint32_t capacity, max_capacity;
        opool_full_policy on_full;
        int hooks;
    } shape;
    static const shape shapes[] = {
        {24, 8, 64, 0, OPOOL_FULL_FAIL, 0},   {5, 1, 3, 300, OPOOL_FULL_GROW, 1},
        {70, 64, 8, 500, OPOOL_FULL_GROW, 0}, {13, 4, 8, 0, OPOOL_FULL_EVICT, 1},
        {1, 1, 1, 40, OPOOL_FULL_GROW, 0},    {48, 0, 200, 0, OPOOL_FULL_FAIL, 1},
    };
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const shape *sh = &shapes[s];
        reports r;
        opool_desc d = poison_desc(sh->size, sh->align, sh->capacity, &r);
        d.max_capacity = sh->max_capacity;
        d.on_full = sh->on_full;
        if (sh->on_full == OPOOL_FULL_EVICT) d.evict = evict_random;
        if (sh->hooks) d.init = d.fini = scribble;
        opool *p = create(&d);
        REQUIRE(p);
        static live_set set;
        set.n = 0;
        set.size = sh->size;
        evict_from = &set;
        size_t stride = round_up(sh->size, sh->align ? sh->align : alignof(max_align_t));
        int damaged = 0, dirty_free = 0;
        uint32_t recreated = 0, shrunk = 0;
        for (int step = 0; step < 200000; step++) {
            uint32_t op = below(100);
            if (op < 50 && set.n < 512) { /* alloc */
                opool_handle h;
                unsigned char *obj = opool_alloc(p, &h);
                if (obj == NULL) continue;
                set.h[set.n] = h;
                set.obj[set.n] = obj;
                for (size_t k = 0; k < sh->size; k++) obj[k] = tag_of(h, k);
                set.n++;
            } else if (op < 92 && set.n > 0) { /* free, by handle or pointer */
                uint32_t at = below(set.n);
                opool_handle h = set.h[at];
                unsigned char *obj = set.obj[at];
                damaged += !live_intact(&set, at);
                forget(&set, at);
                opool_status st = op < 80 ? opool_free(p, h) : opool_free_object(p, obj);
                CHECK_EQ_U64(st, OPOOL_OK);
                dirty_free += !holds_pattern(obj, stride);
                if (op >= 88) { /* re-create it at once at its next handle */
                    opool_handle next =
                        handle(opool_handle_generation(h) + 2, opool_handle_index(h));
                    unsigned char *again = opool_alloc_at(p, next);
                    if (again != NULL) {
                        CHECK_EQ_PTR(again, obj);
                        recreated++;
                        set.h[set.n] = next;
                        set.obj[set.n] = again;
                        for (size_t k = 0; k < sh->size; k++) again[k] = tag_of(next, k);
                        set.n++;
                    }
                }
            } else if (op < 93) { /* clear: every slot freed and repoisoned */
                for (uint32_t k = 0; k < set.n; k++) damaged += !live_intact(&set, k);
                opool_clear(p);
                for (uint32_t k = 0; k < set.n; k++)
                    dirty_free += !holds_pattern(set.obj[k], stride);
                set.n = 0;
            } else if (op < 95) {
                shrunk += opool_shrink(p);
            } else {
                for (uint32_t k = 0; k < set.n; k++) damaged += !live_intact(&set, k);
            }
        }
        CHECK_EQ_U64(r.ewrite, 0);
        CHECK_EQ_U64(damaged, 0);
        CHECK_EQ_U64(dirty_free, 0);
        opool_stats st;
        opool_get_stats(p, &st);
        CHECK_EQ_U64(st.count, set.n);
        CHECK(st.allocs > 50000);
        CHECK(recreated > 1000);
        CHECK(shrunk > 0 || sh->on_full != OPOOL_FULL_GROW); /* the run did give chunks back */
        CHECK(st.evictions > 0 || sh->on_full != OPOOL_FULL_EVICT);

        /* and a real write after free is still found */
        if (set.n == 0) {
            opool_handle h;
            set.obj[0] = opool_alloc(p, &h);
            REQUIRE(set.obj[0]);
            set.h[0] = h;
            set.n = 1;
        }
        opool_handle victim = set.h[set.n - 1];
        unsigned char *obj = set.obj[set.n - 1];
        CHECK_EQ_U64(opool_free(p, victim), OPOOL_OK);
        reveal(obj, stride);
        obj[stride - 1] ^= 0xFF;
        CHECK(opool_alloc(p, NULL) == obj);
        CHECK_EQ_U64(r.ewrite, 1);
        CHECK_EQ_U64(r.h.bits, victim.bits);
        if (r.ewrite != 1 || damaged || dirty_free)
            fprintf(stderr, "  shape %zu: %d reports, %d damaged, %d dirty\n", s, r.ewrite, damaged,
                    dirty_free);
        opool_destroy(p);
    }
}

/* ==== AddressSanitizer ==================================================== */

#ifdef TEST_ASAN
#define OBJ 32 /* a multiple of ASan's 8-byte granule: poisoning is exact */

static opool_desc asan_desc(uint32_t capacity, uint32_t max_capacity) {
    opool_desc d;
    memset(&d, 0, sizeof d);
    d.object_size = OBJ;
    d.capacity = capacity;
    d.max_capacity = max_capacity;
    d.on_full = max_capacity ? OPOOL_FULL_GROW : OPOOL_FULL_FAIL;
    d.salt = SALT;
    return d;
}

/* Misuses, each run in a child. They print the address they will touch as
 * "target 0x...", then touch it. */
static volatile unsigned char sink;

static void touch_read(const void *ptr) {
    fprintf(stderr, "target %p\n", ptr);
    sink = *(const volatile unsigned char *)ptr;
}

static void touch_write(void *ptr) {
    fprintf(stderr, "target %p\n", ptr);
    *(volatile unsigned char *)ptr = 1;
}

static void child_read_after_free(void) {
    opool_desc d = asan_desc(4, 0);
    opool *p = create(&d);
    opool_handle h;
    unsigned char *obj = opool_alloc(p, &h);
    memset(obj, 1, OBJ);
    (void)opool_free(p, h);
    touch_read(obj + 8);
}

static void child_write_after_free(void) {
    opool_desc d = asan_desc(4, 0);
    opool *p = create(&d);
    opool_handle h;
    unsigned char *obj = opool_alloc(p, &h);
    (void)opool_free(p, h);
    touch_write(obj + OBJ - 1);
}

static void child_write_after_free_with_poison_flag(void) {
    opool_desc d = asan_desc(4, 0);
    d.flags = OPOOL_POISON; /* ASan sees the write before the pattern check could */
    opool *p = create(&d);
    opool_handle h;
    unsigned char *obj = opool_alloc(p, &h);
    (void)opool_free(p, h);
    touch_write(obj);
}

static void child_read_never_allocated(void) {
    opool_desc d = asan_desc(4, 0);
    opool *p = create(&d);
    unsigned char *obj = opool_alloc(p, NULL);
    touch_read(obj + 3 * OBJ); /* slot 3 */
}

static void child_read_after_clear(void) {
    opool_desc d = asan_desc(4, 0);
    opool *p = create(&d);
    unsigned char *obj[3];
    for (int k = 0; k < 3; k++) obj[k] = opool_alloc(p, NULL);
    opool_clear(p);
    touch_read(obj[1]);
}

static void child_read_after_shrink_and_regrow(void) {
    opool_desc d = asan_desc(2, 16);
    opool *p = create(&d);
    opool_handle h[4];
    for (int k = 0; k < 4; k++) (void)opool_alloc(p, &h[k]); /* slots 2, 3: chunk 1 */
    (void)opool_free(p, h[3]);
    (void)opool_free(p, h[2]);
    if (opool_shrink(p) != 2) return;          /* chunk 1 given back */
    unsigned char *two = opool_alloc(p, NULL); /* chunk 1 again: slot 2 */
    if (opool_capacity(p) != 4) return;
    touch_read(two + OBJ); /* slot 3: free in the regrown chunk */
}

static void child_read_in_later_chunk(void) {
    opool_desc d = asan_desc(2, 64);
    opool *p = create(&d);
    opool_handle h[9];
    unsigned char *obj[9];
    for (int k = 0; k < 9; k++) obj[k] = opool_alloc(p, &h[k]); /* slot 8: chunk 3 */
    (void)opool_free(p, h[8]);
    touch_read(obj[8] + OBJ - 1);
}

/* The negative control: everything valid, nothing reported. */
static void child_valid_use(void) {
    opool_desc d = asan_desc(2, 64);
    d.flags = OPOOL_ZERO;
    opool *p = create(&d);
    opool_handle h[40];
    unsigned char *obj[40];
    unsigned sum = 0;
    for (int round = 0; round < 3; round++) {
        for (int k = 0; k < 40; k++) {
            obj[k] = opool_alloc(p, &h[k]);
            for (int b = 0; b < OBJ; b++) sum += obj[k][b]; /* every byte readable */
            memset(obj[k], k, OBJ);                         /* and writable */
        }
        for (int k = 0; k < 40; k += 2) (void)opool_free(p, h[k]);
        for (int k = 1; k < 40; k += 2) sum += obj[k][OBJ - 1];
        for (uint32_t i = opool_count(p); i-- > 0;)
            sum += *(unsigned char *)opool_live_object(p, i);
        opool_sort(p);
        opool_clear(p);
        (void)opool_shrink(p);
    }
    opool_destroy(p);

    /* a caller's buffer is wholly the caller's again after destroy */
    d = asan_desc(16, 0);
    d.flags = OPOOL_POISON;
    size_t need = opool_required_bytes(&d);
    unsigned char *buf = malloc(need);
    if (buf == NULL || opool_create_in(&p, buf, need, &d) != OPOOL_OK) return;
    for (int k = 0; k < 8; k++) obj[k] = opool_alloc(p, &h[k]);
    for (int k = 0; k < 8; k++) (void)opool_free(p, h[k]);
    opool_destroy(p);
    memset(buf, 0x33, need);
    for (size_t k = 0; k < need; k++) sum += buf[k];
    free(buf);
    sink = (unsigned char)sum; /* keeps the reads */
}

typedef struct asan_case {
    const char *name;
    void (*fn)(void);
    const char *kind; /* "READ" or "WRITE" */
} asan_case;

/* The child must die of ASan's report, about the very address it touched. */
static void expect_asan_catches(const asan_case *t) {
    child c;
    run_child(t->fn, &c);
    uintptr_t target = printed_pointer(&c, "target ");
    char where[128], access[64];
    snprintf(where, sizeof where, "ERROR: AddressSanitizer: use-after-poison on address %p",
             (void *)target);
    snprintf(access, sizeof access, "%s of size 1 at %p", t->kind, (void *)target);
    int ok = !(c.exited && c.code == 0) && target != 0 && strstr(c.err, where) != NULL &&
             strstr(c.err, access) != NULL;
    CHECK(ok);
    if (!ok) {
        fprintf(stderr, "  %s: wanted \"%s\" and \"%s\"\n", t->name, where, access);
        show_child(t->name, &c);
    }
}
#endif

TEST(asan_reports_every_access_to_a_free_slot) {
#ifdef TEST_ASAN
    static const asan_case cases[] = {
        {"read after free", child_read_after_free, "READ"},
        {"write after free", child_write_after_free, "WRITE"},
        {"write after free, POISON set", child_write_after_free_with_poison_flag, "WRITE"},
        {"read of a never-allocated slot", child_read_never_allocated, "READ"},
        {"read after opool_clear", child_read_after_clear, "READ"},
        {"read after shrink then regrow", child_read_after_shrink_and_regrow, "READ"},
        {"read in a growable pool's later chunk", child_read_in_later_chunk, "READ"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) expect_asan_catches(&cases[k]);
#else
    printf("skipped asan_reports_every_access_to_a_free_slot: not an AddressSanitizer build\n");
#endif
}

TEST(asan_valid_use_reports_nothing) {
#ifdef TEST_ASAN
    child c;
    run_child(child_valid_use, &c);
    CHECK(c.exited && c.code == 0);
    CHECK(strstr(c.err, "Sanitizer") == NULL && strstr(c.err, "runtime error") == NULL);
    if (!(c.exited && c.code == 0) || c.err[0]) show_child("valid use", &c);
#else
    printf("skipped asan_valid_use_reports_nothing: not an AddressSanitizer build\n");
#endif
}

#ifdef TEST_ASAN
/* An allocator that checks, on the way back, that no byte is still poisoned:
 * the pool must unhide free slots before it gives memory back (destroy,
 * shrink), or the next owner of those bytes gets false reports. */
typedef struct checking {
    size_t blocks, poisoned_returns;
} checking;

static void *checking_alloc(void *ctx, size_t size, size_t align) {
    checking *c = ctx;
    void *ptr = NULL;
    if (align < sizeof(void *)) align = sizeof(void *);
    if (posix_memalign(&ptr, align, size) != 0) return NULL;
    c->blocks++;
    return ptr;
}

static void checking_free(void *ctx, void *ptr, size_t size) {
    checking *c = ctx;
    if (ptr == NULL) return;
    if (__asan_region_is_poisoned(ptr, size) != NULL) c->poisoned_returns++;
    c->blocks--;
    free(ptr);
}
#endif

TEST(asan_memory_goes_back_unpoisoned) {
#ifdef TEST_ASAN
    checking chk = {0, 0};
    opool_desc d = asan_desc(2, 64);
    d.allocator.alloc = checking_alloc;
    d.allocator.free = checking_free;
    d.allocator.ctx = &chk;
    opool *p = create(&d);
    REQUIRE(p);
    opool_handle h[40];
    for (int k = 0; k < 40; k++) REQUIRE(opool_alloc(p, &h[k]) != NULL);
    for (int k = 39; k >= 2; k--) CHECK_EQ_U64(opool_free(p, h[k]), OPOOL_OK);
    CHECK(opool_shrink(p) > 0); /* chunks with free (poisoned) slots go back */
    CHECK_EQ_U64(chk.poisoned_returns, 0);
    for (int k = 2; k < 20; k++) REQUIRE(opool_alloc(p, &h[k]) != NULL);
    for (int k = 2; k < 20; k += 3) CHECK_EQ_U64(opool_free(p, h[k]), OPOOL_OK);
    opool_destroy(p); /* chunk 0's block and the grown chunks */
    CHECK_EQ_U64(chk.poisoned_returns, 0);
    CHECK_EQ_U64(chk.blocks, 0);

    /* a pool in a caller's buffer */
    d = asan_desc(8, 0);
    d.flags = OPOOL_POISON;
    size_t need = opool_required_bytes(&d);
    unsigned char *buf = malloc(need);
    REQUIRE(buf);
    REQUIRE(opool_create_in(&p, buf, need, &d) == OPOOL_OK);
    CHECK(__asan_region_is_poisoned(buf, need) != NULL); /* its free slots are hidden */
    REQUIRE(opool_alloc(p, &h[0]) != NULL);
    CHECK_EQ_U64(opool_free(p, h[0]), OPOOL_OK);
    opool_destroy(p);
    CHECK(__asan_region_is_poisoned(buf, need) == NULL);
    free(buf);
#else
    printf("skipped asan_memory_goes_back_unpoisoned: not an AddressSanitizer build\n");
#endif
}

int main(void) {
    RUN(poison_report_names_the_slot_and_the_freed_generation);
    RUN(poison_report_comes_before_zero_and_init_and_they_still_run);
    RUN(poison_write_is_reported_by_alloc_at);
    RUN(poison_write_to_a_never_allocated_slot_is_reported);
    RUN(poison_catches_a_change_to_any_byte_of_the_slot);
    RUN(poison_pattern_is_exact_for_strides_1_to_70_and_every_alignment);
    RUN(poison_default_report_prints_the_slot_and_aborts);
    RUN(poison_random_run_reports_nothing_false);

    RUN(asan_reports_every_access_to_a_free_slot);
    RUN(asan_valid_use_reports_nothing);
    RUN(asan_memory_goes_back_unpoisoned);
    return test_summary();
}
