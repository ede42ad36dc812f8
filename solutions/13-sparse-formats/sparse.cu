// Lesson 13 reference solution: COO to CSR with kernels only, the CSR
// matrix-vector product, and PageRank by power iteration on it.
//
// COO to CSR is "sort the entries by (row, column), then compress the rows".
// Two independent halves:
// - the row offsets: count the entries of each row (a histogram with
//   atomicAdd, lesson 09), then an exclusive scan of the counts: row_ptr;
// - the entries: a stable LSD radix sort of the (row, column) pairs as one
//   key, row * 2^column_bits + column, 8 bits per pass, the values carried
//   along (lesson 19's sort, with three arrays moving instead of two). Only
//   the key's real bits are sorted: bit_width(n_rows - 1) bits of row and as
//   many column bits as the largest column has. Stable passes keep
//   duplicates (equal keys) in their COO order, so the result is unique and
//   does not depend on the order the GPU runs the threads in.
//
// The first version of this file placed each entry with an atomic cursor
// per row and then sorted every row with one thread (insertion sort). It was
// 0.92x cuSPARSE's conversion on an H100: the scatter writes 4 bytes at a
// random place per array and entry, and the per-row sort gives each row to
// one thread, whose neighbours in the warp read addresses a row apart. Every
// pass of the radix sort reads and writes whole tiles, in order. The
// benchmark times both (the first version is kept in
// tests/13-sparse-formats/earlier_reference.cuh); the lesson's page,
// "Measured results", has the numbers.
#include <sparse.hpp>

#include <course/cuda_check.hpp>
#include <course/device_buffer.hpp>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cuda_runtime.h>

namespace lesson13 {

namespace {

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
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < nnz) atomicAdd(&row_counts[rows[k]], 1);
}

// The block's exclusive scan of one value per thread (Hillis-Steele in
// shared memory): returns the sum of the values of the threads before this
// one, and the block's sum in `total`. Every thread of the block must call
// it (it has barriers); blocks of kThreadsPerBlock threads.
__device__ int block_exclusive_scan(int own, int& total) {
    __shared__ int sums[kThreadsPerBlock];
    const int t = threadIdx.x;
    sums[t] = own;
    __syncthreads();
    // At each step add the value `offset` places to the left. Read, barrier,
    // write, barrier: a thread must not overwrite a slot that another thread
    // has yet to read at this step, nor read one before it is written at the
    // step before.
    for (int offset = 1; offset < kThreadsPerBlock; offset *= 2) {
        const int left = t >= offset ? sums[t - offset] : 0;
        __syncthreads();
        sums[t] += left;
        __syncthreads();
    }
    total = sums[kThreadsPerBlock - 1];
    const int before = sums[t] - own;
    __syncthreads();  // everyone has read before the next call writes sums again
    return before;
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
    const long long first = static_cast<long long>(blockIdx.x) * kScanTile + threadIdx.x * kScanItems;
    int values[kScanItems];
    load_scan_items(in, n, first, values);
    int own = 0;
    for (int k = 0; k < kScanItems; ++k) own += values[k];
    int total = 0;
    (void)block_exclusive_scan(own, total);
    if (threadIdx.x == 0) tile_sums[blockIdx.x] = total;
}

