// Lesson 03: deterministic tie-breaking for argmin and argmax.
//
// Goal: make `./course grade 03` pass. Read lessons/03-deterministic-ties/README.md
// first; the functions are documented in argmin_ties.hpp. Most of the code is
// here already and works: what is missing is the rule that decides between
// equal values, the argmax order, and (last step) the atomicMin key variant.
// Stuck? `./course hint 03` shows the hints one by one.
#include <argmin_ties.hpp>

#include <course/cuda_check.hpp>

#include <algorithm>
#include <cuda_runtime.h>

namespace lesson03 {

namespace {

constexpr unsigned kThreadsPerBlock = 256;
constexpr unsigned kFullWarp = 0xffffffffu;
constexpr unsigned long long kNoIndex = 0xffffffffull;  // index -1 as 32 unsigned bits

// The ArgResult bytes as the 64-bit word atomicCAS works on (value low, index high).
__device__ unsigned long long pack(ArgResult r) {
    return (static_cast<unsigned long long>(static_cast<unsigned>(r.index)) << 32) | __float_as_uint(r.value);
}

__device__ ArgResult unpack(unsigned long long word) {
    return {__uint_as_float(static_cast<unsigned>(word)), static_cast<int>(word >> 32)};
}

// Does `a` come before `b` in argmin order? The thread loop, the warp
// shuffle and the CAS loop below all decide with this one function.
__device__ bool precedes_min(ArgResult a, ArgResult b) {
    // TODO: this compares values only, so between equal values the answer
    // depends on which candidate happens to arrive first. Add the tie rule:
    // equal values -> the lower index comes first. Mind the empty marker
    // (index -1) and +inf, -0.0 and NaN (see the contract).
    return a.value < b.value;
}

// Does `a` come before `b` in argmax order?
__device__ bool precedes_max(ArgResult a, ArgResult b) {
    // TODO: a larger value comes first; among equal values, the lower index.
    (void)a;
    (void)b;
    return false;
}

// Lock-free update of the global answer. `old` is our guess of the stored
// word; when it already comes first we leave at once, often without any
// atomic at all. Otherwise one CAS tries to swap in our pair; it fails only
// if someone changed the word since the guess, and then `old` is the new
// word, judged again. The decision is `precedes`: while it compares values
// alone, the first of several equal extrema to arrive stays, and arrival
// order changes from run to run.
template <class Order>
__device__ void atomic_update_cas(ArgResult* result, ArgResult mine, Order precedes) {
    unsigned long long* word = reinterpret_cast<unsigned long long*>(result);
    const unsigned long long desired = pack(mine);
    unsigned long long old = *word;
    unsigned long long assumed = 0;
    do {
        if (!precedes(mine, unpack(old))) break;
        assumed = old;
        old = atomicCAS(word, assumed, desired);
    } while (old != assumed);
}

// The last step of the task: the key of the atomicMin variant. Its high 32
// bits must be "ordered bits" (unsigned order = float order), its low 32
// bits the index, so that the smallest key is the answer.
__device__ unsigned ordered_bits(float v) {
    // TODO: map the float's bits so that unsigned order is float order,
    // negative values and both zeros included. The raw bits are not it.
    return __float_as_uint(v);
}

// Calls visit(values[i], i) for this thread's grid-stride share, in
// increasing index order. Four loads are issued before the first visit, so
// that each thread keeps several memory requests in flight (a comparison
// that waited for every load in turn would leave the memory system idle).
// The loops over k have a constant trip count, so the compiler unrolls them.
template <class Visit>
__device__ void visit_grid_stride(int n, const float* values, Visit visit) {
    const size_t count = static_cast<size_t>(n);
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    for (; i + 3 * stride < count; i += 4 * stride) {
        float v[4];
        for (int k = 0; k < 4; ++k) v[k] = values[i + k * stride];
        for (int k = 0; k < 4; ++k) visit(v[k], static_cast<int>(i + k * stride));
    }
    for (; i < count; i += stride) visit(values[i], static_cast<int>(i));
}

// Each thread's best candidate over its share, starting from `best`.
template <class Order>
__device__ ArgResult thread_best(int n, const float* values, ArgResult best, Order precedes) {
    visit_grid_stride(n, values, [&](float v, int i) {
        if (precedes(ArgResult{v, i}, best)) best = ArgResult{v, i};
    });
    return best;
}

// Tree reduction across the warp: after offsets 16, 8, 4, 2, 1, lane 0
// holds the first candidate of the warp in the given order. Both halves of
// the pair travel in one 64-bit shuffle. Every lane of every warp gets here
// (threads_per_block is a multiple of 32), so the full mask is right.
template <class Order>
__device__ ArgResult warp_best(ArgResult best, Order precedes) {
    for (int offset = 16; offset > 0; offset /= 2) {
        const ArgResult other = unpack(__shfl_down_sync(kFullWarp, pack(best), offset));
        if (precedes(other, best)) best = other;
    }
    return best;
}

struct MinOrder {
    __device__ bool operator()(ArgResult a, ArgResult b) const { return precedes_min(a, b); }
};

struct MaxOrder {
    __device__ bool operator()(ArgResult a, ArgResult b) const { return precedes_max(a, b); }
};

__global__ void init_result_kernel(ArgResult* result, ArgResult identity) { *result = identity; }

__global__ void argmin_kernel(int n, const float* values, ArgResult* result) {
    const ArgResult best = warp_best(thread_best(n, values, ArgResult{INFINITY, -1}, MinOrder{}), MinOrder{});
    if (threadIdx.x % 32 == 0) atomic_update_cas(result, best, MinOrder{});
}

__global__ void argmax_kernel(int n, const float* values, ArgResult* result) {
    const ArgResult best = warp_best(thread_best(n, values, ArgResult{-INFINITY, -1}, MaxOrder{}), MaxOrder{});
    if (threadIdx.x % 32 == 0) atomic_update_cas(result, best, MaxOrder{});
}

// The key variant keeps plain 64-bit keys throughout: the smallest key is the
// answer, so the thread, the warp and the global step are all a `min`, and
// the global one is a single atomicMin, no loop.
__global__ void argmin_key_kernel(int n, const float* values, unsigned long long* key) {
    // TODO: keep this thread's smallest key over its share (visit_grid_stride
    // above calls a lambda with each value and index; a key is
    // ordered_bits(value) in the high 32 bits and the index in the low 32;
    // skip NaN), reduce the keys across the warp with __shfl_down_sync, and
    // let one lane per warp call atomicMin(key, ...).
    (void)n;
    (void)values;
    (void)key;
}

// Turns the winning key back into an ArgResult in place. The value is read
// from the input rather than decoded, so a winning -0.0f comes back as -0.0f.
__global__ void key_to_result_kernel(const float* values, ArgResult* result) {
    const unsigned long long key = *reinterpret_cast<const unsigned long long*>(result);
    const int index = static_cast<int>(key & kNoIndex);
    *result = ArgResult{index < 0 ? INFINITY : values[index], index};
}

__global__ void init_key_kernel(unsigned long long* key) {
    // {+inf, -1} as a key: larger than the key of any element that is not NaN.
    *key = (static_cast<unsigned long long>(ordered_bits(INFINITY)) << 32) | kNoIndex;
}

}  // namespace

course::LaunchShape argmin_launch_shape(int n) {
    int device = 0;
    int sm_count = 0;
    COURSE_CUDA_CHECK(cudaGetDevice(&device));
    COURSE_CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));
    // Eight blocks of 256 threads fill an SM's 2048 thread slots: one wave,
    // enough loads in flight, and few warps (so few atomics) in the grid.
    const unsigned long long needed = (static_cast<unsigned long long>(std::max(n, 1)) + kThreadsPerBlock - 1) /
                                      kThreadsPerBlock;
    const unsigned long long wanted = 8ull * static_cast<unsigned long long>(std::max(sm_count, 1));
    return {static_cast<unsigned>(std::min(needed, wanted)), kThreadsPerBlock};
}

