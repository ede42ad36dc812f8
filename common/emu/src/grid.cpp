// One launch in flight (grid.hpp): the orders a schedule gives blocks and
// threads, coordinates, and the launch's fault record, which the block
// scheduler (block.cpp), the grid barrier (cooperative.cpp) and the launch
// (launch.cpp) all write.
#include "grid.hpp"

#include <course_emu/detail/coordinates.hpp>

#include <numeric>
#include <random>

namespace course_emu::detail {

Order::Order(Schedule s, unsigned long long n, unsigned long long salt) : kind_(s.kind), n_(n) {
    if (kind_ != Schedule::Kind::random || n_ < 2) return;
    std::mt19937_64 rng(s.seed * 0x9E3779B97F4A7C15ull + salt);
    c_ = rng() % n_;
    a_ = rng() % n_ | 1;
    while (std::gcd(a_, n_) != 1) a_ = (a_ + 2) % n_ == 0 ? 1 : (a_ + 2) % n_;
}

unsigned long long Order::operator[](unsigned long long i) const {
    switch (kind_) {
        case Schedule::Kind::forward: return i;
        case Schedule::Kind::reverse: return n_ - 1 - i;
        case Schedule::Kind::random: break;
    }
    return n_ < 2 ? i : static_cast<unsigned long long>((static_cast<unsigned __int128>(a_) * i + c_) % n_);
}

uint3 unflatten(unsigned long long i, dim3 extent) {
    uint3 v;
    v.x = static_cast<unsigned>(i % extent.x);
    i /= extent.x;
    v.y = static_cast<unsigned>(i % extent.y);
    v.z = static_cast<unsigned>(i / extent.y);
    return v;
}

std::string format_index(uint3 v) {
    return "(" + std::to_string(v.x) + "," + std::to_string(v.y) + "," + std::to_string(v.z) + ")";
}

GridRun::GridRun(const LaunchInfo& launch, void (*body)(void*), void* body_state)
    : info(launch),
      thread_body(body),
      state(body_state),
      schedule(current_schedule()),
      block_count(static_cast<unsigned long long>(launch.grid.x) * launch.grid.y * launch.grid.z),
      threads_per_block(launch.block.x * launch.block.y * launch.block.z) {}

void GridRun::record_fault(cudaError_t code, const char* file, int line, const std::string& what,
                           const ThreadContext& ctx, const std::string& details) {
    std::lock_guard lock(fault_mutex);
    if (faulted.exchange(true)) return;
    fault_code = code;
    fault_report = std::string(file) + ":" + std::to_string(line) + ": " + what + "\n  in kernel " + info.kernel +
                   " launched at " + info.file + ":" + std::to_string(info.line) + ", block " +
                   format_index(ctx.block_idx) + ", thread " + format_index(ctx.thread_idx) + " (schedule " +
                   schedule_name(schedule) + ")";
    if (!details.empty()) fault_report += "\n" + details;
}

}  // namespace course_emu::detail
