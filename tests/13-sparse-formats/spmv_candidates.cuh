/// @file spmv_candidates.cuh
/// @brief Candidates for lesson 13's reference csr_spmv (issue #22: reach
/// cusparseSpMV on the H100), kept for the benchmark only: one run times
/// each beside the reference and cuSPARSE, on the same matrix, after
/// checking it on that matrix and on edge cases (sparse_bench.cu).
///
/// One kernel, spmv_candidate_kernel, with the ideas as template
/// parameters, so that every row of the table differs from another in
/// exactly the switches its label names:
/// - `kVector`: entries per load, 1, 2 or 4 (int/float, int2/float2,
///   int4/float4). The group of a row is the smallest power of two of lanes
///   that gives a row of mean length one load per lane, so rows of 16 get 16
///   lanes of 1 entry (the reference's shape), 8 lanes of 2 or 4 lanes of 4.
///   A vector load reads whole sectors that no other instruction reads
///   again, where 4 lanes of scalar loads (the 0.74x attempt) read each
///   sector in four instructions, evicted first in between by __ldcs.
/// - `kOrder`: which rows a group takes. kWarpRuns: each warp a run of
///   consecutive rows, shared out among its groups (the reference's
///   mapping: 8448 warps stream 8448 separate regions). kGridStride: group
///   g takes rows g, g + G, g + 2G, ... (G groups in the grid), so the
///   whole grid sweeps the matrix front to back together.
/// - `kRows`: rows a group has in flight at once. Each row's offsets and
///   first vector are loaded for all kRows rows before any x is gathered,
///   so a lane has kRows x kVector gathers of x in flight instead of
///   kVector, and the dependent chain row_ptr -> cols -> x is waited for
///   once per kRows rows.
/// - `kLoads`: the cache hints. kStreaming: the matrix through __ldcs
///   (evict first: it is read once, x is gathered by every row), x plain
///   (the reference's). kReadOnlyX: the same with x through __ldg (the
///   read-only path, ld.global.nc). kPlain: every load plain. kL2Hints:
///   PTX cache hints (sm_80 on): the matrix not allocated in L1 and evicted
///   first from L2, x evicted last from L2 (createpolicy), so that the
///   stream of the matrix neither takes L1 from x nor pushes x out of L2.
/// - `kMinBlocks`: __launch_bounds__'s minimum of resident blocks per SM
///   (1: the compiler's choice of registers). More rows in flight take
///   more registers, so fewer warps: 4 rows of 4 entries take 79 registers
///   for nvcc 13.0 (3 blocks of 256 an SM), 64 at most with 4 blocks.
/// The grid is what stays resident (the occupancy API times the SMs), so
/// no block waits for a second wave, and each group loops over its rows.
///
/// Every candidate keeps the contract: empty rows give 0, rows of any
/// length and start, cols and vals at any 4-byte alignment (a row's
/// entries before its first vector boundary and after its last are loaded
/// one by one; if cols and vals are misaligned differently no vectors are
/// used), any n_rows.
///
/// Included by sparse_bench.cu alone (nvcc): the tests and the grader never
/// see it. To make one the reference, move spmv_candidate_kernel and its
/// launcher into solutions/13-sparse-formats/sparse.cu and call the chosen
/// instantiation from csr_spmv.
#pragma once

#include <course/cuda_check.hpp>

#include <algorithm>
#include <cstdint>
#include <cuda_runtime.h>

