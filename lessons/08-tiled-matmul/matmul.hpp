/// @file matmul.hpp
/// @brief Lesson 08 contract: the matrix product C = A·B of row-major float
/// matrices through shared-memory tiles, and (going further) with register
/// blocking.
///
/// You implement these functions in `starter/08-tiled-matmul/matmul.cu`. The
/// tests call them with device pointers and compare C with a CPU product
/// computed in double. See the lesson text, `lessons/08-tiled-matmul/README.md`.
///
/// What both launchers share:
/// - Shapes: A is N x M, B is M x K, C is N x K, all row-major and densely
///   packed (element (i, j) of A is `A[i * M + j]`). Any N, M, K >= 0 is valid,
///   square or not, multiples of the tile size or not.
/// - Empty shapes: N = 0 or K = 0 (C has no elements) launches nothing and
///   returns; M = 0 (an empty sum) sets every element of C to 0.
/// - Every element of C is written: the caller may pass memory holding
///   anything (the tests fill it with NaN). Nothing outside C's N * K
///   elements is written.
/// - Accuracy: each element is a float sum of M products, in any order; the
///   tests accept |c - exact| <= M * FLT_EPSILON * sum_k |a_ik| * |b_kj|,
///   FLT_EPSILON = 2^-23 (see `tests/08-tiled-matmul/cpu_reference.hpp`).
/// - They launch on the default stream, check the launch and return without
///   synchronising.
#pragma once

namespace lesson08 {

/// @brief C = A·B with square shared-memory tiles (the graded task).
///
/// Each block computes one TILE x TILE tile of C, one thread per element.
/// It walks along M in phases: in each phase the block's threads copy one
/// TILE x TILE tile of A and one of B into shared memory (out-of-range
/// elements as 0), wait at a barrier, multiply the tiles from shared memory,
/// and wait at a second barrier before the next phase overwrites them.
///
/// @param A device pointer to N * M floats, row-major (may be null when it is empty).
/// @param B device pointer to M * K floats, row-major (may be null when it is empty).
/// @param C device pointer to N * K floats, row-major: overwritten with A·B.
/// @param N rows of A and of C (>= 0).
/// @param M columns of A, rows of B (>= 0): the length of every dot product.
/// @param K columns of B and of C (>= 0).
void matmul_tiled(const float* A, const float* B, float* C, int N, int M, int K);

/// @brief C = A·B with register blocking (going further): each thread
/// computes a small tile of C in registers.
///
/// Same contract as matmul_tiled(). The reference uses 128 x 128 block tiles
/// of C, 8 columns of A (rows of B) per phase and 128 threads that each keep
/// an 8 x 16 tile of C in registers (two blocks fit an SM); two pairs of
/// shared slabs, one barrier per phase, the shared reads one k ahead of the
/// multiply-adds; tiles taken down groups of 16 tile rows; `float4` loads
/// where the shape and alignment allow, and bounds checks for every other
/// shape.
///
/// @param A device pointer to N * M floats, row-major (may be null when it is empty).
/// @param B device pointer to M * K floats, row-major (may be null when it is empty).
/// @param C device pointer to N * K floats, row-major: overwritten with A·B.
/// @param N rows of A and of C (>= 0).
/// @param M columns of A, rows of B (>= 0): the length of every dot product.
/// @param K columns of B and of C (>= 0).
void matmul_register_blocked(const float* A, const float* B, float* C, int N, int M, int K);

}  // namespace lesson08
