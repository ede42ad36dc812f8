// The emulated device: its properties, device memory, streams and events.
//
// Device memory is host memory; the emulator keeps a registry of allocations
// so that cudaMemcpy and cudaFree can refuse pointers a GPU would refuse,
// instead of corrupting the host process.
#include "state.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>

namespace course_emu::detail {
namespace {

constexpr int kEmulatedSmCount = 8;
constexpr std::size_t kAllocationAlignment = 256;  // cudaMalloc's guarantee

cudaDeviceProp make_properties() {
    cudaDeviceProp p{};
    std::snprintf(p.name, sizeof p.name, "Course CPU emulator of CUDA (%d SMs)", kEmulatedSmCount);
    p.totalGlobalMem = std::size_t{8} << 30;
    p.sharedMemPerBlock = 48 * 1024;
    p.regsPerBlock = 65536;
    p.warpSize = 32;
    p.memPitch = std::size_t{1} << 31;
    p.maxThreadsPerBlock = 1024;
    p.maxThreadsDim[0] = 1024;
    p.maxThreadsDim[1] = 1024;
    p.maxThreadsDim[2] = 64;
    p.maxGridSize[0] = 2147483647;
    p.maxGridSize[1] = 65535;
    p.maxGridSize[2] = 65535;
    p.totalConstMem = 64 * 1024;
    p.major = 9;
    p.minor = 0;
    p.multiProcessorCount = kEmulatedSmCount;
    p.l2CacheSize = 4 << 20;
    p.maxThreadsPerMultiProcessor = 2048;
    p.sharedMemPerMultiprocessor = 228 * 1024;
    p.sharedMemPerBlockOptin = 227 * 1024;
    p.memoryBusWidth = 64;
    return p;
}

struct Registry {
    std::mutex mutex;
    std::map<const char*, std::size_t> device;  // start -> size
    std::map<const char*, std::size_t> pinned;
};

Registry& registry() {
    static Registry r;
    return r;
}

// True when [p, p + bytes) lies inside one device allocation.
bool is_device_range(const void* p, std::size_t bytes) {
    const char* c = static_cast<const char*>(p);
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    auto it = r.device.upper_bound(c);
    if (it == r.device.begin()) return false;
    --it;
    return c >= it->first && c + bytes <= it->first + it->second;
}

bool is_device_pointer(const void* p) { return is_device_range(p, 0) || is_device_range(p, 1); }

void add_allocation(std::map<const char*, std::size_t>& allocations, const void* p, std::size_t bytes) {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    allocations.emplace(static_cast<const char*>(p), bytes);
}

// Frees `p` if `allocations` holds it; a pointer it does not hold (never
// allocated there, or freed already) is refused as a GPU refuses it.
cudaError_t free_allocation(std::map<const char*, std::size_t>& allocations, void* p) {
    if (p == nullptr) return cudaSuccess;
    Registry& r = registry();
    {
        std::lock_guard lock(r.mutex);
        auto it = allocations.find(static_cast<const char*>(p));
        if (it == allocations.end()) return cudaErrorInvalidValue;
        allocations.erase(it);
    }
    std::free(p);
    return cudaSuccess;
}

std::mutex g_fault_mutex;
cudaError_t g_sticky = cudaSuccess;
std::string g_fault_report;

}  // namespace

const cudaDeviceProp& device_properties() {
    static const cudaDeviceProp p = make_properties();
    return p;
}

unsigned worker_count() {
    static const unsigned n = [] {
        if (const char* env = std::getenv("COURSE_EMU_WORKERS")) {
            const long v = std::strtol(env, nullptr, 10);
            if (v > 0) return static_cast<unsigned>(v);
        }
        return std::max(1u, std::thread::hardware_concurrency());
    }();
    return n;
}

cudaError_t sticky_error() {
    std::lock_guard lock(g_fault_mutex);
    return g_sticky;
}

void set_sticky_fault(cudaError_t error, std::string report) {
    std::lock_guard lock(g_fault_mutex);
    if (g_sticky == cudaSuccess) {
        g_sticky = error;
        g_fault_report = std::move(report);
    }
}

void clear_sticky_fault() {
    std::lock_guard lock(g_fault_mutex);
    g_sticky = cudaSuccess;
    g_fault_report.clear();
}

}  // namespace course_emu::detail

namespace course_emu {

const char* last_fault_report() {
    std::lock_guard lock(detail::g_fault_mutex);
    return detail::g_fault_report.c_str();
}

}  // namespace course_emu

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
        default: return api_result(cudaErrorInvalidValue);
    }
    return api_result(cudaSuccess);
}

// Kernels run to completion when launched, so synchronising only reports
// what the launches left behind.
cudaError_t cudaDeviceSynchronize() { return api_result(cudaSuccess); }

