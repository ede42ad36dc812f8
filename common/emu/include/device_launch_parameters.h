/// @file device_launch_parameters.h
/// @brief Emulator stand-in for CUDA's header of the same name: the built-in variables.
#pragma once
#include <course_emu/thread_context.hpp>
