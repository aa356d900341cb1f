/*
 * test_hpp.cpp -- include/opool.hpp as a C++ user reads it: objects with
 * constructors and destructors, every path that ends one, exceptions at
 * every throwing point, range-for with the C loop's promise, typed handles
 * in std containers, side tables, the concurrent pool, save/load and the
 * pmr resource. Built as C++17, C++20, and C++17 with -fno-exceptions
 * -fno-rtti (tests/cpp/cpp.cmake); the exception tests need exceptions.
 */
#include "opool.hpp"

#include "counting.h"
#include "helpers.h"
#include "support/mt_check.h" /* OPOOL_TEST_MT_GROWS (nothing else: the install check links no test support) */
#include "loop_check.h"
#include "test.h"

#include <cstring>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include <algorithm>
#include <iterator>
/* The views of C++20: not with Clang before 15 on libstdc++, whose <ranges> it cannot compile */
#if defined(__cpp_lib_ranges) &&                                                                   \
    !(defined(__clang__) && __clang_major__ < 15 && defined(__GLIBCXX__))
#include <ranges>
#define OPOOL_TEST_VIEWS 1
#else
#define OPOOL_TEST_VIEWS 0
#endif

#if OPOOL_HPP_EXCEPTIONS
#include <stdexcept>
#endif

/* ---- a type that counts its lives ---------------------------------------- */

/* Every constructor and destructor is counted; each object holds a heap
 * string (a leak or a double destruction shows under ASan) and its own
 * address (a memcpy'd object would be caught by check()). */
struct lives {
    static long made, ended;
    static int throw_in; /* the n-th construction from now throws (0: none) */
    static long alive() { return made - ended; }
    static void reset() { made = ended = 0, throw_in = 0; }
};
long lives::made, lives::ended;
int lives::throw_in;

struct tracked {
    std::string text;
    int value;
    const tracked *self;
    explicit tracked(int v) : text("object number " + std::to_string(v)), value(v), self(this) {
        if (lives::throw_in != 0 && --lives::throw_in == 0) {
#if OPOOL_HPP_EXCEPTIONS
            throw std::runtime_error("constructor failed");
#endif
        }
        lives::made++;
    }
    tracked(const tracked &) = delete;
    tracked &operator=(const tracked &) = delete;
    ~tracked() {
        lives::ended++;
        self = nullptr;
    }
    bool check(int v) const {
        return self == this && value == v && text == "object number " + std::to_string(v);
    }
};

static opl::options opts(uint32_t capacity, uint32_t max_capacity = 0, uint32_t salt = 0) {
    opl::options o = opl::options();
    o.capacity = capacity;
    o.max_capacity = max_capacity;
    o.salt = salt;
    return o;
}

/* ---- handles ------------------------------------------------------------- */

TEST(a_handle_is_8_bytes_null_by_default_and_ordered) {
    struct a {};
    CHECK(sizeof(opl::handle<a>) == 8 && sizeof(opl::handle32<a>) == 4);
    opl::handle<a> n;
    CHECK(!n && n.raw().bits == 0 && opool_handle_is_null(n.raw()));
    opl::handle<a> x(handle(3, 7)), y(handle(5, 7)), x2(handle(3, 7));
    CHECK(x && x == x2 && x != y && x < y && !(y < x) && !(x < x2));
    CHECK(x.index() == 7 && x.generation() == 3);
    CHECK(std::hash<opl::handle<a>>()(x) == std::hash<opl::handle<a>>()(x2));
    CHECK(std::hash<opl::handle<a>>()(x) != std::hash<opl::handle<a>>()(y));
}

/* Two live pools with one salt would accept each other's handles: the
 * second is refused (its status says so, a line on stderr says why); twins
 * on purpose ask for it. */
TEST(a_salt_a_live_pool_has_is_refused) {
    opl::pool<int> c(opts(8, 0, 0x5150));
    CHECK(c.status() == OPOOL_OK);
    opl::pool<int> d(opts(8, 0, 0x5150));
    CHECK(d.status() == OPOOL_EINVAL);
    CHECK(d.emplace(1).obj == nullptr);
    opl::options twin = opts(8, 0, 0x5150);
    twin.flags = OPOOL_SHARE_SALT;
    opl::pool<int> t(twin);
    CHECK(t.status() == OPOOL_OK);
    auto e = c.emplace(7);
    REQUIRE(e.obj);
    CHECK(t.get(e.h) == nullptr); /* not live in t yet */
    CHECK(t.emplace(8).h == e.h); /* the same handle: twins */
}

/* erase of a pointer: the start of a live object only; any other is the C
 * pool's rejected free (counted in rejected_handles, reported). */
TEST(erasing_a_pointer_to_no_live_object_is_rejected_and_counted) {
    struct cell {
        char bytes[16];
    };
    opl::pool<cell> p(opts(4));
    auto e = p.emplace();
    REQUIRE(e.obj);
    const cell *inside = reinterpret_cast<const cell *>(e.obj->bytes + 1); /* alignment 1 */
    CHECK(!p.erase(inside));
    CHECK(p.erase(e.obj));
    CHECK(!p.erase(e.obj)); /* freed already */
    CHECK(!p.erase(static_cast<const cell *>(nullptr)));
    opool_stats s;
    opool_get_stats(p.c_pool(), &s);
    CHECK(s.rejected_handles == 2);
}

TEST(handles_key_std_containers) {
    opl::pool<int> p(opts(64));
    REQUIRE(p);
    std::unordered_map<opl::handle<int>, int> by_hash;
    std::map<opl::handle<int>, int> by_order;
    std::set<opl::handle<int>> set;
    std::vector<opl::handle<int>> hs;
    for (int k = 0; k < 64; k++) {
        auto e = p.emplace(k);
        REQUIRE(e.obj != nullptr);
        by_hash[e.h] = k, by_order[e.h] = k, set.insert(e.h), hs.push_back(e.h);
    }
    CHECK(by_hash.size() == 64 && by_order.size() == 64 && set.size() == 64);
    for (int k = 0; k < 64; k++)
        CHECK(by_hash.at(hs[(size_t)k]) == k && by_order.at(hs[(size_t)k]) == k);
    p.erase(hs[5]);
    auto again = p.emplace(99); /* the same slot, a new generation: another key */
    CHECK(again.h.index() == hs[5].index() && again.h != hs[5] && !by_hash.count(again.h));
}

TEST(compact_handles_expand_to_the_live_handle_only) {
    opl::pool<int> p(opts(16));
    auto e = p.emplace(1);
    opl::handle32<int> c = p.compact(e.h);
    CHECK(c && p.expand(c) == e.h);
    CHECK(std::hash<opl::handle32<int>>()(c) == std::hash<opl::handle32<int>>()(p.compact(e.h)));
    p.erase(e.h);
    CHECK(!p.compact(e.h) && !p.expand(c));
}

/* ---- creation ------------------------------------------------------------ */

TEST(a_pool_that_failed_to_be_created_says_why_and_refuses_everything) {
    lives::reset();
    opl::pool<tracked> p(opts(0));
    CHECK(!p && p.status() == OPOOL_EINVAL && p.c_pool() == nullptr);
    auto e = p.emplace(1);
    CHECK(!e.h && e.obj == nullptr && lives::made == 0);
    CHECK(!p.erase(opl::handle<tracked>(handle(1, 0))) && p.get(e.h) == nullptr);
    CHECK(p.size() == 0 && p.capacity() == 0);
    int visits = 0;
    for (tracked &t : p) (void)t, visits++;
    CHECK(visits == 0);
    opl::pool<tracked> q(opts(8, 4)); /* max_capacity below capacity */
    CHECK(!q && q.status() == OPOOL_EINVAL);
    opl::options bad = opts(8);
    bad.flags = 1u << 20;
    opl::pool<tracked> r(bad);
    CHECK(!r && r.status() == OPOOL_EINVAL);
    struct alignas(8192) too_aligned {
        char c;
    };
    opl::pool<too_aligned> wide(opts(8)); /* object_align above 4096 */
    CHECK(!wide && wide.status() == OPOOL_EINVAL);
    opl::side_table<tracked, int> orphan(p); /* of a pool that does not exist */
    CHECK(!orphan && orphan.status() == OPOOL_EINVAL && orphan.get(e.h) == nullptr);
    opl::pool<tracked> ok(opts(8));
    CHECK(ok && ok.status() == OPOOL_OK && ok.capacity() == 8);
}

