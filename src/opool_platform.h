/*
 * opool_platform.h -- the portability boundary: everything opool asks of the
 * compiler's atomics and of the operating system. Private: never installed.
 *
 * No other file of src/ includes a system header for threads, clocks,
 * system calls or files beyond <stdio.h>; they call what this header
 * declares (defined in opool_platform.c).
 *
 * Sections (grep for "==== "):
 *   ==== switches   what the build may turn off, and what it found
 *   ==== atomics    C11 atomics, one macro per operation and memory order
 *   ==== threads    the clock, sleeping on a word, the process-wide barrier
 *   ==== memory     aligned allocation (the default allocator), the heap's ranges
 *   ==== files      durable writes and the atomic replace of opool_save_file
 *
 * What each system gets:
 *               Linux                      Windows                       others
 *   clock       clock_gettime MONOTONIC    QueryPerformanceCounter       clock_gettime
 *   sleeping    futex                      WaitOnAddress                 pthread cond
 *   barrier     membarrier (expedited)     FlushProcessWriteBuffers      fences
 *                                          (Wine: fences)
 *   thread end  pthread key destructor     FlsAlloc callback             pthread key
 *                                                                        (OPOOL_PORTABLE: none)
 *   ranges      mmap, mprotect, madvise    VirtualAlloc, VirtualFree     aligned malloc
 *   files       fsync, rename, getpid      FlushFileBuffers, MoveFileExW C stdio
 * (POSIX systems other than Linux: fsync, rename, getpid for files.)
 */
#ifndef OPOOL_PLATFORM_H
#define OPOOL_PLATFORM_H

#if !defined(OPOOL_RELACY)
#include <stdatomic.h>
#endif
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ==== switches ============================================================ */

/* Define OPOOL_PORTABLE to build with no Linux-, Windows- or POSIX-specific
 * path at all (what every other system gets): it implies the two below and
 * OPOOL_NO_POSIX_FILES. make test builds and runs such a copy. Windows keeps
 * its clock and files (C has no monotonic clock, and its rename cannot
 * replace a file there). */
#if defined(OPOOL_PORTABLE)
#ifndef OPOOL_MT_PORTABLE_WAIT
#define OPOOL_MT_PORTABLE_WAIT 1
#endif
#ifndef OPOOL_MT_NO_MEMBARRIER
#define OPOOL_MT_NO_MEMBARRIER 1
#endif
#ifndef OPOOL_NO_POSIX_FILES
#define OPOOL_NO_POSIX_FILES 1
#endif
#endif

/* Sleeping: the Linux futex, Windows' WaitOnAddress, else a pthread mutex
 * and condition variable. */
#if defined(__linux__) && !defined(OPOOL_MT_PORTABLE_WAIT)
#define OPOOL__FUTEX 1
#endif
#if defined(_WIN32) && !defined(OPOOL_MT_PORTABLE_WAIT)
#define OPOOL__WAIT_ON_ADDRESS 1
#endif
/* The waiter's heavy barrier: Linux's expedited membarrier, Windows'
 * FlushProcessWriteBuffers (not under Wine), else fences. */
#if defined(__linux__) && !defined(OPOOL_MT_NO_MEMBARRIER)
#define OPOOL__MEMBARRIER 1
#endif
#if defined(_WIN32) && !defined(OPOOL_MT_NO_MEMBARRIER)
#define OPOOL__FLUSH_WRITE_BUFFERS 1
#endif
/* Large memory for the heap's regions: mmap and madvise (Linux),
 * VirtualAlloc and VirtualFree (Windows), else the C library's aligned
 * allocation. */
#if defined(__linux__) && !defined(OPOOL_PORTABLE)
#define OPOOL__MMAP 1
#endif
#if defined(_WIN32) && !defined(OPOOL_PORTABLE)
#define OPOOL__VIRTUAL_ALLOC 1
#endif
/* A thread's end: a pthread key's destructor (POSIX), a fiber-local slot's
 * callback (Windows); none under OPOOL_PORTABLE. */
