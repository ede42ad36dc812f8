// Lesson 23 tests: single-head attention O = softmax(Q·Kᵀ/√d)·V and its
// row log-sum-exp L, by one thread per query row (attention_simple) and by
// FlashAttention's tiles on tensor cores (flash_attention), against a CPU
// attention in double of the same half values: d = 64 and 128, causal and
// not, whole tiles, partial tiles (masked keys, guarded query rows), scores
// reaching +-60, bad arguments and N = 0.
//
// The shapes are small on purpose (N <= 257): the emulator runs every wmma
// call of every lane, and each flash_attention check runs under all five
// emulator schedules, so the lesson's test cases stay within a few seconds
// each on two cores. The tiles of 64 keys are what matter, and N = 1, 15,
// 16, 64, 100, 129 and 257 cover one, part of one, and several of them
// with a partial last one.
#include <flash_attention.hpp>

#include "cpu_reference.hpp"
#include "flash_attention_shapes.hpp"

#include <course/catch.hpp>
#include <course/compare.hpp>
#include <course/device_buffer.hpp>
#include <course/inputs.hpp>
#include <course/schedules.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

namespace reference = lesson23_reference;

enum class Implementation { simple, flash };

const char* function_name(Implementation which) {
    return which == Implementation::simple ? "attention_simple" : "flash_attention";
}

// flash_attention's launcher picks its block shape and split from N, d and
// the SM count; the shape test cases set one here, for call() to use (0:
// the launcher's).
lesson23::shapes::Shape forced_shape{0, 0, 0};

// Sets forced_shape for the rest of the scope.
struct ForcedShape {
    explicit ForcedShape(lesson23::shapes::Shape shape) { forced_shape = shape; }
    ~ForcedShape() { forced_shape = {0, 0, 0}; }
    ForcedShape(const ForcedShape&) = delete;
    ForcedShape& operator=(const ForcedShape&) = delete;
};

// The block shapes whose keys the split test case splits: 64 rows, and 32
// (whose causal diagonal tile starts before or inside the block's rows) with
// 4 key groups.
constexpr lesson23::shapes::Shape kSplitBlocks[] = {{64, 2, 1}, {32, 4, 1}};

struct Problem {
    int N, d;
    bool causal;
};

// The problems of the split test case (see there).
constexpr Problem kSplitProblems[] = {{100, 64, true}, {257, 64, false}, {257, 64, true}, {257, 128, true}};

std::string describe(Problem p) {
    std::ostringstream out;
    out << "N = " << p.N << ", d = " << p.d << (p.causal ? ", causal" : ", not causal");
    return out.str();
}

constexpr std::size_t kGuard = 32;  // elements after O's N * d and L's N that must stay untouched

// The range of the inputs: [-1, 1] in steps of 2^-10 (scores of a few
// units), or [-6, 6] in steps of 2^-6 (scores reaching +-60 at d = 64).
enum class Range { unit, wide };

struct Inputs {
    std::vector<float> Q, K, V;
};

Inputs make_inputs(Problem p, Range r) {
    const std::size_t count = static_cast<std::size_t>(p.N) * static_cast<std::size_t>(p.d);
    const double range = r == Range::unit ? 1.0 : 6.0;
    const int bits = r == Range::unit ? 10 : 6;
    const std::string tag = describe(p) + (r == Range::unit ? " unit" : " wide");
    return {reference::half_exact_values(count, range, bits, "Q " + tag),
            reference::half_exact_values(count, range, bits, "K " + tag),
            // V stays in [-1, 1]: what grows is the scores.
            reference::half_exact_values(count, 1.0, 10, "V " + tag)};
}

__half half_from_bits(std::uint16_t bits) {
    __half_raw raw;
    raw.x = bits;
    return __half(raw);
}

// The values are exact in half: the rounding of the conversion does not matter.
std::vector<__half> to_half(const std::vector<float>& v) {
    std::vector<__half> out;
    out.reserve(v.size());
    for (const float x : v) out.push_back(__float2half_rn(x));
    return out;
}

std::uint16_t bits_of(__half h) { return static_cast<__half_raw>(h).x; }

// The guard after O, as the bits of halves (100, 101, ...): compared bit for bit.
std::vector<std::uint16_t> o_guard() {
    std::vector<std::uint16_t> g;
    for (std::size_t i = 0; i < kGuard; ++i) g.push_back(bits_of(__float2half_rn(100.0f + static_cast<float>(i))));
    return g;
}

std::vector<float> l_guard() {
    std::vector<float> g;
    for (std::size_t i = 0; i < kGuard; ++i) g.push_back(1000.0f + static_cast<float>(i));
    return g;
}

struct Device {
    course::DeviceBuffer<__half> Q, K, V, O;
    course::DeviceBuffer<float> L;
};

