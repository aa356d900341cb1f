/*
 * counting.h -- the tests' allocator: it counts what it hands out, checks
 * that every block comes back once with its size, dirties fresh memory (a
 * pool must not rely on it being zero) and fails on demand.
 *
 *     counting c;
 *     desc.allocator = counting_allocator(&c);   // resets c
 *     c.fail_from = 3;                           // the 4th call and later fail
 *     ...
 *     CHECK_EQ_U64(c.blocks, 0);                 // everything came back
 */
#ifndef OPOOL_TEST_COUNTING_H
#define OPOOL_TEST_COUNTING_H

#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "opool.h"

typedef struct counting {
    long calls;         /* allocations asked for */
    long fail_from;     /* calls numbered >= this (0-based) fail; -1: never */
    long fail_only;     /* this call alone fails; -1: none */
    size_t max_request; /* larger requests fail (0: no limit) */
    size_t max_bytes;   /* a request taking the outstanding bytes past this fails (0: none) */
    long blocks;        /* outstanding */
    size_t bytes;       /* outstanding */
    long frees;
    long size_mismatches;  /* freed with another size than allocated */
    long align_mismatches; /* free_aligned told another alignment than alloc asked */
    size_t max_align;      /* requests for a larger alignment fail (0: no limit) */
    size_t largest_align;  /* the largest alignment asked for */
    long aligned_frees;    /* frees that came through free_aligned */
    long bad_frees;        /* size mismatches, and pointers this allocator never gave */
    long failures;         /* calls that failed on purpose */
} counting;

#define COUNTING_MAGIC 0x6f706f6f6c686561u

typedef struct counting_header {
    void *raw;
    size_t size, align;
    uint64_t magic;
} counting_header;

static inline void *counting_alloc(void *ctx, size_t size, size_t align) {
    counting *c = (counting *)ctx;
    long n = c->calls++;
    if ((c->fail_from >= 0 && n >= c->fail_from) || n == c->fail_only ||
        (c->max_request && size > c->max_request) ||
        (c->max_bytes && size > c->max_bytes - c->bytes) || size > SIZE_MAX / 2 ||
        (c->max_align && align > c->max_align) || align == 0 || (align & (align - 1)) != 0) {
        c->failures++;
        return NULL;
    }
    if (align > c->largest_align) c->largest_align = align;
    size_t asked = align;
    if (align < alignof(counting_header)) align = alignof(counting_header);
    unsigned char *raw = (unsigned char *)malloc(size + align + sizeof(counting_header));
    if (raw == NULL) return NULL;
    uintptr_t at = ((uintptr_t)raw + sizeof(counting_header) + align - 1) & ~(uintptr_t)(align - 1);
    counting_header hd = {raw, size, asked, COUNTING_MAGIC};
    memcpy((unsigned char *)at - sizeof hd, &hd, sizeof hd);
    memset((void *)at, 0xA5, size);
    c->blocks++;
    c->bytes += size;
    return (void *)at;
}

static inline void counting_free(void *ctx, void *ptr, size_t size) {
    counting *c = (counting *)ctx;
    if (ptr == NULL) return;
    counting_header hd;
    memcpy(&hd, (unsigned char *)ptr - sizeof hd, sizeof hd);
    if (hd.magic != COUNTING_MAGIC) {
        c->bad_frees++;
        return;
    }
    if (hd.size != size) {
        c->size_mismatches++;
        c->bad_frees++;
    }
    hd.magic = 0;
    memcpy((unsigned char *)ptr - sizeof hd, &hd, sizeof hd);
    c->frees++;
    c->blocks--;
    c->bytes -= hd.size;
    free(hd.raw);
}

/* free_aligned: the same, and the alignment must be the one asked. */
static inline void counting_free_aligned(void *ctx, void *ptr, size_t size, size_t align) {
    counting *c = (counting *)ctx;
    if (ptr == NULL) return;
    counting_header hd;
    memcpy(&hd, (unsigned char *)ptr - sizeof hd, sizeof hd);
    if (hd.magic == COUNTING_MAGIC && hd.align != align) {
        c->align_mismatches++;
        c->bad_frees++;
    }
    c->aligned_frees++;
    counting_free(ctx, ptr, size);
}

/* Reset c and return an allocator over it, with free_aligned and no free. */
static inline opool_allocator counting_allocator_aligned(counting *c) {
    memset(c, 0, sizeof *c);
    c->fail_from = -1;
    c->fail_only = -1;
    opool_allocator a;
    memset(&a, 0, sizeof a);
    a.alloc = counting_alloc;
    a.free_aligned = counting_free_aligned;
    a.ctx = c;
    return a;
}

/* Reset c and return an allocator over it. */
static inline opool_allocator counting_allocator(counting *c) {
    memset(c, 0, sizeof *c);
    c->fail_from = -1;
    c->fail_only = -1;
    opool_allocator a;
    memset(&a, 0, sizeof a);
    a.alloc = counting_alloc, a.free = counting_free, a.ctx = c; /* C and C++ alike */
    return a;
}

#endif /* OPOOL_TEST_COUNTING_H */
