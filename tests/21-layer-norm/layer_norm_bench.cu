// Lesson 21 benchmark (GPU only): layer norm of 2^26 values as 65536 rows of
// 1024 (a batch of tokens of a mid-sized model) and 16384 rows of 4096, in
// float and in half, against the device-to-device copy (the ceiling: a layer
// norm reads x once and writes y once) and an unfused version that computes
// the statistics in one kernel and normalises in a second, reading x twice
// from memory. No CUDA library of the course's toolkit has a layer norm
// (cuDNN's needs its graph API; PyTorch's and Apex's are not installed), so
// the copy is the measure. Every variant is checked against the CPU's
// layer norm, within the tests' tolerance, before it is timed. Built with
// the reference, the bench also times the reference's earlier and candidate
// configurations of issue #20 (half rows below 85% of copy), each as its own
// row: see layer_norm_candidates in solutions/21-layer-norm/layer_norm.cu.
//
//   lesson21_bench [output.csv]
#include <layer_norm.hpp>

#include "cpu_reference.hpp"

#include <course/bench.hpp>
#include <course/device_buffer.hpp>
#include <course/inputs.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>
#include <cuda_fp16.h>

#ifdef COURSE_BENCH_OF_REFERENCE
namespace lesson21 {
// Defined by the reference only (solutions/21-layer-norm/layer_norm.cu):
// other configurations of its kernels, numbered 0 to layer_norm_candidates()
// - 1; a candidate's name, "" where it does not take this type and row
// length; and its launch (vectorized rows only, eps = kDefaultEps).
int layer_norm_candidates();
std::string layer_norm_candidate_name(int candidate, bool half, int cols);
void layer_norm_candidate(int candidate, const float* x, const float* gamma, const float* beta, float* y,
                          float* mean, float* rstd, int rows, int cols);
void layer_norm_candidate(int candidate, const __half* x, const float* gamma, const float* beta, __half* y,
                          float* mean, float* rstd, int rows, int cols);
}  // namespace lesson21
#endif

namespace {

namespace reference = lesson21_reference;

__device__ float to_float(float v) { return v; }
__device__ float to_float(__half v) { return __half2float(v); }
__device__ void store(float* p, float v) { *p = v; }
__device__ void store(__half* p, float v) { *p = __float2half_rn(v); }

// The unfused baseline, kernel 1: a warp per row, two passes over the row
// (the sum, then the squared deviations from the mean), shuffles to reduce.
template <class T>
__global__ void row_statistics(const T* x, float* mean, float* rstd, int rows, int cols, float eps) {
    const int warps = static_cast<int>(blockDim.x / 32);
    const int row = static_cast<int>(blockIdx.x) * warps + static_cast<int>(threadIdx.x / 32);
    const int lane = static_cast<int>(threadIdx.x % 32);
    if (row >= rows) return;  // a whole warp leaves together
    const T* xr = x + static_cast<std::size_t>(row) * cols;
    float sum = 0.0f;
    for (int c = lane; c < cols; c += 32) sum += to_float(xr[c]);
    for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
    const float m = sum / static_cast<float>(cols);
    float m2 = 0.0f;
    for (int c = lane; c < cols; c += 32) m2 += (to_float(xr[c]) - m) * (to_float(xr[c]) - m);
    for (int offset = 16; offset > 0; offset /= 2) m2 += __shfl_xor_sync(0xffffffffu, m2, offset);
    if (lane == 0) {
        mean[row] = m;
        rstd[row] = rsqrtf(m2 / static_cast<float>(cols) + eps);
    }
}

// Kernel 2: one thread per value, x read again from memory.
template <class T>
__global__ void normalise(const T* x, const float* gamma, const float* beta, const float* mean, const float* rstd,
                          T* y, int rows, int cols) {
    const std::size_t count = static_cast<std::size_t>(rows) * cols;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        const std::size_t r = i / static_cast<std::size_t>(cols), c = i % static_cast<std::size_t>(cols);
        store(y + i, (to_float(x[i]) - mean[r]) * rstd[r] * gamma[c] + beta[c]);
    }
}

