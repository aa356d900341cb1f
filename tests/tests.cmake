# tests/tests.cmake -- included last by CMakeLists.txt (inside if(OPOOL_BUILD_TESTS)).
#
# Debug safety net under Valgrind (docs/DEBUGGING.md): tests/programs/debug_valgrind.c run
# under memcheck, once per mode. Two kinds of test:
#   debug_valgrind_<mode>          opool_add_valgrind_test: any memcheck error FAILS it
#                                  (negative controls: valid use is silent)
#   debug_valgrind_catches_<mode>  valgrind_expect.cmake: PASSES only if memcheck reports
#                                  exactly the expected error (the misuse is caught)
# Only in builds without sanitizers, with valgrind installed and <valgrind/memcheck.h>
# found (the library's client requests exist only then); skipped otherwise, with a notice.
#
# First, the typed pools' compile-time proofs (tests/typed/typed.cmake), the single-header
# distribution's tests (cmake/dist.cmake) and the API reference's completeness check: before
# the Valgrind part, which returns early.

set_tests_properties(test_mt PROPERTIES LABELS mt) # tests/test_mt.c: opool_mt, one thread

# ---- opool_mt stress: tests/test_mt_stress.c ----------------------------------------------
# test_mt_stress (made by the tests/test_*.c glob) runs in the ThreadSanitizer stage too:
# label mt. test_mt_stress_portable is the same file against a second copy of the library,
# opool_mt_portable, built with the portable waiting (pthread mutex and condition variable
# instead of the futex: OPOOL_MT_PORTABLE_WAIT) and the fence-based park barrier (seq_cst
# fences on both sides instead of membarrier: OPOOL_MT_NO_MEMBARRIER). It links that copy
# only, never opool::opool as well (every symbol would be defined twice), so it is put
# together here rather than by opool_add_test.
set_tests_properties(test_mt_stress PROPERTIES LABELS mt)

add_library(opool_mt_portable STATIC ${OPOOL_SOURCES})
# The opool target's include directories, definitions and options (warnings), plus the two.
target_include_directories(opool_mt_portable
    PUBLIC "${PROJECT_SOURCE_DIR}/include"
    PRIVATE $<TARGET_PROPERTY:opool,INCLUDE_DIRECTORIES>)
target_compile_definitions(opool_mt_portable PRIVATE
    $<TARGET_PROPERTY:opool,COMPILE_DEFINITIONS> OPOOL_MT_PORTABLE_WAIT=1 OPOOL_MT_NO_MEMBARRIER=1)
