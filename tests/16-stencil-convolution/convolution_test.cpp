// Lesson 16 tests: 2D convolutions (correlations, see the contract) of
// row-major float images of every shape (1 x 1, a single row, a single
// column taller than the grid, around one tile, odd rectangles, a large one)
// with random, asymmetric filters of radius 1 to 4 and both boundary rules,
// tiled and naive, compared with a CPU reference within the contract's error
// bound, under every emulator schedule (or repeatedly on a GPU). The output
// is poisoned, with a poisoned tail after it, so a pixel never written and
// a write past the end are both reported with their (row, column).
#include <convolution.hpp>

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
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using lesson16::Boundary;
namespace reference = lesson16::reference;

enum class Function { naive, tiled };

const char* function_name(Function f) { return f == Function::naive ? "convolve_naive" : "convolve_tiled"; }
const char* boundary_name(Boundary b) { return b == Boundary::zero ? "Boundary::zero" : "Boundary::clamp"; }

struct Shape {
    int rows = 0;
    int cols = 0;
};

std::string describe_shape(Shape s) { return std::to_string(s.rows) + " x " + std::to_string(s.cols); }

// None of the odd shapes is a multiple of 32 either way; the long column has
// more tile rows (1,025) than the reference's grid covers at once (1,024).
// On the emulator, where every thread is a fiber on the CPU, the large image
// is smaller than on a GPU.
std::vector<Shape> test_shapes() {
    const int n = 32771;  // a prime, just over 1,024 tiles of 32
    const Shape large = course::kEmulator ? Shape{257, 511} : Shape{2053, 4099};
    // 136 x 392: cols a multiple of 4 and wide enough for a 128-column tile
    // wholly inside the image (a tiled kernel may load such tiles 16 bytes at
    // a time, and the edge tiles one pixel at a time: both paths are tested).
    return {{1, 1}, {1, n}, {n, 1}, {31, 33}, {32, 32}, {33, 65}, {2, 3}, {136, 392}, large};
}

// A random filter: no symmetry, so a flipped filter gives other results.
std::vector<float> random_filter(int radius) {
    const std::size_t width = static_cast<std::size_t>(2 * radius + 1);
    return course::random_values<float>(width * width, -1.0f, 1.0f, "filter radius " + std::to_string(radius));
}

void run(Function f, const float* in, float* out, Shape s, Boundary b) {
    if (f == Function::naive) {
        lesson16::convolve_naive(in, out, s.rows, s.cols, b);
    } else {
        lesson16::convolve_tiled(in, out, s.rows, s.cols, b);
    }
}

// Floats after the output that must stay untouched: a tile whose bounds check
// lets one row too many through writes within one row past the end.
std::size_t tail_size(Shape s) { return 32 * static_cast<std::size_t>(s.cols) + 32; }

struct Result {
    std::vector<float> out;   // rows * cols floats: the filtered image
    std::vector<float> tail;  // what follows it in the same allocation
};

// Runs `f` on `values` (exactly rows * cols floats on the device, so that a
// read outside the image faults on the emulator) into an output filled with
// NaN, tail included.
Result run_filter(Function f, Shape s, Boundary b, const std::vector<float>& values) {
    const std::size_t count = values.size();
    course::DeviceBuffer<float> in(values);
    course::DeviceBuffer<float> out(count + tail_size(s));
    out.poison();
    run(f, in.data(), out.data(), s, b);
    COURSE_LAUNCH_CHECK();
    std::vector<float> all = out.download();
    const auto split = all.begin() + static_cast<std::ptrdiff_t>(count);
    return {std::vector<float>(all.begin(), split), std::vector<float>(split, all.end())};
}

std::string header(Function f, Shape s, Boundary b, int radius) {
    std::ostringstream out;
    const int width = 2 * radius + 1;
    out << function_name(f) << " of a " << describe_shape(s) << " image with a " << width << " x " << width
        << " filter (radius " << radius << "), " << boundary_name(b) << ", " << (s.cols + 31) / 32 << " x "
        << (s.rows + 31) / 32 << " tiles of 32 x 32 (COURSE_SEED=" << course::seed() << ")";
    return out.str();
}

// Where the wrong pixels are: all within R of the image's edge, all within R
// of a 32 x 32 tile's edge (and not of the image's), or elsewhere too.
enum class Where { image_border, tile_border, anywhere };

