// Lesson 07 reference solution: the transpose of a rows x cols row-major
// matrix, naively and through a shared-memory tile padded to 33 columns.
//
// Why a tile at all: a transpose reads `in` along rows and writes `out`
// along columns. Whichever of the two a warp does along consecutive
// addresses, the other is strided, and a strided warp access costs one
// memory transaction per thread instead of four for the whole warp. The
// tile lets both global accesses run along rows: a block reads a 32 x 32
// piece of `in` row by row into shared memory, and writes it to `out` row
// by row, reading the tile by columns. Shared memory does not mind the
// column order, as long as the 32 floats of one column sit in 32 different
// banks: hence the 33rd column of padding.
#include <transpose.hpp>

#include <course/cuda_check.hpp>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <cuda_runtime.h>

namespace lesson07 {

namespace {

constexpr unsigned kTile = 32;       // the tile is 32 x 32 floats: one warp per tile row
constexpr unsigned kBlockRows = 8;   // 32 x 8 threads per block, each moving kTile / kBlockRows = 4 elements

// The baseline: thread (x, y) copies in(row y, column x) to out(row x, column y).
// A warp holds 32 consecutive x: its loads are one 128-byte row segment of
// `in` (coalesced), its stores land `rows` floats apart in `out`, one
// 32-byte memory sector per thread, of which 4 bytes are used.
__global__ void transpose_naive_kernel(const float* in, float* out, int rows, int cols) {
    const std::size_t c = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const std::size_t r = static_cast<std::size_t>(blockIdx.y) * blockDim.y + threadIdx.y;
    const std::size_t n_rows = static_cast<std::size_t>(rows);
    const std::size_t n_cols = static_cast<std::size_t>(cols);
    if (r < n_rows && c < n_cols) out[c * n_rows + r] = in[r * n_cols + c];
}

// One block moves one 32 x 32 tile: block (bx, by) reads the tile whose top
// left corner is in(row 32 by, column 32 bx) and writes it, transposed, at
// out(row 32 bx, column 32 by).
__global__ void transpose_tile_kernel(const float* in, float* out, int rows, int cols) {
    // 33 floats per row: element [i][c] is at word 33 i + c, in bank
    // (33 i + c) mod 32 = (i + c) mod 32. Reading a column (c fixed, i = 0..31,
    // one value per lane) therefore visits 32 different banks. With 32 floats
    // per row all 32 would be in bank c: a 32-way conflict, 32 shared-memory
    // transactions where 1 suffices. The row writes are conflict-free either way.
    __shared__ float tile[kTile][kTile + 1];

    const std::size_t n_rows = static_cast<std::size_t>(rows);
    const std::size_t n_cols = static_cast<std::size_t>(cols);
    const std::size_t tile_row = static_cast<std::size_t>(blockIdx.y) * kTile;  // first row of in in this tile
    const std::size_t tile_col = static_cast<std::size_t>(blockIdx.x) * kTile;  // first column of in

    // Load: lane x of the warp reads column tile_col + x, so each warp reads
    // 32 consecutive floats of one row of `in` (one coalesced 128-byte load).
    // A block of 32 x 8 threads covers the tile's 32 rows in four passes,
    // each thread keeping four loads in flight. Tiles on the bottom and right
    // edges stick out of the matrix: those elements are neither read (they
    // are not in `in`) nor, below, written.
    const std::size_t in_col = tile_col + threadIdx.x;
    for (unsigned y = threadIdx.y; y < kTile; y += kBlockRows) {
        const std::size_t in_row = tile_row + y;
        if (in_row < n_rows && in_col < n_cols) tile[y][threadIdx.x] = in[in_row * n_cols + in_col];
    }

    // Every thread below reads elements that other threads (other warps)
    // loaded: all of the tile must be in shared memory before anyone reads it.
    __syncthreads();

    // Store: row tile_col + y of `out` is column tile_col + y of `in`, and its
    // columns tile_row .. tile_row + 31 are rows of `in`. Lane x writes column
    // tile_row + x: again 32 consecutive floats per warp, coalesced. The value
    // is the tile's element [x][y], a column of the tile across the warp.
    const std::size_t out_col = tile_row + threadIdx.x;
    for (unsigned y = threadIdx.y; y < kTile; y += kBlockRows) {
        const std::size_t out_row = tile_col + y;
        if (out_row < n_cols && out_col < n_rows) out[out_row * n_rows + out_col] = tile[threadIdx.x][y];
    }
}

// Rejects shapes the grid cannot cover; true when there is work to launch.
bool check_shape(const char* function, int rows, int cols) {
    if (rows < 0 || cols < 0 || rows > kMaxRows) {
        throw std::invalid_argument(std::string(function) + ": the matrix must be 0 to " + std::to_string(kMaxRows) +
                                    " rows of 0 or more columns, not " + std::to_string(rows) + " x " +
                                    std::to_string(cols));
    }
    return rows > 0 && cols > 0;  // an empty matrix: launch nothing (a grid of 0 blocks is an error)
}

// How many tiles of 32 cover `count` rows or columns (unsigned: no overflow near INT_MAX).
unsigned tiles(int count) { return (static_cast<unsigned>(count) + kTile - 1) / kTile; }

}  // namespace

void transpose_naive(const float* in, float* out, int rows, int cols) {
    if (!check_shape("transpose_naive", rows, cols)) return;
    // 32 x 32 threads per block: one thread per element of a 32 x 32 tile.
    const dim3 grid(tiles(cols), tiles(rows));
    const dim3 block(kTile, kTile);
    transpose_naive_kernel<<<grid, block>>>(in, out, rows, cols);
    COURSE_CUDA_CHECK(cudaGetLastError());
}

void transpose_tiled(const float* in, float* out, int rows, int cols) {
    if (!check_shape("transpose_tiled", rows, cols)) return;
    // x over the columns of `in` (up to 2^31 - 1 blocks), y over its rows
    // (up to 65,535 blocks, hence kMaxRows). 256 threads per block, each
    // moving 4 elements: more loads in flight per thread, and fewer blocks
    // to schedule, than 1024 threads moving one element each.
    const dim3 grid(tiles(cols), tiles(rows));
    const dim3 block(kTile, kBlockRows);
    transpose_tile_kernel<<<grid, block>>>(in, out, rows, cols);
    COURSE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace lesson07
