# The grading check (label `grading` in `./course check`): grades the hostile
# and broken submissions of tests/grading/expected.tsv, with good ones beside
# them, through `./course grade-all` on the emulator, and fails unless
#  - each submission's lesson 01 has its expected status, test cases passed
#    of the full list (so no attack on the grade gets more than its honest
#    part, and no test case goes missing), and reason, and the one using a
#    forbidden call is flagged with its file and line;
#  - the submissions that also hold lesson 10's solution get its full points
#    beside their attack on lesson 01;
#  - the hidden test of tests/grading/extra-tests/ counted and stayed hidden;
#  - nothing outside the students' own build trees changed: a canary file
#    next to them, the planted hidden test, the repository (no file the
#    hostile submissions write, README.md unmarked), the host's /tmp;
#  - no process of the student uids outlived the grading (when run as root);
#  - the gradebook came out in every format, Gradescope's and PrairieLearn's
#    results.json with the fields their documentation lists.
#
#   cmake -DROOT=<repo> -DSCRATCH=<empty folder> -DMAKE_MUTANT=<course_make_mutant> -P CheckGrading.cmake
cmake_minimum_required(VERSION 3.25)
set(marker "HACKED-BY-SUBMISSION")  # what tests/grading/cases/writes_outside.mutant writes
set(lesson 01-grid-stride-loop)
set(other 10-coroutine-host)  # graded beside lesson 01: quick to build and run
set(failures "")
macro(fail)
  string(JOIN "" text ${ARGN})
  list(APPEND failures "${text}")
  message(STATUS "FAIL: ${text}")
endmacro()

# A fresh start, but for the base tree (the emulator and the tests, rebuilt
# only where the course changed).
file(GLOB previous "${SCRATCH}/*" "${SCRATCH}/build/*")
list(FILTER previous EXCLUDE REGEX "^${SCRATCH}/build(/grade-base)?$")
if(previous)
  file(REMOVE_RECURSE ${previous})
endif()
set(submissions "${SCRATCH}/submissions")
set(extra "${SCRATCH}/extra-tests")  # the instructor's hidden tests, copied outside the repository
file(COPY "${ROOT}/tests/grading/extra-tests/${lesson}" DESTINATION "${extra}")
file(WRITE "${SCRATCH}/canary.txt" "the instructor's file next to the students' build trees\n")
file(SHA256 "${SCRATCH}/canary.txt" canary_before)
file(GLOB hidden_tests "${extra}/${lesson}/*")
file(SHA256 "${hidden_tests}" hidden_before)
file(READ "${ROOT}/README.md" readme_before)

# The submissions, as expected.tsv says each is made.
file(STRINGS "${ROOT}/tests/grading/expected.tsv" rows REGEX "^[a-z]")
set(cases "")
foreach(row IN LISTS rows)
  string(REPLACE "\t" ";" row "${row}")
  list(GET row 0 case)
  list(GET row 1 made_from)
  list(GET row 6 other_lesson)
  list(APPEND cases "${case}")
  set(dir "${submissions}/${case}")
  if(other_lesson STREQUAL "solution" AND made_from STREQUAL "solutions")
    file(COPY "${ROOT}/solutions/${other}" DESTINATION "${dir}/starter")  # beside lesson 01, one folder down
  elseif(other_lesson STREQUAL "solution")
    file(COPY "${ROOT}/solutions/${other}" DESTINATION "${dir}")
  endif()
  if(made_from STREQUAL "solutions")
    file(COPY "${ROOT}/solutions/${lesson}" DESTINATION "${dir}/starter")  # one folder down, as handed in
  elseif(made_from STREQUAL "starter")
    file(COPY "${ROOT}/starter/${lesson}" DESTINATION "${dir}")
  elseif(made_from STREQUAL "empty")
    file(MAKE_DIRECTORY "${dir}/${lesson}")
  else()
    file(MAKE_DIRECTORY "${dir}/${lesson}")
    execute_process(COMMAND "${MAKE_MUTANT}" "${ROOT}/solutions/${lesson}/saxpy.cu" "${ROOT}/${made_from}"
                            "${dir}/${lesson}/saxpy.cu" RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "cannot make ${case} from ${made_from}")
    endif()
  endif()
