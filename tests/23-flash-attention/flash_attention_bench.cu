// Lesson 23 benchmark (GPU only): single-head attention O = softmax(Q·Kᵀ/√d)·V
// for N = 1024, 4096 and 16384, d = 64 and 128, causal and not. Rows: your
// flash_attention (or the reference's), attention_simple where it finishes
// in reasonable time (N <= 4096), and the unfused baseline the ratio column
// compares with:
//   1. S = Q·Kᵀ/√d by cuBLAS cublasGemmEx, half in, float out (N x N floats),
//   2. a row softmax of S (the online softmax of lesson 20: one block per
//      row, running maximum and sum per thread, merged across the block;
//      keys above the diagonal masked when causal), written as half P
//      (N x N halves), with each row's log-sum-exp,
//   3. O = P·V by cublasGemmEx, half in, half out, float accumulation.
// The softmax kernel lives here because a benchmark links only its own
// lesson's code; it is lesson 20's algorithm, reading float and writing half.
//
// Work: 4 N² d flops (two products of N x N x d), half of it when causal
// (the useful part: the unfused baseline computes the whole of S anyway).
// Extra memory besides Q, K, V and O, named in each row: the baseline's S
// and P, N² (4 + 2) bytes; FlashAttention's L, 4 N bytes, plus, where the
// keys are split over blocks, the splits' states: (d + 2) floats per split
// and query row (the reference keeps the largest such buffer any call
// needed). The flash_attention row names the shape and split the launcher
// picked. Every variant is checked on sampled rows against a CPU attention
// in double before it is timed.
//
// Then, at N = 4096 and 16384 (not causal; causal too at N = 4096, d = 64),
// one row per block shape flash_attention can launch (flash_attention_shapes.hpp:
// 16, 32 or 64 query rows per block, 2 or 4 warps per band of 16 rows),
// unsplit, labelled "shape R rows x G key groups x 1 splits"; and at
// N = 4096 the blocks of 32 and 64 rows with their keys split 2 and 4 ways.
// The launcher picks a shape and a split from N, d and the SM count by a
// rule not yet measured, and these rows are what it should follow. (A
// starter runs its flash_attention for every shape: its rows repeat.)
//
//   lesson23_bench [output.csv]
#include <flash_attention.hpp>

#include "cpu_reference.hpp"
#include "flash_attention_shapes.hpp"

#include <course/bench.hpp>
#include <course/cublas_check.hpp>
#include <course/device_buffer.hpp>
#include <course/inputs.hpp>

#include <cmath>
#include <cstddef>
#include <cstdio>
#include <functional>
#include <iterator>
#include <string>
#include <vector>
#include <cuda_fp16.h>

