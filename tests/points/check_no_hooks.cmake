# tests/points/check_no_hooks.cmake -- cmake -DNM=nm -DLIB=libopool.a -DHOOKED=libopool_test_hooks.a -P
#
# The shipped library must not contain the test hooks of src/opool_mt_points.h: its archive
# defines no opool__mt_set_point_hook. The control: the test-support copy (HOOKED) must define
# it, so that a symbol renamed one day cannot make this check pass by finding nothing anywhere.
set(hook_symbol opool__mt_set_point_hook)
foreach(var NM LIB HOOKED)
    if(NOT DEFINED ${var})
        message(FATAL_ERROR "check_no_hooks: -D${var}=... missing")
    endif()
endforeach()

function(defined_symbols out lib)
    execute_process(COMMAND "${NM}" -g --defined-only "${lib}"
        OUTPUT_VARIABLE text ERROR_VARIABLE err RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "check_no_hooks: ${NM} ${lib} failed: ${err}")
    endif()
    set(${out} "${text}" PARENT_SCOPE)
endfunction()

defined_symbols(hooked "${HOOKED}")
if(NOT hooked MATCHES "[ \t]${hook_symbol}\n")
    message(FATAL_ERROR "check_no_hooks: the control failed: ${HOOKED} does not define "
                        "${hook_symbol} (was it renamed? update this check)")
endif()
defined_symbols(shipped "${LIB}")
if(shipped MATCHES "[ \t]${hook_symbol}\n")
    message(FATAL_ERROR "check_no_hooks: the shipped library ${LIB} contains the test hooks")
endif()
message(STATUS "no test hook in ${LIB}; ${HOOKED} has them")
