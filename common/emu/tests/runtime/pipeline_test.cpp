// The emulator's cuda_pipeline.h: a multistage copy through shared memory
// gives the right values under every schedule; a read of a stage before the
// wait that covers it reads the stage's old contents on every run; zero-fill;
// a misaligned copy is reported with its line; and copies a thread left
// pending at its exit never land in a later block's shared memory.
#include "pipeline_kernels.hpp"

#include <course/catch.hpp>
#include <course/cuda_check.hpp>
#include <course/device_buffer.hpp>
#include <course/inputs.hpp>
#include <course/schedules.hpp>

#include <cstring>
#include <string>
#include <vector>

namespace {

using emu_pipeline_test::kTileFloats;

struct ResetDevice {
    ~ResetDevice() { (void)cudaDeviceReset(); }
};

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

float poison_float() {
    float f;
    const unsigned bits = 0xCDCDCDCDu;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

}  // namespace

TEST_CASE("copies staged through 2, 3 or 4 shared buffers arrive once waited for, under every schedule",
          "[emu][pipeline]") {
    const int stages = GENERATE(2, 3, 4);
    const int tiles = GENERATE(1, 2, 7);
    CAPTURE(stages, tiles);
    const std::vector<float> in = course::random_values<float>(static_cast<std::size_t>(tiles) * kTileFloats, -1.0f,
                                                               1.0f, "pipeline staged copy");
    course::DeviceBuffer<float> d_in(in), d_out(in.size());
    course::for_each_schedule([&] {
        d_out.poison();
        emu_pipeline_test::launch_staged_copy(d_in.data(), d_out.data(), tiles, stages, 0, 1);
        COURSE_LAUNCH_CHECK();
        const std::vector<float> out = d_out.download();
        for (std::size_t i = 0; i < in.size(); ++i) REQUIRE(out[i] == 2.0f * in[i]);
    });
}

TEST_CASE("a stage read before the wait that covers it holds its old contents on every run", "[emu][pipeline]") {
    // Waiting for one batch too few: the tile read is still in flight. On a GPU
    // the copy is often done in time anyway; the emulator lands it only at
    // the wait, so the read sees the poison (first round of stages) or the
    // tile `stages` earlier. Each thread reads its own copy here: another
    // thread's may have landed already, when the schedule ran that thread
    // on to its next wait first (a race a GPU has too).
    const int stages = GENERATE(2, 3, 4);
    const int tiles = 6;
    CAPTURE(stages);
    const std::vector<float> in = course::random_values<float>(static_cast<std::size_t>(tiles) * kTileFloats, 1.0f,
                                                               2.0f, "pipeline early read");
    course::DeviceBuffer<float> d_in(in), d_out(in.size());
    course::for_each_schedule([&] {
        d_out.poison();
        emu_pipeline_test::launch_staged_copy(d_in.data(), d_out.data(), tiles, stages, 1, 0);
        COURSE_LAUNCH_CHECK();
        const std::vector<float> out = d_out.download();
        for (int tile = 0; tile < tiles; ++tile) {
            CAPTURE(tile);
            const std::size_t i = static_cast<std::size_t>(tile) * kTileFloats;
            REQUIRE(out[i] != 2.0f * in[i]);
            if (tile < stages) REQUIRE(out[i] == 2.0f * poison_float());  // the stage was never written
        }
    });
}

TEST_CASE("__pipeline_memcpy_async's zfill writes zeros for the last bytes and reads only the others",
          "[emu][pipeline]") {
    const int zfill = GENERATE(0, 4, 8, 12, 16);
    CAPTURE(zfill);
    std::vector<unsigned char> in(16);
    for (int i = 0; i < 16; ++i) in[static_cast<std::size_t>(i)] = static_cast<unsigned char>(100 + i);
    course::DeviceBuffer<unsigned char> d_in(in), d_out(16);
    emu_pipeline_test::launch_zero_filled_copy(d_in.data(), d_out.data(), zfill);
    COURSE_LAUNCH_CHECK();
    const std::vector<unsigned char> out = d_out.download();
    for (int i = 0; i < 16; ++i) {
        CAPTURE(i);
        REQUIRE(out[static_cast<std::size_t>(i)] == (i < 16 - zfill ? in[static_cast<std::size_t>(i)] : 0));
    }
}

TEST_CASE("a 16-byte asynchronous copy from an address no multiple of 16 is reported with its line",
          "[emu][pipeline][faults]") {
    course::DeviceBuffer<float> in(std::vector<float>(8, 1.0f));
    ResetDevice reset;  // after the buffer: the device is reset before it is freed
    const int line = emu_pipeline_test::launch_misaligned_copy(in.data());
    REQUIRE(cudaDeviceSynchronize() == cudaErrorMisalignedAddress);
    const std::string report = course_emu::last_fault_report();
    CAPTURE(report);
    CHECK(contains(report, "pipeline_kernels.cu:" + std::to_string(line) + ":"));
    CHECK(contains(report, "misaligned address"));
}

TEST_CASE("a copy left pending when its thread exits never lands in a later block's shared memory",
          "[emu][pipeline]") {
    // Enough blocks that every worker runs some of each launch.
    constexpr int kBlocks = 32;
    course::DeviceBuffer<float> in(std::vector<float>{1.0f, 2.0f, 3.0f, 4.0f}), out(4 * kBlocks);
    emu_pipeline_test::launch_copy_left_pending(in.data(), kBlocks);
    COURSE_LAUNCH_CHECK();
    emu_pipeline_test::launch_wait_without_copies(out.data(), kBlocks);
    COURSE_LAUNCH_CHECK();
    for (const float v : out.download()) REQUIRE(std::memcmp(&v, "\xCD\xCD\xCD\xCD", 4) == 0);
}
