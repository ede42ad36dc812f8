/// @file warp_top_k.cuh
/// @brief A candidate for lesson 11's reference for k <= 32, kept for the
/// benchmark (issue #22: 70% of the copy bandwidth for k <= 32): the same
/// 64-bit keys and the same answer as solutions/11-top-k/top_k.cu, with no
/// block-wide barrier in the loop over the array and one launch instead of
/// three. Not graded, not yet a model: the bench times it beside the
/// reference so that one H100 run says which is faster.
///
/// 1. Each WARP streams its grid-stride share of warp tiles (32 lanes x
///    kVectors float4, coalesced), the next tile's loads in flight while the
///    current one is filtered (two named sets of registers, as the
///    reference does).
/// 2. The warp keeps its 32 best keys so far in registers, one per lane,
///    largest in lane 0. Its threshold is the m-th of them (m = min(k, n)),
///    warp-uniform, so a float below the threshold's float is rejected with
///    one compare, and the warp learns with one __any_sync whether any lane
///    has a contender. Only then does it look closer: the keys that beat
///    the threshold are staged, by a ballot, in 32 slots of shared memory
///    that belong to the warp, and merged into the register list 32 at a
///    time (a sort by shuffles, then the merge of two lists). No block
///    barrier: a warp waits for no other warp.
/// 3. The threshold starts from a seed as in the reference: the m-th
///    largest of the 32 lanes' maxima of the first tile (m distinct
///    elements at or above it), so the first tile inserts about m keys, not
///    all of them. After that it is shared by the whole grid through m
///    slots: each warp publishes its list's maximum to slot (its number
///    mod m) with an atomic max, and takes the smallest slot as a bound
///    with each tile's loads (filter_tile says why that is safe and why not
///    each warp's m-th key, the earlier version, slower than the reference
///    for k = 32).
/// 4. At the end the block's warps merge their lists pairwise (slot-by-slot
///    maximum with the other list reversed, then a bitonic merge by
///    shuffles: the reference's merge, in registers), one barrier a round;
///    the block writes its list, and the last block to finish (a ticket
///    counter, reset by a memset before the launch) merges every block's
///    list the same way, each warp loading eight lists before it merges
///    them, and writes the answer. One kernel and a memset, no
///    merge or unpack kernels.
///
/// 5. Optionally (kSampleTiles > 0) the slots are seeded before the pass:
///    the same kernel runs first over a sample of tiles spread evenly over
///    the array, one tile a warp, and its last block writes the sample's
///    m-th largest key, less one, to every slot (launch_sample_pass). A
///    subset's m-th largest is at most the whole array's, so the seed is a
///    valid bound for any input, and from its first tile on a warp rejects
///    all but about m / (sample size) of the keys: for k = 32 the ~155 keys
///    a warp merged in its first two tiles become a few. The pre-pass's
///    own slots are apart (Header says why). The reference's own path for
///    k <= 32 (a sampled threshold, solutions/11-top-k/top_k.cu) samples
///    the array the same way, in front of a simpler main pass.
///
/// Why lists of 32 for every k <= 32: a list holds its warp's true best m
/// keys in lanes 0..m-1, and real, distinct elements of the warp below them,
/// so the best m of two merged lists are the best m of both warps.
#pragma once

#include <top_k.hpp>

#include <course/cuda_check.hpp>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>
#include <cuda/atomic>
#include <cuda_runtime.h>

