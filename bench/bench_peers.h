/*
 * bench_peers.h -- the C++ peers of opool_bench (bench/bench_peers.cpp), seen from C.
 *
 *   BENCH_PEER_BOOST_OBJECT_POOL  boost::object_pool<T>: construct(a, b) / destroy(p)
 *   BENCH_PEER_BOOST_POOL         boost::pool<>: malloc() / free(p), placement new
 *   BENCH_PEER_COLONY             plf::colony<T>: emplace(a, b) / erase(iterator)
 *   BENCH_PEER_OPL_POOL           opl::pool<T> (include/opool.hpp): emplace(a, b) /
 *                                 erase(handle<T>), get(handle<T>): opool's own C++ face
 *
 * A peer holds one container and its own handle array of n handles (T* for the
 * pools, a colony iterator for colony: none is validated, like malloc's
 * pointer). Each workload function runs one whole loop of bench_core.c's,
 * written out in C++ against the container's own API: the same random sequence
 * (bench_util.h), the same values written (a = slot k, b = tag), the same sums,
 * so its checksum must equal the C subjects'. The dispatch on the peer and the
 * object size (16, 64 or 256: T is a template instance) happens once per call,
 * outside the loop; inside it every operation is inlined.
 *
 * Which peers exist is fixed at configure time: bench/bench_peers.cmake
 * defines OPOOL_BENCH_HAVE_BOOST and OPOOL_BENCH_HAVE_COLONY when it finds the
 * headers, and OPOOL_BENCH_HAVE_OPL whenever a C++17 compiler exists (it
 * compiles bench_peers.cpp then).
 * Nothing here is thread-safe; failures other than the documented results are
 * C++ exceptions (std::bad_alloc) and end the program.
 */
#ifndef OPOOL_BENCH_PEERS_H
#define OPOOL_BENCH_PEERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum bench_peer_kind {
    BENCH_PEER_BOOST_OBJECT_POOL,
    BENCH_PEER_BOOST_POOL,
    BENCH_PEER_COLONY,
    BENCH_PEER_OPL_POOL,
    BENCH_PEER_KINDS
} bench_peer_kind;

typedef struct bench_peer bench_peer;

/* The library and version this program was built with, e.g. "Boost 1.74.0";
 * NULL if that peer was not built (its header was not found). */
const char *bench_peer_version(bench_peer_kind kind);

/* NULL if the peer runs workload ("churn", "lookup", "filldrain", "iter", "frame" as
 * in bench_core.c's --only), else the one-line reason it does not. */
const char *bench_peer_skip(bench_peer_kind kind, const char *workload);

/* A peer for n objects of object_size bytes (16, 64 or 256), its storage
 * sized for n up front the way the container's API allows (first block of n,
 * or reserve(n)). No object is live. NULL if the kind was not built or the
 * size is not one of the three. */
bench_peer *bench_peer_create(bench_peer_kind kind, size_t object_size, uint32_t n);
void bench_peer_destroy(bench_peer *p);

/* handles[k] = a new object with a = k, b = tag, for k = 0..n-1. Returns the
 * number of failed allocations (0). */
uint64_t bench_peer_fill(bench_peer *p, uint64_t tag);

/* Frees the objects of handles[perm[j]], j = 0..count-1. Returns 0. */
uint64_t bench_peer_drain(bench_peer *p, const uint32_t *perm, uint32_t count);

/* Untimed, before a fill: no object live, storage for n mapped and handed out
 * in address order again, as a fresh container would (like bench_core.c's
 * ideal_reset / opool_clear / malloc_fresh). */
void bench_peer_fresh(bench_peer *p);

/* bench_core.c's churn: iters times k = bench_below(&seed, n), free
 * handles[k], allocate, a = k, b = tag + iteration, handles[k] = new handle.
 * Returns the number of failed operations (0). */
uint64_t bench_peer_churn(bench_peer *p, uint64_t seed, uint64_t iters, uint64_t tag);

/* bench_core.c's lookup: the sum of a + b of the object of handles[random k]. */
uint64_t bench_peer_lookup(const bench_peer *p, uint64_t seed, uint64_t iters);

/* passes times the sum of a over every live object, in the container's own
 * iteration order. false (and *sum untouched) if the peer cannot iterate. */
bool bench_peer_iterate(const bench_peer *p, uint32_t passes, uint64_t *sum);

/* bench_core.c's frame: frames times, visit every live object in the
 * container's own order (b += 1, summing a + b), then changes times k =
 * bench_below(&seed, n), erase handles[k], insert a = k, b = tag + frame *
 * changes + j, handles[k] = the new handle. Returns the sum; adds failed
 * operations to *bad. Only for the peers bench_peer_skip lets run "frame". */
uint64_t bench_peer_frames(bench_peer *p, uint64_t seed, uint32_t frames, uint32_t changes,
                           uint64_t tag, uint64_t *bad);

/* *count = the live objects as the container counts them; false if it keeps
 * no count (the Boost pools). */
bool bench_peer_count(const bench_peer *p, uint32_t *count);

/* The object of handles[k] (untimed checks read a and b through it). */
const void *bench_peer_object(const bench_peer *p, uint32_t k);

#ifdef __cplusplus
}
#endif

#endif /* OPOOL_BENCH_PEERS_H */
