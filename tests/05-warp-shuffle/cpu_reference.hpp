/// @file cpu_reference.hpp
/// @brief Lesson 05's CPU reference: the sum of doubles, taken with
/// compensated (Neumaier) summation in `long double`, and the tolerance a
/// GPU sum in any order must meet.
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

namespace lesson05::reference {

/// @brief The sum of `values` and the sum of their magnitudes, both far more
/// accurate than a plain double loop.
struct ExactSum {
    long double sum = 0;        ///< Compensated sum: the value a GPU sum is compared with.
    long double magnitude = 0;  ///< sum |x|: the scale of the rounding error of any summation order.
    bool has_nan = false;       ///< A NaN, or +inf and -inf together: the answer is NaN.
};

/// @brief Neumaier's compensated sum in long double: the running error of
/// every addition is kept and added back at the end, so the result is
/// correct to far below a double's last bit for the course's inputs.
inline ExactSum sum(const std::vector<double>& values) {
    ExactSum r;
    long double compensation = 0;
    bool plus_inf = false, minus_inf = false;
    for (const double x : values) {
        if (std::isnan(x)) r.has_nan = true;
        if (std::isinf(x)) (x > 0 ? plus_inf : minus_inf) = true;
        const long double v = x;
        const long double t = r.sum + v;
        compensation += std::fabs(r.sum) >= std::fabs(v) ? (r.sum - t) + v : (v - t) + r.sum;
        r.sum = t;
        r.magnitude += std::fabs(v);
    }
    r.has_nan = r.has_nan || (plus_inf && minus_inf);
    if (std::isfinite(r.sum)) r.sum += compensation;
    return r;
}

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
