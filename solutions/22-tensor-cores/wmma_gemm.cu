// Lesson 22 reference: C = A·B on tensor cores through nvcuda::wmma, for
// half and bfloat16 inputs with float accumulation.
//
// Two kernels. gemm_wmma_simple gives each warp one 16 x 16 tile of C and
// loads its fragments straight from global memory: correct, short, and slow,
// since every fragment of A is loaded again by every warp of its row of C.
// gemm_wmma stages 128 x 64 and 64 x 256 tiles in shared memory, once per
// block, and gives each of its 8 warps a 4 x 4 register block of
// accumulators (a 64 x 64 part of C), so each fragment of A or B it loads
// serves 4 products. Its tiles come in through a 3-stage pipeline of
// asynchronous copies (cp.async, <cuda_pipeline.h>): while the tensor cores
// multiply one K step, the next two are on their way from global memory.
#include <wmma_gemm.hpp>

#include <course/cuda_check.hpp>
#include <course/tile_order.hpp>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_pipeline.h>
#include <cuda_runtime.h>
#include <mma.h>

namespace lesson22 {

namespace {

namespace wmma = nvcuda::wmma;

constexpr int kWarpSize = 32;

void check_shape(const char* function, int M, int N, int K) {
    if (M < 0 || N < 0 || K < 0) {
        throw std::invalid_argument(std::string(function) + ": M, N and K must be >= 0, got " + std::to_string(M) +
                                    ", " + std::to_string(N) + ", " + std::to_string(K));
    }
}

// ---------------------------------------------------------------- one warp per tile, from global memory

constexpr int kSimpleWarps = 4;  // warps of a block, side by side along a row of C's tiles

template <class T>
__global__ void gemm_wmma_simple_kernel(const T* A, const T* B, float* C, int M, int N, int K) {
    // threadIdx.y picks the warp: every lane of a warp has the same tile, so
    // the whole warp leaves together or stays (wmma calls need all 32 lanes).
    const int tile_row = static_cast<int>(blockIdx.y);
    const int tile_col = static_cast<int>(blockIdx.x) * kSimpleWarps + static_cast<int>(threadIdx.y);
    if (tile_col * kFragment >= N) return;
    const std::size_t row = static_cast<std::size_t>(tile_row) * kFragment;
    const std::size_t col = static_cast<std::size_t>(tile_col) * kFragment;
    (void)M;

    wmma::fragment<wmma::accumulator, kFragment, kFragment, kFragment, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int k = 0; k < K; k += kFragment) {
        wmma::fragment<wmma::matrix_a, kFragment, kFragment, kFragment, T, wmma::row_major> a;
        wmma::fragment<wmma::matrix_b, kFragment, kFragment, kFragment, T, wmma::row_major> b;
        // ldm is the distance between two rows in memory: the row length of
        // the whole matrix (K for A, N for B), not the fragment's 16.
        wmma::load_matrix_sync(a, A + row * K + k, static_cast<unsigned>(K));
        wmma::load_matrix_sync(b, B + static_cast<std::size_t>(k) * N + col, static_cast<unsigned>(N));
        wmma::mma_sync(acc, a, b, acc);
    }
    wmma::store_matrix_sync(C + row * N + col, acc, static_cast<unsigned>(N), wmma::mem_row_major);
}

template <class T>
void launch_simple(const T* A, const T* B, float* C, int M, int N, int K) {
    check_shape("gemm_wmma_simple", M, N, K);
    if (M % kFragment != 0 || N % kFragment != 0 || K % kFragment != 0) {
        throw std::invalid_argument("gemm_wmma_simple: M, N and K must be multiples of 16, got " + std::to_string(M) +
                                    ", " + std::to_string(N) + ", " + std::to_string(K));
    }
    if (M == 0 || N == 0) return;
    const int tiles_n = N / kFragment;
    const dim3 block(kWarpSize, kSimpleWarps);
    const dim3 grid(static_cast<unsigned>((tiles_n + kSimpleWarps - 1) / kSimpleWarps),
                    static_cast<unsigned>(M / kFragment));
    gemm_wmma_simple_kernel<T><<<grid, block>>>(A, B, C, M, N, K);
    COURSE_CUDA_CHECK(cudaGetLastError());
}

// ---------------------------------------------------------------- block tiles, a cp.async pipeline

constexpr int kVector = 8;          // 16-bit values per 16-byte copy
// Rows padded by 8 values (16 bytes). Unpadded, the rows of the B tile are
// 512 (or 256) bytes apart, so the 8 rows a fragment load reads 16 bytes of
// at once all start in the same bank: 8-way conflicts. 528 (272) bytes apart
// they spread over all 32 banks, and A's rows of 144 (or 80) bytes do the
// same: any odd multiple of 16 bytes does. The padding keeps every row
// 16-byte aligned (the copies) and every 16th row 32-byte aligned (a
// fragment's start). (CUTLASS avoids the conflicts without padding, by
// XOR-swizzling where each 16-byte chunk of a row goes; load_matrix_sync
// knows only a row stride, ldm, so it cannot read a swizzled tile.)
constexpr int kPad = 8;
// Block tiles are handed out in groups of this many rows of tiles, column
// by column, so that the blocks running at once share their rows of A and
// their columns of B in L2 (see the kernel).
constexpr int kGroupRows = 16;

// The shape of one configuration of the kernel: the block tile, the warps
// over it, the pipeline's depth and its step along K. The last three
// parameters change the order of its work, not its shape (the reference
// keeps their defaults; the benchmark of the reference times the others):
// GroupRows, the rows of tiles a group walks down (see the kernel);
// PrefetchFragments, each warp loads the fragments of the next 16 columns
// of K while it multiplies the present ones, in two sets of fragment
// registers, and those of a step's first 16 columns in the previous step,
// right after the barrier (the compiler interleaves loads and products
// within a step by itself, but moves no load across a barrier); CopySlices,
// the copies of a K step are started in this many slices, one every few
// 16-column sub-steps, rather than all at once before the products.
template <int BlockM, int BlockN, int WarpsM, int WarpsN, int Stages, int MinBlocksPerSM, int BlockK,
          int GroupRows = kGroupRows, bool PrefetchFragments = false, int CopySlices = 1>
struct Tiling {
    static constexpr int kBlockM = BlockM;  // rows of C per block
    static constexpr int kBlockN = BlockN;  // columns of C per block
    static constexpr int kBlockK = BlockK;  // columns of A (rows of B) per step of the K loop
    static constexpr int kWarpsM = WarpsM;  // warps down the block tile ...
    static constexpr int kWarpsN = WarpsN;  // ... and across
    static constexpr int kStages = Stages;  // shared buffers: the K steps in flight + the one multiplied
    static constexpr int kMinBlocksPerSM = MinBlocksPerSM;  // what __launch_bounds__ holds the registers to
    static constexpr int kGroupRows = GroupRows;
    static constexpr bool kPrefetchFragments = PrefetchFragments;
    static constexpr int kCopySlices = CopySlices;
    static constexpr int kSubSteps = kBlockK / kFragment;  // 16-column sub-steps of a K step
    static constexpr int kThreads = kWarpsM * kWarpsN * kWarpSize;
    static constexpr int kWarpM = kBlockM / kWarpsM;    // rows of C per warp
    static constexpr int kWarpN = kBlockN / kWarpsN;    // columns of C per warp
    static constexpr int kFragsM = kWarpM / kFragment;  // accumulator fragments down ...
    static constexpr int kFragsN = kWarpN / kFragment;  // ... and across: the warp's register block
    static constexpr int kAStride = kBlockK + kPad;     // values between rows of an A tile
    static constexpr int kBStride = kBlockN + kPad;     // ... of a B tile
    static constexpr int kAStage = kBlockM * kAStride;  // values of one stage's A tile
    static constexpr int kBStage = kBlockK * kBStride;  // ... and B tile
    template <class T>
    static constexpr int shared_bytes = kStages * (kAStage + kBStage) * static_cast<int>(sizeof(T));

