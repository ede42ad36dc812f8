// Lesson 19 tests: the exclusive scan against a CPU loop at the edge sizes
// and across many blocks; the radix sort of keys and of (key, value) pairs
// against a CPU stable sort, for keys with every distribution of bits
// (uniform, all equal, few distinct, already sorted, reversed, only the top
// byte varying), the edge sizes and partial last tiles, with values = the
// input positions so that stability is checked exactly; sorts by a range of
// bits (1 to 4 passes, an odd count included, and a narrow last digit); all
// under every emulator schedule (the scatter's ranking races when a barrier
// is missing) or many times on a GPU.
#include <radix_sort.hpp>

#include "cpu_reference.hpp"

#include <course/backend.hpp>
#include <course/catch.hpp>
#include <course/compare.hpp>
#include <course/device_buffer.hpp>
#include <course/inputs.hpp>
#include <course/schedules.hpp>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

// A prime size past several of any tile a student may choose (up to 4096
// keys per block); on a GPU also a million keys (hundreds of tiles). The
// emulator stops at 12289 keys: every ballot and atomic of the ranking is a
// scheduling point, and each sort runs under five schedules.
constexpr std::size_t kSeveralTiles = 12289;
constexpr std::size_t kLarge = course::kEmulator ? kSeveralTiles : (std::size_t{1} << 20) + 7;

// The sizes of the uniform keys: the edges, one past a block of 1024
// threads, one past 4096 keys (a tile plus a partial one), several tiles.
std::vector<std::size_t> all_sizes() {
    std::vector<std::size_t> sizes(course::edge_sizes().begin(), course::edge_sizes().end());
    sizes.push_back(1025);
    sizes.push_back(4097);
    sizes.push_back(kLarge);
    return sizes;
}

// The sizes of the other distributions: a partial warp past a block, and a
// full tile plus a partial one (on a GPU, also the large size).
std::vector<std::size_t> distribution_sizes() {
    std::vector<std::size_t> sizes{257, 4097};
    if (!course::kEmulator) sizes.push_back(kLarge);
    return sizes;
}

std::vector<std::size_t> sizes_for(int kind) { return kind == 0 ? all_sizes() : distribution_sizes(); }

enum class Keys { uniform = 0, all_equal, few_distinct, sorted, reversed, top_byte_only };

const char* keys_name(Keys k) {
    switch (k) {
        case Keys::uniform: return "uniform 32-bit keys";
        case Keys::all_equal: return "all keys equal (0xdeadbeef)";
        case Keys::few_distinct: return "5 distinct keys, differing in every byte";
        case Keys::sorted: return "keys already sorted (with ties)";
        case Keys::reversed: return "keys in descending order";
        case Keys::top_byte_only: return "keys differing only in the top byte";
    }
    return "?";
}

const Keys kAllKeys[] = {Keys::uniform,  Keys::all_equal, Keys::few_distinct,
                         Keys::sorted,   Keys::reversed,  Keys::top_byte_only};

std::vector<unsigned> make_keys(Keys kind, std::size_t n, const std::string& label) {
    std::vector<unsigned> keys = course::random_values<unsigned>(n, 0u, 0xffffffffu, label);
    switch (kind) {
        case Keys::uniform: break;
        case Keys::all_equal: std::fill(keys.begin(), keys.end(), 0xdeadbeefu); break;
        case Keys::few_distinct: {
            const unsigned values[] = {0x00000000u, 0x01020304u, 0x80ff0001u, 0xfffffffeu, 0x7f00ff00u};
            for (unsigned& k : keys) k = values[k % 5];
            break;
        }
        case Keys::sorted:
            for (unsigned& k : keys) k >>= 8;  // ties among a million keys, none among a few thousand
            std::sort(keys.begin(), keys.end());
            break;
        case Keys::reversed: std::sort(keys.begin(), keys.end(), std::greater<>()); break;
        case Keys::top_byte_only:
            for (unsigned& k : keys) k = (k & 0xff000000u) | 0x00a5a5a5u;
            break;
    }
    return keys;
}

std::string what_sorted(const std::string& function, const std::string& keys, std::size_t n, int begin_bit,
                        int end_bit) {
    std::ostringstream out;
    out << function << " of " << n << " " << keys;
    if (begin_bit != 0 || end_bit != 32) out << " by bits [" << begin_bit << ", " << end_bit << ")";
    out << " (COURSE_SEED=" << course::seed() << ")";
    return out.str();
}

// A comparison's message without its generic "likely cause" line, for the
// checks below that name a more precise one.
std::string without_likely_cause(const std::string& message) {
    return message.substr(0, message.find("\n  likely cause:"));
}

