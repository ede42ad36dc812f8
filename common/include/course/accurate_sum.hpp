/// @file accurate_sum.hpp
/// @brief The reference for the lessons' floating-point sums: a compensated
/// sum in long double, far more accurate than any GPU summation order.
#pragma once

#include <cmath>
#include <vector>

namespace course {

/// @brief A sum taken far more accurately than a plain double loop, with
/// what a lesson's tolerance needs.
struct AccurateSum {
    long double sum = 0;        ///< The sum, compensated: the value a GPU sum is compared with.
    long double magnitude = 0;  ///< sum |x|: the scale of the rounding error of any summation order.
    bool has_nan = false;       ///< A NaN, or +inf and -inf together: the answer is NaN.
};

/// @brief Neumaier's compensated summation of `values` (float or double) in
/// long double: the low-order part lost by every addition is kept and added
/// back at the end, so the result is correct far below a double's last bit
/// for the course's inputs. A lesson derives its tolerance from n and
/// AccurateSum::magnitude (n * eps * sum|x|) and states it in its text.
template <class T>
AccurateSum accurate_sum(const std::vector<T>& values) {
    AccurateSum r;
    long double compensation = 0;
    bool plus_inf = false, minus_inf = false;
    for (const T value : values) {
        const long double x = value;
        if (std::isnan(x)) r.has_nan = true;
        if (std::isinf(x)) (x > 0 ? plus_inf : minus_inf) = true;
        const long double t = r.sum + x;
        // The part lost by the addition, from whichever operand was larger.
        compensation += std::fabs(r.sum) >= std::fabs(x) ? (r.sum - t) + x : (x - t) + r.sum;
        r.sum = t;
        r.magnitude += std::fabs(x);
    }
    r.has_nan = r.has_nan || (plus_inf && minus_inf);
    if (std::isfinite(r.sum)) r.sum += compensation;
    return r;
}

}  // namespace course
