// The schedule every launch runs under (course_emu/launch.hpp): its one
// owner. Set from COURSE_EMU_SCHEDULE at start-up and by set_schedule().
#include <course_emu/launch.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace course_emu {
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

}  // namespace

void set_schedule(Schedule schedule) {
    std::lock_guard lock(g_schedule_mutex);
    g_schedule = schedule;
}

Schedule current_schedule() {
    std::lock_guard lock(g_schedule_mutex);
    return g_schedule;
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

}  // namespace course_emu
