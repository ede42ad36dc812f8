/// @file cooperative.hpp
/// @brief Lesson 18 contract: cooperative groups. Tiles of a warp and
/// cg::reduce, warp-aggregated atomics with coalesced_threads() and
/// labeled_partition(), and grid-wide barriers (grid.sync()) in kernels
/// launched with cudaLaunchCooperativeKernel: a one-kernel reduction and an
/// iterative Jacobi solver.
///
/// You implement these functions in `starter/18-cooperative-groups/cooperative.cu`.
/// The tests call them with device pointers and compare with a CPU
/// computation. See the lesson text, `lessons/18-cooperative-groups/README.md`.
///
/// Common to every function:
/// - Every kernel runs blocks of kBlockThreads threads.
/// - `n = 0` is valid (pointers may then be null where said).
/// - tile_sums() and count_labels() check their launch and return without
///   synchronising. grid_sum() and jacobi() return the cooperative launch's
///   status (below) without synchronising either.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace lesson18 {

/// @brief Threads per block of every kernel of the lesson (8 warps).
inline constexpr unsigned kBlockThreads = 256;

/// @brief Sums of consecutive tiles of `tile_size` elements, each computed
/// by a thread_block_tile of `tile_size` threads with cg::reduce.
///
/// `out[t]` = in[t*tile_size] + ... + in[min(n, (t+1)*tile_size) - 1] for
/// every t < ceil(n / tile_size): the last tile may be partial. Integer sums
/// are exact (wrapping is the caller's business: the tests keep values small).
///
/// @param in        device pointer to n ints (may be null when n = 0).
/// @param n         number of elements.
/// @param tile_size 4, 8, 16 or 32; anything else throws std::invalid_argument.
/// @param out       device pointer to ceil(n / tile_size) ints; nothing else is written.
void tile_sums(const int* in, std::size_t n, unsigned tile_size, int* out);

/// @brief `counts[k]` = number of i < n with labels[i] == k, counted with one
/// atomicAdd per group of lanes of a warp holding the same label (a
/// warp-aggregated atomic: coalesced_threads(), then labeled_partition()).
///
/// The launcher zeroes `counts` itself first (the caller may pass garbage).
///
/// @param labels     device pointer to n labels, each in [0, num_labels) (may be null when n = 0).
/// @param n          number of labels, below 2^31.
/// @param num_labels number of counters, at least 1; otherwise std::invalid_argument.
/// @param counts     device pointer to num_labels counters.
void count_labels(const int* labels, std::size_t n, int num_labels, int* counts);

/// @brief The largest grid grid_sum() can launch cooperatively: how many
/// blocks of its kernel fit resident on one SM at once
/// (cudaOccupancyMaxActiveBlocksPerMultiprocessor) times the SM count.
/// @return at least the number of SMs.
int grid_sum_blocks();

/// @brief The sum of in[0..n) into `*out`, with ONE kernel launched by
/// cudaLaunchCooperativeKernel: each block reduces a grid-stride share into
/// `partials[block]`, grid.sync(), then one block adds the partials.
///
/// @param in       device pointer to n ints (may be null when n = 0; the sum is then 0).
/// @param n        number of elements, any size (a grid-stride loop covers it with any grid).
/// @param partials device pointer to at least `blocks` ints of scratch.
/// @param out      device pointer to one int.
/// @param blocks   the grid: 1 to grid_sum_blocks(); below 1 throws std::invalid_argument.
/// @return cudaSuccess, or cudaErrorCooperativeLaunchTooLarge when `blocks`
///         does not fit resident on the device: then nothing ran, and the
///         launcher has cleared that error (cudaGetLastError() is
///         cudaSuccess after it). Any other error throws course::CudaError.
cudaError_t grid_sum(const int* in, std::size_t n, int* partials, int* out, int blocks);

/// @brief The largest grid jacobi() can launch cooperatively (as grid_sum_blocks()).
int jacobi_blocks();

/// @brief `iterations` Jacobi sweeps for -u'' = f on a 1D grid of n points,
/// the two end points held fixed (Dirichlet boundary), in ONE cooperative
/// kernel with a grid.sync() between sweeps.
///
/// One sweep computes, from the iterate u, the next iterate v:
/// v[0] = u[0], v[n-1] = u[n-1], and for 0 < i < n-1
/// `v[i] = 0.5f * (u[i-1] + u[i+1] + h2 * f[i])` (in this order of operations;
/// a GPU may fuse the multiply-add, which the tests' tolerance allows).
///
/// @param u          device pointer to n floats: the initial iterate (with
///                   the boundary values) in; the iterate after `iterations` sweeps out.
/// @param scratch    device pointer to n floats of scratch (contents on return unspecified).
/// @param f          device pointer to n floats, the right-hand side (f[0], f[n-1] unused).
/// @param n          number of grid points; n < 3 has no interior point: u is left as it is.
/// @param iterations number of sweeps, 0 or more (0 leaves u as it is).
/// @param h2         the grid spacing squared, h*h.
/// @param blocks     the grid: 1 to jacobi_blocks(); below 1 throws std::invalid_argument.
/// @return as grid_sum().
cudaError_t jacobi(float* u, float* scratch, const float* f, std::size_t n, int iterations, float h2, int blocks);

}  // namespace lesson18
