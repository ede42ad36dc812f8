// Lesson 19 reference solution: an exclusive scan of any length, and a
// stable LSD radix sort of 32-bit keys (and key-value pairs) built on it.
//
// One pass of the sort orders the keys by one 8-bit digit, keeping the
// order of keys with equal digits (stable). Sorting by the least significant
// digit first, then the next, ..., the last pass leaves the keys ordered by
// all digits: keys that differ first in digit 3 are put in order by pass 3,
// and keys equal in digit 3 keep the order the earlier passes gave them.
//
// A pass is three steps over tiles of kTile keys (one block per tile):
// 1. digit_counts_kernel: each tile counts its keys per digit value into
//    tile_counts[digit * tiles + tile] (digit-major: all tiles of digit 0,
//    then all tiles of digit 1, ...);
// 2. exclusive_scan of that table: entry (digit, tile) becomes the number of
//    keys that go before the tile's first key of that digit in the output
//    (every key with a smaller digit, and the same digit in earlier tiles);
// 3. scatter_kernel: each tile ranks its keys by digit in shared memory,
//    stably, and writes each key to its digit's offset plus its rank.
#include <radix_sort.hpp>

#include <course/cuda_check.hpp>
#include <course/device_buffer.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <cuda_runtime.h>

namespace lesson19 {

namespace {

// The sort's blocks: 384 threads (12 warps), 16 keys each, so tiles of
// 6144 keys. Measured on an H100 against the first version's 256 threads
// (tiles of 4096, three blocks per SM): the same 24 warps per SM, now in two
// blocks of 12, sort 2^26 pairs about 1.2x faster (4.34 against 5.28 ms;
// the lesson's page, "Measured results", has the numbers of every shape
// tried). A larger tile spreads the per-tile work (zeroing and scanning the
// 12 x 256 counts, the block scan of the digit totals, five block-wide
// barriers) over 1.5x the keys, makes the (digit, tile) table and its scan
// 1.5x smaller, and lengthens each digit's run of writes (24 keys on average
// instead of 16). Larger still was slower: 8192 keys with 256 threads (32
// keys each) need so many registers that only 16 warps fit per SM, and 512
// threads x 16 keys in two blocks, with its registers capped at 64 a
// thread, was slower than 384 x 16 too.
constexpr int kThreads = 384;  // threads per block of the sort
constexpr int kWarps = kThreads / 32;
constexpr int kItems = 16;     // keys per thread in the sort
constexpr int kTile = kThreads * kItems;  // keys per block of the sort: 6144
constexpr int kScanThreads = 256;         // threads per block of the scan
constexpr int kScanItems = 16;            // values per thread in the scan
constexpr int kScanChunk = kScanThreads * kScanItems;
constexpr int kMaxWarps = 32;             // the most warps a block can have (1024 threads)
constexpr unsigned kFullMask = 0xffffffffu;
static_assert(kThreads >= kRadix && kThreads % 32 == 0,
              "the digit steps give digit d to thread d: at least one thread per digit value, whole warps");

unsigned blocks_for(std::size_t items, std::size_t per_block) {
    return static_cast<unsigned>((items + per_block - 1) / per_block);
}

// The block's exclusive scan of one value per thread: returns the sum of
// the values of the threads before this one, and the block's total in
// `total`. A warp scan with shuffles, each warp's total in shared memory,
// then each thread adds the totals of the warps before its own.
// Every thread of the block must call it (it has barriers). Any block of
// whole warps: the scan's blocks have 256 threads, the sort's 384.
__device__ unsigned block_exclusive_scan(unsigned value, unsigned& total) {
    __shared__ unsigned warp_totals[kMaxWarps];
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
    unsigned inclusive = value;
    for (unsigned offset = 1; offset < 32; offset *= 2) {
        const unsigned left = __shfl_up_sync(kFullMask, inclusive, offset);
        if (lane >= offset) inclusive += left;
    }
    if (lane == 31) warp_totals[warp] = inclusive;
    __syncthreads();
    unsigned before = 0;
    total = 0;
    for (unsigned w = 0; w < warps; ++w) {
        if (w < warp) before += warp_totals[w];
        total += warp_totals[w];
    }
    // The next call writes warp_totals again: everyone must have read it.
    __syncthreads();
    return before + inclusive - value;
}

// ---------------------------------------------------------------- the scan
// Reduce, scan the reductions, scan again with the offsets: three kernels,
// any n. Each thread owns kScanItems consecutive values of its block's chunk.

// A thread's kScanItems consecutive values from `first`, 0 past n. A full
// run at a 16-byte aligned address is read as four 16-byte vectors (lesson 06).
__device__ void load_scan_items(const unsigned* in, std::size_t n, std::size_t first, unsigned (&values)[kScanItems]) {
    if (first + kScanItems <= n && reinterpret_cast<std::uintptr_t>(in + first) % sizeof(uint4) == 0) {
        const uint4* vectors = reinterpret_cast<const uint4*>(in + first);
        for (int v = 0; v < kScanItems / 4; ++v) {
            const uint4 four = vectors[v];
            values[4 * v] = four.x;
            values[4 * v + 1] = four.y;
            values[4 * v + 2] = four.z;
            values[4 * v + 3] = four.w;
        }
    } else {
        for (int k = 0; k < kScanItems; ++k) values[k] = first + k < n ? in[first + k] : 0;
    }
}

// Kernel 1: chunk_sums[b] = the sum of chunk b.
__global__ void chunk_sums_kernel(const unsigned* in, std::size_t n, unsigned* chunk_sums) {
    const std::size_t first = static_cast<std::size_t>(blockIdx.x) * kScanChunk + threadIdx.x * kScanItems;
    unsigned values[kScanItems];
    load_scan_items(in, n, first, values);
    unsigned sum = 0;
    for (int k = 0; k < kScanItems; ++k) sum += values[k];
    unsigned total = 0;
    (void)block_exclusive_scan(sum, total);
    if (threadIdx.x == 0) chunk_sums[blockIdx.x] = total;
}

// Kernel 2, one block: the chunk sums become exclusive offsets, in place,
// kScanThreads at a time with the running total carried from round to round.
__global__ void chunk_offsets_kernel(unsigned* chunk_sums, unsigned chunks) {
    unsigned carry = 0;
    for (unsigned base = 0; base < chunks; base += kScanThreads) {
        const unsigned i = base + threadIdx.x;
        const unsigned value = i < chunks ? chunk_sums[i] : 0;
        unsigned total = 0;
        const unsigned before = block_exclusive_scan(value, total);
        if (i < chunks) chunk_sums[i] = carry + before;
        carry += total;
    }
}

// Kernel 3: each thread's values, from the chunk's offset plus the sums of
// the threads before it in the chunk.
__global__ void chunk_scan_kernel(const unsigned* in, unsigned* out, std::size_t n, const unsigned* chunk_offsets) {
    const std::size_t first = static_cast<std::size_t>(blockIdx.x) * kScanChunk + threadIdx.x * kScanItems;
    unsigned values[kScanItems];
    load_scan_items(in, n, first, values);
    unsigned sum = 0;
    for (int k = 0; k < kScanItems; ++k) sum += values[k];
    unsigned total = 0;
    unsigned running = chunk_offsets[blockIdx.x] + block_exclusive_scan(sum, total);
    for (int k = 0; k < kScanItems; ++k) {
        if (first + k < n) out[first + k] = running;  // exclusive: written before adding the value
        running += values[k];
    }
}

// ---------------------------------------------------------------- the sort

// The digit of `key` this pass sorts by: `bits` bits from `shift` up
// (bits is 8, or fewer for the last pass when end_bit - begin_bit is not a
// multiple of 8: bits above end_bit must not be compared).
__device__ unsigned digit_of(unsigned key, unsigned shift, unsigned bits) {
    return (key >> shift) & ((1u << bits) - 1u);
}

// The number of keys of the tile that starts at key `tile_begin`: kTile,
// or fewer for the last tile.
__device__ unsigned tile_size_of(std::size_t n, std::size_t tile_begin) {
    return n - tile_begin < kTile ? static_cast<unsigned>(n - tile_begin) : unsigned{kTile};
}

// Step 1: tile_counts[d * tiles + tile] = the number of the tile's keys with digit d.
// A shared-memory histogram per block (lesson 09); thread d < kRadix owns bin d.
__global__ void digit_counts_kernel(const unsigned* keys, std::size_t n, unsigned shift, unsigned bits,
                                    unsigned* tile_counts) {
    __shared__ unsigned counts[kRadix];
    if (threadIdx.x < kRadix) counts[threadIdx.x] = 0;
    __syncthreads();
    const std::size_t tile_begin = static_cast<std::size_t>(blockIdx.x) * kTile;
    const unsigned tile_size = tile_size_of(n, tile_begin);
    // All the thread's loads first, then the counting: kItems loads in
    // flight at once instead of one load's latency per key.
    unsigned tile_keys[kItems];
    for (int j = 0; j < kItems; ++j) {
        const unsigned i = j * kThreads + threadIdx.x;
        tile_keys[j] = i < tile_size ? keys[tile_begin + i] : 0;
    }
    for (int j = 0; j < kItems; ++j) {
        if (j * kThreads + threadIdx.x < tile_size) atomicAdd(&counts[digit_of(tile_keys[j], shift, bits)], 1u);
    }
    __syncthreads();
    if (threadIdx.x < kRadix) tile_counts[static_cast<std::size_t>(threadIdx.x) * gridDim.x + blockIdx.x] = counts[threadIdx.x];
}

// Step 3: the stable scatter of one tile. `digit_offsets` is the scanned
// table of step 2. With kWithValues, the values travel with their keys.
//
// Ranking, stably: warp w owns the tile's keys [w * 32 * kItems, (w + 1) * 32 * kItems)
// and reads them 32 at a time, in order. For each group of 32 the lanes
// holding the same digit find each other with one ballot per digit bit
// (`peers`); a key's rank among the warp's keys of its digit is the count
// already seen (warp_counts[warp][digit]) plus its peers in lower lanes.
// Then a scan over (digit, warp) in shared memory turns the per-warp counts
// into each (digit, warp)'s first slot in the digit-sorted tile, the keys go
// to those slots in shared memory, and the block writes the sorted tile out
// in order: consecutive threads write consecutive addresses of each digit's
// run, which coalesces far better than writing from the ranking order.
//
// The sorted tile, keys then values (kTile each), is dynamic shared memory:
// 48 KB for pairs, which with the 13 KB of counts below is past the 48 KB a
// block may declare statically. Two blocks of 61 KB fit in an SM's 228 KB;
// __launch_bounds__(kThreads, 2) caps the registers (85 a thread) so that
// two blocks' registers fit too: 24 warps per SM to hide the latency of the
// loads and of the ranking's chain of ballots.
template <bool kWithValues>
__global__ void __launch_bounds__(kThreads, 2) scatter_kernel(const unsigned* keys_in, const unsigned* values_in, unsigned* keys_out,
                               unsigned* values_out, std::size_t n, unsigned shift, unsigned bits,
                               const unsigned* digit_offsets) {
    extern __shared__ unsigned sorted_tile[];
    unsigned* tile_keys = sorted_tile;          // kTile keys
    unsigned* tile_values = sorted_tile + kTile;  // kTile values, with kWithValues
    __shared__ unsigned warp_counts[kWarps][kRadix];
    __shared__ unsigned digit_base[kRadix];

    const unsigned t = threadIdx.x, lane = t % 32, warp = t / 32;
    const unsigned lanes_below = (1u << lane) - 1u;
    const std::size_t tile_begin = static_cast<std::size_t>(blockIdx.x) * kTile;
    const unsigned tile_size = tile_size_of(n, tile_begin);

    // Each warp zeroes its own row of counts: only it uses the row until the barrier below.
    for (unsigned d = lane; d < kRadix; d += 32) warp_counts[warp][d] = 0;
    __syncwarp();

    // The warp's keys (and values) first: kItems loads in flight at once,
    // each 32 consecutive keys (one coalesced 128-byte load per step).
    unsigned keys[kItems];
    unsigned values[kWithValues ? kItems : 1];
    for (int j = 0; j < kItems; ++j) {
        const unsigned i = warp * 32 * kItems + j * 32 + lane;  // the key's place in the tile
        keys[j] = i < tile_size ? keys_in[tile_begin + i] : 0;
        if constexpr (kWithValues) values[j] = i < tile_size ? values_in[tile_begin + i] : 0;
    }

    unsigned ranks[kItems];
    for (int j = 0; j < kItems; ++j) {
        // A partial last tile: the warps past its end stop (the whole warp
        // at once, so that every lane still takes part in the ballots).
        if (warp * 32 * kItems + j * 32 >= tile_size) break;
        const bool valid = warp * 32 * kItems + j * 32 + lane < tile_size;  // lanes past a partial tile's end
        const unsigned digit = digit_of(keys[j], shift, bits);
        // The valid lanes whose digit equals this lane's, bit by bit.
        unsigned peers = __ballot_sync(kFullMask, valid);
        for (unsigned b = 0; b < kRadixBits; ++b) {
            if (b >= bits) break;
            const bool one = (digit >> b) & 1u;
            const unsigned ones = __ballot_sync(kFullMask, one);
            peers &= one ? ones : ~ones;
        }
        const unsigned seen = warp_counts[warp][digit];
        // Everyone has read the count before the group's lowest lane adds the group to it.
        __syncwarp();
        if (valid && (peers & lanes_below) == 0) warp_counts[warp][digit] = seen + __popc(peers);
        __syncwarp();
        ranks[j] = seen + __popc(peers & lanes_below);
    }
    __syncthreads();  // every warp's counts are final before thread d reads column d

    // Thread d < kRadix: the exclusive scan of digit d's counts over the
    // warps, then of the digits' totals over the block: (digit, warp) -> first
    // slot. The threads past kRadix take part in the block scan with 0.
    const unsigned d = t;
    unsigned digit_total = 0;
    if (d < kRadix) {
        for (unsigned w = 0; w < kWarps; ++w) {
            const unsigned count = warp_counts[w][d];
            warp_counts[w][d] = digit_total;
            digit_total += count;
        }
    }
    unsigned tile_total = 0;
    const unsigned digit_start = block_exclusive_scan(digit_total, tile_total);  // has barriers
    if (d < kRadix) {
        for (unsigned w = 0; w < kWarps; ++w) warp_counts[w][d] += digit_start;
        // Output position of tile slot i (a key of digit d) = digit_base[d] + i.
        digit_base[d] = digit_offsets[static_cast<std::size_t>(d) * gridDim.x + blockIdx.x] - digit_start;
    }
    __syncthreads();

    for (int j = 0; j < kItems; ++j) {
        const unsigned i = warp * 32 * kItems + j * 32 + lane;
        if (i >= tile_size) break;
        const unsigned slot = warp_counts[warp][digit_of(keys[j], shift, bits)] + ranks[j];
        tile_keys[slot] = keys[j];
        if constexpr (kWithValues) tile_values[slot] = values[j];
    }
    __syncthreads();

    for (unsigned i = t; i < tile_size; i += kThreads) {
        const unsigned key = tile_keys[i];
        const std::size_t position = digit_base[digit_of(key, shift, bits)] + i;
        keys_out[position] = key;
        if constexpr (kWithValues) values_out[position] = tile_values[i];
    }
}

void check_bits(int begin_bit, int end_bit) {
    if (begin_bit < 0 || end_bit > 32 || begin_bit > end_bit) {
        throw std::invalid_argument("radix sort: the bits [" + std::to_string(begin_bit) + ", " +
                                    std::to_string(end_bit) + ") are not within [0, 32) in order");
    }
}

// Both sorts: values_in == nullptr sorts the keys alone.
void radix_sort(const unsigned* keys_in, const unsigned* values_in, unsigned* keys_out, unsigned* values_out,
                std::size_t n, int begin_bit, int end_bit) {
    check_bits(begin_bit, end_bit);
    if (n == 0) return;
    const bool with_values = values_in != nullptr;
    const int passes = (end_bit - begin_bit + kRadixBits - 1) / kRadixBits;
    if (passes == 0) {  // nothing to compare: the input order is the sorted order
        COURSE_CUDA_CHECK(cudaMemcpyAsync(keys_out, keys_in, n * sizeof(unsigned), cudaMemcpyDeviceToDevice));
        if (with_values) {
            COURSE_CUDA_CHECK(
                cudaMemcpyAsync(values_out, values_in, n * sizeof(unsigned), cudaMemcpyDeviceToDevice));
        }
        return;
    }
    const unsigned tiles = blocks_for(n, kTile);
    const std::size_t table = static_cast<std::size_t>(kRadix) * tiles;
    // The workspace, allocated and freed on every call as the contract asks.
    // It is not free: on the H100 the four passes' kernels take about 3.1 ms
    // for 2^26 pairs and the whole call about 4.3 ms, the difference most
    // likely these allocations (512 MB of temporary keys and values).
    course::DeviceBuffer<unsigned> tile_counts(table), digit_offsets(table);
    // The passes alternate between the output and a temporary buffer (ping-pong),
    // arranged so that the last pass writes the output: with an odd number of
    // passes the first one writes the output, with an even number the temporary.
    course::DeviceBuffer<unsigned> temp_keys(passes > 1 ? n : 0);
    course::DeviceBuffer<unsigned> temp_values(passes > 1 && with_values ? n : 0);
    // The scatter's sorted tile in dynamic shared memory: keys, and values for pairs.
    const std::size_t pairs_tile_bytes = 2 * kTile * sizeof(unsigned), keys_tile_bytes = kTile * sizeof(unsigned);
    COURSE_CUDA_CHECK(cudaFuncSetAttribute(scatter_kernel<true>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(pairs_tile_bytes)));
    COURSE_CUDA_CHECK(cudaFuncSetAttribute(scatter_kernel<false>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(keys_tile_bytes)));

    const unsigned* src_keys = keys_in;
    const unsigned* src_values = values_in;
    for (int pass = 0; pass < passes; ++pass) {
        const bool to_output = (passes - 1 - pass) % 2 == 0;
        unsigned* dst_keys = to_output ? keys_out : temp_keys.data();
        unsigned* dst_values = to_output ? values_out : temp_values.data();
        const unsigned shift = static_cast<unsigned>(begin_bit + pass * kRadixBits);
        const unsigned bits = static_cast<unsigned>(std::min(kRadixBits, end_bit - static_cast<int>(shift)));

        digit_counts_kernel<<<tiles, kThreads>>>(src_keys, n, shift, bits, tile_counts.data());
        COURSE_CUDA_CHECK(cudaGetLastError());
        exclusive_scan(tile_counts.data(), digit_offsets.data(), table);
        if (with_values) {
            scatter_kernel<true><<<tiles, kThreads, pairs_tile_bytes>>>(src_keys, src_values, dst_keys, dst_values, n, shift, bits,
                                                      digit_offsets.data());
        } else {
            scatter_kernel<false><<<tiles, kThreads, keys_tile_bytes>>>(src_keys, nullptr, dst_keys, nullptr, n, shift, bits,
                                                       digit_offsets.data());
        }
        COURSE_CUDA_CHECK(cudaGetLastError());
        src_keys = dst_keys;
        src_values = dst_values;
    }
}

}  // namespace

void exclusive_scan(const unsigned* in, unsigned* out, std::size_t n) {
    if (n == 0) return;
    const unsigned chunks = blocks_for(n, kScanChunk);
    course::DeviceBuffer<unsigned> chunk_sums(chunks);
    chunk_sums_kernel<<<chunks, kScanThreads>>>(in, n, chunk_sums.data());
    COURSE_CUDA_CHECK(cudaGetLastError());
    chunk_offsets_kernel<<<1, kScanThreads>>>(chunk_sums.data(), chunks);
    COURSE_CUDA_CHECK(cudaGetLastError());
    chunk_scan_kernel<<<chunks, kScanThreads>>>(in, out, n, chunk_sums.data());
    COURSE_CUDA_CHECK(cudaGetLastError());
}

void sort_keys(const unsigned* keys_in, unsigned* keys_out, std::size_t n, int begin_bit, int end_bit) {
    radix_sort(keys_in, nullptr, keys_out, nullptr, n, begin_bit, end_bit);
}

void sort_pairs(const unsigned* keys_in, const unsigned* values_in, unsigned* keys_out, unsigned* values_out,
                std::size_t n, int begin_bit, int end_bit) {
    // A null values_in with n > 0 would be a broken precondition; the keys-only path needs none.
    radix_sort(keys_in, n > 0 ? values_in : nullptr, keys_out, values_out, n, begin_bit, end_bit);
}

}  // namespace lesson19
