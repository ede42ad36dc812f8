// The emulator's cuda_fp16.h and cuda_bf16.h: conversions bit for bit as a
// GPU rounds them, and arithmetic in kernels equal to the correctly rounded
// result, checked against a reference rounding written independently here
// (a search over the format's values, not the emulator's bit manipulation).
#include "fp16_kernels.hpp"

#include <course/catch.hpp>
#include <course/cuda_check.hpp>
#include <course/device_buffer.hpp>
#include <course/inputs.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

using emu_fp16_test::Op;

// ---- an independent model of a 16-bit format: its values, and rounding by search

template <int Exp, int Frac>
struct Model {
    static constexpr int bias = (1 << (Exp - 1)) - 1;
    static constexpr std::uint16_t inf = static_cast<std::uint16_t>(((1 << Exp) - 1) << Frac);

    // The value of non-negative bits up to inf (inf itself: the first value past the largest finite one,
    // as if the exponent went on, which is where rounding to nearest overflows).
    static double value(std::uint16_t bits) {
        const int e = bits >> Frac, m = bits & ((1 << Frac) - 1);
        if (e == 0) return std::ldexp(static_cast<double>(m), 1 - bias - Frac);
        return std::ldexp(static_cast<double>((1 << Frac) + m), e - bias - Frac);
    }

    // Round to nearest even by binary search over the positive values, which increase with their bits.
    static std::uint16_t round(double x) {
        if (std::isnan(x)) return 0x7FFF;
        const std::uint16_t sign = std::signbit(x) ? 0x8000 : 0;
        const double a = std::fabs(x);
        if (a >= value(inf)) return sign | inf;
        std::uint16_t lo = 0, hi = inf;  // value(lo) <= a < value(hi)
        while (hi - lo > 1) {
            const std::uint16_t mid = static_cast<std::uint16_t>((lo + hi) / 2);
            (value(mid) <= a ? lo : hi) = mid;
        }
        const double below = a - value(lo), above = value(hi) - a;
        const std::uint16_t nearest = below < above ? lo : above < below ? hi : ((lo & 1) == 0 ? lo : hi);
        return sign | nearest;
    }
};
using HalfModel = Model<5, 10>;
using BF16Model = Model<8, 7>;

std::string hex(unsigned v) {
    char b[16];
    std::snprintf(b, sizeof b, "0x%04x", v);
    return b;
}

__half half_bits(std::uint16_t bits) { return __ushort_as_half(bits); }
unsigned bits(__half h) { return __half_as_ushort(h); }
unsigned bits(__nv_bfloat16 h) { return __bfloat16_as_ushort(h); }
float float_bits(std::uint32_t u) { return std::bit_cast<float>(u); }

bool is_nan_bits(unsigned b, unsigned inf) { return (b & 0x7FFFu) > inf; }

}  // namespace

