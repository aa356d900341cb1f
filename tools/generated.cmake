# tools/generated.cmake -- the one way a generator of this repository (amalgamate.cmake,
# apidoc.cmake) writes its output or checks that the committed copy is current.
#
#   opool_write_or_check(FILE <committed path> CONTENT_VAR <variable holding the text>
#                        MAKE <make target>
#                        FROM <what it was generated from> SUMMARY <one-line summary>
#                        [HINT <extra advice when the committed copy is stale>])
#
# Reads the script's CHECK and OUT variables (-DCHECK=ON, -DOUT=file):
#   CHECK off  write the text to OUT, or to FILE when OUT is not set;
#   CHECK on   write the text to OUT if set (a fresh copy to compare with), then fail, telling
#              to run `make <MAKE>`, unless FILE holds exactly the text.
# The text is passed by name: generated C holds semicolons, which split CMake arguments.

function(opool_write_or_check)
    cmake_parse_arguments(arg "" "FILE;CONTENT_VAR;MAKE;FROM;SUMMARY;HINT" "" ${ARGN})
    set(content "${${arg_CONTENT_VAR}}")
    file(RELATIVE_PATH shown "${root}" "${arg_FILE}")
    file(RELATIVE_PATH script "${root}" "${CMAKE_CURRENT_LIST_FILE}")
    if(CHECK)
        if(DEFINED OUT)
            file(WRITE "${OUT}" "${content}")
        endif()
        set(old "")
        if(EXISTS "${arg_FILE}")
            file(READ "${arg_FILE}" old)
        endif()
        if(NOT old STREQUAL content)
            set(diff "")
            if(DEFINED OUT)
                set(diff " (compare with ${OUT}, generated from the ${arg_FROM} now)")
            endif()
            message(FATAL_ERROR "${shown} is out of date or was edited by hand${diff}: run "
                                "`make ${arg_MAKE}` (or cmake -P ${script}) and "
                                "commit the result. ${arg_HINT}")
        endif()
        message(STATUS "${shown} is up to date (${arg_SUMMARY})")
    else()
        set(out "${arg_FILE}")
        if(DEFINED OUT)
            set(out "${OUT}")
        endif()
        file(WRITE "${out}" "${content}")
        message(STATUS "wrote ${out} (${arg_SUMMARY})")
    endif()
endfunction()
