// Lesson 14 tests (GPU only): cuBLAS SGEMM on row-major matrices through
// swapped operands, with and without transposition flags, with padded rows
// (leading dimension > row length), blocks inside larger matrices and the
// alpha/beta cases; and the cudaMemcpy2D transposing copy. Against a CPU
// product in double, repeated on the GPU (course::for_each_schedule).
//
// The lesson is registered GPU_ONLY: the emulator has no cuBLAS, so there it
// builds none of this and reports the lesson as skipped. The guard below
// only makes sure that a build for the emulator would hold no test rather
// than fail to compile on cublas_v2.h.
#ifndef __CUDACC_EMULATOR__

#include <cublas_layout.hpp>

#include "cpu_reference.hpp"

#include <course/catch.hpp>
#include <course/compare.hpp>
#include <course/cublas_check.hpp>
#include <course/device_buffer.hpp>
#include <course/inputs.hpp>
#include <course/schedules.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace ref = lesson14::reference;

struct Shape {
    int M, N, K;  // op(A) is M x K, op(B) is K x N, C is M x N
};

// One call of gemm_row_major (op = false) or gemm_row_major_op (op = true).
struct Case {
    Shape s;
    bool op = false;          // call gemm_row_major_op (else gemm_row_major: both flags N)
    bool transa = false;      // CUBLAS_OP_T for A
    bool transb = false;      // CUBLAS_OP_T for B
    int pad = 0;              // extra elements at the end of every row of A, B and C
    float alpha = 1.0f;
    float beta = 0.0f;
};

// A row-major matrix as stored: rows x cols, row pitch ld.
struct Stored {
    int rows, cols, ld;
    std::size_t size() const {  // never 0, so that every pointer handed to cuBLAS is a real allocation
        return std::max<std::size_t>(static_cast<std::size_t>(rows) * static_cast<std::size_t>(ld), 1);
    }
};

Stored stored_a(const Case& c) {
    const int rows = c.transa ? c.s.K : c.s.M, cols = c.transa ? c.s.M : c.s.K;
    return {rows, cols, std::max(cols, 1) + c.pad};
}
Stored stored_b(const Case& c) {
    const int rows = c.transb ? c.s.N : c.s.K, cols = c.transb ? c.s.K : c.s.N;
    return {rows, cols, std::max(cols, 1) + c.pad};
}
Stored stored_c(const Case& c) { return {c.s.M, c.s.N, std::max(c.s.N, 1) + c.pad}; }

const char* function_name(const Case& c) { return c.op ? "gemm_row_major_op" : "gemm_row_major"; }

std::string describe(const Case& c) {
    std::ostringstream out;
    out << function_name(c) << "(";
    if (c.op) out << (c.transa ? "CUBLAS_OP_T, " : "CUBLAS_OP_N, ") << (c.transb ? "CUBLAS_OP_T, " : "CUBLAS_OP_N, ");
    out << "M = " << c.s.M << ", N = " << c.s.N << ", K = " << c.s.K << ", alpha = " << c.alpha
        << ", lda = " << stored_a(c).ld << ", ldb = " << stored_b(c).ld << ", beta = " << c.beta
        << ", ldc = " << stored_c(c).ld << ")";
    out << " with A stored " << stored_a(c).rows << " x " << stored_a(c).cols << ", B stored " << stored_b(c).rows
        << " x " << stored_b(c).cols << ", C " << c.s.M << " x " << c.s.N;
    if (c.pad > 0) out << ", every row padded by " << c.pad << " elements";
    return out.str();
}

bool in_padding(const Stored& m, std::size_t index) {
    return static_cast<int>(index % static_cast<std::size_t>(m.ld)) >= m.cols ||
           index >= static_cast<std::size_t>(m.rows) * static_cast<std::size_t>(m.ld);
}

