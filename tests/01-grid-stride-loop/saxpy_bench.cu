// Lesson 01 benchmark (GPU only): SAXPY over 2^26 floats. One thread per
// element against the grid-stride loop at several grid sizes, a float4
// grid-stride loop, your launch_saxpy (or the reference's), and cuBLAS, against the measured
// device-to-device copy bandwidth.
//
//   lesson01_bench [output.csv]
#include <saxpy.hpp>

#include <course/backend.hpp>
#include <course/bench.hpp>
#include <course/cublas_check.hpp>
#include <course/device_buffer.hpp>

#include <cstdio>
#include <string>
#include <vector>

namespace {

constexpr int kThreads = 256;

// One thread per element: the grid must cover the array (the version the
// lesson starts from).
__global__ void saxpy_one_per_element(int n, float a, const float* x, float* y) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

__global__ void saxpy_grid_stride(int n, float a, const float* x, float* y) {
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < static_cast<size_t>(n);
         i += stride) {
        y[i] = a * x[i] + y[i];
    }
}

// Four elements per load and store (16-byte accesses), then the tail of n % 4.
__global__ void saxpy_grid_stride_float4(int n, float a, const float* x, float* y) {
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    const size_t first = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const size_t quads = static_cast<size_t>(n) / 4;
    const float4* x4 = reinterpret_cast<const float4*>(x);
    float4* y4 = reinterpret_cast<float4*>(y);
    for (size_t i = first; i < quads; i += stride) {
        const float4 xv = x4[i];
        float4 yv = y4[i];
        yv.x = a * xv.x + yv.x;
        yv.y = a * xv.y + yv.y;
        yv.z = a * xv.z + yv.z;
        yv.w = a * xv.w + yv.w;
        y4[i] = yv;
    }
    for (size_t i = quads * 4 + first; i < static_cast<size_t>(n); i += stride) y[i] = a * x[i] + y[i];
}

struct Buffers {
    std::vector<course::DeviceBuffer<float>> x, y;
};

// Runs `run` once on set 0 from y = 2 with x = 1 and a = 3: every element must be 5.
bool verify(Buffers& b, int n, const std::function<void(int, float)>& run) {
    b.y[0].upload(std::vector<float>(static_cast<std::size_t>(n), 2.0f));
    run(0, 3.0f);
    COURSE_CUDA_CHECK(cudaGetLastError());
    const std::vector<float> y = b.y[0].download();
    for (float v : y) {
        if (v != 5.0f) return false;
    }
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    const std::string csv = argc > 1 ? argv[1] : "lesson01_bench.csv";
    const int n = 1 << 26;
    const double bytes = 3.0 * n * sizeof(float);  // read x and y, write y

    course::Bench bench("01", "SAXPY y = a*x + y over 2^26 floats");
    const int sets = bench.rotation_sets(2 * static_cast<std::size_t>(n) * sizeof(float));
    Buffers b;
    for (int s = 0; s < sets; ++s) {
        b.x.emplace_back(std::vector<float>(static_cast<std::size_t>(n), 1.0f));
        b.y.emplace_back(std::vector<float>(static_cast<std::size_t>(n), 2.0f));
    }
    const int sms = course::sm_count();

    const course::CublasHandle cublas;

    struct Variant {
        std::string name;
        std::function<void(int, float)> run;
        bool library;
    };
    std::vector<Variant> variants;
    variants.push_back({"one thread per element", [&](int s, float a) {
                            saxpy_one_per_element<<<(n + kThreads - 1) / kThreads, kThreads>>>(n, a, b.x[s].data(),
                                                                                                b.y[s].data());
                        }, false});
    for (const int per_sm : {1, 4, 32, 128}) {
        variants.push_back({"grid-stride, SMs x " + std::to_string(per_sm) + " blocks", [&, per_sm](int s, float a) {
                                saxpy_grid_stride<<<sms * per_sm, kThreads>>>(n, a, b.x[s].data(), b.y[s].data());
                            }, false});
    }
    variants.push_back({"grid-stride float4, SMs x 32 blocks", [&](int s, float a) {
                            saxpy_grid_stride_float4<<<sms * 32, kThreads>>>(n, a, b.x[s].data(), b.y[s].data());
                        }, false});
    variants.push_back({course::implementation_label("launch_saxpy"), [&](int s, float a) {
                            lesson01::launch_saxpy(lesson01::saxpy_launch_shape(n), n, a, b.x[s].data(),
                                                   b.y[s].data());
                        }, false});
    variants.push_back({"cuBLAS cublasSaxpy", [&](int s, float a) {
                            COURSE_CUBLAS_CHECK(cublasSaxpy(cublas.get(), n, &a, b.x[s].data(), 1, b.y[s].data(), 1));
                        }, true});

    for (const Variant& v : variants) {
        bench.add_checked(
            v.name, v.library,
            [&] { return verify(b, n, v.run) ? std::string() : std::string("wrong result (y != 3 * 1 + 2 somewhere)"); },
            [&](int s) { v.run(s, 1.0001f); }, bytes);
    }
    bench.report(csv);
    return 0;
}
