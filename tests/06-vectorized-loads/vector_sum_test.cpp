// Lesson 06 tests: sums with double2 and float4 loads (every size, aligned
// and misaligned starts) and a complex sum, against a compensated CPU sum.
#include <vector_sum.hpp>

#include "cpu_reference.hpp"

#include <course/backend.hpp>
#include <course/catch.hpp>
#include <course/compare.hpp>
#include <course/device_buffer.hpp>
#include <course/inputs.hpp>
#include <course/schedules.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

namespace {

using course::LaunchShape;
using lesson06::reference::Sum;

// Guard elements around the input: a kernel that reads before values[0] (a
// pointer rounded down to 16 bytes) or after values[n - 1] adds one of them,
// which no tolerance hides.
constexpr double kGuardValue = 1.0e30;
constexpr std::size_t kGuard = 8;

// Random magnitudes in [0.5, 1.5) with random signs: no element is small
// enough to vanish in the tolerance, so a skipped element always shows.
template <class T>
std::vector<T> random_input(int n, const std::string& label) {
    std::vector<T> v = course::random_values<T>(static_cast<std::size_t>(n), T(0.5), T(1.5), label);
    const std::vector<int> signs = course::random_values<int>(v.size(), 0, 1, label + " signs");
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = signs[i] == 0 ? -v[i] : v[i];
    return v;
}

// +-(1e12 + r): the sum nearly cancels, while one missed element is 1e12 off.
std::vector<double> alternating_input(int n, const std::string& label) {
    std::vector<double> v = course::random_values<double>(static_cast<std::size_t>(n), 0.0, 1.0, label);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = (i % 2 == 0 ? 1.0 : -1.0) * (1.0e12 + v[i]);
    return v;
}

// Uploads guards, then `values` starting `offset` elements into the
// allocation (cudaMalloc'd memory starts on a 256-byte boundary, so offset 1
// of a double is 8-byte but not 16-byte aligned), then guards again.
template <class T>
class PlacedInput {
public:
    PlacedInput(const std::vector<T>& values, std::size_t offset) : offset_(offset), buffer_(layout(values, offset)) {}
    const T* data() const { return buffer_.data() + kGuard + offset_; }

private:
    static std::vector<T> layout(const std::vector<T>& values, std::size_t offset) {
        std::vector<T> all(kGuard + offset, static_cast<T>(kGuardValue));
        all.insert(all.end(), values.begin(), values.end());
        all.insert(all.end(), kGuard, static_cast<T>(kGuardValue));
        return all;
    }
    std::size_t offset_;
    course::DeviceBuffer<T> buffer_;
};

// Elements before the first 16-byte boundary, as the contract counts them.
template <class T>
std::size_t head_length(std::size_t offset, std::size_t n) {
    const std::size_t misalignment = ((kGuard + offset) * sizeof(T)) % 16;
    return std::min(misalignment == 0 ? 0 : (16 - misalignment) / sizeof(T), n);
}

template <class T>
long double partial_sum(const std::vector<T>& v, std::size_t from, std::size_t to) {
    long double s = 0;
    for (std::size_t i = from; i < to; ++i) s += v[i];
    return s;
}

// Compares a GPU sum with the reference and, when it is off, says what the
// difference looks like: a missing head, a missing tail, reads outside the
// array, an uninitialised result, or elements skipped or counted twice.
template <class T>
course::Comparison check_sum(const char* function, const std::vector<T>& values, std::size_t offset, double got) {
    const std::size_t n = values.size();
    const Sum expected = lesson06::reference::sum(values);
    if (lesson06::reference::close_enough(expected, n, got)) return {};
    const long double difference = static_cast<long double>(got) - expected.value;
    const long double tolerance = lesson06::reference::tolerance(n, expected.magnitude);
    const auto explains = [&](long double missing) {
        return std::fabs(difference + missing) <= tolerance + 1e-9L * std::fabs(missing);
    };
    constexpr std::size_t per_vector = 16 / sizeof(T);
    const std::size_t head = head_length<T>(offset, n);
    const std::size_t tail = (n - head) % per_vector;

    std::ostringstream out;
    out.precision(17);
    out << function << " returned " << got << ", expected " << static_cast<double>(expected.value) << " (n = " << n
        << ", input " << (offset == 0 ? "16-byte aligned" : "offset by " + std::to_string(offset) + " element(s)")
        << ", tolerance " << static_cast<double>(tolerance) << ")\n  likely cause: ";
    if (std::isnan(got)) {
        out << "the result is NaN, the value the test filled *result with: does the launcher set *result to 0 "
               "before the kernel adds to it, and does every block add its total (n = 0 included)?";
    } else if (std::fabs(difference) >= 0.5L * kGuardValue) {
        out << "the sum contains one of the guard values (1e30) placed just before and after the array: the "
               "kernel read outside values[0..n). Rounding the pointer down to a 16-byte boundary reads the "
               "element before values[0]; a vector that runs past n reads after the end.";
    } else if (got == 0.0 && expected.value != 0) {
        out << "the sum is exactly 0: no element was added. Does each thread add its elements (head, "
               "vectors and tail; below one vector's worth, every element is in the head or the tail), and "
               "is its sum reduced over the block and added to *result?";
    } else if (tail > 0 && explains(partial_sum(values, n - tail, n))) {
        out << "the last " << tail << " element(s) are missing: after the last whole vector, the tail of "
            << "(n - head) % " << per_vector << " elements must be added one at a time (the double2 "
            << "kernel of the CUDA C reduction article in docs/sources.md reads n / 2 pairs and drops the "
            << "last element of an odd n).";
    } else if (head > 0 && explains(partial_sum(values, 0, head))) {
        out << "the first " << head << " element(s), before the first 16-byte boundary, are missing: a "
            << "misaligned start needs a scalar head up to that boundary, then vectors from there.";
    } else if (head > 0 && explains(-partial_sum(values, 0, head))) {
        out << "the first " << head << " element(s) are counted twice: the scalar head and the vector body "
            << "overlap. The vectors must start at values + head.";
    } else {
        out << "elements were skipped or counted twice. Does each loop count in its own units (elements for "
               "head and tail, vectors for the body), start at the thread's global index and step by the "
               "number of threads in the whole grid (gridDim.x * blockDim.x)?";
    }
    return {false, out.str()};
}

template <class T>
double run_sum(void (*launch)(LaunchShape, int, const T*, double*), LaunchShape shape, const std::vector<T>& values,
               std::size_t offset) {
    const PlacedInput<T> input(values, offset);
    course::DeviceBuffer<double> result(1);
    result.poison();
    launch(shape, static_cast<int>(values.size()), input.data(), result.data());
    COURSE_LAUNCH_CHECK();
    return result.download()[0];
}

// Runs under every emulator schedule (or repeatedly on a GPU) and checks each result.
template <class T>
void require_sum(const char* function, void (*launch)(LaunchShape, int, const T*, double*), LaunchShape shape,
                 const std::vector<T>& values, std::size_t offset) {
    course::for_each_schedule(
        [&] { COURSE_REQUIRE_MATCH(check_sum(function, values, offset, run_sum(launch, shape, values, offset))); });
}

// Sums n ones, which every order of additions gets exactly right.
template <class T>
void require_exact_count(const char* function, void (*launch)(LaunchShape, int, const T*, double*), int n,
                         std::size_t offset) {
    const std::vector<T> ones(static_cast<std::size_t>(n), T(1));
    course::for_each_schedule([&] {
        const double got = run_sum(launch, lesson06::sum_launch_shape(n), ones, offset);
        INFO(function << " returned " << got << " for " << n << " ones");
        COURSE_REQUIRE_MATCH(check_sum(function, ones, offset, got));
        CHECK(got == static_cast<double>(n));
    });
}

// A size larger than eight times the threads of the default grid, so that
// every thread runs the four-vectors-per-step loop and the loop after it.
int size_beyond_the_grid() {
    const LaunchShape shape = lesson06::sum_launch_shape(1 << 22);
    return static_cast<int>(std::min<unsigned long long>(8 * shape.total_threads() + 3, 1u << 23));
}

std::vector<int> sizes_to_test() {
    std::vector<int> sizes = course::edge_sizes();
    for (const int odd : {2, 3, 5, 7, 1023}) sizes.push_back(odd);
    sizes.push_back((1 << 20) + 3);
    sizes.push_back(size_beyond_the_grid());
    return sizes;
}

// The launch shape for n elements: valid, sized from the SM count for a
// large array, no larger than a small one needs. Checked inside the double2
// test case, not in one of its own: the starter is given this function, and
// an untouched starter earns no points.
void check_launch_shape(int n) {
    const LaunchShape shape = lesson06::sum_launch_shape(n);
    const int sms = course::sm_count();
    CAPTURE(n, sms, describe(shape));
    CHECK(shape.blocks >= 1u);
    CHECK(shape.threads_per_block >= 32u);
    CHECK(shape.threads_per_block <= 1024u);
    CHECK(shape.threads_per_block % 32 == 0u);
    if (n == 1 << 22) {
        INFO("a large array should get at least one block per SM and fewer threads than elements, so threads loop");
        CHECK(shape.blocks >= static_cast<unsigned>(sms));
        CHECK(shape.total_threads() < static_cast<unsigned long long>(n));
    } else {
        INFO("a small array should get no more blocks than it can feed: at most one per threads_per_block elements");
        const unsigned long long useful = (static_cast<unsigned long long>(std::max(n, 1)) +
                                           shape.threads_per_block - 1) / shape.threads_per_block;
        CHECK(shape.blocks <= useful);
    }
}

}  // namespace