// Random values in [-1, 1) where the matrix is, NaN in its padding: a
// wrong leading dimension reads padding and the NaN shows in C.
std::vector<float> make_input(const Stored& m, const std::string& label) {
    std::vector<float> v = course::random_values<float>(m.size(), -1.0f, 1.0f, label);
    for (std::size_t i = 0; i < v.size(); ++i) {
        if (in_padding(m, i)) v[i] = course::poison_value<float>();
    }
    return v;
}

// C before the call: NaN where the matrix is when beta = 0 (it must not be
// read), random values otherwise; numbered sentinels in its padding, which
// must come back unchanged.
std::vector<float> make_c(const Case& c, const std::string& label) {
    const Stored m = stored_c(c);
    std::vector<float> v = course::random_values<float>(m.size(), -1.0f, 1.0f, label);
    for (std::size_t i = 0; i < v.size(); ++i) {
        if (in_padding(m, i)) {
            v[i] = 5000.0f + static_cast<float>(i);
        } else if (c.beta == 0.0f) {
            v[i] = course::poison_value<float>();
        }
    }
    return v;
}

struct Inputs {
    std::vector<float> A, B, C0;
};

Inputs make_inputs(const Case& c) {
    const std::string tag = describe(c);
    return {make_input(stored_a(c), "A " + tag), make_input(stored_b(c), "B " + tag), make_c(c, "C " + tag)};
}

// The cuBLAS handle the tests share: created once, as real code does.
cublasHandle_t handle() {
    static course::CublasHandle shared;
    return shared.get();
}

// Runs the case on the device; returns all of C's storage (padding included).
std::vector<float> run(const Case& c, const Inputs& in) {
    const course::DeviceBuffer<float> A(in.A), B(in.B);
    course::DeviceBuffer<float> C(in.C0);
    if (c.op) {
        lesson14::gemm_row_major_op(handle(), c.transa ? CUBLAS_OP_T : CUBLAS_OP_N, c.transb ? CUBLAS_OP_T : CUBLAS_OP_N,
                                    c.s.M, c.s.N, c.s.K, c.alpha, A.data(), stored_a(c).ld, B.data(), stored_b(c).ld,
                                    c.beta, C.data(), stored_c(c).ld);
    } else {
        lesson14::gemm_row_major(handle(), c.s.M, c.s.N, c.s.K, c.alpha, A.data(), stored_a(c).ld, B.data(),
                                 stored_b(c).ld, c.beta, C.data(), stored_c(c).ld);
    }
    COURSE_CUDA_CHECK(cudaGetLastError());
    return C.download();  // synchronises
}

// Whether every element of C's M x N block is within tolerance of `expected`.
bool matches(const Case& c, const std::vector<float>& got, const ref::Gemm& expected) {
    const int ldc = stored_c(c).ld;
    for (int i = 0; i < c.s.M; ++i) {
        for (int j = 0; j < c.s.N; ++j) {
            const std::size_t e = ref::at(i, j, c.s.N);
            if (!(std::fabs(static_cast<double>(got[ref::at(i, j, ldc)]) - expected.c[e]) <=
                  ref::tolerance(c.s.K, expected.magnitude[e]))) {
                return false;
            }
        }
    }
    return true;
}

