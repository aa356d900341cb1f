/*
 * opool_typed.h -- typed pools: one macro line, one pool type per object type
 * (C11 and C++11)
 *
 * ============================================================================
 * WHAT IT IS
 * ============================================================================
 * OPOOL_TYPED(name, T) declares, for a complete C type T:
 *
 *   name            a pool of T: a distinct (incomplete) struct type, used
 *                   through name * exactly like opool *
 *   name_handle     its handle: a one-field struct { opool_handle raw; }, so
 *                   a handle of one pool type can never be passed where
 *                   another's is expected (a compile error in C and C++)
 *   name_xxx(...)   the core API (opool.h) with T * instead of void * and
 *                   name_handle instead of opool_handle
 *
 * Every function is a static inline shim of a line or two over the untyped
 * core: no code is duplicated per type, the fast paths inline exactly as the
 * core's do, and a debugger steps from the shim into the ordinary core
 * function. Behaviour, failures and costs are the core's (see opool.h).
 *
 * ============================================================================
 * STEP BY STEP
 * ============================================================================
 *     #include "opool_typed.h"
 *
 *     struct enemy { float x, y; int hp; };
 *     OPOOL_TYPED(enemy_pool, struct enemy);       // file scope, T complete
 *
 *     enemy_pool *pool;
 *     if (enemy_pool_create_n(&pool, 256) != OPOOL_OK) ...;   // fixed, 256
 *
 *     enemy_pool_handle h;
 *     struct enemy *e = enemy_pool_alloc(pool, &h);  // NULL when full
 *     e = enemy_pool_get(pool, h);                   // NULL once h is stale
 *     enemy_pool_free(pool, h);                      // OPOOL_ESTALE the 2nd time
 *
 *     for (uint32_t i = enemy_pool_count(pool); i-- > 0;) {
 *         struct enemy *it = enemy_pool_live_object(pool, i);
 *         if (it->hp <= 0) enemy_pool_free(pool, enemy_pool_live_handle(pool, i));
 *     }
 *     enemy_pool_destroy(pool);
 *
 * The line needs its semicolon and may appear once per name in a
 * translation unit: put it in a header to share the type between files.
 * Give the pool a name of its own (enemy_pool, not enemy): C++ rejects a
 * pool type named like T's tag. Any other names work, T's and the pool's
 * alike (a type called obj, d or s included).
 *
 * ============================================================================
 * FIXED POOLS: FLAGS KNOWN WHEN THE CODE IS COMPILED
 * ============================================================================
 * OPOOL_TYPED_FIXED(name, T, FLAGS) declares the same type and functions as
 * OPOOL_TYPED(name, T), for pools that never grow and whose flags are FLAGS
 * (a constant expression of desc flags, 0 for none):
 *     OPOOL_TYPED_FIXED(conn_pool, struct conn, OPOOL_NO_LIVE_LIST);
 *     conn_pool *conns;
 *     if (conn_pool_create_n(&conns, 4096) != OPOOL_OK) ...;
 * Every pool of the type is created with FLAGS | OPOOL_FIXED added to its
 * desc's flags: OPOOL_FULL_GROW is then OPOOL_EINVAL (as is a desc with
 * OPOOL_NO_LIVE_LIST when FLAGS lacks it; a desc may add the other flags).
 * P_load and P_load_file accept only an image of a pool that does not grow.
 * What it buys: P_alloc, P_free, P_get and P_valid compile the one body of
 * the core's inline paths with what FLAGS fixes as a constant, so the tests
 * of a grown chunk and of the live list (or the free chain without one) are
 * not compiled (docs/BENCHMARKS.md). Every failure, cost and guarantee is
 * the core's. OPOOL_TYPED_HANDLE(name) may come first, then
 * OPOOL_TYPED_POOL_FIXED(name, T, FLAGS).
 * ============================================================================
 * HANDLES BEFORE THEIR TYPE, AND SIDE TABLES
 * ============================================================================
 * OPOOL_TYPED needs T complete, so T cannot hold a handle of its own pool.
 * Split the line in two: OPOOL_TYPED_HANDLE(name) declares name_handle and
 * its helpers alone (like sokol's sg_buffer or slotmap's new_key_type!), and
 * OPOOL_TYPED_POOL(name, T), once T is complete, the pool that uses it:
 *
 *     OPOOL_TYPED_HANDLE(ship_pool);               // ship_pool_handle
 *     OPOOL_TYPED_HANDLE(dock_pool);
 *     struct ship { ship_pool_handle target; dock_pool_handle home; };
 *     struct dock { ship_pool_handle docked; };
 *     OPOOL_TYPED_POOL(ship_pool, struct ship);    // ship_pool, ship_pool_alloc, ...
 *     OPOOL_TYPED_POOL(dock_pool, struct dock);
 *
 * OPOOL_TYPED(name, T) is exactly OPOOL_TYPED_HANDLE(name) followed by
 * OPOOL_TYPED_POOL(name, T). C cannot define a struct twice nor ask whether
 * it was, so after OPOOL_TYPED_HANDLE(name) write OPOOL_TYPED_POOL, not
 * OPOOL_TYPED: the compiler's first complaint then names the typedef
 * name__after_OPOOL_TYPED_HANDLE_write_OPOOL_TYPED_POOL.
 *
 * OPOOL_TYPED_SIDE(S, P, V) declares S, a side table (opool_side.h) of
 * values V keyed by P_handle, where P is a typed pool's name (its handle
 * declared before, by either macro): S_put(s, h) takes only a P_handle and
 * returns V *, so a table of ship data cannot be keyed by a bullet's handle.
 *
 * ============================================================================
 * THE FUNCTIONS (for OPOOL_TYPED(P, T); H is P_handle, P_type is T)
 * ============================================================================
 * Lifetime. desc is copied and completed: object_size 0 becomes sizeof(T),
 * object_align 0 becomes alignof(T) (not the core's alignof(max_align_t): a
 * typed pool packs T as tightly as an array of T). A size below sizeof(T) or
 * an alignment below alignof(T) is OPOOL_EINVAL, like a NULL desc; a larger
 * size is allowed (room after each T). A NULL desc is OPOOL_EINVAL, as in
 * the core: the capacity-only shortcut is P_create_n. OPOOL_EINVAL also for
 * out NULL, and (P_create_flags) for an unknown flag. *out is NULL after any
 * failure; P_required_bytes gives 0 for a desc it rejects. Each function is
 * its core call (P_create_in is opool_create_in, ...), with its failures,
 * cost and thread-safety. P_create, P_create_n, P_create_flags, P_create_in,
 * P_load and P_load_file are OPOOL_NODISCARD.
 *     opool_status P_create(P **out, const opool_desc *desc);
 *     opool_status P_create_n(P **out, uint32_t capacity);  // fixed, defaults
 *     opool_status P_create_flags(P **out, uint32_t capacity, uint32_t flags);
 *                                                    // the same with desc.flags
 *     size_t       P_required_bytes(const opool_desc *desc);
 *     opool_status P_create_in(P **out, void *buf, size_t size, const opool_desc *desc);
 *     void         P_destroy(P *p);
 * Objects.
 *     T           *P_alloc(P *p, H *out);           // out may be NULL
 *     T           *P_alloc_at(P *p, H h);
 *     opool_status P_free(P *p, H h);
 *     opool_status P_free_object(P *p, T *obj);
 *     T           *P_get(const P *p, H h);
 *     bool         P_valid(const P *p, H h);
 *     H            P_handle_of(const P *p, const T *obj);
 *     T           *P_at(const P *p, uint32_t index);
 *     void         P_clear(P *p);
 * Iteration and introspection.
 *     uint32_t     P_count(const P *p);
 *     uint32_t     P_capacity(const P *p);
 *     H            P_live_handle(const P *p, uint32_t i);
 *     T           *P_live_object(const P *p, uint32_t i);
 *     uint32_t     P_high_water(const P *p);
 *     H            P_handle_at(const P *p, uint32_t index);
 *     uint32_t     P_retain(P *p, P_keep_fn keep, void *user);
 *                  // P_keep_fn: bool (*)(T *obj, H h, void *user)
 *     OPOOL_TYPED_FOREACH(P, p, obj, h) { ... }   // T *obj, H h: see OPOOL_FOREACH
 *     void         P_sort(P *p);
 *     uint32_t     P_shrink(P *p);
 *     void         P_get_stats(const P *p, opool_stats *out);
 *     void         P_stats(const P *p, opool_stats *out);  // old name of P_get_stats
 *     opool_status P_draw_svg(const P *p, opool_write_fn write, void *ctx);
 *     opool       *P_raw(P *p);                      // the untyped pool, for any core call
 * Save and load (desc completed as for P_create, so the same desc that
 * created a pool loads it):
 *     opool_status P_save(const P *p, opool_write_fn write, void *ctx);
 *     opool_status P_load(P **out, const opool_desc *desc, opool_read_fn read, void *ctx);
 *     opool_status P_save_file(const P *p, const char *path);
 *     opool_status P_load_file(P **out, const opool_desc *desc, const char *path);
 * Handles (no pool needed, no failure, O(1), any thread; P_handle_of gives
 * the null H where opool_handle_of gives OPOOL_NULL; P_handle_from makes no
 * check: a wrong handle is rejected later, at run time):
 *     H            P_handle_null(void);
 *     bool         P_handle_is_null(H h);
 *     bool         P_handle_eq(H a, H b);
 *     uint32_t     P_handle_index(H h);
 *     uint32_t     P_handle_generation(H h);
 *     opool_handle P_handle_raw(H h);               // h.raw: the untyped handle
 *     H            P_handle_from(opool_handle raw); // the explicit way back
 *
 * THE SIDE TABLE FUNCTIONS (for OPOOL_TYPED_SIDE(S, P, V); H is P_handle,
 * S_type is V; behaviour, failures, costs and thread-safety are
 * opool_side.h's; V's size and alignment are the values': S_create is
 * opool_side_create(out, sizeof(V), alignof(V), capacity), OPOOL_NODISCARD):
 *     opool_status S_create(S **out, uint32_t capacity);
 *     void         S_destroy(S *s);
 *     V           *S_put(S *s, H h);
 *     V           *S_get(const S *s, H h);
 *     opool_status S_remove(S *s, H h);
 *     void         S_clear(S *s);
 *     uint32_t     S_count(const S *s);
 *     H            S_handle_at(const S *s, uint32_t i);
 *     V           *S_value_at(const S *s, uint32_t i);
 *     void         S_follow(S *s, const P *p);       // get/put: NULL for handles dead in p
 *     uint32_t     S_prune(S *s, const P *p);        // remove the entries dead in p
 *     opool_status S_save(const S *s, opool_write_fn write, void *ctx);
 *     opool_status S_load(S **out, opool_read_fn read, void *ctx);
 *     opool_side  *S_raw(S *s);                      // the untyped table
 *
 * ============================================================================
 * WHAT THE TYPES CATCH
 * ============================================================================
 * - A handle of another pool type (or a bare opool_handle) passed to a P_
 *   function, assigned to an H, or compared with P_handle_eq: a compile
 *   error in C and C++, with no special flag (tests/typed/mix_handles.c).
 * - A pool of another type passed to a P_ function: an error in C++; in C an
 *   incompatible-pointer-types diagnostic (an error with GCC 14 and later,
 *   a warning before: -Werror=incompatible-pointer-types makes it one).
 * - P_get and friends return T *: assigning the result to another object
 *   pointer type is the same error in C++ and the same diagnostic in C.
 * What they cannot catch: a handle of the same pool type used with another
 * pool of that type. The core's per-pool salt rejects that at run time with
 * high probability (OPOOL_ESTALE).
 *
 * Thread-safety: the core's (one thread at a time per pool).
 *
 * ============================================================================
 * LICENSE: zlib (see LICENSE)
 * ============================================================================
 */
