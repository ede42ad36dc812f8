// The emulator benchmark's kernels: the three figures issue #3 sets, written
// as a student would write them.
#include "bench_kernels.hpp"

namespace emu_bench {

__global__ void saxpy(int n, float a, const float* x, float* y) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) y[i] = a * x[i] + y[i];
}

void launch_saxpy(int n, float a, const float* x, float* y) { saxpy<<<64, 256>>>(n, a, x, y); }

__global__ void reduce_sum(const double* in, int n, double* total) {
    __shared__ double partial[256];
    double sum = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) sum += in[i];
    partial[threadIdx.x] = sum;
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(total, partial[0]);
}

void launch_reduce(const double* in, int n, double* total) { reduce_sum<<<16, 256>>>(in, n, total); }

constexpr int kTile = 16;

__global__ void transpose(const float* in, float* out, int rows, int cols) {
    __shared__ float tile[kTile][kTile + 1];
    const int x = blockIdx.x * kTile + threadIdx.x;
    const int y = blockIdx.y * kTile + threadIdx.y;
    if (x < cols && y < rows) tile[threadIdx.y][threadIdx.x] = in[y * cols + x];
    __syncthreads();
    const int tx = blockIdx.y * kTile + threadIdx.x;
    const int ty = blockIdx.x * kTile + threadIdx.y;
    if (tx < rows && ty < cols) out[ty * rows + tx] = tile[threadIdx.x][threadIdx.y];
}

void launch_transpose(const float* in, float* out, int rows, int cols) {
    transpose<<<dim3((cols + kTile - 1) / kTile, (rows + kTile - 1) / kTile), dim3(kTile, kTile)>>>(in, out, rows, cols);
}

}  // namespace emu_bench