TEST_CASE("__float2half rounds to nearest even, with the GPU's subnormals, overflow and NaN", "[emu][fp16]") {
    CHECK(bits(__float2half(1.0f)) == 0x3C00u);
    CHECK(bits(__float2half(-2.0f)) == 0xC000u);
    CHECK(bits(__float2half(0.1f)) == 0x2E66u);
    CHECK(bits(__float2half(65504.0f)) == 0x7BFFu);  // the largest finite half
    CHECK(bits(__float2half(65519.99f)) == 0x7BFFu);
    CHECK(bits(__float2half(65520.0f)) == 0x7C00u);  // half-way to 2^16: rounds to infinity
    CHECK(bits(__float2half(-65520.0f)) == 0xFC00u);
    CHECK(bits(__float2half(std::ldexp(1.0f, -14))) == 0x0400u);           // smallest normal
    CHECK(bits(__float2half(std::ldexp(1023.0f, -24))) == 0x03FFu);        // largest subnormal
    CHECK(bits(__float2half(std::ldexp(1.0f, -24))) == 0x0001u);           // smallest subnormal
    CHECK(bits(__float2half(std::ldexp(1.0f, -25))) == 0x0000u);           // tie between 0 and 2^-24: even
    CHECK(bits(__float2half(std::ldexp(1.0f, -25) * 1.0000001f)) == 0x0001u);
    CHECK(bits(__float2half(std::ldexp(3.0f, -25))) == 0x0002u);           // tie between 1 and 2 ulps: even
    CHECK(bits(__float2half(std::ldexp(1023.5f, -24))) == 0x0400u);        // a tie, rounds up into the normals
    CHECK(bits(__float2half(1e-30f)) == 0x0000u);
    CHECK(bits(__float2half(2049.0f)) == 0x6800u);  // 2049 is a tie: to even 2048
    CHECK(bits(__float2half(2051.0f)) == 0x6802u);  // 2051 is a tie: to even 2052
    CHECK(bits(__float2half(2050.0f)) == 0x6801u);
    CHECK(bits(__float2half(-0.0f)) == 0x8000u);
    CHECK(bits(__float2half(std::numeric_limits<float>::infinity())) == 0x7C00u);
    CHECK(bits(__float2half(-std::numeric_limits<float>::infinity())) == 0xFC00u);
    CHECK(bits(__float2half(std::numeric_limits<float>::quiet_NaN())) == 0x7FFFu);  // the canonical NaN
    CHECK(bits(__float2half(-std::numeric_limits<float>::quiet_NaN())) == 0x7FFFu);
    CHECK(__hisnan(__float2half(std::numeric_limits<float>::quiet_NaN())));
    CHECK(bits(__float2half_rn(2049.0f)) == 0x6800u);
    CHECK(bits(__half(2051.0f)) == 0x6802u);  // the converting constructor rounds the same way
    CHECK(bits(__half(2049.0)) == 0x6800u);
    // __double2half rounds once, from the double: via float, 2049 + 2^-30 would become the tie 2049.
    CHECK(bits(__double2half(2049.0 + std::ldexp(1.0, -30))) == 0x6801u);
    CHECK(bits(__double2half(65520.0)) == 0x7C00u);
    CHECK(bits(__double2half(1e300)) == 0x7C00u);
    CHECK(bits(__double2half(std::ldexp(1.0, -1074))) == 0x0000u);
}

TEST_CASE("__half2float is exact for every half, and converting back gives the same bits", "[emu][fp16]") {
    for (unsigned b = 0; b <= 0xFFFFu; ++b) {
        const float f = __half2float(half_bits(static_cast<std::uint16_t>(b)));
        const bool nan = is_nan_bits(b, 0x7C00u);
        if (nan) {
            REQUIRE(std::isnan(f));
            REQUIRE(bits(__float2half(f)) == 0x7FFFu);
            continue;
        }
        const double expected = (b & 0x8000u ? -1.0 : 1.0) * HalfModel::value(static_cast<std::uint16_t>(b & 0x7FFFu));
        INFO("bits " << hex(b));
        if ((b & 0x7FFFu) == 0x7C00u) {
            REQUIRE(std::isinf(f));
        } else {
            REQUIRE(static_cast<double>(f) == expected);
        }
        REQUIRE(std::signbit(f) == ((b & 0x8000u) != 0));
        REQUIRE(bits(__float2half(f)) == b);
    }
}

TEST_CASE("float and double to half and to bfloat16 equal a reference rounding on random inputs", "[emu][fp16][bf16]") {
    std::mt19937_64 rng = course::rng("fp16 conversions");
    CAPTURE(course::seed());
    for (int i = 0; i < 200000; ++i) {
        // Floats around half's range (exponents -30 .. 17) and anywhere, as raw bits.
        std::uint32_t u = static_cast<std::uint32_t>(rng());
        if (i % 2 == 0) u = (u & 0x807FFFFFu) | ((97u + static_cast<std::uint32_t>(rng() % 48)) << 23);
        const float f = float_bits(u);
        if (std::isnan(f)) continue;
        INFO("float bits 0x" << std::hex << u);
        REQUIRE(bits(__float2half(f)) == HalfModel::round(f));
        REQUIRE(bits(__float2bfloat16(f)) == BF16Model::round(f));
        const double d = static_cast<double>(f) * (1.0 + std::ldexp(static_cast<double>(rng() % 1024), -40));
        INFO("double " << d);
        REQUIRE(bits(__double2half(d)) == HalfModel::round(d));
        REQUIRE(bits(__double2bfloat16(d)) == BF16Model::round(d));
    }
}

