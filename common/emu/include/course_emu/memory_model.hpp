/// @file memory_model.hpp
/// @brief Memory fences (`__threadfence()` and its block and system forms)
/// and `cuda::atomic_ref` / `cuda::atomic` / `cuda::std::atomic` (from
/// `<cuda/atomic>` and `<cuda/std/atomic>`) for the emulator.
///
/// Device memory is host memory and the blocks of a grid run on several
/// host threads, so each of these is its C++ counterpart: a fence is
/// `std::atomic_thread_fence` (sequentially consistent, whatever its CUDA
/// scope: the emulator has one memory; in analysed code the instrumentation
/// hands it to course_emu_analysis, which performs it and records it for the
/// race check), and an atomic reference is a
/// `std::atomic_ref` with the memory order the kernel asked for. Like CUDA's
/// atomic functions (atomics.hpp), every operation is first a scheduling
/// point, where the other threads of the block may run; a load, and a
/// read-modify-write that leaves the value unchanged, then tell the scheduler
/// that the thread may be spinning (scheduling.hpp, spin_read), so a
/// look-back that waits for another block's flag makes progress, and one that
/// waits forever is reported as a deadlock with its file and line.
#pragma once

#include <course_emu/atomics.hpp>

#include <atomic>
#include <type_traits>

/// @brief Orders this thread's memory accesses before the fence before those
/// after it, as every thread of the device sees them.
inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
/// @brief The same, for the threads of the block (the emulator has one memory: the same fence).
inline void __threadfence_block() { std::atomic_thread_fence(std::memory_order_seq_cst); }
/// @brief The same, for the host and peer devices too (the same fence).
inline void __threadfence_system() { std::atomic_thread_fence(std::memory_order_seq_cst); }

namespace cuda {

/// @brief The threads an atomic operation or fence must be coherent with.
/// The emulator has one memory, so every scope behaves as the system scope.
enum thread_scope { thread_scope_system = 0, thread_scope_device = 1, thread_scope_block = 2, thread_scope_thread = 3 };

namespace std {

using memory_order = ::std::memory_order;
inline constexpr memory_order memory_order_relaxed = ::std::memory_order_relaxed;
inline constexpr memory_order memory_order_consume = ::std::memory_order_consume;
inline constexpr memory_order memory_order_acquire = ::std::memory_order_acquire;
inline constexpr memory_order memory_order_release = ::std::memory_order_release;
inline constexpr memory_order memory_order_acq_rel = ::std::memory_order_acq_rel;
inline constexpr memory_order memory_order_seq_cst = ::std::memory_order_seq_cst;

/// @brief A fence with `order` (as `__threadfence()` when sequentially consistent).
inline void atomic_thread_fence(memory_order order) { ::std::atomic_thread_fence(order); }

}  // namespace std

using std::memory_order;
using std::memory_order_acq_rel;
using std::memory_order_acquire;
using std::memory_order_consume;
using std::memory_order_relaxed;
using std::memory_order_release;
using std::memory_order_seq_cst;

/// @brief `cuda::atomic_thread_fence(order, scope)`: a fence (every scope is the device's here).
inline void atomic_thread_fence(memory_order order, thread_scope = thread_scope_system) {
    ::std::atomic_thread_fence(order);
}

namespace detail_emu {

/// A load may not release, a store may not acquire: the nearest legal order.
constexpr ::std::memory_order load_order(::std::memory_order o) {
    return o == ::std::memory_order_release ? ::std::memory_order_relaxed
           : o == ::std::memory_order_acq_rel ? ::std::memory_order_acquire
                                             : o;
}
constexpr ::std::memory_order store_order(::std::memory_order o) {
    return o == ::std::memory_order_acquire || o == ::std::memory_order_consume ? ::std::memory_order_relaxed
           : o == ::std::memory_order_acq_rel                                  ? ::std::memory_order_release
                                                                               : o;
}

using course_emu::detail::AtomicKind;
using course_emu::detail::CallSite;

}  // namespace detail_emu

/// @brief Atomic operations on an object in device (or shared) memory that is
/// not itself atomic: `cuda::atomic_ref<int, cuda::thread_scope_device>
/// flag(flags[i]); flag.store(1, cuda::memory_order_release);`.
///
/// The emulator's extra default arguments (file and line) name the caller in
/// a deadlock report; code never passes them.
template <class T, thread_scope Scope = thread_scope_system>
class atomic_ref {
    static_assert(::std::is_trivially_copyable_v<T> && sizeof(T) <= 8, "atomic_ref of a type of up to 8 bytes");

public:
    using value_type = T;
    static constexpr ::std::size_t required_alignment = ::std::atomic_ref<T>::required_alignment;

