/// @file json.hpp
/// @brief A small, strict JSON reader and a string and number writer for the
/// driver's tools: what course_report and course_run_tests need to read the
/// lesson manifest CMake writes (<build>/course/manifest.json) and the JSON
/// lines they pass each other (build status, test list, results, progress),
/// and to write JSON strings and numbers. No external library: the GPU
/// machines have none.
///
/// Strict: RFC 8259 only (no comments, no trailing commas, no single quotes,
/// no leading zeros, no raw control characters in strings, no duplicate keys,
/// nothing after the value), nested at most 64 deep. Every error names the
/// source, the line and the column, and says what was expected.
/// C++17, header only.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace course_tools::json {

/// @brief A malformed document, or a value not of the shape asked for; the
/// message names where.
struct Error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct Member;

/// @brief One JSON value. Objects keep their members in document order.
struct Value {
    enum class Type { null, boolean, number, string, array, object };
    Type type = Type::null;
    bool boolean = false;
    double number = 0;
    std::string string;
    std::vector<Value> items;                             // an array's
    std::vector<Member> members;  // an object's (a vector of an incomplete type: allowed since C++17)
    std::string where;  // "source:line:column" of the value, for errors about its shape

    static const char* type_name(Type t) {
        switch (t) {
        case Type::null: return "null";
        case Type::boolean: return "a boolean";
        case Type::number: return "a number";
        case Type::string: return "a string";
        case Type::array: return "an array";
        case Type::object: return "an object";
        }
        return "?";
    }

    /// @brief The member `key` of an object, or nullptr when it has none.
    const Value* find(const std::string& key) const;  // defined below Member, which it needs complete

    /// @brief The member `key` of an object; throws naming the object when it is missing.
    const Value& at(const std::string& key) const {
        const Value* found = find(key);
        if (found == nullptr) throw Error(where + ": the object has no key \"" + key + "\"");
        return *found;
    }

    const std::string& as_string() const { return expect(Type::string, "a string").string; }
    double as_number() const { return expect(Type::number, "a number").number; }
    bool as_bool() const { return expect(Type::boolean, "true or false").boolean; }
    const std::vector<Value>& as_array() const { return expect(Type::array, "an array").items; }

    /// @brief An array of strings as a vector.
    std::vector<std::string> as_strings() const {
        std::vector<std::string> out;
        for (const Value& item : as_array()) out.push_back(item.as_string());
        return out;
    }

    const Value& expect(Type t, const char* what) const {
        if (type != t) throw Error(where + ": expected " + what + ", found " + type_name(type));
        return *this;
    }
};

/// @brief One member of an object: its key and its value. (Not a std::pair:
/// a pair of an incomplete Value may not be instantiated, and Clang's
/// libstdc++ checks refuse it.)
struct Member {
    std::string first;  ///< the key
    Value second;       ///< the value
};

inline const Value* Value::find(const std::string& key) const {
    expect(Type::object, "an object");
    for (const auto& member : members) {
        if (member.first == key) return &member.second;
    }
    return nullptr;
}

/// @brief `s` as a JSON string literal, quotes included: `"` and `\` escaped,
/// control characters as \n, \t, \r or \u00XX. Other bytes (UTF-8) as they are.
inline std::string quote(const std::string& s) {
    std::string out = "\"";
    for (const unsigned char c : s) {
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\t': out += "\\t"; break;
        case '\r': out += "\\r"; break;
        default:
            if (c < 0x20 || c == 0x7f) {
                char buffer[8];
                std::snprintf(buffer, sizeof buffer, "\\u%04x", c);
                out += buffer;
            } else {
                out += static_cast<char>(c);
            }
        }
    }
    return out + "\"";
}

namespace detail {

class Parser {
public:
    Parser(const std::string& text, std::string source, int first_line)
        : text_(text), source_(std::move(source)), first_line_(first_line) {}

    Value document() {
        skip_space();
        Value v = value(0);
        skip_space();
        if (at_ < text_.size()) fail("expected the end of the document after the value");
        return v;
    }

private:
    static constexpr int kMaxDepth = 64;
    const std::string& text_;
    std::string source_;
    int first_line_;
    std::size_t at_ = 0;

