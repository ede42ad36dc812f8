# The emulator's analysis mode (common/emu/include/course_emu/analysis.hpp):
# sources compiled with GCC's -fsanitize=thread instrumentation (every load
# and store) and -fsanitize-coverage=trace-pc (every basic block entered) call
# the __tsan_* and __sanitizer_cov_trace_pc callbacks that the
# course_emu_analysis library defines (no sanitizer runtime is linked: the
# flags are given to the compiler only). Nothing else is
# compiled this way, so the course's other programs run at full speed.

# Sets `out` to the emulator translations of `files` (.cu), compiled with the
# analysis instrumentation; link the target with course_emu_analysis.
function(course_emu_analysed_sources out target)
  course_emu_sources(sources ${target} ${ARGN})
  set_source_files_properties(${sources} PROPERTIES
    COMPILE_OPTIONS "-fsanitize=thread;--param=tsan-instrument-func-entry-exit=0;-fsanitize-coverage=trace-pc")
  set(${out} "${sources}" PARENT_SCOPE)
endfunction()

# course_lesson_analysis(NN slug
#   SOURCES transpose.cu ...           # the lesson's files, from solutions/NN-slug/
#   KERNELS other.cu ...               # more kernels, from tests/NN-slug/ (e.g. a counter-example)
#   TESTS   file_test.cpp ...          # Catch2 tests in tests/NN-slug/ calling course_emu/analysis.hpp
#   REPORT_TESTS "catch test spec"     # optional: `./course analyze NN`'s program (lessonNN_analysed,
#   REPORT_EXPECT regex ...            #   the graded source) run on these test cases must print a
#   REPORT_REJECT regex ...)           #   report matching every EXPECT and no REJECT
#
# Emulator-only checks of a lesson's memory access pattern (bank conflicts,
# sectors per request), registered in `./course check`: the program
# lessonNN_analysis, every file instrumented, its test cases as CTest tests.
function(course_lesson_analysis NN slug)
  cmake_parse_arguments(A "" "REPORT_TESTS" "SOURCES;KERNELS;TESTS;REPORT_EXPECT;REPORT_REJECT" ${ARGN})
  if(NOT COURSE_BACKEND_RESOLVED STREQUAL "emu" OR NOT COURSE_CHECK OR COURSE_PREBUILT)
    return()
  endif()
  set(target lesson${NN}_analysis)
  set(folder "${NN}-${slug}")
  set(test_dir "${CMAKE_SOURCE_DIR}/tests/${folder}")
  list(TRANSFORM A_SOURCES PREPEND "${CMAKE_SOURCE_DIR}/solutions/${folder}/")
  list(TRANSFORM A_KERNELS PREPEND "${test_dir}/")
  list(TRANSFORM A_TESTS PREPEND "${test_dir}/")
  course_emu_analysed_sources(kernels ${target} ${A_SOURCES} ${A_KERNELS})
  add_executable(${target} ${A_TESTS} ${kernels})
  target_include_directories(${target} PRIVATE "${CMAKE_SOURCE_DIR}/lessons/${folder}" "${test_dir}")
  target_link_libraries(${target} PRIVATE course_catch_main course_test_support course_emu_analysis)
  target_compile_options(${target} PRIVATE -Wall -Wextra)
  catch_discover_tests(${target}
    TEST_PREFIX "${NN}: "
    PROPERTIES LABELS "lesson${NN};analysis" ${COURSE_TEST_PROPERTIES})

  if(DEFINED A_REPORT_TESTS)
    add_dependencies(${target} lesson${NN}_analysed)  # built with the check, not only on demand
    set(name "${NN}: ./course analyze's report")
    add_test(NAME "${name}"
      COMMAND "${CMAKE_COMMAND}" -DPROGRAM=$<TARGET_FILE:lesson${NN}_analysed> "-DTESTS=${A_REPORT_TESTS}"
              "-DEXPECT=${A_REPORT_EXPECT}" "-DREJECT=${A_REPORT_REJECT}"
              -DREPORT=${CMAKE_CURRENT_BINARY_DIR}/analysis/lesson${NN}.txt
              "-DEMULATOR=${CMAKE_CROSSCOMPILING_EMULATOR}"
              -P "${CMAKE_SOURCE_DIR}/cmake/CheckAnalysisReport.cmake")
    set_tests_properties("${name}" PROPERTIES LABELS "lesson${NN};analysis" ${COURSE_TEST_PROPERTIES})
  endif()
endfunction()
