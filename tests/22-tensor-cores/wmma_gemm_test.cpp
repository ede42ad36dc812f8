// Lesson 22 tests: C = A·B on tensor cores for half and bfloat16 inputs with
// float accumulation, by one warp per tile from global memory
// (gemm_wmma_simple) and by shared-memory block tiles with register blocking
// (gemm_wmma, its tiles copied through a cp.async pipeline), against a CPU
// product in double of the same 16-bit values:
// multiples of 16, shapes with edges, a K far longer than a tile, values
// beyond half's range for bfloat16, empty shapes, under every emulator
// schedule (or repeatedly on a GPU).
#include <wmma_gemm.hpp>

#include "cpu_reference.hpp"

#include <course/backend.hpp>
#include <course/catch.hpp>
#include <course/compare.hpp>
#include <course/device_buffer.hpp>
#include <course/inputs.hpp>
#include <course/schedules.hpp>

#include <cmath>
#include <cstddef>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

namespace reference = lesson22_reference;
using reference::Format;

enum class Implementation { simple, tiled };

const char* function_name(Implementation which) {
    return which == Implementation::simple ? "gemm_wmma_simple" : "gemm_wmma";
}

const char* format_name(Format f) { return f == Format::half ? "half" : "bfloat16"; }

struct Shape {
    int M, N, K;  // A is M x K, B is K x N, C is M x N
};

std::string describe(Shape s) {
    std::ostringstream out;
    out << s.M << "x" << s.N << "x" << s.K << " (A " << s.M << " x " << s.K << ", B " << s.K << " x " << s.N << ", C "
        << s.M << " x " << s.N << ")";
    return out.str();
}

constexpr std::size_t kGuard = 64;  // floats after C's M * N that must stay untouched
constexpr int kReferenceTileK = 64;  // the reference's step along K (for the messages)

struct Inputs {
    std::vector<float> A, B;  // values the format holds exactly
};

Inputs make_inputs(Shape s, Format f, int wide_exponent) {
    const std::string tag = describe(s) + " " + format_name(f) + " " + std::to_string(wide_exponent);
    return {reference::exact_values(static_cast<std::size_t>(s.M) * s.K, f, wide_exponent, "A " + tag),
            reference::exact_values(static_cast<std::size_t>(s.K) * s.N, f, wide_exponent, "B " + tag)};
}

// The 16-bit copies; the values are exact in the format, so the rounding
// mode of the conversion does not matter.
std::vector<__half> to_half(const std::vector<float>& v) {
    std::vector<__half> out;
    out.reserve(v.size());
    for (const float x : v) out.push_back(__float2half_rn(x));
    return out;
}

std::vector<__nv_bfloat16> to_bfloat16(const std::vector<float>& v) {
    std::vector<__nv_bfloat16> out;
    out.reserve(v.size());
    for (const float x : v) out.push_back(__float2bfloat16_rn(x));
    return out;
}

std::vector<float> guard_values() {
    std::vector<float> guard(kGuard);
    for (std::size_t i = 0; i < kGuard; ++i) guard[i] = 1000.0f + static_cast<float>(i);
    return guard;
}

// The device side of one test: the 16-bit inputs, uploaded once, and C
// followed by its guard.
template <class T>
struct Device {
    course::DeviceBuffer<T> A, B;
    course::DeviceBuffer<float> C;
};

template <class T>
void call(Implementation which, const T* A, const T* B, float* C, Shape s) {
    if (which == Implementation::simple) {
        lesson22::gemm_wmma_simple(A, B, C, s.M, s.N, s.K);
    } else {
        lesson22::gemm_wmma(A, B, C, s.M, s.N, s.K);
    }
}

struct Output {
    std::vector<float> c, guard;
};

template <class T>
Output run(Implementation which, Shape s, Device<T>& d) {
    const std::size_t c_size = static_cast<std::size_t>(s.M) * s.N;
    std::vector<float> c_with_guard(c_size, course::poison_value<float>());
    const std::vector<float> guard = guard_values();
    c_with_guard.insert(c_with_guard.end(), guard.begin(), guard.end());
    d.C.upload(c_with_guard);
    call(which, d.A.data(), d.B.data(), d.C.data(), s);
    COURSE_LAUNCH_CHECK();
    const std::vector<float> all = d.C.download();
    return {std::vector<float>(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(c_size)),
            std::vector<float>(all.begin() + static_cast<std::ptrdiff_t>(c_size), all.end())};
}

bool within(const reference::Product& e, int K, std::size_t index, float got) {
    return std::fabs(static_cast<double>(got) - e.c[index]) <= reference::tolerance(K, e.magnitude[index]);
}

