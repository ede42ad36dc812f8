/// @file scheduling.hpp
/// @brief Hooks between device-side operations and the emulator's scheduler.
#pragma once

namespace course_emu::detail {

/// @brief Called by every atomic operation before it acts. The scheduler may
/// switch to another thread of the block here (depending on the schedule),
/// so that a compare-and-swap loop meets real contention.
void atomic_scheduling_point();

/// @brief Resets the per-launch atomic operation counts (called by the
/// runtime at the start of every launch; implemented in atomics.cpp).
void reset_atomic_counts();

}  // namespace course_emu::detail
