# The generator of docs/API.md (tools/apidoc.cmake) must refuse a public declaration that has
# no comment: this copies include/*.h to WORK, adds one such declaration to opool_side.h and
# runs the generator on the copy, which must fail and name it, with its header and line.
# Run by CTest (test api_doc_rejects_an_undocumented_declaration, label docs) as
#   cmake -DSOURCE_DIR=<repository> -DWORK=<scratch directory> -P tests/docs/undocumented.cmake
cmake_minimum_required(VERSION 3.20)

foreach(var SOURCE_DIR WORK)
    if(NOT DEFINED ${var})
        message(FATAL_ERROR "undocumented: ${var} not set")
    endif()
endforeach()

file(REMOVE_RECURSE "${WORK}/include")
file(MAKE_DIRECTORY "${WORK}/include")
file(GLOB headers "${SOURCE_DIR}/include/*.h")
file(COPY ${headers} DESTINATION "${WORK}/include")

set(anchor "typedef struct opool_side opool_side;\n")
file(READ "${WORK}/include/opool_side.h" text)
string(FIND "${text}" "${anchor}" at)
if(at EQUAL -1)
    message(FATAL_ERROR "undocumented: no `${anchor}` in opool_side.h to add a declaration after")
endif()
# the line the new declaration lands on: after the anchor's line and one blank line
string(SUBSTRING "${text}" 0 ${at} before)
string(REGEX MATCHALL "\n" newlines "${before}")
list(LENGTH newlines line)
math(EXPR line "${line} + 3")
string(REPLACE "${anchor}" "${anchor}\nOPOOL_API int opool_side_undocumented(void);\n" text "${text}")
file(WRITE "${WORK}/include/opool_side.h" "${text}")

execute_process(
    COMMAND "${CMAKE_COMMAND}" "-DINCLUDE_DIR=${WORK}/include" "-DOUT=${WORK}/API.md"
            -P "${SOURCE_DIR}/tools/apidoc.cmake"
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(expected "include/opool_side.h:${line}: opool_side_undocumented: no comment block")
if(rc EQUAL 0)
    message(FATAL_ERROR "undocumented: tools/apidoc.cmake accepted an undocumented declaration")
endif()
string(FIND "${err}" "${expected}" found)
if(found EQUAL -1)
    message(FATAL_ERROR "undocumented: tools/apidoc.cmake failed, but without naming "
                        "`${expected}`:\n${err}")
endif()
message(STATUS "undocumented: tools/apidoc.cmake refused it: ${expected}")