template <class T>
void add_shape(course::Bench& bench, int rows, int cols, int sets) {
    constexpr bool kHalf = std::is_same_v<T, __half>;
    const std::string type = kHalf ? "half" : "float";
    const std::size_t count = static_cast<std::size_t>(rows) * cols;
    const std::string label = std::to_string(rows) + " x " + std::to_string(cols) + " " + type;

    std::vector<float> x = course::random_values<float>(count, -1.0f, 1.0f, "bench " + label);
    std::vector<T> host(count);
    for (std::size_t i = 0; i < count; ++i) {
        if constexpr (kHalf) {
            __half_raw raw;
            raw.x = reference::half_bits(x[i]);
            x[i] = reference::half_value(raw.x);
            host[i] = __half(raw);
        } else {
            host[i] = x[i];
        }
    }
    const std::vector<float> gamma = course::random_values<float>(cols, 0.5f, 1.5f, "bench gamma");
    const std::vector<float> beta = course::random_values<float>(cols, -1.0f, 1.0f, "bench beta");
    const reference::Expected expected = reference::layer_norm(x, gamma, beta, rows, cols, lesson21::kDefaultEps, kHalf);

    std::vector<course::DeviceBuffer<T>> in;
    for (int s = 0; s < sets; ++s) in.emplace_back(host);
    course::DeviceBuffer<T> y(count);
    course::DeviceBuffer<float> d_gamma(gamma), d_beta(beta), mean(rows), rstd(rows);
    const double bytes = 2.0 * static_cast<double>(count) * sizeof(T);  // x read once, y written once

    const auto verify = [&]() -> std::string {
        const std::vector<T> got = y.download();
        for (std::size_t i = 0; i < count; ++i) {
            float v;
            if constexpr (kHalf) {
                v = reference::half_value(static_cast<__half_raw>(got[i]).x);
            } else {
                v = got[i];
            }
            if (!(std::fabs(v - expected.y[i]) <= expected.y_tol[i])) {
                return "y[" + std::to_string(i) + "] = " + std::to_string(v) + ", expected " +
                       std::to_string(expected.y[i]);
            }
        }
        return "";
    };
    struct Variant {
        std::string name;
        std::function<void(int)> run;
    };
    std::vector<Variant> variants{
        {course::implementation_label("layer_norm") + ", " + label,
         [&](int s) {
             lesson21::layer_norm(in[s].data(), d_gamma.data(), d_beta.data(), y.data(), mean.data(), rstd.data(),
                                  rows, cols);
         }},
        {"unfused: statistics kernel, then normalise kernel, " + label,
         [&](int s) {
             row_statistics<T><<<(rows + 7) / 8, 256>>>(in[s].data(), mean.data(), rstd.data(), rows, cols,
                                                         lesson21::kDefaultEps);
             COURSE_CUDA_CHECK(cudaGetLastError());
             normalise<T><<<132 * 16, 256>>>(in[s].data(), d_gamma.data(), d_beta.data(), mean.data(), rstd.data(),
                                             y.data(), rows, cols);
             COURSE_CUDA_CHECK(cudaGetLastError());
         }},
    };
#ifdef COURSE_BENCH_OF_REFERENCE
    for (int k = 0; k < lesson21::layer_norm_candidates(); ++k) {
        const std::string name = lesson21::layer_norm_candidate_name(k, kHalf, cols);
        if (name.empty()) continue;
        variants.insert(variants.end() - 1,  // before the unfused baseline
                        {name + ", " + label, [&, k](int s) {
                             lesson21::layer_norm_candidate(k, in[s].data(), d_gamma.data(), d_beta.data(), y.data(),
                                                            mean.data(), rstd.data(), rows, cols);
                         }});
    }
#endif
    bench.set_group(label);
    for (const Variant& v : variants) {
        const auto check = [&]() -> std::string {
            y.poison();
            v.run(0);
            COURSE_CUDA_CHECK(cudaGetLastError());
            return verify();
        };
        bench.add_checked(v.name, false, check, v.run, bytes);
    }
    std::printf("%s: checked against the CPU's layer norm\n", label.c_str());
}

}  // namespace

int main(int argc, char** argv) {
    const std::string csv = argc > 1 ? argv[1] : "lesson21_bench.csv";
    course::Bench bench("21", "layer norm of 2^26 values: 65536 x 1024 and 16384 x 4096, float and half");
    const int sets = bench.rotation_sets((std::size_t{1} << 26) * sizeof(float));
    add_shape<float>(bench, 65536, 1024, sets);
    add_shape<float>(bench, 16384, 4096, sets);
    add_shape<__half>(bench, 65536, 1024, sets);
    add_shape<__half>(bench, 16384, 4096, sets);
    bench.report(csv);
    return 0;
}
