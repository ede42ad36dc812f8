// Internal: one launch in flight (GridRun, grid.cpp) and what the block
// scheduler (block.cpp), the grid barrier (cooperative.cpp) and the launch
// code (launch.cpp) share.
#pragma once

#include <course_emu/detail/coordinates.hpp>
#include <course_emu/launch.hpp>
#include <course_emu/thread_context.hpp>

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

/// The grid barrier of a cooperative launch, as the workers and the block
/// scheduler meet it: cooperative.cpp's CooperativeGrid, which
/// launch_cooperative() hands to the launch (launch_internal.hpp). An
/// interface, so that the files below cooperative.cpp never call into it.
class GridBarrier {
public:
    virtual ~GridBarrier() = default;

    /// Waits for the block's first turn. False: the launch faulted or ran
    /// past its time, and the block must not run.
    virtual bool begin_block(unsigned long long flat_block) = 0;

    /// The block's threads have all finished (or the block was stopped).
    virtual void end_block(unsigned long long flat_block) = 0;

    /// The block of `ctx` has reached grid.sync() at file:line (all its
    /// threads are at the block barrier before it): returns when every block
    /// has arrived and the block's turn comes again. Raises a fault in the
    /// calling thread if the launch faulted meanwhile.
    virtual void sync(const char* file, int line, const ThreadContext& ctx) = 0;
};

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
    GridBarrier* cooperative = nullptr;  // set for cudaLaunchCooperativeKernel (cooperative.cpp)

    /// Records the launch's first fault: "file:line: what", then the kernel,
    /// launch site, block and thread of `ctx`, the schedule, and `details`.
    void record_fault(cudaError_t code, const char* file, int line, const std::string& what,
                      const ThreadContext& ctx, const std::string& details = "");

    /// Runs blocks until none are left or the launch faulted (launch.cpp).
    void work();
};

}  // namespace course_emu::detail
