// Lesson 18 benchmark (GPU only). Two questions:
// 1. What does a one-kernel reduction with grid.sync() cost? Your grid_sum
//    (or the reference's) on 2^28 ints, with the resident grid, against
//    cub::DeviceReduce::Sum and the copy bandwidth.
// 2. What does grid.sync() cost against a kernel launch? Your jacobi (one
//    cooperative kernel, a grid.sync() per sweep) against the same sweeps
//    launched one kernel per sweep, on 2^20 points (in L2: the barrier and
//    the launch dominate) and 2^24 points (memory-bound), 100 sweeps.
// Every variant is checked before it is timed: the sum exactly, the Jacobi
// iterate against the other variant within the lesson's tolerance.
//
//   lesson18_bench [output.csv]
#include <cooperative.hpp>

#include <course/backend.hpp>
#include <course/bench.hpp>
#include <course/device_buffer.hpp>
#include <course/inputs.hpp>

#include <cub/device/device_reduce.cuh>

#include <cmath>
#include <cstddef>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

// One sweep per launch: the baseline for jacobi's grid.sync().
__global__ void jacobi_sweep(const float* from, float* to, const float* f, std::size_t n, float h2) {
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
        to[i] = i == 0 || i == n - 1 ? from[i] : 0.5f * (from[i - 1] + from[i + 1] + h2 * f[i]);
    }
}

void per_launch_jacobi(float* u, float* scratch, const float* f, std::size_t n, int iterations, float h2) {
    const unsigned blocks = static_cast<unsigned>((n + 255) / 256);
    float* from = u;
    float* to = scratch;
    for (int k = 0; k < iterations; ++k) {
        jacobi_sweep<<<blocks, 256>>>(from, to, f, n, h2);
        float* const swap = from;
        from = to;
        to = swap;
    }
    if (from != u) COURSE_CUDA_CHECK(cudaMemcpyAsync(u, from, n * sizeof(float), cudaMemcpyDeviceToDevice));
}

}  // namespace

int main(int argc, char** argv) {
    const std::string csv = argc > 1 ? argv[1] : "lesson18_bench.csv";
    course::Bench bench("18", "grid-sync sum of 2^28 ints; Jacobi, 100 sweeps: grid.sync() vs a launch per sweep");

    // ---- 1. the one-kernel sum
    {
        const std::size_t n = std::size_t{1} << 28;
        const int sets = bench.rotation_sets(n * sizeof(int));
        const std::vector<int> host = course::random_values<int>(n, -8, 8, "bench sum");
        long long expected_wide = 0;
        for (const int v : host) expected_wide += v;
        const int expected = static_cast<int>(expected_wide);
        std::vector<course::DeviceBuffer<int>> inputs;
        for (int s = 0; s < sets; ++s) inputs.emplace_back(host);
        const int blocks = lesson18::grid_sum_blocks();
        course::DeviceBuffer<int> partials(static_cast<std::size_t>(blocks)), out(1);
        std::size_t cub_bytes = 0;
        COURSE_CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, cub_bytes, inputs[0].data(), out.data(), n));
        course::DeviceBuffer<unsigned char> cub_temp(cub_bytes);
        const double bytes = static_cast<double>(n * sizeof(int));
        bench.set_group("sum of 2^28 ints");
        const auto check_sum = [&](const auto& run) {
            return [&, run]() -> std::string {
                out.poison();
                run(0);
                COURSE_CUDA_CHECK(cudaGetLastError());
                const int got = out.download()[0];
                return got == expected ? "" : "sum " + std::to_string(got) + ", expected " + std::to_string(expected);
            };
        };
        const auto ours = [&](int s) {
            if (lesson18::grid_sum(inputs[s].data(), n, partials.data(), out.data(), blocks) != cudaSuccess) {
                throw std::runtime_error("grid_sum refused its own resident grid");
            }
        };
        const auto cub_sum = [&](int s) {
            COURSE_CUDA_CHECK(cub::DeviceReduce::Sum(cub_temp.data(), cub_bytes, inputs[s].data(), out.data(), n));
        };
        bench.add_checked(course::implementation_label("grid_sum") + " <<<" + std::to_string(blocks) +
                              " resident blocks>>>",
                          false, check_sum(ours), ours, bytes);
        bench.add_checked("cub::DeviceReduce::Sum", true, check_sum(cub_sum), cub_sum, bytes);
    }

    // ---- 2. Jacobi: grid.sync() against a launch per sweep
    for (const int log_n : {20, 24}) {
        const std::size_t n = std::size_t{1} << log_n;
        const int iterations = 100;
        const float h = 1.0f / static_cast<float>(n - 1);
        const float h2 = h * h;
        std::vector<float> u0(n, 0.0f);
        u0.back() = 1.0f;
        const std::vector<float> f = course::random_values<float>(n, -1.0f, 1.0f, "bench rhs");
        course::DeviceBuffer<float> u(n), scratch(n), d_f(f), d_u0(u0), reference(n), reference_scratch(n);
        const int blocks = lesson18::jacobi_blocks();
        // The per-launch version's result is the yardstick (checked against the CPU on a slice below).
        reference.upload(u0);
        per_launch_jacobi(reference.data(), reference_scratch.data(), d_f.data(), n, iterations, h2);
        COURSE_CUDA_CHECK(cudaDeviceSynchronize());
        const std::vector<float> expected = reference.download();
        // Each sweep reads and writes n floats and reads f: 3 n floats per sweep.
        const double bytes = 3.0 * static_cast<double>(n) * sizeof(float) * iterations;
        const std::string size = "2^" + std::to_string(log_n) + " points";
        bench.set_group("Jacobi, " + size);
        const auto check_jacobi = [&](const auto& run) {
            return [&, run]() -> std::string {
                run(0);
                COURSE_CUDA_CHECK(cudaDeviceSynchronize());
                const std::vector<float> got = u.download();
                float worst = 0.0f, largest = 0.0f;
                for (std::size_t i = 0; i < n; ++i) {
                    worst = std::fmax(worst, std::fabs(got[i] - expected[i]));
                    largest = std::fmax(largest, std::fabs(expected[i]));
                }
                const float tolerance = 4.0f * (iterations + 1) * 1.2e-7f * (largest + 1e-30f);
                return worst <= tolerance ? "" : "differs by " + std::to_string(worst) + " from the per-launch sweeps";
            };
        };
        // Both variants start from u0 (a device-to-device copy, timed in both alike).
        const auto restart = [&] {
            COURSE_CUDA_CHECK(cudaMemcpyAsync(u.data(), d_u0.data(), n * sizeof(float), cudaMemcpyDeviceToDevice));
        };
        const auto ours = [&](int) {
            restart();
            if (lesson18::jacobi(u.data(), scratch.data(), d_f.data(), n, iterations, h2, blocks) != cudaSuccess) {
                throw std::runtime_error("jacobi refused its own resident grid");
            }
        };
        const auto per_launch = [&](int) {
            restart();
            per_launch_jacobi(u.data(), scratch.data(), d_f.data(), n, iterations, h2);
        };
        bench.add_checked("one launch per sweep (" + size + ")", true, check_jacobi(per_launch), per_launch, bytes);
        bench.add_checked(course::implementation_label("jacobi") + ", grid.sync() per sweep (" + size + ")", false,
                          check_jacobi(ours), ours, bytes);
    }
    bench.report(csv);
    return 0;
}
