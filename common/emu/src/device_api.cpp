// The runtime API's entry points for the device and its memory: device
// queries, cudaDeviceReset, and the allocation calls. Above the streams
// (streams.cpp): cudaFree and cudaFreeHost wait for queued work, and a reset
// forgets it.
#include "allocator.hpp"
#include "device_internal.hpp"
#include "errors.hpp"
#include "streams_internal.hpp"

#include <course_emu/detail/analysis_hooks.hpp>

#include <cstdlib>

using course_emu::detail::api_result;

cudaError_t cudaGetDeviceCount(int* count) {
    if (count == nullptr) return api_result(cudaErrorInvalidValue);
    *count = 1;
    return api_result(cudaSuccess);
}

cudaError_t cudaGetDevice(int* device) {
    if (device == nullptr) return api_result(cudaErrorInvalidValue);
    *device = 0;
    return api_result(cudaSuccess);
}

cudaError_t cudaSetDevice(int device) {
    return api_result(device == 0 ? cudaSuccess : cudaErrorInvalidDevice);
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
    if (prop == nullptr) return api_result(cudaErrorInvalidValue);
    if (device != 0) return api_result(cudaErrorInvalidDevice);
    *prop = course_emu::detail::device_properties();
    return api_result(cudaSuccess);
}

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
    if (value == nullptr) return api_result(cudaErrorInvalidValue);
    if (device != 0) return api_result(cudaErrorInvalidDevice);
    const cudaDeviceProp& p = course_emu::detail::device_properties();
    switch (attr) {
        case cudaDevAttrMaxThreadsPerBlock: *value = p.maxThreadsPerBlock; break;
        case cudaDevAttrMaxBlockDimX: *value = p.maxThreadsDim[0]; break;
        case cudaDevAttrMaxBlockDimY: *value = p.maxThreadsDim[1]; break;
        case cudaDevAttrMaxBlockDimZ: *value = p.maxThreadsDim[2]; break;
        case cudaDevAttrMaxGridDimX: *value = p.maxGridSize[0]; break;
        case cudaDevAttrMaxGridDimY: *value = p.maxGridSize[1]; break;
        case cudaDevAttrMaxGridDimZ: *value = p.maxGridSize[2]; break;
        case cudaDevAttrMaxSharedMemoryPerBlock: *value = static_cast<int>(p.sharedMemPerBlock); break;
        case cudaDevAttrTotalConstantMemory: *value = static_cast<int>(p.totalConstMem); break;
        case cudaDevAttrWarpSize: *value = p.warpSize; break;
        case cudaDevAttrMaxRegistersPerBlock: *value = p.regsPerBlock; break;
        case cudaDevAttrClockRate: *value = 1000000; break;
        case cudaDevAttrMultiProcessorCount: *value = p.multiProcessorCount; break;
        case cudaDevAttrComputeCapabilityMajor: *value = p.major; break;
        case cudaDevAttrComputeCapabilityMinor: *value = p.minor; break;
        case cudaDevAttrMaxSharedMemoryPerMultiprocessor:
            *value = static_cast<int>(p.sharedMemPerMultiprocessor);
            break;
        case cudaDevAttrMaxThreadsPerMultiProcessor: *value = p.maxThreadsPerMultiProcessor; break;
        case cudaDevAttrL2CacheSize: *value = p.l2CacheSize; break;
        case cudaDevAttrGlobalMemoryBusWidth: *value = p.memoryBusWidth; break;
        case cudaDevAttrMaxSharedMemoryPerBlockOptin: *value = static_cast<int>(p.sharedMemPerBlockOptin); break;
        case cudaDevAttrCooperativeLaunch: *value = 1; break;  // cudaLaunchCooperativeKernel (cooperative.cpp)
        default: return api_result(cudaErrorInvalidValue);
    }
    return api_result(cudaSuccess);
}

// A reset destroys the context, and with it the function attributes set
// through cudaFuncSetAttribute. Allocations are left alone: freeing them
// under the program's feet would turn its later cudaFree into errors.
cudaError_t cudaDeviceReset() {
    course_emu::detail::reset_streams();
    course_emu::detail::clear_sticky_fault();
    course_emu::detail::reset_function_attributes();
    (void)cudaGetLastError();
    return cudaSuccess;
}

cudaError_t cudaMalloc(void** ptr, std::size_t bytes) {
    if (ptr == nullptr) return api_result(cudaErrorInvalidValue);
    *ptr = nullptr;
    if (course_emu::detail::sticky_error() != cudaSuccess) return api_result(cudaSuccess);
    if (bytes == 0) return api_result(cudaSuccess);  // CUDA returns a null pointer and success
    if (bytes > course_emu::detail::device_properties().totalGlobalMem) {
        return api_result(cudaErrorMemoryAllocation);
    }
    const cudaError_t result = course_emu::detail::allocate_guarded(ptr, bytes, course_emu::detail::AllocationKind::device);
    if (result == cudaSuccess && course_emu::detail::g_analysis_hooks != nullptr) {
        course_emu::detail::g_analysis_hooks->device_allocated(*ptr, bytes);
    }
    return api_result(result);
}

// Managed memory is host memory that is also a registered device allocation
// (with the same guard pages), so host code and kernels both use the one
// pointer, as on a GPU with unified memory.
cudaError_t cudaMallocManaged(void** ptr, std::size_t bytes, unsigned int flags) {
    if (ptr == nullptr) return api_result(cudaErrorInvalidValue);
    *ptr = nullptr;
    if (course_emu::detail::sticky_error() != cudaSuccess) return api_result(cudaSuccess);
    // Unlike cudaMalloc, a managed allocation of 0 bytes is refused.
    if (bytes == 0 || (flags != cudaMemAttachGlobal && flags != cudaMemAttachHost)) {
        return api_result(cudaErrorInvalidValue);
    }
    if (bytes > course_emu::detail::device_properties().totalGlobalMem) {
        return api_result(cudaErrorMemoryAllocation);
    }
    return api_result(course_emu::detail::allocate_guarded(ptr, bytes, course_emu::detail::AllocationKind::managed));
}

cudaError_t cudaFree(void* ptr) {
    course_emu::detail::synchronize_streams();  // cudaFree waits for the device, as on a GPU
    if (ptr != nullptr && course_emu::detail::g_analysis_hooks != nullptr) {
        course_emu::detail::g_analysis_hooks->device_freed(ptr);
    }
    return api_result(course_emu::detail::free_guarded(ptr));
}

cudaError_t cudaMallocHost(void** ptr, std::size_t bytes) {
    if (ptr == nullptr) return api_result(cudaErrorInvalidValue);
    *ptr = std::malloc(bytes == 0 ? 1 : bytes);
    if (*ptr == nullptr) return api_result(cudaErrorMemoryAllocation);
    course_emu::detail::add_pinned(*ptr, bytes);
    return api_result(cudaSuccess);
}

cudaError_t cudaHostAlloc(void** ptr, std::size_t bytes, unsigned int flags) {
    constexpr unsigned known = cudaHostAllocPortable | cudaHostAllocMapped | cudaHostAllocWriteCombined;
    if ((flags & ~known) != 0) return api_result(cudaErrorInvalidValue);
    return cudaMallocHost(ptr, bytes);
}

cudaError_t cudaFreeHost(void* ptr) {
    course_emu::detail::synchronize_streams();  // queued copies may still use it
    return api_result(course_emu::detail::free_pinned(ptr));
}

