// The emulator's error state, owned by errors.cpp: the per-host-thread last
// error and the sticky fault of the device. At the bottom of the runtime:
// errors.cpp calls into no other file of it.
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

}  // namespace course_emu::detail