void call(Implementation which, Device& dev, Problem p) {
    if (which == Implementation::simple) {
        lesson23::attention_simple(dev.Q.data(), dev.K.data(), dev.V.data(), dev.O.data(), dev.L.data(), p.N, p.d,
                                   p.causal);
    } else if (forced_shape.rows_per_block != 0) {
        lesson23::shapes::flash_attention_shape(forced_shape, dev.Q.data(), dev.K.data(), dev.V.data(), dev.O.data(),
                                                dev.L.data(), p.N, p.d, p.causal);
    } else {
        lesson23::flash_attention(dev.Q.data(), dev.K.data(), dev.V.data(), dev.O.data(), dev.L.data(), p.N, p.d,
                                  p.causal);
    }
}

struct Output {
    std::vector<float> o, l;  // O as floats, L
    std::vector<std::uint16_t> o_guard;  // bits
    std::vector<float> l_guard;
};

// O and L filled with NaN and followed by their guards, the call, the results.
Output run(Implementation which, Device& dev, Problem p) {
    const std::size_t size = static_cast<std::size_t>(p.N) * static_cast<std::size_t>(p.d);
    std::vector<__half> o(size, half_from_bits(0x7e00u));  // a half NaN
    for (const std::uint16_t bits : o_guard()) o.push_back(half_from_bits(bits));
    std::vector<float> l(static_cast<std::size_t>(p.N), course::poison_value<float>());
    const std::vector<float> lg = l_guard();
    l.insert(l.end(), lg.begin(), lg.end());
    dev.O.upload(o);
    dev.L.upload(l);
    call(which, dev, p);
    COURSE_LAUNCH_CHECK();
    const std::vector<__half> o_all = dev.O.download();
    const std::vector<float> l_all = dev.L.download();
    Output out;
    for (std::size_t i = 0; i < size; ++i) out.o.push_back(__half2float(o_all[i]));
    for (std::size_t i = size; i < o_all.size(); ++i) out.o_guard.push_back(bits_of(o_all[i]));
    out.l.assign(l_all.begin(), l_all.begin() + p.N);
    out.l_guard.assign(l_all.begin() + p.N, l_all.end());
    return out;
}

std::string likely_cause(Implementation which, Problem p, const reference::Attention& e, std::size_t row) {
    std::ostringstream out;
    out << "  likely cause: ";
    if (which == Implementation::simple) {
        out << "each thread owns one query row: the scores scaled by 1/sqrt(d), the running maximum m, the sum l "
               "and the d sums of p * v all rescaled by exp(m_old - m_new) whenever m grows, the keys j <= i only "
               "when causal, O = sum / l and L = m + ln l at the end.\n";
        return out.str();
    }
    if (p.N > 64 && row < static_cast<std::size_t>(p.N)) {
        out << "rows past the first tile of 64 keys depend on the online softmax across tiles: alpha = "
               "exp(m_old - m_new) must rescale both l and every element of the O accumulator before the tile's "
               "P·V is added. ";
    }
    if (p.N % 64 != 0) {
        out << "N = " << p.N << " ends in a partial tile: the walk must visit ceil(N / 64) tiles, keys past N "
            << "must score -inf, and the rows of K and V past N must be zeros in shared memory. ";
    }
    if (p.causal) {
        out << "causal: key j is visible to query i when j <= i; only the tiles wholly above the diagonal may be "
               "skipped, the diagonal tile is masked. ";
    }
    if (forced_shape.splits > 1) {
        out << "The keys were split over " << forced_shape.splits << " blocks: each split's O and l must be "
            << "rescaled to the row's common maximum, by exp(m_s - M), before they are summed and O divided by l. ";
    }
    out << "If it fails under some emulator schedules only, a __syncthreads() is missing between loading a tile "
           "of K and V and reading it, or before the next tile overwrites it. The scores are scaled by 1/sqrt(d) "
           "= "
        << 1.0 / std::sqrt(static_cast<double>(p.d)) << " and L_0 is " << (e.lse.empty() ? 0.0 : e.lse[0])
        << ".\n";
    return out.str();
}

