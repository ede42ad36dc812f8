/// @file threshold_top_k.cuh
/// @brief A candidate for lesson 11's reference for k <= 32 (issue #22: 70%
/// of the copy bandwidth for k <= 32), kept for the benchmark: one threshold
/// for the whole grid, known before the main pass starts. Same 64-bit keys
/// and the same answer as solutions/11-top-k/top_k.cu; its device pieces
/// are warp_top_k.cuh's. Not graded, not yet a model.
///
/// 1. A pre-pass (warp_top_k.cuh's kernel over an evenly spread sample of
///    the array, one tile a warp) finds the m-th largest key of the sample
///    (m = min(k, n)). Every subset's m-th largest is at most the whole
///    array's, so every one of the top m has a key at or above it: it is a
///    threshold for every element, valid for any input, from the first
///    element on. On random data only about n m / (sample size) keys beat
///    it: some 8 thousand for k = 32, a sample of 2^18 and n = 2^26.
/// 2. The main pass is a compare per float against that threshold (no list,
///    no shared bound, no barrier), warp tiles streamed at the occupancy's
///    full count of warps. A warp whose tile has a key that beats it
///    appends the keys to one candidate buffer in global memory, one atomic
///    a warp (a ballot gives each key its place).
/// 3. Any input stays correct: when the buffer is full, a warp keeps the
///    keys that found no room in its own list of 32 in registers
///    (warp_top_k.cuh's staging and merge), whose m-th key then raises its
///    threshold; a block with such lists writes their merge to a list of
///    its own. A sorted, equal or otherwise unlucky array is then as slow as
///    the unseeded warp scan, never wrong.
/// 4. The last block to finish (a ticket) selects the top m of the buffer
///    and the lists: a bound first (each thread's largest candidate; the
///    m-th largest of those has m distinct candidates at or above it), then
///    each warp merges the batches of 32 with a key above it into its list,
///    and the block's warps merge their lists (Selection::merge); or, with
///    Selection::rank, the few candidates at or above that bound are
///    gathered in shared memory and each one's rank among them counted
///    (and, rank_and_rank_seed, the pre-pass's last block finds the
///    sample's m-th key the same way). Launches: a memset, the
///    pre-pass, the main pass; with Overlap (top_k) the main pass is
///    launched to overlap the pre-pass (programmatic dependent launch,
///    GPU only): its warps load their first tile, then wait for the seed;
///    and with Overlap::all the pre-pass overlaps a zeroing kernel too.
/// 5. Or (kSeedGroups > 0) the group-maxima pre-pass: one launch, no
///    memset: kSeedGroups blocks each write the largest key of their share
///    of the same sample (block 0 also zeroes the main pass's counters), and
///    each block of the main pass takes the m-th largest of those maxima,
///    less one, as its threshold (m distinct elements at or above it: valid
///    for any input). No ticket, no list merges, no last block before the
///    main pass; for k = 32 somewhat more candidates than the sample's own
///    m-th lets through (seed_from_maxima says how many).
#pragma once

#include "warp_top_k.cuh"

