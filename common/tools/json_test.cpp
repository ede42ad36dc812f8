// Tests of common/tools/json.hpp, the strict JSON reader course_report reads
// the lesson manifest and the build status with. A plain program (no test
// framework: the tools build without one): prints each failed expectation
// and exits 1 when there is one. Registered as a CTest test by a check tree.
#include <cmath>
#include <iostream>
#include <string>

#include "json.hpp"

namespace {

namespace json = course_tools::json;

int failures = 0;

void expect(bool ok, const std::string& what) {
    if (!ok) {
        ++failures;
        std::cerr << "FAILED: " << what << "\n";
    }
}

// The message `text` is refused with, or "" when it parses.
std::string refusal(const std::string& text) {
    try {
        json::parse(text, "doc.json");
    } catch (const json::Error& e) {
        return e.what();
    }
    return "";
}

void expect_refused(const std::string& text, const std::string& message_part) {
    const std::string got = refusal(text);
    expect(!got.empty() && got.find(message_part) != std::string::npos,
           "refuses " + text + " saying \"" + message_part + "\" (got \"" + got + "\")");
}

}  // namespace

int main() {
    // A manifest's shape: objects, arrays, strings, numbers, booleans.
    const json::Value doc = json::parse(
        "{\"configuration\": {\"backend\": \"emu\"},\n"
        " \"lessons\": [{\"number\": \"01\", \"points\": 10, \"bench\": true, \"sources\": [\"a.cu\", \"b.cu\"],"
        " \"forbid\": [], \"skipped\": \"\", \"none\": null}]}",
        "manifest.json");
    expect(doc.at("configuration").at("backend").as_string() == "emu", "reads a nested string");
    const json::Value& lesson = doc.at("lessons").as_array().at(0);
    expect(lesson.at("number").as_string() == "01", "keeps a number written as a string a string");
    expect(lesson.at("points").as_number() == 10, "reads an integer");
    expect(lesson.at("bench").as_bool(), "reads true");
    expect(lesson.at("sources").as_strings() == std::vector<std::string>{"a.cu", "b.cu"}, "reads an array of strings");
    expect(lesson.at("forbid").as_strings().empty(), "reads an empty array");
    expect(lesson.at("none").type == json::Value::Type::null, "reads null");
    expect(lesson.find("absent") == nullptr, "finds no absent key");

    // Numbers, as RFC 8259 writes them.
    expect(json::parse("-0.5e2", "n").as_number() == -50, "reads a negative number with a fraction and an exponent");
    expect(json::parse("0", "n").as_number() == 0, "reads zero");
    expect(std::fabs(json::parse("2.5E-1", "n").as_number() - 0.25) < 1e-15, "reads a capital exponent");

    // Escapes, \u ones to UTF-8 (a surrogate pair to one code point).
    expect(json::parse("\"a\\\"b\\\\c\\/d\\n\\t\\r\\b\\f\"", "s").as_string() == "a\"b\\c/d\n\t\r\b\f",
           "reads the short escapes");
    expect(json::parse("\"\\u00e9\\u2014\\ud83d\\ude00\\u0001\"", "s").as_string() ==
               "\xc3\xa9\xe2\x80\x94\xf0\x9f\x98\x80\x01",
           "reads \\u escapes as UTF-8, a surrogate pair as one code point");
    expect(json::parse("\"d\xc3\xa9j\xc3\xa0\"", "s").as_string() == "d\xc3\xa9j\xc3\xa0", "keeps raw UTF-8");

    // quote() and parse() agree on every byte but NUL-free text's.
    std::string all;
    for (int c = 1; c < 256; ++c) all += static_cast<char>(c);
    expect(json::parse(json::quote(all), "q").as_string() == all, "parses back what quote() wrote, every byte");
    expect(json::quote("a\"b\\c\nd\x1f") == "\"a\\\"b\\\\c\\nd\\u001f\"", "quote() escapes quotes, backslashes, controls");

    // Strict: what a lenient reader would let through is refused, with where.
    expect_refused("{\"a\": 1,}", "doc.json:1:9: expected a key");
    expect_refused("[1, 2,]", "expected a value");
    expect_refused("{\"a\": 1, \"a\": 2}", "duplicate key \"a\"");
    expect_refused("{'a': 1}", "expected a key");
    expect_refused("// note\n{}", "expected a value");
    expect_refused("{}\n x", "doc.json:2:2: expected the end of the document");
    expect_refused("012", "no leading zero");
    expect_refused("1.", "expected a digit after the decimal point");
    expect_refused("-", "expected a digit");
    expect_refused("1e", "exponent");
    expect_refused("\"a\nb\"", "control character in a string must be escaped");
    expect_refused("\"\\x\"", "unknown escape");
    expect_refused("\"\\u12\"", "four hexadecimal digits");
    expect_refused("\"\\udc00\"", "low surrogate");
    expect_refused("\"\\ud800x\"", "high surrogate");
    expect_refused("\"abc", "closing");
    expect_refused("", "expected a value");
    expect_refused("tru", "expected a value");
    expect_refused("{\"a\" 1}", "expected ':'");
    expect_refused("[1 2]", "expected ',' or ']'");
    expect_refused(std::string(65, '[') + std::string(65, ']'), "deeper than 64");
    expect(refusal(std::string(64, '[') + std::string(64, ']')).empty(), "takes 64 levels of nesting");

    // A line of a JSON-lines file is named by its line in the file.
    try {
        json::parse("{\"a\": x}", "status.json", 3);
        expect(false, "x is no value");
    } catch (const json::Error& e) {
        expect(std::string(e.what()).rfind("status.json:3:7: ", 0) == 0,
               std::string("an error names the line counted from first_line (got \"") + e.what() + "\")");
    }

    // The shape asked for: a wrong type or a missing key says where.
    const json::Value object = json::parse("{\n  \"title\": 3\n}", "m.json");
    try {
        object.at("title").as_string();
        expect(false, "a number is not a string");
    } catch (const json::Error& e) {
        expect(std::string(e.what()) == "m.json:2:12: expected a string, found a number",
               std::string("a type mismatch names the value's place (got \"") + e.what() + "\")");
    }
    try {
        object.at("slug");
        expect(false, "a missing key throws");
    } catch (const json::Error& e) {
        expect(std::string(e.what()) == "m.json:1:1: the object has no key \"slug\"",
               std::string("a missing key names the object's place (got \"") + e.what() + "\")");
    }

    if (failures == 0) std::cout << "json.hpp: every expectation held\n";
    return failures == 0 ? 0 : 1;
}
