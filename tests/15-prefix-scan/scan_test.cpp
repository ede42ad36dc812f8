// Lesson 15 tests: each stage of the scan on its own (the warp's segments of
// 32, the block's segments of 1024, then the device-wide reduce-then-scan and
// single-pass scans of ints and floats) against a CPU scan, at the edge sizes,
// around the tiles and beyond the grid, under every emulator schedule (or
// repeatedly on a GPU), and with blocks running side by side.
#include <scan.hpp>

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
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace {

// The "large" size: 2^24 + 3 on a GPU (4097 tiles of 4096, and tiles that
// run while others look back). On the emulator, where each check runs under
// five schedules, 70001 (18 tiles of the reference's 4096, 274 of 256).
constexpr std::size_t kLarge = course::kEmulator ? 70001 : (std::size_t{1} << 24) + 3;

// The edge sizes, and around a segment or tile of `unit` elements.
std::vector<std::size_t> sizes_around(std::size_t unit) {
    std::vector<std::size_t> sizes;
    for (const int n : course::edge_sizes()) sizes.push_back(static_cast<std::size_t>(n));
    for (const std::size_t n : {unit - 1, unit, unit + 1, 3 * unit + 5, kLarge}) sizes.push_back(n);
    return sizes;
}

// The device-wide scans: around 4096 (the reference's tile) and 256 (the smallest allowed).
std::vector<std::size_t> device_sizes() {
    std::vector<std::size_t> sizes = sizes_around(4096);
    for (const std::size_t n : {std::size_t{511}, std::size_t{513}, std::size_t{65537}}) sizes.push_back(n);
    return sizes;
}

// What a scan of ints is given and where: device buffers for one size.
template <class T>
struct ScanBuffers {
    explicit ScanBuffers(const std::vector<T>& input)
        : in(input), out(input.size()), workspace(lesson15::scan_workspace_bytes(input.size())) {}
    course::DeviceBuffer<T> in;
    course::DeviceBuffer<T> out;
    course::DeviceBuffer<unsigned char> workspace;

    // Poison the output and fill the workspace with garbage, as a caller may leave it.
    void prepare() {
        out.poison();
        workspace.upload(std::vector<unsigned char>(workspace.size(), 0xA5));
    }
};

// The first line of a failure: what was called, on what.
std::string header(const std::string& call, std::size_t n, const char* type) {
    std::ostringstream out;
    out << call << " over n = " << n << " " << type << " values (COURSE_SEED=" << course::seed() << ")";
    return out.str();
}

// Compares an int scan exactly; when it differs, says what the difference most likely means.
course::Comparison check_int_scan(const std::vector<int>& in, const std::vector<int>& expected,
                                  const std::vector<int>& got, const std::string& what, std::size_t segment) {
    course::CompareContext<int> ctx;
    ctx.name = "out";
    course::Comparison cmp = course::compare_exact(expected, got, ctx);
    if (cmp.ok) return cmp;
    bool inclusive = true;
    std::size_t first = got.size();
    for (std::size_t i = 0; i < got.size(); ++i) {
        if (got[i] == expected[i]) continue;
        if (first == got.size()) first = i;
        if (static_cast<std::uint32_t>(got[i]) !=
            static_cast<std::uint32_t>(expected[i]) + static_cast<std::uint32_t>(in[i])) {
            inclusive = false;
        }
    }
    std::ostringstream out;
    out << what << ":\n  " << cmp.message;
    if (inclusive) {
        out << "\n  likely cause: every wrong out[i] is the expected value plus in[i]: that is the inclusive scan. "
               "The exclusive scan leaves in[i] out: out[0] of a scan is 0, and each element takes the sum of "
               "those before it (from a warp's inclusive scan, take the left neighbour's value with "
               "__shfl_up_sync(mask, v, 1), lane 0 taking 0).";
    } else if (first < got.size() && got[first] == 0 && first % segment != 0) {
        out << "\n  likely cause: out[" << first
            << "] is 0, as if a new scan started there: the sum of everything before that point (the "
               "carry of the tiles before it: pass 2's scanned tile sum, or the look-back's prefix) is not added.";
    } else if (cmp.message.find("likely cause") == std::string::npos) {
        out << "\n  (an element is wrong under some schedules only? then threads race: a __syncthreads() "
               "is missing between a step that writes shared memory and the next that reads it.)";
    }
    return {false, out.str()};
}

// Compares a float scan within the lesson's bound (cpu_reference.hpp, float_scan_tolerance).
course::Comparison check_float_scan(const std::vector<float>& in, const lesson15_reference::FloatPrefixes& exact,
                                    const std::vector<float>& got, const std::string& what) {
    std::vector<float> expected(exact.sum.size());
    for (std::size_t i = 0; i < expected.size(); ++i) expected[i] = static_cast<float>(exact.sum[i]);
    const std::size_t n = in.size();
    course::CompareContext<float> ctx;
    ctx.name = "out";
    course::Comparison cmp = course::compare(
        expected, got,
        [&](std::size_t i, float, float g) {
            return std::fabs(static_cast<long double>(g) - exact.sum[i]) <=
                   lesson15_reference::float_scan_tolerance(n, exact.magnitude[i]);
        },
        ctx);
    if (cmp.ok) return cmp;
    std::size_t first = 0;
    while (first < n && std::fabs(static_cast<long double>(got[first]) - exact.sum[first]) <=
                            lesson15_reference::float_scan_tolerance(n, exact.magnitude[first])) {
        ++first;
    }
    std::ostringstream out;
    out << what << ":\n  " << cmp.message << "\n  at out[" << first << "] the bound is +-"
        << static_cast<double>(lesson15_reference::float_scan_tolerance(n, exact.magnitude[first]))
        << " ((64 + n/128) float roundings of |in[0]| + ... + |in[" << first << " - 1]|)";
    if (first < n && std::fabs(static_cast<long double>(got[first]) - (exact.sum[first] + in[first])) <=
                         lesson15_reference::float_scan_tolerance(n, exact.magnitude[first] + std::fabs(in[first]))) {
        out << "\n  likely cause: out[" << first << "] is the sum up to and including in[" << first
            << "]: that is the inclusive scan; the exclusive one leaves in[i] out.";
    } else if (got[first] == 0.0f && first > 0) {
        out << "\n  likely cause: out[" << first << "] is 0, as if a new scan started there: is the sum of the "
               "tiles before it (the carry, or the look-back's prefix) added?";
    }
    return {false, out.str()};
}

using IntScan = std::function<void(const int*, int*, std::size_t, void*)>;
using FloatScan = std::function<void(const float*, float*, std::size_t, void*)>;

// Runs `scan` on random ints of every size, under every schedule, against the CPU's scan by `segment`.
void check_int_sizes(const std::string& call, const IntScan& scan, const std::vector<std::size_t>& sizes,
                     std::size_t segment) {
    for (const std::size_t n : sizes) {
        CAPTURE(n);
        const std::vector<int> in = course::random_values<int>(n, -1000, 1000, call + " " + std::to_string(n));
        const std::vector<int> expected = lesson15_reference::exclusive_scan(in, segment);
        ScanBuffers<int> buffers(in);
        course::for_each_schedule([&] {
            buffers.prepare();
            scan(buffers.in.data(), buffers.out.data(), n, buffers.workspace.data());
            COURSE_LAUNCH_CHECK();
            COURSE_REQUIRE_MATCH(check_int_scan(in, expected, buffers.out.download(), header(call, n, "int"), segment));
        });
    }
}

// The same for floats, uniform in [-1, 1) (sums that cancel) or [0, 1) (sums that grow).
void check_float_sizes(const std::string& call, const FloatScan& scan, const std::vector<std::size_t>& sizes) {
    for (const float lo : {-1.0f, 0.0f}) {
        for (const std::size_t n : sizes) {
            CAPTURE(n, lo);
            const std::vector<float> in =
                course::random_values<float>(n, lo, 1.0f, call + " " + std::to_string(n) + " " + std::to_string(lo));
            const lesson15_reference::FloatPrefixes exact = lesson15_reference::exclusive_scan_accurate(in);
            ScanBuffers<float> buffers(in);
            course::for_each_schedule([&] {
                buffers.prepare();
                scan(buffers.in.data(), buffers.out.data(), n, buffers.workspace.data());
                COURSE_LAUNCH_CHECK();
                COURSE_REQUIRE_MATCH(check_float_scan(in, exact, buffers.out.download(), header(call, n, "float")));
            });
        }
    }
}

const std::size_t kWhole = std::numeric_limits<std::size_t>::max();  // one segment: the whole array

}  // namespace

