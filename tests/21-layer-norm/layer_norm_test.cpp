// Lesson 21 tests: layer norm of float and half rows against a CPU layer norm
// in double precision, at the edge shapes (one column, rows no multiple of
// the vector width, more rows than the grid, rows longer than a block's
// threads), on rows that punish a careless variance (far from zero with a
// small spread, a spread below eps, constant rows), under every emulator
// schedule (or repeatedly on a GPU).
#include <layer_norm.hpp>

#include "cpu_reference.hpp"

#include <course/backend.hpp>
#include <course/catch.hpp>
#include <course/compare.hpp>
#include <course/device_buffer.hpp>
#include <course/inputs.hpp>
#include <course/schedules.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace {

namespace reference = lesson21_reference;

struct Shape {
    int rows = 0;
    int cols = 0;
};

// One column; around a warp, a block's threads (128) and vectors of 4 and 8;
// rows up to 1024 values take the reference's warp per row (8 or 32 values a
// lane: 256, 257 and 1024, 1025 sit on its edges), longer ones a block per
// row: in registers when vectorized (2000 with 8 warps, 6000 with 16), in
// two passes otherwise (1025, 1030, 4099) or beyond 8192 (8200); odd widths
// (31, 33, 257, 1009, 1025, 4099) forbid 16-byte vectors. More rows than the
// reference's grid on the emulator's 8 SMs: 700 rows of 96 against 64 blocks
// of 8 warps, 70 rows of 2000 and of 1030 against 64 blocks. On a GPU also
// a large matrix.
std::vector<Shape> test_shapes() {
    std::vector<Shape> shapes{{1, 1},    {5, 1},     {3, 31},    {4, 33},   {3, 128},  {2, 256},
                              {2, 257},  {3, 1000},  {2, 1009},  {3, 1024}, {3, 1025}, {2, 4099},
                              {2, 8200}, {300, 64},  {700, 96},  {70, 2000}, {70, 1030}, {5, 6000}};
    if (!course::kEmulator) shapes.push_back({4099, 1536});
    return shapes;
}

const float kEps = lesson21::kDefaultEps;

// The rows take turns at four kinds of values, so every shape meets each:
// 0: uniform in [-1, 1) (mean near 0);
// 1: 10000 + uniform in [-1, 1) (1000 + for half inputs): far from zero
//    with a small spread, where mean(x^2) - mean^2 cancels every digit;
// 2: uniform in [-0.001, 0.001): a variance (about 3e-7) below eps, where
//    eps must go under the square root;
// 3: one value repeated: variance 0, y = beta.
const char* kind_name(int row) {
    switch (row % 4) {
        case 0: return "uniform in [-1, 1)";
        case 1: return "10000 (half: 1000) + uniform in [-1, 1)";
        case 2: return "uniform in [-0.001, 0.001) (variance below eps)";
        default: return "one value repeated (variance 0)";
    }
}

std::vector<float> make_input(Shape s, float offset, const std::string& label) {
    const std::size_t rows = static_cast<std::size_t>(s.rows), cols = static_cast<std::size_t>(s.cols);
    std::vector<float> x = course::random_values<float>(rows * cols, -1.0f, 1.0f, label);
    for (std::size_t r = 0; r < rows; ++r) {
        float* row = x.data() + r * cols;
        const float constant = row[0] * 3.0f + 0.25f;
        for (std::size_t c = 0; c < cols; ++c) {
            switch (r % 4) {
                case 1: row[c] = offset + row[c]; break;
                case 2: row[c] *= 0.001f; break;
                case 3: row[c] = constant; break;
                default: break;
            }
        }
    }
    return x;
}

// Half inputs hold halves: the values are rounded to half first, and the
// CPU reference works from the rounded values. Kind 1 is 1000 +- 1 for them
// (steps of 0.5: around 10000 half's steps are 8, and +- 1 would round away).
std::vector<float> rounded_to_half(std::vector<float> x) {
    for (float& v : x) v = reference::half_value(reference::half_bits(v));
    return x;
}

// __half from and to its bits through __half_raw, as cuda_fp16.h offers on the host.
__half half_from_bits(std::uint16_t bits) {
    __half_raw raw;
    raw.x = bits;
    return __half(raw);
}

std::vector<__half> to_half(const std::vector<float>& x) {
    std::vector<__half> h;
    h.reserve(x.size());
    for (const float v : x) h.push_back(half_from_bits(reference::half_bits(v)));
    return h;
}

std::vector<float> to_float(const std::vector<__half>& h) {
    std::vector<float> x(h.size());
    for (std::size_t i = 0; i < h.size(); ++i) x[i] = reference::half_value(static_cast<__half_raw>(h[i]).x);
    return x;
}

