// Lesson 09 tests: histograms of keys, bytes and scores against a CPU count,
// exactly, for uniform, skewed (90% one value) and all-equal inputs, at the
// edge sizes and beyond the grid, with 1, 7, 256 and 1000 bins and block
// sizes that are not the bin count, under every emulator schedule (or
// repeatedly on a GPU).
#include <histogram.hpp>

#include "cpu_reference.hpp"

#include <course/backend.hpp>
#include <course/catch.hpp>
#include <course/compare.hpp>
#include <course/device_buffer.hpp>
#include <course/inputs.hpp>
#include <course/schedules.hpp>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using course::LaunchShape;

enum class Pattern { uniform, skewed, all_equal };

const char* pattern_name(Pattern p) {
    switch (p) {
        case Pattern::uniform: return "uniform";
        case Pattern::skewed: return "skewed (90% one value)";
        case Pattern::all_equal: return "all equal";
    }
    return "?";
}

// The "large" size: 2^24 + 1 on a GPU. On the emulator every atomic is a
// scheduling point, and each check runs under five schedules, so the large
// case there is 2^20 + 1 (still far beyond the emulated grid of 8 SMs).
constexpr std::size_t kLarge = course::kEmulator ? (std::size_t{1} << 20) + 1 : (std::size_t{1} << 24) + 1;

// n values in [0, range) following `pattern`: the skewed ones put 90% on
// range / 2, the all-equal ones are all range - 1 (the last bin: a kernel
// that drops or never flushes the high bins shows it).
std::vector<unsigned> make_keys(Pattern pattern, std::size_t n, unsigned range, const std::string& label) {
    if (pattern == Pattern::all_equal) return std::vector<unsigned>(n, range - 1);
    std::vector<unsigned> keys = course::random_values<unsigned>(n, 0u, range - 1, label);
    if (pattern == Pattern::skewed) {
        const std::vector<unsigned> pick = course::random_values<unsigned>(n, 0u, 9u, label + " hot");
        for (std::size_t i = 0; i < n; ++i) {
            if (pick[i] != 0) keys[i] = range / 2;
        }
    }
    return keys;
}

// What the test was doing, for the first line of a failure.
std::string header(const std::string& call, std::size_t n, const std::string& input, const std::string& shape) {
    std::ostringstream out;
    out << call << " over n = " << n << " " << input << " values" << shape << " (COURSE_SEED=" << course::seed()
        << ")";
    return out.str();
}

// The garbage the tests put in the bins before every call. Not the
// harness's 0xCD poison: the emulator fills shared memory with 0xCD bytes,
// and unzeroed global bins must not look like unzeroed shared bins.
constexpr unsigned kGarbage = 0x5EED0BADu;

