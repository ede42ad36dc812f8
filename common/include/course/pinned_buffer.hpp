/// @file pinned_buffer.hpp
/// @brief PinnedBuffer<T>: an owned, checked allocation of pinned (page-locked)
/// host memory for tests and benchmarks.
///
/// Copies between pinned memory and the device can run asynchronously
/// (cudaMemcpyAsync returns before they are done) and at the full speed of the
/// bus; copies from pageable memory (`new`, `std::vector`) are staged by the
/// driver and make cudaMemcpyAsync wait. Lesson 17 explains both.
#pragma once

#include <course/cuda_check.hpp>

#include <cstddef>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

namespace course {

/// @brief `n` elements of T in pinned host memory (cudaMallocHost), freed on
/// destruction with cudaFreeHost (RAII, move-only).
///
/// Every runtime call is checked; a failure throws course::CudaError (a
/// destructor reports and swallows it, since it must not throw).
template <class T>
class PinnedBuffer {
    static_assert(std::is_trivially_copyable_v<T>, "pinned buffers hold trivially copyable types");

public:
    /// @brief Allocates `n` uninitialised elements (n may be 0: no allocation, data() is null).
    explicit PinnedBuffer(std::size_t n) : size_(n) {
        if (n > 0) COURSE_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&data_), n * sizeof(T)));
    }

    /// @brief Allocates and fills with a copy of `values`.
    explicit PinnedBuffer(const std::vector<T>& values) : PinnedBuffer(values.size()) {
        for (std::size_t i = 0; i < size_; ++i) data_[i] = values[i];
    }

    /// @brief Not copyable: one owner per allocation.
    PinnedBuffer(const PinnedBuffer&) = delete;
    /// @brief Not copyable: one owner per allocation.
    PinnedBuffer& operator=(const PinnedBuffer&) = delete;
    /// @brief Takes over `other`'s allocation, leaving `other` empty.
    PinnedBuffer(PinnedBuffer&& other) noexcept
        : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
    /// @brief Frees this buffer's allocation and takes over `other`'s, leaving `other` empty.
    PinnedBuffer& operator=(PinnedBuffer&& other) noexcept {
        if (this != &other) {
            release();
            data_ = std::exchange(other.data_, nullptr);
            size_ = std::exchange(other.size_, 0);
        }
        return *this;
    }
    /// @brief Frees the allocation (cudaFreeHost waits for the device first).
    ~PinnedBuffer() { release(); }

    /// @brief The host pointer (null when empty).
    T* data() { return data_; }
    /// @brief The host pointer (null when empty).
    const T* data() const { return data_; }
    /// @brief Number of elements.
    std::size_t size() const { return size_; }
    /// @brief The elements, as a span.
    std::span<T> span() { return {data_, size_}; }
    /// @brief A copy of the elements in a std::vector (read the buffer only after synchronising).
    std::vector<T> to_vector() const { return std::vector<T>(data_, data_ + size_); }
    /// @brief Sets every element to `value` (e.g. a poison the test expects to be overwritten).
    void fill(const T& value) {
        for (std::size_t i = 0; i < size_; ++i) data_[i] = value;
    }

private:
    void release() noexcept {
        if (data_ != nullptr) report_cuda_failure(cudaFreeHost(data_), "cudaFreeHost");
        data_ = nullptr;
        size_ = 0;
    }

    T* data_ = nullptr;
    std::size_t size_ = 0;
};

}  // namespace course