#if defined(_WIN32) && !defined(OPOOL_PORTABLE)
#define OPOOL__FLS 1
#elif !defined(_WIN32) && !defined(OPOOL_PORTABLE)
#define OPOOL__PTHREAD_KEY 1
#endif
/* Files: fsync of the file and its directory, the process id in temporary
 * names (POSIX); FlushFileBuffers, MoveFileExW and UTF-8 paths (Windows,
 * always); else C stdio alone (fflush, rename). */
#if !defined(_WIN32) && !defined(OPOOL_NO_POSIX_FILES)
#define OPOOL__POSIX_FILES 1
#endif

#if !defined(OPOOL__FUTEX) && !defined(OPOOL__WAIT_ON_ADDRESS)
#include <pthread.h>
#endif

/* ==== atomics ============================================================= */

/* Every atomic operation of opool_mt goes through these macros, and each
 * names its memory order, so that the concurrent code can be run under a
 * memory-model checker (relacy, C++) by swapping this one section. A
 * compare-and-swap names its success order, then its failure order. */
#if defined(OPOOL_RELACY)
#include "relacy_atomics.h" /* tests/relacy: the same operations on Relacy's atomics */
#else
#define opool__atomic(T) _Atomic(T)
#define opool__atomic_init(p, v) atomic_init(p, v)

#define opool__atomic_load_relaxed(p) atomic_load_explicit(p, memory_order_relaxed)
#define opool__atomic_load_acquire(p) atomic_load_explicit(p, memory_order_acquire)
#define opool__atomic_load_seq_cst(p) atomic_load_explicit(p, memory_order_seq_cst)

#define opool__atomic_store_relaxed(p, v) atomic_store_explicit(p, v, memory_order_relaxed)
#define opool__atomic_store_release(p, v) atomic_store_explicit(p, v, memory_order_release)

#define opool__atomic_fetch_add_relaxed(p, v) atomic_fetch_add_explicit(p, v, memory_order_relaxed)
#define opool__atomic_fetch_add_release(p, v) atomic_fetch_add_explicit(p, v, memory_order_release)
#define opool__atomic_fetch_add_seq_cst(p, v) atomic_fetch_add_explicit(p, v, memory_order_seq_cst)
#define opool__atomic_fetch_sub_relaxed(p, v) atomic_fetch_sub_explicit(p, v, memory_order_relaxed)
#define opool__atomic_fetch_sub_release(p, v) atomic_fetch_sub_explicit(p, v, memory_order_release)

#define opool__atomic_exchange_relaxed(p, v) atomic_exchange_explicit(p, v, memory_order_relaxed)

#define opool__atomic_cas_weak_acquire_acquire(p, expected, desired)                               \
    atomic_compare_exchange_weak_explicit(p, expected, desired, memory_order_acquire,              \
                                          memory_order_acquire)
#define opool__atomic_cas_weak_release_relaxed(p, expected, desired)                               \
    atomic_compare_exchange_weak_explicit(p, expected, desired, memory_order_release,              \
                                          memory_order_relaxed)
#define opool__atomic_cas_weak_seq_cst_relaxed(p, expected, desired)                               \
    atomic_compare_exchange_weak_explicit(p, expected, desired, memory_order_seq_cst,              \
                                          memory_order_relaxed)
#define opool__atomic_cas_strong_acquire_relaxed(p, expected, desired)                             \
    atomic_compare_exchange_strong_explicit(p, expected, desired, memory_order_acquire,            \
                                            memory_order_relaxed)
#define opool__atomic_cas_strong_seq_cst_relaxed(p, expected, desired)                             \
    atomic_compare_exchange_strong_explicit(p, expected, desired, memory_order_seq_cst,            \
                                            memory_order_relaxed)

