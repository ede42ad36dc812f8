// Lesson 23 reference: FlashAttention's forward pass, O = softmax(Q·Kᵀ/√d)·V
// for one head, without storing the N x N scores.
//
// Two kernels. attention_simple_kernel gives each thread one query row and
// walks over the keys one by one with the online softmax of lesson 20, in
// float, reading K and V from global memory: short, correct and slow.
// flash_attention_kernel is the real thing: a block keeps 16, 32 or 64 rows
// of Q in shared memory and streams tiles of 64 keys past them, the next
// tile's loads in flight while the current one is computed; each band of 16
// rows belongs to 2 or 4 warps (key groups), each taking its share of every
// tile, whose states merge at the end. Scores and products run on tensor
// cores (wmma), the softmax is online across tiles, and only O and the
// row's log-sum-exp L reach the caller's memory. The shape of a block is a
// template parameter; flash_attention() picks one from N and the SM count.
// When the blocks of query rows are too few to give every SM work (one head
// of a few thousand tokens), the keys are split too: several blocks take the
// same rows and a share of the keys each, leave their unnormalised states in
// a scratch buffer, and a second kernel merges them (Flash-Decoding's
// split-KV).
#include <flash_attention.hpp>

#include <course/cuda_check.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>

namespace lesson23 {

namespace {

namespace wmma = nvcuda::wmma;

constexpr int kWarpSize = 32;
constexpr float kLog2e = 1.4426950408889634f;  // log2(e): exp(x) = exp2(x * log2(e))
constexpr float kLn2 = 0.6931471805599453f;

void check_arguments(const char* function, int N, int d) {
    if (N < 0) throw std::invalid_argument(std::string(function) + ": N must be >= 0, got " + std::to_string(N));
    if (d != 64 && d != 128) {
        throw std::invalid_argument(std::string(function) + ": d must be 64 or 128, got " + std::to_string(d));
    }
}

// ---------------------------------------------------------------- one thread per query row

constexpr int kSimpleThreads = 128;

template <int D>
__global__ void attention_simple_kernel(const __half* Q, const __half* K, const __half* V, __half* O, float* L,
                                        int N, bool causal, float scale_log2) {
    const int i = static_cast<int>(blockIdx.x) * kSimpleThreads + static_cast<int>(threadIdx.x);
    if (i >= N) return;
    float q[D], acc[D];
    for (int c = 0; c < D; ++c) {
        // The scale, and log2(e) so that exp2f can replace expf, folded into q once.
        q[c] = __half2float(Q[static_cast<std::size_t>(i) * D + c]) * scale_log2;
        acc[c] = 0.0f;
    }
    float m = -INFINITY, l = 0.0f;  // running maximum (log2 units) and running sum of exp2(s - m)
    const int keys = causal ? i + 1 : N;
    for (int j = 0; j < keys; ++j) {
        const __half* k = K + static_cast<std::size_t>(j) * D;
        float s = 0.0f;
        for (int c = 0; c < D; ++c) s += q[c] * __half2float(k[c]);
        const float m_new = fmaxf(m, s);
        // alpha rescales everything summed so far to the new maximum (0 on the first key).
        const float alpha = exp2f(m - m_new);
        const float p = exp2f(s - m_new);
        l = l * alpha + p;
        const __half* v = V + static_cast<std::size_t>(j) * D;
        for (int c = 0; c < D; ++c) acc[c] = acc[c] * alpha + p * __half2float(v[c]);
        m = m_new;
    }
    const float inv_l = 1.0f / l;
    for (int c = 0; c < D; ++c) O[static_cast<std::size_t>(i) * D + c] = __float2half_rn(acc[c] * inv_l);
    L[i] = (m + log2f(l)) * kLn2;
}

// ---------------------------------------------------------------- FlashAttention: tiles on tensor cores

constexpr int kFragment = 16;  // wmma's 16 x 16 x 16
constexpr int kBlockK = 64;    // keys per tile, whatever the shape
constexpr int kVector = 8;     // halves per 16-byte load
// Rows of half tiles padded by 8 halves (16 bytes), rows of the float
// scratch by 4 floats: rows then start in different banks, and every 16th
// row stays 32-byte aligned, as a fragment's first element must be.
constexpr int kPadHalf = 8;
constexpr int kPadFloat = 4;

// The parallel shape of a block: RowWarps bands of 16 query rows (1, 2 or
// 4: 16, 32 or 64 rows per block), each band shared by KeyGroups warps (2
// or 4), warp g of a band taking keys [g * 64 / KeyGroups, (g + 1) * 64 /
// KeyGroups) of every tile of 64 keys. The tiles of keys stay 64 long for
// every shape, so a block of 16 or 32 query rows is not square: the causal
// skip and mask below compare key and query positions, not tile numbers.
template <int RowWarps, int KeyGroups>
struct Shape {
    static_assert(RowWarps == 1 || RowWarps == 2 || RowWarps == 4, "1, 2 or 4 bands of 16 query rows per block");
    static_assert(KeyGroups == 2 || KeyGroups == 4, "2 or 4 key groups per band");
    static constexpr int kRowWarps = RowWarps;
    static constexpr int kKeyGroups = KeyGroups;
    static constexpr int kWarps = kRowWarps * kKeyGroups;            // 2 to 16
    static constexpr int kThreads = kWarps * kWarpSize;              // 64 to 512
    static constexpr int kBlockQ = kRowWarps * kFragment;            // 16, 32 or 64 query rows per block
    static constexpr int kGroupKeys = kBlockK / kKeyGroups;          // 32 or 16 keys of each tile per warp
    static constexpr int kScoreStride = kGroupKeys + kPadFloat;      // 36 or 20 floats
    static constexpr int kProbStride = kGroupKeys + kPadHalf;        // 40 or 24 halves
};

// The keys of a block of query rows are split over at most this many blocks.
constexpr int kMaxSplits = 4;

// The layout of the dynamic shared memory, for head dimension D and shape S.
template <int D, class S>
struct Shared {
    static constexpr int kStride = D + kPadHalf;       // halves per row of the Q, K and V tiles
    static constexpr int kMergeStride = D + kPadFloat;  // floats per row of the merge buffer
    __half q[S::kBlockQ][kStride];
    union {
        struct {
            __half k[kBlockK][kStride];
            __half v[kBlockK][kStride];
        } tiles;  // during the walk
        // After it, the accumulators of O of one key group's warps at a
        // time, for their partners in group 0 to merge (K and V are needed
        // no more).
        float merge[S::kRowWarps][kFragment][kMergeStride];
    } kv;
    float scores[S::kWarps][kFragment][S::kScoreStride];  // each warp's 16 x 32 (or 16 x 16) scores
    __half probs[S::kWarps][kFragment][S::kProbStride];   // ... and probabilities
    float row_factor[S::kWarps][kFragment];               // per row: alpha while streaming, then merge factors
    float partial_max[S::kRowWarps][kFragment];           // one key group's m and l per row, for the merge
    float partial_sum[S::kRowWarps][kFragment];
};

// Copies rows [row0, row0 + Rows) of an N x D half matrix into a shared
// tile, 16 bytes at a time; rows past N become zeros (the tile of Q).
template <int Rows, int D, int Threads>
__device__ __forceinline__ void load_rows(__half (*tile)[D + kPadHalf], const __half* src, int N, int row0) {
    constexpr int kChunksPerRow = D / kVector;
    for (int chunk = static_cast<int>(threadIdx.x); chunk < Rows * kChunksPerRow; chunk += Threads) {
        const int r = chunk / kChunksPerRow;
        const int c = chunk % kChunksPerRow * kVector;
        uint4 value = make_uint4(0u, 0u, 0u, 0u);
        if (row0 + r < N) value = *reinterpret_cast<const uint4*>(src + static_cast<std::size_t>(row0 + r) * D + c);
        __half* dst = &tile[r][c];
        *reinterpret_cast<uint4*>(dst) = value;
    }
}

// A tile of 64 rows of K or V is 64 * D / 8 chunks of 16 bytes: 2 per
// thread of a block of 256 for d = 64, 4 for d = 128.
template <int D, int Threads>
constexpr int kChunksPerThread = kBlockK * D / kVector / Threads;

// Reads this thread's chunks of rows [row0, row0 + 64) of an N x D matrix
// into registers; rows past N read as zeros. Zeros matter for V: a masked
// key's probability is 0, and 0 times a NaN left in shared memory is NaN.
// Nothing waits for these loads until store_rows() uses them: issued before
// a tile is computed, they arrive while it is.
// (Count is deduced from the array: Clang before 15 cannot parse a variable
// template of two arguments as a parameter's array bound.)
template <int D, int Threads, int Count>
__device__ __forceinline__ void fetch_rows(uint4 (&chunks)[Count], const __half* src, int N, int row0) {
    static_assert(Count == kChunksPerThread<D, Threads>, "one chunk array element per chunk of this thread");
    constexpr int kChunksPerRow = D / kVector;
#pragma unroll
    for (int i = 0; i < Count; ++i) {
        const int chunk = static_cast<int>(threadIdx.x) + i * Threads;
        const int r = chunk / kChunksPerRow;
        const int c = chunk % kChunksPerRow * kVector;
        chunks[i] = make_uint4(0u, 0u, 0u, 0u);
        if (row0 + r < N) chunks[i] = *reinterpret_cast<const uint4*>(src + static_cast<std::size_t>(row0 + r) * D + c);
    }
}

// Stores what fetch_rows() read into the shared tile, at the same places.
template <int D, int Threads, int Count>
__device__ __forceinline__ void store_rows(__half (*tile)[D + kPadHalf], const uint4 (&chunks)[Count]) {
    static_assert(Count == kChunksPerThread<D, Threads>, "one chunk array element per chunk of this thread");
    constexpr int kChunksPerRow = D / kVector;
#pragma unroll
    for (int i = 0; i < Count; ++i) {
        const int chunk = static_cast<int>(threadIdx.x) + i * Threads;
        __half* dst = &tile[chunk / kChunksPerRow][chunk % kChunksPerRow * kVector];
        *reinterpret_cast<uint4*>(dst) = chunks[i];
    }
}

// Two halves side by side in 32 bits (the first in the low 16 bits, as in
// memory): 8 halves then go out in one 16-byte store.
__device__ __forceinline__ unsigned pack_halves(__half first, __half second) {
    return static_cast<unsigned>(__half_as_ushort(first)) | static_cast<unsigned>(__half_as_ushort(second)) << 16;
}

using Accumulator = wmma::fragment<wmma::accumulator, kFragment, kFragment, kFragment, float>;

// At d = 64, 16 warps per SM (2 blocks of 8 or 1 of 16): at most 128
// registers a thread; blocks of 4 warps, whose threads each hold twice the
// chunks of the next K and V tiles, spill at 4 per SM and get 3. d = 128
// needs more registers for its accumulators of O: 8 warps per SM where a
// block has fewer (a block of 16 warps is capped at 128 registers by the
// register file itself, and spills a little).
template <int D, class S>
constexpr int kMinBlocks = D == 64 ? (S::kWarps == 4 ? 3 : 16 / S::kWarps) : (S::kWarps >= 8 ? 1 : 8 / S::kWarps);

// Where the blocks of a split key range leave their states: for split s
// and query row r (of the `rows` padded rows, blocks of rows x rows per
// block), the unnormalised O at o[(s * rows + r) * D ...] (d floats), the
// maximum m[s * rows + r] (log2 units) and the sum l[s * rows + r].
// splits = 1: nothing is split, and the pointers are not used.
struct SplitScratch {
    float* o;
    float* m;
    float* l;
    std::size_t rows;
    int splits;
};

// The number of tiles of 64 keys the block of query rows from q0 walks.
// With causal, tile t holds keys from t * 64 on: those past the block's last
// query row (q0 + block_rows - 1) see nobody, so the walk stops at the tile
// holding that row's key, the diagonal tile. With 64 query rows that is t =
// q0 / 64, the only tile that needs masking; with 16 or 32, the diagonal
// tile holds keys past some of the block's rows either way.
__device__ __forceinline__ int key_tiles_of_block(int q0, int block_rows, int N, bool causal) {
    const int key_tiles = (N + kBlockK - 1) / kBlockK;
    const int diagonal_tile = (q0 + block_rows - 1) / kBlockK;
    const int tiles = causal ? min(key_tiles, diagonal_tile + 1) : key_tiles;
    return tiles;
}

// The splits a block of query rows uses: as many as asked, but no more than
// it has tiles (a causal block near the start has few), so that no split is
// empty.
__device__ __forceinline__ int used_splits_of_block(int q0, int block_rows, int N, bool causal, int splits) {
    return min(splits, key_tiles_of_block(q0, block_rows, N, causal));
}

// The merge of the splits, a second kernel: the stream runs it after
// flash_attention_kernel has finished, so every split's state is stored
// (within one launch, a block could only wait for the others through
// atomics and fences). A thread per 4 columns of a query row: the row's
// states, each rescaled to their common maximum M as the key groups' are,
//     l = sum_s l_s 2^(m_s - M),   O = sum_s O_s 2^(m_s - M) / l,
// then O as halves (one 8-byte store) and, by the row's first thread, L.
// 4 columns, one float4 of each split: a warp's loads then read 512
// contiguous bytes of a split's state, its stores write 256 of O.
constexpr int kMergeThreads = 256;
constexpr int kMergeColumns = 4;

template <int D>
__global__ void __launch_bounds__(kMergeThreads) merge_splits_kernel(SplitScratch scratch, __half* O, float* L,
                                                                     int N, int block_rows, bool causal) {
    constexpr int kChunksPerRow = D / kMergeColumns;
    const long long chunk = static_cast<long long>(blockIdx.x) * kMergeThreads + threadIdx.x;
    const int row = static_cast<int>(chunk / kChunksPerRow);
    if (row >= N) return;
    const int c = static_cast<int>(chunk % kChunksPerRow) * kMergeColumns;
    const int used_splits = used_splits_of_block(row / block_rows * block_rows, block_rows, N, causal, scratch.splits);
    if (used_splits == 1) return;  // that block wrote its rows itself
    const std::size_t at = static_cast<std::size_t>(row);
    // Every split's m is finite (see the merge of the key groups).
    float m_max = -INFINITY;
#pragma unroll
    for (int s = 0; s < kMaxSplits; ++s) {
        if (s < used_splits) m_max = fmaxf(m_max, scratch.m[s * scratch.rows + at]);
    }
    float weight[kMaxSplits];
    float l_sum = 0.0f;
#pragma unroll
    for (int s = 0; s < kMaxSplits; ++s) {
        weight[s] = 0.0f;
        if (s < used_splits) {
            weight[s] = exp2f(scratch.m[s * scratch.rows + at] - m_max);
            l_sum += scratch.l[s * scratch.rows + at] * weight[s];
        }
    }
    const float inv_l = 1.0f / l_sum;
    float4 sum = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll
    for (int s = 0; s < kMaxSplits; ++s) {
        if (s < used_splits) {
            const float w = weight[s] * inv_l;
            const float4 part = *reinterpret_cast<const float4*>(scratch.o + (s * scratch.rows + at) * D + c);
            sum.x += w * part.x;
            sum.y += w * part.y;
            sum.z += w * part.z;
            sum.w += w * part.w;
        }
    }
    *reinterpret_cast<uint2*>(O + at * D + c) =
        make_uint2(pack_halves(__float2half_rn(sum.x), __float2half_rn(sum.y)),
                   pack_halves(__float2half_rn(sum.z), __float2half_rn(sum.w)));
    if (c == 0) L[row] = (m_max + log2f(l_sum)) * kLn2;
}

template <int D, class S>
__global__ void __launch_bounds__(S::kThreads, kMinBlocks<D, S>) flash_attention_kernel(
    const __half* Q, const __half* K, const __half* V, __half* O, float* L, int N, bool causal, float scale_log2,
    SplitScratch split_scratch) {
    constexpr int kRowWarps = S::kRowWarps;
    constexpr int kKeyGroups = S::kKeyGroups;
    constexpr int kThreads = S::kThreads;
    constexpr int kBlockQ = S::kBlockQ;
    constexpr int kGroupKeys = S::kGroupKeys;
    constexpr int kScoreStride = S::kScoreStride;
    constexpr int kProbStride = S::kProbStride;
    static_assert(kBlockK * D / kVector % kThreads == 0, "a tile of K splits evenly over the threads");
    extern __shared__ __align__(128) unsigned char shared_bytes[];
    Shared<D, S>& sh = *reinterpret_cast<Shared<D, S>*>(shared_bytes);
    constexpr int kStride = Shared<D, S>::kStride;
    constexpr int kMergeStride = Shared<D, S>::kMergeStride;
    constexpr int kOutFragments = D / kFragment;             // accumulator fragments across a row of O
    constexpr int kScoreFragments = kGroupKeys / kFragment;  // ... across a row of the warp's scores
    constexpr int kElements = Accumulator::num_elements;     // elements of a fragment per lane
    constexpr int kRowHalf = kGroupKeys / 2;                 // columns of the scores per lane

    const int warp = static_cast<int>(threadIdx.x) / kWarpSize;
    const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
    // Warps w, w + kRowWarps, ... own the same 16 query rows; with 2 key
    // groups w takes the first 32 keys of every tile, w + kRowWarps the last
    // 32 (with 4, 16 keys each). Several warps per 16 rows: a single head of
    // 4096 tokens is only 256 bands of 16 rows, too few warps to hide the
    // latencies of an H100 without this split.
    const int band = warp % kRowWarps;
    const int group = warp / kRowWarps;
    const int group_key0 = group * kGroupKeys;
    // Block x takes split x % splits of the keys of a block of query rows;
    // the splits of one block of rows are neighbours in the grid, so they
    // run at the same time and share their tile of Q in the L2.
    // Causal blocks near the end of the sequence have the most tiles to
    // walk: start them first, so that the short ones fill the gaps at the end.
    const int splits = split_scratch.splits;
    const int q_blocks = static_cast<int>(gridDim.x) / splits;
    const int q_index = static_cast<int>(blockIdx.x) / splits;
    const int split = static_cast<int>(blockIdx.x) % splits;
    const int q_tile = causal ? q_blocks - 1 - q_index : q_index;
    const int q0 = q_tile * kBlockQ;

    // The block's tiles, split evenly; the blocks of the splits a block of
    // rows does not use leave at once, all their threads together, before
    // any barrier.
    const int tiles = key_tiles_of_block(q0, kBlockQ, N, causal);
    const int used_splits = used_splits_of_block(q0, kBlockQ, N, causal, splits);
    if (split >= used_splits) return;
    const int tile_begin = split * tiles / used_splits;
    const int tile_end = (split + 1) * tiles / used_splits;

    float(*scores)[kScoreStride] = sh.scores[warp];
    __half(*probs)[kProbStride] = sh.probs[warp];
    float* row_factor = sh.row_factor[warp];

    // Where each accumulator element sits is the hardware's secret (it
    // differs between GPUs, and on the emulator), but it is the same for
    // every accumulator fragment of this type: load a 16 x 16 matrix whose
    // every element holds its row number, and each lane learns the row of
    // each of its elements. That is what lets O stay in registers and still
    // be rescaled row by row.
    for (int e = lane; e < kFragment * kFragment; e += kWarpSize) {
        scores[e / kFragment][e % kFragment] = static_cast<float>(e / kFragment);
    }
    __syncwarp();
    Accumulator row_of;
    wmma::load_matrix_sync(row_of, &scores[0][0], kScoreStride, wmma::mem_row_major);

    // The tile of Q, and the first tiles of K and V on their way.
    load_rows<kBlockQ, D, kThreads>(sh.q, Q, N, q0);
    constexpr int kChunks = kChunksPerThread<D, kThreads>;
    uint4 next_k[kChunks], next_v[kChunks];
    fetch_rows<D, kThreads>(next_k, K, N, tile_begin * kBlockK);
    fetch_rows<D, kThreads>(next_v, V, N, tile_begin * kBlockK);

    Accumulator o[kOutFragments];
#pragma unroll
    for (int n = 0; n < kOutFragments; ++n) wmma::fill_fragment(o[n], 0.0f);

    // Lanes 2r and 2r + 1 own row r of the warp's 16: each takes half of
    // its 32 (or 16) columns, and both keep the row's m and l (over the warp's keys).
    const int row = lane / 2;
    const int half_row = lane % 2;
    const int query = q0 + band * kFragment + row;
    float m = -INFINITY;  // running maximum of the scaled scores, in log2 units
    float l = 0.0f;       // running sum of exp2(s - m)

    for (int t = tile_begin; t < tile_end; ++t) {
        const int k0 = t * kBlockK;
        store_rows<D, kThreads>(sh.kv.tiles.k, next_k);
        store_rows<D, kThreads>(sh.kv.tiles.v, next_v);
        // Each warp reads rows of Q, K and V other threads stored.
        __syncthreads();
        // The next tiles: their loads are in flight while this one is computed.
        if (t + 1 < tile_end) {
            fetch_rows<D, kThreads>(next_k, K, N, k0 + kBlockK);
            fetch_rows<D, kThreads>(next_v, V, N, k0 + kBlockK);
        }

        // S = Q·Kᵀ for the warp's 16 rows and 32 keys: Kᵀ is K read
        // column-major, so the tile of K serves as matrix_b with no transpose
        // in memory. Each fragment of Q serves both fragments of scores.
        Accumulator s[kScoreFragments];
#pragma unroll
        for (int n = 0; n < kScoreFragments; ++n) wmma::fill_fragment(s[n], 0.0f);
#pragma unroll
        for (int kk = 0; kk < D; kk += kFragment) {
            wmma::fragment<wmma::matrix_a, kFragment, kFragment, kFragment, __half, wmma::row_major> a;
            wmma::load_matrix_sync(a, &sh.q[band * kFragment][kk], kStride);
#pragma unroll
            for (int n = 0; n < kScoreFragments; ++n) {
                wmma::fragment<wmma::matrix_b, kFragment, kFragment, kFragment, __half, wmma::col_major> b;
                wmma::load_matrix_sync(b, &sh.kv.tiles.k[group_key0 + n * kFragment][kk], kStride);
                wmma::mma_sync(s[n], a, b, s[n]);
            }
        }
#pragma unroll
        for (int n = 0; n < kScoreFragments; ++n) {
            wmma::store_matrix_sync(&scores[0][n * kFragment], s[n], kScoreStride, wmma::mem_row_major);
        }
        __syncwarp();

        // The online softmax on the tile: each lane's 16 (or 8) scores of
        // its row, read 4 at a time into registers. A tile needs masking
        // where it runs past N or, with causal, holds a key past the block's
        // first query row.
        const int c0 = half_row * kRowHalf;
        const bool masked_tile = k0 + kBlockK > N || (causal && k0 + kBlockK - 1 > q0);
        float x[kRowHalf];
        float tile_max = -INFINITY;
#pragma unroll
        for (int c = 0; c < kRowHalf; c += 4) {
            const float* from = &scores[row][c0 + c];
            const float4 four = *reinterpret_cast<const float4*>(from);
            x[c] = four.x * scale_log2;
            x[c + 1] = four.y * scale_log2;
            x[c + 2] = four.z * scale_log2;
            x[c + 3] = four.w * scale_log2;
        }
#pragma unroll
        for (int c = 0; c < kRowHalf; ++c) {
            const int key = k0 + group_key0 + c0 + c;
            if (masked_tile && (key >= N || (causal && key > query))) x[c] = -INFINITY;
            tile_max = fmaxf(tile_max, x[c]);
        }
        tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 1));
        const float m_new = fmaxf(m, tile_max);
        // A warp may see no key of a row in a tile (its keys all past N,
        // or above the diagonal), even in every tile; exp2(-inf - (-inf))
        // would be NaN, so such a row keeps m = -inf and adds nothing.
        const float m_safe = m_new == -INFINITY ? 0.0f : m_new;
        const float alpha = exp2f(m - m_safe);
        float sum = 0.0f;
#pragma unroll
        for (int c = 0; c < kRowHalf; c += kVector) {
            __half p[kVector];
#pragma unroll
            for (int e = 0; e < kVector; ++e) {
                p[e] = __float2half_rn(exp2f(x[c + e] - m_safe));
                // l sums the probabilities as P·V will use them, rounded to
                // half: O / l is then a true weighted average of rows of V.
                sum += __half2float(p[e]);
            }
            __half* to = &probs[row][c0 + c];
            *reinterpret_cast<uint4*>(to) = make_uint4(pack_halves(p[0], p[1]), pack_halves(p[2], p[3]),
                                                       pack_halves(p[4], p[5]), pack_halves(p[6], p[7]));
        }
        sum += __shfl_xor_sync(0xffffffffu, sum, 1);
        l = l * alpha + sum;
        m = m_new;
        if (half_row == 0) row_factor[row] = alpha;
        __syncwarp();

