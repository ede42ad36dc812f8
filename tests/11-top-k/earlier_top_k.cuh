/// @file earlier_top_k.cuh
/// @brief Lesson 11's earlier reference, kept for the benchmark only: the
/// same selection (per-block candidates filtered against a threshold, a
/// bitonic sort and merge in shared memory) with the loads of a chunk issued
/// only after the barrier that ends the chunk before, 4 scalar loads per
/// thread, and every merge pass a full run of the block kernel (its first
/// chunk sorted whole). Measured on an H100 at 28% of the copy bandwidth for
/// k = 1 and 32 (lessons/11-top-k/README.md, "Measured results"); the bench
/// times it next to the current reference, so one run shows what the
/// prefetching and the merge of sorted lists changed. Not graded, not a
/// model: read solutions/11-top-k/top_k.cu.
#pragma once

#include <top_k.hpp>

#include <course/cuda_check.hpp>

#include <algorithm>
#include <bit>
#include <climits>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <cuda_runtime.h>

namespace lesson11::earlier {

namespace {

using Key = unsigned long long;

// Smaller candidate lists would make the merges more frequent for nothing.
constexpr unsigned kMinCapacity = 64;
// Threads per block, whatever C is, and keys each thread reads per chunk:
// a block reads chunks of kChunk = 2048 keys, one barrier per chunk. The
// kItemsPerThread loads of a thread are independent, so they are all in
// flight at once: that, not the arithmetic, is what keeps memory busy.
// Measured on an H100 (2^26 floats): 512 x 4 with 4 blocks per SM (2048
// threads per SM) took 0.33 ms for k = 1 and 0.95 ms for k = 1024; 256 x 8
// with 4 blocks per SM (half the threads per SM) 0.42 and 1.02 ms.
constexpr unsigned kThreads = 512;
constexpr unsigned kItemsPerThread = 4;
constexpr unsigned kChunk = kThreads * kItemsPerThread;
// Blocks of the first pass per SM: each has 512 threads and up to 40 KiB of
// shared memory, so 4 fit on an SM at once.
constexpr unsigned kBlocksPerSm = 4;
// A merge pass gives each block this many lists of candidates (and at least
// a chunk), so each pass divides the number of candidates by about this much.
constexpr unsigned kListsPerMergeBlock = 8;

// The float's bits as an unsigned integer that orders like the float: NaN
// lowest (0), then -inf, ..., -0 and +0 (both as +0), ..., +inf. Positive
// floats get the sign bit set, so they rank above every negative; negative
// floats are complemented, so a larger magnitude ranks lower.
__device__ unsigned ordered_bits(float value) {
    if (value != value) return 0u;      // NaN: below -inf, whose result is 0x007FFFFF
    if (value == 0.0f) value = 0.0f;    // -0 equals +0: give both the same key
    const unsigned bits = __float_as_uint(value);
    return (bits & 0x80000000u) != 0 ? ~bits : (bits | 0x80000000u);
}

// The 64-bit key: larger value first, then lower index first. No element's
// key is 0 (its low half is at least 2^32 - 1 - INT_MAX), so 0 marks an
// empty slot that every element beats.
__device__ Key pack_key(float value, unsigned index) {
    return (static_cast<Key>(ordered_bits(value)) << 32) | (0xFFFFFFFFu - index);
}

__device__ unsigned index_of(Key key) { return 0xFFFFFFFFu - static_cast<unsigned>(key & 0xFFFFFFFFu); }

constexpr Key kEmptyKey = 0;

// Where a block reads its keys from: the floats of the first pass, packed
// on the fly, or the candidates of the pass before.
struct FloatSource {
    const float* values;
    __device__ Key operator()(std::size_t i) const { return pack_key(values[i], static_cast<unsigned>(i)); }
};
struct KeySource {
    const Key* keys;
    __device__ Key operator()(std::size_t i) const { return keys[i]; }
};

// One compare-exchange of a bitonic network step: pair number `pair` is
// (i, i + distance), where i has bit `distance` clear. The pair is put in
// descending order when `descending`.
__device__ void compare_exchange(Key* keys, unsigned pair, unsigned distance, bool descending_everywhere,
                                 unsigned sequence) {
    const unsigned i = 2 * distance * (pair / distance) + pair % distance;
    const unsigned j = i + distance;
    // In the sort, sequences of length `sequence` alternate direction, so
    // that pairs of them form the bitonic sequences of the next size.
    const bool descending = descending_everywhere || (i & sequence) == 0;
    const Key a = keys[i];
    const Key b = keys[j];
    if ((a < b) == descending) {
        keys[i] = b;
        keys[j] = a;
    }
}

// Sorts keys[0, size) largest first (size a power of two). A step has
// size / 2 pairs: thread t takes pairs t, t + blockDim.x, ... And a barrier
// after every step, because the next step's pairs mix elements that other
// warps just wrote.
__device__ void bitonic_sort_descending(Key* keys, unsigned size) {
    for (unsigned sequence = 2; sequence <= size; sequence *= 2) {
        for (unsigned distance = sequence / 2; distance > 0; distance /= 2) {
            for (unsigned pair = threadIdx.x; pair < size / 2; pair += blockDim.x) {
                compare_exchange(keys, pair, distance, false, sequence);
            }
            __syncthreads();
        }
    }
}

// Sorts a bitonic sequence keys[0, size) largest first: the last stage of
// the sort alone, log2(size) steps instead of log2(size)^2 / 2.
__device__ void bitonic_merge_descending(Key* keys, unsigned size) {
    for (unsigned distance = size / 2; distance > 0; distance /= 2) {
        for (unsigned pair = threadIdx.x; pair < size / 2; pair += blockDim.x) {
            compare_exchange(keys, pair, distance, true, size);
        }
        __syncthreads();
    }
}

// The smallest power of two >= x (x >= 1).
__device__ unsigned round_up_to_power_of_two(unsigned x) {
    return x <= 1 ? 1u : 1u << (32 - __clz(static_cast<int>(x - 1)));
}

// Merges the `*buffered` keys of `buffer` into `best` (its `capacity` keys,
// largest first), empties the buffer and returns the new threshold. Every
// thread of the block calls it together: it is full of barriers.
__device__ Key merge_buffer_into_best(Key* best, Key* buffer, unsigned* buffered, unsigned capacity) {
    const unsigned t = threadIdx.x;
    // Every append happened before the barrier that led here, so every
    // thread reads the same count, and sorts the same number of keys.
    const unsigned filled = *buffered;
    const unsigned size = max(capacity, round_up_to_power_of_two(filled));
    // The sorting network needs a power of two: empty keys fill the rest.
    for (unsigned s = filled + t; s < size; s += blockDim.x) buffer[s] = kEmptyKey;
    __syncthreads();
    bitonic_sort_descending(buffer, size);

    // best is largest first, the buffer's first C read backwards smallest
    // first: slot by slot the larger of the two keeps the C largest of both
    // lists (a bitonic sequence), which the merge sorts.
    for (unsigned s = t; s < capacity; s += blockDim.x) best[s] = max(best[s], buffer[capacity - 1 - s]);
    __syncthreads();
    bitonic_merge_descending(best, capacity);

    const Key threshold = best[capacity - 1];
    if (t == 0) *buffered = 0;
    // The empty buffer is seen by every thread before the next append.
    __syncthreads();
    return threshold;
}

// Each block finds the `capacity` largest keys of its chunks of `source[0,
// count)` (chunks of kChunk keys, block b taking chunks b, b + gridDim.x,
// ...) and writes them, largest first, to out[blockIdx.x * capacity ...].
// Missing keys (a block with fewer elements than capacity) are kEmptyKey.
// Launched with kThreads threads; see launch_block_top_k for shared memory.
template <class Source>
__global__ void block_top_k_kernel(Source source, std::size_t count, unsigned capacity, Key* out) {
    // The block's best `capacity` keys, then the candidate buffer: it holds
    // up to capacity - 1 + kChunk keys (fewer than capacity before a chunk,
    // at most kChunk more from it), rounded up to a power of two for the sort.
    extern __shared__ __align__(16) unsigned char shared_bytes[];
    Key* best = reinterpret_cast<Key*>(shared_bytes);
    Key* buffer = best + capacity;
    __shared__ unsigned buffered;  // keys in the buffer
    const unsigned t = threadIdx.x;

    for (unsigned s = t; s < capacity; s += blockDim.x) best[s] = kEmptyKey;
    if (t == 0) buffered = 0;
    __syncthreads();
    // The block's capacity-th best key, in a register: a key must beat it to
    // be worth keeping. Every element beats the empty key.
    Key threshold = kEmptyKey;

    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * kChunk;
    for (std::size_t start = static_cast<std::size_t>(blockIdx.x) * kChunk; start < count; start += stride) {
        // Load first, all kItemsPerThread keys, neighbouring threads reading
        // neighbouring elements. The last chunk may be partial: its missing
        // keys are empty and beat nothing. (The loops have a constant trip
        // count, so nvcc unrolls them and keeps `keys` in registers.)
        Key keys[kItemsPerThread];
        for (unsigned item = 0; item < kItemsPerThread; ++item) {
            const std::size_t i = start + item * kThreads + t;
            keys[item] = i < count ? source(i) : kEmptyKey;
        }
        // Then filter: only a key above the threshold takes a buffer slot.
        // `full`: this thread filled slot capacity - 1 or later, so the
        // buffer now holds at least capacity keys.
        bool full = false;
        for (unsigned item = 0; item < kItemsPerThread; ++item) {
            if (keys[item] > threshold) {
                const unsigned slot = atomicAdd(&buffered, 1u);
                buffer[slot] = keys[item];
                full = full || slot + 1 >= capacity;
            }
        }
        // One barrier per chunk does two jobs: the appends are complete, and
        // the block learns whether any thread saw the buffer fill. Every
        // thread gets the same answer, so all merge or none does, and the
        // next chunk's up to kChunk appends always find room.
        if (__syncthreads_or(full)) threshold = merge_buffer_into_best(best, buffer, &buffered, capacity);
    }
    // What is left in the buffer. Every append came before the last chunk's
    // barrier and none comes after it, so all threads read the same count.
    if (__syncthreads_or(buffered > 0)) merge_buffer_into_best(best, buffer, &buffered, capacity);

    Key* block_out = out + static_cast<std::size_t>(blockIdx.x) * capacity;
    for (unsigned s = t; s < capacity; s += blockDim.x) block_out[s] = best[s];
}

// The first m keys of `keys` as (value, index) pairs. The value is read
// back from `values`, so it is the element bit for bit (the key keeps
// neither the sign of a zero nor a NaN's payload).
__global__ void unpack_kernel(const Key* keys, int m, const float* values, float* out_values, int* out_indices) {
    const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
    if (i >= m) return;
    const Key key = keys[i];
    if (key == kEmptyKey) {
        // Cannot happen when every pass keeps its candidates (m <= n real
        // keys beat every empty slot). If one lost some, say so with an
        // impossible index instead of reading values[0xFFFFFFFF].
        out_indices[i] = -1;
        out_values[i] = __uint_as_float(0x7FC00000u);  // NaN
        return;
    }
    const unsigned index = index_of(key);
    out_indices[i] = static_cast<int>(index);
    out_values[i] = values[index];
}

// The passes, computed the same way by the workspace query and the launcher.
struct Plan {
    unsigned capacity = 0;        // candidates per block, a power of two
    unsigned first_blocks = 0;    // blocks of the first pass
    unsigned second_blocks = 0;   // blocks of the second pass (0 if the first has 1 block)
};

void check_arguments(std::size_t n, int k) {
    if (k < 0 || k > kMaxK) {
        throw std::invalid_argument("top_k: k must be 0 to " + std::to_string(kMaxK) + ", not " + std::to_string(k));
    }
    if (n > static_cast<std::size_t>(INT_MAX)) {
        throw std::invalid_argument("top_k: n must be at most INT_MAX (indices are ints), not " + std::to_string(n));
    }
}

unsigned div_up(std::size_t a, std::size_t b) { return static_cast<unsigned>((a + b - 1) / b); }

// The number of blocks of a merge pass over `candidates` keys.
unsigned merge_blocks(std::size_t candidates, unsigned capacity) {
    const std::size_t per_block = std::max<std::size_t>(static_cast<std::size_t>(capacity) * kListsPerMergeBlock, kChunk);
    return std::max(1u, div_up(candidates, per_block));
}

Plan make_plan(std::size_t n, int k) {
    Plan plan;
    const std::size_t m = std::min(static_cast<std::size_t>(k), n);
    // Never more candidates than elements: a small array gets small lists.
    plan.capacity = std::max(kMinCapacity, std::bit_ceil(static_cast<unsigned>(m)));
    int device = 0;
    int sm_count = 0;
    COURSE_CUDA_CHECK(cudaGetDevice(&device));
    COURSE_CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));
    const unsigned wave = kBlocksPerSm * static_cast<unsigned>(std::max(sm_count, 1));
    plan.first_blocks = std::max(1u, std::min(wave, div_up(n, kChunk)));
    if (plan.first_blocks > 1) {
        plan.second_blocks = merge_blocks(static_cast<std::size_t>(plan.first_blocks) * plan.capacity, plan.capacity);
    }
    return plan;
}