TEST_CASE("the double2 sum matches the CPU for every size, from an aligned and a misaligned start", "[06]") {
    const int n = GENERATE_COPY(from_range(sizes_to_test()));
    const std::size_t offset = GENERATE(0u, 1u);
    const LaunchShape shape = lesson06::sum_launch_shape(n);
    CAPTURE(n, offset, describe(shape), course::seed());
    require_sum("launch_sum_doubles", lesson06::launch_sum_doubles, shape,
                random_input<double>(n, "doubles n=" + std::to_string(n)), offset);
    if (offset == 0) {
        for (const int edge : course::edge_sizes()) {
            if (edge == n) check_launch_shape(n);
        }
        if (n == sizes_to_test().back()) check_launch_shape(1 << 22);
    }
}

TEST_CASE("the float4 sum matches the CPU for every size and every 4-byte offset", "[06]") {
    const int n = GENERATE(0, 1, 2, 3, 5, 7, 31, 33, 257, 1009, (1 << 20) + 3);
    const std::size_t offset = GENERATE(0u, 1u, 2u, 3u);
    const LaunchShape shape = lesson06::sum_launch_shape(n);
    CAPTURE(n, offset, describe(shape), course::seed());
    require_sum("launch_sum_floats", lesson06::launch_sum_floats, shape,
                random_input<float>(n, "floats n=" + std::to_string(n)), offset);
}

