// Faults inside kernels: the signal handlers that turn a bad memory access
// (SIGSEGV, SIGBUS) or a spent time budget (SIGUSR2, sent by launch.cpp's
// watchdog) in a kernel's thread into that thread's fault report, and the
// alternate stack they run on. A handler leaves the thread's fiber for the
// block scheduler (block.cpp), which reports the fault; outside kernel code
// it passes the signal on to whoever handled it before.
#include "signals.hpp"

#include "allocator.hpp"
#include "block.hpp"
#include "stacks.hpp"
#include "static_shared_guard.hpp"

#include <csignal>
#include <cstdio>
#include <mutex>
#include <pthread.h>
#include <vector>

namespace course_emu::detail {

namespace {

thread_local char t_signal_message[768];

// Leaves the faulting thread's fiber for the scheduler, never to return.
[[noreturn]] void abandon_thread(cudaError_t code) { abandon_running_thread(code, t_signal_message); }

struct sigaction g_previous_segv {};
struct sigaction g_previous_bus {};

void on_memory_fault(int signal, siginfo_t* info, void* context) {
    if (!kernel_code_running()) {
        // Not in kernel code: whoever handled this before us (Catch2 reports
        // it as a crash), or the default action.
        const struct sigaction& previous = signal == SIGSEGV ? g_previous_segv : g_previous_bus;
        if (previous.sa_flags & SA_SIGINFO && previous.sa_sigaction != nullptr) {
            previous.sa_sigaction(signal, info, context);
            return;
        }
        if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN && previous.sa_handler != nullptr) {
            previous.sa_handler(signal);
            return;
        }
        std::signal(signal, SIG_DFL);
        return;  // the faulting instruction runs again and ends the process
    }
    const void* address = info->si_addr;
    char detail[512] = "";
    // Shared memory first: its guard page may lie near a device allocation,
    // which describe_fault_address would name as the one overrun.
    if (describe_dynamic_shared_fault(address, detail, sizeof detail) ||
        describe_static_shared_fault(address, detail, sizeof detail) ||
        describe_fault_address(address, detail, sizeof detail)) {
        std::snprintf(t_signal_message, sizeof t_signal_message, "%s", detail);
    } else if (is_stack_guard(address)) {
        std::snprintf(t_signal_message, sizeof t_signal_message,
                      "stack overflow in a thread (deep recursion, or a large local array?): each emulated thread "
                      "has %zu KiB of stack (COURSE_EMU_STACK_KB)",
                      stack_size() / 1024);
    } else {
        std::snprintf(t_signal_message, sizeof t_signal_message,
                      "invalid memory access at address %p, which is not in any device allocation (a null, host or "
                      "uninitialised pointer, or an index far out of bounds?)",
                      address);
    }
    abandon_thread(cudaErrorIllegalAddress);
}

void on_interrupt(int, siginfo_t*, void*) {
    if (!kernel_code_running()) {
        interrupt_between_threads();  // the scheduler looks at this between threads
        return;
    }
    std::snprintf(t_signal_message, sizeof t_signal_message,
                  "the kernel ran past its time budget (COURSE_EMU_TIMEOUT) and was stopped: a loop that never "
                  "ends, or threads spinning on a flag no thread will set?");
    abandon_thread(cudaErrorLaunchTimeout);
}

void install(int signal, void (*handler)(int, siginfo_t*, void*), struct sigaction* previous) {
    struct sigaction action {};
    action.sa_sigaction = handler;
    // SA_NODEFER: the handler leaves by switching fibers, never by returning,
    // so the signal must not stay blocked. SA_ONSTACK: a stack overflow
    // leaves no stack to run the handler on.
    action.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    struct sigaction old {};
    sigaction(signal, &action, &old);
    if (previous != nullptr && old.sa_sigaction != handler) *previous = old;
}

struct AltStack {
    std::vector<char> memory = std::vector<char>(64 * 1024);
    AltStack() { use(); }
    void use() {
        stack_t current{};
        sigaltstack(nullptr, &current);
        if (current.ss_sp == memory.data()) return;
        stack_t ss{};
        ss.ss_sp = memory.data();
        ss.ss_size = memory.size();
        sigaltstack(&ss, nullptr);
    }
    ~AltStack() {
        stack_t ss{};
        ss.ss_flags = SS_DISABLE;
        sigaltstack(&ss, nullptr);
    }
};

}  // namespace

void prepare_worker_thread() {
    thread_local AltStack alt_stack;
    alt_stack.use();  // another library (Catch2) may have replaced it since
    static std::mutex m;
    std::lock_guard lock(m);
    // Reinstalled at every launch: a test framework may have restored its
    // own handlers in between. Ours pass faults outside kernels on to them.
    install(SIGSEGV, on_memory_fault, &g_previous_segv);
    install(SIGBUS, on_memory_fault, &g_previous_bus);
    install(SIGUSR2, on_interrupt, nullptr);
}

void interrupt_worker(std::thread::native_handle_type thread) { pthread_kill(thread, SIGUSR2); }

}  // namespace course_emu::detail
