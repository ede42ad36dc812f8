/// @file cpu_reference.hpp
/// @brief Lesson 13's CPU reference: COO to CSR by a sort, SpMV in double,
/// PageRank by power iteration in double, and the test matrices and graphs.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>
#include <tuple>
#include <vector>

namespace lesson13::reference {

/// @brief A matrix in COO form: entry k is (rows[k], cols[k], vals[k]).
struct Coo {
    int n_rows = 0;          ///< Number of rows.
    int n_cols = 0;          ///< Number of columns (the length of x in y = A x).
    std::vector<int> rows;   ///< Row of each entry.
    std::vector<int> cols;   ///< Column of each entry.
    std::vector<float> vals; ///< Value of each entry.
    /// @brief Number of entries.
    int nnz() const { return static_cast<int>(rows.size()); }
};

/// @brief A matrix in CSR form.
struct Csr {
    std::vector<int> row_ptr;  ///< n_rows + 1 offsets.
    std::vector<int> cols;     ///< Column of each entry, row by row.
    std::vector<float> vals;   ///< Value of each entry, row by row.
};

/// @brief The CSR of `coo`: entries sorted by (row, column, COO position) —
/// a stable sort by (row, column) — and the rows counted into offsets.
inline Csr coo_to_csr(const Coo& coo) {
    std::vector<int> order(coo.rows.size());
    std::iota(order.begin(), order.end(), 0);
    // The position breaks the ties: std::sort gives the stable order
    // (libstdc++ 12's std::stable_sort calls get_temporary_buffer, which
    // Clang 19 warns is deprecated).
    std::sort(order.begin(), order.end(), [&](int a, int b) {
        return std::tie(coo.rows[a], coo.cols[a], a) < std::tie(coo.rows[b], coo.cols[b], b);
    });
    Csr csr;
    csr.row_ptr.assign(coo.n_rows + 1, 0);
    for (const int r : coo.rows) ++csr.row_ptr[r + 1];
    for (int r = 0; r < coo.n_rows; ++r) csr.row_ptr[r + 1] += csr.row_ptr[r];
    for (const int k : order) {
        csr.cols.push_back(coo.cols[k]);
        csr.vals.push_back(coo.vals[k]);
    }
    return csr;
}

/// @brief y = A x in double, and for each row sum |a x| (the scale of a
/// float sum's rounding error: the tests allow (len + 2) FLT_EPSILON times it).
inline void spmv(const Csr& a, const std::vector<float>& x, std::vector<double>& y, std::vector<double>& magnitude) {
    const std::size_t n_rows = a.row_ptr.empty() ? 0 : a.row_ptr.size() - 1;
    y.assign(n_rows, 0.0);
    magnitude.assign(n_rows, 0.0);
    for (std::size_t r = 0; r < n_rows; ++r) {
        for (int k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) {
            const double term = static_cast<double>(a.vals[k]) * x[a.cols[k]];
            y[r] += term;
            magnitude[r] += std::fabs(term);
        }
    }
}

/// @brief The link matrix of a graph in COO: for every link j -> i an entry
/// (i, j, 1 / outdegree(j)); `links` holds (from, to) pairs, none repeated.
inline Coo link_matrix(int n, const std::vector<std::pair<int, int>>& links) {
    std::vector<int> outdegree(n, 0);
    for (const auto& [from, to] : links) ++outdegree[from];
    Coo coo{n, n, {}, {}, {}};
    for (const auto& [from, to] : links) {
        coo.rows.push_back(to);
        coo.cols.push_back(from);
        coo.vals.push_back(1.0f / static_cast<float>(outdegree[from]));
    }
    return coo;
}

/// @brief The PageRank power iteration of the contract, in double, on the
/// graph's links: from 1/n, next = (1-d)/n + d (sum over links j->i of
/// rank[j]/outdegree(j) + dangling/n), dangling = the rank of the nodes
/// without links. Stops when the L1 change is below `tolerance` or after
/// `max_iterations`; `iterations` gets the count.
inline std::vector<double> pagerank(int n, const std::vector<std::pair<int, int>>& links, double damping,
                                    double tolerance, int max_iterations, int& iterations) {
    std::vector<int> outdegree(n, 0);
    for (const auto& [from, to] : links) ++outdegree[from];
    std::vector<double> rank(n, 1.0 / n), next(n);
    iterations = 0;
    while (iterations < max_iterations) {
        ++iterations;
        double dangling = 0;
        for (int j = 0; j < n; ++j) {
            if (outdegree[j] == 0) dangling += rank[j];
        }
        std::fill(next.begin(), next.end(), 0.0);
        for (const auto& [from, to] : links) next[to] += rank[from] / outdegree[from];
        double change = 0;
        for (int i = 0; i < n; ++i) {
            next[i] = (1 - damping) / n + damping * (next[i] + dangling / n);
            change += std::fabs(next[i] - rank[i]);
        }
        rank.swap(next);
        if (change < tolerance) break;
    }
    return rank;
}

}  // namespace lesson13::reference
