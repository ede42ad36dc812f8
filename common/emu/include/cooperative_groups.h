/// @file cooperative_groups.h
/// @brief Emulator stand-in for CUDA's `<cooperative_groups.h>` (see course_emu/cooperative_groups.hpp).
#pragma once
#include <cuda_runtime.h>
#include <course_emu/cooperative_groups.hpp>
