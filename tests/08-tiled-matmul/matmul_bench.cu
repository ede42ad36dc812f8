// Lesson 08 benchmark (GPU only): C = A·B for 4096 x 4096 float matrices.
// One thread per element straight from global memory, your matmul_tiled and
// matmul_register_blocked (or the reference's), variants of the register-
// blocked kernel (double buffering, warp shape, padding, launch bounds,
// 16-wide slabs, cp.async, shared loads pipelined across the barrier,
// 128 x 256 and 256 x 128 block tiles, grouped block order), and cuBLAS
// SGEMM twice: with
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

// Variants of the register-blocked kernel, to measure what each change is
// worth on the same GPU in one run. All arrange their threads as 16 rows
// of threads, each thread computing a micro-tile of C whose rows (columns)
// come in groups of 4, one group per 16 rows (columns) of threads apart
// (the reference's 8 x 8 with 16 x 16 threads: two groups each way, 64
// apart), and store A's slab transposed. The switches, one RbVariant each:
//   slab_k        columns of A (rows of B) per phase, 8 or 16
//   threads       256 (16 x 16) or 128 (16 rows of 8)
//   micro_rows,   the micro-tile, 8 or 16 each way; the block tile of C is
//   micro_cols    that times the threads' rows and columns (128 x 128 for
//                 8 x 8 with 256 threads, 128 x 256 for 8 x 16)
//   double_buffer two pairs of slabs and one barrier per phase, instead of
//                 one pair and two barriers
//   async_copy    (with double_buffer) the next slabs copied from global
//                 into the other pair by cp.async, not staged in registers
//   pipelined     (with double_buffer) each k's values of A and B are read
//                 from shared memory into registers during the previous k's
//                 FMAs, and k = 0 of the next pair during the last k's, after
//                 the barrier: no FMA waits for a shared load, and the phase
//                 loop is unrolled by two so that both pairs' addresses are
//                 constants
//   warp4x8       a warp is a 4 x 8 patch of the 16 x 16 threads, not 2 x 16
//   pad_a         A's transposed slab has rows of 4 more floats (132 for
//                 128), so the two halves of a warp's transposing stores
//                 fall in different banks
//   min_blocks    __launch_bounds__'s minimum of blocks per SM (2: at most
//                 128 registers a thread; 1: up to 255)
//   group_rows    0: blocks take tiles of C row by row (blockIdx as is);
//                 G: down groups of G rows of tiles, column by column (as
//                 lesson 22's kGroupRows), so the blocks running at once
//                 share rows of A and columns of B in L2
// The defaults are the reference's aligned path. Only the float4 path: the
// bench's shape is whole tiles. RbVariant is a kernel's template argument,
// so it is declared outside any namespace: nvcc 13.0's host stubs cannot
// name a class-type template argument whose type is in one.
struct RbVariant {
    int slab_k = 8;
    int threads = 256;
    int micro_rows = 8;
    int micro_cols = 8;
    bool double_buffer = false;
    bool async_copy = false;
    bool pipelined = false;
    bool warp4x8 = false;
    bool pad_a = false;
    int min_blocks = 2;
    int group_rows = 0;
};

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

constexpr int kRbThreadRows = 16;  // rows of threads; threads / 16 columns of them
constexpr int kRbRowGroup = 64;    // distance between a micro-tile's groups of 4 rows: 16 threads x 4
// The variants have no bounds checks: the shape is whole block tiles (up to
// 256 a side) and whole 16-wide slabs.
static_assert(kSize % 256 == 0, "whole tiles and slabs");

