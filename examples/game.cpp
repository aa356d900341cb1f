/*
 * game.cpp -- a small game loop in C++17 on opool.hpp: ships and bullets as
 * classes, handles stored inside objects, spawning and destroying while
 * iterating, a side table of names, and a save of the bullets.
 *
 * Ships are a class with a std::string and a std::vector (their destructors
 * run when a ship is erased, or when the pool goes). Each ship aims at
 * another ship, by handle: when the target is destroyed, the handle goes
 * stale and get() says so, and the ship picks a new one. Every frame each
 * ship may fire a bullet (spawned while the ships are iterated) and every
 * bullet moves; a bullet that reaches its target damages it, and a ship
 * whose hull is gone is erased inside the loop over ships. Bullets are
 * trivially copyable: the bullet pool is saved to a file at frame 20 and
 * loaded back, and the loaded pool must equal the live one.
 *
 * Deterministic (a fixed-seed generator); checks its own tallies (every
 * ship built was destroyed once, handles of destroyed ships are rejected,
 * the loaded bullets are the saved ones) and exits 1 on any mismatch.
 *
 *   c++ -std=c++17 -Iinclude examples/game.cpp -Lbuild -lopool -o game
 */
#include "opool.hpp"

#include <cstdio>
#include <string>
#include <vector>

static long ships_built, ships_destroyed;
static uint32_t seed = 12345;
static uint32_t roll(uint32_t n) { /* xorshift32 */
    seed ^= seed << 13, seed ^= seed >> 17, seed ^= seed << 5;
    return seed % n;
}

class ship {
  public:
    ship(std::string name, float x) : name_(std::move(name)), x_(x) { ships_built++; }
    ship(const ship &) = delete;
    ship &operator=(const ship &) = delete;
    ~ship() { ships_destroyed++; }

    const std::string &name() const { return name_; }
    float x() const { return x_; }
    int hull = 3;
    opl::handle<ship> target; /* a handle inside an object: goes stale with its ship */
    std::vector<int> hits_taken_at;

  private:
    std::string name_;
    float x_;
};

struct bullet { /* trivially copyable: saved as bytes */
    float x, speed;
    opl::handle<ship> target;
    uint32_t fired_at;
};

static int failures;
#define EXPECT(cond)                                                                               \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            std::fprintf(stderr, "game.cpp:%d: %s\n", __LINE__, #cond);                            \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

/* Any ship but `self`, or null when it is alone. */
static opl::handle<ship> pick_target(opl::pool<ship> &ships, opl::handle<ship> self) {
    if (ships.size() < 2) return {};
    for (;;) {
        opl::handle<ship> h = ships.live_handle(roll(ships.size()));
        if (h != self) return h;
    }
}

int main() {
    opl::options so = opl::options();
    so.capacity = 32;
    so.name = "ships";
    opl::options bo = opl::options();
    bo.capacity = 256;
    bo.max_capacity = 1024; /* bullets grow on demand */
    bo.name = "bullets";
    bo.salt = 0xb0113e7;

    std::vector<opl::handle<ship>> sunk; /* handles of destroyed ships, to check */
    {
        opl::pool<ship> ships(so);
        opl::pool<bullet> bullets(bo);
        opl::side_table<ship, std::string> captains(ships);
        if (!ships || !bullets || !captains) return 1;

        for (int k = 0; k < 12; k++) {
            auto [h, s] = ships.emplace("ship " + std::to_string(k), float(k * 10));
            if (!captains.emplace(h, "captain of " + s->name())) return 1;
        }
        for (auto [h, s] : ships.items()) s.target = pick_target(ships, h);

        for (uint32_t frame = 0; frame < 60 && ships.size() > 1; frame++) {
            /* ships: retarget, fire (spawning while iterating), sink */
            for (auto [h, s] : ships.items()) {
                if (!ships.contains(s.target)) s.target = pick_target(ships, h);
                if (roll(3) == 0 && s.target) {
                    auto b = bullets.emplace(bullet{s.x(), 5.0f, s.target, frame});
                    EXPECT(b.obj != nullptr);
                }
                if (s.hull <= 0) {
                    EXPECT(captains.erase(h));
                    sunk.push_back(h);
                    ships.erase(h); /* the current one: allowed, ~ship runs */
                }
            }
            /* bullets: fly, hit, or vanish with their target */
            for (auto [h, b] : bullets.items()) {
                ship *t = ships.get(b.target);
                if (t == nullptr) { /* the target sank: the handle is stale */
                    bullets.erase(h);
                    continue;
                }
                b.x += b.x < t->x() ? b.speed : -b.speed;
                if (b.x > t->x() - 5 && b.x < t->x() + 5) {
                    t->hull--;
                    t->hits_taken_at.push_back(int(frame));
                    bullets.erase(h);
                }
            }
            if (frame == 20) { /* save the bullets and load them back */
                EXPECT(bullets.save_file("game_bullets.opool") == OPOOL_OK);
                opl::pool<bullet> loaded = opl::pool<bullet>::load_file(bo, "game_bullets.opool");
                EXPECT(loaded && loaded.size() == bullets.size());
                for (auto [h, b] : bullets.items()) {
                    const bullet *c = loaded.get(h);
                    EXPECT(c && c->x == b.x && c->target == b.target);
                }
                std::printf("frame 20: %u bullets saved and loaded back\n", loaded.size());
                std::remove("game_bullets.opool");
            }
        }
        for (auto h : sunk) EXPECT(ships.get(h) == nullptr && captains.get(h) == nullptr);
        std::printf("%zu ships sunk, %u afloat:", sunk.size(), ships.size());
        for (const ship &s : ships) std::printf(" %s (%d)", s.name().c_str(), s.hull);
        std::printf("\n%u bullets in flight, %llu fired\n", bullets.size(),
                    static_cast<unsigned long long>(bullets.stats().allocs));
    } /* the pools go: ~ship of every ship still afloat */
    EXPECT(ships_built == 12 && ships_destroyed == 12);
    std::printf("%ld ships built, %ld destroyed: %s\n", ships_built, ships_destroyed,
                failures ? "FAILED" : "ok");
    return failures != 0;
}
