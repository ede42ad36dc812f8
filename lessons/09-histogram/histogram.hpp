/// @file histogram.hpp
/// @brief Lesson 09 contract: counting keys into bins, with atomics on global
/// memory and with a private histogram per block in shared memory.
///
/// You implement these functions in `starter/09-histogram/histogram.cu`. The
/// tests call them with device pointers and compare the bins with a CPU count.
/// See the lesson text, `lessons/09-histogram/README.md`.
///
/// Common to every function:
/// - The launcher sets the bins to 0 itself (`cudaMemsetAsync`) before the
///   kernel counts into them: the caller may pass memory holding anything
///   (the tests fill it with garbage). The bins are not accumulated into.
/// - Counts are `unsigned int`: `n` must be below 2^32.
/// - `n = 0` is valid: every bin is set to 0, and the input pointer may be null.
/// - Each launcher checks the launch and returns without synchronising
///   (except the Thrust version, since Thrust's `for_each` waits for its kernel).
#pragma once

#include <course/launch_shape.hpp>

#include <cstddef>

namespace lesson09 {

/// @brief The largest number of bins the key histograms accept: 8192 bins of
/// 4 bytes are 32 KiB, within the 48 KiB of shared memory a block may use
/// without asking for more.
inline constexpr unsigned kMaxBins = 8192;

/// @brief The number of bins of the score histograms: one per integer score 0 to 100.
inline constexpr unsigned kScoreBins = 101;

/// @brief Chooses the launch shape for the key histograms on the current device.
///
/// The kernels are grid-stride loops, so the grid is sized for the hardware:
/// a few blocks per streaming multiprocessor (`cudaDevAttrMultiProcessorCount`),
/// never more blocks than the data can use (`ceil(n / threads_per_block)`,
/// at least 1). Every block of a shared-memory histogram flushes all its bins
/// at the end, so more blocks than needed cost global atomics for nothing.
///
/// @param n number of keys that will be counted (may be 0).
/// @return blocks >= 1, 1 <= threads_per_block <= 1024. For large n (millions
///         of keys) at least one block per SM and fewer threads than keys.
course::LaunchShape histogram_launch_shape(std::size_t n);

/// @brief `bins[k]` = number of `i < n` with `keys[i] == k`, for `k < num_bins`,
/// counted with one `atomicAdd` on global memory per key (the simple version).
///
/// Keys at or above `num_bins` are invalid and dropped: they are not
/// counted anywhere, and `bins` past `num_bins - 1` is never touched.
///
/// @param shape    the launch configuration to use (blocks >= 1, 1 <= threads_per_block <= 1024).
/// @param keys     device pointer to n keys (may be null when n = 0).
/// @param n        number of keys, below 2^32.
/// @param num_bins number of bins, 1 to kMaxBins; otherwise std::invalid_argument.
/// @param bins     device pointer to num_bins counts: set to 0, then to the counts.
void launch_histogram_global(course::LaunchShape shape, const unsigned int* keys, std::size_t n,
                             unsigned int num_bins, unsigned int* bins);

/// @brief The same counts as launch_histogram_global(), privatised: each
/// block counts into its own copy of the bins in shared memory, then adds
/// each nonzero bin to `bins` with one global `atomicAdd`.
///
/// The number of bins is independent of the block size (the tests use 1, 7,
/// 256 and 1000 bins with 32 to 1024 threads per block); the shared memory,
/// `num_bins * 4` bytes, is sized at launch. Keys at or above `num_bins` are
/// dropped.
///
/// @param shape    the launch configuration to use (blocks >= 1, 1 <= threads_per_block <= 1024).
/// @param keys     device pointer to n keys (may be null when n = 0).
/// @param n        number of keys, below 2^32.
/// @param num_bins number of bins, 1 to kMaxBins; otherwise std::invalid_argument.
/// @param bins     device pointer to num_bins counts: set to 0, then to the counts.
void launch_histogram_shared(course::LaunchShape shape, const unsigned int* keys, std::size_t n,
                             unsigned int num_bins, unsigned int* bins);

/// @brief `bins[v]` = number of bytes equal to `v` in `data[0, n)`: the
/// 256-bin histogram of a byte stream, as fast as the hardware allows.
///
/// It chooses its own launch shape. `data` may have any alignment (an odd
/// address too); the bytes before the first 16-byte boundary and after the
/// last one are counted like the others.
///
/// @param data device pointer to n bytes (may be null when n = 0).
/// @param n    number of bytes, below 2^32.
/// @param bins device pointer to 256 counts: set to 0, then to the counts.
void histogram_bytes(const unsigned char* data, std::size_t n, unsigned int* bins);

/// @brief The score histogram: `bins[k]` = number of scores that round to
/// `k`, for k = 0 .. 100, counted with a shared-memory histogram per block.
///
/// A score in [0, 100] is rounded to the nearest integer, halves away from
/// zero (`roundf`: 0.5 goes to bin 1, 99.5 to bin 100; -0.0 counts in bin 0).
/// Scores below 0 or above 100 (-0.2 and 100.3 included, although they would
/// round into the range), infinities and NaN are dropped.
///
/// @param shape  the launch configuration to use (blocks >= 1, 1 <= threads_per_block <= 1024).
/// @param scores device pointer to n floats (may be null when n = 0).
/// @param n      number of scores, below 2^32.
/// @param bins   device pointer to kScoreBins counts: set to 0, then to the counts.
void launch_score_histogram(course::LaunchShape shape, const float* scores, std::size_t n, unsigned int* bins);

/// @brief The score histogram of launch_score_histogram(), written with
/// `thrust::for_each` and a `__device__` lambda. On the CPU emulator the
/// distribution's Thrust runs it (its CPP device system: the lambda is
/// called for each score in turn, on the host, over the emulator's device
/// memory).
///
/// @param scores device pointer to n floats (may be null when n = 0).
/// @param n      number of scores, below 2^32.
/// @param bins   device pointer to kScoreBins counts: set to 0, then to the counts.
void thrust_score_histogram(const float* scores, std::size_t n, unsigned int* bins);

}  // namespace lesson09
