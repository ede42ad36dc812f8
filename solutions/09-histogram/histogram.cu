// Lesson 09 reference solution: histograms by atomics, first on global
// memory, then privatised per block in shared memory.
//
// The privatised kernel works in three phases, separated by barriers:
// 1. the block zeroes its private bins in shared memory (shared memory holds
//    whatever the last block left there);
// 2. its threads count their grid-stride share of the keys into those bins
//    with shared-memory atomics: fast, and contended only within the block;
// 3. the block adds each nonzero private bin to the global bins with one
//    atomic: num_bins global atomics per block instead of one per key.
// The number of bins is a parameter, not the block size: every loop over the
// bins strides by blockDim.x, so 1 bin or 8192 work with any block.
#include <histogram.hpp>

#include <course/cuda_check.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <cuda_runtime.h>

#include <thrust/execution_policy.h>
#include <thrust/for_each.h>

namespace lesson09 {

namespace {

constexpr unsigned kThreadsPerBlock = 256;
constexpr unsigned kBlocksPerSm = 8;  // 8 x 256 threads fill an SM's 2048 thread slots: one wave
constexpr unsigned kByteBins = 256;
constexpr unsigned kDropped = 0xFFFFFFFFu;  // a bin number no histogram has: the value is not counted

// Maps a key to its bin: the key itself. Keys at or above num_bins are
// dropped by the kernel's `bin < num_bins` test.
struct KeyToBin {
    __host__ __device__ unsigned operator()(unsigned key) const { return key; }
};

// Maps a score to its bin: [0, 100] rounded to the nearest integer, halves
// away from zero. The test is written so that NaN fails it (every
// comparison with NaN is false), and so are infinities and -0.2 or 100.3,
// which roundf would pull into the range.
struct ScoreToBin {
    __host__ __device__ unsigned operator()(float score) const {
        if (!(score >= 0.0f && score <= 100.0f)) return kDropped;
        return static_cast<unsigned>(roundf(score));
    }
};

// The simple version: one global atomic per key. Correct, but every key of
// the same value goes to the same address in global memory, where the
// atomics are done one after another by the L2 cache.
__global__ void global_histogram_kernel(const unsigned* keys, std::size_t n, unsigned num_bins, unsigned* bins) {
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
        const unsigned bin = keys[i];
        if (bin < num_bins) atomicAdd(&bins[bin], 1u);
    }
}

// The privatised version, for any value type and any mapping to bins.
// `block_bins` is num_bins counters of dynamic shared memory.
template <class Value, class ToBin>
__global__ void shared_histogram_kernel(const Value* values, std::size_t n, unsigned num_bins, ToBin to_bin,
                                        unsigned* bins) {
    extern __shared__ unsigned block_bins[];

    // Phase 1: zero every private bin. There may be more bins than threads
    // (1000 bins, 256 threads) or fewer (7 bins, 128 threads): stride over
    // the bins by the block size, never assume one bin per thread.
    for (unsigned b = threadIdx.x; b < num_bins; b += blockDim.x) block_bins[b] = 0;
    // No thread may count into a bin before its zero is written.
    __syncthreads();

    // Phase 2: count. Two threads of the block may hit the same bin at the
    // same moment, so the increment must be atomic: a plain ++ reads, adds
    // and writes, and two threads that read the same old count both write
    // old + 1, losing one key.
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
        const unsigned bin = to_bin(values[i]);
        if (bin < num_bins) atomicAdd(&block_bins[bin], 1u);
    }
    // Every thread's counts must be in the bins before any bin is flushed.
    __syncthreads();

    // Phase 3: one global atomic per nonzero bin of this block.
    for (unsigned b = threadIdx.x; b < num_bins; b += blockDim.x) {
        const unsigned count = block_bins[b];
        if (count != 0) atomicAdd(&bins[b], count);
    }
}

// A run of equal bytes, kept in registers: a thread adds a run to the shared
// bins only when a different byte ends it. On all-equal input a thread then
// does one shared atomic for its whole share instead of one per byte, and
// the threads of a warp no longer queue on a single bin (the trick CUB's
// histogram calls run-length compression). A 16-byte vector whose bytes are
// not all equal skips the run bookkeeping: its bytes go straight to the
// shared bins, so uniform input pays one comparison per vector, not per byte.
struct ByteRun {
    unsigned* block_bins;
    unsigned value = 0;
    unsigned length = 0;

