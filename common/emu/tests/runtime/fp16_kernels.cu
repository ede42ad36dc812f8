// Kernels for the emulator's half-precision tests, written as a student would write them.
#include "fp16_kernels.hpp"

namespace emu_fp16_test {

// One function per element type: the same source for __half and __nv_bfloat16
// (CUDA overloads the intrinsics), and for their pairs.
template <class T>
__device__ T apply(Op op, T a, T b, T c) {
    switch (op) {
        case Op::add: return __hadd(a, b);
        case Op::sub: return __hsub(a, b);
        case Op::mul: return __hmul(a, b);
        case Op::div: return __hdiv(a, b);
        case Op::fma: return __hfma(a, b, c);
        case Op::neg: return __hneg(a);
        case Op::abs: return __habs(a);
        case Op::max: return __hmax(a, b);
        case Op::min: return __hmin(a, b);
        case Op::sqrt: return hsqrt(a);
        case Op::operators: {
            T r = a * b;
            r += c;
            return r;
        }
    }
    return a;
}

template <class T2>
__device__ T2 apply2(Op op, T2 a, T2 b, T2 c) {
    switch (op) {
        case Op::add: return __hadd2(a, b);
        case Op::sub: return __hsub2(a, b);
        case Op::mul: return __hmul2(a, b);
        case Op::div: return __h2div(a, b);
        case Op::fma: return __hfma2(a, b, c);
        case Op::neg: return __hneg2(a);
        case Op::abs: return __habs2(a);
        case Op::max: return __hmax2(a, b);
        case Op::min: return __hmin2(a, b);
        case Op::sqrt: return h2sqrt(a);
        case Op::operators: {
            T2 r = a * b;
            r += c;
            return r;
        }
    }
    return a;
}

template <class T>
__global__ void op_kernel(Op op, const T* a, const T* b, const T* c, T* out, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        out[i] = apply(op, a[i], b[i], c[i]);
    }
}

template <class T2>
__global__ void op2_kernel(Op op, const T2* a, const T2* b, const T2* c, T2* out, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        out[i] = apply2(op, a[i], b[i], c[i]);
    }
}

void launch_half_op(Op op, const __half* a, const __half* b, const __half* c, __half* out, int n) {
    op_kernel<<<4, 128>>>(op, a, b, c, out, n);
}
void launch_bf16_op(Op op, const __nv_bfloat16* a, const __nv_bfloat16* b, const __nv_bfloat16* c,
                    __nv_bfloat16* out, int n) {
    op_kernel<<<4, 128>>>(op, a, b, c, out, n);
}
void launch_half2_op(Op op, const __half2* a, const __half2* b, const __half2* c, __half2* out, int n) {
    op2_kernel<<<4, 128>>>(op, a, b, c, out, n);
}
void launch_bf162_op(Op op, const __nv_bfloat162* a, const __nv_bfloat162* b, const __nv_bfloat162* c,
                     __nv_bfloat162* out, int n) {
    op2_kernel<<<4, 128>>>(op, a, b, c, out, n);
}

__global__ void shuffles_kernel(__half* out_down, __half2* out_xor2, __nv_bfloat16* out_bf16, __half* sum) {
    const int lane = threadIdx.x;
    const __half mine = __float2half(lane + 0.5f);
    out_down[lane] = __shfl_down_sync(0xffffffffu, mine, 3);
    const __half2 pair = __floats2half2_rn(static_cast<float>(lane), -static_cast<float>(lane));
    out_xor2[lane] = __shfl_xor_sync(0xffffffffu, pair, 1);
    const __nv_bfloat16 doubled = __float2bfloat16(lane * 2.0f);
    out_bf16[lane] = __shfl_sync(0xffffffffu, doubled, 31 - lane);
    __half total = mine;
    for (int offset = 16; offset > 0; offset /= 2) total = __hadd(total, __shfl_down_sync(0xffffffffu, total, offset));
    if (lane == 0) *sum = total;
}

void launch_half_shuffles(__half* out_down, __half2* out_xor2, __nv_bfloat16* out_bf16, __half* sum) {
    shuffles_kernel<<<1, 32>>>(out_down, out_xor2, out_bf16, sum);
}

__global__ void atomics_kernel(__half* counter, __half2* pair) {
    atomicAdd(counter, __float2half(1.0f));
    atomicAdd(pair, __floats2half2_rn(1.0f, 2.0f));
}

void launch_half_atomics(__half* counter, __half2* pair, unsigned threads) {
    atomics_kernel<<<(threads + 63) / 64, 64>>>(counter, pair);
}

}  // namespace emu_fp16_test
