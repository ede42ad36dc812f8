// Lesson 13 reference solution: COO to CSR with kernels only, the CSR
// matrix-vector product, and PageRank by power iteration on it.
//
// COO to CSR is "sort by (row, column), then compress the rows". Sorting
// all nnz entries is the expensive, general way; here the rows are known in
// advance (0 .. n_rows-1), so the sort by row becomes a counting sort:
// 1. count the entries of each row (a histogram with atomicAdd, lesson 09);
// 2. an exclusive scan of the counts gives each row's first slot: row_ptr;
// 3. every entry takes the next free slot of its row (atomicAdd on a cursor
//    per row), which groups the entries by row, in an order within the row
//    that depends on which thread got there first;
// 4. one thread per row sorts its (column, COO position) pairs, moving the
//    values along: the order no longer depends on the schedule, and
//    duplicates keep their COO order.
#include <sparse.hpp>

#include <course/cuda_check.hpp>
#include <course/device_buffer.hpp>

#include <algorithm>
#include <cstddef>
#include <cuda_runtime.h>

namespace lesson13 {

namespace {

constexpr int kThreadsPerBlock = 256;
constexpr int kScanThreads = 1024;  // the one block of the scan

// Blocks of kThreadsPerBlock threads for one thread per item (at least 1).
unsigned blocks_for(int items) {
    return static_cast<unsigned>(std::max(1, (items + kThreadsPerBlock - 1) / kThreadsPerBlock));
}

// Step 1: how many entries each row has. Two entries of one row may be
// counted at the same moment, so the increment is atomic (lesson 09).
__global__ void count_rows_kernel(int nnz, const int* rows, int* row_counts) {
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < nnz) atomicAdd(&row_counts[rows[k]], 1);
}

// Step 2: row_ptr[r] = row_counts[0] + ... + row_counts[r-1] (exclusive),
// row_ptr[n_rows] = the total. One block: each thread owns a contiguous
// chunk of rows, sums it, the block scans the chunk sums in shared memory,
// and each thread then writes its chunk's offsets starting from the sum of
// the chunks before it. Enough for millions of rows; a multi-block scan
// (a scan per block, a scan of the block totals, an add) is "Going further".
__global__ void exclusive_scan_kernel(int n, const int* row_counts, int* row_ptr) {
    __shared__ int chunk_sums[kScanThreads];
    const int t = threadIdx.x;
    const int threads = blockDim.x;
    const int chunk = (n + threads - 1) / threads;
    const int begin = min(n, t * chunk);
    const int end = min(n, begin + chunk);

    int own = 0;
    for (int i = begin; i < end; ++i) own += row_counts[i];
    chunk_sums[t] = own;
    __syncthreads();

    // Hillis-Steele inclusive scan of the chunk sums: at each step, add the
    // value `offset` places to the left. Read, barrier, write, barrier: a
    // thread must not overwrite a slot that another thread has yet to read
    // at this step, nor read one before it is written at the step before.
    for (int offset = 1; offset < threads; offset *= 2) {
        const int left = t >= offset ? chunk_sums[t - offset] : 0;
        __syncthreads();
        chunk_sums[t] += left;
        __syncthreads();
    }

    // The inclusive sum minus the thread's own chunk: the rows before it.
    int running = chunk_sums[t] - own;
    for (int i = begin; i < end; ++i) {
        row_ptr[i] = running;
        running += row_counts[i];
    }
    // The last offset is the end of the last row: nnz.
    if (t == threads - 1) row_ptr[n] = chunk_sums[t];
}

// Step 3: each entry takes the next free slot of its row. `row_cursor`
// starts at 0; atomicAdd returns the count before this entry, so the
// entries of row r fill row_ptr[r], row_ptr[r] + 1, ... in whatever order
// their threads run. The COO position goes along, for the sort's tie-break.
__global__ void scatter_kernel(int nnz, const int* rows, const int* cols, const float* vals, const int* row_ptr,
                               int* row_cursor, int* csr_cols, float* csr_vals, int* csr_positions) {
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= nnz) return;
    const int r = rows[k];
    const int slot = row_ptr[r] + atomicAdd(&row_cursor[r], 1);
    csr_cols[slot] = cols[k];
    csr_vals[slot] = vals[k];
    csr_positions[slot] = k;
}

