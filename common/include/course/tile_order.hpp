/// @file tile_order.hpp
/// @brief The order in which the blocks of a matrix product take their tiles
/// of C: down groups of rows of tiles, column by column (lesson 08's
/// register-blocked kernel and its benchmark's variants, lesson 22's tensor-core GEMM).
#pragma once

#include <cuda_runtime.h>

namespace course {

/// @brief The tile of C, (tile_row, tile_col), that block number `linear`
/// (blockIdx.y * gridDim.x + blockIdx.x) computes in a tiles_m x tiles_n grid
/// of tiles, when the blocks walk down groups of `group_rows` rows of tiles,
/// column by column within a group (the last group may have fewer rows).
///
/// Blocks that run at once then work on a few rows of tiles and a few
/// columns: they share those rows of A and columns of B in L2, where blocks
/// taken row by row would each bring a new column of B.
__device__ inline void grouped_tile(int linear, int tiles_m, int tiles_n, int group_rows, int& tile_row,
                                    int& tile_col) {
    const int group = linear / (group_rows * tiles_n);
    const int first_row = group * group_rows;
    const int rows_in_group = min(tiles_m - first_row, group_rows);
    const int in_group = linear - group * group_rows * tiles_n;
    tile_row = first_row + in_group % rows_in_group;
    tile_col = in_group / rows_in_group;
}

}  // namespace course
