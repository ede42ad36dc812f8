// The emulator's mma.h (nvcuda::wmma): products equal to a CPU product within
// the FP32-accumulation bound, in every layout, with leading dimensions larger
// than the tile, over several mma_sync calls, for half and bfloat16; the
// documented element-to-lane mapping; and a wmma call made by only part of a
// warp reported with its line and lanes.
#include "wmma_kernels.hpp"

#include <course/catch.hpp>
#include <course/cuda_check.hpp>
#include <course/device_buffer.hpp>
#include <course/inputs.hpp>
#include <course/schedules.hpp>

#include <cmath>
#include <string>
#include <vector>

namespace {

using emu_wmma_test::Layout;

struct ResetDevice {
    ~ResetDevice() { (void)cudaDeviceReset(); }
};

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A rows x cols matrix of 16-bit values in [-1, 1), stored as `layout` with leading
// dimension ld; the padding between rows (or columns) holds NaN, which would show in any
// product that read it.
template <class T>
std::vector<T> random_matrix(int rows, int cols, Layout layout, unsigned ld, std::string_view label) {
    const std::vector<float> values = course::random_values<float>(static_cast<std::size_t>(rows * cols), -1.0f, 1.0f, label);
    const std::size_t outer = static_cast<std::size_t>(layout == Layout::row ? rows : cols);
    std::vector<T> m(outer * ld, T(NAN));
    for (int r = 0; r < rows; ++r) {
        for (int c = 0; c < cols; ++c) {
            const std::size_t at = layout == Layout::row ? static_cast<std::size_t>(r) * ld + c
                                                          : static_cast<std::size_t>(c) * ld + r;
            m[at] = T(values[static_cast<std::size_t>(r * cols + c)]);
        }
    }
    return m;
}

template <class T>
double element(const std::vector<T>& m, int r, int c, Layout layout, unsigned ld) {
    return static_cast<float>(m[layout == Layout::row ? static_cast<std::size_t>(r) * ld + c : static_cast<std::size_t>(c) * ld + r]);
}

// The bound every element of an FP32-accumulated product of K terms obeys:
// |computed - exact| <= K * 2^-24 * sum_k |a_ik * b_kj| (the standard bound for
// a float dot product, which a GPU's tensor cores and the emulator both meet).
struct ProductCheck {
    int bad = 0;
    std::string first;
};

template <class T>
ProductCheck check_product(const std::vector<T>& a, Layout la, unsigned lda, const std::vector<T>& b, Layout lb,
                           unsigned ldb, const std::vector<float>& c, unsigned ldc, int m, int n, int k,
                           double unit_roundoff) {
    ProductCheck result;
    for (int i = 0; i < m; ++i) {
        for (int j = 0; j < n; ++j) {
            double exact = 0, magnitude = 0;
            for (int p = 0; p < k; ++p) {
                const double term = element(a, i, p, la, lda) * element(b, p, j, lb, ldb);
                exact += term;  // exact: products of 16-bit values and short sums fit a double
                magnitude += std::fabs(term);
            }
            const double got = c[static_cast<std::size_t>(i) * ldc + j];
            const double bound = k * unit_roundoff * magnitude + 1e-30;
            if (!(std::fabs(got - exact) <= bound) && result.bad++ == 0) {
                result.first = "C[" + std::to_string(i) + "][" + std::to_string(j) + "] = " + std::to_string(got) +
                               ", exact " + std::to_string(exact) + ", bound " + std::to_string(bound);
            }
        }
    }
    return result;
}

const char* name(Layout l) { return l == Layout::row ? "row_major" : "col_major"; }

template <class T>
void check_gemm(int m, int n, int k, Layout la, Layout lb, unsigned pad) {
    const unsigned lda = (la == Layout::row ? k : m) + pad, ldb = (lb == Layout::row ? n : k) + pad, ldc = n + pad;
    CAPTURE(m, n, k, name(la), name(lb), lda, ldb, ldc);
    const std::vector<T> a = random_matrix<T>(m, k, la, lda, "wmma a");
    const std::vector<T> b = random_matrix<T>(k, n, lb, ldb, "wmma b");
    course::DeviceBuffer<T> d_a(a), d_b(b);
    course::DeviceBuffer<float> d_c(std::vector<float>(static_cast<std::size_t>(m) * ldc, NAN));
    emu_wmma_test::launch_gemm(d_a.data(), la, lda, d_b.data(), lb, ldb, d_c.data(), ldc, m, n, k);
    COURSE_LAUNCH_CHECK();
    const std::vector<float> c = d_c.download();
    const ProductCheck check = check_product(a, la, lda, b, lb, ldb, c, ldc, m, n, k, std::ldexp(1.0, -24));
    INFO("first element outside the bound: " << check.first);
    REQUIRE(check.bad == 0);
    for (int i = 0; i < m; ++i) {  // the padding of C is left alone
        for (unsigned j = static_cast<unsigned>(n); j < ldc; ++j) REQUIRE(std::isnan(c[static_cast<std::size_t>(i) * ldc + j]));
    }
}

}  // namespace

