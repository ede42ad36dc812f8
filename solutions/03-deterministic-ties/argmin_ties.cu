// Lesson 03 reference solution: argmin and argmax with deterministic ties.
//
// Two things make the answer the CPU's on every run. First, one total order:
// "smaller value, then lower index" (argmax: "larger value, then lower
// index"), used at every step where two candidates meet, so the winner never
// depends on which one arrived first. Second, speed without contention: each
// thread reduces its share of the array in registers, each warp reduces its
// 32 candidates with shuffles, and only then does one lane per warp touch
// the single global word, instead of every element hammering it.
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

// Does `a` come before `b` in argmin order? Comparisons with NaN are false,
// so a NaN candidate never wins. -0 == +0, so the zeros tie and the index
// decides. The indices compare as unsigned: the "no candidate yet" index -1
// becomes the largest, so it loses every tie, even against a real +inf.
__device__ bool precedes_min(ArgResult a, ArgResult b) {
    if (a.value != b.value) return a.value < b.value;
    return static_cast<unsigned>(a.index) < static_cast<unsigned>(b.index);
}

// Argmax order: the value comparison flips, the index comparison does not.
// Flipping both would return the highest index of the maximum.
__device__ bool precedes_max(ArgResult a, ArgResult b) {
    if (a.value != b.value) return a.value > b.value;
    return static_cast<unsigned>(a.index) < static_cast<unsigned>(b.index);
}

// Lock-free update of the global answer. `old` is our guess of the stored
// word; when it already comes first we leave at once, often without any
// atomic at all. Otherwise one CAS tries to swap in our pair; it fails only
// if someone changed the word since the guess, and then `old` is the new
// word, judged again. The decision uses the full order, ties included: with
// "better value" alone, the first of several equal extrema to arrive would
// stay, and arrival order changes from run to run.
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

// The key of the atomicMin variant: unsigned order of the high 32 bits is
// float order. A positive float's bits already grow with its value, so
// setting the sign bit puts every positive above every negative. A negative
// float's bits grow as the value falls, so all of its bits are inverted.
// -0 is first turned into +0 so that the two zeros get the same key and tie.
__device__ unsigned ordered_bits(float v) {
    if (v == 0.0f) v = 0.0f;
    const unsigned bits = __float_as_uint(v);
    return (bits & 0x80000000u) != 0 ? ~bits : bits | 0x80000000u;
}

__device__ unsigned long long min_key(float v, int index) {
    return (static_cast<unsigned long long>(ordered_bits(v)) << 32) | static_cast<unsigned>(index);
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
    unsigned long long best = ~0ull;
    visit_grid_stride(n, values, [&](float v, int i) {
        // A NaN has no place in float order; as bits it would map above +inf
        // (positive NaN) or below -inf (negative NaN), so it is skipped.
        if (v != v) return;
        best = min(best, min_key(v, i));
    });
    for (int offset = 16; offset > 0; offset /= 2) best = min(best, __shfl_down_sync(kFullWarp, best, offset));
    // atomicMin has no early exit: each call is a read-modify-write at the
    // L2, even when it changes nothing. Reading first, as the CAS loop does,
    // spares most warps the atomic (the stored key only ever decreases, so a
    // stale read can only make us try an atomic that was not needed).
    if (threadIdx.x % 32 == 0 && best < *key) atomicMin(key, best);
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
