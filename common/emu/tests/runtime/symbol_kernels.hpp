// Host wrappers around the kernels of the emulator's tests of __constant__
// memory and static shared arrays. The kernels live in symbol_kernels.cu,
// which goes through the translator like a student's file and also compiles
// with nvcc.
#pragma once

#include <cstddef>

#include <cuda_runtime.h>

namespace emu_symbol_test {

/// The number of floats in the test's __constant__ array.
inline constexpr int kWeights = 16;

/// Fills the __constant__ array from the host (cudaMemcpyToSymbol with
/// `offset` bytes into it and `count` floats); returns the call's result.
cudaError_t set_weights(const float* host, std::size_t count, std::size_t offset_bytes,
                        cudaMemcpyKind kind = cudaMemcpyHostToDevice);

/// Copies `count` floats of the __constant__ array, from `offset_bytes` on, to `out`.
cudaError_t get_weights(float* out, std::size_t count, std::size_t offset_bytes,
                        cudaMemcpyKind kind = cudaMemcpyDeviceToHost);

/// The symbol's size and address, through cudaGetSymbolSize and cudaGetSymbolAddress.
cudaError_t weights_size(std::size_t* size);
cudaError_t weights_address(void** address);

/// out[i] = in[i] * weights[i % kWeights] for i < n, the weights read from
/// constant memory in the kernel.
void launch_weigh(const float* in, float* out, int n);

/// A block of `threads` threads sums threadIdx.x + 1 through a static
/// `__shared__ long long partial[128]`, one element per thread: more than
/// 128 threads write past its end. out[0] receives the sum.
void launch_partial_sums(int threads, long long* out);

/// A 32 x 32 block writes tile[threadIdx.y][threadIdx.x + shift] of a static
/// `__shared__ float tile[32][33]` and reads it back into out (32 * 32
/// floats): shift 0 or 1 stays inside, 2 writes past its end.
void launch_tile_shift(int shift, float* out);

}  // namespace emu_symbol_test