TEST_CASE("the warp scan gives each segment of 32 elements its exclusive prefix sums, at every size", "[15]") {
    check_int_sizes(
        "launch_warp_scan", [](const int* in, int* out, std::size_t n, void*) { lesson15::launch_warp_scan(in, out, n); },
        sizes_around(lesson15::kWarpSegment), lesson15::kWarpSegment);
}

TEST_CASE("the block scan gives each segment of 1024 elements its exclusive prefix sums, under every schedule",
          "[15]") {
    check_int_sizes(
        "launch_block_scan",
        [](const int* in, int* out, std::size_t n, void*) { lesson15::launch_block_scan(in, out, n); },
        sizes_around(lesson15::kBlockSegment), lesson15::kBlockSegment);
}

TEST_CASE("reduce-then-scan gives the exclusive scan of a whole int array of any length", "[15]") {
    check_int_sizes(
        "exclusive_scan_reduce_then_scan",
        [](const int* in, int* out, std::size_t n, void* ws) { lesson15::exclusive_scan_reduce_then_scan(in, out, n, ws); },
        device_sizes(), kWhole);
}

TEST_CASE("reduce-then-scan of floats is within the rounding bound of a compensated CPU scan", "[15]") {
    check_float_sizes(
        "exclusive_scan_reduce_then_scan",
        [](const float* in, float* out, std::size_t n, void* ws) {
            lesson15::exclusive_scan_reduce_then_scan(in, out, n, ws);
        },
        device_sizes());
}

