/// @file sync.hpp
/// @brief Block barriers and warp collectives: the points where emulated threads meet.
#pragma once

#include <course_emu/launch.hpp>

namespace course_emu {
[[noreturn]] void barrier_not_supported(const char* file, int line);
}

// Macros rather than functions so that a report names the student's line.
#define __syncthreads() ::course_emu::barrier_not_supported(__FILE__, __LINE__)
