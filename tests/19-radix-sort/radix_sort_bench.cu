// Lesson 19 benchmark (GPU only): sorting 2^26 (uint32 key, uint32 value)
// pairs with uniform random keys, and the 2^26 keys alone:
// - your sort_pairs / sort_keys (three kernels and a scan per 8-bit pass),
// - cub::DeviceRadixSort::SortPairs / SortKeys (onesweep: one kernel per
//   pass with decoupled look-back over the digit counts), the baselines,
// - thrust::sort_by_key (CUB's radix sort underneath; it sorts in place, so
//   each run first restores the input: two copies more than the others).
// GB/s counts what an LSD sort of 4 passes moves at least: each pass reads
// and writes every key (and value), 2 x 4 x (4 + 4) bytes per pair.
// Every variant is checked first: sorted keys, each value the input position
// of its key, equal keys in input order (stable).
//
//   lesson19_bench [output.csv]
#include <radix_sort.hpp>

#include <course/bench.hpp>
#include <course/cuda_check.hpp>
#include <course/device_buffer.hpp>
#include <course/inputs.hpp>

#include <cub/device/device_radix_sort.cuh>
#include <thrust/device_ptr.h>
#include <thrust/execution_policy.h>
#include <thrust/sort.h>

#include <cstddef>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

namespace {

constexpr std::size_t kPairs = std::size_t{1} << 26;
constexpr int kPasses = 4;

struct OutputSet {
    course::DeviceBuffer<unsigned> keys, values;
    OutputSet() : keys(kPairs), values(kPairs) {}
};

// "" when (keys, values) is the stable sort of (input, 0 .. n-1).
std::string check_pairs(const std::vector<unsigned>& input, const std::vector<unsigned>& keys,
                        const std::vector<unsigned>& values) {
    std::vector<char> seen(kPairs, 0);
    for (std::size_t j = 0; j < kPairs; ++j) {
        const unsigned from = values[j];
        if (from >= kPairs || seen[from] != 0) return "values_out is not a permutation (at " + std::to_string(j) + ")";
        seen[from] = 1;
        if (input[from] != keys[j]) return "value " + std::to_string(j) + " did not move with its key";
        if (j > 0 && (keys[j - 1] > keys[j] || (keys[j - 1] == keys[j] && values[j - 1] > from))) {
            return "not a stable ascending order at " + std::to_string(j);
        }
    }
    return "";
}

// "" when `keys` equals the reference keys.
std::string check_keys(const std::vector<unsigned>& expected, const std::vector<unsigned>& keys) {
    for (std::size_t j = 0; j < kPairs; ++j) {
        if (expected[j] != keys[j]) return "key " + std::to_string(j) + " differs from the sorted keys";
    }
    return "";
}

}  // namespace

