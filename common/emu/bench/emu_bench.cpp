// Emulator benchmark: host time per launch (median of repeated runs) of the
// three kernels issue #3 sets targets for, fiber switches per second, and
// the worker count. CPU times of the emulator, never GPU times.
//
//   course_emu_bench [repetitions]
#include "bench_kernels.hpp"

#include <course/cuda_check.hpp>
#include <course/device_buffer.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

namespace {

double median_ms(int repetitions, const std::function<void()>& launch) {
    launch();  // warm-up: stacks and worker threads
    COURSE_LAUNCH_CHECK();
    std::vector<double> times;
    for (int r = 0; r < repetitions; ++r) {
        const auto start = std::chrono::steady_clock::now();
        launch();
        COURSE_LAUNCH_CHECK();  // synchronises before the clock stops
        times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    const int repetitions = argc > 1 ? std::atoi(argv[1]) : 21;

    const int n_saxpy = 1 << 16;
    course::DeviceBuffer<float> x(std::vector<float>(n_saxpy, 1.0f));
    course::DeviceBuffer<float> y(std::vector<float>(n_saxpy, 2.0f));
    const double saxpy_ms = median_ms(repetitions, [&] { emu_bench::launch_saxpy(n_saxpy, 2.0f, x.data(), y.data()); });

    const int n_reduce = 1 << 16;
    course::DeviceBuffer<double> in(std::vector<double>(n_reduce, 0.5));
    course::DeviceBuffer<double> total(std::vector<double>{0.0});
    const unsigned long long switches_before = course_emu::context_switches();
    const auto reduce_start = std::chrono::steady_clock::now();
    const double reduce_ms = median_ms(repetitions, [&] { emu_bench::launch_reduce(in.data(), n_reduce, total.data()); });
    const double reduce_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - reduce_start).count();
    const double switches_per_second =
        static_cast<double>(course_emu::context_switches() - switches_before) / reduce_seconds;

    const int side = 128;
    course::DeviceBuffer<float> matrix(std::vector<float>(side * side, 1.0f));
    course::DeviceBuffer<float> transposed(side * side);
    const double transpose_ms =
        median_ms(repetitions, [&] { emu_bench::launch_transpose(matrix.data(), transposed.data(), side, side); });

    std::printf("course emulator benchmark (host time per launch, median of %d)\n", repetitions);
    std::printf("  %-58s %9s %9s\n", "kernel", "ms", "target");
    std::printf("  %-58s %9.3f %9s\n", "SAXPY, 2^16 floats, <<<64,256>>>, grid-stride", saxpy_ms, "<= 4");
    std::printf("  %-58s %9.3f %9s\n", "tree reduction, 2^16 doubles, <<<16,256>>>, atomicAdd", reduce_ms, "<= 8");
    std::printf("  %-58s %9.3f %9s\n", "transpose 128x128 floats, 16x16(+1) shared tile", transpose_ms, "<= 10");
    std::printf("  fiber switches per second (reduction): %.3g\n", switches_per_second);
    return 0;
}
