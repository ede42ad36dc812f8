// The analysis mode against kernels whose numbers are known: a 32-way bank
// conflict and its padded fix, coalesced, strided and vector loads, planted
// races (shared and global), a read of unwritten shared memory, lanes that
// take another path. Every expected number is derived in the comment beside it.
#include "analysis_kernels.hpp"

#include <course/catch.hpp>
#include <course/cuda_check.hpp>
#include <course/device_buffer.hpp>

#include <course_emu/analysis.hpp>

#include <algorithm>
#include <iterator>
#include <vector>

namespace {

namespace analysis = course_emu::analysis;

template <class Launch>
analysis::Report analyse(Launch launch) {
    analysis::begin();
    launch();
    COURSE_LAUNCH_CHECK();
    return analysis::end();
}

}  // namespace

TEST_CASE("An unpadded 32 x 32 tile read by columns is a 32-way bank conflict, and the padded tile is conflict-free",
          "[analysis]") {
    const int n = 64;  // 2 x 2 blocks of 32 warps: 128 warp requests per instruction
    course::DeviceBuffer<float> in(std::vector<float>(n * n, 1.0f)), out(n * n);
    const bool padded = GENERATE(false, true);
    CAPTURE(padded);
    const auto report = analyse([&] { analysis_kernels::transpose_through_tile(in.data(), out.data(), n, padded); });
    INFO(report.text());
    const char* kernel = padded ? "tile_transpose<1>" : "tile_transpose<0>";
    const auto rows_written = report.shared_of(kernel, true);
    CHECK(rows_written.requests == 128);
    CHECK(rows_written.max_degree == 1);
    CHECK(rows_written.conflicts() == 0);
    const auto columns_read = report.shared_of(kernel, false);
    CHECK(columns_read.requests == 128);
    // A column of a 32-float-wide tile is 32 words in one bank: 32 wavefronts
    // where 1 suffices, 31 extra per request. With 33 floats per row, 32 banks.
    CHECK(columns_read.max_degree == (padded ? 1u : 32u));
    CHECK(columns_read.conflicts() == (padded ? 0u : 128u * 31u));
    // Rows of 32 floats, 128-byte aligned: 4 sectors per request both ways.
    const auto totals = report.totals(kernel);
    CHECK(totals.global_load_requests == 128);
    CHECK(totals.global_load_sectors == 512);
    CHECK(totals.global_store_requests == 128);
    CHECK(totals.global_store_sectors == 512);
    CHECK(report.races.empty());
    CHECK(report.uninitialised.empty());
}

TEST_CASE("Sectors per request: 4 for consecutive floats, 32 for a stride of 32 floats, 16 for float4", "[analysis]") {
    const int n = 1024;  // 4 blocks of 256 threads: 32 warps
    course::DeviceBuffer<float> in(std::vector<float>(n * 32, 1.0f)), out(n);
    SECTION("consecutive") {
        const auto report = analyse([&] { analysis_kernels::strided_copy(in.data(), out.data(), n, 1); });
        INFO(report.text());
        const auto loads = report.global_of("strided_copy_kernel", false);
        CHECK(loads.requests == 32);
        CHECK(loads.sectors == 32 * 4);
        CHECK(loads.ideal_sectors == 32 * 4);
    }
    SECTION("strided") {
        const auto report = analyse([&] { analysis_kernels::strided_copy(in.data(), out.data(), n, 32); });
        INFO(report.text());
        const auto loads = report.global_of("strided_copy_kernel", false);
        CHECK(loads.requests == 32);
        CHECK(loads.sectors == 32 * 32);     // every lane in a sector of its own
        CHECK(loads.ideal_sectors == 32 * 4);  // the 128 bytes asked for fit in 4
        const auto stores = report.global_of("strided_copy_kernel", true);
        CHECK(stores.sectors == 32 * 4);
    }
    SECTION("float4") {
        const auto report = analyse([&] { analysis_kernels::copy_float4(in.data(), out.data(), n / 4); });
        INFO(report.text());
        const auto loads = report.global_of("copy_float4_kernel", false);
        CHECK(loads.requests == 8);  // 256 threads, 8 warps, one 16-byte load each
        CHECK(loads.sectors == 8 * 16);
        CHECK(loads.ideal_sectors == 8 * 16);
    }
}

