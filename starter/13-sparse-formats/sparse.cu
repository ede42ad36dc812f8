// Lesson 13: a sparse matrix from COO to CSR, the CSR matrix-vector
// product, and PageRank on it, with kernels only.
//
// Goal: make `./course grade 13` pass. Read lessons/13-sparse-formats/README.md
// first; the functions you fill in are documented in sparse.hpp.
// Stuck? `./course hint 13` shows the hints one by one.
//
// Order that works: csr_spmv (the tests build its CSR on the CPU, so it
// passes on its own: one thread per row first, then groups of lanes), then
// coo_to_csr: the row offsets (count, scan), then the entries (the digit,
// its counts, the passes; the scatter is given), then pagerank on top of
// your csr_spmv.
// No cuSPARSE, Thrust or CUB here: the grader flags them.
#include <sparse.hpp>

#include <course/cuda_check.hpp>
#include <course/device_buffer.hpp>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cuda_runtime.h>

namespace lesson13 {

constexpr int kThreadsPerBlock = 256;
constexpr int kWarps = kThreadsPerBlock / 32;
constexpr unsigned kFullMask = 0xffffffffu;

// Blocks of kThreadsPerBlock threads for one thread per item (at least 1).
unsigned blocks_for(long long items) {
    return static_cast<unsigned>(std::max(1LL, (items + kThreadsPerBlock - 1) / kThreadsPerBlock));
}

// ------------------------------------------------------------- the row offsets

// How many entries each row has. Two entries of one row may be counted at
// the same moment, so the increment is atomic (lesson 09).
__global__ void count_rows_kernel(int nnz, const int* rows, int* row_counts) {
    // TODO: one thread per entry k < nnz: atomicAdd(&row_counts[rows[k]], 1).
}

// The block's exclusive scan of one value per thread (Hillis-Steele in
// shared memory): returns the sum of the values of the threads before this
// one, and the block's sum in `total`. Every thread of the block must call
// it (it has barriers); blocks of kThreadsPerBlock threads.
__device__ int block_exclusive_scan(int own, int& total) {
    // TODO: a __shared__ int array of kThreadsPerBlock sums; store `own`,
    // barrier; for offset = 1, 2, 4, ... < kThreadsPerBlock: read the slot
    // `offset` to the left (0 if none), barrier, add it to your own slot,
    // barrier. Then total = the last slot, and return your slot minus
    // `own`, after one more barrier (the next call writes the slots again).
    total = 0;
    return 0;
}

// The scan works on tiles of kScanTile values, one block each; each thread
// owns kScanItems consecutive values of its block's tile.
constexpr int kScanItems = 16;
constexpr int kScanTile = kThreadsPerBlock * kScanItems;

// A thread's kScanItems values from `first`, 0 past n: four 16-byte loads
// when the whole run is in the array (lesson 06; `first` is a multiple of
// 16 and the arrays come from cudaMalloc, so the address is aligned).
__device__ void load_scan_items(const int* in, int n, long long first, int (&values)[kScanItems]) {
    if (first + kScanItems <= n) {
        const int4* vectors = reinterpret_cast<const int4*>(in + first);
        for (int v = 0; v < kScanItems / 4; ++v) {
            const int4 four = vectors[v];
            values[4 * v] = four.x;
            values[4 * v + 1] = four.y;
            values[4 * v + 2] = four.z;
            values[4 * v + 3] = four.w;
        }
    } else {
        for (int k = 0; k < kScanItems; ++k) values[k] = first + k < n ? in[first + k] : 0;
    }
}

// Step 1 of the scan: tile_sums[b] = the sum of tile b.
__global__ void tile_sums_kernel(int n, const int* in, int* tile_sums) {
    // TODO: first = blockIdx.x * kScanTile + threadIdx.x * kScanItems (a
    // long long); load_scan_items; sum them; block_exclusive_scan gives
    // the tile's total; thread 0 writes it.
}

// Step 3: out[i] = the tile's offset (the sum of the tiles before it; 0
// without tile_offsets: one tile) + the values of the tile before i. The
// last tile's block also writes out[n], the sum of everything.
__global__ void scan_tiles_kernel(int n, const int* in, const int* tile_offsets, int* out) {
    // TODO: load and sum the thread's values as in tile_sums_kernel;
    // running = the tile's offset + block_exclusive_scan(sum, total); for
    // each value: out[first + k] = running (if first + k < n), *then* add
    // the value. The last block's thread 0 writes out[n] = offset + total.
}

// out[i] = in[0] + ... + in[i-1] for i = 0 .. n (n + 1 values; out[n] is
// the total). Sum each tile, scan the tile sums (the same function: one
// tile of 4096 sums covers 16 million values), then scan each tile from its
// offset: three kernels, any n.
void exclusive_scan(const int* in, int* out, int n) {
    const int tiles = std::max(1, (n + kScanTile - 1) / kScanTile);
    if (tiles == 1) {
        scan_tiles_kernel<<<1, kThreadsPerBlock>>>(n, in, nullptr, out);
        COURSE_CUDA_CHECK(cudaGetLastError());
        return;
    }
    course::DeviceBuffer<int> tile_sums(static_cast<std::size_t>(tiles));
    course::DeviceBuffer<int> tile_offsets(static_cast<std::size_t>(tiles) + 1);
    tile_sums_kernel<<<tiles, kThreadsPerBlock>>>(n, in, tile_sums.data());
    COURSE_CUDA_CHECK(cudaGetLastError());
    exclusive_scan(tile_sums.data(), tile_offsets.data(), tiles);
    scan_tiles_kernel<<<tiles, kThreadsPerBlock>>>(n, in, tile_offsets.data(), out);
    COURSE_CUDA_CHECK(cudaGetLastError());
}

// ------------------------------------------------------------- the entries

constexpr int kDigitBits = 8;
constexpr int kDigits = 1 << kDigitBits;
constexpr int kSortItems = 16;                             // entries per thread in the sort
constexpr int kSortTile = kThreadsPerBlock * kSortItems;  // entries per block: 4096
static_assert(kThreadsPerBlock == kDigits, "thread d owns digit d in the sort's per-digit steps");

// The digit of the entry (row, col) that the pass at `shift` sorts by: bits
// shift .. shift+7 of the 64-bit key row * 2^col_bits + col. The key has no
// bits above row_bits + col_bits, so the last pass needs no narrower mask.
__device__ unsigned digit_of(int row, int col, int col_bits, int shift) {
    // TODO: the key as a std::uint64_t (row shifted up by col_bits, the
    // column below), shifted down by `shift`, its low kDigitBits bits.
    return 0;
}

// bits[0] |= every column: its bit width is the column part of the key.
// Each thread ORs its grid-stride share, the warp combines with shuffles,
// and lane 0 does one atomicOr.
__global__ void column_bits_kernel(int nnz, const int* cols, unsigned* bits) {
    unsigned any = 0;
    for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < nnz; k += gridDim.x * blockDim.x) {
        any |= static_cast<unsigned>(cols[k]);
    }
    for (int offset = 16; offset > 0; offset /= 2) any |= __shfl_xor_sync(kFullMask, any, offset);
    if (threadIdx.x % 32 == 0) atomicOr(bits, any);
}

