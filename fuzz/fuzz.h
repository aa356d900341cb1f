/*
 * fuzz.h -- what the fuzz targets share: the input reader, an allocator that
 * accounts for every byte (and can be told to fail), and the failure macro.
 *
 * A target is one file defining LLVMFuzzerTestOneInput. It links either with
 * libFuzzer (-fsanitize=fuzzer: make fuzz) or with fuzz/driver.c, which
 * replays files or directories (the CTest tests fuzz_*_corpus).
 */
#ifndef OPOOL_FUZZ_H
#define OPOOL_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A finding: say what, then abort so libFuzzer (or the driver) reports the
 * input that did it. */
#define FUZZ_FAIL(...)                                                                             \
    do {                                                                                           \
        fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                                            \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fputc('\n', stderr);                                                                       \
        abort();                                                                                   \
    } while (0)

#define FUZZ_CHECK(cond)                                                                           \
    do {                                                                                           \
        if (!(cond)) FUZZ_FAIL("check failed: %s", #cond);                                         \
    } while (0)

#define FUZZ_CHECK_EQ(a, b)                                                                        \
    do {                                                                                           \
        unsigned long long fuzz_a_ = (unsigned long long)(a), fuzz_b_ = (unsigned long long)(b);   \
        if (fuzz_a_ != fuzz_b_)                                                                    \
            FUZZ_FAIL("check failed: %s == %s (0x%llx vs 0x%llx)", #a, #b, fuzz_a_, fuzz_b_);      \
    } while (0)

/* ---- the input: bytes read front to back, zeros once it runs out ------- */

typedef struct fuzz_input {
    const uint8_t *p;
    size_t n;
} fuzz_input;

static inline uint8_t fuzz_u8(fuzz_input *in) {
    if (in->n == 0) return 0;
    in->n--;
    return *in->p++;
}

static inline uint16_t fuzz_u16(fuzz_input *in) {
    uint16_t lo = fuzz_u8(in);
    return (uint16_t)(lo | (uint16_t)fuzz_u8(in) << 8);
}

static inline uint32_t fuzz_u32(fuzz_input *in) {
    uint32_t lo = fuzz_u16(in);
    return lo | (uint32_t)fuzz_u16(in) << 16;
}

static inline uint64_t fuzz_u64(fuzz_input *in) {
    uint64_t lo = fuzz_u32(in);
    return lo | (uint64_t)fuzz_u32(in) << 32;
}

/* ---- an allocator that accounts for every byte ------------------------- */

typedef struct fuzz_mem {
    long blocks;
    size_t bytes;
    uint64_t size_mismatches; /* frees whose size is not the one allocated */
    uint64_t calls;           /* allocations asked for */
    bool fail;                /* every allocation fails while set */
    uint64_t fail_from;       /* the allocation with this number (1-based) and all later fail */
    size_t cap;               /* larger requests fail (0: no cap) */
} fuzz_mem;

typedef struct fuzz_mem_header {
    void *raw;
    size_t size;
} fuzz_mem_header;

static inline void *fuzz_mem_alloc(void *ctx, size_t size, size_t align) {
    fuzz_mem *m = (fuzz_mem *)ctx;
    m->calls++;
    if (m->fail || (m->cap != 0 && size > m->cap) || (m->fail_from && m->calls >= m->fail_from))
        return NULL;
    if (align < _Alignof(fuzz_mem_header)) align = _Alignof(fuzz_mem_header);
    if (size > SIZE_MAX - align - sizeof(fuzz_mem_header)) return NULL;
    unsigned char *raw = (unsigned char *)malloc(size + align + sizeof(fuzz_mem_header));
    if (raw == NULL) return NULL;
    uintptr_t at = ((uintptr_t)raw + sizeof(fuzz_mem_header) + align - 1) & ~(uintptr_t)(align - 1);
    fuzz_mem_header h = {raw, size};
    memcpy((unsigned char *)at - sizeof h, &h, sizeof h);
    m->blocks++;
    m->bytes += size;
    return (void *)at;
}

static inline void fuzz_mem_free(void *ctx, void *ptr, size_t size) {
    fuzz_mem *m = (fuzz_mem *)ctx;
    if (ptr == NULL) return;
    fuzz_mem_header h;
    memcpy(&h, (unsigned char *)ptr - sizeof h, sizeof h);
    if (h.size != size) m->size_mismatches++;
    m->blocks--;
    m->bytes -= h.size;
    free(h.raw);
}

/* Everything the pool took was given back, each block with its own size. */
#define FUZZ_CHECK_MEM_BALANCED(m)                                                                 \
    do {                                                                                           \
        FUZZ_CHECK_EQ((m)->blocks, 0);                                                             \
        FUZZ_CHECK_EQ((m)->bytes, 0);                                                              \
        FUZZ_CHECK_EQ((m)->size_mismatches, 0);                                                    \
    } while (0)

/* ---- byte streams in memory (save and load) ----------------------------- */

typedef struct fuzz_buf {
    unsigned char *data;
    size_t size, cap;
    size_t at;    /* read position */
    size_t limit; /* a write that would pass this many bytes fails (0: no limit) */
} fuzz_buf;

static inline size_t fuzz_buf_write(void *ctx, const void *data, size_t size) {
    fuzz_buf *b = (fuzz_buf *)ctx;
    if (b->limit != 0 && size > b->limit - b->size) return 0;
    if (size > b->cap - b->size) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap - b->size < size) cap *= 2;
        unsigned char *d = (unsigned char *)realloc(b->data, cap);
        if (d == NULL) return 0;
        b->data = d;
        b->cap = cap;
    }
    if (size) memcpy(b->data + b->size, data, size);
    b->size += size;
    return size;
}

static inline size_t fuzz_buf_read(void *ctx, void *data, size_t size) {
    fuzz_buf *b = (fuzz_buf *)ctx;
    size_t left = b->size - b->at;
    if (size > left) size = left;
    if (size) memcpy(data, b->data + b->at, size);
    b->at += size;
    return size;
}

#endif /* OPOOL_FUZZ_H */
