// Kernels with planted mistakes that only some schedules expose, written as
// a student would write them (this file also compiles with nvcc).
#include "planted_kernels.hpp"

namespace emu_planted_test {

__device__ unsigned long long pack(float value, int index) {
    return (static_cast<unsigned long long>(__float_as_uint(value)) << 32) | static_cast<unsigned>(index);
}

__device__ float unpack_value(unsigned long long packed) { return __uint_as_float(static_cast<unsigned>(packed >> 32)); }

__global__ void tie_blind_argmin(const float* values, int n, unsigned long long* best) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const unsigned long long mine = pack(values[i], i);
        unsigned long long old = *best;
        // The mistake: equal values never replace, so the first to arrive wins.
        while (old == ~0ull || values[i] < unpack_value(old)) {
            const unsigned long long assumed = old;
            old = atomicCAS(best, assumed, mine);
            if (old == assumed) break;
        }
    }
}

void launch_tie_blind_argmin(const float* values, int n, unsigned long long* best) {
    tie_blind_argmin<<<4, 64>>>(values, n, best);
}

__global__ void cas_counter(unsigned* counter) {
    unsigned old = *counter;
    unsigned assumed;
    do {
        assumed = old;
        old = atomicCAS(counter, assumed, assumed + 1);
    } while (old != assumed);
}

void launch_cas_counter(unsigned threads, unsigned* counter) { cas_counter<<<1, threads>>>(counter); }

__global__ void read_shared_before_write(int* out) {
    __shared__ int flag;
    extern __shared__ int dynamic[];
    if (threadIdx.x == 0) {
        out[2 * blockIdx.x] = flag;
        out[2 * blockIdx.x + 1] = dynamic[0];
    }
    __syncthreads();
    flag = 7;
    dynamic[0] = 7;
}

void launch_read_shared_before_write(int* out, unsigned blocks) {
    read_shared_before_write<<<blocks, 32, sizeof(int)>>>(out);
}

__global__ void too_much_static_shared(float* out) {
    __shared__ float first[8192];
    __shared__ float second[8192];
    first[threadIdx.x] = 1.0f;
    second[threadIdx.x] = 2.0f;
    out[threadIdx.x] = first[threadIdx.x] + second[threadIdx.x];
}

void launch_too_much_static_shared(float* out) { too_much_static_shared<<<1, 32>>>(out); }

// The histogram mistake of a privatised kernel written as in Tim's
// five-kernels article (docs/sources.md): one shared bin per thread, but the
// launch gives room for `bins` only.
__global__ void shared_bins_by_thread(unsigned* out) {
    extern __shared__ unsigned block_bins[];
    block_bins[threadIdx.x] = 0;  // past the end for threadIdx.x >= bins
    __syncthreads();
    out[threadIdx.x] = block_bins[threadIdx.x];
}

void launch_shared_bins_by_thread(unsigned bins, unsigned threads, unsigned* out) {
    shared_bins_by_thread<<<1, threads, bins * sizeof(unsigned)>>>(out);
}

}  // namespace emu_planted_test
