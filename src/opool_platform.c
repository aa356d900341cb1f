/*
 * opool_platform.c -- the operating system's part (see opool_platform.h):
 * the one file of src/ with system calls and POSIX headers.
 *
 * Sections (grep for "==== "):
 *   ==== threads    clock, futex or WaitOnAddress or mutex and condition
 *                   variable, membarrier or FlushProcessWriteBuffers
 *   ==== memory     aligned allocation, mappings for the heap's regions
 *   ==== files      fsync or FlushFileBuffers, rename or MoveFileExW, the
 *                   process id
 */
#if !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L /* clock_gettime, fileno, fsync, open, getpid */
#endif
#if defined(_WIN32) && (!defined(_WIN32_WINNT) || _WIN32_WINNT < 0x0602)
#undef _WIN32_WINNT
#define _WIN32_WINNT 0x0602 /* Windows 8: WaitOnAddress */
#endif

#include "opool_platform.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
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
/* <sys/mman.h> declares it only under _GNU_SOURCE; this is its prototype. */
void *mremap(void *old_address, size_t old_size, size_t new_size, int flags, ...);
#if !defined(MREMAP_MAYMOVE)
#define MREMAP_MAYMOVE 1 /* hidden with mremap; its value on Linux */
#endif
#endif
#endif

#if defined(_WIN32)
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <fcntl.h>
#include <io.h>
#include <malloc.h>
#include <sys/stat.h>
#include <windows.h>
#if defined(_MSC_VER)
#pragma comment(lib, "synchronization") /* WaitOnAddress; mingw-w64: -lsynchronization */
#endif
#elif defined(OPOOL__POSIX_FILES)
#include <fcntl.h>
#include <unistd.h>
#endif
#if defined(OPOOL__PTHREAD_KEY)
#include <pthread.h>
#endif

/* ==== threads ============================================================= */

#if defined(__SANITIZE_THREAD__) && !defined(__clang__)
static opool__atomic(uint32_t) opool__fence_word;

void opool__fence_rmw(void) {
    (void)atomic_fetch_add_explicit(&opool__fence_word, 0, memory_order_seq_cst);
}
#endif

_Static_assert(sizeof(opool__atomic(uint32_t)) == sizeof(uint32_t),
               "the futex word is a plain uint32");

#if defined(_WIN32)
uint64_t opool__now_ns(void) {
    /* the counter's rate is fixed at boot; racing first calls store the same value */
    static opool__atomic(uint64_t) opool__qpc_hz;
    uint64_t hz = opool__atomic_load_relaxed(&opool__qpc_hz);
    if (hz == 0) {
        LARGE_INTEGER f;
        QueryPerformanceFrequency(&f); /* never fails since Windows XP */
        hz = (uint64_t)f.QuadPart;
        opool__atomic_store_relaxed(&opool__qpc_hz, hz);
    }
    LARGE_INTEGER c;
    QueryPerformanceCounter(&c);
    uint64_t t = (uint64_t)c.QuadPart;
    /* whole seconds, then the rest: no overflow for hz below 18 GHz */
    return t / hz * 1000000000u + t % hz * 1000000000u / hz;
}
#else
uint64_t opool__now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}
#endif

void opool__sleepq_init(opool__sleepq *q) {
#if defined(OPOOL__FUTEX) || defined(OPOOL__WAIT_ON_ADDRESS)
    (void)q;
#else
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    /* winpthreads refuses CLOCK_MONOTONIC: deadlines are then converted */
    q->realtime = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) != 0;
    pthread_mutex_init(&q->lock, NULL);
    pthread_cond_init(&q->cond, &ca);
    pthread_condattr_destroy(&ca);
#endif
}

