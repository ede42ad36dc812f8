// Lesson 12 tests: Thrust's transform, for_each histogram and zipped sorts
// against the standard library, at the edge sizes and a large size, with
// many equal keys (ties), under every emulator schedule (or repeatedly on a
// GPU). The tests use no Thrust type: host vectors in, or raw cudaMalloc
// pointers, as the contract says.
//
// What only a GPU can show: a Thrust call on raw device pointers without a
// policy runs on the host and reads device memory there. On a GPU that is a
// segmentation fault of the test program (the failure names the test case);
// on the emulator device memory is host memory and the call works, so that
// mistake is a GPU-only mutant (see CMakeLists.txt).
#include <thrust_algorithms.hpp>

#include "cpu_reference.hpp"

#include <course/backend.hpp>
#include <course/catch.hpp>
#include <course/compare.hpp>
#include <course/device_buffer.hpp>
#include <course/inputs.hpp>
#include <course/schedules.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace {

using Pairs = std::vector<std::pair<int, int>>;

// The "large" size: 2^22 + 1 on a GPU. On the emulator Thrust's CPP system
// runs every algorithm serially on one core, five times per check (one per
// schedule), so the large case there is 2^20 + 1.
constexpr std::size_t kLarge = course::kEmulator ? (std::size_t{1} << 20) + 1 : (std::size_t{1} << 22) + 1;

std::vector<std::size_t> sizes() {
    std::vector<std::size_t> all(course::edge_sizes().begin(), course::edge_sizes().end());
    all.push_back(kLarge);
    return all;
}

// What the test was doing, for the first line of a failure.
std::string header(const std::string& call, std::size_t n, const std::string& input) {
    std::ostringstream out;
    out << call << " over n = " << n << " " << input << " (COURSE_SEED=" << course::seed() << ")";
    return out.str();
}

// Keys with many ties (a few distinct values, negative ones too) and
// distinct-looking values, so that an order among equal keys is visible.
struct RandomPairs {
    std::vector<int> keys, values;
};

RandomPairs make_pairs(std::size_t n, const std::string& label) {
    return {course::random_values<int>(n, -5, 5, label + " keys"),
            course::random_values<int>(n, -1000000, 1000000, label + " values")};
}

// Compares sorted pairs with the reference, and says what a difference most
// likely means: values left behind by their keys, ties in the wrong order,
// or the wrong direction.
course::Comparison check_pairs(const Pairs& expected, const std::vector<int>& got_keys,
                               const std::vector<int>& got_values, const Pairs& input, const std::string& order) {
    std::vector<int> expected_keys(expected.size()), expected_values(expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
        expected_keys[i] = expected[i].first;
        expected_values[i] = expected[i].second;
    }
    course::CompareContext<int> keys_context;
    keys_context.name = "keys";
    course::Comparison keys = course::compare_exact(expected_keys, got_keys, keys_context);
    if (!keys.ok) {
        std::vector<int> reversed(got_keys.rbegin(), got_keys.rend());
        if (reversed == expected_keys) {
            keys.message += "\n  the keys come out in the opposite order: expected " + order + ".";
        } else if (got_keys.size() > 1 && !std::is_sorted(got_keys.begin(), got_keys.end()) &&
                   !std::is_sorted(got_keys.rbegin(), got_keys.rend())) {
            keys.message += "\n  the keys are in no order at all: was the device memory the test passed sorted?";
        }
        return keys;
    }
    course::CompareContext<int> values_context;
    values_context.name = "values";
    course::Comparison values = course::compare_exact(expected_values, got_values, values_context);
    if (!values.ok) {
        std::multiset<std::pair<int, int>> before(input.begin(), input.end()), after;
        for (std::size_t i = 0; i < got_keys.size(); ++i) after.insert({got_keys[i], got_values[i]});
        if (before != after) {
            values.message += "\n  the keys are right, but the (key, value) pairs are not those of the input: the "
                              "values did not move with their keys. Sort a zip_iterator over both arrays, not "
                              "the keys alone.";
        } else {
            values.message += "\n  the pairs are those of the input and the keys are in order, but equal keys are "
                              "not ordered by ascending value: the tie rule of the comparator is missing or reversed.";
        }
    }
    return values;
}

