// Lesson 04 tests: sums of ints, floats and doubles by a shared-memory tree,
// against an exact CPU sum, at every edge size, every block size from 32 to
// 1024 and under every emulator schedule (or repeatedly on a GPU).
#include <reduce.hpp>

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
#include <sstream>
#include <string>
#include <vector>

namespace {

using course::LaunchShape;

enum class Element { int32, float32, float64 };
enum class Pattern { random, ones, alternating };

const char* element_name(Element e) {
    switch (e) {
        case Element::int32: return "int";
        case Element::float32: return "float";
        case Element::float64: return "double";
    }
    return "?";
}

const char* pattern_name(Pattern p) {
    switch (p) {
        case Pattern::random: return "random";
        case Pattern::ones: return "all ones";
        case Pattern::alternating: return "alternating signs, large magnitudes";
    }
    return "?";
}

// The large magnitude of the alternating inputs: big enough that a thread
// whose share is all of one sign (an even grid stride) overflows an int or
// loses the small parts in a float, small enough to leave room for them.
template <class T>
T large_magnitude() {
    if constexpr (std::is_same_v<T, int>) {
        return INT_MAX - 1000;
    } else if constexpr (std::is_same_v<T, float>) {
        return 1048576.0f;  // 2^20: float keeps 3 bits below the point
    } else {
        return 1099511627776.0;  // 2^40
    }
}

// n values of type T following `pattern`, drawn from the run's seed.
template <class T>
std::vector<T> make_values(Pattern pattern, int n, const std::string& label) {
    const std::size_t count = static_cast<std::size_t>(n);
    if (pattern == Pattern::ones) return std::vector<T>(count, T(1));
    std::vector<T> values;
    if constexpr (std::is_same_v<T, int>) {
        values = course::random_values<int>(count, INT_MIN, INT_MAX, label);
    } else {
        values = course::random_values<T>(count, T(-1), T(1), label);
    }
    if (pattern == Pattern::alternating) {
        // +(big - small), -(big - small'), ...: the sum is small, the magnitudes are not.
        const std::vector<T> small = course::random_values<T>(count, T(0), std::is_same_v<T, int> ? T(1000) : T(1),
                                                              label + " small");
        for (std::size_t i = 0; i < count; ++i) {
            const T v = large_magnitude<T>() - small[i];
            values[i] = i % 2 == 0 ? v : T(-v);
        }
    }
    return values;
}

// Runs launch_sum on `values` with `shape`; *out is filled with garbage first.
template <class In, class Out>
Out run_sum(LaunchShape shape, const std::vector<In>& values) {
    course::DeviceBuffer<In> d_in(values);
    course::DeviceBuffer<Out> d_out(1);
    d_out.poison();
    lesson04::launch_sum(shape, d_in.data(), static_cast<int>(values.size()), d_out.data());
    COURSE_LAUNCH_CHECK();
    return d_out.download()[0];
}

const char* const kLikelyRace =
    "If this fails under some emulator schedules and not others (the schedule is named below), threads race on "
    "shared memory: a __syncthreads() missing between two levels of the tree, or a slot overwritten before "
    "another thread has read it (in the last warp, read in one phase and write in the next, with __syncwarp() "
    "between). If it fails only for some block sizes: does the tree start at blockDim.x / 2, and is the dynamic "
    "shared memory sized from the block size?";

std::string header(const char* type, std::size_t n, LaunchShape shape) {
    std::ostringstream out;
    out << "launch_sum(const " << type << "*) over n = " << n << " with " << describe(shape) << " (block size "
        << shape.threads_per_block << ", COURSE_SEED=" << course::seed() << ")";
    return out.str();
}

// How many leading elements one pass of the grid covers: what a kernel
// without the grid-stride loop sums.
std::size_t one_per_thread(std::size_t n, LaunchShape shape) {
    return static_cast<std::size_t>(std::min<unsigned long long>(n, shape.total_threads()));
}

course::Comparison check_int(const std::vector<int>& values, LaunchShape shape, long long got) {
    const long long expected = lesson04::reference::sum(values);
    if (got == expected) return {};
    std::ostringstream out;
    out << header("int", values.size(), shape) << " returned " << got << ", expected " << expected
        << " (integer sums are exact)\n  likely cause: ";
    const std::uint64_t difference = static_cast<std::uint64_t>(got) - static_cast<std::uint64_t>(expected);
    const std::size_t covered = one_per_thread(values.size(), shape);
    const std::vector<int> first(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(covered));
    if (difference == static_cast<std::uint64_t>(course::poison_value<long long>())) {
        out << "the result is the sum plus the garbage the test put in *out: the launcher must set *out to 0 "
               "(cudaMemsetAsync) before the kernel adds into it.";
    } else if (got == static_cast<long long>(course::poison_value<long long>())) {
        out << "*out still holds the garbage the test put there: was it zeroed, and does thread 0 of each block "
               "atomicAdd the block's total into it?";
    } else if (covered < values.size() && got == lesson04::reference::sum(first)) {
        out << "only the first " << covered << " elements, one per thread, were summed: each thread must loop "
            << "over the array with the grid stride (gridDim.x * blockDim.x).";
    } else if (difference % (std::uint64_t{1} << 32) == 0) {
        out << "the sum is off by a multiple of 2^32: a 32-bit int overflowed. Accumulate in long long, in each "
               "thread, in shared memory and in the atomic.";
    } else {
        out << kLikelyRace;
    }
    return {false, out.str()};
}

template <class In>
course::Comparison check_float(const std::vector<In>& values, LaunchShape shape, double got, bool exact) {
    const lesson04::reference::ExactSum expected = lesson04::reference::exact_sum(values);
    const long double tolerance = exact ? 0.0L : lesson04::reference::tolerance(values.size(), expected.sum_of_abs);
    const long double error = std::fabs(static_cast<long double>(got) - expected.sum);
    if (error <= tolerance) return {};
    std::ostringstream out;
    out.precision(17);
    out << header(std::is_same_v<In, float> ? "float" : "double", values.size(), shape) << " returned " << got
        << ", expected " << static_cast<double>(expected.sum) << ", off by " << static_cast<double>(error)
        << "; allowed: ";
    if (exact) {
        out << "0 (every partial sum of ones is an integer below 2^53, so no addition rounds)";
    } else {
        out << static_cast<double>(tolerance) << " = n * 2^-53 * sum(|x|)";
    }
    out << "\n  likely cause: ";
    const std::size_t covered = one_per_thread(values.size(), shape);
    const std::vector<In> first(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(covered));
    if (std::isnan(got)) {
        out << "NaN. The test fills *out with NaN: the launcher must set it to 0 (cudaMemsetAsync) before the "
               "kernel adds into it. (Or the tree read a shared-memory slot that no thread wrote.)";
    } else if (covered < values.size() &&
               std::fabs(static_cast<long double>(got) - lesson04::reference::exact_sum(first).sum) <= tolerance) {
        out << "only the first " << covered << " elements, one per thread, were summed: each thread must loop "
            << "over the array with the grid stride (gridDim.x * blockDim.x).";
    } else if (got == 0.0 && expected.sum != 0) {
        out << "nothing was added: does thread 0 of each block atomicAdd the block's total into *out?";
    } else if (error <= std::ldexp(1.0L, -12) * expected.sum_of_abs) {
        out << "the error is small, but far larger than adding in double can make it: is some sum kept in the "
               "input's type (float) instead of double, in the threads or in shared memory?";
    } else {
        out << kLikelyRace;
    }
    return {false, out.str()};
}

// Checks launch_sum on inputs of `element` and `pattern` under every
// emulator schedule (or repeatedly on a GPU).
void require_sum(Element element, Pattern pattern, int n, LaunchShape shape) {
    const std::string label = std::string(pattern_name(pattern)) + " n=" + std::to_string(n);
    CAPTURE(element_name(element), pattern_name(pattern), n, describe(shape), course::seed());
    const bool exact = pattern == Pattern::ones;
    switch (element) {
        case Element::int32: {
            const std::vector<int> values = make_values<int>(pattern, n, label);
            course::for_each_schedule(
                [&] { COURSE_REQUIRE_MATCH(check_int(values, shape, run_sum<int, long long>(shape, values))); });
            break;
        }
        case Element::float32: {
            const std::vector<float> values = make_values<float>(pattern, n, label);
            course::for_each_schedule([&] {
                COURSE_REQUIRE_MATCH(check_float(values, shape, run_sum<float, double>(shape, values), exact));
            });
            break;
        }
        case Element::float64: {
            const std::vector<double> values = make_values<double>(pattern, n, label);
            course::for_each_schedule([&] {
                COURSE_REQUIRE_MATCH(check_float(values, shape, run_sum<double, double>(shape, values), exact));
            });
            break;
        }
    }
}

// A size larger than twice the number of threads your own shape launches
// for a large array, so that every thread must go round its loop.
int size_beyond_the_grid() {
    const LaunchShape shape = lesson04::sum_launch_shape(1 << 22);
    return static_cast<int>(std::min<unsigned long long>(2 * shape.total_threads() + 1, 1u << 25));
}

constexpr int kLarge = (1 << 20) + 3;

}  // namespace

