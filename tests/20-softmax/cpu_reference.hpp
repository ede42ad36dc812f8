// Lesson 20's CPU reference: the softmax of each row in double precision,
// and the rounding bound a float softmax on the GPU is held to.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

namespace lesson20_reference {

/// The exact softmax of each row (rounded once, from double to float at
/// the end), the row maxima it subtracted, and -inf entries giving 0. A row
/// of -inf only gives zeros, as the contract says.
struct RowSoftmax {
    std::vector<double> value;    ///< value[r * cols + j]: the softmax in double.
    std::vector<double> row_max;  ///< The maximum of each row (-inf for a fully masked row).
};

inline RowSoftmax softmax_rows(const std::vector<float>& in, std::size_t rows, std::size_t cols) {
    RowSoftmax r{std::vector<double>(in.size(), 0.0), std::vector<double>(rows)};
    for (std::size_t row = 0; row < rows; ++row) {
        const float* x = in.data() + row * cols;
        double m = -std::numeric_limits<double>::infinity();
        for (std::size_t j = 0; j < cols; ++j) m = std::max(m, static_cast<double>(x[j]));
        r.row_max[row] = m;
        if (m == -std::numeric_limits<double>::infinity()) continue;  // fully masked: zeros
        // x - m is exact in double for floats (both have float's 24-bit
        // significands, and their exponents differ by less than 2^11).
        double sum = 0.0;
        for (std::size_t j = 0; j < cols; ++j) sum += std::exp(static_cast<double>(x[j]) - m);
        for (std::size_t j = 0; j < cols; ++j) {
            r.value[row * cols + j] = std::exp(static_cast<double>(x[j]) - m) / sum;
        }
    }
    return r;
}

/// float's unit roundoff, 2^-24.
inline constexpr double kUnit = 1.0 / 16777216.0;

/// The smallest normal float is 2^-126: a result below it may be flushed to
/// 0 (`__expf` does), so every output may be off by this much absolutely.
inline constexpr double kAbsolute = 1.0 / 4.2535295865117308e37;  // 2^-125

/// How far a float softmax may be from the exact `value` of an element
/// `distance` = |x - m| below its row's maximum, in a row of `cols`:
/// (64 + cols/16 + 8 * distance) roundings of the value, or 2^-125.
/// - 8 * distance: exp(x - m) in floats is off by up to about |x - m|
///   roundings relatively, from rounding x - m alone (and `__expf` adds
///   about 2.4 |x - m| more);
/// - 64 + cols/16: the sum of the row's terms, in any order, by threads
///   that each add up to cols/32 of them and rescale their sums as the
///   maximum grows; the division.
inline double tolerance(double value, double distance, std::size_t cols) {
    return (64.0 + static_cast<double>(cols) / 16.0 + 8.0 * distance) * kUnit * value + kAbsolute;
}

}  // namespace lesson20_reference
