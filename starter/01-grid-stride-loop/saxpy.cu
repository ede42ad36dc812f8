// Lesson 01: SAXPY as a grid-stride loop.
//
// Goal: make `./course grade 01` pass. Read lessons/01-grid-stride-loop/README.md
// first; the functions you fill in are documented in saxpy.hpp.
// Stuck? `./course hint 01` shows the hints one by one.
#include <saxpy.hpp>

#include <course/cuda_check.hpp>

#include <cuda_runtime.h>

namespace lesson01 {

__global__ void saxpy_kernel(int n, float a, const float* x, float* y) {
    // TODO: compute y[i] = a * x[i] + y[i] for every i < n.
    // Start at this thread's global index and step by the number of threads
    // in the whole grid, so that any grid covers the array exactly once.
}

course::LaunchShape saxpy_launch_shape(int n) {
    // TODO: size the grid from the number of streaming multiprocessors
    // (cudaDeviceGetAttribute with cudaDevAttrMultiProcessorCount).
    (void)n;
    return {0, 0};
}

void launch_saxpy(course::LaunchShape shape, int n, float a, const float* x, float* y) {
    // TODO: launch saxpy_kernel with `shape`, then check the launch for errors
    // with COURSE_CUDA_CHECK(cudaGetLastError()).
    (void)shape;
    (void)n;
    (void)a;
    (void)x;
    (void)y;
}

}  // namespace lesson01
