// Lesson 11 benchmark (GPU only): the top k of 2^26 random floats, for
// k = 1, 32 and 1024. Your top_k (or the reference's: per-block candidates
// in shared memory, filtered against a threshold with the next chunk's
// loads in flight, the blocks' sorted lists merged pairwise), the earlier
// reference (earlier_top_k.cuh: the same selection without the prefetch,
// merged by sorting), and sorting everything and keeping the first k:
// cub::DeviceRadixSort::SortPairsDescending of (value, index) pairs, and
// thrust::stable_sort_by_key with thrust::greater. (The reference's own
// path for k <= 32, a sampled threshold, is its top_k row: the candidate
// the 2026-11-26 H100 runs chose among this bench's rows of then,
// group-maxima pre-pass, 2048 x 512 sample, 8 warps x 2 float4, plain
// launches, last block by rank. The candidates it beat, a warp scan with
// its list in registers and the sampled threshold's other shapes, are in
// the git history of tests/11-top-k/, their numbers on the page.) Every
// variant's first k pairs must equal the CPU's std::partial_sort before it
// is timed. Bytes per run are counted as the n floats read once (256 MiB),
// so the "of copy" column says how close a variant comes to the ceiling of
// any top-K: reading its input once at the copy bandwidth.
//
//   lesson11_bench [output.csv]
#include <top_k.hpp>

#include "cpu_reference.hpp"
#include "earlier_top_k.cuh"

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
