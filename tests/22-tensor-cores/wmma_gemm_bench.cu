// Lesson 22 benchmark (GPU only): C = A·B at 4096 x 4096 x 4096, 16-bit
// inputs, float C. Your gemm_wmma_simple and gemm_wmma (or the
// reference's) on half and on bfloat16 inputs; the earlier, single-buffered
// reference kernel on half (single_stage_gemm.cuh), the baseline of the
// cp.async pipeline; for the reference only, other configurations of its
// kernel (block and warp tiles, K step, stages, and the order of its work:
// fragments prefetched, copies started in slices, the order of C's tiles),
// each labelled, so that one run compares them with the reference's (the
// candidates for the next reference among them); cuBLAS SGEMM on the same
// values in float (FP32 units, no tensor cores: CUBLAS_PEDANTIC_MATH) for
// comparison, and cuBLAS cublasGemmEx with half inputs, float output and
// float compute (CUBLAS_COMPUTE_32F: tensor cores) last, the baseline the
// ratio column compares with. Every variant is checked on a sample of
// elements against a CPU dot product in double before it is timed.
//
//   lesson22_bench [output.csv]
#include <wmma_gemm.hpp>

#include "cpu_reference.hpp"
#include "single_stage_gemm.cuh"

#include <course/bench.hpp>
#include <course/cublas_check.hpp>
#include <course/device_buffer.hpp>
#include <course/inputs.hpp>

#include <cmath>
#include <cstddef>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#ifdef COURSE_BENCH_OF_REFERENCE
namespace lesson22 {
// Defined by the reference only (solutions/22-tensor-cores/wmma_gemm.cu):
// other configurations of its pipelined kernel, each a label that says what
// it is and a launcher for half inputs.
using TilingRun = std::pair<std::string, void (*)(const __half*, const __half*, float*, int, int, int)>;
std::vector<TilingRun> other_tilings();
}  // namespace lesson22
#endif

namespace {

constexpr int kSize = 4096;    // M = N = K
constexpr int kSamples = 512;  // elements of C checked against the CPU

namespace reference = lesson22_reference;

// k / 128 for k in [-128, 128]: 8 significant bits at most, so the same
// value is exact in float, half and bfloat16, and every variant multiplies
// the same matrices.
std::vector<float> values_exact_in_every_format(std::size_t count, const std::string& label) {
    std::mt19937_64 gen = course::rng(label);
    std::uniform_int_distribution<int> k(-128, 128);
    std::vector<float> v(count);
    for (float& x : v) x = std::ldexp(static_cast<float>(k(gen)), -7);
    return v;
}

template <class T, class Convert>
std::vector<T> converted(const std::vector<float>& v, Convert convert) {
    std::vector<T> out;
    out.reserve(v.size());
    for (const float x : v) out.push_back(convert(x));
    return out;
}

// cuBLAS is column-major: row-major C = A·B is column-major C^T = B^T·A^T,
// so B goes first, then A, with M and N swapped (lesson 14).
void cublas_row_major_sgemm(cublasHandle_t handle, const float* A, const float* B, float* C, int M, int N, int K) {
    const float one = 1.0f, zero = 0.0f;
    COURSE_CUBLAS_CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, B, N, A, K, &zero, C, N));
}

void cublas_row_major_hgemm(cublasHandle_t handle, const __half* A, const __half* B, float* C, int M, int N, int K) {
    const float one = 1.0f, zero = 0.0f;
    COURSE_CUBLAS_CHECK(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, B, CUDA_R_16F, N, A,
                                     CUDA_R_16F, K, &zero, C, CUDA_R_32F, N, CUBLAS_COMPUTE_32F,
                                     CUBLAS_GEMM_DEFAULT));
}

}  // namespace

