// The runtime API and device functions the lessons use beyond the basics:
// complex numbers, intrinsics, function attributes, occupancy, streams and
// events with flags, managed memory and device printf.
#include "api_kernels.hpp"

#include "../../src/device_internal.hpp"

#include <course/catch.hpp>
#include <course/cuda_check.hpp>
#include <course/device_buffer.hpp>

#include <cmath>
#include <complex>
#include <string>
#include <cstdint>
#include <vector>

namespace {

// Clears what a test changed (function attributes, errors) so the next test
// starts on a fresh device.
struct ResetDevice {
    ~ResetDevice() { (void)cudaDeviceReset(); }
};

template <class T>
bool close(T got, T expected, T relative) {
    return std::abs(got - expected) <= relative * std::max(T(1), std::abs(expected));
}

template <class T>
bool close(std::complex<T> got, std::complex<T> expected, T relative) {
    return std::abs(got - expected) <= relative * std::max(T(1), std::abs(expected));
}

// Operands with magnitudes from 1e-3 to 1e3 and every sign, divisors never 0.
template <class T>
std::vector<std::complex<T>> operands(int n, int salt) {
    std::vector<std::complex<T>> v;
    for (int i = 0; i < n; ++i) {
        const T scale = std::pow(T(10), T((i * 7 + salt) % 7 - 3));
        const T re = scale * T(((i * 37 + salt * 11) % 19) - 9 + (salt == 1 ? 0.5 : 0.25));
        const T im = scale * T(((i * 53 + salt * 5) % 23) - 11 + 0.75);
        v.emplace_back(re, im);
    }
    return v;
}

}  // namespace

TEST_CASE("complex arithmetic in a kernel matches std::complex in single precision", "[emu][api]") {
    const int n = 257;
    const auto a = operands<float>(n, 1);
    const auto b = operands<float>(n, 2);
    std::vector<cuFloatComplex> a_host, b_host;
    for (int i = 0; i < n; ++i) {
        a_host.push_back(make_cuFloatComplex(a[i].real(), a[i].imag()));
        b_host.push_back(make_cuFloatComplex(b[i].real(), b[i].imag()));
    }
    course::DeviceBuffer<cuFloatComplex> da(a_host), db(b_host), out(5 * n);
    course::DeviceBuffer<float> magnitude(n);
    emu_api_test::launch_complex_float(da.data(), db.data(), out.data(), magnitude.data(), n);
    COURSE_LAUNCH_CHECK();
    const auto got = out.download();
    const auto abs_got = magnitude.download();
    auto as_std = [](cuFloatComplex z) { return std::complex<float>(cuCrealf(z), cuCimagf(z)); };
    const float eps = 4e-6f;
    for (int i = 0; i < n; ++i) {
        CAPTURE(i, a[i].real(), a[i].imag(), b[i].real(), b[i].imag());
        CHECK(close(as_std(got[5 * i + 0]), a[i] + b[i], eps));
        CHECK(close(as_std(got[5 * i + 1]), a[i] - b[i], eps));
        CHECK(close(as_std(got[5 * i + 2]), a[i] * b[i], eps));
        CHECK(close(as_std(got[5 * i + 3]), a[i] / b[i], eps));
        CHECK(as_std(got[5 * i + 4]) == std::conj(a[i]));
        CHECK(close(abs_got[i], std::abs(a[i]), eps));
    }
}

