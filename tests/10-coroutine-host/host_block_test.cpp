// Lesson 10 tests: one tree sum run as a block of host coroutines and as a
// device block, against the CPU's sum, for block sizes 1 to 1024; the host
// runner's rounds, its report of threads that disagree on the barriers, and
// the coroutine frames it must never leak.
#include <host_block.hpp>

#include "cpu_reference.hpp"

#include <course/catch.hpp>
#include <course/compare.hpp>
#include <course/device_buffer.hpp>
#include <course/inputs.hpp>
#include <course/schedules.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace {

using lesson10::BlockThread;

// Block sizes: 1, around a warp, powers of two and not, up to the limit.
const std::vector<unsigned> kBlockSizes = {1, 2, 3, 7, 31, 32, 33, 64, 100, 128, 255, 256, 257, 512, 1000, 1023, 1024};

enum class Pattern { random, ones };

const char* pattern_name(Pattern p) { return p == Pattern::random ? "random in [-1, 1)" : "all ones"; }

std::vector<float> make_values(Pattern pattern, std::size_t n, const std::string& label) {
    if (pattern == Pattern::ones) return std::vector<float>(n, 1.0f);
    return course::random_values<float>(n, -1.0f, 1.0f, label);
}

// The sizes tried with a block of `threads`: empty, fewer values than
// threads, one each, and several each with a ragged end.
std::vector<std::size_t> sizes_for(unsigned threads) {
    return {0, 1, threads / 2 + 1, threads, 3 * std::size_t{threads} + 5};
}

const char* const kNeverWritten =
    "likely cause: NaN is what *sum and every slot of `partial` hold before they are written. Either the threads "
    "never ran (block_sum_on_host must create one block_tree_sum_on_host coroutine per thread and hand them to "
    "run_block_on_host; launch_block_sum must launch the kernel, which must call the device copy of the body), or a "
    "thread read a partner's slot before the partner wrote it: is every unfinished thread resumed exactly once per "
    "round, never run on to its end before the others have started?";
const char* const kReadTooEarly =
    "likely cause: a thread read a partner's slot before the partner had added into it, at some level of the tree. "
    "Does the body wait (co_await block_barrier / __syncthreads()) after the first stage and after every level? "
    "Does run_block_on_host resume each unfinished thread once per round, in rounds, until all have finished?";

std::string header(const char* where, Pattern pattern, std::size_t n, unsigned threads) {
    std::ostringstream out;
    out << where << " over n = " << n << " " << pattern_name(pattern) << " values with one block of " << threads
        << (threads == 1 ? " thread" : " threads") << " (COURSE_SEED=" << course::seed() << ")";
    return out.str();
}

// Whether `got` is the CPU's sum of `values` within the float tolerance.
course::Comparison check_sum(const std::string& what, const std::vector<float>& values, float got) {
    const course::AccurateSum expected = lesson10::reference::sum(values);
    const long double tolerance = lesson10::reference::tolerance(values.size(), expected.magnitude);
    const long double error = std::fabs(static_cast<long double>(got) - expected.sum);
    if (error <= tolerance) return {};
    std::ostringstream out;
    out.precision(10);
    out << what << " returned " << course::detail::show(got) << ", expected "
        << static_cast<double>(expected.sum) << " (allowed error " << static_cast<double>(tolerance) << ")\n  "
        << (std::isnan(got) ? kNeverWritten : kReadTooEarly);
    return {false, out.str()};
}

float device_sum(const std::vector<float>& values, unsigned threads) {
    course::DeviceBuffer<float> d_values(values);
    course::DeviceBuffer<float> d_sum(1);
    d_sum.poison();
    lesson10::launch_block_sum(d_values.data(), values.size(), threads, d_sum.data());
    COURSE_LAUNCH_CHECK();
    return d_sum.download()[0];
}

// A thread of a test block: passes `barriers` barriers, logging each step
// (thread, step) before each barrier and at its end, then marks itself finished.
BlockThread logging_thread(unsigned tid, unsigned barriers, std::vector<std::pair<unsigned, unsigned>>* log,
                           std::vector<int>* finished) {
    for (unsigned step = 0; step < barriers; ++step) {
        log->emplace_back(tid, step);
        co_await lesson10::block_barrier;
    }
    log->emplace_back(tid, barriers);
    (*finished)[tid] = 1;
}

std::vector<unsigned> iota(unsigned from, unsigned to) {
    std::vector<unsigned> ids;
    for (unsigned i = from; i < to; ++i) ids.push_back(i);
    return ids;
}

}  // namespace