// The entries of the tile that starts at `tile_begin`: kSortTile, or fewer for the last one.
__device__ int tile_size_of(int nnz, long long tile_begin) {
    return nnz - tile_begin < kSortTile ? static_cast<int>(nnz - tile_begin) : kSortTile;
}

// Step 1 of a pass: tile_counts[d * tiles + tile] = the number of the
// tile's entries with digit d (digit-major: all tiles of digit 0 first, so
// that the table's exclusive scan gives each (digit, tile) its first output
// slot). A histogram in shared memory per block; thread d owns bin d.
__global__ void digit_counts_kernel(int nnz, const int* rows, const int* cols, int col_bits, int shift,
                                    int* tile_counts) {
    // TODO: a __shared__ histogram of kDigits counts, zeroed, barrier; the
    // tile's entries (tile_begin = blockIdx.x * kSortTile, tile_size_of)
    // with thread t taking entries t, t + kThreadsPerBlock, ...: atomicAdd
    // on the count of digit_of(row, col, col_bits, shift); barrier; thread
    // d writes its count to tile_counts[d * gridDim.x + blockIdx.x].
}

// Given (lesson 19 builds it step by step). Step 3 of a pass: the stable scatter of one tile to the slots that the
// scanned table of step 2 (`digit_offsets`) gives its digits. rows_out may
// be null: the last pass writes only the columns and values (row_ptr comes
// from the counts).
//
// Ranking, stably (lesson 19): warp w owns the tile's entries
// [w * 32 * kSortItems, (w + 1) * 32 * kSortItems) and ranks them 32 at a
// time, in order. __match_any_sync gives each lane the lanes holding the
// same digit (`peers`); an entry's rank among the warp's entries of its
// digit is the count already seen (warp_counts[warp][digit]) plus its peers
// in lower lanes, so equal digits keep their order. A scan over (digit,
// warp) turns the counts into each (digit, warp)'s first slot in the
// digit-sorted tile; the entries go there in shared memory, and the block
// writes the sorted tile out in order: consecutive threads write
// consecutive addresses of each digit's run.
//
// The sorted tile (rows, columns, values: 48 KB) is dynamic shared memory,
// past the 48 KB a block may declare statically with the 9 KB below; three
// blocks of 57 KB fit in an SM's 228 KB, and __launch_bounds__ caps the
// registers (85 a thread) so that their registers fit too: 24 warps per SM.
__global__ void __launch_bounds__(kThreadsPerBlock, 3)
    scatter_kernel(int nnz, const int* rows_in, const int* cols_in, const float* vals_in, int* rows_out,
                   int* cols_out, float* vals_out, int col_bits, int shift, const int* digit_offsets) {
    extern __shared__ int sorted_tile[];
    int* tile_rows = sorted_tile;
    int* tile_cols = sorted_tile + kSortTile;
    float* tile_vals = reinterpret_cast<float*>(sorted_tile + 2 * kSortTile);
    __shared__ int warp_counts[kWarps][kDigits];
    __shared__ int digit_base[kDigits];

    const int t = threadIdx.x, lane = t % 32, warp = t / 32;
    const unsigned lanes_below = (1u << lane) - 1u;
    const long long tile_begin = static_cast<long long>(blockIdx.x) * kSortTile;
    const int tile_size = tile_size_of(nnz, tile_begin);

    // Each warp zeroes its own row of counts: only it uses the row until the barrier below.
    for (int d = lane; d < kDigits; d += 32) warp_counts[warp][d] = 0;
    __syncwarp();

    // The warp's entries first: kSortItems loads per array in flight, each
    // 32 consecutive entries (one 128-byte load per step).
    int rows[kSortItems], cols[kSortItems];
    float vals[kSortItems];
    for (int j = 0; j < kSortItems; ++j) {
        const int i = warp * 32 * kSortItems + j * 32 + lane;  // the entry's place in the tile
        rows[j] = i < tile_size ? rows_in[tile_begin + i] : 0;
        cols[j] = i < tile_size ? cols_in[tile_begin + i] : 0;
        vals[j] = i < tile_size ? vals_in[tile_begin + i] : 0.0f;
    }

    int ranks[kSortItems];
    for (int j = 0; j < kSortItems; ++j) {
        // A partial last tile: the warps past its end stop (the whole warp
        // at once, so that every lane still takes part in the match).
        if (warp * 32 * kSortItems + j * 32 >= tile_size) break;
        const bool valid = warp * 32 * kSortItems + j * 32 + lane < tile_size;
        const unsigned digit = digit_of(rows[j], cols[j], col_bits, shift);
        // Lanes past the tile's end match only each other (kDigits is no digit).
        const unsigned peers = __match_any_sync(kFullMask, valid ? digit : unsigned{kDigits});
        const int seen = valid ? warp_counts[warp][digit] : 0;
        // Everyone has read the count before the group's lowest lane adds the group to it.
        __syncwarp();
        if (valid && (peers & lanes_below) == 0) warp_counts[warp][digit] = seen + __popc(peers);
        __syncwarp();
        ranks[j] = seen + __popc(peers & lanes_below);
    }
    __syncthreads();  // every warp's counts are final before thread d reads column d

    // Thread d: the exclusive scan of digit d's counts over the warps, then
    // of the digits' totals over the block: (digit, warp) -> first slot.
    const int d = t;
    int digit_total = 0;
    for (int w = 0; w < kWarps; ++w) {
        const int count = warp_counts[w][d];
        warp_counts[w][d] = digit_total;
        digit_total += count;
    }
    int tile_total = 0;
    const int digit_start = block_exclusive_scan(digit_total, tile_total);  // has barriers
    for (int w = 0; w < kWarps; ++w) warp_counts[w][d] += digit_start;
    // Output position of tile slot i (an entry of digit d) = digit_base[d] + i.
    digit_base[d] = digit_offsets[static_cast<std::size_t>(d) * gridDim.x + blockIdx.x] - digit_start;
    __syncthreads();

    for (int j = 0; j < kSortItems; ++j) {
        const int i = warp * 32 * kSortItems + j * 32 + lane;
        if (i >= tile_size) break;
        const int slot = warp_counts[warp][digit_of(rows[j], cols[j], col_bits, shift)] + ranks[j];
        tile_rows[slot] = rows[j];
        tile_cols[slot] = cols[j];
        tile_vals[slot] = vals[j];
    }
    __syncthreads();

    for (int i = t; i < tile_size; i += kThreadsPerBlock) {
        const int row = tile_rows[i], col = tile_cols[i];
        const long long position = digit_base[digit_of(row, col, col_bits, shift)] + i;
        if (rows_out != nullptr) rows_out[position] = row;
        cols_out[position] = col;
        vals_out[position] = tile_vals[i];
    }
}

