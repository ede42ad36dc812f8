// Lesson 20 tests: each softmax (three passes; online with a warp per row;
// online with a block per row; the dispatch by row length) against a CPU
// softmax in double precision, at edge shapes (1 column, fewer columns than
// a warp, not a multiple of 4, around the rows a warp or a block keeps in
// registers, long rows), under every emulator schedule (or repeatedly on a
// GPU), and on rows that overflow a naive exp or hold masked (-inf) entries.
#include <softmax.hpp>

#include "cpu_reference.hpp"

#include <course/backend.hpp>
#include <course/catch.hpp>
#include <course/compare.hpp>
#include <course/device_buffer.hpp>
#include <course/inputs.hpp>
#include <course/schedules.hpp>

#include <cmath>
#include <cstddef>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

using Softmax = std::function<void(const float*, float*, std::size_t, std::size_t)>;

struct Shape {
    std::size_t rows;
    std::size_t cols;
};

// The shapes every function is checked at: one column; fewer columns than a
// warp's lanes (lanes with nothing to do); 31/32/33 and 255/256/257 (a warp,
// a block); not a multiple of 4 (no float4 rows); around 1024 (the rows a
// warp keeps in registers in the reference) and 4096 (a block's); longer
// rows that no group keeps whole; row counts around the 8 rows of a block of
// warps. The long row: 2^20 + 3 columns on a GPU, 20011 on the emulator.
std::vector<Shape> edge_shapes() {
    const std::size_t long_row = course::kEmulator ? 20011 : (std::size_t{1} << 20) + 3;
    return {{1, 1},   {3, 1},    {1, 2},    {9, 3},    {8, 4},    {5, 31},    {9, 32},
            {7, 33},  {3, 255},  {9, 256},  {2, 257},  {5, 1009}, {3, 1023}, {2, 1024},
            {3, 1025}, {2, 4095}, {1, 4096}, {2, 4097}, {3, 9001}, {2, long_row}};
}

// Many short rows: for a warp per row, many blocks of 8 rows and a partial
// last block. 70001 x 37 on a GPU; on the emulator 1001 x 37 for a warp per
// row, and 67 x 37 where a block takes each row (each such row costs the
// emulator a block of threads to switch between, under five schedules).
Shape many_rows(bool block_per_row) {
    if (!course::kEmulator) return {70001, 37};
    return block_per_row ? Shape{67, 37} : Shape{1001, 37};
}

// The shapes of the special rows (below): a row per kind, at short and long lengths.
std::vector<std::size_t> special_lengths() { return {1, 5, 33, 1000, 1500, 5000}; }

constexpr float kInf = std::numeric_limits<float>::infinity();

// The kinds of special rows, one per row, in this order.
const char* const kSpecialKinds[] = {
    "entries up to +-1e30 (exp overflows unless the maximum is subtracted)",
    "entries in [80, 100] (exp(88.8) overflows a float)",
    "every entry -inf (fully masked: zeros)",
    "the first half -inf (masked), then ordinary entries",
    "about half the entries -inf, scattered",
    "entries of +-3e38 (x - max overflows to -inf)",
    "every entry 1e30 (all equal: 1/cols each)",
    "every entry -inf but the last",
    "entries in [-1000, -990] (exp underflows unless the maximum is subtracted)",
};
constexpr std::size_t kSpecialRows = sizeof(kSpecialKinds) / sizeof(kSpecialKinds[0]);

std::vector<float> special_rows(std::size_t cols) {
    auto gen = course::rng("special rows " + std::to_string(cols));
    std::uniform_real_distribution<float> unit(0.0f, 1.0f);
    std::vector<float> m(kSpecialRows * cols);
    for (std::size_t r = 0; r < kSpecialRows; ++r) {
        for (std::size_t j = 0; j < cols; ++j) {
            const float u = unit(gen);
            float x = 0.0f;
            switch (r) {
                case 0: x = (2.0f * u - 1.0f) * 1e30f; break;
                case 1: x = 80.0f + 20.0f * u; break;
                case 2: x = -kInf; break;
                case 3: x = j < cols / 2 ? -kInf : 16.0f * u - 8.0f; break;
                case 4: x = u < 0.5f ? -kInf : 16.0f * u - 8.0f; break;
                case 5: x = u < 0.5f ? -3e38f : 3e38f * u; break;
                case 6: x = 1e30f; break;
                case 7: x = j + 1 < cols ? -kInf : 5.0f; break;
                default: x = -1000.0f + 10.0f * u; break;
            }
            m[r * cols + j] = x;
        }
    }
    return m;
}