course::Comparison check(Implementation which, Problem p, const reference::Attention& e, const Output& got) {
    const std::size_t d = static_cast<std::size_t>(p.d);
    const auto within_o = [&](std::size_t i, float, float g) {
        return std::fabs(static_cast<double>(g) - e.o[i]) <= e.tolerance[i];
    };
    std::vector<float> expected(e.o.begin(), e.o.end());
    const std::vector<float> poisoned(expected.size(), course::poison_value<float>());
    course::CompareContext<float> ctx;
    ctx.name = "O";
    ctx.columns = d;
    ctx.before = &poisoned;
    ctx.hint_if_untouched = "Every row of O below N must be written: a grid that covers ceil(N / rows per block) "
                            "blocks, and all d columns of each row.";
    course::Comparison result = course::compare(expected, got.o, within_o, ctx);
    std::size_t bad_row = 0;
    if (!result.ok) {
        std::size_t first = 0;
        while (within_o(first, 0.0f, got.o[first])) ++first;
        bad_row = first / d;
        std::ostringstream out;
        out.precision(9);
        out << function_name(which) << ", " << describe(p) << ", COURSE_SEED=" << course::seed() << ":\n  "
            << result.message << "\n  allowed error there: " << e.tolerance[first] << "\n"
            << likely_cause(which, p, e, bad_row);
        result.message = out.str();
        return result;
    }
    const auto within_l = [&](std::size_t i, float, float g) {
        return std::fabs(static_cast<double>(g) - e.lse[i]) <= e.lse_tolerance[i];
    };
    std::vector<float> expected_l(e.lse.begin(), e.lse.end());
    const std::vector<float> poisoned_l(expected_l.size(), course::poison_value<float>());
    course::CompareContext<float> lctx;
    lctx.name = "L";
    lctx.before = &poisoned_l;
    lctx.hint_if_untouched = "L[i] must be written for every query row i < N.";
    result = course::compare(expected_l, got.l, within_l, lctx);
    if (!result.ok) {
        std::ostringstream out;
        out << function_name(which) << ", " << describe(p) << ", COURSE_SEED=" << course::seed() << ":\n  "
            << result.message
            << "\n  likely cause: L_i = ln sum_j exp(s_ij) of the scaled scores = m + ln l with m the row's "
               "maximum in natural-log units (if m is kept in log2 units, as exp2f wants: (m + log2 l) * ln 2).\n";
        result.message = out.str();
        return result;
    }
    result = course::compare_guard(o_guard(), got.o_guard, static_cast<std::size_t>(p.N) * d, "O",
                                   "a row past N was written: the query rows of the last tile past N must be "
                                   "left out when O is stored");
    if (!result.ok) return result;
    return course::compare_guard(l_guard(), got.l_guard, static_cast<std::size_t>(p.N), "L",
                                 "L[i] was written for a query row i >= N");
}

// Checks one implementation on one problem, under every emulator schedule
// (or repeatedly on a GPU) when `schedules` is true, once otherwise.
void require_attention(Implementation which, Problem p, Range range = Range::unit, bool schedules = true) {
    CAPTURE(function_name(which), describe(p), course::seed());
    const Inputs in = make_inputs(p, range);
    const reference::Attention expected = reference::attention(in.Q, in.K, in.V, p.N, p.d, p.causal);
    if (range == Range::wide) {
        INFO("the wide inputs must give scores far from 0 (largest |s| " << expected.max_abs_score << ")");
        REQUIRE(expected.max_abs_score > 40.0);
    }
    const std::size_t size = static_cast<std::size_t>(p.N) * static_cast<std::size_t>(p.d);
    Device dev{course::DeviceBuffer<__half>(to_half(in.Q)), course::DeviceBuffer<__half>(to_half(in.K)),
               course::DeviceBuffer<__half>(to_half(in.V)), course::DeviceBuffer<__half>(size + kGuard),
               course::DeviceBuffer<float>(static_cast<std::size_t>(p.N) + kGuard)};
    const auto body = [&] { COURSE_REQUIRE_MATCH(check(which, p, expected, run(which, dev, p))); };
    if (schedules) {
        course::for_each_schedule(body);
    } else {
        body();
    }
}

// Bad arguments and N = 0, checked inside a test case that needs real
// work: an untouched starter, whose launchers check them already, earns nothing.
void require_bad_arguments_refused(Implementation which) {
    INFO(function_name(which) << ": d other than 64 and 128, or a negative N, throws std::invalid_argument; N = 0 "
                                 "with null pointers launches nothing");
    course::DeviceBuffer<__half> h(64 * 96);
    course::DeviceBuffer<float> l(64);
    const auto call_with = [&](int N, int d) {
        if (which == Implementation::simple) {
            lesson23::attention_simple(h.data(), h.data(), h.data(), h.data(), l.data(), N, d, false);
        } else {
            lesson23::flash_attention(h.data(), h.data(), h.data(), h.data(), l.data(), N, d, true);
        }
    };
    CHECK_THROWS_AS(call_with(64, 96), std::invalid_argument);
    CHECK_THROWS_AS(call_with(64, 32), std::invalid_argument);
    CHECK_THROWS_AS(call_with(-1, 64), std::invalid_argument);
    if (which == Implementation::simple) {
        CHECK_NOTHROW(lesson23::attention_simple(nullptr, nullptr, nullptr, nullptr, nullptr, 0, 64, false));
    } else {
        CHECK_NOTHROW(lesson23::flash_attention(nullptr, nullptr, nullptr, nullptr, nullptr, 0, 128, true));
    }
    COURSE_LAUNCH_CHECK();
}

}  // namespace

