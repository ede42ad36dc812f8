// Kernels for spin_test.cpp. Line numbers matter: spin_kernels.hpp names the
// lines of the spins that must be reported (kChainByBlockIndexSpinLine ...):
// keep them where they are.
#include "spin_kernels.hpp"

#include <cuda/atomic>
#include <cuda/std/atomic>

namespace {

using device_int = cuda::atomic_ref<int, cuda::thread_scope_device>;

__global__ void chain_by_ticket(int* flags, int* values, unsigned* counter) {
    __shared__ unsigned place;
    if (threadIdx.x == 0) place = atomicAdd(counter, 1u);
    __syncthreads();
    if (threadIdx.x == 0) {
        int before = 0;
        if (place > 0) {
            device_int flag(flags[place - 1]);
            while (flag.load(cuda::memory_order_acquire) == 0) {
            }
            before = values[place - 1];
        }
        values[place] = before + 1;
        device_int(flags[place]).store(1, cuda::memory_order_release);
    }
}

__global__ void chain_by_block_index(int* flags, int* values) {
    const unsigned place = blockIdx.x;
    if (threadIdx.x == 0) {
        int before = 0;
        if (place > 0) {
            device_int flag(flags[place - 1]);
            for (;;) {
                // (blank lines keep the spin on the line the header names)
                //
                //
                //
                //
                //
                //
                //
                //
                //
                //
                if (flag.load(cuda::memory_order_acquire) != 0) break;  // line 48
            }
            before = values[place - 1];
        }
        values[place] = before + 1;
        device_int(flags[place]).store(1, cuda::memory_order_release);
    }
}

__global__ void lonely_spin(int* flag) {
    if (threadIdx.x == 0) {
        //
        while (atomicAdd(flag, 0) == 0) {  // line 60
        }
    }
    __syncthreads();
}

__global__ void flag_within_block(int* flag, int* value, int* out) {
    if (threadIdx.x == blockDim.x - 1) {
        *value = 42;
        __threadfence();
        atomicExch(flag, 1);
        out[threadIdx.x] = 42;
    } else {
        while (atomicCAS(flag, 1, 1) != 1) {
        }
        out[threadIdx.x] = *value;
    }
}

__global__ void atomic_ref_operations(int* cell) {
    auto* counter = reinterpret_cast<cuda::std::atomic<int>*>(&cell[0]);
    counter->fetch_add(5, cuda::std::memory_order_relaxed);
    cuda::atomic_ref<int, cuda::thread_scope_block> second(cell[1]);
    int expected = 0;
    second.compare_exchange_strong(expected, 7);
    expected = 0;
    second.compare_exchange_strong(expected, 8);  // fails: expected becomes 7
    cuda::atomic_ref<int, cuda::thread_scope_system> third(cell[2]);
    cell[3] = third.exchange(9) + 100 * expected;
    __threadfence_block();
    __threadfence_system();
    cuda::atomic_thread_fence(cuda::memory_order_seq_cst, cuda::thread_scope_device);
}

}  // namespace

namespace emu_spin_test {

void launch_chain_by_ticket(unsigned blocks, int* flags, int* values, unsigned* counter) {
    chain_by_ticket<<<blocks, 64>>>(flags, values, counter);
}

void launch_chain_by_block_index(unsigned blocks, int* flags, int* values) {
    chain_by_block_index<<<blocks, 64>>>(flags, values);
}

void launch_lonely_spin(int* flag) { lonely_spin<<<1, 128>>>(flag); }

void launch_flag_within_block(unsigned threads, int* flag, int* value, int* out) {
    flag_within_block<<<1, threads>>>(flag, value, out);
}

void launch_atomic_ref_operations(int* cell) { atomic_ref_operations<<<1, 1>>>(cell); }

}  // namespace emu_spin_test
