/// @file mma.h
/// @brief Emulator stand-in for CUDA's `mma.h`: the warp matrix functions
/// `nvcuda::wmma` (tensor cores) for `__half` and `__nv_bfloat16` inputs.
///
/// Shapes m16n16k16, m32n8k16 and m8n32k16; `matrix_a` and `matrix_b`
/// fragments of `__half` or `__nv_bfloat16`, `row_major` or `col_major`;
/// accumulators of `float` (either input type) or `__half` (half inputs).
///
/// A fragment belongs to a warp: its elements are spread over the 32 lanes.
/// Every lane must call each `*_sync` function together, at the same place,
/// with the same pointer, `ldm` and layout; the emulator makes the warp meet
/// there (the mechanism of `__shfl_sync`, course_emu/sync.hpp: warp_wide) and
/// reports a call made by only part of the warp, with the file, line and lanes.
/// Once all 32 lanes are there, one of them does the work for the warp (a
/// whole 16x16x16 product at once), so a call costs one warp meeting.
///
/// Element mapping (unspecified by CUDA, chosen here): a fragment of an R x C
/// matrix (A: M x K, B: K x N, accumulator: M x N) has `num_elements = R*C/32`
/// elements per lane; element `x[i]` of lane `l` is the matrix's element
/// number `l * num_elements + i` in row-major order, i.e. row
/// `(l * num_elements + i) / C`, column `(l * num_elements + i) % C`, whatever
/// the memory layout it was loaded from. (A GPU's `__half` matrix_a/matrix_b
/// fragments of m16n16k16 hold 16 elements per lane, each twice; code that
/// loops up to `num_elements` works on both.)
///
/// Arithmetic: each `mma_sync` computes every `D[m][n] = C[m][n] + sum_k
/// A[m][k] * B[k][n]` in double (the products of 16-bit inputs are exact) and
/// rounds it once to D's type. A GPU's tensor cores add in a float-like
/// precision, so over K the two may differ by about K * 2^-24 * sum_k
/// |A[m][k] * B[k][n]| (see docs/emulator.md, "Tensor cores").
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <course_emu/launch.hpp>
#include <course_emu/sync.hpp>

#include <cstdint>
#include <string>
#include <type_traits>

