/*
 * eva_support.c -- what the EVA harness (eva_core.c) links in place of the
 * platform layer: the default allocator, the clock, and the rounding of an address
 * (OPOOL__PAD, see frama_c.h), computed exactly from the block it lies in.
 */
#include "eva_support.h"

#include "__fc_builtin.h"

#include <stdint.h>
#include <stdlib.h>

/* Every block the allocator hands out, and every caller's buffer, lies at an
 * address whose residue modulo 4096 the harness picks (opool_proof_misalign):
 * the analysis then knows each address's alignment exactly, and each
 * harness call picks another residue. */
size_t opool_proof_misalign;
static const char *last_block; /* the block opool__build is rounding within */

void opool_proof_block(const void *block) { last_block = (const char *)block; }

size_t opool_proof_pad(const void *a, size_t align) {
    /* a lies in the last block handed out: opool__build rounds the creation
     * block, or the caller's buffer, and nothing else */
    size_t at = opool_proof_misalign + (size_t)((const char *)a - last_block);
    return (align - at % align) % align;
}

/* The monotonic clock (opool_platform.c), which rations exhaustion reports:
 * any second at all, so that both of the ration's answers are analysed. */
unsigned long long opool__now_ns(void) {
    return (unsigned long long)Frama_C_unsigned_int_interval(0, 7) * 1000000000u;
}

void *opool__sys_alloc(void *ctx, size_t size, size_t align) {
    (void)ctx;
    (void)align;
    void *b = malloc(size);
    if (b != NULL) opool_proof_block(b);
    return b;
}

void opool__sys_free(void *ctx, void *ptr, size_t size) {
    (void)ctx;
    (void)size;
    free(ptr);
}
