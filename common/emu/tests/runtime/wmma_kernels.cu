// Kernels for the emulator's tensor-core tests, written as a student would write them.
#include "wmma_kernels.hpp"

#include <mma.h>

#include <type_traits>

using namespace nvcuda;

namespace emu_wmma_test {

// One warp computes the 16x16 tile (blockIdx.y, blockIdx.x) of c.
template <class T, class LayoutA, class LayoutB>
__global__ void gemm_kernel(const T* a, unsigned lda, const T* b, unsigned ldb, float* c, unsigned ldc, int k) {
    const int tile_row = blockIdx.y * 16, tile_col = blockIdx.x * 16;
    const bool a_row = std::is_same<LayoutA, wmma::row_major>::value;
    const bool b_row = std::is_same<LayoutB, wmma::row_major>::value;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, T, LayoutA> a_frag;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, T, LayoutB> b_frag;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int kk = 0; kk < k; kk += 16) {
        // Element (row, col) of a row-major matrix is at row * ld + col, of a column-major one at col * ld + row.
        const T* a_tile = a_row ? a + tile_row * lda + kk : a + kk * lda + tile_row;
        const T* b_tile = b_row ? b + kk * ldb + tile_col : b + tile_col * ldb + kk;
        wmma::load_matrix_sync(a_frag, a_tile, lda);
        wmma::load_matrix_sync(b_frag, b_tile, ldb);
        wmma::mma_sync(acc, a_frag, b_frag, acc);
    }
    wmma::store_matrix_sync(c + tile_row * ldc + tile_col, acc, ldc, wmma::mem_row_major);
}

template <class T>
void launch_gemm_typed(const T* a, Layout la, unsigned lda, const T* b, Layout lb, unsigned ldb, float* c,
                       unsigned ldc, int m, int n, int k) {
    const dim3 grid(n / 16, m / 16);
    if (la == Layout::row && lb == Layout::row) {
        gemm_kernel<T, wmma::row_major, wmma::row_major><<<grid, 32>>>(a, lda, b, ldb, c, ldc, k);
    } else if (la == Layout::row) {
        gemm_kernel<T, wmma::row_major, wmma::col_major><<<grid, 32>>>(a, lda, b, ldb, c, ldc, k);
    } else if (lb == Layout::row) {
        gemm_kernel<T, wmma::col_major, wmma::row_major><<<grid, 32>>>(a, lda, b, ldb, c, ldc, k);
    } else {
        gemm_kernel<T, wmma::col_major, wmma::col_major><<<grid, 32>>>(a, lda, b, ldb, c, ldc, k);
    }
}

void launch_gemm(const __half* a, Layout la, unsigned lda, const __half* b, Layout lb, unsigned ldb, float* c,
                 unsigned ldc, int m, int n, int k) {
    launch_gemm_typed(a, la, lda, b, lb, ldb, c, ldc, m, n, k);
}
void launch_gemm(const __nv_bfloat16* a, Layout la, unsigned lda, const __nv_bfloat16* b, Layout lb, unsigned ldb,
                 float* c, unsigned ldc, int m, int n, int k) {
    launch_gemm_typed(a, la, lda, b, lb, ldb, c, ldc, m, n, k);
}

__global__ void gemm_half_accumulator_kernel(const __half* a, unsigned lda, const __half* b, unsigned ldb, __half* c,
                                             unsigned ldc, int k) {
    const int tile_row = blockIdx.y * 16, tile_col = blockIdx.x * 16;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a_frag;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> b_frag;
    wmma::fragment<wmma::accumulator, 16, 16, 16, __half> acc;
    wmma::fill_fragment(acc, __float2half(0.0f));
    for (int kk = 0; kk < k; kk += 16) {
        wmma::load_matrix_sync(a_frag, a + tile_row * lda + kk, lda);
        wmma::load_matrix_sync(b_frag, b + kk * ldb + tile_col, ldb);
        wmma::mma_sync(acc, a_frag, b_frag, acc);
    }
    wmma::store_matrix_sync(c + tile_row * ldc + tile_col, acc, ldc, wmma::mem_row_major);
}

void launch_gemm_half_accumulator(const __half* a, unsigned lda, const __half* b, unsigned ldb, __half* c,
                                  unsigned ldc, int m, int n, int k) {
    gemm_half_accumulator_kernel<<<dim3(n / 16, m / 16), 32>>>(a, lda, b, ldb, c, ldc, k);
}

