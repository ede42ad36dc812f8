// Kernels for the emulator's tests of __constant__ memory and of static
// shared arrays, written as a student would write them; this file also
// compiles with nvcc, which keeps the emulator honest about what is valid CUDA.
#include "symbol_kernels.hpp"

namespace emu_symbol_test {

namespace {

__constant__ float c_weights[kWeights];

__global__ void weigh(const float* in, float* out, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] * c_weights[i % kWeights];
}

__global__ void partial_sums(long long* out) {
    __shared__ long long partial[128];
    partial[threadIdx.x] = threadIdx.x + 1;
    __syncthreads();
    if (threadIdx.x == 0) {
        long long sum = 0;
        for (unsigned i = 0; i < blockDim.x && i < 128; ++i) sum += partial[i];
        out[0] = sum;
    }
}

__global__ void tile_shift(int shift, float* out) {
    __shared__ float tile[32][33];
    tile[threadIdx.y][threadIdx.x + shift] = static_cast<float>(threadIdx.y * 32 + threadIdx.x);
    __syncthreads();
    out[threadIdx.y * 32 + threadIdx.x] = tile[threadIdx.y][threadIdx.x + shift];
}

}  // namespace

cudaError_t set_weights(const float* host, std::size_t count, std::size_t offset_bytes, cudaMemcpyKind kind) {
    return cudaMemcpyToSymbol(c_weights, host, count * sizeof(float), offset_bytes, kind);
}

cudaError_t get_weights(float* out, std::size_t count, std::size_t offset_bytes, cudaMemcpyKind kind) {
    return cudaMemcpyFromSymbol(out, c_weights, count * sizeof(float), offset_bytes, kind);
}

cudaError_t weights_size(std::size_t* size) { return cudaGetSymbolSize(size, c_weights); }

cudaError_t weights_address(void** address) { return cudaGetSymbolAddress(address, c_weights); }

void launch_weigh(const float* in, float* out, int n) { weigh<<<(n + 63) / 64, 64>>>(in, out, n); }

void launch_partial_sums(int threads, long long* out) { partial_sums<<<1, threads>>>(out); }

void launch_tile_shift(int shift, float* out) { tile_shift<<<1, dim3(32, 32)>>>(shift, out); }

}  // namespace emu_symbol_test
