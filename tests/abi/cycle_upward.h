/* cycle_upward.h -- a header whose inline code calls cycle_b(), which cycle_b.c defines and
 * cycle_b.c includes this header: a header that declares what it uses from a file above it.
 * The test abi_acyclic_catches_a_header_cycle must find it. */
#ifndef CYCLE_UPWARD_H
#define CYCLE_UPWARD_H
int cycle_b(int n);
static inline int cycle_upward(int n) { return cycle_b(n) + 1; }
#endif
