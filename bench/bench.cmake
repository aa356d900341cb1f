# bench/bench.cmake -- included at the end of CMakeLists.txt's OPOOL_BUILD_BENCH section.
#
# Subjects that must live in another process (bench/bench_child.h describes how a benchmark
# runs them and merges their rows):
#
# 1. Replacement mallocs. One takes over the whole program that links it, so a benchmark that
#    measures them is built once per allocator, BENCH_ALLOC selecting which one its malloc
#    subject names (and which version check it runs):
#
#      opool_bench, bench_mt,     glibc malloc and every other subject: the targets the
#      bench_heap                 generic bench/*.c rule in CMakeLists.txt makes
#      <program>_mimalloc         linked with libmimalloc         \  the malloc subject only;
#      <program>_jemalloc         linked with libjemalloc          > <program> runs each one it
#      <program>_tcmalloc         linked with libtcmalloc_minimal / finds beside itself (--child)
#
#    A library (or its header) that is not found skips its programs, with a one-line note
#    here; the benchmark then notes the missing program in its output.
#
# 2. Rust's slotmap crate (SlotMap, DenseSlotMap, HopSlotMap) and slab: bench/slotmap, a Cargo
#    project built offline against Debian's librust-slotmap-dev and librust-slab-dev
#    (bench/slotmap/.cargo/config.toml), into
#    opool_bench_slotmap beside opool_bench; cargo's target directory is <build>/cargo.
#    No cargo, or no crate sources there: a one-line note, and opool_bench notes the missing
#    program.
#
# 3. Rust's sharded_slab crate (bench_mt's sharded_slab subject): bench/sharded, a Cargo project
#    of its own (a missing crate leaves out that subject alone), built offline the same way
#    against Debian's librust-sharded-slab-dev (and librust-lazy-static-dev, which it pulls in)
#    into bench_mt_sharded_slab beside bench_mt, through the same target directory. No cargo,
#    or no crate sources: a one-line note, and bench_mt notes the missing program.
#
# 4. The allocation tracer bench/trace/tracer.c: libopool_tracer.so, an LD_PRELOAD library (Linux,
#    not in sanitizer builds) that records the heap calls of a program for bench_replay
#    (bench/traces/README.md); bench/trace/check.sh checks it.
#
# Concurrency Kit (ck_stack.h) is header-only and detected by bench_mt.c itself.
#
# DPDK (rte_mempool, bench_mt's glibc build only): found through pkg-config (libdpdk; Debian:
# libdpdk-dev). bench_mt.c is then compiled with DPDK's own flags (its inline mempool fast
# path needs them: -include rte_config.h, -march=corei7) and defines OPOOL_BENCH_HAVE_DPDK;
# every subject of that build shares those flags. Not found: a one-line note, and bench_mt
# names the missing peer.

string(TOUPPER "${CMAKE_BUILD_TYPE}" _bench_bt)
string(STRIP "${CMAKE_C_FLAGS} ${CMAKE_C_FLAGS_${_bench_bt}} -O2" OPOOL_BENCH_CFLAGS)

foreach(_bench_alloc mimalloc jemalloc tcmalloc)
    if(_bench_alloc STREQUAL "mimalloc")
        set(_bench_libs mimalloc)
        set(_bench_header mimalloc.h)
    elseif(_bench_alloc STREQUAL "jemalloc")
        set(_bench_libs jemalloc)
        set(_bench_header jemalloc/jemalloc.h)
    else()
        set(_bench_libs tcmalloc_minimal tcmalloc)
        set(_bench_header gperftools/tcmalloc.h)
    endif()
    find_library(OPOOL_BENCH_${_bench_alloc}_LIB NAMES ${_bench_libs})
    find_path(OPOOL_BENCH_${_bench_alloc}_INCLUDE NAMES ${_bench_header})
endforeach()

