/// @file cuComplex.h
/// @brief Emulator stand-in for CUDA's `cuComplex.h`: single and double
/// precision complex numbers as `float2` and `double2`.
///
/// The same names, types and algorithms as CUDA's header: division scales by
/// |Re| + |Im| of the divisor and the magnitude avoids overflow, so results
/// match a GPU's up to the rounding of contracted multiply-adds.
#pragma once

#include <math.h>

#include <course_emu/qualifiers.hpp>
#include <course_emu/types.hpp>

/// @brief A single precision complex number: x is the real part, y the imaginary part.
typedef float2 cuFloatComplex;
/// @brief A double precision complex number: x is the real part, y the imaginary part.
typedef double2 cuDoubleComplex;
/// @brief CUDA's name for the single precision complex type.
typedef cuFloatComplex cuComplex;

/// @brief The real part of `z`.
__host__ __device__ inline float cuCrealf(cuFloatComplex z) { return z.x; }
/// @brief The imaginary part of `z`.
__host__ __device__ inline float cuCimagf(cuFloatComplex z) { return z.y; }
/// @brief The complex number `re + i im`.
__host__ __device__ inline cuFloatComplex make_cuFloatComplex(float re, float im) { return make_float2(re, im); }
/// @brief The complex conjugate of `z`.
__host__ __device__ inline cuFloatComplex cuConjf(cuFloatComplex z) { return make_cuFloatComplex(z.x, -z.y); }
/// @brief `a + b`.
__host__ __device__ inline cuFloatComplex cuCaddf(cuFloatComplex a, cuFloatComplex b) {
    return make_cuFloatComplex(a.x + b.x, a.y + b.y);
}
/// @brief `a - b`.
__host__ __device__ inline cuFloatComplex cuCsubf(cuFloatComplex a, cuFloatComplex b) {
    return make_cuFloatComplex(a.x - b.x, a.y - b.y);
}
/// @brief `a * b` (the textbook formula, as CUDA computes it).
__host__ __device__ inline cuFloatComplex cuCmulf(cuFloatComplex a, cuFloatComplex b) {
    return make_cuFloatComplex(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}
/// @brief `a / b`, scaling both by 1 / (|Re b| + |Im b|) first so that the
/// squared magnitude of the divisor neither overflows nor underflows.
__host__ __device__ inline cuFloatComplex cuCdivf(cuFloatComplex a, cuFloatComplex b) {
    const float scale = 1.0f / (fabsf(b.x) + fabsf(b.y));
    const float ar = a.x * scale, ai = a.y * scale;
    const float br = b.x * scale, bi = b.y * scale;
    const float inv = 1.0f / (br * br + bi * bi);
    return make_cuFloatComplex((ar * br + ai * bi) * inv, (ai * br - ar * bi) * inv);
}
/// @brief |z|, computed as max * sqrt(1 + (min/max)^2) so that it does not
/// overflow where the magnitude itself is representable.
__host__ __device__ inline float cuCabsf(cuFloatComplex z) {
    const float a = fabsf(z.x), b = fabsf(z.y);
    const float big = a > b ? a : b, small = a > b ? b : a;
    if (big == 0.0f || big > 3.402823466e38f || small > 3.402823466e38f) return big + small;  // 0, inf, NaN
    const float q = small / big;
    return big * sqrtf(1.0f + q * q);
}

/// @brief The real part of `z`.
__host__ __device__ inline double cuCreal(cuDoubleComplex z) { return z.x; }
/// @brief The imaginary part of `z`.
__host__ __device__ inline double cuCimag(cuDoubleComplex z) { return z.y; }
/// @brief The complex number `re + i im`.
__host__ __device__ inline cuDoubleComplex make_cuDoubleComplex(double re, double im) { return make_double2(re, im); }
/// @brief The complex conjugate of `z`.
__host__ __device__ inline cuDoubleComplex cuConj(cuDoubleComplex z) { return make_cuDoubleComplex(z.x, -z.y); }
/// @brief `a + b`.
__host__ __device__ inline cuDoubleComplex cuCadd(cuDoubleComplex a, cuDoubleComplex b) {
    return make_cuDoubleComplex(a.x + b.x, a.y + b.y);
}
/// @brief `a - b`.
__host__ __device__ inline cuDoubleComplex cuCsub(cuDoubleComplex a, cuDoubleComplex b) {
    return make_cuDoubleComplex(a.x - b.x, a.y - b.y);
}
/// @brief `a * b`.
__host__ __device__ inline cuDoubleComplex cuCmul(cuDoubleComplex a, cuDoubleComplex b) {
    return make_cuDoubleComplex(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}
/// @brief `a / b`, scaled like cuCdivf.
__host__ __device__ inline cuDoubleComplex cuCdiv(cuDoubleComplex a, cuDoubleComplex b) {
    const double scale = 1.0 / (fabs(b.x) + fabs(b.y));
    const double ar = a.x * scale, ai = a.y * scale;
    const double br = b.x * scale, bi = b.y * scale;
    const double inv = 1.0 / (br * br + bi * bi);
    return make_cuDoubleComplex((ar * br + ai * bi) * inv, (ai * br - ar * bi) * inv);
}
/// @brief |z|, computed like cuCabsf.
__host__ __device__ inline double cuCabs(cuDoubleComplex z) {
    const double a = fabs(z.x), b = fabs(z.y);
    const double big = a > b ? a : b, small = a > b ? b : a;
    if (big == 0.0 || big > 1.79769313486231570e+308 || small > 1.79769313486231570e+308) return big + small;
    const double q = small / big;
    return big * sqrt(1.0 + q * q);
}

/// @brief The single precision complex number `re + i im`.
__host__ __device__ inline cuComplex make_cuComplex(float re, float im) { return make_cuFloatComplex(re, im); }
/// @brief `z` widened to double precision.
__host__ __device__ inline cuDoubleComplex cuComplexFloatToDouble(cuFloatComplex z) {
    double re = z.x, im = z.y;
    // GCC 12's SLP vectorizer folds "widen(narrow(v))" on a pair of lanes
    // into v at -O2, so cuComplexFloatToDouble(cuComplexDoubleToFloat(x))
    // would return x unrounded. The empty asm hides the values from that
    // fold and costs a register move.
    __asm__("" : "+g"(re), "+g"(im));
    return make_cuDoubleComplex(re, im);
}
/// @brief `z` rounded to single precision.
__host__ __device__ inline cuFloatComplex cuComplexDoubleToFloat(cuDoubleComplex z) {
    return make_cuFloatComplex(static_cast<float>(z.x), static_cast<float>(z.y));
}
/// @brief `a * b + c`.
__host__ __device__ inline cuComplex cuCfmaf(cuComplex a, cuComplex b, cuComplex c) {
    return make_cuComplex(a.x * b.x - a.y * b.y + c.x, a.x * b.y + a.y * b.x + c.y);
}
/// @brief `a * b + c`.
__host__ __device__ inline cuDoubleComplex cuCfma(cuDoubleComplex a, cuDoubleComplex b, cuDoubleComplex c) {
    return make_cuDoubleComplex(a.x * b.x - a.y * b.y + c.x, a.x * b.y + a.y * b.x + c.y);
}
