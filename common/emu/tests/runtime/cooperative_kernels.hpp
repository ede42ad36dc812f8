// Host wrappers for the cooperative-groups tests (kernels in cooperative_kernels.cu).
#pragma once

#include <cuda_runtime.h>

namespace emu_cooperative_test {

/// out[t] = sum over tile t of in (tiles of `tile` threads, 1 to 32), one
/// cg::reduce per tile; meta[t] = meta_group_size * 1000 + meta_group_rank
/// as its rank-0 thread sees them. n = blocks * threads.
void launch_tile_sums(const int* in, int* out, int* meta, unsigned tile, unsigned blocks, unsigned threads);

/// Tiles of 8 in one block of `threads`: per thread, out[5*t ...] = shfl(v, 2), shfl_down(v, 1),
/// shfl_up(v, 1), ballot(v odd), match_any(v / 2) where v = in[t].
void launch_tile_collectives(const int* in, int* out, unsigned threads);

/// One block; the threads with threadIdx.x % 3 == 0 take a branch and call
/// coalesced_threads(): out[t] = size * 100 + thread_rank there, -1 for the others.
/// sums[t] = cg::reduce(group, t, plus) for those threads.
void launch_coalesced_branch(int* out, int* sums, unsigned threads);

/// Counts labels[i] (below num_labels) into counts with one atomicAdd per
/// group of lanes holding the same label (coalesced_threads + labeled_partition).
void launch_aggregated_count(const int* labels, int n, int* counts, unsigned blocks, unsigned threads);

/// The sum of in[0..n) into *out with one cooperative kernel: per-block partial
/// sums, grid.sync(), block 0 adds them. Returns cudaLaunchCooperativeKernel's result.
cudaError_t launch_grid_sum(const int* in, int n, int* partials, int* out, unsigned blocks, unsigned threads);

/// Each block writes its index into slots[block], then (unless skip_sync)
/// grid.sync(), then reads its right neighbour's slot into seen[block].
cudaError_t launch_neighbour_exchange(int* slots, int* seen, unsigned blocks, bool skip_sync);

/// grid.sync() in a kernel launched with <<<>>>: a fault.
void launch_grid_sync_without_cooperative_launch(int* out);

/// Block 0 returns before a grid.sync() the other blocks wait at: a deadlock.
cudaError_t launch_grid_sync_skipped_by_block_zero(int* out, unsigned blocks);

/// is_valid() of this_grid(): out[0] from a <<<>>> launch, out[1] from a cooperative one.
void launch_grid_is_valid(int* out);

/// Lane 3 of each tile of 8 skips tile.sync(): the others wait for it.
void launch_tile_sync_skipped_by_one_lane(int* out);

/// Block 1 spins forever on a flag nobody sets while the other blocks wait at grid.sync().
cudaError_t launch_block_stuck_before_grid_sync(const int* never_set, int* out, unsigned blocks);

/// The lines of the planted calls, for the tests to find in the reports.
int grid_sync_without_cooperative_launch_line();
int grid_sync_skipped_line();
int tile_sync_skipped_line();

/// The address of a kernel, for cudaOccupancyMaxActiveBlocksPerMultiprocessor.
const void* grid_sum_kernel_address();

}  // namespace emu_cooperative_test
