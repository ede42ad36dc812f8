#!/usr/bin/env bash
# The student's loop (label `student-loop` in `./course check`): `./course
# grade`'s exit status, the progress `status` shows, `solution` refusing
# before a lesson passed, a course folder copied with its build tree, and
# `./course watch` driven through a terminal (tmux): it grades, grades again
# when a file is saved, offers the next lesson, and Ctrl-C stops it with
# nothing of it left running.
#
#   tests/student-loop/check_student_loop.sh ROOT SCRATCH
#
# Works on copies: the lesson files of a fake student under SCRATCH, never
# the repository's starter/.
# shellcheck disable=SC2015  # "check && ok ... || fail ...": ok always succeeds
set -uo pipefail
ROOT="$1"
SCRATCH="$2"
rm -rf "$SCRATCH"
mkdir -p "$SCRATCH"
export COURSE_BUILD_DIR="$SCRATCH/build" COURSE_BACKEND=emu
STUDENT="$SCRATCH/student"  # the student's copy of starter/
cp -r "$ROOT/starter" "$STUDENT"
export COURSE_SOURCE="$STUDENT"
L01="01-grid-stride-loop"

failures=0
skips=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }
# A part not tested here, said on a line of its own (./course check shows
# the "SKIP: " lines of tests that passed).
skip() { echo "SKIP: $*"; skips=$((skips + 1)); }

# expect_status WANT DESCRIPTION COMMAND...: runs COMMAND, output in $out.
expect_status() {
  local want="$1" what="$2" rc=0
  shift 2
  out=$("$@" 2>&1) || rc=$?
  if ((rc == want)); then ok "$what: exit $rc"; else fail "$what: exit $rc, expected $want"; echo "$out" | tail -n 20; fi
}
expect_text() {  # expect_text PATTERN DESCRIPTION: in $out
  if grep -qE -- "$1" <<<"$out"; then ok "$2"; else fail "$2: no /$1/ in:"; echo "$out" | tail -n 30; fi
}

# ------------------------------------------------------------ exit status, progress, solution
expect_status 0 "status before any grade" "$ROOT/course" status
expect_text "^  01 .*not started" "status: lesson 01 not started"
expect_text "^next: lesson 01" "status: next is lesson 01"

expect_status 1 "solution 01 before it passed" "$ROOT/course" solution 01
expect_text "has not passed yet \(it was never graded\)" "solution refuses, saying why"

expect_status 1 "grade 01 of the untouched starter" "$ROOT/course" grade 01
expect_text "FAILED" "the starter's lesson 01 fails"
expect_status 0 "status after a failing grade" "$ROOT/course" status
expect_text "^  01 .*in progress +0/[0-9]+" "status: lesson 01 in progress, 0 tests passed"

expect_status 2 "grade of a lesson that does not exist" "$ROOT/course" grade 99
expect_status 2 "grade with an unknown option" "$ROOT/course" grade --no-such-option

cp "$ROOT/solutions/$L01"/*.cu "$STUDENT/$L01/"
expect_status 0 "grade 01 of the solved lesson" "$ROOT/course" grade 01
expect_status 0 "status after it passed" "$ROOT/course" status
expect_text "^  01 .*passed $(date +%Y-%m-%d)" "status: lesson 01 passed today"
expect_text "^next: lesson 02" "status: next is lesson 02"
expect_status 0 "solution 01 once it passed" "$ROOT/course" solution 01
expect_text "==== solutions/$L01/saxpy.cu ====" "solution shows the reference"
expect_status 1 "solution 02 before it passed" "$ROOT/course" solution 02
expect_status 0 "solution 02 --force" "$ROOT/course" solution 02 --force

echo "this is not C++" >>"$STUDENT/$L01/saxpy.cu"
expect_status 1 "grade 01 that does not compile" "$ROOT/course" grade 01
expect_text "COMPILE ERROR" "the report says it does not compile"
expect_status 0 "status after a compile error" "$ROOT/course" status
expect_text "^  01 .*does not compile" "status: lesson 01 does not compile"
expect_status 0 "solution 01 after a later compile error" "$ROOT/course" solution 01
expect_status 1 "solution 02, graded never" "$ROOT/course" solution 02
cp "$ROOT/solutions/$L01"/*.cu "$STUDENT/$L01/"

# The progress file: JSON (common/tools/progress.hpp). One of the earlier
# tab-separated form is read where no JSON file is there yet; an unreadable
# one stops status with the file and line, and a grade starts it afresh.
PROGRESS=("$COURSE_BUILD_DIR"/progress/*.json)
if [[ -f "${PROGRESS[0]}" ]]; then ok "the progress file is ${PROGRESS[0]##*/}"; else fail "no progress JSON file"; fi
rm -f "$COURSE_BUILD_DIR"/progress/*
printf '01\tfailing\t2\t5\t4\t10\t2026-01-02 03:04\t2025-12-31\n' >"${PROGRESS[0]%.json}.tsv"
expect_status 0 "status from an earlier tab-separated progress file" "$ROOT/course" status
expect_text "^  01 .*failing \(passed 2025-12-31\) +2/5 +4\.0/10" "status reads the earlier form's columns"
expect_status 0 "solution 01 after the earlier form's first pass" "$ROOT/course" solution 01
echo '{"format": 1, "lessons": {"01": {"state": "passed"' >"${PROGRESS[0]}"
expect_status 2 "status with a truncated progress file" "$ROOT/course" status
expect_text "${PROGRESS[0]##*/}:[0-9]+:[0-9]+: expected" "the error names the progress file, line and column"
expect_status 0 "grade 01 over a truncated progress file" "$ROOT/course" grade 01
expect_text "unreadable.*starting it afresh" "the grade says the progress starts afresh"
expect_status 0 "status after that grade" "$ROOT/course" status
expect_text "^  01 .*passed $(date +%Y-%m-%d)" "status: lesson 01 passed today, the old progress gone"

