/// @file cublas_check.hpp
/// @brief Checked cuBLAS calls, for benchmarks that compare with cuBLAS.
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
