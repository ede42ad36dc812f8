/// @file narrow_float.hpp
/// @brief The 16-bit floating-point formats behind `__half` (cuda_fp16.h) and
/// `__nv_bfloat16` (cuda_bf16.h): rounding into them, and the intrinsics both share.
///
/// Both formats are IEEE-style binary formats that differ only in their
/// field widths (binary16: 5 exponent and 10 fraction bits; bfloat16: 8 and
/// 7), so one rounding routine, parameterised by the widths, serves every
/// conversion into either of them: from float, double and the integer types,
/// in the four rounding modes, with subnormals, overflow and NaN as a GPU
/// gives them. The arithmetic intrinsics are computed in double and rounded
/// once: for add, subtract, multiply, divide and square root of 16-bit
/// operands that single rounding of the wider result equals the correctly
/// rounded 16-bit result (double keeps more than 2p + 2 bits of a p-bit
/// format, over the whole exponent range of both), and fma is made exact
/// (fma_to_narrow), which is what a GPU's half and bfloat16 instructions return.
///
/// This header is included by cuda_fp16.h and cuda_bf16.h; a kernel includes those.
#pragma once

#include <course_emu/device_functions.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace course_emu::detail {

/// @brief IEEE rounding directions: CUDA's `_rn`, `_rz`, `_rd` and `_ru` suffixes.
enum class Rounding { nearest_even, toward_zero, down, up };

/// @brief Field widths of a 16-bit format: `Exp` exponent bits, `Frac` fraction bits.
template <int Exp, int Frac>
struct NarrowFormat {
    static_assert(1 + Exp + Frac == 16, "a 16-bit format");
    static constexpr int exp_bits = Exp;
    static constexpr int frac_bits = Frac;
    static constexpr int bias = (1 << (Exp - 1)) - 1;
    static constexpr std::uint16_t sign_bit = 0x8000u;
    static constexpr std::uint16_t inf = static_cast<std::uint16_t>(((1u << Exp) - 1) << Frac);
    static constexpr std::uint16_t max_finite = inf - 1;
    /// The NaN every conversion and operation returns (a GPU's canonical NaN: sign clear, all fraction bits set).
    static constexpr std::uint16_t canonical_nan = 0x7FFFu;
};
using Binary16 = NarrowFormat<5, 10>;
using BFloat16 = NarrowFormat<8, 7>;

/// @brief The bits of the format nearest, in direction `mode`, to
/// `(-1)^negative * magnitude * 2^exponent` (exact inputs: `magnitude` is an integer).
template <class Format>
constexpr std::uint16_t round_to_narrow(bool negative, std::uint64_t magnitude, int exponent, Rounding mode) {
    const std::uint16_t sign = negative ? Format::sign_bit : 0;
    if (magnitude == 0) return sign;
    // Overflow gives infinity, except where the direction is toward zero:
    // then the largest finite value (IEEE 754's rule, the GPU's too).
    const bool away_from_zero = mode == Rounding::nearest_even || (mode == Rounding::up && !negative) ||
                                (mode == Rounding::down && negative);
    const std::uint16_t overflow = sign | (away_from_zero ? Format::inf : Format::max_finite);
    constexpr int emin = 1 - Format::bias;  // exponent of the smallest normal number
    const int leading = 63 - std::countl_zero(magnitude) + exponent;  // exponent of the leading bit
    if (leading > Format::bias) return overflow;
    const int scale = std::max(leading, emin);  // below emin the number is subnormal: fewer bits kept
    const int last_bit = scale - Format::frac_bits;  // exponent of the result's last kept bit
    const int shift = last_bit - exponent;
    std::uint64_t kept = 0;
    bool round_up = false;
    if (shift <= 0) {
        kept = magnitude << -shift;  // exact
    } else {
        // `shift` >= 64 only for inputs far below the smallest subnormal: nothing kept, a nonzero remainder below half.
        kept = shift >= 64 ? 0 : magnitude >> shift;
        const std::uint64_t remainder = shift >= 64 ? magnitude : magnitude & ((std::uint64_t{1} << shift) - 1);
        const std::uint64_t half = shift >= 65 ? std::numeric_limits<std::uint64_t>::max() : std::uint64_t{1} << (shift - 1);
        switch (mode) {
            case Rounding::nearest_even: round_up = remainder > half || (remainder == half && (kept & 1u)); break;
            case Rounding::toward_zero: break;
            case Rounding::down: round_up = negative && remainder != 0; break;
            case Rounding::up: round_up = !negative && remainder != 0; break;
        }
    }
    // `kept` holds the implicit leading bit for normal numbers; adding it to
    // the biased exponent minus one encodes the number, and a carry out of
    // the fraction (rounding up to the next power of two, or from the largest
    // subnormal to the smallest normal) lands in the exponent as it should.
    const std::uint64_t bits =
        (static_cast<std::uint64_t>(scale + Format::bias - 1) << Format::frac_bits) + kept + (round_up ? 1u : 0u);
    if (bits >= Format::inf) return overflow;
    return static_cast<std::uint16_t>(sign | bits);
}