// The usual wrong answers, recognised by computing them.
std::string likely_cause(const Case& c, const Inputs& in, const std::vector<float>& got, const ref::Gemm& right) {
    const Shape s = c.s;
    const int lda = stored_a(c).ld, ldb = stored_b(c).ld, ldc = stored_c(c).ld;
    if (std::memcmp(got.data(), in.C0.data(), got.size() * sizeof(float)) == 0) {
        if (c.beta != 0.0f) {
            return "C is exactly as it was before the call: nothing was computed. Is the cublasSgemm call "
                   "there, with C as the output?";
        }
        return "C holds only the NaN the test filled it with (beta = 0), so either nothing was written (is the "
               "cublasSgemm call there?) or every element read padding, which the test fills with NaN: check "
               "that each leading dimension is its own matrix's row pitch (ldb with B, lda with A).";
    }
    const auto other = [&](bool ta, bool tb, float alpha, float beta) {
        return ref::gemm(ta, tb, s.M, s.N, s.K, alpha, in.A, lda, in.B, ldb, beta, in.C0, ldc);
    };
    if (s.M == s.N) {
        // C^T, as dense row-major M x N with the same magnitudes.
        ref::Gemm transposed = right;
        for (int i = 0; i < s.M; ++i) {
            for (int j = 0; j < s.N; ++j) {
                transposed.c[ref::at(i, j, s.N)] = right.c[ref::at(j, i, s.N)];
                transposed.magnitude[ref::at(i, j, s.N)] = right.magnitude[ref::at(j, i, s.N)];
            }
        }
        if (matches(c, got, transposed)) {
            return "C came out transposed: cuBLAS computed op(A)·op(B) in column-major terms and stored it "
                   "column-major, so read row-major it is (op(A)·op(B))^T. Ask cuBLAS for the transposed product "
                   "instead, C^T = op(B)^T·op(A)^T: pass B first, then A, with m = N and n = M.";
        }
    }
    if (s.M == s.N && s.N == s.K) {
        // op(B)·op(A): operands in the order of the row-major formula.
        ref::Gemm swapped = ref::gemm(c.transb, c.transa, s.M, s.N, s.K, c.alpha, in.B, ldb, in.A, lda, c.beta,
                                      in.C0, ldc);
        if (matches(c, got, swapped)) {
            return "C holds op(B)·op(A): the operands went to cuBLAS in the order of the row-major formula (A "
                   "first). cuBLAS sees every row-major matrix as its transpose, so pass B first and A second.";
        }
        if (c.op && c.transa != c.transb && matches(c, got, other(c.transb, c.transa, c.alpha, c.beta))) {
            return "C is the product with the transposition flags exchanged: the operands changed places but "
                   "the flags did not. A flag belongs to its operand: with B first, transb is the first flag.";
        }
        if (c.op && matches(c, got, other(!c.transa, c.transb, c.alpha, c.beta))) {
            return "C is the product with A's flag inverted: check which flag cuBLAS applies to which operand.";
        }
        if (c.op && matches(c, got, other(c.transa, !c.transb, c.alpha, c.beta))) {
            return "C is the product with B's flag inverted: check which flag cuBLAS applies to which operand.";
        }
    }
    if (c.beta != 0.0f && matches(c, got, other(c.transa, c.transb, c.alpha, 0.0f))) {
        return "C = alpha·A·B without beta·C: the old C was ignored. Pass &beta (not a constant 0) to cublasSgemm.";
    }
    if (std::any_of(got.begin(), got.end(), [](float v) { return std::isnan(v); })) {
        return "NaN in C: the test puts NaN in the padding of A and B (and in C when beta = 0), so cuBLAS read "
               "padding or C was never written. Check the leading dimensions: for row-major storage they are "
               "row lengths (ldb for B, lda for A), not row counts, and each goes with its own matrix.";
    }
    return "check the dimensions (m = N, n = M, k = K for the transposed product), the operand order (B first) "
           "and that each leading dimension is its own matrix's row pitch.";
}

