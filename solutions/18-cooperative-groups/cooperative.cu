// Lesson 18 reference solution: cooperative groups.
//
// Groups make explicit which threads cooperate, and their collectives act on
// exactly those threads:
// - a thread_block_tile<N> is N consecutive threads of one warp; cg::reduce
//   over it is a butterfly of N-wide shuffles, no shared memory, no barrier;
// - coalesced_threads() is the set of lanes that reached this point together
//   (those still in the loop), and labeled_partition() splits it by a key:
//   one lane per distinct key does the atomic for its whole group;
// - this_grid() is every thread of a cooperative launch, and grid.sync() a
//   barrier across all blocks. It is only legal when every block is resident
//   at once, which cudaLaunchCooperativeKernel guarantees by refusing a grid
//   larger than occupancy x SMs (cudaErrorCooperativeLaunchTooLarge).
#include <cooperative.hpp>

#include <course/cuda_check.hpp>

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

namespace lesson18 {

namespace {

constexpr unsigned kWarpsPerBlock = kBlockThreads / 32;

int sm_count() {
    int device = 0, sms = 0;
    COURSE_CUDA_CHECK(cudaGetDevice(&device));
    COURSE_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    return sms;
}

// Grid-stride over tiles: tile t of the whole input is handled by tile
// (t mod tiles-in-grid) of the grid. Every lane of a tile runs the same
// iterations (the loop condition depends on t only), so the tile's
// collective always finds all its lanes; lanes past n contribute 0.
template <unsigned Tile>
__global__ void tile_sums_kernel(const int* in, std::size_t n, int* out) {
    const cg::thread_block_tile<Tile> tile = cg::tiled_partition<Tile>(cg::this_thread_block());
    const std::size_t tiles = (n + Tile - 1) / Tile;
    const std::size_t tiles_per_block = tile.meta_group_size();
    for (std::size_t t = blockIdx.x * tiles_per_block + tile.meta_group_rank(); t < tiles;
         t += static_cast<std::size_t>(gridDim.x) * tiles_per_block) {
        const std::size_t i = t * Tile + tile.thread_rank();
        const int sum = cg::reduce(tile, i < n ? in[i] : 0, cg::plus<int>());
        if (tile.thread_rank() == 0) out[t] = sum;
    }
}

// A warp-aggregated count. Within one iteration, the lanes still in the
// loop are the coalesced group; those with the same label form one labeled
// group, whose rank-0 lane adds the group's size: one atomic per distinct
// label per warp instead of one per element.
__global__ void count_labels_kernel(const int* labels, std::size_t n, int* counts) {
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
        const int label = labels[i];
        const cg::coalesced_group active = cg::coalesced_threads();
        const cg::coalesced_group same = cg::labeled_partition(active, label);
        if (same.thread_rank() == 0) atomicAdd(&counts[label], static_cast<int>(same.size()));
    }
}

// The sum of `value` over the block, valid in thread 0: a warp reduce per
// tile of 32, the warps' sums through shared memory, a last warp reduce.
__device__ int block_sum(const cg::thread_block& block, int value) {
    __shared__ int warp_sums[kWarpsPerBlock];
    const cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    value = cg::reduce(warp, value, cg::plus<int>());
    if (warp.thread_rank() == 0) warp_sums[warp.meta_group_rank()] = value;
    block.sync();
    int total = 0;
    if (warp.meta_group_rank() == 0) {
        total = cg::reduce(warp, warp.thread_rank() < kWarpsPerBlock ? warp_sums[warp.thread_rank()] : 0,
                           cg::plus<int>());
    }
    block.sync();  // warp_sums may be reused by the next call
    return total;
}

// This thread's grid-stride share of the sum. cudaMalloc'd inputs are
// 16-byte aligned: then the body is read as int4, four ints per load (as in
// lesson 06), which keeps four times as many bytes in flight per thread as
// int loads, and the n % 4 last elements one by one.
__device__ int grid_stride_share(const int* in, std::size_t n, const cg::grid_group& grid) {
    const std::size_t rank = grid.thread_rank(), threads = grid.size();
    int sum = 0;
    if (reinterpret_cast<std::uintptr_t>(in) % alignof(int4) == 0) {
        const int4* in4 = reinterpret_cast<const int4*>(in);
        const std::size_t n4 = n / 4;
        for (std::size_t i = rank; i < n4; i += threads) {
            const int4 v = in4[i];
            sum += v.x + v.y + v.z + v.w;
        }
        for (std::size_t i = 4 * n4 + rank; i < n; i += threads) sum += in[i];
    } else {
        for (std::size_t i = rank; i < n; i += threads) sum += in[i];
    }
    return sum;
}

// One kernel, two phases. Phase 1: every block sums its grid-stride share
// into partials[block]. grid.sync(): every partial is written (and visible)
// before anyone reads them. Phase 2: block 0 adds the partials in a fixed
// order, so the result does not depend on which block finished first.
__global__ void grid_sum_kernel(const int* in, std::size_t n, int* partials, int* out) {
    const cg::grid_group grid = cg::this_grid();
    const cg::thread_block block = cg::this_thread_block();
    const int sum = block_sum(block, grid_stride_share(in, n, grid));
    if (block.thread_rank() == 0) partials[grid.block_rank()] = sum;
    grid.sync();
    if (grid.block_rank() != 0) return;  // after the last grid.sync(): no block waits for this one
    int total = 0;
    for (std::size_t b = block.thread_rank(); b < grid.num_blocks(); b += block.size()) total += partials[b];
    total = block_sum(block, total);
    if (block.thread_rank() == 0) *out = total;
}

// Jacobi sweeps ping-ponging between u and scratch. The grid.sync() after
// each sweep is what makes the next sweep read finished values: without it,
// a block reads its neighbour's boundary points from the sweep before, or
// from the one after. It also keeps a sweep from overwriting values another
// block still has to read (the array written in sweep k+1 is the one read in
// sweep k).
__global__ void jacobi_kernel(float* u, float* scratch, const float* f, std::size_t n, int iterations, float h2) {
    const cg::grid_group grid = cg::this_grid();
    float* from = u;
    float* to = scratch;
    for (int k = 0; k < iterations; ++k) {
        for (std::size_t i = grid.thread_rank(); i < n; i += grid.size()) {
            to[i] = i == 0 || i == n - 1 ? from[i] : 0.5f * (from[i - 1] + from[i + 1] + h2 * f[i]);
        }
        grid.sync();
        float* const swap = from;
        from = to;
        to = swap;
    }
    // After an odd number of sweeps the last iterate is in scratch. The
    // copy reads and writes the same index only: no grid.sync() needed.
    if (from != u) {
        for (std::size_t i = grid.thread_rank(); i < n; i += grid.size()) u[i] = from[i];
    }
}

// occupancy x SMs: the most blocks of `kernel` that can all be resident.
template <class Kernel>
int resident_blocks(Kernel kernel) {
    int per_sm = 0;
    COURSE_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kBlockThreads, 0));
    return per_sm * sm_count();
}

