// Kernels of the Nsight Compute comparison (ncu_compare.sh) that no lesson
// solution has as a kernel of its own. Each launcher takes device pointers
// and launches once, without synchronising.
#pragma once

namespace analysis_compare {

/// The classic shared-memory tree with interleaved addressing: at level s,
/// thread t adds slot 2 s t + s into slot 2 s t (a stride of 2 s words across
/// the warp: 2-, 4-, ... 32-way bank conflicts). 256 threads per block; block
/// b sums in[256 b, 256 b + 256) into out[b].
void tree_interleaved(const float* in, float* out, int blocks);

/// The same tree with sequential addressing (the lesson 04 reference's
/// tree): at level s, thread t < s adds slot t + s into slot t. Conflict-free.
void tree_sequential(const float* in, float* out, int blocks);

/// SAXPY with one float4 (16-byte loads and stores) per thread: y = a x + y
/// over 4 `quads` floats.
void saxpy_float4(int quads, float a, const float* x, float* y);

}  // namespace analysis_compare
