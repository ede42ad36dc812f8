// Internal: what launch.cpp (validation, the worker pool, the time budget)
// offers the files above it: cooperative.cpp and streams.cpp.
#pragma once

#include "grid.hpp"

#include <course_emu/launch.hpp>

#include <memory>

namespace course_emu::detail {

/// Validates a launch like a GPU (sticky fault, configuration, dynamic
/// shared memory), recording the error; true when it may run.
bool launch_accepted(const LaunchInfo& info);

/// Makes the grid barrier of a cooperative launch for the grid being launched.
using GridBarrierMaker = std::unique_ptr<GridBarrier> (*)(GridRun& grid);

/// launch(), with the grid barrier `make_barrier` makes (cooperative.cpp)
/// when it is given: then every block gets a worker of its own.
void launch_grid(const LaunchInfo& info, void (*thread_body)(void*), void* state, GridBarrierMaker make_barrier);

}  // namespace course_emu::detail
