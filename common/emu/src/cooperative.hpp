// Internal: the grid barrier of a cooperative launch (cudaLaunchCooperativeKernel).
//
// Every block of a cooperative grid has its own worker thread, so all of
// them are live at once, but only one block runs at a time: the "turn"
// passes from block to block in the schedule's order. A block keeps the
// turn until its threads reach grid.sync() or exit; when every block has
// had its turn in a phase, the phase ends, and if every block waits at
// grid.sync() the next phase starts, in a new order (a fresh permutation
// per phase under a random schedule). Running blocks one after another
// between grid barriers makes each schedule reproducible and lets it vary
// which block's writes another block sees first when a barrier is missing.
#pragma once

#include "grid.hpp"

#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <vector>

namespace course_emu::detail {

class CooperativeGrid final : public GridBarrier {
public:
    explicit CooperativeGrid(GridRun& grid);

    bool begin_block(unsigned long long flat_block) override;
    void end_block(unsigned long long flat_block) override;
    /// Gives up the turn and waits, for the whole block, until every block
    /// of the grid has arrived (see GridBarrier::sync, grid.hpp).
    void sync(const char* file, int line, const ThreadContext& ctx) override;

private:
    enum class BlockState { running, arrived, finished };

    void pass_turn(std::unique_lock<std::mutex>& lock);
    void start_phase();
    // Waits until it is the block's turn; false if the launch stopped meanwhile.
    bool wait_turn(std::unique_lock<std::mutex>& lock, unsigned long long flat_block);

    GridRun& grid_;
    std::mutex mutex_;
    std::vector<std::condition_variable> turn_changed_;  // one per block: the turn wakes only its owner
    std::vector<BlockState> state_;
    std::vector<unsigned long long> order_;  // this phase's order of blocks
    std::size_t position_ = 0;               // order_[position_] holds the turn
    unsigned long long phase_ = 0;
    unsigned long long arrived_ = 0;
    unsigned long long finished_ = 0;
    unsigned long long first_finished_ = 0;  // a block that exited, for the deadlock report
    const char* sync_file_ = "";
    int sync_line_ = 0;
    bool done_ = false;  // every block finished, or the launch stopped
};

}  // namespace course_emu::detail