// What most likely makes element (i, j) wrong: the patterns a mistake of
// the lesson's Pitfalls leaves.
std::string likely_cause(Implementation which, Format f, Shape s, const Inputs& in, const reference::Product& e,
                         std::size_t i, std::size_t j, float got) {
    const std::size_t N = static_cast<std::size_t>(s.N);
    const double exact = e.c[i * N + j];
    const double allowed = reference::tolerance(s.K, e.magnitude[i * N + j]);
    std::ostringstream out;
    out << "  likely cause: ";
    if (got == 0.0f && exact != 0.0) {
        out << "C[" << i << "][" << j << "] is 0, as if no product was added: does the K loop run "
            << "(K + TILE - 1) / TILE times, and is each accumulator passed to mma_sync as both C and D "
               "(mma_sync(acc, a, b, acc))? Or the fragments were loaded from the zeros of the tiles' edges: "
               "ldm must be the row length of the memory they are loaded from (the padded tile's, not 16).\n";
        return out.str();
    }
    // The K loop stopped a tile (of 16 or of the block's 32) early.
    for (const int tile : {16, kReferenceTileK}) {
        if (s.K <= tile) continue;
        const int kept = (s.K - 1) / tile * tile;
        const double partial = reference::partial_element(in.A, in.B, s.N, s.K, i, j, kept);
        if (std::fabs(got - partial) <= allowed && std::fabs(partial - exact) > allowed) {
            out << "C[" << i << "][" << j << "] is the sum over the first " << kept << " of the K = " << s.K
                << " terms: the K loop stops one tile of " << tile
                << " early. It must run over every tile, the last partial one too: (K + TILE - 1) / TILE steps.\n";
            return out.str();
        }
    }
    // Only the first 16 of each step's columns of A (rows of B) were multiplied.
    if (s.K > 16) {
        double first_halves = 0.0;
        for (std::size_t k = 0; k < static_cast<std::size_t>(s.K); ++k) {
            if (k % kReferenceTileK < 16) {
                first_halves += static_cast<double>(in.A[i * static_cast<std::size_t>(s.K) + k]) * in.B[k * N + j];
            }
        }
        if (std::fabs(got - first_halves) <= allowed && std::fabs(first_halves - exact) > allowed) {
            out << "C[" << i << "][" << j << "] is the sum over the first 16 of every " << kReferenceTileK
                << " columns of A (rows of B): "
                << "the loop over a tile's 16-column steps runs once. It must cover the whole tile: kk = 0, 16, ... "
                   "< kBlockK.\n";
            return out.str();
        }
    }
    // The 16 x 16 block of C holding (i, j) came out transposed.
    const std::size_t i0 = i / 16 * 16, j0 = j / 16 * 16;
    const std::size_t ti = i0 + (j - j0), tj = j0 + (i - i0);
    if (ti < static_cast<std::size_t>(s.M) && tj < N && (ti != i || tj != j) &&
        std::fabs(got - e.c[ti * N + tj]) <= reference::tolerance(s.K, e.magnitude[ti * N + tj])) {
        out << "C[" << i << "][" << j << "] holds C[" << ti << "][" << tj
            << "]: each 16 x 16 tile of C is transposed. The accumulator is stored with mem_col_major "
               "where C (and the edge buffer) is row-major: store_matrix_sync(..., wmma::mem_row_major).\n";
        return out.str();
    }
    if (std::isinf(got) || std::fabs(got - exact) > 64.0 * e.magnitude[i * N + j] + 1e-30) {
        out << "C[" << i << "][" << j << "] = " << got << " is far larger than any sum of these products could "
            << "be (sum_k |a_ik b_kj| = " << e.magnitude[i * N + j] << "): garbage entered a sum. The parts of "
            << "a shared stage outside A or B (past K, M or N) must be stored as 0, a chunk outside copied with "
               "__pipeline_memcpy_async(dst, src, 16, 16) (zfill) or a value at a time with zero_value<T>() (the "
               "emulator's shared memory starts as 0xCD bytes, a GPU's holds an earlier step's values). Or the "
               "stage was read before its copies landed: __pipeline_wait_prior(kStages - 2), then "
               "__syncthreads().";
        if (which == Implementation::simple) out << " Or B's ldm is not N (a row of B is N values long).";
        out << "\n";
        return out.str();
    }
    out << "if this fails under some emulator schedules and not others (the schedule is named below), the warps "
           "race on the shared stages: each step needs __pipeline_wait_prior(kStages - 2) and then a "
           "__syncthreads() before any warp loads fragments from the stage. If it fails under every schedule: "
           "a stage is read before the copies into it have landed (waiting for too few batches: on the "
           "emulator a copy lands only when its thread waits for it), or refilled while it is read (the stage "
           "refilled at step t is the one step t - 1 read, for step t + kStages - 1), or the fragments' layouts "
           "do not match memory (A and B are row-major: wmma::row_major), or ldm is not the distance between "
           "rows in memory (the padded tile's row length in shared memory, K for A and N for B in global "
           "memory: 16 only for a 16-wide array), or a warp's fragments do not index its own rows (warp / 4) "
           "and columns (warp % 4), or an accumulator does not start at 0 (wmma::fill_fragment(acc, 0.0f)) "
           "before the K loop.";
    if (f == Format::bfloat16) {
        out << " If half inputs pass and bfloat16 fails: the bfloat16 overload must run the bfloat16 kernel (the "
               "bits of a bfloat16 read as a half are another number).";
    }
    out << "\n";
    return out.str();
}