    std::string position(std::size_t at) const {
        int line = first_line_, column = 1;
        for (std::size_t i = 0; i < at && i < text_.size(); ++i) {
            if (text_[i] == '\n') ++line, column = 1;
            else ++column;
        }
        return source_ + ":" + std::to_string(line) + ":" + std::to_string(column);
    }

    [[noreturn]] void fail(const std::string& what) const { fail_at(at_, what); }
    [[noreturn]] void fail_at(std::size_t at, const std::string& what) const {
        std::string found = at < text_.size() ? std::string("'") + text_[at] + "'" : std::string("the end");
        if (at < text_.size() && static_cast<unsigned char>(text_[at]) < 0x20) found = "a control character";
        throw Error(position(at) + ": " + what + " (found " + found + ")");
    }

    void skip_space() {
        while (at_ < text_.size() &&
               (text_[at_] == ' ' || text_[at_] == '\t' || text_[at_] == '\n' || text_[at_] == '\r')) {
            ++at_;
        }
    }

    bool take(const char* word) {
        std::size_t n = 0;
        while (word[n] != '\0') ++n;
        if (text_.compare(at_, n, word) != 0) return false;
        at_ += n;
        return true;
    }

    Value value(int depth) {
        if (depth >= kMaxDepth) fail("nested deeper than 64 levels");
        Value v;
        v.where = position(at_);
        if (at_ >= text_.size()) fail("expected a value");
        const char c = text_[at_];
        if (c == '{') {
            v.type = Value::Type::object;
            ++at_;
            skip_space();
            if (at_ < text_.size() && text_[at_] == '}') return ++at_, v;
            for (;;) {
                skip_space();
                if (at_ >= text_.size() || text_[at_] != '"') fail("expected a key (a string in double quotes)");
                const std::size_t key_at = at_;
                std::string key = string();
                for (const auto& member : v.members) {
                    if (member.first == key) fail_at(key_at, "duplicate key \"" + key + "\"");
                }
                skip_space();
                if (at_ >= text_.size() || text_[at_] != ':') fail("expected ':' after the key");
                ++at_;
                skip_space();
                Value member = value(depth + 1);
                v.members.push_back(Member{std::move(key), std::move(member)});
                skip_space();
                if (at_ < text_.size() && text_[at_] == ',') { ++at_; continue; }
                if (at_ < text_.size() && text_[at_] == '}') return ++at_, v;
                fail("expected ',' or '}' in the object");
            }
        }
        if (c == '[') {
            v.type = Value::Type::array;
            ++at_;
            skip_space();
            if (at_ < text_.size() && text_[at_] == ']') return ++at_, v;
            for (;;) {
                skip_space();
                v.items.push_back(value(depth + 1));
                skip_space();
                if (at_ < text_.size() && text_[at_] == ',') { ++at_; continue; }
                if (at_ < text_.size() && text_[at_] == ']') return ++at_, v;
                fail("expected ',' or ']' in the array");
            }
        }
        if (c == '"') {
            v.type = Value::Type::string;
            v.string = string();
            return v;
        }
        if (take("true")) { v.type = Value::Type::boolean; v.boolean = true; return v; }
        if (take("false")) { v.type = Value::Type::boolean; return v; }
        if (take("null")) return v;
        if (c == '-' || (c >= '0' && c <= '9')) {
            v.type = Value::Type::number;
            v.number = number();
            return v;
        }
        fail("expected a value (an object, array, string, number, true, false or null)");
    }

    bool digit() const { return at_ < text_.size() && text_[at_] >= '0' && text_[at_] <= '9'; }

    double number() {
        const std::size_t start = at_;
        if (text_[at_] == '-') ++at_;
        if (!digit()) fail("expected a digit");
        if (text_[at_] == '0') {
            ++at_;
            if (digit()) fail_at(at_ - 1, "a number has no leading zero");
        } else {
            while (digit()) ++at_;
        }
        if (at_ < text_.size() && text_[at_] == '.') {
            ++at_;
            if (!digit()) fail("expected a digit after the decimal point");
            while (digit()) ++at_;
        }
        if (at_ < text_.size() && (text_[at_] == 'e' || text_[at_] == 'E')) {
            ++at_;
            if (at_ < text_.size() && (text_[at_] == '+' || text_[at_] == '-')) ++at_;
            if (!digit()) fail("expected a digit in the exponent");
            while (digit()) ++at_;
        }
        return std::strtod(text_.substr(start, at_ - start).c_str(), nullptr);
    }

