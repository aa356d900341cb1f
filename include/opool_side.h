/*
 * opool_side.h -- side tables: fixed-size values keyed by the handles of one
 * pool (C11 and C++11)
 *
 * ============================================================================
 * WHAT IT IS
 * ============================================================================
 * A side table attaches a value to a pool's handle and gives it back only
 * while asked with exactly that handle, like Rust slotmap's SecondaryMap or
 * a component store keyed by an entity id. Use one for data that only some
 * objects have, or that one part of a program keeps about another's objects
 * (debug names, AI state, a render id), without growing the pool's type.
 *
 * ============================================================================
 * STEP BY STEP
 * ============================================================================
 *     opool_side *names;
 *     if (opool_side_create(&names, sizeof(struct name), _Alignof(struct name), 256)
 *         != OPOOL_OK) ...;
 *
 *     struct name *n = opool_side_put(names, h);   // storage for h's value
 *     snprintf(n->text, sizeof n->text, "ship %u", k);
 *     n = opool_side_get(names, h);                // NULL unless the entry is for exactly h
 *     opool_side_remove(names, h);                 // OPOOL_ESTALE the 2nd time
 *
 *     // every entry; removing the one at i is allowed
 *     for (uint32_t i = opool_side_count(names); i-- > 0;) {
 *         if (!opool_valid(pool, opool_side_handle_at(names, i)))
 *             opool_side_remove(names, opool_side_handle_at(names, i));
 *     }
 *     opool_side_destroy(names);
 *
 * opool_typed.h's OPOOL_TYPED_SIDE(name, P, V) gives a typed table that takes
 * only P's handle type and hands out V *.
 *
 * ============================================================================
 * HOW IT WORKS, AND WHAT IT COSTS
 * ============================================================================
 * A sparse array indexed by the handle's slot index holds, for each index,
 * the generation of its entry and the entry's position in two dense arrays:
 * the entries' handles and their values. So:
 *   - get: the sparse record of the index, a generation compare, the value
 *     at its position. O(1); two dependent loads before the value.
 *   - put: the same, then a new entry appended to the dense arrays, or the
 *     entry of the index re-keyed in place when its generation differs.
 *     O(1) amortised: the dense arrays double when full.
 *   - remove: the last entry moves into the removed one's place (a
 *     swap-delete, as in the pool's live list). O(1).
 * The sparse array is paged (1024 indices, 8 KiB, per page), pages added as
 * indices reach them, so memory follows the indices used, not the largest
 * index a stray handle names; the page directory costs 8 bytes per 1024
 * indices up to the highest index put. Per entry: the value rounded up to
 * value_align, plus 8 bytes (its handle). Values never move except when the
 * dense arrays grow or an entry is swapped into a removed one's place: do
 * not keep value pointers across put or remove.
 *
 * A table does not know its pool unless told (opool_side_follow): then it
 * never gives a value for a handle whose object was freed, at the cost of
 * one opool_valid (a load of the slot's generation) in each get and put.
 * Either way an entry lives until it is removed or its index is put again
 * with another generation (which happens as soon as the slot's next object
 * gets a value), so a stale handle never reaches a value put for another
 * life of its slot. To drop the entries of freed objects, remove them where
 * the objects are freed, or sweep with opool_side_prune (O(entries)).
 *
 * ITERATION. opool_side_handle_at(s, i) and opool_side_value_at(s, i), for i
 * in [0, count), walk the entries in their dense order; the rules of the
 * pool's backward loop (opool.h, ITERATION) hold: in
 *     for (uint32_t i = opool_side_count(s); i-- > 0;) { ... }
 *   - every entry present when the loop starts is visited exactly once;
 *   - removing the entry at i is allowed (the last entry, already visited,
 *     takes its place);
 *   - a put that adds an entry appends it behind i: it is not visited;
 *   - a put that re-keys an entry (another generation) leaves it where it
 *     is: visited, with its new handle, if it is below i;
 *   - removing another entry below i moves the last entry there, where the
 *     loop visits it (again, if it was already visited): remove only the
 *     current one, collect the others.
 *
 * ============================================================================
 * ERRORS
 * ============================================================================
 * Expected outcomes are return values (NULL, OPOOL_NULL, an opool_status);
 * bad input never changes the table. A handle with an even generation
 * (OPOOL_NULL among them) is never a live handle and never has an entry.
 * Nothing is reported and nothing aborts.
 *
 * Thread-safety: one thread at a time per table, like a pool. Calls that
 * only read (get, count, handle_at, value_at) may run in several threads at
 * once while no thread changes the table.
 *
 * ============================================================================
 * LICENSE: zlib (see LICENSE)
 * ============================================================================
 */