TEST_CASE("wmma::mma_sync of half matrices equals the CPU product within the FP32-accumulation bound",
          "[emu][wmma]") {
    const Layout la = GENERATE(Layout::row, Layout::col);
    const Layout lb = GENERATE(Layout::row, Layout::col);
    SECTION("one 16x16x16 tile, ldm 16") { check_gemm<__half>(16, 16, 16, la, lb, 0); }
    SECTION("K = 64 accumulated over 4 mma_sync calls, ldm larger than the matrix (padding 8)") {
        check_gemm<__half>(32, 48, 64, la, lb, 8);
    }
}

TEST_CASE("wmma::mma_sync of bfloat16 matrices equals the CPU product within the FP32-accumulation bound",
          "[emu][wmma][bf16]") {
    const Layout la = GENERATE(Layout::row, Layout::col);
    const Layout lb = GENERATE(Layout::row, Layout::col);
    check_gemm<__nv_bfloat16>(32, 16, 48, la, lb, 8);
}

TEST_CASE("products of small integers come out exact, in every layout", "[emu][wmma]") {
    // Integers in [-4, 4]: every product and sum is exact in float, on a GPU too.
    const int m = 16, n = 32, k = 32;
    std::vector<__half> a(static_cast<std::size_t>(m * k)), b(static_cast<std::size_t>(k * n));
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = __half(static_cast<int>(i * 7 % 9) - 4);
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = __half(static_cast<int>(i * 5 % 9) - 4);
    course::DeviceBuffer<__half> d_a(a), d_b(b);
    course::DeviceBuffer<float> d_c(static_cast<std::size_t>(m * n));
    emu_wmma_test::launch_gemm(d_a.data(), Layout::row, k, d_b.data(), Layout::col, k, d_c.data(), n, m, n, k);
    COURSE_LAUNCH_CHECK();
    const std::vector<float> c = d_c.download();
    for (int i = 0; i < m; ++i) {
        for (int j = 0; j < n; ++j) {
            float exact = 0;
            for (int p = 0; p < k; ++p) {
                exact += static_cast<float>(a[static_cast<std::size_t>(i * k + p)]) *
                         static_cast<float>(b[static_cast<std::size_t>(j * k + p)]);
            }
            CAPTURE(i, j);
            REQUIRE(c[static_cast<std::size_t>(i * n + j)] == exact);
        }
    }
}

