// Atomic functions' per-launch counts, and the fault for a bad atomic address.
//
// The atomics themselves are inline in course_emu/atomics.hpp, so that an
// atomic in a kernel's loop costs a host atomic and a call to the scheduling
// point, not a library call as well.
#include <course_emu/atomics.hpp>
#include <course_emu/launch.hpp>

#include <cstdio>

namespace course_emu {
namespace detail {

AtomicCounter g_atomic_counts[static_cast<unsigned>(AtomicKind::count)];

void reset_atomic_counts() {
    for (AtomicCounter& c : g_atomic_counts) c.value.store(0, std::memory_order_relaxed);
}

void bad_atomic_address(const char* file, int line, const char* function, const void* address,
                        std::size_t alignment) {
    // The fault keeps a pointer to its text until the runtime has copied it
    // into the report, which happens on this worker before it runs anything
    // else; a buffer per worker is therefore enough.
    thread_local char what[200];
    if (address == nullptr) {
        std::snprintf(what, sizeof what,
                      "%s was given a null address (a GPU stops the kernel with cudaErrorIllegalAddress)",
                      function);
    } else {
        // The emulator has no cudaErrorMisalignedAddress; an illegal address is the nearest code.
        std::snprintf(what, sizeof what,
                      "%s was given address %p, which is not aligned to %zu bytes (a GPU stops the kernel "
                      "with cudaErrorMisalignedAddress)",
                      function, address, alignment);
    }
    raise_fault(file, line, what, cudaErrorIllegalAddress);
}

}  // namespace detail

AtomicCounts last_launch_atomic_counts() {
    using detail::AtomicKind;
    const auto get = [](AtomicKind kind) {
        return detail::g_atomic_counts[static_cast<unsigned>(kind)].value.load(std::memory_order_relaxed);
    };
    AtomicCounts c;
    c.add = get(AtomicKind::add);
    c.sub = get(AtomicKind::sub);
    c.exch = get(AtomicKind::exch);
    c.min = get(AtomicKind::min);
    c.max = get(AtomicKind::max);
    c.inc = get(AtomicKind::inc);
    c.dec = get(AtomicKind::dec);
    c.and_ = get(AtomicKind::and_);
    c.or_ = get(AtomicKind::or_);
    c.xor_ = get(AtomicKind::xor_);
    c.cas = get(AtomicKind::cas);
    c.total = c.add + c.sub + c.exch + c.min + c.max + c.inc + c.dec + c.and_ + c.or_ + c.xor_ + c.cas;
    return c;
}

}  // namespace course_emu