/// @brief A float rounded into the format (NaN gives the canonical NaN, infinities stay infinite).
template <class Format>
constexpr std::uint16_t float_to_narrow(float value, Rounding mode) {
    const std::uint32_t u = std::bit_cast<std::uint32_t>(value);
    const bool negative = (u >> 31) != 0;
    const std::uint32_t field = (u >> 23) & 0xFFu;
    const std::uint32_t fraction = u & 0x7FFFFFu;
    if (field == 0xFFu) {
        if (fraction != 0) return Format::canonical_nan;
        return static_cast<std::uint16_t>((negative ? Format::sign_bit : 0) | Format::inf);
    }
    if (field == 0) return round_to_narrow<Format>(negative, fraction, -149, mode);
    return round_to_narrow<Format>(negative, fraction | 0x800000u, static_cast<int>(field) - 150, mode);
}

/// @brief A double rounded into the format directly (not through float, which would round twice).
template <class Format>
constexpr std::uint16_t double_to_narrow(double value, Rounding mode) {
    const std::uint64_t u = std::bit_cast<std::uint64_t>(value);
    const bool negative = (u >> 63) != 0;
    const std::uint64_t field = (u >> 52) & 0x7FFu;
    const std::uint64_t fraction = u & 0xFFFFFFFFFFFFFull;
    if (field == 0x7FFu) {
        if (fraction != 0) return Format::canonical_nan;
        return static_cast<std::uint16_t>((negative ? Format::sign_bit : 0) | Format::inf);
    }
    if (field == 0) return round_to_narrow<Format>(negative, fraction, -1074, mode);
    return round_to_narrow<Format>(negative, fraction | (std::uint64_t{1} << 52), static_cast<int>(field) - 1075, mode);
}

/// @brief An integer rounded into the format.
template <class Format, class Int>
constexpr std::uint16_t integer_to_narrow(Int value, Rounding mode) {
    bool negative = false;
    if constexpr (std::is_signed_v<Int>) negative = value < 0;
    // The magnitude of the most negative value does not fit Int: take it in the unsigned type.
    const std::uint64_t magnitude = negative ? std::uint64_t{0} - static_cast<std::uint64_t>(value)
                                             : static_cast<std::uint64_t>(value);
    return round_to_narrow<Format>(negative, magnitude, 0, mode);
}

/// @brief The value of the format's bits as a float (exact: float holds every value of both formats).
template <class Format>
inline float narrow_to_float(std::uint16_t bits) {
    const std::uint32_t sign = static_cast<std::uint32_t>(bits & Format::sign_bit) << 16;
    const std::uint32_t field = (bits >> Format::frac_bits) & ((1u << Format::exp_bits) - 1);
    const std::uint32_t fraction = bits & ((1u << Format::frac_bits) - 1);
    constexpr int widen = 23 - Format::frac_bits;  // fraction bits float has beyond the format's
    if (field == (1u << Format::exp_bits) - 1) {  // infinity, or NaN (its payload kept, quiet)
        return std::bit_cast<float>(sign | 0x7F800000u | (fraction << widen) | (fraction != 0 ? 0x400000u : 0u));
    }
    if (field == 0) {  // zero or subnormal: fraction * 2^(emin - frac_bits)
        const float magnitude = std::ldexp(static_cast<float>(fraction), 1 - Format::bias - Format::frac_bits);
        return sign != 0 ? -magnitude : magnitude;
    }
    return std::bit_cast<float>(sign | ((field - Format::bias + 127) << 23) | (fraction << widen));
}

/// @brief `a * b + c` rounded once into the format, as the GPU's fused
/// multiply-add does. The double fma is exact, or else it is rounded to odd
/// (its last bit set when inexact) so that the second rounding, into 16 bits,
/// cannot land on a false tie.
template <class Format>
inline std::uint16_t fma_to_narrow(float a, float b, float c, Rounding mode) {
    const double product = static_cast<double>(a) * b;  // exact: at most 2 * 11 significant bits
    const double sum = product + c;
    if (!std::isfinite(sum)) return double_to_narrow<Format>(std::fma(static_cast<double>(a), b, c), mode);
    // TwoSum: the exact error of the addition.
    const double b_virtual = sum - product;
    const double error = (product - (sum - b_virtual)) + (c - b_virtual);
    double odd = sum;
    if (error != 0 && (std::bit_cast<std::uint64_t>(sum) & 1u) == 0) {
        odd = std::nextafter(sum, error > 0 ? std::numeric_limits<double>::infinity()
                                            : -std::numeric_limits<double>::infinity());
    }
    return double_to_narrow<Format>(odd, mode);
}

/// @brief A float converted to an integer type after rounding as `mode`
/// says, as a GPU does: NaN gives 0, out-of-range values saturate.
template <class Int>
inline Int float_to_integer(float value, Rounding mode) {
    if (std::isnan(value)) return 0;
    double rounded = value;  // double: exact for every float, and holds the rounded value
    switch (mode) {
        case Rounding::nearest_even: rounded = std::nearbyint(rounded); break;
        case Rounding::toward_zero: rounded = std::trunc(rounded); break;
        case Rounding::down: rounded = std::floor(rounded); break;
        case Rounding::up: rounded = std::ceil(rounded); break;
    }
    if (rounded >= static_cast<double>(std::numeric_limits<Int>::max())) return std::numeric_limits<Int>::max();
    if (rounded <= static_cast<double>(std::numeric_limits<Int>::min())) return std::numeric_limits<Int>::min();
    return static_cast<Int>(rounded);
}

}  // namespace course_emu::detail

