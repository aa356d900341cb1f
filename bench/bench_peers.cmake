# bench/bench_peers.cmake -- included by CMakeLists.txt's OPOOL_BUILD_BENCH section, after
# opool_bench exists: adds the in-process C++ peers of bench/bench_peers.cpp to it.
#
#   OPOOL_BENCH_HAVE_BOOST   <boost/pool/object_pool.hpp> found (Debian: libboost-dev):
#                            boost::object_pool<T> and boost::pool<>
#   OPOOL_BENCH_HAVE_COLONY  <plf_colony.h> found (Debian: libplf-colony-dev): plf::colony<T>
#   OPOOL_BENCH_HAVE_OPL     a C++17 compiler: opl::pool<T> of include/opool.hpp
#
# Each definition reaches both bench_core.c (which subjects to run, and the note for a
# missing one) and bench_peers.cpp (which peers to compile). Without a C++ compiler, or
# with neither header, opool_bench is built from C alone and says what it lacks.
# `make bench-deps` installs both headers.

if(NOT TARGET opool_bench)
    return()
endif()

include(CheckLanguage)
check_language(CXX)
if(NOT CMAKE_CXX_COMPILER)
    message(STATUS "opool: opool_bench without its C++ peers (Boost.Pool, plf::colony): "
                   "no C++ compiler found")
    return()
endif()
enable_language(CXX)

include(CheckIncludeFileCXX)
check_include_file_cxx("boost/pool/object_pool.hpp" OPOOL_BENCH_HAVE_BOOST)
check_include_file_cxx("plf_colony.h" OPOOL_BENCH_HAVE_COLONY)
if(NOT OPOOL_BENCH_HAVE_BOOST)
    message(STATUS "opool: opool_bench without boost::object_pool and boost::pool<>: "
                   "<boost/pool/object_pool.hpp> not found (make bench-deps)")
endif()
if(NOT OPOOL_BENCH_HAVE_COLONY)
    message(STATUS "opool: opool_bench without plf::colony: <plf_colony.h> not found "
                   "(make bench-deps)")
endif()
# opl::pool<T> (include/opool.hpp) needs nothing but C++17.
set(OPOOL_BENCH_HAVE_OPL OFF)
if("cxx_std_17" IN_LIST CMAKE_CXX_COMPILE_FEATURES)
    set(OPOOL_BENCH_HAVE_OPL ON)
endif()
if(NOT OPOOL_BENCH_HAVE_BOOST AND NOT OPOOL_BENCH_HAVE_COLONY AND NOT OPOOL_BENCH_HAVE_OPL)
    return()
endif()

target_sources(opool_bench PRIVATE "${PROJECT_SOURCE_DIR}/bench/bench_peers.cpp")
set_target_properties(opool_bench PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON
                                             CXX_EXTENSIONS OFF)
foreach(_peer BOOST COLONY OPL)
    if(OPOOL_BENCH_HAVE_${_peer})
        target_compile_definitions(opool_bench PRIVATE OPOOL_BENCH_HAVE_${_peer}=1)
    endif()
endforeach()
