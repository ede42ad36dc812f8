// course_report: turns the grader's test results and the driver's build
// status into the grade report students and instructors read, in the format
// their tools take. One tool for `./course grade` (one student) and
// `./course grade-all` (a class).
//
//   course_report --build DIR [--format table|json|junit|csv|gradescope|prairielearn|score]
//                 [--isolation TEXT] [--visibility [NN=]V] [--hidden-visibility V]
//                 [--student NAME] [--tests FILE] [--results FILE] [--build-status FILE]
//                 [--sources DIR] [--seconds S] [--student NAME ...] [--graded DIR ...]
//                 [--progress FILE] [--exit-status] [--gradebook DIR] [NN ...]
//
// The report in FORMAT goes to stdout. --progress FILE records the grade in
// the student's progress file (progress.hpp; ./course grade), --exit-status
// makes the exit status 1 when a lesson graded did not pass (2 is an error),
// --gradebook DIR writes the class's gradebook in every format there, with
// one Gradescope and one PrairieLearn results.json a student (grade-all).
//
// DIR/course/manifest.json, the lesson manifest, is written by CMake at
// configure time (cmake/CourseLesson.cmake): the build's configuration
// (backend, reason, device, source, root, compiler) and each lesson by name
// (number, slug, title, points, bench, sources, forbid, skipped: why the
// build skips it). Each --student starts a
// student; the options after it (until the next --student) describe that
// student's results: the trusted list of the test cases that were to run
// (--tests) and what course_run_tests made of each (--results, see
// common/tools/run_tests.cpp), the driver's build status (JSON lines, one
// object per lesson that did not build: {"lesson", "status", "message"},
// written by `course_report build-error`), the folder holding the student's
// NN-slug/ lesson files (scanned for the lessons' forbidden calls) and the
// seconds grading took.
// Options before the first --student describe one unnamed student.
// --graded DIR is a student `./course grade-all` (or grade --submission)
// graded in the folder DIR, named by the folder: DIR/tests.jsonl,
// results.jsonl, build-status.json, work/src (the lesson files), seconds,
// and isolation (the sandbox's description, the report's when --isolation
// gives none).
//
// The driver reads the manifest and writes the build status through this
// tool too, so that no shell code parses or escapes JSON:
//
//   course_report manifest DIR lessons              the lesson numbers, one a line
//   course_report manifest DIR lesson NN KEY        a lesson's KEY (a list: one item a line;
//                                                   bench: true or false)
//   course_report manifest DIR configuration KEY    a configuration value
//   course_report progress FILE status DIR          ./course status: the lessons of DIR's manifest,
//                                                   each one's state in the progress FILE, the next
//   course_report progress FILE next DIR            the first lesson of DIR not passed (none: empty)
//   course_report progress FILE passed NN           exit 0 when lesson NN has passed; else 1,
//                                                   printing why not
//   course_report build-error NN < MESSAGE          one build-status line: lesson NN did not build
//   course_report build-status FILE                 the lessons FILE says did not build, one a line
//   course_report check-pages DIR                   README.md's lesson table, each lesson page's
//                                                   title and the lesson map agree with the manifest
//   course_report ctest-junit FILE                  a CTest run's counts and SKIP lines, from the
//                                                   JUnit file it wrote (./course check)
//
// The list decides what is graded: a test case of the list without a passed
// result is a failure, never left out. A failure's explanation is the
// runner's reason (when the process ended abnormally) and the block of
// "[course]" lines the shared Catch2 main prints, or the end of the output.
// Points: a lesson's points are shared equally over its test cases (GPU-only
// stand-ins on the emulator are left out), and each passing test case earns
// its share.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "json.hpp"
#include "progress.hpp"
#include "xml_escape.hpp"

