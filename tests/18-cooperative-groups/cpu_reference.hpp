/// @file cpu_reference.hpp
/// @brief Lesson 18 CPU reference: tile sums, label counts, a sum, and
/// Jacobi sweeps for the 1D Poisson problem, written the plain way.
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

namespace lesson18::reference {

/// @brief out[t] = sum of in[t*tile .. min(n, (t+1)*tile)).
inline std::vector<int> tile_sums(const std::vector<int>& in, unsigned tile) {
    std::vector<int> out((in.size() + tile - 1) / tile, 0);
    for (std::size_t i = 0; i < in.size(); ++i) out[i / tile] += in[i];
    return out;
}

/// @brief counts[k] = how many labels equal k.
inline std::vector<int> count_labels(const std::vector<int>& labels, int num_labels) {
    std::vector<int> counts(static_cast<std::size_t>(num_labels), 0);
    for (const int l : labels) ++counts[static_cast<std::size_t>(l)];
    return counts;
}

/// @brief The sum of the values (the tests keep it far from int's limits).
inline int sum(const std::vector<int>& in) {
    long long s = 0;
    for (const int v : in) s += v;
    return static_cast<int>(s);
}

/// @brief `iterations` Jacobi sweeps of -u'' = f with fixed end points:
/// v[i] = 0.5f * (u[i-1] + u[i+1] + h2 * f[i]) for 0 < i < n-1, in float, as the contract says.
inline std::vector<float> jacobi(std::vector<float> u, const std::vector<float>& f, int iterations, float h2) {
    const std::size_t n = u.size();
    if (n < 3) return u;
    std::vector<float> v = u;
    for (int k = 0; k < iterations; ++k) {
        for (std::size_t i = 1; i + 1 < n; ++i) v[i] = 0.5f * (u[i - 1] + u[i + 1] + h2 * f[i]);
        u.swap(v);
    }
    return u;
}

/// @brief The tolerance of one Jacobi result: each sweep averages, so the
/// rounding errors of the sweeps (a GPU may fuse h2 * f[i] with the add) do
/// not grow; they add up to at most a few ulps of the largest value per sweep.
inline float jacobi_tolerance(const std::vector<float>& expected, const std::vector<float>& f, int iterations,
                              float h2) {
    float largest = 0.0f;
    for (const float v : expected) largest = std::fmax(largest, std::fabs(v));
    for (const float v : f) largest = std::fmax(largest, std::fabs(h2 * v));
    return 4.0f * static_cast<float>(iterations + 1) * 1.2e-7f * (largest + 1e-30f);
}

}  // namespace lesson18::reference
