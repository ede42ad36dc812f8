// Lesson 13 tests: COO to CSR exactly like a CPU sort, for empty matrices,
// empty rows, one long row, sorted and unsorted COO, duplicates, keys of
// 0 to 41 bits, under every emulator schedule (the rows are counted with
// atomics: the result must not depend on the order); the CSR SpMV within a
// float sum's rounding, for mean row lengths that pick every group width
// from one lane to a warp; PageRank against a CPU power iteration; and, on a
// GPU, both against cuSPARSE.
#include <sparse.hpp>

#include "cpu_reference.hpp"

#include <course/backend.hpp>
#include <course/catch.hpp>
#include <course/compare.hpp>
#include <course/device_buffer.hpp>
#include <course/inputs.hpp>
#include <course/schedules.hpp>

#include <algorithm>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstddef>
#include <numeric>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#ifndef __CUDACC_EMULATOR__
#include "cusparse_helpers.hpp"
#endif

namespace {

using lesson13::reference::Coo;
using lesson13::reference::Csr;

// A named test matrix.
struct Case {
    std::string name;
    Coo coo;
};

// The large case: 2^20 rows of 8 entries on a GPU; on the emulator, where
// every atomic is a scheduling point and each check runs five schedules,
// 20,000 rows of 4 (still many blocks, and rows beyond the scan's 1024 threads).
constexpr int kLargeRows = course::kEmulator ? 20000 : 1 << 20;
constexpr int kLargePerRow = course::kEmulator ? 4 : 8;

// nnz entries at random (row, column) positions, values in [-1, 1).
Coo random_coo(int n_rows, int n_cols, int nnz, const std::string& label) {
    Coo coo{n_rows, n_cols, {}, {}, {}};
    if (nnz > 0) {
        coo.rows = course::random_values<int>(nnz, 0, n_rows - 1, label + " rows");
        coo.cols = course::random_values<int>(nnz, 0, n_cols - 1, label + " cols");
        coo.vals = course::random_values<float>(nnz, -1.0f, 1.0f, label + " vals");
    }
    return coo;
}

// The matrices every conversion test runs on.
std::vector<Case> conversion_cases() {
    std::vector<Case> cases;
    cases.push_back({"the empty matrix (0 rows, nnz 0)", Coo{0, 0, {}, {}, {}}});
    cases.push_back({"257 rows and nnz 0 (every row empty)", Coo{257, 10, {}, {}, {}}});
    for (const int nnz : course::edge_sizes()) {
        if (nnz == 0) continue;
        cases.push_back({"100 x 100, nnz " + std::to_string(nnz) + ", random order",
                         random_coo(100, 100, nnz, "nnz " + std::to_string(nnz))});
    }
    for (const int rows : course::edge_sizes()) {
        if (rows == 0) continue;
        cases.push_back({std::to_string(rows) + " rows, 3 entries per row on average, random order",
                         random_coo(rows, 64, 3 * rows, "rows " + std::to_string(rows))});
    }
    {  // only the even rows have entries
        Coo coo = random_coo(1009, 50, 4000, "even rows");
        for (int& r : coo.rows) r -= r % 2;
        cases.push_back({"1009 rows, only the even rows filled (empty rows between)", coo});
    }
    {  // one long row among short ones
        Coo coo = random_coo(300, 5000, 600, "dense row short rows");
        for (int c = 0; c < 3000; ++c) {
            coo.rows.push_back(137);
            coo.cols.push_back((c * 7919) % 5000);
            coo.vals.push_back(static_cast<float>(c) / 3000.0f);
        }
        cases.push_back({"300 rows, row 137 with 3000 entries (a long row)", coo});
    }
    {  // all entries in the last row
        Coo coo = random_coo(50, 1000, 700, "one row");
        std::fill(coo.rows.begin(), coo.rows.end(), 49);
        cases.push_back({"50 rows, all 700 entries in the last row", coo});
    }
    {  // already sorted by (row, column), no duplicates
        Coo coo{500, 40, {}, {}, {}};
        for (int r = 0; r < 500; ++r) {
            for (int c = r % 3; c < 40; c += 5) {
                coo.rows.push_back(r);
                coo.cols.push_back(c);
                coo.vals.push_back(static_cast<float>(r) + 0.01f * static_cast<float>(c));
            }
        }
        cases.push_back({"500 rows, COO already sorted by (row, column)", coo});
        std::reverse(coo.rows.begin(), coo.rows.end());
        std::reverse(coo.cols.begin(), coo.cols.end());
        std::reverse(coo.vals.begin(), coo.vals.end());
        cases.push_back({"500 rows, COO sorted backwards", coo});
    }
    {  // duplicates: each (row, column) pair appears 1 to 4 times, with different values
        Coo coo = random_coo(200, 8, 2000, "duplicates");
        for (std::size_t k = 0; k < coo.vals.size(); ++k) coo.vals[k] = static_cast<float>(k);
        cases.push_back({"200 x 8 with 2000 entries: duplicate (row, column) pairs, each its own value", coo});
    }
    {  // columns anywhere in [0, 2^31): a key of 10 + 31 bits, past 32, in six passes
        Coo coo = random_coo(1009, INT_MAX, 3000, "wide columns");
        coo.cols = course::random_values<int>(3000, 0, INT_MAX, "wide columns cols");
        cases.push_back({"1009 rows, columns up to 2^31 - 1 (a key of 41 bits)", coo});
    }
    // One row, every entry in column 0: a key of no bits, nothing to sort
    // (the COO order is the CSR's), and every entry a duplicate of the others.
    cases.push_back({"1 row, all 300 entries in column 0 (nothing to sort)", random_coo(1, 1, 300, "one cell")});
    cases.push_back({std::to_string(kLargeRows) + " rows, " + std::to_string(kLargePerRow) +
                         " entries per row on average, random order",
                     random_coo(kLargeRows, kLargeRows, kLargeRows * kLargePerRow, "large")});
    return cases;
}

// The row holding CSR entry k.
int row_of_entry(const std::vector<int>& row_ptr, int k) {
    return static_cast<int>(std::upper_bound(row_ptr.begin(), row_ptr.end(), k) - row_ptr.begin()) - 1;
}

// Explains a wrong row_ptr.
course::Comparison check_row_ptr(const std::vector<int>& expected, const std::vector<int>& got,
                                 const std::string& what) {
    course::CompareContext<int> ctx;
    ctx.name = "row_ptr";
    course::Comparison cmp = course::compare_exact(expected, got, ctx);
    if (cmp.ok) return cmp;
    const std::size_t n = expected.size() - 1;
    std::size_t first = 0;
    while (expected[first] == got[first]) ++first;
    std::ostringstream out;
    out << what << ":\n  " << cmp.message.substr(0, cmp.message.find("\n  likely cause:"))
        << "\n  row_ptr[" << first << "] is where row " << first << " starts\n  likely cause: ";
    bool shifted = n > 0;
    for (std::size_t r = 0; r < n; ++r) shifted = shifted && got[r] == expected[r + 1];
    const int poison = course::poison_value<int>();
    if (std::all_of(got.begin(), got.end(), [&](int v) { return v == poison; })) {
        out << "row_ptr still holds the poison the test filled it with: nothing wrote it. coo_to_csr must write "
               "all n_rows + 1 offsets, also when nnz == 0 (all zeros) and when n_rows == 0 (row_ptr[0] = 0); "
               "the last one, row_ptr[n_rows] = nnz, is where the last row ends.";
    } else if (shifted) {
        out << "row_ptr[r] holds the end of row r, not its start: the scan is inclusive (it adds row r's own "
               "count). row_ptr[r] must be the number of entries in rows 0 .. r-1 (an exclusive scan), and "
               "row_ptr[0] = 0.";
    } else if (first == n && std::equal(expected.begin(), expected.end() - 1, got.begin())) {
        out << "every offset is right but the last: row_ptr[n_rows] must be nnz, the end of the last row "
               "(n_rows + 1 offsets for n_rows rows).";
    } else {
        out << "the counts per row or their scan are wrong: count each row with atomicAdd, then row_ptr[r] = "
               "count[0] + ... + count[r-1]. Wrong only on some emulator schedules? A barrier is missing in "
               "the scan.";
    }
    return {false, out.str()};
}

// Explains wrong columns or values, naming the row.
course::Comparison check_entries(const Csr& expected, const std::vector<int>& cols, const std::vector<float>& vals,
                                 const std::string& what) {
    const std::size_t nnz = expected.cols.size();
    std::size_t k = 0;
    while (k < nnz && expected.cols[k] == cols[k] && course::detail::bitwise_equal(expected.vals[k], vals[k])) ++k;
    if (k == nnz) return {};
    const int row = row_of_entry(expected.row_ptr, static_cast<int>(k));
    const int begin = expected.row_ptr[row], end = expected.row_ptr[row + 1];
    std::multiset<int> want_cols(expected.cols.begin() + begin, expected.cols.begin() + end);
    std::multiset<int> got_cols(cols.begin() + begin, cols.begin() + end);
    std::multiset<float> want_vals(expected.vals.begin() + begin, expected.vals.begin() + end);
    std::multiset<float> got_vals(vals.begin() + begin, vals.begin() + end);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < nnz; ++i) {
        if (expected.cols[i] != cols[i] || !course::detail::bitwise_equal(expected.vals[i], vals[i])) ++wrong;
    }
    std::ostringstream out;
    out.precision(9);
    out << what << ":\n  " << wrong << " of " << nnz << " CSR entries differ; the first is entry " << k
        << ", in row " << row << " (entries " << begin << " to " << end - 1 << "): expected (column "
        << expected.cols[k] << ", value " << expected.vals[k] << "), got (column " << cols[k] << ", value "
        << vals[k] << ")\n  likely cause: ";
    const bool cols_right = std::equal(expected.cols.begin(), expected.cols.end(), cols.begin());
    if (got_cols != want_cols) {
        out << "row " << row << " holds other columns than its entries': the entries are not grouped by row. Does "
            << "the sort cover every bit of the key (row * 2^column_bits + column): the rows' bits above the "
            << "columns', all the columns' bits, the last pass too when the bits are not a multiple of 8? Does "
            << "each pass count the same digits it scatters by?";
    } else if (!cols_right) {
        out << "row " << row << " has the right columns in the wrong order: are the columns' low digits sorted "
            << "first, and is every pass stable (entries of equal digits keep the order the pass found them in)?";
    } else if (got_vals == want_vals && expected.cols[k] == cols[k] &&
               std::count(expected.cols.begin() + begin, expected.cols.begin() + end, expected.cols[k]) > 1) {
        out << "column " << expected.cols[k] << " appears more than once in row " << row
            << " (duplicates), and their values are in the wrong order: duplicates keep their COO order, which a "
               "stable sort gives: within a warp, rank an entry after the lanes below it with the same digit.";
    } else {
        out << "the columns are right but the values are not: when a pass moves a column, it must move its "
               "value to the same place.";
    }
    return {false, out.str()};
}