// Step 4: one thread sorts one row by (column, COO position), moving the
// value along with its column. Insertion sort: no extra memory and fast
// for short rows, but quadratic in the row's length: a row of 10,000
// entries costs one thread ~10^8/4 steps (see "Pitfalls" in the lesson).
__global__ void sort_rows_kernel(int n_rows, const int* row_ptr, int* csr_cols, float* csr_vals,
                                 int* csr_positions) {
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= n_rows) return;
    const int begin = row_ptr[r];
    const int end = row_ptr[r + 1];
    for (int i = begin + 1; i < end; ++i) {
        const int col = csr_cols[i];
        const float val = csr_vals[i];
        const int pos = csr_positions[i];
        int j = i - 1;
        while (j >= begin && (csr_cols[j] > col || (csr_cols[j] == col && csr_positions[j] > pos))) {
            csr_cols[j + 1] = csr_cols[j];
            csr_vals[j + 1] = csr_vals[j];
            csr_positions[j + 1] = csr_positions[j];
            --j;
        }
        csr_cols[j + 1] = col;
        csr_vals[j + 1] = val;
        csr_positions[j + 1] = pos;
    }
}

// y = A x, one thread per row: the row's entries are contiguous, so the
// thread walks row_ptr[r] .. row_ptr[r+1]-1 and sums in a register.
__global__ void spmv_kernel(int n_rows, const int* row_ptr, const int* cols, const float* vals, const float* x,
                            float* y) {
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= n_rows) return;
    float sum = 0.0f;
    for (int k = row_ptr[r]; k < row_ptr[r + 1]; ++k) sum += vals[k] * x[cols[k]];
    y[r] = sum;
}

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
    // The workspace, freed on return (cudaFree waits for the kernels).
    course::DeviceBuffer<int> row_counts(static_cast<std::size_t>(n_rows));
    course::DeviceBuffer<int> positions(static_cast<std::size_t>(nnz));
    if (n_rows > 0) COURSE_CUDA_CHECK(cudaMemset(row_counts.data(), 0, n_rows * sizeof(int)));
    if (nnz > 0) {
        count_rows_kernel<<<blocks_for(nnz), kThreadsPerBlock>>>(nnz, rows, row_counts.data());
        COURSE_CUDA_CHECK(cudaGetLastError());
    }
    exclusive_scan_kernel<<<1, kScanThreads>>>(n_rows, row_counts.data(), row_ptr);
    COURSE_CUDA_CHECK(cudaGetLastError());
    if (nnz == 0) return;
    // The counts have been scanned: reuse them as the rows' cursors.
    COURSE_CUDA_CHECK(cudaMemset(row_counts.data(), 0, n_rows * sizeof(int)));
    scatter_kernel<<<blocks_for(nnz), kThreadsPerBlock>>>(nnz, rows, cols, vals, row_ptr, row_counts.data(), csr_cols,
                                                          csr_vals, positions.data());
    COURSE_CUDA_CHECK(cudaGetLastError());
    sort_rows_kernel<<<blocks_for(n_rows), kThreadsPerBlock>>>(n_rows, row_ptr, csr_cols, csr_vals, positions.data());
    COURSE_CUDA_CHECK(cudaGetLastError());
}

void csr_spmv(int n_rows, const int* row_ptr, const int* cols, const float* vals, const float* x, float* y) {
    if (n_rows == 0) return;
    spmv_kernel<<<blocks_for(n_rows), kThreadsPerBlock>>>(n_rows, row_ptr, cols, vals, x, y);
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
