// Lesson 08 benchmark (GPU only): C = A·B for 4096 x 4096 float matrices.
// One thread per element straight from global memory, your matmul_tiled and
// matmul_register_blocked (or the reference's), and cuBLAS SGEMM twice: with
// TF32 tensor cores, and in strict FP32 (CUBLAS_PEDANTIC_MATH), the
// baseline the ratio column compares with. Every variant is checked on a
// sample of elements against a CPU dot product in double before it is timed.
//
//   lesson08_bench [output.csv]
#include <matmul.hpp>

#include "cpu_reference.hpp"

#include <course/bench.hpp>
#include <course/cublas_check.hpp>
#include <course/device_buffer.hpp>
#include <course/inputs.hpp>

#include <cmath>
#include <cstddef>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace {

constexpr int kSize = 4096;    // N = M = K
constexpr int kSamples = 512;  // elements of C checked against the CPU

// The version the lesson starts from: each thread reads its row of A and
// column of B from global memory, 2 loads per multiply-add.
__global__ void matmul_one_thread_per_element(const float* A, const float* B, float* C, int N, int M, int K) {
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= N || col >= K) return;
    float sum = 0.0f;
    for (int k = 0; k < M; ++k) sum += A[static_cast<std::size_t>(row) * M + k] * B[static_cast<std::size_t>(k) * K + col];
    C[static_cast<std::size_t>(row) * K + col] = sum;
}

// cuBLAS is column-major. A row-major matrix read as column-major is its
// transpose, so row-major C = A·B is column-major C^T = B^T·A^T: pass B
// first, then A, with the dimensions swapped to match, and no transposition
// flags.
void cublas_row_major_sgemm(cublasHandle_t handle, const float* A, const float* B, float* C, int N, int M, int K) {
    const float one = 1.0f, zero = 0.0f;
    COURSE_CUBLAS_CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, K, N, M, &one, B, K, A, M, &zero, C, K));
}

}  // namespace

int main(int argc, char** argv) {
    const std::string csv = argc > 1 ? argv[1] : "lesson08_bench.csv";
    const int n = kSize;
    const std::size_t elements = static_cast<std::size_t>(n) * n;
    const double flops = 2.0 * n * n * static_cast<double>(n);  // one multiply and one add per term
    const double bytes = 3.0 * static_cast<double>(elements) * sizeof(float);  // A and B read, C written, once

    course::Bench bench("08", "C = A·B, 4096 x 4096 x 4096 floats");
    const int sets = bench.rotation_sets(3 * elements * sizeof(float));
    const std::vector<float> host_a = course::random_values<float>(elements, -1.0f, 1.0f, "bench A");
    const std::vector<float> host_b = course::random_values<float>(elements, -1.0f, 1.0f, "bench B");
    std::vector<course::DeviceBuffer<float>> a, b, c;
    for (int s = 0; s < sets; ++s) {
        a.emplace_back(host_a);
        b.emplace_back(host_b);
        c.emplace_back(elements);
    }

    // The elements checked, and their CPU values.
    const std::vector<int> rows = course::random_values<int>(kSamples, 0, n - 1, "bench rows");
    const std::vector<int> cols = course::random_values<int>(kSamples, 0, n - 1, "bench cols");
    std::vector<lesson08::reference::Element> expected;
    for (int s = 0; s < kSamples; ++s) {
        expected.push_back(lesson08::reference::element(host_a, host_b, n, n, static_cast<std::size_t>(rows[s]),
                                                        static_cast<std::size_t>(cols[s]), n));
    }

    const course::CublasHandle fp32, tf32;
    COURSE_CUBLAS_CHECK(cublasSetMathMode(fp32.get(), CUBLAS_PEDANTIC_MATH));  // FP32 FMAs only, no tensor cores
    COURSE_CUBLAS_CHECK(cublasSetMathMode(tf32.get(), CUBLAS_TF32_TENSOR_OP_MATH));

    struct Variant {
        std::string name;
        std::function<void(int)> run;  // one product on buffer set s
        bool library;
        double relative_input_error;    // rounding of the inputs before they are multiplied (TF32: 2^-11 each)
    };
    const std::vector<Variant> variants{
        {"one thread per element, global memory only", [&](int s) {
             const dim3 block(32, 8);
             const dim3 grid(n / 32, n / 8);
             matmul_one_thread_per_element<<<grid, block>>>(a[s].data(), b[s].data(), c[s].data(), n, n, n);
         }, false, 0.0},
        {course::implementation_label("matmul_tiled"),
         [&](int s) { lesson08::matmul_tiled(a[s].data(), b[s].data(), c[s].data(), n, n, n); }, false, 0.0},
        {course::implementation_label("matmul_register_blocked"),
         [&](int s) { lesson08::matmul_register_blocked(a[s].data(), b[s].data(), c[s].data(), n, n, n); }, false,
         0.0},
        // Added before the FP32 baseline, so that the ratios compare with FP32.
        {"cuBLAS SGEMM with TF32 tensor cores",
         [&](int s) { cublas_row_major_sgemm(tf32.get(), a[s].data(), b[s].data(), c[s].data(), n, n, n); }, true,
         std::ldexp(1.0, -10)},
        {"cuBLAS SGEMM, FP32 (pedantic math)",
         [&](int s) { cublas_row_major_sgemm(fp32.get(), a[s].data(), b[s].data(), c[s].data(), n, n, n); }, true, 0.0},
    };

    for (const Variant& v : variants) {
        const auto check = [&]() -> std::string {
            c[0].poison();
            v.run(0);
            COURSE_CUDA_CHECK(cudaGetLastError());
            const std::vector<float> got = c[0].download();
            for (int s = 0; s < kSamples; ++s) {
                const std::size_t i = static_cast<std::size_t>(rows[s]), j = static_cast<std::size_t>(cols[s]);
                const float g = got[i * static_cast<std::size_t>(n) + j];
                // FP32: the lesson's tolerance. TF32 rounds A and B to 10-bit
                // mantissas first, which adds up to 2^-10 * sum |a||b|.
                const double allowed = lesson08::reference::tolerance(n, expected[s].magnitude) +
                                       v.relative_input_error * expected[s].magnitude;
                if (!(std::fabs(static_cast<double>(g) - expected[s].value) <= allowed)) {
                    return "C[" + std::to_string(i) + "][" + std::to_string(j) + "] = " + std::to_string(g) +
                           ", expected " + std::to_string(expected[s].value) + " within " + std::to_string(allowed);
                }
            }
            return "";
        };
        bench.add_checked(v.name, v.library, check, v.run, bytes, flops);
    }
    bench.report(csv);
    return 0;
}