        // O = diag(alpha)·O + P·V: rescale each element by its row's alpha
        // (the same kElements rows for every fragment: looked up once), then
        // add this tile's products.
        float factor[kElements];
#pragma unroll
        for (int e = 0; e < kElements; ++e) factor[e] = row_factor[static_cast<int>(row_of.x[e])];
#pragma unroll
        for (int n = 0; n < kOutFragments; ++n) {
#pragma unroll
            for (int e = 0; e < kElements; ++e) o[n].x[e] *= factor[e];
        }
        // This loop is not unrolled: unrolled, the compiler loads the
        // fragments of V for both steps ahead of their products and, at
        // d = 128, runs out of registers with O and the next tiles also held.
#pragma unroll 1
        for (int kk = 0; kk < kGroupKeys; kk += kFragment) {
            wmma::fragment<wmma::matrix_a, kFragment, kFragment, kFragment, __half, wmma::row_major> p;
            wmma::load_matrix_sync(p, &probs[0][kk], kProbStride);
#pragma unroll
            for (int n = 0; n < kOutFragments; ++n) {
                wmma::fragment<wmma::matrix_b, kFragment, kFragment, kFragment, __half, wmma::row_major> v;
                wmma::load_matrix_sync(v, &sh.kv.tiles.v[group_key0 + kk][n * kFragment], kStride);
                wmma::mma_sync(o[n], p, v, o[n]);
            }
        }
        // No warp may overwrite K and V with the next tile's while another
        // still multiplies this one (nor the scratch while its lanes read it).
        __syncthreads();
    }

