# Runs a lesson's test program built against a known-wrong implementation
# (the starter or a mutant) and succeeds only if the tests fail.
#   cmake -DPROGRAM=path -P ExpectFailure.cmake
# The program's own watchdog (COURSE_TEST_TIMEOUT, set by CTest) stops a hung
# test case with a report; this timeout only guards against a program that
# ignores it.
# A program that is not there proves nothing: that is an error, not a rejection.
if(NOT EXISTS "${PROGRAM}")
  message(FATAL_ERROR "${PROGRAM} was not built, so nothing was checked: build it first")
endif()
execute_process(COMMAND "${PROGRAM}" OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE result TIMEOUT 600)
string(REGEX MATCHALL "\\[course\\] first failure at [^\n]*" failures "${out}")
list(LENGTH failures failed_cases)
if(result EQUAL 0)
  message(FATAL_ERROR "the tests PASSED on ${PROGRAM}, which is known to be wrong: they cannot catch this mistake")
endif()
if(failed_cases GREATER 0)
  list(GET failures 0 first)
else()
  set(first "the program stopped without a test report: ${result}")
endif()
message(STATUS "rejected as expected (exit ${result}, ${failed_cases} failing test cases; ${first})")
