// dist_main.cpp -- dist/opool.h from C++17: the API and the typed pools of
// dist_exercise.h compiled as C++, calling the library that dist_impl.c
// compiles as C (extern "C" linkage proven by the link). Exits non-zero on
// any mismatch.
#include "opool.h"

#include "dist_exercise.h"

#include <type_traits>

// The typed API's types, as C++ sees them.
static_assert(
    std::is_same<decltype(dist_pool_get(nullptr, dist_pool_handle_null())), dist_thing *>::value,
    "get returns the object type");
static_assert(!std::is_convertible<opool_handle, dist_pool_handle>::value,
              "a bare handle does not convert to a typed one");
static_assert(!std::is_convertible<dist_pool *, opool *>::value,
              "a typed pool does not convert to an untyped one");
static_assert(sizeof(dist_pool_handle) == sizeof(opool_handle), "a typed handle is 8 bytes");

int main() {
    int failures = dist_exercise("dist_main.cpp (C++17)");
    printf("%s\n", failures ? "FAILED" : "dist_main.cpp: all ok");
    return failures != 0;
}