# opool_bench_per_allocator(<program> <source>): builds <source> as <program>_mimalloc,
# <program>_jemalloc and <program>_tcmalloc (each allocator found), next to <program>, with the
# same flags as the generic benchmark rule plus BENCH_ALLOC and the allocator's library.
function(opool_bench_per_allocator program source)
    foreach(alloc mimalloc jemalloc tcmalloc)
        if(NOT OPOOL_BENCH_${alloc}_LIB OR NOT OPOOL_BENCH_${alloc}_INCLUDE)
            message(STATUS "opool: ${program}_${alloc} skipped: lib${alloc} or its header "
                           "not found")
            continue()
        endif()
        set(target ${program}_${alloc})
        opool_program(${target} "${source}" ${OPOOL_BENCH_SUPPORT})
        target_include_directories(${target} PRIVATE
            "${PROJECT_SOURCE_DIR}/bench" "${OPOOL_BENCH_${alloc}_INCLUDE}")
        target_link_libraries(${target} PRIVATE "${OPOOL_BENCH_${alloc}_LIB}")
        string(TOUPPER "${alloc}" upper)
        if(NOT MSVC)
            target_compile_options(${target} PRIVATE -O2)
        endif()
        target_compile_definitions(${target} PRIVATE NDEBUG
            "OPOOL_BENCH_FLAGS=\"${OPOOL_BENCH_CFLAGS}\"" BENCH_ALLOC=BENCH_ALLOC_${upper})
        set_target_properties(${target} PROPERTIES RUNTIME_OUTPUT_DIRECTORY "${PROJECT_BINARY_DIR}")
    endforeach()
endfunction()

if(TARGET opool_bench)
    opool_bench_per_allocator(opool_bench "${PROJECT_SOURCE_DIR}/bench/bench_core.c")
endif()
if(TARGET bench_mt)
    opool_bench_per_allocator(bench_mt "${PROJECT_SOURCE_DIR}/bench/bench_mt.c")
endif()

# ---- DPDK rte_mempool (bench_mt) ----
if(TARGET bench_mt)
    find_package(PkgConfig QUIET)
    if(PKG_CONFIG_FOUND)
        pkg_check_modules(OPOOL_BENCH_DPDK QUIET libdpdk)
    endif()
    if(OPOOL_BENCH_DPDK_FOUND)
        target_compile_options(bench_mt PRIVATE ${OPOOL_BENCH_DPDK_CFLAGS})
        target_link_libraries(bench_mt PRIVATE ${OPOOL_BENCH_DPDK_LDFLAGS})
        # shown on the flags line of bench_mt's header, after the generic rule's
        set(_bench_dpdk_flags ${OPOOL_BENCH_DPDK_CFLAGS})
        list(FILTER _bench_dpdk_flags EXCLUDE REGEX "^-I") # the include paths say nothing
        string(REPLACE ";" " " _bench_dpdk_flags "${_bench_dpdk_flags}")
        target_compile_definitions(bench_mt PRIVATE OPOOL_BENCH_HAVE_DPDK=1
            "OPOOL_BENCH_DPDK_FLAGS=\"${_bench_dpdk_flags}\"")
    else()
        message(STATUS "opool: bench_mt without DPDK's rte_mempool: pkg-config found no libdpdk "
                       "(Debian: libdpdk-dev; make bench-deps)")
    endif()
endif()
if(TARGET bench_heap)
    opool_bench_per_allocator(bench_heap "${PROJECT_SOURCE_DIR}/bench/bench_heap.c")
endif()
if(TARGET bench_replay)
    opool_bench_per_allocator(bench_replay "${PROJECT_SOURCE_DIR}/bench/bench_replay.c")
    # where bench_replay finds the traces when not told (--traces)
    target_compile_definitions(bench_replay PRIVATE
        "OPOOL_BENCH_TRACES=\"${PROJECT_SOURCE_DIR}/bench/traces\"")
endif()

# ---- the allocation tracer (bench/trace/tracer.c): an LD_PRELOAD library, Linux with glibc ----
if(CMAKE_SYSTEM_NAME STREQUAL "Linux" AND NOT OPOOL_SANITIZE)
    add_library(opool_tracer MODULE "${PROJECT_SOURCE_DIR}/bench/trace/tracer.c")
    set_target_properties(opool_tracer PROPERTIES
        LIBRARY_OUTPUT_DIRECTORY "${PROJECT_BINARY_DIR}" C_VISIBILITY_PRESET hidden PREFIX "lib")
    target_link_libraries(opool_tracer PRIVATE ${CMAKE_DL_LIBS})
    if(Threads_FOUND)
        target_link_libraries(opool_tracer PRIVATE Threads::Threads)
    endif()
    if(NOT MSVC)
        target_compile_options(opool_tracer PRIVATE -O2)
    endif()
    opool_warnings(opool_tracer)