    // The merge: each band's kKeyGroups warps hold (m, l, O) over their
    // shares of the keys. Key groups 1, 2, ... hand their states over in
    // turn through shared memory (K and V's space, free now); group 0
    // combines each with its own as lesson 20 merges two online-softmax
    // states: both rescaled to the larger maximum. The last round also
    // divides by the merged l, unless the keys are split over blocks: then
    // the block's state stays unnormalised for the merge of the splits.
    float(*merge)[kMergeStride] = sh.kv.merge[band];
    float m_all = m, l_all = l;
#pragma unroll 1
    for (int giver = 1; giver < kKeyGroups; ++giver) {
        if (group == giver) {
#pragma unroll
            for (int n = 0; n < kOutFragments; ++n) {
                wmma::store_matrix_sync(&merge[0][n * kFragment], o[n], kMergeStride, wmma::mem_row_major);
            }
            if (half_row == 0) {
                sh.partial_max[band][row] = m;
                sh.partial_sum[band][row] = l;
            }
        }
        // Group 0 reads what the giving group stored.
        __syncthreads();
        if (group == 0) {
            // Group 0 sees the first key of the block's first tile (key 0
            // without a split), which every query of the block sees (with
            // causal, a split starts at or before the block's first row: the
            // walk ends at the diagonal tile, which starts there or before).
            // Its m is finite, and so is the merged maximum.
            const float m_other = sh.partial_max[band][row];
            const float l_other = sh.partial_sum[band][row];
            const float m_mine = m_all;
            m_all = fmaxf(m_mine, m_other);
            const float own = exp2f(m_mine - m_all);
            const float other = exp2f(m_other - m_all);
            l_all = l_all * own + l_other * other;
            // O = (own · O_0 + other · O_g) / l on the last round, each factor per row.
            const float last = giver == kKeyGroups - 1 && used_splits == 1 ? l_all : 1.0f;
            float* other_row_factor = sh.row_factor[warp + giver * kRowWarps];
            if (half_row == 0) {
                row_factor[row] = own / last;
                other_row_factor[row] = other / last;
            }
            __syncwarp();
            float own_factor[kElements], other_factor[kElements];
#pragma unroll
            for (int e = 0; e < kElements; ++e) {
                own_factor[e] = row_factor[static_cast<int>(row_of.x[e])];
                other_factor[e] = other_row_factor[static_cast<int>(row_of.x[e])];
            }
#pragma unroll
            for (int n = 0; n < kOutFragments; ++n) {
                Accumulator theirs;
                wmma::load_matrix_sync(theirs, &merge[0][n * kFragment], kMergeStride, wmma::mem_row_major);
#pragma unroll
                for (int e = 0; e < kElements; ++e) {
                    o[n].x[e] = o[n].x[e] * own_factor[e] + theirs.x[e] * other_factor[e];
                }
            }
        }
        // The next group may overwrite the merge buffer only once group 0
        // has read it.
        if (giver + 1 < kKeyGroups) __syncthreads();
    }
    if (used_splits > 1) {
        // The block's state over its split, O unnormalised, for
        // merge_splits_kernel: by group 0, straight from its fragments.
        if (group != 0) return;
        const std::size_t first = split * split_scratch.rows + static_cast<std::size_t>(q0 + band * kFragment);
#pragma unroll
        for (int n = 0; n < kOutFragments; ++n) {
            wmma::store_matrix_sync(split_scratch.o + first * D + n * kFragment, o[n], D, wmma::mem_row_major);
        }
        if (half_row == 0) {
            split_scratch.m[first + row] = m_all;
            split_scratch.l[first + row] = l_all;
        }
        return;
    }
    if (group != 0) return;  // no barrier follows: the partners finish alone

