// Lesson 12 benchmark (GPU only): sorting 2^24 (key, value) int pairs, keys
// with many ties, three ways that give the same order (ascending key, equal
// keys by ascending value):
// - your sort_pairs_ascending (thrust::sort of a zip_iterator: a comparison
//   sort, since Thrust cannot radix-sort tuples),
// - each pair packed into one 64-bit word, radix-sorted by thrust::sort on
//   plain integers, and unpacked,
// and, as the library baseline, thrust::sort_by_key on the keys alone (a
// radix sort that moves the values along but leaves ties in input order: a
// different answer, the cost of the cheapest pair sort).
// Every run first copies the unsorted pairs into the buffers it sorts (a
// sort is in place): the copy is the same in every row.
//
//   lesson12_bench [output.csv]
#include <thrust_algorithms.hpp>

#include <course/bench.hpp>
#include <course/cuda_check.hpp>
#include <course/device_buffer.hpp>
#include <course/inputs.hpp>

#include <thrust/device_ptr.h>
#include <thrust/execution_policy.h>
#include <thrust/sort.h>
#include <thrust/transform.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace {

constexpr std::size_t kPairs = std::size_t{1} << 24;

// One sortable word per pair: the key's bits (sign flipped, so that unsigned
// order is signed order) above the value's.
struct PackPair {
    __host__ __device__ unsigned long long operator()(int key, int value) const {
        return (static_cast<unsigned long long>(static_cast<unsigned>(key) ^ 0x80000000u) << 32) |
               (static_cast<unsigned>(value) ^ 0x80000000u);
    }
};
struct UnpackKey {
    __host__ __device__ int operator()(unsigned long long word) const {
        return static_cast<int>(static_cast<unsigned>(word >> 32) ^ 0x80000000u);
    }
};
struct UnpackValue {
    __host__ __device__ int operator()(unsigned long long word) const {
        return static_cast<int>(static_cast<unsigned>(word) ^ 0x80000000u);
    }
};

struct Set {
    course::DeviceBuffer<int> keys, values;
    Set() : keys(kPairs), values(kPairs) {}
};

}  // namespace

int main(int argc, char** argv) {
    const std::string csv = argc > 1 ? argv[1] : "lesson12_bench.csv";
    const std::vector<int> keys_in = course::random_values<int>(kPairs, 0, 1023, "bench keys");  // ~16k per key
    const std::vector<int> values_in = course::random_values<int>(kPairs, -1000000000, 1000000000, "bench values");
    std::vector<std::pair<int, int>> expected(kPairs);
    for (std::size_t i = 0; i < kPairs; ++i) expected[i] = {keys_in[i], values_in[i]};
    std::sort(expected.begin(), expected.end());

    // Read and write both arrays once: the least any pair sort moves.
    const double bytes = 4.0 * kPairs * sizeof(int);
    course::Bench bench("12", "sorting 2^24 (int key, int value) pairs, 1024 distinct keys");
    const int sets = bench.rotation_sets(2 * kPairs * sizeof(int));
    const course::DeviceBuffer<int> pristine_keys(keys_in), pristine_values(values_in);
    std::vector<Set> work(static_cast<std::size_t>(sets));
    course::DeviceBuffer<unsigned long long> words(kPairs);

    auto restore = [&](int s) {
        COURSE_CUDA_CHECK(cudaMemcpyAsync(work[s].keys.data(), pristine_keys.data(), kPairs * sizeof(int),
                                          cudaMemcpyDeviceToDevice));
        COURSE_CUDA_CHECK(cudaMemcpyAsync(work[s].values.data(), pristine_values.data(), kPairs * sizeof(int),
                                          cudaMemcpyDeviceToDevice));
    };
    // Runs once on set 0 and compares with the CPU's order (or, for the
    // keys-only baseline, checks sorted keys and the same pairs).
    auto check = [&](const std::function<void(int)>& run, bool ties_in_order) {
        run(0);
        COURSE_CUDA_CHECK(cudaDeviceSynchronize());
        const std::vector<int> k = work[0].keys.download(), v = work[0].values.download();
        if (ties_in_order) {
            for (std::size_t i = 0; i < kPairs; ++i) {
                if (k[i] != expected[i].first || v[i] != expected[i].second) {
                    return "pair " + std::to_string(i) + " differs from the CPU's std::sort";
                }
            }
            return std::string();
        }
        if (!std::is_sorted(k.begin(), k.end())) return std::string("keys not sorted");
        std::multiset<std::pair<int, int>> got;
        for (std::size_t i = 0; i < kPairs; ++i) got.insert({k[i], v[i]});
        if (!std::equal(got.begin(), got.end(), expected.begin())) return std::string("pairs not those of the input");
        return std::string();
    };

    const std::function<void(int)> zip_sort = [&](int s) {
        restore(s);
        lesson12::sort_pairs_ascending(work[s].keys.data(), work[s].values.data(), kPairs);
    };
    const std::function<void(int)> packed_sort = [&](int s) {
        restore(s);
        const auto k = thrust::device_pointer_cast(work[s].keys.data());
        const auto v = thrust::device_pointer_cast(work[s].values.data());
        const auto w = thrust::device_pointer_cast(words.data());
        thrust::transform(k, k + kPairs, v, w, PackPair{});
        thrust::sort(w, w + kPairs);
        thrust::transform(w, w + kPairs, k, UnpackKey{});
        thrust::transform(w, w + kPairs, v, UnpackValue{});
    };
    const std::function<void(int)> keys_only = [&](int s) {
        restore(s);
        const auto k = thrust::device_pointer_cast(work[s].keys.data());
        thrust::sort_by_key(k, k + kPairs, thrust::device_pointer_cast(work[s].values.data()));
    };

    bench.add_checked(course::implementation_label("sort_pairs_ascending") + " (zip_iterator, comparison sort)",
                      false, [&] { return check(zip_sort, true); }, zip_sort, bytes);
    bench.add_checked("pairs packed into 64-bit words, radix sort", false, [&] { return check(packed_sort, true); },
                      packed_sort, bytes);
    bench.add_checked("thrust::sort_by_key, keys only (ties unordered)", true,
                      [&] { return check(keys_only, false); }, keys_only, bytes);
    bench.report(csv);
    return 0;
}
