// Lesson 01 tests: SAXPY as a grid-stride loop, against a CPU loop.
#include <saxpy.hpp>

#include "cpu_reference.hpp"

#include <course/backend.hpp>
#include <course/catch.hpp>
#include <course/compare.hpp>
#include <course/device_buffer.hpp>
#include <course/inputs.hpp>

#include <algorithm>
#include <string>
#include <vector>

namespace {

using course::LaunchShape;

constexpr std::size_t kGuard = 64;  // elements after y[n] that must stay untouched

struct SaxpyInput {
    float a;
    std::vector<float> x;
    std::vector<float> y;
};

SaxpyInput make_input(int n) {
    const std::string tag = "n=" + std::to_string(n);
    return {course::random_values<float>(1, -2.0f, 2.0f, "a " + tag)[0],
            course::random_values<float>(n, -1.0f, 1.0f, "x " + tag),
            course::random_values<float>(n, -1.0f, 1.0f, "y " + tag)};
}

// Runs the student's launcher with `shape` and returns y (n elements) and the guard.
struct SaxpyOutput {
    std::vector<float> y;
    std::vector<float> guard;
};

std::vector<float> guard_values() {
    std::vector<float> guard(kGuard);
    for (std::size_t i = 0; i < kGuard; ++i) guard[i] = 1000.0f + static_cast<float>(i);
    return guard;
}

SaxpyOutput run_saxpy(LaunchShape shape, const SaxpyInput& in) {
    const int n = static_cast<int>(in.y.size());
    std::vector<float> y_with_guard = in.y;
    const std::vector<float> guard = guard_values();
    y_with_guard.insert(y_with_guard.end(), guard.begin(), guard.end());

    course::DeviceBuffer<float> x(in.x.empty() ? std::vector<float>(1, 0.0f) : in.x);
    course::DeviceBuffer<float> y(y_with_guard);
    lesson01::launch_saxpy(shape, n, in.a, x.data(), y.data());
    COURSE_LAUNCH_CHECK();

    std::vector<float> all = y.download();
    return {std::vector<float>(all.begin(), all.begin() + n), std::vector<float>(all.begin() + n, all.end())};
}

course::Comparison compare_with_cpu(const SaxpyInput& in, const SaxpyOutput& out) {
    const std::vector<float> expected = lesson01::reference::saxpy(in.a, in.x, in.y);
    course::CompareContext<float> ctx;
    ctx.name = "y";
    ctx.before = &in.y;
    ctx.hint_if_untouched =
        "Does every thread loop, stepping by the whole grid (gridDim.x * blockDim.x), until i reaches n?";
    return course::compare(
        expected, out.y,
        [&](std::size_t i, float e, float g) { return lesson01::reference::close_enough(e, g, in.a, in.x[i], in.y[i]); },
        ctx);
}

// A size larger than the number of threads the student's own grid launches,
// so that every thread must loop at least twice.
int size_beyond_the_grid() {
    const LaunchShape shape = lesson01::saxpy_launch_shape(1 << 22);
    return static_cast<int>(std::min<unsigned long long>(2 * shape.total_threads() + 1, 1u << 25));
}

}  // namespace

TEST_CASE("saxpy matches the CPU at every edge size with your launch shape", "[01]") {
    std::vector<int> sizes = course::edge_sizes();
    sizes.push_back(size_beyond_the_grid());
    const int n = GENERATE_COPY(from_range(sizes));
    const LaunchShape shape = lesson01::saxpy_launch_shape(n);
    CAPTURE(n, describe(shape));

    const SaxpyInput in = make_input(n);
    const SaxpyOutput out = run_saxpy(shape, in);
    COURSE_REQUIRE_MATCH(compare_with_cpu(in, out));
    COURSE_REQUIRE_MATCH(course::compare_guard(guard_values(), out.guard, n, "y"));
}

TEST_CASE("a grid smaller than the array still covers every element", "[01]") {
    const LaunchShape shape = GENERATE(LaunchShape{1, 1}, LaunchShape{2, 32}, LaunchShape{3, 64}, LaunchShape{4, 256});
    const int n = GENERATE(257, 1009, 5000);
    CAPTURE(n, describe(shape));

    const SaxpyInput in = make_input(n);
    const SaxpyOutput out = run_saxpy(shape, in);
    COURSE_REQUIRE_MATCH(compare_with_cpu(in, out));
    COURSE_REQUIRE_MATCH(course::compare_guard(guard_values(), out.guard, n, "y"));
}

TEST_CASE("one thread gives exactly the result of your whole grid", "[01]") {
    // The debugging trick: <<<1, 1>>> runs the same loop serially. If the two
    // differ, the full grid updates some element twice or not at all.
    const int n = GENERATE(1009, 100000);
    const LaunchShape own = lesson01::saxpy_launch_shape(n);
    CAPTURE(n, describe(own));

    const SaxpyInput in = make_input(n);
    const SaxpyOutput single = run_saxpy(LaunchShape{1, 1}, in);
    COURSE_REQUIRE_MATCH(compare_with_cpu(in, single));
    const SaxpyOutput grid = run_saxpy(own, in);
    course::CompareContext<float> ctx;
    ctx.name = "y (your grid vs <<<1, 1>>>)";
    COURSE_REQUIRE_MATCH(course::compare_exact(single.y, grid.y, ctx));
}

TEST_CASE("the launch shape is valid for every size", "[01]") {
    const int n = GENERATE_COPY(from_range(course::edge_sizes()));
    const LaunchShape shape = lesson01::saxpy_launch_shape(n);
    CAPTURE(n, describe(shape));
    CHECK(shape.blocks >= 1u);
    CHECK(shape.threads_per_block >= 1u);
    CHECK(shape.threads_per_block <= 1024u);
}

TEST_CASE("the launch shape is sized from the SM count, not from n", "[01]") {
    const int n = 1 << 22;
    const int sms = course::sm_count();
    const LaunchShape shape = lesson01::saxpy_launch_shape(n);
    CAPTURE(n, sms, describe(shape));
    INFO("a large array should get at least one block per SM and fewer threads than elements, so threads loop");
    CHECK(shape.blocks >= static_cast<unsigned>(sms));
    CHECK(shape.total_threads() < static_cast<unsigned long long>(n));
}
