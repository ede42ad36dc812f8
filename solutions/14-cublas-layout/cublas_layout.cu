// Lesson 14 reference solution: cuBLAS on row-major matrices.
//
// cuBLAS, like the Fortran BLAS it follows, stores a matrix column by column:
// element (i, j) of a column-major matrix with leading dimension ld is at
// p[j * ld + i]. C and C++ arrays store row by row: (i, j) is at p[i * ld + j].
// The same bytes, read the other way, are the transpose. Everything below
// follows from that one fact:
// - a row-major product needs no copy: ask cuBLAS for the transposed
//   product, whose column-major result is exactly the row-major C;
// - a transposition flag belongs to its operand and moves with it;
// - a copy into column-major layout is possible with cudaMemcpy2D alone,
//   one column at a time, but costs a call per column and 4-byte pieces.
#include <cublas_layout.hpp>

#include <course/cublas_check.hpp>
#include <course/cuda_check.hpp>

#include <cstddef>
#include <cublas_v2.h>
#include <cuda_runtime.h>

namespace lesson14 {

void gemm_row_major(cublasHandle_t handle, int M, int N, int K, float alpha, const float* A, int lda,
                    const float* B, int ldb, float beta, float* C, int ldc) {
    // Read column-major, the row-major A (M x K, pitch lda) is A^T (K x M,
    // leading dimension lda), B is B^T (N x K, ldb) and C is C^T (N x M, ldc).
    // (A·B)^T = B^T·A^T, so this column-major product of an N x K by a
    // K x M matrix writes C^T column-major, which is C row-major. No
    // transposition flag is needed: cuBLAS already sees the transposes.
    // The first operand is B, and m = N (rows of the column-major result),
    // n = M; K stays the inner dimension.
    COURSE_CUBLAS_CHECK(
        cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B, ldb, A, lda, &beta, C, ldc));
}

void gemm_row_major_op(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int M, int N,
                       int K, float alpha, const float* A, int lda, const float* B, int ldb, float beta, float* C,
                       int ldc) {
    // Same trick: C^T = op(B)^T · op(A)^T. cuBLAS sees stored B as its
    // transpose, so op(B)^T is "stored B as cuBLAS sees it" when transb is N
    // (no flag), and its transpose when transb is T (flag T): the flag is
    // passed unchanged, but it travels with its operand, so transb comes
    // first, next to B. Swapping the operands without swapping the flags
    // transposes the wrong matrix.
    COURSE_CUBLAS_CHECK(cublasSgemm(handle, transb, transa, N, M, K, &alpha, B, ldb, A, lda, &beta, C, ldc));
}

void transpose_copy(float* dst, int ld_dst, const float* src, int ld_src, int rows, int cols, cudaStream_t stream) {
    // cudaMemcpy2D copies `height` rows of `width` bytes, stepping `spitch`
    // bytes in the source and `dpitch` bytes in the destination after each.
    // Column j of the row-major source is `rows` floats, one per source row:
    // width one float, source pitch one row (ld_src floats, in BYTES). In
    // the column-major destination that column is contiguous: destination
    // pitch one float. A single call cannot walk the columns too (it has
    // only one pitch per side), hence one call per column.
    if (rows == 0 || cols == 0) return;  // an empty matrix: no call at all
    const std::size_t source_pitch = static_cast<std::size_t>(ld_src) * sizeof(float);
    for (int j = 0; j < cols; ++j) {
        float* dst_column = dst + static_cast<std::size_t>(j) * static_cast<std::size_t>(ld_dst);
        const float* src_column = src + j;  // element (0, j)
        // cudaMemcpyDefault: the runtime finds from the addresses whether
        // each side is host or device memory (unified virtual addressing).
        COURSE_CUDA_CHECK(cudaMemcpy2DAsync(dst_column, sizeof(float), src_column, source_pitch, sizeof(float),
                                            static_cast<std::size_t>(rows), cudaMemcpyDefault, stream));
    }
}

}  // namespace lesson14
