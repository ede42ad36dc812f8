/// @file show.hpp
/// @brief How the test harness hands `./course show` an output it found
/// wrong: the values, what was expected, and the shape (see docs/emulator.md,
/// "Pictures of what a kernel did").
///
/// course/compare.hpp calls output_compared() for every failing comparison,
/// on the emulator only and only while an analysis that keeps pictures runs
/// (wants_outputs()); otherwise nothing is copied. What it hands over is only
/// drawn: nothing here reads back into a test, so a grade never depends on it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace course_emu::show {

/// @brief What one element of a compared output was.
enum ElementState : std::uint8_t {
    kRight = 0,      ///< acceptable
    kWrong = 1,      ///< differs from the CPU reference
    kUntouched = 2,  ///< wrong, and still holds the value from before the launch (the harness's poison): never written
};

/// @brief An output a test compared with the CPU reference and found wrong.
struct ComparedOutput {
    std::string test;              ///< the test case that compared it
    std::string name;              ///< the array's name in the test's message, e.g. "out"
    std::size_t columns = 0;       ///< row-major matrix of this many columns; 0: a 1D array
    std::vector<double> expected;  ///< the CPU reference, element by element (as double)
    std::vector<double> got;       ///< what came back
    std::vector<std::uint8_t> state;  ///< ElementState per element
};

/// @brief True while an analysis that keeps pictures runs (`./course show`,
/// `COURSE_EMU_SHOW`): only then are compared outputs worth copying.
bool wants_outputs();

/// @brief Hands a wrong output to the running analysis (nothing happens when none runs).
void output_compared(ComparedOutput output);

}  // namespace course_emu::show
