/// @file runtime_api.hpp
/// @brief The subset of the CUDA runtime API the course uses, on the CPU.
///
/// Error codes have CUDA's numeric values, so a message printed on the
/// emulator names the same error a GPU would give.
#pragma once

#include <cstddef>

#include <course_emu/types.hpp>

/// @brief CUDA runtime error codes (values as in CUDA's driver_types.h).
enum cudaError_t : int {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
    cudaErrorInitializationError = 3,
    cudaErrorInvalidConfiguration = 9,
    cudaErrorInvalidPitchValue = 12,
    cudaErrorInvalidSymbol = 13,
    cudaErrorInvalidDevicePointer = 17,
    cudaErrorInvalidMemcpyDirection = 21,
    cudaErrorInvalidDeviceFunction = 98,
    cudaErrorNoDevice = 100,
    cudaErrorInvalidDevice = 101,
    cudaErrorInvalidResourceHandle = 400,
    cudaErrorNotReady = 600,
    cudaErrorIllegalAddress = 700,
    cudaErrorLaunchOutOfResources = 701,
    cudaErrorLaunchTimeout = 702,
    cudaErrorAssert = 710,
    cudaErrorIllegalInstruction = 715,
    cudaErrorMisalignedAddress = 716,
    cudaErrorLaunchFailure = 719,
    cudaErrorCooperativeLaunchTooLarge = 720,
    cudaErrorNotSupported = 801,
    cudaErrorUnknown = 999,
};
using cudaError = cudaError_t;

/// @brief Direction of a cudaMemcpy.
enum cudaMemcpyKind : int {
    cudaMemcpyHostToHost = 0,
    cudaMemcpyHostToDevice = 1,
    cudaMemcpyDeviceToHost = 2,
    cudaMemcpyDeviceToDevice = 3,
    cudaMemcpyDefault = 4,
};

/// @brief Device attributes accepted by cudaDeviceGetAttribute (CUDA's values).
enum cudaDeviceAttr : int {
    cudaDevAttrMaxThreadsPerBlock = 1,
    cudaDevAttrMaxBlockDimX = 2,
    cudaDevAttrMaxBlockDimY = 3,
    cudaDevAttrMaxBlockDimZ = 4,
    cudaDevAttrMaxGridDimX = 5,
    cudaDevAttrMaxGridDimY = 6,
    cudaDevAttrMaxGridDimZ = 7,
    cudaDevAttrMaxSharedMemoryPerBlock = 8,
    cudaDevAttrTotalConstantMemory = 9,
    cudaDevAttrWarpSize = 10,
    cudaDevAttrMaxRegistersPerBlock = 12,
    cudaDevAttrClockRate = 13,
    cudaDevAttrMultiProcessorCount = 16,
    cudaDevAttrComputeCapabilityMajor = 75,
    cudaDevAttrComputeCapabilityMinor = 76,
    cudaDevAttrMaxSharedMemoryPerMultiprocessor = 81,
    cudaDevAttrMaxThreadsPerMultiProcessor = 39,
    cudaDevAttrL2CacheSize = 38,
    cudaDevAttrGlobalMemoryBusWidth = 37,
    cudaDevAttrMaxSharedMemoryPerBlockOptin = 97,
    cudaDevAttrCooperativeLaunch = 95,
};

/// @brief Device properties: the fields of CUDA 13's cudaDeviceProp the course reads.
struct cudaDeviceProp {
    char name[256];
    std::size_t totalGlobalMem;
    std::size_t sharedMemPerBlock;
    int regsPerBlock;
    int warpSize;
    std::size_t memPitch;
    int maxThreadsPerBlock;
    int maxThreadsDim[3];
    int maxGridSize[3];
    std::size_t totalConstMem;
    int major;
    int minor;
    int multiProcessorCount;
    int l2CacheSize;
    int maxThreadsPerMultiProcessor;
    std::size_t sharedMemPerMultiprocessor;
    std::size_t sharedMemPerBlockOptin;
    int memoryBusWidth;
};

struct CUstream_st;
struct CUevent_st;
using cudaStream_t = CUstream_st*;
using cudaEvent_t = CUevent_st*;

/// @brief Kernel attributes settable with cudaFuncSetAttribute (CUDA's values).
enum cudaFuncAttribute : int {
    cudaFuncAttributeMaxDynamicSharedMemorySize = 8,     ///< Opt in to more than 48 KiB of dynamic shared memory.
    cudaFuncAttributePreferredSharedMemoryCarveout = 9,  ///< Shared memory share of L1, in percent (a hint).
};

