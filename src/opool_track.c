/*
 * opool_track.c -- the poison pattern, the memory checkers' hooks and the
 * ThreadSanitizer hand-offs (see opool_track.h): the only code that fills or
 * checks poison, and the only weak references to a sanitizer's runtime.
 */
#include "opool_track.h"

#include <stdint.h>
#include <string.h>

#if defined(OPOOL__CHECKERS) && defined(OPOOL_HAVE_VALGRIND) && OPOOL_HAVE_VALGRIND
#include <valgrind/memcheck.h>
#define OPOOL__VALGRIND 1
#endif

/* ==== checkers ============================================================ */

#if defined(OPOOL__WEAK_SANITIZERS)
/* The runtimes' own interface (sanitizer/asan_interface.h and
 * tsan_interface.h of GCC and Clang), declared weak: NULL unless the
 * program links the runtime. */
extern void __asan_poison_memory_region(void const volatile *addr, size_t size)
    __attribute__((weak));
extern void __asan_unpoison_memory_region(void const volatile *addr, size_t size)
    __attribute__((weak));
extern void __tsan_acquire(void *addr) __attribute__((weak));
extern void __tsan_release(void *addr) __attribute__((weak));
#define OPOOL__ASAN_POISON __asan_poison_memory_region
#define OPOOL__ASAN_UNPOISON __asan_unpoison_memory_region
#define OPOOL__TSAN_ACQUIRE __tsan_acquire
#define OPOOL__TSAN_RELEASE __tsan_release
#else
#define OPOOL__ASAN_POISON ((void (*)(void const volatile *, size_t))NULL)
#define OPOOL__ASAN_UNPOISON ((void (*)(void const volatile *, size_t))NULL)
#define OPOOL__TSAN_ACQUIRE ((void (*)(void *))NULL)
#define OPOOL__TSAN_RELEASE ((void (*)(void *))NULL)
#endif

#if defined(OPOOL__CHECKERS)
void opool__mem_noaccess(const void *ptr, size_t n) {
    if (OPOOL__ASAN_POISON) OPOOL__ASAN_POISON(ptr, n);
#if defined(OPOOL__VALGRIND)
    (void)VALGRIND_MAKE_MEM_NOACCESS(ptr, n);
#endif
}

void opool__mem_undefined(const void *ptr, size_t n) {
    if (OPOOL__ASAN_UNPOISON) OPOOL__ASAN_UNPOISON(ptr, n);
#if defined(OPOOL__VALGRIND)
    (void)VALGRIND_MAKE_MEM_UNDEFINED(ptr, n);
#endif
}

void opool__mem_defined(const void *ptr, size_t n) {
    if (OPOOL__ASAN_UNPOISON) OPOOL__ASAN_UNPOISON(ptr, n);
#if defined(OPOOL__VALGRIND)
    (void)VALGRIND_MAKE_MEM_DEFINED(ptr, n);
#endif
}

bool opool__checker_active(void) {
#if defined(OPOOL__VALGRIND)
    if (RUNNING_ON_VALGRIND) return true;
#endif
    return OPOOL__ASAN_POISON != NULL && OPOOL__ASAN_UNPOISON != NULL;
}
#endif

/* A library compiled with TSan is seen whole: nothing to add. */
bool opool__sync_active(void) {
#if defined(OPOOL__TSAN)
    return false;
#else
    return OPOOL__TSAN_ACQUIRE != NULL && OPOOL__TSAN_RELEASE != NULL;
#endif
}

void opool__sync_release(const void *obj) {
    if (OPOOL__TSAN_RELEASE) OPOOL__TSAN_RELEASE((void *)(uintptr_t)obj);
}

void opool__sync_acquire(const void *obj) {
    if (OPOOL__TSAN_ACQUIRE) OPOOL__TSAN_ACQUIRE((void *)(uintptr_t)obj);
}

/* ==== poison ============================================================== */

/* The poison pattern's bytes: 0x1deadb0b little-endian, repeated, whatever
 * the machine's byte order. */
static const unsigned char opool__poison8[8] = {0x0b, 0xdb, 0xea, 0x1d, 0x0b, 0xdb, 0xea, 0x1d};

static void opool__poison_fill(unsigned char *b, size_t n) {
    size_t k = 0;
    for (; k + 8 <= n; k += 8) memcpy(b + k, opool__poison8, 8);
    for (; k < n; k++) b[k] = opool__poison8[k & 7];
}

static bool opool__poison_intact(const unsigned char *b, size_t n) {
    size_t k = 0;
    for (; k + 8 <= n; k += 8)
        if (memcmp(b + k, opool__poison8, 8) != 0) return false;
    for (; k < n; k++)
        if (b[k] != opool__poison8[k & 7]) return false;
    return true;
}

void opool__track_on_free(void *obj, size_t size, size_t keep, bool poison) {
    if (poison) {
        /* a slot's padding was hidden while it was live: open it all to fill it */
        opool__mem_defined(obj, size);
        opool__poison_fill((unsigned char *)obj + keep, size - keep);
    }
    opool__mem_noaccess(obj, size);
}

bool opool__track_on_reuse(void *obj, size_t size, size_t keep, size_t live, bool poison) {
    bool intact = true;
    if (poison) {
        opool__mem_defined(obj, size);
        intact = opool__poison_intact((const unsigned char *)obj + keep, size - keep);
        opool__mem_noaccess(obj, size); /* the padding stays hidden while live */
    }
    /* the object's bytes are whatever they were: undefined to a checker */
    opool__mem_undefined(obj, live);
    return intact;
}
