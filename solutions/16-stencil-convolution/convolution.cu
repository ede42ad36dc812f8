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
#include <cstdint>
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

// The tiled kernel's shape. A block of 32 x 8 threads computes a 128 x 32
// tile of out, each thread a 4 x 4 patch: 4 adjacent columns of 4 rows.
constexpr int kTileW = 128;                         // output columns per tile
constexpr int kTileH = 32;                          // output rows per tile
constexpr int kBlockX = 32, kBlockY = 8;            // threads per block: 256
constexpr int kThreads = kBlockX * kBlockY;
constexpr int kPatch = 4;                           // a thread's outputs: kPatch rows x kPatch columns
// The input tile keeps kPad = kMaxRadius columns of halo on each side, for
// every radius: its rows are then 136 floats, a multiple of 4, so every row
// of it starts 16-byte aligned and can be read as float4.
constexpr int kPad = kMaxRadius;
constexpr int kInW = kTileW + 2 * kPad;             // 136 floats per input tile row
constexpr unsigned kMaxGridRows = 1024;             // tile rows covered at once; blocks loop over the rest

// in(r, c) with the boundary rule: 0 outside the image, or the nearest pixel.
// r and c may be negative or past the edge by up to kPad (in 64 bits: no overflow).
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

// Block (bx, by) computes the 128 x 32 tiles of out in column bx and rows by,
// by + gridDim.y, ... (the grid covers at most kMaxGridRows tile rows at once).
// R is a template parameter: the loops over the filter have a fixed length,
// the compiler unrolls them and keeps the inputs and the 16 sums in registers.
//
// `vectors`: the image's rows start 16-byte aligned (cols a multiple of 4,
// in and out aligned), so tiles wholly inside the image are loaded, and all
// patches stored, 16 bytes at a time.
template <int R>
__global__ void __launch_bounds__(kThreads)
    convolve_tile_kernel(const float* __restrict__ in, float* __restrict__ out, int rows, int cols,
                         Boundary boundary, bool vectors) {
    constexpr int kWidth = 2 * R + 1;        // filter width
    constexpr int kInH = kTileH + 2 * R;     // input tile rows: the output rows and a halo of R above and below
    // 36 x 136 floats (19.6 KiB) for R = 2.
    __shared__ __align__(16) float tile[kInH][kInW];

    const unsigned tile_rows = (static_cast<unsigned>(rows) + kTileH - 1) / kTileH;
    const long long col0 = static_cast<long long>(blockIdx.x) * kTileW;  // first column of the output tile
    const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
    const int thread = ty * kBlockX + tx;
    const int y0 = ty * kPatch;  // this thread's first output row in the tile; its columns are 4 tx .. 4 tx + 3

    for (unsigned tile_row = blockIdx.y; tile_row < tile_rows; tile_row += gridDim.y) {
        const long long row0 = static_cast<long long>(tile_row) * kTileH;  // first row of the output tile

        // Load the input tile, halo included: tile[y][x] = in(row0 - R + y,
        // col0 - kPad + x). Every thread first issues all of its loads, into
        // registers, and only then stores them to shared memory: its loads
        // are all in flight together. (Stored one by one as they arrive, each
        // load would wait for the one before, and an SM would hold too few
        // bytes in flight to cover the memory's latency: Little's law.)
        const bool inside = vectors && col0 - kPad >= 0 && col0 + kTileW + kPad <= cols && row0 - R >= 0 &&
                            row0 + kTileH + R <= rows;
        if (inside) {
            // Wholly inside the image: no boundary rule, 16 bytes a load.
            constexpr int kVecW = kInW / 4;                                // 34 float4 per tile row
            constexpr int kLoads = (kInH * kVecW + kThreads - 1) / kThreads;  // per thread
            float4 v[kLoads];
#pragma unroll
            for (int k = 0; k < kLoads; ++k) {
                const int i = thread + k * kThreads;
                if (i < kInH * kVecW) {
                    const std::size_t first = static_cast<std::size_t>(row0 - R + i / kVecW) * cols +
                                              static_cast<std::size_t>(col0 - kPad);
                    v[k] = reinterpret_cast<const float4*>(in + first)[i % kVecW];
                }
            }
#pragma unroll
            for (int k = 0; k < kLoads; ++k) {
                const int i = thread + k * kThreads;
                if (i < kInH * kVecW) reinterpret_cast<float4*>(&tile[i / kVecW][0])[i % kVecW] = v[k];
            }
        } else {
            // On an edge (or rows not aligned): one pixel at a time, with the
            // boundary rule. Edge tiles are few in a large image, and this
            // simple loop keeps the kernel's register count down.
#pragma unroll 1
            for (int i = thread; i < kInH * kInW; i += kThreads) {
                tile[i / kInW][i % kInW] = pixel(in, row0 - R + i / kInW, col0 - kPad + i % kInW, rows, cols, boundary);
            }
        }
        // Each thread reads pixels that other threads loaded.
        __syncthreads();

        // Output (y0 + k, 4 tx + q) needs tile rows y0 + k .. y0 + k + 2R and
        // tile columns 4 tx + q + kPad - R .. 4 tx + q + kPad + R. The patch's
        // outputs share most of them: tile row y0 + j is read once, as three
        // float4 (tile columns 4 tx .. 4 tx + 11), and serves every output k
        // whose filter row dy = j - k exists. Each sum still adds its terms
        // in the contract's order, dy outer and dx inner.
        float sum[kPatch][4] = {};
#pragma unroll
        for (int j = 0; j < kPatch + 2 * R; ++j) {
            const float4* t = reinterpret_cast<const float4*>(&tile[y0 + j][4 * tx]);
            const float4 a = t[0], b = t[1], c = t[2];
            const float row[12] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w, c.x, c.y, c.z, c.w};
#pragma unroll
            for (int k = 0; k < kPatch; ++k) {
                const int dy = j - k;
                if (dy >= 0 && dy < kWidth) {
#pragma unroll
                    for (int q = 0; q < 4; ++q) {
#pragma unroll
                        for (int dx = 0; dx < kWidth; ++dx) {
                            sum[k][q] += c_filter[dy * kWidth + dx] * row[q + kPad - R + dx];
                        }
                    }
                }
            }
        }

        // Tiles on the right and bottom edges stick out of the image: write only real pixels.
        const long long c = col0 + 4 * tx;
        for (int k = 0; k < kPatch; ++k) {
            const long long r = row0 + y0 + k;
            if (r >= rows) break;
            float* dst = out + static_cast<std::size_t>(r) * static_cast<std::size_t>(cols) + static_cast<std::size_t>(c);
            if (vectors && c + 4 <= cols) {
                *reinterpret_cast<float4*>(dst) = make_float4(sum[k][0], sum[k][1], sum[k][2], sum[k][3]);
            } else {
                for (int q = 0; q < 4; ++q) {
                    if (c + q < cols) dst[q] = sum[k][q];
                }
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

// How many tiles of `size` cover `count` rows or columns (unsigned: no overflow near INT_MAX).
unsigned tiles(int count, int size) { return (static_cast<unsigned>(count) + size - 1) / size; }

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

template <int R>
void launch_tiled(const float* in, float* out, int rows, int cols, Boundary boundary) {
    const dim3 grid(tiles(cols, kTileW), std::min(tiles(rows, kTileH), kMaxGridRows));
    const dim3 block(kBlockX, kBlockY);
    const bool vectors = cols % 4 == 0 && aligned16(in) && aligned16(out);
    convolve_tile_kernel<R><<<grid, block>>>(in, out, rows, cols, boundary, vectors);
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
    const dim3 block(kBlockX, kBlockY);
    const dim3 grid(tiles(cols, kBlockX), std::min(tiles(rows, kBlockY), kMaxGridRows * (kTileH / kBlockY)));
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
