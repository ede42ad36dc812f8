// The fault for a misaligned load or store in kernel code.
//
// A GPU loads and stores a value only at an address that is a multiple of
// its size (its alignment): a float4 read from a float* that is not 16-byte
// aligned stops the kernel with cudaErrorMisalignedAddress. A CPU reads it
// happily, so without a check the emulator would pass a kernel the GPU
// stops. The emulator's translations of .cu files are therefore compiled
// with -fsanitize=alignment (cmake/CourseLesson.cmake, course_emu_sources):
// before each typed load or store the compiler checks the address against
// the type's alignment, and on a mismatch calls the handler below, which
// GCC and Clang both name and lay out as their sanitizer runtime does. No
// sanitizer runtime is linked: this file is the whole of it. The handler
// raises the GPU's fault, with the file and line the compiler recorded.
// The loads and stores with cache hints (__ldg, __ldcs, __stcs, ...) check
// the address themselves, so that the fault names their caller's line, not
// the emulator's header (course_emu/device_functions.hpp).
#include "block.hpp"

#include <course_emu/device_functions.hpp>
#include <course_emu/launch.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace {

// The compilers' description of a check (their sanitizer ABI).
struct SourceLocation {
    const char* file;
    std::uint32_t line;
    std::uint32_t column;
};

struct TypeDescriptor {
    std::uint16_t kind;
    std::uint16_t info;
    char name[1];  // the type's name as written, NUL-terminated
};

struct TypeMismatchData {
    SourceLocation location;
    const TypeDescriptor* type;
    unsigned char log_alignment;  // log2 of the alignment the type needs
    unsigned char check_kind;     // load, store, reference, member access, ...
};

struct AlignmentAssumptionData {
    SourceLocation location;             // where the pointer is used
    SourceLocation assumption_location;  // where the alignment is assumed
    const TypeDescriptor* type;
};

}  // namespace

namespace course_emu {

void misaligned_address(const char* file, int line, const char* type, const void* address, std::size_t alignment) {
    // Kept until the runtime has copied it into the report, which happens
    // on this worker before it runs anything else: one buffer per worker.
    thread_local char what[320];
    std::snprintf(what, sizeof what,
                  "misaligned address: a %s accessed at %p, which is not a multiple of %zu bytes (a GPU stops the "
                  "kernel with cudaErrorMisalignedAddress; a pointer cast to a wider type keeps the address, so "
                  "the element it starts at must be a multiple of the type's size)",
                  type, address, alignment);
    if (file == nullptr) file = "<unknown>";
    if (detail::kernel_code_running()) raise_fault(file, line, what, cudaErrorMisalignedAddress);
    // Host code of a .cu file: undefined behaviour on the CPU too.
    std::fprintf(stderr, "%s:%d: course emulator: %s\n", file, line, what);
    std::abort();
}

}  // namespace course_emu

namespace {

[[noreturn]] void misaligned(const TypeMismatchData* data, std::uintptr_t pointer) {
    course_emu::misaligned_address(data->location.file, static_cast<int>(data->location.line), data->type->name,
                                   reinterpret_cast<const void*>(pointer), std::size_t{1} << data->log_alignment);
}

}  // namespace

extern "C" {

// Called on a failed check; the _abort form where the check was compiled
// not to recover (-fno-sanitize-recover). Both stop the thread.
void __ubsan_handle_type_mismatch_v1(TypeMismatchData* data, std::uintptr_t pointer) { misaligned(data, pointer); }

void __ubsan_handle_type_mismatch_v1_abort(TypeMismatchData* data, std::uintptr_t pointer) {
    misaligned(data, pointer);
}

// Clang's form of the check also tests __builtin_assume_aligned (and
// std::assume_aligned): a pointer assumed aligned that is not.
void __ubsan_handle_alignment_assumption(AlignmentAssumptionData* data, std::uintptr_t pointer,
                                         std::uintptr_t alignment, std::uintptr_t) {
    course_emu::misaligned_address(data->location.file, static_cast<int>(data->location.line), data->type->name,
                                   reinterpret_cast<const void*>(pointer), alignment);
}

void __ubsan_handle_alignment_assumption_abort(AlignmentAssumptionData* data, std::uintptr_t pointer,
                                               std::uintptr_t alignment, std::uintptr_t offset) {
    __ubsan_handle_alignment_assumption(data, pointer, alignment, offset);
}

}  // extern "C"
