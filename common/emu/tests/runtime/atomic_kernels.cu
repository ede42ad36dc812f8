// Kernels for the emulator's atomics tests, written as a student would write them.
#include "atomic_kernels.hpp"

namespace emu_atomic_test {

// The read-modify-write functions CUDA provides for each type; the others trap,
// so a test that asks for a missing combination fails loudly.
__device__ int apply(Op op, int* a, int v) {
    switch (op) {
        case Op::add: return atomicAdd(a, v);
        case Op::sub: return atomicSub(a, v);
        case Op::exch: return atomicExch(a, v);
        case Op::min: return atomicMin(a, v);
        case Op::max: return atomicMax(a, v);
        case Op::and_: return atomicAnd(a, v);
        case Op::or_: return atomicOr(a, v);
        case Op::xor_: return atomicXor(a, v);
        default: __trap();
    }
    return 0;
}

__device__ unsigned int apply(Op op, unsigned int* a, unsigned int v) {
    switch (op) {
        case Op::add: return atomicAdd(a, v);
        case Op::sub: return atomicSub(a, v);
        case Op::exch: return atomicExch(a, v);
        case Op::min: return atomicMin(a, v);
        case Op::max: return atomicMax(a, v);
        case Op::inc: return atomicInc(a, v);
        case Op::dec: return atomicDec(a, v);
        case Op::and_: return atomicAnd(a, v);
        case Op::or_: return atomicOr(a, v);
        case Op::xor_: return atomicXor(a, v);
        default: __trap();
    }
    return 0;
}

__device__ long long apply(Op op, long long* a, long long v) {
    switch (op) {
        case Op::min: return atomicMin(a, v);
        case Op::max: return atomicMax(a, v);
        default: __trap();
    }
    return 0;
}

__device__ unsigned long long apply(Op op, unsigned long long* a, unsigned long long v) {
    switch (op) {
        case Op::add: return atomicAdd(a, v);
        case Op::exch: return atomicExch(a, v);
        case Op::min: return atomicMin(a, v);
        case Op::max: return atomicMax(a, v);
        case Op::and_: return atomicAnd(a, v);
        case Op::or_: return atomicOr(a, v);
        case Op::xor_: return atomicXor(a, v);
        default: __trap();
    }
    return 0;
}

__device__ float apply(Op op, float* a, float v) {
    switch (op) {
        case Op::add: return atomicAdd(a, v);
        case Op::exch: return atomicExch(a, v);
        default: __trap();
    }
    return 0.0f;
}

__device__ double apply(Op op, double* a, double v) {
    switch (op) {
        case Op::add: return atomicAdd(a, v);
        default: __trap();
    }
    return 0.0;
}

template <typename T>
__global__ void apply_once(Op op, T* address, T value, T* old) {
    *old = apply(op, address, value);
}

void launch_apply(Op op, int* address, int value, int* old) {
    apply_once<<<1, 1>>>(op, address, value, old);
}
void launch_apply(Op op, unsigned int* address, unsigned int value, unsigned int* old) {
    apply_once<<<1, 1>>>(op, address, value, old);
}
void launch_apply(Op op, long long* address, long long value, long long* old) {
    apply_once<<<1, 1>>>(op, address, value, old);
}
void launch_apply(Op op, unsigned long long* address, unsigned long long value, unsigned long long* old) {
    apply_once<<<1, 1>>>(op, address, value, old);
}
void launch_apply(Op op, float* address, float value, float* old) {
    apply_once<<<1, 1>>>(op, address, value, old);
}
void launch_apply(Op op, double* address, double value, double* old) {
    apply_once<<<1, 1>>>(op, address, value, old);
}

template <typename T>
__global__ void cas_once(T* address, T compare, T value, T* old) {
    *old = atomicCAS(address, compare, value);
}

void launch_cas(unsigned short* address, unsigned short compare, unsigned short value, unsigned short* old) {
    cas_once<<<1, 1>>>(address, compare, value, old);
}
void launch_cas(int* address, int compare, int value, int* old) {
    cas_once<<<1, 1>>>(address, compare, value, old);
}
void launch_cas(unsigned int* address, unsigned int compare, unsigned int value, unsigned int* old) {
    cas_once<<<1, 1>>>(address, compare, value, old);
}
void launch_cas(unsigned long long* address, unsigned long long compare, unsigned long long value,
                unsigned long long* old) {
    cas_once<<<1, 1>>>(address, compare, value, old);
}

__global__ void contended(Contended out) {
    const unsigned id = blockIdx.x * blockDim.x + threadIdx.x;
    atomicAdd(out.int_sum, 1);
    atomicAdd(out.ull_sum, static_cast<unsigned long long>(id));
    atomicAdd(out.float_sum, 1.0f);
    atomicAdd(out.double_sum, 1.0);
    out.tickets[id] = atomicAdd(out.ticket_counter, 1u);
    atomicMin(out.min_id, static_cast<int>(id) + 1);
    atomicMax(out.max_id, static_cast<int>(id));
    atomicInc(out.ring, out.ring_limit);
    atomicDec(out.down_ring, out.ring_limit);
    atomicXor(out.xor_all, id * 2654435761u);  // a hash, so the xor of all is not 0
    atomicOr(out.or_bits, 1ull << (id % 64));
}

void launch_contended(unsigned blocks, unsigned threads, Contended out) {
    contended<<<blocks, threads>>>(out);
}

// The way to add doubles atomically before GPUs had atomicAdd(double*): retry
// until no other thread changed the value between our read and our swap.
__device__ double cas_add(double* address, double val) {
    unsigned long long int* address_as_ull = reinterpret_cast<unsigned long long int*>(address);
    unsigned long long int old = *address_as_ull;
    unsigned long long int assumed;
    do {
        assumed = old;
        old = atomicCAS(address_as_ull, assumed, __double_as_longlong(val + __longlong_as_double(assumed)));
    } while (assumed != old);
    return __longlong_as_double(old);
}

__global__ void cas_loop_double_add(double* sum, const double* values, int n) {
    const unsigned id = blockIdx.x * blockDim.x + threadIdx.x;
    cas_add(sum, values[id % n]);
}

void launch_cas_loop_double_add(unsigned blocks, unsigned threads, double* sum, const double* values, int n) {
    cas_loop_double_add<<<blocks, threads>>>(sum, values, n);
}

// Non-negative floats order like their bit patterns, so (value, index) packed
// into one 64-bit word orders by value first and index second: one atomicCAS
// keeps a value and its index together.
__global__ void cas_loop_argmin(const float* values, int n, unsigned long long* best) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const unsigned long long mine =
            (static_cast<unsigned long long>(__float_as_uint(values[i])) << 32) | static_cast<unsigned>(i);
        unsigned long long seen = *best;
        while (mine < seen) {
            const unsigned long long previous = atomicCAS(best, seen, mine);
            if (previous == seen) break;
            seen = previous;
        }
    }
}

void launch_cas_loop_argmin(unsigned blocks, unsigned threads, const float* values, int n,
                            unsigned long long* best) {
    cas_loop_argmin<<<blocks, threads>>>(values, n, best);
}

__global__ void one_add_each(int* counter) {
    atomicAdd(counter, 1);
}

void launch_one_add_each(unsigned blocks, unsigned threads, int* counter) {
    one_add_each<<<blocks, threads>>>(counter);
}

__global__ void no_atomics(int* out) {
    out[threadIdx.x] = static_cast<int>(threadIdx.x);
}

void launch_no_atomics(unsigned threads, int* out) {
    no_atomics<<<1, threads>>>(out);
}

__global__ void misaligned_add(char* base, int byte_offset) {
    atomicAdd(reinterpret_cast<int*>(base + byte_offset), 1);
}

void launch_misaligned_add(char* base, int byte_offset) {
    misaligned_add<<<1, 1>>>(base, byte_offset);
}

}  // namespace emu_atomic_test
