# Install and export rules: `cmake --install` puts the libraries, the public headers and the
# `gpukit` tool under the prefix, with a CMake package so that another project writes
#   find_package(gpukit REQUIRED)
#   target_link_libraries(app PRIVATE gpukit::gpukit)   # or one module: gpukit::primitives, ...
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(GPUKIT_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/gpukit
    CACHE STRING "Where the gpukit CMake package files are installed, under the prefix")

# gpukit_add_module(<target> <name>)
# Makes library <target> the module gpukit::<name>: the public headers on its include path (the
# source tree's include/ in the build, the prefix's include/ once installed), an alias of the same
# name for use inside this build, and its place in the installed package.
function(gpukit_add_module target name)
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name})
  add_library(gpukit::${name} ALIAS ${target})
  # The public headers are C++20: a user's target gets the standard with the module.
  target_compile_features(${target} PUBLIC cxx_std_20)
  target_include_directories(${target} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  install(TARGETS ${target} EXPORT gpukitTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
          RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  set_property(GLOBAL APPEND PROPERTY GPUKIT_MODULES ${target})
endfunction()

# gpukit_install_package()
# Called once every module exists: the umbrella target gpukit::gpukit (every module), the
# headers, the exported targets and the package's config and version files.
function(gpukit_install_package)
  get_property(modules GLOBAL PROPERTY GPUKIT_MODULES)
  add_library(gpukit_umbrella INTERFACE)
  target_link_libraries(gpukit_umbrella INTERFACE ${modules})
  set_target_properties(gpukit_umbrella PROPERTIES EXPORT_NAME gpukit)
  add_library(gpukit::gpukit ALIAS gpukit_umbrella)

  # The CUDA engines (include/gpukit/*/cuda/*.cuh) use constexpr host functions such as
  # std::numeric_limits in device code: the build has the option in CMAKE_CUDA_FLAGS
  # (cmake/Cuda.cmake), the installed package passes it to its users' CUDA code. Their C++ code
  # gets no option.
  if(GPUKIT_HAVE_CUDA)
    target_compile_options(gpukit_core INTERFACE
      $<INSTALL_INTERFACE:$<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr>>)
  endif()

  # The FFTW link rule gpukit_pde and gpukit_scale_out use (static libraries carry their private link dependencies
  # into the package); it names no public API.
  set_target_properties(gpukit_fftw PROPERTIES EXPORT_NAME detail_fftw)
  install(TARGETS gpukit_umbrella gpukit_fftw EXPORT gpukitTargets)
  # The same for FFTW's MPI libraries (gpukit_scale_out) and NCCL (gpukit_distributed), where the
  # build found them (cmake/Distributed.cmake).
  foreach(detail IN ITEMS fftw_mpi nccl)
    if(TARGET gpukit_${detail})
      set_target_properties(gpukit_${detail} PROPERTIES EXPORT_NAME detail_${detail})
      install(TARGETS gpukit_${detail} EXPORT gpukitTargets)
    endif()
  endforeach()

  install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/gpukit
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
          FILES_MATCHING PATTERN "*.hpp" PATTERN "*.cuh")
  install(EXPORT gpukitTargets NAMESPACE gpukit:: DESTINATION ${GPUKIT_INSTALL_CMAKEDIR})

  # What the config file needs to find again what the exported targets link.
  set(GPUKIT_PACKAGE_HAVE_CUDA ${GPUKIT_HAVE_CUDA})
  configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/gpukitConfig.cmake.in
                                ${PROJECT_BINARY_DIR}/gpukitConfig.cmake
                                INSTALL_DESTINATION ${GPUKIT_INSTALL_CMAKEDIR})
  # 0.x: a minor version may change the API, so only the same major.minor is compatible.
  write_basic_package_version_file(${PROJECT_BINARY_DIR}/gpukitConfigVersion.cmake
                                   COMPATIBILITY SameMinorVersion)
  install(FILES ${PROJECT_BINARY_DIR}/gpukitConfig.cmake
                ${PROJECT_BINARY_DIR}/gpukitConfigVersion.cmake
          DESTINATION ${GPUKIT_INSTALL_CMAKEDIR})
endfunction()
