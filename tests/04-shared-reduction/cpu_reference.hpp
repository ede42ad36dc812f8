/// @file cpu_reference.hpp
/// @brief Lesson 04's CPU reference: exact integer sums, and floating-point
/// sums in higher precision with the tolerance a GPU sum must meet.
///
/// The tolerance. A sum of n numbers in floating point, added in any order
/// (any tree: per thread, per block, by atomics), is within
/// (n - 1) * u / (1 - (n - 1) * u) * sum(|x|) of the exact sum, u being the
/// unit roundoff of the accumulator (Higham, *Accuracy and Stability of
/// Numerical Algorithms*, section 4.2). For the double accumulator of
/// launch_sum (u = 2^-53) and n <= 2^26 that is at most n * 2^-53 * sum(|x|),
/// the bound the tests use. The reference itself is computed in long double
/// with compensated (Kahan-Babuska-Neumaier) summation, whose error is far
/// below that bound, so it counts as exact here.
#pragma once

#include <course/accurate_sum.hpp>

#include <cmath>
#include <cstddef>
#include <vector>

namespace lesson04::reference {

/// @brief The exact sum of 32-bit ints (|sum| < n * 2^31 fits in 64 bits).
inline long long sum(const std::vector<int>& values) {
    long long total = 0;
    for (const int v : values) total += v;
    return total;
}

/// @brief A floating-point sum computed in long double, compensated, with the
/// sum of magnitudes that the tolerance is proportional to.
struct ExactSum {
    long double sum = 0;            ///< The sum, to far better than double precision.
    long double sum_of_abs = 0;     ///< sum(|x|): the scale of the rounding errors of any summation order.
};

/// @brief The sum of `values` (float or double) in long double, with
/// Neumaier's compensation (course::accurate_sum), and the sum of their magnitudes.
template <class T>
ExactSum exact_sum(const std::vector<T>& values) {
    const course::AccurateSum r = course::accurate_sum(values);
    return {r.sum, r.magnitude};
}

/// @brief How far a double-accumulated sum of n numbers may be from the exact
/// sum: n * 2^-53 * sum(|x|) (see the file comment). 0 for n <= 1: adding one
/// number to 0 is exact.
inline long double tolerance(std::size_t n, long double sum_of_abs) {
    if (n <= 1) return 0;
    return static_cast<long double>(n) * std::ldexp(1.0L, -53) * sum_of_abs;
}

}  // namespace lesson04::reference