TEST_CASE("A shared value read without the barrier after its write is a race between those two lines",
          "[analysis]") {
    course::DeviceBuffer<int> out(128);
    SECTION("without the barrier") {
        const auto report = analyse([&] { analysis_kernels::broadcast_through_shared(out.data(), 128, false); });
        INFO(report.text());
        REQUIRE(report.races.size() == 1);
        const auto& race = report.races[0];
        CHECK(race.shared);
        CHECK(race.first.file == "analysis_kernels.cu");
        CHECK(race.first.line == 45);  // value = 42 by thread 0
        CHECK(race.second.line == 47);  // read by the others
        CHECK(race.first_writes);
        CHECK_FALSE(race.second_writes);
        CHECK(race.first_thread.x == 0);
        CHECK(race.second_thread.x == 1);
        CHECK(race.count == 2 * 63);  // 63 readers in each of 2 blocks
    }
    SECTION("with the barrier") {
        const auto report = analyse([&] { analysis_kernels::broadcast_through_shared(out.data(), 128, true); });
        INFO(report.text());
        CHECK(report.races.empty());
        CHECK(report.uninitialised.empty());
    }
}

TEST_CASE("Shared memory read before any thread wrote it is reported with its line", "[analysis]") {
    course::DeviceBuffer<float> out(64);
    const auto report = analyse([&] { analysis_kernels::read_unwritten_shared(out.data(), 64); });
    INFO(report.text());
    REQUIRE(report.uninitialised.size() == 1);
    CHECK(report.uninitialised[0].where.line == 56);
    CHECK(report.uninitialised[0].count == 64);
}

TEST_CASE("Threads of different blocks writing one global word race unless they use an atomic", "[analysis]") {
    course::DeviceBuffer<int> out(std::vector<int>{0});
    const bool atomically = GENERATE(false, true);
    CAPTURE(atomically);
    const auto report = analyse([&] { analysis_kernels::all_write_one(out.data(), 64, atomically); });
    INFO(report.text());
    if (atomically) {
        CHECK(report.races.empty());
    } else {
        REQUIRE(report.races.size() == 1);
        CHECK_FALSE(report.races[0].shared);
        CHECK(report.races[0].first_writes);
        CHECK(report.races[0].second_writes);
        CHECK(report.races[0].first.line == 63);
    }
}

TEST_CASE("Accesses made by only some lanes of a warp are counted as divergent", "[analysis]") {
    const int n = 256;
    course::DeviceBuffer<float> in(std::vector<float>(n, 1.0f)), out(n);
    const auto report = analyse([&] { analysis_kernels::odd_lanes_copy(in.data(), out.data(), n); });
    INFO(report.text());
    const auto loads = report.global_of("odd_lanes_copy_kernel", false);
    CHECK(loads.requests == 8);
    CHECK(loads.partial_requests == 8);
    CHECK(loads.sectors == 8 * 4);        // every other float of 128 bytes
    CHECK(loads.ideal_sectors == 8 * 2);  // 64 bytes asked for
}

TEST_CASE("Nothing is recorded outside an analysis, and begin/end can be repeated", "[analysis]") {
    const int n = 1024;
    course::DeviceBuffer<float> in(std::vector<float>(n, 1.0f)), out(n);
    analysis_kernels::strided_copy(in.data(), out.data(), n, 1);
    COURSE_LAUNCH_CHECK();
    const auto first = analyse([&] { analysis_kernels::strided_copy(in.data(), out.data(), n, 1); });
    const auto second = analyse([&] { analysis_kernels::strided_copy(in.data(), out.data(), n, 1); });
    CHECK(first.totals("strided_copy_kernel").launches == 1);
    CHECK(second.totals("strided_copy_kernel").global_load_requests == 32);
    CHECK(analysis::instrumented());
}

