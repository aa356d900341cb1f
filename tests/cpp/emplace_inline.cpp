/* tests/cpp/emplace_inline.cpp -- compiled at -O2 by the test hpp_emplace_inline, which
 * fails if the object defines an emplace or one of its steps (detail::emplace_in,
 * construct_or_free): pool<T>::emplace, like the C header's alloc, compiles into its caller. The
 * type's constructor calls a function that may throw, so emplace carries its exception handling;
 * the users below call it from several places and for several T, as a program does. Without its
 * steps marked always-inline (OPOOL_HPP__HOT, include/opool.hpp), Clang and GCC each leave it out
 * of line, a call per object, for one of the two shapes of program below. */
#include "opool.hpp"

#include <cstdint>

/* defined nowhere: the compiler must assume it may throw */
void emplace_inline_may_throw(std::uint64_t a);

template <std::size_t Size> struct object {
    std::uint64_t w[Size / 8];
    object(std::uint64_t a, std::uint64_t b) {
        emplace_inline_may_throw(a);
        w[0] = a;
        w[1] = b;
    }
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

/* Each compiler left emplace out of line for one of two shapes of a program: users with
 * external linkage, reached through functions of their own (Clang), and users local to the
 * file, all inside one function (GCC). */
std::uint64_t run16(opl::options o);
std::uint64_t run64(opl::options o);
std::uint64_t run256(opl::options o);
std::uint64_t run16(opl::options o) { return run<object<16>, void>(o); }
std::uint64_t run64(opl::options o) { return run<object<64>, void>(o); }
std::uint64_t run256(opl::options o) { return run<object<256>, void>(o); }

namespace {
struct here {}; /* users of this file's own: internal linkage */
std::uint64_t run_all(opl::options o) {
    return run<object<16>, here>(o) + run<object<64>, here>(o) + run<object<256>, here>(o);
}
} // namespace

std::uint64_t run_all_sizes(opl::options o);
std::uint64_t run_all_sizes(opl::options o) { return run_all(o); }
