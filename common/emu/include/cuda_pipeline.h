/// @file cuda_pipeline.h
/// @brief Emulator stand-in for CUDA's `cuda_pipeline.h` primitives: the
/// asynchronous copies from global to shared memory of sm_80 and later
/// (`cp.async`), grouped into batches a thread commits and later waits for.
///
/// - `__pipeline_memcpy_async(dst, src, size_and_align, zfill = 0)` issues
///   a copy of `size_and_align` bytes (4, 8 or 16; both addresses multiples
///   of it), of which the last `zfill` are zeros instead of source bytes.
/// - `__pipeline_commit()` closes the thread's current batch of copies
///   (possibly empty).
/// - `__pipeline_wait_prior(n)` returns once all but the `n` most recently
///   committed batches of this thread have landed in shared memory.
///
/// What the emulator does: the source bytes are read when the copy is
/// issued (a bad address faults on the issuing line), and the shared memory
/// is written only when the issuing thread waits for the copy's batch. So a
/// kernel that reads a stage before `__pipeline_wait_prior` covers it (or
/// before the `__syncthreads()` that follows every thread's wait) reads what
/// the stage held before, the block's 0xCD poison or an earlier tile, and
/// its result is wrong on every run, where a GPU would be wrong only when the
/// copy happens to be late. Copies still pending when a thread exits are
/// dropped, as the shared memory they target dies with the block.
///
/// Limits: the waits are per thread, as on a GPU; the emulator does not
/// check that `dst` is shared memory, nor model `__pipeline_arrive_on` or the
/// C++ `cuda::pipeline` API. Each worker runs one block at a time, which the
/// pending copies rely on (a cooperative launch, whose blocks are all live at
/// once, is not supported).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <unordered_map>
#include <vector>

namespace course_emu::pipeline_detail {

/// One issued copy: where it goes, and the bytes it will write there.
struct Copy {
    void* dst;
    std::size_t bytes;
    unsigned char data[16];  // the source bytes, then zeros
};

/// One emulated thread's copies: the open batch and the committed ones, oldest first.
struct ThreadCopies {
    std::vector<Copy> open;
    std::deque<std::vector<Copy>> committed;
};

/// The copies of the block running on this worker, per thread (its ThreadContext).
inline thread_local std::unordered_map<const ThreadContext*, ThreadCopies> t_copies;
/// Registered like a static `__shared__` variable, so the runtime poisons it
/// at the first call of every block: a poisoned value says a new block runs
/// and the copies of the last one (left pending at its exit) go.
inline thread_local unsigned long long t_block_mark = 0;
inline thread_local unsigned long long t_blocks_seen = 0;

// Not instrumented by the analysis mode: the mark is bookkeeping, not the
// kernel's shared memory traffic.
__attribute__((no_sanitize("thread"))) inline ThreadCopies& current_copies() {
    const ThreadContext* thread = &detail::current();
    ::course_emu::shared_declared(&t_block_mark, sizeof t_block_mark);
    constexpr unsigned long long kPoison = 0xCDCDCDCDCDCDCDCDull;
    if (t_block_mark == kPoison) {
        t_copies.clear();
        t_block_mark = ++t_blocks_seen;
    }
    return t_copies[thread];
}

inline void land(const std::vector<Copy>& batch) {
    // Written in the kernel's file (inlined), so the analysis mode records
    // the shared stores, made by the waiting thread at its wait.
    for (const Copy& c : batch) std::memcpy(c.dst, c.data, c.bytes);
}

}  // namespace course_emu::pipeline_detail

/// @brief Issues an asynchronous copy of `size_and_align` bytes (4, 8 or 16)
/// from global memory `src_global` to shared memory `dst_shared`, both
/// aligned to that size; the last `zfill` bytes are written as zeros and not
/// read from the source (`zfill == size_and_align` reads nothing).
inline void __pipeline_memcpy_async(void* dst_shared, const void* src_global, std::size_t size_and_align,
                                    std::size_t zfill = 0, const char* file = __builtin_FILE(),
                                    int line = __builtin_LINE()) {
    using namespace course_emu::pipeline_detail;
    if (size_and_align != 4 && size_and_align != 8 && size_and_align != 16) {
        ::course_emu::raise_fault(file, line, "__pipeline_memcpy_async: size_and_align must be 4, 8 or 16 bytes",
                                  cudaErrorInvalidValue);
    }
    if (zfill > size_and_align) {
        ::course_emu::raise_fault(file, line, "__pipeline_memcpy_async: zfill is larger than size_and_align",
                                  cudaErrorInvalidValue);
    }
    const std::size_t read = size_and_align - zfill;
    if (reinterpret_cast<std::uintptr_t>(dst_shared) % size_and_align != 0 ||
        (read > 0 && reinterpret_cast<std::uintptr_t>(src_global) % size_and_align != 0)) {
        ::course_emu::raise_fault(file, line,
                                  "__pipeline_memcpy_async: misaligned address (the shared and the global address "
                                  "must both be multiples of size_and_align)",
                                  cudaErrorMisalignedAddress);
    }
    Copy copy{dst_shared, size_and_align, {}};
    if (read > 0) std::memcpy(copy.data, src_global, read);
    current_copies().open.push_back(copy);
}

/// @brief Closes the calling thread's batch of copies issued since its last commit.
inline void __pipeline_commit() {
    course_emu::pipeline_detail::ThreadCopies& t = course_emu::pipeline_detail::current_copies();
    t.committed.push_back(std::move(t.open));
    t.open.clear();
}

/// @brief Waits until at most `prior` of the calling thread's committed
/// batches are still in flight: the older ones have landed in shared memory.
inline void __pipeline_wait_prior(std::size_t prior) {
    course_emu::pipeline_detail::ThreadCopies& t = course_emu::pipeline_detail::current_copies();
    while (t.committed.size() > prior) {
        course_emu::pipeline_detail::land(t.committed.front());
        t.committed.pop_front();
    }
}