namespace nvcuda {
namespace wmma {

/// @brief Fragment uses: the left and right inputs of the product, and the accumulator.
struct matrix_a {};
struct matrix_b {};
struct accumulator {};
/// @brief How an input fragment's matrix lies in memory.
struct row_major {};
struct col_major {};
/// @brief How an accumulator's matrix lies in memory (given at each load and store).
enum layout_t { mem_row_major, mem_col_major };

namespace detail {

/// Rows and columns of the matrix a fragment holds.
template <class Use, int M, int N, int K>
struct FragmentShape;
template <int M, int N, int K>
struct FragmentShape<matrix_a, M, N, K> {
    static constexpr int rows = M, cols = K;
};
template <int M, int N, int K>
struct FragmentShape<matrix_b, M, N, K> {
    static constexpr int rows = K, cols = N;
};
template <int M, int N, int K>
struct FragmentShape<accumulator, M, N, K> {
    static constexpr int rows = M, cols = N;
};

template <int M, int N, int K>
inline constexpr bool supported_shape = (M == 16 && N == 16 && K == 16) || (M == 32 && N == 8 && K == 16) ||
                                        (M == 8 && N == 32 && K == 16);

template <class Use, class T, class Layout>
inline constexpr bool supported_element =
    std::is_same_v<Use, accumulator>
        ? (std::is_same_v<T, float> || std::is_same_v<T, __half>) && std::is_void_v<Layout>
        : (std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>) &&
              (std::is_same_v<Layout, row_major> || std::is_same_v<Layout, col_major>);

/// The storage of a fragment: this lane's elements.
template <class T, int Size>
struct FragmentBase {
    T x[Size];
    enum { num_elements = Size };
    using element_type = T;
    using storage_element_type = T;
};

}  // namespace detail

/// @brief One lane's share of a matrix operand of a warp's matrix product.
///
/// @tparam Use    matrix_a, matrix_b or accumulator
/// @tparam M,N,K  the product's shape: 16,16,16, 32,8,16 or 8,32,16
/// @tparam T      element type: __half or __nv_bfloat16 for inputs, float or __half for accumulators
/// @tparam Layout row_major or col_major for inputs; none (void) for accumulators
template <class Use, int M, int N, int K, class T, class Layout = void>
class fragment
    : public detail::FragmentBase<T, detail::FragmentShape<Use, M, N, K>::rows * detail::FragmentShape<Use, M, N, K>::cols / 32> {
    static_assert(detail::supported_shape<M, N, K>,
                  "wmma::fragment: the emulator supports the shapes 16x16x16, 32x8x16 and 8x32x16 (M, N, K)");
    static_assert(detail::supported_element<Use, T, Layout>,
                  "wmma::fragment: matrix_a and matrix_b fragments take __half or __nv_bfloat16 and a layout "
                  "(row_major or col_major); accumulators take float or __half and no layout");
};

namespace detail {

using course_emu::WarpWork;

template <class Layout>
inline constexpr bool input_row_major = std::is_same_v<Layout, row_major>;

// The offset in memory of element (row, col) of a matrix stored with leading dimension ldm.
inline std::size_t offset_of(int row, int col, unsigned ldm, bool row_major_memory) {
    return row_major_memory ? static_cast<std::size_t>(row) * ldm + col : static_cast<std::size_t>(col) * ldm + row;
}

// Stops the kernel with a report at the wmma call's line.
[[noreturn]] inline void wmma_fault(const WarpWork& call, std::string what, cudaError_t code) {
    static thread_local std::string text;  // raise_fault keeps the pointer: it must outlive the throw
    text = std::string(call.name) + ": " + std::move(what);
    course_emu::raise_fault(call.file, call.line, text.c_str(), code);
}

// A GPU requires a 256-bit aligned pointer and a leading dimension that is a
// multiple of 16 bytes; it gives wrong results or a misaligned-address error otherwise.
template <class T>
void check_memory_operand(const WarpWork& call, const void* p, unsigned ldm, int min_ldm) {
    if (reinterpret_cast<std::uintptr_t>(p) % 32 != 0) {
        wmma_fault(call,
                   "the pointer must be 256-bit (32-byte) aligned, as on a GPU (a tile that starts at an element "
                   "that is not a multiple of 16?)",
                   cudaErrorMisalignedAddress);
    }
    if ((ldm * sizeof(T)) % 16 != 0 || static_cast<int>(ldm) < min_ldm) {
        wmma_fault(call,
                   "ldm = " + std::to_string(ldm) + " must be a multiple of " + std::to_string(16 / sizeof(T)) +
                       " for " + std::to_string(sizeof(T)) + "-byte elements (16 bytes), and at least the " +
                       std::to_string(min_ldm) + " elements of the matrix's rows (row-major) or columns (column-major)",
                   cudaErrorMisalignedAddress);
    }
}

// The 32 lanes of a warp must pass the same pointer, ldm and layout.
template <class Work>
void check_same_arguments(WarpWork* const* lanes) {
    const Work& first = *static_cast<const Work*>(lanes[0]);
    for (int lane = 1; lane < 32; ++lane) {
        const Work& other = *static_cast<const Work*>(lanes[lane]);
        if (other.memory != first.memory || other.ldm != first.ldm || other.row_major_memory != first.row_major_memory) {
            wmma_fault(other,
                       "lane " + std::to_string(lane) +
                           " passed a different pointer, ldm or layout than lane 0: every lane of the warp must pass "
                           "the same (the matrix's first element, not the lane's own)",
                       cudaErrorLaunchFailure);
        }
    }
}

// What one lane brings to load_matrix_sync or store_matrix_sync.
template <class Frag, class Pointer>
struct MemoryWork : WarpWork {
    Frag* fragment;
    Pointer memory;
    unsigned ldm;
    bool row_major_memory;
};

template <class Use, int M, int N, int K, class T, class Layout>
struct FragmentAccess {
    using Frag = fragment<Use, M, N, K, T, Layout>;
    using Shape = FragmentShape<Use, M, N, K>;
    static constexpr int per_lane = Frag::num_elements;

    static void load(WarpWork* const* lanes) {
        using Work = MemoryWork<Frag, const T*>;
        check_same_arguments<Work>(lanes);
        const Work& first = *static_cast<const Work*>(lanes[0]);
        check_memory_operand<T>(first, first.memory, first.ldm,
                                first.row_major_memory ? Shape::cols : Shape::rows);
        for (int lane = 0; lane < 32; ++lane) {
            Frag& f = *static_cast<Work*>(lanes[lane])->fragment;
            for (int i = 0; i < per_lane; ++i) {
                const int e = lane * per_lane + i;
                f.x[i] = first.memory[offset_of(e / Shape::cols, e % Shape::cols, first.ldm, first.row_major_memory)];
            }
        }
    }

    static void store(WarpWork* const* lanes) {
        using Work = MemoryWork<const Frag, T*>;
        check_same_arguments<Work>(lanes);
        const Work& first = *static_cast<const Work*>(lanes[0]);
        check_memory_operand<T>(first, first.memory, first.ldm,
                                first.row_major_memory ? Shape::cols : Shape::rows);
        for (int lane = 0; lane < 32; ++lane) {
            const Frag& f = *static_cast<Work*>(lanes[lane])->fragment;
            for (int i = 0; i < per_lane; ++i) {
                const int e = lane * per_lane + i;
                first.memory[offset_of(e / Shape::cols, e % Shape::cols, first.ldm, first.row_major_memory)] = f.x[i];
            }
        }
    }
};

template <class Frag>
inline void load(const char* file, int line, Frag& a, const typename Frag::element_type* p, unsigned ldm,
                 bool row_major_memory, void (*complete)(WarpWork* const*)) {
    MemoryWork<Frag, const typename Frag::element_type*> work{{"wmma::load_matrix_sync", complete}, &a, p, ldm,
                                                              row_major_memory};
    course_emu::warp_wide(file, line, work);
}

// What one lane brings to mma_sync.
template <class D, class A, class B, class C>
struct ProductWork : WarpWork {
    D* d;
    const A* a;
    const B* b;
    const C* c;
};

template <int M, int N, int K, class TD, class TA, class LA, class LB, class TC>
struct Product {
    using D = fragment<accumulator, M, N, K, TD>;
    using A = fragment<matrix_a, M, N, K, TA, LA>;
    using B = fragment<matrix_b, M, N, K, TA, LB>;
    using C = fragment<accumulator, M, N, K, TC>;
    using Work = ProductWork<D, A, B, C>;

