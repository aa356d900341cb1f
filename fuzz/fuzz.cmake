# fuzz/fuzz.cmake -- included by CMakeLists.txt (inside if(OPOOL_BUILD_TESTS)).
#
# Each fuzz target fuzz/<name>.c (it defines LLVMFuzzerTestOneInput) is built with the
# standalone driver fuzz/driver.c as fuzz_<name>, and its committed seed corpus
# fuzz/corpus/<name>/ is replayed as the test fuzz_<name>_corpus: in build/asan under
# ASan+UBSan, like every test there. libFuzzer builds are made by `make fuzz` (Makefile),
# not here.
#
#   fuzz_ops    a config and a sequence of pool operations, checked against tests/model.h
#   fuzz_heap   a heap config and a sequence of alloc/calloc/realloc/free/usable_size (and bad
#               pointers), checked against shadow copies of every live block
#   fuzz_load   bytes fed to opool_load, plus save/load round trips (only once the library
#               has opool_load: src/*.c defines it)
#   fuzz_gen_corpus   writes the seed corpora (make fuzz-corpus); test fuzz_load_fresh_seeds
#               generates load seeds into the test's directory and replays them, so a format
#               change cannot leave the committed seeds silently invalid
#
# test_faults (tests/) gets OPOOL_TEST_HAVE_LOAD=1 when opool_load exists.

set(OPOOL_FUZZ_DIR "${PROJECT_SOURCE_DIR}/fuzz")

# Does the library define opool_load yet? (save/load lives in its own module)
set(OPOOL_HAVE_LOAD OFF)
file(GLOB _opool_fuzz_srcs "${PROJECT_SOURCE_DIR}/src/*.c")
foreach(_src IN LISTS _opool_fuzz_srcs)
    # re-run this check when a module changes (the definition may appear later)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_src}")
    file(READ "${_src}" _text)
    if(_text MATCHES "opool_status[ \t\r\n]+opool_load[ \t\r\n]*\\(opool[ \t]*\\*\\*")
        set(OPOOL_HAVE_LOAD ON)
    endif()
endforeach()
if(NOT OPOOL_HAVE_LOAD)
    message(STATUS "opool: fuzz_load and the load fault tests skipped: no opool_load in src/ yet")
endif()

# A program of fuzz/: the library, its private headers, the model, the warnings.
function(opool_fuzz_program target)
    set(opool_link ${OPOOL_TEST_LIB})
    opool_program(${target} ${ARGN})
    target_link_libraries(${target} PRIVATE ${_opool_test_deps}) # opool__check
    target_include_directories(${target} PRIVATE
        "${OPOOL_FUZZ_DIR}" "${PROJECT_SOURCE_DIR}/src" "${PROJECT_SOURCE_DIR}/tests")
    target_compile_definitions(${target} PRIVATE ${OPOOL_TEST_DEFINITIONS})
    target_compile_options(${target} PRIVATE ${OPOOL_UNDEBUG})
endfunction()

function(opool_add_fuzz_target name)
    opool_fuzz_program(fuzz_${name} "${OPOOL_FUZZ_DIR}/${name}.c" "${OPOOL_FUZZ_DIR}/driver.c")
    opool_register_test(fuzz_${name}_corpus fuzz_${name} "${OPOOL_FUZZ_DIR}/corpus/${name}")
endfunction()

opool_add_fuzz_target(ops)
opool_add_fuzz_target(heap)

if(OPOOL_HAVE_LOAD)
    opool_add_fuzz_target(load)
    opool_fuzz_program(fuzz_gen_corpus "${OPOOL_FUZZ_DIR}/gen_corpus.c")
    target_compile_definitions(fuzz_gen_corpus PRIVATE OPOOL_FUZZ_HAVE_LOAD=1)
    # generate the load seeds afresh (each is checked to load as it is written), replay them
    opool_register_test(fuzz_load_fresh_seeds "${CMAKE_COMMAND}"
        "-DGEN=$<TARGET_FILE:fuzz_gen_corpus>" "-DTARGET=$<TARGET_FILE:fuzz_load>"
        "-DOUT=${OPOOL_TEST_WORK_DIR}/fuzz_load_fresh_seeds/seeds"
        "-DEMULATOR=${CMAKE_CROSSCOMPILING_EMULATOR}"
        -P "${OPOOL_FUZZ_DIR}/fresh_seeds.cmake")
    if(TARGET test_faults)
        target_compile_definitions(test_faults PRIVATE OPOOL_TEST_HAVE_LOAD=1)
    endif()
else()
    opool_fuzz_program(fuzz_gen_corpus "${OPOOL_FUZZ_DIR}/gen_corpus.c")
endif()
