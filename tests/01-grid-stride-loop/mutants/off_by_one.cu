// Mutant: the loop bound lets index n through, writing one element past the
// end of y; the guard elements must expose it.
#include <saxpy.hpp>

#include <course/cuda_check.hpp>

#include <algorithm>
#include <cuda_runtime.h>

namespace lesson01 {

__global__ void saxpy_kernel(int n, float a, const float* x, float* y) {
    // size_t arithmetic: blockIdx.x * blockDim.x can exceed INT_MAX on a large
    // grid, and i + stride can overflow an int near the end of a big array.
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
         i <= static_cast<size_t>(n); i += stride) {
        y[i] = a * x[i] + y[i];
    }
}

course::LaunchShape saxpy_launch_shape(int n) {
    int device = 0;
    int sm_count = 0;
    COURSE_CUDA_CHECK(cudaGetDevice(&device));
    COURSE_CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));

    // 256 threads per block is a good default for a memory-bound kernel; 32
    // blocks per SM keeps every SM busy while still making threads loop
    // (the ratio the grid-stride pattern is usually tuned with).
    const unsigned threads = 256;
    const unsigned long long needed = (static_cast<unsigned long long>(std::max(n, 1)) + threads - 1) / threads;
    const unsigned long long wanted = 32ull * static_cast<unsigned long long>(sm_count);
    return {static_cast<unsigned>(std::min(needed, wanted)), threads};
}

void launch_saxpy(course::LaunchShape shape, int n, float a, const float* x, float* y) {
    saxpy_kernel<<<shape.blocks, shape.threads_per_block>>>(n, a, x, y);
    COURSE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace lesson01
