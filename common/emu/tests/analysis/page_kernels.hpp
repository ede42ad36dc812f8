// Kernels with planted mistakes for the tests of ./course show's page
// (page_test.cpp); each takes device pointers and launches.
#pragma once

namespace page_kernels {

/// out[i * 32] = in[i]: a warp's stores 128 bytes apart, one sector each (256 threads per block).
void scattered_store(const float* in, float* out, int n);
/// Two threads write each out[i / 2] with no barrier between them (64 threads, one block).
void pairs_write_one(int* out, int n);
/// out[i] = i for every i but the last (a loop bound one short), one block of n threads.
void all_but_last(int* out, int n);
/// Even threads wait at one __syncthreads(), odd threads at another (one block of 64): a fault
/// before any thread writes `out`.
void divergent_barrier(int* out);
/// The line of divergent_barrier's first __syncthreads().
int divergent_barrier_line();
/// bins[k] = how many of the 32 keys[i] % 32 are k, through atomics on 32 counts in shared memory
/// (one block of 32 threads: one warp request of atomics).
void shared_histogram(const int* keys, int* bins);
/// The line of shared_histogram's atomicAdd.
int shared_histogram_line();

}  // namespace page_kernels