#ifndef OPOOL_TYPED_H
#define OPOOL_TYPED_H

#include "opool.h"
#include "opool_side.h"

/* Shims are `static inline` and marked unused: clang's -Wunused-function
 * names unused static inline functions expanded in a .c file. */
#if defined(__GNUC__) || defined(__clang__)
#define OPOOL__TYPED_FN static inline __attribute__((unused))
#else
#define OPOOL__TYPED_FN static inline
#endif
/* The shims of the inline fast paths (alloc, free, get, valid): inlined into
 * the caller as the untyped calls are (OPOOL__HOT), since a shim left as a
 * call would cost more than the path it wraps. */
#if (defined(__GNUC__) || defined(__clang__)) && !defined(__FRAMAC__)
#define OPOOL__TYPED_HOT static inline __attribute__((unused, always_inline))
#else
#define OPOOL__TYPED_HOT OPOOL__TYPED_FN
#endif

/* clang-format off */
#ifdef __cplusplus
#define OPOOL__ALIGNOF(T) alignof(T)
#define OPOOL__DESC_ZERO {}
#else
#define OPOOL__ALIGNOF(T) _Alignof(T)
#define OPOOL__DESC_ZERO {0}
#endif
/* clang-format on */

/* Pool type `name` and side table type `side` by their struct tags, which
 * no parameter or local of the functions below can shadow (a user's type
 * may be called d, raw or s). */
