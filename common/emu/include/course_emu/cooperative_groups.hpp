/// @file cooperative_groups.hpp
/// @brief CUDA's cooperative groups (`<cooperative_groups.h>`, `<cooperative_groups/reduce.h>`) for the emulator.
///
/// Groups name the threads that work together: the block (this_thread_block),
/// tiles of 1 to 32 threads of a warp (tiled_partition<N>), the lanes of a
/// warp that reach a point together (coalesced_threads, labeled_partition)
/// and the whole grid of a cooperative launch (this_grid). Their collectives
/// are the emulator's barriers and warp collectives (sync.hpp) with the
/// group's lane mask, so the checks those make apply: a lane of the group
/// that never reaches the collective, or a grid.sync() some block never
/// reaches, is reported with the file and line of the call. Member functions
/// learn the caller's line through __builtin_FILE()/__builtin_LINE() default
/// arguments, which GCC and Clang both provide.
///
/// Not emulated: multi-grid groups, tiles wider than a warp, tiled_partition
/// of a coalesced group, the dynamic tiled_partition(group, n), and
/// shuffles of values wider than 8 bytes.
#pragma once

#include <bit>
#include <type_traits>

#include <course_emu/sync.hpp>
#include <course_emu/thread_context.hpp>

namespace course_emu {
/// @brief coalesced_threads(): waits until no other lane of the warp can
/// still arrive, and returns the mask of the lanes that called it at the
/// same place (block.cpp).
unsigned coalesce(const char* file, int line);
/// @brief grid.sync(): a barrier of every thread of the grid; a fault
/// outside a cooperative launch (block.cpp, cooperative.cpp).
void grid_sync(const char* file, int line);
/// @brief Whether the running kernel was launched with cudaLaunchCooperativeKernel.
bool in_cooperative_launch();
}  // namespace course_emu

namespace cooperative_groups {

namespace details {
inline unsigned block_linear(uint3 t, dim3 d) { return t.x + d.x * (t.y + d.y * t.z); }
inline unsigned thread_linear() { return block_linear(threadIdx, blockDim); }
inline unsigned block_threads() { return blockDim.x * blockDim.y * blockDim.z; }
inline unsigned lane() { return thread_linear() % 32; }
// The lane of the rank-th set bit of mask.
inline int lane_of_rank(unsigned mask, unsigned rank) {
    for (unsigned i = 0; i < rank; ++i) mask &= mask - 1;
    return mask == 0 ? -1 : std::countr_zero(mask);
}
template <class T>
T shuffle(const char* file, int line, course_emu::WarpOp op, unsigned mask, T value, int arg, int width) {
    return course_emu::shuffle(file, line, op, mask, value, arg, width);
}
}  // namespace details

/// @brief The threads of the running block.
class thread_block {
public:
    static void sync(const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
        (void)course_emu::syncthreads(file, line, course_emu::BarrierKind::plain, 1);
    }
    static unsigned thread_rank() { return details::thread_linear(); }
    static unsigned size() { return details::block_threads(); }
    static unsigned num_threads() { return details::block_threads(); }
    static dim3 group_index() { return blockIdx; }
    static dim3 thread_index() { return threadIdx; }
    static dim3 dim_threads() { return blockDim; }
    static dim3 group_dim() { return blockDim; }
};

/// @brief The block of the calling thread.
inline thread_block this_thread_block() { return {}; }

/// @brief Every thread of the grid. Valid (and sync() allowed) only in a cooperative launch.
class grid_group {
public:
    static void sync(const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
        course_emu::grid_sync(file, line);
    }
    static bool is_valid() { return course_emu::in_cooperative_launch(); }
    static unsigned long long block_rank() { return details::block_linear(blockIdx, gridDim); }
    static unsigned long long num_blocks() {
        return static_cast<unsigned long long>(gridDim.x) * gridDim.y * gridDim.z;
    }
    static unsigned long long thread_rank() {
        return block_rank() * details::block_threads() + details::thread_linear();
    }
    static unsigned long long size() { return num_blocks() * details::block_threads(); }
    static unsigned long long num_threads() { return size(); }
    static dim3 block_index() { return blockIdx; }
    static dim3 dim_blocks() { return gridDim; }
    static dim3 group_dim() { return blockDim; }
};

/// @brief The grid of the calling thread.
inline grid_group this_grid() { return {}; }

/// @brief Lanes of one warp named by a mask: what coalesced_threads() and
/// labeled_partition() return. Ranks count the mask's lanes from lane 0 up.
class coalesced_group {
public:
    explicit coalesced_group(unsigned lane_mask) : mask_(lane_mask) {}