cudaError_t cudaDeviceReset() {
    course_emu::detail::clear_sticky_fault();
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
    const std::size_t rounded = (bytes + course_emu::detail::kAllocationAlignment - 1) /
                                course_emu::detail::kAllocationAlignment *
                                course_emu::detail::kAllocationAlignment;
    void* p = std::aligned_alloc(course_emu::detail::kAllocationAlignment, rounded);
    if (p == nullptr) return api_result(cudaErrorMemoryAllocation);
    course_emu::detail::add_allocation(course_emu::detail::registry().device, p, bytes);
    *ptr = p;
    return api_result(cudaSuccess);
}

cudaError_t cudaFree(void* ptr) {
    return api_result(course_emu::detail::free_allocation(course_emu::detail::registry().device, ptr));
}

cudaError_t cudaMallocHost(void** ptr, std::size_t bytes) {
    if (ptr == nullptr) return api_result(cudaErrorInvalidValue);
    *ptr = std::malloc(bytes == 0 ? 1 : bytes);
    if (*ptr == nullptr) return api_result(cudaErrorMemoryAllocation);
    course_emu::detail::add_allocation(course_emu::detail::registry().pinned, *ptr, bytes);
    return api_result(cudaSuccess);
}

cudaError_t cudaFreeHost(void* ptr) {
    return api_result(course_emu::detail::free_allocation(course_emu::detail::registry().pinned, ptr));
}

cudaError_t cudaMemcpy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind) {
    using course_emu::detail::is_device_pointer;
    using course_emu::detail::is_device_range;
    if (course_emu::detail::sticky_error() != cudaSuccess) return api_result(cudaSuccess);
    if (bytes == 0) return api_result(cudaSuccess);
    if (dst == nullptr || src == nullptr) return api_result(cudaErrorInvalidValue);
    bool dst_device = false;
    bool src_device = false;
    switch (kind) {
        case cudaMemcpyHostToHost: break;
        case cudaMemcpyHostToDevice: dst_device = true; break;
        case cudaMemcpyDeviceToHost: src_device = true; break;
        case cudaMemcpyDeviceToDevice: dst_device = src_device = true; break;
        case cudaMemcpyDefault:
            dst_device = is_device_pointer(dst);
            src_device = is_device_pointer(src);
            break;
        default: return api_result(cudaErrorInvalidMemcpyDirection);
    }
    // A GPU refuses a device range that is not inside one allocation; the
    // emulator does the same rather than reading or writing host memory.
    if ((dst_device && !is_device_range(dst, bytes)) || (src_device && !is_device_range(src, bytes))) {
        return api_result(cudaErrorInvalidValue);
    }
    std::memmove(dst, src, bytes);
    return api_result(cudaSuccess);
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t /*stream*/) {
    return cudaMemcpy(dst, src, bytes, kind);
}

cudaError_t cudaMemset(void* ptr, int value, std::size_t bytes) {
    if (course_emu::detail::sticky_error() != cudaSuccess) return api_result(cudaSuccess);
    if (bytes == 0) return api_result(cudaSuccess);
    if (!course_emu::detail::is_device_range(ptr, bytes)) return api_result(cudaErrorInvalidValue);
    std::memset(ptr, value, bytes);
    return api_result(cudaSuccess);
}

cudaError_t cudaMemsetAsync(void* ptr, int value, std::size_t bytes, cudaStream_t /*stream*/) {
    return cudaMemset(ptr, value, bytes);
}

// Streams: work runs at once on the emulator, so a stream needs no state.
struct CUstream_st {};

cudaError_t cudaStreamCreate(cudaStream_t* stream) {
    if (stream == nullptr) return api_result(cudaErrorInvalidValue);
    *stream = new CUstream_st;
    return api_result(cudaSuccess);
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
    delete stream;
    return api_result(cudaSuccess);
}

cudaError_t cudaStreamSynchronize(cudaStream_t /*stream*/) { return api_result(cudaSuccess); }

// Events hold the host time at which they were recorded. These are CPU
// times of the emulator, never GPU times.
struct CUevent_st {
    std::chrono::steady_clock::time_point when{};
    bool recorded = false;
};

cudaError_t cudaEventCreate(cudaEvent_t* event) {
    if (event == nullptr) return api_result(cudaErrorInvalidValue);
    *event = new CUevent_st;
    return api_result(cudaSuccess);
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
    delete event;
    return api_result(cudaSuccess);
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t /*stream*/) {
    if (event == nullptr) return api_result(cudaErrorInvalidResourceHandle);
    event->when = std::chrono::steady_clock::now();
    event->recorded = true;
    return api_result(cudaSuccess);
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
    return api_result(event == nullptr ? cudaErrorInvalidResourceHandle : cudaSuccess);
}

cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
    if (ms == nullptr) return api_result(cudaErrorInvalidValue);
    if (start == nullptr || end == nullptr) return api_result(cudaErrorInvalidResourceHandle);
    if (!start->recorded || !end->recorded) return api_result(cudaErrorInvalidResourceHandle);
    *ms = std::chrono::duration<float, std::milli>(end->when - start->when).count();
    return api_result(cudaSuccess);
}