// A grid too large to be resident is the caller's question, answered with
// the status; the launcher clears it so that later checks do not trip on it.
cudaError_t cooperative_status(cudaError_t status) {
    if (status == cudaErrorCooperativeLaunchTooLarge) {
        (void)cudaGetLastError();
        return status;
    }
    COURSE_CUDA_CHECK(status);
    return cudaSuccess;
}

void check_blocks(int blocks, const char* function) {
    if (blocks < 1) throw std::invalid_argument(std::string(function) + ": blocks must be at least 1");
}

// Enough blocks to cover n with one element per thread, at most a full wave.
unsigned plain_grid(std::size_t n) {
    const std::size_t wanted = (n + kBlockThreads - 1) / kBlockThreads;
    const std::size_t wave = static_cast<std::size_t>(sm_count()) * (2048 / kBlockThreads);
    return static_cast<unsigned>(wanted < 1 ? 1 : wanted < wave ? wanted : wave);
}

}  // namespace

void tile_sums(const int* in, std::size_t n, unsigned tile_size, int* out) {
    if (tile_size != 4 && tile_size != 8 && tile_size != 16 && tile_size != 32) {
        throw std::invalid_argument("tile_sums: tile_size must be 4, 8, 16 or 32, not " + std::to_string(tile_size));
    }
    if (n == 0) return;
    const unsigned blocks = plain_grid(n);
    switch (tile_size) {
        case 4: tile_sums_kernel<4><<<blocks, kBlockThreads>>>(in, n, out); break;
        case 8: tile_sums_kernel<8><<<blocks, kBlockThreads>>>(in, n, out); break;
        case 16: tile_sums_kernel<16><<<blocks, kBlockThreads>>>(in, n, out); break;
        default: tile_sums_kernel<32><<<blocks, kBlockThreads>>>(in, n, out); break;
    }
    COURSE_CUDA_CHECK(cudaGetLastError());
}

void count_labels(const int* labels, std::size_t n, int num_labels, int* counts) {
    if (num_labels < 1) throw std::invalid_argument("count_labels: num_labels must be at least 1");
    COURSE_CUDA_CHECK(cudaMemsetAsync(counts, 0, static_cast<std::size_t>(num_labels) * sizeof(int)));
    if (n == 0) return;
    count_labels_kernel<<<plain_grid(n), kBlockThreads>>>(labels, n, counts);
    COURSE_CUDA_CHECK(cudaGetLastError());
}

int grid_sum_blocks() { return resident_blocks(grid_sum_kernel); }

cudaError_t grid_sum(const int* in, std::size_t n, int* partials, int* out, int blocks) {
    check_blocks(blocks, "grid_sum");
    void* args[] = {&in, &n, &partials, &out};
    return cooperative_status(cudaLaunchCooperativeKernel(grid_sum_kernel, dim3(static_cast<unsigned>(blocks)),
                                                          dim3(kBlockThreads), args, 0, nullptr));
}

int jacobi_blocks() { return resident_blocks(jacobi_kernel); }

cudaError_t jacobi(float* u, float* scratch, const float* f, std::size_t n, int iterations, float h2, int blocks) {
    check_blocks(blocks, "jacobi");
    if (n < 3 || iterations <= 0) return cudaSuccess;  // no interior point, or no sweep: u stays
    void* args[] = {&u, &scratch, &f, &n, &iterations, &h2};
    return cooperative_status(cudaLaunchCooperativeKernel(jacobi_kernel, dim3(static_cast<unsigned>(blocks)),
                                                          dim3(kBlockThreads), args, 0, nullptr));
}

}  // namespace lesson18
