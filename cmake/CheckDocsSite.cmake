# Checks the generated documentation site for what doxygen lets through:
#   cmake -DHTML=<build>/docs/html -P CheckDocsSite.cmake
#
# - Broken local links. Doxygen fails on a link to a Markdown page it does
#   not know, but it passes a figure it cannot find (`![..](missing.svg)`) or
#   a link to a file that is not a page (`[..](../common/tools/x.cpp)`)
#   straight into the HTML, where it is broken. Every href, src and data
#   attribute of every page that is not a URL must name a file of the site.
# - Markup shown as text. Doxygen 1.9.4 escapes a code span in a "## "
#   heading (a section of the navigation tree): "How a `.cu` file" comes
#   out as "How a <tt>.cu</tt> file". Such headings are written without
#   backticks.
file(GLOB pages "${HTML}/*.html")
if(NOT pages)
  message(FATAL_ERROR "no HTML pages in ${HTML}")
endif()
set(problems "")
foreach(page IN LISTS pages)
  file(READ "${page}" text)
  # Semicolons would split CMake lists: entities read "&lt," from here on.
  string(REPLACE ";" "," text "${text}")
  string(REGEX MATCHALL "[ \t\n](href|src|data)=\"[^\"]*\"" refs "${text}")
  foreach(ref IN LISTS refs)
    if(NOT ref MATCHES "^[ \t\n](href|src|data)=\"([^\"]*)\"$")
      continue()
    endif()
    set(target "${CMAKE_MATCH_2}")
    # URLs (http:, https:, mailto:, javascript:) and anchors within the page.
    if(target STREQUAL "" OR target MATCHES "^[A-Za-z][A-Za-z0-9+.-]*:" OR target MATCHES "^#")
      continue()
    endif()
    string(REGEX REPLACE "[?#].*$" "" file "${target}")
    if(NOT EXISTS "${HTML}/${file}")
      get_filename_component(name "${page}" NAME)
      list(APPEND problems "${name}: \"${target}\" does not exist in the site (a figure not found under IMAGE_PATH, or a link to a file that is not a page?)")
    endif()
  endforeach()
  string(REGEX MATCHALL "[^>]*&lt,/?(tt|code|em|b)&gt,[^<]*" escaped "${text}")
  foreach(line IN LISTS escaped)
    get_filename_component(name "${page}" NAME)
    string(STRIP "${line}" line)
    string(REPLACE "&lt," "<" line "${line}")
    string(REPLACE "&gt," ">" line "${line}")
    list(APPEND problems "${name}: markup shown as text: \"${line}\" (a code span in a ## heading? write the heading without backticks)")
  endforeach()
endforeach()
if(problems)
  list(REMOVE_DUPLICATES problems)
  list(JOIN problems "\n  " text)
  message(FATAL_ERROR "the documentation site (${HTML}) has broken links or markup shown as text:\n  ${text}")
endif()
