/// @file main.cpp
/// @brief course_emu_translate INPUT.cu OUTPUT.cpp: the build runs this on
/// each .cu file before handing the result to the host compiler.
#include "translate.hpp"

#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <string>

namespace {

std::optional<std::string> read_file(const char* path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) return std::nullopt;
    return text;
}

bool write_file(const char* path, const std::string& text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    return static_cast<bool>(out);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::cerr << "usage: course_emu_translate INPUT.cu OUTPUT.cpp\n";
        return 1;
    }
    const char* input = argv[1];
    const char* output = argv[2];

    const std::optional<std::string> source = read_file(input);
    if (!source) {
        std::cerr << input << ": error: cannot read file\n";
        return 1;
    }
    try {
        // Translate before opening the output, so that a failed translation
        // leaves no half-written file behind.
        if (!write_file(output, course_emu::translate_cuda_source(*source, input))) {
            std::cerr << output << ": error: cannot write file\n";
            return 1;
        }
    } catch (const course_emu::translation_error& e) {
        // gcc's format, so that IDEs and the course tools link to the line.
        std::cerr << e.path() << ":" << e.line() << ": error: " << e.reason() << "\n";
        return 1;
    }
    return 0;
}
