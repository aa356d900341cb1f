/*
 * debug_valgrind.c -- what the pool shows Valgrind memcheck (docs/DEBUGGING.md).
 *
 * Run under memcheck by the tests in tests/tests.cmake, one misuse (or one
 * clean tour) per run:
 *
 *     debug_valgrind MODE
 *
 *   uninit-reuse   alloc, write, free, alloc again (the same slot), then branch
 *                  on a field: memcheck must report an uninitialised use
 *   zero-reuse     the same with OPOOL_ZERO: no error
 *   init-reuse     the same with an init callback that sets the field: no error
 *   read-freed     read a field of a freed object: an invalid read
 *   write-freed    write one: an invalid write
 *   read-never     read a slot that was never allocated: an invalid read
 *   read-grown     read a freed object in a growable pool's later chunk
 *   clean          every operation, valid accesses only, with an allocator that
 *                  checks each block it gets back is addressable: no error
 *
 * The misuse modes refuse to run outside Valgrind (exit 2): without it they
 * would read garbage and prove nothing. Built with -O2 on purpose: the pool
 * sees Valgrind at creation and routes every alloc and free through its
 * out-of-line path, and the inline fast paths must respect that once
 * optimised.
 */
#include "opool.h"

#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(OPOOL_HAVE_VALGRIND) && OPOOL_HAVE_VALGRIND
#include <valgrind/memcheck.h>
#define ON_VALGRIND() (RUNNING_ON_VALGRIND != 0)
#else
#define ON_VALGRIND() 0
#define VALGRIND_CHECK_MEM_IS_ADDRESSABLE(ptr, n) ((void)(ptr), (void)(n), 0)
#define VALGRIND_CHECK_MEM_IS_DEFINED(ptr, n) ((void)(ptr), (void)(n), 0)
#endif

#if defined(__GNUC__) || defined(__clang__)
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE
#endif

struct monster {
    int hp;
    int armour;
    double x, y;
};

static int failures;

static void expect(int ok, const char *what) {
    if (!ok) {
        fprintf(stderr, "debug_valgrind: check failed: %s\n", what);
        failures++;
    }
}

static opool *make(uint32_t flags, void (*init)(void *, void *)) {
    opool_desc d;
    memset(&d, 0, sizeof d);
    d.object_size = sizeof(struct monster);
    d.capacity = 8;
    d.flags = flags;
    d.init = init;
    opool *p = NULL;
    if (opool_create(&p, &d) != OPOOL_OK) {
        fprintf(stderr, "debug_valgrind: opool_create failed\n");
        exit(1);
    }
    return p;
}

static void init_monster(void *obj, void *user) {
    (void)user;
    struct monster *m = obj;
    m->hp = 100;
    m->armour = 0;
}

/* The misuse itself, in a function of its own so the report names it. The
 * two arms call different functions with different arguments, so no
 * compiler can turn the branch into a select (which would move the
 * uninitialised value into the callee instead of a jump here). */
static NOINLINE void branch_on_reused(const struct monster *m) {
    if (m->hp > 50)
        puts("the reused monster looks strong");
    else
        fprintf(stdout, "the reused monster looks %s\n", "weak");
}

/* alloc, write, free, alloc again: the same slot comes back (LIFO), and
 * whatever the program wrote before is not an initialisation of the new
 * object. */
static int reuse(uint32_t flags, void (*init)(void *, void *)) {
    opool *p = make(flags, init);
    opool_handle h;
    struct monster *m = opool_alloc(p, &h);
    m->hp = 75;
    m->armour = 3;
    m->x = m->y = 0.0;
    expect(opool_free(p, h) == OPOOL_OK, "free");
    struct monster *again = opool_alloc(p, &h);
    expect(again == m, "the freed slot comes back first");
    branch_on_reused(again);
    opool_destroy(p);
    return 0;
}

static NOINLINE int read_hp(const struct monster *m) { return m->hp; }

static NOINLINE void write_hp(struct monster *m, int hp) { m->hp = hp; }

