// Kernels for the emulator's cooperative-groups tests, written as a student
// would write them (this file also compiles with nvcc).
#include "cooperative_kernels.hpp"

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

namespace cg = cooperative_groups;

namespace emu_cooperative_test {

template <unsigned Tile>
__global__ void tile_sums(const int* in, int* out, int* meta) {
    const cg::thread_block block = cg::this_thread_block();
    const cg::thread_block_tile<Tile> tile = cg::tiled_partition<Tile>(block);
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    const int sum = cg::reduce(tile, in[i], cg::plus<int>());
    const unsigned t = blockIdx.x * tile.meta_group_size() + tile.meta_group_rank();
    if (tile.thread_rank() == 0) {
        out[t] = sum;
        meta[t] = static_cast<int>(tile.meta_group_size() * 1000 + tile.meta_group_rank());
    }
}

void launch_tile_sums(const int* in, int* out, int* meta, unsigned tile, unsigned blocks, unsigned threads) {
    switch (tile) {
        case 1: tile_sums<1><<<blocks, threads>>>(in, out, meta); break;
        case 2: tile_sums<2><<<blocks, threads>>>(in, out, meta); break;
        case 4: tile_sums<4><<<blocks, threads>>>(in, out, meta); break;
        case 8: tile_sums<8><<<blocks, threads>>>(in, out, meta); break;
        case 16: tile_sums<16><<<blocks, threads>>>(in, out, meta); break;
        default: tile_sums<32><<<blocks, threads>>>(in, out, meta); break;
    }
}

__global__ void tile_collectives(const int* in, int* out) {
    const auto tile = cg::tiled_partition<8>(cg::this_thread_block());
    const int v = in[threadIdx.x];
    int* mine = out + 5 * threadIdx.x;
    mine[0] = tile.shfl(v, 2);
    mine[1] = tile.shfl_down(v, 1);
    mine[2] = tile.shfl_up(v, 1);
    mine[3] = static_cast<int>(tile.ballot(v % 2 != 0));
    mine[4] = static_cast<int>(tile.match_any(v / 2));
}

void launch_tile_collectives(const int* in, int* out, unsigned threads) { tile_collectives<<<1, threads>>>(in, out); }

__global__ void coalesced_branch(int* out, int* sums) {
    out[threadIdx.x] = -1;
    sums[threadIdx.x] = -1;
    if (threadIdx.x % 3 == 0) {
        const cg::coalesced_group active = cg::coalesced_threads();
        out[threadIdx.x] = static_cast<int>(active.size() * 100 + active.thread_rank());
        sums[threadIdx.x] = cg::reduce(active, static_cast<int>(threadIdx.x), cg::plus<int>());
    }
}

void launch_coalesced_branch(int* out, int* sums, unsigned threads) { coalesced_branch<<<1, threads>>>(out, sums); }

__global__ void aggregated_count(const int* labels, int n, int* counts) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const cg::coalesced_group active = cg::coalesced_threads();
        const int label = labels[i];
        const cg::coalesced_group same = cg::labeled_partition(active, label);
        if (same.thread_rank() == 0) atomicAdd(&counts[label], static_cast<int>(same.size()));
    }
}

void launch_aggregated_count(const int* labels, int n, int* counts, unsigned blocks, unsigned threads) {
    aggregated_count<<<blocks, threads>>>(labels, n, counts);
}

__global__ void grid_sum(const int* in, int n, int* partials, int* out) {
    extern __shared__ int warp_sums[];
    const cg::grid_group grid = cg::this_grid();
    const cg::thread_block block = cg::this_thread_block();
    const auto warp = cg::tiled_partition<32>(block);
    int sum = 0;
    for (unsigned long long i = grid.thread_rank(); i < static_cast<unsigned long long>(n); i += grid.size()) sum += in[i];
    sum = cg::reduce(warp, sum, cg::plus<int>());
    if (warp.thread_rank() == 0) warp_sums[warp.meta_group_rank()] = sum;
    block.sync();
    if (block.thread_rank() == 0) {
        int block_total = 0;
        for (unsigned w = 0; w < warp.meta_group_size(); ++w) block_total += warp_sums[w];
        partials[grid.block_rank()] = block_total;
    }
    grid.sync();
    if (grid.thread_rank() == 0) {
        int total = 0;
        for (unsigned long long b = 0; b < grid.num_blocks(); ++b) total += partials[b];
        *out = total;
    }
}