// The number of bits of the largest column (0 when every column is 0).
int column_bits(int nnz, const int* cols) {
    course::DeviceBuffer<unsigned> bits(1);
    COURSE_CUDA_CHECK(cudaMemset(bits.data(), 0, sizeof(unsigned)));
    column_bits_kernel<<<std::min(blocks_for(nnz), 1024u), kThreadsPerBlock>>>(nnz, cols, bits.data());
    COURSE_CUDA_CHECK(cudaGetLastError());
    unsigned any = 0;
    COURSE_CUDA_CHECK(cudaMemcpy(&any, bits.data(), sizeof(unsigned), cudaMemcpyDeviceToHost));
    return std::bit_width(any);
}

// Sorts the nnz entries by (row, column), stably, into csr_cols and csr_vals.
void sort_entries(int n_rows, int nnz, const int* rows, const int* cols, const float* vals, int* csr_cols,
                  float* csr_vals) {
    const int col_bits = column_bits(nnz, cols);
    const int row_bits = std::bit_width(static_cast<unsigned>(n_rows - 1));
    const int passes = (row_bits + col_bits + kDigitBits - 1) / kDigitBits;
    if (passes == 0) {  // one row, every column 0: the COO order is the sorted order
        COURSE_CUDA_CHECK(cudaMemcpy(csr_cols, cols, nnz * sizeof(int), cudaMemcpyDeviceToDevice));
        COURSE_CUDA_CHECK(cudaMemcpy(csr_vals, vals, nnz * sizeof(float), cudaMemcpyDeviceToDevice));
        return;
    }
    const unsigned tiles = static_cast<unsigned>((nnz + kSortTile - 1) / kSortTile);
    const int table = kDigits * static_cast<int>(tiles);
    course::DeviceBuffer<int> tile_counts(static_cast<std::size_t>(table));
    course::DeviceBuffer<int> digit_offsets(static_cast<std::size_t>(table) + 1);  // + the total
    // The passes alternate between two sets of arrays (ping-pong), arranged
    // so that the last pass writes csr_cols and csr_vals: set A is those two
    // and a row array (needed from 3 passes on), set B three arrays of its own.
    const std::size_t count = static_cast<std::size_t>(nnz);
    course::DeviceBuffer<int> rows_a(passes >= 3 ? count : 0);
    course::DeviceBuffer<int> rows_b(passes >= 2 ? count : 0), cols_b(passes >= 2 ? count : 0);
    course::DeviceBuffer<float> vals_b(passes >= 2 ? count : 0);
    const int tile_bytes = 3 * kSortTile * static_cast<int>(sizeof(int));
    COURSE_CUDA_CHECK(cudaFuncSetAttribute(scatter_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, tile_bytes));

    // TODO: the passes, pass = 0 .. passes - 1, at shift = pass * kDigitBits.
    // Each reads the arrays the pass before wrote (the COO arrays for pass
    // 0) and writes set A (rows_a, csr_cols, csr_vals) when passes - 1 - pass
    // is even, set B (rows_b, cols_b, vals_b) otherwise; the last pass writes
    // no rows (nullptr). A pass: digit_counts_kernel<<<tiles, kThreadsPerBlock>>>
    // into tile_counts, exclusive_scan of the table into digit_offsets, then
    // scatter_kernel<<<tiles, kThreadsPerBlock, tile_bytes>>>. Check each launch.
}

