/// @file cublas_check.hpp
/// @brief Checked cuBLAS calls and an owned cuBLAS handle, for tests and
/// benchmarks that call cuBLAS (GPU backend only: the emulator has no cuBLAS).
#pragma once

#include <cublas_v2.h>

#include <stdexcept>
#include <string>

namespace course {

/// @brief Throws std::runtime_error unless `status` is CUBLAS_STATUS_SUCCESS. Used through COURSE_CUBLAS_CHECK.
inline void check_cublas(cublasStatus_t status, const char* call, const char* file, int line) {
    if (status == CUBLAS_STATUS_SUCCESS) return;
    throw std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + call +
                             " failed: " + cublasGetStatusName(status) + " (" + cublasGetStatusString(status) + ")");
}

}  // namespace course

/// @brief Checks a cuBLAS call; throws with the call, file, line and cuBLAS's message.
#define COURSE_CUBLAS_CHECK(call) ::course::check_cublas((call), #call, __FILE__, __LINE__)

namespace course {

/// @brief A cuBLAS handle created on construction and destroyed with the
/// object (RAII, move-only), for the current device, with cuBLAS's defaults
/// (legacy default stream, default math mode).
///
/// Creating a handle is slow (it sets up the library's state on the device),
/// so tests and benchmarks create one and pass it to every call.
class CublasHandle {
public:
    /// @brief Creates the handle; throws std::runtime_error if cuBLAS cannot start.
    CublasHandle() { COURSE_CUBLAS_CHECK(cublasCreate(&handle_)); }
    /// @brief Not copyable: one owner per handle.
    CublasHandle(const CublasHandle&) = delete;
    /// @brief Not copyable: one owner per handle.
    CublasHandle& operator=(const CublasHandle&) = delete;
    /// @brief Takes over `other`'s handle, leaving `other` empty.
    CublasHandle(CublasHandle&& other) noexcept : handle_(other.handle_) { other.handle_ = nullptr; }
    /// @brief Destroys this handle and takes over `other`'s, leaving `other` empty.
    CublasHandle& operator=(CublasHandle&& other) noexcept {
        if (this != &other) {
            release();
            handle_ = other.handle_;
            other.handle_ = nullptr;
        }
        return *this;
    }
    /// @brief Destroys the handle (a failure is ignored: a destructor cannot throw).
    ~CublasHandle() { release(); }

    /// @brief The handle, for cuBLAS calls.
    cublasHandle_t get() const noexcept { return handle_; }

private:
    void release() noexcept {
        if (handle_ != nullptr) (void)cublasDestroy(handle_);
        handle_ = nullptr;
    }

    cublasHandle_t handle_ = nullptr;
};

}  // namespace course

