// The stacks of emulated threads: pooled across blocks and launches, each
// with a guard page below it, so that a thread overflowing its stack faults
// and is reported (signals.cpp) instead of overwriting memory.
#include "stacks.hpp"

#include "allocator.hpp"

#include <cstdlib>
#include <mutex>
#include <new>
#include <sys/mman.h>
#include <vector>

namespace course_emu::detail {

namespace ctx = boost::context;

std::size_t stack_size() {
    static const std::size_t size = [] {
        const char* env = std::getenv("COURSE_EMU_STACK_KB");
        const long kb = env != nullptr ? std::strtol(env, nullptr, 10) : 256;
        const std::size_t bytes = static_cast<std::size_t>(kb > 16 ? kb : 256) * 1024;
        return (bytes + page_size() - 1) / page_size() * page_size();
    }();
    return size;
}

namespace {

// Stacks with a guard page below them, kept for reuse across blocks and launches.
class StackPool {
public:
    static StackPool& instance() {
        static StackPool* pool = new StackPool;  // outlives every worker
        return *pool;
    }

    void* take() {
        {
            std::lock_guard lock(mutex_);
            if (!free_.empty()) {
                void* base = free_.back();
                free_.pop_back();
                return base;
            }
        }
        const std::size_t total = stack_size() + page_size();
        void* base = mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (base == MAP_FAILED) throw std::bad_alloc();
        mprotect(base, page_size(), PROT_NONE);  // a thread that overflows its stack faults here
        std::lock_guard lock(mutex_);
        guards_.push_back(static_cast<char*>(base));
        return base;
    }

    void give_back(void* base) {
        std::lock_guard lock(mutex_);
        free_.push_back(base);
    }

    // Whether `address` is in the guard page of one of the stacks (called
    // from the fault handler; the list only grows, under a lock held briefly).
    bool is_guard(const void* address) {
        const char* a = static_cast<const char*>(address);
        std::unique_lock lock(mutex_, std::try_to_lock);
        if (!lock.owns_lock()) return false;
        for (const char* g : guards_) {
            if (a >= g && a < g + page_size()) return true;
        }
        return false;
    }

private:
    std::mutex mutex_;
    std::vector<void*> free_;
    std::vector<char*> guards_;
};

}  // namespace

bool is_stack_guard(const void* address) { return StackPool::instance().is_guard(address); }

ctx::stack_context PooledStack::allocate() {
    void* base = StackPool::instance().take();
    ctx::stack_context sc;
    sc.size = stack_size();
    sc.sp = static_cast<char*>(base) + page_size() + stack_size();
    return sc;
}

void PooledStack::deallocate(ctx::stack_context& sc) noexcept {
    StackPool::instance().give_back(static_cast<char*>(sc.sp) - stack_size() - page_size());
}

}  // namespace course_emu::detail