course::Comparison check(const Case& c, const Inputs& in, const std::vector<float>& got) {
    const Stored cs = stored_c(c);
    const ref::Gemm expected =
        ref::gemm(c.transa, c.transb, c.s.M, c.s.N, c.s.K, c.alpha, in.A, stored_a(c).ld, in.B, stored_b(c).ld,
                  c.beta, in.C0, cs.ld);
    // The padding first: it must be exactly what it was.
    for (std::size_t i = 0; i < got.size(); ++i) {
        if (in_padding(cs, i) && std::memcmp(&got[i], &in.C0[i], sizeof(float)) != 0) {
            std::ostringstream out;
            out << describe(c) << ", COURSE_SEED=" << course::seed() << ":\n  C's padding was written: element "
                << i << " of C's storage (row " << i / static_cast<std::size_t>(cs.ld) << ", column "
                << i % static_cast<std::size_t>(cs.ld) << ", past the row length " << c.s.N << ") changed from "
                << in.C0[i] << " to " << got[i]
                << "\n  likely cause: cuBLAS was given a wrong ldc or wrong dimensions, so it wrote rows as long "
                   "as the pitch: ldc is C's row pitch and m, n must be N, M.";
            return {false, out.str()};
        }
    }
    if (matches(c, got, expected)) return {};
    // The first wrong element, by (row, column) of C.
    for (int i = 0; i < c.s.M; ++i) {
        for (int j = 0; j < c.s.N; ++j) {
            const std::size_t e = ref::at(i, j, c.s.N);
            const float g = got[ref::at(i, j, cs.ld)];
            const double allowed = ref::tolerance(c.s.K, expected.magnitude[e]);
            if (std::fabs(static_cast<double>(g) - expected.c[e]) <= allowed) continue;
            std::ostringstream out;
            out.precision(9);
            out << describe(c) << ", COURSE_SEED=" << course::seed() << ":\n  C[" << i << "][" << j << "] (row "
                << i << ", column " << j << ") = " << g << ", expected " << expected.c[e] << " within " << allowed
                << " = (K + 2) * FLT_EPSILON * (|alpha| sum_k |a_ik||b_kj| + |beta c_ij|)\n  likely cause: "
                << likely_cause(c, in, got, expected);
            return {false, out.str()};
        }
    }
    return {};
}

const char* kCublasErrorHint =
    "If cuBLAS reported CUBLAS_STATUS_INVALID_VALUE, it refused a dimension or a leading dimension: for "
    "column-major cuBLAS, the leading dimension of an untransposed m x k operand must be at least m. With the "
    "swapped operands (B first, m = N, n = M, k = K), ldb >= N, lda >= K and ldc >= N hold for row-major "
    "storage.";

void require_gemm(const Case& c) {
    CAPTURE(describe(c), course::seed());
    INFO(kCublasErrorHint);
    const Inputs in = make_inputs(c);
    course::for_each_schedule([&] { COURSE_REQUIRE_MATCH(check(c, in, run(c, in))); });
}

}  // namespace

TEST_CASE("gemm_row_major gives the CPU's product for square, non-square, tall, wide and unit shapes", "[14][gpu]") {
    const Shape shape = GENERATE(Shape{1, 1, 1}, Shape{1, 7, 5}, Shape{6, 1, 5}, Shape{6, 7, 1}, Shape{17, 33, 9},
                                 Shape{33, 17, 9}, Shape{64, 64, 64}, Shape{300, 5, 7}, Shape{5, 300, 7},
                                 Shape{7, 5, 300}, Shape{31, 31, 31}, Shape{513, 257, 1031});
    Case c;
    c.s = shape;
    require_gemm(c);
}

TEST_CASE("gemm_row_major reads and writes padded rows through their leading dimensions only", "[14][gpu]") {
    // Padding is NaN in A and B (read it, and C shows NaN) and numbered in C
    // (write it, and the test names the element).
    const Shape shape = GENERATE(Shape{1, 1, 1}, Shape{17, 33, 9}, Shape{33, 17, 9}, Shape{32, 32, 32},
                                 Shape{100, 37, 250});
    const int pad = GENERATE(1, 3, 32);
    Case c;
    c.s = shape;
    c.pad = pad;
    require_gemm(c);
}

TEST_CASE("gemm_row_major applies alpha and beta, and never reads C when beta = 0", "[14][gpu]") {
    // beta = 0 with C full of NaN: BLAS and cuBLAS then write C without
    // reading it, so no NaN may come through.
    const float alpha = GENERATE(1.0f, 2.5f, -0.75f, 0.0f);
    const float beta = GENERATE(0.0f, 1.0f, -0.5f, 2.0f);
    const Shape shape = GENERATE(Shape{24, 24, 24}, Shape{19, 40, 13});
    Case c;
    c.s = shape;
    c.alpha = alpha;
    c.beta = beta;
    c.pad = 2;
    require_gemm(c);
}