// The largest b in 8, 16, 24 such that `keys` are sorted by their low b bits
// (0 if none): a sort that is right for the low digits only.
int sorted_low_bits(const std::vector<unsigned>& keys) {
    int best = 0;
    for (const int b : {8, 16, 24}) {
        const unsigned mask = (1u << b) - 1u;
        bool sorted = true;
        for (std::size_t i = 1; i < keys.size() && sorted; ++i) sorted = (keys[i - 1] & mask) <= (keys[i] & mask);
        if (sorted) best = b;
    }
    return best;
}

// Explains wrong sorted keys.
course::Comparison check_keys(const std::vector<unsigned>& input, const std::vector<unsigned>& expected,
                              const std::vector<unsigned>& got, int begin_bit, int end_bit,
                              const std::string& what) {
    course::CompareContext<unsigned> ctx;
    ctx.name = "keys_out";
    course::Comparison cmp = course::compare_exact(expected, got, ctx);
    if (cmp.ok) return cmp;
    std::ostringstream out;
    out << what << ":\n  " << without_likely_cause(cmp.message) << "\n  likely cause: ";
    std::vector<unsigned> sorted_got = got, sorted_in = input;
    std::sort(sorted_got.begin(), sorted_got.end());
    std::sort(sorted_in.begin(), sorted_in.end());
    const int passes = (end_bit - begin_bit + lesson19::kRadixBits - 1) / lesson19::kRadixBits;
    const std::size_t poisoned =
        static_cast<std::size_t>(std::count(got.begin(), got.end(), course::poison_value<unsigned>()));
    const std::string odd_passes =
        passes % 2 == 1 ? " Here the sort has " + std::to_string(passes) +
                              " passes, an odd number: the passes alternate between two buffers (ping-pong), so "
                              "the FIRST pass must write keys_out for the last one to end there."
                        : std::string();
    if (poisoned == got.size()) {
        out << "keys_out still holds the poison the test filled it with: no key landed in it. Either the sort "
               "ended in its temporary buffer (ping-pong),"
            << (passes == 0 ? " or, with no bits to compare (begin_bit == end_bit), the keys were not copied,"
                            : "")
            << " or the last, partial tile is never sorted (the tile count must round up), or every position "
               "points past its place (offsets from an INCLUSIVE scan)." << odd_passes;
    } else if (sorted_got != sorted_in) {
        out << "keys_out is not a permutation of the input: " << poisoned
            << " positions were never written and other keys are missing or written twice. Are the digit "
               "offsets an EXCLUSIVE scan of the (digit, tile) counts, digit-major (all tiles of digit 0, then "
               "digit 1, ...)? Is the last, partial tile counted and scattered? Wrong only on some emulator "
               "schedules? A barrier is missing between the ranking and the writes.";
    } else if (begin_bit == 0 && end_bit == 32 && sorted_low_bits(got) > 0) {
        out << "the keys are ordered by their low " << sorted_low_bits(got) << " bits only: a pass is missing "
            << "(32-bit keys need 4 passes of 8 bits, shifts 0, 8, 16 and 24), or a pass sorts by the wrong "
               "digit ((key >> shift) & 0xff with shift = begin_bit + 8 * pass).";
    } else {
        out << "the keys are all there, in the wrong order. Check the digit each pass sorts by ((key >> shift) "
               "& mask, shift = begin_bit + 8 * pass, and a mask of end_bit - shift bits for a narrow last "
               "digit: bits above end_bit must not be compared), that each pass reads the previous pass's "
               "output, and that equal digits keep their order (stability: without it a later pass undoes an "
               "earlier one). Wrong only on some emulator schedules? A barrier is missing in the ranking."
            << odd_passes;
    }
    return {false, out.str()};
}

// Explains wrong values, given that the keys are right: values_in[i] = i.
course::Comparison check_values(const std::vector<unsigned>& input_keys, const std::vector<unsigned>& expected,
                                const std::vector<unsigned>& got_keys, const std::vector<unsigned>& got,
                                const std::string& what) {
    course::CompareContext<unsigned> ctx;
    ctx.name = "values_out";
    course::Comparison cmp = course::compare_exact(expected, got, ctx);
    if (cmp.ok) return cmp;
    std::ostringstream out;
    out << what << ", values_in[i] = i:\n  " << without_likely_cause(cmp.message) << "\n  likely cause: ";
    const std::size_t n = got.size();
    bool follow_keys = true;  // each value points at an input key equal to its key
    std::size_t identity = 0;
    for (std::size_t j = 0; j < n; ++j) {
        follow_keys = follow_keys && got[j] < n && input_keys[got[j]] == got_keys[j];
        identity += got[j] == j ? 1 : 0;
    }
    std::vector<unsigned> sorted_got = got;
    std::sort(sorted_got.begin(), sorted_got.end());
    std::vector<unsigned> positions(n);
    std::iota(positions.begin(), positions.end(), 0u);
    const bool permutation = sorted_got == positions;
    const unsigned poison = course::poison_value<unsigned>();
    if (std::all_of(got.begin(), got.end(), [&](unsigned v) { return v == poison; })) {
        out << "values_out still holds the poison the test filled it with: the values were never written (or "
               "the last pass wrote them to the temporary buffer).";
    } else if (follow_keys && permutation) {
        out << "every value is one of its key's, but equal keys' values are out of input order: the sort is "
               "not stable. Each pass must keep the input order of keys with the same digit; a rank taken "
               "with atomicAdd on a shared counter follows whichever thread gets there first (an LSD sort that "
               "is not stable at every pass is not a sort at all for the earlier digits).";
    } else if (identity == n) {
        out << "values_out[j] == j everywhere: the values were copied, not moved with their keys. Write each "
               "value to the same position as its key.";
    } else {
        out << "the values do not follow their keys: value i must land where key i lands, at every pass (the "
               "same slot in the shared tile, the same output position), and the next pass must read the values "
               "the previous one wrote.";
    }
    return {false, out.str()};
}

