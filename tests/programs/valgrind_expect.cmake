# valgrind_expect.cmake -- a test that PASSES only if Valgrind memcheck catches a misuse.
#
#   cmake -DVALGRIND=<valgrind> -DPROGRAM=<exe> -DMODE=<argument>
#         -DEXPECT=<regex> [-DEXPECT_FRAME=<regex>] [-DEXPECT_ORIGIN=<regex>]
#         -P valgrind_expect.cmake
#
# Runs PROGRAM MODE under memcheck with --error-exitcode=99 and requires all of:
#   - exit status 99: memcheck found at least one error;
#   - "ERROR SUMMARY: 1 errors from 1 contexts": exactly one, the intended one;
#   - EXPECT in the output (the kind of error, e.g. "Invalid read of size 4");
#   - EXPECT_FRAME (if given) in the output: the error is in the function that
#     commits the misuse, not somewhere else;
#   - EXPECT_ORIGIN (if given): for uninitialised values, where they came from.
foreach(v VALGRIND PROGRAM MODE EXPECT)
    if(NOT DEFINED ${v})
        message(FATAL_ERROR "valgrind_expect.cmake: -D${v}=... is required")
    endif()
endforeach()

execute_process(
    COMMAND "${VALGRIND}" --tool=memcheck --error-exitcode=99 --track-origins=yes
            --leak-check=no "${PROGRAM}" "${MODE}"
    RESULT_VARIABLE rc
    OUTPUT_VARIABLE out
    ERROR_VARIABLE out
    TIMEOUT 60)

set(problems "")
if(NOT rc STREQUAL "99")
    string(APPEND problems "  exit status ${rc}, expected 99 (memcheck found nothing?)\n")
endif()
if(NOT out MATCHES "ERROR SUMMARY: 1 errors from 1 contexts")
    string(APPEND problems "  not exactly one memcheck error\n")
endif()
if(NOT out MATCHES "${EXPECT}")
    string(APPEND problems "  no \"${EXPECT}\" in the output\n")
endif()
if(DEFINED EXPECT_FRAME AND NOT out MATCHES "${EXPECT_FRAME}")
    string(APPEND problems "  the error does not name \"${EXPECT_FRAME}\"\n")
endif()
if(DEFINED EXPECT_ORIGIN AND NOT out MATCHES "${EXPECT_ORIGIN}")
    string(APPEND problems "  no \"${EXPECT_ORIGIN}\" in the output\n")
endif()

if(problems)
    message(FATAL_ERROR "valgrind did not catch '${MODE}' as expected:\n${problems}"
                        "---- output of valgrind ${PROGRAM} ${MODE} ----\n${out}")
endif()
message(STATUS "valgrind caught '${MODE}' (${EXPECT})")