endforeach()

# Grade them. Short time limits keep the hung cases quick. Two submissions
# at a time (each in its own slot: its own uid where run as root), as on a
# machine of 4 CPUs or more, so that the parallel path is the one checked.
set(gradebook "${SCRATCH}/gradebook")
execute_process(
  COMMAND "${CMAKE_COMMAND}" -E env COURSE_BUILD_DIR=${SCRATCH}/build COURSE_BACKEND=emu COURSE_TEST_TIMEOUT=20
          COURSE_EMU_TIMEOUT=5 COURSE_JOBS=2 COURSE_GRADE_PARALLEL=2
          "${ROOT}/course" grade-all "${submissions}" --extra-tests "${extra}" --output "${gradebook}" --format table
          --visibility 10=after_published 01 10
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message(STATUS "${err}${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "./course grade-all failed (exit ${rc})")
endif()

# Every case as expected. Without bubblewrap the submissions see the
# repository as the grader's uid does: reading the solution then works, and
# those two cases are reported, not checked.
file(READ "${gradebook}/gradebook.json" json)
string(JSON isolation GET "${json}" isolation)
set(sandboxed TRUE)
if(NOT isolation MATCHES "^bubblewrap")
  set(sandboxed FALSE)
  message(STATUS "no bubblewrap sandbox here (${isolation}): not checking reads_instructor_files and includes_solution")
  list(FILTER rows EXCLUDE REGEX "^(reads_instructor_files|includes_solution)\t")
endif()
string(JSON count LENGTH "${json}" students)
math(EXPR last "${count} - 1")
foreach(row IN LISTS rows)
  string(REPLACE "\t" ";" row "${row}")
  list(GET row 0 case)
  list(GET row 2 want_status)
  list(GET row 3 want_tests)
  list(GET row 4 want_reason)
  list(GET row 5 want_flagged)
  list(GET row 6 other_lesson)
  set(found FALSE)
  foreach(i RANGE ${last})
    string(JSON name GET "${json}" students ${i} student)
    if(NOT name STREQUAL case)
      continue()
    endif()
    set(found TRUE)
    string(JSON status GET "${json}" students ${i} lessons 0 status)
    string(JSON passed GET "${json}" students ${i} lessons 0 passed)
    string(JSON points GET "${json}" students ${i} lessons 0 points)
    string(JSON reason GET "${json}" students ${i} lessons 0 reason)
    string(JSON flags LENGTH "${json}" students ${i} lessons 0 flags)
    string(JSON tests LENGTH "${json}" students ${i} lessons 0 tests)
    if(NOT status STREQUAL want_status)
      fail("${case}: status ${status}, expected ${want_status}; reason: ${reason}")
    endif()
    # Test cases passed of those graded: every test case of the list is
    # graded, and an attack gets no more than its honest part.
    if(NOT "${passed}/${tests}" STREQUAL want_tests)
      fail("${case}: ${passed} of ${tests} test cases passed, expected ${want_tests}; reason: ${reason}")
    endif()
    # The reason: the lesson's (its first failing test case's), or a later
    # failing test case's message (the emulator catches an out-of-bounds
    # write only where it leaves every allocation).
    if(NOT want_reason STREQUAL "")
      set(explained FALSE)
      if(reason MATCHES "${want_reason}")
        set(explained TRUE)
      elseif(tests GREATER 0)
        math(EXPR last_test "${tests} - 1")
        foreach(t RANGE ${last_test})
          string(JSON message GET "${json}" students ${i} lessons 0 tests ${t} message)
          if(message MATCHES "${want_reason}")
            set(explained TRUE)
          endif()
        endforeach()
      endif()
      if(NOT explained)
        fail("${case}: no reason matches '${want_reason}': ${reason}")
      endif()
    endif()
    if(want_flagged STREQUAL "yes")
      if(flags EQUAL 0)
        fail("${case}: not flagged for its forbidden call")
      else()
        string(JSON file GET "${json}" students ${i} lessons 0 flags 0 file)
        string(JSON line GET "${json}" students ${i} lessons 0 flags 0 line)
        if(NOT file STREQUAL "${lesson}/saxpy.cu" OR line LESS 1)
          fail("${case}: flagged at ${file}:${line}, expected ${lesson}/saxpy.cu and its line")
        endif()
      endif()
    elseif(NOT flags EQUAL 0)
      fail("${case}: flagged, but uses no forbidden call")
    endif()
    if(case STREQUAL "solution")
      string(JSON hidden GET "${json}" students ${i} lessons 0 tests 5 name)
      if(NOT hidden MATCHES "^hidden: ")
        fail("solution: the sixth test case graded is not the hidden one: ${hidden}")
      endif()
    endif()
    # The other lesson of the same submission, graded as usual.
    if(other_lesson STREQUAL "solution")
      string(JSON other_status GET "${json}" students ${i} lessons 1 status)
      string(JSON other_points GET "${json}" students ${i} lessons 1 points)
      if(NOT other_status STREQUAL "passed" OR NOT other_points EQUAL 10)
        fail("${case}: lesson 10's solution beside the attack got ${other_points} points (${other_status}), expected 10")
      endif()
    endif()
  endforeach()
  if(NOT found)
    fail("${case}: missing from the gradebook")
  endif()
endforeach()

# What the hostile submissions printed: they never read an instructor's file
# nor reached the network.
set(students "${SCRATCH}/build/grade-students")
if(sandboxed)
  file(READ "${students}/reads_instructor_files/results.jsonl" log)
  if(log MATCHES "\\[hostile\\] read ")
    fail("reads_instructor_files read an instructor's file")
  endif()
  if(NOT log MATCHES "\\[hostile\\] could not read")
    fail("reads_instructor_files: its tests did not run as expected")
  endif()
endif()
file(READ "${students}/opens_network/results.jsonl" log)
if(log MATCHES ": connected")
  fail("opens_network reached the network")
endif()

# Without bubblewrap (a container, the GPU machines) the grader uses its
# limits mode, where, as root, each test case runs in a PID namespace of its
# own: the signal a test process dies of must be reported there too (the
# namespace's init gets no signal it has no handler for, so abort() run as
# init died of SIGSEGV). Where the run above was sandboxed, `aborts` is
# graded again in that mode, and its reason checked the same way.
if(sandboxed)
  set(limits_json "${SCRATCH}/limits-aborts.json")
  execute_process(
    COMMAND "${CMAKE_COMMAND}" -E env COURSE_BUILD_DIR=${SCRATCH}/build COURSE_BACKEND=emu COURSE_TEST_TIMEOUT=20
            COURSE_EMU_TIMEOUT=5 COURSE_JOBS=2 COURSE_GRADE_ISOLATION=limits
            "${ROOT}/course" grade --submission "${submissions}/aborts" --extra-tests "${extra}" --format json
            --output "${limits_json}" 01
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(want_tests "")
  set(want_reason "")
  foreach(row IN LISTS rows)
    if(row MATCHES "^aborts\t[^\t]*\t[^\t]*\t([^\t]*)\t([^\t]*)\t")
      set(want_tests "${CMAKE_MATCH_1}")
      set(want_reason "${CMAKE_MATCH_2}")
    endif()
  endforeach()
  if(NOT rc EQUAL 1 OR NOT EXISTS "${limits_json}")
    fail("aborts in limits mode: ./course grade --submission exited ${rc} (expected 1, a failed lesson): ${err}${out}")
  elseif(want_reason STREQUAL "")
    fail("aborts in limits mode: no expected reason for aborts in expected.tsv")
  else()
    file(READ "${limits_json}" json)
    string(JSON isolation GET "${json}" isolation)
    string(JSON passed GET "${json}" students 0 lessons 0 passed)
    string(JSON tests LENGTH "${json}" students 0 lessons 0 tests)
    string(JSON reason GET "${json}" students 0 lessons 0 reason)
    message(STATUS "aborts in limits mode (${isolation}): ${passed}/${tests}, ${reason}")
    if(isolation MATCHES "^bubblewrap")
      fail("aborts in limits mode: graded in ${isolation}")
    endif()
    if(NOT "${passed}/${tests}" STREQUAL want_tests)
      fail("aborts in limits mode: ${passed} of ${tests} test cases passed, expected ${want_tests}")
    endif()
    if(NOT reason MATCHES "${want_reason}")
      fail("aborts in limits mode: no reason matches '${want_reason}': ${reason}")
    endif()
  endif()
endif()

# Nothing a submission started still runs after its grading (the student
# uids of two slots: 65534 and 65533). A zombie has ended: one whose parent
# died first waits for this machine's init to reap it.
execute_process(COMMAND id -u OUTPUT_VARIABLE uid OUTPUT_STRIP_TRAILING_WHITESPACE)
if(uid STREQUAL "0")
  execute_process(COMMAND ps -o stat=,pid=,args= -u 65534,65533 OUTPUT_VARIABLE processes)
  string(REGEX REPLACE "\n$" "" processes "${processes}")
  string(REPLACE "\n" ";" processes "${processes}")
  list(FILTER processes EXCLUDE REGEX "^ *Z")
  if(processes)
    fail("processes of the student uids outlived the grading: ${processes}")
  endif()
endif()

# Nothing outside the students' own trees changed.
file(SHA256 "${SCRATCH}/canary.txt" canary_after)
if(NOT canary_after STREQUAL canary_before)
  fail("the canary file next to the students' trees changed")
endif()
file(SHA256 "${hidden_tests}" hidden_after)
if(NOT hidden_after STREQUAL hidden_before)
  fail("the hidden test changed")
endif()
file(READ "${ROOT}/README.md" readme_after)
if(readme_after MATCHES "${marker}")
  fail("README.md of the repository was written to")
endif()
file(GLOB_RECURSE written LIST_DIRECTORIES false "${SCRATCH}/*${marker}*")
list(FILTER written EXCLUDE REGEX "^${students}/[^/]+/work/")
set(outside "${ROOT}" "${ROOT}/solutions/${lesson}" "${ROOT}/build" "${SCRATCH}/..")
if(sandboxed)
  list(APPEND outside /tmp)  # without the sandbox's private /tmp, anyone may write there
endif()
foreach(dir IN LISTS outside)
  if(EXISTS "${dir}/${marker}.txt")
    list(APPEND written "${dir}/${marker}.txt")
  endif()
endforeach()
if(written)
  fail("hostile submissions wrote outside their build trees: ${written}")
endif()

# The gradebook in every format.
foreach(file gradebook.csv gradebook.json gradebook.txt results.xml gradescope/solution/results.json
             prairielearn/solution/results.json)
  if(NOT EXISTS "${gradebook}/${file}")
    fail("the gradebook has no ${file}")
  endif()
endforeach()

# fail_unless_members(WHAT JSON ALLOWED... PATH...): every member of the JSON
# object at PATH is one of ALLOWED (a documented field).
function(check_members what json allowed)
  string(JSON count LENGTH "${json}" ${ARGN})
  if(count GREATER 0)
    math(EXPR last "${count} - 1")
    foreach(k RANGE ${last})
      string(JSON member MEMBER "${json}" ${ARGN} ${k})
      if(NOT member IN_LIST allowed)
        fail("${what}: field '${member}' is not in the documented list (${allowed})")
        set(failures "${failures}" PARENT_SCOPE)
      endif()
    endforeach()
  endif()
endfunction()

# Gradescope's results.json (gradescope.com's "Autograder specifications"):
# the fields it documents; per test: score, max_score, status and
# visibility; the hidden test after the due date, lesson 10 as asked.
set(gradescope_top score execution_time output output_format test_output_format test_name_format visibility
    stdout_visibility extra_data tests leaderboard)
set(gradescope_test score max_score status name name_format number output output_format tags visibility extra_data)
foreach(case solution exits_before_checks)
  file(READ "${gradebook}/gradescope/${case}/results.json" gradescope)
  check_members("gradescope/${case}" "${gradescope}" "${gradescope_top}")
  string(JSON score GET "${gradescope}" score)
  string(JSON count LENGTH "${gradescope}" tests)
  math(EXPR last "${count} - 1")
  foreach(t RANGE ${last})
    check_members("gradescope/${case} test ${t}" "${gradescope}" "${gradescope_test}" tests ${t})
    string(JSON name GET "${gradescope}" tests ${t} name)
    string(JSON status GET "${gradescope}" tests ${t} status)
    string(JSON visibility GET "${gradescope}" tests ${t} visibility)
    string(JSON max GET "${gradescope}" tests ${t} max_score)
    string(JSON got GET "${gradescope}" tests ${t} score)
    if(NOT status MATCHES "^(passed|failed)$")
      fail("gradescope/${case}: test '${name}' has status '${status}'")
    endif()
    if(name MATCHES "hidden: ")
      set(want_visibility after_due_date)
    elseif(name MATCHES "^Lesson 10 ")
      set(want_visibility after_published)
    else()
      set(want_visibility visible)
    endif()
    if(NOT visibility STREQUAL want_visibility)
      fail("gradescope/${case}: test '${name}' is ${visibility}, expected ${want_visibility}")
    endif()
    if(status STREQUAL "passed" AND NOT got EQUAL max)
      fail("gradescope/${case}: test '${name}' passed with ${got} of ${max}")
    endif()
  endforeach()
endforeach()
file(READ "${gradebook}/gradescope/solution/results.json" gradescope)
string(JSON score GET "${gradescope}" score)
if(NOT score EQUAL 20)
  fail("gradescope/solution/results.json: score ${score}, expected 20 (lessons 01 and 10, all passed)")
endif()

# PrairieLearn's external grading results.json (prairielearn.com's "External
# grading" page): gradable, a score from 0 to 1, tests with points.
set(prairielearn_top gradable score message output images tests)
set(prairielearn_test name description points max_points message output images)
foreach(case solution exits_before_checks compile_error)
  file(READ "${gradebook}/prairielearn/${case}/results.json" prairielearn)
  check_members("prairielearn/${case}" "${prairielearn}" "${prairielearn_top}")
  string(JSON gradable GET "${prairielearn}" gradable)
  string(JSON score GET "${prairielearn}" score)
  string(JSON count LENGTH "${prairielearn}" tests)
  math(EXPR last "${count} - 1")
  foreach(t RANGE ${last})
    check_members("prairielearn/${case} test ${t}" "${prairielearn}" "${prairielearn_test}" tests ${t})
    string(JSON points GET "${prairielearn}" tests ${t} points)
    string(JSON max_points GET "${prairielearn}" tests ${t} max_points)
    if(points GREATER max_points)
      fail("prairielearn/${case}: test ${t} has ${points} of ${max_points} points")
    endif()
  endforeach()
  # gradable: false only where nothing could be built (compile_error holds no lesson 10)
  set(want_gradable ON)
  if(case STREQUAL "solution")
    set(want_score 1)
  elseif(case STREQUAL "exits_before_checks")
    set(want_score 0.6666666667)  # lesson 01's two launch-shape test cases of six, and lesson 10: 13.33 of 20
  else()
    set(want_score 0)
    set(want_gradable OFF)
  endif()
  if(NOT gradable STREQUAL want_gradable OR NOT score EQUAL want_score)
    fail("prairielearn/${case}: gradable ${gradable}, score ${score}, expected gradable ${want_gradable} and ${want_score}")
  endif()
endforeach()

file(STRINGS "${gradebook}/gradebook.csv" csv)
list(LENGTH csv csv_rows)
list(LENGTH cases case_count)
math(EXPR want_rows "${case_count} + 1")
if(NOT csv_rows EQUAL want_rows)
  fail("gradebook.csv has ${csv_rows} lines, expected ${want_rows}")
endif()

list(LENGTH failures failed)
if(failed GREATER 0)
  string(JOIN "\n  " text ${failures})
  message(FATAL_ERROR "${failed} grading expectations failed:\n  ${text}")
endif()
message(STATUS "all ${case_count} submissions graded as expected, every one contained")
