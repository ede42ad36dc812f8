// A kernel that writes __constant__ memory: nvcc refuses it, and so must the
// emulator's build, at the line of the write (checked by CheckCompileError.cmake).
__constant__ float c_scale[4];

__global__ void scale_kernel(float* data) {
    data[threadIdx.x] *= c_scale[threadIdx.x % 4];
    c_scale[0] = 2.0f;  // the error: constant memory is read-only in device code
}
