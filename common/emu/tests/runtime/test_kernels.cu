// Kernels for the emulator's own tests, written as a student would write them.
#include "test_kernels.hpp"

namespace emu_test {

__global__ void record_ids(unsigned* out, uint3* thread_ids, uint3* block_ids) {
    const unsigned threads_per_block = blockDim.x * blockDim.y * blockDim.z;
    const unsigned block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    const unsigned thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    const unsigned id = block * threads_per_block + thread;
    out[id] = id;
    thread_ids[id] = threadIdx;
    block_ids[id] = blockIdx;
}

void launch_record_ids(dim3 grid, dim3 block, unsigned* out, uint3* thread_ids, uint3* block_ids) {
    record_ids<<<grid, block>>>(out, thread_ids, block_ids);
}

__global__ void empty_kernel() {}

void launch_empty(dim3 grid, dim3 block, size_t dynamic_shared_bytes) {
    empty_kernel<<<grid, block, dynamic_shared_bytes>>>();
}

__global__ void trap_at(unsigned fault_block, unsigned fault_thread) {
    if (blockIdx.x == fault_block && threadIdx.x == fault_thread) {
        __trap();  // the line launch_trap returns
    }
}

int launch_trap(unsigned fault_block, unsigned fault_thread) {
    trap_at<<<4, 32>>>(fault_block, fault_thread);
    return __LINE__ - 6;
}

__global__ void record_order(unsigned* order, unsigned* count) {
    order[*count] = threadIdx.x;
    *count += 1;
}

void launch_record_order(unsigned threads, unsigned* order, unsigned* count) {
    record_order<<<1, threads>>>(order, count);
}

struct Affine {
    float scale;
    float offset;
};

template <typename T, int Unroll>
__global__ void affine_fill(T* out, int n, Affine p) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x * Unroll / Unroll) {
        out[i] = p.scale * static_cast<T>(i) + p.offset;
    }
}

void launch_template_kernel(float* out, int n, float scale, float offset) {
    affine_fill<float, 2><<<dim3((n + 63) / 64 > 4 ? 4 : (n + 63) / 64),
                            dim3(64),
                            0,
                            nullptr>>>(out, n,
                                       Affine{scale, offset});
}

__global__ void through_dynamic_shared(float* out, int per_thread) {
    extern __shared__ float scratch[];
    __shared__ __align__(16) unsigned touched;  // static shared memory, aligned like CUDA allows
    touched = 0xCDCDCDCDu;
    float* mine = scratch + threadIdx.x * per_thread;
    for (int k = 0; k < per_thread; ++k) {
        out[(blockIdx.x * blockDim.x + threadIdx.x) * 2] = __float_as_uint(mine[k]) == touched ? 1.0f : 0.0f;
        mine[k] = static_cast<float>(blockIdx.x * 1000 + threadIdx.x * per_thread + k);
    }
    out[(blockIdx.x * blockDim.x + threadIdx.x) * 2 + 1] = mine[per_thread - 1];
}

void launch_dynamic_shared(float* out, unsigned blocks, unsigned threads, int per_thread) {
    through_dynamic_shared<<<blocks, threads, threads * per_thread * sizeof(float)>>>(out, per_thread);
}

}  // namespace emu_test
