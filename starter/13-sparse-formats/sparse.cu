// Lesson 13: a sparse matrix from COO to CSR, the CSR matrix-vector
// product, and PageRank on it, with kernels only.
//
// Goal: make `./course grade 13` pass. Read lessons/13-sparse-formats/README.md
// first; the functions you fill in are documented in sparse.hpp.
// Stuck? `./course hint 13` shows the hints one by one.
//
// Order that works: csr_spmv (the tests build its CSR on the CPU, so it
// passes on its own), then coo_to_csr kernel by kernel (count, scan,
// scatter, sort), then pagerank on top of your csr_spmv.
// No cuSPARSE, Thrust or CUB here: the grader flags them.
#include <sparse.hpp>

#include <course/cuda_check.hpp>
#include <course/device_buffer.hpp>

#include <algorithm>
#include <cstddef>
#include <cuda_runtime.h>

namespace lesson13 {

constexpr int kThreadsPerBlock = 256;
[[maybe_unused]] constexpr int kScanThreads = 1024;  // the one block of the scan (used once your scan is written)

// Given: blocks of kThreadsPerBlock threads for one thread per item (at least 1).
unsigned blocks_for(int items) {
    return static_cast<unsigned>(std::max(1, (items + kThreadsPerBlock - 1) / kThreadsPerBlock));
}

// Step 1: row_counts[r] += 1 for every entry of row r (row_counts starts at 0).
__global__ void count_rows_kernel(int nnz, const int* rows, int* row_counts) {
    // TODO: one thread per entry k < nnz: atomicAdd(&row_counts[rows[k]], 1).
}

// Step 2, one block of kScanThreads threads: row_ptr[r] = row_counts[0] +
// ... + row_counts[r-1], row_ptr[n] = the total.
__global__ void exclusive_scan_kernel(int n, const int* row_counts, int* row_ptr) {
    // TODO: declare __shared__ int chunk_sums[kScanThreads]. Each thread
    // owns a chunk of ceil(n / blockDim.x) consecutive rows: sum its
    // counts into chunk_sums[threadIdx.x]; __syncthreads();
    // scan chunk_sums (for offset = 1, 2, 4, ...: read the slot `offset`
    // to the left, barrier, add it, barrier); then write the chunk's
    // offsets starting from the sum of the chunks before it. The last
    // thread writes row_ptr[n].
}

// Step 3: each entry takes the next free slot of its row (row_cursor starts at 0).
__global__ void scatter_kernel(int nnz, const int* rows, const int* cols, const float* vals, const int* row_ptr,
                               int* row_cursor, int* csr_cols, float* csr_vals, int* csr_positions) {
    // TODO: slot = row_ptr[r] + atomicAdd(&row_cursor[r], 1); write the
    // column, the value and the entry's COO position k to that slot.
}

// Step 4: one thread per row sorts the row by (column, COO position),
// moving the value and the position along with the column.
__global__ void sort_rows_kernel(int n_rows, const int* row_ptr, int* csr_cols, float* csr_vals,
                                 int* csr_positions) {
    // TODO: an insertion sort of row_ptr[r] .. row_ptr[r+1]-1.
}

// y = A x, one thread per row.
__global__ void spmv_kernel(int n_rows, const int* row_ptr, const int* cols, const float* vals, const float* x,
                            float* y) {
    // TODO: y[r] = sum of vals[k] * x[cols[k]] for k in [row_ptr[r], row_ptr[r+1]).
}

// PageRank's kernels: write the ones you need (filling the ranks with 1/n,
// the two sums, the update with its L1 change). Double atomicAdd is fine
// for the sums.

void coo_to_csr(int n_rows, int nnz, const int* rows, const int* cols, const float* vals, int* row_ptr,
                int* csr_cols, float* csr_vals) {
    // Given: the workspace, freed on return (course::DeviceBuffer, the
    // harness's owned device allocation): the counts (then the cursors)
    // and the COO position of each CSR slot.
    course::DeviceBuffer<int> row_counts(static_cast<std::size_t>(n_rows));
    course::DeviceBuffer<int> positions(static_cast<std::size_t>(nnz));
    // TODO: zero row_counts (cudaMemset), count, scan (<<<1, kScanThreads>>>),
    // zero row_counts again to use it as the rows' cursors, scatter, sort.
    // Check every launch with COURSE_CUDA_CHECK(cudaGetLastError()).
    // Mind nnz == 0 and n_rows == 0 (row_ptr still gets its n_rows + 1 offsets).
}

void csr_spmv(int n_rows, const int* row_ptr, const int* cols, const float* vals, const float* x, float* y) {
    // TODO: launch spmv_kernel with one thread per row (nothing when n_rows == 0).
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
