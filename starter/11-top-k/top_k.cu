// Lesson 11: top-K selection with per-block candidates in shared memory.
//
// Goal: make `./course grade 11` pass. Read lessons/11-top-k/README.md first;
// the functions you fill in are documented in top_k.hpp.
// Stuck? `./course hint 11` shows the hints one by one.
//
// The plan (given below): every element becomes a 64-bit key; each block
// keeps its `capacity` best keys sorted in shared memory, merging in one
// sorted tile of `capacity` keys at a time; its candidates go to the
// workspace, and the same kernel runs on the candidates with fewer blocks
// until one block is left; its first min(k, n) keys are the answer.
// You write the key, the bitonic network, the block's loop and the unpacking.
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
    // TODO: 0 for NaN; -0.0f and +0.0f must give the same result; then the
    // bits (__float_as_uint): complemented for a negative float, with the
    // sign bit set for a positive one.
    (void)value;
    return 0u;
}

// The 64-bit key: larger value first, then lower index first. No element's
// key is 0 (its low half is at least 2^32 - 1 - INT_MAX), so 0 marks an
// empty slot that every element beats.
__device__ Key pack_key(float value, unsigned index) {
    // TODO: in the low 32 bits, something that is LARGER for a LOWER index.
    (void)index;
    return static_cast<Key>(ordered_bits(value)) << 32;
}

// The index packed into `key` by pack_key.
__device__ unsigned index_of(Key key) {
    // TODO: undo what pack_key did to the index.
    (void)key;
    return 0u;
}

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
    // TODO: thread t's pair: i = 2 * distance * (t / distance) + t % distance
    // and j = i + distance. The pair is put in descending order (larger key
    // at i) when descending_everywhere or when bit `sequence` of i is clear,
    // in ascending order otherwise.
    (void)keys;
    (void)distance;
    (void)descending_everywhere;
    (void)sequence;
}

// Sorts keys[0, capacity) largest first. blockDim.x == capacity / 2: one
// pair per thread per step, and a barrier after every step, because the
// next step's pairs mix elements that other warps just wrote.
__device__ void bitonic_sort_descending(Key* keys, unsigned capacity) {
    // TODO: for sequence = 2, 4, ..., capacity: for distance = sequence / 2,
    // ..., 1: one compare_exchange(keys, distance, false, sequence), then a
    // barrier that every thread reaches.
    (void)keys;
    (void)capacity;
}

// Sorts a bitonic sequence keys[0, capacity) largest first: the last stage
// of the sort alone, log2(capacity) steps instead of log2(capacity)^2 / 2.
__device__ void bitonic_merge_descending(Key* keys, unsigned capacity) {
    // Given, as the model for the sort above: one step per distance, each
    // followed by a barrier that every thread of the block reaches.
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
        // TODO: this barrier can also tell the block whether any key of the
        // tile beats `threshold`, and skip the tile (continue) if none does:
        // __syncthreads_or(a > threshold || b > threshold). A plain barrier
        // is correct too, only slower.
        __syncthreads();
        (void)threshold;

        bitonic_sort_descending(tile, capacity);

        // TODO: merge the sorted tile into best: for s = t and s = t + half,
        // best[s] = the larger of best[s] and tile[capacity - 1 - s]. Then a
        // barrier: the merge below reads slots other threads wrote.

        bitonic_merge_descending(best, capacity);
        // TODO: threshold = the smallest of the block's best keys.
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
