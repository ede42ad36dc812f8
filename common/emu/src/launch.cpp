// Running a grid: launch validation, schedules, the worker pool and faults.
//
// Blocks are spread over worker threads; a worker runs one block at a time,
// so storage local to the worker is the block's shared memory. In this
// version the threads of a block run one after another on their worker, in
// the schedule's order; the fiber scheduler (barriers, warp collectives)
// replaces run_block() without changing the rest.
#include "state.hpp"

#include <course_emu/scheduling.hpp>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace course_emu {
namespace detail {

thread_local ThreadContext* current_thread = nullptr;

// What runs now, for the report of a test that hangs (read by another
// thread only when the test has overrun its time and is about to end).
std::atomic<const LaunchInfo*> g_running_launch{nullptr};
std::atomic<const ThreadContext*> g_running_thread{nullptr};

// The running block's dynamic shared memory: one buffer per worker, since a
// worker runs one block at a time. 16-byte units keep float4 and double2
// views aligned.
struct alignas(16) SharedUnit {
    unsigned char bytes[16];
};
thread_local std::vector<SharedUnit> t_dynamic_shared;

void builtin_outside_kernel() {
    std::fprintf(stderr,
                 "course emulator: threadIdx/blockIdx/blockDim/gridDim read outside a kernel "
                 "(host code has no CUDA thread)\n");
    std::abort();
}

namespace {

Schedule schedule_from_environment() {
    Schedule s;
    const char* env = std::getenv("COURSE_EMU_SCHEDULE");
    if (env == nullptr) return s;
    if (std::strcmp(env, "reverse") == 0) {
        s.kind = Schedule::Kind::reverse;
    } else if (std::strncmp(env, "random", 6) == 0) {
        s.kind = Schedule::Kind::random;
        s.seed = env[6] == ':' ? std::strtoull(env + 7, nullptr, 10) : 1;
    }
    return s;
}

std::mutex g_schedule_mutex;
Schedule g_schedule = schedule_from_environment();

// Thrown through the kernel's frames by raise_fault(); never escapes launch().
struct FaultSignal {
    Fault fault;
};

std::string format_index(uint3 v) {
    return "(" + std::to_string(v.x) + "," + std::to_string(v.y) + "," + std::to_string(v.z) + ")";
}

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

// A permutation of [0, n) for the schedule: forward, reverse, or an affine
// map i -> (a*i + c) mod n with a coprime to n (cheap and needs no table,
// since a grid may have two billion blocks).
class Order {
public:
    Order(Schedule s, unsigned long long n, unsigned long long salt) : kind_(s.kind), n_(n) {
        if (kind_ != Schedule::Kind::random || n_ < 2) return;
        std::mt19937_64 rng(s.seed * 0x9E3779B97F4A7C15ull + salt);
        c_ = rng() % n_;
        a_ = rng() % n_ | 1;
        while (std::gcd(a_, n_) != 1) a_ = (a_ + 2) % n_ == 0 ? 1 : (a_ + 2) % n_;
    }
    unsigned long long operator[](unsigned long long i) const {
        switch (kind_) {
            case Schedule::Kind::forward: return i;
            case Schedule::Kind::reverse: return n_ - 1 - i;
            case Schedule::Kind::random: break;
        }
        return n_ < 2 ? i : static_cast<unsigned long long>((static_cast<unsigned __int128>(a_) * i + c_) % n_);
    }

private:
    Schedule::Kind kind_;
    unsigned long long n_;
    unsigned long long a_ = 1;
    unsigned long long c_ = 0;
};

uint3 unflatten(unsigned long long i, dim3 extent) {
    uint3 v;
    v.x = static_cast<unsigned>(i % extent.x);
    i /= extent.x;
    v.y = static_cast<unsigned>(i % extent.y);
    v.z = static_cast<unsigned>(i / extent.y);
    return v;
}

struct GridRun {
    GridRun(const LaunchInfo& launch, void (*body)(void*), void* body_state)
        : info(launch),
          thread_body(body),
          state(body_state),
          schedule(current_schedule()),
          block_count(static_cast<unsigned long long>(launch.grid.x) * launch.grid.y * launch.grid.z),
          threads_per_block(launch.block.x * launch.block.y * launch.block.z) {}

    const LaunchInfo& info;
    void (*thread_body)(void*);
    void* state;
    Schedule schedule;
    unsigned long long block_count;
    unsigned threads_per_block;
    std::atomic<unsigned long long> next_block{0};
    std::atomic<bool> faulted{false};
    std::mutex fault_mutex;
    std::string fault_report;
    cudaError_t fault_code = cudaSuccess;