template <RbVariant V>
__global__ void __launch_bounds__(V.threads, V.min_blocks)
    matmul_register_blocked_variant(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                                    int M, int K) {
    static_assert(V.slab_k == 8 || V.slab_k == 16, "a thread loads whole float4 of each slab");
    static_assert(V.micro_rows % 4 == 0 && V.micro_cols % 4 == 0, "the micro-tile is groups of 4 rows and columns");
    static_assert(V.double_buffer || !V.async_copy, "the asynchronous copy fills the pair not being read");
    static_assert(!(V.async_copy && V.pipelined), "one way of filling the other pair");
    static_assert(V.double_buffer || !V.pipelined, "the next pair's first values are read across the barrier");
    static_assert(V.threads == 256 || V.threads == 128, "16 rows of 16 or 8 threads");
    constexpr int kThreadCols = V.threads / kRbThreadRows;
    constexpr int kColGroup = kThreadCols * 4;  // distance between a micro-tile's groups of 4 columns
    constexpr int kBlockRows = kRbThreadRows * V.micro_rows;
    constexpr int kBlockCols = kThreadCols * V.micro_cols;
    constexpr int kRowGroups = V.micro_rows / 4;
    constexpr int kColGroups = V.micro_cols / 4;
    constexpr int kBuffers = V.double_buffer ? 2 : 1;
    constexpr int kAStride = kBlockRows + (V.pad_a ? 4 : 0);
    constexpr int kAQuads = kBlockRows * V.slab_k / 4 / V.threads;  // float4 of each slab a thread loads per phase
    constexpr int kBQuads = V.slab_k * kBlockCols / 4 / V.threads;
    __shared__ __align__(16) float a_slab[kBuffers][V.slab_k][kAStride];
    __shared__ __align__(16) float b_slab[kBuffers][V.slab_k][kBlockCols];

    const int tid = threadIdx.x;
    // Which tile of C (see group_rows). Blocks start in the order of their
    // linear index; in a grouped order it walks down group_rows rows of
    // tiles before moving one column on.
    int tile_row = blockIdx.y, tile_col = blockIdx.x;
    if constexpr (V.group_rows > 0) {
        const int tiles_m = gridDim.y, tiles_n = gridDim.x;
        const int linear = blockIdx.y * tiles_n + blockIdx.x;
        const int group = linear / (V.group_rows * tiles_n);
        const int first_row = group * V.group_rows;
        const int rows_in_group = min(tiles_m - first_row, V.group_rows);
        const int in_group = linear - group * V.group_rows * tiles_n;
        tile_row = first_row + in_group % rows_in_group;
        tile_col = in_group / rows_in_group;
    }
    const int block_row = tile_row * kBlockRows;
    const int block_col = tile_col * kBlockCols;
    // Float4 q of a thread: A's row (tid + q * threads) / (slab_k / 4), B's
    // row (tid + q * threads) / (block columns / 4), consecutive threads
    // along each row.
    const auto a_row = [&](int q) { return (tid + q * V.threads) / (V.slab_k / 4); };
    const auto a_col = [&](int q) { return ((tid + q * V.threads) % (V.slab_k / 4)) * 4; };
    const auto b_row = [&](int q) { return (tid + q * V.threads) / (kBlockCols / 4); };
    const auto b_col = [&](int q) { return ((tid + q * V.threads) % (kBlockCols / 4)) * 4; };
    const int warp = tid / 32, lane = tid % 32;
    constexpr int kWarpsPerRow = kThreadCols / 8;  // warp4x8: 4 x 8 patches side by side
    const int ty = V.warp4x8 ? (warp / kWarpsPerRow) * 4 + lane / 8 : tid / kThreadCols;
    const int tx = V.warp4x8 ? (warp % kWarpsPerRow) * 8 + lane % 8 : tid % kThreadCols;

    const auto quad = [](const float* matrix, int cols, int row, int col) {
        return *reinterpret_cast<const float4*>(matrix + static_cast<std::size_t>(row) * cols + col);
    };
    float4 a_next[kAQuads], b_next[kBQuads];
    const auto load = [&](int k0) {
#pragma unroll
        for (int q = 0; q < kAQuads; ++q) a_next[q] = quad(A, M, block_row + a_row(q), k0 + a_col(q));
#pragma unroll
        for (int q = 0; q < kBQuads; ++q) b_next[q] = quad(B, K, k0 + b_row(q), block_col + b_col(q));
    };
    const auto store = [&](int buffer) {
#pragma unroll
        for (int q = 0; q < kAQuads; ++q) {
            a_slab[buffer][a_col(q) + 0][a_row(q)] = a_next[q].x;
            a_slab[buffer][a_col(q) + 1][a_row(q)] = a_next[q].y;
            a_slab[buffer][a_col(q) + 2][a_row(q)] = a_next[q].z;
            a_slab[buffer][a_col(q) + 3][a_row(q)] = a_next[q].w;
        }
#pragma unroll
        for (int q = 0; q < kBQuads; ++q) *reinterpret_cast<float4*>(&b_slab[buffer][b_row(q)][b_col(q)]) = b_next[q];
    };
    // cp.async: 4-byte copies for A (its slab is transposed), 16-byte for B.
    const auto copy_async = [&](int buffer, int k0) {
#pragma unroll
        for (int q = 0; q < kAQuads; ++q) {
            const float* a_src = A + static_cast<std::size_t>(block_row + a_row(q)) * M + k0 + a_col(q);
#pragma unroll
            for (int i = 0; i < 4; ++i) __pipeline_memcpy_async(&a_slab[buffer][a_col(q) + i][a_row(q)], a_src + i, 4);
        }
#pragma unroll
        for (int q = 0; q < kBQuads; ++q) {
            __pipeline_memcpy_async(&b_slab[buffer][b_row(q)][b_col(q)],
                                    B + static_cast<std::size_t>(k0 + b_row(q)) * K + block_col + b_col(q), 16);
        }
        __pipeline_commit();
    };

    // A thread's values of A's column k and B's row k: group g is rows
    // g * 64 + ty * 4 .. + 3 (columns g * kColGroup + tx * 4 .. + 3) of the
    // block tile.
    struct Fragments {
        float4 a[kRowGroups];
        float4 b[kColGroups];
    };
    const auto read_fragments = [&](Fragments& f, int buffer, int k) {
#pragma unroll
        for (int g = 0; g < kRowGroups; ++g) {
            f.a[g] = *reinterpret_cast<const float4*>(&a_slab[buffer][k][g * kRbRowGroup + ty * 4]);
        }
#pragma unroll
        for (int g = 0; g < kColGroups; ++g) {
            f.b[g] = *reinterpret_cast<const float4*>(&b_slab[buffer][k][g * kColGroup + tx * 4]);
        }
    };
    float acc[V.micro_rows][V.micro_cols] = {};
    const auto multiply_add = [&](const Fragments& f) {
        const float* a = reinterpret_cast<const float*>(f.a);
        const float* b = reinterpret_cast<const float*>(f.b);
#pragma unroll
        for (int i = 0; i < V.micro_rows; ++i) {
#pragma unroll
            for (int j = 0; j < V.micro_cols; ++j) acc[i][j] += a[i] * b[j];
        }
    };
    const auto multiply = [&](int buffer) {
#pragma unroll
        for (int k = 0; k < V.slab_k; ++k) {
            Fragments f;
            read_fragments(f, buffer, k);
            multiply_add(f);
        }
    };

    const int phases = M / V.slab_k;
    if constexpr (!V.double_buffer) {
        // The reference's loop: store, barrier, load the next slabs into
        // registers, multiply, barrier.
        load(0);
        for (int phase = 0; phase < phases; ++phase) {
            store(0);
            __syncthreads();
            if (phase + 1 < phases) load((phase + 1) * V.slab_k);
            multiply(0);
            __syncthreads();
        }
    } else if constexpr (V.pipelined) {
        // Phase p reads pair p % 2. Before its last k it stores slab p + 1
        // (in registers since the phase before) into the other pair and
        // loads slab p + 2 into the same registers; then the one barrier,
        // and the last k's FMAs run while the next pair's k = 0 values are
        // read. Safe with one barrier: the other pair was last read in
        // phase p - 1, before that phase's barrier. The loads sit at the
        // barrier on purpose: ptxas moves a global load down towards its
        // use to shorten its registers' life (loaded at the top of the
        // phase, they landed past its middle, or right at the store where
        // a branch held both), but kept them within a few dozen
        // instructions of the barrier (sm_90, CUDA 13), a whole phase of
        // FMAs before their use. The last phases load their own slab again
        // and store it where no one reads: no branch to sink into.
        Fragments f[2];
        load(0);
        store(0);
        load(min(1, phases - 1) * V.slab_k);
        __syncthreads();
        read_fragments(f[0], 0, 0);
        const auto phase_step = [&](int current, int phase) {
#pragma unroll
            for (int k = 0; k < V.slab_k; ++k) {
                if (k + 1 < V.slab_k) {
                    read_fragments(f[(k + 1) % 2], current, k + 1);
                } else {
                    store(1 - current);
                    load(min(phase + 2, phases - 1) * V.slab_k);
                    __syncthreads();
                    read_fragments(f[(k + 1) % 2], 1 - current, 0);
                }
                multiply_add(f[k % 2]);
            }
        };
        static_assert(V.slab_k % 2 == 0, "each phase starts with f[0]");
        for (int phase = 0; phase < phases; phase += 2) {
            phase_step(0, phase);
            if (phase + 1 < phases) phase_step(1, phase + 1);
        }
    } else {
        // One barrier per phase: the pair written during phase p was last
        // read in phase p - 1, which every thread finished before the
        // barrier that ended it.
        if constexpr (V.async_copy) {
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
            if constexpr (V.async_copy) {
                if (more) copy_async(1 - current, (phase + 1) * V.slab_k);
                multiply(current);
                __pipeline_wait_prior(0);
            } else {
                if (more) load((phase + 1) * V.slab_k);
                multiply(current);
                if (more) store(1 - current);
            }
            __syncthreads();
        }
    }

#pragma unroll
    for (int i = 0; i < V.micro_rows; ++i) {
        const int row = block_row + (i / 4) * kRbRowGroup + ty * 4 + i % 4;
#pragma unroll
        for (int g = 0; g < kColGroups; ++g) {
            const int col = block_col + g * kColGroup + tx * 4;
            *reinterpret_cast<float4*>(C + static_cast<std::size_t>(row) * K + col) =
                make_float4(acc[i][g * 4 + 0], acc[i][g * 4 + 1], acc[i][g * 4 + 2], acc[i][g * 4 + 3]);
        }
    }
}

