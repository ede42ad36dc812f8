/// @file device_functions.hpp
/// @brief Device-side functions a kernel may call: math and bit intrinsics, `__trap`.
///
/// Barriers and warp collectives are in sync.hpp, atomics in atomics.hpp.
#pragma once

#include <bit>
#include <climits>
#include <limits>
#include <cmath>
#include <cstdint>
#include <cstring>
// The C headers, not only their <c...> forms: a kernel calls fminf, sqrtf,
// expf or printf unqualified, as CUDA's headers allow.
#include <math.h>
#include <stdio.h>

#include <course_emu/launch.hpp>
#include <course_emu/types.hpp>

// CUDA provides min and max overloads in the global namespace for device code.
inline int min(int a, int b) { return a < b ? a : b; }
inline unsigned int min(unsigned int a, unsigned int b) { return a < b ? a : b; }
inline long long min(long long a, long long b) { return a < b ? a : b; }
inline unsigned long long min(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
inline float min(float a, float b) { return std::fmin(a, b); }
inline double min(double a, double b) { return std::fmin(a, b); }
inline int max(int a, int b) { return a > b ? a : b; }
inline unsigned int max(unsigned int a, unsigned int b) { return a > b ? a : b; }
inline long long max(long long a, long long b) { return a > b ? a : b; }
inline unsigned long long max(unsigned long long a, unsigned long long b) { return a > b ? a : b; }
inline float max(float a, float b) { return std::fmax(a, b); }
inline double max(double a, double b) { return std::fmax(a, b); }

// Reinterpretation intrinsics.
inline int __float_as_int(float f) { return std::bit_cast<int>(f); }
inline unsigned int __float_as_uint(float f) { return std::bit_cast<unsigned int>(f); }
inline float __int_as_float(int i) { return std::bit_cast<float>(i); }
inline float __uint_as_float(unsigned int i) { return std::bit_cast<float>(i); }
inline long long __double_as_longlong(double d) { return std::bit_cast<long long>(d); }
inline double __longlong_as_double(long long i) { return std::bit_cast<double>(i); }

// Bit intrinsics.
inline int __popc(unsigned int x) { return std::popcount(x); }
inline int __popcll(unsigned long long x) { return std::popcount(x); }
inline int __clz(int x) { return std::countl_zero(static_cast<unsigned int>(x)); }
inline int __clzll(long long x) { return std::countl_zero(static_cast<unsigned long long>(x)); }
inline int __ffs(int x) { return x == 0 ? 0 : std::countr_zero(static_cast<unsigned int>(x)) + 1; }
inline int __ffsll(long long x) {
    return x == 0 ? 0 : std::countr_zero(static_cast<unsigned long long>(x)) + 1;
}
inline unsigned int __brev(unsigned int x) {
    unsigned int r = 0;
    for (int i = 0; i < 32; ++i) r |= ((x >> i) & 1u) << (31 - i);
    return r;
}
/// @brief The bits of `x` in reverse order (bit 0 becomes bit 63).
inline unsigned long long __brevll(unsigned long long x) {
    return (static_cast<unsigned long long>(__brev(static_cast<unsigned int>(x))) << 32) |
           __brev(static_cast<unsigned int>(x >> 32));
}
/// @brief Byte permutation: byte n of the result is byte ((s >> 4n) & 7) of
/// the eight bytes {x's bytes 0-3, y's bytes 4-7}.
inline unsigned int __byte_perm(unsigned int x, unsigned int y, unsigned int s) {
    const unsigned long long bytes = (static_cast<unsigned long long>(y) << 32) | x;
    unsigned int r = 0;
    for (int n = 0; n < 4; ++n) {
        const unsigned selector = (s >> (4 * n)) & 7u;
        r |= static_cast<unsigned int>((bytes >> (8 * selector)) & 0xFFu) << (8 * n);
    }
    return r;
}
/// @brief The upper 32 bits of `(hi:lo) << (shift & 31)` (a 64-bit funnel shift).
inline unsigned int __funnelshift_l(unsigned int lo, unsigned int hi, unsigned int shift) {
    const unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
    return static_cast<unsigned int>((v << (shift & 31u)) >> 32);
}
/// @brief Like __funnelshift_l, with the shift clamped to 32.
inline unsigned int __funnelshift_lc(unsigned int lo, unsigned int hi, unsigned int shift) {
    const unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
    return static_cast<unsigned int>((v << (shift < 32u ? shift : 32u)) >> 32);
}
/// @brief The lower 32 bits of `(hi:lo) >> (shift & 31)`.
inline unsigned int __funnelshift_r(unsigned int lo, unsigned int hi, unsigned int shift) {
    const unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
    return static_cast<unsigned int>(v >> (shift & 31u));
}
/// @brief Like __funnelshift_r, with the shift clamped to 32.
inline unsigned int __funnelshift_rc(unsigned int lo, unsigned int hi, unsigned int shift) {
    const unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
    return static_cast<unsigned int>(v >> (shift < 32u ? shift : 32u));
}

// Integer arithmetic intrinsics.
/// @brief The upper 32 bits of the 64-bit product `x * y`.
inline int __mulhi(int x, int y) {
    return static_cast<int>((static_cast<long long>(x) * y) >> 32);
}
/// @brief The upper 32 bits of the 64-bit product `x * y`.
inline unsigned int __umulhi(unsigned int x, unsigned int y) {
    return static_cast<unsigned int>((static_cast<unsigned long long>(x) * y) >> 32);
}
/// @brief The upper 64 bits of the 128-bit product `x * y`.
inline long long __mul64hi(long long x, long long y) {
    return static_cast<long long>((static_cast<__int128>(x) * y) >> 64);
}
/// @brief The upper 64 bits of the 128-bit product `x * y`.
inline unsigned long long __umul64hi(unsigned long long x, unsigned long long y) {
    return static_cast<unsigned long long>((static_cast<unsigned __int128>(x) * y) >> 64);
}
/// @brief The low 32 bits of the product of the low 24 bits of `x` and `y` (sign-extended).
inline int __mul24(int x, int y) {
    const long long a = static_cast<int>(static_cast<unsigned int>(x) << 8) >> 8;
    const long long b = static_cast<int>(static_cast<unsigned int>(y) << 8) >> 8;
    return static_cast<int>(static_cast<unsigned int>(a * b));
}
/// @brief The low 32 bits of the product of the low 24 bits of `x` and `y`.
inline unsigned int __umul24(unsigned int x, unsigned int y) { return (x & 0xFFFFFFu) * (y & 0xFFFFFFu); }
/// @brief `|x - y| + z` (sum of absolute difference), without intermediate overflow.
inline unsigned int __sad(int x, int y, unsigned int z) {
    const long long d = static_cast<long long>(x) - y;
    return static_cast<unsigned int>(d < 0 ? -d : d) + z;
}
/// @brief `|x - y| + z` for unsigned operands.
inline unsigned int __usad(unsigned int x, unsigned int y, unsigned int z) { return (x > y ? x - y : y - x) + z; }
/// @brief `(x + y) >> 1` without intermediate overflow.
inline int __hadd(int x, int y) { return static_cast<int>((static_cast<long long>(x) + y) >> 1); }
/// @brief `(x + y + 1) >> 1` without intermediate overflow.
inline int __rhadd(int x, int y) { return static_cast<int>((static_cast<long long>(x) + y + 1) >> 1); }
/// @brief `(x + y) >> 1` without intermediate overflow.
inline unsigned int __uhadd(unsigned int x, unsigned int y) {
    return static_cast<unsigned int>((static_cast<unsigned long long>(x) + y) >> 1);
}
/// @brief `(x + y + 1) >> 1` without intermediate overflow.
inline unsigned int __urhadd(unsigned int x, unsigned int y) {
    return static_cast<unsigned int>((static_cast<unsigned long long>(x) + y + 1) >> 1);
}

namespace course_emu {

/// @brief Raises the GPU's fault for an access to a `type` at `address`,
/// which is not a multiple of `alignment` (cudaErrorMisalignedAddress),
/// naming `file` and `line` (common/emu/src/alignment.cpp). Kernel code is
/// compiled with -fsanitize=alignment, whose checks call it too.
[[noreturn]] void misaligned_address(const char* file, int line, const char* type, const void* address,
                                     std::size_t alignment);

/// @brief `p`, after the check a GPU makes: an address that is a multiple of
/// the type's alignment.
template <class T>
inline T* aligned_for_access(T* p, const char* type, const char* file, int line) {
    if (reinterpret_cast<std::uintptr_t>(p) % alignof(T) != 0) misaligned_address(file, line, type, p, alignof(T));
    return p;
}

}  // namespace course_emu

// Loads through the read-only data cache and with cache hints: on the
// emulator, plain loads and stores, with the GPU's alignment check made
// here, where the caller's file and line are known (default arguments
// evaluated at the call), so that a fault names the line of the kernel.
// A template would accept any type; CUDA provides these for the built-in
// scalar and vector types only, so a call that fails under nvcc fails here
// too.
#define COURSE_EMU_AT_CALLER const char *file = __builtin_FILE(), int line = __builtin_LINE()
#define COURSE_EMU_CHECKED(T) (*::course_emu::aligned_for_access(p, "'" #T "'", file, line))
#define COURSE_EMU_LOAD_FUNCTIONS(T)                                                             \
    inline T __ldg(const T* p, COURSE_EMU_AT_CALLER) { return COURSE_EMU_CHECKED(T); }           \
    inline T __ldcg(const T* p, COURSE_EMU_AT_CALLER) { return COURSE_EMU_CHECKED(T); }          \
    inline T __ldca(const T* p, COURSE_EMU_AT_CALLER) { return COURSE_EMU_CHECKED(T); }          \
    inline T __ldcs(const T* p, COURSE_EMU_AT_CALLER) { return COURSE_EMU_CHECKED(T); }          \
    inline T __ldlu(const T* p, COURSE_EMU_AT_CALLER) { return COURSE_EMU_CHECKED(T); }          \
    inline T __ldcv(const T* p, COURSE_EMU_AT_CALLER) { return COURSE_EMU_CHECKED(T); }          \
    inline void __stwb(T* p, T v, COURSE_EMU_AT_CALLER) { COURSE_EMU_CHECKED(T) = v; }           \
    inline void __stcg(T* p, T v, COURSE_EMU_AT_CALLER) { COURSE_EMU_CHECKED(T) = v; }           \
    inline void __stcs(T* p, T v, COURSE_EMU_AT_CALLER) { COURSE_EMU_CHECKED(T) = v; }           \
    inline void __stwt(T* p, T v, COURSE_EMU_AT_CALLER) { COURSE_EMU_CHECKED(T) = v; }
COURSE_EMU_LOAD_FUNCTIONS(char)
COURSE_EMU_LOAD_FUNCTIONS(signed char)
COURSE_EMU_LOAD_FUNCTIONS(short)
COURSE_EMU_LOAD_FUNCTIONS(int)
COURSE_EMU_LOAD_FUNCTIONS(long)
COURSE_EMU_LOAD_FUNCTIONS(long long)
COURSE_EMU_LOAD_FUNCTIONS(unsigned char)
COURSE_EMU_LOAD_FUNCTIONS(unsigned short)
COURSE_EMU_LOAD_FUNCTIONS(unsigned int)
COURSE_EMU_LOAD_FUNCTIONS(unsigned long)
COURSE_EMU_LOAD_FUNCTIONS(unsigned long long)
COURSE_EMU_LOAD_FUNCTIONS(float)
COURSE_EMU_LOAD_FUNCTIONS(double)
COURSE_EMU_LOAD_FUNCTIONS(char2)
COURSE_EMU_LOAD_FUNCTIONS(char4)
COURSE_EMU_LOAD_FUNCTIONS(short2)
COURSE_EMU_LOAD_FUNCTIONS(short4)
COURSE_EMU_LOAD_FUNCTIONS(int2)
COURSE_EMU_LOAD_FUNCTIONS(int4)
COURSE_EMU_LOAD_FUNCTIONS(longlong2)
COURSE_EMU_LOAD_FUNCTIONS(uchar2)
COURSE_EMU_LOAD_FUNCTIONS(uchar4)
COURSE_EMU_LOAD_FUNCTIONS(ushort2)
COURSE_EMU_LOAD_FUNCTIONS(ushort4)
COURSE_EMU_LOAD_FUNCTIONS(uint2)
COURSE_EMU_LOAD_FUNCTIONS(uint4)
COURSE_EMU_LOAD_FUNCTIONS(ulonglong2)
COURSE_EMU_LOAD_FUNCTIONS(float2)
COURSE_EMU_LOAD_FUNCTIONS(float4)
COURSE_EMU_LOAD_FUNCTIONS(double2)
// (Kept defined: narrow_float.hpp declares the same for __half, __nv_bfloat16 and their pairs.)

// Fast-math intrinsics: the emulator computes them exactly; a GPU's are
// approximate, which the lessons' tolerances allow for.
inline float __fmaf_rn(float a, float b, float c) { return std::fma(a, b, c); }
inline double __fma_rn(double a, double b, double c) { return std::fma(a, b, c); }
inline float __fdividef(float a, float b) { return a / b; }
inline float __expf(float x) { return std::exp(x); }
inline float __logf(float x) { return std::log(x); }
inline float __sinf(float x) { return std::sin(x); }
inline float __cosf(float x) { return std::cos(x); }
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
inline float __saturatef(float x) { return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x); }
inline float __powf(float x, float y) { return std::pow(x, y); }
inline float __exp10f(float x) { return std::pow(10.0f, x); }
inline float __log2f(float x) { return std::log2(x); }
inline float __log10f(float x) { return std::log10(x); }
inline float __tanf(float x) { return std::tan(x); }
inline void __sincosf(float x, float* s, float* c) {
    *s = std::sin(x);
    *c = std::cos(x);
}

