// ./course show's page (course_emu/analysis_page.hpp) on kernels with planted
// mistakes: a 32-way bank conflict, an uncoalesced store, a race, a missing
// write and a divergent barrier. Each test finds the figure by its data-*
// attributes and counts the highlighted elements inside it, so a page that
// draws the wrong lanes or cells fails, not only one that is missing.
#include "analysis_kernels.hpp"
#include "page_kernels.hpp"

#include <course/catch.hpp>
#include <course/compare.hpp>
#include <course/cuda_check.hpp>
#include <course/device_buffer.hpp>

#include <course_emu/analysis.hpp>
#include <course_emu/analysis_page.hpp>

#include <string>
#include <vector>

namespace {

namespace analysis = course_emu::analysis;

template <class Run>
std::string page_of(Run run) {
    analysis::begin(analysis::Options{true});
    run();
    const analysis::Report report = analysis::end();
    return analysis::html_page(report);
}

std::size_t count(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
    return n;
}

// The first <svg ...> ... </svg> whose opening tag holds every attribute of
// `attributes` (e.g. {"data-figure=\"shared\"", "data-sample=\"worst\""}); empty if none.
std::string figure(const std::string& page, const std::vector<std::string>& attributes) {
    for (auto at = page.find("<svg"); at != std::string::npos; at = page.find("<svg", at + 4)) {
        const std::string tag = page.substr(at, page.find('>', at) - at);
        bool all = true;
        for (const std::string& a : attributes) all = all && tag.find(a) != std::string::npos;
        if (all) return page.substr(at, page.find("</svg>", at) + 6 - at);
    }
    return "";
}

struct ResetDevice {
    ~ResetDevice() { (void)cudaDeviceReset(); }
};

}  // namespace

TEST_CASE("The page draws an unpadded tile's column read as 32 lanes conflicting in one bank, and the padded tile's as none",
          "[analysis][show]") {
    const int n = 64;
    course::DeviceBuffer<float> in(std::vector<float>(n * n, 1.0f)), out(n * n);
    const bool padded = GENERATE(false, true);
    CAPTURE(padded);
    const std::string page = page_of([&] {
        analysis_kernels::transpose_through_tile(in.data(), out.data(), n, padded);
        COURSE_LAUNCH_CHECK();
    });
    const std::string kernel = padded ? "tile_transpose&lt;1&gt;" : "tile_transpose&lt;0&gt;";
    // The tile's column read (analysis_kernels.cu:16), its worst request.
    const std::string read = figure(page, {"data-figure=\"shared\"", "data-kernel=\"" + kernel + "\"",
                                           "data-line=\"16\"", "data-store=\"0\"", "data-sample=\"worst\""});
    REQUIRE(!read.empty());
    CHECK(count(read, "<rect class=\"lane\"") + count(read, "<rect class=\"lane conflict\"") == 32);
    if (padded) {
        CHECK(count(read, "<rect class=\"lane conflict\"") == 0);
        CHECK(count(read, "<rect class=\"bank conflict\"") == 0);
        CHECK(count(read, "<rect class=\"bank used\"") == 32);
        CHECK(read.find("data-cost=\"1\"") != std::string::npos);
    } else {
        // A column of a 32-float-wide tile: all 32 words in one bank.
        CHECK(count(read, "<rect class=\"lane conflict\"") == 32);
        CHECK(count(read, "<rect class=\"bank conflict\"") == 1);
        CHECK(count(read, "<line class=\"wire conflict\"") == 32);
        CHECK(read.find("data-cost=\"32\"") != std::string::npos);
        CHECK(page.find("32-way bank conflict") != std::string::npos);
    }
    // The row write is conflict-free either way.
    const std::string write = figure(page, {"data-figure=\"shared\"", "data-kernel=\"" + kernel + "\"", "data-line=\"12\"",
                                            "data-store=\"1\"", "data-sample=\"worst\""});
    REQUIRE(!write.empty());
    CHECK(count(write, "<rect class=\"lane conflict\"") == 0);
    // The line's text is beside its figure, and the two link to each other.
    CHECK(page.find("out[ty * n + tx] = tile[threadIdx.x][threadIdx.y];") != std::string::npos);
    CHECK(page.find("data-src=\"k0-L16\"") != std::string::npos);
    CHECK(page.find("id=\"k0-L16\"") != std::string::npos);
    CHECK(page.find("id=\"page-status\"") != std::string::npos);
    // Every thread met at the one barrier: nothing parted, nothing stuck.
    const std::string timeline = figure(page, {"data-figure=\"timeline\"", "data-kernel=\"" + kernel + "\""});
    REQUIRE(!timeline.empty());
    CHECK(timeline.find("data-stuck=\"0\" data-parted=\"0\"") != std::string::npos);
    CHECK(count(timeline, "<rect class=\"mark barrier\"") == 32);  // 32 warps, one barrier each
}

