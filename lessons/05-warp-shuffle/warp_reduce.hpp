/// @file warp_reduce.hpp
/// @brief Lesson 05 contract: the sum of doubles reduced with warp shuffles
/// (one atomic per block), and an `atomicAdd` for double built from `atomicCAS`.
///
/// You implement these functions in `starter/05-warp-shuffle/warp_reduce.cu`.
/// The tests call them with device pointers and compare with a CPU sum taken
/// in `long double` (see `tests/05-warp-shuffle/cpu_reference.hpp`). Lesson
/// text: `lessons/05-warp-shuffle/README.md`.
///
/// The rules every function here follows:
/// - **Launch shapes:** any grid of at least one block, and **any** block
///   size from 1 to 1024 threads, multiples of 32 or not. A block of 48
///   threads has a second warp of only 16 lanes; a block of 20 has one warp
///   of 20 lanes. Warp collectives must name only the lanes that exist.
/// - **Result:** each launcher overwrites `*result` itself (the tests fill it
///   with garbage first); n = 0 gives +0.0.
/// - **Rounding:** the order of the additions is not fixed, so the result may
///   differ from the CPU's in the last bits; the tests accept
///   `n * eps * sum|x|` (eps = 2^-52). Values whose every partial sum is
///   exact in a double (small integers) must give the exact sum.
/// - **NaN and infinities** propagate as in any sum (NaN in, NaN out).
#pragma once

#include <course/launch_shape.hpp>

namespace lesson05 {

/// @brief Chooses the launch shape for launch_sum on the current device.
///
/// The grid is sized for the hardware, not the data: a few blocks per
/// streaming multiprocessor (query `cudaDevAttrMultiProcessorCount`), so each
/// thread loops over many elements and the grid issues few atomics; never
/// more blocks than the data can use (`ceil(n / threads_per_block)`), and at
/// least one.
///
/// @param n number of elements that will be summed (may be 0).
/// @return a valid shape: blocks >= 1, 1 <= threads_per_block <= 1024. For
///         n = 2^22 it launches at least one block per SM and fewer threads
///         than elements.
course::LaunchShape sum_launch_shape(int n);

/// @brief Sums `values[0..n)` into `*result`: a grid-stride loop in each
/// thread, a `__shfl_down_sync` reduction in each warp, the warps' partial
/// sums through shared memory, a last warp reduction, and one atomic
/// addition per block.
///
/// Sets `*result` to 0 itself, launches with exactly `shape`, checks the
/// launches and returns without synchronising. Every shape allowed above
/// gives the sum, up to rounding.
///
/// @param shape  the launch configuration (blocks >= 1; 1 <= threads_per_block <= 1024, any value).
/// @param n      number of elements; 0 is valid and gives +0.0.
/// @param values device pointer to n doubles (not modified).
/// @param result device pointer to one double, overwritten with the sum.
void launch_sum(course::LaunchShape shape, int n, const double* values, double* result);

/// @brief Adds every element of `values[0..n)` to `*result` with **your**
/// `atomicAdd` for double built from `atomicCAS`: one call per element, no
/// reduction first, so every thread of the grid contends for one address.
///
/// This launcher exists to test the compare-and-swap loop under contention.
/// Sets `*result` to 0 itself, launches with exactly `shape` (a grid-stride
/// loop: any shape covers every element once), checks the launches and
/// returns without synchronising.
///
/// @param shape  the launch configuration (blocks >= 1; 1 <= threads_per_block <= 1024).
/// @param n      number of elements; 0 is valid and gives +0.0.
/// @param values device pointer to n doubles (not modified).
/// @param result device pointer to one double, overwritten with the sum.
void launch_cas_atomic_add_each(course::LaunchShape shape, int n, const double* values, double* result);

/// @brief The same as launch_cas_atomic_add_each, with the hardware's
/// `atomicAdd(double*, double)` (compute capability 6.0 and later) instead of
/// the CAS loop: the yardstick the tests hold your loop against. Given
/// complete in the starter.
///
/// @param shape  the launch configuration (blocks >= 1; 1 <= threads_per_block <= 1024).
/// @param n      number of elements; 0 is valid and gives +0.0.
/// @param values device pointer to n doubles (not modified).
/// @param result device pointer to one double, overwritten with the sum.
void launch_native_atomic_add_each(course::LaunchShape shape, int n, const double* values, double* result);

}  // namespace lesson05
