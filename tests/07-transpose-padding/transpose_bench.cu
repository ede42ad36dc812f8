// Lesson 07 benchmark (GPU only): the transpose of an 8192 x 8192 float
// matrix (256 MiB in, 256 MiB out). A plain copy kernel with the same tiles
// and cudaMemcpy device to device give the ceiling; then the naive
// transpose, a 32 x 32 tile without and with padding (32 x 32 threads), the
// padded tile with 32 x 8 threads, and your transpose_naive and
// transpose_tiled (or the reference's). Every variant is checked against
// the CPU's transpose before it is timed.
//
//   lesson07_bench [output.csv]
#include <transpose.hpp>

#include "cpu_reference.hpp"

#include <course/bench.hpp>
#include <course/device_buffer.hpp>
#include <course/inputs.hpp>

#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

constexpr int kTile = 32;

// The copy the transposes are measured against: the same 32 x 32 tiles and
// `kRowsPerPass` x 32 threads, reading and writing along rows, no shared
// memory. Each thread loads all its elements into registers before storing
// any (as the transposes do through the tile): with load, store, load, store
// the compiler must assume a store may change the next load's input, and each
// thread would keep only one load in flight.
template <int kRowsPerPass>
__global__ void copy_tiles(const float* in, float* out, int rows, int cols) {
    constexpr int kPasses = kTile / kRowsPerPass;
    const size_t col = static_cast<size_t>(blockIdx.x) * kTile + threadIdx.x;
    float staged[kPasses];
#pragma unroll
    for (int p = 0; p < kPasses; ++p) {
        const size_t row = static_cast<size_t>(blockIdx.y) * kTile + threadIdx.y + p * kRowsPerPass;
        if (row < static_cast<size_t>(rows) && col < static_cast<size_t>(cols)) staged[p] = in[row * cols + col];
    }
#pragma unroll
    for (int p = 0; p < kPasses; ++p) {
        const size_t row = static_cast<size_t>(blockIdx.y) * kTile + threadIdx.y + p * kRowsPerPass;
        if (row < static_cast<size_t>(rows) && col < static_cast<size_t>(cols)) out[row * cols + col] = staged[p];
    }
}

// The comparison rows: a tile of 32 rows of 32 + kPadding floats, moved by
// blocks of 32 x kRowsPerPass threads. kPadding = 0 shows the bank conflicts.
template <int kPadding, int kRowsPerPass>
__global__ void transpose_through_tile(const float* in, float* out, int rows, int cols) {
    __shared__ float staged[kTile][kTile + kPadding];
    const size_t height = static_cast<size_t>(rows), width = static_cast<size_t>(cols);
    const size_t corner_row = static_cast<size_t>(blockIdx.y) * kTile;
    const size_t corner_col = static_cast<size_t>(blockIdx.x) * kTile;
    for (int k = threadIdx.y; k < kTile; k += kRowsPerPass) {
        const size_t r = corner_row + k, c = corner_col + threadIdx.x;
        if (r < height && c < width) staged[k][threadIdx.x] = in[r * width + c];
    }
    __syncthreads();
    for (int k = threadIdx.y; k < kTile; k += kRowsPerPass) {
        const size_t r = corner_col + k, c = corner_row + threadIdx.x;  // in out's coordinates
        if (r < width && c < height) out[r * height + c] = staged[threadIdx.x][k];
    }
}

using TileKernel = void (*)(const float*, float*, int, int);

// One block per 32 x 32 tile, 32 x rows_per_pass threads per block.
void launch_tiles(TileKernel kernel, int rows_per_pass, const float* in, float* out, int rows, int cols) {
    const dim3 grid((cols + kTile - 1) / kTile, (rows + kTile - 1) / kTile);
    kernel<<<grid, dim3(kTile, rows_per_pass)>>>(in, out, rows, cols);
}

}  // namespace

int main(int argc, char** argv) {
    const std::string csv = argc > 1 ? argv[1] : "lesson07_bench.csv";
    const int rows = 8192, cols = 8192;
    const std::size_t count = static_cast<std::size_t>(rows) * cols;
    const double bytes = 2.0 * static_cast<double>(count) * sizeof(float);  // every element read once, written once

    course::Bench bench("07", "transpose of an 8192 x 8192 float matrix");
    const int sets = bench.rotation_sets(2 * count * sizeof(float));
    const std::vector<float> host = course::random_values<float>(count, -1.0f, 1.0f, "bench");
    const std::vector<float> transposed = lesson07::reference::transpose(host, rows, cols);
    std::vector<course::DeviceBuffer<float>> in, out;
    for (int s = 0; s < sets; ++s) {
        in.emplace_back(host);
        out.emplace_back(count);
    }

    struct Variant {
        std::string name;
        std::function<void(int)> run;  // one run on buffer set s
        bool transposes;               // false: a copy, checked against the input
        bool library;
    };
    // One of the benchmark's own tile kernels, moved by 32 x rows_per_pass threads.
    const auto tiles_of = [&](TileKernel kernel, int rows_per_pass) {
        return [&, kernel, rows_per_pass](int s) {
            launch_tiles(kernel, rows_per_pass, in[s].data(), out[s].data(), rows, cols);
        };
    };
    const std::vector<Variant> variants{
        {"cudaMemcpy device to device", [&](int s) {
             COURSE_CUDA_CHECK(cudaMemcpyAsync(out[s].data(), in[s].data(), count * sizeof(float),
                                               cudaMemcpyDeviceToDevice));
         }, false, true},
        // A baseline like a library row: the ceiling a transpose is measured against, never "best".
        {"copy kernel, 32 x 8 threads per 32 x 32 tile", tiles_of(copy_tiles<8>, 8), false, true},
        {course::implementation_label("transpose_naive") + ", one thread per element",
         [&](int s) { lesson07::transpose_naive(in[s].data(), out[s].data(), rows, cols); }, true, false},
        {"tile 32 x 32, unpadded, 32 x 32 threads", tiles_of(transpose_through_tile<0, 32>, 32), true, false},
        {"tile 32 x 33, padded, 32 x 32 threads", tiles_of(transpose_through_tile<1, 32>, 32), true, false},
        {"tile 32 x 32, unpadded, 32 x 8 threads", tiles_of(transpose_through_tile<0, 8>, 8), true, false},
        {"tile 32 x 33, padded, 32 x 8 threads", tiles_of(transpose_through_tile<1, 8>, 8), true, false},
        {course::implementation_label("transpose_tiled"),
         [&](int s) { lesson07::transpose_tiled(in[s].data(), out[s].data(), rows, cols); }, true, false},
    };

    for (const Variant& v : variants) {
        const auto check = [&]() -> std::string {
            out[0].poison();
            v.run(0);
            COURSE_CUDA_CHECK(cudaGetLastError());
            const std::vector<float> got = out[0].download();
            const std::vector<float>& expected = v.transposes ? transposed : host;
            for (std::size_t i = 0; i < count; ++i) {
                if (std::memcmp(&got[i], &expected[i], sizeof(float)) != 0) {
                    return "wrong value at out[" + std::to_string(i) + "] (row " + std::to_string(i / rows) +
                           ", column " + std::to_string(i % rows) + ")";
                }
            }
            return "";
        };
        bench.add_checked(v.name, v.library, check, v.run, bytes);
    }
    bench.report(csv);
    return 0;
}
