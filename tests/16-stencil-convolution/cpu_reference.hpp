/// @file cpu_reference.hpp
/// @brief Lesson 16's CPU reference: the 2D correlation of a row-major image
/// with a square filter, in double precision, with each pixel's error bound,
/// and the results of typical mistakes, which the tests recognise in a wrong
/// output to name the likely cause.
#pragma once

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace lesson16::reference {

/// @brief The exact result (in double) of every output pixel and its error bound.
struct Filtered {
    std::vector<double> value;  ///< out(r, c), summed in double from the float inputs and weights
    std::vector<double> bound;  ///< n * FLT_EPSILON * sum |w * in|: how far a float result may be from value
};

/// @brief How the reference reads its inputs; the tests also ask for the
/// outputs of typical mistakes with it.
struct Options {
    bool clamp = true;     ///< Boundary::clamp (else zero)
    bool flipped = false;  ///< weights taken in reverse order (a convolution, not the contract's correlation)
};

/// @brief in(r, c) with the boundary rule: 0 outside the image, or the nearest pixel.
inline float pixel(const std::vector<float>& in, std::int64_t r, std::int64_t c, std::int64_t rows,
                   std::int64_t cols, bool clamp) {
    if (clamp) {
        r = std::clamp<std::int64_t>(r, 0, rows - 1);
        c = std::clamp<std::int64_t>(c, 0, cols - 1);
    } else if (r < 0 || r >= rows || c < 0 || c >= cols) {
        return 0.0f;
    }
    return in[static_cast<std::size_t>(r * cols + c)];
}

/// @brief out(r, c) = sum over dy, dx in [-R, R] of w[(dy + R)(2R + 1) + dx + R] * in(r + dy, c + dx),
/// as the contract defines it (or with the filter flipped, see Options).
inline Filtered filter(const std::vector<float>& in, std::size_t rows, std::size_t cols,
                       const std::vector<float>& weights, int radius, Options options) {
    const auto h = static_cast<std::int64_t>(rows), w = static_cast<std::int64_t>(cols);
    const int width = 2 * radius + 1;
    const double n = static_cast<double>(width) * width;
    Filtered out{std::vector<double>(rows * cols), std::vector<double>(rows * cols)};
    for (std::int64_t r = 0; r < h; ++r) {
        for (std::int64_t c = 0; c < w; ++c) {
            double sum = 0.0, magnitude = 0.0;
            for (int dy = -radius; dy <= radius; ++dy) {
                for (int dx = -radius; dx <= radius; ++dx) {
                    int k = (dy + radius) * width + (dx + radius);
                    if (options.flipped) k = width * width - 1 - k;
                    const double term = static_cast<double>(weights[static_cast<std::size_t>(k)]) *
                                        pixel(in, r + dy, c + dx, h, w, options.clamp);
                    sum += term;
                    magnitude += std::fabs(term);
                }
            }
            const auto i = static_cast<std::size_t>(r * w + c);
            out.value[i] = sum;
            // Any order of n float products and sums, fused or not, lands within
            // n * eps * sum |terms| of the exact sum; the smallest normal float
            // covers underflow when every term is tiny.
            out.bound[i] = n * FLT_EPSILON * magnitude + FLT_MIN;
        }
    }
    return out;
}

/// @brief Whether `got` is within the bound of `expected` at every pixel
/// (a NaN never is).
inline bool within(const Filtered& expected, const std::vector<float>& got) {
    if (got.size() != expected.value.size()) return false;
    for (std::size_t i = 0; i < got.size(); ++i) {
        if (!(std::fabs(static_cast<double>(got[i]) - expected.value[i]) <= expected.bound[i])) return false;
    }
    return true;
}

}  // namespace lesson16::reference