    // Every lane has read its partner's O before the result goes where it was.
    __syncwarp();
#pragma unroll
    for (int n = 0; n < kOutFragments; ++n) {
        wmma::store_matrix_sync(&merge[0][n * kFragment], o[n], kMergeStride, wmma::mem_row_major);
    }
    __syncwarp();
    // Out as halves, rows past N left out: half a row (d / 2 values) per
    // lane, 8 halves (16 bytes) per store. L = ln(sum_j exp(s_ij)) =
    // (m + log2 l) ln 2.
    if (query < N) {
        __half* out = O + static_cast<std::size_t>(query) * D + half_row * (D / 2);
        const float* in = &merge[row][half_row * (D / 2)];
        for (int c = 0; c < D / 2; c += kVector) {
            *reinterpret_cast<uint4*>(out + c) = make_uint4(
                pack_halves(__float2half_rn(in[c]), __float2half_rn(in[c + 1])),
                pack_halves(__float2half_rn(in[c + 2]), __float2half_rn(in[c + 3])),
                pack_halves(__float2half_rn(in[c + 4]), __float2half_rn(in[c + 5])),
                pack_halves(__float2half_rn(in[c + 6]), __float2half_rn(in[c + 7])));
        }
        if (half_row == 0) L[query] = (m_all + log2f(l_all)) * kLn2;
    }
}

