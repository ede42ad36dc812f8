# The check that a lesson's starter file is its solution with the student's
# part taken out by the lesson's edit file (tests/NN-slug/NAME.starter), and
# nothing else: the given code of a starter can then never drift from the
# solution's. Run by CTest:
#   cmake -DTOOL=<course_make_mutant> -DSOLUTION=<.cu> -DEDIT=<.starter>
#         -DSTARTER=<.cu> -DOUTPUT=<file> -DLESSON=NN -P CheckStarter.cmake
if(NOT EXISTS "${EDIT}")
  message(FATAL_ERROR "${EDIT} is missing: every starter file is kept as an edit of its solution. "
                      "Write it with ./course starter-edit ${LESSON}")
endif()
execute_process(COMMAND "${TOOL}" --starter "${SOLUTION}" "${EDIT}" "${OUTPUT}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${err}${out}the solution changed where the starter's edit replaces text: "
                      "update ${EDIT} (./course starter-edit ${LESSON} writes it from the solution and the starter)")
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" -E compare_files "${OUTPUT}" "${STARTER}" RESULT_VARIABLE differ)
if(NOT differ EQUAL 0)
  message(FATAL_ERROR "${STARTER} is not ${SOLUTION} with ${EDIT} applied (that is ${OUTPUT}): "
                      "the starter's given code has drifted from the solution's, or the starter was edited by hand. "
                      "Change the solution and the edit, then run ./course starter-edit ${LESSON} --apply "
                      "to write the starter, or ./course starter-edit ${LESSON} to write the edit from the starter.")
endif()
message(STATUS "${STARTER}: the solution with ${EDIT} applied")
