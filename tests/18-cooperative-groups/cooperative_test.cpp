// Lesson 18 tests: tile sums with cg::reduce at every tile size, warp-
// aggregated label counts (with, on the emulator, the number of atomics
// counted), and the two cooperative kernels: the grid size they report
// against the device's residency (exactly: that many blocks launch, one more
// is refused with cudaErrorCooperativeLaunchTooLarge), a one-kernel sum and
// Jacobi sweeps against the CPU, with 1, a few and the resident number of
// blocks, at the edge sizes and past the grid, under every emulator
// schedule (or repeatedly on a GPU).
#include <cooperative.hpp>

#include "cpu_reference.hpp"

#include <course/backend.hpp>
#include <course/catch.hpp>
#include <course/compare.hpp>
#include <course/cuda_check.hpp>
#include <course/device_buffer.hpp>
#include <course/inputs.hpp>
#include <course/schedules.hpp>

#include <cmath>
#include <cstddef>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using lesson18::kBlockThreads;

// One more element than a full wave of blocks of kBlockThreads threads
// (2048 threads per SM) has threads: only a grid-stride loop covers it.
std::size_t past_the_grid() { return static_cast<std::size_t>(course::sm_count()) * 2048 + 1; }

std::vector<std::size_t> sizes_with_large() {
    std::vector<std::size_t> sizes(course::edge_sizes().begin(), course::edge_sizes().end());
    sizes.push_back(past_the_grid());
    return sizes;
}

// The garbage the tests put in outputs the launcher must overwrite or zero.
constexpr int kGarbage = 0x5EED0BAD;

// A cooperative launcher's status as a test failure, when it is not success.
void require_launched(cudaError_t status, const std::string& call, int blocks, int resident) {
    if (status == cudaSuccess) return;
    std::ostringstream out;
    out << call << " with " << blocks << " blocks returned " << cudaGetErrorName(status);
    if (status == cudaErrorCooperativeLaunchTooLarge) {
        out << ", but its own resident-grid function says " << resident
            << " blocks fit: compute it as cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, your_kernel, "
               "kBlockThreads, 0) x cudaDevAttrMultiProcessorCount, for the kernel you launch";
    }
    FAIL(out.str());
}

// Checks the resident grid size a launcher reports: `resident` blocks must
// launch, and resident + 1 must be refused, with the error cleared.
template <class Launch>
void check_resident_grid(const char* name, int resident, Launch launch) {
    INFO(name << "_blocks() returned " << resident << " (the device has " << course::sm_count() << " SMs)");
    if (resident < course::sm_count()) {
        FAIL(name << "_blocks() is below the SM count: every SM holds at least one block of " << kBlockThreads
                  << " threads; is the occupancy computed (cudaOccupancyMaxActiveBlocksPerMultiprocessor) and "
                     "multiplied by the number of SMs?");
    }
    require_launched(launch(resident), name, resident, resident);
    COURSE_LAUNCH_CHECK();
    const cudaError_t too_many = launch(resident + 1);
    if (too_many == cudaSuccess) {
        FAIL(name << " launched " << resident + 1 << " blocks cooperatively, one more than " << name
                  << "_blocks() says fit: the resident grid is larger than reported (occupancy per SM times the SM "
                     "count, both for this kernel and kBlockThreads?)");
    }
    REQUIRE(too_many == cudaErrorCooperativeLaunchTooLarge);
    INFO("the launcher must clear the refused launch's error (cudaGetLastError) before returning");
    REQUIRE(cudaGetLastError() == cudaSuccess);
}

}  // namespace

TEST_CASE("tile_sums sums each tile of 4, 8, 16 or 32 elements with cg::reduce, the last tile partial", "[18]") {
    const unsigned tile = GENERATE(4u, 8u, 16u, 32u);
    for (const std::size_t n : sizes_with_large()) {
        CAPTURE(tile, n, course::seed());
        const std::vector<int> in = course::random_values<int>(n, -1000, 1000, "tile input");
        const std::vector<int> expected = lesson18::reference::tile_sums(in, tile);
        course::for_each_schedule([&] {
            course::DeviceBuffer<int> d_in(in), out(expected.size() + 1);
            out.poison();
            lesson18::tile_sums(n == 0 ? nullptr : d_in.data(), n, tile, out.data());
            COURSE_LAUNCH_CHECK();
            std::vector<int> got = out.download();
            const int guard = got.back();
            got.pop_back();
            course::CompareContext<int> ctx;
            ctx.name = "out (tile sums)";
            COURSE_REQUIRE_MATCH(course::compare_exact(expected, got, ctx));
            INFO("out[" << expected.size() << "], past the last tile, was written: one tile too many?");
            REQUIRE(guard == course::poison_value<int>());
        });
    }
    if (tile == 32) REQUIRE_THROWS_AS(lesson18::tile_sums(nullptr, 0, 3, nullptr), std::invalid_argument);
}

