// The race driver of ncu_compare.sh: planted shared-memory races, each
// launched once, for compute-sanitizer's racecheck on a GPU and for the
// emulator's analysis mode (target course_analysis_races, which prints the
// report's races) to be compared:
//   1. analysis_kernels::broadcast_through_shared without its barrier
//      (common/emu/tests/analysis/): thread 0 writes a shared value that the
//      block's other 63 threads read;
//   2. lesson 04's missing_tree_barrier mutant (the reference's reduce.cu
//      without the __syncthreads() between tree levels), through launch_sum.
// The results are not checked: a race may or may not change them.
#include <reduce.hpp>

#include "analysis_kernels.hpp"

#include <course/cuda_check.hpp>
#include <course/device_buffer.hpp>

#ifdef __CUDACC_EMULATOR__
#include <course_emu/analysis.hpp>
#endif

#include <cstdio>
#include <vector>

int main() {
#ifdef __CUDACC_EMULATOR__
    course_emu::analysis::begin();
#endif
    course::DeviceBuffer<int> broadcast(256);
    analysis_kernels::broadcast_through_shared(broadcast.data(), 256, false);
    COURSE_LAUNCH_CHECK();

    const int n = 1024 * 256;
    course::DeviceBuffer<float> ones(std::vector<float>(n, 1.0f));
    course::DeviceBuffer<double> total(1);
    lesson04::launch_sum({1024, 256}, ones.data(), n, total.data());
    COURSE_LAUNCH_CHECK();
    std::printf("missing_tree_barrier mutant: sum %.0f (%d without the race)\n", total.download()[0], n);
#ifdef __CUDACC_EMULATOR__
    const course_emu::analysis::Report report = course_emu::analysis::end();
    std::printf("%s", report.text().c_str());
    std::printf("%zu race(s)\n", report.races.size());
    return report.races.empty() ? 1 : 0;
#else
    return 0;
#endif
}
