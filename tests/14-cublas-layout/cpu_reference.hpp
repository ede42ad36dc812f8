/// @file cpu_reference.hpp
/// @brief Lesson 14's CPU reference: C = alpha·op(A)·op(B) + beta·C on
/// row-major storage with leading dimensions, in double, with the tolerance
/// a float cuBLAS result must meet; and the transposing copy.
///
/// The tolerance. Element c_ij is alpha times a dot product of length K,
/// plus beta·c0_ij, computed in float in an order cuBLAS chooses. Any order
/// is within about (K + 2)·u·(|alpha|·sum_k |a_ik||b_kj| + |beta|·|c0_ij|)
/// of the exact value, u = 2^-24 (Higham, *Accuracy and Stability of
/// Numerical Algorithms*, section 3.1). The tests allow
///
///     (K + 2) * FLT_EPSILON * (|alpha| * sum_k |a_ik||b_kj| + |beta| * |c0_ij|),   FLT_EPSILON = 2^-23,
///
/// twice that (lesson 08 uses the same bound for beta = 0 and alpha = 1).
/// The reference in double counts as exact. With beta = 0 the old C is not
/// part of the result at all (cuBLAS does not read it), even when it is NaN.
#pragma once

#include <cfloat>
#include <cmath>
#include <cstddef>
#include <vector>

namespace lesson14::reference {

/// @brief Element (i, j) of a row-major matrix with row pitch `ld`.
inline std::size_t at(int i, int j, int ld) {
    return static_cast<std::size_t>(i) * static_cast<std::size_t>(ld) + static_cast<std::size_t>(j);
}

/// @brief Element (i, j) of op(X), where X is stored row-major with pitch
/// `ld` and op transposes it when `transposed`.
inline float op_element(const std::vector<float>& X, int ld, bool transposed, int i, int j) {
    return transposed ? X[at(j, i, ld)] : X[at(i, j, ld)];
}

/// @brief The exact result, near enough, with the scale of its rounding errors.
struct Gemm {
    std::vector<double> c;          ///< M x N, dense row-major (pitch N), in double.
    std::vector<double> magnitude;  ///< |alpha|·sum_k |op(A)_ik||op(B)_kj| + |beta|·|c0_ij| per element.
};

/// @brief alpha·op(A)·op(B) + beta·C0 in double; C0 is row-major with pitch
/// ldc. With beta = 0, C0 is not read (it may hold NaN), as in BLAS.
inline Gemm gemm(bool transa, bool transb, int M, int N, int K, float alpha, const std::vector<float>& A, int lda,
                 const std::vector<float>& B, int ldb, float beta, const std::vector<float>& C0, int ldc) {
    const std::size_t count = static_cast<std::size_t>(M) * static_cast<std::size_t>(N);
    Gemm g{std::vector<double>(count, 0.0), std::vector<double>(count, 0.0)};
    for (int i = 0; i < M; ++i) {
        for (int j = 0; j < N; ++j) {
            double sum = 0.0, magnitude = 0.0;
            for (int k = 0; k < K; ++k) {
                const double product = static_cast<double>(op_element(A, lda, transa, i, k)) *
                                       static_cast<double>(op_element(B, ldb, transb, k, j));
                sum += product;
                magnitude += std::fabs(product);
            }
            double value = static_cast<double>(alpha) * sum;
            magnitude *= std::fabs(static_cast<double>(alpha));
            if (beta != 0.0f) {
                const double old = C0[at(i, j, ldc)];
                value += static_cast<double>(beta) * old;
                magnitude += std::fabs(static_cast<double>(beta) * old);
            }
            g.c[at(i, j, N)] = value;
            g.magnitude[at(i, j, N)] = magnitude;
        }
    }
    return g;
}

/// @brief How far a float result of inner dimension K may be from the exact
/// value: (K + 2) * FLT_EPSILON * magnitude (see the file comment).
inline double tolerance(int K, double magnitude) { return static_cast<double>(K + 2) * FLT_EPSILON * magnitude; }

/// @brief What transpose_copy() must produce: `dst` (column-major, column
/// pitch ld_dst, `dst_before` outside the copied block) with element (i, j)
/// of the row-major `src` (row pitch ld_src) at dst[j * ld_dst + i].
inline std::vector<float> transpose_copy(const std::vector<float>& dst_before, int ld_dst,
                                         const std::vector<float>& src, int ld_src, int rows, int cols) {
    std::vector<float> dst = dst_before;
    for (int i = 0; i < rows; ++i) {
        for (int j = 0; j < cols; ++j) dst[at(j, i, ld_dst)] = src[at(i, j, ld_src)];
    }
    return dst;
}

}  // namespace lesson14::reference
