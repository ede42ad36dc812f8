// The benchmark's baseline of the pipeline: lesson 22's earlier reference
// kernel, kept as it was measured (108 TFLOP/s on an H100 at 4096³), so that
// one run compares it with the pipelined gemm_wmma and cuBLAS. Same block
// tile (128 x 128 x 32, 8 warps of 32 x 64), but single-buffered: each K
// step loads its tiles with plain 16-byte loads, waits at a barrier, then
// multiplies, and waits again before the next step may overwrite them.
// Whole tiles only (M and N multiples of 128, K of 32): the benchmark's shape.
#pragma once

#include <course/cuda_check.hpp>

#include <cstddef>
#include <stdexcept>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>

namespace lesson22_bench {

namespace single_stage {

namespace wmma = nvcuda::wmma;

constexpr int kFragment = 16, kBlockM = 128, kBlockN = 128, kBlockK = 32, kWarpsN = 2, kThreads = 256;
constexpr int kWarpM = 32, kWarpN = 64, kFragsM = 2, kFragsN = 4, kVector = 8;
constexpr int kAStride = kBlockK + 8, kBStride = kBlockN + 8;

template <int Rows, int Cols, int Stride>
__device__ __forceinline__ void load_tile(__half (*tile)[Stride], const __half* src, int cols, int row0, int col0) {
    constexpr int kChunksPerRow = Cols / kVector;
    for (int chunk = static_cast<int>(threadIdx.x); chunk < Rows * kChunksPerRow; chunk += kThreads) {
        const int r = chunk / kChunksPerRow, c = chunk % kChunksPerRow * kVector;
        *reinterpret_cast<uint4*>(&tile[r][c]) =
            *reinterpret_cast<const uint4*>(src + static_cast<std::size_t>(row0 + r) * cols + col0 + c);
    }
}

__global__ void __launch_bounds__(kThreads) kernel(const __half* A, const __half* B, float* C, int N, int K) {
    __shared__ __align__(32) __half a_tile[kBlockM][kAStride];
    __shared__ __align__(32) __half b_tile[kBlockK][kBStride];
    const int warp = static_cast<int>(threadIdx.x) / 32;
    const int warp_row = warp / kWarpsN, warp_col = warp % kWarpsN;
    const int block_row = static_cast<int>(blockIdx.y) * kBlockM, block_col = static_cast<int>(blockIdx.x) * kBlockN;
    wmma::fragment<wmma::accumulator, kFragment, kFragment, kFragment, float> acc[kFragsM][kFragsN];
#pragma unroll
    for (int i = 0; i < kFragsM; ++i) {
#pragma unroll
        for (int j = 0; j < kFragsN; ++j) wmma::fill_fragment(acc[i][j], 0.0f);
    }
    for (int k0 = 0; k0 < K; k0 += kBlockK) {
        load_tile<kBlockM, kBlockK, kAStride>(a_tile, A, K, block_row, k0);
        load_tile<kBlockK, kBlockN, kBStride>(b_tile, B, N, k0, block_col);
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < kBlockK; kk += kFragment) {
            wmma::fragment<wmma::matrix_a, kFragment, kFragment, kFragment, __half, wmma::row_major> a[kFragsM];
            wmma::fragment<wmma::matrix_b, kFragment, kFragment, kFragment, __half, wmma::row_major> b[kFragsN];
#pragma unroll
            for (int i = 0; i < kFragsM; ++i) {
                wmma::load_matrix_sync(a[i], &a_tile[warp_row * kWarpM + i * kFragment][kk], kAStride);
            }
#pragma unroll
            for (int j = 0; j < kFragsN; ++j) {
                wmma::load_matrix_sync(b[j], &b_tile[kk][warp_col * kWarpN + j * kFragment], kBStride);
            }
#pragma unroll
            for (int i = 0; i < kFragsM; ++i) {
#pragma unroll
                for (int j = 0; j < kFragsN; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
            }
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < kFragsM; ++i) {
#pragma unroll
        for (int j = 0; j < kFragsN; ++j) {
            const std::size_t row = static_cast<std::size_t>(block_row + warp_row * kWarpM + i * kFragment);
            const int col = block_col + warp_col * kWarpN + j * kFragment;
            wmma::store_matrix_sync(C + row * N + col, acc[i][j], static_cast<unsigned>(N), wmma::mem_row_major);
        }
    }
}

}  // namespace single_stage

/// @brief C = A·B by the earlier, single-buffered reference (M, N multiples
/// of 128, K of 32, 16-byte aligned; anything else throws).
inline void gemm_wmma_single_stage(const __half* A, const __half* B, float* C, int M, int N, int K) {
    using namespace single_stage;
    if (M % kBlockM != 0 || N % kBlockN != 0 || K % kBlockK != 0) {
        throw std::invalid_argument("gemm_wmma_single_stage: whole 128 x 128 x 32 tiles only");
    }
    const dim3 grid(static_cast<unsigned>(N / kBlockN), static_cast<unsigned>(M / kBlockM));
    kernel<<<grid, kThreads>>>(A, B, C, N, K);
    COURSE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace lesson22_bench
