// Lesson 11 tests: the k largest (value, index) pairs of n floats, compared
// exactly with a CPU std::partial_sort, for k from 1 to 1024, at every edge
// size and a large one, on inputs made to break top-K kernels (ties
// everywhere, sorted runs, negatives, signed zeros, NaN, the top k crowded
// into one block), under every emulator schedule (or repeatedly on a GPU).
#include <top_k.hpp>

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
#include <cstring>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using lesson11::reference::Pair;

enum class Input { random, all_equal, ascending, descending, few_distinct, negative, signed_zeros, top_in_one_block,
                   nan_and_infinities, crowded_at_the_bound };

const char* input_name(Input input) {
    switch (input) {
        case Input::random: return "random in [-1, 1)";
        case Input::all_equal: return "all equal (2.5)";
        case Input::ascending: return "sorted ascending";
        case Input::descending: return "sorted descending";
        case Input::few_distinct: return "many duplicates (integers 0 to 9)";
        case Input::negative: return "all negative";
        case Input::signed_zeros: return "-0.0 and +0.0 mixed with negatives";
        case Input::top_in_one_block: return "the top k side by side in one stretch of k elements";
        case Input::nan_and_infinities: return "random with NaN, +inf and -inf sprinkled in";
        case Input::crowded_at_the_bound:
            return "k - 1 tiles of large values spread out, the first 8 floats of every 128 tied for the largest";
    }
    return "?";
}