    explicit atomic_ref(T& object) : object_(&object) {}
    atomic_ref(const atomic_ref&) = default;
    atomic_ref& operator=(const atomic_ref&) = delete;

    T load(memory_order order = memory_order_seq_cst, const char* file = __builtin_FILE(),
           int line = __builtin_LINE()) const {
        const T value = ref("atomic_ref::load").load(detail_emu::load_order(order));
        course_emu::detail::after_atomic(false, {file, line}, object_, value);
        return value;
    }
    operator T() const { return load(); }

    void store(T desired, memory_order order = memory_order_seq_cst) const {
        ref("atomic_ref::store").store(desired, detail_emu::store_order(order));
        course_emu::detail::memory_written();
    }
    T operator=(T desired) const {
        store(desired);
        return desired;
    }

    T exchange(T desired, memory_order order = memory_order_seq_cst) const {
        const T old = ref("atomic_ref::exchange").exchange(desired, order);
        course_emu::detail::count_atomic(detail_emu::AtomicKind::exch);
        course_emu::detail::memory_written();
        return old;
    }

    bool compare_exchange_strong(T& expected, T desired, memory_order order = memory_order_seq_cst,
                                 const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
        const bool swapped = ref("atomic_ref::compare_exchange_strong").compare_exchange_strong(expected, desired, order);
        course_emu::detail::count_atomic(detail_emu::AtomicKind::cas);
        course_emu::detail::after_atomic(swapped, {file, line}, object_, expected);
        return swapped;
    }
    bool compare_exchange_strong(T& expected, T desired, memory_order success, memory_order failure,
                                 const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
        const bool swapped = ref("atomic_ref::compare_exchange_strong")
                                 .compare_exchange_strong(expected, desired, success, detail_emu::load_order(failure));
        course_emu::detail::count_atomic(detail_emu::AtomicKind::cas);
        course_emu::detail::after_atomic(swapped, {file, line}, object_, expected);
        return swapped;
    }
    /// @brief As compare_exchange_strong (the emulator never fails spuriously).
    bool compare_exchange_weak(T& expected, T desired, memory_order order = memory_order_seq_cst,
                               const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
        return compare_exchange_strong(expected, desired, order, file, line);
    }
    bool compare_exchange_weak(T& expected, T desired, memory_order success, memory_order failure,
                               const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
        return compare_exchange_strong(expected, desired, success, failure, file, line);
    }

    T fetch_add(T arg, memory_order order = memory_order_seq_cst, const char* file = __builtin_FILE(),
                int line = __builtin_LINE()) const
        requires(::std::is_arithmetic_v<T>)
    {
        const T old = ref("atomic_ref::fetch_add").fetch_add(arg, order);
        course_emu::detail::count_atomic(detail_emu::AtomicKind::add);
        course_emu::detail::after_atomic(arg != T(0), {file, line}, object_, old);
        return old;
    }
    T fetch_sub(T arg, memory_order order = memory_order_seq_cst, const char* file = __builtin_FILE(),
                int line = __builtin_LINE()) const
        requires(::std::is_arithmetic_v<T>)
    {
        const T old = ref("atomic_ref::fetch_sub").fetch_sub(arg, order);
        course_emu::detail::count_atomic(detail_emu::AtomicKind::sub);
        course_emu::detail::after_atomic(arg != T(0), {file, line}, object_, old);
        return old;
    }
    T fetch_or(T arg, memory_order order = memory_order_seq_cst, const char* file = __builtin_FILE(),
               int line = __builtin_LINE()) const
        requires(::std::is_integral_v<T>)
    {
        const T old = ref("atomic_ref::fetch_or").fetch_or(arg, order);
        course_emu::detail::count_atomic(detail_emu::AtomicKind::or_);
        course_emu::detail::after_atomic(arg != T(0), {file, line}, object_, old);
        return old;
    }
    T fetch_and(T arg, memory_order order = memory_order_seq_cst) const
        requires(::std::is_integral_v<T>)
    {
        const T old = ref("atomic_ref::fetch_and").fetch_and(arg, order);
        course_emu::detail::count_atomic(detail_emu::AtomicKind::and_);
        course_emu::detail::memory_written();
        return old;
    }
    T fetch_xor(T arg, memory_order order = memory_order_seq_cst) const
        requires(::std::is_integral_v<T>)
    {
        const T old = ref("atomic_ref::fetch_xor").fetch_xor(arg, order);
        course_emu::detail::count_atomic(detail_emu::AtomicKind::xor_);
        course_emu::detail::memory_written();
        return old;
    }
    /// @brief `*this = min(*this, arg)`; returns the old value (libcu++'s extension).
    T fetch_min(T arg, memory_order order = memory_order_seq_cst) const {
        return extremum("atomic_ref::fetch_min", detail_emu::AtomicKind::min, arg, order, [](T a, T b) { return a < b; });
    }
    /// @brief `*this = max(*this, arg)`; returns the old value (libcu++'s extension).
    T fetch_max(T arg, memory_order order = memory_order_seq_cst) const {
        return extremum("atomic_ref::fetch_max", detail_emu::AtomicKind::max, arg, order, [](T a, T b) { return a > b; });
    }

private:
    ::std::atomic_ref<T> ref(const char* function) const { return course_emu::detail::atomic_at(function, object_); }

