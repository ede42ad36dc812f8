// Lesson 05 tests: the warp-shuffle sum of doubles and the atomicAdd for
// double built from atomicCAS, against a compensated CPU sum.
#include <warp_reduce.hpp>

#include "cpu_reference.hpp"

#include <course/backend.hpp>
#include <course/catch.hpp>
#include <course/compare.hpp>
#include <course/device_buffer.hpp>
#include <course/inputs.hpp>
#include <course/schedules.hpp>

#include <cuda_runtime.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace {

using course::LaunchShape;

// One launcher of the contract, and where its likely mistakes live.
struct Summer {
    const char* name;
    void (*launch)(LaunchShape, int, const double*, double*);
    bool uses_your_cas;  // every element goes through atomic_add_cas
};

const Summer kSum{"launch_sum", lesson05::launch_sum, false};
const Summer kCasEach{"launch_cas_atomic_add_each", lesson05::launch_cas_atomic_add_each, true};
const Summer kNativeEach{"launch_native_atomic_add_each", lesson05::launch_native_atomic_add_each, false};

std::string show(double v) {
    std::ostringstream out;
    out.precision(17);
    if (std::isnan(v)) return "NaN";
    if (v == 0.0) return std::signbit(v) ? "-0.0" : "+0.0";
    out << v;
    return out.str();
}

// Runs `f` on `values` with `shape`, the result filled with NaN first.
double run(const Summer& f, LaunchShape shape, const std::vector<double>& values) {
    course::DeviceBuffer<double> d_values(values);
    course::DeviceBuffer<double> d_result(1);
    d_result.poison();
    f.launch(shape, static_cast<int>(values.size()), d_values.data(), d_result.data());
    COURSE_LAUNCH_CHECK();
    return d_result.download()[0];
}

// The most likely reason for a wrong sum, from what came back.
std::string likely_cause(const Summer& f, LaunchShape shape, const std::vector<double>& values, double got,
                         long double tolerance) {
    const lesson05::reference::ExactSum exact = lesson05::reference::sum(values);
    const std::size_t threads = static_cast<std::size_t>(shape.total_threads());
    if (std::isnan(got) && !exact.has_nan) {
        return "the sum is NaN although no input is: *result must be set to 0 before anything is added (the "
               "test fills it with NaN first).";
    }
    if (!std::isnan(got) && exact.has_nan) {
        return "an input is NaN, so the sum must be NaN: is every element added, and does the CAS loop compare "
               "bit patterns (a NaN is never == itself, but its bits are)?";
    }
    if (got == 0.0 && exact.sum != 0) {
        return f.uses_your_cas ? "nothing was added to *result: does atomic_add_cas store its sum with atomicCAS?"
                               : "nothing was added to *result: does lane 0 of warp 0 add the block's total with "
                                 "one atomicAdd, once the warps' sums are in shared memory?";
    }
    if (std::fabs(got) > 1e60 && exact.magnitude < 1e50L) {
        return "the sum is huge (the emulator fills fresh shared memory with 0xCD bytes, about -6.3e66 as a "
               "double, and a lane outside a shuffle's mask reads the same): warp 0 read a warp's slot before "
               "it was written (a missing __syncthreads() between the stores and the reads), or a partial warp "
               "added what a lane that does not exist \"sent\" (skip lane + offset >= lanes).";
    }
    if (values.size() > threads) {
        long double first_part = 0;
        for (std::size_t i = 0; i < threads; ++i) first_part += values[i];
        if (std::fabs(static_cast<long double>(got) - first_part) <= tolerance + 1e-9L) {
            return "the result is the sum of the first " + std::to_string(threads) +
                   " elements only, one per launched thread: every thread must loop over the array in steps of "
                   "the whole grid (gridDim.x * blockDim.x).";
        }
    }
    if (f.uses_your_cas) {
        return "additions were lost under contention: each try of the CAS loop must add val to the pattern it "
               "assumes (the one the previous atomicCAS returned), and retry until atomicCAS returns exactly "
               "that pattern.";
    }
    if (shape.threads_per_block % 32 != 0) {
        return "this block size is not a multiple of 32, so its last warp has only " +
               std::to_string(shape.threads_per_block % 32) +
               " lanes: every shuffle must name exactly the lanes that exist, and a lane must not add the "
               "shuffle result of a lane that does not exist; warp 0 must read 0.0 past the last warp's slot.";
    }
    return "part of each warp or block is missing or counted twice: the shuffle offsets must be 16, 8, 4, 2, 1 "
           "(lane 0 then holds all 32 lanes), every warp's sum must reach warp_sums before warp 0 reads them "
           "(__syncthreads()), and only one lane per block may add to *result.";
}