    unsigned get_mask() const { return mask_; }
    unsigned size() const { return static_cast<unsigned>(std::popcount(mask_)); }
    unsigned num_threads() const { return size(); }
    unsigned thread_rank() const {
        return static_cast<unsigned>(std::popcount(mask_ & ((1u << details::lane()) - 1u)));
    }
    unsigned meta_group_rank() const { return 0; }
    unsigned meta_group_size() const { return 1; }

    void sync(const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
        course_emu::syncwarp(file, line, mask_);
    }
    /// The value of the thread of rank `source_rank`.
    template <class T>
    T shfl(T value, unsigned source_rank, const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
        const int source = details::lane_of_rank(mask_, source_rank % size());
        return details::shuffle(file, line, course_emu::WarpOp::shfl, mask_, value, source, 32);
    }
    /// The value of rank + delta, or the caller's own when that is past the group.
    template <class T>
    T shfl_down(T value, unsigned delta, const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
        const unsigned rank = thread_rank() + delta;
        const int source = rank < size() ? details::lane_of_rank(mask_, rank) : static_cast<int>(details::lane());
        return details::shuffle(file, line, course_emu::WarpOp::shfl, mask_, value, source, 32);
    }
    /// The value of rank - delta, or the caller's own when that is below rank 0.
    template <class T>
    T shfl_up(T value, unsigned delta, const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
        const unsigned rank = thread_rank();
        const int source = rank >= delta ? details::lane_of_rank(mask_, rank - delta) : static_cast<int>(details::lane());
        return details::shuffle(file, line, course_emu::WarpOp::shfl, mask_, value, source, 32);
    }
    /// Bit r set when the thread of rank r has a true predicate.
    unsigned ballot(int predicate, const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
        const auto lanes = static_cast<unsigned>(
            course_emu::warp_collective(file, line, course_emu::WarpOp::ballot, mask_, predicate != 0, 0, 32));
        unsigned ranks = 0, rank = 0;
        for (unsigned m = mask_; m != 0; m &= m - 1, ++rank) {
            if (lanes >> std::countr_zero(m) & 1u) ranks |= 1u << rank;
        }
        return ranks;
    }
    int any(int predicate, const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
        return static_cast<int>(course_emu::warp_collective(file, line, course_emu::WarpOp::any, mask_, predicate != 0, 0, 32));
    }
    int all(int predicate, const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
        return static_cast<int>(course_emu::warp_collective(file, line, course_emu::WarpOp::all, mask_, predicate != 0, 0, 32));
    }
    /// Lanes (a warp lane mask) of the group whose value equals the caller's.
    template <class T>
    unsigned match_any(T value, const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
        return static_cast<unsigned>(course_emu::warp_collective(file, line, course_emu::WarpOp::match_any, mask_,
                                                                 course_emu::detail::raw_bits(value), 0, 32));
    }

private:
    unsigned mask_;
};

/// @brief The lanes of the warp that call this at the same place together
/// (those that took the same branch). A collective of the group waits for
/// exactly these lanes.
inline coalesced_group coalesced_threads(const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    return coalesced_group(course_emu::coalesce(file, line));
}

/// @brief A tile of `Size` consecutive threads of the block (1, 2, 4, 8, 16
/// or 32), all in one warp. `Parent` is the group it was cut from.
template <unsigned Size, class Parent = void>
class thread_block_tile {
    static_assert(Size >= 1 && Size <= 32 && (Size & (Size - 1)) == 0,
                  "the emulator's thread_block_tile sizes are 1, 2, 4, 8, 16 and 32");

public:
    thread_block_tile() = default;
    /// A tile converts to the tile of the same size without its parent's type.
    template <class Other>
    thread_block_tile(const thread_block_tile<Size, Other>&) {}

    static constexpr unsigned num_threads() { return Size; }
    static constexpr unsigned size() { return Size; }
    static unsigned thread_rank() { return details::thread_linear() % Size; }
    /// This tile's index among the tiles of the block.
    static unsigned meta_group_rank() { return details::thread_linear() / Size; }
    /// How many tiles the block was cut into.
    static unsigned meta_group_size() { return (details::block_threads() + Size - 1) / Size; }
    /// The warp lanes of the calling thread's tile.
    static unsigned get_mask() {
        const unsigned base = details::lane() / Size * Size;
        return (Size == 32 ? 0xffffffffu : (1u << Size) - 1u) << base;
    }

