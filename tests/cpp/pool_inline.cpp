/* tests/cpp/pool_inline.cpp -- compiled at -O2 by the test hpp_pool_inline, which fails if
 * the object defines pool<T>'s emplace (or one of its steps, detail::emplace_in and
 * construct_or_free), erase or get: they compile into their callers, as the C header's alloc,
 * free and get do. The types' constructors call a function that may throw, so emplace carries
 * its exception handling, and one type has a destructor for erase to run; the users below
 * call them from several places and for several T, as a program does. Without them marked
 * always-inline (OPOOL_HPP__HOT, include/opool.hpp), Clang and GCC each leave emplace out of
 * line for one of the two shapes of program below, and both leave erase of the type with a
 * destructor out of line: a call per object. */
#include "opool.hpp"

#include <cstdint>

/* defined nowhere: the compiler must assume it may throw */
void pool_inline_may_throw(std::uint64_t a);

template <std::size_t Size> struct object {
    std::uint64_t w[Size / 8];
    object(std::uint64_t a, std::uint64_t b) {
        pool_inline_may_throw(a);
        w[0] = a;
        w[1] = b;
    }
};

/* an object with a destructor for erase to run */
struct named {
    std::uint64_t a, b;
    named(std::uint64_t x, std::uint64_t y) : a(x), b(y) { pool_inline_may_throw(x); }
    named(const named &) = delete;
    named &operator=(const named &) = delete;
    ~named() { pool_inline_may_throw(a); }
};

template <class T, class Where> struct user {
    opl::pool<T> pool;
    opl::handle<T> h[64];
    explicit user(opl::options o) : pool(o) {}
    std::uint64_t fill(std::uint64_t tag) {
        std::uint64_t bad = 0;
        for (std::uint32_t k = 0; k < 64; k++) {
            auto e = pool.emplace(std::uint64_t{k}, tag);
            bad += e.obj == nullptr;
            h[k] = e.h;
        }
        return bad;
    }
    std::uint64_t churn(std::uint64_t seed, std::uint64_t iters, std::uint64_t tag) {
        std::uint64_t bad = 0;
        for (std::uint64_t it = 0; it < iters; it++) {
            seed = seed * 6364136223846793005u + 1442695040888963407u;
            std::uint32_t k = static_cast<std::uint32_t>(seed >> 58);
            bad += !pool.erase(h[k]);
            bad += pool.get(h[(k + 1) % 64]) == nullptr;
            auto e = pool.emplace(std::uint64_t{k}, tag + it);
            bad += e.obj == nullptr;
            h[k] = e.h;
        }
        return bad;
    }
};

template <class T, class Where> std::uint64_t run(opl::options o) {
    user<T, Where> u(o);
    return u.fill(1) + u.churn(1, 100, 2);
}

/* Each compiler leaves emplace out of line for one of two shapes of a program: users with
 * external linkage, reached through functions of their own (Clang), and users local to the
 * file, all inside one function (GCC). */
std::uint64_t run16(opl::options o);
std::uint64_t run64(opl::options o);
std::uint64_t run256(opl::options o);
std::uint64_t run_named(opl::options o);
std::uint64_t run16(opl::options o) { return run<object<16>, void>(o); }
std::uint64_t run64(opl::options o) { return run<object<64>, void>(o); }
std::uint64_t run256(opl::options o) { return run<object<256>, void>(o); }
std::uint64_t run_named(opl::options o) { return run<named, void>(o); }

namespace {
struct here {}; /* users of this file's own: internal linkage */
std::uint64_t run_all(opl::options o) {
    return run<object<16>, here>(o) + run<object<64>, here>(o) + run<object<256>, here>(o) +
           run<named, here>(o);
}
} // namespace

std::uint64_t run_all_sizes(opl::options o);
std::uint64_t run_all_sizes(opl::options o) { return run_all(o); }
