// Lesson 20: the softmax of every row of a matrix, in three passes, then
// online, a warp per row and a block per row.
//
// Goal: make `./course grade 20` pass. Read lessons/20-softmax/README.md
// first; the functions you fill in are documented in softmax.hpp.
// Stuck? `./course hint 20` shows the hints one by one.
//
// Order that works (each stage is graded on its own): three_pass_kernel
// (stage 1), then the online state: add_entry, merge, warp_merge; then
// online_softmax_row and online_warp_kernel with its launcher (stage 2);
// block_merge (stage 3); stage 4 is given.
#include <softmax.hpp>

#include <course/cuda_check.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cuda_runtime.h>

namespace lesson20 {

namespace {

[[maybe_unused]] constexpr unsigned kFullMask = 0xffffffffu;

// The kernels with a block per row use 256 threads (8 warps); the warp-per-row
// kernel puts 8 rows in a block of the same size.
constexpr unsigned kBlockThreads = 256;
constexpr unsigned kWarpsPerBlock = kBlockThreads / 32;

// ---------------------------------------------------------------- the online state

// Given: what a thread (or a warp, or a block) knows of a row after seeing
// some of its entries: their maximum, and the sum of exp(x - max) over them.
// Nothing seen yet (or only masked entries): (-inf, 0).
struct MaxSum {
    float max;
    float sum;
};

[[maybe_unused]] __device__ MaxSum empty_state() { return {-INFINITY, 0.0f}; }

// Adds one entry x to the running state s: the online softmax's step.
[[maybe_unused]] __device__ MaxSum add_entry(MaxSum s, float x) {
    // TODO: if x is a new maximum, rescale the sum so far to it
    // (sum * expf(old max - x)), add x's own term (exp(x - x) = 1) and make x
    // the maximum. Otherwise add expf(x - max), but not while the maximum is
    // still -inf: masked entries (-inf) at the start of a row would compute
    // -inf - -inf = NaN.
    (void)x;
    return s;
}

// The state of two disjoint parts of a row from their states.
[[maybe_unused]] __device__ MaxSum merge(MaxSum a, MaxSum b) {
    // TODO: the larger maximum m, and both sums rescaled to it:
    // a.sum * expf(a.max - m) + b.sum * expf(b.max - m). When m is -inf (two
    // empty or masked parts: lanes with no column in a short row), return
    // empty_state() instead: the formula would give NaN.
    (void)b;
    return a;
}

// Every lane of the warp gets the merge of the 32 lanes' states.
[[maybe_unused]] __device__ MaxSum warp_merge(MaxSum s) {
    // TODO: a butterfly: for offset = 16, 8, 4, 2, 1, take the partner's
    // max and sum with __shfl_xor_sync(kFullMask, ..., offset) and merge.
    return s;
}

// Every thread of the block gets the merge of all its threads' states.
// `warp_states` is shared memory for kWarpsPerBlock states.
__device__ MaxSum block_merge(MaxSum s, MaxSum* warp_states) {
    // TODO: warp_merge; lane 0 of each warp writes the result to
    // warp_states[warp]; a barrier; then every warp merges the 8 states
    // (lane w takes warp_states[w], lanes from 8 on the empty state).
    (void)warp_states;
    return s;
}

// ---------------------------------------------------------------- stage 1: three passes

// Given: a block-wide reduction of one float (Max or Plus below), every
// thread gets the result: the warp by shuffles, the 8 warps through shared
// memory (`warp_values`: kWarpsPerBlock floats), as in lessons 04 and 05.
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

// One block per row (row blockIdx.x), kBlockThreads threads striding over its columns.
__global__ void three_pass_kernel(const float* in, float* out, std::size_t cols) {
    // TODO: shared memory for the two reductions,
    //   __shared__ float warp_max[kWarpsPerBlock];
    //   __shared__ float warp_sum[kWarpsPerBlock];
    // (two arrays: a block handles one row, so neither is written twice).
    // The row starts at in + blockIdx.x * cols (in size_t). Then
    // pass 1: each thread's maximum of its columns, and
    //   block_reduce(m, warp_max, -INFINITY, Max<float>{}) for the row's;
    //   a row maximum of -inf means a fully masked row: write zeros, return;
    // pass 2: the sum of expf(x - m), block_reduce(s, warp_sum, 0.0f, Plus<float>{});
    // pass 3: out = expf(x - m) / sum.
    (void)in;
    (void)out;
    (void)cols;
}

// ---------------------------------------------------------------- stages 2 and 3: online

// The online softmax of one row x (written to y) by a group of kThreads
// threads (a warp: 32, or a block: kBlockThreads), this thread being number
// `rank` of them; `merge_group(state)` merges the group's states and gives
// every thread the row's (warp_merge or block_merge).
// kItems: how many entries a thread may keep in registers, if you keep the
// row there between the two passes (see "Going further"); the simple
// version below does not use it.
template <unsigned kThreads, unsigned kItems, class MergeGroup>
__device__ void online_softmax_row(const float* x, float* y, std::size_t cols, unsigned rank, MergeGroup merge_group) {
    // TODO: pass 1: s = empty_state(), then add_entry for columns rank,
    // rank + kThreads, ... below cols. Then row = merge_group(s): every
    // thread gets the same (max, sum) of the whole row.
    // A fully masked row (row.max == -inf) gets zeros; otherwise
    // pass 2: y[j] = expf(x[j] - row.max) / row.sum for the same columns.
    (void)x;
    (void)y;
    (void)cols;
    (void)rank;
    (void)merge_group;
}

// Eight rows per block, one per warp. ([[maybe_unused]] until your launcher launches it.)
[[maybe_unused]] __global__ void online_warp_kernel(const float* in, float* out, std::size_t rows, std::size_t cols) {
    // TODO: the warp's row: blockIdx.x * kWarpsPerBlock + threadIdx.x / 32
    // (in size_t). A warp whose row is past the end returns (the kernel has no
    // block barrier). Then
    //   online_softmax_row<32, 32>(row start in, row start out, cols, threadIdx.x % 32,
    //                              [](MaxSum s) { return warp_merge(s); });
    (void)in;
    (void)out;
    (void)rows;
    (void)cols;
}

// One block per row.
__global__ void online_block_kernel(const float* in, float* out, std::size_t cols) {
    __shared__ MaxSum warp_states[kWarpsPerBlock];
    const std::size_t row = blockIdx.x;
    online_softmax_row<kBlockThreads, 16>(in + row * cols, out + row * cols, cols, threadIdx.x,
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
    // TODO: launch online_warp_kernel with enough blocks of kBlockThreads
    // threads for `rows` rows at kWarpsPerBlock rows per block (round up),
    // then check the launch with COURSE_CUDA_CHECK(cudaGetLastError()).
    (void)in;
    (void)out;
}

void softmax_rows_online_block(const float* in, float* out, std::size_t rows, std::size_t cols) {
    if (rows == 0 || cols == 0) return;
    online_block_kernel<<<static_cast<unsigned>(rows), kBlockThreads>>>(in, out, cols);
    COURSE_CUDA_CHECK(cudaGetLastError());
}

// Given: stage 4, each row to the mapping that suits its length.
void softmax_rows_online(const float* in, float* out, std::size_t rows, std::size_t cols) {
    if (cols <= kWarpRowLimit) {
        softmax_rows_online_warp(in, out, rows, cols);
    } else {
        softmax_rows_online_block(in, out, rows, cols);
    }
}

}  // namespace lesson20