int main(int argc, char** argv) {
    const std::string csv = argc > 1 ? argv[1] : "lesson19_bench.csv";
    const std::vector<unsigned> keys_in = course::random_values<unsigned>(kPairs, 0u, 0xffffffffu, "bench keys");
    std::vector<unsigned> positions(kPairs);
    std::iota(positions.begin(), positions.end(), 0u);
    const course::DeviceBuffer<unsigned> d_keys(keys_in), d_values(positions);

    course::Bench bench("19", "radix sort of 2^26 uint32 keys, alone and with uint32 values (uniform keys)");
    const int sets = bench.rotation_sets(2 * kPairs * sizeof(unsigned));
    std::vector<OutputSet> out(static_cast<std::size_t>(sets));

    // CUB's temporary storage, sized once for the largest of its calls.
    std::size_t pairs_temp = 0, keys_temp = 0;
    COURSE_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, pairs_temp, d_keys.data(), out[0].keys.data(),
                                                      d_values.data(), out[0].values.data(), kPairs));
    COURSE_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, keys_temp, d_keys.data(), out[0].keys.data(), kPairs));
    course::DeviceBuffer<unsigned char> cub_temp(std::max(pairs_temp, keys_temp));

    const std::function<void(int)> ours_pairs = [&](int s) {
        lesson19::sort_pairs(d_keys.data(), d_values.data(), out[s].keys.data(), out[s].values.data(), kPairs);
    };
    const std::function<void(int)> cub_pairs = [&](int s) {
        std::size_t bytes = cub_temp.size();
        COURSE_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(cub_temp.data(), bytes, d_keys.data(), out[s].keys.data(),
                                                          d_values.data(), out[s].values.data(), kPairs));
    };
    const std::function<void(int)> thrust_pairs = [&](int s) {
        COURSE_CUDA_CHECK(cudaMemcpyAsync(out[s].keys.data(), d_keys.data(), kPairs * sizeof(unsigned),
                                          cudaMemcpyDeviceToDevice));
        COURSE_CUDA_CHECK(cudaMemcpyAsync(out[s].values.data(), d_values.data(), kPairs * sizeof(unsigned),
                                          cudaMemcpyDeviceToDevice));
        const auto k = thrust::device_pointer_cast(out[s].keys.data());
        thrust::sort_by_key(thrust::device, k, k + kPairs, thrust::device_pointer_cast(out[s].values.data()));
    };
    const std::function<void(int)> ours_keys = [&](int s) {
        lesson19::sort_keys(d_keys.data(), out[s].keys.data(), kPairs);
    };
    const std::function<void(int)> cub_keys = [&](int s) {
        std::size_t bytes = cub_temp.size();
        COURSE_CUDA_CHECK(
            cub::DeviceRadixSort::SortKeys(cub_temp.data(), bytes, d_keys.data(), out[s].keys.data(), kPairs));
    };

    // Runs a pair sort once on set 0 and checks it; keeps CUB's keys for the keys-only checks.
    std::vector<unsigned> sorted_keys;
    const auto check_pair_sort = [&](const std::function<void(int)>& run) {
        out[0].keys.poison();
        out[0].values.poison();
        run(0);
        COURSE_CUDA_CHECK(cudaDeviceSynchronize());
        const std::vector<unsigned> k = out[0].keys.download();
        std::string wrong = check_pairs(keys_in, k, out[0].values.download());
        if (wrong.empty() && sorted_keys.empty()) sorted_keys = k;
        return wrong;
    };
    const auto check_key_sort = [&](const std::function<void(int)>& run) {
        out[0].keys.poison();
        run(0);
        COURSE_CUDA_CHECK(cudaDeviceSynchronize());
        if (sorted_keys.empty()) return std::string("no verified pair sort to compare with");
        return check_keys(sorted_keys, out[0].keys.download());
    };

    const double pair_bytes = 2.0 * kPasses * kPairs * (sizeof(unsigned) + sizeof(unsigned));
    const double key_bytes = 2.0 * kPasses * kPairs * sizeof(unsigned);
    bench.set_group("pairs");
    bench.add_checked("cub::DeviceRadixSort::SortPairs", true, [&] { return check_pair_sort(cub_pairs); }, cub_pairs,
                      pair_bytes);
    bench.add_checked(course::implementation_label("sort_pairs"), false, [&] { return check_pair_sort(ours_pairs); },
                      ours_pairs, pair_bytes);
    bench.add_checked("thrust::sort_by_key (in place: + 2 copies)", false,
                      [&] { return check_pair_sort(thrust_pairs); }, thrust_pairs, pair_bytes);
    bench.set_group("keys");
    bench.add_checked("cub::DeviceRadixSort::SortKeys", true, [&] { return check_key_sort(cub_keys); }, cub_keys,
                      key_bytes);
    bench.add_checked(course::implementation_label("sort_keys"), false, [&] { return check_key_sort(ours_keys); },
                      ours_keys, key_bytes);
    bench.report(csv);
    return 0;
}
