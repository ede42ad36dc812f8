// cudaMemcpyToSymbol and cudaMemcpyFromSymbol (course_emu/symbols.hpp): the
// checks CUDA makes on a symbol copy, then a cudaMemcpy that checks the other
// side. A symbol is host memory on the emulator, not a device allocation, so
// the copy is passed on as if the symbol's side were the host's: a
// device-to-device copy into a symbol becomes a device-to-host copy, whose
// source cudaMemcpy checks is inside one device allocation.
#include <course_emu/symbols.hpp>

#include "errors.hpp"

namespace course_emu::detail {

cudaError_t copy_symbol(void* symbol, std::size_t symbol_bytes, void* other, std::size_t count, std::size_t offset,
                        cudaMemcpyKind kind, bool to_symbol) {
    if (sticky_error() != cudaSuccess) return api_result(cudaSuccess);
    if (symbol == nullptr) return api_result(cudaErrorInvalidSymbol);
    // To a symbol: from the host or the device; from a symbol: to either.
    const cudaMemcpyKind from_host = to_symbol ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
    if (kind != from_host && kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyDefault) {
        return api_result(cudaErrorInvalidMemcpyDirection);
    }
    // CUDA: "cudaErrorInvalidValue" when offset + count pass the symbol's end.
    if (offset > symbol_bytes || count > symbol_bytes - offset) return api_result(cudaErrorInvalidValue);
    if (count == 0) return api_result(cudaSuccess);
    if (other == nullptr) return api_result(cudaErrorInvalidValue);
    char* at = static_cast<char*>(symbol) + offset;
    cudaMemcpyKind as_host = cudaMemcpyDefault;  // the symbol's side is host memory here
    if (kind == cudaMemcpyDeviceToDevice) {
        as_host = to_symbol ? cudaMemcpyDeviceToHost : cudaMemcpyHostToDevice;
    } else if (kind != cudaMemcpyDefault) {
        as_host = cudaMemcpyHostToHost;
    }
    return to_symbol ? cudaMemcpy(at, other, count, as_host) : cudaMemcpy(other, at, count, as_host);
}

}  // namespace course_emu::detail