namespace course_emu::detail {

/// @brief What the shared intrinsics need to know of a 16-bit type: its
/// format, its raw struct (`__half_raw`), and its pair type (`__half2`).
/// Specialised by cuda_fp16.h and cuda_bf16.h.
template <class T>
struct NarrowTraits;

template <class T>
inline std::uint16_t bits_of(T value) {
    return static_cast<typename NarrowTraits<T>::Raw>(value).x;
}
template <class T>
inline T from_bits(std::uint16_t bits) {
    typename NarrowTraits<T>::Raw raw;
    raw.x = bits;
    return T(raw);
}
template <class T>
inline float to_float(T value) {
    return narrow_to_float<typename NarrowTraits<T>::Format>(bits_of(value));
}
template <class T>
inline T round_float(float value, Rounding mode = Rounding::nearest_even) {
    return from_bits<T>(float_to_narrow<typename NarrowTraits<T>::Format>(value, mode));
}
/// The arithmetic is done in double and rounded once: double holds every
/// product of two 16-bit values exactly and keeps more than 2p + 2 bits of
/// any p-bit sum, quotient or root, so that rounding equals the correctly
/// rounded result, down to the subnormals (float would not, for bfloat16's).
template <class T>
inline T round_double(double value) {
    return from_bits<T>(double_to_narrow<typename NarrowTraits<T>::Format>(value, Rounding::nearest_even));
}
template <class T>
inline double to_double(T value) {
    return to_float(value);
}
template <class T>
inline bool is_nan(T value) {
    using F = typename NarrowTraits<T>::Format;
    return (bits_of(value) & 0x7FFFu) > F::inf;
}
/// Clamps to [0, 1] for the `_sat` intrinsics; NaN gives +0, as on a GPU.
inline float saturate(float x) { return x > 0.0f ? (x < 1.0f ? x : 1.0f) : 0.0f; }

/// __hmax / __hmin: a NaN operand is ignored (both NaN: the canonical NaN),
/// and +0 counts as larger than -0.
template <class T>
inline T extremum(T a, T b, bool want_max, bool propagate_nan) {
    using F = typename NarrowTraits<T>::Format;
    const bool a_nan = is_nan(a), b_nan = is_nan(b);
    if (a_nan || b_nan) {
        if (propagate_nan || (a_nan && b_nan)) return from_bits<T>(F::canonical_nan);
        return a_nan ? b : a;
    }
    const float fa = to_float(a), fb = to_float(b);
    if (fa == fb) {  // equal values, or +0 and -0: the sign bit decides
        const bool a_negative = (bits_of(a) & F::sign_bit) != 0;
        return (a_negative == want_max) ? b : a;
    }
    return (fa > fb) == want_max ? a : b;
}

/// Applies a float function to each half of a pair and rounds each result.
template <class T2, class Op>
inline T2 lanewise(T2 a, T2 b, Op op) {
    return T2(op(a.x, b.x), op(a.y, b.y));
}
template <class T2, class Op>
inline T2 lanewise(T2 a, Op op) {
    return T2(op(a.x), op(a.y));
}

}  // namespace course_emu::detail

namespace course_emu::detail {

/// @brief The storage, constructors and conversions `__half` and
/// `__nv_bfloat16` share (CRTP: `Derived` is the type, `Raw` its raw struct).
/// As under nvcc: implicit from float and double (rounding to nearest even)
/// and from the integer types; implicit to float (exact) and to the integer
/// types (toward zero; NaN gives 0, out of range saturates); to bool (false
/// for +0 and -0 only).
template <class Derived, class Format, class Raw>
struct NarrowValue {
protected:
    unsigned short __x;

public:
    NarrowValue() = default;
    constexpr NarrowValue(const Raw& raw) : __x(raw.x) {}
    Derived& operator=(const Raw& raw) {
        __x = raw.x;
        return self();
    }
    volatile Derived& operator=(const Raw& raw) volatile {
        __x = raw.x;
        return static_cast<volatile Derived&>(*this);
    }
    operator Raw() const { return Raw{__x}; }
    operator Raw() const volatile { return Raw{__x}; }

    NarrowValue(float f) : __x(float_to_narrow<Format>(f, Rounding::nearest_even)) {}
    /// Directly from double: one rounding.
    NarrowValue(double d) : __x(double_to_narrow<Format>(d, Rounding::nearest_even)) {}
    operator float() const { return narrow_to_float<Format>(__x); }
    Derived& operator=(float f) { return assign(float_to_narrow<Format>(f, Rounding::nearest_even)); }
    Derived& operator=(double d) { return assign(double_to_narrow<Format>(d, Rounding::nearest_even)); }

    NarrowValue(short v) : __x(from_integer(v)) {}
    NarrowValue(unsigned short v) : __x(from_integer(v)) {}
    NarrowValue(int v) : __x(from_integer(v)) {}
    NarrowValue(unsigned int v) : __x(from_integer(v)) {}
    NarrowValue(long v) : __x(from_integer(v)) {}
    NarrowValue(unsigned long v) : __x(from_integer(v)) {}
    NarrowValue(long long v) : __x(from_integer(v)) {}
    NarrowValue(unsigned long long v) : __x(from_integer(v)) {}
    operator signed char() const { return to_integer<signed char>(); }
    operator unsigned char() const { return to_integer<unsigned char>(); }
    operator char() const { return to_integer<char>(); }
    operator short() const { return to_integer<short>(); }
    operator unsigned short() const { return to_integer<unsigned short>(); }
    operator int() const { return to_integer<int>(); }
    operator unsigned int() const { return to_integer<unsigned int>(); }
    operator long() const { return to_integer<long>(); }
    operator unsigned long() const { return to_integer<unsigned long>(); }
    operator long long() const { return to_integer<long long>(); }
    operator unsigned long long() const { return to_integer<unsigned long long>(); }
    Derived& operator=(short v) { return assign(from_integer(v)); }
    Derived& operator=(unsigned short v) { return assign(from_integer(v)); }
    Derived& operator=(int v) { return assign(from_integer(v)); }
    Derived& operator=(unsigned int v) { return assign(from_integer(v)); }
    Derived& operator=(long long v) { return assign(from_integer(v)); }
    Derived& operator=(unsigned long long v) { return assign(from_integer(v)); }
    constexpr operator bool() const { return (__x & 0x7FFFu) != 0; }

private:
    Derived& self() { return static_cast<Derived&>(*this); }
    Derived& assign(unsigned short bits) {
        __x = bits;
        return self();
    }
    template <class Int>
    static unsigned short from_integer(Int v) {
        return integer_to_narrow<Format>(v, Rounding::nearest_even);
    }
    template <class Int>
    Int to_integer() const {
        return float_to_integer<Int>(narrow_to_float<Format>(__x), Rounding::toward_zero);
    }
};

}  // namespace course_emu::detail

