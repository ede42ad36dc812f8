// Lesson 07: the transpose of a matrix through a shared-memory tile.
//
// Goal: make `./course grade 07` pass. Read lessons/07-transpose-padding/README.md
// first; the functions are documented in transpose.hpp.
// Stuck? `./course hint 07` shows the hints one by one.
//
// `transpose_naive` is given: it is correct, and slow, because its writes
// to `out` are strided. Your job is `transpose_tiled`: the same result,
// with every global read and write along a row, through a 32 x 32 tile in
// shared memory padded to 33 columns.
#include <transpose.hpp>

#include <course/cuda_check.hpp>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <cuda_runtime.h>

namespace lesson07 {

namespace {

constexpr unsigned kTile = 32;  // the tile is 32 x 32 floats

// Given: the baseline. Thread (x, y) copies in(row y, column x) to
// out(row x, column y). Reads along rows (coalesced), writes down columns
// (one memory transaction per thread).
__global__ void transpose_naive_kernel(const float* in, float* out, int rows, int cols) {
    const std::size_t c = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const std::size_t r = static_cast<std::size_t>(blockIdx.y) * blockDim.y + threadIdx.y;
    const std::size_t n_rows = static_cast<std::size_t>(rows);
    const std::size_t n_cols = static_cast<std::size_t>(cols);
    if (r < n_rows && c < n_cols) out[c * n_rows + r] = in[r * n_cols + c];
}

// Block (bx, by) moves the tile whose top-left corner is in(row 32 by,
// column 32 bx) to out(row 32 bx, column 32 by), transposed.
__global__ void transpose_tile_kernel(const float* in, float* out, int rows, int cols) {
    // TODO: declare the tile in shared memory, 32 rows of 33 floats (the
    // 33rd column is padding: see the README's figure of the banks).
    //
    // TODO: load. Thread (threadIdx.x, threadIdx.y) reads in(row 32 by + threadIdx.y,
    // column 32 bx + threadIdx.x) into tile[threadIdx.y][threadIdx.x], if that
    // element exists (the tiles on the bottom and right edges stick out).
    // Index in size_t.
    //
    // TODO: wait until the whole tile is loaded.
    //
    // TODO: store. The same thread writes out(row 32 bx + threadIdx.y,
    // column 32 by + threadIdx.x) = tile[threadIdx.x][threadIdx.y], if that
    // element exists in out (a cols x rows matrix).
    //
    // Going further: with blocks of 32 x 8 threads, each thread loads and
    // stores four rows of the tile (threadIdx.y, + 8, + 16, + 24).
    (void)in;
    (void)out;
    (void)rows;
    (void)cols;
}

// Given: rejects shapes the grid cannot cover; true when there is work to launch.
bool check_shape(const char* function, int rows, int cols) {
    if (rows < 0 || cols < 0 || rows > kMaxRows) {
        throw std::invalid_argument(std::string(function) + ": the matrix must be 0 to " + std::to_string(kMaxRows) +
                                    " rows of 0 or more columns, not " + std::to_string(rows) + " x " +
                                    std::to_string(cols));
    }
    return rows > 0 && cols > 0;  // an empty matrix: launch nothing (a grid of 0 blocks is an error)
}

// Given: how many tiles of 32 cover `count` rows or columns.
unsigned tiles(int count) { return (static_cast<unsigned>(count) + kTile - 1) / kTile; }

}  // namespace

void transpose_naive(const float* in, float* out, int rows, int cols) {
    if (!check_shape("transpose_naive", rows, cols)) return;
    const dim3 grid(tiles(cols), tiles(rows));
    const dim3 block(kTile, kTile);
    transpose_naive_kernel<<<grid, block>>>(in, out, rows, cols);
    COURSE_CUDA_CHECK(cudaGetLastError());
}

void transpose_tiled(const float* in, float* out, int rows, int cols) {
    if (!check_shape("transpose_tiled", rows, cols)) return;
    // TODO: one block per 32 x 32 tile: x over the columns of `in`, y over
    // its rows (tiles() rounds up).
    const dim3 grid(1, 1);
    // TODO: 32 x 32 threads per block, one per element of the tile (or
    // 32 x 8, going further, each thread then moving four rows of it).
    const dim3 block(1, 1);
    transpose_tile_kernel<<<grid, block>>>(in, out, rows, cols);
    COURSE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace lesson07
