// Cooperative launches: cudaLaunchCooperativeKernel's residency check and
// the grid barrier behind grid.sync() (see cooperative.hpp for the design).
#include "cooperative.hpp"

#include "device_internal.hpp"
#include "errors.hpp"
#include "launch_internal.hpp"

#include <course_emu/cooperative_launch.hpp>
#include <course_emu/detail/analysis_hooks.hpp>

#include <chrono>
#include <memory>
#include <set>
#include <string>

namespace course_emu::detail {

CooperativeGrid::CooperativeGrid(GridRun& grid)
    : grid_(grid),
      turn_changed_(grid.block_count),
      state_(grid.block_count, BlockState::running),
      order_(grid.block_count) {
    start_phase();
}

void CooperativeGrid::start_phase() {
    const Order order(grid_.schedule, grid_.block_count, 0x5eed0000ull + phase_);
    for (unsigned long long i = 0; i < grid_.block_count; ++i) order_[i] = order[i];
    position_ = 0;
    arrived_ = 0;
}

bool CooperativeGrid::wait_turn(std::unique_lock<std::mutex>& lock, unsigned long long flat_block) {
    // Woken by the block before it; the timeout only lets a fault or the
    // time budget (set by other threads without this lock) be noticed.
    while (!done_ && order_[position_] != flat_block) {
        if (grid_.faulted.load() || grid_.over_time.load()) return false;
        turn_changed_[flat_block].wait_for(lock, std::chrono::milliseconds(20));
    }
    return !done_ && !grid_.faulted.load() && !grid_.over_time.load();
}

bool CooperativeGrid::begin_block(unsigned long long flat_block) {
    std::unique_lock lock(mutex_);
    return wait_turn(lock, flat_block);
}

void CooperativeGrid::end_block(unsigned long long flat_block) {
    std::unique_lock lock(mutex_);
    if (state_[flat_block] == BlockState::finished) return;
    state_[flat_block] = BlockState::finished;
    if (finished_++ == 0) first_finished_ = flat_block;
    if (!done_ && order_[position_] == flat_block) pass_turn(lock);
}

void CooperativeGrid::sync(const char* file, int line, const ThreadContext& ctx) {
    std::unique_lock lock(mutex_);
    const unsigned long long me = static_cast<unsigned long long>(ctx.block_idx.x) +
                                  static_cast<unsigned long long>(grid_.info.grid.x) *
                                      (ctx.block_idx.y + static_cast<unsigned long long>(grid_.info.grid.y) * ctx.block_idx.z);
    if (arrived_++ == 0) {
        sync_file_ = file;
        sync_line_ = line;
    }
    state_[me] = BlockState::arrived;
    pass_turn(lock);
    const bool resumed = wait_turn(lock, me);
    const unsigned long long phase = phase_;
    lock.unlock();
    if (resumed && g_analysis_hooks != nullptr) g_analysis_hooks->grid_phase(phase);
    if (!resumed) {
        const bool timed_out = grid_.over_time.load() && !grid_.faulted.load();
        raise_fault(file, line,
                    timed_out ? "the kernel ran past its time budget (COURSE_EMU_TIMEOUT) while blocks waited at "
                                "grid.sync(): a block in a loop that never ends?"
                              : "stopped at grid.sync(): another block of the grid faulted",
                    timed_out ? cudaErrorLaunchTimeout : cudaErrorLaunchFailure);
    }
}

void CooperativeGrid::pass_turn(std::unique_lock<std::mutex>&) {
    // The next block of this phase that has not finished; blocks that
    // finished in an earlier phase keep no turn.
    ++position_;
    while (position_ < order_.size() && state_[order_[position_]] == BlockState::finished) ++position_;
    if (position_ == order_.size()) {
        if (arrived_ == 0) {  // every block has finished: the kernel is done
            done_ = true;
            return;
        }
        if (finished_ > 0) {
            // Some blocks wait at grid.sync() that an exited block never reached.
            ThreadContext where;
            where.block_dim = grid_.info.block;
            where.grid_dim = grid_.info.grid;
            where.block_idx = unflatten(first_finished_, grid_.info.grid);
            grid_.record_fault(cudaErrorLaunchFailure, sync_file_, sync_line_,
                               "deadlock at grid.sync(): " + std::to_string(arrived_) + " block(s) wait here, but " +
                                   std::to_string(finished_) + " block(s) exited without reaching it, block " +
                                   format_index(where.block_idx) +
                                   " among them (an early return, or a loop some blocks leave sooner?). Every "
                                   "thread of every block must reach each grid.sync().",
                               where);
            done_ = true;
            for (auto& cv : turn_changed_) cv.notify_all();
            return;
        }
        ++phase_;
        for (auto& s : state_) s = BlockState::running;
        start_phase();
    }
    turn_changed_[order_[position_]].notify_all();
}

// "kernel" from the text of the launch's arguments, "kernel, grid, block, args".
const char* kernel_name_of(const char* arguments) {
    static std::mutex mutex;
    static std::set<std::string> names;  // interned: LaunchInfo keeps the pointer
    std::string name;
    int depth = 0;
    for (const char* c = arguments; *c != '\0'; ++c) {
        if (*c == '<' || *c == '(') ++depth;
        if (*c == '>' || *c == ')') --depth;
        if (*c == ',' && depth == 0) break;
        name += *c;
    }
    std::lock_guard lock(mutex);
    return names.insert(name).first->c_str();
}

cudaError_t invalid_cooperative_launch() { return api_result(cudaErrorInvalidValue); }

}  // namespace course_emu::detail

namespace course_emu {

cudaError_t launch_cooperative(const LaunchInfo& request, void (*thread_body)(void*), void* state) {
    using namespace detail;
    LaunchInfo info = request;
    info.cooperative = true;
    if (sticky_error() != cudaSuccess) return api_result(cudaSuccess);
    const unsigned long long threads = static_cast<unsigned long long>(info.block.x) * info.block.y * info.block.z;
    const unsigned long long blocks = static_cast<unsigned long long>(info.grid.x) * info.grid.y * info.grid.z;
    if (threads >= 1 && threads <= 1024 && blocks >= 1) {
        // As on a GPU: every block must fit on the device at once, by the
        // same occupancy model cudaOccupancyMaxActiveBlocksPerMultiprocessor reports.
        int per_sm = 0;
        (void)cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reinterpret_cast<const void*>(thread_body),
                                                            static_cast<int>(threads), info.dynamic_shared_bytes);
        const unsigned long long resident =
            static_cast<unsigned long long>(per_sm) * device_properties().multiProcessorCount;
        if (blocks > resident) return record(cudaErrorCooperativeLaunchTooLarge);
    }
    // launch() reports its refusals through the last error only: keep an
    // earlier error for cudaGetLastError if this launch succeeds.
    const cudaError_t earlier = cudaGetLastError();
    launch_grid(info, thread_body, state,
                [](GridRun& grid) -> std::unique_ptr<GridBarrier> { return std::make_unique<CooperativeGrid>(grid); });
    const cudaError_t result = cudaPeekAtLastError();
    if (result == cudaSuccess && earlier != cudaSuccess) record(earlier);
    return result;
}

}  // namespace course_emu
