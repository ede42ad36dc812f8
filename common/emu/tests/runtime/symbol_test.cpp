// __constant__ memory (cudaMemcpyToSymbol, cudaMemcpyFromSymbol,
// cudaGetSymbolSize/Address, with CUDA's errors) and the bounds of static
// __shared__ arrays, on kernels written as a student writes them
// (symbol_kernels.cu). That a kernel writing constant memory does not compile
// is checked by a test of its own (compile_errors/, see common/CMakeLists.txt).
#include "symbol_kernels.hpp"

#include <course/catch.hpp>
#include <course/cuda_check.hpp>
#include <course/device_buffer.hpp>

#include <string>
#include <vector>

namespace {

// Clears errors and faults a test left, so the next test starts on a fresh device.
struct ResetDevice {
    ~ResetDevice() { (void)cudaDeviceReset(); }
};

std::vector<float> ramp(int n, float start) {
    std::vector<float> v(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = start + static_cast<float>(i);
    return v;
}

}  // namespace

TEST_CASE("cudaMemcpyToSymbol fills __constant__ memory that kernels read, at any offset", "[emu][constant]") {
    ResetDevice reset;
    using emu_symbol_test::kWeights;
    const std::vector<float> weights = ramp(kWeights, 1.0f);
    REQUIRE(emu_symbol_test::set_weights(weights.data(), kWeights, 0) == cudaSuccess);
    // Overwrite weights 4..7 only: offset in bytes, as in CUDA.
    const std::vector<float> middle{-1.0f, -2.0f, -3.0f, -4.0f};
    REQUIRE(emu_symbol_test::set_weights(middle.data(), 4, 4 * sizeof(float)) == cudaSuccess);
    std::vector<float> expected_weights = weights;
    for (int i = 0; i < 4; ++i) expected_weights[static_cast<std::size_t>(4 + i)] = middle[static_cast<std::size_t>(i)];

    const int n = 100;
    course::DeviceBuffer<float> in(ramp(n, 0.5f));
    course::DeviceBuffer<float> out(n);
    emu_symbol_test::launch_weigh(in.data(), out.data(), n);
    COURSE_LAUNCH_CHECK();
    const std::vector<float> got = out.download();
    for (int i = 0; i < n; ++i) {
        CAPTURE(i);
        CHECK(got[static_cast<std::size_t>(i)] ==
              (0.5f + static_cast<float>(i)) * expected_weights[static_cast<std::size_t>(i % kWeights)]);
    }

    SECTION("cudaMemcpyFromSymbol reads it back, to the host or to device memory") {
        std::vector<float> back(kWeights);
        REQUIRE(emu_symbol_test::get_weights(back.data(), kWeights, 0) == cudaSuccess);
        CHECK(back == expected_weights);
        std::vector<float> tail(2);
        REQUIRE(emu_symbol_test::get_weights(tail.data(), 2, 6 * sizeof(float)) == cudaSuccess);
        CHECK(tail == std::vector<float>{-3.0f, -4.0f});
        course::DeviceBuffer<float> device(kWeights);
        REQUIRE(emu_symbol_test::get_weights(device.data(), kWeights, 0, cudaMemcpyDeviceToDevice) == cudaSuccess);
        CHECK(device.download() == expected_weights);
        REQUIRE(emu_symbol_test::get_weights(device.data(), kWeights, 0, cudaMemcpyDefault) == cudaSuccess);
    }
    SECTION("a device-to-device copy into the symbol") {
        course::DeviceBuffer<float> device(ramp(kWeights, 100.0f));
        REQUIRE(emu_symbol_test::set_weights(device.data(), kWeights, 0, cudaMemcpyDeviceToDevice) == cudaSuccess);
        std::vector<float> back(kWeights);
        REQUIRE(emu_symbol_test::get_weights(back.data(), kWeights, 0) == cudaSuccess);
        CHECK(back == ramp(kWeights, 100.0f));
    }
    SECTION("cudaGetSymbolSize and cudaGetSymbolAddress") {
        std::size_t size = 0;
        REQUIRE(emu_symbol_test::weights_size(&size) == cudaSuccess);
        CHECK(size == kWeights * sizeof(float));
        void* address = nullptr;
        REQUIRE(emu_symbol_test::weights_address(&address) == cudaSuccess);
        CHECK(address != nullptr);
    }
}

TEST_CASE("symbol copies past the symbol's end or in the wrong direction fail as on a GPU", "[emu][constant]") {
    ResetDevice reset;
    using emu_symbol_test::kWeights;
    const std::vector<float> weights = ramp(kWeights + 1, 1.0f);
    std::vector<float> back(kWeights + 1);
    // One float too many, from the start or from an offset: cudaErrorInvalidValue, nothing copied.
    CHECK(emu_symbol_test::set_weights(weights.data(), kWeights + 1, 0) == cudaErrorInvalidValue);
    CHECK(emu_symbol_test::set_weights(weights.data(), kWeights, sizeof(float)) == cudaErrorInvalidValue);
    CHECK(emu_symbol_test::set_weights(weights.data(), 1, kWeights * sizeof(float)) == cudaErrorInvalidValue);
    CHECK(emu_symbol_test::get_weights(back.data(), kWeights + 1, 0) == cudaErrorInvalidValue);
    CHECK(emu_symbol_test::get_weights(back.data(), 2, (kWeights - 1) * sizeof(float)) == cudaErrorInvalidValue);
    // A copy "to the host" into a symbol, or "from the host" out of one.
    CHECK(emu_symbol_test::set_weights(weights.data(), 1, 0, cudaMemcpyDeviceToHost) ==
          cudaErrorInvalidMemcpyDirection);
    CHECK(emu_symbol_test::get_weights(back.data(), 1, 0, cudaMemcpyHostToDevice) ==
          cudaErrorInvalidMemcpyDirection);
    // A device-to-device copy from host memory: the source is no device allocation.
    CHECK(emu_symbol_test::set_weights(weights.data(), 1, 0, cudaMemcpyDeviceToDevice) == cudaErrorInvalidValue);
    // The last error is the last failure, and the copies that fit still work.
    CHECK(cudaGetLastError() == cudaErrorInvalidValue);
    CHECK(emu_symbol_test::set_weights(weights.data(), kWeights, 0) == cudaSuccess);
    CHECK(emu_symbol_test::set_weights(weights.data(), 0, kWeights * sizeof(float)) == cudaSuccess);
}

TEST_CASE("an index past the end of a static __shared__ array is reported with the array, its size and the index",
          "[emu][shared]") {
    course::DeviceBuffer<long long> sum(1);
    SECTION("a block of 256 threads writing partial[threadIdx.x] into a long long partial[128]") {
        ResetDevice reset;
        emu_symbol_test::launch_partial_sums(256, sum.data());
        REQUIRE(cudaDeviceSynchronize() == cudaErrorIllegalAddress);
        const std::string report = course_emu::last_fault_report();
        CAPTURE(report);
        CHECK(report.find("out-of-bounds access to shared memory: element partial[128] of the static __shared__ "
                          "array partial[128] (8-byte elements, 1024 bytes, declared at ") != std::string::npos);
        CHECK(report.find("symbol_kernels.cu:18)") != std::string::npos);  // the declaration
        CHECK(report.find("symbol_kernels.cu:") != std::string::npos);
        CHECK(report.find("partial_sums") != std::string::npos);  // the kernel
        CHECK(report.find("thread (128,0,0)") != std::string::npos);
    }
    SECTION("a two-dimensional array: the index is named in both dimensions") {
        course::DeviceBuffer<float> out(32 * 32);  // freed after the reset below
        ResetDevice reset;
        emu_symbol_test::launch_tile_shift(2, out.data());
        REQUIRE(cudaDeviceSynchronize() == cudaErrorIllegalAddress);
        const std::string report = course_emu::last_fault_report();
        CAPTURE(report);
        CHECK(report.find("element tile[32][0] of the static __shared__ array tile[32][33] (4-byte elements, 4224 "
                          "bytes, declared at ") != std::string::npos);
        CHECK(report.find("tile_shift") != std::string::npos);
    }
    // Within bounds the same kernels run, block after block on the same memory.
    emu_symbol_test::launch_partial_sums(128, sum.data());
    COURSE_LAUNCH_CHECK();
    CHECK(sum.download()[0] == 128 * 129 / 2);
    for (const int shift : {0, 1}) {
        course::DeviceBuffer<float> out(32 * 32);
        emu_symbol_test::launch_tile_shift(shift, out.data());
        COURSE_LAUNCH_CHECK();
        const std::vector<float> got = out.download();
        for (int i = 0; i < 32 * 32; ++i) REQUIRE(got[static_cast<std::size_t>(i)] == static_cast<float>(i));
    }
}
