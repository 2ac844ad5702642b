# Third-party libraries, all from Debian packages (see README.md) or the CUDA toolkit.
find_package(OpenMP REQUIRED COMPONENTS CXX)
find_package(fmt REQUIRED)
if(GPUKIT_BUILD_PROGRAMS OR GPUKIT_BUILD_TESTS)
  find_package(CLI11 CONFIG REQUIRED)  # the gpukit tool's command line
endif()
find_package(nlohmann_json 3.10 REQUIRED)
find_package(Threads REQUIRED)

# MPI (Debian: libopenmpi-dev and openmpi-bin): gpukit mc, bs and reduce across processes and
# hosts (gpukit_distributed). GPUKIT_MPI=AUTO builds with it when found, ON requires it, OFF leaves it
# out (every command then runs in one process; a cuda:all list still spreads over the GPUs).
# Only MPI's C interface is used (MPI_CXX_SKIP_MPICXX: not the removed C++ bindings).
set(GPUKIT_MPI AUTO CACHE STRING "Build with MPI: AUTO, ON or OFF")
set_property(CACHE GPUKIT_MPI PROPERTY STRINGS AUTO ON OFF)
set(GPUKIT_HAVE_MPI OFF)
if(NOT GPUKIT_MPI STREQUAL "OFF")
  set(MPI_CXX_SKIP_MPICXX ON)
  find_package(MPI COMPONENTS CXX)
  if(MPI_CXX_FOUND)
    set(GPUKIT_HAVE_MPI ON)
  elseif(GPUKIT_MPI STREQUAL "ON")
    message(FATAL_ERROR "GPUKIT_MPI=ON but no MPI was found (Debian: libopenmpi-dev)")
  endif()
endif()
# The launcher the MPI tests run (tests/distributed): the one beside the MPI found, else any on the path.
if(GPUKIT_HAVE_MPI AND NOT MPIEXEC_EXECUTABLE)
  find_program(MPIEXEC_EXECUTABLE NAMES mpiexec mpirun)
endif()
message(STATUS "gpukit: MPI ${GPUKIT_HAVE_MPI} (launcher: ${MPIEXEC_EXECUTABLE})")

# NCCL (the CUDA toolkit's nccl.h and libnccl, or Debian's libnccl-dev): GPU-to-GPU collectives.
# The target gpukit_nccl exists where it is found (GPUKIT_HAVE_NCCL); the distributed Poisson
# solver's all-to-all uses it. Monte Carlo, Black-Scholes and reductions do not: their partial
# results are a few bytes a block, gathered to the host in block order (docs/scale-out.md).
set(GPUKIT_HAVE_NCCL OFF)
if(GPUKIT_HAVE_CUDA)
  find_path(GPUKIT_NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
  find_library(GPUKIT_NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR})
  if(GPUKIT_NCCL_INCLUDE_DIR AND GPUKIT_NCCL_LIBRARY)
    add_library(gpukit_nccl INTERFACE)
    target_include_directories(gpukit_nccl SYSTEM INTERFACE ${GPUKIT_NCCL_INCLUDE_DIR})
    target_link_libraries(gpukit_nccl INTERFACE ${GPUKIT_NCCL_LIBRARY})
    set(GPUKIT_HAVE_NCCL ON)
  endif()
endif()
message(STATUS "gpukit: NCCL ${GPUKIT_HAVE_NCCL} (${GPUKIT_NCCL_LIBRARY})")

# FFTW (Debian: libfftw3-dev): the Poisson solver's CPU backend, double and float, with the
# OpenMP-threaded planners (libfftw3_omp / libfftw3f_omp ship in the same package).
find_package(PkgConfig REQUIRED)
pkg_check_modules(FFTW3 REQUIRED IMPORTED_TARGET fftw3)
pkg_check_modules(FFTW3F REQUIRED IMPORTED_TARGET fftw3f)
find_library(FFTW3_OMP_LIBRARY NAMES fftw3_omp HINTS ${FFTW3_LIBRARY_DIRS} REQUIRED)
find_library(FFTW3F_OMP_LIBRARY NAMES fftw3f_omp HINTS ${FFTW3F_LIBRARY_DIRS} REQUIRED)
add_library(gpukit_fftw INTERFACE)
# The _omp libraries come first: they call into the serial ones.
target_link_libraries(gpukit_fftw INTERFACE ${FFTW3_OMP_LIBRARY} ${FFTW3F_OMP_LIBRARY}
                                            PkgConfig::FFTW3 PkgConfig::FFTW3F OpenMP::OpenMP_CXX)

if(GPUKIT_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
