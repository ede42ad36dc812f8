// Host wrappers for the emulator's tests of cuda_pipeline.h (asynchronous
// copies). The kernels live in pipeline_kernels.cu, which goes through the
// translator like a student's file (and compiles with nvcc: valid CUDA).
#pragma once

#include <cuda_runtime.h>

namespace emu_pipeline_test {

/// Threads of the one block of the staged-copy kernel, and floats per tile (one float4 per thread).
inline constexpr int kThreads = 64;
inline constexpr int kTileFloats = kThreads * 4;

/// out[i] = 2 * in[i] for `tiles` tiles of kTileFloats floats, each tile
/// copied into one of `stages` (2 to 4) shared buffers by
/// __pipeline_memcpy_async, stages - 1 tiles ahead, and read after
/// __pipeline_wait_prior(stages - 2 + waits_short) and a barrier.
/// waits_short = 0 is right; 1 waits for one batch too few, so the tile read
/// has not landed yet. Thread t writes the floats thread (t + neighbour) %
/// kThreads copied: another thread's (1), whose copy only the barrier makes
/// visible, or its own (0).
void launch_staged_copy(const float* in, float* out, int tiles, int stages, int waits_short, int neighbour);

/// One thread copies 16 bytes of `in` into shared memory with zfill = `zfill`
/// bytes, waits, and writes the 16 bytes it finds there to `out`.
void launch_zero_filled_copy(const unsigned char* in, unsigned char* out, int zfill);

/// One thread copies 16 bytes from in + 4 bytes (misaligned for a 16-byte
/// copy); returns the line of the copy.
int launch_misaligned_copy(const float* in);

/// `blocks` blocks of one thread each issue and commit a copy of in[0..3]
/// into a shared array and exit without waiting for it.
void launch_copy_left_pending(const float* in, int blocks);

/// `blocks` blocks of one thread each wait for all their copies (they issued
/// none) and write the 4 floats of the same shared array, fresh in their
/// block, to out[4 * block ...]: the poison, not a copy an earlier block left pending.
void launch_wait_without_copies(float* out, int blocks);

}  // namespace emu_pipeline_test