course::Comparison check(Implementation which, Format f, Shape s, const Inputs& in, const reference::Product& e,
                         const Output& got) {
    std::vector<float> expected(e.c.begin(), e.c.end());
    const std::vector<float> poisoned(expected.size(), course::poison_value<float>());
    course::CompareContext<float> ctx;
    ctx.name = "C";
    ctx.columns = static_cast<std::size_t>(s.N);
    ctx.before = &poisoned;
    ctx.hint_if_untouched =
        which == Implementation::simple
            ? "Every 16 x 16 tile of C needs a warp that stores it (M / 16 x N / 16 warps), also when K = 0."
            : "Every element of C must be stored: a grid of ceil(N / 256) x ceil(M / 128) blocks, warps whose "
              "indices (warp_row = warp / 4, warp_col = warp % 4) cover the block's 2 x 4 warp tiles once each, "
              "and fragments on C's edges copied element by element (through shared memory) inside C. Also "
              "when K = 0: C is then all zeros.";
    course::Comparison result = course::compare(
        expected, got.c, [&](std::size_t index, float, float g) { return within(e, s.K, index, g); }, ctx);
    if (!result.ok) {
        std::size_t first = 0;
        while (within(e, s.K, first, got.c[first])) ++first;
        const std::size_t i = first / static_cast<std::size_t>(s.N), j = first % static_cast<std::size_t>(s.N);
        std::ostringstream out;
        out.precision(9);
        out << function_name(which) << " on " << format_name(f) << " inputs, shape M x N x K = " << describe(s)
            << ", COURSE_SEED=" << course::seed() << ":\n  " << result.message << "\n  that is C[" << i << "][" << j
            << "]; allowed error there: " << reference::tolerance(s.K, e.magnitude[first])
            << " = K * 2^-23 * sum_k |a_ik b_kj|\n";
        // A NaN is the test's poison, never written: the comparison above already says so.
        if (!std::isnan(got.c[first])) out << likely_cause(which, f, s, in, e, i, j, got.c[first]);
        result.message = out.str();
        return result;
    }
    return course::compare_guard(guard_values(), got.guard, static_cast<std::size_t>(s.M) * s.N, "C",
                                 "an edge fragment is stored whole past the end of C: copy only the elements "
                                 "with row < M and column < N");
}

// Checks one implementation on one shape and format under every schedule.
void require_product(Implementation which, Format f, Shape s, int wide_exponent = 0) {
    CAPTURE(function_name(which), format_name(f), describe(s), course::seed());
    const Inputs in = make_inputs(s, f, wide_exponent);
    const reference::Product expected = reference::matmul(in.A, in.B, s.M, s.N, s.K);
    const std::size_t c_size = static_cast<std::size_t>(s.M) * s.N + kGuard;
    const auto body = [&](auto& d) {
        course::for_each_schedule([&] { COURSE_REQUIRE_MATCH(check(which, f, s, in, expected, run(which, s, d))); });
    };
    if (f == Format::half) {
        Device<__half> d{course::DeviceBuffer<__half>(to_half(in.A)), course::DeviceBuffer<__half>(to_half(in.B)),
                         course::DeviceBuffer<float>(c_size)};
        body(d);
    } else {
        Device<__nv_bfloat16> d{course::DeviceBuffer<__nv_bfloat16>(to_bfloat16(in.A)),
                                course::DeviceBuffer<__nv_bfloat16>(to_bfloat16(in.B)),
                                course::DeviceBuffer<float>(c_size)};
        body(d);
    }
}

