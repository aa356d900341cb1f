/*
 * entities.c -- a small entity system whose links are handles, saved and loaded.
 *
 * Two fleets fight. Ships, turrets and missiles are entities in one typed
 * pool (opool_typed.h). Two component pools hold what links them: an
 * attachment ties a turret (its child) to a ship (its parent), and a missile
 * component names the missile's entity, its target and the turret that
 * launched it. Every link is an entity handle, never a pointer. An entity
 * holds entity handles itself: a ship keeps the enemy ship its turrets aim
 * at, so the handle type is declared before the entity type
 * (OPOOL_TYPED_HANDLE, then OPOOL_TYPED_POOL once the type is complete).
 * Each entity also has a debug name in a side table keyed by entity handles
 * (OPOOL_TYPED_SIDE): the name goes with its entity, and a stale handle finds
 * no name, not even the name of the entity that now holds its slot.
 *
 * Entities die while others still hold handles to them: a ship is destroyed
 * while missiles fly at it and its turrets hang on to it, and a turret goes
 * down with its ship while its missiles are still in flight. Nobody is told.
 * Each holder finds out the next time it looks: entity_pool_get returns NULL
 * for a stale handle, also after the dead entity's slot has been given to a
 * newer entity. So a missile whose target is gone fizzles, a turret whose
 * ship is gone is removed, and a kill is credited to the launcher only if it
 * still exists.
 *
 * Then the game is saved as one world (docs/FORMAT.md, "Worlds"): the game
 * state (a pool of one object) and the three pools go into one file with
 * opool_save_many_file, under one checksum, replaced atomically, and come
 * back all or nothing with opool_load_many_file. Handles are plain data, so
 * the components need no save_object callback: their bytes are saved as
 * they are. The debug names are not saved: the loaded world names its
 * entities again. The file is loaded into fresh pools, and the program checks that every link
 * stored in a component reaches the same entity as before, that every stale link is still stale,
 * and that the saved world and the loaded one then play on identically, tick for tick (handles
 * issued, live order and all).
 *
 * Every link also carries the serial number of the entity it was made for,
 * only so the program can check itself: a handle that resolves must reach
 * that very entity. Exit status 0 when every check passes. Deterministic: a
 * fixed-seed xorshift generator, no clock.
 *
 *   cc -std=c11 -O2 -Iinclude examples/entities.c src/opool*.c -o entities
 */
#include "opool_typed.h"

#include <stdalign.h>

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

enum {
    ENTITY_CAPACITY = 64,
    MISSILE_CAPACITY = 32,
    ATTACHMENT_CAPACITY = 32,
    TURRETS_PER_SHIP = 2,
    SHIP_HP = 3,     /* missile hits a ship takes */
    WAVE_EVERY = 25, /* ticks between two ships of a fleet */
    RELOAD_MIN = 10, /* ticks between two shots: RELOAD_MIN .. +RELOAD_SPAN - 1 */
    RELOAD_SPAN = 20,
    SHIP_SPEED = 2,          /* per tick, toward the front line */
    MISSILE_SPEED = 20,      /* per axis per tick */
    TICKS_BEFORE_SAVE = 320, /* a save with stale links of every kind in the components */
    TICKS_AFTER_LOAD = 300,  /* played by the saved world and the loaded one side by side */
    REPORT_EVERY = 50,
    SHOW_RECYCLED = 3 /* stale links into reused slots printed in full */
};

enum kind { SHIP = 1, TURRET, MISSILE };

/* The entity handle type, before the entity type that holds some. */
OPOOL_TYPED_HANDLE(entity_pool);

/* Objects are saved as their bytes, so none of these types has padding
 * (whose bytes would be saved uninitialised and make memcmp meaningless). */
struct entity {
    uint64_t serial; /* 1, 2, 3, ...: which entity this is; never reused */
    uint32_t kind;
    uint32_t team; /* 0 or 1 */
    int32_t x, y;
    int32_t hp;                /* ships: hits left */
    int32_t reload;            /* turrets: ticks until the next shot */
    uint32_t kills;            /* turrets: enemy ships their missiles finished */
    uint32_t launched;         /* turrets: missiles fired */
    entity_pool_handle target; /* ships: the enemy ship their turrets aim at */
};
OPOOL_TYPED_POOL(entity_pool, struct entity);

