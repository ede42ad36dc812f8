// Internal: one launch in flight (GridRun) and what the block scheduler
// (block.cpp) and the launch code (launch.cpp) share.
#pragma once

#include "device_internal.hpp"

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace course_emu::detail {

/// A permutation of [0, n) for a schedule: forward, reverse, or an affine
/// map i -> (a*i + c) mod n with a coprime to n (cheap and needs no table,
/// since a grid may have two billion blocks).
class Order {
public:
    Order(Schedule s, unsigned long long n, unsigned long long salt);
    unsigned long long operator[](unsigned long long i) const;

private:
    Schedule::Kind kind_;
    unsigned long long n_;
    unsigned long long a_ = 1;
    unsigned long long c_ = 0;
};

/// The coordinates of flat index i in a 3-D extent (x fastest).
uint3 unflatten(unsigned long long i, dim3 extent);

/// "(x,y,z)".
std::string format_index(uint3 v);

class CooperativeGrid;  // cooperative.hpp

/// Thrown through a kernel's frames by raise_fault(); caught by the block scheduler.
struct FaultSignal {
    Fault fault;
};

/// A launch being run: shared by every worker running its blocks.
struct GridRun {
    GridRun(const LaunchInfo& launch, void (*body)(void*), void* body_state);

    const LaunchInfo& info;
    void (*thread_body)(void*);
    void* state;
    Schedule schedule;
    unsigned long long block_count;
    unsigned threads_per_block;
    std::atomic<unsigned long long> next_block{0};
    std::atomic<bool> faulted{false};
    std::atomic<bool> over_time{false};  // set by the watchdog past COURSE_EMU_TIMEOUT
    // Spin-waits (block.cpp): workers running blocks, and those whose block only
    // spins. All of them stalled: no thread can set what the spinners wait for.
    std::atomic<unsigned> active_workers{0};
    std::atomic<unsigned> stalled_workers{0};
    std::mutex fault_mutex;
    std::string fault_report;
    cudaError_t fault_code = cudaSuccess;
    std::mutex workers_mutex;
    std::vector<std::thread::native_handle_type> workers;  // for the watchdog to interrupt
    CooperativeGrid* cooperative = nullptr;  // set for cudaLaunchCooperativeKernel (cooperative.cpp)

    /// Records the launch's first fault: "file:line: what", then the kernel,
    /// launch site, block and thread of `ctx`, the schedule, and `details`.
    void record_fault(cudaError_t code, const char* file, int line, const std::string& what,
                      const ThreadContext& ctx, const std::string& details = "");

    /// Runs blocks until none are left or the launch faulted.
    void work();
};

/// Runs one block of `grid` on the calling worker (block.cpp).
void run_block(GridRun& grid, unsigned long long flat_block);

/// Prepares the calling OS thread to run blocks: its alternate signal stack
/// and, once per process, the handlers for faults inside kernels (block.cpp).
void prepare_worker_thread();

/// Asks the worker `thread` to stop the kernel it runs (the time budget is spent).
void interrupt_worker(std::thread::native_handle_type thread);

}  // namespace course_emu::detail
