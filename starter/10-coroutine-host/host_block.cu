// Lesson 10: a block of CUDA threads on the host, as C++20 coroutines.
//
// Goal: make `./course grade 10` pass. Read lessons/10-coroutine-host/README.md
// first; everything you fill in is declared and documented in host_block.hpp.
// Stuck? `./course hint 10` shows the hints one by one.
//
// Given: the tree sum's body (BLOCK_TREE_SUM_BODY, at the end), written once
// and expanded twice, once with __syncthreads() for the device and once with
// `co_await block_barrier` for the host. You write the machinery that makes
// the host copy run: the coroutine type, the barrier, the runner, and the
// device kernel's launch.
#include <host_block.hpp>

#include <course/cuda_check.hpp>

#include <atomic>
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

std::atomic<std::size_t> g_live_frames{0};

}  // namespace

std::size_t live_coroutine_frames() { return g_live_frames.load(); }

void* BlockThread::promise_type::operator new(std::size_t size) {
    // TODO: count the frame in g_live_frames.
    return ::operator new(size);
}

void BlockThread::promise_type::operator delete(void* frame, std::size_t size) noexcept {
    // TODO: uncount the frame.
    ::operator delete(frame, size);
}

BlockThread BlockThread::promise_type::get_return_object() {
    // TODO: return a BlockThread that owns this frame
    // (std::coroutine_handle<promise_type>::from_promise(*this)).
    return BlockThread{};
}

// The contract fixes the answer: std::suspend_always. The README says why.
std::suspend_always BlockThread::promise_type::initial_suspend() noexcept { return {}; }

std::suspend_always BlockThread::promise_type::final_suspend() noexcept { return {}; }

void BlockThread::promise_type::return_void() noexcept {}

void BlockThread::promise_type::unhandled_exception() {
    // TODO: let the exception leave the resume() that ran the body.
}

BlockThread::BlockThread(std::coroutine_handle<promise_type> handle) noexcept {
    // TODO: take ownership of the frame.
    (void)handle;
}

BlockThread::BlockThread(BlockThread&& other) noexcept {
    // TODO: take other's frame; other must own none afterwards.
    (void)other;
}

BlockThread& BlockThread::operator=(BlockThread&& other) noexcept {
    // TODO: destroy the frame this owns, if any, then take other's.
    (void)other;
    return *this;
}

BlockThread::~BlockThread() {
    // TODO: destroy the frame, if any, finished or not.
}

bool BlockThread::resume() {
    // TODO: run the thread to its next barrier or its end; never resume a
    // finished coroutine. Return whether it stopped at a barrier.
    return false;
}

bool BlockThread::done() const noexcept {
    // TODO: no frame, or the coroutine has finished.
    return true;
}

unsigned BlockThread::barriers_passed() const noexcept {
    // TODO: the count in the promise (0 without a frame).
    return 0;
}

bool BlockBarrier::await_ready() const noexcept {
    // TODO: may a barrier ever be passed without suspending?
    return true;
}

void BlockBarrier::await_suspend(std::coroutine_handle<BlockThread::promise_type> thread) const noexcept {
    // TODO: count the barrier in the suspending thread's promise.
    (void)thread;
}

void BlockBarrier::await_resume() const noexcept {}

// ---------------------------------------------------------------- the host block runner

HostBlockRun run_block_on_host(std::vector<BlockThread>& threads) {
    HostBlockRun run;
    // TODO: round after round, resume every unfinished thread once, until
    // every thread has finished; count the rounds. After each round, check
    // that the threads agree (all finished, or all waiting with the same
    // barriers_passed()); record the first round where they do not in
    // run.mismatch (round, finished, waiting, message) and carry on.
    (void)threads;
    return run;
}

// ---------------------------------------------------------------- the tree sum, written once

namespace {

constexpr unsigned kMaxThreads = 1024;

// Given: the power of two at or above n (n >= 1): the tree's width.
__host__ __device__ constexpr unsigned tree_width(unsigned n) {
    unsigned width = 1;
    while (width < n) width *= 2;
    return width;
}

// Given: the body of one thread of the tree sum, with its barrier as the
// parameter BLOCK_SYNC (see the README: why a macro, and not one
// __host__ __device__ function).
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
    // TODO: the block's partial sums in dynamic shared memory
    // (extern __shared__), then the device copy of the body for this thread.
}

namespace {

void require_block_size(unsigned threads) {
    if (threads < 1 || threads > kMaxThreads) {
        throw std::invalid_argument("block size " + std::to_string(threads) + " is outside 1..1024");
    }
}

}  // namespace

// Given: the host copy. It is a coroutine because its body contains co_await.
BlockThread block_tree_sum_on_host(float* partial, const float* values, std::size_t n, unsigned tid,
                                   unsigned threads, float* sum) {
    BLOCK_TREE_SUM_BODY(co_await block_barrier);
}

float block_sum_on_host(const float* values, std::size_t n, unsigned threads) {
    require_block_size(threads);
    std::vector<float> partial(threads, std::numeric_limits<float>::quiet_NaN());
    float sum = std::numeric_limits<float>::quiet_NaN();
    // TODO: one block_tree_sum_on_host coroutine per tid in a vector, run it
    // with run_block_on_host, throw std::logic_error on a mismatch.
    (void)values;
    (void)n;
    return sum;
}

void launch_block_sum(const float* values, std::size_t n, unsigned threads, float* sum) {
    require_block_size(threads);
    // TODO: one block of `threads` threads, with threads floats of dynamic
    // shared memory; then check the launch.
    (void)values;
    (void)n;
    (void)sum;
}

}  // namespace lesson10