namespace lesson11::sampled_threshold {

/// The largest k this candidate takes: its lists are warp_top_k.cuh's.
inline constexpr int kMaxThresholdK = warp_scan::kMaxWarpK;

/// How the last blocks select: the main pass's, the top m of the
/// candidates, and the pre-pass's, the sample's m-th key.
enum class Selection {
    /// Both by merges. The main pass: a bound, then each warp merges the
    /// batches of 32 candidates with a key above it into its list (a sort
    /// and a merge by shuffles each, one after the other), then the
    /// block's warps merge their lists; the pre-pass: warp_top_k.cuh's.
    merge,
    /// The main pass's by rank: the same bound, then the few candidates at
    /// or above it gathered in shared memory and ranked against one another
    /// (warp_top_k.cuh's select_by_rank): no sort and no merge; merge's
    /// way when more than kRankCapacity candidates reach the bound. The
    /// pre-pass's by merges.
    rank,
    /// Both by rank: also the pre-pass's last block ranks the keys of its
    /// blocks' lists that reach their bound instead of merging the lists.
    rank_and_rank_seed,
};

namespace {

using warp_scan::Key;
using warp_scan::kEmptyKey;
using warp_scan::kFullMask;

// Keys the candidate buffer holds: 4 times the ~8 thousand a random array
// of 2^26 floats sends for k = 32 with a sample of 2^18 floats.
constexpr unsigned kCapacity = 32768;

// Where the main pass puts what beats the threshold, all in the workspace.
struct Candidates {
    Key* keys;              // the buffer, kCapacity keys
    unsigned* appended;     // keys appended so far (may pass kCapacity: those past it are in lists)
    Key* lists;             // the lists of blocks whose warps found the buffer full, 32 keys each
    unsigned* list_count;   // lists written
    unsigned* ticket;       // blocks done
};

// Candidate j of the buffer's `kept` keys followed by the `list_count`
// lists, read from L2 (written by other blocks of this launch).
__device__ Key candidate(const Candidates& c, unsigned kept, unsigned j) {
    return j < kept ? __ldcg(&c.keys[j]) : __ldcg(&c.lists[j - kept]);
}

// The last block: the top m of every candidate, written as pairs. Every
// thread of the block (kWarps warps) calls it. `rank_shared`: for
// Selection::rank and rank_and_rank_seed only.
template <unsigned kWarps, Selection kSelection>
__device__ void select_candidates(const Candidates& c, const float* values, unsigned m, Key (*shared_lists)[32],
                                  Key* shared_bound, warp_scan::RankShared* rank_shared, float* out_values,
                                  int* out_indices) {
    constexpr unsigned kThreads = kWarps * 32;
    constexpr unsigned kInFlight = warp_scan::kSelectInFlight;
    const unsigned lane = threadIdx.x % 32;
    const unsigned warp = threadIdx.x / 32;
    const unsigned kept = min(__ldcg(c.appended), kCapacity);
    const unsigned total = kept + 32 * __ldcg(c.list_count);
    const auto key_at = [&](unsigned j) { return candidate(c, kept, j); };

    Key bound = kEmptyKey;
    if constexpr (kSelection != Selection::merge) {
        const auto emit = [&](unsigned rank, Key key) {
            const unsigned index = warp_scan::index_of(key);
            out_indices[rank] = static_cast<int>(index);
            out_values[rank] = values[index];
        };
        if (warp_scan::select_by_rank<kWarps>(total, m, key_at, shared_lists, *rank_shared, bound, emit)) return;
    } else {
        (void)rank_shared;
        // The bound: each thread's largest candidate; the m-th largest of
        // those (m distinct candidates at or above it).
        bound = warp_scan::block_bound<kWarps>(total, m, key_at, shared_lists, shared_bound);
    }

    // Each warp's list of the candidates above the bound, batches of 32
    // merged only when a key of theirs beats the warp's m-th.
    warp_scan::WarpList w;
    w.list = kEmptyKey;
    w.threshold = bound == kEmptyKey ? kEmptyKey : bound - 1;
    w.rank = m - 1;
    for (unsigned first = warp * 32; first < total; first += kInFlight * kThreads) {
        Key batch[kInFlight];
#pragma unroll
        for (unsigned j = 0; j < kInFlight; ++j) {
            const unsigned i = first + j * kThreads + lane;
            batch[j] = i < total ? candidate(c, kept, i) : kEmptyKey;
        }
#pragma unroll
        for (unsigned j = 0; j < kInFlight; ++j) {
            const Key key = batch[j] > w.threshold ? batch[j] : kEmptyKey;
            if (!__any_sync(kFullMask, key != kEmptyKey)) continue;
            const Key sorted = warp_scan::sort_across_lanes(key);
            w.list = warp_scan::merge_lists(w.list, __shfl_sync(kFullMask, sorted, 31 - lane));
            w.threshold = max(w.threshold, __shfl_sync(kFullMask, w.list, w.rank));
        }
    }
    const Key mine = warp_scan::merge_block_lists<kWarps>(w.list, shared_lists);
    if (warp == 0 && lane < m) {
        if (mine == kEmptyKey) {
            // Cannot happen (m <= n real keys beat every empty slot): say
            // so with an impossible index, as the reference does.
            out_indices[lane] = -1;
            out_values[lane] = __uint_as_float(0x7FC00000u);
        } else {
            const unsigned index = warp_scan::index_of(mine);
            out_indices[lane] = static_cast<int>(index);
            out_values[lane] = values[index];
        }
    }
}

// Filters the tile at `base` (this lane's kItems floats) against the
// warp's threshold: one compare a float and one vote; the rare keys that
// beat it are appended to the buffer, or, once it is full, merged into the
// warp's list (through `staged`, the warp's 32 slots).
template <unsigned kItems>
__device__ void filter_against_threshold(const float (&items)[kItems], std::size_t base, std::size_t count,
                                         const Candidates& c, Key* staged, warp_scan::WarpList& w) {
    static_assert(kItems <= 32, "the item mask has one bit per item");
    const unsigned lane = threadIdx.x % 32;
    unsigned mine = 0;
#pragma unroll
    for (unsigned item = 0; item < kItems; ++item) {
        if (w.everything || items[item] >= w.lowest) mine |= 1u << item;
    }
    if (!__any_sync(kFullMask, mine != 0)) return;
    // Rare on random data: only the items some lane passes, warp-uniform.
    unsigned any_lane = mine;
    for (unsigned distance = 16; distance > 0; distance /= 2) {
        any_lane |= __shfl_xor_sync(kFullMask, any_lane, distance);
    }
#pragma unroll
    for (unsigned item = 0; item < kItems; ++item) {
        if ((any_lane & (1u << item)) == 0) continue;
        const std::size_t i = warp_scan::item_index(base, item);
        const Key key = warp_scan::pack_key(items[item], i);
        const bool passes = (mine & (1u << item)) != 0 && i < count && key > w.threshold;
        const unsigned lanes = __ballot_sync(kFullMask, passes);
        if (lanes == 0) continue;
        unsigned first = 0;
        if (lane == 0) first = atomicAdd(c.appended, static_cast<unsigned>(__popc(lanes)));
        first = __shfl_sync(kFullMask, first, 0);
        const unsigned place = first + static_cast<unsigned>(__popc(lanes & ((1u << lane) - 1u)));
        const bool room = place < kCapacity;
        if (passes && room) c.keys[place] = key;
        // The buffer is full: the keys that found no room go to the
        // warp's own list, whose m-th key may raise its threshold.
        const unsigned left = __ballot_sync(kFullMask, passes && !room);
        if (left != 0) {
            if (passes && !room) staged[__popc(left & ((1u << lane) - 1u))] = key;
            warp_scan::merge_staged(w, staged, static_cast<unsigned>(__popc(left)));
            warp_scan::update_lowest(w);
        }
    }
}

// The pre-pass's shape: warp_top_k.cuh's fastest for k = 1.
constexpr unsigned kSampleWarps = 16;
constexpr unsigned kSampleVectors = 4;
constexpr unsigned kSampleMinBlocks = 1;

// The group-maxima pre-pass (launch_group_maxima): kSeedGroups blocks of
// kGroupWarps warps, one warp a sample tile. Block g writes the largest key
// of its tiles to maxima[g] (kEmptyKey when it has none): no list, no
// ticket, no last block, so nothing of its own needs zeroing first; block 0
// zeroes `zeroed_words` words at `zeroed` (the main pass's counters and
// ticket: the main pass runs after it in stream order), so the call needs
// no memset either. One launch before the main pass.
constexpr unsigned kGroupWarps = 16;
constexpr unsigned kMaxSeedGroups = 128;  // the workspace's room for maxima

template <unsigned kSeedGroups>
__global__ void __launch_bounds__(kGroupWarps * 32)
    group_maxima_kernel(const float* values, std::size_t count, bool aligned, warp_scan::TileWalk walk, Key* maxima,
                        unsigned* zeroed, unsigned zeroed_words) {
    constexpr unsigned kItems = 4 * kSampleVectors;
    constexpr std::size_t kTile = 32 * kItems;
    __shared__ Key warp_maxima[kGroupWarps];
    // A main pass launched to overlap this one (Overlap::main_pass or all)
    // waits for it (griddepcontrol.wait) before it reads a maximum or a
    // counter.
    warp_scan::allow_dependent_grids();
    const unsigned lane = threadIdx.x % 32;
    const unsigned warp = threadIdx.x / 32;
    if (blockIdx.x == 0) {
        for (unsigned i = threadIdx.x; i < zeroed_words; i += kGroupWarps * 32) zeroed[i] = 0;
    }
    const std::size_t warps = static_cast<std::size_t>(gridDim.x) * kGroupWarps;
    const auto tile_base = [&](std::size_t t) { return (t * walk.step + walk.offset) * kTile; };
    Key best = kEmptyKey;
    // Tile t goes to block t mod gridDim.x (every group has tiles when
    // there are as many as groups), two tiles' loads in flight a warp
    // before either is reduced.
    for (std::size_t t = static_cast<std::size_t>(warp) * gridDim.x + blockIdx.x; t < walk.count; t += 2 * warps) {
        float first[kItems];
        float second[kItems];
        const bool has_second = t + warps < walk.count;
        warp_scan::load_tile(values, count, aligned, tile_base(t), first);
        if (has_second) warp_scan::load_tile(values, count, aligned, tile_base(t + warps), second);
#pragma unroll
        for (unsigned item = 0; item < kItems; ++item) {
            const std::size_t i = warp_scan::item_index(tile_base(t), item);
            if (i < count) best = max(best, warp_scan::pack_key(first[item], i));
        }
        if (has_second) {
#pragma unroll
            for (unsigned item = 0; item < kItems; ++item) {
                const std::size_t i = warp_scan::item_index(tile_base(t + warps), item);
                if (i < count) best = max(best, warp_scan::pack_key(second[item], i));
            }
        }
    }
    for (unsigned distance = 16; distance > 0; distance /= 2) {
        best = max(best, __shfl_xor_sync(kFullMask, best, distance));
    }
    if (lane == 0) warp_maxima[warp] = best;
    __syncthreads();
    if (warp == 0) {
        best = lane < kGroupWarps ? warp_maxima[lane] : kEmptyKey;
        for (unsigned distance = 16; distance > 0; distance /= 2) {
            best = max(best, __shfl_xor_sync(kFullMask, best, distance));
        }
        if (lane == 0) maxima[blockIdx.x] = best;
    }
}

// The main pass's threshold from the group maxima, shared by the block
// (every thread of a block of kThreads calls it, once): the maxima are
// copied to shared memory, and each non-empty one's rank is the number of
// maxima above it (no sort, no shuffle chain: kSeedGroups broadcast reads
// a thread); the one of rank m - 1 writes itself less one to *shared (none
// does when fewer than m groups had a tile: 0, every key passes). The
// maxima are real elements with distinct indices (the groups' tiles are
// disjoint), so m distinct elements lie at or above their m-th largest:
// every one of the array's top m has a key above it less one, for any
// input. On random data the m-th of G maxima of groups of S / G sample
// floats is about the (1 - x G / S) quantile, x the m-th largest of G
// exponential draws: for k = 1 the sample's maximum (n / S keys pass), for
// k = 32 and G = 128 about 1.2 times the sample's own m-th (n m / S), for
// G = 32 about 4 times.
template <unsigned kSeedGroups, unsigned kThreads>
__device__ Key seed_from_maxima(const Key* maxima, unsigned m, Key (&shared_maxima)[kSeedGroups], Key* shared) {
    static_assert(kSeedGroups >= 32 && kSeedGroups <= kMaxSeedGroups, "groups: 32 to kMaxSeedGroups");
    if (threadIdx.x == 0) *shared = kEmptyKey;
    for (unsigned g = threadIdx.x; g < kSeedGroups; g += kThreads) shared_maxima[g] = maxima[g];
    __syncthreads();
    for (unsigned g = threadIdx.x; g < kSeedGroups; g += kThreads) {
        const Key key = shared_maxima[g];
        if (key == kEmptyKey) continue;
        unsigned rank = 0;
#pragma unroll 1
        for (unsigned j = 0; j < kSeedGroups; ++j) rank += shared_maxima[j] > key ? 1u : 0u;
        if (rank == m - 1) *shared = key - 1;
    }
    __syncthreads();
    const Key seed = *shared;
    __syncthreads();  // read by every thread before the selection reuses *shared
    return seed;
}

// The blocks an SM that a main pass seeded by group maxima asks ptxas for
// (its launch bounds' minimum; 0: none asked, as the unseeded kernels): the
// unseeded shapes' own count, so that the seed costs no block an SM (ptxas,
// 2026-11-26: 8 warps x 2 float4 a lane 48 registers, 5 blocks of 256;
// x 4, 57: 4; with Selection::rank the seed took 8 x 2 to 60: 4).
template <unsigned kWarps, unsigned kVectors>
constexpr unsigned kSeededMinBlocks = kWarps != 8 ? 0 : kVectors <= 2 ? 5 : kVectors <= 4 ? 4 : 0;

// The main pass: `seed` holds the pre-pass's threshold (0 when there was
// none: every key beats it). kWarps warps a block, kVectors float4 a lane
// per tile, each warp taking tiles warp, warp + all warps, ...
// kAfterPrePass: launched to overlap the pre-pass (programmatic dependent
// launch, Overlap::main_pass and all): a warp loads its first tile, then
// waits for the pre-pass to finish before it reads the seed or a counter
// (zeroed before the pre-pass ran).
//
// kSeedGroups > 0 (the group-maxima pre-pass, launch_group_maxima): `seed`
// is instead kSeedGroups keys, each the largest of one group of the
// sample, and the threshold is the m-th largest of them, less one (see
// seed_from_maxima).
template <unsigned kWarps, unsigned kVectors, bool kAfterPrePass, Selection kSelection, unsigned kSeedGroups = 0>
__global__ void __launch_bounds__(kWarps * 32, kSeedGroups > 0 ? kSeededMinBlocks<kWarps, kVectors> : 0)
    threshold_filter_kernel(const float* values, std::size_t count, bool aligned, unsigned m, const Key* seed,
                            Candidates c, float* out_values, int* out_indices) {
    constexpr unsigned kItems = 4 * kVectors;
    constexpr std::size_t kTile = 32 * kItems;
    __shared__ Key staged[kWarps][32];  // a warp's keys that found the buffer full
    __shared__ Key shared_lists[kWarps][32];
    __shared__ Key shared_bound;
    __shared__ bool last_block;
    __shared__ warp_scan::MaybeRankShared<kSelection != Selection::merge> rank_shared;  // 4 KB for rank, else none
    __shared__ Key seed_maxima[kSeedGroups > 0 ? kSeedGroups : 1];  // the group maxima, when kSeedGroups > 0
    const unsigned lane = threadIdx.x % 32;
    const unsigned warp = threadIdx.x / 32;

    const std::size_t tiles = (count + kTile - 1) / kTile;
    const std::size_t warps = static_cast<std::size_t>(gridDim.x) * kWarps;
    const std::size_t first_tile = static_cast<std::size_t>(blockIdx.x) * kWarps + warp;
    // The first tile's loads go out before the seed is read (and, overlapped,
    // before the pre-pass is waited for): they do not depend on it.
    float items[kItems];
    if (first_tile < tiles) warp_scan::load_tile(values, count, aligned, first_tile * kTile, items);
    if constexpr (kAfterPrePass) warp_scan::wait_for_prior_grid();

    warp_scan::WarpList w;
    w.list = kEmptyKey;
    if constexpr (kSeedGroups == 0) {
        (void)seed_maxima;
        w.threshold = *seed;
    } else {
        w.threshold = seed_from_maxima<kSeedGroups, kWarps * 32>(seed, m, seed_maxima, &shared_bound);
    }
    w.rank = m - 1;
    warp_scan::update_lowest(w);

    for (std::size_t tile = first_tile; tile < tiles; tile += warps) {
        if (tile != first_tile) warp_scan::load_tile(values, count, aligned, tile * kTile, items);
        filter_against_threshold(items, tile * kTile, count, c, staged[warp], w);
    }

    // A block whose warps kept lists writes their merge as a list of its
    // own; most blocks have none.
    const Key list = warp_scan::merge_block_lists<kWarps>(w.list, shared_lists);
    if (warp == 0 && __any_sync(kFullMask, list != kEmptyKey)) {
        unsigned slot = 0;
        if (lane == 0) slot = atomicAdd(c.list_count, 1u);
        slot = __shfl_sync(kFullMask, slot, 0);
        c.lists[static_cast<std::size_t>(slot) * 32 + lane] = list;
    }
    // Every key and list this block wrote is visible to every block before
    // the ticket says the block is done.
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) last_block = atomicAdd(c.ticket, 1u) == gridDim.x - 1;
    __syncthreads();
    if (!last_block) return;
    __threadfence();
    select_candidates<kWarps, kSelection>(c, values, m, shared_lists, &shared_bound, rank_shared.get(), out_values,
                                          out_indices);
}

void check_arguments(std::size_t n, int k) {
    if (k < 0 || k > kMaxThresholdK) {
        throw std::invalid_argument("sampled_threshold::top_k: k must be 0 to " + std::to_string(kMaxThresholdK) +
                                    ", not " + std::to_string(k));
    }
    if (n > static_cast<std::size_t>(INT_MAX)) {
        throw std::invalid_argument("sampled_threshold::top_k: n must be at most INT_MAX, not " + std::to_string(n));
    }
}

// Blocks of the main pass: as many as fit on the GPU at once, no more than
// there are warp tiles for.
template <unsigned kWarps, unsigned kVectors, bool kAfterPrePass, Selection kSelection, unsigned kSeedGroups = 0>
unsigned filter_blocks(std::size_t n) {
    return warp_scan::resident_blocks<kWarps, kVectors>(
        threshold_filter_kernel<kWarps, kVectors, kAfterPrePass, kSelection, kSeedGroups>, n, 0);
}

// The workspace: the counters (appended, list_count: 8 bytes), warp_top_k's
// header (its tickets: this pass's and the pre-pass's; its slots: the
// seed), the lists (as many as the main pass or the pre-pass has blocks),
// then the buffer.
constexpr std::size_t kCounterBytes = 2 * sizeof(unsigned);

// The lists: one for each block of the pre-pass or of any main pass of
// kWarps warps (every Overlap and Selection): at most as many as a full
// SM's threads make of such blocks on each SM, no more than the warp tiles
// need (no main-pass kernel is instantiated to size it).
template <unsigned kWarps, unsigned kVectors>
std::size_t list_slots(std::size_t n) {
    using namespace warp_scan;
    const Residency r = residency(warp_top_k_kernel<kSampleWarps, kSampleVectors, kSampleMinBlocks>, kSampleWarps * 32);
    const unsigned most_per_sm = static_cast<unsigned>(std::max(r.threads_per_sm, 1)) / (kWarps * 32);
    return std::max(wave_blocks<kWarps, kVectors>(n, most_per_sm, r.sm_count),
                    grid_blocks<kSampleWarps, kSampleVectors, kSampleMinBlocks>(n));
}

// Zeroes words[0, count), one a thread, and lets the pre-pass, launched to
// overlap it, start at once (it waits for this grid before it touches them).
constexpr unsigned kZeroThreads = 256;
__global__ void zero_kernel(unsigned* words, unsigned count) {
    warp_scan::allow_dependent_grids();
    if (threadIdx.x < count) words[threadIdx.x] = 0;
}

// Whether launch_sample_pass launches the pre-pass for n floats (the same
// test).
template <unsigned kSampleTiles>
bool tile_count_allows_sample(std::size_t n) {
    return kSampleTiles > 0 && warp_scan::tile_count<kSampleVectors>(n) >= 2 * std::size_t{kSampleTiles};
}

// Where the candidates of a top_k call with this workspace go.
template <unsigned kWarps, unsigned kVectors>
Candidates candidates_of(void* workspace, std::size_t n) {
    auto* bytes = static_cast<unsigned char*>(workspace);
    const warp_scan::Header h = warp_scan::header_of(bytes + kCounterBytes);
    return Candidates{h.lists + list_slots<kWarps, kVectors>(n) * 32, reinterpret_cast<unsigned*>(bytes), h.lists,
                      reinterpret_cast<unsigned*>(bytes) + 1, h.ticket};
}

// The group-maxima pre-pass (group_maxima_kernel): kSeedGroups blocks over
// kSampleTiles tiles of 512 floats spread evenly over the array as
// launch_sample_pass spreads them, or over every tile when the array has
// fewer than 2 kSampleTiles; block 0 zeroes the `zeroed_words` words at
// `zeroed`. Always a plain launch: it must not overlap the kernel before
// it (the previous call's main pass, whose last block still reads the
// counters it zeroes).
template <unsigned kSeedGroups>
void launch_group_maxima(const float* values, std::size_t n, bool aligned, unsigned sample_tiles, Key* maxima,
                         unsigned* zeroed, unsigned zeroed_words) {
    const std::size_t tiles = warp_scan::tile_count<kSampleVectors>(n);
    warp_scan::TileWalk walk{tiles, 1, 0};
    if (sample_tiles > 0 && tiles >= 2 * std::size_t{sample_tiles}) {
        const std::size_t step = tiles / sample_tiles;
        walk = warp_scan::TileWalk{sample_tiles, step, step - 1};
    }
    group_maxima_kernel<kSeedGroups>
        <<<kSeedGroups, kGroupWarps * 32>>>(values, n, aligned, walk, maxima, zeroed, zeroed_words);
    COURSE_CUDA_CHECK(cudaGetLastError());
}

// The main pass's last block alone (the bench's timing breakdown): one
// block selects again from the candidates a finished call left.
template <unsigned kWarps, Selection kSelection>
__global__ void __launch_bounds__(kWarps * 32)
    selection_kernel(const float* values, unsigned m, Candidates c, float* out_values, int* out_indices) {
    __shared__ Key shared_lists[kWarps][32];
    __shared__ Key shared_bound;
    __shared__ warp_scan::MaybeRankShared<kSelection != Selection::merge> rank_shared;
    select_candidates<kWarps, kSelection>(c, values, m, shared_lists, &shared_bound, rank_shared.get(), out_values,
                                          out_indices);
}

}  // namespace

