// Kernels for the stream tests (streams_test.cpp).
#include "streams_kernels.hpp"

namespace emu_streams_test {
namespace {

__global__ void add_one(const int* in, int* out, int n) {
    for (int i = static_cast<int>(threadIdx.x); i < n; i += static_cast<int>(blockDim.x)) out[i] = in[i] + 1;
}

}  // namespace

void launch_add_one(const int* in, int* out, int n, cudaStream_t stream) {
    add_one<<<1, 64, 0, stream>>>(in, out, n);  // kAddOneLaunchLine
}

int add_one_launch_line() { return 14; }

}  // namespace emu_streams_test
