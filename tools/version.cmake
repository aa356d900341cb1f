# tools/version.cmake -- the library's version, read from the one place it is written:
# include/opool.h's OPOOL_VERSION_MAJOR/MINOR/PATCH. Used by CMakeLists.txt (the project's
# VERSION) and by the generators (amalgamate.cmake, apidoc.cmake).
#
#   opool_read_version(<opool.h path> <result variable>)   sets the variable to "M.m.p";
#                                                           a fatal error without all three

function(opool_read_version header out)
    file(STRINGS "${header}" lines REGEX "^#define OPOOL_VERSION_(MAJOR|MINOR|PATCH) +[0-9]+")
    set(parts "")
    foreach(l IN LISTS lines)
        string(REGEX REPLACE "^#define OPOOL_VERSION_[A-Z]+ +([0-9]+).*" "\\1" v "${l}")
        list(APPEND parts "${v}")
    endforeach()
    list(JOIN parts "." version)
    if(NOT version MATCHES "^[0-9]+\\.[0-9]+\\.[0-9]+$")
        message(FATAL_ERROR "opool: no OPOOL_VERSION_MAJOR/MINOR/PATCH in ${header}")
    endif()
    set(${out} "${version}" PARENT_SCOPE)
endfunction()