// The intrinsics and operators CUDA gives both __half (cuda_fp16.h) and
// __nv_bfloat16 (cuda_bf16.h), with the same names, as overloads per type
// (not templates), so a call converts its arguments exactly as under nvcc.
// Each header instantiates this once: T is the type, T2 its pair.
// clang-format off
#define COURSE_EMU_NARROW_FLOAT_API(T, T2)                                                                             \
    /* arithmetic: computed in double, rounded once */                                                  \
    inline T __hadd(T a, T b) { return course_emu::detail::round_double<T>(course_emu::detail::to_double(a) + course_emu::detail::to_double(b)); } \
    inline T __hsub(T a, T b) { return course_emu::detail::round_double<T>(course_emu::detail::to_double(a) - course_emu::detail::to_double(b)); } \
    inline T __hmul(T a, T b) { return course_emu::detail::round_double<T>(course_emu::detail::to_double(a) * course_emu::detail::to_double(b)); } \
    inline T __hdiv(T a, T b) { return course_emu::detail::round_double<T>(course_emu::detail::to_double(a) / course_emu::detail::to_double(b)); } \
    /* _rn: never contracted into an fma by nvcc; the same result here */                                              \
    inline T __hadd_rn(T a, T b) { return __hadd(a, b); }                                                              \
    inline T __hsub_rn(T a, T b) { return __hsub(a, b); }                                                              \
    inline T __hmul_rn(T a, T b) { return __hmul(a, b); }                                                              \
    inline T __hfma(T a, T b, T c) {                                                                                   \
        return course_emu::detail::from_bits<T>(course_emu::detail::fma_to_narrow<course_emu::detail::NarrowTraits<T>::Format>( \
            course_emu::detail::to_float(a), course_emu::detail::to_float(b), course_emu::detail::to_float(c),             \
            course_emu::detail::Rounding::nearest_even));                                                              \
    }                                                                                                                  \
    inline T __hadd_sat(T a, T b) { return course_emu::detail::round_float<T>(course_emu::detail::saturate(course_emu::detail::to_float(__hadd(a, b)))); } \
    inline T __hsub_sat(T a, T b) { return course_emu::detail::round_float<T>(course_emu::detail::saturate(course_emu::detail::to_float(__hsub(a, b)))); } \
    inline T __hmul_sat(T a, T b) { return course_emu::detail::round_float<T>(course_emu::detail::saturate(course_emu::detail::to_float(__hmul(a, b)))); } \
    inline T __hfma_sat(T a, T b, T c) { return course_emu::detail::round_float<T>(course_emu::detail::saturate(course_emu::detail::to_float(__hfma(a, b, c)))); } \
    /* relu: negative results give +0, NaN gives the canonical NaN */                                                  \
    inline T __hfma_relu(T a, T b, T c) {                                                                              \
        const T r = __hfma(a, b, c);                                                                                   \
        if (course_emu::detail::is_nan(r)) return course_emu::detail::from_bits<T>(course_emu::detail::NarrowTraits<T>::Format::canonical_nan); \
        return course_emu::detail::to_float(r) < 0.0f ? course_emu::detail::from_bits<T>(0) : r;                       \
    }                                                                                                                  \
    /* sign: bit operations, NaN included (as on a GPU) */                                                             \
    inline T __hneg(T a) { return course_emu::detail::from_bits<T>(course_emu::detail::bits_of(a) ^ 0x8000u); }        \
    inline T __habs(T a) { return course_emu::detail::from_bits<T>(course_emu::detail::bits_of(a) & 0x7FFFu); }        \
    inline T __hmax(T a, T b) { return course_emu::detail::extremum(a, b, true, false); }                              \
    inline T __hmin(T a, T b) { return course_emu::detail::extremum(a, b, false, false); }                             \
    inline T __hmax_nan(T a, T b) { return course_emu::detail::extremum(a, b, true, true); }                           \
    inline T __hmin_nan(T a, T b) { return course_emu::detail::extremum(a, b, false, true); }                          \
    inline bool __hisnan(T a) { return course_emu::detail::is_nan(a); }                                                \
    /* comparisons: the plain forms are false when either is NaN, the u forms true */                                  \
    inline bool __heq(T a, T b) { return course_emu::detail::to_float(a) == course_emu::detail::to_float(b); }         \
    inline bool __hne(T a, T b) { return !__hisnan(a) && !__hisnan(b) && course_emu::detail::to_float(a) != course_emu::detail::to_float(b); } \
    inline bool __hlt(T a, T b) { return course_emu::detail::to_float(a) < course_emu::detail::to_float(b); }          \
    inline bool __hle(T a, T b) { return course_emu::detail::to_float(a) <= course_emu::detail::to_float(b); }         \
    inline bool __hgt(T a, T b) { return course_emu::detail::to_float(a) > course_emu::detail::to_float(b); }          \
    inline bool __hge(T a, T b) { return course_emu::detail::to_float(a) >= course_emu::detail::to_float(b); }         \
    inline bool __hequ(T a, T b) { return !__hne(a, b); }                                                              \
    inline bool __hneu(T a, T b) { return !__heq(a, b); }                                                              \
    inline bool __hltu(T a, T b) { return !__hge(a, b); }                                                              \
    inline bool __hleu(T a, T b) { return !__hgt(a, b); }                                                              \
    inline bool __hgtu(T a, T b) { return !__hle(a, b); }                                                              \
    inline bool __hgeu(T a, T b) { return !__hlt(a, b); }                                                              \
    /* -1 for -infinity, 1 for +infinity, else 0 */                                                                    \
    inline int __hisinf(T a) {                                                                                         \
        const auto bits = course_emu::detail::bits_of(a);                                                              \
        if ((bits & 0x7FFFu) != course_emu::detail::NarrowTraits<T>::Format::inf) return 0;                            \
        return (bits & 0x8000u) != 0 ? -1 : 1;                                                                         \
    }                                                                                                                  \
    /* math: the float function rounded once (a GPU's may differ by an ulp; see docs/emulator.md) */                  \
    inline T hsqrt(T a) { return course_emu::detail::round_double<T>(std::sqrt(course_emu::detail::to_double(a))); }  \
    inline T hrsqrt(T a) { return course_emu::detail::round_double<T>(1.0 / std::sqrt(course_emu::detail::to_double(a))); } \
    inline T hrcp(T a) { return course_emu::detail::round_double<T>(1.0 / course_emu::detail::to_double(a)); }        \
    inline T hexp(T a) { return course_emu::detail::round_float<T>(std::exp(course_emu::detail::to_float(a))); }       \
    inline T hexp2(T a) { return course_emu::detail::round_float<T>(std::exp2(course_emu::detail::to_float(a))); }     \
    inline T hexp10(T a) { return course_emu::detail::round_float<T>(std::pow(10.0f, course_emu::detail::to_float(a))); } \
    inline T hlog(T a) { return course_emu::detail::round_float<T>(std::log(course_emu::detail::to_float(a))); }       \
    inline T hlog2(T a) { return course_emu::detail::round_float<T>(std::log2(course_emu::detail::to_float(a))); }     \
    inline T hlog10(T a) { return course_emu::detail::round_float<T>(std::log10(course_emu::detail::to_float(a))); }   \
    inline T hsin(T a) { return course_emu::detail::round_float<T>(std::sin(course_emu::detail::to_float(a))); }       \
    inline T hcos(T a) { return course_emu::detail::round_float<T>(std::cos(course_emu::detail::to_float(a))); }       \
    inline T htanh(T a) { return course_emu::detail::round_float<T>(std::tanh(course_emu::detail::to_float(a))); }     \
    inline T htanh_approx(T a) { return htanh(a); }                                                                    \
    inline T htrunc(T a) { return course_emu::detail::round_float<T>(std::trunc(course_emu::detail::to_float(a))); }   \
    inline T hceil(T a) { return course_emu::detail::round_float<T>(std::ceil(course_emu::detail::to_float(a))); }     \
    inline T hfloor(T a) { return course_emu::detail::round_float<T>(std::floor(course_emu::detail::to_float(a))); }   \
    inline T hrint(T a) { return course_emu::detail::round_float<T>(std::nearbyint(course_emu::detail::to_float(a))); } \
    /* the pair: each half on its own */                                                                               \
    inline T2 __hadd2(T2 a, T2 b) { return course_emu::detail::lanewise(a, b, [](T x, T y) { return __hadd(x, y); }); } \
    inline T2 __hsub2(T2 a, T2 b) { return course_emu::detail::lanewise(a, b, [](T x, T y) { return __hsub(x, y); }); } \
    inline T2 __hmul2(T2 a, T2 b) { return course_emu::detail::lanewise(a, b, [](T x, T y) { return __hmul(x, y); }); } \
    inline T2 __h2div(T2 a, T2 b) { return course_emu::detail::lanewise(a, b, [](T x, T y) { return __hdiv(x, y); }); } \
    inline T2 __hadd2_rn(T2 a, T2 b) { return __hadd2(a, b); }                                                         \
    inline T2 __hsub2_rn(T2 a, T2 b) { return __hsub2(a, b); }                                                         \
    inline T2 __hmul2_rn(T2 a, T2 b) { return __hmul2(a, b); }                                                         \
    inline T2 __hadd2_sat(T2 a, T2 b) { return course_emu::detail::lanewise(a, b, [](T x, T y) { return __hadd_sat(x, y); }); } \
    inline T2 __hsub2_sat(T2 a, T2 b) { return course_emu::detail::lanewise(a, b, [](T x, T y) { return __hsub_sat(x, y); }); } \
    inline T2 __hmul2_sat(T2 a, T2 b) { return course_emu::detail::lanewise(a, b, [](T x, T y) { return __hmul_sat(x, y); }); } \
    inline T2 __hfma2(T2 a, T2 b, T2 c) { return T2(__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y)); }                  \
    inline T2 __hfma2_sat(T2 a, T2 b, T2 c) { return T2(__hfma_sat(a.x, b.x, c.x), __hfma_sat(a.y, b.y, c.y)); }      \
    inline T2 __hfma2_relu(T2 a, T2 b, T2 c) { return T2(__hfma_relu(a.x, b.x, c.x), __hfma_relu(a.y, b.y, c.y)); }   \
    inline T2 __hneg2(T2 a) { return T2(__hneg(a.x), __hneg(a.y)); }                                                   \
    inline T2 __habs2(T2 a) { return T2(__habs(a.x), __habs(a.y)); }                                                   \
    inline T2 __hmax2(T2 a, T2 b) { return T2(__hmax(a.x, b.x), __hmax(a.y, b.y)); }                                   \
    inline T2 __hmin2(T2 a, T2 b) { return T2(__hmin(a.x, b.x), __hmin(a.y, b.y)); }                                   \
    inline T2 __hmax2_nan(T2 a, T2 b) { return T2(__hmax_nan(a.x, b.x), __hmax_nan(a.y, b.y)); }                       \
    inline T2 __hmin2_nan(T2 a, T2 b) { return T2(__hmin_nan(a.x, b.x), __hmin_nan(a.y, b.y)); }                       \
    inline T2 __hisnan2(T2 a) { return T2(T(__hisnan(a.x) ? 1.0f : 0.0f), T(__hisnan(a.y) ? 1.0f : 0.0f)); }          \
    COURSE_EMU_NARROW_PAIR_COMPARISON(T, T2, eq) COURSE_EMU_NARROW_PAIR_COMPARISON(T, T2, ne)                          \
    COURSE_EMU_NARROW_PAIR_COMPARISON(T, T2, lt) COURSE_EMU_NARROW_PAIR_COMPARISON(T, T2, le)                          \
    COURSE_EMU_NARROW_PAIR_COMPARISON(T, T2, gt) COURSE_EMU_NARROW_PAIR_COMPARISON(T, T2, ge)                          \
    COURSE_EMU_NARROW_PAIR_COMPARISON(T, T2, equ) COURSE_EMU_NARROW_PAIR_COMPARISON(T, T2, neu)                        \
    COURSE_EMU_NARROW_PAIR_COMPARISON(T, T2, ltu) COURSE_EMU_NARROW_PAIR_COMPARISON(T, T2, leu)                        \
    COURSE_EMU_NARROW_PAIR_COMPARISON(T, T2, gtu) COURSE_EMU_NARROW_PAIR_COMPARISON(T, T2, geu)                        \
    COURSE_EMU_NARROW_PAIR_MATH(T2, sqrt) COURSE_EMU_NARROW_PAIR_MATH(T2, rsqrt) COURSE_EMU_NARROW_PAIR_MATH(T2, rcp)  \
    COURSE_EMU_NARROW_PAIR_MATH(T2, exp) COURSE_EMU_NARROW_PAIR_MATH(T2, exp2) COURSE_EMU_NARROW_PAIR_MATH(T2, exp10)  \
    COURSE_EMU_NARROW_PAIR_MATH(T2, log) COURSE_EMU_NARROW_PAIR_MATH(T2, log2) COURSE_EMU_NARROW_PAIR_MATH(T2, log10)  \
    COURSE_EMU_NARROW_PAIR_MATH(T2, sin) COURSE_EMU_NARROW_PAIR_MATH(T2, cos) COURSE_EMU_NARROW_PAIR_MATH(T2, tanh)    \
    COURSE_EMU_NARROW_PAIR_MATH(T2, trunc) COURSE_EMU_NARROW_PAIR_MATH(T2, ceil) COURSE_EMU_NARROW_PAIR_MATH(T2, floor) \
    COURSE_EMU_NARROW_PAIR_MATH(T2, rint) COURSE_EMU_NARROW_PAIR_MATH(T2, tanh_approx)                                 \
    inline T2 __lowhigh2highlow(T2 a) { return T2(a.y, a.x); }                                                         \
    inline float __low2float(T2 a) { return course_emu::detail::to_float(a.x); }                                       \
    inline float __high2float(T2 a) { return course_emu::detail::to_float(a.y); }                                      \
    /* loads and stores with cache hints: plain on the emulator */                                                     \
    COURSE_EMU_LOAD_FUNCTIONS(T) COURSE_EMU_LOAD_FUNCTIONS(T2)                                                             \
    /* atomicAdd: a compare-and-swap loop (one half at a time within a pair on a GPU too) */                           \
    inline T atomicAdd(T* address, T val) {                                                                            \
        return course_emu::detail::atomic_update("atomicAdd", course_emu::detail::AtomicKind::add, address,            \
                                                 [val](T old) { return __hadd(old, val); });                           \
    }                                                                                                                  \
    inline T2 atomicAdd(T2* address, T2 val) {                                                                         \
        return course_emu::detail::atomic_update("atomicAdd", course_emu::detail::AtomicKind::add, address,            \
                                                 [val](T2 old) { return __hadd2(old, val); });                         \
    }                                                                                                                  \
    /* operators, as nvcc defines them (on the host too, since CUDA 12.2) */                                           \
    inline T operator+(const T& a, const T& b) { return __hadd(a, b); }                                                \
    inline T operator-(const T& a, const T& b) { return __hsub(a, b); }                                                \
    inline T operator*(const T& a, const T& b) { return __hmul(a, b); }                                                \
    inline T operator/(const T& a, const T& b) { return __hdiv(a, b); }                                                \
    inline T& operator+=(T& a, const T& b) { return a = __hadd(a, b); }                                                \
    inline T& operator-=(T& a, const T& b) { return a = __hsub(a, b); }                                                \
    inline T& operator*=(T& a, const T& b) { return a = __hmul(a, b); }                                                \
    inline T& operator/=(T& a, const T& b) { return a = __hdiv(a, b); }                                                \
    inline T& operator++(T& a) { return a = __hadd(a, T(1.0f)); }                                                      \
    inline T& operator--(T& a) { return a = __hsub(a, T(1.0f)); }                                                      \
    inline T operator++(T& a, int) { const T old = a; ++a; return old; }                                               \
    inline T operator--(T& a, int) { const T old = a; --a; return old; }                                               \
    inline T operator+(const T& a) { return a; }                                                                       \
    inline T operator-(const T& a) { return __hneg(a); }                                                               \
    inline bool operator==(const T& a, const T& b) { return __heq(a, b); }                                             \
    inline bool operator!=(const T& a, const T& b) { return __hneu(a, b); }                                            \
    inline bool operator<(const T& a, const T& b) { return __hlt(a, b); }                                              \
    inline bool operator<=(const T& a, const T& b) { return __hle(a, b); }                                             \
    inline bool operator>(const T& a, const T& b) { return __hgt(a, b); }                                              \
    inline bool operator>=(const T& a, const T& b) { return __hge(a, b); }                                             \
    inline T2 operator+(const T2& a, const T2& b) { return __hadd2(a, b); }                                            \
    inline T2 operator-(const T2& a, const T2& b) { return __hsub2(a, b); }                                            \
    inline T2 operator*(const T2& a, const T2& b) { return __hmul2(a, b); }                                            \
    inline T2 operator/(const T2& a, const T2& b) { return __h2div(a, b); }                                            \
    inline T2& operator+=(T2& a, const T2& b) { return a = __hadd2(a, b); }                                            \
    inline T2& operator-=(T2& a, const T2& b) { return a = __hsub2(a, b); }                                            \
    inline T2& operator*=(T2& a, const T2& b) { return a = __hmul2(a, b); }                                            \
    inline T2& operator/=(T2& a, const T2& b) { return a = __h2div(a, b); }                                            \
    inline T2& operator++(T2& a) { return a = __hadd2(a, T2(T(1.0f), T(1.0f))); }                                      \
    inline T2& operator--(T2& a) { return a = __hsub2(a, T2(T(1.0f), T(1.0f))); }                                      \
    inline T2 operator++(T2& a, int) { const T2 old = a; ++a; return old; }                                            \
    inline T2 operator--(T2& a, int) { const T2 old = a; --a; return old; }                                            \
    inline T2 operator+(const T2& a) { return a; }                                                                     \
    inline T2 operator-(const T2& a) { return __hneg2(a); }                                                            \
    inline bool operator==(const T2& a, const T2& b) { return __hbeq2(a, b); }                                         \
    inline bool operator!=(const T2& a, const T2& b) { return __hbneu2(a, b); }                                        \
    inline bool operator<(const T2& a, const T2& b) { return __hblt2(a, b); }                                          \
    inline bool operator<=(const T2& a, const T2& b) { return __hble2(a, b); }                                         \
    inline bool operator>(const T2& a, const T2& b) { return __hbgt2(a, b); }                                          \
    inline bool operator>=(const T2& a, const T2& b) { return __hbge2(a, b); }