TEST_CASE("the directed rounding modes _rz, _rd and _ru round as their names say", "[emu][fp16][bf16]") {
    CHECK(bits(__float2half_rz(2049.0f)) == 0x6800u);
    CHECK(bits(__float2half_rd(2049.0f)) == 0x6800u);
    CHECK(bits(__float2half_ru(2049.0f)) == 0x6801u);
    CHECK(bits(__float2half_rz(-2049.0f)) == 0xE800u);
    CHECK(bits(__float2half_rd(-2049.0f)) == 0xE801u);
    CHECK(bits(__float2half_ru(-2049.0f)) == 0xE800u);
    CHECK(bits(__float2half_ru(2048.0f)) == 0x6800u);  // exact: no rounding in any mode
    // Overflow: infinity only in the direction of rounding, else the largest finite value.
    CHECK(bits(__float2half_rz(1e6f)) == 0x7BFFu);
    CHECK(bits(__float2half_rd(1e6f)) == 0x7BFFu);
    CHECK(bits(__float2half_ru(1e6f)) == 0x7C00u);
    CHECK(bits(__float2half_rz(-1e6f)) == 0xFBFFu);
    CHECK(bits(__float2half_rd(-1e6f)) == 0xFC00u);
    CHECK(bits(__float2half_ru(-1e6f)) == 0xFBFFu);
    CHECK(bits(__float2half_rz(std::numeric_limits<float>::infinity())) == 0x7C00u);  // infinity stays
    // Underflow: the smallest subnormal only in the direction of rounding.
    CHECK(bits(__float2half_ru(1e-10f)) == 0x0001u);
    CHECK(bits(__float2half_rd(1e-10f)) == 0x0000u);
    CHECK(bits(__float2half_rz(-1e-10f)) == 0x8000u);
    CHECK(bits(__float2half_rd(-1e-10f)) == 0x8001u);
    CHECK(bits(__float2half_ru(-1e-10f)) == 0x8000u);
    // bfloat16 the same way, on the 16 bits dropped from a float.
    CHECK(bits(__float2bfloat16_rz(float_bits(0x3F80FFFFu))) == 0x3F80u);
    CHECK(bits(__float2bfloat16_ru(float_bits(0x3F800001u))) == 0x3F81u);
    CHECK(bits(__float2bfloat16_rd(float_bits(0xBF800001u))) == 0xBF81u);
    CHECK(bits(__float2bfloat16_rz(std::numeric_limits<float>::max())) == 0x7F7Fu);
    CHECK(bits(__float2bfloat16_rn(std::numeric_limits<float>::max())) == 0x7F80u);
}

