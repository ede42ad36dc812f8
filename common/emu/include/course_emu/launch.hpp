/// @file launch.hpp
/// @brief What a translated `kernel<<<grid, block, smem, stream>>>(args)` calls.
///
/// The translator rewrites a launch into
/// `launch_site(file, line, "kernel", body).config(grid, block, smem, stream)(args)`,
/// where `body` is a generic lambda calling the kernel. The arguments are
/// copied once at the launch (as CUDA copies kernel parameters), and every
/// emulated thread calls the kernel with that copy.
#pragma once

#include <cstddef>
#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>

#include <course_emu/runtime_api.hpp>
#include <course_emu/streams.hpp>
#include <course_emu/types.hpp>

namespace course_emu {

/// @brief Where a launch was written and the shape it asked for.
struct LaunchInfo {
    const char* file = "";
    int line = 0;
    const char* kernel = "";
    dim3 grid{};
    dim3 block{};
    std::size_t dynamic_shared_bytes = 0;
    cudaStream_t stream = nullptr;
    bool cooperative = false;  ///< cudaLaunchCooperativeKernel: all blocks live at once, grid.sync() allowed
};

/// @brief Runs a kernel: validates the configuration like a GPU (setting the
/// last error on refusal), then runs `thread_body(state)` once per CUDA
/// thread of the grid with the built-in variables set. Faults are recorded as
/// a sticky error with a report (see last_fault_report()).
void launch(const LaunchInfo& info, void (*thread_body)(void*), void* state);

/// @brief A launch with its configuration, waiting for the kernel arguments.
template <class Body>
class ConfiguredLaunch {
public:
    ConfiguredLaunch(LaunchInfo info, Body body) : info_(info), body_(std::move(body)) {}

    template <class... Args>
    void operator()(Args&&... args) {
        if (detail::launch_goes_through_streams(info_.stream)) {
            issue_to_stream(std::forward<Args>(args)...);
            return;
        }
        std::tuple<std::decay_t<Args>...> parameters(std::forward<Args>(args)...);
        auto per_thread = [&] { std::apply(body_, parameters); };
        using PerThread = decltype(per_thread);
        launch(info_, [](void* p) { (*static_cast<PerThread*>(p))(); }, &per_thread);
    }

private:
    // A launch into a stream runs later (streams.hpp): the body and a copy of
    // the arguments live on the heap until then.
    template <class... Args>
    void issue_to_stream(Args&&... args) {
        using Parameters = std::tuple<std::decay_t<Args>...>;
        auto closure = std::make_shared<std::pair<Body, Parameters>>(body_, Parameters(std::forward<Args>(args)...));
        std::vector<detail::PointerArgument> pointers;
        std::apply([&pointers](const auto&... a) { (detail::collect_pointer_argument(pointers, a), ...); },
                   closure->second);
        const LaunchInfo info = info_;
        detail::launch_through_streams(info_, std::move(pointers), [closure, info] {
            auto per_thread = [&closure] { std::apply(closure->first, closure->second); };
            using PerThread = decltype(per_thread);
            launch(info, [](void* p) { (*static_cast<PerThread*>(p))(); }, &per_thread);
        });
    }

    LaunchInfo info_;
    Body body_;
};

/// @brief The kernel and source position of a launch, before its configuration.
template <class Body>
class LaunchSite {
public:
    LaunchSite(const char* file, int line, const char* kernel, Body body)
        : body_(std::move(body)) {
        info_.file = file;
        info_.line = line;
        info_.kernel = kernel;
    }

    ConfiguredLaunch<Body> config(dim3 grid, dim3 block, std::size_t dynamic_shared_bytes = 0,
                                  cudaStream_t stream = nullptr) && {
        info_.grid = grid;
        info_.block = block;
        info_.dynamic_shared_bytes = dynamic_shared_bytes;
        info_.stream = stream;
        return ConfiguredLaunch<Body>(info_, std::move(body_));
    }

private:
    LaunchInfo info_;
    Body body_;
};

template <class Body>
LaunchSite<Body> launch_site(const char* file, int line, const char* kernel, Body body) {
    return LaunchSite<Body>(file, line, kernel, std::move(body));
}

/// @brief The order in which the emulator runs blocks of a grid and threads of a block.
///
/// Correct CUDA code gives the same answer under every schedule; code that
/// depends on an order a GPU does not promise (a race, a missing barrier, a
/// tie broken by timing) shows itself under some schedule.
struct Schedule {
    enum class Kind { forward, reverse, random };
    Kind kind = Kind::forward;
    unsigned long long seed = 0;  ///< Used by Kind::random only.
};

/// @brief Sets the schedule for the following launches (default: forward, or
/// `COURSE_EMU_SCHEDULE=forward|reverse|random:SEED` from the environment).
void set_schedule(Schedule schedule);

/// @brief The schedule launches use now.
Schedule current_schedule();

/// @brief Sets the number of host threads that run blocks side by side for
/// the following launches; 0 restores the default (`COURSE_EMU_WORKERS`, else
/// the number of CPUs). With one worker a schedule fully determines the order
/// of every thread of the grid, so a failure under it reproduces exactly.
void set_workers(unsigned workers);

/// @brief Sets how long one launch may run before it is stopped with
/// cudaErrorLaunchTimeout and a report of where its threads were (default:
/// `COURSE_EMU_TIMEOUT` seconds from the environment, else 10 s).
void set_time_budget(double seconds);

/// @brief Fiber switches into emulated threads since the program started
/// (all workers): the benchmark's measure of scheduling cost.
unsigned long long context_switches();

/// @brief A short name for a schedule, e.g. "forward" or "random:7".
const char* schedule_name(Schedule schedule);

/// @brief The running block's dynamic shared memory (the launch's third
/// configuration argument, in bytes), poisoned with 0xCD bytes at block start.
void* dynamic_shared_memory();

/// @brief Registers a static `__shared__` variable as a thread passes its
/// declaration (the translator emits the call). The first thread of a block
/// poisons it with 0xCD bytes, so a read before any write shows; the block's
/// total is held to CUDA's 48 KiB static limit.
void shared_declared(const volatile void* address, std::size_t bytes);

/// @brief What the translator turns `extern __shared__ T name[];` into.
template <class T>
T* dynamic_shared() {
    return static_cast<T*>(dynamic_shared_memory());
}

/// @brief The error a kernel raises through the emulator: the runtime
/// records it as the launch's fault, with the thread that raised it.
struct Fault {
    const char* file;
    int line;
    const char* what;
    cudaError_t code;
};

/// @brief Raises a fault in the running CUDA thread (never returns).
[[noreturn]] void raise_fault(const char* file, int line, const char* what,
                              cudaError_t code = cudaErrorLaunchFailure);

}  // namespace course_emu

/// @brief Describes the kernel running now (name, launch site, a running
/// block and thread) into `buffer`; returns 0 when no kernel runs. Called by
/// the test main's watchdog when a test overruns its time.
extern "C" int course_emu_describe_running_kernel(char* buffer, std::size_t size);
