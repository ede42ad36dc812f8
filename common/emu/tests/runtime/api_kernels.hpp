// Host wrappers around the kernels of the emulator's API tests: complex
// numbers, intrinsics, math functions, managed memory, device printf, and the
// runtime calls that take a kernel's address (function attributes,
// occupancy). The kernels live in api_kernels.cu, which goes through the
// translator like a student's file and also compiles with nvcc.
#pragma once

#include <cuComplex.h>
#include <cuda_runtime.h>

namespace emu_api_test {

/// For each i < n: out[5 * i + 0..4] = a + b, a - b, a * b, a / b, conj(a)
/// (single precision) and magnitude[i] = |a[i]|.
void launch_complex_float(const cuFloatComplex* a, const cuFloatComplex* b, cuFloatComplex* out, float* magnitude,
                          int n);

/// The double precision version of launch_complex_float; also checks the
/// conversions: converted[i] = cuComplexDoubleToFloat(a[i]) and
/// widened[i] = cuComplexFloatToDouble(converted[i]).
void launch_complex_double(const cuDoubleComplex* a, const cuDoubleComplex* b, cuDoubleComplex* out,
                           double* magnitude, cuFloatComplex* converted, cuDoubleComplex* widened, int n);

/// The inputs of the intrinsics kernel (passed as kernel arguments so that
/// nothing is folded at compile time).
struct IntrinsicInputs {
    float a;           ///< 1.5
    float b;           ///< 0.25
    float half;        ///< 2.5 (a tie for round-to-nearest-even)
    float negative;    ///< -3.7
    int i;             ///< -7
    unsigned int u;    ///< 0x12345678
    unsigned long long ull;  ///< 0x0123456789ABCDEF
};

/// What one thread of the intrinsics kernel computes from IntrinsicInputs.
struct IntrinsicResults {
    float fadd, fsub, fmul, fdiv, frcp, fsqrt;
    double dadd, dmul;
    float powf_, exp10f_, log2f_, log10f_, tanf_, sinf_, cosf_;  // the fast-math forms (__powf, ...)
    float sincos_s, sincos_c, exp10f_plain;                      // sincosf, exp10f
    double sincos_ds, sincos_dc;                                 // sincos
    int float2int_rn_half, float2int_rn_negative, float2int_rz_negative;
    unsigned int float2uint_rn_half, float2uint_rn_negative;
    float int2float, uint2float, double2float;
    long long float2ll_rn;
    unsigned int umulhi;
    int mulhi;
    unsigned long long umul64hi;
    long long mul64hi;
    unsigned int sad, usad;
    unsigned int byte_perm_swap, byte_perm_mix;
    unsigned long long brevll;
    float fminf_, fmaxf_, fabsf_, sqrtf_, expf_;  // <math.h> functions called unqualified
    float ldg_scalar;
    float4 ldg_vector;
};

/// One thread computes every field of `out` from `in`; `ldg_source` holds 4
/// floats read with __ldg (as a float and as a float4).
void launch_intrinsics(IntrinsicInputs in, const float* ldg_source, IntrinsicResults* out);

/// data[i] = first + i for i < n (used on managed memory).
void launch_iota(int* data, int n, int first);

/// One block of `threads` threads; each prints a line with its index.
void launch_printf(unsigned threads);

/// Thread 0 of one block writes data[index] = 1 (in bounds or not).
void launch_write_at(float* data, int index);

/// cudaFuncSetAttribute(kernel using dynamic shared memory, attr, value).
cudaError_t set_kernel_attribute(cudaFuncAttribute attr, int value);

/// cudaOccupancyMaxActiveBlocksPerMultiprocessor for a kernel.
cudaError_t occupancy(int* blocks, int block_size, size_t dynamic_shared_bytes);

/// cudaOccupancyMaxPotentialBlockSize for a kernel.
cudaError_t potential_block_size(int* min_grid_size, int* block_size, size_t dynamic_shared_bytes,
                                 int block_size_limit);

}  // namespace emu_api_test
