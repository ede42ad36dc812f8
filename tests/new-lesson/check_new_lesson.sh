#!/usr/bin/env bash
# `./course new` (label `driver` in `./course check`): in a scratch copy of
# the files it reads and writes, it writes a lesson whose page follows the
# lesson outline, whose starter is its solution with its .starter edit
# applied, registered after the last lesson in CMakeLists.txt, README.md and
# docs/benchmarks.md; it refuses a lesson that exists and a bad slug. (That
# the example lesson builds and passes its checks was verified by building it
# in a full tree; it needs the whole course's build.)
# shellcheck disable=SC2015  # "check && ok ... || fail ...": ok always succeeds
set -uo pipefail
ROOT="$1"
SCRATCH="$2"
failures=0
ok() { echo "ok: $1"; }
fail() { echo "FAIL: $1"; failures=$((failures + 1)); }

rm -rf "$SCRATCH"
mkdir -p "$SCRATCH/common/tools" "$SCRATCH/docs" "$SCRATCH/lessons" "$SCRATCH/solutions" "$SCRATCH/starter" "$SCRATCH/tests"
cp -r "$ROOT/course" "$ROOT/templates" "$ROOT/cmake" "$ROOT/CMakeLists.txt" "$ROOT/README.md" "$SCRATCH/"
cp "$ROOT/common/tools/make_mutant.cpp" "$ROOT/common/tools/sandbox.sh" "$SCRATCH/common/tools/"
cp "$ROOT/docs/benchmarks.md" "$SCRATCH/docs/"
export COURSE_BUILD_DIR="$SCRATCH/build"
cd "$SCRATCH" || exit 2

if ./course new 99 check-new "Checking new lessons" >new.log 2>&1; then
  ok "./course new 99 check-new ran"
else
  fail "./course new failed: $(tail -n3 new.log)"
fi
folder=99-check-new
page="lessons/$folder/README.md"
if cmake -DPAGE="$page" -DBENCHMARKS=docs/benchmarks.md -P cmake/CheckLessonPage.cmake >page.log 2>&1; then
  ok "its page follows the lesson outline and docs/benchmarks.md links to it"
else
  fail "its page: $(cat page.log)"
fi
grep -q '^# Lesson 99 — Checking new lessons {#lesson99}$' "$page" && ok "the page's title" || fail "the page's title: $(head -n1 "$page")"
for f in lessons/$folder/check_new.hpp lessons/$folder/check-new.svg solutions/$folder/check_new.cu \
         tests/$folder/check_new_test.cpp tests/$folder/cpu_reference.hpp tests/$folder/mutants/no_grid_stride.mutant; do
  [[ -s "$f" ]] && ! grep -q '@[A-Z][A-Z]*@' "$f" && ok "$f written, every placeholder filled" || fail "$f missing or with a placeholder left"
done
if "$COURSE_BUILD_DIR/tools/course_make_mutant" --starter "solutions/$folder/check_new.cu" "tests/$folder/check_new.starter" made.cu &&
   cmp -s made.cu "starter/$folder/check_new.cu"; then
  ok "the starter is the solution with its .starter edit applied"
else
  fail "the starter is not the solution with its edit applied"
fi
grep -q "TODO" "starter/$folder/check_new.cu" && ! cmp -s "starter/$folder/check_new.cu" "solutions/$folder/check_new.cu" &&
  ok "the starter has a TODO in place of the solution's loop" || fail "the starter has no TODO"
# Registered after the last lesson: lesson 99's call is the last course_lesson() call, its rows the last rows.
[[ "$(grep -o '^course_lesson([0-9]*' CMakeLists.txt | tail -n1)" == "course_lesson(99" ]] &&
  grep -q '^  TITLE "Checking new lessons"$' CMakeLists.txt && ok "CMakeLists.txt: its course_lesson() call, last" ||
  fail "CMakeLists.txt: no course_lesson(99 ...) call after the others"
[[ "$(grep -oE '^\| [0-9]{2} \|' README.md | tail -n1)" == "| 99 |" ]] && ok "README.md: its row, last" ||
  fail "README.md: no row for lesson 99 at the end of the table"
if ./course new 99 check-new >again.log 2>&1; then fail "a second ./course new 99 did not refuse"; else ok "a lesson that exists is refused"; fi
if ./course new 98 Bad_Slug >bad.log 2>&1; then fail "a bad slug was accepted"; else ok "a bad slug is refused"; fi

echo "$failures failure(s)"
((failures == 0))
