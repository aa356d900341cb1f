/*
 * test_hpp_mt.cpp -- opl::mt_pool<T> and opl::mt_cache<T> shared by threads
 * (label mt: also under ThreadSanitizer): objects with destructors made and
 * ended through caches and the shared path at once, handles handed between
 * threads, and two threads erasing one handle, where exactly one erase wins
 * and ~T runs exactly once.
 */
#include "opool.hpp"

#include "helpers.h"
#include "test.h"

#include <atomic>
#include <string>
#include <thread>
#include <vector>

static std::atomic<long> made, ended;

struct job {
    std::string name;
    int owner;
    explicit job(int o)
        : name("a job long enough to live on the heap, owner " + std::to_string(o)), owner(o) {
        made.fetch_add(1, std::memory_order_relaxed);
    }
    ~job() { ended.fetch_add(1, std::memory_order_relaxed); }
};

static opl::options opts(uint32_t capacity) {
    opl::options o = opl::options();
    o.capacity = capacity;
    return o;
}

TEST(threads_make_and_end_objects_through_caches_and_the_shared_path) {
    made = 0, ended = 0;
    {
        opl::mt_pool<job> pool(opts(256));
        REQUIRE(pool);
        std::atomic<uint64_t> mailbox[4] = {};
        std::vector<std::thread> ts;
        for (int t = 0; t < 4; t++)
            ts.emplace_back([&pool, &mailbox, t] {
                opl::mt_cache<job> cache(pool, 16);
                for (int k = 0; k < 3000; k++) {
                    auto e = (k & 1) ? cache.emplace(t) : pool.emplace(t);
                    if (!e.obj) continue;
                    CHECK(e.obj->owner == t);
                    /* hand it to the next thread; end whatever the previous one left */
                    uint64_t old = mailbox[(t + 1) % 4].exchange(e.h.raw().bits);
                    if (old != 0) {
                        opl::handle<job> h(opool_handle{old});
                        CHECK((k % 3 ? cache.erase(h) : pool.erase(h)));
                    }
                }
            });
        for (auto &t : ts) t.join();
        for (auto &m : mailbox)
            if (uint64_t bits = m.load()) CHECK(pool.erase(opl::handle<job>(opool_handle{bits})));
        CHECK(pool.size() == 0 && made.load() == ended.load());
    }
    CHECK(made.load() == ended.load() && made.load() > 0);
}

TEST(of_two_threads_erasing_one_handle_one_wins_and_the_destructor_runs_once) {
    made = 0, ended = 0;
    opl::mt_pool<job> pool(opts(64));
    for (int round = 0; round < 300; round++) {
        auto e = pool.emplace(round);
        REQUIRE(e.obj);
        std::atomic<int> go{0}, wins{0};
        auto racer = [&] {
            go.fetch_add(1);
            while (go.load() < 2) {
            }
            if (pool.erase(e.h)) wins.fetch_add(1);
        };
        std::thread a(racer), b(racer);
        a.join(), b.join();
        CHECK(wins.load() == 1 && ended.load() == round + 1);
    }
    CHECK(made.load() == ended.load());
}

TEST(the_pools_destructor_ends_what_threads_left_live) {
    made = 0, ended = 0;
    {
        opl::mt_pool<job> pool(opts(128));
        std::vector<std::thread> ts;
        for (int t = 0; t < 2; t++)
            ts.emplace_back([&pool, t] {
                opl::mt_cache<job> cache(pool, 8);
                for (int k = 0; k < 40; k++) (void)cache.emplace(t);
            });
        for (auto &t : ts) t.join();
        CHECK(pool.size() == 80 && ended.load() == 0);
    }
    CHECK(made.load() == 80 && ended.load() == 80);
}

/* One heap shared by threads through opl::shared_heap: std containers of four threads grow,
 * shrink and hand blocks to each other through opl::allocator (and std::pmr containers through
 * a heap_resource over the same heap), every call under the heap's mutex; nothing is lost. */
TEST(threads_share_one_heap_through_opl_allocator_and_heap_resource) {
    opl::shared_heap heap;
    REQUIRE(heap);
    {
        using int_vector = std::vector<int, opl::allocator<int>>;
        opl::allocator<int> a(heap);
        std::vector<int_vector> handed; /* made by one thread, freed by another */
        for (int k = 0; k < 4; k++) handed.emplace_back(a);
        std::vector<std::thread> threads;
        for (int t = 0; t < 4; t++)
            threads.emplace_back([&, t] {
                for (int round = 0; round < 200; round++) {
                    int_vector v(a);
                    for (int k = 0; k < 100 + round; k++) v.push_back(k + t);
                    if (v[99] != 99 + t) std::abort();
                    if (round == 100) handed[static_cast<size_t>(t)] = std::move(v);
                }
            });
        for (auto &th : threads) th.join();
        CHECK(heap_live(heap.c_heap()) == 4);
        threads.clear();
        for (int t = 0; t < 4; t++) /* each frees the vector another made */
            threads.emplace_back(
                [&, t] { handed[static_cast<size_t>((t + 1) % 4)] = int_vector(a); });
        for (auto &th : threads) th.join();
        CHECK(heap_live(heap.c_heap()) == 0);
#if OPOOL_HPP_PMR
        opl::heap_resource r(heap);
        threads.clear();
        for (int t = 0; t < 2; t++)
            threads.emplace_back([&r] {
                for (int round = 0; round < 100; round++) {
                    std::pmr::vector<std::pmr::string> names(&r);
                    for (int k = 0; k < 20; k++)
                        names.emplace_back("a name long enough for a block of its own");
                }
            });
        for (auto &th : threads) th.join();
        CHECK(heap_live(heap.c_heap()) == 0);
#endif
    }
}

int main() {
    RUN(threads_make_and_end_objects_through_caches_and_the_shared_path);
    RUN(of_two_threads_erasing_one_handle_one_wins_and_the_destructor_runs_once);
    RUN(the_pools_destructor_ends_what_threads_left_live);
    RUN(threads_share_one_heap_through_opl_allocator_and_heap_resource);
    return test_summary();
}
