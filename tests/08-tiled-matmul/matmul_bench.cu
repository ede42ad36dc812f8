// Lesson 08 benchmark (GPU only): C = A·B for 4096 x 4096 float matrices.
// One thread per element straight from global memory, your matmul_tiled and
// matmul_register_blocked (or the reference's), variants of the register-
// blocked kernel (double buffering, warp shape, padding, launch bounds,
// 16-wide slabs, cp.async, shared loads pipelined across the barrier,
// 128 x 256 and 256 x 128 block tiles, grouped block order, stream-K on a
// persistent grid, serpentine FMA order, int offsets, cp.async into two
// or three pairs, stores spread over the phase, three shapes of the phase
// loop), and cuBLAS SGEMM twice: with
// TF32 tensor cores, and in strict FP32 (CUBLAS_PEDANTIC_MATH), the
// baseline the ratio column compares with. Every variant is checked on a
// sample of elements against a CPU dot product in double before it is timed.
//
//   lesson08_bench [output.csv]
#include <matmul.hpp>

#include "cpu_reference.hpp"

#include <course/bench.hpp>
#include <course/cuda_check.hpp>
#include <course/cublas_check.hpp>
#include <course/device_buffer.hpp>
#include <course/inputs.hpp>
#include <course/tile_order.hpp>

#include <cuda_pipeline.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

// Variants of the register-blocked kernel, to measure what each change is
// worth on the same GPU in one run. All arrange their threads as 16 rows
// of threads, each thread computing a micro-tile of C whose rows (columns)
// come in groups of 4, one group per 16 rows (columns) of threads apart
// (the first reference's 8 x 8 with 16 x 16 threads: two groups each way,
// 64 apart), and store A's slab transposed. The switches, one RbVariant each:
//   slab_k        columns of A (rows of B) per phase, 8 or 16
//   threads       256 (16 x 16) or 128 (16 rows of 8)
//   micro_rows,   the micro-tile, 8 or 16 each way; the block tile of C is
//   micro_cols    that times the threads' rows and columns (128 x 128 for
//                 8 x 8 with 256 threads, 128 x 256 for 8 x 16)
//   double_buffer two pairs of slabs and one barrier per phase, instead of
//                 one pair and two barriers
//   async_copy    (with double_buffer) the next slabs copied from global
//                 into the other pair by cp.async, not staged in registers
//                 (A's 4 bytes a copy: its slab is transposed)
//   stages        (async_copy with pipelined) pairs of slabs: 2 or 3; at a
//                 phase's barrier the pair just read takes the copies of
//                 the phase `stages` later, so with 3 a copy has two
//                 phases of FMAs to land (cuBLAS's FP32 kernel has 3)
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
//   serpentine    a thread's FMAs of one k walk its micro-tile's rows
//                 alternately left to right and right to left, so that the
//                 FMA after each row's last shares its value of B (the
//                 order of maxas's SGEMM, for the operand reuse cache)
//   stream_k      0: one block per tile of C. Otherwise a persistent grid,
//                 as many blocks as fit at once (SMs x occupancy, queried
//                 when the bench starts), against the wave quantization of
//                 4096^2 / 128^2 = 1024 tiles on 132 x 2 slots (3.88 waves:
//                 the last one 88% full). Stream-K (Osama et al., PPoPP
//                 2023): the tiles' phases, laid end to end, are cut into
//                 one equal run per block; a tile split between blocks is
//                 summed from their partial tiles, in order of k, by
//                 whichever arrives last (a counter per tile: no block
//                 waits for another). 1: every tile so; 2: whole tiles,
//                 round robin, for all full waves but the last, stream-K
//                 over the rest (the paper's "data-parallel + one-tile
//                 stream-K" hybrid: fewer split tiles, less fixup)
//   offsets       the global loads' addresses from one int offset per
//                 float4, set with the tile, plus the phase's, instead of
//                 from the tile's corner, its first phase and the thread's
//                 place in the slab: in a stream-K loop none of these comes
//                 from blockIdx or M, and all take registers through the
//                 FMAs (what ptxas then makes of it differs by variant: see
//                 the rows)
//   spread        (with pipelined) the stores into the other pair and the
//                 next loads one float4 a k (stores from k = 1, loads after
//                 them) instead of all at the barrier; the loads then are
//                 ld.global.cg, which ptxas keeps on their side of it
//   loop          (with pipelined) 0: two phases a turn, the second behind
//                 a branch; 1: two phases a turn and an odd one after the
//                 loop; 2: one phase a turn, its pair chosen at run time
// The defaults are the aligned path of the reference before 2026-11-26 (128 x 128,
// 8 x 8 a thread, one pair of slabs); the reference now is the row
// "128x128 (8x16 a thread, 128 threads) ..., groups of 16 tile rows, odd phase
// after the loop" written out plainly, and compiles to its machine code
// (sm_90, CUDA 13; see the lesson's "The last 2%: machine code"). Only the float4 path: the
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
    bool serpentine = false;
    int stream_k = 0;
    bool offsets = false;
    int stages = 2;
    bool spread = false;
    int loop = 0;
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
static_assert(static_cast<long long>(kSize) * kSize < (1LL << 31), "stream-K's int offsets (see start_tile)");

