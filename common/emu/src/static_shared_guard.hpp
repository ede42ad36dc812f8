// The guard pages behind static __shared__ arrays (static_shared.cpp), as
// the fault handler (signals.cpp) sees them.
#pragma once

#include <cstddef>

namespace course_emu::detail {

/// Describes a fault at `address` if it is in the guard page behind one of
/// the calling worker's static shared arrays: the array, its size, the index.
/// Async-signal-safe (snprintf of numbers and of the source's strings only).
bool describe_static_shared_fault(const void* address, char* buffer, std::size_t size);

}  // namespace course_emu::detail