// Runs coo_to_csr on poisoned outputs and checks all three arrays.
void require_conversion(const Case& c) {
    const Csr expected = lesson13::reference::coo_to_csr(c.coo);
    const int nnz = c.coo.nnz();
    CAPTURE(c.name, c.coo.n_rows, nnz, course::seed());
    const course::DeviceBuffer<int> d_rows(c.coo.rows), d_cols(c.coo.cols);
    const course::DeviceBuffer<float> d_vals(c.coo.vals);
    std::ostringstream what;
    what << "coo_to_csr of " << c.name << " (n_rows = " << c.coo.n_rows << ", nnz = " << nnz
         << ", COURSE_SEED=" << course::seed() << ")";
    course::for_each_schedule([&] {
        course::DeviceBuffer<int> row_ptr(c.coo.n_rows + 1), cols(nnz);
        course::DeviceBuffer<float> vals(nnz);
        row_ptr.poison();
        cols.poison();
        vals.poison();
        lesson13::coo_to_csr(c.coo.n_rows, nnz, d_rows.data(), d_cols.data(), d_vals.data(), row_ptr.data(),
                             cols.data(), vals.data());
        COURSE_LAUNCH_CHECK();
        COURSE_REQUIRE_MATCH(check_row_ptr(expected.row_ptr, row_ptr.download(), what.str()));
        COURSE_REQUIRE_MATCH(check_entries(expected, cols.download(), vals.download(), what.str()));
    });
}

