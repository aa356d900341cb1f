# misuse_expect.cmake -- runs misuse_env (a double free in a pool, a concurrent pool and a heap)
# with OPOOL_MISUSE set, and checks what the default reports did (include/opool.h, MISUSE).
#
#   cmake -DPROGRAM=<misuse_env> -DMODE=print|abort|<anything else> [-DEMULATOR=<runner>]
#         -P misuse_expect.cmake
#
#   print   exit 0; one line for each double free, saying what it was; the program went on
#   abort   the program stopped (abnormal exit) at the first misuse: its line, then the
#           line that says why, and nothing the program did after it
#   other   exit 0 and silence: misuse is loud only when asked
foreach(v PROGRAM MODE)
    if(NOT DEFINED ${v})
        message(FATAL_ERROR "misuse_expect.cmake: -D${v}=... is required")
    endif()
endforeach()

execute_process(COMMAND "${CMAKE_COMMAND}" -E env "OPOOL_MISUSE=${MODE}" ${EMULATOR} "${PROGRAM}"
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out TIMEOUT 60)

set(pool_line "opool: pool \"ships\" \\((0x)?[0-9a-fA-F]+\\): rejected free of handle 0x[0-9a-f]+: a double free: slot 0's object was freed already")
set(mt_line "opool: concurrent pool \"jobs\" \\((0x)?[0-9a-fA-F]+\\): rejected free of handle 0x[0-9a-f]+: a double free: slot [0-9]+'s object was freed already")
set(heap_line "opool: heap (0x)?[0-9a-fA-F]+: rejected block (0x)?[0-9a-fA-F]+: already free \\(a double free\\)")

set(problems "")
if(MODE STREQUAL "print")
    if(NOT rc STREQUAL "0")
        string(APPEND problems "  exit status ${rc}, expected 0\n")
    endif()
    foreach(kind pool mt heap)
        if(NOT out MATCHES "${${kind}_line}")
            string(APPEND problems "  no line for the ${kind}'s double free\n")
        endif()
    endforeach()
    if(NOT out MATCHES "after the misuse")
        string(APPEND problems "  the program did not go on after the first misuse\n")
    endif()
elseif(MODE STREQUAL "abort")
    if(rc STREQUAL "0")
        string(APPEND problems "  exit status 0: the program did not stop\n")
    endif()
    if(NOT out MATCHES "${pool_line}\r?\nopool: OPOOL_MISUSE=abort: aborting at the first misuse")
        string(APPEND problems "  no line for the pool's double free followed by the abort's\n")
    endif()
    if(out MATCHES "after the misuse|concurrent pool")
        string(APPEND problems "  the program went on\n")
    endif()
else()
    if(NOT rc STREQUAL "0")
        string(APPEND problems "  exit status ${rc}, expected 0\n")
    endif()
    if(out MATCHES "rejected")
        string(APPEND problems "  a rejection printed while misuse is not loud\n")
    endif()
endif()
if(problems)
    message(FATAL_ERROR "OPOOL_MISUSE=${MODE}:\n${problems}output:\n${out}")
endif()
message(STATUS "OPOOL_MISUSE=${MODE}: as promised")