// __heq2 (each half 1.0 or 0.0), __hbeq2 (true when both halves compare
// true) and __heq2_mask (0xFFFF for each half that compares true).
#define COURSE_EMU_NARROW_PAIR_COMPARISON(T, T2, NAME)                                                                 \
    inline T2 __h##NAME##2(T2 a, T2 b) {                                                                               \
        return T2(T(__h##NAME(a.x, b.x) ? 1.0f : 0.0f), T(__h##NAME(a.y, b.y) ? 1.0f : 0.0f));                         \
    }                                                                                                                  \
    inline bool __hb##NAME##2(T2 a, T2 b) { return __h##NAME(a.x, b.x) && __h##NAME(a.y, b.y); }                      \
    inline unsigned __h##NAME##2_mask(T2 a, T2 b) {                                                                    \
        return (__h##NAME(a.x, b.x) ? 0xFFFFu : 0u) | (__h##NAME(a.y, b.y) ? 0xFFFF0000u : 0u);                        \
    }

#define COURSE_EMU_NARROW_PAIR_MATH(T2, NAME) \
    inline T2 h2##NAME(T2 a) { return T2(h##NAME(a.x), h##NAME(a.y)); }

// Conversions between the type (named NAME in CUDA's function names: half,
// bfloat16) and the integer types, in the four rounding modes. To an
// integer: NaN gives 0 and values out of range saturate, as on a GPU.
#define COURSE_EMU_NARROW_INTEGER_CONVERSIONS(T, NAME)                                                                 \
    COURSE_EMU_NARROW_INTEGER_CONVERSION(T, NAME, int, int)                                                            \
    COURSE_EMU_NARROW_INTEGER_CONVERSION(T, NAME, uint, unsigned int)                                                  \
    COURSE_EMU_NARROW_INTEGER_CONVERSION(T, NAME, short, short)                                                        \
    COURSE_EMU_NARROW_INTEGER_CONVERSION(T, NAME, ushort, unsigned short)                                              \
    COURSE_EMU_NARROW_INTEGER_CONVERSION(T, NAME, ll, long long)                                                       \
    COURSE_EMU_NARROW_INTEGER_CONVERSION(T, NAME, ull, unsigned long long)                                             \
    inline signed char __##NAME##2char_rz(T a) {                                                                       \
        return course_emu::detail::float_to_integer<signed char>(course_emu::detail::to_float(a), course_emu::detail::Rounding::toward_zero); \
    }                                                                                                                  \
    inline unsigned char __##NAME##2uchar_rz(T a) {                                                                    \
        return course_emu::detail::float_to_integer<unsigned char>(course_emu::detail::to_float(a), course_emu::detail::Rounding::toward_zero); \
    }

