// An instructor's hidden test for lesson 01, as `./course grade-all
// --extra-tests DIR` takes it (DIR/01-grid-stride-loop/*_test.cpp): plain
// Catch2 against the lesson's contract, the harness and the CPU reference,
// compiled into the lesson's test program besides tests/01-grid-stride-loop/.
// The grading check uses it to show that hidden tests count and stay hidden.
#include <saxpy.hpp>

#include <course/catch.hpp>
#include <course/compare.hpp>
#include <course/cuda_check.hpp>
#include <course/device_buffer.hpp>
#include <course/inputs.hpp>

#include <vector>

TEST_CASE("hidden: saxpy with a = -1 cancels y = x exactly", "[01][hidden]") {
    const int n = 4099;
    const std::vector<float> x = course::random_values<float>(n, -1.0f, 1.0f, "hidden x");
    course::DeviceBuffer<float> dx(x), dy(x);
    lesson01::launch_saxpy(lesson01::saxpy_launch_shape(n), n, -1.0f, dx.data(), dy.data());
    COURSE_LAUNCH_CHECK();
    COURSE_REQUIRE_MATCH(course::compare_exact(std::vector<float>(n, 0.0f), dy.download()));
}
