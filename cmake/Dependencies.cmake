# Third-party libraries, all from Debian packages (see README.md) or the CUDA toolkit.
find_package(OpenMP REQUIRED COMPONENTS CXX)
find_package(fmt REQUIRED)
find_package(CLI11 CONFIG REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)

# libcsv (Debian: libcsv-dev) ships no CMake config; link it statically so the gpukit binary
# needs no extra shared library where it is copied.
find_path(CSV_INCLUDE_DIR csv.h REQUIRED)
find_library(CSV_LIBRARY NAMES libcsv.a csv REQUIRED)
add_library(gpukit_libcsv INTERFACE)
target_include_directories(gpukit_libcsv SYSTEM INTERFACE ${CSV_INCLUDE_DIR})
target_link_libraries(gpukit_libcsv INTERFACE ${CSV_LIBRARY})

if(GPUKIT_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
