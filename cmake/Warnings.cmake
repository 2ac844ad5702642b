# Warning flags for every gpukit target: -Wall -Wextra for host code, and the same through
# nvcc's host compiler for .cu files, plus nvcc's own cross-execution-space checks.
# GPUKIT_WERROR (the ci preset) makes every one of them an error, nvcc's own included.
function(gpukit_set_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wshadow>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra --Wreorder --Wext-lambda-captures-this>)
  if(GPUKIT_WERROR)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Werror>
      $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Werror --Werror=all-warnings>)
  endif()
endfunction()
