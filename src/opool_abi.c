/*
 * opool_abi.c -- the exported definitions of the functions whose common case
 * is inline (include/opool_abi.h explains the technique; opool_abi_heap.h
 * and opool_abi_mt.h hold the heap's and the concurrent pool's).
 *
 * A C or C++ caller that writes opool_alloc(p, &h) compiles the inline body
 * and never comes here; this is what a function pointer, dlsym or a foreign
 * function interface reaches. Each definition puts the public name in
 * parentheses, so the forwarding macro of the same name is not expanded, and
 * is the inline body itself: both behave identically by construction.
 */
#include "opool_internal.h"
#include "opool_heap.h"
#include "opool_mt_internal.h"

/* ==== handles ============================================================ */

uint32_t(opool_handle_index)(opool_handle h) { return opool__handle_index_inline(h); }
uint32_t(opool_handle_generation)(opool_handle h) { return opool__handle_generation_inline(h); }
bool(opool_handle_is_null)(opool_handle h) { return opool__handle_is_null_inline(h); }
bool(opool_handle_eq)(opool_handle a, opool_handle b) { return opool__handle_eq_inline(a, b); }

/* ==== the core pool ====================================================== */

void *(opool_alloc)(opool *p, opool_handle *out) { return opool__alloc_inline(p, out, NULL); }
opool_status(opool_free)(opool *p, opool_handle h) { return opool__free_inline(p, h); }
void *(opool_get)(const opool *p, opool_handle h) { return opool__get_inline(p, h); }
bool(opool_valid)(const opool *p, opool_handle h) { return opool__valid_inline(p, h); }
void *(opool_at)(const opool *p, uint32_t index) { return opool__at_inline(p, index); }
uint32_t(opool_count)(const opool *p) { return opool__count_inline(p); }
opool_handle(opool_live_handle)(const opool *p, uint32_t i) {
    return opool__live_handle_inline(p, i);
}
void *(opool_live_object)(const opool *p, uint32_t i) { return opool__live_object_inline(p, i); }
uint32_t(opool_high_water)(const opool *p) { return opool__high_water_inline(p); }
opool_handle(opool_handle_at)(const opool *p, uint32_t index) {
    return opool__handle_at_inline(p, index);
}
opool_handle32(opool_handle_compact)(const opool *p, opool_handle h) {
    return opool__handle_compact_inline(p, h);
}
opool_handle(opool_handle_expand)(const opool *p, opool_handle32 c) {
    return opool__handle_expand_inline(p, c);
}

/* ==== the heap =========================================================== */

void *(opool_heap_alloc)(opool_heap *h, size_t size) { return opool__heap_alloc_inline(h, size); }
opool_status(opool_heap_free)(opool_heap *h, void *ptr) { return opool__heap_free_inline(h, ptr); }
void *(opool_heap_realloc)(opool_heap *h, void *ptr, size_t size) {
    return opool__heap_realloc_inline(h, ptr, size);
}

/* ==== the concurrent pool's caches ======================================= */
/* The hits' bodies are opool_abi_mt.h's, on the library's atomics and barrier
 * (opool_mt_internal.h): in the library's test builds too, where the
 * callers' inline hits are off, so the tests run the body callers inline. */

void *(opool_mt_cache_alloc)(opool_mt_cache *c, opool_handle *out) {
    return opool__mt_cache_alloc_inline(c, out);
}

opool_status(opool_mt_cache_free)(opool_mt_cache *c, opool_handle h) {
    return opool__mt_cache_free_inline(c, h);
}
