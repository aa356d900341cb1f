/*
 * dist_static_peer.c -- a second, independent OPOOL_STATIC copy of the
 * library in the same program as dist_static.c (see there).
 */
#define OPOOL_STATIC
#define OPOOL_IMPLEMENTATION
#include "opool.h"

#include "dist_exercise.h"

int dist_static_peer(void);

int dist_static_peer(void) { return dist_exercise("dist_static_peer.c (its own static copy)"); }