TEST_CASE("random arrays of every edge size, and larger than the grid, sum like the CPU", "[04]") {
    std::vector<int> sizes = course::edge_sizes();
    sizes.push_back(size_beyond_the_grid());
    sizes.push_back(kLarge);
    const int n = GENERATE_COPY(from_range(sizes));
    const Element element = GENERATE(Element::int32, Element::float32, Element::float64);
    require_sum(element, Pattern::random, n, lesson04::sum_launch_shape(n));
}

TEST_CASE("every power-of-two block size from 32 to 1024 gives the CPU's sum", "[04]") {
    // Three blocks: the threads loop over the larger array, and the tree runs
    // from blockDim.x / 2 down, with a different number of levels each time.
    const unsigned threads = GENERATE(32u, 64u, 128u, 256u, 512u, 1024u);
    const int n = GENERATE(257, 100003);
    const Element element = GENERATE(Element::int32, Element::float32, Element::float64);
    require_sum(element, Pattern::random, n, LaunchShape{3, threads});
}

TEST_CASE("a sum of ones is exactly n: no addition rounds", "[04]") {
    const int n = GENERATE_COPY(size_beyond_the_grid(), kLarge);
    const Element element = GENERATE(Element::int32, Element::float32, Element::float64);
    require_sum(element, Pattern::ones, n, lesson04::sum_launch_shape(n));
}

