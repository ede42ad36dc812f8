// Lesson 08 benchmark (GPU only): C = A·B for 4096 x 4096 float matrices.
// One thread per element straight from global memory, your matmul_tiled and
// matmul_register_blocked (or the reference's), variants of the register-
// blocked kernel (double buffering, warp shape, padding, launch bounds,
// 16-wide slabs, cp.async), and cuBLAS SGEMM twice: with
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

#include <cuda_pipeline.h>

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

// Variants of the register-blocked kernel, to measure what each change is
// worth on the same GPU in one run. All share the reference's 128 x 128
// block tiles of C, 256 threads and 8 x 8 micro-tiles (rows and columns in
// two groups of 4, 64 apart) and A's slab stored transposed; the switches:
//   kSlabK        columns of A (rows of B) per phase, 8 or 16
//   kDoubleBuffer two pairs of slabs and one barrier per phase, instead of
//                 one pair and two barriers
//   kAsyncCopy    (with kDoubleBuffer) the next slabs copied from global
//                 into the other pair by cp.async, not staged in registers
//   kWarp4x8      a warp is a 4 x 8 patch of the 16 x 16 threads, not 2 x 16
//   kPadA         A's transposed slab has rows of 132 floats, not 128
//   kMinBlocks    __launch_bounds__'s minimum of blocks per SM (2: at most
//                 128 registers a thread; 1: up to 255)
// With 8, false, false, false, false, 2 it is the reference's aligned path.
// Only the float4 path: the bench's shape is whole tiles.
constexpr int kRbBlock = 128;
constexpr int kRbHalf = kRbBlock / 2;
constexpr int kRbThreads = 256;
static_assert(kSize % kRbBlock == 0 && kSize % 16 == 0, "the variants have no bounds checks");

