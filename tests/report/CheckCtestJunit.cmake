# `course_report ctest-junit FILE` (./course check's counts) on JUnit files
# shaped as CTest writes them: passed, failed and not-run test cases, a
# "SKIP: " line with escaped characters in a passing test's output, a test
# that prints a fake summary and a fake SKIP line inside a failure, an empty
# run and a missing file.
#   cmake -DREPORT=<course_report> -DSCRATCH=<dir> -P CheckCtestJunit.cmake
file(REMOVE_RECURSE "${SCRATCH}")
file(MAKE_DIRECTORY "${SCRATCH}")
set(failures 0)

# expect(FILE RC OUTPUT): course_report ctest-junit FILE exits RC and prints OUTPUT.
function(expect file want_rc want_out)
  execute_process(COMMAND "${REPORT}" ctest-junit "${file}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc STREQUAL want_rc OR NOT out STREQUAL want_out)
    message(SEND_ERROR "ctest-junit ${file}: exit ${rc} (want ${want_rc}), printed:\n${out}${err}\nwanted:\n${want_out}")
  endif()
endfunction()

file(WRITE "${SCRATCH}/mixed.xml" [=[<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="(empty)"
	tests="4"
	failures="1"
	disabled="0"
	skipped="1"
	>
	<testcase name="student loop: watch" classname="student loop: watch" time="1.5" status="run">
		<system-out>ok: one
SKIP: watch&apos;s inotify mode is not tested: &lt;inotifywait&gt; &amp; &quot;tmux&quot; &#233;t&#xE9;
</system-out>
	</testcase>
	<testcase name="01: tests reject starter" classname="01: tests reject starter" time="0.1" status="fail">
		<failure message="Failed"/>
		<system-out>100% tests passed, 0 tests failed out of 9
SKIP: not a skip of a passing test
</system-out>
	</testcase>
	<testcase name="14: GPU only, skipped on the emulator" classname="14: GPU only" time="0.0" status="notrun">
		<skipped message="SKIP_REGULAR_EXPRESSION_MATCHED"/>
		<system-out>skipped</system-out>
	</testcase>
	<testcase name="a &lt;b&gt;" classname="x" time="0.0" status="run"/>
</testsuite>
]=])
expect("${SCRATCH}/mixed.xml" 1 "SKIP: watch's inotify mode is not tested: <inotifywait> & \"tmux\" été
failed: 01: tests reject starter
2 passed, 1 failed, 1 not run
")

file(WRITE "${SCRATCH}/green.xml" [=[<testsuite tests="1">
	<testcase name="a" status="run"><system-out>All tests passed</system-out></testcase>
</testsuite>
]=])
expect("${SCRATCH}/green.xml" 0 "1 passed, 0 failed, 0 not run\n")

file(WRITE "${SCRATCH}/empty.xml" "<testsuite tests=\"0\">\n</testsuite>\n")
expect("${SCRATCH}/empty.xml" 2 "")
expect("${SCRATCH}/missing.xml" 2 "")
