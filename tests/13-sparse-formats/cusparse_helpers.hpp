/// @file cusparse_helpers.hpp
/// @brief Lesson 13's cuSPARSE helpers (GPU only), for its test and its
/// benchmark: checked calls, an owned handle, and y = A x with cusparseSpMV.
///
/// Local to the lesson: no other lesson uses cuSPARSE. If one does, the
/// check moves to common/include/course/ beside cublas_check.hpp.
#pragma once

#include <course/cuda_check.hpp>
#include <course/device_buffer.hpp>

#include <cuda_runtime.h>
#include <cusparse.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace lesson13::test {

/// @brief Throws std::runtime_error unless `status` is CUSPARSE_STATUS_SUCCESS. Used through COURSE_CUSPARSE_CHECK.
inline void check_cusparse(cusparseStatus_t status, const char* call, const char* file, int line) {
    if (status == CUSPARSE_STATUS_SUCCESS) return;
    throw std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + call + " failed: " +
                             cusparseGetErrorName(status) + " (" + cusparseGetErrorString(status) + ")");
}

/// @brief A cuSPARSE handle, destroyed with its owner.
class CusparseHandle {
public:
    /// @brief Creates the handle (throws if cuSPARSE cannot start).
    CusparseHandle() { check_cusparse(cusparseCreate(&handle_), "cusparseCreate", __FILE__, __LINE__); }
    /// @brief Not copyable: one owner per handle.
    CusparseHandle(const CusparseHandle&) = delete;
    /// @brief Not copyable: one owner per handle.
    CusparseHandle& operator=(const CusparseHandle&) = delete;
    /// @brief Destroys the handle.
    ~CusparseHandle() { cusparseDestroy(handle_); }
    /// @brief The handle, for cuSPARSE calls.
    cusparseHandle_t get() const { return handle_; }

private:
    cusparseHandle_t handle_ = nullptr;
};

}  // namespace lesson13::test

/// @brief Checks a cuSPARSE call; throws with the call, file, line and cuSPARSE's message.
#define COURSE_CUSPARSE_CHECK(call) ::lesson13::test::check_cusparse((call), #call, __FILE__, __LINE__)

namespace lesson13::test {

/// @brief `y = A x` with cuSPARSE's generic API, A an n_rows x n_cols CSR
/// matrix of floats (0-based, 32-bit indices); all pointers are device
/// pointers. Describes A, x and y, asks cusparseSpMV_bufferSize for the
/// workspace, multiplies, and returns y copied to the host.
inline std::vector<float> cusparse_spmv(cusparseHandle_t handle, int n_rows, int n_cols, int nnz, int* row_ptr,
                                        int* cols, float* vals, const float* x, float* y) {
    cusparseSpMatDescr_t a;
    cusparseDnVecDescr_t vec_x, vec_y;
    COURSE_CUSPARSE_CHECK(cusparseCreateCsr(&a, n_rows, n_cols, nnz, row_ptr, cols, vals, CUSPARSE_INDEX_32I,
                                            CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
    COURSE_CUSPARSE_CHECK(cusparseCreateDnVec(&vec_x, n_cols, const_cast<float*>(x), CUDA_R_32F));
    COURSE_CUSPARSE_CHECK(cusparseCreateDnVec(&vec_y, n_rows, y, CUDA_R_32F));
    const float one = 1.0f, zero = 0.0f;
    std::size_t bytes = 0;
    COURSE_CUSPARSE_CHECK(cusparseSpMV_bufferSize(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, a, vec_x, &zero,
                                                  vec_y, CUDA_R_32F, CUSPARSE_SPMV_ALG_DEFAULT, &bytes));
    course::DeviceBuffer<char> buffer(bytes);
    COURSE_CUSPARSE_CHECK(cusparseSpMV(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, a, vec_x, &zero, vec_y,
                                       CUDA_R_32F, CUSPARSE_SPMV_ALG_DEFAULT, buffer.data()));
    COURSE_CUSPARSE_CHECK(cusparseDestroySpMat(a));
    COURSE_CUSPARSE_CHECK(cusparseDestroyDnVec(vec_x));
    COURSE_CUSPARSE_CHECK(cusparseDestroyDnVec(vec_y));
    std::vector<float> host(n_rows);
    COURSE_CUDA_CHECK(cudaDeviceSynchronize());
    if (n_rows > 0) COURSE_CUDA_CHECK(cudaMemcpy(host.data(), y, n_rows * sizeof(float), cudaMemcpyDeviceToHost));
    return host;
}

}  // namespace lesson13::test