// Runs csr_spmv and checks y within the rounding of a float sum per row,
// and that nothing past y[n_rows - 1] is written. cols and vals are passed
// `cols_skew` and `vals_skew` entries past the start of their allocations
// (which is 16-byte aligned), as a caller's pointers into larger arrays
// may be: a kernel that loads 16-byte vectors must still be right.
void require_spmv(const Csr& a, int n_cols, const std::string& name, int cols_skew = 0, int vals_skew = 0) {
    const int n_rows = static_cast<int>(a.row_ptr.size()) - 1;
    const std::vector<float> x = course::random_values<float>(n_cols, -1.0f, 1.0f, "x " + name);
    std::vector<double> exact, magnitude;
    lesson13::reference::spmv(a, x, exact, magnitude);
    std::vector<float> expected(exact.begin(), exact.end());
    CAPTURE(name, n_rows, a.cols.size(), cols_skew, vals_skew, course::seed());
    std::vector<int> cols(static_cast<std::size_t>(cols_skew), 0);
    cols.insert(cols.end(), a.cols.begin(), a.cols.end());
    std::vector<float> vals(static_cast<std::size_t>(vals_skew), 0.0f);
    vals.insert(vals.end(), a.vals.begin(), a.vals.end());
    const course::DeviceBuffer<int> d_row_ptr(a.row_ptr), d_cols(cols);
    const course::DeviceBuffer<float> d_vals(vals), d_x(x);
    constexpr int kGuard = 16;
    course::for_each_schedule([&] {
        course::DeviceBuffer<float> y(n_rows + kGuard);
        y.poison();
        lesson13::csr_spmv(n_rows, d_row_ptr.data(), d_cols.data() + cols_skew, d_vals.data() + vals_skew,
                           d_x.data(), y.data());
        COURSE_LAUNCH_CHECK();
        const std::vector<float> all = y.download();
        const std::vector<float> got(all.begin(), all.begin() + n_rows);
        const std::vector<float> guard(all.begin() + n_rows, all.end());
        course::CompareContext<float> ctx;
        ctx.name = "y";
        course::Comparison cmp = course::compare(
            expected, got,
            [&](std::size_t r, float, float g) {
                const double len = a.row_ptr[r + 1] - a.row_ptr[r];
                return std::fabs(g - exact[r]) <= (len + 2) * FLT_EPSILON * magnitude[r];
            },
            ctx);
        if (!cmp.ok) {
            cmp.message = "csr_spmv of " + name + " (n_rows = " + std::to_string(n_rows) +
                          ", COURSE_SEED=" + std::to_string(course::seed()) +
                          "): y[r] must be the sum over row r's entries row_ptr[r] .. row_ptr[r+1]-1 of "
                          "vals[k] * x[cols[k]] (0 for an empty row), within (len + 2) FLT_EPSILON sum |terms|\n  " +
                          cmp.message +
                          "\n  if y[r] is off by about one term, the loop over the row runs one entry too far or "
                          "stops one short (k < row_ptr[r + 1]); if it holds only some of the row's terms, the "
                          "lanes of a row's group each sum a share (k += lanes) that a shuffle reduction must add up; with "
                          "16-byte vector loads, the entries before a row's first vector and after its last must "
                          "still be read one by one.";
        }
        COURSE_REQUIRE_MATCH(cmp);
        COURSE_REQUIRE_MATCH(course::compare_guard(std::vector<float>(kGuard, course::poison_value<float>()),
                                                   guard, n_rows, "y",
                                                   "the groups past the last row must write nothing"));
    });
}

