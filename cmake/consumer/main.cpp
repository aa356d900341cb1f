// Install check, C++: include/opool.hpp from the installed headers, with the
// installed library: objects with destructors, range-for, typed handles.
#include <opool.hpp>

#include <cstdio>
#include <string>
#include <unordered_set>

struct ship {
    std::string name;
    explicit ship(int k) : name("ship number " + std::to_string(k)) {}
};

int main() {
    opl::options o = opl::options();
    o.capacity = 16;
    opl::pool<ship> ships(o);
    if (!ships) return 1;
    std::unordered_set<opl::handle<ship>> all;
    for (int k = 0; k < 10; k++) all.insert(ships.emplace(k).h);
    int visits = 0;
    for (auto [h, s] : ships.items()) {
        visits++;
        if (s.name.size() % 2 == 0 && !ships.erase(h)) return 2;
    }
    if (visits != 10 || all.size() != 10) return 3;
    std::printf("opool %d: %u ships after the loop\n", OPOOL_VERSION, ships.size());
    return 0;
}
