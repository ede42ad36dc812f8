// Lesson 19: a stable LSD radix sort of 32-bit keys (and key-value pairs),
// on an exclusive scan of any length that you write too.
//
// Goal: make `./course grade 19` pass. Read lessons/19-radix-sort/README.md
// first; the functions you fill in are documented in radix_sort.hpp.
// Stuck? `./course hint 19` shows the hints one by one.
//
// Order that works: block_exclusive_scan and the three scan kernels
// (exclusive_scan has its own test), then digit_of and digit_counts_kernel,
// then the scatter (rank, place in shared memory, write out), then the
// passes in radix_sort. No CUB or Thrust here: the grader flags them.
#include <radix_sort.hpp>

#include <course/cuda_check.hpp>
#include <course/device_buffer.hpp>

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <cuda_runtime.h>

namespace lesson19 {

// Given: the shapes. A block of the sort has at least one thread per digit
// value: thread d < kRadix does digit d's work, the others only sort.
constexpr int kThreads = 384;                // threads per block of the sort (12 warps)
[[maybe_unused]] constexpr int kWarps = kThreads / 32;
constexpr int kItems = 16;                   // keys per thread in the sort
[[maybe_unused]] constexpr int kTile = kThreads * kItems;  // keys per block of the sort: 6144
constexpr int kScanThreads = 256;            // threads per block of the scan
constexpr int kScanItems = 16;               // values per thread in the scan
[[maybe_unused]] constexpr int kScanChunk = kScanThreads * kScanItems;
[[maybe_unused]] constexpr int kMaxWarps = 32;  // the most warps a block can have (1024 threads)
[[maybe_unused]] constexpr unsigned kFullMask = 0xffffffffu;
static_assert(kThreads >= kRadix && kThreads % 32 == 0, "thread d does digit d's work; whole warps");

// Given: blocks of `per_block` items for `items` items, rounded up.
unsigned blocks_for(std::size_t items, std::size_t per_block) {
    return static_cast<unsigned>((items + per_block - 1) / per_block);
}

// The block's exclusive scan of one value per thread: returns the sum of the
// values of the threads before this one, and the block's total in `total`.
// Every thread of the block calls it. Any block of whole warps (the scan's
// blocks have kScanThreads threads, the sort's kThreads): blockDim.x / 32 warps.
__device__ unsigned block_exclusive_scan(unsigned value, unsigned& total) {
    // TODO: __shared__ unsigned warp_totals[kMaxWarps]. An inclusive warp scan
    // with __shfl_up_sync (offsets 1, 2, 4, 8, 16; add only when lane >=
    // offset); lane 31 stores its warp's total; __syncthreads(); each thread
    // adds the totals of the warps before its own, and all of them for
    // `total`; __syncthreads() again before returning (the next call writes
    // warp_totals). Return the inclusive sum minus `value`.
    total = 0;
    return value;
}

// Scan kernel 1: chunk_sums[b] = the sum of the kScanChunk values of block b
// (thread t owns kScanItems consecutive values from b * kScanChunk + t * kScanItems).
__global__ void chunk_sums_kernel(const unsigned* in, std::size_t n, unsigned* chunk_sums) {
    // TODO: sum the thread's values (those below n), block_exclusive_scan
    // for the total, thread 0 writes it.
}

// Scan kernel 2, one block: chunk_sums becomes the exclusive scan of itself.
__global__ void chunk_offsets_kernel(unsigned* chunk_sums, unsigned chunks) {
    // TODO: kScanThreads values per round, a running carry from round to round.
}

// Scan kernel 3: out[i] for the thread's values, starting from its chunk's
// offset plus the sums of the threads before it in the chunk.
__global__ void chunk_scan_kernel(const unsigned* in, unsigned* out, std::size_t n, const unsigned* chunk_offsets) {
    // TODO: exclusive: write the running sum, then add the value.
}

// Given: the number of keys of the tile that starts at key `tile_begin`:
// kTile, or fewer for the last tile.
__device__ unsigned tile_size_of(std::size_t n, std::size_t tile_begin) {
    return n - tile_begin < kTile ? static_cast<unsigned>(n - tile_begin) : unsigned{kTile};
}

// The digit of `key` this pass sorts by: `bits` bits from bit `shift` up.
__device__ unsigned digit_of(unsigned key, unsigned shift, unsigned bits) {
    // TODO: (key >> shift) masked to `bits` bits.
    return 0;
}

// Step 1 of a pass: tile_counts[d * gridDim.x + tile] = the number of keys of
// the tile (kTile keys from blockIdx.x * kTile, fewer in the last one) with digit d.
__global__ void digit_counts_kernel(const unsigned* keys, std::size_t n, unsigned shift, unsigned bits,
                                    unsigned* tile_counts) {
    // TODO: a shared-memory histogram of kRadix bins (lesson 09): thread
    // d < kRadix zeroes bin d, __syncthreads(), atomicAdd per key,
    // __syncthreads(), thread d < kRadix writes bin d.
}

// Step 3 of a pass: the stable scatter of one tile. digit_offsets is the
// exclusive scan of step 1's table: entry (d, tile) is where the tile's first
// key of digit d goes in the output.
template <bool kWithValues>
__global__ void scatter_kernel(const unsigned* keys_in, const unsigned* values_in, unsigned* keys_out,
                               unsigned* values_out, std::size_t n, unsigned shift, unsigned bits,
                               const unsigned* digit_offsets) {
    // Given: the sorted tile, kTile keys then (with values) kTile values, in
    // dynamic shared memory (radix_sort launches with its size: 48 KB for
    // pairs, past what a block may declare statically with the counts below).
    extern __shared__ unsigned sorted_tile[];
    [[maybe_unused]] unsigned* tile_keys = sorted_tile;
    [[maybe_unused]] unsigned* tile_values = sorted_tile + kTile;
    __shared__ unsigned warp_counts[kWarps][kRadix];
    __shared__ unsigned digit_base[kRadix];
    // TODO, in this order (the lesson's figure shows it):
    // 1. Each warp zeroes its row warp_counts[warp][*], __syncwarp().
    // 2. Warp w loads the tile's keys w * 32 * kItems + j * 32 + lane for
    //    j = 0 .. kItems-1 into registers (and the values; 0 past the tile's
    //    end), all loads first. Then, for each j (stop the whole warp past the
    //    tile's end), for the group of 32: peers = the valid lanes with the same digit (one
    //    __ballot_sync for "valid", then one per digit bit); the key's rank =
    //    warp_counts[warp][digit] + (peers in lower lanes); after a
    //    __syncwarp() the lowest lane of the group adds popc(peers) to the count;
    //    __syncwarp().
    // 3. __syncthreads(). Thread d < kRadix: an exclusive scan of column d over the
    //    warps, in place; block_exclusive_scan of the digit totals (every
    //    thread calls it, those past kRadix with 0); add the
    //    digit's start to column d; digit_base[d] = digit_offsets[d * gridDim.x
    //    + blockIdx.x] - the digit's start. __syncthreads().
    // 4. tile_keys[warp_counts[warp][digit] + rank] = key (and the value), __syncthreads().
    // 5. For i = threadIdx.x, + kThreads, ... below the tile's size: the key in
    //    slot i goes to digit_base[its digit] + i (and its value with it).
}

// Given: the bits must be 0 <= begin_bit <= end_bit <= 32.
void check_bits(int begin_bit, int end_bit) {
    if (begin_bit < 0 || end_bit > 32 || begin_bit > end_bit) {
        throw std::invalid_argument("radix sort: the bits [" + std::to_string(begin_bit) + ", " +
                                    std::to_string(end_bit) + ") are not within [0, 32) in order");
    }
}

void exclusive_scan(const unsigned* in, unsigned* out, std::size_t n) {
    // TODO: nothing for n == 0; a DeviceBuffer of one sum per chunk; the
    // three kernels, each launch checked with COURSE_CUDA_CHECK(cudaGetLastError()).
}

// Both sorts: values_in == nullptr sorts the keys alone.
void radix_sort(const unsigned* keys_in, const unsigned* values_in, unsigned* keys_out, unsigned* values_out,
                std::size_t n, int begin_bit, int end_bit) {
    check_bits(begin_bit, end_bit);
    if (n == 0) return;
    // TODO: passes = ceil((end_bit - begin_bit) / kRadixBits); none: copy the
    // input (cudaMemcpyAsync, device to device). Otherwise the (digit, tile)
    // tables (kRadix * tiles counts, and their scan), temporary key and value
    // buffers, and per pass: shift, bits (8, or fewer for the last), the
    // source (the input, then the previous destination), the destination
    // (ping-pong: the LAST pass must write the output), digit_counts_kernel,
    // exclusive_scan, scatter_kernel<true> or <false> with its sorted tile's
    // bytes as the launch's dynamic shared memory (2 * kTile * sizeof(unsigned)
    // for pairs; set cudaFuncAttributeMaxDynamicSharedMemorySize to it first).
}

void sort_keys(const unsigned* keys_in, unsigned* keys_out, std::size_t n, int begin_bit, int end_bit) {
    radix_sort(keys_in, nullptr, keys_out, nullptr, n, begin_bit, end_bit);
}

void sort_pairs(const unsigned* keys_in, const unsigned* values_in, unsigned* keys_out, unsigned* values_out,
                std::size_t n, int begin_bit, int end_bit) {
    radix_sort(keys_in, n > 0 ? values_in : nullptr, keys_out, values_out, n, begin_bit, end_bit);
}

}  // namespace lesson19
