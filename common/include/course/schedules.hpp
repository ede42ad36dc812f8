/// @file schedules.hpp
/// @brief Runs a nondeterminism-sensitive check many ways: many times on a
/// GPU, once under each schedule on the emulator.
///
/// A race or a tie broken by timing may give the right answer on one run and
/// the wrong one on the next. On a GPU the check is repeated; on the emulator
/// the order of blocks and threads is forced to forward, reverse and several
/// seeded random orders, with one worker thread, so the failure is
/// reproducible and its schedule is named in the report.
#pragma once

#include <course/catch.hpp>
#include <cuda_runtime.h>

#include <cstdlib>
#include <span>
#include <string>

namespace course {

/// @brief Number of repetitions of a for_each_schedule() check on a GPU.
inline constexpr int kGpuRepetitions = 20;

/// @brief Calls `body()` under every emulator schedule, or kGpuRepetitions times on a GPU.
///
/// With COURSE_EMU_SCHEDULE set (e.g. `random:2`, as a failure's rerun line
/// says), only that schedule runs.
/// Each call runs with an INFO line naming the schedule (or the repetition),
/// so a failure says which one broke.
template <class Body>
void for_each_schedule(Body&& body) {
#ifdef __CUDACC_EMULATOR__
    using course_emu::Schedule;
    // One worker: the schedule then fixes the order of every thread of the
    // grid, so a failure reproduces exactly when rerun under its name.
    struct Restore {
        Schedule saved = course_emu::current_schedule();
        Restore() { course_emu::set_workers(1); }
        ~Restore() {
            course_emu::set_schedule(saved);
            course_emu::set_workers(0);
        }
    } restore;
    const Schedule all[] = {
        {Schedule::Kind::forward, 0}, {Schedule::Kind::reverse, 0}, {Schedule::Kind::random, 1},
        {Schedule::Kind::random, 2},  {Schedule::Kind::random, 3},
    };
    // COURSE_EMU_SCHEDULE, as a failure's rerun line says, picks the one
    // schedule to run (the emulator has read it into current_schedule()).
    std::span<const Schedule> schedules(all);
    if (std::getenv("COURSE_EMU_SCHEDULE") != nullptr) schedules = std::span<const Schedule>(&restore.saved, 1);
    for (const Schedule& s : schedules) {
        course_emu::set_schedule(s);
        INFO("emulator schedule: " << course_emu::schedule_name(s) << " (rerun alone with COURSE_EMU_SCHEDULE="
                                   << course_emu::schedule_name(s) << " COURSE_EMU_WORKERS=1)");
        body();
    }
#else
    for (int run = 1; run <= kGpuRepetitions; ++run) {
        INFO("GPU run " << run << " of " << kGpuRepetitions);
        body();
    }
#endif
}

}  // namespace course