// Compares the bins exactly and, when they differ, says what the
// difference most likely means.
course::Comparison check_bins(const std::vector<unsigned>& expected, const std::vector<unsigned>& got,
                              const std::string& what, unsigned threads_per_block) {
    course::CompareContext<unsigned> ctx;
    ctx.name = "bins";
    course::Comparison cmp = course::compare_exact(expected, got, ctx);
    if (cmp.ok) return cmp;
    // Keep the harness's description of the difference; the likely cause
    // below, which knows what a histogram's bins mean, replaces its generic one.
    const std::string difference = cmp.message.substr(0, cmp.message.find("\n  likely cause:"));
    const unsigned long long expected_total = std::accumulate(expected.begin(), expected.end(), 0ull);
    const unsigned long long got_total = std::accumulate(got.begin(), got.end(), 0ull);
    std::ostringstream out;
    out << what << ":\n  " << difference << "\n  the counts add up to " << got_total << ", expected "
        << expected_total << " (every valid key counted once)\n  likely cause: ";
    const unsigned garbage = kGarbage;
    bool all_off_by_garbage = true;
    bool high_bins_empty = threads_per_block < expected.size();
    bool high_bins_present = false;
    for (std::size_t b = 0; b < expected.size(); ++b) {
        if (got[b] - expected[b] != garbage) all_off_by_garbage = false;
        if (b >= threads_per_block) {
            if (expected[b] != 0) high_bins_present = true;
            if (got[b] != 0 && got[b] != garbage) high_bins_empty = false;
        } else if (got[b] != expected[b]) {
            high_bins_empty = false;
        }
    }
    if (expected_total > 0 && std::all_of(got.begin(), got.end(), [&](unsigned v) { return v == garbage; })) {
        out << "every bin still holds the garbage the test put there: the launcher must set the bins to 0 "
               "(cudaMemsetAsync), and each block must add its counts into them.";
    } else if (all_off_by_garbage) {
        out << "every bin is its count plus the garbage the test put in the bins: the launcher must set the bins "
               "to 0 (cudaMemsetAsync, num_bins * sizeof(unsigned) bytes) before the kernel adds into them.";
    } else if (got_total > expected_total ||
               std::any_of(got.begin(), got.end(), [&](unsigned v) { return v > expected_total; })) {
        out << "some bins count more keys than there are: looks like the shared bins were not zeroed (shared "
               "memory holds garbage when a block starts, the emulator fills it with 0xCD bytes): every block "
               "must set all num_bins of its bins to 0, then __syncthreads(), before counting.";
    } else if (high_bins_empty && high_bins_present) {
        out << "every bin from " << threads_per_block << " (the block size) on is wrong or empty: the block zeroes "
            << "or flushes one bin per thread, bins[threadIdx.x]. The number of bins is not the block size: loop "
               "over the bins, for (b = threadIdx.x; b < num_bins; b += blockDim.x).";
    } else if (got_total < expected_total) {
        out << (expected_total - got_total)
            << " keys were lost. Either increments raced (a plain ++ on a shared bin: two threads read the same "
               "old count and both write old + 1; use atomicAdd), or a block flushed its bins before all its "
               "threads had counted (a __syncthreads() is missing between counting and flushing; if this fails "
               "under some emulator schedules only, that is it), or some keys were skipped (does every thread "
               "loop over the whole array with the grid stride?).";
    } else {
        out << "the right number of keys went into the wrong bins: is each key's bin the key itself (or, for "
               "scores, roundf of the score)?";
    }
    return {false, out.str()};
}

// Runs `launch(bins)` on a bins buffer filled with garbage and returns the bins.
template <class Launch>
std::vector<unsigned> run_into_garbage_bins(std::size_t num_bins, Launch launch) {
    course::DeviceBuffer<unsigned> d_bins(std::vector<unsigned>(num_bins, kGarbage));
    launch(d_bins.data());
    COURSE_LAUNCH_CHECK();
    return d_bins.download();
}

enum class KeyKernel { global, shared };

// Checks one key histogram under every schedule.
void require_key_histogram(KeyKernel kernel, Pattern pattern, std::size_t n, unsigned num_bins, LaunchShape shape) {
    const std::string name = kernel == KeyKernel::global ? "launch_histogram_global" : "launch_histogram_shared";
    const std::string label = std::string(pattern_name(pattern)) + " n=" + std::to_string(n) + " bins=" +
                              std::to_string(num_bins);
    CAPTURE(name, pattern_name(pattern), n, num_bins, describe(shape), course::seed());
    const std::vector<unsigned> keys = make_keys(pattern, n, num_bins, label);
    const std::vector<unsigned> expected = lesson09::reference::key_histogram(keys, num_bins);
    const course::DeviceBuffer<unsigned> d_keys(keys);
    const std::string what = header(name + "(" + std::to_string(num_bins) + " bins)", n, pattern_name(pattern),
                                    " with " + describe(shape));
    course::for_each_schedule([&] {
        const std::vector<unsigned> got = run_into_garbage_bins(num_bins, [&](unsigned* bins) {
            if (kernel == KeyKernel::global) {
                lesson09::launch_histogram_global(shape, d_keys.data(), n, num_bins, bins);
            } else {
                lesson09::launch_histogram_shared(shape, d_keys.data(), n, num_bins, bins);
            }
        });
        COURSE_REQUIRE_MATCH(check_bins(expected, got, what, shape.threads_per_block));
    });
}

// A size larger than twice the number of threads the course's own shape
// launches for a large array, so that every thread must loop.
std::size_t size_beyond_the_grid() {
    const LaunchShape shape = lesson09::histogram_launch_shape(std::size_t{1} << 22);
    return static_cast<std::size_t>(std::min<unsigned long long>(2 * shape.total_threads() + 1, 1u << 25));
}