TEST_CASE("Global memory read before the host or a kernel wrote it is reported with its line", "[analysis]") {
    const bool uploaded = GENERATE(false, true);
    CAPTURE(uploaded);
    const auto report = analyse([&] {
        // Allocated while the analysis runs, so tracked from cudaMalloc on.
        course::DeviceBuffer<float> in(64);
        course::DeviceBuffer<float> out(64);
        if (uploaded) in.upload(std::vector<float>(64, 1.0f));
        analysis_kernels::strided_copy(in.data(), out.data(), 64, 1);
        COURSE_LAUNCH_CHECK();
        analysis_kernels::strided_copy(out.data(), in.data(), 64, 1);  // reads what the first launch wrote
        COURSE_LAUNCH_CHECK();
    });
    INFO(report.text());
    if (uploaded) {
        CHECK(report.uninitialised.empty());
    } else {
        REQUIRE(report.uninitialised.size() == 1);
        CHECK_FALSE(report.uninitialised[0].shared);
        CHECK(report.uninitialised[0].where.line == 27);  // `out[i] = in[i * stride]`
        CHECK(report.uninitialised[0].count == 64);       // the first launch's 64 reads; the second reads written data
        CHECK(report.text().find("read of uninitialised global memory") != std::string::npos);
    }
}

TEST_CASE("A branch on the lane's parity diverges in every warp, one on the warp's parity in none", "[analysis]") {
    const int n = 512;  // 4 blocks of 128 threads: 16 warps, one interval each (no barrier)
    course::DeviceBuffer<float> out(std::vector<float>(n, 0.0f));
    SECTION("threadIdx.x % 2") {
        const auto report = analyse([&] { analysis_kernels::branch_by_lane_or_warp(out.data(), n, false); });
        INFO(report.text());
        const auto in_if = report.divergence_at("branch_kernel", 80);  // the `if (odd)` body
        CHECK(in_if.warp_executions == 16);
        CHECK(in_if.divergent == 16);
        // One split per warp for each basic block the compiler makes of the
        // line: GCC 12 makes one, GCC 13 two.
        CHECK(in_if.splits >= 16);
        CHECK(in_if.splits % 16 == 0);
        CHECK(in_if.min_lanes == 16);  // the 16 odd lanes of each warp take it
        CHECK(in_if.max_lanes == 16);
        CHECK(in_if.warp_lanes == 32);
        // Nothing else diverges but, with Clang, the path that skips the body:
        // a block of its own on the `if` line, which the 16 even lanes take.
        const auto skip = report.divergence_at("branch_kernel", 79);
        if (skip.warp_executions != 0) {
            CHECK(skip.divergent == 16);
            CHECK(skip.min_lanes == 16);
            CHECK(skip.max_lanes == 16);
        }
        CHECK(report.totals("branch_kernel").divergent_splits == in_if.splits + skip.splits);
        CHECK(report.text().find("analysis_kernels.cu:80: divergent in 16 of 16 warp executions, 16 of 32 lanes take it") !=
              std::string::npos);
    }
    SECTION("threadIdx.x / 32 % 2") {
        const auto report = analyse([&] { analysis_kernels::branch_by_lane_or_warp(out.data(), n, true); });
        INFO(report.text());
        CHECK(report.divergence.empty());  // whole warps take the `if` or skip it
        CHECK(report.totals("branch_kernel").divergent_splits == 0);
        CHECK(report.global_of("branch_kernel", false).requests == 8);  // the 8 odd warps load, none partly
        CHECK(report.global_of("branch_kernel", false).partial_requests == 0);
    }
}

TEST_CASE("A grid-stride loop whose last iteration covers part of a warp diverges in that warp only", "[analysis]") {
    // 2 blocks of 128 threads (8 warps) over 560 elements: two full passes of
    // 256, then elements 512..559, threads 0..47 of block 0: warp 0 whole,
    // lanes 0..15 of warp 1. Only warp 1 of block 0 runs a third iteration with part of its lanes.
    const int n = 560;
    course::DeviceBuffer<float> data(std::vector<float>(n, 0.0f));
    const auto report = analyse([&] { analysis_kernels::grid_stride_add(data.data(), n, 2); });
    INFO(report.text());
    const auto body = report.divergence_at("grid_stride_add_kernel", 89);  // data[i] += 1
    CHECK(body.warp_executions == 8);
    CHECK(body.divergent == 1);
    CHECK(body.splits == 1);
    CHECK(body.min_lanes == 16);
    CHECK(body.max_lanes == 16);
    for (const auto& line : report.divergence) CHECK(line.divergent == 1);  // the loop's lines: that warp alone
    const auto loads = report.global_of("grid_stride_add_kernel", false);
    CHECK(loads.requests == 8 * 2 + 2);  // two passes of 8 warps, then warps 0 and 1 of block 0
    CHECK(loads.partial_requests == 1);
}

