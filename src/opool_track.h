/*
 * opool_track.h -- the debug hooks of every slot and block, written once
 * (like mimalloc's track.h): the poison pattern of OPOOL_POISON, the
 * memory checkers (AddressSanitizer, Valgrind memcheck) and the hand-offs
 * ThreadSanitizer must be told of. Every module calls the same pair when a
 * slot or block becomes free and when it is handed out again; the caller
 * reports a damaged pattern through opool_diag.h.
 * Private: never installed.
 */
#ifndef OPOOL_TRACK_H
#define OPOOL_TRACK_H

#include <stdbool.h>
#include <stddef.h>

/* Memory checkers: free slots are made inaccessible to them, fresh objects
 * accessible (and, under Valgrind, undefined).
 *
 * The library compiled with AddressSanitizer calls its interface directly.
 * Compiled without (the usual installed package), it still serves a
 * program built with -fsanitize=address: on ELF systems with GCC or Clang
 * it refers to ASan's functions weakly, and finds them at run time exactly
 * when the program has ASan's runtime (OPOOL__WEAK_SANITIZERS). Valgrind is
 * asked at run time (with <valgrind/memcheck.h> at build time). */
#if defined(__SANITIZE_ADDRESS__)
#define OPOOL__ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define OPOOL__ASAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define OPOOL__TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define OPOOL__TSAN 1
#endif
#endif
#if (defined(__GNUC__) || defined(__clang__)) && defined(__ELF__) &&                               \
    !defined(OPOOL_NO_WEAK_SANITIZERS) && !defined(__EMSCRIPTEN__)
#define OPOOL__WEAK_SANITIZERS 1
#endif

#if defined(OPOOL__ASAN)
#include <sanitizer/asan_interface.h>
#define opool__mem_noaccess(ptr, n) ASAN_POISON_MEMORY_REGION(ptr, n)
#define opool__mem_undefined(ptr, n) ASAN_UNPOISON_MEMORY_REGION(ptr, n)
#define opool__mem_defined(ptr, n) ASAN_UNPOISON_MEMORY_REGION(ptr, n)
#define opool__checker_active() true
#elif defined(OPOOL__WEAK_SANITIZERS) || (defined(OPOOL_HAVE_VALGRIND) && OPOOL_HAVE_VALGRIND)
#define OPOOL__CHECKERS 1
/* [ptr, ptr + n) inaccessible; accessible with undefined contents (Valgrind;
 * ASan has no such state); accessible and defined. No-ops without a checker. */
void opool__mem_noaccess(const void *ptr, size_t n);
void opool__mem_undefined(const void *ptr, size_t n);
void opool__mem_defined(const void *ptr, size_t n);
/* A checker watches this process (ASan's runtime, or Valgrind). */
bool opool__checker_active(void);
#else
/* no checker can watch: nothing to tell */
#define opool__mem_noaccess(ptr, n) ((void)(ptr), (void)(n))
#define opool__mem_undefined(ptr, n) ((void)(ptr), (void)(n))
#define opool__mem_defined(ptr, n) ((void)(ptr), (void)(n))
#define opool__checker_active() false
#endif

/* ThreadSanitizer sees the synchronisation of a library compiled with it.
 * One compiled without it is invisible to a program built with
 * -fsanitize=thread, so where its runtime is found (weakly, as ASan's above)
 * a concurrent pool tells it what its atomics imply for the objects: a slot
 * handed back (release) happens before the next owner takes it (acquire).
 * opool__sync_active(): true exactly then; the pool then keeps every slot
 * path out of line (the inline ones are the program's own code). */
bool opool__sync_active(void);
void opool__sync_release(const void *obj);
void opool__sync_acquire(const void *obj);

/* The size bytes at obj (a slot with its padding, or a block) have just
 * become free, or were born free. With poison, bytes [keep, size) get the
 * pattern 0x1deadb0b (little-endian bytes, repeated from obj + keep; keep is
 * 0, or the heap's free-list link, a multiple of 4, written before this
 * call). Then all size bytes are hidden from the memory checker. O(size)
 * with poison, else O(1). */
void opool__track_on_free(void *obj, size_t size, size_t keep, bool poison);

/* The size bytes at obj, free until now, are about to be handed out as an
 * object of live bytes (live <= size). With poison: true if bytes [keep,
 * size) still hold the pattern that opool__track_on_free left, false if one
 * changed (a write after free: the caller reports it). Without poison:
 * true. Then the first live bytes are open to the checker (undefined under
 * Valgrind: the object holds whatever it held), the rest stays hidden. */
bool opool__track_on_reuse(void *obj, size_t size, size_t keep, size_t live, bool poison);

#endif /* OPOOL_TRACK_H */
