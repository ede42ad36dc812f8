// Lesson 09 benchmark (GPU only): the 256-bin histogram of 2^28 bytes,
// uniform and all equal. Your histogram_bytes (or the reference's) against
// two baselines written here, one global atomicAdd per byte and a
// privatised kernel as in Tim's five-kernels article, docs/sources.md (one
// byte per step, one shared bin per thread), and
// cub::DeviceHistogram::HistogramEven, against the measured device-to-device
// copy bandwidth. Every variant's bins must equal the CPU's before it is
// timed.
//
//   lesson09_bench [output.csv]
#include <histogram.hpp>

#include <course/backend.hpp>
#include <course/bench.hpp>
#include <course/device_buffer.hpp>
#include <course/inputs.hpp>

#include <cub/device/device_histogram.cuh>

#include <cstddef>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace {

constexpr unsigned kBins = 256;

// Baseline 1: every byte is one atomic on global memory.
__global__ void global_atomic_bytes(const unsigned char* data, std::size_t n, unsigned* bins) {
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
        atomicAdd(&bins[data[i]], 1u);
    }
}

// Baseline 2: privatised in shared memory the way Tim's five-kernels article
// writes it: one byte per step, and the block size equal to the bin count
// (256), so that thread t zeroes and flushes bin t.
__global__ void bin_per_thread_bytes(const unsigned char* data, std::size_t n, unsigned* bins) {
    __shared__ unsigned block_bins[kBins];
    block_bins[threadIdx.x] = 0;
    __syncthreads();
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
        atomicAdd(&block_bins[data[i]], 1u);
    }
    __syncthreads();
    atomicAdd(&bins[threadIdx.x], block_bins[threadIdx.x]);
}

struct Input {
    std::string name;
    std::vector<unsigned> expected;
    std::vector<course::DeviceBuffer<unsigned char>> sets;
};

}  // namespace

int main(int argc, char** argv) {
    const std::string csv = argc > 1 ? argv[1] : "lesson09_bench.csv";
    const std::size_t n = std::size_t{1} << 28;
    const double bytes = static_cast<double>(n);  // every byte read once (the bins are negligible)

    course::Bench bench("09", "256-bin histogram of 2^28 bytes, uniform and all equal");
    const int sets = bench.rotation_sets(n);

    std::vector<Input> inputs;
    {
        const std::vector<int> drawn = course::random_values<int>(n, 0, 255, "bench uniform");
        std::vector<unsigned char> host(drawn.begin(), drawn.end());
        Input uniform{"uniform", std::vector<unsigned>(kBins, 0), {}};
        for (const unsigned char b : host) ++uniform.expected[b];
        for (int s = 0; s < sets; ++s) uniform.sets.emplace_back(host);
        inputs.push_back(std::move(uniform));
    }
    {
        const std::vector<unsigned char> host(n, 42);
        Input equal{"all equal", std::vector<unsigned>(kBins, 0), {}};
        equal.expected[42] = static_cast<unsigned>(n);
        for (int s = 0; s < sets; ++s) equal.sets.emplace_back(host);
        inputs.push_back(std::move(equal));
    }
    course::DeviceBuffer<unsigned> bins(kBins);

    std::size_t cub_bytes = 0;
    COURSE_CUDA_CHECK(cub::DeviceHistogram::HistogramEven(nullptr, cub_bytes, inputs[0].sets[0].data(), bins.data(),
                                                          static_cast<int>(kBins + 1), 0, static_cast<int>(kBins),
                                                          static_cast<int>(n)));
    course::DeviceBuffer<unsigned char> cub_temp(cub_bytes);

    const unsigned wave = static_cast<unsigned>(course::sm_count()) * 8;  // 8 blocks of 256 per SM

    for (Input& input : inputs) {
        struct Variant {
            std::string name;
            std::function<void(int)> run;  // one run on buffer set s, into `bins`
            bool library;
        };
        bench.set_group(input.name);  // each input's rows are compared with CUB on the same input
        const std::string suffix = " (" + input.name + ")";
        std::vector<Variant> variants;
        variants.push_back({course::implementation_label("histogram_bytes") + suffix, [&](int s) {
                                lesson09::histogram_bytes(input.sets[s].data(), n, bins.data());
                            }, false});
        variants.push_back({"global atomicAdd per byte <<<SMs x 8, 256>>>" + suffix, [&](int s) {
                                COURSE_CUDA_CHECK(cudaMemsetAsync(bins.data(), 0, kBins * sizeof(unsigned)));
                                global_atomic_bytes<<<wave, 256>>>(input.sets[s].data(), n, bins.data());
                            }, false});
        variants.push_back({"shared bins as in Tim's article, 1 byte per step" + suffix, [&](int s) {
                                COURSE_CUDA_CHECK(cudaMemsetAsync(bins.data(), 0, kBins * sizeof(unsigned)));
                                bin_per_thread_bytes<<<wave, kBins>>>(input.sets[s].data(), n, bins.data());
                            }, false});
        variants.push_back({"cub::DeviceHistogram::HistogramEven" + suffix, [&](int s) {
                                COURSE_CUDA_CHECK(cub::DeviceHistogram::HistogramEven(
                                    cub_temp.data(), cub_bytes, input.sets[s].data(), bins.data(),
                                    static_cast<int>(kBins + 1), 0, static_cast<int>(kBins), static_cast<int>(n)));
                            }, true});
        for (const Variant& v : variants) {
            const auto check = [&]() -> std::string {
                bins.poison();
                v.run(0);
                COURSE_CUDA_CHECK(cudaGetLastError());
                const std::vector<unsigned> got = bins.download();
                for (unsigned b = 0; b < kBins; ++b) {
                    if (got[b] != input.expected[b]) {
                        return "wrong count in bin " + std::to_string(b) + ": " + std::to_string(got[b]) +
                               ", expected " + std::to_string(input.expected[b]);
                    }
                }
                return "";
            };
            bench.add_checked(v.name, v.library, check, v.run, bytes);
        }
        std::printf("%s: checked against the CPU's counts\n", input.name.c_str());
    }
    bench.report(csv);
    return 0;
}