// A random graph of n nodes: each node links to 0 to 6 others (no
// self-links, none repeated); about one node in 7 links nowhere (dangling).
std::vector<std::pair<int, int>> random_links(int n, const std::string& label) {
    std::vector<std::pair<int, int>> links;
    if (n < 2) return links;
    auto gen = course::rng("links " + label);
    for (int from = 0; from < n; ++from) {
        const int count = static_cast<int>(gen() % 7);
        std::set<int> targets;
        for (int t = 0; t < count; ++t) {
            const int to = static_cast<int>(gen() % static_cast<unsigned>(n));
            if (to != from) targets.insert(to);
        }
        for (const int to : targets) links.emplace_back(from, to);
    }
    return links;
}

// Runs the student's pagerank on the graph's link matrix (built by the CPU
// reference) and returns the ranks and the iterations.
std::vector<float> run_pagerank(int n, const Csr& a, float damping, float tolerance, int max_iterations,
                                int& iterations) {
    const course::DeviceBuffer<int> d_row_ptr(a.row_ptr), d_cols(a.cols);
    const course::DeviceBuffer<float> d_vals(a.vals);
    course::DeviceBuffer<float> rank(n);
    rank.poison();
    iterations = lesson13::pagerank(n, d_row_ptr.data(), d_cols.data(), d_vals.data(), damping, tolerance,
                                    max_iterations, rank.data());
    COURSE_LAUNCH_CHECK();
    return rank.download();
}

