// Lesson 02 reference solution: argmin (and argmax) with one 64-bit atomicCAS
// loop over a packed (value, index) word.
//
// CUDA's atomics each act on one variable of at most 64 bits (128 on compute
// capability 9.0 and later, through a different overload). A (float, int)
// pair fits in 64 bits, so the pair is stored as one unsigned long long and
// replaced as a whole by atomicCAS: no thread can ever observe the value of
// one element next to the index of another.
#include <argmin.hpp>

#include <course/cuda_check.hpp>

#include <algorithm>
#include <cuda_runtime.h>

namespace lesson02 {

namespace {

constexpr unsigned kThreadsPerBlock = 256;

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

// Grid-stride loop over the array. Each thread first keeps its own best in
// registers (no other thread can see it, so no atomic is needed), then makes
// one atomic update: one per thread instead of one per element, which keeps
// the threads from queueing on the single result word.
template <class Better>
__device__ void fold_into_slot(int n, const float* values, unsigned long long* slot, unsigned long long empty) {
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    float best_value = 0.0f;
    int best_index = -1;  // -1: this thread has seen no element yet
    for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < static_cast<size_t>(n);
         i += stride) {
        const float v = values[i];
        // Strict comparison: of equal values the first (lowest index) stays.
        if (best_index < 0 || Better{}(v, best_value)) {
            best_value = v;
            best_index = static_cast<int>(i);
        }
    }
    if (best_index >= 0) atomic_update_value_index<Better>(slot, empty, best_value, best_index);
}

__global__ void argmin_kernel(int n, const float* values, unsigned long long* result) {
    fold_into_slot<Smaller>(n, values, result, kEmptyArgmin);
}

__global__ void argmax_kernel(int n, const float* values, unsigned long long* result) {
    fold_into_slot<Larger>(n, values, result, kEmptyArgmax);
}

}  // namespace

course::LaunchShape argmin_launch_shape(int n) {
    int device = 0;
    int sm_count = 0;
    int blocks_per_sm = 0;
    COURSE_CUDA_CHECK(cudaGetDevice(&device));
    COURSE_CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));
    // One wave: as many blocks as can be resident at once. Every thread ends
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
