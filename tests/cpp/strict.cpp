/*
 * strict.cpp -- every template of include/opool.hpp instantiated, compiled
 * (not run) under the strict warnings a user may have on, as errors
 * (tests/cpp/cpp.cmake: hpp_strict, with -Wold-style-cast and -Wshadow
 * among them). A header a user includes must never be the reason their
 * build fails.
 */
#include "opool.hpp"
#include "opool.hpp" /* twice: the include guard */

#include <string>
#include <vector>

struct ship {
    std::string name;
    int hull;
    ship(const char *n, int h) : name(n), hull(h) {}
};
struct point {
    float x, y;
};

namespace opl {
template <> struct serializer<ship> {
    static bool save(writer &w, const ship &s) { return w.value(s.name) && w.value(s.hull); }
    static bool load(reader &r, ship *mem) {
        std::string name;
        int hull;
        if (!r.value(name) || !r.value(hull)) return false;
        ::new (mem) ship(name.c_str(), hull);
        return true;
    }
};
} // namespace opl

static opl::handle<ship> first(opl::pool<ship> &p, void *) { return p.live_handle(0); }

int main() {
    opl::options o = opl::options();
    o.capacity = 8;
    opl::pool<ship> ships(o), evicting(o, first, nullptr);
    auto e = ships.emplace("a", 3);
    int n = ships && evicting && ships.status() == OPOOL_OK ? 1 : 0;
    n += ships.get(e.h) != nullptr && ships.contains(e.h) && !ships.empty();
    const opl::pool<ship> &c = ships;
    n += c.get(e.h) != nullptr;
    for (ship &s : ships) n += s.hull;
    for (const ship &s : c) n += s.hull;
    for (auto [h, s] : ships.items()) n += static_cast<int>(h.index()) + s.hull;
    for (auto [h, s] : c.items()) n += static_cast<int>(h.generation()) + s.hull;
    n += static_cast<int>(ships.retain([](ship &s, opl::handle<ship>) { return s.hull > 0; }));
    n += static_cast<int>(ships.size() + ships.capacity() + ships.stats().count + ships.shrink());
    n += ships.handle_of(*e.obj) == e.h && ships.expand(ships.compact(e.h)) == e.h;
    n += std::hash<opl::handle<ship>>()(e.h) != 0 && std::hash<opl::handle32<ship>>()({}) == 0;
    ships.sort();
    n += ships.erase(e.obj);
    n += ships.erase(e.h);
    ships.clear();

    opl::pool<point> points(o);
    n += points.save_file("strict.opool") == OPOOL_OK;
    opl::pool<point> loaded = opl::pool<point>::load_file(o, "strict.opool");
    n += loaded.c_pool() != nullptr;

    n += ships.save_file("strict.opool") == OPOOL_OK;
    opl::pool<ship> ships2 = opl::pool<ship>::load_file(o, "strict.opool");
    n += ships2.size() != 0;
    opl::pool<std::vector<std::vector<std::string>>> nested(o);
    n += nested.save_file("strict.opool") == OPOOL_OK;
    unsigned char rec[16] = {0};
    opl::reader rd(rec, sizeof rec);
    std::vector<uint16_t> shorts;
    bool flag = false;
    n += rd.value(shorts) && rd.value(flag) && rd.bytes(rec, 1) && rd.left() == 0 && rd.ok();

    opl::side_table<ship, std::string> names(ships);
    n += opl::save_world_file("strict.opool", ships, points, names) == OPOOL_OK;
    n += opl::load_world_file("strict.opool", ships, points, names) == OPOOL_OK;
    auto f = ships.emplace("b", 1);
    n += names.emplace(f.h, "b") != nullptr && names.get(f.h) != nullptr;
    n += names.contains(f.h) && names.erase(f.h);
    n += static_cast<int>(names.prune() + names.size());
    names.clear();

    opl::mt_pool<ship> shared(o);
    opl::mt_cache<ship> cache(shared, 8);
    auto g = shared.emplace("c", 2), h = cache.emplace("d", 4);
    auto w = shared.emplace_wait(std::chrono::milliseconds(1), "e", 5);
    auto x = cache.emplace_wait(std::chrono::nanoseconds(1), "f", 6);
    n += shared.erase(g.h) + cache.erase(h.h) + shared.erase(w.h) + cache.erase(x.h);
    n += shared.get(g.h) == nullptr && !shared.contains(g.h);
    n += static_cast<int>(shared.size() + shared.capacity() + shared.stats().count);
    cache.flush();

    opool_heap *heap = nullptr;
    if (opool_heap_create(&heap, nullptr) == OPOOL_OK) {
        opl::allocator<double> da(heap);
        double *d = da.allocate(4);
        d[3] = 1.5;
        n += static_cast<int>(d[3]) + (opl::allocator<char>(da) == da);
        da.deallocate(d, 4);
        opool_heap_destroy(heap);
    }

#if OPOOL_HPP_PMR
    opl::heap_resource r;
    std::pmr::string s("a string long enough to need a block of its own", &r);
    n += static_cast<int>(s.size());
#endif
    return n == 0;
}
