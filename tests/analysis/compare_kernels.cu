// The comparison's own kernels (compare_kernels.hpp). The two trees are the
// block-level reductions of lesson 04's text, alone (no grid-stride
// accumulation, no warp-level finish, no atomic) so that every shared-memory
// access pattern is fixed by the launch shape.
#include "compare_kernels.hpp"

#include <cuda_runtime.h>

namespace analysis_compare {

namespace {

constexpr unsigned kThreads = 256;

__global__ void tree_interleaved_kernel(const float* in, float* out) {
    __shared__ float partial[kThreads];
    const unsigned t = threadIdx.x;
    partial[t] = in[blockIdx.x * kThreads + t];
    __syncthreads();
    for (unsigned s = 1; s < kThreads; s *= 2) {
        const unsigned slot = 2 * s * t;
        if (slot < kThreads) partial[slot] += partial[slot + s];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = partial[0];
}

__global__ void tree_sequential_kernel(const float* in, float* out) {
    __shared__ float partial[kThreads];
    const unsigned t = threadIdx.x;
    partial[t] = in[blockIdx.x * kThreads + t];
    __syncthreads();
    for (unsigned s = kThreads / 2; s > 0; s /= 2) {
        if (t < s) partial[t] += partial[t + s];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = partial[0];
}

__global__ void saxpy_float4_kernel(int quads, float a, const float4* x, float4* y) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= quads) return;
    const float4 xv = x[i];
    float4 yv = y[i];
    yv.x += a * xv.x;
    yv.y += a * xv.y;
    yv.z += a * xv.z;
    yv.w += a * xv.w;
    y[i] = yv;
}

}  // namespace

void tree_interleaved(const float* in, float* out, int blocks) { tree_interleaved_kernel<<<blocks, kThreads>>>(in, out); }

void tree_sequential(const float* in, float* out, int blocks) { tree_sequential_kernel<<<blocks, kThreads>>>(in, out); }

void saxpy_float4(int quads, float a, const float* x, float* y) {
    saxpy_float4_kernel<<<(quads + kThreads - 1) / kThreads, kThreads>>>(
        quads, a, reinterpret_cast<const float4*>(x), reinterpret_cast<float4*>(y));
}

}  // namespace analysis_compare
