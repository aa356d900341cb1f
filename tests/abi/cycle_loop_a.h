/* cycle_loop_a.h, cycle_loop_b.h -- two headers that include each other: the include loop the
 * test abi_acyclic_catches_a_header_cycle must find. */
#ifndef CYCLE_LOOP_A_H
#define CYCLE_LOOP_A_H
#include "cycle_loop_b.h"
#endif
