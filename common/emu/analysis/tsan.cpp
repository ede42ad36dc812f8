// The callbacks that kernel code compiled with GCC's or Clang's
// -fsanitize=thread calls (__tsan_read4, __tsan_write4, ... before every load
// and store; the atomics in place of the atomic operations), and
// -fsanitize-coverage=trace-pc's __sanitizer_cov_trace_pc at the start of
// every basic block. This library defines them itself (no TSan runtime is
// linked) and hands each access to the recorder (recorder.cpp).
#include "recorder.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>

// ---- the callbacks the -fsanitize=thread instrumentation (GCC's, Clang's) calls

using course_emu::analysis::kAtomic;
using course_emu::analysis::kWrite;

namespace {

inline void record(const volatile void* address, std::size_t size, std::uint8_t flags, std::uintptr_t pc) {
    course_emu::analysis::record_access(address, size, flags, pc);
}

}  // namespace

#define COURSE_PC (reinterpret_cast<std::uintptr_t>(__builtin_return_address(0)) - 1)

extern "C" {

void __tsan_init() {}
void __tsan_func_entry(void*) {}
void __tsan_func_exit() {}
void __tsan_vptr_update(void**, void*) {}
void __tsan_vptr_read(void**) {}

#define COURSE_TSAN_ACCESS(n)                                                                       \
    void __tsan_read##n(void* a) { record(a, n, 0, COURSE_PC); }                                     \
    void __tsan_write##n(void* a) { record(a, n, kWrite, COURSE_PC); }                               \
    void __tsan_unaligned_read##n(void* a) { record(a, n, 0, COURSE_PC); }                           \
    void __tsan_unaligned_write##n(void* a) { record(a, n, kWrite, COURSE_PC); }                     \
    void __tsan_volatile_read##n(void* a) { record(a, n, 0, COURSE_PC); }                            \
    void __tsan_volatile_write##n(void* a) { record(a, n, kWrite, COURSE_PC); }                      \
    void __tsan_unaligned_volatile_read##n(void* a) { record(a, n, 0, COURSE_PC); }                  \
    void __tsan_unaligned_volatile_write##n(void* a) { record(a, n, kWrite, COURSE_PC); }
COURSE_TSAN_ACCESS(1)
COURSE_TSAN_ACCESS(2)
COURSE_TSAN_ACCESS(4)
COURSE_TSAN_ACCESS(8)
COURSE_TSAN_ACCESS(16)
#undef COURSE_TSAN_ACCESS

void __tsan_read_range(void* a, unsigned long size) { record(a, size, 0, COURSE_PC); }
void __tsan_write_range(void* a, unsigned long size) { record(a, size, kWrite, COURSE_PC); }

// Clang's instrumentation (from version 17; cmake/CourseAnalysis.cmake
// renames older ones' calls to these) turns memcpy, memmove and memset,
// a struct's copy among them, into these calls: a load of the source range
// and a store to the destination range, then the copy itself. (GCC
// instruments a struct's copy as ranges or sized accesses, and leaves the
// library's functions alone.)
void* __tsan_memcpy(void* d, const void* s, unsigned long size) {
    if (size != 0) {
        record(s, size, 0, COURSE_PC);
        record(d, size, kWrite, COURSE_PC);
    }
    return std::memcpy(d, s, size);
}
void* __tsan_memmove(void* d, const void* s, unsigned long size) {
    if (size != 0) {
        record(s, size, 0, COURSE_PC);
        record(d, size, kWrite, COURSE_PC);
    }
    return std::memmove(d, s, size);
}
void* __tsan_memset(void* d, int value, unsigned long size) {
    if (size != 0) record(d, size, kWrite, COURSE_PC);
    return std::memset(d, value, size);
}

// Atomics: performed here (sequentially consistent, whatever order was
// asked: stronger is allowed), recorded as atomic accesses.
#define COURSE_TSAN_ATOMIC(n, T)                                                                                \
    T __tsan_atomic##n##_load(const volatile T* a, int) {                                                      \
        record(a, sizeof(T), kAtomic, COURSE_PC);                                                               \
        return __atomic_load_n(a, __ATOMIC_SEQ_CST);                                                            \
    }                                                                                                           \
    void __tsan_atomic##n##_store(volatile T* a, T v, int) {                                                   \
        record(a, sizeof(T), kAtomic | kWrite, COURSE_PC);                                                      \
        __atomic_store_n(a, v, __ATOMIC_SEQ_CST);                                                               \
    }                                                                                                           \
    T __tsan_atomic##n##_exchange(volatile T* a, T v, int) {                                                   \
        record(a, sizeof(T), kAtomic | kWrite, COURSE_PC);                                                      \
        return __atomic_exchange_n(a, v, __ATOMIC_SEQ_CST);                                                     \
    }                                                                                                           \
    T __tsan_atomic##n##_fetch_add(volatile T* a, T v, int) {                                                  \
        record(a, sizeof(T), kAtomic | kWrite, COURSE_PC);                                                      \
        return __atomic_fetch_add(a, v, __ATOMIC_SEQ_CST);                                                      \
    }                                                                                                           \
    T __tsan_atomic##n##_fetch_sub(volatile T* a, T v, int) {                                                  \
        record(a, sizeof(T), kAtomic | kWrite, COURSE_PC);                                                      \
        return __atomic_fetch_sub(a, v, __ATOMIC_SEQ_CST);                                                      \
    }                                                                                                           \
    T __tsan_atomic##n##_fetch_and(volatile T* a, T v, int) {                                                  \
        record(a, sizeof(T), kAtomic | kWrite, COURSE_PC);                                                      \
        return __atomic_fetch_and(a, v, __ATOMIC_SEQ_CST);                                                      \
    }                                                                                                           \
    T __tsan_atomic##n##_fetch_or(volatile T* a, T v, int) {                                                   \
        record(a, sizeof(T), kAtomic | kWrite, COURSE_PC);                                                      \
        return __atomic_fetch_or(a, v, __ATOMIC_SEQ_CST);                                                       \
    }                                                                                                           \
    T __tsan_atomic##n##_fetch_xor(volatile T* a, T v, int) {                                                  \
        record(a, sizeof(T), kAtomic | kWrite, COURSE_PC);                                                      \
        return __atomic_fetch_xor(a, v, __ATOMIC_SEQ_CST);                                                      \
    }                                                                                                           \
    T __tsan_atomic##n##_fetch_nand(volatile T* a, T v, int) {                                                 \
        record(a, sizeof(T), kAtomic | kWrite, COURSE_PC);                                                      \
        return __atomic_fetch_nand(a, v, __ATOMIC_SEQ_CST);                                                     \
    }                                                                                                           \
    int __tsan_atomic##n##_compare_exchange_strong(volatile T* a, T* expected, T v, int, int) {               \
        record(a, sizeof(T), kAtomic | kWrite, COURSE_PC);                                                      \
        return __atomic_compare_exchange_n(a, expected, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);          \
    }                                                                                                           \
    int __tsan_atomic##n##_compare_exchange_weak(volatile T* a, T* expected, T v, int, int) {                 \
        record(a, sizeof(T), kAtomic | kWrite, COURSE_PC);                                                      \
        return __atomic_compare_exchange_n(a, expected, v, true, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);           \
    }                                                                                                           \
    T __tsan_atomic##n##_compare_exchange_val(volatile T* a, T expected, T v, int, int) {                     \
        record(a, sizeof(T), kAtomic | kWrite, COURSE_PC);                                                      \
        __atomic_compare_exchange_n(a, &expected, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);                \
        return expected;                                                                                        \
    }
COURSE_TSAN_ATOMIC(8, unsigned char)
COURSE_TSAN_ATOMIC(16, unsigned short)
COURSE_TSAN_ATOMIC(32, unsigned int)
COURSE_TSAN_ATOMIC(64, unsigned long long)
#undef COURSE_TSAN_ATOMIC

// A fence (__threadfence() and its kin, cuda::atomic_thread_fence): performed,
// and recorded, since a fence orders accesses of different blocks.
void __tsan_atomic_thread_fence(int) {
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    course_emu::analysis::record_fence();
}
void __tsan_atomic_signal_fence(int) { __atomic_signal_fence(__ATOMIC_SEQ_CST); }

// -fsanitize-coverage=trace-pc: called at the start of every basic block.
void __sanitizer_cov_trace_pc() { course_emu::analysis::record_block_entered(COURSE_PC); }

}  // extern "C"
