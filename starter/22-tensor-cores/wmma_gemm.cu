// Lesson 22: C = A·B on tensor cores through nvcuda::wmma, for half and
// bfloat16 inputs with float accumulation.
//
// Goal: make `./course grade 22` pass. Read lessons/22-tensor-cores/README.md
// first; the functions you fill in are documented in wmma_gemm.hpp.
// Stuck? `./course hint 22` shows the hints one by one.
//
// Order that works: gemm_wmma_simple_kernel (one warp, one 16 x 16 tile of
// C, fragments from global memory), then gemm_wmma_kernel: load_tile_async
// (a tile of A or B copied into shared memory with __pipeline_memcpy_async,
// zeros outside the matrix), the warp's 4 x 4 register block of
// accumulators, the pipelined K loop with its one barrier per step, and the
// store. The launchers, which check the arguments, opt in to the shared
// memory and pick the grid, are given.
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
    [[maybe_unused]] const std::size_t row = static_cast<std::size_t>(tile_row) * kFragment;
    [[maybe_unused]] const std::size_t col = static_cast<std::size_t>(tile_col) * kFragment;
    // TODO: one accumulator fragment
    //   wmma::fragment<wmma::accumulator, kFragment, kFragment, kFragment, float> acc;
    // set to 0 (wmma::fill_fragment). Then for k = 0, 16, ... < K: a matrix_a
    // fragment of T (wmma::row_major) loaded from A + row * K + k, a matrix_b
    // fragment loaded from B + k * N + col, and wmma::mma_sync(acc, a, b, acc).
    // ldm, the last argument of load_matrix_sync, is the distance between two
    // rows in memory: K for A, N for B. Last, store acc at C + row * N + col
    // (ldm N, wmma::mem_row_major).
    (void)A;
    (void)B;
    (void)C;
    (void)M;
    (void)K;
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
// shape without the reordering was 0.43x (see the lesson's page).
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
    // TODO: the tile holds Rows x Cols values, in chunks of kVector (8). The
    // block's Threads threads take chunk = threadIdx.x, threadIdx.x +
    // Threads, ... (Rows * Cols / 8 / Threads chunks each); chunk number
    // `chunk` is row chunk / (Cols / kVector) of the tile, its columns from
    // (chunk % (Cols / kVector)) * kVector on, at tile + r * Stride + c.
    // Where `vectors` is true: a chunk inside the matrix (row < rows, col <
    // cols) is one __pipeline_memcpy_async(dst, src + row * cols + col, 16);
    // one outside is __pipeline_memcpy_async(dst, src, 16, 16), which reads
    // nothing and writes 16 zero bytes. Otherwise copy value by value,
    // writing zero_value<T>() for each value outside the matrix. Where Whole
    // is true every chunk lies inside and may be copied without a check
    // (the fast path of whole block tiles); the checked copy is right too.
    (void)tile;
    (void)src;
    (void)rows;
    (void)cols;
    (void)row0;
    (void)col0;
    (void)vectors;
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
    [[maybe_unused]] constexpr int kBlockK = Tile::kBlockK;
    // kStages A tiles, then kStages B tiles (dynamic: more than 48 KiB).
    extern __shared__ __align__(128) unsigned char shared_bytes[];
    T* const a_stages = reinterpret_cast<T*>(shared_bytes);
    T* const b_stages = a_stages + kStages * Tile::kAStage;

    [[maybe_unused]] const int warp = static_cast<int>(threadIdx.x) / kWarpSize;
    [[maybe_unused]] const int lane = static_cast<int>(threadIdx.x) % kWarpSize;

    // Which tile of C: blocks start in the order of their linear index, so
    // this walks down a group of Tile::kGroupRows rows of tiles before moving one
    // column on. The blocks running at once then cover a near-square patch
    // of C and read its rows of A and columns of B from L2, where row by row
    // they would need all of B at once.
    const int tiles_m = static_cast<int>(gridDim.y), tiles_n = static_cast<int>(gridDim.x);
    const int linear = static_cast<int>(blockIdx.y) * tiles_n + static_cast<int>(blockIdx.x);
    int tile_row = 0, tile_col = 0;
    course::grouped_tile(linear, tiles_m, tiles_n, Tile::kGroupRows, tile_row, tile_col);
    [[maybe_unused]] const int block_row = tile_row * Tile::kBlockM;
    [[maybe_unused]] const int block_col = tile_col * Tile::kBlockN;

    // TODO 1: the warp's place in the block tile: warp_row = warp /
    // Tile::kWarpsN (0 .. 1), warp_col = warp % Tile::kWarpsN (0 .. 3). It
    // owns rows warp_row * Tile::kWarpM ... of the block tile and columns
    // warp_col * Tile::kWarpN ...
    //
    // TODO 2: its register block, Tile::kFragsM x Tile::kFragsN (4 x 4)
    // accumulator fragments (float), each set to 0.
    //
    // TODO 3: the pipeline. load_stage(stage, t) would call load_tile_async
    // (passing Whole on) for the 128 x 64 tile of A at (block_row, t *
    // kBlockK) into a_stages + stage * Tile::kAStage (row length
    // Tile::kAStride; 16-byte copies where Vectors || vector_a), and the 64 x
    // 256 tile of B at (t * kBlockK, block_col) into b_stages + stage *
    // Tile::kBStage (Tile::kBStride; Vectors || vector_b). k_tiles = K /
    // kBlockK rounded up. First, for s = 0 .. kStages - 2: load_stage(s, s)
    // if s < k_tiles, then __pipeline_commit() (always: one batch per step).
    // Then for each t: __pipeline_wait_prior(kStages - 2) (your copies of
    // step t have landed), __syncthreads() (everyone's have, and every warp
    // is done with step t - 1), load_stage of step t + kStages - 1 (if <
    // k_tiles) into the stage step t - 1 used, __pipeline_commit(); then
    // multiply stage t % kStages: for kk = 0, 16, 32, 48, the kFragsM
    // fragments of A at a_tile + (warp_row * kWarpM + i * 16) * kAStride +
    // kk (ldm kAStride), the kFragsN of B at b_tile + kk * kBStride +
    // warp_col * kWarpN + j * 16 (ldm kBStride), and mma_sync every pair
    // into acc[i][j].
    //
    // TODO 4: drain the pipeline (__pipeline_wait_prior(0)) and
    // __syncthreads(): the stages become the warps' edge buffers, edge =
    // (float*)shared_bytes + warp * 256. Store each accumulator at row =
    // block_row + warp_row * kWarpM + i * 16, col = block_col + warp_col *
    // kWarpN + j * 16, skipping those with row >= M or col >= N. A fragment
    // wholly inside C, with N % 4 == 0, goes straight to C + row * N + col
    // (ldm N); any other is stored to edge (ldm 16), then, after __syncwarp(),
    // the warp's lanes copy the values with row < M and column < N to C, and
    // __syncwarp() again. (Where Whole is true every fragment lies inside C.)
    (void)A;
    (void)B;
    (void)C;
    (void)M;
    (void)N;
    (void)K;
    (void)vector_a;
    (void)vector_b;
    (void)a_stages;
    (void)b_stages;
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

}  // namespace lesson22