// True when `g` still holds the poison the test filled the output with (a NaN, compared bit for bit).
bool is_poison(float g) {
    const float poison = course::poison_value<float>();
    return std::memcmp(&g, &poison, sizeof g) == 0;
}

// The first line of a failure: what was called, on what.
std::string header(const std::string& call, Shape s, const std::string& inputs) {
    std::ostringstream out;
    out << call << " on a " << s.rows << " x " << s.cols << " matrix of " << inputs
        << " (COURSE_SEED=" << course::seed() << ")";
    return out.str();
}

// Compares a softmax with the exact one within the contract's bound; when it
// differs, looks at the first wrong row and says what it most likely means.
course::Comparison check_softmax(const std::vector<float>& in, const lesson20_reference::RowSoftmax& exact,
                                 const std::vector<float>& got, Shape s, const std::string& what,
                                 const char* const* row_kinds = nullptr, std::size_t kinds = 0) {
    const std::size_t cols = s.cols;
    // How far below its row's maximum an entry is (0 for a masked entry, whose exact value is 0).
    const auto distance = [&](std::size_t i) {
        const double m = exact.row_max[i / cols];
        return std::isinf(m) || std::isinf(in[i]) ? 0.0 : std::fabs(static_cast<double>(in[i]) - m);
    };
    const auto ok = [&](std::size_t i, float g) {
        const double e = exact.value[i];
        return std::fabs(static_cast<double>(g) - e) <= lesson20_reference::tolerance(e, distance(i), cols);
    };
    std::vector<float> expected(exact.value.size());
    for (std::size_t i = 0; i < expected.size(); ++i) expected[i] = static_cast<float>(exact.value[i]);
    course::CompareContext<float> ctx;
    ctx.name = "out";
    ctx.columns = cols;
    course::Comparison cmp = course::compare(expected, got, [&](std::size_t i, float, float g) { return ok(i, g); }, ctx);
    if (cmp.ok) return cmp;

    std::size_t first = 0;
    while (first < got.size() && ok(first, got[first])) ++first;
    const std::size_t row = first / cols;
    std::size_t wrong_rows = 0, last_wrong_row = 0;
    for (std::size_t r = 0; r < s.rows; ++r) {
        for (std::size_t j = 0; j < cols; ++j) {
            if (!ok(r * cols + j, got[r * cols + j])) {
                ++wrong_rows;
                last_wrong_row = r;
                break;
            }
        }
    }
    bool row_not_finite = false, row_has_masked = false, masked_at_start = std::isinf(in[row * cols]);
    std::size_t row_poisoned = 0;
    double row_sum = 0.0;
    for (std::size_t j = 0; j < cols; ++j) {
        const float g = got[row * cols + j];
        if (is_poison(g)) ++row_poisoned;
        if (!std::isfinite(g)) row_not_finite = true;
        if (std::isinf(in[row * cols + j])) row_has_masked = true;
        row_sum += g;
    }
    const double row_max = exact.row_max[row];

    std::ostringstream out;
    out << what << ":\n  " << cmp.message << "\n  " << wrong_rows << " of " << s.rows << " rows have a wrong entry";
    if (row_kinds != nullptr) out << "; the first wrong row, " << row << ", holds " << row_kinds[row % kinds];
    out << "\n  the bound at out[" << first << "] is +-"
        << lesson20_reference::tolerance(exact.value[first], distance(first), cols)
        << "; row " << row << " of the output sums to " << row_sum << " (a softmax row sums to 1, or 0 if fully masked)";

    bool all_poisoned = true;
    for (const float g : got) all_poisoned = all_poisoned && is_poison(g);
    if (all_poisoned) return {false, out.str()};  // compare() said it: nothing was written

    out << "\n  likely cause: ";
    if (row_poisoned == cols) {
        out << "row " << row << " still holds the poison the test filled the output with: nothing wrote it. Is "
               "there a warp (or block) for every row, the grid rounded up to whole blocks, and does a warp "
               "return only when its row is past the last one?";
    } else if (std::isinf(row_max) && row_not_finite) {
        out << "row " << row << " is fully masked (every entry -inf) and came back with NaN: its maximum is -inf, "
               "and exp(x - max) = exp(-inf - -inf) = exp(NaN). The contract gives such a row zeros: test for a "
               "row maximum of -inf and write 0.";
    } else if (row_not_finite && (row_max >= 88.0 || row_max <= -87.0)) {
        out << "row " << row << " has entries up to " << row_max << " and came back with inf or NaN: exp(x) "
               "overflows a float above 88.7 (inf / inf = NaN), and underflows to 0 below -103 (0 / 0 = NaN). "
               "Subtract the row's maximum first: exp(x - max) is at most 1, and 1 for the largest entry.";
    } else if (row_not_finite && row_has_masked) {
        out << "row " << row << " has masked (-inf) entries" << (masked_at_start ? ", from its first column," : "")
            << " and came back with NaN: somewhere -inf - -inf = NaN was computed. A running maximum is -inf "
               "until the first finite entry: an entry (or a merged state) must not subtract it then; merging two "
               "states whose maxima are both -inf gives (-inf, 0).";
    } else if (row_not_finite && cols < 32) {
        out << "row " << row << " has " << cols << " columns, fewer than a warp has lanes, and came back with "
               "NaN or inf: the lanes (or threads) without a column hold (max -inf, sum 0), and merging two of "
               "them must give (-inf, 0) again, not exp(-inf - -inf) = NaN.";
    } else if (row_not_finite) {
        out << "inf or NaN where the exact softmax is finite: is the row's maximum subtracted before exp, and is "
               "every thread's sum combined before the division?";
    } else if (wrong_rows > 0 && last_wrong_row == s.rows - 1 && wrong_rows == s.rows - row && row > 0) {
        out << "every row from " << row << " on is wrong: is the grid large enough for all " << s.rows
            << " rows (rounded up to a whole block of rows), and does each row start at in + row * cols?";
    } else if (std::fabs(row_sum - 1.0) > 1e-3 && !std::isinf(row_max)) {
        double ratio = 0.0;
        bool constant_ratio = true;
        for (std::size_t j = 0; j < cols; ++j) {
            const double e = exact.value[row * cols + j];
            if (e < 1e-30) continue;
            const double r = got[row * cols + j] / e;
            if (ratio == 0.0) ratio = r;
            if (std::fabs(r - ratio) > 1e-3 * ratio) constant_ratio = false;
        }
        if (constant_ratio && ratio != 0.0) {
            out << "row " << row << " is the right softmax times " << ratio << ": the numerators are right and "
                << "the sum divided by is not. Is every partial sum rescaled to the new maximum when the maximum "
                   "grows (sum * exp(old max - new max)), both in a thread's running sum and when two states "
                   "merge? Does every thread divide by the whole row's sum, after the warp (and block) merge, not "
                   "by its own? Does the sum take only the row's own entries: loops to j < cols, no vector "
                   "reaching past the row's end, and entries past the end counted as -inf (adding 0), not 0 "
                   "(adding exp(0 - max))?";
        } else {
            out << "row " << row << " does not sum to 1: entries are missing, counted twice or taken from "
                   "another row. Check the loop bounds over the columns (j < cols), the row's start (in + row * "
                   "cols) and that the merge over the warp (5 shuffle steps: 16, 8, 4, 2, 1) and the block is "
                   "complete. (Wrong under some schedules only? Then threads race: a __syncthreads() is missing "
                   "between writing the warps' states to shared memory and reading them.)";
        }
    } else {
        out << "the row sums to 1 but its entries are off: are they divided in the right order, each by its own "
               "row's sum and maximum? (Wrong under some schedules only? Then threads race: a __syncthreads() is "
               "missing between writing the warps' states to shared memory and reading them.)";
    }
    return {false, out.str()};
}

