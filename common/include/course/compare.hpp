/// @file compare.hpp
/// @brief Comparisons that report like a teacher: what was expected, what came
/// back, where, how many elements differ, and the likely cause.
#pragma once

#include <course/catch.hpp>
#include <course/device_buffer.hpp>

#include <cmath>
#include <cstddef>
#include <cstring>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#ifdef __CUDACC_EMULATOR__
#include <course_emu/show.hpp>
#endif

namespace course {

/// @brief The outcome of a comparison: ok, or a readable explanation.
struct Comparison {
    bool ok = true;       ///< True when every element is acceptable.
    std::string message;  ///< Empty when ok.
};

/// @brief What a comparison knows beyond the two arrays.
template <class T>
struct CompareContext {
    std::string name = "output";            ///< The array's name in messages, e.g. "y".
    const std::vector<T>* before = nullptr;  ///< Contents before the kernel ran, if known: finds untouched elements.
    std::string hint_if_untouched;           ///< Lesson-specific advice when elements were never written.
    /// @brief When > 0, the arrays are row-major matrices with this many
    /// columns, and messages name a position as (row, column) besides its index.
    std::size_t columns = 0;
};

/// @brief Helpers of the comparisons below; tests do not call them.
namespace detail {

/// @brief True when `a` and `b` have the same bytes (so NaN equals the same NaN, and -0 differs from +0).
template <class T>
bool bitwise_equal(const T& a, const T& b) {
    return std::memcmp(&a, &b, sizeof(T)) == 0;
}

/// @brief `v` as a message shows it: floats with 9 significant digits, "NaN", chars as numbers.
template <class T>
std::string show(const T& v) {
    std::ostringstream out;
    if constexpr (std::is_floating_point_v<T>) {
        out.precision(9);
        if (std::isnan(v)) {
            out << "NaN";
            return out.str();
        }
    }
    if constexpr (std::is_same_v<T, signed char> || std::is_same_v<T, unsigned char> || std::is_same_v<T, char>) {
        out << static_cast<int>(v);
    } else {
        out << v;
    }
    return out.str();
}

#ifdef __CUDACC_EMULATOR__
/// @brief Hands a wrong output to `./course show` (emulator only, and only
/// while a picture-keeping analysis runs: course_emu/show.hpp). Arithmetic
/// element types only. It copies, and nothing comes back: the comparison's
/// verdict and message do not depend on it.
template <class T, class Within>
void show_wrong_output(const std::vector<T>& expected, const std::vector<T>& got, Within& within,
                       const CompareContext<T>& ctx) {
    if constexpr (std::is_arithmetic_v<T>) {
        if (!course_emu::show::wants_outputs()) return;
        course_emu::show::ComparedOutput out;
        out.test = Catch::getResultCapture().getCurrentTestName();
        out.name = ctx.name;
        out.columns = ctx.columns;
        out.expected.assign(expected.begin(), expected.end());
        out.got.assign(got.begin(), got.end());
        out.state.resize(got.size(), course_emu::show::kRight);
        for (std::size_t i = 0; i < got.size(); ++i) {
            if (within(i, expected[i], got[i])) continue;
            const bool untouched = (ctx.before != nullptr && bitwise_equal((*ctx.before)[i], got[i])) ||
                                   bitwise_equal(got[i], poison_value<T>());
            out.state[i] = untouched ? course_emu::show::kUntouched : course_emu::show::kWrong;
        }
        course_emu::show::output_compared(std::move(out));
    }
}
#endif

}  // namespace detail

/// @brief Compares `got` with `expected` element by element; `within(i, e, g)`
/// says whether got value g is acceptable at index i where e was expected.
///
/// On a mismatch the message names the first wrong element, the count and the
/// range of wrong elements, and a likely cause: elements that still hold their
/// value from before the kernel ran (never written), elements that hold the
/// poison value (an output never written), or a contiguous tail of wrong
/// elements (the loop stopped early).
template <class T, class Within>
Comparison compare(const std::vector<T>& expected, const std::vector<T>& got, Within within,
                   const CompareContext<T>& ctx = {}) {
    Comparison result;
    if (expected.size() != got.size()) {
        result.ok = false;
        result.message = ctx.name + " has " + std::to_string(got.size()) + " elements, expected " +
                         std::to_string(expected.size());
        return result;
    }
    std::size_t wrong = 0, first = 0, last = 0, untouched = 0, poisoned = 0;
    for (std::size_t i = 0; i < expected.size(); ++i) {
        if (within(i, expected[i], got[i])) continue;
        if (wrong == 0) first = i;
        last = i;
        ++wrong;
        if (ctx.before != nullptr && detail::bitwise_equal((*ctx.before)[i], got[i])) ++untouched;
        if (detail::bitwise_equal(got[i], poison_value<T>())) ++poisoned;
    }
    if (wrong == 0) return result;
#ifdef __CUDACC_EMULATOR__
    detail::show_wrong_output(expected, got, within, ctx);  // ./course show's picture; nothing comes back
#endif

    std::ostringstream out;
    out << ctx.name << " differs from the CPU reference in " << wrong << " of " << expected.size()
        << " elements (indices " << first << " to " << last << ")\n";
    out << "  first difference at " << ctx.name << "[" << first << "]";
    if (ctx.columns > 0) out << " (row " << first / ctx.columns << ", column " << first % ctx.columns << ")";
    out << ": expected " << detail::show(expected[first]) << ", got " << detail::show(got[first]);
    if (untouched == wrong) {
        out << "\n  likely cause: every wrong element still holds its value from before the launch: the kernel "
               "never wrote them.";
        if (!ctx.hint_if_untouched.empty()) out << " " << ctx.hint_if_untouched;
    } else if (poisoned == wrong) {
        out << "\n  likely cause: every wrong element holds the poison value the test filled the output with: "
               "the kernel never wrote them.";
    } else if (last == expected.size() - 1 && wrong == last - first + 1 && first > 0) {
        out << "\n  likely cause: everything from index " << first
            << " to the end is wrong: does the loop stop early or skip the last part?";
    }
    result.ok = false;
    result.message = out.str();
    return result;
}

/// @brief Exact equality (bitwise for floats, so NaN never matches a number).
template <class T>
Comparison compare_exact(const std::vector<T>& expected, const std::vector<T>& got,
                         const CompareContext<T>& ctx = {}) {
    return compare(expected, got, [](std::size_t, const T& e, const T& g) { return e == g; }, ctx);
}

/// @brief Checks that guard elements (placed after the last valid element)
/// were not modified: a write there means the kernel went out of bounds.
/// @param guard_before the guard elements as written before the launch.
/// @param guard_after  the same elements after it.
/// @param n            the number of valid elements before the guard.
/// @param name         the array's name in the message.
/// @param likely_cause what such a write usually means in the lesson (the default: an off-by-one loop bound).
template <class T>
Comparison compare_guard(const std::vector<T>& guard_before, const std::vector<T>& guard_after, std::size_t n,
                         const std::string& name,
                         const std::string& likely_cause =
                             "the loop bound lets one thread too many through (i <= n instead of i < n?)") {
    for (std::size_t i = 0; i < guard_before.size(); ++i) {
        if (!detail::bitwise_equal(guard_before[i], guard_after[i])) {
            std::ostringstream out;
            out << "the kernel wrote past the end of " << name << ": " << name << "[" << n + i
                << "] changed from " << detail::show(guard_before[i]) << " to " << detail::show(guard_after[i])
                << ", but only indices below n = " << n
                << " may be touched\n  likely cause: " << likely_cause;
            return {false, out.str()};
        }
    }
    return {};
}

}  // namespace course

/// @brief Passes when the comparison holds; otherwise fails the test case with its message.
#define COURSE_REQUIRE_MATCH(...)                     \
    do {                                              \
        const ::course::Comparison course_cmp_ = (__VA_ARGS__); \
        if (!course_cmp_.ok) {                        \
            FAIL(course_cmp_.message);                \
        } else {                                      \
            SUCCEED();                                \
        }                                             \
    } while (0)
