# tests/cpp/cpp.cmake -- include/opool.hpp's tests (included by tests/tests.cmake), built only
# with a C++17 compiler:
#
#   test_hpp           tests/cpp/test_hpp.cpp as C++17: lives, exceptions, range-for, handles,
#                      side tables, mt_pool, save/load, heap_resource
#   test_hpp_cxx20     the same as C++20 (when the compiler has it)
#   test_hpp_noexc     the same with -fno-exceptions -fno-rtti (GCC and Clang), as game builds
#   test_hpp_save      tests/cpp/test_hpp_save.cpp: saves of any T (serializer, worlds), also
#                      as test_hpp_save_cxx20 and test_hpp_save_noexc
#   test_hpp_mt        tests/cpp/test_hpp_mt.cpp: threads (label mt: ThreadSanitizer too)
#   hpp_strict         tests/cpp/strict.cpp, every template instantiated, compiles under strict
#                      warnings (-Wold-style-cast, -Wconversion, -Wshadow, ...) as errors
#   hpp_nodiscard      tests/cpp/nodiscard.cpp must fail to compile on each marked line (a
#                      result of emplace, get, from_desc or load_world_file dropped), and
#                      compile with -DOPL_CONTROL
#   hpp_mix_handles    tests/cpp/mix_handles.cpp must fail to compile on each marked line
#                      (handles of two types never mix), and compile with -DOPL_CONTROL
#                      (tests/typed/expect_compile.cmake judges both)
#   hpp_pool_inline    tests/cpp/pool_inline.cpp at -O2 defines no emplace (nor its steps), erase
#                      or get of pool<T>: they compile into their callers, whatever T's
#                      constructor may throw or its destructor do (tests/cpp/inline_check.cmake
#                      reads the object with nm)

if(NOT CMAKE_CXX_COMPILER OR NOT "cxx_std_17" IN_LIST CMAKE_CXX_COMPILE_FEATURES)
    message(STATUS "opool: no C++17 compiler; include/opool.hpp's tests skipped")
    return()
endif()

set(_hpp_dir "${PROJECT_SOURCE_DIR}/tests/cpp")

# opool_add_hpp_test(NAME SOURCE STANDARD [options...])
function(opool_add_hpp_test name source standard)
    opool_add_test(${name} "${_hpp_dir}/${source}")
    set_target_properties(${name} PROPERTIES CXX_STANDARD ${standard} CXX_STANDARD_REQUIRED ON
                                             CXX_EXTENSIONS OFF)
    if(ARGN)
        target_compile_options(${name} PRIVATE ${ARGN})
    elseif(EMSCRIPTEN)
        # emscripten compiles try/catch but catches nothing unless asked (a throw aborts)
        target_compile_options(${name} PRIVATE -fexceptions)
        target_link_options(${name} PRIVATE -fexceptions)
    endif()
endfunction()

foreach(_t IN ITEMS test_hpp test_hpp_save)
    opool_add_hpp_test(${_t} ${_t}.cpp 17)
    if("cxx_std_20" IN_LIST CMAKE_CXX_COMPILE_FEATURES)
        opool_add_hpp_test(${_t}_cxx20 ${_t}.cpp 20)
    endif()
    if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
        opool_add_hpp_test(${_t}_noexc ${_t}.cpp 17 -fno-exceptions -fno-rtti)
    endif()
endforeach()
if(OPOOL_CAN_START_THREADS) # not in a single-threaded wasm build (CMakeLists.txt)
    opool_add_hpp_test(test_hpp_mt test_hpp_mt.cpp 17)
    set_tests_properties(test_hpp_mt PROPERTIES LABELS mt)
endif()

