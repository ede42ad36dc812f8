/// @file cpu_reference.hpp
/// @brief Lesson 05's CPU reference: the sum of doubles, taken with
/// compensated (Neumaier) summation in `long double`, and the tolerance a
/// GPU sum in any order must meet.
#pragma once

#include <course/accurate_sum.hpp>

#include <cmath>
#include <cstddef>
#include <vector>

namespace lesson05::reference {

/// @brief The sum of `values` and the sum of their magnitudes, both far more
/// accurate than a plain double loop (sum, magnitude, has_nan).
using ExactSum = course::AccurateSum;

/// @brief Neumaier's compensated sum in long double (course::accurate_sum):
/// the running error of every addition is kept and added back at the end,
/// so the result is correct to far below a double's last bit for the
/// course's inputs.
inline ExactSum sum(const std::vector<double>& values) { return course::accurate_sum(values); }

/// @brief The largest difference a correct GPU sum of n doubles may show:
/// `n * eps * sum|x|` with eps = 2^-52, the classical bound for adding n
/// numbers in any order in double precision (each of at most n - 1
/// additions errs by at most half an ulp of a partial sum, and no partial
/// sum exceeds sum|x|). It is 0 when every value is 0, and values whose
/// partial sums are all exact (small integers) must then match exactly.
inline long double tolerance(std::size_t n, long double magnitude) {
    return static_cast<long double>(n) * 0x1p-52L * magnitude;
}

}  // namespace lesson05::reference
