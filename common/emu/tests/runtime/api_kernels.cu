// Kernels for the emulator's API tests, written as a student would write
// them; this file also compiles with nvcc, which keeps the emulator honest
// about what is valid CUDA.
#include "api_kernels.hpp"

#include <cstdio>

namespace emu_api_test {

__global__ void complex_float(const cuFloatComplex* a, const cuFloatComplex* b, cuFloatComplex* out,
                              float* magnitude, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const cuFloatComplex x = a[i];
    const cuFloatComplex y = b[i];
    out[5 * i + 0] = cuCaddf(x, y);
    out[5 * i + 1] = cuCsubf(x, y);
    out[5 * i + 2] = cuCmulf(x, y);
    out[5 * i + 3] = cuCdivf(x, y);
    out[5 * i + 4] = cuConjf(make_cuComplex(cuCrealf(x), cuCimagf(x)));
    magnitude[i] = cuCabsf(x);
}

void launch_complex_float(const cuFloatComplex* a, const cuFloatComplex* b, cuFloatComplex* out, float* magnitude,
                          int n) {
    complex_float<<<(n + 63) / 64, 64>>>(a, b, out, magnitude, n);
}

__global__ void complex_double(const cuDoubleComplex* a, const cuDoubleComplex* b, cuDoubleComplex* out,
                               double* magnitude, cuFloatComplex* converted, cuDoubleComplex* widened, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const cuDoubleComplex x = a[i];
    const cuDoubleComplex y = b[i];
    out[5 * i + 0] = cuCadd(x, y);
    out[5 * i + 1] = cuCsub(x, y);
    out[5 * i + 2] = cuCmul(x, y);
    out[5 * i + 3] = cuCdiv(x, y);
    out[5 * i + 4] = cuConj(make_cuDoubleComplex(cuCreal(x), cuCimag(x)));
    magnitude[i] = cuCabs(x);
    converted[i] = cuComplexDoubleToFloat(x);
    widened[i] = cuComplexFloatToDouble(converted[i]);
}

void launch_complex_double(const cuDoubleComplex* a, const cuDoubleComplex* b, cuDoubleComplex* out,
                           double* magnitude, cuFloatComplex* converted, cuDoubleComplex* widened, int n) {
    complex_double<<<(n + 63) / 64, 64>>>(a, b, out, magnitude, converted, widened, n);
}

__global__ void intrinsics(IntrinsicInputs in, const float* ldg_source, IntrinsicResults* out) {
    IntrinsicResults r;
    r.fadd = __fadd_rn(in.a, in.b);
    r.fsub = __fsub_rn(in.a, in.b);
    r.fmul = __fmul_rn(in.a, in.b);
    r.fdiv = __fdiv_rn(in.a, in.b);
    r.frcp = __frcp_rn(in.b);
    r.fsqrt = __fsqrt_rn(in.b);
    r.dadd = __dadd_rn(in.a, in.b);
    r.dmul = __dmul_rn(in.a, in.b);
    r.powf_ = __powf(in.a, 2.0f);
    r.exp10f_ = __exp10f(in.half);
    r.log2f_ = __log2f(in.b);
    r.log10f_ = __log10f(100.0f * in.b);
    r.tanf_ = __tanf(in.b);
    __sincosf(in.a, &r.sinf_, &r.cosf_);
    sincosf(in.a, &r.sincos_s, &r.sincos_c);
    r.exp10f_plain = exp10f(in.half);
    sincos(static_cast<double>(in.a), &r.sincos_ds, &r.sincos_dc);
    r.float2int_rn_half = __float2int_rn(in.half);
    r.float2int_rn_negative = __float2int_rn(in.negative);
    r.float2int_rz_negative = __float2int_rz(in.negative);
    r.float2uint_rn_half = __float2uint_rn(in.half);
    r.float2uint_rn_negative = __float2uint_rn(in.negative);
    r.int2float = __int2float_rn(in.i);
    r.uint2float = __uint2float_rn(in.u);
    r.double2float = __double2float_rn(static_cast<double>(in.b) / 3.0);
    r.float2ll_rn = __float2ll_rn(in.half * 1.0e12f);
    r.umulhi = __umulhi(in.u, 0x10000u);
    r.mulhi = __mulhi(in.i, 0x40000000);
    r.umul64hi = __umul64hi(in.ull, 0x100000000ull);
    r.mul64hi = __mul64hi(static_cast<long long>(in.i), 0x4000000000000000ll);
    r.sad = __sad(in.i, 5, 100u);
    r.usad = __usad(3u, 10u, 1u);
    r.byte_perm_swap = __byte_perm(in.u, 0u, 0x0123);
    r.byte_perm_mix = __byte_perm(in.u, 0xAABBCCDDu, 0x7430);
    r.brevll = __brevll(in.ull);
    r.fminf_ = fminf(in.a, in.b);
    r.fmaxf_ = fmaxf(in.a, in.b);
    r.fabsf_ = fabsf(in.negative);
    r.sqrtf_ = sqrtf(in.b);
    r.expf_ = expf(0.0f * in.a);
    r.ldg_scalar = __ldg(ldg_source + 3);
    r.ldg_vector = __ldg(reinterpret_cast<const float4*>(ldg_source));
    *out = r;
}

void launch_intrinsics(IntrinsicInputs in, const float* ldg_source, IntrinsicResults* out) {
    intrinsics<<<1, 1>>>(in, ldg_source, out);
}

__global__ void iota(int* data, int n, int first) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) data[i] = first + i;
}

void launch_iota(int* data, int n, int first) { iota<<<4, 128>>>(data, n, first); }

__global__ void say_hello() {
    printf("hello from block %u, thread %u of %u\n", blockIdx.x, threadIdx.x, blockDim.x);
}

void launch_printf(unsigned threads) { say_hello<<<1, threads>>>(); }

__global__ void write_at(float* data, int index) {
    if (threadIdx.x == 0) data[index] = 1.0f;
}

void launch_write_at(float* data, int index) { write_at<<<1, 32>>>(data, index); }

__global__ void uses_dynamic_shared(float* out) {
    extern __shared__ float scratch[];
    scratch[threadIdx.x] = static_cast<float>(threadIdx.x);
    out[threadIdx.x] = scratch[threadIdx.x];
}

cudaError_t set_kernel_attribute(cudaFuncAttribute attr, int value) {
    return cudaFuncSetAttribute(uses_dynamic_shared, attr, value);
}

cudaError_t occupancy(int* blocks, int block_size, size_t dynamic_shared_bytes) {
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, uses_dynamic_shared, block_size,
                                                         dynamic_shared_bytes);
}

cudaError_t potential_block_size(int* min_grid_size, int* block_size, size_t dynamic_shared_bytes,
                                 int block_size_limit) {
    return cudaOccupancyMaxPotentialBlockSize(min_grid_size, block_size, uses_dynamic_shared, dynamic_shared_bytes,
                                              block_size_limit);
}

}  // namespace emu_api_test
