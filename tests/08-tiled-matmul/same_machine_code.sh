#!/bin/bash
# Lesson 08's reference is as fast as the benchmark's best row because its
# float4 kernel compiles to the row's machine code, byte for byte (the
# lesson's "The last 2%: machine code"): the same algorithm scheduled
# differently by ptxas ran 2% to 10% slower on an H100, and the same loop
# placed 32 bytes earlier, 0.8%. This check compiles the reference for
# sm_90 and looks for its kernel's code among the benchmark's kernels, so
# that an edit which changes the machine code is seen at once, not in the
# next GPU benchmark.
#
# same_machine_code.sh [--planted] NVCC ROOT SCRATCH [NVCC FLAGS...]
#   SCRATCH: a folder for the cubins; the benchmark's cubin is taken from
#   it when "08: nvcc compiles tests/08-tiled-matmul/matmul_bench.cu" left
#   one there, else compiled.
#   --planted: check a copy of the reference with N moved before M and K
#   among the kernel's parameters, which ptxas schedules differently (3%
#   slower on an H100): the check must fail on it.
# Exits 77 (skipped) for an nvcc other than 13.0, the release the identity
# was established with: another ptxas may schedule both kernels
# differently, and only a GPU benchmark can say which is faster then.
set -euo pipefail
planted=0
if [[ "${1:-}" == --planted ]]; then
  planted=1
  shift
fi
nvcc="$1" root="$2" scratch="$3"
shift 3
flags=(-arch=sm_90 -std=c++20 "$@" -I "$root/lessons/08-tiled-matmul" -I "$root/tests/08-tiled-matmul"
       -I "$root/common/include")

release=$("$nvcc" --version | sed -nE 's/.*release ([0-9]+\.[0-9]+).*/\1/p')
if [[ "$release" != 13.0 ]]; then
  echo "skipped: nvcc $release; the reference matches the benchmark's machine code with CUDA 13.0"
  exit 77
fi

mkdir -p "$scratch"
source="$root/solutions/08-tiled-matmul/matmul.cu"
solution="$scratch/same_machine_code_solution.cubin"
if ((planted)); then
  planted_source="$scratch/same_machine_code_planted.cu"
  sed -E 's/int M, int K, int N\) \{/int N, int M, int K) {/; s/\(A, B, C, M, K, N\);/(A, B, C, N, M, K);/' "$source" >"$planted_source"
  if cmp -s "$source" "$planted_source"; then
    echo "FAILED to plant: the reference no longer declares its kernel's parameters as (..., int M, int K, int N)"
    exit 2
  fi
  source="$planted_source" solution="$scratch/same_machine_code_planted.cubin"
fi
bench_source="$root/tests/08-tiled-matmul/matmul_bench.cu"
"$nvcc" "${flags[@]}" -cubin -o "$solution" "$source"
# The benchmark's cubin: the nvcc compile test's, else this script's own
# from an earlier run (a GPU tree has no nvcc compile tests), else compiled
# now (45 s).
bench=""
for cubin in "$scratch/tests_08_tiled_matmul_matmul_bench_cu.cubin" "$scratch/same_machine_code_bench.cubin"; do
  if [[ -s "$cubin" && ! "$cubin" -ot "$bench_source" ]]; then
    bench="$cubin"
    break
  fi
done
if [[ -z "$bench" ]]; then
  bench="$scratch/same_machine_code_bench.cubin"
  "$nvcc" "${flags[@]}" -cubin -o "$bench" "$bench_source"
fi

# The code sections (.text.KERNEL) of a cubin, and one's bytes as readelf's
# hex dump (offsets from the section's start, so two kernels' dumps are
# equal exactly when their bytes are).
sections() { readelf -S -W "$1" 2>/dev/null | grep -oE '\.text\.[^ ]+' | sort -u; }
code() { readelf -x "$2" "$1" 2>/dev/null | grep -E '^ +0x'; }

kernel=$(sections "$solution" | grep -E 'matmul_register_blocked_kernelILb1E' || true)
if [[ -z "$kernel" ]]; then
  echo "FAILED: no kernel matmul_register_blocked_kernel<true> in the cubin of ${source#"$root"/}"
  exit 1
fi
reference=$(code "$solution" "$kernel")
count=0
while read -r section; do
  count=$((count + 1))
  if [[ "$(code "$bench" "$section")" == "$reference" ]]; then
    echo "matmul_register_blocked_kernel<true> is byte for byte the benchmark's kernel ${section#.text.}"
    exit 0
  fi
done < <(sections "$bench")
cat <<EOF
FAILED: matmul_register_blocked_kernel<true> (${source#"$root"/}) compiles to machine
code that none of the benchmark's $count kernels has. It was the code of the row "rb 128x128 (8x16 a
thread, 128 threads) ..., groups of 16 tile rows, odd phase after the loop"; ptxas schedules the
same algorithm differently after small changes to the source (the order of parameters, index
arithmetic, the order of the loads), and those schedules measured 2% to 10% slower on an H100.
Compare the two with cuobjdump -sass, undo the change that moved the code, or, if the new code is
meant, measure it with ./course bench 08 on a GPU and change the row to match.
EOF
exit 1
