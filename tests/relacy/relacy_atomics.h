/*
 * tests/relacy/relacy_atomics.h -- the atomics section of src/opool_platform.h
 * on Relacy's simulated C++11 atomics, for the tests of tests/relacy (C++,
 * <relacy/relacy.hpp> included first). opool_platform.h includes this file in
 * place of its C11 atomics when OPOOL_RELACY is defined, which only these
 * tests do: the library never sees it.
 *
 * OPOOL_RELACY_WEAK_PUSH makes the free list's push CAS relaxed: a
 * deliberately broken build that the checker must reject
 * (relacy_freelist_catches_weak_push).
 */
#ifndef OPOOL_RELACY_ATOMICS_H
#define OPOOL_RELACY_ATOMICS_H

#define opool__atomic(T) rl::atomic<T>
#define opool__atomic_init(p, v) (p)->store(v, rl::mo_relaxed, RL_INFO)

#define opool__atomic_load_relaxed(p) (p)->load(rl::mo_relaxed, RL_INFO)
#define opool__atomic_load_acquire(p) (p)->load(rl::mo_acquire, RL_INFO)
#define opool__atomic_load_seq_cst(p) (p)->load(rl::mo_seq_cst, RL_INFO)

#define opool__atomic_store_relaxed(p, v) (p)->store(v, rl::mo_relaxed, RL_INFO)
#define opool__atomic_store_release(p, v) (p)->store(v, rl::mo_release, RL_INFO)

#define opool__atomic_fetch_add_relaxed(p, v) (p)->fetch_add(v, rl::mo_relaxed, RL_INFO)
#define opool__atomic_fetch_add_release(p, v) (p)->fetch_add(v, rl::mo_release, RL_INFO)
#define opool__atomic_fetch_add_seq_cst(p, v) (p)->fetch_add(v, rl::mo_seq_cst, RL_INFO)
#define opool__atomic_fetch_sub_relaxed(p, v) (p)->fetch_sub(v, rl::mo_relaxed, RL_INFO)
#define opool__atomic_fetch_sub_release(p, v) (p)->fetch_sub(v, rl::mo_release, RL_INFO)

#define opool__atomic_exchange_relaxed(p, v) (p)->exchange(v, rl::mo_relaxed, RL_INFO)

#define opool__rl_cas(weak, p, expected, desired, ok, fail)                                        \
    (p)->compare_exchange_##weak(*(expected), desired, rl::ok, RL_INFO, rl::fail, RL_INFO)
#define opool__atomic_cas_weak_acquire_acquire(p, expected, desired)                               \
    opool__rl_cas(weak, p, expected, desired, mo_acquire, mo_acquire)
#define opool__atomic_cas_weak_release_relaxed(p, expected, desired)                               \
    opool__rl_cas(weak, p, expected, desired, mo_release, mo_relaxed)
#if defined(OPOOL_RELACY_WEAK_PUSH)
#define opool__atomic_cas_weak_seq_cst_relaxed(p, expected, desired)                               \
    opool__rl_cas(weak, p, expected, desired, mo_relaxed, mo_relaxed)
#else
#define opool__atomic_cas_weak_seq_cst_relaxed(p, expected, desired)                               \
    opool__rl_cas(weak, p, expected, desired, mo_seq_cst, mo_relaxed)
#endif
#define opool__atomic_cas_strong_acquire_relaxed(p, expected, desired)                             \
    opool__rl_cas(strong, p, expected, desired, mo_acquire, mo_relaxed)
#define opool__atomic_cas_strong_seq_cst_relaxed(p, expected, desired)                             \
    opool__rl_cas(strong, p, expected, desired, mo_seq_cst, mo_relaxed)

#define opool__atomic_fence_seq_cst() rl::atomic_thread_fence(rl::mo_seq_cst, RL_INFO)
#define opool__atomic_signal_fence_seq_cst() rl::atomic_signal_fence(rl::mo_seq_cst, RL_INFO)

#endif /* OPOOL_RELACY_ATOMICS_H */
