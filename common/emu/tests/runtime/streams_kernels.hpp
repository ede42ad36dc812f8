// Host wrappers for the stream tests' kernels (streams_kernels.cu): each
// launches into the given stream and returns at once, like any launch.
#pragma once

#include <cuda_runtime.h>

namespace emu_streams_test {

/// out[i] = in[i] + 1 for i < n, in `stream` (one block of 64 threads, a grid-stride loop).
void launch_add_one(const int* in, int* out, int n, cudaStream_t stream);

/// The line of the launch in launch_add_one (for the race report's test).
int add_one_launch_line();

}  // namespace emu_streams_test