endif()

# ---- Rust slotmap ----
if(TARGET opool_bench)
    find_program(OPOOL_CARGO cargo)
    # the directory source of bench/slotmap/.cargo/config.toml
    file(GLOB _bench_slotmap_src "/usr/share/cargo/registry/slotmap-1.*")
    file(GLOB _bench_slab_src "/usr/share/cargo/registry/slab-0.4.*")
    if(OPOOL_CARGO AND NOT (_bench_slotmap_src AND _bench_slab_src))
        message(STATUS "opool: opool_bench_slotmap skipped: no slotmap or slab crate in "
                       "/usr/share/cargo/registry (Debian: librust-slotmap-dev, librust-slab-dev)")
    elseif(OPOOL_CARGO)
        set(_bench_cargo_dir "${PROJECT_BINARY_DIR}/cargo")
        # Always run: cargo itself knows whether anything changed (a no-op build takes ~0.1 s).
        add_custom_target(opool_bench_slotmap ALL
            COMMAND "${OPOOL_CARGO}" build --offline --release --quiet
                    --target-dir "${_bench_cargo_dir}"
            COMMAND "${CMAKE_COMMAND}" -E copy_if_different
                    "${_bench_cargo_dir}/release/opool_bench_slotmap"
                    "${PROJECT_BINARY_DIR}/opool_bench_slotmap"
            # cargo reads bench/slotmap/.cargo/config.toml only when run from bench/slotmap
            WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}/bench/slotmap"
            BYPRODUCTS "${PROJECT_BINARY_DIR}/opool_bench_slotmap"
            COMMENT "cargo build --release: bench/slotmap -> opool_bench_slotmap"
            VERBATIM)
    else()
        message(STATUS "opool: opool_bench_slotmap skipped: cargo not found")
    endif()
endif()

# ---- Rust sharded_slab (bench_mt) ----
if(TARGET bench_mt)
    find_program(OPOOL_CARGO cargo)
    # the directory source of bench/sharded/.cargo/config.toml: the crate and its one dependency
    file(GLOB _bench_sharded_src "/usr/share/cargo/registry/sharded-slab-0.1.*")
    file(GLOB _bench_lazy_static_src "/usr/share/cargo/registry/lazy_static-1.*")
    if(OPOOL_CARGO AND NOT (_bench_sharded_src AND _bench_lazy_static_src))
        message(STATUS "opool: bench_mt_sharded_slab skipped: no sharded-slab or lazy_static crate "
                       "in /usr/share/cargo/registry (Debian: librust-sharded-slab-dev)")
    elseif(OPOOL_CARGO)
        set(_bench_cargo_dir "${PROJECT_BINARY_DIR}/cargo")
        # Always run, as opool_bench_slotmap. The two share the target directory: cargo's lock
        # on it makes a parallel build of both wait for each other, no more.
        add_custom_target(bench_mt_sharded_slab ALL
            COMMAND "${OPOOL_CARGO}" build --offline --release --quiet
                    --target-dir "${_bench_cargo_dir}"
            COMMAND "${CMAKE_COMMAND}" -E copy_if_different
                    "${_bench_cargo_dir}/release/bench_mt_sharded_slab"
                    "${PROJECT_BINARY_DIR}/bench_mt_sharded_slab"
            # cargo reads bench/sharded/.cargo/config.toml only when run from bench/sharded
            WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}/bench/sharded"
            BYPRODUCTS "${PROJECT_BINARY_DIR}/bench_mt_sharded_slab"
            COMMENT "cargo build --release: bench/sharded -> bench_mt_sharded_slab"
            VERBATIM)
    else()
        message(STATUS "opool: bench_mt_sharded_slab skipped: cargo not found")
    endif()
endif()
