/*
 * opool_platform.c -- the operating system's part (see opool_platform.h):
 * the one file of src/ with system calls and POSIX headers.
 *
 * Sections (grep for "==== "):
 *   ==== threads    clock, futex or mutex and condition variable, membarrier
 *   ==== memory     aligned allocation, mappings for the heap's regions
 *   ==== files      fsync, rename, the process id
 */
#if !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L /* clock_gettime, fileno, fsync, open, getpid */
#endif

#include "opool_internal.h"
#include "opool_platform.h"

#include <errno.h>
#include <limits.h>
#include <time.h>

#if defined(OPOOL__FUTEX) || defined(OPOOL__MEMBARRIER)
#include <sys/syscall.h>
#include <unistd.h>
/* <unistd.h> declares it only under _DEFAULT_SOURCE; this is its prototype. */
long syscall(long number, ...);
#endif
#if defined(OPOOL__FUTEX)
#include <linux/futex.h>
#endif
#if defined(OPOOL__MEMBARRIER)
#include <linux/membarrier.h>
#endif

#if defined(OPOOL__MMAP)
#include <sys/mman.h>
#if !defined(MAP_ANONYMOUS) && defined(MAP_ANON)
#define MAP_ANONYMOUS MAP_ANON
#endif
#if !defined(MAP_ANONYMOUS) && defined(__linux__)
#define MAP_ANONYMOUS 0x20 /* <sys/mman.h> hides it under _POSIX_C_SOURCE alone */
#endif
#if defined(__linux__)
/* <sys/mman.h> declares it only under _DEFAULT_SOURCE; this is its prototype. */
int madvise(void *addr, size_t length, int advice);
#if !defined(MADV_DONTNEED)
#define MADV_DONTNEED                                                                              \
    4 /* hidden with madvise; its value on Linux (but alpha, which we don't build) */
#endif
#endif
#endif

#if defined(_WIN32)
#include <io.h>
#include <malloc.h>
#include <windows.h>
#elif defined(OPOOL__POSIX_FILES)
#include <fcntl.h>
#include <unistd.h>
#endif

/* ==== threads ============================================================= */

_Static_assert(sizeof(opool__atomic(uint32_t)) == sizeof(uint32_t),
               "the futex word is a plain uint32");

uint64_t opool__now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

void opool__sleepq_init(opool__sleepq *q) {
#if defined(OPOOL__FUTEX)
    (void)q;
#else
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&q->lock, NULL);
    pthread_cond_init(&q->cond, &ca);
    pthread_condattr_destroy(&ca);
#endif
}

void opool__sleepq_destroy(opool__sleepq *q) {
#if defined(OPOOL__FUTEX)
    (void)q;
#else
    pthread_cond_destroy(&q->cond);
    pthread_mutex_destroy(&q->lock);
#endif
}

void opool__sleepq_wake(opool__sleepq *q, opool__atomic(uint32_t) * word, uint32_t n) {
#if defined(OPOOL__FUTEX)
    (void)q;
    /* release: a waiter that reads the new epoch (acquire) sees the slots */
    opool__atomic_fetch_add_release(word, 1);
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, n > INT_MAX ? INT_MAX : (int)n, NULL,
            NULL, 0);
#else
    pthread_mutex_lock(&q->lock);
    opool__atomic_fetch_add_release(word, 1); /* as above */
    if (n == 1)
        pthread_cond_signal(&q->cond);
    else
        pthread_cond_broadcast(&q->cond);
    pthread_mutex_unlock(&q->lock);
#endif
}

void opool__sleepq_sleep(opool__sleepq *q, opool__atomic(uint32_t) * word, uint32_t e,
                         uint64_t deadline) {
#if defined(OPOOL__FUTEX)
    (void)q;
    struct timespec rel, *tp = NULL;
    if (deadline != UINT64_MAX) {
        uint64_t now = opool__now_ns(), left = deadline > now ? deadline - now : 0;
        rel.tv_sec = (time_t)(left / 1000000000u);
        rel.tv_nsec = (long)(left % 1000000000u);
        tp = &rel;
    }
    /* the kernel compares the word with e and sleeps atomically: a bump after
     * our read of e either makes this return at once or wakes it */
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, e, tp, NULL, 0);
#else
    pthread_mutex_lock(&q->lock);
    /* relaxed: the waker bumps the word under the same mutex */
    while (opool__atomic_load_relaxed(word) == e) {
        if (deadline == UINT64_MAX) {
            pthread_cond_wait(&q->cond, &q->lock);
        } else {
            struct timespec until;
            until.tv_sec = (time_t)(deadline / 1000000000u);
            until.tv_nsec = (long)(deadline % 1000000000u);
            if (pthread_cond_timedwait(&q->cond, &q->lock, &until) == ETIMEDOUT) break;
        }
    }
    pthread_mutex_unlock(&q->lock);
#endif
}

