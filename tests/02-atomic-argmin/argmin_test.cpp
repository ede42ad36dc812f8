// Lesson 02 tests: argmin and argmax through a packed (value, index) word
// updated with atomicCAS, against a CPU loop.
#include <argmin.hpp>

#include "cpu_reference.hpp"

#include <course/backend.hpp>
#include <course/catch.hpp>
#include <course/compare.hpp>
#include <course/device_buffer.hpp>
#include <course/inputs.hpp>
#include <course/schedules.hpp>

#include <algorithm>
#include <cstddef>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace {

using course::LaunchShape;
using lesson02::host::pack_value_index;
using lesson02::host::unpack_value_index;
using lesson02::reference::Extremum;

using Launcher = void (*)(LaunchShape, int, const float*, unsigned long long*);

// Which search a test runs: the launcher, its empty word, its CPU reference.
struct Search {
    const char* name;  // "argmin" or "argmax"
    Launcher launch;
    unsigned long long empty;
    Extremum (*reference)(const std::vector<float>&);
};

const Search kArgmin{"argmin", lesson02::launch_argmin, lesson02::kEmptyArgmin, lesson02::reference::argmin};
const Search kArgmax{"argmax", lesson02::launch_argmax, lesson02::kEmptyArgmax, lesson02::reference::argmax};

std::string show_packed(unsigned long long packed) {
    const auto [value, index] = unpack_value_index(packed);
    std::ostringstream out;
    out.precision(9);
    out << "(value " << value << ", index " << index << ")";
    return out.str();
}

// Runs one search over `values` with `shape`, starting from `initial`, and
// returns the packed word the device left.
unsigned long long run_search(const Search& search, LaunchShape shape, const std::vector<float>& values,
                              unsigned long long initial) {
    course::DeviceBuffer<float> device_values(values);
    course::DeviceBuffer<unsigned long long> result(std::vector<unsigned long long>{initial});
    search.launch(shape, static_cast<int>(values.size()), device_values.data(), result.data());
    COURSE_LAUNCH_CHECK();
    return result.download()[0];
}

// Judges a fresh search's result like a teacher: the value must be the CPU's
// extremum, the index must hold it, and the two must belong together.
course::Comparison judge(const Search& search, const std::vector<float>& values, unsigned long long got) {
    std::ostringstream out;
    const Extremum expected = search.reference(values);
    if (values.empty()) {
        if (got == search.empty) return {};
        out << "for n = 0 the result must keep the empty word " << show_packed(search.empty) << ", got "
            << show_packed(got) << "\n  likely cause: something is written even when there is no element";
        return {false, out.str()};
    }
    const auto [value, index] = unpack_value_index(got);
    const std::string where = "the " + std::string(search.name) + " of " + std::to_string(values.size()) +
                              (values.size() == 1 ? " element is " : " elements is ") + show_packed(pack_value_index(expected.value, expected.indices[0]));
    if (got == search.empty) {
        out << "the result still holds the empty word " << show_packed(got) << ", but " << where
            << "\n  likely cause: no update reached memory: does the kernel loop over the elements, and does the "
               "winning atomicCAS store your packed pair?";
        return {false, out.str()};
    }
    if (index < 0 || static_cast<std::size_t>(index) >= values.size()) {
        out << "the result " << show_packed(got) << " has an index outside the array [0, " << values.size()
            << "); " << where
            << "\n  likely cause: value and index are packed or unpacked in the wrong halves of the word";
        return {false, out.str()};
    }
    if (!(value == expected.value)) {
        out << "the result " << show_packed(got) << " does not hold the " << search.name << "'s value: " << where;
        if (values[static_cast<std::size_t>(index)] == value) {
            out << "\n  likely cause: a better pair was overwritten or never stored. Is every element visited "
                   "(a grid-stride loop over the whole grid)? Is the update one atomicCAS loop that retries "
                   "with the value the CAS returned, rather than a separate read and write?";
        } else {
            out << "\n  likely cause: the word is not read back as it was packed (the value in the high 32 "
                   "bits, the index in the low 32)";
        }
        return {false, out.str()};
    }
    if (!(values[static_cast<std::size_t>(index)] == value)) {
        out << "the result " << show_packed(got) << " has the right value, but values[" << index << "] is "
            << values[static_cast<std::size_t>(index)] << ": the value and the index do not belong together. "
            << where << "\n  likely cause: value and index written separately instead of in one 64-bit word";
        return {false, out.str()};
    }
    return {};
}

