// Lesson 08 tests: C = A·B for row-major float matrices, by shared-memory
// tiles (matmul_tiled) and by register blocking (matmul_register_blocked),
// against a CPU product in double, for square, non-square, non-multiple and
// empty shapes, under every emulator schedule (or repeatedly on a GPU).
#include <matmul.hpp>

#include "cpu_reference.hpp"

#include <course/catch.hpp>
#include <course/compare.hpp>
#include <course/device_buffer.hpp>
#include <course/inputs.hpp>
#include <course/schedules.hpp>

#include <cmath>
#include <cstddef>
#include <sstream>
#include <string>
#include <vector>

namespace {

// The two implementations the contract asks for; every test runs both.
enum class Implementation { tiled, register_blocked };

const char* function_name(Implementation which) {
    return which == Implementation::tiled ? "matmul_tiled" : "matmul_register_blocked";
}

struct Shape {
    int N, M, K;  // A is N x M, B is M x K, C is N x K
};

std::string describe(Shape s) {
    return std::to_string(s.N) + "x" + std::to_string(s.M) + "x" + std::to_string(s.K) + " (A " +
           std::to_string(s.N) + " x " + std::to_string(s.M) + ", B " + std::to_string(s.M) + " x " +
           std::to_string(s.K) + ", C " + std::to_string(s.N) + " x " + std::to_string(s.K) + ")";
}

constexpr std::size_t kGuard = 64;  // floats after C's N * K that must stay untouched

struct Inputs {
    std::vector<float> A, B;
};

// A and B drawn uniformly from [-a_scale, a_scale) and [-b_scale, b_scale).
Inputs make_inputs(Shape s, float a_scale, float b_scale) {
    const std::string tag = describe(s) + " scales " + std::to_string(a_scale) + "," + std::to_string(b_scale);
    const std::size_t a_size = static_cast<std::size_t>(s.N) * s.M, b_size = static_cast<std::size_t>(s.M) * s.K;
    return {course::random_values<float>(a_size, -a_scale, a_scale, "A " + tag),
            course::random_values<float>(b_size, -b_scale, b_scale, "B " + tag)};
}

std::vector<float> guard_values() {
    std::vector<float> guard(kGuard);
    for (std::size_t i = 0; i < kGuard; ++i) guard[i] = 1000.0f + static_cast<float>(i);
    return guard;
}

struct Output {
    std::vector<float> c, guard;
};

// Runs one implementation: C (poisoned with NaN, followed by guard values) = A·B.
Output run(Implementation which, Shape s, const Inputs& in) {
    const std::size_t c_size = static_cast<std::size_t>(s.N) * s.K;
    course::DeviceBuffer<float> A(in.A);
    course::DeviceBuffer<float> B(in.B);
    std::vector<float> c_with_guard(c_size, course::poison_value<float>());
    const std::vector<float> guard = guard_values();
    c_with_guard.insert(c_with_guard.end(), guard.begin(), guard.end());
    course::DeviceBuffer<float> C(c_with_guard);
    if (which == Implementation::tiled) {
        lesson08::matmul_tiled(A.data(), B.data(), C.data(), s.N, s.M, s.K);
    } else {
        lesson08::matmul_register_blocked(A.data(), B.data(), C.data(), s.N, s.M, s.K);
    }
    COURSE_LAUNCH_CHECK();
    const std::vector<float> all = C.download();
    return {std::vector<float>(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(c_size)),
            std::vector<float>(all.begin() + static_cast<std::ptrdiff_t>(c_size), all.end())};
}

// Whether element (i, j) of A·B is not exactly 0.
bool expected_is_nonzero(const Inputs& in, Shape s, std::size_t i, std::size_t j) {
    return lesson08::reference::element(in.A, in.B, s.M, s.K, i, j, s.M).value != 0.0;
}

// A likely cause for a wrong element (i, j) that the generic comparison
// cannot know: a phase count that drops the last partial tile along M.
std::string likely_cause(Implementation which, Shape s, const Inputs& in, std::size_t i, std::size_t j, float got,
                         double magnitude) {
    std::ostringstream out;
    if (s.M > 0 && got == 0.0f && expected_is_nonzero(in, s, i, j)) {
        out << "  likely cause: C[" << i << "][" << j << "] is 0, as if no phase ran: with M = " << s.M
            << " the number of phases must round up, (M + TILE - 1) / TILE, so that a partial tile (here perhaps "
               "the only one) is multiplied too.\n";
        return out.str();
    }
    for (const int tile : {8, 16, 32, 64, 128}) {
        if (s.M % tile == 0 || s.M < tile) continue;
        const int kept = s.M / tile * tile;
        const double truncated = lesson08::reference::element(in.A, in.B, s.M, s.K, i, j, kept).value;
        if (std::fabs(got - truncated) <= lesson08::reference::tolerance(s.M, magnitude)) {
            out << "  likely cause: C[" << i << "][" << j << "] is the sum over the first " << kept << " of the M = "
                << s.M << " terms, exactly the full tiles of width " << tile
                << ": the last, partial tile along M is dropped. The number of phases must round up, "
                   "(M + TILE - 1) / TILE, and the loads must fill the missing part of that tile with 0.\n";
            return out.str();
        }
    }
    out << "  likely cause: if this fails under some emulator schedules and not others (the schedule is named "
           "below), the threads race on the shared tiles: a __syncthreads() is missing after the tiles are "
           "stored (threads read elements others have not stored yet) or after they are used (a fast thread "
           "overwrites them with the next phase while others still multiply). If it fails on every schedule, "
           "check the indices: A[row * M + k], B[k * K + col], C[row * K + col], and that elements outside A or "
           "B are loaded as 0, not skipped.";
    if (which == Implementation::register_blocked) {
        out << " In the register-blocked kernel, also check that the checked (general) path is used for every "
               "shape that is not a multiple of the block tile.";
    }
    out << "\n";
    return out.str();
}

course::Comparison check_product(Implementation which, Shape s, const Inputs& in,
                                 const lesson08::reference::Product& expected, const Output& got) {
    std::vector<float> expected_float(expected.c.begin(), expected.c.end());
    const std::vector<float> poisoned(expected_float.size(), course::poison_value<float>());
    course::CompareContext<float> ctx;
    ctx.name = "C";
    ctx.before = &poisoned;
    ctx.hint_if_untouched =
        "The grid must cover all N x K elements of C (blocks along x for the columns K, along y for the rows N, "
        "rounded up), and every thread inside C writes its element, also when M = 0 (an empty sum is 0).";
    course::Comparison result = course::compare(
        expected_float, got.c,
        [&](std::size_t index, float, float g) {
            return std::fabs(static_cast<double>(g) - expected.c[index]) <=
                   lesson08::reference::tolerance(s.M, expected.magnitude[index]);
        },
        ctx);
    if (!result.ok) {
        std::size_t first = 0;
        while (std::fabs(static_cast<double>(got.c[first]) - expected.c[first]) <=
               lesson08::reference::tolerance(s.M, expected.magnitude[first])) {
            ++first;
        }
        const std::size_t i = first / static_cast<std::size_t>(s.K), j = first % static_cast<std::size_t>(s.K);
        std::ostringstream out;
        out.precision(9);
        out << function_name(which) << " with shape N x M x K = " << describe(s)
            << ", launched with the grid your launcher chooses, COURSE_SEED=" << course::seed() << ":\n  "
            << result.message << "\n  that is C[" << i << "][" << j << "] (row " << i << ", column " << j
            << "); allowed error there: " << lesson08::reference::tolerance(s.M, expected.magnitude[first])
            << " = M * FLT_EPSILON * sum_k |a_ik||b_kj|\n";
        // A NaN is the test's poison, never written: the comparison above already says so.
        if (!std::isnan(got.c[first])) out << likely_cause(which, s, in, i, j, got.c[first], expected.magnitude[first]);
        result.message = out.str();
        return result;
    }
    return course::compare_guard(guard_values(), got.guard, static_cast<std::size_t>(s.N) * s.K, "C");
}

// Checks one implementation on one shape under every emulator schedule.
void require_product(Implementation which, Shape s, float a_scale = 1.0f, float b_scale = 1.0f) {
    CAPTURE(function_name(which), describe(s), course::seed());
    const Inputs in = make_inputs(s, a_scale, b_scale);
    const lesson08::reference::Product expected = lesson08::reference::matmul(in.A, in.B, s.N, s.M, s.K);
    course::for_each_schedule([&] { COURSE_REQUIRE_MATCH(check_product(which, s, in, expected, run(which, s, in))); });
}

}  // namespace

