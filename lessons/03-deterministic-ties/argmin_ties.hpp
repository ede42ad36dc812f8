/// @file argmin_ties.hpp
/// @brief Lesson 03 contract: argmin and argmax that break ties the way a CPU
/// loop does, the same on every run.
///
/// You implement these functions in `starter/03-deterministic-ties/argmin_ties.cu`.
/// The tests call them with device pointers and compare with a CPU loop (see
/// `tests/03-deterministic-ties/cpu_reference.hpp`). Lesson text:
/// `lessons/03-deterministic-ties/README.md`.
///
/// The rules every function here follows:
/// - **Ties:** among elements of equal value the lowest index wins (argmin:
///   smallest value, then lowest index; argmax: largest value, then lowest
///   index), so the answer is the one `std::min_element` / `std::max_element`
///   and `cub::DeviceReduce::ArgMin` give, whatever the order in which the
///   GPU's threads happen to arrive.
/// - **Signed zeros:** `-0.0f` and `+0.0f` compare equal, as floats do: they
///   tie, and the lower index wins. ArgResult::value is the element at that
///   index bit for bit, so its sign shows which zero won.
/// - **Infinities** are ordinary values: `-inf` is the smallest, `+inf` the
///   largest. An array of nothing but `+inf` has its argmin at index 0.
/// - **NaN** elements (either sign, any payload) are ignored, as if absent.
/// - **No candidate** (n = 0, or every element NaN): index -1 and value
///   `+inf` for argmin, `-inf` for argmax.
#pragma once

#include <course/launch_shape.hpp>

namespace lesson03 {

/// @brief The answer of an argmin or argmax: the winning element's value and index.
///
/// Eight bytes, aligned to eight, with `value` in the low four bytes and
/// `index` in the high four: exactly the 64-bit word a kernel may update with
/// one `atomicCAS` on `unsigned long long`. Device memory from `cudaMalloc`
/// is aligned enough.
struct alignas(8) ArgResult {
    float value;  ///< values[index] bit for bit; +inf (argmin) or -inf (argmax) when index is -1.
    int index;    ///< The lowest index holding the extremum, or -1 when no element qualifies.
};

/// @brief Chooses the launch shape for the launchers below on the current device.
///
/// A grid-stride reduction is correct for any grid, so the grid is sized for
/// the hardware: a few blocks of a few warps per streaming multiprocessor,
/// never more blocks than the data can use, and at least one.
///
/// @param n number of elements that will be reduced (may be 0).
/// @return a valid shape: blocks >= 1, threads_per_block a multiple of 32 from 32 to 1024.
course::LaunchShape argmin_launch_shape(int n);

/// @brief Finds the minimum of `values[0..n)` and the lowest index holding
/// it, with a compare-and-swap loop on the packed (value, index) word.
///
/// Initialises `*result` itself (the tests fill it with garbage first),
/// launches with exactly `shape`, checks the launch and returns without
/// synchronising. Every run, every shape and every order of the threads
/// gives the same answer: the one of the CPU loop in the file comment above
/// (ties to the lowest index, -0 equal to +0, NaN ignored, n = 0 or all NaN
/// gives {+inf, -1}).
///
/// @param shape  the launch configuration (blocks >= 1; threads_per_block a multiple of 32, at most 1024).
/// @param n      number of elements; 0 is valid.
/// @param values device pointer to n floats (not modified).
/// @param result device pointer to one ArgResult, overwritten with the answer.
void launch_argmin(course::LaunchShape shape, int n, const float* values, ArgResult* result);

/// @brief Finds the maximum of `values[0..n)` and the **lowest** index
/// holding it, with a compare-and-swap loop on the packed (value, index) word.
///
/// The mirror image of launch_argmin for values only: a larger value wins;
/// among equal values the lower index still wins (as `std::max_element`
/// returns the first maximum). -0 equals +0, NaN is ignored, n = 0 or all NaN
/// gives {-inf, -1}. Initialises `*result`, launches with exactly `shape`,
/// checks the launch and does not synchronise.
///
/// @param shape  the launch configuration (blocks >= 1; threads_per_block a multiple of 32, at most 1024).
/// @param n      number of elements; 0 is valid.
/// @param values device pointer to n floats (not modified).
/// @param result device pointer to one ArgResult, overwritten with the answer.
void launch_argmax(course::LaunchShape shape, int n, const float* values, ArgResult* result);

/// @brief The same answer as launch_argmin, found with one 64-bit
/// `atomicMin` per update on a key whose unsigned order is the (value, index)
/// order, instead of a compare-and-swap loop.
///
/// The key's high 32 bits are an order-preserving map of the float's bits
/// (so negative values, infinities and the two zeros order correctly; -0 is
/// mapped like +0 so that they tie), its low 32 bits the index. NaN never
/// becomes a key. The answer and its edge cases are exactly those of
/// launch_argmin, including ArgResult::value being values[index] bit for
/// bit (so a winning -0.0f comes back as -0.0f). Initialises `*result`,
/// launches with exactly `shape`, checks the launches and does not
/// synchronise.
///
/// @param shape  the launch configuration (blocks >= 1; threads_per_block a multiple of 32, at most 1024).
/// @param n      number of elements; 0 is valid.
/// @param values device pointer to n floats (not modified).
/// @param result device pointer to one ArgResult, overwritten with the answer.
void launch_argmin_key(course::LaunchShape shape, int n, const float* values, ArgResult* result);

}  // namespace lesson03