// Sorts `keys` with sort_keys into a poisoned output with a guard after it,
// under every schedule, and checks the result.
void require_sorted_keys(const std::vector<unsigned>& keys, int begin_bit, int end_bit, const std::string& what) {
    const std::size_t n = keys.size();
    std::vector<unsigned> positions(n);
    std::iota(positions.begin(), positions.end(), 0u);
    const std::vector<unsigned> expected = lesson19::reference::sort_pairs(keys, positions, begin_bit, end_bit).keys;
    const course::DeviceBuffer<unsigned> d_keys(keys);
    constexpr std::size_t kGuard = 16;
    course::for_each_schedule([&] {
        course::DeviceBuffer<unsigned> out(n + kGuard);
        out.poison();
        lesson19::sort_keys(d_keys.data(), out.data(), n, begin_bit, end_bit);
        COURSE_LAUNCH_CHECK();
        const std::vector<unsigned> all = out.download();
        const std::vector<unsigned> got(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n));
        COURSE_REQUIRE_MATCH(check_keys(keys, expected, got, begin_bit, end_bit, what));
        COURSE_REQUIRE_MATCH(course::compare_guard(
            std::vector<unsigned>(kGuard, course::poison_value<unsigned>()),
            std::vector<unsigned>(all.begin() + static_cast<std::ptrdiff_t>(n), all.end()), n, "keys_out",
            "a thread past the last key of the last tile wrote: the partial tile needs its bounds check."));
    });
}

// Sorts (keys, positions) with sort_pairs under every schedule and checks both outputs.
void require_sorted_pairs(const std::vector<unsigned>& keys, int begin_bit, int end_bit, const std::string& what) {
    const std::size_t n = keys.size();
    std::vector<unsigned> positions(n);
    std::iota(positions.begin(), positions.end(), 0u);
    const lesson19::reference::Sorted expected = lesson19::reference::sort_pairs(keys, positions, begin_bit, end_bit);
    const course::DeviceBuffer<unsigned> d_keys(keys), d_values(positions);
    course::for_each_schedule([&] {
        course::DeviceBuffer<unsigned> keys_out(n), values_out(n);
        keys_out.poison();
        values_out.poison();
        lesson19::sort_pairs(d_keys.data(), d_values.data(), keys_out.data(), values_out.data(), n, begin_bit,
                             end_bit);
        COURSE_LAUNCH_CHECK();
        const std::vector<unsigned> got_keys = keys_out.download();
        COURSE_REQUIRE_MATCH(check_keys(keys, expected.keys, got_keys, begin_bit, end_bit, what));
        COURSE_REQUIRE_MATCH(check_values(keys, expected.values, got_keys, values_out.download(), what));
    });
}

}  // namespace