namespace lesson11::warp_scan {

/// The largest k this candidate takes: one key per lane of a warp.
inline constexpr int kMaxWarpK = 32;

namespace {

using Key = unsigned long long;
constexpr Key kEmptyKey = 0;
constexpr unsigned kFullMask = 0xFFFFFFFFu;
// The slots every warp publishes its maximum to and reads the bound from
// (see filter_tile).
using SharedBound = cuda::atomic_ref<Key, cuda::thread_scope_device>;

// The reference's keys (solutions/11-top-k/top_k.cu): ordered float bits in
// the high half (NaN 0, -0 folded onto +0), the complement of the index in
// the low half.
__device__ unsigned ordered_bits(float value) {
    if (value != value) return 0u;
    if (value == 0.0f) value = 0.0f;
    const unsigned bits = __float_as_uint(value);
    return (bits & 0x80000000u) != 0 ? ~bits : (bits | 0x80000000u);
}

__device__ Key pack_key(float value, std::size_t index) {
    return (static_cast<Key>(ordered_bits(value)) << 32) | (0xFFFFFFFFu - static_cast<unsigned>(index));
}

__device__ unsigned index_of(Key key) { return 0xFFFFFFFFu - static_cast<unsigned>(key & 0xFFFFFFFFu); }

__device__ float float_of_ordered(unsigned ordered) {
    return __uint_as_float((ordered & 0x80000000u) != 0 ? (ordered & 0x7FFFFFFFu) : ~ordered);
}

// A warp's running state, the same in every lane but `list`.
struct WarpList {
    Key list;          // this lane's slot of the warp's 32 best keys, largest in lane 0
    Key threshold;     // a key must beat it: the m-th best so far, or the seed
    float lowest;      // the lowest float whose key may beat the threshold
    bool everything;   // the threshold's value part is 0: every element may beat it
    unsigned rank;     // m - 1: the lane holding the threshold
    Key published;     // the largest maximum this warp has published to its slot
};

__device__ void update_lowest(WarpList& w) {
    const unsigned ordered = static_cast<unsigned>(w.threshold >> 32);
    w.everything = ordered == 0;
    w.lowest = w.everything ? 0.0f : float_of_ordered(ordered);
}

// The best 32 keys of two sorted lists (largest first): this lane's slot of
// `mine`, and slot 31 - lane of the other (read backwards). The slot-by-slot
// maximum holds the 32 best of both as a bitonic sequence; the bitonic merge
// by shuffles sorts it.
__device__ Key merge_lists(Key mine, Key other_reversed) {
    const unsigned lane = threadIdx.x % 32;
    Key key = max(mine, other_reversed);
    for (unsigned distance = 16; distance > 0; distance /= 2) {
        const Key other = __shfl_xor_sync(kFullMask, key, distance);
        key = (lane & distance) == 0 ? max(key, other) : min(key, other);
    }
    return key;
}

// Merges the lists of the block's warps into warp 0's, pairwise in rounds,
// through `shared` (a list per warp). Every thread of the block calls it.
template <unsigned kWarps>
__device__ Key merge_block_lists(Key mine, Key (*shared)[32]) {
    const unsigned lane = threadIdx.x % 32;
    const unsigned warp = threadIdx.x / 32;
    shared[warp][lane] = mine;
    for (unsigned width = 1; width < kWarps; width *= 2) {
        __syncthreads();
        if (warp % (2 * width) == 0) {
            mine = merge_lists(mine, shared[warp + width][31 - lane]);
            shared[warp][lane] = mine;
        }
    }
    return mine;
}

// Sorts the 32 lanes' keys, largest in lane 0: a bitonic sort by shuffles.
__device__ Key sort_across_lanes(Key key) {
    const unsigned lane = threadIdx.x % 32;
    for (unsigned sequence = 2; sequence <= 32; sequence *= 2) {
        for (unsigned distance = sequence / 2; distance > 0; distance /= 2) {
            const Key other = __shfl_xor_sync(kFullMask, key, distance);
            const bool descending = (lane & sequence) == 0;
            const bool first = (lane & distance) == 0;
            key = first == descending ? max(key, other) : min(key, other);
        }
    }
    return key;
}

// Merges the first `filled` keys of this warp's staging slots (the rest
// are empty) into the list, in one step: sorted, then merged as two lists
// are (merge_lists). The threshold rises to the new m-th key.
__device__ void merge_staged(WarpList& w, Key* staged, unsigned filled) {
    const unsigned lane = threadIdx.x % 32;
    __syncwarp();  // every lane's staged key is written
    const Key sorted = sort_across_lanes(lane < filled ? staged[lane] : kEmptyKey);
    __syncwarp();  // every lane has read its slot before the slots are reused
    w.list = merge_lists(w.list, __shfl_sync(kFullMask, sorted, 31 - lane));
    w.threshold = max(w.threshold, __shfl_sync(kFullMask, w.list, w.rank));
}

// The element index of item `item` of this lane in the warp tile at `base`:
// vector item / 4 of the tile, lanes side by side (512 bytes a load).
__device__ std::size_t item_index(std::size_t base, unsigned item) {
    return base + (static_cast<std::size_t>(item / 4) * 32 + threadIdx.x % 32) * 4 + item % 4;
}

template <unsigned kItems>
__device__ void load_tile(const float* values, std::size_t count, bool aligned, std::size_t base,
                          float (&items)[kItems]) {
    if (aligned && base + 32 * kItems <= count) {
        const float4* vectors = reinterpret_cast<const float4*>(values + base);
#pragma unroll
        for (unsigned v = 0; v < kItems / 4; ++v) {
            const float4 vector = vectors[v * 32 + threadIdx.x % 32];
            items[4 * v] = vector.x;
            items[4 * v + 1] = vector.y;
            items[4 * v + 2] = vector.z;
            items[4 * v + 3] = vector.w;
        }
        return;
    }
#pragma unroll
    for (unsigned item = 0; item < kItems; ++item) {
        const std::size_t i = item_index(base, item);
        items[item] = i < count ? values[i] : 0.0f;
    }
}

// Filters this lane's floats of the tile at `base`: one compare each, and
// one vote of the warp. Only the items some lane passes are looked at
// closer (a warp-uniform mask of them, an OR over the lanes), so a tile
// with one contender costs one pack and one ballot, not kItems of each.
// The keys that beat the threshold are not inserted one by one (a ballot
// and two shuffles each, one after the other: some 150 a warp in its first
// two tiles for k = 32): a ballot gives each its slot among this warp's 32
// staging slots in shared memory (`staged`, the warp's own: __syncwarp is
// enough), and each time the 32 fill, and at the end of the tile, they are
// merged into the list in one step (merge_staged).
//
// The threshold is shared by the whole grid through m slots in `slots`:
// warp g publishes its list's maximum to slot g % m with an atomic max when
// it rises. Each slot then holds a real element of warps of its own class,
// so the m slots hold m distinct elements, and no element below the
// smallest slot is among the top m of all: every warp may raise its
// threshold to it. `seen` is slot lane % m as read with this tile's loads;
// the warp takes the minimum over its lanes. Why the maximum and not the
// list's m-th key: a warp's m-th key of its own ~32 tiles is about the
// 1/1000 quantile, a contender in nearly every tile of 1024 floats for
// k = 32 (what made the m-th-key bound slower than the reference there);
// the smallest of m maxima over ~2000/m warps' tiles is far higher (a
// model of 2112 warps x 31 tiles: the slow path in ~2 tiles a warp instead
// of ~21).
template <unsigned kItems>
__device__ void filter_tile(const float (&items)[kItems], std::size_t base, std::size_t count, Key seen,
                            Key* slots, unsigned slot, Key* staged, WarpList& w) {
    static_assert(kItems <= 32, "the item mask has one bit per item");
    for (unsigned distance = 16; distance > 0; distance /= 2) {
        seen = min(seen, __shfl_xor_sync(kFullMask, seen, distance));
    }
    if (seen > w.threshold) {
        w.threshold = seen;
        update_lowest(w);
    }
    unsigned mine = 0;
#pragma unroll
    for (unsigned item = 0; item < kItems; ++item) {
        if (w.everything || items[item] >= w.lowest) mine |= 1u << item;
    }
    if (!__any_sync(kFullMask, mine != 0)) return;
    const unsigned lane = threadIdx.x % 32;
    unsigned filled = 0;  // staging slots in use, the same in every lane
    unsigned any_lane = mine;
    for (unsigned distance = 16; distance > 0; distance /= 2) {
        any_lane |= __shfl_xor_sync(kFullMask, any_lane, distance);
    }
#pragma unroll
    for (unsigned item = 0; item < kItems; ++item) {
        if ((any_lane & (1u << item)) == 0) continue;  // warp-uniform
        const std::size_t i = item_index(base, item);
        const Key key = pack_key(items[item], i);
        const bool passes = (mine & (1u << item)) != 0 && i < count && key > w.threshold;
        const unsigned lanes = __ballot_sync(kFullMask, passes);
        // This key's place among the item's contenders: the lanes below it.
        const unsigned place = static_cast<unsigned>(__popc(lanes & ((1u << lane) - 1u)));
        const unsigned contenders = static_cast<unsigned>(__popc(lanes));
        if (passes && filled + place < 32) staged[filled + place] = key;
        if (filled + contenders < 32) {
            filled += contenders;
            continue;
        }
        // The slots are full: merge them, then stage the keys that found
        // no room (places 32 - filled and up) from slot 0.
        merge_staged(w, staged, 32);
        const unsigned first_left = 32 - filled;
        if (passes && place >= first_left) staged[place - first_left] = key;
        filled = filled + contenders - 32;
    }
    if (filled > 0) merge_staged(w, staged, filled);
    update_lowest(w);
    const Key maximum = __shfl_sync(kFullMask, w.list, 0);
    if (maximum > w.published) {
        w.published = maximum;
        if (threadIdx.x % 32 == 0) SharedBound(slots[slot]).fetch_max(maximum, cuda::memory_order_relaxed);
    }
}

// The seed: the m-th largest of the lanes' maxima over the first tile, less
// one (a key must beat the threshold, and the seed's own must get in).
template <unsigned kItems>
__device__ void seed_threshold(const float (&items)[kItems], std::size_t base, std::size_t count, WarpList& w) {
    Key mine = kEmptyKey;
#pragma unroll
    for (unsigned item = 0; item < kItems; ++item) {
        const std::size_t i = item_index(base, item);
        if (i < count) mine = max(mine, pack_key(items[item], i));
    }
    mine = sort_across_lanes(mine);
    const Key seed = __shfl_sync(kFullMask, mine, w.rank);
    w.threshold = seed == kEmptyKey ? kEmptyKey : seed - 1;
    update_lowest(w);
}

// The tiles a launch visits: `count` of them, tile t at element
// (t * step + offset) * kTile. The whole array is step 1, offset 0; the
// sample of the pre-pass is every step-th tile, the last of each step.
struct TileWalk {
    std::size_t count;
    std::size_t step;
    std::size_t offset;
};

// Where the last block's answer goes: the pairs (the main pass), or, for the
// pre-pass over a sample, `seed_slots`: every slot of the main pass's bound
// gets the sample's m-th key less one (nullptr for the main pass).
struct Answer {
    float* values;
    int* indices;
    Key* seed_slots;
};

// The whole top-k in one launch. `lists` holds gridDim.x lists of 32 keys,
// `ticket` counts the blocks done and `slots` are the grid's m slots of
// the shared bound (0, or seeded by a pre-pass, at launch).
template <unsigned kWarps, unsigned kVectors, unsigned kMinBlocksPerSm>
__global__ void __launch_bounds__(kWarps * 32, kMinBlocksPerSm)
    warp_top_k_kernel(const float* values, std::size_t count, bool aligned, unsigned m, TileWalk walk, Key* lists,
                      unsigned* ticket, Key* slots, Answer answer) {
    constexpr unsigned kItems = 4 * kVectors;
    constexpr std::size_t kTile = 32 * kItems;
    __shared__ Key shared_lists[kWarps][32];
    __shared__ Key staged[kWarps][32];  // each warp's staging slots (filter_tile)
    __shared__ bool last_block;
    const unsigned lane = threadIdx.x % 32;
    const unsigned warp = threadIdx.x / 32;
    WarpList w;
    w.list = kEmptyKey;
    w.threshold = kEmptyKey;
    w.rank = m - 1;
    w.published = kEmptyKey;
    update_lowest(w);

    const std::size_t tiles = walk.count;
    const auto tile_base = [&](std::size_t t) { return (t * walk.step + walk.offset) * kTile; };
    const std::size_t warps = static_cast<std::size_t>(gridDim.x) * kWarps;
    std::size_t tile = static_cast<std::size_t>(blockIdx.x) * kWarps + warp;
    // The shared bound is read with each tile's loads and used with that
    // tile, so its load (from L2) is waited for no longer than the tile's.
    float even[kItems];
    float odd[kItems];
    Key seen_even = kEmptyKey;
    Key seen_odd = kEmptyKey;
    const SharedBound seen_slot(slots[lane % m]);
    const unsigned slot = (blockIdx.x * kWarps + warp) % m;
    if (tile < tiles) {
        load_tile(values, count, aligned, tile_base(tile), even);
        if (tile + warps < tiles) load_tile(values, count, aligned, tile_base(tile + warps), odd);
    }
    if (tile < tiles) {
        seen_even = seen_slot.load(cuda::memory_order_relaxed);
        if (tile + warps < tiles) seen_odd = seen_slot.load(cuda::memory_order_relaxed);
        seed_threshold(even, tile_base(tile), count, w);
    }
    for (; tile < tiles; tile += 2 * warps) {
        filter_tile(even, tile_base(tile), count, seen_even, slots, slot, staged[warp], w);
        if (tile + warps >= tiles) break;
        if (tile + 2 * warps < tiles) {
            load_tile(values, count, aligned, tile_base(tile + 2 * warps), even);
            seen_even = seen_slot.load(cuda::memory_order_relaxed);
        }
        filter_tile(odd, tile_base(tile + warps), count, seen_odd, slots, slot, staged[warp], w);
        if (tile + 3 * warps < tiles) {
            load_tile(values, count, aligned, tile_base(tile + 3 * warps), odd);
            seen_odd = seen_slot.load(cuda::memory_order_relaxed);
        }
    }

    Key mine = merge_block_lists<kWarps>(w.list, shared_lists);
    if (warp == 0) {
        lists[static_cast<std::size_t>(blockIdx.x) * 32 + lane] = mine;
        __threadfence();  // the list is visible to every block before the ticket says so
    }
    __syncthreads();
    if (threadIdx.x == 0) last_block = atomicAdd(ticket, 1u) == gridDim.x - 1;
    __syncthreads();
    if (!last_block) return;

    // The last block: every list is written. Warp w merges lists w,
    // w + kWarps, ... (a list none of whose keys beats this warp's m-th
    // cannot change its best m), then the block's warps merge theirs.
    __threadfence();
    // The lists come from L2: kInFlight of them are loaded before any is
    // merged, so a warp waits about one L2 latency per kInFlight lists, not
    // one per list (some 33 lists a warp for 2^26 floats).
    constexpr unsigned kInFlight = 8;
    mine = kEmptyKey;
    for (unsigned first = warp; first < gridDim.x; first += kInFlight * kWarps) {
        Key batch[kInFlight];
#pragma unroll
        for (unsigned j = 0; j < kInFlight; ++j) {
            const unsigned block = first + j * kWarps;
            batch[j] = block < gridDim.x ? __ldcg(&lists[static_cast<std::size_t>(block) * 32 + 31 - lane]) : kEmptyKey;
        }
#pragma unroll
        for (unsigned j = 0; j < kInFlight; ++j) {
            const Key mth = __shfl_sync(kFullMask, mine, m - 1);
            if (__any_sync(kFullMask, batch[j] > mth)) mine = merge_lists(mine, batch[j]);
        }
    }
    mine = merge_block_lists<kWarps>(mine, shared_lists);
    if (warp == 0 && answer.seed_slots != nullptr) {
        // The pre-pass: the sample's m-th key is at most the array's (a
        // subset's m-th largest never exceeds the whole's), so every one of
        // the top m has a key above it less one.
        const Key mth = __shfl_sync(kFullMask, mine, m - 1);
        if (lane < m) answer.seed_slots[lane] = mth == kEmptyKey ? kEmptyKey : mth - 1;
    } else if (warp == 0 && lane < m) {
        if (mine == kEmptyKey) {
            // Cannot happen (m <= n real keys beat every empty slot): say
            // so with an impossible index, as the reference does.
            answer.indices[lane] = -1;
            answer.values[lane] = __uint_as_float(0x7FC00000u);
        } else {
            const unsigned index = index_of(mine);
            answer.indices[lane] = static_cast<int>(index);
            answer.values[lane] = values[index];
        }
    }
}

void check_arguments(std::size_t n, int k) {
    if (k < 0 || k > kMaxWarpK) {
        throw std::invalid_argument("warp_scan::top_k: k must be 0 to " + std::to_string(kMaxWarpK) + ", not " +
                                    std::to_string(k));
    }
    if (n > static_cast<std::size_t>(INT_MAX)) {
        throw std::invalid_argument("warp_scan::top_k: n must be at most INT_MAX, not " + std::to_string(n));
    }
}

// What the occupancy API says of `kernel` with `threads` a block on the
// current device: its blocks an SM, and the device's SMs. Asked once a
// process for each (kernel, device, threads): top_k needs it several times
// a call (the workspace's size, the grids), and each query costs host time
// between a timed run's start and its first launch, on a GPU that waits.
struct Residency {
    int per_sm;
    int sm_count;
};

template <class Kernel>
Residency residency(Kernel kernel, unsigned threads) {
    int device = 0;
    COURSE_CUDA_CHECK(cudaGetDevice(&device));
    const auto key = std::make_tuple(reinterpret_cast<const void*>(kernel), device, threads);
    static std::mutex mutex;
    static std::map<decltype(key), Residency> known;
    const std::lock_guard<std::mutex> lock(mutex);
    if (const auto found = known.find(key); found != known.end()) return found->second;
    Residency r{0, 0};
    COURSE_CUDA_CHECK(cudaDeviceGetAttribute(&r.sm_count, cudaDevAttrMultiProcessorCount, device));
    COURSE_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&r.per_sm, kernel, static_cast<int>(threads), 0));
    known.emplace(key, r);
    return r;
}