/// How top_k's launches follow one another (programmatic dependent launch:
/// a GPU of compute capability 9.0 or more; on the emulator always none).
enum class Overlap {
    /// A memset of the counters, the pre-pass, the main pass, each after
    /// the one before has finished.
    none,
    /// The main pass may start while the pre-pass runs: its blocks are
    /// scheduled and issue their first tile's loads, then each warp waits
    /// for the pre-pass (griddepcontrol.wait: finished, its writes visible)
    /// before it reads the seed or a counter.
    main_pass,
    /// Also the pre-pass overlaps the zeroing of the counters (a one-block
    /// kernel instead of the memset, which no grid can overlap): the
    /// pre-pass's warps load their sample tiles, then wait for it before
    /// they read a slot. The main pass waits for the pre-pass, which had
    /// waited for the zeroing.
    all,
};

/// The workspace for n elements and k <= 32 results (0 when n = 0 or k = 0):
/// the counters, the header, the lists, the buffer, then kMaxSeedGroups
/// keys for the group-maxima pre-pass's maxima.
template <unsigned kWarps, unsigned kVectors>
std::size_t top_k_workspace_bytes(std::size_t n, int k) {
    check_arguments(n, k);
    if (n == 0 || k == 0) return 0;
    return kCounterBytes + warp_scan::kHeaderBytes +
           (list_slots<kWarps, kVectors>(n) * 32 + kCapacity + kMaxSeedGroups) * sizeof(Key);
}

