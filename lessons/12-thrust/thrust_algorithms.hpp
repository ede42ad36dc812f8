/// @file thrust_algorithms.hpp
/// @brief Lesson 12 contract: Thrust's containers, algorithms with device
/// lambdas, sorting two arrays together, and execution policies on raw
/// device pointers.
///
/// You implement these functions in `starter/12-thrust/thrust_algorithms.cu`
/// with Thrust (no kernel of your own is needed). The tests are plain C++:
/// they pass host vectors or raw device pointers from `cudaMalloc`, never a
/// Thrust type, and compare with a CPU reference. See the lesson text,
/// `lessons/12-thrust/README.md`.
///
/// Common to every function that takes device pointers:
/// - The pointers come from `cudaMalloc`. On a GPU they must not be read on
///   the host: Thrust has to be told they are device memory (a
///   `thrust::device` policy or `thrust::device_ptr`).
/// - `n = 0` is valid, and the pointers may then be null.
/// - The function returns when the result is in place (Thrust's sorts and
///   for_each wait for their kernels; nothing more to synchronise).
#pragma once

#include <cstddef>
#include <vector>

namespace lesson12 {

/// @brief The number of bins of score_band_histogram(): ten bands of ten points.
inline constexpr unsigned kScoreBands = 10;

/// @brief Returns `a * x + b` for every `x` of `values`, computed on the device
/// in a `thrust::device_vector` with `thrust::transform` and a lambda.
///
/// The copy to the device, the transform and the copy back are all done by
/// the function; the result has the size of `values` (empty in, empty out).
/// The arithmetic is one `a * x + b` per element in float (a GPU may fuse it
/// into one fma, so the tests allow one rounding of difference).
///
/// @param values the input, on the host (may be empty).
/// @param a      the scale.
/// @param b      the offset.
/// @return the transformed values, on the host, in the same order.
std::vector<float> scale_and_offset(const std::vector<float>& values, float a, float b);

/// @brief `bands[k]` = number of scores in band k, counted with
/// `thrust::for_each` and a device lambda doing one `atomicAdd` per score.
///
/// Band k holds the scores in [10k, 10k + 10) for k = 0 .. 8, and band 9 holds
/// [90, 100]: a perfect 100 counts in band 9, not in a band 10. Scores below 0
/// (-0.5 included), above 100, infinities and NaN are dropped: not counted
/// anywhere. -0.0 counts in band 0.
///
/// @param scores device pointer to n floats (may be null when n = 0).
/// @param n      number of scores, below 2^32.
/// @param bands  device pointer to kScoreBands counts: the function sets them
///               to 0 itself (the caller may pass garbage), then counts.
void score_band_histogram(const float* scores, std::size_t n, unsigned int* bands);

/// @brief Sorts `n` (key, value) pairs held in two arrays, ascending by key,
/// and among equal keys ascending by value: the two arrays move together
/// (a `thrust::zip_iterator` over both, sorted as tuples).
///
/// Afterwards the pairs are the same multiset as before, and
/// `(keys[i], values[i]) <= (keys[i + 1], values[i + 1])` lexicographically.
/// The result is fully determined by the input, ties included.
///
/// @param keys   device pointer to n keys (may be null when n = 0).
/// @param values device pointer to n values (may be null when n = 0).
/// @param n      number of pairs.
void sort_pairs_ascending(int* keys, int* values, std::size_t n);

/// @brief Sorts `n` (key, value) pairs descending by key, and among equal
/// keys ascending by value, with a comparator of your own on the zipped pairs.
///
/// For example (3, 7) (5, 1) (3, 2) (5, 0) becomes (5, 0) (5, 1) (3, 2) (3, 7).
/// The comparator must be a strict weak ordering (never true for equal pairs).
///
/// @param keys   device pointer to n keys (may be null when n = 0).
/// @param values device pointer to n values (may be null when n = 0).
/// @param n      number of pairs.
void sort_pairs_descending_by_key(int* keys, int* values, std::size_t n);

/// @brief Sorts `n` floats ascending in place, on the device, with
/// `thrust::sort` on the raw pointer and an explicit execution policy.
///
/// The point of the exercise: Thrust picks where an algorithm runs from the
/// type of its iterators, and a raw `float*` means "host". Without
/// `thrust::device` (or a `thrust::device_ptr`) the sort would read the
/// device memory on the host. The values contain no NaN; -0.0 and +0.0 are
/// equal and may come out in either order.
///
/// @param values device pointer to n floats (may be null when n = 0).
/// @param n      number of floats.
void sort_device_floats(float* values, std::size_t n);

}  // namespace lesson12
