// Lesson 18: cooperative groups: tiles and cg::reduce, coalesced and
// labeled groups, and grid-wide barriers in cooperative launches.
//
// Goal: make `./course grade 18` pass. Read lessons/18-cooperative-groups/README.md
// first; the functions you fill in are documented in cooperative.hpp.
// Stuck? `./course hint 18` shows the hints one by one.
//
// Order that works: tile_sums_kernel, then count_labels_kernel, then
// resident_blocks (the grid size), then grid_sum_kernel and grid_sum's
// cooperative launch, then jacobi_kernel.
#include <cooperative.hpp>

#include <course/cuda_check.hpp>

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

namespace lesson18 {

namespace {

int sm_count() {
    int device = 0, sms = 0;
    COURSE_CUDA_CHECK(cudaGetDevice(&device));
    COURSE_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    return sms;
}

// out[t] = the sum of tile t of the input (Tile consecutive elements, the
// last tile possibly partial), for every t < ceil(n / Tile).
template <unsigned Tile>
__global__ void tile_sums_kernel(const int* in, std::size_t n, int* out) {
    // TODO: cut the block into tiles: cg::tiled_partition<Tile>(cg::this_thread_block()).
    // TODO: loop over the input's tiles with a grid-stride loop over tile indices
    //       (this tile's index in the grid: blockIdx.x * tile.meta_group_size() + tile.meta_group_rank()).
    //       Keep every lane of a tile in the loop together: lanes past n add 0.
    // TODO: sum the tile's elements with cg::reduce(tile, value, cg::plus<int>());
    //       the tile's rank-0 lane writes out[t].
    (void)in;
    (void)n;
    (void)out;
}

// counts[labels[i]] += 1 for every i < n, with one atomicAdd per group of
// lanes of a warp that hold the same label.
__global__ void count_labels_kernel(const int* labels, std::size_t n, int* counts) {
    // TODO: a grid-stride loop over i; in its body:
    //       the lanes still in the loop: cg::coalesced_threads();
    //       those of them with this label: cg::labeled_partition(active, label);
    //       the group's rank-0 lane adds the group's size to counts[label].
    (void)labels;
    (void)n;
    (void)counts;
}

// The sum of in[0..n) into *out: every block sums a grid-stride share into
// partials[block], grid.sync(), then block 0 adds the partials.
__global__ void grid_sum_kernel(const int* in, std::size_t n, int* partials, int* out) {
    // TODO: cg::this_grid() gives grid.thread_rank(), grid.size(), grid.block_rank(), grid.num_blocks().
    // TODO: reduce each block's share (a tile<32> cg::reduce per warp, the warps' sums through
    //       __shared__ memory), write partials[grid.block_rank()], grid.sync(), then let block 0 add
    //       the partials and write *out.
    (void)in;
    (void)n;
    (void)partials;
    (void)out;
}

// `iterations` Jacobi sweeps between u and scratch, a grid.sync() after each
// sweep; the last iterate ends in u.
__global__ void jacobi_kernel(float* u, float* scratch, const float* f, std::size_t n, int iterations, float h2) {
    // TODO: for each sweep, a grid-stride loop writing to[i] from from[i-1], from[i+1] and f[i]
    //       (the end points copied), then grid.sync(), then swap from and to.
    // TODO: after an odd number of sweeps the last iterate is in scratch: copy it into u.
    (void)u;
    (void)scratch;
    (void)f;
    (void)n;
    (void)iterations;
    (void)h2;
}

// The most blocks of `kernel` (kBlockThreads threads, no dynamic shared
// memory) that can be resident on the device at once.
template <class Kernel>
int resident_blocks(Kernel kernel) {
    // TODO: cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kBlockThreads, 0),
    //       times the number of SMs (sm_count()).
    (void)kernel;
    return 0;
}

// Enough blocks to cover n with one element per thread, at most a full wave.
unsigned plain_grid(std::size_t n) {
    const std::size_t wanted = (n + kBlockThreads - 1) / kBlockThreads;
    const std::size_t wave = static_cast<std::size_t>(sm_count()) * (2048 / kBlockThreads);
    return static_cast<unsigned>(wanted < 1 ? 1 : wanted < wave ? wanted : wave);
}

void check_blocks(int blocks, const char* function) {
    if (blocks < 1) throw std::invalid_argument(std::string(function) + ": blocks must be at least 1");
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
    // TODO: launch grid_sum_kernel with cudaLaunchCooperativeKernel(grid_sum_kernel, grid, block, args, 0, nullptr),
    //       args being {&in, &n, &partials, &out}. Return cudaErrorCooperativeLaunchTooLarge as it
    //       comes, after clearing it with cudaGetLastError(); check any other error with COURSE_CUDA_CHECK.
    (void)in;
    (void)n;
    (void)partials;
    (void)out;
    return cudaSuccess;
}

int jacobi_blocks() { return resident_blocks(jacobi_kernel); }

cudaError_t jacobi(float* u, float* scratch, const float* f, std::size_t n, int iterations, float h2, int blocks) {
    check_blocks(blocks, "jacobi");
    if (n < 3 || iterations <= 0) return cudaSuccess;  // no interior point, or no sweep: u stays
    // TODO: launch jacobi_kernel cooperatively, as grid_sum does.
    (void)u;
    (void)scratch;
    (void)f;
    (void)h2;
    return cudaSuccess;
}

}  // namespace lesson18