TEST_CASE("attention_simple gives the CPU's attention and log-sum-exp, causal and not", "[23]") {
    const int N = GENERATE(1, 15, 100);
    const int d = GENERATE(64, 128);
    const bool causal = GENERATE(false, true);
    // One thread per row and no shared memory: no schedule can change it.
    require_attention(Implementation::simple, {N, d, causal}, Range::unit, false);
    if (N == 1 && d == 64 && !causal) require_bad_arguments_refused(Implementation::simple);
}

TEST_CASE("flash_attention gives the CPU's attention on whole tiles of 64 keys", "[23]") {
    // 16: one warp's rows; 64: one tile; 128: two tiles, the online softmax across them.
    const int N = GENERATE(16, 64, 128);
    const int d = GENERATE(64, 128);
    require_attention(Implementation::flash, {N, d, false});
}

TEST_CASE("flash_attention masks the keys above the diagonal when causal", "[23]") {
    // 64: the diagonal tile only; 128 and 192: tiles below it, skipped ones above it.
    const int N = GENERATE(64, 128, 192);
    const int d = GENERATE(64, 128);
    require_attention(Implementation::flash, {N, d, true});
}

TEST_CASE("flash_attention masks the keys past N and leaves the rows past N alone in partial tiles", "[23]") {
    const int N = GENERATE(1, 15, 100, 129, 257);
    const int d = GENERATE(64, 128);
    const bool causal = GENERATE(false, true);
    require_attention(Implementation::flash, {N, d, causal});
}

TEST_CASE("flash_attention stays finite and right when the scores reach +-60", "[23]") {
    const int d = GENERATE(64, 128);
    const bool causal = GENERATE(false, true);
    require_attention(Implementation::flash, {200, d, causal}, Range::wide);
}

// Every block shape the reference can launch (16, 32 or 64 query rows, 2
// or 4 warps per band of 16 rows), unsplit, whichever the launcher picks
// here: a starter forwards these calls to its flash_attention. N = 200 (4
// tiles, a partial one) runs under every emulator schedule, as above, since
// the merge of 4 key groups has its own barriers; the smaller N once (all
// five schedules for all of them took 11 s on two cores).
TEST_CASE("flash_attention gives the CPU's attention with every block shape", "[23]") {
    const int which = GENERATE(range(0, static_cast<int>(std::size(lesson23::shapes::kShapes))));
    const lesson23::shapes::Shape shape = lesson23::shapes::kShapes[which];
    const int N = GENERATE(1, 15, 64, 100, 200);
    const int d = GENERATE(64, 128);
    const bool causal = GENERATE(false, true);
    CAPTURE(shape.rows_per_block, shape.key_groups);
    const ForcedShape forced(shape);
    require_attention(Implementation::flash, {N, d, causal}, Range::unit, N == 200);
}

// The keys of each block of rows split over 2 and 4 blocks, whose states a
// second kernel merges. N = 100, causal: blocks of rows with fewer tiles
// than splits (the first: one tile, no split at all); N = 257: 5 tiles,
// split unevenly (4 splits: 1, 1, 1 and 2 tiles), a partial last one, and
// with causal splits that end at different diagonals; d = 128 once, for the
// scratch's longer rows. Every schedule with 4 splits of N = 257 and d = 64
// (the blocks of one launch in every order); the rest once, to keep the
// case to a few seconds on two cores.
TEST_CASE("flash_attention merges the states of keys split over several blocks", "[23]") {
    const lesson23::shapes::Shape block = kSplitBlocks[GENERATE(range(0, static_cast<int>(std::size(kSplitBlocks))))];
    const int splits = GENERATE(from_range(std::begin(lesson23::shapes::kSplits), std::end(lesson23::shapes::kSplits)));
    const Problem p = kSplitProblems[GENERATE(range(0, static_cast<int>(std::size(kSplitProblems))))];
    CAPTURE(block.rows_per_block, block.key_groups, splits);
    const ForcedShape forced({block.rows_per_block, block.key_groups, splits});
    require_attention(Implementation::flash, p, Range::unit, splits == 4 && p.N == 257 && p.d == 64);
}

TEST_CASE("flash_attention refuses a d other than 64 and 128 and launches nothing for N = 0", "[23]") {
    require_attention(Implementation::flash, {100, 64, true}, Range::unit, false);
    require_bad_arguments_refused(Implementation::flash);
    require_bad_arguments_refused(Implementation::simple);
}
