// Lesson 11 reference solution: top-K by per-block candidates in shared
// memory, merged block by block until one block is left.
//
// 1. Every element becomes one 64-bit key: the float's bits made orderable
//    as an unsigned integer in the high half (lesson 03's idea), the
//    complement of its index in the low half. "Larger value, then lower
//    index" is then simply "larger key", every key is distinct, and ties
//    are settled by the key itself, not by the order threads arrive in.
// 2. Each block keeps its C best keys (C = k rounded up to a power of two,
//    at least 64) sorted in shared memory. It reads its grid-stride share of
//    the keys one tile of C at a time, sorts the tile (bitonic sort), and
//    merges it with its best: the elementwise maximum of the best (largest
//    first) and the tile reversed (smallest first) holds the C largest keys
//    of both, as a bitonic sequence, which a bitonic merge sorts again.
//    A tile whose keys are all below the block's C-th best is skipped.
// 3. Each block writes its C candidates. The candidates are fewer than the
//    elements by far; the same kernel runs on them with fewer blocks, and
//    again, until one block holds the C best of all: the first min(k, n)
//    of them are the answer.
//
// Why not keep one maximum per block (seed 002's sketch)? Two of the top K
// may live in the same block; a block that keeps only its maximum loses the
// second. A block must keep K candidates, not one.
#include <top_k.hpp>

#include <course/cuda_check.hpp>

#include <algorithm>
#include <bit>
#include <climits>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <cuda_runtime.h>

namespace lesson11 {

namespace {

using Key = unsigned long long;

// Smaller candidate lists would leave most of a warp idle in the sort.
constexpr unsigned kMinCapacity = 64;
// Blocks of the first pass per SM: each has up to 512 threads and 16 KiB of
// shared memory, so 4 fit on an SM at once.
constexpr unsigned kBlocksPerSm = 4;
// A merge pass gives each block this many tiles of candidates, so each pass
// divides the number of candidates by about this much.
constexpr unsigned kTilesPerMergeBlock = 8;

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

// One compare-exchange step of a bitonic network over `keys[0, capacity)`:
// thread t handles the pair (i, i + distance), where i has bit `distance`
// clear. The pair is put in descending order when `descending`.
__device__ void compare_exchange(Key* keys, unsigned distance, bool descending_everywhere, unsigned sequence) {
    const unsigned t = threadIdx.x;
    const unsigned i = 2 * distance * (t / distance) + t % distance;
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

// Sorts keys[0, capacity) largest first. blockDim.x == capacity / 2: one
// pair per thread per step, and a barrier after every step, because the
// next step's pairs mix elements that other warps just wrote.
__device__ void bitonic_sort_descending(Key* keys, unsigned capacity) {
    for (unsigned sequence = 2; sequence <= capacity; sequence *= 2) {
        for (unsigned distance = sequence / 2; distance > 0; distance /= 2) {
            compare_exchange(keys, distance, false, sequence);
            __syncthreads();
        }
    }
}

// Sorts a bitonic sequence keys[0, capacity) largest first: the last stage
// of the sort alone, log2(capacity) steps instead of log2(capacity)^2 / 2.
__device__ void bitonic_merge_descending(Key* keys, unsigned capacity) {
    for (unsigned distance = capacity / 2; distance > 0; distance /= 2) {
        compare_exchange(keys, distance, true, capacity);
        __syncthreads();
    }
}

// Each block finds the `capacity` largest keys of its tiles of `source[0,
// count)` (tiles of `capacity` keys, block b taking tiles b, b + gridDim.x,
// ...) and writes them, largest first, to out[blockIdx.x * capacity ...].
// Missing keys (a block with fewer elements than capacity) are kEmptyKey.
template <class Source>
__global__ void block_top_k_kernel(Source source, std::size_t count, unsigned capacity, Key* out) {
    // Two lists of `capacity` keys: the block's best so far, and the tile
    // being merged in. Sized at launch: 16 KiB at most.
    extern __shared__ __align__(16) unsigned char shared_bytes[];
    Key* best = reinterpret_cast<Key*>(shared_bytes);
    Key* tile = best + capacity;
    const unsigned t = threadIdx.x;
    const unsigned half = blockDim.x;  // == capacity / 2: each thread owns slots t and t + half

    best[t] = kEmptyKey;
    best[t + half] = kEmptyKey;
    Key threshold = kEmptyKey;  // the block's capacity-th best key: a key must beat it to enter

    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * capacity;
    for (std::size_t start = static_cast<std::size_t>(blockIdx.x) * capacity; start < count; start += stride) {
        // The last tile may be partial: its missing keys are empty slots.
        const Key a = start + t < count ? source(start + t) : kEmptyKey;
        const Key b = start + t + half < count ? source(start + t + half) : kEmptyKey;
        tile[t] = a;
        tile[t + half] = b;
        // One barrier does two jobs: the tile is complete before anyone sorts
        // it, and the block learns whether any key of it can enter the best.
        // Every thread gets the same answer, so all skip or none does.
        if (!__syncthreads_or(a > threshold || b > threshold)) continue;

        bitonic_sort_descending(tile, capacity);

        // best is largest first, the tile read backwards smallest first: slot
        // by slot the larger of the two keeps the `capacity` largest of
        // both lists (a bitonic sequence), which the merge sorts.
        best[t] = max(best[t], tile[capacity - 1 - t]);
        best[t + half] = max(best[t + half], tile[half - 1 - t]);
        __syncthreads();
        bitonic_merge_descending(best, capacity);
        threshold = best[capacity - 1];
    }

    Key* block_out = out + static_cast<std::size_t>(blockIdx.x) * capacity;
    block_out[t] = best[t];
    block_out[t + half] = best[t + half];
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
    return std::max(1u, div_up(candidates, static_cast<std::size_t>(capacity) * kTilesPerMergeBlock));
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
    plan.first_blocks = std::max(1u, std::min(wave, div_up(n, plan.capacity)));
    if (plan.first_blocks > 1) {
        plan.second_blocks = merge_blocks(static_cast<std::size_t>(plan.first_blocks) * plan.capacity, plan.capacity);
    }
    return plan;
}

template <class Source>
void launch_block_top_k(unsigned blocks, Source source, std::size_t count, unsigned capacity, Key* out) {
    const std::size_t shared_bytes = 2 * static_cast<std::size_t>(capacity) * sizeof(Key);
    block_top_k_kernel<<<blocks, capacity / 2, shared_bytes>>>(source, count, capacity, out);
    COURSE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

std::size_t top_k_workspace_bytes(std::size_t n, int k) {
    check_arguments(n, k);
    if (n == 0 || k == 0) return 0;
    const Plan plan = make_plan(n, k);
    // Two candidate buffers used in turn: the first pass and every odd pass
    // write the first (the passes shrink, so the first is the largest), the
    // others the second.
    return (static_cast<std::size_t>(plan.first_blocks) + plan.second_blocks) * plan.capacity * sizeof(Key);
}

void top_k(const float* values, std::size_t n, int k, float* out_values, int* out_indices, void* workspace,
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

}  // namespace lesson11