TEST_CASE("complex arithmetic in a kernel matches std::complex in double precision", "[emu][api]") {
    const int n = 100;
    const auto a = operands<double>(n, 1);
    const auto b = operands<double>(n, 2);
    std::vector<cuDoubleComplex> a_host, b_host;
    for (int i = 0; i < n; ++i) {
        a_host.push_back(make_cuDoubleComplex(a[i].real(), a[i].imag()));
        b_host.push_back(make_cuDoubleComplex(b[i].real(), b[i].imag()));
    }
    course::DeviceBuffer<cuDoubleComplex> da(a_host), db(b_host), out(5 * n), widened(n);
    course::DeviceBuffer<double> magnitude(n);
    course::DeviceBuffer<cuFloatComplex> converted(n);
    emu_api_test::launch_complex_double(da.data(), db.data(), out.data(), magnitude.data(), converted.data(),
                                        widened.data(), n);
    COURSE_LAUNCH_CHECK();
    const auto got = out.download();
    const auto abs_got = magnitude.download();
    const auto narrow = converted.download();
    const auto wide = widened.download();
    auto as_std = [](cuDoubleComplex z) { return std::complex<double>(cuCreal(z), cuCimag(z)); };
    const double eps = 1e-14;
    for (int i = 0; i < n; ++i) {
        CAPTURE(i);
        CHECK(close(as_std(got[5 * i + 0]), a[i] + b[i], eps));
        CHECK(close(as_std(got[5 * i + 1]), a[i] - b[i], eps));
        CHECK(close(as_std(got[5 * i + 2]), a[i] * b[i], eps));
        CHECK(close(as_std(got[5 * i + 3]), a[i] / b[i], eps));
        CHECK(as_std(got[5 * i + 4]) == std::conj(a[i]));
        CHECK(close(abs_got[i], std::abs(a[i]), eps));
        CHECK(narrow[i].x == static_cast<float>(a[i].real()));
        CHECK(narrow[i].y == static_cast<float>(a[i].imag()));
        CHECK(wide[i].x == static_cast<double>(narrow[i].x));
        CHECK(wide[i].y == static_cast<double>(narrow[i].y));
    }
}

TEST_CASE("complex division and magnitude survive operands near the float limits", "[emu][api]") {
    // The scaled algorithms give finite answers where the textbook formulas overflow.
    // (|Re| + |Im| of the divisor must stay finite: CUDA's algorithm scales by it.)
    const cuFloatComplex big = make_cuFloatComplex(1.5e38f, 1.5e38f);
    const cuFloatComplex q = cuCdivf(big, big);
    CHECK(close(cuCrealf(q), 1.0f, 1e-6f));
    CHECK(close(cuCimagf(q), 0.0f, 1e-6f));
    CHECK(close(cuCabsf(make_cuFloatComplex(3e38f, 1e38f)), 3.1622777e38f, 1e-6f));
    CHECK(cuCabsf(make_cuFloatComplex(0.0f, 0.0f)) == 0.0f);
    CHECK(cuCabsf(make_cuFloatComplex(-3.0f, 4.0f)) == 5.0f);
    CHECK(close(cuCabs(make_cuDoubleComplex(1e300, 1e300)), 1.4142135623730951e300, 1e-12));
    const cuComplex fma = cuCfmaf(make_cuComplex(1, 2), make_cuComplex(3, 4), make_cuComplex(10, 20));
    CHECK(cuCrealf(fma) == 5.0f);   // (1*3 - 2*4) + 10
    CHECK(cuCimagf(fma) == 30.0f);  // (1*4 + 2*3) + 20
}