namespace {

namespace json = course_tools::json;
namespace progress = course_tools::progress;

struct Lesson {
    std::string number, slug, title;
    double points = 0;
    bool bench = false;  // has a benchmark in this build (a GPU build only)
    std::vector<std::string> sources, forbidden;
    std::string skipped;  // why this build does not run the lesson (a GPU-only lesson on the emulator)
};

struct TestResult {
    std::string lesson, name;
    bool passed = false;
    bool skipped = false;  // a GPU-only test case on the emulator: worth no points, counted nowhere
    std::string failure;  // readable first failure, empty when passed
};

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

// The block of "[course]" lines the Catch2 main prints for a test case's
// first failure, or "" when there is none.
std::string first_failure_block(const std::string& output) {
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
    return text;
}

// A failed test case explained: the runner's reason, unless it only says
// the checks failed, then the first failure as the Catch2 main printed it,
// or the last lines of the output.
std::string explain_failure(const std::string& reason, const std::string& output) {
    std::string text;
    if (!reason.empty() && reason.rfind("the test failed (exit status", 0) != 0) text = reason + ".\n";
    const std::string block = first_failure_block(output);
    if (!block.empty()) return text + block;
    if (reason.find("did not finish within") != std::string::npos) {
        text += "likely cause: a loop that never ends (does your loop index grow every iteration?) or threads "
                "waiting for each other forever.\n";
    }
    std::vector<std::string> lines;
    std::istringstream all(output);
    for (std::string line; std::getline(all, line);) {
        if (!line.empty()) lines.push_back(line);
    }
    for (std::size_t i = lines.size() > 6 ? lines.size() - 6 : 0; i < lines.size(); ++i) text += lines[i] + "\n";
    if (text.empty()) text = reason.empty() ? "the test failed without output\n" : reason + ".\n";
    return text;
}

// The trusted list of test cases (JSON lines: lesson, program, name, run;
// from the course's own build, `course_run_tests list`) and what the runner
// made of each (JSON lines: lesson, name, status, reason, output;
// common/tools/run_tests.cpp). Every test case of the list comes back: one
// the results lack is a failure.
std::vector<TestResult> read_results(const std::string& tests_path, const std::string& results_path) {
    struct Outcome {
        std::string status, reason, output;
    };
    std::map<std::pair<std::string, std::string>, Outcome> outcome;
    if (!results_path.empty()) {
        for (const json::Value& row : json::parse_lines(read_file(results_path), results_path)) {
            outcome[{row.at("lesson").as_string(), row.at("name").as_string()}] = {
                row.at("status").as_string(), row.at("reason").as_string(), row.at("output").as_string()};
        }
    }
    std::vector<TestResult> results;
    for (const json::Value& entry : json::parse_lines(read_file(tests_path), tests_path)) {
        TestResult r;
        r.lesson = entry.at("lesson").as_string();
        r.name = entry.at("name").as_string();
        const bool run = entry.at("run").as_bool();
        const auto found = outcome.find({r.lesson, r.name});
        if (!run) {
            r.skipped = true;
        } else if (found == outcome.end()) {
            r.failure = "result missing: the grader has no result for this test case (did grading stop early?)\n";
        } else {
            const Outcome& got = found->second;
            r.passed = got.status == "passed";
            if (!r.passed) r.failure = explain_failure(got.reason, got.output);
        }
        results.push_back(r);
    }
    return results;
}

// ------------------------------------------------------------ the manifest

// A file's text; throws naming it (and saying `hint`) when it cannot be read.
std::string read_required(const std::string& path, const std::string& what, const std::string& hint = "") {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw json::Error("cannot read " + what + " " + path + hint);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

struct Manifest {
    std::map<std::string, std::string> config;  // backend, reason, device, source, root, compiler
    std::vector<Lesson> lessons;                // in the order of the course_lesson() calls
};

// DIR/course/manifest.json, as cmake/CourseLesson.cmake writes it; throws
// json::Error naming the file, line and key when it is not of that shape.
Manifest read_manifest(const std::string& build_dir) {
    const std::string path = build_dir + "/course/manifest.json";
    const json::Value doc = json::parse(
        read_required(path, "the lesson manifest", " (CMake writes it when it configures the tree)"), path);
    Manifest m;
    const json::Value& config = doc.at("configuration");
    config.expect(json::Value::Type::object, "an object");
    for (const auto& [key, value] : config.members) m.config[key] = value.as_string();
    for (const json::Value& entry : doc.at("lessons").as_array()) {
        Lesson lesson;
        lesson.number = entry.at("number").as_string();
        lesson.slug = entry.at("slug").as_string();
        lesson.title = entry.at("title").as_string();
        lesson.points = entry.at("points").as_number();
        lesson.bench = entry.at("bench").as_bool();
        lesson.sources = entry.at("sources").as_strings();
        lesson.forbidden = entry.at("forbid").as_strings();
        lesson.skipped = entry.at("skipped").as_string();
        m.lessons.push_back(lesson);
    }
    return m;
}

// The driver's build status: JSON lines, one object per lesson that did not
// build, {"lesson": "NN", "status": "compile error", "message": "..."}
// (course_report build-error writes them). Lesson number to message; a
// lesson named twice keeps its first message (the staging's, before the build's).
std::map<std::string, std::string> read_build_status(const std::string& path) {
    std::map<std::string, std::string> errors;
    for (const json::Value& row : json::parse_lines(read_required(path, "the build status"), path)) {
        const std::string& lesson = row.at("lesson").as_string();
        row.at("status").as_string();
        errors.emplace(lesson, row.at("message").as_string());
    }
    return errors;
}

void print_indented(std::ostream& out, const std::string& text) {
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) out << "    " << line << "\n";
}

// ------------------------------------------------------------ forbidden calls

struct Flag {
    std::string file;  // relative to the submission, e.g. 02-atomic-argmin/argmin.cu
    int line = 0;
    std::string call, text;
    bool process_tampering = false;  // one of kProcessTampering, not the lesson's FORBID
};

// What no lesson needs and an attempt on the grade would use: ending,
// forking or signalling the test process, reading its memory or arguments,
// code that runs before main, the test framework's internals. Flagged in
// every lesson, for the instructor to look at: the grade itself is decided
// by the verdict channel whatever the code does (docs/instructor-guide.md,
// "What a grade can be trusted for").
const std::vector<std::string> kProcessTampering = {
    "/proc/", "ptrace", "process_vm_", "preinit_array", "init_array", "init_priority", "constructor)",
    "constructor(", "ifunc", "dlopen", "dlsym", "Catch::", "CATCH_", "COURSE_VERDICT", "_Exit", "quick_exit",
    "exit(", "abort(", "fork(", "kill(", "system(", "execv", "execl", "posix_spawn", "setsid", "sigaction",
    "signal("};

// The source with comments blanked out (newlines kept, so lines still count);
// string and character literals are kept as they are.
std::string without_comments(const std::string& src) {
    std::string out = src;
    enum { code, line_comment, block_comment, string_literal, char_literal } state = code;
    for (std::size_t i = 0; i < out.size(); ++i) {
        const char c = out[i], next = i + 1 < out.size() ? out[i + 1] : '\0';
        switch (state) {
        case code:
            if (c == '/' && next == '/') state = line_comment, out[i] = ' ';
            else if (c == '/' && next == '*') state = block_comment, out[i] = ' ', out[++i] = ' ';
            else if (c == '"') state = string_literal;
            else if (c == '\'') state = char_literal;
            break;
        case line_comment:
            if (c == '\n') state = code;
            else out[i] = ' ';
            break;
        case block_comment:
            if (c == '*' && next == '/') state = code, out[i] = ' ', out[++i] = ' ';
            else if (c != '\n') out[i] = ' ';
            break;
        case string_literal:
        case char_literal:
            if (c == '\\') ++i;
            else if (c == (state == string_literal ? '"' : '\'') || c == '\n') state = code;
            break;
        }
    }
    return out;
}

std::string trimmed(const std::string& s) {
    const std::size_t first = s.find_first_not_of(" \t");
    if (first == std::string::npos) return "";
    return s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
}

std::vector<Flag> forbidden_uses(const Lesson& lesson, const std::string& sources_dir) {
    std::vector<Flag> flags;
    if (sources_dir.empty()) return flags;
    for (const std::string& source : lesson.sources) {
        const std::string relative = lesson.number + "-" + lesson.slug + "/" + source;
        std::ifstream in(sources_dir + "/" + relative, std::ios::binary);
        if (!in) continue;
        std::ostringstream text;
        text << in.rdbuf();
        const std::string original = text.str();
        std::istringstream code_lines(without_comments(original)), original_lines(original);
        std::string code, shown;
        for (int number = 1; std::getline(code_lines, code) && std::getline(original_lines, shown); ++number) {
            for (const std::string& call : lesson.forbidden) {
                if (code.find(call) != std::string::npos) flags.push_back({relative, number, call, trimmed(shown)});
            }
            for (const std::string& call : kProcessTampering) {
                if (code.find(call) != std::string::npos) {
                    flags.push_back({relative, number, call, trimmed(shown), true});
                    break;  // one flag a line is enough
                }
            }
        }
    }
    return flags;
}

// ------------------------------------------------------------ the grade

struct TestGrade {
    std::string name;  // without the "NN: " prefix
    bool passed = false;
    double points = 0, max_points = 0;
    std::string message;  // the readable failure, empty when passed
};

struct LessonGrade {
    const Lesson* lesson = nullptr;
    std::string status;  // passed, FAILED, COMPILE ERROR, NO TESTS RAN, SKIPPED
    std::string reason;  // the first failure or the compile error
    std::string first_failing_test;
    int passed = 0, total = 0, skipped_tests = 0;
    std::vector<std::string> skipped_names;  // the GPU-only stand-ins, reported skipped
    double points = 0, max_points = 0;  // a skipped lesson's are 0: it is left out of the total
    std::vector<TestGrade> tests;
    std::vector<Flag> flags;
};

struct Student {
    std::string name, tests, results, build_status, sources;
    double seconds = -1;
    std::vector<LessonGrade> lessons;
    double points = 0, max_points = 0;
};

// What the grader's limits (`./course grade-all`) look like from inside a
// test, said in words where the message alone does not say it.
std::string with_limit_cause(std::string text) {
    if (text.find("bad_alloc") != std::string::npos || text.find("cudaErrorMemoryAllocation") != std::string::npos) {
        text += "likely cause: memory ran out (when grading, each process's address space is limited): "
                "an allocation without bound?\n";
    } else if (text.find("SIGSEGV") != std::string::npos || text.find("SIGBUS") != std::string::npos) {
        text += "likely cause: the program crashed on memory it does not own (a null or dangling host "
                "pointer, or a device pointer used on the host?)\n";
    } else if (text.find("Resource temporarily unavailable") != std::string::npos) {
        text += "likely cause: the limit on processes and threads was reached (when grading, a submission may "
                "start only a few): a process or thread started without bound?\n";
    }
    return text;
}

// Paths inside the staged submission, shown as the student knows them
// (01-grid-stride-loop/saxpy.cu): the folder's absolute path removed, and
// its path relative to the repository `root`, which the test main already
// shortens paths inside the repository to.
std::string relative_to(std::string text, const std::string& folder, const std::string& root) {
    if (folder.empty()) return text;
    std::vector<std::string> prefixes = {folder + "/"};
    if (!root.empty() && folder.rfind(root + "/", 0) == 0) prefixes.push_back(folder.substr(root.size() + 1) + "/");
    for (const std::string& prefix : prefixes) {
        for (std::size_t at; (at = text.find(prefix)) != std::string::npos;) text.erase(at, prefix.size());
    }
    return text;
}

void grade(Student& student, const std::vector<Lesson>& lessons, const std::string& root) {
    std::map<std::string, std::string> compile_errors;
    if (!student.build_status.empty()) compile_errors = read_build_status(student.build_status);
    const std::vector<TestResult> results =
        student.tests.empty() ? std::vector<TestResult>{} : read_results(student.tests, student.results);
    for (const Lesson& lesson : lessons) {
        LessonGrade g;
        g.lesson = &lesson;
        if (!lesson.skipped.empty()) {
            g.status = "SKIPPED";
            g.reason = lesson.skipped + "\n";
            student.lessons.push_back(g);
            continue;
        }
        g.max_points = lesson.points;
        g.flags = forbidden_uses(lesson, student.sources);
        for (const TestResult& r : results) {
            if (r.lesson != lesson.number) continue;
            if (r.skipped) {
                ++g.skipped_tests;
                g.skipped_names.push_back(r.name);
                continue;
            }
            TestGrade t;
            t.name = r.name;
            t.passed = r.passed;
            t.message = relative_to(with_limit_cause(r.failure), student.sources, root);
            g.tests.push_back(t);
        }
        g.total = static_cast<int>(g.tests.size());
        if (compile_errors.count(lesson.number)) {
            g.status = "COMPILE ERROR";
            g.reason = compile_errors[lesson.number];
            g.tests.clear();
            g.total = 0;
        } else if (g.total == 0) {
            g.status = "NO TESTS RAN";
            g.reason = "no test of this lesson ran (did its test program start?)\n";
        } else {
            for (TestGrade& t : g.tests) {
                t.max_points = lesson.points / g.total;
                t.points = t.passed ? t.max_points : 0;
                g.points += t.points;
                if (t.passed) ++g.passed;
                else if (g.first_failing_test.empty()) g.first_failing_test = t.name, g.reason = t.message;
            }
            g.status = g.passed == g.total ? "passed" : "FAILED";
        }
        student.points += g.points;
        student.max_points += g.max_points;
        student.lessons.push_back(g);
    }
}

// ------------------------------------------------------------ output helpers

std::string json_string(const std::string& s) { return json::quote(s); }

using course_tools::xml_escape;

std::string csv_field(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string out = "\"";
    for (const char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

using json::number;

// Points earned of the most, as the tables and progress lines show them: "3.3/10".
std::string points_of(double got, double max) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.1f/%g", got, max);
    return buffer;
}

std::string flag_line(const Flag& f) {
    return f.file + ":" + std::to_string(f.line) + ": uses " + f.call +
           (f.process_tampering ? ", which reaches into the test process rather than doing the lesson: "
                                : ", which this lesson forbids: ") +
           f.text;
}

struct Context {
    std::map<std::string, std::string> config;
    std::string isolation;
    // Gradescope's visibility of each lesson's test cases (default "visible"),
    // and of the instructor's hidden tests ("hidden: ..."), whatever the lesson.
    std::map<std::string, std::string> visibility;
    std::string default_visibility = "visible", hidden_visibility = "after_due_date";

    std::string visibility_of(const LessonGrade& g, const std::string& test_name) const {
        if (test_name.rfind("hidden: ", 0) == 0) return hidden_visibility;
        const auto found = visibility.find(g.lesson->number);
        return found != visibility.end() ? found->second : default_visibility;
    }
};

// Where the graded code ran, in one line (the reports' headers).
std::string graded_on(const Context& ctx) {
    auto config = ctx.config;
    return "Graded on " + config["backend"] + " (" + config["device"] + ")" +
           (ctx.isolation.empty() ? "" : "; isolation: " + ctx.isolation);
}

// ------------------------------------------------------------ formats

void write_table(std::ostream& out, const Context& ctx, const std::vector<Student>& students) {
    auto config = ctx.config;
    out << "CUDA course grade report\n"
        << "  backend:   " << config["backend"] << " (" << config["reason"] << ")\n"
        << "  device:    " << config["device"] << "\n";
    if (!ctx.isolation.empty()) out << "  isolation: " << ctx.isolation << "\n";
    if (students.size() == 1) {
        const Student& st = students.front();
        if (!st.name.empty()) out << "  student:   " << st.name << "\n";
        else out << "  source:    " << config["source"] << "\n";
        out << "\n";
        char line[256];
        std::snprintf(line, sizeof line, "  %-3s %-34s %7s %13s  %s\n", "#", "lesson", "tests", "points", "status");
        out << line;
        for (const LessonGrade& g : st.lessons) {
            char pts[32];
            if (g.status == "SKIPPED") std::snprintf(pts, sizeof pts, "-");
            else std::snprintf(pts, sizeof pts, "%.1f/%g", g.points, g.max_points);
            const std::string tests = g.status == "COMPILE ERROR" || g.status == "SKIPPED"
                                          ? "-"
                                          : std::to_string(g.passed) + "/" + std::to_string(g.total);
            std::string status = g.status;
            if (g.skipped_tests) status += ", " + std::to_string(g.skipped_tests) + " GPU-only skipped";
            if (!g.flags.empty()) status += ", FLAGGED";
            std::snprintf(line, sizeof line, "  %-3s %-34s %7s %13s  %s\n", g.lesson->number.c_str(),
                          g.lesson->title.substr(0, 34).c_str(), tests.c_str(), pts, status.c_str());
            out << line;
        }
        char pts[32];
        std::snprintf(pts, sizeof pts, "%.1f/%g", st.points, st.max_points);
        std::snprintf(line, sizeof line, "  %-3s %-34s %7s %13s\n", "", "total", "", pts);
        out << line;
        for (const LessonGrade& g : st.lessons) {
            if (g.status == "COMPILE ERROR") {
                out << "\nLesson " << g.lesson->number << " does not compile:\n";
                print_indented(out, g.reason);
            } else if (!g.first_failing_test.empty()) {
                out << "\nLesson " << g.lesson->number << ", first failing test: \"" << g.first_failing_test << "\"\n";
                print_indented(out, g.reason);
            } else if (g.status == "NO TESTS RAN") {
                out << "\nLesson " << g.lesson->number << ": " << g.reason;
            } else if (g.status == "SKIPPED") {
                out << "\nLesson " << g.lesson->number << " is skipped, and left out of the total: " << g.reason;
            }
            if (!g.flags.empty()) {
                out << "\nLesson " << g.lesson->number
                    << " is flagged (its points stand; for the instructor to look at):\n";
                for (const Flag& f : g.flags) print_indented(out, flag_line(f));
            }
        }
        return;
    }
    // A class: one row per student.
    out << "\n  " << std::left << std::setw(24) << "student";
    for (const LessonGrade& g : students.front().lessons) out << std::right << std::setw(7) << g.lesson->number;
    out << std::setw(11) << "total" << std::setw(9) << "time" << "  notes\n";
    for (const Student& st : students) {
        out << "  " << std::left << std::setw(24) << st.name.substr(0, 24);
        std::string notes;
        for (const LessonGrade& g : st.lessons) {
            char pts[16];
            if (g.status == "SKIPPED") std::snprintf(pts, sizeof pts, "-");
            else std::snprintf(pts, sizeof pts, "%.1f", g.points);
            out << std::right << std::setw(7) << pts;
            if (g.status == "COMPILE ERROR") notes += " " + g.lesson->number + ":compile-error";
            else if (g.status == "SKIPPED") notes += " " + g.lesson->number + ":skipped";
            else if (g.status == "NO TESTS RAN") notes += " " + g.lesson->number + ":no-tests";
            if (!g.flags.empty()) notes += " " + g.lesson->number + ":flagged";
        }
        char total[32], time[32];
        std::snprintf(total, sizeof total, "%.1f/%g", st.points, st.max_points);
        if (st.seconds >= 0) std::snprintf(time, sizeof time, "%.1f s", st.seconds);
        else std::snprintf(time, sizeof time, "-");
        out << std::setw(11) << total << std::setw(9) << time << " " << notes << "\n";
    }
}

void write_json(std::ostream& out, const Context& ctx, const std::vector<Student>& students) {
    auto config = ctx.config;
    out << "{\n  \"backend\": " << json_string(config["backend"]) << ",\n  \"backend_reason\": "
        << json_string(config["reason"]) << ",\n  \"device\": " << json_string(config["device"])
        << ",\n  \"isolation\": " << json_string(ctx.isolation) << ",\n  \"students\": [";
    for (std::size_t s = 0; s < students.size(); ++s) {
        const Student& st = students[s];
        out << (s ? "," : "") << "\n    {\"student\": " << json_string(st.name) << ", \"score\": " << number(st.points)
            << ", \"max_score\": " << number(st.max_points);
        if (st.seconds >= 0) out << ", \"seconds\": " << number(st.seconds);
        out << ",\n     \"lessons\": [";
        for (std::size_t l = 0; l < st.lessons.size(); ++l) {
            const LessonGrade& g = st.lessons[l];
            out << (l ? "," : "") << "\n      {\"lesson\": " << json_string(g.lesson->number)
                << ", \"title\": " << json_string(g.lesson->title) << ", \"status\": " << json_string(g.status)
                << ", \"points\": " << number(g.points) << ", \"max_points\": " << number(g.max_points)
                << ", \"passed\": " << g.passed << ", \"total\": " << g.total
                << ", \"skipped\": " << g.skipped_tests
                << ",\n       \"reason\": " << json_string(g.reason) << ",\n       \"flags\": [";
            for (std::size_t f = 0; f < g.flags.size(); ++f) {
                const Flag& flag = g.flags[f];
                out << (f ? ", " : "") << "{\"file\": " << json_string(flag.file) << ", \"line\": " << flag.line
                    << ", \"call\": " << json_string(flag.call) << ", \"text\": " << json_string(flag.text)
                    << ", \"kind\": " << (flag.process_tampering ? "\"process\"" : "\"forbidden\"") << "}";
            }
            out << "],\n       \"tests\": [";
            for (std::size_t t = 0; t < g.tests.size(); ++t) {
                const TestGrade& test = g.tests[t];
                out << (t ? "," : "") << "\n        {\"name\": " << json_string(test.name)
                    << ", \"passed\": " << (test.passed ? "true" : "false") << ", \"points\": " << number(test.points)
                    << ", \"max_points\": " << number(test.max_points) << ", \"message\": " << json_string(test.message)
                    << "}";
            }
            out << "]}";
        }
        out << "]}";
    }
    out << "\n  ]\n}\n";
}

// JUnit XML as CI systems and GitHub Classroom read it: one testsuite per
// student, one testcase per test case (classname: the lesson), and one
// failing "builds" testcase for a lesson that does not compile.
// Adds a student's JUnit test cases, failures and skipped lessons to the counts.
void count_junit_cases(const Student& st, int& tests, int& failures, int& skipped) {
    for (const LessonGrade& g : st.lessons) {
        tests += g.tests.empty() ? 1 : static_cast<int>(g.tests.size());
        if (g.status == "SKIPPED") ++skipped;
        else failures += g.tests.empty() ? 1 : g.total - g.passed;
        tests += static_cast<int>(g.skipped_names.size());
        skipped += static_cast<int>(g.skipped_names.size());
    }
}

void write_junit(std::ostream& out, const Context& ctx, const std::vector<Student>& students) {
    (void)ctx;
    int tests = 0, failures = 0, skipped = 0;
    for (const Student& st : students) count_junit_cases(st, tests, failures, skipped);
    out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"CUDA course\" tests=\"" << tests
        << "\" failures=\"" << failures << "\" skipped=\"" << skipped << "\">\n";
    for (const Student& st : students) {
        int st_tests = 0, st_failures = 0, st_skipped = 0;
        count_junit_cases(st, st_tests, st_failures, st_skipped);
        const std::string prefix = st.name.empty() ? "" : st.name + ".";
        out << "  <testsuite name=\"" << xml_escape(st.name.empty() ? "course" : st.name) << "\" tests=\"" << st_tests
            << "\" failures=\"" << st_failures << "\" skipped=\"" << st_skipped << "\">\n";
        for (const LessonGrade& g : st.lessons) {
            const std::string classname = xml_escape(prefix + "lesson" + g.lesson->number);
            std::string flags;
            for (const Flag& f : g.flags) flags += flag_line(f) + "\n";
            if (g.status == "SKIPPED") {
                out << "    <testcase classname=\"" << classname << "\" name=\"runs\">\n      <skipped message=\""
                    << xml_escape(g.reason.substr(0, g.reason.find('\n'))) << "\"/>\n    </testcase>\n";
                continue;
            }
            if (g.tests.empty()) {
                out << "    <testcase classname=\"" << classname << "\" name=\""
                    << (g.status == "COMPILE ERROR" ? "builds" : "runs") << "\">\n      <failure message=\""
                    << xml_escape(g.status) << "\">" << xml_escape(g.reason) << "</failure>\n";
                if (!flags.empty()) out << "      <system-out>" << xml_escape(flags) << "</system-out>\n";
                out << "    </testcase>\n";
                continue;
            }
            for (const TestGrade& t : g.tests) {
                out << "    <testcase classname=\"" << classname << "\" name=\"" << xml_escape(t.name) << "\">\n";
                if (!t.passed) {
                    const std::string first = t.message.substr(0, t.message.find('\n'));
                    out << "      <failure message=\"" << xml_escape(first) << "\">" << xml_escape(t.message)
                        << "</failure>\n";
                }
                if (!flags.empty()) out << "      <system-out>" << xml_escape(flags) << "</system-out>\n";
                out << "    </testcase>\n";
            }
            for (const std::string& name : g.skipped_names) {
                out << "    <testcase classname=\"" << classname << "\" name=\"" << xml_escape(name)
                    << "\">\n      <skipped message=\"GPU only: skipped on the emulator\"/>\n    </testcase>\n";
            }
        }
        out << "  </testsuite>\n";
    }
    out << "</testsuites>\n";
}

void write_csv(std::ostream& out, const Context& ctx, const std::vector<Student>& students) {
    (void)ctx;
    out << "student";
    if (!students.empty()) {
        for (const LessonGrade& g : students.front().lessons) out << "," << g.lesson->number;
    }
    out << ",total,max,flagged\n";
    for (const Student& st : students) {
        out << csv_field(st.name);
        std::string flagged;
        for (const LessonGrade& g : st.lessons) {
            out << "," << (g.status == "SKIPPED" ? "" : number(g.points));  // empty: not graded here
            if (!g.flags.empty()) flagged += (flagged.empty() ? "" : " ") + g.lesson->number;
        }
        out << "," << number(st.points) << "," << number(st.max_points) << "," << csv_field(flagged) << "\n";
    }
}

// One student's grade as the autograders' lists take it: an entry per test
// case, or per lesson that did not build or is skipped here.
struct Entry {
    std::string name, status, output, visibility;  // status: passed, failed, or "" (a skipped lesson)
    double points = 0, max_points = 0;
};

std::vector<Entry> entries_of(const Context& ctx, const Student& st) {
    std::vector<Entry> entries;
    for (const LessonGrade& g : st.lessons) {
        std::string flags;
        for (const Flag& f : g.flags) flags += "\nFLAGGED: " + flag_line(f);
        const std::string heading = "Lesson " + g.lesson->number + " (" + g.lesson->title + "): ";
        const std::string visibility = ctx.visibility_of(g, "");
        if (g.status == "SKIPPED") {  // worth nothing here, but said
            entries.push_back({heading + "skipped", "", g.reason, visibility, 0, 0});
        } else if (g.tests.empty()) {
            entries.push_back({heading + g.status, "failed", g.reason + flags, visibility, 0, g.max_points});
        } else {
            for (const TestGrade& t : g.tests) {
                entries.push_back({heading + t.name, t.passed ? "passed" : "failed", t.message + flags,
                                   ctx.visibility_of(g, t.name), t.points, t.max_points});
            }
        }
    }
    return entries;
}

// Gradescope's results.json (one student): the score, and one test entry
// each with its score, max_score, status (passed or failed) and visibility;
// only fields Gradescope's "Autograder specifications" document (the maximum
// is the sum of the tests' max_score there).
void write_gradescope(std::ostream& out, const Context& ctx, const Student& st) {
    out << "{\n  \"score\": " << number(st.points) << ",\n  \"output\": "
        << json_string(number(st.points) + " of " + number(st.max_points) + " points. " + graded_on(ctx))
        << ",\n  \"tests\": [";
    bool first = true;
    for (const Entry& e : entries_of(ctx, st)) {
        out << (first ? "" : ",") << "\n    {\"name\": " << json_string(e.name) << ", \"score\": " << number(e.points)
            << ", \"max_score\": " << number(e.max_points);
        if (!e.status.empty()) out << ", \"status\": " << json_string(e.status);
        out << ", \"visibility\": " << json_string(e.visibility) << ", \"output\": " << json_string(e.output) << "}";
        first = false;
    }
    out << "\n  ]\n}\n";
}

// PrairieLearn's external grading results.json (one student): gradable (false
// only when no lesson could be built, so nothing ran), score from 0 to 1, a
// message, and one test entry each with points, max_points and a message
// (its first line) besides the full output.
void write_prairielearn(std::ostream& out, const Context& ctx, const Student& st) {
    bool any_built = false;
    for (const LessonGrade& g : st.lessons) any_built = any_built || g.status != "COMPILE ERROR";
    const double score = st.max_points > 0 ? st.points / st.max_points : 0;
    out << "{\n  \"gradable\": " << (any_built ? "true" : "false") << ",\n  \"score\": " << number(score)
        << ",\n  \"message\": "
        << json_string(number(st.points) + " of " + number(st.max_points) + " points. " + graded_on(ctx))
        << ",\n  \"tests\": [";
    bool first = true;
    for (const Entry& e : entries_of(ctx, st)) {
        out << (first ? "" : ",") << "\n    {\"name\": " << json_string(e.name)
            << ", \"points\": " << number(e.points) << ", \"max_points\": " << number(e.max_points)
            << ", \"message\": " << json_string(e.status.empty() ? "skipped" : e.status)
            << ", \"output\": " << json_string(e.output) << "}";
        first = false;
    }
    out << "\n  ]\n}\n";
}

// The formats of a report; gradescope's and prairielearn's hold one student.
// score: each student's points as "P/M" on a line (grade-all's progress lines).
const std::vector<std::string> kFormats = {"table", "json", "junit", "csv", "gradescope", "prairielearn", "score"};

// Writes the report of `students` in `format` (one of kFormats; gradescope
// and prairielearn: of the first student).
void write_format(std::ostream& out, const std::string& format, const Context& ctx,
                  const std::vector<Student>& students) {
    if (format == "table") write_table(out, ctx, students);
    else if (format == "json") write_json(out, ctx, students);
    else if (format == "junit") write_junit(out, ctx, students);
    else if (format == "csv") write_csv(out, ctx, students);
    else if (format == "gradescope") write_gradescope(out, ctx, students.front());
    else if (format == "prairielearn") write_prairielearn(out, ctx, students.front());
    else for (const Student& st : students) out << points_of(st.points, st.max_points) << "\n";
}

// A grade's state in the student's progress file (progress.hpp).
std::string progress_state(const LessonGrade& g) {
    if (g.status == "passed") return "passed";
    if (g.status == "COMPILE ERROR") return "compile error";
    if (g.status == "SKIPPED") return "skipped";
    return "failing";
}

// Records one student's grades in the progress file `path` (./course grade's).
// An unreadable file (edited by hand, cut short) is started afresh, saying
// so: a grade never fails for the progress it keeps.
void record_progress(const std::string& path, const Student& st) {
    progress::Book book;
    try {
        book = progress::read(path);
    } catch (const json::Error& e) {
        std::cerr << "course_report: the progress file is unreadable (" << e.what() << "); starting it afresh\n";
    }
    for (const LessonGrade& g : st.lessons) {
        progress::Record r;
        r.state = progress_state(g);
        r.passed = g.passed;
        r.tests = g.total;
        r.points = g.points;
        r.max_points = g.max_points;
        progress::record(book, g.lesson->number, r);
    }
    if (!progress::write(path, book)) throw json::Error("could not write the progress file " + path);
}

// Whether every lesson graded passed (a lesson this build skips does not count).
bool all_passed(const Student& st) {
    for (const LessonGrade& g : st.lessons) {
        if (g.status != "passed" && g.status != "SKIPPED") return false;
    }
    return true;
}

// Writes the report of `students` in `format` to the file `path`.
void write_file(const std::string& path, const std::string& format, const Context& ctx,
                const std::vector<Student>& students) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    write_format(out, format, ctx, students);
    if (!out.flush()) throw json::Error("could not write " + path);
}

// `--gradebook DIR` (./course grade-all): the class's gradebook in every
// format, gradebook.txt (the table), gradebook.csv, gradebook.json,
// results.xml (JUnit), and each student's Gradescope and PrairieLearn
// results.json in gradescope/NAME/ and prairielearn/NAME/.
void write_gradebook(const std::string& dir, const Context& ctx, const std::vector<Student>& students) {
    write_file(dir + "/gradebook.txt", "table", ctx, students);
    write_file(dir + "/gradebook.csv", "csv", ctx, students);
    write_file(dir + "/gradebook.json", "json", ctx, students);
    write_file(dir + "/results.xml", "junit", ctx, students);
    for (const Student& st : students) {
        for (const std::string tool : {"gradescope", "prairielearn"}) {
            const std::string folder = dir + "/" + tool + "/" + st.name;
            std::error_code error;
            std::filesystem::create_directories(folder, error);
            if (error) throw json::Error("could not create " + folder + ": " + error.message());
            write_file(folder + "/results.json", tool, ctx, {st});
        }
    }
}

// ------------------------------------------------------------ the driver's commands

// `manifest DIR ...`: what the driver asks of the manifest, printed plainly.
int manifest_command(const std::vector<std::string>& args) {
    const auto usage = [] {
        std::cerr << "usage: course_report manifest DIR lessons\n"
                     "       course_report manifest DIR lesson NN number|slug|title|points|bench|sources|forbid|skipped\n"
                     "       course_report manifest DIR configuration KEY\n";
        return 2;
    };
    if (args.size() < 2) return usage();
    const Manifest m = read_manifest(args[0]);
    const std::string& what = args[1];
    if (what == "lessons" && args.size() == 2) {
        for (const Lesson& lesson : m.lessons) std::cout << lesson.number << "\n";
        return 0;
    }
    if (what == "configuration" && args.size() == 3) {
        const auto found = m.config.find(args[2]);
        if (found == m.config.end()) {
            std::cerr << "course_report: the manifest's configuration has no key \"" << args[2] << "\"\n";
            return 2;
        }
        std::cout << found->second << "\n";
        return 0;
    }
    if (what != "lesson" || args.size() != 4) return usage();
    const std::string &wanted = args[2], &key = args[3];
    const auto lesson = std::find_if(m.lessons.begin(), m.lessons.end(),
                                     [&](const Lesson& l) { return l.number == wanted; });
    if (lesson == m.lessons.end()) {
        std::cerr << "course_report: the manifest has no lesson " << wanted << "\n";
        return 2;
    }
    const auto list = [](const std::vector<std::string>& items) {
        for (const std::string& item : items) std::cout << item << "\n";
    };
    if (key == "number") std::cout << lesson->number << "\n";
    else if (key == "slug") std::cout << lesson->slug << "\n";
    else if (key == "title") std::cout << lesson->title << "\n";
    else if (key == "points") std::cout << number(lesson->points) << "\n";
    else if (key == "bench") std::cout << (lesson->bench ? "true" : "false") << "\n";
    else if (key == "sources") list(lesson->sources);
    else if (key == "forbid") list(lesson->forbidden);
    else if (key == "skipped") std::cout << lesson->skipped << (lesson->skipped.empty() ? "" : "\n");
    else return usage();
    return 0;
}

// What the lesson pages say of each lesson against the manifest: README.md's
// lesson table (a row "| NN | [Title](lessons/NN-slug/README.md) | ..."),
// each lesson page's first line ("# Lesson NN — Title {#lessonNN}") and the
// lesson map (docs/figures/lesson-map.svg: a box numbered NN for every
// lesson, none for a lesson the course does not have; its titles are
// abridged to fit the boxes, so only the numbers are compared). Prints
// every disagreement; 1 when there is one.
int check_pages(const std::string& build_dir) {
    const Manifest m = read_manifest(build_dir);
    const auto root_found = m.config.find("root");
    if (root_found == m.config.end()) throw json::Error("the manifest's configuration has no root");
    const std::string root = root_found->second;
    std::vector<std::string> problems;
    std::set<std::string> numbers;
    for (const Lesson& l : m.lessons) numbers.insert(l.number);

    // README.md's table rows, by lesson number.
    std::map<std::string, std::vector<std::string>> rows;
    {
        std::istringstream readme(read_required(root + "/README.md", "the course's README"));
        std::string line;
        while (std::getline(readme, line)) {
            if (line.size() > 7 && line.compare(0, 2, "| ") == 0 && std::isdigit(static_cast<unsigned char>(line[2])) &&
                std::isdigit(static_cast<unsigned char>(line[3])) && line.compare(4, 3, " | ") == 0) {
                rows[line.substr(2, 2)].push_back(line);
            }
        }
    }
    for (const auto& [number, lines] : rows) {
        if (!numbers.count(number)) {
            problems.push_back("README.md: the lesson table has a row for lesson " + number +
                               ", which CMakeLists.txt does not register");
        }
    }
    for (const Lesson& l : m.lessons) {
        const std::string folder = l.number + "-" + l.slug;
        const std::string row_start = "| " + l.number + " | [" + l.title + "](lessons/" + folder + "/README.md) |";
        const auto found = rows.find(l.number);
        if (found == rows.end()) {
            problems.push_back("README.md: the lesson table has no row for lesson " + l.number + " (" + l.title + ")");
        } else if (found->second.size() > 1) {
            problems.push_back("README.md: the lesson table has " + std::to_string(found->second.size()) +
                               " rows for lesson " + l.number);
        } else if (found->second.front().compare(0, row_start.size(), row_start) != 0) {
            problems.push_back("README.md: lesson " + l.number + "'s row does not start with the manifest's title and page:\n" +
                               "    expected: " + row_start + "\n    found:    " +
                               found->second.front().substr(0, found->second.front().find(") |") + 3));
        }
        const std::string page = "lessons/" + folder + "/README.md";
        std::ifstream in(root + "/" + page, std::ios::binary);
        std::string first;
        if (!in || !std::getline(in, first)) {
            problems.push_back(page + ": missing or empty");
            continue;
        }
        const std::string heading = "# Lesson " + l.number + " \xe2\x80\x94 " + l.title + " {#lesson" + l.number + "}";
        if (first != heading) {
            problems.push_back(page + ":1: the title is not the manifest's:\n    expected: " + heading +
                               "\n    found:    " + first);
        }
    }

    // The lesson map: the boxes' numbers (20-pixel bold text holding two digits).
    const std::string map_path = "docs/figures/lesson-map.svg";
    const std::string map = read_required(root + "/" + map_path, "the lesson map");
    const std::string marker = "font-size=\"20\" font-weight=\"bold\">";
    std::map<std::string, int> boxes;
    for (std::size_t at = map.find(marker); at != std::string::npos; at = map.find(marker, at + 1)) {
        const std::size_t text = at + marker.size();
        if (map.compare(text + 2, 7, "</text>") == 0) ++boxes[map.substr(text, 2)];
    }
    for (const Lesson& l : m.lessons) {
        if (!boxes.count(l.number)) {
            problems.push_back(map_path + ": no box for lesson " + l.number + " (" + l.title + ")");
        } else if (boxes[l.number] > 1) {
            problems.push_back(map_path + ": " + std::to_string(boxes[l.number]) + " boxes for lesson " + l.number);
        }
    }
    for (const auto& [number, count] : boxes) {
        if (!numbers.count(number)) {
            problems.push_back(map_path + ": a box for lesson " + number + ", which CMakeLists.txt does not register");
        }
    }

    for (const std::string& p : problems) std::cout << p << "\n";
    if (!problems.empty()) {
        std::cout << problems.size() << " disagreement(s) with the lessons CMakeLists.txt registers "
                  << "(course_lesson()'s TITLE is the lesson's title)\n";
        return 1;
    }
    std::cout << "README.md's lesson table, the " << m.lessons.size()
              << " lesson pages' titles and the lesson map agree with the manifest\n";
    return 0;
}

// The value of attribute NAME in an XML start tag (the text from '<' to
// '>'), unescaped; "" when the tag has none.
std::string xml_attribute(const std::string& tag, const std::string& name) {
    for (std::size_t at = tag.find(name + "=\""); at != std::string::npos; at = tag.find(name + "=\"", at + 1)) {
        if (at == 0 || !std::isspace(static_cast<unsigned char>(tag[at - 1]))) continue;
        const std::size_t start = at + name.size() + 2, end = tag.find('"', start);
        if (end == std::string::npos) return "";
        return course_tools::xml_unescape(tag.substr(start, end - start));
    }
    return "";
}

// `course_report ctest-junit FILE`: what the JUnit file CTest wrote
// (ctest --output-junit) says of a run, read from its test cases rather than
// from CTest's printed summary, whose wording changes between CTest
// versions. Prints the "SKIP: " lines of the tests that passed (what they
// left untested), a "failed: NAME" line per failed test, then
// "P passed, F failed, N not run". Exit status: 0 when every test ran and
// passed or was not run by design (a skip), 1 when one failed, 2 when the
// file is missing or holds no test case.
int ctest_junit(const std::string& path) {
    const std::string xml = read_file(path);
    if (xml.find("<testsuite") == std::string::npos) {
        std::cerr << "course_report: " << path << " is not a CTest JUnit file (or is missing)\n";
        return 2;
    }
    int passed = 0, not_run = 0;
    std::vector<std::string> failed, skips;
    for (std::size_t at = xml.find("<testcase"); at != std::string::npos; at = xml.find("<testcase", at + 1)) {
        const std::size_t tag_end = xml.find('>', at);
        if (tag_end == std::string::npos) break;
        const std::string tag = xml.substr(at, tag_end - at + 1);
        std::string body;
        if (tag.size() < 2 || tag[tag.size() - 2] != '/') {
            const std::size_t close = xml.find("</testcase>", tag_end);
            body = xml.substr(tag_end + 1, close == std::string::npos ? std::string::npos : close - tag_end - 1);
        }
        const std::string status = xml_attribute(tag, "status"), name = xml_attribute(tag, "name");
        if (status == "run") {
            ++passed;
            const std::size_t out = body.find("<system-out>"), out_end = body.find("</system-out>");
            if (out == std::string::npos || out_end == std::string::npos || out_end < out) continue;
            std::istringstream lines(course_tools::xml_unescape(body.substr(out + 12, out_end - out - 12)));
            for (std::string line; std::getline(lines, line);) {
                if (line.rfind("SKIP: ", 0) == 0) skips.push_back(line);
            }
        } else if (status == "notrun" || status == "disabled") {
            ++not_run;
        } else {
            failed.push_back(name + (status == "fail" ? "" : " (status " + status + ")"));
        }
    }
    const int total = passed + not_run + static_cast<int>(failed.size());
    if (total == 0) {
        std::cerr << "course_report: " << path << " holds no test case: no test ran\n";
        return 2;
    }
    for (const std::string& line : skips) std::cout << line << "\n";
    for (const std::string& name : failed) std::cout << "failed: " << name << "\n";
    std::cout << passed << " passed, " << failed.size() << " failed, " << not_run << " not run\n";
    return failed.empty() ? 0 : 1;
}

// At most `width` characters of UTF-8 `text`, padded with spaces to `width`.
std::string column(const std::string& text, std::size_t width) {
    std::string out;
    std::size_t chars = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const bool starts_char = (static_cast<unsigned char>(text[i]) & 0xC0) != 0x80;
        if (starts_char && chars++ == width) break;
        out += text[i];
    }
    return out + std::string(chars < width ? width - chars : 0, ' ');
}

