// Lesson 06: sums with 16-byte vector loads (double2, float4) and a complex sum.
//
// Goal: make `./course grade 06` pass. Read lessons/06-vectorized-loads/README.md
// first; the functions are documented in vector_sum.hpp. The block reduction
// (warp shuffles, one atomic per block), the kernels, the launch shape and the
// launchers are written and work. What is missing is each thread's own sum:
// the alignment rule, then the head, body and tail of a sum that reads
// vectors (one template serves double2 and float4), and (the going-further
// step) the complex sum.
// Stuck? `./course hint 06` shows the hints one by one.
#include <vector_sum.hpp>

#include <course/cuda_check.hpp>

#include <algorithm>
#include <cstdint>
#include <cuComplex.h>
#include <cuda_runtime.h>

namespace lesson06 {

// The sum of a vector's elements, in double precision. (Outside the
// anonymous namespace, so that nvcc does not flag them while unused.)
__device__ inline double vector_total(double2 v) { return v.x + v.y; }
__device__ inline double vector_total(float4 v) { return (double(v.x) + double(v.y)) + (double(v.z) + double(v.w)); }

namespace {

constexpr unsigned kThreadsPerBlock = 512;
constexpr unsigned kFullWarp = 0xffffffffu;

// How many elements of size `element_bytes` come before the first 16-byte
// boundary at or after `p`, but never more than `count`.
__device__ std::size_t elements_before_boundary(const void* p, std::size_t element_bytes, std::size_t count) {
    // TODO 1: the address is reinterpret_cast<std::uintptr_t>(p). An address
    // that is a multiple of 16 has no head; otherwise the head is the bytes
    // up to the next multiple of 16, counted in elements. Clamp it to count.
    (void)p;
    (void)element_bytes;
    (void)count;
    return 0;
}

// This thread's sum of values[0..n), read as Vector (double2 for doubles,
// float4 for floats) where the alignment allows. The kernels call it as
// thread_sum<double2>(n, values) and thread_sum<float4>(n, values).
template <class Vector, class Scalar>
__device__ double thread_sum(int n, const Scalar* values) {
    constexpr std::size_t per_vector = sizeof(Vector) / sizeof(Scalar);  // 2 doubles, 4 floats
    const std::size_t count = static_cast<std::size_t>(n);
    const std::size_t first = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const std::size_t threads = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    const std::size_t head = elements_before_boundary(values, sizeof(Scalar), count);
    double sum = 0.0;
    // TODO 2: the head: add values[i] for this thread's i < head (a
    // grid-stride loop from `first`, step `threads`).
    // TODO 3: the body: reinterpret values + head as const Vector* and add
    // vector_total() of each of its (count - head) / per_vector vectors, in
    // a grid-stride loop that counts in vectors. Several loads before the
    // additions keep more memory requests in flight.
    // TODO 4: the tail: the elements after the last whole vector, one at a
    // time (the double2 kernel of the CUDA C reduction article, in
    // docs/sources.md, forgets them).
    (void)per_vector;
    (void)first;
    (void)threads;
    (void)head;
    return sum;
}

// This thread's sum of the complex numbers values[0..n).
__device__ cuDoubleComplex thread_sum_complex(int n, const cuDoubleComplex* values) {
    // TODO 5 (going further): a grid-stride loop adding values[i] with cuCadd.
    // A cuDoubleComplex is a double2: every element is one 16-byte load.
    (void)n;
    (void)values;
    return make_cuDoubleComplex(0.0, 0.0);
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