TEST_CASE("square, non-square and non-multiple shapes give the CPU's product", "[08]") {
    const Shape shape = GENERATE(Shape{1, 1, 1}, Shape{17, 33, 9}, Shape{64, 64, 64}, Shape{100, 200, 300},
                                 Shape{31, 32, 33}, Shape{33, 1, 65});
    const Implementation which = GENERATE(Implementation::tiled, Implementation::register_blocked);
    require_product(which, shape);
}

TEST_CASE("shapes with only one dimension a multiple of the tile give the CPU's product", "[08]") {
    // 256 is a multiple of every tile size (8, 16, 32, 128); 45 and 77 of none.
    const Shape shape = GENERATE(Shape{256, 45, 77}, Shape{45, 256, 77}, Shape{45, 77, 256});
    const Implementation which = GENERATE(Implementation::tiled, Implementation::register_blocked);
    require_product(which, shape);
}

TEST_CASE("shapes that are whole block tiles give the CPU's product", "[08]") {
    // Multiples of 128 x 8 x 128: the register-blocked reference takes its
    // float4 path without bounds checks here. And one that is whole tiles of
    // C but not of the 8-wide slabs along M: it must take the checked path.
    const Shape shape = GENERATE(Shape{128, 8, 128}, Shape{256, 256, 256}, Shape{128, 72, 384}, Shape{128, 44, 128});
    const Implementation which = GENERATE(Implementation::tiled, Implementation::register_blocked);
    require_product(which, shape);
}

TEST_CASE("inputs of very different magnitudes stay within the scaled tolerance", "[08]") {
    // The tolerance scales with sum_k |a_ik||b_kj|, so it follows the inputs.
    const Implementation which = GENERATE(Implementation::tiled, Implementation::register_blocked);
    require_product(which, Shape{70, 150, 40}, 1000.0f, 0.001f);
}

TEST_CASE("M = 0 gives a C of zeros, and N = 0 or K = 0 launches nothing", "[08]") {
    const Shape shape = GENERATE(Shape{5, 0, 7}, Shape{128, 0, 128}, Shape{0, 5, 7}, Shape{3, 5, 0}, Shape{0, 0, 0});
    const Implementation which = GENERATE(Implementation::tiled, Implementation::register_blocked);
    require_product(which, shape);
}
