/// @file cuda_runtime.h
/// @brief Emulator stand-in for CUDA's `cuda_runtime.h`: everything a `.cu` file sees.
///
/// The translator puts `#include <cuda_runtime.h>` at the top of every
/// translated file, as nvcc does implicitly.
#pragma once
#include <course_emu/qualifiers.hpp>
#include <course_emu/types.hpp>
#include <course_emu/runtime_api.hpp>
#include <course_emu/thread_context.hpp>
#include <course_emu/device_functions.hpp>
#include <course_emu/launch.hpp>
#include <course_emu/sync.hpp>
#include <course_emu/atomics.hpp>
#include <course_emu/memory_model.hpp>
#include <course_emu/cooperative_launch.hpp>
#include <course_emu/symbols.hpp>
#include <course_emu/static_shared.hpp>
