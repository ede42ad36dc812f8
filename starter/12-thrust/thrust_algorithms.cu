// Lesson 12: Thrust: containers, algorithms and execution policies.
//
// Goal: implement the five functions of lessons/12-thrust/thrust_algorithms.hpp
// with Thrust; no kernel of your own is needed. Read the lesson first
// (lessons/12-thrust/README.md); `./course hint 12` gives a hint, and
// `./course grade 12` runs the tests.
#include "thrust_algorithms.hpp"

#include <course/cuda_check.hpp>

#include <cuda_runtime.h>

#include <thrust/copy.h>
#include <thrust/device_ptr.h>
#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#include <thrust/for_each.h>
#include <thrust/iterator/zip_iterator.h>
#include <thrust/sort.h>
#include <thrust/transform.h>
#include <thrust/tuple.h>

namespace lesson12 {

std::vector<float> scale_and_offset(const std::vector<float>& values, float a, float b) {
    // TODO: copy `values` into a thrust::device_vector<float>, apply
    // a * x + b to every element with thrust::transform and a lambda
    // (`[a, b] __host__ __device__ (float x) { ... }`), and copy the result
    // back into a std::vector<float> (thrust::copy).
    return std::vector<float>(values.size(), 0.0f);
}

void score_band_histogram(const float* scores, std::size_t n, unsigned int* bands) {
    // TODO: set the kScoreBands bands to 0 (cudaMemsetAsync), then call
    // thrust::for_each(thrust::device, scores, scores + n, ...) with a
    // __device__ lambda that finds the score's band (see the contract: 100
    // goes to band 9; scores outside [0, 100] and NaN are dropped) and
    // counts it with atomicAdd.
}

void sort_pairs_ascending(int* keys, int* values, std::size_t n) {
    // TODO: wrap both pointers with thrust::device_pointer_cast, zip them
    // (thrust::make_zip_iterator(thrust::make_tuple(...))) and thrust::sort
    // the zipped range.
}

void sort_pairs_descending_by_key(int* keys, int* values, std::size_t n) {
    // TODO: the same zipped range, sorted with a comparator of your own:
    // larger keys first, equal keys by ascending value.
}

void sort_device_floats(float* values, std::size_t n) {
    // TODO: thrust::sort on the raw pointer, telling Thrust with a policy
    // that the memory (and so the sort) is on the device.
}

}  // namespace lesson12