// ------------------------------------------------------------- SpMV

// y = A x. First one thread per row (the lesson's first step), then a group
// of `lanes` threads per row (1, 2, 4, 8, 16 or 32: a sub-warp), chosen on
// the device from the mean row length nnz / n_rows, so that the host needs
// no copy of nnz and csr_spmv returns without synchronising. Lane l of a
// row's group sums entries row_ptr[r] + l, + lanes, ...: the group's loads
// of cols and vals are consecutive addresses, and a shuffle reduction
// within the group adds the partial sums (lesson 05). The reference goes
// one step further, 4 entries a lane with one 16-byte load of each array
// (the lesson's page, "SpMV: one thread per row, then a group per row").
// The grid is what stays resident (spmv_blocks), so each group loops over
// rows: group g takes rows g, g + G, g + 2G, ... (G groups in the grid).
__global__ void spmv_kernel(int n_rows, const int* row_ptr, const int* cols, const float* vals, const float* x,
                            float* y) {
    // TODO: first one thread per row, as in the lesson's first step: row r
    // = blockIdx.x * blockDim.x + threadIdx.x, striding by the grid's
    // threads, y[r] = sum of vals[k] * x[cols[k]] for k in [row_ptr[r],
    // row_ptr[r+1]). Then groups of `lanes` threads per row: lanes from the
    // mean row length row_ptr[n_rows] / n_rows, lane l of a group sums
    // entries row_ptr[r] + l, + lanes, ..., and __shfl_down_sync with the
    // group's mask and width `lanes` adds the partial sums.
}

