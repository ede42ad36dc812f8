// Lesson 21: layer normalisation, the forward pass.
//
// Goal: make `./course grade 21` pass. Read lessons/21-layer-norm/README.md
// first; the functions you fill in are documented in layer_norm.hpp.
// Stuck? `./course hint 21` shows the hints one by one.
//
// Order that works: merge (Chan's merge of two runs' statistics), stats_of
// (a vector's statistics), warp_merge (32 lanes into one), then the kernel's
// two passes. The 16-byte loads and stores (Vec), and the launcher that
// checks the arguments and picks the block size, are given.
#include <layer_norm.hpp>

#include <course/cuda_check.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

namespace lesson21 {

namespace {

[[maybe_unused]] constexpr unsigned kFullMask = 0xffffffffu;

// ---------------------------------------------------------------- the statistics

// The statistics of a run of values: how many, their mean, and M2, the sum
// of their squared deviations from that mean (the variance is M2 / count).
// The count is a float: exact up to 2^24, far above kMaxCols.
struct Stats {
    float count;
    float mean;
    float m2;
};

// Chan's merge of the statistics of two runs into those of both. The new
// mean moves towards b's by b's share of the values; M2 gains, besides both
// runs' own M2, the spread between the two means. Nothing here subtracts two
// large numbers that are nearly equal, which is what makes it accurate where
// mean(x^2) - mean^2 is not. Welford's one-value update is the case b = {1, x, 0}.
[[maybe_unused]] __device__ __forceinline__ Stats merge(const Stats& a, const Stats& b) {
    // TODO: if either side is empty (count 0), return the other unchanged.
    // Otherwise, with n = a.count + b.count and delta = b.mean - a.mean:
    //   mean = a.mean + delta * b.count / n
    //   m2   = a.m2 + b.m2 + delta * delta * a.count * b.count / n
    // (compute b.count / n once: it is the merge's only division).
    return a;
}

// The statistics of V values in registers, by two passes over the registers:
// their mean, then the squared deviations from it (exact enough, and no
// division per value).
template <int V>
[[maybe_unused]] __device__ __forceinline__ Stats stats_of(const float (&v)[V]) {
    // TODO: the mean of the V values, then M2 = the sum of (v[i] - mean)^2.
    // Return {V, mean, M2}.
    return {0.0f, 0.0f, 0.0f};
}

// Merges the statistics of the 32 lanes into lane 0's (a tree of 5 steps,
// shuffles down). Lane 0's result is then shuffled to all: with a butterfly
// (shuffle xor) every lane would merge in its own order, and lanes could end
// with statistics that differ in the last bit.
[[maybe_unused]] __device__ Stats warp_merge(Stats s) {
    // TODO: 5 steps, offset = 16, 8, 4, 2, 1: take the three fields of the
    // lane `offset` above with __shfl_down_sync(kFullMask, field, offset) and
    // merge them into s. Then give every lane lane 0's result:
    // __shfl_sync(kFullMask, field, 0) for each field.
    return s;
}

// ---------------------------------------------------------------- vectorized access

// 16 bytes of a row at a time: 4 floats or 8 halves, loaded in one
// instruction and converted to floats in registers (the arithmetic is always
// float). Loads go through the read-only path; stores are plain.
template <class T>
struct Vec;

template <>
struct Vec<float> {
    static constexpr int kSize = 4;
    __device__ static void load(const float* p, float (&v)[4]) {
        const float4 q = __ldg(reinterpret_cast<const float4*>(p));
        v[0] = q.x;
        v[1] = q.y;
        v[2] = q.z;
        v[3] = q.w;
    }
    __device__ static void store(float* p, const float (&v)[4]) {
        *reinterpret_cast<float4*>(p) = make_float4(v[0], v[1], v[2], v[3]);
    }
    __device__ static float to_float(float x) { return x; }
    __device__ static float from_float(float x) { return x; }
};

template <>
struct Vec<__half> {
    static constexpr int kSize = 8;
    // A 32-bit word holds two halves, the one at the lower address in the low
    // 16 bits; __ushort_as_half and __half_as_ushort reinterpret the bits.
    __device__ static void load(const __half* p, float (&v)[8]) {
        const uint4 q = __ldg(reinterpret_cast<const uint4*>(p));
        const unsigned words[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            v[2 * i] = __half2float(__ushort_as_half(static_cast<unsigned short>(words[i] & 0xffffu)));
            v[2 * i + 1] = __half2float(__ushort_as_half(static_cast<unsigned short>(words[i] >> 16)));
        }
    }
    __device__ static void store(__half* p, const float (&v)[8]) {
        unsigned words[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            // Each value rounded once, to nearest even.
            const unsigned low = __half_as_ushort(__float2half_rn(v[2 * i]));
            const unsigned high = __half_as_ushort(__float2half_rn(v[2 * i + 1]));
            words[i] = low | (high << 16);
        }
        *reinterpret_cast<uint4*>(p) = make_uint4(words[0], words[1], words[2], words[3]);
    }
    __device__ static float to_float(__half x) { return __half2float(x); }
    __device__ static __half from_float(float x) { return __float2half_rn(x); }
};

// gamma and beta, V at a time (float4 loads; 8 halves of x need two).
template <int V>
__device__ __forceinline__ void load_params(const float* p, float (&v)[V]) {
#pragma unroll
    for (int i = 0; i < V; i += 4) {
        const float4 q = __ldg(reinterpret_cast<const float4*>(p + i));
        v[i] = q.x;
        v[i + 1] = q.y;
        v[i + 2] = q.z;
        v[i + 3] = q.w;
    }
}

// ---------------------------------------------------------------- the kernel

// Block b normalises rows b, b + gridDim.x, ... with kWarps warps.
//
// Pass 1 reads the row and merges the statistics: each thread over its
// values, then each warp (shuffles), then the block (one slot per warp in
// shared memory, merged by warp 0). Pass 2 reads the row again and writes y:
// the row was read by this block a moment ago, so this second read is served
// by the L1 or L2 cache, and DRAM sees the row once (up to rows of a few
// hundred KiB). Keeping the row in registers between the passes would save
// even the cache read, but only for rows short enough to fit.
//
// `vectorized`: every row starts 16-byte aligned (cols a multiple of V and
// aligned pointers), so the rows are read and written 16 bytes at a time.
// Otherwise one value at a time, each merged with Welford's update.
template <class T, int kWarps>
__global__ void __launch_bounds__(kWarps * 32)
    layer_norm_kernel(const T* __restrict__ x, const float* __restrict__ gamma, const float* __restrict__ beta,
                      T* __restrict__ y, float* __restrict__ mean_out, float* __restrict__ rstd_out, int rows,
                      int cols, float eps, bool vectorized) {
    [[maybe_unused]] constexpr int kThreads = kWarps * 32;
    [[maybe_unused]] constexpr int V = Vec<T>::kSize;
    __shared__ Stats partial[kWarps];  // one slot per warp
    __shared__ float row_mean, row_rstd;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;

    for (int row = blockIdx.x; row < rows; row += gridDim.x) {
        const std::size_t first = static_cast<std::size_t>(row) * static_cast<std::size_t>(cols);
        const T* xr = x + first;
        T* yr = y + first;

        // TODO pass 1: this thread's statistics s, starting empty ({0, 0, 0}).
        // - vectorized: c = threadIdx.x * V, c + kThreads * V, ... while
        //   c < cols: Vec<T>::load(xr + c, v) into `float v[V]`, then
        //   s = merge(s, stats_of(v));
        // - otherwise: c = threadIdx.x, c + kThreads, ...: merge the one
        //   value Stats{1, Vec<T>::to_float(xr[c]), 0} (Welford's update).
        Stats s{0.0f, 0.0f, 0.0f};

        // TODO the block's statistics: s = warp_merge(s); lane 0 of each warp
        // stores s in partial[warp]; __syncthreads(); warp 0 merges the
        // kWarps slots (lanes past kWarps take an empty Stats) with
        // warp_merge, and its lane 0 computes rstd = rsqrtf(M2 / count + eps),
        // stores mean and rstd in row_mean, row_rstd, mean_out[row] and
        // rstd_out[row]; __syncthreads() again before anyone reads them.
        (void)s;
        (void)partial;
        (void)warp;
        (void)lane;
        (void)eps;
        (void)mean_out;
        (void)rstd_out;

        // TODO pass 2: the same loops over the row; for each value
        // y = (x - row_mean) * row_rstd * gamma[c] + beta[c]. Vectorized:
        // Vec<T>::load, load_params(gamma + c, g) and load_params(beta + c, b)
        // for the V columns, then Vec<T>::store(yr + c, v). Otherwise
        // yr[c] = Vec<T>::from_float(...).
        (void)xr;
        (void)yr;
        (void)gamma;
        (void)beta;
        (void)vectorized;
        (void)row_mean;
        (void)row_rstd;
    }
}

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

// Checks the arguments, picks the block size from the row length, launches.
template <class T>
void launch(const char* function, const T* x, const float* gamma, const float* beta, T* y, float* mean, float* rstd,
            int rows, int cols, float eps) {
    if (rows < 0 || cols < 0 || cols > kMaxCols || !(eps >= 0.0f)) {
        throw std::invalid_argument(std::string(function) + ": rows must be >= 0, cols 0 to " +
                                    std::to_string(kMaxCols) + " and eps >= 0, not rows " + std::to_string(rows) +
                                    ", cols " + std::to_string(cols) + ", eps " + std::to_string(eps));
    }
    if (rows == 0 || cols == 0) return;  // an empty matrix: launch nothing (a grid of 0 blocks is an error)

    constexpr int V = Vec<T>::kSize;
    const bool vectorized =
        cols % V == 0 && aligned16(x) && aligned16(y) && aligned16(gamma) && aligned16(beta);
    int device = 0, sms = 0;
    COURSE_CUDA_CHECK(cudaGetDevice(&device));
    COURSE_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    // Enough threads per row that each has a few 16-byte loads in flight,
    // and at most a full SM's worth of blocks resident at once: more blocks
    // than that would only queue, each row is one block's work anyway.
    if (cols <= 1024) {
        const int grid = std::min(rows, sms * 16);  // 16 blocks of 128 threads fill an SM
        layer_norm_kernel<T, 4><<<grid, 128>>>(x, gamma, beta, y, mean, rstd, rows, cols, eps, vectorized);
    } else if (cols <= 4096) {
        const int grid = std::min(rows, sms * 8);
        layer_norm_kernel<T, 8><<<grid, 256>>>(x, gamma, beta, y, mean, rstd, rows, cols, eps, vectorized);
    } else {
        const int grid = std::min(rows, sms * 4);
        layer_norm_kernel<T, 16><<<grid, 512>>>(x, gamma, beta, y, mean, rstd, rows, cols, eps, vectorized);
    }
    COURSE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void layer_norm(const float* x, const float* gamma, const float* beta, float* y, float* mean, float* rstd, int rows,
                int cols, float eps) {
    launch("layer_norm (float)", x, gamma, beta, y, mean, rstd, rows, cols, eps);
}

void layer_norm(const __half* x, const float* gamma, const float* beta, __half* y, float* mean, float* rstd,
                int rows, int cols, float eps) {
    launch("layer_norm (half)", x, gamma, beta, y, mean, rstd, rows, cols, eps);
}

}  // namespace lesson21
