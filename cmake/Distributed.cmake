# What gpukit's scale-out needs beyond one process, found once: MPI (gpukit_distributed's
# communicator), FFTW's MPI interface (the distributed Poisson solver's CPU engine, in
# gpukit_scale_out) and NCCL (gpukit_distributed's device exchange, the GPU transposes of the
# distributed Poisson solver). Each is optional: without it gpukit builds, with what remains
# (a job of one process; no CPU engine across ranks; the in-process copy engine on GPUs).
#
# Sets GPUKIT_HAVE_MPI, GPUKIT_HAVE_FFTW_MPI and GPUKIT_HAVE_NCCL (ON/OFF), MPIEXEC_EXECUTABLE
# (the launcher the MPI tests run), and the link targets gpukit_fftw_mpi and gpukit_nccl where
# those are found (exported as detail_fftw_mpi and detail_nccl: link rules, no public API).

# MPI (Debian: libopenmpi-dev and openmpi-bin). GPUKIT_MPI=AUTO builds with it when found, ON
# requires it, OFF leaves it out (every command then runs in one process; a cuda:all list still
# spreads over the GPUs). Only MPI's C interface is used (MPI_CXX_SKIP_MPICXX: not the removed
# C++ bindings).
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
# The launcher the MPI tests run: the one beside the MPI found, else any on the path.
if(GPUKIT_HAVE_MPI AND NOT MPIEXEC_EXECUTABLE)
  find_program(MPIEXEC_EXECUTABLE NAMES mpiexec mpirun)
endif()
message(STATUS "gpukit: MPI ${GPUKIT_HAVE_MPI} (launcher: ${MPIEXEC_EXECUTABLE})")

# FFTW's MPI libraries (Debian: libfftw3-mpi-dev), double and float, beside the FFTW that
# cmake/Dependencies.cmake found: the CPU engine of the distributed Poisson solver (FFTW's own
# transposes over the communicator's MPI_Comm).
set(GPUKIT_HAVE_FFTW_MPI OFF)
if(GPUKIT_HAVE_MPI)
  find_library(GPUKIT_FFTW3_MPI_LIBRARY NAMES fftw3_mpi HINTS ${FFTW3_LIBRARY_DIRS})
  find_library(GPUKIT_FFTW3F_MPI_LIBRARY NAMES fftw3f_mpi HINTS ${FFTW3F_LIBRARY_DIRS})
  find_path(GPUKIT_FFTW3_MPI_INCLUDE_DIR NAMES fftw3-mpi.h HINTS ${FFTW3_INCLUDE_DIRS})
  if(GPUKIT_FFTW3_MPI_LIBRARY AND GPUKIT_FFTW3F_MPI_LIBRARY AND GPUKIT_FFTW3_MPI_INCLUDE_DIR)
    add_library(gpukit_fftw_mpi INTERFACE)
    target_include_directories(gpukit_fftw_mpi SYSTEM INTERFACE
                               $<BUILD_INTERFACE:${GPUKIT_FFTW3_MPI_INCLUDE_DIR}>)
    target_link_libraries(gpukit_fftw_mpi INTERFACE ${GPUKIT_FFTW3_MPI_LIBRARY}
                                                   ${GPUKIT_FFTW3F_MPI_LIBRARY} MPI::MPI_CXX)
    set(GPUKIT_HAVE_FFTW_MPI ON)
  else()
    message(WARNING "gpukit: MPI found but not FFTW's MPI libraries (libfftw3-mpi-dev): the "
                    "distributed Poisson solver has no CPU engine across ranks")
  endif()
endif()
message(STATUS "gpukit: FFTW MPI ${GPUKIT_HAVE_FFTW_MPI} (${GPUKIT_FFTW3_MPI_LIBRARY})")

# NCCL (the CUDA toolkit's nccl.h and libnccl, or Debian's libnccl-dev): GPU-to-GPU exchanges
# (gpukit_distributed's DeviceExchange, which the distributed Poisson solver's transposes use).
# Monte Carlo, Black-Scholes and reductions do not: their partial results are a few bytes a block,
# gathered to the host in block order (docs/scale-out.md).
set(GPUKIT_HAVE_NCCL OFF)
if(GPUKIT_HAVE_CUDA)
  find_path(GPUKIT_NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
  find_library(GPUKIT_NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR})
  if(GPUKIT_NCCL_INCLUDE_DIR AND GPUKIT_NCCL_LIBRARY)
    add_library(gpukit_nccl INTERFACE)
    target_include_directories(gpukit_nccl SYSTEM INTERFACE
                               $<BUILD_INTERFACE:${GPUKIT_NCCL_INCLUDE_DIR}>)
    target_link_libraries(gpukit_nccl INTERFACE ${GPUKIT_NCCL_LIBRARY})
    set(GPUKIT_HAVE_NCCL ON)
  endif()
endif()
message(STATUS "gpukit: NCCL ${GPUKIT_HAVE_NCCL} (${GPUKIT_NCCL_LIBRARY})")
