# dsa_cuda_target(<target>): the CUDA options every CUDA target of the project takes: code for each
# of DSA_CUDA_ARCHS (-gencode, which also takes the arch-specific "a" targets that wgmma and
# tcgen05 need), C++20, and device arithmetic exactly as written (no FMA contraction).
function(dsa_cuda_target target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "ARCHS")
  if(NOT arg_ARCHS)
    set(arg_ARCHS ${DSA_CUDA_ARCHS})
  endif()
  set(gencode "")
  foreach(arch ${arg_ARCHS})
    list(APPEND gencode "-gencode=arch=compute_${arch},code=sm_${arch}")
  endforeach()
  set_target_properties(${target} PROPERTIES CUDA_STANDARD 20 CUDA_STANDARD_REQUIRED ON CUDA_ARCHITECTURES OFF)
  target_compile_options(${target} PRIVATE
      "$<$<COMPILE_LANGUAGE:CUDA>:${gencode};-fmad=false;-Xptxas=-warn-spills;-Xcompiler=-Wall,-Wextra>")
  if(DSA_CUDA_RESOURCE_USAGE)
    target_compile_options(${target} PRIVATE "$<$<COMPILE_LANGUAGE:CUDA>:-Xptxas=-v>")
  endif()
endfunction()
