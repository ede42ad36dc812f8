// Spin-waits and the memory model: threads that wait for a flag another
// block or thread sets make progress, a spin that can never end is reported
// as a deadlock with its line (not left to the time budget), and the fences
// and cuda::atomic_ref operations a look-back uses behave as on a GPU.
#include "spin_kernels.hpp"

#include <course/catch.hpp>
#include <course/cuda_check.hpp>
#include <course/device_buffer.hpp>
#include <course/schedules.hpp>

#include <chrono>
#include <string>
#include <vector>

namespace {

struct ResetDevice {
    ~ResetDevice() {
        (void)cudaDeviceReset();
        course_emu::set_schedule({});
        course_emu::set_workers(0);
        course_emu::set_time_budget(10);
    }
};

std::vector<int> expected_chain(unsigned blocks) {
    std::vector<int> v(blocks);
    for (unsigned i = 0; i < blocks; ++i) v[i] = static_cast<int>(i) + 1;
    return v;
}

}  // namespace

TEST_CASE("blocks that wait for their predecessor's flag make progress when the place comes from a counter",
          "[emu][spin]") {
    ResetDevice reset;  // restores the workers and the schedule, also when a check throws
    const unsigned blocks = 40;
    for (const unsigned workers : {1u, 2u, 4u}) {
        CAPTURE(workers);
        course::for_each_schedule([&] {
            course_emu::set_workers(workers);
            course::DeviceBuffer<int> flags(std::vector<int>(blocks, 0));
            course::DeviceBuffer<int> values(std::vector<int>(blocks, 0));
            course::DeviceBuffer<unsigned> counter(std::vector<unsigned>{0});
            emu_spin_test::launch_chain_by_ticket(blocks, flags.data(), values.data(), counter.data());
            COURSE_LAUNCH_CHECK();
            CHECK(values.download() == expected_chain(blocks));
        });
    }
}

TEST_CASE("a block that waits for a block not started is reported as a deadlock at the spin, not a time-out",
          "[emu][spin]") {
    const unsigned blocks = 16;
    course::DeviceBuffer<int> flags(std::vector<int>(blocks, 0));
    course::DeviceBuffer<int> values(std::vector<int>(blocks, 0));
    ResetDevice reset;  // declared after the buffers: the device is reset before they are freed
    course_emu::set_time_budget(30);  // the report must come long before the budget
    course_emu::set_workers(2);
    course_emu::set_schedule({course_emu::Schedule::Kind::reverse, 0});
    const auto start = std::chrono::steady_clock::now();
    emu_spin_test::launch_chain_by_block_index(blocks, flags.data(), values.data());
    const cudaError_t error = cudaDeviceSynchronize();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const std::string report = course_emu::last_fault_report();
    INFO(report);
    CHECK(error == cudaErrorLaunchFailure);
    CHECK(seconds < 5);
    CHECK(report.find("spin_kernels.cu:" + std::to_string(emu_spin_test::kChainByBlockIndexSpinLine) + ": deadlock") !=
          std::string::npos);
    CHECK(report.find("have not started") != std::string::npos);
    CHECK(report.find("atomic counter") != std::string::npos);
}

TEST_CASE("the same chain with blockIdx.x runs when the blocks start in order", "[emu][spin]") {
    ResetDevice reset;
    course_emu::set_workers(2);
    const unsigned blocks = 16;
    course::DeviceBuffer<int> flags(std::vector<int>(blocks, 0));
    course::DeviceBuffer<int> values(std::vector<int>(blocks, 0));
    emu_spin_test::launch_chain_by_block_index(blocks, flags.data(), values.data());
    COURSE_LAUNCH_CHECK();
    CHECK(values.download() == expected_chain(blocks));
}

TEST_CASE("a spin on a flag that no thread sets is reported as a deadlock with its line", "[emu][spin]") {
    course::DeviceBuffer<int> flag(std::vector<int>{0});
    ResetDevice reset;
    course_emu::set_time_budget(30);
    emu_spin_test::launch_lonely_spin(flag.data());
    CHECK(cudaDeviceSynchronize() == cudaErrorLaunchFailure);
    const std::string report = course_emu::last_fault_report();
    INFO(report);
    CHECK(report.find("spin_kernels.cu:" + std::to_string(emu_spin_test::kLonelySpinLine) + ": deadlock") !=
          std::string::npos);
    CHECK(report.find("is the flag it waits for ever set") != std::string::npos);
}

TEST_CASE("threads of a block that spin on a flag another thread of the block sets make progress", "[emu][spin]") {
    for (const unsigned threads : {2u, 33u, 256u}) {
        CAPTURE(threads);
        course::for_each_schedule([&] {
            course::DeviceBuffer<int> flag(std::vector<int>{0});
            course::DeviceBuffer<int> value(std::vector<int>{0});
            course::DeviceBuffer<int> out(std::vector<int>(threads, 0));
            emu_spin_test::launch_flag_within_block(threads, flag.data(), value.data(), out.data());
            COURSE_LAUNCH_CHECK();
            CHECK(out.download() == std::vector<int>(threads, 42));
        });
    }
}

TEST_CASE("cuda::atomic_ref and cuda::std::atomic operations return what CUDA's do", "[emu][spin]") {
    course::DeviceBuffer<int> cell(std::vector<int>{10, 0, 3, 0});
    emu_spin_test::launch_atomic_ref_operations(cell.data());
    COURSE_LAUNCH_CHECK();
    CHECK(cell.download() == std::vector<int>{15, 7, 9, 703});
    CHECK(course_emu::last_launch_atomic_counts().cas == 2);
    CHECK(course_emu::last_launch_atomic_counts().add == 1);
}