// Checks ranks against the CPU's: L1 distance at most `l1_tolerance`.
course::Comparison check_ranks(const std::vector<double>& expected, const std::vector<float>& got,
                               double l1_tolerance, const std::string& what) {
    double l1 = 0, sum = 0;
    std::size_t worst = 0;
    for (std::size_t i = 0; i < expected.size(); ++i) {
        const double d = std::fabs(got[i] - expected[i]);
        l1 += std::isnan(d) ? 1e30 : d;
        sum += got[i];
        if (d > std::fabs(got[worst] - expected[worst]) || std::isnan(d)) worst = i;
    }
    if (l1 <= l1_tolerance) return {};
    std::ostringstream out;
    out.precision(9);
    out << what << ":\n  the ranks are " << l1 << " from the CPU's in L1 (allowed " << l1_tolerance
        << "); the largest difference is at node " << worst << ": expected " << expected[worst] << ", got "
        << got[worst] << "\n  the ranks add up to " << sum << " (should be 1)\n  likely cause: ";
    if (std::isnan(sum)) {
        out << "some ranks were never written (NaN is the poison the test filled them with).";
    } else if (sum < 0.999) {
        out << "rank leaks away each iteration: the dangling nodes (no outgoing links, empty columns of A) must "
               "give their rank to every node, dangling / n each, with dangling = sum(rank) - sum(A rank).";
    } else {
        out << "is the update next = (1 - damping)/n + damping * (A rank + dangling/n), starting from 1/n?";
    }
    return {false, out.str()};
}

}  // namespace

TEST_CASE("coo_to_csr gives the CSR of a CPU sort by (row, column, COO position), under every schedule", "[13]") {
    for (const Case& c : conversion_cases()) {
        SECTION(c.name) { require_conversion(c); }
    }
}

TEST_CASE("csr_spmv multiplies within a float sum's rounding, empty and long rows included", "[13]") {
    std::vector<Case> cases;
    for (const int rows : course::edge_sizes()) {
        cases.push_back({std::to_string(rows) + " x 300, 5 entries per row on average",
                         random_coo(rows, 300, 5 * rows, "spmv " + std::to_string(rows))});
    }
    {
        Coo coo = random_coo(1009, 4000, 2000, "spmv sparse rows");
        for (int c = 0; c < 4000; ++c) {
            coo.rows.push_back(500);
            coo.cols.push_back(c);
            coo.vals.push_back(1.0f / static_cast<float>(c + 1));
        }
        cases.push_back({"1009 x 4000, many empty rows, row 500 dense (4000 entries)", coo});
    }
    // Mean row lengths that pick each group width, 1 lane a row to 32 (a
    // warp), whether a lane takes 1 entry a step (lanes about the mean) or
    // 4 (a 16-byte vector: lanes about a quarter of it, as the reference),
    // and a warp for rows longer still.
    for (const int tenths : {5, 15, 30, 60, 120, 240, 480, 960, 1920}) {
        const std::string mean = std::to_string(tenths / 10) + "." + std::to_string(tenths % 10);
        cases.push_back({"333 x 2000, " + mean + " entries per row on average",
                         random_coo(333, 2000, 333 * tenths / 10, "spmv mean " + mean)});
    }
    cases.push_back({std::to_string(kLargeRows) + " rows, large",
                     random_coo(kLargeRows, kLargeRows, kLargeRows * kLargePerRow, "spmv large")});
    for (const Case& c : cases) {
        SECTION(c.name) { require_spmv(lesson13::reference::coo_to_csr(c.coo), c.coo.n_cols, c.name); }
    }
    // Rows of random lengths start anywhere; with cols and vals moved off
    // the 16-byte boundaries, by the same distance (a vector kernel's head
    // and tail entries change) and by different ones (its vectors cannot
    // line up in both arrays).
    const Csr skewed = lesson13::reference::coo_to_csr(random_coo(333, 2000, 333 * 12, "spmv skewed"));
    for (const auto& [cols_skew, vals_skew] :
         {std::pair{1, 1}, std::pair{2, 2}, std::pair{3, 3}, std::pair{1, 2}, std::pair{0, 3}}) {
        const std::string name = "333 x 2000, 12 entries per row on average, cols " + std::to_string(cols_skew) +
                                 " and vals " + std::to_string(vals_skew) + " entries past a 16-byte boundary";
        SECTION(name) { require_spmv(skewed, 2000, name, cols_skew, vals_skew); }
    }
    SECTION("columns unsorted within the rows (csr_spmv must not need them sorted)") {
        Csr a = lesson13::reference::coo_to_csr(random_coo(257, 100, 2000, "spmv unsorted"));
        for (int r = 0; r < 257; ++r) std::reverse(a.cols.begin() + a.row_ptr[r], a.cols.begin() + a.row_ptr[r + 1]);
        require_spmv(a, 100, "257 x 100 with each row's columns reversed");
    }
}

