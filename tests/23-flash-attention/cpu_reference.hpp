/// @file cpu_reference.hpp
/// @brief Lesson 23's CPU reference: single-head attention in double from
/// the same half-precision inputs, with the tolerance a FlashAttention
/// kernel (half probabilities, float sums, half output) must meet.
///
/// The inputs. The tests draw values that half holds exactly (multiples of
/// 2^-10 in [-1, 1], or of 2^-6 in [-6, 6] for large scores), so the CPU
/// computes with the very numbers the GPU reads.
///
/// The bound, for query row i and column c of O. Write w_ij for the exact
/// probabilities (sum_j w_ij = 1 over the visible keys), o_ic = sum_j w_ij v_jc.
///
/// 1. The scores. s_ij = scale * sum_k q_ik k_jk is a float sum of d exact
///    products (tensor cores, possibly truncating: see lesson 22), then one
///    multiplication by scale·log2(e) in float: its error is at most
///    d 2^-23 scale sum_k |q_ik k_jk| + 2^-23 |s_ij|. Subtracting the running
///    maximum (|s| up to ~90 in log2 units) errs by 2^-24 of it. E_i below
///    bounds all of this for the row, in natural-log units, and exp2f's own
///    few ulps (2^-21). A weight's relative error from its score is then
///    e^E - 1 <= 1.01 E (E is far below 2^-6 here).
/// 2. The probabilities p = exp(s - m) <= 1 are rounded to half before P·V:
///    relative error 2^-11 above half's smallest normal 2^-14, absolute
///    2^-25 below it. l sums the rounded p, so O / l is a weighted average
///    with weights w'_j = w_j (1 + eta_j) / sum_k w_k (1 + eta_k); with
///    |eta_j| <= eta, |sum_j (w'_j - w_j) v_jc| <= 2 eta / (1 - eta) W_ic,
///    where W_ic = sum_j w_ij |v_jc|. The absolute error of the tiny p
///    (2^-25 each, divided by l >= 1) adds at most N 2^-25 max_j |v_jc|.
/// 3. The float accumulation of P·V and of l over up to N terms, and the
///    rescaling by alpha once per tile (the same factor on O and l, so it
///    cancels but for its rounding): N 2^-23 W_ic with room to spare.
/// 4. O is rounded to half: 2^-11 |o_ic| (and 2^-25 absolute below 2^-14).
///
/// Together, with eta = 2^-11 + 1.01 E_i and a little room:
///
///     |o_ic - exact_ic| <= 2^-11 |exact_ic| + (2^-9 + 2 E_i + N 2^-23) W_ic + N 2^-24 max_j |v_jc| + 2^-24.
///
/// L_i = ln sum_j exp(s_ij) = m_i + ln l_i: its error is the scores' E_i
/// plus l's relative error (2^-11 from rounding p, float sums) and log2f's:
///
///     |L_i - exact| <= 2^-10 + 2 E_i.
///
/// The mistakes the lesson's mutants make change O by a large fraction of
/// W_ic (a wrong weight, a missing key, a missing rescale), or L by m_i.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <course/inputs.hpp>

