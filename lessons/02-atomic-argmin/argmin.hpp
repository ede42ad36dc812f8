/// @file argmin.hpp
/// @brief Lesson 02 contract: argmin of a float array with one 64-bit
/// `atomicCAS` loop over a packed (value, index) word.
///
/// You implement the launch functions in `starter/02-atomic-argmin/argmin.cu`,
/// together with the device functions they use (`pack_value_index`, the CAS
/// loop, `argmin_kernel`). The tests call the launch functions with device
/// pointers and compare the result with a CPU loop. See the lesson text,
/// `lessons/02-atomic-argmin/README.md`.
///
/// **The packed word.** A result is one `unsigned long long`: the bits of the
/// float value in the high 32 bits, the index (as 32 unsigned bits) in the
/// low 32 bits. Because both halves live in one 64-bit word, one `atomicCAS`
/// replaces them together, so no thread can ever see the value of one
/// element paired with the index of another.
///
/// **Edge cases of the contract.**
/// - `n = 0`: nothing is folded in; the result keeps what it held
///   (kEmptyArgmin for a fresh search).
/// - Ties: when several elements share the minimum, any one of their indices
///   is a correct answer in this lesson, and it may differ from run to run.
///   Lesson 03 makes the choice deterministic (the lowest index).
/// - Infinities are ordinary values: `-inf` beats everything, and an array of
///   only `+inf` still yields one of its indices (an empty result is replaced
///   by any element).
/// - NaN values are outside this lesson's contract: the tests never pass
///   them, and what the result holds for an array containing NaN is not
///   specified.
#pragma once

#include <course/launch_shape.hpp>

#include <bit>
#include <cstdint>

namespace lesson02 {

/// @brief The result of a fresh search, before any element is folded in:
/// value `+infinity` (bits `0x7F800000`) in the high half, index `-1`
/// (bits `0xFFFFFFFF`) in the low half.
///
/// No element can produce this word (no element has index -1), so it also
/// marks "no element seen yet": the update rule treats it as beaten by any
/// value, `+inf` included. After a search over `n = 0` elements the result
/// still holds it.
inline constexpr unsigned long long kEmptyArgmin = 0x7F800000'FFFFFFFFull;

/// @brief Host-side packing helpers, for the tests and for callers that read
/// a result back. The device twins of these functions live in the `.cu` file
/// (a host-only function cannot be called from a kernel).
namespace host {

/// @brief A (value, index) pair as the host reads it back.
struct ValueIndex {
    float value;  ///< The smallest value found (+inf for an empty result).
    int index;    ///< An index holding that value (-1 for an empty result).
};

/// @brief Packs `value` (high 32 bits) and `index` (low 32 bits) into one word,
/// exactly as the device's `pack_value_index` does.
/// @param value any float; its bits are stored unchanged.
/// @param index an element index (>= 0), or -1 for the empty result.
constexpr unsigned long long pack_value_index(float value, int index) {
    return (static_cast<unsigned long long>(std::bit_cast<std::uint32_t>(value)) << 32) |
           static_cast<std::uint32_t>(index);
}

/// @brief Splits a packed word back into its value and its index.
/// @param packed a word made by pack_value_index (or kEmptyArgmin).
constexpr ValueIndex unpack_value_index(unsigned long long packed) {
    return {std::bit_cast<float>(static_cast<std::uint32_t>(packed >> 32)),
            static_cast<int>(static_cast<std::uint32_t>(packed))};
}

}  // namespace host

/// @brief Chooses the launch shape for `launch_argmin` on the current device.
///
/// Every thread of an argmin kernel ends in an atomic update of the same
/// word, so threads beyond what the GPU can keep resident only add atomics:
/// the grid is sized for the hardware (one "wave" of resident blocks, or a
/// few blocks per SM), and never larger than the data needs.
///
/// @param n number of elements that will be searched (may be 0).
/// @return a valid shape: 1 <= blocks, 1 <= threads_per_block <= 1024. For
///         large n (millions of elements) it launches at least one block per
///         SM and fewer threads than elements, so each thread loops.
course::LaunchShape argmin_launch_shape(int n);

/// @brief Folds `values[0 .. n)` into the packed (value, index) word `*result`
/// on the device: afterwards `*result` holds the smallest value among the
/// elements and what it held before, and an index holding that value.
///
/// For a fresh argmin, the caller first stores kEmptyArgmin in `*result`.
/// The stored pair is replaced only by a strictly smaller value (or, when it
/// is kEmptyArgmin, by any element); a result that already holds a value no
/// element beats is left untouched, and `n = 0` changes nothing.
///
/// Launches `argmin_kernel` with exactly the given shape (the tests pass odd
/// shapes, including `<<<1, 1>>>`, so the kernel loops over the grid with a
/// grid-stride loop), checks the launch for errors and returns without
/// synchronising. Each winning update is one `atomicCAS` when no other
/// thread interferes (the tests count them on the emulator), a losing one
/// none.
///
/// Ties: any index holding the minimum is correct (see the file comment).
/// NaN inputs are outside the contract.
///
/// @param shape  the launch configuration to use (blocks >= 1, 1 <= threads_per_block <= 1024).
/// @param n      number of elements; 0 is valid and changes nothing.
/// @param values device pointer to n floats (may be null when n is 0).
/// @param result device pointer to one packed word, 8-byte aligned, initialised by the caller.
void launch_argmin(course::LaunchShape shape, int n, const float* values, unsigned long long* result);

/// @brief The argmax twin of launch_argmin: folds `values[0 .. n)` into
/// `*result`, keeping the largest value and an index holding it.
///
/// Same rules as launch_argmin with the comparison reversed. Its fresh result
/// is kEmptyArgmax; any index holding the maximum is correct; NaN is outside
/// the contract.
///
/// @param shape  the launch configuration to use.
/// @param n      number of elements; 0 is valid and changes nothing.
/// @param values device pointer to n floats (may be null when n is 0).
/// @param result device pointer to one packed word, initialised by the caller (kEmptyArgmax).
void launch_argmax(course::LaunchShape shape, int n, const float* values, unsigned long long* result);

/// @brief The result of a fresh argmax search: value `-infinity`, index `-1`.
inline constexpr unsigned long long kEmptyArgmax = 0xFF800000'FFFFFFFFull;

}  // namespace lesson02