// The k used to place the clustered top values (top_in_one_block).
std::vector<float> make_values(Input input, int n, int k) {
    const std::size_t count = static_cast<std::size_t>(n);
    const std::string label = std::string(input_name(input)) + " n=" + std::to_string(n);
    std::vector<float> values(count);
    switch (input) {
        case Input::random: values = course::random_values<float>(count, -1.0f, 1.0f, label); break;
        case Input::all_equal: std::fill(values.begin(), values.end(), 2.5f); break;
        case Input::ascending:
            for (std::size_t i = 0; i < count; ++i) values[i] = static_cast<float>(i) * 0.25f - 100.0f;
            break;
        case Input::descending:
            for (std::size_t i = 0; i < count; ++i) values[i] = 100.0f - static_cast<float>(i) * 0.25f;
            break;
        case Input::few_distinct: {
            const std::vector<int> digits = course::random_values<int>(count, 0, 9, label);
            for (std::size_t i = 0; i < count; ++i) values[i] = static_cast<float>(digits[i]);
            break;
        }
        case Input::negative: values = course::random_values<float>(count, -1e6f, -1.0f, label); break;
        case Input::signed_zeros: {
            // Zeros are the largest values; about half of them are -0.0.
            const std::vector<int> kind = course::random_values<int>(count, 0, 3, label);
            for (std::size_t i = 0; i < count; ++i) {
                values[i] = kind[i] == 0 ? -0.0f : kind[i] == 1 ? 0.0f : -static_cast<float>(kind[i]);
            }
            break;
        }
        case Input::top_in_one_block: {
            // The failure case of the sketch in Tim's five-kernels article
            // (docs/sources.md): everything else in [0, 1), the k largest (all
            // above 1) next to each other in the middle, so one block (or one
            // thread's stretch) holds all of them.
            values = course::random_values<float>(count, 0.0f, 1.0f, label);
            const std::size_t m = std::min(count, static_cast<std::size_t>(k));
            const std::size_t start = (count - m) / 2;
            const std::vector<float> high = course::random_values<float>(m, 2.0f, 3.0f, label + " top");
            std::copy(high.begin(), high.end(), values.begin() + static_cast<std::ptrdiff_t>(start));
            break;
        }
        case Input::nan_and_infinities: {
            values = course::random_values<float>(count, -1.0f, 1.0f, label);
            const std::vector<int> kind = course::random_values<int>(count, 0, 9, label + " specials");
            for (std::size_t i = 0; i < count; ++i) {
                if (kind[i] == 0) values[i] = std::numeric_limits<float>::quiet_NaN();
                if (kind[i] == 1) values[i] = -std::numeric_limits<float>::quiet_NaN();
                if (kind[i] == 2 && i % 2 == 0) values[i] = std::numeric_limits<float>::infinity();
                if (kind[i] == 3 && i % 2 == 0) values[i] = -std::numeric_limits<float>::infinity();
            }
            break;
        }
        case Input::crowded_at_the_bound: {
            // Made for the reference's sampled path (k <= 32, n >= 2^15; its
            // page says how), so that its last block has too many candidates
            // to rank: everything in [0, 1) but m - 1 tiles of 512 floats
            // (m = min(k, 32)), 4 tiles apart, whose floats all exceed 1.5
            // (the first 8 of every 128 tied at 3, the largest value; the rest
            // in [1.5, 2)), and one 1.25 in the tile 4 after them. Below 2^21
            // floats every tile is sampled, tile t in group t mod 128, so the
            // threshold (the m-th largest group maximum) is the 1.25, and only
            // the m - 1 tiles and the 1.25 beat it. The warps append them to
            // the candidate buffer 32 keys at a time (every lane's vote passes)
            // but once, so each tie, from lane 0 or 1 of a vote, lands on one
            // of at most 24 of the last block's 256 threads. For m of 25 to 32
            // its bound, the m-th largest of its threads' largest candidates,
            // lies below all 32 (m - 1) ties: more than 512 candidates reach
            // it, and the block merges lists instead of ranking them.
            values = course::random_values<float>(count, 0.0f, 1.0f, label);
            constexpr std::size_t kTile = 512;
            const std::size_t apart = std::min<std::size_t>(4, count / (32 * kTile));
            const std::size_t tiles = std::clamp<std::size_t>(static_cast<std::size_t>(k), 1, 32) - 1;
            if (apart == 0) break;
            const std::vector<float> large = course::random_values<float>(tiles * kTile, 1.5f, 2.0f, label + " large");
            for (std::size_t tile = 0; tile < tiles; ++tile) {
                for (std::size_t j = 0; j < kTile; ++j) {
                    values[tile * apart * kTile + j] = j % 128 < 8 ? 3.0f : large[tile * kTile + j];
                }
            }
            values[tiles * apart * kTile + kTile / 2] = 1.25f;
            break;
        }
    }
    return values;
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

std::string show(float value, int index) {
    std::ostringstream out;
    out << "(" << course::detail::show(value);
    if (value == 0.0f && std::signbit(value)) out << " (-0)";
    out << ", index " << index << ")";
    return out.str();
}

// The output slots after the answer that the test checks stay untouched:
// [m, k) and a few past k, where nothing may be written.
constexpr std::size_t kGuardSlots = 4;

struct Result {
    std::vector<float> values;
    std::vector<int> indices;
};

// Calls top_k with poisoned outputs and a poisoned workspace.
Result run_top_k(const course::DeviceBuffer<float>& d_values, std::size_t n, int k) {
    const std::size_t slots = static_cast<std::size_t>(k) + kGuardSlots;
    course::DeviceBuffer<float> d_out_values(slots);
    course::DeviceBuffer<int> d_out_indices(slots);
    d_out_values.poison();
    d_out_indices.poison();
    const std::size_t bytes = lesson11::top_k_workspace_bytes(n, k);
    course::DeviceBuffer<unsigned char> workspace(bytes);
    workspace.poison();
    lesson11::top_k(d_values.data(), n, k, d_out_values.data(), d_out_indices.data(), workspace.data(), bytes);
    COURSE_LAUNCH_CHECK();
    return {d_out_values.download(), d_out_indices.download()};
}

// Why position `i` holds `got` instead of the expected pair: a guess from
// what the rest of the answer looks like.
std::string likely_cause(const std::vector<float>& values, const std::vector<Pair>& expected, const Result& got,
                         std::size_t i) {
    const int n = static_cast<int>(values.size());
    const Pair& want = expected[i];
    const float got_value = got.values[i];
    const int got_index = got.indices[i];
    if (got_index == course::poison_value<int>() && std::isnan(got_value)) {
        return "this slot was never written: the answer has min(k, n) pairs; does the last step write every one of "
               "them?";
    }
    if (got_index == -1) {
        const bool all_empty = std::all_of(got.indices.begin(), got.indices.begin() + static_cast<std::ptrdiff_t>(
                                                                                        expected.size()),
                                           [](int index) { return index == -1; });
        if (all_empty) {
            return "every position came back as an empty slot (index -1): no element reached the answer. Are the "
                   "keys built (ordered_bits, pack_key: no element's key is 0), is the last, partial chunk read, are "
                   "the keys that beat the threshold appended to the buffer, and does each merge update every slot "
                   "of best (slots t, t + blockDim.x, ...)?";
        }
        return "an empty candidate slot (index -1) where an element should be: a pass lost candidates. A block "
               "must keep k of them (not only its maximum, like the sketch in Tim's five-kernels article; not only "
               "one per thread; lists of k rounded UP to a power of two), the last, partial chunk must be read, and "
               "a key that finds the buffer full must stay pending until after the merge.";
    }
    if (got_index == n) {
        return "index n, one past the end of the array: a load bound written <= instead of < (the slots past the "
               "end of the last chunk must be empty keys)";
    }
    if (got_index < 0 || got_index >= n) {
        return "an index outside the array: a key decoded the wrong way, or an empty candidate slot taken for an "
               "element (fewer candidates than k reached the end?)";
    }
    if (!same_bits(got_value, values[static_cast<std::size_t>(got_index)])) {
        return "the value is not values[index]: write the element at the returned index, bit for bit";
    }
    const bool equal_values = (std::isnan(want.value) && std::isnan(got_value)) || want.value == got_value;
    if (equal_values && got_index > want.index) {
        return "equal values came back with a higher index first: ties must go to the lowest index. In a 64-bit "
               "key, the low half must be larger for a LOWER index (store 0xFFFFFFFF - index, not the index). For "
               "-0.0 and +0.0: they are equal, so the index decides; the key must map both to the same bits.";
    }
    for (std::size_t j = 0; j < expected.size(); ++j) {
        if (got.indices[j] == want.index) {
            return "the right pairs, in the wrong order: is the final list sorted largest first, and does a "
                   "negative value rank below a positive one (complement the bits of negative floats, set the "
                   "sign bit of positive ones)?";
        }
    }
    if (want.value < 0 && got_value > want.value) {
        return "a smaller value than expected ranks too high: is the order of negative floats reversed in the key?";
    }
    return "an element of the top k is missing from the answer. A block must keep its k best candidates, not only "
           "its maximum (the sketch in Tim's five-kernels article loses the second of two top elements in one "
           "block); the last partial chunk must be read; no key that beats the threshold may be dropped: one that "
           "finds the buffer full stays pending and is appended after the merge; each chunk must be filtered "
           "before the next chunk's loads overwrite its registers; every step of the shared-memory sort needs its __syncthreads(); and the candidate lists must "
           "hold k keys (k rounded UP to a power of two).";
}

course::Comparison check(const std::vector<float>& values, const std::vector<Pair>& expected, int k,
                         const Result& got, const std::string& what) {
    std::size_t wrong = 0;
    std::size_t first = 0;
    for (std::size_t i = 0; i < expected.size(); ++i) {
        const bool ok = got.indices[i] == expected[i].index && same_bits(got.values[i], expected[i].value);
        if (ok) continue;
        if (wrong == 0) first = i;
        ++wrong;
    }
    std::ostringstream out;
    if (wrong > 0) {
        out << what << ": " << wrong << " of the " << expected.size()
            << " result positions differ from the CPU's std::partial_sort\n  first difference at position "
            << first << ": expected " << show(expected[first].value, expected[first].index) << ", got "
            << show(got.values[first], got.indices[first]) << "\n  likely cause: "
            << likely_cause(values, expected, got, first);
        return {false, out.str()};
    }
    for (std::size_t i = expected.size(); i < got.indices.size(); ++i) {
        if (got.indices[i] != course::poison_value<int>() || !std::isnan(got.values[i])) {
            out << what << ": output slot " << i << " was written (got " << show(got.values[i], got.indices[i])
                << "), but only the first min(k, n) = " << expected.size() << " slots may be"
                << (i >= static_cast<std::size_t>(k) ? " (this one is past the k slots the caller provided)" : "")
                << "\n  likely cause: the last step writes k pairs instead of min(k, n), or a thread past the end "
                   "is not stopped";
            return {false, out.str()};
        }
    }
    return {};
}

// Checks top_k on `input` with n elements and each k of `ks`, under every
// emulator schedule (or repeatedly on a GPU).
void require_top_k(Input input, int n, const std::vector<int>& ks) {
    for (const int k : ks) {
        const std::vector<float> values = make_values(input, n, k);
        const std::vector<Pair> expected = lesson11::reference::top_k(values, k);
        const course::DeviceBuffer<float> d_values(values);
        std::ostringstream what;
        what << "top_k over n = " << n << " " << input_name(input) << " with k = " << k
             << " (COURSE_SEED=" << course::seed() << ", workspace "
             << lesson11::top_k_workspace_bytes(static_cast<std::size_t>(n), k) << " bytes)";
        CAPTURE(input_name(input), n, k, course::seed());
        course::for_each_schedule([&] {
            const Result got = run_top_k(d_values, values.size(), k);
            COURSE_REQUIRE_MATCH(check(values, expected, k, got, what.str()));
        });
    }
}

const std::vector<int> kEveryK{1, 2, 31, 32, 33, 100, 1024};

// A size of many blocks' worth of chunks, so that the merge passes run: small
// enough on the emulator, where every barrier switches between fibers.
int large_size() { return course::kEmulator ? (1 << 15) + 7 : (1 << 22) + 7; }

// n = 0 or k = 0: nothing to return, a workspace of 0 bytes, no output
// written. With the argument checks below, part of the edge-size test case
// rather than test cases of their own: the starter is given the checks and
// does nothing for an empty input, and an untouched starter earns no points.
void require_nothing_written_when_empty() {
    for (const int shape : {0, 1, 2, 3}) {
        const int n = shape < 3 ? 0 : 257;
        const int k = shape == 1 ? 1 : shape == 2 ? 1024 : 0;
        CAPTURE(n, k);
        INFO("n = 0 or k = 0 has nothing to return: the workspace is 0 bytes and no output slot is written");
        CHECK(lesson11::top_k_workspace_bytes(static_cast<std::size_t>(n), k) == 0);
        require_top_k(Input::random, n, {k});
    }
}

// k outside 0 to kMaxK, and a workspace too small, are refused.
void require_bad_arguments_refused() {
    INFO("top_k and top_k_workspace_bytes throw std::invalid_argument for k < 0 or k > kMaxK");
    CHECK_THROWS_AS(lesson11::top_k_workspace_bytes(100, -1), std::invalid_argument);
    CHECK_THROWS_AS(lesson11::top_k_workspace_bytes(100, lesson11::kMaxK + 1), std::invalid_argument);
    const std::vector<float> values = make_values(Input::random, 1009, 0);
    const course::DeviceBuffer<float> d_values(values);
    course::DeviceBuffer<float> out_values(2048);
    course::DeviceBuffer<int> out_indices(2048);
    const std::size_t bytes = lesson11::top_k_workspace_bytes(values.size(), 100);
    course::DeviceBuffer<unsigned char> workspace(bytes);
    CHECK_THROWS_AS(lesson11::top_k(d_values.data(), values.size(), -3, out_values.data(), out_indices.data(),
                                    workspace.data(), bytes),
                    std::invalid_argument);
    CHECK_THROWS_AS(lesson11::top_k(d_values.data(), values.size(), 2000, out_values.data(), out_indices.data(),
                                    workspace.data(), bytes),
                    std::invalid_argument);
    INFO("a workspace one byte smaller than top_k_workspace_bytes(n, k) must be refused, not overrun");
    REQUIRE(bytes > 0);
    CHECK_THROWS_AS(lesson11::top_k(d_values.data(), values.size(), 100, out_values.data(), out_indices.data(),
                                    workspace.data(), bytes - 1),
                    std::invalid_argument);
}

}  // namespace

