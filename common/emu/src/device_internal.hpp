// What device.cpp (the emulated device: its properties, its function
// attributes) offers the emulator's other files.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace course_emu::detail {

/// The emulated device's properties (name, SM count, limits).
const cudaDeviceProp& device_properties();

/// @brief The largest dynamic shared memory a launch may ask for, in bytes:
/// 48 KiB, or the largest cudaFuncAttributeMaxDynamicSharedMemorySize that
/// any cudaFuncSetAttribute call has set since the last cudaDeviceReset.
///
/// An approximation: CUDA keeps the attribute per kernel, but a translated
/// launch does not carry the kernel's address, so the emulator cannot tell
/// which kernel an attribute was set for. A launch over 48 KiB is accepted
/// once any kernel has opted in to as much; launch validation uses this.
std::size_t dynamic_shared_limit();

/// Forgets every cudaFuncSetAttribute (cudaDeviceReset destroys the context).
void reset_function_attributes();

}  // namespace course_emu::detail