    __device__ void add(unsigned byte, unsigned count = 1) {
        if (byte == value) {
            length += count;
        } else {
            if (length != 0) atomicAdd(&block_bins[value], length);
            value = byte;
            length = count;
        }
    }
    __device__ void count_word(unsigned word) {
        atomicAdd(&block_bins[word & 0xFFu], 1u);
        atomicAdd(&block_bins[(word >> 8) & 0xFFu], 1u);
        atomicAdd(&block_bins[(word >> 16) & 0xFFu], 1u);
        atomicAdd(&block_bins[word >> 24], 1u);
    }
    __device__ void add_vector(const uint4& v) {
        const unsigned byte = v.x & 0xFFu;
        const unsigned splat = byte * 0x01010101u;  // the word whose four bytes are all `byte`
        if (v.x == splat && v.y == splat && v.z == splat && v.w == splat) {
            add(byte, 16);
        } else {
            count_word(v.x);
            count_word(v.y);
            count_word(v.z);
            count_word(v.w);
        }
    }
    __device__ void finish() {
        if (length != 0) atomicAdd(&block_bins[value], length);
        length = 0;
    }
};

// The fast 256-bin byte histogram: the same three phases, with the bytes
// read 16 at a time (one uint4 load) from a 16-byte-aligned body, and the
// few bytes before and after that body read one by one.
__global__ void byte_histogram_kernel(const unsigned char* data, std::size_t n, unsigned* bins) {
    __shared__ unsigned block_bins[kByteBins];
    for (unsigned b = threadIdx.x; b < kByteBins; b += blockDim.x) block_bins[b] = 0;
    __syncthreads();

    // The body starts at the first 16-byte boundary at or after data and
    // holds whole uint4s; fewer than 16 bytes lie before it (the head) and
    // fewer than 16 after it (the tail).
    const std::size_t misalignment = reinterpret_cast<std::uintptr_t>(data) % sizeof(uint4);
    const std::size_t to_boundary = misalignment == 0 ? 0 : sizeof(uint4) - misalignment;
    const std::size_t head = to_boundary < n ? to_boundary : n;
    const std::size_t vectors = (n - head) / sizeof(uint4);
    const std::size_t tail_start = head + vectors * sizeof(uint4);
    const uint4* body = reinterpret_cast<const uint4*>(data + head);

    const std::size_t thread = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    ByteRun run{block_bins};

    // Head and tail bytes, at most 30, one per thread.
    const std::size_t edge_bytes = head + (n - tail_start);
    for (std::size_t e = thread; e < edge_bytes; e += stride) {
        run.add(data[e < head ? e : tail_start + (e - head)]);
    }
    // The body, two vectors in flight per thread before either is counted,
    // so that the loads of the next vector overlap the counting of this one.
    std::size_t v = thread;
    for (; v + stride < vectors; v += 2 * stride) {
        const uint4 first = body[v];
        const uint4 second = body[v + stride];
        run.add_vector(first);
        run.add_vector(second);
    }
    if (v < vectors) run.add_vector(body[v]);
    run.finish();
    __syncthreads();

    for (unsigned b = threadIdx.x; b < kByteBins; b += blockDim.x) {
        const unsigned count = block_bins[b];
        if (count != 0) atomicAdd(&bins[b], count);
    }
}

void check_shape(course::LaunchShape shape, const char* function) {
    if (shape.blocks == 0 || shape.threads_per_block == 0 || shape.threads_per_block > 1024) {
        throw std::invalid_argument(std::string(function) + ": blocks must be >= 1 and threads_per_block 1 to 1024");
    }
}

void check_bins(unsigned num_bins, const char* function) {
    if (num_bins == 0 || num_bins > kMaxBins) {
        throw std::invalid_argument(std::string(function) + ": num_bins must be 1 to " + std::to_string(kMaxBins) +
                                    ", not " + std::to_string(num_bins));
    }
}

