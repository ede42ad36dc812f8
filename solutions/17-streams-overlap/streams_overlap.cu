// Lesson 17 reference solution: a copy-compute-copy pipeline, serial in the
// default stream, then chunked over several streams, and two streams ordered
// by an event.
//
// A GPU has separate engines for copies to the device, copies from it, and
// kernels. In one stream they take turns: H2D, kernel, D2H, each waiting for
// the one before. Cut the data into chunks and give consecutive chunks to
// different streams, and while chunk 1 is copied in, chunk 0's kernel runs,
// and while chunk 0 is copied out, chunk 1's kernel runs and chunk 2 is
// copied in: with the three steps equally long the pipeline takes about a
// third of the serial time plus the fill and drain of one chunk.
//
// Two things make the overlap possible and correct:
// - pinned host memory: cudaMemcpyAsync from pageable memory makes the host
//   wait, so the next stream's copy could not even be issued in time;
// - one stream per chunk's three steps: stream order alone guarantees that a
//   chunk's kernel reads its input after it arrived and that its output is
//   copied back after the kernel wrote it. Nothing orders work in different
//   streams, which is why a chunk's three steps must share a stream (or be
//   tied with an event, as produce_then_consume does).
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
    if (b.n == 0) return;
    const std::size_t bytes = b.n * sizeof(unsigned);
    // cudaMemcpy is synchronous: it returns when the copy is done. The kernel
    // in the default stream starts after the copy and the second cudaMemcpy
    // waits for the kernel, so the three steps run one after another.
    COURSE_CUDA_CHECK(cudaMemcpy(b.device_in, b.host_in, bytes, cudaMemcpyHostToDevice));
    launch_transform(b.device_in, b.device_out, b.n, work, 0);
    COURSE_CUDA_CHECK(cudaMemcpy(b.host_out, b.device_out, bytes, cudaMemcpyDeviceToHost));
}

void transform_pipelined(const PipelineBuffers& b, unsigned work, int chunks, int streams) {
    if (chunks < 1) throw std::invalid_argument("transform_pipelined: chunks must be at least 1");
    if (streams < 1) throw std::invalid_argument("transform_pipelined: streams must be at least 1");
    if (b.n == 0) return;
    // Non-blocking streams: they never wait for (nor hold up) work in the
    // legacy default stream, so a library call elsewhere in the program that
    // uses stream 0 cannot serialise the pipeline.
    std::vector<cudaStream_t> stream(static_cast<std::size_t>(streams));
    for (cudaStream_t& s : stream) COURSE_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

    const std::size_t chunk = (b.n + static_cast<std::size_t>(chunks) - 1) / static_cast<std::size_t>(chunks);
    for (int c = 0; c < chunks; ++c) {
        const std::size_t first = static_cast<std::size_t>(c) * chunk;
        if (first >= b.n) break;  // chunks > n: the last chunks are empty
        const std::size_t count = std::min(chunk, b.n - first);  // the last chunk may be shorter
        const std::size_t bytes = count * sizeof(unsigned);
        cudaStream_t s = stream[static_cast<std::size_t>(c % streams)];
        // The chunk's three steps in one stream: stream order makes the kernel
        // wait for its input and the copy back wait for the kernel.
        COURSE_CUDA_CHECK(cudaMemcpyAsync(b.device_in + first, b.host_in + first, bytes, cudaMemcpyHostToDevice, s));
        launch_transform(b.device_in + first, b.device_out + first, count, work, s);
        COURSE_CUDA_CHECK(cudaMemcpyAsync(b.host_out + first, b.device_out + first, bytes, cudaMemcpyDeviceToHost, s));
    }
    // The copies back are asynchronous: host_out is complete only once every
    // stream has finished. (cudaStreamDestroy would not wait.)
    for (cudaStream_t s : stream) {
        COURSE_CUDA_CHECK(cudaStreamSynchronize(s));
        COURSE_CUDA_CHECK(cudaStreamDestroy(s));
    }
}

void produce_then_consume(const PipelineBuffers& b, unsigned work) {
    if (b.n == 0) return;
    const std::size_t bytes = b.n * sizeof(unsigned);
    cudaStream_t producer = nullptr, consumer = nullptr;
    COURSE_CUDA_CHECK(cudaStreamCreateWithFlags(&producer, cudaStreamNonBlocking));
    COURSE_CUDA_CHECK(cudaStreamCreateWithFlags(&consumer, cudaStreamNonBlocking));
    // Only ordering is needed, not a time: an event without timing is cheaper.
    cudaEvent_t produced = nullptr;
    COURSE_CUDA_CHECK(cudaEventCreateWithFlags(&produced, cudaEventDisableTiming));

    COURSE_CUDA_CHECK(cudaMemcpyAsync(b.device_in, b.host_in, bytes, cudaMemcpyHostToDevice, producer));
    launch_transform(b.device_in, b.device_out, b.n, work, producer);
    // The event completes when everything issued to `producer` before it has
    // run; the consumer's later work waits for it, on the device, without
    // the host waiting for anything.
    COURSE_CUDA_CHECK(cudaEventRecord(produced, producer));
    COURSE_CUDA_CHECK(cudaStreamWaitEvent(consumer, produced, 0));
    launch_combine(b.device_out, b.device_in, b.n, consumer);
    COURSE_CUDA_CHECK(cudaMemcpyAsync(b.host_out, b.device_in, bytes, cudaMemcpyDeviceToHost, consumer));

    COURSE_CUDA_CHECK(cudaStreamSynchronize(consumer));
    COURSE_CUDA_CHECK(cudaEventDestroy(produced));
    COURSE_CUDA_CHECK(cudaStreamDestroy(producer));
    COURSE_CUDA_CHECK(cudaStreamDestroy(consumer));
}

}  // namespace lesson17
