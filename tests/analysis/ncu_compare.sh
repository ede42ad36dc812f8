#!/usr/bin/env bash
# Runs the analysis comparison's kernels under Nsight Compute and
# compute-sanitizer on a GPU machine (nvcc, ncu and compute-sanitizer on the
# PATH or in /usr/local/cuda/bin), for the emulator's analysis mode to be
# checked against (docs/emulator.md, "Checked against Nsight Compute"):
#
#   tests/analysis/ncu_compare.sh     OUT=DIR for the results (default ./ncu-out); EMU_CSV=FILE, the
#                                     emulator's CSV (see below), adds its values beside ncu's
#
# writes into $OUT:
#   ncu.csv          the six memory metrics and the two branch metrics of each kernel of compare_main.cpp, one
#                    launch each (ncu's ID = the driver's ID)
#   ncu.log          ncu's and the driver's own output
#   racecheck.txt    compute-sanitizer --tool racecheck on race_main.cpp's planted races
#   *.build.log      the compilers' output
# The emulator's side: build the target course_analysis_compare (and
# course_analysis_races) in an emulator tree and run it, e.g.
#   build/check/tests/analysis/course_analysis_compare emulator.csv
# Each step goes on when the one before it failed; the exit status is the
# number of failed steps.
set -u

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
OUT="${OUT:-./ncu-out}"
ARCH="${ARCH:-90}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
export PATH="$PATH:/usr/local/cuda/bin"

failed=0
step() { echo; echo "== $*"; }
run() {  # run CMD...: prints it, runs it, counts a failure
  echo "+ $*"
  "$@" || { echo "!! failed ($?): $*"; failed=$((failed + 1)); return 1; }
}
logged() {  # logged LOG CMD...: the same, its output into LOG (shown when it fails)
  local log="$1"; shift
  echo "+ $* >$log"
  "$@" >"$log" 2>&1 || { echo "!! failed ($?): $*"; tail -n 30 "$log"; failed=$((failed + 1)); return 1; }
}

NVCC=(nvcc -arch="sm_$ARCH" -std=c++20 -O3 -lineinfo
      -I "$ROOT/common/include" -I "$ROOT/lessons/01-grid-stride-loop" -I "$ROOT/lessons/04-shared-reduction"
      -I "$ROOT/lessons/07-transpose-padding" -I "$ROOT/tests/07-transpose-padding"
      -I "$ROOT/common/emu/tests/analysis" -I "$ROOT/tests/analysis")

step "tools"
for tool in nvcc ncu compute-sanitizer g++; do
  printf '  %-18s %s\n' "$tool" "$(command -v "$tool" || echo 'not found')"
done
nvidia-smi -L 2>/dev/null | head -n 1

step "compiling the comparison driver (compare_main.cpp) with nvcc for sm_$ARCH"
logged "$OUT/compare.build.log" "${NVCC[@]}" -o "$OUT/analysis_compare" "$ROOT/tests/analysis/compare_main.cpp" \
  "$ROOT/tests/analysis/compare_kernels.cu" "$ROOT/solutions/07-transpose-padding/transpose.cu" \
  "$ROOT/tests/07-transpose-padding/transpose_unpadded.cu" "$ROOT/solutions/01-grid-stride-loop/saxpy.cu" \
  "$ROOT/solutions/04-shared-reduction/reduce.cu"

step "making lesson 04's missing_tree_barrier mutant and compiling the race driver (race_main.cpp)"
if run g++ -std=c++20 -O1 -o "$OUT/make_mutant" "$ROOT/common/tools/make_mutant.cpp" &&
   run "$OUT/make_mutant" "$ROOT/solutions/04-shared-reduction/reduce.cu" \
     "$ROOT/tests/04-shared-reduction/mutants/missing_tree_barrier.mutant" "$OUT/reduce_missing_tree_barrier.cu"; then
  logged "$OUT/races.build.log" "${NVCC[@]}" -o "$OUT/analysis_races" "$ROOT/tests/analysis/race_main.cpp" \
    "$OUT/reduce_missing_tree_barrier.cu" "$ROOT/common/emu/tests/analysis/analysis_kernels.cu"
fi

step "the driver alone (each kernel's result checked)"
[[ -x "$OUT/analysis_compare" ]] && run "$OUT/analysis_compare"

step "Nsight Compute: eight metrics per launch into $OUT/ncu.csv"
METRICS=l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
METRICS+=,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum
METRICS+=,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum
# Divergence: SASS branch targets taken by part of a warp, of all branch targets
# (the emulator gives the first only, counted on its own basic blocks).
METRICS+=,smsp__sass_branch_targets_threads_divergent.sum,smsp__sass_branch_targets.sum
if [[ -x "$OUT/analysis_compare" ]]; then
  # --csv output goes to stdout, mixed with the driver's lines: those are kept apart in ncu.log.
  echo "+ ncu --metrics $METRICS --csv --print-units base --print-kernel-base function $OUT/analysis_compare"
  if timeout 150 ncu --metrics "$METRICS" --csv --print-units base --print-kernel-base function \
       "$OUT/analysis_compare" >"$OUT/ncu.raw" 2>"$OUT/ncu.log"; then
    grep '^"' "$OUT/ncu.raw" >"$OUT/ncu.csv"
    grep -v '^"' "$OUT/ncu.raw" >>"$OUT/ncu.log"
    echo "  $(($(wc -l <"$OUT/ncu.csv") - 1)) metric rows; ID k is the driver's launch k (its output, in ncu.log, names them)"
    # Side by side: ID, kernel, metric, ncu's value and, with EMU_CSV (the
    # emulator's CSV of course_analysis_compare), the emulator's.
    awk -v emu="${EMU_CSV:-}" '
      function fields(line, out,   n) {  # a CSV line of quoted fields
        sub(/^"/, "", line); sub(/"\r?$/, "", line); return split(line, out, /","/)
      }
      BEGIN {
        if (emu != "") {
          while ((getline line < emu) > 0) { fields(line, f); value[f[1] SUBSEP f[4]] = f[5] }
        }
      }
      NR == 1 { n = fields($0, h); for (i = 1; i <= n; i++) col[h[i]] = i
                printf "  %-3s %-26s %-58s %14s %14s\n", "ID", "kernel", "metric", "ncu", (emu != "" ? "emulator" : ""); next }
      { fields($0, f); v = f[col["Metric Value"]]; gsub(/,/, "", v)
        key = f[col["ID"]] SUBSEP f[col["Metric Name"]]
        printf "  %-3s %-26s %-58s %14s %14s\n", f[col["ID"]], f[col["Kernel Name"]], f[col["Metric Name"]], v,
               (key in value ? value[key] : "") }' "$OUT/ncu.csv"
  else
    echo "!! ncu failed or ran past 150 s (log: $OUT/ncu.log)"; tail -n 20 "$OUT/ncu.log"; failed=$((failed + 1))
  fi
fi

step "compute-sanitizer racecheck on the planted races into $OUT/racecheck.txt"
if [[ -x "$OUT/analysis_races" ]]; then
  echo "+ compute-sanitizer --tool racecheck --racecheck-report all $OUT/analysis_races"
  timeout 150 compute-sanitizer --tool racecheck --racecheck-report all "$OUT/analysis_races" >"$OUT/racecheck.txt" 2>&1
  echo "  exit status $? ; summary:"
  grep -E 'RACECHECK SUMMARY|hazard|Race reported' "$OUT/racecheck.txt" | sort | uniq -c | head -n 20
fi

step "done: $failed step(s) failed; results in $OUT"
ls -l "$OUT"
exit "$failed"