std::vector<std::size_t> sizes_to_test() {
    std::vector<std::size_t> sizes(course::edge_sizes().begin(), course::edge_sizes().end());
    sizes.push_back(size_beyond_the_grid());
    sizes.push_back(kLarge);
    return sizes;
}

}  // namespace

TEST_CASE("shared-memory histograms of every edge size and pattern count keys exactly like the CPU", "[09]") {
    const std::size_t n = GENERATE_COPY(from_range(sizes_to_test()));
    // More bins than threads first: a kernel that keeps one bin per thread
    // then fails with wrong counts before it writes past fewer bins.
    const unsigned num_bins = GENERATE(1000u, 256u, 7u, 1u);
    const Pattern pattern = GENERATE(Pattern::uniform, Pattern::skewed, Pattern::all_equal);
    require_key_histogram(KeyKernel::shared, pattern, n, num_bins, lesson09::histogram_launch_shape(n));
}

TEST_CASE("the number of bins is not the block size: 256 bins with 128 threads, 1000 with 256, and more", "[09]") {
    // Three blocks, so every thread loops; bins both more and fewer than threads.
    const unsigned threads = GENERATE(256u, 128u, 32u, 1024u);
    const unsigned num_bins = GENERATE(1000u, 256u, 7u, 1u);
    const Pattern pattern = GENERATE(Pattern::uniform, Pattern::skewed);
    require_key_histogram(KeyKernel::shared, pattern, 100003, num_bins, LaunchShape{3, threads});
}

TEST_CASE("global-atomic histograms of every edge size count keys exactly like the CPU", "[09]") {
    const std::size_t n = GENERATE_COPY(from_range(sizes_to_test()));
    const unsigned num_bins = GENERATE(1u, 7u, 256u, 1000u);
    const Pattern pattern = GENERATE(Pattern::uniform, Pattern::all_equal);
    require_key_histogram(KeyKernel::global, pattern, n, num_bins, lesson09::histogram_launch_shape(n));
}

TEST_CASE("keys at or above num_bins are dropped, and memory past the bins is never touched", "[09]") {
    const unsigned num_bins = GENERATE(1u, 7u, 1000u);
    const bool shared = GENERATE(false, true);
    const std::size_t n = 20011;
    const std::string name = shared ? "launch_histogram_shared" : "launch_histogram_global";
    CAPTURE(name, num_bins, n, course::seed());
    // Keys up to twice the bin count, and a few of the largest key.
    std::vector<unsigned> keys = course::random_values<unsigned>(n, 0u, 2 * num_bins, "dropped keys");
    for (std::size_t i = 0; i < n; i += 97) keys[i] = UINT_MAX;
    const std::vector<unsigned> expected = lesson09::reference::key_histogram(keys, num_bins);
    const course::DeviceBuffer<unsigned> d_keys(keys);
    const LaunchShape shape = lesson09::histogram_launch_shape(n);
    constexpr std::size_t kGuard = 64;
    course::for_each_schedule([&] {
        course::DeviceBuffer<unsigned> d_bins(std::vector<unsigned>(num_bins + kGuard, kGarbage));
        if (shared) {
            lesson09::launch_histogram_shared(shape, d_keys.data(), n, num_bins, d_bins.data());
        } else {
            lesson09::launch_histogram_global(shape, d_keys.data(), n, num_bins, d_bins.data());
        }
        COURSE_LAUNCH_CHECK();
        const std::vector<unsigned> all = d_bins.download();
        const std::vector<unsigned> got(all.begin(), all.begin() + num_bins);
        const std::vector<unsigned> guard(all.begin() + num_bins, all.end());
        COURSE_REQUIRE_MATCH(course::compare_guard(std::vector<unsigned>(kGuard, kGarbage),
                                                   guard, num_bins, "bins"));
        COURSE_REQUIRE_MATCH(check_bins(expected, got,
                                        header(name, n, "keys in [0, 2 num_bins] and UINT_MAX", " with " +
                                               describe(shape)) +
                                            " (keys >= num_bins must be dropped)",
                                        shape.threads_per_block));
    });
}

