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
