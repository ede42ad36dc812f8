// Cooperative groups on the emulator: tiles and cg::reduce, coalesced and
// labeled groups, and cooperative launches with grid.sync(): the results a
// GPU gives, the residency limit, and a report for each misuse.
#include "cooperative_kernels.hpp"

#include <course/catch.hpp>
#include <course/cuda_check.hpp>
#include <course/device_buffer.hpp>
#include <course/inputs.hpp>
#include <course/schedules.hpp>

#include <numeric>
#include <string>
#include <vector>

namespace {

struct ResetDevice {
    ~ResetDevice() { (void)cudaDeviceReset(); }
};

// The fault report of a launch expected to fault with `code`.
std::string fault_of(cudaError_t code) {
    REQUIRE(cudaDeviceSynchronize() == code);
    return course_emu::last_fault_report();
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string at_line(int line) { return "cooperative_kernels.cu:" + std::to_string(line) + ":"; }

// Blocks of `threads` that fit on the emulated device at once.
int resident_blocks(unsigned threads, std::size_t shared_bytes) {
    int per_sm = 0, sms = 0;
    COURSE_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &per_sm, emu_cooperative_test::grid_sum_kernel_address(), static_cast<int>(threads), shared_bytes));
    COURSE_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    return per_sm * sms;
}

}  // namespace

TEST_CASE("cg::reduce over tiles of every size sums each tile, with its meta-group rank", "[emu][cg]") {
    const unsigned tile = GENERATE(1u, 2u, 4u, 8u, 16u, 32u);
    const unsigned blocks = 3, threads = 96;
    CAPTURE(tile);
    const std::vector<int> in = course::random_values<int>(blocks * threads, -50, 50, "tiles");
    course::for_each_schedule([&] {
        course::DeviceBuffer<int> d_in(in), out(blocks * threads / tile), meta(blocks * threads / tile);
        emu_cooperative_test::launch_tile_sums(d_in.data(), out.data(), meta.data(), tile, blocks, threads);
        COURSE_LAUNCH_CHECK();
        const std::vector<int> sums = out.download(), metas = meta.download();
        for (unsigned t = 0; t < sums.size(); ++t) {
            CAPTURE(t);
            REQUIRE(sums[t] == std::accumulate(in.begin() + t * tile, in.begin() + (t + 1) * tile, 0));
            REQUIRE(metas[t] == static_cast<int>((threads / tile) * 1000 + t % (threads / tile)));
        }
    });
}

TEST_CASE("tile shuffles, ballot and match_any work within tiles of 8", "[emu][cg]") {
    const unsigned threads = 64;
    std::vector<int> in(threads);
    for (unsigned i = 0; i < threads; ++i) in[i] = static_cast<int>((i * 7) % 11);
    course::DeviceBuffer<int> d_in(in), out(5 * threads);
    emu_cooperative_test::launch_tile_collectives(d_in.data(), out.data(), threads);
    COURSE_LAUNCH_CHECK();
    const std::vector<int> got = out.download();
    for (unsigned t = 0; t < threads; ++t) {
        CAPTURE(t);
        const unsigned base = t / 8 * 8, rank = t % 8;
        unsigned ballot = 0, match = 0;
        for (unsigned r = 0; r < 8; ++r) {
            if (in[base + r] % 2 != 0) ballot |= 1u << r;
            if (in[base + r] / 2 == in[t] / 2) match |= 1u << r;
        }
        REQUIRE(got[5 * t + 0] == in[base + 2]);
        REQUIRE(got[5 * t + 1] == (rank < 7 ? in[t + 1] : in[t]));
        REQUIRE(got[5 * t + 2] == (rank > 0 ? in[t - 1] : in[t]));
        REQUIRE(static_cast<unsigned>(got[5 * t + 3]) == ballot);
        REQUIRE(static_cast<unsigned>(got[5 * t + 4]) == match);
    }
}

