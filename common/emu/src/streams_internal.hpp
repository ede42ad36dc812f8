// Internal: what the stream machinery (streams.cpp) and the rest of the
// runtime need from each other. The runtime API functions of streams,
// events, asynchronous copies and synchronisation live in streams.cpp.
#pragma once

#include <course_emu/launch.hpp>

#include <cstddef>

namespace course_emu::detail {

// launch.cpp: validates a launch like a GPU (sticky fault, configuration,
// dynamic shared memory), recording the error; true when it may run.
bool launch_accepted(const LaunchInfo& info);

// device.cpp: whether [p, p + bytes) lies inside one cudaMallocHost/cudaHostAlloc allocation.
bool is_pinned_range(const void* p, std::size_t bytes);

// device.cpp: validates a copy as a GPU would and says which sides are device memory.
cudaError_t validate_copy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind, bool& dst_device,
                          bool& src_device);
// device.cpp: copies (validated already), telling the analysis mode about device bytes written.
void perform_copy(void* dst, const void* src, std::size_t bytes, bool dst_device);
// device.cpp: validates and performs a memset of device memory.
cudaError_t validate_memset(void* ptr, std::size_t bytes);
void perform_memset(void* ptr, int value, std::size_t bytes);

// streams.cpp: runs every queued operation (cudaFree and cudaFreeHost
// synchronise the device first, as on a GPU).
void synchronize_streams();
// streams.cpp: forgets every queued operation and the race detector's history (cudaDeviceReset).
void reset_streams();

}  // namespace course_emu::detail
