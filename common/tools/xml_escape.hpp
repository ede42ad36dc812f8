/// @file xml_escape.hpp
/// @brief Text escaped for XML content and attribute values, shared by the
/// driver's tools that write XML (course_report's JUnit, bench_plot's SVG).
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

}  // namespace course_tools