TEST_CASE("gemm_row_major with K = 0 sets C to beta·C, and with M = 0 or N = 0 changes nothing", "[14][gpu]") {
    const Shape shape = GENERATE(Shape{5, 7, 0}, Shape{0, 7, 5}, Shape{5, 0, 7}, Shape{0, 0, 0});
    const float beta = GENERATE(0.0f, 3.0f);
    Case c;
    c.s = shape;
    c.beta = beta;
    c.pad = 1;
    require_gemm(c);
}

TEST_CASE("gemm_row_major_op applies each transposition flag to its own operand", "[14][gpu]") {
    const bool transa = GENERATE(false, true);
    const bool transb = GENERATE(false, true);
    const Shape shape = GENERATE(Shape{16, 16, 16}, Shape{1, 1, 1}, Shape{17, 33, 9}, Shape{40, 3, 70},
                                 Shape{257, 129, 65});
    const int pad = GENERATE(0, 5);
    Case c;
    c.s = shape;
    c.op = true;
    c.transa = transa;
    c.transb = transb;
    c.pad = pad;
    c.alpha = 1.5f;
    c.beta = pad == 0 ? 0.0f : -1.0f;
    require_gemm(c);
}

TEST_CASE("gemm_row_major multiplies blocks inside larger matrices and leaves the rest untouched", "[14][gpu]") {
    // C (M x N) is the block at (r0, c0) of a big 50 x 60 row-major matrix,
    // A and B blocks of a big 40 x 45 one: pointers to the block's first
    // element, leading dimension the big matrix's row length.
    const int M = 13, N = 21, K = 17;
    const int big_rows = 50, big_cols = 60, r0 = 7, c0 = 11;
    const int ab_rows = 40, ab_cols = 45;
    CAPTURE(M, N, K, big_rows, big_cols, r0, c0, course::seed());
    const std::vector<float> big_a = course::random_values<float>(static_cast<std::size_t>(ab_rows) * ab_cols,
                                                                  -1.0f, 1.0f, "block A");
    const std::vector<float> big_b = course::random_values<float>(static_cast<std::size_t>(ab_rows) * ab_cols,
                                                                  -1.0f, 1.0f, "block B");
    const std::vector<float> big_c = course::random_values<float>(static_cast<std::size_t>(big_rows) * big_cols,
                                                                  -1.0f, 1.0f, "block C");
    // A is the block at (2, 3) of big_a, B the one at (20, 1) of big_b.
    const std::size_t a_offset = ref::at(2, 3, ab_cols), b_offset = ref::at(20, 1, ab_cols),
                      c_offset = ref::at(r0, c0, big_cols);
    const float alpha = 1.25f, beta = 0.5f;
    // The expected big C: the block replaced, the rest as it was.
    const std::vector<float> a_from(big_a.begin() + static_cast<std::ptrdiff_t>(a_offset), big_a.end());
    const std::vector<float> b_from(big_b.begin() + static_cast<std::ptrdiff_t>(b_offset), big_b.end());
    const std::vector<float> c_from(big_c.begin() + static_cast<std::ptrdiff_t>(c_offset), big_c.end());
    const ref::Gemm block = ref::gemm(false, false, M, N, K, alpha, a_from, ab_cols, b_from, ab_cols, beta, c_from,
                                      big_cols);
    course::for_each_schedule([&] {
        const course::DeviceBuffer<float> A(big_a), B(big_b);
        course::DeviceBuffer<float> C(big_c);
        lesson14::gemm_row_major(handle(), M, N, K, alpha, A.data() + a_offset, ab_cols, B.data() + b_offset,
                                 ab_cols, beta, C.data() + c_offset, big_cols);
        const std::vector<float> got = C.download();
        for (int i = 0; i < big_rows; ++i) {
            for (int j = 0; j < big_cols; ++j) {
                const bool inside = i >= r0 && i < r0 + M && j >= c0 && j < c0 + N;
                const float g = got[ref::at(i, j, big_cols)];
                if (inside) {
                    const std::size_t e = ref::at(i - r0, j - c0, N);
                    const double allowed = ref::tolerance(K, block.magnitude[e]);
                    INFO("big C[" << i << "][" << j << "] is element (" << i - r0 << ", " << j - c0
                                  << ") of the block: got " << g << ", expected " << block.c[e] << " within "
                                  << allowed << ". likely cause: the leading dimensions must be the BIG matrices' "
                                                "row lengths (" << ab_cols << " for A and B, " << big_cols
                                  << " for C), not the block's.");
                    REQUIRE(std::fabs(static_cast<double>(g) - block.c[e]) <= allowed);
                } else {
                    INFO("big C[" << i << "][" << j << "] lies outside the " << M << " x " << N << " block at ("
                                  << r0 << ", " << c0 << ") but changed from " << big_c[ref::at(i, j, big_cols)]
                                  << " to " << g
                                  << ". likely cause: rows written with the wrong pitch or the wrong dimensions "
                                     "(m = N, n = M, ldc = the big matrix's row length).");
                    REQUIRE(std::memcmp(&g, &big_c[ref::at(i, j, big_cols)], sizeof(float)) == 0);
                }
            }
        }
    });
}