Where where_wrong(const reference::Filtered& expected, const std::vector<float>& got, Shape s, int radius) {
    // An image with no pixel away from its edge tells nothing by position.
    if (s.rows <= 2 * radius || s.cols <= 2 * radius) return Where::anywhere;
    bool all_image_border = true, all_tile_border = true;
    const auto near = [radius](int i, int size) { return i < radius || i >= size - radius; };
    for (std::size_t i = 0; i < got.size(); ++i) {
        if (std::fabs(static_cast<double>(got[i]) - expected.value[i]) <= expected.bound[i]) continue;
        const int r = static_cast<int>(i / static_cast<std::size_t>(s.cols));
        const int c = static_cast<int>(i % static_cast<std::size_t>(s.cols));
        const bool image = near(r, s.rows) || near(c, s.cols);
        const bool tile = near(r % 32, 32) || near(c % 32, 32);
        all_image_border = all_image_border && image;
        all_tile_border = all_tile_border && tile && !image;
    }
    if (all_image_border) return Where::image_border;
    if (all_tile_border) return Where::tile_border;
    return Where::anywhere;
}

// The likely cause of a wrong output that is written everywhere.
std::string likely_cause(const std::vector<float>& in, Shape s, Boundary b, const std::vector<float>& weights,
                         int radius, const reference::Filtered& expected, const std::vector<float>& got) {
    const auto rows = static_cast<std::size_t>(s.rows), cols = static_cast<std::size_t>(s.cols);
    const bool clamp = b == Boundary::clamp;
    if (reference::within(reference::filter(in, rows, cols, weights, radius, {clamp, true}), got)) {
        return "the result is the image filtered with the filter flipped: weight (i, j) must multiply in(r - R + i, "
               "c - R + j), weight (0, 0) the pixel up and to the left. This computes the mathematical "
               "convolution, w[(R - dy)(2R + 1) + (R - dx)]; the contract asks for the correlation, "
               "w[(dy + R)(2R + 1) + (dx + R)].";
    }
    if (reference::within(reference::filter(in, rows, cols, weights, radius, {!clamp, false}), got)) {
        return clamp ? "the result is the one with Boundary::zero: a pixel outside the image must be the nearest "
                       "pixel of the image with Boundary::clamp. Is the boundary argument passed on to the kernel "
                       "and used when the tile is loaded?"
                     : "the result is the one with Boundary::clamp: a pixel outside the image must be 0 with "
                       "Boundary::zero.";
    }
    switch (where_wrong(expected, got, s, radius)) {
        case Where::image_border:
            return "only pixels within the radius of the image's edge are wrong: the boundary rule. With clamp, "
                   "row r + dy outside the image becomes 0 or rows - 1 (not rows), column c + dx 0 or cols - 1 "
                   "(not cols); with zero, the pixel is 0.";
        case Where::tile_border:
            return "only pixels within the radius of a 32 x 32 tile's edge are wrong, away from the image's edge: "
                   "they need the tile's halo, the R pixels on every side of the output tile. Does the load fill "
                   "the whole (32 + 2R) x (32 + 2R) input tile, starting at row 32 * tile - R, column "
                   "32 * blockIdx.x - R?";
        case Where::anywhere: break;
    }
    return "if this fails under some emulator schedules and not others (the schedule is named below), threads read "
           "the shared tile before the threads that load it have stored their pixels (a __syncthreads() missing "
           "after the load), or the next tile's load overwrites it while others still read (one missing before the "
           "next load). Otherwise look at the filter's radius (the one set_filter was given, not a fixed 2) and "
           "the indices of the tile.";
}

course::Comparison check(Function f, Shape s, Boundary b, const std::vector<float>& weights, int radius,
                         const std::vector<float>& in, const reference::Filtered& expected, const Result& result) {
    const std::size_t count = in.size();
    const std::vector<float> tail_before(result.tail.size(), course::poison_value<float>());
    course::Comparison guard = course::compare_guard(
        tail_before, result.tail, count, "out",
        "a write without a bounds check: the tiles on the bottom and right edges stick out of the image, and their "
        "threads must write out(r, c) only if r < rows and c < cols.");
    if (!guard.ok) {
        guard.message = header(f, s, b, radius) + ":\n" + guard.message;
        return guard;
    }
    std::vector<float> rounded(count);
    for (std::size_t i = 0; i < count; ++i) rounded[i] = static_cast<float>(expected.value[i]);
    const std::vector<float> poisoned(count, course::poison_value<float>());
    course::CompareContext<float> ctx;
    ctx.name = "out";
    ctx.columns = static_cast<std::size_t>(s.cols);
    ctx.before = &poisoned;
    ctx.hint_if_untouched =
        "Does the grid cover every tile: ceil(cols / 32) blocks in x, and in y as many tile rows as the grid does "
        "not cover at once, looped over (for (tile = blockIdx.y; tile < tiles; tile += gridDim.y))? Does each "
        "thread write all its rows of the tile?";
    course::Comparison cmp = course::compare(
        rounded, result.out,
        [&expected](std::size_t i, float, float g) {
            return std::fabs(static_cast<double>(g) - expected.value[i]) <= expected.bound[i];
        },
        ctx);
    if (!cmp.ok) {
        std::string message = header(f, s, b, radius) + ":\n" + cmp.message;
        std::size_t untouched = 0;
        for (const float v : result.out) untouched += std::isnan(v) ? 1 : 0;
        if (untouched == 0) {
            message += "\n  likely cause: " + likely_cause(in, s, b, weights, radius, expected, result.out);
        }
        message += "\n  (allowed error per pixel: n * FLT_EPSILON * sum |w * in| over the n = (2R + 1)^2 terms)";
        cmp.message = message;
    }
    return cmp;
}

