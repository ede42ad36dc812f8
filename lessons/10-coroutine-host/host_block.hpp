/// @file host_block.hpp
/// @brief Lesson 10 contract: a block of CUDA threads run on the host as
/// C++20 coroutines, one suspension per `__syncthreads()`, and the same tree
/// sum run on the device.
///
/// You implement these declarations in `starter/10-coroutine-host/host_block.cu`.
/// Everything here is host C++20 (the tests are plain C++ and write their
/// own coroutines of type BlockThread to test your runner); the only device
/// code of the lesson lives in the `.cu` file. See the lesson text,
/// `lessons/10-coroutine-host/README.md`.
///
/// The pieces and who owns what:
/// - A *thread* is one call of a coroutine function returning BlockThread.
///   The call allocates a coroutine frame (through promise_type's
///   `operator new`, which counts it) and returns at once, suspended before
///   the first statement of the body.
/// - BlockThread owns that frame: it is move-only, and its destructor
///   destroys the frame whether the body finished or not.
/// - `co_await block_barrier;` in the body stands where the device calls
///   `__syncthreads()`: the thread suspends, and the promise counts the
///   barrier.
/// - run_block_on_host() plays the block: round after round it resumes every
///   thread that is not finished, once, so that no thread starts the code
///   after barrier k before every thread has reached barrier k.
#pragma once

#include <coroutine>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace lesson10 {

/// @brief One emulated CUDA thread: the owner of a coroutine frame.
///
/// Returned by every coroutine function of the lesson (the tree sum's host
/// copy, and the tests' own coroutines). Move-only: exactly one BlockThread
/// owns a frame, a moved-from BlockThread owns none, and the owner's
/// destructor destroys the frame (also one suspended half-way, at a
/// barrier), so no frame outlives its owner.
class BlockThread {
public:
    /// @brief The promise: the coroutine machinery's view of a BlockThread
    /// coroutine. Its member functions are called by the compiler-generated
    /// code around the body, never by you.
    struct promise_type {
        /// Barriers this thread has passed: incremented by `co_await block_barrier`.
        unsigned barriers = 0;

        /// @brief Called once when the coroutine is created, before
        /// initial_suspend(): the BlockThread returned to the caller, owning
        /// this frame (std::coroutine_handle::from_promise).
        BlockThread get_return_object();

        /// @brief Suspends every thread before its first statement, so that
        /// creating the block's threads runs none of them: the runner decides
        /// when each starts.
        std::suspend_always initial_suspend() noexcept;

        /// @brief Suspends a finished thread at its end instead of freeing
        /// the frame: done() can still be asked, and the owner destroys the
        /// frame exactly once.
        std::suspend_always final_suspend() noexcept;

        /// @brief The body fell off its end (or executed `co_return;`).
        void return_void() noexcept;

        /// @brief An exception escaped the body: let it propagate out of the
        /// resume() that ran it (the frame is then suspended at its end).
        void unhandled_exception();

        /// @brief Allocates a coroutine frame of `size` bytes and counts it
        /// (live_coroutine_frames()).
        static void* operator new(std::size_t size);

        /// @brief Frees a frame allocated by operator new and uncounts it.
        static void operator delete(void* frame, std::size_t size) noexcept;
    };

    /// @brief Owns no frame (done() is true, resume() does nothing).
    BlockThread() noexcept = default;

    /// @brief Takes ownership of the frame of `handle` (from get_return_object).
    explicit BlockThread(std::coroutine_handle<promise_type> handle) noexcept;

    /// @brief Takes `other`'s frame; `other` then owns none.
    BlockThread(BlockThread&& other) noexcept;

    /// @brief Destroys this thread's frame, if any, then takes `other`'s.
    BlockThread& operator=(BlockThread&& other) noexcept;

    BlockThread(const BlockThread&) = delete;             ///< A frame has one owner.
    BlockThread& operator=(const BlockThread&) = delete;  ///< A frame has one owner.

    /// @brief Destroys the frame, if any, finished or not.
    ~BlockThread();

    /// @brief Runs the thread on to its next barrier or to its end.
    /// @return true if it stopped at a barrier (more to run), false if it
    ///         has finished. On a finished thread (or one owning no frame) it
    ///         runs nothing and returns false: resuming a coroutine suspended
    ///         at its end would be undefined behaviour.
    /// @throws whatever the body threw.
    bool resume();

    /// @brief True when the body has finished (or no frame is owned).
    bool done() const noexcept;

    /// @brief How many barriers the thread has passed so far (0 when no frame is owned).
    unsigned barriers_passed() const noexcept;

private:
    std::coroutine_handle<promise_type> handle_{};
};