TEST_CASE("every block size from 32 to 1024 and a small grid give the CPU's sum", "[06]") {
    const unsigned threads = GENERATE(32u, 64u, 128u, 256u, 512u, 1024u);
    const unsigned blocks = GENERATE(1u, 3u);
    const std::size_t offset = GENERATE(0u, 1u);
    const LaunchShape shape{blocks, threads};
    const int n = 20011;  // odd, and many times the threads of these grids
    CAPTURE(n, offset, describe(shape), course::seed());
    SECTION("double2") {
        require_sum("launch_sum_doubles", lesson06::launch_sum_doubles, shape, random_input<double>(n, "shapes"),
                    offset);
    }
    SECTION("float4") {
        require_sum("launch_sum_floats", lesson06::launch_sum_floats, shape, random_input<float>(n, "shapes f"),
                    offset);
    }
}

TEST_CASE("a sum of ones is exactly n", "[06]") {
    // Every partial sum of ones is an integer below 2^53, so every order of
    // additions is exact: a single element missed or added twice shows as +-1.
    const int n = GENERATE(1, 3, 255, 1009, (1 << 20) + 3);
    const std::size_t offset = GENERATE(0u, 1u);
    CAPTURE(n, offset, course::seed());
    SECTION("double2") { require_exact_count<double>("launch_sum_doubles", lesson06::launch_sum_doubles, n, offset); }
    SECTION("float4") { require_exact_count<float>("launch_sum_floats", lesson06::launch_sum_floats, n, offset); }
}

TEST_CASE("alternating signs of large magnitude cancel without losing an element", "[06]") {
    const int n = GENERATE(2, 33, 1009, 20011, (1 << 20) + 3);
    const std::size_t offset = GENERATE(0u, 1u);
    CAPTURE(n, offset, course::seed());
    require_sum("launch_sum_doubles", lesson06::launch_sum_doubles, lesson06::sum_launch_shape(n),
                alternating_input(n, "alternating n=" + std::to_string(n)), offset);
}

TEST_CASE("the complex sum matches the CPU in both components", "[06]") {
    const int n = GENERATE(0, 1, 2, 31, 33, 257, 1009, 20011, (1 << 19) + 1);
    const LaunchShape shape = GENERATE_COPY(lesson06::sum_launch_shape(n), LaunchShape{1, 32}, LaunchShape{3, 256},
                                            LaunchShape{2, 1024});
    CAPTURE(n, describe(shape), course::seed());
    const std::vector<double> re = random_input<double>(n, "complex re n=" + std::to_string(n));
    const std::vector<double> im = random_input<double>(n, "complex im n=" + std::to_string(n));
    std::vector<cuDoubleComplex> values(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = make_cuDoubleComplex(re[i], 1.0e3 * im[i]);
    const course::DeviceBuffer<cuDoubleComplex> input(values);
    course::DeviceBuffer<cuDoubleComplex> result(1);
    const double nan = std::nan("");
    course::for_each_schedule([&] {
        result.upload({make_cuDoubleComplex(nan, nan)});  // garbage the launcher must overwrite
        lesson06::launch_sum_complex(shape, n, input.data(), result.data());
        COURSE_LAUNCH_CHECK();
        const cuDoubleComplex got = result.download()[0];
        std::vector<double> scaled_im(im.size());
        for (std::size_t i = 0; i < im.size(); ++i) scaled_im[i] = 1.0e3 * im[i];
        INFO("real part (the .x components)");
        COURSE_REQUIRE_MATCH(check_sum("launch_sum_complex", re, 0, cuCreal(got)));
        INFO("imaginary part (the .y components, 1000 times larger in this test)");
        COURSE_REQUIRE_MATCH(check_sum("launch_sum_complex", scaled_im, 0, cuCimag(got)));
    });
}
