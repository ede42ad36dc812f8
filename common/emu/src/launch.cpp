// Running a grid: launch validation, the worker pool and the time budget.
// The threads of each block are run by the fiber scheduler in block.cpp; a
// cooperative launch (cooperative.cpp) passes its grid barrier in.
#include "launch_internal.hpp"

#include "block.hpp"
#include "device_internal.hpp"
#include "errors.hpp"
#include "grid.hpp"
#include "signals.hpp"

#include <course_emu/detail/analysis_hooks.hpp>
#include <course_emu/scheduling.hpp>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

namespace course_emu {
namespace detail {

// What runs now, for the report of a test that hangs (read by another thread
// only when the test has overrun its time and is about to end).
std::atomic<const LaunchInfo*> g_running_launch{nullptr};

namespace {

// How long a launch may run before it is stopped as hung.
std::atomic<long long> g_time_budget_ms = [] {
    const char* env = std::getenv("COURSE_EMU_TIMEOUT");
    const double seconds = env != nullptr ? std::strtod(env, nullptr) : 10.0;
    return static_cast<long long>((seconds > 0 ? seconds : 10.0) * 1000);
}();

std::atomic<unsigned> g_workers_override{0};  // set_workers(); 0: worker_count()

// Host worker threads that run blocks in parallel: COURSE_EMU_WORKERS, else
// one per hardware thread (unless set_workers() overrides it).
unsigned worker_count() {
    static const unsigned n = [] {
        if (const char* env = std::getenv("COURSE_EMU_WORKERS")) {
            const long v = std::strtol(env, nullptr, 10);
            if (v > 0) return static_cast<unsigned>(v);
        }
        return std::max(1u, std::thread::hardware_concurrency());
    }();
    return n;
}

std::chrono::milliseconds time_budget() { return std::chrono::milliseconds(g_time_budget_ms.load()); }

// Why a GPU would refuse this configuration, or nullptr when it is valid.
const char* configuration_problem(const LaunchInfo& info) {
    const cudaDeviceProp& p = device_properties();
    const dim3 g = info.grid;
    const dim3 b = info.block;
    if (g.x == 0 || g.y == 0 || g.z == 0) return "a grid dimension is 0";
    if (b.x == 0 || b.y == 0 || b.z == 0) return "a block dimension is 0";
    if (g.x > static_cast<unsigned>(p.maxGridSize[0]) || g.y > static_cast<unsigned>(p.maxGridSize[1]) ||
        g.z > static_cast<unsigned>(p.maxGridSize[2])) {
        return "the grid is larger than the device allows (x <= 2^31-1, y and z <= 65535)";
    }
    if (b.x > static_cast<unsigned>(p.maxThreadsDim[0]) || b.y > static_cast<unsigned>(p.maxThreadsDim[1]) ||
        b.z > static_cast<unsigned>(p.maxThreadsDim[2])) {
        return "a block dimension is larger than the device allows (x, y <= 1024, z <= 64)";
    }
    if (static_cast<unsigned long long>(b.x) * b.y * b.z > static_cast<unsigned long long>(p.maxThreadsPerBlock)) {
        return "more than 1024 threads per block";
    }
    return nullptr;
}

// One thread for the whole process that stops launches past their budget.
class Watchdog {
public:
    static Watchdog& instance() {
        static Watchdog* w = new Watchdog;  // never destroyed: its thread lives as long as the process
        return *w;
    }

    void arm(GridRun* run) {
        std::lock_guard lock(mutex_);
        run_ = run;
        deadline_ = std::chrono::steady_clock::now() + time_budget();
        changed_.notify_all();
    }

    void disarm() {
        std::lock_guard lock(mutex_);
        run_ = nullptr;
    }

private:
    Watchdog() : thread_([this] { watch(); }) { thread_.detach(); }

    void watch() {
        std::unique_lock lock(mutex_);
        for (;;) {
            if (run_ == nullptr) {
                changed_.wait(lock);
                continue;
            }
            if (changed_.wait_until(lock, deadline_) != std::cv_status::timeout || run_ == nullptr) continue;
            if (std::chrono::steady_clock::now() < deadline_) continue;
            GridRun* run = std::exchange(run_, nullptr);
            run->over_time.store(true);
            std::lock_guard workers_lock(run->workers_mutex);
            for (auto handle : run->workers) interrupt_worker(handle);
        }
    }