TEST_CASE("the host block of coroutines gives the CPU's sum for every block size from 1 to 1024", "[10]") {
    const unsigned threads = GENERATE_COPY(from_range(kBlockSizes));
    const Pattern pattern = GENERATE(Pattern::random, Pattern::ones);
    for (const std::size_t n : sizes_for(threads)) {
        const std::vector<float> values = make_values(pattern, n, "values " + std::to_string(n));
        const float got = lesson10::block_sum_on_host(values.data(), n, threads);
        COURSE_REQUIRE_MATCH(check_sum(header("block_sum_on_host", pattern, n, threads), values, got));
        if (pattern == Pattern::ones) {
            INFO(header("block_sum_on_host", pattern, n, threads) << ": a sum of ones is exact in float");
            REQUIRE(got == static_cast<float>(n));
        }
        INFO(header("block_sum_on_host", pattern, n, threads)
             << ": every coroutine frame must be freed when the block's BlockThreads are destroyed (the destructor "
                "calls handle.destroy(); promise_type::operator delete uncounts the frame)");
        REQUIRE(lesson10::live_coroutine_frames() == 0);
    }
}

TEST_CASE("the device runs the same tree and gives the host's sum bit for bit", "[10]") {
    const unsigned threads = GENERATE_COPY(from_range(kBlockSizes));
    const Pattern pattern = GENERATE(Pattern::random, Pattern::ones);
    const std::size_t n = 3 * std::size_t{threads} + 5;
    const std::vector<float> values = make_values(pattern, n, "values " + std::to_string(n));
    const float on_host = lesson10::block_sum_on_host(values.data(), n, threads);
    course::for_each_schedule([&] {
        const float on_device = device_sum(values, threads);
        COURSE_REQUIRE_MATCH(check_sum(header("launch_block_sum", pattern, n, threads), values, on_device));
        INFO(header("launch_block_sum", pattern, n, threads)
             << ": the device's sum " << course::detail::show(on_device) << " differs from the host's "
             << course::detail::show(on_host)
             << ". Both copies add in the same order, so the bits must agree: is the body the same text on both "
                "sides, with only the barrier spelled differently?");
        REQUIRE(course::detail::bitwise_equal(on_device, on_host));
    });
}

TEST_CASE("an empty input sums to zero on the host and on the device", "[10]") {
    const unsigned threads = GENERATE(1u, 32u, 1024u);
    INFO("n = 0 with one block of " << threads << " threads: every partial sum is 0 and so is the total");
    REQUIRE(lesson10::block_sum_on_host(nullptr, 0, threads) == 0.0f);
    REQUIRE(device_sum({}, threads) == 0.0f);
}

TEST_CASE("every host thread of the tree passes as many barriers as the device's", "[10]") {
    const unsigned threads = GENERATE(1u, 2u, 7u, 32u, 100u, 1024u);
    const std::size_t n = 2 * std::size_t{threads};
    const std::vector<float> values(n, 1.0f);
    std::vector<float> partial(threads, 0.0f);
    float sum = 0.0f;
    std::vector<BlockThread> block;
    for (unsigned tid = 0; tid < threads; ++tid) {
        block.push_back(lesson10::block_tree_sum_on_host(partial.data(), values.data(), n, tid, threads, &sum));
    }
    INFO("a block of " << threads << " threads: every thread was just created");
    for (const BlockThread& thread : block) REQUIRE(thread.barriers_passed() == 0);
    INFO("creating the threads ran none of them: initial_suspend must suspend");
    REQUIRE(sum == 0.0f);
    const lesson10::HostBlockRun run = run_block_on_host(block);
    const unsigned barriers = lesson10::reference::tree_barriers(threads);
    INFO("after run_block_on_host: one barrier after the first stage and one per tree level, " << barriers
         << " in all; the runner needs one round more than that (the last one runs the code after the last "
            "barrier). Does await_suspend count the barrier in the promise?");
    REQUIRE_FALSE(run.mismatch.has_value());
    REQUIRE(run.rounds == barriers + 1);
    for (const BlockThread& thread : block) {
        REQUIRE(thread.done());
        REQUIRE(thread.barriers_passed() == barriers);
    }
    REQUIRE(sum == static_cast<float>(n));
}

