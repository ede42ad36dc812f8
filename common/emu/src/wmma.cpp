// The work of nvcuda::wmma's warp-wide calls (mma.h), done once per warp by
// the first lane released from the call's meeting (block.cpp, warp_wide):
// tile loads and stores, and the product.
//
// Element mapping (docs/emulator.md): element x[i] of lane l is element
// number l * per_lane + i of the fragment's matrix in row-major order.
#include <course_emu/detail/analysis_hooks.hpp>

#include <course_emu/narrow_float.hpp>
#include <course_emu/wmma.hpp>

#include <cstdint>
#include <cstring>
#include <string>

namespace course_emu::wmma_detail {

namespace {

std::size_t size_of(Element e) { return e == Element::f32 ? 4 : 2; }

const MemoryCall& memory_call(WarpWork* const* lanes, int lane) { return *static_cast<const MemoryCall*>(lanes[lane]); }

std::size_t offset_of(int row, int col, unsigned ldm, bool row_major_memory) {
    return row_major_memory ? static_cast<std::size_t>(row) * ldm + static_cast<std::size_t>(col)
                            : static_cast<std::size_t>(col) * ldm + static_cast<std::size_t>(row);
}

// An element as a double (exact for all three types).
double value_at(const void* base, std::size_t index, Element e) {
    const char* p = static_cast<const char*>(base) + index * size_of(e);
    if (e == Element::f32) {
        float f;
        std::memcpy(&f, p, 4);
        return f;
    }
    std::uint16_t bits;
    std::memcpy(&bits, p, 2);
    return e == Element::f16 ? detail::narrow_to_float<detail::Binary16>(bits)
                             : detail::narrow_to_float<detail::BFloat16>(bits);
}

// Rounds once, to nearest even, from the double (to half directly, not through float).
void store_value(void* base, std::size_t index, Element e, double v) {
    char* p = static_cast<char*>(base) + index * size_of(e);
    if (e == Element::f32) {
        const float f = static_cast<float>(v);
        std::memcpy(p, &f, 4);
        return;
    }
    const std::uint16_t bits = e == Element::f16 ? detail::double_to_narrow<detail::Binary16>(v, detail::Rounding::nearest_even)
                                                 : detail::double_to_narrow<detail::BFloat16>(v, detail::Rounding::nearest_even);
    std::memcpy(p, &bits, 2);
}

// Copies between the lanes' fragments and memory; `to_memory` for a store.
void transfer(WarpWork* const* lanes, bool to_memory) {
    const MemoryCall& first = memory_call(lanes, 0);
    const std::size_t bytes = size_of(first.element);
    const int per_lane = first.rows * first.cols / 32;
    char* memory = static_cast<char*>(first.memory);
    for (int lane = 0; lane < 32; ++lane) {
        char* fragment = static_cast<char*>(memory_call(lanes, lane).fragment);
        for (int i = 0; i < per_lane; ++i) {
            const int e = lane * per_lane + i;
            char* at = memory + offset_of(e / first.cols, e % first.cols, first.ldm, first.row_major_memory) * bytes;
            if (to_memory) {
                std::memcpy(at, fragment + static_cast<std::size_t>(i) * bytes, bytes);
            } else {
                std::memcpy(fragment + static_cast<std::size_t>(i) * bytes, at, bytes);
            }
        }
    }
}

// The analysis does not see a store's writes as any lane's accesses; it
// learns that the bytes are written, so that later reads are not taken for
// reads of uninitialised memory. Told by the check, just before the store
// (nothing runs between the two), because the analysis allocates: not
// something to do in kernel context.
void tell_analysis_of_store(const MemoryCall& first) {
    if (detail::g_analysis_hooks == nullptr || first.run != &store) return;
    const std::size_t bytes = size_of(first.element);
    const int outer = first.row_major_memory ? first.rows : first.cols;
    const int inner = first.row_major_memory ? first.cols : first.rows;
    for (int o = 0; o < outer; ++o) {
        detail::g_analysis_hooks->warp_stored(static_cast<char*>(first.memory) + static_cast<std::size_t>(o) * first.ldm * bytes,
                                              static_cast<std::size_t>(inner) * bytes);
    }
}

}  // namespace

WarpWorkProblem check_memory(WarpWork* const* lanes) {
    const MemoryCall& first = memory_call(lanes, 0);
    for (int lane = 1; lane < 32; ++lane) {
        const MemoryCall& other = memory_call(lanes, lane);
        if (other.memory != first.memory || other.ldm != first.ldm || other.row_major_memory != first.row_major_memory) {
            return {cudaErrorLaunchFailure,
                    "lane " + std::to_string(lane) +
                        " passed a different pointer, ldm or layout than lane 0: every lane of the warp must pass "
                        "the same (the matrix's first element, not the lane's own)"};
        }
    }
    // A GPU requires a 256-bit aligned pointer and a leading dimension that is
    // a multiple of 16 bytes; it gives wrong results or a misaligned-address
    // error otherwise. The pointer is checked to 16 bytes only: the emulator
    // places a static __shared__ array so that it ends at a guard page, which
    // aligns its start by its size, not as nvcc would (a 528-byte tile starts
    // 16 bytes past a 32-byte boundary here, perhaps not on a GPU).
    if (reinterpret_cast<std::uintptr_t>(first.memory) % 16 != 0) {
        return {cudaErrorMisalignedAddress,
                "the pointer must be 256-bit (32-byte) aligned, as on a GPU (a tile that starts at an element that "
                "is not a multiple of 16?)"};
    }
    const std::size_t bytes = size_of(first.element);
    const int min_ldm = first.row_major_memory ? first.cols : first.rows;
    if ((first.ldm * bytes) % 16 != 0 || static_cast<int>(first.ldm) < min_ldm) {
        return {cudaErrorMisalignedAddress,
                "ldm = " + std::to_string(first.ldm) + " must be a multiple of " + std::to_string(16 / bytes) + " for " +
                    std::to_string(bytes) + "-byte elements (16 bytes), and at least the " + std::to_string(min_ldm) +
                    " elements of the matrix's rows (row-major) or columns (column-major)"};
    }
    tell_analysis_of_store(first);
    return {};
}

void load(WarpWork* const* lanes) { transfer(lanes, false); }

void store(WarpWork* const* lanes) { transfer(lanes, true); }

WarpWorkProblem check_product(WarpWork* const*) { return {}; }

void product(WarpWork* const* lanes) {
    const ProductCall& first = *static_cast<const ProductCall*>(lanes[0]);
    const int m_size = first.m, n_size = first.n, k_size = first.k;
    // Gather every input before writing D: D is often C itself. Fixed
    // arrays (the largest shapes: 32 x 16, 16 x 32, 16 x 16 or 32 x 8): no
    // allocation while the kernel runs.
    double a[512], b[512], c[512];
    const int a_per_lane = m_size * k_size / 32, b_per_lane = k_size * n_size / 32, c_per_lane = m_size * n_size / 32;
    for (int lane = 0; lane < 32; ++lane) {
        const ProductCall& call = *static_cast<const ProductCall*>(lanes[lane]);
        for (int i = 0; i < a_per_lane; ++i) a[lane * a_per_lane + i] = value_at(call.a, static_cast<std::size_t>(i), first.ab_element);
        for (int i = 0; i < b_per_lane; ++i) b[lane * b_per_lane + i] = value_at(call.b, static_cast<std::size_t>(i), first.ab_element);
        for (int i = 0; i < c_per_lane; ++i) c[lane * c_per_lane + i] = value_at(call.c, static_cast<std::size_t>(i), first.c_element);
    }
    // Row by row, k outermost: the inner loop runs along contiguous rows of B and C.
    // The products of 16-bit values are exact in double; the sums' own error
    // (2^-53 relative) is far below the final rounding to float or half.
    for (int m = 0; m < m_size; ++m) {
        for (int k = 0; k < k_size; ++k) {
            const double a_mk = a[m * k_size + k];
            const double* b_row = &b[k * n_size];
            double* c_row = &c[m * n_size];
            for (int n = 0; n < n_size; ++n) c_row[n] += a_mk * b_row[n];
        }
    }
    for (int lane = 0; lane < 32; ++lane) {
        const ProductCall& call = *static_cast<const ProductCall*>(lanes[lane]);
        for (int i = 0; i < c_per_lane; ++i) {
            store_value(call.d, static_cast<std::size_t>(i), first.d_element, c[lane * c_per_lane + i]);
        }
    }
}

}  // namespace course_emu::wmma_detail