TEST_CASE("__float2bfloat16 keeps float's exponent and rounds the 16 dropped bits to nearest even", "[emu][bf16]") {
    CHECK(bits(__float2bfloat16(1.0f)) == 0x3F80u);
    CHECK(bits(__float2bfloat16(-2.0f)) == 0xC000u);
    CHECK(bits(__float2bfloat16(float_bits(0x3F808000u))) == 0x3F80u);  // tie, even below: down
    CHECK(bits(__float2bfloat16(float_bits(0x3F818000u))) == 0x3F82u);  // tie, odd below: up
    CHECK(bits(__float2bfloat16(float_bits(0x3F808001u))) == 0x3F81u);  // past the tie: up
    CHECK(bits(__float2bfloat16(float_bits(0x3F807FFFu))) == 0x3F80u);
    CHECK(bits(__float2bfloat16(float_bits(0x7F7FFFFFu))) == 0x7F80u);  // FLT_MAX rounds to infinity
    CHECK(bits(__float2bfloat16(float_bits(0x00010000u))) == 0x0001u);  // float subnormals stay subnormal
    CHECK(bits(__float2bfloat16(float_bits(0x00008000u))) == 0x0000u);  // tie to even: zero
    CHECK(bits(__float2bfloat16(-0.0f)) == 0x8000u);
    CHECK(bits(__float2bfloat16(std::numeric_limits<float>::quiet_NaN())) == 0x7FFFu);
    CHECK(bits(__float2bfloat16(std::numeric_limits<float>::infinity())) == 0x7F80u);
    CHECK(__bfloat162float(__ushort_as_bfloat16(0x3F80u)) == 1.0f);
    CHECK(std::bit_cast<std::uint32_t>(__bfloat162float(__ushort_as_bfloat16(0x0001u))) == 0x00010000u);
    for (unsigned b = 0; b <= 0xFFFFu; ++b) {  // bfloat16 to float is the bits shifted up, NaN included
        const float f = __bfloat162float(__ushort_as_bfloat16(static_cast<unsigned short>(b)));
        if (is_nan_bits(b, 0x7F80u)) {
            REQUIRE(std::isnan(f));
        } else {
            REQUIRE(std::bit_cast<std::uint32_t>(f) == b << 16);
        }
    }
}

TEST_CASE("conversions between half or bfloat16 and the integer types round and saturate as a GPU does",
          "[emu][fp16][bf16]") {
    CHECK(bits(__int2half_rn(2049)) == 0x6800u);
    CHECK(bits(__int2half_ru(2049)) == 0x6801u);
    CHECK(bits(__int2half_rz(-2049)) == 0xE800u);
    CHECK(bits(__uint2half_rn(70000u)) == 0x7C00u);
    CHECK(bits(__ull2half_rz(70000ull)) == 0x7BFFu);
    CHECK(bits(__ll2half_rn(std::numeric_limits<long long>::min())) == 0xFC00u);
    CHECK(bits(__short2half_rn(-3)) == 0xC200u);
    CHECK(bits(__int2bfloat16_rn(257)) == 0x4380u);  // 257 is a tie between 256 and 258: even 256
    CHECK(bits(__int2bfloat16_ru(257)) == 0x4381u);
    CHECK(__half2int_rn(__float2half(2.5f)) == 2);
    CHECK(__half2int_rn(__float2half(3.5f)) == 4);
    CHECK(__half2int_rz(__float2half(-2.75f)) == -2);
    CHECK(__half2int_rd(__float2half(-2.5f)) == -3);
    CHECK(__half2int_ru(__float2half(2.25f)) == 3);
    CHECK(__half2int_rn(CUDART_NAN_FP16) == 0);
    CHECK(__half2short_rz(__float2half(65504.0f)) == 32767);
    CHECK(__half2uint_rz(__float2half(-1.0f)) == 0u);
    CHECK(__half2int_rz(CUDART_INF_FP16) == std::numeric_limits<int>::max());
    CHECK(__half2ll_rz(__hneg(CUDART_INF_FP16)) == std::numeric_limits<long long>::min());
    CHECK(__bfloat162int_rz(__float2bfloat16(1e20f)) == std::numeric_limits<int>::max());
    // The implicit conversions nvcc defines: to integers toward zero, to bool false only for zeros.
    const __half h = __float2half(-2.75f);
    CHECK(static_cast<int>(h) == -2);
    CHECK(static_cast<float>(h) == -2.75f);
    CHECK(static_cast<bool>(CUDART_NEG_ZERO_FP16) == false);
    CHECK(static_cast<bool>(CUDART_NAN_FP16) == true);
    __half from_int = 7;
    CHECK(static_cast<float>(from_int) == 7.0f);
}

