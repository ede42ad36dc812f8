// Host wrappers around the kernels the emulator's atomics tests launch. The
// kernels live in atomic_kernels.cu, which goes through the translator like a
// student's file (and compiles with nvcc, so they are valid CUDA).
#pragma once

#include <cuda_runtime.h>

namespace emu_atomic_test {

/// The read-modify-write atomics, for the single-thread semantic tests.
enum class Op { add, sub, exch, min, max, inc, dec, and_, or_, xor_ };

/// One thread applies `op` to `*address` with operand `value` and stores the
/// function's result (the old value) in `*old`. Only the combinations of op
/// and type that CUDA provides may be asked for; others trap.
void launch_apply(Op op, int* address, int value, int* old);
void launch_apply(Op op, unsigned int* address, unsigned int value, unsigned int* old);
void launch_apply(Op op, long long* address, long long value, long long* old);
void launch_apply(Op op, unsigned long long* address, unsigned long long value, unsigned long long* old);
void launch_apply(Op op, float* address, float value, float* old);
void launch_apply(Op op, double* address, double value, double* old);

/// One thread calls atomicCAS(address, compare, value) and stores its result in `*old`.
void launch_cas(unsigned short* address, unsigned short compare, unsigned short value, unsigned short* old);
void launch_cas(int* address, int compare, int value, int* old);
void launch_cas(unsigned int* address, unsigned int compare, unsigned int value, unsigned int* old);
void launch_cas(unsigned long long* address, unsigned long long compare, unsigned long long value,
                unsigned long long* old);

/// Where the threads of launch_contended() leave their results.
struct Contended {
    int* int_sum;                  ///< += 1 per thread (atomicAdd int)
    unsigned long long* ull_sum;   ///< += flat id (atomicAdd unsigned long long)
    float* float_sum;              ///< += 1.0f per thread (atomicAdd float)
    double* double_sum;            ///< += 1.0 per thread (atomicAdd double)
    unsigned int* tickets;         ///< tickets[flat id] = old value of an atomicAdd(ticket_counter, 1)
    unsigned int* ticket_counter;  ///< starts at 0
    int* min_id;                   ///< atomicMin of (flat id + 1)
    int* max_id;                   ///< atomicMax of flat id
    unsigned int* ring;            ///< atomicInc(ring, ring_limit) per thread
    unsigned int* down_ring;       ///< atomicDec(down_ring, ring_limit) per thread
    unsigned int ring_limit;
    unsigned int* xor_all;         ///< atomicXor of flat id * 2654435761u
    unsigned long long* or_bits;   ///< atomicOr of 1 << (flat id % 64)
};

/// `blocks` x `threads` threads, each performing every atomic in `out` once.
void launch_contended(unsigned blocks, unsigned threads, Contended out);

/// Each of `blocks` x `threads` threads adds values[flat id % n] to `*sum`
/// with the classic atomicCAS loop on the double's 64-bit pattern.
void launch_cas_loop_double_add(unsigned blocks, unsigned threads, double* sum, const double* values, int n);

/// Argmin of `values[0, n)` by a grid-stride loop in which each thread offers
/// (value, index) packed into 64 bits (non-negative float bits high, index low)
/// to `*best` with an atomicCAS loop. `*best` must start at ~0ull; the result
/// is the smallest value with the smallest index among its ties.
void launch_cas_loop_argmin(unsigned blocks, unsigned threads, const float* values, int n,
                            unsigned long long* best);

/// Each of `blocks` x `threads` threads does one atomicAdd(counter, 1).
void launch_one_add_each(unsigned blocks, unsigned threads, int* counter);

/// Each thread of one block writes `out[threadIdx.x] = threadIdx.x` and uses no atomics.
void launch_no_atomics(unsigned threads, int* out);

/// One thread calls atomicAdd on `base + byte_offset` reinterpreted as an int*.
void launch_misaligned_add(char* base, int byte_offset);

}  // namespace emu_atomic_test
