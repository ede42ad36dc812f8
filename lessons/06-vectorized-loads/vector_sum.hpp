/// @file vector_sum.hpp
/// @brief Lesson 06 contract: sums that read memory 16 bytes at a time
/// (`double2`, `float4`), for every size and every 8-byte (double) or 4-byte
/// (float) aligned start, and a sum of complex numbers.
///
/// You implement these functions in `starter/06-vectorized-loads/vector_sum.cu`.
/// The tests call them with device pointers and compare with a CPU sum in
/// higher precision (see `tests/06-vectorized-loads/cpu_reference.hpp`).
/// Lesson text: `lessons/06-vectorized-loads/README.md`.
///
/// The rules every function here follows:
/// - **Every element counts once**, whatever n is: odd n, n smaller than a
///   vector, n = 0 (the sum is then 0).
/// - **Misaligned input is handled.** `values` needs only the alignment of
///   its element type (8 bytes for double, 4 for float), not the 16 bytes a
///   vector load needs: the tests pass pointers one element past the start of
///   an allocation. Elements before the first 16-byte boundary, and those
///   after the last whole vector, are read one at a time.
/// - **Nothing outside `values[0..n)` is read**: not the element before the
///   first (a pointer rounded down to 16 bytes), not the one after the last.
/// - **Accuracy:** the result may differ from the exact sum by at most
///   (n + 1) * 2^-53 * sum of |values[i]| (per component for complex
///   numbers): any order of double additions stays within that bound. A NaN
///   or an infinity in the input gives NaN or an infinity, as a CPU loop does.
/// - **Launchers** initialise `*result` themselves (the tests fill it with
///   garbage first), launch with exactly the shape given, check the launch
///   and return without synchronising.
#pragma once

#include <course/launch_shape.hpp>

#include <cuComplex.h>

namespace lesson06 {

/// @brief Chooses the launch shape for the launchers below on the current device.
///
/// The grid is sized from the streaming multiprocessor (SM) count, a few
/// blocks per SM, so that each thread loops and keeps several loads in flight,
/// and never has more blocks than n elements can use (at least one block).
///
/// @param n number of elements that will be summed (may be 0).
/// @return a valid shape: blocks >= 1, threads_per_block a multiple of 32 from 32 to 1024.
course::LaunchShape sum_launch_shape(int n);

/// @brief Adds up `values[0..n)` with 16-byte `double2` loads, into `*result`.
///
/// Elements before the first 16-byte boundary (at most one) and the last
/// element of an odd remainder are read as scalars; every other pair is read
/// as one `double2`. One atomic add per block.
///
/// @param shape  the launch configuration (blocks >= 1; threads_per_block a power of two from 32 to 1024).
/// @param n      number of elements; 0 is valid and gives 0.
/// @param values device pointer to n doubles, aligned to 8 bytes (not necessarily 16); not modified.
/// @param result device pointer to one double, overwritten with the sum.
void launch_sum_doubles(course::LaunchShape shape, int n, const double* values, double* result);

/// @brief Adds up `values[0..n)` with 16-byte `float4` loads, in double precision, into `*result`.
///
/// Each float is converted to double before it is added (exactly), so the
/// accuracy rule is the double one above. Up to three elements before the
/// first 16-byte boundary and up to three after the last whole `float4` are
/// read as scalars. One atomic add per block.
///
/// @param shape  the launch configuration (blocks >= 1; threads_per_block a power of two from 32 to 1024).
/// @param n      number of elements; 0 is valid and gives 0.
/// @param values device pointer to n floats, aligned to 4 bytes (not necessarily 16); not modified.
/// @param result device pointer to one double, overwritten with the sum.
void launch_sum_floats(course::LaunchShape shape, int n, const float* values, double* result);

/// @brief Adds up the complex numbers `values[0..n)` into `*result` (real and
/// imaginary parts separately, each within the accuracy rule above).
///
/// A `cuDoubleComplex` is a `double2`: 16 bytes, aligned to 16, so every
/// element is already one vector load and there is no misaligned head. One
/// atomic add per block and component.
///
/// @param shape  the launch configuration (blocks >= 1; threads_per_block a power of two from 32 to 1024).
/// @param n      number of complex elements; 0 is valid and gives 0 + 0i.
/// @param values device pointer to n complex numbers; not modified.
/// @param result device pointer to one complex number, overwritten with the sum.
void launch_sum_complex(course::LaunchShape shape, int n, const cuDoubleComplex* values, cuDoubleComplex* result);

}  // namespace lesson06
