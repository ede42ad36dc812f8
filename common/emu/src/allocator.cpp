// Device memory: the guarded allocator, the pinned host allocations, the
// validation of copies and memsets, and the explanation of a faulting
// address. The runtime API's entry points are in device_api.cpp.
//
// Device memory is host memory; the emulator keeps a registry of allocations
// so that cudaMemcpy and cudaFree can refuse pointers a GPU would refuse,
// instead of corrupting the host process. Every allocation is its own mapping
// with an inaccessible guard page on each side, placed so that its end
// (rounded up to 256 bytes, as a GPU's allocation granularity allows) touches
// the guard page after it: an overrun in a kernel faults at once instead of
// silently writing the neighbouring buffer. A freed allocation stays mapped,
// inaccessible, for a while (the quarantine), so a use after free faults too.
#include "allocator.hpp"

#include "errors.hpp"

#include <course_emu/detail/analysis_hooks.hpp>

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <vector>

namespace course_emu::detail {
namespace {

constexpr std::size_t kAllocationAlignment = 256;  // cudaMalloc's guarantee

// The quarantine of freed allocations: bounded so that a program that
// allocates and frees in a loop does not run out of address space (a grader
// may limit it) or of mappings (the kernel allows ~65530 per process).
constexpr std::size_t kQuarantineMaxEntries = 4096;
constexpr std::size_t kQuarantineMaxBytes = std::size_t{64} << 20;

// How far past a mapping an address may lie and still be explained as an
// overrun of the allocation below it.
constexpr std::size_t kNearbyBytes = std::size_t{1} << 20;

std::size_t round_up(std::size_t n, std::size_t unit) { return (n + unit - 1) / unit * unit; }

// One guarded allocation:
//   [front guard page][slack < 1 page][data, bytes rounded up to 256][back guard page]
//   ^ mapping                         ^ start (the pointer handed out)
struct DeviceAllocation {
    std::size_t bytes = 0;          // as requested
    char* mapping = nullptr;        // base of the whole mapping
    std::size_t mapping_bytes = 0;  // guards included
    AllocationKind kind = AllocationKind::device;
};

struct Registry {
    // Held only briefly, never while kernel code runs on the holding thread
    // and never across a system call that can take long, because the SIGSEGV
    // handler reads the registry (see describe_fault_address).
    std::mutex mutex;
    std::map<const char*, DeviceAllocation> device;  // live, by start
    std::map<const char*, DeviceAllocation> freed;   // quarantined, by start
    // Quarantine order: sequence number -> start. A map rather than a deque
    // because an empty std::map allocates nothing, so a registry that was
    // never used costs the signal handler nothing to look at.
    std::map<unsigned long long, const char*> quarantine;
    unsigned long long next_sequence = 0;
    std::size_t quarantine_bytes = 0;
    std::map<const char*, std::size_t> pinned;  // cudaMallocHost: start -> size
};

// Set once the registry exists, so that the signal handler never constructs it.
std::atomic<bool> g_registry_constructed{false};

Registry& registry() {
    static Registry r;
    g_registry_constructed.store(true, std::memory_order_release);
    return r;
}

const char* kind_name(AllocationKind kind) {
    return kind == AllocationKind::managed ? "managed allocation" : "device allocation";
}

// The live device allocation holding [p, p + bytes), or null. Caller holds the lock.
const DeviceAllocation* find_live(const Registry& r, const char* p, std::size_t bytes) {
    auto it = r.device.upper_bound(p);
    if (it == r.device.begin()) return nullptr;
    --it;
    if (p >= it->first && bytes <= it->second.bytes && p - it->first <= static_cast<std::ptrdiff_t>(it->second.bytes - bytes)) {
        return &it->second;
    }
    return nullptr;
}

// True when [p, p + bytes) lies inside one live device (or managed) allocation.
bool is_device_range(const void* p, std::size_t bytes) {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    return find_live(r, static_cast<const char*>(p), bytes) != nullptr;
}

bool is_device_pointer(const void* p) { return is_device_range(p, 0) || is_device_range(p, 1); }

// Unmaps quarantined regions; called without the lock.
void unmap_all(const std::vector<DeviceAllocation>& regions) {
    for (const DeviceAllocation& a : regions) munmap(a.mapping, a.mapping_bytes);
}

// Takes the oldest quarantine entries out of the registry while the
// quarantine is over its bounds (or all of them), for the caller to unmap
// after releasing the lock. The newest entry stays even when it alone is over
// the byte bound, so the last buffer freed is always caught.
std::vector<DeviceAllocation> take_evictions(Registry& r, bool everything) {
    std::vector<DeviceAllocation> evicted;
    while (!r.quarantine.empty() &&
           (everything || (r.quarantine.size() > 1 && (r.quarantine.size() > kQuarantineMaxEntries ||
                                                       r.quarantine_bytes > kQuarantineMaxBytes)))) {
        auto oldest = r.quarantine.begin();
        auto it = r.freed.find(oldest->second);
        if (it != r.freed.end()) {
            r.quarantine_bytes -= it->second.mapping_bytes;
            evicted.push_back(it->second);
            r.freed.erase(it);
        }
        r.quarantine.erase(oldest);
    }
    return evicted;
}

// Maps a guarded region for `bytes` (> 0) and returns its start, or null.
char* map_guarded(std::size_t bytes, DeviceAllocation& out) {
    const std::size_t page = page_size();
    const std::size_t rounded = round_up(bytes, kAllocationAlignment);
    const std::size_t data_bytes = round_up(rounded, page);
    const std::size_t total = data_bytes + 2 * page;
    // PROT_NONE and MAP_NORESERVE: the guards cost address space only, and
    // the data pages cost memory only once touched, as with malloc.
    void* base = mmap(nullptr, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED) return nullptr;
    char* mapping = static_cast<char*>(base);
    if (mprotect(mapping + page, data_bytes, PROT_READ | PROT_WRITE) != 0) {
        munmap(mapping, total);
        return nullptr;
    }
    out.bytes = bytes;
    out.mapping = mapping;
    out.mapping_bytes = total;
    // The data ends (rounded to 256) where the back guard begins; the start
    // stays 256-byte aligned because the guard is page-aligned.
    return mapping + page + data_bytes - rounded;
}

}  // namespace

cudaError_t allocate_guarded(void** ptr, std::size_t bytes, AllocationKind kind) {
    DeviceAllocation a;
    a.kind = kind;
    char* start = map_guarded(bytes, a);
    if (start == nullptr) {
        // Out of address space or mappings: the quarantine gives them back.
        Registry& r = registry();
        std::vector<DeviceAllocation> evicted;
        {
            std::lock_guard lock(r.mutex);
            evicted = take_evictions(r, true);
        }
        unmap_all(evicted);
        start = map_guarded(bytes, a);
        if (start == nullptr) return cudaErrorMemoryAllocation;
    }
    Registry& r = registry();
    {
        std::lock_guard lock(r.mutex);
        r.device.emplace(start, a);
    }
    *ptr = start;
    return cudaSuccess;
}

// Frees a device allocation: refuses a pointer it did not hand out (never
// allocated, interior, or freed already) as a GPU refuses it; otherwise
// makes the whole region inaccessible and puts it in quarantine.
cudaError_t free_guarded(void* p) {
    if (p == nullptr) return cudaSuccess;
    Registry& r = registry();
    const char* start = static_cast<const char*>(p);
    DeviceAllocation a;
    {
        std::lock_guard lock(r.mutex);
        auto it = r.device.find(start);
        if (it == r.device.end()) return cudaErrorInvalidValue;
        a = it->second;
        r.device.erase(it);
        // In the freed map (so a second cudaFree is refused and a fault is
        // explained) but not yet in the quarantine order, so no other thread
        // can unmap it while it is being protected below.
        r.freed.emplace(start, a);
    }
    // Replacing the mapping discards its pages (the memory goes back at
    // once) and makes every byte of it fault; done without the lock since it
    // may take a while for a large buffer.
    void* again = mmap(a.mapping, a.mapping_bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED,
                       -1, 0);
    if (again == MAP_FAILED) mprotect(a.mapping, a.mapping_bytes, PROT_NONE);
    std::vector<DeviceAllocation> evicted;
    {
        std::lock_guard lock(r.mutex);
        r.quarantine.emplace(r.next_sequence++, start);
        r.quarantine_bytes += a.mapping_bytes;
        evicted = take_evictions(r, false);
    }
    unmap_all(evicted);
    return cudaSuccess;
}

void add_pinned(void* p, std::size_t bytes) {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    r.pinned.emplace(static_cast<const char*>(p), bytes);
}

std::size_t page_size() {
    static const std::size_t page = [] {
        const long v = sysconf(_SC_PAGESIZE);
        return v > 0 ? static_cast<std::size_t>(v) : std::size_t{4096};
    }();
    return page;
}

std::size_t guarded_mapping_size(std::size_t bytes) { return round_up(bytes, page_size()) + page_size(); }

char* map_with_trailing_guard(std::size_t mapped) {
    void* memory = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (memory == MAP_FAILED) throw std::bad_alloc();
    char* base = static_cast<char*>(memory);
    if (mprotect(base + mapped - page_size(), page_size(), PROT_NONE) != 0) {
        munmap(base, mapped);
        throw std::bad_alloc();
    }
    return base;
}

bool is_pinned_range(const void* p, std::size_t bytes) {
    Registry& r = registry();
    const char* c = static_cast<const char*>(p);
    std::lock_guard lock(r.mutex);
    auto it = r.pinned.upper_bound(c);
    if (it == r.pinned.begin()) return false;
    --it;
    return bytes <= it->second && static_cast<std::size_t>(c - it->first) <= it->second - bytes;
}

cudaError_t free_pinned(void* p) {
    if (p == nullptr) return cudaSuccess;
    Registry& r = registry();
    {
        std::lock_guard lock(r.mutex);
        auto it = r.pinned.find(static_cast<const char*>(p));
        if (it == r.pinned.end()) return cudaErrorInvalidValue;
        r.pinned.erase(it);
    }
    std::free(p);
    return cudaSuccess;
}

namespace {

// A bounded text buffer that formats without allocating (safe in a signal
// handler, unlike snprintf). Always NUL-terminated; truncates silently.
class Text {
public:
    Text(char* buffer, std::size_t size) : buffer_(buffer), size_(size) {
        if (size_ > 0) buffer_[0] = '\0';
    }
    Text& str(const char* s) {
        while (*s != '\0') put(*s++);
        return *this;
    }
    Text& dec(unsigned long long v) {
        char digits[24];
        int n = 0;
        do {
            digits[n++] = static_cast<char>('0' + v % 10);
            v /= 10;
        } while (v != 0);
        while (n > 0) put(digits[--n]);
        return *this;
    }
    Text& hex(std::uintptr_t v) {
        char digits[20];
        int n = 0;
        do {
            digits[n++] = "0123456789abcdef"[v & 15];
            v >>= 4;
        } while (v != 0);
        put('0');
        put('x');
        while (n > 0) put(digits[--n]);
        return *this;
    }

private:
    void put(char c) {
        if (length_ + 1 >= size_) return;
        buffer_[length_++] = c;
        buffer_[length_] = '\0';
    }
    char* buffer_;
    std::size_t size_;
    std::size_t length_ = 0;
};

// "a 4000-byte device allocation at 0x7f..."
void name_allocation(Text& t, const char* start, const DeviceAllocation& a) {
    t.str("a ").dec(a.bytes).str("-byte ").str(kind_name(a.kind)).str(" at ").hex(reinterpret_cast<std::uintptr_t>(start));
}

// Where `address` lies relative to the allocation at `start`.
void describe_offset(Text& t, const char* address, const char* start, const DeviceAllocation& a) {
    if (address < start) {
        t.dec(static_cast<unsigned long long>(start - address)).str(" bytes before the start of ");
        name_allocation(t, start, a);
        return;
    }
    const std::size_t offset = static_cast<std::size_t>(address - start);
    t.str("byte offset ").dec(offset).str(" of ");
    name_allocation(t, start, a);
    if (offset >= a.bytes) t.str(", ").dec(offset - a.bytes).str(" bytes past its end");
}

// The entry of `m` whose mapping holds `address`, or m.end(). Mappings do
// not overlap and each holds its start, so it is the entry with the largest
// start <= address or the one with the smallest start > address.
using AllocationMap = std::map<const char*, DeviceAllocation>;
AllocationMap::const_iterator mapping_holding(const AllocationMap& m, const char* address) {
    auto above = m.upper_bound(address);
    auto inside = [&](AllocationMap::const_iterator it) {
        return it != m.end() && address >= it->second.mapping &&
               address - it->second.mapping < static_cast<std::ptrdiff_t>(it->second.mapping_bytes);
    };
    if (above != m.begin() && inside(std::prev(above))) return std::prev(above);
    if (inside(above)) return above;
    return m.end();
}

// The live allocation with the largest start below `address` whose mapping
// ends at most kNearbyBytes before it, or m.end().
AllocationMap::const_iterator allocation_just_below(const AllocationMap& m, const char* address) {
    auto above = m.upper_bound(address);
    if (above == m.begin()) return m.end();
    auto below = std::prev(above);
    const char* mapping_end = below->second.mapping + below->second.mapping_bytes;
    if (address >= mapping_end && static_cast<std::size_t>(address - mapping_end) > kNearbyBytes) return m.end();
    return below;
}

}  // namespace

std::vector<std::pair<const char*, std::size_t>> live_device_allocations() {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    std::vector<std::pair<const char*, std::size_t>> out;
    out.reserve(r.device.size());
    for (const auto& [start, allocation] : r.device) out.emplace_back(start, allocation.bytes);
    return out;
}

bool describe_fault_address(const void* address, char* buffer, std::size_t size) {
    if (!g_registry_constructed.load(std::memory_order_acquire)) return false;
    Registry& r = registry();
    // Other threads hold the lock only briefly; the faulting thread itself
    // runs kernel code and does not hold it. A bounded wait still keeps a
    // fault in an unexpected place from hanging the report.
    bool locked = false;
    for (int attempt = 0; attempt < 2000 && !locked; ++attempt) {
        locked = r.mutex.try_lock();
        if (!locked) {
            const timespec pause{0, 50 * 1000};  // 50 us, at most 0.1 s in all
            nanosleep(&pause, nullptr);
        }
    }
    if (!locked) return false;
    std::lock_guard lock(r.mutex, std::adopt_lock);

    const char* a = static_cast<const char*>(address);
    Text t(buffer, size);
    const auto live = mapping_holding(r.device, a);
    if (live != r.device.end()) {
        const char* start = live->first;
        const DeviceAllocation& allocation = live->second;
        if (a >= start && static_cast<std::size_t>(a - start) < allocation.bytes) {
            // Not a guard page; the caller's fault has another cause.
            t.str("access inside ");
            name_allocation(t, start, allocation);
            t.str(" (byte offset ").dec(static_cast<unsigned long long>(a - start)).str(")");
            return true;
        }
        t.str("out-of-bounds access: ");
        describe_offset(t, a, start, allocation);
        if (a < start) {
            // Mappings may touch, so the front guard of this allocation may
            // as well be reached by overrunning the allocation just below.
            const auto below = allocation_just_below(r.device, allocation.mapping);
            if (below != r.device.end()) {
                t.str(" (or ").dec(static_cast<unsigned long long>(a - below->first) - below->second.bytes)
                    .str(" bytes past the end of ");
                name_allocation(t, below->first, below->second);
                t.str(")");
            }
        }
        return true;
    }
    const auto freed = mapping_holding(r.freed, a);
    if (freed != r.freed.end()) {
        t.str("use of a freed ").str(kind_name(freed->second.kind)).str(" (").dec(freed->second.bytes)
            .str(" bytes at ").hex(reinterpret_cast<std::uintptr_t>(freed->first)).str(", freed by cudaFree): ");
        if (a < freed->first) {
            t.dec(static_cast<unsigned long long>(freed->first - a)).str(" bytes before its start");
        } else {
            const std::size_t offset = static_cast<std::size_t>(a - freed->first);
            t.str("byte offset ").dec(offset);
            if (offset >= freed->second.bytes) t.str(", past its end");
        }
        return true;
    }
    // Past every guard: a large overrun of the allocation just below, if any.
    const auto below = allocation_just_below(r.device, a);
    if (below != r.device.end()) {
        t.str("out-of-bounds access: ");
        describe_offset(t, a, below->first, below->second);
        t.str(" (the nearest allocation below this address)");
        return true;
    }
    return false;
}

cudaError_t validate_copy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind, bool& dst_device,
                          bool& src_device) {
    dst_device = false;
    src_device = false;
    if (dst == nullptr || src == nullptr) return cudaErrorInvalidValue;
    switch (kind) {
        case cudaMemcpyHostToHost: break;
        case cudaMemcpyHostToDevice: dst_device = true; break;
        case cudaMemcpyDeviceToHost: src_device = true; break;
        case cudaMemcpyDeviceToDevice: dst_device = src_device = true; break;
        case cudaMemcpyDefault:
            dst_device = is_device_pointer(dst);
            src_device = is_device_pointer(src);
            break;
        default: return cudaErrorInvalidMemcpyDirection;
    }
    // A GPU refuses a device range that is not inside one allocation; the
    // emulator does the same rather than reading or writing host memory.
    if ((dst_device && !is_device_range(dst, bytes)) || (src_device && !is_device_range(src, bytes))) {
        return cudaErrorInvalidValue;
    }
    return cudaSuccess;
}

void perform_copy(void* dst, const void* src, std::size_t bytes, bool dst_device) {
    std::memmove(dst, src, bytes);
    if (dst_device && g_analysis_hooks != nullptr) g_analysis_hooks->device_written(dst, bytes);
}

cudaError_t validate_memset(void* ptr, std::size_t bytes) {
    return is_device_range(ptr, bytes) ? cudaSuccess : cudaErrorInvalidValue;
}

void perform_memset(void* ptr, int value, std::size_t bytes) {
    std::memset(ptr, value, bytes);
    if (g_analysis_hooks != nullptr) g_analysis_hooks->device_written(ptr, bytes);
}

}  // namespace course_emu::detail