static void count_report(opool *, opool_status what, opool_handle, void *user) {
    if (what == OPOOL_EFULL) ++*static_cast<int *>(user);
}

TEST(a_pool_from_a_whole_desc_takes_its_report_and_allocator_and_refuses_hooks) {
    lives::reset();
    counting mem;
    int fulls = 0;
    opool_desc d = opool_desc();
    d.capacity = 2;
    d.report = count_report;
    d.user = &fulls;
    d.allocator = counting_allocator(&mem);
    {
        auto p = opl::pool<tracked>::from_desc(d);
        REQUIRE(p);
        CHECK(mem.blocks == 1 && p.stats().capacity == 2);
        (void)p.emplace(1), (void)p.emplace(2);
        CHECK(!p.emplace(3).obj && fulls == 1 && lives::made == 2);
    }
    CHECK(mem.blocks == 0 && lives::alive() == 0);
    opool_desc sized = d;
    sized.object_size = sizeof(tracked) + 8;
    auto a = opl::pool<tracked>::from_desc(sized);
    opool_desc hooked = d;
    hooked.fini = [](void *, void *) {};
    auto b = opl::pool<tracked>::from_desc(hooked);
    opool_desc evicting = d;
    evicting.on_full = OPOOL_FULL_EVICT;
    auto c = opl::pool<tracked>::from_desc(evicting);
    CHECK(!a && !b && !c && a.status() == OPOOL_EINVAL && b.status() == OPOOL_EINVAL &&
          c.status() == OPOOL_EINVAL && mem.calls == 1);
    mem.fail_from = 0; /* the allocator refuses: ENOMEM, nothing built */
    auto starved = opl::pool<tracked>::from_desc(d);
    CHECK(!starved && starved.status() == OPOOL_ENOMEM && mem.blocks == 0);
}

/* ---- objects' lives ------------------------------------------------------ */

TEST(emplace_constructs_in_place_and_erase_destroys) {
    lives::reset();
    {
        opl::pool<tracked> p(opts(4));
        auto [h, obj] = p.emplace(7);
        REQUIRE(obj != nullptr);
        CHECK(obj->check(7) && p.get(h) == obj && p.contains(h) && p.size() == 1);
        CHECK(opool_get(p.c_pool(), h.raw()) == obj && p.handle_of(*obj) == h);
        CHECK(lives::made == 1 && lives::ended == 0);
        CHECK(p.erase(h));
        CHECK(lives::ended == 1 && p.size() == 0 && p.get(h) == nullptr && !p.contains(h));
        CHECK(!p.erase(h)); /* the second time: stale, nothing runs */
        CHECK(lives::ended == 1 && p.stats().rejected_handles == 1);
        auto e = p.emplace(8);
        CHECK(p.erase(e.obj) && lives::ended == 2 && !p.erase(e.obj));
        CHECK(!p.erase(static_cast<const tracked *>(nullptr)));
    }
    CHECK(lives::alive() == 0);
}

TEST(emplace_on_a_full_pool_constructs_nothing) {
    lives::reset();
    opl::pool<tracked> p(opts(2));
    /* (the default report prints the exhaustion episode's first line) */
    CHECK(p.emplace(1).obj && p.emplace(2).obj);
    auto e = p.emplace(3);
    CHECK(!e.h && e.obj == nullptr && lives::made == 2 && p.stats().failed_allocs == 1);
}

TEST(erase_of_null_stale_and_foreign_handles_is_false_and_destroys_nothing) {
    lives::reset();
    opl::pool<tracked> a(opts(4, 0, 0x100)), b(opts(4, 0, 0x200));
    auto x = a.emplace(1), y = b.emplace(2);
    CHECK(!a.erase(opl::handle<tracked>()));
    CHECK(!a.erase(opl::handle<tracked>(y.h.raw()))); /* b's handle, same slot index */
    CHECK(!a.erase(opl::handle<tracked>(handle(x.h.generation() + 2, x.h.index()))));
    CHECK(!a.erase(opl::handle<tracked>(handle(1, 1000))));
    CHECK(lives::ended == 0 && x.obj->check(1) && y.obj->check(2));
    CHECK(a.stats().rejected_handles == 4);
}

TEST(clear_retain_and_the_destructor_end_every_object_once) {
    lives::reset();
    {
        opl::pool<tracked> p(opts(32));
        for (int k = 0; k < 20; k++) (void)p.emplace(k);
        CHECK(p.retain([](tracked &t, opl::handle<tracked>) { return t.value % 2 == 0; }) == 10);
        CHECK(lives::ended == 10 && p.size() == 10);
        for (tracked &t : p) CHECK(t.value % 2 == 0 && t.check(t.value));
        p.clear();
        CHECK(lives::ended == 20 && p.size() == 0);
        auto e = p.emplace(5); /* cleared: slots from 0 again */
        CHECK(e.h.index() == 0);
        for (int k = 0; k < 7; k++) (void)p.emplace(k);
    }
    CHECK(lives::made == 28 && lives::alive() == 0);
}

TEST(retain_lets_keep_erase_its_own_object) {
    lives::reset();
    opl::pool<tracked> p(opts(8));
    for (int k = 0; k < 8; k++) (void)p.emplace(k);
    uint32_t n = p.retain([&p](tracked &t, opl::handle<tracked> h) {
        if (t.value == 3) return !p.erase(h); /* gone already: retain must not count it */
        return t.value != 5;
    });
    CHECK(n == 1 && p.size() == 6 && lives::ended == 2);
}

TEST(moving_a_pool_moves_its_objects_and_assignment_ends_the_old_ones) {
    lives::reset();
    opl::pool<tracked> a(opts(8));
    auto e = a.emplace(1);
    opl::pool<tracked> b(std::move(a));
    CHECK(!a && a.size() == 0 && b.get(e.h) == e.obj && lives::ended == 0);
    opl::pool<tracked> c(opts(4));
    (void)c.emplace(2), (void)c.emplace(3);
    c = std::move(b); /* c's two objects end */
    CHECK(lives::ended == 2 && c.get(e.h) == e.obj && e.obj->check(1));
    c = opl::pool<tracked>();
    CHECK(lives::alive() == 0);
}

/* The oldest object (the smallest value) is the victim. */
static opl::handle<tracked> evict_smallest(opl::pool<tracked> &p, void *user) {
    (*static_cast<int *>(user))++;
    opl::handle<tracked> best;
    int v = 1 << 30;
    for (auto [h, t] : p.items())
        if (t.value < v) v = t.value, best = h;
    return best;
}

TEST(eviction_runs_the_victims_destructor) {
    lives::reset();
    int calls = 0;
    {
        opl::pool<tracked> p(opts(4), evict_smallest, &calls);
        REQUIRE(p);
        std::vector<opl::handle<tracked>> hs;
        for (int k = 0; k < 10; k++) hs.push_back(p.emplace(k).h);
        CHECK(calls == 6 && lives::ended == 6 && p.size() == 4);
        CHECK(p.stats().evictions == 6 && p.get(hs[5]) == nullptr && p.get(hs[6])->check(6));
        opl::pool<tracked> moved(std::move(p)); /* the chooser follows the pool */
        CHECK(moved.emplace(10).obj && calls == 7 && moved.get(hs[6]) == nullptr);
    }
    CHECK(lives::alive() == 0);
    opl::pool<tracked> none(opts(4), nullptr);
    CHECK(!none && none.status() == OPOOL_EINVAL);
}

