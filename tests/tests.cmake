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

# Derived salts depend on nothing but the order of creation: a fresh process prints the same
# first generations on every run and every platform (tests/test_pool.c, run under the
# cross-build's emulator by CTest).
add_test(NAME derived_salt_is_the_same_run_after_run
    COMMAND test_pool --print-derived-generations)
set_tests_properties(derived_salt_is_the_same_run_after_run PROPERTIES
    PASS_REGULAR_EXPRESSION "^92ca2f0f\r?\n3cd6e3f3\r?\n1b147dcd\r?\n$")

# opool_draw_svg's pictures rendered by a real SVG renderer, whose image must have the size and
# the colours the picture declares (tests/test_draw.c --render). Native builds with
# rsvg-convert (librsvg2-bin) and pngtopnm (netpbm) found; .ci/run installs both.
find_program(OPOOL_RSVG_EXE rsvg-convert)
find_program(OPOOL_PNGTOPNM_EXE pngtopnm)
if(NOT CMAKE_CROSSCOMPILING AND OPOOL_RSVG_EXE AND OPOOL_PNGTOPNM_EXE)
    add_test(NAME draw_renders
        COMMAND test_draw --render "${OPOOL_RSVG_EXE}" "${OPOOL_PNGTOPNM_EXE}" .
        WORKING_DIRECTORY "${OPOOL_TEST_WORK_DIR}/test_draw")
    set_tests_properties(draw_renders PROPERTIES TIMEOUT ${OPOOL_TEST_TIMEOUT})
elseif(NOT CMAKE_CROSSCOMPILING)
    message(STATUS "opool: rsvg-convert or pngtopnm not found: draw_renders not registered "
                   "(apt-get install librsvg2-bin netpbm)")
endif()

# Side tables take their memory from the C library: tests/programs/side_faults.c fails each of
# its allocations in turn during side and world loads, through the linker's --wrap (GNU ld and
# lld, on Linux; the cross builds for i686 and aarch64 too, not mingw nor emscripten).
if(CMAKE_SYSTEM_NAME STREQUAL "Linux" AND CMAKE_C_COMPILER_ID MATCHES "GNU|Clang")
    opool_add_test(side_faults "${PROJECT_SOURCE_DIR}/tests/programs/side_faults.c")
    target_link_options(side_faults PRIVATE
        "LINKER:--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=posix_memalign,--wrap=free")
endif()

# OPOOL_MISUSE (include/opool.h, MISUSE): tests/programs/misuse_env.c, a double free in a pool,
# a concurrent pool and a heap, run by misuse_expect.cmake with print, abort and another value.
# Not under emscripten: a program there sees emscripten's own environment (ENV), not node's.
opool_program(misuse_env "${PROJECT_SOURCE_DIR}/tests/programs/misuse_env.c")
set(_misuse_modes print abort quiet)
if(EMSCRIPTEN)
    set(_misuse_modes)
    message(STATUS "opool: misuse_env_* not registered: emscripten's getenv does not see node's")
endif()
foreach(mode IN LISTS _misuse_modes)
    add_test(NAME misuse_env_${mode}
        COMMAND "${CMAKE_COMMAND}" "-DPROGRAM=$<TARGET_FILE:misuse_env>" -DMODE=${mode}
                "-DEMULATOR=${CMAKE_CROSSCOMPILING_EMULATOR}"
                -P "${PROJECT_SOURCE_DIR}/tests/programs/misuse_expect.cmake")
    set_tests_properties(misuse_env_${mode} PROPERTIES TIMEOUT ${OPOOL_TEST_TIMEOUT})
endforeach()

