// Lesson 17 tests: the serial and the chunked, multi-stream pipelines, and the
// producer/consumer pair ordered by an event, against a CPU computation,
// exactly, for the edge sizes and beyond the launched grid, with chunk counts
// that do not divide n and exceed it, with 1 to 4 streams, under every
// emulator schedule (which also runs independent streams' work in different
// orders, and reports work in two streams that nothing orders) or many times
// on a GPU. The host reads the output as soon as a function returns: a
// pipeline that returns before its copies back are done fails.
#include <streams_overlap.hpp>

#include "cpu_reference.hpp"

#include <course/backend.hpp>
#include <course/catch.hpp>
#include <course/compare.hpp>
#include <course/device_buffer.hpp>
#include <course/inputs.hpp>
#include <course/pinned_buffer.hpp>
#include <course/schedules.hpp>

#include <algorithm>
#include <cstddef>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

// Rounds of work per element: enough that a kernel that skips elements or
// reads the wrong ones gives recognisably wrong values, small enough for the emulator.
constexpr unsigned kWork = 3;

// What host_out holds before every call: a value the function must overwrite.
constexpr unsigned kHostPoison = 0xDEADBEEFu;
// What the device scratch buffers hold before every call (DeviceBuffer::poison()).
const unsigned kDevicePoison = course::poison_value<unsigned>();

// One pipeline's buffers: pinned host input and output, device scratch.
struct Buffers {
    course::PinnedBuffer<unsigned> in;
    course::PinnedBuffer<unsigned> out;
    course::DeviceBuffer<unsigned> device_in;
    course::DeviceBuffer<unsigned> device_out;

    explicit Buffers(const std::vector<unsigned>& values)
        : in(values), out(values.size()), device_in(values.size()), device_out(values.size()) {}

    // Poisons the output and the scratch, so that nothing left by an earlier run looks right.
    void poison() {
        out.fill(kHostPoison);
        device_in.poison();
        device_out.poison();
    }

    lesson17::PipelineBuffers view() {
        lesson17::PipelineBuffers b;
        b.host_in = in.data();
        b.host_out = out.data();
        b.device_in = device_in.data();
        b.device_out = device_out.data();
        b.n = in.size();
        return b;
    }
};

// The largest grid launch_transform uses is 8 blocks of 256 per SM: one
// element more makes every thread loop.
std::size_t size_beyond_the_grid() { return static_cast<std::size_t>(course::sm_count()) * 8 * 256 + 1; }

std::vector<std::size_t> sizes_to_test() {
    std::vector<std::size_t> sizes(course::edge_sizes().begin(), course::edge_sizes().end());
    sizes.push_back(size_beyond_the_grid());
    return sizes;
}

// The indices [first, last] of the first run of wrong elements.
std::string first_wrong_run(const std::vector<unsigned>& expected, const std::vector<unsigned>& got) {
    std::size_t first = 0;
    while (first < got.size() && got[first] == expected[first]) ++first;
    std::size_t last = first;
    while (last + 1 < got.size() && got[last + 1] != expected[last + 1]) ++last;
    std::ostringstream out;
    out << "[" << first << ", " << last << "]";
    return out.str();
}

// Compares exactly and, when the output differs, says what the pattern of
// wrong values most likely means for a pipeline.
course::Comparison check_output(const std::vector<unsigned>& expected, const std::vector<unsigned>& got,
                                const std::string& what, std::size_t chunk_size) {
    course::CompareContext<unsigned> ctx;
    ctx.name = "host_out";
    course::Comparison cmp = course::compare_exact(expected, got, ctx);
    if (cmp.ok) return cmp;
    const std::string difference = cmp.message.substr(0, cmp.message.find("\n  likely cause:"));
    const auto count = [&](unsigned value) { return std::count(got.begin(), got.end(), value); };
    const auto poisoned = static_cast<std::size_t>(count(kHostPoison));
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < got.size(); ++i) wrong += got[i] != expected[i] ? 1 : 0;
    std::ostringstream out;
    out << what << ":\n  " << difference << "\n  " << wrong << " of " << got.size()
        << " elements are wrong, first run of them " << first_wrong_run(expected, got) << "\n  likely cause: ";
    const std::size_t n = got.size();
    // Are the wrong elements exactly the last ones, never written?
    std::size_t tail = 0;
    while (tail < n && got[n - 1 - tail] == kHostPoison) ++tail;
    const bool tail_only = poisoned == wrong && tail == wrong;
    if (poisoned == n) {
        out << "host_out still holds what the test put there: nothing was copied back before the function "
               "returned. Either nothing was copied at all, or the copies back were still queued: cudaMemcpyAsync "
               "into pinned memory returns before the copy is done, so wait for the work (cudaStreamSynchronize on "
               "every stream you used) before returning.";
    } else if (tail_only) {
        out << "only the last " << tail << " elements were never written: the chunks stop short of the end. The "
            << "chunk size must be ceil(n / chunks) = " << chunk_size << " (n / chunks rounded down leaves n % chunks elements in no chunk), and the last chunk has n - first "
               "elements.";
    } else if (poisoned == wrong) {
        out << "some elements were never copied back: every chunk must be copied in, transformed and copied back "
               "at the same offset first = c * chunk_size in host and device memory; or the function returned "
               "before all of its streams had finished.";
    } else if (count(kDevicePoison) > 0 || count(lesson17::transform_element(kDevicePoison, kWork)) > 0) {
        out << "host_out holds device memory nobody had written yet (the test fills it with 0xCD bytes): an "
               "operation ran before the one it needed. A chunk's copy in, kernel and copy back must be issued to "
               "the same stream (nothing orders work in different streams), or be ordered by an event "
               "(cudaEventRecord in the first stream, cudaStreamWaitEvent in the second). Are the kernel's "
               "pointers offset by the chunk's first element?";
    } else {
        out << "the values are computed from the wrong elements: check the chunk offsets (the same first = "
               "c * chunk_size for the input, the kernel's pointers and the output) and that each kernel gets its "
               "chunk's element count.";
    }
    return {false, out.str()};
}

