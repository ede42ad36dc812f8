// Lesson 21 reference solution: the forward pass of layer normalisation,
// a warp per row for rows of up to 1024 values (kept in registers), a block
// per row for longer ones, Welford/Chan statistics in float, vectorized
// loads and stores, the scale and bias fused into the write. Read
// lessons/21-layer-norm/README.md for the ideas; the comments here say why
// each step is written the way it is.
#include <layer_norm.hpp>

#include <course/cuda_check.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

namespace lesson21 {

namespace {

constexpr unsigned kFullMask = 0xffffffffu;

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
__device__ __forceinline__ Stats merge(const Stats& a, const Stats& b) {
    // An empty side leaves the other as it is (and 0 * inf cannot appear).
    if (b.count == 0.0f) return a;
    if (a.count == 0.0f) return b;
    const float count = a.count + b.count;
    const float delta = b.mean - a.mean;
    const float b_share = b.count / count;  // the one division of a merge
    return {count, a.mean + delta * b_share, a.m2 + b.m2 + delta * delta * a.count * b_share};
}

// The statistics of V values in registers, by two passes over the registers:
// their mean, then the squared deviations from it (exact enough, and no
// division per value).
template <int V>
__device__ __forceinline__ Stats stats_of(const float (&v)[V]) {
    float sum = 0.0f;
#pragma unroll
    for (int i = 0; i < V; ++i) sum += v[i];
    const float mean = sum * (1.0f / V);
    float m2 = 0.0f;
#pragma unroll
    for (int i = 0; i < V; ++i) m2 += (v[i] - mean) * (v[i] - mean);
    return {static_cast<float>(V), mean, m2};
}

// Merges the statistics of the 32 lanes into lane 0's (a tree of 5 steps,
// shuffles down). Lane 0's result is then shuffled to all: with a butterfly
// (shuffle xor) every lane would merge in its own order, and lanes could end
// with statistics that differ in the last bit.
__device__ Stats warp_merge(Stats s) {
    for (int offset = 16; offset > 0; offset /= 2) {
        const Stats other{__shfl_down_sync(kFullMask, s.count, offset), __shfl_down_sync(kFullMask, s.mean, offset),
                          __shfl_down_sync(kFullMask, s.m2, offset)};
        s = merge(s, other);
    }
    return {__shfl_sync(kFullMask, s.count, 0), __shfl_sync(kFullMask, s.mean, 0), __shfl_sync(kFullMask, s.m2, 0)};
}

// Merges the statistics of the 32 lanes so that every lane ends with the
// warp's, by a butterfly: at each step lane l and lane l ^ offset swap their
// statistics (shuffle xor) and both merge them. Chan's merge is not
// symmetric in float (merge(a, b) and merge(b, a) round differently), so
// both partners merge in one order, the lane whose `offset` bit is clear on
// the left: the two compute the same thing from the same inputs, and after
// the 5 steps all 32 lanes hold bit-identical statistics without the
// broadcast warp_merge needs. (Any order of the offsets would do.)
__device__ Stats warp_allmerge(Stats s) {
    const int lane = threadIdx.x % 32;
    for (int offset = 1; offset < 32; offset *= 2) {
        const Stats other{__shfl_xor_sync(kFullMask, s.count, offset), __shfl_xor_sync(kFullMask, s.mean, offset),
                          __shfl_xor_sync(kFullMask, s.m2, offset)};
        s = (lane & offset) ? merge(other, s) : merge(s, other);
    }
    return s;
}

// ---------------------------------------------------------------- vectorized access

// 16 bytes of a row at a time: 4 floats or 8 halves, loaded in one
// instruction and converted to floats in registers (the arithmetic is always
// float). Loads go through the read-only path; stores are plain. With
// kStreaming, a kernel that touches each value of x and y once marks its
// loads and stores evict-first (__ldcs, __stcs: the caches keep what is
// reused, gamma and beta, rather than the stream going past). The launcher
// asks for it for halves, where it measured faster (see the lesson's
// measured results); floats keep the plain loads and stores.
template <class T>
struct Vec;

// One 16-byte load or store of x or y (V: float4 or uint4), evict-first
// with kStreaming, else through the read-only path or plain.
template <bool kStreaming, class V>
__device__ __forceinline__ V load16(const V* p) {
    if constexpr (kStreaming) {
        return __ldcs(p);
    } else {
        return __ldg(p);
    }
}

template <bool kStreaming, class V>
__device__ __forceinline__ void store16(V* p, const V& v) {
    if constexpr (kStreaming) {
        __stcs(p, v);
    } else {
        *p = v;
    }
}

template <>
struct Vec<float> {
    static constexpr int kSize = 4;
    using Raw = float4;  // 16 bytes as loaded: 4 registers
    template <bool kStreaming = false>
    __device__ static Raw load_raw(const float* p) {
        return load16<kStreaming>(reinterpret_cast<const float4*>(p));
    }
    __device__ static void unpack(const Raw& q, float (&v)[4]) {
        v[0] = q.x;
        v[1] = q.y;
        v[2] = q.z;
        v[3] = q.w;
    }
    __device__ static void load(const float* p, float (&v)[4]) { unpack(load_raw(p), v); }
    template <bool kStreaming = false>
    __device__ static void store(float* p, const float (&v)[4]) {
        store16<kStreaming>(reinterpret_cast<float4*>(p), make_float4(v[0], v[1], v[2], v[3]));
    }
    __device__ static float to_float(float x) { return x; }
    __device__ static float from_float(float x) { return x; }
};

template <>
struct Vec<__half> {
    static constexpr int kSize = 8;
    // A 32-bit word holds two halves, the one at the lower address in the low
    // 16 bits; __ushort_as_half and __half_as_ushort reinterpret the bits.
    using Raw = uint4;  // 16 bytes as loaded: 8 halves in 4 registers, where 8 floats take 8
    template <bool kStreaming = false>
    __device__ static Raw load_raw(const __half* p) {
        return load16<kStreaming>(reinterpret_cast<const uint4*>(p));
    }
    __device__ static void unpack(const Raw& q, float (&v)[8]) {
        const unsigned words[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            v[2 * i] = __half2float(__ushort_as_half(static_cast<unsigned short>(words[i] & 0xffffu)));
            v[2 * i + 1] = __half2float(__ushort_as_half(static_cast<unsigned short>(words[i] >> 16)));
        }
    }
    __device__ static void load(const __half* p, float (&v)[8]) { unpack(load_raw(p), v); }
    template <bool kStreaming = false>
    __device__ static void store(__half* p, const float (&v)[8]) {
        unsigned words[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            // Each value rounded once, to nearest even.
            const unsigned low = __half_as_ushort(__float2half_rn(v[2 * i]));
            const unsigned high = __half_as_ushort(__float2half_rn(v[2 * i + 1]));
            words[i] = low | (high << 16);
        }
        store16<kStreaming>(reinterpret_cast<uint4*>(p), make_uint4(words[0], words[1], words[2], words[3]));
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
// even the cache read, but only for rows short enough to fit: the launcher
// gives those (up to kWarpRowLimit values) to layer_norm_warp_kernel below,
// and this kernel the longer ones.
//
// `vectorized`: every row starts 16-byte aligned (cols a multiple of V and
// aligned pointers), so the rows are read and written 16 bytes at a time.
// Otherwise one value at a time, each merged with Welford's update.
template <class T, int kWarps>
__global__ void __launch_bounds__(kWarps * 32)
    layer_norm_kernel(const T* __restrict__ x, const float* __restrict__ gamma, const float* __restrict__ beta,
                      T* __restrict__ y, float* __restrict__ mean_out, float* __restrict__ rstd_out, int rows,
                      int cols, float eps, bool vectorized) {
    constexpr int kThreads = kWarps * 32;
    constexpr int V = Vec<T>::kSize;
    __shared__ Stats partial[kWarps];  // one slot per warp
    __shared__ float row_mean, row_rstd;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;

    for (int row = blockIdx.x; row < rows; row += gridDim.x) {
        const std::size_t first = static_cast<std::size_t>(row) * static_cast<std::size_t>(cols);
        const T* xr = x + first;
        T* yr = y + first;

        // Pass 1: this thread's statistics. The loop is unrolled so that
        // several 16-byte loads are in flight before the first is used.
        Stats s{0.0f, 0.0f, 0.0f};
        if (vectorized) {
#pragma unroll 4
            for (int c = threadIdx.x * V; c < cols; c += kThreads * V) {
                float v[V];
                Vec<T>::load(xr + c, v);
                s = merge(s, stats_of(v));
            }
        } else {
            for (int c = threadIdx.x; c < cols; c += kThreads) s = merge(s, Stats{1.0f, Vec<T>::to_float(xr[c]), 0.0f});
        }

        // The block's statistics: warps, then warp 0 over the warps' slots.
        s = warp_merge(s);
        if (lane == 0) partial[warp] = s;
        __syncthreads();  // every slot written before warp 0 reads them
        if (warp == 0) {
            Stats b = lane < kWarps ? partial[lane] : Stats{0.0f, 0.0f, 0.0f};
            b = warp_merge(b);
            if (lane == 0) {
                const float rstd = rsqrtf(b.m2 / b.count + eps);  // biased variance: M2 / n
                row_mean = b.mean;
                row_rstd = rstd;
                mean_out[row] = b.mean;
                rstd_out[row] = rstd;
            }
        }
        __syncthreads();  // row_mean and row_rstd written before anyone reads them
        const float mean = row_mean, rstd = row_rstd;

        // Pass 2: normalise, scale and shift in one expression per value.
        if (vectorized) {
#pragma unroll 4
            for (int c = threadIdx.x * V; c < cols; c += kThreads * V) {
                float v[V], g[V], b[V];
                Vec<T>::load(xr + c, v);
                load_params(gamma + c, g);
                load_params(beta + c, b);
#pragma unroll
                for (int i = 0; i < V; ++i) v[i] = (v[i] - mean) * rstd * g[i] + b[i];
                Vec<T>::store(yr + c, v);
            }
        } else {
            for (int c = threadIdx.x; c < cols; c += kThreads) {
                yr[c] = Vec<T>::from_float((Vec<T>::to_float(xr[c]) - mean) * rstd * gamma[c] + beta[c]);
            }
        }
        // The next row's pass 1 rewrites `partial` only after this row's
        // second barrier, which warp 0 passed after reading it; and it
        // rewrites row_mean only after the next first barrier, which every
        // thread reaches after reading this row's: no third barrier needed.
    }
}

// Block b normalises rows b, b + gridDim.x, ..., each held in the block's
// registers: thread t keeps the 16-byte vectors t, t + kThreads, ... of the
// row, kVectors of them (rows of up to kThreads * kVectors * V values, all
// vectorized). Like the warp kernel, the row is read from memory once, every
// load of a thread in flight together; unlike the two-pass kernel above, no
// second read and one barrier per row instead of two:
//
// the warps' statistics meet in shared memory, and every warp then merges
// all the slots itself (the same lanes in the same order in every warp: the
// same bits), so no warp waits for warp 0 to publish a result. The slots
// alternate between two sets, row by row: a warp that has moved on to the
// next row writes the other set, and it can come back to this set only
// after the next row's barrier, which every warp reaches after reading it.
// kStreaming: x loaded and y stored evict-first (see Vec); kMinBlocks
// blocks must fit on an SM, a cap on the registers (0 asks for none and
// leaves them to the compiler, as a bound without it does).
template <class T, int kWarps, int kVectors, int kMinBlocks = 0, bool kStreaming = false>
__global__ void __launch_bounds__(kWarps * 32, kMinBlocks)
    layer_norm_block_kernel(const T* __restrict__ x, const float* __restrict__ gamma,
                            const float* __restrict__ beta, T* __restrict__ y, float* __restrict__ mean_out,
                            float* __restrict__ rstd_out, int rows, int cols, float eps) {
    constexpr int kThreads = kWarps * 32;
    constexpr int V = Vec<T>::kSize;
    static_assert(kWarps <= 32, "one slot per lane for the merge");
    __shared__ Stats partial[2][kWarps];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;

    int parity = 0;
    for (int row = blockIdx.x; row < rows; row += gridDim.x, parity ^= 1) {
        const std::size_t first = static_cast<std::size_t>(row) * static_cast<std::size_t>(cols);
        const T* xr = x + first;
        T* yr = y + first;

        // The row into registers, as loaded (halves stay halves: half the
        // registers), every load first; then the statistics, each vector
        // unpacked to floats for them.
        typename Vec<T>::Raw raw[kVectors];
#pragma unroll
        for (int i = 0; i < kVectors; ++i) {
            const int c = (i * kThreads + static_cast<int>(threadIdx.x)) * V;
            if (c < cols) raw[i] = Vec<T>::template load_raw<kStreaming>(xr + c);
        }
        Stats s{0.0f, 0.0f, 0.0f};
#pragma unroll
        for (int i = 0; i < kVectors; ++i) {
            if ((i * kThreads + static_cast<int>(threadIdx.x)) * V < cols) {
                float v[V];
                Vec<T>::unpack(raw[i], v);
                s = merge(s, stats_of(v));
            }
        }

        // The block's statistics: each warp's into its slot, then every warp
        // merges all the slots (lane w holds warp w's).
        s = warp_merge(s);
        if (lane == 0) partial[parity][warp] = s;
        __syncthreads();  // every slot written before any warp reads them
        Stats b = lane < kWarps ? partial[parity][lane] : Stats{0.0f, 0.0f, 0.0f};
        b = warp_allmerge(b);
        const float mean = b.mean;
        const float rstd = rsqrtf(b.m2 / b.count + eps);  // biased variance: M2 / n
        if (threadIdx.x == 0) {
            mean_out[row] = mean;
            rstd_out[row] = rstd;
        }

        // Normalise the registers, scale and shift, write.
#pragma unroll
        for (int i = 0; i < kVectors; ++i) {
            const int c = (i * kThreads + static_cast<int>(threadIdx.x)) * V;
            if (c < cols) {
                float v[V], g[V], bias[V];
                Vec<T>::unpack(raw[i], v);
                load_params(gamma + c, g);
                load_params(beta + c, bias);
#pragma unroll
                for (int j = 0; j < V; ++j) v[j] = (v[j] - mean) * rstd * g[j] + bias[j];
                Vec<T>::template store<kStreaming>(yr + c, v);
            }
        }
    }
}

// Warp w of block b normalises rows b * kWarps + w, then kWarps * gridDim.x
// rows further, ...: a warp per row, kWarps rows per block at a time.
//
// A row of up to 32 * kPerLane values fits in the warp's registers,
// kPerLane per lane, so it is read from memory once and never again: no
// second pass over memory, no shared memory, no block barrier (the warp's
// shuffles are all the communication a row needs). When kVectorized, lane
// `lane` holds the vectors lane, lane + 32, lane + 64, ... of the row as
// loaded (halves stay halves: 4 registers per 8 values), consecutive lanes
// reading consecutive 16 bytes; otherwise the values lane, lane + 32, ...
// one at a time, as floats. Values past the row's end are neither loaded
// nor counted. kStreaming: x and y evict-first (see Vec).
//
// kMinBlocks blocks must fit on an SM: it caps the registers a thread may
// take (65536 / (kMinBlocks * kWarps * 32)). Left free, the compiler spends
// registers on hoisting every load of a row (up to 92 for 32 floats a lane)
// and halves the warps an SM holds.
template <class T, int kWarps, int kPerLane, int kMinBlocks, bool kVectorized, bool kStreaming = false>
__global__ void __launch_bounds__(kWarps * 32, kMinBlocks)
    layer_norm_warp_kernel(const T* __restrict__ x, const float* __restrict__ gamma, const float* __restrict__ beta,
                           T* __restrict__ y, float* __restrict__ mean_out, float* __restrict__ rstd_out, int rows,
                           int cols, float eps) {
    constexpr int V = Vec<T>::kSize;
    static_assert(kPerLane % V == 0, "a lane holds whole vectors");
    constexpr int kVectors = kPerLane / V;  // 16-byte vectors per lane
    const int lane = static_cast<int>(threadIdx.x) % 32;
    const int warp = static_cast<int>(blockIdx.x) * kWarps + static_cast<int>(threadIdx.x / 32);

    for (int row = warp; row < rows; row += gridDim.x * kWarps) {
        const std::size_t first = static_cast<std::size_t>(row) * static_cast<std::size_t>(cols);
        const T* xr = x + first;
        T* yr = y + first;

        // The row into registers, every load of the lane issued before the
        // first is used, and this lane's statistics: per vector by stats_of
        // and Chan's merge, per value by Welford's update. Fully unrolled, so
        // the arrays stay in registers (constant indices only).
        [[maybe_unused]] typename Vec<T>::Raw raw[kVectors];
        [[maybe_unused]] float v[kPerLane];
        Stats s{0.0f, 0.0f, 0.0f};
        if constexpr (kVectorized) {
#pragma unroll
            for (int i = 0; i < kVectors; ++i) {
                const int c = (i * 32 + lane) * V;
                if (c < cols) raw[i] = Vec<T>::template load_raw<kStreaming>(xr + c);
            }
#pragma unroll
            for (int i = 0; i < kVectors; ++i) {
                if ((i * 32 + lane) * V < cols) {
                    float u[V];
                    Vec<T>::unpack(raw[i], u);
                    s = merge(s, stats_of(u));
                }
            }
        } else {
#pragma unroll
            for (int k = 0; k < kPerLane; ++k) {
                const int c = k * 32 + lane;
                if (c < cols) {
                    v[k] = Vec<T>::to_float(xr[c]);
                    s = merge(s, Stats{1.0f, v[k], 0.0f});
                }
            }
        }

        // The row's statistics, in every lane of the row alike.
        s = warp_allmerge(s);
        const float mean = s.mean;
        const float rstd = rsqrtf(s.m2 / s.count + eps);  // biased variance, as in the block kernel
        if (lane == 0) {
            mean_out[row] = mean;
            rstd_out[row] = rstd;
        }

        // Normalise the registers, scale and shift, write: y is the only
        // traffic left (gamma and beta, read by every row, sit in the cache).
        if constexpr (kVectorized) {
#pragma unroll
            for (int i = 0; i < kVectors; ++i) {
                const int c = (i * 32 + lane) * V;
                if (c < cols) {
                    float u[V], g[V], b[V];
                    Vec<T>::unpack(raw[i], u);
                    load_params(gamma + c, g);
                    load_params(beta + c, b);
#pragma unroll
                    for (int j = 0; j < V; ++j) u[j] = (u[j] - mean) * rstd * g[j] + b[j];
                    Vec<T>::template store<kStreaming>(yr + c, u);
                }
            }
        } else {
#pragma unroll
            for (int k = 0; k < kPerLane; ++k) {
                const int c = k * 32 + lane;
                if (c < cols) yr[c] = Vec<T>::from_float((v[k] - mean) * rstd * gamma[c] + beta[c]);
            }
        }
    }
}

// Rows of up to this many values take the warp-per-row kernel: 32 floats a
// lane at most (128 bytes of x in registers), as lesson 20's softmax keeps.
constexpr int kWarpRowLimit = 1024;

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

// Every row can be read and written 16 bytes at a time: cols a multiple of
// the vector width V (so that each row starts 16-byte aligned) and aligned
// pointers.
template <class T>
bool vectorizable(const T* x, const float* gamma, const float* beta, const T* y, int cols) {
    constexpr int V = Vec<T>::kSize;
    return cols % V == 0 && aligned16(x) && aligned16(y) && aligned16(gamma) && aligned16(beta);
}

// The device's SM count, asked once: the launcher sizes its grids from it on
// every call, and a device attribute query is not free next to a kernel of a
// few microseconds. (The course uses one device per process.)
int sm_count() {
    static const int sms = [] {
        int device = 0, count = 0;
        COURSE_CUDA_CHECK(cudaGetDevice(&device));
        COURSE_CUDA_CHECK(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device));
        return count;
    }();
    return sms;
}

// How many blocks of kKernel with kThreadsPerBlock threads the whole device
// holds at once (its registers and shared memory decide how many fit on an
// SM). Asked once per kernel (each kernel is its own instantiation of this
// function, with its own static), like the SM count.
template <auto kKernel, int kThreadsPerBlock>
int resident_blocks() {
    static const int blocks = [] {
        int per_sm = 0;
        COURSE_CUDA_CHECK(
            cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kKernel, kThreadsPerBlock, 0));
        return std::max(per_sm, 1) * sm_count();
    }();
    return blocks;
}

// A block of kWarps warps per row, the row in its registers (kVectors
// vectors of 16 bytes a thread: rows of up to kWarps * 32 * kVectors * V
// values), and as many blocks as the SMs hold at once: more would only
// queue, each row is one block's work.
template <class T, int kWarps, int kVectors = 4, int kMinBlocks = 0, bool kStreaming = false>
void launch_rows_in_registers(const T* x, const float* gamma, const float* beta, T* y, float* mean, float* rstd,
                              int rows, int cols, float eps) {
    constexpr auto kernel = layer_norm_block_kernel<T, kWarps, kVectors, kMinBlocks, kStreaming>;
    const int grid = std::min(rows, resident_blocks<kernel, kWarps * 32>());
    kernel<<<grid, kWarps * 32>>>(x, gamma, beta, y, mean, rstd, rows, cols, eps);
}

// Rows of up to 32 * kPerLane values, a warp per row, blocks of kWarps
// warps, and as many blocks as the SMs hold at once (the occupancy API
// counts the kernel's registers): the warps then stride over the rows left.
// Blocks beyond that would wait for a whole block to finish and then start
// together, a second wave with its own ramp and tail.
template <class T, int kWarps, int kPerLane, int kMinBlocks, bool kVectorized, bool kStreaming>
void launch_rows_in_warps(const T* x, const float* gamma, const float* beta, T* y, float* mean, float* rstd,
                          int rows, int cols, float eps) {
    constexpr auto kernel = layer_norm_warp_kernel<T, kWarps, kPerLane, kMinBlocks, kVectorized, kStreaming>;
    const int blocks_needed = (rows + kWarps - 1) / kWarps;  // a partial last block
    const int grid = std::min(blocks_needed, resident_blocks<kernel, kWarps * 32>());
    kernel<<<grid, kWarps * 32>>>(x, gamma, beta, y, mean, rstd, rows, cols, eps);
}

// Halves go through the caches evict-first (see Vec); floats do not.
template <class T>
constexpr bool kStreams = std::is_same_v<T, __half>;

// A warp per row, 8 rows per block of 256 threads, the row's values in the
// warp's registers (kPerLane a lane), 64 registers a thread at most: 4
// blocks, 32 warps, an SM.
template <class T, int kPerLane>
void launch_warp_per_row(bool vectorized, const T* x, const float* gamma, const float* beta, T* y, float* mean,
                         float* rstd, int rows, int cols, float eps) {
    if (vectorized) {
        launch_rows_in_warps<T, 8, kPerLane, 4, true, kStreams<T>>(x, gamma, beta, y, mean, rstd, rows, cols, eps);
    } else {
        launch_rows_in_warps<T, 8, kPerLane, 4, false, false>(x, gamma, beta, y, mean, rstd, rows, cols, eps);
    }
}

// Checks the arguments, picks the mapping (a warp or a block per row) and the
// block size from the row length, launches.
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
    const bool vectorized = vectorizable(x, gamma, beta, y, cols);
    // Short rows: a warp per row (see launch_rows_in_warps for the grid).
    // A row of 96 values would leave most of a 128-thread block idle and pay
    // two block barriers for 384 bytes; a warp keeps it in registers and
    // needs no barrier at all.
    if (cols <= kWarpRowLimit) {
        if (cols <= 256) {  // 8 values a lane
            launch_warp_per_row<T, 8>(vectorized, x, gamma, beta, y, mean, rstd, rows, cols, eps);
        } else {  // 32 values a lane
            launch_warp_per_row<T, kWarpRowLimit / 32>(vectorized, x, gamma, beta, y, mean, rstd, rows, cols, eps);
        }
        COURSE_CUDA_CHECK(cudaGetLastError());
        return;
    }
    // Longer rows: a block per row. Vectorized rows of up to 4096 values
    // stay in the registers of a block of 4 warps: 8 vectors of 4 floats a
    // thread (6 blocks an SM: at most 85 registers a thread, room for the 32
    // that hold the row), or 4 vectors of 8 halves. Up to 8192 values, 16
    // warps of 4 float vectors or 8 of 4 half vectors. Longer rows, or rows
    // that cannot be read 16 bytes at a time, take the two-pass kernel.
    constexpr int kWarps4096 = 4096 / (32 * 4 * V);
    if (vectorized && cols <= 4096) {
        if constexpr (kStreams<T>) {
            launch_rows_in_registers<T, kWarps4096, 4, 0, true>(x, gamma, beta, y, mean, rstd, rows, cols, eps);
        } else {
            launch_rows_in_registers<T, 4096 / (32 * 8 * V), 8, 6>(x, gamma, beta, y, mean, rstd, rows, cols, eps);
        }
    } else if (vectorized && cols <= 8192) {
        launch_rows_in_registers<T, 2 * kWarps4096, 4, 0, kStreams<T>>(x, gamma, beta, y, mean, rstd, rows, cols,
                                                                        eps);
    } else if (cols <= 4096) {
        const int grid = std::min(rows, sm_count() * 8);
        layer_norm_kernel<T, 8><<<grid, 256>>>(x, gamma, beta, y, mean, rstd, rows, cols, eps, vectorized);
    } else {
        const int grid = std::min(rows, sm_count() * 4);
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

#ifdef COURSE_BENCH_OF_REFERENCE
// Not part of the contract: the benchmark of the reference (and only it)
// times these other configurations of the same kernels too, so that one GPU
// run compares them with the reference (issue #20: half rows below 85% of
// copy). Each takes vectorized rows of one range of lengths only.
namespace {

enum Candidate {
    kEarlierWarpReference,   // halves up to 1024: the previous reference's warp per row, plain loads and stores
    kEarlierBlockReference,  // rows of 1025 to 4096: the previous reference's block per row, 4 vectors a thread, plain
    kEarlierWarpGrid,        // the warp per row, plain, with the earlier grid: 8 blocks per SM, however many fit
    kEarlierWarpGridStreaming,  // halves: the same grid, x and y evict-first (the reference's loads)
    kCandidates
};

const char* const kCandidateNames[kCandidates] = {
    "earlier reference: warp per row, plain loads and stores",
    "earlier reference: block per row, 4 vectors a thread, plain loads and stores",
    "candidate: warp per row, earlier grid of 8 blocks per SM, plain loads and stores",
    "candidate: warp per row, earlier grid of 8 blocks per SM, x and y evict-first",
};

bool candidate_takes(int candidate, bool half, int cols) {
    const bool short_rows = cols > 256 && cols <= kWarpRowLimit;
    const bool long_rows = cols > kWarpRowLimit && cols <= 4096;
    switch (candidate) {
        case kEarlierWarpReference:
        case kEarlierWarpGridStreaming: return half && short_rows;
        case kEarlierBlockReference: return long_rows;
        case kEarlierWarpGrid: return short_rows;
        default: return false;
    }
}

// The warp per row of the reference, 32 values a lane, in the grid it had
// before the occupancy API sized it: 8 blocks of 8 warps per SM, of which
// the SM holds 4 at once (the rest queue).
template <class T, bool kStreaming>
void launch_earlier_warp_grid(const T* x, const float* gamma, const float* beta, T* y, float* mean, float* rstd,
                              int rows, int cols, float eps) {
    const int grid = std::min((rows + 7) / 8, sm_count() * 8);
    layer_norm_warp_kernel<T, 8, kWarpRowLimit / 32, 4, true, kStreaming>
        <<<grid, 256>>>(x, gamma, beta, y, mean, rstd, rows, cols, eps);
}

template <class T>
void launch_candidate(int candidate, const T* x, const float* gamma, const float* beta, T* y, float* mean,
                      float* rstd, int rows, int cols) {
    constexpr bool kHalf = std::is_same_v<T, __half>;
    constexpr int V = Vec<T>::kSize;
    if (rows < 1 || !vectorizable(x, gamma, beta, y, cols) || !candidate_takes(candidate, kHalf, cols)) {
        throw std::invalid_argument("layer_norm_candidate: candidate " + std::to_string(candidate) +
                                    " does not take " + std::to_string(rows) + " rows of " + std::to_string(cols) +
                                    (kHalf ? " halves" : " floats") + " (or unaligned ones)");
    }
    const float eps = kDefaultEps;
    switch (candidate) {
        case kEarlierWarpReference:
            launch_rows_in_warps<T, 8, kWarpRowLimit / 32, 4, true, false>(x, gamma, beta, y, mean, rstd, rows, cols,
                                                                           eps);
            break;
        case kEarlierBlockReference:
            launch_rows_in_registers<T, 4096 / (32 * 4 * V), 4>(x, gamma, beta, y, mean, rstd, rows, cols, eps);
            break;
        case kEarlierWarpGrid:
            launch_earlier_warp_grid<T, false>(x, gamma, beta, y, mean, rstd, rows, cols, eps);
            break;
        case kEarlierWarpGridStreaming:
            if constexpr (kHalf) launch_earlier_warp_grid<T, true>(x, gamma, beta, y, mean, rstd, rows, cols, eps);
            break;
        default: break;
    }
    COURSE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

int layer_norm_candidates() { return kCandidates; }

std::string layer_norm_candidate_name(int candidate, bool half, int cols) {
    return candidate >= 0 && candidate < kCandidates && candidate_takes(candidate, half, cols)
               ? kCandidateNames[candidate]
               : "";
}

void layer_norm_candidate(int candidate, const float* x, const float* gamma, const float* beta, float* y,
                          float* mean, float* rstd, int rows, int cols) {
    launch_candidate(candidate, x, gamma, beta, y, mean, rstd, rows, cols);
}

void layer_norm_candidate(int candidate, const __half* x, const float* gamma, const float* beta, __half* y,
                          float* mean, float* rstd, int rows, int cols) {
    launch_candidate(candidate, x, gamma, beta, y, mean, rstd, rows, cols);
}
#endif

}  // namespace lesson21