// The launch of one kernel shape: its opt-in to more than 48 KiB of shared
// memory (56 KiB for d = 64, 80 KiB for 128 with 64 rows x 2 key groups:
// dynamic, and the kernel must opt in, once per shape), and how many of its
// blocks an SM holds at once (registers, shared memory and threads, as the
// occupancy calculator counts them), both done once.
template <int D, class S>
constexpr int kSharedBytes = static_cast<int>(sizeof(Shared<D, S>));

template <int D, class S>
int prepare_kernel() {
    static_assert(kSharedBytes<D, S> <= 227 * 1024, "more shared memory than an H100 gives a block");
    static const int resident = [] {
        COURSE_CUDA_CHECK(cudaFuncSetAttribute(flash_attention_kernel<D, S>,
                                               cudaFuncAttributeMaxDynamicSharedMemorySize, kSharedBytes<D, S>));
        int blocks = 0;
        COURSE_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, flash_attention_kernel<D, S>,
                                                                        S::kThreads, kSharedBytes<D, S>));
        return blocks;
    }();
    return resident;
}

// Calls f(std::type_identity<Shape<...>>{}) with the shape of row_warps
// bands (query rows / 16) and key_groups warps per band.
template <class F>
void with_shape(int row_warps, int key_groups, F&& f) {
    if (row_warps == 4 && key_groups == 2) {
        f(std::type_identity<Shape<4, 2>>{});
    } else if (row_warps == 4) {
        f(std::type_identity<Shape<4, 4>>{});
    } else if (row_warps == 2 && key_groups == 2) {
        f(std::type_identity<Shape<2, 2>>{});
    } else if (row_warps == 2) {
        f(std::type_identity<Shape<2, 4>>{});
    } else {
        f(std::type_identity<Shape<1, 4>>{});
    }
}

