// The comparison driver of ncu_compare.sh: launches each kernel once, in a
// fixed order, at a fixed size, and checks its result (a kernel whose result
// is wrong measures nothing). Built with nvcc, it is what Nsight Compute
// profiles (launch k is ncu's ID k). Built for the emulator with every file
// instrumented (target course_analysis_compare), it writes the analysis
// mode's estimate of the same six memory metrics and the divergent branches
// as CSV, one row per kernel and metric, with the same ID:
//
//   analysis_compare [emulator.csv]      (the emulator also prints the report)
#include <saxpy.hpp>
#include <reduce.hpp>
#include <transpose.hpp>

#include "compare_kernels.hpp"
#include "transpose_unpadded.hpp"

#include <course/cuda_check.hpp>
#include <course/device_buffer.hpp>

#ifdef __CUDACC_EMULATOR__
#include <course_emu/analysis.hpp>
#endif

#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace {

struct Launch {
    std::string label;             // what ncu_compare.sh's notes call it
    std::function<void()> run;     // one launch
    std::function<bool()> check;   // its result is right
};

constexpr int kTransposeSide = 1024;   // 32 x 32 tiles
constexpr int kSaxpyElements = 1 << 20;
constexpr int kTreeBlocks = 1024;      // of 256 threads

}  // namespace

int main(int argc, char** argv) {
    // Lesson 07: a 1024 x 1024 transpose of in(r, c) = r * 1024 + c (exact in a float).
    std::vector<float> matrix(static_cast<std::size_t>(kTransposeSide) * kTransposeSide);
    for (std::size_t i = 0; i < matrix.size(); ++i) matrix[i] = static_cast<float>(i);
    course::DeviceBuffer<float> in(matrix), out(matrix.size());
    const auto transposed = [&] {
        const std::vector<float> got = out.download();
        for (int r = 0; r < kTransposeSide; ++r)
            for (int c = 0; c < kTransposeSide; ++c)
                if (got[static_cast<std::size_t>(c) * kTransposeSide + r] != matrix[static_cast<std::size_t>(r) * kTransposeSide + c]) return false;
        return true;
    };

    // Lesson 01: y = 3 x + y from x = 1, y = 2 (every element 5, then 8, ...: checked as 3 x + the y before).
    course::DeviceBuffer<float> x(std::vector<float>(kSaxpyElements, 1.0f)), y(std::vector<float>(kSaxpyElements, 2.0f));
    float y_before = 2.0f;
    const auto saxpy_done = [&] {
        y_before += 3.0f;
        for (const float v : y.download())
            if (v != y_before) return false;
        return true;
    };

    // Lesson 04: blocks of 256 ones, each summing to 256.
    const int tree_elements = kTreeBlocks * 256;
    course::DeviceBuffer<float> ones(std::vector<float>(tree_elements, 1.0f)), sums(kTreeBlocks);
    course::DeviceBuffer<double> total(1);
    const auto block_sums = [&] {
        for (const float v : sums.download())
            if (v != 256.0f) return false;
        return true;
    };

    const std::vector<Launch> launches = {
        {"07 transpose_naive", [&] { lesson07::transpose_naive(in.data(), out.data(), kTransposeSide, kTransposeSide); }, transposed},
        {"07 transpose_tiled unpadded", [&] { lesson07::transpose_tiled_unpadded(in.data(), out.data(), kTransposeSide, kTransposeSide); }, transposed},
        {"07 transpose_tiled padded (reference)", [&] { lesson07::transpose_tiled(in.data(), out.data(), kTransposeSide, kTransposeSide); }, transposed},
        {"01 saxpy scalar (reference, one element per thread)",
         [&] { lesson01::launch_saxpy({kSaxpyElements / 256, 256}, kSaxpyElements, 3.0f, x.data(), y.data()); }, saxpy_done},
        {"01 saxpy float4", [&] { analysis_compare::saxpy_float4(kSaxpyElements / 4, 3.0f, x.data(), y.data()); }, saxpy_done},
        {"04 tree interleaved", [&] { analysis_compare::tree_interleaved(ones.data(), sums.data(), kTreeBlocks); }, block_sums},
        {"04 tree sequential", [&] { analysis_compare::tree_sequential(ones.data(), sums.data(), kTreeBlocks); }, block_sums},
        {"04 launch_sum (reference: grid-stride, sequential tree, warp butterfly, atomic)",
         [&] { lesson04::launch_sum({kTreeBlocks, 256}, ones.data(), tree_elements, total.data()); },
         [&] { return total.download()[0] == static_cast<double>(tree_elements); }},
    };

#ifdef __CUDACC_EMULATOR__
    namespace analysis = course_emu::analysis;
    std::string csv = "\"ID\",\"Label\",\"Kernel Name\",\"Metric Name\",\"Metric Value\"\n";
#endif
    bool all_right = true;
    for (std::size_t id = 0; id < launches.size(); ++id) {
        const Launch& l = launches[id];
#ifdef __CUDACC_EMULATOR__
        analysis::begin();
#endif
        l.run();
        COURSE_LAUNCH_CHECK();
#ifdef __CUDACC_EMULATOR__
        const analysis::Report report = analysis::end();
        std::printf("== ID %zu: %s\n%s", id, l.label.c_str(), report.text().c_str());
        for (const analysis::KernelTotals& k : report.kernels) {
            const std::pair<const char*, unsigned long long> metrics[] = {
                {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", k.shared_load_conflicts},
                {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", k.shared_store_conflicts},
                {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", k.global_load_sectors},
                {"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", k.global_load_requests},
                {"l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", k.global_store_sectors},
                {"l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", k.global_store_requests},
                // Basic blocks entered by part of a warp (splits), not SASS branches: see docs/emulator.md.
                {"smsp__sass_branch_targets_threads_divergent.sum", k.divergent_splits},
            };
            for (const auto& [name, value] : metrics)
                csv += "\"" + std::to_string(id) + "\",\"" + l.label + "\",\"" + k.kernel + "\",\"" + name + "\",\"" +
                       std::to_string(value) + "\"\n";
        }
#else
        std::printf("ID %zu: %s\n", id, l.label.c_str());
#endif
        if (!l.check()) {
            std::fprintf(stderr, "analysis_compare: %s gave a wrong result\n", l.label.c_str());
            all_right = false;
        }
    }
#ifdef __CUDACC_EMULATOR__
    if (argc > 1) {
        FILE* file = std::fopen(argv[1], "w");
        if (file == nullptr || std::fputs(csv.c_str(), file) < 0 || std::fclose(file) != 0) {
            std::fprintf(stderr, "analysis_compare: cannot write %s\n", argv[1]);
            return 1;
        }
        std::printf("emulator metrics written to %s\n", argv[1]);
    }
#else
    (void)argc;
    (void)argv;
#endif
    return all_right ? 0 : 1;
}