// Step 3: out[i] = the tile's offset (the sum of the tiles before it; 0
// without tile_offsets: one tile) + the values of the tile before i. The
// last tile's block also writes out[n], the sum of everything.
__global__ void scan_tiles_kernel(int n, const int* in, const int* tile_offsets, int* out) {
    const long long first = static_cast<long long>(blockIdx.x) * kScanTile + threadIdx.x * kScanItems;
    int values[kScanItems];
    load_scan_items(in, n, first, values);
    int own = 0;
    for (int k = 0; k < kScanItems; ++k) own += values[k];
    const int tile_offset = tile_offsets != nullptr ? tile_offsets[blockIdx.x] : 0;
    int total = 0;
    int running = tile_offset + block_exclusive_scan(own, total);
    for (int k = 0; k < kScanItems; ++k) {
        if (first + k < n) out[first + k] = running;  // exclusive: written before the value is added
        running += values[k];
    }
    if (blockIdx.x == gridDim.x - 1 && threadIdx.x == 0) out[n] = tile_offset + total;
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
    const std::uint64_t key = (static_cast<std::uint64_t>(row) << col_bits) | static_cast<std::uint32_t>(col);
    return static_cast<unsigned>(key >> shift) & (kDigits - 1);
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
    __shared__ int counts[kDigits];
    counts[threadIdx.x] = 0;
    __syncthreads();
    const long long tile_begin = static_cast<long long>(blockIdx.x) * kSortTile;
    const int tile_size = tile_size_of(nnz, tile_begin);
    // Only the arrays this digit has bits of are read.
    const bool row_part = shift + kDigitBits > col_bits, col_part = shift < col_bits;
    int tile_rows[kSortItems], tile_cols[kSortItems];
    for (int j = 0; j < kSortItems; ++j) {  // every load first: kSortItems in flight at once
        const int i = j * kThreadsPerBlock + threadIdx.x;
        tile_rows[j] = row_part && i < tile_size ? rows[tile_begin + i] : 0;
        tile_cols[j] = col_part && i < tile_size ? cols[tile_begin + i] : 0;
    }
    for (int j = 0; j < kSortItems; ++j) {
        if (j * kThreadsPerBlock + static_cast<int>(threadIdx.x) < tile_size) {
            atomicAdd(&counts[digit_of(tile_rows[j], tile_cols[j], col_bits, shift)], 1);
        }
    }
    __syncthreads();
    tile_counts[static_cast<std::size_t>(threadIdx.x) * gridDim.x + blockIdx.x] = counts[threadIdx.x];
}

// Step 3 of a pass: the stable scatter of one tile to the slots that the
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

    const int* src_rows = rows;
    const int* src_cols = cols;
    const float* src_vals = vals;
    for (int pass = 0; pass < passes; ++pass) {
        const bool last = pass == passes - 1;
        const bool to_a = (passes - 1 - pass) % 2 == 0;
        int* dst_rows = last ? nullptr : (to_a ? rows_a.data() : rows_b.data());
        int* dst_cols = to_a ? csr_cols : cols_b.data();
        float* dst_vals = to_a ? csr_vals : vals_b.data();
        const int shift = pass * kDigitBits;
        digit_counts_kernel<<<tiles, kThreadsPerBlock>>>(nnz, src_rows, src_cols, col_bits, shift,
                                                         tile_counts.data());
        COURSE_CUDA_CHECK(cudaGetLastError());
        exclusive_scan(tile_counts.data(), digit_offsets.data(), table);
        scatter_kernel<<<tiles, kThreadsPerBlock, tile_bytes>>>(nnz, src_rows, src_cols, src_vals, dst_rows, dst_cols,
                                                                dst_vals, col_bits, shift, digit_offsets.data());
        COURSE_CUDA_CHECK(cudaGetLastError());
        src_rows = dst_rows;
        src_cols = dst_cols;
        src_vals = dst_vals;
    }
}

// ------------------------------------------------------------- SpMV

// y = A x, a group of `lanes` threads per row, each lane reading 4 entries
// of cols and 4 of vals with one 16-byte load of each (int4, float4).
//
// The lesson's first step gives a row one thread (earlier_reference.cuh in
// tests/13-sparse-formats keeps it): neighbouring threads then read
// addresses a row apart. Here a row's group reads it side by side, and
// three things make it as fast as cusparseSpMV on an H100 (1.03x; the
// lesson's page, "Measured results", has the steps):
// - Vector loads: one instruction brings 4 entries, so a row of 16 is 4
//   lanes x 1 load of each array, where 16 lanes x 1 entry issue four times
//   the load instructions for the same bytes.
// - Each lane then gathers x at 4 independent columns before it adds: 4
//   loads of x in flight per lane. The gathers of x, at random columns,
//   are what an SpMV waits for.
// - Rows grid-stride: group g takes rows g, g + G, g + 2G, ... (G groups in
//   the grid), so the whole grid sweeps the matrix front to back together.
//
// The group width is chosen on the device from the mean row length
// nnz / n_rows: the smallest power of two of lanes (1 to 32) that covers a
// row of mean length with one load per lane, so that the host needs no
// copy of nnz and csr_spmv returns without synchronising. A row longer
// than lanes x 4 entries is walked in steps of lanes x 4, so rows of any
// length are right (a row far longer than the mean is slow: "Going further").
//
// A 16-byte load must start at a 16-byte address: entries k .. k+3 of cols
// are one int4 only where the address cols + k is a multiple of 16 bytes.
// A row starts anywhere, so its entries before the first such boundary
// (the head) and after the last (the tail) are read one by one. Both
// arrays must be on the same boundaries: cols and vals from cudaMalloc
// are, but a caller may pass pointers into the middle of allocations; if
// their distances past a boundary differ, every entry is read one by one.
//
// The matrix is read once per product: __ldcs (evict first) keeps its
// stream from pushing x, which every row gathers from, out of L2.
constexpr int kEntriesPerLoad = 4;