TEST_CASE("coo_to_csr then csr_spmv adds duplicate entries like any others", "[13]") {
    Coo coo = random_coo(300, 6, 3000, "spmv duplicates");
    const std::vector<float> x = course::random_values<float>(6, -1.0f, 1.0f, "x duplicates");
    std::vector<double> exact, magnitude;
    const Csr a = lesson13::reference::coo_to_csr(coo);
    lesson13::reference::spmv(a, x, exact, magnitude);
    CAPTURE(coo.n_rows, coo.nnz(), course::seed());
    const course::DeviceBuffer<int> d_rows(coo.rows), d_cols(coo.cols);
    const course::DeviceBuffer<float> d_vals(coo.vals), d_x(x);
    course::DeviceBuffer<int> row_ptr(coo.n_rows + 1), cols(coo.nnz());
    course::DeviceBuffer<float> vals(coo.nnz()), y(coo.n_rows);
    lesson13::coo_to_csr(coo.n_rows, coo.nnz(), d_rows.data(), d_cols.data(), d_vals.data(), row_ptr.data(),
                         cols.data(), vals.data());
    lesson13::csr_spmv(coo.n_rows, row_ptr.data(), cols.data(), vals.data(), d_x.data(), y.data());
    COURSE_LAUNCH_CHECK();
    const std::vector<float> got = y.download();
    for (int r = 0; r < coo.n_rows; ++r) {
        const double len = a.row_ptr[r + 1] - a.row_ptr[r];
        INFO("300 x 6 matrix with 3000 entries, each (row, column) about 1.7 times: row "
             << r << " of y = A x. Duplicates are kept by coo_to_csr and summed by csr_spmv");
        REQUIRE(std::fabs(got[r] - exact[r]) <= (len + 2) * FLT_EPSILON * magnitude[r]);
    }
}

TEST_CASE("pagerank converges to the CPU's power iteration, dangling nodes included", "[13]") {
    const int n = GENERATE(1, 2, 33, 257, 1009, course::kEmulator ? 5000 : 200000);
    const float damping = GENERATE(0.85f, 0.5f);
    const std::vector<std::pair<int, int>> links = random_links(n, std::to_string(n));
    const Csr a = lesson13::reference::coo_to_csr(lesson13::reference::link_matrix(n, links));
    const float tolerance = 1e-6f;
    const int max_iterations = 200;
    int cpu_iterations = 0;
    const std::vector<double> expected =
        lesson13::reference::pagerank(n, links, damping, 1e-13, 1000, cpu_iterations);
    int reference_iterations = 0;
    (void)lesson13::reference::pagerank(n, links, damping, tolerance, max_iterations, reference_iterations);
    CAPTURE(n, links.size(), damping, tolerance, course::seed());
    const std::string what = "pagerank of a random graph of " + std::to_string(n) + " nodes and " +
                             std::to_string(links.size()) + " links, damping " + std::to_string(damping) +
                             ", tolerance 1e-6 (COURSE_SEED=" + std::to_string(course::seed()) + ")";
    course::for_each_schedule([&] {
        int iterations = 0;
        const std::vector<float> got = run_pagerank(n, a, damping, tolerance, max_iterations, iterations);
        // Stopping at an L1 change below t leaves the ranks within about
        // damping / (1 - damping) t of the limit; float rounding adds less.
        COURSE_REQUIRE_MATCH(check_ranks(expected, got, 1e-4, what));
        INFO(what << ": pagerank returned " << iterations << " iterations; the CPU's iteration with the same "
                  << "stopping rule took " << reference_iterations
                  << " (up to 3 apart for float rounding). Stop after the first iteration whose L1 change "
                     "sum |next - rank| is below the tolerance.");
        CHECK(std::abs(iterations - reference_iterations) <= 3);
    });
}

