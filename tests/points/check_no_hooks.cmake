# tests/points/check_no_hooks.cmake -- cmake -DNM=nm -DLIB=libopool.a -DHOOKED=libopool_test_hooks.a -P
#
# The shipped library must not contain the test hooks of src/opool_mt_points.h: its archive
# defines no opool__mt_set_point_hook. The control: the test-support copy (HOOKED) must define
# it, so that a symbol renamed one day cannot make this check pass by finding nothing anywhere.
# The same for the test support of tests/support (opool__mt_check, opool__mt_set_gen), which the
# test copies of the library compile into themselves and the shipped one must not.
set(test_only_symbols opool__mt_set_point_hook opool__mt_check opool__mt_set_gen)
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
defined_symbols(shipped "${LIB}")
foreach(sym IN LISTS test_only_symbols)
    if(NOT hooked MATCHES "[ \t]${sym}\n")
        message(FATAL_ERROR "check_no_hooks: the control failed: ${HOOKED} does not define "
                            "${sym} (was it renamed? update this check)")
    endif()
    if(shipped MATCHES "[ \t]${sym}\n")
        message(FATAL_ERROR "check_no_hooks: the shipped library ${LIB} contains ${sym}, "
                            "which is test code")
    endif()
endforeach()
message(STATUS "no test hook or test support in ${LIB}; ${HOOKED} has them")
