# tests/debugger/debugger.cmake -- gdb and lldb show handles and pools (docs/DEBUGGING.md,
# "Debuggers"); included by tests/tests.cmake. Each debugger_* test runs tests/debugger/run.sh:
# the debugger in batch mode, to the program's stop, whose printout must be the expect_*.txt
# beside it.
#   gdb_script_up_to_date   src/opool_gdb_script.h is tools/debugger/opool_gdb.py embedded
#   debugger_gdb_c, _cxx    debugger_prog.c / .cpp linked with a copy of the library built with
#                           -g: gdb loads the printers from the library's .debug_gdb_scripts
#   debugger_gdb_dist       debugger_prog.c with dist/opool.h alone: from the single header's
#   debugger_lldb_c, _cxx   lldb-14, tools/debugger/opool_lldb.py imported
# Native Linux builds with GCC or Clang and no sanitizer; a test without its debugger is skipped.

add_test(NAME gdb_script_up_to_date
    COMMAND "${CMAKE_COMMAND}" -DCHECK=ON "-DOUT=${PROJECT_BINARY_DIR}/generated/opool_gdb_script.h"
            -P "${PROJECT_SOURCE_DIR}/tools/debugger/embed.cmake")

if(NOT CMAKE_SYSTEM_NAME STREQUAL "Linux" OR CMAKE_CROSSCOMPILING OR OPOOL_SANITIZE
   OR NOT CMAKE_C_COMPILER_ID MATCHES "GNU|Clang")
    return()
endif()

set(_dbg "${PROJECT_SOURCE_DIR}/tests/debugger")
opool_add_library_copy(opool_debuginfo)
target_compile_options(opool_debuginfo PRIVATE -g)

function(opool_debugger_program name source)
    add_executable(${name} "${source}")
    target_compile_options(${name} PRIVATE -g -O0)
    if(Threads_FOUND)
        target_link_libraries(${name} PRIVATE Threads::Threads)
    endif()
    opool_warnings(${name})
endfunction()

opool_debugger_program(debugger_prog "${_dbg}/debugger_prog.c")
target_link_libraries(debugger_prog PRIVATE opool_debuginfo)
opool_debugger_program(debugger_prog_dist "${_dbg}/debugger_prog.c")
target_include_directories(debugger_prog_dist PRIVATE "${PROJECT_SOURCE_DIR}/dist")
target_compile_definitions(debugger_prog_dist PRIVATE OPOOL_IMPLEMENTATION)
set(_programs c debugger_prog dist debugger_prog_dist)
if(CMAKE_CXX_COMPILER)
    opool_debugger_program(debugger_prog_cxx "${_dbg}/debugger_prog.cpp")
    set_target_properties(debugger_prog_cxx PROPERTIES CXX_STANDARD 17)
    target_link_libraries(debugger_prog_cxx PRIVATE opool_debuginfo)
    list(APPEND _programs cxx debugger_prog_cxx)
endif()

foreach(debugger gdb lldb)
    set(_list ${_programs})
    while(_list)
        list(POP_FRONT _list kind target)
        if(debugger STREQUAL "lldb" AND kind STREQUAL "dist")
            continue() # the same script as for the library's program: nothing loads it
        endif()
        set(expect "${_dbg}/expect_${debugger}_${kind}.txt")
        if(kind STREQUAL "dist")
            set(expect "${_dbg}/expect_gdb_c.txt") # the same program, the same printout
        endif()
        add_test(NAME debugger_${debugger}_${kind}
            COMMAND "${_dbg}/run.sh" ${debugger} $<TARGET_FILE:${target}> "${expect}"
                    "${PROJECT_SOURCE_DIR}/tools/debugger/opool_lldb.py")
        set_tests_properties(debugger_${debugger}_${kind} PROPERTIES
            TIMEOUT ${OPOOL_TEST_TIMEOUT} SKIP_RETURN_CODE 77)
    endwhile()
endforeach()
