// The emulator's barriers and warp collectives: the results a GPU gives, and
// a clear report for each way of misusing them.
#include "sync_kernels.hpp"

#include <course/catch.hpp>
#include <course/cuda_check.hpp>
#include <course/device_buffer.hpp>
#include <course/inputs.hpp>
#include <course/schedules.hpp>

#include <cstring>
#include <numeric>
#include <string>
#include <vector>

namespace {

struct ResetDevice {
    ~ResetDevice() { (void)cudaDeviceReset(); }
};

std::vector<int> block_sums(const std::vector<int>& in, unsigned blocks, unsigned threads, bool skip_barrier) {
    course::DeviceBuffer<int> d_in(in);
    course::DeviceBuffer<int> partials(blocks);
    emu_sync_test::launch_block_sum(d_in.data(), static_cast<int>(in.size()), partials.data(), blocks, threads,
                                    skip_barrier);
    COURSE_LAUNCH_CHECK();
    return partials.download();
}

// The fault report of a launch expected to fault with `code`.
std::string fault_of(cudaError_t code) {
    REQUIRE(cudaDeviceSynchronize() == code);
    return course_emu::last_fault_report();
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("a shared-memory tree reduction with its barriers is right under every schedule", "[emu][sync]") {
    const std::vector<int> in = course::random_values<int>(10007, -100, 100, "tree");
    const int expected = std::accumulate(in.begin(), in.end(), 0);
    const unsigned threads = GENERATE(32u, 256u, 1024u);
    CAPTURE(threads);
    course::for_each_schedule([&] {
        const std::vector<int> partials = block_sums(in, 7, threads, false);
        REQUIRE(std::accumulate(partials.begin(), partials.end(), 0) == expected);
    });
}

TEST_CASE("a tree reduction missing its __syncthreads is wrong on some schedule and right on another",
          "[emu][sync][planted]") {
    const std::vector<int> in = course::random_values<int>(4096, 1, 100, "planted");
    const int expected = std::accumulate(in.begin(), in.end(), 0);
    using Kind = course_emu::Schedule::Kind;
    int right = 0, wrong = 0;
    std::string wrong_on;
    course_emu::set_workers(1);  // the schedule alone decides the order
    for (const course_emu::Schedule s : {course_emu::Schedule{Kind::forward, 0}, course_emu::Schedule{Kind::reverse, 0},
                                         course_emu::Schedule{Kind::random, 1}, course_emu::Schedule{Kind::random, 2}}) {
        course_emu::set_schedule(s);
        const std::vector<int> partials = block_sums(in, 4, 256, true);
        const bool ok = std::accumulate(partials.begin(), partials.end(), 0) == expected;
        ok ? ++right : ++wrong;
        if (!ok && wrong_on.empty()) wrong_on = course_emu::schedule_name(s);
    }
    course_emu::set_schedule({});
    course_emu::set_workers(0);
    CAPTURE(right, wrong, wrong_on);
    CHECK(right > 0);
    CHECK(wrong > 0);
}

TEST_CASE("__syncthreads_count, _and and _or reduce a predicate over the block", "[emu][sync]") {
    course::DeviceBuffer<int> out(3);
    course::for_each_schedule([&] {
        emu_sync_test::launch_barrier_predicates(out.data(), 96, 3);
        COURSE_LAUNCH_CHECK();
        REQUIRE(out.download() == std::vector<int>{32, 0, 1});
        emu_sync_test::launch_barrier_predicates(out.data(), 64, 1);
        COURSE_LAUNCH_CHECK();
        REQUIRE(out.download() == std::vector<int>{64, 1, 1});
    });
}

namespace {

// What a GPU returns for lane `lane` of the four shuffles (values lane*10 + 1.5).
template <class T>
std::vector<T> expected_shuffles(int offset, int width) {
    std::vector<T> out;
    for (int t = 0; t < 64; ++t) {
        const int lane = t % 32;
        const int start = lane / width * width;
        auto value = [](int l) { return static_cast<T>(l * 10) + static_cast<T>(1.5); };
        const int up = lane - offset >= start ? lane - offset : lane;
        const int down = lane + offset < start + width ? lane + offset : lane;
        const int x = (lane ^ offset) < start + width ? lane ^ offset : lane;
        out.push_back(value(start + offset % width));
        out.push_back(value(up));
        out.push_back(value(down));
        out.push_back(value(x));
    }
    return out;
}

}  // namespace

TEST_CASE("warp shuffles return what a GPU returns, for every width", "[emu][sync][warp]") {
    const int width = GENERATE(32, 16, 8, 2);
    const int offset = GENERATE(1, 3, 5);
    CAPTURE(width, offset);
    course::for_each_schedule([&] {
        course::DeviceBuffer<float> f(256);
        emu_sync_test::launch_shuffles_float(f.data(), offset, width);
        COURSE_LAUNCH_CHECK();
        REQUIRE(f.download() == expected_shuffles<float>(offset, width));
        course::DeviceBuffer<double> d(256);
        emu_sync_test::launch_shuffles_double(d.data(), offset, width);
        COURSE_LAUNCH_CHECK();
        REQUIRE(d.download() == expected_shuffles<double>(offset, width));
        course::DeviceBuffer<long long> ll(256);
        emu_sync_test::launch_shuffles_ll(ll.data(), offset, width);
        COURSE_LAUNCH_CHECK();
        REQUIRE(ll.download() == expected_shuffles<long long>(offset, width));
    });
}

TEST_CASE("ballot, any, all and activemask vote over the warp", "[emu][sync][warp]") {
    course::DeviceBuffer<unsigned> out(3 * 64);
    course::DeviceBuffer<unsigned> active(64);
    emu_sync_test::launch_votes(out.data(), active.data(), 4);
    COURSE_LAUNCH_CHECK();
    const std::vector<unsigned> v = out.download();
    for (int t = 0; t < 64; ++t) {
        CAPTURE(t);
        REQUIRE(v[3 * t] == 0x11111111u);
        REQUIRE(v[3 * t + 1] == 1u);
        REQUIRE(v[3 * t + 2] == 0u);
    }
    // The first lane of each warp to go on after the votes sees every lane
    // alive (later lanes may see earlier ones exited: see docs/emulator.md).
    const std::vector<unsigned> a = active.download();
    CHECK(a[0] == 0xffffffffu);
    CHECK(a[32] == 0xffffffffu);
    emu_sync_test::launch_votes(out.data(), active.data(), 1);
    COURSE_LAUNCH_CHECK();
    REQUIRE(out.download()[2] == 1u);
}

TEST_CASE("a warp reduction with __shfl_down_sync sums each warp", "[emu][sync][warp]") {
    const std::vector<int> in = course::random_values<int>(256, -1000, 1000, "warp sums");
    course::DeviceBuffer<int> d_in(in);
    course::DeviceBuffer<int> out(8);
    course::for_each_schedule([&] {
        emu_sync_test::launch_warp_sums(d_in.data(), out.data(), 256);
        COURSE_LAUNCH_CHECK();
        const std::vector<int> got = out.download();
        for (int w = 0; w < 8; ++w) {
            CAPTURE(w);
            REQUIRE(got[w] == std::accumulate(in.begin() + 32 * w, in.begin() + 32 * w + 32, 0));
        }
    });
}

TEST_CASE("1024 threads can all wait at barriers with their own stacks", "[emu][sync]") {
    course::DeviceBuffer<int> out(2048);
    emu_sync_test::launch_many_waiting_threads(out.data());
    COURSE_LAUNCH_CHECK();
    const std::vector<int> got = out.download();
    for (int i = 0; i < 2048; ++i) {
        CAPTURE(i);
        REQUIRE(got[i] == 64 * (i % 1024) + 2080);
    }
}

TEST_CASE("threads at different __syncthreads() are reported as barrier divergence", "[emu][sync][faults]") {
    ResetDevice reset;
    const int line = emu_sync_test::launch_divergent_barriers();
    const std::string report = fault_of(cudaErrorLaunchFailure);
    CAPTURE(report);
    CHECK(contains(report, "barrier divergence"));
    CHECK(contains(report, "sync_kernels.cu:" + std::to_string(line)));
    CHECK(contains(report, "sync_kernels.cu:" + std::to_string(line + 2)));
    CHECK(contains(report, "divergent_barriers"));
}

TEST_CASE("a thread that returns before a __syncthreads() others wait at is reported", "[emu][sync][faults]") {
    ResetDevice reset;
    course::for_each_schedule([&] {
        (void)cudaDeviceReset();
        const int line = emu_sync_test::launch_exit_before_barrier();
        const std::string report = fault_of(cudaErrorLaunchFailure);
        CAPTURE(report);
        CHECK(contains(report, "sync_kernels.cu:" + std::to_string(line)));
        CHECK(contains(report, "exited"));
    });
}

TEST_CASE("a shuffle mask that leaves out the calling lane is reported", "[emu][sync][faults]") {
    ResetDevice reset;
    const int line = emu_sync_test::launch_mask_excludes_caller();
    const std::string report = fault_of(cudaErrorLaunchFailure);
    CAPTURE(report);
    CHECK(contains(report, "sync_kernels.cu:" + std::to_string(line)));
    CHECK(contains(report, "does not include the calling lane"));
    CHECK(contains(report, "thread (3,0,0)"));
}

TEST_CASE("a full mask in a partial last warp is reported", "[emu][sync][faults]") {
    ResetDevice reset;
    const int line = emu_sync_test::launch_full_mask_partial_warp();
    const std::string report = fault_of(cudaErrorLaunchFailure);
    CAPTURE(report);
    CHECK(contains(report, "sync_kernels.cu:" + std::to_string(line)));
    CHECK(contains(report, "only 16 threads"));
}

TEST_CASE("threads waiting at a shuffle and at a barrier are reported as a deadlock", "[emu][sync][faults]") {
    ResetDevice reset;
    const int line = emu_sync_test::launch_barrier_vs_shuffle();
    const std::string report = fault_of(cudaErrorLaunchFailure);
    CAPTURE(report);
    CHECK(contains(report, "deadlock"));
    CHECK(contains(report, "sync_kernels.cu:" + std::to_string(line)));
    CHECK(contains(report, "16 waiting at __syncthreads()"));
}

TEST_CASE("a kernel past its time budget is stopped with a report of where its threads were",
          "[emu][sync][faults]") {
    course::DeviceBuffer<int> flag(std::vector<int>{0});
    ResetDevice reset;  // declared after the buffer: the device is reset before the buffer is freed
    course_emu::set_time_budget(0.3);
    const int line = emu_sync_test::launch_spin_forever(flag.data());
    course_emu::set_time_budget(10);
    const std::string report = fault_of(cudaErrorLaunchTimeout);
    CAPTURE(report, line);
    CHECK(contains(report, "time budget"));
    CHECK(contains(report, "spin_forever"));
    CHECK(contains(report, "running (the thread reported)"));
}

TEST_CASE("threads spinning with atomics on a lock nobody releases are reported as a deadlock at the spin",
          "[emu][sync][faults]") {
    course::DeviceBuffer<int> lock(std::vector<int>{1});
    ResetDevice reset;  // declared after the buffer: the device is reset before the buffer is freed
    course_emu::set_time_budget(30);  // the deadlock is seen long before any budget (spin_test.cpp has more)
    emu_sync_test::launch_spin_on_lock(lock.data());
    const std::string report = fault_of(cudaErrorLaunchFailure);
    course_emu::set_time_budget(10);
    CAPTURE(report);
    CHECK(contains(report, "sync_kernels.cu:144: deadlock"));
    CHECK(contains(report, "spin_on_lock"));
    CHECK(contains(report, "ready to run"));
}
