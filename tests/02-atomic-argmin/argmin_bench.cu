// Lesson 02 benchmark (GPU only): argmin over 2^26 floats. Your launch_argmin
// (or the reference's) against one atomicCAS update per element as in Seo's
// argmin article (docs/sources.md), a best per thread with one atomicCAS per
// thread (the earlier reference), CUB's DeviceReduce::ArgMin and
// thrust::min_element,
// against the measured
// device-to-device copy bandwidth. Every variant is checked against the CPU
// before it is timed.
//
//   lesson02_bench [output.csv]
#include <argmin.hpp>

#include "cpu_reference.hpp"

#include <course/backend.hpp>
#include <course/bench.hpp>
#include <course/device_buffer.hpp>
#include <course/inputs.hpp>

#include <cub/device/device_reduce.cuh>
#include <cuda/std/cstdint>
#include <thrust/execution_policy.h>
#include <thrust/extrema.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace {

constexpr int kThreads = 256;

__device__ float value_of(unsigned long long packed) { return __uint_as_float(static_cast<unsigned>(packed >> 32)); }

__device__ unsigned long long packed_pair(float value, int index) {
    return (static_cast<unsigned long long>(__float_as_uint(value)) << 32) | static_cast<unsigned>(index);
}

// The old/assumed CAS loop of the lesson (one CAS per uncontended win).
__device__ void cas_min(unsigned long long* slot, unsigned long long mine) {
    const float value = value_of(mine);
    unsigned long long old = *slot;
    while (old == lesson02::kEmptyArgmin || value < value_of(old)) {
        const unsigned long long assumed = old;
        old = atomicCAS(slot, assumed, mine);
        if (old == assumed) return;
    }
}

// The shape of Seo's argmin article: one thread per element, each element
// offered to the shared word (a load of the word, and a CAS when it wins).
__global__ void argmin_cas_per_element(int n, const float* values, unsigned long long* result) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) cas_min(result, packed_pair(values[i], i));
}

// The lesson's simple first step and the earlier reference: grid-stride with a
// best per thread, then one CAS update per thread. The reference solution
// adds float4 loads and a warp-shuffle step before one CAS per warp; this row
// shows what that step is worth on the same GPU.
__global__ void argmin_best_per_thread(int n, const float* values, unsigned long long* result) {
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    unsigned long long best = lesson02::kEmptyArgmin;
    for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < static_cast<size_t>(n);
         i += stride) {
        const float v = values[i];
        if (best == lesson02::kEmptyArgmin || v < value_of(best)) best = packed_pair(v, static_cast<int>(i));
    }
    if (best != lesson02::kEmptyArgmin) cas_min(result, best);
}

// A fresh search starts from the empty word: part of every timed run of the
// atomic variants (a one-thread kernel, a few microseconds).
__global__ void store_empty(unsigned long long* result) { *result = lesson02::kEmptyArgmin; }

// One variant: `run(set)` computes the argmin of buffer set `set` and
// `read()` returns the (value, index) it found for the last run.
struct Variant {
    std::string name;
    std::function<void(int)> run;
    std::function<lesson02::host::ValueIndex()> read;
    bool library;
};

// Runs `v` once on set 0 and compares its answer with the CPU's minimum:
// returns "" when the value is the minimum and the index holds it, otherwise
// why the variant will not be timed.
std::string check_against_cpu(const Variant& v, const std::vector<float>& host, float minimum) {
    v.run(0);  // a failing call throws; Bench::add_checked reports it
    COURSE_CUDA_CHECK(cudaGetLastError());
    COURSE_CUDA_CHECK(cudaDeviceSynchronize());
    const lesson02::host::ValueIndex got = v.read();
    const bool index_holds_it = got.index >= 0 && static_cast<std::size_t>(got.index) < host.size() &&
                                host[static_cast<std::size_t>(got.index)] == got.value;
    if (got.value == minimum && index_holds_it) return "";
    return "wrong result (value " + std::to_string(got.value) + ", index " + std::to_string(got.index) +
           "; the CPU's minimum is " + std::to_string(minimum) + ")";
}

}  // namespace

