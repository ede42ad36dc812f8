/// @file cpu_reference.hpp
/// @brief Lesson 10's CPU reference: the sum of the floats, far more accurate
/// than any float summation, the tolerance a float tree sum must meet, and
/// the number of barriers a thread of the tree passes.
///
/// The tolerance. A sum of n numbers accumulated in float, in any order
/// (per-thread strides, then a tree), is within about (n - 1) * u * sum(|x|)
/// of the exact sum, u = 2^-24 being float's unit roundoff (Higham,
/// *Accuracy and Stability of Numerical Algorithms*, section 4.2). The tests
/// allow n * 2^-24 * sum(|x|). The reference is course::accurate_sum
/// (compensated, in long double), exact for this purpose.
#pragma once

#include <course/accurate_sum.hpp>

#include <cmath>
#include <cstddef>
#include <vector>

namespace lesson10::reference {

/// @brief The exact sum of `values` and the sum of their magnitudes.
inline course::AccurateSum sum(const std::vector<float>& values) { return course::accurate_sum(values); }

/// @brief How far a float-accumulated sum of n numbers may be from the exact
/// sum: n * 2^-24 * sum(|x|). 0 for n <= 1: adding one number to 0 is exact.
inline long double tolerance(std::size_t n, long double sum_of_abs) {
    if (n <= 1) return 0;
    return static_cast<long double>(n) * std::ldexp(1.0L, -24) * sum_of_abs;
}

/// @brief Barriers every thread of a tree sum over a block of `threads`
/// passes: one after the first stage, one per level of a tree as wide as
/// the power of two at or above `threads`.
inline unsigned tree_barriers(unsigned threads) {
    unsigned barriers = 1;
    for (unsigned width = 1; width < threads; width *= 2) ++barriers;
    return barriers;
}

}  // namespace lesson10::reference
