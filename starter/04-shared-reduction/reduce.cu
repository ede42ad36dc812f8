// Lesson 04: the sum of an array with a tree in shared memory.
//
// Goal: make `./course grade 04` pass. Read lessons/04-shared-reduction/README.md
// first; the functions you fill in are documented in reduce.hpp.
// Stuck? `./course hint 04` shows the hints one by one.
//
// The kernel is written once, as templates, for every element type: `In` is
// the input's type, `Acc` the wide type every sum is kept in (long long for
// int, double for float and double).
#include <reduce.hpp>

#include <course/cuda_check.hpp>

#include <algorithm>
#include <cstddef>
#include <type_traits>
#include <cuda_runtime.h>

namespace lesson04 {

namespace {

constexpr unsigned kWarpSize = 32;

// Given: atomicAdd has overloads for double and unsigned long long, not for
// long long; two's complement addition gives the same bits either way.
template <class Acc>
__device__ void atomic_add(Acc* target, Acc value) {
    if constexpr (std::is_same_v<Acc, long long>) {
        atomicAdd(reinterpret_cast<unsigned long long*>(target), static_cast<unsigned long long>(value));
    } else {
        atomicAdd(target, value);
    }
}

// Stage 1: this thread's sum over its grid-stride share of in[0, n), in Acc.
template <class In, class Acc>
__device__ Acc thread_sum(const In* in, int n) {
    // TODO: start at this thread's global index, step by the number of
    // threads in the whole grid (in size_t), add every element you visit.
    (void)in;
    (void)n;
    return Acc(0);
}

// Stage 2: the sum of `mine` over the whole block, returned in thread 0.
// `partial` points to the block's shared memory: blockDim.x slots of Acc.
template <class Acc>
__device__ Acc block_sum(Acc mine, Acc* partial) {
    // TODO: store `mine` in partial[threadIdx.x], then add the slots pairwise
    // in a tree: at each level thread tid < half adds slot tid + half into
    // slot tid, half going from blockDim.x / 2 down. Put a __syncthreads()
    // where a thread reads what another warp wrote, reached by EVERY thread.
    // The README shows how warp 0 can finish the last 32 slots with
    // __syncwarp() (read in one phase, write in the next).
    (void)partial;
    (void)kWarpSize;
    return mine;
}

template <class In, class Acc>
__global__ void sum_kernel(const In* in, int n, Acc* out) {
    // The shared memory is sized at launch (the third <<< >>> parameter),
    // declared as bytes and viewed as Acc.
    extern __shared__ __align__(16) unsigned char shared_bytes[];
    Acc* partial = reinterpret_cast<Acc*>(shared_bytes);
    const Acc total = block_sum(thread_sum<In, Acc>(in, n), partial);
    // TODO: stage 3: thread 0 adds the block's total to *out with atomic_add.
    (void)total;
    (void)out;
}

template <class In, class Acc>
void launch_reduction(course::LaunchShape shape, const In* in, int n, Acc* out) {
    // TODO: the kernel adds into *out, so set it to 0 first (cudaMemsetAsync:
    // all-zero bytes are 0 and 0.0), checked with COURSE_CUDA_CHECK.
    // TODO: give the tree one Acc of shared memory per thread of the block.
    const std::size_t shared_bytes = 0;
    sum_kernel<In, Acc><<<shape.blocks, shape.threads_per_block, shared_bytes>>>(in, n, out);
    COURSE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

course::LaunchShape sum_launch_shape(int n) {
    // TODO: 256 threads per block, and a few blocks per SM (query
    // cudaDevAttrMultiProcessorCount), but never more blocks than
    // ceil(n / 256) and never fewer than 1.
    (void)n;
    return {1, 256};
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