// A size larger than the number of threads the student's own grid launches,
// so that every thread must loop at least twice.
int size_beyond_the_grid() {
    const LaunchShape shape = lesson02::argmin_launch_shape(1 << 22);
    return static_cast<int>(std::min<unsigned long long>(2 * shape.total_threads() + 1, 1u << 23));
}

std::vector<float> random_input(int n, float lo, float hi, const std::string& label) {
    return course::random_values<float>(static_cast<std::size_t>(n), lo, hi,
                                        label + " n=" + std::to_string(n) + " [" + std::to_string(lo) + ", " +
                                            std::to_string(hi) + ")");
}

struct Range {
    float lo, hi;
};

}  // namespace

TEST_CASE("argmin matches the CPU at every edge size and value range", "[02]") {
    std::vector<int> sizes = course::edge_sizes();
    sizes.push_back(size_beyond_the_grid());
    const int n = GENERATE_COPY(from_range(sizes));
    const Range range = GENERATE(Range{0.0f, 1.0f}, Range{-1.0e6f, 1.0e6f}, Range{-50.0f, -10.0f});
    const LaunchShape shape = lesson02::argmin_launch_shape(n);
    CAPTURE(n, range.lo, range.hi, describe(shape), course::seed());

    const std::vector<float> values = random_input(n, range.lo, range.hi, "argmin");
    COURSE_REQUIRE_MATCH(judge(kArgmin, values, run_search(kArgmin, shape, values, kArgmin.empty)));
}

TEST_CASE("argmax, the mirror image, matches the CPU at every edge size", "[02]") {
    std::vector<int> sizes = course::edge_sizes();
    sizes.push_back(size_beyond_the_grid());
    const int n = GENERATE_COPY(from_range(sizes));
    const LaunchShape shape = lesson02::argmin_launch_shape(n);
    CAPTURE(n, describe(shape), course::seed());

    const std::vector<float> values = random_input(n, -100.0f, 100.0f, "argmax");
    COURSE_REQUIRE_MATCH(judge(kArgmax, values, run_search(kArgmax, shape, values, kArgmax.empty)));
}

TEST_CASE("the extremum is found at the first and at the last index", "[02]") {
    const int n = GENERATE_COPY(1, 33, 257, 1009, size_beyond_the_grid());
    const bool at_end = GENERATE(false, true);
    const LaunchShape shape = GENERATE_COPY(lesson02::argmin_launch_shape(n), LaunchShape{3, 64});
    CAPTURE(n, at_end ? "at n-1" : "at 0", describe(shape), course::seed());

    std::vector<float> values = random_input(n, 1.0f, 2.0f, "first/last");
    const std::size_t position = at_end ? static_cast<std::size_t>(n - 1) : 0;
    values[position] = 0.5f;
    COURSE_REQUIRE_MATCH(judge(kArgmin, values, run_search(kArgmin, shape, values, kArgmin.empty)));
    values[position] = 3.0f;
    COURSE_REQUIRE_MATCH(judge(kArgmax, values, run_search(kArgmax, shape, values, kArgmax.empty)));
}

TEST_CASE("a grid smaller than the array still reaches every element", "[02]") {
    // 20 and 48 threads: blocks whose last warp is partial.
    const LaunchShape shape = GENERATE(LaunchShape{1, 1}, LaunchShape{2, 32}, LaunchShape{3, 64}, LaunchShape{4, 256},
                                       LaunchShape{3, 20}, LaunchShape{2, 48});
    const int n = GENERATE(257, 1009, 5000);
    CAPTURE(n, describe(shape), course::seed());

    // The minimum sits near the end, where only looping threads reach.
    std::vector<float> values = random_input(n, 0.0f, 1.0f, "small grid");
    values[static_cast<std::size_t>(n - 2)] = -1.0f;
    COURSE_REQUIRE_MATCH(judge(kArgmin, values, run_search(kArgmin, shape, values, kArgmin.empty)));
}

