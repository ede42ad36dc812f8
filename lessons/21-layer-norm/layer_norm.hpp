/// @file layer_norm.hpp
/// @brief Lesson 21 contract: the forward pass of layer normalisation over
/// the rows of a matrix, with Welford's mean and variance, fused scale and
/// bias, for float and half-precision inputs.
///
/// You implement both overloads of `layer_norm` in
/// `starter/21-layer-norm/layer_norm.cu`. The tests call them with device
/// pointers and compare with a CPU layer norm computed in double precision.
/// See the lesson text, `lessons/21-layer-norm/README.md`.
///
/// What is computed. `x` is a row-major matrix of `rows` x `cols` values
/// (one row per token, one column per feature). For each row r, with n = cols:
///
///     mean[r] = (1/n) * sum over c of x(r, c)
///     var[r]  = (1/n) * sum over c of (x(r, c) - mean[r])^2     (biased: 1/n, not 1/(n-1))
///     rstd[r] = 1 / sqrt(var[r] + eps)
///     y(r, c) = (x(r, c) - mean[r]) * rstd[r] * gamma[c] + beta[c]
///
/// `gamma` (the scale) and `beta` (the bias) are per column, shared by every
/// row. `mean` and `rstd` are written too: a training framework keeps them
/// for the backward pass.
///
/// - Any shape: `rows` >= 1 and `cols` from 1 (a row of one value: its
///   variance is 0, so y = beta) up to kMaxCols, with `cols` no multiple of
///   4, 8 or 32 as well; `rows * cols` may exceed 2^31 (indices in size_t).
///   Nothing outside the arrays is read or written.
/// - `rows == 0` or `cols == 0` is an empty matrix: nothing is launched, no
///   error, and the pointers may be null.
/// - `x` and `y` do not overlap; `mean` and `rstd` hold `rows` floats each.
/// - Accuracy: the statistics are computed in float (never in half, even for
///   half inputs). A value far from 0 with a small spread, such as 10000 +-
///   1, is the hard case: the one-pass formula var = mean(x^2) - mean^2
///   loses every digit there, Welford's update and Chan's merge do not. The
///   tests accept, per element, |y - exact| <= tolerance() of the CPU
///   reference (a few float roundings of the terms involved: see
///   tests/21-layer-norm/cpu_reference.hpp), plus, for half outputs, the
///   rounding to half.
/// - Each function checks its launches and returns without synchronising.
#pragma once

#include <cuda_fp16.h>

namespace lesson21 {

/// @brief The longest row the functions accept: 2^20 values (the count of a
/// row is kept exactly in a float up to 2^24).
inline constexpr int kMaxCols = 1 << 20;

/// @brief The usual epsilon of a layer norm (PyTorch's default), added to the
/// variance under the square root so a constant row does not divide by 0.
inline constexpr float kDefaultEps = 1e-5f;

/// @brief Layer norm of float rows: y = (x - mean) * rstd * gamma + beta, per row.
///
/// @param x     device pointer to rows * cols floats, row-major.
/// @param gamma device pointer to cols floats: the scale of each column.
/// @param beta  device pointer to cols floats: the bias of each column.
/// @param y     device pointer to rows * cols floats: the result.
/// @param mean  device pointer to rows floats: each row's mean.
/// @param rstd  device pointer to rows floats: each row's 1 / sqrt(var + eps).
/// @param rows  number of rows, >= 0.
/// @param cols  number of columns, 0 to kMaxCols; anything else throws
///              `std::invalid_argument` (as does a negative `rows` or `eps`).
/// @param eps   added to the variance, >= 0.
void layer_norm(const float* x, const float* gamma, const float* beta, float* y, float* mean, float* rstd,
                int rows, int cols, float eps = kDefaultEps);

/// @brief Layer norm of half-precision rows, as a mixed-precision network
/// runs it: x and y in half (2 bytes a value, half the memory traffic), the
/// statistics, gamma, beta and the arithmetic in float; each y is rounded to
/// half once, at the end (round to nearest even, `__float2half_rn`).
///
/// The parameters are those of the float overload, with `x` and `y` device
/// pointers to rows * cols `__half` values.
void layer_norm(const __half* x, const float* gamma, const float* beta, __half* y, float* mean, float* rstd,
                int rows, int cols, float eps = kDefaultEps);

}  // namespace lesson21