TEST_CASE("intrinsics and math functions give the expected sample values in a kernel", "[emu][api]") {
    emu_api_test::IntrinsicInputs in{1.5f, 0.25f, 2.5f, -3.7f, -7, 0x12345678u, 0x0123456789ABCDEFull};
    course::DeviceBuffer<float> source(std::vector<float>{10.0f, 20.0f, 30.0f, 40.0f});
    course::DeviceBuffer<emu_api_test::IntrinsicResults> out(1);
    emu_api_test::launch_intrinsics(in, source.data(), out.data());
    COURSE_LAUNCH_CHECK();
    const emu_api_test::IntrinsicResults r = out.download()[0];

    CHECK(r.fadd == 1.75f);
    CHECK(r.fsub == 1.25f);
    CHECK(r.fmul == 0.375f);
    CHECK(r.fdiv == 6.0f);
    CHECK(r.frcp == 4.0f);
    CHECK(r.fsqrt == 0.5f);
    CHECK(r.dadd == 1.75);
    CHECK(r.dmul == 0.375);
    // Fast-math forms: exact on the emulator, approximate on a GPU.
    CHECK(close(r.powf_, 2.25f, 1e-6f));
    CHECK(close(r.exp10f_, 316.22777f, 1e-6f));
    CHECK(close(r.exp10f_plain, 316.22777f, 1e-6f));
    CHECK(close(r.log2f_, -2.0f, 1e-6f));
    CHECK(close(r.log10f_, 1.39794f, 1e-6f));
    CHECK(close(r.tanf_, std::tan(0.25f), 1e-6f));
    CHECK(close(r.sinf_, std::sin(1.5f), 1e-6f));
    CHECK(close(r.cosf_, std::cos(1.5f), 1e-6f));
    CHECK(close(r.sincos_s, std::sin(1.5f), 1e-6f));
    CHECK(close(r.sincos_c, std::cos(1.5f), 1e-6f));
    CHECK(close(r.sincos_ds, std::sin(1.5), 1e-12));
    CHECK(close(r.sincos_dc, std::cos(1.5), 1e-12));
    // Conversions: round half to even, toward zero, and saturation.
    CHECK(r.float2int_rn_half == 2);
    CHECK(r.float2int_rn_negative == -4);
    CHECK(r.float2int_rz_negative == -3);
    CHECK(r.float2uint_rn_half == 2u);
    CHECK(r.float2uint_rn_negative == 0u);
    CHECK(r.int2float == -7.0f);
    CHECK(r.uint2float == static_cast<float>(0x12345678u));
    CHECK(r.double2float == static_cast<float>(0.25 / 3.0));
    CHECK(r.float2ll_rn == static_cast<long long>(2.5f * 1.0e12f));
    // Integer intrinsics.
    CHECK(r.umulhi == 0x1234u);
    CHECK(r.mulhi == -2);  // floor(-7 * 2^30 / 2^32)
    CHECK(r.umul64hi == 0x01234567ull);
    CHECK(r.mul64hi == -2);
    CHECK(r.sad == 112u);  // |-7 - 5| + 100
    CHECK(r.usad == 8u);   // |3 - 10| + 1
    CHECK(r.byte_perm_swap == 0x78563412u);
    CHECK(r.byte_perm_mix == 0xAADD1278u);
    CHECK(r.brevll == 0xF7B3D591E6A2C480ull);
    // <math.h> called unqualified.
    CHECK(r.fminf_ == 0.25f);
    CHECK(r.fmaxf_ == 1.5f);
    CHECK(r.fabsf_ == 3.7f);
    CHECK(r.sqrtf_ == 0.5f);
    CHECK(r.expf_ == 1.0f);
    // __ldg reads what a plain load reads.
    CHECK(r.ldg_scalar == 40.0f);
    CHECK(r.ldg_vector.x == 10.0f);
    CHECK(r.ldg_vector.y == 20.0f);
    CHECK(r.ldg_vector.z == 30.0f);
    CHECK(r.ldg_vector.w == 40.0f);
}

TEST_CASE("integer intrinsics handle their edge values", "[emu][api]") {
    CHECK(__float2int_rn(3.0e9f) == 2147483647);  // saturates instead of overflowing
    CHECK(__float2int_rn(-3.0e9f) == -2147483647 - 1);
    CHECK(__float2int_rn(NAN) == 0);
    CHECK(__float2uint_rn(5.0e9f) == 4294967295u);
    CHECK(__float2int_rn(3.5f) == 4);
    CHECK(__float2int_rn(-2.5f) == -2);
    CHECK(__umulhi(0xFFFFFFFFu, 0xFFFFFFFFu) == 0xFFFFFFFEu);
    CHECK(__umul64hi(~0ull, ~0ull) == ~0ull - 1);
    CHECK(__mul64hi(-1, 1) == -1);
    CHECK(__sad(-2147483647 - 1, 2147483647, 0u) == 0xFFFFFFFFu);
    CHECK(__brevll(1ull) == 0x8000000000000000ull);
    CHECK(__byte_perm(0x11223344u, 0x55667788u, 0x4567) == 0x88776655u);  // y's bytes, reversed
    CHECK(__funnelshift_l(0x80000000u, 0x1u, 1) == 0x3u);
    CHECK(__funnelshift_r(0x1u, 0x1u, 1) == 0x80000000u);
    CHECK(__funnelshift_rc(0x0u, 0x5u, 40) == 0x5u);
    CHECK(__mul24(-3, 0x1000005) == -15);  // only the low 24 bits count
    CHECK(__hadd(2147483647, 2147483647) == 2147483647);
    CHECK(__urhadd(0xFFFFFFFFu, 0u) == 0x80000000u);
}

