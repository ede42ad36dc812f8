// Lesson 16 benchmark (GPU only): an 8192 x 8192 float image (256 MiB in,
// 256 MiB out) filtered with a random 5 x 5 filter. cudaMemcpy device to
// device gives the ceiling (no library 2D filter is available to compare
// with: NPP's nppiFilter is not part of the course's CUDA install); then your
// convolve_naive and convolve_tiled (or the reference's), with both boundary
// rules. Every variant is checked against the CPU's result, within the
// contract's error bound, before it is timed.
//
//   lesson16_bench [output.csv]
#include <convolution.hpp>

#include "cpu_reference.hpp"

#include <course/bench.hpp>
#include <course/device_buffer.hpp>
#include <course/inputs.hpp>

#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace {

__constant__ float c_weights[25];  // the benchmark's own copy of the 5 x 5 filter

// The tiled kernel in its first form, for comparison: 32 x 32 threads, one
// output pixel each, R = 2, clamp. Same tile and halo as the reference, but
// each thread reads its 25 inputs from shared memory with no reuse between
// outputs, and the block is four times larger (fewer blocks per SM).
__global__ void tiled_one_output_per_thread(const float* in, float* out, int rows, int cols) {
    constexpr int R = 2, kTile = 32, kIn = kTile + 2 * R;
    __shared__ float tile[kIn][kIn];
    const long long row0 = static_cast<long long>(blockIdx.y) * kTile;
    const long long col0 = static_cast<long long>(blockIdx.x) * kTile;
    for (int i = threadIdx.y * kTile + threadIdx.x; i < kIn * kIn; i += kTile * kTile) {
        long long r = row0 - R + i / kIn, c = col0 - R + i % kIn;
        r = r < 0 ? 0 : (r >= rows ? rows - 1 : r);
        c = c < 0 ? 0 : (c >= cols ? cols - 1 : c);
        tile[i / kIn][i % kIn] = in[static_cast<size_t>(r) * cols + c];
    }
    __syncthreads();
    float sum = 0.0f;
    for (int dy = 0; dy < 2 * R + 1; ++dy) {
        for (int dx = 0; dx < 2 * R + 1; ++dx) sum += c_weights[dy * 5 + dx] * tile[threadIdx.y + dy][threadIdx.x + dx];
    }
    const long long r = row0 + threadIdx.y, c = col0 + threadIdx.x;
    if (r < rows && c < cols) out[static_cast<size_t>(r) * cols + c] = sum;
}

// The lesson's 32 x 32 tile (the reference before 2026-11-26) with its loads
// batched: the same 36 x 36 input tile and 32 x 8 threads, R = 2, clamp,
// but each thread first issues all of its (at most 6) global loads into
// registers, then stores them to shared memory. The lesson's load loop
// stores each pixel before it loads the next, so a thread has one load in flight; by Little's law an SM
// then holds too few bytes in flight to cover the memory latency.
__global__ void __launch_bounds__(256) tiled_batched_loads(const float* in, float* out, int rows, int cols) {
    constexpr int R = 2, kW = 2 * R + 1, kTile = 32, kIn = kTile + 2 * R, kThreads = 256;
    constexpr int kLoads = (kIn * kIn + kThreads - 1) / kThreads;
    __shared__ float tile[kIn * kIn];
    const long long row0 = static_cast<long long>(blockIdx.y) * kTile;
    const long long col0 = static_cast<long long>(blockIdx.x) * kTile;
    const int thread = threadIdx.y * kTile + threadIdx.x;
    float v[kLoads];
#pragma unroll
    for (int k = 0; k < kLoads; ++k) {
        const int i = thread + k * kThreads;
        if (i < kIn * kIn) {
            long long r = row0 - R + i / kIn, c = col0 - R + i % kIn;
            r = r < 0 ? 0 : (r >= rows ? rows - 1 : r);
            c = c < 0 ? 0 : (c >= cols ? cols - 1 : c);
            v[k] = __ldg(in + static_cast<size_t>(r) * cols + c);
        }
    }
#pragma unroll
    for (int k = 0; k < kLoads; ++k) {
        const int i = thread + k * kThreads;
        if (i < kIn * kIn) tile[i] = v[k];
    }
    __syncthreads();
    const int x = threadIdx.x, y0 = threadIdx.y * 4;
    float sum[4] = {};
#pragma unroll
    for (int j = 0; j < 4 + 2 * R; ++j) {
        float row[kW];
#pragma unroll
        for (int dx = 0; dx < kW; ++dx) row[dx] = tile[(y0 + j) * kIn + x + dx];
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            const int dy = j - k;
            if (dy >= 0 && dy < kW) {
#pragma unroll
                for (int dx = 0; dx < kW; ++dx) sum[k] += c_weights[dy * kW + dx] * row[dx];
            }
        }
    }
    const long long c = col0 + x;
    for (int k = 0; k < 4; ++k) {
        const long long r = row0 + y0 + k;
        if (r < rows && c < cols) out[static_cast<size_t>(r) * cols + c] = sum[k];
    }
}