/* Every entity's debug name, kept beside the pool rather than in it. */
struct debug_name {
    char text[32];
};
OPOOL_TYPED_SIDE(name_table, entity_pool, struct debug_name);

/* A link to an entity. serial is for the self-checks only. */
struct link {
    entity_pool_handle h;
    uint64_t serial;
};

struct missile {
    struct link self;     /* the missile's own entity (its position) */
    struct link target;   /* an enemy ship */
    struct link launcher; /* the turret that fired it: kill credit */
};
OPOOL_TYPED(missile_pool, struct missile);

struct attachment {
    struct link child;  /* a turret */
    struct link parent; /* its ship */
    int32_t dx, dy;     /* the child's place relative to the parent */
};
OPOOL_TYPED(attachment_pool, struct attachment);

/* The game's own state, saved with the pools (a pool of one object). */
struct game {
    uint32_t tick;
    uint32_t rng; /* saved too: the loaded game rolls the same dice */
    uint64_t next_serial;
    uint32_t score[2]; /* ships destroyed by each fleet */
};

_Static_assert(sizeof(struct entity) == 48 && sizeof(struct link) == 16 &&
                   sizeof(struct missile) == 48 && sizeof(struct attachment) == 40 &&
                   sizeof(struct game) == 24,
               "saved as bytes: no padding");

/* What the program counts as it plays (not part of the game, not saved). */
struct tally {
    uint64_t fizzled;    /* missiles whose target had died */
    uint64_t orphaned;   /* turrets removed because their ship had died */
    uint64_t uncredited; /* kills whose launcher had died */
    uint64_t recycled;   /* stale links met whose slot held a newer entity */
};

struct world {
    entity_pool *entities;
    missile_pool *missiles;
    attachment_pool *attachments;
    name_table *names; /* not saved */
    struct game game;
    struct tally tally;
    bool verbose; /* print the stale-link demonstrations */
};

/* The descs that create the pools and load them back: the same ones. A
 * typed pool fills in object_size and object_align from the type. */
static const opool_desc entity_desc = {.capacity = ENTITY_CAPACITY};
static const opool_desc missile_desc = {.capacity = MISSILE_CAPACITY};
static const opool_desc attachment_desc = {.capacity = ATTACHMENT_CAPACITY};

/* ---- self-checks ----------------------------------------------------------- */

static unsigned failures;

#define CHECK(cond) check_((cond), #cond, __LINE__)

static void check_(bool ok, const char *what, int line) {
    if (!ok) {
        fprintf(stderr, "entities.c:%d: check failed: %s\n", line, what);
        failures++;
    }
}

/* ---- deterministic randomness --------------------------------------------- */

static uint32_t below(struct world *w, uint32_t n) {
    uint32_t x = w->game.rng;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    w->game.rng = x;
    return x % n;
}

/* ---- entities and links ---------------------------------------------------- */

/* Give e its debug name, e.g. "ship #12 (blue)". */
static void name(struct world *w, const struct entity *e) {
    static const char *const kinds[] = {"?", "ship", "turret", "missile"};
    struct debug_name *n = name_table_put(w->names, entity_pool_handle_of(w->entities, e));
    CHECK(n != NULL);
    if (n != NULL)
        snprintf(n->text, sizeof n->text, "%s #%" PRIu64 " (%s)", kinds[e->kind % 4], e->serial,
                 e->team == 0 ? "blue" : "red");
}

/* The debug name of the entity h names, "(none)" once it has died. */
static const char *name_of(struct world *w, entity_pool_handle h) {
    const struct debug_name *n = name_table_get(w->names, h);
    return n != NULL ? n->text : "(none)";
}

static struct link link_to(struct world *w, const struct entity *e) {
    struct link l = {entity_pool_handle_of(w->entities, e), e->serial};
    return l;
}

