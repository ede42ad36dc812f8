/// @file cuda_runtime_api.h
/// @brief Emulator stand-in for CUDA's header of the same name.
#pragma once
#include <course_emu/runtime_api.hpp>