if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang" AND NOT OPOOL_SANITIZE)
    # opool_hpp_expect_compile(NAME SOURCE EXPECT FLAGS...): NAME must fail to compile on the
    # marked lines of SOURCE (output matching EXPECT), NAME_control compile with -DOPL_CONTROL
    function(opool_hpp_expect_compile name source expect)
        foreach(mode fail compile)
            set(_name ${name})
            set(_flags ${ARGN})
            if(mode STREQUAL "compile")
                set(_name ${name}_control)
                list(APPEND _flags -DOPL_CONTROL)
            endif()
            file(MAKE_DIRECTORY "${OPOOL_TEST_WORK_DIR}/${_name}")
            add_test(NAME ${_name}
                COMMAND "${CMAKE_COMMAND}" "-DCOMPILER=${CMAKE_CXX_COMPILER}" -DLANG=CXX
                        "-DSOURCE=${_hpp_dir}/${source}"
                        "-DINCLUDE_DIR=${PROJECT_SOURCE_DIR}/include" -DMODE=${mode}
                        "-DFLAGS=${_flags}" "-DEXPECT=${expect}"
                        -P "${PROJECT_SOURCE_DIR}/tests/typed/expect_compile.cmake"
                WORKING_DIRECTORY "${OPOOL_TEST_WORK_DIR}/${_name}")
            set_tests_properties(${_name} PROPERTIES TIMEOUT ${OPOOL_TEST_TIMEOUT} LABELS typed)
        endforeach()
    endfunction()
    opool_hpp_expect_compile(hpp_mix_handles mix_handles.cpp "opl::handle<ship>" -std=c++17)
    # every line of tests/cpp/nodiscard.cpp that drops an emplace's or a get's result fails
    # to compile under -Werror=unused-result
    opool_hpp_expect_compile(hpp_nodiscard nodiscard.cpp "nodiscard|unused" -std=c++17
                             -Werror=unused-result)

    set(_strict -std=c++17 -Wshadow -Wcast-qual -Wundef -Wconversion -Wsign-conversion
                -Wmissing-declarations -Wredundant-decls -Wnon-virtual-dtor -Wold-style-cast
                -Wzero-as-null-pointer-constant)
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
        list(APPEND _strict -Wuseless-cast)
    endif()
    if(CMAKE_NM)
        file(MAKE_DIRECTORY "${OPOOL_TEST_WORK_DIR}/hpp_pool_inline")
        add_test(NAME hpp_pool_inline
            COMMAND "${CMAKE_COMMAND}" "-DCOMPILER=${CMAKE_CXX_COMPILER}" "-DNM=${CMAKE_NM}"
                    "-DSOURCE=${_hpp_dir}/pool_inline.cpp"
                    "-DINCLUDE_DIR=${PROJECT_SOURCE_DIR}/include" -DFLAGS=-std=c++17
                    "-DPATTERN=(>::emplace|>::erase|>::get|emplace_in|construct_or_free)[<(]"
                    -P "${_hpp_dir}/inline_check.cmake"
            WORKING_DIRECTORY "${OPOOL_TEST_WORK_DIR}/hpp_pool_inline")
        set_tests_properties(hpp_pool_inline PROPERTIES TIMEOUT ${OPOOL_TEST_TIMEOUT}
                                                           LABELS typed)
    endif()

    file(MAKE_DIRECTORY "${OPOOL_TEST_WORK_DIR}/hpp_strict")
    add_test(NAME hpp_strict
        COMMAND "${CMAKE_COMMAND}" "-DCOMPILER=${CMAKE_CXX_COMPILER}" -DLANG=CXX
                "-DSOURCE=${_hpp_dir}/strict.cpp" "-DINCLUDE_DIR=${PROJECT_SOURCE_DIR}/include"
                -DMODE=compile "-DFLAGS=${_strict}"
                -P "${PROJECT_SOURCE_DIR}/tests/typed/expect_compile.cmake"
        WORKING_DIRECTORY "${OPOOL_TEST_WORK_DIR}/hpp_strict")
    set_tests_properties(hpp_strict PROPERTIES TIMEOUT ${OPOOL_TEST_TIMEOUT} LABELS typed)
endif()