std::string right(const std::string& text, std::size_t width) {
    return std::string(text.size() < width ? width - text.size() : 0, ' ') + text;
}

// The first lesson of `manifest` that `book` has not seen pass and the build
// runs; nullptr when every one has passed.
const Lesson* next_lesson(const Manifest& manifest, const progress::Book& book) {
    for (const Lesson& lesson : manifest.lessons) {
        if (!lesson.skipped.empty()) continue;
        const auto found = book.find(lesson.number);
        if (found == book.end() || found->second.state != "passed") return &lesson;
    }
    return nullptr;
}

// `./course status`: each lesson of the build's manifest, its state, tests
// and points from the progress, the total, and the next lesson to take.
void print_status(const Manifest& manifest, const progress::Book& book) {
    const auto row = [](const std::string& n, const std::string& title, const std::string& state,
                        const std::string& tests, const std::string& points) {
        std::cout << "  " << column(n, 3) << " " << column(title, 34) << " " << column(state, 27) << " "
                  << right(tests, 7) << " " << right(points, 12) << "\n";
    };
    row("#", "lesson", "state", "tests", "points");
    double got = 0, max = 0;
    for (const Lesson& lesson : manifest.lessons) {
        const auto found = book.find(lesson.number);
        const progress::Record* r = found == book.end() ? nullptr : &found->second;
        std::string state, tests = "-", points = "-";
        if (!lesson.skipped.empty() || (r && r->state == "skipped")) {
            state = "skipped here (needs a GPU)";
        } else {
            if (!r) state = "not started";
            else if (r->state == "passed") state = "passed " + r->first_passed;
            else if (r->state == "compile error") state = "does not compile";
            else state = r->first_passed.empty() ? "in progress" : "failing (passed " + r->first_passed + ")";
            if (r && r->state != "compile error") tests = std::to_string(r->passed) + "/" + std::to_string(r->tests);
            const double earned = r ? r->points : 0;
            points = points_of(earned, lesson.points);
            got += earned;
            max += lesson.points;
        }
        row(lesson.number, lesson.title, state, tests, points);
    }
    row("", "total", "", "", points_of(got, max));
    if (const Lesson* next = next_lesson(manifest, book)) {
        std::cout << "next: lesson " << next->number << ", " << next->title << " (./course watch " << next->number
                  << ", or ./course grade " << next->number << ")\n";
    } else {
        std::cout << "every lesson passed here. Well done.\n";
    }
}