TEST_CASE("exclusive_scan gives the prefix sums of any length, across many blocks", "[19]") {
    std::vector<std::size_t> sizes(course::edge_sizes().begin(), course::edge_sizes().end());
    for (const std::size_t n : {std::size_t{1025}, std::size_t{4097}, std::size_t{65537},
                                course::kEmulator ? std::size_t{1100009} : (std::size_t{1} << 24) + 3}) {
        sizes.push_back(n);
    }
    for (const std::size_t n : sizes) {
        const std::vector<unsigned> in = course::random_values<unsigned>(n, 0u, 1000u, "scan " + std::to_string(n));
        const std::vector<unsigned> expected = lesson19::reference::exclusive_scan(in);
        CAPTURE(n, course::seed());
        const course::DeviceBuffer<unsigned> d_in(in);
        course::for_each_schedule([&] {
            course::DeviceBuffer<unsigned> out(n);
            out.poison();
            lesson19::exclusive_scan(d_in.data(), out.data(), n);
            COURSE_LAUNCH_CHECK();
            const std::vector<unsigned> got = out.download();
            course::CompareContext<unsigned> ctx;
            ctx.name = "out";
            course::Comparison cmp = course::compare_exact(expected, got, ctx);
            if (!cmp.ok) {
                bool inclusive = n > 1;
                for (std::size_t i = 0; i + 1 < n && inclusive; ++i) inclusive = got[i] == expected[i + 1];
                const bool explained = cmp.message.find("likely cause:") != std::string::npos;
                std::ostringstream out_msg;
                out_msg << "exclusive_scan of " << n << " values in [0, 1000] (COURSE_SEED=" << course::seed()
                        << "): out[i] must be in[0] + ... + in[i-1], out[0] = 0\n  " << cmp.message;
                // When compare() named the cause (never written, a tail left out), it stands.
                if (!explained && inclusive) {
                    out_msg << "\n  likely cause: ";
                    out_msg << "out[i] includes in[i]: the scan is inclusive. Write the running sum before adding "
                               "the element to it.";
                } else if (!explained) {
                    out_msg << "\n  likely cause: ";
                    out_msg << "a block's part starts from the wrong offset (each block must start from the sum "
                               "of all blocks before it: the scan of the block sums), or a block scan reads a "
                               "shared value before it is written. Wrong only on some emulator schedules? A "
                               "barrier is missing.";
                }
                cmp.message = out_msg.str();
            }
            COURSE_REQUIRE_MATCH(cmp);
        });
    }
}

TEST_CASE("sort_pairs compares only the bits begin_bit to end_bit - 1: 0 to 4 passes, odd counts, narrow digits",
          "[19]") {
    struct Bits {
        int begin, end;
    };
    // 3 passes (odd: the ping-pong must end in the output), 1 pass, a 5-bit
    // last digit, a 4-bit one high up, one bit, none.
    const Bits ranges[] = {{0, 24}, {8, 16}, {0, 8}, {4, 17}, {20, 32}, {31, 32}, {0, 1}, {12, 12}, {0, 32}};
    for (const Bits& bits : ranges) {
        for (const std::size_t n : {std::size_t{257}, std::size_t{5003}}) {
            const std::string what = what_sorted("sort_pairs", keys_name(Keys::uniform), n, bits.begin, bits.end);
            CAPTURE(what);
            require_sorted_pairs(make_keys(Keys::uniform, n, what), bits.begin, bits.end, what);
        }
    }
    // Bits outside [0, 32], or in the wrong order, are refused.
    const course::DeviceBuffer<unsigned> in(std::vector<unsigned>{3, 1, 2});
    course::DeviceBuffer<unsigned> out(3);
    INFO("sort_keys must throw std::invalid_argument unless 0 <= begin_bit <= end_bit <= 32");
    CHECK_THROWS_AS(lesson19::sort_keys(in.data(), out.data(), 3, 0, 33), std::invalid_argument);
    CHECK_THROWS_AS(lesson19::sort_keys(in.data(), out.data(), 3, -1, 8), std::invalid_argument);
    CHECK_THROWS_AS(lesson19::sort_keys(in.data(), out.data(), 3, 16, 8), std::invalid_argument);
    CHECK_THROWS_AS(lesson19::sort_pairs(in.data(), in.data(), out.data(), out.data(), 0, 0, 40),
                    std::invalid_argument);
}

TEST_CASE("sort_pairs moves each value with its key and keeps equal keys in input order", "[19]") {
    for (const Keys kind : kAllKeys) {
        for (const std::size_t n : sizes_for(static_cast<int>(kind))) {
            const std::string what = what_sorted("sort_pairs", keys_name(kind), n, 0, 32);
            CAPTURE(what);
            require_sorted_pairs(make_keys(kind, n, what), 0, 32, what);
        }
    }
    const std::string what = what_sorted("sort_pairs", "keys with 1000 distinct values", kLarge, 0, 32);
    CAPTURE(what);
    std::vector<unsigned> keys = course::random_values<unsigned>(kLarge, 0u, 999u, what);
    for (unsigned& k : keys) k *= 4294967u;  // spread over all four bytes, a thousand ties each
    require_sorted_pairs(keys, 0, 32, what);
}

TEST_CASE("sort_keys sorts keys of every bit distribution and any length, under every schedule", "[19]") {
    for (const Keys kind : kAllKeys) {
        for (const std::size_t n : sizes_for(static_cast<int>(kind))) {
            const std::string what = what_sorted("sort_keys", keys_name(kind), n, 0, 32);
            CAPTURE(what);
            require_sorted_keys(make_keys(kind, n, what), 0, 32, what);
        }
    }
}