#define OPOOL__POOL(name) struct name##__opool
#define OPOOL__SIDE(side) struct side##__opool_side

/* The untyped pool behind a typed one (the typed pool type is never defined:
 * its pointers are opool pointers under another name). */
#define OPOOL__RAW(p) OPOOL__CAST(opool *, OPOOL__CAST(void *, p))
#define OPOOL__CRAW(p) OPOOL__CAST(const opool *, OPOOL__CAST(const void *, p))

/* Complete a typed pool's desc: object_size and object_align from the type
 * when 0; false for a NULL desc or one too small for the type. fixed: 0, or
 * the flags of OPOOL_TYPED_FIXED with OPOOL_FIXED, which the pool gets
 * (more may be asked, but a live list it does not keep: OPOOL_NO_LIVE_LIST
 * there and not in fixed is refused, as its compiled paths keep one). */
OPOOL__TYPED_FN bool opool__typed_desc(opool_desc *out, const opool_desc *in, size_t size,
                                       size_t align, uint32_t fixed) {
    if (in == NULL) return false;
    *out = *in;
    if (out->object_size == 0) out->object_size = size;
    if (out->object_align == 0) out->object_align = align;
    if (fixed != 0 && (in->flags & ~fixed & OPOOL_NO_LIVE_LIST)) return false;
    out->flags |= fixed;
    return out->object_size >= size && out->object_align >= align;
}

