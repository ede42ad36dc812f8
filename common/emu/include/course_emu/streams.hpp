/// @file streams.hpp
/// @brief What a translated launch needs from the emulator's streams
/// (implemented in src/streams.cpp; docs/emulator.md, "Streams and events").
///
/// Work issued to a stream other than the legacy default stream is queued,
/// not run: it runs when the host synchronises, in an order the schedule
/// chooses among the operations that stream order, events and the legacy
/// default stream allow. Each queued operation records the memory it reads
/// and writes, and two operations that touch the same bytes, one writing,
/// with nothing ordering them, are reported as a cross-stream race.
#pragma once

#include <functional>
#include <type_traits>
#include <vector>

#include <course_emu/runtime_api.hpp>

namespace course_emu {
struct LaunchInfo;
}

namespace course_emu::detail {

/// @brief A pointer argument of a kernel launch: where it points and whether
/// the kernel can only read through it (a pointer to const).
struct PointerArgument {
    const void* address;
    bool read_only;
};

/// @brief Whether a launch into `stream` goes through the stream machinery:
/// true for a non-default stream, and for the default stream once a program
/// has created a stream (so that the legacy default stream's implicit
/// barriers and the race detector see it). Programs that never create a
/// stream launch exactly as before.
bool launch_goes_through_streams(cudaStream_t stream);

/// @brief Issues a validated launch to `info.stream`: `run` launches the grid
/// when the schedule reaches it; `pointers` are its pointer arguments.
void launch_through_streams(const LaunchInfo& info, std::vector<PointerArgument> pointers,
                            std::function<void()> run);

/// @brief Adds `argument` to `out` if it is a pointer to an object.
template <class T>
void collect_pointer_argument(std::vector<PointerArgument>& out, const T& argument) {
    if constexpr (std::is_pointer_v<T> && std::is_object_v<std::remove_pointer_t<T>>) {
        using Pointee = std::remove_pointer_t<T>;
        out.push_back({const_cast<const void*>(static_cast<const volatile void*>(argument)), std::is_const_v<Pointee>});
    }
}

}  // namespace course_emu::detail
