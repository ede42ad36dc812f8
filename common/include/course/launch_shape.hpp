/// @file launch_shape.hpp
/// @brief The launch configuration a lesson's launcher chooses, as plain data the tests can inspect.
#pragma once

#include <string>

namespace course {

/// @brief A one-dimensional launch configuration: `kernel<<<blocks, threads_per_block>>>`.
///
/// Launchers in the lessons return or take one of these so that the tests can
/// check the choice (is the grid sized from the SM count?) and can force a
/// different one (a single thread, `<<<1, 1>>>`, must give the same answer).
struct LaunchShape {
    unsigned blocks = 1;             ///< gridDim.x: the number of thread blocks.
    unsigned threads_per_block = 1;  ///< blockDim.x: threads in each block (1 to 1024).

    /// @brief Total number of threads the launch starts (blocks x threads_per_block).
    constexpr unsigned long long total_threads() const {
        return static_cast<unsigned long long>(blocks) * threads_per_block;
    }
};

/// @brief The shape as CUDA writes it, e.g. "<<<528, 256>>>", for messages and tables.
inline std::string describe(const LaunchShape& shape) {
    return "<<<" + std::to_string(shape.blocks) + ", " + std::to_string(shape.threads_per_block) + ">>>";
}

}  // namespace course
