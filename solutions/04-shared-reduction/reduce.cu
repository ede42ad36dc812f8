// Lesson 04 reference solution: a sum by grid-stride accumulation, a tree in
// shared memory, and one atomicAdd per block.
//
// Three stages, each cheaper than the one before it is fed by:
// 1. every thread adds its grid-stride share of the array in a register
//    (almost all the work, and all the memory traffic);
// 2. each block adds its threads' sums with a tree in shared memory: pairs
//    (i, i + half), half halving each level (sequential addressing), a
//    __syncthreads() between levels while more than one warp takes part,
//    then the last 32 values inside warp 0;
// 3. thread 0 of each block adds the block's total to *out with one atomic.
#include <reduce.hpp>

#include <course/cuda_check.hpp>

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <cuda_runtime.h>

namespace lesson04 {

namespace {

constexpr unsigned kThreadsPerBlock = 256;
constexpr unsigned kBlocksPerSm = 8;  // 8 x 256 threads fill an SM's 2048 thread slots: one wave
constexpr unsigned kWarpSize = 32;

// atomicAdd has overloads for double and for unsigned long long, not for
// long long. Two's complement addition gives the same bits signed or
// unsigned, so the signed sum goes through the unsigned overload.
template <class Acc>
__device__ void atomic_add(Acc* target, Acc value) {
    if constexpr (std::is_same_v<Acc, long long>) {
        atomicAdd(reinterpret_cast<unsigned long long*>(target), static_cast<unsigned long long>(value));
    } else {
        atomicAdd(target, value);
    }
}

// Stage 1: this thread's sum over its grid-stride share, in the wide type
// Acc (long long for ints, double for floats). Four loads are issued before
// their values are added, so that each thread keeps several memory requests
// in flight; a loop that waited for each load in turn would leave the memory
// system idle most of the time.
template <class In, class Acc>
__device__ Acc thread_sum(const In* in, int n) {
    const size_t count = static_cast<size_t>(n);
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    Acc sum = 0;
    for (; i + 3 * stride < count; i += 4 * stride) {
        const In a = in[i];
        const In b = in[i + stride];
        const In c = in[i + 2 * stride];
        const In d = in[i + 3 * stride];
        sum += static_cast<Acc>(a);
        sum += static_cast<Acc>(b);
        sum += static_cast<Acc>(c);
        sum += static_cast<Acc>(d);
    }
    for (; i < count; i += stride) sum += static_cast<Acc>(in[i]);
    return sum;
}

// Stage 2: the sum of `mine` over the block, valid in thread 0.
// `partial` is the block's shared memory: one Acc per thread.
template <class Acc>
__device__ Acc block_sum(Acc mine, Acc* partial) {
    const unsigned tid = threadIdx.x;
    partial[tid] = mine;
    // Every slot must be written before any thread reads another's.
    __syncthreads();

    // Sequential addressing: at each level, thread tid < half adds slot
    // tid + half into slot tid. The working threads are the first `half`,
    // so for half >= 32 whole warps work or whole warps rest: no warp is
    // split by the `if`. Writing in place needs no second barrier: the
    // level writes slots [0, half) and reads the others' slots [half, 2 half),
    // so no thread overwrites a value another thread has yet to read.
    for (unsigned half = blockDim.x / 2; half > kWarpSize; half /= 2) {
        if (tid < half) partial[tid] += partial[tid + half];
        // This level's writes are the next level's reads, by other warps.
        // The barrier is outside the `if`: every thread of the block must
        // reach it.
        __syncthreads();
    }

    // The last 64 (or 32) values are added by warp 0 alone, so a warp
    // barrier (__syncwarp) is enough, and the 31 idle warps leave.
    Acc total = 0;
    if (tid < kWarpSize) {
        Acc v = partial[tid];
        if (blockDim.x > kWarpSize) v += partial[tid + kWarpSize];
        // Every lane works at every step (no lane idles in a half-empty
        // warp): lane t adds lane t ^ mask's value, a butterfly, so after
        // five steps every lane holds the warp's total. Now each step reads
        // slots that other lanes write in the same step, so it is done in
        // two phases: all lanes publish, barrier, all lanes read, barrier.
        // Without the second barrier a fast lane would overwrite its slot
        // for the next step before a slow partner had read it.
        for (unsigned mask = kWarpSize / 2; mask > 0; mask /= 2) {
            partial[tid] = v;
            __syncwarp();
            v += partial[tid ^ mask];
            __syncwarp();
        }
        total = v;
    }
    return total;
}

// The shared memory is declared as bytes and viewed as Acc: an `extern
// __shared__ Acc partial[]` in a template would declare one array with a
// different type in each instantiation, which nvcc rejects.
template <class In, class Acc>
__global__ void sum_kernel(const In* in, int n, Acc* out) {
    extern __shared__ __align__(16) unsigned char shared_bytes[];
    Acc* partial = reinterpret_cast<Acc*>(shared_bytes);
    const Acc total = block_sum(thread_sum<In, Acc>(in, n), partial);
    // Stage 3: one atomic per block, a few thousand in all, not one per element.
    if (threadIdx.x == 0) atomic_add(out, total);
}

template <class In, class Acc>
void launch_reduction(course::LaunchShape shape, const In* in, int n, Acc* out) {
    const unsigned threads = shape.threads_per_block;
    if (threads < kWarpSize || threads > 1024 || (threads & (threads - 1)) != 0) {
        throw std::invalid_argument("launch_sum: threads_per_block must be a power of two from 32 to 1024, not " +
                                    std::to_string(threads));
    }
    // The kernel adds into *out, so it must start at 0. All-zero bytes are 0
    // as a long long and +0.0 as a double. The memset is ordered before the
    // kernel on the same stream, and the caller does not have to wait.
    COURSE_CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(Acc)));
    // One Acc of shared memory per thread of the block, sized at launch.
    const std::size_t shared_bytes = threads * sizeof(Acc);
    sum_kernel<In, Acc><<<shape.blocks, threads, shared_bytes>>>(in, n, out);
    COURSE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

course::LaunchShape sum_launch_shape(int n) {
    int device = 0;
    int sm_count = 0;
    COURSE_CUDA_CHECK(cudaGetDevice(&device));
    COURSE_CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));
    // One wave of resident blocks: enough loads in flight to keep memory
    // busy, and few blocks, so few atomics. A small array gets no more
    // blocks than it has elements for.
    const unsigned long long needed =
        (static_cast<unsigned long long>(std::max(n, 1)) + kThreadsPerBlock - 1) / kThreadsPerBlock;
    const unsigned long long wanted = static_cast<unsigned long long>(kBlocksPerSm) * std::max(sm_count, 1);
    return {static_cast<unsigned>(std::min(needed, wanted)), kThreadsPerBlock};
}

void launch_sum(course::LaunchShape shape, const int* in, int n, long long* out) {
    launch_reduction<int, long long>(shape, in, n, out);
}

void launch_sum(course::LaunchShape shape, const float* in, int n, double* out) {
    launch_reduction<float, double>(shape, in, n, out);
}

void launch_sum(course::LaunchShape shape, const double* in, int n, double* out) {
    launch_reduction<double, double>(shape, in, n, out);
}

}  // namespace lesson04
