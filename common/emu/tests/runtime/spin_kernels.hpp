// Host wrappers for the spin-wait and memory-model kernels (spin_kernels.cu):
// blocks that wait for each other's flags, as a decoupled look-back does.
#pragma once

namespace emu_spin_test {

/// A chain of `blocks` blocks of 64 threads: each takes its place in the chain from
/// an atomic counter (`*counter` must start at 0), waits (thread 0, spinning on a
/// cuda::atomic_ref acquire load) until its predecessor's flag is set, adds 1 to the
/// predecessor's value and publishes it with a release store. `values[i]` ends as i + 1.
/// `flags` and `values` must start at 0.
void launch_chain_by_ticket(unsigned blocks, int* flags, int* values, unsigned* counter);

/// The same chain with the place taken from blockIdx.x: a block may wait for one
/// that has not started. The spin is on line kChainByBlockIndexSpinLine of spin_kernels.cu.
void launch_chain_by_block_index(unsigned blocks, int* flags, int* values);
inline constexpr int kChainByBlockIndexSpinLine = 48;

/// One block: thread 0 spins with atomicAdd(flag, 0) on a flag no thread sets, while the
/// others wait at a barrier. The spin is on line kLonelySpinLine of spin_kernels.cu.
void launch_lonely_spin(int* flag);
inline constexpr int kLonelySpinLine = 60;

/// One block of `threads` threads: the last thread publishes 42 into `*value` and then
/// sets `*flag` with atomicExch after a __threadfence(); every other thread spins with
/// a failed atomicCAS until the flag is set, then copies `*value` into out[threadIdx.x].
void launch_flag_within_block(unsigned threads, int* flag, int* value, int* out);

/// cuda::std::atomic and cuda::atomic_ref operations on `cell[0..3]`: fetch_add(5) on
/// cell[0], compare_exchange_strong(0 -> 7) on cell[1] (twice: the second fails),
/// exchange(9) on cell[2] returning the old value into cell[3]. One thread.
void launch_atomic_ref_operations(int* cell);

}  // namespace emu_spin_test
