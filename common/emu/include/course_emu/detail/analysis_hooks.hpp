// Internal: the points where the analysis library (common/emu/analysis/,
// `course_emu::analysis`) follows a launch, and what else it needs of the
// runtime. The pointer is null unless an analysis is running, so a normal
// launch pays one untaken branch per block, barrier and warp collective.
//
// The analysis library sits above the runtime: it sees the runtime through
// this folder only, never through the runtime's private src/ folder, and the
// runtime calls it only through the hooks it registers here.
#pragma once
#ifndef COURSE_EMU_DETAIL
#error "course_emu/detail/ belongs to the emulator (its runtime and its analysis library): include the public headers, <cuda_runtime.h> or course_emu/*.hpp, instead"
#endif

#include <course_emu/launch.hpp>
#include <course_emu/show.hpp>

#include <csignal>
#include <cstddef>
#include <utility>
#include <vector>

namespace course_emu::detail {

class AnalysisHooks {
public:
    virtual void launch_begin(const LaunchInfo& info) = 0;
    virtual void launch_end() = 0;
    /// The calling worker starts a block; `dynamic_shared` is its `extern __shared__` memory.
    virtual void block_begin(const void* dynamic_shared, std::size_t dynamic_shared_bytes) = 0;
    virtual void block_end() = 0;
    /// The running thread (current_thread) arrives at a barrier (`kind` 0:
    /// `__syncthreads()`, 1: a warp collective, 2: `grid.sync()`) at `file`:`line`
    /// (for `./course show`'s barrier timeline: an arrival never followed by
    /// after_sync() is a thread still waiting when the block ended, by a fault).
    virtual void before_sync(int kind, const char* file, int line) = 0;
    /// The running thread (current_thread) left a barrier (`warp` false) or a warp collective.
    virtual void after_sync(bool warp) = 0;
    /// A block of a cooperative launch goes on past grid.sync() into grid phase
    /// `phase` (cooperative.cpp): what it does now is ordered after everything
    /// every block did in earlier phases. Blocks of a cooperative grid take
    /// turns, so the running block may differ from the last one that began.
    virtual void grid_phase(unsigned long long phase) = 0;
    /// The running thread passed the declaration of a static `__shared__` variable.
    virtual void shared_declared(const void* address, std::size_t bytes) = 0;
    /// cudaMalloc returned a device allocation (not managed memory, which host code writes unseen).
    virtual void device_allocated(const void* address, std::size_t bytes) = 0;
    /// cudaFree released the allocation at `address`.
    virtual void device_freed(const void* address) = 0;
    /// cudaMemcpy or cudaMemset wrote device bytes from the host.
    virtual void device_written(const void* address, std::size_t bytes) = 0;
    /// A warp-wide operation (wmma::store_matrix_sync) wrote these bytes of
    /// shared or global memory for the running thread's warp: written, by no
    /// one lane in particular (so no race is reported against them).
    virtual void warp_stored(const void* address, std::size_t bytes) = 0;
    /// True when the analysis keeps what `./course show` draws (course_emu/show.hpp).
    virtual bool wants_outputs() const = 0;
    /// The test harness compared an output and found it wrong (course_emu/show.hpp).
    virtual void output_compared(show::ComparedOutput output) = 0;

protected:
    ~AnalysisHooks() = default;
};

extern AnalysisHooks* g_analysis_hooks;

/// Marks the analysis callbacks (called from the kernel's instrumented code)
/// as the emulator's code for as long as it lives: the time budget's signal
/// then waits for the thread's next scheduling step instead of abandoning it
/// in the middle of a container's update (block.cpp's RuntimeSection).
class AnalysisSection {
public:
    AnalysisSection();
    ~AnalysisSection();
    AnalysisSection(const AnalysisSection&) = delete;
    AnalysisSection& operator=(const AnalysisSection&) = delete;

private:
    volatile std::sig_atomic_t* flag_;
    std::sig_atomic_t saved_;
};

/// The live device and managed allocations, (start, bytes) sorted by start (allocator.cpp).
std::vector<std::pair<const char*, std::size_t>> live_device_allocations();

}  // namespace course_emu::detail
