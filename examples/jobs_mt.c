/*
 * jobs_mt.c -- a small job system on opool_mt.
 *
 * A producer thread creates jobs faster than four workers can run them. Jobs
 * live in a fixed opool_mt of 64 slots. Every thread has its own cache (a
 * magazine: its hits touch no shared cache line). The producer allocates
 * through its cache with opool_mt_cache_alloc_wait, so it blocks whenever 64
 * jobs are in flight and wakes as soon as a worker finishes one: the pool is
 * the back-pressure. Only handles travel through the queue; a worker checks
 * each with opool_mt_get before running it, and frees it through its own
 * cache, which hands the slot straight to the producer when it is waiting.
 *
 * The program checks itself: every job runs exactly once, the results add
 * up, no alloc failed (a wait that ends with a slot is no failure), and at
 * the end every slot is free again. Exit status 0 on success.
 */
#include "opool_mt.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

enum { POOL_SLOTS = 64, WORKERS = 4, JOBS = 200000, QUEUE = 256 };

struct job {
    uint32_t id;
    uint32_t n;      /* input */
    uint64_t result; /* output: the sum of 1..n */
};

/* A bounded queue of handles (a mutex and two conditions keep it short; the
 * pool itself takes no lock). */
static struct {
    pthread_mutex_t lock;
    pthread_cond_t not_empty, not_full;
    opool_handle items[QUEUE];
    uint32_t head, count;
    bool closed;
} queue;

static void queue_push(opool_handle h) {
    pthread_mutex_lock(&queue.lock);
    while (queue.count == QUEUE) pthread_cond_wait(&queue.not_full, &queue.lock);
    queue.items[(queue.head + queue.count++) % QUEUE] = h;
    pthread_cond_signal(&queue.not_empty);
    pthread_mutex_unlock(&queue.lock);
}

static bool queue_pop(opool_handle *h) {
    pthread_mutex_lock(&queue.lock);
    while (queue.count == 0 && !queue.closed) pthread_cond_wait(&queue.not_empty, &queue.lock);
    bool got = queue.count > 0;
    if (got) {
        *h = queue.items[queue.head];
        queue.head = (queue.head + 1) % QUEUE;
        queue.count--;
        pthread_cond_signal(&queue.not_full);
    }
    pthread_mutex_unlock(&queue.lock);
    return got;
}

static void queue_close(void) {
    pthread_mutex_lock(&queue.lock);
    queue.closed = true;
    pthread_cond_broadcast(&queue.not_empty);
    pthread_mutex_unlock(&queue.lock);
}

static opool_mt *jobs;
static unsigned char done[JOBS]; /* each written by the one worker that ran the job */

struct worker {
    pthread_t thread;
    uint64_t sum, ran, stale;
};

static void *worker_main(void *arg) {
    struct worker *w = arg;
    opool_mt_cache *cache = opool_mt_cache_create(jobs, 16);
    opool_handle h;
    while (queue_pop(&h)) {
        struct job *j = opool_mt_get(jobs, h);
        if (j == NULL) { /* never: each handle is queued once and freed once */
            w->stale++;
            continue;
        }
        j->result = (uint64_t)j->n * (j->n + 1) / 2;
        w->sum += j->result;
        done[j->id]++;
        w->ran++;
        if (opool_mt_cache_free(cache, h) != OPOOL_OK) w->stale++;
    }
    opool_mt_cache_destroy(cache); /* its parked slots go back to the pool */
    return NULL;
}

int main(void) {
    opool_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.object_size = sizeof(struct job);
    desc.object_align = _Alignof(struct job);
    desc.capacity = POOL_SLOTS;
    if (opool_mt_create(&jobs, &desc) != OPOOL_OK) return 1;
    pthread_mutex_init(&queue.lock, NULL);
    pthread_cond_init(&queue.not_empty, NULL);
    pthread_cond_init(&queue.not_full, NULL);

    struct worker workers[WORKERS];
    memset(workers, 0, sizeof workers);
    for (int i = 0; i < WORKERS; i++)
        if (pthread_create(&workers[i].thread, NULL, worker_main, &workers[i]) != 0) return 1;

    /* the producer: this thread, with its own cache */
    opool_mt_cache *mine;
    if (opool_mt_cache_create_ex(&mine, jobs, 16) != OPOOL_OK) return 1;
    uint64_t expect = 0;
    for (uint32_t id = 0; id < JOBS; id++) {
        opool_handle h;
        struct job *j = opool_mt_cache_alloc_wait(mine, &h, OPOOL_WAIT_FOREVER);
        if (j == NULL) return 1; /* cannot happen without a timeout */
        j->id = id;
        j->n = id % 1000;
        expect += (uint64_t)j->n * (j->n + 1) / 2;
        queue_push(h);
    }
    queue_close();
    opool_mt_cache_destroy(mine);

    uint64_t sum = 0, ran = 0, stale = 0;
    for (int i = 0; i < WORKERS; i++) {
        pthread_join(workers[i].thread, NULL);
        sum += workers[i].sum;
        ran += workers[i].ran;
        stale += workers[i].stale;
    }
    uint32_t twice = 0;
    for (uint32_t id = 0; id < JOBS; id++) twice += done[id] != 1;

    opool_mt_stats st;
    opool_mt_get_stats(jobs, &st);
    printf("jobs: %llu run by %d workers from a pool of %u slots; the producer slept %llu times "
           "(pool full); %llu slots stolen from caches; %llu failed allocs\n",
           (unsigned long long)ran, WORKERS, st.capacity, (unsigned long long)st.sleeps,
           (unsigned long long)st.steals, (unsigned long long)st.failed_allocs);
    bool ok = ran == JOBS && sum == expect && stale == 0 && twice == 0 && st.count == 0 &&
              st.parked == 0 && st.caches == 0 && st.failed_allocs == 0;
    /* every slot is free again: all 64 can be allocated at once */
    opool_handle all[POOL_SLOTS];
    ok = ok && opool_mt_alloc_bulk(jobs, all, NULL, POOL_SLOTS) == POOL_SLOTS;
    ok = ok && opool_mt_free_bulk(jobs, all, POOL_SLOTS) == POOL_SLOTS;
    printf("%s: sum %llu (expected %llu), %u jobs not run exactly once\n", ok ? "ok" : "FAILED",
           (unsigned long long)sum, (unsigned long long)expect, twice);
    opool_mt_destroy(jobs);
    return ok ? 0 : 1;
}