    static void complete(WarpWork* const* lanes) {
        // Gather every input before writing D: D is often C itself.
        double a[M * K], b[K * N], c[M * N];
        gather_into<A>(lanes, &Work::a, a);
        gather_into<B>(lanes, &Work::b, b);
        gather_into<C>(lanes, &Work::c, c);
        constexpr int per_lane = D::num_elements;
        for (int lane = 0; lane < 32; ++lane) {
            D& d = *static_cast<Work*>(lanes[lane])->d;
            for (int i = 0; i < per_lane; ++i) {
                const int e = lane * per_lane + i, m = e / N, n = e % N;
                double sum = c[e];
                for (int k = 0; k < K; ++k) sum += a[m * K + k] * b[k * N + n];
                d.x[i] = static_cast<TD>(sum);  // one rounding, to float or (directly from double) to __half
            }
        }
    }

    template <class Frag, class Member>
    static void gather_into(WarpWork* const* lanes, Member member, double* matrix) {
        constexpr int per_lane = Frag::num_elements;
        for (int lane = 0; lane < 32; ++lane) {
            const Frag& f = *(static_cast<Work*>(lanes[lane])->*member);
            for (int i = 0; i < per_lane; ++i) matrix[lane * per_lane + i] = static_cast<float>(f.x[i]);
        }
    }
};

}  // namespace detail

/// @brief Sets every element of this lane's part of `f` to `v` (no warp meeting:
/// called by all lanes with the same `v`, it fills the whole matrix).
template <class T, int Size>
inline void fill_fragment(detail::FragmentBase<T, Size>& f, const std::type_identity_t<T>& v) {
    for (int i = 0; i < Size; ++i) f.x[i] = v;
}

/// @brief Loads an input matrix (A: M x K, B: K x N) from `p`, whose rows
/// (row_major) or columns (col_major) start `ldm` elements apart, into the
/// warp's fragment `a`. `p` must be 32-byte aligned and `ldm` a multiple of
/// 16 bytes; every lane must call it together with the same arguments.
template <class Use, int M, int N, int K, class T, class Layout>
    requires(!std::is_same_v<Use, accumulator>)
inline void load_matrix_sync(fragment<Use, M, N, K, T, Layout>& a, const T* p, unsigned ldm,
                             const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    detail::load(file, line, a, p, ldm, detail::input_row_major<Layout>,
                 &detail::FragmentAccess<Use, M, N, K, T, Layout>::load);
}

/// @brief Loads an accumulator (M x N) from `p`, laid out as `layout` says
/// with leading dimension `ldm`; the same rules as for the inputs.
template <int M, int N, int K, class T>
inline void load_matrix_sync(fragment<accumulator, M, N, K, T>& a, const T* p, unsigned ldm, layout_t layout,
                             const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    detail::load(file, line, a, p, ldm, layout == mem_row_major,
                 &detail::FragmentAccess<accumulator, M, N, K, T, void>::load);
}

/// @brief Stores the warp's accumulator `a` (M x N) to `p`, laid out as
/// `layout` says with leading dimension `ldm`; the same rules as for loads.
template <int M, int N, int K, class T>
inline void store_matrix_sync(T* p, const fragment<accumulator, M, N, K, T>& a, unsigned ldm, layout_t layout,
                              const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    using Frag = fragment<accumulator, M, N, K, T>;
    detail::MemoryWork<const Frag, T*> work{
        {"wmma::store_matrix_sync", &detail::FragmentAccess<accumulator, M, N, K, T, void>::store},
        &a,
        p,
        ldm,
        layout == mem_row_major};
    course_emu::warp_wide(file, line, work);
}

/// @brief `d = a * b + c` for the warp's fragments (D and C may be the same
/// fragment). Inputs __half with float or __half accumulators, or
/// __nv_bfloat16 with float accumulators; every lane calls it together.
template <int M, int N, int K, class TD, class TA, class LA, class LB, class TC>
    requires(std::is_same_v<TA, __half> || (std::is_same_v<TD, float> && std::is_same_v<TC, float>))
inline void mma_sync(fragment<accumulator, M, N, K, TD>& d, const fragment<matrix_a, M, N, K, TA, LA>& a,
                     const fragment<matrix_b, M, N, K, TA, LB>& b, const fragment<accumulator, M, N, K, TC>& c,
                     const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    using Product = detail::Product<M, N, K, TD, TA, LA, LB, TC>;
    typename Product::Work work{{"wmma::mma_sync", &Product::complete}, &d, &a, &b, &c};
    course_emu::warp_wide(file, line, work);
}

}  // namespace wmma
}  // namespace nvcuda
