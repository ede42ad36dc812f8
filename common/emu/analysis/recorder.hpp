// Internal to the analysis library: what the instrumentation's callbacks
// (tsan.cpp) hand the recorder (recorder.cpp), and the recorder's limit
// that the report (report.cpp) states.
#pragma once

#include <cstddef>
#include <cstdint>

namespace course_emu::analysis {

/// A block's accesses beyond this many are not grouped into warp requests
/// (the report says so).
constexpr std::size_t kMaxBlockAccesses = std::size_t{1} << 23;

/// What a recorded access did.
enum AccessFlags : std::uint8_t { kWrite = 1, kShared = 2, kAtomic = 4 };

/// Records an access by the kernel thread running on the calling worker at
/// instruction `pc`, while an analysis runs; nothing otherwise.
void record_access(const volatile void* address, std::size_t size, std::uint8_t flags, std::uintptr_t pc);

/// Records a memory fence by the running kernel thread (it orders accesses of
/// different blocks: see Recorder::fenced_between).
void record_fence();

/// Records that the running kernel thread entered the basic block at `pc`.
void record_block_entered(std::uintptr_t pc);

}  // namespace course_emu::analysis
