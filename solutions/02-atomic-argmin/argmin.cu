// Lesson 02 reference solution: argmin (and argmax) with one 64-bit atomicCAS
// loop over a packed (value, index) word.
//
// The search goes in three steps, each touching fewer values than the one
// before: a grid-stride loop with float4 loads keeps a best (value, index)
// per thread in registers; five shuffles combine the 32 bests of a warp; one
// lane per warp makes the atomic update of the shared word. The lesson's
// task needs only the first and last (a best per thread, one update each).
// The warp step cuts the updates of the one word by 32; measured as a
// separate kernel it took the search from 0.78x to 1.04x CUB (the lesson's
// "Measured results").
//
// CUDA's atomics each act on one variable of at most 64 bits (128 on compute
// capability 9.0 and later, through a different overload). A (float, int)
// pair fits in 64 bits, so the pair is stored as one unsigned long long and
// replaced as a whole by atomicCAS: no thread can ever observe the value of
// one element next to the index of another.
#include <argmin.hpp>

#include <course/cuda_check.hpp>

#include <algorithm>
#include <cstdint>
#include <cuda_runtime.h>

namespace lesson02 {

namespace {

constexpr unsigned kThreadsPerBlock = 256;
constexpr unsigned kWarpSize = 32;

// The device twins of host::pack_value_index / unpack_value_index. The value
// goes in the high half and the index in the low half; atomicCAS compares all
// 64 bits, so for the CAS the layout does not matter, but it must be the same
// everywhere the word is read.
__device__ unsigned long long pack_value_index(float value, int index) {
    return (static_cast<unsigned long long>(__float_as_uint(value)) << 32) | static_cast<unsigned>(index);
}

__device__ float unpack_value(unsigned long long packed) {
    return __uint_as_float(static_cast<unsigned>(packed >> 32));
}

// The only difference between argmin and argmax is which value wins.
struct Smaller {
    __device__ bool operator()(float candidate, float current) const { return candidate < current; }
};
struct Larger {
    __device__ bool operator()(float candidate, float current) const { return candidate > current; }
};

// Stores (value, index) in *slot if `value` beats the value stored there (or
// the slot still holds `empty`), atomically with respect to every other
// thread updating the same slot.
//
// Why this loop shape: atomicCAS(slot, assumed, mine) writes `mine` only if
// *slot still equals `assumed`, and in every case returns what *slot held
// before. So "it returned `assumed`" means "my write happened". Checking that
// after each CAS lets the winner stop at once: an uncontended win costs
// exactly one CAS. (The loop `while (better(value, old)) old = atomicCAS(slot,
// old, mine);` only re-tests the value: after a successful CAS `old` is the
// *previous* pair, which the value still beats, so it always issues a second,
// failing CAS before it sees its own pair and stops.)
template <class Better>
__device__ void atomic_update_value_index(unsigned long long* slot, unsigned long long empty, float value,
                                          int index) {
    const unsigned long long mine = pack_value_index(value, index);
    // A plain read is only a guess at the current pair; the CAS checks it.
    unsigned long long old = *slot;
    while (old == empty || Better{}(value, unpack_value(old))) {
        const unsigned long long assumed = old;
        old = atomicCAS(slot, assumed, mine);
        if (old == assumed) return;  // *slot held what we assumed, so it now holds our pair
        // Another thread changed *slot between our read and our CAS. `old` is
        // its new pair: test again against that (it may beat us: then we stop).
    }
}

// How many lanes the warp of thread `first_thread` has: 32, except for the
// last warp of a block whose size is not a multiple of 32 (the tests launch
// <<<1, 1>>> too).
__device__ unsigned lanes_of_warp_at(unsigned first_thread) { return min(kWarpSize, blockDim.x - first_thread); }

// The mask naming lanes 0 .. lanes-1: a warp collective must name exactly the
// lanes that exist and reach it.
__device__ unsigned mask_of_lanes(unsigned lanes) { return lanes == kWarpSize ? 0xffffffffu : (1u << lanes) - 1u; }

// A thread's best so far, kept in registers: no other thread can see it, so
// updating it needs no atomic.
template <class Better>
struct Best {
    float value = 0.0f;
    int index = -1;  // -1: no element seen yet

