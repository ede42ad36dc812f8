// The emulator's streams and events: work in a stream is queued and runs
// when the host synchronises, in stream order, with independent streams run
// in the schedule's order; events, the legacy default stream and host
// synchronisation order work across streams; pageable copies are
// synchronous; and two operations in different streams that touch the same
// bytes, one writing, with nothing ordering them, are reported as a race
// naming both with their file and line.
#include "streams_kernels.hpp"

#include <course/catch.hpp>
#include <course/cuda_check.hpp>
#include <course/device_buffer.hpp>
#include <course/pinned_buffer.hpp>
#include <course/schedules.hpp>

#include <string>
#include <vector>

namespace {

constexpr int kN = 100;

struct ResetDevice {
    ~ResetDevice() { (void)cudaDeviceReset(); }
};

std::vector<int> iota_values(int n) {
    std::vector<int> v(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = 10 * i;
    return v;
}

std::vector<int> plus_one(std::vector<int> v) {
    for (int& x : v) ++x;
    return v;
}

// Appends its stream's number to a list when it runs (a cudaLaunchHostFunc callback).
struct Mark {
    std::vector<int>* order;
    int stream;
};
void record_mark(void* data) {
    const Mark* m = static_cast<const Mark*>(data);
    m->order->push_back(m->stream);
}

}  // namespace

TEST_CASE("work in a stream waits in a queue until the host synchronises, then runs in stream order",
          "[emu][streams]") {
    ResetDevice reset;
    course::PinnedBuffer<int> in(iota_values(kN)), out(kN);
    out.fill(-1);
    course::DeviceBuffer<int> d_in(kN), d_out(kN);
    cudaStream_t s = nullptr;
    REQUIRE(cudaStreamCreate(&s) == cudaSuccess);
    const std::size_t bytes = kN * sizeof(int);
    REQUIRE(cudaMemcpyAsync(d_in.data(), in.data(), bytes, cudaMemcpyHostToDevice, s) == cudaSuccess);
    emu_streams_test::launch_add_one(d_in.data(), d_out.data(), kN, s);
    REQUIRE(cudaGetLastError() == cudaSuccess);
    REQUIRE(cudaMemcpyAsync(out.data(), d_out.data(), bytes, cudaMemcpyDeviceToHost, s) == cudaSuccess);
    // Nothing has run: the copy back is asynchronous, as on a GPU.
    CHECK(out.data()[0] == -1);
    // Each query lets one operation run: the stream is busy for three of them.
    CHECK(cudaStreamQuery(s) == cudaErrorNotReady);
    CHECK(cudaStreamQuery(s) == cudaErrorNotReady);
    CHECK(cudaStreamQuery(s) == cudaSuccess);
    CHECK(out.to_vector() == plus_one(iota_values(kN)));
    CHECK(cudaStreamDestroy(s) == cudaSuccess);
}

TEST_CASE("an asynchronous copy to pageable memory returns when it is done, as on a GPU", "[emu][streams]") {
    ResetDevice reset;
    const std::vector<int> values = iota_values(kN);
    course::DeviceBuffer<int> d(values);
    cudaStream_t s = nullptr;
    REQUIRE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
    std::vector<int> pageable(kN, -1);
    REQUIRE(cudaMemcpyAsync(pageable.data(), d.data(), kN * sizeof(int), cudaMemcpyDeviceToHost, s) == cudaSuccess);
    CHECK(pageable == values);
    CHECK(cudaStreamDestroy(s) == cudaSuccess);
}

TEST_CASE("independent streams' work runs in the schedule's order, and stream order always holds", "[emu][streams]") {
    ResetDevice reset;
    std::vector<std::vector<int>> orders;
    course::for_each_schedule([&] {
        std::vector<int> order;
        cudaStream_t s1 = nullptr, s2 = nullptr;
        REQUIRE(cudaStreamCreate(&s1) == cudaSuccess);
        REQUIRE(cudaStreamCreate(&s2) == cudaSuccess);
        Mark a{&order, 1}, b{&order, 2}, c{&order, 1};
        REQUIRE(cudaLaunchHostFunc(s1, record_mark, &a) == cudaSuccess);
        REQUIRE(cudaLaunchHostFunc(s2, record_mark, &b) == cudaSuccess);
        REQUIRE(cudaLaunchHostFunc(s1, record_mark, &c) == cudaSuccess);
        CHECK(order.empty());
        REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
        REQUIRE(order.size() == 3);
        std::vector<int> ones;
        for (int x : order) {
            if (x == 1) ones.push_back(x);
        }
        CHECK(ones.size() == 2);
        orders.push_back(order);
        CHECK(cudaStreamDestroy(s1) == cudaSuccess);
        CHECK(cudaStreamDestroy(s2) == cudaSuccess);
    });
    // forward runs stream 1 first, reverse stream 2 first.
    REQUIRE(orders.size() >= 2);
    CHECK(orders[0] == std::vector<int>{1, 1, 2});
    CHECK(orders[1] == std::vector<int>{2, 1, 1});
}

TEST_CASE("a kernel reading what a copy in another stream writes, unordered, is reported as a race with both lines",
          "[emu][streams][planted]") {
    course::PinnedBuffer<int> in(iota_values(kN));
    course::DeviceBuffer<int> d_in(kN), d_out(kN);
    ResetDevice reset;  // after the buffers: the reset clears the race's fault before they are freed
    cudaStream_t copier = nullptr, computer = nullptr;
    REQUIRE(cudaStreamCreateWithFlags(&copier, cudaStreamNonBlocking) == cudaSuccess);
    REQUIRE(cudaStreamCreateWithFlags(&computer, cudaStreamNonBlocking) == cudaSuccess);
    const int copy_line = __LINE__ + 1;
    REQUIRE(cudaMemcpyAsync(d_in.data(), in.data(), kN * sizeof(int), cudaMemcpyHostToDevice, copier) == cudaSuccess);
    emu_streams_test::launch_add_one(d_in.data(), d_out.data(), kN, computer);  // no cudaStreamWaitEvent
    CHECK(cudaGetLastError() == cudaErrorLaunchFailure);
    const std::string report = course_emu::last_fault_report();
    CAPTURE(report);
    CHECK(report.find("race between streams") != std::string::npos);
    CHECK(report.find("kernel add_one (launched at ") != std::string::npos);
    CHECK(report.find("streams_kernels.cu:" + std::to_string(emu_streams_test::add_one_launch_line())) !=
          std::string::npos);
    CHECK(report.find(" reads bytes [0, 1) of the 400-byte device allocation") != std::string::npos);
    CHECK(report.find("cudaMemcpyAsync host-to-device of 400 bytes (") != std::string::npos);
    CHECK(report.find("streams_test.cpp:" + std::to_string(copy_line) + ") in stream") != std::string::npos);
    CHECK(report.find(" writes, and nothing orders the two") != std::string::npos);
    (void)cudaStreamDestroy(copier);
    (void)cudaStreamDestroy(computer);
}

TEST_CASE("the same pair ordered by an event, by the host or by one stream is no race and is right on every schedule",
          "[emu][streams]") {
    ResetDevice reset;
    course::PinnedBuffer<int> in(iota_values(kN)), out(kN);
    course::DeviceBuffer<int> d_in(kN), d_out(kN);
    const std::size_t bytes = kN * sizeof(int);
    const auto how = GENERATE(as<std::string>{}, "event", "host", "blocking streams and stream 0",
                              "blocking streams and cudaStreamSynchronize(0)");
    CAPTURE(how);
    course::for_each_schedule([&] {
        out.fill(-1);
        cudaStream_t copier = nullptr, computer = nullptr;
        const bool blocking = how.rfind("blocking", 0) == 0;
        const unsigned flags = blocking ? cudaStreamDefault : cudaStreamNonBlocking;
        REQUIRE(cudaStreamCreateWithFlags(&copier, flags) == cudaSuccess);
        REQUIRE(cudaStreamCreateWithFlags(&computer, flags) == cudaSuccess);
        cudaEvent_t copied = nullptr;
        REQUIRE(cudaEventCreateWithFlags(&copied, cudaEventDisableTiming) == cudaSuccess);
        COURSE_CUDA_CHECK(cudaMemcpyAsync(d_in.data(), in.data(), bytes, cudaMemcpyHostToDevice, copier));
        if (how == "event") {
            COURSE_CUDA_CHECK(cudaEventRecord(copied, copier));
            COURSE_CUDA_CHECK(cudaStreamWaitEvent(computer, copied, 0));
        } else if (how == "host") {
            COURSE_CUDA_CHECK(cudaStreamSynchronize(copier));
        } else if (how == "blocking streams and stream 0") {
            // Work in the legacy default stream waits for blocking streams, and they for it.
            COURSE_CUDA_CHECK(cudaEventRecord(copied, 0));
        } else {
            // Waiting for the legacy default stream waits for the blocking streams too.
            COURSE_CUDA_CHECK(cudaStreamSynchronize(0));
        }
        emu_streams_test::launch_add_one(d_in.data(), d_out.data(), kN, computer);
        COURSE_CUDA_CHECK(cudaGetLastError());
        COURSE_CUDA_CHECK(cudaMemcpyAsync(out.data(), d_out.data(), bytes, cudaMemcpyDeviceToHost, computer));
        COURSE_CUDA_CHECK(cudaStreamSynchronize(computer));
        CHECK(out.to_vector() == plus_one(iota_values(kN)));
        CHECK(cudaEventDestroy(copied) == cudaSuccess);
        CHECK(cudaStreamDestroy(copier) == cudaSuccess);
        CHECK(cudaStreamDestroy(computer) == cudaSuccess);
    });
}

TEST_CASE("stream 0 does not order non-blocking streams: a default-stream launch racing one is reported",
          "[emu][streams][planted]") {
    course::PinnedBuffer<int> in(iota_values(kN));
    course::DeviceBuffer<int> d_in(kN), d_out(kN);
    ResetDevice reset;  // after the buffers: the reset clears the race's fault before they are freed
    cudaStream_t copier = nullptr;
    REQUIRE(cudaStreamCreateWithFlags(&copier, cudaStreamNonBlocking) == cudaSuccess);
    REQUIRE(cudaMemcpyAsync(d_in.data(), in.data(), kN * sizeof(int), cudaMemcpyHostToDevice, copier) == cudaSuccess);
    emu_streams_test::launch_add_one(d_in.data(), d_out.data(), kN, 0);
    CHECK(cudaGetLastError() == cudaErrorLaunchFailure);
    const std::string report = course_emu::last_fault_report();
    CAPTURE(report);
    CHECK(report.find("race between streams: kernel add_one") != std::string::npos);
    CHECK(report.find("in the default stream reads") != std::string::npos);
    (void)cudaStreamDestroy(copier);
}

TEST_CASE("a destroyed stream's work still runs, and events time it on the host, never negatively",
          "[emu][streams]") {
    ResetDevice reset;
    course::PinnedBuffer<int> in(iota_values(kN)), out(kN);
    out.fill(-1);
    course::DeviceBuffer<int> d_in(kN), d_out(kN);
    cudaStream_t s = nullptr;
    REQUIRE(cudaStreamCreate(&s) == cudaSuccess);
    cudaEvent_t start = nullptr, stop = nullptr;
    REQUIRE(cudaEventCreate(&start) == cudaSuccess);
    REQUIRE(cudaEventCreate(&stop) == cudaSuccess);
    const std::size_t bytes = kN * sizeof(int);
    REQUIRE(cudaEventRecord(start, s) == cudaSuccess);
    REQUIRE(cudaMemcpyAsync(d_in.data(), in.data(), bytes, cudaMemcpyHostToDevice, s) == cudaSuccess);
    emu_streams_test::launch_add_one(d_in.data(), d_out.data(), kN, s);
    REQUIRE(cudaMemcpyAsync(out.data(), d_out.data(), bytes, cudaMemcpyDeviceToHost, s) == cudaSuccess);
    REQUIRE(cudaEventRecord(stop, s) == cudaSuccess);
    float ms = -1;
    CHECK(cudaEventElapsedTime(&ms, start, stop) == cudaErrorNotReady);  // stop has not run yet
    REQUIRE(cudaStreamDestroy(s) == cudaSuccess);  // returns at once; the work is still queued
    CHECK(out.data()[0] == -1);
    CHECK(cudaStreamSynchronize(s) == cudaErrorInvalidResourceHandle);  // the handle is gone
    REQUIRE(cudaEventSynchronize(stop) == cudaSuccess);
    CHECK(out.to_vector() == plus_one(iota_values(kN)));
    REQUIRE(cudaEventElapsedTime(&ms, start, stop) == cudaSuccess);
    CHECK(ms >= 0.0f);
    CHECK(cudaEventDestroy(start) == cudaSuccess);
    CHECK(cudaEventDestroy(stop) == cudaSuccess);
}

TEST_CASE("cudaHostAlloc checks its flags, and an event query lets one queued operation run", "[emu][streams]") {
    ResetDevice reset;
    int* pinned = nullptr;
    CHECK(cudaHostAlloc(&pinned, 16 * sizeof(int), 0x40) == cudaErrorInvalidValue);
    (void)cudaGetLastError();
    REQUIRE(cudaHostAlloc(&pinned, 16 * sizeof(int), cudaHostAllocPortable | cudaHostAllocMapped) == cudaSuccess);
    course::DeviceBuffer<int> d(std::vector<int>(16, 7));
    cudaStream_t s = nullptr;
    REQUIRE(cudaStreamCreate(&s) == cudaSuccess);
    cudaEvent_t copied = nullptr;
    REQUIRE(cudaEventCreate(&copied) == cudaSuccess);
    REQUIRE(cudaMemcpyAsync(pinned, d.data(), 16 * sizeof(int), cudaMemcpyDeviceToHost, s) == cudaSuccess);
    REQUIRE(cudaEventRecord(copied, s) == cudaSuccess);
    CHECK(cudaEventQuery(copied) == cudaErrorNotReady);  // the copy ran, the record not yet
    CHECK(pinned[15] == 7);
    CHECK(cudaEventQuery(copied) == cudaSuccess);
    CHECK(cudaStreamDestroy(s) == cudaSuccess);
    CHECK(cudaEventDestroy(copied) == cudaSuccess);
    CHECK(cudaFreeHost(pinned) == cudaSuccess);
}
