/// @file atomics.hpp
/// @brief CUDA's atomic functions for the emulator, and how many ran in the last launch.
///
/// Device memory is ordinary host memory (cudaMalloc aligns to 256 bytes), and
/// blocks run concurrently on several worker threads, so each atomic is a real
/// host atomic through std::atomic_ref. Every atomic first calls the
/// scheduler's atomic_scheduling_point(), where the scheduler may switch to
/// another thread of the block: a compare-and-swap loop then meets the
/// contention it would meet on a GPU instead of always winning at once.
///
/// The operations are sequentially consistent although CUDA's are relaxed.
/// That costs nothing on x86, where every read-modify-write is a full
/// barrier, and little on arm64; and it makes the emulator correct by the C++
/// memory model rather than by the host CPU's: each atomic releases what its
/// thread wrote before it, and acquires what was written before every earlier
/// atomic on the same address, so code that publishes results through an atomic
/// (the "last block finishes the job" pattern, which a GPU needs
/// `__threadfence()` for) sees them on a weakly ordered CPU (arm64) as on
/// x86. The blocks of a grid run on several worker threads; the threads of
/// one block are fibers of one worker and need no ordering among themselves.
#pragma once

#include <course_emu/scheduling.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace course_emu {

/// @brief How many atomic operations a launch performed, in total and by
/// function (atomicAdd counts under `add`, atomicCAS under `cas`, ...).
///
/// Tests use it to see how a kernel uses atomics, e.g. that a reduction does
/// one atomicAdd per block rather than one per element, or how often a
/// compare-and-swap loop had to retry.
struct AtomicCounts {
    unsigned long long total = 0, add = 0, sub = 0, exch = 0, min = 0, max = 0, inc = 0, dec = 0, and_ = 0,
                       or_ = 0, xor_ = 0, cas = 0;
};

/// @brief Counts of atomic operations in the most recent launch (reset when a launch starts).
///
/// Read it after the launch has finished (after cudaDeviceSynchronize() or a
/// download); a launch that the runtime refuses (invalid configuration) does
/// not start, so it leaves the previous launch's counts in place.
AtomicCounts last_launch_atomic_counts();