#ifndef OPOOL_SIDE_H
#define OPOOL_SIDE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opool.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A side table, an incomplete type used through opool_side *. */
typedef struct opool_side opool_side;

/* Largest value_align a table accepts (as the pool's object_align). */
#define OPOOL_SIDE_MAX_ALIGN 4096u

/* Create an empty table of values of value_size bytes aligned to
 * value_align, with room reserved for capacity entries whose handles have
 * indices below capacity (a table sized like its pool puts without
 * allocating). value_size 0 makes a set of handles: put and get then return
 * a non-NULL token that must not be dereferenced. capacity 0 reserves
 * nothing. OPOOL_EINVAL: out NULL, value_align not a power of two or above
 * OPOOL_SIDE_MAX_ALIGN, capacity above OPOOL_MAX_CAPACITY, or sizes that
 * overflow (value_size rounded up to value_align, times capacity).
 * OPOOL_ENOMEM: the C library's allocator failed. *out is NULL after any
 * failure. Values are zero-filled when their entry is made. Cost:
 * allocations for capacity entries (8 bytes plus the rounded value each) and
 * the pages of indices below capacity (8 bytes per index, zero-filled). Thread-safe: tables may be
 * created in any thread. */
OPOOL_API OPOOL_NODISCARD opool_status opool_side_create(opool_side **out, size_t value_size,
                                                         size_t value_align, uint32_t capacity);

/* Release the table and every value. NULL-safe. O(pages). Writes: no other
 * call on the table at the same time. */
OPOOL_API void opool_side_destroy(opool_side *s);

/* The storage of h's value: the existing value if the table has an entry
 * for exactly h; otherwise a new entry, zero-filled, which replaces an entry
 * of another generation at h's index (in place: same position, its value
 * zero-filled: a table cannot tell which of two generations is newer).
 * NULL, and the table unchanged: s NULL, h's generation even (OPOOL_NULL
 * included), h not live in the pool the table follows, OPOOL_MAX_CAPACITY
 * entries already, or an allocation failed while growing. O(1) amortised (growth doubles the dense
 * arrays; a page is 8 KiB). Moves no value unless the dense arrays grow.
 * Writes: no other call on the table at the same time. */
OPOOL_API void *opool_side_put(opool_side *s, opool_handle h);

/* h's value, or NULL unless the table has an entry for exactly h (s NULL,
 * index never put, removed, or put since with another generation) and, in
 * a table that follows a pool, h is live there. O(1).
 * Reads only: concurrent readers are fine while nobody writes. */
OPOOL_API void *opool_side_get(const opool_side *s, opool_handle h);

/* Remove h's entry (the last entry takes its place). OPOOL_EINVAL: s NULL or
 * h's generation even (never an entry); OPOOL_ESTALE: no entry for exactly
 * h (never put, removed already, or replaced by a put of another
 * generation). O(1); no memory is given back. Writes: no other call on the
 * table at the same time. */
OPOOL_API opool_status opool_side_remove(opool_side *s, opool_handle h);

/* Remove every entry; the memory stays for reuse. O(count). NULL-safe.
 * Writes: no other call on the table at the same time. */
OPOOL_API void opool_side_clear(opool_side *s);

/* From now on, p is the pool whose handles key s (NULL: none): get and put
 * give NULL for a handle that is not live in p, as for one never put. The
 * entries of freed objects stay (and iteration shows them) until removed,
 * re-keyed by a put for the slot's next object, or pruned. p must outlive
 * s or be unfollowed first. O(1). NULL-safe. Writes. */
OPOOL_API void opool_side_follow(opool_side *s, const opool *p);

/* Remove every entry whose handle is not live in p (NULL: the followed
 * pool; none: nothing is removed). Returns how many were removed. O(entries).
 * NULL-safe. Writes. */
OPOOL_API uint32_t opool_side_prune(opool_side *s, const opool *p);

/* ---- save and load (docs/FORMAT.md, "Side tables") --------------------
 * A table's image: its value layout, then every entry's handle and value
 * bytes, in dense order, and a checksum. Values are saved as bytes: keep
 * them trivially copyable (no pointers), as the pool's default objects. */