TEST_CASE("random arrays of every edge size give the CPU's top k for every k from 1 to 1024, n = 0 or k = 0 "
          "writes nothing, and a bad k or a small workspace is refused", "[11]") {
    const int n = GENERATE(from_range(course::edge_sizes()));
    require_top_k(Input::random, n, kEveryK);
    if (n == course::edge_sizes().front()) {
        require_nothing_written_when_empty();
        require_bad_arguments_refused();
    }
}

TEST_CASE("a large random array gives the CPU's top k through several merge passes", "[11]") {
    require_top_k(Input::random, large_size(), course::kEmulator ? std::vector<int>{1, 33, 1024} : kEveryK);
}

TEST_CASE("an array of several chunks per block gives the CPU's top k, each chunk loaded while the one before "
          "is filtered", "[11]") {
    // large_size() gives each block of the first pass one chunk on the
    // emulator (few SMs, but 4096 floats a chunk); this size gives each
    // several, so the next chunk's loads overlap the current one's filter.
    const int n = course::kEmulator ? (1 << 18) + 7 : (1 << 24) + 7;
    require_top_k(Input::random, n, {1, 100});
}

TEST_CASE("ties everywhere come back lowest index first", "[11]") {
    const Input input = GENERATE(Input::all_equal, Input::few_distinct, Input::signed_zeros);
    const int n = GENERATE(257, 1009, 4099);
    require_top_k(input, n, {1, 2, 33, 1024});
}

