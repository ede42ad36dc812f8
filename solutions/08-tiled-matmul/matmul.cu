// Lesson 08 reference solution: C = A·B for row-major float matrices, first
// through square shared-memory tiles, then with register blocking.
//
// Why tiles: a thread that computes one element of C reads a whole row of A
// and a whole column of B, 2 * M loads for M multiply-adds. The threads of a
// block need overlapping rows and columns, so the block copies each piece
// once into shared memory and every thread reads it from there: with
// TILE x TILE tiles, each element loaded from global memory is used TILE
// times. Register blocking goes one level further: each thread keeps an
// 8 x 16 tile of C in registers, so each value read from shared memory is
// used 8 or 16 times.
#include <matmul.hpp>

#include <course/cuda_check.hpp>
#include <course/tile_order.hpp>

#include <cstddef>
#include <cstdint>
#include <cuda_runtime.h>

namespace lesson08 {

namespace {

// ---------------------------------------------------------------------------
// Part 1: square shared-memory tiles, one thread per element of C.
// ---------------------------------------------------------------------------

// 32 x 32 = 1024 threads per block, one warp per row of the tile: a warp's
// loads of a tile row are 32 consecutive floats (coalesced), and in the
// inner loop its reads of a_tile[ty][k] are one broadcast and of
// b_tile[k][tx] 32 different banks.
constexpr int kTile = 32;

__global__ void matmul_tiled_kernel(const float* A, const float* B, float* C, int N, int M, int K) {
    __shared__ float a_tile[kTile][kTile];
    __shared__ float b_tile[kTile][kTile];

    const int tx = threadIdx.x;
    const int ty = threadIdx.y;
    const int row = blockIdx.y * kTile + ty;  // this thread's element of C
    const int col = blockIdx.x * kTile + tx;

    // No early return for threads outside C (row >= N or col >= K): they
    // still load their part of each tile, which the in-range threads of
    // their row or column need, and they must reach every barrier.
    float sum = 0.0f;
    // Round up: the last phase covers the partial tile when M is not a
    // multiple of kTile (M / kTile would drop it; M / kTile + 1 would add an
    // all-zero phase whenever M is a multiple).
    const int phases = (M + kTile - 1) / kTile;
    for (int phase = 0; phase < phases; ++phase) {
        const int a_col = phase * kTile + tx;
        const int b_row = phase * kTile + ty;
        // Elements outside A or B are stored as 0, so the loop below needs
        // no bounds check: a zero adds nothing to the sum.
        a_tile[ty][tx] = (row < N && a_col < M) ? A[static_cast<std::size_t>(row) * M + a_col] : 0.0f;
        b_tile[ty][tx] = (b_row < M && col < K) ? B[static_cast<std::size_t>(b_row) * K + col] : 0.0f;
        // Barrier 1: the tiles are complete before anyone reads them (thread
        // (ty, tx) reads elements stored by the 62 other threads of its row
        // and column).
        __syncthreads();
        for (int k = 0; k < kTile; ++k) sum += a_tile[ty][k] * b_tile[k][tx];
        // Barrier 2: everyone has finished reading these tiles before the
        // next phase overwrites them. Without it a fast thread stores the
        // next phase's values while a slow one is still multiplying.
        __syncthreads();
    }
    if (row < N && col < K) C[static_cast<std::size_t>(row) * K + col] = sum;
}

// ---------------------------------------------------------------------------
// Part 2 (going further): register blocking.
// ---------------------------------------------------------------------------
//
// A block of 128 threads computes a 128 x 128 tile of C, so each thread
// computes 128 elements: an 8 x 16 micro-tile held in registers. Per phase
// the block stages an 8-column slab of A (128 x 8) and an 8-row slab of B
// (8 x 128) in shared memory. For each of the 8 k of the slab a thread reads
// 8 values of A's column and 16 of B's row (six float4) and does 128
// multiply-adds with them: 3 shared-memory reads for 64 FMAs, where the
// tiled kernel needs 2 reads per FMA.
//
// Thread (ty, tx), ty < 16 and tx < 8, owns rows ty*4 .. ty*4+3 and
// 64+ty*4 .. 64+ty*4+3 of the block tile (two groups of 4 rows, 64 apart)
// and columns tx*4 + 32*g .. +3 for g = 0..3 (four groups of 4, 32 apart),
// not 8 or 16 consecutive: then the 8 threads of a row that read B's row k
// read 8 consecutive float4, and their stores of C are whole 128-byte lines.
// A warp is 4 rows of 8 threads: per k its lanes read 4 different float4 of
// A's slab (each broadcast to 8 lanes) and 8 of B's.
//
// Four more things make it fast (each one a row of the benchmark,
// tests/08-tiled-matmul/matmul_bench.cu, measured against the others):
// - Two pairs of slabs. Phase p reads pair p % 2 while the next phase's
//   slabs, loaded from global memory into registers a phase earlier, are
//   stored into the other pair. One barrier per phase is then enough: the
//   other pair was last read in phase p - 1, before the barrier that ended
//   it.
// - The shared-memory reads run one k ahead of the FMAs: k + 1's six float4
//   are read while k's 128 FMAs run (the next pair's k = 0 right after the
//   barrier, during the last k's FMAs), so no FMA waits for shared memory.
// - 128 threads use up to 255 registers each, so two blocks (8 warps) fit
//   an SM: while one block waits at its barrier, the other computes.
// - Blocks take the tiles of C down groups of 16 tile rows, column by
//   column, so that the blocks running at once share rows of A and columns
//   of B in L2 (as lesson 22's kGroupRows).

constexpr int kBlockRows = 128;   // rows of C per block
constexpr int kBlockCols = 128;   // columns of C per block
constexpr int kSlab = 8;          // columns of A (rows of B) per phase
constexpr int kThreadsRb = 128;   // 16 rows of 8 threads
constexpr int kMicroRows = 8;     // a thread computes kMicroRows x kMicroCols elements of C
constexpr int kMicroCols = 16;
constexpr int kRowGroup = 64;     // distance between a thread's two groups of 4 rows
constexpr int kColGroup = 32;     // distance between its four groups of 4 columns
constexpr int kGroupRows = 16;    // tile rows per group of the block order
// A's slab is stored transposed with 4 floats of padding a row: the 4 floats
// a thread stores from one float4 of A go to 4 rows of the slab, and
// without the padding the two threads of a row of A would store into the
// same banks.
constexpr int kAStride = kBlockRows + 4;
// Float4 of each slab a thread loads per phase: A's slab is 128 x 8 floats,
// B's 8 x 128, 256 float4 each.
constexpr int kQuads = kBlockRows * kSlab / 4 / kThreadsRb;

// The four floats at (row, col .. col+3) of a rows x cols row-major matrix
// (A: N x M, B: M x K). Aligned: one 16-byte load (the caller guarantees the
// shape and alignment). General: four checked loads, with 0 outside the
// matrix.
template <bool kAligned>
__device__ float4 load_quad(const float* matrix, int rows, int cols, int row, int col) {
    if constexpr (kAligned) {
        return *reinterpret_cast<const float4*>(matrix + static_cast<std::size_t>(row) * cols + col);
    } else {
        float v[4];
        for (int i = 0; i < 4; ++i) {
            v[i] = (row < rows && col + i < cols) ? matrix[static_cast<std::size_t>(row) * cols + col + i] : 0.0f;
        }
        return make_float4(v[0], v[1], v[2], v[3]);
    }
}

// kAligned: N and K are multiples of 128, M a positive multiple of 8, and
// the pointers are 16-byte aligned, so no tile crosses an edge and every
// access may be a float4. Otherwise every load and store is checked.
//
// N comes last, after M and K, as in the benchmark's fastest row, whose
// machine code this kernel's is: with N first, ptxas (CUDA 13, sm_90)
// schedules the same PTX differently, 3% slower on an H100 (the lesson's
// "The last 2%: machine code").
template <bool kAligned>
__global__ void __launch_bounds__(kThreadsRb, 2)
    matmul_register_blocked_kernel(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                                   int M, int K, int N) {
    // Two pairs of slabs. A's slab is stored transposed, a_slab[pair][k][row],
    // so that a thread's 8 values of one column k are two float4 reads, like
    // its 16 of B's row k.
    __shared__ __align__(16) float a_slab[2][kSlab][kAStride];
    __shared__ __align__(16) float b_slab[2][kSlab][kBlockCols];

    const int tid = threadIdx.x;
    int tile_row = 0, tile_col = 0;
    course::grouped_tile(blockIdx.y * gridDim.x + blockIdx.x, gridDim.y, gridDim.x, kGroupRows, tile_row, tile_col);
    const int block_row = tile_row * kBlockRows;
    const int block_col = tile_col * kBlockCols;

    // Who loads what: number the float4 of a slab row by row; thread tid
    // loads numbers tid + q * 128, q = 0, 1. A's slab has 2 float4 a row
    // (its 32 bytes are one sector), B's 32 (512 consecutive bytes).
    const auto a_row = [&](int q) { return (tid + q * kThreadsRb) / (kSlab / 4); };
    const auto a_col = [&](int q) { return ((tid + q * kThreadsRb) % (kSlab / 4)) * 4; };
    const auto b_row = [&](int q) { return (tid + q * kThreadsRb) / (kBlockCols / 4); };
    const auto b_col = [&](int q) { return ((tid + q * kThreadsRb) % (kBlockCols / 4)) * 4; };

    // Who computes what (see the comment above kBlockRows): warp w is thread
    // rows 4w .. 4w+3, lane l of it row 4w + l / 8, column l % 8. (tid / 8
    // and tid % 8 are the same numbers, and give the same loop, two
    // instructions earlier in memory: 0.8% slower on an H100, see the page.)
    const int warp = tid / 32, lane = tid % 32;
    const int ty = warp * 4 + lane / 8;
    const int tx = lane % 8;

    // The next phase's slabs, in registers between their load and their store.
    float4 a_next[kQuads], b_next[kQuads];
    const auto load = [&](int phase) {
        const int k0 = phase * kSlab;
        for (int q = 0; q < kQuads; ++q) a_next[q] = load_quad<kAligned>(A, N, M, block_row + a_row(q), k0 + a_col(q));
        for (int q = 0; q < kQuads; ++q) b_next[q] = load_quad<kAligned>(B, M, K, k0 + b_row(q), block_col + b_col(q));
    };
    const auto store = [&](int pair) {
        for (int q = 0; q < kQuads; ++q) {
            a_slab[pair][a_col(q) + 0][a_row(q)] = a_next[q].x;
            a_slab[pair][a_col(q) + 1][a_row(q)] = a_next[q].y;
            a_slab[pair][a_col(q) + 2][a_row(q)] = a_next[q].z;
            a_slab[pair][a_col(q) + 3][a_row(q)] = a_next[q].w;
        }
        for (int q = 0; q < kQuads; ++q) *reinterpret_cast<float4*>(&b_slab[pair][b_row(q)][b_col(q)]) = b_next[q];
    };

    // A thread's values of A's column k (two groups of 4) and B's row k
    // (four groups of 4).
    struct Fragments {
        float4 a[kMicroRows / 4];
        float4 b[kMicroCols / 4];
    };
    const auto read_fragments = [&](Fragments& f, int pair, int k) {
        for (int g = 0; g < kMicroRows / 4; ++g) {
            f.a[g] = *reinterpret_cast<const float4*>(&a_slab[pair][k][g * kRowGroup + ty * 4]);
        }
        for (int g = 0; g < kMicroCols / 4; ++g) {
            f.b[g] = *reinterpret_cast<const float4*>(&b_slab[pair][k][g * kColGroup + tx * 4]);
        }
    };
    float acc[kMicroRows][kMicroCols] = {};
    const auto multiply_add = [&](const Fragments& f) {
        const float* a = reinterpret_cast<const float*>(f.a);
        const float* b = reinterpret_cast<const float*>(f.b);
        for (int i = 0; i < kMicroRows; ++i) {
            for (int j = 0; j < kMicroCols; ++j) acc[i][j] += a[i] * b[j];
        }
    };

    // Phase p reads pair p % 2 (`current`). Its last k stores slab p + 1
    // (loaded a phase ago) into the other pair and loads slab p + 2 into
    // the same registers; then the phase's one barrier, and the next pair's
    // k = 0 is read during the last k's FMAs. The loads are written at the
    // barrier, as early as their registers are free; ptxas issues these
    // read-only loads where it sees fit (they may cross a barrier). The
    // last phases load their own slab again and store it where no one
    // reads: no branch around the loads. The aligned path has a phase
    // (M >= 8); the general one skips the whole pipeline when M = 0.
    const int phases = kAligned ? M / kSlab : (M + kSlab - 1) / kSlab;
    if (kAligned || phases > 0) {
        Fragments f[2];
        load(0);
        store(0);
        load(min(1, phases - 1));
        // Barrier: the first pair is complete before anyone reads it.
        __syncthreads();
        read_fragments(f[0], 0, 0);
        const auto phase_step = [&](int current, int phase) {
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
            for (int k = 0; k < kSlab; ++k) {
                if (k + 1 < kSlab) {
                    read_fragments(f[(k + 1) % 2], current, k + 1);
                } else {
                    store(1 - current);
                    load(min(phase + 2, phases - 1));
                    // The phase's barrier: the other pair is complete before
                    // anyone reads it, and this pair, read by everyone by now,
                    // may be overwritten in the next phase.
                    __syncthreads();
                    read_fragments(f[(k + 1) % 2], 1 - current, 0);
                }
                multiply_add(f[k % 2]);
            }
        };
        // Two phases a turn, so that both pairs' addresses are constants,
        // and an odd last phase after the loop: no branch in the loop's
        // body (one there cost the loop 3% on an H100).
        int phase = 0;
        for (; phase + 1 < phases; phase += 2) {
            phase_step(0, phase);
            phase_step(1, phase + 1);
        }
        if (phase < phases) phase_step(0, phase);
    }

    for (int i = 0; i < kMicroRows; ++i) {
        const int row = block_row + (i / 4) * kRowGroup + ty * 4 + i % 4;
        for (int g = 0; g < kMicroCols / 4; ++g) {
            const int col = block_col + g * kColGroup + tx * 4;
            if constexpr (kAligned) {
                *reinterpret_cast<float4*>(C + static_cast<std::size_t>(row) * K + col) =
                    make_float4(acc[i][g * 4 + 0], acc[i][g * 4 + 1], acc[i][g * 4 + 2], acc[i][g * 4 + 3]);
            } else {
                for (int j = 0; j < 4; ++j) {
                    if (row < N && col + j < K) C[static_cast<std::size_t>(row) * K + col + j] = acc[i][g * 4 + j];
                }
            }
        }
    }
}

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

}  // namespace

void matmul_tiled(const float* A, const float* B, float* C, int N, int M, int K) {
    // C has no elements: nothing to do (and a grid of 0 blocks is an error).
    if (N <= 0 || K <= 0) return;
    const dim3 block(kTile, kTile);
    const dim3 grid((K + kTile - 1) / kTile, (N + kTile - 1) / kTile);  // x along columns of C, y along rows
    // M = 0 needs no special case: the kernel runs no phase and writes 0.
    matmul_tiled_kernel<<<grid, block>>>(A, B, C, N, M, K);
    COURSE_CUDA_CHECK(cudaGetLastError());
}

void matmul_register_blocked(const float* A, const float* B, float* C, int N, int M, int K) {
    if (N <= 0 || K <= 0) return;
    const dim3 grid((K + kBlockCols - 1) / kBlockCols, (N + kBlockRows - 1) / kBlockRows);
    const bool aligned = N % kBlockRows == 0 && K % kBlockCols == 0 && M % kSlab == 0 && M > 0 && aligned16(A) &&
                         aligned16(B) && aligned16(C);
    if (aligned) {
        matmul_register_blocked_kernel<true><<<grid, kThreadsRb>>>(A, B, C, M, K, N);
    } else {
        matmul_register_blocked_kernel<false><<<grid, kThreadsRb>>>(A, B, C, M, K, N);
    }
    COURSE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace lesson08
