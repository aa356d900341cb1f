# tests/points/points.cmake -- the deterministic-pause tests of opool_mt (included by
# tests/tests.cmake).
#
#   opool_test_hooks   a second copy of the library, built from the same sources with
#                      OPOOL_TEST_HOOKS: the named points of src/opool_mt_points.h call a hook
#                      that a test installs. Only the tests below link it; the shipped target
#                      opool is built without the macro and has no hook.
#   test_mt_points     tests/points/test_mt_points.c against that copy (label mt: the
#                      ThreadSanitizer stage runs it too). It links opool_test_hooks only,
#                      never opool::opool as well (every symbol would be defined twice), so it
#                      is put together here rather than by opool_add_test.
#   shipped_library_has_no_test_hooks
#                      lists the symbols of the opool archive (nm) and fails if one of
#                      src/opool_mt_points.h is there (check_no_hooks.cmake).

add_library(opool_test_hooks STATIC ${OPOOL_SOURCES})
# The opool target's include directories, definitions and options (warnings), plus the hooks.
target_include_directories(opool_test_hooks
    PUBLIC "${PROJECT_SOURCE_DIR}/include"
    PRIVATE $<TARGET_PROPERTY:opool,INCLUDE_DIRECTORIES>)
target_compile_definitions(opool_test_hooks
    PRIVATE $<TARGET_PROPERTY:opool,COMPILE_DEFINITIONS>
    PUBLIC OPOOL_TEST_HOOKS=1)
target_compile_options(opool_test_hooks PRIVATE $<TARGET_PROPERTY:opool,COMPILE_OPTIONS>)
set_target_properties(opool_test_hooks PROPERTIES
    C_STANDARD 11 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
if(Threads_FOUND)
    target_link_libraries(opool_test_hooks PUBLIC Threads::Threads)
endif()
if(OPOOL_NEEDS_LIBATOMIC)
    target_link_libraries(opool_test_hooks PUBLIC atomic)
endif()

add_executable(test_mt_points "${PROJECT_SOURCE_DIR}/tests/points/test_mt_points.c")
target_link_libraries(test_mt_points PRIVATE opool_test_hooks)
target_include_directories(test_mt_points PRIVATE
    "${PROJECT_SOURCE_DIR}/tests" "${PROJECT_SOURCE_DIR}/src")
target_compile_definitions(test_mt_points PRIVATE ${OPOOL_TEST_DEFINITIONS})
target_compile_options(test_mt_points PRIVATE ${OPOOL_UNDEBUG})
opool_warnings(test_mt_points)
opool_register_test(test_mt_points test_mt_points)
set_tests_properties(test_mt_points PROPERTIES LABELS mt)

if(CMAKE_NM)
    add_test(NAME shipped_library_has_no_test_hooks
        COMMAND "${CMAKE_COMMAND}" "-DNM=${CMAKE_NM}" "-DLIB=$<TARGET_FILE:opool>"
                "-DHOOKED=$<TARGET_FILE:opool_test_hooks>"
                -P "${PROJECT_SOURCE_DIR}/tests/points/check_no_hooks.cmake")
    set_tests_properties(shipped_library_has_no_test_hooks PROPERTIES TIMEOUT ${OPOOL_TEST_TIMEOUT})
else()
    message(STATUS "opool: shipped_library_has_no_test_hooks skipped (no nm)")
endif()