template <int kSlabK, bool kDoubleBuffer, bool kAsyncCopy, bool kWarp4x8, bool kPadA, int kMinBlocks>
__global__ void __launch_bounds__(kRbThreads, kMinBlocks)
    matmul_register_blocked_variant(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                                    int M, int K) {
    static_assert(kSlabK == 8 || kSlabK == 16, "a thread loads kSlabK / 8 float4 of each slab");
    static_assert(kDoubleBuffer || !kAsyncCopy, "the asynchronous copy fills the pair not being read");
    constexpr int kBuffers = kDoubleBuffer ? 2 : 1;
    constexpr int kAStride = kRbBlock + (kPadA ? 4 : 0);
    constexpr int kQuads = kSlabK / 8;  // float4 of each slab a thread loads per phase
    __shared__ __align__(16) float a_slab[kBuffers][kSlabK][kAStride];
    __shared__ __align__(16) float b_slab[kBuffers][kSlabK][kRbBlock];

    const int tid = threadIdx.x;
    const int block_row = blockIdx.y * kRbBlock;
    const int block_col = blockIdx.x * kRbBlock;
    // Float4 q of a thread: A's row (tid + q * 256) / (kSlabK / 4), B's row
    // (tid + q * 256) / 32, consecutive threads along each row.
    const auto a_row = [&](int q) { return (tid + q * kRbThreads) / (kSlabK / 4); };
    const auto a_col = [&](int q) { return ((tid + q * kRbThreads) % (kSlabK / 4)) * 4; };
    const auto b_row = [&](int q) { return (tid + q * kRbThreads) / 32; };
    const auto b_col = [&](int q) { return ((tid + q * kRbThreads) % 32) * 4; };
    const int warp = tid / 32, lane = tid % 32;
    const int ty = kWarp4x8 ? (warp / 2) * 4 + lane / 8 : tid / 16;
    const int tx = kWarp4x8 ? (warp % 2) * 8 + lane % 8 : tid % 16;

    const auto quad = [](const float* matrix, int cols, int row, int col) {
        return *reinterpret_cast<const float4*>(matrix + static_cast<std::size_t>(row) * cols + col);
    };
    float4 a_next[kQuads], b_next[kQuads];
    const auto load = [&](int k0) {
#pragma unroll
        for (int q = 0; q < kQuads; ++q) {
            a_next[q] = quad(A, M, block_row + a_row(q), k0 + a_col(q));
            b_next[q] = quad(B, K, k0 + b_row(q), block_col + b_col(q));
        }
    };
    const auto store = [&](int buffer) {
#pragma unroll
        for (int q = 0; q < kQuads; ++q) {
            a_slab[buffer][a_col(q) + 0][a_row(q)] = a_next[q].x;
            a_slab[buffer][a_col(q) + 1][a_row(q)] = a_next[q].y;
            a_slab[buffer][a_col(q) + 2][a_row(q)] = a_next[q].z;
            a_slab[buffer][a_col(q) + 3][a_row(q)] = a_next[q].w;
            *reinterpret_cast<float4*>(&b_slab[buffer][b_row(q)][b_col(q)]) = b_next[q];
        }
    };
    // cp.async: 4-byte copies for A (its slab is transposed), 16-byte for B.
    const auto copy_async = [&](int buffer, int k0) {
#pragma unroll
        for (int q = 0; q < kQuads; ++q) {
            const float* a_src = A + static_cast<std::size_t>(block_row + a_row(q)) * M + k0 + a_col(q);
#pragma unroll
            for (int i = 0; i < 4; ++i) __pipeline_memcpy_async(&a_slab[buffer][a_col(q) + i][a_row(q)], a_src + i, 4);
            __pipeline_memcpy_async(&b_slab[buffer][b_row(q)][b_col(q)],
                                    B + static_cast<std::size_t>(k0 + b_row(q)) * K + block_col + b_col(q), 16);
        }
        __pipeline_commit();
    };

    float acc[8][8] = {};
    const auto multiply = [&](int buffer) {
#pragma unroll
        for (int k = 0; k < kSlabK; ++k) {
            const float4 a_lo = *reinterpret_cast<const float4*>(&a_slab[buffer][k][ty * 4]);
            const float4 a_hi = *reinterpret_cast<const float4*>(&a_slab[buffer][k][kRbHalf + ty * 4]);
            const float4 b_lo = *reinterpret_cast<const float4*>(&b_slab[buffer][k][tx * 4]);
            const float4 b_hi = *reinterpret_cast<const float4*>(&b_slab[buffer][k][kRbHalf + tx * 4]);
            const float a[8] = {a_lo.x, a_lo.y, a_lo.z, a_lo.w, a_hi.x, a_hi.y, a_hi.z, a_hi.w};
            const float b[8] = {b_lo.x, b_lo.y, b_lo.z, b_lo.w, b_hi.x, b_hi.y, b_hi.z, b_hi.w};
#pragma unroll
            for (int i = 0; i < 8; ++i) {
#pragma unroll
                for (int j = 0; j < 8; ++j) acc[i][j] += a[i] * b[j];
            }
        }
    };

    const int phases = M / kSlabK;
    if constexpr (!kDoubleBuffer) {
        // The reference's loop: store, barrier, load the next slabs into
        // registers, multiply, barrier.
        load(0);
        for (int phase = 0; phase < phases; ++phase) {
            store(0);
            __syncthreads();
            if (phase + 1 < phases) load((phase + 1) * kSlabK);
            multiply(0);
            __syncthreads();
        }
    } else {
        // One barrier per phase: the pair written during phase p was last
        // read in phase p - 1, which every thread finished before the
        // barrier that ended it.
        if constexpr (kAsyncCopy) {
            copy_async(0, 0);
            __pipeline_wait_prior(0);
        } else {
            load(0);
            store(0);
        }
        __syncthreads();
        for (int phase = 0; phase < phases; ++phase) {
            const int current = phase % 2;
            const bool more = phase + 1 < phases;
            if constexpr (kAsyncCopy) {
                if (more) copy_async(1 - current, (phase + 1) * kSlabK);
                multiply(current);
                __pipeline_wait_prior(0);
            } else {
                if (more) load((phase + 1) * kSlabK);
                multiply(current);
                if (more) store(1 - current);
            }
            __syncthreads();
        }
    }

    for (int i = 0; i < 8; ++i) {
        const int row = block_row + (i < 4 ? ty * 4 + i : kRbHalf + ty * 4 + (i - 4));
        for (int half = 0; half < 2; ++half) {
            const int col = block_col + half * kRbHalf + tx * 4;
            *reinterpret_cast<float4*>(C + static_cast<std::size_t>(row) * K + col) =
                make_float4(acc[i][half * 4 + 0], acc[i][half * 4 + 1], acc[i][half * 4 + 2], acc[i][half * 4 + 3]);
        }
    }
}

