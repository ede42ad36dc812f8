/// @file cpu_reference.hpp
/// @brief Lesson 12's CPU reference: the same results with the standard library.
///
/// Every operation of the lesson has one exact answer (the sorts break ties by
/// value, the counts are integers), except scale_and_offset(), where a GPU may
/// fuse `a * x + b` into one fma: its check allows that one rounding.
#pragma once

#include <thrust_algorithms.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>
#include <vector>

namespace lesson12::reference {

/// @brief `a * x + b` for every x, rounded after the multiply and after the add.
inline std::vector<float> scale_and_offset(const std::vector<float>& values, float a, float b) {
    std::vector<float> out(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) {
        const float product = a * values[i];
        out[i] = product + b;
    }
    return out;
}

/// @brief The band of a score, or kScoreBands (no band) for scores outside [0, 100] and NaN.
inline unsigned score_band(float score) {
    if (!(score >= 0.0f && score <= 100.0f)) return kScoreBands;
    return std::min(static_cast<unsigned>(score / 10.0f), kScoreBands - 1);
}

/// @brief The kScoreBands counts of score_band() over `scores`.
inline std::vector<unsigned> score_band_histogram(const std::vector<float>& scores) {
    std::vector<unsigned> bands(kScoreBands, 0);
    for (const float s : scores) {
        const unsigned band = score_band(s);
        if (band < kScoreBands) ++bands[band];
    }
    return bands;
}

/// @brief The (key, value) pairs of two arrays, zipped on the host.
inline std::vector<std::pair<int, int>> zip(const std::vector<int>& keys, const std::vector<int>& values) {
    std::vector<std::pair<int, int>> pairs(keys.size());
    for (std::size_t i = 0; i < keys.size(); ++i) pairs[i] = {keys[i], values[i]};
    return pairs;
}

/// @brief Pairs ascending by key, then by value (std::pair's own order).
inline std::vector<std::pair<int, int>> sorted_ascending(const std::vector<int>& keys, const std::vector<int>& values) {
    std::vector<std::pair<int, int>> pairs = zip(keys, values);
    std::sort(pairs.begin(), pairs.end());
    return pairs;
}

/// @brief Pairs descending by key, equal keys ascending by value.
inline std::vector<std::pair<int, int>> sorted_descending_by_key(const std::vector<int>& keys,
                                                                  const std::vector<int>& values) {
    std::vector<std::pair<int, int>> pairs = zip(keys, values);
    std::sort(pairs.begin(), pairs.end(), [](const std::pair<int, int>& l, const std::pair<int, int>& r) {
        return l.first != r.first ? l.first > r.first : l.second < r.second;
    });
    return pairs;
}

}  // namespace lesson12::reference