// `progress FILE status DIR | next DIR | passed NN`: what the driver asks of
// the progress file (progress.hpp).
int progress_command(const std::vector<std::string>& args) {
    if (args.size() == 3 && (args[1] == "status" || args[1] == "next")) {
        const Manifest manifest = read_manifest(args[2]);
        const progress::Book book = progress::read(args[0]);
        if (args[1] == "status") print_status(manifest, book);
        else if (const Lesson* next = next_lesson(manifest, book)) std::cout << next->number << "\n";
        return 0;
    }
    if (args.size() == 3 && args[1] == "passed") {
        // Exit 0 when lesson NN has ever passed; else 1, printing why not in
        // words ("it was never graded", or what its last grade found).
        const progress::Book book = progress::read(args[0]);
        const auto found = book.find(args[2]);
        if (found == book.end()) {
            std::cout << "it was never graded\n";
            return 1;
        }
        const progress::Record& r = found->second;
        if (!r.first_passed.empty()) return 0;
        std::cout << "the last grade, " << r.graded << ", "
                  << (r.state == "compile error" ? std::string("did not compile")
                                                 : "passed " + std::to_string(r.passed) + " of " +
                                                       std::to_string(r.tests) + " tests")
                  << "\n";
        return 1;
    }
    std::cerr << "usage: course_report progress FILE status DIR | next DIR | passed NN\n";
    return 2;
}

