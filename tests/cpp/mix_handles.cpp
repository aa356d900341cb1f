/*
 * mix_handles.cpp -- must NOT compile: every line marked EXPECT-ERROR hands
 * an opl::handle of one type, or a bare opool_handle, to a place that wants
 * another type's handle. tests/typed/expect_compile.cmake judges it (an
 * error on every marked line and nowhere else); with -DOPL_CONTROL each
 * marked line takes the right handle and the file must compile with -Werror.
 */
#include "opool.hpp"

#ifdef OPL_CONTROL
#define PICK(wrong, right) right
#else
#define PICK(wrong, right) wrong
#endif

struct ship {
    int hull;
};
struct bullet {
    float x, y;
};

int main() {
    opl::options o = opl::options();
    o.capacity = 8;
    opl::pool<ship> ships(o);
    opl::pool<bullet> bullets(o);
    opl::handle<ship> s = ships.emplace(ship{3}).h;
    opl::handle<bullet> b = bullets.emplace(bullet{0, 0}).h;
    opool_handle raw = b.raw();
    int bad = 0;

    bad += bullets.get(PICK(s, b)) != nullptr;               /* EXPECT-ERROR */
    bad += bullets.contains(PICK(s, b));                     /* EXPECT-ERROR */
    opl::handle<bullet> copy = PICK(s, b);                   /* EXPECT-ERROR */
    bad += PICK(s, b) == copy;                               /* EXPECT-ERROR */
    bad += PICK(s, b) < copy;                                /* EXPECT-ERROR */
    opl::handle<bullet> from_raw = PICK(raw, b);             /* EXPECT-ERROR */
    bad += bullets.erase(PICK(raw, from_raw));               /* EXPECT-ERROR */
    opl::side_table<ship, int> hits(PICK(bullets, ships));   /* EXPECT-ERROR */
    bad += hits.get(PICK(b, s)) != nullptr;                  /* EXPECT-ERROR */
    opl::handle32<ship> c = ships.compact(PICK(b, s));       /* EXPECT-ERROR */
    bad += bullets.expand(PICK(c, bullets.compact(b))) == b; /* EXPECT-ERROR */
    (void)raw, (void)c;
    return bad;
}