TEST_CASE("the single-pass scan with decoupled look-back gives the exclusive scan of a whole int array", "[15]") {
    check_int_sizes(
        "exclusive_scan_single_pass",
        [](const int* in, int* out, std::size_t n, void* ws) { lesson15::exclusive_scan_single_pass(in, out, n, ws); },
        device_sizes(), kWhole);
}

TEST_CASE("the single-pass scan of floats is within the rounding bound of a compensated CPU scan", "[15]") {
    check_float_sizes(
        "exclusive_scan_single_pass",
        [](const float* in, float* out, std::size_t n, void* ws) { lesson15::exclusive_scan_single_pass(in, out, n, ws); },
        device_sizes());
}

// Under for_each_schedule the emulator runs one block at a time, so every
// tile a look-back reaches has finished. Here blocks run side by side (three
// workers on the emulator, in every block order; the whole GPU, 20 times),
// so look-backs meet tiles that have published only their aggregate, or
// nothing yet, and must wait or go on looking back.
TEST_CASE("the single-pass scan stays right while many tiles are in flight at once", "[15]") {
    const std::size_t n = course::kEmulator ? 200003 : (std::size_t{1} << 26) + 7;
    const std::vector<int> in = course::random_values<int>(n, -1000, 1000, "in flight");
    const std::vector<int> expected = lesson15_reference::exclusive_scan(in, kWhole);
    ScanBuffers<int> buffers(in);
    const auto run = [&](const std::string& how) {
        INFO(how);
        buffers.prepare();
        lesson15::exclusive_scan_single_pass(buffers.in.data(), buffers.out.data(), n, buffers.workspace.data());
        COURSE_LAUNCH_CHECK();
        COURSE_REQUIRE_MATCH(check_int_scan(in, expected, buffers.out.download(),
                                            header("exclusive_scan_single_pass", n, "int"), kWhole));
    };
#ifdef __CUDACC_EMULATOR__
    using Kind = course_emu::Schedule::Kind;
    struct Restore {
        Restore() { course_emu::set_workers(3); }
        ~Restore() {
            course_emu::set_schedule({});
            course_emu::set_workers(0);
        }
    } restore;
    for (const course_emu::Schedule s :
         {course_emu::Schedule{Kind::forward, 0}, course_emu::Schedule{Kind::reverse, 0},
          course_emu::Schedule{Kind::random, 7}}) {
        course_emu::set_schedule(s);
        run(std::string("3 emulator workers, schedule ") + course_emu::schedule_name(s));
    }
#else
    for (int repetition = 1; repetition <= course::kGpuRepetitions; ++repetition) {
        run("GPU run " + std::to_string(repetition) + " of " + std::to_string(course::kGpuRepetitions));
    }
#endif
}
