// Lesson 11 benchmark (GPU only): the top k of 2^26 random floats, for
// k = 1, 32 and 1024. Your top_k (or the reference's: per-block candidates
// in shared memory, filtered against a threshold with the next chunk's
// loads in flight, the blocks' sorted lists merged pairwise), the earlier
// reference (earlier_top_k.cuh: the same selection without the prefetch,
// merged by sorting), for k <= 32 the candidates of warp_top_k.cuh (a warp
// per slice with its list in registers and no block barrier in the loop,
// one launch; issue #22) in two shapes, unseeded and with their bound
// seeded by a pre-pass over an evenly spread sample, the sampled-threshold
// candidate of threshold_top_k.cuh (the same pre-pass, then a compare per
// float and a rare append to one candidate buffer; also with its launches
// overlapped by programmatic dependent launch), and sorting everything
// and keeping the first k:
// cub::DeviceRadixSort::SortPairsDescending of (value, index) pairs, and
// thrust::stable_sort_by_key with thrust::greater. Every
// variant's first k pairs must equal the CPU's std::partial_sort before it
// is timed. Bytes per run are counted as the n floats read once (256 MiB),
// so the "of copy" column says how close a variant comes to the ceiling of
// any top-K: reading its input once at the copy bandwidth.
//
//   lesson11_bench [output.csv]
#include <top_k.hpp>

#include "cpu_reference.hpp"
#include "earlier_top_k.cuh"
#include "threshold_top_k.cuh"
#include "warp_top_k.cuh"

#include <course/backend.hpp>
#include <course/bench.hpp>
#include <course/device_buffer.hpp>
#include <course/inputs.hpp>

#include <cub/device/device_radix_sort.cuh>
#include <thrust/functional.h>
#include <thrust/sequence.h>
#include <thrust/sort.h>
#include <thrust/system/cuda/execution_policy.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