# ------------------------------------------------------------ grade-all: one name, two folders
# Folder names become student names with only A-Z a-z 0-9 . _ - kept; two
# that become one would share a build tree and a gradebook row.
mkdir -p "$SCRATCH/class/ann lee/$L01" "$SCRATCH/class/ann_lee/$L01"
expect_status 2 "grade-all of two folders that grade as one name" "$ROOT/course" grade-all "$SCRATCH/class"
expect_text "'ann lee' and 'ann_lee' both grade as 'ann_lee'" "grade-all names both folders"
rm -rf "$SCRATCH/class"

# ------------------------------------------------------------ a copied course folder
# The repository and its build folder copied elsewhere: the tree's cache
# names the old folder, and is configured again, saying so once.
COPY="$SCRATCH/moved-course"
mkdir -p "$COPY"
(cd "$ROOT" && tar --exclude=./build -cf - .) | (cd "$COPY" && tar -xf -)
cp -r "$SCRATCH/build" "$SCRATCH/moved-build"
expect_status 0 "grade 01 in a copied folder with a copied build tree" \
  env COURSE_BUILD_DIR="$SCRATCH/moved-build" "$COPY/course" grade 01
expect_text "was configured for .*; configuring it again" "the copy says its tree is configured again"
expect_status 0 "a second grade there" env COURSE_BUILD_DIR="$SCRATCH/moved-build" "$COPY/course" grade 01
if grep -q "configuring it again" <<<"$out"; then fail "the copy's tree was configured again a second time"; else ok "once only"; fi
rm -rf "$COPY" "$SCRATCH/moved-build"

# ------------------------------------------------------------ watch, in a terminal
if ! command -v tmux >/dev/null; then
  fail "tmux is not installed (sudo apt-get install -y tmux): ./course watch is not tested"
  echo "$failures failures, $skips skipped"
  exit 1
