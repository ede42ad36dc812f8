// Lesson 05 benchmark (GPU only): the sum of 2^26 doubles. The table of the
// CUDA C reduction article (docs/sources.md) reproduced: a grid-stride loop,
// a warp shuffle reduction and one atomic per warp, across launch shapes
// from one thread per element (65536 x 1024) down to 128 x 256 and grids
// sized from the SM count; then your launch_sum (or the reference's: one
// atomic per block) and cub::DeviceReduce::Sum. Every variant must give the
// CPU's sum within n * eps * sum|x| before it is timed.
//
//   lesson05_bench [output.csv]
#include <warp_reduce.hpp>

#include "cpu_reference.hpp"

#include <course/backend.hpp>
#include <course/bench.hpp>
#include <course/device_buffer.hpp>
#include <course/inputs.hpp>

#include <cub/device/device_reduce.cuh>

#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace {

// The atomic of the CUDA C reduction article's kernel: a compare-and-swap
// loop on the bits.
__device__ void cas_add(double* address, double val) {
    auto* word = reinterpret_cast<unsigned long long*>(address);
    unsigned long long seen = *word;
    for (;;) {
        const unsigned long long desired =
            static_cast<unsigned long long>(__double_as_longlong(__longlong_as_double(static_cast<long long>(seen)) + val));
        const unsigned long long before = atomicCAS(word, seen, desired);
        if (before == seen) return;
        seen = before;
    }
}

// One atomic per warp: a plain grid-stride loop (one load at a time), five
// shuffles, then lane 0 of each warp adds to *result, with the hardware's
// atomicAdd or with the CAS loop. Launched only with multiples of 32 threads.
template <bool kUseCas>
__global__ void sum_atomic_per_warp(int n, const double* values, double* result) {
    double sum = 0.0;
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < static_cast<size_t>(n);
         i += stride) {
        sum += values[i];
    }
    for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
    if (threadIdx.x % 32 == 0) {
        if constexpr (kUseCas) {
            cas_add(result, sum);
        } else {
            atomicAdd(result, sum);
        }
    }
}

}  // namespace

int main(int argc, char** argv) {
    const std::string csv = argc > 1 ? argv[1] : "lesson05_bench.csv";
    const int n = 1 << 26;
    const double bytes = static_cast<double>(n) * sizeof(double);  // every element read once

    course::Bench bench("05", "sum of 2^26 doubles: warp shuffles, atomics per warp or per block, CUB");
    const int sets = bench.rotation_sets(static_cast<std::size_t>(n) * sizeof(double));
    const std::vector<double> host = course::random_values<double>(static_cast<std::size_t>(n), 0.0, 1.0, "bench");
    const lesson05::reference::ExactSum exact = lesson05::reference::sum(host);
    const long double tolerance = lesson05::reference::tolerance(host.size(), exact.magnitude);
    std::vector<course::DeviceBuffer<double>> values;
    for (int s = 0; s < sets; ++s) values.emplace_back(host);
    course::DeviceBuffer<double> result(1);

    const int sms = course::sm_count();

    std::size_t cub_bytes = 0;
    COURSE_CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, cub_bytes, values[0].data(), result.data(), n));
    course::DeviceBuffer<unsigned char> cub_temp(cub_bytes);

    struct Variant {
        std::string name;
        std::function<void(int)> run;  // one run on buffer set s, into `result`
        bool library;
    };
    std::vector<Variant> variants;
    const auto per_warp = [&](unsigned blocks, unsigned threads, bool cas, const std::string& label) {
        variants.push_back({course::describe({blocks, threads}) + label, [&, blocks, threads, cas](int s) {
                                COURSE_CUDA_CHECK(cudaMemsetAsync(result.data(), 0, sizeof(double)));
                                if (cas) {
                                    sum_atomic_per_warp<true><<<blocks, threads>>>(n, values[s].data(), result.data());
                                } else {
                                    sum_atomic_per_warp<false><<<blocks, threads>>>(n, values[s].data(), result.data());
                                }
                            }, false});
    };
    // The article's shapes, from one thread per element down to 128 x 256.
    for (const auto [blocks, threads] : {std::pair{65536u, 1024u}, std::pair{16384u, 256u}, std::pair{1024u, 256u},
                                         std::pair{128u, 256u}}) {
        per_warp(blocks, threads, false, " one atomic per warp");
    }
    // Grids sized from the SM count.
    for (const unsigned k : {4u, 8u, 32u}) {
        per_warp(k * static_cast<unsigned>(sms), 256u, false,
                 " one atomic per warp (SMs x " + std::to_string(k) + ")");
    }
    // The article's own atomic, the CAS loop, at two grid sizes.
    per_warp(1024u, 256u, true, " one CAS-loop atomicAdd per warp");
    per_warp(8u * static_cast<unsigned>(sms), 256u, true, " one CAS-loop atomicAdd per warp (SMs x 8)");
    variants.push_back({course::implementation_label("launch_sum") + " (one atomic per block)", [&](int s) {
                            lesson05::launch_sum(lesson05::sum_launch_shape(n), n, values[s].data(), result.data());
                        }, false});
    variants.push_back({"cub::DeviceReduce::Sum", [&](int s) {
                            COURSE_CUDA_CHECK(cub::DeviceReduce::Sum(cub_temp.data(), cub_bytes, values[s].data(),
                                                                     result.data(), n));
                        }, true});

    std::printf("CPU: sum %.17g (tolerance %.3g)\n", static_cast<double>(exact.sum), static_cast<double>(tolerance));
    for (const Variant& v : variants) {
        const auto check = [&]() -> std::string {
            v.run(0);
            COURSE_CUDA_CHECK(cudaGetLastError());
            COURSE_CUDA_CHECK(cudaDeviceSynchronize());
            const double got = result.download()[0];
            if (std::fabs(static_cast<long double>(got) - exact.sum) <= tolerance) return "";
            return "wrong sum: " + std::to_string(got) + ", expected " + std::to_string(static_cast<double>(exact.sum));
        };
        bench.add_checked(v.name, v.library, check, v.run, bytes);
    }
    bench.report(csv);
    return 0;
}
