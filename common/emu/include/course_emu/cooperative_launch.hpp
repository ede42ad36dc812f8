/// @file cooperative_launch.hpp
/// @brief `cudaLaunchCooperativeKernel`: a launch whose blocks may wait for each other at `grid.sync()`.
///
/// A cooperative launch runs every block of the grid at once, so a grid-wide
/// barrier cannot deadlock; in exchange the grid may not be larger than what
/// the device keeps resident (cudaOccupancyMaxActiveBlocksPerMultiprocessor
/// times the SM count), else the launch fails with
/// cudaErrorCooperativeLaunchTooLarge and nothing runs, as on a GPU.
///
/// Pass the kernel itself: `cudaLaunchCooperativeKernel(my_kernel, grid,
/// block, args, smem, stream)`, with `args` an array of pointers to the
/// arguments. The emulator needs the kernel's parameter types to read them,
/// so `(void*)my_kernel` (also accepted by CUDA) is refused at compile time.
#pragma once

#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include <course_emu/launch.hpp>
#include <course_emu/runtime_api.hpp>

namespace course_emu {

/// @brief Runs a cooperative launch (see launch()): checks the grid against
/// the device's residency first; returns the launch's error, also recorded
/// as the last error when it is one.
cudaError_t launch_cooperative(const LaunchInfo& info, void (*thread_body)(void*), void* state);

namespace detail {
/// @brief The kernel's name from the text of cudaLaunchCooperativeKernel's arguments.
const char* kernel_name_of(const char* arguments);
/// @brief Records and returns cudaErrorInvalidValue (a null kernel or argument array).
cudaError_t invalid_cooperative_launch();
}  // namespace detail

/// @brief What `cudaLaunchCooperativeKernel(kernel, grid, block, args, smem, stream)` calls.
template <class... Params>
cudaError_t cooperative_launch(const char* file, int line, const char* arguments, void (*kernel)(Params...),
                               dim3 grid, dim3 block, void** args, std::size_t dynamic_shared_bytes = 0,
                               cudaStream_t stream = nullptr) {
    if (kernel == nullptr || (args == nullptr && sizeof...(Params) > 0)) {
        return detail::invalid_cooperative_launch();
    }
    LaunchInfo info;
    info.file = file;
    info.line = line;
    info.kernel = detail::kernel_name_of(arguments);
    info.grid = grid;
    info.block = block;
    info.dynamic_shared_bytes = dynamic_shared_bytes;
    info.stream = stream;
    info.cooperative = true;
    // The arguments are copied once, as CUDA copies kernel parameters.
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
        std::tuple<std::decay_t<Params>...> parameters(*static_cast<std::decay_t<Params>*>(args[I])...);
        auto per_thread = [&] { std::apply(kernel, parameters); };
        using PerThread = decltype(per_thread);
        return launch_cooperative(info, [](void* p) { (*static_cast<PerThread*>(p))(); }, &per_thread);
    }(std::index_sequence_for<Params...>{});
}

/// @brief The untyped form: refused, with the reason.
template <class Ignored = void>
cudaError_t cooperative_launch(const char*, int, const char*, const void*, dim3, dim3, void**, std::size_t = 0,
                               cudaStream_t = nullptr) {
    static_assert(!std::is_void_v<Ignored> && false,
                  "cudaLaunchCooperativeKernel on the course emulator: pass the kernel itself, not (void*)kernel "
                  "(the emulator reads the arguments through the kernel's parameter types)");
    return cudaErrorInvalidValue;
}

}  // namespace course_emu

/// @brief Launches `kernel` cooperatively: see cooperative_launch.hpp.
#define cudaLaunchCooperativeKernel(...) \
    ::course_emu::cooperative_launch(__FILE__, __LINE__, #__VA_ARGS__, __VA_ARGS__)
