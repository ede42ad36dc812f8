# Resolves COURSE_BACKEND=auto|cuda|emu into COURSE_BACKEND_RESOLVED and
# COURSE_DEVICE_NAME, and enables CUDA when it is the backend. Also finds
# nvcc for the maintainer check that every .cu compiles for sm_90.

function(_course_probe_gpu out_ok out_name)
  # A host program linked with the CUDA runtime asks for a device. It runs at
  # configure time only, and only where nvcc (hence the toolkit) exists.
  find_package(CUDAToolkit QUIET)
  if(NOT CUDAToolkit_FOUND)
    set(${out_ok} FALSE PARENT_SCOPE)
    set(${out_name} "no CUDA toolkit" PARENT_SCOPE)
    return()
  endif()
  set(probe_dir "${CMAKE_BINARY_DIR}/course_probe")
  file(WRITE "${probe_dir}/probe.cpp" [=[
#include <cuda_runtime_api.h>
#include <cstdio>
int main() {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) { std::printf("%s", e != cudaSuccess ? cudaGetErrorString(e) : "no device"); return 1; }
  cudaDeviceProp p{};
  if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) return 1;
  std::printf("%s", p.name);
  return 0;
}
]=])
  try_run(run_result compile_result
    SOURCES "${probe_dir}/probe.cpp"
    LINK_LIBRARIES CUDA::cudart
    RUN_OUTPUT_VARIABLE probe_output)
  if(compile_result AND run_result EQUAL 0)
    set(${out_ok} TRUE PARENT_SCOPE)
  else()
    set(${out_ok} FALSE PARENT_SCOPE)
  endif()
  set(${out_name} "${probe_output}" PARENT_SCOPE)
endfunction()

macro(course_resolve_backend)
  if(NOT COURSE_BACKEND MATCHES "^(auto|cuda|emu)$")
    message(FATAL_ERROR "COURSE_BACKEND must be auto, cuda or emu (got '${COURSE_BACKEND}')")
  endif()
  # A cross build (cmake/toolchains/, `./course check --arch aarch64`) runs
  # its programs under an emulator of the target CPU, where no GPU answers:
  # it is the CPU emulator's. Neither the GPU probe nor nvcc's compile checks
  # (which compile for the GPU, whatever the host) are done there.
  if(CMAKE_CROSSCOMPILING)
    if(COURSE_BACKEND STREQUAL "cuda")
      message(FATAL_ERROR "COURSE_BACKEND=cuda: a cross build (CMAKE_TOOLCHAIN_FILE) runs on the emulator only")
    endif()
    set(COURSE_NVCC "")
  else()
    find_program(COURSE_NVCC nvcc HINTS ENV CUDACXX PATHS /usr/local/cuda/bin)
  endif()

  set(COURSE_BACKEND_REASON "")
  if(COURSE_BACKEND STREQUAL "emu")
    set(COURSE_BACKEND_RESOLVED emu)
    set(COURSE_BACKEND_REASON "asked for")
  elseif(CMAKE_CROSSCOMPILING)
    set(COURSE_BACKEND_RESOLVED emu)
    set(COURSE_BACKEND_REASON "cross-compiled for ${CMAKE_SYSTEM_PROCESSOR}")
  else()
    if(COURSE_NVCC)
      _course_probe_gpu(gpu_ok gpu_name)
    else()
      set(gpu_ok FALSE)
      set(gpu_name "nvcc not found")
    endif()
    if(gpu_ok)
      set(COURSE_BACKEND_RESOLVED cuda)
      set(COURSE_DEVICE_NAME "${gpu_name}")
      set(COURSE_BACKEND_REASON "nvcc found and a GPU answered the probe")
    elseif(COURSE_BACKEND STREQUAL "cuda")
      # Asked for explicitly: build with nvcc even without a GPU (the tests
      # will then fail with cudaErrorNoDevice, which says why).
      if(NOT COURSE_NVCC)
        message(FATAL_ERROR "COURSE_BACKEND=cuda but nvcc was not found (add the CUDA Toolkit's bin/ to PATH)")
      endif()
      message(WARNING "COURSE_BACKEND=cuda but no GPU answered the probe (${gpu_name}): building anyway")
      set(COURSE_BACKEND_RESOLVED cuda)
      set(COURSE_DEVICE_NAME "no GPU answered (${gpu_name})")
      set(COURSE_BACKEND_REASON "asked for")
    else()
      set(COURSE_BACKEND_RESOLVED emu)
      set(COURSE_BACKEND_REASON "no GPU answered the probe: ${gpu_name}")
    endif()
  endif()
  if(COURSE_BACKEND_RESOLVED STREQUAL "emu")
    set(COURSE_DEVICE_NAME "Course CPU emulator of CUDA (8 SMs)")
  endif()

  # Flags every nvcc compilation of course code gets, on the GPU backend and
  # in the emulator backend's nvcc compile checks alike.
  set(COURSE_NVCC_FLAGS --extended-lambda)
  if(COURSE_BACKEND_RESOLVED STREQUAL "cuda")
    if(NOT DEFINED CMAKE_CUDA_COMPILER)
      set(CMAKE_CUDA_COMPILER "${COURSE_NVCC}")
    endif()
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES ${COURSE_NVCC_ARCH})
    endif()
    enable_language(CUDA)
    # CMake 3.25 (Debian 12) knows nvcc's flags only up to C++17; nvcc 12+
    # takes -std=c++20, so tell CMake where it does not know yet.
    if(NOT DEFINED CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
      set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
      set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
    endif()
    set(CMAKE_CUDA_STANDARD 20)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    # Device lambdas (thrust::for_each in lesson 09) need nvcc's extended lambdas.
    string(APPEND CMAKE_CUDA_FLAGS " ${COURSE_NVCC_FLAGS}")
    find_package(CUDAToolkit REQUIRED)
  endif()
  message(STATUS "Course backend: ${COURSE_BACKEND_RESOLVED} (${COURSE_BACKEND_REASON}); device: ${COURSE_DEVICE_NAME}")
endmacro()