// CUDA's device math library has these; glibc declares them only as GNU
// extensions (which g++ enables by default), so define them where it does not.
#if !defined(__USE_GNU)
inline float exp10f(float x) { return std::pow(10.0f, x); }
inline double exp10(double x) { return std::pow(10.0, x); }
inline void sincosf(float x, float* s, float* c) {
    *s = std::sin(x);
    *c = std::cos(x);
}
inline void sincos(double x, double* s, double* c) {
    *s = std::sin(x);
    *c = std::cos(x);
}
#endif

// Arithmetic with an explicit rounding mode. The host rounds to nearest
// even by default, which is what the _rn forms ask for; they also keep nvcc
// from contracting the operation into a fused multiply-add.
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline float __frcp_rn(float x) { return 1.0f / x; }
inline float __fsqrt_rn(float x) { return std::sqrt(x); }
inline float __frsqrt_rn(float x) { return 1.0f / std::sqrt(x); }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dsub_rn(double a, double b) { return a - b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __ddiv_rn(double a, double b) { return a / b; }
inline double __drcp_rn(double x) { return 1.0 / x; }
inline double __dsqrt_rn(double x) { return std::sqrt(x); }

namespace course_emu::detail {
// A rounded float converted to an integer type as a GPU does: NaN gives 0,
// values out of range saturate to the type's limits (never undefined behaviour).
template <class Int, class Float>
Int saturating_convert(Float rounded) {
    if (std::isnan(rounded)) return 0;
    // Both limits of Int + 1 are powers of two, exact in Float.
    constexpr Float upper = static_cast<Float>(static_cast<unsigned long long>(std::numeric_limits<Int>::max()) / 2 + 1) * 2;
    if (rounded >= upper) return std::numeric_limits<Int>::max();
    if (rounded <= static_cast<Float>(std::numeric_limits<Int>::min())) return std::numeric_limits<Int>::min();
    return static_cast<Int>(rounded);
}
}  // namespace course_emu::detail

// Conversions: _rn rounds to nearest even, _rz toward zero, _rd down, _ru up.
inline int __float2int_rn(float x) { return course_emu::detail::saturating_convert<int>(std::nearbyint(x)); }
inline int __float2int_rz(float x) { return course_emu::detail::saturating_convert<int>(std::trunc(x)); }
inline int __float2int_rd(float x) { return course_emu::detail::saturating_convert<int>(std::floor(x)); }
inline int __float2int_ru(float x) { return course_emu::detail::saturating_convert<int>(std::ceil(x)); }
inline unsigned int __float2uint_rn(float x) {
    return course_emu::detail::saturating_convert<unsigned int>(std::nearbyint(x));
}
inline unsigned int __float2uint_rz(float x) {
    return course_emu::detail::saturating_convert<unsigned int>(std::trunc(x));
}
inline long long __float2ll_rn(float x) { return course_emu::detail::saturating_convert<long long>(std::nearbyint(x)); }
inline long long __float2ll_rz(float x) { return course_emu::detail::saturating_convert<long long>(std::trunc(x)); }
inline int __double2int_rn(double x) { return course_emu::detail::saturating_convert<int>(std::nearbyint(x)); }
inline int __double2int_rz(double x) { return course_emu::detail::saturating_convert<int>(std::trunc(x)); }
inline float __int2float_rn(int x) { return static_cast<float>(x); }
inline float __uint2float_rn(unsigned int x) { return static_cast<float>(x); }
inline float __ll2float_rn(long long x) { return static_cast<float>(x); }
inline float __ull2float_rn(unsigned long long x) { return static_cast<float>(x); }
inline double __int2double_rn(int x) { return static_cast<double>(x); }
inline float __double2float_rn(double x) { return static_cast<float>(x); }

/// @brief `__nanosleep(ns)`: on a GPU the warp sleeps about `ns` nanoseconds
/// (a back-off in a spin-wait). A hint with no effect on results; on the
/// emulator it does nothing (a spin's atomic load already lets the other
/// threads run, atomics.hpp).
inline void __nanosleep(unsigned int ns) { (void)ns; }

// A macro rather than a function so that the fault names the student's line.
#define __trap() ::course_emu::raise_fault(__FILE__, __LINE__, "__trap() was called", cudaErrorLaunchFailure)
