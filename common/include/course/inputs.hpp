/// @file inputs.hpp
/// @brief Seeded input generators and the edge sizes every lesson tests.
///
/// Inputs are reproducible: the seed is fixed (so two runs of the grader agree)
/// unless `COURSE_SEED` is set, and every failure report prints it.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <random>
#include <string_view>
#include <type_traits>
#include <vector>

namespace course {

/// @brief The run's seed: `COURSE_SEED` from the environment, else 20261122.
inline std::uint64_t seed() {
    static const std::uint64_t value = [] {
        const char* env = std::getenv("COURSE_SEED");
        return env != nullptr ? std::strtoull(env, nullptr, 10) : std::uint64_t{20261122};
    }();
    return value;
}

/// @brief A generator seeded from seed() and a label, so that each input of a
/// test gets its own stream and adding an input does not change the others.
inline std::mt19937_64 rng(std::string_view label) {
    std::uint64_t h = 1469598103934665603ull;  // FNV-1a of the label
    for (const char c : label) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
    return std::mt19937_64(seed() ^ h);
}

/// @brief `n` values uniform in [lo, hi) for floating-point T, in [lo, hi] for integers.
template <class T>
std::vector<T> random_values(std::size_t n, T lo, T hi, std::string_view label) {
    using Distribution = std::conditional_t<std::is_floating_point_v<T>, std::uniform_real_distribution<T>,
                                            std::uniform_int_distribution<T>>;
    auto gen = rng(label);
    Distribution dist(lo, hi);
    std::vector<T> v(n);
    for (auto& x : v) x = dist(gen);
    return v;
}

/// @brief The sizes every lesson tests: empty, one element, around a warp and
/// a typical block (31, 32, 33, 255, 256, 257) and a prime (1009).
///
/// Lessons add "one larger than the launched thread count" themselves, since
/// only they know the launch shape.
inline const std::vector<int>& edge_sizes() {
    static const std::vector<int> sizes{0, 1, 31, 32, 33, 255, 256, 257, 1009};
    return sizes;
}

}  // namespace course