// What one call launches: the block's shape and the number of splits of
// the keys (1: none).
struct Plan {
    int row_warps, key_groups, splits;
};

// Device memory kept from call to call.
struct CachedBuffer {
    void* data = nullptr;
    std::size_t bytes = 0;
};

// At least `bytes` of `buffer`, grown when a call needs more (cudaFree
// waits for the kernels still using the old one); never shrunk.
void* grow(CachedBuffer& buffer, std::size_t bytes) {
    if (buffer.bytes < bytes) {
        if (buffer.data != nullptr) COURSE_CUDA_CHECK(cudaFree(buffer.data));
        buffer = {};
        COURSE_CUDA_CHECK(cudaMalloc(&buffer.data, bytes));
        buffer.bytes = bytes;
    }
    return buffer.data;
}

// The splits' states of a call, in bytes: for `splits` splits of `rows`
// query rows (the padded rows of the blocks of rows), d + 2 floats per
// split and row (O, m, l). Splitting costs this much memory, O(N d),
// besides O and L; no split, none.
std::size_t split_scratch_bytes(int splits, std::size_t rows, int d) {
    if (splits == 1) return 0;
    return static_cast<std::size_t>(splits) * rows * static_cast<std::size_t>(d + 2) * sizeof(float);
}

// The scratch of a split call, kept for the next calls as cuBLAS keeps its
// workspace, and freed only with the process: allocating and freeing at
// every call would synchronise the device each time. Calls on the default
// stream run one after the other, so one buffer serves them all.
SplitScratch split_scratch(int splits, std::size_t rows, int d) {
    static std::mutex mutex;
    static CachedBuffer states;
    const std::lock_guard<std::mutex> lock(mutex);
    float* o = static_cast<float*>(grow(states, split_scratch_bytes(splits, rows, d)));
    float* m = o + static_cast<std::size_t>(splits) * rows * static_cast<std::size_t>(d);
    float* l = m + static_cast<std::size_t>(splits) * rows;
    return {o, m, l, rows, splits};
}