static opl::handle<tracked> evict_nothing(opl::pool<tracked> &, void *) {
    return opl::handle<tracked>();
}

TEST(an_eviction_that_names_no_victim_fails_the_emplace) {
    lives::reset();
    opl::pool<tracked> p(opts(1), evict_nothing);
    auto e = p.emplace(1), f = p.emplace(2);
    CHECK(e.obj && !f.obj && !f.h && lives::made == 1 && lives::ended == 0);
}

TEST(a_growing_pool_keeps_objects_in_place_and_shrink_ends_none) {
    lives::reset();
    opl::pool<tracked> p(opts(4, 64));
    std::vector<opl::emplaced<tracked>> es;
    for (int k = 0; k < 40; k++) es.push_back(p.emplace(k));
    CHECK(p.capacity() >= 40 && p.stats().grows > 0);
    for (int k = 0; k < 40; k++) CHECK(p.get(es[(size_t)k].h) == es[(size_t)k].obj);
    for (int k = 4; k < 40; k++) p.erase(es[(size_t)k].h);
    CHECK(p.shrink() > 0 && lives::ended == 36);
    for (int k = 0; k < 4; k++) CHECK(es[(size_t)k].obj->check(k));
    p.sort();
    CHECK(lives::alive() == 4);
}

#if OPOOL_HPP_EXCEPTIONS
TEST(a_throwing_constructor_leaves_no_live_slot_and_rethrows) {
    lives::reset();
    opl::pool<tracked> p(opts(2));
    auto a = p.emplace(1);
    lives::throw_in = 1;
    bool thrown = false;
    try {
        (void)p.emplace(2);
    } catch (const std::runtime_error &) {
        thrown = true;
    }
    CHECK(thrown && p.size() == 1 && lives::made == 1 && lives::ended == 0);
    opool_stats s = p.stats();
    CHECK(s.allocs == 2 && s.frees == 1 && s.count == 1);
    auto b = p.emplace(3); /* the slot came back, with a newer generation */
    CHECK(b.obj && b.h.index() == 1 && b.h.generation() > a.h.generation());
    CHECK(p.size() == 2 && lives::alive() == 2);
}

TEST(a_keep_that_throws_leaves_the_pool_consistent) {
    lives::reset();
    opl::pool<tracked> p(opts(8));
    for (int k = 0; k < 8; k++) (void)p.emplace(k);
    bool thrown = false;
    try {
        p.retain([](tracked &t, opl::handle<tracked>) {
            if (t.value == 3) throw std::runtime_error("keep");
            return t.value < 5; /* visited before 3: 7, 6, 5 erased */
        });
    } catch (const std::runtime_error &) {
        thrown = true;
    }
    CHECK(thrown && p.size() == 5 && lives::ended == 3);
    for (tracked &t : p) CHECK(t.check(t.value) && t.value < 5);
}
#endif

/* ---- iteration ----------------------------------------------------------- */

TEST(range_for_visits_every_live_object_once) {
    opl::pool<int> p(opts(16));
    std::vector<opl::handle<int>> hs;
    for (int k = 0; k < 10; k++) hs.push_back(p.emplace(k).h);
    p.erase(hs[2]), p.erase(hs[7]);
    std::multiset<int> seen;
    for (int &v : p) seen.insert(v);
    CHECK(seen == std::multiset<int>({0, 1, 3, 4, 5, 6, 8, 9}));
    std::map<opl::handle<int>, int> pairs;
    for (auto [h, v] : p.items()) pairs[h] = v;
    CHECK(pairs.size() == 8);
    for (auto &[h, v] : pairs) CHECK(p.get(h) && *p.get(h) == v);
    const opl::pool<int> &cp = p;
    int sum = 0;
    for (const int &v : cp) sum += v;
    for (auto [h, v] : cp.items()) CHECK(cp.get(h) == &v);
    CHECK(sum == 36);
}

/* options have every field 0 unless given: C++20 designators name only what they set (g++'s
 * -Wmissing-field-initializers, an error here, says so otherwise), and with no constructor
 * from a C desc (from_desc is named) the braces mean options alone. */
TEST(options_name_only_what_they_set) {
    opl::options zero;
    CHECK(zero.capacity == 0 && zero.max_capacity == 0 && zero.flags == 0 && zero.salt == 0 &&
          zero.name == nullptr);
#if __cplusplus >= 202002L
    opl::pool<int> ships({.capacity = 256, .name = "ships"});
    REQUIRE(ships);
    CHECK(ships.capacity() == 256 && ships.stats().capacity == 256);
    opl::pool<int> grows({.capacity = 4, .max_capacity = 64});
    for (int k = 0; k < 10; k++) REQUIRE(grows.emplace(k).obj);
    CHECK(grows.capacity() > 4);
#endif
}

/* The iterators are forward iterators: default-constructible, with postfix ++, and copies
 * walk the same objects, so std algorithms that want more than one pass take a pool; items()
 * knows its size. C++20: the concepts hold, and views and ranges algorithms take pools. */
TEST(a_pool_is_a_forward_range_that_knows_its_size) {
    opl::pool<int> p(opts(16));
    for (int k = 0; k < 10; k++) REQUIRE(p.emplace(k).obj);
    opl::pool<int>::iterator none, also_none;
    CHECK(none == also_none);
    auto a = p.begin(), b = a;
    int first = *a++;
    CHECK(first == *b && *a == *std::next(b) && a != b);
    std::vector<int> once(p.begin(), p.end()), twice(p.begin(), p.end());
    CHECK(once == twice && once.size() == 10);
    CHECK(std::distance(p.begin(), p.end()) == 10);
    CHECK(*std::max_element(p.begin(), p.end()) == 9);
    CHECK(std::count_if(p.begin(), p.end(), [](int x) { return x % 2 != 0; }) == 5);
    const opl::pool<int> &cp = p;
    CHECK(std::distance(cp.begin(), cp.end()) == 10 &&
          *std::min_element(cp.begin(), cp.end()) == 0);
    CHECK(p.items().size() == 10 && cp.items().size() == 10 && !p.items().empty());
    auto i = p.items().begin();
    auto j = i++;
    CHECK((*j).h == p.live_handle(9) && (*i).h == p.live_handle(8));
#if defined(__cpp_lib_ranges)
    static_assert(std::forward_iterator<opl::pool<int>::iterator>);
    static_assert(std::forward_iterator<opl::pool<int>::const_iterator>);
    static_assert(std::ranges::forward_range<opl::pool<int>>);
    static_assert(std::ranges::sized_range<opl::pool<int>>);
    static_assert(std::ranges::forward_range<const opl::pool<int>>);
    static_assert(std::ranges::forward_range<decltype(p.items())>);
    static_assert(std::ranges::sized_range<decltype(cp.items())>);
    CHECK(std::ranges::size(p) == 10 && std::ranges::distance(p) == 10);
#endif
#if OPOOL_TEST_VIEWS
    auto odd = p | std::views::filter([](int x) { return x % 2 != 0; });
    CHECK(std::ranges::count_if(p, [](int x) { return x > 4; }) == 5);
    int sum = 0;
    for (int v : odd) sum += v;
    for (auto [h, v] : p.items() | std::views::take(3)) sum += p.get(h) == &v ? 100 : 0;
    CHECK(sum == 1 + 3 + 5 + 7 + 9 + 300);
#endif
}

