// Static __shared__ arrays in guarded memory (course_emu/static_shared.hpp):
// one mapping per array and worker thread, the array's end at the start of
// an inaccessible page, and the description of a fault there.
#include <course_emu/static_shared.hpp>

#include "allocator.hpp"
#include "static_shared_guard.hpp"

#include <cstdio>
#include <vector>

#include <sys/mman.h>

namespace course_emu::detail {

namespace {

struct GuardedArray {
    char* base;           // the mapping
    std::size_t mapped;   // its size, guard page included
    char* data;           // the array: its last byte is just before the guard page
    std::size_t bytes;
    std::size_t element;
    unsigned rank;
    std::size_t extents[3];
    const char* name;
    const char* file;
    int line;
};

// The calling worker's arrays; unmapped when the worker ends (the kernels'
// references to them are thread_local too, and end with it).
struct Registry {
    std::vector<GuardedArray> arrays;
    Registry() { arrays.reserve(16); }
    Registry(const Registry&) = delete;
    Registry& operator=(const Registry&) = delete;
    ~Registry() {
        for (const GuardedArray& a : arrays) munmap(a.base, a.mapped);
    }
};

thread_local Registry t_registry;

unsigned clamped_rank(const GuardedArray& a) { return a.rank < 1 ? 1 : (a.rank > 3 ? 3 : a.rank); }

// "[3][7]": `rank` subscripts (async-signal-safe: snprintf of numbers only).
void format_subscripts(const std::size_t* values, unsigned rank, char* out, std::size_t size) {
    int used = 0;
    for (unsigned d = 0; d < rank && used >= 0 && static_cast<std::size_t>(used) < size; ++d) {
        used += std::snprintf(out + used, size - static_cast<std::size_t>(used), "[%zu]", values[d]);
    }
}

// The subscripts of a flat element index of an array of the given extents.
void format_index(std::size_t flat, const GuardedArray& a, char* out, std::size_t size) {
    const unsigned rank = clamped_rank(a);
    std::size_t index[3] = {flat, 0, 0};
    if (rank > 1) {
        // Row-major: the last dimension varies fastest; the first takes what is left (past its end).
        std::size_t rest = flat;
        for (unsigned d = rank; d-- > 1;) {
            index[d] = rest % a.extents[d];
            rest /= a.extents[d];
        }
        index[0] = rest;
    }
    format_subscripts(index, rank, out, size);
}

}  // namespace

bool describe_static_shared_fault(const void* address, char* buffer, std::size_t size) {
    const char* at = static_cast<const char*>(address);
    for (const GuardedArray& a : t_registry.arrays) {
        const char* guard = a.data + a.bytes;
        if (at < guard || at >= a.base + a.mapped) continue;
        const std::size_t byte = static_cast<std::size_t>(at - a.data);
        char index[64] = "";
        char dims[64] = "";
        format_index(byte / a.element, a, index, sizeof index);
        format_subscripts(a.extents, clamped_rank(a), dims, sizeof dims);
        std::snprintf(buffer, size,
                      "out-of-bounds access to shared memory: element %s%s of the static __shared__ array %s%s "
                      "(%zu-byte elements, %zu bytes, declared at %s:%d), byte %zu of it: an index past the end "
                      "of the array (more threads than elements, or a bound off by one?)",
                      a.name, index, a.name, dims, a.element, a.bytes, a.file, a.line, byte);
        return true;
    }
    return false;
}

void* static_shared_storage(std::size_t bytes, std::size_t alignment, std::size_t element, unsigned rank,
                            const std::size_t* extents, const char* name, const char* file, int line) {
    const std::size_t rounded = (bytes + alignment - 1) / alignment * alignment;
    const std::size_t mapped = guarded_mapping_size(rounded);
    char* base = map_with_trailing_guard(mapped);
    char* guard = base + mapped - page_size();
    GuardedArray a{base, mapped, guard - rounded, bytes, element == 0 ? 1 : element, rank, {1, 1, 1}, name, file, line};
    for (unsigned d = 0; d < rank && d < 3; ++d) a.extents[d] = extents[d] == 0 ? 1 : extents[d];
    t_registry.arrays.push_back(a);
    return a.data;
}

}  // namespace course_emu::detail
