/// @file cpu_reference.hpp
/// @brief Lesson @NN@'s CPU reference.
#pragma once

#include <vector>

namespace lesson@NN@::reference {

/// @brief a * x[i] for every i: a float product, the same on the CPU and the GPU.
inline std::vector<float> scale(const std::vector<float>& x, float a) {
    std::vector<float> y(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) y[i] = a * x[i];
    return y;
}

}  // namespace lesson@NN@::reference