cudaError_t launch_grid_sum(const int* in, int n, int* partials, int* out, unsigned blocks, unsigned threads) {
    void* args[] = {&in, &n, &partials, &out};
    return cudaLaunchCooperativeKernel(grid_sum, dim3(blocks), dim3(threads), args, (threads / 32) * sizeof(int));
}

const void* grid_sum_kernel_address() { return reinterpret_cast<const void*>(grid_sum); }

__global__ void neighbour_exchange(int* slots, int* seen, bool skip_sync) {
    const cg::grid_group grid = cg::this_grid();
    if (threadIdx.x == 0) slots[blockIdx.x] = static_cast<int>(blockIdx.x);
    if (!skip_sync) grid.sync();
    if (threadIdx.x == 0) seen[blockIdx.x] = slots[(blockIdx.x + 1) % gridDim.x];
}

cudaError_t launch_neighbour_exchange(int* slots, int* seen, unsigned blocks, bool skip_sync) {
    void* args[] = {&slots, &seen, &skip_sync};
    return cudaLaunchCooperativeKernel(neighbour_exchange, blocks, 64, args);
}

constexpr int kGridSyncWithoutCooperativeLaunchLine = __LINE__ + 3;
__global__ void grid_sync_in_plain_launch(int* out) {
    out[threadIdx.x] = 1;
    cg::this_grid().sync();
    out[threadIdx.x] = 2;
}

void launch_grid_sync_without_cooperative_launch(int* out) { grid_sync_in_plain_launch<<<2, 32>>>(out); }
int grid_sync_without_cooperative_launch_line() { return kGridSyncWithoutCooperativeLaunchLine; }

constexpr int kGridSyncSkippedLine = __LINE__ + 4;
__global__ void grid_sync_skipped_by_block_zero(int* out) {
    if (blockIdx.x == 0) return;  // the planted mistake
    out[blockIdx.x * blockDim.x + threadIdx.x] = 1;
    cg::this_grid().sync();
    out[blockIdx.x * blockDim.x + threadIdx.x] = 2;
}

cudaError_t launch_grid_sync_skipped_by_block_zero(int* out, unsigned blocks) {
    void* args[] = {&out};
    return cudaLaunchCooperativeKernel(grid_sync_skipped_by_block_zero, blocks, 32, args);
}
int grid_sync_skipped_line() { return kGridSyncSkippedLine; }

__global__ void grid_is_valid(int* out, int slot) {
    if (threadIdx.x == 0 && blockIdx.x == 0) out[slot] = cg::this_grid().is_valid() ? 1 : 0;
}

void launch_grid_is_valid(int* out) {
    grid_is_valid<<<2, 32>>>(out, 0);
    int slot = 1;
    void* args[] = {&out, &slot};
    (void)cudaLaunchCooperativeKernel(grid_is_valid, 2, 32, args);
}

constexpr int kTileSyncSkippedLine = __LINE__ + 4;
__global__ void tile_sync_skipped_by_one_lane(int* out) {
    const cg::thread_block_tile<8> tile = cg::tiled_partition<8>(cg::this_thread_block());
    out[threadIdx.x] = 1;
    if (tile.thread_rank() != 3) tile.sync();  // the planted mistake: rank 3 never arrives
    out[threadIdx.x] = 2;
}

void launch_tile_sync_skipped_by_one_lane(int* out) { tile_sync_skipped_by_one_lane<<<1, 32>>>(out); }
int tile_sync_skipped_line() { return kTileSyncSkippedLine; }

__global__ void block_stuck_before_grid_sync(const int* never_set, int* out) {
    if (blockIdx.x == 1) {
        while (*static_cast<const volatile int*>(never_set) == 0) {
        }
    }
    cg::this_grid().sync();
    out[blockIdx.x] = 1;
}

cudaError_t launch_block_stuck_before_grid_sync(const int* never_set, int* out, unsigned blocks) {
    void* args[] = {&never_set, &out};
    return cudaLaunchCooperativeKernel(block_stuck_before_grid_sync, blocks, 32, args);
}

}  // namespace emu_cooperative_test
