/// @file vector_types.h
/// @brief Emulator stand-in for CUDA's header of the same name.
#pragma once
#include <course_emu/types.hpp>