static void count_einval(opool *, opool_status what, opool_handle h, void *user) {
    if (what == OPOOL_EINVAL && h.bits == 0) ++*static_cast<int *>(user);
}

/* OPOOL_NO_LIVE_LIST: emplace, get and erase as in any pool; range-for,
 * items() and retain report once each and visit nothing; a T with a
 * destructor is refused (the pool could not find its objects to end them). */
TEST(a_pool_without_a_live_list_refuses_its_loops_and_destructible_types) {
    int refused = 0;
    opool_desc d = opool_desc();
    d.capacity = 8;
    d.flags = OPOOL_NO_LIVE_LIST;
    d.report = count_einval;
    d.user = &refused;
    auto p = opl::pool<int>::from_desc(d);
    REQUIRE(p);
    auto a = p.emplace(1), b = p.emplace(2);
    CHECK(a.obj && b.obj && *p.get(a.h) == 1 && p.erase(a.h) && !p.get(a.h) && p.size() == 1);
    int visits = 0;
    for (int &v : p) visits += v;
    for (auto [h, v] : p.items()) visits += v + static_cast<int>(h.index());
    CHECK(p.retain([&](int &, opl::handle<int>) { return ++visits, false; }) == 0);
    CHECK(visits == 0 && refused == 3 && p.size() == 1 && *p.get(b.h) == 2);
    auto t = opl::pool<tracked>::from_desc(d);
    opl::options o = opts(8);
    o.flags = OPOOL_NO_LIVE_LIST;
    opl::pool<tracked> u(o);
    opl::pool<int> v(o);
    CHECK(!t && t.status() == OPOOL_EINVAL && !u && u.status() == OPOOL_EINVAL && v);
}

TEST(erasing_the_current_object_and_emplacing_inside_the_loop) {
    lives::reset();
    opl::pool<tracked> p(opts(64));
    for (int k = 0; k < 20; k++) (void)p.emplace(k);
    int visits = 0;
    for (auto [h, t] : p.items()) {
        visits++;
        CHECK(t.value < 20); /* never one emplaced inside */
        if (t.value % 3 == 0) {
            CHECK(p.erase(h));
        } else {
            CHECK(p.emplace(100 + t.value).obj != nullptr);
        }
    }
    CHECK(visits == 20 && p.size() == 20 - 7 + 13 && lives::ended == 7);
    for (tracked &t : p) { /* the plain form: erase through the object */
        if (t.value >= 100) CHECK(p.erase(&t));
    }
    CHECK(p.size() == 13 && lives::alive() == 13);
}

/* The position of h in the live list (the index the loop reads). */
static uint32_t position(const opool *p, opool_handle h) {
    for (uint32_t k = 0; k < opool_count(p); k++)
        if (opool_live_handle(p, k).bits == h.bits) return k;
    return UINT32_MAX;
}

/* Random histories, each op checked against a plain model (the live
 * handles and their values); every few ops a range-for loop that erases
 * the current object, emplaces, and erases others, under loop_check.h's
 * rules. Constructor failures are injected where exceptions exist. */
/* ---- pools with flags fixed at compile time -------------------------------- */

TEST(a_pool_with_fixed_flags_refuses_growth_and_a_live_list_its_flags_lack) {
    opl::pool<tracked, OPOOL_FIXED> grows(opts(4, 16));
    CHECK(!grows && grows.status() == OPOOL_EINVAL);
    opl::options o = opts(4);
    o.flags = OPOOL_NO_LIVE_LIST;
    opl::pool<int, OPOOL_FIXED> listless(o);
    CHECK(!listless && listless.status() == OPOOL_EINVAL);
    opl::pool<int, OPOOL_NO_LIVE_LIST> ids(o);
    CHECK(ids && ids.capacity() == 4);
    opool_desc d = opool_desc();
    d.capacity = 4;
    d.on_full = OPOOL_FULL_GROW;
    d.max_capacity = 8;
    auto from_desc = opl::pool<int, OPOOL_NO_LIVE_LIST>::from_desc(d);
    CHECK(!from_desc && from_desc.status() == OPOOL_EINVAL);
}

TEST(a_pool_with_fixed_flags_constructs_and_destroys_through_every_path) {
    lives::reset();
    {
        opl::pool<tracked, OPOOL_FIXED> p(opts(3));
        REQUIRE(p);
        auto a = p.emplace(1), b = p.emplace(2), c = p.emplace(3);
        CHECK(a.obj && b.obj && c.obj && !p.emplace(4).obj);
        CHECK(p.get(b.h) == b.obj && p.contains(b.h) && b.obj->check(2));
        CHECK(p.erase(b.h) && !p.erase(b.h) && p.get(b.h) == nullptr && !p.contains(b.h));
        CHECK(lives::alive() == 2);
        int sum = 0;
        for (tracked &t : p) sum += t.value;
        CHECK(sum == 4);
        CHECK(p.emplace(5).obj != nullptr);
        CHECK(lives::alive() == 3);
    }
    CHECK(lives::alive() == 0 && lives::made == 4);
}

/* A pool without a live list, its flags fixed, driven at random beside a
 * std::map: every handle it gives is new, every live one finds its value,
 * every erased one is refused. */
TEST(a_fixed_pool_without_a_live_list_keeps_the_model) {
    for (uint32_t seed = 1; seed <= 20; seed++) {
        rng r = {seed * 0x9E3779B1u};
        uint32_t cap = 1 + rng_below(&r, 64);
        opl::pool<uint64_t, OPOOL_NO_LIVE_LIST> p(opts(cap, 0, seed * 2 + 1));
        REQUIRE(p);
        std::map<uint64_t, uint64_t> model;
        std::vector<opl::handle<uint64_t>> live, gone;
        for (uint32_t step = 0; step < 4000; step++) {
            if (rng_chance(&r, 55)) {
                auto e = p.emplace(step);
                CHECK((e.obj != nullptr) == (model.size() < cap));
                if (!e.obj) continue;
                CHECK(model.count(e.h.raw().bits) == 0);
                model[e.h.raw().bits] = step;
                live.push_back(e.h);
            } else if (!live.empty()) {
                size_t k = rng_below(&r, (uint32_t)live.size());
                CHECK(p.erase(live[k]));
                model.erase(live[k].raw().bits);
                gone.push_back(live[k]);
                live[k] = live.back();
                live.pop_back();
            }
            if (!gone.empty()) CHECK(!p.erase(gone[rng_below(&r, (uint32_t)gone.size())]));
        }
        CHECK(p.size() == model.size());
        for (auto &[bits, v] : model) {
            const uint64_t *x = p.get(opl::handle<uint64_t>(opool_handle{bits}));
            CHECK(x != nullptr && *x == v);
        }
        for (auto h : gone) CHECK(p.get(h) == nullptr);
    }
}