// Blocks of kWarps warps, a warp tile of kVectors float4 a lane, over n
// floats: blocks_per_sm on each of sm_count SMs, no more than there are
// warp tiles for.
template <unsigned kWarps, unsigned kVectors>
unsigned wave_blocks(std::size_t n, unsigned blocks_per_sm, int sm_count) {
    const std::size_t tile_floats = std::size_t{32} * 4 * kVectors * kWarps;
    const std::size_t needed = (n + tile_floats - 1) / tile_floats;
    const std::size_t wave = std::size_t{std::max(blocks_per_sm, 1u)} * static_cast<unsigned>(std::max(sm_count, 1));
    return static_cast<unsigned>(std::max<std::size_t>(1, std::min(needed, wave)));
}

// Blocks of a launch of `kernel`, kWarps warps a block and a warp tile of
// kVectors float4 a lane, over n floats: as many as fit on the GPU at once
// (the occupancy API, capped at max_per_sm per SM when that is not 0), and
// no more than there are warp tiles for.
template <unsigned kWarps, unsigned kVectors, class Kernel>
unsigned resident_blocks(Kernel kernel, std::size_t n, unsigned max_per_sm) {
    const Residency r = residency(kernel, kWarps * 32);
    unsigned blocks_per_sm = static_cast<unsigned>(std::max(r.per_sm, 1));
    if (max_per_sm > 0) blocks_per_sm = std::min(blocks_per_sm, max_per_sm);
    return wave_blocks<kWarps, kVectors>(n, blocks_per_sm, r.sm_count);
}

