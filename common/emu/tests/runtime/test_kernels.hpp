// Host wrappers around the kernels the emulator's own tests launch. The
// kernels live in test_kernels.cu, which goes through the translator like a
// student's file.
#pragma once

#include <cuda_runtime.h>

namespace emu_test {

/// Each thread of a grid x block launch writes its flat global id to
/// out[flat id] and its (thread, block) coordinates to the coordinate arrays.
void launch_record_ids(dim3 grid, dim3 block, unsigned* out, uint3* thread_ids, uint3* block_ids);

/// Launches an empty kernel with the given configuration (for validation tests).
void launch_empty(dim3 grid, dim3 block, size_t dynamic_shared_bytes = 0);

/// Thread `fault_thread` of block `fault_block` calls __trap(); returns the line of that call.
int launch_trap(unsigned fault_block, unsigned fault_thread);

/// One block of `threads` threads copies `threads` float4 from `in + offset`
/// How vector_copy reads its float4: the whole struct (`*p`), member by
/// member (`p->x`, ...), or through __ldg.
enum class VectorLoad { whole, members, ldg };

/// One block of `threads` threads copies `threads` float4 from `in + offset`
/// to `out` through float4 pointers, reading them as `load` says; returns
/// the line of the load, which a GPU (and the emulator) stops at when
/// `in + offset` is not 16-byte aligned.
int launch_vector_copy(const float* in, float* out, int offset, unsigned threads, VectorLoad load);

/// One block of 32 threads stores float4s to static and dynamic shared
/// memory and writes them back reversed: out[4 * t + 3] = 31 - t.
void launch_shared_vector_round_trip(float* out);

/// One block of `threads` threads; each appends its threadIdx.x to order[*count] (no atomics:
/// the threads of one block run on one worker, one after another, in the schedule's order).
void launch_record_order(unsigned threads, unsigned* order, unsigned* count);

/// A templated kernel with a struct parameter and a multi-line configuration: out[i] = p.scale * i + p.offset.
void launch_template_kernel(float* out, int n, float scale, float offset);

/// Each thread uses its own `per_thread` floats of the block's dynamic shared memory:
/// out[2 * id] = 1 if the memory held the poison pattern before the thread wrote it,
/// out[2 * id + 1] = the last value it wrote (block * 1000 + thread * per_thread + per_thread - 1).
void launch_dynamic_shared(float* out, unsigned blocks, unsigned threads, int per_thread);

}  // namespace emu_test