static int read_freed(void) {
    opool *p = make(0, NULL);
    opool_handle h;
    struct monster *m = opool_alloc(p, &h);
    m->hp = 75;
    expect(opool_free(p, h) == OPOOL_OK, "free");
    printf("hp of the freed monster: %d\n", read_hp(m));
    opool_destroy(p);
    return 0;
}

static int write_freed(void) {
    opool *p = make(0, NULL);
    opool_handle h;
    struct monster *m = opool_alloc(p, &h);
    m->hp = 75;
    expect(opool_free(p, h) == OPOOL_OK, "free");
    write_hp(m, 10);
    opool_destroy(p);
    return 0;
}

static int read_never(void) {
    opool *p = make(0, NULL);
    opool_handle h;
    struct monster *m = opool_alloc(p, &h); /* slot 0; slot 1 was never allocated */
    m->hp = 75;
    printf("hp of a never-allocated slot: %d\n", read_hp(m + 1));
    opool_destroy(p);
    return 0;
}

static int read_grown(void) {
    opool_desc d;
    memset(&d, 0, sizeof d);
    d.object_size = sizeof(struct monster);
    d.capacity = 2;
    d.max_capacity = 64;
    d.on_full = OPOOL_FULL_GROW;
    opool *p = NULL;
    if (opool_create(&p, &d) != OPOOL_OK) return 1;
    opool_handle h[5];
    struct monster *m[5];
    for (int k = 0; k < 5; k++) {
        m[k] = opool_alloc(p, &h[k]); /* slots 0-1 chunk 0, 2-3 chunk 1, 4 chunk 2 */
        m[k]->hp = k;
    }
    expect(opool_free(p, h[4]) == OPOOL_OK, "free");
    printf("hp of a freed monster in chunk 2: %d\n", read_hp(m[4]));
    opool_destroy(p);
    return 0;
}

/* ---- clean: every operation, valid accesses only ---------------------- */

/* Hands out malloc'd blocks; on the way back checks each block is entirely
 * addressable (the pool must unhide free slots before giving memory back). */
typedef struct checking {
    size_t blocks;
} checking;

static void *checking_alloc(void *ctx, size_t size, size_t align) {
    checking *c = ctx;
    void *ptr = NULL;
    if (align < sizeof(void *)) align = sizeof(void *);
    size = (size + align - 1) & ~(align - 1);
    ptr = aligned_alloc(align, size);
    if (ptr) c->blocks++;
    return ptr;
}

static void checking_free(void *ctx, void *ptr, size_t size) {
    checking *c = ctx;
    if (ptr == NULL) return;
    /* reports (a memcheck error) the first byte that is not addressable */
    (void)VALGRIND_CHECK_MEM_IS_ADDRESSABLE(ptr, size);
    c->blocks--;
    free(ptr);
}

static void fini_monster(void *obj, void *user) {
    (void)user;
    struct monster *m = obj;
    expect(m->hp >= 0, "fini sees a defined object");
}

