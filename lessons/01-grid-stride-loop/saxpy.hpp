/// @file saxpy.hpp
/// @brief Lesson 01 contract: SAXPY (`y = a*x + y`) written as a grid-stride loop.
///
/// You implement these functions in `starter/01-grid-stride-loop/saxpy.cu`.
/// The tests call them with device pointers and compare the result with a CPU
/// loop. See the lesson text, `lessons/01-grid-stride-loop/README.md`.
#pragma once

#include <course/launch_shape.hpp>

namespace lesson01 {

/// @brief Chooses the launch shape for `launch_saxpy` on the current device.
///
/// A grid-stride kernel is correct for any grid, so the grid is sized for the
/// hardware rather than for the data: a few blocks per streaming
/// multiprocessor (query `cudaDevAttrMultiProcessorCount`), never more blocks
/// than the data can use.
///
/// @param n number of elements that will be processed (may be 0).
/// @return a valid shape: 1 <= blocks, 1 <= threads_per_block <= 1024. For
///         large n (millions of elements) it must launch at least one block per
///         SM and fewer threads than elements, so each thread loops.
course::LaunchShape saxpy_launch_shape(int n);

/// @brief Computes `y[i] = a * x[i] + y[i]` for `0 <= i < n` on the device.
///
/// Launches the SAXPY kernel with exactly the given shape (the tests pass odd
/// shapes, including `<<<1, 1>>>`), checks the launch for errors and returns
/// without synchronising. Every shape must give the same result: each element
/// is updated exactly once, and memory at and beyond `y[n]` is never touched.
///
/// @param shape the launch configuration to use (blocks >= 1, 1 <= threads_per_block <= 1024).
/// @param n     number of elements; 0 is valid and changes nothing.
/// @param a     the scalar multiplier.
/// @param x     device pointer to n input floats.
/// @param y     device pointer to n floats, updated in place.
void launch_saxpy(course::LaunchShape shape, int n, float a, const float* x, float* y);

}  // namespace lesson01
