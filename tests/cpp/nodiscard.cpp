/*
 * nodiscard.cpp -- must NOT compile under -Werror=unused-result: every line
 * marked EXPECT-ERROR drops what an emplace, a get, from_desc or
 * load_world_file returns (a full pool's emplace fails; the result is how
 * the caller learns it).
 * tests/typed/expect_compile.cmake judges it; with -DOPL_CONTROL each marked
 * line drops it on purpose, with a void cast, and the file must compile with
 * -Werror.
 */
#include "opool.hpp"

#ifdef OPL_CONTROL
#define DROP(x) static_cast<void>(x)
#else
#define DROP(x) x
#endif

struct ship {
    int hull;
};

int main() {
    opl::options o;
    o.capacity = 8;
    opl::pool<ship> ships(o);
    const opl::pool<ship> &view = ships;
    opl::side_table<ship, int> hits(ships);
    opl::mt_pool<ship> shared(o);
    opl::handle<ship> h;
    DROP(ships.emplace(ship{1}));                   /* EXPECT-ERROR */
    DROP(ships.get(h));                             /* EXPECT-ERROR */
    DROP(view.get(h));                              /* EXPECT-ERROR */
    DROP(hits.emplace(h, 1));                       /* EXPECT-ERROR */
    DROP(hits.get(h));                              /* EXPECT-ERROR */
    DROP(shared.emplace(ship{2}));                  /* EXPECT-ERROR */
    DROP(opl::pool<ship>::from_desc(opool_desc())); /* EXPECT-ERROR */
    DROP(opl::load_world_file("x.opool", ships));   /* EXPECT-ERROR */
    return 0;
}
