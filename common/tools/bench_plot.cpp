// bench_plot: draws a lesson's benchmark CSV (written by course::Bench) as an
// SVG bar chart, with the device named, for the lesson's page: effective
// bandwidth against the measured device-to-device copy bandwidth for
// memory-bound kernels, or TFLOP/s when the rows count floating-point
// operations (the matrix multiply), where the copy ceiling means nothing.
//
//   course_bench_plot RESULTS.csv OUTPUT.svg
#include <algorithm>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "xml_escape.hpp"

namespace {

std::vector<std::string> split_csv_line(const std::string& line) {
    std::vector<std::string> fields(1);
    bool quoted = false;
    for (char c : line) {
        if (c == '"') quoted = !quoted;
        else if (c == ',' && !quoted) fields.emplace_back();
        else fields.back() += c;
    }
    return fields;
}

using course_tools::xml_escape;

struct Row {
    std::string name;
    bool library = false;
    double value = 0;  // GB/s, or TFLOP/s when every row counts flops
    double gb_per_s = 0, tflop_per_s = 0;
};

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::cerr << "usage: course_bench_plot RESULTS.csv OUTPUT.svg\n";
        return 2;
    }
    std::ifstream in(argv[1]);
    if (!in) {
        std::cerr << argv[1] << ": cannot read\n";
        return 1;
    }
    std::string line;
    std::getline(in, line);  // header
    std::vector<Row> rows;
    std::string lesson, device, title;
    double copy = 0;
    // Drawn in TFLOP/s only when every row counts flops: a benchmark that
    // mixes memory-bound rows (a conversion) with counted ones (an SpMV) is
    // drawn in GB/s throughout, one unit on one axis.
    bool compute_bound = true;
    while (std::getline(in, line)) {
        const std::vector<std::string> f = split_csv_line(line);
        if (f.size() < 14) continue;
        const double gflop_per_s = std::stod(f[9]);
        if (gflop_per_s <= 0) compute_bound = false;
        Row row{f[1], f[2] == "1"};
        row.gb_per_s = std::stod(f[8]);
        row.tflop_per_s = gflop_per_s / 1000;
        rows.push_back(row);
        lesson = f[0];
        copy = std::stod(f[11]);
        device = f[12];
        title = f[13];
    }
    if (rows.empty()) {
        std::cerr << argv[1] << ": no results\n";
        return 1;
    }
    for (Row& r : rows) r.value = compute_bound ? r.tflop_per_s : r.gb_per_s;

    // The labels are right-aligned before the bars: wide enough for the longest
    // (about 7.2 px per character at 13 px DejaVu Sans).
    std::size_t longest = 0;
    for (const Row& r : rows) longest = std::max(longest, r.name.size());
    const int label_w = std::max(330, static_cast<int>(longest * 7.2) + 16);
    const int bar_w = 470, row_h = 30, top = 78, left = 10;
    const int width = left + label_w + bar_w + 90;
    const int height = top + static_cast<int>(rows.size()) * row_h + 50;
    double scale_max = compute_bound ? 0 : copy;
    for (const Row& r : rows) scale_max = std::max(scale_max, r.value);
    scale_max *= 1.08;
    const auto x_of = [&](double v) { return left + label_w + v / scale_max * bar_w; };

    char date[32];
    const std::time_t now = std::time(nullptr);
    std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));

    std::ostringstream svg;
    svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
        << "\" viewBox=\"0 0 " << width << " " << height << "\" font-family=\"DejaVu Sans, Arial, sans-serif\">\n"
        << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
        << "<text x=\"" << left << "\" y=\"24\" font-size=\"17\" font-weight=\"bold\">Lesson " << xml_escape(lesson)
        << ": " << xml_escape(title) << "</text>\n"
        << "<text x=\"" << left << "\" y=\"46\" font-size=\"13\" fill=\"#444\">"
        << (compute_bound ? "Throughput (TFLOP/s" : "Effective bandwidth (GB/s, bytes read + written")
        << "; median of repeated runs). Measured on " << xml_escape(device) << ", " << date << ".</text>\n";
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const Row& r = rows[i];
        const int y = top + static_cast<int>(i) * row_h;
        const bool graded = r.name.rfind("your ", 0) == 0 || r.name.rfind("reference ", 0) == 0;
        const char* colour = r.library ? "#9e9e9e" : graded ? "#f28e2b" : "#4e79a7";
        svg << "<text x=\"" << left + label_w - 8 << "\" y=\"" << y + 19 << "\" font-size=\"13\" text-anchor=\"end\">"
            << xml_escape(r.name) << "</text>\n"
            << "<rect x=\"" << left + label_w << "\" y=\"" << y + 5 << "\" width=\"" << x_of(r.value) - left - label_w
            << "\" height=\"" << row_h - 10 << "\" fill=\"" << colour << "\"/>\n";
        char value[32];
        std::snprintf(value, sizeof value, compute_bound ? "%.1f" : "%.0f", r.value);
        svg << "<text x=\"" << x_of(r.value) + 6 << "\" y=\"" << y + 19 << "\" font-size=\"12\">" << value
            << "</text>\n";
    }
    const int bottom = top + static_cast<int>(rows.size()) * row_h;
    if (!compute_bound) {
        const double cx = x_of(copy);
        svg << "<line x1=\"" << cx << "\" y1=\"" << top - 6 << "\" x2=\"" << cx << "\" y2=\"" << bottom + 4
            << "\" stroke=\"#e15759\" stroke-width=\"2\" stroke-dasharray=\"6,4\"/>\n"
            << "<text x=\"" << cx << "\" y=\"" << bottom + 22 << "\" font-size=\"12\" fill=\"#e15759\" text-anchor=\"middle\">"
            << "device-to-device copy: " << static_cast<long>(copy + 0.5) << " GB/s</text>\n";
    }
    svg << "<text x=\"" << left << "\" y=\"" << bottom + 40 << "\" font-size=\"11\" fill=\"#666\">blue: course kernels;"
        << " orange: the graded implementation (yours, or the reference); grey: library baseline</text>\n"
        << "</svg>\n";

    std::ofstream out(argv[2]);
    out << svg.str();
    if (!out) {
        std::cerr << argv[2] << ": cannot write\n";
        return 1;
    }
    return 0;
}
