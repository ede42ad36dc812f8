// Lesson 15 reference solution: exclusive prefix sums, from a warp to the
// whole device. Read lessons/15-prefix-scan/README.md for the ideas; the
// comments here say why each step is written the way it is.
#include <scan.hpp>

#include <course/cuda_check.hpp>

#include <cstddef>
#include <cstdint>
#include <cuda/atomic>
#include <cuda_runtime.h>

namespace lesson15 {

namespace {

constexpr unsigned kFullMask = 0xffffffffu;

// ---------------------------------------------------------------- stage 1: the warp

// Inclusive scan of one value per lane (Hillis-Steele over the warp): at step
// d every lane adds the value of the lane d below it, so after log2(32) = 5
// steps lane i holds the sum of lanes 0..i. Shuffles exchange registers
// directly: no shared memory and no barrier. All 32 lanes must take part.
template <class T>
__device__ T warp_inclusive_scan(T value) {
    const unsigned lane = threadIdx.x % 32;
    for (unsigned delta = 1; delta < 32; delta *= 2) {
        const T below = __shfl_up_sync(kFullMask, value, delta);
        if (lane >= delta) value += below;
    }
    return value;
}

// The exclusive scan from the inclusive one: each lane takes its left
// neighbour's inclusive sum (lane 0 takes 0). Subtracting the lane's own
// value would also work for ints, but not for floats: (a + b) - b is not
// always a.
template <class T>
__device__ T warp_exclusive_from_inclusive(T inclusive) {
    const T left = __shfl_up_sync(kFullMask, inclusive, 1);
    return threadIdx.x % 32 == 0 ? T(0) : left;
}

__global__ void warp_scan_kernel(const int* in, int* out, std::size_t n) {
    const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    // Lanes past the end take part with 0: the shuffles need every lane.
    const int value = i < n ? in[i] : 0;
    const int exclusive = warp_exclusive_from_inclusive(warp_inclusive_scan(value));
    if (i < n) out[i] = exclusive;
}

// ---------------------------------------------------------------- stage 2: the block

constexpr unsigned kBlockScanThreads = kBlockSegment / 2;  // two elements per thread

// The work-efficient (Blelloch) scan of one segment in shared memory.
__global__ void block_scan_kernel(const int* in, int* out, std::size_t n) {
    __shared__ int tile[kBlockSegment];
    const std::size_t base = static_cast<std::size_t>(blockIdx.x) * kBlockSegment;
    const unsigned t = threadIdx.x;

    // Coalesced loads: thread t reads elements t and t + 512. A partial last
    // segment is padded with 0, which changes no sum.
    for (unsigned k = t; k < kBlockSegment; k += kBlockScanThreads) tile[k] = base + k < n ? in[base + k] : 0;

    // Up-sweep (reduce): at each level half as many threads add a left
    // subtree's sum into its right neighbour; `offset` is the subtree size.
    // Afterwards tile[1023] holds the whole segment's sum.
    unsigned offset = 1;
    for (unsigned active = kBlockSegment / 2; active > 0; active /= 2) {
        __syncthreads();  // the level below must be complete before it is read
        if (t < active) {
            const unsigned right = offset * (2 * t + 2) - 1;
            tile[right] += tile[right - offset];
        }
        offset *= 2;
    }

    // Down-sweep: the root becomes 0 (the exclusive prefix of the segment),
    // then each node passes its prefix to its left child and prefix + left
    // sum to its right child, down to the leaves. Thread 0 did the last
    // up-sweep step itself, so it may clear the root without a barrier.
    if (t == 0) tile[kBlockSegment - 1] = 0;
    for (unsigned active = 1; active < kBlockSegment; active *= 2) {
        offset /= 2;
        __syncthreads();  // the level above must be complete before it is read
        if (t < active) {
            const unsigned right = offset * (2 * t + 2) - 1;
            const unsigned left = right - offset;
            const int left_sum = tile[left];
            tile[left] = tile[right];
            tile[right] += left_sum;
        }
    }
    __syncthreads();  // every leaf is final before any thread copies one out

    for (unsigned k = t; k < kBlockSegment; k += kBlockScanThreads) {
        if (base + k < n) out[base + k] = tile[k];
    }
}

// ---------------------------------------------------------------- the device-wide scans' tile

// A tile is 256 threads x 16 consecutive elements = 4096 elements. Many
// elements per thread make the scan memory-bound: each thread adds its 16
// serially in registers, and only one value per thread enters the warp and
// block steps.
constexpr unsigned kThreads = 256;
constexpr unsigned kWarps = kThreads / 32;
constexpr unsigned kItems = 16;
constexpr std::size_t kTileItems = std::size_t{kThreads} * kItems;
static_assert(kTileItems >= kMinTileItems, "the workspace is sized for tiles of at least kMinTileItems");
static_assert(kItems % 4 == 0, "a thread's items are moved as 16-byte vectors");

// Each warp moves its own 32 x 16 = 512 consecutive elements through a
// shared-memory area of its own (see load_items), with one padding element
// after every 32: kExchangeItems per warp.
constexpr unsigned kWarpItems = 32 * kItems;
constexpr unsigned kExchangeItems = kWarpItems + kWarpItems / 32;

// Element e of a warp's 512 lives at padded(e) in its area: one gap every 32
// elements (128 bytes, the 32 banks) shifts each row of 32 by one bank, so
// that neither the striped nor the blocked order below has two lanes of a
// warp on the same bank.
__device__ unsigned padded(unsigned e) { return e + e / 32; }

template <class T>
struct Vector4;
template <>
struct Vector4<int> {
    using type = int4;
};
template <>
struct Vector4<float> {
    using type = float4;
};

// Loads the 16 elements of a thread of the tile that starts at `tile_first`
// (element tile_first + 16 * threadIdx.x on), 0 past the end. `exchange` is
// shared memory for kWarps * kExchangeItems elements.
//
// A thread scans 16 *consecutive* elements, but loading them as four
// 16-byte vectors per thread puts neighbouring lanes 64 bytes apart: every
// load instruction of a warp then touches 2 KiB of which it uses half, and
// the four of them fetch the same lines in turn. Instead each warp loads its
// 512 elements striped: at step q lane i takes vector 32q + i, so one
// instruction reads 512 contiguous bytes (four whole 128-byte lines), then
// the warp transposes them through shared memory into the blocked order the
// scan needs (lane i takes elements 16i .. 16i + 15). Only the warp's own
// lanes share its area, so __syncwarp() orders it: no block barrier. This
// alone took the single pass of 2^28 ints from 1.17 ms to 0.93 ms on an H100.
//
// __ldcs ("cache streaming") marks the lines as used once, to be evicted
// first: each element is read exactly once, and the L2 is better kept for
// the status words the look-backs read (about 3% faster on the H100).
template <class T>
__device__ void load_items(const T* in, std::size_t n, std::size_t tile_first, T* exchange, T (&items)[kItems]) {
    const unsigned lane = threadIdx.x % 32;
    const unsigned warp = threadIdx.x / 32;
    const std::size_t first = tile_first + std::size_t{warp} * kWarpItems;  // the warp's first element
    T* area = exchange + warp * kExchangeItems;
    const bool aligned = reinterpret_cast<std::uintptr_t>(in + first) % 16 == 0;
    if (first + kWarpItems <= n && aligned) {
        const auto* vectors = reinterpret_cast<const typename Vector4<T>::type*>(in + first);
        for (unsigned q = 0; q < kItems / 4; ++q) {
            const unsigned v = q * 32 + lane;  // striped: the warp's 32 lanes read 512 contiguous bytes
            const auto x = __ldcs(vectors + v);
            const unsigned e = padded(4 * v);  // the four lie within one row of 32: consecutive
            area[e] = x.x;
            area[e + 1] = x.y;
            area[e + 2] = x.z;
            area[e + 3] = x.w;
        }
    } else {
        // A partial (or unaligned) warp's share: one element per lane per
        // step, still striped, with 0 past the end.
        for (unsigned k = 0; k < kItems; ++k) {
            const unsigned e = k * 32 + lane;
            area[padded(e)] = first + e < n ? in[first + e] : T(0);
        }
    }
    __syncwarp();  // the warp's stores to its area before its lanes read them
    for (unsigned k = 0; k < kItems; ++k) items[k] = area[padded(lane * kItems + k)];
    __syncwarp();  // every lane has its items before the area is written again
}

// Writes the exclusive scan of the thread's items, starting from `running`
// (the sum of everything before the thread's first element), for the tile
// that starts at `tile_first`: the reverse of load_items, each lane writes
// its 16 results in blocked order to its warp's area, then the warp stores
// them striped, 512 contiguous bytes per instruction, with __stcs (written
// once, not read again: evict first).
template <class T>
__device__ void store_exclusive(T* out, std::size_t n, std::size_t tile_first, const T (&items)[kItems], T running,
                                T* exchange) {
    const unsigned lane = threadIdx.x % 32;
    const unsigned warp = threadIdx.x / 32;
    const std::size_t first = tile_first + std::size_t{warp} * kWarpItems;
    T* area = exchange + warp * kExchangeItems;
    for (unsigned k = 0; k < kItems; ++k) {
        area[padded(lane * kItems + k)] = running;
        running += items[k];
    }
    __syncwarp();
    const bool aligned = reinterpret_cast<std::uintptr_t>(out + first) % 16 == 0;
    if (first + kWarpItems <= n && aligned) {
        auto* vectors = reinterpret_cast<typename Vector4<T>::type*>(out + first);
        for (unsigned q = 0; q < kItems / 4; ++q) {
            const unsigned v = q * 32 + lane;
            const unsigned e = padded(4 * v);
            const typename Vector4<T>::type x = {area[e], area[e + 1], area[e + 2], area[e + 3]};
            __stcs(vectors + v, x);
        }
    } else {
        for (unsigned k = 0; k < kItems; ++k) {
            const unsigned e = k * 32 + lane;
            if (first + e < n) out[first + e] = area[padded(e)];
        }
    }
    __syncwarp();  // the area is read before a next load_items writes it
}

// The block's scan of its threads' totals: returns the tile's sum, and sets
// `thread_prefix` to the sum of the items of every thread before this one.
// `warp_totals` is shared memory for kWarps values. Ends after a barrier, so
// the caller may reuse warp_totals after another barrier.
template <class T>
__device__ T block_scan(const T (&items)[kItems], T* warp_totals, T& thread_prefix) {
    T thread_total = T(0);
    for (unsigned k = 0; k < kItems; ++k) thread_total += items[k];

    const T inclusive = warp_inclusive_scan(thread_total);
    const T within_warp = warp_exclusive_from_inclusive(inclusive);
    const unsigned warp = threadIdx.x / 32;
    if (threadIdx.x % 32 == 31) warp_totals[warp] = inclusive;  // the last lane holds the warp's sum
    __syncthreads();

    // Every thread adds the (at most 8) warp sums itself: cheaper than a
    // second warp scan and another barrier, and the same order everywhere.
    T warp_prefix = T(0);
    T tile_total = T(0);
    for (unsigned w = 0; w < kWarps; ++w) {
        if (w == warp) warp_prefix = tile_total;
        tile_total += warp_totals[w];
    }
    thread_prefix = warp_prefix + within_warp;
    return tile_total;
}

std::size_t tile_count(std::size_t n) { return (n + kTileItems - 1) / kTileItems; }

// ---------------------------------------------------------------- stage 3: reduce-then-scan

// Pass 1: the sum of each tile.
template <class T>
__global__ void __launch_bounds__(kThreads) tile_sums_kernel(const T* in, std::size_t n, T* sums) {
    __shared__ T exchange[kWarps * kExchangeItems];
    __shared__ T warp_totals[kWarps];
    T items[kItems];
    load_items(in, n, blockIdx.x * kTileItems, exchange, items);
    T thread_prefix;
    const T total = block_scan(items, warp_totals, thread_prefix);
    if (threadIdx.x == 0) sums[blockIdx.x] = total;
}

// Pass 2: one block scans the tile sums in place, a tile of them at a time,
// carrying the running total from one to the next.
template <class T>
__global__ void __launch_bounds__(kThreads) scan_sums_kernel(T* sums, std::size_t count) {
    __shared__ T exchange[kWarps * kExchangeItems];
    __shared__ T warp_totals[kWarps];
    T carry = T(0);
    for (std::size_t base = 0; base < count; base += kTileItems) {
        T items[kItems];
        load_items(sums, count, base, exchange, items);
        T thread_prefix;
        const T total = block_scan(items, warp_totals, thread_prefix);
        store_exclusive(sums, count, base, items, carry + thread_prefix, exchange);
        carry += total;
        __syncthreads();  // warp_totals is rewritten by the next round
    }
}

// Pass 3: each tile scanned again, from its tile's scanned sum.
template <class T>
__global__ void __launch_bounds__(kThreads) scan_tiles_kernel(const T* in, T* out, std::size_t n, const T* sums) {
    __shared__ T exchange[kWarps * kExchangeItems];
    __shared__ T warp_totals[kWarps];
    const std::size_t first = blockIdx.x * kTileItems;
    T items[kItems];
    load_items(in, n, first, exchange, items);
    T thread_prefix;
    block_scan(items, warp_totals, thread_prefix);
    store_exclusive(out, n, first, items, sums[blockIdx.x] + thread_prefix, exchange);
}

template <class T>
void reduce_then_scan(const T* in, T* out, std::size_t n, void* workspace) {
    if (n == 0) return;
    const std::size_t tiles = tile_count(n);
    T* sums = reinterpret_cast<T*>(static_cast<char*>(workspace) + 256);
    tile_sums_kernel<<<static_cast<unsigned>(tiles), kThreads>>>(in, n, sums);
    COURSE_CUDA_CHECK(cudaGetLastError());
    scan_sums_kernel<<<1, kThreads>>>(sums, tiles);
    COURSE_CUDA_CHECK(cudaGetLastError());
    scan_tiles_kernel<<<static_cast<unsigned>(tiles), kThreads>>>(in, out, n, sums);
    COURSE_CUDA_CHECK(cudaGetLastError());
}

// ---------------------------------------------------------------- stage 4: single pass, decoupled look-back

// A tile's status: nothing published yet, its own sum (the aggregate), or
// its inclusive prefix (the sum of every element up to its end).
constexpr unsigned kInvalid = 0;
constexpr unsigned kAggregate = 1;
constexpr unsigned kPrefix = 2;

// A tile's status and its value share one 8-byte word: the status in the
// high 32 bits, the value's bits (int or float) in the low 32. One store
// publishes both at once and one load reads both, so a reader can never see
// a status with a value not yet written, and no fence is needed between
// them. (With a flag and a value in two words, the writer must store the
// value, then the flag with release order, and the reader load the flag
// with acquire order before the value: the lesson text explains it. The
// fences that takes cost time at every tile, and each look-back step two
// dependent loads.)
using StatusWord = unsigned long long;
using DeviceWord = cuda::atomic_ref<StatusWord, cuda::thread_scope_device>;

__device__ unsigned value_bits(int value) { return static_cast<unsigned>(value); }
__device__ unsigned value_bits(float value) { return __float_as_uint(value); }
__device__ void from_bits(unsigned bits, int& value) { value = static_cast<int>(bits); }
__device__ void from_bits(unsigned bits, float& value) { value = __uint_as_float(bits); }

template <class T>
__device__ StatusWord pack(unsigned state, T value) {
    return static_cast<StatusWord>(state) << 32 | value_bits(value);
}

template <class T>
__device__ T unpack_value(StatusWord word) {
    T value;
    from_bits(static_cast<unsigned>(word), value);
    return value;
}

__device__ unsigned unpack_state(StatusWord word) { return static_cast<unsigned>(word >> 32); }

// The workspace: a tile counter in the 256-byte header, then a status word per tile.
struct TileStatus {
    unsigned* counter;
    StatusWord* words;
};

TileStatus tile_status(void* workspace) {
    char* base = static_cast<char*>(workspace);
    return {reinterpret_cast<unsigned*>(base), reinterpret_cast<StatusWord*>(base + 256)};
}

// Publishes `value` with status `state` for `tile`, in one relaxed atomic
// store: the word carries everything a reader needs.
template <class T>
__device__ void publish(const TileStatus& status, unsigned tile, unsigned state, T value) {
    DeviceWord(status.words[tile]).store(pack(state, value), cuda::memory_order_relaxed);
}

// How long a look-back waits before it first reads its predecessors' words,
// and between two reads of a word whose tile has published nothing yet, in
// nanoseconds: CUB's values for 4-byte sums on the H100 (its sm90 tuning,
// fixed_delay_constructor_t<648, 1245> for int). See look_back.
constexpr unsigned kFirstPollDelayNs = 1250;
constexpr unsigned kPollDelayNs = 650;

// Warp 0 looks back over the tiles before `tile`, 32 at a time (lane i at
// tile - 1 - i, then 32 further back ...), adding aggregates until it meets
// a tile with its prefix published; returns the sum of everything before `tile`.
//
// A sleeping warp costs nothing: its SM runs the other blocks' loads and
// stores meanwhile. Polling in a tight loop does cost (most likely; not
// profiled): every waiting warp of the GPU reads the same few lines of
// status words (16 tiles per 128-byte line) in the L2 as fast as it can,
// while the blocks that will publish write there, and a first poll right
// after the block's own publication mostly finds nothing yet. So the warp
// sleeps (__nanosleep) before its first poll, about the time a publication
// takes to reach the L2, and between polls of a tile not ready yet. On the
// H100 this took the single pass of 2^28 ints from 0.93 ms to 0.84 ms;
// sleeping only between polls, not before the first, gained about 1%.
template <class T>
__device__ T look_back(const TileStatus& status, unsigned tile) {
    const unsigned lane = threadIdx.x % 32;
    __nanosleep(kFirstPollDelayNs);
    T exclusive = T(0);
    long long nearest = static_cast<long long>(tile) - 1;
    for (;;) {
        const long long predecessor = nearest - lane;
        unsigned state = kPrefix;  // before tile 0: a prefix of 0
        T value = T(0);
        if (predecessor >= 0) {
            // Spin until that tile has published something. It started
            // before us (its index came first from the counter), so it is
            // running and will publish: the wait ends. An atomic load, never
            // a plain one, which the compiler could hoist out of the loop.
            DeviceWord word(status.words[predecessor]);
            StatusWord seen;
            while (unpack_state(seen = word.load(cuda::memory_order_relaxed)) == kInvalid) {
                __nanosleep(kPollDelayNs);
            }
            state = unpack_state(seen);
            value = unpack_value<T>(seen);
        }
        // The nearest lane holding a prefix ends the look-back: add the
        // values of the lanes up to it, and no further (farther tiles are
        // already inside that prefix).
        const unsigned with_prefix = __ballot_sync(kFullMask, state == kPrefix);
        const unsigned last = with_prefix != 0 ? static_cast<unsigned>(__ffs(static_cast<int>(with_prefix))) - 1 : 31;
        T part = lane <= last ? value : T(0);
        for (unsigned delta = 16; delta > 0; delta /= 2) part += __shfl_down_sync(kFullMask, part, delta);
        exclusive += __shfl_sync(kFullMask, part, 0);
        if (with_prefix != 0) return exclusive;
        nearest -= 32;
    }
}

template <class T>
__global__ void __launch_bounds__(kThreads) single_pass_kernel(const T* in, T* out, std::size_t n,
                                                               TileStatus status) {
    __shared__ T exchange[kWarps * kExchangeItems];
    __shared__ T warp_totals[kWarps];
    __shared__ unsigned tile_index;
    __shared__ T tile_prefix;

    // The tile index comes from a counter, in the order blocks really start,
    // not from blockIdx.x: a GPU starts blocks in no promised order, and a
    // block that waits for a tile whose block has not started (and cannot
    // start while the waiting blocks hold every SM) waits forever.
    if (threadIdx.x == 0) tile_index = atomicAdd(status.counter, 1u);
    __syncthreads();
    const unsigned tile = tile_index;

    const std::size_t first = std::size_t{tile} * kTileItems;
    T items[kItems];
    load_items(in, n, first, exchange, items);
    T thread_prefix;
    const T aggregate = block_scan(items, warp_totals, thread_prefix);

    if (threadIdx.x < 32) {
        T prefix = T(0);
        if (tile == 0) {
            if (threadIdx.x == 0) publish(status, 0, kPrefix, aggregate);
        } else {
            // The aggregate first, at once: a later tile can use it without
            // waiting for this tile's own look-back.
            if (threadIdx.x == 0) publish(status, tile, kAggregate, aggregate);
            prefix = look_back<T>(status, tile);
            if (threadIdx.x == 0) publish(status, tile, kPrefix, prefix + aggregate);
        }
        if (threadIdx.x == 0) tile_prefix = prefix;
    }
    __syncthreads();
    store_exclusive(out, n, first, items, tile_prefix + thread_prefix, exchange);
}

template <class T>
void single_pass(const T* in, T* out, std::size_t n, void* workspace) {
    if (n == 0) return;
    const std::size_t tiles = tile_count(n);
    // The counter and every status word must start at 0 (kInvalid).
    COURSE_CUDA_CHECK(cudaMemsetAsync(workspace, 0, 256 + tiles * sizeof(StatusWord)));
    single_pass_kernel<<<static_cast<unsigned>(tiles), kThreads>>>(in, out, n, tile_status(workspace));
    COURSE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void launch_warp_scan(const int* in, int* out, std::size_t n) {
    if (n == 0) return;
    constexpr unsigned threads = 256;  // whole warps: every lane of a segment exists
    warp_scan_kernel<<<static_cast<unsigned>((n + threads - 1) / threads), threads>>>(in, out, n);
    COURSE_CUDA_CHECK(cudaGetLastError());
}

void launch_block_scan(const int* in, int* out, std::size_t n) {
    if (n == 0) return;
    block_scan_kernel<<<static_cast<unsigned>((n + kBlockSegment - 1) / kBlockSegment), kBlockScanThreads>>>(in, out,
                                                                                                            n);
    COURSE_CUDA_CHECK(cudaGetLastError());
}

void exclusive_scan_reduce_then_scan(const int* in, int* out, std::size_t n, void* workspace) {
    reduce_then_scan(in, out, n, workspace);
}

void exclusive_scan_reduce_then_scan(const float* in, float* out, std::size_t n, void* workspace) {
    reduce_then_scan(in, out, n, workspace);
}

void exclusive_scan_single_pass(const int* in, int* out, std::size_t n, void* workspace) {
    single_pass(in, out, n, workspace);
}

void exclusive_scan_single_pass(const float* in, float* out, std::size_t n, void* workspace) {
    single_pass(in, out, n, workspace);
}

}  // namespace lesson15
