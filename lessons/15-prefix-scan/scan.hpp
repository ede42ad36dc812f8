/// @file scan.hpp
/// @brief Lesson 15 contract: exclusive prefix sums (scans), from a warp of
/// 32 values up to a device-wide scan of any length in one pass.
///
/// You implement these functions in `starter/15-prefix-scan/scan.cu`. The
/// tests call them with device pointers and compare with a CPU scan. See the
/// lesson text, `lessons/15-prefix-scan/README.md`.
///
/// Every function computes an *exclusive* scan: `out[i]` is the sum of the
/// inputs before `i`, so `out[0] = 0` and `in[i]` itself is not included. The
/// stages differ in how far a scan reaches:
/// - launch_warp_scan(): each segment of 32 consecutive elements on its own;
/// - launch_block_scan(): each segment of kBlockSegment elements on its own;
/// - the device-wide scans: the whole array.
///
/// Common to every function:
/// - `n = 0` is valid: nothing is launched and the pointers may be null.
/// - `in` and `out` do not overlap.
/// - int sums wrap around on overflow (two's complement, as the GPU adds);
///   the tests keep them in range.
/// - float sums are compared within the bound of the lesson text, "How
///   exact is a float scan?": any order of additions a parallel scan uses is
///   accepted, a lost or doubled element is not.
/// - Each function checks its launches and returns without synchronising.
#pragma once

#include <cstddef>

namespace lesson15 {

/// @brief The length of the segments launch_warp_scan() scans: a warp's 32 lanes.
inline constexpr unsigned kWarpSegment = 32;

/// @brief The length of the segments launch_block_scan() scans: one block's
/// shared-memory tile (512 threads, two elements each).
inline constexpr unsigned kBlockSegment = 1024;

/// @brief The smallest tile (elements per block) a device-wide scan may use:
/// scan_workspace_bytes() gives 16 bytes per tile of this size, plus a
/// 256-byte header for a counter.
inline constexpr std::size_t kMinTileItems = 256;

/// @brief The bytes of workspace the device-wide scans need for `n`
/// elements: a 256-byte header (the tile counter, and room to align) and 16
/// bytes per kMinTileItems elements (room for a status word and more per
/// tile, or a tile sum). The caller allocates it with cudaMalloc; its
/// contents on entry are anything (the tests fill it with garbage).
inline constexpr std::size_t scan_workspace_bytes(std::size_t n) {
    return 256 + (n + kMinTileItems - 1) / kMinTileItems * 16;
}

/// @brief Stage 1, the warp: `out[i]` = sum of `in[j]` for `j` from the start
/// of i's segment of kWarpSegment elements (`i / 32 * 32`) up to `i - 1`.
///
/// One thread per element, and a warp per segment that scans with
/// `__shfl_up_sync` (log2(32) = 5 steps), no shared memory. The last segment
/// may be partial (n not a multiple of 32): its lanes past the end take part
/// with 0 and write nothing.
///
/// @param in  device pointer to n ints (may be null when n = 0).
/// @param out device pointer to n ints: the segment-wise exclusive scan.
/// @param n   number of elements, below 2^31.
void launch_warp_scan(const int* in, int* out, std::size_t n);

/// @brief Stage 2, the block: `out[i]` = sum of `in[j]` for `j` from the start
/// of i's segment of kBlockSegment elements (`i / 1024 * 1024`) up to `i - 1`.
///
/// One block per segment scans it in shared memory with the work-efficient
/// (Blelloch) scan: an up-sweep that builds partial sums in a tree, then a
/// down-sweep that turns them into prefixes, O(segment) additions in all. The
/// last segment may be partial: it is padded with 0 and only its n % 1024
/// elements are written.
///
/// @param in  device pointer to n ints (may be null when n = 0).
/// @param out device pointer to n ints: the segment-wise exclusive scan.
/// @param n   number of elements, below 2^31.
void launch_block_scan(const int* in, int* out, std::size_t n);

/// @brief Stage 3: the exclusive scan of the whole array by reduce-then-scan,
/// three kernels: (1) each block sums its tile into the workspace, (2) one
/// block scans those tile sums, (3) each block scans its tile again, starting
/// from its tile's scanned sum.
///
/// @param in        device pointer to n values (may be null when n = 0).
/// @param out       device pointer to n values: `out[i]` = in[0] + ... + in[i - 1], `out[0]` = 0.
/// @param n         number of elements, below 2^31.
/// @param workspace device pointer to scan_workspace_bytes(n) bytes of any content.
void exclusive_scan_reduce_then_scan(const int* in, int* out, std::size_t n, void* workspace);
/// @brief The same reduce-then-scan for floats: `out[i]` within the lesson's
/// rounding bound of the exact in[0] + ... + in[i - 1] (the order of the
/// additions is the algorithm's: serial within a thread, trees across lanes
/// and warps, one addition per tile for the carry).
///
/// @param in        device pointer to n floats (may be null when n = 0).
/// @param out       device pointer to n floats: the exclusive scan, `out[0]` = 0.
/// @param n         number of elements, below 2^31.
/// @param workspace device pointer to scan_workspace_bytes(n) bytes of any content.
void exclusive_scan_reduce_then_scan(const float* in, float* out, std::size_t n, void* workspace);

/// @brief Stage 4: the same scan in one pass, with decoupled look-back:
/// each block takes the next tile index from an atomic counter, publishes its
/// tile's sum (flag "aggregate"), looks back at the tiles before it until it
/// meets one whose inclusive prefix is published, adding their sums, then
/// publishes its own inclusive prefix (flag "prefix") and writes its tile.
/// Each element is read once and written once.
///
/// The tile index must come from the counter, not from blockIdx.x: a block
/// may only wait for blocks that have started, and CUDA promises no order in
/// which blocks start (on the emulator a spin that waits for a block that has
/// not started is reported as a deadlock).
///
/// @param in        device pointer to n values (may be null when n = 0).
/// @param out       device pointer to n values: `out[i]` = in[0] + ... + in[i - 1], `out[0]` = 0.
/// @param n         number of elements, below 2^31.
/// @param workspace device pointer to scan_workspace_bytes(n) bytes of any content:
///                  the launcher clears what it uses (cudaMemsetAsync) before its kernel.
void exclusive_scan_single_pass(const int* in, int* out, std::size_t n, void* workspace);
/// @brief The same single-pass scan for floats: `out[i]` within the lesson's
/// rounding bound of the exact in[0] + ... + in[i - 1]. A tile's status word
/// holds the float's bits.
///
/// @param in        device pointer to n floats (may be null when n = 0).
/// @param out       device pointer to n floats: the exclusive scan, `out[0]` = 0.
/// @param n         number of elements, below 2^31.
/// @param workspace device pointer to scan_workspace_bytes(n) bytes of any content:
///                  the launcher clears what it uses (cudaMemsetAsync) before its kernel.
void exclusive_scan_single_pass(const float* in, float* out, std::size_t n, void* workspace);

}  // namespace lesson15
