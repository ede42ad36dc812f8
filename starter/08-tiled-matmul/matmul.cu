// Lesson 08: C = A·B through shared-memory tiles.
//
// Goal: make `./course grade 08` pass. Read lessons/08-tiled-matmul/README.md
// first; the functions you fill in are documented in matmul.hpp.
// Stuck? `./course hint 08` shows the hints one by one.
//
// All matrices are row-major: A is N x M (A[i * M + k]), B is M x K
// (B[k * K + j]), C is N x K (C[i * K + j]).
#include <matmul.hpp>

#include <course/cuda_check.hpp>

#include <cstddef>
#include <cuda_runtime.h>

namespace lesson08 {

namespace {

// The tile size: a block of kTile x kTile threads computes a kTile x kTile
// tile of C, one element per thread. 16 or 32 are good choices.
constexpr int kTile = 32;

__global__ void matmul_tiled_kernel(const float* A, const float* B, float* C, int N, int M, int K) {
    // TODO: declare the block's two tiles, kTile x kTile floats each, in
    // shared memory (__shared__).

    // TODO: this thread's element of C: row from blockIdx.y and threadIdx.y,
    // column from blockIdx.x and threadIdx.x.

    // TODO: one phase per tile along M, rounded up so that the last, partial
    // tile is not dropped. In each phase:
    //   - store one element of A's tile and one of B's tile (0 where the
    //     element lies outside A or B),
    //   - __syncthreads(): why is it needed here?
    //   - add this thread's kTile products from the shared tiles,
    //   - __syncthreads(): and why here?
    // Every thread, also one outside C, must reach every barrier: no early return.

    // TODO: write the sum, if this thread's element lies inside C.
}

}  // namespace

void matmul_tiled(const float* A, const float* B, float* C, int N, int M, int K) {
    // TODO: return at once when C is empty (N or K is 0): a grid of 0
    // blocks is a launch error.
    const dim3 block(kTile, kTile);
    // TODO: enough blocks to cover C: along x its K columns, along y its N
    // rows, each rounded up to whole tiles.
    const dim3 grid(1, 1);
    matmul_tiled_kernel<<<grid, block>>>(A, B, C, N, M, K);
    COURSE_CUDA_CHECK(cudaGetLastError());
}

void matmul_register_blocked(const float* A, const float* B, float* C, int N, int M, int K) {
    // Going further (optional): replace this call by a register-blocked
    // kernel in which each thread computes a small tile of C (the README's
    // "Going further" says how). The tests check this function like
    // matmul_tiled, and `./course bench 08` times it against cuBLAS. Until
    // you write it, it is your tiled kernel.
    matmul_tiled(A, B, C, N, M, K);
}

}  // namespace lesson08
