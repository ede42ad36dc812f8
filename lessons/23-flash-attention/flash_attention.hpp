/// @file flash_attention.hpp
/// @brief Lesson 23 contract: single-head attention O = softmax(Q·Kᵀ/√d)·V
/// without ever storing the N x N matrix of scores (FlashAttention's forward
/// pass), on tensor cores through `nvcuda::wmma`.
///
/// You implement these functions in `starter/23-flash-attention/flash_attention.cu`.
/// The tests call them with device pointers and compare O and L with a CPU
/// attention computed in double from the same half-precision inputs. See the
/// lesson text, `lessons/23-flash-attention/README.md`.
///
/// What every function shares:
/// - Shapes: Q, K, V and O are N x d matrices of `__half`, row-major and
///   densely packed (element (i, c) of Q is `Q[i * d + c]`): row i of Q is
///   query i, row j of K and of V is key j. N is any value >= 0, not only a
///   multiple of a tile; d is 64 or 128.
/// - What is computed: the scores s_ij = (q_i · k_j) / √d, and for each query
///   row i the weighted average of the rows of V,
///       o_i = sum_j exp(s_ij) v_j / sum_j exp(s_ij),
///   over the keys j that query i sees: every key, or with `causal` only the
///   keys j <= i (a token sees itself and what came before it). Query i
///   always sees key i, so no row is empty.
/// - L: one float per query row, L_i = ln sum_j exp(s_ij) (natural log, of
///   the scaled scores, over the visible keys): the log-sum-exp that a
///   backward pass needs to rebuild any probability as exp(s_ij - L_i).
///   Besides O, L is the only output: N floats, O(N), where the unfused
///   computation needs the N x N scores. Any scratch memory a function uses
///   is O(N d) too (see below).
/// - Every element of O and of L is written; the caller may pass memory
///   holding anything (the tests fill it with NaN). Of the caller's memory,
///   nothing outside O's N * d and L's N elements is written, nothing
///   outside Q, K and V is read.
/// - The pointers are those `cudaMalloc` returns, or as aligned (256 bytes).
/// - N = 0 launches nothing and returns, and the pointers may be null. A
///   negative N or a d other than 64 and 128 throws `std::invalid_argument`.
/// - Accuracy: the inputs are halves, the probabilities are rounded to half
///   before they multiply V on tensor cores, sums are in float, O is rounded
///   to half. The tests accept, element by element,
///       |o_ic - exact_ic| <= 2^-11 |exact_ic| + (2^-9 + 2 E_i + N 2^-23) W_ic + N 2^-24 max_j |v_jc|,
///   where W_ic = sum_j w_ij |v_jc| is the weighted average of |v|, and E_i
///   bounds the float error of row i's scores; and |L_i - exact| <= 2^-10 + 2 E_i.
///   `tests/23-flash-attention/cpu_reference.hpp` derives the bound.
/// - They launch on the default stream, check the launch and return without
///   synchronising. attention_simple allocates no memory. flash_attention
///   may keep a scratch buffer of device memory from call to call,
///   allocated (and, when a call needs more, reallocated, which waits for
///   the device) by the function itself, never freed before the process
///   ends, of O(N d) bytes: the reference does, for the states of the
///   splits of the keys of short sequences, (d + 2) floats per query row
///   and split. A version that needs none allocates nothing.
#pragma once

#include <cuda_fp16.h>

namespace lesson23 {

/// @brief The two head dimensions the lesson supports.
inline constexpr int kHeadDims[] = {64, 128};

/// @brief Attention with one thread per query row, in float on the CUDA
/// cores, K and V read straight from global memory (the first step of the
/// lesson): the online softmax of lesson 20 applied to a weighted sum.
///
/// Each thread walks over the keys its query sees, one at a time, keeping
/// the running maximum m of the scores, the running sum l of exp(s - m) and
/// the running weighted sum of the rows of V (d floats), rescaling l and
/// the sum by exp(m_old - m_new) whenever the maximum grows. Correct and
/// slow: every thread reads all of K and V, and nothing runs on tensor cores.
///
/// @param Q device pointer to N * d halves: the queries, row-major.
/// @param K device pointer to N * d halves: the keys, row-major.
/// @param V device pointer to N * d halves: the values, row-major.
/// @param O device pointer to N * d halves: overwritten with the attention output.
/// @param L device pointer to N floats: overwritten with each row's log-sum-exp.
/// @param N the sequence length: rows of Q, K, V and O (>= 0).
/// @param d the head dimension: columns of Q, K, V and O (64 or 128).
/// @param causal when true, query i sees only the keys j <= i.
void attention_simple(const __half* Q, const __half* K, const __half* V, __half* O, float* L, int N, int d,
                      bool causal);

/// @brief FlashAttention's forward pass (the graded task): tiles of Q, K and
/// V in shared memory, scores and products on tensor cores, the online
/// softmax across tiles of keys, O and L written once, nothing N x N stored.
///
/// The reference: blocks of 8 warps own 64 query rows and keep their tile of
/// Q in shared memory; each band of 16 rows belongs to two warps, one per
/// half of every tile of keys. The block walks over the keys 64 at a time: it
/// copies the tile of K and of V into padded shared memory (16-byte loads,
/// zeros past row N; the next tile's loads are issued into registers while
/// the current one is computed), each warp computes its 16 x 32 scores
/// S = Q·Kᵀ with wmma into float fragments and stores them to its own shared
/// scratch, its lanes run the online softmax on the 16 rows (running maximum
/// m, sum l, factor alpha = exp(m_old - m_new), keys past N or above the
/// diagonal set to -inf) and store the probabilities P as halves, and the
/// warp rescales its 16 x d accumulator of O (float fragments kept in
/// registers) by alpha row by row before adding P·V. With `causal`, the
/// tiles of keys wholly above the diagonal are skipped and only the diagonal
/// tile is masked. At the end the two warps of a band merge their (m, l, O)
/// through shared memory, O = O / l is rounded to half, and L = m + ln l.
/// Where its blocks of query rows are fewer than the SMs (a single head of
/// a few thousand tokens), the reference also splits the tiles of keys of
/// each block of rows over 2 to 4 blocks (split-KV): each leaves its
/// unnormalised (m, l, O) in its scratch buffer, and a second kernel merges
/// them and writes O and L.
///
/// @param Q device pointer to N * d halves: the queries, row-major (may be null when N = 0).
/// @param K device pointer to N * d halves: the keys, row-major (may be null when N = 0).
/// @param V device pointer to N * d halves: the values, row-major (may be null when N = 0).
/// @param O device pointer to N * d halves: overwritten with the attention output.
/// @param L device pointer to N floats: overwritten with each row's log-sum-exp.
/// @param N the sequence length: rows of Q, K, V and O (>= 0).
/// @param d the head dimension: columns of Q, K, V and O (64 or 128).
/// @param causal when true, query i sees only the keys j <= i.
void flash_attention(const __half* Q, const __half* K, const __half* V, __half* O, float* L, int N, int d,
                     bool causal);

}  // namespace lesson23
