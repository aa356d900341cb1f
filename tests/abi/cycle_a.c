/* cycle_a.c, cycle_b.c -- two files that use each other: the archive the test
 * abi_acyclic_catches_a_cycle gives tests/abi/acyclic.cmake, which must find it. With the
 * headers they include (cycle_loop_a.h, cycle_upward.h), the sources of
 * abi_acyclic_catches_a_header_cycle. */
#include "cycle_loop_a.h"
int cycle_b(int n);
int cycle_a(int n) { return n > 0 ? cycle_b(n - 1) : 0; }
