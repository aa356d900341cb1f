/*
 * user_tsan.c -- a user's program built with -fsanitize=thread against the
 * library as installed (plain, uninstrumented): a race-free hand-off through
 * opool_mt must get no report, and a real race on a pool object must.
 *
 *     user_tsan MODE
 *
 *   handoff   the main thread allocates through its cache, fills the object
 *             and hands the handle over through a queue (release/acquire);
 *             the consumer reads it and frees it through its own cache. The
 *             pool is small, so slots go round both caches and the shared
 *             list thousands of times. No report, exit 0.
 *   race      the same, but the main thread writes each object once more
 *             after handing it over, while the consumer may be reading it: a
 *             data race that ThreadSanitizer must report (the pool's own
 *             synchronisation must not hide it).
 *
 * tests/user/check.sh runs both, also built from the single header alone
 * (-DUSER_DIST -Idist: the library's code then compiled with TSan itself).
 */
#if defined(USER_DIST) /* the single header dist/opool.h, compiled here with TSan */
#define OPOOL_IMPLEMENTATION
#include "opool.h"
#else
#include <opool_mt.h>
#endif

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#define ROUNDS 20000
#define QUEUE 16 /* a power of two */

struct msg {
    uint64_t seq;
    char text[40];
};

static opool_mt *pool;
static _Atomic uint64_t queue[QUEUE]; /* handle bits; 0: empty */
static _Atomic unsigned errors;
static int racy;

static void put(uint64_t seq, uint64_t bits) {
    _Atomic uint64_t *q = &queue[seq % QUEUE];
    while (atomic_load_explicit(q, memory_order_acquire) != 0) sched_yield();
    atomic_store_explicit(q, bits, memory_order_release); /* the object before the handle */
}

static uint64_t take(uint64_t seq) {
    _Atomic uint64_t *q = &queue[seq % QUEUE];
    uint64_t bits;
    while ((bits = atomic_load_explicit(q, memory_order_acquire)) == 0) sched_yield();
    atomic_store_explicit(q, 0, memory_order_release);
    return bits;
}

static void *consumer(void *arg) {
    (void)arg;
    opool_mt_cache *c = opool_mt_cache_create(pool, 8);
    if (c == NULL) {
        atomic_fetch_add(&errors, 1);
        return NULL;
    }
    for (uint64_t seq = 1; seq <= ROUNDS; seq++) {
        opool_handle h = {take(seq)};
        struct msg *m = opool_mt_get(pool, h);
        char want[40];
        snprintf(want, sizeof want, "message %llu", (unsigned long long)seq);
        if (m == NULL || m->seq != seq || strcmp(m->text, want) != 0) atomic_fetch_add(&errors, 1);
        if (opool_mt_cache_free(c, h) != OPOOL_OK) atomic_fetch_add(&errors, 1);
    }
    opool_mt_cache_destroy(c);
    return NULL;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "race") == 0)
        racy = 1;
    else if (strcmp(mode, "handoff") != 0) {
        fprintf(stderr, "usage: user_tsan handoff|race\n");
        return 2;
    }
    opool_desc d = {0};
    d.object_size = sizeof(struct msg);
    d.capacity = 32;
    if (opool_mt_create(&pool, &d) != OPOOL_OK) return 1;
    opool_mt_cache *c = opool_mt_cache_create(pool, 8);
    pthread_t t;
    if (c == NULL || pthread_create(&t, NULL, consumer, NULL) != 0) return 1;
    for (uint64_t seq = 1; seq <= ROUNDS; seq++) {
        opool_handle h;
        struct msg *m;
        while ((m = opool_mt_cache_alloc(c, &h)) == NULL) sched_yield();
        m->seq = seq;
        snprintf(m->text, sizeof m->text, "message %llu", (unsigned long long)seq);
        put(seq, h.bits);
        if (racy) m->seq = seq; /* after the hand-over: the race (the same value) */
    }
    pthread_join(t, NULL);
    opool_mt_cache_destroy(c);
    opool_mt_destroy(pool);
    if (atomic_load(&errors) != 0) {
        fprintf(stderr, "user_tsan: %u wrong messages\n", atomic_load(&errors));
        return 1;
    }
    printf("%s: %d messages handed over\n", mode, ROUNDS);
    return 0;
}