TEST_CASE("a __half accumulator holds the product rounded to half once per mma_sync", "[emu][wmma]") {
    const int m = 16, n = 16, k = 32;
    const std::vector<__half> a = random_matrix<__half>(m, k, Layout::row, k, "half acc a");
    const std::vector<__half> b = random_matrix<__half>(k, n, Layout::row, n, "half acc b");
    course::DeviceBuffer<__half> d_a(a), d_b(b), d_c(static_cast<std::size_t>(m * n));
    emu_wmma_test::launch_gemm_half_accumulator(d_a.data(), k, d_b.data(), n, d_c.data(), n, m, n, k);
    COURSE_LAUNCH_CHECK();
    const std::vector<__half> c = d_c.download();
    std::vector<float> c_float(c.size());
    for (std::size_t i = 0; i < c.size(); ++i) c_float[i] = static_cast<float>(c[i]);
    // Each of the k / 16 partial sums is rounded to half: 2^-11 relative per call.
    const ProductCheck check =
        check_product(a, Layout::row, k, b, Layout::row, n, c_float, n, m, n, k, std::ldexp(1.0, -11));
    INFO("first element outside the bound: " << check.first);
    REQUIRE(check.bad == 0);
}

TEST_CASE("an accumulator loads column-major, scales element by element and stores row-major with ldm > 16",
          "[emu][wmma]") {
    const std::vector<__half> a = random_matrix<__half>(16, 16, Layout::row, 16, "scaled a");
    const std::vector<__half> b = random_matrix<__half>(16, 16, Layout::col, 16, "scaled b");
    const unsigned ldc = 20, ldd = 24;
    const std::vector<float> c_values = course::random_values<float>(16 * ldc, -1.0f, 1.0f, "scaled c");
    course::DeviceBuffer<__half> d_a(a), d_b(b);
    course::DeviceBuffer<float> d_c(c_values), d_d(std::vector<float>(16 * ldd, NAN));
    const float alpha = 0.5f;
    emu_wmma_test::launch_scaled_mma(d_a.data(), d_b.data(), d_c.data(), ldc, alpha, d_d.data(), ldd);
    COURSE_LAUNCH_CHECK();
    const std::vector<float> d = d_d.download();
    for (int i = 0; i < 16; ++i) {
        for (int j = 0; j < 16; ++j) {
            double exact = c_values[static_cast<std::size_t>(j) * ldc + i], magnitude = std::fabs(exact);
            for (int p = 0; p < 16; ++p) {
                const double term = element(a, i, p, Layout::row, 16) * element(b, p, j, Layout::col, 16);
                exact += term;
                magnitude += std::fabs(term);
            }
            CAPTURE(i, j);
            REQUIRE(std::fabs(d[static_cast<std::size_t>(i) * ldd + j] - alpha * exact) <=
                    17 * std::ldexp(1.0, -24) * magnitude);
        }
        for (unsigned j = 16; j < ldd; ++j) REQUIRE(std::isnan(d[static_cast<std::size_t>(i) * ldd + j]));
    }
}

TEST_CASE("fragment element x[i] of lane l is element l * num_elements + i of the tile in row-major order",
          "[emu][wmma]") {
    course::DeviceBuffer<float> out(256);
    emu_wmma_test::launch_fragment_mapping(out.data());
    COURSE_LAUNCH_CHECK();
    const std::vector<float> got = out.download();
    for (int e = 0; e < 256; ++e) {
        CAPTURE(e);
        REQUIRE(got[static_cast<std::size_t>(e)] == static_cast<float>((e / 8) * 100 + e % 8));
    }
}

