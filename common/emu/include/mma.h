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
/// Once all 32 lanes are there, one of them has the runtime do the work for
/// the warp (a whole 16x16x16 product at once: common/emu/src/wmma.cpp), so a
/// call costs one warp meeting.
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
/// |A[m][k] * B[k][n]| (see docs/emulator.md, "Half precision, bfloat16 and tensor cores").
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <course_emu/wmma.hpp>

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

template <class T>
constexpr course_emu::wmma_detail::Element element_of() {
    if constexpr (std::is_same_v<T, __half>) return course_emu::wmma_detail::Element::f16;
    else if constexpr (std::is_same_v<T, __nv_bfloat16>) return course_emu::wmma_detail::Element::bf16;
    else return course_emu::wmma_detail::Element::f32;
}

// One lane's load or store: its fragment and the matrix in memory.
template <class Use, int M, int N, int K, class T, class Layout>
inline void transfer(const char* name, void (*run)(course_emu::WarpWork* const*), const char* file, int line,
                     const fragment<Use, M, N, K, T, Layout>& f, const T* p, unsigned ldm, bool row_major_memory) {
    using Shape = FragmentShape<Use, M, N, K>;
    course_emu::wmma_detail::MemoryCall call{{name, &course_emu::wmma_detail::check_memory, run},
                                             const_cast<T*>(f.x),
                                             const_cast<T*>(p),
                                             ldm,
                                             row_major_memory,
                                             element_of<T>(),
                                             Shape::rows,
                                             Shape::cols};
    course_emu::warp_wide(file, line, call);
}

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
    detail::transfer("wmma::load_matrix_sync", &course_emu::wmma_detail::load, file, line, a, p, ldm,
                     std::is_same_v<Layout, row_major>);
}

/// @brief Loads an accumulator (M x N) from `p`, laid out as `layout` says
/// with leading dimension `ldm`; the same rules as for the inputs.
template <int M, int N, int K, class T>
inline void load_matrix_sync(fragment<accumulator, M, N, K, T>& a, const T* p, unsigned ldm, layout_t layout,
                             const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    detail::transfer("wmma::load_matrix_sync", &course_emu::wmma_detail::load, file, line, a, p, ldm,
                     layout == mem_row_major);
}

/// @brief Stores the warp's accumulator `a` (M x N) to `p`, laid out as
/// `layout` says with leading dimension `ldm`; the same rules as for loads.
template <int M, int N, int K, class T>
inline void store_matrix_sync(T* p, const fragment<accumulator, M, N, K, T>& a, unsigned ldm, layout_t layout,
                              const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    detail::transfer("wmma::store_matrix_sync", &course_emu::wmma_detail::store, file, line, a, p, ldm,
                     layout == mem_row_major);
}

/// @brief `d = a * b + c` for the warp's fragments (D and C may be the same
/// fragment). Inputs __half with float or __half accumulators, or
/// __nv_bfloat16 with float accumulators; every lane calls it together.
template <int M, int N, int K, class TD, class TA, class LA, class LB, class TC>
    requires(std::is_same_v<TA, __half> || (std::is_same_v<TD, float> && std::is_same_v<TC, float>))
inline void mma_sync(fragment<accumulator, M, N, K, TD>& d, const fragment<matrix_a, M, N, K, TA, LA>& a,
                     const fragment<matrix_b, M, N, K, TA, LB>& b, const fragment<accumulator, M, N, K, TC>& c,
                     const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    course_emu::wmma_detail::ProductCall call{
        {"wmma::mma_sync", &course_emu::wmma_detail::check_product, &course_emu::wmma_detail::product},
        d.x,
        a.x,
        b.x,
        c.x,
        detail::element_of<TD>(),
        detail::element_of<TA>(),
        detail::element_of<TC>(),
        M,
        N,
        K};
    course_emu::warp_wide(file, line, call);
}

}  // namespace wmma
}  // namespace nvcuda
