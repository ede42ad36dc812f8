/// @file cpu_reference.hpp
/// @brief Lesson 01's CPU reference: SAXPY as a plain loop.
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

namespace lesson01::reference {

/// @brief Returns a*x[i] + y[i] for every i (x and y of equal length).
inline std::vector<float> saxpy(float a, const std::vector<float>& x, const std::vector<float>& y) {
    std::vector<float> out(y.size());
    for (std::size_t i = 0; i < y.size(); ++i) out[i] = a * x[i] + y[i];
    return out;
}

/// @brief Whether `got` is an acceptable SAXPY result where the CPU gave `expected`.
///
/// A GPU may contract a*x + y into one fused multiply-add, which skips the
/// rounding of a*x; the two results then differ by at most one rounding of
/// each term, so the tolerance is 2^-22 * (|a*x| + |y|), far below any
/// mistake a kernel can make.
inline bool close_enough(float expected, float got, float a, float x, float y) {
    const double bound = std::ldexp(1.0, -22) * (std::fabs(static_cast<double>(a) * x) + std::fabs(y));
    return std::fabs(static_cast<double>(expected) - got) <= bound;
}

}  // namespace lesson01::reference