TEST(random_histories_keep_the_model_and_the_iteration_promise) {
    lives::reset();
    loop_check lc = loop_check();
    uint64_t ops = 0, loops = 0;
    for (uint32_t seed = 1; seed <= 60; seed++) {
        rng r = {seed * 0x51ED27u};
        uint32_t cap = 1 + rng_below(&r, 40);
        bool grows = rng_chance(&r, 40);
        opl::pool<tracked> p(opts(cap, grows ? cap * 4 : 0, seed * 2 + 1));
        REQUIRE(p);
        uint32_t max = grows ? cap * 4 : cap;
        std::map<uint64_t, int> model; /* handle bits -> value */
        std::vector<opl::handle<tracked>> gone;
        int next = 0;
        auto check_all = [&]() {
            CHECK(p.size() == model.size() && lives::alive() == (long)model.size());
            for (auto &[bits, v] : model) {
                const tracked *t = p.get(opl::handle<tracked>(opool_handle{bits}));
                CHECK(t != nullptr && t->check(v));
            }
            for (auto h : gone) CHECK(p.get(h) == nullptr);
        };
        auto emplace = [&]() -> opl::handle<tracked> {
            bool fail = false;
#if OPOOL_HPP_EXCEPTIONS
            fail = rng_chance(&r, 10);
            if (fail) lives::throw_in = 1;
            try {
#endif
                auto e = p.emplace(next);
                if (model.size() >= max) {
                    CHECK(!e.obj && !e.h);
                    lives::throw_in = 0; /* no slot: no constructor ran */
                    return opl::handle<tracked>();
                }
                CHECK(!fail && e.obj != nullptr);
                CHECK(model.count(e.h.raw().bits) == 0);
                model[e.h.raw().bits] = next++;
                return e.h;
#if OPOOL_HPP_EXCEPTIONS
            } catch (const std::runtime_error &) {
                CHECK(fail && model.size() < max);
                lives::throw_in = 0;
                return opl::handle<tracked>();
            }
#endif
        };
        auto erase = [&](opl::handle<tracked> h) {
            CHECK(p.erase(h));
            model.erase(h.raw().bits);
            gone.push_back(h);
        };
        auto random_live = [&]() {
            auto it = model.begin();
            std::advance(it, rng_below(&r, (uint32_t)model.size()));
            return opl::handle<tracked>(opool_handle{it->first});
        };
        for (int step = 0; step < 300; step++, ops++) {
            uint32_t op = rng_below(&r, 100);
            if (op < 40) {
                (void)emplace();
            } else if (op < 70 && !model.empty()) {
                erase(random_live());
            } else if (op < 75 && !gone.empty()) {
                CHECK(!p.erase(gone[rng_below(&r, (uint32_t)gone.size())]));
            } else if (op < 77) {
                p.clear();
                for (auto &[bits, v] : model)
                    (void)v, gone.push_back(opl::handle<tracked>(opool_handle{bits}));
                model.clear();
            } else if (op < 82) {
                uint32_t mod = 2 + rng_below(&r, 3), expect = 0;
                for (auto &[bits, v] : model) expect += v % (int)mod == 0;
                uint32_t n = p.retain(
                    [mod](tracked &t, opl::handle<tracked>) { return t.value % (int)mod != 0; });
                CHECK(n == expect);
                for (auto it = model.begin(); it != model.end();)
                    if (it->second % (int)mod == 0) {
                        gone.push_back(opl::handle<tracked>(opool_handle{it->first}));
                        it = model.erase(it);
                    } else {
                        ++it;
                    }
            } else {
                loops++;
                CHECK(loop_begin(&lc, p.c_pool()));
                for (auto [h, t] : p.items()) {
                    uint32_t i = position(p.c_pool(), h.raw());
                    CHECK(loop_visit(&lc, p.c_pool(), i, h.raw()));
                    auto m = model.find(h.raw().bits);
                    CHECK(m != model.end() && t.check(m->second));
                    uint32_t what = rng_below(&r, 10);
                    if (what < 3) {
                        CHECK(loop_before_free(&lc, p.c_pool(), i, h.raw()));
                        erase(h);
                    } else if (what < 5) {
                        opl::handle<tracked> n = emplace();
                        if (n) CHECK(loop_after_alloc(&lc, p.c_pool(), i, n.raw()));
                    } else if (what < 6 && model.size() > 1) {
                        opl::handle<tracked> other = random_live();
                        CHECK(loop_before_free(&lc, p.c_pool(), i, other.raw()));
                        erase(other);
                    }
                }
                CHECK(loop_end(&lc));
                if (lc.failed) fprintf(stderr, "seed %u: %s\n", seed, lc.why);
            }
            check_all();
        }
    }
    loop_check_free(&lc);
    CHECK(lives::alive() == 0);
    printf("random histories: %llu ops, %llu range-for loops\n", (unsigned long long)ops,
           (unsigned long long)loops);
}

/* ---- side tables --------------------------------------------------------- */

TEST(a_side_value_lives_with_its_entry_and_hides_once_its_object_is_erased) {
    lives::reset();
    opl::pool<int> objects(opts(8));
    {
        opl::side_table<int, tracked> side(objects);
        REQUIRE(side);
        auto a = objects.emplace(1), b = objects.emplace(2);
        tracked *va = side.emplace(a.h, 10);
        REQUIRE(va != nullptr);
        CHECK(va->check(10) && side.get(a.h) == va && side.contains(a.h) && !side.get(b.h));
        CHECK(side.emplace(a.h, 11)->check(11) && lives::ended == 1); /* replaced */
        CHECK(side.erase(a.h) && lives::ended == 2 && !side.get(a.h) && !side.erase(a.h));
        (void)side.emplace(b.h, 20);
        objects.erase(b.h);
        CHECK(side.get(b.h) == nullptr && side.size() == 1 && lives::alive() == 1);
        auto c = objects.emplace(3); /* b's slot, a new life: b's value is replaced */
        CHECK(c.h.index() == b.h.index());
        CHECK(side.emplace(c.h, 30)->check(30) && lives::alive() == 1 && side.size() == 1);
        CHECK(side.emplace(opl::handle<int>(), 1) == nullptr);
        CHECK(side.emplace(b.h, 1) == nullptr && lives::made == 4);
        auto d = objects.emplace(4);
        (void)side.emplace(d.h, 40);
        objects.erase(d.h);
        CHECK(side.prune() == 1 && side.size() == 1 && lives::alive() == 1);
    }
    CHECK(lives::alive() == 0); /* the table's destruction ended the rest */
}

TEST(side_values_never_move_while_they_live) {
    lives::reset();
    opl::pool<int> objects(opts(4, 4096));
    opl::side_table<int, tracked> side(objects);
    std::vector<std::pair<opl::handle<int>, tracked *>> vs;
    for (int k = 0; k < 3000; k++) {
        auto e = objects.emplace(k);
        if (k % 3 == 0) vs.push_back({e.h, side.emplace(e.h, k)});
    }
    for (auto &[h, v] : vs) CHECK(side.get(h) == v && v->check((int)(h.index())));
    side.clear();
    CHECK(lives::alive() == 0 && side.size() == 0);
}

#if OPOOL_HPP_EXCEPTIONS
TEST(a_side_value_whose_constructor_throws_leaves_no_entry) {
    lives::reset();
    opl::pool<int> objects(opts(4));
    opl::side_table<int, tracked> side(objects);
    auto a = objects.emplace(1);
    (void)side.emplace(a.h, 1);
    lives::throw_in = 1;
    bool thrown = false;
    try {
        (void)side.emplace(a.h, 2); /* the old value ends first: a replacement */
    } catch (const std::runtime_error &) {
        thrown = true;
    }
    CHECK(thrown && side.get(a.h) == nullptr && side.size() == 0 && lives::alive() == 0);
    CHECK(side.emplace(a.h, 3)->check(3));
}
#endif

/* ---- save and load ------------------------------------------------------- */

struct point {
    float x, y;
    opl::handle<point> next;
};

TEST(a_pool_of_a_trivially_copyable_type_saves_and_loads) {
    const char *path = "hpp_points.opool";
    opl::options o = opts(16, 0, 0x40);
    opl::pool<point> p(o);
    auto a = p.emplace(point{1, 2, {}});
    auto b = p.emplace(point{3, 4, a.h});
    p.erase(p.emplace(point{5, 6, {}}).h);
    CHECK(p.save_file(path) == OPOOL_OK);
    opl::pool<point> q = opl::pool<point>::load_file(o, path);
    REQUIRE(q);
    CHECK(q.status() == OPOOL_OK && q.size() == 2);
    CHECK(q.get(b.h)->x == 3 && q.get(b.h)->next == a.h && q.get(a.h)->y == 2);
    CHECK(q.emplace(point{}).h == p.emplace(point{}).h); /* the same next handle */

    opl::pool<point> wrong = opl::pool<point>::load_file(opts(32), path);
    CHECK(!wrong && wrong.status() == OPOOL_EINVAL);
    CHECK(opool_last_load_error()->status == OPOOL_EINVAL);
    opl::pool<point> missing = opl::pool<point>::load_file(o, "no-such-file.opool");
    CHECK(!missing && missing.status() == OPOOL_ENOENT);
    remove(path);
}