TEST_CASE("comparisons, max and min treat NaN, infinities and signed zeros as a GPU does", "[emu][fp16][bf16]") {
    const __half one = __float2half(1.0f), nan = CUDART_NAN_FP16, zero = CUDART_ZERO_FP16,
                 neg_zero = CUDART_NEG_ZERO_FP16;
    CHECK_FALSE(__heq(nan, nan));
    CHECK_FALSE(__hne(nan, one));  // the ordered forms are false with a NaN
    CHECK(__hneu(nan, one));       // the unordered forms true
    CHECK(__hltu(nan, one));
    CHECK(nan != nan);             // operator!= is the unordered one, as in C++
    CHECK_FALSE(nan == nan);
    CHECK(zero == neg_zero);
    CHECK(__hlt(neg_zero, one));
    CHECK(bits(__hmax(nan, one)) == 0x3C00u);  // a NaN operand is ignored ...
    CHECK(bits(__hmin(one, nan)) == 0x3C00u);
    CHECK(bits(__hmax(nan, nan)) == 0x7FFFu);
    CHECK(bits(__hmax_nan(nan, one)) == 0x7FFFu);  // ... except by the _nan forms
    CHECK(bits(__hmax(neg_zero, zero)) == 0x0000u);  // +0 is the larger zero
    CHECK(bits(__hmin(zero, neg_zero)) == 0x8000u);
    CHECK(__hisinf(CUDART_INF_FP16) == 1);
    CHECK(__hisinf(__hneg(CUDART_INF_FP16)) == -1);
    CHECK(__hisinf(one) == 0);
    CHECK(bits(__hneg(nan)) == 0xFFFFu);  // sign operations are bit operations, on NaN too
    CHECK(bits(__habs(__float2half(-3.0f))) == 0x4200u);
    CHECK(bits(CUDART_MAX_NORMAL_FP16) == 0x7BFFu);
    CHECK(bits(CUDART_MIN_DENORM_FP16) == 0x0001u);
    CHECK(bits(CUDART_ONE_BF16) == 0x3F80u);
    CHECK(bits(CUDART_INF_BF16) == 0x7F80u);
    const __nv_bfloat16 b_nan = CUDART_NAN_BF16;
    CHECK(bits(__hmax(b_nan, CUDART_ONE_BF16)) == 0x3F80u);
    CHECK(__hisnan(b_nan));
    const __half2 pair = __halves2half2(one, nan);
    CHECK(__heq2_mask(pair, pair) == 0x0000FFFFu);
    CHECK(bits(__low2half(__heq2(pair, pair))) == 0x3C00u);
    CHECK(bits(__high2half(__heq2(pair, pair))) == 0x0000u);
    CHECK_FALSE(__hbeq2(pair, pair));
    CHECK(__low2float(__lowhigh2highlow(__floats2half2_rn(1.0f, 2.0f))) == 2.0f);
    const float2 f2 = __half22float2(__floats2half2_rn(0.5f, -4.0f));
    CHECK(f2.x == 0.5f);
    CHECK(f2.y == -4.0f);
}

TEST_CASE("the math functions give the nearest half, or one within an ulp, of the exact result", "[emu][fp16]") {
    CHECK(bits(hexp(__float2half(0.0f))) == 0x3C00u);
    CHECK(bits(hsqrt(__float2half(4.0f))) == 0x4000u);
    CHECK(bits(hrsqrt(__float2half(4.0f))) == 0x3800u);
    CHECK(bits(hrcp(__float2half(2.0f))) == 0x3800u);
    CHECK(bits(hlog(__float2half(1.0f))) == 0x0000u);
    CHECK(__hisnan(hsqrt(__float2half(-1.0f))));
    CHECK(bits(hrcp(CUDART_ZERO_FP16)) == 0x7C00u);
    for (unsigned b = 0x2000u; b < 0x4C00u; b += 7) {  // 2^-7 .. 2^4
        const __half x = half_bits(static_cast<std::uint16_t>(b));
        const double v = HalfModel::value(static_cast<std::uint16_t>(b));
        INFO("x = " << v);
        REQUIRE(bits(hsqrt(x)) == HalfModel::round(std::sqrt(v)));  // correctly rounded
        REQUIRE(bits(hrcp(x)) == HalfModel::round(1.0 / v));
        const auto within_ulp = [](unsigned got, unsigned want) { return got + 1 >= want && got <= want + 1; };
        REQUIRE(within_ulp(bits(hexp(x)), HalfModel::round(std::exp(v))));
        REQUIRE(within_ulp(bits(hlog(x)) & 0x7FFFu, HalfModel::round(std::log(v)) & 0x7FFFu));
        REQUIRE(within_ulp(bits(hrsqrt(x)), HalfModel::round(1.0 / std::sqrt(v))));
    }
}

