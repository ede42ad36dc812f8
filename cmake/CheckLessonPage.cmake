# Checks that a lesson page follows the course's outline (docs/instructor-guide.md,
# "Adding a lesson"):
#   cmake -DPAGE=lessons/NN-slug/README.md [-DBENCHMARKS=docs/benchmarks.md] -P CheckLessonPage.cmake
#
# - a title "# Lesson NN — Title {#lessonNN}" (the label names the page lessonNN.html);
# - the sections (## headings) What you will learn, Background, Your task,
#   How to check, Hints, Pitfalls, Going further, Measured results, in that
#   order; other sections only between Going further and Measured results
#   (lesson 01 has Key concepts and References there);
# - at least one figure (![...](...)) in the Background;
# - hints as "### Hint K: ..." under Hints (`./course hint` shows them);
# - with BENCHMARKS: a line in the benchmarks page linking to the lesson.
# Headings inside fenced code blocks are not headings.
set(required "What you will learn" "Background" "Your task" "How to check" "Hints" "Pitfalls"
             "Going further")
set(last "Measured results")

get_filename_component(folder "${PAGE}" DIRECTORY)
get_filename_component(folder "${folder}" NAME)
string(SUBSTRING "${folder}" 0 2 NN)

file(STRINGS "${PAGE}" lines ENCODING UTF-8 REGEX "^(#+ |```|~~~)|!\\[")
set(problems "")
set(in_fence FALSE)
set(title "")
set(sections "")
set(section "")
set(figures_in_background 0)
set(hints 0)
foreach(line IN LISTS lines)
  if(line MATCHES "^(```|~~~)")
    if(in_fence)
      set(in_fence FALSE)
    else()
      set(in_fence TRUE)
    endif()
    continue()
  endif()
  if(in_fence)
    continue()
  endif()
  if(line MATCHES "^# (.*)$")
    if(title STREQUAL "")
      set(title "${CMAKE_MATCH_1}")
    endif()
  elseif(line MATCHES "^## +(.*[^ ]) *$")
    set(section "${CMAKE_MATCH_1}")
    list(APPEND sections "${section}")
  elseif(line MATCHES "^### Hint [0-9]+: " AND section STREQUAL "Hints")
    math(EXPR hints "${hints} + 1")
  endif()
  if(line MATCHES "!\\[" AND section STREQUAL "Background")
    math(EXPR figures_in_background "${figures_in_background} + 1")
  endif()
endforeach()

if(NOT title MATCHES "^Lesson ${NN} .*\\{#lesson${NN}\\}$")
  list(APPEND problems "the title must read \"# Lesson ${NN} — <title> {#lesson${NN}}\" (found \"# ${title}\")")
endif()

# The sections: the required ones first, in order, then any extras, then the last.
list(JOIN required ", " outline)
string(APPEND outline ", (other sections), ${last}")
list(LENGTH sections count)
set(position 0)
foreach(name IN LISTS required)
  if(position GREATER_EQUAL count)
    list(APPEND problems "section \"## ${name}\" is missing (sections, in order: ${outline})")
    break()
  endif()
  list(GET sections ${position} found)
  if(NOT found STREQUAL name)
    list(APPEND problems "expected \"## ${name}\" where \"## ${found}\" is (sections, in order: ${outline})")
    break()
  endif()
  math(EXPR position "${position} + 1")
endforeach()
if(count EQUAL 0)
  list(APPEND problems "no sections")
else()
  math(EXPR final "${count} - 1")
  list(GET sections ${final} found)
  if(NOT found STREQUAL last)
    list(APPEND problems "the last section must be \"## ${last}\" (found \"## ${found}\")")
  endif()
endif()
if(figures_in_background EQUAL 0)
  list(APPEND problems "the Background section has no figure (![what it shows](figure.svg))")
endif()
if(hints EQUAL 0)
  list(APPEND problems "the Hints section has no \"### Hint 1: ...\" (./course hint shows them one at a time)")
endif()

if(BENCHMARKS)
  file(READ "${BENCHMARKS}" benchmarks)
  string(FIND "${benchmarks}" "lessons/${folder}/README.md" at)
  if(at EQUAL -1)
    list(APPEND problems "${BENCHMARKS} has no line linking to lessons/${folder}/README.md under \"## Lesson results\"")
  endif()
endif()

if(problems)
  list(JOIN problems "\n  " text)
  message(FATAL_ERROR "${PAGE}:\n  ${text}")
endif()
message(STATUS "${PAGE}: title, ${count} sections in order, ${figures_in_background} figure(s) in the Background, ${hints} hints")