// Sorts random pairs of every size with `sort` (the student's function on
// device pointers) and compares with `reference` (the CPU's order).
template <class Sort, class Reference>
void check_pair_sort_at_every_size(const std::string& call, const std::string& label, Sort sort,
                                   Reference reference, const std::string& order) {
    for (const std::size_t n : sizes()) {
        const RandomPairs in = make_pairs(n, label);
        const Pairs input = lesson12::reference::zip(in.keys, in.values);
        const Pairs expected = reference(in.keys, in.values);
        course::for_each_schedule([&] {
            INFO(header(call, n, "pairs, keys in [-5, 5] (many ties)"));
            course::DeviceBuffer<int> keys(in.keys), values(in.values);
            sort(keys.data(), values.data(), n);
            COURSE_REQUIRE_MATCH(check_pairs(expected, keys.download(), values.download(), input, order));
        });
    }
}

}  // namespace

TEST_CASE("scale_and_offset returns a * x + b for every element, at every size", "[12][transform]") {
    const float a = 2.5f, b = -1.25f;
    for (const std::size_t n : sizes()) {
        const std::vector<float> values = course::random_values<float>(n, -1000.0f, 1000.0f, "transform input");
        const std::vector<float> expected = lesson12::reference::scale_and_offset(values, a, b);
        course::for_each_schedule([&] {
            INFO(header("scale_and_offset(values, 2.5, -1.25)", n, "floats in [-1000, 1000)"));
            const std::vector<float> got = lesson12::scale_and_offset(values, a, b);
            // One fma instead of a multiply and an add differs by at most one
            // rounding of the product: half an ulp of |a * x|, and of the sum.
            auto within = [&](std::size_t i, float e, float g) {
                const float bound = 2.0f * std::numeric_limits<float>::epsilon() *
                                    (std::fabs(a * values[i]) + std::fabs(b) + std::fabs(e));
                return std::fabs(g - e) <= bound;
            };
            course::CompareContext<float> context;
            context.name = "result";
            context.before = &values;
            context.hint_if_untouched = "Is the device_vector's content copied back after the transform?";
            COURSE_REQUIRE_MATCH(course::compare(expected, got, within, context));
        });
    }
}

TEST_CASE("score_band_histogram counts ten bands, 100 in the last, and drops out-of-range scores and NaN",
          "[12][for_each][histogram]") {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float inf = std::numeric_limits<float>::infinity();
    // The boundaries: each band's first score, the last below it, the perfect
    // 100, and what must be dropped (-0.5 would truncate into band 0).
    const std::vector<float> special{0.0f, -0.0f, 9.999f, 10.0f, 89.99f, 90.0f, 99.99f, 100.0f, -0.5f,
                                     -10.0f, 100.01f, 250.0f, nan, inf, -inf};
    struct Case {
        std::string name;
        std::vector<float> scores;
    };
    std::vector<Case> cases{{"boundary scores (0, -0, 9.999, 10, 89.99, 90, 99.99, 100, -0.5, -10, 100.01, 250, "
                             "NaN, +-inf)", special}};
    for (const std::size_t n : sizes()) {
        cases.push_back({"scores in [-20, 120)", course::random_values<float>(n, -20.0f, 120.0f, "scores")});
    }
    cases.push_back({"scores all equal to 100", std::vector<float>(kLarge, 100.0f)});
    for (const Case& c : cases) {
        const std::vector<unsigned> expected = lesson12::reference::score_band_histogram(c.scores);
        const course::DeviceBuffer<float> scores(c.scores);
        course::DeviceBuffer<unsigned> bands(lesson12::kScoreBands);
        course::for_each_schedule([&] {
            INFO(header("score_band_histogram(scores, n, bands)", c.scores.size(), c.name));
            bands.upload(std::vector<unsigned>(lesson12::kScoreBands, 0x5EED0BADu));  // garbage: the function zeroes
            lesson12::score_band_histogram(scores.data(), c.scores.size(), bands.data());
            const std::vector<unsigned> got = bands.download();
            course::CompareContext<unsigned> context;
            context.name = "bands";
            course::Comparison result = course::compare_exact(expected, got, context);
            if (!result.ok) {
                unsigned long long counted = 0, expected_total = 0;
                for (std::size_t k = 0; k < got.size(); ++k) {
                    counted += got[k];
                    expected_total += expected[k];
                }
                std::ostringstream cause;
                if (std::find(got.begin(), got.end(), 0x5EED0BADu) != got.end()) {
                    cause << "\n  likely cause: a band still holds the garbage the test put there: set the bands "
                             "to 0 (cudaMemset) before counting.";
                } else if (counted < expected_total) {
                    cause << "\n  " << expected_total - counted << " scores were not counted: lost increments "
                          << "(bands[b]++ instead of atomicAdd?), or a valid score (100?) dropped.";
                } else if (counted > expected_total) {
                    cause << "\n  " << counted - expected_total << " scores too many were counted: are scores "
                          << "below 0 (-0.5 truncates to band 0) or above 100 dropped?";
                }
                result.message += cause.str();
            }
            COURSE_REQUIRE_MATCH(result);
        });
    }
}