/* The whole API for pool type `name` of objects of type T: its handle type
 * (as OPOOL_TYPED_HANDLE), then its pool (as OPOOL_TYPED_POOL). The typedef
 * in front is a tripwire: OPOOL_TYPED_HANDLE declares the same name as int,
 * so OPOOL_TYPED after it (which would define the handle a second time)
 * fails first on a name that says what to write instead. The functions it
 * makes, name_xxx, are listed in the manual above as P_xxx (THE FUNCTIONS),
 * with their failures, costs and thread-safety (the core's). */
#define OPOOL_TYPED(name, T)                                                                       \
    typedef char name##__after_OPOOL_TYPED_HANDLE_write_OPOOL_TYPED_POOL;                          \
    OPOOL__TYPED_HANDLE_TYPE(name)                                                                 \
    OPOOL__TYPED_HANDLES(name)                                                                     \
    OPOOL_TYPED_POOL(name, T)

/* The handle type name_handle and its helpers alone, T not needed: for
 * types that hold handles of their own pool, or of each other's. The helpers
 * are the manual's P_handle_xxx (no pool, no failure, O(1), any thread). */
#define OPOOL_TYPED_HANDLE(name)                                                                   \
    typedef int name##__after_OPOOL_TYPED_HANDLE_write_OPOOL_TYPED_POOL;                           \
    OPOOL__TYPED_HANDLE_TYPE(name)                                                                 \
    OPOOL__TYPED_HANDLES(name)                                                                     \
    struct name##_handle /* the caller's semicolon ends this (redundant) declaration */

/* The pool type and its functions, for a handle type OPOOL_TYPED_HANDLE
 * declared. */
#define OPOOL_TYPED_POOL(name, T) OPOOL__TYPED_POOL_OF(name, T, 0, 0)

/* A typed pool whose flags are fixed at compile time: OPOOL_TYPED(name, T)'s
 * functions, every pool made with FLAGS | OPOOL_FIXED (FLAGS a constant
 * expression of desc flags), so that the inline alloc, free and get compile
 * only what FLAGS leaves possible (FIXED POOLS in the manual above). */
#define OPOOL_TYPED_FIXED(name, T, FLAGS)                                                          \
    typedef char name##__after_OPOOL_TYPED_HANDLE_write_OPOOL_TYPED_POOL;                          \
    OPOOL__TYPED_HANDLE_TYPE(name)                                                                 \
    OPOOL__TYPED_HANDLES(name)                                                                     \
    OPOOL_TYPED_POOL_FIXED(name, T, FLAGS)

/* OPOOL_TYPED_POOL for OPOOL_TYPED_FIXED, after OPOOL_TYPED_HANDLE(name). */
#define OPOOL_TYPED_POOL_FIXED(name, T, FLAGS)                                                     \
    OPOOL__TYPED_POOL_OF(name, T, OPOOL__CAST(uint32_t, FLAGS) | OPOOL_FIXED,                      \
                         OPOOL__KNOWN_OF(FLAGS))

/* The pool type and its functions: FIX the flags every pool gets (0: those
 * of its desc), KNOWN what the inline paths know of it (opool_abi.h). The
 * functions name T as name_type, which none of their parameters or locals
 * can shadow, whatever the user's type is called. */