#ifdef __CUDACC_EMULATOR__
// Emulator only. On a GPU, the large all-equal inputs above lose counts at
// once when the shared increments are plain ++ (the 32 lanes of a warp read
// the same old count). The emulator never switches threads between a plain
// read and write, so there this test counts the atomics instead: uniform
// keys over 1000 bins almost never repeat within a thread, so counting them
// takes about one atomicAdd per key, however the kernel is written.
TEST_CASE("a block's increments of its shared bins are atomic", "[09][emu-only]") {
    const std::size_t n = 100000;
    const unsigned num_bins = 1000;
    const std::vector<unsigned> keys = make_keys(Pattern::uniform, n, num_bins, "atomic count");
    const course::DeviceBuffer<unsigned> d_keys(keys);
    course::DeviceBuffer<unsigned> d_bins(num_bins);
    const LaunchShape shape{4, 256};
    lesson09::launch_histogram_shared(shape, d_keys.data(), n, num_bins, d_bins.data());
    COURSE_LAUNCH_CHECK();
    (void)d_bins.download();
    const unsigned long long adds = course_emu::last_launch_atomic_counts().add;
    CAPTURE(n, num_bins, describe(shape), adds);
    INFO("launch_histogram_shared counted " << n << " uniform keys into " << num_bins << " bins with only " << adds
                                            << " atomicAdds. Two threads of a block that hit the same shared bin "
                                               "at the same moment must not both read the old count: the "
                                               "increments in shared memory must be atomicAdd, not ++.");
    CHECK(adds >= n / 2);
}
#endif

TEST_CASE("byte histograms of every edge size, any alignment and every pattern count like the CPU", "[09]") {
    std::vector<std::size_t> sizes(course::edge_sizes().begin(), course::edge_sizes().end());
    sizes.push_back(size_beyond_the_grid() * 16);  // the bytes are read 16 at a time
    sizes.push_back((std::size_t{1} << 24) + 1);
    const std::size_t n = GENERATE_COPY(from_range(sizes));
    const Pattern pattern = GENERATE(Pattern::uniform, Pattern::skewed, Pattern::all_equal);
    // The start of the bytes inside the allocation: aligned, odd, and one before a 16-byte boundary.
    const std::size_t offset = GENERATE(0u, 1u, 15u);
    const std::string label = std::string("bytes ") + pattern_name(pattern) + " n=" + std::to_string(n);
    CAPTURE(pattern_name(pattern), n, offset, course::seed());
    const std::vector<unsigned> keys = make_keys(pattern, n, 256, label);
    const std::vector<unsigned char> bytes(keys.begin(), keys.end());
    const std::vector<unsigned> expected = lesson09::reference::byte_histogram(bytes);
    std::vector<unsigned char> padded(offset, 0xCD);
    padded.insert(padded.end(), bytes.begin(), bytes.end());
    const course::DeviceBuffer<unsigned char> d_data(padded);
    const std::string what = header("histogram_bytes", n, pattern_name(pattern),
                                    " starting " + std::to_string(offset) + " bytes into a 256-byte-aligned allocation");
    const auto check = [&] {
        const std::vector<unsigned> got = run_into_garbage_bins(256, [&](unsigned* bins) {
            lesson09::histogram_bytes(d_data.data() == nullptr ? nullptr : d_data.data() + offset, n, bins);
        });
        COURSE_REQUIRE_MATCH(check_bins(expected, got, what, 256));
    };
    // The 2^24 + 1 bytes are one run on the emulator (16 million atomics per schedule).
    if (course::kEmulator && n > kLarge) {
        check();
    } else {
        course::for_each_schedule(check);
    }
}

