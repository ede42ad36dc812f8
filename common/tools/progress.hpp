/// @file progress.hpp
/// @brief A student's progress between sessions: what each `./course grade`
/// of one source folder (starter/, or the folder COURSE_SOURCE names) found,
/// kept in one JSON file of the build folder (build/progress/starter.json),
/// written by course_report after the grade and read by it for
/// `./course status`, `watch` (the next lesson) and `solution` (the gate).
///
/// The file, written whole to a temporary file and renamed over the old one:
///
///     {"format": 1, "lessons": {
///       "01": {"state": "passed", "passed": 6, "tests": 6, "points": 10, "max_points": 10,
///              "graded": "2026-11-26 10:04", "first_passed": "2026-11-26"},
///       "02": {"state": "failing", ..., "first_passed": null}}}
///
/// state: passed, failing, compile error or skipped (a GPU-only lesson on the
/// emulator). first_passed is the day the lesson first passed, kept through
/// later failing grades. A progress file of the earlier tab-separated form
/// (build/progress/starter.tsv, the same columns in that order) is read once
/// where no JSON file is there yet. C++17, header only.
#pragma once

#include <cstdio>
#include <ctime>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <unistd.h>

#include "json.hpp"

namespace course_tools::progress {

/// @brief The last grade of one lesson.
struct Record {
    std::string state;         ///< passed, failing, compile error or skipped
    int passed = 0, tests = 0;  ///< test cases passed, of those run
    double points = 0, max_points = 0;
    std::string graded;        ///< when, "YYYY-MM-DD HH:MM" (local time)
    std::string first_passed;  ///< the day it first passed, "YYYY-MM-DD"; empty: never
};

/// @brief Every lesson graded so far, by number ("01").
using Book = std::map<std::string, Record>;

namespace detail {

inline bool read_text(const std::string& path, std::string& text) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return false;
    std::ostringstream buffer;
    buffer << in.rdbuf();
    text = buffer.str();
    return true;
}

// The earlier form: lesson, state, passed, tests, points, max points, when,
// first passed ("-": never), tab-separated, a line a lesson.
inline Book read_tsv(const std::string& text) {
    Book book;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        std::string cell[8];
        std::istringstream fields(line);
        int n = 0;
        while (n < 8 && std::getline(fields, cell[n], '\t')) ++n;
        if (n < 8 || cell[0].empty()) continue;  // not a row of that form: ignored
        Record r;
        r.state = cell[1];
        r.passed = std::atoi(cell[2].c_str());
        r.tests = std::atoi(cell[3].c_str());
        r.points = std::atof(cell[4].c_str());
        r.max_points = std::atof(cell[5].c_str());
        r.graded = cell[6];
        r.first_passed = cell[7] == "-" ? "" : cell[7];
        book[cell[0]] = r;
    }
    return book;
}

}  // namespace detail

/// @brief The progress in `path`; empty when neither it nor the earlier
/// form's file (`path` with .tsv for .json) exists. Throws json::Error,
/// naming the file, line and key, when the file is not of the form above.
inline Book read(const std::string& path) {
    std::string text;
    if (!detail::read_text(path, text)) {
        const std::size_t dot = path.rfind(".json");
        if (dot != std::string::npos && detail::read_text(path.substr(0, dot) + ".tsv", text)) {
            return detail::read_tsv(text);
        }
        return {};
    }
    const json::Value doc = json::parse(text, path);
    if (doc.at("format").as_number() != 1) throw json::Error(path + ": a progress file of another format");
    Book book;
    const json::Value& lessons = doc.at("lessons");
    lessons.expect(json::Value::Type::object, "an object");
    for (const json::Member& m : lessons.members) {
        const json::Value& v = m.second;
        Record r;
        r.state = v.at("state").as_string();
        r.passed = static_cast<int>(v.at("passed").as_number());
        r.tests = static_cast<int>(v.at("tests").as_number());
        r.points = v.at("points").as_number();
        r.max_points = v.at("max_points").as_number();
        r.graded = v.at("graded").as_string();
        const json::Value& first = v.at("first_passed");
        r.first_passed = first.type == json::Value::Type::null ? "" : first.as_string();
        book[m.first] = r;
    }
    return book;
}

/// @brief Writes `book` to `path` whole: a temporary file beside it, renamed
/// over it, so an interrupted grade leaves the old progress, never half a
/// file. Returns false when it could not.
inline bool write(const std::string& path, const Book& book) {
    const std::string temporary = path + "." + std::to_string(::getpid());
    {
        std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
        out << "{\"format\": 1, \"lessons\": {";
        bool first = true;
        for (const auto& [lesson, r] : book) {
            out << (first ? "" : ",") << "\n  " << json::quote(lesson) << ": {\"state\": " << json::quote(r.state)
                << ", \"passed\": " << r.passed << ", \"tests\": " << r.tests
                << ", \"points\": " << json::number(r.points) << ", \"max_points\": " << json::number(r.max_points)
                << ", \"graded\": " << json::quote(r.graded)
                << ", \"first_passed\": " << (r.first_passed.empty() ? "null" : json::quote(r.first_passed)) << "}";
            first = false;
        }
        out << "\n}}\n";
        if (!out.flush()) {
            std::remove(temporary.c_str());
            return false;
        }
    }
    if (std::rename(temporary.c_str(), path.c_str()) != 0) {
        std::remove(temporary.c_str());
        return false;
    }
    return true;
}

/// @brief The local time now as "YYYY-MM-DD HH:MM".
inline std::string now() {
    const std::time_t t = std::time(nullptr);
    std::tm local{};
    localtime_r(&t, &local);
    char buffer[32];
    std::strftime(buffer, sizeof buffer, "%Y-%m-%d %H:%M", &local);
    return buffer;
}

/// @brief Records lesson `number`'s new grade `r` (its graded time set
/// here), keeping the day it first passed, or setting it to today.
inline void record(Book& book, const std::string& number, Record r) {
    r.graded = now();
    const auto old = book.find(number);
    r.first_passed = old != book.end() ? old->second.first_passed : "";
    if (r.state == "passed" && r.first_passed.empty()) r.first_passed = r.graded.substr(0, 10);
    book[number] = r;
}

}  // namespace course_tools::progress
