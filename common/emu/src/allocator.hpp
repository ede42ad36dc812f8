// Internal: device memory (allocator.cpp), the one owner of the registry of
// device, managed and pinned allocations, for the runtime API (device_api.cpp),
// the streams (streams.cpp), shared memory's guards and the fault handler.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace course_emu::detail {

enum class AllocationKind : unsigned char { device, managed };

/// Maps a guarded allocation of `bytes` (> 0) and registers it: cudaMalloc's
/// and cudaMallocManaged's memory.
cudaError_t allocate_guarded(void** ptr, std::size_t bytes, AllocationKind kind);

/// Frees a device allocation: refuses a pointer it did not hand out (never
/// allocated, interior, or freed already) as a GPU refuses it; otherwise
/// makes the whole region inaccessible and puts it in quarantine.
cudaError_t free_guarded(void* p);

/// Registers a cudaMallocHost/cudaHostAlloc allocation (non-const: the memory is
/// still unwritten, and GCC takes a const pointer argument for a read of it).
void add_pinned(void* p, std::size_t bytes);

/// Unregisters and frees a pinned allocation; refuses a pointer it does not know.
cudaError_t free_pinned(void* p);

/// Whether [p, p + bytes) lies inside one cudaMallocHost/cudaHostAlloc allocation.
bool is_pinned_range(const void* p, std::size_t bytes);

/// Validates a copy as a GPU would and says which sides are device memory.
cudaError_t validate_copy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind, bool& dst_device,
                          bool& src_device);
/// Copies (validated already), telling the analysis mode about device bytes written.
void perform_copy(void* dst, const void* src, std::size_t bytes, bool dst_device);
/// Validates and performs a memset of device memory.
cudaError_t validate_memset(void* ptr, std::size_t bytes);
void perform_memset(void* ptr, int value, std::size_t bytes);

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

/// @brief The system's page size, asked of the system (4 KiB on x86-64, 16 or
/// 64 KiB on some ARM kernels), never assumed. The emulator's only one.
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