// The block tile of C of a variant, rows and columns.
int block_rows(const RbVariant& v) { return kRbThreadRows * v.micro_rows; }
int block_cols(const RbVariant& v) { return v.threads / kRbThreadRows * v.micro_cols; }

// A variant's row name, from its switches; the reference's shape (128 x 128,
// 8 x 8 a thread, 256 threads) goes unnamed.
std::string variant_name(const RbVariant& v) {
    std::string tile;
    if (v.micro_rows != 8 || v.micro_cols != 8 || v.threads != 256) {
        tile = " " + std::to_string(block_rows(v)) + "x" + std::to_string(block_cols(v)) + " (" +
               std::to_string(v.micro_rows) + "x" + std::to_string(v.micro_cols) + " a thread" +
               (v.threads == 256 ? "" : ", " + std::to_string(v.threads) + " threads") + ")";
    }
    const char* slabs = v.double_buffer ? (v.async_copy ? ", 2 pairs cp.async" : v.pipelined ? ", 2 pairs pipelined"
                                                                                               : ", 2 pairs")
                                        : ", 1 pair";
    return "rb" + tile + " k" + std::to_string(v.slab_k) + slabs + (v.warp4x8 ? ", warp 4x8" : ", warp 2x16") +
           (v.pad_a ? ", A pad" : "") + ", min " + std::to_string(v.min_blocks) + " blocks" +
           (v.group_rows > 0 ? ", groups of " + std::to_string(v.group_rows) + " tile rows" : "");
}

