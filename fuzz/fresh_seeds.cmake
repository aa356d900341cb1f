# fuzz/fresh_seeds.cmake -- the test fuzz_load_fresh_seeds (see fuzz/fuzz.cmake): generate the
# load seeds into OUT with GEN (each is checked to load as it is written), then replay them
# through the load target TARGET.
#   cmake -DGEN=... -DTARGET=... -DOUT=... [-DEMULATOR=...] -P fresh_seeds.cmake
# EMULATOR: what runs the programs of a cross-build (CMAKE_CROSSCOMPILING_EMULATOR: node for
# WebAssembly, qemu, wine), empty for a native one.
file(REMOVE_RECURSE "${OUT}")
file(MAKE_DIRECTORY "${OUT}")
execute_process(COMMAND ${EMULATOR} "${GEN}" load "${OUT}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${GEN} load ${OUT} failed (${rc})")
endif()
execute_process(COMMAND ${EMULATOR} "${TARGET}" "${OUT}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${TARGET} ${OUT} failed (${rc})")
endif()