TEST_CASE("The page draws a store 128 bytes apart per lane as 32 lanes fetching part-empty sectors", "[analysis][show]") {
    const int n = 256;
    course::DeviceBuffer<float> in(std::vector<float>(n, 1.0f)), out(n * 32);
    const std::string page = page_of([&] {
        page_kernels::scattered_store(in.data(), out.data(), n);
        COURSE_LAUNCH_CHECK();
    });
    const std::string store = figure(page, {"data-figure=\"global\"", "data-kernel=\"scattered_store_kernel\"",
                                            "data-store=\"1\"", "data-sample=\"worst\""});
    REQUIRE(!store.empty());
    // 32 lanes, 32 lines of 128 bytes, a sector each with 4 of its 32 bytes asked for.
    CHECK(store.find("data-cost=\"32\" data-ideal=\"4\"") != std::string::npos);
    CHECK(count(store, "<rect class=\"lane uncoalesced\"") == 32);
    CHECK(count(store, "<rect class=\"sector touched partial\"") == 32);
    CHECK(count(store, "<rect class=\"sector\"") == 3 * 32);
    CHECK(page.find("uncoalesced: 32 sectors touched where 4") != std::string::npos);
    // The load beside it is coalesced: 4 full sectors, nothing red.
    const std::string load = figure(page, {"data-figure=\"global\"", "data-kernel=\"scattered_store_kernel\"",
                                           "data-store=\"0\"", "data-sample=\"worst\""});
    REQUIRE(!load.empty());
    CHECK(count(load, "<rect class=\"lane uncoalesced\"") == 0);
    CHECK(count(load, "<rect class=\"sector touched\"") == 4);
}

TEST_CASE("The page draws 32 lanes adding to one shared bin as 32-way contention, and 32 bins as none",
          "[analysis][show]") {
    const bool one_bin = GENERATE(true, false);
    CAPTURE(one_bin);
    std::vector<int> keys(32);
    for (int i = 0; i < 32; ++i) keys[i] = one_bin ? 7 : i;
    course::DeviceBuffer<int> d_keys(keys), bins(32);
    const std::string page = page_of([&] {
        page_kernels::shared_histogram(d_keys.data(), bins.data());
        COURSE_LAUNCH_CHECK();
    });
    const std::string line = "data-line=\"" + std::to_string(page_kernels::shared_histogram_line()) + "\"";
    const std::string atomics = figure(page, {"data-figure=\"atomic\"", "data-kernel=\"shared_histogram_kernel\"",
                                              line, "data-sample=\"worst\""});
    REQUIRE(!atomics.empty());
    CHECK(count(atomics, "<rect class=\"lane\"") + count(atomics, "<rect class=\"lane conflict\"") == 32);
    if (one_bin) {
        // One word: no broadcast for atomics, the 32 updates are served one after another.
        CHECK(atomics.find("data-cost=\"32\" data-ideal=\"1\"") != std::string::npos);
        CHECK(count(atomics, "<rect class=\"lane conflict\"") == 32);
        CHECK(count(atomics, "<rect class=\"bank conflict\"") == 1);
        CHECK(page.find("32-way contention") != std::string::npos);
    } else {
        CHECK(atomics.find("data-cost=\"1\" data-ideal=\"1\"") != std::string::npos);
        CHECK(count(atomics, "<rect class=\"lane conflict\"") == 0);
        CHECK(count(atomics, "<rect class=\"bank used\"") == 32);
        CHECK(page.find("no contention") != std::string::npos);
    }
    // The loads and stores of the same kernel are still drawn as such, not as atomics.
    CHECK(!figure(page, {"data-figure=\"shared\"", "data-kernel=\"shared_histogram_kernel\""}).empty());
}