// Flags, as macros with CUDA's values (CUDA defines them as macros too).
#define cudaStreamDefault 0x00      ///< cudaStreamCreateWithFlags: an ordinary stream.
#define cudaStreamNonBlocking 0x01  ///< cudaStreamCreateWithFlags: does not synchronise with stream 0.
#define cudaEventDefault 0x00       ///< cudaEventCreateWithFlags: an ordinary event.
#define cudaEventBlockingSync 0x01  ///< cudaEventCreateWithFlags: the host sleeps while waiting.
#define cudaEventDisableTiming 0x02 ///< cudaEventCreateWithFlags: no timing (cudaEventElapsedTime refuses it).
#define cudaEventInterprocess 0x04  ///< cudaEventCreateWithFlags: shareable between processes.
#define cudaMemAttachGlobal 0x01    ///< cudaMallocManaged: accessible from any stream.
#define cudaMemAttachHost 0x02      ///< cudaMallocManaged: attached to the host at first.
#define cudaMemAttachSingle 0x04    ///< cudaStreamAttachMemAsync only.
#define cudaHostAllocDefault 0x00       ///< cudaHostAlloc: pinned host memory.
#define cudaHostAllocPortable 0x01      ///< cudaHostAlloc: pinned for every context (no effect on the emulator).
#define cudaHostAllocMapped 0x02        ///< cudaHostAlloc: mapped into the device's address space.
#define cudaHostAllocWriteCombined 0x04 ///< cudaHostAlloc: write-combined (no effect on the emulator).

/// @brief A host function queued with cudaLaunchHostFunc.
using cudaHostFn_t = void (*)(void* userData);

const char* cudaGetErrorString(cudaError_t error);
const char* cudaGetErrorName(cudaError_t error);
cudaError_t cudaGetLastError();
cudaError_t cudaPeekAtLastError();

cudaError_t cudaGetDeviceCount(int* count);
cudaError_t cudaGetDevice(int* device);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device);
cudaError_t cudaDeviceSynchronize();
cudaError_t cudaDeviceReset();

cudaError_t cudaMalloc(void** ptr, std::size_t bytes);
/// @brief Allocates memory that host code and kernels both use through one
/// pointer. On the emulator it is a device allocation (guard pages included)
/// that the host may also read and write. Size 0 or flags other than
/// cudaMemAttachGlobal or cudaMemAttachHost give cudaErrorInvalidValue.
cudaError_t cudaMallocManaged(void** ptr, std::size_t bytes, unsigned int flags = cudaMemAttachGlobal);
cudaError_t cudaFree(void* ptr);
/// @brief Allocates pinned (page-locked) host memory: copies between it and
/// the device through cudaMemcpyAsync are asynchronous to the host.
cudaError_t cudaMallocHost(void** ptr, std::size_t bytes);
/// @brief cudaMallocHost with flags (cudaHostAllocDefault, Portable, Mapped,
/// WriteCombined); other flags give cudaErrorInvalidValue.
cudaError_t cudaHostAlloc(void** ptr, std::size_t bytes, unsigned int flags);
/// @brief Frees pinned memory; waits for the device first, as on a GPU.
cudaError_t cudaFreeHost(void* ptr);
/// @brief A copy in the legacy default stream: it waits for the work of
/// every blocking stream and returns when it is done.
cudaError_t cudaMemcpy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind);
/// @brief Queues a copy in `stream`. Between the device and pinned memory
/// it is asynchronous to the host; with pageable host memory it returns only
/// once the copy is done, as on a GPU. `file` and `line` (filled in by the
/// compiler where the call is written) name it in race reports.
cudaError_t cudaMemcpyAsync(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t stream = nullptr, const char* file = __builtin_FILE(),
                            int line = __builtin_LINE());
/// @brief Fills device memory in the legacy default stream (the emulator
/// returns once it is done).
cudaError_t cudaMemset(void* ptr, int value, std::size_t bytes);
/// @brief Queues a fill of device memory in `stream` (asynchronous to the host).
cudaError_t cudaMemsetAsync(void* ptr, int value, std::size_t bytes, cudaStream_t stream = nullptr,
                            const char* file = __builtin_FILE(), int line = __builtin_LINE());

/// @brief Sets an attribute of a kernel. MaxDynamicSharedMemorySize accepts
/// 0 to sharedMemPerBlockOptin (227 KiB); PreferredSharedMemoryCarveout
/// accepts -1 to 100; anything else gives cudaErrorInvalidValue. The emulator
/// applies the largest dynamic shared memory limit set to every kernel.
cudaError_t cudaFuncSetAttribute(const void* func, cudaFuncAttribute attr, int value);

/// @brief How many blocks of `blockSize` threads using `dynamicSMemSize`
/// bytes of dynamic shared memory fit on one SM at once: limited by 64 warps
/// and 32 blocks per SM and by the SM's shared memory (registers are not
/// modelled); 0 for a block or shared memory size no launch may use.
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, const void* func, int blockSize,
                                                          std::size_t dynamicSMemSize);

// Streams and events (streams.cpp; docs/emulator.md, "Streams and events").
// Work in a stream other than the legacy default stream (nullptr) is queued
// and runs when the host synchronises, in an order the schedule picks among
// what stream order, events and the legacy default stream allow.

