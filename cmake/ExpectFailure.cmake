# Runs a lesson's test program built against a known-wrong implementation
# (the starter or a mutant) and succeeds only if the tests fail.
#   cmake -DPROGRAM=path [-DEVERY_CASE=ON] [-DEMULATOR=command] -P ExpectFailure.cmake
# EVERY_CASE (the starter's check): every test case must fail, run alone as
# the grader runs it (common/tools/run_tests.cpp), since a test case an
# untouched starter passes would earn points for no work. The cases are the
# program's own list (--course-list); GPU-only stand-ins on the emulator
# (--course-list-stand-ins) pass by design and are left out. A case run
# alone must show up in Catch2's XML report (the same in v2 and v3), so a
# name the test spec fails to match is an error, not a rejection.
# The whole program runs first and stops at its first failed test case
# (Catch2's --abort): for a mutant one failure is enough, as its exit status
# would be the same had it run the rest.
# The program's own watchdog (COURSE_TEST_TIMEOUT, set by CTest) stops a hung
# test case with a report; this timeout only guards against a program that
# ignores it.
# EMULATOR (a cross build's CMAKE_CROSSCOMPILING_EMULATOR, e.g. qemu-aarch64)
# runs the program.
# A program that is not there, or that cannot be run at all, proves nothing:
# that is an error, not a rejection.
cmake_minimum_required(VERSION 3.25)  # policies of today (IN_LIST)
if(NOT EXISTS "${PROGRAM}")
  message(FATAL_ERROR "${PROGRAM} was not built, so nothing was checked: build it first")
endif()
execute_process(COMMAND ${EMULATOR} "${PROGRAM}" --abort OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE result
                TIMEOUT 600)
string(REGEX MATCHALL "\\[course\\] first failure at [^\n]*" failures "${out}")
list(LENGTH failures failed_cases)
if(result EQUAL 0)
  message(FATAL_ERROR "the tests PASSED on ${PROGRAM}, which is known to be wrong: they cannot catch this mistake")
endif()
if(EVERY_CASE)
  # Each test case alone, as the grader runs them (a sticky CUDA error or any
  # state left by an earlier case must not hide a case that passes alone).
  execute_process(COMMAND ${EMULATOR} "${PROGRAM}" --course-list OUTPUT_VARIABLE names RESULT_VARIABLE listed)
  execute_process(COMMAND ${EMULATOR} "${PROGRAM}" --course-list-stand-ins OUTPUT_VARIABLE stand_ins RESULT_VARIABLE listed_too)
  if(NOT listed EQUAL 0 OR NOT listed_too EQUAL 0)
    message(FATAL_ERROR "${PROGRAM} --course-list failed (${listed}, ${listed_too}): its test cases are unknown")
  endif()
  if(names MATCHES ";" OR stand_ins MATCHES ";")
    message(FATAL_ERROR "a test case name of ${PROGRAM} holds a ';', which this check cannot list")
  endif()
  string(REPLACE "\n" ";" names "${names}")
  string(REPLACE "\n" ";" stand_ins "${stand_ins}")
  list(FILTER names EXCLUDE REGEX "^$")
  set(passed "")
  set(count 0)
  foreach(name IN LISTS names)
    if(name IN_LIST stand_ins)
      continue()  # a GPU-only stand-in on the emulator: passes by design
    endif()
    math(EXPR count "${count} + 1")
    # Catch2's test spec: a backslash before , [ ] and \ takes them as text.
    string(REGEX REPLACE "([],[\\])" "\\\\\\1" spec "${name}")
    execute_process(COMMAND ${EMULATOR} "${PROGRAM}" "${spec}" -r xml OUTPUT_VARIABLE case_out ERROR_VARIABLE case_err
                    RESULT_VARIABLE case_result TIMEOUT 600)
    if(case_result EQUAL 0)
      list(APPEND passed "'${name}'")
    elseif(NOT case_out MATCHES "<TestCase ")
      message(FATAL_ERROR "running '${name}' of ${PROGRAM} alone ran no test case (exit ${case_result}): "
                          "${case_out}${case_err}")
    endif()
  endforeach()
  if(count EQUAL 0)
    message(FATAL_ERROR "no test case of ${PROGRAM} was listed, so nothing was checked")
  endif()
  if(passed)
    string(JOIN ", " passed ${passed})
    message(FATAL_ERROR "the starter passes ${passed}, run alone as the grader runs it: an untouched starter "
                        "must earn no points; fold that check into a test case that needs real work")
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
if(EVERY_CASE)
  message(STATUS "rejected as expected (exit ${result}, each of ${count} test cases fails alone; ${first})")
else()
  message(STATUS "rejected as expected (exit ${result}, stopped at the first failing test case; ${first})")
endif()
