/// @file types.hpp
/// @brief CUDA's built-in vector types and `dim3` for the CPU emulator.
///
/// Sizes and alignments match CUDA's `vector_types.h`, so that code which
/// reinterprets a `float*` as a `float4*` behaves (and faults) the same way.
#pragma once

#include <cstddef>

// Declares TYPE1..TYPE4 with CUDA's alignment and their make_ functions.
#define COURSE_EMU_VECTOR_TYPES(NAME, BASE, A2, A4)                                         \
    struct NAME##1 { BASE x; };                                                            \
    struct alignas(A2) NAME##2 { BASE x, y; };                                             \
    struct NAME##3 { BASE x, y, z; };                                                      \
    struct alignas(A4) NAME##4 { BASE x, y, z, w; };                                       \
    inline constexpr NAME##1 make_##NAME##1(BASE x) { return {x}; }                        \
    inline constexpr NAME##2 make_##NAME##2(BASE x, BASE y) { return {x, y}; }             \
    inline constexpr NAME##3 make_##NAME##3(BASE x, BASE y, BASE z) { return {x, y, z}; }  \
    inline constexpr NAME##4 make_##NAME##4(BASE x, BASE y, BASE z, BASE w) { return {x, y, z, w}; }

COURSE_EMU_VECTOR_TYPES(char, signed char, 2, 4)
COURSE_EMU_VECTOR_TYPES(uchar, unsigned char, 2, 4)
COURSE_EMU_VECTOR_TYPES(short, short, 4, 8)
COURSE_EMU_VECTOR_TYPES(ushort, unsigned short, 4, 8)
COURSE_EMU_VECTOR_TYPES(int, int, 8, 16)
COURSE_EMU_VECTOR_TYPES(uint, unsigned int, 8, 16)
COURSE_EMU_VECTOR_TYPES(long, long, 2 * sizeof(long), 16)
COURSE_EMU_VECTOR_TYPES(ulong, unsigned long, 2 * sizeof(unsigned long), 16)
COURSE_EMU_VECTOR_TYPES(longlong, long long, 16, 32)
COURSE_EMU_VECTOR_TYPES(ulonglong, unsigned long long, 16, 32)
COURSE_EMU_VECTOR_TYPES(float, float, 8, 16)
COURSE_EMU_VECTOR_TYPES(double, double, 16, 32)

#undef COURSE_EMU_VECTOR_TYPES

/// @brief Grid and block extents, as in CUDA: unspecified components are 1.
struct dim3 {
    unsigned int x = 1, y = 1, z = 1;
    constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
    constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
    constexpr operator uint3() const { return {x, y, z}; }
};