namespace lesson13::candidates {

/// @brief Which rows a group of lanes takes (see the file's comment).
enum class RowOrder { kWarpRuns, kGridStride };

/// @brief The cache hints of the loads (see the file's comment).
enum class Loads { kStreaming, kReadOnlyX, kPlain, kL2Hints };

namespace detail {

constexpr int kThreadsPerBlock = 256;
constexpr unsigned kFullMask = 0xffffffffu;

// kVector consecutive ints and floats as one load.
template <int kVector>
struct Pack;
template <>
struct Pack<1> {
    using Ints = int;
    using Floats = float;
};
template <>
struct Pack<2> {
    using Ints = int2;
    using Floats = float2;
};
template <>
struct Pack<4> {
    using Ints = int4;
    using Floats = float4;
};

// Loads::kL2Hints: the matrix's loads (no L1 allocation, L2 evict first)
// and x's (L2 evict last), in PTX; plain loads where there is no PTX (the
// emulator, nvcc's host pass).
#if defined(__CUDA_ARCH__)
__device__ std::uint64_t l2_evict_first() {
    std::uint64_t policy;
    asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
    return policy;
}
__device__ std::uint64_t l2_evict_last() {
    std::uint64_t policy;
    asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
    return policy;
}
__device__ int load_hinted(const int* p) {
    int v;
    asm("ld.global.L1::no_allocate.L2::cache_hint.b32 %0, [%1], %2;" : "=r"(v) : "l"(p), "l"(l2_evict_first()));
    return v;
}
__device__ float load_hinted(const float* p) {
    float v;
    asm("ld.global.L1::no_allocate.L2::cache_hint.f32 %0, [%1], %2;" : "=f"(v) : "l"(p), "l"(l2_evict_first()));
    return v;
}
__device__ int2 load_hinted(const int2* p) {
    int2 v;
    asm("ld.global.L1::no_allocate.L2::cache_hint.v2.b32 {%0, %1}, [%2], %3;"
        : "=r"(v.x), "=r"(v.y)
        : "l"(p), "l"(l2_evict_first()));
    return v;
}
__device__ float2 load_hinted(const float2* p) {
    float2 v;
    asm("ld.global.L1::no_allocate.L2::cache_hint.v2.f32 {%0, %1}, [%2], %3;"
        : "=f"(v.x), "=f"(v.y)
        : "l"(p), "l"(l2_evict_first()));
    return v;
}
__device__ int4 load_hinted(const int4* p) {
    int4 v;
    asm("ld.global.L1::no_allocate.L2::cache_hint.v4.b32 {%0, %1, %2, %3}, [%4], %5;"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
        : "l"(p), "l"(l2_evict_first()));
    return v;
}
__device__ float4 load_hinted(const float4* p) {
    float4 v;
    asm("ld.global.L1::no_allocate.L2::cache_hint.v4.f32 {%0, %1, %2, %3}, [%4], %5;"
        : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
        : "l"(p), "l"(l2_evict_first()));
    return v;
}
__device__ float load_x_hinted(const float* p) {
    float v;
    asm("ld.global.L2::cache_hint.f32 %0, [%1], %2;" : "=f"(v) : "l"(p), "l"(l2_evict_last()));
    return v;
}
#else
template <typename T>
__device__ T load_hinted(const T* p) {
    return *p;
}
__device__ inline float load_x_hinted(const float* p) { return *p; }
#endif

// A load of the matrix (read once).
template <Loads kLoads, typename T>
__device__ T load_matrix(const T* p) {
    if constexpr (kLoads == Loads::kPlain) {
        return *p;
    } else if constexpr (kLoads == Loads::kL2Hints) {
        return load_hinted(p);
    } else {
        return __ldcs(p);
    }
}

// A gather of x (read by every row that has the column).
template <Loads kLoads>
__device__ float load_x(const float* x, int col) {
    if constexpr (kLoads == Loads::kReadOnlyX) {
        return __ldg(&x[col]);
    } else if constexpr (kLoads == Loads::kL2Hints) {
        return load_x_hinted(&x[col]);
    } else {
        return x[col];
    }
}

// sum += the products of one packed load.
template <Loads kLoads>
__device__ float add_products(float sum, int c, float v, const float* x) {
    return sum + v * load_x<kLoads>(x, c);
}
template <Loads kLoads>
__device__ float add_products(float sum, int2 c, float2 v, const float* x) {
    const float x0 = load_x<kLoads>(x, c.x), x1 = load_x<kLoads>(x, c.y);
    return sum + v.x * x0 + v.y * x1;
}
template <Loads kLoads>
__device__ float add_products(float sum, int4 c, float4 v, const float* x) {
    const float x0 = load_x<kLoads>(x, c.x), x1 = load_x<kLoads>(x, c.y);
    const float x2 = load_x<kLoads>(x, c.z), x3 = load_x<kLoads>(x, c.w);
    return sum + v.x * x0 + v.y * x1 + v.z * x2 + v.w * x3;
}

// sum += entry k's product, loaded alone.
template <Loads kLoads>
__device__ float add_entry(float sum, const int* cols, const float* vals, int k, const float* x) {
    return sum + load_matrix<kLoads>(&vals[k]) * load_x<kLoads>(x, load_matrix<kLoads>(&cols[k]));
}

// The kVector entries from k (a vector boundary) as one load of each array.
template <int kVector, Loads kLoads>
__device__ typename Pack<kVector>::Ints load_cols(const int* cols, int k) {
    return load_matrix<kLoads>(reinterpret_cast<const typename Pack<kVector>::Ints*>(cols + k));
}
template <int kVector, Loads kLoads>
__device__ typename Pack<kVector>::Floats load_vals(const float* vals, int k) {
    return load_matrix<kLoads>(reinterpret_cast<const typename Pack<kVector>::Floats*>(vals + k));
}

// One row's entries split for vector loads: [begin, head_end) one by one,
// then `vectors` loads of kVector entries from head_end (a vector
// boundary), then [tail_begin, end) one by one.
struct RowSplit {
    int begin = 0, head_end = 0, vectors = 0, tail_begin = 0, end = 0;
};

// `skew`: cols' (and vals') distance in entries past a kVector boundary;
// `vectorized`: false when cols and vals are skewed differently (every
// entry then goes one by one).
template <int kVector>
__device__ RowSplit split_row(int begin, int end, int skew, bool vectorized) {
    RowSplit s;
    s.begin = begin;
    s.end = end;
    if (!vectorized) {
        s.head_end = s.tail_begin = end;
        return s;
    }
    const int boundary = begin + (kVector - (begin + skew) % kVector) % kVector;
    s.head_end = min(boundary, end);
    s.vectors = (end - s.head_end) / kVector;
    s.tail_begin = s.head_end + s.vectors * kVector;
    return s;
}

}  // namespace detail

/// @brief y = A x (the contract of lesson13::csr_spmv), a group of lanes
/// per row; see the file's comment for the template parameters.
template <int kVector, RowOrder kOrder, int kRows, Loads kLoads, int kMinBlocks>
__global__ void __launch_bounds__(detail::kThreadsPerBlock, kMinBlocks)
    spmv_candidate_kernel(int n_rows, const int* row_ptr, const int* cols, const float* vals, const float* x,
                          float* y) {
    using Ints = typename detail::Pack<kVector>::Ints;
    using Floats = typename detail::Pack<kVector>::Floats;
    const int nnz = row_ptr[n_rows];
    int lanes = 1;
    while (lanes < 32 && static_cast<long long>(lanes) * kVector * n_rows < nnz) lanes *= 2;
    const int lane = threadIdx.x % lanes, group_in_warp = threadIdx.x % 32 / lanes, groups_per_warp = 32 / lanes;
    const unsigned group_mask = lanes == 32 ? detail::kFullMask : ((1u << lanes) - 1u) << (group_in_warp * lanes);
    const int skew = static_cast<int>(reinterpret_cast<std::uintptr_t>(cols) / sizeof(int) % kVector);
    const bool vectorized =
        skew == static_cast<int>(reinterpret_cast<std::uintptr_t>(vals) / sizeof(float) % kVector);

    const int thread = blockIdx.x * blockDim.x + threadIdx.x, threads = gridDim.x * blockDim.x;
    int first = 0, step = 0, last = 0;  // the group's rows: first, first + step, ... below last
    if constexpr (kOrder == RowOrder::kWarpRuns) {
        const int warps = threads / 32, rows_per_warp = (n_rows + warps - 1) / warps;
        const int run = thread / 32 * rows_per_warp;
        first = run + group_in_warp;
        step = groups_per_warp;
        last = min(n_rows, run + rows_per_warp);
    } else {
        first = thread / lanes;
        step = threads / lanes;
        last = n_rows;
    }

    // The loop is the same for every lane of a group (first, step and last
    // are), so the group's shuffles below have all its lanes.
    for (int r = first; r < last; r += kRows * step) {
        detail::RowSplit split[kRows];
        Ints first_cols[kRows]{};  // (zeros, unread: for the host compiler's -Wmaybe-uninitialized)
        Floats first_vals[kRows]{};
        // Every row's offsets, then every row's first vector: all issued
        // before the first gather of x.
        for (int u = 0; u < kRows; ++u) {
            const int row = r + u * step;
            const int begin = row < last ? row_ptr[row] : 0, end = row < last ? row_ptr[row + 1] : 0;
            split[u] = detail::split_row<kVector>(begin, end, skew, vectorized);
        }
        for (int u = 0; u < kRows; ++u) {
            if (lane < split[u].vectors) {
                const int k = split[u].head_end + lane * kVector;
                first_cols[u] = detail::load_cols<kVector, kLoads>(cols, k);
                first_vals[u] = detail::load_vals<kVector, kLoads>(vals, k);
            }
        }
        float sums[kRows];
        for (int u = 0; u < kRows; ++u) {
            sums[u] = 0.0f;
            if (lane < split[u].vectors) sums[u] = detail::add_products<kLoads>(0.0f, first_cols[u], first_vals[u], x);
        }
        // The rest of each row (nothing, for rows of at most lanes x
        // kVector entries that start on a vector boundary): the entries
        // before the first boundary, the vectors past the lanes' first,
        // the entries after the last boundary.
        for (int u = 0; u < kRows; ++u) {
            const detail::RowSplit& s = split[u];
            float sum = sums[u];
            for (int k = s.begin + lane; k < s.head_end; k += lanes) {
                sum = detail::add_entry<kLoads>(sum, cols, vals, k, x);
            }
            for (int i = lane + lanes; i < s.vectors; i += lanes) {
                const int k = s.head_end + i * kVector;
                sum = detail::add_products<kLoads>(sum, detail::load_cols<kVector, kLoads>(cols, k),
                                                   detail::load_vals<kVector, kLoads>(vals, k), x);
            }
            for (int k = s.tail_begin + lane; k < s.end; k += lanes) {
                sum = detail::add_entry<kLoads>(sum, cols, vals, k, x);
            }
            sums[u] = sum;
        }
        for (int offset = lanes / 2; offset > 0; offset /= 2) {
            for (int u = 0; u < kRows; ++u) sums[u] += __shfl_down_sync(group_mask, sums[u], offset, lanes);
        }
        for (int u = 0; u < kRows; ++u) {
            if (lane == 0 && r + u * step < last) y[r + u * step] = sums[u];
        }
    }
}

/// @brief Launches spmv_candidate_kernel<...> over the blocks that stay
/// resident on the GPU (fewer for a small matrix: one thread per row).
template <int kVector, RowOrder kOrder, int kRows, Loads kLoads, int kMinBlocks = 1>
void csr_spmv(int n_rows, const int* row_ptr, const int* cols, const float* vals, const float* x, float* y) {
    if (n_rows == 0) return;
    const auto kernel = spmv_candidate_kernel<kVector, kOrder, kRows, kLoads, kMinBlocks>;
    // (A lambda that captures the kernel's address crashes nvcc 13.0's front end.)
    static const unsigned resident = [] {
        int device = 0, sms = 0, per_sm = 0;
        COURSE_CUDA_CHECK(cudaGetDevice(&device));
        COURSE_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
        COURSE_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            &per_sm, spmv_candidate_kernel<kVector, kOrder, kRows, kLoads, kMinBlocks>, detail::kThreadsPerBlock, 0));
        return static_cast<unsigned>(std::max(1, sms * per_sm));
    }();
    const unsigned blocks = static_cast<unsigned>(
        std::min<long long>(resident, (static_cast<long long>(n_rows) + detail::kThreadsPerBlock - 1) /
                                          detail::kThreadsPerBlock));
    kernel<<<blocks, detail::kThreadsPerBlock>>>(n_rows, row_ptr, cols, vals, x, y);
    COURSE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace lesson13::candidates