    unsigned hex4() {
        unsigned code = 0;
        for (int i = 0; i < 4; ++i, ++at_) {
            if (at_ >= text_.size()) fail("expected four hexadecimal digits after \\u");
            const char h = text_[at_];
            code <<= 4;
            if (h >= '0' && h <= '9') code |= static_cast<unsigned>(h - '0');
            else if (h >= 'a' && h <= 'f') code |= static_cast<unsigned>(h - 'a' + 10);
            else if (h >= 'A' && h <= 'F') code |= static_cast<unsigned>(h - 'A' + 10);
            else fail("expected four hexadecimal digits after \\u");
        }
        return code;
    }

    static void append_utf8(std::string& out, unsigned code) {
        if (code < 0x80) {
            out += static_cast<char>(code);
        } else if (code < 0x800) {
            out += static_cast<char>(0xc0 | (code >> 6));
            out += static_cast<char>(0x80 | (code & 0x3f));
        } else if (code < 0x10000) {
            out += static_cast<char>(0xe0 | (code >> 12));
            out += static_cast<char>(0x80 | ((code >> 6) & 0x3f));
            out += static_cast<char>(0x80 | (code & 0x3f));
        } else {
            out += static_cast<char>(0xf0 | (code >> 18));
            out += static_cast<char>(0x80 | ((code >> 12) & 0x3f));
            out += static_cast<char>(0x80 | ((code >> 6) & 0x3f));
            out += static_cast<char>(0x80 | (code & 0x3f));
        }
    }

    // At the opening quote; leaves the position after the closing one.
    std::string string() {
        std::string out;
        ++at_;
        for (;;) {
            if (at_ >= text_.size()) fail("expected the closing '\"' of the string");
            const char c = text_[at_];
            if (c == '"') return ++at_, out;
            if (static_cast<unsigned char>(c) < 0x20) fail("a control character in a string must be escaped");
            if (c != '\\') {
                out += c;
                ++at_;
                continue;
            }
            ++at_;
            if (at_ >= text_.size()) fail("expected an escape after '\\'");
            const char e = text_[at_++];
            switch (e) {
            case '"': out += '"'; break;
            case '\\': out += '\\'; break;
            case '/': out += '/'; break;
            case 'b': out += '\b'; break;
            case 'f': out += '\f'; break;
            case 'n': out += '\n'; break;
            case 'r': out += '\r'; break;
            case 't': out += '\t'; break;
            case 'u': {
                const std::size_t escape_at = at_ - 2;
                unsigned code = hex4();
                if (code >= 0xdc00 && code <= 0xdfff) fail_at(escape_at, "a low surrogate without a high one");
                if (code >= 0xd800 && code <= 0xdbff) {
                    if (!take("\\u")) fail_at(escape_at, "a high surrogate without a low one after it");
                    const unsigned low = hex4();
                    if (low < 0xdc00 || low > 0xdfff) fail_at(escape_at, "a high surrogate without a low one after it");
                    code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
                }
                append_utf8(out, code);
                break;
            }
            default: fail_at(at_ - 1, "an unknown escape in a string");
            }
        }
    }
};

}  // namespace detail

/// @brief Parses `text` as one JSON document; errors name `source` (a file's
/// path) and the line, counted from `first_line` (a JSON-lines file's line).
inline Value parse(const std::string& text, const std::string& source, int first_line = 1) {
    return detail::Parser(text, source, first_line).document();
}

/// @brief The documents of a JSON-lines `text`, one a non-empty line;
/// errors name `source` and the line.
inline std::vector<Value> parse_lines(const std::string& text, const std::string& source) {
    std::vector<Value> documents;
    std::size_t start = 0;
    for (int line = 1; start < text.size(); ++line) {
        std::size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        if (end > start) documents.push_back(parse(text.substr(start, end - start), source, line));
        start = end + 1;
    }
    return documents;
}

/// @brief `value` as a JSON number (up to 10 significant digits: points,
/// seconds), as every report and record the tools write prints it. Finite
/// values only: JSON has no NaN or infinity.
inline std::string number(double value) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.10g", value);
    return buffer;
}

}  // namespace course_tools::json
