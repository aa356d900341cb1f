/* cycle_b.c -- see cycle_a.c. */
int cycle_a(int n);
int cycle_b(int n) { return n > 0 ? cycle_a(n - 1) : 1; }