#define COURSE_EMU_NARROW_INTEGER_CONVERSION(T, NAME, SHORT, INT)                                                      \
    COURSE_EMU_NARROW_INTEGER_ROUNDING(T, NAME, SHORT, INT, rn, nearest_even)                                          \
    COURSE_EMU_NARROW_INTEGER_ROUNDING(T, NAME, SHORT, INT, rz, toward_zero)                                           \
    COURSE_EMU_NARROW_INTEGER_ROUNDING(T, NAME, SHORT, INT, rd, down)                                                  \
    COURSE_EMU_NARROW_INTEGER_ROUNDING(T, NAME, SHORT, INT, ru, up)

#define COURSE_EMU_NARROW_INTEGER_ROUNDING(T, NAME, SHORT, INT, SUFFIX, MODE)                                           \
    inline T __##SHORT##2##NAME##_##SUFFIX(INT i) {                                                                    \
        return course_emu::detail::from_bits<T>(course_emu::detail::integer_to_narrow<course_emu::detail::NarrowTraits<T>::Format>( \
            i, course_emu::detail::Rounding::MODE));                                                                   \
    }                                                                                                                  \
    inline INT __##NAME##2##SHORT##_##SUFFIX(T a) {                                                                    \
        return course_emu::detail::float_to_integer<INT>(course_emu::detail::to_float(a), course_emu::detail::Rounding::MODE); \
    }
