// Lesson 07 on the emulator's analysis mode (emulator only, see
// course_lesson_analysis in cmake/CourseAnalysis.cmake): the reference's
// padded tile is conflict-free, the same tile without its padding column is
// a 32-way bank conflict on every column read. A 64 x 64 matrix is 2 x 2
// tiles, one block of 32 x 8 threads (8 warps) each; every warp stores four
// tile rows and reads four tile columns: 4 x 8 x 4 = 128 warp requests per
// instruction, each a whole row of 32 floats of `in` or `out` (4 sectors).
#include <transpose.hpp>

#include "transpose_unpadded.hpp"

#include <course/catch.hpp>
#include <course/cuda_check.hpp>
#include <course/device_buffer.hpp>

#include <course_emu/analysis.hpp>

#include <string>
#include <vector>

namespace {

namespace analysis = course_emu::analysis;

constexpr int kSide = 64;
constexpr unsigned long long kRequests = 128;

analysis::Report analyse(void (*transpose)(const float*, float*, int, int)) {
    course::DeviceBuffer<float> in(std::vector<float>(kSide * kSide, 1.0f)), out(kSide * kSide);
    analysis::begin();
    transpose(in.data(), out.data(), kSide, kSide);
    COURSE_LAUNCH_CHECK();
    return analysis::end();
}

// The only kernel the report names (the instrumented code having run).
std::string only_kernel(const analysis::Report& report) {
    REQUIRE(analysis::instrumented());
    REQUIRE(report.kernels.size() == 1);
    return report.kernels.front().kernel;
}

}  // namespace

TEST_CASE("analysis: the reference transpose_tiled's tile accesses are conflict-free", "[07][analysis]") {
    const auto report = analyse(lesson07::transpose_tiled);
    INFO(report.text());
    const std::string kernel = only_kernel(report);
    for (const bool store : {false, true}) {
        CAPTURE(store);
        const auto tile = report.shared_of(kernel, store);
        CHECK(tile.requests == kRequests);
        CHECK(tile.max_degree == 1);
        CHECK(tile.conflicts() == 0);
        CHECK(tile.partial_requests == 0);
    }
    const auto totals = report.totals(kernel);
    CHECK(totals.global_load_requests == kRequests);
    CHECK(totals.global_load_sectors == 4 * kRequests);
    CHECK(totals.global_store_requests == kRequests);
    CHECK(totals.global_store_sectors == 4 * kRequests);
    CHECK(report.races.empty());
    CHECK(report.uninitialised.empty());
}

TEST_CASE("analysis: without the padding column every tile column read is a 32-way bank conflict", "[07][analysis]") {
    const auto report = analyse(lesson07::transpose_tiled_unpadded);
    INFO(report.text());
    const std::string kernel = only_kernel(report);
    const auto rows_written = report.shared_of(kernel, true);
    CHECK(rows_written.requests == kRequests);
    CHECK(rows_written.max_degree == 1);
    CHECK(rows_written.conflicts() == 0);
    // 32 words in one bank: 32 wavefronts where 1 suffices, 31 extra per request.
    const auto columns_read = report.shared_of(kernel, false);
    CHECK(columns_read.requests == kRequests);
    CHECK(columns_read.max_degree == 32);
    CHECK(columns_read.wavefronts == 32 * kRequests);
    CHECK(columns_read.conflicts() == 31 * kRequests);
    CHECK(report.races.empty());
}