// The SpMV's grid: the blocks that stay resident on the GPU at once (the
// occupancy API's count per SM times the SMs), so that no block waits for
// a second wave and each group loops over its rows; for a smaller matrix,
// one thread per row.
unsigned spmv_blocks(int n_rows) {
    static const unsigned resident = [] {
        int device = 0, sms = 0, per_sm = 0;
        COURSE_CUDA_CHECK(cudaGetDevice(&device));
        COURSE_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
        COURSE_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, spmv_kernel, kThreadsPerBlock, 0));
        return static_cast<unsigned>(std::max(1, sms * per_sm));
    }();
    return std::min(blocks_for(n_rows), resident);
}

// ------------------------------------------------------------- PageRank

// PageRank's kernels: write the ones you need (filling the ranks with 1/n,
// the two sums, the update with its L1 change). Double atomicAdd is fine
// for the sums.

void coo_to_csr(int n_rows, int nnz, const int* rows, const int* cols, const float* vals, int* row_ptr,
                int* csr_cols, float* csr_vals) {
    // The row offsets: count, then scan (the counts are freed on return;
    // cudaFree waits for the kernels).
    course::DeviceBuffer<int> row_counts(static_cast<std::size_t>(n_rows));
    // TODO: zero row_counts (cudaMemset), count_rows_kernel (one thread per
    // entry), exclusive_scan(row_counts, row_ptr, n_rows); then, if nnz > 0,
    // sort_entries. Check every launch with COURSE_CUDA_CHECK(cudaGetLastError()).
    // Mind nnz == 0 and n_rows == 0 (row_ptr still gets its n_rows + 1 offsets).
}

void csr_spmv(int n_rows, const int* row_ptr, const int* cols, const float* vals, const float* x, float* y) {
    // TODO: launch spmv_kernel on spmv_blocks(n_rows) blocks of
    // kThreadsPerBlock (nothing when n_rows == 0).
}

int pagerank(int n, const int* row_ptr, const int* cols, const float* vals, float damping, float tolerance,
             int max_iterations, float* rank) {
    // TODO: rank = 1/n; then up to max_iterations times: linked = A rank
    // (your csr_spmv), dangling = sum(rank) - sum(linked), next[i] =
    // (1 - damping)/n + damping * (linked[i] + dangling/n), the L1 change
    // sum |next - rank|, rank = next; stop once the change < tolerance.
    // Return the number of iterations run (0 when n == 0).
    return 0;
}

}  // namespace lesson13
