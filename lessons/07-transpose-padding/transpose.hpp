/// @file transpose.hpp
/// @brief Lesson 07 contract: the transpose of a row-major float matrix,
/// naively and through a shared-memory tile padded against bank conflicts.
///
/// You implement `transpose_tiled` in `starter/07-transpose-padding/transpose.cu`;
/// `transpose_naive` is given there, as the baseline. The tests call both
/// with device pointers and compare the result with a CPU transpose. See the
/// lesson text, `lessons/07-transpose-padding/README.md`.
///
/// Both functions share one contract:
/// - `in` holds a `rows x cols` matrix in row-major order: element
///   (r, c) is `in[r * cols + c]`.
/// - `out` receives its `cols x rows` transpose, also row-major: element
///   (c, r) of the result, `out[c * rows + r]`, is `in[r * cols + c]`.
/// - Any shape: rows and cols need not be multiples of 32 (1 x N, N x 1,
///   31 x 33, 1000 x 3, ...). Nothing outside `in[0, rows * cols)` is read and
///   nothing outside `out[0, rows * cols)` is written: the tests poison the
///   memory after the output and report a write there.
/// - `rows == 0` or `cols == 0` is an empty matrix: nothing is launched, no
///   error, and the pointers may be null.
/// - `rows` may be at most 2,097,120 (65,535 tiles of 32 rows: the limit of
///   `gridDim.y`); larger throws `std::invalid_argument`. `cols` is limited
///   only by `int`, and `rows * cols` may exceed 2^31 (indices are computed
///   in `size_t`).
/// - `in` and `out` must not overlap: this is not an in-place transpose.
/// - The launchers check the launch (`cudaGetLastError`) and return without
///   synchronising; the result is exact (a transpose only moves values).
#pragma once

namespace lesson07 {

/// @brief The largest `rows` the launchers accept: 65,535 tiles of 32 rows,
/// since the tiles of a column of the matrix are `gridDim.y`, which CUDA limits to 65,535.
inline constexpr int kMaxRows = 65535 * 32;

/// @brief `out = transpose(in)`, one thread per element, no shared memory (the baseline).
///
/// Thread (x, y) of a 2D grid copies element (row y, column x): its reads
/// of `in` are consecutive along a row, so a warp's 32 loads are coalesced,
/// but its writes to `out` are `rows` floats apart, one memory segment per
/// thread. Given complete in the starter, to compare the tiled version with.
///
/// @param in   device pointer to `rows * cols` floats, row-major (may be null when the matrix is empty).
/// @param out  device pointer to `rows * cols` floats: receives the `cols x rows` transpose, row-major.
/// @param rows number of rows of `in`, 0 to kMaxRows.
/// @param cols number of columns of `in`, 0 or more.
void transpose_naive(const float* in, float* out, int rows, int cols);

/// @brief `out = transpose(in)` through a 32 x 32 shared-memory tile padded to 33 columns.
///
/// Each block copies one 32 x 32 tile: it reads the tile's rows of `in`
/// (coalesced), stores them in shared memory, waits at a barrier, and writes
/// the tile's columns as rows of `out` (coalesced again). The tile is
/// declared `[32][33]` so that reading one of its columns touches 32
/// different shared-memory banks. Blocks of 32 x 32 threads (one element per
/// thread) are right; 32 x 8 threads that each move four elements of the
/// tile are faster (the reference does that). Tiles on the right and bottom
/// edges are partial: the bounds are checked on the read and on the write.
///
/// @param in   device pointer to `rows * cols` floats, row-major (may be null when the matrix is empty).
/// @param out  device pointer to `rows * cols` floats: receives the `cols x rows` transpose, row-major.
/// @param rows number of rows of `in`, 0 to kMaxRows.
/// @param cols number of columns of `in`, 0 or more.
void transpose_tiled(const float* in, float* out, int rows, int cols);

}  // namespace lesson07