#define OPOOL__TYPED_POOL_OF(name, T, FIX, KNOWN)                                                  \
    typedef OPOOL__POOL(name) name; /* never defined: name * is an opool * renamed */              \
    typedef T name##_type; /* the object type, for OPOOL_TYPED_FOREACH and debuggers (alloc's) */  \
    OPOOL__TYPED_LIFETIME(name, name##_type, FIX)                                                  \
    OPOOL__TYPED_OBJECTS(name, name##_type, KNOWN)                                                 \
    OPOOL__TYPED_ITERATION(name, name##_type)                                                      \
    OPOOL__TYPED_SAVE(name, name##_type, FIX)                                                      \
    struct name##_handle /* the caller's semicolon ends this (redundant) declaration */

#define OPOOL__TYPED_HANDLE_TYPE(name)                                                             \
    typedef struct name##_handle {                                                                 \
        opool_handle raw;                                                                          \
    } name##_handle;

#define OPOOL__TYPED_HANDLES(name)                                                                 \
    OPOOL__TYPED_FN name##_handle name##_handle_from(opool_handle raw) {                           \
        name##_handle h;                                                                           \
        h.raw = raw;                                                                               \
        return h;                                                                                  \
    }                                                                                              \
    OPOOL__TYPED_FN name##_handle name##_handle_null(void) {                                       \
        return name##_handle_from(OPOOL_NULL);                                                     \
    }                                                                                              \
    OPOOL__TYPED_FN opool_handle name##_handle_raw(name##_handle h) { return h.raw; }              \
    OPOOL__TYPED_FN bool name##_handle_is_null(name##_handle h) {                                  \
        return opool_handle_is_null(h.raw);                                                        \
    }                                                                                              \
    OPOOL__TYPED_FN bool name##_handle_eq(name##_handle a, name##_handle b) {                      \
        return opool_handle_eq(a.raw, b.raw);                                                      \
    }                                                                                              \
    OPOOL__TYPED_FN uint32_t name##_handle_index(name##_handle h) {                                \
        return opool_handle_index(h.raw);                                                          \
    }                                                                                              \
    OPOOL__TYPED_FN uint32_t name##_handle_generation(name##_handle h) {                           \
        return opool_handle_generation(h.raw);                                                     \
    }

#define OPOOL__TYPED_LIFETIME(name, T, FIX)                                                        \
    OPOOL__TYPED_FN OPOOL_NODISCARD opool_status name##_create(name **out,                         \
                                                               const opool_desc *desc) {           \
        opool_desc d;                                                                              \
        opool *raw = NULL;                                                                         \
        if (out == NULL) return OPOOL_EINVAL;                                                      \
        *out = NULL;                                                                               \
        if (!opool__typed_desc(&d, desc, sizeof(T), OPOOL__ALIGNOF(T), FIX)) return OPOOL_EINVAL;  \
        opool_status s = opool_create(&raw, &d);                                                   \
        *out = OPOOL__CAST(OPOOL__POOL(name) *, OPOOL__CAST(void *, raw)); /* NULL on failure */   \
        return s;                                                                                  \
    }                                                                                              \
    OPOOL__TYPED_FN OPOOL_NODISCARD opool_status name##_create_flags(                              \
        name **out, uint32_t capacity, uint32_t flags) {                                           \
        opool_desc d = OPOOL__DESC_ZERO;                                                           \
        d.capacity = capacity;                                                                     \
        d.flags = flags;                                                                           \
        return name##_create(out, &d);                                                             \
    }                                                                                              \
    OPOOL__TYPED_FN OPOOL_NODISCARD opool_status name##_create_n(name **out, uint32_t capacity) {  \
        return name##_create_flags(out, capacity, 0);                                              \
    }                                                                                              \
    OPOOL__TYPED_FN size_t name##_required_bytes(const opool_desc *desc) {                         \
        opool_desc d;                                                                              \
        if (!opool__typed_desc(&d, desc, sizeof(T), OPOOL__ALIGNOF(T), FIX)) return 0;             \
        return opool_required_bytes(&d);                                                           \
    }                                                                                              \
    OPOOL__TYPED_FN OPOOL_NODISCARD opool_status name##_create_in(                                 \
        name **out, void *buf, size_t size, const opool_desc *desc) {                              \
        opool_desc d;                                                                              \
        opool *raw = NULL;                                                                         \
        if (out == NULL) return OPOOL_EINVAL;                                                      \
        *out = NULL;                                                                               \
        if (!opool__typed_desc(&d, desc, sizeof(T), OPOOL__ALIGNOF(T), FIX)) return OPOOL_EINVAL;  \
        opool_status s = opool_create_in(&raw, buf, size, &d);                                     \
        *out = OPOOL__CAST(OPOOL__POOL(name) *, OPOOL__CAST(void *, raw)); /* NULL on failure */   \
        return s;                                                                                  \
    }                                                                                              \
    OPOOL__TYPED_FN void name##_destroy(name *p) { opool_destroy(OPOOL__RAW(p)); }                 \
    OPOOL__TYPED_FN opool *name##_raw(name *p) { return OPOOL__RAW(p); }

