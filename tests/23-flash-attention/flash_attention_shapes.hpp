// Lesson 23: every parallel shape of flash_attention, for the benchmark and
// the tests. Not part of the lesson's contract (flash_attention.hpp): the
// reference defines it in solutions/23-flash-attention/flash_attention.cu,
// and the starter forwards it to the student's flash_attention, whatever
// the shape, so that the tests and the benchmark link against both.
#pragma once

#include <cuda_fp16.h>

namespace lesson23::shapes {

// A block of rows_per_block query rows (bands of 16: 32 or 64 rows), each
// band shared by key_groups warps (2 or 4), each taking its share of every
// tile of 64 keys. flash_attention() picks one of these from N and the
// number of SMs.
struct Shape {
    int rows_per_block, key_groups;
};

inline constexpr Shape kShapes[] = {{64, 2}, {64, 4}, {32, 2}, {32, 4}};

// flash_attention() with the shape given; throws std::invalid_argument for
// a shape not in kShapes, as for a bad N or d.
void flash_attention_shape(int rows_per_block, int key_groups, const __half* Q, const __half* K, const __half* V,
                           __half* O, float* L, int N, int d, bool causal);

}  // namespace lesson23::shapes