/* The entity l names, or NULL once that entity has died. */
static struct entity *follow(struct world *w, struct link l) {
    struct entity *e = entity_pool_get(w->entities, l.h);
    if (e != NULL) {
        CHECK(e->serial == l.serial); /* never a newer entity in the same slot */
        return e;
    }
    /* Stale. The case that matters is a slot already given to someone else:
     * the handle must not reach the newcomer. */
    uint32_t index = entity_pool_handle_index(l.h);
    struct entity *now = entity_pool_at(w->entities, index);
    CHECK(name_table_get(w->names, l.h) == NULL); /* the name went with the entity */
    if (now != NULL) {
        CHECK(now->serial != l.serial);
        w->tally.recycled++;
        entity_pool_handle nh = entity_pool_handle_of(w->entities, now);
        if (w->verbose && w->tally.recycled <= SHOW_RECYCLED)
            printf("tick %3" PRIu32 ": link to #%" PRIu64 " (slot %" PRIu32 ", generation %" PRIu32
                   ") is stale, and finds no name; the slot now holds %s (generation %" PRIu32
                   ")\n",
                   w->game.tick, l.serial, index, entity_pool_handle_generation(l.h),
                   name_of(w, nh), entity_pool_handle_generation(nh));
    }
    return NULL;
}

/* True when the pools have room for n more entities and components. */
static bool room(struct world *w, uint32_t entities, uint32_t missiles, uint32_t attachments) {
    return entity_pool_count(w->entities) + entities <= ENTITY_CAPACITY &&
           missile_pool_count(w->missiles) + missiles <= MISSILE_CAPACITY &&
           attachment_pool_count(w->attachments) + attachments <= ATTACHMENT_CAPACITY;
}

/* A new entity (the caller checked room()). */
static struct entity *spawn(struct world *w, enum kind kind, uint32_t team, int32_t x, int32_t y) {
    struct entity *e = entity_pool_alloc(w->entities, NULL);
    CHECK(e != NULL);
    if (e == NULL) return NULL;
    *e = (struct entity){.serial = ++w->game.next_serial,
                         .kind = kind,
                         .team = team,
                         .x = x,
                         .y = y,
                         .target = entity_pool_handle_null()};
    name(w, e);
    return e;
}

/* Destroy an entity. Whoever holds a link to it finds out by itself; its
 * name goes with it. */
static void destroy(struct world *w, struct link l) {
    CHECK(name_table_remove(w->names, l.h) == OPOOL_OK);
    CHECK(entity_pool_free(w->entities, l.h) == OPOOL_OK);
}

/* ---- the systems ------------------------------------------------------------ */

static void spawn_ship(struct world *w, uint32_t team) {
    if (!room(w, 1 + TURRETS_PER_SHIP, 0, TURRETS_PER_SHIP)) return;
    struct entity *ship = spawn(w, SHIP, team, team == 0 ? 0 : 1000, 50 + (int32_t)below(w, 200));
    if (ship == NULL) return;
    ship->hp = SHIP_HP;
    for (int32_t k = 0; k < TURRETS_PER_SHIP; k++) {
        struct entity *turret = spawn(w, TURRET, team, ship->x, ship->y);
        struct attachment *a = attachment_pool_alloc(w->attachments, NULL);
        CHECK(a != NULL);
        if (turret == NULL || a == NULL) return; /* never: room() said yes */
        turret->reload = RELOAD_MIN + (int32_t)below(w, RELOAD_SPAN);
        *a = (struct attachment){link_to(w, turret), link_to(w, ship), 10 * k - 5, 8};
    }
}

/* A random enemy ship, NULL if there is none. */
static struct entity *pick_enemy(struct world *w, uint32_t team) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < entity_pool_count(w->entities); i++) {
        struct entity *e = entity_pool_live_object(w->entities, i);
        n += e->kind == SHIP && e->team != team;
    }
    if (n == 0) return NULL;
    uint32_t pick = below(w, n);
    for (uint32_t i = 0;; i++) {
        struct entity *e = entity_pool_live_object(w->entities, i);
        if (e->kind == SHIP && e->team != team && pick-- == 0) return e;
    }
}

/* A turret fires at its ship's target; a ship whose target is gone (or
 * that has none yet) picks a new one first. */