#define OPOOL__TYPED_OBJECTS(name, T, KNOWN)                                                       \
    OPOOL__TYPED_HOT name##_type *name##_alloc(name *p, name##_handle *out) {                      \
        return OPOOL__CAST(                                                                        \
            T *, opool__alloc_as(OPOOL__RAW(p), out ? &out->raw : NULL, OPOOL__SITE, KNOWN));      \
    }                                                                                              \
    OPOOL__TYPED_FN T *name##_alloc_at(name *p, name##_handle h) {                                 \
        return OPOOL__CAST(T *, opool_alloc_at(OPOOL__RAW(p), h.raw));                             \
    }                                                                                              \
    OPOOL__TYPED_HOT opool_status name##_free(name *p, name##_handle h) {                          \
        return opool__free_as(OPOOL__RAW(p), h.raw, KNOWN);                                        \
    }                                                                                              \
    OPOOL__TYPED_FN opool_status name##_free_object(name *p, T *obj) {                             \
        return opool_free_object(OPOOL__RAW(p), obj);                                              \
    }                                                                                              \
    OPOOL__TYPED_HOT T *name##_get(const name *p, name##_handle h) {                               \
        return OPOOL__CAST(T *, opool__get_as(OPOOL__CRAW(p), h.raw, KNOWN));                      \
    }                                                                                              \
    OPOOL__TYPED_HOT bool name##_valid(const name *p, name##_handle h) {                           \
        return opool__get_as(OPOOL__CRAW(p), h.raw, KNOWN) != NULL;                                \
    }                                                                                              \
    OPOOL__TYPED_FN name##_handle name##_handle_of(const name *p, const T *obj) {                  \
        return name##_handle_from(opool_handle_of(OPOOL__CRAW(p), obj));                           \
    }                                                                                              \
    OPOOL__TYPED_FN T *name##_at(const name *p, uint32_t index) {                                  \
        return OPOOL__CAST(T *, opool_at(OPOOL__CRAW(p), index));                                  \
    }                                                                                              \
    OPOOL__TYPED_FN void name##_clear(name *p) { opool_clear(OPOOL__RAW(p)); }

#define OPOOL__TYPED_ITERATION(name, T)                                                            \
    OPOOL__TYPED_FN uint32_t name##_count(const name *p) { return opool_count(OPOOL__CRAW(p)); }   \
    OPOOL__TYPED_FN uint32_t name##_capacity(const name *p) {                                      \
        return opool_capacity(OPOOL__CRAW(p));                                                     \
    }                                                                                              \
    OPOOL__TYPED_FN name##_handle name##_live_handle(const name *p, uint32_t i) {                  \
        return name##_handle_from(opool_live_handle(OPOOL__CRAW(p), i));                           \
    }                                                                                              \
    OPOOL__TYPED_FN T *name##_live_object(const name *p, uint32_t i) {                             \
        return OPOOL__CAST(T *, opool_live_object(OPOOL__CRAW(p), i));                             \
    }                                                                                              \
    OPOOL__TYPED_FN uint32_t name##_high_water(const name *p) {                                    \
        return opool_high_water(OPOOL__CRAW(p));                                                   \
    }                                                                                              \
    OPOOL__TYPED_FN name##_handle name##_handle_at(const name *p, uint32_t index) {                \
        return name##_handle_from(opool_handle_at(OPOOL__CRAW(p), index));                         \
    }                                                                                              \
    typedef bool (*name##_keep_fn)(T * obj, name##_handle h, void *user);                          \
    typedef struct name##__keep {                                                                  \
        name##_keep_fn keep;                                                                       \
        void *user;                                                                                \
    } name##__keep;                                                                                \
    OPOOL__TYPED_FN bool name##__keep_shim(void *obj, opool_handle h, void *user) {                \
        const name##__keep *k = OPOOL__CAST(const name##__keep *, user);                           \
        return k->keep(OPOOL__CAST(T *, obj), name##_handle_from(h), k->user);                     \
    }                                                                                              \
    OPOOL__TYPED_FN uint32_t name##_retain(name *p, name##_keep_fn keep, void *user) {             \
        name##__keep k;                                                                            \
        if (keep == NULL) return 0;                                                                \
        k.keep = keep;                                                                             \
        k.user = user;                                                                             \
        return opool_retain(OPOOL__RAW(p), name##__keep_shim, &k);                                 \
    }                                                                                              \
    OPOOL__TYPED_FN void name##_sort(name *p) { opool_sort(OPOOL__RAW(p)); }                       \
    OPOOL__TYPED_FN uint32_t name##_shrink(name *p) { return opool_shrink(OPOOL__RAW(p)); }        \
    OPOOL__TYPED_FN void name##_get_stats(const name *p, opool_stats *out) {                       \
        opool_get_stats(OPOOL__CRAW(p), out);                                                      \
    }                                                                                              \
    /* the old name of P_get_stats, kept for the code that uses it */                              \
    OPOOL__TYPED_FN void name##_stats(const name *p, opool_stats *out) {                           \
        opool_get_stats(OPOOL__CRAW(p), out);                                                      \
    }                                                                                              \
    OPOOL__TYPED_FN opool_status name##_draw_svg(const name *p, opool_write_fn write, void *ctx) { \
        return opool_draw_svg(OPOOL__CRAW(p), write, ctx);                                         \
    }