// sum + the product of entry k, loaded alone (a row's head and tail).
__device__ float add_entry(float sum, const int* cols, const float* vals, const float* x, int k) {
    return sum + __ldcs(&vals[k]) * x[__ldcs(&cols[k])];
}

__global__ void spmv_kernel(int n_rows, const int* row_ptr, const int* cols, const float* vals, const float* x,
                            float* y) {
    const int nnz = row_ptr[n_rows];
    int lanes = 1;
    while (lanes < 32 && static_cast<long long>(lanes) * kEntriesPerLoad * n_rows < nnz) lanes *= 2;
    const int lane = threadIdx.x % lanes, group_in_warp = threadIdx.x % 32 / lanes;
    // The group's lanes within its warp: groups never straddle warps (lanes divides 32).
    const unsigned group_mask = lanes == 32 ? kFullMask : ((1u << lanes) - 1u) << (group_in_warp * lanes);

    // How far cols and vals start past a 16-byte boundary, in entries.
    const int skew = static_cast<int>(reinterpret_cast<std::uintptr_t>(cols) / sizeof(int) % kEntriesPerLoad);
    const bool vectors_line_up =
        skew == static_cast<int>(reinterpret_cast<std::uintptr_t>(vals) / sizeof(float) % kEntriesPerLoad);

    const int thread = blockIdx.x * blockDim.x + threadIdx.x, threads = gridDim.x * blockDim.x;
    // The same rows for every lane of a group, so its shuffles have all its lanes.
    for (int r = thread / lanes; r < n_rows; r += threads / lanes) {
        const int begin = row_ptr[r], end = row_ptr[r + 1];
        // The row as [begin, head_end) one by one, [head_end, tail_begin)
        // in vectors, [tail_begin, end) one by one; all of it one by one
        // when the vectors of cols and vals do not line up.
        int head_end = end, tail_begin = end;
        if (vectors_line_up) {
            head_end = min(end, begin + (kEntriesPerLoad - (begin + skew) % kEntriesPerLoad) % kEntriesPerLoad);
            tail_begin = head_end + (end - head_end) / kEntriesPerLoad * kEntriesPerLoad;
        }
        float sum = 0.0f;
        for (int k = head_end + lane * kEntriesPerLoad; k < tail_begin; k += lanes * kEntriesPerLoad) {
            const int4 c = __ldcs(reinterpret_cast<const int4*>(cols + k));
            const float4 v = __ldcs(reinterpret_cast<const float4*>(vals + k));
            const float x0 = x[c.x], x1 = x[c.y], x2 = x[c.z], x3 = x[c.w];  // 4 gathers in flight
            sum += v.x * x0 + v.y * x1 + v.z * x2 + v.w * x3;
        }
        for (int k = begin + lane; k < head_end; k += lanes) sum = add_entry(sum, cols, vals, x, k);
        for (int k = tail_begin + lane; k < end; k += lanes) sum = add_entry(sum, cols, vals, x, k);
        // The group's partial sums, added by a shuffle reduction within the group (lesson 05).
        for (int offset = lanes / 2; offset > 0; offset /= 2) sum += __shfl_down_sync(group_mask, sum, offset, lanes);
        if (lane == 0) y[r] = sum;
    }
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

__global__ void fill_kernel(int n, float value, float* out) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = value;
}