TEST_CASE("an array that starts 1 to 3 floats past a 16-byte boundary is searched whole", "[02]") {
    // cudaMalloc returns 256-byte aligned memory, but the contract takes any
    // pointer into an allocation (a search over part of an array). A kernel
    // that reads float4 must not assume the first element is 16-byte aligned.
    // The floats before the array are smaller than every element: reading
    // them is a wrong answer too.
    const int offset = GENERATE(1, 2, 3);
    const int n = GENERATE(1, 2, 3, 5, 33, 1009);
    const bool at_end = GENERATE(false, true);
    const LaunchShape shape = GENERATE_COPY(lesson02::argmin_launch_shape(n), LaunchShape{2, 32});
    CAPTURE(offset, n, at_end ? "extremum at n-1" : "extremum at 0", describe(shape), course::seed());

    std::vector<float> values = random_input(n, 1.0f, 2.0f, "unaligned start");
    const std::size_t position = at_end ? static_cast<std::size_t>(n - 1) : 0;
    values[position] = 0.5f;
    std::vector<float> padded(static_cast<std::size_t>(offset), -100.0f);
    padded.insert(padded.end(), values.begin(), values.end());
    course::DeviceBuffer<float> device_values(padded);
    course::DeviceBuffer<unsigned long long> result(std::vector<unsigned long long>{kArgmin.empty});
    kArgmin.launch(shape, n, device_values.data() + offset, result.data());
    COURSE_LAUNCH_CHECK();
    COURSE_REQUIRE_MATCH(judge(kArgmin, values, result.download()[0]));
}

TEST_CASE("repeated minima: any index holding the minimum is accepted", "[02]") {
    // The experiment of Seo's argmin article (docs/sources.md): 50,000
    // integers from 0 to 10,000 stored as floats, so several elements share
    // the minimum. Lesson 02 accepts any of them (lesson 03 makes the choice
    // deterministic).
    const int n = 50000;
    const std::vector<int> integers = course::random_values<int>(n, 0, 10000, "repeated minima");
    const std::vector<float> values(integers.begin(), integers.end());
    const LaunchShape shape = GENERATE(lesson02::argmin_launch_shape(50000), LaunchShape{2, 32});
    CAPTURE(n, describe(shape), course::seed(), lesson02::reference::argmin(values).indices.size());

    COURSE_REQUIRE_MATCH(judge(kArgmin, values, run_search(kArgmin, shape, values, kArgmin.empty)));
    COURSE_REQUIRE_MATCH(judge(kArgmax, values, run_search(kArgmax, shape, values, kArgmax.empty)));
}

TEST_CASE("all-equal input, every thread contending, gives the value and one of its indices", "[02]") {
    const int n = GENERATE(1009, 5000);
    const LaunchShape shape = GENERATE_COPY(lesson02::argmin_launch_shape(n), LaunchShape{4, 256});
    CAPTURE(n, describe(shape), course::seed());

    const std::vector<float> values(static_cast<std::size_t>(n), 7.25f);
    course::for_each_schedule([&] {
        COURSE_REQUIRE_MATCH(judge(kArgmin, values, run_search(kArgmin, shape, values, kArgmin.empty)));
    });
}

TEST_CASE("contended updates keep the extremum under every schedule", "[02]") {
    // Descending input: in index order every element beats all before it,
    // so as many threads as possible try to replace the word at once. A
    // read-compare-write that is not one atomic step loses some of them.
    const int n = 5000;
    const LaunchShape shape = GENERATE(lesson02::argmin_launch_shape(5000), LaunchShape{4, 256}, LaunchShape{2, 32});
    const int order = GENERATE(0, 1, 2);  // descending, ascending, random
    CAPTURE(n, describe(shape), order, course::seed());

    std::vector<float> values = random_input(n, -1.0f, 1.0f, "contention");
    if (order == 0) std::sort(values.begin(), values.end(), [](float a, float b) { return a > b; });
    if (order == 1) std::sort(values.begin(), values.end());
    course::for_each_schedule([&] {
        COURSE_REQUIRE_MATCH(judge(kArgmin, values, run_search(kArgmin, shape, values, kArgmin.empty)));
        COURSE_REQUIRE_MATCH(judge(kArgmax, values, run_search(kArgmax, shape, values, kArgmax.empty)));
    });
}