#if defined(__SANITIZE_THREAD__) && !defined(__clang__)
/* GCC's ThreadSanitizer does not model fences (its -Wtsan rejects them):
 * there, every fence is a seq_cst read-modify-write of one word instead.
 * Any two such fences are then ordered, and the later one synchronises
 * with the earlier: all that a pair of seq_cst fences orders, and more.
 * Such a build only: the word is a point of contention. A function, not
 * a shared variable, so that the single header's OPOOL_STATIC can make it
 * static as it makes every function the modules share. */
void opool__fence_rmw(void);
#define opool__atomic_fence_seq_cst() opool__fence_rmw()
#else
#define opool__atomic_fence_seq_cst() atomic_thread_fence(memory_order_seq_cst)
#endif
/* A compiler barrier only: orders nothing between threads by itself. */
#define opool__atomic_signal_fence_seq_cst() atomic_signal_fence(memory_order_seq_cst)
#endif /* OPOOL_RELACY */

/* ==== threads ============================================================= */

/* A monotonic clock, in nanoseconds: CLOCK_MONOTONIC; Windows:
 * QueryPerformanceCounter. */
uint64_t opool__now_ns(void);

/* What a word that threads sleep on needs beside itself: nothing with the
 * futex or WaitOnAddress; the mutex and condition variable of the fallback
 * otherwise (realtime: its clock is CLOCK_REALTIME, the system's threads
 * having no monotonic one for it, e.g. winpthreads). */
#if defined(OPOOL__FUTEX) || defined(OPOOL__WAIT_ON_ADDRESS)
typedef struct opool__sleepq {
    char unused; /* C has no empty struct */
} opool__sleepq;
#else
typedef struct opool__sleepq {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool realtime;
} opool__sleepq;
#endif

void opool__sleepq_init(opool__sleepq *q);
void opool__sleepq_destroy(opool__sleepq *q);
/* Add 1 to *word (release: a sleeper that reads the new value with acquire
 * sees what the caller did before) and wake up to n threads sleeping on it. */
void opool__sleepq_wake(opool__sleepq *q, opool__atomic(uint32_t) * word, uint32_t n);
/* Sleep while *word is still e, at most until deadline (opool__now_ns time;
 * UINT64_MAX: none; Windows sleeps in whole milliseconds, rounded up).
 * Returns at once if it already moved; a wake after the caller read e is
 * never lost; spurious returns are possible. */
void opool__sleepq_sleep(opool__sleepq *q, opool__atomic(uint32_t) * word, uint32_t e,
                         uint64_t deadline);

/* Registers the process for the expedited membarrier once, on first use:
 * true if opool__membarrier can be relied on (the owner side of a park may
 * then use a compiler barrier only, docs/CONCURRENCY.md, "Waiting, and the stranding policy").
 * Windows: true, nothing to register; but false under Wine, whose FlushProcessWriteBuffers does
 * nothing (8.0). */
bool opool__membarrier_ready(void);
/* A full barrier on every running thread of the process; false if the
 * system refused it (never call it unless opool__membarrier_ready).
 * Windows: FlushProcessWriteBuffers, which interrupts every processor that
 * runs a thread of the process and drains its stores (never fails). */
bool opool__membarrier(void);

/* Call fn(value) in the calling thread when it ends (value != 0), and in
 * no other thread: one registration per thread, a later one replacing the
 * value; fn the same for every call in the process. False where the system
 * offers no such hook (OPOOL_PORTABLE) or refused it: fn will not be called
 * for this thread. Not called for a thread still running when the process
 * exits, nor (Windows: the hook is fiber-local) for a thread that ends
 * running another fiber than the one that registered. The thread's own
 * thread-local variables may already be gone when fn runs (mingw's emutls). */
typedef void opool__thread_end_fn(uintptr_t value);
bool opool__on_thread_end(opool__thread_end_fn *fn, uintptr_t value);

/* ==== memory ============================================================== */

/* The cache line: the pool's hot fields and its chunks of objects start
 * one, and so does every block of opool__sys_alloc. */
