# course_lesson(): one call registers one lesson.
#
#   course_lesson(NN slug
#     TITLE   "Title shown in reports"
#     SOURCES file.cu ...        # implementation files, taken from COURSE_SOURCE/NN-slug/
#     TESTS   file_test.cpp ...  # Catch2 tests in tests/NN-slug/
#     MUTANTS name.mutant ...    # known-wrong edits of the solution, in tests/NN-slug/mutants/
#     MISALIGNED_MUTANTS name.mutant ...  # mutants whose fault is a misaligned vector access: on the
#                                # emulator the only mutants built with its alignment check (it adds
#                                # half to a file's compile time); on a GPU, like MUTANTS
#     EMU_ONLY_MUTANTS name.mutant ...  # mutants only the emulator can catch (e.g. by counting
#                                # atomics): rejected on the emulator, compile-checked everywhere
#     POINTS  N                  # the lesson's points, shared out over its test cases
#     BENCH   file_bench.cu      # optional: GPU benchmark in tests/NN-slug/ (common/include/course/bench.hpp)
#     BENCH_LIBRARIES CUDA::cublas ...  # optional: what the benchmark links besides the CUDA runtime
#     GPU_ONLY_MUTANTS name.mutant ...  # mutants only a GPU can catch (e.g. device memory read
#                                # through a host pointer): rejected on the GPU, compile-checked everywhere
#     LIBRARIES course_thrust ...       # optional: what the implementations and the tests link, every backend
#     CUDA_LIBRARIES CUDA::cublas ...   # optional: the same on the cuda backend only (code using them
#                                # is guarded with #ifndef __CUDACC_EMULATOR__)
#     GPU_ONLY "reason"          # optional: the lesson needs a GPU (e.g. it calls cuBLAS). On the
#                                # emulator nothing of it is built: one test says it is skipped and why,
#                                # the grade report shows it skipped, out of the total, and nvcc (where
#                                # present) still compile-checks its starter, solution, mutants and bench
#     FORBID  "cub::" "atomicMin" ...)  # optional: text a graded submission must not use; the grader
#                                # flags each use with file and line (the tests still run)
#
# The lesson's tests are compiled once into an object library and linked into
# one program per implementation: the graded one (COURSE_SOURCE), and with
# COURSE_CHECK the starter and every mutant. A mutant is the solution with
# the edits of its .mutant file applied to the first SOURCES file (see
# common/tools/make_mutant.cpp); the other files come from the solution.
#
# For grading a class (`./course grade-all`), a base tree builds what does not
# depend on a submission (the emulator, the Catch2 main, every lesson's test
# objects, with COURSE_EXTRA_TESTS added) and exports them to
# course/prebuilt-targets.cmake; each student's tree is configured with
# COURSE_PREBUILT=<base tree>, imports them and compiles only the student's
# files.

set(COURSE_META_DIR "${CMAKE_BINARY_DIR}/course")

# The lesson manifest, ${COURSE_META_DIR}/manifest.json: what the driver's
# tools know of this build and its lessons, by name, written at configure
# time and read by course_report (common/tools/json.hpp), by the `course`
# script through `course_report manifest`, and by CourseDocs.cmake:
#
#   {"configuration": {"backend": "emu", "reason": "...", "device": "...",
#                      "source": "starter", "root": "/path/to/course", "compiler": "GNU 12.2.0"},
#    "lessons": [{"number": "01", "slug": "grid-stride-loop", "title": "Grid-stride loops",
#                 "points": 10, "bench": false, "sources": ["saxpy.cu"], "forbid": [],
#                 "skipped": ""}, ...]}
#
# bench: this build has the lesson's benchmark (a GPU build); skipped: why
# this build does not run the lesson (a GPU-only lesson on the emulator),
# empty when it does. Lessons in the order of their course_lesson() calls.
# Rewritten whole after each call, so that it always parses.