TEST_CASE("scores are rounded to the nearest integer, and out-of-range scores and NaN are dropped", "[09]") {
    std::vector<std::size_t> sizes(course::edge_sizes().begin(), course::edge_sizes().end());
    sizes.push_back(kLarge);
    const std::size_t n = GENERATE_COPY(from_range(sizes));
    const unsigned threads = GENERATE(64u, 256u);
    CAPTURE(n, threads, course::seed());
    // Scores from -5 to 105, with the special values spread among them.
    std::vector<float> scores = course::random_values<float>(n, -5.0f, 105.0f, "scores n=" + std::to_string(n));
    const float specials[] = {0.0f, -0.0f, 0.5f, 0.49999997f, 99.5f, 100.0f, 100.3f, -0.2f, 1e-30f, -1e-30f,
                              std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                              -std::numeric_limits<float>::infinity(), 50.5f, 2.5f};
    for (std::size_t i = 0; i < n; i += 3) scores[i] = specials[(i / 3) % std::size(specials)];
    const std::vector<unsigned> expected = lesson09::reference::score_histogram(scores);
    const course::DeviceBuffer<float> d_scores(scores);
    const LaunchShape shape = lesson09::histogram_launch_shape(n);
    const LaunchShape used{shape.blocks, threads};
    const std::string what = header("launch_score_histogram", n, "score", " with " + describe(used)) +
                             " (scores in [0, 100] rounded half away from zero; others, inf and NaN dropped)";
    course::for_each_schedule([&] {
        const std::vector<unsigned> got = run_into_garbage_bins(lesson09::kScoreBins, [&](unsigned* bins) {
            lesson09::launch_score_histogram(used, d_scores.data(), n, bins);
        });
        COURSE_REQUIRE_MATCH(check_bins(expected, got, what, used.threads_per_block));
    });
}

// On the emulator the distribution's Thrust (CPP device system) calls the
// lambda for one score after another: 2^20 + 1 scores there, 2^24 + 1 on a GPU.
TEST_CASE("the Thrust score histogram (thrust::for_each with a device lambda) counts like the CPU", "[09][thrust]") {
    const std::size_t n = GENERATE(0u, 1u, 257u, 1009u, course::kEmulator ? (1u << 20) + 1 : (1u << 24) + 1);
    CAPTURE(n, course::seed());
    std::vector<float> scores = course::random_values<float>(n, -5.0f, 105.0f, "thrust scores");
    for (std::size_t i = 0; i < n; i += 7) scores[i] = i % 2 ? std::numeric_limits<float>::quiet_NaN() : 99.5f;
    const std::vector<unsigned> expected = lesson09::reference::score_histogram(scores);
    const course::DeviceBuffer<float> d_scores(scores);
    course::for_each_schedule([&] {
        const std::vector<unsigned> got = run_into_garbage_bins(
            lesson09::kScoreBins, [&](unsigned* bins) { lesson09::thrust_score_histogram(d_scores.data(), n, bins); });
        COURSE_REQUIRE_MATCH(check_bins(expected, got, header("thrust_score_histogram", n, "score", ""), 1024));
    });
}

TEST_CASE("the number of bins must be 1 to kMaxBins", "[09]") {
    course::DeviceBuffer<unsigned> d_bins(lesson09::kMaxBins + 1);
    const unsigned bad = GENERATE(0u, lesson09::kMaxBins + 1);
    CAPTURE(bad);
    INFO("num_bins = 0 has no bin to count in, and more than kMaxBins bins do not fit in 48 KiB of shared memory: "
         "throw std::invalid_argument");
    CHECK_THROWS_AS(lesson09::launch_histogram_shared(LaunchShape{1, 256}, nullptr, 0, bad, d_bins.data()),
                    std::invalid_argument);
    CHECK_THROWS_AS(lesson09::launch_histogram_global(LaunchShape{1, 256}, nullptr, 0, bad, d_bins.data()),
                    std::invalid_argument);
}

TEST_CASE("the launch shape uses no more blocks than the data needs, and the SMs for a large array", "[09]") {
    const std::size_t n = GENERATE_COPY(from_range(sizes_to_test()));
    const LaunchShape shape = lesson09::histogram_launch_shape(n);
    CAPTURE(n, describe(shape));
    INFO("at least one block of 1 to 1024 threads, and no block whose threads would all find no key: every "
         "block flushes all its bins, so idle blocks cost global atomics");
    CHECK(shape.blocks >= 1u);
    CHECK(shape.threads_per_block >= 1u);
    CHECK(shape.threads_per_block <= 1024u);
    CHECK(shape.total_threads() < std::max<std::size_t>(n, 1) + shape.threads_per_block);
    if (n >= (std::size_t{1} << 20)) {
        INFO("a large array should get at least one block per SM (" << course::sm_count()
                                                                    << ") and fewer threads than keys");
        CHECK(shape.blocks >= static_cast<unsigned>(course::sm_count()));
        CHECK(shape.total_threads() < n);
    }
}
