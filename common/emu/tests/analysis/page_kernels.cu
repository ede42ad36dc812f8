#include "page_kernels.hpp"

#include <cuda_runtime.h>

namespace page_kernels {

__global__ void scattered_store_kernel(const float* in, float* out, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i * 32] = in[i];
}

void scattered_store(const float* in, float* out, int n) { scattered_store_kernel<<<(n + 255) / 256, 256>>>(in, out, n); }

__global__ void pairs_write_one_kernel(int* out) { out[threadIdx.x / 2] = static_cast<int>(threadIdx.x); }

void pairs_write_one(int* out, int n) { pairs_write_one_kernel<<<1, 2 * n>>>(out); }

__global__ void all_but_last_kernel(int* out, int n) {
    const int i = threadIdx.x;
    if (i < n - 1) out[i] = i;
}

void all_but_last(int* out, int n) { all_but_last_kernel<<<1, n>>>(out, n); }

__global__ void divergent_barrier_kernel(int* out) {
    if (threadIdx.x % 2 == 0) {
        __syncthreads();
    } else {
        __syncthreads();
    }
    out[threadIdx.x] = 1;
}

void divergent_barrier(int* out) { divergent_barrier_kernel<<<1, 64>>>(out); }

int divergent_barrier_line() { return 27; }

__global__ void shared_histogram_kernel(const int* keys, int* bins) {
    __shared__ int counts[32];
    counts[threadIdx.x] = 0;
    __syncthreads();
    atomicAdd(&counts[keys[threadIdx.x] % 32], 1);
    __syncthreads();
    bins[threadIdx.x] = counts[threadIdx.x];
}

void shared_histogram(const int* keys, int* bins) { shared_histogram_kernel<<<1, 32>>>(keys, bins); }

int shared_histogram_line() { return 42; }

}  // namespace page_kernels
