# The lesson manifest from writer to reader (label `tools` in `./course
# check`): cmake/CourseLesson.cmake's manifest functions write a
# configuration and a lesson whose texts hold what JSON must escape (quotes,
# backslashes, tabs, newlines, other control characters) and what it must
# not (UTF-8), and course_report, which the driver asks, gives each back as
# it was written.
#
#   cmake -DROOT=<repo> -DSCRATCH=<empty folder> -DREPORT=<course_report> -P CheckManifest.cmake
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE "${SCRATCH}")
set(CMAKE_BINARY_DIR "${SCRATCH}")
set(COURSE_TEST_TIMEOUT 60)
include("${ROOT}/cmake/CourseLesson.cmake")
file(MAKE_DIRECTORY "${COURSE_META_DIR}")

string(ASCII 1 soh)
string(ASCII 31 unit_separator)
set(COURSE_BACKEND_RESOLVED "emu")
set(COURSE_BACKEND_REASON "asked for")
set(COURSE_DEVICE_NAME "a \"quoted\" C:\\path\\ device\twith a tab")
set(COURSE_SOURCE "/home/élève/starter — copy")
set(CMAKE_SOURCE_DIR "${ROOT}")
set(CMAKE_CXX_COMPILER_ID "GNU")
set(CMAKE_CXX_COMPILER_VERSION "12.2.0")
set(title "Quotes \"like these\", a back\\slash, a tab\there, ${soh}${unit_separator} and UTF-8: é — ✓")
set(skipped "GPU only: a reason\nover two lines")
_course_manifest_begin()
_course_manifest_add_lesson(07 first-lesson TITLE "Plain" POINTS 10 BENCH false SOURCES a.cu)
_course_manifest_add_lesson(42 odd-lesson TITLE "${title}" POINTS 07.5 BENCH true SKIPPED "${skipped}"
  SOURCES a.cu "b c.cu" FORBID "cub::" "\"x\"")

set(failures 0)
# expect(WANT ARGS...): `course_report manifest SCRATCH ARGS...` prints WANT and a newline.
function(expect want)
  execute_process(COMMAND "${REPORT}" manifest "${SCRATCH}" ${ARGN}
    OUTPUT_VARIABLE got ERROR_VARIABLE error RESULT_VARIABLE rc)
  string(JOIN " " asked ${ARGN})
  if(NOT rc EQUAL 0 OR NOT got STREQUAL "${want}\n")
    message(STATUS "FAIL: manifest ${asked}: expected [${want}], got [${got}] (exit ${rc}) ${error}")
    math(EXPR failures "${failures} + 1")
    set(failures ${failures} PARENT_SCOPE)
  else()
    message(STATUS "ok: manifest ${asked}")
  endif()
endfunction()

expect("07\n42" lessons)
expect("${COURSE_DEVICE_NAME}" configuration device)
expect("${COURSE_SOURCE}" configuration source)
expect("${ROOT}" configuration root)
expect("GNU 12.2.0" configuration compiler)
expect("Plain" lesson 07 title)
expect("false" lesson 07 bench)
expect("a.cu" lesson 07 sources)
expect("${title}" lesson 42 title)
expect("odd-lesson" lesson 42 slug)
expect("7.5" lesson 42 points)
expect("true" lesson 42 bench)
expect("${skipped}" lesson 42 skipped)
expect("a.cu\nb c.cu" lesson 42 sources)
expect("cub::\n\"x\"" lesson 42 forbid)

if(failures GREATER 0)
  message(FATAL_ERROR "${failures} field(s) of the manifest did not come back as written")
endif()
