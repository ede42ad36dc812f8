// Lesson 12 reference: Thrust containers, algorithms and execution policies.
//
// No kernel is written here: Thrust launches them. What this file decides is
// *where* each algorithm runs (the iterator types or the policy say it), and
// what the lambdas may touch there.
//
// On the course's CPU emulator this file is compiled by g++ against the
// distribution's Thrust with its CPP device system: the same calls run
// serially on the host (see the lesson's "What differs on the emulator").
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

namespace {

constexpr unsigned kDropped = 0xFFFFFFFFu;  // a band number no histogram has: the score is not counted

// Maps a score to its band. The range test comes first and is written so that
// NaN fails it (every comparison with NaN is false); only then is the score
// divided, so -0.5 is dropped instead of being truncated into band 0.
struct ScoreToBand {
    __host__ __device__ unsigned operator()(float score) const {
        if (!(score >= 0.0f && score <= 100.0f)) return kDropped;
        const unsigned band = static_cast<unsigned>(score / 10.0f);
        return band < kScoreBands ? band : kScoreBands - 1;  // 100 joins band 9
    }
};

}  // namespace

std::vector<float> scale_and_offset(const std::vector<float>& values, float a, float b) {
    // The constructor allocates device memory and copies the host data into it.
    thrust::device_vector<float> on_device(values.begin(), values.end());
    // device_vector iterators tell Thrust "device": the transform is a kernel.
    // The lambda captures a and b by value: it runs where the host's stack
    // does not exist. __host__ __device__ (not __device__ alone) lets Thrust
    // ask the lambda's result type in host code.
    thrust::transform(on_device.begin(), on_device.end(), on_device.begin(),
                      [a, b] __host__ __device__(float x) { return a * x + b; });
    std::vector<float> result(values.size());
    thrust::copy(on_device.begin(), on_device.end(), result.begin());  // device to host
    return result;
}

void score_band_histogram(const float* scores, std::size_t n, unsigned int* bands) {
    COURSE_CUDA_CHECK(cudaMemsetAsync(bands, 0, kScoreBands * sizeof(unsigned)));
    if (n == 0) return;
    const ScoreToBand to_band{};
    // Many scores fall into the same band at the same time: the increment
    // must be atomic, or concurrent threads overwrite each other's counts.
    // atomicAdd exists on the device only, hence a __device__ lambda.
    thrust::for_each(thrust::device, scores, scores + n, [bands, to_band] __device__(float score) {
        const unsigned band = to_band(score);
        if (band < kScoreBands) atomicAdd(&bands[band], 1u);
    });
    COURSE_CUDA_CHECK(cudaGetLastError());
}

void sort_pairs_ascending(int* keys, int* values, std::size_t n) {
    if (n == 0) return;
    // device_pointer_cast wraps the raw cudaMalloc pointers: from here on
    // Thrust knows they are device memory, without a policy argument.
    const thrust::device_ptr<int> k = thrust::device_pointer_cast(keys);
    const thrust::device_ptr<int> v = thrust::device_pointer_cast(values);
    // One iterator over both arrays: dereferenced it gives a tuple of
    // references, and moving a tuple moves the key and its value together.
    // Tuples compare lexicographically, so equal keys are ordered by value.
    auto first = thrust::make_zip_iterator(thrust::make_tuple(k, v));
    thrust::sort(first, first + n);
}

void sort_pairs_descending_by_key(int* keys, int* values, std::size_t n) {
    if (n == 0) return;
    const thrust::device_ptr<int> k = thrust::device_pointer_cast(keys);
    const thrust::device_ptr<int> v = thrust::device_pointer_cast(values);
    auto first = thrust::make_zip_iterator(thrust::make_tuple(k, v));
    // A strict weak ordering: "l goes before r". Larger keys first; equal
    // keys by ascending value, so the order of ties is fixed by the data and
    // not by the sort's algorithm.
    thrust::sort(first, first + n,
                 [] __host__ __device__(const thrust::tuple<int, int>& l, const thrust::tuple<int, int>& r) {
                     if (thrust::get<0>(l) != thrust::get<0>(r)) return thrust::get<0>(l) > thrust::get<0>(r);
                     return thrust::get<1>(l) < thrust::get<1>(r);
                 });
}

void sort_device_floats(float* values, std::size_t n) {
    if (n == 0) return;
    // A raw float* alone would make Thrust sort on the host, reading device
    // memory there (a segmentation fault on a GPU). thrust::device says
    // where the data lives and where the sort must run.
    thrust::sort(thrust::device, values, values + n);
}

}  // namespace lesson12
