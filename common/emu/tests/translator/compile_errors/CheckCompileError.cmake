# A source the emulator's build must refuse, as nvcc does: translates SOURCE,
# compiles it with the host compiler (syntax only) and passes when that fails
# with a message matching EXPECT (the file, the line and the cause).
#   cmake -DTRANSLATOR=... -DCXX=... -DINCLUDE=<emu/include> -DSOURCE=x.cu -DEXPECT=<regex> -DWORK=<dir>
#         [-DEMULATOR=command] -P CheckCompileError.cmake
# EMULATOR: a cross build's CMAKE_CROSSCOMPILING_EMULATOR (qemu-aarch64), which
# runs the translator, a program of the target; the cross compiler runs natively.
get_filename_component(name "${SOURCE}" NAME_WE)
file(MAKE_DIRECTORY "${WORK}")
set(translated "${WORK}/${name}.cpp")
execute_process(COMMAND ${EMULATOR} "${TRANSLATOR}" "${SOURCE}" "${translated}" RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the translator refused ${SOURCE}: ${err}")
endif()
execute_process(COMMAND "${CXX}" -std=c++20 -fsyntax-only "-I${INCLUDE}" "${translated}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(rc EQUAL 0)
  message(FATAL_ERROR "${SOURCE} compiled, but nvcc refuses it: the emulator's build must too")
endif()
if(NOT out MATCHES "${EXPECT}")
  message(FATAL_ERROR "${SOURCE} failed to compile, but the message does not match \"${EXPECT}\":\n${out}")
endif()
message(STATUS "${SOURCE}: refused as expected:\n${out}")