TEST_CASE("coalesced_threads() in a branch groups exactly the lanes that took it", "[emu][cg]") {
    const unsigned threads = GENERATE(32u, 70u);
    CAPTURE(threads);
    course::for_each_schedule([&] {
        course::DeviceBuffer<int> out(threads), sums(threads);
        emu_cooperative_test::launch_coalesced_branch(out.data(), sums.data(), threads);
        COURSE_LAUNCH_CHECK();
        const std::vector<int> got = out.download(), got_sums = sums.download();
        for (unsigned t = 0; t < threads; ++t) {
            CAPTURE(t);
            if (t % 3 != 0) {
                REQUIRE(got[t] == -1);
                continue;
            }
            const unsigned warp = t / 32 * 32, end = std::min(threads, warp + 32);
            int size = 0, rank = 0, sum = 0;
            for (unsigned u = warp; u < end; ++u) {
                if (u % 3 != 0) continue;
                rank += u < t;
                ++size;
                sum += static_cast<int>(u);
            }
            REQUIRE(got[t] == size * 100 + rank);
            REQUIRE(got_sums[t] == sum);
        }
    });
}

TEST_CASE("labeled_partition of the coalesced threads aggregates atomics per label", "[emu][cg]") {
    const int n = GENERATE(1, 33, 1000);
    CAPTURE(n);
    const std::vector<int> labels = course::random_values<int>(static_cast<std::size_t>(n), 0, 4, "labels");
    std::vector<int> expected(5, 0);
    for (int l : labels) ++expected[static_cast<std::size_t>(l)];
    course::for_each_schedule([&] {
        course::DeviceBuffer<int> d_labels(labels), counts(std::vector<int>(5, 0));
        emu_cooperative_test::launch_aggregated_count(d_labels.data(), n, counts.data(), 3, 96);
        COURSE_LAUNCH_CHECK();
        REQUIRE(counts.download() == expected);
    });
}

TEST_CASE("a cooperative launch runs grid.sync() across every block, up to the resident limit", "[emu][cg][grid]") {
    ResetDevice reset;
    int attribute = 0;
    REQUIRE(cudaDeviceGetAttribute(&attribute, cudaDevAttrCooperativeLaunch, 0) == cudaSuccess);
    REQUIRE(attribute == 1);
    const unsigned threads = 256;
    const int resident = resident_blocks(threads, threads / 32 * sizeof(int));
    REQUIRE(resident == 64);  // 8 SMs x 8 blocks of 256 threads (64 warps per SM)
    const int n = 100003;
    const std::vector<int> in = course::random_values<int>(static_cast<std::size_t>(n), -9, 9, "grid sum");
    const int expected = std::accumulate(in.begin(), in.end(), 0);
    const unsigned blocks = GENERATE_COPY(1u, 5u, static_cast<unsigned>(resident));
    CAPTURE(blocks);
    course::for_each_schedule([&] {
        course::DeviceBuffer<int> d_in(in), partials(static_cast<std::size_t>(resident) + 1), out(1);
        REQUIRE(emu_cooperative_test::launch_grid_sum(d_in.data(), n, partials.data(), out.data(), blocks, threads) ==
                cudaSuccess);
        COURSE_LAUNCH_CHECK();
        REQUIRE(out.download()[0] == expected);
    });
    SECTION("one block more than fits resident is refused, and nothing runs") {
        course::DeviceBuffer<int> d_in(in), partials(static_cast<std::size_t>(resident) + 1), out(std::vector<int>{7});
        REQUIRE(emu_cooperative_test::launch_grid_sum(d_in.data(), n, partials.data(), out.data(),
                                                     static_cast<unsigned>(resident) + 1,
                                                     threads) == cudaErrorCooperativeLaunchTooLarge);
        REQUIRE(cudaGetLastError() == cudaErrorCooperativeLaunchTooLarge);
        REQUIRE(cudaGetLastError() == cudaSuccess);  // not sticky: the device goes on
        REQUIRE(out.download()[0] == 7);
    }
}

