# The check of the benchmark tables (tools/benchtables.py --check, the test
# bench_tables_up_to_date) must refuse a figure typed by hand: on a copy of README.md and
# docs/results, one digit of the first generated table is changed, and the check must fail
# naming README.md.
#   cmake -DSOURCE_DIR=<repo> -DWORK=<dir> -DPYTHON=<python3> -P tests/docs/edited_figure.cmake
cmake_minimum_required(VERSION 3.20)

file(REMOVE_RECURSE "${WORK}/tree")
file(MAKE_DIRECTORY "${WORK}/tree/docs")
file(COPY "${SOURCE_DIR}/docs/results" DESTINATION "${WORK}/tree/docs")
file(READ "${SOURCE_DIR}/README.md" readme)

# the first table row after the first `<!-- bench:` marker whose second cell is a figure: the
# figure's first digit becomes another
string(FIND "${readme}" "<!-- bench: " at)
if(at EQUAL -1)
    message(FATAL_ERROR "edited_figure: README.md has no <!-- bench: ... --> table")
endif()
string(SUBSTRING "${readme}" 0 ${at} head)
string(SUBSTRING "${readme}" ${at} -1 tail)
string(REGEX MATCH "\n\\|[^|\n]*\\| *[0-9]" row "${tail}")
if(row STREQUAL "")
    message(FATAL_ERROR "edited_figure: no figure in README.md's first generated table")
endif()
string(FIND "${tail}" "${row}" pos)
string(LENGTH "${row}" len)
math(EXPR digit_at "${pos} + ${len} - 1")
string(SUBSTRING "${tail}" ${digit_at} 1 digit)
if(digit STREQUAL "9")
    set(other 8)
else()
    math(EXPR other "${digit} + 1")
endif()
string(SUBSTRING "${tail}" 0 ${digit_at} before)
math(EXPR after_at "${digit_at} + 1")
string(SUBSTRING "${tail}" ${after_at} -1 after)
set(tail "${before}${other}${after}")
file(WRITE "${WORK}/tree/README.md" "${head}${tail}")

execute_process(
    COMMAND "${PYTHON}" "${SOURCE_DIR}/tools/benchtables.py" --check --root "${WORK}/tree" README.md
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0)
    message(FATAL_ERROR "edited_figure: the check accepted a hand-edited figure (${digit} -> ${other})")
endif()
if(NOT err MATCHES "README.md:[0-9]+: differs")
    message(FATAL_ERROR "edited_figure: the check failed without naming README.md:\n${out}${err}")
endif()
message(STATUS "edited_figure: the check refused a figure changed by hand (${digit} -> ${other})")