namespace {

// Inputs that cover the formats' corners: random values of every magnitude,
// ties, subnormals, zeros of both signs, infinities and NaN.
template <class Model>
std::vector<std::uint16_t> operand_bits(std::string_view label, int n) {
    std::mt19937_64 rng = course::rng(label);
    std::vector<std::uint16_t> v(static_cast<std::size_t>(n));
    const std::uint16_t specials[] = {0x0000, 0x8000, 0x0001, 0x8001, Model::inf, static_cast<std::uint16_t>(0x8000 | Model::inf),
                                      0x7FFF, 0x3C00, 0x3F80, 0x4000, 0x03FF};
    for (int i = 0; i < n; ++i) {
        v[static_cast<std::size_t>(i)] = i < 64 ? specials[static_cast<std::size_t>(i) % std::size(specials)]
                                                : static_cast<std::uint16_t>(rng());
    }
    std::shuffle(v.begin(), v.end(), rng);
    return v;
}

template <class Model>
double decode(std::uint16_t b) {
    const unsigned magnitude = b & 0x7FFFu;
    if (magnitude > Model::inf) return std::numeric_limits<double>::quiet_NaN();
    const double v = magnitude == Model::inf ? std::numeric_limits<double>::infinity() : Model::value(static_cast<std::uint16_t>(magnitude));
    return (b & 0x8000u) ? -v : v;
}

// The correctly rounded result of `op` on decoded operands: +, -, *, fma are
// exact in double for these formats' operands (or rounded in a way that
// cannot move a 16-bit result), / and sqrt are within the double-rounding rule.
template <class Model>
std::uint16_t reference(Op op, std::uint16_t a_bits, std::uint16_t b_bits, std::uint16_t c_bits) {
    const double a = decode<Model>(a_bits), b = decode<Model>(b_bits), c = decode<Model>(c_bits);
    const auto nan_or = [&](double x) { return std::isnan(x) ? std::uint16_t{0x7FFF} : Model::round(x); };
    switch (op) {
        case Op::add: return nan_or(a + b);
        case Op::sub: return nan_or(a - b);
        case Op::mul: return nan_or(a * b);
        case Op::div: return nan_or(a / b);
        case Op::fma: {
            // a * b is exact in double; the sum may not be: hi + lo is it exactly (TwoSum), and lo only
            // matters when hi lies exactly on a value of the format or half-way between two.
            const double p = a * b, hi = p + c;
            if (!std::isfinite(hi) || std::isnan(p)) return nan_or(std::fma(a, b, c));
            const double b_virtual = hi - p, lo = (p - (hi - b_virtual)) + (c - b_virtual);
            const std::uint16_t nearest = nan_or(hi);
            if (lo == 0) return nearest;
            // hi exactly half-way between two values of the format: the side lo lies on wins.
            const std::uint16_t up = nan_or(std::nextafter(hi, INFINITY)), down = nan_or(std::nextafter(hi, -INFINITY));
            const bool tie = up != down && (decode<Model>(up) + decode<Model>(down)) / 2 == hi;
            return tie ? (lo > 0 ? up : down) : nearest;
        }
        case Op::neg: return static_cast<std::uint16_t>(a_bits ^ 0x8000u);
        case Op::abs: return static_cast<std::uint16_t>(a_bits & 0x7FFFu);
        case Op::sqrt: return nan_or(std::sqrt(a));
        case Op::operators: {
            const std::uint16_t product = nan_or(a * b);
            return nan_or(decode<Model>(product) + c);
        }
        case Op::max:
        case Op::min: {
            const bool a_nan = std::isnan(a), b_nan = std::isnan(b);
            if (a_nan && b_nan) return 0x7FFF;
            if (a_nan) return b_bits;
            if (b_nan) return a_bits;
            if (a == b) return (op == Op::max) == ((a_bits & 0x8000u) != 0) ? b_bits : a_bits;
            return (a > b) == (op == Op::max) ? a_bits : b_bits;
        }
    }
    return 0;
}

const char* op_name(Op op) {
    switch (op) {
        case Op::add: return "add";
        case Op::sub: return "sub";
        case Op::mul: return "mul";
        case Op::div: return "div";
        case Op::fma: return "fma";
        case Op::neg: return "neg";
        case Op::abs: return "abs";
        case Op::max: return "max";
        case Op::min: return "min";
        case Op::sqrt: return "sqrt";
        case Op::operators: return "a * b += c with operators";
    }
    return "?";
}

template <class T, class Model, class Launch>
void check_kernel_op(Op op, int n, Launch launch, bool pairs) {
    const std::vector<std::uint16_t> a = operand_bits<Model>("a", 2 * n), b = operand_bits<Model>("b", 2 * n),
                                     c = operand_bits<Model>("c", 2 * n);
    const std::size_t count = static_cast<std::size_t>(pairs ? 2 * n : n);  // 16-bit values
    static_assert(sizeof(T) % 2 == 0);
    std::vector<T> ha(count * 2 / sizeof(T)), hb(ha.size()), hc(ha.size());
    std::memcpy(static_cast<void*>(ha.data()), a.data(), count * 2);  // the bits, into the 16-bit types
    std::memcpy(static_cast<void*>(hb.data()), b.data(), count * 2);
    std::memcpy(static_cast<void*>(hc.data()), c.data(), count * 2);
    course::DeviceBuffer<T> da(ha), db(hb), dc(hc), out(ha.size());
    launch(da.data(), db.data(), dc.data(), out.data());
    COURSE_LAUNCH_CHECK();
    const std::vector<T> result = out.download();
    std::vector<std::uint16_t> result_bits(count);
    std::memcpy(result_bits.data(), static_cast<const void*>(result.data()), count * 2);
    for (std::size_t i = 0; i < count; ++i) {
        const std::uint16_t got = result_bits[i];
        const std::uint16_t want = reference<Model>(op, a[i], b[i], c[i]);
        INFO(op_name(op) << (pairs ? " (pairs)" : "") << " of " << hex(a[i]) << ", " << hex(b[i]) << ", " << hex(c[i])
                         << " at " << i << ": got " << hex(got) << ", want " << hex(want));
        REQUIRE(got == want);
    }
}

}  // namespace