// The reference's tile and patch without its batched 16-byte loads,
// measured beside it: a wider tile with more work per thread, R = 2, clamp. A block of 32 x 8 threads computes a
// 128 x 32 tile; each thread a 4 x 4 patch (4 columns, 4 rows). The input
// tile (128 + 8 columns: a pad of 4 on each side keeps every row 16-byte
// aligned, 32 + 4 rows) is loaded by rows with coalesced scalar loads,
// without boundary tests for tiles wholly inside the image. Each thread then
// reads each of its 8 input rows once as three float4 (columns 4x - 4 ..
// 4x + 7 of the tile), enough for its 4 outputs of that row and their 5
// taps: 3 shared loads per row instead of 5 per output column.
__global__ void __launch_bounds__(256) tiled_4x4_per_thread(const float* in, float* out, int rows, int cols) {
    constexpr int R = 2, kW = 2 * R + 1, kTileW = 128, kTileH = 32, kPad = 4, kPatch = 4;
    constexpr int kInW = kTileW + 2 * kPad, kInH = kTileH + 2 * R;
    __shared__ __align__(16) float tile[kInH][kInW];
    const long long row0 = static_cast<long long>(blockIdx.y) * kTileH;
    const long long col0 = static_cast<long long>(blockIdx.x) * kTileW;
    const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
    const bool inside = col0 - kPad >= 0 && col0 + kTileW + kPad <= cols && row0 - R >= 0 && row0 + kTileH + R <= rows;
    for (int y = ty; y < kInH; y += 8) {
        for (int x = tx; x < kInW; x += 32) {
            long long r = row0 - R + y, c = col0 - kPad + x;
            if (!inside) {
                r = r < 0 ? 0 : (r >= rows ? rows - 1 : r);
                c = c < 0 ? 0 : (c >= cols ? cols - 1 : c);
            }
            tile[y][x] = in[static_cast<size_t>(r) * cols + c];
        }
    }
    __syncthreads();
    float acc[kPatch][4] = {};
    const int y0 = ty * kPatch;
#pragma unroll
    for (int j = 0; j < kPatch + 2 * R; ++j) {
        const float4* t = reinterpret_cast<const float4*>(&tile[y0 + j][4 * tx]);
        const float4 a = t[0], b = t[1], c = t[2];
        const float v[12] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w, c.x, c.y, c.z, c.w};
#pragma unroll
        for (int k = 0; k < kPatch; ++k) {
            const int dy = j - k;
            if (dy >= 0 && dy < kW) {
#pragma unroll
                for (int q = 0; q < 4; ++q) {
#pragma unroll
                    for (int dx = 0; dx < kW; ++dx) acc[k][q] += c_weights[dy * kW + dx] * v[q + kPad - R + dx];
                }
            }
        }
    }
    const long long c = col0 + 4 * tx;
    for (int k = 0; k < kPatch; ++k) {
        const long long r = row0 + y0 + k;
        if (r >= rows) break;
        float* dst = out + static_cast<size_t>(r) * cols + c;
        if (cols % 4 == 0 && c + 4 <= cols) {
            *reinterpret_cast<float4*>(dst) = make_float4(acc[k][0], acc[k][1], acc[k][2], acc[k][3]);
        } else {
            for (int q = 0; q < 4; ++q) {
                if (c + q < cols) dst[q] = acc[k][q];
            }
        }
    }
}

}  // namespace