template <int D, class S>
void launch_flash_shape(int splits, const __half* Q, const __half* K, const __half* V, __half* O, float* L, int N,
                        bool causal, float scale_log2) {
    (void)prepare_kernel<D, S>();
    const int q_blocks = (N + S::kBlockQ - 1) / S::kBlockQ;
    SplitScratch scratch{nullptr, nullptr, nullptr, 0, 1};
    if (splits > 1) scratch = split_scratch(splits, static_cast<std::size_t>(q_blocks) * S::kBlockQ, D);
    constexpr int kBytes = kSharedBytes<D, S>;
    flash_attention_kernel<D, S><<<q_blocks * splits, S::kThreads, kBytes>>>(Q, K, V, O, L, N, causal, scale_log2,
                                                                             scratch);
    COURSE_CUDA_CHECK(cudaGetLastError());
    if (splits > 1) {
        const long long chunks = static_cast<long long>(N) * (D / kMergeColumns);
        const auto blocks = static_cast<unsigned>((chunks + kMergeThreads - 1) / kMergeThreads);
        merge_splits_kernel<D><<<blocks, kMergeThreads>>>(scratch, O, L, N, S::kBlockQ, causal);
        COURSE_CUDA_CHECK(cudaGetLastError());
    }
}

template <int D>
void launch_flash(Plan plan, const __half* Q, const __half* K, const __half* V, __half* O, float* L, int N,
                  bool causal, float scale_log2) {
    with_shape(plan.row_warps, plan.key_groups, [&](auto shape) {
        launch_flash_shape<D, typename decltype(shape)::type>(plan.splits, Q, K, V, O, L, N, causal, scale_log2);
    });
}

// The scale 1/√d and log2(e), folded into one factor of the scores.
float scale_log2_of(int d) { return kLog2e / std::sqrt(static_cast<float>(d)); }

// Every launch of flash_attention, whichever picked the plan.
void launch_plan(Plan plan, const __half* Q, const __half* K, const __half* V, __half* O, float* L, int N, int d,
                 bool causal) {
    if (d == 64) {
        launch_flash<64>(plan, Q, K, V, O, L, N, causal, scale_log2_of(d));
    } else {
        launch_flash<128>(plan, Q, K, V, O, L, N, causal, scale_log2_of(d));
    }
}

// Blocks of a shape an SM holds at once.
int resident_blocks(int d, int row_warps, int key_groups) {
    int blocks = 0;
    with_shape(row_warps, key_groups, [&](auto shape) {
        using S = typename decltype(shape)::type;
        blocks = d == 64 ? prepare_kernel<64, S>() : prepare_kernel<128, S>();
    });
    return blocks > 0 ? blocks : 1;
}

