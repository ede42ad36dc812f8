#include "analysis_kernels.hpp"

#include <cuda_runtime.h>

namespace analysis_kernels {

template <int Pad>
__global__ void tile_transpose(const float* in, float* out, int n) {
    __shared__ float tile[32][32 + Pad];
    const int x = blockIdx.x * 32 + threadIdx.x;
    const int y = blockIdx.y * 32 + threadIdx.y;
    tile[threadIdx.y][threadIdx.x] = in[y * n + x];
    __syncthreads();
    const int tx = blockIdx.y * 32 + threadIdx.x;
    const int ty = blockIdx.x * 32 + threadIdx.y;
    out[ty * n + tx] = tile[threadIdx.x][threadIdx.y];
}

void transpose_through_tile(const float* in, float* out, int n, bool padded) {
    const dim3 grid(n / 32, n / 32), block(32, 32);
    if (padded) tile_transpose<1><<<grid, block>>>(in, out, n);
    else tile_transpose<0><<<grid, block>>>(in, out, n);
}

__global__ void strided_copy_kernel(const float* in, float* out, int n, int stride) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i * stride];
}

void strided_copy(const float* in, float* out, int n, int stride) {
    strided_copy_kernel<<<(n + 255) / 256, 256>>>(in, out, n, stride);
}

__global__ void copy_float4_kernel(const float4* in, float4* out, int n4) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) out[i] = in[i];
}

void copy_float4(const float* in, float* out, int n4) {
    copy_float4_kernel<<<(n4 + 255) / 256, 256>>>(reinterpret_cast<const float4*>(in), reinterpret_cast<float4*>(out), n4);
}

__global__ void broadcast_kernel(int* out, bool with_barrier) {
    __shared__ int value;
    if (threadIdx.x == 0) value = 42;
    if (with_barrier) __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = value;
}

void broadcast_through_shared(int* out, int n, bool with_barrier) {
    broadcast_kernel<<<n / 64, 64>>>(out, with_barrier);
}

__global__ void read_unwritten_kernel(float* out) {
    __shared__ float never_written[64];
    out[threadIdx.x] = never_written[threadIdx.x];
}

void read_unwritten_shared(float* out, int n) { read_unwritten_kernel<<<1, n>>>(out); }

__global__ void all_write_one_kernel(int* out, bool atomically) {
    if (atomically) atomicAdd(out, 1);
    else out[0] = static_cast<int>(threadIdx.x);
}

void all_write_one(int* out, int n, bool atomically) { all_write_one_kernel<<<2, n / 2>>>(out, atomically); }

__global__ void odd_lanes_copy_kernel(const float* in, float* out, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && threadIdx.x % 2 == 1) out[i] = in[i];
}

void odd_lanes_copy(const float* in, float* out, int n) { odd_lanes_copy_kernel<<<(n + 255) / 256, 256>>>(in, out, n); }

__global__ void branch_kernel(float* out, bool by_warp) {
    const unsigned t = threadIdx.x;
    float v = 1.0f;
    const bool odd = by_warp ? (t / 32) % 2 == 1 : t % 2 == 1;
    if (odd) {
        v = 2.0f * static_cast<float>(t) + out[blockIdx.x * blockDim.x + t];
    }
    out[blockIdx.x * blockDim.x + t] = v;
}

void branch_by_lane_or_warp(float* out, int n, bool by_warp) { branch_kernel<<<n / 128, 128>>>(out, by_warp); }

__global__ void grid_stride_add_kernel(float* data, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        data[i] += 1.0f;
    }
}

void grid_stride_add(float* data, int n, int blocks) { grid_stride_add_kernel<<<blocks, 128>>>(data, n); }

constexpr int kExchangeWriteLine = __LINE__ + 3;
__global__ void exchange_with_neighbour(int* slots, int* seen, bool skip_sync) {
    const cooperative_groups::grid_group grid = cooperative_groups::this_grid();
    if (threadIdx.x == 0) slots[blockIdx.x] = static_cast<int>(blockIdx.x);
    if (!skip_sync) grid.sync();
    if (threadIdx.x == 0) seen[blockIdx.x] = slots[(blockIdx.x + 1) % gridDim.x];
}
constexpr int kExchangeReadLine = kExchangeWriteLine + 2;

cudaError_t neighbour_exchange(int* slots, int* seen, unsigned blocks, bool skip_sync) {
    void* args[] = {&slots, &seen, &skip_sync};
    return cudaLaunchCooperativeKernel(exchange_with_neighbour, blocks, 32, args);
}
int neighbour_exchange_write_line() { return kExchangeWriteLine; }
int neighbour_exchange_read_line() { return kExchangeReadLine; }

__global__ void wmma_kernel(const __half* a, const __half* b, float* out) {
    __shared__ __half a_tile[256];
    __shared__ __half b_tile[256];
    __shared__ float c_tile[256];
    for (int i = threadIdx.x; i < 256; i += 32) {
        a_tile[i] = a[i];
        b_tile[i] = b[i];
    }
    __syncthreads();
    nvcuda::wmma::fragment<nvcuda::wmma::matrix_a, 16, 16, 16, __half, nvcuda::wmma::row_major> a_frag;
    nvcuda::wmma::fragment<nvcuda::wmma::matrix_b, 16, 16, 16, __half, nvcuda::wmma::row_major> b_frag;
    nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float> acc;
    nvcuda::wmma::fill_fragment(acc, 0.0f);
    nvcuda::wmma::load_matrix_sync(a_frag, a_tile, 16);
    nvcuda::wmma::load_matrix_sync(b_frag, b_tile, 16);
    nvcuda::wmma::mma_sync(acc, a_frag, b_frag, acc);
    nvcuda::wmma::store_matrix_sync(c_tile, acc, 16, nvcuda::wmma::mem_row_major);
    __syncwarp();
    for (int i = threadIdx.x; i < 256; i += 32) out[blockIdx.x * 256 + i] = c_tile[i];
}

void wmma_through_shared(const __half* a, const __half* b, float* out) { wmma_kernel<<<2, 32>>>(a, b, out); }

int wmma_through_shared_first_call_line() { return 124; }

constexpr int kPublishWriteLine = __LINE__ + 5;
__global__ void publish_then_ticket_kernel(int* slots, unsigned* ticket, int* total, bool fenced) {
    __shared__ bool last;
    const unsigned block_threads = blockDim.x;
    const unsigned i = blockIdx.x * block_threads + threadIdx.x;
    slots[i] = static_cast<int>(i);
    if (fenced) __threadfence();  // this thread's slot is seen before the ticket says the block is done
    __syncthreads();
    if (threadIdx.x == 0) last = atomicAdd(ticket, 1u) == gridDim.x - 1;
    __syncthreads();
    if (!last) return;
    if (fenced) __threadfence();
    if (threadIdx.x != 0) return;
    int sum = 0;
    for (unsigned j = 0; j < gridDim.x * block_threads; ++j) sum += slots[j];
    *total = sum;
}
constexpr int kPublishReadLine = kPublishWriteLine + 9;

void publish_then_ticket(int* slots, unsigned* ticket, int* total, unsigned blocks, bool fenced) {
    publish_then_ticket_kernel<<<blocks, 32>>>(slots, ticket, total, fenced);
}
int publish_then_ticket_write_line() { return kPublishWriteLine; }
int publish_then_ticket_read_line() { return kPublishReadLine; }

}  // namespace analysis_kernels