/// lesson11::top_k's contract for k <= 32: the main pass with kWarps warps
/// a block and kVectors float4 a lane per tile, its threshold from a
/// pre-pass over kSampleTiles tiles of 512 floats (none when the array has fewer
/// than 2 kSampleTiles of them).
///
/// kOverlap (see Overlap; a GPU of compute capability 9.0 or more, ignored
/// on the emulator, whose launches run one after the other anyway): the
/// same kernels, the same answer, with less time between them.
///
/// kSelection: how the last blocks select (see Selection).
///
/// kSeedGroups > 0: the group-maxima pre-pass instead (group_maxima_kernel:
/// kSeedGroups blocks, each the largest key of its share of the same
/// sample, the main pass's threshold the m-th largest of those, less one;
/// block 0 zeroes the counters): one launch before the main pass instead
/// of a memset and a pre-pass with a ticket and a last block. Overlap::all
/// is then main_pass's (nothing to zero before it); rank_and_rank_seed is
/// rank's (no pre-pass last block).
///
/// after_pre_pass (the bench's timing breakdown, Overlap::none only): an
/// event recorded between the pre-pass and the main pass.
template <unsigned kWarps, unsigned kVectors, unsigned kSampleTiles, Overlap kOverlap = Overlap::none,
          Selection kSelection = Selection::merge, unsigned kSeedGroups = 0>