__global__ void scaled_mma_kernel(const __half* a, const __half* b, const float* c, unsigned ldc, float alpha,
                                  float* d, unsigned ldd) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a_frag;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> b_frag;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::load_matrix_sync(a_frag, a, 16);
    wmma::load_matrix_sync(b_frag, b, 16);
    wmma::load_matrix_sync(acc, c, ldc, wmma::mem_col_major);
    wmma::mma_sync(acc, a_frag, b_frag, acc);
    for (int i = 0; i < acc.num_elements; ++i) acc.x[i] = alpha * acc.x[i];
    wmma::store_matrix_sync(d, acc, ldd, wmma::mem_row_major);
}

void launch_scaled_mma(const __half* a, const __half* b, const float* c, unsigned ldc, float alpha, float* d,
                       unsigned ldd) {
    scaled_mma_kernel<<<1, 32>>>(a, b, c, ldc, alpha, d, ldd);
}

__global__ void fragment_mapping_kernel(float* out) {
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    for (int i = 0; i < acc.num_elements; ++i) acc.x[i] = threadIdx.x * 100.0f + i;
    wmma::store_matrix_sync(out, acc, 16, wmma::mem_row_major);
}

void launch_fragment_mapping(float* out) { fragment_mapping_kernel<<<1, 32>>>(out); }

__global__ void half_warp_wmma_kernel(const __half* a, const __half* b, float* c) {
    if (threadIdx.x >= 16) return;  // the bug: half of the warp leaves before the warp-wide calls
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a_frag;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> b_frag;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    wmma::load_matrix_sync(a_frag, a, 16);
    wmma::load_matrix_sync(b_frag, b, 16);
    wmma::mma_sync(acc, a_frag, b_frag, acc);
    wmma::store_matrix_sync(c, acc, 16, wmma::mem_row_major);
}

int launch_half_warp_wmma(const __half* a, const __half* b, float* c) {
    half_warp_wmma_kernel<<<1, 32>>>(a, b, c);
    return __LINE__ - 8;
}

__global__ void whole_block_wmma_kernel(const __half* a, const __half* b, float* c) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a_frag;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> b_frag;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    wmma::load_matrix_sync(a_frag, a, 16);
    wmma::load_matrix_sync(b_frag, b, 16);
    wmma::mma_sync(acc, a_frag, b_frag, acc);
    wmma::store_matrix_sync(c + (threadIdx.x / 32) * 256, acc, 16, wmma::mem_row_major);
}

int launch_partial_last_warp_wmma(const __half* a, const __half* b, float* c) {
    whole_block_wmma_kernel<<<1, 48>>>(a, b, c);
    return __LINE__ - 8;
}

__global__ void divided_wmma_kernel(const __half* a, float* c) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a_frag;
    if (threadIdx.x % 2 == 0) {
        wmma::load_matrix_sync(a_frag, a, 16);
    } else {
        wmma::load_matrix_sync(a_frag, a, 16);  // the bug: the warp must make one call, not two
    }
    c[threadIdx.x] = __half2float(a_frag.x[0]);
}

int launch_divided_wmma(const __half* a, float* c) {
    divided_wmma_kernel<<<1, 32>>>(a, c);
    return __LINE__ - 9;
}

__global__ void tile_past_end_kernel(const __half* a, float* c) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a_frag;
    wmma::load_matrix_sync(a_frag, a + 256, 16);  // the bug: the second tile of a one-tile allocation
    c[threadIdx.x] = __half2float(a_frag.x[0]);
}

int launch_tile_past_end_wmma(const __half* a, float* c) {
    tile_past_end_kernel<<<1, 32>>>(a, c);
    return __LINE__ - 6;
}

__global__ void bad_ldm_kernel(const __half* a, float* c) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a_frag;
    wmma::load_matrix_sync(a_frag, a, 12);
    c[threadIdx.x] = __half2float(a_frag.x[0]);
}

int launch_bad_ldm_wmma(const __half* a, float* c) {
    bad_ldm_kernel<<<1, 32>>>(a, c);
    return __LINE__ - 6;
}

}  // namespace emu_wmma_test