namespace {

// transpose_copy from a row-major src (rows x cols, pitch ld_src) into a
// column-major dst (pitch ld_dst), whose padding must stay as it was.
struct CopyCase {
    int rows, cols, src_pad, dst_pad;
};

std::string describe(const CopyCase& t) {
    return "transpose_copy(dst, ld_dst = " + std::to_string(std::max(t.rows, 1) + t.dst_pad) +
           ", src, ld_src = " + std::to_string(std::max(t.cols, 1) + t.src_pad) + ", rows = " +
           std::to_string(t.rows) + ", cols = " + std::to_string(t.cols) + ")";
}

course::Comparison check_copy(const CopyCase& t, const std::vector<float>& expected, const std::vector<float>& got,
                              const std::string& where) {
    course::CompareContext<float> ctx;
    ctx.name = "dst (column-major, column pitch ld_dst: element (i, j) at dst[j * ld_dst + i])";
    course::Comparison r = course::compare_exact(expected, got, ctx);
    if (!r.ok) {
        const int ld_dst = std::max(t.rows, 1) + t.dst_pad;
        std::ostringstream out;
        out << describe(t) << " " << where << ", COURSE_SEED=" << course::seed() << ":\n  " << r.message
            << "\n  an index k of dst is column k / " << ld_dst << ", row k % " << ld_dst
            << " of the matrix (rows >= " << t.rows << " are padding, never written)"
            << "\n  likely cause: cudaMemcpy2D's pitches and width are in BYTES (spitch = ld_src * sizeof(float), "
               "dpitch = width = sizeof(float)), column j starts at src + j and at dst + j * ld_dst, and the "
               "height is the number of rows.";
        r.message = out.str();
    }
    return r;
}

}  // namespace

