// Lesson 16: a 2D convolution (a stencil) through a shared-memory tile with a halo.
//
// Goal: make `./course grade 16` pass. Read lessons/16-stencil-convolution/README.md
// first; the functions are documented in convolution.hpp.
// Stuck? `./course hint 16` shows the hints one by one.
//
// `convolve_naive` is given: it is correct once the filter is in constant
// memory, and it reads every input pixel from global memory (2R + 1)^2 times.
// Your job: `set_filter`, which copies the filter into `__constant__` memory,
// and `convolve_tiled`, the same result through a shared-memory tile: each
// block loads its input tile, halo included, once, and computes a 32 x 32
// tile of the output from it.
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

// Given: in(r, c) with the boundary rule: 0 outside the image, or the nearest pixel.
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

// Given: the baseline, one thread per output pixel, every input read from global
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
// R, the filter's radius, is a template parameter: the sizes below are
// constants, and the loops over the filter have a length the compiler knows.
template <int R>
__global__ void convolve_tile_kernel(const float* in, float* out, int rows, int cols, Boundary boundary) {
    constexpr int kWidth = 2 * R + 1;   // filter width: the weights are c_filter[dy * kWidth + dx]
    constexpr int kIn = kTile + 2 * R;  // the input tile: the output tile and a halo of R on each side
    // TODO: declare the input tile in shared memory, kIn x kIn floats.
    //
    // TODO: loop over this block's tile rows: tile_row = blockIdx.y, then
    // + gridDim.y, ... while below ceil(rows / 32). The output tile starts at
    // row 32 * tile_row, column 32 * blockIdx.x. For each:
    //
    //   1. Load: the input tile's pixel (ty, tx) is the image's pixel
    //      (32 * tile_row - R + ty, 32 * blockIdx.x - R + tx), read with
    //      pixel() (which applies the boundary rule). Share the kIn * kIn
    //      pixels out among all 256 threads of the block (i = thread number,
    //      i + 256, ...), consecutive threads on consecutive pixels of a row.
    //   2. Wait until the whole tile is loaded.
    //   3. Compute: thread (threadIdx.x, threadIdx.y) computes the kRowsPerThread
    //      outputs (4 * threadIdx.y + k, threadIdx.x) of the tile, k = 0..3:
    //      output (y, x) is the sum over dy, dx in 0..2R of
    //      c_filter[dy * kWidth + dx] * tile[y + dy][x + dx]. Write each one
    //      to out (row-major, index in size_t) if it is inside the image.
    //   4. Wait until every thread is done with the tile before the next load
    //      overwrites it.
    //
    // Going further: read each tile row once into registers and use it for
    // all four outputs (see the README's "register reuse").
    (void)kWidth;
    (void)kIn;
    (void)in;
    (void)out;
    (void)rows;
    (void)cols;
    (void)boundary;
}

// Given: rejects shapes the contract excludes and launches before any filter; true when there is work.
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
    // TODO: one block per 32 x 32 tile of out in x (tiles() rounds up), and in
    // y as many tile rows as there are, but at most kMaxGridRows (the kernel
    // loops over the rest).
    const dim3 grid(1, 1);
    // TODO: 32 x 8 threads, each computing 4 outputs of a column of the tile.
    const dim3 block(1, 1);
    convolve_tile_kernel<R><<<grid, block>>>(in, out, rows, cols, boundary);
}

}  // namespace

void set_filter(const float* weights, int radius) {
    if (weights == nullptr || radius < 1 || radius > kMaxRadius) {
        throw std::invalid_argument("set_filter: the radius must be 1 to " + std::to_string(kMaxRadius) +
                                    " and the weights non-null, not radius " + std::to_string(radius));
    }
    const std::size_t width = static_cast<std::size_t>(2 * radius + 1);
    // TODO: copy the width * width weights from the host into c_filter, the
    // __constant__ array above, with cudaMemcpyToSymbol (checked with
    // COURSE_CUDA_CHECK). The symbol itself, not a pointer, names the destination.
    (void)width;
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
    // TODO: one kernel per radius: launch launch_tiled<1> to launch_tiled<4>
    // as g_radius says (a switch). Only radius 2 is launched for now.
    launch_tiled<2>(in, out, rows, cols, boundary);
    COURSE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace lesson16
