// Lesson 09: histograms, with atomics on global memory and privatised in
// shared memory.
//
// Goal: make `./course grade 09` pass. Read lessons/09-histogram/README.md
// first; the functions you fill in are documented in histogram.hpp.
// Stuck? `./course hint 09` shows the hints one by one.
//
// Order that works: launch_histogram_global (the simple version), then
// shared_histogram_kernel and launch_shared (the privatised one), then
// ScoreToBin, then histogram_bytes (make it right with one byte per step
// first, fast with 16-byte loads after), and on a GPU the Thrust version.
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

constexpr unsigned kThreadsPerBlock = 256;
constexpr unsigned kByteBins = 256;
constexpr unsigned kDropped = 0xFFFFFFFFu;  // a bin number no histogram has: the value is not counted

// Given: a key's bin is the key itself; keys >= num_bins are dropped by the
// kernel's `bin < num_bins` test.
struct KeyToBin {
    __host__ __device__ unsigned operator()(unsigned key) const { return key; }
};

// A score's bin: scores in [0, 100] rounded half away from zero (roundf);
// kDropped for anything else (below 0, above 100, infinities, NaN).
struct ScoreToBin {
    __host__ __device__ unsigned operator()(float score) const {
        // TODO: return kDropped unless 0 <= score <= 100 (write the test so
        // that NaN fails it), else roundf(score) as an unsigned.
        (void)score;
        return kDropped;
    }
};

namespace {

__global__ void global_histogram_kernel(const unsigned* keys, std::size_t n, unsigned num_bins, unsigned* bins) {
    // TODO: a grid-stride loop over the keys (indices in size_t); for each
    // key below num_bins, atomicAdd(&bins[key], 1u).
    (void)keys;
    (void)n;
    (void)num_bins;
    (void)bins;
}

// The privatised histogram, for any value type and any mapping to bins:
// `to_bin(values[i])` is the bin of value i (>= num_bins: not counted).
template <class Value, class ToBin>
__global__ void shared_histogram_kernel(const Value* values, std::size_t n, unsigned num_bins, ToBin to_bin,
                                        unsigned* bins) {
    // num_bins counters, sized at launch (the third <<< >>> parameter).
    extern __shared__ unsigned block_bins[];
    // TODO 1: set every one of the num_bins shared bins to 0. There may be
    // more bins than threads or fewer: loop over them with stride blockDim.x.
    // Then a barrier.
    // TODO 2: count the block's grid-stride share of the values into the
    // shared bins, with atomicAdd (two threads may hit the same bin at once).
    // Then a barrier.
    // TODO 3: add each nonzero shared bin to bins[] with one global atomicAdd.
    (void)block_bins;
    (void)values;
    (void)n;
    (void)num_bins;
    (void)to_bin;
    (void)bins;
}

void check_shape(course::LaunchShape shape, const char* function) {
    if (shape.blocks == 0 || shape.threads_per_block == 0 || shape.threads_per_block > 1024) {
        throw std::invalid_argument(std::string(function) + ": blocks must be >= 1 and threads_per_block 1 to 1024");
    }
}

void check_bins(unsigned num_bins, const char* function) {
    // TODO: throw std::invalid_argument unless 1 <= num_bins <= kMaxBins.
    (void)num_bins;
    (void)function;
}

template <class Value, class ToBin>
void launch_shared(course::LaunchShape shape, const Value* values, std::size_t n, unsigned num_bins, ToBin to_bin,
                   unsigned* bins) {
    // TODO: the blocks add into bins, so set its num_bins counters to 0 first
    // (cudaMemsetAsync, checked with COURSE_CUDA_CHECK).
    // TODO: one unsigned of shared memory per bin.
    const std::size_t shared_bytes = 0;
    shared_histogram_kernel<<<shape.blocks, shape.threads_per_block, shared_bytes>>>(values, n, num_bins, to_bin,
                                                                                      bins);
    COURSE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

course::LaunchShape histogram_launch_shape(std::size_t n) {
    // TODO: kThreadsPerBlock threads, a few blocks per SM (query
    // cudaDevAttrMultiProcessorCount), never more blocks than
    // ceil(n / kThreadsPerBlock), never fewer than 1.
    (void)n;
    return {1, kThreadsPerBlock};
}

void launch_histogram_global(course::LaunchShape shape, const unsigned int* keys, std::size_t n,
                             unsigned int num_bins, unsigned int* bins) {
    check_shape(shape, "launch_histogram_global");
    check_bins(num_bins, "launch_histogram_global");
    // TODO: set the bins to 0 first, as in launch_shared.
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
    // TODO: first make it right: a byte's bin is the byte, so a functor like
    // KeyToBin for unsigned char and launch_shared(histogram_launch_shape(n),
    // data, n, kByteBins, ..., bins) will do. Then make it fast with your own
    // kernel: 16 bytes per load (uint4) from the first 16-byte boundary on,
    // the few bytes before and after it one by one (see the README).
    (void)data;
    (void)n;
    (void)bins;
    (void)kByteBins;
}

void launch_score_histogram(course::LaunchShape shape, const float* scores, std::size_t n, unsigned int* bins) {
    check_shape(shape, "launch_score_histogram");
    launch_shared(shape, scores, n, kScoreBins, ScoreToBin{}, bins);
}

void thrust_score_histogram(const float* scores, std::size_t n, unsigned int* bins) {
    // TODO: zero the kScoreBins bins, then
    // thrust::for_each(thrust::device, scores, scores + n, [bins] __device__(float score) { ... })
    // with one global atomicAdd per score that ScoreToBin{} puts in a bin.
    (void)scores;
    (void)n;
    (void)bins;
}

}  // namespace lesson09
