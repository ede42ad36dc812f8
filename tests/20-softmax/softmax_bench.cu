// Lesson 20 benchmark (GPU only): the softmax of every row of a float
// matrix at three shapes: 4096 x 4096 (a block per row, rows a block keeps in
// registers), 65536 x 1024 (a warp per row, rows a warp keeps in registers)
// and 64 x 2^20 (rows no group keeps whole, read twice by the online softmax
// and three times by the three-pass one). Each shape times your
// softmax_rows_online (or the reference's), its warp and block mappings and
// softmax_rows_three_pass, against cuDNN's cudnnSoftmaxForward (accurate
// mode, one softmax per row) where cuDNN is installed (COURSE_HAVE_CUDNN,
// from CMake's course_cudnn), and against the device-to-device copy: a
// softmax must read each entry and write it, as a copy does, so the copy is
// its ceiling. Every variant's output is checked against the CPU's softmax
// in double precision, within the contract's bound, before it is timed.
//
//   lesson20_bench [output.csv]
#include <softmax.hpp>

#include "cpu_reference.hpp"

#include <course/bench.hpp>
#include <course/device_buffer.hpp>
#include <course/inputs.hpp>

#ifdef COURSE_HAVE_CUDNN
#include <cudnn.h>
#endif

#include <cmath>
#include <cstddef>
#include <cstdio>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

#ifdef COURSE_HAVE_CUDNN
void check_cudnn(cudnnStatus_t status, const char* call) {
    if (status != CUDNN_STATUS_SUCCESS) {
        throw std::runtime_error(std::string(call) + " failed: " + cudnnGetErrorString(status));
    }
}
#define COURSE_CUDNN_CHECK(call) check_cudnn((call), #call)

// cuDNN's softmax of each row: the matrix as an N x C x 1 x 1 tensor (N rows
// of C columns), CUDNN_SOFTMAX_MODE_INSTANCE (one softmax per n over c, h, w)
// and CUDNN_SOFTMAX_ACCURATE (the maximum subtracted, as the contract asks).
class CudnnSoftmax {
public:
    CudnnSoftmax(std::size_t rows, std::size_t cols) {
        COURSE_CUDNN_CHECK(cudnnCreate(&handle_));
        COURSE_CUDNN_CHECK(cudnnCreateTensorDescriptor(&tensor_));
        COURSE_CUDNN_CHECK(cudnnSetTensor4dDescriptor(tensor_, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT,
                                                      static_cast<int>(rows), static_cast<int>(cols), 1, 1));
    }
    CudnnSoftmax(const CudnnSoftmax&) = delete;
    CudnnSoftmax& operator=(const CudnnSoftmax&) = delete;
    ~CudnnSoftmax() {
        (void)cudnnDestroyTensorDescriptor(tensor_);
        (void)cudnnDestroy(handle_);
    }
    void operator()(const float* in, float* out) const {
        const float alpha = 1.0f, beta = 0.0f;
        COURSE_CUDNN_CHECK(cudnnSoftmaxForward(handle_, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_INSTANCE, &alpha,
                                               tensor_, in, &beta, tensor_, out));
    }

private:
    cudnnHandle_t handle_ = nullptr;
    cudnnTensorDescriptor_t tensor_ = nullptr;
};
#endif

// One shape's variants, checked then timed, in a group of their own.
void add_shape(course::Bench& bench, std::size_t rows, std::size_t cols) {
    const std::size_t count = rows * cols;
    const std::string shape = std::to_string(rows) + " x " + std::to_string(cols);
    const std::vector<float> host = course::random_values<float>(count, -8.0f, 8.0f, "bench " + shape);
    const lesson20_reference::RowSoftmax exact = lesson20_reference::softmax_rows(host, rows, cols);
    const int sets = bench.rotation_sets(2 * count * sizeof(float));
    std::vector<course::DeviceBuffer<float>> in;
    for (int s = 0; s < sets; ++s) in.emplace_back(host);
    course::DeviceBuffer<float> out(count);
    const double bytes = 2.0 * static_cast<double>(count) * sizeof(float);  // each entry read once, written once

    const auto verify = [&](const std::vector<float>& got) -> std::string {
        for (std::size_t i = 0; i < count; ++i) {
            const double e = exact.value[i];
            const double distance = std::fabs(static_cast<double>(host[i]) - exact.row_max[i / cols]);
            if (!(std::fabs(static_cast<double>(got[i]) - e) <= lesson20_reference::tolerance(e, distance, cols))) {
                return "out[" + std::to_string(i) + "] = " + std::to_string(got[i]) + ", expected " +
                       std::to_string(e);
            }
        }
        return "";
    };

    struct Variant {
        std::string name;
        std::function<void(const float*, float*)> run;
        bool library;
    };
    const std::string suffix = " (" + shape + ")";
    std::vector<Variant> variants = {
        {course::implementation_label("softmax_rows_online") + suffix,
         [&](const float* x, float* y) { lesson20::softmax_rows_online(x, y, rows, cols); }, false},
        {course::implementation_label("softmax_rows_online_warp") + suffix,
         [&](const float* x, float* y) { lesson20::softmax_rows_online_warp(x, y, rows, cols); }, false},
        {course::implementation_label("softmax_rows_online_block") + suffix,
         [&](const float* x, float* y) { lesson20::softmax_rows_online_block(x, y, rows, cols); }, false},
        {course::implementation_label("softmax_rows_three_pass") + suffix,
         [&](const float* x, float* y) { lesson20::softmax_rows_three_pass(x, y, rows, cols); }, false},
    };
#ifdef COURSE_HAVE_CUDNN
    // cuDNN found at build time may still fail to start (a library too old
    // for the GPU, a sublibrary missing): then the row is listed as not timed.
    std::unique_ptr<CudnnSoftmax> cudnn;
    try {
        cudnn = std::make_unique<CudnnSoftmax>(rows, cols);
        variants.push_back({"cuDNN cudnnSoftmaxForward" + suffix, [&](const float* x, float* y) { (*cudnn)(x, y); },
                            true});
    } catch (const std::exception& e) {
        bench.skip("cuDNN cudnnSoftmaxForward" + suffix, e.what());
    }
#endif

    bench.set_group(shape);
    for (const Variant& v : variants) {
        const auto check = [&]() -> std::string {
            out.poison();
            v.run(in[0].data(), out.data());
            COURSE_CUDA_CHECK(cudaGetLastError());
            return verify(out.download());
        };
        bench.add_checked(v.name, v.library, check, [&](int s) { v.run(in[s].data(), out.data()); }, bytes);
    }
    std::printf("%s: checked against the CPU's softmax\n", shape.c_str());
}

}  // namespace

int main(int argc, char** argv) {
    const std::string csv = argc > 1 ? argv[1] : "lesson20_bench.csv";
    course::Bench bench("20", "row-wise softmax of 4096 x 4096, 65536 x 1024 and 64 x 2^20 floats");
#ifndef COURSE_HAVE_CUDNN
    std::printf("cuDNN not found at build time: no library row (the copy is the ceiling)\n");
#endif
    add_shape(bench, 4096, 4096);
    add_shape(bench, 65536, 1024);
    add_shape(bench, 64, std::size_t{1} << 20);
    bench.report(csv);
    return 0;
}