int main(int argc, char** argv) {
    const std::string csv = argc > 1 ? argv[1] : "lesson02_bench.csv";
    const int n = 1 << 26;
    const double bytes = static_cast<double>(n) * sizeof(float);  // every value read once

    course::Bench bench("02", "argmin over 2^26 floats");
    const int sets = bench.rotation_sets(static_cast<std::size_t>(n) * sizeof(float));
    std::vector<course::DeviceBuffer<float>> values;
    std::vector<float> host_set0;
    for (int s = 0; s < sets; ++s) {
        std::vector<float> host = course::random_values<float>(static_cast<std::size_t>(n), -1.0f, 1.0f,
                                                               "lesson02 bench set " + std::to_string(s));
        values.emplace_back(host);
        if (s == 0) host_set0 = std::move(host);
    }
    const lesson02::reference::Extremum expected = lesson02::reference::argmin(host_set0);

    const int sms = course::sm_count();

    course::DeviceBuffer<unsigned long long> packed(1);
    const auto read_packed = [&] { return lesson02::host::unpack_value_index(packed.download()[0]); };

    course::DeviceBuffer<float> cub_value(1);
    course::DeviceBuffer<cuda::std::int64_t> cub_index(1);
    std::size_t cub_temp_bytes = 0;
    COURSE_CUDA_CHECK(cub::DeviceReduce::ArgMin(nullptr, cub_temp_bytes, values[0].data(), cub_value.data(),
                                                cub_index.data(), n));
    course::DeviceBuffer<unsigned char> cub_temp(std::max<std::size_t>(cub_temp_bytes, 1));

    long long thrust_index = -1;

    // The shape is chosen once, as a caller would: its occupancy query is host
    // work that would otherwise sit inside every timed run.
    const course::LaunchShape shape = lesson02::argmin_launch_shape(n);
    std::vector<Variant> variants;
    variants.push_back({course::implementation_label("launch_argmin"),
                        [&](int s) {
                            store_empty<<<1, 1>>>(packed.data());
                            lesson02::launch_argmin(shape, n, values[s].data(), packed.data());
                        },
                        read_packed, false});
    variants.push_back({"one CAS update per element (Seo's argmin article)",
                        [&](int s) {
                            store_empty<<<1, 1>>>(packed.data());
                            argmin_cas_per_element<<<(n + kThreads - 1) / kThreads, kThreads>>>(
                                n, values[s].data(), packed.data());
                        },
                        read_packed, false});
    variants.push_back({"best per thread + one CAS per thread, SMs x 8 (the earlier reference)",
                        [&](int s) {
                            store_empty<<<1, 1>>>(packed.data());
                            argmin_best_per_thread<<<sms * 8, kThreads>>>(n, values[s].data(), packed.data());
                        },
                        read_packed, false});
    variants.push_back({"CUB DeviceReduce::ArgMin",
                        [&](int s) {
                            COURSE_CUDA_CHECK(cub::DeviceReduce::ArgMin(cub_temp.data(), cub_temp_bytes,
                                                                        values[s].data(), cub_value.data(),
                                                                        cub_index.data(), n));
                        },
                        [&] {
                            return lesson02::host::ValueIndex{cub_value.download()[0],
                                                              static_cast<int>(cub_index.download()[0])};
                        },
                        true});
    variants.push_back({"thrust::min_element",
                        [&](int s) {
                            const float* first = values[s].data();
                            thrust_index = thrust::min_element(thrust::device, first, first + n) - first;
                        },
                        [&] {
                            return lesson02::host::ValueIndex{host_set0[static_cast<std::size_t>(thrust_index)],
                                                              static_cast<int>(thrust_index)};
                        },
                        false});

    for (const Variant& v : variants) {
        bench.add_checked(v.name, v.library, [&] { return check_against_cpu(v, host_set0, expected.value); }, v.run,
                          bytes);
    }
    bench.report(csv);
    return 0;
}
