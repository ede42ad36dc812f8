/// @file device_buffer.hpp
/// @brief DeviceBuffer<T>: an owned, checked device allocation for tests and benchmarks.
#pragma once

#include <course/cuda_check.hpp>

#include <cstddef>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

namespace course {

/// @brief The value DeviceBuffer::poison() writes: NaN for floating point
/// (any arithmetic on it shows), 0xCD bytes otherwise.
template <class T>
T poison_value() {
    if constexpr (std::is_floating_point_v<T>) {
        return std::numeric_limits<T>::quiet_NaN();
    } else {
        T value;
        std::memset(static_cast<void*>(&value), 0xCD, sizeof value);  // void*: T may be a class (__half)
        return value;
    }
}

/// @brief `n` elements of T in device memory, freed on destruction (RAII, move-only).
///
/// Every runtime call is checked; a failure throws course::CudaError.
template <class T>
class DeviceBuffer {
    static_assert(std::is_trivially_copyable_v<T>, "device buffers hold trivially copyable types");

public:
    /// @brief Allocates `n` uninitialised elements (n may be 0: no allocation).
    explicit DeviceBuffer(std::size_t n) : size_(n) {
        if (n > 0) COURSE_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&data_), n * sizeof(T)));
    }

    /// @brief Allocates and uploads a copy of `host`.
    explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) { upload(host); }

    /// @brief Not copyable: one owner per allocation.
    DeviceBuffer(const DeviceBuffer&) = delete;
    /// @brief Not copyable: one owner per allocation.
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    /// @brief Takes over `other`'s allocation, leaving `other` empty.
    DeviceBuffer(DeviceBuffer&& other) noexcept
        : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
    /// @brief Frees this buffer's allocation and takes over `other`'s, leaving `other` empty.
    DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
        if (this != &other) {
            release();
            data_ = std::exchange(other.data_, nullptr);
            size_ = std::exchange(other.size_, 0);
        }
        return *this;
    }
    /// @brief Frees the allocation (a failed free is reported on stderr, never thrown).
    ~DeviceBuffer() { release(); }

    /// @brief The device pointer (null when empty).
    T* data() noexcept { return data_; }
    /// @brief The device pointer (null when empty).
    const T* data() const noexcept { return data_; }
    /// @brief Number of elements.
    std::size_t size() const noexcept { return size_; }

    /// @brief Copies `host` (exactly size() elements) to the device, and
    /// returns once the data is there.
    ///
    /// A cudaMemcpy from pageable memory may return as soon as the data is in
    /// the driver's staging buffer, before its DMA reaches the device, and
    /// work in a stream created with cudaStreamNonBlocking is not ordered
    /// after it: without the synchronisation a student's non-blocking stream
    /// could run before the test's input (or poison) has landed, and the test
    /// would blame the student for the harness (seen on an H100, lesson 17).
    void upload(const std::vector<T>& host) {
        if (host.size() != size_) {
            throw std::invalid_argument("DeviceBuffer::upload: host vector has " + std::to_string(host.size()) +
                                        " elements, buffer has " + std::to_string(size_));
        }
        if (size_ > 0) {
            COURSE_CUDA_CHECK(cudaMemcpy(data_, host.data(), size_ * sizeof(T), cudaMemcpyHostToDevice));
            COURSE_CUDA_CHECK(cudaDeviceSynchronize());
        }
    }

    /// @brief Copies the buffer back to the host (synchronises with the device first).
    std::vector<T> download() const {
        std::vector<T> host(size_);
        COURSE_CUDA_CHECK(cudaDeviceSynchronize());
        if (size_ > 0) {
            COURSE_CUDA_CHECK(cudaMemcpy(host.data(), data_, size_ * sizeof(T), cudaMemcpyDeviceToHost));
        }
        return host;
    }

    /// @brief Fills every element with poison_value<T>(), so unwritten outputs are caught.
    void poison() { upload(std::vector<T>(size_, poison_value<T>())); }

private:
    void release() noexcept {
        if (data_ == nullptr) return;
        // A destructor cannot throw; a failed free is still reported.
        report_cuda_failure(cudaFree(data_), "cudaFree");
        data_ = nullptr;
    }

    T* data_ = nullptr;
    std::size_t size_ = 0;
};

}  // namespace course
