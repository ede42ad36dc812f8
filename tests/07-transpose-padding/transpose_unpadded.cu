// The reference's tile kernel (solutions/07-transpose-padding/transpose.cu)
// with a tile of 32 floats per row instead of 33: tile[x][y] for the 32 lanes
// x of a warp is 32 words 32 apart, all in bank y mod 32, so each of the
// tile's column reads is a 32-way bank conflict. Everything else (the 32 x 8
// block, the four passes, the bounds checks) is as in the reference.
#include "transpose_unpadded.hpp"

#include <cstddef>
#include <cuda_runtime.h>

namespace lesson07 {

namespace {

constexpr unsigned kSide = 32;    // the tile's side
constexpr unsigned kPasses = 4;   // 32 x 8 threads, four rows of the tile each

__global__ void transpose_unpadded_kernel(const float* in, float* out, int rows, int cols) {
    __shared__ float tile[kSide][kSide];  // no padding column
    const std::size_t height = static_cast<std::size_t>(rows), width = static_cast<std::size_t>(cols);
    const std::size_t top = static_cast<std::size_t>(blockIdx.y) * kSide;
    const std::size_t left = static_cast<std::size_t>(blockIdx.x) * kSide;
    for (unsigned p = 0; p < kPasses; ++p) {
        const unsigned y = threadIdx.y + p * (kSide / kPasses);
        if (top + y < height && left + threadIdx.x < width) tile[y][threadIdx.x] = in[(top + y) * width + left + threadIdx.x];
    }
    __syncthreads();
    for (unsigned p = 0; p < kPasses; ++p) {
        const unsigned y = threadIdx.y + p * (kSide / kPasses);
        if (left + y < width && top + threadIdx.x < height) out[(left + y) * height + top + threadIdx.x] = tile[threadIdx.x][y];
    }
}

}  // namespace

void transpose_tiled_unpadded(const float* in, float* out, int rows, int cols) {
    if (rows <= 0 || cols <= 0) return;
    const dim3 grid((static_cast<unsigned>(cols) + kSide - 1) / kSide, (static_cast<unsigned>(rows) + kSide - 1) / kSide);
    transpose_unpadded_kernel<<<grid, dim3(kSide, kSide / kPasses)>>>(in, out, rows, cols);
}

}  // namespace lesson07