namespace lesson23_reference {

/// @brief Exact attention, near enough, with the scale of each element's allowed error.
struct Attention {
    std::vector<double> o;          ///< O, N x d row-major, in double.
    std::vector<double> tolerance;  ///< The allowed |o - exact| of each element (see the file comment).
    std::vector<double> lse;        ///< L_i = ln sum_j exp(s_ij), in double.
    std::vector<double> lse_tolerance;  ///< The allowed |L_i - exact| per row.
    double max_abs_score = 0;       ///< The largest |s_ij| met (the tests check their inputs reach far).
};

/// @brief Rows `rows` of the attention of row-major N x d matrices Q, K, V
/// (float copies of the halves) in double: scale 1/√d, keys j <= i only when
/// `causal`. Row r of the result (o[r * d + c], lse[r], ...) is query rows[r].
inline Attention attention_of_rows(const std::vector<float>& Q, const std::vector<float>& K,
                                   const std::vector<float>& V, int N, int d, bool causal,
                                   const std::vector<std::size_t>& rows) {
    const std::size_t n = static_cast<std::size_t>(N), dd = static_cast<std::size_t>(d);
    const std::size_t count = rows.size();
    const double scale = 1.0 / std::sqrt(static_cast<double>(d));
    Attention a{std::vector<double>(count * dd, 0.0), std::vector<double>(count * dd, 0.0),
                std::vector<double>(count, 0.0), std::vector<double>(count, 0.0), 0.0};
    std::vector<double> s(n), w(n), weighted_abs(dd), v_max(dd, 0.0);
    for (std::size_t j = 0; j < n; ++j) {
        for (std::size_t c = 0; c < dd; ++c) v_max[c] = std::max(v_max[c], std::fabs(static_cast<double>(V[j * dd + c])));
    }
    for (std::size_t r = 0; r < count; ++r) {
        const std::size_t i = rows[r];
        const std::size_t keys = causal ? i + 1 : n;
        double m = -std::numeric_limits<double>::infinity(), score_error = 0.0;
        for (std::size_t j = 0; j < keys; ++j) {
            double dot = 0.0, magnitude = 0.0;
            for (std::size_t c = 0; c < dd; ++c) {
                const double p = static_cast<double>(Q[i * dd + c]) * K[j * dd + c];
                dot += p;
                magnitude += std::fabs(p);
            }
            s[j] = dot * scale;
            m = std::max(m, s[j]);
            a.max_abs_score = std::max(a.max_abs_score, std::fabs(s[j]));
            score_error = std::max(score_error, static_cast<double>(d) * std::ldexp(scale * magnitude, -23) +
                                                    std::ldexp(std::fabs(s[j]), -22));
        }
        const double E = score_error + std::ldexp(1.0, -21);
        double sum = 0.0;
        for (std::size_t j = 0; j < keys; ++j) sum += w[j] = std::exp(s[j] - m);
        for (std::size_t j = 0; j < keys; ++j) w[j] /= sum;
        a.lse[r] = m + std::log(sum);
        a.lse_tolerance[r] = std::ldexp(1.0, -10) + 2 * E;
        std::fill(weighted_abs.begin(), weighted_abs.end(), 0.0);
        for (std::size_t j = 0; j < keys; ++j) {
            for (std::size_t c = 0; c < dd; ++c) {
                const double v = V[j * dd + c];
                a.o[r * dd + c] += w[j] * v;
                weighted_abs[c] += w[j] * std::fabs(v);
            }
        }
        for (std::size_t c = 0; c < dd; ++c) {
            a.tolerance[r * dd + c] = std::ldexp(std::fabs(a.o[r * dd + c]), -11) +
                                      (std::ldexp(1.0, -9) + 2 * E + N * std::ldexp(1.0, -23)) * weighted_abs[c] +
                                      N * std::ldexp(v_max[c], -24) + std::ldexp(1.0, -24);
        }
    }
    return a;
}

/// @brief Every row of the attention (see attention_of_rows()).
inline Attention attention(const std::vector<float>& Q, const std::vector<float>& K, const std::vector<float>& V,
                           int N, int d, bool causal) {
    std::vector<std::size_t> rows(static_cast<std::size_t>(N));
    for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = i;
    return attention_of_rows(Q, K, V, N, d, causal, rows);
}

/// @brief `count` random values that half holds exactly: k / 2^bits for an
/// integer k with |k| <= range * 2^bits (range * 2^bits <= 2048 keeps 11
/// significant bits at most).
inline std::vector<float> half_exact_values(std::size_t count, double range, int bits, const std::string& label) {
    std::mt19937_64 gen = course::rng(label);
    const int steps = static_cast<int>(std::ldexp(range, bits));
    std::uniform_int_distribution<int> k(-steps, steps);
    std::vector<float> v(count);
    for (float& x : v) x = std::ldexp(static_cast<float>(k(gen)), -bits);
    return v;
}

}  // namespace lesson23_reference
