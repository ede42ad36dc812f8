/// @file earlier_reference.cuh
/// @brief Lesson 13's earlier references, kept for the benchmark only: one
/// run then times them beside today's reference and cuSPARSE.
/// - The first (until 2026-11): its COO to CSR places each entry with an
///   atomic cursor per row and sorts each row with one thread (insertion
///   sort by column and COO position); its SpMV gives each row one thread
///   (the lesson's first step). It measured 0.92x cuSPARSE's conversion and
///   0.89x cusparseSpMV on an H100.
/// - The second SpMV (until issue #22's H100 run, 2026-11-26): a group of
///   lanes per row, one entry per lane and load, each warp a run of
///   consecutive rows (0.91x cusparseSpMV); and the same kernel with rows
///   grid-stride (0.97x), the step between it and today's reference.
/// The lesson's page, "Measured results", has the numbers. Same contract as
/// sparse.hpp's functions.
///
/// Included by sparse_bench.cu alone (nvcc): the tests and the grader never
/// see it, and the reference solution no longer holds these kernels.
#pragma once

#include <course/cuda_check.hpp>
#include <course/device_buffer.hpp>

#include <algorithm>
#include <cstddef>
#include <cuda_runtime.h>

namespace lesson13::earlier {

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

// The second reference's SpMV: `lanes` threads a row (the smallest power
// of two, up to 32, that gives a row of mean length one entry a lane),
// lane l summing entries row_ptr[r] + l, + lanes, ..., the matrix through
// __ldcs, a shuffle reduction in the group. kGridStride false: each warp
// takes a run of consecutive rows, which its groups share out in turn (as
// that reference did); true: group g takes rows g, g + G, ... (G groups in
// the grid), as today's reference does.
template <bool kGridStride>
__global__ void group_spmv_kernel(int n_rows, const int* row_ptr, const int* cols, const float* vals, const float* x,
                                  float* y) {
    const int nnz = row_ptr[n_rows];
    int lanes = 1;
    while (lanes < 32 && static_cast<long long>(lanes) * n_rows < nnz) lanes *= 2;
    const int lane = threadIdx.x % lanes, group = threadIdx.x % 32 / lanes;
    const unsigned group_mask = lanes == 32 ? 0xffffffffu : ((1u << lanes) - 1u) << (group * lanes);
    const int thread = blockIdx.x * blockDim.x + threadIdx.x, threads = gridDim.x * blockDim.x;
    int first = thread / lanes, step = threads / lanes, last = n_rows;
    if (!kGridStride) {
        const int warps = threads / 32, rows_per_warp = (n_rows + warps - 1) / warps;
        first = thread / 32 * rows_per_warp + group;
        step = 32 / lanes;
        last = min(n_rows, thread / 32 * rows_per_warp + rows_per_warp);
    }
    for (int r = first; r < last; r += step) {  // the same rows for the whole group
        const int end = row_ptr[r + 1];
        float sum = 0.0f;
        for (int k = row_ptr[r] + lane; k < end; k += lanes) sum += __ldcs(&vals[k]) * x[__ldcs(&cols[k])];
        for (int offset = lanes / 2; offset > 0; offset /= 2) sum += __shfl_down_sync(group_mask, sum, offset, lanes);
        if (lane == 0) y[r] = sum;
    }
}

}  // namespace

inline void coo_to_csr(int n_rows, int nnz, const int* rows, const int* cols, const float* vals, int* row_ptr,
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

inline void csr_spmv(int n_rows, const int* row_ptr, const int* cols, const float* vals, const float* x, float* y) {
    if (n_rows == 0) return;
    spmv_kernel<<<blocks_for(n_rows), kThreadsPerBlock>>>(n_rows, row_ptr, cols, vals, x, y);
    COURSE_CUDA_CHECK(cudaGetLastError());
}

/// @brief The second reference's SpMV (see the file's comment), on 8 blocks
/// of 256 threads an SM (all resident at once), or one thread a row for a
/// smaller matrix.
template <bool kGridStride>
void group_spmv(int n_rows, const int* row_ptr, const int* cols, const float* vals, const float* x, float* y) {
    if (n_rows == 0) return;
    static const unsigned sm_count = [] {
        int device = 0, count = 0;
        COURSE_CUDA_CHECK(cudaGetDevice(&device));
        COURSE_CUDA_CHECK(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device));
        return static_cast<unsigned>(count);
    }();
    const unsigned blocks = std::min(blocks_for(n_rows), 8u * sm_count);
    group_spmv_kernel<kGridStride><<<blocks, kThreadsPerBlock>>>(n_rows, row_ptr, cols, vals, x, y);
    COURSE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace lesson13::earlier
