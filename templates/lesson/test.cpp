// Lesson @NN@ tests: @TITLE@, against the CPU (the example ./course new
// writes: replace it with the lesson's tests). Every test case must fail
// on the starter, so each one checks at least one non-empty shape.
#include <@TOPIC@.hpp>

#include "cpu_reference.hpp"

#include <course/catch.hpp>
#include <course/compare.hpp>
#include <course/device_buffer.hpp>
#include <course/inputs.hpp>

#include <string>
#include <vector>

namespace {

constexpr std::size_t kGuard = 64;  // elements after y[n] that must stay untouched

}  // namespace

TEST_CASE("scale matches the CPU at every edge size, and writes nothing past y", "[@NN@]") {
    std::vector<int> sizes = course::edge_sizes();
    sizes.push_back(300001);  // more than the 1024 x 256 threads of the reference's grid
    const int n = GENERATE_COPY(from_range(sizes));
    CAPTURE(n);
    const std::string tag = "n=" + std::to_string(n);
    const std::vector<float> x = course::random_values<float>(n, -1.0f, 1.0f, "x " + tag);
    const float a = course::random_values<float>(1, -2.0f, 2.0f, "a " + tag)[0];
    std::vector<float> guard(kGuard);
    for (std::size_t i = 0; i < kGuard; ++i) guard[i] = 1000.0f + static_cast<float>(i);
    std::vector<float> y_and_guard(static_cast<std::size_t>(n), course::poison_value<float>());
    y_and_guard.insert(y_and_guard.end(), guard.begin(), guard.end());

    const course::DeviceBuffer<float> d_x(x.empty() ? std::vector<float>(1, 0.0f) : x);
    course::DeviceBuffer<float> d_y(y_and_guard);
    lesson@NN@::scale(d_x.data(), d_y.data(), n, a);
    COURSE_LAUNCH_CHECK();
    const std::vector<float> all = d_y.download();

    course::CompareContext<float> ctx;
    ctx.name = "y";
    ctx.hint_if_untouched = "Does every thread loop, stepping by gridDim.x * blockDim.x, until i reaches n?";
    COURSE_REQUIRE_MATCH(course::compare_exact(lesson@NN@::reference::scale(x, a),
                                               std::vector<float>(all.begin(), all.begin() + n), ctx));
    COURSE_REQUIRE_MATCH(course::compare_guard(guard, std::vector<float>(all.begin() + n, all.end()), n, "y"));
}