// Compares with the CPU within n * eps * sum|x|, or exactly.
course::Comparison check(const Summer& f, LaunchShape shape, const std::vector<double>& values, double got,
                         bool exact_required = false) {
    const lesson05::reference::ExactSum exact = lesson05::reference::sum(values);
    const long double tolerance =
        exact_required ? 0.0L : lesson05::reference::tolerance(values.size(), exact.magnitude);
    const bool ok = exact.has_nan ? std::isnan(got)
                    : values.empty()
                        ? std::bit_cast<std::uint64_t>(got) == 0  // +0.0 exactly
                        : !std::isnan(got) && std::fabs(static_cast<long double>(got) - exact.sum) <= tolerance;
    if (ok) return {};
    std::ostringstream out;
    out.precision(17);
    out << f.name << " returned " << show(got) << ", expected "
        << (exact.has_nan ? std::string("NaN") : values.empty() ? std::string("+0.0") : show(static_cast<double>(exact.sum)))
        << " (n = " << values.size() << ", " << describe(shape) << ", "
        << (exact_required ? std::string("exact: every partial sum is an integer a double holds exactly")
                           : "tolerance n*eps*sum|x| = " + show(static_cast<double>(tolerance)))
        << ", seed " << course::seed() << ")\n  likely cause: " << likely_cause(f, shape, values, got, tolerance);
    return {false, out.str()};
}

std::vector<double> random_doubles(std::size_t n, const std::string& label) {
    return course::random_values<double>(n, -1.0, 1.0, label);
}

// Integers lo..hi as doubles: every partial sum is exact, so any order must
// give exactly the CPU's sum.
std::vector<double> integers(std::size_t n, long long lo, long long hi, const std::string& label) {
    const std::vector<long long> drawn = course::random_values<long long>(n, lo, hi, label);
    return std::vector<double>(drawn.begin(), drawn.end());
}

}  // namespace

TEST_CASE("launch_sum matches the CPU for every size, from empty to one larger than the grid", "[05]") {
    std::vector<int> sizes = course::edge_sizes();
    sizes.push_back((1 << 20) + 3);
    sizes.push_back(static_cast<int>(lesson05::sum_launch_shape(1 << 22).total_threads() + 1));
    const int n = GENERATE_COPY(from_range(sizes));
    const std::vector<double> values = random_doubles(static_cast<std::size_t>(n), "sizes n=" + std::to_string(n));
    const LaunchShape shape = lesson05::sum_launch_shape(n);
    CAPTURE(n, describe(shape), course::seed());
    course::for_each_schedule([&] { COURSE_REQUIRE_MATCH(check(kSum, shape, values, run(kSum, shape, values))); });
}

TEST_CASE("every block size from 32 to 1024 gives the sum under every schedule", "[05]") {
    const unsigned threads = GENERATE(32u, 64u, 128u, 256u, 512u, 1024u);
    const LaunchShape shape{3, threads};
    // Every thread loops four times and a bit: the unrolled part and the tail.
    const std::size_t n = 4 * shape.total_threads() + 2 * threads + 5;
    const std::vector<double> values = random_doubles(n, "block " + std::to_string(threads));
    CAPTURE(n, describe(shape), course::seed());
    course::for_each_schedule([&] { COURSE_REQUIRE_MATCH(check(kSum, shape, values, run(kSum, shape, values))); });
}