// Blocks of the warp scan's launch, at most kMaxBlocksPerSm an SM (0: as
// many as fit).
template <unsigned kWarps, unsigned kVectors, unsigned kMaxBlocksPerSm>
unsigned grid_blocks(std::size_t n) {
    return resident_blocks<kWarps, kVectors>(
        warp_top_k_kernel<kWarps, kVectors, (kMaxBlocksPerSm > 0 ? kMaxBlocksPerSm : 1)>, n, kMaxBlocksPerSm);
}

// The workspace: the main pass's ticket and the pre-pass's (8 bytes each,
// keeping the keys 8-byte aligned), the main pass's 32 slots of the bound and
// the pre-pass's own 32 (their maxima are of other warps' classes, so they
// must not mix with the main pass's: filter_tile's argument needs each slot
// to hold an element of its own class), then 32 keys per block.
struct Header {
    unsigned* ticket;
    unsigned* sample_ticket;
    Key* slots;
    Key* sample_slots;
    Key* lists;
};
constexpr std::size_t kTicketBytes = sizeof(Key);
constexpr std::size_t kHeaderBytes = 2 * kTicketBytes + 2 * 32 * sizeof(Key);

Header header_of(void* workspace) {
    auto* bytes = static_cast<unsigned char*>(workspace);
    return {reinterpret_cast<unsigned*>(bytes), reinterpret_cast<unsigned*>(bytes + kTicketBytes),
            reinterpret_cast<Key*>(bytes + 2 * kTicketBytes),
            reinterpret_cast<Key*>(bytes + 2 * kTicketBytes + 32 * sizeof(Key)),
            reinterpret_cast<Key*>(bytes + kHeaderBytes)};
}