/// @brief The barrier awaitable: `co_await block_barrier;` suspends the
/// calling thread and counts the barrier in its promise.
struct BlockBarrier {
    /// @brief Never ready: a barrier always suspends (returns false).
    bool await_ready() const noexcept;
    /// @brief Counts the barrier in `thread`'s promise; the thread stays suspended.
    void await_suspend(std::coroutine_handle<BlockThread::promise_type> thread) const noexcept;
    /// @brief Nothing to hand back: a barrier has no result.
    void await_resume() const noexcept;
};

/// @brief The one barrier object the coroutines await.
inline constexpr BlockBarrier block_barrier{};

/// @brief What a block whose threads disagree on the barriers looked like
/// at the first round where they disagreed.
struct BarrierMismatch {
    unsigned round = 0;                  ///< 1-based round after which the threads disagreed.
    std::vector<unsigned> finished;      ///< Threads (indices) that had finished by then.
    std::vector<unsigned> waiting;       ///< Threads still suspended at a barrier.
    std::string message;                 ///< A readable account: round, threads, barrier counts.
};

/// @brief The outcome of run_block_on_host().
struct HostBlockRun {
    unsigned rounds = 0;                     ///< Rounds run: one more than the most barriers a thread passed.
    std::optional<BarrierMismatch> mismatch; ///< Empty when every round ended with all threads at one barrier (or all finished).
};

/// @brief Runs a block of threads to the end, round by round.
///
/// Each round resumes every thread that has not finished, once, in index
/// order; the loop ends when *every* thread has finished. After each round
/// the threads must agree: all finished, or all suspended having passed the
/// same number of barriers. The first round where they do not (some
/// finished while others wait at a barrier, the device's deadlock or
/// undefined behaviour) is reported in the result, and the run still goes on
/// until every thread has finished, so that none is left half-way.
///
/// @param threads the block, thread i at index i, all freshly created
///                (suspended before their first statement). May be empty
///                (0 rounds). The frames stay owned by the vector.
/// @return the number of rounds and the first barrier mismatch, if any.
/// @throws whatever a thread's body throws (the frames are still owned by `threads`).
HostBlockRun run_block_on_host(std::vector<BlockThread>& threads);

/// @brief Coroutine frames allocated through promise_type and not yet freed.
std::size_t live_coroutine_frames();

/// @brief The tree sum's host copy: thread `tid` of a block of `threads`,
/// as a coroutine. The body is the very one the device runs.
///
/// Thread tid adds values[tid], values[tid + threads], ... into
/// partial[tid]; then the block adds partial[0, threads) by a tree (pairs
/// (i, i + half), half from the power of two at or above `threads` halving
/// to 1), a barrier after the first stage and after every level; at the
/// end thread 0 writes partial[0] to *sum. Every thread passes
/// 1 + log2(bit_ceil(threads)) barriers.
///
/// @param partial host array of `threads` floats: the block's "shared memory".
/// @param values  host array of n floats (may be null when n = 0).
/// @param n       number of values; 0 gives a sum of 0.
/// @param tid     this thread's index, 0 <= tid < threads.
/// @param threads the block size, 1 to 1024.
/// @param sum     where thread 0 writes the block's sum.
BlockThread block_tree_sum_on_host(float* partial, const float* values, std::size_t n, unsigned tid,
                                   unsigned threads, float* sum);

/// @brief The sum of values[0, n) by one block of `threads` coroutines:
/// block_tree_sum_on_host for every tid, run by run_block_on_host.
///
/// @param values  host array of n floats (may be null when n = 0).
/// @param n       number of values; 0 gives 0.
/// @param threads the block size, 1 to 1024.
/// @return the sum, the same float, bit for bit, that launch_block_sum() gives.
/// @throws std::invalid_argument for a block size outside 1..1024;
///         std::logic_error if the run reports a barrier mismatch.
float block_sum_on_host(const float* values, std::size_t n, unsigned threads);

/// @brief The same sum on the device: one block of `threads` threads runs
/// the tree sum's device copy, with `__syncthreads()` for every barrier.
///
/// @param values  device pointer to n floats (may be null when n = 0).
/// @param n       number of values; 0 gives 0.
/// @param threads the block size, 1 to 1024.
/// @param sum     device pointer to one float, set to the sum.
/// @throws std::invalid_argument for a block size outside 1..1024. Checks
///         the launch and returns without synchronising.
void launch_block_sum(const float* values, std::size_t n, unsigned threads, float* sum);

}  // namespace lesson10
