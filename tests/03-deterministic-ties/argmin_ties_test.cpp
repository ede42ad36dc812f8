// Lesson 03 tests: argmin and argmax with ties broken to the lowest index,
// the same on every run, against a CPU loop.
#include <argmin_ties.hpp>

#include "cpu_reference.hpp"

#include <course/catch.hpp>
#include <course/compare.hpp>
#include <course/device_buffer.hpp>
#include <course/inputs.hpp>
#include <course/schedules.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace {

using course::LaunchShape;
using lesson03::ArgResult;

constexpr float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kNegativeNaN = std::bit_cast<float>(0xffc00000u);  // sign bit set: below -inf as raw bits

// One function of the contract, with the CPU answer it must give.
struct Function {
    const char* name;
    void (*launch)(LaunchShape, int, const float*, ArgResult*);
    ArgResult (*reference)(const std::vector<float>&);
    const char* where_ties_are_decided;
};

const Function kArgmin{"launch_argmin", lesson03::launch_argmin, lesson03::reference::argmin,
                       "in precedes_min, which the thread loop, the warp shuffle and the CAS loop all use"};
const Function kArgmax{"launch_argmax", lesson03::launch_argmax, lesson03::reference::argmax,
                       "in precedes_max: a larger value wins, and among equal values the LOWER index still wins"};
const Function kArgminKey{"launch_argmin_key", lesson03::launch_argmin_key, lesson03::reference::argmin,
                          "in the key: the index belongs in the low 32 bits, under the ordered value bits"};

// Integers lo..hi as floats: a tiny range, so the extremes repeat many times.
std::vector<float> small_integers(int n, int lo, int hi, const std::string& label) {
    const std::vector<int> drawn = course::random_values<int>(static_cast<std::size_t>(n), lo, hi, label);
    return std::vector<float>(drawn.begin(), drawn.end());
}

// Runs `f` on `values` with `shape`, the result filled with garbage first.
ArgResult run(const Function& f, LaunchShape shape, const std::vector<float>& values) {
    course::DeviceBuffer<float> d_values(values);
    course::DeviceBuffer<ArgResult> d_result(1);
    d_result.poison();
    f.launch(shape, static_cast<int>(values.size()), d_values.data(), d_result.data());
    COURSE_LAUNCH_CHECK();
    return d_result.download()[0];
}

ArgResult run(const Function& f, const std::vector<float>& values) {
    return run(f, lesson03::argmin_launch_shape(static_cast<int>(values.size())), values);
}

std::string show(const ArgResult& r) {
    std::ostringstream out;
    out.precision(9);
    out << "{value ";
    if (std::isnan(r.value)) {
        out << "NaN";
    } else if (r.value == 0.0f) {
        out << (std::signbit(r.value) ? "-0.0" : "+0.0");
    } else {
        out << r.value;
    }
    out << ", index " << r.index << "}";
    return out.str();
}

bool same(const ArgResult& a, const ArgResult& b) {
    return a.index == b.index && std::bit_cast<std::uint32_t>(a.value) == std::bit_cast<std::uint32_t>(b.value);
}

