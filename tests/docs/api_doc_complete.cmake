# Keeps docs/API.md complete: every public name of the public headers must have an entry.
# Run by CTest (test api_doc_complete, label docs) as
#   cmake -DHEADERS=include/a.h;include/b.h -DDOC=docs/API.md -P tests/docs/api_doc_complete.cmake
#
# The names: every identifier that starts with opool_ or OPOOL_ (not opool__/OPOOL__, which
# are private) in a header's code with its comments removed: functions, types, struct tags,
# macros, enum constants, and the configuration macros a header tests. The include guard (the
# first #ifndef of the file) is skipped. For OPOOL_TYPED, whose functions are made by token
# pasting, each `name##_xxx` of opool_typed.h stands for the documented P_xxx, and for
# OPOOL_TYPED_SIDE each `side##_xxx` for S_xxx.
#
# An entry: the name, as a whole word, in a heading line (starting with #) or in the first
# cell of a table row. A mention in running text does not count, so deleting the entry of a
# function that other entries mention still fails the test.
cmake_minimum_required(VERSION 3.20)

foreach(var HEADERS DOC)
    if(NOT DEFINED ${var})
        message(FATAL_ERROR "api_doc_complete: ${var} not set")
    endif()
endforeach()

# The text of a C file without its comments (string literals in the public headers hold
# neither comment markers nor names, so they need no special care).
function(strip_comments text out)
    set(result "")
    while(TRUE)
        string(FIND "${text}" "/*" at)
        if(at EQUAL -1)
            break()
        endif()
        string(SUBSTRING "${text}" 0 ${at} before)
        string(APPEND result "${before} ")
        math(EXPR from "${at} + 2")
        string(SUBSTRING "${text}" ${from} -1 text)
        string(FIND "${text}" "*/" end)
        if(end EQUAL -1)
            message(FATAL_ERROR "api_doc_complete: unterminated comment")
        endif()
        math(EXPR from "${end} + 2")
        string(SUBSTRING "${text}" ${from} -1 text)
    endwhile()
    string(APPEND result "${text}")
    string(REGEX REPLACE "//[^\n]*" "" result "${result}")
    set(${out} "${result}" PARENT_SCOPE)
endfunction()

set(names "")
foreach(header IN LISTS HEADERS)
    get_filename_component(file "${header}" NAME)
    file(READ "${header}" raw)
    # ';' and brackets would confuse CMake lists; no name contains them
    string(REGEX REPLACE "[][;\\\\]" " " raw "${raw}")
    strip_comments("${raw}" code)

    set(guard "")
    if(code MATCHES "#[ \t]*ifndef[ \t]+([A-Za-z0-9_]+)")
        set(guard "${CMAKE_MATCH_1}")
    endif()

    set(found 0)
    string(REGEX MATCHALL "[A-Za-z_][A-Za-z0-9_]*" idents "${code}")
    foreach(id IN LISTS idents)
        if(id MATCHES "^(opool|OPOOL)_[A-Za-z0-9]" AND NOT id STREQUAL guard)
            list(APPEND names "${id}")
            math(EXPR found "${found} + 1")
        endif()
    endforeach()
    # typed pools: name##_alloc is the documented P_alloc (name##__opool is private); typed
    # side tables: side##_put is the documented S_put
    foreach(_param_doc IN ITEMS "name=P" "side=S")
        string(REPLACE "=" ";" _param_doc "${_param_doc}")
        list(GET _param_doc 0 _param)
        list(GET _param_doc 1 _doc)
        string(REGEX MATCHALL "${_param}[ \t]*##[ \t]*_[a-z0-9][a-z0-9_]*" pasted "${code}")
        foreach(p IN LISTS pasted)
            string(REGEX REPLACE "^${_param}[ \t]*##[ \t]*_" "${_doc}_" p "${p}")
            list(APPEND names "${p}")
            math(EXPR found "${found} + 1")
        endforeach()
    endforeach()
    if(found EQUAL 0)
        message(FATAL_ERROR "api_doc_complete: no public name found in ${header}: "
                            "the extraction is broken")
    endif()
endforeach()
list(REMOVE_DUPLICATES names)
list(SORT names)
list(LENGTH names count)
# A guard against an extraction that silently finds next to nothing (the four headers of
# 0.1.0 give 142 names).
if(count LESS 100)
    message(FATAL_ERROR "api_doc_complete: only ${count} public names found: "
                        "the extraction is broken")
endif()

# The entries of the doc: its heading lines and the first cells of its table rows.
file(READ "${DOC}" doc)
string(REGEX REPLACE "[][;\\\\]" " " doc "${doc}")
string(REPLACE "\n" ";" lines "${doc}")
set(entries " ")
set(in_code FALSE)
foreach(line IN LISTS lines)
    if(line MATCHES "^```")
        if(in_code)
            set(in_code FALSE)
        else()
            set(in_code TRUE)
        endif()
    elseif(in_code)
        # a '#' line in a code block is C, not a heading
    elseif(line MATCHES "^#")
        string(APPEND entries "${line} ")
    elseif(line MATCHES "^\\|([^|]*)\\|")
        string(APPEND entries "${CMAKE_MATCH_1} ")
    endif()
endforeach()

set(missing "")
foreach(n IN LISTS names)
    if(NOT entries MATCHES "[^A-Za-z0-9_]${n}[^A-Za-z0-9_]")
        list(APPEND missing "${n}")
    endif()
endforeach()

if(missing)
    list(LENGTH missing nmissing)
    string(REPLACE ";" "\n  " shown "${missing}")
    message(FATAL_ERROR "api_doc_complete: ${nmissing} of ${count} public names have no entry "
                        "(a heading or a table row's first cell) in ${DOC}:\n  ${shown}")
endif()
message(STATUS "api_doc_complete: all ${count} public names have an entry in ${DOC}")
