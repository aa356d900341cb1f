# tests/abi/exports.cmake -- what the shared library exports, against the headers.
#   cmake -DNM=nm -DLIB=libopool.so -DHEADERS=a.h;b.h [-DEXPECT_MISSING=name] -P this
#
# The public functions are read from the headers (every `T opool_name(` outside comments
# and macros), so a function added to a header is checked without an edit here. Checks:
#   - every public function is a defined dynamic symbol of LIB (`nm -D --defined-only`):
#     FFI and dlsym reach it, the inline ones included;
#   - every exported opool__ symbol is declared OPOOL_API in a header: the slow paths the
#     inline bodies of opool_abi*.h call (ABI, not API). Anything else with that prefix (the
#     modules' shared functions, test-only code) must stay hidden;
#   - nothing else is exported but the toolchain's own `_`-prefixed symbols.
# EXPECT_MISSING=name (the test abi_exports_catches_a_missing_symbol): HEADERS includes a
# declaration of `name` that the library lacks; pass only if that, and only that, is found.
cmake_minimum_required(VERSION 3.20)

foreach(var NM LIB HEADERS)
    if(NOT DEFINED ${var})
        message(FATAL_ERROR "exports.cmake: ${var} not set")
    endif()
endforeach()

set(public "")
set(abi "")
foreach(h IN LISTS HEADERS)
    file(READ "${h}" text)
    # comments, then preprocessor lines (continuations joined first)
    string(REGEX REPLACE "/\\*([^*]|\\*+[^*/])*\\*+/" " " text "${text}")
    string(REGEX REPLACE "//[^\n]*" "" text "${text}")
    string(REGEX REPLACE "\\\\\n" " " text "${text}")
    string(REGEX REPLACE "(^|\n)[ \t]*#[^\n]*" "\\1" text "${text}")
    string(REGEX MATCHALL "[A-Za-z_0-9]+[ \t\n*]+opool_[a-z][a-z0-9_]*[ \t\n]*\\(" decls "${text}")
    foreach(d IN LISTS decls)
        string(REGEX REPLACE "^([A-Za-z_0-9]+)[ \t\n*]+(opool_[a-z0-9_]+).*" "\\1;\\2" pair "${d}")
        list(GET pair 0 before)
        list(GET pair 1 name)
        if(NOT before STREQUAL "return")
            list(APPEND public "${name}")
        endif()
    endforeach()
    string(REGEX MATCHALL "OPOOL_API[^;{}]*[ \t\n*]opool__[a-z0-9_]+[ \t\n]*\\(" decls "${text}")
    foreach(d IN LISTS decls)
        string(REGEX REPLACE ".*[ \t\n*](opool__[a-z0-9_]+)[ \t\n]*\\($" "\\1" name "${d}")
        list(APPEND abi "${name}")
    endforeach()
endforeach()
list(REMOVE_DUPLICATES public)
list(REMOVE_DUPLICATES abi)
list(LENGTH public npublic)
if(npublic LESS 50)
    message(FATAL_ERROR "exports.cmake: only ${npublic} public functions found in the headers: "
                        "the pattern is stale")
endif()

execute_process(COMMAND "${NM}" -D --defined-only "${LIB}"
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NM} -D --defined-only ${LIB} failed: ${err}")
endif()
string(REGEX MATCHALL "[^\n]+" lines "${out}")
set(exported "")
foreach(l IN LISTS lines)
    if(l MATCHES "^[0-9a-fA-F]* *[A-Za-z] ([^ @]+)")
        list(APPEND exported "${CMAKE_MATCH_1}")
    endif()
endforeach()

set(missing "")
foreach(name IN LISTS public)
    if(NOT name IN_LIST exported)
        list(APPEND missing "${name}")
    endif()
endforeach()
set(leaked "")
foreach(name IN LISTS exported)
    if(name MATCHES "^_" OR name IN_LIST public OR name IN_LIST abi)
        continue()
    endif()
    list(APPEND leaked "${name}")
endforeach()

list(LENGTH abi nabi)
if(DEFINED EXPECT_MISSING)
    if(NOT missing STREQUAL EXPECT_MISSING OR leaked)
        message(FATAL_ERROR "expected exactly ${EXPECT_MISSING} missing; missing: '${missing}', "
                            "exported but not declared: '${leaked}'")
    endif()
    message(STATUS "the missing ${EXPECT_MISSING} was caught")
    return()
endif()
if(missing)
    string(REPLACE ";" " " missing "${missing}")
    message(FATAL_ERROR "public functions not exported by ${LIB}: ${missing}")
endif()
if(leaked)
    string(REPLACE ";" " " leaked "${leaked}")
    message(FATAL_ERROR "exported by ${LIB} but not declared OPOOL_API in a header (hidden "
                        "visibility lost, or test-only code in the library): ${leaked}")
endif()
string(REPLACE ";" " " abi "${abi}")
message(STATUS "${LIB}: all ${npublic} public functions exported; opool__ exports: ${abi} (ABI)")
