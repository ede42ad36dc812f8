// Lesson 23: every parallel shape of flash_attention, for the benchmark and
// the tests. Not part of the lesson's contract (flash_attention.hpp): the
// reference defines these in solutions/23-flash-attention/flash_attention.cu,
// and the starter forwards flash_attention_shape to the student's
// flash_attention, whatever the shape, so that the tests and the benchmark
// link against both.
#pragma once

#include <cstddef>
#include <cuda_fp16.h>

namespace lesson23::shapes {

// A block of rows_per_block query rows (bands of 16: 16, 32 or 64 rows),
// each band shared by key_groups warps (2 or 4), each taking its share of
// every tile of 64 keys; and the keys of each block of rows split over
// `splits` blocks (1: no split), whose states a second kernel merges.
// flash_attention() picks one of these from N, d and the number of SMs.
struct Shape {
    int rows_per_block, key_groups, splits;
};

// The block shapes, unsplit.
inline constexpr Shape kShapes[] = {{64, 2, 1}, {64, 4, 1}, {32, 2, 1}, {32, 4, 1}, {16, 4, 1}};

// The splits the tests and the benchmark try besides 1 (the kernel takes 1 to 4).
inline constexpr int kSplits[] = {2, 4};

// flash_attention() with the shape given; throws std::invalid_argument for
// a block shape not in kShapes or splits outside 1 to 4, as for a bad N or d.
void flash_attention_shape(int rows_per_block, int key_groups, int splits, const __half* Q, const __half* K,
                           const __half* V, __half* O, float* L, int N, int d, bool causal);

// The shape flash_attention() launches for N and d.
void launcher_shape(int N, int d, int& rows_per_block, int& key_groups, int& splits);

// The device memory a call of this shape uses besides O and L, in bytes:
// the splits' states, 0 without a split.
std::size_t scratch_bytes(int rows_per_block, int splits, int N, int d);

inline void flash_attention_shape(Shape shape, const __half* Q, const __half* K, const __half* V, __half* O,
                                  float* L, int N, int d, bool causal) {
    flash_attention_shape(shape.rows_per_block, shape.key_groups, shape.splits, Q, K, V, O, L, N, d, causal);
}

inline Shape launcher_shape(int N, int d) {
    Shape shape{};
    launcher_shape(N, d, shape.rows_per_block, shape.key_groups, shape.splits);
    return shape;
}

inline std::size_t scratch_bytes(Shape shape, int N, int d) {
    return scratch_bytes(shape.rows_per_block, shape.splits, N, d);
}

}  // namespace lesson23::shapes
