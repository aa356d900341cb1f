/*
 * tracer_check.c -- a program for bench/trace/check.sh to run under the
 * tracer: every traced function, four threads at once, a fork whose child
 * frees a block it inherited, and a fork child that allocates and then
 * execs this program again. It prints, per process, the least the trace
 * must hold ("EXPECT <role> <pid> malloc>=N ..."); the C library may add
 * calls of its own, never remove these.
 *
 *     tracer_check            the parent
 *     tracer_check exec N     the exec'd child: N mallocs and frees
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define THREADS 4
#define PER_THREAD 20000

static void *must(void *p) {
    if (p == NULL) {
        fprintf(stderr, "tracer_check: out of memory\n");
        exit(1);
    }
    return p;
}

/* Each thread: PER_THREAD mallocs of sizes 1..1024, a tenth of them grown by
 * realloc, freed in a scattered order. */
static void *worker(void *arg) {
    uint64_t x = (uintptr_t)arg * 0x9e3779b97f4a7c15u + 1;
    enum { LIVE = 64 };
    char *live[LIVE] = {0};
    for (int i = 0; i < PER_THREAD; i++) {
        x = x * 6364136223846793005u + 1442695040888963407u;
        int k = (int)(x >> 58);
        free(live[k]);
        size_t z = 1 + (size_t)(x >> 20) % 1024;
        char *p = must(malloc(z));
        memset(p, k, z);
        if (i % 10 == 0) p = must(realloc(p, z * 2));
        live[k] = p;
    }
    for (int k = 0; k < LIVE; k++) free(live[k]);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "exec") == 0) {
        int n = atoi(argv[2]);
        for (int i = 0; i < n; i++) free(must(malloc(48 + (size_t)i)));
        printf("EXPECT exec %d malloc>=%d free>=%d realloc>=0 aligned>=0 calloc>=0 threads>=1 "
               "unknown>=0\n",
               (int)getpid(), n, n);
        return 0;
    }

    /* every function once, on this thread */
    char *a = must(malloc(100));
    char *b = must(calloc(10, 10));
    if (b[0] || b[99]) return 1;
    a = must(realloc(a, 1000));
    char *c = must(realloc(NULL, 50));
    char *d = must(malloc(30));
    if (realloc(d, 0) != NULL) return 1; /* glibc: frees d, returns NULL */
    c = must(reallocarray(c, 20, 10));
    void *e = NULL;
    if (posix_memalign(&e, 64, 200) != 0) return 1;
    char *f = must(aligned_alloc(128, 256));
    char *g = must(memalign(32, 100));
    char *h = must(valloc(100));
    char *i = must(pvalloc(100));
    free(b);
    free(c);
    free(e);
    free(f);
    free(g);
    free(h);
    free(i);
    free(NULL); /* not recorded */

    pthread_t t[THREADS];
    for (int k = 0; k < THREADS; k++)
        if (pthread_create(&t[k], NULL, worker, (void *)(uintptr_t)(k + 1)) != 0) return 1;
    for (int k = 0; k < THREADS; k++) pthread_join(t[k], NULL);

    fflush(stdout);
    pid_t p1 = fork();
    if (p1 == 0) { /* frees a block the parent allocated: unknown to its own trace */
        for (int k = 0; k < 5; k++) free(must(malloc(16)));
        free(a);
        printf("EXPECT fork %d malloc>=5 free>=5 realloc>=0 aligned>=0 calloc>=0 threads>=1 "
               "unknown>=1\n",
               (int)getpid());
        exit(0);
    }
    pid_t p2 = fork();
    if (p2 == 0) { /* writes a trace, then execs: the new image gets <pid>.1 */
        for (int k = 0; k < 3; k++) free(must(malloc(24)));
        char self[4096];
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        if (n <= 0) _exit(1);
        self[n] = '\0';
        char *args[] = {self, "exec", "7", NULL};
        execv(self, args);
        _exit(127);
    }
    int st1 = 0, st2 = 0;
    waitpid(p1, &st1, 0);
    waitpid(p2, &st2, 0);
    free(a);
    if (!WIFEXITED(st1) || WEXITSTATUS(st1) || !WIFEXITED(st2) || WEXITSTATUS(st2)) return 1;
    /* the parent: its own calls, the workers', and the 4 + 1 threads */
    printf("EXPECT parent %d malloc>=%d free>=%d realloc>=%d aligned>=5 calloc>=1 threads>=%d "
           "unknown>=0\n",
           (int)getpid(), 2 + THREADS * PER_THREAD, 8 + THREADS * PER_THREAD,
           2 + THREADS * PER_THREAD / 10, THREADS + 1);
    printf("EXPECT forkexec %d malloc>=3 free>=3 realloc>=0 aligned>=0 calloc>=0 threads>=1 "
           "unknown>=0\n",
           (int)p2);
    return 0;
}
