/// @file wmma.hpp
/// @brief What mma.h's `nvcuda::wmma` functions hand the runtime: each
/// lane's arguments of a warp-wide call, as plain descriptors, and the
/// runtime's functions that check them and do the warp's work
/// (common/emu/src/wmma.cpp).
///
/// The work is done by the runtime, not by code compiled into the kernel's
/// file, so the analysis mode (which instruments the kernel's file) does
/// not take one lane doing the whole warp's loads for that lane's own.
#pragma once

#include <course_emu/sync.hpp>

namespace course_emu::wmma_detail {

/// @brief Element types of fragments and matrices.
enum class Element : unsigned char { f16, bf16, f32 };

/// @brief One lane's load_matrix_sync or store_matrix_sync.
struct MemoryCall : WarpWork {
    void* fragment;          ///< this lane's `x[]`
    void* memory;            ///< the matrix's first element (only read by a load)
    unsigned ldm;            ///< elements between rows (row-major) or columns (column-major)
    bool row_major_memory;
    Element element;
    int rows, cols;          ///< the fragment's matrix
};

/// @brief One lane's mma_sync: d = a * b + c, fragments of an m x k, k x n and m x n matrix.
struct ProductCall : WarpWork {
    void* d;
    const void* a;
    const void* b;
    const void* c;
    Element d_element, ab_element, c_element;
    int m, n, k;
};

/// @brief Same pointer, ldm and layout in every lane; aligned pointer, ldm a multiple of 16 bytes.
WarpWorkProblem check_memory(WarpWork* const* lanes);
/// @brief Fills every lane's fragment from memory.
void load(WarpWork* const* lanes);
/// @brief Writes every lane's fragment to memory.
void store(WarpWork* const* lanes);
/// @brief Nothing to check: the types and shapes were checked at compile time.
WarpWorkProblem check_product(WarpWork* const* lanes);
/// @brief The product, once for the warp, into every lane's d.
void product(WarpWork* const* lanes);

}  // namespace course_emu::wmma_detail