static void fire(struct world *w, struct entity *turret, struct entity *ship) {
    struct entity *target = entity_pool_get(w->entities, ship->target);
    if (target == NULL) {
        target = pick_enemy(w, turret->team);
        if (target == NULL) return;
        ship->target = entity_pool_handle_of(w->entities, target);
        if (w->verbose && w->game.tick < 60)
            printf("tick %3" PRIu32 ": %s targets %s\n", w->game.tick,
                   name_of(w, entity_pool_handle_of(w->entities, ship)), name_of(w, ship->target));
    }
    if (!room(w, 1, 1, 0)) return;
    struct entity *self = spawn(w, MISSILE, turret->team, turret->x, turret->y);
    struct missile *m = missile_pool_alloc(w->missiles, NULL);
    CHECK(m != NULL);
    if (self == NULL || m == NULL) return; /* never: room() said yes */
    *m = (struct missile){link_to(w, self), link_to(w, target), link_to(w, turret)};
    turret->launched++;
}

static void move_ships(struct world *w) {
    for (uint32_t i = 0; i < entity_pool_count(w->entities); i++) {
        struct entity *e = entity_pool_live_object(w->entities, i);
        int32_t front = e->team == 0 ? 400 : 600;
        if (e->kind != SHIP || e->x == front) continue;
        e->x += e->x < front ? SHIP_SPEED : -SHIP_SPEED;
    }
}

/* Turrets follow their ships and fire. A turret whose ship died goes too. */
static void update_attachments(struct world *w) {
    for (uint32_t i = attachment_pool_count(w->attachments); i-- > 0;) {
        struct attachment *a = attachment_pool_live_object(w->attachments, i);
        struct entity *child = follow(w, a->child);
        struct entity *parent = follow(w, a->parent);
        CHECK(child != NULL); /* only this loop removes turrets */
        if (child == NULL) continue;
        if (parent == NULL) {
            destroy(w, a->child);
            CHECK(attachment_pool_free(w->attachments,
                                       attachment_pool_live_handle(w->attachments, i)) ==
                  OPOOL_OK); /* freeing the entry at i while walking backwards is allowed */
            w->tally.orphaned++;
            continue;
        }
        child->x = parent->x + a->dx;
        child->y = parent->y + a->dy;
        if (--child->reload <= 0) {
            fire(w, child, parent); /* allocates entities and missiles, never attachments */
            child->reload = RELOAD_MIN + (int32_t)below(w, RELOAD_SPAN);
        }
    }
}

static int32_t step(int32_t from, int32_t to, int32_t speed) {
    if (to > from + speed) return from + speed;
    if (to < from - speed) return from - speed;
    return to;
}

/* Missiles fly at their targets. One whose target died fizzles. */
static void update_missiles(struct world *w) {
    for (uint32_t i = missile_pool_count(w->missiles); i-- > 0;) {
        struct missile *m = missile_pool_live_object(w->missiles, i);
        missile_pool_handle mh = missile_pool_live_handle(w->missiles, i);
        struct entity *self = follow(w, m->self);
        struct entity *target = follow(w, m->target);
        CHECK(self != NULL); /* only this loop removes missiles */
        if (self == NULL) continue;
        if (target == NULL) {
            w->tally.fizzled++;
        } else {
            self->x = step(self->x, target->x, MISSILE_SPEED);
            self->y = step(self->y, target->y, MISSILE_SPEED);
            if (self->x != target->x || self->y != target->y) continue; /* still flying */
            if (--target->hp == 0) {
                w->game.score[self->team]++;
                struct entity *launcher = follow(w, m->launcher);
                if (launcher != NULL)
                    launcher->kills++;
                else
                    w->tally.uncredited++;
                destroy(w, m->target); /* its turrets and the missiles after it will notice */
            }
        }
        destroy(w, m->self);
        CHECK(missile_pool_free(w->missiles, mh) == OPOOL_OK);
    }
}

static void tick(struct world *w) {
    if (w->game.tick % WAVE_EVERY == 0) {
        spawn_ship(w, 0);
        spawn_ship(w, 1);
    }
    move_ships(w);
    update_attachments(w);
    update_missiles(w);
    w->game.tick++;
}

/* ---- world lifetime, save and load ----------------------------------------- */

