/// @file atomics.hpp
/// @brief CUDA's atomic functions for the emulator (being written).
#pragma once

#include <course_emu/scheduling.hpp>