std::string header(const char* type, Shape s) {
    std::ostringstream out;
    out << "layer_norm of " << s.rows << " x " << s.cols << " " << type << " values (COURSE_SEED=" << course::seed()
        << ")";
    return out.str();
}

// Compares mean and rstd, then y; on a difference, names the row's kind and
// what the difference most likely means.
course::Comparison check(Shape s, const std::vector<float>& x, const reference::Expected& e,
                         const std::vector<float>& mean, const std::vector<float>& rstd, const std::vector<float>& y,
                         const std::string& what) {
    const std::size_t rows = static_cast<std::size_t>(s.rows), cols = static_cast<std::size_t>(s.cols);
    std::ostringstream out;
    for (std::size_t r = 0; r < rows; ++r) {
        const reference::RowExpected& row = e.rows[r];
        const bool mean_ok = std::fabs(mean[r] - row.mean) <= row.mean_tol;
        const bool rstd_ok = std::fabs(rstd[r] - row.rstd) <= row.rstd_tol;
        if (mean_ok && rstd_ok) continue;
        out << what << ":\n  row " << r << " (" << kind_name(static_cast<int>(r)) << "): ";
        if (std::isnan(mean[r]) && std::isnan(rstd[r])) {
            out << "mean and rstd were never written (they still hold the test's NaN poison): one thread per "
                   "row must store mean[row] and rstd[row].";
            return {false, out.str()};
        }
        if (!mean_ok) {
            out << "mean[" << r << "] = " << mean[r] << ", expected " << row.mean << " +- " << row.mean_tol;
            out << "\n  likely cause: the merge of two partial results must weight each mean by its count "
                   "(mean = mean_a + (mean_b - mean_a) * n_b / (n_a + n_b)), and every value counted once.";
            return {false, out.str()};
        }
        const double ratio = rstd[r] / row.rstd;
        const double n = static_cast<double>(cols);
        out << "rstd[" << r << "] = " << rstd[r] << ", expected " << row.rstd << " +- " << row.rstd_tol
            << " (got/expected = " << ratio << ")";
        if (cols > 1 && std::fabs(ratio - std::sqrt((n - 1.0) / n)) < 0.25 * std::fabs(1.0 - std::sqrt((n - 1.0) / n))) {
            out << "\n  likely cause: the variance divides M2 by n - 1 (the sample variance); layer norm uses the "
                   "biased one, M2 / n.";
        } else if (r % 4 == 2) {
            out << "\n  likely cause: with a variance below eps, rstd must be 1 / sqrt(var + eps): eps goes under "
                   "the square root, not after it.";
        } else if (r % 4 == 1 || std::isnan(rstd[r])) {
            out << "\n  likely cause: on values far from 0 with a small spread the variance cancels: "
                   "mean(x^2) - mean^2 subtracts two nearly equal numbers (about 10^8 for floats) and loses the digits that matter. Merge "
                   "(count, mean, M2) with Welford's update and Chan's formula instead.";
        } else {
            out << "\n  likely cause: the merge of two partial results must add, besides both M2, the spread "
                   "between their means: M2 = M2_a + M2_b + (mean_b - mean_a)^2 * n_a * n_b / (n_a + n_b).";
        }
        return {false, out.str()};
    }
    std::vector<float> expected(e.y.size());
    for (std::size_t i = 0; i < expected.size(); ++i) expected[i] = static_cast<float>(e.y[i]);
    course::CompareContext<float> ctx;
    ctx.name = "y";
    ctx.columns = cols;
    course::Comparison cmp = course::compare(
        expected, y, [&](std::size_t i, float, float g) { return std::fabs(g - e.y[i]) <= e.y_tol[i]; }, ctx);
    if (cmp.ok) return cmp;
    std::size_t first = 0;
    while (std::fabs(y[first] - e.y[first]) <= e.y_tol[first]) ++first;
    const std::size_t c = first % cols;
    out << what << ":\n  " << cmp.message << " (tolerance " << e.y_tol[first] << ", row kind "
        << kind_name(static_cast<int>(first / cols)) << ")";
    const double z = (x[first] - e.rows[first / cols].mean) * e.rows[first / cols].rstd;
    if (std::isnan(y[first])) {
        out << "\n  likely cause: y was never written there (it still holds the NaN poison): does every column "
               "get its write, the last ones of a row too (cols no multiple of the vector width)?";
    } else if (std::fabs(y[first] - z) < 1e-3 * (std::fabs(z) + 1)) {
        out << "\n  likely cause: y is the normalised value without gamma and beta: y = z * gamma[c] + beta[c].";
    } else {
        out << "\n  (the mean and rstd are right: the write is wrong. z = " << z << " there; y = z * gamma[" << c
            << "] + beta[" << c << "], gamma and beta indexed by the column, not the row.)";
    }
    return {false, out.str()};
}

