/// @file radix_sort.hpp
/// @brief Lesson 19 contract: an exclusive scan of any length (three
/// kernels), and an LSD radix sort of 32-bit unsigned keys, alone or with a
/// 32-bit value moved along with each key.
///
/// You implement these functions in `starter/19-radix-sort/radix_sort.cu`,
/// with kernels only (no CUB or Thrust). The tests call them with device
/// pointers and compare with a CPU reference. See the lesson text,
/// `lessons/19-radix-sort/README.md`.
///
/// Common to every function:
/// - All pointers are device pointers; a pointer to 0 elements may be null.
///   Inputs are only read; outputs must not overlap the inputs.
/// - `n` is below 2^31.
/// - Workspace is allocated inside (course::DeviceBuffer) and freed before
///   returning; a failed CUDA call throws course::CudaError.
/// - The functions return without synchronising (freeing the workspace
///   waits for the kernels, as cudaFree does).
#pragma once

#include <cstddef>

namespace lesson19 {

/// @brief The digit width of the sort: 8 bits, so 256 digit values
/// (buckets) and 4 passes over 32-bit keys.
inline constexpr int kRadixBits = 8;

/// @brief Number of digit values: 2^kRadixBits.
inline constexpr int kRadix = 1 << kRadixBits;

/// @brief Exclusive prefix sum: `out[i] = in[0] + ... + in[i-1]`, `out[0] = 0`.
///
/// Any n, with three kernels: each block sums its chunk, one block scans the
/// chunk sums (however many there are), each block scans its chunk again
/// starting from its chunk's offset. Sums wrap modulo 2^32 like `unsigned`
/// arithmetic (the sort's counts never do).
///
/// Edge cases: `n == 0` touches nothing; `n == 1` writes `out[0] = 0`.
///
/// @param in  device pointer to n values.
/// @param out device pointer to n values (out: the exclusive prefix sums; must not overlap in).
/// @param n   number of values, below 2^31.
void exclusive_scan(const unsigned* in, unsigned* out, std::size_t n);

/// @brief Sorts `n` keys in ascending order of their bits `[begin_bit, end_bit)`:
/// a stable LSD radix sort, `kRadixBits` bits per pass, least significant
/// digit first.
///
/// Only the bits `begin_bit .. end_bit - 1` of a key are compared (as the
/// unsigned number they form); keys equal in those bits keep their input
/// order (the sort is stable), whatever their other bits. With the default
/// bits the whole keys are sorted. The number of passes is
/// `ceil((end_bit - begin_bit) / kRadixBits)`, so it can be odd (0 to 32
/// bits: 0 to 4 passes); the last pass's digit may be narrower than
/// `kRadixBits` (e.g. bits [0, 20): 8, 8 and 4 bits).
///
/// Edge cases: `n == 0` does nothing; `begin_bit == end_bit` (no bits to sort
/// by) copies the keys unchanged. Bits outside 0 <= begin_bit <= end_bit <= 32
/// throw std::invalid_argument.
///
/// @param keys_in   device pointer to n keys (read only).
/// @param keys_out  device pointer to n keys (out: sorted; must not overlap keys_in).
/// @param n         number of keys, below 2^31.
/// @param begin_bit the least significant bit compared, 0 to 32.
/// @param end_bit   one past the most significant bit compared, begin_bit to 32.
void sort_keys(const unsigned* keys_in, unsigned* keys_out, std::size_t n, int begin_bit = 0, int end_bit = 32);

/// @brief sort_keys() with a value moved along with each key: if key i of the
/// input lands at position j of the output, `values_out[j] = values_in[i]`.
///
/// Stable: pairs whose keys are equal in the compared bits keep their input
/// order, so with `values_in[i] = i` the values out say where each key came
/// from, and equal keys' values are ascending (the tests check exactly that).
/// The same bits, edge cases and errors as sort_keys(); `begin_bit == end_bit`
/// copies the keys and the values unchanged.
///
/// @param keys_in    device pointer to n keys (read only).
/// @param values_in  device pointer to n values (read only).
/// @param keys_out   device pointer to n keys (out: sorted; must not overlap the inputs).
/// @param values_out device pointer to n values (out: moved with their keys; must not overlap the inputs).
/// @param n          number of pairs, below 2^31.
/// @param begin_bit  the least significant bit compared, 0 to 32.
/// @param end_bit    one past the most significant bit compared, begin_bit to 32.
void sort_pairs(const unsigned* keys_in, const unsigned* values_in, unsigned* keys_out, unsigned* values_out,
                std::size_t n, int begin_bit = 0, int end_bit = 32);

}  // namespace lesson19
