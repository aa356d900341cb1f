# build_and_run.cmake -- compile and link a program with a compiler other than the configured
# one, at test time, then run it (it must exit 0). For the dist programs under gcc when the
# build itself uses another compiler.
#
#   cmake -DCOMPILER=gcc -DSOURCES=a.c;b.c -DINCLUDE_DIRS=d1;d2 [-DFLAGS=f1;f2]
#         -DPROGRAM=name -P build_and_run.cmake
cmake_minimum_required(VERSION 3.20)

foreach(var COMPILER SOURCES INCLUDE_DIRS PROGRAM)
    if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
        message(FATAL_ERROR "build_and_run: ${var} not set")
    endif()
endforeach()

set(includes "")
foreach(d IN LISTS INCLUDE_DIRS)
    list(APPEND includes "-I${d}")
endforeach()
set(exe "${CMAKE_CURRENT_BINARY_DIR}/${PROGRAM}")
set(cmd "${COMPILER}" ${FLAGS} ${includes} ${SOURCES} -o "${exe}")
string(REPLACE ";" " " shown "${cmd}")
message(STATUS "${shown}")
execute_process(COMMAND ${cmd} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "does not build:\n${out}")
endif()
execute_process(COMMAND "${exe}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
message(STATUS "${out}")
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${PROGRAM} exited with ${rc}")
endif()
