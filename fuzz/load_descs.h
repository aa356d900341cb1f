/*
 * load_descs.h -- the descs fuzz/load.c loads images with, shared with the
 * seed generator (fuzz/gen_corpus.c), which saves real pools built from the
 * same descs so the committed seeds load and the fuzzer starts deep.
 *
 * An image loads only into a desc of the same geometry (object size and
 * alignment, capacity, max_capacity, policy's growth) and the same object
 * coding (bytes, or save_object/load_object): each desc below is one kind.
 */
#ifndef OPOOL_FUZZ_LOAD_DESCS_H
#define OPOOL_FUZZ_LOAD_DESCS_H

#include "fuzz.h"
#include "opool.h"

#define LOAD_NDESCS 6
#define LOAD_AUTO 6 /* fuzz/load.c: a desc made from the image's header */

/* fuzz/load.c: byte 0 of an input is a desc number (bits 0-2) and these */
#define LOAD_FIX_CHECKSUM 0x08 /* the last 8 bytes become a valid checksum */
#define LOAD_WORLD 0x10        /* a world image: n and n desc numbers come first */
#define LOAD_SIDE 0x20         /* a side table's image: a layout number comes first */
#define LOAD_WORLD_MAX 4       /* pools in a world the target loads */
#define LOAD_INJECT 0x40       /* the next byte: allocations fail from that one on */
#define LOAD_ROUND_TRIP 0x80   /* build, save, load, compare */

/* OPOOL_FULL_EVICT: the oldest entry of the live list goes. */
static inline opool_handle load_evict_first(opool *p, void *user) {
    (void)user;
    return opool_live_handle(p, 0);
}

static inline void load_init(void *obj, void *user) {
    (void)user;
    memset(obj, 0x5A, 1);
}

static inline void load_fini(void *obj, void *user) {
    (void)user;
    (void)obj;
}

/* Full pools are expected here: no line on stderr for each. */
static inline void load_quiet_report(opool *p, opool_status what, opool_handle h, void *user) {
    (void)p, (void)what, (void)h, (void)user;
}

/* Objects of desc 3 (24 bytes): byte 0 is a length L <= 23, then L bytes;
 * the rest is padding that save_object leaves out. The record is exactly
 * L + 1 bytes; load_object rejects any other. */
#define LOAD_CB_SIZE 24

static inline bool load_save_object(const void *obj, opool_write_fn write, void *wctx, void *user) {
    (void)user;
    const unsigned char *b = (const unsigned char *)obj;
    if (b[0] >= LOAD_CB_SIZE) return false; /* not a valid object: save must fail */
    size_t n = (size_t)b[0] + 1;
    return write(wctx, b, n) == n;
}

static inline bool load_load_object(void *obj, const void *data, size_t size, void *user) {
    (void)user;
    const unsigned char *d = (const unsigned char *)data;
    if (size == 0 || size > LOAD_CB_SIZE || d[0] != size - 1) return false;
    memset(obj, 0, LOAD_CB_SIZE);
    memcpy(obj, d, size);
    return true;
}

/* Make obj a valid object of desc k from a seed byte (desc 3 needs its length). */
static inline void load_fill_object(int k, void *obj, size_t size, uint8_t seed) {
    unsigned char *b = (unsigned char *)obj;
    if (k == 3) {
        memset(b, 0, size);
        b[0] = (unsigned char)(seed % LOAD_CB_SIZE);
        for (size_t i = 1; i <= b[0]; i++) b[i] = (unsigned char)(seed * 31 + i);
        return;
    }
    for (size_t i = 0; i < size; i++) b[i] = (unsigned char)(seed + i * 7);
}

/* Desc k (0 <= k < LOAD_NDESCS), allocating through mem (may be NULL: the C
 * library). Its salt is fixed so pools built from it are reproducible. */
static inline opool_desc load_desc(int k, fuzz_mem *mem) {
    opool_desc d;
    memset(&d, 0, sizeof d);
    d.salt = 0x5EED0000u + (uint32_t)k * 0x1111u;
    d.report = load_quiet_report;
    d.flags |= OPOOL_SHARE_SALT; /* a pool and its reloaded twin live at once */
    switch (k) {
    case 0: /* fixed, plain: the inline paths */
        d.object_size = 16;
        d.capacity = 64;
        break;
    case 1: /* growable with retirement, small objects, many chunks */
        d.object_size = 8;
        d.object_align = 8;
        d.capacity = 4;
        d.max_capacity = 1000;
        d.on_full = OPOOL_FULL_GROW;
        d.flags |= OPOOL_RETIRE_ON_WRAP;
        d.salt = 0xFFFFFFF0u; /* generations near the wrap */
        break;
    case 2: /* evicting, fini */
        d.object_size = 32;
        d.object_align = 32;
        d.capacity = 16;
        d.on_full = OPOOL_FULL_EVICT;
        d.evict = load_evict_first;
        d.fini = load_fini;
        break;
    case 3: /* objects through save_object / load_object */
        d.object_size = LOAD_CB_SIZE;
        d.capacity = 32;
        d.max_capacity = 256;
        d.on_full = OPOOL_FULL_GROW;
        d.save_object = load_save_object;
        d.load_object = load_load_object;
        break;
    case 4: /* debug flags and hooks on one-byte objects */
        d.object_size = 1;
        d.object_align = 1;
        d.capacity = 100;
        d.flags |= OPOOL_POISON | OPOOL_ZERO;
        d.init = load_init;
        d.fini = load_fini;
        break;
    default: /* large alignment, growable, poisoned */
        d.object_size = 100;
        d.object_align = 256;
        d.capacity = 8;
        d.max_capacity = 40;
        d.on_full = OPOOL_FULL_GROW;
        d.flags |= OPOOL_POISON;
        break;
    }
    if (mem != NULL) {
        opool_allocator al = {.alloc = fuzz_mem_alloc, .free = fuzz_mem_free, .ctx = mem};
        d.allocator = al;
    }
    return d;
}

/* The value layouts of side tables the SIDE mode loads with (fuzz/load.c). */
static const size_t side_layouts[][2] = {{24, 8}, {0, 1}, {1, 1}, {12, 4}, {96, 64}};
#define SIDE_LAYOUTS (sizeof side_layouts / sizeof side_layouts[0])

#endif /* OPOOL_FUZZ_LOAD_DESCS_H */