# Sets `out` to `value` as a JSON string literal, quotes included.
function(_course_json_string out value)
  string(REPLACE "\\" "\\\\" value "${value}")
  string(REPLACE "\"" "\\\"" value "${value}")
  string(REPLACE "\n" "\\n" value "${value}")
  string(REPLACE "\t" "\\t" value "${value}")
  string(REPLACE "\r" "\\r" value "${value}")
  # Any other control character (none is expected) as \u00XX.
  foreach(code RANGE 1 31)
    string(ASCII ${code} char)
    string(FIND "${value}" "${char}" at)
    if(NOT at EQUAL -1)
      math(EXPR hex "${code}" OUTPUT_FORMAT HEXADECIMAL)  # 0x1f
      string(SUBSTRING "${hex}" 2 -1 hex)
      string(LENGTH "${hex}" digits)
      if(digits EQUAL 1)
        set(hex "0${hex}")
      endif()
      string(REPLACE "${char}" "\\u00${hex}" value "${value}")
    endif()
  endforeach()
  set(${out} "\"${value}\"" PARENT_SCOPE)
endfunction()

# Sets `out` to the CMake list `items` as a JSON array of strings.
function(_course_json_strings out)
  set(json "")
  set(json_separator "")
  foreach(item IN LISTS ARGN)
    _course_json_string(quoted "${item}")
    string(APPEND json "${json_separator}${quoted}")
    set(json_separator ", ")
  endforeach()
  set(${out} "[${json}]" PARENT_SCOPE)
endfunction()

# Sets the manifest's member at the JSON path `path...` (a key, then keys
# or array indices below it) to the JSON text in the variable `value_var`,
# and writes the manifest. (The text comes by name: passed as an argument,
# a ";" in it would split it.)
function(_course_manifest_set value_var)
  get_property(manifest GLOBAL PROPERTY COURSE_MANIFEST)
  string(JSON manifest ERROR_VARIABLE error SET "${manifest}" ${ARGN} "${${value_var}}")
  if(error)
    message(FATAL_ERROR "the lesson manifest: ${error}")
  endif()
  set_property(GLOBAL PROPERTY COURSE_MANIFEST "${manifest}")
  file(WRITE "${COURSE_META_DIR}/manifest.json.new" "${manifest}\n")
  file(RENAME "${COURSE_META_DIR}/manifest.json.new" "${COURSE_META_DIR}/manifest.json")
endfunction()

# Starts the manifest: this build's configuration, no lessons yet.
function(_course_manifest_begin)
  set_property(GLOBAL PROPERTY COURSE_MANIFEST "{}")
  set(empty "{}")
  _course_manifest_set(empty configuration)
  foreach(key backend reason device source root compiler)
    set(value "${COURSE_BACKEND_RESOLVED}")
    if(key STREQUAL "reason")
      set(value "${COURSE_BACKEND_REASON}")
    elseif(key STREQUAL "device")
      set(value "${COURSE_DEVICE_NAME}")
    elseif(key STREQUAL "source")
      set(value "${COURSE_SOURCE}")
    elseif(key STREQUAL "root")
      set(value "${CMAKE_SOURCE_DIR}")
    elseif(key STREQUAL "compiler")
      set(value "${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION}")
    endif()
    _course_json_string(value "${value}")
    _course_manifest_set(value configuration ${key})
  endforeach()
  set(empty "[]")
  _course_manifest_set(empty lessons)
endfunction()