int run_command(const std::string& command, const std::vector<std::string>& args) {
    try {
        if (command == "manifest") return manifest_command(args);
        if (command == "progress") return progress_command(args);
        if (command == "check-pages" && args.size() == 1) return check_pages(args[0]);
        if (command == "ctest-junit" && args.size() == 1) return ctest_junit(args[0]);
        if (command == "build-error" && args.size() == 1) {
            // One line of the build status, the message read from stdin.
            std::ostringstream message;
            message << std::cin.rdbuf();
            std::cout << "{\"lesson\": " << json::quote(args[0]) << ", \"status\": \"compile error\", \"message\": "
                      << json::quote(message.str()) << "}\n";
            return 0;
        }
        if (command == "build-status" && args.size() == 1) {
            for (const auto& entry : read_build_status(args[0])) std::cout << entry.first << "\n";
            return 0;
        }
    } catch (const json::Error& e) {
        std::cerr << "course_report: " << e.what() << "\n";
        return 2;
    }
    std::cerr << "usage: course_report manifest DIR lessons | lesson NN KEY | configuration KEY\n"
                 "       course_report progress FILE status DIR | next DIR | passed NN\n"
                 "       course_report build-error NN < MESSAGE\n"
                 "       course_report build-status FILE\n"
                 "       course_report check-pages DIR\n"
                 "       course_report ctest-junit FILE\n";
    return 2;
}