// The warp tiles of n floats.
template <unsigned kVectors>
std::size_t tile_count(std::size_t n) {
    constexpr std::size_t kTile = std::size_t{32} * 4 * kVectors;
    return (n + kTile - 1) / kTile;
}

// The pre-pass (see top_k): when the array has at least 2 sample_tiles
// tiles, finds the m-th largest key of sample_tiles of them spread evenly
// over the array and writes it, less one, to h.slots[0, m), and returns
// true. Else leaves the slots as they are and returns false (no launch).
// One tile a warp, at most max_blocks blocks (the lists the workspace has
// room for). Uses h.sample_ticket, h.sample_slots and the first lists;
// h.ticket and h.sample_ticket must be 0.
template <unsigned kWarps, unsigned kVectors, unsigned kMinBlocks>
bool launch_sample_pass(const float* values, std::size_t n, bool aligned, unsigned m, unsigned sample_tiles,
                        unsigned max_blocks, const Header& h) {
    const std::size_t tiles = tile_count<kVectors>(n);
    if (sample_tiles == 0 || tiles < 2 * std::size_t{sample_tiles}) return false;
    // Sample tile t is the last of the t-th step of tiles, so the sample
    // reaches the array's end (sorted ascending input: the bound then lies
    // among the top keys of the last step).
    const std::size_t step = tiles / sample_tiles;
    const TileWalk sample{sample_tiles, step, step - 1};
    const unsigned blocks = std::min(max_blocks, (sample_tiles + kWarps - 1) / kWarps);
    warp_top_k_kernel<kWarps, kVectors, kMinBlocks><<<blocks, kWarps * 32>>>(
        values, n, aligned, m, sample, h.lists, h.sample_ticket, h.sample_slots, Answer{nullptr, nullptr, h.slots});
    COURSE_CUDA_CHECK(cudaGetLastError());
    return true;
}

}  // namespace