TEST_CASE("count_labels counts with one atomic per group of equal labels in a warp", "[18]") {
    const int num_labels = GENERATE(1, 5, 1000);
    for (const std::size_t n : sizes_with_large()) {
        CAPTURE(num_labels, n, course::seed());
        const std::vector<int> labels = course::random_values<int>(n, 0, num_labels - 1, "labels");
        const std::vector<int> expected = lesson18::reference::count_labels(labels, num_labels);
        course::for_each_schedule([&] {
            course::DeviceBuffer<int> d_labels(labels),
                counts(std::vector<int>(static_cast<std::size_t>(num_labels), kGarbage));
            lesson18::count_labels(n == 0 ? nullptr : d_labels.data(), n, num_labels, counts.data());
            COURSE_LAUNCH_CHECK();
            course::CompareContext<int> ctx;
            ctx.name = "counts";
            COURSE_REQUIRE_MATCH(course::compare_exact(expected, counts.download(), ctx));
#ifdef __CUDACC_EMULATOR__
            if (num_labels == 1 && n > 0) {
                // All labels equal: one group per warp and step, so one atomic per 32 elements
                // (plus one per warp for its last, partial step).
                const unsigned long long atomics = course_emu::last_launch_atomic_counts().total;
                const unsigned long long warps_of_grid = past_the_grid() / 32 + 1;
                INFO("atomics: " << atomics);
                if (atomics > n / 32 + warps_of_grid) {
                    FAIL("count_labels did " << atomics << " atomics for " << n
                                             << " equal labels: one per element? Only the rank-0 lane of each "
                                                "labeled_partition group should add the group's size");
                }
            }
#endif
        });
    }
    REQUIRE_THROWS_AS(lesson18::count_labels(nullptr, 0, 0, nullptr), std::invalid_argument);
}

TEST_CASE("grid_sum_blocks is exactly the resident grid: that many blocks launch, one more is refused", "[18]") {
    const int resident = lesson18::grid_sum_blocks();
    course::DeviceBuffer<int> in(std::vector<int>(1000, 1)), partials(static_cast<std::size_t>(resident > 0 ? resident + 1 : 1)),
        out(1);
    check_resident_grid("grid_sum", resident, [&](int blocks) {
        return lesson18::grid_sum(in.data(), 1000, partials.data(), out.data(), blocks);
    });
    REQUIRE(out.download()[0] == 1000);
}

TEST_CASE("grid_sum sums any n in one cooperative kernel with 1, a few or all resident blocks", "[18]") {
    const int resident = lesson18::grid_sum_blocks();
    REQUIRE(resident >= 1);
    const std::vector<int> grids{1, 3, resident};
    for (const std::size_t n : sizes_with_large()) {
        const std::vector<int> in = course::random_values<int>(n, -100, 100, "sum input");
        const int expected = lesson18::reference::sum(in);
        for (const int blocks : grids) {
            // The resident grid (thousands of threads, all waiting at grid.sync() on the
            // emulator) for the two largest sizes only: it is slow to emulate.
            if (blocks == resident && n < 1009) continue;
            CAPTURE(n, blocks, course::seed());
            course::for_each_schedule([&] {
                course::DeviceBuffer<int> d_in(in), partials(static_cast<std::size_t>(resident)),
                    out(std::vector<int>{kGarbage});
                require_launched(lesson18::grid_sum(n == 0 ? nullptr : d_in.data(), n, partials.data(), out.data(),
                                                    blocks),
                                 "grid_sum", blocks, resident);
                COURSE_LAUNCH_CHECK();
                const int got = out.download()[0];
                if (got != expected) {
                    FAIL("grid_sum returned " << got << ", expected " << expected
                                              << (got == kGarbage ? ": *out was never written" : "")
                                              << (n > static_cast<std::size_t>(blocks) * kBlockThreads
                                                      ? " (n is larger than the grid's threads: does every thread "
                                                        "loop over its grid-stride share?)"
                                                      : ""));
                }
            });
        }
    }
}