// Compares with the CPU's answer and, on a mismatch, says what the
// difference most likely means.
course::Comparison check(const Function& f, const std::vector<float>& values, const ArgResult& got) {
    const ArgResult expected = f.reference(values);
    if (same(expected, got)) return {};
    const int n = static_cast<int>(values.size());
    std::ostringstream out;
    out << f.name << " returned " << show(got) << ", expected " << show(expected) << " (n = " << n << ")\n";
    out << "  likely cause: ";
    if (got.index < -1 || got.index >= n) {
        out << "index " << got.index << " is no element of the array: was *result written at all? The launcher "
            << "must initialise it (the test fills it with garbage first), then launch the kernel.";
    } else if (expected.index == -1) {
        out << "no element qualifies (n = 0, or every element is NaN), so the answer is the empty one: index -1 "
            << "and " << (f.reference == lesson03::reference::argmax ? "-inf" : "+inf")
            << ". Is the result initialised to that, and are NaN elements skipped?";
    } else if (got.index >= 0 && std::isnan(values[static_cast<std::size_t>(got.index)])) {
        out << "element " << got.index << " is NaN, which the contract ignores. A NaN compares false with "
            << "everything; as raw bits, though, a NaN with its sign bit set orders below -inf.";
    } else if (got.index >= 0 && values[static_cast<std::size_t>(got.index)] == expected.value) {
        const std::size_t ties = lesson03::reference::count_equal(values, expected.value);
        out << "a tie was broken the wrong way. Element " << got.index << " holds the winning value too, but "
            << expected.index << " is the lowest of the " << ties << " elements equal to it";
        if (expected.value == 0.0f && std::signbit(expected.value) != std::signbit(got.value)) {
            out << " (-0.0 and +0.0 count as equal)";
        }
        out << ". The rule is: replace the stored pair when your value is better, or equal with a lower "
            << "index; here that decision is made " << f.where_ties_are_decided << ".";
    } else if (got.index == expected.index) {
        out << "the index is right but the value is not values[index] bit for bit.";
    } else if (expected.value < 0.0f) {
        out << "the answer is not the extreme value. The expected one is negative: are negative floats ordered "
            << "correctly (in a key, a negative float's bits must all be inverted)?";
    } else {
        out << "the answer is not the extreme value at all: is every element compared, and is the comparison "
            << "the right way round?";
    }
    return {false, out.str()};
}

void require_matches_cpu(const Function& f, const std::vector<float>& values) {
    COURSE_REQUIRE_MATCH(check(f, values, run(f, values)));
}

}  // namespace

TEST_CASE("argmin returns the lowest of thousands of tied minima under every schedule", "[03]") {
    // 2^20 integers 0..10: the minimum 0 appears about 95,000 times, in every
    // warp of the grid, so every warp offers a candidate of value 0.
    const Function f = GENERATE(as<Function>{}, kArgmin, kArgminKey);
    const std::vector<float> values = small_integers(1 << 20, 0, 10, "ties");
    CAPTURE(f.name, lesson03::reference::count_equal(values, 0.0f), course::seed());
    course::for_each_schedule([&] { require_matches_cpu(f, values); });
}

TEST_CASE("argmax returns the lowest index of thousands of tied maxima under every schedule", "[03]") {
    const std::vector<float> values = small_integers(1 << 20, 0, 10, "ties");
    CAPTURE(kArgmax.name, lesson03::reference::count_equal(values, 10.0f), course::seed());
    course::for_each_schedule([&] { require_matches_cpu(kArgmax, values); });
}

// n = 0 (the first edge size) is the empty array: index -1 and the identity
// value. It is no test case of its own: a launcher that does nothing would
// pass it, and an untouched starter earns no points.
TEST_CASE("every size from empty (index -1, the identity value) to one larger than the grid gives the CPU's answer",
          "[03]") {
    std::vector<int> sizes = course::edge_sizes();
    sizes.push_back(static_cast<int>(2 * lesson03::argmin_launch_shape(1 << 20).total_threads() + 1));
    const int n = GENERATE_COPY(from_range(sizes));
    const Function f = GENERATE(as<Function>{}, kArgmin, kArgmax, kArgminKey);
    const std::vector<float> values = small_integers(n, 0, 3, "edge n=" + std::to_string(n));
    CAPTURE(f.name, n, course::seed());
    require_matches_cpu(f, values);
}

