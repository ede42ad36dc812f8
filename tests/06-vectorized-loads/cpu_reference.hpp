/// @file cpu_reference.hpp
/// @brief Lesson 06's CPU reference: sums in extended precision with
/// compensation, and the tolerance a GPU sum must meet.
#pragma once

#include <course/accurate_sum.hpp>

#include <cmath>
#include <cstddef>
#include <vector>

namespace lesson06::reference {

/// @brief A reference sum: the (nearly exact) sum and the sum of magnitudes
/// that bounds the rounding error of any order of additions.
struct Sum {
    long double value = 0;      ///< Sum of the elements, compensated, in long double.
    long double magnitude = 0;  ///< Sum of |element|.
};

/// @brief Sums `values` (doubles or floats) with Neumaier's compensated
/// summation in long double (course::accurate_sum): its error is far below
/// the tolerance below.
template <class T>
Sum sum(const std::vector<T>& values) {
    const course::AccurateSum r = course::accurate_sum(values);
    return {r.sum, r.magnitude};
}

/// @brief How far a GPU sum of n elements may be from the reference:
/// (n + 1) * 2^-53 * sum |x|.
///
/// Whatever the order of the n - 1 double additions (per thread, across the
/// warp, across blocks by atomics), each rounds with a relative error of at
/// most 2^-53, and the accumulated error is bounded by about (n - 1) * 2^-53
/// * sum |x| (Higham, "Accuracy and Stability of Numerical Algorithms",
/// section 4.2); the extra 2 covers the reference's own error and the float
/// to double conversion, which is exact. With the tests' inputs a single
/// element skipped or counted twice is many times larger than this.
inline long double tolerance(std::size_t n, long double magnitude) {
    return static_cast<long double>(n + 1) * std::ldexp(1.0L, -53) * magnitude;
}

/// @brief Whether `got` is an acceptable GPU sum where the reference is `expected`.
inline bool close_enough(const Sum& expected, std::size_t n, double got) {
    return std::fabs(static_cast<long double>(got) - expected.value) <= tolerance(n, expected.magnitude);
}

}  // namespace lesson06::reference