void require_filtered(Function f, Shape s, Boundary b, int radius) {
    CAPTURE(function_name(f), describe_shape(s), boundary_name(b), radius, course::seed());
    const std::size_t count = static_cast<std::size_t>(s.rows) * static_cast<std::size_t>(s.cols);
    const std::vector<float> in = course::random_values<float>(count, -1.0f, 1.0f, "in " + describe_shape(s));
    const std::vector<float> weights = random_filter(radius);
    lesson16::set_filter(weights.data(), radius);
    const reference::Filtered expected = reference::filter(in, static_cast<std::size_t>(s.rows),
                                                           static_cast<std::size_t>(s.cols), weights, radius,
                                                           {b == Boundary::clamp, false});
    course::for_each_schedule(
        [&] { COURSE_REQUIRE_MATCH(check(f, s, b, weights, radius, in, expected, run_filter(f, s, b, in))); });
}

// An empty image: nothing launched, no error, nothing written. Part of the
// every-shape test case, not one of its own: a starter that does nothing
// would pass it, and an untouched starter earns no points.
void require_empty_launches_nothing(Function f, Shape s) {
    CAPTURE(function_name(f), describe_shape(s));
    course::DeviceBuffer<float> out(tail_size(s));
    out.poison();
    INFO("an image with no pixel must launch nothing: a grid of 0 blocks is a launch error "
         "(cudaErrorInvalidConfiguration). The input pointer is null here.");
    run(f, nullptr, out.data(), s, Boundary::clamp);
    COURSE_LAUNCH_CHECK();
    const std::vector<float> before(out.size(), course::poison_value<float>());
    COURSE_REQUIRE_MATCH(course::compare_guard(before, out.download(), 0, "out",
                                               "the kernel ran and wrote although the image is empty"));
}

}  // namespace

TEST_CASE("convolve_tiled, and the given convolve_naive, match the CPU with a 5 x 5 filter for every shape and both "
          "boundaries, and launch nothing for an empty image", "[16]") {
    const Function f = GENERATE(Function::tiled, Function::naive);
    const Boundary b = GENERATE(Boundary::clamp, Boundary::zero);
    const Shape s = GENERATE_COPY(from_range(test_shapes()));
    require_filtered(f, s, b, 2);
    if (s.rows == test_shapes().front().rows && s.cols == test_shapes().front().cols) {
        for (const Shape empty : {Shape{0, 0}, Shape{0, 7}, Shape{5, 0}}) require_empty_launches_nothing(f, empty);
    }
}

TEST_CASE("convolve_tiled uses the radius set_filter was given, 1 to 4, and set_filter refuses any other",
          "[16]") {
    // A tall and a wide image, neither a multiple of the tile, each spanning
    // several tiles both ways; and one whose middle tiles lie wholly inside.
    const int radius = GENERATE(1, 3, 4, 2);
    const Boundary b = GENERATE(Boundary::clamp, Boundary::zero);
    const Shape s = GENERATE(Shape{70, 45}, Shape{45, 70}, Shape{72, 400});
    require_filtered(Function::tiled, s, b, radius);
    // The filter stays as it was when set_filter refuses.
    const std::vector<float> weights = random_filter(lesson16::kMaxRadius);
    INFO("set_filter must throw std::invalid_argument for a radius outside 1 to 4 or null weights, "
         "before copying anything");
    CHECK_THROWS_AS(lesson16::set_filter(weights.data(), 0), std::invalid_argument);
    CHECK_THROWS_AS(lesson16::set_filter(weights.data(), lesson16::kMaxRadius + 1), std::invalid_argument);
    CHECK_THROWS_AS(lesson16::set_filter(nullptr, 1), std::invalid_argument);
}
