/// @file symbols.hpp
/// @brief `__constant__` memory on the CPU: cudaMemcpyToSymbol,
/// cudaMemcpyFromSymbol (and their Async forms), cudaGetSymbolAddress and
/// cudaGetSymbolSize.
///
/// A `__constant__` variable is an ordinary global variable of the host
/// program. The translator (translate.hpp) renames its storage and declares
/// the source's name as a `const` reference to it, so that device code that
/// writes constant memory fails to compile, as with nvcc, while these
/// functions, which take the symbol by reference, still fill it: the object
/// behind the reference is not const. The symbol's size is `sizeof(T)`, so a
/// copy past its end is refused with cudaErrorInvalidValue, as CUDA does.
/// (`__device__` variables are symbols too, and work the same way.)
#pragma once

#include <cstddef>

#include <course_emu/runtime_api.hpp>

namespace course_emu::detail {

/// @brief Copies `count` bytes between the symbol at `symbol` (`symbol_bytes`
/// long) at byte `offset` and `other`; `to_symbol` gives the direction.
/// Checks as CUDA does: the direction (`kind`) must fit (host or device to a
/// symbol, a symbol to host or device, or cudaMemcpyDefault), `offset + count`
/// must stay within the symbol (cudaErrorInvalidValue), and a device-side
/// `other` must be inside one device allocation. Defined in symbols.cpp.
cudaError_t copy_symbol(void* symbol, std::size_t symbol_bytes, void* other, std::size_t count, std::size_t offset,
                        cudaMemcpyKind kind, bool to_symbol);

/// @brief The largest `__constant__` variable nvcc accepts: 64 KiB of constant memory.
inline constexpr std::size_t kConstantMemoryBytes = 64 * 1024;

}  // namespace course_emu::detail

/// @brief Copies `count` bytes from `src` into the symbol, starting at byte
/// `offset` of it. `kind` is cudaMemcpyHostToDevice (the default),
/// cudaMemcpyDeviceToDevice or cudaMemcpyDefault; another direction gives
/// cudaErrorInvalidMemcpyDirection, `offset + count` past the symbol's end
/// cudaErrorInvalidValue.
template <class T>
cudaError_t cudaMemcpyToSymbol(const T& symbol, const void* src, std::size_t count, std::size_t offset = 0,
                               cudaMemcpyKind kind = cudaMemcpyHostToDevice) {
    return course_emu::detail::copy_symbol(const_cast<T*>(&symbol), sizeof(T), const_cast<void*>(src), count, offset,
                                           kind, true);
}

/// @brief Copies `count` bytes of the symbol, starting at byte `offset` of
/// it, to `dst`. `kind` is cudaMemcpyDeviceToHost (the default),
/// cudaMemcpyDeviceToDevice or cudaMemcpyDefault; errors as cudaMemcpyToSymbol.
template <class T>
cudaError_t cudaMemcpyFromSymbol(void* dst, const T& symbol, std::size_t count, std::size_t offset = 0,
                                 cudaMemcpyKind kind = cudaMemcpyDeviceToHost) {
    return course_emu::detail::copy_symbol(const_cast<T*>(&symbol), sizeof(T), dst, count, offset, kind, false);
}

/// @brief cudaMemcpyToSymbol in a stream: the emulator copies at once.
template <class T>
cudaError_t cudaMemcpyToSymbolAsync(const T& symbol, const void* src, std::size_t count, std::size_t offset,
                                    cudaMemcpyKind kind, cudaStream_t /*stream*/ = nullptr) {
    return cudaMemcpyToSymbol(symbol, src, count, offset, kind);
}

/// @brief cudaMemcpyFromSymbol in a stream: the emulator copies at once.
template <class T>
cudaError_t cudaMemcpyFromSymbolAsync(void* dst, const T& symbol, std::size_t count, std::size_t offset,
                                      cudaMemcpyKind kind, cudaStream_t /*stream*/ = nullptr) {
    return cudaMemcpyFromSymbol(dst, symbol, count, offset, kind);
}

/// @brief The device address of a symbol (here: its host address).
template <class T>
cudaError_t cudaGetSymbolAddress(void** devPtr, const T& symbol) {
    if (devPtr == nullptr) return cudaErrorInvalidValue;
    *devPtr = const_cast<T*>(&symbol);
    return cudaSuccess;
}

/// @brief The size in bytes of a symbol.
template <class T>
cudaError_t cudaGetSymbolSize(std::size_t* size, const T& /*symbol*/) {
    if (size == nullptr) return cudaErrorInvalidValue;
    *size = sizeof(T);
    return cudaSuccess;
}