static void world_destroy(struct world *w) {
    entity_pool_destroy(w->entities);
    missile_pool_destroy(w->missiles);
    attachment_pool_destroy(w->attachments);
    name_table_destroy(w->names);
    w->entities = NULL;
    w->missiles = NULL;
    w->attachments = NULL;
    w->names = NULL;
}

static bool world_create(struct world *w) {
    *w = (struct world){.game = {.rng = 0x2545f491u}, .verbose = true};
    if (entity_pool_create(&w->entities, &entity_desc) == OPOOL_OK &&
        missile_pool_create(&w->missiles, &missile_desc) == OPOOL_OK &&
        attachment_pool_create(&w->attachments, &attachment_desc) == OPOOL_OK &&
        name_table_create(&w->names, ENTITY_CAPACITY) == OPOOL_OK)
        return true;
    world_destroy(w);
    return false;
}

/* The world file: the game state, then the three pools, in this order.
 * opool_load_many takes complete descs: the typed descs above, with the
 * object size and alignment that P_create fills in from the type. */
enum { WORLD_POOLS = 4 };
static const opool_desc game_desc = {
    .object_size = sizeof(struct game), .object_align = alignof(struct game), .capacity = 1};

static void world_descs(opool_desc d[WORLD_POOLS]) {
    d[0] = game_desc;
    d[1] = entity_desc;
    d[1].object_size = sizeof(struct entity);
    d[1].object_align = alignof(struct entity);
    d[2] = missile_desc;
    d[2].object_size = sizeof(struct missile);
    d[2].object_align = alignof(struct missile);
    d[3] = attachment_desc;
    d[3].object_size = sizeof(struct attachment);
    d[3].object_align = alignof(struct attachment);
}

/* One file, one checksum, all or nothing: a crash part-way through the save
 * leaves the previous file whole, and a load never gives a world whose
 * pools come from two different saves. */
static opool_status world_save(const struct world *w, const char *path) {
    opool *state = NULL;
    opool_status st = opool_create(&state, &game_desc);
    if (st != OPOOL_OK) return st;
    struct game *g = opool_alloc(state, NULL); /* a fresh pool of one: never NULL */
    *g = w->game;
    const opool *pools[WORLD_POOLS] = {state, entity_pool_raw(w->entities),
                                       missile_pool_raw(w->missiles),
                                       attachment_pool_raw(w->attachments)};
    st = opool_save_many_file(pools, WORLD_POOLS, path);
    opool_destroy(state);
    return st;
}

static opool_status world_load(struct world *w, const char *path) {
    *w = (struct world){.verbose = false};
    opool_desc descs[WORLD_POOLS];
    world_descs(descs);
    opool *pools[WORLD_POOLS];
    opool_status st = opool_load_many_file(pools, descs, WORLD_POOLS, path);
    if (st != OPOOL_OK) return st; /* every pools[i] is NULL */
    w->game = *(const struct game *)opool_live_object(pools[0], 0);
    opool_destroy(pools[0]);
    /* a typed pool is its untyped pool renamed (P_raw's inverse) */
    w->entities = (entity_pool *)(void *)pools[1];
    w->missiles = (missile_pool *)(void *)pools[2];
    w->attachments = (attachment_pool *)(void *)pools[3];
    st = name_table_create(&w->names, ENTITY_CAPACITY);
    /* the names were not saved: every loaded entity is named again */
    for (uint32_t i = 0; st == OPOOL_OK && i < entity_pool_count(w->entities); i++)
        name(w, entity_pool_live_object(w->entities, i));
    if (st != OPOOL_OK) world_destroy(w);
    return st;
}

/* ---- the checks of the loaded game ---------------------------------------- */

struct link_census {
    uint32_t live, stale, recycled; /* recycled: stale, and the slot holds another entity */
};