# Appends a lesson to the manifest:
#   _course_manifest_add_lesson(NN slug TITLE t POINTS p BENCH true|false SKIPPED why
#                               SOURCES file ... FORBID text ...)
function(_course_manifest_add_lesson NN slug)
  cmake_parse_arguments(M "" "TITLE;POINTS;BENCH;SKIPPED" "SOURCES;FORBID" ${ARGN})
  if(NOT NN MATCHES "^[0-9][0-9]$")
    message(FATAL_ERROR "course_lesson(${NN} ${slug}): a lesson number is two digits")
  endif()
  if(NOT M_POINTS MATCHES "^[0-9]+(\\.[0-9]+)?$")
    message(FATAL_ERROR "course_lesson(${NN} ${slug}): POINTS is a number (got ${M_POINTS})")
  endif()
  string(REGEX REPLACE "^0+([0-9])" "\\1" points "${M_POINTS}")  # JSON has no leading zeros
  _course_json_string(slug_json "${slug}")
  _course_json_string(title "${M_TITLE}")
  _course_json_string(skipped "${M_SKIPPED}")
  _course_json_strings(sources ${M_SOURCES})
  _course_json_strings(forbid ${M_FORBID})
  get_property(manifest GLOBAL PROPERTY COURSE_MANIFEST)
  string(JSON index LENGTH "${manifest}" lessons)
  set(entry "{\"number\": \"${NN}\", \"slug\": ${slug_json}, \"title\": ${title}, \"points\": ${points}, \"bench\": ${M_BENCH}, \"sources\": ${sources}, \"forbid\": ${forbid}, \"skipped\": ${skipped}}")
  _course_manifest_set(entry lessons ${index})
endfunction()

# Properties of every test that runs student code. The test main's watchdog
# stops a test case after COURSE_TEST_TIMEOUT seconds with a report; CTest's
# own timeout, a little later, is only the backstop. Two emulator workers per
# test process, since CTest already runs tests side by side.
math(EXPR _course_backstop_timeout "${COURSE_TEST_TIMEOUT} + 30")
set(COURSE_TEST_PROPERTIES
  TIMEOUT ${_course_backstop_timeout}
  ENVIRONMENT "COURSE_TEST_TIMEOUT=${COURSE_TEST_TIMEOUT}"
  ENVIRONMENT_MODIFICATION "COURSE_EMU_WORKERS=set:2")

function(course_begin_lessons)
  if(COURSE_PREBUILT AND COURSE_CHECK)
    message(FATAL_ERROR "COURSE_PREBUILT (a student's tree in grade-all) and COURSE_CHECK exclude each other")
  endif()
  if(NOT COURSE_PREBUILT)
    cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL _course_export_prebuilt)
  endif()
  file(MAKE_DIRECTORY "${COURSE_META_DIR}")
  file(REMOVE "${COURSE_META_DIR}/lessons.tsv" "${COURSE_META_DIR}/configuration.tsv")  # the manifest's forerunners
  _course_manifest_begin()
endfunction()

# After the last course_lesson(): the submission-independent targets, for the
# student trees of grade-all to import (COURSE_PREBUILT) instead of building.
function(_course_export_prebuilt)
  get_property(lesson_tests GLOBAL PROPERTY COURSE_LESSON_TEST_TARGETS)
  export(TARGETS course_harness course_catch_main course_emu course_emu_translate course_test_support
                 ${lesson_tests}
         FILE "${COURSE_META_DIR}/prebuilt-targets.cmake")
endfunction()

# The folder holding the lesson folders of COURSE_SOURCE.
function(_course_source_root out)
  if(COURSE_SOURCE STREQUAL "starter" OR COURSE_SOURCE STREQUAL "solutions")
    set(root "${CMAKE_SOURCE_DIR}/${COURSE_SOURCE}")
  else()
    get_filename_component(root "${COURSE_SOURCE}" ABSOLUTE BASE_DIR "${CMAKE_SOURCE_DIR}")
  endif()
  set(${out} "${root}" PARENT_SCOPE)
endfunction()

