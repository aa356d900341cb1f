/*
 * dist_impl.c -- the C file that compiles the library from dist/opool.h for
 * the C++ program dist_main.cpp (the implementation is C11; C++ files only
 * include the header).
 */
#define OPOOL_IMPLEMENTATION
#include "opool.h"