/* A link stored in a component of a, and the same link read from b. */
static void check_link(struct world *a, struct world *b, struct link la, struct link lb,
                       struct link_census *c) {
    CHECK(entity_pool_handle_eq(la.h, lb.h) && la.serial == lb.serial);
    struct entity *ea = entity_pool_get(a->entities, la.h);
    struct entity *eb = entity_pool_get(b->entities, lb.h);
    if (ea != NULL) {
        CHECK(eb != NULL && eb->serial == la.serial && memcmp(ea, eb, sizeof *ea) == 0);
        c->live++;
        return;
    }
    CHECK(eb == NULL); /* stale before the save, stale after the load */
    c->stale++;
    uint32_t index = entity_pool_handle_index(la.h);
    struct entity *now_a = entity_pool_at(a->entities, index);
    struct entity *now_b = entity_pool_at(b->entities, index);
    CHECK((now_a == NULL) == (now_b == NULL));
    if (now_a != NULL && now_b != NULL) {
        CHECK(now_b->serial == now_a->serial && now_b->serial != la.serial);
        c->recycled++;
    }
}

/* Every component of a is in b under the same handle, and every link in it
 * resolves in b exactly as in a. */
static struct link_census check_components(struct world *a, struct world *b) {
    struct link_census c = {0, 0, 0};
    CHECK(missile_pool_count(b->missiles) == missile_pool_count(a->missiles));
    for (uint32_t i = 0; i < missile_pool_count(a->missiles); i++) {
        struct missile *ma = missile_pool_live_object(a->missiles, i);
        struct missile *mb =
            missile_pool_get(b->missiles, missile_pool_live_handle(a->missiles, i));
        CHECK(mb != NULL);
        if (mb == NULL) continue;
        check_link(a, b, ma->self, mb->self, &c);
        check_link(a, b, ma->target, mb->target, &c);
        check_link(a, b, ma->launcher, mb->launcher, &c);
    }
    CHECK(attachment_pool_count(b->attachments) == attachment_pool_count(a->attachments));
    for (uint32_t i = 0; i < attachment_pool_count(a->attachments); i++) {
        struct attachment *aa = attachment_pool_live_object(a->attachments, i);
        struct attachment *ab =
            attachment_pool_get(b->attachments, attachment_pool_live_handle(a->attachments, i));
        CHECK(ab != NULL);
        if (ab == NULL) continue;
        check_link(a, b, aa->child, ab->child, &c);
        check_link(a, b, aa->parent, ab->parent, &c);
        CHECK(aa->dx == ab->dx && aa->dy == ab->dy);
    }
    return c;
}

/* Same live objects, same handles, same live order, same bytes. The live
 * order matters: the systems walk it, so it decides who acts first. */
static bool pools_equal(opool *a, opool *b, size_t size) {
    if (opool_count(a) != opool_count(b)) return false;
    for (uint32_t i = 0; i < opool_count(a); i++)
        if (!opool_handle_eq(opool_live_handle(a, i), opool_live_handle(b, i)) ||
            memcmp(opool_live_object(a, i), opool_live_object(b, i), size) != 0)
            return false;
    return true;
}

/* Every entity of a world has its name, and only they have one. */
static bool names_complete(struct world *w) {
    if (name_table_count(w->names) != entity_pool_count(w->entities)) return false;
    for (uint32_t i = 0; i < entity_pool_count(w->entities); i++)
        if (name_table_get(w->names, entity_pool_live_handle(w->entities, i)) == NULL) return false;
    return true;
}

/* The same names under the same handles (in any order). */
static bool names_equal(struct world *a, struct world *b) {
    if (name_table_count(a->names) != name_table_count(b->names)) return false;
    for (uint32_t i = 0; i < name_table_count(a->names); i++) {
        const struct debug_name *nb = name_table_get(b->names, name_table_handle_at(a->names, i));
        if (nb == NULL || strcmp(nb->text, name_table_value_at(a->names, i)->text) != 0)
            return false;
    }
    return true;
}

static bool worlds_equal(struct world *a, struct world *b) {
    return memcmp(&a->game, &b->game, sizeof a->game) == 0 && names_equal(a, b) &&
           pools_equal(entity_pool_raw(a->entities), entity_pool_raw(b->entities),
                       sizeof(struct entity)) &&
           pools_equal(missile_pool_raw(a->missiles), missile_pool_raw(b->missiles),
                       sizeof(struct missile)) &&
           pools_equal(attachment_pool_raw(a->attachments), attachment_pool_raw(b->attachments),
                       sizeof(struct attachment));
}

