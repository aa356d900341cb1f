/*
 * ids.c -- opool as a physics engine's id allocator.
 *
 * Engines such as Box2D keep their bodies in plain arrays indexed by an id,
 * and hand out ids 0, 1, 2, ... with the last freed one first. Here an
 * id-only pool (object_size 0: handles, no object storage) is that
 * allocator, and the engine keeps its own arrays:
 *   - the arrays (sized to the pool's capacity) are walked only up to
 *     opool_high_water (the slots ever used);
 *   - the engine frees by raw index through opool_handle_at;
 *   - contacts store their two bodies as compact 32-bit handles
 *     (opool_handle32), so a contact is 8 bytes, and a contact whose body
 *     died is found by opool_handle_expand even after the id was reused;
 *   - bodies that fall out of the world are removed in one opool_retain pass.
 *
 * The program checks itself and exits 0 on success.
 */
#include "opool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_BODIES = 1024, STEPS = 600, MAX_CONTACTS = 4096 };

struct body {
    float y, vy;
};

struct contact {
    opool_handle32 a, b; /* 4 bytes each: the compact form of the bodies' handles */
};

static struct {
    opool *ids;
    struct body bodies[MAX_BODIES]; /* indexed by the id's slot index */
    struct contact contacts[MAX_CONTACTS];
    uint32_t ncontacts;
    uint32_t fell, stale_contacts;
} world;

static uint64_t rng = 0x9e3779b97f4a7c15u;
static uint32_t next_rand(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 32);
}

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "ids.c:%d: check failed: %s\n", __LINE__, #cond);                      \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static opool_handle spawn(float y) {
    opool_handle h;
    CHECK(opool_alloc(world.ids, &h) != NULL); /* a token: never dereferenced */
    uint32_t i = opool_handle_index(h);
    CHECK(i < opool_high_water(world.ids)); /* every id handed out is below it */
    world.bodies[i] = (struct body){.y = y, .vy = 0};
    return h;
}

/* opool_retain's keep: a body below the floor leaves the world. */
static bool still_in_world(void *token, opool_handle h, void *user) {
    (void)token;
    (void)user;
    if (world.bodies[opool_handle_index(h)].y > -100.0f) return true;
    world.fell++;
    return false;
}

int main(void) {
    opool_desc d = {
        .object_size = 0, /* ids only */
        .capacity = MAX_BODIES,
        .flags = OPOOL_RETIRE_ON_WRAP, /* no stale compact handle ever matches */
        .salt = 7,                     /* deterministic: the same ids every run */
        .name = "bodies",
    };
    CHECK(opool_create(&world.ids, &d) == OPOOL_OK);

    /* A fresh pool hands out 0, 1, 2, ...; the last id freed comes back first. */
    opool_handle first = spawn(10), second = spawn(20);
    CHECK(opool_handle_index(first) == 0 && opool_handle_index(second) == 1);
    CHECK(opool_free(world.ids, opool_handle_at(world.ids, 0)) == OPOOL_OK); /* by raw index */
    opool_handle again = spawn(30);
    CHECK(opool_handle_index(again) == 0 && !opool_handle_eq(again, first));
    CHECK(!opool_valid(world.ids, first)); /* the old id is stale, not the new body */

    for (int step = 0; step < STEPS; step++) {
        /* spawn a few bodies at random heights */
        for (int k = next_rand() % 4; k > 0 && opool_count(world.ids) < MAX_BODIES; k--)
            spawn((float)(next_rand() % 100));

        /* record contacts between random live bodies, as compact handles */
        uint32_t n = opool_count(world.ids);
        if (n >= 2 && world.ncontacts < MAX_CONTACTS) {
            opool_handle a = opool_live_handle(world.ids, next_rand() % n);
            opool_handle b = opool_live_handle(world.ids, next_rand() % n);
            struct contact c = {opool_handle_compact(world.ids, a),
                                opool_handle_compact(world.ids, b)};
            CHECK(c.a.bits != 0 && c.b.bits != 0); /* live handles always compact */
            CHECK(opool_handle_eq(opool_handle_expand(world.ids, c.a), a));
            world.contacts[world.ncontacts++] = c;
        }

        /* integrate: the engine's own arrays, walked over the slots ever used */
        for (uint32_t i = opool_high_water(world.ids); i-- > 0;) {
            if (opool_handle_is_null(opool_handle_at(world.ids, i))) continue; /* a free id */
            world.bodies[i].vy -= 0.5f;
            world.bodies[i].y += world.bodies[i].vy;
        }

        /* bodies that fell out leave; their ids come back for new bodies */
        uint32_t before = opool_count(world.ids), fell = world.fell;
        uint32_t freed = opool_retain(world.ids, still_in_world, NULL);
        CHECK(freed == world.fell - fell && opool_count(world.ids) == before - freed);

        /* a contact whose body left is found and dropped, even when the id
         * was already given to a new body */
        for (uint32_t k = world.ncontacts; k-- > 0;) {
            struct contact *c = &world.contacts[k];
            if (opool_handle_is_null(opool_handle_expand(world.ids, c->a)) ||
                opool_handle_is_null(opool_handle_expand(world.ids, c->b))) {
                world.stale_contacts++;
                *c = world.contacts[--world.ncontacts];
            }
        }
    }

    opool_stats st;
    opool_get_stats(world.ids, &st);
    CHECK(st.count == opool_count(world.ids) && st.high_water == opool_high_water(world.ids));
    CHECK(world.fell > 0 && world.stale_contacts > 0);
    CHECK(st.frees == (uint64_t)world.fell + 1); /* + the id freed by index above */
    printf("ids: %u bodies live, %u ids ever used, %u fell out, %u stale contacts dropped, "
           "%zu-byte contacts\n",
           opool_count(world.ids), opool_high_water(world.ids), world.fell, world.stale_contacts,
           sizeof(struct contact));
    opool_destroy(world.ids);
    return 0;
}