/// @brief Creates a blocking stream (cudaStreamDefault).
cudaError_t cudaStreamCreate(cudaStream_t* stream);
/// @brief Creates a stream; `flags` is cudaStreamDefault (its work waits for,
/// and is waited for by, the legacy default stream) or cudaStreamNonBlocking.
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int flags);
/// @brief Destroys a stream once its queued work has run (the emulator runs it now).
cudaError_t cudaStreamDestroy(cudaStream_t stream);
/// @brief Runs the stream's queued work (and what it waits for); returns when it is done.
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
/// @brief cudaSuccess when the stream's work is done, else cudaErrorNotReady.
/// Each call lets the emulator run one queued operation of the stream, so a
/// polling loop ends.
cudaError_t cudaStreamQuery(cudaStream_t stream);
/// @brief Makes later work in `stream` wait for the work before the last
/// cudaEventRecord of `event` (nothing, if it was never recorded).
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags = 0);
/// @brief Queues a call of `fn(userData)` on the host in `stream`'s order.
cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void* userData);

/// @brief Creates an event (cudaEventDefault).
cudaError_t cudaEventCreate(cudaEvent_t* event);
/// @brief Creates an event with cudaEventDefault, cudaEventBlockingSync,
/// cudaEventDisableTiming or cudaEventInterprocess (with DisableTiming).
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags);
/// @brief Destroys an event.
cudaError_t cudaEventDestroy(cudaEvent_t event);
/// @brief Records the event in `stream`: it completes when the work issued to
/// the stream before it has run.
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream = nullptr);
/// @brief cudaSuccess when the work before the event's record has run (an
/// event never recorded reports success too, as in CUDA), else
/// cudaErrorNotReady; each call lets the emulator run one operation it waits for.
cudaError_t cudaEventQuery(cudaEvent_t event);
/// @brief Runs the work the event waits for; returns when it is done.
cudaError_t cudaEventSynchronize(cudaEvent_t event);
/// @brief Milliseconds between two completed events. On the emulator it is
/// the host time between the moments their records ran (never negative),
/// which says nothing about a GPU's speed.
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end);

/// @brief Typed convenience overload, as CUDA's runtime header provides.
template <class T>
cudaError_t cudaMalloc(T** ptr, std::size_t bytes) {
    return cudaMalloc(reinterpret_cast<void**>(ptr), bytes);
}

/// @brief Typed convenience overload, as CUDA's runtime header provides.
template <class T>
cudaError_t cudaMallocHost(T** ptr, std::size_t bytes) {
    return cudaMallocHost(reinterpret_cast<void**>(ptr), bytes);
}

/// @brief Typed convenience overload, as CUDA's runtime header provides.
template <class T>
cudaError_t cudaHostAlloc(T** ptr, std::size_t bytes, unsigned int flags) {
    return cudaHostAlloc(reinterpret_cast<void**>(ptr), bytes, flags);
}

/// @brief Typed convenience overload, as CUDA's runtime header provides.
template <class T>
cudaError_t cudaMallocManaged(T** ptr, std::size_t bytes, unsigned int flags = cudaMemAttachGlobal) {
    return cudaMallocManaged(reinterpret_cast<void**>(ptr), bytes, flags);
}

/// @brief cudaFuncSetAttribute for a kernel named directly (any function pointer).
template <class T>
cudaError_t cudaFuncSetAttribute(T* entry, cudaFuncAttribute attr, int value) {
    return cudaFuncSetAttribute(reinterpret_cast<const void*>(entry), attr, value);
}

/// @brief cudaOccupancyMaxActiveBlocksPerMultiprocessor for a kernel named directly.
template <class T>
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, T func, int blockSize,
                                                          std::size_t dynamicSMemSize) {
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(numBlocks, reinterpret_cast<const void*>(func), blockSize,
                                                         dynamicSMemSize);
}

namespace course_emu::detail {
/// @brief Implements cudaOccupancyMaxPotentialBlockSize (defined in device.cpp).
cudaError_t max_potential_block_size(int* min_grid_size, int* block_size, const void* func,
                                     std::size_t dynamic_shared_bytes, int block_size_limit);
}  // namespace course_emu::detail

/// @brief The block size (at most `blockSizeLimit`, 0 for no limit) with the
/// most resident threads per SM, by the same model as
/// cudaOccupancyMaxActiveBlocksPerMultiprocessor, and the grid size that
/// fills every SM with such blocks.
template <class T>
cudaError_t cudaOccupancyMaxPotentialBlockSize(int* minGridSize, int* blockSize, T func,
                                               std::size_t dynamicSMemSize = 0, int blockSizeLimit = 0) {
    return course_emu::detail::max_potential_block_size(minGridSize, blockSize, reinterpret_cast<const void*>(func),
                                                        dynamicSMemSize, blockSizeLimit);
}

namespace course_emu {

/// @brief The full report of the first fault of the last failed launch
/// (kernel, block, thread, source line, cause), or an empty string.
///
/// The CUDA error code a fault leaves behind is sticky, as on a GPU; this text
/// is what the course's error checks add to the message.
const char* last_fault_report();

}  // namespace course_emu
