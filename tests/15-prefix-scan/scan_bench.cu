// Lesson 15 benchmark (GPU only): the exclusive scan of 2^28 ints (and of
// 2^28 floats): your single-pass scan (or the reference's) and your
// reduce-then-scan against cub::DeviceScan::ExclusiveSum, and the measured
// device-to-device copy bandwidth. A scan reads each element once and writes
// it once, as a copy does, so the copy is its ceiling. Every variant's
// output is checked against the CPU's scan before it is timed.
//
//   lesson15_bench [output.csv]
#include <scan.hpp>

#include "cpu_reference.hpp"

#include <course/backend.hpp>
#include <course/bench.hpp>
#include <course/device_buffer.hpp>
#include <course/inputs.hpp>

#include <cub/device/device_scan.cuh>

#include <cmath>
#include <cstddef>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace {

// One element type's inputs, outputs and checks.
template <class T>
struct Case {
    std::vector<course::DeviceBuffer<T>> inputs;
    course::DeviceBuffer<T> out;
    std::function<std::string(const std::vector<T>&)> verify;  // "" when right
};

template <class T>
void add_variants(course::Bench& bench, Case<T>& c, std::size_t n, const std::string& type) {
    course::DeviceBuffer<unsigned char> workspace(lesson15::scan_workspace_bytes(n));
    std::size_t cub_bytes = 0;
    COURSE_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, cub_bytes, c.inputs[0].data(), c.out.data(),
                                                    static_cast<int>(n)));
    course::DeviceBuffer<unsigned char> cub_temp(cub_bytes);
    const double bytes = 2.0 * static_cast<double>(n) * sizeof(T);  // each element read once and written once

    struct Variant {
        std::string name;
        std::function<void(int)> run;
        bool library;
    };
    const std::string suffix = " (" + type + ")";
    const std::vector<Variant> variants = {
        {course::implementation_label("exclusive_scan_single_pass") + suffix,
         [&](int s) { lesson15::exclusive_scan_single_pass(c.inputs[s].data(), c.out.data(), n, workspace.data()); },
         false},
        {course::implementation_label("exclusive_scan_reduce_then_scan") + suffix,
         [&](int s) {
             lesson15::exclusive_scan_reduce_then_scan(c.inputs[s].data(), c.out.data(), n, workspace.data());
         },
         false},
        {"cub::DeviceScan::ExclusiveSum" + suffix,
         [&](int s) {
             COURSE_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(cub_temp.data(), cub_bytes, c.inputs[s].data(),
                                                             c.out.data(), static_cast<int>(n)));
         },
         true},
    };
    bench.set_group(type);
    for (const Variant& v : variants) {
        const auto check = [&]() -> std::string {
            c.out.poison();
            v.run(0);
            COURSE_CUDA_CHECK(cudaGetLastError());
            return c.verify(c.out.download());
        };
        bench.add_checked(v.name, v.library, check, v.run, bytes);
    }
    std::printf("%s: checked against the CPU's scan\n", type.c_str());
}

}  // namespace

int main(int argc, char** argv) {
    const std::string csv = argc > 1 ? argv[1] : "lesson15_bench.csv";
    const std::size_t n = std::size_t{1} << 28;
    course::Bench bench("15", "exclusive scan of 2^28 ints and of 2^28 floats");
    const int sets = bench.rotation_sets(n * sizeof(int));

    {
        const std::vector<int> host = course::random_values<int>(n, -1000, 1000, "bench ints");
        const std::vector<int> expected =
            lesson15_reference::exclusive_scan(host, std::numeric_limits<std::size_t>::max());
        Case<int> ints{{}, course::DeviceBuffer<int>(n), [&](const std::vector<int>& got) -> std::string {
                           for (std::size_t i = 0; i < n; ++i) {
                               if (got[i] != expected[i]) {
                                   return "out[" + std::to_string(i) + "] = " + std::to_string(got[i]) +
                                          ", expected " + std::to_string(expected[i]);
                               }
                           }
                           return "";
                       }};
        for (int s = 0; s < sets; ++s) ints.inputs.emplace_back(host);
        add_variants(bench, ints, n, "int");
    }
    {
        const std::vector<float> host = course::random_values<float>(n, 0.0f, 1.0f, "bench floats");
        const lesson15_reference::FloatPrefixes exact = lesson15_reference::exclusive_scan_accurate(host);
        Case<float> floats{{}, course::DeviceBuffer<float>(n), [&](const std::vector<float>& got) -> std::string {
                               for (std::size_t i = 0; i < n; ++i) {
                                   const long double error = std::fabs(static_cast<long double>(got[i]) - exact.sum[i]);
                                   if (!(error <= lesson15_reference::float_scan_tolerance(n, exact.magnitude[i]))) {
                                       return "out[" + std::to_string(i) + "] = " + std::to_string(got[i]) +
                                              ", expected " + std::to_string(static_cast<double>(exact.sum[i]));
                                   }
                               }
                               return "";
                           }};
        for (int s = 0; s < sets; ++s) floats.inputs.emplace_back(host);
        add_variants(bench, floats, n, "float");
    }
    bench.report(csv);
    return 0;
}
