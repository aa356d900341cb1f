/*
 * bench_peers.cpp -- opool_bench's C++ peers: Boost.Pool (boost::object_pool<T>,
 * boost::pool<>) and plf::colony<T>, behind the C interface of bench_peers.h.
 *
 * Every loop here is a transcription of one of bench_core.c's (churn_malloc,
 * lookup_malloc, fill_malloc/drain_malloc, iter_opool_fwd) into the peer's own
 * API, so read those first: the same bench_below() sequence picks the same
 * slots, the same a and b are written, the same sums come back. The object is
 * object<Size>, a struct of exactly the run-time object size; the peer is
 * instantiated for 16, 64 and 256 bytes and bench_peer_create picks one, so
 * the size is a compile-time constant inside the loops, as it is for a C++
 * user (the C subjects index with a run-time stride; the pointer-handle ones,
 * malloc and the Boost pools, never index at all).
 *
 * How each peer is used, and why:
 *   boost::object_pool<T>  construct(a, b) / destroy(p), the typed API. Its
 *       first block holds n objects (next_size = n), so churn never grows it.
 *       destroy() is ordered_free(): it walks the free list to keep it sorted,
 *       O(free chunks) per call. Churn keeps that list empty (every destroy is
 *       followed by a construct), so it costs O(1) there; a random drain of
 *       1,000,000 walks about N^2/4 links, so fill+drain is not run for it
 *       (bench_peer_skip says so in the output).
 *   boost::pool<>  malloc() / free(p) of sizeof(T) chunks, the object built
 *       with placement new (T is trivially destructible: free is all a delete
 *       would do). First block of n as above; free() is O(1) (unordered).
 *   plf::colony<T>  emplace(a, b) / erase(iterator). The handle is the
 *       iterator emplace returns (24 bytes): erase(iterator) is O(1), while
 *       erase(get_iterator(pointer)) searches the groups, last first, which is
 *       O(groups) and not how colony is meant to be driven when iterators can
 *       be kept. reserve(n) at creation. Colony is the one peer that iterates
 *       its live objects (skipping erased runs with its skipfield).
 *   opl::pool<T>  emplace(a, b) / erase(handle<T>) / get(handle<T>): the C
 *       pool through include/opool.hpp, the way a C++ user writes it. T is
 *       trivially destructible, so erase is opool_free and emplace is
 *       opool_alloc plus the constructor: its rows against the opool rows
 *       measure what the wrapper costs (nothing, if it is right). clear()
 *       resets it, as opool_clear does the C subject.
 * No other peer validates a handle: a stale pointer or iterator is
 * dereferenced all the same, as with malloc. bench_core.c's tables say so in
 * their notes.
 */
#include "bench_util.h"

#include "bench_peers.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <type_traits>

#ifdef OPOOL_BENCH_HAVE_BOOST
#include <boost/pool/object_pool.hpp>
#include <boost/pool/pool.hpp>
#include <boost/version.hpp>
#endif
#ifdef OPOOL_BENCH_HAVE_COLONY
#include <plf_colony.h>
#endif
#ifdef OPOOL_BENCH_HAVE_OPL
#include "opool.hpp"
#endif

namespace {

using u32 = std::uint32_t;
using u64 = std::uint64_t;

/* The object: Size bytes, a in word 0 and b in word 1 (bench_core.c's FA and
 * FB). The constructor writes those two fields and leaves the rest alone,
 * exactly the stores the C subjects make. */
template <std::size_t Size> struct object {
    static_assert(Size >= 16 && Size % 8 == 0, "a and b, and a whole number of words");
    u64 w[Size / 8];
    object(u64 a, u64 b) {
        w[0] = a;
        w[1] = b;
    }
};

/* n handles in cache-line aligned memory, as bench_core.c keeps its handle
 * arrays (bench_xalloc), so no subject gains from a different layout. */
template <class H> class handle_array {
    static_assert(std::is_trivially_destructible<H>::value, "released without destructor calls");

  public:
    explicit handle_array(u32 n) : p_(static_cast<H *>(bench_xalloc(sizeof(H) * n))) {
        std::uninitialized_value_construct_n(p_, n);
    }
    ~handle_array() { std::free(p_); }
    handle_array(const handle_array &) = delete;
    handle_array &operator=(const handle_array &) = delete;
    H *data() { return p_; }
    const H *data() const { return p_; }

  private:
    H *p_;
};

} // namespace

