// Atomic functions and their per-launch counts (being written).
#include <course_emu/atomics.hpp>

namespace course_emu::detail {

void reset_atomic_counts() {}

}  // namespace course_emu::detail