# ---- test support: tests/support/*.c ------------------------------------------------------
# Test-only code that needs the library's private records (the invariant checkers opool__check
# and opool__mt_check, opool__mt_set_gen) lives in the static library opool_test_support
# (CMakeLists.txt), which every test links, never in the shipped opool nor in dist/opool.h
# (tools/amalgamate.cmake takes src/ only). The copies of the library built below for other
# configurations compile these sources into themselves, with their own definitions (a private
# record may differ between configurations).
file(GLOB OPOOL_TEST_SUPPORT_SOURCES CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/tests/support/*.c")

# opool_add_library_copy(NAME DEFINITIONS...): a second copy of the library, from the same
# sources plus the test support, with the opool target's include directories, definitions and
# options (warnings) plus DEFINITIONS (PUBLIC). A program links such a copy only, never
# opool::opool as well (every symbol would be defined twice).
function(opool_add_library_copy name)
    add_library(${name} STATIC ${OPOOL_SOURCES} ${OPOOL_TEST_SUPPORT_SOURCES})
    target_include_directories(${name}
        PUBLIC "${PROJECT_SOURCE_DIR}/include" "${PROJECT_SOURCE_DIR}/tests/support"
        PRIVATE $<TARGET_PROPERTY:opool,INCLUDE_DIRECTORIES>)
    target_compile_definitions(${name}
        PRIVATE $<TARGET_PROPERTY:opool,COMPILE_DEFINITIONS> PUBLIC ${ARGN})
    target_compile_options(${name} PRIVATE $<TARGET_PROPERTY:opool,COMPILE_OPTIONS>)
    set_target_properties(${name} PROPERTIES C_STANDARD 11 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
    if(Threads_FOUND)
        target_link_libraries(${name} PUBLIC Threads::Threads)
    endif()
    if(OPOOL_NEEDS_LIBATOMIC)
        target_link_libraries(${name} PUBLIC atomic)
    endif()
    if(OPOOL_SYSTEM_LIBS)
        target_link_libraries(${name} PUBLIC ${OPOOL_SYSTEM_LIBS})
    endif()
endfunction()

# opool_add_copy_test(NAME SOURCE LIBRARY): test NAME, SOURCE built against LIBRARY (a copy).
function(opool_add_copy_test name source library)
    add_executable(${name} "${source}")
    target_link_libraries(${name} PRIVATE ${library})
    if(OPOOL_LIBM)
        target_link_libraries(${name} PRIVATE ${OPOOL_LIBM})
    endif()
    target_include_directories(${name} PRIVATE
        "${PROJECT_SOURCE_DIR}/tests" "${PROJECT_SOURCE_DIR}/src")
    target_compile_definitions(${name} PRIVATE ${OPOOL_TEST_DEFINITIONS})
    target_compile_options(${name} PRIVATE ${OPOOL_UNDEBUG})
    opool_warnings(${name})
    opool_register_test(${name} ${name})
endfunction()

# ---- the portable build: every Linux and POSIX-specific path off ---------------------------
# opool_portable is the whole library built with OPOOL_PORTABLE (src/opool_platform.h): the
# portable waiting (pthread mutex and condition variable instead of the futex), the
# fence-based park barrier (seq_cst fences on both sides instead of membarrier), and
# opool_save_file with C stdio alone (no fsync, no directory sync, no process id). What runs
# against it:
#   test_mt_stress_portable  tests/test_mt_stress.c (label mt: the ThreadSanitizer stage too)
#   test_save_portable       tests/test_save.c, opool_save_file included
opool_add_library_copy(opool_portable OPOOL_PORTABLE=1)
if(OPOOL_CAN_START_THREADS) # not in a single-threaded wasm build (CMakeLists.txt)
    set_tests_properties(test_mt_stress PROPERTIES LABELS mt)
    opool_add_copy_test(test_mt_stress_portable "${PROJECT_SOURCE_DIR}/tests/test_mt_stress.c"
        opool_portable)
    # it checks what that build promises (no thread holds a stripe alone)
    target_compile_definitions(test_mt_stress_portable PRIVATE OPOOL_PORTABLE=1)
    set_tests_properties(test_mt_stress_portable PROPERTIES LABELS mt)
    if(CMAKE_CROSSCOMPILING)
        # Under an emulator or node their spinning threads share the two cores with whatever
        # else runs (wasm32: 140-170 s of the 300 s timeout beside other tests, 26 s alone).
        set_tests_properties(test_mt_stress test_mt_stress_portable PROPERTIES RUN_SERIAL TRUE)
    endif()
endif()
opool_add_copy_test(test_save_portable "${PROJECT_SOURCE_DIR}/tests/test_save.c" opool_portable)
# ---- end of the portable build ------------------------------------------------------------

# gdb and lldb printing handles and pools (tests/debugger/debugger.cmake).
include("${PROJECT_SOURCE_DIR}/tests/debugger/debugger.cmake")

# opool_mt with a thread held at a named point of the protocol: the test-support copy of the
# library built with OPOOL_TEST_HOOKS, test_mt_points, and the check that the shipped library
# has no hook (tests/points/points.cmake).
include("${PROJECT_SOURCE_DIR}/tests/points/points.cmake")

# opool_mt's free list under the Relacy memory-model checker, when its headers are found
# (tests/relacy/relacy.cmake).
include("${PROJECT_SOURCE_DIR}/tests/relacy/relacy.cmake")

include("${PROJECT_SOURCE_DIR}/tests/typed/typed.cmake")
include("${PROJECT_SOURCE_DIR}/tests/cpp/cpp.cmake")
include("${PROJECT_SOURCE_DIR}/cmake/dist.cmake")

# docs/API.md is generated from the comments of include/*.h by tools/apidoc.cmake (make docs).
# Need no compiler: label docs.
#   api_doc_up_to_date  regenerates it into the build directory and fails, telling to run
#                       `make docs`, when the committed file differs; the generator itself
#                       fails when a public declaration has no comment block
#   api_doc_rejects_an_undocumented_declaration
#                       that refusal, on a copy of the headers given one undocumented function
file(MAKE_DIRECTORY "${OPOOL_TEST_WORK_DIR}/api_doc_up_to_date")
add_test(NAME api_doc_up_to_date
    COMMAND "${CMAKE_COMMAND}" -DCHECK=ON "-DOUT=${PROJECT_BINARY_DIR}/generated/docs/API.md"
            -P "${PROJECT_SOURCE_DIR}/tools/apidoc.cmake"
    WORKING_DIRECTORY "${OPOOL_TEST_WORK_DIR}/api_doc_up_to_date")
file(MAKE_DIRECTORY "${OPOOL_TEST_WORK_DIR}/api_doc_undocumented")
add_test(NAME api_doc_rejects_an_undocumented_declaration
    COMMAND "${CMAKE_COMMAND}" "-DSOURCE_DIR=${PROJECT_SOURCE_DIR}"
            "-DWORK=${OPOOL_TEST_WORK_DIR}/api_doc_undocumented"
            -P "${PROJECT_SOURCE_DIR}/tests/docs/undocumented.cmake"
    WORKING_DIRECTORY "${OPOOL_TEST_WORK_DIR}/api_doc_undocumented")
set_tests_properties(api_doc_up_to_date api_doc_rejects_an_undocumented_declaration
    PROPERTIES TIMEOUT ${OPOOL_TEST_TIMEOUT} LABELS docs)

# The figure tables of README.md, docs/BENCHMARKS.md and docs/DEBUGGING.md are generated from
# the results files of docs/results by tools/benchtables.py (make bench-tables); no benchmark
# runs here. Label docs.
#   bench_tables_up_to_date  fails, telling to run `make bench-tables`, when a table between
#                            `<!-- bench: ... -->` markers differs from what the results file
#                            it names gives (a figure edited by hand, or a new results file)
#   bench_tables_reject_an_edited_figure
#                            that refusal, on a copy of README.md with one figure changed
find_program(OPOOL_PYTHON3 NAMES python3)
if(OPOOL_PYTHON3)
    add_test(NAME bench_tables_up_to_date
        COMMAND "${OPOOL_PYTHON3}" "${PROJECT_SOURCE_DIR}/tools/benchtables.py" --check
                --root "${PROJECT_SOURCE_DIR}")
    file(MAKE_DIRECTORY "${OPOOL_TEST_WORK_DIR}/bench_tables_edited")
    add_test(NAME bench_tables_reject_an_edited_figure
        COMMAND "${CMAKE_COMMAND}" "-DSOURCE_DIR=${PROJECT_SOURCE_DIR}" "-DPYTHON=${OPOOL_PYTHON3}"
                "-DWORK=${OPOOL_TEST_WORK_DIR}/bench_tables_edited"
                -P "${PROJECT_SOURCE_DIR}/tests/docs/edited_figure.cmake"
        WORKING_DIRECTORY "${OPOOL_TEST_WORK_DIR}/bench_tables_edited")
    set_tests_properties(bench_tables_up_to_date bench_tables_reject_an_edited_figure
        PROPERTIES TIMEOUT ${OPOOL_TEST_TIMEOUT} LABELS docs)
else()
    message(STATUS "opool: no python3: the tests bench_tables_* are not registered")
endif()

# ---- exports of the shared library: tests/abi/exports.cmake ---------------------------------
# abi_exports: `nm -D --defined-only` of the shared library lists every public function of
# include/*.h and nothing with the opool__ prefix but the ABI slow paths of opool_abi*.h.
# abi_exports_catches_a_missing_symbol: the same check, given one more declaration than the
# library defines, must name exactly that one. A build of the static library builds a shared
# copy for them (libopool.so, in abi/), with the shipped target's settings. ELF toolchains
# only; not in sanitizer builds (what they prove is about linkage, not memory).
if(NOT OPOOL_SANITIZE AND CMAKE_NM AND CMAKE_C_COMPILER_ID MATCHES "GNU|Clang"
   AND CMAKE_SYSTEM_NAME MATCHES "Linux|BSD")
    if(OPOOL_LIBRARY_TYPE STREQUAL "SHARED_LIBRARY")
        set(_abi_lib opool)
    else()
        opool_library(opool_abi_shared SHARED)
        set_target_properties(opool_abi_shared PROPERTIES
            OUTPUT_NAME opool LIBRARY_OUTPUT_DIRECTORY "${PROJECT_BINARY_DIR}/abi")
        set(_abi_lib opool_abi_shared)
    endif()
    set(_abi_missing "${PROJECT_BINARY_DIR}/generated/abi/opool_missing.h")
    file(WRITE "${_abi_missing}"
        "/* one more public function than the library defines */
OPOOL_API void opool_not_exported(void);
")
    add_test(NAME abi_exports
        COMMAND "${CMAKE_COMMAND}" "-DNM=${CMAKE_NM}" "-DLIB=$<TARGET_FILE:${_abi_lib}>"
                "-DHEADERS=${OPOOL_PUBLIC_HEADERS}" -P "${PROJECT_SOURCE_DIR}/tests/abi/exports.cmake")
    add_test(NAME abi_exports_catches_a_missing_symbol
        COMMAND "${CMAKE_COMMAND}" "-DNM=${CMAKE_NM}" "-DLIB=$<TARGET_FILE:${_abi_lib}>"
                "-DHEADERS=${OPOOL_PUBLIC_HEADERS};${_abi_missing}"
                -DEXPECT_MISSING=opool_not_exported
                -P "${PROJECT_SOURCE_DIR}/tests/abi/exports.cmake")
    set_tests_properties(abi_exports abi_exports_catches_a_missing_symbol PROPERTIES
        TIMEOUT ${OPOOL_TEST_TIMEOUT} LABELS abi)
endif()

# ---- an acyclic library: tests/abi/acyclic.cmake --------------------------------------------
# abi_acyclic: no two object files of the static library use each other, directly or around a
# loop (from `nm -A` of the archive); and the files of src/ and include/ have no include loop,
# and no header of src/ calls a function defined in a file that includes it, but its own .c.
# abi_acyclic_catches_a_cycle: the same check must find the cycle of a two-file archive built
# for it (tests/abi/cycle_a.c, cycle_b.c); abi_acyclic_catches_a_header_cycle: the headers
# those files include (tests/abi/cycle_*.h) must give it an include loop and a header that
# calls a file above it. The same run checks the layers: the base layer (the operating system's
# part and the reports) includes no pool's private layout, directly or not;
# abi_layers_catch_an_upward_include must find cycle_a.c's include of cycle_loop_b.h (through
# cycle_loop_a.h).
if(CMAKE_NM AND CMAKE_C_COMPILER_ID MATCHES "GNU|Clang" AND NOT MINGW AND NOT EMSCRIPTEN)
    set(_acyclic_lib ${OPOOL_TEST_LIB})
    add_library(abi_cycle STATIC "${PROJECT_SOURCE_DIR}/tests/abi/cycle_a.c"
                                 "${PROJECT_SOURCE_DIR}/tests/abi/cycle_b.c")
    add_test(NAME abi_acyclic
        COMMAND "${CMAKE_COMMAND}" "-DNM=${CMAKE_NM}" "-DLIB=$<TARGET_FILE:${_acyclic_lib}>"
                "-DSOURCES=${PROJECT_SOURCE_DIR}/src;${PROJECT_SOURCE_DIR}/include"
                "-DPRIVATE=${PROJECT_SOURCE_DIR}/src"
                "-DBASE=opool_platform.h;opool_platform.c;opool_diag.h;opool_diag.c;opool_track.h;opool_track.c"
                "-DABOVE=opool_internal.h;opool_mt_internal.h"
                -P "${PROJECT_SOURCE_DIR}/tests/abi/acyclic.cmake")
    add_test(NAME abi_acyclic_catches_a_cycle
        COMMAND "${CMAKE_COMMAND}" "-DNM=${CMAKE_NM}" "-DLIB=$<TARGET_FILE:abi_cycle>"
                -DEXPECT_CYCLE=ON -P "${PROJECT_SOURCE_DIR}/tests/abi/acyclic.cmake")
    add_test(NAME abi_acyclic_catches_a_header_cycle
        COMMAND "${CMAKE_COMMAND}" "-DNM=${CMAKE_NM}" "-DLIB=$<TARGET_FILE:abi_cycle>"
                "-DSOURCES=${PROJECT_SOURCE_DIR}/tests/abi"
                "-DPRIVATE=${PROJECT_SOURCE_DIR}/tests/abi" -DPREFIX=cycle_
                -DEXPECT_HEADER_CYCLE=ON -P "${PROJECT_SOURCE_DIR}/tests/abi/acyclic.cmake")
    add_test(NAME abi_layers_catch_an_upward_include
        COMMAND "${CMAKE_COMMAND}" "-DNM=${CMAKE_NM}" "-DLIB=$<TARGET_FILE:abi_cycle>"
                "-DSOURCES=${PROJECT_SOURCE_DIR}/tests/abi"
                "-DPRIVATE=${PROJECT_SOURCE_DIR}/tests/abi" -DPREFIX=cycle_
                -DBASE=cycle_a.c -DABOVE=cycle_loop_b.h
                -DEXPECT_LAYER=ON -P "${PROJECT_SOURCE_DIR}/tests/abi/acyclic.cmake")
    set_tests_properties(abi_acyclic abi_acyclic_catches_a_cycle
        abi_acyclic_catches_a_header_cycle abi_layers_catch_an_upward_include PROPERTIES TIMEOUT ${OPOOL_TEST_TIMEOUT} LABELS abi)
endif()

if(OPOOL_SANITIZE OR CMAKE_CROSSCOMPILING OR NOT OPOOL_VALGRIND_EXE OR NOT OPOOL_HAVE_VALGRIND_H)
    if(OPOOL_SANITIZE)
        set(_why "a sanitizer build")
    elseif(CMAKE_CROSSCOMPILING)
        set(_why "a cross build")
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
    "Uninitialised value was created by a client request.*0x[0-9A-F]+: opool__track_on_reuse.*by 0x[0-9A-F]+: opool__prepare")
opool_add_valgrind_expect(debug_valgrind_catches_read_freed read-freed
    "Invalid read of size 4" "read_freed \\([^)]*debug_valgrind.c:")
opool_add_valgrind_expect(debug_valgrind_catches_write_freed write-freed
    "Invalid write of size 4" "write_freed \\([^)]*debug_valgrind.c:")
opool_add_valgrind_expect(debug_valgrind_catches_read_never read-never
    "Invalid read of size 4" "read_never \\([^)]*debug_valgrind.c:")
opool_add_valgrind_expect(debug_valgrind_catches_read_grown read-grown
    "Invalid read of size 4" "read_grown \\([^)]*debug_valgrind.c:")

