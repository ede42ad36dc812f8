// Lesson 17: streams, pinned memory and overlap.
//
// Goal: make `./course grade 17` pass. Read lessons/17-streams-overlap/README.md
// first; the functions you fill in are documented in streams_overlap.hpp.
// Stuck? `./course hint 17` shows the hints one by one.
//
// The kernels and their launchers (launch_transform, launch_combine) are
// given: this lesson is about the host side. Order that works:
// transform_serial (three calls), then transform_pipelined (chunks and
// streams), then produce_then_consume (an event between two streams).
#include <streams_overlap.hpp>

#include <course/cuda_check.hpp>

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <vector>
#include <cuda_runtime.h>

namespace lesson17 {

namespace {

constexpr unsigned kThreadsPerBlock = 256;

__global__ void transform_kernel(const unsigned* in, unsigned* out, std::size_t n, unsigned work) {
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
        out[i] = transform_element(in[i], work);
    }
}

__global__ void combine_kernel(const unsigned* in, unsigned* out, std::size_t n) {
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
        out[i] = in[i] + 3u * in[n - 1 - i];
    }
}

// Enough blocks for n elements, at most 8 per SM (a grid-stride loop does the rest).
unsigned blocks_for(std::size_t n) {
    int device = 0, sms = 1;
    COURSE_CUDA_CHECK(cudaGetDevice(&device));
    COURSE_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    const std::size_t needed = (n + kThreadsPerBlock - 1) / kThreadsPerBlock;
    return static_cast<unsigned>(std::max<std::size_t>(1, std::min<std::size_t>(needed, std::size_t(sms) * 8)));
}

}  // namespace

void launch_transform(const unsigned* in, unsigned* out, std::size_t n, unsigned work, cudaStream_t stream) {
    if (n == 0) return;
    transform_kernel<<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(in, out, n, work);
    COURSE_CUDA_CHECK(cudaGetLastError());
}

void launch_combine(const unsigned* in, unsigned* out, std::size_t n, cudaStream_t stream) {
    if (n == 0) return;
    combine_kernel<<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(in, out, n);
    COURSE_CUDA_CHECK(cudaGetLastError());
}

void transform_serial(const PipelineBuffers& b, unsigned work) {
    // TODO: if n is 0, return. Otherwise copy b.host_in to b.device_in
    // (cudaMemcpy, host to device), transform it into b.device_out with
    // launch_transform(..., 0) (the default stream), and copy b.device_out
    // back to b.host_out. Check every call with COURSE_CUDA_CHECK.
    (void)b;
    (void)work;
}

void transform_pipelined(const PipelineBuffers& b, unsigned work, int chunks, int streams) {
    // TODO 1: throw std::invalid_argument unless chunks >= 1 and streams >= 1;
    // then return if n is 0.
    // TODO 2: create `streams` streams (cudaStreamCreateWithFlags with
    // cudaStreamNonBlocking), e.g. in a std::vector<cudaStream_t>.
    // TODO 3: chunk size = ceil(n / chunks). For chunk c, from element
    // first = c * chunk_size (stop once first >= n) with
    // count = min(chunk_size, n - first) elements, in stream c % streams:
    // cudaMemcpyAsync the chunk in, launch_transform on it, cudaMemcpyAsync it out.
    // TODO 4: the copies out are asynchronous: wait for every stream
    // (cudaStreamSynchronize) before returning, then destroy the streams.
    (void)b;
    (void)work;
    (void)chunks;
    (void)streams;
}

void produce_then_consume(const PipelineBuffers& b, unsigned work) {
    // TODO 1: return if n is 0. Create two non-blocking streams, `producer`
    // and `consumer`, and an event (cudaEventDisableTiming is enough).
    // TODO 2: in `producer`: copy b.host_in to b.device_in, then
    // launch_transform from b.device_in into b.device_out.
    // TODO 3: order the consumer after the producer's work: record the event
    // in `producer`, make `consumer` wait for it (cudaStreamWaitEvent).
    // TODO 4: in `consumer`: launch_combine from b.device_out into
    // b.device_in, copy b.device_in to b.host_out; wait for `consumer`,
    // destroy the event and the streams.
    (void)b;
    (void)work;
}

}  // namespace lesson17
