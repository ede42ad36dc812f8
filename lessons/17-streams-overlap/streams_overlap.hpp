/// @file streams_overlap.hpp
/// @brief Lesson 17 contract: a copy-compute-copy pipeline, first serial in the
/// default stream, then chunked over several streams so that copies and the
/// kernel overlap, and a producer/consumer pair of streams ordered by an event.
///
/// You implement these functions in `starter/17-streams-overlap/streams_overlap.cu`
/// (launch_transform() and launch_combine() are given there). The tests call
/// them with pinned host buffers and device scratch buffers and compare the
/// output with a CPU computation. See the lesson text,
/// `lessons/17-streams-overlap/README.md`.
///
/// Common to every function:
/// - `n = 0` is valid: nothing is copied or launched, and every pointer may be null.
/// - The host buffers are pinned (`cudaMallocHost`), so `cudaMemcpyAsync`
///   between them and the device is asynchronous.
/// - The pipeline functions return only when `host_out` holds the results:
///   the caller reads it at once, without synchronising.
/// - Streams and events a function creates, it destroys before returning.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#ifdef __CUDACC__
#define LESSON17_HOST_DEVICE __host__ __device__
#else
#define LESSON17_HOST_DEVICE
#endif

namespace lesson17 {

/// @brief The work done on one element: `work` rounds of a xorshift step
/// followed by adding the golden-ratio constant (integer arithmetic, so the
/// GPU and the CPU agree exactly). The benchmark chooses `work` so that the
/// kernel takes about as long as copying its input over the bus.
/// @param x    the input element.
/// @param work number of rounds (0 returns x unchanged).
LESSON17_HOST_DEVICE inline unsigned transform_element(unsigned x, unsigned work) {
    for (unsigned round = 0; round < work; ++round) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        x += 0x9E3779B9u;
    }
    return x;
}

/// @brief Device and pinned host buffers of one pipeline run, all of `n` elements.
struct PipelineBuffers {
    const unsigned* host_in = nullptr;  ///< n inputs, pinned host memory.
    unsigned* host_out = nullptr;       ///< n outputs, pinned host memory (overwritten).
    unsigned* device_in = nullptr;      ///< n elements of device memory: scratch for the inputs.
    unsigned* device_out = nullptr;     ///< n elements of device memory: scratch for the outputs.
    std::size_t n = 0;                  ///< Number of elements.
};

/// @brief Launches the transform kernel in `stream` (given in the starter):
/// `out[i] = transform_element(in[i], work)` for `i < n`. Returns at once
/// (the kernel runs asynchronously); checks the launch. n = 0 launches nothing.
/// @param in     device pointer to n inputs.
/// @param out    device pointer to n outputs.
/// @param n      number of elements.
/// @param work   rounds per element (see transform_element()).
/// @param stream the stream to launch in (0: the default stream).
void launch_transform(const unsigned* in, unsigned* out, std::size_t n, unsigned work, cudaStream_t stream);

/// @brief Launches the combine kernel in `stream` (given in the starter):
/// `out[i] = in[i] + 3 * in[n - 1 - i]` for `i < n` (it reads the whole
/// input, so it must run after all of it is written). n = 0 launches nothing.
/// @param in     device pointer to n inputs.
/// @param out    device pointer to n outputs (not overlapping `in`).
/// @param n      number of elements.
/// @param stream the stream to launch in.
void launch_combine(const unsigned* in, unsigned* out, std::size_t n, cudaStream_t stream);

/// @brief The serial pipeline, in the default stream: copy all of `host_in`
/// to `device_in`, transform into `device_out`, copy it back to `host_out`.
/// Nothing overlaps: this is the baseline the pipelined version beats.
/// @param buffers the buffers (see PipelineBuffers); n may be 0.
/// @param work    rounds per element.
/// Returns when `host_out` holds `transform_element(host_in[i], work)` for every i.
void transform_serial(const PipelineBuffers& buffers, unsigned work);

/// @brief The overlapped pipeline: the input is cut into `chunks` contiguous
/// chunks of `ceil(n / chunks)` elements (the last one shorter, empty ones
/// skipped); chunk c is copied in, transformed and copied out in stream
/// `c % streams`, so that one chunk's copy overlaps another's kernel.
/// @param buffers the buffers (see PipelineBuffers); n may be 0.
/// @param work    rounds per element.
/// @param chunks  number of chunks, >= 1 (may exceed n); otherwise std::invalid_argument.
/// @param streams number of streams to create, >= 1; otherwise std::invalid_argument.
/// Returns when `host_out` holds `transform_element(host_in[i], work)` for every i.
void transform_pipelined(const PipelineBuffers& buffers, unsigned work, int chunks, int streams);

/// @brief Two stages in two streams ordered by an event: a producer stream
/// copies `host_in` in and transforms it into `device_out`; a consumer
/// stream created with `cudaStreamNonBlocking` waits for the producer's work
/// with `cudaStreamWaitEvent`, combines `device_out` into `device_in`
/// (launch_combine(), which reads all of it) and copies the result to `host_out`.
/// @param buffers the buffers (see PipelineBuffers); n may be 0.
/// @param work    rounds per element of the transform.
/// Returns when `host_out[i] = t[i] + 3 * t[n - 1 - i]` with `t[i] = transform_element(host_in[i], work)`.
void produce_then_consume(const PipelineBuffers& buffers, unsigned work);

}  // namespace lesson17
