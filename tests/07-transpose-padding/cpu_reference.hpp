/// @file cpu_reference.hpp
/// @brief Lesson 07's CPU reference: the transpose of a row-major matrix, and
/// the results of two typical mistakes, which the tests recognise in a wrong
/// output to name the likely cause.
///
/// A transpose only moves values, so the GPU's result must equal these bit
/// for bit: the tests compare exactly.
#pragma once

#include <cstddef>
#include <vector>

namespace lesson07::reference {

/// @brief The `cols x rows` transpose of the `rows x cols` row-major matrix
/// `in`: `out[c * rows + r] = in[r * cols + c]`.
inline std::vector<float> transpose(const std::vector<float>& in, std::size_t rows, std::size_t cols) {
    std::vector<float> out(rows * cols);
    for (std::size_t r = 0; r < rows; ++r) {
        for (std::size_t c = 0; c < cols; ++c) out[c * rows + r] = in[r * cols + c];
    }
    return out;
}

/// @brief What a tiled transpose writes when it moves every 32 x 32 tile to
/// its transposed place but reads the tile in the order it was written
/// (`tile[y][x]` instead of `tile[x][y]`): element (R, C) of the output is
/// element (C0 + R - R0, R0 + C - C0) of `in`, where (R0, C0) is the corner of
/// the output tile holding (R, C). Positions whose source lies outside `in`
/// keep `fill`.
inline std::vector<float> tiles_moved_not_transposed(const std::vector<float>& in, std::size_t rows,
                                                     std::size_t cols, float fill) {
    constexpr std::size_t kTile = 32;
    std::vector<float> out(rows * cols, fill);
    for (std::size_t out_row = 0; out_row < cols; ++out_row) {
        for (std::size_t out_col = 0; out_col < rows; ++out_col) {
            const std::size_t r0 = out_row / kTile * kTile;
            const std::size_t c0 = out_col / kTile * kTile;
            const std::size_t in_row = c0 + (out_row - r0);
            const std::size_t in_col = r0 + (out_col - c0);
            if (in_row < rows && in_col < cols) out[out_row * rows + out_col] = in[in_row * cols + in_col];
        }
    }
    return out;
}

}  // namespace lesson07::reference