TEST_CASE("a wmma call reached by only half of a warp is reported with its line and the lanes", "[emu][wmma][faults]") {
    course::DeviceBuffer<__half> a(std::vector<__half>(256, __half(1.0f))), b(std::vector<__half>(256, __half(1.0f)));
    course::DeviceBuffer<float> c(256);
    ResetDevice reset;  // after the buffers: the device is reset before they are freed
    course::for_each_schedule([&] {
        (void)cudaDeviceReset();
        const int line = emu_wmma_test::launch_half_warp_wmma(a.data(), b.data(), c.data());
        REQUIRE(cudaDeviceSynchronize() == cudaErrorLaunchFailure);
        const std::string report = course_emu::last_fault_report();
        CAPTURE(report);
        CHECK(contains(report, "wmma_kernels.cu:" + std::to_string(line) + ":"));
        CHECK(contains(report, "wmma::load_matrix_sync must be called by all 32 lanes of the warp together"));
        // Which lanes: those that wait there (0x0000ffff once all of the first half has come), or those
        // that have already exited, depending on the order the schedule runs them.
        CHECK((contains(report, "exited without reaching it while lanes 0x") ||
               contains(report, "but lanes 0xffff0000 of warp 0 have already exited")));
    });
}

TEST_CASE("lanes making the same wmma call from two places (if / else) are reported with both lines",
          "[emu][wmma][faults]") {
    course::DeviceBuffer<__half> a(std::vector<__half>(256, __half(1.0f)));
    course::DeviceBuffer<float> c(32);
    ResetDevice reset;
    const int line = emu_wmma_test::launch_divided_wmma(a.data(), c.data());
    REQUIRE(cudaDeviceSynchronize() == cudaErrorLaunchFailure);
    const std::string report = course_emu::last_fault_report();
    CAPTURE(report);
    CHECK(contains(report, "wmma_kernels.cu:" + std::to_string(line + 2) + ": lanes of warp 0 are divided"));
    CHECK(contains(report, "wait in wmma::load_matrix_sync at "));
    CHECK(contains(report, "wmma_kernels.cu:" + std::to_string(line)));
}

TEST_CASE("wmma in a block whose last warp is partial is reported", "[emu][wmma][faults]") {
    course::DeviceBuffer<__half> a(std::vector<__half>(256, __half(1.0f))), b(std::vector<__half>(256, __half(1.0f)));
    course::DeviceBuffer<float> c(512);
    ResetDevice reset;
    const int line = emu_wmma_test::launch_partial_last_warp_wmma(a.data(), b.data(), c.data());
    REQUIRE(cudaDeviceSynchronize() == cudaErrorLaunchFailure);
    const std::string report = course_emu::last_fault_report();
    CAPTURE(report);
    CHECK(contains(report, "wmma_kernels.cu:" + std::to_string(line) + ":"));
    CHECK(contains(report, "needs all 32 lanes of a warp, but warp 1 of this block has only 16 threads"));
}

TEST_CASE("load_matrix_sync with an ldm that is not a multiple of 16 bytes is reported", "[emu][wmma][faults]") {
    course::DeviceBuffer<__half> a(std::vector<__half>(256, __half(1.0f)));
    course::DeviceBuffer<float> c(32);
    ResetDevice reset;
    const int line = emu_wmma_test::launch_bad_ldm_wmma(a.data(), c.data());
    REQUIRE(cudaDeviceSynchronize() == cudaErrorMisalignedAddress);
    const std::string report = course_emu::last_fault_report();
    CAPTURE(report);
    CHECK(contains(report, "wmma_kernels.cu:" + std::to_string(line) + ":"));
    CHECK(contains(report, "ldm = 12 must be a multiple of 8"));
}

TEST_CASE("a tile past the end of its allocation is reported as an out-of-bounds access", "[emu][wmma][faults]") {
    course::DeviceBuffer<__half> a(std::vector<__half>(256, __half(1.0f)));
    course::DeviceBuffer<float> c(32);
    ResetDevice reset;
    (void)emu_wmma_test::launch_tile_past_end_wmma(a.data(), c.data());
    REQUIRE(cudaDeviceSynchronize() == cudaErrorIllegalAddress);
    const std::string report = course_emu::last_fault_report();
    CAPTURE(report);
    CHECK(contains(report, "out-of-bounds access: byte offset 512 of a 512-byte device allocation"));
    CHECK(contains(report, "tile_past_end_kernel"));
}
