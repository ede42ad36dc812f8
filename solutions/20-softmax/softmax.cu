// Lesson 20 reference solution: the softmax of every row of a matrix, in
// three passes, then online, a warp per row and a block per row. Read
// lessons/20-softmax/README.md for the ideas; the comments here say why each
// step is written the way it is.
#include <softmax.hpp>

#include <course/cuda_check.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cuda_runtime.h>

namespace lesson20 {

namespace {

constexpr unsigned kFullMask = 0xffffffffu;

// The kernels with a block per row use 256 threads (8 warps); the warp-per-row
// kernel puts 8 rows in a block of the same size.
constexpr unsigned kBlockThreads = 256;
constexpr unsigned kWarpsPerBlock = kBlockThreads / 32;

// Every exponential here is expf, accurate to 2 ulp. __expf (what expf
// becomes under -use_fast_math) is the hardware's approximation alone: fewer
// instructions, an error growing with |x| and subnormal results flushed to 0.
// The kernels are memory-bound, so the exponential is not what limits them,
// and the arguments here are x - max <= 0, where __expf's larger error falls
// on the entries that weigh least: the contract's bound accepts both.

// ---------------------------------------------------------------- the online state

// What a thread (or a warp, or a block) knows of a row after seeing some of
// its entries: their maximum, and the sum of exp(x - max) over them. It is
// the whole softmax in two numbers: out = exp(x - max) / sum once every
// entry has been seen. Nothing seen yet (or only masked entries): (-inf, 0).
struct MaxSum {
    float max;
    float sum;
};

__device__ MaxSum empty_state() { return {-INFINITY, 0.0f}; }

// Adds one entry to a running state: the online softmax's step. A new
// maximum rescales the sum so far, whose terms were exp(x_k - old max), to the
// new maximum: exp(x_k - new) = exp(x_k - old) * exp(old - new). One expf per
// entry either way (the branch-free form max' = max(m, x), sum' = sum *
// exp(m - max') + exp(x - max') takes two).
__device__ MaxSum add_entry(MaxSum s, float x) {
    if (x > s.max) {
        // From (-inf, 0): expf(-inf) = 0 and the sum becomes 1, the new entry's exp(0).
        s.sum = s.sum * expf(s.max - x) + 1.0f;
        s.max = x;
    } else if (s.max != -INFINITY) {
        // A masked entry (-inf) adds expf(-inf) = 0. But while the maximum is
        // still -inf (masked entries at the start of a row), x - max would be
        // -inf - -inf = NaN: nothing to add then.
        s.sum += expf(x - s.max);
    }
    return s;
}

// The state of two disjoint parts of a row from their states: both sums
// rescaled to the larger maximum. It is associative and commutative (up to
// rounding), so any tree of merges gives the row's state.
__device__ MaxSum merge(MaxSum a, MaxSum b) {
    const float m = fmaxf(a.max, b.max);
    // Both parts empty or fully masked (a lane with no columns in a short
    // row): keep (-inf, 0); the formula below would compute -inf - -inf = NaN.
    if (m == -INFINITY) return empty_state();
    return {m, a.sum * expf(a.max - m) + b.sum * expf(b.max - m)};
}

// Every lane of the warp gets the merge of the 32 lanes' states. A butterfly
// (__shfl_xor_sync): at each of the 5 steps lane i merges with lane
// i ^ offset, so after them every lane has merged all 32, and since fmaxf and
// + are commutative, a lane and its partner compute the same bits: every
// lane ends with the identical state, as the writes below need.
__device__ MaxSum warp_merge(MaxSum s) {
    for (unsigned offset = 16; offset > 0; offset /= 2) {
        const MaxSum other{__shfl_xor_sync(kFullMask, s.max, offset), __shfl_xor_sync(kFullMask, s.sum, offset)};
        s = merge(s, other);
    }
    return s;
}

// Every thread of the block gets the merge of all threads' states: each
// warp merges its own, lane 0 of each writes it to shared memory, and after
// the barrier every warp merges the 8 warp states (lane w takes warp w's).
// Every warp doing that last merge costs nothing more than one warp doing it
// and broadcasting, and saves a second barrier.
// `warp_states` is shared memory for kWarpsPerBlock states, used once per
// block: a block handles one row, so it is never written twice.
__device__ MaxSum block_merge(MaxSum s, MaxSum* warp_states) {
    const unsigned lane = threadIdx.x % 32;
    const unsigned warp = threadIdx.x / 32;
    s = warp_merge(s);
    if (lane == 0) warp_states[warp] = s;
    __syncthreads();  // every warp's state is written before any warp reads them
    return warp_merge(lane < kWarpsPerBlock ? warp_states[lane] : empty_state());
}

// A row's softmax is written from its merged state. A fully masked row has
// the state (-inf, 0): the contract gives it zeros, where exp(x - max) / sum
// would be exp(-inf - -inf) / 0 = NaN. Every thread of the row holds the same
// state, so they all take the same branch.
__device__ bool fully_masked(MaxSum row) { return row.max == -INFINITY; }

// ---------------------------------------------------------------- stage 1: three passes

// Block reductions of one float (max or +): the warp by shuffles, the warps
// through shared memory, as in block_merge.
template <class Op>
__device__ float block_reduce(float v, float* warp_values, float identity, Op op) {
    const unsigned lane = threadIdx.x % 32;
    const unsigned warp = threadIdx.x / 32;
    for (unsigned offset = 16; offset > 0; offset /= 2) v = op(v, __shfl_xor_sync(kFullMask, v, offset));
    if (lane == 0) warp_values[warp] = v;
    __syncthreads();
    v = lane < kWarpsPerBlock ? warp_values[lane] : identity;
    for (unsigned offset = 16; offset > 0; offset /= 2) v = op(v, __shfl_xor_sync(kFullMask, v, offset));
    return v;
}

template <class T>
struct Max {
    __device__ T operator()(T a, T b) const { return fmaxf(a, b); }
};
template <class T>
struct Plus {
    __device__ T operator()(T a, T b) const { return a + b; }
};

// One block per row; its threads stride over the columns (consecutive
// threads, consecutive columns: coalesced), and read the row three times.
__global__ void __launch_bounds__(kBlockThreads) three_pass_kernel(const float* in, float* out, std::size_t cols) {
    __shared__ float warp_max[kWarpsPerBlock];
    __shared__ float warp_sum[kWarpsPerBlock];
    const float* x = in + static_cast<std::size_t>(blockIdx.x) * cols;
    float* y = out + static_cast<std::size_t>(blockIdx.x) * cols;

    // Pass 1: the maximum.
    float m = -INFINITY;
    for (std::size_t j = threadIdx.x; j < cols; j += kBlockThreads) m = fmaxf(m, x[j]);
    m = block_reduce(m, warp_max, -INFINITY, Max<float>{});
    if (m == -INFINITY) {  // fully masked (the same m in every thread: no barrier is left half-reached)
        for (std::size_t j = threadIdx.x; j < cols; j += kBlockThreads) y[j] = 0.0f;
        return;
    }

    // Pass 2: the sum of exp(x - m). Each term is at most exp(0) = 1, so it
    // cannot overflow, and at least one term is 1, so the sum is at least 1.
    // A masked entry adds expf(-inf) = 0.
    float s = 0.0f;
    for (std::size_t j = threadIdx.x; j < cols; j += kBlockThreads) s += expf(x[j] - m);
    s = block_reduce(s, warp_sum, 0.0f, Plus<float>{});

    // Pass 3: one division per thread, a multiplication per entry.
    const float inverse = 1.0f / s;
    for (std::size_t j = threadIdx.x; j < cols; j += kBlockThreads) y[j] = expf(x[j] - m) * inverse;
}

// ---------------------------------------------------------------- stages 2 and 3: online

// The online softmax of one row by a group of kThreads threads (a warp, or a
// block), this thread being number `rank` of them; `merge_group` merges the
// group's states (warp_merge or block_merge).
//
// A row of up to kThreads * kItems entries is kept in registers (kItems per
// thread) between the first pass and the writes: the row is read once and
// written once, as a copy does, which is what lets the kernel run at the
// copy's speed. A longer row is read twice: once for the online state, once
// to write; the second read often comes from L2, which has just seen it.
//
// When the row's start is 16-byte aligned and its length a multiple of 4,
// loads and stores are float4: a quarter of the instructions, each lane
// moving 16 bytes (lesson 06). Then thread `rank` holds vectors rank,
// rank + kThreads, ... (consecutive lanes, consecutive vectors: coalesced);
// otherwise single floats rank, rank + kThreads, ...
template <unsigned kThreads, unsigned kItems, class MergeGroup>
__device__ void online_softmax_row(const float* x, float* y, std::size_t cols, unsigned rank, MergeGroup merge_group) {
    static_assert(kItems % 4 == 0, "the cached row is loaded as float4 vectors");
    const bool vectorized = cols % 4 == 0 && reinterpret_cast<std::uintptr_t>(x) % 16 == 0 &&
                            reinterpret_cast<std::uintptr_t>(y) % 16 == 0;
    const auto* x4 = reinterpret_cast<const float4*>(x);
    auto* y4 = reinterpret_cast<float4*>(y);

    if (cols <= std::size_t{kThreads} * kItems) {
        // The row fits in registers. Entries past the end are -inf: they
        // change no maximum and add exp(-inf) = 0 to the sum.
        // Every loop over v has a constant trip count, which nvcc unrolls, so
        // that each v[k] is a register (an array indexed at run time would live
        // in local memory, which is device memory behind the caches).
        float v[kItems];
        if (vectorized) {
            for (unsigned q = 0; q < kItems / 4; ++q) {
                const std::size_t vi = std::size_t{q} * kThreads + rank;
                const float4 f = 4 * vi < cols ? x4[vi] : make_float4(-INFINITY, -INFINITY, -INFINITY, -INFINITY);
                v[4 * q] = f.x;
                v[4 * q + 1] = f.y;
                v[4 * q + 2] = f.z;
                v[4 * q + 3] = f.w;
            }
        } else {
            for (unsigned k = 0; k < kItems; ++k) {
                const std::size_t j = std::size_t{k} * kThreads + rank;
                v[k] = j < cols ? x[j] : -INFINITY;
            }
        }
        // With the thread's entries all at hand, its state needs no online
        // rescaling: its maximum, then its sum, keeping each exp(v - max).
        float thread_max = -INFINITY;
        for (unsigned k = 0; k < kItems; ++k) thread_max = fmaxf(thread_max, v[k]);
        const float shift = thread_max == -INFINITY ? 0.0f : thread_max;  // no -inf - -inf: exp(-inf - 0) = 0
        float thread_sum = 0.0f;
        for (unsigned k = 0; k < kItems; ++k) {
            v[k] = expf(v[k] - shift);
            thread_sum += v[k];
        }
        const MaxSum row = merge_group(MaxSum{thread_max, thread_sum});
        // out = exp(v - row max) / row sum = exp(v - thread max) * exp(thread max - row max) / row sum:
        // one factor per thread, and no second exp per entry. A thread with
        // no entries has exp(-inf - row max) = 0 and writes nothing anyway.
        const float scale = fully_masked(row) ? 0.0f : expf(thread_max - row.max) / row.sum;
        if (vectorized) {
            for (unsigned q = 0; q < kItems / 4; ++q) {
                const std::size_t vi = std::size_t{q} * kThreads + rank;
                if (4 * vi < cols) {
                    y4[vi] = make_float4(v[4 * q] * scale, v[4 * q + 1] * scale, v[4 * q + 2] * scale,
                                         v[4 * q + 3] * scale);
                }
            }
        } else {
            for (unsigned k = 0; k < kItems; ++k) {
                const std::size_t j = std::size_t{k} * kThreads + rank;
                if (j < cols) y[j] = v[k] * scale;
            }
        }
        return;
    }

    // A long row: one pass for the online state, entry by entry...
    MaxSum s = empty_state();
    if (vectorized) {
        for (std::size_t vi = rank; vi < cols / 4; vi += kThreads) {
            const float4 f = x4[vi];
            s = add_entry(add_entry(add_entry(add_entry(s, f.x), f.y), f.z), f.w);
        }
    } else {
        for (std::size_t j = rank; j < cols; j += kThreads) s = add_entry(s, x[j]);
    }
    const MaxSum row = merge_group(s);
    // ... and one to write.
    if (fully_masked(row)) {
        for (std::size_t j = rank; j < cols; j += kThreads) y[j] = 0.0f;
        return;
    }
    const float inverse = 1.0f / row.sum;
    if (vectorized) {
        for (std::size_t vi = rank; vi < cols / 4; vi += kThreads) {
            const float4 f = x4[vi];
            y4[vi] = make_float4(expf(f.x - row.max) * inverse, expf(f.y - row.max) * inverse,
                                 expf(f.z - row.max) * inverse, expf(f.w - row.max) * inverse);
        }
    } else {
        for (std::size_t j = rank; j < cols; j += kThreads) y[j] = expf(x[j] - row.max) * inverse;
    }
}

// A warp per row keeps up to 32 entries per lane: rows of up to
// kWarpRowLimit = 1024 entries are read once.
constexpr unsigned kWarpItems = 32;
static_assert(32 * kWarpItems == kWarpRowLimit, "softmax_rows_online gives a warp the rows it can keep in registers");

// Eight rows per block, one per warp. A warp whose row is past the end
// leaves as a whole: the kernel has no block barrier, and the shuffles need
// only the warp's own 32 lanes.
__global__ void __launch_bounds__(kBlockThreads) online_warp_kernel(const float* in, float* out, std::size_t rows,
                                                                    std::size_t cols) {
    const std::size_t row = static_cast<std::size_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
    if (row >= rows) return;
    online_softmax_row<32, kWarpItems>(in + row * cols, out + row * cols, cols, threadIdx.x % 32,
                                       [](MaxSum s) { return warp_merge(s); });
}

// A block per row keeps up to 16 entries per thread: rows of up to 4096
// entries are read once (4096 x 4096 in the benchmark), longer ones twice.
constexpr unsigned kBlockItems = 16;

__global__ void __launch_bounds__(kBlockThreads) online_block_kernel(const float* in, float* out, std::size_t cols) {
    __shared__ MaxSum warp_states[kWarpsPerBlock];
    const std::size_t row = blockIdx.x;
    online_softmax_row<kBlockThreads, kBlockItems>(in + row * cols, out + row * cols, cols, threadIdx.x,
                                                   [&](MaxSum s) { return block_merge(s, warp_states); });
}

}  // namespace

// ---------------------------------------------------------------- the launchers

void softmax_rows_three_pass(const float* in, float* out, std::size_t rows, std::size_t cols) {
    if (rows == 0 || cols == 0) return;
    three_pass_kernel<<<static_cast<unsigned>(rows), kBlockThreads>>>(in, out, cols);
    COURSE_CUDA_CHECK(cudaGetLastError());
}

void softmax_rows_online_warp(const float* in, float* out, std::size_t rows, std::size_t cols) {
    if (rows == 0 || cols == 0) return;
    const std::size_t blocks = (rows + kWarpsPerBlock - 1) / kWarpsPerBlock;  // a partial last block
    online_warp_kernel<<<static_cast<unsigned>(blocks), kBlockThreads>>>(in, out, rows, cols);
    COURSE_CUDA_CHECK(cudaGetLastError());
}

void softmax_rows_online_block(const float* in, float* out, std::size_t rows, std::size_t cols) {
    if (rows == 0 || cols == 0) return;
    online_block_kernel<<<static_cast<unsigned>(rows), kBlockThreads>>>(in, out, cols);
    COURSE_CUDA_CHECK(cudaGetLastError());
}

// Short rows waste a block: with a block per row of 100 entries, 156 of 256
// threads would idle, and each block would pay two barriers and a launch's
// share for 400 bytes. Long rows starve a warp: 32 lanes cannot keep enough
// loads in flight, nor registers enough, for a row of 16 KiB.
void softmax_rows_online(const float* in, float* out, std::size_t rows, std::size_t cols) {
    if (cols <= kWarpRowLimit) {
        softmax_rows_online_warp(in, out, rows, cols);
    } else {
        softmax_rows_online_block(in, out, rows, cols);
    }
}

}  // namespace lesson20