// sums[0] += sum of rank, sums[1] += sum of linked = A rank. Each thread
// adds its grid-stride share in a register and does one double atomicAdd
// (a grid of a few blocks per SM keeps the atomics few; a shared-memory
// tree as in lesson 04 would cut them to one per block).
__global__ void rank_sums_kernel(int n, const float* rank, const float* linked, double* sums) {
    double rank_sum = 0, linked_sum = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        rank_sum += rank[i];
        linked_sum += linked[i];
    }
    atomicAdd(&sums[0], rank_sum);
    atomicAdd(&sums[1], linked_sum);
}

// next = (1 - d)/n + d (A rank + dangling/n); sums[2] += sum |next - rank|.
// The columns of dangling nodes are empty, so A rank misses exactly their
// rank: dangling = sum(rank) - sum(A rank), spread over all n nodes.
__global__ void rank_update_kernel(int n, float damping, const float* rank, const float* linked,
                                   double* sums, float* next) {
    const float dangling = static_cast<float>(sums[0] - sums[1]);
    const float teleport = (1.0f - damping) / n;
    double change = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const float value = teleport + damping * (linked[i] + dangling / n);
        change += fabs(static_cast<double>(value) - rank[i]);
        next[i] = value;
    }
    atomicAdd(&sums[2], change);
}

}  // namespace

void coo_to_csr(int n_rows, int nnz, const int* rows, const int* cols, const float* vals, int* row_ptr,
                int* csr_cols, float* csr_vals) {
    // The row offsets: count, then scan (the counts are freed on return;
    // cudaFree waits for the kernels).
    course::DeviceBuffer<int> row_counts(static_cast<std::size_t>(n_rows));
    if (n_rows > 0) COURSE_CUDA_CHECK(cudaMemset(row_counts.data(), 0, n_rows * sizeof(int)));
    if (nnz > 0) {
        count_rows_kernel<<<blocks_for(nnz), kThreadsPerBlock>>>(nnz, rows, row_counts.data());
        COURSE_CUDA_CHECK(cudaGetLastError());
    }
    exclusive_scan(row_counts.data(), row_ptr, n_rows);
    // The entries, sorted by (row, column, COO position).
    if (nnz > 0) sort_entries(n_rows, nnz, rows, cols, vals, csr_cols, csr_vals);
}

void csr_spmv(int n_rows, const int* row_ptr, const int* cols, const float* vals, const float* x, float* y) {
    if (n_rows == 0) return;
    spmv_kernel<<<spmv_blocks(n_rows), kThreadsPerBlock>>>(n_rows, row_ptr, cols, vals, x, y);
    COURSE_CUDA_CHECK(cudaGetLastError());
}

int pagerank(int n, const int* row_ptr, const int* cols, const float* vals, float damping, float tolerance,
             int max_iterations, float* rank) {
    if (n == 0) return 0;
    course::DeviceBuffer<float> linked(static_cast<std::size_t>(n));
    course::DeviceBuffer<float> next(static_cast<std::size_t>(n));
    course::DeviceBuffer<double> sums(3);  // sum of rank, sum of A rank, L1 change
    const unsigned blocks = std::min(blocks_for(n), 1024u);

    fill_kernel<<<blocks_for(n), kThreadsPerBlock>>>(n, 1.0f / n, rank);
    COURSE_CUDA_CHECK(cudaGetLastError());
    int iteration = 0;
    while (iteration < max_iterations) {
        ++iteration;
        csr_spmv(n, row_ptr, cols, vals, rank, linked.data());
        COURSE_CUDA_CHECK(cudaMemset(sums.data(), 0, 3 * sizeof(double)));
        rank_sums_kernel<<<blocks, kThreadsPerBlock>>>(n, rank, linked.data(), sums.data());
        COURSE_CUDA_CHECK(cudaGetLastError());
        rank_update_kernel<<<blocks, kThreadsPerBlock>>>(n, damping, rank, linked.data(), sums.data(), next.data());
        COURSE_CUDA_CHECK(cudaGetLastError());
        COURSE_CUDA_CHECK(cudaMemcpy(rank, next.data(), n * sizeof(float), cudaMemcpyDeviceToDevice));
        double change = 0;
        COURSE_CUDA_CHECK(cudaMemcpy(&change, sums.data() + 2, sizeof(double), cudaMemcpyDeviceToHost));
        if (change < tolerance) break;
    }
    return iteration;
}

}  // namespace lesson13