TEST_CASE("cudaFuncSetAttribute accepts what a GPU accepts and raises the dynamic shared limit", "[emu][api]") {
    ResetDevice reset;
    REQUIRE(cudaDeviceReset() == cudaSuccess);
    CHECK(course_emu::detail::dynamic_shared_limit() == 48 * 1024);

    CHECK(emu_api_test::set_kernel_attribute(cudaFuncAttributeMaxDynamicSharedMemorySize, 100 * 1024) == cudaSuccess);
    CHECK(course_emu::detail::dynamic_shared_limit() == 100 * 1024);
    // The largest setting wins: the emulator cannot tell kernels apart.
    CHECK(emu_api_test::set_kernel_attribute(cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024) == cudaSuccess);
    CHECK(course_emu::detail::dynamic_shared_limit() == 100 * 1024);
    CHECK(emu_api_test::set_kernel_attribute(cudaFuncAttributeMaxDynamicSharedMemorySize, 227 * 1024) == cudaSuccess);
    CHECK(course_emu::detail::dynamic_shared_limit() == 227 * 1024);

    // Over sharedMemPerBlockOptin, or negative: refused, and the limit stays.
    CHECK(emu_api_test::set_kernel_attribute(cudaFuncAttributeMaxDynamicSharedMemorySize, 227 * 1024 + 1) ==
          cudaErrorInvalidValue);
    CHECK(cudaGetLastError() == cudaErrorInvalidValue);
    CHECK(emu_api_test::set_kernel_attribute(cudaFuncAttributeMaxDynamicSharedMemorySize, -1) ==
          cudaErrorInvalidValue);
    CHECK(course_emu::detail::dynamic_shared_limit() == 227 * 1024);

    CHECK(emu_api_test::set_kernel_attribute(cudaFuncAttributePreferredSharedMemoryCarveout, 100) == cudaSuccess);
    CHECK(emu_api_test::set_kernel_attribute(cudaFuncAttributePreferredSharedMemoryCarveout, -1) == cudaSuccess);
    CHECK(emu_api_test::set_kernel_attribute(cudaFuncAttributePreferredSharedMemoryCarveout, 101) ==
          cudaErrorInvalidValue);
    CHECK(emu_api_test::set_kernel_attribute(static_cast<cudaFuncAttribute>(3), 0) == cudaErrorInvalidValue);
    CHECK(cudaFuncSetAttribute(static_cast<const void*>(nullptr), cudaFuncAttributeMaxDynamicSharedMemorySize, 0) ==
          cudaErrorInvalidDeviceFunction);
    (void)cudaGetLastError();

    // A reset forgets the attributes, as a new context does.
    REQUIRE(cudaDeviceReset() == cudaSuccess);
    CHECK(course_emu::detail::dynamic_shared_limit() == 48 * 1024);
}

