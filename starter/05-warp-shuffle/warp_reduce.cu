// Lesson 05: a warp-shuffle reduction of doubles, and atomicAdd for double
// built from atomicCAS.
//
// Goal: make `./course grade 05` pass. Read lessons/05-warp-shuffle/README.md
// first; the functions are documented in warp_reduce.hpp. The grid-stride
// loop, the launchers and the hardware-atomic yardstick are written. Yours:
// the CAS loop, the warp sum (with the right mask for a partial warp), the
// block's last steps, and the launch shape.
// Stuck? `./course hint 05` shows the hints one by one.
#include <warp_reduce.hpp>

#include <course/cuda_check.hpp>

#include <algorithm>
#include <cuda_runtime.h>

namespace lesson05 {

namespace {

constexpr unsigned kThreadsPerBlock = 256;
constexpr unsigned kWarpSize = 32;
constexpr unsigned kFullWarp = 0xffffffffu;

// atomicAdd for double, from a 64-bit atomicCAS on the double's bit pattern.
// Returns the value *address held before our addition, like atomicAdd.
__device__ double atomic_add_cas(double* address, double val) {
    // TODO: the old/assumed loop. View the address as unsigned long long,
    // read the current pattern, then repeat: assume it, compute
    // assumed-as-double + val, atomicCAS the new pattern in; stop when the
    // CAS returned what you assumed. __double_as_longlong and
    // __longlong_as_double convert between a double and its bits.
    (void)address;
    (void)val;
    return 0.0;
}

// How many lanes the warp of thread `first_thread` has: 32, except for the
// last warp of a block whose size is not a multiple of 32.
__device__ unsigned lanes_of_warp_at(unsigned first_thread) { return min(kWarpSize, blockDim.x - first_thread); }

// The mask naming lanes 0 .. lanes-1.
__device__ unsigned mask_of_lanes(unsigned lanes) {
    // TODO: kFullWarp is right only when all 32 lanes exist.
    (void)lanes;
    return kFullWarp;
}

// Sum over the first `lanes` lanes of the warp; lane 0 must get the total.
__device__ double warp_sum(double v, unsigned lanes) {
    const unsigned mask = mask_of_lanes(lanes);
    // TODO: five __shfl_down_sync(mask, v, offset) steps, offsets 16, 8, 4,
    // 2, 1, each adding what lane (this lane + offset) holds. In a partial
    // warp, do not add what a lane that does not exist "sent".
    (void)mask;
    return v;
}

// This thread's grid-stride share of the sum. Four loads are issued before
// they are added, so each thread keeps several memory requests in flight.
__device__ double thread_sum(int n, const double* values) {
    const size_t count = static_cast<size_t>(n);
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    double sum = 0.0;
    for (; i + 3 * stride < count; i += 4 * stride) {
        double v[4];
        for (int k = 0; k < 4; ++k) v[k] = values[i + k * stride];
        sum += (v[0] + v[1]) + (v[2] + v[3]);
    }
    for (; i < count; i += stride) sum += values[i];
    return sum;
}

// Any block size up to 1024 must launch; at most 32 registers per thread
// keep eight blocks of 256 resident on an SM.
__global__ void __launch_bounds__(1024, 2) sum_kernel(int n, const double* values, double* result) {
    const unsigned lane = threadIdx.x % kWarpSize;
    const unsigned warp = threadIdx.x / kWarpSize;

    const double mine = warp_sum(thread_sum(n, values), lanes_of_warp_at(warp * kWarpSize));
    // TODO: declare a __shared__ array with a slot for each warp (at most
    // 1024 / 32), and let lane 0 of each warp store the warp's sum in it.
    // Then make the stores visible to the whole block before anyone reads
    // them. Then warp 0 reduces the stored sums (0.0 for lanes past the last
    // warp; how many lanes does warp 0 have in a block of 20 threads?) and
    // its lane 0 adds the block's total to *result with one atomicAdd.
    (void)lane;
    (void)mine;
    (void)result;
}

struct CasAdd {
    __device__ void operator()(double* address, double val) const { atomic_add_cas(address, val); }
};

struct NativeAdd {
    __device__ void operator()(double* address, double val) const { atomicAdd(address, val); }
};

// Every element straight into *result, one atomic each: maximal contention,
// which is what a compare-and-swap loop has to survive.
template <class Add>
__global__ void add_each_kernel(int n, const double* values, double* result, Add add) {
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    for (size_t e = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < static_cast<size_t>(n);
         e += stride) {
        add(result, values[e]);
    }
}

// All-zero bytes are +0.0, the sum of nothing.
void zero_result(double* result) { COURSE_CUDA_CHECK(cudaMemsetAsync(result, 0, sizeof(double))); }

}  // namespace

course::LaunchShape sum_launch_shape(int n) {
    // TODO: a few blocks of kThreadsPerBlock per SM (cudaDeviceGetAttribute
    // with cudaDevAttrMultiProcessorCount), never more blocks than
    // ceil(n / kThreadsPerBlock), never fewer than 1.
    (void)n;
    return {1, kThreadsPerBlock};
}

void launch_sum(course::LaunchShape shape, int n, const double* values, double* result) {
    zero_result(result);
    sum_kernel<<<shape.blocks, shape.threads_per_block>>>(n, values, result);
    COURSE_CUDA_CHECK(cudaGetLastError());
}

void launch_cas_atomic_add_each(course::LaunchShape shape, int n, const double* values, double* result) {
    zero_result(result);
    add_each_kernel<<<shape.blocks, shape.threads_per_block>>>(n, values, result, CasAdd{});
    COURSE_CUDA_CHECK(cudaGetLastError());
}

void launch_native_atomic_add_each(course::LaunchShape shape, int n, const double* values, double* result) {
    zero_result(result);
    add_each_kernel<<<shape.blocks, shape.threads_per_block>>>(n, values, result, NativeAdd{});
    COURSE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace lesson05