bool opool__membarrier_ready(void) {
#if defined(OPOOL__MEMBARRIER)
    /* 1 registered, 2 unavailable, 0 not asked yet */
    static opool__atomic(int) opool__membarrier_state;
    /* relaxed: the answer is the kernel's, the same for every thread */
    int s = opool__atomic_load_relaxed(&opool__membarrier_state);
    if (s == 0) {
        long q = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
        s = 2;
        if (q > 0 && (q & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
            syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0)
            s = 1;
        opool__atomic_store_relaxed(&opool__membarrier_state, s);
    }
    return s == 1;
#else
    return false;
#endif
}

bool opool__membarrier(void) {
#if defined(OPOOL__MEMBARRIER)
    return syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0;
#else
    return false;
#endif
}

/* ==== memory ============================================================== */

void *opool__sys_alloc(void *ctx, size_t size, size_t align) {
    (void)ctx;
    if (align < OPOOL__LINE) align = OPOOL__LINE; /* every block on a cache line */
#if defined(_WIN32)
    return _aligned_malloc(size, align);
#else
    void *ptr = NULL;
    return posix_memalign(&ptr, align, size) == 0 ? ptr : NULL;
#endif
}

void *opool__sys_realloc(void *ptr, size_t size) {
#if defined(_WIN32)
    (void)ptr; /* _aligned_malloc's blocks are not realloc's */
    (void)size;
    return NULL;
#else
    return realloc(ptr, size);
#endif
}

void opool__sys_free(void *ctx, void *ptr, size_t size) {
    (void)ctx;
    (void)size;
#if defined(_WIN32)
    _aligned_free(ptr);
#else
    free(ptr);
#endif
}

#if defined(OPOOL__MMAP)
/* size bytes at an address aligned to align, with protection prot: align
 * bytes more mapped than asked, then the ends around the aligned part
 * unmapped. */
static void *opool__os_map_aligned(size_t size, size_t align, int prot) {
    if (size > SIZE_MAX - align) return NULL;
    char *raw = (char *)mmap(NULL, size + align, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == (char *)MAP_FAILED) return NULL;
    uintptr_t at = ((uintptr_t)raw + align - 1) & ~(uintptr_t)(align - 1);
    size_t head = (size_t)(at - (uintptr_t)raw), tail = align - head;
    if (head) (void)munmap(raw, head);
    if (tail) (void)munmap((char *)at + size, tail);
    return (void *)at;
}

void *opool__os_map(size_t size, size_t align, bool *zeroed) {
    void *p = opool__os_map_aligned(size, align, PROT_READ | PROT_WRITE);
    *zeroed = p != NULL;
    return p;
}

/* PROT_NONE: Linux accounts a private mapping's memory once it is writable */
void *opool__os_reserve(size_t size, size_t align) {
    return opool__os_map_aligned(size, align, PROT_NONE);
}

bool opool__os_commit(void *ptr, size_t size) {
    return mprotect(ptr, size, PROT_READ | PROT_WRITE) == 0;
}

void opool__os_unmap(void *ptr, size_t size) { (void)munmap(ptr, size); }

bool opool__os_reset(void *ptr, size_t size) {
#if defined(__linux__)
    return madvise(ptr, size, MADV_DONTNEED) /* reads zero when next touched */ == 0;
#else
    (void)ptr; /* elsewhere the advice may keep the bytes: say nothing was reset */
    (void)size;
    return false;
#endif
}
#else
void *opool__os_map(size_t size, size_t align, bool *zeroed) {
    *zeroed = false;
    return opool__sys_alloc(NULL, size, align);
}

void opool__os_unmap(void *ptr, size_t size) { opool__sys_free(NULL, ptr, size); }

void *opool__os_reserve(size_t size, size_t align) {
    (void)size;
    (void)align;
    return NULL;
}

bool opool__os_commit(void *ptr, size_t size) {
    (void)ptr;
    (void)size;
    return false;
}

bool opool__os_reset(void *ptr, size_t size) {
    (void)ptr;
    (void)size;
    return false;
}
#endif

/* ==== files =============================================================== */

bool opool__file_sync(FILE *f) {
    if (fflush(f) != 0) return false;
#if defined(_WIN32)
    return _commit(_fileno(f)) == 0;
#elif defined(OPOOL__POSIX_FILES)
    return fsync(fileno(f)) == 0;
#else
    return true; /* C stdio has nothing further */
#endif
}

bool opool__file_replace(const char *from, const char *to) {
#if defined(_WIN32)
    return MoveFileExA(from, to, MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH) != 0;
#else
    return rename(from, to) == 0;
#endif
}

void opool__file_sync_dir(char *path) {
#if defined(OPOOL__POSIX_FILES)
    char *slash = strrchr(path, '/');
    const char *dir = ".";
    if (slash == path) {
        dir = "/";
    } else if (slash) {
        *slash = '\0';
        dir = path;
    }
    int fd = open(dir, O_RDONLY);
    if (fd >= 0) {
        (void)fsync(fd);
        (void)close(fd);
    }
#else
    (void)path;
#endif
}

unsigned long opool__process_id(void) {
#if defined(OPOOL__POSIX_FILES)
    return (unsigned long)getpid();
#else
    return 0;
#endif
}
