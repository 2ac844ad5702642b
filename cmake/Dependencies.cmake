# Third-party libraries, all from Debian packages (see README.md) or the CUDA toolkit.
find_package(OpenMP REQUIRED COMPONENTS CXX)
find_package(fmt REQUIRED)
if(GPUKIT_BUILD_PROGRAMS OR GPUKIT_BUILD_TESTS)
  find_package(CLI11 CONFIG REQUIRED)  # the gpukit tool's command line
endif()
find_package(nlohmann_json 3.10 REQUIRED)
find_package(Threads REQUIRED)

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

# MPI, FFTW's MPI interface and NCCL: the scale-out modules' (after FFTW, beside which FFTW's MPI
# libraries are looked for).
include(Distributed)
