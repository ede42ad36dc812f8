/// @file cuda_check.hpp
/// @brief Checked CUDA runtime calls: one macro, used everywhere.
///
/// `COURSE_CUDA_CHECK(cudaMalloc(&p, bytes));` throws course::CudaError when
/// the call fails. The message names the call, the file and line, the
/// runtime's error name and text, a likely cause for the errors students meet
/// most, and on the emulator the fault report (kernel, block, thread, line).
/// Usable from `.cu` files (nvcc or the emulator) and from plain C++ tests.
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <stdexcept>
#include <string>

namespace course {

/// @brief A failed CUDA runtime call.
class CudaError : public std::runtime_error {
public:
    /// @brief Builds the error; `message` is the full, readable explanation.
    CudaError(cudaError_t code, const std::string& message) : std::runtime_error(message), code_(code) {}

    /// @brief The runtime's error code.
    cudaError_t code() const noexcept { return code_; }

private:
    cudaError_t code_;
};

/// @brief A sentence on what usually causes `code` in course exercises, or "".
inline const char* likely_cause(cudaError_t code) {
    switch (code) {
        case cudaErrorInvalidConfiguration:
            return "the launch configuration is invalid: blocks and threads per block must be at least 1, "
                   "and a block holds at most 1024 threads";
        case cudaErrorIllegalAddress:
            return "a kernel read or wrote memory outside its allocations: check the bounds of your indices";
        case cudaErrorLaunchFailure:
            return "the kernel faulted while running";
        case cudaErrorInvalidValue:
            return "an argument is invalid (a null or host pointer where a device pointer belongs, or a "
                   "size larger than the allocation?)";
        case cudaErrorMemoryAllocation:
            return "the device is out of memory";
        case cudaErrorNoDevice:
            return "no CUDA GPU answers: use the emulator backend (COURSE_BACKEND=emu)";
        default:
            return "";
    }
}

/// @brief Throws CudaError unless `code` is cudaSuccess. Used through COURSE_CUDA_CHECK.
inline void check_cuda(cudaError_t code, const char* call, const char* file, int line) {
    if (code == cudaSuccess) return;
    std::string message = std::string(file) + ":" + std::to_string(line) + ": " + call + " failed: " +
                          cudaGetErrorName(code) + " (" + cudaGetErrorString(code) + ")";
    const std::string cause = likely_cause(code);
    if (!cause.empty()) message += "\n  likely cause: " + cause;
#ifdef __CUDACC_EMULATOR__
    const std::string fault = course_emu::last_fault_report();
    if (!fault.empty()) message += "\n  emulator: " + fault;
#endif
    throw CudaError(code, message);
}

/// @brief Reports a failed call where nothing may throw (a destructor's free):
/// prints it on stderr and goes on.
inline void report_cuda_failure(cudaError_t code, const char* call) noexcept {
    if (code == cudaSuccess) return;
    std::fprintf(stderr, "course: %s failed: %s (%s)\n", call, cudaGetErrorName(code), cudaGetErrorString(code));
}

}  // namespace course

/// @brief Checks a CUDA runtime call; throws course::CudaError with call, file, line and message.
#define COURSE_CUDA_CHECK(call) ::course::check_cuda((call), #call, __FILE__, __LINE__)

/// @brief Checks the last launch: the launch error, then (synchronising) any fault while it ran.
///
/// Use in tests and after launches whose errors must surface at once; a
/// launcher that should stay asynchronous checks only cudaGetLastError().
#define COURSE_LAUNCH_CHECK()                          \
    do {                                               \
        COURSE_CUDA_CHECK(cudaGetLastError());         \
        COURSE_CUDA_CHECK(cudaDeviceSynchronize());    \
    } while (0)
