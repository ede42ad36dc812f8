// Host wrappers for the emulator's half-precision and bfloat16 tests. The
// kernels live in fp16_kernels.cu, which goes through the translator like a
// student's file (and compiles with nvcc, so they are valid CUDA).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

namespace emu_fp16_test {

/// The arithmetic each thread applies to its elements.
enum class Op { add, sub, mul, div, fma, neg, abs, max, min, sqrt, operators };

/// out[i] = op(a[i], b[i], c[i]) for i < n, with the intrinsic (__hadd, __hfma, hsqrt ...);
/// `operators` computes `a * b + c` with the operators (two roundings) and also `+=`.
void launch_half_op(Op op, const __half* a, const __half* b, const __half* c, __half* out, int n);
void launch_bf16_op(Op op, const __nv_bfloat16* a, const __nv_bfloat16* b, const __nv_bfloat16* c,
                    __nv_bfloat16* out, int n);
/// The same with the pair intrinsics (__hadd2 ...) on n pairs.
void launch_half2_op(Op op, const __half2* a, const __half2* b, const __half2* c, __half2* out, int n);
void launch_bf162_op(Op op, const __nv_bfloat162* a, const __nv_bfloat162* b, const __nv_bfloat162* c,
                     __nv_bfloat162* out, int n);

/// One warp: lane l holds (l + 0.5) as half; out_down[l] = __shfl_down_sync(.., 3),
/// out_xor2[l] = __shfl_xor_sync of the pair (l, -l) with lane mask 1, out_bf16[l] =
/// __shfl_sync of bf16 (l * 2) from lane 31 - l, and sum[0] = the warp's sum of all
/// 32 values by a __shfl_down_sync tree of __hadd (exact in half: 512).
void launch_half_shuffles(__half* out_down, __half2* out_xor2, __nv_bfloat16* out_bf16, __half* sum);

/// `threads` threads each atomicAdd 1.0 to *counter and (1, 2) to *pair.
void launch_half_atomics(__half* counter, __half2* pair, unsigned threads);

}  // namespace emu_fp16_test
