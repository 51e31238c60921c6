# RINGSIM_CCACHE: compile through ccache when it is installed, so a rebuild of
# unchanged sources (a CI run on a fresh clone, a second build directory)
# takes seconds per file instead of a compile. The cache lives outside the
# clone (ccache's own directory, ~/.cache/ccache, or $CCACHE_DIR), so it
# outlives the clone; with CCACHE_BASEDIR set to the clone, a clone at
# another path hits the same entries (.ci/run sets both). A launcher given by
# the caller (CMAKE_CXX_COMPILER_LAUNCHER) is kept.
option(RINGSIM_CCACHE "Compile through ccache when it is found" ON)
find_program(RINGSIM_CCACHE_PROGRAM ccache)
if(NOT RINGSIM_CCACHE)
  message(STATUS "ringsim: compiler cache: OFF (-DRINGSIM_CCACHE=OFF)")
elseif(CMAKE_CXX_COMPILER_LAUNCHER)
  message(STATUS "ringsim: compiler cache: ${CMAKE_CXX_COMPILER_LAUNCHER} (given by the caller)")
elseif(RINGSIM_CCACHE_PROGRAM)
  set(CMAKE_C_COMPILER_LAUNCHER ${RINGSIM_CCACHE_PROGRAM})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${RINGSIM_CCACHE_PROGRAM})
  set(CMAKE_CUDA_COMPILER_LAUNCHER ${RINGSIM_CCACHE_PROGRAM})
  execute_process(COMMAND ${RINGSIM_CCACHE_PROGRAM} --get-config cache_dir
                  OUTPUT_VARIABLE _ccache_dir OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  message(STATUS "ringsim: compiler cache: ccache (${_ccache_dir})")
else()
  message(STATUS "ringsim: compiler cache: SKIPPED (ccache not found; Debian: ccache)")
endif()