TEST_CASE("occupancy answers are plausible for an SM of 2048 threads and 228 KiB", "[emu][api]") {
    ResetDevice reset;
    int blocks = -1;
    REQUIRE(emu_api_test::occupancy(&blocks, 256, 0) == cudaSuccess);
    CHECK(blocks == 8);
    REQUIRE(emu_api_test::occupancy(&blocks, 1024, 0) == cudaSuccess);
    CHECK(blocks == 2);
    REQUIRE(emu_api_test::occupancy(&blocks, 32, 0) == cudaSuccess);
    CHECK(blocks == 32);  // the limit of resident blocks per SM
    REQUIRE(emu_api_test::occupancy(&blocks, 100, 0) == cudaSuccess);
    CHECK(blocks == 16);  // 100 threads take 4 warps
    REQUIRE(emu_api_test::occupancy(&blocks, 128, 40 * 1024) == cudaSuccess);
    CHECK(blocks == 5);  // 228 KiB / 40 KiB
    REQUIRE(emu_api_test::occupancy(&blocks, 1025, 0) == cudaSuccess);
    CHECK(blocks == 0);
    REQUIRE(emu_api_test::occupancy(&blocks, 128, 64 * 1024) == cudaSuccess);
    CHECK(blocks == 0);  // more dynamic shared memory than any kernel opted in to
    REQUIRE(emu_api_test::set_kernel_attribute(cudaFuncAttributeMaxDynamicSharedMemorySize, 96 * 1024) ==
            cudaSuccess);
    REQUIRE(emu_api_test::occupancy(&blocks, 128, 64 * 1024) == cudaSuccess);
    CHECK(blocks == 3);
    for (int size = 1; size <= 1024; size += 7) {
        REQUIRE(emu_api_test::occupancy(&blocks, size, 0) == cudaSuccess);
        CAPTURE(size, blocks);
        CHECK(blocks >= 1);
        CHECK(blocks * size <= 2048);
        CHECK(blocks <= 32);
    }
    CHECK(emu_api_test::occupancy(nullptr, 128, 0) == cudaErrorInvalidValue);
    CHECK(emu_api_test::occupancy(&blocks, 0, 0) == cudaErrorInvalidValue);
    (void)cudaGetLastError();

    int grid = 0, block = 0;
    REQUIRE(emu_api_test::potential_block_size(&grid, &block, 0, 0) == cudaSuccess);
    CHECK(block == 1024);
    CHECK(grid == 2 * 8);
    REQUIRE(emu_api_test::potential_block_size(&grid, &block, 0, 200) == cudaSuccess);
    CHECK(block == 128);  // 16 blocks of 128 fill an SM; 200 would leave it part empty
    CHECK(grid == 16 * 8);
}

TEST_CASE("streams and events with flags behave as on a GPU whose work is already done", "[emu][api]") {
    cudaStream_t stream = nullptr;
    REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
    cudaStream_t plain = nullptr;
    REQUIRE(cudaStreamCreateWithFlags(&plain, cudaStreamDefault) == cudaSuccess);
    cudaStream_t refused = nullptr;
    CHECK(cudaStreamCreateWithFlags(&refused, 0x10) == cudaErrorInvalidValue);
    CHECK(cudaGetLastError() == cudaErrorInvalidValue);

    cudaEvent_t timed = nullptr, untimed = nullptr, never = nullptr;
    REQUIRE(cudaEventCreateWithFlags(&timed, cudaEventDefault) == cudaSuccess);
    REQUIRE(cudaEventCreateWithFlags(&untimed, cudaEventDisableTiming) == cudaSuccess);
    REQUIRE(cudaEventCreateWithFlags(&never, cudaEventBlockingSync) == cudaSuccess);
    cudaEvent_t bad = nullptr;
    CHECK(cudaEventCreateWithFlags(&bad, 0x40) == cudaErrorInvalidValue);
    CHECK(cudaEventCreateWithFlags(&bad, cudaEventInterprocess) == cudaErrorInvalidValue);  // needs DisableTiming
    (void)cudaGetLastError();

    CHECK(cudaEventQuery(never) == cudaSuccess);  // never recorded: success, as in CUDA
    REQUIRE(cudaEventRecord(timed, stream) == cudaSuccess);
    REQUIRE(cudaEventRecord(untimed, stream) == cudaSuccess);
    CHECK(cudaEventQuery(timed) == cudaSuccess);
    CHECK(cudaStreamWaitEvent(plain, timed, 0) == cudaSuccess);
    CHECK(cudaStreamWaitEvent(plain, untimed) == cudaSuccess);
    CHECK(cudaStreamWaitEvent(plain, nullptr, 0) == cudaErrorInvalidResourceHandle);
    CHECK(cudaEventQuery(nullptr) == cudaErrorInvalidResourceHandle);
    float ms = -1.0f;
    CHECK(cudaEventElapsedTime(&ms, timed, untimed) == cudaErrorInvalidResourceHandle);  // no timing
    CHECK(cudaEventElapsedTime(&ms, timed, timed) == cudaSuccess);
    CHECK(ms == 0.0f);
    (void)cudaGetLastError();

    CHECK(cudaEventDestroy(timed) == cudaSuccess);
    CHECK(cudaEventDestroy(untimed) == cudaSuccess);
    CHECK(cudaEventDestroy(never) == cudaSuccess);
    CHECK(cudaStreamDestroy(stream) == cudaSuccess);
    CHECK(cudaStreamDestroy(plain) == cudaSuccess);
}