/* Write s's image through write (opool.h's opool_write_fn). OPOOL_EINVAL: s
 * or write NULL; OPOOL_EIO: write took fewer bytes than given. O(entries).
 * Reads s only. */
OPOOL_API opool_status opool_side_save(const opool_side *s, opool_write_fn write, void *ctx);

/* Read a table saved by opool_side_save into a new table *out whose values
 * are value_size bytes aligned to value_align, as opool_side_create makes
 * (entries in their saved order; no pool followed). OPOOL_EINVAL: out or
 * read NULL, value_size and value_align not what the image was saved with,
 * or not accepted by opool_side_create; OPOOL_ECORRUPT: not a table's
 * image, truncated, a checksum that fails, an even generation or one index
 * twice among the entries; OPOOL_ENOMEM. *out NULL and nothing held after a
 * failure, whose check the thread's opool_last_load_error() names (nothing
 * is reported: a table has no report). O(entries). Thread-safety: any
 * thread (the stream is the caller's). */
OPOOL_API OPOOL_NODISCARD opool_status opool_side_load(opool_side **out, size_t value_size,
                                                       size_t value_align, opool_read_fn read,
                                                       void *ctx);

/* ---- worlds: pools and side tables in one image ------------------------
 * opool_save_world writes a header, the pools' world image (as
 * opool_save_many) and each table's image; opool_load_world reads it back
 * all or nothing: on any failure every out[i] and sides[i] is NULL and
 * nothing is held. Each part checks itself as when loaded alone, and the
 * thread's opool_last_load_error() names the part: "load of pool 1 of 2
 * ...", "load of side table 0 of 1 ..." (its pool field: the table's
 * index), or "load of a world of 2 pools: ..." for the header. The _file
 * forms save atomically and load a file that holds exactly one such image,
 * as opool_save_many_file and opool_load_many_file do. */

/* The value layout of a side table a world load rebuilds. */
typedef struct opool_side_layout {
    size_t value_size, value_align; /* as given to opool_side_create */
} opool_side_layout;

/* OPOOL_EINVAL: what opool_save_many refuses of the pools, sides NULL with m
 * above 0, a NULL or repeated table, write NULL; OPOOL_EIO: a short write;
 * OPOOL_ECORRUPT/OPOOL_ENOMEM from a pool's save_object. O(everything). */
OPOOL_API opool_status opool_save_world(const opool *const *pools, uint32_t n,
                                        const opool_side *const *sides, uint32_t m,
                                        opool_write_fn write, void *ctx);
OPOOL_API opool_status opool_save_world_file(const opool *const *pools, uint32_t n,
                                             const opool_side *const *sides, uint32_t m,
                                             const char *path);

/* OPOOL_EINVAL: out NULL, sides or layouts NULL with m above 0, descs NULL,
 * n 0, read (or path) NULL, an image of another number of pools or tables,
 * a desc or layout that does not fit its part; OPOOL_ECORRUPT: damaged or
 * hostile bytes (the file form: a byte after the image too); OPOOL_ENOMEM;
 * the file form also OPOOL_ENOENT and OPOOL_EIO as opool_load_many_file. */
OPOOL_API OPOOL_NODISCARD opool_status opool_load_world(opool **out, const opool_desc *descs,
                                                        uint32_t n, opool_side **sides,
                                                        const opool_side_layout *layouts,
                                                        uint32_t m, opool_read_fn read, void *ctx);
OPOOL_API OPOOL_NODISCARD opool_status opool_load_world_file(opool **out, const opool_desc *descs,
                                                             uint32_t n, opool_side **sides,
                                                             const opool_side_layout *layouts,
                                                             uint32_t m, const char *path);

/* Entries; 0 for NULL. O(1). Reads only: concurrent readers are fine while
 * nobody writes. */
OPOOL_API uint32_t opool_side_count(const opool_side *s);

/* The handle and the value of the i-th entry, i in [0, count); OPOOL_NULL
 * and NULL otherwise (and for s NULL). Iterate backwards to remove while
 * iterating (ITERATION above). O(1). Reads only: concurrent readers are fine
 * while nobody writes. */
OPOOL_API opool_handle opool_side_handle_at(const opool_side *s, uint32_t i);
OPOOL_API void *opool_side_value_at(const opool_side *s, uint32_t i);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* OPOOL_SIDE_H */
