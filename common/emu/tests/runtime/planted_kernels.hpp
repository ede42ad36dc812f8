// Host wrappers for kernels with planted mistakes that only some schedules
// expose, and for the shared-memory checks. Kernels in planted_kernels.cu.
#pragma once

namespace emu_planted_test {

/// Argmin that compares values only (the tie-breaking mistake): each thread offers
/// (value, index) packed into 64 bits (non-negative float bits high, index low) with
/// an atomicCAS loop that replaces the stored pair when value < stored value. With
/// several minima, which index wins depends on the order threads arrive.
/// `*best` must start at ~0ull.
void launch_tie_blind_argmin(const float* values, int n, unsigned long long* best);

/// One block of `threads` threads; each adds 1 to `*counter` with an atomicCAS loop.
void launch_cas_counter(unsigned threads, unsigned* counter);

/// Thread 0 of each block reads a static __shared__ int and a dynamic shared int before
/// anyone writes them (out[2*block], out[2*block+1]), then every thread writes them.
void launch_read_shared_before_write(int* out, unsigned blocks);

/// A kernel whose static __shared__ arrays total 64 KiB (more than CUDA's 48 KiB).
void launch_too_much_static_shared(float* out);

/// A kernel that writes dynamic shared memory at threadIdx.x with room for only
/// `bins` unsigned values: past the end when threads > bins.
void launch_shared_bins_by_thread(unsigned bins, unsigned threads, unsigned* out);

}  // namespace emu_planted_test
