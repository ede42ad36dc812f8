// Kernels for the emulator's barrier and warp-collective tests, written as
// a student would write them (this file also compiles with nvcc).
#include "sync_kernels.hpp"

namespace emu_sync_test {

__global__ void block_sum(const int* in, int n, int* partials, bool skip_barrier) {
    extern __shared__ int partial[];
    int sum = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) sum += in[i];
    partial[threadIdx.x] = sum;
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
        if (!skip_barrier) __syncthreads();
    }
    if (threadIdx.x == 0) partials[blockIdx.x] = partial[0];
}

void launch_block_sum(const int* in, int n, int* partials, unsigned blocks, unsigned threads, bool skip_barrier) {
    block_sum<<<blocks, threads, threads * sizeof(int)>>>(in, n, partials, skip_barrier);
}

__global__ void barrier_predicates(int* out, unsigned divisor) {
    const bool p = threadIdx.x % divisor == 0;
    const int count = __syncthreads_count(p);
    const int all = __syncthreads_and(p);
    const int any = __syncthreads_or(p);
    if (threadIdx.x == 0) {
        out[0] = count;
        out[1] = all;
        out[2] = any;
    }
}

void launch_barrier_predicates(int* out, unsigned threads, unsigned divisor) {
    barrier_predicates<<<1, threads>>>(out, divisor);
}

template <class T>
__global__ void shuffles(T* out, int offset, int width) {
    const T mine = static_cast<T>(threadIdx.x % 32 * 10) + static_cast<T>(1.5);
    T* o = out + 4 * threadIdx.x;
    o[0] = __shfl_sync(0xffffffffu, mine, offset, width);
    o[1] = __shfl_up_sync(0xffffffffu, mine, offset, width);
    o[2] = __shfl_down_sync(0xffffffffu, mine, offset, width);
    o[3] = __shfl_xor_sync(0xffffffffu, mine, offset, width);
}

void launch_shuffles_float(float* out, int offset, int width) { shuffles<float><<<1, 64>>>(out, offset, width); }
void launch_shuffles_double(double* out, int offset, int width) { shuffles<double><<<1, 64>>>(out, offset, width); }
void launch_shuffles_ll(long long* out, int offset, int width) { shuffles<long long><<<1, 64>>>(out, offset, width); }

__global__ void votes(unsigned* out, unsigned* active, unsigned divisor) {
    const bool p = threadIdx.x % divisor == 0;
    out[3 * threadIdx.x] = __ballot_sync(0xffffffffu, p);
    out[3 * threadIdx.x + 1] = __any_sync(0xffffffffu, p);
    out[3 * threadIdx.x + 2] = __all_sync(0xffffffffu, p);
    active[threadIdx.x] = __activemask();
}

void launch_votes(unsigned* out, unsigned* active, unsigned divisor) { votes<<<1, 64>>>(out, active, divisor); }

__global__ void warp_sums(const int* in, int* out) {
    int v = in[threadIdx.x];
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
    if (threadIdx.x % 32 == 0) out[threadIdx.x / 32] = v;
}

void launch_warp_sums(const int* in, int* out, unsigned threads) { warp_sums<<<1, threads>>>(in, out); }

__global__ void divergent_barriers(int* sink) {
    if (threadIdx.x % 2 == 0) {
        __syncthreads();
    } else {
        __syncthreads();
    }
    sink[threadIdx.x] = 1;
}

int launch_divergent_barriers() {
    divergent_barriers<<<1, 64>>>(nullptr);
    return __LINE__ - 9;
}

__global__ void exit_before_barrier(int* data) {
    if (threadIdx.x >= 16) return;
    __syncthreads();
    data[threadIdx.x] = 1;
}

int launch_exit_before_barrier() {
    exit_before_barrier<<<1, 32>>>(nullptr);
    return __LINE__ - 6;
}

__global__ void mask_excludes_caller(int* out) {
    const unsigned mask = threadIdx.x == 3 ? 0xfffffff7u : 0xffffffffu;
    out[threadIdx.x] = __shfl_sync(mask, static_cast<int>(threadIdx.x), 0);
}

int launch_mask_excludes_caller() {
    mask_excludes_caller<<<1, 32>>>(nullptr);
    return __LINE__ - 5;
}

__global__ void full_mask_partial_warp(int* out) {
    int v = static_cast<int>(threadIdx.x);
    v += __shfl_down_sync(0xffffffffu, v, 1);
    if (out != nullptr) out[threadIdx.x] = v;
}

int launch_full_mask_partial_warp() {
    full_mask_partial_warp<<<1, 48>>>(nullptr);
    return __LINE__ - 6;
}

__global__ void barrier_vs_shuffle(int* out) {
    int v = static_cast<int>(threadIdx.x);
    if (threadIdx.x < 16) {
        v = __shfl_sync(0xffffffffu, v, 0);
    } else {
        __syncthreads();
    }
    if (out != nullptr) out[threadIdx.x] = v;
}

int launch_barrier_vs_shuffle() {
    barrier_vs_shuffle<<<1, 32>>>(nullptr);
    return __LINE__ - 9;
}

__global__ void spin_forever(volatile int* flag) {
    while (*flag == 0) {
    }
}

int launch_spin_forever(int* flag) {
    spin_forever<<<2, 32>>>(flag);
    return __LINE__ - 6;
}

__global__ void spin_on_lock(int* lock) {
    while (atomicCAS(lock, 0, 1) != 0) {
    }
    atomicExch(lock, 0);
}

void launch_spin_on_lock(int* lock) { spin_on_lock<<<1, 64>>>(lock); }

__global__ void many_waiting_threads(int* out) {
    int local[64];
    for (int k = 0; k < 64; ++k) local[k] = static_cast<int>(threadIdx.x) + k;
    __syncthreads();
    for (int k = 0; k < 64; ++k) local[k] += 1;
    __syncthreads();
    int sum = 0;
    for (int k = 0; k < 64; ++k) sum += local[k];
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

void launch_many_waiting_threads(int* out) { many_waiting_threads<<<2, 1024>>>(out); }

}  // namespace emu_sync_test
