# The emulator's analysis mode (common/emu/include/course_emu/analysis.hpp):
# sources compiled with GCC's -fsanitize=thread instrumentation call the
# __tsan_* callbacks that the course_emu_analysis library defines (no TSan
# runtime is linked: the flag is given to the compiler only). Nothing else is
# compiled this way, so the course's other programs run at full speed.

# Sets `out` to the emulator translations of `files` (.cu), compiled with the
# analysis instrumentation; link the target with course_emu_analysis.
function(course_emu_analysed_sources out target)
  course_emu_sources(sources ${target} ${ARGN})
  set_source_files_properties(${sources} PROPERTIES
    COMPILE_OPTIONS "-fsanitize=thread;--param=tsan-instrument-func-entry-exit=0")
  set(${out} "${sources}" PARENT_SCOPE)
endfunction()
