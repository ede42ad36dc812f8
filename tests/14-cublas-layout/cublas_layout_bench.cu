// Lesson 14 benchmark (GPU only): C = A·B for 4096 x 4096 row-major float
// matrices through cuBLAS, four ways:
//   - gemm_row_major: swapped operands, no copy (yours, or the reference's);
//   - cuBLAS SGEMM on matrices that are column-major already: the baseline
//     (what the swap should cost: the same);
//   - cublasSgeam transposes A and B into column-major scratch, SGEMM, and
//     transposes C back: the copies done by a fast library kernel;
//   - transpose_copy (one cudaMemcpy2DAsync per column) in and out, SGEMM:
//     the copies done the way of Episteme's blog
//     (docs/sources.md).
// Every variant is checked on a sample of elements against a CPU dot
// product in double before it is timed. beta = 0, so C is only written.
//
//   lesson14_bench [output.csv]
#include <cublas_layout.hpp>

#include "cpu_reference.hpp"

#include <course/bench.hpp>
#include <course/cublas_check.hpp>
#include <course/device_buffer.hpp>
#include <course/inputs.hpp>

#include <cmath>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace {

constexpr int kSize = 4096;    // M = N = K
constexpr int kSamples = 512;  // elements of C checked against the CPU
constexpr std::size_t kElements = static_cast<std::size_t>(kSize) * kSize;
// Per run, for every variant: the product's operations, and the bytes it
// needs at the least (A and B read, C written, once). Copies add time, not
// credit, so a slower row shows what its copies cost.
constexpr double kFlops = 2.0 * kSize * kSize * static_cast<double>(kSize);
constexpr double kBytes = 3.0 * static_cast<double>(kElements) * sizeof(float);

// dst (column-major n x n) = src (row-major n x n), with one cublasSgeam:
// cuBLAS sees src as src^T, so dst = (src as seen)^T. beta = 0 and B = dst
// (allowed in place for an untransposed B), so B is not read.
void geam_transpose(cublasHandle_t handle, float* dst, const float* src, int n) {
    const float one = 1.0f, zero = 0.0f;
    COURSE_CUBLAS_CHECK(cublasSgeam(handle, CUBLAS_OP_T, CUBLAS_OP_N, n, n, &one, src, n, &zero, dst, n, dst, n));
}

// Column-major C = A·B, the way cuBLAS is meant to be called.
void column_major_sgemm(cublasHandle_t handle, const float* A, const float* B, float* C, int n) {
    const float one = 1.0f, zero = 0.0f;
    COURSE_CUBLAS_CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, A, n, B, n, &zero, C, n));
}

}  // namespace

int main(int argc, char** argv) {
    const int n = kSize;
    const std::size_t elements = kElements;
    course::Bench bench("14", "row-major C = A·B through cuBLAS, 4096 x 4096 x 4096 floats");
    const int sets = bench.rotation_sets(3 * elements * sizeof(float));
    const std::vector<float> host_a = course::random_values<float>(elements, -1.0f, 1.0f, "bench A");
    const std::vector<float> host_b = course::random_values<float>(elements, -1.0f, 1.0f, "bench B");
    // Row-major A, B, C, and column-major copies of them (scratch for the
    // copying variants, the inputs of the baseline).
    std::vector<course::DeviceBuffer<float>> a, b, c, a_cm, b_cm, c_cm;
    course::CublasHandle handle;
    for (int s = 0; s < sets; ++s) {
        a.emplace_back(host_a);
        b.emplace_back(host_b);
        c.emplace_back(elements);
        a_cm.emplace_back(elements);
        b_cm.emplace_back(elements);
        c_cm.emplace_back(elements);
        geam_transpose(handle.get(), a_cm[s].data(), a[s].data(), n);
        geam_transpose(handle.get(), b_cm[s].data(), b[s].data(), n);
    }
    COURSE_CUDA_CHECK(cudaDeviceSynchronize());

    // The elements checked, and their CPU values: (A·B)_ij in double.
    const std::vector<int> rows = course::random_values<int>(kSamples, 0, n - 1, "bench rows");
    const std::vector<int> cols = course::random_values<int>(kSamples, 0, n - 1, "bench cols");
    std::vector<double> expected(kSamples), magnitude(kSamples);
    for (int s = 0; s < kSamples; ++s) {
        for (int l = 0; l < n; ++l) {
            const double product = static_cast<double>(host_a[lesson14::reference::at(rows[s], l, n)]) *
                                   host_b[lesson14::reference::at(l, cols[s], n)];
            expected[s] += product;
            magnitude[s] += std::fabs(product);
        }
    }

    struct Variant {
        std::string name;
        bool library;
        bool column_major_result;  // C lands in c_cm (column-major), not in c (row-major)
        std::function<void(int)> run;
    };
    cublasHandle_t h = handle.get();
    const std::vector<Variant> variants{
        {course::implementation_label("gemm_row_major") + ": swapped operands, no copy", false, false,
         [&](int s) { lesson14::gemm_row_major(h, n, n, n, 1.0f, a[s].data(), n, b[s].data(), n, 0.0f, c[s].data(), n); }},
        {"cuBLAS SGEMM on column-major data (no layout change)", true, true,
         [&](int s) { column_major_sgemm(h, a_cm[s].data(), b_cm[s].data(), c_cm[s].data(), n); }},
        {"cublasSgeam transposes in and out + SGEMM", false, false,
         [&](int s) {
             geam_transpose(h, a_cm[s].data(), a[s].data(), n);
             geam_transpose(h, b_cm[s].data(), b[s].data(), n);
             column_major_sgemm(h, a_cm[s].data(), b_cm[s].data(), c_cm[s].data(), n);
             geam_transpose(h, c[s].data(), c_cm[s].data(), n);
         }},
        {course::implementation_label("transpose_copy") + " (cudaMemcpy2D per column) in and out + SGEMM", false,
         false,
         [&](int s) {
             lesson14::transpose_copy(a_cm[s].data(), n, a[s].data(), n, n, n);
             lesson14::transpose_copy(b_cm[s].data(), n, b[s].data(), n, n, n);
             column_major_sgemm(h, a_cm[s].data(), b_cm[s].data(), c_cm[s].data(), n);
             lesson14::transpose_copy(c[s].data(), n, c_cm[s].data(), n, n, n);
         }},
    };

    for (const Variant& v : variants) {
        const auto check = [&]() -> std::string {
            course::DeviceBuffer<float>& out = v.column_major_result ? c_cm[0] : c[0];
            out.poison();
            v.run(0);
            COURSE_CUDA_CHECK(cudaGetLastError());
            const std::vector<float> got = out.download();
            for (int s = 0; s < kSamples; ++s) {
                const int i = rows[s], j = cols[s];
                const float g = v.column_major_result ? got[lesson14::reference::at(j, i, n)]
                                                      : got[lesson14::reference::at(i, j, n)];
                const double allowed = lesson14::reference::tolerance(n, magnitude[s]);
                if (!(std::fabs(static_cast<double>(g) - expected[s]) <= allowed)) {
                    return "C[" + std::to_string(i) + "][" + std::to_string(j) + "] = " + std::to_string(g) +
                           ", expected " + std::to_string(expected[s]) + " within " + std::to_string(allowed);
                }
            }
            return "";
        };
        bench.add_checked(v.name, v.library, check, v.run, kBytes, kFlops);
    }
    bench.report(argc > 1 ? argv[1] : "lesson14_bench.csv");
    return 0;
}
