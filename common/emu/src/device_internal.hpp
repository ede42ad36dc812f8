// What device.cpp (the emulated device: its properties, its guarded
// allocator, its fault addresses) offers the emulator's other files.
#pragma once

#include "errors.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <string>

namespace course_emu::detail {

/// The emulated device's properties (name, SM count, limits).
const cudaDeviceProp& device_properties();

/// @brief Explains a faulting address for a report, or returns false if it is
/// not near any device allocation.
///
/// Writes one NUL-terminated line into `buffer` (truncated to `size`), e.g.
/// "out-of-bounds access: byte offset 4096 of a 4000-byte device allocation
/// at 0x7f..., 96 bytes past its end", "out-of-bounds access: 8 bytes before
/// the start of ...", or "use of a freed device allocation (4000 bytes at
/// 0x..., freed by cudaFree): byte offset 12". The type of the elements is
/// unknown, so offsets are in bytes.
///
/// Meant for the SIGSEGV handler: it does not allocate, throw or format with
/// stdio, and it waits for the registry lock only a bounded time (at most
/// about 0.1 s; it returns false if the lock stays busy). The faulting thread
/// runs kernel code and never holds that lock.
bool describe_fault_address(const void* address, char* buffer, std::size_t size);

/// @brief The largest dynamic shared memory a launch may ask for, in bytes:
/// 48 KiB, or the largest cudaFuncAttributeMaxDynamicSharedMemorySize that
/// any cudaFuncSetAttribute call has set since the last cudaDeviceReset.
///
/// An approximation: CUDA keeps the attribute per kernel, but a translated
/// launch does not carry the kernel's address, so the emulator cannot tell
/// which kernel an attribute was set for. A launch over 48 KiB is accepted
/// once any kernel has opted in to as much; launch validation uses this.
std::size_t dynamic_shared_limit();

/// @brief The system's page size, asked of the system (4 KiB on x86-64, 16 or
/// 64 KiB on some ARM kernels), never assumed.
std::size_t page_size();

/// @brief The size of a mapping in which `bytes` end right before a trailing
/// guard page: whole pages, the guard included.
std::size_t guarded_mapping_size(std::size_t bytes);

/// @brief Maps `mapped` bytes (a guarded_mapping_size()) read-write, with the
/// last page inaccessible, so that an access just past the bytes before it
/// faults (the shared-memory guards of block.cpp and static_shared.cpp).
/// Returns the mapping's base; throws std::bad_alloc when it cannot map.
char* map_with_trailing_guard(std::size_t mapped);

}  // namespace course_emu::detail