TEST_CASE("sorted, negative and clustered inputs give the CPU's top k", "[11]") {
    const Input input = GENERATE(Input::ascending, Input::descending, Input::negative, Input::top_in_one_block);
    const int n = GENERATE(1009, 4099);
    require_top_k(input, n, {2, 32, 100, 1024});
}

TEST_CASE("ascending input, where every key beats the threshold, fills each block's buffer again and again",
          "[11]") {
    // Every chunk of a block holds larger values than all before it: all of
    // its keys beat the threshold, so the buffer fills and is merged after
    // every chunk, in every block of the first pass and in the merge passes.
    require_top_k(Input::ascending, large_size(), {1, 100, 1024});
}

TEST_CASE("NaN ranks after every number and infinities are ordinary values", "[11]") {
    const int n = GENERATE(33, 1009, 4099);
    // k = 1024 > 33: every element comes back, the NaNs last, lowest index first.
    require_top_k(Input::nan_and_infinities, n, {1, 31, 1024});
}

TEST_CASE("large arrays with k up to 32 give the CPU's top k, whatever their order", "[11]") {
    // Large arrays with k <= 32 are where a faster path pays (the reference
    // takes a sampled threshold there: its page says how); sorted, equal and
    // clustered arrays are where a threshold guessed from part of the array
    // lets the most keys through: so many, for the sorted and the equal
    // arrays of 2^22 floats, that they overflow its buffer of candidates.
    // The crowded array lets through fewer than the buffer holds, but too
    // many ties for the end of the path to rank (see make_values): it is
    // made for one size, below 2^21 floats.
    const Input input = GENERATE(Input::random, Input::ascending, Input::all_equal, Input::top_in_one_block,
                                 Input::nan_and_infinities, Input::crowded_at_the_bound);
    const bool overflowing = input == Input::ascending || input == Input::all_equal;
    const int n = input == Input::crowded_at_the_bound ? (1 << 16) + 7
                  : !course::kEmulator                ? (1 << 24) + 7
                  : overflowing                       ? (1 << 22) + 7
                                                      : (1 << 16) + 7;
    require_top_k(input, n, {1, 2, 31, 32});
}
