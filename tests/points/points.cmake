# tests/points/points.cmake -- the deterministic-pause tests of opool_mt (included by
# tests/tests.cmake).
#
#   opool_test_hooks   a second copy of the library (opool_add_library_copy of
#                      tests/tests.cmake: the sources and the test support) with
#                      OPOOL_TEST_HOOKS: the named points of src/opool_mt_points.h call a hook
#                      that a test installs. Only the tests below link it; the shipped target
#                      opool is built without the macro and has no hook.
#   test_mt_points     tests/points/test_mt_points.c against that copy (label mt: the
#                      ThreadSanitizer stage runs it too). It links opool_test_hooks only,
#                      never opool::opool as well (every symbol would be defined twice).
#   shipped_library_has_no_test_hooks
#                      lists the symbols of the opool archive (nm) and fails if one of
#                      src/opool_mt_points.h is there (check_no_hooks.cmake).

opool_add_library_copy(opool_test_hooks OPOOL_TEST_HOOKS=1)
if(OPOOL_CAN_START_THREADS) # not in a single-threaded wasm build (CMakeLists.txt)
    opool_add_copy_test(test_mt_points "${PROJECT_SOURCE_DIR}/tests/points/test_mt_points.c"
        opool_test_hooks)
    set_tests_properties(test_mt_points PROPERTIES LABELS mt)
endif()

if(CMAKE_NM)
    add_test(NAME shipped_library_has_no_test_hooks
        COMMAND "${CMAKE_COMMAND}" "-DNM=${CMAKE_NM}" "-DLIB=$<TARGET_FILE:opool>"
                "-DHOOKED=$<TARGET_FILE:opool_test_hooks>"
                -P "${PROJECT_SOURCE_DIR}/tests/points/check_no_hooks.cmake")
    set_tests_properties(shipped_library_has_no_test_hooks PROPERTIES TIMEOUT ${OPOOL_TEST_TIMEOUT})
else()
    message(STATUS "opool: shipped_library_has_no_test_hooks skipped (no nm)")
endif()