// Bad arguments, checked inside a test case that needs real work: an
// untouched starter, whose launchers check them already, earns nothing.
void require_bad_arguments_refused() {
    INFO("a negative M, N or K throws std::invalid_argument; gemm_wmma_simple also refuses shapes that are "
         "not multiples of 16");
    course::DeviceBuffer<__half> h(16 * 16);
    course::DeviceBuffer<float> c(16 * 16);
    CHECK_THROWS_AS(lesson22::gemm_wmma(h.data(), h.data(), c.data(), -1, 16, 16), std::invalid_argument);
    CHECK_THROWS_AS(lesson22::gemm_wmma(h.data(), h.data(), c.data(), 16, 16, -16), std::invalid_argument);
    CHECK_THROWS_AS(lesson22::gemm_wmma_simple(h.data(), h.data(), c.data(), 16, 8, 16), std::invalid_argument);
    CHECK_THROWS_AS(lesson22::gemm_wmma_simple(h.data(), h.data(), c.data(), 16, 16, 17), std::invalid_argument);
}

const Format kFormats[] = {Format::half, Format::bfloat16};

}  // namespace

TEST_CASE("gemm_wmma_simple gives the CPU's product on multiples of 16, half and bfloat16, and refuses other "
          "shapes", "[22]") {
    const Shape shape = GENERATE(Shape{16, 16, 16}, Shape{32, 48, 64}, Shape{64, 32, 16}, Shape{48, 80, 128});
    const Format f = GENERATE(from_range(std::begin(kFormats), std::end(kFormats)));
    require_product(Implementation::simple, f, shape);
    if (shape.M == 16 && shape.N == 16 && shape.K == 16) require_bad_arguments_refused();
}

TEST_CASE("gemm_wmma gives the CPU's product on multiples of 16 and on whole block tiles", "[22]") {
    // Shapes smaller than one 128 x 256 block tile; 128 x 128 x 64 and
    // 256 x 128 x 32, whose fragments are all stored straight to C but whose
    // block tiles reach past N (and K); and 256 x 256 x 320: whole block
    // tiles, 5 K steps of 64 through 3 stages, which gemm_wmma runs with
    // its kernel for whole tiles (no bounds checks).
    const Shape shape = GENERATE(Shape{16, 16, 16}, Shape{32, 48, 64}, Shape{128, 128, 64}, Shape{256, 128, 32},
                                 Shape{256, 256, 320});
    const Format f = GENERATE(from_range(std::begin(kFormats), std::end(kFormats)));
    require_product(Implementation::tiled, f, shape);
}

TEST_CASE("gemm_wmma zero-fills the edges of shapes that are no multiple of 16", "[22]") {
    // 1x1x1: one value; 17x33x15: every dimension just past or short of 16;
    // 100x70x50: a partial K tile after a whole one; 40x24x72: rows of 8
    // values (16-byte loads) but no multiple of 16; 130x136x40: a second row
    // and column of block tiles holding only a few values.
    const Shape shape = GENERATE(Shape{1, 1, 1}, Shape{17, 33, 15}, Shape{100, 70, 50}, Shape{40, 24, 72},
                                 Shape{130, 136, 40});
    const Format f = GENERATE(from_range(std::begin(kFormats), std::end(kFormats)));
    require_product(Implementation::tiled, f, shape);
}

TEST_CASE("gemm_wmma accumulates over a K far longer than a tile", "[22]") {
    // More K steps than the pipeline has stages, each stage refilled
    // several times: with 16-byte copies (K = 512, 8 steps of 64 through 3
    // stages, and 488: a partial last step, its chunks past K zero-filled,
    // where a stage refilled several times holds an earlier step's values;
    // M, N and K all multiples of 8, so that the 16-byte path is the one
    // taken), and with values copied one at a time (K = 199, no multiple of
    // 8: 4 steps, the slow path kept short).
    const Shape shape = GENERATE(Shape{16, 16, 512}, Shape{24, 40, 488}, Shape{33, 17, 199});
    const Format f = GENERATE(from_range(std::begin(kFormats), std::end(kFormats)));
    require_product(Implementation::tiled, f, shape);
}

TEST_CASE("bfloat16 inputs far outside half's range give the CPU's product", "[22]") {
    // Values from 2^-47 to 2^41: half would overflow or flush most of them.
    const Implementation which = GENERATE(Implementation::simple, Implementation::tiled);
    require_product(which, Format::bfloat16, which == Implementation::simple ? Shape{32, 48, 64} : Shape{100, 70, 50},
                    40);
}

TEST_CASE("K = 0 gives a C of zeros, and M = 0 or N = 0 launches nothing", "[22]") {
    const Shape shape = GENERATE(Shape{16, 32, 0}, Shape{0, 16, 16}, Shape{16, 0, 16}, Shape{0, 0, 0});
    const Implementation which = GENERATE(Implementation::simple, Implementation::tiled);
    require_product(which, Format::half, shape);
    if (which == Implementation::tiled) require_product(which, Format::bfloat16, Shape{5, 7, 0});
}
