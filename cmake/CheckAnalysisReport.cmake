# cmake -DPROGRAM=... -DTESTS="catch spec" -DEXPECT="re;..." -DREJECT="re;..." -DREPORT=file [-DEMULATOR=...]
#       -P CheckAnalysisReport.cmake
# Runs a lesson's analysed test program (what `./course analyze NN` runs) on
# the test cases TESTS with COURSE_EMU_ANALYZE=1, and checks its report:
# the tests pass, every EXPECT regex matches a line, no REJECT regex does.
# EMULATOR (a cross build's CMAKE_CROSSCOMPILING_EMULATOR) runs the program.
get_filename_component(folder "${REPORT}" DIRECTORY)
file(MAKE_DIRECTORY "${folder}")
file(REMOVE "${REPORT}")
set(ENV{COURSE_EMU_ANALYZE} 1)
set(ENV{COURSE_EMU_ANALYZE_REPORT} "${REPORT}")
set(ENV{COURSE_EMU_SCHEDULE} forward)
execute_process(COMMAND ${EMULATOR} "${PROGRAM}" "${TESTS}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} \"${TESTS}\" failed (${rc}):\n${out}")
endif()
if(NOT EXISTS "${REPORT}")
  message(FATAL_ERROR "no report written to ${REPORT}:\n${out}")
endif()
file(READ "${REPORT}" report)
message("${report}")
foreach(re IN LISTS EXPECT)
  if(NOT report MATCHES "${re}")
    message(FATAL_ERROR "the report has no line matching: ${re}")
  endif()
endforeach()
foreach(re IN LISTS REJECT)
  if(report MATCHES "${re}")
    message(FATAL_ERROR "the report has a line matching what it must not: ${re} (${CMAKE_MATCH_0})")
  endif()
endforeach()
