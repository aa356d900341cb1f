/* cycle_loop_b.h -- see cycle_loop_a.h. */
#ifndef CYCLE_LOOP_B_H
#define CYCLE_LOOP_B_H
#include "cycle_loop_a.h"
#endif