TEST_CASE("In a cooperative launch grid.sync() orders accesses of different blocks, and without it they race",
          "[analysis]") {
    const unsigned blocks = 4;
    course::DeviceBuffer<int> slots(std::vector<int>(blocks, 0)), seen(std::vector<int>(blocks, 0));
    const bool skip_sync = GENERATE(false, true);
    CAPTURE(skip_sync);
    const auto report = analyse([&] {
        REQUIRE(analysis_kernels::neighbour_exchange(slots.data(), seen.data(), blocks, skip_sync) == cudaSuccess);
    });
    INFO(report.text());
    if (!skip_sync) {
        CHECK(report.races.empty());
    } else {
        REQUIRE_FALSE(report.races.empty());  // the write before the read, and the other way round
        CHECK_FALSE(report.races[0].shared);
        const int lines[] = {report.races[0].first.line, report.races[0].second.line};
        CHECK(std::count(std::begin(lines), std::end(lines), analysis_kernels::neighbour_exchange_write_line()) == 1);
        CHECK(std::count(std::begin(lines), std::end(lines), analysis_kernels::neighbour_exchange_read_line()) == 1);
    }
}

TEST_CASE("Results published with a fence and an atomic ticket are read by the last block after its fence without "
          "a race, and without the fences they race",
          "[analysis]") {
    const unsigned blocks = 4;
    course::DeviceBuffer<int> slots(std::vector<int>(32 * blocks, 0)), total(std::vector<int>{0});
    course::DeviceBuffer<unsigned> ticket(std::vector<unsigned>{0});
    const bool fenced = GENERATE(true, false);
    CAPTURE(fenced);
    const auto report = analyse([&] {
        analysis_kernels::publish_then_ticket(slots.data(), ticket.data(), total.data(), blocks, fenced);
    });
    INFO(report.text());
    CHECK(total.download()[0] == static_cast<int>(32 * blocks * (32 * blocks - 1) / 2));
    if (fenced) {
        CHECK(report.races.empty());
    } else {
        // The last block's thread 0 reads the slots of the 3 blocks before it.
        REQUIRE(report.races.size() == 1);
        CHECK_FALSE(report.races[0].shared);
        CHECK(report.races[0].first.line == analysis_kernels::publish_then_ticket_write_line());
        CHECK(report.races[0].second.line == analysis_kernels::publish_then_ticket_read_line());
        CHECK(report.races[0].count == 3 * 32);
    }
}

TEST_CASE("wmma calls through shared memory are no lane's accesses: no race, no unwritten read, no divergence",
          "[analysis][wmma]") {
    // The warp's work is done by the runtime for the warp, so the report shows
    // only the kernel's own lines: the tiles' copies in and out.
    course::DeviceBuffer<__half> a(std::vector<__half>(256, __half(1.0f))), b(std::vector<__half>(256, __half(2.0f)));
    course::DeviceBuffer<float> out(512);
    const auto report = analyse([&] { analysis_kernels::wmma_through_shared(a.data(), b.data(), out.data()); });
    INFO(report.text());
    CHECK(report.races.empty());
    CHECK(report.uninitialised.empty());
    // Nothing diverges in the kernel's code, nor in the emulator's headers. (The
    // __shared__ declarations are taken by one lane first in the first block,
    // which maps their memory: an artifact of the emulator at those lines only.)
    const int first_wmma_line = analysis_kernels::wmma_through_shared_first_call_line();
    for (const auto& d : report.divergence) {
        CAPTURE(d.where.text());
        CHECK(d.where.file == "analysis_kernels.cu");
        CHECK(d.where.line < first_wmma_line - 4);
    }
    for (const auto& s : report.shared) CHECK(s.where.file == "analysis_kernels.cu");
    for (const auto& g : report.global) CHECK(g.where.file == "analysis_kernels.cu");
    CHECK(report.totals("wmma_kernel").shared_load_requests == 2 * 8);  // the copy out: 8 per block
    const std::vector<float> c = out.download();
    CHECK(c[0] == 32.0f);  // 16 products of 1 * 2
}
