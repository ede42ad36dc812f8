/// @file wmma_gemm.hpp
/// @brief Lesson 22 contract: the matrix product C = A·B of half-precision
/// or bfloat16 matrices on tensor cores, with float accumulation, through
/// the `nvcuda::wmma` fragments.
///
/// You implement these functions in `starter/22-tensor-cores/wmma_gemm.cu`.
/// The tests call them with device pointers and compare C with a CPU product
/// computed in double from the same 16-bit inputs. See the lesson text,
/// `lessons/22-tensor-cores/README.md`.
///
/// What every function shares:
/// - Shapes: A is M x K, B is K x N, C is M x N, all row-major and densely
///   packed (element (i, j) of A is `A[i * K + j]`). A and B hold `__half`
///   or `__nv_bfloat16` values; C holds floats.
/// - Empty shapes: M = 0 or N = 0 (C has no elements) launches nothing and
///   returns, and the pointers may be null; K = 0 (an empty sum) sets every
///   element of C to 0. A negative M, N or K throws `std::invalid_argument`.
/// - Every element of C is written: the caller may pass memory holding
///   anything (the tests fill it with NaN). Nothing outside C's M * N
///   elements is written, nothing outside A and B is read.
/// - The pointers are those `cudaMalloc` returns, or as aligned (256 bytes).
/// - Accuracy: the products of two 16-bit values are exact in float; each
///   element of C is a float sum of K of them in an order of the hardware's
///   own. The tests accept
///       |c - exact| <= K * 2^-23 * sum_k |a_ik * b_kj|
///   against the exact product of the same 16-bit inputs (see
///   `tests/22-tensor-cores/cpu_reference.hpp` for why this bound covers a
///   real tensor core as well as the emulator).
/// - They launch on the default stream, check the launch and return without
///   synchronising.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace lesson22 {

/// @brief The shape of one tensor-core operation, and of every fragment:
/// 16 x 16 x 16 (a 16 x 16 tile of A times a 16 x 16 tile of B).
inline constexpr int kFragment = 16;

/// @brief C = A·B with one warp per 16 x 16 tile of C, its fragments loaded
/// straight from global memory (the first step of the lesson).
///
/// M, N and K must be multiples of 16 (0 included): anything else throws
/// `std::invalid_argument`, since a fragment is always a whole 16 x 16 tile.
///
/// @param A device pointer to M * K values, row-major.
/// @param B device pointer to K * N values, row-major.
/// @param C device pointer to M * N floats, row-major: overwritten with A·B.
/// @param M rows of A and of C.
/// @param N columns of B and of C.
/// @param K columns of A, rows of B: the length of every dot product.
void gemm_wmma_simple(const __half* A, const __half* B, float* C, int M, int N, int K);

/// @brief gemm_wmma_simple() for bfloat16 inputs (same contract).
void gemm_wmma_simple(const __nv_bfloat16* A, const __nv_bfloat16* B, float* C, int M, int N, int K);

/// @brief C = A·B for any M, N, K (the graded task): block tiles staged in
/// shared memory, a register block of accumulator fragments per warp.
///
/// The reference: blocks of 256 threads (8 warps) each compute a 128 x 256
/// tile of C, walking along K 64 at a time. Each step's 128 x 64 tile of A
/// and 64 x 256 tile of B are copied into one of 3 stages in shared memory
/// by asynchronous 16-byte copies (`__pipeline_memcpy_async` from
/// `<cuda_pipeline.h>`, cp.async; zero-filled outside the matrices; rows
/// padded by 16 bytes against bank conflicts), two steps ahead of the one
/// multiplied: each step waits for its own copies, meets the other threads
/// at one barrier, starts the copies of a later step into the stage the
/// previous step used, and each warp multiplies its 64 x 64 part: 4 x 4
/// accumulator fragments kept in registers for the whole K loop, 4 fragments
/// of A and 4 of B loaded per 16 columns of the tile. Fragments inside C are
/// stored straight to C; those on its edges go through a small shared buffer
/// and are copied element by element, inside C only.
///
/// @param A device pointer to M * K values, row-major (may be null when C is empty).
/// @param B device pointer to K * N values, row-major (may be null when C is empty).
/// @param C device pointer to M * N floats, row-major: overwritten with A·B.
/// @param M rows of A and of C (>= 0).
/// @param N columns of B and of C (>= 0).
/// @param K columns of A, rows of B (>= 0): the length of every dot product.
void gemm_wmma(const __half* A, const __half* B, float* C, int M, int N, int K);

/// @brief gemm_wmma() for bfloat16 inputs (same contract).
void gemm_wmma(const __nv_bfloat16* A, const __nv_bfloat16* B, float* C, int M, int N, int K);

}  // namespace lesson22
