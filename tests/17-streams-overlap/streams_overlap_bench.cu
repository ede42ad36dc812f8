// Lesson 17 benchmark (GPU only): copy 2^26 unsigned ints (256 MiB) to the
// device, transform them, copy them back, with pinned host memory. The work
// per element is calibrated first so that the kernel takes about as long as
// the copy in (and the copy out, which runs on its own copy engine, at about
// the same speed): the balanced case, where overlapping the three steps can
// at best make the pipeline three times faster. Rows: the serial version in
// the default stream (the baseline the ratio column compares with), the
// pipelined version with several chunk and stream counts, and the pipelined
// version handed pageable (std::vector) host memory, which cannot overlap.
// Every variant's output is checked against the CPU on a sample of elements
// (every 997th and the last 1000) before it is timed.
//
// It also writes a timeline figure (<output>-timeline.svg): one instrumented
// run of the pipeline and one of the serial version, with events recorded
// after every step of every chunk.
//
//   lesson17_bench [output.csv]
#include <streams_overlap.hpp>

#include <course/backend.hpp>
#include <course/bench.hpp>
#include <course/device_buffer.hpp>
#include <course/inputs.hpp>
#include <course/pinned_buffer.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

namespace {

constexpr unsigned kPoison = 0xDEADBEEFu;

// Median time of `run` in milliseconds (CUDA events in stream 0; `run` synchronises its own work).
float median_ms(const std::function<void()>& run, int repetitions = 7) {
    cudaEvent_t start = nullptr, stop = nullptr;
    COURSE_CUDA_CHECK(cudaEventCreate(&start));
    COURSE_CUDA_CHECK(cudaEventCreate(&stop));
    run();  // warm-up
    std::vector<float> ms;
    for (int i = 0; i < repetitions; ++i) {
        COURSE_CUDA_CHECK(cudaEventRecord(start));
        run();
        COURSE_CUDA_CHECK(cudaEventRecord(stop));
        COURSE_CUDA_CHECK(cudaEventSynchronize(stop));
        float elapsed = 0;
        COURSE_CUDA_CHECK(cudaEventElapsedTime(&elapsed, start, stop));
        ms.push_back(elapsed);
    }
    COURSE_CUDA_CHECK(cudaEventDestroy(start));
    COURSE_CUDA_CHECK(cudaEventDestroy(stop));
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

// One bar of the timeline: a step of a chunk on one engine, in ms from the start.
struct Bar {
    int lane;  // 0: copy in, 1: kernel, 2: copy out
    int chunk;
    int stream;
    float start, end;
};

// Runs the pipeline once with events after each step of each chunk and
// returns its bars. Each bar ends at its measured event; it starts at the
// later of the previous step's end in its stream and the previous bar's end
// on the same engine (one copy engine each way; the kernels fill the GPU, so
// they take turns too).
std::vector<Bar> timed_pipeline(const lesson17::PipelineBuffers& b, unsigned work, int chunks, int streams) {
    std::vector<cudaStream_t> stream(static_cast<std::size_t>(streams));
    for (cudaStream_t& s : stream) COURSE_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaEvent_t origin = nullptr;
    COURSE_CUDA_CHECK(cudaEventCreate(&origin));
    std::vector<cudaEvent_t> done(static_cast<std::size_t>(chunks) * 3);
    for (cudaEvent_t& e : done) COURSE_CUDA_CHECK(cudaEventCreate(&e));
    COURSE_CUDA_CHECK(cudaDeviceSynchronize());
    COURSE_CUDA_CHECK(cudaEventRecord(origin, stream[0]));
    for (cudaStream_t s : stream) COURSE_CUDA_CHECK(cudaStreamWaitEvent(s, origin, 0));
    const std::size_t chunk = (b.n + static_cast<std::size_t>(chunks) - 1) / static_cast<std::size_t>(chunks);
    for (int c = 0; c < chunks; ++c) {
        const std::size_t first = static_cast<std::size_t>(c) * chunk;
        const std::size_t count = std::min(chunk, b.n - first);
        cudaStream_t s = stream[static_cast<std::size_t>(c % streams)];
        COURSE_CUDA_CHECK(cudaMemcpyAsync(b.device_in + first, b.host_in + first, count * sizeof(unsigned),
                                          cudaMemcpyHostToDevice, s));
        COURSE_CUDA_CHECK(cudaEventRecord(done[3 * c], s));
        lesson17::launch_transform(b.device_in + first, b.device_out + first, count, work, s);
        COURSE_CUDA_CHECK(cudaEventRecord(done[3 * c + 1], s));
        COURSE_CUDA_CHECK(cudaMemcpyAsync(b.host_out + first, b.device_out + first, count * sizeof(unsigned),
                                          cudaMemcpyDeviceToHost, s));
        COURSE_CUDA_CHECK(cudaEventRecord(done[3 * c + 2], s));
    }
    COURSE_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<Bar> bars;
    float engine_end[3] = {0, 0, 0};
    for (int c = 0; c < chunks; ++c) {
        float previous = 0;  // the end of this chunk's previous step
        for (int lane = 0; lane < 3; ++lane) {
            float end = 0;
            COURSE_CUDA_CHECK(cudaEventElapsedTime(&end, origin, done[3 * c + lane]));
            const float start = std::min(end, std::max(previous, engine_end[lane]));
            bars.push_back({lane, c, c % streams, start, end});
            engine_end[lane] = end;
            previous = end;
        }
    }
    for (cudaEvent_t e : done) COURSE_CUDA_CHECK(cudaEventDestroy(e));
    COURSE_CUDA_CHECK(cudaEventDestroy(origin));
    for (cudaStream_t s : stream) COURSE_CUDA_CHECK(cudaStreamDestroy(s));
    return bars;
}

// Writes the two timelines (pipelined above, serial below) as an SVG.
void write_timeline(const std::string& path, const std::vector<Bar>& pipelined, const std::vector<Bar>& serial,
                    int chunks, int streams, const std::string& device) {
    float total = 0;
    for (const Bar& bar : serial) total = std::max(total, bar.end);
    for (const Bar& bar : pipelined) total = std::max(total, bar.end);
    const double left = 150, width = 760, lane_h = 26, top = 60;
    const auto x = [&](float ms) { return left + width * ms / total; };
    const char* colours[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#b07aa1", "#76b7b2", "#edc948", "#9c755f"};
    const char* lanes[] = {"copy in (H2D)", "kernel", "copy out (D2H)"};
    std::ofstream svg(path);
    svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"940\" height=\"330\" font-family=\"sans-serif\" "
           "font-size=\"12\">\n<rect width=\"940\" height=\"330\" fill=\"white\"/>\n";
    svg << "<text x=\"10\" y=\"20\" font-size=\"14\" font-weight=\"bold\">Lesson 17: measured timeline, " << chunks
        << " chunks over " << streams << " streams vs serial (" << device << ")</text>\n";
    const auto draw = [&](const std::vector<Bar>& bars, double y0, const std::string& title, bool by_stream) {
        svg << "<text x=\"10\" y=\"" << y0 - 8 << "\" font-weight=\"bold\">" << title << "</text>\n";
        for (int lane = 0; lane < 3; ++lane) {
            const double y = y0 + lane * lane_h;
            svg << "<text x=\"10\" y=\"" << y + 17 << "\">" << lanes[lane] << "</text>\n";
            svg << "<line x1=\"" << left << "\" y1=\"" << y + lane_h - 2 << "\" x2=\"" << left + width << "\" y2=\""
                << y + lane_h - 2 << "\" stroke=\"#ddd\"/>\n";
        }
        for (const Bar& bar : bars) {
            const double y = y0 + bar.lane * lane_h;
            const double w = std::max(1.0, x(bar.end) - x(bar.start));
            svg << "<rect x=\"" << x(bar.start) << "\" y=\"" << y + 2 << "\" width=\"" << w << "\" height=\""
                << lane_h - 6 << "\" fill=\"" << colours[(by_stream ? bar.stream : 0) % 8]
                << "\" stroke=\"white\" stroke-width=\"0.5\"><title>chunk " << bar.chunk << ", stream " << bar.stream
                << ": " << bar.start << " - " << bar.end << " ms</title></rect>\n";
            if (w > 14) {
                svg << "<text x=\"" << x(bar.start) + w / 2 << "\" y=\"" << y + 16
                    << "\" text-anchor=\"middle\" fill=\"white\" font-size=\"10\">" << bar.chunk << "</text>\n";
            }
        }
    };
    float pipelined_end = 0, serial_end = 0;
    for (const Bar& bar : pipelined) pipelined_end = std::max(pipelined_end, bar.end);
    for (const Bar& bar : serial) serial_end = std::max(serial_end, bar.end);
    char title[160];
    std::snprintf(title, sizeof title, "pipelined: %.2f ms (colour: stream, number: chunk)", pipelined_end);
    draw(pipelined, top + 10, title, true);
    std::snprintf(title, sizeof title, "serial (one chunk, one stream): %.2f ms", serial_end);
    draw(serial, top + 140, title, false);
    // Time axis.
    const double axis_y = 300;
    svg << "<line x1=\"" << left << "\" y1=\"" << axis_y << "\" x2=\"" << left + width << "\" y2=\"" << axis_y
        << "\" stroke=\"black\"/>\n";
    const float step = total > 40 ? 10.0f : total > 8 ? 2.0f : 0.5f;
    for (float t = 0; t <= total + 1e-3f; t += step) {
        svg << "<line x1=\"" << x(t) << "\" y1=\"" << axis_y << "\" x2=\"" << x(t) << "\" y2=\"" << axis_y + 5
            << "\" stroke=\"black\"/><text x=\"" << x(t) << "\" y=\"" << axis_y + 18 << "\" text-anchor=\"middle\">"
            << t << "</text>\n";
    }
    svg << "<text x=\"" << left + width << "\" y=\"" << axis_y - 6 << "\" text-anchor=\"end\">ms</text>\n</svg>\n";
    if (!svg) throw std::runtime_error("cannot write " + path);
    std::printf("timeline written: %s\n", path.c_str());
}

}  // namespace

int main(int argc, char** argv) {
    const std::string csv = argc > 1 ? argv[1] : "lesson17_bench.csv";
    const std::size_t n = std::size_t{1} << 26;
    const std::size_t bytes = n * sizeof(unsigned);

    const std::vector<unsigned> values = course::random_values<unsigned>(n, 0u, ~0u, "bench input");
    course::PinnedBuffer<unsigned> host_in(values), host_out(n);
    course::DeviceBuffer<unsigned> device_in(n), device_out(n);
    lesson17::PipelineBuffers pinned;
    pinned.host_in = host_in.data();
    pinned.host_out = host_out.data();
    pinned.device_in = device_in.data();
    pinned.device_out = device_out.data();
    pinned.n = n;

    // Calibrate: the copies' times, then the rounds of work that make the kernel as long as the copy in.
    const float h2d_ms = median_ms([&] {
        COURSE_CUDA_CHECK(cudaMemcpyAsync(device_in.data(), host_in.data(), bytes, cudaMemcpyHostToDevice, 0));
    });
    const float d2h_ms = median_ms([&] {
        COURSE_CUDA_CHECK(cudaMemcpyAsync(host_out.data(), device_out.data(), bytes, cudaMemcpyDeviceToHost, 0));
    });
    constexpr unsigned kProbeWork = 256;
    const float probe_ms = median_ms([&] { lesson17::launch_transform(device_in.data(), device_out.data(), n, kProbeWork, 0); });
    const unsigned work = static_cast<unsigned>(
        std::clamp(std::lround(kProbeWork * h2d_ms / probe_ms), 1L, 1L << 20));
    const float kernel_ms = median_ms([&] { lesson17::launch_transform(device_in.data(), device_out.data(), n, work, 0); });
    std::printf("calibration over 2^26 uints (256 MiB): copy in %.3f ms (%.1f GB/s), copy out %.3f ms (%.1f GB/s), "
                "kernel with %u rounds per element %.3f ms: work = %u rounds balances the kernel with the copy in\n",
                h2d_ms, bytes / (h2d_ms * 1e6), d2h_ms, bytes / (d2h_ms * 1e6), kProbeWork, probe_ms, work);
    std::printf("balanced steps: copy in %.3f ms, kernel %.3f ms, copy out %.3f ms (serial ideal %.3f ms, "
                "overlapped ideal about %.3f ms)\n",
                h2d_ms, kernel_ms, d2h_ms, h2d_ms + kernel_ms + d2h_ms, std::max({h2d_ms, kernel_ms, d2h_ms}));

    // The sample the checks compare: every 997th element and the last 1000.
    std::vector<std::size_t> sample;
    for (std::size_t i = 0; i < n; i += 997) sample.push_back(i);
    for (std::size_t i = n - 1000; i < n; ++i) sample.push_back(i);
    std::vector<unsigned> expected(sample.size());
    for (std::size_t k = 0; k < sample.size(); ++k) expected[k] = lesson17::transform_element(values[sample[k]], work);
    const auto check = [&](const std::function<void()>& run, const unsigned* out) -> std::function<std::string()> {
        return [&, run, out]() -> std::string {
            std::fill(host_out.data(), host_out.data() + n, kPoison);
            run();
            for (std::size_t k = 0; k < sample.size(); ++k) {
                if (out[sample[k]] != expected[k]) {
                    return std::string("element ") + std::to_string(sample[k]) + " is " +
                           std::to_string(out[sample[k]]) + ", expected " + std::to_string(expected[k]);
                }
            }
            return "";
        };
    };

    course::Bench bench("17",
                        std::string("copy in, transform, copy out of 2^26 uints (256 MiB each way, pinned), work "
                                    "balanced with the copies (") +
                            std::to_string(work) + " rounds per element)",
                        20);
    const double moved = 2.0 * static_cast<double>(bytes);  // over the bus, both ways
    const auto serial = [&] { lesson17::transform_serial(pinned, work); };
    bench.add_checked("serial: default stream, nothing overlaps", true, check(serial, host_out.data()),
                      [&](int) { serial(); }, moved);
    struct Shape {
        int chunks, streams;
    };
    for (const Shape shape : {Shape{4, 2}, Shape{8, 2}, Shape{16, 3}, Shape{32, 4}, Shape{64, 4}}) {
        const auto run = [&pinned, work, shape] { lesson17::transform_pipelined(pinned, work, shape.chunks, shape.streams); };
        bench.add_checked(course::implementation_label("transform_pipelined") + ", " + std::to_string(shape.chunks) +
                              " chunks, " + std::to_string(shape.streams) + " streams",
                          false, check(run, host_out.data()), [run](int) { run(); }, moved);
    }
    // The same pipeline handed pageable memory: every cudaMemcpyAsync waits for
    // its copy (staged through a driver buffer), so nothing overlaps.
    std::vector<unsigned> pageable_in(values), pageable_out(n);
    lesson17::PipelineBuffers pageable = pinned;
    pageable.host_in = pageable_in.data();
    pageable.host_out = pageable_out.data();
    const auto run_pageable = [&pageable, work] { lesson17::transform_pipelined(pageable, work, 16, 3); };
    bench.add_checked("transform_pipelined, 16 chunks, 3 streams, pageable", false,
                      [&]() -> std::string {
                          std::fill(pageable_out.begin(), pageable_out.end(), kPoison);
                          run_pageable();
                          for (std::size_t k = 0; k < sample.size(); ++k) {
                              if (pageable_out[sample[k]] != expected[k]) return std::string("wrong element ") + std::to_string(sample[k]);
                          }
                          return "";
                      },
                      [run_pageable](int) { run_pageable(); }, moved);
    bench.report(csv);

    // The timeline figure: one instrumented run of each.
    const int chunks = 16, streams = 3;
    const std::vector<Bar> pipelined_bars = timed_pipeline(pinned, work, chunks, streams);
    const std::vector<Bar> serial_bars = timed_pipeline(pinned, work, 1, 1);
    std::string svg = csv;
    if (svg.size() > 4 && svg.substr(svg.size() - 4) == ".csv") svg.resize(svg.size() - 4);
    write_timeline(svg + "-timeline.svg", pipelined_bars, serial_bars, chunks, streams, bench.device());
    return 0;
}