int main(int argc, char** argv) {
    const std::string csv = argc > 1 ? argv[1] : "lesson22_bench.csv";
    const int n = kSize;
    const std::size_t elements = static_cast<std::size_t>(n) * n;
    const double flops = 2.0 * n * n * static_cast<double>(n);
    // A and B read once (2 bytes a value), C written once (4 bytes).
    const double bytes = static_cast<double>(elements) * (2 + 2 + 4);

    course::Bench bench("22", "C = A·B, 4096 x 4096 x 4096, 16-bit inputs, float C");
    const int sets = bench.rotation_sets(static_cast<std::size_t>(bytes));
    const std::vector<float> host_a = values_exact_in_every_format(elements, "bench A");
    const std::vector<float> host_b = values_exact_in_every_format(elements, "bench B");
    const std::vector<__half> half_a = converted<__half>(host_a, __float2half_rn);
    const std::vector<__half> half_b = converted<__half>(host_b, __float2half_rn);
    const std::vector<__nv_bfloat16> bf16_a = converted<__nv_bfloat16>(host_a, __float2bfloat16_rn);
    const std::vector<__nv_bfloat16> bf16_b = converted<__nv_bfloat16>(host_b, __float2bfloat16_rn);
    std::vector<course::DeviceBuffer<float>> fa, fb, c;
    std::vector<course::DeviceBuffer<__half>> ha, hb;
    std::vector<course::DeviceBuffer<__nv_bfloat16>> ba, bb;
    for (int s = 0; s < sets; ++s) {
        fa.emplace_back(host_a);
        fb.emplace_back(host_b);
        ha.emplace_back(half_a);
        hb.emplace_back(half_b);
        ba.emplace_back(bf16_a);
        bb.emplace_back(bf16_b);
        c.emplace_back(elements);
    }

    const std::vector<int> rows = course::random_values<int>(kSamples, 0, n - 1, "bench rows");
    const std::vector<int> cols = course::random_values<int>(kSamples, 0, n - 1, "bench cols");
    std::vector<double> expected, magnitude;
    for (int s = 0; s < kSamples; ++s) {
        double sum = 0, mag = 0;
        for (int k = 0; k < n; ++k) {
            const double p = static_cast<double>(host_a[static_cast<std::size_t>(rows[s]) * n + k]) *
                             host_b[static_cast<std::size_t>(k) * n + cols[s]];
            sum += p;
            mag += std::fabs(p);
        }
        expected.push_back(sum);
        magnitude.push_back(mag);
    }

    const course::CublasHandle fp32, tensor;
    COURSE_CUBLAS_CHECK(cublasSetMathMode(fp32.get(), CUBLAS_PEDANTIC_MATH));  // FP32 FMAs only
    COURSE_CUBLAS_CHECK(cublasSetMathMode(tensor.get(), CUBLAS_DEFAULT_MATH));

    struct Variant {
        std::string name;
        std::function<void(int)> run;
        bool library;
    };
    std::vector<Variant> variants{
        {course::implementation_label("gemm_wmma_simple") + ", half",
         [&](int s) { lesson22::gemm_wmma_simple(ha[s].data(), hb[s].data(), c[s].data(), n, n, n); }, false},
        {"earlier reference gemm_wmma, single-buffered (no cp.async), half",
         [&](int s) { lesson22_bench::gemm_wmma_single_stage(ha[s].data(), hb[s].data(), c[s].data(), n, n, n); },
         false},
        {course::implementation_label("gemm_wmma") + ", half",
         [&](int s) { lesson22::gemm_wmma(ha[s].data(), hb[s].data(), c[s].data(), n, n, n); }, false},
        {course::implementation_label("gemm_wmma") + ", bfloat16",
         [&](int s) { lesson22::gemm_wmma(ba[s].data(), bb[s].data(), c[s].data(), n, n, n); }, false},
        // Added before the tensor-core baseline, so that every ratio compares with cublasGemmEx.
        {"cuBLAS SGEMM, FP32 (pedantic math, no tensor cores)",
         [&](int s) { cublas_row_major_sgemm(fp32.get(), fa[s].data(), fb[s].data(), c[s].data(), n, n, n); }, true},
        {"cuBLAS cublasGemmEx, half in, float out, CUBLAS_COMPUTE_32F (tensor cores)",
         [&](int s) { cublas_row_major_hgemm(tensor.get(), ha[s].data(), hb[s].data(), c[s].data(), n, n, n); },
         true},
    };
#ifdef COURSE_BENCH_OF_REFERENCE
    for (const lesson22::TilingRun& tiling : lesson22::other_tilings()) {
        const auto run = tiling.second;
        variants.insert(variants.end() - 2,
                        {"reference gemm_wmma, " + tiling.first + " (other configuration), half",
                         [&, run](int s) { run(ha[s].data(), hb[s].data(), c[s].data(), n, n, n); }, false});
    }
#endif

    for (const Variant& v : variants) {
        const auto check = [&]() -> std::string {
            c[0].poison();
            v.run(0);
            COURSE_CUDA_CHECK(cudaGetLastError());
            const std::vector<float> got = c[0].download();
            for (int s = 0; s < kSamples; ++s) {
                const std::size_t i = static_cast<std::size_t>(rows[s]), j = static_cast<std::size_t>(cols[s]);
                const float g = got[i * static_cast<std::size_t>(n) + j];
                const double allowed = reference::tolerance(n, magnitude[s]);
                if (!(std::fabs(static_cast<double>(g) - expected[s]) <= allowed)) {
                    return "C[" + std::to_string(i) + "][" + std::to_string(j) + "] = " + std::to_string(g) +
                           ", expected " + std::to_string(expected[s]) + " within " + std::to_string(allowed);
                }
            }
            return "";
        };
        bench.add_checked(v.name, v.library, check, v.run, bytes, flops);
    }
    bench.report(csv);
    return 0;
}
