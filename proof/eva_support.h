/* eva_support.h -- the EVA harness's stand-ins (eva_support.c). */
#ifndef OPOOL_PROOF_EVA_SUPPORT_H
#define OPOOL_PROOF_EVA_SUPPORT_H
#include <stddef.h>

extern size_t opool_proof_misalign;
void opool_proof_block(const void *block);
size_t opool_proof_pad(const void *a, size_t align);
#endif
