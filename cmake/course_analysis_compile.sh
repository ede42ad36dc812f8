#!/bin/sh
# usage: course_analysis_compile.sh OBJCOPY COMPILER ARGS...
#
# The compiler launcher of the analysed targets (cmake/CourseAnalysis.cmake)
# with a Clang whose -fsanitize=thread instrumentation calls the C library's
# memcpy, memmove and memset (Clang before 17; a struct's copy is one): it
# compiles as asked and, where the object is instrumented, renames those
# calls to __tsan_memcpy, __tsan_memmove and __tsan_memset, which later
# Clang calls and course_emu_analysis defines, so the analysis sees them.
objcopy="$1"
shift
"$@" || exit
instrumented=no
object=""
previous=""
for arg in "$@"; do
  case "$arg" in
    -fsanitize=thread) instrumented=yes ;;
  esac
  [ "$previous" = "-o" ] && object="$arg"
  previous="$arg"
done
[ "$instrumented" = yes ] && [ -n "$object" ] || exit 0
exec "$objcopy" --redefine-sym memcpy=__tsan_memcpy --redefine-sym memmove=__tsan_memmove \
  --redefine-sym memset=__tsan_memset "$object"