void opool__sleepq_destroy(opool__sleepq *q) {
#if defined(OPOOL__FUTEX) || defined(OPOOL__WAIT_ON_ADDRESS)
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
#elif defined(OPOOL__WAIT_ON_ADDRESS)
    (void)q;
    opool__atomic_fetch_add_release(word, 1); /* as above */
    if (n == 1)
        WakeByAddressSingle((void *)word);
    else
        WakeByAddressAll((void *)word);
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
#elif defined(OPOOL__WAIT_ON_ADDRESS)
    (void)q;
    DWORD ms = INFINITE;
    if (deadline != UINT64_MAX) {
        uint64_t now = opool__now_ns(), left = deadline > now ? deadline - now : 0;
        uint64_t up = left / 1000000u + (left % 1000000u != 0); /* never wake early */
        ms = up < INFINITE ? (DWORD)up : INFINITE - 1;
    }
    /* as the futex: the system compares the word with e and sleeps atomically
     * with respect to WakeByAddress* */
    (void)WaitOnAddress((volatile void *)word, &e, sizeof e, ms);
#else
    pthread_mutex_lock(&q->lock);
    uint64_t shift = 0; /* from opool__now_ns to the condition variable's clock */
    if (deadline != UINT64_MAX && q->realtime) {
        struct timespec r;
        clock_gettime(CLOCK_REALTIME, &r);
        uint64_t real = (uint64_t)r.tv_sec * 1000000000u + (uint64_t)r.tv_nsec;
        uint64_t now = opool__now_ns();
        shift = real > now ? real - now : 0;
        if (deadline > UINT64_MAX - 1 - shift) deadline = UINT64_MAX; /* so far: none */
    }
    /* relaxed: the waker bumps the word under the same mutex */
    while (opool__atomic_load_relaxed(word) == e) {
        if (deadline == UINT64_MAX) {
            pthread_cond_wait(&q->cond, &q->lock);
        } else {
            struct timespec until;
            until.tv_sec = (time_t)((deadline + shift) / 1000000000u);
            until.tv_nsec = (long)((deadline + shift) % 1000000000u);
            /* the clock too: emscripten's timed wait without threads returns 0 at once */
            if (pthread_cond_timedwait(&q->cond, &q->lock, &until) == ETIMEDOUT ||
                opool__now_ns() >= deadline)
                break;
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
#elif defined(OPOOL__FLUSH_WRITE_BUFFERS)
    /* 1 Windows, 2 Wine, 0 not asked yet. Wine (8.0 at least) makes
     * FlushProcessWriteBuffers a stub that does nothing: fences there. */
    static opool__atomic(int) opool__wine_state;
    int s = opool__atomic_load_relaxed(&opool__wine_state); /* relaxed: as above */
    if (s == 0) {
        HMODULE nt = GetModuleHandleW(L"ntdll.dll");
        s = nt != NULL && GetProcAddress(nt, "wine_get_version") != NULL ? 2 : 1;
        opool__atomic_store_relaxed(&opool__wine_state, s);
    }
    return s == 1;
#else
    return false;
#endif
}

bool opool__membarrier(void) {
#if defined(OPOOL__MEMBARRIER)
    return syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0;
#elif defined(OPOOL__FLUSH_WRITE_BUFFERS)
    /* an interrupt on every processor that runs a thread of the process: each
     * drains its store buffer there, between two of its instructions, as
     * membarrier's barrier on each running thread; the caller's own call is
     * a full barrier too */
    FlushProcessWriteBuffers();
    return true;
#else
    return false;
#endif
}

/* The one hook of opool__on_thread_end: set by every call (always the same
 * function), read by the thread that set it when it ends. */
static opool__atomic(opool__thread_end_fn *) opool__end_fn;

#if defined(OPOOL__PTHREAD_KEY)
static pthread_key_t opool__end_key;
static pthread_once_t opool__end_once = PTHREAD_ONCE_INIT;
static bool opool__end_ready; /* written once, read after pthread_once */

static void opool__end_run(void *value) {
    opool__thread_end_fn *fn = opool__atomic_load_relaxed(&opool__end_fn); /* this thread set it */
    fn((uintptr_t)value);
}
static void opool__end_init(void) {
    opool__end_ready = pthread_key_create(&opool__end_key, opool__end_run) == 0;
}
#if defined(__GNUC__) || defined(__clang__)
/* A shared library unloaded while threads run must not leave them a
 * destructor in unmapped code (at exit it changes nothing). */
__attribute__((destructor)) static void opool__end_unload(void) {
    if (opool__end_ready) pthread_key_delete(opool__end_key);
}
#endif
#elif defined(OPOOL__FLS)
static INIT_ONCE opool__end_once = INIT_ONCE_STATIC_INIT;
static DWORD opool__end_slot = FLS_OUT_OF_INDEXES; /* written once, read after the init */

/* What a fiber-local slot holds: the value, and the thread that set it.
 * Windows also runs the callback when another thread deletes the fiber
 * that set it (DeleteFiber), while the setting thread may go on: only the
 * setting thread's own end counts. */
typedef struct opool__end_rec {
    uintptr_t value;
    DWORD thread;
} opool__end_rec;

static void NTAPI opool__end_run(void *rec) {
    opool__end_rec *r = (opool__end_rec *)rec;
    if (r == NULL) return;
    opool__thread_end_fn *fn = opool__atomic_load_relaxed(&opool__end_fn); /* this thread set it */
    if (r->thread == GetCurrentThreadId()) fn(r->value);
    HeapFree(GetProcessHeap(), 0, r);
}
static BOOL CALLBACK opool__end_init(PINIT_ONCE once, void *arg, void **ctx) {
    (void)once, (void)arg, (void)ctx;
    opool__end_slot = FlsAlloc(opool__end_run);
    return TRUE;
}
#endif

bool opool__on_thread_end(opool__thread_end_fn *fn, uintptr_t value) {
    opool__atomic_store_relaxed(&opool__end_fn, fn);
#if defined(OPOOL__PTHREAD_KEY)
    if (pthread_once(&opool__end_once, opool__end_init) != 0 || !opool__end_ready) return false;
    return pthread_setspecific(opool__end_key, (void *)value) == 0;
#elif defined(OPOOL__FLS)
    if (!InitOnceExecuteOnce(&opool__end_once, opool__end_init, NULL, NULL) ||
        opool__end_slot == FLS_OUT_OF_INDEXES)
        return false;
    opool__end_rec *r = (opool__end_rec *)FlsGetValue(opool__end_slot);
    if (r == NULL) {
        r = (opool__end_rec *)HeapAlloc(GetProcessHeap(), 0, sizeof *r);
        if (r == NULL || !FlsSetValue(opool__end_slot, r)) {
            if (r != NULL) HeapFree(GetProcessHeap(), 0, r);
            return false;
        }
    }
    r->value = value;
    r->thread = GetCurrentThreadId();
    return true;
#else
    (void)value;
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

void *opool__os_remap(void *ptr, size_t old, size_t size) {
#if defined(__linux__)
    void *p = mremap(ptr, old, size, MREMAP_MAYMOVE); /* moves page tables, not bytes */
    return p == MAP_FAILED ? NULL : p;
#else
    (void)ptr;
    (void)old;
    (void)size;
    return NULL;
#endif
}

bool opool__os_reset(void *ptr, size_t size) {
#if defined(__linux__)
    return madvise(ptr, size, MADV_DONTNEED) /* reads zero when next touched */ == 0;
#else
    (void)ptr; /* elsewhere the advice may keep the bytes: say nothing was reset */
    (void)size;
    return false;
#endif
}
#elif defined(OPOOL__VIRTUAL_ALLOC)
/* size bytes at an address aligned to align, reserved (MEM_RESERVE) or
 * reserved and committed. A reservation starts at a multiple of the
 * allocation granularity (64 KiB); for more, size + align bytes are
 * reserved to find an aligned address, released, and size bytes reserved
 * there, again if another thread took the range meanwhile (the part
 * around it cannot be released alone: a reservation goes back whole). */
static void *opool__os_map_aligned(size_t size, size_t align, DWORD type, DWORD protect) {
    SYSTEM_INFO si;
    GetSystemInfo(&si);
    if (align <= si.dwAllocationGranularity) return VirtualAlloc(NULL, size, type, protect);
    if (size > SIZE_MAX - align) return NULL;
    for (int attempt = 0; attempt < 64; attempt++) {
        char *raw = (char *)VirtualAlloc(NULL, size + align, MEM_RESERVE, PAGE_NOACCESS);
        if (raw == NULL) return NULL;
        uintptr_t at = ((uintptr_t)raw + align - 1) & ~(uintptr_t)(align - 1);
        (void)VirtualFree(raw, 0, MEM_RELEASE);
        void *p = VirtualAlloc((void *)at, size, type, protect);
        if (p != NULL) return p;
    }
    return NULL;
}

void *opool__os_map(size_t size, size_t align, bool *zeroed) {
    void *p = opool__os_map_aligned(size, align, MEM_RESERVE | MEM_COMMIT, PAGE_READWRITE);
    *zeroed = p != NULL;
    return p;
}

/* Reserved only: no commit charge until opool__os_commit */
void *opool__os_reserve(size_t size, size_t align) {
    return opool__os_map_aligned(size, align, MEM_RESERVE, PAGE_NOACCESS);
}

bool opool__os_commit(void *ptr, size_t size) {
    return VirtualAlloc(ptr, size, MEM_COMMIT, PAGE_READWRITE) != NULL;
}

/* ptr: the base of the reservation (VirtualFree releases it whole) */
void opool__os_unmap(void *ptr, size_t size) {
    (void)size;
    (void)VirtualFree(ptr, 0, MEM_RELEASE);
}

void *opool__os_remap(void *ptr, size_t old, size_t size) {
    (void)ptr; /* a reservation cannot be moved or grown in place for sure */
    (void)old;
    (void)size;
    return NULL;
}

/* MEM_RESET would keep the bytes until the system wants the memory: they
 * would not read zero. Decommitted, the memory goes back at once; committed
 * again, the range reads zero. The second call fails only at the system's
 * commit limit, reached in between: the range is then inaccessible, and the
 * process stops here rather than fault later in a page the heap thinks it
 * has (as Linux kills a process that overcommitted). */
bool opool__os_reset(void *ptr, size_t size) {
    if (!VirtualFree(ptr, size, MEM_DECOMMIT)) return false; /* nothing changed */
    if (VirtualAlloc(ptr, size, MEM_COMMIT, PAGE_READWRITE) == NULL) abort();
    return true;
}
#else
void *opool__os_map(size_t size, size_t align, bool *zeroed) {
    *zeroed = false;
    return opool__sys_alloc(NULL, size, align);
}

void opool__os_unmap(void *ptr, size_t size) { opool__sys_free(NULL, ptr, size); }

void *opool__os_remap(void *ptr, size_t old, size_t size) {
    (void)ptr;
    (void)old;
    (void)size;
    return NULL;
}

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

#if defined(_WIN32)
/* path (UTF-8) in UTF-16, in *w (free it): 1; 0 when path is not UTF-8 (the
 * ANSI calls take it then, as fopen does); -1 when out of memory. */
static int opool__wide(const char *path, wchar_t **w) {
    *w = NULL;
    int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, NULL, 0);
    if (n <= 0) return 0;
    *w = (wchar_t *)malloc((size_t)n * sizeof **w);
    if (*w == NULL) return -1;
    (void)MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, *w, n);
    return 1;
}

/* _O_EXCL rather than fopen's "x", which Windows' older C library lacks */
FILE *opool__file_create(const char *path) {
    const int flags = _O_WRONLY | _O_CREAT | _O_EXCL | _O_BINARY;
    wchar_t *w;
    int k = opool__wide(path, &w), fd = -1;
    if (k < 0) return NULL;
    fd = k ? _wopen(w, flags, _S_IREAD | _S_IWRITE) : _open(path, flags, _S_IREAD | _S_IWRITE);
    free(w);
    if (fd < 0) return NULL;
    FILE *f = _fdopen(fd, "wb");
    if (f == NULL) _close(fd);
    return f;
}

FILE *opool__file_open_read(const char *path) {
    wchar_t *w;
    int k = opool__wide(path, &w);
    if (k < 0) return NULL;
    FILE *f = k ? _wfopen(w, L"rb") : fopen(path, "rb");
    free(w);
    return f;
}

bool opool__file_remove(const char *path) {
    wchar_t *w;
    int k = opool__wide(path, &w);
    if (k < 0) return false;
    bool ok = k ? DeleteFileW(w) != 0 : DeleteFileA(path) != 0;
    free(w);
    return ok;
}

bool opool__file_sync(FILE *f) {
    if (fflush(f) != 0) return false;
    intptr_t h = _get_osfhandle(_fileno(f));
    return h != (intptr_t)INVALID_HANDLE_VALUE && FlushFileBuffers((HANDLE)h) != 0;
}

/* Refused, with nothing changed, while `to` is open elsewhere without
 * FILE_SHARE_DELETE (C's fopen shares no delete): the caller's error. */
bool opool__file_replace(const char *from, const char *to) {
    const DWORD how = MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH;
    wchar_t *wf, *wt = NULL;
    int kf = opool__wide(from, &wf), kt = kf < 0 ? -1 : opool__wide(to, &wt);
    bool ok = false;
    if (kf > 0 && kt > 0)
        ok = MoveFileExW(wf, wt, how) != 0;
    else if (kf == 0 && kt == 0)
        ok = MoveFileExA(from, to, how) != 0;
    /* else out of memory, or one path UTF-8 and the other not: refused */
    free(wf);
    free(wt);
    return ok;
}

void opool__file_sync_dir(char *path) {
    (void)path; /* MOVEFILE_WRITE_THROUGH returned once the rename was on disk */
}

unsigned long opool__process_id(void) { return (unsigned long)GetCurrentProcessId(); }
#else
FILE *opool__file_create(const char *path) { return fopen(path, "wbx"); }

FILE *opool__file_open_read(const char *path) { return fopen(path, "rb"); }

bool opool__file_remove(const char *path) { return remove(path) == 0; }

bool opool__file_sync(FILE *f) {
    if (fflush(f) != 0) return false;
#if defined(OPOOL__POSIX_FILES)
    return fsync(fileno(f)) == 0;
#else
    return true; /* C stdio has nothing further */
#endif
}

bool opool__file_replace(const char *from, const char *to) { return rename(from, to) == 0; }

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
#endif
