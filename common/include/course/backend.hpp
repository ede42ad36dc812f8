/// @file backend.hpp
/// @brief Which backend the tests run on, and the device's name for reports.
#pragma once

#include <course/cuda_check.hpp>

#include <string>

namespace course {

/// @brief True when built for the CPU emulator, false on a real GPU.
#ifdef __CUDACC_EMULATOR__
inline constexpr bool kEmulator = true;
#else
inline constexpr bool kEmulator = false;
#endif

/// @brief "emulator" or "cuda".
inline const char* backend_name() { return kEmulator ? "emulator" : "cuda"; }

/// @brief The current device's name, e.g. "NVIDIA H100 80GB HBM3".
inline std::string device_name() {
    int device = 0;
    cudaDeviceProp prop{};
    COURSE_CUDA_CHECK(cudaGetDevice(&device));
    COURSE_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    return prop.name;
}

/// @brief The current device's number of streaming multiprocessors.
inline int sm_count() {
    int device = 0;
    int count = 0;
    COURSE_CUDA_CHECK(cudaGetDevice(&device));
    COURSE_CUDA_CHECK(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device));
    return count;
}

}  // namespace course