fi
cp "$ROOT/starter/$L01"/*.cu "$STUDENT/$L01/"  # lesson 01 unsolved again
rm -rf "$COURSE_BUILD_DIR/progress"            # and never graded
SOCKET="course-watch-test-$$"
T=(tmux -L "$SOCKET")
trap '"${T[@]}" kill-server 2>/dev/null' EXIT
pane() { "${T[@]}" capture-pane -p -t watch -S -100 2>/dev/null; }
# wait_for PATTERN SECONDS DESCRIPTION: until the terminal shows PATTERN;
# a failure at once if watch has exited (its pane is dead) without showing it.
wait_for() {
  local i
  for ((i = 0; i < $2 * 4; i++)); do
    if pane | grep -qE -- "$1"; then ok "$3"; return 0; fi
    if [[ "$("${T[@]}" display-message -p -t watch '#{pane_dead}' 2>/dev/null)" == 1 ]]; then
      pane | grep -qE -- "$1" && { ok "$3"; return 0; }
      fail "$3: watch exited before the terminal showed /$1/; it shows:"
      pane | tail -n 25
      return 1
    fi
    sleep 0.25
  done
  fail "$3: the terminal never showed /$1/; it shows:"
  pane | tail -n 25
  return 1
}

run_watch() {  # run_watch [ENV=VALUE ...]: ./course watch in a fresh terminal
  "${T[@]}" kill-server 2>/dev/null
  # kill-server returns before the server is gone: a new session can meet
  # the old server as it exits ("server exited unexpectedly"), so it is tried again.
  local _
  for _ in 1 2 3 4 5; do
    "${T[@]}" -f /dev/null new-session -d -s watch -x 160 -y 50 \
      env COURSE_BUILD_DIR="$COURSE_BUILD_DIR" COURSE_BACKEND=emu COURSE_SOURCE="$STUDENT" "$@" \
      "$ROOT/course" watch && break
    sleep 1
  done
  "${T[@]}" set-option -t watch remain-on-exit on >/dev/null
}

# With inotify (where inotifywait is installed), then with the mtime poll.
# Each run grades the starter's lesson 01, then the solution once it is
# saved; the first ends with Ctrl-C while lesson 02's tests run, the second
# with q. Without inotifywait the inotify run is skipped, saying so (a
# failure with COURSE_REQUIRE_INOTIFY=1, as CI sets), and the poll mode
# takes both runs, so that both ways out stay tested.
runs=("inotify ctrl-c" "poll q")
if ! command -v inotifywait >/dev/null; then
  if [[ "${COURSE_REQUIRE_INOTIFY:-0}" == 1 ]]; then
    fail "inotify-tools is not installed (inotifywait not found) and COURSE_REQUIRE_INOTIFY=1: watch's inotify mode is not tested"
  else
    skip "watch's inotify mode is not tested: inotifywait is not installed (Debian/Ubuntu: inotify-tools;" \
      "COURSE_REQUIRE_INOTIFY=1 makes this a failure); its poll mode is tested twice instead, Ctrl-C and q"
  fi
  runs=("poll ctrl-c" "poll q")
fi
for run in "${runs[@]}"; do
  read -r mode ending <<<"$run"
  echo "--- watch ($mode, ending with $ending)"
  cp "$ROOT/starter/$L01"/*.cu "$STUDENT/$L01/"  # lesson 01 unsolved
  rm -rf "$COURSE_BUILD_DIR/progress"            # and never graded
  if [[ $mode == inotify ]]; then
    run_watch
  else
    run_watch COURSE_WATCH_POLL=1
  fi
  wait_for "watching .*$L01" 180 "$mode: watch grades lesson 01 first and waits" || continue
  pane | grep -q "FAILED" && ok "$mode: the starter's failure is shown" || fail "$mode: no FAILED shown"
  pane | grep -qE "hints: [0-9]+" && ok "$mode: the hint count is shown" || fail "$mode: no hint count"
  sleep 1
  cp "$ROOT/solutions/$L01"/*.cu "$STUDENT/$L01/"  # the student saves a working version
  wait_for "Lesson 01 passed" 120 "$mode: a save grades it again, and it passes" || continue
  pane | grep -q "Next: lesson 02" && ok "$mode: the next lesson is offered" || fail "$mode: lesson 02 not offered"
  if [[ $ending == q ]]; then
    "${T[@]}" send-keys -t watch q
    sleep 2
    [[ "$("${T[@]}" display-message -p -t watch '#{pane_dead}')" == 1 ]] && ok "q quits" || fail "q did not quit"
    continue
  fi
  # Lesson 02's file hangs in its host code, so that its tests are still
  # running when Ctrl-C comes: nothing of them, nor of watch, may stay behind.
  cp "$ROOT/starter/02-atomic-argmin"/*.cu "$STUDENT/02-atomic-argmin/"
  sed -i '/^void launch_argmin(/a\  for (volatile int spin = 1; spin;) {}  // never returns' "$STUDENT/02-atomic-argmin/argmin.cu"
  "${T[@]}" send-keys -t watch Enter
  wait_for "grading lesson 02" 30 "Enter moves on to lesson 02" || continue
  running=0
  for ((i = 0; i < 600; i++)); do
    if pgrep -f "$COURSE_BUILD_DIR/grade/lesson02_graded" >/dev/null; then running=1; break; fi
    sleep 0.25
  done
  ((running)) && ok "lesson 02's tests are running" || fail "lesson 02's tests never started"
  sleep 1
  "${T[@]}" send-keys -t watch C-c
  sleep 3
  [[ "$("${T[@]}" display-message -p -t watch '#{pane_dead}')" == 1 ]] && ok "Ctrl-C stops watch" ||
    fail "watch still runs after Ctrl-C"
  left=$(pgrep -af "$COURSE_BUILD_DIR|$STUDENT" | grep -v -e "^$$ " -e " tmux -L $SOCKET " || true)
  if [[ -z "$left" ]]; then ok "no process of watch is left after Ctrl-C"; else fail "left running after Ctrl-C:"; echo "$left"; fi
done

echo "$failures failures, $skips skipped"
((failures == 0))
