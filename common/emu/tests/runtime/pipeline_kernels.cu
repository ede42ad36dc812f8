// Kernels for the emulator's asynchronous-copy tests (cuda_pipeline.h),
// written as a student would write them.
#include "pipeline_kernels.hpp"

#include <cuda_pipeline.h>

namespace emu_pipeline_test {

constexpr int kMaxStages = 4;

__global__ void staged_copy_kernel(const float* in, float* out, int tiles, int stages, int waits_short,
                                   int neighbour) {
    __shared__ __align__(16) float stage[kMaxStages][kTileFloats];
    const int t = threadIdx.x;
    // The first stages - 1 tiles in flight, one batch each (empty past the end).
    for (int s = 0; s < stages - 1; ++s) {
        if (s < tiles) __pipeline_memcpy_async(&stage[s][t * 4], in + s * kTileFloats + t * 4, 16);
        __pipeline_commit();
    }
    for (int tile = 0; tile < tiles; ++tile) {
        __pipeline_wait_prior(stages - 2 + waits_short);
        __syncthreads();  // every thread's copy of this tile has landed; the stage refilled below is free
        const int next = tile + stages - 1;
        if (next < tiles) {
            __pipeline_memcpy_async(&stage[next % stages][t * 4], in + next * kTileFloats + t * 4, 16);
        }
        __pipeline_commit();
        // With neighbour = 1 each thread reads another thread's copy, which
        // only the barrier makes visible; with 0, its own.
        const int other = (t + neighbour) % kThreads;
        for (int i = 0; i < 4; ++i) {
            out[tile * kTileFloats + other * 4 + i] = 2.0f * stage[tile % stages][other * 4 + i];
        }
    }
}

void launch_staged_copy(const float* in, float* out, int tiles, int stages, int waits_short, int neighbour) {
    staged_copy_kernel<<<1, kThreads>>>(in, out, tiles, stages, waits_short, neighbour);
}

__global__ void zero_filled_copy_kernel(const unsigned char* in, unsigned char* out, int zfill) {
    __shared__ __align__(16) unsigned char buffer[16];
    __pipeline_memcpy_async(buffer, in, 16, static_cast<size_t>(zfill));
    __pipeline_commit();
    __pipeline_wait_prior(0);
    for (int i = 0; i < 16; ++i) out[i] = buffer[i];
}

void launch_zero_filled_copy(const unsigned char* in, unsigned char* out, int zfill) {
    zero_filled_copy_kernel<<<1, 1>>>(in, out, zfill);
}

__global__ void misaligned_copy_kernel(const float* in) {
    __shared__ __align__(16) float buffer[4];
    __pipeline_memcpy_async(buffer, in + 1, 16);
    __pipeline_commit();
    __pipeline_wait_prior(0);
}

int launch_misaligned_copy(const float* in) {
    misaligned_copy_kernel<<<1, 1>>>(in);
    return __LINE__ - 7;
}

// One declaration for both launches, so that both use the same shared memory.
__global__ void pending_kernel(const float* in, float* out, bool issue) {
    __shared__ __align__(16) float buffer[4];
    if (issue) {
        __pipeline_memcpy_async(buffer, in, 16);
        __pipeline_commit();
        return;  // without waiting
    }
    __pipeline_wait_prior(0);
    for (int i = 0; i < 4; ++i) out[blockIdx.x * 4 + i] = buffer[i];
}

void launch_copy_left_pending(const float* in, int blocks) { pending_kernel<<<blocks, 1>>>(in, nullptr, true); }

void launch_wait_without_copies(float* out, int blocks) { pending_kernel<<<blocks, 1>>>(nullptr, out, false); }

}  // namespace emu_pipeline_test
