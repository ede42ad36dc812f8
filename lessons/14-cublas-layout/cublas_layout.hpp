/// @file cublas_layout.hpp
/// @brief Lesson 14 contract: calling cuBLAS, a column-major library, on
/// row-major matrices, without copies (swapped operands) and with copies
/// (a transposing `cudaMemcpy2D`).
///
/// You implement these functions in `starter/14-cublas-layout/cublas_layout.cu`.
/// The tests call them with device pointers and compare with a CPU product
/// in double. See the lesson text, `lessons/14-cublas-layout/README.md`.
///
/// **GPU only.** cuBLAS runs on NVIDIA GPUs; the course's CPU emulator has no
/// cuBLAS, so on the emulator this lesson's tests are reported as skipped and
/// its `.cu` files are only compile-checked with nvcc.
///
/// Conventions of every function here:
/// - A **row-major** matrix with R rows and C columns and **leading
///   dimension** `ld` (the row pitch, in elements, `ld >= C`) keeps element
///   (i, j) at `p[i * ld + j]`. Elements `C .. ld - 1` of each row are
///   padding: never read, never written. This is also how a block inside a
///   larger matrix is passed: a pointer to its first element and the larger
///   matrix's row pitch.
/// - A **column-major** matrix (cuBLAS's layout) with leading dimension `ld`
///   (the column pitch, `ld >= R`) keeps element (i, j) at `p[j * ld + i]`.
/// - Leading dimensions are at least 1 even when the row (or column) is
///   empty, as cuBLAS requires.
/// - Nothing synchronises: the work is queued on the handle's stream (or the
///   stream given) and the caller waits for it. Every cuBLAS and CUDA status
///   is checked; a failure throws (COURSE_CUBLAS_CHECK, COURSE_CUDA_CHECK).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

namespace lesson14 {

/// @brief C = alpha·A·B + beta·C for **row-major** A (M x K), B (K x N) and
/// C (M x N), with one `cublasSgemm` call and no copy or transposition of
/// any matrix.
///
/// cuBLAS reads every matrix column-major, and a row-major matrix read
/// column-major is its transpose. So the row-major product is the
/// column-major product C^T = B^T·A^T: the solution passes B before A, and
/// the dimensions in the order that product needs.
///
/// Edge cases: M = 0 or N = 0 changes nothing. K = 0 makes A·B the zero
/// matrix, so C becomes beta·C. With beta = 0, C is written without being
/// read: NaN or garbage in C does not reach the result (cuBLAS guarantees
/// it). Padding (columns past the row length) is never touched.
///
/// @param handle an initialised cuBLAS handle (its stream and math mode are used as they are).
/// @param M      rows of A and C (>= 0).
/// @param N      columns of B and C (>= 0).
/// @param K      columns of A and rows of B (>= 0).
/// @param alpha  scale of the product.
/// @param A      device pointer, row-major M x K.
/// @param lda    row pitch of A in elements, lda >= max(1, K).
/// @param B      device pointer, row-major K x N.
/// @param ldb    row pitch of B in elements, ldb >= max(1, N).
/// @param beta   scale of the old C (0: C is only written).
/// @param C      device pointer, row-major M x N, updated in place.
/// @param ldc    row pitch of C in elements, ldc >= max(1, N).
void gemm_row_major(cublasHandle_t handle, int M, int N, int K, float alpha, const float* A, int lda,
                    const float* B, int ldb, float beta, float* C, int ldc);

/// @brief C = alpha·op(A)·op(B) + beta·C for **row-major** storage, with
/// transposition flags: op(X) is X for `CUBLAS_OP_N` and X^T for `CUBLAS_OP_T`.
///
/// op(A) is M x K and op(B) is K x N, as in cublasSgemm. What is stored is
/// the matrix before op: with `transa == CUBLAS_OP_T`, A is stored row-major
/// K x M (lda >= max(1, M)); with `CUBLAS_OP_N`, M x K (lda >= max(1, K)).
/// Likewise B: K x N for `CUBLAS_OP_N` (ldb >= max(1, N)), N x K for
/// `CUBLAS_OP_T` (ldb >= max(1, K)). C is row-major M x N, ldc >= max(1, N).
/// One `cublasSgemm` call, no copy. Edge cases as for gemm_row_major().
///
/// @param handle an initialised cuBLAS handle.
/// @param transa `CUBLAS_OP_N` or `CUBLAS_OP_T`: whether A is used as stored or transposed.
/// @param transb `CUBLAS_OP_N` or `CUBLAS_OP_T`: likewise for B.
/// @param M      rows of op(A) and of C (>= 0).
/// @param N      columns of op(B) and of C (>= 0).
/// @param K      columns of op(A), rows of op(B) (>= 0).
/// @param alpha  scale of the product.
/// @param A      device pointer to A as stored (see above).
/// @param lda    row pitch of A as stored, in elements.
/// @param B      device pointer to B as stored (see above).
/// @param ldb    row pitch of B as stored, in elements.
/// @param beta   scale of the old C (0: C is only written).
/// @param C      device pointer, row-major M x N, updated in place.
/// @param ldc    row pitch of C in elements, ldc >= max(1, N).
void gemm_row_major_op(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int M, int N,
                       int K, float alpha, const float* A, int lda, const float* B, int ldb, float beta, float* C,
                       int ldc);

/// @brief Copies a row-major matrix into column-major layout (a transposing
/// copy), built from `cudaMemcpy2DAsync` calls alone: no kernel.
///
/// Element (i, j) of the `rows` x `cols` matrix at `src` (row-major, row
/// pitch `ld_src`) is written to `dst[j * ld_dst + i]` (column-major, column
/// pitch `ld_dst`). Read row-major, `dst` then holds the `cols` x `rows`
/// transpose, so the same function converts column-major back to row-major
/// (swap rows and cols). One `cudaMemcpy2DAsync` per column: that column is
/// `rows` elements `ld_src` floats apart in `src` (a source pitch of
/// `ld_src * sizeof(float)` bytes, a width of one float) and lands
/// contiguously in `dst` (a destination pitch of `sizeof(float)` bytes).
/// That is `cols` calls, each moving 4-byte pieces: correct, and slow.
///
/// The copies use `cudaMemcpyDefault`, so `src` and `dst` may each be device
/// or host memory (the runtime tells them apart by address). Elements of
/// `dst` outside the rows x cols block (the padding rows `rows .. ld_dst - 1`
/// of each column) are not touched. rows = 0 or cols = 0 copies nothing.
///
/// @param dst    destination, column-major, at least ld_dst * (cols - 1) + rows floats.
/// @param ld_dst column pitch of dst in elements, ld_dst >= max(1, rows).
/// @param src    source, row-major, at least ld_src * (rows - 1) + cols floats.
/// @param ld_src row pitch of src in elements, ld_src >= max(1, cols).
/// @param rows   number of rows of the matrix (>= 0).
/// @param cols   number of columns of the matrix (>= 0).
/// @param stream the stream the copies are queued on (default: the legacy default stream).
void transpose_copy(float* dst, int ld_dst, const float* src, int ld_src, int rows, int cols,
                    cudaStream_t stream = nullptr);

}  // namespace lesson14
