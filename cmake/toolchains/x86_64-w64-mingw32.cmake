# 64-bit Windows, built with Debian's mingw-w64 (its posix-thread flavour) and run under wine:
#   cmake -S . -B build/mingw64 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/x86_64-w64-mingw32.cmake
# (packages mingw-w64 wine64; make platforms does it all)
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(CMAKE_C_COMPILER x86_64-w64-mingw32-gcc-posix)
set(CMAKE_CXX_COMPILER x86_64-w64-mingw32-g++-posix)
set(CMAKE_RC_COMPILER x86_64-w64-mingw32-windres)
# Debian's wine64 package puts wine64 in /usr/lib/wine, off PATH (the wine package links
# /usr/bin/wine to it).
find_program(OPOOL_WINE64 NAMES wine64 wine PATHS /usr/lib/wine NO_CMAKE_FIND_ROOT_PATH)
set(CMAKE_CROSSCOMPILING_EMULATOR ${OPOOL_WINE64})
set(CMAKE_FIND_ROOT_PATH /usr/x86_64-w64-mingw32)
# The GCC, C++ and winpthreads runtimes linked in (-static): a program runs under wine, or
# is copied to Windows, without their DLLs beside it.
set(CMAKE_EXE_LINKER_FLAGS_INIT -static)
set(CMAKE_SHARED_LINKER_FLAGS_INIT -static)
set(CMAKE_MODULE_LINKER_FLAGS_INIT -static)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