static int clean(void) {
    checking chk = {0};
    opool_desc d;
    memset(&d, 0, sizeof d);
    d.object_size = sizeof(struct monster);
    d.capacity = 4;
    d.max_capacity = 64;
    d.on_full = OPOOL_FULL_GROW;
    d.flags = OPOOL_ZERO;
    d.fini = fini_monster;
    d.allocator.alloc = checking_alloc;
    d.allocator.free = checking_free;
    d.allocator.ctx = &chk;
    opool *p = NULL;
    expect(opool_create(&p, &d) == OPOOL_OK, "create");
    if (p == NULL) return 1;

    opool_handle h[40];
    for (int round = 0; round < 3; round++) {
        for (int k = 0; k < 40; k++) {
            struct monster *m = opool_alloc(p, &h[k]);
            expect(m != NULL && m->hp == 0 && m->x == 0.0, "OPOOL_ZERO object");
            m->hp = k;
        }
        for (int k = 0; k < 40; k += 2) expect(opool_free(p, h[k]) == OPOOL_OK, "free");
        for (uint32_t i = opool_count(p); i-- > 0;) {
            struct monster *m = opool_live_object(p, i);
            if (m->hp % 4 == 1) expect(opool_free(p, opool_live_handle(p, i)) == OPOOL_OK, "free");
        }
        opool_sort(p);
        opool_clear(p);
        expect(opool_shrink(p) > 0, "shrink releases the grown chunks");
    }
    /* alloc_at re-creates an object at a handle */
    struct monster *m = opool_alloc(p, &h[0]);
    m->hp = 1;
    expect(opool_free(p, h[0]) == OPOOL_OK, "free");
    opool_handle again = h[0];
    again.bits += (uint64_t)2 << 32;
    m = opool_alloc_at(p, again);
    expect(m != NULL && m->hp == 0, "alloc_at, zeroed");
    /* destroy gives back grown chunks that hold free slots */
    for (int k = 0; k < 20; k++) expect(opool_alloc(p, &h[k]) != NULL, "alloc");
    for (int k = 0; k < 20; k += 3) expect(opool_free(p, h[k]) == OPOOL_OK, "free");
    opool_destroy(p);
    expect(chk.blocks == 0, "every block given back");

    /* a pool in the caller's buffer: after destroy the whole buffer is the
     * caller's again, free slots included */
    memset(&d, 0, sizeof d);
    d.object_size = sizeof(struct monster);
    d.capacity = 16;
    size_t need = opool_required_bytes(&d);
    unsigned char *buf = malloc(need);
    if (buf == NULL) return 1;
    expect(opool_create_in(&p, buf, need, &d) == OPOOL_OK, "create_in");
    for (int k = 0; k < 8; k++) {
        m = opool_alloc(p, &h[k]);
        m->hp = k;
    }
    for (int k = 0; k < 8; k++) expect(opool_free(p, h[k]) == OPOOL_OK, "free");
    opool_destroy(p);
    (void)VALGRIND_CHECK_MEM_IS_ADDRESSABLE(buf, need);
    memset(buf, 0x33, need);
    unsigned sum = 0;
    for (size_t k = 0; k < need; k++) sum += buf[k];
    expect(sum == 0x33u * need, "the caller's buffer is readable and writable after destroy");
    free(buf);

    /* OPOOL_POISON and init together */
    p = make(OPOOL_POISON, init_monster);
    for (int k = 0; k < 8; k++) opool_alloc(p, &h[k]);
    for (int k = 0; k < 8; k++) expect(opool_free(p, h[k]) == OPOOL_OK, "free");
    m = opool_alloc(p, &h[0]);
    expect(m->hp == 100, "init ran");
    opool_destroy(p);
    return failures != 0;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "clean") == 0) return clean();
    if (strcmp(mode, "zero-reuse") == 0) return reuse(OPOOL_ZERO, NULL) + (failures != 0);
    if (strcmp(mode, "init-reuse") == 0) return reuse(0, init_monster) + (failures != 0);
    int misuse = strcmp(mode, "uninit-reuse") == 0 || strcmp(mode, "read-freed") == 0 ||
                 strcmp(mode, "write-freed") == 0 || strcmp(mode, "read-never") == 0 ||
                 strcmp(mode, "read-grown") == 0;
    if (!misuse) {
        fprintf(stderr, "usage: debug_valgrind clean|zero-reuse|init-reuse|uninit-reuse|"
                        "read-freed|write-freed|read-never|read-grown\n");
        return 2;
    }
    if (!ON_VALGRIND()) {
        fprintf(stderr, "debug_valgrind %s: run it under valgrind\n", mode);
        return 2;
    }
    int rc;
    if (strcmp(mode, "uninit-reuse") == 0)
        rc = reuse(0, NULL);
    else if (strcmp(mode, "read-freed") == 0)
        rc = read_freed();
    else if (strcmp(mode, "write-freed") == 0)
        rc = write_freed();
    else if (strcmp(mode, "read-never") == 0)
        rc = read_never();
    else
        rc = read_grown();
    return rc + (failures != 0);
}