    static_assert(kFragsM * kFragment * kWarpsM == kBlockM && kFragsN * kFragment * kWarpsN == kBlockN);
    static_assert(kBlockK % kFragment == 0);
    static_assert(kStages >= 2, "a pipeline needs a stage to fill while another is multiplied");
    static_assert((kBlockM * kBlockK / kVector) % (kThreads * kCopySlices) == 0 &&
                      (kBlockK * kBlockN / kVector) % (kThreads * kCopySlices) == 0,
                  "every thread copies the same number of 16-byte chunks of each slice of each tile");
    static_assert(kSubSteps % kCopySlices == 0 && kBlockM % kCopySlices == 0 && kBlockK % kCopySlices == 0,
                  "a slice of copies, the same rows of every stage, starts every few sub-steps");
    static_assert(!kPrefetchFragments || kSubSteps % 2 == 0,
                  "two sets of fragments alternate, the first sub-step of every K step in the first set");
    // The edge buffers (a 16 x 16 float fragment per warp) reuse the stages after the K loop.
    static_assert(kWarpsM * kWarpsN * kFragment * kFragment * 4 <= kStages * (kAStage + kBStage) * 2);
};

// The reference: 128 x 256 block tiles, 8 warps of 64 x 64 (4 x 4
// fragments, 128 accumulator registers a thread), 64 columns of K a step,
// 3 stages: 153 KiB of shared memory, one block (8 warps) an SM, and up to
// 255 registers a thread. Per 16 columns of K a warp loads 8 fragments for
// 16 products (a 32 x 64 warp tile loads 6 for 8), and a step of 64
// columns needs one wait and one barrier where steps of 32 need two. On
// top of that shape, the work is reordered: the next sub-step's fragments
// load while the present ones are multiplied (across the barrier too), and
// a step's copies start in 2 slices between the sub-steps. The fastest of
// the configurations measured on an H100, 0.53x cuBLAS, where the same
// shape without the reordering was 0.43x (see the lesson's page). (The
// benchmark of the reference also times other configurations: see the end
// of the file.)
using DefaultTiling = Tiling<128, 256, 2, 4, 3, 1, 64, kGroupRows, true, 2>;

template <class T>
__device__ __forceinline__ T zero_value() {
    return T(0.0f);
}

// Starts copying the Rows x Cols tile of a row-major matrix (rows x cols,
// starting at row0, col0) into a shared tile whose rows are Stride values
// apart: 16 bytes per __pipeline_memcpy_async (cp.async), which goes from
// global to shared memory without passing through registers and without
// the thread waiting for it. Values outside the matrix become 0: a tile on
// the edge of K must add nothing to the sums. With the row length a
// multiple of 8 (`vectors`), a chunk of 8 values lies wholly inside or
// wholly outside, and one outside is a copy that reads nothing and fills its
// 16 bytes with zeros (zfill). Without, the values are loaded one at a time
// and stored to the tile at once, an ordinary synchronous copy. Whole: the
// tile lies inside the matrix and its rows are 16-byte copies (the caller
// knows), so no chunk is checked.
template <int Threads, int Rows, int Cols, int Stride, bool Whole, class T>
__device__ __forceinline__ void load_tile_async(T* tile, const T* src, int rows, int cols, int row0, int col0,
                                                bool vectors) {
    constexpr int kChunksPerRow = Cols / kVector;
    constexpr int kChunks = Rows * kChunksPerRow;
#pragma unroll
    for (int i = 0; i < kChunks / Threads; ++i) {
        const int chunk = static_cast<int>(threadIdx.x) + i * Threads;
        const int r = chunk / kChunksPerRow;
        const int c = chunk % kChunksPerRow * kVector;
        const int row = row0 + r, col = col0 + c;
        T* dst = tile + r * Stride + c;
        if (Whole) {
            __pipeline_memcpy_async(dst, src + static_cast<std::size_t>(row) * cols + col, 16);
        } else if (vectors) {
            if (row < rows && col < cols) {
                __pipeline_memcpy_async(dst, src + static_cast<std::size_t>(row) * cols + col, 16);
            } else {
                __pipeline_memcpy_async(dst, src, 16, 16);  // zfill = 16: no byte read, 16 zeros written
            }
        } else {
            for (int v = 0; v < kVector; ++v) {
                dst[v] = row < rows && col + v < cols ? src[static_cast<std::size_t>(row) * cols + col + v]
                                                      : zero_value<T>();
            }
        }
    }
}

// Vectors: 16-byte copies for both A and B, known at compile time (the
// common case, and the fast path: no code for the other one); otherwise
// vector_a and vector_b say, at run time. Whole: besides, M, N and K are
// multiples of the block tile (the launcher checks), so nothing is checked
// against the edges: plain 16-byte copies and a plain store.
template <class Tile, class T, bool Vectors, bool Whole = false>
__global__ void __launch_bounds__(Tile::kThreads, Tile::kMinBlocksPerSM)
    gemm_wmma_kernel(const T* A, const T* B, float* C, int M, int N, int K, bool vector_a, bool vector_b) {
    constexpr int kStages = Tile::kStages;
    constexpr int kBlockK = Tile::kBlockK;
    // kStages A tiles, then kStages B tiles (dynamic: more than 48 KiB).
    extern __shared__ __align__(128) unsigned char shared_bytes[];
    T* const a_stages = reinterpret_cast<T*>(shared_bytes);
    T* const b_stages = a_stages + kStages * Tile::kAStage;

    const int warp = static_cast<int>(threadIdx.x) / kWarpSize;
    const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
    const int warp_row = warp / Tile::kWarpsN;
    const int warp_col = warp % Tile::kWarpsN;

    // Which tile of C: blocks start in the order of their linear index, so
    // this walks down a group of Tile::kGroupRows rows of tiles before moving one
    // column on. The blocks running at once then cover a near-square patch
    // of C and read its rows of A and columns of B from L2, where row by row
    // they would need all of B at once.
    const int tiles_m = static_cast<int>(gridDim.y), tiles_n = static_cast<int>(gridDim.x);
    const int linear = static_cast<int>(blockIdx.y) * tiles_n + static_cast<int>(blockIdx.x);
    int tile_row = 0, tile_col = 0;
    course::grouped_tile(linear, tiles_m, tiles_n, Tile::kGroupRows, tile_row, tile_col);
    const int block_row = tile_row * Tile::kBlockM;
    const int block_col = tile_col * Tile::kBlockN;

    // The register block, live for the whole K loop.
    wmma::fragment<wmma::accumulator, kFragment, kFragment, kFragment, float> acc[Tile::kFragsM][Tile::kFragsN];
#pragma unroll
    for (int i = 0; i < Tile::kFragsM; ++i) {
#pragma unroll
        for (int j = 0; j < Tile::kFragsN; ++j) wmma::fill_fragment(acc[i][j], 0.0f);
    }

    // Starts the copies of slice `slice` of K step `tile` into stage
    // `stage`: its share of the rows of the step's A tile and of its B tile
    // (the whole of both where a step is copied in one slice).
    const auto load_stage = [&](int stage, int tile, int slice) {
        constexpr int kARows = Tile::kBlockM / Tile::kCopySlices, kBRows = kBlockK / Tile::kCopySlices;
        const int k0 = tile * kBlockK;
        load_tile_async<Tile::kThreads, kARows, kBlockK, Tile::kAStride, Whole>(
            a_stages + stage * Tile::kAStage + slice * kARows * Tile::kAStride, A, M, K, block_row + slice * kARows,
            k0, Vectors || vector_a);
        load_tile_async<Tile::kThreads, kBRows, Tile::kBlockN, Tile::kBStride, Whole>(
            b_stages + stage * Tile::kBStage + slice * kBRows * Tile::kBStride, B, K, N, k0 + slice * kBRows,
            block_col, Vectors || vector_b);
    };

    using FragmentA = wmma::fragment<wmma::matrix_a, kFragment, kFragment, kFragment, T, wmma::row_major>;
    using FragmentB = wmma::fragment<wmma::matrix_b, kFragment, kFragment, kFragment, T, wmma::row_major>;
    // Loads the warp's fragments of the 16 columns of K from kk on (kk = 0,
    // 16, ...) of a stage: kFragsM of A down its rows, kFragsN of B across.
    const auto load_fragments = [&](FragmentA(&a)[Tile::kFragsM], FragmentB(&b)[Tile::kFragsN], int stage, int kk) {
        const T* a_tile = a_stages + stage * Tile::kAStage;
        const T* b_tile = b_stages + stage * Tile::kBStage;
#pragma unroll
        for (int i = 0; i < Tile::kFragsM; ++i) {
            wmma::load_matrix_sync(a[i], a_tile + (warp_row * Tile::kWarpM + i * kFragment) * Tile::kAStride + kk,
                                   Tile::kAStride);
        }
#pragma unroll
        for (int j = 0; j < Tile::kFragsN; ++j) {
            wmma::load_matrix_sync(b[j], b_tile + kk * Tile::kBStride + warp_col * Tile::kWarpN + j * kFragment,
                                   Tile::kBStride);
        }
    };
    // The warp's products: every fragment of A with every fragment of B.
    const auto multiply = [&](const FragmentA(&a)[Tile::kFragsM], const FragmentB(&b)[Tile::kFragsN]) {
#pragma unroll
        for (int i = 0; i < Tile::kFragsM; ++i) {
#pragma unroll
            for (int j = 0; j < Tile::kFragsN; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
        }
    };

    // The pipeline. Each thread commits one batch of copies per K step, and
    // the first kStages - 1 steps are in flight before any is multiplied.
    // Step t waits until its own batch has landed (all but the kStages - 2
    // newer ones), then at the barrier for every other thread's: after it
    // the stage of step t is complete, and every warp is done with step
    // t - 1, whose stage is refilled with step t + kStages - 1 while the
    // tensor cores work on step t. One barrier per step, and the loads of
    // kStages - 1 steps hide behind the products. Batches past the end of K
    // are empty, so that the count of batches stays one per step.
    const int k_tiles = (K + kBlockK - 1) / kBlockK;
#pragma unroll
    for (int s = 0; s < kStages - 1; ++s) {
        if (s < k_tiles) {
#pragma unroll
            for (int slice = 0; slice < Tile::kCopySlices; ++slice) load_stage(s, s, slice);
        }
        __pipeline_commit();
    }
    const auto wait_for_stage = [&] {
        __pipeline_wait_prior(kStages - 2);
        __syncthreads();
    };
    int read_stage = 0, write_stage = kStages - 1;
    const auto next_stages = [&] {
        read_stage = read_stage + 1 == kStages ? 0 : read_stage + 1;
        write_stage = write_stage + 1 == kStages ? 0 : write_stage + 1;
    };
    // Prefetching, the wait and the barrier of step t + 1 come in step t's
    // last sub-step, after the fragments of that sub-step are in registers
    // (loaded in the one before): every read of step t's stage is then done
    // before the barrier, and the loads of step t + 1's first fragments run
    // while the last products of step t are multiplied. The first sets of
    // fragments are loaded before the loop.
    constexpr int kSets = Tile::kPrefetchFragments ? 2 : 1;
    FragmentA a[kSets][Tile::kFragsM];
    FragmentB b[kSets][Tile::kFragsN];
    if constexpr (Tile::kPrefetchFragments) {
        wait_for_stage();
        if (k_tiles > 0) load_fragments(a[0], b[0], read_stage, 0);
    }
    for (int t = 0; t < k_tiles; ++t) {
        if (!Tile::kPrefetchFragments) wait_for_stage();
#pragma unroll
        for (int step = 0; step < Tile::kSubSteps; ++step) {
            // A slice of the copies every kSubSteps / kCopySlices sub-steps,
            // committed as one batch after the last.
            constexpr int kEvery = Tile::kSubSteps / Tile::kCopySlices;
            if (step % kEvery == 0) {
                if (t + kStages - 1 < k_tiles) load_stage(write_stage, t + kStages - 1, step / kEvery);
                if (step / kEvery == Tile::kCopySlices - 1) __pipeline_commit();
            }
            if constexpr (Tile::kPrefetchFragments) {
                const int set = step % 2, next = (step + 1) % 2;
                if (step + 1 < Tile::kSubSteps) {
                    load_fragments(a[next], b[next], read_stage, (step + 1) * kFragment);
                } else {
                    wait_for_stage();
                    next_stages();
                    if (t + 1 < k_tiles) load_fragments(a[next], b[next], read_stage, 0);
                }
                multiply(a[set], b[set]);
            } else {
                load_fragments(a[0], b[0], read_stage, step * kFragment);
                multiply(a[0], b[0]);
            }
        }
        if (!Tile::kPrefetchFragments) next_stages();
    }

    // The stages become the edge buffers: nothing may still be copied into
    // them (the last batches are empty, but a pipeline is drained before its
    // memory is reused), and no warp may still read them.
    __pipeline_wait_prior(0);
    __syncthreads();
    float* const edge = reinterpret_cast<float*>(shared_bytes) + warp * kFragment * kFragment;

    // Store. A whole fragment inside C, with rows a multiple of 16 bytes
    // apart (N % 4 == 0), goes straight to C; any other is stored to the
    // warp's shared buffer and copied value by value, inside C only.
#pragma unroll
    for (int i = 0; i < Tile::kFragsM; ++i) {
#pragma unroll
        for (int j = 0; j < Tile::kFragsN; ++j) {
            const int row = block_row + warp_row * Tile::kWarpM + i * kFragment;
            const int col = block_col + warp_col * Tile::kWarpN + j * kFragment;
            if (!Whole && (row >= M || col >= N)) continue;  // the same for the whole warp
            if (Whole || (row + kFragment <= M && col + kFragment <= N && N % 4 == 0)) {
                wmma::store_matrix_sync(C + static_cast<std::size_t>(row) * N + col, acc[i][j],
                                        static_cast<unsigned>(N), wmma::mem_row_major);
            } else {
                wmma::store_matrix_sync(edge, acc[i][j], kFragment, wmma::mem_row_major);
                __syncwarp();  // the buffer holds what every lane stored
                for (int e = lane; e < kFragment * kFragment; e += kWarpSize) {
                    const int r = row + e / kFragment, c = col + e % kFragment;
                    if (r < M && c < N) C[static_cast<std::size_t>(r) * N + c] = edge[e];
                }
                __syncwarp();  // every lane has read it before the next fragment is stored there
            }
        }
    }
}

template <class Tile, class T>
void launch_tiled(const T* A, const T* B, float* C, int M, int N, int K) {
    check_shape("gemm_wmma", M, N, K);
    if (M == 0 || N == 0) return;
    // More than the 48 KiB a block gets by default: the kernel opts in,
    // once per configuration and type.
    constexpr int kShared = Tile::template shared_bytes<T>;
    static_assert(kShared <= 227 * 1024, "more shared memory than an H100 gives a block");
    static const bool opted_in = [] {
        COURSE_CUDA_CHECK(cudaFuncSetAttribute(gemm_wmma_kernel<Tile, T, true>,
                                               cudaFuncAttributeMaxDynamicSharedMemorySize, kShared));
        COURSE_CUDA_CHECK(cudaFuncSetAttribute(gemm_wmma_kernel<Tile, T, false>,
                                               cudaFuncAttributeMaxDynamicSharedMemorySize, kShared));
        COURSE_CUDA_CHECK(cudaFuncSetAttribute(gemm_wmma_kernel<Tile, T, true, true>,
                                               cudaFuncAttributeMaxDynamicSharedMemorySize, kShared));
        return true;
    }();
    (void)opted_in;
    // 16-byte copies need rows that start 16 bytes apart: K (for A) and N
    // (for B) multiples of 8, and a 16-byte aligned matrix.
    const auto aligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
    const bool vector_a = K % kVector == 0 && aligned(A);
    const bool vector_b = N % kVector == 0 && aligned(B);
    const dim3 grid(static_cast<unsigned>((N + Tile::kBlockN - 1) / Tile::kBlockN),
                    static_cast<unsigned>((M + Tile::kBlockM - 1) / Tile::kBlockM));
    // Whole block tiles (the benchmark's 4096³, and most shapes a model
    // multiplies): the kernel without any check against the edges.
    const bool whole = vector_a && vector_b && M % Tile::kBlockM == 0 && N % Tile::kBlockN == 0 &&
                       K % Tile::kBlockK == 0;
    if (whole) {
        gemm_wmma_kernel<Tile, T, true, true><<<grid, Tile::kThreads, kShared>>>(A, B, C, M, N, K, vector_a, vector_b);
    } else if (vector_a && vector_b) {
        gemm_wmma_kernel<Tile, T, true><<<grid, Tile::kThreads, kShared>>>(A, B, C, M, N, K, vector_a, vector_b);
    } else {
        gemm_wmma_kernel<Tile, T, false><<<grid, Tile::kThreads, kShared>>>(A, B, C, M, N, K, vector_a, vector_b);
    }
    COURSE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void gemm_wmma_simple(const __half* A, const __half* B, float* C, int M, int N, int K) {
    launch_simple(A, B, C, M, N, K);
}

void gemm_wmma_simple(const __nv_bfloat16* A, const __nv_bfloat16* B, float* C, int M, int N, int K) {
    launch_simple(A, B, C, M, N, K);
}

void gemm_wmma(const __half* A, const __half* B, float* C, int M, int N, int K) {
    launch_tiled<DefaultTiling>(A, B, C, M, N, K);
}

void gemm_wmma(const __nv_bfloat16* A, const __nv_bfloat16* B, float* C, int M, int N, int K) {
    launch_tiled<DefaultTiling>(A, B, C, M, N, K);
}

#ifdef COURSE_BENCH_OF_REFERENCE
// Not part of the contract: the benchmark of the reference (and only it)
// times other configurations of the same kernel too, so that one GPU run
// compares them, each on the half inputs, as its own row: a label that
// says what the configuration is, and its launcher.
using TilingRun = std::pair<std::string, void (*)(const __half*, const __half*, float*, int, int, int)>;

namespace {

template <class Tile>
std::string describe() {
    const auto n = [](int v) { return std::to_string(v); };
    return n(Tile::kBlockM) + " x " + n(Tile::kBlockN) + " tiles, " + n(Tile::kWarpsM * Tile::kWarpsN) +
           " warps of " + n(Tile::kWarpM) + " x " + n(Tile::kWarpN) + ", K step " + n(Tile::kBlockK) + ", " +
           n(Tile::kStages) + " stages, " + n(Tile::kMinBlocksPerSM) + " block(s)/SM" +
           (Tile::kGroupRows != kGroupRows ? ", groups of " + n(Tile::kGroupRows) + " tile rows" : "") +
           (Tile::kPrefetchFragments ? ", next fragments prefetched" : "") +
           (Tile::kCopySlices > 1 ? ", copies in " + n(Tile::kCopySlices) + " slices a step" : "");
}

template <class Tile>
void run_tiling(const __half* A, const __half* B, float* C, int M, int N, int K) {
    launch_tiled<Tile>(A, B, C, M, N, K);
}

template <class... Tiles>
std::vector<TilingRun> runs() {
    return {TilingRun{describe<Tiles>(), &run_tiling<Tiles>}...};
}

}  // namespace

std::vector<TilingRun> other_tilings() {
    return runs<
        // The previous reference: 128 x 128 tiles, 8 warps of 32 x 64, K step 32, 4 stages (74 KiB, two
        // blocks an SM), the baseline of the two changes that made the present one faster.
        Tiling<128, 128, 4, 2, 4, 2, 32>,
        // The present one's warp tiles and K step on 128 x 128 block tiles (4 warps, 108 KiB, two blocks
        // an SM): what the 128 x 256 block tile adds on top.
        Tiling<128, 128, 2, 2, 3, 2, 64>,
        // The present one's shape without its reordering (the reference until 2026-11-26, 0.43x cuBLAS),
        // with each of its two changes alone, and with both in other proportions or shapes. P: the
        // fragments of the next 16 columns of K loaded while the present ones are multiplied, and a step's
        // first ones before the step (PrefetchFragments). Sn: the copies of a step started in n slices,
        // one every 4 / n sub-steps (CopySlices).
        Tiling<128, 256, 2, 4, 3, 1, 64>,                        // neither
        Tiling<128, 256, 2, 4, 3, 1, 64, kGroupRows, true>,      // P
        Tiling<128, 256, 2, 4, 3, 1, 64, kGroupRows, false, 4>,  // S4
        Tiling<128, 256, 2, 4, 3, 1, 64, kGroupRows, true, 4>,   // P + S4
        // P + S4 with 4 stages (204 KiB): three steps in flight instead of two.
        Tiling<128, 256, 2, 4, 4, 1, 64, kGroupRows, true, 4>,
        // P + S2 with K steps of 32 and 4 stages (106 KiB): twice the barriers, half the step.
        Tiling<128, 256, 2, 4, 4, 1, 32, kGroupRows, true, 2>,
        // P + S4 with K steps of 128 and 2 stages (204 KiB): half the barriers; a step's copies land while
        // the one before is multiplied, the last slice with two of its eight sub-steps to go.
        Tiling<128, 256, 2, 4, 2, 1, 128, kGroupRows, true, 4>,
        // P + S4 with groups of 8 and of 4 rows of tiles instead of 16 (the order blocks take C's tiles).
        Tiling<128, 256, 2, 4, 3, 1, 64, 8, true, 4>,
        Tiling<128, 256, 2, 4, 3, 1, 64, 4, true, 4>,
        // P + S4 on 256 x 128 block tiles (warps 4 x 2, each still 64 x 64).
        Tiling<256, 128, 4, 2, 3, 1, 64, kGroupRows, true, 4>,
        // P + S4 on 128 x 128 block tiles of 4 warps, two blocks an SM.
        Tiling<128, 128, 2, 2, 3, 2, 64, kGroupRows, true, 4>>();
}
#endif

}  // namespace lesson22