TEST_CASE("alternating signs of large magnitude cancel to the CPU's sum", "[04]") {
    const int n = GENERATE(1009, 100001, kLarge);
    const Element element = GENERATE(Element::int32, Element::float32, Element::float64);
    require_sum(element, Pattern::alternating, n, lesson04::sum_launch_shape(n));
}

TEST_CASE("an empty array sums to 0 in a result the launcher sets itself", "[04]") {
    const LaunchShape shape = GENERATE(lesson04::sum_launch_shape(0), LaunchShape{2, 1024});
    const Element element = GENERATE(Element::int32, Element::float32, Element::float64);
    require_sum(element, Pattern::random, 0, shape);
}

// One test case for the launch shape, the small sizes and a large one: the
// checks of the small sizes alone would pass an untouched starter's fixed
// shape, and an untouched starter earns no points.
TEST_CASE("the launch shape is a power-of-two block, no more blocks than the data needs, and sized from the SM "
          "count for a large array", "[04]") {
    for (const int n : course::edge_sizes()) {
        const LaunchShape shape = lesson04::sum_launch_shape(n);
        CAPTURE(n, describe(shape));
        const unsigned threads = shape.threads_per_block;
        INFO("the tree halves the block at every level, so the block size must be a power of two from 32 to 1024");
        CHECK(threads >= 32u);
        CHECK(threads <= 1024u);
        CHECK((threads & (threads - 1)) == 0u);
        INFO("at least one block, and no block whose threads would all find nothing to add");
        CHECK(shape.blocks >= 1u);
        CHECK(shape.blocks <= std::max(1u, (static_cast<unsigned>(n) + threads - 1) / threads));
    }
    const int n = 1 << 24;
    const int sms = course::sm_count();
    const LaunchShape shape = lesson04::sum_launch_shape(n);
    CAPTURE(n, sms, describe(shape));
    INFO("a large array should get at least one block per SM and fewer threads than elements, so threads loop");
    CHECK(shape.blocks >= static_cast<unsigned>(sms));
    CHECK(shape.total_threads() < static_cast<unsigned long long>(n));
}