# Sets `out` to the emulator translations of `files` (.cu), generated under
# the build tree in a folder named after `target`.
function(course_emu_sources out target)
  set(sources "")
  set(folder "${CMAKE_CURRENT_BINARY_DIR}/emu_sources/${target}")
  file(MAKE_DIRECTORY "${folder}")
  # A DEPENDS on a target name works for targets of this tree only; the
  # translator imported by a student's tree is depended on as a file.
  set(translator course_emu_translate)
  get_target_property(imported course_emu_translate IMPORTED)
  if(imported)
    set(translator "$<TARGET_FILE:course_emu_translate>")
  endif()
  foreach(cu IN LISTS ARGN)
    get_filename_component(name "${cu}" NAME_WE)
    add_custom_command(
      OUTPUT "${folder}/${name}.cpp"
      COMMAND course_emu_translate "${cu}" "${folder}/${name}.cpp"
      DEPENDS "${cu}" "${translator}"
      COMMENT "Translating ${cu} for the emulator"
      VERBATIM)
    # Kernel code checks the alignment of every typed load and store, as a
    # GPU does (common/emu/src/alignment.cpp raises the fault).
    set_source_files_properties("${folder}/${name}.cpp" PROPERTIES COMPILE_OPTIONS "-fsanitize=alignment")
    list(APPEND sources "${folder}/${name}.cpp")
  endforeach()
  set(${out} "${sources}" PARENT_SCOPE)
endfunction()

# Sets `out` to the sources that compile `files` (.cu) for the backend: the
# files themselves for nvcc, or their emulator translations.
function(course_device_sources out target)
  if(COURSE_BACKEND_RESOLVED STREQUAL "emu")
    course_emu_sources(sources ${target} ${ARGN})
  else()
    set(sources ${ARGN})
  endif()
  set(${out} "${sources}" PARENT_SCOPE)
endfunction()

# Adds the program `${key}_${variant}`: the lesson's test objects linked with
# the given implementation files, compiled for the backend.
# The variant `analysed` (emulator only) compiles them with the analysis
# instrumentation (course_emu_analysed_sources) and is built only on demand,
# by `./course analyze`.
# The lesson's LIBRARIES (and CUDA_LIBRARIES) come in `_course_libraries`,
# and its MISALIGNED_MUTANTS' names in `_course_misaligned_mutants`, set by
# course_lesson().
function(_course_variant key variant lesson_dir)
  set(target ${key}_${variant})
  if(variant STREQUAL "analysed")
    course_emu_analysed_sources(sources ${target} ${ARGN})
    add_executable(${target} EXCLUDE_FROM_ALL ${sources})
    target_link_libraries(${target} PRIVATE course_emu_analysis)
  else()
    course_device_sources(sources ${target} ${ARGN})
    add_executable(${target} ${sources})
    # The emulator's alignment check (course_emu_sources) adds half to a
    # file's compile time; the starter and the mutants are built only to be
    # rejected, so only the mutants whose fault is a misaligned access keep it.
    string(REGEX REPLACE "^mutant_" "" mutant "${variant}")
    if(COURSE_BACKEND_RESOLVED STREQUAL "emu" AND (variant STREQUAL "starter" OR
       (NOT mutant STREQUAL variant AND NOT "${mutant}.mutant" IN_LIST _course_misaligned_mutants)))
      set_source_files_properties(${sources} PROPERTIES COMPILE_OPTIONS "")
    endif()
  endif()
  target_link_libraries(${target} PRIVATE ${key}_tests course_catch_main course_test_support ${_course_libraries})
  target_include_directories(${target} PRIVATE "${lesson_dir}")
  # Student code: warnings shown, but an unused parameter in a TODO is not noise worth a warning.
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wno-unused-parameter>)
  # The starter and the mutants are built only to be rejected: no debug
  # information (-g changes no generated code, and it was a third of their
  # compile time, most of a check's build).
  if(variant STREQUAL "starter" OR variant MATCHES "^mutant_")
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-g0>)
  endif()
endfunction()