// A variant as a type, so that a generic lambda can instantiate its kernel.
template <RbVariant V>
struct RbTag {
    static constexpr RbVariant value = V;
};

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
    // again with up to 255, then 16-wide slabs and cp.async; then the
    // pipelined ones, wider tiles and grouped block orders.
    const auto add_variant = [&](auto tag) {
        constexpr RbVariant v = decltype(tag)::value;
        // The shape by value: v is this call's local, gone when a row runs.
        const dim3 grid(n / block_cols(v), n / block_rows(v));
        const unsigned threads = static_cast<unsigned>(v.threads);
        variants.push_back({variant_name(v),
                            [&, grid, threads](int s) {
                                matmul_register_blocked_variant<v>
                                    <<<grid, threads>>>(a[s].data(), b[s].data(), c[s].data(), n, n);
                            },
                            false, 0.0});
    };
    // The first rows' switches in a line each: slab, two pairs, cp.async,
    // warp 4 x 8, A padded, minimum blocks per SM.
    constexpr auto rb = [](int slab_k, bool double_buffer, bool async_copy, bool warp4x8, bool pad_a, int min_blocks) {
        return RbVariant{.slab_k = slab_k, .double_buffer = double_buffer, .async_copy = async_copy,
                         .warp4x8 = warp4x8, .pad_a = pad_a, .min_blocks = min_blocks};
    };
    add_variant(RbTag<rb(8, false, false, false, false, 2)>{});  // the reference's aligned path
    add_variant(RbTag<rb(8, false, false, false, true, 2)>{});
    add_variant(RbTag<rb(8, false, false, true, false, 2)>{});
    add_variant(RbTag<rb(8, false, false, true, true, 2)>{});
    add_variant(RbTag<rb(8, true, false, false, false, 2)>{});
    add_variant(RbTag<rb(8, true, false, false, true, 2)>{});
    add_variant(RbTag<rb(8, true, false, true, false, 2)>{});
    add_variant(RbTag<rb(8, true, false, true, true, 2)>{});  // the double-buffered reference of 2026-11-26 (0.77x)
    add_variant(RbTag<rb(8, true, false, false, false, 1)>{});
    add_variant(RbTag<rb(8, true, false, false, true, 1)>{});
    add_variant(RbTag<rb(8, true, false, true, false, 1)>{});
    add_variant(RbTag<rb(8, true, false, true, true, 1)>{});
    add_variant(RbTag<rb(16, false, false, false, false, 2)>{});  // spills a few registers (sm_90, CUDA 13)
    add_variant(RbTag<rb(16, false, false, false, true, 1)>{});
    add_variant(RbTag<rb(16, true, false, false, true, 1)>{});
    add_variant(RbTag<rb(8, true, true, false, false, 2)>{});
    add_variant(RbTag<rb(8, true, true, false, true, 2)>{});
    add_variant(RbTag<rb(8, true, true, true, true, 2)>{});
    add_variant(RbTag<rb(16, true, true, false, true, 1)>{});
    // Pipelined (and the loads issued before the barrier, a whole phase
    // ahead): the best 128 x 128 shape (warp 4 x 8, A padded) with two
    // pairs; then block tiles of 128 x 256 and 256 x 128, where a thread
    // reads 6 float4 from shared memory per k for 128 FMAs (4 for 64 at
    // 8 x 8) and the phase's other instructions serve twice the FMAs; their
    // 128 accumulators need more than 128 registers, so 1 block of 8 warps
    // per SM. The 16-wide slab of 128 x 256 goes unpadded: padded, two pairs
    // pass the 48 KiB of static shared memory. Then the grouped block order,
    // on the best row of the earlier run and on two of these.
    constexpr RbVariant pipelined{.double_buffer = true, .pipelined = true, .warp4x8 = true, .pad_a = true};
    constexpr RbVariant wide{.micro_cols = 16, .double_buffer = true, .pipelined = true, .warp4x8 = true,
                             .pad_a = true, .min_blocks = 1};
    constexpr RbVariant tall{.micro_rows = 16, .double_buffer = true, .pipelined = true, .warp4x8 = true,
                             .pad_a = true, .min_blocks = 1};
    constexpr RbVariant wide_128_threads{.threads = 128, .micro_cols = 16, .double_buffer = true, .pipelined = true,
                                         .warp4x8 = true, .pad_a = true, .min_blocks = 2};
    constexpr RbVariant wide_k16{.slab_k = 16, .micro_cols = 16, .double_buffer = true, .pipelined = true,
                                 .warp4x8 = true, .min_blocks = 1};
    add_variant(RbTag<pipelined>{});  // 128 registers, no spills (sm_90, CUDA 13)
    add_variant(RbTag<wide>{});       // 251 registers, no spills
    add_variant(RbTag<tall>{});       // 255 registers, no spills
    add_variant(RbTag<wide_k16>{});   // 255 registers, 12 bytes spilled
    // 8 x 16 a thread on 128 x 128 with 128 threads: 254 registers, no
    // spills, 2 blocks of 4 warps per SM, each covering the other's barriers.
    add_variant(RbTag<wide_128_threads>{});
    constexpr auto grouped = [](RbVariant v, int group_rows) {
        v.group_rows = group_rows;
        return v;
    };
    add_variant(RbTag<grouped(rb(8, false, false, true, true, 2), 16)>{});
    add_variant(RbTag<grouped(pipelined, 16)>{});
    add_variant(RbTag<grouped(wide, 8)>{});
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