template <class Source>
void launch_block_top_k(unsigned blocks, Source source, std::size_t count, unsigned capacity, Key* out) {
    // best (capacity keys) and the buffer: capacity - 1 + kChunk keys at
    // most, rounded up to a power of two. 40 KiB for C = 1024, under the
    // 48 KiB a kernel gets without asking.
    const std::size_t buffer_keys = std::bit_ceil(capacity - 1 + kChunk);
    const std::size_t shared_bytes = (capacity + buffer_keys) * sizeof(Key);
    block_top_k_kernel<<<blocks, kThreads, shared_bytes>>>(source, count, capacity, out);
    COURSE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

inline std::size_t top_k_workspace_bytes(std::size_t n, int k) {
    check_arguments(n, k);
    if (n == 0 || k == 0) return 0;
    const Plan plan = make_plan(n, k);
    // Two candidate buffers used in turn: the first pass and every odd pass
    // write the first (the passes shrink, so the first is the largest), the
    // others the second.
    return (static_cast<std::size_t>(plan.first_blocks) + plan.second_blocks) * plan.capacity * sizeof(Key);
}

inline void top_k(const float* values, std::size_t n, int k, float* out_values, int* out_indices, void* workspace,
                  std::size_t workspace_bytes) {
    check_arguments(n, k);
    if (n == 0 || k == 0) return;
    const std::size_t needed = top_k_workspace_bytes(n, k);
    if (workspace_bytes < needed) {
        throw std::invalid_argument("top_k: the workspace has " + std::to_string(workspace_bytes) +
                                    " bytes, top_k_workspace_bytes says " + std::to_string(needed));
    }
    const Plan plan = make_plan(n, k);
    Key* buffers[2] = {static_cast<Key*>(workspace),
                       static_cast<Key*>(workspace) + static_cast<std::size_t>(plan.first_blocks) * plan.capacity};

    // Pass 1: the floats, packed into keys as they are read.
    unsigned blocks = plan.first_blocks;
    launch_block_top_k(blocks, FloatSource{values}, n, plan.capacity, buffers[0]);
    // Merge passes: the candidates of the pass before, until one block is left.
    int current = 0;
    while (blocks > 1) {
        const std::size_t candidates = static_cast<std::size_t>(blocks) * plan.capacity;
        blocks = merge_blocks(candidates, plan.capacity);
        launch_block_top_k(blocks, KeySource{buffers[current]}, candidates, plan.capacity, buffers[1 - current]);
        current = 1 - current;
    }

    const int m = static_cast<int>(std::min(static_cast<std::size_t>(k), n));
    constexpr int kUnpackThreads = 256;
    unpack_kernel<<<(m + kUnpackThreads - 1) / kUnpackThreads, kUnpackThreads>>>(buffers[current], m, values,
                                                                                  out_values, out_indices);
    COURSE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace lesson11::earlier