    void record_fault(const Fault& f, const ThreadContext& ctx) {
        std::lock_guard lock(fault_mutex);
        if (faulted.exchange(true)) return;
        fault_code = f.code;
        fault_report = std::string(f.file) + ":" + std::to_string(f.line) + ": " + f.what + "\n  in kernel " +
                       info.kernel + " launched at " + info.file + ":" + std::to_string(info.line) +
                       ", block " + format_index(ctx.block_idx) + ", thread " + format_index(ctx.thread_idx) +
                       " (schedule " + schedule_name(schedule) + ")";
    }

    void run_block(unsigned long long flat_block) {
        ThreadContext ctx;
        ctx.block_dim = info.block;
        ctx.grid_dim = info.grid;
        ctx.block_idx = unflatten(flat_block, info.grid);
        const Order thread_order(schedule, threads_per_block, flat_block + 1);
        // Fresh for every block and poisoned, so reading before writing shows.
        t_dynamic_shared.assign((info.dynamic_shared_bytes + 15) / 16, SharedUnit{});
        if (!t_dynamic_shared.empty()) std::memset(t_dynamic_shared.data(), 0xCD, t_dynamic_shared.size() * 16);
        for (unsigned i = 0; i < threads_per_block && !faulted.load(std::memory_order_relaxed); ++i) {
            ctx.thread_idx = unflatten(thread_order[i], info.block);
            current_thread = &ctx;
            g_running_thread.store(&ctx, std::memory_order_relaxed);
            try {
                thread_body(state);
            } catch (const FaultSignal& signal) {
                record_fault(signal.fault, ctx);
            } catch (const std::exception& e) {
                record_fault(Fault{info.file, info.line, e.what(), cudaErrorLaunchFailure}, ctx);
            }
            current_thread = nullptr;
        }
    }

    void work() {
        const Order block_order(schedule, block_count, 0);
        for (;;) {
            const unsigned long long i = next_block.fetch_add(1, std::memory_order_relaxed);
            if (i >= block_count || faulted.load(std::memory_order_relaxed)) return;
            run_block(block_order[i]);
        }
    }
};

}  // namespace
}  // namespace detail

void set_schedule(Schedule schedule) {
    std::lock_guard lock(detail::g_schedule_mutex);
    detail::g_schedule = schedule;
}

Schedule current_schedule() {
    std::lock_guard lock(detail::g_schedule_mutex);
    return detail::g_schedule;
}

const char* schedule_name(Schedule schedule) {
    thread_local char buffer[48];
    switch (schedule.kind) {
        case Schedule::Kind::forward: return "forward";
        case Schedule::Kind::reverse: return "reverse";
        case Schedule::Kind::random: break;
    }
    std::snprintf(buffer, sizeof buffer, "random:%llu", schedule.seed);
    return buffer;
}

void* dynamic_shared_memory() {
    return detail::t_dynamic_shared.empty() ? nullptr : detail::t_dynamic_shared.data();
}

void raise_fault(const char* file, int line, const char* what, cudaError_t code) {
    throw detail::FaultSignal{Fault{file, line, what, code}};
}

void detail::atomic_scheduling_point() {}

void barrier_not_supported(const char* file, int line) {
    raise_fault(file, line,
                "__syncthreads() is not supported by this version of the emulator: its threads "
                "run one after another, so a barrier cannot be honoured",
                cudaErrorNotSupported);
}

void launch(const LaunchInfo& info, void (*thread_body)(void*), void* state) {
    using namespace detail;
    if (sticky_error() != cudaSuccess) {
        record(sticky_error());
        return;
    }
    if (const char* problem = configuration_problem(info)) {
        (void)problem;  // the code says it; a GPU gives no more detail either
        record(cudaErrorInvalidConfiguration);
        return;
    }
    if (info.dynamic_shared_bytes > device_properties().sharedMemPerBlock) {
        record(cudaErrorInvalidValue);
        return;
    }
    if (current_thread != nullptr) {
        // A launch from inside a kernel (dynamic parallelism) is not emulated.
        raise_fault(info.file, info.line, "kernel launched from device code (dynamic parallelism is not emulated)",
                    cudaErrorNotSupported);
    }

    reset_atomic_counts();
    GridRun run(info, thread_body, state);
    g_running_launch.store(&info);

    const unsigned long long helpers =
        std::min<unsigned long long>(worker_count(), run.block_count) - 1;
    std::vector<std::thread> workers;
    workers.reserve(helpers);
    for (unsigned long long i = 0; i < helpers; ++i) workers.emplace_back([&run] { run.work(); });
    run.work();
    for (auto& w : workers) w.join();
    g_running_launch.store(nullptr);
    g_running_thread.store(nullptr);

    if (run.faulted) set_sticky_fault(run.fault_code, std::move(run.fault_report));
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