TEST_CASE("without grid.sync() a block reads a neighbour's slot before it is written on some schedule",
          "[emu][cg][grid][planted]") {
    const unsigned blocks = 6;
    bool wrong_somewhere = false;
    course::for_each_schedule([&] {
        for (const bool skip : {false, true}) {
            course::DeviceBuffer<int> slots(std::vector<int>(blocks, -1)), seen(blocks);
            REQUIRE(emu_cooperative_test::launch_neighbour_exchange(slots.data(), seen.data(), blocks, skip) ==
                    cudaSuccess);
            COURSE_LAUNCH_CHECK();
            const std::vector<int> got = seen.download();
            for (unsigned b = 0; b < blocks; ++b) {
                const bool right = got[b] == static_cast<int>((b + 1) % blocks);
                if (!skip) REQUIRE(right);
                wrong_somewhere = wrong_somewhere || !right;
            }
        }
    });
    REQUIRE(wrong_somewhere);
}

TEST_CASE("grid.sync() in a kernel launched with <<<>>> is reported with its line", "[emu][cg][grid][faults]") {
    ResetDevice reset;
    course::DeviceBuffer<int> out(64);
    emu_cooperative_test::launch_grid_sync_without_cooperative_launch(out.data());
    const std::string report = fault_of(cudaErrorLaunchFailure);
    CAPTURE(report);
    REQUIRE(contains(report, at_line(emu_cooperative_test::grid_sync_without_cooperative_launch_line())));
    REQUIRE(contains(report, "grid.sync() needs a cooperative launch"));
}

TEST_CASE("a grid.sync() that one block never reaches is reported as a deadlock with its line",
          "[emu][cg][grid][faults]") {
    ResetDevice reset;
    course::DeviceBuffer<int> out(4 * 32);
    (void)emu_cooperative_test::launch_grid_sync_skipped_by_block_zero(out.data(), 4);
    const std::string report = fault_of(cudaErrorLaunchFailure);
    CAPTURE(report);
    REQUIRE(contains(report, at_line(emu_cooperative_test::grid_sync_skipped_line())));
    REQUIRE(contains(report, "deadlock at grid.sync()"));
    REQUIRE(contains(report, "block (0,0,0)"));
}

TEST_CASE("this_grid().is_valid() is true only in a cooperative launch", "[emu][cg][grid]") {
    course::DeviceBuffer<int> out(std::vector<int>{-1, -1});
    emu_cooperative_test::launch_grid_is_valid(out.data());
    COURSE_LAUNCH_CHECK();
    REQUIRE(out.download() == std::vector<int>{0, 1});
}

TEST_CASE("a tile.sync() one lane of the tile skips is reported with its line", "[emu][cg][faults]") {
    ResetDevice reset;
    course::DeviceBuffer<int> out(32);
    emu_cooperative_test::launch_tile_sync_skipped_by_one_lane(out.data());
    const std::string report = fault_of(cudaErrorLaunchFailure);
    CAPTURE(report);
    REQUIRE(contains(report, at_line(emu_cooperative_test::tile_sync_skipped_line())));
    REQUIRE(contains(report, "__syncwarp"));
}

TEST_CASE("a block that never reaches grid.sync() while the others wait is stopped, not left hanging",
          "[emu][cg][grid][faults]") {
    ResetDevice reset;
    course_emu::set_time_budget(0.5);
    course::DeviceBuffer<int> never_set(std::vector<int>{0}), out(4);
    (void)emu_cooperative_test::launch_block_stuck_before_grid_sync(never_set.data(), out.data(), 4);
    const cudaError_t code = cudaDeviceSynchronize();
    course_emu::set_time_budget(10);
    const std::string report = course_emu::last_fault_report();
    CAPTURE(report);
    // The time budget stops it (or a spin detector, where the emulator has one, reports the spin).
    REQUIRE((code == cudaErrorLaunchTimeout || code == cudaErrorLaunchFailure));
    REQUIRE(contains(report, "block_stuck_before_grid_sync"));
}