TEST_CASE("half and bfloat16 arithmetic in a kernel equals the correctly rounded result, bit for bit",
          "[emu][fp16][bf16]") {
    const Op op = GENERATE(Op::add, Op::sub, Op::mul, Op::div, Op::fma, Op::neg, Op::abs, Op::max, Op::min, Op::sqrt,
                           Op::operators);
    constexpr int n = 4099;
    SECTION("__half") {
        check_kernel_op<__half, HalfModel>(op, n, [&](auto* a, auto* b, auto* c, auto* out) {
            emu_fp16_test::launch_half_op(op, a, b, c, out, n);
        }, false);
    }
    SECTION("__half2, each half on its own") {
        check_kernel_op<__half2, HalfModel>(op, n, [&](const __half2* a, const __half2* b, const __half2* c, __half2* out) {
            emu_fp16_test::launch_half2_op(op, a, b, c, out, n);
        }, true);
    }
    SECTION("__nv_bfloat16") {
        check_kernel_op<__nv_bfloat16, BF16Model>(op, n, [&](auto* a, auto* b, auto* c, auto* out) {
            emu_fp16_test::launch_bf16_op(op, a, b, c, out, n);
        }, false);
    }
    SECTION("__nv_bfloat162") {
        check_kernel_op<__nv_bfloat162, BF16Model>(op, n, [&](auto* a, auto* b, auto* c, auto* out) {
            emu_fp16_test::launch_bf162_op(op, a, b, c, out, n);
        }, true);
    }
}

