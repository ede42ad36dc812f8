// Lesson 04 benchmark (GPU only): the sum of 2^26 doubles. Your launch_sum
// (or the reference's) at its own launch shape, the same kernel forced to
// other shapes, from one thread per element to one wave of blocks, and
// cub::DeviceReduce::Sum, against the measured device-to-device copy
// bandwidth. The input is small integers, so every variant's sum is exact
// in any order of addition and must equal the CPU's before it is timed.
//
//   lesson04_bench [output.csv]
#include <reduce.hpp>

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

}  // namespace

int main(int argc, char** argv) {
    const std::string csv = argc > 1 ? argv[1] : "lesson04_bench.csv";
    const int n = 1 << 26;
    const double bytes = static_cast<double>(n) * sizeof(double);  // every element read once

    course::Bench bench("04", "sum of 2^26 doubles: shared-memory tree, one atomicAdd per block");
    const int sets = bench.rotation_sets(static_cast<std::size_t>(n) * sizeof(double));
    // Integers 0..1000: every partial sum is an integer below 2^53, so the
    // sum is exact whatever the order, and a right kernel gives it exactly.
    const std::vector<int> drawn = course::random_values<int>(static_cast<std::size_t>(n), 0, 1000, "bench");
    const std::vector<double> host(drawn.begin(), drawn.end());
    double expected = 0;
    for (const double v : host) expected += v;
    std::vector<course::DeviceBuffer<double>> values;
    for (int s = 0; s < sets; ++s) values.emplace_back(host);
    course::DeviceBuffer<double> result(1);

    const int sms = course::sm_count();
    const unsigned sm_blocks = static_cast<unsigned>(sms);

    std::size_t cub_bytes = 0;
    COURSE_CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, cub_bytes, values[0].data(), result.data(), n));
    course::DeviceBuffer<unsigned char> cub_temp(cub_bytes);

    struct Variant {
        std::string name;
        std::function<void(int)> run;  // one run on buffer set s, into `result`
        bool library;
    };
    std::vector<Variant> variants;
    const course::LaunchShape own = lesson04::sum_launch_shape(n);
    variants.push_back({course::implementation_label("launch_sum") + " " + course::describe(own), [&, own](int s) {
                            lesson04::launch_sum(own, values[s].data(), n, result.data());
                        }, false});
    const std::vector<std::pair<course::LaunchShape, std::string>> shapes{
        {{65536, 1024}, " (one thread per element)"},
        {{16384, 256}, " (four elements per thread)"},
        {{1024, 256}, ""},
        {{128, 256}, ""},
        {{sm_blocks * 4, 256}, " (SMs x 4 x 256)"},
        {{sm_blocks * 8, 512}, " (SMs x 8 x 512)"},
    };
    for (const auto& [shape, note] : shapes) {
        variants.push_back({"launch_sum " + course::describe(shape) + note, [&, shape](int s) {
                                lesson04::launch_sum(shape, values[s].data(), n, result.data());
                            }, false});
    }
    variants.push_back({"cub::DeviceReduce::Sum", [&](int s) {
                            COURSE_CUDA_CHECK(cub::DeviceReduce::Sum(cub_temp.data(), cub_bytes, values[s].data(),
                                                                     result.data(), n));
                        }, true});

    std::printf("CPU: sum %.1f\n", expected);
    for (const Variant& v : variants) {
        const auto check = [&]() -> std::string {
            result.poison();
            v.run(0);
            COURSE_CUDA_CHECK(cudaGetLastError());
            const double got = result.download()[0];
            if (got == expected) return "";
            return "wrong sum: " + std::to_string(got) + ", expected " + std::to_string(expected);
        };
        bench.add_checked(v.name, v.library, check, v.run, bytes);
    }
    bench.report(csv);
    return 0;
}
