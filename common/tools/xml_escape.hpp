/// @file xml_escape.hpp
/// @brief Text escaped for XML content and attribute values, shared by the
/// driver's tools that write XML (course_report's JUnit, bench_plot's SVG),
/// and XML text unescaped again (course_report reading CTest's JUnit).
#pragma once

#include <string>

namespace course_tools {

/// @brief `s` with `<`, `>`, `&` and `"` escaped, and control characters other
/// than tab and newlines (which XML 1.0 does not allow) replaced by `?`.
inline std::string xml_escape(const std::string& s) {
    std::string out;
    for (const unsigned char c : s) {
        switch (c) {
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '&': out += "&amp;"; break;
        case '"': out += "&quot;"; break;
        default:
            if (c < 0x20 && c != '\n' && c != '\t' && c != '\r') out += '?';
            else out += static_cast<char>(c);
        }
    }
    return out;
}

/// @brief `s` with XML's five named entities and numeric character references
/// (`&#65;`, `&#x41;`, up to U+FFFF, written as UTF-8) replaced by their
/// characters; anything else, a lone `&` included, is kept as it is.
inline std::string xml_unescape(const std::string& s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const std::size_t semi = s[i] == '&' ? s.find(';', i) : std::string::npos;
        if (semi == std::string::npos || semi - i > 8) {
            out += s[i];
            continue;
        }
        const std::string name = s.substr(i + 1, semi - i - 1);
        unsigned long code = 0;
        bool known = true;
        if (name == "lt") code = '<';
        else if (name == "gt") code = '>';
        else if (name == "amp") code = '&';
        else if (name == "quot") code = '"';
        else if (name == "apos") code = '\'';
        else if (name.size() > 1 && name[0] == '#') {
            const bool hex = name[1] == 'x' || name[1] == 'X';
            const std::string digits = name.substr(hex ? 2 : 1);
            known = !digits.empty() &&
                    digits.find_first_not_of(hex ? "0123456789abcdefABCDEF" : "0123456789") == std::string::npos;
            if (known) code = std::stoul(digits, nullptr, hex ? 16 : 10);
            known = known && code > 0 && code <= 0xFFFF;
        } else {
            known = false;
        }
        if (!known) {
            out += s[i];
            continue;
        }
        if (code < 0x80) {
            out += static_cast<char>(code);
        } else if (code < 0x800) {
            out += static_cast<char>(0xC0 | (code >> 6));
            out += static_cast<char>(0x80 | (code & 0x3F));
        } else {
            out += static_cast<char>(0xE0 | (code >> 12));
            out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (code & 0x3F));
        }
        i = semi;
    }
    return out;
}

}  // namespace course_tools