TEST_CASE("warp shuffles move __half, __half2 and __nv_bfloat16 values", "[emu][fp16][warp]") {
    course::DeviceBuffer<__half> down(32), sum(1);
    course::DeviceBuffer<__half2> xor2(32);
    course::DeviceBuffer<__nv_bfloat16> bf(32);
    emu_fp16_test::launch_half_shuffles(down.data(), xor2.data(), bf.data(), sum.data());
    COURSE_LAUNCH_CHECK();
    const auto h_down = down.download();
    const auto h_xor = xor2.download();
    const auto h_bf = bf.download();
    for (int lane = 0; lane < 32; ++lane) {
        CAPTURE(lane);
        const int from = lane + 3 < 32 ? lane + 3 : lane;  // shfl_down keeps its own value past the end
        CHECK(__half2float(h_down[static_cast<std::size_t>(lane)]) == from + 0.5f);
        CHECK(__low2float(h_xor[static_cast<std::size_t>(lane)]) == static_cast<float>(lane ^ 1));
        CHECK(__high2float(h_xor[static_cast<std::size_t>(lane)]) == -static_cast<float>(lane ^ 1));
        CHECK(__bfloat162float(h_bf[static_cast<std::size_t>(lane)]) == (31 - lane) * 2.0f);
    }
    CHECK(__half2float(sum.download()[0]) == 512.0f);
}

TEST_CASE("atomicAdd on __half and __half2 adds every thread's value", "[emu][fp16][atomics]") {
    course::DeviceBuffer<__half> counter(std::vector<__half>{__float2half(0.0f)});
    course::DeviceBuffer<__half2> pair(std::vector<__half2>{__floats2half2_rn(0.0f, 0.0f)});
    emu_fp16_test::launch_half_atomics(counter.data(), pair.data(), 256);
    COURSE_LAUNCH_CHECK();
    CHECK(__half2float(counter.download()[0]) == 256.0f);
    const __half2 p = pair.download()[0];
    CHECK(__low2float(p) == 256.0f);
    CHECK(__high2float(p) == 512.0f);
}

TEST_CASE("the _sat forms clamp to [0, 1] (NaN to +0) and the relu forms clamp negatives to +0", "[emu][fp16][bf16]") {
    const __half quarter = __float2half(0.25f), half_value = __float2half(0.5f), three_quarters = __float2half(0.75f);
    CHECK(bits(__hadd_sat(three_quarters, half_value)) == 0x3C00u);
    CHECK(bits(__hsub_sat(quarter, half_value)) == 0x0000u);
    CHECK(bits(__hmul_sat(three_quarters, half_value)) == bits(__float2half(0.375f)));
    CHECK(bits(__hadd_sat(CUDART_NAN_FP16, quarter)) == 0x0000u);
    CHECK(bits(__hfma_sat(half_value, half_value, three_quarters)) == 0x3C00u);
    CHECK(bits(__hfma_relu(__float2half(-1.0f), half_value, quarter)) == 0x0000u);
    CHECK(bits(__hfma_relu(half_value, half_value, quarter)) == bits(half_value));
    CHECK(bits(__hfma_relu(CUDART_NAN_FP16, half_value, quarter)) == 0x7FFFu);
    const __half2 pair = __hadd2_sat(__floats2half2_rn(0.75f, -2.0f), __floats2half2_rn(0.5f, 1.0f));
    CHECK(__low2float(pair) == 1.0f);
    CHECK(__high2float(pair) == 0.0f);
    CHECK(__bfloat162float(__hadd_sat(__float2bfloat16(0.75f), __float2bfloat16(0.5f))) == 1.0f);
    const __half2 e = h2exp(__floats2half2_rn(0.0f, 1.0f));
    CHECK(__low2float(e) == 1.0f);
    CHECK(bits(__high2half(e)) == HalfModel::round(std::exp(1.0)));
}