int main(int argc, char** argv) {
    const std::string csv = argc > 1 ? argv[1] : "lesson16_bench.csv";
    const int rows = 8192, cols = 8192, radius = 2;
    const std::size_t count = static_cast<std::size_t>(rows) * cols;
    const double bytes = 2.0 * static_cast<double>(count) * sizeof(float);  // every pixel read once, written once

    course::Bench bench("16", "5 x 5 convolution of an 8192 x 8192 float image");
    const int sets = bench.rotation_sets(2 * count * sizeof(float));
    const std::vector<float> host = course::random_values<float>(count, -1.0f, 1.0f, "bench");
    const std::vector<float> weights = course::random_values<float>(25, -1.0f, 1.0f, "bench filter");
    lesson16::set_filter(weights.data(), radius);
    COURSE_CUDA_CHECK(cudaMemcpyToSymbol(c_weights, weights.data(), sizeof c_weights));
    const lesson16::reference::Filtered clamped =
        lesson16::reference::filter(host, rows, cols, weights, radius, {true, false});
    const lesson16::reference::Filtered zeroed =
        lesson16::reference::filter(host, rows, cols, weights, radius, {false, false});
    std::vector<course::DeviceBuffer<float>> in, out;
    for (int s = 0; s < sets; ++s) {
        in.emplace_back(host);
        out.emplace_back(count);
    }

    struct Variant {
        std::string name;
        std::function<void(int)> run;                  // one run on buffer set s
        const lesson16::reference::Filtered* expected;  // null: a copy, checked against the input
        bool library;
    };
    using lesson16::Boundary;
    const std::vector<Variant> variants{
        // The ceiling a memory-bound filter is measured against, never "best".
        {"cudaMemcpy device to device", [&](int s) {
             COURSE_CUDA_CHECK(cudaMemcpyAsync(out[s].data(), in[s].data(), count * sizeof(float),
                                               cudaMemcpyDeviceToDevice));
         }, nullptr, true},
        {course::implementation_label("convolve_naive") + ", clamp",
         [&](int s) { lesson16::convolve_naive(in[s].data(), out[s].data(), rows, cols, Boundary::clamp); },
         &clamped, false},
        {course::implementation_label("convolve_naive") + ", zero",
         [&](int s) { lesson16::convolve_naive(in[s].data(), out[s].data(), rows, cols, Boundary::zero); },
         &zeroed, false},
        {"tiled, 32 x 32 threads, one output each, clamp", [&](int s) {
             tiled_one_output_per_thread<<<dim3(cols / 32, rows / 32), dim3(32, 32)>>>(in[s].data(), out[s].data(),
                                                                                     rows, cols);
         }, &clamped, false},
        {"32 x 32 tile, 4 rows per thread, loads batched, clamp", [&](int s) {
             tiled_batched_loads<<<dim3((cols + 31) / 32, (rows + 31) / 32), dim3(32, 8)>>>(
                 in[s].data(), out[s].data(), rows, cols);
         }, &clamped, false},
        {"128 x 32 tile, 4 x 4 patch per thread, loads not batched, clamp", [&](int s) {
             tiled_4x4_per_thread<<<dim3((cols + 127) / 128, (rows + 31) / 32), dim3(32, 8)>>>(
                 in[s].data(), out[s].data(), rows, cols);
         }, &clamped, false},
        {course::implementation_label("convolve_tiled") + ", clamp",
         [&](int s) { lesson16::convolve_tiled(in[s].data(), out[s].data(), rows, cols, Boundary::clamp); },
         &clamped, false},
        {course::implementation_label("convolve_tiled") + ", zero",
         [&](int s) { lesson16::convolve_tiled(in[s].data(), out[s].data(), rows, cols, Boundary::zero); },
         &zeroed, false},
    };

    for (const Variant& v : variants) {
        const auto check = [&]() -> std::string {
            out[0].poison();
            v.run(0);
            COURSE_CUDA_CHECK(cudaGetLastError());
            const std::vector<float> got = out[0].download();
            for (std::size_t i = 0; i < count; ++i) {
                const bool ok = v.expected == nullptr
                                    ? got[i] == host[i]
                                    : std::fabs(static_cast<double>(got[i]) - v.expected->value[i]) <=
                                          v.expected->bound[i];
                if (!ok) {
                    return "wrong value at out[" + std::to_string(i) + "] (row " + std::to_string(i / cols) +
                           ", column " + std::to_string(i % cols) + ")";
                }
            }
            return "";
        };
        bench.add_checked(v.name, v.library, check, v.run, bytes);
    }
    bench.report(csv);
    return 0;
}