/* The peer behind bench_peers.h's opaque type: one virtual call per workload
 * call, never per operation. */
struct bench_peer {
    explicit bench_peer(u32 n_) : n(n_) {}
    virtual ~bench_peer() = default;
    bench_peer(const bench_peer &) = delete;
    bench_peer &operator=(const bench_peer &) = delete;
    virtual u64 fill(u64 tag) = 0;
    virtual u64 drain(const u32 *perm, u32 count) = 0;
    virtual void fresh() = 0;
    virtual u64 churn(u64 seed, u64 iters, u64 tag) = 0;
    virtual u64 lookup(u64 seed, u64 iters) const = 0;
    virtual bool iterate(u32 passes, u64 *sum) const = 0;
    /* bench_peers.h's bench_peer_frames; the peers that cannot iterate are
     * skipped before (bench_peer_skip) */
    virtual u64 frames(u64 seed, u32 nframes, u32 changes, u64 tag, u64 *bad) {
        (void)seed, (void)nframes, (void)changes, (void)tag;
        ++*bad;
        return 0;
    }
    virtual bool count(u32 *live) const = 0;
    virtual const void *object_of(u32 k) const = 0;

    const u32 n;
};

namespace {

/* The Boost pools: handle = T*, lookup = a plain dereference (lookup_malloc). */
template <class T> struct pointer_peer : bench_peer {
    explicit pointer_peer(u32 n_) : bench_peer(n_), h(n_) {}

    u64 lookup(u64 seed, u64 iters) const final {
        const u32 n_ = n;
        T *const *H = h.data();
        u64 sum = 0;
        for (u64 it = 0; it < iters; it++) {
            u32 k = bench_below(&seed, n_);
            const T *o = H[k]; /* unvalidated: a stale pointer would be read all the same */
            sum += o->w[0] + o->w[1];
        }
        return sum;
    }
    bool iterate(u32, u64 *) const final { return false; }
    bool count(u32 *) const final { return false; }
    const void *object_of(u32 k) const final { return h.data()[k]; }

    handle_array<T *> h;
};

#ifdef OPOOL_BENCH_HAVE_BOOST

template <class T> struct boost_object_peer final : pointer_peer<T> {
    explicit boost_object_peer(u32 n_) : pointer_peer<T>(n_), pool(n_) {}

    u64 fill(u64 tag) override {
        const u32 n_ = this->n;
        T **H = this->h.data();
        for (u32 k = 0; k < n_; k++) {
            T *o = pool.construct(u64{k}, tag);
            if (o == nullptr) return 1;
            H[k] = o;
        }
        return 0;
    }
    u64 drain(const u32 *perm, u32 count_) override {
        T **H = this->h.data();
        for (u32 j = 0; j < count_; j++) pool.destroy(H[perm[j]]);
        return 0;
    }
    /* destroy() keeps the free list sorted by address: after a drain it is
     * already in the order of a fresh pool, over memory already touched. */
    void fresh() override {}
    u64 churn(u64 seed, u64 iters, u64 tag) override {
        const u32 n_ = this->n;
        T **H = this->h.data();
        for (u64 it = 0; it < iters; it++) {
            u32 k = bench_below(&seed, n_);
            pool.destroy(H[k]);
            T *o = pool.construct(u64{k}, tag + it);
            if (o == nullptr) return 1;
            H[k] = o;
        }
        return 0;
    }

    boost::object_pool<T> pool;
};

template <class T> struct boost_pool_peer final : pointer_peer<T> {
    static_assert(std::is_trivially_destructible<T>::value, "free() without a destructor call");

    explicit boost_pool_peer(u32 n_) : pointer_peer<T>(n_), pool(sizeof(T), n_) {}

    u64 fill(u64 tag) override {
        const u32 n_ = this->n;
        T **H = this->h.data();
        for (u32 k = 0; k < n_; k++) {
            void *m = pool.malloc();
            if (m == nullptr) return 1;
            H[k] = new (m) T(k, tag);
        }
        return 0;
    }
    u64 drain(const u32 *perm, u32 count_) override {
        T **H = this->h.data();
        for (u32 j = 0; j < count_; j++) pool.free(H[perm[j]]);
        return 0;
    }
    /* After a random drain the free list is a random permutation (free()
     * pushes on the front). purge_memory() returns the blocks and resets the
     * next block size to n; the next malloc() then builds one block of n
     * chunks threaded in address order, writing every chunk (so the pages are
     * mapped here, untimed), and the free() hands that chunk back in front. */
    void fresh() override {
        pool.purge_memory();
        void *m = pool.malloc();
        if (m == nullptr) throw std::bad_alloc();
        pool.free(m);
    }
    u64 churn(u64 seed, u64 iters, u64 tag) override {
        const u32 n_ = this->n;
        T **H = this->h.data();
        for (u64 it = 0; it < iters; it++) {
            u32 k = bench_below(&seed, n_);
            pool.free(H[k]);
            void *m = pool.malloc();
            if (m == nullptr) return 1;
            H[k] = new (m) T(k, tag + it);
        }
        return 0;
    }

    boost::pool<> pool;
};

#endif /* OPOOL_BENCH_HAVE_BOOST */

#ifdef OPOOL_BENCH_HAVE_COLONY

template <class T> struct colony_peer final : bench_peer {
    using colony = plf::colony<T>;

    explicit colony_peer(u32 n_) : bench_peer(n_), h(n_) { c.reserve(n_); }

    u64 fill(u64 tag) override {
        const u32 n_ = n;
        typename colony::iterator *H = h.data();
        for (u32 k = 0; k < n_; k++) H[k] = c.emplace(u64{k}, tag);
        return 0;
    }
    u64 drain(const u32 *perm, u32 count_) override {
        typename colony::iterator *H = h.data();
        for (u32 j = 0; j < count_; j++) c.erase(H[perm[j]]);
        return 0;
    }
    /* A drain frees the groups it empties. reserve(n) allocates groups for n
     * again; filling and clearing them writes every one (pages mapped here,
     * untimed), and clear() keeps the groups in their order, first group
     * first, for the next fill to use from the start. */
    void fresh() override {
        c.clear();
        c.reserve(n);
        fill(0);
        c.clear();
    }
    u64 churn(u64 seed, u64 iters, u64 tag) override {
        const u32 n_ = n;
        typename colony::iterator *H = h.data();
        for (u64 it = 0; it < iters; it++) {
            u32 k = bench_below(&seed, n_);
            c.erase(H[k]);
            H[k] = c.emplace(u64{k}, tag + it);
        }
        return 0;
    }
    u64 lookup(u64 seed, u64 iters) const override {
        const u32 n_ = n;
        const typename colony::iterator *H = h.data();
        u64 sum = 0;
        for (u64 it = 0; it < iters; it++) {
            u32 k = bench_below(&seed, n_);
            const T &o = *H[k]; /* unvalidated, like a pointer */
            sum += o.w[0] + o.w[1];
        }
        return sum;
    }
    bool iterate(u32 passes, u64 *out) const override {
        u64 sum = 0;
        for (u32 r = 0; r < passes; r++)
            for (const T &o : c) sum += o.w[0];
        *out = sum;
        return true;
    }
    u64 frames(u64 seed, u32 nframes, u32 changes, u64 tag, u64 *) override {
        const u32 n_ = n;
        typename colony::iterator *H = h.data();
        u64 sum = 0;
        for (u32 f = 0; f < nframes; f++) {
            for (T &o : c) {
                o.w[1] += 1;
                sum += o.w[0] + o.w[1];
            }
            for (u32 j = 0; j < changes; j++) {
                u32 k = bench_below(&seed, n_);
                c.erase(H[k]);
                H[k] = c.emplace(u64{k}, tag + u64{f} * changes + j);
            }
        }
        return sum;
    }
    bool count(u32 *live) const override {
        *live = static_cast<u32>(c.size());
        return true;
    }
    const void *object_of(u32 k) const override { return &*h.data()[k]; }

    colony c;
    handle_array<typename colony::iterator> h;
};

#endif /* OPOOL_BENCH_HAVE_COLONY */

#ifdef OPOOL_BENCH_HAVE_OPL

template <class T> struct opl_peer final : bench_peer {
    static opl::options options_for(u32 n_) {
        opl::options o = opl::options();
        o.capacity = n_;
        return o;
    }
    explicit opl_peer(u32 n_) : bench_peer(n_), pool(options_for(n_)), h(n_) {
        if (!pool) throw std::bad_alloc();
    }

    u64 fill(u64 tag) override {
        const u32 n_ = n;
        opl::handle<T> *H = h.data();
        for (u32 k = 0; k < n_; k++) {
            auto e = pool.emplace(u64{k}, tag);
            if (e.obj == nullptr) return 1;
            H[k] = e.h;
        }
        return 0;
    }
    u64 drain(const u32 *perm, u32 count_) override {
        const opl::handle<T> *H = h.data();
        u64 bad = 0;
        for (u32 j = 0; j < count_; j++) bad += !pool.erase(H[perm[j]]);
        return bad;
    }
    void fresh() override { pool.clear(); }
    u64 churn(u64 seed, u64 iters, u64 tag) override {
        const u32 n_ = n;
        opl::handle<T> *H = h.data();
        u64 bad = 0;
        for (u64 it = 0; it < iters; it++) {
            u32 k = bench_below(&seed, n_);
            bad += !pool.erase(H[k]);
            auto e = pool.emplace(u64{k}, tag + it);
            bad += e.obj == nullptr;
            H[k] = e.h;
        }
        return bad;
    }
    u64 lookup(u64 seed, u64 iters) const override {
        const u32 n_ = n;
        const opl::handle<T> *H = h.data();
        u64 sum = 0;
        for (u64 it = 0; it < iters; it++) {
            u32 k = bench_below(&seed, n_);
            const T *o = pool.get(H[k]); /* validated: nullptr for a stale handle */
            if (o != nullptr) sum += o->w[0] + o->w[1];
        }
        return sum;
    }
    bool iterate(u32, u64 *) const override { return false; }
    bool count(u32 *live) const override {
        *live = pool.size();
        return true;
    }
    const void *object_of(u32 k) const override { return pool.get(h.data()[k]); }

    opl::pool<T> pool;
    handle_array<opl::handle<T>> h;
};

#endif /* OPOOL_BENCH_HAVE_OPL */

template <template <class> class Peer> bench_peer *make_sized(std::size_t size, u32 n) {
    switch (size) {
    case 16:
        return new Peer<object<16>>(n);
    case 64:
        return new Peer<object<64>>(n);
    case 256:
        return new Peer<object<256>>(n);
    default:
        return nullptr;
    }
}

/* The C callers cannot unwind: an exception (std::bad_alloc) ends the program
 * here, with a message, as bench_xalloc does when memory runs out. */
template <class F> auto guarded(const char *what, F &&f) -> decltype(f()) {
    try {
        return f();
    } catch (const std::exception &e) {
        std::fprintf(stderr, "opool_bench: %s: %s\n", what, e.what());
        std::exit(2);
    }
}

} // namespace