namespace {

using lesson11::reference::Pair;

// "" when the first k of (values, indices) are the CPU's answer, or the first difference.
std::string compare_first_k(const std::vector<Pair>& expected, const std::vector<float>& values,
                            const std::vector<int>& indices) {
    for (std::size_t i = 0; i < expected.size(); ++i) {
        if (indices[i] != expected[i].index || std::memcmp(&values[i], &expected[i].value, sizeof(float)) != 0) {
            return "position " + std::to_string(i) + ": expected (" + std::to_string(expected[i].value) + ", " +
                   std::to_string(expected[i].index) + "), got (" + std::to_string(values[i]) + ", " +
                   std::to_string(indices[i]) + ")";
        }
    }
    return "";
}

// Adds the row `label`, timed by `run(s)`, which writes the top k of input
// set s to out_values and out_indices; before it is timed, one run on set
// 0 into poisoned outputs must give the CPU's answer.
template <class Run>
void add_top_k_row(course::Bench& bench, const std::string& label, const std::vector<Pair>& expected,
                   course::DeviceBuffer<float>& out_values, course::DeviceBuffer<int>& out_indices, double bytes,
                   const Run& run) {
    const auto check = [&]() -> std::string {
        out_values.poison();
        out_indices.poison();
        run(0);
        COURSE_CUDA_CHECK(cudaGetLastError());
        return compare_first_k(expected, out_values.download(), out_indices.download());
    };
    bench.add_checked(label, false, check, run, bytes);
}

// A row for the warp-scan candidate (warp_top_k.cuh, k <= 32 only) with
// kWarps warps a block, kVectors float4 a lane per tile, at most
// kBlocksPerSm blocks an SM (0: as many as fit), its bound seeded by a
// pre-pass over kSampleTiles tiles (0: none), checked like the others.
template <unsigned kWarps, unsigned kVectors, unsigned kBlocksPerSm, unsigned kSampleTiles = 0>
void add_warp_scan_row(course::Bench& bench, int k, const std::vector<Pair>& expected,
                       const std::vector<course::DeviceBuffer<float>>& values, course::DeviceBuffer<float>& out_values,
                       course::DeviceBuffer<int>& out_indices, double bytes) {
    const std::size_t count = values[0].size();
    const std::size_t workspace_bytes =
        lesson11::warp_scan::top_k_workspace_bytes<kWarps, kVectors, kBlocksPerSm>(count, k);
    course::DeviceBuffer<unsigned char> workspace(workspace_bytes);
    const auto run = [&](int s) {
        lesson11::warp_scan::top_k<kWarps, kVectors, kBlocksPerSm, kSampleTiles>(
            values[s].data(), count, k, out_values.data(), out_indices.data(), workspace.data(), workspace_bytes);
    };
    const std::string blocks =
        kBlocksPerSm == 0 ? "as many blocks/SM as fit" : "<= " + std::to_string(kBlocksPerSm) + " blocks/SM";
    const std::string seeded =
        kSampleTiles == 0 ? ""
                          : " seeded by a sample of " + std::to_string(kSampleTiles) + " x " +
                                std::to_string(32 * 4 * kVectors) + " floats";
    add_top_k_row(bench,
                  "candidate warp scan" + seeded + ", " + std::to_string(kWarps) + " warps x " +
                      std::to_string(kVectors) + " float4/lane, " + blocks + " (k = " + std::to_string(k) + ")",
                  expected, out_values, out_indices, bytes, run);
}

// What a sampled-threshold row's label says of its last blocks' selection.
std::string selection_label(lesson11::sampled_threshold::Selection selection) {
    switch (selection) {
        case lesson11::sampled_threshold::Selection::merge: return "";
        case lesson11::sampled_threshold::Selection::rank: return ", last block selects by rank";
        case lesson11::sampled_threshold::Selection::rank_and_rank_seed:
            return ", last blocks (pre-pass too) select by rank";
    }
    return "";
}

// What a sampled-threshold row's label says of its launches.
std::string overlap_label(lesson11::sampled_threshold::Overlap overlap) {
    switch (overlap) {
        case lesson11::sampled_threshold::Overlap::none: return "";
        case lesson11::sampled_threshold::Overlap::main_pass: return "overlapped by PDL ";
        case lesson11::sampled_threshold::Overlap::all: return "zeroed by a kernel, all overlapped by PDL, ";
    }
    return "";
}

// What a sampled-threshold row's label says of its pre-pass.
std::string groups_label(unsigned seed_groups) {
    if (seed_groups == 0) return "";
    return " (m-th of " + std::to_string(seed_groups) + " group maxima: one launch, no memset, no ticket)";
}

// A row for the sampled-threshold candidate (threshold_top_k.cuh, k <= 32
// only): its threshold from a pre-pass over kSampleTiles tiles of 512
// floats, then the main pass with kWarps warps a block and kVectors float4
// a lane per tile (kOverlap: how far its launches overlap, programmatic
// dependent launch; kSelection: how its last blocks select), checked like
// the others.
// (kSeedGroups > 0: the group-maxima pre-pass, kSeedGroups blocks whose
// maxima the main pass's blocks select from, no memset, no pre-pass ticket.)
template <unsigned kWarps, unsigned kVectors, unsigned kSampleTiles,
          lesson11::sampled_threshold::Overlap kOverlap = lesson11::sampled_threshold::Overlap::none,
          lesson11::sampled_threshold::Selection kSelection = lesson11::sampled_threshold::Selection::merge,
          unsigned kSeedGroups = 0>
void add_sampled_threshold_row(course::Bench& bench, int k, const std::vector<Pair>& expected,
                               const std::vector<course::DeviceBuffer<float>>& values,
                               course::DeviceBuffer<float>& out_values, course::DeviceBuffer<int>& out_indices,
                               double bytes) {
    const std::size_t count = values[0].size();
    const std::size_t workspace_bytes = lesson11::sampled_threshold::top_k_workspace_bytes<kWarps, kVectors>(count, k);
    course::DeviceBuffer<unsigned char> workspace(workspace_bytes);
    const auto run = [&](int s) {
        lesson11::sampled_threshold::top_k<kWarps, kVectors, kSampleTiles, kOverlap, kSelection, kSeedGroups>(
            values[s].data(), count, k, out_values.data(), out_indices.data(), workspace.data(), workspace_bytes);
    };
    add_top_k_row(bench,
                  "candidate sampled threshold, a sample of " + std::to_string(kSampleTiles) + " x 512 floats" +
                      groups_label(kSeedGroups) + ", then " +
                      overlap_label(kOverlap) + std::to_string(kWarps) + " warps x " +
                      std::to_string(kVectors) + " float4/lane" + selection_label(kSelection) + " (k = " +
                      std::to_string(k) + ")",
                  expected, out_values, out_indices, bytes, run);
}

// The median of `runs` times of `time_one(set)` (each returns ms).
template <class TimeOne>
double median_of(int runs, int sets, const TimeOne& time_one) {
    std::vector<double> ms;
    for (int i = 0; i < runs; ++i) ms.push_back(time_one(i % sets));
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

__global__ void empty_kernel() {}

// Prints (not a row) where a sampled-threshold shape's time goes, medians
// of 50 runs with cudaEvents, for the lead: the memset and pre-pass (from
// an event before the call, so the host's time before its first launch is
// in it) and the main pass (Overlap::none's launches, each after the one
// before), the main pass's last block alone (launched again as one block
// over the candidates left, less nothing: an empty launch is printed
// beside it), the candidates, and the host's time for the workspace's
// size (the block counts' occupancy queries, cached) and for one uncached
// occupancy query (each top_k call made about 7 before they were cached).
// kSeedGroups > 0: the group-maxima pre-pass (its one launch, no memset,
// is the "pre-pass" time).
template <unsigned kWarps, unsigned kVectors, unsigned kSampleTiles, lesson11::sampled_threshold::Selection kSelection,
          unsigned kSeedGroups = 0>
void print_breakdown(int k, const std::vector<Pair>& expected, const std::vector<course::DeviceBuffer<float>>& values,
                     course::DeviceBuffer<float>& out_values, course::DeviceBuffer<int>& out_indices) {
    namespace st = lesson11::sampled_threshold;
    constexpr int kRuns = 50;
    const std::size_t count = values[0].size();
    const int sets = static_cast<int>(values.size());
    const std::size_t workspace_bytes = st::top_k_workspace_bytes<kWarps, kVectors>(count, k);
    course::DeviceBuffer<unsigned char> workspace(workspace_bytes);
    cudaEvent_t events[3];
    for (cudaEvent_t& e : events) COURSE_CUDA_CHECK(cudaEventCreate(&e));
    const auto elapsed = [&](int from, int to) {
        float ms = 0;
        COURSE_CUDA_CHECK(cudaEventElapsedTime(&ms, events[from], events[to]));
        return static_cast<double>(ms);
    };
    const auto run = [&](int s) {
        COURSE_CUDA_CHECK(cudaEventRecord(events[0]));
        st::top_k<kWarps, kVectors, kSampleTiles, st::Overlap::none, kSelection, kSeedGroups>(
            values[s].data(), count, k, out_values.data(), out_indices.data(), workspace.data(), workspace_bytes,
            events[1]);
        COURSE_CUDA_CHECK(cudaEventRecord(events[2]));
        COURSE_CUDA_CHECK(cudaEventSynchronize(events[2]));
    };
    for (int s = 0; s < 3; ++s) run(s % sets);  // warm-up
    const double pre_pass = median_of(kRuns, sets, [&](int s) { run(s); return elapsed(0, 1); });
    const double main_pass = median_of(kRuns, sets, [&](int s) { run(s); return elapsed(1, 2); });
    const double whole = median_of(kRuns, sets, [&](int s) { run(s); return elapsed(0, 2); });
    const st::CandidateCount candidates = st::candidate_count(workspace.data());
    const auto launch_timed = [&](const auto& launch) {
        COURSE_CUDA_CHECK(cudaEventRecord(events[0]));
        launch();
        COURSE_CUDA_CHECK(cudaEventRecord(events[2]));
        COURSE_CUDA_CHECK(cudaEventSynchronize(events[2]));
        return elapsed(0, 2);
    };
    run(0);  // the candidates of set 0, whose answer `expected` is
    const double selection = median_of(kRuns, sets, [&](int) {
        return launch_timed([&] {
            st::select_again<kWarps, kVectors, kSelection>(values[0].data(), count, k, out_values.data(),
                                                           out_indices.data(), workspace.data());
        });
    });
    const std::string wrong = compare_first_k(expected, out_values.download(), out_indices.download());
    const double empty = median_of(kRuns, sets, [&](int) {
        return launch_timed([] {
            empty_kernel<<<1, 32>>>();
            COURSE_CUDA_CHECK(cudaGetLastError());
        });
    });
    constexpr int kHostCalls = 1000;
    auto start = std::chrono::steady_clock::now();
    std::size_t sink = 0;
    for (int i = 0; i < kHostCalls; ++i) sink += st::top_k_workspace_bytes<kWarps, kVectors>(count, k);
    const double cached_us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() / kHostCalls;
    start = std::chrono::steady_clock::now();
    for (int i = 0; i < kHostCalls; ++i) {
        int per_sm = 0;
        COURSE_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            &per_sm, st::threshold_filter_kernel<kWarps, kVectors, false, st::Selection::merge>, kWarps * 32, 0));
        sink += static_cast<std::size_t>(per_sm);
    }
    const double query_us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() / kHostCalls;
    std::printf("breakdown, sampled threshold %u x 512 sample%s, %u warps x %u float4/lane%s (k = %d), medians of %d: "
                "%s %.4f ms, main pass %.4f ms, whole %.4f ms; last block's selection alone %.4f ms "
                "(an empty launch %.4f ms%s%s); candidates %u in the buffer + %u lists; host: workspace size %.2f us "
                "a call, one uncached occupancy query %.2f us\n",
                kSampleTiles, groups_label(kSeedGroups).c_str(), kWarps, kVectors, selection_label(kSelection).c_str(),
                k, kRuns, kSeedGroups == 0 ? "memset + pre-pass" : "group-maxima pre-pass (zeroing in it)", pre_pass,
                main_pass,
                whole, selection, empty, wrong.empty() ? "" : "; its answer WRONG: ", wrong.c_str(),
                candidates.appended, candidates.lists, cached_us, query_us);
    (void)sink;
    for (cudaEvent_t e : events) COURSE_CUDA_CHECK(cudaEventDestroy(e));
}