TEST_CASE("sort_pairs_ascending moves each value with its key, equal keys ordered by value", "[12][sort][zip]") {
    check_pair_sort_at_every_size("sort_pairs_ascending(keys, values, n)", "ascending", lesson12::sort_pairs_ascending,
                                  lesson12::reference::sorted_ascending,
                                  "ascending keys, equal keys by ascending value");
}

TEST_CASE("sort_pairs_descending_by_key puts larger keys first, equal keys by ascending value",
          "[12][sort][zip][comparator]") {
    SECTION("the contract's example") {
        course::DeviceBuffer<int> keys(std::vector<int>{3, 5, 3, 5}), values(std::vector<int>{7, 1, 2, 0});
        INFO("sort_pairs_descending_by_key on (3, 7) (5, 1) (3, 2) (5, 0) (COURSE_SEED=" << course::seed() << ")");
        lesson12::sort_pairs_descending_by_key(keys.data(), values.data(), 4);
        COURSE_REQUIRE_MATCH(check_pairs({{5, 0}, {5, 1}, {3, 2}, {3, 7}}, keys.download(), values.download(),
                                         {{3, 7}, {5, 1}, {3, 2}, {5, 0}}, "descending keys, ties by ascending value"));
    }
    SECTION("random pairs at every size") {
        check_pair_sort_at_every_size("sort_pairs_descending_by_key(keys, values, n)", "descending",
                                      lesson12::sort_pairs_descending_by_key,
                                      lesson12::reference::sorted_descending_by_key,
                                      "descending keys, equal keys by ascending value");
    }
}

// On a GPU, a sort of the raw pointer without thrust::device runs on the host
// and crashes this test (a segmentation fault reading cudaMalloc memory).
TEST_CASE("sort_device_floats sorts raw cudaMalloc memory on the device", "[12][sort][policy]") {
    for (const std::size_t n : sizes()) {
        const std::vector<float> input = course::random_values<float>(n, -1.0e6f, 1.0e6f, "floats");
        std::vector<float> expected = input;
        std::sort(expected.begin(), expected.end());
        course::for_each_schedule([&] {
            INFO(header("sort_device_floats(values, n)", n, "floats in [-1e6, 1e6) from cudaMalloc"));
            course::DeviceBuffer<float> values(input);
            lesson12::sort_device_floats(values.data(), n);
            course::CompareContext<float> context;
            context.name = "values";
            context.before = &input;
            context.hint_if_untouched = "Was the sort called on the device pointer, with thrust::device?";
            COURSE_REQUIRE_MATCH(course::compare_exact(expected, values.download(), context));
        });
    }
}
