/*
 * debugger_prog.cpp -- the C++ side of the debugger tests (tests/debugger/run.sh):
 * an opl::pool of a class with three objects, one erased, and handles of it,
 * in globals; the stop in debugger_stop().
 */
#include "opool.hpp"

#include <cstdio>

struct crew {
    int id;
    double pay;
    crew(int i, double p) : id(i), pay(p) {}
};

opl::pool<crew> *crews;
opl::handle<crew> crew_h[3];
opl::handle<crew> crew_null;

#if defined(__GNUC__) || defined(__clang__)
__attribute__((noinline))
#endif
void debugger_stop() {
    std::puts("stopped");
}

int main() {
    opl::options o{};
    o.capacity = 4;
    o.name = "crews";
    opl::pool<crew> pool(o);
    crews = &pool;
    for (int i = 0; i < 3; i++) crew_h[i] = pool.emplace(200 + i, 0.5 * i).h;
    if (!pool.erase(crew_h[1])) return 1;
    debugger_stop();
    return 0;
}