    // Strict comparison: of equal values the one offered first stays, the
    // same rule as the CAS loop's (only a strictly better value replaces).
    __device__ void offer(float v, size_t i) {
        if (index < 0 || Better{}(v, value)) {
            value = v;
            index = static_cast<int>(i);
        }
    }
    __device__ void offer4(float4 v, size_t first) {
        offer(v.x, first);
        offer(v.y, first + 1);
        offer(v.z, first + 2);
        offer(v.w, first + 3);
    }
};

// Step 1: a grid-stride loop over the array, each thread keeping its own best.
//
// The loads are float4, 16 bytes per instruction, where the address allows:
// a float4 load must be 16-byte aligned, and `values` may point anywhere
// inside an allocation. So the first `head` elements (up to the first 16-byte
// boundary) and the last few (fewer than 4) are read one float at a time by
// the first threads of the grid, and the middle as float4. Each iteration
// issues two float4 loads before comparing either, so every thread keeps 32
// bytes in flight: a loop that waited for each load before the next would
// leave the memory idle. A thread sees its indices in increasing order, so
// its best is the first of its equal minima.
template <class Better>
__device__ Best<Better> thread_best(int n, const float* values) {
    const size_t count = static_cast<size_t>(n);
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    const size_t thread = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    Best<Better> best;

    const size_t floats_past_boundary = (reinterpret_cast<std::uintptr_t>(values) / sizeof(float)) % 4;
    const size_t to_boundary = floats_past_boundary == 0 ? 0 : 4 - floats_past_boundary;
    const size_t head = to_boundary < count ? to_boundary : count;
    const size_t vectors = (count - head) / 4;
    const size_t tail_start = head + 4 * vectors;

    if (thread < head) best.offer(values[thread], thread);
    const float4* body = reinterpret_cast<const float4*>(values + head);
    size_t v = thread;
    for (; v + stride < vectors; v += 2 * stride) {
        const float4 first = body[v];
        const float4 second = body[v + stride];
        best.offer4(first, head + 4 * v);
        best.offer4(second, head + 4 * (v + stride));
    }
    if (v < vectors) best.offer4(body[v], head + 4 * v);
    if (tail_start + thread < count) best.offer(values[tail_start + thread], tail_start + thread);
    return best;
}

// Step 2: the 32 bests of a warp combined with shuffles, 16 + 8 + 4 + 2 + 1,
// so that lane 0 holds the warp's best. At offset d, lane i takes what lane
// i + d holds if it is strictly better (or lane i has none). In a partial
// warp, lane i + d may not exist: its shuffle result is undefined, so it is
// not used. Every lane takes part, even one that saw no element (its index
// is -1, which the merge skips).
template <class Better>
__device__ Best<Better> warp_best(Best<Better> best, unsigned lanes) {
    const unsigned mask = mask_of_lanes(lanes);
    const unsigned lane = threadIdx.x % kWarpSize;
    for (unsigned offset = kWarpSize / 2; offset > 0; offset /= 2) {
        const float other_value = __shfl_down_sync(mask, best.value, offset);
        const int other_index = __shfl_down_sync(mask, best.index, offset);
        if (lane + offset < lanes && other_index >= 0 &&
            (best.index < 0 || Better{}(other_value, best.value))) {
            best.value = other_value;
            best.index = other_index;
        }
    }
    return best;
}

// Step 3: one atomic update per warp, by lane 0, which now holds the warp's
// best. The shared word sees one CAS loop per warp instead of one per thread:
// 32 times fewer threads queueing on one address at the end of the kernel.
template <class Better>
__device__ void fold_into_slot(int n, const float* values, unsigned long long* slot, unsigned long long empty) {
    const unsigned first_of_warp = threadIdx.x / kWarpSize * kWarpSize;
    const Best<Better> best = warp_best(thread_best<Better>(n, values), lanes_of_warp_at(first_of_warp));
    if (threadIdx.x == first_of_warp && best.index >= 0) {
        atomic_update_value_index<Better>(slot, empty, best.value, best.index);
    }
}

// __launch_bounds__(1024, 2): any block size up to 1024 must launch, and at
// most 32 registers per thread keep 2048 threads (eight blocks of 256)
// resident on an SM, the one-wave grid argmin_launch_shape picks.
__global__ void __launch_bounds__(1024, 2) argmin_kernel(int n, const float* values, unsigned long long* result) {
    fold_into_slot<Smaller>(n, values, result, kEmptyArgmin);
}

__global__ void __launch_bounds__(1024, 2) argmax_kernel(int n, const float* values, unsigned long long* result) {
    fold_into_slot<Larger>(n, values, result, kEmptyArgmax);
}

}  // namespace

course::LaunchShape argmin_launch_shape(int n) {
    int device = 0;
    int sm_count = 0;
    int blocks_per_sm = 0;
    COURSE_CUDA_CHECK(cudaGetDevice(&device));
    COURSE_CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));
    // One wave: as many blocks as can be resident at once. Every warp ends
    // in one atomic on the same word, so a block that would only wait for a
    // free SM adds atomics and no bandwidth.
    COURSE_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, argmin_kernel,
                                                                    static_cast<int>(kThreadsPerBlock), 0));
    const unsigned long long needed =
        (static_cast<unsigned long long>(std::max(n, 1)) + kThreadsPerBlock - 1) / kThreadsPerBlock;
    const unsigned long long wave = static_cast<unsigned long long>(std::max(blocks_per_sm, 1)) * sm_count;
    return {static_cast<unsigned>(std::max(1ull, std::min(needed, wave))), kThreadsPerBlock};
}

void launch_argmin(course::LaunchShape shape, int n, const float* values, unsigned long long* result) {
    argmin_kernel<<<shape.blocks, shape.threads_per_block>>>(n, values, result);
    COURSE_CUDA_CHECK(cudaGetLastError());
}

void launch_argmax(course::LaunchShape shape, int n, const float* values, unsigned long long* result) {
    argmax_kernel<<<shape.blocks, shape.threads_per_block>>>(n, values, result);
    COURSE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace lesson02