TEST_CASE("pagerank runs exactly max_iterations when the tolerance is not reached, and handles edges", "[13]") {
    const int n = 1009;
    const std::vector<std::pair<int, int>> links = random_links(n, "fixed iterations");
    const Csr a = lesson13::reference::coo_to_csr(lesson13::reference::link_matrix(n, links));
    const int max_iterations = GENERATE(0, 1, 2, 5);
    CAPTURE(n, max_iterations, course::seed());
    int cpu_iterations = 0;
    const std::vector<double> expected = lesson13::reference::pagerank(n, links, 0.85, 0, max_iterations,
                                                                       cpu_iterations);
    int iterations = -1;
    const std::vector<float> got = run_pagerank(n, a, 0.85f, 1e-30f, max_iterations, iterations);
    const std::string what = "pagerank of 1009 nodes after exactly " + std::to_string(max_iterations) +
                             " iterations (0: the starting ranks, 1/n each)";
    COURSE_REQUIRE_MATCH(check_ranks(expected, got, 1e-5, what));
    INFO(what << ": must return " << max_iterations << ", the number of iterations run");
    CHECK(iterations == max_iterations);

    SECTION("a graph without links: every node is dangling, every rank 1/n") {
        const Csr none = lesson13::reference::coo_to_csr(lesson13::reference::link_matrix(257, {}));
        int its = 0;
        const std::vector<float> ranks = run_pagerank(257, none, 0.85f, 1e-6f, 100, its);
        COURSE_REQUIRE_MATCH(check_ranks(std::vector<double>(257, 1.0 / 257), ranks, 1e-5,
                                         "pagerank of 257 nodes without links (every node dangling)"));
    }
    SECTION("n = 0 returns 0") {
        int its = -1;
        run_pagerank(0, Csr{{0}, {}, {}}, 0.85f, 1e-6f, 100, its);
        INFO("pagerank of an empty graph must return 0 iterations and touch nothing");
        CHECK(its == 0);
    }
}

