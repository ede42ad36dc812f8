// Kernels with planted races, bank conflicts and uncoalesced accesses for
// the analysis mode's tests; each takes device pointers and launches.
#pragma once

#include <cuda_fp16.h>
#include <mma.h>  // for analysis_kernels.cu, whose line numbers the tests name

#include <cooperative_groups.h>
#include <cuda_runtime.h>

namespace analysis_kernels {

/// 32 x 32 threads per block, one element each, through a 32 x 32 (or 32 x 33) tile.
void transpose_through_tile(const float* in, float* out, int n, bool padded);
/// out[i] = in[i * stride], 256 threads per block.
void strided_copy(const float* in, float* out, int n, int stride);
/// out[i] = in[i] as float4, 256 threads per block.
void copy_float4(const float* in, float* out, int n4);
/// Thread 0 writes a shared value the others read, with or without the barrier between.
void broadcast_through_shared(int* out, int n, bool with_barrier);
/// Reads shared memory no thread wrote.
void read_unwritten_shared(float* out, int n);
/// Every thread writes out[0] plainly (a race), or adds to it atomically (none).
void all_write_one(int* out, int n, bool atomically);
/// Odd lanes copy, even lanes do not.
void odd_lanes_copy(const float* in, float* out, int n);
/// 128 threads per block; odd threads (by_warp false) or the threads of odd warps (true) take an `if`.
void branch_by_lane_or_warp(float* out, int n, bool by_warp);
/// data[i] += 1 by a grid-stride loop, 128 threads per block.
void grid_stride_add(float* data, int n, int blocks);

/// One warp per block: a and b (16 x 16 halves) through shared tiles into a
/// wmma product, stored to a shared float tile that the lanes then copy to out
/// (2 blocks: out holds 512 floats).
void wmma_through_shared(const __half* a, const __half* b, float* out);
/// The line of wmma_through_shared's first load_matrix_sync.
int wmma_through_shared_first_call_line();

/// Cooperative launch of `blocks` blocks of 32 threads: thread 0 of each block
/// writes slots[block], then (unless skip_sync) grid.sync(), then reads its
/// right neighbour's slot into seen[block]. Returns the launch's status.
cudaError_t neighbour_exchange(int* slots, int* seen, unsigned blocks, bool skip_sync);
/// The lines of neighbour_exchange's write and read.
int neighbour_exchange_write_line();
int neighbour_exchange_read_line();

/// `blocks` blocks of 32 threads: each thread writes its slot (slots has
/// 32 `blocks` ints), then (when fenced) __threadfence(); thread 0 of each
/// block takes a ticket (*ticket starts at 0), and thread 0 of the last block
/// to take one, after a __threadfence() of its own (when fenced), adds up
/// every slot into *total: lesson 11's last-block pattern.
void publish_then_ticket(int* slots, unsigned* ticket, int* total, unsigned blocks, bool fenced);
/// The lines of publish_then_ticket's write and read of the slots.
int publish_then_ticket_write_line();
int publish_then_ticket_read_line();

}  // namespace analysis_kernels