// Blocks for `work_items` items at kThreadsPerBlock threads: one wave of
// resident blocks at most, no more than the items need, at least one.
unsigned blocks_for(std::size_t work_items) {
    int device = 0;
    int sm_count = 0;
    COURSE_CUDA_CHECK(cudaGetDevice(&device));
    COURSE_CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));
    const std::size_t needed = (std::max<std::size_t>(work_items, 1) + kThreadsPerBlock - 1) / kThreadsPerBlock;
    const std::size_t wanted = static_cast<std::size_t>(kBlocksPerSm) * static_cast<std::size_t>(std::max(sm_count, 1));
    return static_cast<unsigned>(std::min(needed, wanted));
}

template <class Value, class ToBin>
void launch_shared(course::LaunchShape shape, const Value* values, std::size_t n, unsigned num_bins, ToBin to_bin,
                   unsigned* bins) {
    // The blocks add into the bins, so they start at 0; all-zero bytes are 0.
    COURSE_CUDA_CHECK(cudaMemsetAsync(bins, 0, num_bins * sizeof(unsigned)));
    // One counter per bin in shared memory, sized at launch: 1000 bins are 4000 bytes.
    const std::size_t shared_bytes = num_bins * sizeof(unsigned);
    shared_histogram_kernel<<<shape.blocks, shape.threads_per_block, shared_bytes>>>(values, n, num_bins, to_bin,
                                                                                      bins);
    COURSE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

course::LaunchShape histogram_launch_shape(std::size_t n) { return {blocks_for(n), kThreadsPerBlock}; }

void launch_histogram_global(course::LaunchShape shape, const unsigned int* keys, std::size_t n,
                             unsigned int num_bins, unsigned int* bins) {
    check_shape(shape, "launch_histogram_global");
    check_bins(num_bins, "launch_histogram_global");
    COURSE_CUDA_CHECK(cudaMemsetAsync(bins, 0, num_bins * sizeof(unsigned)));
    global_histogram_kernel<<<shape.blocks, shape.threads_per_block>>>(keys, n, num_bins, bins);
    COURSE_CUDA_CHECK(cudaGetLastError());
}

void launch_histogram_shared(course::LaunchShape shape, const unsigned int* keys, std::size_t n,
                             unsigned int num_bins, unsigned int* bins) {
    check_shape(shape, "launch_histogram_shared");
    check_bins(num_bins, "launch_histogram_shared");
    launch_shared(shape, keys, n, num_bins, KeyToBin{}, bins);
}

void histogram_bytes(const unsigned char* data, std::size_t n, unsigned int* bins) {
    COURSE_CUDA_CHECK(cudaMemsetAsync(bins, 0, kByteBins * sizeof(unsigned)));
    // Each thread reads 16 bytes per step: size the grid for n / 16 steps.
    const unsigned blocks = blocks_for(n / sizeof(uint4));
    byte_histogram_kernel<<<blocks, kThreadsPerBlock>>>(data, n, bins);
    COURSE_CUDA_CHECK(cudaGetLastError());
}

void launch_score_histogram(course::LaunchShape shape, const float* scores, std::size_t n, unsigned int* bins) {
    check_shape(shape, "launch_score_histogram");
    launch_shared(shape, scores, n, kScoreBins, ScoreToBin{}, bins);
}

// The same count with Thrust: for_each calls the lambda once per score on
// the GPU, and the lambda does one global atomic per score (Thrust has no
// shared memory to offer a lambda). `__device__` on a lambda needs nvcc's
// --extended-lambda. The lambda captures the bins pointer by value: it runs
// on the device, where the host's stack does not exist.
void thrust_score_histogram(const float* scores, std::size_t n, unsigned int* bins) {
    COURSE_CUDA_CHECK(cudaMemsetAsync(bins, 0, kScoreBins * sizeof(unsigned)));
    if (n == 0) return;
    const ScoreToBin to_bin{};
    thrust::for_each(thrust::device, scores, scores + n, [bins, to_bin] __device__(float score) {
        const unsigned bin = to_bin(score);
        if (bin < kScoreBins) atomicAdd(&bins[bin], 1u);
    });
    COURSE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace lesson09
