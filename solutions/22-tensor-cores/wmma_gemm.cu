// Lesson 22 reference: C = A·B on tensor cores through nvcuda::wmma, for
// half and bfloat16 inputs with float accumulation.
//
// Two kernels. gemm_wmma_simple gives each warp one 16 x 16 tile of C and
// loads its fragments straight from global memory: correct, short, and slow,
// since every fragment of A is loaded again by every warp of its row of C.
// gemm_wmma stages 128 x 32 and 32 x 128 tiles in shared memory, once per
// block, and gives each warp a 2 x 4 register block of accumulators, so each
// fragment of A it loads serves 4 products and each of B serves 2.
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
    constexpr int kChunksPerRow = Cols / kVector;
    constexpr int kChunks = Rows * kChunksPerRow;
    for (int chunk = static_cast<int>(threadIdx.x); chunk < kChunks; chunk += kThreads) {
        const int r = chunk / kChunksPerRow;
        const int c = chunk % kChunksPerRow * kVector;
        const int row = row0 + r, col = col0 + c;
        T* dst = &tile[r][c];
        const T* from = src + static_cast<std::size_t>(row) * cols + col;
        if (vectors && row < rows && col + kVector <= cols) {
            *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(from);
        } else {
            for (int i = 0; i < kVector; ++i) {
                dst[i] = row < rows && col + i < cols ? from[i] : zero_value<T>();
            }
        }
    }
}

template <class T>
__global__ void __launch_bounds__(kThreads) gemm_wmma_kernel(const T* A, const T* B, float* C, int M, int N, int K,
                                                              bool vector_a, bool vector_b) {
    __shared__ __align__(32) T a_tile[kBlockM][kAStride];
    __shared__ __align__(32) T b_tile[kBlockK][kBStride];
    // One 16 x 16 float fragment per warp, for the edges of C.
    __shared__ __align__(32) float edge[kWarpsM * kWarpsN][kFragment * kFragment];

    const int warp = static_cast<int>(threadIdx.x) / kWarpSize;
    const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
    const int warp_row = warp / kWarpsN;  // 0 .. 3
    const int warp_col = warp % kWarpsN;  // 0 .. 1
    const int block_row = static_cast<int>(blockIdx.y) * kBlockM;
    const int block_col = static_cast<int>(blockIdx.x) * kBlockN;

    // The register block: 8 accumulators, live for the whole K loop.
    wmma::fragment<wmma::accumulator, kFragment, kFragment, kFragment, float> acc[kFragsM][kFragsN];
#pragma unroll
    for (int i = 0; i < kFragsM; ++i) {
#pragma unroll
        for (int j = 0; j < kFragsN; ++j) wmma::fill_fragment(acc[i][j], 0.0f);
    }

    const int k_tiles = (K + kBlockK - 1) / kBlockK;
    for (int t = 0; t < k_tiles; ++t) {
        const int k0 = t * kBlockK;
        load_tile<kBlockM, kBlockK, kAStride>(a_tile, A, M, K, block_row, k0, vector_a);
        load_tile<kBlockK, kBlockN, kBStride>(b_tile, B, K, N, k0, block_col, vector_b);
        // Each warp reads fragments other warps' threads stored.
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < kBlockK; kk += kFragment) {
            wmma::fragment<wmma::matrix_a, kFragment, kFragment, kFragment, T, wmma::row_major> a[kFragsM];
            wmma::fragment<wmma::matrix_b, kFragment, kFragment, kFragment, T, wmma::row_major> b[kFragsN];
#pragma unroll
            for (int i = 0; i < kFragsM; ++i) {
                wmma::load_matrix_sync(a[i], &a_tile[warp_row * kWarpM + i * kFragment][kk], kAStride);
            }
#pragma unroll
            for (int j = 0; j < kFragsN; ++j) {
                wmma::load_matrix_sync(b[j], &b_tile[kk][warp_col * kWarpN + j * kFragment], kBStride);
            }
            // 8 products from 6 loads: the point of the register block.
#pragma unroll
            for (int i = 0; i < kFragsM; ++i) {
#pragma unroll
                for (int j = 0; j < kFragsN; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
            }
        }
        // No warp may overwrite the tiles with the next step's while another
        // still loads fragments from them.
        __syncthreads();
    }

    // Store. A whole fragment inside C, with rows a multiple of 16 bytes
    // apart (N % 4 == 0), goes straight to C; any other is stored to the
    // warp's shared buffer and copied value by value, inside C only.
#pragma unroll
    for (int i = 0; i < kFragsM; ++i) {
#pragma unroll
        for (int j = 0; j < kFragsN; ++j) {
            const int row = block_row + warp_row * kWarpM + i * kFragment;
            const int col = block_col + warp_col * kWarpN + j * kFragment;
            if (row >= M || col >= N) continue;  // the same for the whole warp
            if (row + kFragment <= M && col + kFragment <= N && N % 4 == 0) {
                wmma::store_matrix_sync(C + static_cast<std::size_t>(row) * N + col, acc[i][j],
                                        static_cast<unsigned>(N), wmma::mem_row_major);
            } else {
                float* buffer = edge[warp];
                wmma::store_matrix_sync(buffer, acc[i][j], kFragment, wmma::mem_row_major);
                __syncwarp();  // the buffer holds what every lane stored
                for (int e = lane; e < kFragment * kFragment; e += kWarpSize) {
                    const int r = row + e / kFragment, c = col + e % kFragment;
                    if (r < M && c < N) C[static_cast<std::size_t>(r) * N + c] = buffer[e];
                }
                __syncwarp();  // every lane has read it before the next fragment is stored there
            }
        }
    }
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
