// Error codes, their names and strings, the per-host-thread last error and the
// sticky fault state of the emulated device (errors.hpp): the bottom of the
// runtime, calling into none of its other files.
#include "errors.hpp"

#include <course_emu/runtime_api.hpp>

#include <cstdio>
#include <mutex>
#include <string>
#include <utility>

namespace {

struct ErrorText {
    cudaError_t code;
    const char* name;
    const char* text;
};

constexpr ErrorText kErrorTexts[] = {
    {cudaSuccess, "cudaSuccess", "no error"},
    {cudaErrorInvalidValue, "cudaErrorInvalidValue", "invalid argument"},
    {cudaErrorMemoryAllocation, "cudaErrorMemoryAllocation", "out of memory"},
    {cudaErrorInitializationError, "cudaErrorInitializationError", "initialization error"},
    {cudaErrorInvalidConfiguration, "cudaErrorInvalidConfiguration", "invalid configuration argument"},
    {cudaErrorInvalidPitchValue, "cudaErrorInvalidPitchValue", "invalid pitch argument"},
    {cudaErrorInvalidSymbol, "cudaErrorInvalidSymbol", "invalid device symbol"},
    {cudaErrorInvalidDevicePointer, "cudaErrorInvalidDevicePointer", "invalid device pointer"},
    {cudaErrorInvalidMemcpyDirection, "cudaErrorInvalidMemcpyDirection", "invalid copy direction for memcpy"},
    {cudaErrorInvalidDeviceFunction, "cudaErrorInvalidDeviceFunction", "invalid device function"},
    {cudaErrorNoDevice, "cudaErrorNoDevice", "no CUDA-capable device is detected"},
    {cudaErrorInvalidDevice, "cudaErrorInvalidDevice", "invalid device ordinal"},
    {cudaErrorInvalidResourceHandle, "cudaErrorInvalidResourceHandle", "invalid resource handle"},
    {cudaErrorNotReady, "cudaErrorNotReady", "device not ready"},
    {cudaErrorIllegalAddress, "cudaErrorIllegalAddress", "an illegal memory access was encountered"},
    {cudaErrorLaunchOutOfResources, "cudaErrorLaunchOutOfResources", "too many resources requested for launch"},
    {cudaErrorLaunchTimeout, "cudaErrorLaunchTimeout", "the launch timed out and was terminated"},
    {cudaErrorAssert, "cudaErrorAssert", "device-side assert triggered"},
    {cudaErrorIllegalInstruction, "cudaErrorIllegalInstruction", "an illegal instruction was encountered"},
    {cudaErrorMisalignedAddress, "cudaErrorMisalignedAddress", "misaligned address"},
    {cudaErrorLaunchFailure, "cudaErrorLaunchFailure", "unspecified launch failure"},
    {cudaErrorCooperativeLaunchTooLarge, "cudaErrorCooperativeLaunchTooLarge",
     "too many blocks in cooperative launch"},
    {cudaErrorNotSupported, "cudaErrorNotSupported", "operation not supported"},
    {cudaErrorUnknown, "cudaErrorUnknown", "unknown error"},
};

const ErrorText* find_text(cudaError_t code) {
    for (const auto& t : kErrorTexts) {
        if (t.code == code) return &t;
    }
    return nullptr;
}

thread_local cudaError_t t_last_error = cudaSuccess;

std::mutex g_fault_mutex;
cudaError_t g_sticky = cudaSuccess;
std::string g_fault_report;

}  // namespace

const char* cudaGetErrorString(cudaError_t error) {
    const ErrorText* t = find_text(error);
    return t != nullptr ? t->text : "unrecognized error code";
}

const char* cudaGetErrorName(cudaError_t error) {
    const ErrorText* t = find_text(error);
    return t != nullptr ? t->name : "cudaErrorUnknown";
}

cudaError_t cudaGetLastError() {
    const cudaError_t sticky = course_emu::detail::sticky_error();
    if (sticky != cudaSuccess) return sticky;
    const cudaError_t e = t_last_error;
    t_last_error = cudaSuccess;
    return e;
}

cudaError_t cudaPeekAtLastError() {
    const cudaError_t sticky = course_emu::detail::sticky_error();
    return sticky != cudaSuccess ? sticky : t_last_error;
}

namespace course_emu::detail {

cudaError_t record(cudaError_t error) {
    if (error != cudaSuccess) t_last_error = error;
    return error;
}

cudaError_t sticky_error() {
    std::lock_guard lock(g_fault_mutex);
    return g_sticky;
}

void set_sticky_fault(cudaError_t error, std::string report) {
    std::lock_guard lock(g_fault_mutex);
    if (g_sticky == cudaSuccess) {
        g_sticky = error;
        g_fault_report = std::move(report);
    }
}

void clear_sticky_fault() {
    std::lock_guard lock(g_fault_mutex);
    g_sticky = cudaSuccess;
    g_fault_report.clear();
}

}  // namespace course_emu::detail

namespace course_emu {

const char* last_fault_report() {
    std::lock_guard lock(g_fault_mutex);
    return g_fault_report.c_str();
}

}  // namespace course_emu