// Runs `softmax` on `in` (a rows x cols matrix) under every schedule and compares.
void check_matrix(const std::string& call, const Softmax& softmax, const std::vector<float>& in, Shape s,
                  const std::string& inputs, const char* const* row_kinds = nullptr, std::size_t kinds = 0) {
    CAPTURE(s.rows, s.cols);
    const lesson20_reference::RowSoftmax exact = lesson20_reference::softmax_rows(in, s.rows, s.cols);
    course::DeviceBuffer<float> d_in(in);
    course::DeviceBuffer<float> d_out(in.size());
    course::for_each_schedule([&] {
        d_out.poison();
        softmax(d_in.data(), d_out.data(), s.rows, s.cols);
        COURSE_LAUNCH_CHECK();
        COURSE_REQUIRE_MATCH(
            check_softmax(in, exact, d_out.download(), s, header(call, s, inputs), row_kinds, kinds));
    });
}

// Random entries in [-8, 8) at every edge shape, and many short rows.
void check_shapes(const std::string& call, const Softmax& softmax, bool block_per_row) {
    std::vector<Shape> shapes = edge_shapes();
    shapes.push_back(many_rows(block_per_row));
    for (const Shape s : shapes) {
        const std::vector<float> in = course::random_values<float>(
            s.rows * s.cols, -8.0f, 8.0f, call + " " + std::to_string(s.rows) + "x" + std::to_string(s.cols));
        check_matrix(call, softmax, in, s, "entries uniform in [-8, 8)");
    }
}

