// Lesson 10 reference solution: one block-synchronous tree sum, run on the
// device with __syncthreads() and on the host as a block of C++20
// coroutines that suspend where the device waits.
//
// Three parts:
// 1. the coroutine type BlockThread (its promise, the handle it owns) and
//    the barrier awaitable, with a count of live frames;
// 2. the host block runner: rounds, each resuming every unfinished thread
//    once, and a check after each round that the threads agree;
// 3. the tree sum, written once as a macro body with its barrier as a
//    parameter, expanded into a __device__ function and a host coroutine.
#include <host_block.hpp>

#include <course/cuda_check.hpp>

#include <atomic>
#include <cmath>
#include <cstddef>
#include <limits>
#include <new>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>
#include <cuda_runtime.h>

namespace lesson10 {

// ---------------------------------------------------------------- the coroutine type

namespace {

// Frames allocated and not yet freed. Atomic, so that tests or programs that
// run blocks on several host threads still count right.
std::atomic<std::size_t> g_live_frames{0};

}  // namespace

std::size_t live_coroutine_frames() { return g_live_frames.load(); }

// The promise's operator new is what the compiler calls to allocate the
// frame (parameters, locals that live across a suspension, the promise,
// the resume point). Counting here counts frames, and nothing else.
void* BlockThread::promise_type::operator new(std::size_t size) {
    void* frame = ::operator new(size);
    ++g_live_frames;
    return frame;
}

void BlockThread::promise_type::operator delete(void* frame, std::size_t size) noexcept {
    --g_live_frames;
    ::operator delete(frame, size);
}

BlockThread BlockThread::promise_type::get_return_object() {
    return BlockThread{std::coroutine_handle<promise_type>::from_promise(*this)};
}

// Lazy start: creating thread 5 must not run it, or it would run its first
// stage before threads 6, 7, ... even exist; the runner starts them all in
// round 1.
std::suspend_always BlockThread::promise_type::initial_suspend() noexcept { return {}; }

// Stay suspended at the end: with suspend_never the frame would free itself
// as the body ends, and the owner's destroy() would free it a second time
// (and done() would read freed memory).
std::suspend_always BlockThread::promise_type::final_suspend() noexcept { return {}; }

void BlockThread::promise_type::return_void() noexcept {}

// Rethrowing from here makes the exception leave the resume() that ran the
// body; the coroutine is then at its final suspend point, and its owner
// still destroys it.
void BlockThread::promise_type::unhandled_exception() { throw; }

BlockThread::BlockThread(std::coroutine_handle<promise_type> handle) noexcept : handle_(handle) {}

BlockThread::BlockThread(BlockThread&& other) noexcept : handle_(std::exchange(other.handle_, {})) {}

BlockThread& BlockThread::operator=(BlockThread&& other) noexcept {
    if (this != &other) {
        if (handle_) handle_.destroy();
        handle_ = std::exchange(other.handle_, {});
    }
    return *this;
}

// Destroying a coroutine suspended half-way is allowed: its live locals are
// destroyed, then the frame is freed through promise_type::operator delete.
BlockThread::~BlockThread() {
    if (handle_) handle_.destroy();
}

bool BlockThread::resume() {
    if (!handle_ || handle_.done()) return false;  // resuming a finished coroutine is undefined
    handle_.resume();
    return !handle_.done();
}

bool BlockThread::done() const noexcept { return !handle_ || handle_.done(); }

unsigned BlockThread::barriers_passed() const noexcept { return handle_ ? handle_.promise().barriers : 0; }

bool BlockBarrier::await_ready() const noexcept { return false; }

// The handle is the suspending thread's own: the barrier counts in its
// promise, so the runner can compare threads after each round.
void BlockBarrier::await_suspend(std::coroutine_handle<BlockThread::promise_type> thread) const noexcept {
    ++thread.promise().barriers;
}

void BlockBarrier::await_resume() const noexcept {}

// ---------------------------------------------------------------- the host block runner

namespace {

// "0-3, 7" for {0, 1, 2, 3, 7}: thread lists stay short in messages.
std::string ranges(const std::vector<unsigned>& ids) {
    std::ostringstream out;
    for (std::size_t i = 0; i < ids.size();) {
        std::size_t j = i;
        while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
        out << (i > 0 ? ", " : "") << ids[i];
        if (j > i) out << "-" << ids[j];
        i = j + 1;
    }
    return out.str();
}

// After round `round`: all finished, or all waiting having passed the same
// number of barriers. Anything else is a block the device cannot run.
std::optional<BarrierMismatch> check_round(const std::vector<BlockThread>& threads, unsigned round) {
    BarrierMismatch m;
    m.round = round;
    bool counts_differ = false;
    for (unsigned i = 0; i < threads.size(); ++i) {
        if (threads[i].done()) {
            m.finished.push_back(i);
        } else {
            if (!m.waiting.empty() && threads[i].barriers_passed() != threads[m.waiting.front()].barriers_passed()) {
                counts_differ = true;
            }
            m.waiting.push_back(i);
        }
    }
    if (m.waiting.empty() || (m.finished.empty() && !counts_differ)) return std::nullopt;
    std::ostringstream out;
    out << "barrier mismatch after round " << round << ": ";
    if (!m.finished.empty()) {
        out << "thread(s) " << ranges(m.finished) << " finished while thread(s) " << ranges(m.waiting)
            << " wait at a barrier (thread " << m.waiting.front() << " has passed "
            << threads[m.waiting.front()].barriers_passed() << ")";
    } else {
        out << "the waiting threads have passed different numbers of barriers";
    }
    out << ". On a GPU this block would hang or compute garbage: every thread must reach every __syncthreads().";
    m.message = out.str();
    return m;
}

}  // namespace

HostBlockRun run_block_on_host(std::vector<BlockThread>& threads) {
    HostBlockRun run;
    bool any_live = !threads.empty();
    while (any_live) {
        ++run.rounds;
        any_live = false;
        // One round: every unfinished thread runs up to its next barrier (or
        // its end). No thread is resumed twice in a round, so none can pass
        // barrier k + 1 before all have reached barrier k.
        for (BlockThread& thread : threads) {
            if (thread.done()) continue;
            // The loop goes on while ANY thread is unfinished: keeping only
            // the last thread's answer would stop early whenever the last
            // thread ends first.
            if (thread.resume()) any_live = true;
        }
        if (!run.mismatch) run.mismatch = check_round(threads, run.rounds);
    }
    return run;
}

// ---------------------------------------------------------------- the tree sum, written once

namespace {

constexpr unsigned kMaxThreads = 1024;

// The power of two at or above n (n >= 1): the tree's width.
__host__ __device__ constexpr unsigned tree_width(unsigned n) {
    unsigned width = 1;
    while (width < n) width *= 2;
    return width;
}

// The body of one thread of the tree sum. BLOCK_SYNC is the barrier: it is
// __syncthreads() in the device copy and `co_await block_barrier` in the
// host copy. A function containing co_await is a coroutine, and a __device__
// function may not be one, so the body cannot be a single
// __host__ __device__ function when the emulator compiles host and device
// in one pass; a macro gives two functions from one text.
//
// Stage 1: thread tid adds values[tid], values[tid + threads], ... Stage 2:
// a tree over partial[0, threads): level by level, pairs (i, i + half), a
// partner past the block's end counting as 0. Each level reads what other
// threads wrote at the level before: the barrier between levels is what
// makes it right.
#define BLOCK_TREE_SUM_BODY(BLOCK_SYNC)                                           \
    float own = 0.0f;                                                             \
    for (std::size_t i = tid; i < n; i += threads) own += values[i];              \
    partial[tid] = own;                                                           \
    BLOCK_SYNC;                                                                   \
    for (unsigned half = tree_width(threads) / 2; half > 0; half /= 2) {          \
        if (tid < half && tid + half < threads) partial[tid] += partial[tid + half]; \
        BLOCK_SYNC;                                                               \
    }                                                                             \
    if (tid == 0) *sum = partial[0];

}  // namespace

__device__ void block_tree_sum_on_device(float* partial, const float* values, std::size_t n, unsigned tid,
                                         unsigned threads, float* sum) {
    BLOCK_TREE_SUM_BODY(__syncthreads());
}

__global__ void block_sum_kernel(const float* values, std::size_t n, float* sum) {
    extern __shared__ float partial[];
    block_tree_sum_on_device(partial, values, n, threadIdx.x, blockDim.x, sum);
}

namespace {

void require_block_size(unsigned threads) {
    if (threads < 1 || threads > kMaxThreads) {
        throw std::invalid_argument("block size " + std::to_string(threads) + " is outside 1..1024");
    }
}

}  // namespace

BlockThread block_tree_sum_on_host(float* partial, const float* values, std::size_t n, unsigned tid,
                                   unsigned threads, float* sum) {
    BLOCK_TREE_SUM_BODY(co_await block_barrier);
}

float block_sum_on_host(const float* values, std::size_t n, unsigned threads) {
    require_block_size(threads);
    // The block's "shared memory", NaN like the emulator's poisoned shared
    // memory, so that a slot read before it is written spoils the sum.
    std::vector<float> partial(threads, std::numeric_limits<float>::quiet_NaN());
    float sum = std::numeric_limits<float>::quiet_NaN();
    std::vector<BlockThread> block;
    block.reserve(threads);
    for (unsigned tid = 0; tid < threads; ++tid) {
        block.push_back(block_tree_sum_on_host(partial.data(), values, n, tid, threads, &sum));
    }
    const HostBlockRun run = run_block_on_host(block);
    if (run.mismatch) throw std::logic_error(run.mismatch->message);
    return sum;
}

void launch_block_sum(const float* values, std::size_t n, unsigned threads, float* sum) {
    require_block_size(threads);
    block_sum_kernel<<<1, threads, threads * sizeof(float)>>>(values, n, sum);
    COURSE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace lesson10
