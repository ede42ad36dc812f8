// Lesson 15: parallel prefix scan, from a warp to the whole device.
//
// Goal: make `./course grade 15` pass. Read lessons/15-prefix-scan/README.md
// first; the functions you fill in are documented in scan.hpp.
// Stuck? `./course hint 15` shows the hints one by one.
//
// Order that works (each stage is graded on its own): warp_inclusive_scan
// and warp_scan_kernel (the warp), block_scan_kernel (the Blelloch scan in
// shared memory), block_scan (a tile's scan, used by both device-wide
// scans), the three reduce-then-scan kernels, then the single pass:
// look_back and single_pass_kernel.
#include <scan.hpp>

#include <course/cuda_check.hpp>

#include <cstddef>
#include <cstdint>
#include <cuda/atomic>
#include <cuda_runtime.h>

namespace lesson15 {

namespace {

[[maybe_unused]] constexpr unsigned kFullMask = 0xffffffffu;

// ---------------------------------------------------------------- stage 1: the warp

// The inclusive scan of one value per lane: lane i returns the sum of the
// values of lanes 0..i. All 32 lanes of the warp call it.
template <class T>
__device__ T warp_inclusive_scan(T value) {
    // TODO: 5 steps, delta = 1, 2, 4, 8, 16: take the value of the lane
    // `delta` below with __shfl_up_sync(kFullMask, value, delta) and add it,
    // but only in lanes >= delta (below that the shuffle returns the lane's
    // own value).
    return value;
}

// Given: the exclusive scan from the inclusive one (each lane takes its left
// neighbour's inclusive sum, lane 0 takes 0). Not `inclusive - value`: for
// floats (a + b) - b is not always a.
template <class T>
__device__ T warp_exclusive_from_inclusive(T inclusive) {
    const T left = __shfl_up_sync(kFullMask, inclusive, 1);
    return threadIdx.x % 32 == 0 ? T(0) : left;
}

__global__ void warp_scan_kernel(const int* in, int* out, std::size_t n) {
    // TODO: one element per thread (index i in size_t). Lanes past the end
    // take part in the scan with 0 and write nothing: every lane must reach
    // the shuffles. Write the exclusive sum of the element's warp.
    (void)in;
    (void)out;
    (void)n;
}

// ---------------------------------------------------------------- stage 2: the block

constexpr unsigned kBlockScanThreads = kBlockSegment / 2;  // two elements per thread

// One block of 512 threads scans one segment of 1024 elements.
__global__ void block_scan_kernel(const int* in, int* out, std::size_t n) {
    // TODO 0: the segment in shared memory: __shared__ int tile[kBlockSegment];
    // TODO 1: load the segment (elements blockIdx.x * 1024 + k) into tile[],
    // 0 past the end of the array; thread t loads k = t and k = t + 512.
    // TODO 2: the up-sweep: for offset = 1, 2, 4, ... 512, threads
    // t < 512 / offset add tile[offset * (2t + 1) - 1] into
    // tile[offset * (2t + 2) - 1]. A __syncthreads() before each level.
    // TODO 3: set the root, tile[1023], to 0.
    // TODO 4: the down-sweep: for offset = 512, 256, ... 1, threads
    // t < 512 / offset swap-and-add the pair (left = offset * (2t + 1) - 1,
    // right = left + offset): left takes right's value, right adds left's
    // old value. A __syncthreads() before each level.
    // TODO 5: a barrier, then write the elements that exist to out[].
    (void)in;
    (void)out;
    (void)n;
}

// ---------------------------------------------------------------- the device-wide scans' tile

// A tile: 256 threads x 16 consecutive elements = 4096 elements.
constexpr unsigned kThreads = 256;
[[maybe_unused]] constexpr unsigned kWarps = kThreads / 32;
constexpr unsigned kItems = 16;
constexpr std::size_t kTileItems = std::size_t{kThreads} * kItems;
static_assert(kTileItems >= kMinTileItems, "the workspace is sized for tiles of at least kMinTileItems");

// Each warp moves its 32 x 16 = 512 consecutive elements through a
// shared-memory area of its own, with one padding element after every 32
// (no two lanes on one bank): a kernel that calls load_items or
// store_exclusive declares `__shared__ T exchange[kWarps * kExchangeItems];`.
constexpr unsigned kWarpItems = 32 * kItems;
[[maybe_unused]] constexpr unsigned kExchangeItems = kWarpItems + kWarpItems / 32;

[[maybe_unused]] __device__ unsigned padded(unsigned e) { return e + e / 32; }

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

// Given: loads the 16 consecutive elements of this thread of the tile that
// starts at `tile_first` (elements tile_first + 16 * threadIdx.x on; 0 past
// the end) into items[]. Each warp reads its 512 elements striped (one
// instruction: 32 lanes x 16 contiguous bytes), then transposes them
// through its area of `exchange` into each thread's 16 (the lesson text,
// "Tiles", says why). All 32 lanes of every warp must call it.
template <class T>
__device__ void load_items(const T* in, std::size_t n, std::size_t tile_first, T* exchange, T (&items)[kItems]) {
    const unsigned lane = threadIdx.x % 32;
    const unsigned warp = threadIdx.x / 32;
    const std::size_t first = tile_first + std::size_t{warp} * kWarpItems;
    T* area = exchange + warp * kExchangeItems;
    const bool aligned = reinterpret_cast<std::uintptr_t>(in + first) % 16 == 0;
    if (first + kWarpItems <= n && aligned) {
        const auto* vectors = reinterpret_cast<const typename Vector4<T>::type*>(in + first);
        for (unsigned q = 0; q < kItems / 4; ++q) {
            const unsigned v = q * 32 + lane;
            const auto x = __ldcs(vectors + v);
            const unsigned e = padded(4 * v);
            area[e] = x.x;
            area[e + 1] = x.y;
            area[e + 2] = x.z;
            area[e + 3] = x.w;
        }
    } else {
        for (unsigned k = 0; k < kItems; ++k) {
            const unsigned e = k * 32 + lane;
            area[padded(e)] = first + e < n ? in[first + e] : T(0);
        }
    }
    __syncwarp();
    for (unsigned k = 0; k < kItems; ++k) items[k] = area[padded(lane * kItems + k)];
    __syncwarp();
}

// Given: writes the exclusive scan of this thread's items, starting from
// `running` (the sum of everything before its first element), for the tile
// that starts at `tile_first`: the reverse of load_items, through the same
// `exchange`. All 32 lanes of every warp must call it.
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
    __syncwarp();
}

// The block's scan of its threads' totals: returns the tile's sum, and sets
// `thread_prefix` to the sum of the items of every thread before this one.
// `warp_totals` is shared memory for kWarps values.
template <class T>
__device__ T block_scan(const T (&items)[kItems], T* warp_totals, T& thread_prefix) {
    // TODO 1: the thread's total (its 16 items added in order).
    // TODO 2: the warp's inclusive scan of the totals, and from it the
    // exclusive one (the sum of the lanes before this one).
    // TODO 3: lane 31 writes its warp's sum to warp_totals[warp]; barrier.
    // TODO 4: every thread adds warp_totals[0 .. warp-1] (its warp's prefix)
    // and all of them (the tile's sum). thread_prefix = warp prefix + the
    // exclusive sum within the warp; return the tile's sum.
    (void)items;
    (void)warp_totals;
    thread_prefix = T(0);
    return T(0);
}

std::size_t tile_count(std::size_t n) { return (n + kTileItems - 1) / kTileItems; }

// ---------------------------------------------------------------- stage 3: reduce-then-scan

// Pass 1: sums[blockIdx.x] = the sum of tile blockIdx.x.
template <class T>
__global__ void __launch_bounds__(kThreads) tile_sums_kernel(const T* in, std::size_t n, T* sums) {
    __shared__ T exchange[kWarps * kExchangeItems];
    __shared__ T warp_totals[kWarps];
    // TODO: load the thread's items (load_items of the tile that starts at
    // blockIdx.x * kTileItems), block_scan them, thread 0 writes the tile's sum.
    (void)exchange;
    (void)warp_totals;
    (void)in;
    (void)n;
    (void)sums;
}

// Pass 2: one block scans the `count` tile sums in place (exclusive), a
// tile of them at a time, carrying the running total from one to the next.
template <class T>
__global__ void __launch_bounds__(kThreads) scan_sums_kernel(T* sums, std::size_t count) {
    __shared__ T exchange[kWarps * kExchangeItems];
    __shared__ T warp_totals[kWarps];
    // TODO: for base = 0, 4096, ... < count: load the tile at base,
    // block_scan, store_exclusive from carry + thread_prefix, add the round's
    // sum to carry, and a barrier before the next round rewrites warp_totals.
    (void)exchange;
    (void)warp_totals;
    (void)sums;
    (void)count;
}

// Pass 3: each tile scanned again, starting from its tile's scanned sum.
template <class T>
__global__ void __launch_bounds__(kThreads) scan_tiles_kernel(const T* in, T* out, std::size_t n, const T* sums) {
    __shared__ T exchange[kWarps * kExchangeItems];
    __shared__ T warp_totals[kWarps];
    // TODO: load, block_scan, store_exclusive from sums[blockIdx.x] + thread_prefix.
    (void)exchange;
    (void)warp_totals;
    (void)in;
    (void)out;
    (void)n;
    (void)sums;
}

template <class T>
void reduce_then_scan(const T* in, T* out, std::size_t n, void* workspace) {
    if (n == 0) return;
    const std::size_t tiles = tile_count(n);
    T* sums = reinterpret_cast<T*>(static_cast<char*>(workspace) + 256);
    // TODO: launch the three passes (tiles blocks, 1 block, tiles blocks;
    // kThreads threads each), each followed by COURSE_CUDA_CHECK(cudaGetLastError()).
    (void)in;
    (void)out;
    (void)sums;
    (void)tiles;
}

// ---------------------------------------------------------------- stage 4: single pass, decoupled look-back

[[maybe_unused]] constexpr unsigned kInvalid = 0;    // the tile has published nothing yet
[[maybe_unused]] constexpr unsigned kAggregate = 1;  // its own sum is published
[[maybe_unused]] constexpr unsigned kPrefix = 2;     // its inclusive prefix is published

// Given: a tile's status and its value share one 8-byte word (the status in
// the high 32 bits, the value's bits in the low 32), so one atomic store
// publishes both and one atomic load reads both: no fence is needed between
// a flag and its value (the lesson text explains the two-word version).
using StatusWord = unsigned long long;
using DeviceWord = cuda::atomic_ref<StatusWord, cuda::thread_scope_device>;

[[maybe_unused]] __device__ unsigned value_bits(int value) { return static_cast<unsigned>(value); }
[[maybe_unused]] __device__ unsigned value_bits(float value) { return __float_as_uint(value); }
[[maybe_unused]] __device__ void from_bits(unsigned bits, int& value) { value = static_cast<int>(bits); }
[[maybe_unused]] __device__ void from_bits(unsigned bits, float& value) { value = __uint_as_float(bits); }

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

[[maybe_unused]] __device__ unsigned unpack_state(StatusWord word) { return static_cast<unsigned>(word >> 32); }

// Given: the workspace: a tile counter in the 256-byte header, then a status word per tile.
struct TileStatus {
    unsigned* counter;
    StatusWord* words;
};

[[maybe_unused]] TileStatus tile_status(void* workspace) {
    char* base = static_cast<char*>(workspace);
    return {reinterpret_cast<unsigned*>(base), reinterpret_cast<StatusWord*>(base + 256)};
}

// Publishes `value` with status `state` for `tile`.
template <class T>
__device__ void publish(const TileStatus& status, unsigned tile, unsigned state, T value) {
    // TODO: one store of the packed word:
    // DeviceWord(status.words[tile]).store(pack(state, value), cuda::memory_order_relaxed).
    (void)status;
    (void)tile;
    (void)state;
    (void)value;
}

// How long a look-back sleeps (__nanosleep) before its first poll, and
// between two polls of a word not published yet, in nanoseconds: polling
// in a tight loop floods the L2 lines of the status words (the lesson text
// says why; correct either way, faster with them).
[[maybe_unused]] constexpr unsigned kFirstPollDelayNs = 1250;
[[maybe_unused]] constexpr unsigned kPollDelayNs = 650;

// Warp 0 returns the sum of every element before `tile`, looking back over
// the tiles before it, 32 at a time.
template <class T>
__device__ T look_back(const TileStatus& status, unsigned tile) {
    // TODO: __nanosleep(kFirstPollDelayNs) first. Lane i looks at tile
    // (nearest - i), nearest starting at tile - 1 (a lane before tile 0
    // counts as a prefix of 0). Spin until its word's state is not kInvalid
    // (DeviceWord(...).load(cuda::memory_order_relaxed): an atomic load,
    // never a plain one; __nanosleep(kPollDelayNs) between two loads), then
    // take its state and value.
    // __ballot_sync which lanes hold a prefix; add the values of the lanes up
    // to the nearest such lane (all 32 if none), reduce them over the warp
    // with shuffles; stop if a prefix was found, else look 32 tiles further back.
    (void)status;
    (void)tile;
    return T(0);
}

template <class T>
__global__ void __launch_bounds__(kThreads) single_pass_kernel(const T* in, T* out, std::size_t n,
                                                               TileStatus status) {
    __shared__ T exchange[kWarps * kExchangeItems];
    __shared__ T warp_totals[kWarps];
    __shared__ unsigned tile_index;
    __shared__ T tile_prefix;
    // TODO 1: thread 0 takes the tile index from the counter
    // (atomicAdd(status.counter, 1u)), not blockIdx.x: why is in the lesson.
    // Share it through tile_index and a barrier.
    // TODO 2: load the tile's items and block_scan them.
    // TODO 3: warp 0: tile 0 publishes its sum as its prefix. Every other tile
    // publishes its aggregate, looks back, then publishes prefix + aggregate.
    // Thread 0 puts the prefix in tile_prefix; barrier.
    // TODO 4: store_exclusive from tile_prefix + thread_prefix.
    (void)exchange;
    (void)warp_totals;
    (void)tile_index;
    (void)tile_prefix;
    (void)in;
    (void)out;
    (void)n;
    (void)status;
}

template <class T>
void single_pass(const T* in, T* out, std::size_t n, void* workspace) {
    if (n == 0) return;
    const std::size_t tiles = tile_count(n);
    // TODO: clear the counter and the status words (cudaMemsetAsync of the
    // first 256 + tiles * sizeof(StatusWord) bytes of the workspace), launch
    // single_pass_kernel (tiles blocks of kThreads) with
    // tile_status(workspace), check.
    (void)in;
    (void)out;
    (void)tiles;
    (void)workspace;
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
