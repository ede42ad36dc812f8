// The emulated device: its properties, and the function attributes and
// occupancy model that launches are checked against. The runtime API's
// device queries are in device_api.cpp; device memory in allocator.cpp.
#include "device_internal.hpp"

#include "errors.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>

namespace course_emu::detail {
namespace {

constexpr int kEmulatedSmCount = 8;
constexpr std::size_t kDefaultDynamicSharedLimit = 48 * 1024;

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

std::atomic<std::size_t> g_dynamic_shared_limit{kDefaultDynamicSharedLimit};

}  // namespace

std::size_t dynamic_shared_limit() { return g_dynamic_shared_limit.load(std::memory_order_relaxed); }

const cudaDeviceProp& device_properties() {
    static const cudaDeviceProp p = make_properties();
    return p;
}


void reset_function_attributes() { g_dynamic_shared_limit.store(kDefaultDynamicSharedLimit); }

}  // namespace course_emu::detail

using course_emu::detail::api_result;

// Function attributes. The emulator cannot tell which kernel a launch runs
// from its pointer (a translated launch names the kernel, it does not pass
// its address), so it keeps one limit for all kernels: the largest
// MaxDynamicSharedMemorySize ever set (see dynamic_shared_limit()).
cudaError_t cudaFuncSetAttribute(const void* func, cudaFuncAttribute attr, int value) {
    if (func == nullptr) return api_result(cudaErrorInvalidDeviceFunction);
    switch (attr) {
        case cudaFuncAttributeMaxDynamicSharedMemorySize: {
            const cudaDeviceProp& p = course_emu::detail::device_properties();
            if (value < 0 || static_cast<std::size_t>(value) > p.sharedMemPerBlockOptin) {
                return api_result(cudaErrorInvalidValue);
            }
            auto& limit = course_emu::detail::g_dynamic_shared_limit;
            std::size_t seen = limit.load();
            while (static_cast<std::size_t>(value) > seen && !limit.compare_exchange_weak(seen, value)) {
            }
            return api_result(cudaSuccess);
        }
        case cudaFuncAttributePreferredSharedMemoryCarveout:
            // A percentage of the unified L1/shared storage, or -1 for the default; only a hint.
            return api_result(value >= -1 && value <= 100 ? cudaSuccess : cudaErrorInvalidValue);
    }
    return api_result(cudaErrorInvalidValue);
}

namespace course_emu::detail {
namespace {

// An occupancy a GPU of this shape could report: limited by warps (64 per
// SM), blocks (32 per SM) and shared memory. Registers are not modelled.
int active_blocks_per_sm(int block_size, std::size_t dynamic_shared_bytes) {
    const cudaDeviceProp& p = device_properties();
    if (block_size > p.maxThreadsPerBlock || dynamic_shared_bytes > dynamic_shared_limit()) return 0;
    const int warps_per_block = (block_size + p.warpSize - 1) / p.warpSize;
    const int by_warps = p.maxThreadsPerMultiProcessor / p.warpSize / warps_per_block;
    const auto by_shared = static_cast<int>(
        std::min<std::size_t>(p.sharedMemPerMultiprocessor / std::max<std::size_t>(dynamic_shared_bytes, 1), 1 << 20));
    return std::max(0, std::min({32, by_warps, by_shared}));
}

}  // namespace

cudaError_t max_potential_block_size(int* min_grid_size, int* block_size, const void* func,
                                     std::size_t dynamic_shared_bytes, int block_size_limit) {
    if (min_grid_size == nullptr || block_size == nullptr) return api_result(cudaErrorInvalidValue);
    if (func == nullptr) return api_result(cudaErrorInvalidDeviceFunction);
    const cudaDeviceProp& p = device_properties();
    const int limit = block_size_limit <= 0 ? p.maxThreadsPerBlock : std::min(block_size_limit, p.maxThreadsPerBlock);
    // The block size with the most resident threads per SM; the largest among equals.
    int best_size = 0, best_blocks = 0, best_threads = -1;
    for (int size = limit; size > 0; size = size % p.warpSize != 0 ? size / p.warpSize * p.warpSize : size - p.warpSize) {
        const int blocks = active_blocks_per_sm(size, dynamic_shared_bytes);
        if (blocks * size > best_threads) {
            best_threads = blocks * size;
            best_size = size;
            best_blocks = blocks;
        }
    }
    *block_size = best_size;
    *min_grid_size = best_blocks * p.multiProcessorCount;
    return api_result(cudaSuccess);
}

}  // namespace course_emu::detail

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, const void* func, int blockSize,
                                                          std::size_t dynamicSMemSize) {
    if (numBlocks == nullptr || blockSize <= 0) return api_result(cudaErrorInvalidValue);
    if (func == nullptr) return api_result(cudaErrorInvalidDeviceFunction);
    *numBlocks = course_emu::detail::active_blocks_per_sm(blockSize, dynamicSMemSize);
    return api_result(cudaSuccess);
}
