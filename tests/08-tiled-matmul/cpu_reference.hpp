/// @file cpu_reference.hpp
/// @brief Lesson 08's CPU reference: the matrix product in double, with the
/// tolerance a float GPU product must meet.
///
/// The tolerance. Each element c_ij of C = A·B is a dot product of length M,
/// computed on the GPU in float, in an order that depends on the kernel
/// (tiles, micro-tiles, fused multiply-adds). Any order of M products and
/// M - 1 additions in float is within gamma_M * sum_k |a_ik| |b_kj| of the
/// exact value, gamma_M = M u / (1 - M u), u = 2^-24 (Higham, *Accuracy and
/// Stability of Numerical Algorithms*, section 3.1). The tests allow
///
///     |c_ij - exact_ij| <= M * FLT_EPSILON * sum_k |a_ik| |b_kj|,   FLT_EPSILON = 2^-23,
///
/// twice that bound (so constant 2, and no (1 - M u) to worry about). The
/// reference is computed in double, whose own error (M * 2^-53 * the same
/// sum) is 2^29 times smaller, so it counts as exact here. For M = 0 the
/// bound is 0: every element must be exactly 0.
#pragma once

#include <cfloat>
#include <cmath>
#include <cstddef>
#include <vector>

namespace lesson08::reference {

/// @brief The exact product, near enough, with the scale of its rounding errors.
struct Product {
    std::vector<double> c;          ///< C = A·B, N x K row-major, computed in double.
    std::vector<double> magnitude;  ///< sum_k |a_ik| |b_kj| per element: what the tolerance scales with.
};

/// @brief C = A·B in double for row-major A (N x M) and B (M x K), with
/// sum_k |a_ik| |b_kj| for each element of C.
inline Product matmul(const std::vector<float>& A, const std::vector<float>& B, int N, int M, int K) {
    const std::size_t n = static_cast<std::size_t>(N), m = static_cast<std::size_t>(M),
                      k = static_cast<std::size_t>(K);
    Product p{std::vector<double>(n * k, 0.0), std::vector<double>(n * k, 0.0)};
    for (std::size_t i = 0; i < n; ++i) {
        // i-k-j order: the inner loop runs along rows of B and C (contiguous).
        double* c_row = p.c.data() + i * k;
        double* mag_row = p.magnitude.data() + i * k;
        for (std::size_t l = 0; l < m; ++l) {
            const double a = A[i * m + l];
            const float* b_row = B.data() + l * k;
            for (std::size_t j = 0; j < k; ++j) {
                c_row[j] += a * b_row[j];
                mag_row[j] += std::fabs(a * b_row[j]);
            }
        }
    }
    return p;
}

/// @brief One element of A·B, near enough, with its scale (see Product).
struct Element {
    double value = 0;      ///< sum over the first `length` k of a_ik * b_kj, in double.
    double magnitude = 0;  ///< sum over the same k of |a_ik| |b_kj|.
};

/// @brief Element (i, j) of A·B for row-major A (N x M) and B (M x K), summed
/// over k < length only (length = M for the whole dot product): for checking
/// a sample of a large product, or what a kernel that stops early computes.
inline Element element(const std::vector<float>& A, const std::vector<float>& B, int M, int K, std::size_t i,
                       std::size_t j, int length) {
    Element e;
    for (int l = 0; l < length; ++l) {
        const double product = static_cast<double>(A[i * static_cast<std::size_t>(M) + l]) *
                               B[static_cast<std::size_t>(l) * static_cast<std::size_t>(K) + j];
        e.value += product;
        e.magnitude += std::fabs(product);
    }
    return e;
}

/// @brief How far a float dot product of length M may be from the exact
/// value: M * FLT_EPSILON * magnitude (see the file comment).
inline double tolerance(int M, double magnitude) { return static_cast<double>(M) * FLT_EPSILON * magnitude; }

}  // namespace lesson08::reference
