/* proof/frama_c.h -- forced into every file Frama-C parses (-include): what
 * its C library and parser lack that the core uses, and the rounding of
 * addresses the analyzers can follow. */
#ifndef OPOOL_PROOF_FRAMA_C_H
#define OPOOL_PROOF_FRAMA_C_H
#include <stddef.h>

/* Frama-C's <stddef.h> has no max_align_t (x86-64: long double's 16) */
typedef long double max_align_t;

/* The core needs three functions and the cache line of opool_platform.h,
 * whose other declarations (the concurrent pool's, with the _Atomic(T) form
 * that Frama-C 25 does not parse) it never uses: these stand in for it. */
#define OPOOL_PLATFORM_H
void *opool__sys_alloc(void *ctx, size_t size, size_t align);
void opool__sys_free(void *ctx, void *ptr, size_t size);
unsigned long long opool__now_ns(void); /* the ration of reports (opool_diag.c) */
#define OPOOL__LINE 64                  /* the cache line, which the pool's layout names */

/* No sanitizer's runtime in the analysed program: no weak references to
 * one (opool_track.h), which the analyzers would take for defined functions. */
#define OPOOL_NO_WEAK_SANITIZERS 1

/* The library's exported names, without their visibility attribute, which
 * Frama-C attaches to the return type: a handle returned by an exported
 * function would be cast to that type, which EVA reads as bits reinterpreted
 * (losing the value). Visibility means nothing to the analyzers. */
#define OPOOL_API

/* The atomic fields of opool_abi.h's layouts: Frama-C ignores _Atomic (its
 * <stdatomic.h> defines it to nothing), but opool.h includes no such header,
 * so they are spelled plain here, as its libc would make them. */
#define OPOOL__ATOMIC(T) T

/* opool_internal.h's rounding of an address, whose bit mask on an address
 * neither EVA nor WP follows: the same padding, computed from the address's
 * offset in its block and the block's residue the harness chose
 * (eva_support.c; no function WP proves rounds an address). */
size_t opool_proof_pad(const void *a, size_t align);
#define OPOOL__PAD(a, align) opool_proof_pad(a, align)

/* opool_internal.h's "a may lie in b's block" (1 in C, where opool_handle_of
 * compares addresses as integers): the analyzers relate an address turned
 * into an integer to its block only within that block, so the test says
 * whether a and b point into one block (an assumed contract: blocks apart
 * share no address, EVA's model of memory). */
/*@ assigns \result \from a, b;
  @ behavior one: assumes \base_addr(a) == \base_addr(b); ensures \result == 1;
  @ behavior apart: assumes \base_addr(a) != \base_addr(b); ensures \result == 0;
  @ complete behaviors; disjoint behaviors; */
int opool_proof_same_block(const void *a, const void *b);
#define OPOOL__SAME_BLOCK(a, b) opool_proof_same_block(a, b)

/* Frama-C knows __builtin_clzll only by a contract (a result below 64),
 * which loses which chunk an index is in: the same count, as a loop EVA
 * follows value by value. */
static inline int opool_proof_clzll(unsigned long long x) {
    int n = 64;
    for (; x != 0; x >>= 1) n--;
    return n;
}
#define __builtin_clzll(x) opool_proof_clzll(x)
#endif