TEST_CASE("blocks whose last warp is partial (sizes that are not multiples of 32) give the sum", "[05]") {
    // 1 and 20: a single warp of fewer than 32 lanes; 33, 48, 100, 1000: full
    // warps and then a partial one (1, 16, 4 and 8 lanes).
    const unsigned threads = GENERATE(1u, 20u, 33u, 48u, 100u, 1000u);
    const unsigned blocks = GENERATE(1u, 3u);
    const LaunchShape shape{blocks, threads};
    const std::vector<double> values = random_doubles(5000, "partial warps");
    CAPTURE(describe(shape), course::seed());
    course::for_each_schedule([&] { COURSE_REQUIRE_MATCH(check(kSum, shape, values, run(kSum, shape, values))); });
}

TEST_CASE("inputs whose partial sums are exact give exactly the CPU's sum", "[05]") {
    const LaunchShape shape = GENERATE(LaunchShape{0, 0}, LaunchShape{5, 1000}, LaunchShape{2, 64});
    const std::size_t n = (1 << 20) + 3;
    const LaunchShape used = shape.blocks == 0 ? lesson05::sum_launch_shape(static_cast<int>(n)) : shape;
    CAPTURE(describe(used), course::seed());
    SECTION("all ones: the sum is n") {
        const std::vector<double> ones(n, 1.0);
        COURSE_REQUIRE_MATCH(check(kSum, used, ones, run(kSum, used, ones), true));
    }
    SECTION("alternating signs of magnitude 2^30: large terms that nearly cancel") {
        std::vector<double> values = integers(n, 0, 1000, "alternating");
        for (std::size_t i = 0; i < n; ++i) values[i] = (i % 2 == 0 ? 1.0 : -1.0) * (1073741824.0 + values[i]);
        COURSE_REQUIRE_MATCH(check(kSum, used, values, run(kSum, used, values), true));
    }
}

TEST_CASE("your CAS-built atomicAdd gives exactly the native atomicAdd's sum under contention", "[05]") {
    // Integers: every order of the additions gives the same, exact sum, so
    // your loop, the hardware's atomicAdd and the CPU must agree to the bit.
    const LaunchShape shape = GENERATE(LaunchShape{1, 1}, LaunchShape{4, 64}, LaunchShape{8, 256});
    const std::vector<double> values = integers(20000, -1000, 1000, "contention");
    CAPTURE(describe(shape), course::seed());
    course::for_each_schedule([&] {
        const double native = run(kNativeEach, shape, values);
        COURSE_REQUIRE_MATCH(check(kNativeEach, shape, values, native, true));
        const double yours = run(kCasEach, shape, values);
        INFO("the hardware's atomicAdd(double*) gave " << show(native));
        COURSE_REQUIRE_MATCH(check(kCasEach, shape, values, yours, true));
    });
}

TEST_CASE("your CAS-built atomicAdd sums random doubles within the tolerance", "[05]") {
    const int n = GENERATE(1, 33, 1009, (1 << 14) + 1);
    const LaunchShape shape{8, 256};
    const std::vector<double> values = random_doubles(static_cast<std::size_t>(n), "cas n=" + std::to_string(n));
    CAPTURE(n, describe(shape), course::seed());
    COURSE_REQUIRE_MATCH(check(kCasEach, shape, values, run(kCasEach, shape, values)));
}

