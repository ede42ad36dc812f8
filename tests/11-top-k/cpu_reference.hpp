/// @file cpu_reference.hpp
/// @brief Lesson 11's CPU reference: the top k (value, index) pairs by
/// `std::partial_sort`, in the contract's order (larger value first, lower
/// index among equals, -0 == +0, NaN after every number).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace lesson11::reference {

/// @brief One element of the answer: its value and its index in the input.
struct Pair {
    float value;  ///< The element, bit for bit.
    int index;    ///< Its position in the input.
};

/// @brief True when `a` comes before `b` in the contract's order.
///
/// Written with float comparisons, not with the GPU's 64-bit keys, so that
/// the reference does not share a mistake with the kernel: `!=` and `>` on
/// floats already treat -0 and +0 as equal; NaN is tested for first.
inline bool ranks_before(const Pair& a, const Pair& b) {
    const bool a_nan = std::isnan(a.value);
    const bool b_nan = std::isnan(b.value);
    if (a_nan != b_nan) return b_nan;  // a number ranks before a NaN
    if (!a_nan && a.value != b.value) return a.value > b.value;
    return a.index < b.index;  // equal values (or two NaNs): the lower index first
}

/// @brief The first min(k, n) pairs of `values` in the contract's order.
inline std::vector<Pair> top_k(const std::vector<float>& values, int k) {
    std::vector<Pair> pairs(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) pairs[i] = {values[i], static_cast<int>(i)};
    const std::size_t m = std::min(values.size(), static_cast<std::size_t>(std::max(k, 0)));
    std::partial_sort(pairs.begin(), pairs.begin() + static_cast<std::ptrdiff_t>(m), pairs.end(), ranks_before);
    pairs.resize(m);
    return pairs;
}

}  // namespace lesson11::reference
