// Lesson 06 reference solution: sums with 16-byte vector loads.
//
// A double2 (or float4) load moves 16 bytes in one instruction, but only
// from an address that is a multiple of 16. So each sum splits the array in
// three: a scalar head up to the first 16-byte boundary, a body of whole
// vectors, and a scalar tail of what is left. Each thread sums its share in
// registers, with four vector loads in flight; the block then combines its
// threads' sums (warp shuffles, then one warp over the warps' totals) and
// adds its total to the result with one atomic.
#include <vector_sum.hpp>

#include <course/cuda_check.hpp>

#include <algorithm>
#include <cstdint>
#include <cuComplex.h>
#include <cuda_runtime.h>

namespace lesson06 {

// The sum of a vector's elements, in double precision.
__device__ inline double vector_total(double2 v) { return v.x + v.y; }
__device__ inline double vector_total(float4 v) { return (double(v.x) + double(v.y)) + (double(v.z) + double(v.w)); }

namespace {

constexpr unsigned kThreadsPerBlock = 512;
constexpr unsigned kFullWarp = 0xffffffffu;
constexpr std::size_t kVectorBytes = 16;

// How many elements of size `element_bytes` come before the first 16-byte
// boundary at or after `p`, but never more than `count`. An aligned pointer
// has none; a double* at 8 past a boundary has one; a float* has up to three.
__device__ std::size_t elements_before_boundary(const void* p, std::size_t element_bytes, std::size_t count) {
    const std::size_t misalignment = reinterpret_cast<std::uintptr_t>(p) % kVectorBytes;
    const std::size_t head = misalignment == 0 ? 0 : (kVectorBytes - misalignment) / element_bytes;
    return head < count ? head : count;
}

// This thread's sum of values[0..n), read as Vector (double2 for doubles,
// float4 for floats) where the alignment allows: the head and the tail as
// scalars, the body as vectors. Every loop counts in its own units
// (elements for head and tail, vectors for the body), starts at the
// thread's global index and steps by the number of threads in the grid.
template <class Vector, class Scalar>
__device__ double thread_sum(int n, const Scalar* values) {
    constexpr std::size_t per_vector = sizeof(Vector) / sizeof(Scalar);
    const std::size_t count = static_cast<std::size_t>(n);
    const std::size_t first = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const std::size_t threads = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    const std::size_t head = elements_before_boundary(values, sizeof(Scalar), count);
    const std::size_t vectors = (count - head) / per_vector;
    // values + head is 16-byte aligned, so reading it as Vector is legal.
    const Vector* body = reinterpret_cast<const Vector*>(values + head);

    double sum = 0.0;
    for (std::size_t i = first; i < head; i += threads) sum += values[i];
    // Four independent 16-byte loads before any addition: the memory system
    // works on all four at once instead of waiting for each in turn.
    std::size_t v = first;
    for (; v + 3 * threads < vectors; v += 4 * threads) {
        const Vector a = body[v];
        const Vector b = body[v + threads];
        const Vector c = body[v + 2 * threads];
        const Vector d = body[v + 3 * threads];
        sum += (vector_total(a) + vector_total(b)) + (vector_total(c) + vector_total(d));
    }
    for (; v < vectors; v += threads) sum += vector_total(body[v]);
    // The tail: what is left after the last whole vector (one double when
    // n - head is odd). The double2 kernel of the CUDA C reduction article
    // (docs/sources.md) reads n / 2 pairs and stops there.
    for (std::size_t i = head + per_vector * vectors + first; i < count; i += threads) sum += values[i];
    return sum;
}

// A cuDoubleComplex is a double2, aligned to 16 bytes by its type: every
// element is already one 16-byte load, with no head and no tail.
__device__ cuDoubleComplex thread_sum_complex(int n, const cuDoubleComplex* values) {
    const std::size_t count = static_cast<std::size_t>(n);
    const std::size_t threads = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    cuDoubleComplex sum = make_cuDoubleComplex(0.0, 0.0);
    for (; i + 3 * threads < count; i += 4 * threads) {
        cuDoubleComplex v[4];
        for (int k = 0; k < 4; ++k) v[k] = values[i + k * threads];
        for (int k = 0; k < 4; ++k) sum = cuCadd(sum, v[k]);
    }
    for (; i < count; i += threads) sum = cuCadd(sum, values[i]);
    return sum;
}

// The block's part, the same for every sum: add up the threads' sums and
// add the total to *result with one atomic per block. Written for double
// and, per component, for complex numbers.
__device__ double shuffle_down(double v, int offset) { return __shfl_down_sync(kFullWarp, v, offset); }
__device__ cuDoubleComplex shuffle_down(cuDoubleComplex v, int offset) {
    return make_cuDoubleComplex(shuffle_down(v.x, offset), shuffle_down(v.y, offset));
}
__device__ double plus(double a, double b) { return a + b; }
__device__ cuDoubleComplex plus(cuDoubleComplex a, cuDoubleComplex b) { return cuCadd(a, b); }
__device__ void atomic_accumulate(double* result, double v) { atomicAdd(result, v); }
__device__ void atomic_accumulate(cuDoubleComplex* result, cuDoubleComplex v) {
    atomicAdd(&result->x, v.x);
    atomicAdd(&result->y, v.y);
}

template <class T>
__device__ T warp_sum(T v) {
    for (int offset = 16; offset > 0; offset /= 2) v = plus(v, shuffle_down(v, offset));
    return v;
}

// Every thread of the block calls this (a barrier follows), with blockDim.x
// a multiple of 32, so every lane of every warp reaches the shuffles.
template <class T>
__device__ void add_block_total(T mine, T zero, T* result) {
    __shared__ T warp_totals[32];
    const unsigned lane = threadIdx.x % 32;
    const unsigned warp = threadIdx.x / 32;
    mine = warp_sum(mine);
    if (lane == 0) warp_totals[warp] = mine;
    __syncthreads();  // every warp's total is written before warp 0 reads them
    if (warp == 0) {
        T total = lane < blockDim.x / 32 ? warp_totals[lane] : zero;
        total = warp_sum(total);
        if (lane == 0) atomic_accumulate(result, total);
    }
}

__global__ void sum_doubles_kernel(int n, const double* values, double* result) {
    add_block_total(thread_sum<double2>(n, values), 0.0, result);
}

__global__ void sum_floats_kernel(int n, const float* values, double* result) {
    add_block_total(thread_sum<float4>(n, values), 0.0, result);
}

__global__ void sum_complex_kernel(int n, const cuDoubleComplex* values, cuDoubleComplex* result) {
    add_block_total(thread_sum_complex(n, values), make_cuDoubleComplex(0.0, 0.0), result);
}

}  // namespace

course::LaunchShape sum_launch_shape(int n) {
    int device = 0;
    int sm_count = 0;
    COURSE_CUDA_CHECK(cudaGetDevice(&device));
    COURSE_CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));
    // Four blocks of 512 threads fill an SM's 2048 thread slots: one wave,
    // four 16-byte loads in flight per thread, and few blocks, so few atomics.
    // A small array gets only the blocks it can feed: one pair per thread.
    const unsigned long long per_block = 2ull * kThreadsPerBlock;
    const unsigned long long needed = (static_cast<unsigned long long>(std::max(n, 1)) + per_block - 1) / per_block;
    const unsigned long long wanted = 4ull * static_cast<unsigned long long>(std::max(sm_count, 1));
    return {static_cast<unsigned>(std::min(needed, wanted)), kThreadsPerBlock};
}

void launch_sum_doubles(course::LaunchShape shape, int n, const double* values, double* result) {
    COURSE_CUDA_CHECK(cudaMemsetAsync(result, 0, sizeof *result));  // all-zero bytes are +0.0
    sum_doubles_kernel<<<shape.blocks, shape.threads_per_block>>>(n, values, result);
    COURSE_CUDA_CHECK(cudaGetLastError());
}

void launch_sum_floats(course::LaunchShape shape, int n, const float* values, double* result) {
    COURSE_CUDA_CHECK(cudaMemsetAsync(result, 0, sizeof *result));
    sum_floats_kernel<<<shape.blocks, shape.threads_per_block>>>(n, values, result);
    COURSE_CUDA_CHECK(cudaGetLastError());
}

void launch_sum_complex(course::LaunchShape shape, int n, const cuDoubleComplex* values, cuDoubleComplex* result) {
    COURSE_CUDA_CHECK(cudaMemsetAsync(result, 0, sizeof *result));
    sum_complex_kernel<<<shape.blocks, shape.threads_per_block>>>(n, values, result);
    COURSE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace lesson06
