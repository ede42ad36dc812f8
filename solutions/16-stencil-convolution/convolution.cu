// Lesson 16 reference solution: a 2D convolution (correlation, see the
// contract) of a row-major float image with a filter of radius 1 to 4 held
// in __constant__ memory, naively and through a shared-memory tile with a halo.
//
// Why constant memory for the filter: every thread of a warp reads the same
// weight at the same time. The constant cache broadcasts one address to the
// whole warp in one transaction; the 81 weights at most stay in that cache
// for the whole kernel, and they take no registers or shared memory.
//
// Why a tile: output pixel (r, c) needs the (2R + 1)^2 input pixels around
// it, so each input pixel is read by (2R + 1)^2 threads. The naive kernel
// leaves that reuse to the L1 and L2 caches; the tiled kernel reads each
// pixel of its block's input tile from global memory once, into shared
// memory, and all the reuse happens there.
#include <convolution.hpp>

#include <course/cuda_check.hpp>

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <cuda_runtime.h>

namespace lesson16 {

namespace {

// The filter, (2R + 1)^2 weights row-major, written by set_filter with
// cudaMemcpyToSymbol and read by every thread of every launch.
__constant__ float c_filter[kMaxWeights];

// The radius of the filter in c_filter (0: set_filter was never called). A
// host variable: the launchers pass it on, or choose a kernel by it.
int g_radius = 0;

constexpr int kTile = 32;                           // a block computes a 32 x 32 tile of out
constexpr int kBlockRows = 8;                       // with 32 x 8 threads,
constexpr int kRowsPerThread = kTile / kBlockRows;  // each computing 4 pixels of one column
constexpr unsigned kMaxGridRows = 1024;             // tile rows covered at once; blocks loop over the rest

// in(r, c) with the boundary rule: 0 outside the image, or the nearest pixel.
// r and c may be negative or past the edge by up to R (in 64 bits: no overflow).
__device__ __forceinline__ float pixel(const float* in, long long r, long long c, int rows, int cols,
                                       Boundary boundary) {
    if (boundary == Boundary::clamp) {
        r = r < 0 ? 0 : (r >= rows ? rows - 1 : r);
        c = c < 0 ? 0 : (c >= cols ? cols - 1 : c);
    } else if (r < 0 || r >= rows || c < 0 || c >= cols) {
        return 0.0f;
    }
    return in[static_cast<std::size_t>(r) * static_cast<std::size_t>(cols) + static_cast<std::size_t>(c)];
}

// The baseline: one thread per output pixel, every input read from global
// memory. A warp reads 32 neighbouring pixels of a row for each of the
// (2R + 1)^2 weights, so its loads are coalesced, and the neighbouring
// threads' and rows' reads of the same pixels mostly hit L1 or L2.
__global__ void convolve_naive_kernel(const float* in, float* out, int rows, int cols, int radius,
                                      Boundary boundary) {
    const long long c = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (c >= cols) return;
    const int width = 2 * radius + 1;
    for (long long r = static_cast<long long>(blockIdx.y) * blockDim.y + threadIdx.y; r < rows;
         r += static_cast<long long>(gridDim.y) * blockDim.y) {
        float sum = 0.0f;
        for (int dy = -radius; dy <= radius; ++dy) {
            for (int dx = -radius; dx <= radius; ++dx) {
                sum += c_filter[(dy + radius) * width + (dx + radius)] * pixel(in, r + dy, c + dx, rows, cols, boundary);
            }
        }
        out[static_cast<std::size_t>(r) * static_cast<std::size_t>(cols) + static_cast<std::size_t>(c)] = sum;
    }
}

// Block (bx, by) computes the 32 x 32 tiles of out in column bx and rows by,
// by + gridDim.y, ... (the grid covers at most kMaxGridRows tile rows at once).
// R is a template parameter: the loops over the filter have a fixed length,
// the compiler unrolls them and keeps the row of inputs and the four sums in
// registers.
template <int R>
__global__ void convolve_tile_kernel(const float* in, float* out, int rows, int cols, Boundary boundary) {
    constexpr int kWidth = 2 * R + 1;     // filter width
    constexpr int kIn = kTile + 2 * R;    // the input tile: the output tile and a halo of R on each side
    // 36 x 36 floats for R = 2. A warp reads 32 consecutive floats of one row
    // of it (plus an offset dx): 32 different banks, no conflict.
    __shared__ float tile[kIn][kIn];

    const unsigned tile_rows = (static_cast<unsigned>(rows) + kTile - 1) / kTile;
    const long long col0 = static_cast<long long>(blockIdx.x) * kTile;  // first column of the output tile
    const int thread = threadIdx.y * kTile + threadIdx.x;
    const int x = threadIdx.x;                      // this thread's column in the tile
    const int y0 = threadIdx.y * kRowsPerThread;    // its first row: it computes rows y0 .. y0 + 3

    for (unsigned tile_row = blockIdx.y; tile_row < tile_rows; tile_row += gridDim.y) {
        const long long row0 = static_cast<long long>(tile_row) * kTile;  // first row of the output tile

        // Load the whole input tile, halo included: kIn * kIn pixels shared out
        // among the 256 threads, consecutive threads on consecutive pixels of a
        // row (coalesced). The boundary rule is applied here, once per pixel,
        // so the arithmetic below never tests an edge.
        for (int i = thread; i < kIn * kIn; i += kTile * kBlockRows) {
            const int ty = i / kIn;
            const int tx = i % kIn;
            tile[ty][tx] = pixel(in, row0 - R + ty, col0 - R + tx, rows, cols, boundary);
        }
        // Each thread reads pixels that other threads loaded.
        __syncthreads();

        // Output (y0 + k, x) needs tile rows y0 + k .. y0 + k + 2R. The four
        // outputs of this thread share most of them: tile row y0 + j is read
        // once, into registers, and serves every output k whose filter row
        // dy = j - k exists. Each sum still adds its terms in the contract's
        // order, dy outer and dx inner.
        float sum[kRowsPerThread] = {};
        for (int j = 0; j < kRowsPerThread + 2 * R; ++j) {
            float row[kWidth];
            for (int dx = 0; dx < kWidth; ++dx) row[dx] = tile[y0 + j][x + dx];
            for (int k = 0; k < kRowsPerThread; ++k) {
                const int dy = j - k;
                if (dy >= 0 && dy < kWidth) {
                    for (int dx = 0; dx < kWidth; ++dx) sum[k] += c_filter[dy * kWidth + dx] * row[dx];
                }
            }
        }

        // Tiles on the right and bottom edges stick out of the image: write only real pixels.
        const long long c = col0 + x;
        for (int k = 0; k < kRowsPerThread; ++k) {
            const long long r = row0 + y0 + k;
            if (r < rows && c < cols) {
                out[static_cast<std::size_t>(r) * static_cast<std::size_t>(cols) + static_cast<std::size_t>(c)] =
                    sum[k];
            }
        }
        // The next tile row's load overwrites the tile: every thread must be
        // done reading this one first.
        __syncthreads();
    }
}

// Rejects shapes the contract excludes and launches before any filter; true when there is work.
bool check_launch(const char* function, int rows, int cols) {
    if (rows < 0 || cols < 0 || rows > kMaxRows) {
        throw std::invalid_argument(std::string(function) + ": the image must be 0 to " + std::to_string(kMaxRows) +
                                    " rows of 0 or more columns, not " + std::to_string(rows) + " x " +
                                    std::to_string(cols));
    }
    if (g_radius == 0) throw std::logic_error(std::string(function) + ": no filter: call set_filter first");
    return rows > 0 && cols > 0;  // an empty image: launch nothing (a grid of 0 blocks is an error)
}

// How many tiles of 32 cover `count` rows or columns (unsigned: no overflow near INT_MAX).
unsigned tiles(int count) { return (static_cast<unsigned>(count) + kTile - 1) / kTile; }

template <int R>
void launch_tiled(const float* in, float* out, int rows, int cols, Boundary boundary) {
    const dim3 grid(tiles(cols), std::min(tiles(rows), kMaxGridRows));
    const dim3 block(kTile, kBlockRows);
    convolve_tile_kernel<R><<<grid, block>>>(in, out, rows, cols, boundary);
}

}  // namespace

void set_filter(const float* weights, int radius) {
    if (weights == nullptr || radius < 1 || radius > kMaxRadius) {
        throw std::invalid_argument("set_filter: the radius must be 1 to " + std::to_string(kMaxRadius) +
                                    " and the weights non-null, not radius " + std::to_string(radius));
    }
    const std::size_t width = static_cast<std::size_t>(2 * radius + 1);
    // Host to __constant__ memory: the symbol itself, not a pointer, names the destination.
    COURSE_CUDA_CHECK(cudaMemcpyToSymbol(c_filter, weights, width * width * sizeof(float)));
    g_radius = radius;
}

void convolve_naive(const float* in, float* out, int rows, int cols, Boundary boundary) {
    if (!check_launch("convolve_naive", rows, cols)) return;
    const dim3 block(kTile, kBlockRows);
    const dim3 grid(tiles(cols), std::min((static_cast<unsigned>(rows) + kBlockRows - 1) / kBlockRows,
                                          kMaxGridRows * kRowsPerThread));
    convolve_naive_kernel<<<grid, block>>>(in, out, rows, cols, g_radius, boundary);
    COURSE_CUDA_CHECK(cudaGetLastError());
}

void convolve_tiled(const float* in, float* out, int rows, int cols, Boundary boundary) {
    if (!check_launch("convolve_tiled", rows, cols)) return;
    // One kernel per radius: the filter loops then have a length the compiler knows.
    switch (g_radius) {
        case 1: launch_tiled<1>(in, out, rows, cols, boundary); break;
        case 2: launch_tiled<2>(in, out, rows, cols, boundary); break;
        case 3: launch_tiled<3>(in, out, rows, cols, boundary); break;
        default: launch_tiled<4>(in, out, rows, cols, boundary); break;
    }
    COURSE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace lesson16
