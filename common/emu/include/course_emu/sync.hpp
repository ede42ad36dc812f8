/// @file sync.hpp
/// @brief Block barriers and warp collectives: the points where emulated threads meet.
///
/// Each is a macro so that a report names the student's file and line. The
/// threads of a block are fibers; a thread that reaches one of these waits
/// (its fiber is suspended) until the others it needs have arrived.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include <course_emu/launch.hpp>

namespace course_emu {

/// @brief The barrier flavours: plain, and the three that reduce a predicate.
enum class BarrierKind { plain, count, all, any };

/// @brief Waits until every thread of the block arrives; returns the
/// predicate's reduction for the counting flavours (0 for plain).
int syncthreads(const char* file, int line, BarrierKind kind, int predicate);

/// @brief The warp collectives.
enum class WarpOp { shfl, shfl_up, shfl_down, shfl_xor, ballot, any, all, syncwarp, match_any, warp_wide };

/// @brief Waits until every lane named in `mask` arrives at a collective of
/// the same kind, then returns this lane's result (raw 64 bits).
unsigned long long warp_collective(const char* file, int line, WarpOp op, unsigned mask, unsigned long long value,
                                   int arg, int width);

/// @brief One lane's part in an operation the warp performs as one (the
/// `nvcuda::wmma` `*_sync` functions): its arguments, and the function that
/// does the work for the whole warp once every lane has arrived.
struct WarpWork {
    const char* name;  ///< for reports, e.g. "wmma::mma_sync"
    /// Does the work of all 32 lanes; `lanes[i]` is lane i's WarpWork (each
    /// the same type as this one: the same call site).
    void (*complete)(WarpWork* const* lanes);
    const char* file = "";  ///< where this lane called it (set by warp_wide), for reports
    int line = 0;
};

/// @brief What a warp-wide meeting hands its lanes: every lane's WarpWork,
/// and whether the work is still to be done. One per warp, owned by the block.
struct WarpWorkBatch {
    WarpWork* lanes[32];
    bool pending;
};

/// @brief Meets the other 31 lanes of the warp at this call (all 32 must
/// come, from the same file and line; a partial warp, a lane that exited or
/// a lane elsewhere is reported like a bad shuffle mask), then makes sure
/// the work is done before returning: the first lane to run after the
/// meeting does it for all, in kernel context (a bad address in it is
/// reported as the kernel's own bad access), and the others find it done.
inline void warp_wide(const char* file, int line, WarpWork& work) {
    work.file = file;
    work.line = line;
    auto* batch = reinterpret_cast<WarpWorkBatch*>(static_cast<std::uintptr_t>(warp_collective(
        file, line, WarpOp::warp_wide, 0xffffffffu, reinterpret_cast<std::uintptr_t>(&work), 0, 32)));
    if (batch->pending) {
        batch->pending = false;
        batch->lanes[0]->complete(batch->lanes);
    }
}

/// @brief Lanes of the calling thread's warp that have not exited.
unsigned activemask();

/// @brief `__syncwarp(mask)`: the lanes in `mask` wait for each other.
inline void syncwarp(const char* file, int line, unsigned mask = 0xffffffffu) {
    (void)warp_collective(file, line, WarpOp::syncwarp, mask, 0, 0, 32);
}

/// @brief Typed front end of the shuffles: any trivially copyable type of up to 8 bytes.
template <class T>
T shuffle(const char* file, int line, WarpOp op, unsigned mask, T value, int arg, int width = 32) {
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= 8, "shuffles move values of up to 8 bytes");
    unsigned long long raw = 0;
    std::memcpy(&raw, &value, sizeof(T));
    raw = warp_collective(file, line, op, mask, raw, arg, width);
    T result;
    std::memcpy(static_cast<void*>(&result), &raw, sizeof(T));  // T may be a class (__half): its bytes
    return result;
}

namespace detail {
/// The bits of a value of up to 8 bytes, zero-extended (for __match_any_sync).
template <class T>
unsigned long long raw_bits(T value) {
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= 8, "__match_any_sync compares values of up to 8 bytes");
    unsigned long long raw = 0;
    std::memcpy(&raw, &value, sizeof(T));
    return raw;
}
}  // namespace detail

}  // namespace course_emu

#define __syncthreads() ::course_emu::syncthreads(__FILE__, __LINE__, ::course_emu::BarrierKind::plain, 1)
#define __syncthreads_count(p) ::course_emu::syncthreads(__FILE__, __LINE__, ::course_emu::BarrierKind::count, (p) != 0)
#define __syncthreads_and(p) ::course_emu::syncthreads(__FILE__, __LINE__, ::course_emu::BarrierKind::all, (p) != 0)
#define __syncthreads_or(p) ::course_emu::syncthreads(__FILE__, __LINE__, ::course_emu::BarrierKind::any, (p) != 0)

#define __shfl_sync(mask, v, lane, ...) \
    ::course_emu::shuffle(__FILE__, __LINE__, ::course_emu::WarpOp::shfl, (mask), (v), (lane) __VA_OPT__(,) __VA_ARGS__)
#define __shfl_up_sync(mask, v, delta, ...) \
    ::course_emu::shuffle(__FILE__, __LINE__, ::course_emu::WarpOp::shfl_up, (mask), (v), (delta) __VA_OPT__(,) __VA_ARGS__)
#define __shfl_down_sync(mask, v, delta, ...)                                                                 \
    ::course_emu::shuffle(__FILE__, __LINE__, ::course_emu::WarpOp::shfl_down, (mask), (v), (delta) __VA_OPT__(,) \
                              __VA_ARGS__)
#define __shfl_xor_sync(mask, v, lane_mask, ...)                                                             \
    ::course_emu::shuffle(__FILE__, __LINE__, ::course_emu::WarpOp::shfl_xor, (mask), (v), (lane_mask)     \
                              __VA_OPT__(,) __VA_ARGS__)
#define __ballot_sync(mask, p) \
    static_cast<unsigned>(::course_emu::warp_collective(__FILE__, __LINE__, ::course_emu::WarpOp::ballot, (mask), (p) != 0, 0, 32))
#define __any_sync(mask, p) \
    static_cast<int>(::course_emu::warp_collective(__FILE__, __LINE__, ::course_emu::WarpOp::any, (mask), (p) != 0, 0, 32))
#define __all_sync(mask, p) \
    static_cast<int>(::course_emu::warp_collective(__FILE__, __LINE__, ::course_emu::WarpOp::all, (mask), (p) != 0, 0, 32))
/// `__match_any_sync(mask, v)`: the lanes of `mask` whose `v` equals this lane's (values of up to 8 bytes).
#define __match_any_sync(mask, v) \
    static_cast<unsigned>(::course_emu::warp_collective(__FILE__, __LINE__, ::course_emu::WarpOp::match_any, (mask), \
                                                        ::course_emu::detail::raw_bits(v), 0, 32))
#define __syncwarp(...) ::course_emu::syncwarp(__FILE__, __LINE__ __VA_OPT__(,) __VA_ARGS__)
#define __activemask() ::course_emu::activemask()
