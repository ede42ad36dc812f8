/// @file qualifiers.hpp
/// @brief CUDA's declaration specifiers, mapped for host compilation.
#pragma once

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline __attribute__((always_inline))
#define __restrict__ __restrict
#define __constant__
#define __managed__
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(...)
#define __grid_constant__

// Shared memory belongs to a block. A worker thread of the emulator runs one
// block at a time, and all of that block's CUDA threads run on it, so storage
// local to the worker thread is exactly block-shared storage.
#define __shared__ static thread_local

#define __CUDACC_EMULATOR__ 1