// A variant's row name, from its switches.
std::string variant_name(int slab_k, bool double_buffer, bool async_copy, bool warp4x8, bool pad_a, int min_blocks) {
    const char* slabs = double_buffer ? (async_copy ? ", 2 pairs cp.async" : ", 2 pairs") : ", 1 pair";
    return "rb k" + std::to_string(slab_k) + slabs +
           (warp4x8 ? ", warp 4x8" : ", warp 2x16") + (pad_a ? ", A pad" : "") + ", min " + std::to_string(min_blocks) +
           " blocks";
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
    std::vector<Variant> variants{
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
    };
    // The register-blocked variants (see matmul_register_blocked_variant):
    // the three changes of the double-buffered version in all 8
    // combinations with at most 128 registers, the double-buffered ones
    // again with up to 255, then 16-wide slabs and cp.async.
    const auto add_variant = [&](auto kernel, int slab_k, bool double_buffer, bool async_copy, bool warp4x8,
                                 bool pad_a, int min_blocks) {
        variants.push_back({variant_name(slab_k, double_buffer, async_copy, warp4x8, pad_a, min_blocks),
                            [&, kernel](int s) {
                                const dim3 grid(n / kRbBlock, n / kRbBlock);
                                kernel<<<grid, kRbThreads>>>(a[s].data(), b[s].data(), c[s].data(), n, n);
                            },
                            false, 0.0});
    };
#define COURSE_RB_VARIANT(SLAB, DOUBLE, ASYNC, WARP, PAD, MIN)                                                     \
    add_variant(matmul_register_blocked_variant<SLAB, DOUBLE, ASYNC, WARP, PAD, MIN>, SLAB, DOUBLE, ASYNC, WARP, PAD, \
                MIN)
    COURSE_RB_VARIANT(8, false, false, false, false, 2);  // the reference's aligned path
    COURSE_RB_VARIANT(8, false, false, false, true, 2);
    COURSE_RB_VARIANT(8, false, false, true, false, 2);
    COURSE_RB_VARIANT(8, false, false, true, true, 2);
    COURSE_RB_VARIANT(8, true, false, false, false, 2);
    COURSE_RB_VARIANT(8, true, false, false, true, 2);
    COURSE_RB_VARIANT(8, true, false, true, false, 2);
    COURSE_RB_VARIANT(8, true, false, true, true, 2);  // the double-buffered reference of 2026-11-26 (0.77x)
    COURSE_RB_VARIANT(8, true, false, false, false, 1);
    COURSE_RB_VARIANT(8, true, false, false, true, 1);
    COURSE_RB_VARIANT(8, true, false, true, false, 1);
    COURSE_RB_VARIANT(8, true, false, true, true, 1);
    COURSE_RB_VARIANT(16, false, false, false, false, 2);  // spills a few registers (sm_90, CUDA 13)
    COURSE_RB_VARIANT(16, false, false, false, true, 1);
    COURSE_RB_VARIANT(16, true, false, false, true, 1);
    COURSE_RB_VARIANT(8, true, true, false, false, 2);
    COURSE_RB_VARIANT(8, true, true, false, true, 2);
    COURSE_RB_VARIANT(8, true, true, true, true, 2);
    COURSE_RB_VARIANT(16, true, true, false, true, 1);
#undef COURSE_RB_VARIANT
    variants.insert(variants.end(), {
        // Added last, the FP32 baseline last of all, so that the ratios compare with FP32.
        {"cuBLAS SGEMM with TF32 tensor cores",
         [&](int s) { cublas_row_major_sgemm(tf32.get(), a[s].data(), b[s].data(), c[s].data(), n, n, n); }, true,
         std::ldexp(1.0, -10)},
        {"cuBLAS SGEMM, FP32 (pedantic math)",
         [&](int s) { cublas_row_major_sgemm(fp32.get(), a[s].data(), b[s].data(), c[s].data(), n, n, n); }, true, 0.0},
    });

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
