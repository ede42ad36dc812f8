// Lesson 22: C = A·B on tensor cores through nvcuda::wmma, for half and
// bfloat16 inputs with float accumulation.
//
// Goal: make `./course grade 22` pass. Read lessons/22-tensor-cores/README.md
// first; the functions you fill in are documented in wmma_gemm.hpp.
// Stuck? `./course hint 22` shows the hints one by one.
//
// Order that works: gemm_wmma_simple_kernel (one warp, one 16 x 16 tile of
// C, fragments from global memory), then gemm_wmma_kernel: load_tile (a
// tile of A or B into shared memory, zeros outside the matrix), the K loop
// with its two barriers, the warp's 2 x 4 register block of accumulators,
// and the store. The launchers, which check the arguments and pick the
// grid, are given.
#include <wmma_gemm.hpp>

#include <course/cuda_check.hpp>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
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

// ---------------------------------------------------------------- block tiles in shared memory

constexpr int kBlockM = 128;  // rows of C per block
constexpr int kBlockN = 128;  // columns of C per block
constexpr int kBlockK = 32;   // columns of A (rows of B) per step of the K loop
constexpr int kWarpsM = 4;    // warps down the block tile ...
constexpr int kWarpsN = 2;    // ... and across: 8 warps
constexpr int kThreads = kWarpsM * kWarpsN * kWarpSize;
constexpr int kWarpM = kBlockM / kWarpsM;       // 32 rows of C per warp
constexpr int kWarpN = kBlockN / kWarpsN;       // 64 columns of C per warp
constexpr int kFragsM = kWarpM / kFragment;     // 2 accumulator fragments down ...
constexpr int kFragsN = kWarpN / kFragment;     // ... 4 across: the warp's register block
constexpr int kVector = 8;                      // 16-bit values per 16-byte load
// Rows padded by 8 values (16 bytes). Unpadded, the rows of the B tile are
// 256 bytes apart, so the 8 rows a fragment load reads 16 bytes of at once
// all start in the same bank: 8-way conflicts. 272 bytes apart they spread
// over all 32 banks. The padding keeps every row 16-byte aligned (vector
// stores) and every 16th row 32-byte aligned (a fragment's start).
constexpr int kPad = 8;
constexpr int kAStride = kBlockK + kPad;  // 40 values
constexpr int kBStride = kBlockN + kPad;  // 136 values

static_assert(kFragsM * kFragment * kWarpsM == kBlockM && kFragsN * kFragment * kWarpsN == kBlockN);
static_assert(kBlockK % kFragment == 0 && kBlockK % kVector == 0 && kBlockN % kVector == 0);

template <class T>
__device__ __forceinline__ T zero_value() {
    return T(0.0f);
}

// Copies the Rows x Cols tile of a row-major matrix (rows x cols, starting
// at row0, col0) into a shared tile whose rows are Stride values apart.
// Values outside the matrix become 0: a tile on the edge of K must add
// nothing to the sums, and garbage there (a previous tile's values, or NaN)
// would. 16 bytes at a time where the 8 values are inside and the row
// length allows aligned vectors; one value at a time elsewhere.
template <int Rows, int Cols, int Stride, class T>
__device__ __forceinline__ void load_tile(T (*tile)[Stride], const T* src, int rows, int cols, int row0, int col0,
                                          bool vectors) {
    // TODO: the tile holds Rows x Cols values, in chunks of kVector (8). The
    // block's kThreads threads take chunk = threadIdx.x, threadIdx.x +
    // kThreads, ...; chunk number `chunk` is row chunk / (Cols / kVector) of
    // the tile, its columns from (chunk % (Cols / kVector)) * kVector on.
    // Where `vectors` is true and all 8 values are inside the matrix
    // (row < rows, col + 8 <= cols), copy them as one uint4 (16 bytes);
    // otherwise value by value, writing zero_value<T>() for each value
    // outside the matrix.
    (void)tile;
    (void)src;
    (void)rows;
    (void)cols;
    (void)row0;
    (void)col0;
    (void)vectors;
}

