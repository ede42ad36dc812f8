/// @file cpu_reference.hpp
/// @brief Lesson 02's CPU reference: the smallest (largest) value of an array
/// and every index that holds it.
#pragma once

#include <cstddef>
#include <vector>

namespace lesson02::reference {

/// @brief The extreme value of an array and where it occurs.
struct Extremum {
    float value = 0.0f;                ///< The smallest (or largest) value.
    std::vector<int> indices;          ///< Every index holding it, ascending; empty for an empty array.
};

/// @brief The extreme value of `values` under `better` (a < b for the minimum)
/// and all its indices. Ties are kept, since lesson 02 accepts any of them.
template <class Better>
Extremum extremum(const std::vector<float>& values, Better better) {
    Extremum e;
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (e.indices.empty() || better(values[i], e.value)) {
            e.value = values[i];
            e.indices.assign(1, static_cast<int>(i));
        } else if (values[i] == e.value) {
            e.indices.push_back(static_cast<int>(i));
        }
    }
    return e;
}

/// @brief The minimum of `values` and every index holding it.
inline Extremum argmin(const std::vector<float>& values) {
    return extremum(values, [](float a, float b) { return a < b; });
}

/// @brief The maximum of `values` and every index holding it.
inline Extremum argmax(const std::vector<float>& values) {
    return extremum(values, [](float a, float b) { return a > b; });
}

}  // namespace lesson02::reference
