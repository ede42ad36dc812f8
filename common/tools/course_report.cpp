// course_report: turns CTest's JUnit XML and the driver's build status into
// the grade table students and instructors read.
//
//   course_report --build DIR --junit FILE [--build-status FILE] [NN ...]
//
// DIR/course/lessons.tsv (number, slug, title, points) and
// DIR/course/configuration.tsv (backend, reason, device, source) are written
// by CMake at configure time. A test case's first failure is the block of
// "[course]" lines the shared Catch2 main prints; a test that crashed or timed
// out has none, and gets CTest's verdict with the likely cause instead.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Lesson {
    std::string number, slug, title;
    double points = 0;
};

struct TestResult {
    std::string lesson, name;
    bool passed = false;
    std::string failure;  // readable first failure, empty when passed
};

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

std::vector<std::vector<std::string>> read_tsv(const std::string& path) {
    std::vector<std::vector<std::string>> rows;
    std::istringstream in(read_file(path));
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty()) continue;
        std::vector<std::string> fields;
        std::size_t start = 0;
        for (std::size_t tab; (tab = line.find('\t', start)) != std::string::npos; start = tab + 1) {
            fields.push_back(line.substr(start, tab - start));
        }
        fields.push_back(line.substr(start));
        rows.push_back(fields);
    }
    return rows;
}

std::string xml_unescape(const std::string& s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] != '&') {
            out += s[i];
            continue;
        }
        const std::size_t semi = s.find(';', i);
        if (semi == std::string::npos) {
            out += s[i];
            continue;
        }
        const std::string entity = s.substr(i + 1, semi - i - 1);
        if (entity == "lt") out += '<';
        else if (entity == "gt") out += '>';
        else if (entity == "amp") out += '&';
        else if (entity == "quot") out += '"';
        else if (entity == "apos") out += '\'';
        else if (!entity.empty() && entity[0] == '#') {
            const long code = entity.size() > 1 && entity[1] == 'x' ? std::strtol(entity.c_str() + 2, nullptr, 16)
                                                                      : std::strtol(entity.c_str() + 1, nullptr, 10);
            out += code < 128 ? static_cast<char>(code) : '?';
        } else {
            out += s.substr(i, semi - i + 1);
        }
        i = semi;
    }
    return out;
}

std::string attribute(const std::string& tag, const std::string& name) {
    const std::string key = " " + name + "=\"";
    const std::size_t at = tag.find(key);
    if (at == std::string::npos) return "";
    const std::size_t start = at + key.size();
    return xml_unescape(tag.substr(start, tag.find('"', start) - start));
}

// The first failure as the Catch2 main printed it, or CTest's verdict.
std::string explain_failure(const std::string& failure_message, const std::string& output) {
    std::istringstream in(output);
    std::string line, text;
    bool in_block = false;
    while (std::getline(in, line)) {
        if (line.rfind("[course] first failure at ", 0) == 0) {
            if (in_block) break;
            in_block = true;
            text = "at " + line.substr(26) + "\n";
        } else if (in_block && line.rfind("[course]   ", 0) == 0) {
            text += line.substr(11) + "\n";
        } else if (in_block) {
            break;
        }
    }
    if (!text.empty()) return text;
    if (failure_message.find("Timeout") != std::string::npos || output.find("***Timeout") != std::string::npos) {
        return "the test did not finish in time and was stopped.\nlikely cause: a loop that never ends (does "
               "your loop index grow every iteration?) or threads waiting for each other forever.\n";
    }
    if (!failure_message.empty() && failure_message != "Failed") {
        return "the test program stopped abnormally (" + failure_message +
               ").\nlikely cause: a crash in the test process, such as memory access out of bounds.\n";
    }
    // Last lines of whatever the program printed.
    std::vector<std::string> lines;
    std::istringstream all(output);
    while (std::getline(all, line)) {
        if (!line.empty()) lines.push_back(line);
    }
    std::string tail;
    for (std::size_t i = lines.size() > 6 ? lines.size() - 6 : 0; i < lines.size(); ++i) tail += lines[i] + "\n";
    return tail.empty() ? "the test failed without output\n" : tail;
}

std::vector<TestResult> read_junit(const std::string& path) {
    std::vector<TestResult> results;
    const std::string xml = read_file(path);
    for (std::size_t at = xml.find("<testcase "); at != std::string::npos; at = xml.find("<testcase ", at + 1)) {
        const std::size_t tag_end = xml.find('>', at);
        const std::string tag = xml.substr(at, tag_end - at);
        const bool self_closed = tag_end > 0 && xml[tag_end - 1] == '/';
        const std::size_t body_end = self_closed ? tag_end : xml.find("</testcase>", tag_end);
        const std::string body = xml.substr(tag_end + 1, body_end - tag_end - 1);

        TestResult r;
        r.name = attribute(tag, "name");
        r.lesson = r.name.substr(0, r.name.find(':'));
        r.passed = attribute(tag, "status") == "run";
        if (!r.passed) {
            std::string message;
            const std::size_t failure = body.find("<failure");
            if (failure != std::string::npos) message = attribute(body.substr(failure, body.find('>', failure) - failure), "message");
            std::string output;
            const std::size_t out_start = body.find("<system-out>");
            if (out_start != std::string::npos) {
                const std::size_t from = out_start + 12;
                output = xml_unescape(body.substr(from, body.find("</system-out>", from) - from));
            }
            r.failure = explain_failure(message, output);
        }
        results.push_back(r);
    }
    return results;
}