target_compile_options(opool_mt_portable PRIVATE $<TARGET_PROPERTY:opool,COMPILE_OPTIONS>)
set_target_properties(opool_mt_portable PROPERTIES
    C_STANDARD 11 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
if(Threads_FOUND)
    target_link_libraries(opool_mt_portable PUBLIC Threads::Threads)
endif()
if(OPOOL_NEEDS_LIBATOMIC)
    target_link_libraries(opool_mt_portable PUBLIC atomic)
endif()

add_executable(test_mt_stress_portable "${PROJECT_SOURCE_DIR}/tests/test_mt_stress.c")
target_link_libraries(test_mt_stress_portable PRIVATE opool_mt_portable)
if(OPOOL_LIBM)
    target_link_libraries(test_mt_stress_portable PRIVATE ${OPOOL_LIBM})
endif()
target_include_directories(test_mt_stress_portable PRIVATE
    "${PROJECT_SOURCE_DIR}/tests" "${PROJECT_SOURCE_DIR}/src")
target_compile_definitions(test_mt_stress_portable PRIVATE ${OPOOL_TEST_DEFINITIONS})
target_compile_options(test_mt_stress_portable PRIVATE ${OPOOL_UNDEBUG})
opool_warnings(test_mt_stress_portable)
opool_register_test(test_mt_stress_portable test_mt_stress_portable)
set_tests_properties(test_mt_stress_portable PROPERTIES LABELS mt)
# ---- end of opool_mt stress ----------------------------------------------------------------

# opool_mt with a thread held at a named point of the protocol: the test-support copy of the
# library built with OPOOL_TEST_HOOKS, test_mt_points, and the check that the shipped library
# has no hook (tests/points/points.cmake).
include("${PROJECT_SOURCE_DIR}/tests/points/points.cmake")

include("${PROJECT_SOURCE_DIR}/tests/typed/typed.cmake")
include("${PROJECT_SOURCE_DIR}/cmake/dist.cmake")

# docs/API.md keeps an entry for every public name of include/*.h (tests/docs/api_doc_complete.cmake
# lists the missing ones). Needs no compiler: label docs.
add_test(NAME api_doc_complete
    COMMAND "${CMAKE_COMMAND}" "-DHEADERS=${OPOOL_PUBLIC_HEADERS}"
            "-DDOC=${PROJECT_SOURCE_DIR}/docs/API.md"
            -P "${PROJECT_SOURCE_DIR}/tests/docs/api_doc_complete.cmake")
set_tests_properties(api_doc_complete PROPERTIES TIMEOUT ${OPOOL_TEST_TIMEOUT} LABELS docs)

if(OPOOL_SANITIZE OR NOT OPOOL_VALGRIND_EXE OR NOT OPOOL_HAVE_VALGRIND_H)
    if(OPOOL_SANITIZE)
        set(_why "a sanitizer build")
    elseif(NOT OPOOL_VALGRIND_EXE)
        set(_why "valgrind not found")
    else()
        set(_why "<valgrind/memcheck.h> not found (apt-get install valgrind)")
    endif()
    message(STATUS "opool: debug_valgrind tests skipped: ${_why}")
    return()
endif()

opool_program(debug_valgrind "${PROJECT_SOURCE_DIR}/tests/programs/debug_valgrind.c")
target_compile_definitions(debug_valgrind PRIVATE ${OPOOL_TEST_DEFINITIONS})
# -O2 whatever the build type: the checker must work on optimised callers (the inline fast
# paths give way to the out-of-line path once the pool has seen Valgrind).
if(NOT MSVC)
    # DWARF 4: Valgrind 3.19 cannot read clang-14's default DWARF 5, and the tests look for
    # the function names in its reports.
    target_compile_options(debug_valgrind PRIVATE -O2 -g -gdwarf-4)
endif()

# Negative controls: memcheck must find nothing (leaks included).
foreach(_mode clean zero-reuse init-reuse)
    opool_add_valgrind_test(debug_valgrind_${_mode} debug_valgrind ${_mode})
endforeach()

# The misuse must be caught. A function per expectation: NAME MODE EXPECT [FRAME] [ORIGIN].
function(opool_add_valgrind_expect name mode expect)
    set(_extra "")
    if(ARGC GREATER 3)
        list(APPEND _extra "-DEXPECT_FRAME=${ARGV3}")
    endif()
    if(ARGC GREATER 4)
        list(APPEND _extra "-DEXPECT_ORIGIN=${ARGV4}")
    endif()
    file(MAKE_DIRECTORY "${OPOOL_TEST_WORK_DIR}/${name}")
    add_test(NAME ${name}
        COMMAND "${CMAKE_COMMAND}" "-DVALGRIND=${OPOOL_VALGRIND_EXE}"
                "-DPROGRAM=$<TARGET_FILE:debug_valgrind>" "-DMODE=${mode}" "-DEXPECT=${expect}"
                ${_extra} -P "${PROJECT_SOURCE_DIR}/tests/programs/valgrind_expect.cmake"
        WORKING_DIRECTORY "${OPOOL_TEST_WORK_DIR}/${name}")
    set_tests_properties(${name} PROPERTIES TIMEOUT ${OPOOL_TEST_TIMEOUT} LABELS valgrind)
endfunction()

opool_add_valgrind_expect(debug_valgrind_catches_uninit_reuse uninit-reuse
    "Conditional jump or move depends on uninitialised value"
    "branch_on_reused[.a-z0-9]* \\([^)]*debug_valgrind.c:"
    "Uninitialised value was created by a client request.*at 0x[0-9A-F]+: opool__track_on_reuse.*by 0x[0-9A-F]+: opool__prepare")
opool_add_valgrind_expect(debug_valgrind_catches_read_freed read-freed
    "Invalid read of size 4" "read_freed \\([^)]*debug_valgrind.c:")
opool_add_valgrind_expect(debug_valgrind_catches_write_freed write-freed
    "Invalid write of size 4" "write_freed \\([^)]*debug_valgrind.c:")
opool_add_valgrind_expect(debug_valgrind_catches_read_never read-never
    "Invalid read of size 4" "read_never \\([^)]*debug_valgrind.c:")
opool_add_valgrind_expect(debug_valgrind_catches_read_grown read-grown
    "Invalid read of size 4" "read_grown \\([^)]*debug_valgrind.c:")
