# Compile each public header on its own, included twice (checks the include guard and that
# the header is self-contained), under strict warnings as errors. Run by CTest as
#   cmake -DCOMPILER=cc -DLANG=C|CXX -DHEADERS=a.h;b.h -DINCLUDE_DIR=dir -DWORK_DIR=dir -P this
# A user may build with any of these flags on; a public header must never be the reason
# their build fails.
cmake_minimum_required(VERSION 3.20)

foreach(var COMPILER LANG HEADERS INCLUDE_DIR WORK_DIR)
    if(NOT DEFINED ${var})
        message(FATAL_ERROR "OpoolHeaderCheck: ${var} not set")
    endif()
endforeach()

set(common -Wall -Wextra -Wpedantic -Werror -Wshadow -Wcast-qual -Wundef -Wconversion
           -Wsign-conversion -Wmissing-declarations -Wredundant-decls -fsyntax-only)
if(LANG STREQUAL "C")
    set(flags -x c -std=c11 ${common} -Wstrict-prototypes -Wmissing-prototypes
              -Wold-style-definition -Wbad-function-cast)
    set(ext c)
else()
    # a C++ user's casts warnings too: the inline bodies and the macros they expand
    set(flags -x c++ -std=c++11 ${common} -Wold-style-cast)
    if(COMPILER_ID STREQUAL "GNU")
        list(APPEND flags -Wuseless-cast)
    endif()
    set(ext cpp)
endif()

# What a user's code expands, beside the header itself: the loop macro, the typed pools.
set(expand_opool [=[
int opool_header_check_loop(opool *p)@;
int opool_header_check_loop(opool *p) {
    int n = 0;
    OPOOL_FOREACH(p, int, x, h) { n += *x, (void)h; }
    return n;
}
]=])
set(expand_opool_typed [=[
struct opool_header_check_t { int x@; };
OPOOL_TYPED(opool_header_check_pool, struct opool_header_check_t)@;
OPOOL_TYPED_FIXED(opool_header_check_fixed, struct opool_header_check_t, OPOOL_NO_LIVE_LIST)@;
OPOOL_TYPED_SIDE(opool_header_check_side, opool_header_check_pool, int)@;
int opool_header_check_typed_loop(opool_header_check_pool *p)@;
int opool_header_check_typed_loop(opool_header_check_pool *p) {
    int n = 0;
    OPOOL_TYPED_FOREACH(opool_header_check_pool, p, o, h) { n += o->x, (void)h; }
    return n;
}
]=])

file(MAKE_DIRECTORY "${WORK_DIR}")
set(failed "")
foreach(h IN LISTS HEADERS)
    get_filename_component(name "${h}" NAME)
    get_filename_component(stem "${h}" NAME_WE)
    set(tu "${WORK_DIR}/${stem}_${LANG}.${ext}")
    set(expand "")
    if(DEFINED expand_${stem})
        string(REPLACE "@;" ";" expand "${expand_${stem}}")
    endif()
    file(WRITE "${tu}"
         "#include \"${name}\"\n#include \"${name}\"\nint opool_header_check_${stem};\n${expand}")
    execute_process(
        COMMAND "${COMPILER}" ${flags} "-I${INCLUDE_DIR}" "${tu}"
        RESULT_VARIABLE rc
        OUTPUT_VARIABLE out
        ERROR_VARIABLE out)
    if(rc EQUAL 0)
        message(STATUS "ok   ${name} (${LANG})")
    else()
        message(STATUS "FAIL ${name} (${LANG}):\n${out}")
        list(APPEND failed "${name}")
    endif()
endforeach()

if(failed)
    message(FATAL_ERROR "headers failing the ${LANG} check: ${failed}")
endif()
