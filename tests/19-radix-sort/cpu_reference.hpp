/// @file cpu_reference.hpp
/// @brief Lesson 19's CPU reference: the exclusive scan by a loop, and the
/// stable sort by a bit field of the keys (std::sort with the input position
/// as the last key), and the key distributions the tests sort.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <string>
#include <tuple>
#include <vector>

namespace lesson19::reference {

/// @brief `out[i] = in[0] + ... + in[i-1]` in unsigned (wrapping) arithmetic.
inline std::vector<unsigned> exclusive_scan(const std::vector<unsigned>& in) {
    std::vector<unsigned> out(in.size());
    unsigned running = 0;
    for (std::size_t i = 0; i < in.size(); ++i) {
        out[i] = running;
        running += in[i];
    }
    return out;
}

/// @brief The bits [begin_bit, end_bit) of `key`, as the number they form.
inline unsigned key_field(unsigned key, int begin_bit, int end_bit) {
    if (begin_bit >= end_bit) return 0;
    const std::uint64_t mask = (std::uint64_t{1} << (end_bit - begin_bit)) - 1;
    return static_cast<unsigned>((key >> begin_bit) & mask);
}

/// @brief The input positions in the order a stable sort by the bits
/// [begin_bit, end_bit) puts them: by field, then by position.
inline std::vector<unsigned> stable_order(const std::vector<unsigned>& keys, int begin_bit, int end_bit) {
    std::vector<unsigned> order(keys.size());
    std::iota(order.begin(), order.end(), 0u);
    // The position breaks the ties, so std::sort gives the stable order
    // (libstdc++ 12's std::stable_sort makes Clang 19 warn, see lesson 13).
    std::sort(order.begin(), order.end(), [&](unsigned a, unsigned b) {
        return std::make_tuple(key_field(keys[a], begin_bit, end_bit), a) <
               std::make_tuple(key_field(keys[b], begin_bit, end_bit), b);
    });
    return order;
}

/// @brief A sorted pair of arrays: the keys and the values that came with them.
struct Sorted {
    std::vector<unsigned> keys;    ///< The keys, ascending in the compared bits.
    std::vector<unsigned> values;  ///< values[j]: the value that came with keys[j].
};

/// @brief The stable sort of (keys, values) by the bits [begin_bit, end_bit) of the keys.
inline Sorted sort_pairs(const std::vector<unsigned>& keys, const std::vector<unsigned>& values, int begin_bit,
                         int end_bit) {
    Sorted out;
    for (const unsigned i : stable_order(keys, begin_bit, end_bit)) {
        out.keys.push_back(keys[i]);
        out.values.push_back(values[i]);
    }
    return out;
}

}  // namespace lesson19::reference