TEST_CASE("transpose_copy turns a row-major matrix into a column-major one, padding untouched", "[14][gpu]") {
    const CopyCase t = GENERATE(CopyCase{1, 1, 0, 0}, CopyCase{1, 7, 0, 0}, CopyCase{7, 1, 0, 0},
                                CopyCase{3, 5, 0, 0}, CopyCase{3, 5, 2, 3}, CopyCase{31, 33, 0, 1},
                                CopyCase{64, 64, 5, 0}, CopyCase{100, 37, 3, 7}, CopyCase{0, 5, 0, 2},
                                CopyCase{5, 0, 1, 0});
    CAPTURE(describe(t), course::seed());
    const int ld_src = std::max(t.cols, 1) + t.src_pad, ld_dst = std::max(t.rows, 1) + t.dst_pad;
    const std::size_t src_size = std::max<std::size_t>(static_cast<std::size_t>(t.rows) * ld_src, 1);
    const std::size_t dst_size = std::max<std::size_t>(static_cast<std::size_t>(t.cols) * ld_dst, 1);
    const std::vector<float> src = course::random_values<float>(src_size, -100.0f, 100.0f, "copy " + describe(t));
    std::vector<float> dst_before(dst_size);
    for (std::size_t i = 0; i < dst_size; ++i) dst_before[i] = 9000.0f + static_cast<float>(i);
    const std::vector<float> expected = ref::transpose_copy(dst_before, ld_dst, src, ld_src, t.rows, t.cols);

    course::for_each_schedule([&] {
        // Device to device, on the default stream.
        const course::DeviceBuffer<float> d_src(src);
        course::DeviceBuffer<float> d_dst(dst_before);
        lesson14::transpose_copy(d_dst.data(), ld_dst, d_src.data(), ld_src, t.rows, t.cols);
        COURSE_REQUIRE_MATCH(check_copy(t, expected, d_dst.download(), "device to device"));
    });
}

TEST_CASE("transpose_copy copies from host to device and back, and on a given stream", "[14][gpu]") {
    // The use in Episteme's blog (docs/sources.md): the host keeps row-major
    // arrays, the device gets them column-major for cuBLAS, and the result
    // comes back row-major.
    const CopyCase t{37, 23, 4, 2};
    CAPTURE(describe(t), course::seed());
    const int ld_src = t.cols + t.src_pad, ld_dst = t.rows + t.dst_pad;
    const std::vector<float> src = course::random_values<float>(static_cast<std::size_t>(t.rows) * ld_src, -1.0f,
                                                                1.0f, "host copy");
    std::vector<float> dst_before(static_cast<std::size_t>(t.cols) * ld_dst);
    for (std::size_t i = 0; i < dst_before.size(); ++i) dst_before[i] = -7000.0f - static_cast<float>(i);
    const std::vector<float> expected = ref::transpose_copy(dst_before, ld_dst, src, ld_src, t.rows, t.cols);
    cudaStream_t stream = nullptr;
    COURSE_CUDA_CHECK(cudaStreamCreate(&stream));
    course::for_each_schedule([&] {
        // Host (pageable) to device, on a stream of its own.
        course::DeviceBuffer<float> d_dst(dst_before);
        lesson14::transpose_copy(d_dst.data(), ld_dst, src.data(), ld_src, t.rows, t.cols, stream);
        COURSE_CUDA_CHECK(cudaStreamSynchronize(stream));
        COURSE_REQUIRE_MATCH(check_copy(t, expected, d_dst.download(), "host to device, on a stream"));
        // Device to host: the column-major matrix (cols x rows read row-major)
        // back into a padded row-major host array.
        std::vector<float> back(static_cast<std::size_t>(t.rows) * ld_src, 0.5f);
        std::vector<float> back_expected = back;
        back_expected = ref::transpose_copy(back_expected, ld_src, expected, ld_dst, t.cols, t.rows);
        lesson14::transpose_copy(back.data(), ld_src, d_dst.data(), ld_dst, t.cols, t.rows, stream);
        COURSE_CUDA_CHECK(cudaStreamSynchronize(stream));
        const CopyCase reverse{t.cols, t.rows, t.dst_pad, t.src_pad};
        COURSE_REQUIRE_MATCH(check_copy(reverse, back_expected, back, "device to host (converting back)"));
    });
    COURSE_CUDA_CHECK(cudaStreamDestroy(stream));
}

#endif  // __CUDACC_EMULATOR__