/* A side table follows its pool object through a load into it (its values stay with their
 * handles) and, with rebind, through a move; emplace_at re-creates an object at its handle. */
TEST(a_side_table_follows_its_pool_through_a_load_and_a_move) {
    const char *path = "hpp_side_reload.opool";
    opl::pool<point> p(opts(16));
    opl::side_table<point, std::string> names(p);
    auto a = p.emplace(point{1, 2, {}}), b = p.emplace(point{3, 4, {}});
    REQUIRE(a.obj && b.obj && names.emplace(a.h, "first") && names.emplace(b.h, "second"));
    REQUIRE(p.save_file(path) == OPOOL_OK);
    CHECK(p.erase(a.h) && names.get(a.h) == nullptr);
    p = opl::pool<point>::load_file(opts(16), path); /* the old C pool is gone */
    REQUIRE(p);
    CHECK(names.get(a.h) && *names.get(a.h) == "first" && *names.get(b.h) == "second");
    opl::pool<point> moved = std::move(p);
    names.rebind(moved);
    CHECK(*names.get(b.h) == "second" && names.emplace(b.h, "still second"));
    CHECK(moved.erase(b.h) && names.get(b.h) == nullptr && names.prune() == 1);
    CHECK(moved.erase(a.h));
    point *again = moved.emplace_at(a.h, point{7, 8, {}});
    CHECK(again && again->x == 7 && moved.get(a.h) == again && *names.get(a.h) == "first");
    CHECK(moved.emplace_at(a.h, point{}) == nullptr);                  /* live */
    CHECK(moved.emplace_at(opl::handle<point>(), point{}) == nullptr); /* null */
    remove(path);
}

struct bytes {
    std::vector<unsigned char> v;
    size_t at = 0;
};
static size_t write_bytes(void *ctx, const void *data, size_t n) {
    auto *b = static_cast<bytes *>(ctx);
    b->v.insert(b->v.end(), (const unsigned char *)data, (const unsigned char *)data + n);
    return n;
}
static size_t read_bytes(void *ctx, void *data, size_t n) {
    auto *b = static_cast<bytes *>(ctx);
    size_t k = std::min(n, b->v.size() - b->at);
    if (k != 0) std::memcpy(data, b->v.data() + b->at, k);
    b->at += k;
    return k;
}

TEST(draw_svg_draws_the_c_pools_picture) {
    opl::pool<point> p(opts(8));
    for (int k = 0; k < 5; k++) (void)p.emplace(point{(float)k, 0, {}});
    bytes pic, raw;
    CHECK(p.draw_svg(write_bytes, &pic) == OPOOL_OK);
    CHECK(opool_draw_svg(p.c_pool(), write_bytes, &raw) == OPOOL_OK);
    CHECK(!pic.v.empty() && pic.v == raw.v);
    opl::pool<point> none = opl::pool<point>::load(opts(8), read_bytes, &raw); /* not an image */
    CHECK(!none && none.draw_svg(write_bytes, &pic) == OPOOL_EINVAL);
}

TEST(a_truncated_or_corrupted_image_loads_no_pool) {
    opl::options o = opts(8);
    opl::pool<point> p(o);
    for (int k = 0; k < 5; k++) (void)p.emplace(point{(float)k, 0, {}});
    bytes img;
    REQUIRE(p.save(write_bytes, &img) == OPOOL_OK);
    bytes whole = img;
    CHECK(opl::pool<point>::load(o, read_bytes, &whole).size() == 5);
    for (size_t cut = 0; cut < img.v.size(); cut += 7) {
        bytes part;
        part.v.assign(img.v.begin(), img.v.begin() + (long)cut);
        opl::pool<point> q = opl::pool<point>::load(o, read_bytes, &part);
        CHECK(!q && q.status() == OPOOL_ECORRUPT);
    }
    img.v[img.v.size() / 2] ^= 0x40;
    opl::pool<point> r = opl::pool<point>::load(o, read_bytes, &img);
    CHECK(!r && r.status() == OPOOL_ECORRUPT);
}

/* ---- the concurrent pool (one thread here; tests/cpp/test_hpp_mt.cpp races) */

TEST(an_mt_pool_constructs_and_destroys_through_every_path) {
    lives::reset();
    {
        opl::mt_pool<tracked> p(opts(8));
        REQUIRE(p);
        auto a = p.emplace(1);
        CHECK(a.obj->check(1) && p.get(a.h) == a.obj && p.contains(a.h) && p.size() == 1);
        CHECK(p.erase(a.h) && lives::ended == 1 && !p.erase(a.h) && lives::ended == 1);
        opl::mt_cache<tracked> c(p, 4);
        REQUIRE(c);
        auto b = c.emplace(2);
        CHECK(b.obj->check(2) && c.erase(b.h) && lives::ended == 2 && !c.erase(b.h));
        auto d = c.emplace(3); /* through the cache, erased through the pool */
        CHECK(d.obj->check(3) && p.erase(d.h) && lives::ended == 3);
        (void)c.emplace(4), (void)p.emplace(5);
        c.flush();
        CHECK(p.size() == 2 && p.capacity() == 8 && p.stats().caches == 1);
    }
    CHECK(lives::alive() == 0 && lives::made == 5);
    opl::mt_pool<tracked> bad(opts(0));
    CHECK(!bad && bad.status() == OPOOL_EINVAL && !bad.emplace(1).obj);
    opl::mt_pool<tracked> ok(opts(4));
    opl::mt_cache<tracked> huge(ok, OPOOL_MT_CACHE_MAX + 1), orphan(bad);
    CHECK(!huge && huge.status() == OPOOL_EINVAL && !huge.emplace(1).obj);
    CHECK(!orphan && orphan.status() == OPOOL_EINVAL && !orphan.erase(opl::handle<tracked>()));
    CHECK(lives::made == 5);
}

/* max_capacity above capacity: the concurrent pool grows, and its objects
 * stay where they were built. */
TEST(an_mt_pool_with_max_capacity_grows_and_never_moves_an_object) {
    lives::reset();
    {
        opl::mt_pool<tracked> p(opts(2, 100));
        if (!OPOOL_TEST_MT_GROWS) { /* no reservation here: refused, as documented */
            CHECK(!p && p.status() == OPOOL_ENOMEM);
            return;
        }
        REQUIRE(p);
        opl::emplaced<tracked> e[100];
        for (int k = 0; k < 100; k++) {
            e[k] = p.emplace(k);
            REQUIRE(e[k].obj);
        }
        CHECK(!p.emplace(100).obj && p.stats().failed_allocs == 1);
        CHECK(p.capacity() == 100 && p.stats().grows == 2 && p.stats().max_capacity == 100);
        for (int k = 0; k < 100; k++) CHECK(p.get(e[k].h) == e[k].obj && e[k].obj->check(k));
        for (int k = 0; k < 50; k++) CHECK(p.erase(e[k].h));
        CHECK(lives::ended == 50 && lives::alive() == 50);
    }
    CHECK(lives::alive() == 0 && lives::made == 100);
}

