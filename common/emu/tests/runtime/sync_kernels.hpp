// Host wrappers for the emulator's tests of barriers, warp collectives and
// the faults they can raise. Kernels in sync_kernels.cu.
#pragma once

#include <cuda_runtime.h>

namespace emu_sync_test {

/// Sums `n` ints with a shared-memory tree per block (blocks of `threads`, a power of two)
/// and one partial per block in partials[blockIdx.x]. `skip_barrier` plants the classic bug:
/// no __syncthreads() between the tree's steps.
void launch_block_sum(const int* in, int n, int* partials, unsigned blocks, unsigned threads, bool skip_barrier);

/// out[0..2] = __syncthreads_count / _and / _or of (threadIdx.x % divisor == 0), from thread 0.
void launch_barrier_predicates(int* out, unsigned threads, unsigned divisor);

/// Each lane of a 64-thread block writes the four shuffles of its value (lane * 10 + 1.5 as T)
/// with the given width and offset: out[4 * t + {0,1,2,3}] = shfl, up, down, xor.
void launch_shuffles_float(float* out, int offset, int width);
void launch_shuffles_double(double* out, int offset, int width);
void launch_shuffles_ll(long long* out, int offset, int width);

/// Per thread of a 64-thread block: out[3 * t + {0,1,2}] = ballot, any, all of
/// (threadIdx.x % divisor == 0) over the full mask, and activemask in active[t].
void launch_votes(unsigned* out, unsigned* active, unsigned divisor);

/// Warp-level sum of `in` (n <= threads) with __shfl_down_sync, lane 0 of each warp
/// adding into out[warp]: one block of `threads` threads, all lanes active.
void launch_warp_sums(const int* in, int* out, unsigned threads);

/// Planted mistakes, each in a one-block launch; each returns the source line of the mistake.
int launch_divergent_barriers();      // even threads at one __syncthreads(), odd threads at another
int launch_exit_before_barrier();     // threads >= 16 return before the __syncthreads()
int launch_mask_excludes_caller();    // lane 3 calls __shfl_sync with a mask without lane 3
int launch_full_mask_partial_warp();  // a 48-thread block: warp 1 uses 0xffffffff
int launch_barrier_vs_shuffle();      // half the warp at a shuffle, the other half at a barrier
int launch_spin_forever(int* flag);   // spins on a flag no thread sets
void launch_spin_on_lock(int* lock);  // takes a spin lock with atomicCAS; *lock == 1 means nobody ever releases it

/// Two blocks of 1024 threads each keep a local array alive across three barriers
/// (many fibers at once): out[global id] = 64 * threadIdx.x + 2080.
void launch_many_waiting_threads(int* out);

}  // namespace emu_sync_test
