// Lesson 03 benchmark (GPU only): argmin over 2^26 floats drawn from the
// integers 0..10000 (the minimum 0 repeats thousands of times). Your
// launch_argmin (or the reference's: reduce in registers and warps, one CAS
// per warp) and launch_argmin_key, against one atomic per element (a CAS
// loop with the tie rule, and a 64-bit atomicMin on the ordered key),
// cub::DeviceReduce::ArgMin and thrust::min_element. Every variant must
// return the CPU's (value, index), which is also CUB's, before it is timed.
//
//   lesson03_bench [output.csv]
#include <argmin_ties.hpp>

#include "cpu_reference.hpp"

#include <course/backend.hpp>
#include <course/bench.hpp>
#include <course/device_buffer.hpp>
#include <course/inputs.hpp>

#include <cub/device/device_reduce.cuh>
#include <cuda/std/cstdint>
#include <thrust/execution_policy.h>
#include <thrust/extrema.h>

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace {

using lesson03::ArgResult;

constexpr int kThreads = 256;

// One atomic per element: every thread offers every element of its
// grid-stride share straight to the global word, with the full (value,
// index) order in the CAS loop's exit test.
__global__ void argmin_cas_per_element(int n, const float* values, ArgResult* result) {
    auto* word = reinterpret_cast<unsigned long long*>(result);
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < static_cast<size_t>(n);
         i += stride) {
        const float v = values[i];
        const unsigned long long mine = (static_cast<unsigned long long>(i) << 32) | __float_as_uint(v);
        unsigned long long seen = *word;
        for (;;) {
            const float seen_value = __uint_as_float(static_cast<unsigned>(seen));
            const unsigned seen_index = static_cast<unsigned>(seen >> 32);
            const bool wins = v < seen_value || (v == seen_value && static_cast<unsigned>(i) < seen_index);
            if (!wins) break;
            const unsigned long long before = atomicCAS(word, seen, mine);
            if (before == seen) break;
            seen = before;
        }
    }
}

// One 64-bit atomicMin per element on the order-preserving key (no NaN in
// this input, so none is skipped; -0 does not occur either).
__global__ void argmin_key_per_element(int n, const float* values, unsigned long long* key) {
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < static_cast<size_t>(n);
         i += stride) {
        const unsigned bits = __float_as_uint(values[i]);
        const unsigned ordered = (bits & 0x80000000u) != 0 ? ~bits : bits | 0x80000000u;
        atomicMin(key, (static_cast<unsigned long long>(ordered) << 32) | i);
    }
}

__global__ void key_to_result(const float* values, ArgResult* result) {
    const unsigned long long key = *reinterpret_cast<const unsigned long long*>(result);
    const int index = static_cast<int>(key & 0xffffffffull);
    *result = ArgResult{index < 0 ? INFINITY : values[index], index};
}

}  // namespace

