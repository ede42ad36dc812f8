// Lesson 02: argmin with atomicCAS on a packed (value, index) word.
//
// Goal: make `./course grade 02` pass. Read lessons/02-atomic-argmin/README.md
// first; the functions the tests call are documented in argmin.hpp.
// Stuck? `./course hint 02` shows the hints one by one.
#include <argmin.hpp>

#include <course/cuda_check.hpp>

#include <algorithm>
#include <cuda_runtime.h>

namespace lesson02 {

__device__ unsigned long long pack_value_index(float value, int index) {
    // TODO: the float's bits (__float_as_uint) in the high 32 bits, the index
    // (as 32 unsigned bits) in the low 32 bits, like host::pack_value_index.
    return 0;
}

__device__ float unpack_value(unsigned long long packed) {
    // TODO: the float stored in the high 32 bits (__uint_as_float).
    return 0.0f;
}

// Stores (value, index) in *slot when `value` is smaller than the stored value
// or the slot still holds kEmptyArgmin.
__device__ void atomic_min_value_index(unsigned long long* slot, float value, int index) {
    // TODO: read the stored pair, and while `value` beats it (or it is empty),
    // try atomicCAS(slot, assumed, mine). atomicCAS returns what *slot held
    // before: if that is the pair you assumed, your pair is stored; stop.
    // A win with no other thread around must cost exactly one atomicCAS.
}

__global__ void argmin_kernel(int n, const float* values, unsigned long long* result) {
    // TODO: a grid-stride loop over values[0 .. n) that folds every element
    // into *result with atomic_min_value_index.
}

__global__ void argmax_kernel(int n, const float* values, unsigned long long* result) {
    // TODO: the same with the comparison reversed (empty word: kEmptyArgmax).
}

course::LaunchShape argmin_launch_shape(int n) {
    // TODO: size the grid from the GPU (SM count, or one wave of resident
    // blocks from cudaOccupancyMaxActiveBlocksPerMultiprocessor, with 256
    // threads per block), never more blocks than the data can use, never 0.
    return {0, 0};
}

void launch_argmin(course::LaunchShape shape, int n, const float* values, unsigned long long* result) {
    // TODO: launch argmin_kernel with `shape`, then
    // COURSE_CUDA_CHECK(cudaGetLastError()). Do not synchronise.
}

void launch_argmax(course::LaunchShape shape, int n, const float* values, unsigned long long* result) {
    // TODO: launch argmax_kernel with `shape`, then check the launch.
}

}  // namespace lesson02