template <class T>
void require_layer_norm(Shape s) {
    constexpr bool kHalf = std::is_same_v<T, __half>;
    const char* type = kHalf ? "half" : "float";
    CAPTURE(s.rows, s.cols, type);
    const std::size_t rows = static_cast<std::size_t>(s.rows), cols = static_cast<std::size_t>(s.cols);
    const std::string label = std::string("layer_norm ") + type + " " + std::to_string(s.rows) + "x" +
                              std::to_string(s.cols);
    std::vector<float> x = make_input(s, kHalf ? 1000.0f : 10000.0f, label);
    if (kHalf) x = rounded_to_half(std::move(x));
    const std::vector<float> gamma = course::random_values<float>(cols, 0.5f, 1.5f, label + " gamma");
    const std::vector<float> beta = course::random_values<float>(cols, -1.0f, 1.0f, label + " beta");
    const reference::Expected expected = reference::layer_norm(x, gamma, beta, rows, cols, kEps, kHalf);

    course::DeviceBuffer<float> d_gamma(gamma), d_beta(beta), d_mean(rows), d_rstd(rows);
    std::vector<T> host_x;
    if constexpr (kHalf) {
        host_x = to_half(x);
    } else {
        host_x = x;
    }
    course::DeviceBuffer<T> d_x(host_x), d_y(rows * cols);
    // NaN in every output: anything never written shows as NaN.
    std::vector<T> poison;
    if constexpr (kHalf) {
        poison.assign(rows * cols, half_from_bits(0x7fff));  // a half NaN
    } else {
        poison.assign(rows * cols, course::poison_value<T>());
    }
    course::for_each_schedule([&] {
        d_y.upload(poison);
        d_mean.poison();
        d_rstd.poison();
        lesson21::layer_norm(d_x.data(), d_gamma.data(), d_beta.data(), d_y.data(), d_mean.data(), d_rstd.data(),
                             s.rows, s.cols, kEps);
        COURSE_LAUNCH_CHECK();
        std::vector<float> y;
        if constexpr (kHalf) {
            y = to_float(d_y.download());
        } else {
            y = d_y.download();
        }
        COURSE_REQUIRE_MATCH(check(s, x, expected, d_mean.download(), d_rstd.download(), y, header(type, s)));
    });
}

// An empty matrix and bad arguments are checked inside a test case that
// needs real work: an untouched starter, whose launcher is given, earns nothing.
void require_empty_and_bad_arguments() {
    INFO("rows == 0 or cols == 0 is an empty matrix: return without launching (the pointers may be null); "
         "cols above kMaxCols, a negative rows or cols, or a negative eps throw std::invalid_argument");
    for (const Shape empty : {Shape{0, 0}, Shape{0, 7}, Shape{5, 0}}) {
        CAPTURE(empty.rows, empty.cols);
        lesson21::layer_norm(static_cast<const float*>(nullptr), nullptr, nullptr, static_cast<float*>(nullptr),
                             nullptr, nullptr, empty.rows, empty.cols);
        lesson21::layer_norm(static_cast<const __half*>(nullptr), nullptr, nullptr, static_cast<__half*>(nullptr),
                             nullptr, nullptr, empty.rows, empty.cols);
        COURSE_LAUNCH_CHECK();
    }
    course::DeviceBuffer<float> buffer(16);
    float* p = buffer.data();
    CHECK_THROWS_AS(lesson21::layer_norm(p, p, p, p, p, p, 1, lesson21::kMaxCols + 1), std::invalid_argument);
    CHECK_THROWS_AS(lesson21::layer_norm(p, p, p, p, p, p, -1, 4), std::invalid_argument);
    CHECK_THROWS_AS(lesson21::layer_norm(p, p, p, p, p, p, 1, -4), std::invalid_argument);
    CHECK_THROWS_AS(lesson21::layer_norm(p, p, p, p, p, p, 1, 4, -1.0f), std::invalid_argument);
}

}  // namespace

TEST_CASE("layer_norm of float rows matches the CPU in every shape, on rows far from zero, below eps and "
          "constant, and handles empty and bad arguments", "[21]") {
    const Shape s = GENERATE_COPY(from_range(test_shapes()));
    require_layer_norm<float>(s);
    if (s.rows == test_shapes().front().rows && s.cols == test_shapes().front().cols) {
        require_empty_and_bad_arguments();
    }
}

TEST_CASE("layer_norm of half rows keeps its statistics in float and rounds each y to half once", "[21]") {
    const Shape s = GENERATE_COPY(from_range(test_shapes()));
    require_layer_norm<__half>(s);
}
