# CUDA for the accelerator's CUDA backend (runtime/src/cuda_device.cu), bench/gpu and the tests
# labelled cuda. CHAINRT_WITH_CUDA: AUTO (where a CUDA compiler and toolkit are found), ON
# (required) or OFF. Sets CHAINRT_HAVE_CUDA. Without it everything else builds as before and
# the cuda tests report, skipped, why they did not run.
set(CHAINRT_WITH_CUDA "AUTO" CACHE STRING "Build the CUDA backend: AUTO, ON or OFF")
set(CHAINRT_HAVE_CUDA OFF)
set(CHAINRT_NO_CUDA_REASON "CHAINRT_WITH_CUDA is OFF")
if(NOT CHAINRT_WITH_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    # The GPU machine's H200 (Hopper, sm_90) unless the caller names other architectures.
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 90)
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit)
  endif()
  if(CMAKE_CUDA_COMPILER AND CUDAToolkit_FOUND)
    set(CHAINRT_HAVE_CUDA ON)
    # The headers are C++20; CMake before 3.26 does not know nvcc's flag for it.
    if(NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
      set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
      set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
    endif()
    message(STATUS "chainrt: CUDA backend with ${CMAKE_CUDA_COMPILER} (CUDA ${CUDAToolkit_VERSION}, architectures ${CMAKE_CUDA_ARCHITECTURES})")
  else()
    set(CHAINRT_NO_CUDA_REASON "no CUDA toolkit was found when this build was configured")
    if(CHAINRT_WITH_CUDA STREQUAL "ON")
      message(FATAL_ERROR "chainrt: CHAINRT_WITH_CUDA=ON but ${CHAINRT_NO_CUDA_REASON} (set CMAKE_CUDA_COMPILER or CUDAToolkit_ROOT)")
    endif()
    message(STATUS "chainrt: ${CHAINRT_NO_CUDA_REASON}: the CUDA backend is not built (bench/gpu runs on the emulated device only)")
  endif()
endif()
