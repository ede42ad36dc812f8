// A __constant__ array over the 64 KiB of constant memory: nvcc refuses it,
// and so must the emulator's build, at the line of the declaration
// (checked by CheckCompileError.cmake).
__constant__ float c_big[16 * 1024 + 1];

__global__ void read_big(float* out) { out[threadIdx.x] = c_big[threadIdx.x]; }
