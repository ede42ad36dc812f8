// Internal: what the stream machinery (streams.cpp) offers the files above
// it (device_api.cpp). The runtime API functions of streams, events,
// asynchronous copies and synchronisation live in streams.cpp.
#pragma once

namespace course_emu::detail {

// streams.cpp: runs every queued operation (cudaFree and cudaFreeHost
// synchronise the device first, as on a GPU).
void synchronize_streams();
// streams.cpp: forgets every queued operation and the race detector's history (cudaDeviceReset).
void reset_streams();

}  // namespace course_emu::detail
