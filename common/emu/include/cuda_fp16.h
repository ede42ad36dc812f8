/// @file cuda_fp16.h
/// @brief Emulator stand-in for CUDA's `cuda_fp16.h`: the half-precision
/// type `__half` (IEEE binary16), its pair `__half2`, conversions with the
/// GPU's rounding, the arithmetic, comparison and math intrinsics, and the
/// operators nvcc defines for them.
///
/// Every result is the GPU's, bit for bit, for conversions and for add,
/// subtract, multiply, divide, fma and square root (computed in float or
/// double and rounded once: see course_emu/narrow_float.hpp). The
/// transcendental functions (hexp, hlog, hsin, ...) are the host's float
/// functions rounded to half: a GPU's approximations may differ in the last
/// bit. Shuffles of `__half` and `__half2` work through the emulator's
/// `__shfl_*_sync`, which take any value of up to 8 bytes.
///
/// The shared implementation (both this type and `__nv_bfloat16`) is
/// course_emu/narrow_float.hpp; see docs/emulator.md, "Half precision".
#pragma once

#include <course_emu/atomics.hpp>
#include <course_emu/narrow_float.hpp>
#include <course_emu/types.hpp>

#include <cstdint>

/// @brief The bits of a `__half`, without conversion (CUDA's `__half_raw`).
struct __half_raw {
    unsigned short x;
};
/// @brief The bits of a `__half2`: `x` the low half, `y` the high half.
struct __half2_raw {
    unsigned short x;
    unsigned short y;
};

struct __nv_bfloat16;

/// @brief IEEE binary16: 1 sign bit, 5 exponent bits, 10 fraction bits
/// (11 bits of precision), largest finite value 65504, smallest subnormal
/// 2^-24. Converts implicitly from and to float (rounding to nearest even),
/// double and the integer types (to integers: toward zero), as under nvcc
/// (the constructors and conversions are course_emu::detail::NarrowValue's).
struct alignas(2) __half : course_emu::detail::NarrowValue<__half, course_emu::detail::Binary16, __half_raw> {
    using NarrowValue::NarrowValue;
    using NarrowValue::operator=;
    __half() = default;
    /// Rounds a bfloat16 to nearest even (defined in cuda_bf16.h).
    explicit __half(const __nv_bfloat16 b);
};

/// @brief Two `__half` values in 4 bytes: `x` is the low half (lower
/// address), `y` the high half. The `h2` intrinsics work on each half.
struct alignas(4) __half2 {
    __half x;
    __half y;
    __half2() = default;
    constexpr __half2(const __half& a, const __half& b) : x(a), y(b) {}
    constexpr __half2(const __half2_raw& raw) : x(__half_raw{raw.x}), y(__half_raw{raw.y}) {}
    __half2& operator=(const __half2_raw& raw) { return *this = __half2(raw); }
    operator __half2_raw() const {
        return __half2_raw{static_cast<__half_raw>(x).x, static_cast<__half_raw>(y).x};
    }
};

typedef __half half;
typedef __half2 half2;

template <>
struct course_emu::detail::NarrowTraits<__half> {
    using Format = course_emu::detail::Binary16;
    using Raw = __half_raw;
};

COURSE_EMU_NARROW_FLOAT_API(__half, __half2)
COURSE_EMU_NARROW_INTEGER_CONVERSIONS(__half, half)
COURSE_EMU_NARROW_FLOAT_NAMED(__half, __half2, half, half2)

/// @name Constants (CUDA's CUDART_*_FP16)
/// @{
#define CUDART_INF_FP16 __ushort_as_half(static_cast<unsigned short>(0x7C00u))
#define CUDART_NAN_FP16 __ushort_as_half(static_cast<unsigned short>(0x7FFFu))
#define CUDART_MIN_DENORM_FP16 __ushort_as_half(static_cast<unsigned short>(0x0001u))
#define CUDART_MAX_NORMAL_FP16 __ushort_as_half(static_cast<unsigned short>(0x7BFFu))
#define CUDART_NEG_ZERO_FP16 __ushort_as_half(static_cast<unsigned short>(0x8000u))
#define CUDART_ZERO_FP16 __ushort_as_half(static_cast<unsigned short>(0x0000u))
#define CUDART_ONE_FP16 __ushort_as_half(static_cast<unsigned short>(0x3C00u))
/// @}