// What a stream-K variant needs besides the matrices (the others ignore
// it): the tiles of C, how many of them (the first) go whole, round robin,
// and the partial tiles' workspace: two tiles per block (a block's first
// run can end a tile, its last begin one), and one arrival counter per
// tile, all zero between launches (the last to arrive resets its own).
struct RbSchedule {
    int tiles_m = 0;
    int tiles_n = 0;
    int whole_tiles = 0;
    float4* partials = nullptr;
    int* arrivals = nullptr;
};

// The tile (row, column) that tile number `linear` of a tiles_m x tiles_n
// grid computes: row by row, or down groups of group_rows rows (see
// RbVariant::group_rows).
template <int kGroupRows>
__device__ void tile_position(int linear, int tiles_m, int tiles_n, int& tile_row, int& tile_col) {
    if constexpr (kGroupRows > 0) {
        course::grouped_tile(linear, tiles_m, tiles_n, kGroupRows, tile_row, tile_col);
    } else {
        tile_row = linear / tiles_n;
        tile_col = linear % tiles_n;
    }
}

template <RbVariant V>
__global__ void __launch_bounds__(V.threads, V.min_blocks)
    matmul_register_blocked_variant(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                                    int M, int K, RbSchedule schedule) {
    static_assert(V.slab_k == 8 || V.slab_k == 16, "a thread loads whole float4 of each slab");
    static_assert(V.micro_rows % 4 == 0 && V.micro_cols % 4 == 0, "the micro-tile is groups of 4 rows and columns");
    static_assert(V.double_buffer || !V.async_copy, "the asynchronous copy fills the pair not being read");
    static_assert(V.stages == 2 || (V.async_copy && V.pipelined), "more than two pairs: cp.async, read pipelined");
    static_assert(V.double_buffer || !V.pipelined, "the next pair's first values are read across the barrier");
    static_assert(V.threads == 256 || V.threads == 128, "16 rows of 16 or 8 threads");
    static_assert(V.stream_k >= 0 && V.stream_k <= 2, "off, every tile, or after the whole waves");
    constexpr int kThreadCols = V.threads / kRbThreadRows;
    constexpr int kColGroup = kThreadCols * 4;  // distance between a micro-tile's groups of 4 columns
    constexpr int kBlockRows = kRbThreadRows * V.micro_rows;
    constexpr int kBlockCols = kThreadCols * V.micro_cols;
    constexpr int kRowGroups = V.micro_rows / 4;
    constexpr int kColGroups = V.micro_cols / 4;
    constexpr int kBuffers = V.double_buffer ? V.stages : 1;
    constexpr int kAStride = kBlockRows + (V.pad_a ? 4 : 0);
    constexpr int kAQuads = kBlockRows * V.slab_k / 4 / V.threads;  // float4 of each slab a thread loads per phase
    constexpr int kBQuads = V.slab_k * kBlockCols / 4 / V.threads;
    __shared__ __align__(16) float a_slab[kBuffers][V.slab_k][kAStride];
    __shared__ __align__(16) float b_slab[kBuffers][V.slab_k][kBlockCols];

    const int tid = threadIdx.x;
    // The tile of C being computed, and its first phase along M (0 unless
    // a stream-K run starts inside the tile): set before each tile.
    int block_row = 0, block_col = 0, first_phase = 0;
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

    // spread: the loads are ld.global.cg, not the read-only path's
    // ld.global.nc, which ptxas moved past the barrier, down to the stores
    // that use them a k later (sm_90, CUDA 13): a barrier keeps other loads
    // on its side.
    const auto at = [](const float* p) {
        if constexpr (V.spread) {
            return __ldcg(reinterpret_cast<const float4*>(p));
        } else {
            return *reinterpret_cast<const float4*>(p);
        }
    };
    const auto quad = [&](const float* matrix, int cols, int row, int col) {
        return at(matrix + static_cast<std::size_t>(row) * cols + col);
    };
    float4 a_next[kAQuads], b_next[kBQuads];
    // Phase p of the tile's run: columns (first_phase + p) * slab_k on of A.
    // offsets: a thread's float4 q of phase 0 at A + a_start[q] and
    // B + b_start[q], set with the tile (see start_tile).
    int a_start[kAQuads] = {}, b_start[kBQuads] = {};
    // A thread's float4 of a phase's slabs, one at a time: items
    // 0 .. kAQuads - 1 are A's, the rest B's.
    constexpr int kItems = kAQuads + kBQuads;
    const auto load_item = [&](int item, int phase) {
        const int k0 = (first_phase + phase) * V.slab_k;
        if (item < kAQuads) {
            const int q = item;
            if constexpr (V.offsets) {
                a_next[q] = at(A + a_start[q] + phase * V.slab_k);
            } else {
                a_next[q] = quad(A, M, block_row + a_row(q), k0 + a_col(q));
            }
        } else {
            const int q = item - kAQuads;
            if constexpr (V.offsets) {
                b_next[q] = at(B + b_start[q] + phase * V.slab_k * K);
            } else {
                b_next[q] = quad(B, K, k0 + b_row(q), block_col + b_col(q));
            }
        }
    };
    const auto store_item = [&](int item, int buffer) {
        if (item < kAQuads) {
            const int q = item;
            a_slab[buffer][a_col(q) + 0][a_row(q)] = a_next[q].x;
            a_slab[buffer][a_col(q) + 1][a_row(q)] = a_next[q].y;
            a_slab[buffer][a_col(q) + 2][a_row(q)] = a_next[q].z;
            a_slab[buffer][a_col(q) + 3][a_row(q)] = a_next[q].w;
        } else {
            const int q = item - kAQuads;
            *reinterpret_cast<float4*>(&b_slab[buffer][b_row(q)][b_col(q)]) = b_next[q];
        }
    };
    const auto load = [&](int phase) {
#pragma unroll
        for (int item = 0; item < kItems; ++item) load_item(item, phase);
    };
    const auto store = [&](int buffer) {
#pragma unroll
        for (int item = 0; item < kItems; ++item) store_item(item, buffer);
    };
    // cp.async: 4-byte copies for A (its slab is transposed), 16-byte for B.
    const auto copy_async = [&](int buffer, int phase) {
        const int k0 = (first_phase + phase) * V.slab_k;
#pragma unroll
        for (int q = 0; q < kAQuads; ++q) {
            const float* a_src = A + static_cast<std::size_t>(block_row + a_row(q)) * M + k0 + a_col(q);
            if constexpr (V.offsets) a_src = A + a_start[q] + phase * V.slab_k;
#pragma unroll
            for (int i = 0; i < 4; ++i) __pipeline_memcpy_async(&a_slab[buffer][a_col(q) + i][a_row(q)], a_src + i, 4);
        }
#pragma unroll
        for (int q = 0; q < kBQuads; ++q) {
            const float* b_src = B + static_cast<std::size_t>(k0 + b_row(q)) * K + block_col + b_col(q);
            if constexpr (V.offsets) b_src = B + b_start[q] + phase * V.slab_k * K;
            __pipeline_memcpy_async(&b_slab[buffer][b_row(q)][b_col(q)], b_src, 16);
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
            for (int jj = 0; jj < V.micro_cols; ++jj) {
                const int j = V.serpentine && i % 2 == 1 ? V.micro_cols - 1 - jj : jj;
                acc[i][j] += a[i] * b[j];
            }
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

    // The tile's phases first_phase .. first_phase + phases - 1 into acc.
    const auto run_phases = [&](int phases) {
#pragma unroll
        for (int i = 0; i < V.micro_rows; ++i) {
#pragma unroll
            for (int j = 0; j < V.micro_cols; ++j) acc[i][j] = 0.0f;
        }
        if constexpr (!V.double_buffer) {
            // The reference's loop: store, barrier, load the next slabs into
            // registers, multiply, barrier.
            load(0);
            for (int phase = 0; phase < phases; ++phase) {
                store(0);
                __syncthreads();
                if (phase + 1 < phases) load(phase + 1);
                multiply(0);
                __syncthreads();
            }
        } else if constexpr (V.async_copy && V.pipelined) {
            // kBuffers (V.stages) pairs, filled by cp.async, read as the
            // pipelined variant reads them: phase p reads pair p % stages.
            // At its last k, once this thread's copies of phase p + 1 have
            // landed (at most stages - 2 later groups still in flight) and
            // the barrier has seen everyone's, no one reads pair p % stages
            // any more (its last k was read during the k before), so the
            // copies of phase p + stages go there at once: with 3 pairs a
            // copy has two phases of FMAs to land, as cuBLAS's kernel of the
            // same tile gives its copies (three stages of cp.async), without
            // the registers and shared stores of staging through registers.
            constexpr int kStages = kBuffers;
            Fragments f[2];
#pragma unroll
            for (int s = 0; s < kStages; ++s) {
                if (s < phases) {
                    copy_async(s, s);
                } else {
                    __pipeline_commit();  // an empty group: the counts below stay the same
                }
            }
            __pipeline_wait_prior(kStages - 1);
            __syncthreads();
            read_fragments(f[0], 0, 0);
            const auto phase_step = [&](int current, int phase) {
#pragma unroll
                for (int k = 0; k < V.slab_k; ++k) {
                    if (k + 1 < V.slab_k) {
                        read_fragments(f[(k + 1) % 2], current, k + 1);
                    } else {
                        __pipeline_wait_prior(kStages - 2);
                        __syncthreads();
                        if (phase + kStages < phases) {
                            copy_async(current, phase + kStages);
                        } else {
                            __pipeline_commit();
                        }
                        read_fragments(f[(k + 1) % 2], (current + 1) % kStages, 0);
                    }
                    multiply_add(f[k % 2]);
                }
            };
            static_assert(V.slab_k % 2 == 0, "each phase starts with f[0]");
            for (int phase = 0; phase < phases; phase += kStages) {
#pragma unroll
                for (int s = 0; s < kStages; ++s) {
                    if (phase + s < phases) phase_step(s, phase + s);
                }
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
            load(min(1, phases - 1));
            __syncthreads();
            read_fragments(f[0], 0, 0);
            // spread: the stores into the other pair and the next loads go
            // one float4 per k instead (stores at k = 1, 2, ..., loads after
            // them), which the other pair allows: no one reads it during
            // phase p. At the barrier they came all at once, after the last
            // k's shared loads: the stores waited for the shared-memory
            // queue and each load for its registers' store (Nsight Compute's
            // samples, H100: 61% of the cycles a warp issued nothing).
            static_assert(!V.spread || 2 * kItems + 1 < V.slab_k, "a k for each store and each load");
            const auto phase_step = [&](int current, int phase) {
#pragma unroll
                for (int k = 0; k < V.slab_k; ++k) {
                    if constexpr (V.spread) {
                        if (k >= 1 && k < 1 + kItems) store_item(k - 1, 1 - current);
                        if (k >= 1 + kItems && k < 1 + 2 * kItems) {
                            load_item(k - 1 - kItems, min(phase + 2, phases - 1));
                        }
                    }
                    if (k + 1 < V.slab_k) {
                        read_fragments(f[(k + 1) % 2], current, k + 1);
                    } else {
                        if constexpr (!V.spread) {
                            store(1 - current);
                            load(min(phase + 2, phases - 1));
                        }
                        __syncthreads();
                        read_fragments(f[(k + 1) % 2], 1 - current, 0);
                    }
                    multiply_add(f[k % 2]);
                }
            };
            static_assert(V.slab_k % 2 == 0, "each phase starts with f[0]");
            if constexpr (V.loop == 0) {
                for (int phase = 0; phase < phases; phase += 2) {
                    phase_step(0, phase);
                    if (phase + 1 < phases) phase_step(1, phase + 1);
                }
            } else if constexpr (V.loop == 1) {
                int phase = 0;
                for (; phase + 1 < phases; phase += 2) {
                    phase_step(0, phase);
                    phase_step(1, phase + 1);
                }
                if (phase < phases) phase_step(0, phase);
            } else {
#pragma unroll 1
                for (int phase = 0; phase < phases; ++phase) phase_step(phase % 2, phase);
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
                    if (more) copy_async(1 - current, phase + 1);
                    multiply(current);
                    __pipeline_wait_prior(0);
                } else {
                    if (more) load(phase + 1);
                    multiply(current);
                    if (more) store(1 - current);
                }
                __syncthreads();
            }
        }
    };
    const auto store_c = [&]() {
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
    };
    const auto start_tile = [&](int linear, int tiles_m, int tiles_n, int phase) {
        int tile_row = 0, tile_col = 0;
        tile_position<V.group_rows>(linear, tiles_m, tiles_n, tile_row, tile_col);
        block_row = tile_row * kBlockRows;
        block_col = tile_col * kBlockCols;
        first_phase = phase;
        if constexpr (V.offsets) {
            // The bench's matrices have fewer than 2^31 elements.
            const int k0 = phase * V.slab_k;
#pragma unroll
            for (int q = 0; q < kAQuads; ++q) a_start[q] = (block_row + a_row(q)) * M + k0 + a_col(q);
#pragma unroll
            for (int q = 0; q < kBQuads; ++q) b_start[q] = (k0 + b_row(q)) * K + block_col + b_col(q);
        }
    };

    const int tile_phases = M / V.slab_k;
    if constexpr (V.stream_k == 0) {
        // One tile a block. Blocks start in the order of their linear index
        // (see group_rows).
        if constexpr (V.group_rows > 0 || V.offsets) {
            start_tile(blockIdx.y * gridDim.x + blockIdx.x, gridDim.y, gridDim.x, 0);
        } else {
            block_row = blockIdx.y * kBlockRows;
            block_col = blockIdx.x * kBlockCols;
        }
        run_phases(tile_phases);
        store_c();
    } else {
        // Persistent: block b first takes whole tiles b, b + blocks, ...
        // below schedule.whole_tiles, then its run of the other tiles'
        // phases laid end to end: phases run_begin(b) .. run_begin(b + 1) - 1,
        // the runs as equal as integers allow.
        const int blocks = gridDim.x, block = blockIdx.x;
        const int split_phases = (schedule.tiles_m * schedule.tiles_n - schedule.whole_tiles) * tile_phases;
        const auto run_begin = [&](int b) {
            return static_cast<int>(static_cast<long long>(split_phases) * b / blocks);
        };
        // The block whose run holds phase p.
        const auto runner = [&](int p) {
            int b = static_cast<int>(static_cast<long long>(p) * blocks / split_phases);
            while (run_begin(b + 1) <= p) ++b;
            while (run_begin(b) > p) --b;
            return b;
        };
        // Where block b's partial of the split tile whose first phase (in
        // the run of all) is `first` goes: the slot of its run's first part
        // if its run starts in that tile, else of its last.
        constexpr int kPartialQuads = V.micro_rows * V.micro_cols / 4;  // float4 of acc
        const auto partial = [&](int b, int first) {
            return schedule.partials + (static_cast<std::size_t>(b) * 2 + (run_begin(b) >= first ? 0 : 1)) *
                                           kPartialQuads * V.threads;
        };
        // The block's place in its work and the tile at hand live in shared
        // memory, written by thread 0 between two barriers, and every
        // thread reads them where it needs them: kept in registers through
        // the FMAs instead, ptxas spilled (at 128 registers) and recomputed
        // addresses in the phase loop (sm_90, CUDA 13).
        struct Work {
            int tile;    // linear, as tile_position takes it
            int phase;   // the first in the tile
            int phases;  // 0: the block is done
            int first;   // a split tile's first phase in the run of all
        };
        __shared__ Work now;
        __shared__ int next_whole, next_phase;  // the block's next whole tile, its next phase of the run
        __shared__ bool last_to_arrive;
        if (tid == 0) {
            next_whole = block;
            next_phase = run_begin(block);
        }
        while (true) {
            // The previous tile's last reads of shared memory are done
            // before this one's first stores (and before `now` changes).
            __syncthreads();
            if (tid == 0) {
                const int run_end = run_begin(block + 1);
                if (next_whole < schedule.whole_tiles) {
                    now = {next_whole, 0, tile_phases, 0};
                    next_whole += blocks;
                } else if (next_phase < run_end) {
                    const int split_tile = next_phase / tile_phases;
                    now.tile = schedule.whole_tiles + split_tile;
                    now.first = split_tile * tile_phases;
                    now.phase = next_phase - now.first;
                    now.phases = min(tile_phases - now.phase, run_end - next_phase);
                    next_phase += now.phases;
                } else {
                    now.phases = 0;
                }
            }
            __syncthreads();
            if (now.phases == 0) break;
            start_tile(now.tile, schedule.tiles_m, schedule.tiles_n, now.phase);
            run_phases(now.phases);
            if (now.phases == tile_phases) {
                store_c();
                continue;
            }
            // Part of a tile: into this block's slot, then count the arrival.
            float4* const mine = partial(block, now.first);
#pragma unroll
            for (int i = 0; i < V.micro_rows; ++i) {
#pragma unroll
                for (int g = 0; g < kColGroups; ++g) {
                    mine[(i * kColGroups + g) * V.threads + tid] =
                        make_float4(acc[i][g * 4 + 0], acc[i][g * 4 + 1], acc[i][g * 4 + 2], acc[i][g * 4 + 3]);
                }
            }
            const int first_block = runner(now.first), last_block = runner(now.first + tile_phases - 1);
            __threadfence();  // the partial is visible on the device before the count says so
            __syncthreads();
            if (tid == 0) last_to_arrive = atomicAdd(&schedule.arrivals[now.tile], 1) == last_block - first_block;
            __syncthreads();
            if (!last_to_arrive) continue;
            // The last to arrive sums the parts in the order of their blocks
            // (of k): the same sum whoever arrives last. __ldcg reads L2,
            // where the other SMs' stores are, not this SM's L1.
            __threadfence();
            for (int b = first_block; b <= last_block; ++b) {
                const float4* const part = partial(b, now.first);
#pragma unroll
                for (int i = 0; i < V.micro_rows; ++i) {
#pragma unroll
                    for (int g = 0; g < kColGroups; ++g) {
                        const float4 p = __ldcg(part + (i * kColGroups + g) * V.threads + tid);
                        const float4 before = b == first_block ? make_float4(0.0f, 0.0f, 0.0f, 0.0f)
                                                               : make_float4(acc[i][g * 4 + 0], acc[i][g * 4 + 1],
                                                                             acc[i][g * 4 + 2], acc[i][g * 4 + 3]);
                        acc[i][g * 4 + 0] = before.x + p.x;
                        acc[i][g * 4 + 1] = before.y + p.y;
                        acc[i][g * 4 + 2] = before.z + p.z;
                        acc[i][g * 4 + 3] = before.w + p.w;
                    }
                }
            }
            store_c();
            if (tid == 0) schedule.arrivals[now.tile] = 0;  // for the next launch
        }
    }
}

// The block tile of C of a variant, rows and columns.
int block_rows(const RbVariant& v) { return kRbThreadRows * v.micro_rows; }
int block_cols(const RbVariant& v) { return v.threads / kRbThreadRows * v.micro_cols; }

// A stream-K variant's schedule of tiles_m x tiles_n tiles on `blocks`
// blocks, its workspace left to the caller: none of the tiles whole (1),
// or those of all whole waves but the last (2; all of them when the tiles
// fill whole waves).
RbSchedule stream_k_schedule(const RbVariant& v, int tiles_m, int tiles_n, int blocks) {
    const int tiles = tiles_m * tiles_n;
    RbSchedule schedule;
    schedule.tiles_m = tiles_m;
    schedule.tiles_n = tiles_n;
    schedule.whole_tiles =
        v.stream_k == 1 ? 0 : tiles % blocks == 0 ? tiles : std::max(tiles / blocks - 1, 0) * blocks;
    return schedule;
}

// Floats of the partial tiles' workspace: two tiles a block.
std::size_t partials_size(const RbVariant& v, int blocks) {
    return static_cast<std::size_t>(blocks) * 2 * block_rows(v) * block_cols(v);
}

// A variant's row name, from its switches; the first reference's shape (128 x 128,
// 8 x 8 a thread, 256 threads) goes unnamed.
std::string variant_name(const RbVariant& v) {
    std::string tile;
    if (v.micro_rows != 8 || v.micro_cols != 8 || v.threads != 256) {
        tile = " " + std::to_string(block_rows(v)) + "x" + std::to_string(block_cols(v)) + " (" +
               std::to_string(v.micro_rows) + "x" + std::to_string(v.micro_cols) + " a thread" +
               (v.threads == 256 ? "" : ", " + std::to_string(v.threads) + " threads") + ")";
    }
    const std::string pairs = ", " + std::to_string(v.stages) + " pairs";
    const std::string slabs = v.double_buffer ? pairs + (v.async_copy && v.pipelined ? " cp.async pipelined"
                                                         : v.async_copy              ? " cp.async"
                                                         : v.pipelined               ? " pipelined"
                                                                                     : "")
                                              : ", 1 pair";
    return "rb" + tile + " k" + std::to_string(v.slab_k) + slabs + (v.warp4x8 ? ", warp 4x8" : ", warp 2x16") +
           (v.pad_a ? ", A pad" : "") + ", min " + std::to_string(v.min_blocks) + " blocks" +
           (v.group_rows > 0 ? ", groups of " + std::to_string(v.group_rows) + " tile rows" : "") +
           (v.serpentine ? ", serpentine FMAs" : "") +
           (v.stream_k == 1 ? ", stream-K" : v.stream_k == 2 ? ", whole waves then stream-K" : "") +
           (v.offsets ? ", int offsets" : "") + (v.spread ? ", stores spread" : "") +
           (v.loop == 1 ? ", odd phase after the loop" : v.loop == 2 ? ", one phase a loop turn" : "");
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
    // The stream-K variants' workspaces (see RbSchedule), one per row.
    std::vector<course::DeviceBuffer<float>> partials;
    std::vector<course::DeviceBuffer<int>> arrivals;
    const auto add_variant = [&](auto tag) {
        constexpr RbVariant v = decltype(tag)::value;
        // The shape by value: v is this call's local, gone when a row runs.
        dim3 grid(n / block_cols(v), n / block_rows(v));
        const unsigned threads = static_cast<unsigned>(v.threads);
        std::string name = variant_name(v);
        RbSchedule schedule;
        if constexpr (v.stream_k != 0) {
            // As many blocks as run at once on this GPU.
            int sms = 0, per_sm = 0;
            COURSE_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
            COURSE_CUDA_CHECK(
                cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, matmul_register_blocked_variant<v>, v.threads, 0));
            const int blocks = sms * per_sm;
            if (blocks <= 0) throw std::runtime_error(name + ": no block of it fits an SM");
            const int tiles = static_cast<int>(grid.x * grid.y);
            schedule = stream_k_schedule(v, static_cast<int>(grid.y), static_cast<int>(grid.x), blocks);
            partials.emplace_back(partials_size(v, blocks));
            arrivals.emplace_back(std::vector<int>(static_cast<std::size_t>(tiles), 0));
            schedule.partials = reinterpret_cast<float4*>(partials.back().data());
            schedule.arrivals = arrivals.back().data();
            grid = dim3(static_cast<unsigned>(blocks));
            name += " (" + std::to_string(blocks) + " blocks, " + std::to_string(schedule.whole_tiles) + " of " +
                    std::to_string(tiles) + " tiles whole)";
        }
        variants.push_back({name,
                            [&, grid, threads, schedule](int s) {
                                matmul_register_blocked_variant<v>
                                    <<<grid, threads>>>(a[s].data(), b[s].data(), c[s].data(), n, n, schedule);
                            },
                            false, 0.0});
    };
    // The first rows' switches in a line each: slab, two pairs, cp.async,
    // warp 4 x 8, A padded, minimum blocks per SM.
    constexpr auto rb = [](int slab_k, bool double_buffer, bool async_copy, bool warp4x8, bool pad_a, int min_blocks) {
        return RbVariant{.slab_k = slab_k, .double_buffer = double_buffer, .async_copy = async_copy,
                         .warp4x8 = warp4x8, .pad_a = pad_a, .min_blocks = min_blocks};
    };
    add_variant(RbTag<rb(8, false, false, false, false, 2)>{});  // the first reference's aligned path
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
    // Against the wave quantization: stream-K on every tile, and whole
    // waves then stream-K, on the first reference's kernel and the best rows of
    // the run before (grouped, for the whole waves' order), with and
    // without int offsets; int offsets alone; then the serpentine order of
    // FMAs. What nvdisasm shows of the phase loops (sm_90, CUDA 13), as
    // FFMAs / other instructions: plain 8 x 8 one pair 512 / 61, pipelined
    // 1024 / 120, 256 x 128 2048 / 161. Int offsets: 51, 103 and 145, no
    // spills. Stream-K: one pair 63; the reference's shape 63, with offsets
    // 57; 256 x 128 166, with offsets 147; no spills. At 128 registers the
    // pipelined stream-K loop runs short (141 and 6 loads from local
    // memory; with offsets, worse), as does one pair's with offsets (71, 8
    // local loads; not a row) or serpentine (72, 4; with offsets 57, 4).
    // ptxas keeps the serpentine order: 90% of the FFMAs flag an operand
    // for reuse, against 80% to 85% without. With offsets and serpentine
    // FMAs both: the reference's shape, stream-K 53 (88% reuse); one pair
    // 51 (91%); pipelined 106 (91%); 256 x 128 145 (90%), stream-K 147
    // (92%). 128 x 256 with offsets and stream-K: 141.
    constexpr auto streamed = [](RbVariant v, int stream_k) {
        v.stream_k = stream_k;
        return v;
    };
    constexpr auto serpentine = [](RbVariant v) {
        v.serpentine = true;
        return v;
    };
    constexpr RbVariant one_pair = grouped(rb(8, false, false, true, true, 2), 16);
    constexpr auto offsets = [](RbVariant v) {
        v.offsets = true;
        return v;
    };
    // Stream-K.
    add_variant(RbTag<streamed(grouped(RbVariant{}, 16), 2)>{});
    add_variant(RbTag<streamed(one_pair, 1)>{});
    add_variant(RbTag<streamed(one_pair, 2)>{});
    add_variant(RbTag<streamed(grouped(pipelined, 16), 1)>{});
    add_variant(RbTag<streamed(grouped(pipelined, 16), 2)>{});
    add_variant(RbTag<streamed(grouped(tall, 8), 2)>{});
    // Int offsets, alone and with stream-K.
    add_variant(RbTag<offsets(one_pair)>{});
    add_variant(RbTag<offsets(grouped(pipelined, 16))>{});
    add_variant(RbTag<offsets(grouped(tall, 8))>{});
    add_variant(RbTag<offsets(grouped(tall, 16))>{});
    add_variant(RbTag<offsets(grouped(tall, 4))>{});
    add_variant(RbTag<offsets(grouped(wide, 8))>{});
    add_variant(RbTag<offsets(grouped(wide_128_threads, 16))>{});
    // cp.async into 2 or 3 pairs, read pipelined (cuBLAS's FP32 kernel for
    // this shape, seen with Nsight Compute on the H100: 256 x 128 tiles of
    // 8-wide slabs, 8 warps, 3 stages of cp.async, one block per SM).
    constexpr auto async_stages = [](RbVariant v, int stages) {
        v.async_copy = true;
        v.stages = stages;
        return v;
    };
    add_variant(RbTag<async_stages(offsets(grouped(tall, 8)), 3)>{});
    add_variant(RbTag<async_stages(offsets(grouped(tall, 8)), 2)>{});
    add_variant(RbTag<async_stages(grouped(tall, 8), 3)>{});
    add_variant(RbTag<async_stages(offsets(grouped(wide, 8)), 3)>{});
    add_variant(RbTag<async_stages(offsets(grouped(wide_128_threads, 16)), 3)>{});
    // The stores and loads of the next slabs spread over the phase's k.
    constexpr auto spread = [](RbVariant v) {
        v.spread = true;
        v.loop = 1;
        return v;
    };
    add_variant(RbTag<spread(offsets(grouped(tall, 8)))>{});
    add_variant(RbTag<spread(grouped(tall, 8))>{});
    add_variant(RbTag<spread(offsets(grouped(pipelined, 16)))>{});
    add_variant(RbTag<spread(offsets(grouped(wide, 8)))>{});
    // The loop over phases: pairs with a branch inside (0, the rows above
    // but the spread ones), pairs and the odd phase after the loop (1), or
    // one phase a turn, its pair chosen at run time (2, as cuBLAS's loop).
    constexpr auto looped = [](RbVariant v, int loop) {
        v.loop = loop;
        return v;
    };
    add_variant(RbTag<looped(wide_128_threads, 1)>{});
    add_variant(RbTag<looped(grouped(wide_128_threads, 16), 1)>{});
    add_variant(RbTag<looped(offsets(grouped(wide_128_threads, 16)), 1)>{});
    add_variant(RbTag<looped(wide_128_threads, 2)>{});
    add_variant(RbTag<looped(offsets(grouped(wide_128_threads, 16)), 2)>{});
    add_variant(RbTag<looped(offsets(grouped(tall, 8)), 1)>{});
    add_variant(RbTag<looped(offsets(grouped(tall, 8)), 2)>{});
    add_variant(RbTag<looped(grouped(tall, 8), 2)>{});
    add_variant(RbTag<looped(offsets(grouped(pipelined, 16)), 2)>{});
    // Around the best of those (128 threads, 8 x 16 each, 2 blocks per
    // SM, groups of 16, the odd phase after the loop): other groups,
    // serpentine FMAs, warps 2 x 16, no padding, and 256 x 64 tiles of
    // 16 x 8 a thread.
    constexpr RbVariant narrow = looped(grouped(wide_128_threads, 16), 1);
    constexpr auto unpadded = [](RbVariant v) {
        v.pad_a = false;
        return v;
    };
    constexpr auto warp2x16 = [](RbVariant v) {
        v.warp4x8 = false;
        return v;
    };
    add_variant(RbTag<grouped(narrow, 8)>{});
    add_variant(RbTag<grouped(narrow, 32)>{});
    add_variant(RbTag<serpentine(narrow)>{});
    add_variant(RbTag<warp2x16(narrow)>{});
    add_variant(RbTag<unpadded(narrow)>{});
    constexpr RbVariant tall_128_threads{.threads = 128, .micro_rows = 16, .double_buffer = true, .pipelined = true,
                                         .warp4x8 = true, .pad_a = true, .min_blocks = 2, .group_rows = 16,
                                         .loop = 1};
    add_variant(RbTag<tall_128_threads>{});
    add_variant(RbTag<offsets(tall_128_threads)>{});
    add_variant(RbTag<offsets(streamed(grouped(RbVariant{}, 16), 2))>{});
    add_variant(RbTag<offsets(streamed(grouped(tall, 8), 2))>{});
    add_variant(RbTag<offsets(streamed(grouped(wide, 8), 2))>{});
    // Serpentine FMAs, alone, with int offsets, with stream-K, with both.
    add_variant(RbTag<serpentine(one_pair)>{});
    add_variant(RbTag<serpentine(grouped(pipelined, 16))>{});
    add_variant(RbTag<offsets(serpentine(one_pair))>{});
    add_variant(RbTag<offsets(serpentine(grouped(pipelined, 16)))>{});
    add_variant(RbTag<offsets(serpentine(grouped(tall, 8)))>{});
    add_variant(RbTag<serpentine(streamed(one_pair, 2))>{});
    add_variant(RbTag<offsets(serpentine(streamed(one_pair, 2)))>{});
    add_variant(RbTag<offsets(serpentine(streamed(grouped(RbVariant{}, 16), 2)))>{});
    add_variant(RbTag<offsets(serpentine(streamed(grouped(tall, 8), 2)))>{});
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
