# expect_compile.cmake -- compile one source at test time and judge the result.
#
#   cmake -DCOMPILER=cc -DLANG=C|CXX -DSOURCE=file.c -DINCLUDE_DIR=dir -DMODE=fail|compile
#         [-DFLAGS=a;b] [-DEXPECT=regex1;regex2] -P expect_compile.cmake
#
# MODE=fail: the compilation must fail, and fail for the right reason only:
#   - the compiler exits non-zero;
#   - every line of SOURCE marked /* EXPECT-ERROR */ has an error;
#   - every error is located on a marked line of SOURCE (an error anywhere else -- a
#     missing header, a typo, a bug in the header under test, an unknown flag -- fails
#     the test, so an unrelated error can never pass for the expected one);
#   - the output matches every regex of EXPECT (e.g. names the handle types).
# MODE=compile: the compilation must succeed with -Werror (the positive control).
#
# Runs at test time (CTest), never at configure time: it checks the header as it is now.
cmake_minimum_required(VERSION 3.20)

foreach(var COMPILER LANG SOURCE INCLUDE_DIR MODE)
    if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
        message(FATAL_ERROR "expect_compile: ${var} not set")
    endif()
endforeach()

set(warn -Wall -Wextra -Wpedantic)
if(LANG STREQUAL "C")
    set(lang_flags -x c -std=c11)
elseif(LANG STREQUAL "CXX")
    set(lang_flags -x c++ -std=c++11)
else()
    message(FATAL_ERROR "expect_compile: LANG must be C or CXX, not '${LANG}'")
endif()
if(MODE STREQUAL "compile")
    list(APPEND warn -Werror)
elseif(NOT MODE STREQUAL "fail")
    message(FATAL_ERROR "expect_compile: MODE must be fail or compile, not '${MODE}'")
endif()

get_filename_component(src_name "${SOURCE}" NAME)
set(object "${CMAKE_CURRENT_BINARY_DIR}/expect_compile_${LANG}_${MODE}.o")
# No colours: the output is parsed.
set(cmd "${COMPILER}" ${lang_flags} ${warn} ${FLAGS}
        -fdiagnostics-color=never "-I${INCLUDE_DIR}" -c "${SOURCE}" -o "${object}")
execute_process(COMMAND ${cmd} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
file(REMOVE "${object}")
string(REPLACE ";" " " shown "${cmd}")

if(MODE STREQUAL "compile")
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "the positive control does not compile:\n  ${shown}\n${out}")
    endif()
    message(STATUS "compiles cleanly, as it must: ${src_name} (${LANG})")
    return()
endif()

if(rc EQUAL 0)
    message(FATAL_ERROR "${src_name} (${LANG}) compiled, but must not:\n  ${shown}\n${out}")
endif()

# The marked lines.
# Characters that mean something in a CMake list become harmless before splitting.
function(as_lines out text)
    string(REGEX REPLACE "[][;\\]" "_" text "${text}")
    string(REPLACE "\n" ";" text "${text}")
    set(${out} "${text}" PARENT_SCOPE)
endfunction()

file(READ "${SOURCE}" text)
as_lines(lines "${text}")
set(marked "")
set(n 0)
foreach(line IN LISTS lines)
    math(EXPR n "${n} + 1")
    if(line MATCHES "/\\* EXPECT-ERROR \\*/")
        list(APPEND marked ${n})
    endif()
endforeach()
if(NOT marked)
    message(FATAL_ERROR "${src_name} has no line marked /* EXPECT-ERROR */")
endif()

# Every error line of the output: file:line:column: error: ... (clang and gcc alike).
as_lines(out_lines "${out}")
set(hit "")
set(stray "")
foreach(e IN LISTS out_lines)
    if(NOT e MATCHES "error:")
        continue()
    endif()
    # a compiler driver's own summary of the compiler it ran (emcc: "emcc: error: '...clang...'
    # failed (returned 1)"): the errors are those of the lines above
    if(e MATCHES "^[a-z+-]+: error: '.*' failed \\(returned [0-9]+\\)")
        continue()
    endif()
    if(e MATCHES "^([^:]+):([0-9]+):([0-9]+:)? (fatal )?error:")
        set(file "${CMAKE_MATCH_1}")
        set(at "${CMAKE_MATCH_2}")
        get_filename_component(file_name "${file}" NAME)
        list(FIND marked "${at}" k)
        if(file_name STREQUAL src_name AND NOT k EQUAL -1)
            list(APPEND hit ${at})
            continue()
        endif()
    endif()
    list(APPEND stray "${e}")
endforeach()

set(problems "")
if(stray)
    list(JOIN stray "\n    " s)
    string(APPEND problems "  errors outside the marked lines (an unrelated failure):\n    ${s}\n")
endif()
foreach(m IN LISTS marked)
    list(FIND hit ${m} k)
    if(k EQUAL -1)
        string(APPEND problems "  no error on marked line ${src_name}:${m}\n")
    endif()
endforeach()
foreach(re IN LISTS EXPECT)
    if(NOT out MATCHES "${re}")
        string(APPEND problems "  the output does not match '${re}'\n")
    endif()
endforeach()
if(problems)
    message(FATAL_ERROR "${src_name} (${LANG}) failed to compile, but not (only) as expected:\n"
                        "${problems}command:\n  ${shown}\noutput:\n${out}")
endif()
list(LENGTH marked nm)
message(STATUS "${src_name} (${LANG}) fails as it must: an error on each of its ${nm} marked "
               "lines and nowhere else")