TEST_CASE("the empty word stays for n = 0 and gives way to any element, even +inf", "[02]") {
    const LaunchShape shape = GENERATE(lesson02::argmin_launch_shape(0), LaunchShape{1, 1});
    CAPTURE(describe(shape));

    SECTION("n = 0 changes nothing") {
        const std::vector<float> none;
        const unsigned long long fresh = run_search(kArgmin, shape, none, kArgmin.empty);
        INFO("a fresh argmin over no elements must still hold kEmptyArgmin (value +inf, index -1), got "
             << show_packed(fresh));
        CHECK(fresh == lesson02::kEmptyArgmin);
        const unsigned long long earlier = pack_value_index(-5.0f, 3);
        const unsigned long long kept = run_search(kArgmin, shape, none, earlier);
        INFO("a result holding " << show_packed(earlier) << " must be left alone for n = 0, got "
                                 << show_packed(kept));
        CHECK(kept == earlier);
    }
    SECTION("one element replaces the empty word, whatever its value") {
        for (const float value : {0.0f, -3.5f, std::numeric_limits<float>::infinity(),
                                  -std::numeric_limits<float>::infinity()}) {
            const std::vector<float> one{value};
            CAPTURE(value);
            COURSE_REQUIRE_MATCH(judge(kArgmin, one, run_search(kArgmin, shape, one, kArgmin.empty)));
            COURSE_REQUIRE_MATCH(judge(kArgmax, one, run_search(kArgmax, shape, one, kArgmax.empty)));
        }
    }
}

TEST_CASE("a stored pair is replaced only by a smaller value", "[02]") {
    const int n = 1009;
    const LaunchShape shape = lesson02::argmin_launch_shape(n);
    CAPTURE(n, describe(shape), course::seed());
    const std::vector<float> values = random_input(n, 0.0f, 1.0f, "stored pair");

    // Folding more elements into an earlier result: a smaller stored value
    // stays, a larger one gives way to the array's minimum.
    const unsigned long long smaller = pack_value_index(-2.0f, 123456);
    const unsigned long long kept = run_search(kArgmin, shape, values, smaller);
    INFO("the result held " << show_packed(smaller) << ", smaller than every element, but became "
                            << show_packed(kept) << ": only a strictly smaller value may replace the stored pair");
    CHECK(kept == smaller);
    const unsigned long long larger = pack_value_index(2.0f, 123456);
    COURSE_REQUIRE_MATCH(judge(kArgmin, values, run_search(kArgmin, shape, values, larger)));
}

TEST_CASE("the launch shape is valid for every size", "[02]") {
    const int n = GENERATE_COPY(from_range(course::edge_sizes()));
    const LaunchShape shape = lesson02::argmin_launch_shape(n);
    CAPTURE(n, describe(shape));
    CHECK(shape.blocks >= 1u);
    CHECK(shape.threads_per_block >= 1u);
    CHECK(shape.threads_per_block <= 1024u);
}

TEST_CASE("the launch shape is sized from the GPU, not from n", "[02]") {
    const int n = 1 << 22;
    const int sms = course::sm_count();
    const LaunchShape shape = lesson02::argmin_launch_shape(n);
    CAPTURE(n, sms, describe(shape));
    INFO("a large array should get at least one block per SM and fewer threads than elements, so threads loop");
    CHECK(shape.blocks >= static_cast<unsigned>(sms));
    CHECK(shape.total_threads() < static_cast<unsigned long long>(n));
}

#ifdef __CUDACC_EMULATOR__
TEST_CASE("an uncontended winning update issues exactly one atomicCAS", "[02][emu-only]") {
    // One thread, one element: nobody else touches the word, so the first CAS
    // must succeed, and the loop must notice that from what atomicCAS
    // returned. The emulator counts the CAS of each launch.
    const std::vector<float> one{3.5f};
    SECTION("a value that beats the stored pair: one CAS") {
        const unsigned long long got = run_search(kArgmin, LaunchShape{1, 1}, one, kArgmin.empty);
        const unsigned long long cas = course_emu::last_launch_atomic_counts().cas;
        CAPTURE(show_packed(got), cas);
        COURSE_REQUIRE_MATCH(judge(kArgmin, one, got));
        INFO("an uncontended win issued " << cas << " atomicCAS; it needs exactly 1. "
             << (cas == 0 ? "Is the pair stored with atomicCAS at all?"
                          : "After a successful CAS, atomicCAS returns the *previous* pair, which your value "
                            "still beats: compare the returned word with the one you assumed (the "
                            "old/assumed loop) instead of re-testing the value."));
        CHECK(cas == 1u);
    }
    SECTION("a value that loses to the stored pair: no CAS") {
        const unsigned long long earlier = pack_value_index(1.0f, 99);
        const unsigned long long got = run_search(kArgmin, LaunchShape{1, 1}, one, earlier);
        const unsigned long long cas = course_emu::last_launch_atomic_counts().cas;
        INFO("the stored pair " << show_packed(earlier) << " beats 3.5, yet " << cas
                                << " atomicCAS were issued and the result is " << show_packed(got)
                                << ": compare before you CAS");
        CHECK(got == earlier);
        CHECK(cas == 0u);
    }
}
#endif
