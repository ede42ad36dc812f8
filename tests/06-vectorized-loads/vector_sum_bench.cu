// Lesson 06 benchmark (GPU only): the sum of 2^26 doubles read 8, 16 and 32
// bytes at a time (scalar, double2, double4_32a) at the same launch shapes,
// your launch_sum_doubles (or the reference's) from an aligned and from a
// misaligned start, launch_sum_complex over the same bytes, and
// cub::DeviceReduce::Sum. Every variant must return the exact sum before it
// is timed (the inputs are small integers, so every order of additions is exact).
//
//   lesson06_bench [output.csv]
#include <vector_sum.hpp>

#include <course/backend.hpp>
#include <course/bench.hpp>
#include <course/device_buffer.hpp>
#include <course/inputs.hpp>

#include <cub/device/device_reduce.cuh>

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace {

// The block's total, added to *result with one atomic: warp shuffles, the
// warps' totals through shared memory, then warp 0 (blockDim.x a multiple of 32).
__device__ void add_block_total(double mine, double* result) {
    __shared__ double warp_totals[32];
    for (int offset = 16; offset > 0; offset /= 2) mine += __shfl_down_sync(0xffffffffu, mine, offset);
    if (threadIdx.x % 32 == 0) warp_totals[threadIdx.x / 32] = mine;
    __syncthreads();
    if (threadIdx.x < 32) {
        double total = threadIdx.x < blockDim.x / 32 ? warp_totals[threadIdx.x] : 0.0;
        for (int offset = 16; offset > 0; offset /= 2) total += __shfl_down_sync(0xffffffffu, total, offset);
        if (threadIdx.x == 0) atomicAdd(result, total);
    }
}

// The sum of one load's doubles.
__device__ double load_total(double v) { return v; }
__device__ double load_total(double2 v) { return v.x + v.y; }
__device__ double load_total(double4_32a v) { return (v.x + v.y) + (v.z + v.w); }

// A grid-stride sum that reads `Load` at a time: double (8 bytes), double2
// (16) or double4_32a (32 bytes per load instruction where the GPU has one;
// CUDA 13 deprecates plain double4, whose alignment is only 16). `values`
// comes straight from cudaMalloc here, so it is aligned for all three; the
// last n % (elements per load) are added one at a time.
template <class Load>
__global__ void sum_with_loads(int n, const double* values, double* result) {
    constexpr size_t per_load = sizeof(Load) / sizeof(double);
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    const size_t first = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const size_t loads = static_cast<size_t>(n) / per_load;
    const Load* body = reinterpret_cast<const Load*>(values);
    double sum = 0.0;
    for (size_t q = first; q < loads; q += stride) sum += load_total(body[q]);
    for (size_t i = per_load * loads + first; i < static_cast<size_t>(n); i += stride) sum += values[i];
    add_block_total(sum, result);
}

}  // namespace