TEST(emplace_wait_on_a_full_mt_pool_times_out_with_nothing_built) {
    lives::reset();
    opl::mt_pool<tracked> p(opts(2));
    opl::mt_cache<tracked> c(p, 2);
    auto a = p.emplace(1), b = p.emplace(2);
    auto e = p.emplace_wait(std::chrono::milliseconds(5), 3);
    auto f = c.emplace_wait(std::chrono::microseconds(100), 4);
    auto g = p.emplace_wait(std::chrono::seconds(-1), 5);
    CHECK(!e.obj && !f.obj && !g.obj && lives::made == 2 && p.stats().failed_allocs == 3);
    p.erase(a.h);
    auto h = p.emplace_wait(std::chrono::hours::max(), 6); /* a slot is free: no wait */
    CHECK(h.obj && h.obj->check(6) && b.obj->check(2));
}

#if OPOOL_HPP_EXCEPTIONS
TEST(a_throwing_constructor_in_an_mt_pool_frees_without_destroying) {
    lives::reset();
    {
        opl::mt_pool<tracked> p(opts(4));
        opl::mt_cache<tracked> c(p, 4);
        for (int path = 0; path < 2; path++) {
            lives::throw_in = 1;
            bool thrown = false;
            try {
                if (path == 0)
                    (void)p.emplace(1);
                else
                    (void)c.emplace(1);
            } catch (const std::runtime_error &) {
                thrown = true;
            }
            CHECK(thrown && p.size() == 0 && lives::made == 0 && lives::ended == 0);
        }
        CHECK(c.emplace(2).obj && p.emplace(3).obj && lives::alive() == 2);
    }
    CHECK(lives::alive() == 0);
}
#endif

/* ---- allocator<T> -------------------------------------------------------- */

struct heap_findings {
    int stale = 0, foreign = 0;
};
static void note_heap_finding(opool_heap *, opool_status what, const void *, void *user) {
    heap_findings *f = static_cast<heap_findings *>(user);
    if (what == OPOOL_ESTALE) f->stale++;
    if (what == OPOOL_EINVAL) f->foreign++;
}

/* std containers on a heap through opl::allocator: nodes and arrays come from it (rebound to
 * the containers' own types), go back to it, and the allocator follows copies and swaps. */
TEST(std_containers_live_on_a_heap_through_opl_allocator) {
    opool_heap *h = nullptr, *other = nullptr;
    REQUIRE(opool_heap_create(&h, nullptr) == OPOOL_OK && opool_heap_create(&other, nullptr) == 0);
    {
        using str_alloc = opl::allocator<char>;
        using string = std::basic_string<char, std::char_traits<char>, str_alloc>;
        opl::allocator<int> a(h);
        std::vector<int, opl::allocator<int>> v(a);
        for (int k = 0; k < 1000; k++) v.push_back(k);
        std::map<int, string, std::less<int>, opl::allocator<std::pair<const int, string>>> m(a);
        for (int k = 0; k < 100; k++)
            m.emplace(k, string("a string too long for the small buffer", str_alloc(h)));
        std::unordered_map<int, int, std::hash<int>, std::equal_to<int>,
                           opl::allocator<std::pair<const int, int>>>
            u(16, std::hash<int>(), std::equal_to<int>(), a);
        for (int k = 0; k < 100; k++) u[k] = k;
        CHECK(v[999] == 999 && m.at(42).size() == 38 && u.at(77) == 77);
        CHECK(heap_live(h) >= 1 + 100 + 100 + 100 && heap_live(other) == 0);
        /* equal when on one heap, whatever their type; the copy of a vector takes its allocator */
        CHECK(opl::allocator<int>(h) == opl::allocator<long>(h) && a != opl::allocator<int>(other));
        std::vector<int, opl::allocator<int>> w{opl::allocator<int>(other)};
        w.push_back(1);
        CHECK(heap_live(other) == 1);
        w = v; /* propagate_on_container_copy_assignment: w now allocates from h */
        CHECK(w.get_allocator().c_heap() == h && heap_live(other) == 0 && w[500] == 500);
        std::vector<int, opl::allocator<int>> x{opl::allocator<int>(other)};
        x.push_back(7);
        x.swap(w); /* propagate_on_container_swap */
        CHECK(x.get_allocator().c_heap() == h && w.get_allocator().c_heap() == other);
    }
    CHECK(heap_live(h) == 0 && heap_live(other) == 0);
    opool_heap_destroy(h);
    opool_heap_destroy(other);
}

struct alignas(64) wide {
    char bytes[64];
};
struct alignas(16) sixteen {
    char bytes[16];
};

/* A type aligned beyond the heap's blocks goes to the aligned operator new; a free the heap
 * rejects is reported to its report callback (and on stderr); a heap whose blocks cannot give
 * a type its alignment refuses it rather than hand out a misaligned block. */
TEST(opl_allocator_aligns_reports_bad_frees_and_fails_loudly) {
    heap_findings found;
    opool_heap_desc d = opool_heap_desc();
    d.report = note_heap_finding;
    d.user = &found;
    opool_heap *h = nullptr;
    REQUIRE(opool_heap_create(&h, &d) == OPOOL_OK);
    opl::allocator<wide> wa(h);
    wide *w = wa.allocate(3);
    CHECK(reinterpret_cast<uintptr_t>(w) % 64 == 0 && heap_live(h) == 0);
    wa.deallocate(w, 3);
    opl::allocator<int> ia(h);
    int *p = ia.allocate(10);
    CHECK(heap_live(h) == 1);
    ia.deallocate(p, 10);
    ia.deallocate(p, 10); /* freed twice */
    alignas(16) static int foreign[16];
    ia.deallocate(foreign, 16); /* not the heap's */
    opool_heap_stats s;
    opool_heap_get_stats(h, &s);
    CHECK(found.stale == 1 && found.foreign == 1 && s.rejected == 2 && heap_live(h) == 0);
    opool_heap_destroy(h);
#if OPOOL_HPP_EXCEPTIONS
    static const uint32_t eights[] = {24}; /* blocks aligned to 8 only */
    opool_heap_desc e = opool_heap_desc();
    e.class_sizes = eights;
    e.class_count = 1;
    e.flags = OPOOL_HEAP_NO_FALLBACK;
    REQUIRE(opool_heap_create(&h, &e) == OPOOL_OK);
    opl::allocator<sixteen> sa(h);
    int refused = 0, given = 0;
    for (int k = 0; k < 8; k++) {
        try {
            sixteen *q = sa.allocate(1);
            CHECK(reinterpret_cast<uintptr_t>(q) % 16 == 0);
            given++;
        } catch (const std::bad_alloc &) {
            refused++;
        }
    }
    CHECK(refused > 0 && refused + given == 8);
    bool thrown = false;
    try {
        (void)opl::allocator<char>(h).allocate(25); /* above the largest class, no fallback */
    } catch (const std::bad_alloc &) {
        thrown = true;
    }
    CHECK(thrown);
    opool_heap_destroy(h);
#endif
}

/* ---- heap_resource ------------------------------------------------------- */

#if OPOOL_HPP_PMR
TEST(pmr_containers_live_on_a_heap_resource) {
    opl::heap_resource r;
    REQUIRE(r && r.status() == OPOOL_OK);
    {
        std::pmr::vector<std::pmr::string> names(&r);
        for (int k = 0; k < 200; k++)
            names.emplace_back("a name long enough to leave the small-string buffer " +
                               std::to_string(k));
        opool_heap_stats s;
        opool_heap_get_stats(r.c_heap(), &s);
        uint64_t live = 0;
        for (uint32_t k = 0; k < s.class_count; k++) live += s.classes[k].live;
        CHECK(live >= 200);
        CHECK(names[150] == "a name long enough to leave the small-string buffer 150");
        std::pmr::unordered_map<int, std::pmr::string> m(&r);
        for (int k = 0; k < 100; k++) m[k] = names[(size_t)k];
        CHECK(m.size() == 100 && m[42] == names[42]);
    }
    opool_heap_stats s;
    opool_heap_get_stats(r.c_heap(), &s);
    uint64_t live = 0;
    for (uint32_t k = 0; k < s.class_count; k++) live += s.classes[k].live;
    CHECK(live == 0 && s.large_live == 0 && s.rejected == 0);
    void *wide = r.allocate(100, 64); /* beyond the heap's alignment: upstream */
    CHECK(((uintptr_t)wide & 63) == 0);
    r.deallocate(wide, 100, 64);
    void *sixteen = r.allocate(24, 16);
    CHECK(((uintptr_t)sixteen & 15) == 0 && opool_heap_usable_size(r.c_heap(), sixteen) >= 24);
    r.deallocate(sixteen, 24, 16);
    CHECK(r.is_equal(r) && !r.is_equal(*std::pmr::new_delete_resource()));
}

