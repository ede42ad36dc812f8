// Internal: the signal handling of the workers (signals.cpp), for the
// launch (launch.cpp) that starts them and stops them past their time.
#pragma once

#include <thread>

namespace course_emu::detail {

/// Prepares the calling OS thread to run blocks: its alternate signal stack
/// and the handlers for faults inside kernels.
void prepare_worker_thread();

/// Asks the worker `thread` to stop the kernel it runs (the time budget is spent).
void interrupt_worker(std::thread::native_handle_type thread);

}  // namespace course_emu::detail