int main(int argc, char** argv) {
    const std::string csv = argc > 1 ? argv[1] : "lesson03_bench.csv";
    const int n = 1 << 26;
    const double bytes = static_cast<double>(n) * sizeof(float);  // every element read once

    course::Bench bench("03", "argmin with deterministic ties over 2^26 floats (integers 0..10000)");
    const int sets = bench.rotation_sets(static_cast<std::size_t>(n) * sizeof(float));
    const std::vector<int> drawn = course::random_values<int>(static_cast<std::size_t>(n), 0, 10000, "bench");
    const std::vector<float> host(drawn.begin(), drawn.end());
    const ArgResult expected = lesson03::reference::argmin(host);
    std::vector<course::DeviceBuffer<float>> values;
    for (int s = 0; s < sets; ++s) values.emplace_back(host);
    course::DeviceBuffer<ArgResult> result(1);
    course::DeviceBuffer<float> cub_min(1);
    course::DeviceBuffer<cuda::std::int64_t> cub_index(1);

    const int sms = course::sm_count();
    const unsigned per_element_blocks = static_cast<unsigned>(32 * sms);

    std::size_t cub_bytes = 0;
    COURSE_CUDA_CHECK(cub::DeviceReduce::ArgMin(nullptr, cub_bytes, values[0].data(), cub_min.data(),
                                                cub_index.data(), n));
    course::DeviceBuffer<unsigned char> cub_temp(cub_bytes);

    // CUB's answer first: the index every variant must also return.
    COURSE_CUDA_CHECK(cub::DeviceReduce::ArgMin(cub_temp.data(), cub_bytes, values[0].data(), cub_min.data(),
                                                cub_index.data(), n));
    const long long cub_first = static_cast<long long>(cub_index.download()[0]);
    std::printf("CPU: minimum %g first at index %d (%s CUB's index %lld)\n", expected.value, expected.index,
                cub_first == expected.index ? "equal to" : "DIFFERENT FROM", cub_first);

    struct Variant {
        std::string name;
        std::function<void(int)> run;                // one run on buffer set s, into `result`
        std::function<ArgResult()> answer;           // reads the answer of the last run
        bool library;
    };
    const auto read_result = [&] { return result.download()[0]; };
    ArgResult thrust_answer{};
    std::vector<Variant> variants;
    variants.push_back({course::implementation_label("launch_argmin"), [&](int s) {
                            lesson03::launch_argmin(lesson03::argmin_launch_shape(n), n, values[s].data(),
                                                    result.data());
                        }, read_result, false});
    variants.push_back({course::implementation_label("launch_argmin_key"), [&](int s) {
                            lesson03::launch_argmin_key(lesson03::argmin_launch_shape(n), n, values[s].data(),
                                                        result.data());
                        }, read_result, false});
    variants.push_back({"CAS loop with the tie rule, one per element", [&](int s) {
                            const ArgResult identity{INFINITY, -1};
                            COURSE_CUDA_CHECK(cudaMemcpyAsync(result.data(), &identity, sizeof identity,
                                                              cudaMemcpyHostToDevice));
                            argmin_cas_per_element<<<per_element_blocks, kThreads>>>(n, values[s].data(),
                                                                                     result.data());
                        }, read_result, false});
    variants.push_back({"64-bit atomicMin on the key, one per element", [&](int s) {
                            auto* key = reinterpret_cast<unsigned long long*>(result.data());
                            COURSE_CUDA_CHECK(cudaMemsetAsync(key, 0xff, sizeof *key));
                            argmin_key_per_element<<<per_element_blocks, kThreads>>>(n, values[s].data(), key);
                            key_to_result<<<1, 1>>>(values[s].data(), result.data());
                        }, read_result, false});
    variants.push_back({"cub::DeviceReduce::ArgMin", [&](int s) {
                            COURSE_CUDA_CHECK(cub::DeviceReduce::ArgMin(cub_temp.data(), cub_bytes,
                                                                        values[s].data(), cub_min.data(),
                                                                        cub_index.data(), n));
                        }, [&] {
                            return ArgResult{cub_min.download()[0], static_cast<int>(cub_index.download()[0])};
                        }, true});
    // thrust::min_element returns its position to the host, so each run
    // ends with a synchronisation (included in its time).
    variants.push_back({"thrust::min_element", [&](int s) {
                            const float* first = values[s].data();
                            const float* found = thrust::min_element(thrust::device, first, first + n);
                            thrust_answer = ArgResult{host[static_cast<std::size_t>(found - first)],
                                                      static_cast<int>(found - first)};
                        }, [&] { return thrust_answer; }, false});

    for (const Variant& v : variants) {
        const auto check = [&]() -> std::string {
            v.run(0);
            COURSE_CUDA_CHECK(cudaGetLastError());
            COURSE_CUDA_CHECK(cudaDeviceSynchronize());
            const ArgResult got = v.answer();
            if (got.index == expected.index && got.value == expected.value && got.index == cub_first) return "";
            return "wrong answer: (" + std::to_string(got.value) + ", " + std::to_string(got.index) + "), expected (" +
                   std::to_string(expected.value) + ", " + std::to_string(expected.index) + ")";
        };
        bench.add_checked(v.name, v.library, check, v.run, bytes);
    }
    bench.report(csv);
    return 0;
}