TEST_CASE("a NaN makes the sum NaN, and an empty array sums to +0.0", "[05]") {
    const Summer f = GENERATE(as<Summer>{}, kSum, kCasEach);
    const LaunchShape shape{2, 64};
    CAPTURE(f.name, describe(shape), course::seed());
    SECTION("one NaN among a thousand values") {
        std::vector<double> values = random_doubles(1000, "nan");
        values[700] = std::numeric_limits<double>::quiet_NaN();
        COURSE_REQUIRE_MATCH(check(f, shape, values, run(f, shape, values)));
    }
    SECTION("n = 0: +0.0, not the NaN the test filled the result with") {
        COURSE_REQUIRE_MATCH(check(f, shape, {}, run(f, shape, {})));
    }
}

TEST_CASE("sum_launch_shape fits the device and never launches more blocks than the data needs", "[05]") {
    const int sm_count = course::sm_count();
    std::vector<int> sizes = course::edge_sizes();
    sizes.push_back(1 << 22);
    for (const int n : sizes) {
        const LaunchShape shape = lesson05::sum_launch_shape(n);
        CAPTURE(n, describe(shape));
        REQUIRE(shape.blocks >= 1);
        REQUIRE(shape.threads_per_block >= 1);
        REQUIRE(shape.threads_per_block <= 1024);
        const unsigned long long needed =
            (static_cast<unsigned long long>(std::max(n, 1)) + shape.threads_per_block - 1) / shape.threads_per_block;
        INFO("a block beyond ceil(n / threads_per_block) = " << needed << " has no element to add, only an atomic");
        CHECK(shape.blocks <= needed);
    }
    const int n = 1 << 22;
    const LaunchShape big = lesson05::sum_launch_shape(n);
    CAPTURE(describe(big), sm_count);
    INFO("for n = 2^22 the grid should give every SM at least one block, with fewer threads than elements "
         "(so that each thread loops and the grid issues few atomics)");
    CHECK(big.blocks >= static_cast<unsigned>(sm_count));
    CHECK(big.total_threads() < static_cast<unsigned long long>(n));
}

#ifdef __CUDACC_EMULATOR__
TEST_CASE("an uncontended atomic_add_cas issues exactly one atomicCAS and no atomicAdd", "[05][emu-only]") {
    // One thread: nobody else touches the word, so each addition's first CAS
    // must succeed, and the loop must notice that from what atomicCAS returned.
    const std::vector<double> values = integers(100, -50, 50, "uncontended");
    const double got = run(kCasEach, LaunchShape{1, 1}, values);
    const course_emu::AtomicCounts counts = course_emu::last_launch_atomic_counts();
    COURSE_REQUIRE_MATCH(check(kCasEach, LaunchShape{1, 1}, values, got, true));
    INFO("100 additions by one thread issued " << counts.cas << " atomicCAS and " << counts.add
         << " atomicAdd. Each needs exactly one atomicCAS: read the word with a plain load, and leave the loop "
            "when atomicCAS returns the pattern you assumed. The hardware's atomicAdd(double*) is the yardstick, "
            "not a part of your loop.");
    CHECK(counts.add == 0u);
    CHECK(counts.cas == 100u);
}

TEST_CASE("launch_sum issues one atomic per block", "[05][emu-only]") {
    const LaunchShape shape = GENERATE(LaunchShape{5, 256}, LaunchShape{3, 48}, LaunchShape{2, 1024});
    const std::vector<double> values = random_doubles(50000, "atomics per block");
    CAPTURE(describe(shape), course::seed());
    // for_each_schedule runs one worker: blocks one after another, so even a
    // CAS-based atomic never has to retry, and each block's update counts once.
    course::for_each_schedule([&] {
        const double got = run(kSum, shape, values);
        const course_emu::AtomicCounts counts = course_emu::last_launch_atomic_counts();
        COURSE_REQUIRE_MATCH(check(kSum, shape, values, got));
        INFO(shape.blocks << " blocks issued " << counts.total << " atomics: the warps' sums meet in shared "
             "memory and warp 0 reduces them, so that only one lane per block adds to *result.");
        CHECK(counts.total == shape.blocks);
    });
}
#endif