#define OPOOL__TYPED_SAVE(name, T, FIX)                                                            \
    OPOOL__TYPED_FN opool_status name##_save(const name *p, opool_write_fn write, void *ctx) {     \
        return opool_save(OPOOL__CRAW(p), write, ctx);                                             \
    }                                                                                              \
    OPOOL__TYPED_FN OPOOL_NODISCARD opool_status name##_load(name **out, const opool_desc *desc,   \
                                                             opool_read_fn read, void *ctx) {      \
        opool_desc d;                                                                              \
        opool *raw = NULL;                                                                         \
        if (out == NULL) return OPOOL_EINVAL;                                                      \
        *out = NULL;                                                                               \
        if (!opool__typed_desc(&d, desc, sizeof(T), OPOOL__ALIGNOF(T), FIX)) return OPOOL_EINVAL;  \
        opool_status s = opool_load(&raw, &d, read, ctx);                                          \
        *out = OPOOL__CAST(OPOOL__POOL(name) *, OPOOL__CAST(void *, raw)); /* NULL on failure */   \
        return s;                                                                                  \
    }                                                                                              \
    OPOOL__TYPED_FN opool_status name##_save_file(const name *p, const char *path) {               \
        return opool_save_file(OPOOL__CRAW(p), path);                                              \
    }                                                                                              \
    OPOOL__TYPED_FN OPOOL_NODISCARD opool_status name##_load_file(                                 \
        name **out, const opool_desc *desc, const char *path) {                                    \
        opool_desc d;                                                                              \
        opool *raw = NULL;                                                                         \
        if (out == NULL) return OPOOL_EINVAL;                                                      \
        *out = NULL;                                                                               \
        if (!opool__typed_desc(&d, desc, sizeof(T), OPOOL__ALIGNOF(T), FIX)) return OPOOL_EINVAL;  \
        opool_status s = opool_load_file(&raw, &d, path);                                          \
        *out = OPOOL__CAST(OPOOL__POOL(name) *, OPOOL__CAST(void *, raw)); /* NULL on failure */   \
        return s;                                                                                  \
    }

/* OPOOL_FOREACH for typed pool P (the name given to OPOOL_TYPED): declares
 * P_type *obj and P_handle h for the body, once per live object, backwards;
 * freeing obj (P_free(p, h)) inside is allowed, break and continue work.
 * Under OPOOL_NO_LIVE_LIST it reports OPOOL_EINVAL and runs no body. */