void launch_argmin(course::LaunchShape shape, int n, const float* values, ArgResult* result) {
    init_result_kernel<<<1, 1>>>(result, ArgResult{INFINITY, -1});
    COURSE_CUDA_CHECK(cudaGetLastError());
    argmin_kernel<<<shape.blocks, shape.threads_per_block>>>(n, values, result);
    COURSE_CUDA_CHECK(cudaGetLastError());
}

void launch_argmax(course::LaunchShape shape, int n, const float* values, ArgResult* result) {
    init_result_kernel<<<1, 1>>>(result, ArgResult{-INFINITY, -1});
    COURSE_CUDA_CHECK(cudaGetLastError());
    argmax_kernel<<<shape.blocks, shape.threads_per_block>>>(n, values, result);
    COURSE_CUDA_CHECK(cudaGetLastError());
}

void launch_argmin_key(course::LaunchShape shape, int n, const float* values, ArgResult* result) {
    // The result's eight bytes hold the key while the kernels run.
    unsigned long long* key = reinterpret_cast<unsigned long long*>(result);
    init_key_kernel<<<1, 1>>>(key);
    COURSE_CUDA_CHECK(cudaGetLastError());
    argmin_key_kernel<<<shape.blocks, shape.threads_per_block>>>(n, values, key);
    COURSE_CUDA_CHECK(cudaGetLastError());
    key_to_result_kernel<<<1, 1>>>(values, result);
    COURSE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace lesson03
