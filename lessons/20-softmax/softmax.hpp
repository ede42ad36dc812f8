/// @file softmax.hpp
/// @brief Lesson 20 contract: the softmax of every row of a row-major
/// matrix of floats, in three passes, then with the online (one-pass)
/// maximum and sum, a warp per row and a block per row.
///
/// You implement these functions in `starter/20-softmax/softmax.cu`. The
/// tests call them with device pointers and compare with a CPU softmax
/// computed in double precision. See the lesson text,
/// `lessons/20-softmax/README.md`.
///
/// Every function computes, for each row `r` of the `rows` x `cols` matrix
/// `in` (row-major, row `r` at `in + r * cols`),
///
///     out[r][j] = exp(in[r][j] - m) / sum over k of exp(in[r][k] - m),   m = max over k of in[r][k]
///
/// which is the mathematical softmax `exp(x_j) / sum_k exp(x_k)` for any
/// `m`; subtracting the row's maximum is what keeps it finite in floats.
///
/// Common to every function:
/// - Any shape: `rows` and `cols` from 1 up (1 x 1 included, `cols` not a
///   multiple of 32 or 4, rows longer than a block: up to 2^20 columns and
///   more). `rows = 0` or `cols = 0` is valid: nothing is launched and the
///   pointers may be null. `rows * cols` is below 2^31.
/// - Inputs are finite floats of any size (`1e30`, `-3e38`, `88.8`, whose
///   `exp` overflows a float) or `-INFINITY`, a masked entry: its output is
///   exactly 0. `+INFINITY` and NaN inputs are not allowed (their result is
///   unspecified).
/// - A row whose entries are all `-INFINITY` (fully masked) gives a row of
///   zeros. (PyTorch's `torch.softmax` gives NaN there; fused attention
///   kernels, FlashAttention's for one, give zeros, which is what a masked
///   row should contribute. The course follows them.)
/// - Accuracy: each output is within
///   `(64 + cols / 16 + 8 * |in[r][j] - m|) * 2^-24` of the exact value,
///   relatively, or `2^-125` absolutely (see the lesson text, "How exact is
///   a float softmax?"): `expf`, `__expf` and any order of additions pass;
///   a dropped, doubled or unscaled term does not.
/// - `in` and `out` do not overlap; `in` is never written.
/// - Each function checks its launches and returns without synchronising.
#pragma once

#include <cstddef>

namespace lesson20 {

/// @brief The longest row softmax_rows_online() gives to a warp: rows of up
/// to this many columns go to softmax_rows_online_warp(), longer ones to
/// softmax_rows_online_block().
inline constexpr std::size_t kWarpRowLimit = 1024;

/// @brief Stage 1: the softmax of every row in three passes over the row:
/// (1) its maximum `m`, (2) the sum `s` of `exp(x - m)`, (3) `out = exp(x - m) / s`.
///
/// Any mapping of threads to rows works; the reference gives each row a
/// block, whose threads stride over its columns and combine their maxima
/// and sums in shared memory.
///
/// @param in   device pointer to `rows * cols` floats, row-major (may be null when either is 0).
/// @param out  device pointer to `rows * cols` floats: the softmax of each row.
/// @param rows number of rows.
/// @param cols number of columns, the length of a row.
void softmax_rows_three_pass(const float* in, float* out, std::size_t rows, std::size_t cols);

/// @brief Stage 2: the online softmax, a warp per row. Each lane keeps a
/// running maximum and a running sum of `exp(x - maximum)` over its columns
/// (rescaling the sum whenever the maximum grows), the 32 lanes combine
/// their pairs with shuffles, and every lane then writes its columns.
///
/// Any `cols` is allowed, short (fewer columns than lanes: some lanes have
/// none) or long (each lane loops); softmax_rows_online() uses it up to
/// kWarpRowLimit columns.
///
/// @param in   device pointer to `rows * cols` floats, row-major (may be null when either is 0).
/// @param out  device pointer to `rows * cols` floats: the softmax of each row.
/// @param rows number of rows.
/// @param cols number of columns.
void softmax_rows_online_warp(const float* in, float* out, std::size_t rows, std::size_t cols);

/// @brief Stage 3: the online softmax, a block per row: the same running
/// (maximum, sum) pairs per thread, combined across each warp with
/// shuffles, then across the block's warps through shared memory.
///
/// Any `cols` is allowed; softmax_rows_online() uses it for rows longer
/// than kWarpRowLimit.
///
/// @param in   device pointer to `rows * cols` floats, row-major (may be null when either is 0).
/// @param out  device pointer to `rows * cols` floats: the softmax of each row.
/// @param rows number of rows, below 2^31 (one block each).
/// @param cols number of columns.
void softmax_rows_online_block(const float* in, float* out, std::size_t rows, std::size_t cols);

/// @brief Stage 4: the softmax of every row by the faster mapping for its
/// length: softmax_rows_online_warp() when `cols <= kWarpRowLimit`,
/// softmax_rows_online_block() otherwise.
///
/// @param in   device pointer to `rows * cols` floats, row-major (may be null when either is 0).
/// @param out  device pointer to `rows * cols` floats: the softmax of each row.
/// @param rows number of rows.
/// @param cols number of columns.
void softmax_rows_online(const float* in, float* out, std::size_t rows, std::size_t cols);

}  // namespace lesson20
