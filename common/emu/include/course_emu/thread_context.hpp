/// @file thread_context.hpp
/// @brief The built-in variables (`threadIdx`, `blockIdx`, `blockDim`, `gridDim`, `warpSize`).
///
/// Each emulated CUDA thread has a ThreadContext; the worker running it points
/// a thread-local pointer at it before the thread's code runs, and the
/// built-in variables read through that pointer. The design does not assume
/// threads run to completion one after another: a fiber switch only has to
/// swap the pointer.
#pragma once

#include <course_emu/types.hpp>

namespace course_emu {

/// @brief Identity of one emulated CUDA thread during a launch.
struct ThreadContext {
    uint3 thread_idx{0, 0, 0};
    uint3 block_idx{0, 0, 0};
    dim3 block_dim{1, 1, 1};
    dim3 grid_dim{1, 1, 1};
};

namespace detail {
extern thread_local ThreadContext* current_thread;
[[noreturn]] void builtin_outside_kernel();

/// @brief The context of the CUDA thread running now; reports a fault when
/// a built-in variable is read from host code.
inline const ThreadContext& current() {
    if (current_thread == nullptr) [[unlikely]] {
        builtin_outside_kernel();
    }
    return *current_thread;
}
}  // namespace detail

}  // namespace course_emu

#define threadIdx (::course_emu::detail::current().thread_idx)
#define blockIdx (::course_emu::detail::current().block_idx)
#define blockDim (::course_emu::detail::current().block_dim)
#define gridDim (::course_emu::detail::current().grid_dim)

/// @brief Threads per warp, as on every NVIDIA GPU so far.
inline constexpr int warpSize = 32;