TEST_CASE("jacobi runs the sweeps in one cooperative kernel and matches the CPU's Jacobi", "[18]") {
    const int resident = lesson18::jacobi_blocks();
    const std::size_t n_resident = 4099;
    {
        course::DeviceBuffer<float> u(std::vector<float>(n_resident, 0.0f)), scratch(n_resident),
            f(std::vector<float>(n_resident, 1.0f));
        check_resident_grid("jacobi", resident, [&](int blocks) {
            return lesson18::jacobi(u.data(), scratch.data(), f.data(), n_resident, 2, 1e-3f, blocks);
        });
    }
    const std::vector<int> grids{1, 2, 5};
    const std::vector<int> sweeps{0, 1, 2, 7};
    for (const std::size_t n : sizes_with_large()) {
        if (n > 1009 && n < past_the_grid()) continue;
        const float h = n > 1 ? 1.0f / static_cast<float>(n - 1) : 1.0f;
        std::vector<float> u0 = course::random_values<float>(n, -1.0f, 1.0f, "jacobi start");
        if (n > 0) u0.front() = 0.25f;
        if (n > 1) u0.back() = -0.5f;
        const std::vector<float> f = course::random_values<float>(n, -10.0f, 10.0f, "jacobi rhs");
        for (const int iterations : sweeps) {
            const std::vector<float> expected = lesson18::reference::jacobi(u0, f, iterations, h * h);
            const float tolerance = lesson18::reference::jacobi_tolerance(expected, f, iterations, h * h);
            for (const int blocks : grids) {
                CAPTURE(n, iterations, blocks, course::seed());
                course::for_each_schedule([&] {
                    course::DeviceBuffer<float> u(u0), scratch(n), d_f(f);
                    scratch.poison();
                    require_launched(lesson18::jacobi(n == 0 ? nullptr : u.data(), n == 0 ? nullptr : scratch.data(),
                                                      n == 0 ? nullptr : d_f.data(), n, iterations, h * h, blocks),
                                     "jacobi", blocks, resident);
                    COURSE_LAUNCH_CHECK();
                    course::CompareContext<float> ctx;
                    ctx.name = "u after " + std::to_string(iterations) + " sweeps";
                    ctx.before = &u0;
                    ctx.hint_if_untouched = iterations % 2 == 1 ? "After an odd number of sweeps the last iterate "
                                                                  "is in scratch: is it copied back into u?"
                                                                : "";
                    INFO("where only some points differ, a sweep read neighbours of another sweep: a grid.sync() "
                         "after every sweep, and two buffers (a sweep must not write the array it reads)?");
                    COURSE_REQUIRE_MATCH(course::compare(
                        expected, u.download(),
                        [&](std::size_t, float e, float g) { return std::fabs(e - g) <= tolerance; }, ctx));
                });
            }
        }
    }
    // A long run on the resident grid: many grid.sync() in a row, and a solution near convergence.
    const std::size_t n = 2 * static_cast<std::size_t>(resident) * kBlockThreads + 3;
    const int iterations = course::kEmulator ? 30 : 2000;
    const float h = 1.0f / static_cast<float>(n - 1);
    std::vector<float> u0(n, 0.0f);
    u0.back() = 1.0f;
    const std::vector<float> f(n, 2.0f);
    const std::vector<float> expected = lesson18::reference::jacobi(u0, f, iterations, h * h);
    const float tolerance = lesson18::reference::jacobi_tolerance(expected, f, iterations, h * h);
    CAPTURE(n, iterations, resident);
    course::DeviceBuffer<float> u(u0), scratch(n), d_f(f);
    require_launched(lesson18::jacobi(u.data(), scratch.data(), d_f.data(), n, iterations, h * h, resident), "jacobi",
                     resident, resident);
    COURSE_LAUNCH_CHECK();
    course::CompareContext<float> ctx;
    ctx.name = "u after " + std::to_string(iterations) + " sweeps on the resident grid";
    COURSE_REQUIRE_MATCH(course::compare(
        expected, u.download(), [&](std::size_t, float e, float g) { return std::fabs(e - g) <= tolerance; }, ctx));
}