TEST(a_heap_resource_whose_classes_are_not_16_aligned_sends_16_aligned_requests_upstream) {
    static const uint32_t classes[] = {24, 40};
    opool_heap_desc d = opool_heap_desc();
    d.class_sizes = classes;
    d.class_count = 2;
    opl::heap_resource r(&d);
    REQUIRE(r);
    void *p = r.allocate(24, 16), *q = r.allocate(24, 8);
    CHECK(((uintptr_t)p & 15) == 0 && opool_heap_usable_size(r.c_heap(), q) == 24);
    r.deallocate(p, 24, 16), r.deallocate(q, 24, 8);
    opool_heap_stats s;
    opool_heap_get_stats(r.c_heap(), &s);
    CHECK(s.rejected == 0 && s.classes[0].allocs == 1);
}

static int heap_reports = 0;
static void count_heap_reports(opool_heap *, opool_status, const void *, void *) { heap_reports++; }

static uint64_t live_blocks(const opl::heap_resource &r) { return heap_live(r.c_heap()); }

/* An arena resource: containers filled, the resource released (every block at once) and
 * filled again, then dropped with blocks in it: no leak report. */
TEST(an_arena_heap_resource_is_released_whole_and_dropped_without_a_leak_report) {
    opool_heap_desc d = opool_heap_desc();
    d.flags = OPOOL_HEAP_ARENA;
    d.report = count_heap_reports;
    heap_reports = 0;
    for (int how = 0; how < 2; how++) {
        opl::heap_resource plain_arena(opl::arena);
        opl::heap_resource r(&d);
        REQUIRE(r && plain_arena);
        for (int round = 0; round < 3; round++) {
            auto *v = new std::pmr::vector<std::pmr::string>(&r);
            for (int k = 0; k < 300; k++)
                v->emplace_back("a string long enough to leave the small buffer " +
                                std::to_string(k));
            CHECK((*v)[299] == "a string long enough to leave the small buffer 299");
            CHECK(live_blocks(r) >= 300);              /* the strings, the vector */
            ::operator delete(static_cast<void *>(v)); /* the arena's way: no destructor */
            if (how == 0) r.release();
            CHECK((live_blocks(r) == 0) == (how == 0));
            void *p = plain_arena.allocate(100, 8);
            CHECK(opool_heap_usable_size(plain_arena.c_heap(), p) == 112);
        }
    }
    CHECK(heap_reports == 0); /* neither release nor the arena's destroy reported anything */
}

#if OPOOL_HPP_EXCEPTIONS
static void quiet_heap(opool_heap *, opool_status, const void *, void *) {}

TEST(a_full_fixed_heap_throws_bad_alloc) {
    opool_heap_desc d = opool_heap_desc();
    d.flags = OPOOL_HEAP_FIXED;
    d.report = quiet_heap;
    opl::heap_resource r(&d);
    REQUIRE(r);
    std::vector<void *> got;
    bool thrown = false;
    try {
        for (int k = 0; k < 100000; k++) got.push_back(r.allocate(1024, 8));
    } catch (const std::bad_alloc &) {
        thrown = true;
    }
    CHECK(thrown && !got.empty() && got.size() < 100000);
    for (void *p : got) r.deallocate(p, 1024, 8);
}
#endif
#endif

int main() {
    RUN(a_handle_is_8_bytes_null_by_default_and_ordered);
    RUN(handles_key_std_containers);
    RUN(a_salt_a_live_pool_has_is_refused);
    RUN(erasing_a_pointer_to_no_live_object_is_rejected_and_counted);
    RUN(compact_handles_expand_to_the_live_handle_only);
    RUN(a_pool_that_failed_to_be_created_says_why_and_refuses_everything);
    RUN(a_pool_from_a_whole_desc_takes_its_report_and_allocator_and_refuses_hooks);
    RUN(emplace_constructs_in_place_and_erase_destroys);
    RUN(emplace_on_a_full_pool_constructs_nothing);
    RUN(erase_of_null_stale_and_foreign_handles_is_false_and_destroys_nothing);
    RUN(clear_retain_and_the_destructor_end_every_object_once);
    RUN(retain_lets_keep_erase_its_own_object);
    RUN(moving_a_pool_moves_its_objects_and_assignment_ends_the_old_ones);
    RUN(eviction_runs_the_victims_destructor);
    RUN(an_eviction_that_names_no_victim_fails_the_emplace);
    RUN(a_growing_pool_keeps_objects_in_place_and_shrink_ends_none);
#if OPOOL_HPP_EXCEPTIONS
    RUN(a_throwing_constructor_leaves_no_live_slot_and_rethrows);
    RUN(a_keep_that_throws_leaves_the_pool_consistent);
#endif
    RUN(range_for_visits_every_live_object_once);
    RUN(a_pool_is_a_forward_range_that_knows_its_size);
    RUN(options_name_only_what_they_set);
    RUN(a_pool_without_a_live_list_refuses_its_loops_and_destructible_types);
    RUN(erasing_the_current_object_and_emplacing_inside_the_loop);
    RUN(random_histories_keep_the_model_and_the_iteration_promise);
    RUN(a_pool_with_fixed_flags_refuses_growth_and_a_live_list_its_flags_lack);
    RUN(a_pool_with_fixed_flags_constructs_and_destroys_through_every_path);
    RUN(a_fixed_pool_without_a_live_list_keeps_the_model);
    RUN(a_side_value_lives_with_its_entry_and_hides_once_its_object_is_erased);
    RUN(side_values_never_move_while_they_live);
#if OPOOL_HPP_EXCEPTIONS
    RUN(a_side_value_whose_constructor_throws_leaves_no_entry);
#endif
    RUN(a_pool_of_a_trivially_copyable_type_saves_and_loads);
    RUN(a_side_table_follows_its_pool_through_a_load_and_a_move);
    RUN(draw_svg_draws_the_c_pools_picture);
    RUN(a_truncated_or_corrupted_image_loads_no_pool);
    RUN(an_mt_pool_constructs_and_destroys_through_every_path);
    RUN(an_mt_pool_with_max_capacity_grows_and_never_moves_an_object);
    RUN(emplace_wait_on_a_full_mt_pool_times_out_with_nothing_built);
#if OPOOL_HPP_EXCEPTIONS
    RUN(a_throwing_constructor_in_an_mt_pool_frees_without_destroying);
#endif
    RUN(std_containers_live_on_a_heap_through_opl_allocator);
    RUN(opl_allocator_aligns_reports_bad_frees_and_fails_loudly);
#if OPOOL_HPP_PMR
    RUN(pmr_containers_live_on_a_heap_resource);
    RUN(a_heap_resource_whose_classes_are_not_16_aligned_sends_16_aligned_requests_upstream);
    RUN(an_arena_heap_resource_is_released_whole_and_dropped_without_a_leak_report);
#if OPOOL_HPP_EXCEPTIONS
    RUN(a_full_fixed_heap_throws_bad_alloc);
#endif
#endif
    return test_summary();
}
