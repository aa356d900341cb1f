/* cycle_b.c -- see cycle_a.c. */
#include "cycle_upward.h"
int cycle_a(int n);
int cycle_b(int n) { return n > 0 ? cycle_a(n - 1) : cycle_upward(-1) - 1; }
