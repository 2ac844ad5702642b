# GPUKIT_CUDA=AUTO builds the CUDA backend when nvcc is found; ON requires it; OFF never builds it.
set(GPUKIT_CUDA AUTO CACHE STRING "Build the CUDA backend: AUTO, ON or OFF")
set_property(CACHE GPUKIT_CUDA PROPERTY STRINGS AUTO ON OFF)

set(GPUKIT_HAVE_CUDA OFF)
if(NOT GPUKIT_CUDA STREQUAL "OFF")
  if(NOT DEFINED CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    # Default: sm_90 machine code plus compute_90 PTX (the H200); override with
    # -DCMAKE_CUDA_ARCHITECTURES=... for other GPUs, or CMake's CUDAARCHS environment variable
    # (what `CUDAARCHS=80 pip install .` sets).
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT DEFINED ENV{CUDAARCHS})
      set(CMAKE_CUDA_ARCHITECTURES 90)
    endif()
    enable_language(CUDA)
    # CUDA C++20. Passed as a flag because CMake before 3.26 has no cuda_std_20 for nvcc.
    # Relaxed constexpr lets device code use std::numeric_limits, as the shared host/device
    # arithmetic does.
    string(APPEND CMAKE_CUDA_FLAGS " -std=c++20 --expt-relaxed-constexpr")
    find_package(CUDAToolkit REQUIRED)
    set(GPUKIT_HAVE_CUDA ON)
  elseif(GPUKIT_CUDA STREQUAL "ON")
    message(FATAL_ERROR "GPUKIT_CUDA=ON but no CUDA compiler (nvcc) was found")
  endif()
endif()
message(STATUS "gpukit: CUDA backend ${GPUKIT_HAVE_CUDA} (architectures: ${CMAKE_CUDA_ARCHITECTURES})")