// The special rows, at several lengths.
void check_special_rows(const std::string& call, const Softmax& softmax) {
    for (const std::size_t cols : special_lengths()) {
        check_matrix(call, softmax, special_rows(cols), Shape{kSpecialRows, cols},
                     "large, masked and fully masked rows", kSpecialKinds, kSpecialRows);
    }
}

// Nothing to do for an empty matrix; it must not fail (nor touch the null pointers).
void check_empty(const Softmax& softmax) {
    softmax(nullptr, nullptr, 0, 0);
    softmax(nullptr, nullptr, 0, 5);
    softmax(nullptr, nullptr, 7, 0);
    COURSE_LAUNCH_CHECK();
}

const Softmax three_pass = [](const float* in, float* out, std::size_t rows, std::size_t cols) {
    lesson20::softmax_rows_three_pass(in, out, rows, cols);
};
const Softmax online_warp = [](const float* in, float* out, std::size_t rows, std::size_t cols) {
    lesson20::softmax_rows_online_warp(in, out, rows, cols);
};
const Softmax online_block = [](const float* in, float* out, std::size_t rows, std::size_t cols) {
    lesson20::softmax_rows_online_block(in, out, rows, cols);
};
const Softmax online = [](const float* in, float* out, std::size_t rows, std::size_t cols) {
    lesson20::softmax_rows_online(in, out, rows, cols);
};

}  // namespace

TEST_CASE("the three-pass softmax matches the CPU's at every shape, under every schedule", "[20]") {
    check_empty(three_pass);
    check_shapes("softmax_rows_three_pass", three_pass, true);
}

TEST_CASE("the three-pass softmax stays finite for huge entries and gives masked entries and rows zeros", "[20]") {
    check_special_rows("softmax_rows_three_pass", three_pass);
}

TEST_CASE("the online softmax with a warp per row matches the CPU's at every shape, short and long rows", "[20]") {
    check_empty(online_warp);
    check_shapes("softmax_rows_online_warp", online_warp, false);
}

TEST_CASE("the online softmax with a block per row matches the CPU's at every shape, under every schedule", "[20]") {
    check_empty(online_block);
    check_shapes("softmax_rows_online_block", online_block, true);
}

TEST_CASE("the online softmax, warp and block, handles huge entries, masked entries and fully masked rows", "[20]") {
    check_special_rows("softmax_rows_online_warp", online_warp);
    check_special_rows("softmax_rows_online_block", online_block);
}

TEST_CASE("softmax_rows_online is right on both sides of kWarpRowLimit and on a long row", "[20]") {
    check_empty(online);
    const std::size_t long_row = course::kEmulator ? 70001 : (std::size_t{1} << 20);
    for (const Shape s : {Shape{17, lesson20::kWarpRowLimit}, Shape{5, lesson20::kWarpRowLimit + 1},
                          Shape{3, 3 * lesson20::kWarpRowLimit + 7}, Shape{2, long_row}}) {
        const std::vector<float> in = course::random_values<float>(
            s.rows * s.cols, -8.0f, 8.0f, "online " + std::to_string(s.rows) + "x" + std::to_string(s.cols));
        check_matrix("softmax_rows_online", online, in, s, "entries uniform in [-8, 8)");
    }
}