template <class T>
__global__ void __launch_bounds__(kThreads) gemm_wmma_kernel(const T* A, const T* B, float* C, int M, int N, int K,
                                                              bool vector_a, bool vector_b) {
    __shared__ __align__(32) T a_tile[kBlockM][kAStride];
    __shared__ __align__(32) T b_tile[kBlockK][kBStride];
    // One 16 x 16 float fragment per warp, for the edges of C.
    __shared__ __align__(32) float edge[kWarpsM * kWarpsN][kFragment * kFragment];

    [[maybe_unused]] const int warp = static_cast<int>(threadIdx.x) / kWarpSize;
    [[maybe_unused]] const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
    [[maybe_unused]] const int block_row = static_cast<int>(blockIdx.y) * kBlockM;
    [[maybe_unused]] const int block_col = static_cast<int>(blockIdx.x) * kBlockN;
    // TODO 1: the warp's place in the block tile: warp_row = warp / kWarpsN
    // (0 .. 3), warp_col = warp % kWarpsN (0 .. 1). It owns rows
    // warp_row * kWarpM ... of the block tile and columns warp_col * kWarpN ...
    //
    // TODO 2: its register block, kFragsM x kFragsN accumulator fragments
    // (float), each set to 0.
    //
    // TODO 3: the K loop, one step per kBlockK columns of A, rounded up: load
    // the 128 x 32 tile of A at (block_row, k0) into a_tile and the 32 x 128
    // tile of B at (k0, block_col) into b_tile (load_tile, with vector_a and
    // vector_b), __syncthreads(), then for kk = 0, 16: load kFragsM fragments
    // of A from &a_tile[warp_row * kWarpM + i * 16][kk] (ldm kAStride) and
    // kFragsN of B from &b_tile[kk][warp_col * kWarpN + j * 16] (ldm
    // kBStride), and mma_sync every pair into acc[i][j]. __syncthreads()
    // again before the next step overwrites the tiles.
    //
    // TODO 4: store each accumulator at row = block_row + warp_row * kWarpM +
    // i * 16, col = block_col + warp_col * kWarpN + j * 16, skipping those
    // with row >= M or col >= N. A fragment wholly inside C, with N % 4 == 0,
    // goes straight to C + row * N + col (ldm N); any other is stored to
    // edge[warp] (ldm 16), then, after __syncwarp(), the warp's lanes copy
    // the values with row < M and column < N to C, and __syncwarp() again.
    (void)A;
    (void)B;
    (void)C;
    (void)M;
    (void)N;
    (void)K;
    (void)vector_a;
    (void)vector_b;
    (void)a_tile;
    (void)b_tile;
    (void)edge;
}

template <class T>
void launch_tiled(const T* A, const T* B, float* C, int M, int N, int K) {
    check_shape("gemm_wmma", M, N, K);
    if (M == 0 || N == 0) return;
    // 16-byte loads need rows that start 16 bytes apart: K (for A) and N
    // (for B) multiples of 8, and a 16-byte aligned matrix.
    const auto aligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
    const bool vector_a = K % kVector == 0 && aligned(A);
    const bool vector_b = N % kVector == 0 && aligned(B);
    const dim3 grid(static_cast<unsigned>((N + kBlockN - 1) / kBlockN),
                    static_cast<unsigned>((M + kBlockM - 1) / kBlockM));
    gemm_wmma_kernel<T><<<grid, kThreads>>>(A, B, C, M, N, K, vector_a, vector_b);
    COURSE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void gemm_wmma_simple(const __half* A, const __half* B, float* C, int M, int N, int K) {
    launch_simple(A, B, C, M, N, K);
}

void gemm_wmma_simple(const __nv_bfloat16* A, const __nv_bfloat16* B, float* C, int M, int N, int K) {
    launch_simple(A, B, C, M, N, K);
}

void gemm_wmma(const __half* A, const __half* B, float* C, int M, int N, int K) { launch_tiled(A, B, C, M, N, K); }

void gemm_wmma(const __nv_bfloat16* A, const __nv_bfloat16* B, float* C, int M, int N, int K) {
    launch_tiled(A, B, C, M, N, K);
}

}  // namespace lesson22
