/// @file convolution.hpp
/// @brief Lesson 16 contract: a 2D convolution (a stencil) of a row-major
/// float image with a square filter of radius 1 to 4 held in `__constant__`
/// memory, with zero or clamp boundary handling, naively and through a
/// shared-memory tile with halos.
///
/// You implement `set_filter` and `convolve_tiled` in
/// `starter/16-stencil-convolution/convolution.cu`; `convolve_naive` is given
/// there, as the baseline. The tests call them with device pointers and
/// compare the result with a CPU convolution. See the lesson text,
/// `lessons/16-stencil-convolution/README.md`.
///
/// What is computed (the same for both functions). With R the radius of the
/// filter set last by `set_filter` and `w` its (2R + 1) x (2R + 1) weights in
/// row-major order, output pixel (r, c) is
///
///     out(r, c) = sum over dy = -R..R (outer), dx = -R..R (inner) of
///                 w[(dy + R) * (2R + 1) + (dx + R)] * in(r + dy, c + dx)
///
/// This is a *correlation*: weight (0, 0) multiplies the pixel up and to the
/// left (r - R, c - R), the filter is not flipped. (A convolution in the
/// mathematical sense flips it; image-processing and deep-learning libraries
/// call the unflipped form a convolution too, and so does this lesson.)
/// A pixel outside the image, `in(r + dy, c + dx)` with the row outside
/// [0, rows) or the column outside [0, cols), is
/// - `Boundary::zero`: 0;
/// - `Boundary::clamp`: the nearest pixel of the image, in(clamp(r + dy, 0,
///   rows - 1), clamp(c + dx, 0, cols - 1)) (the edge is repeated).
///
/// - Any shape: 1 x 1, 1 x N, N x 1, sizes that are no multiple of the tile;
///   `rows` up to kMaxRows, which is more rows than the launched grid covers
///   at once (the blocks loop over the tile rows). `rows * cols` may exceed
///   2^31 (indices in `size_t`). Nothing outside `in[0, rows * cols)` is read
///   and nothing outside `out[0, rows * cols)` is written.
/// - `rows == 0` or `cols == 0` is an empty image: nothing is launched, no
///   error, and the pointers may be null.
/// - `in` and `out` must not overlap.
/// - Float results: the terms are summed in the order above; a GPU may fuse
///   each multiply and add (FMA) and another order is fine too. The tests
///   accept |out - exact| <= n * eps * (sum of |w * in| over the n =
///   (2R + 1)^2 terms), with eps = 2^-23 (FLT_EPSILON): the bound of any
///   summation order of n float products.
/// - The launchers check the launch (`cudaGetLastError`) and return without
///   synchronising.
#pragma once

namespace lesson16 {

/// @brief The largest filter radius: a 9 x 9 filter.
inline constexpr int kMaxRadius = 4;

/// @brief The most weights a filter has: (2 kMaxRadius + 1)^2 = 81 floats in `__constant__` memory.
inline constexpr int kMaxWeights = (2 * kMaxRadius + 1) * (2 * kMaxRadius + 1);

/// @brief The largest image height the launchers accept (the grid covers at
/// most 1,024 rows of 32-row tiles at once and loops over the rest; the limit
/// keeps `rows` an int and the tile count exact).
inline constexpr int kMaxRows = 1 << 30;

/// @brief What a pixel outside the image is.
enum class Boundary {
    zero,   ///< 0
    clamp,  ///< the nearest pixel of the image (edge repeated)
};

/// @brief Copies a filter into `__constant__` memory for the next launches.
///
/// @param weights host pointer to (2 radius + 1)^2 floats, row-major: weight
///                (i, j) multiplies in(r - radius + i, c - radius + j).
/// @param radius  1 to kMaxRadius; anything else throws `std::invalid_argument`
///                (and leaves the filter as it was). A null `weights` throws too.
void set_filter(const float* weights, int radius);

/// @brief `out = in (*) filter`, one thread per output pixel, reading every
/// input pixel from global memory (the baseline; given in the starter).
///
/// Each pixel is read by up to (2R + 1)^2 threads; the L1 and L2 caches serve
/// most of those reads.
///
/// @param in       device pointer to rows * cols floats, row-major (may be null when the image is empty).
/// @param out      device pointer to rows * cols floats: receives the filtered image.
/// @param rows     the image's height, 0 to kMaxRows.
/// @param cols     the image's width, 0 or more.
/// @param boundary what a pixel outside the image is.
/// @throws std::invalid_argument for a negative size or rows > kMaxRows, std::logic_error
///         when no filter was set.
void convolve_naive(const float* in, float* out, int rows, int cols, Boundary boundary);

/// @brief `out = in (*) filter` through a shared-memory tile with a halo.
///
/// Each block computes a tile of `out`: 32 x 32 in the lesson's first
/// version (the starter's), 128 x 32 in the reference, each thread of which
/// computes a 4 x 4 patch. It first loads the input tile it needs (the
/// output tile plus a halo of R pixels on every side, (32 + 2R) x (32 + 2R)
/// pixels for a 32 x 32 tile) into shared memory, every thread loading
/// several pixels and applying the boundary rule while loading; then, after
/// a barrier, each thread computes its outputs from shared memory. Tiles on
/// the right and bottom edges are partial. The tests accept any tile shape.
///
/// @param in       device pointer to rows * cols floats, row-major (may be null when the image is empty).
/// @param out      device pointer to rows * cols floats: receives the filtered image.
/// @param rows     the image's height, 0 to kMaxRows.
/// @param cols     the image's width, 0 or more.
/// @param boundary what a pixel outside the image is.
/// @throws std::invalid_argument for a negative size or rows > kMaxRows, std::logic_error
///         when no filter was set.
void convolve_tiled(const float* in, float* out, int rows, int cols, Boundary boundary);

}  // namespace lesson16
