// Lesson 07's tiled transpose without the padding column: the counter-example
// the analysis test (and tests/analysis/ncu_compare.sh) measures against the
// reference's transpose_tiled. Same launch (32 x 8 threads per 32 x 32 tile),
// same contract as transpose_tiled (transpose.hpp).
#pragma once

namespace lesson07 {

/// `out = transpose(in)` through a `[32][32]` tile: its column reads are 32-way bank conflicts.
void transpose_tiled_unpadded(const float* in, float* out, int rows, int cols);

}  // namespace lesson07