namespace detail {

/// @brief The kinds of atomic operation, one counter each.
enum class AtomicKind : unsigned { add, sub, exch, min, max, inc, dec, and_, or_, xor_, cas, count };

/// @brief One counter per cache line, so that workers counting different
/// kinds do not slow each other down through false sharing.
struct alignas(64) AtomicCounter {
    std::atomic<unsigned long long> value{0};
};

/// @brief Per-kind counts of the running launch (defined in atomics.cpp).
/// The total is summed when read, so an atomic costs one increment.
extern AtomicCounter g_atomic_counts[static_cast<unsigned>(AtomicKind::count)];

/// @brief Reports a null or misaligned atomic address as a fault of the
/// running thread (a GPU stops the kernel there too); never returns. The
/// fault names this header's line: the student's line is not known here, but
/// the report adds the kernel, block and thread.
[[noreturn]] void bad_atomic_address(const char* file, int line, const char* function, const void* address,
                                     std::size_t alignment);

/// @brief The atomic view of `*address`, after the scheduling point and a
/// check of the address that std::atomic_ref needs (and a GPU enforces).
template <class T>
std::atomic_ref<T> atomic_at(const char* function, T* address) {
    constexpr std::size_t alignment = std::atomic_ref<T>::required_alignment;
    if (address == nullptr || reinterpret_cast<std::uintptr_t>(address) % alignment != 0) [[unlikely]] {
        bad_atomic_address(__FILE__, __LINE__, function, address, alignment);
    }
    atomic_scheduling_point();
    return std::atomic_ref<T>(*address);
}

inline void count_atomic(AtomicKind kind) {
    g_atomic_counts[static_cast<unsigned>(kind)].value.fetch_add(1, std::memory_order_relaxed);
}

/// @brief Where an atomic function was called: the student's file and line,
/// taken by the functions' default arguments (`__builtin_FILE()`), which the
/// translator's `#line` directives make the `.cu` file's.
struct CallSite {
    const char* file = "";
    int line = 0;
};

/// @brief The site of the atomic function this thread is inside, while it
/// runs its operation (else line 0): how the analysis (`./course show`)
/// names the line of an atomic, whose instruction is in this header's code,
/// shared by every call of the function.
inline CallSite& current_atomic_site() {
    thread_local CallSite site;
    return site;
}

/// @brief The bits of an atomic's value, for spin_read() to compare turns.
template <class T>
unsigned long long value_bits(T value) {
    static_assert(sizeof(T) <= 8);
    unsigned long long bits = 0;
    __builtin_memcpy(&bits, &value, sizeof(T));
    return bits;
}

/// @brief Tells the scheduler what an atomic did: wrote memory, or only read
/// it (then it may be one turn of a spin-wait at `site`).
template <class T>
void after_atomic(bool wrote, CallSite site, const T* address, T old) {
    if (wrote) {
        memory_written();
    } else {
        spin_read(site.file, site.line, address, value_bits(old));
    }
}

/// @brief One std::atomic_ref operation (`fetch(ref)` returns the old
/// value), with the checks, the scheduling point and the count around it.
template <class T, class Fetch>
T atomic_fetch(const char* function, AtomicKind kind, T* address, Fetch fetch, bool writes = true,
               CallSite site = {}) {
    std::atomic_ref<T> ref = atomic_at(function, address);
    current_atomic_site() = site;
    const T old = fetch(ref);
    current_atomic_site() = {};
    count_atomic(kind);
    after_atomic(writes, site, address, old);
    return old;
}

/// @brief Replaces `*address` with `next(old)` atomically and returns the old
/// value: the compare-and-swap loop behind the operations C++ has no fetch_ for.
template <class T, class Next>
T atomic_update(const char* function, AtomicKind kind, T* address, Next next) {
    std::atomic_ref<T> ref = atomic_at(function, address);
    T old = ref.load(std::memory_order_relaxed);
    while (!ref.compare_exchange_weak(old, next(old))) {
    }
    count_atomic(kind);
    memory_written();
    return old;
}

/// @brief atomicMin and atomicMax: no write when the value would not change,
/// so threads that lose the comparison do not contend for the cache line.
template <class T, class Better>
T atomic_extremum(const char* function, AtomicKind kind, T* address, T val, Better better) {
    std::atomic_ref<T> ref = atomic_at(function, address);
    T old = ref.load(std::memory_order_relaxed);
    while (better(val, old) && !ref.compare_exchange_weak(old, val)) {
    }
    count_atomic(kind);
    memory_written();
    return old;
}

}  // namespace detail
}  // namespace course_emu

// CUDA's atomic functions, in the global namespace with CUDA's signatures
// and results: each returns the value `*address` held before the operation.
// Those that can leave memory unchanged (atomicAdd(p, 0), atomicOr(p, 0), a
// failed atomicCAS ...) take the caller's file and line as default
// arguments: such a call only reads, and a loop of them waiting for a value
// is a spin-wait that the scheduler must see (scheduling.hpp, spin_read).
// One template per function stands for CUDA's overloads: `T` is taken from
// the pointer alone and must be one of the types CUDA provides, and the
// other arguments convert to it as they would to an overload's parameters.

namespace course_emu::detail {
template <class T, class... Types>
concept one_of = (std::is_same_v<T, Types> || ...);
}  // namespace course_emu::detail

/// @brief `*address += val` (int, unsigned int, unsigned long long, float, double); returns the old value.
template <class T>
    requires course_emu::detail::one_of<T, int, unsigned int, unsigned long long int, float, double>
T atomicAdd(T* address, std::type_identity_t<T> val, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    return course_emu::detail::atomic_fetch("atomicAdd", course_emu::detail::AtomicKind::add, address,
                                            [val](auto& ref) { return ref.fetch_add(val); }, val != T(0),
                                            {file, line});
}

/// @brief `*address -= val` (int, unsigned int); returns the old value.
template <class T>
    requires course_emu::detail::one_of<T, int, unsigned int>
T atomicSub(T* address, std::type_identity_t<T> val, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    return course_emu::detail::atomic_fetch("atomicSub", course_emu::detail::AtomicKind::sub, address,
                                            [val](auto& ref) { return ref.fetch_sub(val); }, val != T(0),
                                            {file, line});
}

/// @brief `*address = val` (int, unsigned int, unsigned long long, float); returns the old value.
template <class T>
    requires course_emu::detail::one_of<T, int, unsigned int, unsigned long long int, float>
