# cmake -P script behind the InstallAndUseFromAnotherProject test: installs the current build to a
# fresh prefix under WORK_DIR, then configures, builds and runs the consumer project in this folder
# against that prefix alone, with the compilers of the build. Variables (-D):
#   BUILD_DIR, WORK_DIR, GENERATOR, BUILD_TYPE, CXX_COMPILER; optional CXX_LAUNCHER, LINKER_FLAGS.
foreach(required BUILD_DIR WORK_DIR GENERATOR BUILD_TYPE CXX_COMPILER)
  if(NOT DEFINED ${required})
    message(FATAL_ERROR "check_install.cmake needs -D${required}=...")
  endif()
endforeach()

# Runs a command; on failure prints what it said and stops the test.
function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE output
                  ERROR_VARIABLE output)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${what} failed (${status}):\n${output}")
  endif()
  message(STATUS "${what}: ok")
  set(step_output "${output}" PARENT_SCOPE)
endfunction()

set(prefix ${WORK_DIR}/prefix)
set(consumer_build ${WORK_DIR}/consumer)
file(REMOVE_RECURSE ${WORK_DIR})

run_step("cmake --install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
run_step("installed gpukit --version" ${prefix}/bin/gpukit --version)
# The benchmarks (bench/: harness, per-case benches, demos) belong to the tool and the tests, not
# to the public API: none of their headers or libraries is installed.
file(GLOB_RECURSE installed_bench_files ${prefix}/include/gpukit/bench/*
     ${prefix}/lib*/*gpukit_bench*)
if(installed_bench_files)
  message(FATAL_ERROR "the benchmarks were installed: ${installed_bench_files}")
endif()

set(configure_args -S ${CMAKE_CURRENT_LIST_DIR} -B ${consumer_build} -G ${GENERATOR}
    -DCMAKE_BUILD_TYPE=${BUILD_TYPE} -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
    -DCMAKE_PREFIX_PATH=${prefix}
    # Only the fresh prefix may provide gpukit: no package registry, no build tree.
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF)
if(CXX_LAUNCHER)
  list(APPEND configure_args -DCMAKE_CXX_COMPILER_LAUNCHER=${CXX_LAUNCHER})
endif()
if(LINKER_FLAGS)
  list(APPEND configure_args "-DCMAKE_EXE_LINKER_FLAGS=${LINKER_FLAGS}")
endif()
run_step("configure the consumer" ${CMAKE_COMMAND} ${configure_args})
run_step("build the consumer" ${CMAKE_COMMAND} --build ${consumer_build})
run_step("run the consumer" ${consumer_build}/gpukit_consumer)
message(STATUS "${step_output}")
