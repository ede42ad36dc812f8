// make_mutant: builds a known-wrong implementation ("mutant") from a lesson's
// reference solution and a small edit file, so a mutant states only what it
// gets wrong and follows the solution as the solution evolves.
//
//   make_mutant SOLUTION.cu EDIT.mutant OUTPUT.cu
//   make_mutant --starter SOLUTION.cu EDIT.starter OUTPUT.cu
//
// The second form makes a lesson's starter, the solution with the student's
// part taken out (tests/NN-slug/NAME.starter; `./course starter-edit NN`
// writes it from the two files): the output is the edited solution alone,
// with neither the description nor a "Generated from" line, since it is
// compared byte for byte with the starter the student gets.
//
// The edit file holds a description (every line before the first "@@") and
// one or more replacements:
//
//   // Mutant: strides by blockDim.x only, ignoring the other blocks.
//   @@ replace
//       for (size_t i = start; i < n; i += stride) {
//   @@ with
//       for (size_t i = start; i < n; i += blockDim.x) {
//   @@ end
//
// Each "replace" text must occur exactly once in the solution; otherwise the
// mutant no longer matches the solution and the tool fails, naming it.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Replacement {
    std::string from, to;
    int line = 0;  // of "@@ replace" in the edit file
};

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error(path + ": cannot read");
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

[[noreturn]] void fail(const std::string& where, int line, const std::string& why) {
    throw std::runtime_error(where + ":" + std::to_string(line) + ": error: " + why);
}

void parse(const std::string& path, std::string& description, std::vector<Replacement>& edits) {
    std::istringstream in(read_file(path));
    enum class State { description, replace, with, between } state = State::description;
    std::string line;
    int number = 0;
    while (std::getline(in, line)) {
        ++number;
        if (line.rfind("@@", 0) == 0) {
            const std::string marker = line.substr(0, line.find_last_not_of(" \t\r") + 1);
            if (marker == "@@ replace" && (state == State::description || state == State::between)) {
                edits.push_back({"", "", number});
                state = State::replace;
            } else if (marker == "@@ with" && state == State::replace) {
                state = State::with;
            } else if (marker == "@@ end" && state == State::with) {
                state = State::between;
            } else {
                fail(path, number, "unexpected \"" + marker + "\" (expected @@ replace, @@ with, @@ end in that order)");
            }
            continue;
        }
        switch (state) {
            case State::description: description += line + "\n"; break;
            case State::replace: edits.back().from += line + "\n"; break;
            case State::with: edits.back().to += line + "\n"; break;
            case State::between:
                if (line.find_first_not_of(" \t\r") != std::string::npos) fail(path, number, "text outside a replacement");
        }
    }
    if (state != State::between) fail(path, number, "the last replacement has no \"@@ end\"");
}

}  // namespace

int main(int argc, char** argv) {
    const bool starter = argc == 5 && std::string(argv[1]) == "--starter";
    if (starter) {
        ++argv;
        --argc;
    }
    if (argc != 4) {
        std::cerr << "usage: make_mutant [--starter] SOLUTION.cu EDIT OUTPUT.cu\n";
        return 2;
    }
    try {
        std::string source = read_file(argv[1]);
        std::string description;
        std::vector<Replacement> edits;
        parse(argv[2], description, edits);
        for (const Replacement& e : edits) {
            const std::size_t at = source.find(e.from);
            if (at == std::string::npos) fail(argv[2], e.line, std::string("the text to replace is not in ") + argv[1]);
            if (source.find(e.from, at + 1) != std::string::npos) {
                fail(argv[2], e.line, std::string("the text to replace occurs more than once in ") + argv[1]);
            }
            source.replace(at, e.from.size(), e.to);
        }
        const std::filesystem::path output(argv[3]);
        if (output.has_parent_path()) std::filesystem::create_directories(output.parent_path());
        std::ofstream out(output, std::ios::binary);
        if (!starter) out << description << "// Generated from " << argv[1] << " and " << argv[2] << "; edit those.\n";
        out << source;
        if (!out) throw std::runtime_error(std::string(argv[3]) + ": cannot write");
    } catch (const std::exception& e) {
        std::cerr << e.what() << "\n";
        return 1;
    }
    return 0;
}