TEST_CASE("every launch shape gives the same answer", "[03]") {
    const LaunchShape shape = GENERATE(LaunchShape{1, 32}, LaunchShape{2, 64}, LaunchShape{3, 96},
                                       LaunchShape{5, 256}, LaunchShape{2, 1024});
    const Function f = GENERATE(as<Function>{}, kArgmin, kArgmax, kArgminKey);
    const std::vector<float> values = small_integers(5000, -2, 2, "shapes");
    CAPTURE(f.name, describe(shape), course::seed());
    COURSE_REQUIRE_MATCH(check(f, values, run(f, shape, values)));
}

TEST_CASE("negative values and infinities are ordered like floats", "[03]") {
    const Function f = GENERATE(as<Function>{}, kArgmin, kArgmax, kArgminKey);
    CAPTURE(f.name, course::seed());
    SECTION("integers -10..10: the extremes are -10 and 10, each repeated") {
        require_matches_cpu(f, small_integers(1 << 16, -10, 10, "negative"));
    }
    SECTION("fractions of both signs, no ties") {
        require_matches_cpu(f, course::random_values<float>(4099, -1.0f, 1.0f, "fractions"));
    }
    SECTION("-inf and +inf, each twice, among finite values") {
        std::vector<float> values = small_integers(3000, -5, 5, "infinities");
        values[700] = kInf;
        values[1200] = -kInf;
        values[1900] = kInf;
        values[2500] = -kInf;
        require_matches_cpu(f, values);
    }
    SECTION("nothing but +inf: index 0, not the empty answer") {
        require_matches_cpu(f, std::vector<float>(300, kInf));
    }
    SECTION("nothing but -inf: index 0, not the empty answer") {
        require_matches_cpu(f, std::vector<float>(300, -kInf));
    }
}

TEST_CASE("signed zeros tie: -0.0 equals +0.0 and the lower index wins", "[03]") {
    const Function f = GENERATE(as<Function>{}, kArgmin, kArgmax, kArgminKey);
    CAPTURE(f.name, course::seed());
    // The zeros are the extremum: the rest is positive for argmin, negative for argmax.
    const float other = f.reference == lesson03::reference::argmax ? -1.0f : 1.0f;
    SECTION("+0.0 first, then -0.0: the answer is +0.0") {
        std::vector<float> values(1000, other);
        values[300] = 0.0f;
        values[900] = -0.0f;
        require_matches_cpu(f, values);
    }
    SECTION("-0.0 first, then +0.0: the answer is -0.0, sign included") {
        std::vector<float> values(1000, other);
        values[300] = -0.0f;
        values[900] = 0.0f;
        require_matches_cpu(f, values);
    }
    SECTION("many zeros of both signs spread over the grid") {
        std::vector<float> values = small_integers(1 << 16, 0, 4, "zeros");
        for (float& v : values) v = v == 0.0f ? (f.reference == lesson03::reference::argmax ? -0.0f : 0.0f)
                                              : other * v;
        for (std::size_t i = 0; i < values.size(); i += 7) {
            if (values[i] == 0.0f) values[i] = -values[i];
        }
        require_matches_cpu(f, values);
    }
}

TEST_CASE("NaN elements are ignored", "[03]") {
    const Function f = GENERATE(as<Function>{}, kArgmin, kArgmax, kArgminKey);
    CAPTURE(f.name, course::seed());
    SECTION("NaN of both signs among ordinary values") {
        std::vector<float> values = small_integers(2000, -3, 3, "nan");
        for (std::size_t i = 0; i < values.size(); i += 5) values[i] = i % 2 == 0 ? kNaN : kNegativeNaN;
        require_matches_cpu(f, values);
    }
    SECTION("a NaN first: it never becomes the answer, even as the first candidate") {
        require_matches_cpu(f, {kNegativeNaN, kNaN, 2.0f, 1.0f, 3.0f, 1.0f});
    }
    SECTION("nothing but NaN: index -1, as for an empty array") {
        std::vector<float> values(500, kNaN);
        for (std::size_t i = 0; i < values.size(); i += 3) values[i] = kNegativeNaN;
        require_matches_cpu(f, values);
    }
}

