# RINGSIM_NATIVE: compile for the instruction set of the machine that builds
# (-march=native), as ggml's GGML_NATIVE does. Eigen picks its GEMM kernels
# at compile time from the ISA macros, so a baseline x86-64 build runs the CPU
# kernels on SSE2 at a fraction of what an AVX2 or AVX-512 core does. Turn it
# off for packages that must run on other machines.
#
# -ffp-contract=off keeps every scalar expression exactly as written, so the
# models' double arithmetic (and every printed prediction) is bit-identical
# between native and portable builds and across machines; the kernels get
# fused multiply-adds from Eigen's explicit intrinsics, not from contraction.
include(CheckCXXCompilerFlag)
option(RINGSIM_NATIVE "Compile for the host's instruction set (-march=native)" ON)
set(RINGSIM_ISA "portable x86-64 baseline")
if(RINGSIM_NATIVE)
  check_cxx_compiler_flag(-march=native RINGSIM_HAS_MARCH_NATIVE)
  if(RINGSIM_HAS_MARCH_NATIVE)
    add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-march=native> $<$<COMPILE_LANGUAGE:CXX>:-ffp-contract=off>)
    # GCC 12 reports every AVX-512 intrinsic Eigen instantiates as "'__Y' may be
    # used uninitialized" (inside avx512fintrin.h, a false positive of GCC's
    # own headers): hundreds of lines that would bury real warnings.
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
      add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-Wno-maybe-uninitialized>)
    endif()
    # What -march=native turned on, for the status line and the profiles.
    execute_process(COMMAND ${CMAKE_CXX_COMPILER} -march=native -dM -E -x c++ /dev/null
                    OUTPUT_VARIABLE _isa_macros ERROR_QUIET)
    set(_isa "")
    foreach(_feature AVX512F AVX512BF16 AVX2 FMA AVX)
      if(_isa_macros MATCHES "#define __${_feature}__ 1")
        list(APPEND _isa ${_feature})
      endif()
    endforeach()
    if(NOT _isa)
      set(_isa "no AVX")
    endif()
    list(JOIN _isa " " _isa)
    set(RINGSIM_ISA "-march=native: ${_isa}")
  else()
    set(RINGSIM_NATIVE OFF)
    set(RINGSIM_ISA "portable (the compiler refused -march=native)")
  endif()
else()
  add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-ffp-contract=off>)
endif()
message(STATUS "ringsim: host ISA: ${RINGSIM_ISA}")