/* ---- main ------------------------------------------------------------------ */

static void print_status(struct world *w) {
    uint32_t ships = 0;
    for (uint32_t i = 0; i < entity_pool_count(w->entities); i++)
        ships += entity_pool_live_object(w->entities, i)->kind == SHIP;
    printf("tick %3" PRIu32 ": %2" PRIu32 " entities (%" PRIu32 " ships, %2" PRIu32
           " missiles in flight); score %" PRIu32 ":%" PRIu32 "\n",
           w->game.tick, entity_pool_count(w->entities), ships, missile_pool_count(w->missiles),
           w->game.score[0], w->game.score[1]);
}

int main(void) {
    struct world a, b;
    if (!world_create(&a)) {
        fprintf(stderr, "entities: cannot create the pools\n");
        return 1;
    }

    while (a.game.tick < TICKS_BEFORE_SAVE) {
        tick(&a);
        if (a.game.tick % REPORT_EVERY == 0) print_status(&a);
    }
    printf("so far: %" PRIu64 " missiles fizzled (target gone), %" PRIu64
           " turrets removed (ship gone), %" PRIu64 " kills uncredited (launcher gone), %" PRIu64
           " stale links into reused slots\n",
           a.tally.fizzled, a.tally.orphaned, a.tally.uncredited, a.tally.recycled);

    /* Save, then load into fresh pools. No save yet is OPOOL_ENOENT, told
     * apart from a file that does not fit the descs (OPOOL_EINVAL). */
    const char *path = "entities-world.sav";
    (void)remove(path);
    CHECK(world_load(&b, path) == OPOOL_ENOENT);
    opool_status st = world_save(&a, path);
    long size = -1;
    FILE *f = fopen(path, "rb");
    if (f != NULL && fseek(f, 0, SEEK_END) == 0) size = ftell(f);
    if (f != NULL) fclose(f);
    if (st == OPOOL_OK) st = world_load(&b, path);
    (void)remove(path);
    if (st != OPOOL_OK) {
        fprintf(stderr, "entities: save or load failed: %s (%s)\n", opool_status_str(st),
                opool_last_load_error()->message);
        world_destroy(&a);
        return 1;
    }
    printf("saved at tick %" PRIu32 " as one world file (%ld bytes) and loaded into fresh "
           "pools\n",
           a.game.tick, size);

    struct link_census c = check_components(&a, &b);
    printf("links in components: %" PRIu32 " reach the same entity as before the save; %" PRIu32
           " stale ones are still stale (%" PRIu32
           " of them into a slot that holds a newer entity)\n",
           c.live, c.stale, c.recycled);
    CHECK(worlds_equal(&a, &b));
    CHECK(names_complete(&a) && names_complete(&b));
    /* the run must show what it claims to */
    CHECK(c.live > 0 && c.stale > 0 && c.recycled > 0);
    CHECK(a.tally.fizzled > 0 && a.tally.orphaned > 0 && a.tally.uncredited > 0 &&
          a.tally.recycled > 0);

    /* Both worlds play on: the loaded one must not be told apart. */
    a.verbose = false;
    a.tally = b.tally = (struct tally){0, 0, 0, 0};
    uint32_t apart = 0;
    for (uint32_t t = 0; t < TICKS_AFTER_LOAD; t++) {
        tick(&a);
        tick(&b);
        apart += !worlds_equal(&a, &b);
    }
    CHECK(apart == 0);
    CHECK(memcmp(&a.tally, &b.tally, sizeof a.tally) == 0);
    CHECK(names_complete(&a) && names_complete(&b));
    printf("both played %d more ticks: %s (tick %" PRIu32 ", score %" PRIu32 ":%" PRIu32 ")\n",
           TICKS_AFTER_LOAD, apart == 0 ? "identical at every tick" : "THEY DIVERGED", b.game.tick,
           b.game.score[0], b.game.score[1]);

    world_destroy(&a);
    world_destroy(&b);
    if (failures != 0) {
        fprintf(stderr, "entities: %u check(s) failed\n", failures);
        return 1;
    }
    return 0;
}
