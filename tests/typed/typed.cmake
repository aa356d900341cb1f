# tests/typed/typed.cmake -- compile-time tests of include/opool_typed.h (included by
# tests/tests.cmake). Each test compiles a source at test time through expect_compile.cmake,
# with the configured C and C++ compilers:
#
#   typed_mix_handles_{c,cxx}          mix_handles.c must fail: a handle of one pool type (or
#                                      a bare opool_handle) where another is expected, with no
#                                      special flag; an error on every marked line, nowhere else
#   typed_mix_pools_{c,cxx}            mix_pools.c must fail: one pool type where another is
#                                      expected (C: -Werror=incompatible-pointer-types)
#   typed_..._control                  the same files with -DOPOOL_TYPED_CONTROL (each marked
#                                      line takes the right type) must compile with -Werror
#   typed_guard_{unrelated,no_error}   the judge itself: an unrelated error (missing include
#                                      directory) and a clean compile must NOT count as the
#                                      expected failure
#   typed_mix_declared_{c,cxx}         mix_declared.c must fail: the handle types of
#                                      OPOOL_TYPED_HANDLE (declared before the types holding
#                                      them) mixed, or a typed side table keyed by another's
#   typed_after_handle_{c,cxx}         typed_after_handle.c must fail: OPOOL_TYPED after
#                                      OPOOL_TYPED_HANDLE, with the name that says what to write
#   typed_strict_{c,cxx}               strict.c, every typed function used, under the strict
#                                      warnings of the header checks, as errors
#   typed_names{,_sides}_{c,cxx}       names.c: object, value, pool and side table types named
#                                      as the typed functions' parameters and locals (obj, d,
#                                      raw, s, ...), every function used, -Werror
#
# GCC and Clang only (the judge reads their diagnostics). Not in sanitizer builds: they only
# compile, and make test's sanitizer stage uses a compiler an earlier stage has covered.

if(NOT CMAKE_C_COMPILER_ID MATCHES "GNU|Clang")
    message(STATUS "opool: typed compile tests skipped (${CMAKE_C_COMPILER_ID} is not GCC or Clang)")
    return()
endif()
if(OPOOL_SANITIZE)
    message(STATUS "opool: typed compile tests skipped in a sanitizer build (compile-only)")
    return()
endif()

set(_typed_dir "${PROJECT_SOURCE_DIR}/tests/typed")
set(_typed_script "${_typed_dir}/expect_compile.cmake")
set(_typed_strict -Wshadow -Wcast-qual -Wundef -Wconversion -Wsign-conversion
                  -Wmissing-declarations -Wredundant-decls)
set(_typed_strict_c -Wstrict-prototypes -Wmissing-prototypes -Wold-style-definition
                    -Wbad-function-cast)

# opool_typed_compile_test(NAME LANG SOURCE MODE [FLAGS f...] [EXPECT regex...] [PASS regex])
function(opool_typed_compile_test name lang source mode)
    cmake_parse_arguments(arg "" "PASS" "FLAGS;EXPECT;INCLUDE" ${ARGN})
    if(lang STREQUAL "C")
        set(compiler "${CMAKE_C_COMPILER}")
    else()
        set(compiler "${CMAKE_CXX_COMPILER}")
    endif()
    set(include "${PROJECT_SOURCE_DIR}/include")
    if(arg_INCLUDE)
        set(include "${arg_INCLUDE}")
    endif()
    file(MAKE_DIRECTORY "${OPOOL_TEST_WORK_DIR}/${name}")
    add_test(NAME ${name}
        COMMAND "${CMAKE_COMMAND}" "-DCOMPILER=${compiler}" "-DLANG=${lang}"
                "-DSOURCE=${_typed_dir}/${source}" "-DINCLUDE_DIR=${include}" "-DMODE=${mode}"
                "-DFLAGS=${arg_FLAGS}" "-DEXPECT=${arg_EXPECT}" -P "${_typed_script}"
        WORKING_DIRECTORY "${OPOOL_TEST_WORK_DIR}/${name}")
    set_tests_properties(${name} PROPERTIES TIMEOUT ${OPOOL_TEST_TIMEOUT} LABELS typed)
    if(arg_PASS)
        set_tests_properties(${name} PROPERTIES PASS_REGULAR_EXPRESSION "${arg_PASS}")
    endif()
endfunction()

set(_typed_langs C)
if(CMAKE_CXX_COMPILER AND CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    list(APPEND _typed_langs CXX)
endif()

foreach(_lang IN LISTS _typed_langs)
    if(_lang STREQUAL "CXX")
        set(_l cxx)
        set(_pool_flags "")
        set(_strict ${_typed_strict})
    else()
        set(_l c)
        set(_pool_flags -Werror=incompatible-pointer-types)
        set(_strict ${_typed_strict} ${_typed_strict_c})
    endif()
    opool_typed_compile_test(typed_mix_handles_${_l} ${_lang} mix_handles.c fail
        EXPECT "enemy_pool_handle" "bullet_pool_handle")
    opool_typed_compile_test(typed_mix_handles_${_l}_control ${_lang} mix_handles.c compile
        FLAGS -DOPOOL_TYPED_CONTROL)
    opool_typed_compile_test(typed_mix_pools_${_l} ${_lang} mix_pools.c fail
        FLAGS ${_pool_flags} EXPECT "bullet_pool ?\\*" "enemy_pool ?\\*")
    opool_typed_compile_test(typed_mix_pools_${_l}_control ${_lang} mix_pools.c compile
        FLAGS -DOPOOL_TYPED_CONTROL ${_pool_flags})
    opool_typed_compile_test(typed_mix_declared_${_l} ${_lang} mix_declared.c fail
        EXPECT "ship_pool_handle" "dock_pool_handle")
    opool_typed_compile_test(typed_mix_declared_${_l}_control ${_lang} mix_declared.c compile
        FLAGS -DOPOOL_TYPED_CONTROL)
    opool_typed_compile_test(typed_after_handle_${_l} ${_lang} typed_after_handle.c fail
        EXPECT "after_OPOOL_TYPED_HANDLE_write_OPOOL_TYPED_POOL")
    opool_typed_compile_test(typed_after_handle_${_l}_control ${_lang} typed_after_handle.c compile
        FLAGS -DOPOOL_TYPED_CONTROL)
    opool_typed_compile_test(typed_strict_${_l} ${_lang} strict.c compile FLAGS ${_strict})
    opool_typed_compile_test(typed_names_${_l} ${_lang} names.c compile)
    opool_typed_compile_test(typed_names_sides_${_l} ${_lang} names.c compile FLAGS -DNAMES_SIDES)
endforeach()

# The judge must not be fooled: these pass only when expect_compile.cmake REJECTS the run,
# with the reason given.
opool_typed_compile_test(typed_guard_unrelated C mix_handles.c fail
    INCLUDE "${PROJECT_BINARY_DIR}/no-such-include-dir"
    EXPECT "enemy_pool_handle" PASS "errors outside the marked lines")
opool_typed_compile_test(typed_guard_no_error C mix_handles.c fail
    FLAGS -DOPOOL_TYPED_CONTROL PASS "compiled, but must not")
