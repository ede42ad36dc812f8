// Lesson 05 reference solution: a sum of doubles reduced with warp shuffles,
// and an atomicAdd for double built from atomicCAS.
//
// The sum goes in four stages, each cheaper than the one before: a
// grid-stride loop in registers (almost all of the work, limited by memory
// bandwidth), five __shfl_down_sync steps in each warp, the warps' sums
// through shared memory to one last warp, and one atomic per block. Any block
// size from 1 to 1024 is allowed, so the last warp of a block may be partial:
// every warp collective names exactly the lanes that exist.
#include <warp_reduce.hpp>

#include <course/cuda_check.hpp>

#include <algorithm>
#include <cuda_runtime.h>

namespace lesson05 {

namespace {

constexpr unsigned kThreadsPerBlock = 256;
constexpr unsigned kWarpSize = 32;
constexpr unsigned kFullWarp = 0xffffffffu;

// atomicAdd for double from a 64-bit compare-and-swap. atomicCAS knows only
// integers, so the double travels as its bit pattern. `old` is our guess of
// the stored pattern; the CAS writes guess + val only if memory still holds
// the guess. It returns what memory held: equal to the guess means our sum
// went in (one CAS when nobody interferes); otherwise it is the newer
// pattern, and the next round adds to that. The loop compares patterns, not
// doubles: NaN != NaN would never leave the loop, and -0.0 == +0.0 would
// leave it after a CAS that failed.
__device__ double atomic_add_cas(double* address, double val) {
    unsigned long long* const word = reinterpret_cast<unsigned long long*>(address);
    unsigned long long old = *word;
    unsigned long long assumed = 0;
    do {
        assumed = old;
        const double sum = __longlong_as_double(static_cast<long long>(assumed)) + val;
        old = atomicCAS(word, assumed, static_cast<unsigned long long>(__double_as_longlong(sum)));
    } while (old != assumed);
    return __longlong_as_double(static_cast<long long>(old));
}

// How many lanes the warp of thread `first_thread` has: 32, except for the
// last warp of a block whose size is not a multiple of 32.
__device__ unsigned lanes_of_warp_at(unsigned first_thread) { return min(kWarpSize, blockDim.x - first_thread); }

// The mask naming lanes 0 .. lanes-1. The full mask is right only when all
// 32 lanes exist and take part; naming a lane that does not exist (or has
// exited) is undefined behaviour on a GPU and a reported fault on the emulator.
__device__ unsigned mask_of_lanes(unsigned lanes) { return lanes == kWarpSize ? kFullWarp : (1u << lanes) - 1u; }

// Tree sum over the first `lanes` lanes of the warp; lane 0 gets the total.
// At offset d, lane i adds what lane i + d holds: 16, 8, 4, 2, 1 fold 32
// values into one in five steps. In a partial warp, lane i + d may not
// exist: its shuffle result is undefined, so it is not added.
__device__ double warp_sum(double v, unsigned lanes) {
    const unsigned mask = mask_of_lanes(lanes);
    const unsigned lane = threadIdx.x % kWarpSize;
    for (unsigned offset = kWarpSize / 2; offset > 0; offset /= 2) {
        const double other = __shfl_down_sync(mask, v, offset);
        if (lane + offset < lanes) v += other;
    }
    return v;
}

// This thread's grid-stride share of the sum. Four loads are issued before
// they are added, so each thread keeps several memory requests in flight: a
// loop that waited for every load in turn would leave the memory idle.
__device__ double thread_sum(int n, const double* values) {
    const size_t count = static_cast<size_t>(n);
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    double sum = 0.0;
    for (; i + 3 * stride < count; i += 4 * stride) {
        double v[4];
        for (int k = 0; k < 4; ++k) v[k] = values[i + k * stride];
        sum += (v[0] + v[1]) + (v[2] + v[3]);
    }
    for (; i < count; i += stride) sum += values[i];
    return sum;
}

// __launch_bounds__(1024, 2): any block size up to 1024 must launch, and at
// most 32 registers per thread keep 2048 threads (eight blocks of 256)
// resident on an SM, the one-wave grid sum_launch_shape picks.
__global__ void __launch_bounds__(1024, 2) sum_kernel(int n, const double* values, double* result) {
    __shared__ double warp_sums[kWarpSize];  // at most 1024 / 32 warps
    const unsigned lane = threadIdx.x % kWarpSize;
    const unsigned warp = threadIdx.x / kWarpSize;

    const double mine = warp_sum(thread_sum(n, values), lanes_of_warp_at(warp * kWarpSize));
    if (lane == 0) warp_sums[warp] = mine;
    // Warp 0 is about to read what the other warps wrote. Nothing orders
    // warps of a block except a barrier: without it, warp 0 may read a slot
    // that its warp has not written yet.
    __syncthreads();

    if (warp == 0) {
        const unsigned warps = (blockDim.x + kWarpSize - 1) / kWarpSize;
        const double block_total = warp_sum(lane < warps ? warp_sums[lane] : 0.0, lanes_of_warp_at(0));
        // One atomic per block. The hardware's atomicAdd(double*) is one
        // read-modify-write at the L2; the CAS loop would be a round trip
        // per try, and the blocks of a one-wave grid finish nearly together.
        if (lane == 0) atomicAdd(result, block_total);
    }
}

struct CasAdd {
    __device__ void operator()(double* address, double val) const { atomic_add_cas(address, val); }
};

struct NativeAdd {
    __device__ void operator()(double* address, double val) const { atomicAdd(address, val); }
};

// Every element straight into *result, one atomic each: maximal contention,
// which is what a compare-and-swap loop has to survive.
template <class Add>
__global__ void add_each_kernel(int n, const double* values, double* result, Add add) {
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    for (size_t e = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < static_cast<size_t>(n);
         e += stride) {
        add(result, values[e]);
    }
}

// All-zero bytes are +0.0, the sum of nothing.
void zero_result(double* result) { COURSE_CUDA_CHECK(cudaMemsetAsync(result, 0, sizeof(double))); }

}  // namespace

course::LaunchShape sum_launch_shape(int n) {
    int device = 0;
    int sm_count = 0;
    COURSE_CUDA_CHECK(cudaGetDevice(&device));
    COURSE_CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));
    // Eight blocks of 256 threads fill an SM's 2048 thread slots: one wave,
    // enough loads in flight, and only a thousand or so atomics on an H100.
    const unsigned long long needed =
        (static_cast<unsigned long long>(std::max(n, 1)) + kThreadsPerBlock - 1) / kThreadsPerBlock;
    const unsigned long long wanted = 8ull * static_cast<unsigned long long>(std::max(sm_count, 1));
    return {static_cast<unsigned>(std::min(needed, wanted)), kThreadsPerBlock};
}

void launch_sum(course::LaunchShape shape, int n, const double* values, double* result) {
    zero_result(result);
    sum_kernel<<<shape.blocks, shape.threads_per_block>>>(n, values, result);
    COURSE_CUDA_CHECK(cudaGetLastError());
}

void launch_cas_atomic_add_each(course::LaunchShape shape, int n, const double* values, double* result) {
    zero_result(result);
    add_each_kernel<<<shape.blocks, shape.threads_per_block>>>(n, values, result, CasAdd{});
    COURSE_CUDA_CHECK(cudaGetLastError());
}

void launch_native_atomic_add_each(course::LaunchShape shape, int n, const double* values, double* result) {
    zero_result(result);
    add_each_kernel<<<shape.blocks, shape.threads_per_block>>>(n, values, result, NativeAdd{});
    COURSE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace lesson05