extern "C" {

const char *bench_peer_version(bench_peer_kind kind) {
    switch (kind) {
#ifdef OPOOL_BENCH_HAVE_BOOST
    case BENCH_PEER_BOOST_OBJECT_POOL:
    case BENCH_PEER_BOOST_POOL: {
        static char v[32];
        std::snprintf(v, sizeof v, "Boost %d.%d.%d", BOOST_VERSION / 100000,
                      BOOST_VERSION / 100 % 1000, BOOST_VERSION % 100);
        return v;
    }
#endif
#ifdef OPOOL_BENCH_HAVE_COLONY
    case BENCH_PEER_COLONY:
        return "plf_colony.h (states no version)";
#endif
#ifdef OPOOL_BENCH_HAVE_OPL
    case BENCH_PEER_OPL_POOL:
        return "include/opool.hpp of this tree";
#endif
    default:
        return nullptr;
    }
}

const char *bench_peer_skip(bench_peer_kind kind, const char *workload) {
    bool boost = kind == BENCH_PEER_BOOST_OBJECT_POOL || kind == BENCH_PEER_BOOST_POOL;
    bool iterates = std::strcmp(workload, "iter") == 0 || std::strcmp(workload, "frame") == 0;
    if (boost && iterates) return "keeps no record of live objects: nothing to iterate";
    if (kind == BENCH_PEER_OPL_POOL && iterates)
        return "its range-for is the opool rows' backward loop over the same live list";
    if (kind == BENCH_PEER_BOOST_OBJECT_POOL && std::strcmp(workload, "filldrain") == 0)
        return "destroy() is ordered_free, O(free chunks) per call: a random drain of "
               "N = 1,000,000 walks about N^2/4 links";
    return nullptr;
}

bench_peer *bench_peer_create(bench_peer_kind kind, size_t object_size, uint32_t n) {
    return guarded("creating a peer", [&]() -> bench_peer * {
        switch (kind) {
#ifdef OPOOL_BENCH_HAVE_BOOST
        case BENCH_PEER_BOOST_OBJECT_POOL:
            return make_sized<boost_object_peer>(object_size, n);
        case BENCH_PEER_BOOST_POOL:
            return make_sized<boost_pool_peer>(object_size, n);
#endif
#ifdef OPOOL_BENCH_HAVE_COLONY
        case BENCH_PEER_COLONY:
            return make_sized<colony_peer>(object_size, n);
#endif
#ifdef OPOOL_BENCH_HAVE_OPL
        case BENCH_PEER_OPL_POOL:
            return make_sized<opl_peer>(object_size, n);
#endif
        default:
            (void)object_size;
            (void)n;
            return nullptr;
        }
    });
}

void bench_peer_destroy(bench_peer *p) { delete p; }

uint64_t bench_peer_fill(bench_peer *p, uint64_t tag) {
    return guarded("fill", [&] { return p->fill(tag); });
}

uint64_t bench_peer_drain(bench_peer *p, const uint32_t *perm, uint32_t count) {
    return guarded("drain", [&] { return p->drain(perm, count); });
}

void bench_peer_fresh(bench_peer *p) {
    guarded("reset", [&] { p->fresh(); });
}

uint64_t bench_peer_churn(bench_peer *p, uint64_t seed, uint64_t iters, uint64_t tag) {
    return guarded("churn", [&] { return p->churn(seed, iters, tag); });
}

uint64_t bench_peer_lookup(const bench_peer *p, uint64_t seed, uint64_t iters) {
    return p->lookup(seed, iters);
}

uint64_t bench_peer_frames(bench_peer *p, uint64_t seed, uint32_t frames, uint32_t changes,
                           uint64_t tag, uint64_t *bad) {
    return guarded("frame", [&] { return p->frames(seed, frames, changes, tag, bad); });
}

bool bench_peer_iterate(const bench_peer *p, uint32_t passes, uint64_t *sum) {
    return p->iterate(passes, sum);
}

bool bench_peer_count(const bench_peer *p, uint32_t *count) { return p->count(count); }

const void *bench_peer_object(const bench_peer *p, uint32_t k) { return p->object_of(k); }

} /* extern "C" */
