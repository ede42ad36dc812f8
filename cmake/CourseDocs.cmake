# The documentation site: the README as the main page, the lessons' pages in
# lesson order, the guides, and the API of the contracts and the harness,
# built by Doxygen into <build>/docs/html (`./course docs`, or the `docs`
# target). Included once from the top-level CMakeLists.txt; the site is set
# up when that file has been read to the end, so that it knows every lesson
# registered with course_lesson() (from the lesson manifest, course/manifest.json)
# without a list of its own.
#
# Warnings fail the build (docs/Doxyfile.in: WARN_AS_ERROR). With
# COURSE_CHECK (of the full scope: COURSE_CHECK_FULL), the build of the site
# is a CTest test (label `docs`), so `./course check` counts it; it is
# registered only where doxygen is found. Also then, every lesson page is
# checked against the lesson outline (cmake/CheckLessonPage.cmake), and the
# lesson titles of README.md's table and of the pages against the manifest's,
# doxygen or not. A cross build checks
# neither: the pages do not depend on the CPU.

find_package(Doxygen QUIET OPTIONAL_COMPONENTS dot)

function(_course_docs_setup)
  set(root "${CMAKE_SOURCE_DIR}")
  set(out "${CMAKE_BINARY_DIR}/docs")

  # The lessons registered, in lesson order (the manifest's, by number).
  file(READ "${COURSE_META_DIR}/manifest.json" manifest)
  string(JSON count LENGTH "${manifest}" lessons)
  set(lesson_folders "")
  if(count GREATER 0)
    math(EXPR last "${count} - 1")
    foreach(index RANGE ${last})
      string(JSON NN GET "${manifest}" lessons ${index} number)
      string(JSON slug GET "${manifest}" lessons ${index} slug)
      list(APPEND lesson_folders "${root}/lessons/${NN}-${slug}")
    endforeach()
  endif()
  list(SORT lesson_folders)

  if(COURSE_CHECK_FULL)
    # A lesson's title is course_lesson()'s TITLE: README.md's lesson table and
    # the lesson's page say the same (common/tools/course_report.cpp, check-pages).
    set(test "docs: README.md's lesson table, the lesson pages' titles and the lesson map agree with CMakeLists.txt")
    add_test(NAME "${test}" COMMAND course_report check-pages "${CMAKE_BINARY_DIR}")
    set_tests_properties("${test}" PROPERTIES LABELS docs)
    foreach(folder IN LISTS lesson_folders)
      get_filename_component(name "${folder}" NAME)
      set(test "docs: lessons/${name}/README.md follows the lesson outline")
      add_test(NAME "${test}"
        COMMAND "${CMAKE_COMMAND}" -DPAGE=${folder}/README.md -DBENCHMARKS=${root}/docs/benchmarks.md
                -P "${root}/cmake/CheckLessonPage.cmake")
      set_tests_properties("${test}" PROPERTIES LABELS docs)
    endforeach()
  endif()

  if(NOT DOXYGEN_FOUND)
    message(STATUS "Course docs: doxygen not found, no `docs` target (sudo apt-get install -y doxygen graphviz)")
    return()
  endif()

  # Inputs, in the order of the site's navigation: main page, lessons, guides,
  # then the contracts and the harness.
  set(pages "${root}/README.md")
  set(headers "")
  set(figures "")
  foreach(folder IN LISTS lesson_folders)
    list(APPEND pages "${folder}/README.md")
    file(GLOB contract CONFIGURE_DEPENDS "${folder}/*.hpp")
    list(SORT contract)
    list(APPEND headers ${contract})
    file(GLOB lesson_figures CONFIGURE_DEPENDS "${folder}/*.svg" "${folder}/*.png")
    list(APPEND figures ${lesson_figures})
  endforeach()
  list(APPEND pages "${root}/docs/instructor-guide.md" "${root}/docs/emulator.md" "${root}/docs/benchmarks.md"
                    "${root}/docs/sources.md")
  file(GLOB harness CONFIGURE_DEPENDS "${root}/common/include/course/*.hpp")
  list(SORT harness)
  list(APPEND headers ${harness})
  file(GLOB doc_figures CONFIGURE_DEPENDS "${root}/docs/figures/*.svg" "${root}/docs/figures/*.png")
  list(APPEND figures ${doc_figures})

  # Doxyfile lists: each path quoted, separated by spaces.
  macro(_course_doxy_list out_var)
    set(${out_var} "")
    foreach(item IN ITEMS ${ARGN})
      string(APPEND ${out_var} " \\\n    \"${item}\"")
    endforeach()
  endmacro()
  _course_doxy_list(COURSE_DOCS_INPUT ${pages} ${headers})
  _course_doxy_list(COURSE_DOCS_IMAGE_PATH ${lesson_folders} "${root}/docs/figures")
  _course_doxy_list(COURSE_DOCS_INCLUDE_ROOTS "${root}/common/include" ${lesson_folders})
  set(COURSE_DOCS_OUTPUT "${out}")
  if(DOXYGEN_DOT_EXECUTABLE)
    set(COURSE_DOCS_HAVE_DOT YES)
    get_filename_component(COURSE_DOCS_DOT_PATH "${DOXYGEN_DOT_EXECUTABLE}" DIRECTORY)
  else()
    set(COURSE_DOCS_HAVE_DOT NO)
    set(COURSE_DOCS_DOT_PATH "")
  endif()
  configure_file("${root}/docs/Doxyfile.in" "${out}/Doxyfile" @ONLY)

  # Doxygen, then a check of the generated pages for what doxygen lets
  # through: broken local links and figures, markup shown as text.
  # A stamp written only when both succeed: a failed build (a warning)
  # is tried again next time, a clean one is not redone until an input changes.
  # The old site is removed first, so a page whose source is gone goes too.
  # Doxygen runs in the output folder: relative links in the pages are then
  # resolved against the page that holds them, never against the current folder.
  add_custom_command(
    OUTPUT "${out}/html.stamp"
    COMMAND "${CMAKE_COMMAND}" -E rm -rf "${out}/html"
    COMMAND Doxygen::doxygen "${out}/Doxyfile"
    COMMAND "${CMAKE_COMMAND}" -DHTML=${out}/html -P "${root}/cmake/CheckDocsSite.cmake"
    COMMAND "${CMAKE_COMMAND}" -E touch "${out}/html.stamp"
    DEPENDS "${out}/Doxyfile" ${pages} ${headers} ${figures} "${root}/cmake/CheckDocsSite.cmake"
    WORKING_DIRECTORY "${out}"
    COMMENT "Building the documentation site with Doxygen ${DOXYGEN_VERSION} (warnings are errors)"
    VERBATIM)
  add_custom_target(docs DEPENDS "${out}/html.stamp")
  message(STATUS "Course docs: `docs` target builds ${out}/html with Doxygen ${DOXYGEN_VERSION} (Graphviz dot: ${COURSE_DOCS_HAVE_DOT})")

  if(COURSE_CHECK_FULL)
    # Builds the site only when an input changed: a no-op in a check where nothing did.
    add_test(NAME "docs: the documentation site builds without warnings"
      COMMAND "${CMAKE_COMMAND}" --build "${CMAKE_BINARY_DIR}" --target docs)
    set_tests_properties("docs: the documentation site builds without warnings"
      PROPERTIES LABELS docs TIMEOUT 600)
  endif()
endfunction()

# Runs _course_docs_setup() at the end of the top-level CMakeLists.txt, after
# every course_lesson() call.
# A student's tree in grade-all (COURSE_PREBUILT) has no site.
if(NOT COURSE_PREBUILT)
  cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL _course_docs_setup)
endif()