T atomicExch(T* address, std::type_identity_t<T> val) {
    return course_emu::detail::atomic_fetch("atomicExch", course_emu::detail::AtomicKind::exch, address,
                                            [val](auto& ref) { return ref.exchange(val); });
}

/// @brief `*address = min(*address, val)` (int, unsigned int, long long, unsigned long long); returns the old value.
template <class T>
    requires course_emu::detail::one_of<T, int, unsigned int, long long int, unsigned long long int>
T atomicMin(T* address, std::type_identity_t<T> val) {
    return course_emu::detail::atomic_extremum("atomicMin", course_emu::detail::AtomicKind::min, address, val,
                                               [](T a, T b) { return a < b; });
}

/// @brief `*address = max(*address, val)` (int, unsigned int, long long, unsigned long long); returns the old value.
template <class T>
    requires course_emu::detail::one_of<T, int, unsigned int, long long int, unsigned long long int>
T atomicMax(T* address, std::type_identity_t<T> val) {
    return course_emu::detail::atomic_extremum("atomicMax", course_emu::detail::AtomicKind::max, address, val,
                                               [](T a, T b) { return a > b; });
}

/// @brief A counter that wraps to 0 after `val`:
/// `*address = (old >= val) ? 0 : old + 1`; returns the old value.
inline unsigned int atomicInc(unsigned int* address, unsigned int val) {
    return course_emu::detail::atomic_update("atomicInc", course_emu::detail::AtomicKind::inc, address,
                                             [val](unsigned int old) { return old >= val ? 0u : old + 1u; });
}

/// @brief A counter that wraps to `val` below 0:
/// `*address = (old == 0 || old > val) ? val : old - 1`; returns the old value.
inline unsigned int atomicDec(unsigned int* address, unsigned int val) {
    return course_emu::detail::atomic_update(
        "atomicDec", course_emu::detail::AtomicKind::dec, address,
        [val](unsigned int old) { return old == 0u || old > val ? val : old - 1u; });
}

/// @brief `*address &= val` (int, unsigned int, unsigned long long); returns the old value.
template <class T>
    requires course_emu::detail::one_of<T, int, unsigned int, unsigned long long int>
T atomicAnd(T* address, std::type_identity_t<T> val, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    return course_emu::detail::atomic_fetch("atomicAnd", course_emu::detail::AtomicKind::and_, address,
                                            [val](auto& ref) { return ref.fetch_and(val); }, val != static_cast<T>(~T(0)),
                                            {file, line});
}

/// @brief `*address |= val` (int, unsigned int, unsigned long long); returns the old value.
template <class T>
    requires course_emu::detail::one_of<T, int, unsigned int, unsigned long long int>
T atomicOr(T* address, std::type_identity_t<T> val, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    return course_emu::detail::atomic_fetch("atomicOr", course_emu::detail::AtomicKind::or_, address,
                                            [val](auto& ref) { return ref.fetch_or(val); }, val != T(0),
                                            {file, line});
}

/// @brief `*address ^= val` (int, unsigned int, unsigned long long); returns the old value.
template <class T>
    requires course_emu::detail::one_of<T, int, unsigned int, unsigned long long int>
T atomicXor(T* address, std::type_identity_t<T> val, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    return course_emu::detail::atomic_fetch("atomicXor", course_emu::detail::AtomicKind::xor_, address,
                                            [val](auto& ref) { return ref.fetch_xor(val); }, val != T(0),
                                            {file, line});
}

/// @brief `*address = (old == compare) ? val : old` (unsigned short, int,
/// unsigned int, unsigned long long); returns the old value, so the swap
/// happened exactly when the result equals `compare`.
template <class T>
    requires course_emu::detail::one_of<T, unsigned short int, int, unsigned int, unsigned long long int>
T atomicCAS(T* address, std::type_identity_t<T> compare, std::type_identity_t<T> val,
            const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    std::atomic_ref<T> ref = course_emu::detail::atomic_at("atomicCAS", address);
    T old = compare;
    const bool swapped = ref.compare_exchange_strong(old, val);
    course_emu::detail::count_atomic(course_emu::detail::AtomicKind::cas);
    // A failed compare-and-swap only read: perhaps a turn of a spin-wait.
    course_emu::detail::after_atomic(swapped, {file, line}, address, old);
    return old;
}
