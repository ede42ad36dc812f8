# Runs a lesson's test program built against a known-wrong implementation
# (the starter or a mutant) and succeeds only if the tests fail.
#   cmake -DPROGRAM=path [-DEVERY_CASE=ON] [-DEMULATOR=command] -P ExpectFailure.cmake
# EVERY_CASE (the starter's check): every test case must fail, since a test
# case an untouched starter passes would earn points for no work. GPU-only
# stand-ins on the emulator (tag [emulator-stand-in]) pass by design and are
# left out. Read from Catch2's XML report, the same in v2 and v3: each
# <TestCase name="..." tags="..."> ends with <OverallResult success="...">.
# The program's own watchdog (COURSE_TEST_TIMEOUT, set by CTest) stops a hung
# test case with a report; this timeout only guards against a program that
# ignores it.
# EMULATOR (a cross build's CMAKE_CROSSCOMPILING_EMULATOR, e.g. qemu-aarch64)
# runs the program.
# A program that is not there, or that cannot be run at all, proves nothing:
# that is an error, not a rejection.
if(NOT EXISTS "${PROGRAM}")
  message(FATAL_ERROR "${PROGRAM} was not built, so nothing was checked: build it first")
endif()
set(reporter "")
if(EVERY_CASE)
  set(reporter -r xml)
endif()
execute_process(COMMAND ${EMULATOR} "${PROGRAM}" ${reporter} OUTPUT_VARIABLE out ERROR_VARIABLE err
                RESULT_VARIABLE result TIMEOUT 600)
string(REGEX MATCHALL "\\[course\\] first failure at [^\n]*" failures "${out}")
list(LENGTH failures failed_cases)
if(result EQUAL 0)
  message(FATAL_ERROR "the tests PASSED on ${PROGRAM}, which is known to be wrong: they cannot catch this mistake")
endif()
if(EVERY_CASE)
  # List separators, and the brackets that would stop a list splitting, are
  # not ours in this text.
  string(REPLACE ";" "," xml "${out}")
  string(REPLACE "[" "{" xml "${xml}")
  string(REPLACE "]" "}" xml "${xml}")
  string(REPLACE "<TestCase " ";<TestCase " cases "${xml}")
  list(POP_FRONT cases)  # what comes before the first test case
  set(passed "")
  set(count 0)
  foreach(case IN LISTS cases)
    math(EXPR count "${count} + 1")
    string(REGEX MATCH "^<TestCase [^>]*" tag "${case}")
    if(tag MATCHES "tags=\"[^\"]*{emulator-stand-in}")
      continue()
    endif()
    string(REGEX MATCH "<OverallResult success=\"([a-z]+)\"" overall "${case}")
    if(NOT overall)
      message(FATAL_ERROR "test case ${count} of ${PROGRAM} has no result in Catch2's XML report: ${tag}")
    endif()
    if(CMAKE_MATCH_1 STREQUAL "true")
      string(REGEX MATCH "name=\"([^\"]*)\"" name "${tag}")
      list(APPEND passed "'${CMAKE_MATCH_1}'")
    endif()
  endforeach()
  if(count EQUAL 0)
    message(FATAL_ERROR "no test case of ${PROGRAM} was reported, so nothing was checked")
  endif()
  if(passed)
    string(JOIN ", " passed ${passed})
    message(FATAL_ERROR "the starter passes ${passed}: an untouched starter must earn no points; fold that "
                        "check into a test case that needs real work")
  endif()
endif()
if(failed_cases GREATER 0)
  list(GET failures 0 first)
else()
  # No test case reported a failure: a crash of the program is a rejection,
  # but a program that cannot start at all is not ("Exec format error": one
  # built for another CPU, run without its emulator). Its own listing of its
  # test cases tells the two apart.
  execute_process(COMMAND ${EMULATOR} "${PROGRAM}" --course-list OUTPUT_VARIABLE listing ERROR_VARIABLE listing_err
                  RESULT_VARIABLE listing_result TIMEOUT 600)
  if(NOT listing_result EQUAL 0 OR listing STREQUAL "")
    message(FATAL_ERROR "${PROGRAM} does not run (listing its test cases failed: ${listing_result}), so nothing "
                        "was checked:\n${err}${listing_err}")
  endif()
  set(first "the program stopped without a test report: ${result}")
endif()
message(STATUS "rejected as expected (exit ${result}, ${failed_cases} failing test cases; ${first})")