std::string header(const std::string& call, std::size_t n) {
    std::ostringstream out;
    out << call << " over n = " << n << " (COURSE_SEED=" << course::seed() << ")";
    return out.str();
}

}  // namespace

TEST_CASE("transform_serial copies in, transforms and copies back every element, for every edge size", "[17]") {
    const std::size_t n = GENERATE_COPY(from_range(sizes_to_test()));
    CAPTURE(n, kWork, course::seed());
    const std::vector<unsigned> values = course::random_values<unsigned>(n, 0u, ~0u, "serial n=" + std::to_string(n));
    const std::vector<unsigned> expected = lesson17::reference::transform(values, kWork);
    Buffers buffers(values);
    buffers.poison();
    lesson17::transform_serial(buffers.view(), kWork);
    // Read at once: the function must return with host_out complete.
    COURSE_REQUIRE_MATCH(check_output(expected, buffers.out.to_vector(), header("transform_serial", n), 0));
}

TEST_CASE("transform_pipelined gives every element for any n, chunk count and stream count, under every schedule",
          "[17]") {
    const std::size_t n = GENERATE_COPY(from_range(sizes_to_test()));
    const std::vector<unsigned> values = course::random_values<unsigned>(n, 0u, ~0u, "pipelined n=" + std::to_string(n));
    const std::vector<unsigned> expected = lesson17::reference::transform(values, kWork);
    Buffers buffers(values);

    // Chunk counts that divide n or not, one chunk, and more chunks than elements.
    std::vector<int> chunk_counts{1, 3, 4, 7};
    if (n <= 300) chunk_counts.push_back(static_cast<int>(n) + 3);
    if (n > 1000) chunk_counts.push_back(64);
    for (const int chunks : chunk_counts) {
        for (const int streams : {1, 2, 3}) {
            CAPTURE(n, chunks, streams, kWork, course::seed());
            const std::size_t chunk_size = (n + static_cast<std::size_t>(chunks) - 1) / static_cast<std::size_t>(chunks);
            const std::string what = header("transform_pipelined(chunks = " + std::to_string(chunks) +
                                                ", streams = " + std::to_string(streams) + ")",
                                            n);
            course::for_each_schedule([&] {
                buffers.poison();
                lesson17::transform_pipelined(buffers.view(), kWork, chunks, streams);
                COURSE_REQUIRE_MATCH(check_output(expected, buffers.out.to_vector(), what, chunk_size));
            });
        }
    }
    // Bad arguments are refused, before anything else is done (n = 0 too).
    INFO("transform_pipelined must throw std::invalid_argument for chunks < 1 or streams < 1");
    CHECK_THROWS_AS(lesson17::transform_pipelined(buffers.view(), kWork, 0, 2), std::invalid_argument);
    CHECK_THROWS_AS(lesson17::transform_pipelined(buffers.view(), kWork, 4, 0), std::invalid_argument);
    CHECK_THROWS_AS(lesson17::transform_pipelined(buffers.view(), kWork, -1, -1), std::invalid_argument);
}

TEST_CASE("produce_then_consume orders the consumer stream after the producer with an event, under every schedule",
          "[17]") {
    const std::size_t n = GENERATE_COPY(from_range(sizes_to_test()));
    const std::vector<unsigned> values = course::random_values<unsigned>(n, 0u, ~0u, "two-stage n=" + std::to_string(n));
    const std::vector<unsigned> expected = lesson17::reference::transform_then_combine(values, kWork);
    Buffers buffers(values);
    CAPTURE(n, kWork, course::seed());
    const std::string what = header("produce_then_consume", n);
    course::for_each_schedule([&] {
        buffers.poison();
        lesson17::produce_then_consume(buffers.view(), kWork);
        course::Comparison cmp = check_output(expected, buffers.out.to_vector(), what, 0);
        if (!cmp.ok && cmp.message.find("nobody had written yet") != std::string::npos) {
            cmp.message += "\n  Here: the consumer's combine must wait for the producer's transform. Record an event "
                           "in the producer after the transform and make the consumer wait for it with "
                           "cudaStreamWaitEvent. With cudaStreamNonBlocking streams nothing else orders them, not "
                           "even work or a synchronisation in stream 0.";
        }
        COURSE_REQUIRE_MATCH(cmp);
    });
}