    template <class Better>
    T extremum(const char* function, detail_emu::AtomicKind kind, T arg, memory_order order, Better better) const {
        ::std::atomic_ref<T> r = ref(function);
        T old = r.load(detail_emu::load_order(order));
        while (better(arg, old) && !r.compare_exchange_weak(old, arg, order, detail_emu::load_order(order))) {
        }
        course_emu::detail::count_atomic(kind);
        course_emu::detail::memory_written();
        return old;
    }

    T* object_;
};

/// @brief An atomic object (e.g. a counter in device memory reached through
/// a pointer): the operations of atomic_ref on the value it holds.
template <class T, thread_scope Scope = thread_scope_system>
class atomic {
public:
    atomic() = default;
    constexpr atomic(T value) : value_(value) {}  // NOLINT: as std::atomic
    atomic(const atomic&) = delete;
    atomic& operator=(const atomic&) = delete;

    T load(memory_order order = memory_order_seq_cst, const char* file = __builtin_FILE(),
           int line = __builtin_LINE()) const {
        return view().load(order, file, line);
    }
    operator T() const { return load(); }
    void store(T desired, memory_order order = memory_order_seq_cst) { view().store(desired, order); }
    T operator=(T desired) {
        store(desired);
        return desired;
    }
    T exchange(T desired, memory_order order = memory_order_seq_cst) { return view().exchange(desired, order); }
    bool compare_exchange_strong(T& expected, T desired, memory_order order = memory_order_seq_cst,
                                 const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
        return view().compare_exchange_strong(expected, desired, order, file, line);
    }
    bool compare_exchange_weak(T& expected, T desired, memory_order order = memory_order_seq_cst,
                               const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
        return view().compare_exchange_strong(expected, desired, order, file, line);
    }
    T fetch_add(T arg, memory_order order = memory_order_seq_cst, const char* file = __builtin_FILE(),
                int line = __builtin_LINE()) {
        return view().fetch_add(arg, order, file, line);
    }
    T fetch_sub(T arg, memory_order order = memory_order_seq_cst, const char* file = __builtin_FILE(),
                int line = __builtin_LINE()) {
        return view().fetch_sub(arg, order, file, line);
    }
    T fetch_or(T arg, memory_order order = memory_order_seq_cst) { return view().fetch_or(arg, order); }
    T fetch_and(T arg, memory_order order = memory_order_seq_cst) { return view().fetch_and(arg, order); }
    T fetch_min(T arg, memory_order order = memory_order_seq_cst) { return view().fetch_min(arg, order); }
    T fetch_max(T arg, memory_order order = memory_order_seq_cst) { return view().fetch_max(arg, order); }

private:
    atomic_ref<T, Scope> view() const { return atomic_ref<T, Scope>(const_cast<T&>(value_)); }
    alignas(sizeof(T)) T value_{};
};

namespace std {
/// @brief `cuda::std::atomic_ref<T>`: cuda::atomic_ref at system scope.
template <class T>
using atomic_ref = ::cuda::atomic_ref<T, thread_scope_system>;
/// @brief `cuda::std::atomic<T>`: cuda::atomic at system scope.
template <class T>
using atomic = ::cuda::atomic<T, thread_scope_system>;
}  // namespace std

}  // namespace cuda