// clang-format on

// The conversions whose names carry the type's name: NAME is `half` or
// `bfloat16`, NAME2 its pair's (`half2`, `bfloat162`), as in CUDA's
// __float2half_rn / __float2bfloat16_rn, __halves2half2 / __halves2bfloat162.
// clang-format off
#define COURSE_EMU_NARROW_FLOAT_NAMED(T, T2, NAME, NAME2)                                                              \
    inline T __float2##NAME(float f) { return course_emu::detail::round_float<T>(f); }                                 \
    inline T __float2##NAME##_rn(float f) { return course_emu::detail::round_float<T>(f); }                            \
    inline T __float2##NAME##_rz(float f) { return course_emu::detail::round_float<T>(f, course_emu::detail::Rounding::toward_zero); } \
    inline T __float2##NAME##_rd(float f) { return course_emu::detail::round_float<T>(f, course_emu::detail::Rounding::down); } \
    inline T __float2##NAME##_ru(float f) { return course_emu::detail::round_float<T>(f, course_emu::detail::Rounding::up); } \
    inline T __double2##NAME(double d) {                                                                               \
        return course_emu::detail::from_bits<T>(course_emu::detail::double_to_narrow<course_emu::detail::NarrowTraits<T>::Format>( \
            d, course_emu::detail::Rounding::nearest_even));                                                           \
    }                                                                                                                  \
    inline float __##NAME##2float(T a) { return course_emu::detail::to_float(a); }                                     \
    inline T2 __float2##NAME2##_rn(float f) { return T2(__float2##NAME(f), __float2##NAME(f)); }                       \
    inline T2 __floats2##NAME2##_rn(float a, float b) { return T2(__float2##NAME(a), __float2##NAME(b)); }             \
    inline T2 __float22##NAME2##_rn(float2 f) { return T2(__float2##NAME(f.x), __float2##NAME(f.y)); }                 \
    inline float2 __##NAME2##2float2(T2 a) { return float2{__##NAME##2float(a.x), __##NAME##2float(a.y)}; }            \
    inline T2 make_##NAME2(T x, T y) { return T2(x, y); }                                                              \
    inline T2 __##NAME##2##NAME2(T a) { return T2(a, a); }                                                             \
    inline T2 __halves2##NAME2(T low, T high) { return T2(low, high); }                                                \
    inline T2 __lows2##NAME2(T2 a, T2 b) { return T2(a.x, b.x); }                                                      \
    inline T2 __highs2##NAME2(T2 a, T2 b) { return T2(a.y, b.y); }                                                     \
    inline T2 __low2##NAME2(T2 a) { return T2(a.x, a.x); }                                                             \
    inline T2 __high2##NAME2(T2 a) { return T2(a.y, a.y); }                                                            \
    inline T __low2##NAME(T2 a) { return a.x; }                                                                        \
    inline T __high2##NAME(T2 a) { return a.y; }                                                                       \
    inline short __##NAME##_as_short(T a) { return static_cast<short>(course_emu::detail::bits_of(a)); }               \
    inline unsigned short __##NAME##_as_ushort(T a) { return course_emu::detail::bits_of(a); }                         \
    inline T __short_as_##NAME(short i) { return course_emu::detail::from_bits<T>(static_cast<std::uint16_t>(i)); }   \
    inline T __ushort_as_##NAME(unsigned short i) { return course_emu::detail::from_bits<T>(i); }
// clang-format on