// The number of SMs of the current device, asked once.
int sm_count() {
    static const int count = [] {
        int device = 0, sms = 0;
        COURSE_CUDA_CHECK(cudaGetDevice(&device));
        COURSE_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
        return sms > 0 ? sms : 1;
    }();
    return count;
}

// The launcher's plan. Blocks of 64 query rows x 2 key groups, the shape
// measured fastest with every SM full (N = 16384: 256 blocks, 2 per SM, 131
// TFLOP/s), wherever the blocks of 64 rows, split 4 ways at most, give
// every SM a block; else blocks of 32 rows, with 4 key groups where even
// those leave SMs without a block. The keys are split only where the
// blocks of rows are fewer than the SMs: then into as many splits as make
// the grid about as many blocks as the GPU holds at once (occupancy x SMs),
// 4 at most, and no more than N has tiles of keys. On an H100 (132 SMs, 2 blocks of 64 x 2 per SM at d = 64):
// N = 4096 is 64 blocks of rows x 4 splits, 256 blocks of 16 tiles of keys
// each; N = 8192, 128 x 2; from N = 8385 on, no split. At d = 128 (1 block
// per SM) N = 4096 is 64 x 2. A GUESS until measured: the benchmark times
// the shapes with 1, 2 and 4 splits at N = 4096, and the rule should
// follow what it finds.
Plan choose_plan(int N, int d) {
    const int sms = sm_count();
    const int row_warps = (N + 63) / 64 * kMaxSplits >= sms ? 4 : 2;
    const int rows = row_warps * kFragment;
    const int q_blocks = (N + rows - 1) / rows;
    const int key_groups = row_warps == 4 || q_blocks * kMaxSplits >= sms ? 2 : 4;
    int splits = 1;
    if (q_blocks < sms) {
        const int slots = resident_blocks(d, row_warps, key_groups) * sms;
        const int most = std::min(kMaxSplits, (N + kBlockK - 1) / kBlockK);  // a tile of keys per split at least
        splits = std::clamp((slots + q_blocks / 2) / q_blocks, 1, most);
    }
    return {row_warps, key_groups, splits};
}

}  // namespace

void attention_simple(const __half* Q, const __half* K, const __half* V, __half* O, float* L, int N, int d,
                      bool causal) {
    check_arguments("attention_simple", N, d);
    if (N == 0) return;
    const int blocks = (N + kSimpleThreads - 1) / kSimpleThreads;
    if (d == 64) {
        attention_simple_kernel<64><<<blocks, kSimpleThreads>>>(Q, K, V, O, L, N, causal, scale_log2_of(d));
    } else {
        attention_simple_kernel<128><<<blocks, kSimpleThreads>>>(Q, K, V, O, L, N, causal, scale_log2_of(d));
    }
    COURSE_CUDA_CHECK(cudaGetLastError());
}

void flash_attention(const __half* Q, const __half* K, const __half* V, __half* O, float* L, int N, int d,
                     bool causal) {
    check_arguments("flash_attention", N, d);
    if (N == 0) return;
    launch_plan(choose_plan(N, d), Q, K, V, O, L, N, d, causal);
}

// Every shape and split, for the benchmark and the tests (declared in
// tests/23-flash-attention/flash_attention_shapes.hpp; not part of the
// lesson's contract): rows_per_block 64 or 32 with key_groups 2 or 4, or 16
// with 4; splits 1 to 4.
namespace shapes {

void flash_attention_shape(int rows_per_block, int key_groups, int splits, const __half* Q, const __half* K,
                           const __half* V, __half* O, float* L, int N, int d, bool causal);
void launcher_shape(int N, int d, int& rows_per_block, int& key_groups, int& splits);
std::size_t scratch_bytes(int rows_per_block, int splits, int N, int d);

void flash_attention_shape(int rows_per_block, int key_groups, int splits, const __half* Q, const __half* K,
                           const __half* V, __half* O, float* L, int N, int d, bool causal) {
    check_arguments("flash_attention_shape", N, d);
    const bool shape_known = ((rows_per_block == 64 || rows_per_block == 32) && (key_groups == 2 || key_groups == 4)) ||
                             (rows_per_block == 16 && key_groups == 4);
    if (!shape_known || splits < 1 || splits > kMaxSplits) {
        throw std::invalid_argument(
            "flash_attention_shape: rows_per_block x key_groups must be 64 or 32 x 2 or 4, or 16 x 4, and splits "
            "1 to " + std::to_string(kMaxSplits) + "; got " + std::to_string(rows_per_block) + " x " +
            std::to_string(key_groups) + ", " + std::to_string(splits) + " splits");
    }
    if (N == 0) return;
    launch_plan({rows_per_block / kFragment, key_groups, splits}, Q, K, V, O, L, N, d, causal);
}

// What flash_attention() launches for N and d.
void launcher_shape(int N, int d, int& rows_per_block, int& key_groups, int& splits) {
    check_arguments("launcher_shape", N, d);
    const Plan plan = choose_plan(N, d);
    rows_per_block = plan.row_warps * kFragment;
    key_groups = plan.key_groups;
    splits = plan.splits;
}

// The scratch a call of that shape uses besides O and L, in bytes (the
// buffer kept between calls is the largest any call needed).
std::size_t scratch_bytes(int rows_per_block, int splits, int N, int d) {
    const std::size_t q_blocks = static_cast<std::size_t>((N + rows_per_block - 1) / rows_per_block);
    return split_scratch_bytes(splits, q_blocks * static_cast<std::size_t>(rows_per_block), d);
}

}  // namespace shapes

}  // namespace lesson23
