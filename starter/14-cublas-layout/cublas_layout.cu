// Lesson 14: cuBLAS and column-major layout (needs an NVIDIA GPU).
//
// Goal: make `./course grade 14` pass on a GPU. Read
// lessons/14-cublas-layout/README.md first; the functions you fill in are
// documented in cublas_layout.hpp. Stuck? `./course hint 14` shows the
// hints one by one. On the CPU emulator this lesson is skipped (cuBLAS has
// no CPU version), but `./course check` still compiles this file with nvcc.
//
// Order that works: gemm_row_major (one cublasSgemm call, no copy), then
// gemm_row_major_op (the same with transposition flags), then
// transpose_copy (cudaMemcpy2DAsync, one call per column).
#include <cublas_layout.hpp>

#include <course/cublas_check.hpp>
#include <course/cuda_check.hpp>

#include <cstddef>
#include <cublas_v2.h>
#include <cuda_runtime.h>

namespace lesson14 {

void gemm_row_major(cublasHandle_t handle, int M, int N, int K, float alpha, const float* A, int lda,
                    const float* B, int ldb, float beta, float* C, int ldc) {
    // TODO: one call, checked:
    //   COURSE_CUBLAS_CHECK(cublasSgemm(handle, opa, opb, m, n, k, &alpha, X, ldx, Y, ldy, &beta, C, ldc));
    // cuBLAS reads every matrix column-major: it sees your row-major A, B
    // and C as A^T, B^T and C^T. Which column-major product has C^T as its
    // result? Choose the operands (X, Y), their order, m, n and k to match.
    // No copy, no transposition flag needed.
    // (Until then the parameters are unused; nvcc does not mind.)
}

void gemm_row_major_op(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int M, int N,
                       int K, float alpha, const float* A, int lda, const float* B, int ldb, float beta, float* C,
                       int ldc) {
    // TODO: the same single call as gemm_row_major, now with op(A) and op(B).
    // Work out (op(A)·op(B))^T, and ask yourself which flag belongs to which
    // operand once the operands have changed places.
}

void transpose_copy(float* dst, int ld_dst, const float* src, int ld_src, int rows, int cols, cudaStream_t stream) {
    // TODO: for each column j, one checked
    //   cudaMemcpy2DAsync(dst_column, dpitch, src_column, spitch, width, height, cudaMemcpyDefault, stream)
    // Column j starts at src + j and at dst + j * ld_dst. Pitches and width
    // are in BYTES, the height in rows. Copy nothing when rows or cols is 0.
}

}  // namespace lesson14