int main(int argc, char** argv) {
    const std::string csv = argc > 1 ? argv[1] : "lesson06_bench.csv";
    const int n = 1 << 26;
    const double bytes = static_cast<double>(n) * sizeof(double);  // every element read once

    course::Bench bench("06", "sum of 2^26 doubles: 8-, 16- and 32-byte loads");
    // One spare element per set, so that a misaligned start still has n elements.
    const std::size_t per_set = static_cast<std::size_t>(n) + 1;
    const int sets = bench.rotation_sets(per_set * sizeof(double));
    const std::vector<int> drawn = course::random_values<int>(per_set, 0, 15, "bench");
    const std::vector<double> host(drawn.begin(), drawn.end());
    double aligned_sum = 0.0;  // integers below 2^53: exact in any order
    for (int i = 0; i < n; ++i) aligned_sum += host[static_cast<std::size_t>(i)];
    const double misaligned_sum = aligned_sum - host[0] + host[static_cast<std::size_t>(n)];
    std::vector<course::DeviceBuffer<double>> values;
    for (int s = 0; s < sets; ++s) values.emplace_back(host);
    course::DeviceBuffer<double> result(1);
    course::DeviceBuffer<cuDoubleComplex> complex_result(1);

    const int sms = course::sm_count();

    std::size_t cub_bytes = 0;
    COURSE_CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, cub_bytes, values[0].data(), result.data(), n));
    course::DeviceBuffer<unsigned char> cub_temp(cub_bytes);

    struct Variant {
        std::string name;
        std::function<void(int)> run;  // one run on buffer set s
        std::function<double()> answer;
        double expected;
        bool library;
    };
    const auto read_result = [&] { return result.download()[0]; };
    const auto zero_result = [&] { COURSE_CUDA_CHECK(cudaMemsetAsync(result.data(), 0, sizeof(double))); };
    std::vector<Variant> variants;

    struct Shape {
        unsigned blocks, threads;
        std::string name;
    };
    const std::vector<Shape> shapes{
        {static_cast<unsigned>(sms * 4), 256, "SMs x 4 x 256"},
        {static_cast<unsigned>(sms * 8), 512, "SMs x 8 x 512"},
        {1024, 256, "1024 x 256"},
    };
    using Kernel = void (*)(int, const double*, double*);
    const struct {
        Kernel kernel;
        const char* name;
    } widths[] = {{sum_with_loads<double>, "8-byte double loads"},
                  {sum_with_loads<double2>, "16-byte double2 loads"},
                  {sum_with_loads<double4_32a>, "32-byte double4_32a loads"}};
    for (const auto& width : widths) {
        for (const Shape& shape : shapes) {
            const Kernel kernel = width.kernel;
            variants.push_back({std::string(width.name) + ", " + shape.name, [&, kernel, shape](int s) {
                                    zero_result();
                                    kernel<<<shape.blocks, shape.threads>>>(n, values[s].data(), result.data());
                                }, read_result, aligned_sum, false});
        }
    }
    variants.push_back({course::implementation_label("launch_sum_doubles"), [&](int s) {
                            lesson06::launch_sum_doubles(lesson06::sum_launch_shape(n), n, values[s].data(),
                                                         result.data());
                        }, read_result, aligned_sum, false});
    variants.push_back({course::implementation_label("launch_sum_doubles") + ", start offset by 8 bytes",
                        [&](int s) {
                            lesson06::launch_sum_doubles(lesson06::sum_launch_shape(n), n, values[s].data() + 1,
                                                         result.data());
                        }, read_result, misaligned_sum, false});
    // The same bytes read as 2^25 complex numbers; the check adds both parts.
    variants.push_back({course::implementation_label("launch_sum_complex") + ", 2^25 complex numbers",
                        [&](int s) {
                            const auto* as_complex = reinterpret_cast<const cuDoubleComplex*>(values[s].data());
                            lesson06::launch_sum_complex(lesson06::sum_launch_shape(n / 2), n / 2, as_complex,
                                                         complex_result.data());
                        }, [&] {
                            const cuDoubleComplex z = complex_result.download()[0];
                            return cuCreal(z) + cuCimag(z);
                        }, aligned_sum, false});
    variants.push_back({"cub::DeviceReduce::Sum", [&](int s) {
                            COURSE_CUDA_CHECK(cub::DeviceReduce::Sum(cub_temp.data(), cub_bytes, values[s].data(),
                                                                     result.data(), n));
                        }, read_result, aligned_sum, true});

    for (const Variant& v : variants) {
        const auto check = [&]() -> std::string {
            result.upload({-1.0});
            v.run(0);
            COURSE_CUDA_CHECK(cudaGetLastError());
            COURSE_CUDA_CHECK(cudaDeviceSynchronize());
            const double got = v.answer();
            if (got == v.expected) return "";
            return "wrong sum: " + std::to_string(got) + ", expected " + std::to_string(v.expected);
        };
        bench.add_checked(v.name, v.library, check, v.run, bytes);
    }
    bench.report(csv);
    return 0;
}
