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

__global__ void vector_copy(const float* in, float* out, int offset, VectorLoad load) {
    // in + offset is 16-byte aligned only when offset is a multiple of 4.
    const float4* from = reinterpret_cast<const float4*>(in + offset) + threadIdx.x;
    float4 v{};
    switch (load) {  // one line per form, in the order of VectorLoad: the lines launch_vector_copy returns
        case VectorLoad::whole: v = *from; break;
        case VectorLoad::members: v = make_float4(from->x, from->y, from->z, from->w); break;
        case VectorLoad::ldg: v = __ldg(from); break;
    }
    reinterpret_cast<float4*>(out)[threadIdx.x] = v;
}

int launch_vector_copy(const float* in, float* out, int offset, unsigned threads, VectorLoad load) {
    vector_copy<<<1, threads>>>(in, out, offset, load);
    return __LINE__ - 9 + static_cast<int>(load);
}

__global__ void shared_vector_round_trip(float* out) {
    // Shared memory as a GPU lays it out: a float4 array 16-byte aligned,
    // dynamic shared memory at least as much, whatever came before it.
    __shared__ float pad[3];
    __shared__ float4 tile[32];
    extern __shared__ float4 dynamic_tile[];
    pad[threadIdx.x % 3] = 0.0f;
    tile[threadIdx.x] = make_float4(1.0f, 2.0f, 3.0f, static_cast<float>(threadIdx.x));
    dynamic_tile[threadIdx.x] = tile[threadIdx.x];
    __syncthreads();
    reinterpret_cast<float4*>(out)[threadIdx.x] = dynamic_tile[31 - threadIdx.x];
}

void launch_shared_vector_round_trip(float* out) {
    shared_vector_round_trip<<<1, 32, 32 * sizeof(float4)>>>(out);
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
