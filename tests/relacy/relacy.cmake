# tests/relacy/relacy.cmake -- opool_mt's real code under Relacy, a checker of the C++11 memory
# model (included by tests/tests.cmake; see tests/relacy/README.md). Label mt.
#
#   relacy_freelist                      the shared free list (src/opool_mt_list.h) with its
#                                        shipped memory orders: must pass
#   relacy_freelist_catches_untagged     the head without its ABA tag: Relacy must fail it
#   relacy_freelist_catches_weak_push    built with OPOOL_RELACY_WEAK_PUSH (the push's CAS
#                                        relaxed instead of seq_cst, relacy_atomics.h):
#                                        Relacy must fail it
#   relacy_deque                         a cache's owner against passing thieves
#                                        (src/opool_mt_cache.c included whole; the fence
#                                        path): must pass
#   relacy_deque_catches_nobarrier       the membarrier path with a membarrier that does
#                                        nothing: Relacy must fail it
#   The cache record (opool_abi_mt.h) has no flexible array any more (its entries follow it), so
#   the deque tests build with any C++ compiler and the strict warnings.
#
# Built only with a C++ compiler, the Relacy headers (Debian: relacy-dev) and no sanitizer:
# Relacy runs its threads as fibers on one thread, which ThreadSanitizer and AddressSanitizer
# do not follow. The programs link nothing of the library: the list is inline.

# OPOOL_TEST_RELACY=OFF leaves them out: they check the algorithms under Relacy's scheduler,
# which is the same whatever the compiler, so make test runs them in one build (build/gcc);
# what the other build gives up is its compiler's warnings on the Relacy configuration.
if(NOT CMAKE_CXX_COMPILER)
    return()
endif()
if(NOT OPOOL_TEST_RELACY)
    message(STATUS "opool: relacy tests left to another build (OPOOL_TEST_RELACY=OFF)")
    return()
endif()
if(OPOOL_SANITIZE)
    message(STATUS "opool: relacy tests skipped (sanitizer build)")
    return()
endif()
find_path(OPOOL_RELACY_INCLUDE_DIR relacy/relacy.hpp)
if(NOT OPOOL_RELACY_INCLUDE_DIR)
    message(STATUS "opool: relacy tests skipped (relacy/relacy.hpp not found; Debian: relacy-dev)")
    return()
endif()

foreach(variant IN ITEMS "" _weak)
    set(target relacy_freelist${variant})
    add_executable(${target} "${PROJECT_SOURCE_DIR}/tests/relacy/freelist.cpp")
    # Relacy's headers are system headers: the strict warnings stay on for the test's own code.
    target_include_directories(${target} SYSTEM PRIVATE "${OPOOL_RELACY_INCLUDE_DIR}")
    target_include_directories(${target} PRIVATE "${PROJECT_SOURCE_DIR}/tests/relacy"
        "${PROJECT_SOURCE_DIR}/src")
    target_compile_definitions(${target} PRIVATE OPOOL_RELACY=1)
    opool_warnings(${target})
endforeach()
target_compile_definitions(relacy_freelist_weak PRIVATE OPOOL_RELACY_WEAK_PUSH=1)

add_test(NAME relacy_freelist COMMAND relacy_freelist ok)
add_test(NAME relacy_freelist_catches_untagged COMMAND relacy_freelist untagged)
add_test(NAME relacy_freelist_catches_weak_push COMMAND relacy_freelist_weak)
set_tests_properties(relacy_freelist relacy_freelist_catches_untagged
    relacy_freelist_catches_weak_push PROPERTIES TIMEOUT ${OPOOL_TEST_TIMEOUT} LABELS mt)

add_executable(relacy_deque "${PROJECT_SOURCE_DIR}/tests/relacy/deque.cpp")
target_include_directories(relacy_deque SYSTEM PRIVATE "${OPOOL_RELACY_INCLUDE_DIR}")
target_include_directories(relacy_deque PRIVATE "${PROJECT_SOURCE_DIR}/tests/relacy"
    "${PROJECT_SOURCE_DIR}/src" "${PROJECT_SOURCE_DIR}/include")
target_compile_definitions(relacy_deque PRIVATE OPOOL_RELACY=1)
opool_warnings(relacy_deque)
add_test(NAME relacy_deque COMMAND relacy_deque ok)
add_test(NAME relacy_deque_catches_nobarrier COMMAND relacy_deque nobarrier)
set_tests_properties(relacy_deque relacy_deque_catches_nobarrier
    PROPERTIES TIMEOUT ${OPOOL_TEST_TIMEOUT} LABELS mt)
