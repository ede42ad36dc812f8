/// @file cuda_bf16.h
/// @brief Emulator stand-in for CUDA's `cuda_bf16.h`: the bfloat16 type
/// `__nv_bfloat16` (float's 8-bit exponent, 7 fraction bits), its pair
/// `__nv_bfloat162`, conversions with the GPU's rounding, the intrinsics
/// (the same names as for `__half`, overloaded) and the operators.
///
/// Conversions round as a GPU does (float to bfloat16: to nearest even on
/// the 16 bits dropped; NaN gives the canonical NaN 0x7FFF); arithmetic is
/// computed in float (fma in double) and rounded once, which equals the
/// GPU's result. Includes cuda_fp16.h, as CUDA's does. The shared
/// implementation is course_emu/narrow_float.hpp; see docs/emulator.md.
#pragma once

#include <cuda_fp16.h>

/// @brief The bits of a `__nv_bfloat16`, without conversion.
struct __nv_bfloat16_raw {
    unsigned short x;
};
/// @brief The bits of a `__nv_bfloat162`: `x` the low half, `y` the high half.
struct __nv_bfloat162_raw {
    unsigned short x;
    unsigned short y;
};

/// @brief bfloat16: 1 sign bit, 8 exponent bits, 7 fraction bits (8 bits
/// of precision), float's range. Converts implicitly from and to float,
/// double and the integer types, as under nvcc.
struct alignas(2) __nv_bfloat16
    : course_emu::detail::NarrowValue<__nv_bfloat16, course_emu::detail::BFloat16, __nv_bfloat16_raw> {
    using NarrowValue::NarrowValue;
    using NarrowValue::operator=;
    __nv_bfloat16() = default;
    /// Rounds a half to bfloat16's 8 bits of precision, to nearest even.
    explicit __nv_bfloat16(const __half h) : NarrowValue(static_cast<float>(h)) {}
};

/// @brief Two `__nv_bfloat16` values in 4 bytes: `x` low, `y` high.
struct alignas(4) __nv_bfloat162 {
    __nv_bfloat16 x;
    __nv_bfloat16 y;
    __nv_bfloat162() = default;
    constexpr __nv_bfloat162(const __nv_bfloat16& a, const __nv_bfloat16& b) : x(a), y(b) {}
    constexpr __nv_bfloat162(const __nv_bfloat162_raw& raw) : x(__nv_bfloat16_raw{raw.x}), y(__nv_bfloat16_raw{raw.y}) {}
    __nv_bfloat162& operator=(const __nv_bfloat162_raw& raw) { return *this = __nv_bfloat162(raw); }
    operator __nv_bfloat162_raw() const {
        return __nv_bfloat162_raw{static_cast<__nv_bfloat16_raw>(x).x, static_cast<__nv_bfloat16_raw>(y).x};
    }
};

typedef __nv_bfloat16 nv_bfloat16;
typedef __nv_bfloat162 nv_bfloat162;

/// Rounds to nearest even (a bfloat16 has fewer fraction bits but a wider range: large values become infinite).
inline __half::__half(const __nv_bfloat16 b) : NarrowValue(static_cast<float>(b)) {}

template <>
struct course_emu::detail::NarrowTraits<__nv_bfloat16> {
    using Format = course_emu::detail::BFloat16;
    using Raw = __nv_bfloat16_raw;
};

COURSE_EMU_NARROW_FLOAT_API(__nv_bfloat16, __nv_bfloat162)
COURSE_EMU_NARROW_INTEGER_CONVERSIONS(__nv_bfloat16, bfloat16)
COURSE_EMU_NARROW_FLOAT_NAMED(__nv_bfloat16, __nv_bfloat162, bfloat16, bfloat162)

/// @name Constants (CUDA's CUDART_*_BF16)
/// @{
#define CUDART_INF_BF16 __ushort_as_bfloat16(static_cast<unsigned short>(0x7F80u))
#define CUDART_NAN_BF16 __ushort_as_bfloat16(static_cast<unsigned short>(0x7FFFu))
#define CUDART_MIN_DENORM_BF16 __ushort_as_bfloat16(static_cast<unsigned short>(0x0001u))
#define CUDART_MAX_NORMAL_BF16 __ushort_as_bfloat16(static_cast<unsigned short>(0x7F7Fu))
#define CUDART_NEG_ZERO_BF16 __ushort_as_bfloat16(static_cast<unsigned short>(0x8000u))
#define CUDART_ZERO_BF16 __ushort_as_bfloat16(static_cast<unsigned short>(0x0000u))
#define CUDART_ONE_BF16 __ushort_as_bfloat16(static_cast<unsigned short>(0x3F80u))
/// @}
