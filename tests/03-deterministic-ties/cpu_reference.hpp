/// @file cpu_reference.hpp
/// @brief Lesson 03's CPU reference: argmin and argmax as plain loops, with
/// the contract's rules (ties to the lowest index, -0 == +0, NaN ignored).
#pragma once

#include <argmin_ties.hpp>

#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

namespace lesson03::reference {

/// @brief The first element (lowest index) that no other element beats by
/// `better`, skipping NaN; {start, -1} when there is none.
///
/// Only a strictly better value replaces the answer, so among equal values
/// the first one seen, the lowest index, stays: this is how a CPU loop (and
/// std::min_element) breaks ties without trying.
template <class Better>
ArgResult first_extremum(const std::vector<float>& values, float start, Better better) {
    ArgResult best{start, -1};
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (std::isnan(values[i])) continue;
        if (best.index < 0 || better(values[i], best.value)) best = {values[i], static_cast<int>(i)};
    }
    return best;
}

/// @brief Smallest value, lowest index among equals; {+inf, -1} for no candidate.
inline ArgResult argmin(const std::vector<float>& values) {
    return first_extremum(values, std::numeric_limits<float>::infinity(), [](float a, float b) { return a < b; });
}

/// @brief Largest value, lowest index among equals; {-inf, -1} for no candidate.
inline ArgResult argmax(const std::vector<float>& values) {
    return first_extremum(values, -std::numeric_limits<float>::infinity(), [](float a, float b) { return a > b; });
}

/// @brief How many elements hold exactly (as floats) the value `v`.
inline std::size_t count_equal(const std::vector<float>& values, float v) {
    std::size_t count = 0;
    for (const float x : values) count += x == v ? 1 : 0;
    return count;
}

}  // namespace lesson03::reference
