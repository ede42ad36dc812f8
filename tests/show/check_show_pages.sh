#!/usr/bin/env bash
# ./course show's pages rendered by a real browser (part of ./course check):
#
#   check_show_pages.sh SCRATCH NN=PROGRAM[=CATCH-SPEC] ...
#
# For each lesson NN, its instrumented test program (lessonNN_analysed, the
# reference's code in the check tree) runs once with COURSE_EMU_SHOW, as
# `./course show NN` runs it (the test cases CATCH-SPEC picks, default all:
# the check keeps to a few seconds a lesson); the page must be under 2 MB, and headless
# Chromium must render it without a JavaScript error ("Uncaught" in its
# console log), run its script to the end (the marker the script writes,
# seen in --dump-dom) and paint more than one colour (the screenshot's PNG,
# compressed, is not nearly as small as a blank page's). Without chromium
# the test says SKIP and passes, unless COURSE_REQUIRE_CHROMIUM=1 (CI).
set -uo pipefail

scratch="$1"
shift
mkdir -p "$scratch"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

browser=""
for candidate in chromium chromium-browser; do
  command -v "$candidate" >/dev/null && { browser="$candidate"; break; }
done
if [[ -z "$browser" ]]; then
  if [[ "${COURSE_REQUIRE_CHROMIUM:-0}" == 1 ]]; then
    echo "FAIL: chromium is not installed (sudo apt-get install -y chromium), and COURSE_REQUIRE_CHROMIUM=1"
    exit 1
  fi
  echo "SKIP: chromium is not installed (sudo apt-get install -y chromium): ./course show's pages are made but not rendered"
fi

# Chromium's own settings and caches go to the scratch folder, not $HOME.
export HOME="$scratch/home" XDG_CONFIG_HOME="$scratch/home/.config" XDG_CACHE_HOME="$scratch/home/.cache"
mkdir -p "$HOME"
width=1200 height=1600

for entry in "$@"; do
  n="${entry%%=*}" program="${entry#*=}" spec=()
  if [[ "$program" == *=* ]]; then
    spec=("${program#*=}")
    program="${program%%=*}"
  fi
  page="$scratch/lesson$n.html" png="$scratch/lesson$n.png" log="$scratch/lesson$n"
  rm -f "$page" "$png"
  started=$SECONDS
  COURSE_EMU_SHOW="$page" COURSE_EMU_SHOW_TITLE="Lesson $n: what the kernels did" COURSE_EMU_SCHEDULE=forward \
    COURSE_EMU_TIMEOUT="${COURSE_EMU_TIMEOUT:-120}" \
    COURSE_EMU_ANALYZE_REPORT="$log.analysis.txt" "$program" "${spec[@]}" >"$log.tests.log" 2>&1
  rc=$?
  ((rc == 0)) || fail "lesson $n: the reference's tests failed under the analysis (exit $rc; $log.tests.log)"
  if [[ ! -s "$page" ]]; then
    fail "lesson $n: no page written ($log.tests.log)"
    continue
  fi
  bytes=$(wc -c <"$page")
  echo "lesson $n: page $page, $bytes bytes, tests in $((SECONDS - started)) s"
  ((bytes < 2000000)) || fail "lesson $n: the page is $bytes bytes, over 2 MB"
  grep -q '<svg' "$page" || fail "lesson $n: the page has no figure"
  [[ -n "$browser" ]] || continue

  started=$SECONDS
  timeout 60 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --enable-logging=stderr --v=0 \
    --screenshot="$png" --window-size="$width,$height" "file://$page" >"$log.render.log" 2>&1
  if grep -q 'Uncaught' "$log.render.log"; then
    fail "lesson $n: JavaScript error: $(grep -m1 'Uncaught' "$log.render.log")"
  fi
  timeout 60 "$browser" --headless --no-sandbox --disable-gpu --dump-dom "file://$page" >"$log.dom.html" 2>/dev/null
  grep -q 'page script ran: [1-9][0-9]* figures' "$log.dom.html" ||
    fail "lesson $n: the page's script did not run to its end (no marker in --dump-dom: $log.dom.html)"
  if [[ ! -s "$png" ]]; then
    fail "lesson $n: chromium wrote no screenshot ($log.render.log)"
    continue
  fi
  # Nearly a single colour compresses to almost nothing: a blank 1200 x 1600
  # page is about 9 kB (0.005 bytes a pixel), a page of text alone 0.02, of figures 0.08 to 0.12.
  png_bytes=$(wc -c <"$png")
  pixels=$(od -An -tu1 -j16 -N8 "$png" | awk '{ print ($1 * 16777216 + $2 * 65536 + $3 * 256 + $4) * ($5 * 16777216 + $6 * 65536 + $7 * 256 + $8) }')
  if ((pixels == 0 || png_bytes * 70 < pixels)); then
    fail "lesson $n: the render looks blank ($png: $png_bytes bytes for $pixels pixels)"
  fi
  echo "lesson $n: rendered by $browser in $((SECONDS - started)) s: $png ($png_bytes bytes)"
done

((failures == 0)) || { echo "$failures failure(s)"; exit 1; }
echo "all pages made${browser:+ and rendered}"
