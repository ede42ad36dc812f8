// Host wrappers for the emulator's tensor-core (nvcuda::wmma) tests. The
// kernels live in wmma_kernels.cu, which goes through the translator like a
// student's file (and compiles with nvcc for sm_90, so they are valid CUDA).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

namespace emu_wmma_test {

/// How a matrix lies in memory: rows or columns `ld` elements apart.
enum class Layout { row, col };

/// c (m x n, row-major, leading dimension ldc) = a (m x k) * b (k x n), one
/// warp per 16x16 tile of c, k accumulated over k / 16 mma_sync calls in a
/// float accumulator; a and b stored as `la`/`lb` say with leading dimensions lda/ldb.
/// m, n and k are multiples of 16.
void launch_gemm(const __half* a, Layout la, unsigned lda, const __half* b, Layout lb, unsigned ldb, float* c,
                 unsigned ldc, int m, int n, int k);
void launch_gemm(const __nv_bfloat16* a, Layout la, unsigned lda, const __nv_bfloat16* b, Layout lb, unsigned ldb,
                 float* c, unsigned ldc, int m, int n, int k);
/// The same with a __half accumulator (a and b row-major).
void launch_gemm_half_accumulator(const __half* a, unsigned lda, const __half* b, unsigned ldb, __half* c,
                                  unsigned ldc, int m, int n, int k);

/// One warp, 16x16x16: d = alpha * (a * b + c), with c loaded column-major
/// (leading dimension ldc), the scaling done element by element on the
/// accumulator fragment, and d stored row-major (leading dimension ldd).
void launch_scaled_mma(const __half* a, const __half* b, const float* c, unsigned ldc, float alpha, float* d,
                       unsigned ldd);

/// One warp: element x[i] of lane l of an accumulator fragment set to l * 100 + i,
/// then stored row-major to out (256 floats): shows the element-to-lane mapping.
void launch_fragment_mapping(float* out);

// Planted bugs; each returns the line of its first warp-wide wmma call in wmma_kernels.cu.
/// One warp whose lanes 16..31 return before the wmma calls.
int launch_half_warp_wmma(const __half* a, const __half* b, float* c);
/// A block of 48 threads (its second warp has 16 lanes) calling wmma.
int launch_partial_last_warp_wmma(const __half* a, const __half* b, float* c);
/// Even and odd lanes load the same tile from two different lines (if / else).
int launch_divided_wmma(const __half* a, float* c);
/// load_matrix_sync of a tile that starts right past the end of `a`.
int launch_tile_past_end_wmma(const __half* a, float* c);
/// load_matrix_sync with ldm = 12, not a multiple of 8 halves.
int launch_bad_ldm_wmma(const __half* a, float* c);

}  // namespace emu_wmma_test
