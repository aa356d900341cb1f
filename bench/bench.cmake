# bench/bench.cmake -- included at the end of CMakeLists.txt's OPOOL_BUILD_BENCH section.
#
# A replacement malloc takes over the whole program that links it, so a benchmark that compares
# mallocs is built once per allocator (bench/bench_child.h has the C side):
#
#   <name>              glibc malloc and every other subject: the target the generic bench/*.c
#                       rule of CMakeLists.txt already makes from the source (BENCH_ALLOC defaults
#                       to glibc, so nothing is added to it here).
#   <name>_mimalloc     linked with libmimalloc         \  the malloc subject only; <name> runs
#   <name>_jemalloc     linked with libjemalloc          > each one it finds next to itself
#   <name>_tcmalloc     linked with libtcmalloc_minimal / (--child) and merges the rows
#
# opool_bench_per_malloc(<name> <source>) adds the three; a library (or its header) that is not
# found skips its program, with a one-line note here, and <name> notes the missing program in its
# output. Used by bench_mt (concurrent pools) and bench_heap (opool_heap). Concurrency Kit
# (ck_stack.h) is header-only and detected by bench_mt.c itself.

function(opool_bench_per_malloc name src)
    if(NOT TARGET ${name})
        return()
    endif()
    string(TOUPPER "${CMAKE_BUILD_TYPE}" _bt)
    string(STRIP "${CMAKE_C_FLAGS} ${CMAKE_C_FLAGS_${_bt}} -O2" _flags)
    foreach(_alloc mimalloc jemalloc tcmalloc)
        if(_alloc STREQUAL "mimalloc")
            set(_libs mimalloc)
            set(_header mimalloc.h)
        elseif(_alloc STREQUAL "jemalloc")
            set(_libs jemalloc)
            set(_header jemalloc/jemalloc.h)
        else()
            set(_libs tcmalloc_minimal tcmalloc)
            set(_header gperftools/tcmalloc.h)
        endif()
        # cached: found once for every benchmark
        find_library(OPOOL_BENCH_${_alloc}_LIB NAMES ${_libs})
        find_path(OPOOL_BENCH_${_alloc}_INCLUDE NAMES ${_header})
        if(NOT OPOOL_BENCH_${_alloc}_LIB OR NOT OPOOL_BENCH_${_alloc}_INCLUDE)
            message(STATUS "opool: ${name}_${_alloc} skipped: lib${_alloc} or ${_header} "
                           "not found")
            continue()
        endif()
        set(_target ${name}_${_alloc})
        opool_program(${_target} "${src}" ${OPOOL_BENCH_SUPPORT})
        target_include_directories(${_target} PRIVATE
            "${PROJECT_SOURCE_DIR}/bench" "${OPOOL_BENCH_${_alloc}_INCLUDE}")
        target_link_libraries(${_target} PRIVATE "${OPOOL_BENCH_${_alloc}_LIB}")
        string(TOUPPER "${_alloc}" _upper)
        if(NOT MSVC)
            target_compile_options(${_target} PRIVATE -O2)
        endif()
        target_compile_definitions(${_target} PRIVATE NDEBUG "OPOOL_BENCH_FLAGS=\"${_flags}\""
            BENCH_ALLOC=BENCH_ALLOC_${_upper})
        set_target_properties(${_target} PROPERTIES
            RUNTIME_OUTPUT_DIRECTORY "${PROJECT_BINARY_DIR}")
    endforeach()
endfunction()

opool_bench_per_malloc(bench_mt "${PROJECT_SOURCE_DIR}/bench/bench_mt.c")
opool_bench_per_malloc(bench_heap "${PROJECT_SOURCE_DIR}/bench/bench_heap.c")