    std::mutex mutex_;
    std::condition_variable changed_;
    GridRun* run_ = nullptr;
    std::chrono::steady_clock::time_point deadline_{};
    std::thread thread_;
};

}  // namespace

void GridRun::work() {
    prepare_worker_thread();
    {
        std::lock_guard lock(workers_mutex);
        workers.push_back(pthread_self());
    }
    const Order block_order(schedule, block_count, 0);
    active_workers.fetch_add(1);
    for (;;) {
        const unsigned long long i = next_block.fetch_add(1, std::memory_order_relaxed);
        if (i >= block_count || faulted.load(std::memory_order_relaxed)) break;
        if (cooperative != nullptr && !cooperative->begin_block(block_order[i])) break;
        run_block(*this, block_order[i]);
        if (cooperative != nullptr) cooperative->end_block(block_order[i]);
    }
    active_workers.fetch_sub(1);
    std::lock_guard lock(workers_mutex);
    workers.erase(std::find(workers.begin(), workers.end(), pthread_self()));
}

}  // namespace detail

void set_workers(unsigned workers) { detail::g_workers_override.store(workers); }

void set_time_budget(double seconds) {
    detail::g_time_budget_ms.store(static_cast<long long>(seconds * 1000));
}

bool detail::launch_accepted(const LaunchInfo& info) {
    if (sticky_error() != cudaSuccess) {
        record(sticky_error());
        return false;
    }
    if (configuration_problem(info) != nullptr) {
        record(cudaErrorInvalidConfiguration);  // a GPU gives no more detail either
        return false;
    }
    if (info.dynamic_shared_bytes > dynamic_shared_limit()) {
        record(cudaErrorInvalidValue);
        return false;
    }
    return true;
}

void detail::launch_grid(const LaunchInfo& info, void (*thread_body)(void*), void* state,
                         GridBarrierMaker make_barrier) {
    if (!launch_accepted(info)) return;
    if (current_thread != nullptr) {
        raise_fault(info.file, info.line, "kernel launched from device code (dynamic parallelism is not emulated)",
                    cudaErrorNotSupported);
    }

    reset_atomic_counts();
    if (g_analysis_hooks != nullptr) g_analysis_hooks->launch_begin(info);
    GridRun run(info, thread_body, state);
    const std::unique_ptr<GridBarrier> barrier = make_barrier != nullptr ? make_barrier(run) : nullptr;
    run.cooperative = barrier.get();
    g_running_launch.store(&info);
    Watchdog::instance().arm(&run);

    // A cooperative grid keeps every block live at once: one worker each
    // (cudaLaunchCooperativeKernel caps the grid at what fits resident).
    // During an analysis one worker, whatever set_workers() said since it
    // began (course::for_each_schedule sets 0 when it ends): the analysis's
    // recorder is not locked.
    const unsigned worker_threads = run.cooperative != nullptr           ? static_cast<unsigned>(run.block_count)
                                    : g_analysis_hooks != nullptr        ? 1u
                                    : g_workers_override.load() != 0 ? g_workers_override.load()
                                                                     : worker_count();
    const unsigned long long helpers = std::min<unsigned long long>(worker_threads, run.block_count) - 1;
    std::vector<std::thread> workers;
    workers.reserve(helpers);
    for (unsigned long long i = 0; i < helpers; ++i) workers.emplace_back([&run] { run.work(); });
    run.work();
    for (auto& w : workers) w.join();

    Watchdog::instance().disarm();
    g_running_launch.store(nullptr);
    g_running_thread.store(nullptr);
    if (g_analysis_hooks != nullptr) g_analysis_hooks->launch_end();
    if (run.faulted) set_sticky_fault(run.fault_code, std::move(run.fault_report));
}

void launch(const LaunchInfo& info, void (*thread_body)(void*), void* state) {
    detail::launch_grid(info, thread_body, state, nullptr);
}

}  // namespace course_emu

extern "C" int course_emu_describe_running_kernel(char* buffer, std::size_t size) {
    using namespace course_emu::detail;
    const course_emu::LaunchInfo* info = g_running_launch.load();
    if (info == nullptr || size == 0) return 0;
    const course_emu::ThreadContext* ctx = g_running_thread.load();
    const uint3 b = ctx != nullptr ? ctx->block_idx : uint3{0, 0, 0};
    const uint3 t = ctx != nullptr ? ctx->thread_idx : uint3{0, 0, 0};
    std::snprintf(buffer, size,
                  "kernel %s, launched at %s:%d, was still running (block (%u,%u,%u), thread (%u,%u,%u) "
                  "among those running)",
                  info->kernel, info->file, info->line, b.x, b.y, b.z, t.x, t.y, t.z);
    return 1;
}
