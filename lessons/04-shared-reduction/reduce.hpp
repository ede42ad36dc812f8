/// @file reduce.hpp
/// @brief Lesson 04 contract: the sum of an array by a grid-stride loop, a
/// tree in shared memory and one atomicAdd per block.
///
/// You implement these functions in `starter/04-shared-reduction/reduce.cu`.
/// The tests call them with device pointers and compare the result with a
/// CPU sum. See the lesson text, `lessons/04-shared-reduction/README.md`.
///
/// What every `launch_sum` overload shares:
/// - It launches with exactly the given shape. The block size
///   (`shape.threads_per_block`) is a power of two from 32 to 1024, and the
///   kernel's tree must work for each of them (the tests try them all); the
///   shared memory for the tree is sized from it at launch.
/// - It sets `*out` to 0 itself before the kernel adds into it: the caller
///   may pass memory holding anything (the tests fill it with garbage).
/// - It checks the launch and returns without synchronising.
/// - `n = 0` is valid and gives 0.
#pragma once

#include <course/launch_shape.hpp>

namespace lesson04 {

/// @brief Chooses the launch shape for `launch_sum` on the current device.
///
/// The kernel is a grid-stride loop, so the grid is sized for the hardware:
/// a few blocks per streaming multiprocessor (query
/// `cudaDevAttrMultiProcessorCount`), never more blocks than the data can
/// use (`ceil(n / threads_per_block)`, at least 1).
///
/// @param n number of elements that will be summed (may be 0).
/// @return blocks >= 1 and threads_per_block a power of two from 32 to 1024.
///         For large n (millions of elements) at least one block per SM and
///         fewer threads than elements, so that every thread loops.
course::LaunchShape sum_launch_shape(int n);

/// @brief `*out = in[0] + ... + in[n-1]` for 32-bit ints, exactly.
///
/// Each thread, each block's tree and the atomics add in 64-bit integers,
/// so the sum is exact for every n (|sum| < n * 2^31 < 2^63). Overflow of a
/// 32-bit accumulator is the mistake this overload catches.
///
/// @param shape launch configuration: blocks >= 1, threads_per_block a power of two from 32 to 1024.
/// @param in    device pointer to n ints (may be null when n = 0).
/// @param n     number of elements; 0 gives 0.
/// @param out   device pointer to one long long: set to 0, then to the sum.
void launch_sum(course::LaunchShape shape, const int* in, int n, long long* out);

/// @brief `*out = in[0] + ... + in[n-1]` for floats, accumulated in double.
///
/// Every float is exact as a double, so the only rounding is that of the
/// double additions: the result is within n * 2^-53 * sum(|in[i]|) of the
/// exact sum, in any order of addition (the order changes with the launch
/// shape and, through the atomics, from run to run). A float accumulator
/// would have an error bound 2^29 times larger and be no faster, since the kernel
/// is limited by reading memory, not by arithmetic. NaN or infinities in
/// the input give NaN or an infinity, as on the CPU.
///
/// @param shape launch configuration: blocks >= 1, threads_per_block a power of two from 32 to 1024.
/// @param in    device pointer to n floats (may be null when n = 0).
/// @param n     number of elements; 0 gives 0.0.
/// @param out   device pointer to one double: set to 0, then to the sum.
void launch_sum(course::LaunchShape shape, const float* in, int n, double* out);

/// @brief `*out = in[0] + ... + in[n-1]` for doubles, accumulated in double.
///
/// The result is within n * 2^-53 * sum(|in[i]|) of the exact sum, in any
/// order of addition. NaN or infinities in the input give NaN or an
/// infinity, as on the CPU.
///
/// @param shape launch configuration: blocks >= 1, threads_per_block a power of two from 32 to 1024.
/// @param in    device pointer to n doubles (may be null when n = 0).
/// @param n     number of elements; 0 gives 0.0.
/// @param out   device pointer to one double: set to 0, then to the sum.
void launch_sum(course::LaunchShape shape, const double* in, int n, double* out);

}  // namespace lesson04