#define OPOOL_TYPED_FOREACH(P, p, obj, h)                                                          \
    for (uint32_t obj##_opool_i_ = opool__live_count(OPOOL__CRAW(p)), obj##_opool_go_ = 1,         \
                  obj##_opool_once_ = 0;                                                           \
         obj##_opool_go_ && obj##_opool_i_-- > 0;)                                                 \
        for (P##_handle h = (obj##_opool_once_ = opool__live_in(OPOOL__CRAW(p), obj##_opool_i_),   \
                            P##_live_handle(p, obj##_opool_i_));                                   \
             obj##_opool_once_ && ((void)h, 1); obj##_opool_once_ = 0)                             \
            for (P##_type *obj = (obj##_opool_go_ = 0, P##_live_object(p, obj##_opool_i_));        \
                 !obj##_opool_go_ && ((void)obj, 1); obj##_opool_go_ = 1)

/* A side table of values V keyed by the handles of typed pool `pool`. Its
 * functions, side_xxx, are listed in the manual above as S_xxx (THE SIDE
 * TABLE FUNCTIONS); failures, costs and thread-safety are opool_side.h's. */
#define OPOOL_TYPED_SIDE(side, pool, V)                                                            \
    typedef OPOOL__SIDE(side) side; /* never defined: side * is an opool_side * */                 \
    typedef V side##_type;          /* the value type */                                           \
    OPOOL__TYPED_SIDE_OF(side, pool, side##_type)

/* The side table's functions, V a name that no parameter or local shadows. */
#define OPOOL__TYPED_SIDE_OF(side, pool, V)                                                        \
    OPOOL__TYPED_FN OPOOL_NODISCARD opool_status side##_create(side **out, uint32_t capacity) {    \
        opool_side *raw = NULL;                                                                    \
        if (out == NULL) return OPOOL_EINVAL;                                                      \
        opool_status s = opool_side_create(&raw, sizeof(V), OPOOL__ALIGNOF(V), capacity);          \
        *out = OPOOL__CAST(OPOOL__SIDE(side) *, OPOOL__CAST(void *, raw)); /* NULL on failure */   \
        return s;                                                                                  \
    }                                                                                              \
    OPOOL__TYPED_FN void side##_destroy(side *s) { opool_side_destroy(OPOOL__SRAW(s)); }           \
    OPOOL__TYPED_FN opool_side *side##_raw(side *s) { return OPOOL__SRAW(s); }                     \
    OPOOL__TYPED_FN V *side##_put(side *s, pool##_handle h) {                                      \
        return OPOOL__CAST(V *, opool_side_put(OPOOL__SRAW(s), h.raw));                            \
    }                                                                                              \
    OPOOL__TYPED_FN V *side##_get(const side *s, pool##_handle h) {                                \
        return OPOOL__CAST(V *, opool_side_get(OPOOL__CSRAW(s), h.raw));                           \
    }                                                                                              \
    OPOOL__TYPED_FN opool_status side##_remove(side *s, pool##_handle h) {                         \
        return opool_side_remove(OPOOL__SRAW(s), h.raw);                                           \
    }                                                                                              \
    OPOOL__TYPED_FN void side##_clear(side *s) { opool_side_clear(OPOOL__SRAW(s)); }               \
    OPOOL__TYPED_FN uint32_t side##_count(const side *s) {                                         \
        return opool_side_count(OPOOL__CSRAW(s));                                                  \
    }                                                                                              \
    OPOOL__TYPED_FN pool##_handle side##_handle_at(const side *s, uint32_t i) {                    \
        return pool##_handle_from(opool_side_handle_at(OPOOL__CSRAW(s), i));                       \
    }                                                                                              \
    OPOOL__TYPED_FN V *side##_value_at(const side *s, uint32_t i) {                                \
        return OPOOL__CAST(V *, opool_side_value_at(OPOOL__CSRAW(s), i));                          \
    }                                                                                              \
    OPOOL__TYPED_FN void side##_follow(side *s, const OPOOL__POOL(pool) * p) {                     \
        opool_side_follow(OPOOL__SRAW(s), OPOOL__CRAW(p));                                         \
    }                                                                                              \
    OPOOL__TYPED_FN uint32_t side##_prune(side *s, const OPOOL__POOL(pool) * p) {                  \
        return opool_side_prune(OPOOL__SRAW(s), OPOOL__CRAW(p));                                   \
    }                                                                                              \
    OPOOL__TYPED_FN opool_status side##_save(const side *s, opool_write_fn write, void *ctx) {     \
        return opool_side_save(OPOOL__CSRAW(s), write, ctx);                                       \
    }                                                                                              \
    OPOOL__TYPED_FN OPOOL_NODISCARD opool_status side##_load(side **out, opool_read_fn read,       \
                                                             void *ctx) {                          \
        opool_side *raw = NULL;                                                                    \
        if (out == NULL) return OPOOL_EINVAL;                                                      \
        opool_status s = opool_side_load(&raw, sizeof(V), OPOOL__ALIGNOF(V), read, ctx);           \
        *out = OPOOL__CAST(OPOOL__SIDE(side) *, OPOOL__CAST(void *, raw)); /* NULL on failure */   \
        return s;                                                                                  \
    }                                                                                              \
    struct side##__opool_side /* the caller's semicolon ends this (redundant) declaration */

#define OPOOL__SRAW(s) OPOOL__CAST(opool_side *, OPOOL__CAST(void *, s))
#define OPOOL__CSRAW(s) OPOOL__CAST(const opool_side *, OPOOL__CAST(const void *, s))

#endif /* OPOOL_TYPED_H */
