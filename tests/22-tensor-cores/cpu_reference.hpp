/// @file cpu_reference.hpp
/// @brief Lesson 22's CPU reference: the product of 16-bit matrices in
/// double, with the tolerance a tensor-core product with float accumulation
/// must meet.
///
/// The inputs. The tests draw values that half or bfloat16 holds exactly
/// (see exact_values()), so the CPU multiplies the very numbers the GPU
/// sees, without rounding anything itself.
///
/// The tolerance. A product of two halves (11 significant bits each) or two
/// bfloat16 values (8 bits) has at most 22 significant bits: it is exact in
/// float, and in double. What rounds is the accumulation of K of them in
/// float. Any order of K - 1 float additions rounded to nearest is within
/// gamma_K * sum_k |a_ik b_kj| of the exact sum, gamma_K = K u / (1 - K u),
/// u = 2^-24 (Higham, *Accuracy and Stability of Numerical Algorithms*,
/// section 3.1). The tests allow twice that,
///
///     |c_ij - exact_ij| <= K * 2^-23 * sum_k |a_ik b_kj|,
///
/// for two reasons. The emulator rounds once per mma_sync (16 terms summed
/// exactly, then rounded to float), far inside the bound. A real tensor
/// core does not round to nearest: measurements of NVIDIA's tensor cores
/// (Fasi, Higham, Mikaitis and Pranesh, "Numerical behavior of NVIDIA tensor
/// cores", PeerJ Computer Science, 2021: V100, T4 and A100) found exact
/// products, sums aligned to the largest exponent of a group of terms, and
/// truncation instead of rounding. Truncation errs by up to one unit in the
/// last place, 2^-23 relative, where rounding to nearest errs by half of
/// it: the doubled bound covers one truncation per term. The reference's
/// own error in double (K * 2^-53 * the same sum) is 2^30 times smaller.
/// For K = 0 the bound is 0: C must be exactly 0.
#pragma once

#include <cmath>
#include <cstddef>
#include <random>
#include <string>
#include <vector>

#include <course/inputs.hpp>

namespace lesson22_reference {

/// @brief The exact product, near enough, with the scale of its rounding errors.
struct Product {
    std::vector<double> c;          ///< C = A·B, M x N row-major, in double.
    std::vector<double> magnitude;  ///< sum_k |a_ik b_kj| per element: what the tolerance scales with.
};

/// @brief C = A·B in double for row-major A (M x K) and B (K x N), with
/// sum_k |a_ik b_kj| for each element.
inline Product matmul(const std::vector<float>& A, const std::vector<float>& B, int M, int N, int K) {
    const std::size_t m = static_cast<std::size_t>(M), n = static_cast<std::size_t>(N),
                      k = static_cast<std::size_t>(K);
    Product p{std::vector<double>(m * n, 0.0), std::vector<double>(m * n, 0.0)};
    for (std::size_t i = 0; i < m; ++i) {
        double* c_row = p.c.data() + i * n;
        double* mag_row = p.magnitude.data() + i * n;
        for (std::size_t l = 0; l < k; ++l) {  // i-k-j: the inner loop runs along rows of B and C
            const double a = A[i * k + l];
            const float* b_row = B.data() + l * n;
            for (std::size_t j = 0; j < n; ++j) {
                c_row[j] += a * b_row[j];
                mag_row[j] += std::fabs(a * b_row[j]);
            }
        }
    }
    return p;
}

/// @brief Element (i, j) of A·B summed over k < length only: what a kernel
/// whose K loop stops early computes.
inline double partial_element(const std::vector<float>& A, const std::vector<float>& B, int N, int K, std::size_t i,
                              std::size_t j, int length) {
    double sum = 0.0;
    for (int l = 0; l < length; ++l) {
        sum += static_cast<double>(A[i * static_cast<std::size_t>(K) + static_cast<std::size_t>(l)]) *
               B[static_cast<std::size_t>(l) * static_cast<std::size_t>(N) + j];
    }
    return sum;
}

/// @brief How far a tensor-core product of length K may be from the exact
/// value: K * 2^-23 * magnitude (see the file comment).
inline double tolerance(int K, double magnitude) { return static_cast<double>(K) * std::ldexp(magnitude, -23); }

/// @brief The 16-bit formats, by their significant bits.
enum class Format { half, bfloat16 };

/// @brief `count` random values that `format` holds exactly, so that no
/// rounding stands between the CPU's inputs and the GPU's.
///
/// half: k / 1024 for an integer k in [-1024, 1024] (11 significant bits at
/// most, inside half's range). bfloat16: k / 128 for k in [-255, 255] (8
/// significant bits), times 2^e with e in [-wide_exponent, wide_exponent]:
/// with wide_exponent = 60 the values span 2^-67 to 2^61, far outside
/// half's range (2^-24 to 65504), which is what bfloat16's 8 exponent bits are for.
inline std::vector<float> exact_values(std::size_t count, Format format, int wide_exponent,
                                       const std::string& label) {
    std::mt19937_64 gen = course::rng(label);
    std::vector<float> v(count);
    if (format == Format::half) {
        std::uniform_int_distribution<int> k(-1024, 1024);
        for (float& x : v) x = std::ldexp(static_cast<float>(k(gen)), -10);
    } else {
        std::uniform_int_distribution<int> k(-255, 255);
        std::uniform_int_distribution<int> e(-wide_exponent, wide_exponent);
        for (float& x : v) x = std::ldexp(static_cast<float>(k(gen)), e(gen) - 7);
    }
    return v;
}

}  // namespace lesson22_reference
