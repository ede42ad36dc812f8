/// @file cpu_reference.hpp
/// @brief Lesson 09's CPU reference: histograms counted by a plain loop.
///
/// Counting is exact, so the GPU's bins must equal these bin for bin, in
/// any order of the atomics.
#pragma once

#include <histogram.hpp>

#include <cmath>
#include <cstddef>
#include <vector>

namespace lesson09::reference {

/// @brief `bins[k]` = how many keys equal k, for k < num_bins; other keys are dropped.
inline std::vector<unsigned> key_histogram(const std::vector<unsigned>& keys, unsigned num_bins) {
    std::vector<unsigned> bins(num_bins, 0);
    for (const unsigned k : keys) {
        if (k < num_bins) ++bins[k];
    }
    return bins;
}

/// @brief The 256-bin histogram of bytes.
inline std::vector<unsigned> byte_histogram(const std::vector<unsigned char>& data) {
    std::vector<unsigned> bins(256, 0);
    for (const unsigned char b : data) ++bins[b];
    return bins;
}

/// @brief The bin of a score: round-half-away-from-zero of a score in [0, 100],
/// or kScoreBins (no bin) for scores outside it, infinities and NaN.
inline unsigned score_bin(float score) {
    if (!(score >= 0.0f && score <= 100.0f)) return kScoreBins;
    return static_cast<unsigned>(std::round(score));
}

/// @brief The kScoreBins-bin histogram of scores (see score_bin()).
inline std::vector<unsigned> score_histogram(const std::vector<float>& scores) {
    std::vector<unsigned> bins(kScoreBins, 0);
    for (const float s : scores) {
        const unsigned bin = score_bin(s);
        if (bin < kScoreBins) ++bins[bin];
    }
    return bins;
}

}  // namespace lesson09::reference
