#!/usr/bin/env bash
# Makes the pictures of `./course show` that the docs show, with the tool
# itself (run from anywhere; needs chromium):
#   docs/figures/show-04.png   lesson 04, its barrier_in_branch mutant: the barrier timeline
#   docs/figures/show-07.png   lesson 07, the tile without its padding column: warp access maps
#   docs/figures/show-09.png   lesson 09, its no_grid_stride mutant: the wrong outputs
#   lessons/07-transpose-padding/show-07-unpadded.svg, show-07-padded.svg
#                              the tile's column read, without and with the padding column
#   lessons/09-histogram/show-09-spread.svg, show-09-one-bin.svg
#                              the shared bins' atomicAdd: keys spread over 1000 bins, and all in one
# A variant's code is the reference with a .mutant edit applied
# (course_make_mutant), given to ./course show as COURSE_SOURCE.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
export COURSE_BUILD_DIR="${COURSE_BUILD_DIR:-$ROOT/build}" COURSE_BACKEND=emu
WORK="$COURSE_BUILD_DIR/show-figures"
mkdir -p "$WORK"
browser=$(command -v chromium || command -v chromium-browser) || { echo "needs chromium" >&2; exit 2; }

# variant NN SLUG FILE EDIT: a copy of solutions/ with EDIT applied to NN's FILE; prints its folder.
variant() {
  local n="$1" slug="$2" file="$3" edit="$4" dir
  dir="$WORK/$(basename "$4" .mutant)"
  rm -rf "$dir"
  cp -r "$ROOT/solutions" "$dir"
  "$COURSE_BUILD_DIR/analyze/common/course_make_mutant" "$ROOT/solutions/$n-$slug/$file" "$edit" "$dir/$n-$slug/$file" >/dev/null
  echo "$dir"
}

# shot PAGE ID PNG: a 1000 x 760 screenshot of the page's top, its heading
# followed by the part from the element ID on (headless Chromium paints
# nothing when told to scroll to a #fragment: the parts before are left out).
shot() {
  local cut="${1%.html}-$2.html"
  awk -v id="id=\"$2\"" 'BEGIN { keep = 1 } /^<section id=/ && !seen { keep = 0; seen = 1 } index($0, id) { keep = 1 } keep' \
    "$1" >"$cut"
  "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1000,760 \
    --screenshot="$3" "file://$cut" >/dev/null 2>&1
  echo "$3: $(wc -c <"$3") bytes"
}

# svg_of PAGE KERNEL LINE OUT [FIGURE STORE SAMPLE]: a request's figure of KERNEL's access at LINE, with
# the page's style; by default the worst request of a shared load (FIGURE: shared, atomic or global;
# STORE: 0 or 1; SAMPLE: worst or first).
svg_of() {
  local style figure="${5:-shared}" store="${6:-0}" sample="${7:-worst}"
  style=$(sed -n '/^<style>/,/<\/style>/p' "$1" | sed 's/^<style>//; s/<\/style>.*//')
  grep -m1 "data-figure=\"$figure\" data-kernel=\"$2\" data-line=\"$3\" data-store=\"$store\" data-sample=\"$sample\"" "$1" |
    awk -v style="$style" -v want="data-figure=\"$figure\" data-kernel=\"$2\" data-line=\"$3\" data-store=\"$store\" data-sample=\"$sample\"" '{
      line = $0
      while ((at = index(line, "<svg ")) > 0) {
        line = substr(line, at)
        tag = substr(line, 1, index(line, ">"))
        if (index(tag, want) > 0) {
          svg = substr(line, 1, index(line, "</svg>") + 5)
          sub(/>/, "><style>" style "</style><rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>", svg)
          print svg
          exit
        }
        line = substr(line, 5)
      }
    }' >"$4"
  echo "$4: $(wc -c <"$4") bytes"
}

COURSE_SOURCE=solutions "$ROOT/course" analyze 07 -- "transpose_tiled handles a tall*" >/dev/null  # configures analyze/
cmake --build "$COURSE_BUILD_DIR/analyze" --target course_make_mutant >/dev/null

tile_test="transpose_tiled handles a tall and a wide matrix spanning many tiles both ways"
unpadded=$(variant 07 transpose-padding transpose.cu "$ROOT/docs/figures/unpadded_tile.mutant")
COURSE_SOURCE="$unpadded" "$ROOT/course" show 07 --test "$tile_test" --output "$WORK/07-unpadded.html"
COURSE_SOURCE=solutions "$ROOT/course" show 07 --test "$tile_test" --output "$WORK/07-padded.html"
# The tile's column read (a variant's file starts with the edit's description: its own line numbers).
read_line() { grep -n 'tile\[threadIdx.x\]\[y\]' "$1/07-transpose-padding/transpose.cu" | cut -d: -f1; }
svg_of "$WORK/07-unpadded.html" transpose_tile_kernel "$(read_line "$unpadded")" "$ROOT/lessons/07-transpose-padding/show-07-unpadded.svg"
svg_of "$WORK/07-padded.html" transpose_tile_kernel "$(read_line "$ROOT/solutions")" "$ROOT/lessons/07-transpose-padding/show-07-padded.svg"
# From the column read's figure on (the figures come in source order).
figure=$(grep "data-figure=\"shared\" data-kernel=\"transpose_tile_kernel\" data-line=\"$(read_line "$unpadded")\" data-store=\"0\"" \
  "$WORK/07-unpadded.html" | grep -o 'id="k0-a[0-9]*"' | head -n1 | cut -d'"' -f2)
shot "$WORK/07-unpadded.html" "$figure" "$ROOT/docs/figures/show-07.png"

branch=$(variant 04 shared-reduction reduce.cu "$ROOT/tests/04-shared-reduction/mutants/barrier_in_branch.mutant")
# One test case: after the first fault every later one in the process fails
# on the sticky error, and Catch2 v2 crashes on one thrown while a GENERATE is made.
COURSE_SOURCE="$branch" "$ROOT/course" show 04 --test "every power-of-two block size*" --output "$WORK/04-barrier-in-branch.html"
shot "$WORK/04-barrier-in-branch.html" k0-timeline "$ROOT/docs/figures/show-04.png"

stride=$(variant 09 histogram histogram.cu "$ROOT/tests/09-histogram/mutants/no_grid_stride.mutant")
COURSE_SOURCE="$stride" "$ROOT/course" show 09 --test "shared-memory histograms*" --output "$WORK/09-no-grid-stride.html"
shot "$WORK/09-no-grid-stride.html" outputs "$ROOT/docs/figures/show-09.png"

# The shared bins' atomicAdd on the reference: the first request of the run (1000 bins, keys
# spread) and its worst (a single bin: every lane updates one word).
bins_test="the number of bins is not the block size*"
COURSE_SOURCE=solutions "$ROOT/course" show 09 --test "$bins_test" --output "$WORK/09-bins.html"
count_line=$(grep -n 'atomicAdd(&block_bins\[bin\], 1u)' "$ROOT/solutions/09-histogram/histogram.cu" | head -n1 | cut -d: -f1)
svg_of "$WORK/09-bins.html" histogram_shared_kernel "$count_line" "$ROOT/lessons/09-histogram/show-09-spread.svg" atomic 1 first
svg_of "$WORK/09-bins.html" histogram_shared_kernel "$count_line" "$ROOT/lessons/09-histogram/show-09-one-bin.svg" atomic 1 worst
