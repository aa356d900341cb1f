# build_and_run.cmake -- compile and link programs with a given compiler at test time, then
# run each (it must exit 0). For the dist programs under gcc when the build itself uses
# another compiler, and under the sanitizers with either compiler.
#
#   cmake -DCOMPILER=gcc -DSOURCES=a.c;b.c -DINCLUDE_DIRS=d1;d2 [-DFLAGS=f1;f2]
#         -DPROGRAM=name -P build_and_run.cmake
#   cmake ... -DSOURCE_DIR=dir -DPROGRAMS=a.c,b.c;c.c,d.c ...   one program per entry
#         (name_1, name_2, ...), each from the comma-separated files of SOURCE_DIR
cmake_minimum_required(VERSION 3.20)

foreach(var COMPILER INCLUDE_DIRS PROGRAM)
    if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
        message(FATAL_ERROR "build_and_run: ${var} not set")
    endif()
endforeach()

set(includes "")
foreach(d IN LISTS INCLUDE_DIRS)
    list(APPEND includes "-I${d}")
endforeach()

function(build_and_run exe)
    set(cmd "${COMPILER}" ${FLAGS} ${includes} ${ARGN} -o "${exe}")
    string(REPLACE ";" " " shown "${cmd}")
    message(STATUS "${shown}")
    execute_process(COMMAND ${cmd} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "does not build:\n${out}")
    endif()
    execute_process(COMMAND "${exe}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
    message(STATUS "${out}")
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "${exe} exited with ${rc}")
    endif()
endfunction()

if(DEFINED PROGRAMS)
    set(n 0)
    foreach(program IN LISTS PROGRAMS)
        math(EXPR n "${n} + 1")
        string(REPLACE "," ";" files "${program}")
        list(TRANSFORM files PREPEND "${SOURCE_DIR}/")
        build_and_run("${CMAKE_CURRENT_BINARY_DIR}/${PROGRAM}_${n}" ${files})
    endforeach()
else()
    if(NOT DEFINED SOURCES OR "${SOURCES}" STREQUAL "")
        message(FATAL_ERROR "build_and_run: SOURCES or PROGRAMS not set")
    endif()
    build_and_run("${CMAKE_CURRENT_BINARY_DIR}/${PROGRAM}" ${SOURCES})
endif()