#ifndef __CUDACC_EMULATOR__
// GPU backend only: cuSPARSE runs on a real GPU, and the course links it
// (CUDA_LIBRARIES CUDA::cusparse) only there. The same conversion the
// student's kernels do, the way Episteme's blog (docs/sources.md) does it
// with today's API: sort the COO by row with cusparseXcoosortByRow and a
// permutation, gather the values through it with cusparseGather
// (cusparseSgthr, the blog's call, was removed in CUDA 12), compress the rows
// with cusparseXcoo2csr; then y = A x with cusparseSpMV. Matrices without duplicates: cuSPARSE's sort does not
// promise an order for equal (row, column) pairs.
TEST_CASE("coo_to_csr and csr_spmv agree with cuSPARSE", "[13][gpu]") {
    const int n_rows = GENERATE(1, 257, 100000);
    const int n_cols = 5000;
    // Distinct positions: draw, then drop repeats.
    Coo drawn = random_coo(n_rows, n_cols, 6 * n_rows, "cusparse " + std::to_string(n_rows));
    Coo coo{n_rows, n_cols, {}, {}, {}};
    std::set<std::pair<int, int>> seen;
    for (int k = 0; k < drawn.nnz(); ++k) {
        if (!seen.insert({drawn.rows[k], drawn.cols[k]}).second) continue;
        coo.rows.push_back(drawn.rows[k]);
        coo.cols.push_back(drawn.cols[k]);
        coo.vals.push_back(drawn.vals[k]);
    }
    const int nnz = coo.nnz();
    CAPTURE(n_rows, nnz, course::seed());

    // The student's CSR.
    const course::DeviceBuffer<int> d_rows(coo.rows), d_cols(coo.cols);
    const course::DeviceBuffer<float> d_vals(coo.vals);
    course::DeviceBuffer<int> row_ptr(n_rows + 1), csr_cols(nnz);
    course::DeviceBuffer<float> csr_vals(nnz);
    lesson13::coo_to_csr(n_rows, nnz, d_rows.data(), d_cols.data(), d_vals.data(), row_ptr.data(), csr_cols.data(),
                         csr_vals.data());
    COURSE_LAUNCH_CHECK();

    // cuSPARSE's CSR: the sort works in place, so on copies.
    course::DeviceBuffer<int> ref_rows(coo.rows), ref_cols(coo.cols), permutation(nnz), ref_row_ptr(n_rows + 1);
    course::DeviceBuffer<float> ref_vals(nnz);
    std::vector<int> identity(nnz);
    std::iota(identity.begin(), identity.end(), 0);  // cusparseCreateIdentityPermutation is deprecated
    permutation.upload(identity);
    lesson13::test::CusparseHandle handle;
    std::size_t sort_bytes = 0;
    COURSE_CUSPARSE_CHECK(cusparseXcoosort_bufferSizeExt(handle.get(), n_rows, n_cols, nnz, ref_rows.data(),
                                                         ref_cols.data(), &sort_bytes));
    course::DeviceBuffer<char> sort_buffer(sort_bytes);
    COURSE_CUSPARSE_CHECK(cusparseXcoosortByRow(handle.get(), n_rows, n_cols, nnz, ref_rows.data(), ref_cols.data(),
                                                permutation.data(), sort_buffer.data()));
    // ref_vals[i] = vals[permutation[i]]: a sparse vector (indices =
    // permutation, values = ref_vals) gathered from the dense COO values.
    cusparseSpVecDescr_t gathered;
    cusparseDnVecDescr_t source;
    COURSE_CUSPARSE_CHECK(cusparseCreateSpVec(&gathered, nnz, nnz, permutation.data(), ref_vals.data(),
                                              CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
    COURSE_CUSPARSE_CHECK(cusparseCreateDnVec(&source, nnz, const_cast<float*>(d_vals.data()), CUDA_R_32F));
    COURSE_CUSPARSE_CHECK(cusparseGather(handle.get(), source, gathered));
    COURSE_CUSPARSE_CHECK(cusparseDestroySpVec(gathered));
    COURSE_CUSPARSE_CHECK(cusparseDestroyDnVec(source));
    COURSE_CUSPARSE_CHECK(cusparseXcoo2csr(handle.get(), ref_rows.data(), nnz, n_rows, ref_row_ptr.data(),
                                           CUSPARSE_INDEX_BASE_ZERO));
    COURSE_CUDA_CHECK(cudaDeviceSynchronize());
    const std::string what = "coo_to_csr against cuSPARSE (coosortByRow + Gather + coo2csr), " +
                             std::to_string(n_rows) + " x " + std::to_string(n_cols) + ", nnz " + std::to_string(nnz);
    const Csr from_cusparse{ref_row_ptr.download(), ref_cols.download(), ref_vals.download()};
    COURSE_REQUIRE_MATCH(check_row_ptr(from_cusparse.row_ptr, row_ptr.download(), what));
    COURSE_REQUIRE_MATCH(check_entries(from_cusparse, csr_cols.download(), csr_vals.download(), what));

    // y = A x: the student's SpMV and cusparseSpMV on the same CSR.
    const std::vector<float> x = course::random_values<float>(n_cols, -1.0f, 1.0f, "cusparse x");
    const course::DeviceBuffer<float> d_x(x);
    course::DeviceBuffer<float> y(n_rows), ref_y(n_rows);
    lesson13::csr_spmv(n_rows, row_ptr.data(), csr_cols.data(), csr_vals.data(), d_x.data(), y.data());
    COURSE_LAUNCH_CHECK();
    const std::vector<float> got = y.download();
    const std::vector<float> from_library =
        lesson13::test::cusparse_spmv(handle.get(), n_rows, n_cols, nnz, ref_row_ptr.data(), ref_cols.data(),
                                      ref_vals.data(), d_x.data(), ref_y.data());
    std::vector<double> exact, magnitude;
    lesson13::reference::spmv(from_cusparse, x, exact, magnitude);
    for (int r = 0; r < n_rows; ++r) {
        const double len = from_cusparse.row_ptr[r + 1] - from_cusparse.row_ptr[r];
        INFO("row " << r << " of y = A x: csr_spmv gave " << got[r] << ", cusparseSpMV " << from_library[r]
                    << "; both must be within the rounding of a float sum of the row's " << len << " terms");
        REQUIRE(std::fabs(got[r] - from_library[r]) <= 2 * (len + 2) * FLT_EPSILON * magnitude[r]);
    }
}
#else
COURSE_GPU_ONLY_TEST_CASE("coo_to_csr and csr_spmv agree with cuSPARSE", "[13][gpu]",
                          "cuSPARSE runs on an NVIDIA GPU only; the CPU tests above check the same results")
#endif
