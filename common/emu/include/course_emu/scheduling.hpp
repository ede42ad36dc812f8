/// @file scheduling.hpp
/// @brief Hooks between device-side operations and the emulator's scheduler.
#pragma once

namespace course_emu::detail {

/// @brief Called by every atomic operation before it acts. The scheduler may
/// switch to another thread of the block here (depending on the schedule),
/// so that a compare-and-swap loop meets real contention.
void atomic_scheduling_point();

/// @brief Called after an atomic read that changed nothing (an atomic load,
/// atomicAdd(p, 0), a failed atomicCAS ...): one turn, perhaps, of a loop
/// that waits for another thread to set `*address`. The scheduler watches
/// these: a block whose every live thread keeps reading the same value at
/// the same address is stalled, and a grid whose every running block is
/// stalled is reported as a deadlock at `file`:`line` (spin.md in
/// docs/emulator.md, "Spin-waits").
void spin_read(const char* file, int line, const void* address, unsigned long long value);

/// @brief Called after an atomic that wrote memory: the running block makes progress.
void memory_written();

/// @brief Resets the per-launch atomic operation counts (called by the
/// runtime at the start of every launch; implemented in atomics.cpp).
void reset_atomic_counts();

}  // namespace course_emu::detail
