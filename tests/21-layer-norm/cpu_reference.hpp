// Lesson 21's CPU reference: layer norm in double precision, the tolerance a
// float implementation must meet, and IEEE half conversions on the host (so
// the tests need nothing of cuda_fp16.h but the 2-byte __half type).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace lesson21_reference {

/// The float's unit roundoff, 2^-24.
inline const double kUnit = std::ldexp(1.0, -24);

/// The relative error budget of a row of n values: (32 + n / 32) float
/// roundings. A parallel merge of the statistics makes a few dozen roundings
/// on the way to each mean and variance; the n / 32 term leaves room for a
/// slower correct version that runs long sequential loops (a thread per
/// row, Welford value by value), whose error can grow with the row.
inline double budget(std::size_t n) { return (32.0 + static_cast<double>(n) / 32.0) * kUnit; }

/// One row's exact statistics and the bounds a float computation must meet.
struct RowExpected {
    double mean = 0;      ///< the exact mean of the row's values
    double rstd = 0;      ///< the exact 1 / sqrt(var + eps), var = M2 / n
    double mean_tol = 0;  ///< |mean - computed| allowed: budget * max |x| of the row
    double rstd_tol = 0;  ///< allowed: budget * rstd, and the mean's error seen through the variance
};

/// What the tests expect: y exactly (in double), the tolerance of every y,
/// and each row's statistics.
struct Expected {
    std::vector<double> y;
    std::vector<double> y_tol;
    std::vector<RowExpected> rows;
};

/// Layer norm of `x` (rows x cols, row-major) in double precision. The
/// tolerance of y(r, c) adds up what float arithmetic may get wrong:
/// - the mean's error, scaled by rstd: budget * max|x| * rstd (for a row of
///   10000 +- 1 this is the big term: x itself is only known to about 5e-4);
/// - rstd's relative error times |z|, z = (x - mean) * rstd, and the last
///   roundings of the product and the sum: budget * (|z| + 1);
/// both multiplied by |gamma|, plus budget * |beta| for the bias. For a half
/// output, the rounding to half comes on top (2^-11 of |y|, and 2^-25 below
/// half's normal range).
inline Expected layer_norm(const std::vector<float>& x, const std::vector<float>& gamma,
                           const std::vector<float>& beta, std::size_t rows, std::size_t cols, float eps,
                           bool half_output) {
    Expected e;
    e.y.resize(rows * cols);
    e.y_tol.resize(rows * cols);
    e.rows.resize(rows);
    const double b = budget(cols);
    for (std::size_t r = 0; r < rows; ++r) {
        const float* row = x.data() + r * cols;
        double sum = 0, largest = 0;
        for (std::size_t c = 0; c < cols; ++c) {
            sum += row[c];
            largest = std::max(largest, std::fabs(static_cast<double>(row[c])));
        }
        const double mean = sum / static_cast<double>(cols);
        double m2 = 0;
        for (std::size_t c = 0; c < cols; ++c) m2 += (row[c] - mean) * (row[c] - mean);
        const double var = m2 / static_cast<double>(cols);
        const double rstd = 1.0 / std::sqrt(var + static_cast<double>(eps));
        // A mean off by d changes the variance by about 2 * d * (spread) + d^2,
        // which moves rstd by rstd^3 / 2 of that: small next to the mean's own
        // effect on y, but part of rstd's bound.
        const double mean_tol = b * largest;
        const double spread = std::sqrt(var);
        const double var_tol = b * var + 2.0 * mean_tol * spread + mean_tol * mean_tol;
        e.rows[r] = {mean, rstd, mean_tol, b * rstd + 0.5 * rstd * rstd * rstd * var_tol};
        for (std::size_t c = 0; c < cols; ++c) {
            const double z = (row[c] - mean) * rstd;
            const double y = z * gamma[c] + beta[c];
            double tol = std::fabs(static_cast<double>(gamma[c])) * (mean_tol * rstd + b * (std::fabs(z) + 1.0) +
                                                                     std::fabs(z) * var_tol * rstd * rstd) +
                         b * std::fabs(static_cast<double>(beta[c]));
            if (half_output) tol += std::ldexp(std::fabs(y), -11) + std::ldexp(1.0, -25);
            e.y[r * cols + c] = y;
            e.y_tol[r * cols + c] = tol;
        }
    }
    return e;
}

/// The IEEE binary16 bits of float `f`, rounded to nearest even (what
/// __float2half_rn does): overflow to infinity, subnormals, NaN kept NaN.
inline std::uint16_t half_bits(float f) {
    std::uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    const std::uint16_t sign = static_cast<std::uint16_t>((u >> 16) & 0x8000u);
    const std::uint32_t magnitude = u & 0x7fffffffu;
    if (magnitude > 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7e00u);  // NaN
    if (magnitude >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // >= 65520: infinity
    if (magnitude < 0x38800000u) {  // below 2^-14: a half subnormal (or 0), in units of 2^-24
        const double scaled = std::ldexp(static_cast<double>(std::fabs(f)), 24);
        return static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(std::nearbyint(scaled)));
    }
    // Normal: drop 13 of the 23 fraction bits, rounding to nearest even.
    const std::uint32_t rebiased = magnitude - (112u << 23);  // exponent bias 127 -> 15
    std::uint32_t h = rebiased >> 13;
    const std::uint32_t rest = rebiased & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u) != 0)) ++h;  // may carry into the exponent: still right
    return static_cast<std::uint16_t>(sign | h);
}

/// The float value of IEEE binary16 bits (exact: every half is a float).
inline float half_value(std::uint16_t h) {
    const int exponent = (h >> 10) & 0x1f;
    const int fraction = h & 0x3ff;
    double v;
    if (exponent == 0) {
        v = std::ldexp(static_cast<double>(fraction), -24);
    } else if (exponent == 31) {
        v = fraction != 0 ? NAN : INFINITY;
    } else {
        v = std::ldexp(static_cast<double>(fraction + 1024), exponent - 25);
    }
    return static_cast<float>((h & 0x8000u) != 0 ? -v : v);
}

}  // namespace lesson21_reference
