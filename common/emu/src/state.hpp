// Internal state shared by the emulator's translation units.
#pragma once

#include <cuda_runtime.h>

#include <string>

namespace course_emu::detail {

/// Makes `error` the calling host thread's last error (if not success) and returns it.
cudaError_t record(cudaError_t error);

/// The sticky error left by a faulted kernel, or cudaSuccess.
cudaError_t sticky_error();

/// Marks the device faulted: every later call returns `error` until cudaDeviceReset.
void set_sticky_fault(cudaError_t error, std::string report);

/// Clears the sticky fault and its report (cudaDeviceReset).
void clear_sticky_fault();

/// Returns the sticky error if there is one, else `error` recorded as the last error.
inline cudaError_t api_result(cudaError_t error) {
    const cudaError_t sticky = sticky_error();
    return record(sticky != cudaSuccess ? sticky : error);
}

/// The emulated device's properties (name, SM count, limits).
const cudaDeviceProp& device_properties();

/// Number of host worker threads that run blocks in parallel.
unsigned worker_count();

}  // namespace course_emu::detail
