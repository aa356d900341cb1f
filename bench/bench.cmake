# bench/bench.cmake -- included at the end of CMakeLists.txt's OPOOL_BUILD_BENCH section.
#
# bench/bench_mt.c, the concurrent benchmark, measures malloc replacements, and a replacement
# malloc takes over the whole program that links it: so bench_mt.c is built once per allocator,
# BENCH_MT_ALLOC selecting which one its malloc subject names (and which version check it runs).
#
#   bench_mt            glibc malloc and every pool subject. This is the target the generic
#                       bench/*.c rule above already makes from bench_mt.c (it has a main());
#                       BENCH_MT_ALLOC defaults to glibc, so nothing is added to it here.
#   bench_mt_mimalloc   linked with libmimalloc         \  the malloc subject only; bench_mt
#   bench_mt_jemalloc   linked with libjemalloc          > runs each one it finds next to itself
#   bench_mt_tcmalloc   linked with libtcmalloc_minimal / (--child) and merges the rows
#
# A library (or its header) that is not found skips its program, with a one-line note here;
# bench_mt then notes the missing program in its output. Concurrency Kit (ck_stack.h) is
# header-only and detected by bench_mt.c itself.

if(NOT TARGET bench_mt)
    return()
endif()

string(TOUPPER "${CMAKE_BUILD_TYPE}" _bmt_bt)
string(STRIP "${CMAKE_C_FLAGS} ${CMAKE_C_FLAGS_${_bmt_bt}} -O2" _bmt_flags)

foreach(_bmt_alloc mimalloc jemalloc tcmalloc)
    if(_bmt_alloc STREQUAL "mimalloc")
        set(_bmt_libs mimalloc)
        set(_bmt_header mimalloc.h)
    elseif(_bmt_alloc STREQUAL "jemalloc")
        set(_bmt_libs jemalloc)
        set(_bmt_header jemalloc/jemalloc.h)
    else()
        set(_bmt_libs tcmalloc_minimal tcmalloc)
        set(_bmt_header gperftools/tcmalloc.h)
    endif()
    find_library(OPOOL_BENCH_${_bmt_alloc}_LIB NAMES ${_bmt_libs})
    find_path(OPOOL_BENCH_${_bmt_alloc}_INCLUDE NAMES ${_bmt_header})
    if(NOT OPOOL_BENCH_${_bmt_alloc}_LIB OR NOT OPOOL_BENCH_${_bmt_alloc}_INCLUDE)
        message(STATUS "opool: bench_mt_${_bmt_alloc} skipped: lib${_bmt_alloc} or ${_bmt_header} "
                       "not found")
        continue()
    endif()
    set(_bmt_target bench_mt_${_bmt_alloc})
    opool_program(${_bmt_target} "${PROJECT_SOURCE_DIR}/bench/bench_mt.c" ${OPOOL_BENCH_SUPPORT})
    target_include_directories(${_bmt_target} PRIVATE
        "${PROJECT_SOURCE_DIR}/bench" "${OPOOL_BENCH_${_bmt_alloc}_INCLUDE}")
    target_link_libraries(${_bmt_target} PRIVATE "${OPOOL_BENCH_${_bmt_alloc}_LIB}")
    string(TOUPPER "${_bmt_alloc}" _bmt_upper)
    if(NOT MSVC)
        target_compile_options(${_bmt_target} PRIVATE -O2)
    endif()
    target_compile_definitions(${_bmt_target} PRIVATE NDEBUG "OPOOL_BENCH_FLAGS=\"${_bmt_flags}\""
        BENCH_MT_ALLOC=BENCH_MT_${_bmt_upper})
    set_target_properties(${_bmt_target} PROPERTIES RUNTIME_OUTPUT_DIRECTORY "${PROJECT_BINARY_DIR}")
endforeach()
