/// @file top_k.hpp
/// @brief Lesson 11 contract: the K largest (value, index) pairs of an array
/// of floats, sorted, with ties broken by the lowest index.
///
/// You implement these functions in `starter/11-top-k/top_k.cu`. The tests
/// call them with device pointers and compare, exactly, with a CPU
/// `std::partial_sort` (see `tests/11-top-k/cpu_reference.hpp`). Lesson
/// text: `lessons/11-top-k/README.md`.
///
/// The order every function here follows, "ranks before":
/// - **Larger value first.** Infinities are ordinary values (`+inf` is the
///   largest, `-inf` the smallest number).
/// - **Ties: lowest index first.** Among equal values the element with the
///   lower index ranks first, so the answer is unique and the same on every
///   run, whatever order the GPU's threads run in.
/// - **Signed zeros** compare equal, as floats do: `-0.0f` and `+0.0f` tie,
///   and the lower index wins. The value written is the element bit for bit,
///   so its sign shows which zero won.
/// - **NaN** (either sign, any payload) ranks after every number, `-inf`
///   included; NaNs tie with each other (lowest index first). A NaN is
///   therefore returned only when fewer than k elements are numbers.
///
/// The result for `k` and `n`: the first `m = min(k, n)` pairs in that
/// order. With `k > n` all n elements come back, sorted, and the output
/// slots `[n, k)` are not touched.
#pragma once

#include <cstddef>

namespace lesson11 {

/// @brief The largest k the functions accept. Each block keeps up to this
/// many candidates in shared memory (8 bytes each: 8 KiB), next to a buffer
/// of new candidates.
inline constexpr int kMaxK = 1024;

/// @brief The size of the device workspace `top_k` needs for `n` elements
/// and `k` results.
///
/// Call it with the same n and k as `top_k`, allocate that many bytes of
/// device memory (`cudaMalloc`; its alignment is enough) and pass them in.
/// The workspace holds the candidates the blocks pass on to each other; its
/// contents on entry do not matter. The size depends on the device's number
/// of streaming multiprocessors, not only on n and k.
///
/// @param n number of elements (0 to INT_MAX).
/// @param k number of results wanted (0 to kMaxK).
/// @return the number of bytes; 0 when n = 0 or k = 0 (nothing to do).
/// @throws std::invalid_argument when k < 0, k > kMaxK or n > INT_MAX.
std::size_t top_k_workspace_bytes(std::size_t n, int k);

/// @brief Writes the `min(k, n)` largest elements of `values[0..n)` and
/// their indices, in the order of the file comment: `out_values[0]` and
/// `out_indices[0]` are the largest (lowest index among equals), and so on.
///
/// `out_values[i]` is `values[out_indices[i]]` bit for bit. Slots from
/// `min(k, n)` to `k - 1` of both outputs are not touched; nor is `values`.
/// With n = 0 or k = 0 nothing is written and nothing is launched (any of
/// the pointers may then be null). Launches its kernels on the default
/// stream, checks every launch and returns without synchronising.
///
/// @param values          device pointer to n floats (may be null when n = 0).
/// @param n               number of elements, 0 to INT_MAX.
/// @param k               number of results wanted, 0 to kMaxK.
/// @param out_values      device pointer to room for k floats.
/// @param out_indices     device pointer to room for k ints.
/// @param workspace       device pointer to `workspace_bytes` bytes of scratch memory.
/// @param workspace_bytes at least `top_k_workspace_bytes(n, k)`.
/// @throws std::invalid_argument when k < 0, k > kMaxK, n > INT_MAX, or the
///         workspace is smaller than top_k_workspace_bytes(n, k).
void top_k(const float* values, std::size_t n, int k, float* out_values, int* out_indices, void* workspace,
           std::size_t workspace_bytes);

}  // namespace lesson11
