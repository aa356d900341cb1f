# inline_check.cmake -- compile one source at -O2 and fail if the object defines a function
# whose name matches a pattern: a path the header promises inline that the compiler left as a
# call.
#
#   cmake -DCOMPILER=c++ -DNM=nm -DSOURCE=file.cpp -DINCLUDE_DIR=dir -DPATTERN=regex
#         [-DFLAGS=a;b] -P inline_check.cmake
#
# Runs at test time (CTest): it checks the header as it is now.
cmake_minimum_required(VERSION 3.20)

foreach(var COMPILER NM SOURCE INCLUDE_DIR PATTERN)
    if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
        message(FATAL_ERROR "inline_check: ${var} not set")
    endif()
endforeach()

get_filename_component(src_name "${SOURCE}" NAME)
set(object "${CMAKE_CURRENT_BINARY_DIR}/inline_check.o")
set(cmd "${COMPILER}" -O2 ${FLAGS} "-I${INCLUDE_DIR}" -c "${SOURCE}" -o "${object}")
execute_process(COMMAND ${cmd} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
string(REPLACE ";" " " shown "${cmd}")
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "inline_check: ${src_name} does not compile:\n  ${shown}\n${out}")
endif()
execute_process(COMMAND "${NM}" -C --defined-only "${object}" RESULT_VARIABLE rc
                OUTPUT_VARIABLE syms ERROR_VARIABLE err)
file(REMOVE "${object}")
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "inline_check: ${NM} failed: ${err}")
endif()
string(REPLACE "\n" ";" syms "${syms}")
set(found "")
set(n 0)
foreach(s IN LISTS syms)
    if(s MATCHES " [TtWw] ")
        math(EXPR n "${n} + 1")
        # a lambda defined inside such a function (the free if a constructor throws) is its
        # cold part, which may stay out of line: GCC's nm shows it as {lambda...}, Clang's
        # as 'lambda'...
        if(s MATCHES "${PATTERN}" AND NOT s MATCHES "({lambda|'lambda)")
            list(APPEND found "${s}")
        endif()
    endif()
endforeach()
if(n EQUAL 0)
    message(FATAL_ERROR "inline_check: ${src_name} defines no function at all: the check saw "
                        "nothing")
endif()
if(found)
    list(JOIN found "\n  " shown_found)
    message(FATAL_ERROR "${src_name}: functions matching '${PATTERN}' were left out of line "
                        "(each call to them is a call, not inline code):\n  ${shown_found}")
endif()
message(STATUS "${src_name}: none of its ${n} functions matches '${PATTERN}': inline")