TEST_CASE("The page labels who wrote each element and marks those two threads wrote without a barrier as a race",
          "[analysis][show]") {
    const int n = 32;
    course::DeviceBuffer<int> out(n);
    const std::string page = page_of([&] {
        page_kernels::pairs_write_one(out.data(), n);
        COURSE_LAUNCH_CHECK();
    });
    const std::string writers = figure(page, {"data-figure=\"writers\"", "data-kernel=\"pairs_write_one_kernel\""});
    REQUIRE(!writers.empty());
    CHECK(writers.find("data-races=\"32\"") != std::string::npos);
    CHECK(count(writers, "<rect class=\"cell race\"") == 32);
    CHECK(count(writers, "<rect class=\"cell unwritten\"") == 0);
    // Forward schedule: thread 2i + 1 writes element i last.
    CHECK(writers.find("element 5: last written by block 0 thread 11; 2 writers, a race") != std::string::npos);
    CHECK(page.find("global-memory race") != std::string::npos);
}

TEST_CASE("The page draws a wrong output the harness compared, with the element never written in its own colour",
          "[analysis][show]") {
    const int n = 40;
    course::DeviceBuffer<int> out(n);
    out.poison();
    std::vector<int> expected(n);
    for (int i = 0; i < n; ++i) expected[i] = i;
    course::Comparison comparison;
    const std::string page = page_of([&] {
        page_kernels::all_but_last(out.data(), n);
        COURSE_LAUNCH_CHECK();
        course::CompareContext<int> ctx;
        ctx.name = "out";
        comparison = course::compare_exact(expected, out.download(), ctx);
    });
    // The comparison's verdict is the harness's, whatever the page does.
    CHECK(!comparison.ok);
    const std::string drawn = figure(page, {"data-figure=\"output\"", "data-name=\"out\""});
    REQUIRE(!drawn.empty());
    CHECK(drawn.find("data-wrong=\"0\" data-untouched=\"1\"") != std::string::npos);
    CHECK(count(drawn, "<rect class=\"out untouched\"") == 1);
    CHECK(count(drawn, "class=\"out wrong") == 0);
    CHECK(drawn.find("out[39]: expected 39, got ") != std::string::npos);
    CHECK(page.find("in test \"The page draws a wrong output") != std::string::npos);
    // The writer map shows the same hole: element 39 not written.
    const std::string writers = figure(page, {"data-figure=\"writers\"", "data-kernel=\"all_but_last_kernel\""});
    REQUIRE(!writers.empty());
    CHECK(writers.find("data-unwritten=\"1\"") != std::string::npos);
    CHECK(count(writers, "<rect class=\"cell unwritten\"") == 1);
    CHECK(writers.find("element 39: not written by this launch") != std::string::npos);
}

TEST_CASE("Outside an analysis with pictures the harness hands nothing over", "[analysis][show]") {
    CHECK(!course_emu::show::wants_outputs());
    analysis::begin();
    CHECK(!course_emu::show::wants_outputs());
    (void)analysis::end();
}

TEST_CASE("The page's barrier timeline shows where the threads of a divergent barrier parted and still wait",
          "[analysis][show]") {
    ResetDevice reset;
    const std::string page = page_of([&] {
        page_kernels::divergent_barrier(nullptr);  // no thread gets past the barriers to write
        CHECK(cudaDeviceSynchronize() == cudaErrorLaunchFailure);
    });
    const std::string timeline = figure(page, {"data-figure=\"timeline\"", "data-kernel=\"divergent_barrier_kernel\""});
    REQUIRE(!timeline.empty());
    // Forward schedule: thread 0 waits at the first barrier, thread 1 reaches
    // the second and the launch stops; both are still waiting, at different
    // lines, and the other 62 threads never got to a barrier: both marks parted.
    CHECK(timeline.find("data-stuck=\"2\" data-parted=\"2\"") != std::string::npos);
    CHECK(count(timeline, "class=\"mark barrier stuck parted\"") == 2);
    CHECK(count(timeline, "62 threads of the block never got here") == 2);
    const int line = page_kernels::divergent_barrier_line();
    CHECK(timeline.find("thread 0, sync 1: barrier at page_kernels.cu:" + std::to_string(line)) != std::string::npos);
    CHECK(timeline.find("thread 1, sync 1: barrier at page_kernels.cu:" + std::to_string(line + 2)) != std::string::npos);
    CHECK(page.find("still waiting there when the block stopped") != std::string::npos);
}