void top_k(const float* values, std::size_t n, int k, float* out_values, int* out_indices, void* workspace,
           std::size_t workspace_bytes, cudaEvent_t after_pre_pass = nullptr) {
    check_arguments(n, k);
    if (n == 0 || k == 0) return;
    const std::size_t needed = top_k_workspace_bytes<kWarps, kVectors>(n, k);
    if (workspace_bytes < needed) {
        throw std::invalid_argument("sampled_threshold::top_k: the workspace has " + std::to_string(workspace_bytes) +
                                    " bytes, top_k_workspace_bytes says " + std::to_string(needed));
    }
    const warp_scan::Header h = warp_scan::header_of(static_cast<unsigned char*>(workspace) + kCounterBytes);
    const std::size_t lists = list_slots<kWarps, kVectors>(n);
    const Candidates c = candidates_of<kWarps, kVectors>(workspace, n);
    const unsigned m = static_cast<unsigned>(std::min(static_cast<std::size_t>(k), n));
    const bool aligned = reinterpret_cast<std::uintptr_t>(values) % sizeof(float4) == 0;
    // The main pass's kernel: rank_and_rank_seed's is rank's.
    constexpr Selection kMain = kSelection == Selection::merge ? Selection::merge : Selection::rank;
    if constexpr (kSeedGroups > 0) {
        // The counters (appended, list_count) and the main pass's ticket, the
        // first words of the header: zeroed by the pre-pass's block 0.
        constexpr unsigned kGroupZeroedWords = (kCounterBytes + warp_scan::kTicketBytes) / sizeof(unsigned);
        Key* const maxima = c.keys + kCapacity;  // the maxima: after the buffer
        launch_group_maxima<kSeedGroups>(values, n, aligned, kSampleTiles, maxima, static_cast<unsigned*>(workspace),
                                         kGroupZeroedWords);
        if (after_pre_pass != nullptr) COURSE_CUDA_CHECK(cudaEventRecord(after_pre_pass));
#ifndef __CUDACC_EMULATOR__
        if constexpr (kOverlap != Overlap::none) {
            warp_scan::launch_overlapped(threshold_filter_kernel<kWarps, kVectors, true, kMain, kSeedGroups>,
                                         filter_blocks<kWarps, kVectors, true, kMain, kSeedGroups>(n), kWarps * 32,
                                         values, n, aligned, m, static_cast<const Key*>(maxima), c, out_values,
                                         out_indices);
            return;
        }
#endif
        threshold_filter_kernel<kWarps, kVectors, false, kMain, kSeedGroups>
            <<<filter_blocks<kWarps, kVectors, false, kMain, kSeedGroups>(n), kWarps * 32>>>(
                values, n, aligned, m, maxima, c, out_values, out_indices);
        COURSE_CUDA_CHECK(cudaGetLastError());
        return;
    }
    constexpr std::size_t kZeroedWords = (kCounterBytes + warp_scan::kHeaderBytes) / sizeof(unsigned);
    static_assert(kZeroedWords <= kZeroThreads, "one word a thread");
    // (On the emulator the zeroing kernel and the pre-pass are launched, plainly.)
    const bool overlap_sample = kOverlap == Overlap::all && tile_count_allows_sample<kSampleTiles>(n);
    if (overlap_sample) {
        zero_kernel<<<1, kZeroThreads>>>(static_cast<unsigned*>(workspace), static_cast<unsigned>(kZeroedWords));
        COURSE_CUDA_CHECK(cudaGetLastError());
    } else {
        COURSE_CUDA_CHECK(cudaMemsetAsync(workspace, 0, kCounterBytes + warp_scan::kHeaderBytes));
    }
    const bool sampled =
        warp_scan::launch_sample_pass<kSampleWarps, kSampleVectors, kSampleMinBlocks,
                                       kSelection == Selection::rank_and_rank_seed>(
        values, n, aligned, m, kSampleTiles, static_cast<unsigned>(lists), h, overlap_sample);
#ifndef __CUDACC_EMULATOR__
    if (kOverlap != Overlap::none && sampled) {
        // Only behind the pre-pass: behind the memset there is no grid to
        // overlap with.
        warp_scan::launch_overlapped(threshold_filter_kernel<kWarps, kVectors, true, kMain>,
                                     filter_blocks<kWarps, kVectors, true, kMain>(n), kWarps * 32, values, n,
                                     aligned, m,
                                     static_cast<const Key*>(h.slots), c, out_values, out_indices);
        return;
    }
#else
    (void)sampled;
#endif
    if (after_pre_pass != nullptr) COURSE_CUDA_CHECK(cudaEventRecord(after_pre_pass));
    threshold_filter_kernel<kWarps, kVectors, false, kMain>
        <<<filter_blocks<kWarps, kVectors, false, kMain>(n), kWarps * 32>>>(values, n, aligned, m, h.slots, c,
                                                                                out_values, out_indices);
    COURSE_CUDA_CHECK(cudaGetLastError());
}