function(course_lesson NN slug)
  cmake_parse_arguments(L "" "TITLE;POINTS;BENCH;GPU_ONLY"
    "SOURCES;TESTS;MUTANTS;MISALIGNED_MUTANTS;EMU_ONLY_MUTANTS;GPU_ONLY_MUTANTS;LIBRARIES;CUDA_LIBRARIES;BENCH_LIBRARIES;FORBID"
    ${ARGN})
  if(NOT L_TITLE OR NOT L_POINTS OR NOT L_SOURCES OR NOT L_TESTS)
    message(FATAL_ERROR "course_lesson(${NN} ${slug}): TITLE, POINTS, SOURCES and TESTS are required")
  endif()
  set(key lesson${NN})
  set(folder "${NN}-${slug}")
  set(lesson_dir "${CMAKE_SOURCE_DIR}/lessons/${folder}")
  set(test_dir "${CMAKE_SOURCE_DIR}/tests/${folder}")
  _course_source_root(source_root)
  set(_course_misaligned_mutants ${L_MISALIGNED_MUTANTS})
  set(_course_libraries ${L_LIBRARIES})
  if(COURSE_BACKEND_RESOLVED STREQUAL "cuda")
    list(APPEND _course_libraries ${L_CUDA_LIBRARIES})
  endif()
  # A GPU-only lesson on the emulator: nothing is built to run, the skip is
  # said by a test and in the manifest (for the grade report).
  set(skipped "")
  if(L_GPU_ONLY AND NOT COURSE_BACKEND_RESOLVED STREQUAL "cuda")
    set(skipped "GPU only: ${L_GPU_ONLY}")
  endif()

  # The tests, compiled once per build tree (or imported from the base tree
  # of grade-all), with an instructor's hidden tests for the lesson, if any:
  # COURSE_EXTRA_TESTS/NN-slug/*_test.cpp.
  if(skipped)
    if(NOT COURSE_PREBUILT)
      add_test(NAME "${NN}: GPU only, skipped on the emulator"
        COMMAND ${CMAKE_COMMAND} -E echo "lesson ${NN} is skipped on the ${COURSE_BACKEND_RESOLVED} backend: ${skipped}")
      set_tests_properties("${NN}: GPU only, skipped on the emulator" PROPERTIES
        LABELS "${key};skipped" SKIP_REGULAR_EXPRESSION "is skipped on the")
    endif()
  elseif(NOT COURSE_PREBUILT)
    list(TRANSFORM L_TESTS PREPEND "${test_dir}/")
    if(COURSE_EXTRA_TESTS)
      file(GLOB extra_tests "${COURSE_EXTRA_TESTS}/${folder}/*_test.cpp")
      list(APPEND L_TESTS ${extra_tests})
    endif()
    add_library(${key}_tests OBJECT ${L_TESTS})
    target_link_libraries(${key}_tests PUBLIC course_test_support)
    target_include_directories(${key}_tests PUBLIC "${lesson_dir}" "${test_dir}")
    target_compile_options(${key}_tests PRIVATE -Wall -Wextra)
    # The libraries' compile requirements only: linking them is the programs'
    # business, and an exported object library may name no target of this tree.
    foreach(library IN LISTS _course_libraries)
      target_include_directories(${key}_tests PRIVATE $<TARGET_PROPERTY:${library},INTERFACE_INCLUDE_DIRECTORIES>)
      target_compile_definitions(${key}_tests PRIVATE $<TARGET_PROPERTY:${library},INTERFACE_COMPILE_DEFINITIONS>)
      target_compile_options(${key}_tests PRIVATE $<TARGET_PROPERTY:${library},INTERFACE_COMPILE_OPTIONS>)
    endforeach()
    set_property(GLOBAL APPEND PROPERTY COURSE_LESSON_TEST_TARGETS ${key}_tests)
  endif()

  # The graded implementation: each test case becomes its own CTest test.
  # A file the graded source lacks is replaced by one that fails to compile
  # saying so: that lesson shows a compile error, and the others still build
  # (nvcc's generator would otherwise refuse the whole tree).
  set(graded_files "")
  foreach(file IN LISTS L_SOURCES)
    if(EXISTS "${source_root}/${folder}/${file}")
      list(APPEND graded_files "${source_root}/${folder}/${file}")
    else()
      set(stub "${CMAKE_CURRENT_BINARY_DIR}/missing_sources/${folder}/${file}")
      file(WRITE "${stub}" "#error \"missing ${folder}/${file}: the graded source folder has no such file\"\n")
      list(APPEND graded_files "${stub}")
    endif()
  endforeach()
  if(NOT skipped)
    _course_variant(${key} graded "${lesson_dir}" ${graded_files})
  endif()
  # For CTest (`./course check`): a GPU-only test case standing in on the
  # emulator prints course/catch.hpp's kSkippedOnEmulatorMarker: CTest counts
  # it as skipped. One label only: Catch2's discovery passes the properties
  # on flattened, so a list value would shift every property after it.
  # Grading runs the test cases itself (common/tools/run_tests.cpp), so a
  # student's tree of grade-all registers none.
  if(NOT skipped AND NOT COURSE_PREBUILT)
    catch_discover_tests(${key}_graded
      TEST_PREFIX "${NN}: "
      PROPERTIES LABELS "${key}" SKIP_REGULAR_EXPRESSION "skipped on the emulator, GPU only"
                 ${COURSE_TEST_PROPERTIES})
    # The grader's list of the lesson's test cases comes from a program of
    # the course's own, never from the graded one: the test objects alone,
    # linked with no implementation of the contract (they are only listed,
    # `lessonNN_list --course-list`, never run), so that nothing a
    # submission does, nor a starter that does not compile, changes the list.
    add_executable(${key}_list EXCLUDE_FROM_ALL $<TARGET_OBJECTS:${key}_tests>)
    target_link_libraries(${key}_list PRIVATE course_catch_main course_test_support ${_course_libraries})
    # Not position-independent: an unresolved call then links to nothing,
    # where a PIE would need a relocation the loader refuses.
    target_link_options(${key}_list PRIVATE -no-pie LINKER:--unresolved-symbols=ignore-all)
  endif()

  # The same tests and graded files with every load and store recorded, for
  # `./course analyze NN` (emulator only; not in grade-all's student trees).
  if(COURSE_BACKEND_RESOLVED STREQUAL "emu" AND NOT COURSE_PREBUILT AND NOT skipped)
    _course_variant(${key} analysed "${lesson_dir}" ${graded_files})
  endif()

  # The benchmark: GPU only, built with the graded implementation.
  set(has_bench false)
  if(L_BENCH AND COURSE_BACKEND_RESOLVED STREQUAL "cuda" AND NOT COURSE_PREBUILT)
    add_executable(${key}_bench "${test_dir}/${L_BENCH}" ${graded_files})
    target_include_directories(${key}_bench PRIVATE "${lesson_dir}" "${test_dir}")
    target_link_libraries(${key}_bench PRIVATE course_harness CUDA::cudart ${_course_libraries} ${L_BENCH_LIBRARIES})
    if(COURSE_SOURCE STREQUAL "solutions")
      target_compile_definitions(${key}_bench PRIVATE COURSE_BENCH_OF_REFERENCE=1)  # labels its rows "reference"
    endif()
    set(has_bench true)
  endif()

  _course_manifest_add_lesson(${NN} ${slug} TITLE "${L_TITLE}" POINTS "${L_POINTS}" BENCH ${has_bench}
    SKIPPED "${skipped}" SOURCES ${L_SOURCES} FORBID ${L_FORBID})

  if(NOT COURSE_CHECK)
    return()
  endif()

  # Every implementation that must be rejected, with the files it consists of.
  # A skipped lesson's mutants are only made, for nvcc to compile-check.
  set(rejected_names "")
  if(NOT COURSE_SOURCE STREQUAL "starter" AND NOT skipped)
    set(starter_files ${L_SOURCES})
    list(TRANSFORM starter_files PREPEND "${CMAKE_SOURCE_DIR}/starter/${folder}/")
    _course_variant(${key} starter "${lesson_dir}" ${starter_files})
    list(APPEND rejected_names starter)
  endif()
  set(solution_files ${L_SOURCES})
  list(TRANSFORM solution_files PREPEND "${CMAKE_SOURCE_DIR}/solutions/${folder}/")
  list(POP_FRONT solution_files edited_solution)
  get_filename_component(edited_name "${edited_solution}" NAME)
  set(mutant_cu "")
  set(mutants ${L_MUTANTS} ${L_MISALIGNED_MUTANTS})
  set(checked_only_mutants "")  # compile-checked by nvcc, not run
  if(COURSE_BACKEND_RESOLVED STREQUAL "emu")
    list(APPEND mutants ${L_EMU_ONLY_MUTANTS})
    list(APPEND checked_only_mutants ${L_GPU_ONLY_MUTANTS})
  else()
    list(APPEND mutants ${L_GPU_ONLY_MUTANTS})
  endif()
  if(skipped)
    list(APPEND checked_only_mutants ${mutants})
    set(mutants "")
  endif()
  # A second compiler's tree (COURSE_CHECK_SCOPE compiler) builds no mutant:
  # that the tests reject each one is a property of the tests, shown by the
  # first tree; the second shows that its compiler builds and passes the
  # solution and builds the starter the student starts from.
  if(COURSE_CHECK_SCOPE STREQUAL "compiler")
    set(mutants "")
    set(checked_only_mutants "")
  endif()
  foreach(mutant IN LISTS mutants checked_only_mutants)
    get_filename_component(name "${mutant}" NAME_WE)
    set(generated "${CMAKE_CURRENT_BINARY_DIR}/mutants/${key}/${name}/${edited_name}")
    add_custom_command(
      OUTPUT "${generated}"
      COMMAND course_make_mutant "${edited_solution}" "${test_dir}/mutants/${mutant}" "${generated}"
      DEPENDS "${edited_solution}" "${test_dir}/mutants/${mutant}" course_make_mutant
      COMMENT "Making mutant ${mutant} of lesson ${NN}"
      VERBATIM)
    # nvcc compiles (below) the mutants a GPU check never builds, those of
    # EMU_ONLY_MUTANTS, GPU_ONLY_MUTANTS and a GPU-only lesson; a GPU check
    # builds the others with nvcc, so here they are compiled only when
    # COURSE_CHECK_NVCC_MUTANTS asks.
    if(COURSE_CHECK_NVCC_MUTANTS OR mutant IN_LIST checked_only_mutants OR mutant IN_LIST L_EMU_ONLY_MUTANTS)
      list(APPEND mutant_cu "${generated}")
    endif()
    if(mutant IN_LIST checked_only_mutants)
      add_custom_target(${key}_mutant_${name}_source ALL DEPENDS "${generated}")
      continue()
    endif()
    _course_variant(${key} mutant_${name} "${lesson_dir}" "${generated}" ${solution_files})
    list(APPEND rejected_names mutant_${name})
  endforeach()
  foreach(name IN LISTS rejected_names)
    # The starter: every test case must fail (an untouched starter earns no
    # points); a mutant: the tests as a whole.
    set(every_case OFF)
    if(name STREQUAL "starter")
      set(every_case ON)
    endif()
    add_test(NAME "${NN}: tests reject ${name}"
      COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:${key}_${name}> -DEVERY_CASE=${every_case}
              "-DEMULATOR=${CMAKE_CROSSCOMPILING_EMULATOR}" -P "${CMAKE_SOURCE_DIR}/cmake/ExpectFailure.cmake")
    set_tests_properties("${NN}: tests reject ${name}" PROPERTIES LABELS "${key};rejects" ${COURSE_TEST_PROPERTIES})
  endforeach()

  # Without a GPU the .cu files are compiled by the emulator's host compiler;
  # nvcc must accept them too, so every one is compiled for sm_XX as a test
  # (nvcc's own host compiler, whatever this tree's is: a full check only).
  if(COURSE_BACKEND_RESOLVED STREQUAL "emu" AND COURSE_NVCC AND COURSE_CHECK_FULL)
    set(all_cu ${L_SOURCES})
    list(TRANSFORM all_cu PREPEND "${CMAKE_SOURCE_DIR}/starter/${folder}/" OUTPUT_VARIABLE starter_cu)
    list(TRANSFORM all_cu PREPEND "${CMAKE_SOURCE_DIR}/solutions/${folder}/" OUTPUT_VARIABLE solution_cu)
    set(bench_cu "")
    if(L_BENCH)
      set(bench_cu "${test_dir}/${L_BENCH}")
    endif()
    file(MAKE_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}/nvcc_objects")
    foreach(cu IN LISTS starter_cu solution_cu mutant_cu bench_cu)
      if(cu MATCHES "^${CMAKE_CURRENT_BINARY_DIR}/")
        file(RELATIVE_PATH rel "${CMAKE_CURRENT_BINARY_DIR}" "${cu}")
      else()
        file(RELATIVE_PATH rel "${CMAKE_SOURCE_DIR}" "${cu}")
      endif()
      string(MAKE_C_IDENTIFIER "${rel}" object)
      # The solution is compiled whole. The others, a starter and the mutants
      # (the solution with some lines changed) and the benchmark, are compiled
      # for their device side only (-cubin: nvcc's front end, which checks the
      # host code's types too, cicc and ptxas), not again through the host
      # compiler: a third to a half of the time, and the host compiler sees
      # the same code in the emulator's build (a benchmark is built whole by
      # ./course bench, and a GPU check builds every file whole).
      if(cu IN_LIST solution_cu)
        set(nvcc_output -c -o "${CMAKE_CURRENT_BINARY_DIR}/nvcc_objects/${object}.o")
      else()
        set(nvcc_output -cubin -o "${CMAKE_CURRENT_BINARY_DIR}/nvcc_objects/${object}.cubin")
      endif()
      add_test(NAME "${NN}: nvcc compiles ${rel}"
        COMMAND "${COURSE_NVCC}" -arch=sm_${COURSE_NVCC_ARCH} -std=c++20 ${COURSE_NVCC_FLAGS} -Werror all-warnings
                -I "${lesson_dir}" -I "${test_dir}" -I "${CMAKE_SOURCE_DIR}/common/include"
                "${cu}" ${nvcc_output})
      set_tests_properties("${NN}: nvcc compiles ${rel}" PROPERTIES LABELS "${key};nvcc" TIMEOUT 300)
    endforeach()
  endif()

  # Each starter file is its solution with the student's part taken out by
  # the lesson's edit, tests/NN-slug/NAME.starter (cmake/CheckStarter.cmake):
  # the code a starter gives cannot drift from the solution's.
  if(COURSE_CHECK_FULL)
    foreach(src IN LISTS L_SOURCES)
      get_filename_component(stem "${src}" NAME_WE)
      set(name "${NN}: starter/${folder}/${src} is its solution with ${stem}.starter applied")
      add_test(NAME "${name}"
        COMMAND ${CMAKE_COMMAND} -DTOOL=$<TARGET_FILE:course_make_mutant> -DLESSON=${NN}
                "-DSOLUTION=${CMAKE_SOURCE_DIR}/solutions/${folder}/${src}" "-DEDIT=${test_dir}/${stem}.starter"
                "-DSTARTER=${CMAKE_SOURCE_DIR}/starter/${folder}/${src}"
                "-DOUTPUT=${CMAKE_CURRENT_BINARY_DIR}/starters/${key}/${src}"
                -P "${CMAKE_SOURCE_DIR}/cmake/CheckStarter.cmake")
      set_tests_properties("${name}" PROPERTIES LABELS "${key};starter")
    endforeach()
  endif()
endfunction()