int usage() {
    std::cerr << "usage: course_report --build DIR [--format table|json|junit|csv|gradescope|prairielearn|score]\n"
                 "                     [--isolation TEXT] [--visibility [NN=]V] [--hidden-visibility V]\n"
                 "                     [--student NAME] [--tests FILE] [--results FILE] [--build-status FILE]\n"
                 "                     [--sources DIR] [--seconds S] [--student NAME ...] [--graded DIR ...]\n"
                 "                     [--progress FILE] [--exit-status] [--gradebook DIR] [NN ...]\n";
    return 2;
}

// The student graded in the folder DIR (--graded), and ISOLATION the
// sandbox's description there, when it has one.
Student graded_in(std::string dir, std::string& isolation) {
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    Student st;
    st.name = std::filesystem::path(dir).filename().string();
    st.tests = dir + "/tests.jsonl";
    st.results = dir + "/results.jsonl";
    st.build_status = dir + "/build-status.json";
    st.sources = dir + "/work/src";
    std::ifstream seconds(dir + "/seconds");
    double s = 0;
    if (seconds >> s) st.seconds = s;
    std::string text = read_file(dir + "/isolation");
    while (!text.empty() && text.back() == '\n') text.pop_back();
    if (!text.empty()) isolation = text;
    return st;
}

