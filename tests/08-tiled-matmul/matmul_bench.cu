// Lesson 08 benchmark (GPU only): C = A·B for 4096 x 4096 float matrices.
// One thread per element straight from global memory, your matmul_tiled and
// matmul_register_blocked (or the reference's), the earlier reference's
// register-blocked kernel, and cuBLAS SGEMM twice: with
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

// The earlier reference's register-blocked kernel, kept to show what the
// current one's changes are worth on the same GPU: the same 128 x 128 block
// tiles, 8-wide slabs and 8 x 8 micro-tiles, but one pair of slabs (so two
// barriers per phase), warps of 2 x 16 threads, and A's transposed slab
// unpadded. Only its float4 path: the bench's shape is whole tiles.
constexpr int kOldBlock = 128;
constexpr int kOldSlab = 8;
constexpr int kOldHalf = kOldBlock / 2;
static_assert(kSize % kOldBlock == 0, "the earlier reference's row has no bounds checks");

__global__ void __launch_bounds__(256, 2)
    matmul_register_blocked_single_buffer(const float* __restrict__ A, const float* __restrict__ B,
                                          float* __restrict__ C, int M, int K) {
    __shared__ __align__(16) float a_slab[kOldSlab][kOldBlock];
    __shared__ __align__(16) float b_slab[kOldSlab][kOldBlock];
    const int tid = threadIdx.x;
    const int block_row = blockIdx.y * kOldBlock;
    const int block_col = blockIdx.x * kOldBlock;
    const int a_row = tid / 2, a_col = (tid % 2) * 4;
    const int b_row = tid / 32, b_col = (tid % 32) * 4;
    const int tx = tid % 16, ty = tid / 16;
    const auto quad = [](const float* matrix, int cols, int row, int col) {
        return *reinterpret_cast<const float4*>(matrix + static_cast<std::size_t>(row) * cols + col);
    };
    float acc[8][8] = {};
    const int phases = M / kOldSlab;
    float4 a_next = quad(A, M, block_row + a_row, a_col);
    float4 b_next = quad(B, K, b_row, block_col + b_col);
    for (int phase = 0; phase < phases; ++phase) {
        a_slab[a_col + 0][a_row] = a_next.x;
        a_slab[a_col + 1][a_row] = a_next.y;
        a_slab[a_col + 2][a_row] = a_next.z;
        a_slab[a_col + 3][a_row] = a_next.w;
        *reinterpret_cast<float4*>(&b_slab[b_row][b_col]) = b_next;
        __syncthreads();
        if (phase + 1 < phases) {
            const int k0 = (phase + 1) * kOldSlab;
            a_next = quad(A, M, block_row + a_row, k0 + a_col);
            b_next = quad(B, K, k0 + b_row, block_col + b_col);
        }
#pragma unroll
        for (int k = 0; k < kOldSlab; ++k) {
            const float4 a_lo = *reinterpret_cast<const float4*>(&a_slab[k][ty * 4]);
            const float4 a_hi = *reinterpret_cast<const float4*>(&a_slab[k][kOldHalf + ty * 4]);
            const float4 b_lo = *reinterpret_cast<const float4*>(&b_slab[k][tx * 4]);
            const float4 b_hi = *reinterpret_cast<const float4*>(&b_slab[k][kOldHalf + tx * 4]);
            const float a[8] = {a_lo.x, a_lo.y, a_lo.z, a_lo.w, a_hi.x, a_hi.y, a_hi.z, a_hi.w};
            const float b[8] = {b_lo.x, b_lo.y, b_lo.z, b_lo.w, b_hi.x, b_hi.y, b_hi.z, b_hi.w};
            for (int i = 0; i < 8; ++i) {
                for (int j = 0; j < 8; ++j) acc[i][j] += a[i] * b[j];
            }
        }
        __syncthreads();
    }
    for (int i = 0; i < 8; ++i) {
        const int row = block_row + (i < 4 ? ty * 4 + i : kOldHalf + ty * 4 + (i - 4));
        for (int half = 0; half < 2; ++half) {
            const int col = block_col + half * kOldHalf + tx * 4;
            *reinterpret_cast<float4*>(C + static_cast<std::size_t>(row) * K + col) =
                make_float4(acc[i][half * 4 + 0], acc[i][half * 4 + 1], acc[i][half * 4 + 2], acc[i][half * 4 + 3]);
        }
    }
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
        {"register blocked, one pair of slabs (the earlier reference)",
         [&](int s) {
             const dim3 grid(n / kOldBlock, n / kOldBlock);
             matmul_register_blocked_single_buffer<<<grid, 256>>>(a[s].data(), b[s].data(), c[s].data(), n, n);
         }, false, 0.0},
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