TEST_CASE("managed memory written by a kernel is read by the host", "[emu][api]") {
    const int n = 1000;
    int* data = nullptr;
    REQUIRE(cudaMallocManaged(&data, n * sizeof(int)) == cudaSuccess);
    REQUIRE(data != nullptr);
    CHECK(reinterpret_cast<std::uintptr_t>(data) % 256 == 0);
    for (int i = 0; i < n; ++i) data[i] = -1;  // the host writes it directly
    emu_api_test::launch_iota(data, n, 42);
    COURSE_LAUNCH_CHECK();
    for (int i = 0; i < n; ++i) {
        CAPTURE(i);
        REQUIRE(data[i] == 42 + i);
    }
    // It is a device allocation too: copies check its bounds.
    std::vector<int> copy(n);
    CHECK(cudaMemcpy(copy.data(), data, n * sizeof(int), cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK(copy[n - 1] == 42 + n - 1);
    CHECK(cudaMemcpy(copy.data(), data, (n + 1) * sizeof(int), cudaMemcpyDeviceToHost) == cudaErrorInvalidValue);
    CHECK(cudaFree(data) == cudaSuccess);
    CHECK(cudaFree(data) == cudaErrorInvalidValue);

    void* p = nullptr;
    CHECK(cudaMallocManaged(&p, 0) == cudaErrorInvalidValue);
    CHECK(cudaMallocManaged(&p, 64, cudaMemAttachSingle) == cudaErrorInvalidValue);
    REQUIRE(cudaMallocManaged(&p, 64, cudaMemAttachHost) == cudaSuccess);
    CHECK(cudaFree(p) == cudaSuccess);
    (void)cudaGetLastError();
}

TEST_CASE("a kernel writing past the end of a buffer faults with the byte offset in the report", "[emu][memory]") {
    ResetDevice reset;
    float* data = nullptr;
    REQUIRE(cudaMalloc(&data, 1000 * sizeof(float)) == cudaSuccess);
    emu_api_test::launch_write_at(data, 999);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    // 4000 bytes end at a 256-byte boundary only at 4096: index 1024 is the first that faults.
    emu_api_test::launch_write_at(data, 1024);
    REQUIRE(cudaDeviceSynchronize() == cudaErrorIllegalAddress);
    const std::string report = course_emu::last_fault_report();
    CAPTURE(report);
    CHECK(report.find("byte offset 4096 of a 4000-byte device allocation") != std::string::npos);
    CHECK(report.find("96 bytes past its end") != std::string::npos);
    REQUIRE(cudaDeviceReset() == cudaSuccess);
    CHECK(cudaFree(data) == cudaSuccess);
}

TEST_CASE("device printf from a kernel runs", "[emu][api]") {
    emu_api_test::launch_printf(4);
    CHECK(cudaGetLastError() == cudaSuccess);
    CHECK(cudaDeviceSynchronize() == cudaSuccess);
}