bool known_visibility(const std::string& v) {
    return v == "visible" || v == "hidden" || v == "after_due_date" || v == "after_published";
}

}  // namespace

int main(int argc, char** argv) {
    if (argc >= 2) {
        const std::string command = argv[1];
        if (command == "manifest" || command == "progress" || command == "build-error" ||
            command == "build-status" || command == "check-pages" || command == "ctest-junit") {
            return run_command(command, std::vector<std::string>(argv + 2, argv + argc));
        }
    }
    std::string build_dir, format = "table", progress_path, gradebook, graded_isolation;
    bool exit_status = false;
    Context ctx;
    std::set<std::string> selected;
    std::vector<Student> students(1);  // the unnamed student, until a --student names one
    bool named = false;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        const bool has_value = i + 1 < argc;
        if (arg == "--build" && has_value) build_dir = argv[++i];
        else if (arg == "--format" && has_value) format = argv[++i];
        else if (arg == "--isolation" && has_value) ctx.isolation = argv[++i];
        else if (arg == "--progress" && has_value) progress_path = argv[++i];
        else if (arg == "--gradebook" && has_value) gradebook = argv[++i];
        else if (arg == "--exit-status") exit_status = true;
        else if ((arg == "--visibility" || arg == "--hidden-visibility") && has_value) {
            const std::string value = argv[++i];
            const std::size_t eq = value.find('=');
            const std::string v = eq == std::string::npos ? value : value.substr(eq + 1);
            if (!known_visibility(v)) {
                std::cerr << "course_report: visibility '" << v
                          << "' is none of Gradescope's: visible, hidden, after_due_date, after_published\n";
                return 2;
            }
            if (arg == "--hidden-visibility") ctx.hidden_visibility = v;
            else if (eq == std::string::npos) ctx.default_visibility = v;
            else ctx.visibility[value.substr(0, eq)] = v;
        }
        else if ((arg == "--student" || arg == "--graded") && has_value) {
            if (named) students.emplace_back();
            named = true;
            if (arg == "--student") students.back().name = argv[++i];
            else students.back() = graded_in(argv[++i], graded_isolation);
        } else if (arg == "--tests" && has_value) students.back().tests = argv[++i];
        else if (arg == "--results" && has_value) students.back().results = argv[++i];
        else if (arg == "--build-status" && has_value) students.back().build_status = argv[++i];
        else if (arg == "--sources" && has_value) students.back().sources = argv[++i];
        else if (arg == "--seconds" && has_value) students.back().seconds = std::stod(argv[++i]);
        else if (!arg.empty() && arg[0] != '-') selected.insert(arg);
        else return usage();
    }
    if (ctx.isolation.empty()) ctx.isolation = graded_isolation;
    if (build_dir.empty()) {
        std::cerr << "course_report: --build DIR is required\n";
        return usage();
    }
    if (std::find(kFormats.begin(), kFormats.end(), format) == kFormats.end()) {
        std::cerr << "course_report: unknown format '" << format << "' (";
        for (const std::string& known : kFormats) std::cerr << (&known == &kFormats.front() ? "" : ", ") << known;
        std::cerr << ")\n";
        return 2;
    }
    if ((!progress_path.empty() || exit_status) && students.size() != 1) {
        std::cerr << "course_report: --progress and --exit-status are of one student\n";
        return 2;
    }
    if ((format == "gradescope" || format == "prairielearn") && students.size() != 1) {
        std::cerr << "course_report: " << format << "'s results.json holds one student; give one --student\n";
        return 2;
    }

    std::vector<Lesson> lessons;
    try {
        Manifest manifest = read_manifest(build_dir);
        ctx.config = manifest.config;
        for (const Lesson& lesson : manifest.lessons) {
            if (selected.empty() || selected.count(lesson.number)) lessons.push_back(lesson);
        }
        for (Student& st : students) grade(st, lessons, ctx.config["root"]);
    } catch (const json::Error& e) {
        std::cerr << "course_report: " << e.what() << "\n";
        return 2;
    }

    write_format(std::cout, format, ctx, students);
    try {
        if (!gradebook.empty()) write_gradebook(gradebook, ctx, students);
        if (!progress_path.empty()) record_progress(progress_path, students.front());
    } catch (const json::Error& e) {
        std::cerr << "course_report: " << e.what() << "\n";
        return 2;
    }
    if (exit_status && !all_passed(students.front())) return 1;
    return 0;
}
