# fuzz/fresh_seeds.cmake -- the test fuzz_load_fresh_seeds (see fuzz/fuzz.cmake): generate the
# load seeds into OUT with GEN (each is checked to load as it is written), then replay them
# through the load target TARGET.
#   cmake -DGEN=... -DTARGET=... -DOUT=... -P fresh_seeds.cmake
file(REMOVE_RECURSE "${OUT}")
file(MAKE_DIRECTORY "${OUT}")
execute_process(COMMAND "${GEN}" load "${OUT}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${GEN} load ${OUT} failed (${rc})")
endif()
execute_process(COMMAND "${TARGET}" "${OUT}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${TARGET} ${OUT} failed (${rc})")
endif()