    static void sync(const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
        course_emu::syncwarp(file, line, get_mask());
    }
    template <class T>
    static T shfl(T value, int source_rank, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
        return details::shuffle(file, line, course_emu::WarpOp::shfl, get_mask(), value, source_rank, Size);
    }
    template <class T>
    static T shfl_down(T value, unsigned delta, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
        return details::shuffle(file, line, course_emu::WarpOp::shfl_down, get_mask(), value, static_cast<int>(delta), Size);
    }
    template <class T>
    static T shfl_up(T value, unsigned delta, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
        return details::shuffle(file, line, course_emu::WarpOp::shfl_up, get_mask(), value, static_cast<int>(delta), Size);
    }
    template <class T>
    static T shfl_xor(T value, unsigned lane_mask, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
        return details::shuffle(file, line, course_emu::WarpOp::shfl_xor, get_mask(), value, static_cast<int>(lane_mask), Size);
    }
    /// Bit r set when the thread of rank r has a true predicate.
    static unsigned ballot(int predicate, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
        const auto lanes = static_cast<unsigned>(
            course_emu::warp_collective(file, line, course_emu::WarpOp::ballot, get_mask(), predicate != 0, 0, 32));
        return (lanes & get_mask()) >> (details::lane() / Size * Size);
    }
    static int any(int predicate, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
        return static_cast<int>(course_emu::warp_collective(file, line, course_emu::WarpOp::any, get_mask(), predicate != 0, 0, 32));
    }
    static int all(int predicate, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
        return static_cast<int>(course_emu::warp_collective(file, line, course_emu::WarpOp::all, get_mask(), predicate != 0, 0, 32));
    }
    /// Bit r set when the thread of rank r holds the same value as the caller.
    template <class T>
    static unsigned match_any(T value, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
        const auto lanes = static_cast<unsigned>(course_emu::warp_collective(
            file, line, course_emu::WarpOp::match_any, get_mask(), course_emu::detail::raw_bits(value), 0, 32));
        return lanes >> (details::lane() / Size * Size);
    }
};

/// @brief Cuts the block (or a larger tile) into tiles of `Size` threads.
template <unsigned Size, class Parent>
thread_block_tile<Size, Parent> tiled_partition(const Parent&) {
    static_assert(!std::is_same_v<Parent, coalesced_group>,
                  "the emulator cuts tiles from a thread_block or a larger thread_block_tile only");
    return {};
}

/// @brief The threads of `group` that pass the same `label` (a coalesced group per label).
inline coalesced_group labeled_partition(const coalesced_group& group, int label, const char* file = __builtin_FILE(),
                                         int line = __builtin_LINE()) {
    return coalesced_group(group.match_any(label, file, line));
}
/// @brief The threads of `tile` that pass the same `label`.
template <unsigned Size, class Parent>
coalesced_group labeled_partition(const thread_block_tile<Size, Parent>& tile, int label,
                                  const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    return coalesced_group(static_cast<unsigned>(course_emu::warp_collective(
        file, line, course_emu::WarpOp::match_any, tile.get_mask(), course_emu::detail::raw_bits(label), 0, 32)));
}

/// @brief Calls `group.sync()`.
template <class Group>
void sync(const Group& group, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    group.sync(file, line);
}

// ---------------------------------------------------------------- reduce.h

/// @brief a + b.
template <class T>
struct plus {
    T operator()(T a, T b) const { return a + b; }
};
/// @brief The smaller of a and b.
template <class T>
struct less {
    T operator()(T a, T b) const { return b < a ? b : a; }
};
/// @brief The larger of a and b.
template <class T>
struct greater {
    T operator()(T a, T b) const { return a < b ? b : a; }
};
/// @brief a & b.
template <class T>
struct bit_and {
    T operator()(T a, T b) const { return a & b; }
};
/// @brief a | b.
template <class T>
struct bit_or {
    T operator()(T a, T b) const { return a | b; }
};
/// @brief a ^ b.
template <class T>
struct bit_xor {
    T operator()(T a, T b) const { return a ^ b; }
};

/// @brief `op` folded over the values of every thread of the tile; every thread gets the result.
template <unsigned Size, class Parent, class T, class Op>
T reduce(const thread_block_tile<Size, Parent>& tile, T value, Op op, const char* file = __builtin_FILE(),
         int line = __builtin_LINE()) {
    // A butterfly: after the step with offset o every lane holds the
    // reduction of its aligned run of 2o lanes.
    for (unsigned offset = Size / 2; offset > 0; offset /= 2) value = op(value, tile.shfl_xor(value, offset, file, line));
    return value;
}

/// @brief `op` folded over the values of every thread of the group, in rank order; every thread gets the result.
template <class T, class Op>
T reduce(const coalesced_group& group, T value, Op op, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    T result = group.shfl(value, 0, file, line);
    for (unsigned rank = 1; rank < group.size(); ++rank) result = op(result, group.shfl(value, rank, file, line));
    return result;
}

}  // namespace cooperative_groups