TEST_CASE("the host runner resumes every thread once per round, never one thread on ahead", "[10]") {
    const unsigned threads = GENERATE(2u, 5u, 64u);
    const unsigned barriers = 3;
    std::vector<std::pair<unsigned, unsigned>> log;
    std::vector<int> finished(threads, 0);
    std::vector<BlockThread> block;
    for (unsigned tid = 0; tid < threads; ++tid) block.push_back(logging_thread(tid, barriers, &log, &finished));
    const lesson10::HostBlockRun run = run_block_on_host(block);
    INFO(threads << " threads passing " << barriers << " barriers each: every thread must have logged step s "
                 << "before any thread logs step s + 1 (that is what a barrier means)");
    REQUIRE(log.size() == std::size_t{threads} * (barriers + 1));
    for (std::size_t i = 0; i < log.size(); ++i) {
        CAPTURE(i, log[i].first, log[i].second);
        REQUIRE(log[i].second == i / threads);  // round r logs step r of every thread
    }
    REQUIRE(run.rounds == barriers + 1);
    REQUIRE_FALSE(run.mismatch.has_value());

    std::vector<BlockThread> empty;
    const lesson10::HostBlockRun nothing = run_block_on_host(empty);
    INFO("an empty block: no thread to resume, so no round and no mismatch");
    REQUIRE(nothing.rounds == 0);
    REQUIRE_FALSE(nothing.mismatch.has_value());
}

TEST_CASE("threads that pass different numbers of barriers are all finished and the mismatch is reported", "[10]") {
    // Threads below `split` pass `low` barriers, the others `high`: on a GPU
    // the block would hang or misbehave (so it never runs there); the host
    // runner must finish every thread and say where the block went wrong.
    struct Case {
        unsigned threads, split, low, high;
    };
    const Case c = GENERATE(Case{8, 4, 3, 1}, Case{8, 4, 1, 3}, Case{33, 32, 5, 2}, Case{33, 1, 0, 4},
                            Case{1024, 512, 10, 4});
    const unsigned fewer = std::min(c.low, c.high);
    const unsigned more = std::max(c.low, c.high);
    CAPTURE(c.threads, c.split, c.low, c.high);
    {
        std::vector<std::pair<unsigned, unsigned>> log;
        std::vector<int> finished(c.threads, 0);
        std::vector<BlockThread> block;
        for (unsigned tid = 0; tid < c.threads; ++tid) {
            block.push_back(logging_thread(tid, tid < c.split ? c.low : c.high, &log, &finished));
        }
        const lesson10::HostBlockRun run = run_block_on_host(block);
        INFO("threads 0-" << c.split - 1 << " pass " << c.low << " barriers, threads " << c.split << "-"
                          << c.threads - 1 << " pass " << c.high
                          << ". Every thread must be finished: does the runner go on while ANY thread is "
                             "unfinished (not only while the last one it resumed is)?");
        for (unsigned tid = 0; tid < c.threads; ++tid) {
            CAPTURE(tid);
            REQUIRE(finished[tid] == 1);
            REQUIRE(block[tid].done());
        }
        REQUIRE(run.rounds == more + 1);
        INFO("the threads with " << fewer << " barriers finish in round " << fewer + 1
                                 << " while the others wait at a barrier: the runner must report that round");
        REQUIRE(run.mismatch.has_value());
        REQUIRE(run.mismatch->round == fewer + 1);
        const std::vector<unsigned> early = c.low < c.high ? iota(0, c.split) : iota(c.split, c.threads);
        const std::vector<unsigned> late = c.low < c.high ? iota(c.split, c.threads) : iota(0, c.split);
        REQUIRE(run.mismatch->finished == early);
        REQUIRE(run.mismatch->waiting == late);
        REQUIRE_FALSE(run.mismatch->message.empty());
    }
    INFO("every BlockThread of the mismatched block is destroyed: no frame may be left");
    REQUIRE(lesson10::live_coroutine_frames() == 0);
}

TEST_CASE("every coroutine frame is counted while its BlockThread lives and freed with it", "[10]") {
    std::vector<std::pair<unsigned, unsigned>> log;
    std::vector<int> finished(6, 0);
    {
        std::vector<BlockThread> block;  // no reserve: growing the vector moves the threads
        for (unsigned tid = 0; tid < 6; ++tid) block.push_back(logging_thread(tid, 2, &log, &finished));
        INFO("6 threads created: promise_type::operator new must count each frame");
        REQUIRE(lesson10::live_coroutine_frames() == 6);
        BlockThread moved = std::move(block[0]);
        INFO("a moved-from BlockThread owns nothing; the frame is still counted once");
        REQUIRE(block[0].done());
        REQUIRE(lesson10::live_coroutine_frames() == 6);
        block[1] = std::move(moved);  // frees thread 1's frame, takes thread 0's
        REQUIRE(lesson10::live_coroutine_frames() == 5);
        REQUIRE(block[2].resume());  // thread 2 suspended at its first barrier
        REQUIRE(block[2].barriers_passed() == 1);
        REQUIRE(lesson10::live_coroutine_frames() == 5);
    }
    INFO("threads destroyed unstarted, half-way through and moved: every frame must be freed, by the "
         "destructor (handle.destroy()), exactly once");
    REQUIRE(lesson10::live_coroutine_frames() == 0);
}