namespace {

namespace reference = lesson23_reference;

constexpr int kSampleRows = 8;  // rows of O checked against the CPU per variant
constexpr int kSoftmaxThreads = 256;

// Running (maximum, sum of exp(x - maximum)) of lesson 20, merged.
struct MaxSum {
    float m, l;
};

__device__ __forceinline__ MaxSum merge(MaxSum a, MaxSum b) {
    const float m = fmaxf(a.m, b.m);
    if (m == -INFINITY) return {m, 0.0f};
    return {m, a.l * __expf(a.m - m) + b.l * __expf(b.m - m)};
}

// One block per row of S (N floats): P = softmax of the row as halves, keys
// j > row masked when causal, L = the row's log-sum-exp. N a multiple of 4.
__global__ void __launch_bounds__(kSoftmaxThreads) softmax_rows_to_half(const float* S, __half* P, float* L, int N,
                                                                        bool causal) {
    __shared__ MaxSum partial[kSoftmaxThreads / 32];
    __shared__ MaxSum row_state;
    const int row = static_cast<int>(blockIdx.x);
    const int visible = causal ? row + 1 : N;
    const float4* s = reinterpret_cast<const float4*>(S + static_cast<std::size_t>(row) * N);
    MaxSum state{-INFINITY, 0.0f};
    for (int q = static_cast<int>(threadIdx.x); q * 4 < visible; q += kSoftmaxThreads) {
        const float4 x = s[q];
        const float xs[4] = {x.x, x.y, x.z, x.w};
        for (int e = 0; e < 4; ++e) {
            if (q * 4 + e < visible) state = merge(state, {xs[e], 1.0f});
        }
    }
    for (int offset = 16; offset > 0; offset /= 2) {
        const MaxSum other{__shfl_xor_sync(0xffffffffu, state.m, offset), __shfl_xor_sync(0xffffffffu, state.l, offset)};
        state = merge(state, other);
    }
    if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = state;
    __syncthreads();
    if (threadIdx.x == 0) {
        MaxSum all = partial[0];
        for (int w = 1; w < kSoftmaxThreads / 32; ++w) all = merge(all, partial[w]);
        row_state = all;
        L[row] = all.m + logf(all.l);
    }
    __syncthreads();
    const MaxSum all = row_state;
    const float inv_l = 1.0f / all.l;
    __half2* p = reinterpret_cast<__half2*>(P + static_cast<std::size_t>(row) * N);
    for (int q = static_cast<int>(threadIdx.x); q * 4 < N; q += kSoftmaxThreads) {
        const float4 x = s[q];
        const int j = q * 4;
        const float p0 = j < visible ? __expf(x.x - all.m) * inv_l : 0.0f;
        const float p1 = j + 1 < visible ? __expf(x.y - all.m) * inv_l : 0.0f;
        const float p2 = j + 2 < visible ? __expf(x.z - all.m) * inv_l : 0.0f;
        const float p3 = j + 3 < visible ? __expf(x.w - all.m) * inv_l : 0.0f;
        p[2 * q] = __floats2half2_rn(p0, p1);
        p[2 * q + 1] = __floats2half2_rn(p2, p3);
    }
}

// The unfused attention. cuBLAS is column-major: a row-major M x N matrix is
// its column-major N x M transpose (lesson 14). Row-major S = Q·Kᵀ is
// column-major Sᵀ = K·Qᵀ: K (column-major d x N, read transposed) times Q
// (column-major d x N). Row-major O = P·V is column-major Oᵀ = Vᵀ·Pᵀ.
void unfused_attention(cublasHandle_t handle, const __half* Q, const __half* K, const __half* V, __half* O, float* S,
                       __half* P, float* L, int N, int d, bool causal) {
    const float scale = 1.0f / std::sqrt(static_cast<float>(d)), one = 1.0f, zero = 0.0f;
    COURSE_CUBLAS_CHECK(cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, N, N, d, &scale, K, CUDA_R_16F, d, Q,
                                     CUDA_R_16F, d, &zero, S, CUDA_R_32F, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    softmax_rows_to_half<<<N, kSoftmaxThreads>>>(S, P, L, N, causal);
    COURSE_CUDA_CHECK(cudaGetLastError());
    COURSE_CUBLAS_CHECK(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, d, N, N, &one, V, CUDA_R_16F, d, P,
                                     CUDA_R_16F, N, &zero, O, CUDA_R_16F, d, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

std::vector<__half> to_half(const std::vector<float>& v) {
    std::vector<__half> out;
    out.reserve(v.size());
    for (const float x : v) out.push_back(__float2half_rn(x));
    return out;
}

std::string bytes_text(double bytes) {
    char text[32];
    if (bytes >= 1 << 30) {
        std::snprintf(text, sizeof text, "%.1f GiB", bytes / (1 << 30));
    } else if (bytes >= 1 << 20) {
        std::snprintf(text, sizeof text, "%.1f MiB", bytes / (1 << 20));
    } else {
        std::snprintf(text, sizeof text, "%.0f KiB", bytes / (1 << 10));
    }
    return text;
}

std::string shape_text(lesson23::shapes::Shape shape) {
    return std::to_string(shape.rows_per_block) + " rows x " + std::to_string(shape.key_groups) + " key groups x " +
           std::to_string(shape.splits) + " splits";
}

}  // namespace

int main(int argc, char** argv) {
    const std::string csv = argc > 1 ? argv[1] : "lesson23_bench.csv";
    course::Bench bench("23", "attention O = softmax(Q·Kᵀ/√d)·V, one head, half in and out", 20);
    // The ceilings: the copy bandwidth the table's "of copy" column measures
    // (the unfused baseline is bound by it), and for FlashAttention, bound by
    // arithmetic, the tensor cores' dense FP16 peak with float accumulation.
    std::printf("ceilings: device-to-device copy %.0f GB/s; tensor cores, dense FP16 with float accumulation: "
                "989 TFLOP/s on an H100 SXM (NVIDIA's datasheet; 756 on an H100 PCIe)\n",
                bench.copy_gb_per_s());
    const course::CublasHandle cublas;
    COURSE_CUBLAS_CHECK(cublasSetMathMode(cublas.get(), CUBLAS_DEFAULT_MATH));
    constexpr int kLargest = 16384;
    // The baseline's scratch, once, for the largest N: 1.5 GiB.
    course::DeviceBuffer<float> S(static_cast<std::size_t>(kLargest) * kLargest);
    course::DeviceBuffer<__half> P(static_cast<std::size_t>(kLargest) * kLargest);

    for (const int N : {1024, 4096, 16384}) {
        for (const int d : {64, 128}) {
            const std::size_t elements = static_cast<std::size_t>(N) * static_cast<std::size_t>(d);
            const std::string tag = "N " + std::to_string(N) + " d " + std::to_string(d);
            const std::vector<float> q = reference::half_exact_values(elements, 1.0, 10, "bench Q " + tag);
            const std::vector<float> k = reference::half_exact_values(elements, 1.0, 10, "bench K " + tag);
            const std::vector<float> v = reference::half_exact_values(elements, 1.0, 10, "bench V " + tag);
            const double io_bytes = 4.0 * static_cast<double>(elements) * sizeof(__half) + 4.0 * N;
            const int sets = bench.rotation_sets(static_cast<std::size_t>(io_bytes));
            std::vector<course::DeviceBuffer<__half>> dq, dk, dv, dout;
            std::vector<course::DeviceBuffer<float>> dl;
            for (int s = 0; s < sets; ++s) {
                dq.emplace_back(to_half(q));
                dk.emplace_back(to_half(k));
                dv.emplace_back(to_half(v));
                dout.emplace_back(elements);
                dl.emplace_back(static_cast<std::size_t>(N));
            }
            std::vector<std::size_t> rows;
            for (int r = 0; r < kSampleRows; ++r) rows.push_back(static_cast<std::size_t>(r) * (N - 1) / (kSampleRows - 1));

            for (const bool causal : {false, true}) {
                const reference::Attention expected = reference::attention_of_rows(q, k, v, N, d, causal, rows);
                const double nn = static_cast<double>(N) * N;
                const double flops = 4.0 * nn * d * (causal ? 0.5 : 1.0);
                const double scratch = nn * (sizeof(float) + sizeof(__half));
                bench.set_group(tag + (causal ? " causal" : ""));
                const lesson23::shapes::Shape picked = lesson23::shapes::launcher_shape(N, d);
                // FlashAttention's extra memory: L, and the splits' states where the keys are split.
                const auto flash_extra = [N, d](lesson23::shapes::Shape shape) {
                    return 4.0 * N + static_cast<double>(lesson23::shapes::scratch_bytes(shape, N, d));
                };
                std::printf("N = %d, d = %d, %s: extra memory of the unfused baseline (S and P) %s, of "
                            "FlashAttention (L, and the splits' states) %s\n",
                            N, d, causal ? "causal" : "not causal", bytes_text(scratch).c_str(),
                            bytes_text(flash_extra(picked)).c_str());

                const auto check = [&](const std::function<void(int)>& run) {
                    return [&, run]() -> std::string {
                        dout[0].poison();
                        run(0);
                        COURSE_CUDA_CHECK(cudaGetLastError());
                        COURSE_CUDA_CHECK(cudaDeviceSynchronize());
                        const std::vector<__half> got = dout[0].download();
                        for (std::size_t r = 0; r < rows.size(); ++r) {
                            for (int c = 0; c < d; ++c) {
                                const std::size_t at = r * static_cast<std::size_t>(d) + static_cast<std::size_t>(c);
                                const double g = __half2float(got[rows[r] * static_cast<std::size_t>(d) +
                                                                   static_cast<std::size_t>(c)]);
                                if (!(std::fabs(g - expected.o[at]) <= expected.tolerance[at])) {
                                    return "O[" + std::to_string(rows[r]) + "][" + std::to_string(c) +
                                           "] = " + std::to_string(g) + ", expected " +
                                           std::to_string(expected.o[at]) + " within " +
                                           std::to_string(expected.tolerance[at]);
                                }
                            }
                        }
                        return "";
                    };
                };
                const std::string when = tag + (causal ? " causal" : "");
                const std::function<void(int)> flash = [&, N, d, causal](int s) {
                    lesson23::flash_attention(dq[s].data(), dk[s].data(), dv[s].data(), dout[s].data(),
                                              dl[s].data(), N, d, causal);
                };
                bench.add_checked(course::implementation_label("flash_attention") + ", " + when + " (" +
                                      shape_text(picked) + "; extra " + bytes_text(flash_extra(picked)) + ")",
                                  false, check(flash), flash, io_bytes, flops);
                if (N >= 4096 && (!causal || (N == 4096 && d == 64))) {
                    std::vector<lesson23::shapes::Shape> shapes(std::begin(lesson23::shapes::kShapes),
                                                                std::end(lesson23::shapes::kShapes));
                    if (N == 4096) {
                        for (const int splits : lesson23::shapes::kSplits) {
                            for (const lesson23::shapes::Shape block : lesson23::shapes::kShapes) {
                                if (block.rows_per_block >= 32) {
                                    shapes.push_back({block.rows_per_block, block.key_groups, splits});
                                }
                            }
                        }
                    }
                    for (const lesson23::shapes::Shape shape : shapes) {
                        const std::function<void(int)> shaped = [&, N, d, causal, shape](int s) {
                            lesson23::shapes::flash_attention_shape(shape, dq[s].data(), dk[s].data(), dv[s].data(),
                                                                    dout[s].data(), dl[s].data(), N, d, causal);
                        };
                        bench.add_checked(course::implementation_label("flash_attention") + " shape " +
                                              shape_text(shape) + ", " + when + " (extra " +
                                              bytes_text(flash_extra(shape)) + ")",
                                          false, check(shaped), shaped, io_bytes, flops);
                    }
                }
                if (N <= 4096) {
                    const std::function<void(int)> simple = [&, N, d, causal](int s) {
                        lesson23::attention_simple(dq[s].data(), dk[s].data(), dv[s].data(), dout[s].data(),
                                                   dl[s].data(), N, d, causal);
                    };
                    bench.add_checked(course::implementation_label("attention_simple") + ", " + when, false,
                                      check(simple), simple, io_bytes, flops);
                }
                const std::function<void(int)> unfused = [&, N, d, causal](int s) {
                    unfused_attention(cublas.get(), dq[s].data(), dk[s].data(), dv[s].data(), dout[s].data(),
                                      S.data(), P.data(), dl[s].data(), N, d, causal);
                };
                // S written, read twice; P written and read.
                bench.add_checked("unfused: cuBLAS GEMM, softmax, cuBLAS GEMM, " + when + " (extra " +
                                      bytes_text(scratch) + ")",
                                  true, check(unfused), unfused, io_bytes + nn * (3 * 4 + 2 * 2), flops);
            }
        }
    }
    bench.report(csv);
    return 0;
}