/// The workspace for n elements and k <= 32 results (0 when n = 0 or k = 0).
template <unsigned kWarps, unsigned kVectors, unsigned kMaxBlocksPerSm>
std::size_t top_k_workspace_bytes(std::size_t n, int k) {
    check_arguments(n, k);
    if (n == 0 || k == 0) return 0;
    const std::size_t blocks = grid_blocks<kWarps, kVectors, kMaxBlocksPerSm>(n);
    return kHeaderBytes + blocks * 32 * sizeof(Key);
}

/// lesson11::top_k's contract for k <= 32: kWarps warps a block, kVectors
/// float4 a lane per tile, at most kMaxBlocksPerSm blocks an SM (0: as many
/// as fit).
///
/// kSampleTiles > 0: a pre-pass first (the same kernel, one tile a warp)
/// finds the m-th largest key of a sample of kSampleTiles tiles spread
/// evenly over the array, and seeds the main pass's bound with it: a
/// subset's m-th largest is at most the whole array's, so the bound is safe
/// for any input, and on random data only about n m / (sample size) keys
/// beat it (some 4 to 8 thousand for k = 32 and 2^26 floats), instead of
/// the ~155 a warp of the unseeded pass's first two tiles. Skipped when the
/// array has fewer than 2 kSampleTiles tiles (the sample would be most of it).
template <unsigned kWarps, unsigned kVectors, unsigned kMaxBlocksPerSm, unsigned kSampleTiles = 0>
void top_k(const float* values, std::size_t n, int k, float* out_values, int* out_indices, void* workspace,
           std::size_t workspace_bytes) {
    check_arguments(n, k);
    if (n == 0 || k == 0) return;
    const std::size_t needed = top_k_workspace_bytes<kWarps, kVectors, kMaxBlocksPerSm>(n, k);
    if (workspace_bytes < needed) {
        throw std::invalid_argument("warp_scan::top_k: the workspace has " + std::to_string(workspace_bytes) +
                                    " bytes, top_k_workspace_bytes says " + std::to_string(needed));
    }
    constexpr unsigned kMinBlocks = kMaxBlocksPerSm > 0 ? kMaxBlocksPerSm : 1;
    const unsigned blocks = grid_blocks<kWarps, kVectors, kMaxBlocksPerSm>(n);
    const Header h = header_of(workspace);
    const unsigned m = static_cast<unsigned>(std::min(static_cast<std::size_t>(k), n));
    const bool aligned = reinterpret_cast<std::uintptr_t>(values) % sizeof(float4) == 0;
    const std::size_t tiles = tile_count<kVectors>(n);
    COURSE_CUDA_CHECK(cudaMemsetAsync(workspace, 0, kHeaderBytes));
    launch_sample_pass<kWarps, kVectors, kMinBlocks>(values, n, aligned, m, kSampleTiles, blocks, h);
    warp_top_k_kernel<kWarps, kVectors, kMinBlocks><<<blocks, kWarps * 32>>>(
        values, n, aligned, m, TileWalk{tiles, 1, 0}, h.lists, h.ticket, h.slots,
        Answer{out_values, out_indices, nullptr});
    COURSE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace lesson11::warp_scan
