// Lesson 07 tests: the transpose of row-major float matrices of every shape
// (1 x 1, a single row, a single column, around one tile, odd rectangles,
// a large one), naive and tiled, compared exactly with a CPU transpose under
// every emulator schedule (or repeatedly on a GPU). The output is poisoned,
// with a poisoned tail after it, so an element never written and a write
// past the end are both reported with their (row, column).
#include <transpose.hpp>

#include "cpu_reference.hpp"

#include <course/backend.hpp>
#include <course/catch.hpp>
#include <course/compare.hpp>
#include <course/device_buffer.hpp>
#include <course/inputs.hpp>
#include <course/schedules.hpp>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

namespace {

enum class Function { naive, tiled };

const char* function_name(Function f) { return f == Function::naive ? "transpose_naive" : "transpose_tiled"; }

struct Shape {
    int rows = 0;
    int cols = 0;
};

std::string describe_shape(Shape s) { return std::to_string(s.rows) + " x " + std::to_string(s.cols); }

// The shapes every function is tested on: none of the odd ones a multiple
// of 32 either way. On the emulator, where every thread is a fiber on the
// CPU, the large matrix is smaller than on a GPU.
std::vector<Shape> test_shapes() {
    const int n = 100003;  // a prime: the long row and the long column
    const Shape large = course::kEmulator ? Shape{1031, 2053} : Shape{4099, 2053};
    return {{1, 1}, {1, n}, {n, 1}, {31, 33}, {32, 32}, {33, 65}, {1000, 3}, large};
}

void run(Function f, const float* in, float* out, Shape s) {
    if (f == Function::naive) {
        lesson07::transpose_naive(in, out, s.rows, s.cols);
    } else {
        lesson07::transpose_tiled(in, out, s.rows, s.cols);
    }
}

// Floats after the output that must stay untouched. A kernel without a
// bounds check on its write stores up to 31 rows and 31 columns of a tile
// past the matrix; placed after a cols x rows output, those land within
// 32 * rows + 32 floats of its end, so the tail catches every one of them.
std::size_t tail_size(Shape s) { return 32 * static_cast<std::size_t>(s.rows) + 32; }

struct Result {
    std::vector<float> out;   // rows * cols floats: the transpose
    std::vector<float> tail;  // what follows it in the same allocation
};

// Runs `f` on `values` (exactly rows * cols floats on the device, so that an
// out-of-bounds read of the input faults on the emulator) into an output
// filled with NaN, tail included.
Result run_transpose(Function f, Shape s, const std::vector<float>& values) {
    const std::size_t count = values.size();
    course::DeviceBuffer<float> in(values);
    course::DeviceBuffer<float> out(count + tail_size(s));
    out.poison();
    run(f, in.data(), out.data(), s);
    COURSE_LAUNCH_CHECK();
    std::vector<float> all = out.download();
    const auto split = all.begin() + static_cast<std::ptrdiff_t>(count);
    return {std::vector<float>(all.begin(), split), std::vector<float>(split, all.end())};
}

std::string header(Function f, Shape s) {
    std::ostringstream out;
    out << function_name(f) << " of a " << describe_shape(s) << " matrix (in: " << describe_shape(s)
        << ", out: " << s.cols << " x " << s.rows << ", " << (s.cols + 31) / 32 << " x " << (s.rows + 31) / 32
        << " tiles of 32 x 32; COURSE_SEED=" << course::seed() << ")";
    return out.str();
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

// The likely cause of a wrong output that is not simply unwritten.
std::string likely_cause(const std::vector<float>& in, Shape s, const std::vector<float>& got) {
    const std::size_t rows = static_cast<std::size_t>(s.rows), cols = static_cast<std::size_t>(s.cols);
    if (same_bits(got, in)) {
        return "the output is the input, copied, not transposed: element (row c, column r) of out is at "
               "out[c * rows + r]. Are row and column swapped in the index of the write?";
    }
    const std::vector<float> untransposed =
        lesson07::reference::tiles_moved_not_transposed(in, rows, cols, course::poison_value<float>());
    std::size_t tile_pattern = 0;
    for (std::size_t i = 0; i < got.size(); ++i) tile_pattern += std::memcmp(&got[i], &untransposed[i], 4) == 0;
    if (rows > 1 && cols > 1 && tile_pattern == got.size()) {
        return "every 32 x 32 tile is in its transposed place, but not transposed inside: the tile is read in "
               "the order it was written (tile[threadIdx.y][threadIdx.x]); the write must read tile[threadIdx.x]"
               "[threadIdx.y].";
    }
    // Wrong values that occur nowhere in `in` come from tile slots no thread had loaded.
    std::vector<float> sorted_in = in;
    std::sort(sorted_in.begin(), sorted_in.end());
    bool garbage = false;
    for (const float v : got) garbage = garbage || !std::binary_search(sorted_in.begin(), sorted_in.end(), v);
    if (garbage) {
        return "some values are nowhere in the input: they were read from tile slots that no thread had "
               "loaded. If this fails under some emulator schedules and not others (the schedule is named below), "
               "a __syncthreads() is missing between filling the tile and reading it. Otherwise the write reads "
               "the tile with other indices than the load filled: the load fills tile[threadIdx.y][threadIdx.x], "
               "the write reads tile[threadIdx.x][threadIdx.y].";
    }
    return "if this fails under some emulator schedules and not others (the schedule is named below), threads "
           "read the tile before the threads that load it have stored their elements: a __syncthreads() is "
           "missing between filling the tile and reading it. Otherwise look at the indices: in(r, c) is "
           "in[r * cols + c] and goes to out[c * rows + r]; the block's tile starts at row 32 * blockIdx.y, "
           "column 32 * blockIdx.x of in, and at row 32 * blockIdx.x, column 32 * blockIdx.y of out.";
}

course::Comparison check(Function f, Shape s, const std::vector<float>& in, const Result& result) {
    const std::size_t count = in.size();
    const std::vector<float> tail_before(result.tail.size(), course::poison_value<float>());
    course::Comparison guard = course::compare_guard(
        tail_before, result.tail, count, "out",
        "a write without a bounds check: the tiles on the bottom and right edges stick out of the matrix, and "
        "their threads must neither read in(r, c) unless r < rows and c < cols, nor write out(c, r) unless "
        "c < cols and r < rows.");
    if (!guard.ok) {
        const std::size_t first = count + static_cast<std::size_t>(
                                              std::mismatch(tail_before.begin(), tail_before.end(), result.tail.begin(),
                                                            [](float a, float b) { return !std::memcmp(&a, &b, 4); })
                                                  .first -
                                              tail_before.begin());
        guard.message = header(f, s) + ":\n" + guard.message + "\n  (out[" + std::to_string(first) +
                        "] would be row " + std::to_string(first / static_cast<std::size_t>(s.rows)) +
                        ", column " + std::to_string(first % static_cast<std::size_t>(s.rows)) +
                        " of out, past its last row " + std::to_string(s.cols - 1) + ")";
        return guard;
    }
    const std::vector<float> expected =
        lesson07::reference::transpose(in, static_cast<std::size_t>(s.rows), static_cast<std::size_t>(s.cols));
    const std::vector<float> poisoned(count, course::poison_value<float>());
    course::CompareContext<float> ctx;
    ctx.name = "out";
    ctx.columns = static_cast<std::size_t>(s.rows);  // out is cols x rows
    ctx.before = &poisoned;
    ctx.hint_if_untouched =
        "Out's row c, column r is in's row r, column c. Does the grid cover every tile: ceil(cols / 32) blocks in "
        "x and ceil(rows / 32) in y? With 32 x 8 threads, does each thread move four rows of its tile?";
    course::Comparison result_cmp = course::compare_exact(expected, result.out, ctx);
    if (!result_cmp.ok) {
        std::string message = header(f, s) + ":\n" + result_cmp.message;
        std::size_t untouched = 0;
        for (const float v : result.out) untouched += std::memcmp(&v, &poisoned[0], 4) == 0;
        if (untouched == 0) message += "\n  likely cause: " + likely_cause(in, s, result.out);
        result_cmp.message = message;
    }
    return result_cmp;
}

void require_transpose(Function f, Shape s) {
    CAPTURE(function_name(f), describe_shape(s), course::seed());
    const std::size_t count = static_cast<std::size_t>(s.rows) * static_cast<std::size_t>(s.cols);
    const std::vector<float> in = course::random_values<float>(count, -1000.0f, 1000.0f, "in " + describe_shape(s));
    course::for_each_schedule([&] { COURSE_REQUIRE_MATCH(check(f, s, in, run_transpose(f, s, in))); });
}

// An empty matrix: nothing launched, no error, nothing written. Part of the
// every-shape test case, not one of its own: a starter that does nothing
// would pass it, and an untouched starter earns no points.
void require_empty_launches_nothing(Function f, Shape s) {
    CAPTURE(function_name(f), describe_shape(s));
    course::DeviceBuffer<float> out(tail_size(s));
    out.poison();
    INFO("a matrix with no element must launch nothing: a grid of 0 blocks is a launch error "
         "(cudaErrorInvalidConfiguration). The input pointer is null here.");
    run(f, nullptr, out.data(), s);
    COURSE_LAUNCH_CHECK();
    const std::vector<float> before(out.size(), course::poison_value<float>());
    COURSE_REQUIRE_MATCH(course::compare_guard(before, out.download(), 0, "out",
                                               "the kernel ran and wrote although the matrix is empty"));
}

}  // namespace

TEST_CASE("transpose_tiled, and the given transpose_naive, give the CPU's transpose exactly for every shape, and "
          "launch nothing for an empty one", "[07]") {
    const Function f = GENERATE(Function::tiled, Function::naive);
    const Shape s = GENERATE_COPY(from_range(test_shapes()));
    require_transpose(f, s);
    if (s.rows == test_shapes().front().rows && s.cols == test_shapes().front().cols) {
        for (const Shape empty : {Shape{0, 0}, Shape{0, 7}, Shape{5, 0}}) require_empty_launches_nothing(f, empty);
    }
}

TEST_CASE("transpose_tiled handles a tall and a wide matrix spanning many tiles both ways", "[07]") {
    // Far from square, so that a grid with x and y swapped, or a tile index
    // with rows and columns swapped, leaves tiles out or moves them wrongly.
    const Shape s = GENERATE(Shape{200, 45}, Shape{45, 200});
    require_transpose(Function::tiled, s);
}

