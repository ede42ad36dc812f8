/// @file sparse.hpp
/// @brief Lesson 13 contract: a sparse matrix from COO (row, column, value
/// triples in any order) to CSR (row offsets, columns, values), the CSR
/// matrix-vector product y = A x, and PageRank by power iteration on it.
///
/// You implement these functions in `starter/13-sparse-formats/sparse.cu`,
/// with kernels only (no cuSPARSE, Thrust or CUB). The tests call them with
/// device pointers and compare with a CPU reference; on a GPU they also
/// compare with cuSPARSE. See the lesson text, `lessons/13-sparse-formats/README.md`.
///
/// Common to every function:
/// - Indices are 0-based `int`s. A row index must be in [0, n_rows) and a
///   column index at least 0 (and below the length of `x` for csr_spmv());
///   an index out of range is a broken precondition: the result is
///   undefined (the kernels may read or write out of bounds).
/// - All pointers are device pointers. A pointer to an array of 0 elements
///   may be null.
/// - Workspace is allocated inside with checked `cudaMalloc` and freed
///   before returning; a failed CUDA call throws course::CudaError.
#pragma once

namespace lesson13 {

/// @brief Converts a matrix of `n_rows` rows from COO to CSR.
///
/// The result is the one CSR form of the matrix: the entries sorted by row,
/// then by column, then by their position in the COO arrays, and the row
/// indices compressed into offsets:
/// - `row_ptr[r]` is the number of entries in rows 0 .. r-1, so row r's
///   entries are `csr_cols[row_ptr[r] .. row_ptr[r+1])` and the same range of
///   `csr_vals`; `row_ptr[0] == 0` and `row_ptr[n_rows] == nnz`;
/// - within a row the columns are ascending;
/// - **duplicates** (the same row and column more than once) are all kept,
///   not summed, in the order they have in the COO arrays (their values
///   are added by csr_spmv() like any other entries).
///
/// The result does not depend on the order the GPU runs the threads in,
/// although the entries are placed with atomics.
///
/// Edge cases: `nnz == 0` gives `row_ptr` all zeros (every row empty);
/// `n_rows == 0` (then nnz must be 0) writes `row_ptr[0] = 0` only. Empty
/// rows anywhere get `row_ptr[r] == row_ptr[r+1]`.
///
/// @param n_rows   number of rows, >= 0.
/// @param nnz      number of entries, >= 0.
/// @param rows     nnz row indices, each in [0, n_rows), in any order.
/// @param cols     nnz column indices, each >= 0.
/// @param vals     nnz values; `vals[k]` belongs to (`rows[k]`, `cols[k]`).
/// @param row_ptr  out: n_rows + 1 offsets.
/// @param csr_cols out: nnz column indices, sorted within each row.
/// @param csr_vals out: nnz values, moved along with their columns.
void coo_to_csr(int n_rows, int nnz, const int* rows, const int* cols, const float* vals, int* row_ptr,
                int* csr_cols, float* csr_vals);

/// @brief The sparse matrix-vector product `y = A x`, A in CSR.
///
/// `y[r]` is the sum of `vals[k] * x[cols[k]]` over row r's entries
/// `k = row_ptr[r] .. row_ptr[r+1]-1`, in float; an empty row gives
/// `y[r] = 0`. The tests allow the rounding of a float sum of the row's
/// length: `|y[r] - exact| <= (len + 2) * FLT_EPSILON * sum |vals[k] * x[cols[k]]|`.
///
/// Works for any CSR with ascending offsets (sorted columns are not
/// needed). `n_rows == 0` does nothing. Returns without synchronising.
///
/// @param n_rows  number of rows, >= 0.
/// @param row_ptr n_rows + 1 offsets (see coo_to_csr()).
/// @param cols    row_ptr[n_rows] column indices, each a valid index of x.
/// @param vals    row_ptr[n_rows] values.
/// @param x       the input vector (as long as the matrix has columns).
/// @param y       out: n_rows values (may not alias x).
void csr_spmv(int n_rows, const int* row_ptr, const int* cols, const float* vals, const float* x, float* y);

/// @brief PageRank of a graph of `n` nodes by power iteration on csr_spmv().
///
/// The graph is given as its link matrix A in CSR (n x n): for every link
/// from node j to node i, `A[i][j] = 1 / outdegree(j)`. So every column of
/// A sums to 1, except the columns of **dangling** nodes (no outgoing
/// links), which are empty. This is a precondition: it lets the function
/// find the rank held by dangling nodes as `sum(rank) - sum(A rank)`.
///
/// Starting from `rank[i] = 1/n`, each iteration computes
/// `next[i] = (1 - damping) / n + damping * ((A rank)[i] + dangling / n)`,
/// where `dangling` is the total rank of the dangling nodes (spread evenly
/// over all nodes, as if a dangling node linked to every node), then sets
/// `rank = next`. It stops after the first iteration whose L1 change
/// `sum |next[i] - rank[i]|` is below `tolerance`, or after
/// `max_iterations` iterations, whichever comes first. The ranks stay a
/// probability vector (they sum to 1, up to rounding).
///
/// Edge cases: `n == 0` returns 0 and touches nothing; `max_iterations == 0`
/// returns 0 with `rank` = 1/n everywhere; a graph with no links at all
/// (every node dangling) converges to 1/n everywhere.
///
/// @param n              number of nodes, >= 0.
/// @param row_ptr        n + 1 offsets of A.
/// @param cols           the columns of A's entries (the linking nodes).
/// @param vals           A's values, 1 / outdegree of the column's node.
/// @param damping        the probability of following a link, in [0, 1] (0.85 is usual).
/// @param tolerance      the L1 change below which the iteration stops, > 0.
/// @param max_iterations the most iterations to run, >= 0.
/// @param rank           out: n ranks after the last iteration.
/// @return the number of iterations run (1 to max_iterations, or 0 as above).
int pagerank(int n, const int* row_ptr, const int* cols, const float* vals, float damping, float tolerance,
             int max_iterations, float* rank);

}  // namespace lesson13
