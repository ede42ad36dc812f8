# The emulator's analysis mode (common/emu/include/course_emu/analysis.hpp):
# sources compiled with the -fsanitize=thread instrumentation of GCC or Clang
# (every load and store) and -fsanitize-coverage=trace-pc (every basic block
# entered) call the __tsan_* and __sanitizer_cov_trace_pc callbacks that the
# course_emu_analysis library defines (no sanitizer runtime is linked: the
# flags are given to the compiler only). Nothing else is
# compiled this way, so the course's other programs run at full speed.

# No call at every function's entry and exit: the analysis does not use them.
# GCC takes that as a --param, Clang as options of LLVM's passes. Clang also
# needs telling what GCC does anyway: a read followed by a write of the same
# address (`x[i] += 1`) is two accesses, not the write alone, and every basic
# block is covered, not only those whose entry the others do not imply (a
# branch's body would often be left out), as the divergence count needs.
if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  set(COURSE_ANALYSIS_OPTIONS -fsanitize=thread -mllvm -tsan-instrument-func-entry-exit=0
      -mllvm -tsan-instrument-read-before-write=1
      -fsanitize-coverage=trace-pc -mllvm -sanitizer-coverage-prune-blocks=0)
  # Clang's instrumentation turns memcpy, memmove and memset (a struct's copy,
  # a float4's among them) into calls of __tsan_memcpy ... from version 17,
  # and of the C library's functions before, where the analysis would not see
  # them: then the analysed objects' calls are renamed after compiling
  # (cmake/course_analysis_compile.sh).
  if(NOT DEFINED COURSE_TSAN_CALLS_LIBC_MEMCPY)
    set(probe "${CMAKE_BINARY_DIR}/CMakeFiles/course_tsan_memcpy.cpp")
    file(WRITE "${probe}" "struct alignas(16) Four { float v[4]; };\nvoid copy(const Four* a, Four* b) { *b = *a; }\n")
    execute_process(COMMAND "${CMAKE_CXX_COMPILER}" -O2 -fsanitize=thread -S -o - "${probe}"
                    OUTPUT_VARIABLE assembly ERROR_QUIET)
    if(assembly MATCHES "__tsan_memcpy")
      set(calls_libc OFF)
    else()
      set(calls_libc ON)
    endif()
    set(COURSE_TSAN_CALLS_LIBC_MEMCPY ${calls_libc} CACHE INTERNAL "Clang's -fsanitize=thread calls memcpy, not __tsan_memcpy")
  endif()
  if(COURSE_TSAN_CALLS_LIBC_MEMCPY AND NOT CMAKE_OBJCOPY)
    message(FATAL_ERROR "objcopy (binutils) was not found: the analysis mode needs it with this Clang")
  endif()
else()
  set(COURSE_ANALYSIS_OPTIONS -fsanitize=thread --param=tsan-instrument-func-entry-exit=0 -fsanitize-coverage=trace-pc)
  # GCC 11 and later warn that ThreadSanitizer does not support
  # atomic_thread_fence (__threadfence()): its runtime's race detection
  # ignores fences. That runtime is not linked: the fence's call,
  # __tsan_atomic_thread_fence, is course_emu_analysis's, which performs the
  # fence and records it for the race check.
  include(CheckCXXCompilerFlag)
  check_cxx_compiler_flag(-Wtsan COURSE_CXX_HAS_WTSAN)
  if(COURSE_CXX_HAS_WTSAN)
    list(APPEND COURSE_ANALYSIS_OPTIONS -Wno-tsan)
  endif()
endif()

# Sets `out` to the emulator translations of `files` (.cu), compiled with the
# analysis instrumentation; link `target`, which compiles them, with
# course_emu_analysis.
function(course_emu_analysed_sources out target)
  course_emu_sources(sources ${target} ${ARGN})
  set_source_files_properties(${sources} PROPERTIES
    COMPILE_OPTIONS "${COURSE_ANALYSIS_OPTIONS}")
  if(COURSE_TSAN_CALLS_LIBC_MEMCPY)
    # `target` is defined after this call: its launcher is set at the end of
    # the folder (EVAL: a deferred call's arguments are otherwise read then).
    cmake_language(EVAL CODE "cmake_language(DEFER CALL _course_analysis_launcher [[${target}]])")
  endif()
  set(${out} "${sources}" PARENT_SCOPE)
endfunction()

# The compile step of `target` renames the instrumented objects' memcpy,
# memmove and memset (see COURSE_TSAN_CALLS_LIBC_MEMCPY above), after any
# launcher it already has (ccache, say).
function(_course_analysis_launcher target)
  get_target_property(launcher ${target} CXX_COMPILER_LAUNCHER)
  if(NOT launcher)
    set(launcher "")
  endif()
  set_property(TARGET ${target} PROPERTY CXX_COMPILER_LAUNCHER
    "${CMAKE_SOURCE_DIR}/cmake/course_analysis_compile.sh" "${CMAKE_OBJCOPY}" ${launcher})
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
