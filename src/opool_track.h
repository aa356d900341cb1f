/*
 * opool_track.h -- the debug hooks of every slot and block, written once
 * (like mimalloc's track.h): the poison pattern of OPOOL_POISON and the
 * memory checkers (AddressSanitizer, Valgrind memcheck). Every module calls
 * the same pair when a slot or block becomes free and when it is handed out
 * again; the caller reports a damaged pattern through opool_diag.h.
 * Private: never installed.
 */
#ifndef OPOOL_TRACK_H
#define OPOOL_TRACK_H

#include <stdbool.h>
#include <stddef.h>

/* Memory checkers: free slots are made inaccessible to them, fresh objects
 * accessible (and, under Valgrind, undefined). */
#if defined(__SANITIZE_ADDRESS__)
#define OPOOL__ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define OPOOL__ASAN 1
#endif
#endif
#if defined(OPOOL__ASAN)
#include <sanitizer/asan_interface.h>
#define opool__mem_noaccess(ptr, n) ASAN_POISON_MEMORY_REGION(ptr, n)
#define opool__mem_undefined(ptr, n) ASAN_UNPOISON_MEMORY_REGION(ptr, n)
#define opool__mem_defined(ptr, n) ASAN_UNPOISON_MEMORY_REGION(ptr, n)
#define opool__checker_active() true
#elif defined(OPOOL_HAVE_VALGRIND) && OPOOL_HAVE_VALGRIND
#include <valgrind/memcheck.h>
#define opool__mem_noaccess(ptr, n) ((void)VALGRIND_MAKE_MEM_NOACCESS(ptr, n))
#define opool__mem_undefined(ptr, n) ((void)VALGRIND_MAKE_MEM_UNDEFINED(ptr, n))
#define opool__mem_defined(ptr, n) ((void)VALGRIND_MAKE_MEM_DEFINED(ptr, n))
#define opool__checker_active() (RUNNING_ON_VALGRIND != 0)
#else
#define opool__mem_noaccess(ptr, n) ((void)(ptr), (void)(n))
#define opool__mem_undefined(ptr, n) ((void)(ptr), (void)(n))
#define opool__mem_defined(ptr, n) ((void)(ptr), (void)(n))
#define opool__checker_active() false
#endif

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