#define OPOOL__LINE 64

/* The C library's aligned allocation, in the shape of opool_allocator (the
 * default of every desc). align: a power of two. */
void *opool__sys_alloc(void *ctx, size_t size, size_t align);
void opool__sys_free(void *ctx, void *ptr, size_t size);
/* Resize a block of opool__sys_alloc to size bytes, aligned only as
 * malloc's are (16 on the usual systems): in place, or moved by the C
 * library (which may move pages rather than bytes). NULL: failed, ptr
 * untouched; also where the C library cannot resize its aligned blocks. */
void *opool__sys_realloc(void *ptr, size_t size);

/* size bytes (a multiple of align) at an address aligned to align (a power
 * of two, at least 4096), straight from the system: mmap or VirtualAlloc
 * where there is one, else opool__sys_alloc. *zeroed: the memory is known
 * to read zero. NULL on failure. Give it back with opool__os_unmap(ptr,
 * size), whole: Windows releases a reservation only whole, from its base. */
void *opool__os_map(size_t size, size_t align, bool *zeroed);
void opool__os_unmap(void *ptr, size_t size);
/* The mapping of opool__os_map at ptr, old bytes, resized to size bytes
 * (both multiples of 4096) with its contents: in place or moved, by moving
 * pages rather than bytes (Linux: mremap). The result is aligned to 4096
 * only. NULL: failed, or no such call here (the mapping as it was). */
void *opool__os_remap(void *ptr, size_t old, size_t size);
/* size bytes of address space at an address aligned to align, reserved and
 * inaccessible (no memory behind them; mmap or VirtualAlloc MEM_RESERVE
 * where there is one, else NULL: no reservation). Make parts usable with
 * opool__os_commit, give the whole back with opool__os_unmap(ptr, size). */
void *opool__os_reserve(size_t size, size_t align);
/* [ptr, ptr + size) of a reservation readable and writable, reading zero.
 * False on failure (nothing changed). */
bool opool__os_commit(void *ptr, size_t size);
/* Tell the system the bytes [ptr, ptr + size) of a mapping are not needed
 * (ptr and size multiples of 4096, within one mapping): their memory goes
 * back, the range stays mapped and reads zero when next touched (Linux:
 * MADV_DONTNEED; Windows: decommitted and committed again). False where
 * there is no such call (the bytes stay as they are). */
bool opool__os_reset(void *ptr, size_t size);

/* ==== files =============================================================== */

/* Paths are the C library's bytes, but on Windows: UTF-8, turned into the
 * system's UTF-16 (bytes that are not UTF-8: the ANSI code page, as fopen
 * takes them), the same way for every call below. */

/* A new file at path, for writing bytes (C11's fopen "wbx": NULL if
 * anything is there already, or on any failure). */
FILE *opool__file_create(const char *path);
/* The file at path, for reading bytes (fopen "rb"); NULL with errno ENOENT
 * when there is none. */
FILE *opool__file_open_read(const char *path);
/* Delete the file at path; false if it could not be. */
bool opool__file_remove(const char *path);
/* Flush f's bytes to the device (fsync; Windows: FlushFileBuffers; C stdio
 * alone: to the C library's). */
bool opool__file_sync(FILE *f);
/* Put `from` in place of `to` in one step (rename; Windows: MoveFileExW,
 * write-through). False, and both files as they were, if it cannot be done:
 * on Windows, while another process has `to` open without FILE_SHARE_DELETE. */
bool opool__file_replace(const char *from, const char *to);
/* Make a rename in the directory of path durable (best effort: the file is
 * already in place, so a failure changes nothing). May write into path.
 * Nothing on Windows: MoveFileExW's write-through did it. */
void opool__file_sync_dir(char *path);
/* A number that tells this process from others running now (0 if none). */
unsigned long opool__process_id(void);

#endif /* OPOOL_PLATFORM_H */