// The driver joins the lines of a build error with the ASCII unit separator.
std::string split_lines(std::string s) {
    std::replace(s.begin(), s.end(), '\x1f', '\n');
    return s;
}

void print_indented(const std::string& text) {
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) std::cout << "    " << line << "\n";
}

}  // namespace

int main(int argc, char** argv) {
    std::string build_dir, junit, build_status;
    std::set<std::string> selected;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--build" && i + 1 < argc) build_dir = argv[++i];
        else if (arg == "--junit" && i + 1 < argc) junit = argv[++i];
        else if (arg == "--build-status" && i + 1 < argc) build_status = argv[++i];
        else if (!arg.empty() && arg[0] != '-') selected.insert(arg);
        else {
            std::cerr << "usage: course_report --build DIR --junit FILE [--build-status FILE] [NN ...]\n";
            return 2;
        }
    }
    if (build_dir.empty()) {
        std::cerr << "course_report: --build DIR is required\n";
        return 2;
    }

    std::map<std::string, std::string> config;
    for (const auto& row : read_tsv(build_dir + "/course/configuration.tsv")) {
        if (row.size() >= 2) config[row[0]] = row[1];
    }
    std::vector<Lesson> lessons;
    for (const auto& row : read_tsv(build_dir + "/course/lessons.tsv")) {
        if (row.size() < 4 || (!selected.empty() && !selected.count(row[0]))) continue;
        lessons.push_back({row[0], row[1], row[2], std::stod(row[3])});
    }
    std::map<std::string, std::string> compile_errors;
    if (!build_status.empty()) {
        for (const auto& row : read_tsv(build_status)) {
            if (row.size() >= 3) compile_errors[row[0]] = split_lines(row[2]);
        }
    }
    const std::vector<TestResult> results = junit.empty() ? std::vector<TestResult>{} : read_junit(junit);

    std::cout << "CUDA course grade report\n"
              << "  backend: " << config["backend"] << " (" << config["reason"] << ")\n"
              << "  device:  " << config["device"] << "\n"
              << "  source:  " << config["source"] << "\n\n";
    char line[256];
    std::snprintf(line, sizeof line, "  %-3s %-34s %7s %13s  %s\n", "#", "lesson", "tests", "points", "status");
    std::cout << line;

    double total_points = 0, max_points = 0;
    std::vector<std::pair<std::string, std::string>> details;  // lesson heading, text
    for (const Lesson& lesson : lessons) {
        int passed = 0, total = 0;
        const TestResult* first_failure = nullptr;
        for (const TestResult& r : results) {
            if (r.lesson != lesson.number) continue;
            ++total;
            if (r.passed) ++passed;
            else if (first_failure == nullptr) first_failure = &r;
        }
        std::string status;
        double points = 0;
        std::string tests = std::to_string(passed) + "/" + std::to_string(total);
        if (compile_errors.count(lesson.number)) {
            status = "COMPILE ERROR";
            tests = "-";
            details.emplace_back("Lesson " + lesson.number + " does not compile:", compile_errors[lesson.number]);
        } else if (total == 0) {
            status = "NO TESTS RAN";
        } else {
            points = lesson.points * passed / total;
            status = passed == total ? "passed" : "FAILED";
            if (first_failure != nullptr) {
                details.emplace_back("Lesson " + lesson.number + ", first failing test: \"" +
                                         first_failure->name.substr(first_failure->name.find(':') + 1) + "\"",
                                     first_failure->failure);
            }
        }
        total_points += points;
        max_points += lesson.points;
        char pts[32];
        std::snprintf(pts, sizeof pts, "%.1f/%g", points, lesson.points);
        std::snprintf(line, sizeof line, "  %-3s %-34s %7s %13s  %s\n", lesson.number.c_str(),
                      lesson.title.substr(0, 34).c_str(), tests.c_str(), pts, status.c_str());
        std::cout << line;
    }
    char pts[32];
    std::snprintf(pts, sizeof pts, "%.1f/%g", total_points, max_points);
    std::snprintf(line, sizeof line, "  %-3s %-34s %7s %13s\n", "", "total", "", pts);
    std::cout << line;

    for (const auto& [heading, text] : details) {
        std::cout << "\n" << heading << "\n";
        print_indented(text);
    }
    return 0;
}
