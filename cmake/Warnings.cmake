# Warning flags for every gpukit target: -Wall -Wextra for host code, and the same through
# nvcc's host compiler for .cu files, plus nvcc's own cross-execution-space checks.
function(gpukit_set_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wshadow>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra --Wreorder --Wext-lambda-captures-this>)
endfunction()
