// Lesson 15's CPU references: exclusive scans, segment by segment or whole,
// exact for ints (wrapping as the GPU's adds do) and compensated for floats.
#pragma once

#include <course/accurate_sum.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace lesson15_reference {

/// Exclusive scan of each run of `segment` consecutive elements (the whole
/// array when segment >= in.size()), with two's-complement wrap-around.
inline std::vector<int> exclusive_scan(const std::vector<int>& in, std::size_t segment) {
    std::vector<int> out(in.size());
    std::uint32_t running = 0;
    for (std::size_t i = 0; i < in.size(); ++i) {
        if (i % segment == 0) running = 0;
        out[i] = static_cast<int>(running);
        running += static_cast<std::uint32_t>(in[i]);
    }
    return out;
}

/// The exact exclusive prefix sums of floats, and the scale of their rounding error.
struct FloatPrefixes {
    std::vector<long double> sum;        ///< sum[i]: in[0] + ... + in[i - 1], compensated (Neumaier).
    std::vector<long double> magnitude;  ///< |in[0]| + ... + |in[i - 1]|.
};

inline FloatPrefixes exclusive_scan_accurate(const std::vector<float>& in) {
    FloatPrefixes r{std::vector<long double>(in.size()), std::vector<long double>(in.size())};
    long double sum = 0, compensation = 0, magnitude = 0;
    for (std::size_t i = 0; i < in.size(); ++i) {
        r.sum[i] = sum + compensation;
        r.magnitude[i] = magnitude;
        const long double x = in[i];
        const long double t = sum + x;
        compensation += std::fabs(sum) >= std::fabs(x) ? (sum - t) + x : (x - t) + sum;
        sum = t;
        magnitude += std::fabs(x);
    }
    return r;
}

/// The error a float scan of n elements may make at an element whose
/// prefix has magnitude `magnitude`: (64 + n / 128) float roundings of it.
/// Any parallel order of additions stays within it: the longest chain of
/// additions behind one prefix has, besides a few dozen steps inside a
/// tile, one step per tile (at least kMinTileItems = 256 elements each).
inline long double float_scan_tolerance(std::size_t n, long double magnitude) {
    const long double unit = std::ldexp(1.0L, -24);  // float's unit roundoff
    return (64.0L + static_cast<long double>(n) / 128.0L) * unit * magnitude;
}

}  // namespace lesson15_reference
