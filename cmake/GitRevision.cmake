# Run at build time (cmake -P): writes the current git revision into OUTPUT, touching the file
# only when the revision changed so nothing rebuilds needlessly.
# GPUKIT_GIT_REVISION wins when set: the device machine's copy of the tree carries a .git that
# does not match the working tree (scripts/gpu-check.sh sets it from .deps/REVISION).
if(DEFINED ENV{GPUKIT_GIT_REVISION} AND NOT "$ENV{GPUKIT_GIT_REVISION}" STREQUAL "")
  set(revision "$ENV{GPUKIT_GIT_REVISION}")
else()
  execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY ${SOURCE_DIR}
                  OUTPUT_VARIABLE revision OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET
                  RESULT_VARIABLE status)
  if(NOT status EQUAL 0 OR revision STREQUAL "")
    set(revision "unknown")
  else()
    execute_process(COMMAND git status --porcelain --untracked-files=no
                    WORKING_DIRECTORY ${SOURCE_DIR}
                    OUTPUT_VARIABLE dirty OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(NOT dirty STREQUAL "")
      string(APPEND revision "-dirty")
    endif()
  endif()
endif()
set(content "namespace gpukit::bench { const char* git_revision() noexcept { return \"${revision}\"; } }\n")
if(EXISTS ${OUTPUT})
  file(READ ${OUTPUT} old)
endif()
if(NOT old STREQUAL content)
  file(WRITE ${OUTPUT} "${content}")
endif()