// The first `count` elements of a device array.
template <class T>
std::vector<T> download_first(const T* device, std::size_t count) {
    std::vector<T> host(count);
    COURSE_CUDA_CHECK(cudaDeviceSynchronize());
    COURSE_CUDA_CHECK(cudaMemcpy(host.data(), device, count * sizeof(T), cudaMemcpyDeviceToHost));
    return host;
}

}  // namespace

int main(int argc, char** argv) {
    const std::string csv = argc > 1 ? argv[1] : "lesson11_bench.csv";
    const int n = 1 << 26;
    const std::size_t count = static_cast<std::size_t>(n);
    const double bytes = static_cast<double>(n) * sizeof(float);  // the input read once: the ceiling

    course::Bench bench("11", "top k of 2^26 random floats: selection vs a full sort");
    const int sets = bench.rotation_sets(count * sizeof(float));
    const std::vector<float> host = course::random_values<float>(count, -1.0f, 1.0f, "bench");
    std::vector<course::DeviceBuffer<float>> values;
    for (int s = 0; s < sets; ++s) values.emplace_back(host);

    // The sorts' (value, index) pairs: the indices 0..n-1 as CUB's input
    // values, and room for the sorted keys and values.
    std::vector<int> iota(count);
    std::iota(iota.begin(), iota.end(), 0);
    const course::DeviceBuffer<int> indices(iota);
    course::DeviceBuffer<float> sorted_values(count);
    course::DeviceBuffer<int> sorted_indices(count);
    std::size_t cub_bytes = 0;
    COURSE_CUDA_CHECK(cub::DeviceRadixSort::SortPairsDescending(nullptr, cub_bytes, values[0].data(),
                                                                sorted_values.data(), indices.data(),
                                                                sorted_indices.data(), n));
    course::DeviceBuffer<unsigned char> cub_temp(cub_bytes);
    // Thrust sorts in place: each run copies the values and writes the indices first.
    course::DeviceBuffer<float> thrust_keys(count);
    course::DeviceBuffer<int> thrust_indices(count);

    const auto run_cub = [&](int s) {
        COURSE_CUDA_CHECK(cub::DeviceRadixSort::SortPairsDescending(cub_temp.data(), cub_bytes, values[s].data(),
                                                                    sorted_values.data(), indices.data(),
                                                                    sorted_indices.data(), n));
    };
    const auto run_thrust = [&](int s) {
        COURSE_CUDA_CHECK(cudaMemcpyAsync(thrust_keys.data(), values[s].data(), count * sizeof(float),
                                          cudaMemcpyDeviceToDevice));
        const auto policy = thrust::cuda::par_nosync;
        thrust::sequence(policy, thrust_indices.data(), thrust_indices.data() + n);
        // Stable, so equal values keep the lower index first, like the contract.
        thrust::stable_sort_by_key(policy, thrust_keys.data(), thrust_keys.data() + n, thrust_indices.data(),
                                   thrust::greater<float>());
    };

    for (const int k : {1, 32, 1024}) {
        const std::vector<Pair> expected = lesson11::reference::top_k(host, k);
        std::printf("k = %d: CPU's largest (%.9g, index %d)\n", k, expected[0].value, expected[0].index);
        bench.set_group("k = " + std::to_string(k));

        const std::size_t workspace_bytes = lesson11::top_k_workspace_bytes(count, k);
        course::DeviceBuffer<unsigned char> workspace(workspace_bytes);
        course::DeviceBuffer<float> out_values(static_cast<std::size_t>(k));
        course::DeviceBuffer<int> out_indices(static_cast<std::size_t>(k));
        const auto run_top_k = [&, k](int s) {
            lesson11::top_k(values[s].data(), count, k, out_values.data(), out_indices.data(), workspace.data(),
                            workspace_bytes);
        };
        add_top_k_row(bench, course::implementation_label("top_k") + " (k = " + std::to_string(k) + ")", expected,
                      out_values, out_indices, bytes, run_top_k);

        // The earlier reference, timed the same way: what the current one gained.
        const std::size_t earlier_bytes = lesson11::earlier::top_k_workspace_bytes(count, k);
        course::DeviceBuffer<unsigned char> earlier_workspace(earlier_bytes);
        const auto run_earlier = [&, k](int s) {
            lesson11::earlier::top_k(values[s].data(), count, k, out_values.data(), out_indices.data(),
                                     earlier_workspace.data(), earlier_bytes);
        };
        add_top_k_row(bench, "earlier reference top_k, loads after each barrier (k = " + std::to_string(k) + ")",
                      expected, out_values, out_indices, bytes, run_earlier);

        // Candidates for k <= 32 (issue #22): a warp per slice, no block
        // barrier in the loop, one launch. The lead keeps the fastest.
        if (k <= lesson11::warp_scan::kMaxWarpK) {
            // The two fastest shapes of the 2026-11-26 run (80.0% and 79.3%
            // of copy for k = 1), now with the grid's bound taken from m
            // slots of warp maxima; the other three shapes were 68-75%.
            add_warp_scan_row<8, 8, 2>(bench, k, expected, values, out_values, out_indices, bytes);
            add_warp_scan_row<16, 4, 1>(bench, k, expected, values, out_values, out_indices, bytes);
            // The same two, their bound seeded before the pass by the m-th
            // largest key of an evenly spread sample (2^18 floats, 1/256 of
            // the array), so that for k = 32 the first tiles no longer
            // merge ~155 keys a warp; and a smaller sample (2^16 floats),
            // whose pre-pass is shorter but lets 4 times more keys through.
            add_warp_scan_row<8, 8, 2, 256>(bench, k, expected, values, out_values, out_indices, bytes);
            add_warp_scan_row<16, 4, 1, 512>(bench, k, expected, values, out_values, out_indices, bytes);
            add_warp_scan_row<16, 4, 1, 128>(bench, k, expected, values, out_values, out_indices, bytes);
            // The main candidate (threshold_top_k.cuh): the same seed, then
            // a compare per float and a rare append to one buffer, at the
            // occupancy's full count of warps (57 registers for 4 float4 a
            // lane: 4 blocks of 256 an SM; 48 for 2: 5; 8 float4: more
            // bytes in flight a warp, fewer warps). Samples of 2^18 and
            // 2^20 floats.
            add_sampled_threshold_row<8, 4, 512>(bench, k, expected, values, out_values, out_indices, bytes);
            add_sampled_threshold_row<8, 2, 512>(bench, k, expected, values, out_values, out_indices, bytes);
            add_sampled_threshold_row<8, 8, 512>(bench, k, expected, values, out_values, out_indices, bytes);
            add_sampled_threshold_row<8, 4, 2048>(bench, k, expected, values, out_values, out_indices, bytes);
            // Larger samples (2^20 to 2^22 floats): fewer keys pass, so
            // the last block's selection is shorter, for a longer pre-pass.
            add_sampled_threshold_row<8, 2, 2048>(bench, k, expected, values, out_values, out_indices, bytes);
            add_sampled_threshold_row<8, 2, 4096>(bench, k, expected, values, out_values, out_indices, bytes);
            add_sampled_threshold_row<8, 4, 4096>(bench, k, expected, values, out_values, out_indices, bytes);
            add_sampled_threshold_row<8, 2, 8192>(bench, k, expected, values, out_values, out_indices, bytes);
            // Issue #22's last 1.5%: the fixed costs. The same passes, the
            // main one launched with programmatic dependent launch (Hopper):
            // its blocks are resident and their first loads out while the
            // pre-pass runs, instead of after it and a launch's latency.
            // The best plain shape (8 x 2, 2048 tiles: 69.0% / 68.7%) and
            // its neighbours: half the sample (a shorter pre-pass, twice
            // the candidates), 4 float4 a lane, and for k = 1 a quarter.
            using lesson11::sampled_threshold::Overlap;
            add_sampled_threshold_row<8, 2, 2048, Overlap::main_pass>(bench, k, expected, values, out_values,
                                                                      out_indices, bytes);
            add_sampled_threshold_row<8, 2, 1024, Overlap::main_pass>(bench, k, expected, values, out_values,
                                                                      out_indices, bytes);
            add_sampled_threshold_row<8, 4, 2048, Overlap::main_pass>(bench, k, expected, values, out_values,
                                                                      out_indices, bytes);
            add_sampled_threshold_row<8, 2, 512, Overlap::main_pass>(bench, k, expected, values, out_values,
                                                                     out_indices, bytes);
            // And the memset replaced by a one-block kernel that the
            // pre-pass overlaps in turn: three launches in flight at once.
            add_sampled_threshold_row<8, 2, 2048, Overlap::all>(bench, k, expected, values, out_values, out_indices,
                                                                bytes);
            add_sampled_threshold_row<8, 2, 1024, Overlap::all>(bench, k, expected, values, out_values, out_indices,
                                                                bytes);
            add_sampled_threshold_row<8, 4, 2048, Overlap::all>(bench, k, expected, values, out_values, out_indices,
                                                                bytes);
            add_sampled_threshold_row<8, 2, 512, Overlap::all>(bench, k, expected, values, out_values, out_indices,
                                                               bytes);
            // k = 32's fixed tail (~14 us above k = 1): the last block's
            // selection of 32 of the ~n k / (sample size) candidates by
            // warp merges, one after the other (~8 a warp for 2048 keys),
            // replaced by ranking the few at or above the bound in shared
            // memory; then also the pre-pass's last block (the m-th of its
            // blocks' lists) by rank. A cheaper selection favours smaller
            // samples (shorter pre-pass, more candidates): 512 to 2048.
            using lesson11::sampled_threshold::Selection;
            add_sampled_threshold_row<8, 2, 2048, Overlap::none, Selection::rank>(bench, k, expected, values,
                                                                                  out_values, out_indices, bytes);
            add_sampled_threshold_row<8, 2, 1024, Overlap::none, Selection::rank>(bench, k, expected, values,
                                                                                  out_values, out_indices, bytes);
            add_sampled_threshold_row<8, 2, 512, Overlap::none, Selection::rank>(bench, k, expected, values,
                                                                                 out_values, out_indices, bytes);
            add_sampled_threshold_row<8, 2, 2048, Overlap::all, Selection::rank>(bench, k, expected, values,
                                                                                 out_values, out_indices, bytes);
            add_sampled_threshold_row<8, 2, 1024, Overlap::all, Selection::rank>(bench, k, expected, values,
                                                                                 out_values, out_indices, bytes);
            add_sampled_threshold_row<8, 2, 512, Overlap::all, Selection::rank>(bench, k, expected, values,
                                                                                out_values, out_indices, bytes);
            add_sampled_threshold_row<8, 2, 2048, Overlap::none, Selection::rank_and_rank_seed>(
                bench, k, expected, values, out_values, out_indices, bytes);
            add_sampled_threshold_row<8, 2, 2048, Overlap::all, Selection::rank_and_rank_seed>(
                bench, k, expected, values, out_values, out_indices, bytes);
            add_sampled_threshold_row<8, 2, 1024, Overlap::all, Selection::rank_and_rank_seed>(
                bench, k, expected, values, out_values, out_indices, bytes);
            add_sampled_threshold_row<8, 2, 512, Overlap::all, Selection::rank_and_rank_seed>(
                bench, k, expected, values, out_values, out_indices, bytes);
            // The prologue (~26-30 us of memset + pre-pass on 2026-11-26's
            // H100 for a 4 MB sample) cut to one launch: the group-maxima
            // pre-pass (kSeedGroups blocks of 16 warps, each writing the
            // largest key of its share of the sample; block 0 zeroes the
            // counters), the main pass's blocks taking the m-th largest of
            // the maxima as their threshold. No memset, no pre-pass ticket,
            // list merges or last block. 128 groups: for k = 32 ~1.2 times
            // the candidates of the sample's exact m-th; 32 groups: ~4
            // times, a cheaper seed per block. Samples of 2^19 to 2^21.
            add_sampled_threshold_row<8, 2, 2048, Overlap::none, Selection::rank, 128>(bench, k, expected, values,
                                                                                       out_values, out_indices, bytes);
            add_sampled_threshold_row<8, 2, 2048, Overlap::none, Selection::merge, 128>(bench, k, expected, values,
                                                                                        out_values, out_indices, bytes);
            add_sampled_threshold_row<8, 2, 2048, Overlap::main_pass, Selection::rank, 128>(
                bench, k, expected, values, out_values, out_indices, bytes);
            add_sampled_threshold_row<8, 2, 1024, Overlap::main_pass, Selection::rank, 128>(
                bench, k, expected, values, out_values, out_indices, bytes);
            add_sampled_threshold_row<8, 2, 4096, Overlap::main_pass, Selection::rank, 128>(
                bench, k, expected, values, out_values, out_indices, bytes);
            add_sampled_threshold_row<8, 2, 2048, Overlap::main_pass, Selection::rank, 32>(
                bench, k, expected, values, out_values, out_indices, bytes);
            add_sampled_threshold_row<8, 4, 2048, Overlap::main_pass, Selection::rank, 128>(
                bench, k, expected, values, out_values, out_indices, bytes);
            // Where the time goes (printed, not a row).
            print_breakdown<8, 2, 2048, Selection::merge>(k, expected, values, out_values, out_indices);
            print_breakdown<8, 2, 2048, Selection::rank_and_rank_seed>(k, expected, values, out_values, out_indices);
            print_breakdown<8, 2, 1024, Selection::rank_and_rank_seed>(k, expected, values, out_values, out_indices);
            print_breakdown<8, 2, 2048, Selection::rank, 128>(k, expected, values, out_values, out_indices);
            print_breakdown<8, 2, 1024, Selection::rank, 128>(k, expected, values, out_values, out_indices);
            print_breakdown<8, 2, 2048, Selection::rank, 32>(k, expected, values, out_values, out_indices);
        }

        const auto check_thrust = [&]() -> std::string {
            run_thrust(0);
            COURSE_CUDA_CHECK(cudaGetLastError());
            return compare_first_k(expected, download_first(thrust_keys.data(), expected.size()),
                                   download_first(thrust_indices.data(), expected.size()));
        };
        bench.add_checked("thrust::stable_sort_by_key, then the first k", true, check_thrust, run_thrust, bytes);

        // Added last in the group: the rows of the group are compared with it.
        const auto check_cub = [&]() -> std::string {
            run_cub(0);
            COURSE_CUDA_CHECK(cudaGetLastError());
            return compare_first_k(expected, download_first(sorted_values.data(), expected.size()),
                                   download_first(sorted_indices.data(), expected.size()));
        };
        bench.add_checked("cub::DeviceRadixSort::SortPairsDescending, then the first k", true, check_cub, run_cub,
                          bytes);
    }
    bench.report(csv);
    return 0;
}
