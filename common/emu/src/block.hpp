// Internal: the block scheduler (block.cpp), for the launch (launch.cpp)
// that runs blocks on its workers and the signal handlers (signals.cpp)
// that stop the running thread.
#pragma once

#include "grid.hpp"

#include <atomic>
#include <cstddef>

namespace course_emu::detail {

/// Runs one block of `grid` on the calling worker.
void run_block(GridRun& grid, unsigned long long flat_block);

/// One thread of the running launch, for the report of a test that hangs.
extern std::atomic<const ThreadContext*> g_running_thread;

// For the signal handlers (async-signal-safe: they touch only the calling
// worker's own state).

/// Whether the calling worker runs a kernel's own code now (not the
/// emulator's, nor a block being stopped): only then may a signal leave it.
bool kernel_code_running();

/// Leaves the running thread's fiber for the block scheduler, which reports
/// the fault `code` with `what`; never returns. Only when kernel_code_running().
[[noreturn]] void abandon_running_thread(cudaError_t code, const char* what);

/// Asks the block scheduler to stop at its next step (the time budget is spent).
void interrupt_between_threads();

/// Describes a fault at `address` if it is in the guard page behind the
/// running block's dynamic shared memory.
bool describe_dynamic_shared_fault(const void* address, char* buffer, std::size_t size);

}  // namespace course_emu::detail