/// The bench's timing breakdown: the main pass's selection alone, one
/// block launched over the candidates that the last top_k<kWarps, kVectors,
/// ...> call with this workspace left (the same answer again).
template <unsigned kWarps, unsigned kVectors, Selection kSelection>
void select_again(const float* values, std::size_t n, int k, float* out_values, int* out_indices, void* workspace) {
    check_arguments(n, k);
    if (n == 0 || k == 0) return;
    constexpr Selection kMain = kSelection == Selection::merge ? Selection::merge : Selection::rank;
    const unsigned m = static_cast<unsigned>(std::min(static_cast<std::size_t>(k), n));
    selection_kernel<kWarps, kMain><<<1, kWarps * 32>>>(values, m, candidates_of<kWarps, kVectors>(workspace, n),
                                                        out_values, out_indices);
    COURSE_CUDA_CHECK(cudaGetLastError());
}

/// The bench's timing breakdown: the candidates the last top_k call with
/// this workspace left, in the buffer and in lists of 32.
struct CandidateCount {
    unsigned appended;
    unsigned lists;
};

inline CandidateCount candidate_count(const void* workspace) {
    unsigned counters[2] = {0, 0};
    COURSE_CUDA_CHECK(cudaMemcpy(counters, workspace, sizeof counters, cudaMemcpyDeviceToHost));
    return {counters[0], counters[1]};
}

}  // namespace lesson11::sampled_threshold
